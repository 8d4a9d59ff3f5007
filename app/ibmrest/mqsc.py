"""The MQSC resource of IBM's administrative REST API
(``POST /ibmmq/rest/v{1,2,3}/admin/action/qmgr/{qmgr}/mqsc``) on ``run_script``.

Request bodies (IBM, "POST - JSON formatted command" / "POST - plain text MQSC command"):

* ``{"type": "runCommand", "parameters": {"command": "DEFINE QLOCAL(Q1)"}}``
* ``{"type": "runCommandJSON", "command": "define", "qualifier": "qlocal", "name": "Q1",
  "parameters": {"maxdepth": 5000}, "responseParameters": ["curdepth"]}``

Responses: ``{"commandResponse": [...], "overallCompletionCode": n, "overallReasonCode": n}``,
HTTP 200 even when the command failed (overall 2 / 3008 MQRCCF_COMMAND_FAILED). A runCommand item
carries the command server's ``text`` lines; a runCommandJSON item carries ``parameters`` (one
item per object a DISPLAY returns, attribute names in lower case) or, on failure, ``message``.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from app.core.reasons import MQRC, CompCode
from app.ibmrest.errors import bad_body
from app.mqsc.executor import run_script
from app.mqsc.text import value_text

if TYPE_CHECKING:
    from app.qmgr.qmgr import QueueManager

_BARE = re.compile(r"[A-Za-z0-9./_%*]+")
# Keys that identify the object a DISPLAY row describes, returned whatever responseParameters
# asks (besides the row's first key, its name: QUEUE, PROCESS, CFSTRUCT, QMNAME ...).
_IDENTITY = frozenset({"TYPE", "QSGDISP", "QMNAME"})


async def run_command(qm: QueueManager, body: Any, credentials: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Run a runCommand or runCommandJSON request body; IBM's response body. ``credentials``: the
    caller's authentication headers, for the parts of a command CMDSCOPE sends to other QMs."""
    if not isinstance(body, dict) or body.get("type") not in ("runCommand", "runCommandJSON"):
        raise bad_body("the body must be a JSON object whose type is runCommand or runCommandJSON")
    if body["type"] == "runCommand":
        parameters = body.get("parameters")
        command = parameters.get("command") if isinstance(parameters, dict) else None
        if not isinstance(command, str) or not command.strip():
            raise bad_body("runCommand needs parameters.command, an MQSC command")
        results = await run_script(qm, command, credentials)
        return _overall([_text_item(qm, r) async for r in _taking_turns(results)])
    command, wanted = mqsc_of(body)
    results = await run_script(qm, command, credentials)
    items: list[dict[str, Any]] = []
    async for r in _taking_turns(results):
        if r["completion_code"] != CompCode.OK:
            items.append({"completionCode": r["completion_code"], "reasonCode": r["reason"],
                          "message": r["messages"]})
        elif r["objects"]:
            items.extend({"completionCode": 0, "reasonCode": 0, "parameters": _parameters(o, wanted)}
                         for o in r["objects"])
        else:
            items.append({"completionCode": 0, "reasonCode": 0})
    return _overall(items)


def mqsc_of(body: dict[str, Any]) -> tuple[str, list[str] | None]:
    """The MQSC command text of a runCommandJSON body and the response attributes it asks for
    (None: all). A parameter whose value is ``true`` or ``""`` is a bare keyword (REPLACE,
    PURGE, FORCE); ``false`` leaves it out; a list is a parenthesised list of values."""
    verb, qualifier, name = body.get("command"), body.get("qualifier"), body.get("name")
    if not isinstance(verb, str) or not _BARE.fullmatch(verb):
        raise bad_body("runCommandJSON needs command, an MQSC verb such as display or define")
    if not isinstance(qualifier, str) or not _BARE.fullmatch(qualifier):
        raise bad_body("runCommandJSON needs qualifier, an object type such as qlocal")
    words = [verb.upper(), qualifier.upper()]
    if name is not None:
        if not isinstance(name, str) or not _BARE.fullmatch(name):
            raise bad_body("name must be an IBM MQ object name or generic name")
        words[-1] += f"({name})"
    parameters = body.get("parameters") or {}
    if not isinstance(parameters, dict):
        raise bad_body("parameters must be a JSON object of MQSC attributes")
    for key, value in parameters.items():
        if not isinstance(key, str) or not _BARE.fullmatch(key):
            raise bad_body(f"'{key}' is not an MQSC keyword")
        if value is True or value == "":
            words.append(key.upper())
        elif value is False or value is None:
            continue
        elif isinstance(value, list):
            words.append(f"{key.upper()}({','.join(_value(v, key) for v in value)})")
        else:
            words.append(f"{key.upper()}({_value(value, key)})")
    wanted = body.get("responseParameters")
    if wanted is not None:
        if not isinstance(wanted, list) or not all(isinstance(w, str) for w in wanted):
            raise bad_body("responseParameters must be a list of attribute names")
        if any(w.lower() == "all" for w in wanted):
            wanted = None
    return " ".join(words), wanted


def _value(value: Any, key: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise bad_body(f"the value of {key} must be a string or a number")
    text = str(value)
    if _BARE.fullmatch(text):
        return text
    return "'" + text.replace("'", "''") + "'"  # MQSC quoting: a quote inside doubles


def _parameters(obj: dict[str, Any], wanted: list[str] | None) -> dict[str, Any]:
    keep = None if wanted is None else {w.upper() for w in wanted} | _IDENTITY | {next(iter(obj), "")}
    return {k.lower(): v for k, v in obj.items() if keep is None or k.upper() in keep}


async def _taking_turns(results: list[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
    """``results`` one by one, giving the event loop a turn every few hundred: the answer to a
    script of thousands of commands (up to MAX_SCRIPT_CHARS) never holds the loop long."""
    for i, result in enumerate(results):
        if i % 500 == 499:
            await asyncio.sleep(0)
        yield result


def _text_item(qm: QueueManager, result: dict[str, Any]) -> dict[str, Any]:
    """A runCommand item: the command server's lines, DISPLAY output as z/OS prints it."""
    lines: list[str] = []
    for obj in result.get("objects", []):
        kind = obj.get("TYPE") or next(iter(obj), "")
        lines.append(f"CSQM201I {qm.name} CSQMDRTC  DISPLAY {kind} DETAILS")
        lines.extend(f"{k}({value_text(v)})" for k, v in obj.items())
        lines.append(f"END {kind} DETAILS")
    lines.extend(result.get("messages", []))
    return {"completionCode": result["completion_code"], "reasonCode": result["reason"], "text": lines}


def _overall(items: list[dict[str, Any]]) -> dict[str, Any]:
    failed = any(i["completionCode"] != CompCode.OK for i in items)
    return {"commandResponse": items,
            "overallCompletionCode": int(CompCode.FAILED) if failed else 0,
            "overallReasonCode": int(MQRC.MQRCCF_COMMAND_FAILED) if failed else 0}
