"""What the live console shows of one queue manager, read as its MQSC commands read it: the
group's members, the CF structures (DISPLAY CFSTATUS), the local queues with their live depth
and open counts (DISPLAY QLOCAL), and the latest group happenings (events, trigger messages,
expiries, IGQ moves, peer recoveries). Everything runs as the caller, with the caller's rights:
the console is an administrator's tool, as MQSC is."""

from __future__ import annotations

from typing import Any

from app.core.errors import MQError
from app.core.reasons import MQRC
from app.core.rights import current_principal
from app.mqsc.executor import run_script

QUEUE_COLUMNS = ("QUEUE", "QSGDISP", "CURDEPTH", "MAXDEPTH", "IPPROCS", "OPPROCS", "CFSTRUCT", "DESCR")


async def console_state(qm: Any) -> dict[str, Any]:
    """One snapshot for the console. MQRC_NOT_AUTHORIZED (2035) unless the caller may run MQSC."""
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
        "happenings": list(reversed(qm.metrics.recent)),  # newest first
    }
