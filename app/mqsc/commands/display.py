"""DISPLAY of queues, processes and CF structure definitions (with WHERE), and DISPLAY QSTATUS."""

from __future__ import annotations

import re
from typing import Any

from app.core.errors import MQError
from app.core.names import matches
from app.core.objects import GROUP_LOCATION
from app.core.reasons import MQRC
from app.mqsc.commands.base import CommandBase
from app.mqsc.parser import Command
from app.qmgr.definitions import queue_location
from app.qmgr.display import display_object, live_counts


class DisplayCommands(CommandBase):
    """DISPLAY QLOCAL/QALIAS/QREMOTE/QUEUE/PROCESS/CFSTRUCT and DISPLAY QSTATUS."""

    async def display(self, cmd: Command) -> list[dict[str, Any]]:
        objtype = cmd.objtype or ""
        pattern = self._name(cmd, generic=True)
        queue_types = {"QLOCAL", "QALIAS", "QREMOTE", "QMODEL"}
        objclass = "QUEUE" if objtype in (*queue_types, "QUEUE") else objtype
        types = {"QLOCAL": {"QLOCAL"}, "QALIAS": {"QALIAS"}, "PROCESS": {"PROCESS"}, "CFSTRUCT": {"CFSTRUCT"},
                 "QREMOTE": {"QREMOTE"}, "QMODEL": {"QMODEL"}, "QUEUE": queue_types}[objtype]
        if objtype == "QUEUE" and cmd.get("TYPE"):
            wanted = cmd.value("TYPE").upper()
            if wanted not in (*queue_types, "ALL"):
                raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR,
                              f"TYPE({wanted}) is not QLOCAL, QALIAS, QREMOTE, QMODEL or ALL")
            types = queue_types if wanted == "ALL" else {wanted}
        dispositions = self._display_dispositions(cmd, objtype)
        defs = await self.qm.db(self.qm.repo.visible_to, self.qm.name, objclass)
        where = _parse_where(cmd)
        out = []
        for d in defs:
            if d.objtype not in types or not matches(pattern, d.name):
                continue
            if objtype != "CFSTRUCT" and d.qsgdisp not in dispositions:
                continue
            row = display_object(d)
            loc = queue_location(self.qm.qsg, d) if d.objtype == "QLOCAL" and d.location != GROUP_LOCATION else None
            if loc is not None and loc.tag not in self.qm.cf.failed:  # a failed structure has no counts
                row.update(live_counts(await self.qm.cf.queue_status(loc), self.qm.name))
            if where is None or where(row):
                out.append(row)
        if not out and "*" not in pattern:
            raise MQError(MQRC.UNKNOWN_OBJECT_NAME, f"{objtype}({pattern}) not found")
        return out

    def _display_dispositions(self, cmd: Command, objtype: str) -> set[str]:
        kw = cmd.get("QSGDISP")
        value = (kw.value or "").upper() if kw else "LIVE"
        choices = {"LIVE": {"QMGR", "COPY", "SHARED"}, "ALL": {"QMGR", "COPY", "SHARED", "GROUP"},
                   "PRIVATE": {"QMGR", "COPY"}, "QMGR": {"QMGR"}, "COPY": {"COPY"}, "GROUP": {"GROUP"},
                   "SHARED": {"SHARED"}}
        if value not in choices:
            raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, f"QSGDISP({value}) is not valid for DISPLAY")
        return choices[value]

    async def display_qstatus(self, cmd: Command) -> list[dict[str, Any]]:
        """DISPLAY QSTATUS: per local queue, one object per QM that has it open (at least this QM)."""
        pattern = self._name(cmd, generic=True)
        kind = (cmd.value("TYPE") or "QUEUE").upper()
        if kind not in ("QUEUE", "HANDLE"):
            raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, f"TYPE({kind}) is not QUEUE or HANDLE")
        out = []
        for d in self.qm.cache.all("QUEUE"):
            if d.objtype != "QLOCAL" or d.location == GROUP_LOCATION or not matches(pattern, d.name):
                continue
            if queue_location(self.qm.qsg, d).tag in self.qm.cf.failed and "*" in pattern:
                continue  # a generic DISPLAY shows what it can; a named queue answers 2373
            status = await self.qm.cf.queue_status(queue_location(self.qm.qsg, d))
            per_qm = status.opens
            holders = [q for q, c in per_qm.items() if int(c.get("handles", 0))] or [self.qm.name]
            for qmgr in sorted(holders):
                counts = per_qm.get(qmgr, {})
                out.append({
                    "QUEUE": d.name, "TYPE": kind, "QSGDISP": d.qsgdisp, "QMNAME": qmgr,
                    "CURDEPTH": status.depth, "IPPROCS": int(counts.get("ipprocs", 0)),
                    "OPPROCS": int(counts.get("opprocs", 0)), "UNCOM": "YES" if status.uncommitted else "NO",
                })
        if not out and "*" not in pattern:
            raise MQError(MQRC.UNKNOWN_OBJECT_NAME, f"QLOCAL({pattern}) not found")
        return out


_WHERE = re.compile(r"^\s*([A-Z0-9]+)\s+(EQ|NE|GT|LT|GE|LE|LK|NL)\s+(.+?)\s*$", re.IGNORECASE)


def _parse_where(cmd: Command):
    """DISPLAY ... WHERE(attr op value): EQ NE GT LT GE LE, and LK / NL with a trailing ``*``."""
    kw = cmd.get("WHERE")
    if kw is None:
        return None
    m = _WHERE.match(kw.value or "")
    if not m:
        raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR,
                      "WHERE needs (attribute operator value), e.g. WHERE(CURDEPTH GT 0)")
    attr, op, raw = m.group(1).upper(), m.group(2).upper(), m.group(3).strip("'")

    def test(row: dict[str, Any]) -> bool:
        if attr not in row:
            raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR, f"WHERE names {attr}, which these objects do not have")
        value = row[attr]
        if op in ("LK", "NL"):
            return matches(raw, str(value)) == (op == "LK")
        if isinstance(value, int):
            try:
                other: Any = int(raw)
            except ValueError:
                raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, f"WHERE value '{raw}' is not a number") from None
        else:
            value, other = str(value), raw
        return {"EQ": value == other, "NE": value != other, "GT": value > other, "LT": value < other,
                "GE": value >= other, "LE": value <= other}[op]

    return test
