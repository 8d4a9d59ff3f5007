"""The command server of one queue manager (z/OS's CSQ command server).

It reads SYSTEM.COMMAND.INPUT through the queue manager's own MQI - gets with wait, under
syncpoint: the request is got and its replies put in one unit of work - and answers

* MQSC command strings (any format but MQADMIN): each command runs through the MQSC executor
  (``app.mqsc.executor.run_script``) and its reply set goes back as string messages framed as
  z/OS frames them, CSQN205I first (``mqscreply``);
* PCF messages (MQFMT_ADMIN): MQCFT_COMMAND_XR (z/OS's own form, answered with the extended
  responses MQCFT_XR_MSG / XR_ITEM / XR_SUMMARY) and MQCFT_COMMAND (the form tools written for
  distributed MQ send, answered with MQCFT_RESPONSE messages). Each PCF command runs as the MQSC
  command it stands for (``mapping``), so both paths share the MQSC layer's checks.

Authority is the MQSC endpoint's: the command runs as the user the request message's
UserIdentifier names (the putting connection's user unless it could set identity context),
which needs ADMIN on the queue manager. Replies go to ReplyToQ/ReplyToQMgr with CorrelId = the
request's MsgId (MQRO_PASS_CORREL_ID: its CorrelId), in the request's Encoding and CCSID, with
its priority and persistence.

The server's connection and calls are the queue manager's own: not recorded in the activity
log (``unrecorded``), as z/OS accounts no command server MQGETs to applications.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from typing import TYPE_CHECKING, Any

from app.activity.hooks import unrecorded
from app.cmdserver import mapping, pcf
from app.cmdserver import params as P
from app.cmdserver.mqscreply import reply_set
from app.core.calls import GetCall, GotMessage
from app.core.errors import MQError
from app.core.options import parse_get_options
from app.core.reasons import MQRC
from app.core.rights import current_principal
from app.mqsc.executor import SCOPE_RESPONSES, run_script
from app.qmgr.connection import connection_owner
from app.qmgr.tasks import stop_task

if TYPE_CHECKING:
    from app.qmgr.qmgr import QueueManager

log = logging.getLogger(__name__)

COMMAND_QUEUE = "SYSTEM.COMMAND.INPUT"
APPL_NAME = "CSQCMDSV"  # what DISPLAY CONN / QSTATUS show for the command server's connection
GET_WAIT_MS = 2000  # each wait ends to look at the stop event: a stop never waits longer
_RETRY_S = 0.5


class CommandServer:
    """The command server task of one queue manager. ``state``: what DISPLAY CMDSERV shows."""

    def __init__(self, qm: QueueManager) -> None:
        self.qm = qm  # given by the composition root (app/api/app.py): app/qmgr does not import this module
        # STARTING, RUNNING (serving the queue: waiting for a request or running one), STOPPED;
        # what DISPLAY CMDSERV (CSQN206I) shows
        self.state = "STOPPED"
        self.served = 0
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._hconn: str | None = None
        self._hobj: str | None = None

    def start(self) -> None:
        self._stopping = asyncio.Event()
        self.state = "STARTING"
        self._task = asyncio.create_task(self._run(), name=f"cmdserver-{self.qm.name}")

    async def stop(self) -> None:
        await stop_task(self._task, self._stopping, timeout_s=GET_WAIT_MS / 1000 + 2)
        self._task = None
        await self._disconnect()
        self.state = "STOPPED"

    # ---- the loop ----------------------------------------------------------------------------

    async def _run(self) -> None:
        unrecorded.set(True)  # this task's MQI calls are the queue manager's own
        connection_owner.set(self)  # never reaped as idle: it lives as long as the task
        while not self._stopping.is_set():
            try:
                if self.qm.status != "RUNNING":
                    await self._pause()
                    continue
                await self._serve_one()
            except MQError as exc:
                if exc.reason != MQRC.NO_MSG_AVAILABLE:
                    if self.qm.status == "RUNNING":  # else quiescing or rejoining: expected
                        log.warning("CSQN203I %s command server: %s (%s); retrying", self.qm.name,
                                    exc.message, exc.reason_name)
                    await self._disconnect()
                    await self._pause()
            except Exception:  # the server must go on whatever one message did
                log.exception("%s command server: unexpected failure; restarting its connection", self.qm.name)
                await self._disconnect()
                await self._pause()
        self.state = "STOPPED"

    async def _pause(self) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), _RETRY_S)

    async def _connect(self) -> tuple[str, str]:
        if self._hconn is None or self._hobj is None:
            mqi = self.qm.mqi
            conn = await mqi.connect(APPL_NAME)
            self._hconn = conn.hconn
            self._hobj = (await mqi.open(conn.hconn, COMMAND_QUEUE, "", ["INPUT_SHARED", "FAIL_IF_QUIESCING"])).hobj
        return self._hconn, self._hobj

    async def _disconnect(self) -> None:
        hconn, self._hconn, self._hobj = self._hconn, None, None
        if hconn is not None:
            with contextlib.suppress(Exception):
                await self.qm.mqi.disconnect(hconn, commit=False)

    async def _serve_one(self) -> None:
        hconn, hobj = await self._connect()
        self.state = "RUNNING"
        call = GetCall(parse_get_options(["WAIT", "SYNCPOINT", "FAIL_IF_QUIESCING"]), wait_ms=GET_WAIT_MS)
        got = await self.qm.mqi.get(hconn, hobj, call)
        try:
            try:
                replies = await self.answer(got)
            except MQError:
                raise  # the queue manager or the CF failed under the command: back out, get it again
            except Exception:  # a request this server cannot process must not come back forever
                log.exception("%s command server: request %s discarded", self.qm.name, got.md.msg_id)
                replies = []
            conn = self.qm.mqi.connection(hconn)
            for md, data in replies:
                try:
                    await self.qm.mqi.put_system(got.md.reply_to_q, md, data, qmgr=got.md.reply_to_qmgr or None,
                                                 conn=conn)
                except MQError as exc:  # no reply queue: the request is discarded, as z/OS does
                    log.warning("CSQN207E %s command server: reply to %s not put: %s", self.qm.name,
                                got.md.reply_to_q, exc.message)
                    break
            await self.qm.mqi.commit(hconn)
        except BaseException:
            with contextlib.suppress(Exception):
                await self.qm.mqi.backout(hconn)
            raise
        self.served += 1

    # ---- one request -------------------------------------------------------------------------

    async def answer(self, got: GotMessage) -> list[tuple[dict[str, Any], bytes]]:
        """The reply messages (MQMD fields, data) for one request message."""
        md = got.md
        if not md.reply_to_q.strip():
            return []  # nowhere to answer; the command is not run either (z/OS: no reply, no action)
        if md.format.strip() == "MQADMIN":
            return await self._pcf(got)
        return await self._mqsc(got)

    def _reply_md(self, got: GotMessage, fmt: str) -> dict[str, Any]:
        md = got.md
        report = set(md.report)
        correl = md.correl_id if "PASS_CORREL_ID" in report else md.msg_id
        out: dict[str, Any] = {"format": fmt, "msg_type": "REPLY", "correl_id": correl, "priority": md.priority,
                               "persistence": md.persistence, "encoding": md.encoding,
                               "coded_char_set_id": md.coded_char_set_id}
        if "PASS_MSG_ID" in report:
            out["msg_id"] = md.msg_id
        if "PASS_DISCARD_AND_EXPIRY" in report and md.expiry > 0:
            out["expiry"] = md.expiry
        return out

    async def _principal(self, got: GotMessage) -> Any:
        return await self.qm.security.principal_of(got.md.user_identifier.strip())

    async def _run_mqsc(self, got: GotMessage, text: str) -> list[dict[str, Any]]:
        principal = await self._principal(got)
        token = current_principal.set(principal)
        try:
            if "CMDSCOPE" not in text.upper():
                return await run_script(self.qm, text)
            async with self.qm.security.credentials_for_peers(principal) as credentials:
                return await run_script(self.qm, text, credentials)
        finally:
            current_principal.reset(token)

    async def _mqsc(self, got: GotMessage) -> list[tuple[dict[str, Any], bytes]]:
        md = self._reply_md(got, "MQSTR")
        ccsid = got.md.coded_char_set_id
        text = pcf.decode_text(got.data, ccsid if ccsid else 1208)
        try:
            results = await self._run_mqsc(got, text)
        except MQError as exc:
            results = [{"command": text, "completion_code": exc.comp, "reason": exc.reason,
                        "messages": [exc.message, f"CSQ9023E {self.qm.name} ABNORMAL COMPLETION"], "objects": []}]
        out = []
        for result in results:
            for line in reply_set(self.qm.name, result):
                out.append((md, pcf.encode_text(line, ccsid if ccsid else 1208)))
        return out

    # ---- PCF -----------------------------------------------------------------------------------

    async def _pcf(self, got: GotMessage) -> list[tuple[dict[str, Any], bytes]]:
        md = self._reply_md(got, "MQADMIN")
        big = pcf.is_big_endian(got.md.encoding)
        ccsid = got.md.coded_char_set_id or 1208
        try:
            header = pcf.decode_header(got.data, big=big)
        except pcf.PcfError as exc:
            head = pcf.Header(type=pcf.MQCFT_RESPONSE, comp_code=2, reason=exc.reason)
            return [(md, pcf.encode(head, [], big=big, ccsid=ccsid))]
        extended = header.type == pcf.MQCFT_COMMAND_XR
        responder = _Responder(self.qm.name, header.command, extended)
        if header.type not in (pcf.MQCFT_COMMAND, pcf.MQCFT_COMMAND_XR):
            responder.fail(pcf.RC_CFH_TYPE_ERROR)
        else:
            await self._run_pcf(got, responder, big, ccsid)
        return [(md, pcf.encode(h, ps, big=big, ccsid=ccsid)) for h, ps in responder.messages()]

    async def _run_pcf(self, got: GotMessage, r: _Responder, big: bool, ccsid: int) -> None:
        try:
            message = pcf.decode(got.data, big=big, ccsid=ccsid)
            plan = mapping.plan(message.header.command, message.parameters)
        except pcf.PcfError as exc:
            r.fail(exc.reason)
            return
        except mapping.RequestError as exc:
            r.fail(exc.reason, exc.parameter)
            return
        if plan.action == "PING":
            return
        try:
            text: str | None = plan.mqsc
            if plan.needs_type:
                text = await self._with_queue_type(got, plan, r)
            if text is None:
                return
            results = await self._run_mqsc(got, text)
        except MQError as exc:  # the requesting user is not known (authentication on)
            r.fail(_pcf_reason(exc.reason))
            return
        empty: dict[str, Any] = {"completion_code": 0, "reason": 0, "objects": [], "messages": []}
        result: dict[str, Any] = results[0] if results else empty
        if result.get("completion_code"):
            reason = int(result.get("reason", MQRC.MQRCCF_COMMAND_FAILED))
            if plan.family == "CHANNEL" and reason == MQRC.UNKNOWN_OBJECT_NAME:
                r.fail(MQRC.MQRCCF_CHANNEL_NOT_FOUND, P.CHANNEL_NAME)  # IBM's PCF answer for a channel
                return
            r.fail(_pcf_reason(reason), None, comp=int(result["completion_code"]))
            return
        objects = list(result.get("objects", []))
        if plan.action == "ESCAPE":
            r.add_items(mapping.escape_items([str(m) for m in result.get("messages", [])]), self.qm.name)
            return
        if plan.scope and r.extended:
            by_qm: dict[str, list[dict[str, Any]]] = {}
            for obj in objects:
                by_qm.setdefault(str(obj.get("QMNAME", self.qm.name)), []).append(obj)
            r.scoped = True
            for qm in _targets(result, by_qm):
                r.add_items(mapping.items(plan, by_qm.get(qm, [])), qm)
            return
        r.add_items(mapping.items(plan, objects), self.qm.name)

    async def _with_queue_type(self, got: GotMessage, plan: mapping.Plan, r: _Responder) -> str | None:
        """ALTER/DELETE of a queue named without QType: its type from DISPLAY QUEUE."""
        found = await self._run_mqsc(got, f"DISPLAY QUEUE({plan.needs_type})")
        first = found[0] if found else {}
        if first.get("completion_code") or not first.get("objects"):
            r.fail(_pcf_reason(int(first.get("reason", MQRC.UNKNOWN_OBJECT_NAME))), P.Q_NAME)
            return None
        return plan.mqsc.replace("{TYPE}", str(first["objects"][0].get("TYPE", "QLOCAL")), 1)


def _targets(result: dict[str, Any], by_qm: dict[str, list[dict[str, Any]]]) -> list[str]:
    """The queue managers a CMDSCOPE command ran on, from the merged messages (CSQN121I)."""
    names = []
    for m in result.get("messages", []):
        text = str(m)
        if text.startswith(SCOPE_RESPONSES) and " from " in text:
            names.append(text.rsplit(" from ", 1)[1].strip())
    return names or sorted(by_qm)


#: MQI reasons the MQSC layer gives where IBM's command server answers a PCF command with an
#: MQRCCF_* reason of its own (MQRC_UNKNOWN_OBJECT_NAME stays: PCF answers it too).
_PCF_REASONS: dict[int, int] = {int(MQRC.OBJECT_ALREADY_EXISTS): 4001}  # MQRCCF_OBJECT_ALREADY_EXISTS


def _pcf_reason(reason: int) -> int:
    """The MQSC layer's reason as the PCF answer's Reason."""
    return _PCF_REASONS.get(reason, reason)


class _Responder:
    """Collects one command's answer and frames it: standard responses (MQCFT_RESPONSE, one per
    item, MQCFC_LAST on the last) or z/OS extended responses (sets of XR_MSG / XR_ITEM ended by
    an XR_SUMMARY with MQCFC_LAST; with CMDSCOPE, an accepting set naming the others with
    MQBACF_RESPONSE_SET, one set per queue manager and a completing set)."""

    def __init__(self, qmgr: str, command: int, extended: bool) -> None:
        self.qmgr = qmgr
        self.command = command
        self.extended = extended
        self.comp = 0
        self.reason = 0
        self.error_parameter: int | None = None
        self.sets: list[tuple[str, list[list[pcf.Parameter]]]] = []
        self.scoped = False

    def fail(self, reason: int, parameter: int | None = None, comp: int = 2) -> None:
        self.comp, self.reason, self.error_parameter = comp, reason, parameter

    def add_items(self, items: list[list[pcf.Parameter]], qmgr: str) -> None:
        self.sets.append((qmgr, items))

    def messages(self) -> list[tuple[pcf.Header, list[pcf.Parameter]]]:
        if not self.extended:
            return self._standard()
        if self.scoped:
            return self._scoped()
        return self._set(self.qmgr, self.sets[0][1] if self.sets else [], self._id(), self.comp, self.reason)

    def _standard(self) -> list[tuple[pcf.Header, list[pcf.Parameter]]]:
        if self.comp:
            extra = [pcf.Parameter(pcf.MQCFT_INTEGER, P.PARAMETER_ID, self.error_parameter)] \
                if self.error_parameter is not None else []
            return [(pcf.Header(pcf.MQCFT_RESPONSE, self.command, comp_code=self.comp, reason=self.reason), extra)]
        items = [i for _, s in self.sets for i in s] or [[]]
        return [(pcf.Header(pcf.MQCFT_RESPONSE, self.command, msg_seq_number=n + 1,
                            control=pcf.MQCFC_LAST if n == len(items) - 1 else pcf.MQCFC_NOT_LAST), params)
                for n, params in enumerate(items)]

    @staticmethod
    def _id() -> bytes:
        return secrets.token_bytes(24)

    def _ident(self, rid: bytes, qmgr: str) -> list[pcf.Parameter]:
        return [pcf.Parameter(pcf.MQCFT_BYTE_STRING, P.RESPONSE_ID, rid),
                pcf.Parameter(pcf.MQCFT_STRING, P.RESPONSE_Q_MGR_NAME, qmgr)]

    def _set(self, qmgr: str, items: list[list[pcf.Parameter]], rid: bytes, comp: int, reason: int,
             msgs: list[list[pcf.Parameter]] | None = None) -> list[tuple[pcf.Header, list[pcf.Parameter]]]:
        out: list[tuple[pcf.Header, list[pcf.Parameter]]] = []
        v3 = pcf.MQCFH_VERSION_3

        def add(kind: int, params: list[pcf.Parameter], c: int = 0, r: int = 0, last: bool = False) -> None:
            out.append((pcf.Header(kind, self.command, v3, len(out) + 1,
                                   pcf.MQCFC_LAST if last else pcf.MQCFC_NOT_LAST, c, r),
                        [*self._ident(rid, qmgr), *params]))

        for m in msgs or []:
            add(pcf.MQCFT_XR_MSG, m)
        if comp:
            extra = [pcf.Parameter(pcf.MQCFT_INTEGER, P.PARAMETER_ID, self.error_parameter)] \
                if self.error_parameter is not None else []
            add(pcf.MQCFT_XR_MSG, extra, comp, reason)
        for params in items:
            add(pcf.MQCFT_XR_ITEM, params)
        add(pcf.MQCFT_XR_SUMMARY, [], comp, reason, last=True)
        return out

    def _scoped(self) -> list[tuple[pcf.Header, list[pcf.Parameter]]]:
        ids = [self._id() for _ in self.sets]
        info = pcf.MQCFT_INTEGER
        accepted = [[pcf.Parameter(info, P.COMMAND_INFO, P.MQCMDI_CMDSCOPE_ACCEPTED),
                     *[pcf.Parameter(pcf.MQCFT_BYTE_STRING, P.RESPONSE_SET, i) for i in ids]]]
        out = self._set(self.qmgr, [], self._id(), 0, 0, accepted)
        for rid, (qmgr, items) in zip(ids, self.sets, strict=True):
            generated = [[pcf.Parameter(info, P.COMMAND_INFO, P.MQCMDI_CMDSCOPE_GENERATED)]]
            out += self._set(qmgr, items, rid, self.comp, self.reason, generated)
        completed = [[pcf.Parameter(info, P.COMMAND_INFO, P.MQCMDI_CMDSCOPE_COMPLETED)]]
        out += self._set(self.qmgr, [], self._id(), self.comp, self.reason, completed)
        return out
