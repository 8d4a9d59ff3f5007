"""MQOO_, MQPMO_ and MQGMO_ options: parsing and the rules IBM MQ applies to combinations."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from app.core.errors import MQError
from app.core.mqmd import CONTEXT_FIELDS, IDENTITY_FIELDS
from app.core.reasons import MQRC

T = TypeVar("T")

# MQOO_ context options (IBM "MQOO_* (Opening options)", "Controlling context information"):
# each implies the ones IBM says it implies - PASS_ALL implies PASS_IDENTITY, SET_IDENTITY
# implies PASS_IDENTITY, SET_ALL implies PASS_ALL and SET_IDENTITY (and so all four).
OPEN_CONTEXT_IMPLIES: dict[str, frozenset[str]] = {
    "PASS_IDENTITY_CONTEXT": frozenset({"PASS_IDENTITY"}),
    "PASS_ALL_CONTEXT": frozenset({"PASS_IDENTITY", "PASS_ALL"}),
    "SET_IDENTITY_CONTEXT": frozenset({"PASS_IDENTITY", "SET_IDENTITY"}),
    "SET_ALL_CONTEXT": frozenset({"PASS_IDENTITY", "PASS_ALL", "SET_IDENTITY", "SET_ALL"}),
}
# Options with no effect here, accepted because IBM's samples and pymqi/ibmmq programs pass
# them: binding of cluster queues (no clusters here) and client read-ahead (every get is one
# request to the queue manager). At most one of each family, as IBM requires (2046).
_BIND_OPTIONS = frozenset({"BIND_ON_OPEN", "BIND_NOT_FIXED", "BIND_ON_GROUP", "BIND_AS_Q_DEF"})
_READ_AHEAD_OPTIONS = frozenset({"READ_AHEAD", "NO_READ_AHEAD", "READ_AHEAD_AS_Q_DEF"})
_INPUT_OPTIONS = frozenset({"INPUT_AS_Q_DEF", "INPUT_SHARED", "INPUT_EXCLUSIVE"})
# What an open is for: at least one of these (the others only modify an open).
_ACCESS_OPTIONS = _INPUT_OPTIONS | {"BROWSE", "OUTPUT", "INQUIRE", "SET"}
OPEN_OPTIONS = frozenset({
    "INPUT_AS_Q_DEF", "INPUT_SHARED", "INPUT_EXCLUSIVE", "BROWSE", "OUTPUT", "INQUIRE", "SET",
    "FAIL_IF_QUIESCING", "SAVE_ALL_CONTEXT", "ALTERNATE_USER_AUTHORITY",
}) | OPEN_CONTEXT_IMPLIES.keys() | _BIND_OPTIONS | _READ_AHEAD_OPTIONS
# MQPMO_ context options: at most one (IBM "MQPMO options": 2046 otherwise).
PUT_CONTEXT_OPTIONS = ("DEFAULT_CONTEXT", "NO_CONTEXT", "PASS_IDENTITY_CONTEXT", "PASS_ALL_CONTEXT",
                       "SET_IDENTITY_CONTEXT", "SET_ALL_CONTEXT")
# ALTERNATE_USER_AUTHORITY is MQPUT1's (MQPUT answers 2046 for it: ``Mqi.put``).
PUT_OPTIONS = frozenset({"SYNCPOINT", "NO_SYNCPOINT", "NEW_MSG_ID", "NEW_CORREL_ID", "FAIL_IF_QUIESCING",
                         "ALTERNATE_USER_AUTHORITY", *PUT_CONTEXT_OPTIONS})
PUT_OPTIONS |= {"LOGICAL_ORDER"}  # message groups (docs/api.md "Message groups")
PUT_OPTIONS |= {"WARN_IF_NO_SUBS_MATCHED"}  # publications (app/qmgr/pubsub.py)
# Put response types (MQPMO_ASYNC_RESPONSE and its kin): every put completes synchronously here;
# one the application asked to be asynchronous is counted for MQSTAT (app/qmgr/mqi/stat.py).
PUT_OPTIONS |= {"ASYNC_RESPONSE", "SYNC_RESPONSE", "RESPONSE_AS_Q_DEF"}
GET_OPTIONS = frozenset({
    "WAIT", "NO_WAIT", "SYNCPOINT", "NO_SYNCPOINT", "SYNCPOINT_IF_PERSISTENT", "BROWSE_FIRST",
    "BROWSE_NEXT", "MSG_UNDER_CURSOR", "ACCEPT_TRUNCATED_MSG", "FAIL_IF_QUIESCING",
    # groups, segments, marking, cursor, properties and conversion (docs/api.md "Get options")
    "LOGICAL_ORDER", "ALL_MSGS_AVAILABLE", "COMPLETE_MSG", "ALL_SEGMENTS_AVAILABLE", "MARK_SKIP_BACKOUT",
    "BROWSE_MSG_UNDER_CURSOR", "LOCK", "UNLOCK", "SET_SIGNAL", "CONVERT", "PROPERTIES_AS_Q_DEF",
    "PROPERTIES_IN_HANDLE", "NO_PROPERTIES", "PROPERTIES_FORCE_MQRFH2", "PROPERTIES_COMPATIBILITY",
    "MARK_BROWSE_HANDLE", "MARK_BROWSE_CO_OP", "UNMARK_BROWSE_HANDLE", "UNMARK_BROWSE_CO_OP",
    "UNMARKED_BROWSE_MSG",
})
#: What z/OS refuses with MQRC_OPTIONS_ERROR: MQGMO_LOCK and MQGMO_UNLOCK ("not supported on z/OS",
#: IBM MQ docs, MQGMO Options), and MQGMO_SET_SIGNAL, which needs an ECB that no REST client can
#: give (the REST API has no signal; a client waits with WAIT and wait_ms instead).
_REFUSED_GET_OPTIONS = frozenset({"LOCK", "UNLOCK", "SET_SIGNAL"})


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
    # What puts on this handle may do with context (PASS_IDENTITY, PASS_ALL, SET_IDENTITY,
    # SET_ALL, after IBM's implications), whether MQGET saves the context of the message it
    # gets (SAVE_ALL_CONTEXT), and whether the open used an alternate user id.
    context: frozenset[str] = frozenset()
    save_all_context: bool = False
    alternate_user: bool = False

    @property
    def any_input(self) -> bool:
        return self.input is not None


def parse_open_options(options: Iterable[str]) -> frozenset[str]:
    """Validate MQOO_ names (without the prefix); MQRC_OPTIONS_ERROR for unknown ones or bad mixes.

    IBM's rules (MQOPEN, "MQOO_* (Opening options)"): one input option at most; the context
    options that pass or set context are valid only with OUTPUT, SAVE_ALL_CONTEXT only with an
    input option; one binding and one read-ahead option at most.
    """
    chosen = _option_set(options, OPEN_OPTIONS, MQRC.OPTIONS_ERROR, "OO")
    inputs = chosen & _INPUT_OPTIONS
    if len(inputs) > 1:
        raise MQError(MQRC.OPTIONS_ERROR, f"only one input option may be given, not {', '.join(sorted(inputs))}")
    if not chosen & _ACCESS_OPTIONS:
        raise MQError(MQRC.OPTIONS_ERROR, "at least one of INPUT_*, BROWSE, OUTPUT, INQUIRE, SET is needed")
    context = chosen & OPEN_CONTEXT_IMPLIES.keys()
    if context and "OUTPUT" not in chosen:
        raise MQError(MQRC.OPTIONS_ERROR, f"{', '.join(sorted(context))} need(s) OUTPUT")
    if "SAVE_ALL_CONTEXT" in chosen and not inputs:
        raise MQError(MQRC.OPTIONS_ERROR, "SAVE_ALL_CONTEXT needs an INPUT_* option")
    for family in (_BIND_OPTIONS, _READ_AHEAD_OPTIONS):
        if len(chosen & family) > 1:
            raise MQError(MQRC.OPTIONS_ERROR, f"only one of {', '.join(sorted(chosen & family))} may be given")
    return chosen


def open_context(chosen: frozenset[str]) -> frozenset[str]:
    """What the MQOO_ context options of an open allow its puts (IBM's implications applied):
    a subset of PASS_IDENTITY, PASS_ALL, SET_IDENTITY, SET_ALL."""
    out: frozenset[str] = frozenset()
    for option in chosen & OPEN_CONTEXT_IMPLIES.keys():
        out |= OPEN_CONTEXT_IMPLIES[option]
    return out


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
        context=open_context(chosen),
        save_all_context="SAVE_ALL_CONTEXT" in chosen,
        alternate_user="ALTERNATE_USER_AUTHORITY" in chosen,
    )


# MQPMO_ context option -> the MQMD context fields the application's MQMD supplies.
_SETTABLE = {"SET_IDENTITY": frozenset(IDENTITY_FIELDS), "SET_ALL": CONTEXT_FIELDS}


@dataclass(frozen=True)
class PutOptions:
    syncpoint: bool
    new_msg_id: bool
    new_correl_id: bool
    fail_if_quiescing: bool
    logical_order: bool = False
    # The MQPMO_ context option without its suffix: DEFAULT, NO, PASS_IDENTITY, PASS_ALL,
    # SET_IDENTITY or SET_ALL (IBM "Controlling context information").
    context: str = "DEFAULT"
    alternate_user: bool = False  # MQPMO_ALTERNATE_USER_AUTHORITY (MQPUT1 only)

    @property
    def settable(self) -> frozenset[str]:
        """The MQMD context fields the application supplies (SET_IDENTITY: identity; SET_ALL:
        identity and origin); validate_put_md takes only these."""
        return _SETTABLE.get(self.context, frozenset())

    @property
    def passes(self) -> bool:
        """Whether the context comes from the message last got on the PMO's Context handle."""
        return self.context.startswith("PASS_")
    warn_if_no_subs_matched: bool = False  # a publication no subscription matched: MQRC 2550 (warning)
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
    context = [c for c in PUT_CONTEXT_OPTIONS if c in chosen]
    if len(context) > 1:
        raise MQError(MQRC.OPTIONS_ERROR, f"only one context option may be given, not {', '.join(context)}")
    responses = chosen & {"ASYNC_RESPONSE", "SYNC_RESPONSE", "RESPONSE_AS_Q_DEF"}
    if len(responses) > 1:  # IBM: one put response type at most (MQRC_OPTIONS_ERROR)
        raise MQError(MQRC.OPTIONS_ERROR, f"only one of {', '.join(sorted(responses))} may be given")
    return PutOptions(
        syncpoint="NO_SYNCPOINT" not in chosen,
        new_msg_id="NEW_MSG_ID" in chosen,
        new_correl_id="NEW_CORREL_ID" in chosen,
        fail_if_quiescing="FAIL_IF_QUIESCING" in chosen,
        logical_order="LOGICAL_ORDER" in chosen,
        context=context[0].removesuffix("_CONTEXT") if context else "DEFAULT",
        alternate_user="ALTERNATE_USER_AUTHORITY" in chosen,
        warn_if_no_subs_matched="WARN_IF_NO_SUBS_MATCHED" in chosen,
        async_response="ASYNC_RESPONSE" in chosen,
        sync_response="SYNC_RESPONSE" in chosen,
    )


@dataclass(frozen=True)
class GetOptions:
    wait: bool
    syncpoint: str  # "YES", "NO", "IF_PERSISTENT"
    mode: str  # "GET", "BROWSE_FIRST", "BROWSE_NEXT", "MSG_UNDER_CURSOR", "BROWSE_UNDER_CURSOR"
    accept_truncated: bool
    fail_if_quiescing: bool
    logical_order: bool = False
    all_msgs_available: bool = False
    complete_msg: bool = False  # COMPLETE_MSG or ALL_SEGMENTS_AVAILABLE (z/OS: no segment to join)
    mark_skip_backout: bool = False
    convert: bool = False

    @property
    def needs_group_index(self) -> bool:
        """z/OS answers MQRC_Q_INDEX_TYPE_ERROR (2394) for these on a queue not INDXTYPE(GROUPID)."""
        return self.logical_order or self.all_msgs_available or self.complete_msg

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
    refused = chosen & _REFUSED_GET_OPTIONS
    if refused:
        why = ("LOCK and UNLOCK are not supported on z/OS" if refused & {"LOCK", "UNLOCK"}
               else "SET_SIGNAL needs an ECB, which no REST client has: use WAIT with wait_ms")
        raise MQError(MQRC.OPTIONS_ERROR, f"{', '.join(sorted(refused))}: {why}")
    sync = chosen & {"SYNCPOINT", "NO_SYNCPOINT", "SYNCPOINT_IF_PERSISTENT"}
    if len(sync) > 1:
        raise MQError(MQRC.OPTIONS_ERROR, f"only one syncpoint option may be given, not {', '.join(sorted(sync))}")
    if {"WAIT", "NO_WAIT"} <= chosen:
        raise MQError(MQRC.OPTIONS_ERROR, "WAIT and NO_WAIT are mutually exclusive")
    modes = chosen & {"BROWSE_FIRST", "BROWSE_NEXT", "MSG_UNDER_CURSOR", "BROWSE_MSG_UNDER_CURSOR"}
    if len(modes) > 1:
        raise MQError(MQRC.OPTIONS_ERROR, f"only one of {', '.join(sorted(modes))} may be given")
    mode = next(iter(modes), "GET")
    if mode == "BROWSE_MSG_UNDER_CURSOR":
        mode = "BROWSE_UNDER_CURSOR"  # the coupling facility's name of the mode
    if "MARK_SKIP_BACKOUT" in chosen and (mode.startswith("BROWSE") or "NO_SYNCPOINT" in chosen):
        # IBM: MARK_SKIP_BACKOUT needs a get under syncpoint
        raise MQError(MQRC.OPTIONS_ERROR, "MARK_SKIP_BACKOUT needs a destructive get under SYNCPOINT")
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
        logical_order="LOGICAL_ORDER" in chosen,
        all_msgs_available="ALL_MSGS_AVAILABLE" in chosen,
        complete_msg=bool(chosen & {"COMPLETE_MSG", "ALL_SEGMENTS_AVAILABLE"}),
        mark_skip_backout="MARK_SKIP_BACKOUT" in chosen,
        convert="CONVERT" in chosen,
    )


# MQOD ObjectType (cmqc.h: MQOT_Q 1, MQOT_Q_MGR 5, MQOT_TOPIC 8), by name (MQOT_ optional; QUEUE
# as the REST API first spelled it) or number: the object types MQOPEN and MQPUT1 take here.
_OBJECT_TYPES = {"Q": "Q", "QUEUE": "Q", "1": "Q", "Q_MGR": "Q_MGR", "5": "Q_MGR", "TOPIC": "TOPIC", "8": "TOPIC",
                 "NAMELIST": "NAMELIST", "2": "NAMELIST"}


def parse_object_type(value: object) -> str:
    """``Q`` (the default), ``Q_MGR``, ``TOPIC`` or ``NAMELIST``; anything else MQRC_OBJECT_TYPE_ERROR (2043)."""
    if value is None:
        return "Q"
    key = str(value).strip().upper().removeprefix("MQOT_") if isinstance(value, (str, int)) \
        and not isinstance(value, bool) else ""
    kind = _OBJECT_TYPES.get(key)
    if kind is None:
        raise MQError(MQRC.OBJECT_TYPE_ERROR, f"object_type {value!r} is not Q (MQOT_Q), TOPIC, Q_MGR or NAMELIST")
    return kind
