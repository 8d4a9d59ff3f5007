"""Every coupling-facility script has one named argument type that matches its Lua header.

Name convention (app/cf/scriptargs.py): ``lua/<name>.lua`` -> ``<Name>Args`` (``clear_opens`` ->
``ClearOpensArgs``), registered in ``SCRIPT_ARGS[name]``. Its ``KEYS`` names one field per
``KEYS[n]`` header line and its ``ARGV`` one field per ``ARGV[n]`` line, in header order; a
variadic ``ARGV[n..]`` line is the sequence field named by ``TAIL``. A fenced script
(``FENCED``) leaves out its last KEYS line (the structure's fence key) and its last two fixed
ARGV lines (the caller: queue manager name and incarnation), which ``CFBase._script`` appends.
"""

from __future__ import annotations

import dataclasses
import re

import pytest

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
        assert argv[-2].startswith("caller") and argv[-1].startswith("caller"), \
            f"{name}.lua: the last two ARGV of a fenced script are the caller"
        keys, argv = keys[:-1], argv[:-2]
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
