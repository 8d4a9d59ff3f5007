"""IBM's messaging REST API as MQI calls on this queue manager.

Every call runs on an internal connection of its own (MQCONN ... MQDISC), the way mqweb serves
each request on a JMS session; as there, puts and gets use no syncpoint (a non-transacted JMS
session), so nothing is left in a unit of work when the call returns.

* POST     -> MQPUT1 of an MQSTR message (NO_SYNCPOINT).
* GET      -> MQOPEN(BROWSE), MQGET(BROWSE_FIRST [, WAIT]) of the first matching message.
* DELETE   -> the browse above, then MQGET(NO_SYNCPOINT) matching that message's MsgId: IBM
              leaves a message that is not text on the queue, so it is looked at before it is
              taken. A message taken by another getter in between is looked for again; a
              message found after the HTTP client has gone away is left where it is.
* messagelist -> MQOPEN(BROWSE), BROWSE_FIRST / BROWSE_NEXT with a zero-length buffer
              (ACCEPT_TRUNCATED_MSG): descriptors only.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.core.calls import DEFAULT_BUFFER_LENGTH, GetCall, GotMessage, PutCall
from app.core.convert import as_unicode
from app.core.errors import MQError
from app.core.mqmd import NO_ID, TEXT_FORMATS, validate_put_md
from app.core.options import parse_get_options, parse_put_options
from app.core.reasons import MQRC
from app.ibmrest import headers as h
from app.ibmrest.errors import from_mq_error, incompatible_message

if TYPE_CHECKING:
    from app.qmgr.qmgr import QueueManager

# PutApplName of messages put through the REST API (mqweb's are put by the web server).
APPL_NAME = "IBM MQ REST API"
# A messagelist without ``limit`` lists at most this many messages (IBM gives no maximum; an
# unbounded list of a deep queue would hold the call for long).
MESSAGE_LIST_MAX = 10_000


@dataclass(frozen=True)
class ReceivedMessage:
    """A message as the REST API returns it: text body and response headers."""

    text: str
    headers: dict[str, str]


class Messaging:
    """The messaging REST verbs of one queue manager."""

    def __init__(self, qm: QueueManager) -> None:
        self.qm = qm

    async def post(self, version: str, queue: str, request_headers: dict[str, str], content_type: str | None,
                   body: bytes, qmgr: str = "") -> dict[str, str]:
        """Put the request body to ``queue`` (of ``qmgr``, another QM of the group, by intra-group
        queuing); returns the response headers (the new MsgId)."""
        text = h.request_text(content_type, body)
        mqi = self.qm.mqi
        try:
            md, warnings = validate_put_md(h.put_md(version, request_headers))
            call = PutCall(md, text.encode("utf-8"), parse_put_options(["NO_SYNCPOINT"]), warnings)
            conn = await mqi.connect(APPL_NAME)
            try:
                outcome = await mqi.put1(conn.hconn, queue, qmgr, call)
            finally:
                await _disconnect(mqi, conn.hconn)
        except MQError as exc:
            raise from_mq_error(exc, action="put to", target=queue) from None
        return {h.MD_MESSAGE_ID: h.format_message_id(version, outcome.md.msg_id)}

    async def receive(self, version: str, queue: str, query: dict[str, str], *, destructive: bool,
                      abandoned: Callable[[], Awaitable[bool]] | None = None) -> ReceivedMessage | None:
        """The first message matching the query (removed when ``destructive``), or None (204).

        ``abandoned`` tells whether the caller has gone away (an HTTP client that gave up during
        a long ``wait``): then a message found is left on the queue rather than taken for nobody.
        """
        sel = h.selection(version, query)
        action = "get from" if destructive else "browse from"
        mqi = self.qm.mqi
        conn = await mqi.connect(APPL_NAME)
        try:
            options = ["INPUT_AS_Q_DEF", "BROWSE"] if destructive else ["BROWSE"]
            hobj = (await mqi.open(conn.hconn, queue, "", options)).hobj
            deadline = time.monotonic() + sel.wait_ms / 1000
            while True:
                remaining = max(0, int((deadline - time.monotonic()) * 1000))
                browsed = await self._browse_first(conn.hconn, hobj, sel.match, remaining)
                if browsed is None:
                    return None
                if message_text(browsed) is None:
                    raise incompatible_message(queue, browsed.md.format)
                if not destructive:
                    return _received(version, browsed)
                if abandoned is not None and await abandoned():
                    return None
                got = await self._get_by_msg_id(conn.hconn, hobj, browsed.md.msg_id)
                if got is not None:
                    return _received(version, got)
                # Another getter took it between our browse and our get: look again.
        except MQError as exc:
            raise from_mq_error(exc, action=action, target=queue) from None
        finally:
            await _disconnect(mqi, conn.hconn)

    async def message_list(self, version: str, queue: str, query: dict[str, str]) -> list[dict[str, Any]]:
        """Descriptors of the messages on ``queue`` (no bodies), first to last in delivery order.

        IBM: "If a request is made to get a list of available messages from a queue that is GET
        inhibited, an empty JSON array is returned."
        """
        sel = h.selection(version, query, allow_wait=False, allow_limit=True)
        limit = MESSAGE_LIST_MAX if sel.limit is None else min(sel.limit, MESSAGE_LIST_MAX)
        mqi = self.qm.mqi
        conn = await mqi.connect(APPL_NAME)
        out: list[dict[str, Any]] = []
        try:
            hobj = (await mqi.open(conn.hconn, queue, "", ["BROWSE"])).hobj
            mode = "BROWSE_FIRST"
            while len(out) < limit:
                try:
                    got = await mqi.get(conn.hconn, hobj, _get_call([mode, "ACCEPT_TRUNCATED_MSG"], sel.match,
                                                                    buffer_length=0))
                except MQError as exc:
                    if exc.reason in (MQRC.NO_MSG_AVAILABLE, MQRC.GET_INHIBITED):
                        break
                    raise
                out.append(h.summary(version, got.md.to_dict()))
                mode = "BROWSE_NEXT"
        except MQError as exc:
            raise from_mq_error(exc, action="browse from", target=queue) from None
        finally:
            await _disconnect(mqi, conn.hconn)
        return out

    async def _browse_first(self, hconn: str, hobj: str, match: dict[str, str], wait_ms: int) -> GotMessage | None:
        options = ["BROWSE_FIRST", "WAIT"] if wait_ms else ["BROWSE_FIRST"]
        try:
            return await self.qm.mqi.get(hconn, hobj, _get_call(options, match, wait_ms=wait_ms))
        except MQError as exc:
            if exc.reason == MQRC.NO_MSG_AVAILABLE:
                return None
            raise

    async def _get_by_msg_id(self, hconn: str, hobj: str, msg_id: str) -> GotMessage | None:
        try:
            return await self.qm.mqi.get(hconn, hobj, _get_call(["NO_SYNCPOINT"], {"msg_id": msg_id}))
        except MQError as exc:
            if exc.reason == MQRC.NO_MSG_AVAILABLE:
                return None
            raise


def _get_call(options: list[str], match: dict[str, str], *, wait_ms: int = 0,
              buffer_length: int = DEFAULT_BUFFER_LENGTH) -> GetCall:
    """The MQI's GetCall for the IBM REST API's selection (ids as the REST API decoded them)."""
    ids = {k: (None if v == NO_ID else v) for k, v in match.items()}
    return GetCall(parse_get_options(options), wait_ms, ids.get("msg_id"), ids.get("correl_id"), buffer_length)


def message_text(got: GotMessage) -> str | None:
    """A string message's data as text for a text/plain response, whatever its code page: mqweb
    gets string messages converted to UTF-8 (EBCDIC 037/500/1047/1140, Latin-1 819 and UTF-8
    1208 here: app/core/convert.py). None: not a text format, or not valid in its CCSID."""
    if got.md.format.strip() not in TEXT_FORMATS:
        return None
    return as_unicode(got.data, got.md.coded_char_set_id)


def _received(version: str, got: GotMessage) -> ReceivedMessage:
    text = message_text(got)
    assert text is not None  # checked when browsed
    return ReceivedMessage(text, h.response_headers(version, got.md.to_dict()))


async def _disconnect(mqi: Any, hconn: str) -> None:
    """MQDISC of the call's own connection; nothing is in its unit of work (no syncpoint)."""
    try:
        await mqi.disconnect(hconn)
    except MQError:
        pass  # already ended (the QM is stopping): its handles went with it
