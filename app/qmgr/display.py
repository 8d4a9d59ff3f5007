"""How DISPLAY (MQSC) and MQINQ show an object: its definition keyed by MQSC attribute names,
and what the coupling facility knows live about a local queue."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.core import attributes
from app.qmgr.definitions import EVENT_SWITCHES

if TYPE_CHECKING:
    from app.cf.engine import QueueStatus


def display_object(obj) -> dict[str, Any]:
    """An object definition keyed by MQSC attribute names, as DISPLAY and MQINQ show it."""
    key = {"PROCESS": "PROCESS", "CFSTRUCT": "CFSTRUCT", "TOPIC": "TOPIC"}.get(obj.objtype, "QUEUE")
    out: dict[str, Any] = {key: obj.name}
    if key == "QUEUE":
        out["TYPE"] = obj.objtype  # IBM shows TYPE for queues only (not PROCESS or CFSTRUCT)
    if obj.objtype != "CFSTRUCT":
        out["QSGDISP"] = obj.qsgdisp
    for spec in attributes.specs(obj.objtype).values():
        out[spec.name] = attributes.display_value(spec, obj.attrs.get(spec.name, spec.default))
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
