"""Parser for MQSC command scripts, following the rules of ``runmqsc`` and the z/OS command processor.

A script is split into commands (:func:`split_commands`), and each command is parsed into a
:class:`Command` (:func:`parse_command`): a verb, an object type with its name, and an ordered
list of keywords.  :func:`parse_script` does both and turns a malformed command into a
:class:`ParseFailure` so that one bad line does not stop the rest of a script, as in ``runmqsc``.

Rules applied (see the IBM "Rules for using MQSC commands"):

* A command ends at the end of a line unless the line's last non-blank character is ``+``
  (the next line's leading blanks are removed) or ``-`` (the next line is kept from column 1).
  Only that last character matters, even inside a quoted string or after ``QDEPTHLO(``.
* Outside a continuation, a line whose first non-blank character is ``*`` is a comment and a
  blank line is ignored.  Inside a continuation every line belongs to the command.
* One ``;`` at the end of a command is ignored (z/OS batch style).
* Verbs, object types and keywords are case-insensitive and returned upper case, synonyms
  normalised (``DEF QL`` is ``DEFINE QLOCAL``).
* Unquoted values are folded to upper case and stripped; quoted values keep case and blanks,
  and ``''`` inside quotes stands for one quote.
* A keyword given twice is refused (CSQ9000E), as z/OS's command preprocessor refuses it.
* On DISPLAY, a keyword that asks for an attribute (``CURDEPTH``, ``ALL``, ``CLUSINFO``) takes
  no value: ``CURDEPTH(5)`` is refused as z/OS's command preprocessor refuses it (CSQ9011E);
  only DISPLAY's filter and option keywords (``_DISPLAY_VALUE_KEYWORDS``) take one.

Every problem in the input is reported as ``MQError(MQRCCF_PARM_SYNTAX_ERROR)`` naming the
problem and its 1-based column in the (continuation-joined) command; no other exception escapes.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterator
from dataclasses import dataclass

from app.core.errors import MQError, echo
from app.core.reasons import MQRC

__all__ = [
    "Command",
    "Keyword",
    "OBJECT_TYPES",
    "ParseFailure",
    "VERBS",
    "parse_command",
    "parse_script",
    "split_commands",
]

# Verb as written -> normalised verb.  IBM's synonyms, plus ALT and REF that the project accepts.
VERBS: dict[str, str] = {
    "DEFINE": "DEFINE", "DEF": "DEFINE",
    "ALTER": "ALTER", "ALT": "ALTER",
    "DELETE": "DELETE", "DEL": "DELETE",
    "DISPLAY": "DISPLAY", "DIS": "DISPLAY",
    "REFRESH": "REFRESH", "REF": "REFRESH",
    "START": "START", "STA": "START",
    "CLEAR": "CLEAR", "RESET": "RESET", "BACKUP": "BACKUP", "RECOVER": "RECOVER",
    "STOP": "STOP", "SET": "SET", "PING": "PING", "MOVE": "MOVE", "ARCHIVE": "ARCHIVE",
    "RESOLVE": "RESOLVE", "RESUME": "RESUME", "SUSPEND": "SUSPEND", "RVERIFY": "RVERIFY",
    "PURGE": "PURGE", "END": "END",
}

# The keywords of IBM's DISPLAY commands that take a value - filters and options - by object
# type; every other DISPLAY keyword asks for an attribute and takes none (z/OS: CSQ9011E).
_DISPLAY_OPTIONS = frozenset({"CMDSCOPE", "QSGDISP", "TYPE", "WHERE"})
_QUEUE_FILTERS = frozenset({"CFSTRUCT", "CLUSTER", "CLUSNL", "PSID", "STGCLASS", "TARGTYPE"})
_DISPLAY_VALUE_KEYWORDS: dict[str, frozenset[str]] = {
    **{queue: _DISPLAY_OPTIONS | _QUEUE_FILTERS for queue in ("QUEUE", "QLOCAL", "QALIAS", "QREMOTE", "QMODEL")},
    "QSTATUS": _DISPLAY_OPTIONS | {"OPENTYPE"},
    "NAMELIST": _DISPLAY_OPTIONS | {"NLTYPE"},
    "CHSTATUS": _DISPLAY_OPTIONS | {"CONNAME", "XMITQ", "CHLDISP"},
    "SUB": _DISPLAY_OPTIONS | {"SUBID", "SUBTYPE", "DURABLE"},
    "SBSTATUS": _DISPLAY_OPTIONS | {"SUB", "SUBID", "SUBTYPE", "DURABLE"},
    "AUTHREC": _DISPLAY_OPTIONS | {"OBJTYPE", "PROFILE", "PRINCIPAL", "GROUP", "MATCH", "SERVCOMP"},
    "CHLAUTH": _DISPLAY_OPTIONS | {"MATCH", "ADDRESS", "CLNTUSER", "QMNAME", "SSLPEER", "SSLCERTI"},
    "TRACE": _DISPLAY_OPTIONS | {"CLASS", "DEST", "RMID", "TNO", "USERID", "COMMENT", "DETAIL"},
    "GROUP": _DISPLAY_OPTIONS | {"OBSMSGS"},
    "QSG": _DISPLAY_OPTIONS | {"OBSMSGS"},
    "USAGE": _DISPLAY_OPTIONS | {"PSID"},
    "STGCLASS": _DISPLAY_OPTIONS | {"PSID"},
    "SMDS": _DISPLAY_OPTIONS | {"CFSTRUCT"},
    "SMDSCONN": _DISPLAY_OPTIONS | {"CFSTRUCT"},
    "CLUSQMGR": _DISPLAY_OPTIONS | {"CLUSTER", "CHANNEL"},
    # TYPE selects channels by type; IBM: "You cannot use TYPE (or CHLTYPE) if it is also used to
    # select channels" - CHLTYPE(type) selects as TYPE(type) does.
    "CHANNEL": _DISPLAY_OPTIONS | {"CHLTYPE"},
    "AUTHINFO": _DISPLAY_OPTIONS | {"AUTHTYPE"},
    "THREAD": _DISPLAY_OPTIONS | {"QMNAME"},
    "CFSTATUS": _DISPLAY_OPTIONS | {"SMDS"},  # TYPE(SMDS) SMDS(qmgr-name|*)
}


def _display_value_keywords(objtype: str | None) -> frozenset[str]:
    """The keywords DISPLAY ``objtype`` takes with a value (its filters and options)."""
    return _DISPLAY_VALUE_KEYWORDS.get(objtype or "", _DISPLAY_OPTIONS)


# Verbs that stand alone; every other verb must be followed by an object type.
_VERBS_WITHOUT_OBJECT = frozenset({"END"})

# Object type as written -> normalised object type (IBM synonyms from the MQSC reference).
OBJECT_TYPES: dict[str, str] = {
    "QLOCAL": "QLOCAL", "QL": "QLOCAL",
    "QALIAS": "QALIAS", "QA": "QALIAS",
    "QREMOTE": "QREMOTE", "QR": "QREMOTE",
    "QMODEL": "QMODEL", "QM": "QMODEL",
    "QUEUE": "QUEUE", "Q": "QUEUE",
    "QSTATUS": "QSTATUS", "QS": "QSTATUS",
    "PROCESS": "PROCESS", "PRO": "PROCESS",
    "CHANNEL": "CHANNEL", "CHL": "CHANNEL",
    "CHSTATUS": "CHSTATUS", "CHS": "CHSTATUS",
    "NAMELIST": "NAMELIST", "NL": "NAMELIST",
    "STGCLASS": "STGCLASS", "STC": "STGCLASS",
    "LISTENER": "LISTENER", "LSTR": "LISTENER",
    "TPSTATUS": "TPSTATUS", "TPS": "TPSTATUS",
    "SBSTATUS": "SBSTATUS", "SBS": "SBSTATUS",
    "CMDSERV": "CMDSERV", "CS": "CMDSERV",
    **{word: word for word in (
        "QMGR", "QMSTATUS", "QSTATS", "QSG", "GROUP", "TOPIC", "SUB", "CFSTRUCT", "CFSTATUS",
        "AUTHINFO", "CONN", "THREAD", "USAGE", "SYSTEM", "LOG", "SECURITY", "TRACE", "CHINIT",
        "PUBSUB", "SERVICE", "SVSTATUS", "LSSTATUS", "CLUSQMGR", "CLUSTER", "CHLAUTH",
        "AUTHREC", "POLICY", "BSDS", "ARCHIVE", "SMDS", "SMDSCONN", "BUFFPOOL", "PSID",
        "MAXSMSGS", "INDOUBT", "TPIPE",
    )},
}

_BLANKS = " \t"
# Only real line ends split lines: str.splitlines() would also split on form feeds and other
# control characters that may legitimately sit inside a quoted value.
_LINE_END = re.compile(r"\r\n|\r|\n")
# IBM verbs, object types and keywords are letters and digits only.
_WORD_CHARS = frozenset(string.ascii_letters + string.digits)
# Characters allowed in an unquoted value besides quotes and (balanced) parentheses.
_VALUE_CHARS = frozenset(string.ascii_letters + string.digits + "./_%*@#$-," + _BLANKS)
# Characters that make an unquoted object name more than one name.
_NOT_IN_NAME = frozenset(_BLANKS + ",()'")


@dataclass(frozen=True)
class Keyword:
    """One keyword of a command, with its value if it had one.

    For a value that is not one quoted string, ``value`` is the text between the parentheses,
    stripped, with unquoted parts folded to upper case and quoted parts kept as written
    (quotes and doubled quotes included) so that :meth:`values` can still split it.
    """

    name: str
    value: str | None
    quoted: bool = False

    def values(self) -> list[str]:
        """The value split as a list on top-level commas (quotes respected), each item processed; [] for None.

        Items are stripped and a quoted item is unquoted.  An empty unquoted value (``NAMES()``)
        is the empty list; a single quoted value is a one-item list even if it contains commas.
        """
        if self.value is None:
            return []
        if self.quoted:
            return [self.value]
        if not self.value:
            return []
        return [_unquote_item(item.strip(_BLANKS)) for item in _split_top_level(self.value)]


@dataclass(frozen=True)
class Command:
    """One parsed MQSC command."""

    text: str
    verb: str
    objtype: str | None
    name: str | None
    keywords: tuple[Keyword, ...]

    def get(self, name: str) -> Keyword | None:
        """The first keyword called ``name`` (any case), or None."""
        wanted = name.upper()
        return next((kw for kw in self.keywords if kw.name == wanted), None)

    def value(self, name: str, absent: str = "") -> str:
        """The value of keyword ``name``: ``absent`` when the command lacks the keyword, "" when
        it has no value."""
        kw = self.get(name)
        return absent if kw is None else (kw.value or "")

    def has(self, name: str) -> bool:
        """Whether the command has a keyword called ``name`` (any case)."""
        return self.get(name) is not None


@dataclass(frozen=True)
class ParseFailure:
    """A command of a script that could not be parsed, with the syntax error to report."""

    text: str
    error: MQError


def split_commands(script: str) -> list[str]:
    """Join continuations, drop comments and blank lines; one string per command.

    Each command is returned stripped of surrounding blanks.  A continuation on the last line
    of the script simply ends the command.
    """
    return [command for command in iter_commands(script) if command is not None]


#: Lines between two ``None`` ticks of ``iter_commands``.
_TICK_LINES = 4096


def iter_commands(script: str) -> Iterator[str | None]:
    """The commands of ``split_commands`` one by one, with a ``None`` every few thousand lines:
    a caller on the event loop can give it a turn even in a long stretch of blanks and comments."""
    _require_str(script)
    commands: list[str] = []
    parts: list[str] = []  # pieces of the command being continued, if any
    strip_next = False  # whether the next line continues a '+' line (leading blanks removed)
    for number, line in enumerate(_LINE_END.split(script)):
        if number % _TICK_LINES == _TICK_LINES - 1:
            yield None
        if commands:
            yield commands.pop()
        if parts:
            piece = line.lstrip(_BLANKS) if strip_next else line
        else:
            stripped = line.strip(_BLANKS)
            if not stripped or stripped.startswith("*"):
                continue
            piece = line
        body = piece.rstrip(_BLANKS)
        if body.endswith(("+", "-")):
            # Keep what precedes the continuation character verbatim, blanks included.
            strip_next = body.endswith("+")
            parts.append(body[:-1])
            continue
        parts.append(piece)
        _append_command(commands, parts)
        parts = []
    _append_command(commands, parts)
    yield from commands


def parse_command(text: str) -> Command:
    """Parse one command; raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR, ...) when malformed.

    ``text`` is one command with continuations already joined (an item of :func:`split_commands`).
    Error messages give 1-based columns of ``text``.
    """
    _require_str(text)
    body = text.rstrip(_BLANKS)
    if body.endswith(";"):
        body = body[:-1]  # stripping from the right keeps every column unchanged
    pos = _skip_blanks(body, 0)
    if pos == len(body):
        raise _syntax_error(body, pos, "the command is empty")

    word, start, pos = _read_word(body, pos, "verb")
    verb = VERBS.get(word)
    if verb is None:
        raise _syntax_error(body, start, f"unknown command verb {echo(word)!r}")
    pos = _skip_blanks(body, pos)
    if body.startswith("(", pos):
        raise _syntax_error(body, pos, f"the verb {verb} takes no value in parentheses")

    objtype: str | None = None
    name: str | None = None
    if verb not in _VERBS_WITHOUT_OBJECT:
        if pos == len(body):
            raise _syntax_error(body, pos, f"{verb} needs an object type, such as QLOCAL or QMGR")
        word, start, pos = _read_word(body, pos, "object type")
        objtype = OBJECT_TYPES.get(word)
        if objtype is None:
            raise _syntax_error(body, start, f"unknown object type {echo(word)!r} for {verb}")
        pos = _skip_blanks(body, pos)
        if body.startswith("(", pos):
            name, pos = _read_name(body, pos)

    keywords: list[Keyword] = []
    seen: set[str] = set()
    while (pos := _skip_blanks(body, pos)) < len(body):
        word, start, pos = _read_word(body, pos, "keyword")
        if not word[0].isalpha():
            raise _syntax_error(body, start, f"keyword {echo(word)!r} must start with a letter")
        if word in seen:
            # z/OS's command preprocessor refuses the command (a CMDSCOPE given twice must not
            # run by its first value, as ``Command.get`` would read it)
            raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR,
                          f"CSQ9000E '{echo(word)}' appears more than once (column {start + 1})")
        seen.add(word)
        pos = _skip_blanks(body, pos)
        if body.startswith("(", pos):
            if verb == "DISPLAY" and word not in _display_value_keywords(objtype):
                # z/OS's command preprocessor: an attribute asked for on DISPLAY takes no value
                raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR,
                              f"CSQ9011E Parameter(s) not allowed for '{echo(word)}' (column {start + 1}): "
                              f"DISPLAY {objtype} asks for an attribute by name; to select objects by "
                              "its value use WHERE(attribute EQ value)")
            value, quoted, pos = _read_value(body, pos)
            keywords.append(Keyword(word, value, quoted))
        else:
            keywords.append(Keyword(word, None))
    return Command(text.strip(_BLANKS), verb, objtype, name, tuple(keywords))


def parse_script(script: str) -> list[Command | ParseFailure]:
    """Every command of a script, in order; a malformed command becomes a ParseFailure and
    parsing continues with the next command."""
    results: list[Command | ParseFailure] = []
    for text in split_commands(script):
        try:
            results.append(parse_command(text))
        except MQError as error:
            results.append(ParseFailure(text, error))
    return results


# --- helpers -------------------------------------------------------------------------------


def _require_str(value: object) -> None:
    """Reject non-string input with the same error type as bad MQSC, so callers catch one thing."""
    if not isinstance(value, str):
        raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR, f"MQSC input must be text, not {type(value).__name__}")


def _append_command(commands: list[str], parts: list[str]) -> None:
    """Add the joined command to ``commands`` unless it is blank (e.g. a lone '+' line)."""
    command = "".join(parts).strip(_BLANKS)
    if command:
        commands.append(command)


def _syntax_error(text: str, pos: int, problem: str) -> MQError:
    """The syntax error for ``problem`` at index ``pos`` of ``text``, quoting what is there."""
    near = text[pos:pos + 20]
    where = f"near {near!r}" if near else "at end of command"
    return MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR, f"MQSC syntax error at column {pos + 1} ({where}): {problem}")


def _skip_blanks(text: str, pos: int) -> int:
    """Index of the first non-blank character at or after ``pos`` (``len(text)`` if none)."""
    while pos < len(text) and text[pos] in _BLANKS:
        pos += 1
    return pos


def _read_word(text: str, pos: int, what: str) -> tuple[str, int, int]:
    """Read a verb, object type or keyword at ``pos``: (upper-case word, start, end index).

    The word must be followed by a blank, ``(`` or the end of the command; anything else is
    reported here, where the message can say what was expected.
    """
    start = pos
    while pos < len(text) and text[pos] in _WORD_CHARS:
        pos += 1
    if pos == start:
        raise _syntax_error(text, pos, _unexpected(text[pos], what))
    if pos < len(text) and text[pos] not in _BLANKS and text[pos] != "(":
        raise _syntax_error(text, pos, _unexpected(text[pos], f"{what} {echo(text[start:pos])!r}"))
    return text[start:pos].upper(), start, pos


def _unexpected(char: str, context: str) -> str:
    """Explain an unexpected character met while reading ``context``."""
    if char == "(":
        return "a value in parentheses must follow a keyword"
    if char == ")":
        return "')' has no matching '('"
    if char == "'":
        return "a quoted string must be inside parentheses"
    return f"character {char!r} is not valid in {context}; names of verbs and keywords are letters and digits"


def _end_of_quote(text: str, pos: int) -> int:
    """Index of the quote closing the string that opens at ``text[pos]``; ``''`` is an escaped quote."""
    i = pos + 1
    while (i := text.find("'", i)) != -1:
        if text.startswith("''", i):
            i += 2
            continue
        return i
    raise _syntax_error(text, pos, "quoted string has no closing quote")


def _read_value(text: str, pos: int) -> tuple[str, bool, int]:
    """Read the parenthesised value opening at ``text[pos]``: (value, quoted, index after ')').

    Balanced nested parentheses stay inside the value (``WHERE((A))``); quotes are honoured at
    every depth so ``')'`` inside a quoted string never closes anything.
    """
    open_at = pos
    pos += 1
    depth = 0
    pieces: list[str] = []  # unquoted text folded to upper case, quoted text as written
    while True:
        if pos >= len(text):
            raise _syntax_error(text, open_at, "'(' has no matching ')'")
        char = text[pos]
        if char == "'":
            end = _end_of_quote(text, pos)
            pieces.append(text[pos:end + 1])
            pos = end + 1
            continue
        if char == ")":
            if depth == 0:
                break
            depth -= 1
        elif char == "(":
            depth += 1
        elif char not in _VALUE_CHARS:
            raise _syntax_error(text, pos, f"character {char!r} is not valid in an unquoted value; quote the value")
        pieces.append(char.upper())
        pos += 1
    raw = "".join(pieces).strip(_BLANKS)
    if _is_one_quoted_string(raw):
        return _unescape(raw), True, pos + 1
    return raw, False, pos + 1


def _read_name(text: str, pos: int) -> tuple[str, int]:
    """Read the object name opening at ``text[pos]``: one quoted string or one unquoted name."""
    value, quoted, end = _read_value(text, pos)
    if not quoted and any(char in _NOT_IN_NAME for char in value):
        raise _syntax_error(text, pos, f"object name {echo(value)!r} must be a single name")
    return value, end


def _is_one_quoted_string(value: str) -> bool:
    """Whether ``value`` (already known to have terminated quotes) is exactly one quoted string."""
    return value.startswith("'") and _end_of_quote(value, 0) == len(value) - 1


def _unescape(quoted: str) -> str:
    """The content of a quoted string, with ``''`` turned into ``'``."""
    return quoted[1:-1].replace("''", "'")


def _unquote_item(item: str) -> str:
    """A list item as the caller wants it: unquoted if it is one quoted string, else as it is."""
    return _unescape(item) if _is_one_quoted_string(item) else item


def _split_top_level(value: str) -> list[str]:
    """Split a processed value on commas outside quotes and nested parentheses."""
    items: list[str] = []
    depth = 0
    start = pos = 0
    while pos < len(value):
        char = value[pos]
        if char == "'":
            pos = _end_of_quote(value, pos)
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            items.append(value[start:pos])
            start = pos + 1
        pos += 1
    items.append(value[start:pos])
    return items
