"""DISPLAY of queues, processes and CF structure definitions (with WHERE), and DISPLAY QSTATUS."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from app.core import attributes, channels
from app.core.errors import MQError, echo
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
                 "TOPIC": {"TOPIC"}, "NAMELIST": {"NAMELIST"}, "CHANNEL": {"CHANNEL"},
                 "QREMOTE": {"QREMOTE"}, "QMODEL": {"QMODEL"}, "QUEUE": queue_types}[objtype]
        if objtype == "QUEUE" and cmd.get("TYPE"):
            wanted = cmd.value("TYPE").upper()
            if wanted not in (*queue_types, "ALL"):
                raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR,
                              f"TYPE({echo(wanted)}) is not QLOCAL, QALIAS, QREMOTE, QMODEL or ALL")
            types = queue_types if wanted == "ALL" else {wanted}
        dispositions = self._display_dispositions(cmd, objtype)
        defs = await self.qm.workflow.visible_to(self.qm.name, objclass)
        where = _parse_where(cmd)
        out = []
        by_type = _type_filter(cmd, objtype)
        for d in defs:
            if d.objtype not in types or not matches(pattern, d.name):
                continue
            if by_type is not None and not by_type(d.attrs):
                continue
            if objtype != "CFSTRUCT" and d.qsgdisp not in dispositions:
                continue
            row = display_object(d)
            loc = queue_location(self.qm.cache, d) if d.objtype == "QLOCAL" and d.location != GROUP_LOCATION else None
            if loc is not None and loc.tag not in self.qm.queue_states.failed:  # a failed structure has no counts
                row.update(live_counts(await self.qm.queue_states.queue_status(loc), self.qm.name))
            if where is None or where(row):
                out.append(row)
        if not out and "*" not in pattern:
            raise MQError(MQRC.UNKNOWN_OBJECT_NAME, f"{objtype}({echo(pattern)}) not found")
        return out

    def _display_dispositions(self, cmd: Command, objtype: str) -> set[str]:
        kw = cmd.get("QSGDISP")
        value = (kw.value or "").upper() if kw else "LIVE"
        choices = {"LIVE": {"QMGR", "COPY", "SHARED"}, "ALL": {"QMGR", "COPY", "SHARED", "GROUP"},
                   "PRIVATE": {"QMGR", "COPY"}, "QMGR": {"QMGR"}, "COPY": {"COPY"}, "GROUP": {"GROUP"},
                   "SHARED": {"SHARED"}}
        if value not in choices:
            raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, f"QSGDISP({echo(value)}) is not valid for DISPLAY")
        return choices[value]

    async def display_qstatus(self, cmd: Command) -> list[dict[str, Any]]:
        """DISPLAY QSTATUS TYPE(QUEUE): per local queue, one row per QM that has it open (at least
        this QM), each with that QM's own IPPROCS/OPPROCS and last put/get (API.md); run for
        CMDSCOPE (each QM gets the command naming itself) only this QM's row, so CMDSCOPE(*) gives
        one row per QM, none repeated, as z/OS answers. TYPE(HANDLE): one row per handle this QM
        has open on it (IBM's per-handle attributes; the handles live in this QM's memory -
        CMDSCOPE(*) gathers every QM's)."""
        pattern = self._name(cmd, generic=True)
        kind = (cmd.value("TYPE") or "QUEUE").upper()
        if kind not in ("QUEUE", "HANDLE"):
            raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, f"TYPE({echo(kind)}) is not QUEUE or HANDLE")
        out: list[dict[str, Any]] = []
        found = False
        me = self.qm.name
        for d in self.qm.cache.all("QUEUE"):
            if d.objtype != "QLOCAL" or d.location == GROUP_LOCATION or not matches(pattern, d.name):
                continue
            if queue_location(self.qm.cache, d).tag in self.qm.queue_states.failed and "*" in pattern:
                continue  # a generic DISPLAY shows what it can; a named queue answers 2373
            found = True
            if kind == "HANDLE":
                out += self._handle_rows(d, cmd.value("OPENTYPE").upper() or "ALL")
                continue
            status = await self.qm.queue_states.queue_status(queue_location(self.qm.cache, d))
            if cmd.value("CMDSCOPE"):
                holders = [me]
            else:
                holders = sorted(q for q, c in status.opens.items() if int(c.get("handles", 0))) or [me]
            for qmgr in holders:
                counts = status.opens.get(qmgr, {})  # the CF keeps the open counts per QM
                row: dict[str, Any] = {"QUEUE": d.name, "TYPE": kind, "QSGDISP": d.qsgdisp}
                if d.qsgdisp == "SHARED":
                    row["QMNAME"] = qmgr  # the z/OS response to a shared queue's QSTATUS names its QM
                stats = status.stats.get(qmgr)
                row.update({
                    "CURDEPTH": status.depth, "IPPROCS": int(counts.get("ipprocs", 0)),
                    "OPPROCS": int(counts.get("opprocs", 0)), "UNCOM": "YES" if status.uncommitted else "NO",
                    **_last_use("LPUT", stats.last_put_ms if stats else 0),
                    **_last_use("LGET", stats.last_get_ms if stats else 0),
                    # IBM shows these blank while queue monitoring (MONQ) is off, which it is here
                    "MSGAGE": "", "QTIME": "",
                })
                out.append(row)
        if not found and "*" not in pattern:
            raise MQError(MQRC.UNKNOWN_OBJECT_NAME, f"QLOCAL({echo(pattern)}) not found")
        return out

    def _handle_rows(self, d: Any, opentype: str) -> list[dict[str, Any]]:
        """DISPLAY QSTATUS TYPE(HANDLE) rows of this QM's handles on queue ``d`` (opened by its
        name or through an alias that resolves to it). OPENTYPE(INPUT|OUTPUT|ALL) as IBM."""
        if opentype not in ("ALL", "INPUT", "OUTPUT"):
            raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, f"OPENTYPE({echo(opentype)}) is not ALL, INPUT or OUTPUT")
        rows = []
        for conn in list(self.qm.mqi.connections.values()):
            for handle in list(conn.handles.values()):
                base = handle.resolved.base
                if base.name != d.name or base.qsgdisp != d.qsgdisp:
                    continue
                o = handle.options
                if (opentype == "INPUT" and not o.any_input) or (opentype == "OUTPUT" and not o.output):
                    continue
                rows.append({
                    "QUEUE": d.name, "TYPE": "HANDLE", "QSGDISP": d.qsgdisp, "APPLTAG": conn.appl_name,
                    "APPLTYPE": "USER", "USERID": conn.user_id, "CONN": conn.hconn, "HANDLE": handle.hobj,
                    "OPENOPTS": open_options_value(o), "INPUT": {"SHARED": "SHARED", "EXCLUSIVE": "EXCL"}.get(
                        o.input or "", "NO"),
                    "OUTPUT": _yes(o.output), "BROWSE": _yes(o.browse), "INQUIRE": _yes(o.inquire),
                    "SET": _yes(o.set), "HSTATE": "ACTIVE" if conn.busy else "INACTIVE",
                    **unit_of_work(conn), "QMURID": conn.hconn if conn.uow_tags else "0",
                })
        return rows

    async def display_conn(self, cmd: Command) -> list[dict[str, Any]]:
        """DISPLAY CONN(generic) TYPE(CONN|HANDLE|ALL): this QM's connections (IBM's connection
        attributes; the connection id is the hconn), and with HANDLE or ALL one row per open
        handle of each (OBJNAME, OBJTYPE, OPENOPTS)."""
        pattern = (cmd.name or "").strip()
        if not pattern:
            raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR, "DISPLAY CONN needs a connection id or * in parentheses")
        kind = (cmd.value("TYPE") or "CONN").upper()
        if kind not in ("CONN", "HANDLE", "ALL"):
            raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, f"TYPE({echo(kind)}) is not CONN, HANDLE or ALL")
        rows: list[dict[str, Any]] = []
        for conn in sorted(self.qm.mqi.connections.values(), key=lambda c: c.hconn):
            if not matches(pattern.upper(), conn.hconn.upper()):  # an unquoted id is folded to upper case
                continue
            if kind in ("CONN", "ALL"):
                rows.append({"CONN": conn.hconn, "TYPE": "CONN", "APPLTAG": conn.appl_name, "APPLTYPE": "USER",
                             "USERID": conn.user_id, "CONNOPTS": "MQCNO_NONE", **unit_of_work(conn),
                             "UOWSTATE": "ACTIVE" if conn.uow_tags else "NONE"})
            if kind in ("HANDLE", "ALL"):
                for handle in list(conn.handles.values()):
                    rows.append({"CONN": conn.hconn, "TYPE": "HANDLE", "OBJNAME": handle.resolved.opened.name,
                                 "OBJTYPE": "QUEUE", "QSGDISP": handle.resolved.base.qsgdisp,
                                 "OPENOPTS": open_options_value(handle.options), "HANDLE": handle.hobj,
                                 "HSTATE": "ACTIVE" if conn.busy else "INACTIVE"})
        if not rows and "*" not in pattern:
            raise MQError(MQRC.UNKNOWN_OBJECT_NAME, f"CONN({echo(pattern)}) not found on {self.qm.name}")
        return rows


def _type_filter(cmd: Command, objtype: str) -> Callable[[dict[str, Any]], bool] | None:
    """DISPLAY CHANNEL(...) TYPE(chltype) and DISPLAY NAMELIST(...) NLTYPE(type): only the objects
    of that type (ALL, or the keyword absent: every one)."""
    keyword, attr, words = {"CHANNEL": ("TYPE", "CHLTYPE", channels.CHANNEL_TYPES),
                            "NAMELIST": ("NLTYPE", "NLTYPE", attributes.specs("NAMELIST")["NLTYPE"].choices)}.get(
        objtype, ("", "", ()))
    given = cmd.get(keyword) if keyword else None
    if objtype == "CHANNEL" and (given is None or given.value is None):
        given = cmd.get("CHLTYPE")  # DISPLAY CHANNEL's synonym of TYPE (a value: not the attribute)
        keyword = "CHLTYPE"
    if given is None or given.value is None:
        return None
    wanted = given.value.upper()
    wanted = "QUEUE" if wanted == "Q" and objtype == "NAMELIST" else wanted
    if wanted == "ALL":
        return None
    if wanted not in words:
        raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR,
                      f"{keyword}({echo(wanted)}) is not ALL or one of {', '.join(words)}")
    return lambda attrs: attrs.get(attr) == wanted


# MQOO_ values (IBM MQ cmqc.h) that make up OPENOPTS.
_MQOO = {"INPUT_AS_Q_DEF": 1, "INPUT_SHARED": 2, "INPUT_EXCLUSIVE": 4, "BROWSE": 8, "OUTPUT": 16, "INQUIRE": 32,
         "SET": 64, "FAIL_IF_QUIESCING": 8192}


def open_options_value(o: Any) -> int:
    """A handle's open options as IBM's OPENOPTS integer (the sum of its MQOO_ values)."""
    value = _MQOO["INPUT_AS_Q_DEF"] if o.input_as_q_def else _MQOO.get(f"INPUT_{o.input}", 0) if o.input else 0
    for name, on in (("BROWSE", o.browse), ("OUTPUT", o.output), ("INQUIRE", o.inquire), ("SET", o.set),
                     ("FAIL_IF_QUIESCING", o.fail_if_quiescing)):
        value += _MQOO[name] if on else 0
    return value


def unit_of_work(conn: Any) -> dict[str, Any]:
    """URTYPE and URID of a connection's unit of work: the queue manager's own units of work
    (URTYPE(QMGR)); URID is the connection's id while a unit of work is in progress, else 0s."""
    return {"URTYPE": "QMGR", "URID": conn.hconn if conn.uow_tags else "0" * 16}


def _yes(flag: bool) -> str:
    return "YES" if flag else "NO"


def _last_use(prefix: str, ms: int) -> dict[str, str]:
    """LPUTDATE/LPUTTIME or LGETDATE/LGETTIME (IBM: blank when there has been none)."""
    if not ms:
        return {f"{prefix}DATE": "", f"{prefix}TIME": ""}
    when = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return {f"{prefix}DATE": when.strftime("%Y-%m-%d"), f"{prefix}TIME": when.strftime("%H.%M.%S")}


_WHERE = re.compile(r"^\s*([A-Z0-9]+)\s+(EQ|NE|GT|LT|GE|LE|LK|NL)\s+(.+?)\s*$", re.IGNORECASE)
# IBM (DISPLAY QUEUE, WHERE): "you cannot use the CMDSCOPE, QDPHIEV, QDPLOEV, QDPMAXEV, QSGDISP,
# or QSVCIEV parameters as filter keywords" (DISPLAY PROCESS and the others: CMDSCOPE, QSGDISP).
_NOT_FILTERS = frozenset({"CMDSCOPE", "QSGDISP", "QDPHIEV", "QDPLOEV", "QDPMAXEV", "QSVCIEV"})


def _parse_where(cmd: Command) -> Callable[[dict[str, Any]], bool] | None:
    """DISPLAY ... WHERE(attr op value): EQ NE GT LT GE LE, and LK / NL with a trailing ``*``."""
    kw = cmd.get("WHERE")
    if kw is None:
        return None
    m = _WHERE.match(kw.value or "")
    if not m:
        raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR,
                      "WHERE needs (attribute operator value), e.g. WHERE(CURDEPTH GT 0)")
    attr, op, raw = m.group(1).upper(), m.group(2).upper(), m.group(3).strip("'")
    if attr in _NOT_FILTERS:
        raise MQError(MQRC.MQRCCF_FILTER_ERROR, f"{echo(attr)} cannot be used as a filter keyword in WHERE")

    def test(row: dict[str, Any]) -> bool:
        if attr not in row:
            raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR, f"WHERE names {echo(attr)}, which these objects do not have")
        value = row[attr]
        if op in ("LK", "NL"):
            return matches(raw, str(value)) == (op == "LK")
        if isinstance(value, int):
            try:
                other: Any = int(raw)
            except ValueError:
                raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, f"WHERE value '{echo(raw)}' is not a number") from None
        else:
            value, other = str(value), raw
        return bool({"EQ": value == other, "NE": value != other, "GT": value > other, "LT": value < other,
                     "GE": value >= other, "LE": value <= other}[op])

    return test
