"""Intra-group queuing values (docs/ibm-rules.md §5): the shared transmission queue, the
CorrelId that addresses a message on it to a queue manager's IGQ agent, and the transmission
message (an MQXQH carrying the application's whole MQMD and data,
serialized as JSON by the caller)."""

from __future__ import annotations

import base64
from typing import Any

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
