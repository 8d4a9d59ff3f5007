"""How DISPLAY (MQSC) and MQINQ show an object: its definition keyed by MQSC attribute names,
and what the coupling facility knows live about a local queue."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.core import attributes, channels
from app.qmgr.definitions import EVENT_SWITCHES

if TYPE_CHECKING:
    from app.cf.engine import QueueStatus
    from app.core.objects import ObjectDef


def display_object(obj: ObjectDef) -> dict[str, Any]:
    """An object definition keyed by MQSC attribute names, as DISPLAY and MQINQ show it."""
    key = obj.objtype if obj.objtype in ("PROCESS", "CFSTRUCT", "TOPIC", "NAMELIST", "CHANNEL") else "QUEUE"
    out: dict[str, Any] = {key: obj.name}
    if key == "QUEUE":
        out["TYPE"] = obj.objtype  # IBM shows TYPE for queues only (not PROCESS or CFSTRUCT)
    specs = attributes.specs(obj.objtype)
    if key == "CHANNEL":  # CHLTYPE next to the name, then only the attributes of that type
        chltype = str(obj.attrs.get("CHLTYPE", "SDR"))
        out["CHLTYPE"] = chltype
        specs = {name: specs[name] for name in channels.attributes_for(chltype) if name != "CHLTYPE"}
    if obj.objtype != "CFSTRUCT":
        out["QSGDISP"] = obj.qsgdisp
    for spec in specs.values():
        out[spec.name] = attributes.display_value(spec, obj.attrs.get(spec.name, spec.default))
    if key == "NAMELIST":
        out["NAMCOUNT"] = len(out["NAMES"])
    if out.get("PASSWORD"):
        out["PASSWORD"] = "********"  # z/OS never displays a channel's password
    if obj.altered is not None:
        out["ALTDATE"] = obj.altered.strftime("%Y-%m-%d")
        out["ALTTIME"] = obj.altered.strftime("%H.%M.%S")
    return out


def live_counts(status: QueueStatus, qmgr: str) -> dict[str, Any]:
    """What the coupling facility knows live: CURDEPTH, this QM's IPPROCS/OPPROCS, and the
    event switches as the queue manager last flipped them."""
    mine = status.opens.get(qmgr, {})
    live: dict[str, Any] = {"CURDEPTH": status.depth, "IPPROCS": int(mine.get("ipprocs", 0)),
                            "OPPROCS": int(mine.get("opprocs", 0))}
    for name in EVENT_SWITCHES:
        if name.lower() in status.attributes:
            live[name] = status.attributes[name.lower()]
    return live
