"""Name rules of docs/api.md §1: object names and z/OS queue manager / QSG names."""

from __future__ import annotations

import re

from app.core.errors import MQError, echo
from app.core.reasons import MQRC

_OBJECT_NAME = re.compile(r"[A-Za-z0-9./_%]{1,48}")
_GENERIC_NAME = re.compile(r"[A-Za-z0-9./_%]{0,47}\*?")
_QMGR_NAME = re.compile(r"[A-Z][A-Z0-9@#$]{0,3}")


def is_object_name(name: str) -> bool:
    """True for a valid queue or process name: 1-48 of ``A-Z a-z 0-9 . / _ %``."""
    return bool(_OBJECT_NAME.fullmatch(name))


def check_object_name(name: str, reason: int = MQRC.OBJECT_NAME_ERROR) -> str:
    """Return ``name`` or raise MQError(reason) when it breaks the object name rules."""
    if not isinstance(name, str) or not is_object_name(name):
        raise MQError(reason, f"'{echo(name)}' is not a valid object name (1-48 of A-Z a-z 0-9 . / _ %)")
    return name


def matches(pattern: str, name: str) -> bool:
    """MQSC generic-name match: ``*`` alone matches all, ``ABC*`` matches names starting ABC."""
    if pattern.endswith("*"):
        return name.startswith(pattern[:-1])
    return name == pattern


def check_generic_name(name: str) -> str:
    """Return a valid specific or generic name, else raise MQRC_OBJECT_NAME_ERROR."""
    if not _GENERIC_NAME.fullmatch(name) or name == "":
        raise MQError(MQRC.OBJECT_NAME_ERROR, f"'{echo(name)}' is not a valid object name or generic name")
    return name


def is_qmgr_name(name: str) -> bool:
    """z/OS queue manager / QSG name: 1-4 of upper-case letters, digits, @ # $, first a letter."""
    return bool(_QMGR_NAME.fullmatch(name))


def validate_qmgr_name(name: str) -> str:
    """Return the name or raise ValueError (settings and CLI validation)."""
    if not is_qmgr_name(name):
        raise ValueError(f"'{echo(name)}' is not a z/OS queue manager or QSG name (1-4 of A-Z 0-9 @ # $, first A-Z)")
    return name
