"""MQOO_, MQPMO_ and MQGMO_ options: parsing and the rules IBM MQ applies to combinations."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from app.core.errors import MQError
from app.core.reasons import MQRC

T = TypeVar("T")

OPEN_OPTIONS = frozenset({
    "INPUT_AS_Q_DEF", "INPUT_SHARED", "INPUT_EXCLUSIVE", "BROWSE", "OUTPUT", "INQUIRE", "SET",
    "FAIL_IF_QUIESCING",
})
PUT_OPTIONS = frozenset({"SYNCPOINT", "NO_SYNCPOINT", "NEW_MSG_ID", "NEW_CORREL_ID", "FAIL_IF_QUIESCING"})
# Put response types (MQPMO_ASYNC_RESPONSE and its kin): every put completes synchronously here;
# one the application asked to be asynchronous is counted for MQSTAT (app/qmgr/mqi.py).
PUT_OPTIONS |= {"ASYNC_RESPONSE", "SYNC_RESPONSE", "RESPONSE_AS_Q_DEF"}
GET_OPTIONS = frozenset({
    "WAIT", "NO_WAIT", "SYNCPOINT", "NO_SYNCPOINT", "SYNCPOINT_IF_PERSISTENT", "BROWSE_FIRST",
    "BROWSE_NEXT", "MSG_UNDER_CURSOR", "ACCEPT_TRUNCATED_MSG", "FAIL_IF_QUIESCING",
})
GET_OPTIONS |= {"CONVERT"}  # MQGMO_CONVERT: data conversion of MQFMT_STRING messages (app/core/convert.py)


def _option_set(options: Iterable[str], allowed: frozenset[str], reason: int, what: str) -> frozenset[str]:
    chosen: set[str] = set()
    for opt in options:
        if not isinstance(opt, str):
            raise MQError(reason, f"{what} options must be names, got {opt!r}")
        name = opt.upper().removeprefix(f"MQ{what}_")
        if name not in allowed:
            raise MQError(reason, f"unknown {what} option '{opt}' (allowed: {', '.join(sorted(allowed))})")
        chosen.add(name)
    return frozenset(chosen)


def _cached(parse: Callable[[tuple[str, ...]], T], options: Iterable[str], what: str) -> T:
    """Parse through an LRU cache (the same few option lists come on every MQPUT/MQGET)."""
    try:
        return parse(tuple(options))
    except TypeError:  # an unhashable entry is no option name
        raise MQError(MQRC.OPTIONS_ERROR, f"{what} options must be a list of names") from None


@dataclass(frozen=True)
class OpenOptions:
    """Resolved MQOPEN options of a handle."""

    input: str | None  # None, "SHARED" or "EXCLUSIVE" (after INPUT_AS_Q_DEF and SHARE/NOSHARE)
    input_as_q_def: bool
    browse: bool
    output: bool
    inquire: bool
    set: bool
    fail_if_quiescing: bool

    @property
    def any_input(self) -> bool:
        return self.input is not None


def parse_open_options(options: Iterable[str]) -> frozenset[str]:
    """Validate MQOO_ names (without the prefix); MQRC_OPTIONS_ERROR for unknown ones or bad mixes."""
    chosen = _option_set(options, OPEN_OPTIONS, MQRC.OPTIONS_ERROR, "OO")
    inputs = chosen & {"INPUT_AS_Q_DEF", "INPUT_SHARED", "INPUT_EXCLUSIVE"}
    if len(inputs) > 1:
        raise MQError(MQRC.OPTIONS_ERROR, f"only one input option may be given, not {', '.join(sorted(inputs))}")
    if not chosen - {"FAIL_IF_QUIESCING"}:
        raise MQError(MQRC.OPTIONS_ERROR, "at least one of INPUT_*, BROWSE, OUTPUT, INQUIRE, SET is needed")
    return chosen


def resolve_open_options(chosen: frozenset[str], *, shareable: bool, defsopt: str) -> OpenOptions:
    """Decide the input mode as IBM does.

    INPUT_AS_Q_DEF takes the queue's DEFSOPT; a queue defined NOSHARE opens every input
    request exclusively (MQOO_INPUT_SHARED is then treated as MQOO_INPUT_EXCLUSIVE).
    """
    mode: str | None = None
    if "INPUT_EXCLUSIVE" in chosen:
        mode = "EXCLUSIVE"
    elif "INPUT_SHARED" in chosen:
        mode = "SHARED"
    elif "INPUT_AS_Q_DEF" in chosen:
        mode = "SHARED" if defsopt == "SHARED" else "EXCLUSIVE"
    if mode == "SHARED" and not shareable:
        mode = "EXCLUSIVE"
    return OpenOptions(
        input=mode,
        input_as_q_def="INPUT_AS_Q_DEF" in chosen,
        browse="BROWSE" in chosen,
        output="OUTPUT" in chosen,
        inquire="INQUIRE" in chosen,
        set="SET" in chosen,
        fail_if_quiescing="FAIL_IF_QUIESCING" in chosen,
    )


@dataclass(frozen=True)
class PutOptions:
    syncpoint: bool
    new_msg_id: bool
    new_correl_id: bool
    fail_if_quiescing: bool
    async_response: bool = False  # MQPMO_ASYNC_RESPONSE
    sync_response: bool = False  # MQPMO_SYNC_RESPONSE (neither: MQPMO_RESPONSE_AS_Q_DEF, DEFPRESP)


def parse_put_options(options: Iterable[str]) -> PutOptions:
    """MQPMO_ options; as on z/OS, neither SYNCPOINT nor NO_SYNCPOINT means inside the unit of work."""
    return _cached(_parse_put_options, options, "PMO")


@functools.lru_cache(maxsize=256)
def _parse_put_options(options: tuple[str, ...]) -> PutOptions:
    chosen = _option_set(options, PUT_OPTIONS, MQRC.OPTIONS_ERROR, "PMO")
    if {"SYNCPOINT", "NO_SYNCPOINT"} <= chosen:
        raise MQError(MQRC.OPTIONS_ERROR, "SYNCPOINT and NO_SYNCPOINT are mutually exclusive")
    responses = chosen & {"ASYNC_RESPONSE", "SYNC_RESPONSE", "RESPONSE_AS_Q_DEF"}
    if len(responses) > 1:  # IBM: one put response type at most (MQRC_OPTIONS_ERROR)
        raise MQError(MQRC.OPTIONS_ERROR, f"only one of {', '.join(sorted(responses))} may be given")
    return PutOptions(
        syncpoint="NO_SYNCPOINT" not in chosen,
        new_msg_id="NEW_MSG_ID" in chosen,
        new_correl_id="NEW_CORREL_ID" in chosen,
        fail_if_quiescing="FAIL_IF_QUIESCING" in chosen,
        async_response="ASYNC_RESPONSE" in chosen,
        sync_response="SYNC_RESPONSE" in chosen,
    )


@dataclass(frozen=True)
class GetOptions:
    wait: bool
    syncpoint: str  # "YES", "NO", "IF_PERSISTENT"
    mode: str  # "GET", "BROWSE_FIRST", "BROWSE_NEXT", "MSG_UNDER_CURSOR"
    accept_truncated: bool
    fail_if_quiescing: bool
    convert: bool = False  # MQGMO_CONVERT

    @property
    def browse(self) -> bool:
        return self.mode.startswith("BROWSE")


def parse_get_options(options: Iterable[str]) -> GetOptions:
    """MQGMO_ options with IBM's exclusivity rules (MQRC_OPTIONS_ERROR otherwise).

    As on z/OS, a destructive get naming no syncpoint option is inside the unit of work; a
    browse is never part of one.
    """
    return _cached(_parse_get_options, options, "GMO")


@functools.lru_cache(maxsize=256)
def _parse_get_options(options: tuple[str, ...]) -> GetOptions:
    chosen = _option_set(options, GET_OPTIONS, MQRC.OPTIONS_ERROR, "GMO")
    sync = chosen & {"SYNCPOINT", "NO_SYNCPOINT", "SYNCPOINT_IF_PERSISTENT"}
    if len(sync) > 1:
        raise MQError(MQRC.OPTIONS_ERROR, f"only one syncpoint option may be given, not {', '.join(sorted(sync))}")
    if {"WAIT", "NO_WAIT"} <= chosen:
        raise MQError(MQRC.OPTIONS_ERROR, "WAIT and NO_WAIT are mutually exclusive")
    modes = chosen & {"BROWSE_FIRST", "BROWSE_NEXT", "MSG_UNDER_CURSOR"}
    if len(modes) > 1:
        raise MQError(MQRC.OPTIONS_ERROR, f"only one of {', '.join(sorted(modes))} may be given")
    mode = next(iter(modes), "GET")
    if mode.startswith("BROWSE") and "SYNCPOINT" in chosen:
        raise MQError(MQRC.OPTIONS_ERROR, "a browse cannot be under syncpoint")
    if mode.startswith("BROWSE"):
        syncpoint = "NO"
    elif "NO_SYNCPOINT" in chosen:
        syncpoint = "NO"
    elif "SYNCPOINT_IF_PERSISTENT" in chosen:
        syncpoint = "IF_PERSISTENT"
    else:
        syncpoint = "YES"
    return GetOptions(
        wait="WAIT" in chosen,
        syncpoint=syncpoint,
        mode=mode,
        accept_truncated="ACCEPT_TRUNCATED_MSG" in chosen,
        fail_if_quiescing="FAIL_IF_QUIESCING" in chosen,
        convert="CONVERT" in chosen,
    )
