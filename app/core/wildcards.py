"""Wildcard matching in bounded time: IBM's two subscription wildcard schemes as one algorithm.

A wildcard pattern here is a sequence of items where ``many`` stands for any number of items
(none included) and ``one`` for exactly one item; every other item matches itself. The two
schemes of MQSUB are this pattern over different items:

* MQSO_WILDCARD_CHAR: the items are characters, ``*`` is ``many`` and ``?`` is ``one``;
* MQSO_WILDCARD_TOPIC: the items are topic levels, ``#`` is ``many`` and ``+`` is ``one``.

Why not a regular expression or recursion: a backtracking regex of ``*a*a*a...*b`` takes time
exponential in the number of stars (a 29-character pattern and a 28-character topic kept the
event loop busy for seconds), and a recursive level matcher runs out of stack on a topic of a
few hundred levels. Here the pattern is cut at its ``many`` items into fixed-length segments:
the first must match at the start, the last at the end, and each one between at its leftmost
place after the previous one (the leftmost place ends earliest, which leaves the most room for
the rest, so it is never a wrong choice). Each segment is looked for once, left to right, so
the work is bounded by (length of the text) x (length of the pattern) / 64 big-integer word
steps in the worst case (a bit-parallel search), and is a plain ``str.find`` when a segment has
no ``one`` item.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence


def char_matches(pattern: str, text: str) -> bool:
    """MQSO_WILDCARD_CHAR: whether ``text`` matches ``pattern`` whole, ``*`` matching any
    characters (``/`` included, none included) and ``?`` exactly one character."""
    return glob_matches(pattern, text, "*", "?")


def level_matches(pattern: Sequence[str], levels: Sequence[str]) -> bool:
    """MQSO_WILDCARD_TOPIC over topic levels (a topic string split at ``/``): ``#`` matches any
    number of whole levels (none included), ``+`` exactly one level."""
    return glob_matches(pattern, levels, "#", "+")


def glob_matches(pattern: Sequence[Hashable], text: Sequence[Hashable], many: Hashable, one: Hashable) -> bool:
    """Whether the whole of ``text`` matches ``pattern`` (see the module's docstring)."""
    segments = _segments(pattern, many)
    if len(segments) == 1:  # no ``many``: a fixed-length pattern
        return len(text) == len(pattern) and _equal_at(segments[0], text, 0, one)
    first, middle, last = segments[0], segments[1:-1], segments[-1]
    start, end = len(first), len(text) - len(last)
    if start > end or not _equal_at(first, text, 0, one) or not _equal_at(last, text, end, one):
        return False
    for segment in middle:
        found = _find(segment, text, start, end, one)
        if found < 0:
            return False
        start = found + len(segment)
    return True


def _segments(pattern: Sequence[Hashable], many: Hashable) -> list[Sequence[Hashable]]:
    """The pattern cut at its ``many`` items (runs of them are one): n stars, n + 1 segments,
    the first and last possibly empty."""
    if isinstance(pattern, str) and isinstance(many, str):
        return list[Sequence[Hashable]](pattern.split(many))
    out: list[Sequence[Hashable]] = []
    current: list[Hashable] = []
    for item in pattern:
        if item == many:
            out.append(tuple(current))
            current = []
        else:
            current.append(item)
    out.append(tuple(current))
    return out


def _equal_at(segment: Sequence[Hashable], text: Sequence[Hashable], pos: int, one: Hashable) -> bool:
    """Whether ``segment`` (``one`` matching any item) matches ``text`` at ``pos``."""
    if pos < 0 or pos + len(segment) > len(text):
        return False
    if isinstance(segment, str) and isinstance(text, str) and isinstance(one, str) and one not in segment:
        return text.startswith(segment, pos)
    return all(p == one or p == text[pos + i] for i, p in enumerate(segment))


def _find(segment: Sequence[Hashable], text: Sequence[Hashable], start: int, end: int, one: Hashable) -> int:
    """The leftmost position ``p`` in ``start .. end - len(segment)`` where ``segment`` matches
    ``text``, or -1."""
    size = len(segment)
    if size == 0:
        return start
    if isinstance(segment, str) and isinstance(text, str) and isinstance(one, str) and one not in segment:
        return text.find(segment, start, end)
    # Shift-And: bit i of ``state`` says segment[:i + 1] matches the text ending here.
    masks: dict[Hashable, int] = {}
    wild = 0
    for i, item in enumerate(segment):
        if item == one:
            wild |= 1 << i
        else:
            masks[item] = masks.get(item, 0) | (1 << i)
    if wild:
        masks = {item: bits | wild for item, bits in masks.items()}
    goal = 1 << (size - 1)
    state = 0
    for pos in range(start, end):
        state = ((state << 1) | 1) & masks.get(text[pos], wild)
        if state & goal:
            return pos - size + 1
    return -1
