"""CF structure commands: BACKUP, RECOVER and RESET CFSTRUCT, and DISPLAY CFSTATUS."""

from __future__ import annotations

import re
from typing import Any

from app.core.errors import MQError, echo
from app.core.names import matches
from app.core.reasons import MQRC
from app.mqsc.commands.base import CommandBase
from app.mqsc.parser import Command
from app.qmgr.definitions import recoverable


class StructureCommands(CommandBase):
    """BACKUP CFSTRUCT, RECOVER CFSTRUCT, RESET CFSTRUCT, DISPLAY CFSTATUS."""

    def _structure_names(self, cmd: Command, *, recoverable_only: bool) -> list[str]:
        """The structures a command names: a list, or a generic name (``*`` = all)."""
        if not cmd.name:
            raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR,
                          f"{cmd.verb} {cmd.objtype} needs a structure name in parentheses")
        out: list[str] = []
        for part in (p.strip() for p in cmd.name.split(",")):
            if "*" in part:
                out += [d.name for d in self.qm.cache.all("CFSTRUCT") if matches(part, d.name)
                        and (not recoverable_only or recoverable(d))]
            elif re.fullmatch(r"[A-Z][A-Z0-9]{0,11}", part):
                out.append(part)
            else:
                raise MQError(MQRC.OBJECT_NAME_ERROR,
                              f"'{echo(part)}' is not a CF structure name (1-12 of A-Z 0-9, first A-Z)")
        # each structure once, also when a generic name and a list name it twice
        return list(dict.fromkeys(out))

    async def backup_cfstruct(self, cmd: Command) -> None:
        """BACKUP CFSTRUCT(name) [EXCLINT(30-600)]."""
        kw = cmd.get("EXCLINT")
        raw = (kw.value or "") if kw else "30"
        if not raw.isdigit() or not 30 <= int(raw) <= 600:
            raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, f"EXCLINT({echo(raw)}) must be 30 to 600 seconds")
        for name in self._structure_names(cmd, recoverable_only=True):
            self.messages += await self.qm.structures.backup(name, int(raw))

    async def recover_cfstruct(self, cmd: Command) -> None:
        """RECOVER CFSTRUCT(name, ...) [TYPE(NORMAL | PURGE)]."""
        kind = cmd.value("TYPE", "NORMAL").upper()
        if kind not in ("NORMAL", "PURGE"):
            raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, f"TYPE({echo(kind)}) is not NORMAL or PURGE")
        self.messages += await self.qm.structures.recover(self._structure_names(cmd, recoverable_only=True),
                                                          purge=kind == "PURGE")

    async def reset_cfstruct(self, cmd: Command) -> None:
        """RESET CFSTRUCT(name) ACTION(FAIL): simulate a structure failure (CFLEVEL(5) only)."""
        action = cmd.value("ACTION").upper()
        if action != "FAIL":
            raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR, "RESET CFSTRUCT needs ACTION(FAIL)")
        self.messages += await self.qm.structures.fail(self._name(cmd))

    async def display_cfstatus(self, cmd: Command) -> list[dict[str, Any]]:
        """DISPLAY CFSTATUS(generic name) [TYPE(SUMMARY | CONNECT | BACKUP)]."""
        kind = cmd.value("TYPE", "SUMMARY").upper()
        if kind not in ("SUMMARY", "CONNECT", "BACKUP"):
            raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, f"TYPE({echo(kind)}) is not SUMMARY, CONNECT or BACKUP")
        names = self._structure_names(cmd, recoverable_only=False)
        for name in names:
            if self.qm.cache.cfstruct(name) is None and "*" not in (cmd.name or ""):
                raise MQError(MQRC.UNKNOWN_OBJECT_NAME, f"CFSTRUCT({echo(name)}) not found")
        if kind == "CONNECT":
            return [row for name in names for row in await self.qm.structures.connections(name)]
        rows = [await self.qm.structures.status(name, kind) for name in names]
        if kind == "SUMMARY":
            # Not an IBM attribute: which Redis node holds the structure (a Redis Cluster spreads
            # structures over its masters by their hash tags; a single Redis holds them all).
            for row in rows:
                tag = self.qm.cache.structure_tag(str(row["CFSTATUS"]))
                try:
                    row["CFNODE"] = await self.qm.queue_states.structure_node(tag)
                except MQError as exc:
                    if exc.reason != MQRC.CF_NOT_AVAILABLE:
                        raise
                    row["CFNODE"] = ""  # not reachable now
        return rows
