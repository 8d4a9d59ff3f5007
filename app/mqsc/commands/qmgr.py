"""Queue-manager commands: ALTER QMGR, DISPLAY QMGR, DISPLAY GROUP / QSG, RESET QSTATS and
REFRESH QMGR TYPE(EXPIRY)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from app.core import attributes
from app.core.errors import MQError, echo
from app.core.names import check_generic_name, matches
from app.core.objects import GROUP_LOCATION
from app.core.reasons import MQRC
from app.mqsc.commands.base import CommandBase
from app.mqsc.parser import Command
from app.qmgr.definitions import queue_location


class QmgrCommands(CommandBase):
    """ALTER QMGR, DISPLAY QMGR, DISPLAY GROUP, RESET QSTATS, REFRESH QMGR."""

    async def alter_qmgr(self, cmd: Command) -> None:
        keywords = [(k.name, k.value) for k in cmd.keywords if k.name != "CMDSCOPE"]
        attributes.apply_keywords("QMGR", {**attributes.defaults("QMGR"), **self.qm.attrs}, keywords)  # validate first
        igq_before = self.qm.attrs.get("IGQ")
        self.qm.attrs = await self.qm.workflow.alter_qmgr(self.qm.name, keywords)
        if self.qm.attrs.get("IGQ") != igq_before:
            self.qm.mqi.invalidate_igq()  # handles resolved through the group: MQRC_OBJECT_CHANGED

    async def reset_qstats(self, cmd: Command) -> list[dict[str, Any]]:
        """RESET QSTATS: this QM's statistics of each matching local queue since the last reset
        (or event message), which start again now."""
        pattern = self._name(cmd, generic=True)
        out = []
        for d in self.qm.cache.all("QUEUE"):
            if d.objtype != "QLOCAL" or d.location == GROUP_LOCATION or not matches(pattern, d.name):
                continue
            stats = await self.qm.queue_states.reset_stats(queue_location(self.qm.cache, d), self.qm.name)
            since = stats.reset_ms or self.qm.started_ms
            out.append({"QSTATS": d.name, "QSGDISP": d.qsgdisp, "MSGIN": stats.enq, "MSGOUT": stats.deq,
                        "HIQDEPTH": stats.hiq,
                        "TIMESINCERESET": max(0, (self.qm.clock.now_ms() - since) // 1000)})
        if not out and "*" not in pattern:
            raise MQError(MQRC.UNKNOWN_OBJECT_NAME, f"QLOCAL({echo(pattern)}) not found")
        return out

    async def refresh_qmgr(self, cmd: Command) -> None:
        """REFRESH QMGR TYPE(EXPIRY) NAME(generic name): discard expired messages now."""
        kind = cmd.value("TYPE").upper()
        if kind != "EXPIRY":
            raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR,
                          f"REFRESH QMGR TYPE({echo(kind)}) is not supported; use TYPE(EXPIRY)")
        pattern = check_generic_name(cmd.value("NAME") or "*")
        scanned, discarded = await self.qm.expiry.refresh(pattern)
        self.messages.append(f"{scanned} queue(s) scanned, {discarded} expired message(s) discarded")

    async def display_group(self, cmd: Command) -> list[dict[str, Any]]:
        """DISPLAY GROUP: the queue managers of the QSG and their state (CSQ5100I-style)."""
        return [{"QSGNAME": self.qm.qsg, **m} for m in await self.qm.group_info()]

    async def display_qmgr(self, cmd: Command) -> list[dict[str, Any]]:
        """DISPLAY QMGR: QMNAME, QSGNAME and the queue manager's attributes - what IBM's DISPLAY
        QMGR returns, nothing of this emulator's own (those are in GET /v1/qmgr)."""
        shown = {spec.name: attributes.display_value(spec, self.qm.attrs.get(spec.name, spec.default))
                 for spec in attributes.specs("QMGR").values()}
        return [{"QMNAME": self.qm.name, "QSGNAME": self.qm.qsg, **shown}]

    async def display_qmstatus(self, cmd: Command) -> list[dict[str, Any]]:
        """DISPLAY QMSTATUS, with IBM MQ on Multiplatforms' attributes only (z/OS has no such
        command): QMNAME, STATUS, STARTDA, STARTTI, CONNS, CMDSERV and CHINIT (STOPPED: there
        is no channel initiator). The emulator's own state - the IGQ agent's, the connection to
        the coupling facility - is GET /v1/qmgr's, /metrics' and the console's, never here, so
        a strict admin library reads IBM's shape. Answered from memory: it works while the
        coupling facility cannot be reached."""
        info = self.qm.info()
        started = datetime.fromtimestamp(self.qm.started_ms / 1000, tz=UTC)
        return [{"QMNAME": self.qm.name, "STATUS": info.get("status", "RUNNING"),
                 "STARTDA": started.strftime("%Y-%m-%d"), "STARTTI": started.strftime("%H.%M.%S"),
                 "CONNS": len(self.qm.mqi.connections),
                 "CMDSERV": getattr(getattr(self.qm, "cmdserver", None), "state", "RUNNING"),
                 "CHINIT": "STOPPED"}]

    async def display_cmdserv(self, cmd: Command) -> None:
        """DISPLAY CMDSERV: the state of the command server that reads SYSTEM.COMMAND.INPUT
        (app/cmdserver): z/OS answers with messages only, CSQN207I and CSQN206I."""
        server = getattr(self.qm, "cmdserver", None)
        state = server.state if server is not None else "STOPPED"
        enabled = "ENABLED" if state != "STOPPED" else "DISABLED"
        self.messages += [f"CSQN207I {self.qm.name} COMMAND SERVER {enabled}",
                          f"CSQN206I {self.qm.name} COMMAND SERVER STATUS IS {state}"]
