"""The subscription wildcard matchers (app/core/wildcards.py, app/core/topics.matches): the same
answers as the backtracking regex and the recursive level matcher they replaced (kept here as the
reference), on many random patterns; and bounded work where those took seconds or overflowed the
stack (docs/howto/security.md, Limits)."""

from __future__ import annotations

import random
import re

import pytest

from app.core import topics
from app.core.wildcards import char_matches, glob_matches, level_matches


def regex_reference(pattern: str, topic: str) -> bool:
    """The MQSO_WILDCARD_CHAR matcher this module replaced: ``*`` -> ``.*``, ``?`` -> ``.``."""
    parts = [".*" if ch == "*" else "." if ch == "?" else re.escape(ch) for ch in pattern]
    return re.compile("".join(parts), re.DOTALL).fullmatch(topic) is not None


def levels_reference(pattern: tuple[str, ...], topic: tuple[str, ...]) -> bool:
    """The recursive MQSO_WILDCARD_TOPIC matcher this module replaced (short inputs only)."""
    if not pattern:
        return not topic
    head, rest = pattern[0], pattern[1:]
    if head == "#":
        return any(levels_reference(rest, topic[i:]) for i in range(len(topic) + 1))
    if not topic:
        return False
    return (head == "+" or head == topic[0]) and levels_reference(rest, topic[1:])


def test_char_wildcards_answer_as_the_regex_did_on_random_patterns():
    rng = random.Random(28)
    agreed = {True: 0, False: 0}
    for _ in range(30_000):
        pattern = "".join(rng.choice("ab*?/.") for _ in range(rng.randint(0, 9)))
        topic = "".join(rng.choice("ab/.") for _ in range(rng.randint(0, 12)))
        expected = regex_reference(pattern, topic)
        assert char_matches(pattern, topic) == expected, (pattern, topic)
        agreed[expected] += 1
    assert min(agreed.values()) > 1000  # both answers were exercised


def test_char_wildcards_on_longer_text_with_special_characters():
    rng = random.Random(2425)
    alphabet = "ab\n#+$^()[]{}|\\"
    for _ in range(3000):
        topic = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        # patterns cut from the topic, so that most of them match
        pattern = "".join("*" if rng.random() < 0.15 else "?" if rng.random() < 0.1 else ch for ch in topic
                          if rng.random() < 0.8)
        assert char_matches(pattern, topic) == regex_reference(pattern, topic), (pattern, topic)


def test_level_wildcards_answer_as_the_recursive_matcher_did_on_random_patterns():
    rng = random.Random(17)
    for _ in range(20_000):
        pattern = tuple(rng.choice(["a", "b", "", "#", "+"]) for _ in range(rng.randint(1, 7)))
        topic = tuple(rng.choice(["a", "b", ""]) for _ in range(rng.randint(1, 8)))
        expected = levels_reference(pattern, topic)
        assert level_matches(pattern, topic) == expected, (pattern, topic)
        assert topics.matches("/".join(pattern), "/".join(topic)) == expected, (pattern, topic)


@pytest.mark.parametrize(("pattern", "topic", "expected"), [
    ("price/#", "price", True), ("price/#", "price/fruit/apples", True), ("#", "", True),
    ("price/+", "price", False), ("price/+/apples", "price/fruit/apples", True), ("+", "a/b", False),
    ("price/fr#", "price/fr#", True), ("price/fr#", "price/fruit", False),  # not a whole level: a character
    ("a/#/b", "a/b", True), ("a/#/b", "a/x/y/b", True), ("a/#/b", "a/x/y", False),
])
def test_level_wildcards_follow_ibm_examples(pattern, topic, expected):
    assert topics.matches(pattern, topic) == expected


@pytest.mark.parametrize(("pattern", "topic", "expected"), [
    ("*", "", True), ("?", "", False), ("price/*", "price/fruit/apples", True), ("pri?e", "price", True),
    ("*a" * 14 + "*b", "a" * 28, False), ("*a" * 14 + "*b", "a" * 28 + "b", True), ("a*?", "a", False),
])
def test_char_wildcards_examples(pattern, topic, expected):
    assert topics.matches(pattern, topic, "CHAR") == expected


def count_text_reads(pattern: str, text: str) -> int:
    """How many items of the text the matcher reads (its work), through a sequence that counts."""
    class Counting(tuple):
        reads = 0

        def __getitem__(self, index):
            Counting.reads += 1
            return super().__getitem__(index)

    glob_matches(tuple(pattern), Counting(text), "*", "?")
    return Counting.reads


def test_work_is_bounded_by_the_lengths_not_the_number_of_stars():
    # the pattern: 4.4 s with the backtracking regex; here each text item is read a few times
    assert count_text_reads("*a" * 14 + "*b", "a" * 28) <= 4 * 28
    big_pattern, big_text = "*a?" * 300 + "*b", "a" * 3000
    assert count_text_reads(big_pattern, big_text) <= 4 * (len(big_text) + len(big_pattern))
    assert not char_matches("*a?" * 3000 + "*b", "a" * 10240)  # the longest topic MQ allows


def test_deep_topics_need_no_recursion():
    deep = "/".join(["l"] * 5000)
    assert topics.matches(deep, deep)
    assert topics.matches("+/" + "/".join(["l"] * 4998) + "/#", deep)
    assert topics.matches("#/" + "/#/".join(["l"] * 2500), deep)
    assert not topics.matches("#/" + "/#/".join(["l"] * 2500) + "/x", deep)


class CountingNodes(dict):
    """A topic-node table that counts the characters of the keys it is asked about."""

    looked_up = 0

    def __contains__(self, key: object) -> bool:
        CountingNodes.looked_up += len(key) if isinstance(key, str) else 0
        return super().__contains__(key)


def test_the_nodes_above_a_deep_topic_are_found_in_linear_work():
    """MQOPEN/MQSUB look up the administrative nodes above a topic: a topic of 5000 levels made
    5000 prefixes (12.5 million characters, 0.2-1 s of event loop per open); now only the prefixes
    as long as a node's TOPICSTR are cut and looked up."""
    deep = "/".join(["l"] * 5000)
    nodes = CountingNodes({"": "root", "l": "top", "l/l/l": "third", "l/x": "other", deep: "itself"})
    CountingNodes.looked_up = 0
    assert topics.ancestry(deep, nodes) == ["itself", "third", "top", "root"]
    assert CountingNodes.looked_up <= 2 * len(deep)
    assert topics.ancestry("a//b", {"a//b": 1, "a/": 2, "a": 3, "": 4}) == [1, 2, 3, 4]  # empty levels
    assert topics.ancestry("/a", {"/a": 1, "": 2}) == [1, 2]
    assert topics.ancestry("ab/c", {"a": 1, "ab/": 2, "ab": 3}) == [3]  # whole levels only


def test_topic_strings_are_bounded_in_bytes():
    topics.check_topic_string("a" * topics.MAX_TOPIC_STRING)
    with pytest.raises(topics.MQError) as caught:
        topics.check_topic_string("a" * (topics.MAX_TOPIC_STRING + 1))
    assert caught.value.reason == 2425
    with pytest.raises(topics.MQError):  # 5 121 characters, 10 242 bytes of UTF-8
        topics.check_topic_string("é" * 5121)
    with pytest.raises(topics.MQError) as caught:  # a TOPIC object's TOPICSTR joined to the object string
        topics.combine("a" * 6000, "b" * 6000)
    assert caught.value.reason == 2425


def test_authority_profile_qualifiers_match_as_their_regex_did():
    """SET AUTHREC profiles use the same character wildcards inside a qualifier (app/security/
    rights.py): same answers as the regex they had, without its backtracking."""
    from app.core.rights import profile_matches

    def reference(profile: str, name: str) -> bool:
        p, n = profile.split("."), name.split(".")
        if "**" in p:
            return profile_matches(profile, name)  # whole-qualifier ** is not what changed
        return len(p) == len(n) and all(regex_reference(q.replace("**", "*"), part)
                                        for q, part in zip(p, n, strict=True))

    rng = random.Random(2035)
    for _ in range(5000):
        profile = "".join(rng.choice("AB*?.") for _ in range(rng.randint(1, 8))).strip(".") or "A"
        name = "".join(rng.choice("AB.") for _ in range(rng.randint(1, 8))).strip(".") or "A"
        assert profile_matches(profile, name) == reference(profile, name), (profile, name)
    assert not profile_matches("*A" * 23 + "*B", "A" * 48)  # at once (a backtracking regex: hours)
