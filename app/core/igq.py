"""Intra-group queuing values (docs/ibm-rules.md §5): the shared transmission queue, the
CorrelId that addresses a message on it to a queue manager's IGQ agent, and the transmission
message (an MQXQH carrying the application's whole MQMD and data,
serialized as JSON by the caller)."""

from __future__ import annotations

import base64
import json
from typing import Any

from app.core.reports import put_time_ms

IGQ_XMITQ = "SYSTEM.QSG.TRANSMIT.QUEUE"


def igq_correl_id(qmgr: str) -> str:
    """The CorrelId that addresses a transmission-queue message to a queue manager's agent."""
    return (b"CSQ IGQ " + qmgr.encode().ljust(4) + b"\0" * 12).hex()


def transmission_message(md: dict[str, Any], data: bytes, remote_q: str,
                         remote_qmgr: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The message put on SYSTEM.QSG.TRANSMIT.QUEUE: its MQMD and an MQXQH (sent as JSON) with the application's
    whole MQMD and data, addressed to the destination QM, keeping priority, persistence and
    expiry so that it is ordered and expires as the application's message would."""
    header = {"StrucId": "XQH ", "Version": 1, "RemoteQName": remote_q, "RemoteQMgrName": remote_qmgr,
              "MsgDesc": md, "MsgData": base64.b64encode(data).decode()}
    xmit_md = {**md, "format": "MQXMIT", "correl_id": igq_correl_id(remote_qmgr)}
    return xmit_md, header


class MalformedTransmissionMessage(ValueError):
    """A message on SYSTEM.QSG.TRANSMIT.QUEUE whose data is no valid transmission header."""


def read_transmission_message(body: bytes) -> tuple[dict[str, Any], dict[str, Any], bytes]:
    """The MQXQH of a transmission-queue message, its application MQMD and data. Raises
    ``MalformedTransmissionMessage`` saying what is wrong when the data is not an MQXQH the IGQ
    agent can deliver: not JSON, not StrucId "XQH ", no destination queue, an MsgDesc that is no
    object with MsgId, CorrelId and Priority, MsgData that is not base64. (Any application can
    put to the transmission queue; what it put must not stop the agent.)"""
    try:
        header = json.loads(body)
    except ValueError:  # not JSON (UnicodeDecodeError and JSONDecodeError are ValueErrors)
        raise MalformedTransmissionMessage("the data is not a transmission header (MQXQH)") from None
    if not isinstance(header, dict) or header.get("StrucId") != "XQH ":
        raise MalformedTransmissionMessage("the data does not start with an MQXQH (StrucId 'XQH ')")
    queue, qmgr = header.get("RemoteQName"), header.get("RemoteQMgrName")
    if not isinstance(queue, str) or not queue.strip() or not isinstance(qmgr, str):
        raise MalformedTransmissionMessage("the MQXQH names no RemoteQName / RemoteQMgrName")
    md = header.get("MsgDesc")
    if not isinstance(md, dict) or not all(isinstance(md.get(f), str) for f in ("msg_id", "correl_id")) \
            or not isinstance(md.get("priority"), int) or isinstance(md.get("priority"), bool):
        raise MalformedTransmissionMessage("the MQXQH's MsgDesc is not a message descriptor")
    raw = header.get("MsgData")
    try:
        if not isinstance(raw, str):
            raise ValueError
        data = base64.b64decode(raw, validate=True)
    except ValueError:  # binascii.Error is a ValueError
        raise MalformedTransmissionMessage("the MQXQH's MsgData is not base64") from None
    return header, md, data


def decrement_inner_expiry(body: bytes, elapsed_tenths: int) -> bytes | None:
    """The MQXQH of a transmission-queue message as MQGET returns it (docs/ibm-rules.md §4.7): the
    queue manager decrements both Expiry fields - the MQMD's and the one in the MsgDesc within
    the MQXQH - by the time the message waited on the queue; the inner one is set to zero
    when that time has elapsed (it may have been put smaller than the outer one). None when
    there is nothing to change: the data is no (whole) MQXQH, which is no error, or its
    expiry is unlimited."""
    if elapsed_tenths <= 0:
        return None
    try:
        header = json.loads(body)
    except ValueError:  # not JSON (UnicodeDecodeError and JSONDecodeError are ValueErrors)
        return None  # "No error is raised if the message data is not long enough"
    inner = header.get("MsgDesc") if isinstance(header, dict) else None
    if not isinstance(inner, dict):
        return None
    expiry = inner.get("expiry")
    if not isinstance(expiry, int) or isinstance(expiry, bool) or expiry <= 0:
        return None  # MQEI_UNLIMITED (-1), or nothing left to decrement
    inner["expiry"] = max(0, expiry - elapsed_tenths)
    return json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()


def waited_tenths(put_expiry: int, left: int, put_date_time: str, now_ms: int) -> int:
    """How long (tenths) a message waited on its queue: what its Expiry lost, or, for one put
    with MQEI_UNLIMITED, the time since its put."""
    if put_expiry > 0 and left > 0:
        return put_expiry - left
    put_ms = put_time_ms(put_date_time)
    return 0 if put_ms is None else max(0, int(now_ms - put_ms) // 100)


def expired_application_message(md: dict[str, Any], data: bytes) -> tuple[dict[str, Any], bytes]:
    """What an expiration report on a message discarded from a transmission queue describes:
    the application's message within the MQXQH (its MQMD and its data, which the report then
    carries as its own options ask), not the transmission header. A message that is no MQXQH
    (not MQXMIT, or data that is not one) is described as it is."""
    if md.get("format") != "MQXMIT":
        return md, data
    try:
        header = json.loads(data)
        inner, inner_data = header["MsgDesc"], base64.b64decode(header["MsgData"], validate=True)
    except (KeyError, TypeError, ValueError):
        return md, data
    if not isinstance(inner, dict):
        return md, data
    return inner, inner_data
