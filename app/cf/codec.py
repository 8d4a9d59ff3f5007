"""Small conversions between Python values and what the scripts take and return."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping, Sequence

from app.cf.results import COUNTER_FIELDS, InputMode

_HEX_ID = re.compile(r"[0-9A-Fa-f]{48}")
_ZERO_ID = "0" * 48


# ---- small helpers ------------------------------------------------------------------------


def text(v: bytes | str | int) -> str:
    if isinstance(v, bytes):
        return v.decode()
    return str(v)


def hex_id(value: str | None) -> str:
    """A msg_id / correl_id as the scripts index it: upper-case hex, "" for none (all zeros)."""
    if not value or value == _ZERO_ID:
        return ""
    if not _HEX_ID.fullmatch(value):
        raise ValueError(f"not a 48-hex-digit identifier: {value!r}")
    upper = value.upper()
    return "" if upper == _ZERO_ID else upper


def cursor(value: str | None) -> str:
    """A browse cursor as the scripts compare it: the 16-digit zero-padded score, "" for none."""
    if not value:
        return ""
    if not value.isdigit():
        raise ValueError(f"not a browse cursor: {value!r}")
    return f"{int(value):016d}"


def pairs(values: Mapping[str, str | int], what: str) -> list[str]:
    """Attribute mapping as flat name/value strings for HSET; counters are not attributes."""
    out: list[str] = []
    for name, value in values.items():
        if name.lstrip("?") in COUNTER_FIELDS:
            raise ValueError(f"{what}: '{name}' is a counter owned by the coupling facility")
        if isinstance(value, bool):
            raise ValueError(f"{what}: '{name}' must be a string or an integer, not a bool")
        out += [name, str(value)]
    return out


def flat_to_dict(flat: Sequence[bytes]) -> dict[str, str]:
    return {text(flat[i]): text(flat[i + 1]) for i in range(0, len(flat), 2)}


def open_flags(input: str | None, output: bool, browse: bool, inquire: bool, set_: bool) -> str:
    flags = ""
    if input is not None:
        flags += "X" if InputMode(input) is InputMode.EXCLUSIVE else "I"
    if output:
        flags += "O"
    if browse:
        flags += "B"
    if inquire:
        flags += "Q"
    if set_:
        flags += "S"
    return flags



async def batched(it: AsyncIterator[bytes], size: int = 500) -> AsyncIterator[list[bytes]]:
    batch: list[bytes] = []
    async for item in it:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
