"""PCF commands as the MQSC commands they are the same as (IBM documents every PCF command by
its MQSC equivalent), and MQSC results back as PCF parameters. Pure: no I/O.

``plan(command, parameters)`` gives the MQSC text to run (through the queue manager's MQSC
executor, with its authority checks) and how to shape the answer; ``items(plan, result)`` turns
the executor's result objects into one parameter list per object.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.cmdserver import params as P
from app.cmdserver.pcf import (
    MQCFOP_EQUAL,
    MQCFOP_GREATER,
    MQCFOP_LESS,
    MQCFOP_LIKE,
    MQCFOP_NOT_EQUAL,
    MQCFOP_NOT_GREATER,
    MQCFOP_NOT_LESS,
    MQCFOP_NOT_LIKE,
    MQCFT_BYTE_STRING,
    MQCFT_BYTE_STRING_FILTER,
    MQCFT_INTEGER,
    MQCFT_INTEGER64,
    MQCFT_INTEGER_FILTER,
    MQCFT_INTEGER_LIST,
    MQCFT_STRING,
    MQCFT_STRING_FILTER,
    MQCFT_STRING_LIST,
    Parameter,
)

# MQRCCF_* reasons of request checking
CFH_COMMAND_ERROR = 3007
CFIN_PARM_ID_ERROR = 3014
CFST_PARM_ID_ERROR = 3015
PARM_COUNT_TOO_SMALL = 3019
CFIL_PARM_ID_ERROR = 3047
CFSL_PARM_ID_ERROR = 3033
CFIN_DUPLICATE_PARM = 3017
FILTER_ERROR = 3150
PARM_VALUE_ERROR = 3229
Q_TYPE_ERROR = 3022
ESCAPE_TYPE_ERROR = 3054


class RequestError(Exception):
    """A PCF request this command server refuses before running anything (MQRCCF_* ``reason``;
    ``parameter``: the offending parameter id, answered as MQIACF_PARAMETER_ID)."""

    def __init__(self, reason: int, message: str, parameter: int | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.parameter = parameter


@dataclass(frozen=True)
class Family:
    """An object family: the MQSC object type(s), its name parameter, names list, attrs list."""

    key: str
    name: int
    names: int
    attrs: int
    from_name: int
    to_name: int


FAMILIES = {
    "QUEUE": Family("QUEUE", P.Q_NAME, P.Q_NAMES, P.Q_ATTRS, P.FROM_Q_NAME, P.TO_Q_NAME),
    "PROCESS": Family("PROCESS", P.PROCESS_NAME, P.PROCESS_NAMES, P.PROCESS_ATTRS, P.FROM_PROCESS_NAME,
                      P.TO_PROCESS_NAME),
    "CFSTRUCT": Family("CFSTRUCT", P.CF_STRUC_NAME, P.CF_STRUC_NAMES, P.CF_STRUC_ATTRS, P.FROM_CF_STRUC_NAME,
                       P.TO_CF_STRUC_NAME),
    "TOPIC": Family("TOPIC", P.TOPIC_NAME, P.TOPIC_NAMES, P.TOPIC_ATTRS, P.FROM_TOPIC_NAME, P.TO_TOPIC_NAME),
    "NAMELIST": Family("NAMELIST", P.NAMELIST_NAME, P.NAMELIST_NAMES, P.NAMELIST_ATTRS, P.FROM_NAMELIST_NAME,
                       P.TO_NAMELIST_NAME),
    "CHANNEL": Family("CHANNEL", P.CHANNEL_NAME, P.CHANNEL_NAMES, P.CHANNEL_ATTRS, P.FROM_CHANNEL_NAME,
                      P.TO_CHANNEL_NAME),
}
#: the inquiry parameter that selects objects by type, as the MQSC keyword and attribute it is
#: (Inquire Channel ChannelType -> DISPLAY CHANNEL TYPE(x); Inquire Namelist NamelistType -> NLTYPE(x))
_TYPE_SELECTORS = {"CHANNEL": (P.CHANNEL_TYPE, "TYPE", "CHLTYPE", P.MQCHT_ALL),
                   "NAMELIST": (P.NAMELIST_TYPE, "NLTYPE", "NLTYPE", P.MQNT_ALL)}

#: command -> (action, family)
COMMANDS: dict[int, tuple[str, str]] = {
    P.INQUIRE_Q: ("DISPLAY", "QUEUE"), P.INQUIRE_Q_NAMES: ("NAMES", "QUEUE"), P.CREATE_Q: ("DEFINE", "QUEUE"),
    P.CHANGE_Q: ("ALTER", "QUEUE"), P.COPY_Q: ("COPY", "QUEUE"), P.DELETE_Q: ("DELETE", "QUEUE"),
    P.CLEAR_Q: ("CLEAR", "QUEUE"), P.RESET_Q_STATS: ("RESET", "QUEUE"),
    P.INQUIRE_PROCESS: ("DISPLAY", "PROCESS"), P.INQUIRE_PROCESS_NAMES: ("NAMES", "PROCESS"),
    P.CREATE_PROCESS: ("DEFINE", "PROCESS"), P.CHANGE_PROCESS: ("ALTER", "PROCESS"),
    P.COPY_PROCESS: ("COPY", "PROCESS"), P.DELETE_PROCESS: ("DELETE", "PROCESS"),
    P.INQUIRE_CF_STRUC: ("DISPLAY", "CFSTRUCT"), P.INQUIRE_CF_STRUC_NAMES: ("NAMES", "CFSTRUCT"),
    P.CREATE_CF_STRUC: ("DEFINE", "CFSTRUCT"), P.CHANGE_CF_STRUC: ("ALTER", "CFSTRUCT"),
    P.COPY_CF_STRUC: ("COPY", "CFSTRUCT"), P.DELETE_CF_STRUC: ("DELETE", "CFSTRUCT"),
    P.INQUIRE_TOPIC: ("DISPLAY", "TOPIC"), P.INQUIRE_TOPIC_NAMES: ("NAMES", "TOPIC"),
    P.CREATE_TOPIC: ("DEFINE", "TOPIC"), P.CHANGE_TOPIC: ("ALTER", "TOPIC"), P.COPY_TOPIC: ("COPY", "TOPIC"),
    P.DELETE_TOPIC: ("DELETE", "TOPIC"),
    P.INQUIRE_Q_MGR: ("DISPLAY", "QMGR"), P.CHANGE_Q_MGR: ("ALTER", "QMGR"),
    P.INQUIRE_Q_STATUS: ("QSTATUS", "QSTATUS"), P.INQUIRE_CF_STRUC_STATUS: ("CFSTATUS", "CFSTATUS"),
    P.PING_Q_MGR: ("PING", ""), P.ESCAPE: ("ESCAPE", ""), P.INQUIRE_QSG: ("GROUP", ""),
    P.REFRESH_SECURITY: ("REFRESH", ""),
    P.INQUIRE_NAMELIST: ("DISPLAY", "NAMELIST"), P.INQUIRE_NAMELIST_NAMES: ("NAMES", "NAMELIST"),
    P.CREATE_NAMELIST: ("DEFINE", "NAMELIST"), P.CHANGE_NAMELIST: ("ALTER", "NAMELIST"),
    P.COPY_NAMELIST: ("COPY", "NAMELIST"), P.DELETE_NAMELIST: ("DELETE", "NAMELIST"),
    P.INQUIRE_CHANNEL: ("DISPLAY", "CHANNEL"), P.INQUIRE_CHANNEL_NAMES: ("NAMES", "CHANNEL"),
    P.CREATE_CHANNEL: ("DEFINE", "CHANNEL"), P.CHANGE_CHANNEL: ("ALTER", "CHANNEL"),
    P.COPY_CHANNEL: ("COPY", "CHANNEL"), P.DELETE_CHANNEL: ("DELETE", "CHANNEL"),
    # what needs the channel initiator (there is none: MQRCCF_NO_CHANNEL_INITIATOR)
    P.START_CHANNEL: ("CHINIT", "START CHANNEL"), P.STOP_CHANNEL: ("CHINIT", "STOP CHANNEL"),
    P.PING_CHANNEL: ("CHINIT", "PING CHANNEL"), P.RESET_CHANNEL: ("CHINIT", "RESET CHANNEL"),
    P.RESOLVE_CHANNEL: ("CHINIT", "RESOLVE CHANNEL"), P.INQUIRE_CHANNEL_STATUS: ("CHINIT", "DISPLAY CHSTATUS"),
    P.INQUIRE_CHANNEL_INIT: ("CHINIT", "DISPLAY CHINIT"), P.STOP_CHANNEL_INIT: ("CHINIT", "STOP CHINIT"),
    P.SET_AUTH_REC: ("AUTHREC", "SET"), P.DELETE_AUTH_REC: ("AUTHREC", "DELETE"),
    P.INQUIRE_AUTH_RECS: ("AUTHREC", "DISPLAY"),
    P.INQUIRE_CONNECTION: ("CONN", "CONN"),
}
_OPERATORS = {MQCFOP_LESS: "LT", MQCFOP_EQUAL: "EQ", MQCFOP_GREATER: "GT", MQCFOP_NOT_LESS: "GE",
              MQCFOP_NOT_EQUAL: "NE", MQCFOP_NOT_GREATER: "LE", MQCFOP_LIKE: "LK", MQCFOP_NOT_LIKE: "NL"}
_AUTHS = {1: "ALTUSR", 2: "BROWSE", 3: "CHG", 4: "CLR", 5: "CONNECT", 6: "CRT", 7: "DLT", 8: "DSP", 9: "GET",
          10: "INQ", 11: "PUT", 12: "PASSALL", 13: "PASSID", 14: "SET", 15: "SETALL", 16: "SETID", 17: "CTRL",
          18: "CTRLX", 19: "PUB", 20: "SUB", 21: "RESUME", 22: "SYSTEM", -1: "ALL", -2: "ALLADM", -3: "ALLMQI",
          0: "NONE"}
_COMMAND_PARAMS = {P.QSG_DISP, P.COMMAND_SCOPE, P.REPLACE, P.FORCE, P.PURGE}


@dataclass
class Plan:
    """What to run for one PCF command and how to answer it."""

    command: int
    action: str
    family: str
    mqsc: str = ""
    scope: str = ""
    names_param: int = 0
    extra: list[Parameter] = field(default_factory=list)  # added to every answered item
    needs_type: str = ""  # ALTER/DELETE/CLEAR of a queue named without QType: the name to look up


def quote(value: str) -> str:
    """An MQSC quoted string."""
    return "'" + value.replace("'", "''") + "'"


def _by_id(parameters: list[Parameter]) -> dict[int, Parameter]:
    out: dict[int, Parameter] = {}
    for p in parameters:
        if p.type in (MQCFT_INTEGER_FILTER, MQCFT_STRING_FILTER, MQCFT_BYTE_STRING_FILTER):
            continue
        if p.parameter in out:
            raise RequestError(CFIN_DUPLICATE_PARM, f"parameter {p.parameter} is given twice", p.parameter)
        out[p.parameter] = p
    return out


def _parm_id_error(p: Parameter, what: str) -> RequestError:
    reason = {MQCFT_INTEGER: CFIN_PARM_ID_ERROR, MQCFT_INTEGER64: CFIN_PARM_ID_ERROR,
              MQCFT_INTEGER_LIST: CFIL_PARM_ID_ERROR, MQCFT_STRING_LIST: CFSL_PARM_ID_ERROR}.get(p.type,
                                                                                             CFST_PARM_ID_ERROR)
    return RequestError(reason, f"parameter {p.parameter} is not valid {what}", p.parameter)


def _value_keyword(name: str, p: Parameter) -> str:
    """One attribute of a DEFINE/ALTER as an MQSC keyword."""
    if name in P.FLAGS:
        return P.FLAGS[name][0] if int(p.value) else P.FLAGS[name][1]
    if p.type in (MQCFT_INTEGER, MQCFT_INTEGER64):
        special = {v: k for k, v in P.INT_WORDS.get(name, {}).items()}.get(int(p.value))
        if special is not None:
            return f"{name}({special})"
        word = P.int_to_word(name, int(p.value))
        if word is None and name in P.WORDS:
            raise RequestError(PARM_VALUE_ERROR, f"{p.value} is not a value of {name}", p.parameter)
        return f"{name}({word if word is not None else int(p.value)})"
    if p.type == MQCFT_STRING:
        return f"{name}({quote(str(p.value))})"
    if p.type == MQCFT_STRING_LIST:
        return f"{name}({', '.join(quote(str(v)) for v in p.value)})"
    if p.type == MQCFT_INTEGER_LIST:
        return f"{name}({', '.join(str(v) for v in p.value)})"
    raise _parm_id_error(p, f"for {name}")


def _common(plan: Plan, by: dict[int, Parameter]) -> list[str]:
    """QSGDISP, CMDSCOPE, REPLACE, FORCE and PURGE keywords."""
    out = []
    if P.QSG_DISP in by:
        value = by[P.QSG_DISP].value
        word = next((w for w, n in P.QSGDISPS.items() if n == value), None) \
            if by[P.QSG_DISP].type == MQCFT_INTEGER else None
        if word is None:
            raise RequestError(PARM_VALUE_ERROR, "QSGDisposition is not an MQQSGD_* value", P.QSG_DISP)
        out.append(f"QSGDISP({word})")
    if P.COMMAND_SCOPE in by:
        scope = str(by[P.COMMAND_SCOPE].value).strip()
        if scope:
            plan.scope = scope
            out.append(f"CMDSCOPE({scope})")
    if P.REPLACE in by and int(by[P.REPLACE].value) == P.MQRP_YES:
        out.append("REPLACE")
    if P.FORCE in by and int(by[P.FORCE].value):
        out.append("FORCE")
    if P.PURGE in by and int(by[P.PURGE].value):
        out.append("PURGE")
    return out


def _queue_type(by: dict[int, Parameter], *, required: bool) -> str:
    p = by.get(P.Q_TYPE)
    if p is None:
        if required:
            raise RequestError(PARM_COUNT_TOO_SMALL, "QType is required", P.Q_TYPE)
        return "QUEUE"
    if int(p.value) == P.QUEUE_TYPE_ALL:
        return "QUEUE"
    for word, number in P.QUEUE_TYPES.items():
        if number == int(p.value):
            return word
    raise RequestError(Q_TYPE_ERROR, f"QType {p.value} is not a queue type", P.Q_TYPE)


def _name(by: dict[int, Parameter], pid: int, what: str) -> str:
    p = by.get(pid)
    if p is None or p.type != MQCFT_STRING or not str(p.value).strip():
        raise RequestError(PARM_COUNT_TOO_SMALL, f"{what} is required", pid)
    return str(p.value).strip()


def _filters(family: str, parameters: list[Parameter]) -> list[str]:
    out: list[str] = []
    for p in parameters:
        if p.type not in (MQCFT_INTEGER_FILTER, MQCFT_STRING_FILTER, MQCFT_BYTE_STRING_FILTER):
            continue
        if out:
            raise RequestError(FILTER_ERROR, "only one filter may be given", p.parameter)
        name = P.mqsc_name(family, p.parameter)
        op = _OPERATORS.get(p.operator)
        if name is None or op is None or p.type == MQCFT_BYTE_STRING_FILTER:
            raise RequestError(FILTER_ERROR, f"filter on {p.parameter} with operator {p.operator} is not supported",
                               p.parameter)
        if p.type == MQCFT_INTEGER_FILTER:
            word = P.int_to_word(name, int(p.value), family)
            value = word if word is not None else str(int(p.value))
        else:
            value = quote(str(p.value))
        out.append(f"WHERE({name} {op} {value})")
    return out


def _attrs_asked(family: str, by: dict[int, Parameter], list_param: int) -> list[str]:
    p = by.get(list_param)
    if p is None:
        return []
    values = p.value if isinstance(p.value, list) else [p.value]
    if P.ALL in values:
        return ["ALL"]
    names = []
    for v in values:
        name = P.mqsc_name(family, int(v))
        if name is not None and name not in names:
            names.append(name)
    return names


def plan(command: int, parameters: list[Parameter]) -> Plan:
    """The MQSC command a PCF command stands for; RequestError when it cannot be run."""
    if command not in COMMANDS:
        raise RequestError(CFH_COMMAND_ERROR, f"PCF command {command} is not supported by this command server")
    action, family = COMMANDS[command]
    by = _by_id(parameters)
    p = Plan(command, action, family)
    if action in ("DISPLAY", "NAMES", "DEFINE", "ALTER", "COPY", "DELETE", "CLEAR", "RESET") and family in FAMILIES:
        return _object_plan(p, FAMILIES[family], by, parameters)
    handler = {"QSTATUS": _qstatus_plan, "CFSTATUS": _cfstatus_plan, "PING": _ping_plan, "ESCAPE": _escape_plan,
               "GROUP": _group_plan, "REFRESH": _refresh_plan, "CHINIT": _chinit_plan,
               "AUTHREC": _authrec_plan, "CONN": _conn_plan}.get(action)
    if handler is not None:
        return handler(p, by, parameters)
    # the queue manager
    common = _common(p, by)
    if action == "DISPLAY":
        asked = _attrs_asked("QMGR", by, P.Q_MGR_ATTRS)
        p.mqsc = " ".join(["DISPLAY QMGR", *asked, *common])
        return p
    keywords = [_value_keyword(name, q) for q in parameters
                if q.parameter not in _COMMAND_PARAMS and (name := _known("QMGR", q)) is not None]
    p.mqsc = " ".join(["ALTER QMGR", *keywords, *common])
    return p


def _known(family: str, q: Parameter) -> str | None:
    name = P.mqsc_name(family, q.parameter)
    if name is None:
        raise _parm_id_error(q, f"for this command ({family})")
    return name


def _object_plan(p: Plan, fam: Family, by: dict[int, Parameter], parameters: list[Parameter]) -> Plan:
    common = _common(p, by)
    is_queue = fam.key == "QUEUE"
    if p.action in ("DISPLAY", "NAMES"):
        pattern = _name(by, fam.name, "the object name")
        objtype = _queue_type(by, required=False) if is_queue else fam.key
        typed = f" TYPE({objtype})" if is_queue and objtype != "QUEUE" else _type_selector(fam.key, by)
        if is_queue:
            objtype = "QUEUE"
        if p.action == "NAMES":
            p.names_param = fam.names
            p.mqsc = " ".join([f"DISPLAY {objtype}({pattern}){typed}", *common])
            return p
        filters = _filters(fam.key, parameters)
        # An attribute asked for that is also selected by (TYPE(QLOCAL), QSGDISP(QMGR)) is shown
        # all the same: named once, as MQSC refuses a keyword given twice (CSQ9000E).
        selecting = {kw.split("(", 1)[0] for kw in (typed.strip(), *filters, *common) if "(" in kw}
        asked = [a for a in _attrs_asked(fam.key, by, fam.attrs) if a not in selecting]
        p.mqsc = " ".join([f"DISPLAY {objtype}({pattern}){typed}", *asked, *filters, *common])
        return p
    skip = {fam.name, fam.from_name, fam.to_name, P.Q_TYPE, *_COMMAND_PARAMS}
    keywords = [_value_keyword(name, q) for q in parameters
                if q.parameter not in skip and (name := _known(fam.key, q)) is not None]
    if p.action == "COPY":
        source = _name(by, fam.from_name, "FromName")
        target = _name(by, fam.to_name, "ToName")
        objtype = _queue_type(by, required=True) if is_queue else fam.key
        p.mqsc = " ".join([f"DEFINE {objtype}({target}) LIKE({source})", *keywords, *common])
        return p
    name = _name(by, fam.name, "the object name")
    if p.action == "DEFINE":
        objtype = _queue_type(by, required=True) if is_queue else fam.key
        p.mqsc = " ".join([f"DEFINE {objtype}({name})", *keywords, *common])
        return p
    if p.action in ("CLEAR", "RESET"):
        verb = "CLEAR QLOCAL" if p.action == "CLEAR" else "RESET QSTATS"
        p.mqsc = " ".join([f"{verb}({name})", *common])
        return p
    objtype = _queue_type(by, required=False) if is_queue else fam.key
    if objtype == "QUEUE":
        p.needs_type = name  # the server looks the type up, then fills {TYPE}
        objtype = "{TYPE}"
    p.mqsc = " ".join([f"{p.action} {objtype}({name})", *keywords, *common])
    return p


def _type_selector(family: str, by: dict[int, Parameter]) -> str:
    """An inquiry's ChannelType / NamelistType as the MQSC filter keyword ("" for all)."""
    if family not in _TYPE_SELECTORS or _TYPE_SELECTORS[family][0] not in by:
        return ""
    pid, keyword, attr, every = _TYPE_SELECTORS[family]
    value = int(by[pid].value)
    if value == every:
        return ""
    word = P.int_to_word(attr, value)
    if word is None:
        raise RequestError(PARM_VALUE_ERROR, f"{value} is not a value of {attr}", pid)
    return f" {keyword}({word})"


def _qstatus_plan(p: Plan, by: dict[int, Parameter], parameters: list[Parameter]) -> Plan:
    name = _name(by, P.Q_NAME, "QName")
    kind = int(by[P.Q_STATUS_TYPE].value) if P.Q_STATUS_TYPE in by else P.Q_STATUS
    if kind not in (P.Q_STATUS, P.Q_HANDLE):
        raise RequestError(PARM_VALUE_ERROR, "StatusType is MQIACF_Q_STATUS or MQIACF_Q_HANDLE", P.Q_STATUS_TYPE)
    asked = _attrs_asked("QSTATUS", by, P.Q_STATUS_ATTRS)
    typed = "QUEUE" if kind == P.Q_STATUS else "HANDLE"
    p.mqsc = " ".join([f"DISPLAY QSTATUS({name}) TYPE({typed})", *[a for a in asked if a not in ("TYPE",)],
                       *_filters("QSTATUS", parameters), *_common(p, by)])
    return p


def _cfstatus_plan(p: Plan, by: dict[int, Parameter], parameters: list[Parameter]) -> Plan:
    name = _name(by, P.CF_STRUC_NAME, "CFStrucName")
    p.mqsc = " ".join([f"DISPLAY CFSTATUS({name})", *_common(p, by)])
    return p


def _ping_plan(p: Plan, by: dict[int, Parameter], parameters: list[Parameter]) -> Plan:
    return p  # answered at once: the command server is running


def _escape_plan(p: Plan, by: dict[int, Parameter], parameters: list[Parameter]) -> Plan:
    kind = by.get(P.ESCAPE_TYPE)
    if kind is None or int(kind.value) != P.MQET_MQSC:
        raise RequestError(ESCAPE_TYPE_ERROR, "EscapeType must be MQET_MQSC", P.ESCAPE_TYPE)
    p.mqsc = _name(by, P.ESCAPE_TEXT, "EscapeText")
    return p


def _group_plan(p: Plan, by: dict[int, Parameter], parameters: list[Parameter]) -> Plan:
    p.mqsc = " ".join(["DISPLAY GROUP", *_common(p, by)])
    return p


def _refresh_plan(p: Plan, by: dict[int, Parameter], parameters: list[Parameter]) -> Plan:
    p.mqsc = " ".join(["REFRESH SECURITY", *_common(p, by)])
    return p


def _chinit_plan(p: Plan, by: dict[int, Parameter], parameters: list[Parameter]) -> Plan:
    """A command that needs the channel initiator: run as its MQSC form, which answers
    MQRCCF_NO_CHANNEL_INITIATOR (there is none here)."""
    verb = p.family
    p.family = "CHANNEL"
    name = str(by[P.CHANNEL_NAME].value).strip() if P.CHANNEL_NAME in by else ""
    if not name and verb.endswith("CHANNEL"):
        raise RequestError(PARM_COUNT_TOO_SMALL, "ChannelName is required", P.CHANNEL_NAME)
    target = f"({name})" if name else ("(*)" if verb.endswith("CHSTATUS") else "")
    p.mqsc = " ".join([f"{verb}{target}", *_common(p, by)])
    return p


def _conn_plan(p: Plan, by: dict[int, Parameter], parameters: list[Parameter]) -> Plan:
    """Inquire Connection: DISPLAY CONN. The connection id is the emulator's connection handle
    (its text as the MQCFBS bytes); an empty GenericConnectionId asks for every connection."""
    if P.CONNECTION_ID in by:
        raw = by[P.CONNECTION_ID].value
    elif P.GENERIC_CONNECTION_ID in by:
        raw = by[P.GENERIC_CONNECTION_ID].value
    else:
        raise RequestError(PARM_COUNT_TOO_SMALL, "ConnectionId or GenericConnectionId is required",
                           P.GENERIC_CONNECTION_ID)
    name = raw.decode("utf-8", errors="replace").strip(" \0") if isinstance(raw, bytes) else str(raw).strip()
    kind = int(by[P.CONN_INFO_TYPE].value) if P.CONN_INFO_TYPE in by else P.CONN_INFO_CONN
    typed = {P.CONN_INFO_CONN: "CONN", P.CONN_INFO_HANDLE: "HANDLE", P.CONN_INFO_ALL: "ALL"}.get(kind)
    if typed is None:
        raise RequestError(PARM_VALUE_ERROR, "ConnInfoType is not an MQIACF_CONN_INFO_* value", P.CONN_INFO_TYPE)
    p.mqsc = " ".join([f"DISPLAY CONN({name or '*'}) TYPE({typed})", *_common(p, by)])
    return p


def _authrec_plan(p: Plan, by: dict[int, Parameter], parameters: list[Parameter]) -> Plan:
    verb = p.family
    p.family = "AUTHREC"
    kw = []
    if P.AUTH_PROFILE_NAME in by:
        kw.append(f"PROFILE({quote(str(by[P.AUTH_PROFILE_NAME].value))})")
    if P.OBJECT_TYPE in by:
        objtype = {v: k for k, v in P.OBJTYPES.items()}.get(int(by[P.OBJECT_TYPE].value))
        if objtype is None:
            raise RequestError(PARM_VALUE_ERROR, "ObjectType is not an MQOT_* value", P.OBJECT_TYPE)
        kw.append(f"OBJTYPE({objtype})")
    for pid, word in ((P.PRINCIPAL_ENTITY_NAMES, "PRINCIPAL"), (P.GROUP_ENTITY_NAMES, "GROUP")):
        if pid in by:
            values = by[pid].value if isinstance(by[pid].value, list) else [by[pid].value]
            kw.append(f"{word}({', '.join(quote(str(v)) for v in values)})")
    for pid, word in ((P.AUTH_ADD_AUTHS, "AUTHADD"), (P.AUTH_REMOVE_AUTHS, "AUTHRMV")):
        if pid in by:
            values = by[pid].value if isinstance(by[pid].value, list) else [by[pid].value]
            kw.append(f"{word}({', '.join(_AUTHS.get(int(v), str(v)) for v in values)})")
    p.mqsc = " ".join([f"{verb} AUTHREC", *kw, *_common(p, by)])
    return p


# ---- answers ---------------------------------------------------------------------------------


def _is_string_id(pid: int) -> bool:
    return 2000 <= pid < 4000


def _is_bytes_id(pid: int) -> bool:
    return 7000 <= pid < 8000


def row_parameters(family: str, row: dict[str, Any]) -> list[Parameter]:
    """One MQSC result object as PCF parameters (attributes without a PCF id are left out)."""
    table = P.ATTRS.get(family, {})
    out: list[Parameter] = []
    for key, value in row.items():
        pid = table.get(key)
        if pid is None:
            continue
        if _is_string_id(pid):
            if isinstance(value, list):  # NAMES of a namelist: MQCFSL
                out.append(Parameter(MQCFT_STRING_LIST, pid, [str(v) for v in value]))
                continue
            out.append(Parameter(MQCFT_STRING, pid, "" if value is None else str(value)))
            continue
        if _is_bytes_id(pid):
            out.append(Parameter(MQCFT_BYTE_STRING, pid, str(value).encode("utf-8")))
            if pid == P.CONNECTION_ID:  # the connection tag identifies it too
                out.append(Parameter(MQCFT_BYTE_STRING, P.CONN_TAG, str(value).encode("utf-8")))
            continue
        number = _as_int(key, value, family)
        if number is not None:
            out.append(Parameter(MQCFT_INTEGER, pid, number))
    return out


def _as_int(key: str, value: Any, family: str) -> int | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    text = str(value).strip()
    if key == "QSGDISP":
        return P.QSGDISPS.get(text.upper())
    if key == "TYPE" and family == "QUEUE":
        return P.QUEUE_TYPES.get(text.upper())
    if key in P.FLAGS:
        return int(text.upper() == P.FLAGS[key][0])
    if text.upper() in P.INT_WORDS.get(key, {}):
        return P.INT_WORDS[key][text.upper()]
    word = P.word_to_int(key, text, family)
    if word is not None:
        return word
    if text.lstrip("-").isdigit():
        return int(text)
    if text == "":
        return -1  # an integer IBM shows blank (MSGAGE with monitoring off): MQMON_NOT_AVAILABLE
    return None


def names_parameters(p: Plan, objects: list[dict[str, Any]]) -> list[Parameter]:
    """An INQUIRE ... NAMES answer: the names, and on z/OS the disposition of each."""
    names = [str(o.get(p.family, "")) for o in objects]
    out = [Parameter(MQCFT_STRING_LIST, p.names_param, names)]
    if p.family in ("QUEUE", "PROCESS", "TOPIC", "NAMELIST", "CHANNEL"):
        out.append(Parameter(MQCFT_INTEGER_LIST, P.QSG_DISPS, [P.QSGDISPS.get(str(o.get("QSGDISP", "QMGR")), 0)
                                                               for o in objects]))
    return out


def items(p: Plan, objects: list[dict[str, Any]]) -> list[list[Parameter]]:
    """The answered items of a command, one parameter list per object (one for a names list)."""
    if p.names_param:
        return [names_parameters(p, objects)]
    family = p.family if p.family in P.ATTRS else ""
    out = []
    for obj in objects:
        params = row_parameters(family, obj) if family else []
        if p.action == "QSTATUS" and not any(x.parameter == P.Q_STATUS_TYPE for x in params):
            params.append(Parameter(MQCFT_INTEGER, P.Q_STATUS_TYPE, P.Q_STATUS))
        out.append(params)
    return out


def escape_items(messages: list[str]) -> list[list[Parameter]]:
    """MQCMD_ESCAPE's answer: the MQSC response text."""
    return [[Parameter(MQCFT_INTEGER, P.ESCAPE_TYPE, P.MQET_MQSC), Parameter(MQCFT_STRING, P.ESCAPE_TEXT, line)]
            for line in messages]

