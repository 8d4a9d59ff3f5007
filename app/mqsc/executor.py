"""Runs parsed MQSC commands against a queue manager, with z/OS QSGDISP semantics.

* QSGDISP(QMGR) definitions live on the executing QM's page set; QSGDISP(SHARED) ones (local
  queues only) and QSGDISP(GROUP) ones in the shared repository.
* A GROUP definition generates a QSGDISP(COPY) object on every queue manager of the group
  (DEFINE/ALTER regenerate them, DELETE removes them), as the z/OS command processor does.
* DEFINE, ALTER and DELETE default to QSGDISP(QMGR); DISPLAY defaults to QSGDISP(LIVE)
  (QMGR, COPY and SHARED); CLEAR QLOCAL to QSGDISP(PRIVATE).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from app.core.errors import MQError
from app.core.reasons import MQRC
from app.mqsc.commands.base import DEFINABLE, MqscHost
from app.mqsc.commands.cfstruct import StructureCommands
from app.mqsc.commands.display import DisplayCommands
from app.mqsc.commands.objects import ObjectCommands
from app.mqsc.commands.qmgr import QmgrCommands
from app.mqsc.commands.security import SecurityCommands
from app.mqsc.parser import Command, ParseFailure, parse_script
from app.security.rights import current_principal

MAX_SCRIPT_CHARS = 1_000_000


async def run_script(qm: MqscHost, script: Any) -> list[dict[str, Any]]:
    """Run every command of an MQSC script in order; one result per command."""
    if not isinstance(script, str):
        raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR, "script must be a string of MQSC commands")
    if len(script) > MAX_SCRIPT_CHARS:
        raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR, f"script longer than {MAX_SCRIPT_CHARS} characters")
    results = []
    principal = current_principal.get()
    for item in parse_script(script):
        if isinstance(item, ParseFailure):
            results.append(_failed(qm, item.text, item.error))
            continue
        try:
            qm.security.check_qmgr(principal, "ADMIN")  # every MQSC command needs ADMIN
            objects, messages = await Executor(qm).run(item)
        except MQError as exc:
            results.append(_failed(qm, item.text, exc))
            continue
        done = f"CSQ9022I {qm.name} {item.verb} {item.objtype or ''} NORMAL COMPLETION".replace("  ", " ")
        results.append({"command": item.text, "completion_code": 0, "reason": 0,
                        "messages": [*messages, done], "objects": objects})
    return results


def _failed(qm: MqscHost, text: str, exc: MQError) -> dict[str, Any]:
    return {"command": text, "completion_code": exc.comp, "reason": exc.reason, "reason_name": exc.reason_name,
            "messages": [exc.message, f"CSQ9023E {qm.name} ABNORMAL COMPLETION"], "objects": []}


class Executor(ObjectCommands, DisplayCommands, QmgrCommands, SecurityCommands, StructureCommands):
    """One MQSC command on one queue manager: the dispatcher over the command families
    (app/mqsc/commands/)."""

    async def run(self, cmd: Command) -> tuple[list[dict[str, Any]], list[str]]:
        table: dict[tuple[str, str], Callable[[Command], Awaitable[list[dict[str, Any]] | None]]]
        table = {("DEFINE", t): self.define for t in DEFINABLE}
        table |= {("ALTER", t): self.alter for t in DEFINABLE}
        table |= {("DELETE", t): self.delete for t in DEFINABLE}
        table |= {("DISPLAY", t): self.display for t in ("QLOCAL", "QALIAS", "QREMOTE", "QMODEL", "QUEUE",
                                                            "PROCESS", "CFSTRUCT")}
        table |= {("ALTER", "QMGR"): self.alter_qmgr, ("DISPLAY", "QMGR"): self.display_qmgr,
                  ("DISPLAY", "QSTATUS"): self.display_qstatus, ("CLEAR", "QLOCAL"): self.clear_qlocal,
                  ("DISPLAY", "GROUP"): self.display_group, ("DISPLAY", "QSG"): self.display_group,
                  ("REFRESH", "QMGR"): self.refresh_qmgr, ("RESET", "QSTATS"): self.reset_qstats,
                  ("SET", "AUTHREC"): self.set_authrec, ("DELETE", "AUTHREC"): self.delete_authrec,
                  ("DISPLAY", "AUTHREC"): self.display_authrec, ("REFRESH", "SECURITY"): self.refresh_security,
                  ("BACKUP", "CFSTRUCT"): self.backup_cfstruct, ("RECOVER", "CFSTRUCT"): self.recover_cfstruct,
                  ("RESET", "CFSTRUCT"): self.reset_cfstruct, ("DISPLAY", "CFSTATUS"): self.display_cfstatus}
        handler = table.get((cmd.verb, cmd.objtype or ""))
        if handler is None:
            raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR,
                          f"{cmd.verb} {cmd.objtype or ''} is not supported by this queue manager".strip())
        objects = await handler(cmd)
        return objects or [], self.messages
