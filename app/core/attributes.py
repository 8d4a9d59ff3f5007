"""Catalogue of MQSC object attributes, with IBM MQ for z/OS defaults and validation rules.

One table of :class:`AttrSpec` per object type (QLOCAL, QALIAS, PROCESS, CFSTRUCT, QMGR, TOPIC,
NAMELIST, CHANNEL) lists
every keyword that the z/OS forms of DEFINE/ALTER accept for that type, with the default that
IBM documents for z/OS and the range, length or words it allows.  Keywords IBM documents as
"not valid on z/OS" (for example STATQ, NPMCLASS, DISTL, SCOPE, IMGRCOVQ, MAXFSIZE on queues;
ACCTMQI, CHAD, STATQ on the queue manager) are left out, so using one is an unknown keyword.
The MQSC executor (DEFINE/ALTER/DISPLAY) and MQSET use the catalogue through the functions
below.

Conventions
-----------
* Values are stored as Python values: ``int`` for integer attributes, ``bool`` for flag
  attributes (``TRIGGER``/``NOTRIGGER``), ``str`` for string and enumerated attributes, a
  ``list`` of ``str`` for a list of names (a namelist's ``NAMES``).
* Enumerated values are stored upper case.  String values keep their case; trailing blanks are
  dropped, because MQ character attributes are blank-padded fields in which trailing blanks
  are not significant.  A blank value (IBM's ``' '``) is therefore stored as ``""``.
* Integer attributes that IBM also lets you set with a word keep the word in
  :attr:`AttrSpec.special` (``EXPRYINT(OFF)`` is 0, ``CAPEXPRY(NOLIMIT)`` is -1);
  :func:`display_value` turns the number back into the word.
* ``APPLTYPE`` is an enumeration that also accepts an integer application type (IBM allows
  0-65535 for system types and 65536-999999999 for user types): an enum spec with ``min`` and
  ``max`` set accepts a decimal integer in that range and stores it as its decimal string.
* The dict returned by :func:`specs` is in DISPLAY order, which here is alphabetical by
  keyword, as IBM lists the parameters in the DISPLAY reference.

What is not in the catalogue
----------------------------
``QSGDISP`` and the command keywords (``REPLACE``/``NOREPLACE``, ``LIKE``, ``FORCE``,
``PURGE``/``NOPURGE``, ``CMDSCOPE``, ``ALL``, ``TYPE``, ``WHERE``) belong to the executor, which
removes them before calling :func:`apply_keywords`; given to :func:`apply_keywords` they are
unknown keywords (``MQRCCF_PARM_SYNTAX_ERROR``).  Names and dates that belong to an object
instance (``QMNAME``, ``QSGNAME``, ``QMID``, ``ALTDATE``, ``CRDATE``, ``CURDEPTH`` ...) are also
the executor's.

Reasons
-------
* Unknown keyword for the object type, a read-only attribute given to DEFINE/ALTER, or one
  attribute given twice in one command (``TRIGGER NOTRIGGER``, ``TARGET(A) TARGQ(B)``):
  ``MQRCCF_PARM_SYNTAX_ERROR`` (3097).
* A value of the wrong kind (a value on a flag, no value on an integer/string/enumeration), not
  an integer, out of range, too long, or not one of the allowed words:
  ``MQRCCF_ATTR_VALUE_ERROR`` (4005).

Every message names the keyword and says what is allowed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from app.core.errors import MQError, echo
from app.core.reasons import MQRC

__all__ = [
    "AttrSpec",
    "DYNAMIC_DEFTYPES",
    "HASHTAG_RE",
    "LIST_KEYWORDS",
    "MQSET_ATTRS",
    "OBJECT_TYPES",
    "QUEUE_TYPES",
    "apply_keywords",
    "defaults",
    "display_value",
    "specs",
    "validate_cross",
]

OBJECT_TYPES = ("QLOCAL", "QALIAS", "QREMOTE", "QMODEL", "PROCESS", "CFSTRUCT", "QMGR", "TOPIC", "NAMELIST",
                "CHANNEL")
QUEUE_TYPES = ("QLOCAL", "QALIAS", "QREMOTE", "QMODEL")

# DefinitionType (MQQDT_*) by its MQSC word. A model queue's DEFTYPE says what MQOPEN of it
# creates (TEMPDYN is IBM's default); a local queue shows how it came to be, read-only:
# PREDEFINED by DEFINE, or one of the dynamic types when an MQOPEN of a model created it.
DYNAMIC_DEFTYPES = ("TEMPDYN", "PERMDYN", "SHAREDYN")

# Attributes an application may change with MQSET (InhibitGet, InhibitPut and the trigger
# attributes), by their MQSC names.
MQSET_ATTRS: frozenset[str] = frozenset(
    {"GET", "PUT", "TRIGGER", "TRIGTYPE", "TRIGDPTH", "TRIGMPRI", "TRIGDATA"}
)

KINDS = ("int", "str", "enum", "flag", "list")


@dataclass(frozen=True)
class AttrSpec:
    """One MQSC attribute of one object type."""

    name: str                       # the MQSC keyword as DISPLAY shows it, e.g. "MAXDEPTH", "TRIGGER"
    kind: str                       # "int", "str", "enum", "flag", "list"
    default: object                 # int for int, str for str/enum, bool for flag, tuple for list
    min: int | None = None
    max: int | None = None
    max_len: int | None = None      # for str, and each item of a list (max: how many items)
    choices: tuple[str, ...] = ()   # for enum (upper-case words)
    negative: str | None = None     # for flag: the keyword that sets it False ("NOTRIGGER")
    synonyms: tuple[str, ...] = ()  # other keywords accepted for it ("TARGQ" for "TARGET")
    settable: bool = True           # False for read-only attributes that DEFINE/ALTER refuse
    mqset: bool = False             # True for the attributes MQSET may change
    special: dict[str, int] = field(default_factory=dict)  # words allowed for an int ("OFF": 0)


# --------------------------------------------------------------------------------------------
# Small constructors that keep the tables readable.
# --------------------------------------------------------------------------------------------

def _int(name: str, default: int, lo: int, hi: int, **kw: Any) -> AttrSpec:
    return AttrSpec(name, "int", default, min=lo, max=hi, **kw)


def _str(name: str, max_len: int, default: str = "", **kw: Any) -> AttrSpec:
    return AttrSpec(name, "str", default, max_len=max_len, **kw)


def _enum(name: str, default: str, choices: Iterable[str], **kw: Any) -> AttrSpec:
    return AttrSpec(name, "enum", default, choices=tuple(choices), **kw)


def _list(name: str, max_items: int, item_len: int) -> AttrSpec:
    """A list of names (NAMES of a namelist): ``NAMES(A, B, 'c')``, stored as a list of str."""
    return AttrSpec(name, "list", (), max=max_items, max_len=item_len)


def _flag(name: str, negative: str, default: bool, **kw: Any) -> AttrSpec:
    return AttrSpec(name, "flag", default, negative=negative, **kw)


def _event(name: str, default: str = "DISABLED", extra: tuple[str, ...] = ()) -> AttrSpec:
    """A queue-manager event switch: ENABLED|DISABLED (plus any extra words)."""
    return _enum(name, default, ("DISABLED", "ENABLED", *extra))


_ENABLED_DISABLED = ("ENABLED", "DISABLED")
_NO_YES = ("NO", "YES")
_MON_LEVELS = ("OFF", "NONE", "LOW", "MEDIUM", "HIGH")

# Integer attributes for which 0 is allowed besides the [min, max] range ("0 or 60-604000").
_ZERO_ALSO: frozenset[str] = frozenset({"TREELIFE", "SSLRKEYC"})

# Sizes accepted by the CFSTRUCT offload rules OFFLD1SZ..OFFLD3SZ: 0K through 64K.
_OFFLOAD_SIZES = tuple(f"{n}K" for n in range(65))

# CFSTRUCT defaults: CFLEVEL(3) as IBM's DEFINE CFSTRUCT syntax diagram shows, so a structure
# holds messages over 63 KB only when defined CFLEVEL(4) or higher (then offloaded, as on z/OS).
_CFSTRUCT_DEFAULT_CFLEVEL = 3


# --------------------------------------------------------------------------------------------
# Queue attributes.  Shared by QLOCAL and QALIAS where IBM documents them as common.
# --------------------------------------------------------------------------------------------

_PROPCTL = _enum("PROPCTL", "COMPAT", ("ALL", "COMPAT", "FORCE", "NONE", "V6COMPAT"))

_COMMON_QUEUE: tuple[AttrSpec, ...] = (
    _int("CAPEXPRY", -1, 1, 999999999, special={"NOLIMIT": -1}),  # tenths of a second
    _str("CLUSNL", 48),
    _str("CLUSTER", 48),
    _int("CLWLPRTY", 0, 0, 9),
    _int("CLWLRANK", 0, 0, 9),
    _str("CUSTOM", 128),
    _enum("DEFBIND", "OPEN", ("OPEN", "NOTFIXED", "GROUP")),
    _enum("DEFPRESP", "SYNC", ("SYNC", "ASYNC")),
    _int("DEFPRTY", 0, 0, 9),
    _enum("DEFPSIST", "NO", _NO_YES),
    _enum("DEFREADA", "NO", ("NO", "YES", "DISABLED")),
    _str("DESCR", 64),
    _enum("GET", "ENABLED", _ENABLED_DISABLED, mqset=True),
    _PROPCTL,
    _enum("PUT", "ENABLED", _ENABLED_DISABLED, mqset=True),
)

_QLOCAL_ONLY: tuple[AttrSpec, ...] = (
    _enum("ACCTQ", "QMGR", ("QMGR", "ON", "OFF")),
    _str("BOQNAME", 48),
    _int("BOTHRESH", 0, 0, 999999999),
    _str("CFSTRUCT", 12),
    _str("CLCHNAME", 48),
    _enum("CLWLUSEQ", "QMGR", ("QMGR", "ANY", "LOCAL")),
    _enum("DEFSOPT", "EXCL", ("EXCL", "SHARED")),  # EXCL is the z/OS default (SHARED elsewhere)
    _flag("HARDENBO", "NOHARDENBO", False),
    _enum("INDXTYPE", "NONE", ("NONE", "MSGID", "CORRELID", "GROUPID", "MSGTOKEN")),
    _str("INITQ", 48),
    _int("MAXDEPTH", 999999999, 0, 999999999),
    _int("MAXMSGL", 4194304, 0, 104857600),
    _enum("MONQ", "QMGR", ("QMGR", "OFF", "LOW", "MEDIUM", "HIGH")),
    _enum("MSGDLVSQ", "PRIORITY", ("PRIORITY", "FIFO")),
    _str("PROCESS", 48),
    _int("QDEPTHHI", 80, 0, 100),
    _int("QDEPTHLO", 20, 0, 100),
    _enum("QDPHIEV", "DISABLED", _ENABLED_DISABLED),
    _enum("QDPLOEV", "DISABLED", _ENABLED_DISABLED),
    _enum("QDPMAXEV", "ENABLED", _ENABLED_DISABLED),
    _enum("QSVCIEV", "NONE", ("NONE", "HIGH", "OK")),
    _int("QSVCINT", 999999999, 0, 999999999),          # milliseconds
    _int("RETINTVL", 999999999, 0, 999999999),         # hours
    _flag("SHARE", "NOSHARE", True),
    _str("STGCLASS", 8, "DEFAULT"),
    _str("STREAMQ", 48),
    _enum("STRMQOS", "BESTEF", ("BESTEF", "MUSTDUP")),
    _str("TRIGDATA", 64, mqset=True),
    _int("TRIGDPTH", 1, 1, 999999999, mqset=True),
    _flag("TRIGGER", "NOTRIGGER", False, mqset=True),
    _int("TRIGMPRI", 0, 0, 9, mqset=True),
    _enum("TRIGTYPE", "FIRST", ("FIRST", "EVERY", "DEPTH", "NONE"), mqset=True),
    _enum("USAGE", "NORMAL", ("NORMAL", "XMITQ")),
)

# DEFINE QMODEL takes the local queue attributes plus DEFTYPE (z/OS: TEMPDYN, PERMDYN, SHAREDYN).
_QMODEL_ONLY: tuple[AttrSpec, ...] = (
    _enum("DEFTYPE", "TEMPDYN", DYNAMIC_DEFTYPES),
)

# A local queue's DefinitionType: not settable by DEFINE/ALTER QLOCAL (MQOPEN of a model sets it).
_QLOCAL_DEFTYPE = _enum("DEFTYPE", "PREDEFINED", ("PREDEFINED", *DYNAMIC_DEFTYPES), settable=False)

_QALIAS_ONLY: tuple[AttrSpec, ...] = (
    _str("TARGET", 48, synonyms=("TARGQ",)),
    _enum("TARGTYPE", "QUEUE", ("QUEUE", "TOPIC")),
)

# A remote queue definition (RNAME set) or a queue-manager alias (RNAME blank); on z/OS it has
# no GET, PROPCTL, DEFREADA or CAPEXPRY.
_QREMOTE_ONLY: tuple[AttrSpec, ...] = (
    _str("RNAME", 48),
    _str("RQMNAME", 48),
    _str("XMITQ", 48),
)

# --------------------------------------------------------------------------------------------
# PROCESS
# --------------------------------------------------------------------------------------------

_APPLTYPE_WORDS = (
    "CICS", "DEF", "DOS", "IMS", "MVS", "NOTESAGENT", "NSK", "OS2", "OS400",
    "UNIX", "WINDOWS", "WINDOWSNT", "WLM",
)

_PROCESS: tuple[AttrSpec, ...] = (
    _str("APPLICID", 256),
    # CICS is the z/OS default; an integer application type is also accepted (see module doc).
    AttrSpec("APPLTYPE", "enum", "CICS", min=0, max=999999999, choices=_APPLTYPE_WORDS),
    _str("DESCR", 64),
    _str("ENVRDATA", 128),
    _str("USERDATA", 128),
)

# --------------------------------------------------------------------------------------------
# TOPIC (IBM MQ for z/OS "DEFINE TOPIC": the z/OS keywords; ASPARENT takes the value of the
# nearest administrative node above in the topic tree - app/core/topics.py resolves it)
# --------------------------------------------------------------------------------------------

_ASPARENT = "ASPARENT"
_TOPIC: tuple[AttrSpec, ...] = (
    _enum("CLROUTE", "DIRECT", ("DIRECT", "TOPICHOST")),
    _str("CLUSTER", 48),
    _str("CUSTOM", 128),
    _enum("DEFPRESP", _ASPARENT, (_ASPARENT, "SYNC", "ASYNC")),
    # MQPRI_PRIORITY_AS_PARENT is -2
    _int("DEFPRTY", -2, 0, 9, special={_ASPARENT: -2}),
    _enum("DEFPSIST", _ASPARENT, (_ASPARENT, "YES", "NO")),
    _str("DESCR", 64),
    _enum("DURSUB", _ASPARENT, (_ASPARENT, "YES", "NO")),
    _str("MDURMDL", 48),
    _str("MNDURMDL", 48),
    _enum("NPMSGDLV", _ASPARENT, (_ASPARENT, "ALL", "ALLAVAIL", "ALLDUR")),
    _enum("PMSGDLV", _ASPARENT, (_ASPARENT, "ALL", "ALLAVAIL", "ALLDUR")),
    _enum("PROXYSUB", "FIRSTUSE", ("FIRSTUSE", "FORCE")),
    _enum("PUB", _ASPARENT, (_ASPARENT, "ENABLED", "DISABLED")),
    _enum("PUBSCOPE", _ASPARENT, (_ASPARENT, "QMGR", "ALL")),
    _enum("SUB", _ASPARENT, (_ASPARENT, "ENABLED", "DISABLED")),
    _enum("SUBSCOPE", _ASPARENT, (_ASPARENT, "QMGR", "ALL")),
    # required at DEFINE and fixed afterwards (the MQSC executor checks both)
    _str("TOPICSTR", 10240),
    _enum("USEDLQ", _ASPARENT, (_ASPARENT, "NO", "YES")),
    _enum("WILDCARD", "PASSTHRU", ("PASSTHRU", "BLOCK")),
)

# --------------------------------------------------------------------------------------------
# NAMELIST (IBM MQ for z/OS "DEFINE NAMELIST": up to 256 names of 48 characters; NLTYPE is
# z/OS's, saying what the names are - queues, clusters, authentication information objects)
# --------------------------------------------------------------------------------------------

NAMELIST_MAX_NAMES = 256
_NAMELIST: tuple[AttrSpec, ...] = (
    _str("DESCR", 64),
    _list("NAMES", NAMELIST_MAX_NAMES, 48),
    _enum("NLTYPE", "NONE", ("NONE", "QUEUE", "CLUSTER", "AUTHINFO")),
)

# --------------------------------------------------------------------------------------------
# CHANNEL (IBM MQ for z/OS "DEFINE CHANNEL"): every keyword of every channel type, with the
# z/OS default; app/core/channels.py says which of them each CHLTYPE takes (and the defaults
# that differ by type, DISCINT of a SVRCONN)
# --------------------------------------------------------------------------------------------

_CHL_TYPES = ("SDR", "SVR", "RCVR", "RQSTR", "SVRCONN", "CLNTCONN", "CLUSSDR", "CLUSRCVR")
_CHL_STAT = ("QMGR", "OFF", "LOW", "MEDIUM", "HIGH")
_CHANNEL: tuple[AttrSpec, ...] = (
    _enum("AFFINITY", "PREFERRED", ("PREFERRED", "NONE")),
    _int("BATCHHB", 0, 0, 999999999),
    _int("BATCHINT", 0, 0, 999999999),
    _int("BATCHLIM", 5000, 0, 999999999),
    _int("BATCHSZ", 50, 1, 9999),
    _str("CERTLABL", 64),
    _enum("CHLTYPE", "SDR", _CHL_TYPES),
    _int("CLNTWGHT", 0, 0, 99),
    _str("CLUSNL", 48),
    _str("CLUSTER", 48),
    _int("CLWLPRTY", 0, 0, 9),
    _int("CLWLRANK", 0, 0, 9),
    _int("CLWLWGHT", 50, 1, 99),
    _enum("COMPHDR", "NONE", ("NONE", "SYSTEM")),
    _enum("COMPMSG", "NONE", ("NONE", "RLE", "ZLIBFAST", "ZLIBHIGH", "ANY")),
    _str("CONNAME", 264),
    _enum("CONVERT", "NO", _NO_YES),
    _enum("DEFCDISP", "PRIVATE", ("PRIVATE", "FIXSHARED", "SHARED")),
    _enum("DEFRECON", "NO", ("NO", "YES", "QMGR", "DISABLED")),
    _str("DESCR", 64),
    _int("DISCINT", 6000, 0, 999999),
    _int("HBINT", 300, 0, 999999),
    _int("KAINT", -1, 0, 99999, special={"AUTO": -1}),
    _str("LOCLADDR", 48),
    _int("LONGRTY", 999999999, 0, 999999999),
    _int("LONGTMR", 1200, 0, 999999999),
    _int("MAXINST", 999999999, 0, 999999999),
    _int("MAXINSTC", 999999999, 0, 999999999),
    _int("MAXMSGL", 4194304, 0, 104857600),
    _str("MCANAME", 20),
    _str("MCAUSER", 64),
    _str("MODENAME", 8),
    _enum("MONCHL", "QMGR", _CHL_STAT),
    _str("MRDATA", 32),
    _str("MREXIT", 8),
    _int("MRRTY", 10, 0, 999999999),
    _int("MRTMR", 1000, 0, 999999999),
    _str("MSGDATA", 32 * 8 + 7),  # up to 8 items, as z/OS takes a list of exits
    _str("MSGEXIT", 8 * 8 + 7),
    _int("NETPRTY", 0, 0, 99),
    _enum("NPMSPEED", "FAST", ("FAST", "NORMAL")),
    _str("PASSWORD", 12),
    _enum("PROPCTL", "COMPAT", ("COMPAT", "NONE", "ALL")),
    _enum("PUTAUT", "DEF", ("DEF", "CTX", "ONLYMCA", "ALTMCA")),
    _str("QMNAME", 48),
    _str("RCVDATA", 32 * 8 + 7),
    _str("RCVEXIT", 8 * 8 + 7),
    _str("SCYDATA", 32),
    _str("SCYEXIT", 8),
    _str("SENDDATA", 32 * 8 + 7),
    _str("SENDEXIT", 8 * 8 + 7),
    _int("SEQWRAP", 999999999, 100, 999999999),
    _int("SHARECNV", 10, 0, 999999999),
    _int("SHORTRTY", 10, 0, 999999999),
    _int("SHORTTMR", 60, 0, 999999999),
    _enum("SSLCAUTH", "REQUIRED", ("REQUIRED", "OPTIONAL")),
    _str("SSLCIPH", 32),
    _str("SSLPEER", 1024),
    _enum("STATCHL", "QMGR", _CHL_STAT),
    _str("TPNAME", 64),
    _enum("TRPTYPE", "TCP", ("TCP", "LU62")),
    _enum("USEDLQ", "YES", _NO_YES),
    _str("USERID", 12),
    _str("XMITQ", 48),
)

# --------------------------------------------------------------------------------------------
# CFSTRUCT (a group object by nature: no QSGDISP)
# --------------------------------------------------------------------------------------------

_CFSTRUCT: tuple[AttrSpec, ...] = (
    _enum("CFCONLOS", "ASQMGR", ("ASQMGR", "TERMINATE", "TOLERATE")),
    _int("CFLEVEL", _CFSTRUCT_DEFAULT_CFLEVEL, 1, 5),
    _str("DESCR", 64),
    _enum("DSBLOCK", "256K", ("8K", "16K", "32K", "64K", "128K", "256K", "512K", "1M")),
    _int("DSBUFS", 100, 1, 9999),
    _enum("DSEXPAND", "YES", _NO_YES),
    _str("DSGROUP", 44),
    # Not an IBM attribute (emulator addition, like DISPLAY CFSTATUS's CFNODE): the Redis
    # Cluster hash tag the structure's keys use - the emulator's counterpart of the CFRM
    # policy's PREFLIST. Blank: the structure's own name. See ``validate_cross``.
    _str("HASHTAG", 48),
    _enum("OFFLD1SZ", "32K", _OFFLOAD_SIZES),
    _int("OFFLD1TH", 70, 0, 100),
    _enum("OFFLD2SZ", "4K", _OFFLOAD_SIZES),
    _int("OFFLD2TH", 80, 0, 100),
    _enum("OFFLD3SZ", "0K", _OFFLOAD_SIZES),
    _int("OFFLD3TH", 90, 0, 100),
    _enum("OFFLOAD", "SMDS", ("SMDS", "DB2")),
    _enum("RECAUTO", "YES", _NO_YES),
    _enum("RECOVER", "NO", _NO_YES),
)

# --------------------------------------------------------------------------------------------
# QMGR (ALTER QMGR on z/OS, plus a few read-only attributes DISPLAY QMGR shows)
# --------------------------------------------------------------------------------------------

_QMGR: tuple[AttrSpec, ...] = (
    _enum("ACCTQ", "OFF", ("OFF", "ON", "NONE")),
    _int("ACTCHL", 200, 1, 9999),
    _enum("ACTIVREC", "MSG", ("MSG", "QUEUE", "DISABLED")),
    # IBM documents ACTVTRC as not valid on z/OS; kept because the project asks for it.
    _enum("ACTVTRC", "OFF", ("OFF", "ON")),
    _enum("ADOPTCHK", "ALL", ("ALL", "NETADDR", "NONE", "QMNAME")),
    _enum("ADOPTMCA", "ALL", ("ALL", "NO")),
    # IBM's ALTER QMGR diagram marks AUTHOREV(ENABLED) "not valid on z/OS": only DISABLED.
    _enum("AUTHOREV", "DISABLED", ("DISABLED",)),
    _event("BRIDGEEV"),
    # On z/OS the queue manager CCSID comes from the system parameters (default 500); ALTER
    # QMGR CCSID is documented as not valid on z/OS, so it is read-only here.
    _int("CCSID", 500, 1, 65535, settable=False),
    _str("CERTLABL", 64),
    _str("CERTQSGL", 64),
    _enum("CFCONLOS", "TERMINATE", ("TERMINATE", "TOLERATE")),
    _str("CHADEXIT", 8),
    _int("CHIADAPS", 8, 0, 9999),
    _int("CHIDISPS", 5, 1, 9999),
    _enum("CHLAUTH", "ENABLED", _ENABLED_DISABLED),
    _event("CHLEV", extra=("EXCEPTION",)),
    _str("CLWLDATA", 32),
    _str("CLWLEXIT", 8),
    _int("CLWLLEN", 100, 0, 999999999),
    _int("CLWLMRUC", 999999999, 1, 999999999),
    _enum("CLWLUSEQ", "LOCAL", ("LOCAL", "ANY")),
    _event("CMDEV", extra=("NODISPLAY",)),
    _str("COMMANDQ", 48, "SYSTEM.COMMAND.INPUT", settable=False),
    _event("CONFIGEV"),
    _str("CONNAUTH", 48),
    _str("CUSTOM", 128),
    _str("DEADQ", 48),
    _enum("DEFCLXQ", "SCTQ", ("SCTQ", "CHANNEL")),
    _str("DEFXMITQ", 48),
    _str("DESCR", 64),
    _str("DNSGROUP", 18),
    _enum("DNSWLM", "NO", _NO_YES),
    _int("EXPRYINT", 0, 1, 99999999, special={"OFF": 0}),  # seconds
    _event("GROUPUR"),
    _event("IGQ"),
    _enum("IGQAUT", "DEF", ("DEF", "CTX", "ONLYIGQ", "ALTIGQ")),  # whose PUT right the IGQ agent checks
    _str("IGQUSER", 12),
    _event("INHIBTEV"),
    _enum("IPADDRV", "IPV4", ("IPV4", "IPV6")),
    _event("LOCALEV"),
    _int("LSTRTMR", 60, 5, 9999),
    _str("LU62ARM", 2),
    _int("LU62CHL", 200, 0, 9999),
    _str("LUGROUP", 8),
    _str("LUNAME", 8),
    _int("MAXCHL", 200, 1, 9999),
    _int("MAXHANDS", 256, 0, 999999999),
    # Fixed at 100 MB on z/OS.
    _int("MAXMSGL", 104857600, 32768, 104857600, settable=False),
    _int("MAXPRTY", 9, 9, 9, settable=False),
    _int("MAXUMSGS", 10000, 1, 999999999),
    _enum("MONACLS", "QMGR", ("QMGR", "OFF", "LOW", "MEDIUM", "HIGH")),
    _enum("MONCHL", "OFF", _MON_LEVELS),
    _enum("MONQ", "OFF", _MON_LEVELS),
    _int("OPORTMAX", 0, 0, 65535),
    _int("OPORTMIN", 0, 0, 65535),
    _event("PERFMEV"),
    _enum("PLATFORM", "MVS", ("MVS",), settable=False),
    _event("PSCLUS", "ENABLED"),
    _enum("PSMODE", "ENABLED", ("COMPAT", "DISABLED", "ENABLED")),
    _enum("PSNPMSG", "DISCARD", ("DISCARD", "KEEP")),
    _enum("PSNPRES", "NORMAL", ("NORMAL", "SAFE", "DISCARD")),
    _int("PSRTYCNT", 5, 0, 999999999),
    _enum("PSSYNCPT", "IFPER", ("IFPER", "YES")),
    _int("RCVTIME", 0, 0, 999999),
    _int("RCVTMIN", 0, 0, 999999),
    _enum("RCVTTYPE", "MULTIPLY", ("MULTIPLY", "ADD", "EQUAL")),
    _event("REMOTEEV"),
    _str("REPOS", 48),
    _str("REPOSNL", 48),
    _enum("REVDNS", "ENABLED", _ENABLED_DISABLED),
    _enum("ROUTEREC", "MSG", ("MSG", "QUEUE", "DISABLED")),
    _enum("SCYCASE", "UPPER", ("UPPER", "MIXED")),
    _enum("SQQMNAME", "USE", ("USE", "IGNORE")),
    _str("SSLCRLNL", 48),
    _str("SSLCRYP", 256),
    _event("SSLEV"),
    _enum("SSLFIPS", "NO", _NO_YES),
    _str("SSLKEYR", 44),
    _int("SSLRKEYC", 0, 32768, 999999999),  # 0 or 32768-999999999 (see _ZERO_ALSO)
    _int("SSLTASKS", 0, 0, 9999),
    _enum("STATCHL", "OFF", _MON_LEVELS),
    _event("STRSTPEV", "ENABLED"),
    _int("TCPCHL", 200, 0, 9999),
    _enum("TCPKEEP", "NO", _NO_YES),
    _str("TCPNAME", 8, "TCPIP"),
    _enum("TCPSTACK", "SINGLE", ("SINGLE", "MULTIPLE")),
    _enum("TRAXSTR", "YES", _NO_YES),
    _int("TRAXTBL", 2, 2, 2048),
    _int("TREELIFE", 1800, 60, 604000),     # 0 or 60-604000 seconds (see _ZERO_ALSO)
    _int("TRIGINT", 999999999, 0, 999999999),  # milliseconds
)


def _table(*groups: Iterable[AttrSpec]) -> dict[str, AttrSpec]:
    """Merge spec groups into one name -> spec dict in DISPLAY (alphabetical) order."""
    merged: dict[str, AttrSpec] = {}
    for group in groups:
        for spec in group:
            if spec.name in merged:
                raise ValueError(f"attribute {spec.name} defined twice")
            if spec.kind not in KINDS:
                raise ValueError(f"attribute {spec.name} has unknown kind {spec.kind!r}")
            merged[spec.name] = spec
    return dict(sorted(merged.items()))


_SPECS: dict[str, dict[str, AttrSpec]] = {
    "QLOCAL": _table(_COMMON_QUEUE, _QLOCAL_ONLY, (_QLOCAL_DEFTYPE,)),
    "QMODEL": _table(_COMMON_QUEUE, _QLOCAL_ONLY, _QMODEL_ONLY),
    "QALIAS": _table(_COMMON_QUEUE, _QALIAS_ONLY),
    "QREMOTE": _table(tuple(a for a in _COMMON_QUEUE if a.name not in ("GET", "PROPCTL", "DEFREADA", "CAPEXPRY")),
                      _QREMOTE_ONLY),
    "PROCESS": _table(_PROCESS),
    "CFSTRUCT": _table(_CFSTRUCT),
    "QMGR": _table(_QMGR),
    "TOPIC": _table(_TOPIC),
    "NAMELIST": _table(_NAMELIST),
    "CHANNEL": _table(_CHANNEL),
}


def _build_keyword_index(table: Mapping[str, AttrSpec]) -> dict[str, tuple[AttrSpec, bool]]:
    """Every keyword of a type (names, negatives, synonyms) -> (spec, is_negative)."""
    index: dict[str, tuple[AttrSpec, bool]] = {}
    for spec in table.values():
        words = [(spec.name, False), *((syn, False) for syn in spec.synonyms)]
        if spec.negative:
            words.append((spec.negative, True))
        for word, negative in words:
            if word in index:
                raise ValueError(f"keyword {word} used twice")
            index[word] = (spec, negative)
    return index


_KEYWORDS: dict[str, dict[str, tuple[AttrSpec, bool]]] = {
    objtype: _build_keyword_index(table) for objtype, table in _SPECS.items()
}

#: Keywords whose value is a list (the MQSC layer hands their items over already split).
LIST_KEYWORDS: frozenset[str] = frozenset(
    spec.name for table in _SPECS.values() for spec in table.values() if spec.kind == "list")

_INT_RE = re.compile(r"[+-]?[0-9]+")
#: A CFSTRUCT's HASHTAG: the characters of an MQ object name (see ``validate_cross``).
HASHTAG_RE = re.compile(r"[A-Za-z0-9./_%]{1,48}")


# --------------------------------------------------------------------------------------------
# Public functions
# --------------------------------------------------------------------------------------------

def _table_for(objtype: str) -> dict[str, AttrSpec]:
    try:
        return _SPECS[objtype.upper()]
    except KeyError:
        raise ValueError(
            f"no attribute catalogue for object type {objtype!r}; known: {', '.join(OBJECT_TYPES)}"
        ) from None


def specs(objtype: str) -> dict[str, AttrSpec]:
    """Attribute specs of an object type by attribute name, in DISPLAY order.

    Raises ValueError for an object type not in :data:`OBJECT_TYPES` (a programming error).
    """
    return dict(_table_for(objtype))


def defaults(objtype: str) -> dict[str, object]:
    """A fresh dict of every attribute's IBM z/OS default (flags as bool, ints as int, enums/strings as str)."""
    return {name: list(spec.default) if spec.kind == "list" else spec.default  # type: ignore[call-overload]
            for name, spec in _table_for(objtype).items()}


def apply_keywords(
    objtype: str,
    attrs: Mapping[str, object],
    keywords: Iterable[tuple[str, Any]],
) -> dict[str, object]:
    """Return a new dict: ``attrs`` with the MQSC keywords applied.  Never mutates its input.

    ``keywords`` are ``(keyword, value)`` pairs as the parser gives them (values already
    case-processed; a bare keyword has value None).  Flags: ``TRIGGER`` sets True, ``NOTRIGGER``
    False, and a value on either is an error.  An int/str/enum keyword without a value is an
    error.  Integers parse from decimal strings (optional sign; anything else is rejected),
    strings keep their value (trailing blanks dropped, then checked against ``max_len``),
    enumerations must be one of the choices (any case, stored upper case).  Synonyms are stored
    under the canonical name.

    The executor must remove QSGDISP and the command keywords (REPLACE, NOREPLACE, LIKE, FORCE,
    PURGE, NOPURGE, CMDSCOPE, ALL, TYPE, WHERE) first: here they are unknown keywords.

    Raises MQError(MQRCCF_PARM_SYNTAX_ERROR) for an unknown keyword, a read-only attribute or an
    attribute given twice, and MQError(MQRCCF_ATTR_VALUE_ERROR) for a bad value.
    """
    _table_for(objtype)  # ValueError for an unknown object type
    index = _KEYWORDS[objtype.upper()]
    result = dict(attrs)
    seen: dict[str, str] = {}  # canonical name -> keyword that set it
    for raw_keyword, value in keywords:
        keyword = raw_keyword.upper()
        found = index.get(keyword)
        if found is None:
            raise MQError(
                MQRC.MQRCCF_PARM_SYNTAX_ERROR,
                f"Keyword {echo(keyword)} is not valid for {objtype.upper()}; "
                f"valid keywords are: {', '.join(sorted(index))}",
            )
        spec, negative = found
        if not spec.settable:
            raise MQError(
                MQRC.MQRCCF_PARM_SYNTAX_ERROR,
                f"Keyword {echo(keyword)} is read-only for {objtype.upper()} and cannot be set by DEFINE or ALTER",
            )
        if spec.name in seen:
            raise MQError(
                MQRC.MQRCCF_PARM_SYNTAX_ERROR,
                f"Keyword {echo(keyword)} conflicts with {seen[spec.name]}: {spec.name} may be given only once",
            )
        seen[spec.name] = keyword
        result[spec.name] = _convert(spec, keyword, negative, value)
    return result


def display_value(spec: AttrSpec, value: object) -> object:
    """How DISPLAY shows a value.

    Flags show as the keyword itself (``"TRIGGER"`` or ``"NOTRIGGER"``); the caller stores it as
    ``obj[spec.name] = display_value(...)``.  Integers show as int, except a value that is one
    of the spec's special words (``EXPRYINT`` 0 is ``"OFF"``, ``CAPEXPRY`` -1 is ``"NOLIMIT"``).
    Strings and enumerations show as str.
    """
    if spec.kind == "flag":
        return spec.name if value else (spec.negative or spec.name)
    if spec.kind == "list":
        return [str(v) for v in value] if isinstance(value, (list, tuple)) else []
    if spec.kind == "int":
        for word, number in spec.special.items():
            if value == number:
                return word
        return int(value)  # type: ignore[call-overload]
    return "" if value is None else str(value)


def validate_cross(objtype: str, attrs: Mapping[str, object]) -> None:
    """Cross-attribute rules IBM enforces at DEFINE/ALTER, checked on the resulting attributes.

    Only rules IBM documents are here:

    * CFSTRUCT: ``RECOVER(YES)`` needs ``CFLEVEL`` 3 or higher.
    * CFSTRUCT ``HASHTAG`` (an emulator addition): blank, or 1-48 of the characters of an MQ
      object name (A-Z a-z 0-9 . / _ %) - no braces (they would end the Redis hash tag), no
      blanks and no pattern characters (the structure's keys are found with SCAN MATCH).

    Single-attribute rules (ranges, e.g. TRIGDPTH >= 1) are already enforced by
    :func:`apply_keywords`; QSGDISP/CFSTRUCT rules belong to the executor.
    Raises MQError(MQRCCF_ATTR_VALUE_ERROR).
    """
    kind = objtype.upper()
    _table_for(kind)
    if kind == "CFSTRUCT":
        level = attrs.get("CFLEVEL", _CFSTRUCT_DEFAULT_CFLEVEL)
        if attrs.get("RECOVER") == "YES" and isinstance(level, int) and level < 3:
            raise MQError(
                MQRC.MQRCCF_ATTR_VALUE_ERROR,
                f"RECOVER(YES) is not allowed with CFLEVEL({level}); RECOVER(YES) needs CFLEVEL 3 or higher",
            )
        hashtag = str(attrs.get("HASHTAG", "") or "")
        if hashtag and not HASHTAG_RE.fullmatch(hashtag):
            raise MQError(
                MQRC.MQRCCF_ATTR_VALUE_ERROR,
                f"HASHTAG('{echo(hashtag)}') is not valid: 1-48 of A-Z a-z 0-9 . / _ % (no braces or blanks)",
            )


# --------------------------------------------------------------------------------------------
# Value conversion
# --------------------------------------------------------------------------------------------

def _value_error(message: str) -> MQError:
    return MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, message)


def _allowed(spec: AttrSpec) -> str:
    """What a spec allows, in words, for error messages."""
    if spec.kind == "flag":
        return f"{spec.name} or {spec.negative} without a value"
    if spec.kind == "str":
        return f"a string of at most {spec.max_len} characters"
    if spec.kind == "list":
        return f"a list of at most {spec.max} names of at most {spec.max_len} characters"
    if spec.kind == "int":
        parts = []
        if spec.name in _ZERO_ALSO:
            parts.append("0")
        parts.append(f"an integer in the range {spec.min}-{spec.max}")
        parts.extend(spec.special)
        return " or ".join(parts)
    words = ", ".join(spec.choices)
    if spec.min is not None and spec.max is not None:
        return f"one of {words} or an integer in the range {spec.min}-{spec.max}"
    return f"one of {words}"


def _parse_int(text: str) -> int | None:
    text = text.strip()
    return int(text) if _INT_RE.fullmatch(text) else None


def _convert(spec: AttrSpec, keyword: str, negative: bool, value: Any) -> object:
    """The stored value for one keyword of one spec, or MQError(MQRCCF_ATTR_VALUE_ERROR)."""
    if spec.kind == "flag":
        if value is not None:
            raise _value_error(
                f"Keyword {echo(keyword)} takes no value (got {echo(value)!r}); allowed: {_allowed(spec)}"
            )
        return not negative
    if spec.kind == "list":
        return _convert_list(spec, keyword, value)
    if value is None:
        raise _value_error(f"Keyword {echo(keyword)} needs a value; allowed: {_allowed(spec)}")
    if not isinstance(value, str):
        raise _value_error(f"{echo(keyword)}({echo(value)!r}) is not text; allowed: {_allowed(spec)}")

    if spec.kind == "str":
        text = value.rstrip(" ")
        if spec.max_len is not None and len(text) > spec.max_len:
            raise _value_error(
                f"{echo(keyword)} value is {len(text)} characters long; allowed: {_allowed(spec)}"
            )
        return text

    if spec.kind == "int":
        word = value.strip().upper()
        if word in spec.special:
            return spec.special[word]
        number = _parse_int(value)
        if number is None or not _int_in_range(spec, number):
            raise _value_error(f"{echo(keyword)}({echo(value)}) is not valid; allowed: {_allowed(spec)}")
        return number

    # enum
    word = value.strip().upper()
    if word in spec.choices:
        return word
    if spec.min is not None and spec.max is not None:
        number = _parse_int(word)
        if number is not None and spec.min <= number <= spec.max:
            return str(number)
    raise _value_error(f"{echo(keyword)}({echo(value)}) is not valid; allowed: {_allowed(spec)}")


def _convert_list(spec: AttrSpec, keyword: str, value: object) -> list[str]:
    """A list keyword's items: the MQSC layer gives them split (``Keyword.values()``); a plain
    string is split on commas. Blank items are dropped (``NAMES()`` is the empty list)."""
    if value is None:
        raise _value_error(f"Keyword {echo(keyword)} needs a value; allowed: {_allowed(spec)}")
    raw = value.split(",") if isinstance(value, str) else value
    if not isinstance(raw, (list, tuple)) or not all(isinstance(v, str) for v in raw):
        raise _value_error(f"{echo(keyword)}({echo(value)!r}) is not a list of names; allowed: {_allowed(spec)}")
    items = [v.strip() for v in raw if v.strip()]
    if spec.max is not None and len(items) > spec.max:
        raise _value_error(f"{echo(keyword)} has {len(items)} names; allowed: {_allowed(spec)}")
    for item in items:
        if spec.max_len is not None and len(item) > spec.max_len:
            raise _value_error(f"{echo(keyword)} name '{item[:60]}' is too long; allowed: {_allowed(spec)}")
    return items


def _int_in_range(spec: AttrSpec, number: int) -> bool:
    if number == 0 and spec.name in _ZERO_ALSO:
        return True
    low = spec.min if spec.min is not None else number
    high = spec.max if spec.max is not None else number
    return low <= number <= high
