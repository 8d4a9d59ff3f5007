"""Runs parsed MQSC commands against a queue manager, with z/OS QSGDISP semantics.

* QSGDISP(QMGR) definitions live on the executing QM's page set; QSGDISP(SHARED) ones (local
  queues only) and QSGDISP(GROUP) ones in the shared repository.
* A GROUP definition generates a QSGDISP(COPY) object on every queue manager of the group
  (DEFINE/ALTER regenerate them, DELETE removes them), as the z/OS command processor does.
* DEFINE, ALTER and DELETE default to QSGDISP(QMGR); DISPLAY defaults to QSGDISP(LIVE)
  (QMGR, COPY and SHARED); CLEAR QLOCAL to QSGDISP(PRIVATE).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import httpx

from app.core.errors import MQError, echo
from app.core.reasons import MQRC
from app.core.rights import current_principal
from app.mqsc.commands.base import DEFINABLE, MqscHost, select_attributes
from app.mqsc.commands.cfstruct import StructureCommands
from app.mqsc.commands.channel import ChannelCommands
from app.mqsc.commands.display import DisplayCommands
from app.mqsc.commands.objects import ObjectCommands
from app.mqsc.commands.pubsub import PubSubCommands
from app.mqsc.commands.qmgr import QmgrCommands
from app.mqsc.commands.security import SecurityCommands
from app.mqsc.parser import Command, ParseFailure, iter_commands, parse_command

#: The longest MQSC script one call takes (docs/howto/security.md, Limits).
MAX_SCRIPT_CHARS = 1_000_000
#: How long a script runs before it gives the event loop a turn: a script of thousands of
#: commands never holds the loop (docs/howto/security.md, Limits: 1 MB of DISPLAY QMGR held it 3 s).
_SLICE_S = 0.02


# The caller's credentials, sent on with a command that CMDSCOPE sends to other queue managers.
CREDENTIAL_HEADERS = ("authorization", "x-api-key", "cookie")
#: The message that heads each queue manager's responses in a CMDSCOPE command's answer.
SCOPE_RESPONSES = "CSQN121I"
_CMDSCOPE = re.compile(r"\bCMDSCOPE\s*\([^)]*\)", re.IGNORECASE)
_SCOPE_TIMEOUT_S = 60.0


async def run_script(qm: MqscHost, script: Any, credentials: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """Run every command of an MQSC script in order; one result per command. ``credentials``:
    the caller's authentication headers, sent with commands that CMDSCOPE runs on other QMs."""
    if not isinstance(script, str):
        raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR, "script must be a string of MQSC commands")
    if len(script) > MAX_SCRIPT_CHARS:
        raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR, f"script longer than {MAX_SCRIPT_CHARS} characters")
    results: list[dict[str, Any]] = []
    principal = current_principal.get()
    try:
        qm.security.check_qmgr(principal, "ADMIN")  # every MQSC command needs ADMIN
        denied: MQError | None = None
    except MQError as exc:
        denied = exc  # cheap check first: no command of the script is parsed, each answers 2035
    started = time.perf_counter()
    for text in iter_commands(script):
        if time.perf_counter() - started > _SLICE_S:
            await asyncio.sleep(0)
            started = time.perf_counter()
        if text is None:
            continue  # a tick in a long stretch of blank lines and comments
        if denied is not None:
            results.append(_failed(qm, text, denied))
            continue
        try:
            item: Command | ParseFailure = parse_command(text)
        except MQError as error:
            item = ParseFailure(text, error)
        if isinstance(item, ParseFailure):
            results.append(_failed(qm, item.text, item.error))
            continue
        try:
            qm.security.check_qmgr(principal, "ADMIN")  # again: a command before may have changed it
            scope = (item.value("CMDSCOPE") or "").strip().upper()
            if scope and scope != qm.name:
                results.append(await _run_scoped(qm, item, scope, credentials or {}))
                continue
            objects, messages = await Executor(qm).run(item)
        except MQError as exc:
            results.append(_failed(qm, item.text, exc))
            continue
        done = f"CSQ9022I {qm.name} {item.verb} {item.objtype or ''} NORMAL COMPLETION".replace("  ", " ")
        results.append({"command": item.text, "completion_code": 0, "reason": 0,
                        "messages": [*messages, done], "objects": objects})
    return results


def _retargeted(text: str, target: str) -> str:
    """``text`` with its CMDSCOPE keyword naming ``target``. Only the keyword is rewritten: a
    CMDSCOPE(...) inside a value - quoted (a DESCR, a WHERE value: '' inside quotes toggles
    twice) or within another keyword's parentheses (an unquoted value may nest them,
    ``DESCR(CMDSCOPE(X))``) - is the operator's text and is sent on as written."""
    pieces: list[str] = []
    quoted, depth, scanned, kept = False, 0, 0, 0
    for found in _CMDSCOPE.finditer(text):  # one pass over the text, however many matches
        for char in text[scanned:found.start()]:
            if char == "'":
                quoted = not quoted
            elif not quoted and char == "(":
                depth += 1
            elif not quoted and char == ")":
                depth = max(depth - 1, 0)
        scanned = found.start()
        if not quoted and depth == 0:  # the keyword itself: the match runs to its ')'
            pieces += [text[kept:found.start()], f"CMDSCOPE({target})"]
            kept = found.end()
    return "".join(pieces) + text[kept:]


async def _run_scoped(qm: MqscHost, cmd: Command, scope: str, credentials: Mapping[str, str]) -> dict[str, Any]:
    """CMDSCOPE(*) or CMDSCOPE(qmgr): the command runs on every active queue manager of the
    group, or on the one named, and the responses are merged as z/OS merges them: CSQN137I (the
    command was accepted and sent to n queue managers), then for each QM CSQN121I and its
    messages (which name it), its objects tagged with QMNAME, completion the worst of them, and
    last the summary: CSQN122I when every QM completed it, CSQN123E when any did not (z/OS:
    "processing ... has completed, but not successfully"). Each QM receives the command with
    CMDSCOPE naming itself, so it runs it locally."""
    members = {m["QMNAME"]: m for m in await qm.group_info()}
    if scope == "*":
        targets = sorted(name for name, m in members.items() if m.get("STATUS") == "ACTIVE")
    elif scope not in members:
        raise MQError(MQRC.Q_MGR_NAME_ERROR,
                      f"CMDSCOPE({echo(scope)}): {echo(scope)} is not a queue manager of {qm.qsg}")
    elif members[scope].get("STATUS") != "ACTIVE":
        raise MQError(MQRC.Q_MGR_NOT_AVAILABLE, f"CMDSCOPE({scope}): {scope} is not active in {qm.qsg}")
    else:
        targets = [scope]

    async def one(target: str) -> dict[str, Any]:
        text = _retargeted(cmd.text, target)
        if target == qm.name:
            return (await run_script(qm, text))[0]
        url = str(members[target].get("URL") or "")
        try:
            async with httpx.AsyncClient(timeout=_SCOPE_TIMEOUT_S, verify=getattr(qm, "peer_tls", True)) as client:
                r = await client.post(f"{url}/v1/admin/mqsc", json={"script": text}, headers=dict(credentials))
            body = r.json()
            if r.status_code == 200:
                result: dict[str, Any] = body["results"][0]
                return result
            error = body.get("error", {})
            raise MQError(int(error.get("reason", MQRC.Q_MGR_NOT_AVAILABLE)), str(error.get("message", r.text)))
        except MQError as exc:
            return _failed(qm, text, exc)
        except (httpx.HTTPError, ValueError, KeyError, IndexError) as exc:
            return _failed(qm, text, MQError(MQRC.Q_MGR_NOT_AVAILABLE, f"{target} at {url} did not answer: "
                                                                      f"{type(exc).__name__}"))

    answers = await asyncio.gather(*(one(t) for t in targets))
    verb = f"{cmd.verb} {cmd.objtype or ''}".strip()
    messages = [f"CSQN137I {qm.name} '{verb}' command accepted for CMDSCOPE({scope}), sent to {len(targets)}"]
    objects: list[dict[str, Any]] = []
    worst = max(answers, key=lambda a: a["completion_code"])
    for target, answer in zip(targets, answers, strict=True):
        messages.append(f"{SCOPE_RESPONSES} {qm.name} '{verb}' command responses from {target}")
        messages += answer.get("messages", [])
        objects += [obj if "QMNAME" in obj else {**obj, "QMNAME": target} for obj in answer.get("objects", [])]
    if worst["completion_code"] != 0:
        # z/OS's summary is true: not every queue manager completed the command
        messages.append(f"CSQN123E {qm.name} '{verb}' command for CMDSCOPE({scope}) abnormal completion")
    else:
        messages.append(f"CSQN122I {qm.name} '{verb}' command for CMDSCOPE({scope}) normal completion")
    # a failed command is repeated cut, as ``_failed`` repeats one (a value of 60 KB is not sent back)
    text = echo(cmd.text, COMMAND_ECHO_LIMIT) if worst["completion_code"] == 2 else cmd.text
    merged = {"command": text, "completion_code": worst["completion_code"], "reason": worst["reason"],
              "messages": messages, "objects": objects}
    if worst.get("reason_name"):
        merged["reason_name"] = worst["reason_name"]
    return merged


#: The most characters of a failed command that its result repeats (a legitimate command is
#: shorter; a command of megabytes is not sent back whole).
COMMAND_ECHO_LIMIT = 1024


def _failed(qm: MqscHost, text: str, exc: MQError) -> dict[str, Any]:
    return {"command": echo(text, COMMAND_ECHO_LIMIT), "completion_code": exc.comp, "reason": exc.reason,
            "reason_name": exc.reason_name, "messages": [exc.message, f"CSQ9023E {qm.name} ABNORMAL COMPLETION"],
            "objects": []}


class Executor(ObjectCommands, DisplayCommands, QmgrCommands, SecurityCommands, StructureCommands, PubSubCommands,
               ChannelCommands):
    """One MQSC command on one queue manager: the dispatcher over the command families
    (app/mqsc/commands/)."""

    async def run(self, cmd: Command) -> tuple[list[dict[str, Any]], list[str]]:
        table: dict[tuple[str, str], Callable[[Command], Awaitable[list[dict[str, Any]] | None]]]
        table = {("DEFINE", t): self.define for t in DEFINABLE}
        table |= {("ALTER", t): self.alter for t in DEFINABLE}
        table |= {("DELETE", t): self.delete for t in DEFINABLE}
        table |= {("DISPLAY", t): self.display for t in ("QLOCAL", "QALIAS", "QREMOTE", "QMODEL", "QUEUE",
                                                            "PROCESS", "CFSTRUCT", "TOPIC", "NAMELIST",
                                                            "CHANNEL")}
        table |= {("ALTER", "QMGR"): self.alter_qmgr, ("DISPLAY", "QMGR"): self.display_qmgr,
                  ("DISPLAY", "QSTATUS"): self.display_qstatus, ("CLEAR", "QLOCAL"): self.clear_qlocal,
                  ("DISPLAY", "GROUP"): self.display_group, ("DISPLAY", "QSG"): self.display_group,
                  ("REFRESH", "QMGR"): self.refresh_qmgr, ("RESET", "QSTATS"): self.reset_qstats,
                  ("SET", "AUTHREC"): self.set_authrec, ("DELETE", "AUTHREC"): self.delete_authrec,
                  ("DISPLAY", "AUTHREC"): self.display_authrec, ("REFRESH", "SECURITY"): self.refresh_security,
                  ("BACKUP", "CFSTRUCT"): self.backup_cfstruct, ("RECOVER", "CFSTRUCT"): self.recover_cfstruct,
                  ("RESET", "CFSTRUCT"): self.reset_cfstruct, ("DISPLAY", "CFSTATUS"): self.display_cfstatus,
                  ("DISPLAY", "QMSTATUS"): self.display_qmstatus, ("DISPLAY", "CONN"): self.display_conn,
                  ("DISPLAY", "CMDSERV"): self.display_cmdserv,
                  ("DISPLAY", "SUB"): self.display_sub, ("DISPLAY", "TPSTATUS"): self.display_tpstatus,
                  ("DELETE", "SUB"): self.delete_sub}
        # no channel initiator: answered as z/OS answers while it is not active (CSQM134I)
        table |= {(verb, objtype): self.needs_channel_initiator for verb, objtype in (
            ("START", "CHANNEL"), ("STOP", "CHANNEL"), ("PING", "CHANNEL"), ("RESET", "CHANNEL"),
            ("RESOLVE", "CHANNEL"), ("DISPLAY", "CHSTATUS"), ("DISPLAY", "CHINIT"), ("STOP", "CHINIT"),
            ("START", "LISTENER"), ("STOP", "LISTENER"), ("DISPLAY", "LSSTATUS"))}
        handler = table.get((cmd.verb, cmd.objtype or ""))
        if handler is None:
            raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR,
                          f"{cmd.verb} {cmd.objtype or ''} is not supported by this queue manager".strip())
        objects = await handler(cmd) or []
        if cmd.verb == "DISPLAY":
            objects = select_attributes(cmd, objects)
        return objects, self.messages
