"""Publish/subscribe rules of IBM MQ that need no I/O: topic strings, wildcards, the
administrative topic tree, and the MQSO_ options of MQSUB.

IBM documents used (IBM MQ 9.x, "Publish/subscribe messaging" and the MQI reference):

* "Combining topic strings" (MQOD / MQSD ObjectName and ObjectString): the TOPICSTR of the topic
  object named and the ObjectString are joined with a ``/``; either may be blank, not both.
* "Wildcard schemes": with MQSO_WILDCARD_TOPIC (the default) ``#`` matches any number of whole
  levels, including none, and ``+`` exactly one level; a ``#`` or ``+`` that is not a whole
  level is an ordinary character. With MQSO_WILDCARD_CHAR ``*`` matches any characters (``/``
  too) and ``?`` one character.
* "Administrative topic objects" / "ASPARENT": an attribute set to ASPARENT takes the value of
  the nearest administrative node above the topic in the topic tree, ending at
  SYSTEM.BASE.TOPIC (TOPICSTR ''), whose own ASPARENT values mean IBM's defaults.
* MQSD Options (MQSO_*): one of CREATE/RESUME/ALTER is needed; a durable subscription, RESUME
  and ALTER need a SubName (MQRC_SUB_NAME_ERROR).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.core import wildcards
from app.core.errors import MQError
from app.core.reasons import MQRC

#: MQ_TOPIC_STR_LENGTH: the longest topic string MQ accepts
MAX_TOPIC_STRING = 10240
#: MQ_SUB_NAME_LENGTH
MAX_SUB_NAME = 10240
BASE_TOPIC = "SYSTEM.BASE.TOPIC"
DURABLE_MODEL = "SYSTEM.DURABLE.MODEL.QUEUE"
NDURABLE_MODEL = "SYSTEM.NDURABLE.MODEL.QUEUE"
#: DynamicQName prefixes of managed queues (IBM names them SYSTEM.MANAGED.DURABLE.* / NDURABLE.*)
MANAGED_DURABLE_PREFIX = "SYSTEM.MANAGED.DURABLE.*"
MANAGED_NDURABLE_PREFIX = "SYSTEM.MANAGED.NDURABLE.*"

#: What ASPARENT means at the root (SYSTEM.BASE.TOPIC's IBM defaults).
ROOT_VALUES: dict[str, Any] = {"PUB": "ENABLED", "SUB": "ENABLED", "DEFPSIST": "NO", "DEFPRTY": 0,
                               "DURSUB": "YES", "MDURMDL": DURABLE_MODEL, "MNDURMDL": NDURABLE_MODEL}
#: The value that stands for "as parent" for each inheritable attribute (DEFPRTY is a number).
AS_PARENT: dict[str, Any] = {"PUB": "ASPARENT", "SUB": "ASPARENT", "DEFPSIST": "ASPARENT", "DEFPRTY": -2,
                             "DURSUB": "ASPARENT", "MDURMDL": "", "MNDURMDL": ""}


def check_topic_string(topic: Any, what: str = "topic string") -> str:
    """A topic string as given (case and blanks are significant); MQRC_TOPIC_STRING_ERROR for
    one that is not text, longer than MQ_TOPIC_STR_LENGTH (10240 bytes, in UTF-8 here) or holds
    a NUL. IBM sets no limit on the number of levels: a topic of 5000 levels is as good as any."""
    if (not isinstance(topic, str) or len(topic) > MAX_TOPIC_STRING or "\x00" in topic
            or (not topic.isascii() and len(topic.encode("utf-8", "surrogatepass")) > MAX_TOPIC_STRING)):
        raise MQError(MQRC.TOPIC_STRING_ERROR, f"{what} must be text of at most {MAX_TOPIC_STRING} bytes (UTF-8)")
    return topic


def combine(topicstr: str, object_string: str) -> str:
    """The full topic string of an MQOD/MQSD: the named topic object's TOPICSTR and the
    ObjectString joined by ``/`` (either may be empty, not both: MQRC_UNKNOWN_OBJECT_NAME as
    IBM gives for an MQOPEN/MQSUB naming neither)."""
    if topicstr and object_string:
        # the joined string is a topic string too: MQ_TOPIC_STR_LENGTH bounds it as a whole
        return check_topic_string(f"{topicstr}/{object_string}", "the combined topic string")
    full = topicstr or object_string
    if not full:
        raise MQError(MQRC.UNKNOWN_OBJECT_NAME, "give object_name (a TOPIC object) or object_string (a topic string)")
    return full


def has_wildcard(topic: str, scheme: str = "TOPIC") -> bool:
    """Whether a topic string holds a wildcard of the scheme (whole-level # or + for TOPIC)."""
    if scheme == "CHAR":
        return "*" in topic or "?" in topic
    return any(level in ("#", "+") for level in topic.split("/"))


def check_publish_topic(topic: str) -> str:
    """A topic string a publication may be put on: no whole-level ``#`` or ``+`` (IBM: an
    MQOPEN for output of a wildcarded topic fails with MQRC_TOPIC_STRING_ERROR)."""
    check_topic_string(topic)
    if has_wildcard(topic):
        raise MQError(MQRC.TOPIC_STRING_ERROR, f"topic string '{topic}' has a wildcard level: publish to a full topic")
    return topic


def matches(pattern: str, topic: str, scheme: str = "TOPIC") -> bool:
    """Whether a subscription's topic string (with the wildcards of ``scheme``) matches the
    topic string of a publication; in time bounded by the lengths of both, however many
    wildcards or levels they have (``app.core.wildcards``), since it runs on every publish."""
    if scheme == "CHAR":
        return wildcards.char_matches(pattern, topic)
    if "#" not in pattern and "+" not in pattern:  # the common case: no wildcard at all
        return pattern == topic
    return wildcards.level_matches(pattern.split("/"), topic.split("/"))


def node_topic(topic: str, scheme: str = "TOPIC") -> str:
    """The part of a (subscription) topic string above its first wildcard: where the topic
    tree is looked at for its administrative node."""
    if not has_wildcard(topic, scheme):
        return topic
    if scheme == "CHAR":
        cut = min(i for i in (topic.find("*"), topic.find("?")) if i >= 0)
        return topic[:cut].rsplit("/", 1)[0] if "/" in topic[:cut] else ""
    levels: list[str] = []
    for level in topic.split("/"):
        if level in ("#", "+"):
            break
        levels.append(level)
    return "/".join(levels)


def ancestry(topic: str, nodes: Mapping[str, Any]) -> list[Any]:
    """The administrative nodes above ``topic`` (its own first), nearest first: the topic
    objects (``nodes``: TOPICSTR -> definition) whose TOPICSTR is the topic or a whole-level
    prefix of it; the root ('' - SYSTEM.BASE.TOPIC) comes last when defined."""
    # Linear in the topic's length however many levels it has (joining each prefix of a topic
    # of 5000 levels held the event loop 0.2-1 s per open): walk the level boundaries from the
    # end, and cut out only the prefixes as long as some node's TOPICSTR.
    found = []
    lengths = {len(name) for name in nodes if name}
    end = len(topic)
    while end > 0:
        if end in lengths:
            candidate = topic[:end]
            if candidate in nodes:
                found.append(nodes[candidate])
        end = topic.rfind("/", 0, end)
    if "" in nodes:
        found.append(nodes[""])
    return found


def resolved(attr: str, chain: Sequence[Mapping[str, Any]]) -> Any:
    """The value of an inheritable topic attribute: the first definition in ``chain`` (nearest
    node first) whose value is not ASPARENT, else IBM's default at the root."""
    as_parent = AS_PARENT[attr]
    for attrs in chain:
        value = attrs.get(attr, as_parent)
        if isinstance(value, str):
            value = value.strip()
        if value != as_parent and value not in ("ASPARENT", ""):
            return value
    return ROOT_VALUES[attr]


# ---- MQSUB options ----------------------------------------------------------------------------

SUB_OPTIONS = frozenset({
    "CREATE", "RESUME", "ALTER", "DURABLE", "NON_DURABLE", "MANAGED", "WILDCARD_CHAR", "WILDCARD_TOPIC",
    "FAIL_IF_QUIESCING", "SET_CORREL_ID", "NEW_PUBLICATIONS_ONLY", "READ_AHEAD", "NO_READ_AHEAD",
    "READ_AHEAD_AS_Q_DEF", "SCOPE_QMGR", "NO_MULTICAST", "FIXED_USERID", "ANY_USERID", "NONE",
})
# Options IBM has that this emulator cannot honour: refused rather than silently ignored.
_UNSUPPORTED = frozenset({"GROUP_SUB", "PUBLICATIONS_ON_REQUEST", "SET_IDENTITY_CONTEXT",
                          "ALTERNATE_USER_AUTHORITY"})


@dataclass(frozen=True)
class SubOptions:
    """MQSUB options as they decide what the call does."""

    create: bool
    resume: bool
    alter: bool
    durable: bool
    managed: bool
    scheme: str  # "TOPIC" or "CHAR"
    fail_if_quiescing: bool
    set_correl_id: bool


def parse_sub_options(options: Iterable[Any]) -> SubOptions:
    """MQSO_ names (without the prefix) -> ``SubOptions``; MQRC_OPTIONS_ERROR for unknown
    names or IBM's invalid combinations."""
    chosen: set[str] = set()
    for opt in options:
        if not isinstance(opt, str):
            raise MQError(MQRC.OPTIONS_ERROR, f"subscription options must be MQSO_ names, got {opt!r}")
        name = opt.upper().removeprefix("MQSO_")
        if name in _UNSUPPORTED:
            raise MQError(MQRC.OPTIONS_ERROR, f"MQSO_{name} is not supported by this queue manager")
        if name not in SUB_OPTIONS:
            raise MQError(MQRC.OPTIONS_ERROR, f"unknown subscription option '{opt}' "
                                              f"(allowed: {', '.join(sorted(SUB_OPTIONS))})")
        chosen.add(name)
    if not chosen & {"CREATE", "RESUME", "ALTER"}:
        raise MQError(MQRC.OPTIONS_ERROR, "one of CREATE, RESUME or ALTER is needed")
    if {"RESUME", "ALTER"} <= chosen:
        raise MQError(MQRC.OPTIONS_ERROR, "RESUME and ALTER are mutually exclusive")
    if {"DURABLE", "NON_DURABLE"} <= chosen:
        raise MQError(MQRC.OPTIONS_ERROR, "DURABLE and NON_DURABLE are mutually exclusive")
    if {"WILDCARD_CHAR", "WILDCARD_TOPIC"} <= chosen:
        raise MQError(MQRC.OPTIONS_ERROR, "WILDCARD_CHAR and WILDCARD_TOPIC are mutually exclusive")
    if len(chosen & {"READ_AHEAD", "NO_READ_AHEAD", "READ_AHEAD_AS_Q_DEF"}) > 1:
        raise MQError(MQRC.OPTIONS_ERROR, "only one read-ahead option may be given")
    return SubOptions(create="CREATE" in chosen, resume="RESUME" in chosen, alter="ALTER" in chosen,
                      durable="DURABLE" in chosen, managed="MANAGED" in chosen,
                      scheme="CHAR" if "WILDCARD_CHAR" in chosen else "TOPIC",
                      fail_if_quiescing="FAIL_IF_QUIESCING" in chosen, set_correl_id="SET_CORREL_ID" in chosen)


def check_sub_name(sub_name: Any, opts: SubOptions) -> str:
    """The SubName: text up to MQ_SUB_NAME_LENGTH; required (MQRC_SUB_NAME_ERROR) for a durable
    subscription and for RESUME or ALTER, which find the subscription by it."""
    if not isinstance(sub_name, str) or len(sub_name) > MAX_SUB_NAME or "\x00" in sub_name:
        raise MQError(MQRC.SUB_NAME_ERROR, f"sub_name must be text of at most {MAX_SUB_NAME} characters")
    name = sub_name.rstrip(" ")
    if not name and (opts.durable or opts.resume or opts.alter):
        raise MQError(MQRC.SUB_NAME_ERROR, "a durable subscription, RESUME and ALTER need a sub_name")
    return name


#: MQCLOSE options of a subscription handle
SUB_CLOSE_OPTIONS = frozenset({"NONE", "KEEP_SUB", "REMOVE_SUB"})


def parse_sub_close_options(options: Iterable[Any] | None) -> str:
    """MQCO_ options of a subscription close -> "KEEP" (the default) or "REMOVE"."""
    chosen: set[str] = set()
    for opt in options or ():
        name = opt.upper().removeprefix("MQCO_") if isinstance(opt, str) else None
        if name not in SUB_CLOSE_OPTIONS:
            raise MQError(MQRC.OPTIONS_ERROR,
                          f"close options of a subscription are KEEP_SUB or REMOVE_SUB, not {opt!r}")
        chosen.add(name)
    if {"KEEP_SUB", "REMOVE_SUB"} <= chosen:
        raise MQError(MQRC.OPTIONS_ERROR, "KEEP_SUB and REMOVE_SUB are mutually exclusive")
    return "REMOVE" if "REMOVE_SUB" in chosen else "KEEP"
