"""A Python client for the emulator, shaped like pymqi so that pymqi code moves over with
small changes (usually only the import: ``import app.client as pymqi``).

Synchronous API here (``QueueManager``, ``Queue``, ``connect``), the asyncio one in
``app.client.aio``; both talk to a queue manager's ``/v1`` REST API (docs/api.md). Structures ``MD``,
``GMO``, ``PMO``, ``OD``, ``CD`` carry pymqi's attribute names; constants are in ``CMQC``;
failures raise ``MQMIError`` with ``comp`` and ``reason``. Against queue managers with
authentication on, connect with pymqi's ``user``/``password`` (or an MQCSP ``csp``) or with
``api_key``; wrong credentials fail with MQRC_NOT_AUTHORIZED (2035).

``import qsg_pymqi as pymqi`` (a top-level alias of this package) does the same in one line.

Differences from pymqi worth knowing: a connection name ``host(port)`` is the queue manager's
REST address and the channel is not used; message properties travel through message handles
(``app.client.properties``); PCF through ``PCFExecute`` (``app.client.pcf``, served by the queue
managers' command server); distribution lists and XA are not offered. MQGMO_CONVERT
converts string messages to the MD's CodedCharSetId (MQCCSI_Q_MGR: the client's UTF-8); MQSTAT
reports MQPMO_ASYNC_RESPONSE puts.
"""

from typing import Any

from app.client import CMQC, CMQCFC, CMQSTRC, CMQXC, aio
from app.client.asyncconsume import CBC, CBD, CTLO
from app.client.core import CD, CNO, CSP, GMO, MD, OD, PMO, SCO, STS, Error, MQMIError, PYIFError
from app.client.pcf import (
    CFBS,
    CFH,
    CFIF,
    CFIL,
    CFIL64,
    CFIN,
    CFIN64,
    CFSF,
    CFSL,
    CFST,
    ByteString,
    Filter,
    PCFExecute,
    to_string,
)
from app.client.properties import CMHO, DMHO, DMPO, IMPO, PD, SMPO, MessageHandle
from app.client.pubsub import SD, Subscription, Topic
from app.client.session import RetryPolicy
from app.client.sync import Queue, QueueManager, connect

__version__ = "1.12.11"  # the pymqi release whose interface this client follows
# pymqi's lower-case aliases of the structures, still used by older programs
md, gmo, pmo, od, cd, sco, cno, csp = MD, GMO, PMO, OD, CD, SCO, CNO, CSP
sd = SD
sts = STS


def get_versions() -> dict[str, Any]:
    """What pymqi's and ibmmq's ``get_versions`` report: this client's interface level and the
    MQ level it emulates (the queue managers are IBM MQ for z/OS 9.3 to their clients)."""
    return {"pymqi": __version__, "ibmmq": "2.0.0", "mqlevels": "9.3.0.0", "mqbuild": "qsg-emulator",
            "client": "app.client"}


__all__ = [
    "CBC", "CBD", "CTLO", "CD", "CFBS", "CFH", "CFIF", "CFIL", "CFIL64", "CFIN", "CFIN64", "CFSF", "CFSL", "CFST",
    "ByteString", "Filter", "PCFExecute", "to_string", "CMHO", "CMQC", "CMQCFC", "CMQSTRC", "CMQXC", "CNO", "CSP",
    "DMHO", "DMPO", "GMO", "IMPO", "MD", "OD", "PD", "PMO", "SCO", "SD", "SMPO", "STS", "Error", "MQMIError",
    "PYIFError", "MessageHandle", "Queue", "QueueManager", "RetryPolicy", "Subscription", "Topic", "aio", "cd",
    "cno", "connect", "csp", "get_versions", "gmo", "md", "od", "pmo", "sco", "sd", "sts"
]
