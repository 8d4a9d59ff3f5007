"""What the live console shows of one queue manager, read as its MQSC commands read it: the
group's members, the CF structures (DISPLAY CFSTATUS), the local queues with their live depth
and open counts (DISPLAY QLOCAL), the latest happenings (events, trigger messages, expiries,
reports, IGQ moves, peer recoveries; also the group's, asked of each QM), and the latest point
of the message rates (``app.console.rates``). Everything runs as the caller, with the caller's
rights: the console is an administrator's tool, as MQSC is."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

import httpx

from app.console.rates import Counters, QueueReading, RateHistory
from app.core.errors import MQError
from app.core.igq import IGQ_XMITQ
from app.core.reasons import MQRC, reason_name
from app.core.rights import current_principal
from app.mqsc.executor import run_script

QUEUE_COLUMNS = ("QUEUE", "QSGDISP", "CURDEPTH", "MAXDEPTH", "IPPROCS", "OPPROCS", "CFSTRUCT", "DESCR")


async def console_state(qm: Any, rates: RateHistory | None = None, *, history: bool = False) -> dict[str, Any]:
    """One snapshot for the console. MQRC_NOT_AUTHORIZED (2035) unless the caller may run MQSC.
    With ``rates`` it carries the latest rates point (read now when one is due), and with
    ``history`` every point the history keeps (a page's first snapshot, to draw the past)."""
    qm.security.check_qmgr(current_principal.get(), "ADMIN")
    queues, structures = await run_script(qm, "DISPLAY QLOCAL(*) ALL\nDISPLAY CFSTATUS(*)")
    if queues["completion_code"] and queues["reason"] not in (MQRC.UNKNOWN_OBJECT_NAME, MQRC.CF_NOT_AVAILABLE):
        # 2085: none defined yet; 2345: the shared queues' depths are in the lost CF (``qmgr.cf`` says so)
        raise MQError(queues["reason"], "; ".join(queues["messages"]))
    info = qm.info()
    try:
        members = await qm.group_info()
    except MQError as exc:  # the group's records are in the coupling facility, which is lost now
        if exc.reason != MQRC.CF_NOT_AVAILABLE:
            raise
        members = []
    return {
        "qmgr": {"name": info["name"], "qsg": info["qsg"], "status": info["status"], "cf": qm.cf_connection(),
                 # the emulator's own state (not in IBM's DISPLAY QMSTATUS)
                 **{k: info[k] for k in ("IGQAGENT", "IGQRETRIES", "IGQRESTARTS", "IGQRETRYREASON") if k in info}},
        "members": members,
        "queues": [{k: q.get(k, "") for k in QUEUE_COLUMNS} for q in queues.get("objects", [])],
        "structures": structures.get("objects", []),
        "happenings": local_happenings(qm),  # newest first
        "igq_queue": IGQ_XMITQ,
        **(await _rates(qm, rates, history) if rates is not None else {}),
    }


async def _rates(qm: Any, rates: RateHistory, history: bool) -> dict[str, Any]:
    """The rates point (a new one when due: one CF status read per queue, no more often than
    ``rates.min_interval_ms`` however many consoles watch) and, with ``history``, all points."""
    if rates.due(qm.clock.now_ms()):
        readings = [QueueReading(obj.name, status.depth,
                                 {name: Counters(s.enq, s.deq, s.reset_ms) for name, s in status.stats.items()})
                    for obj, status in await qm.metrics.queue_statuses()]
        now = qm.clock.now_ms()
        if rates.due(now):  # another console's reading, made meanwhile, may have made the point
            rates.add(now, readings)
    out: dict[str, Any] = {"rates": rates.latest()}
    if history:
        out["history"] = rates.history()
    return out


#: How long a peer has to answer for the group's timeline.
PEER_TIMEOUT_S = 5.0


def local_happenings(qm: Any) -> list[dict[str, Any]]:
    """This QM's latest happenings, newest first. 2035 unless the caller may run MQSC."""
    qm.security.check_qmgr(current_principal.get(), "ADMIN")
    return [_happening(h) for h in reversed(qm.metrics.recent)]


async def group_happenings(qm: Any, credentials: Mapping[str, str]) -> dict[str, Any]:
    """The latest happenings of every active QM of the group, newest first: this QM's own, and
    each other's asked over HTTP with the caller's credentials (as CMDSCOPE sends a command on),
    so each QM checks the caller's rights itself. ``unanswered``: the QMs that did not answer."""
    happenings = local_happenings(qm)
    members = [m for m in await qm.group_info() if m.get("STATUS") == "ACTIVE" and m.get("QMNAME") != qm.name]

    async def one(client: httpx.AsyncClient, member: dict[str, Any]) -> list[dict[str, Any]] | None:
        try:
            r = await client.get(f"{member.get('URL')}/console/happenings", headers=dict(credentials))
            return list(r.json()["happenings"]) if r.status_code == 200 else None
        except (httpx.HTTPError, ValueError, KeyError, TypeError):
            return None

    async with httpx.AsyncClient(timeout=PEER_TIMEOUT_S, verify=getattr(qm, "peer_tls", True)) as client:
        answers = await asyncio.gather(*(one(client, m) for m in members))
    unanswered = [m["QMNAME"] for m, answer in zip(members, answers, strict=True) if answer is None]
    for answer in answers:
        happenings += answer or []
    happenings.sort(key=lambda h: -int(h.get("ts", 0)))
    return {"happenings": happenings, "unanswered": unanswered}


def _happening(record: dict[str, Any]) -> dict[str, Any]:
    """A happening as the timeline shows it: the event's reason name, and what its ``detail``
    says (the coordinating QM of an event, the counts of a peer recovery) as fields."""
    out = dict(record)
    if record.get("verb") == "EVENT" and record.get("rc"):
        out["reason"] = reason_name(int(record["rc"]))
    detail = record.get("detail")
    if isinstance(detail, str) and detail.startswith("{"):
        try:
            fields = json.loads(detail)
        except ValueError:
            fields = None  # free text stays as it is
        if isinstance(fields, dict):
            out.update({k: v for k, v in fields.items() if k not in out})
    return out
