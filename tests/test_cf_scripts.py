"""Every coupling-facility script has one named argument type and one named reply type that
match its Lua header.

Name convention (app/cf/scriptargs.py): ``lua/<name>.lua`` -> ``<Name>Args`` (``clear_opens`` ->
``ClearOpensArgs``), registered in ``SCRIPT_ARGS[name]``. Its ``KEYS`` names one field per
``KEYS[n]`` header line and its ``ARGV`` one field per ``ARGV[n]`` line, in header order; a
variadic ``ARGV[n..]`` line is the sequence field named by ``TAIL``. A fenced script
(``FENCED``) leaves out its last KEYS line (the structure's fence key) and its last three fixed
ARGV lines (the caller: queue manager name, incarnation and deadline), which ``CFBase._script`` appends.

Replies (app/cf/replies.py): ``lua/<name>.lua`` -> ``<Name>Reply``, registered in
``SCRIPT_REPLIES[name]``. How a header's ``Output:`` section is read (everything after the line
``Output:`` up to the header's end):

* a *shape* starts on a line whose first non-blank character is ``{`` and runs to the matching
  ``}`` (it may span lines); text after it, and braces in the middle of a line, are prose;
* its *elements* are the comma-separated items between the braces; an integer literal (``0``,
  ``2085``) is a fixed value, anything else names the element; a last element ``...`` means the
  elements after the first one repeat (one group per item);
* a shape whose elements are all ``"key": value`` is the object of a JSON reply;
* an Output section without any shape documents a scalar reply (an integer);
* the *success shape* is the longest list shape (the first of the longest).

The reply type's ``SHAPE`` has one name per element of the success shape (``SHAPE`` + ``REPEAT``
for a repeating shape), equal to the header's name where the header names the element; a JSON
reply's ``JSON_KEYS`` are its object's keys; a scalar reply has neither. ``parse`` accepts
every shape the header documents.
"""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from app.cf.replies import SCRIPT_REPLIES
from app.cf.scriptargs import SCRIPT_ARGS
from app.cf.scripts import LUA_DIR, SCRIPT_NAMES

_HEADER = re.compile(r"^--\[\[(.*?)^\]\]", re.MULTILINE | re.DOTALL)
_LINE = re.compile(r"^\s*(KEYS|ARGV)\[(\d+)(\.\.)?\]\s+(.*)$", re.MULTILINE)

SCRIPTS = sorted(p.stem for p in LUA_DIR.glob("*.lua") if not p.name.startswith("_"))


def header(name: str) -> tuple[list[str], list[str], str | None]:
    """(KEYS descriptions, fixed ARGV descriptions, variadic ARGV description or None)."""
    found = _HEADER.search((LUA_DIR / f"{name}.lua").read_text(encoding="utf-8"))
    assert found, f"{name}.lua has no --[[ ]] header"
    keys: dict[int, str] = {}
    argv: dict[int, str] = {}
    tail = None
    for kind, n, variadic, text in _LINE.findall(found.group(1)):
        if kind == "ARGV" and variadic:
            tail = text
            continue
        (keys if kind == "KEYS" else argv)[int(n)] = text
    for what, lines in (("KEYS", keys), ("ARGV", argv)):
        assert sorted(lines) == list(range(1, len(lines) + 1)), f"{name}.lua: {what} not numbered 1..n"
    return [keys[i] for i in sorted(keys)], [argv[i] for i in sorted(argv)], tail


def test_every_script_has_a_type_and_is_registered():
    assert sorted(SCRIPT_ARGS) == SCRIPTS
    assert sorted(SCRIPT_NAMES) == SCRIPTS


@pytest.mark.parametrize("name", SCRIPTS)
def test_type_matches_header(name: str):
    cls = SCRIPT_ARGS[name]
    assert cls.SCRIPT == name
    assert cls.__name__ == "".join(p.capitalize() for p in name.split("_")) + "Args"
    keys, argv, tail = header(name)
    if cls.FENCED:
        assert "fence" in keys[-1], f"{name}.lua: the last KEYS of a fenced script is the fence key"
        assert all(line.startswith("caller") for line in argv[-3:]), \
            f"{name}.lua: the last three ARGV of a fenced script are the caller (and its deadline)"
        assert "deadline" in argv[-1], f"{name}.lua: the last ARGV of a fenced script is its deadline"
        keys, argv = keys[:-1], argv[:-3]
    assert len(cls.KEYS) == len(keys), f"{name}: KEYS {cls.KEYS} vs header {keys}"
    assert len(cls.ARGV) == len(argv), f"{name}: ARGV {cls.ARGV} vs header {argv}"
    assert (cls.TAIL is None) == (tail is None), f"{name}: TAIL {cls.TAIL} vs header {tail}"
    fields = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
    assert fields == [*cls.KEYS, *cls.ARGV, *([cls.TAIL] if cls.TAIL else [])]

    # keys() / argv() / tail() give the fields' values in header order.
    values = {f: f"<{f}>" for f in fields}
    if cls.TAIL:
        values[cls.TAIL] = ("<t1>", "<t2>")
    args = cls(**values)
    assert args.keys() == [values[f] for f in cls.KEYS]
    assert args.argv() == [values[f] for f in cls.ARGV]
    assert args.tail() == (list(values[cls.TAIL]) if cls.TAIL else [])


# ---- replies -------------------------------------------------------------------------------

_OUTPUT = re.compile(r"^\s*Output:\s*$", re.MULTILINE)
_LITERAL = re.compile(r"^-?\d+$")
_JSON_ELEMENT = re.compile(r'^"(\w+)"\s*:')


def output_shapes(name: str) -> list[list[str]]:
    """The shapes of the header's Output section, each as its list of elements (see the docstring)."""
    found = _HEADER.search((LUA_DIR / f"{name}.lua").read_text(encoding="utf-8"))
    assert found, f"{name}.lua has no --[[ ]] header"
    body = found.group(1)
    start = _OUTPUT.search(body)
    assert start, f"{name}.lua: the header has no Output section"
    text = body[start.end():]
    shapes: list[list[str]] = []
    i = 0
    while i < len(text):
        line_start = i == 0 or text[i - 1] == "\n"
        stripped = text[i:].lstrip(" \t")
        if line_start and stripped.startswith("{"):
            open_at = len(text) - len(stripped)
            close_at = text.index("}", open_at)
            inner = " ".join(text[open_at + 1:close_at].split())
            shapes.append([e.strip() for e in inner.split(",")])
            i = text.index("\n", close_at) + 1 if "\n" in text[close_at:] else len(text)
            continue
        nl = text.find("\n", i)
        i = len(text) if nl < 0 else nl + 1
    return shapes


def _sample(element: str, position: int, size: int) -> object:
    """A raw RESP2 value for one element of a documented shape."""
    if _LITERAL.match(element):
        return int(element)
    if position == 0 and element == "code":
        return 2085 if size == 1 else 0
    if element in ("ctl", "opens", "stats"):  # status.lua's hashes as flat pairs
        return [b"k", b"1"]
    return b"1"


def test_every_script_has_a_reply_type():
    assert sorted(SCRIPT_REPLIES) == SCRIPTS


@pytest.mark.parametrize("name", SCRIPTS)
def test_reply_type_matches_header(name: str):
    cls = SCRIPT_REPLIES[name]
    assert cls.SCRIPT == name
    assert cls.__name__ == "".join(p.capitalize() for p in name.split("_")) + "Reply"
    assert dataclasses.is_dataclass(cls) and hasattr(cls, "__slots__"), f"{name}: a slotted dataclass"
    shapes = output_shapes(name)
    json_shapes = [s for s in shapes if all(_JSON_ELEMENT.match(e) for e in s)]
    lists = [s for s in shapes if s not in json_shapes]

    if json_shapes:
        assert not lists and cls.SHAPE is None, f"{name}: a JSON reply"
        keys = tuple(_JSON_ELEMENT.match(e).group(1) for e in json_shapes[0])  # type: ignore[union-attr]
        assert cls.JSON_KEYS == keys, f"{name}: JSON_KEYS {cls.JSON_KEYS} vs header {keys}"
        assert isinstance(cls.parse(json.dumps([dict.fromkeys(keys, 1)])), cls)
        return
    assert not cls.JSON_KEYS
    if not lists:
        assert cls.SHAPE is None, f"{name}: the header documents a scalar reply"
        assert isinstance(cls.parse(1), cls)
        return

    assert cls.SHAPE is not None, f"{name}: the header documents list replies"
    success = max(lists, key=len)
    if success[-1] == "...":
        success = success[:-1]
        assert cls.REPEAT, f"{name}: the header documents a repeating shape"
        assert len(cls.SHAPE) + len(cls.REPEAT) == len(success), \
            f"{name}: SHAPE {cls.SHAPE} + REPEAT {cls.REPEAT} vs header {success}"
        names = (*cls.SHAPE, *cls.REPEAT)
    else:
        assert not cls.REPEAT
        assert len(cls.SHAPE) == len(success), f"{name}: SHAPE {cls.SHAPE} vs header {success}"
        names = cls.SHAPE
    for ours, theirs in zip(names, success, strict=True):
        assert _LITERAL.match(theirs) or ours == theirs, f"{name}: {ours!r} vs header {theirs!r}"

    # parse() accepts every documented shape (a repeating one with one group).
    for shape in lists:
        elements = [e for e in shape if e != "..."]
        raw = [_sample(e, i, len(elements)) for i, e in enumerate(elements)]
        assert isinstance(cls.parse(raw), cls), f"{name}: {shape}"
