"""MQINQ and MQSET selectors: IBM's MQIA_*/MQCA_* selectors (by name or number) and MQSC
attribute names, resolved to the MQSC attribute an object's display holds, with IBM's reasons.

IBM MQ reference (MQINQ, MQSET; reason codes 2065, 2067, 2068):
* 2067 MQRC_SELECTOR_ERROR (failed): the selector is not supported or out of range, is not
  applicable to the type of object inquired on (a queue-manager selector on a queue, a queue
  selector on the queue manager), or, for MQSET, is for an attribute that cannot be set;
* 2068 MQRC_SELECTOR_NOT_FOR_TYPE (warning, MQINQ only): a queue selector not applicable to the
  type of *queue* (e.g. CURDEPTH of an alias queue); the call completes, integer attributes
  answer MQIAV_NOT_APPLICABLE (-1) and character attributes a string of asterisks;
* 2065 MQRC_SELECTOR_COUNT_ERROR: more than 256 selectors.

Pure: no I/O; the MQI service (app/qmgr/mqi/attributes.py) applies it to what it displays.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from app.core import attributes
from app.core.errors import MQError
from app.core.reasons import MQRC

#: Most selectors one MQINQ/MQSET takes (IBM: SelectorCount 0 through 256).
MAX_SELECTORS = 256
#: MQIAV_NOT_APPLICABLE: what MQINQ answers for an integer attribute the queue type lacks.
NOT_APPLICABLE = -1

QUEUE = "Q"
QMGR = "QMGR"
NAMELIST = "NAMELIST"


@dataclass(frozen=True)
class Selector:
    """One MQINQ/MQSET selector: IBM's name and number, the MQSC attribute, whether it is a
    character attribute (its length) or an integer one (None), and the object kinds it is for."""

    ibm: str
    number: int
    mqsc: str
    length: int | None
    kinds: frozenset[str]


def _s(ibm: str, number: int, mqsc: str, length: int | None = None, *kinds: str) -> Selector:
    return Selector(ibm, number, mqsc, length, frozenset(kinds or (QUEUE,)))


# Values are IBM's (cmqc.h). Queue selectors first, then the queue manager's.
SELECTORS: tuple[Selector, ...] = (
    _s("MQIA_CURRENT_Q_DEPTH", 3, "CURDEPTH"),
    _s("MQIA_DEF_INPUT_OPEN_OPTION", 4, "DEFSOPT"),
    _s("MQIA_DEF_PERSISTENCE", 5, "DEFPSIST"),
    _s("MQIA_DEF_PRIORITY", 6, "DEFPRTY"),
    _s("MQIA_DEFINITION_TYPE", 7, "DEFTYPE"),
    _s("MQIA_HARDEN_GET_BACKOUT", 8, "HARDENBO"),
    _s("MQIA_INHIBIT_GET", 9, "GET"),
    _s("MQIA_INHIBIT_PUT", 10, "PUT"),
    _s("MQIA_USAGE", 12, "USAGE"),
    _s("MQIA_MAX_MSG_LENGTH", 13, "MAXMSGL", None, QUEUE, QMGR),
    _s("MQIA_MAX_Q_DEPTH", 15, "MAXDEPTH"),
    _s("MQIA_MSG_DELIVERY_SEQUENCE", 16, "MSGDLVSQ"),
    _s("MQIA_OPEN_INPUT_COUNT", 17, "IPPROCS"),
    _s("MQIA_OPEN_OUTPUT_COUNT", 18, "OPPROCS"),
    _s("MQIA_Q_TYPE", 20, "TYPE"),
    _s("MQIA_RETENTION_INTERVAL", 21, "RETINTVL"),
    _s("MQIA_BACKOUT_THRESHOLD", 22, "BOTHRESH"),
    _s("MQIA_SHAREABILITY", 23, "SHARE"),
    _s("MQIA_TRIGGER_CONTROL", 24, "TRIGGER"),
    _s("MQIA_TRIGGER_MSG_PRIORITY", 26, "TRIGMPRI"),
    _s("MQIA_TRIGGER_TYPE", 28, "TRIGTYPE"),
    _s("MQIA_TRIGGER_DEPTH", 29, "TRIGDPTH"),
    _s("MQIA_INDEX_TYPE", 57, "INDXTYPE"),
    _s("MQIA_QSG_DISP", 63, "QSGDISP"),
    _s("MQIA_DEF_PUT_RESPONSE_TYPE", 184, "DEFPRESP"),
    _s("MQCA_BASE_Q_NAME", 2002, "TARGET", 48),
    _s("MQCA_INITIATION_Q_NAME", 2008, "INITQ", 48),
    _s("MQCA_PROCESS_NAME", 2012, "PROCESS", 48),
    _s("MQCA_Q_DESC", 2013, "DESCR", 64),
    _s("MQCA_Q_NAME", 2016, "QUEUE", 48),
    _s("MQCA_REMOTE_Q_MGR_NAME", 2017, "RQMNAME", 48),
    _s("MQCA_REMOTE_Q_NAME", 2018, "RNAME", 48),
    _s("MQCA_BACKOUT_REQ_Q_NAME", 2019, "BOQNAME", 48),
    _s("MQCA_STORAGE_CLASS", 2022, "STGCLASS", 8),
    _s("MQCA_TRIGGER_DATA", 2023, "TRIGDATA", 64),
    _s("MQCA_XMIT_Q_NAME", 2024, "XMITQ", 48),
    _s("MQCA_CF_STRUC_NAME", 2039, "CFSTRUCT", 12),
    # the queue manager (MQOPEN with ObjectType MQOT_Q_MGR)
    _s("MQIA_CODED_CHAR_SET_ID", 2, "CCSID", None, QMGR),
    _s("MQIA_MAX_HANDLES", 11, "MAXHANDS", None, QMGR),
    _s("MQIA_MAX_PRIORITY", 14, "MAXPRTY", None, QMGR),
    _s("MQIA_TRIGGER_INTERVAL", 25, "TRIGINT", None, QMGR),
    _s("MQIA_SYNCPOINT", 30, "SYNCPT", None, QMGR),
    _s("MQIA_COMMAND_LEVEL", 31, "CMDLEVEL", None, QMGR),
    _s("MQIA_PLATFORM", 32, "PLATFORM", None, QMGR),
    _s("MQIA_MAX_UNCOMMITTED_MSGS", 33, "MAXUMSGS", None, QMGR),
    _s("MQIA_EXPIRY_INTERVAL", 39, "EXPRYINT", None, QMGR),
    _s("MQIA_AUTHORITY_EVENT", 47, "AUTHOREV", None, QMGR),
    _s("MQIA_INHIBIT_EVENT", 48, "INHIBTEV", None, QMGR),
    _s("MQIA_LOCAL_EVENT", 49, "LOCALEV", None, QMGR),
    _s("MQIA_REMOTE_EVENT", 50, "REMOTEEV", None, QMGR),
    _s("MQIA_CONFIGURATION_EVENT", 51, "CONFIGEV", None, QMGR),
    _s("MQIA_START_STOP_EVENT", 52, "STRSTPEV", None, QMGR),
    _s("MQIA_PERFORMANCE_EVENT", 53, "PERFMEV", None, QMGR),
    _s("MQIA_INTRA_GROUP_QUEUING", 64, "IGQ", None, QMGR),
    _s("MQCA_COMMAND_INPUT_Q_NAME", 2003, "COMMANDQ", 48, QMGR),
    _s("MQCA_DEAD_LETTER_Q_NAME", 2006, "DEADQ", 48, QMGR),
    _s("MQCA_Q_MGR_DESC", 2014, "DESCR", 64, QMGR),
    _s("MQCA_Q_MGR_NAME", 2015, "QMNAME", 48, QMGR),
    _s("MQCA_DEF_XMIT_Q_NAME", 2025, "DEFXMITQ", 48, QMGR),
    _s("MQCA_QSG_NAME", 2040, "QSGNAME", 4, QMGR),
    # a namelist (MQOT_NAMELIST): IBM's MQINQ selectors for it
    _s("MQCA_NAMELIST_NAME", 2010, "NAMELIST", 48, NAMELIST),
    _s("MQCA_NAMELIST_DESC", 2009, "DESCR", 64, NAMELIST),
    _s("MQCA_NAMES", 2020, "NAMES", 48, NAMELIST),
    _s("MQIA_NAME_COUNT", 19, "NAMCOUNT", None, NAMELIST),
    _s("MQIA_NAMELIST_TYPE", 72, "NLTYPE", None, NAMELIST),
    _s("MQCA_ALTERATION_DATE", 2027, "ALTDATE", 12, NAMELIST),
    _s("MQCA_ALTERATION_TIME", 2028, "ALTTIME", 8, NAMELIST),
)

#: Queue attributes z/OS has but MQINQ cannot inquire (IBM's queue attribute pages: "This
#: attribute is supported on z/OS, but the MQINQ call cannot be used to determine its value"):
#: the depth and service-interval event switches and their limits. By IBM name, number or MQSC
#: name they answer 2067; DISPLAY QLOCAL shows them.
NOT_INQUIRABLE_ON_ZOS: tuple[Selector, ...] = (
    _s("MQIA_Q_DEPTH_HIGH_LIMIT", 40, "QDEPTHHI"),
    _s("MQIA_Q_DEPTH_LOW_LIMIT", 41, "QDEPTHLO"),
    _s("MQIA_Q_DEPTH_MAX_EVENT", 42, "QDPMAXEV"),
    _s("MQIA_Q_DEPTH_HIGH_EVENT", 43, "QDPHIEV"),
    _s("MQIA_Q_DEPTH_LOW_EVENT", 44, "QDPLOEV"),
    _s("MQIA_Q_SERVICE_INTERVAL_EVENT", 46, "QSVCIEV"),
    _s("MQIA_Q_SERVICE_INTERVAL", 54, "QSVCINT"),
)
_NOT_INQUIRABLE = {key: sel for sel in NOT_INQUIRABLE_ON_ZOS for key in (sel.ibm, str(sel.number), sel.mqsc)}
_NOT_INQUIRABLE_MQSC = frozenset(sel.mqsc for sel in NOT_INQUIRABLE_ON_ZOS)

_BY_IBM = {s.ibm: s for s in SELECTORS}
_BY_NUMBER: dict[int, list[Selector]] = {}
for _sel in SELECTORS:
    _BY_NUMBER.setdefault(_sel.number, []).append(_sel)
_BY_MQSC: dict[tuple[str, str], Selector] = {(k, s.mqsc): s for s in SELECTORS for k in s.kinds}

# MQSC names a queue's or the queue manager's display holds besides the catalogue's.
_QUEUE_NAMES = frozenset({"QUEUE", "TYPE", "QSGDISP", "CURDEPTH", "IPPROCS", "OPPROCS", "ALTDATE", "ALTTIME"}
                         | {n for t in attributes.QUEUE_TYPES for n in attributes.specs(t)})
_QMGR_NAMES = frozenset({"QMNAME", "QSGNAME", "CMDLEVEL", "SYNCPT"} | set(attributes.specs("QMGR")))
_NAMELIST_NAMES = frozenset({"NAMELIST", "QSGDISP", "NAMCOUNT", "ALTDATE", "ALTTIME"}
                            | set(attributes.specs("NAMELIST")))
_NAMES_OF = {QMGR: _QMGR_NAMES, NAMELIST: _NAMELIST_NAMES, QUEUE: _QUEUE_NAMES}

#: MQSET: the selectors an application may set, with the reason a bad value of each gives
#: (IBM's MQSET reason codes).
SETTABLE: dict[str, int] = {
    "GET": MQRC.INHIBIT_VALUE_ERROR, "PUT": MQRC.INHIBIT_VALUE_ERROR,
    "TRIGGER": MQRC.TRIGGER_CONTROL_ERROR, "TRIGTYPE": MQRC.TRIGGER_TYPE_ERROR,
    "TRIGDPTH": MQRC.TRIGGER_DEPTH_ERROR, "TRIGMPRI": MQRC.TRIGGER_MSG_PRIORITY_ERR,
    "TRIGDATA": MQRC.CHAR_ATTR_LENGTH_ERROR,
}


def _kind(objtype: str) -> str:
    return objtype if objtype in (QMGR, NAMELIST) else QUEUE


def selector_list(raw: str | Iterable[Any]) -> list[str]:
    """The selectors of a request: a comma-separated string or a list; 2065 past 256."""
    items = [p.strip() for p in raw.split(",")] if isinstance(raw, str) else [str(p).strip() for p in raw]
    items = [p for p in items if p]
    if len(items) > MAX_SELECTORS:
        raise MQError(MQRC.SELECTOR_COUNT_ERROR, f"{len(items)} selectors: at most {MAX_SELECTORS} may be given")
    return items


def resolve(token: Any, objtype: str) -> tuple[str, int | None]:
    """A selector (MQSC name, MQIA_/MQCA_ name or number) for an object of ``objtype`` (a
    queue type or QMGR): its MQSC attribute name and character length (None: integer).
    2067 for a selector not supported or not for this kind of object."""
    kind = _kind(objtype)
    text = str(token).strip().upper()
    zos_only = _NOT_INQUIRABLE.get(text)
    if zos_only is not None and kind == QUEUE:
        raise MQError(MQRC.SELECTOR_ERROR, f"{zos_only.ibm} ({zos_only.mqsc}) is supported on z/OS but cannot "
                                           f"be inquired by MQINQ; DISPLAY QLOCAL shows it")
    if text.lstrip("-").isdigit():
        found = [s for s in _BY_NUMBER.get(int(text), []) if kind in s.kinds]
        if not found:
            raise MQError(MQRC.SELECTOR_ERROR, f"selector {text} is not a {_what(kind)} selector here")
        return found[0].mqsc, found[0].length
    if text.startswith(("MQIA_", "MQCA_")):
        sel = _BY_IBM.get(text)
        if sel is None or kind not in sel.kinds:
            raise MQError(MQRC.SELECTOR_ERROR, f"selector {text} is not a {_what(kind)} selector here")
        return sel.mqsc, sel.length
    if text not in _NAMES_OF[kind]:
        raise MQError(MQRC.SELECTOR_ERROR, f"{text} is not an attribute of a {_what(kind)}")
    sel = _BY_MQSC.get((kind, text))
    if sel is not None:
        return text, sel.length
    return text, _catalogue_length(text, kind)


def _catalogue_length(name: str, kind: str) -> int | None:
    types = (kind,) if kind in (QMGR, NAMELIST) else attributes.QUEUE_TYPES
    for objtype in types:
        spec = attributes.specs(objtype).get(name)
        if spec is not None:
            return spec.max_len if spec.kind in ("str", "list") else None
    return 48 if name in ("QUEUE", "QMNAME") else None


def _what(kind: str) -> str:
    return {QMGR: "queue manager", NAMELIST: "namelist"}.get(kind, "queue")


def inquirable(shown: dict[str, Any]) -> dict[str, Any]:
    """Every attribute MQINQ answers of a queue (no selectors given): its display less those
    z/OS's MQINQ cannot inquire (``NOT_INQUIRABLE_ON_ZOS``)."""
    return {name: value for name, value in shown.items() if name not in _NOT_INQUIRABLE_MQSC}


def select(shown: dict[str, Any], tokens: Iterable[Any], objtype: str) -> tuple[dict[str, Any], list[str]]:
    """MQINQ by selector of an object whose attributes are ``shown`` (its display): the asked
    attributes by MQSC name, and those not applicable to this queue type (2068: integers
    answer -1, character attributes asterisks)."""
    out: dict[str, Any] = {}
    missing: list[str] = []
    for token in tokens:
        name, length = resolve(token, objtype)
        if name in shown:
            out[name] = shown[name]
        else:
            out[name] = NOT_APPLICABLE if length is None else "*" * length
            missing.append(name)
    return out, missing


def settable(token: Any, objtype: str) -> str:
    """The MQSC name of an MQSET selector; 2067 for one that cannot be set (or is unknown)."""
    name, _ = resolve(token, objtype)
    if name not in SETTABLE:
        raise MQError(MQRC.SELECTOR_ERROR, f"{name} cannot be set by MQSET (allowed: {', '.join(sorted(SETTABLE))})")
    return name


_IBM_VALUES: dict[str, dict[int, str]] = {
    # MQQA_GET_ALLOWED 0 / MQQA_GET_INHIBITED 1, the same for PUT; MQTT_* trigger types
    "GET": {0: "ENABLED", 1: "DISABLED"}, "PUT": {0: "ENABLED", 1: "DISABLED"},
    "TRIGTYPE": {0: "NONE", 1: "FIRST", 2: "EVERY", 3: "DEPTH"},
}


#: IBM's constants by name (cmqc.h), for the attribute each is a value of: MQSET takes
#: ``"MQQA_PUT_INHIBITED"`` as it takes 1 (docs/api.md §7).
_CONSTANTS: dict[str, dict[str, int]] = {
    "GET": {"MQQA_GET_ALLOWED": 0, "MQQA_GET_INHIBITED": 1},
    "PUT": {"MQQA_PUT_ALLOWED": 0, "MQQA_PUT_INHIBITED": 1},
    "TRIGGER": {"MQTC_OFF": 0, "MQTC_ON": 1},
    "TRIGTYPE": {"MQTT_NONE": 0, "MQTT_FIRST": 1, "MQTT_EVERY": 2, "MQTT_DEPTH": 3},
}


def set_keyword(name: str, value: Any) -> tuple[str, str | None]:
    """One MQSET change as the MQSC keyword the workflow applies; IBM's reason for a bad value.
    Values are MQSC words, or IBM's constants (MQQA_*, MQTC_*, MQTT_*) by value or by name; a
    constant of another attribute (MQQA_PUT_INHIBITED for GET) is a bad value."""
    reason = SETTABLE[name]
    if isinstance(value, str) and value.strip().upper().startswith(("MQQA_", "MQTC_", "MQTT_")):
        constant = value.strip().upper()
        if constant not in _CONSTANTS.get(name, {}):
            raise MQError(reason, f"{constant} is not a value of {name}")
        value = _CONSTANTS[name][constant]
    if name == "TRIGGER":
        if isinstance(value, bool) or value in (0, 1):  # MQTC_OFF 0, MQTC_ON 1
            return ("TRIGGER" if value else "NOTRIGGER"), None
        if isinstance(value, str) and value.upper() in ("TRIGGER", "NOTRIGGER"):
            return value.upper(), None
        raise MQError(reason, "TRIGGER takes true or false (MQTC_ON 1, MQTC_OFF 0)")
    if isinstance(value, bool):
        raise MQError(reason, f"{name} does not take true/false")
    if name in _IBM_VALUES and isinstance(value, int):
        if value not in _IBM_VALUES[name]:
            raise MQError(reason, f"{value} is not a value of {name}")
        return name, _IBM_VALUES[name][value]
    if name == "TRIGDATA":
        if not isinstance(value, str) or len(value.rstrip(" ")) > 64:
            raise MQError(reason, "TRIGDATA is a string of at most 64 characters")
        return name, value
    if not isinstance(value, (str, int)):
        raise MQError(reason, f"{name} takes a string or an integer")
    return name, str(value)
