"""Channel definitions as IBM MQ for z/OS keeps them: which attributes each channel type
(CHLTYPE) takes, the defaults that differ by type, and the attributes a type needs.

The catalogue of every channel keyword is ``app.core.attributes`` (object type CHANNEL); a
channel's stored attributes are only those of its type, so DISPLAY CHANNEL shows what IBM shows
for that type. There is no channel initiator here: definitions are kept, never run
(``app/mqsc/commands/channel.py`` answers START/STOP/PING CHANNEL and DISPLAY CHSTATUS/CHINIT
as z/OS does while the channel initiator is not active).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from app.core import attributes
from app.core.errors import MQError, echo
from app.core.reasons import MQRC

CHANNEL_TYPES = ("SDR", "SVR", "RCVR", "RQSTR", "SVRCONN", "CLNTCONN", "CLUSSDR", "CLUSRCVR")
#: 1-20 of the object-name characters (IBM: a channel name is at most 20 characters)
_CHANNEL_NAME = re.compile(r"[A-Za-z0-9./_%]{1,20}")

_ALL = frozenset(CHANNEL_TYPES)
_MESSAGE = frozenset({"SDR", "SVR", "RCVR", "RQSTR", "CLUSSDR", "CLUSRCVR"})  # message channels
_SENDING = frozenset({"SDR", "SVR", "CLUSSDR", "CLUSRCVR"})  # those that send batches
_RECEIVING = frozenset({"RCVR", "RQSTR", "CLUSRCVR"})
_CLUSTER = frozenset({"CLUSSDR", "CLUSRCVR"})
_OUTBOUND = frozenset({"SDR", "SVR", "RQSTR", "CLNTCONN", "CLUSSDR", "CLUSRCVR"})  # they connect out

#: attribute -> the channel types that take it (IBM MQ for z/OS, DEFINE CHANNEL per type)
_TYPES_OF: dict[str, frozenset[str]] = {
    "AFFINITY": frozenset({"CLNTCONN"}),
    "BATCHHB": _SENDING, "BATCHINT": _SENDING, "BATCHLIM": _SENDING,
    "BATCHSZ": _MESSAGE,
    "CERTLABL": _ALL, "CHLTYPE": _ALL, "COMPHDR": _ALL, "COMPMSG": _ALL, "DESCR": _ALL, "HBINT": _ALL,
    "KAINT": _ALL, "MAXMSGL": _ALL, "RCVDATA": _ALL, "RCVEXIT": _ALL, "SCYDATA": _ALL, "SCYEXIT": _ALL,
    "SENDDATA": _ALL, "SENDEXIT": _ALL, "SSLCIPH": _ALL, "SSLPEER": _ALL, "TRPTYPE": _ALL,
    "CLNTWGHT": frozenset({"CLNTCONN"}),
    "CLUSNL": _CLUSTER, "CLUSTER": _CLUSTER, "CLWLPRTY": _CLUSTER, "CLWLRANK": _CLUSTER, "CLWLWGHT": _CLUSTER,
    "CONNAME": _OUTBOUND, "LOCLADDR": _OUTBOUND, "MODENAME": _OUTBOUND, "TPNAME": _OUTBOUND,
    "CONVERT": _SENDING, "PROPCTL": _SENDING,
    "LONGRTY": _SENDING, "LONGTMR": _SENDING, "SHORTRTY": _SENDING, "SHORTTMR": _SENDING,
    "DEFCDISP": frozenset({"SDR", "SVR", "RCVR", "RQSTR", "SVRCONN"}),
    "DEFRECON": frozenset({"CLNTCONN"}), "QMNAME": frozenset({"CLNTCONN"}),
    "DISCINT": _SENDING | {"SVRCONN"},
    "MAXINST": frozenset({"SVRCONN"}), "MAXINSTC": frozenset({"SVRCONN"}),
    "SHARECNV": frozenset({"SVRCONN", "CLNTCONN"}),
    "MCANAME": _OUTBOUND - {"CLNTCONN"},
    "MCAUSER": _ALL - {"CLNTCONN"}, "MONCHL": _ALL - {"CLNTCONN"},
    "MRDATA": _RECEIVING, "MREXIT": _RECEIVING, "MRRTY": _RECEIVING, "MRTMR": _RECEIVING,
    "MSGDATA": _MESSAGE, "MSGEXIT": _MESSAGE, "NPMSPEED": _MESSAGE, "SEQWRAP": _MESSAGE, "STATCHL": _MESSAGE,
    "USEDLQ": _MESSAGE,
    "NETPRTY": frozenset({"CLUSRCVR"}),
    "PASSWORD": frozenset({"SDR", "SVR", "RQSTR", "CLNTCONN", "CLUSSDR"}),
    "USERID": frozenset({"SDR", "SVR", "RQSTR", "CLNTCONN", "CLUSSDR"}),
    "PUTAUT": _RECEIVING | {"SVRCONN"},
    "SSLCAUTH": frozenset({"SVR", "RCVR", "RQSTR", "SVRCONN", "CLUSRCVR"}),
    "XMITQ": frozenset({"SDR", "SVR"}),
}
#: defaults that differ by type from the catalogue's (z/OS: a SVRCONN's DISCINT is 0)
_TYPE_DEFAULTS: dict[str, dict[str, object]] = {"SVRCONN": {"DISCINT": 0}}
#: attributes a type cannot be defined without (IBM: CONNAME for SDR, RQSTR, CLNTCONN and
#: CLUSSDR; XMITQ for SDR and SVR)
_REQUIRED: dict[str, tuple[str, ...]] = {"SDR": ("CONNAME", "XMITQ"), "SVR": ("XMITQ",), "RQSTR": ("CONNAME",),
                                         "CLNTCONN": ("CONNAME",), "CLUSSDR": ("CONNAME",)}


def check_channel_name(name: str) -> str:
    """A channel name (1-20 characters) or MQRCCF_CHANNEL_NAME_ERROR."""
    if not _CHANNEL_NAME.fullmatch(name):
        raise MQError(MQRC.MQRCCF_CHANNEL_NAME_ERROR,
                      f"'{echo(name)}' is not a channel name (1-20 of A-Z a-z 0-9 . / _ %)")
    return name


def check_type(chltype: str) -> str:
    """A CHLTYPE word or MQRCCF_CHANNEL_TYPE_ERROR."""
    if chltype not in CHANNEL_TYPES:
        raise MQError(MQRC.MQRCCF_CHANNEL_TYPE_ERROR,
                      f"CHLTYPE({echo(chltype)}) is not one of {', '.join(CHANNEL_TYPES)}")
    return chltype


def attributes_for(chltype: str) -> list[str]:
    """The attributes a channel of this type has, in DISPLAY order (CHLTYPE first)."""
    names = [name for name in attributes.specs("CHANNEL") if chltype in _TYPES_OF.get(name, _ALL)]
    return ["CHLTYPE", *(n for n in names if n != "CHLTYPE")]


def defaults_for(chltype: str) -> dict[str, object]:
    """A new channel of this type: IBM's z/OS defaults of its attributes."""
    every = attributes.defaults("CHANNEL")
    out = {name: every[name] for name in attributes_for(chltype)}
    out.update(_TYPE_DEFAULTS.get(chltype, {}))
    out["CHLTYPE"] = chltype
    return out


def check_keywords(chltype: str, names: Iterable[str]) -> None:
    """Each attribute keyword given must belong to the channel's type: else
    MQRCCF_WRONG_CHANNEL_TYPE (IBM: "parameter not allowed for this channel type")."""
    index = {spec.name: spec for spec in attributes.specs("CHANNEL").values()}
    for name in names:
        spec = index.get(name)
        if spec is not None and chltype not in _TYPES_OF.get(spec.name, _ALL):
            raise MQError(MQRC.MQRCCF_WRONG_CHANNEL_TYPE,
                          f"{echo(name)} is not an attribute of a CHLTYPE({echo(chltype)}) channel")


def check_required(chltype: str, names: Iterable[str]) -> None:
    """A new channel (no LIKE) names the keywords its type requires - CONNAME, XMITQ - even if
    blank, as IBM's CSQ4INSX sample gives SYSTEM.DEF.SENDER's: else MQRCCF_PARM_MISSING."""
    missing = [name for name in _REQUIRED.get(chltype, ()) if name not in set(names)]
    if missing:
        raise MQError(MQRC.MQRCCF_PARM_MISSING, f"a CHLTYPE({echo(chltype)}) channel needs {' and '.join(missing)}")


def typed(chltype: str, attrs: Mapping[str, object]) -> dict[str, object]:
    """``attrs`` cut to the attributes of the type, missing ones at their defaults."""
    base = defaults_for(chltype)
    out = {name: attrs.get(name, base[name]) for name in base}
    out["CHLTYPE"] = chltype
    return out
