"""A Python client for the emulator, shaped like pymqi so that pymqi code moves over with
small changes (usually only the import: ``import app.client as pymqi``).

Synchronous API here (``QueueManager``, ``Queue``, ``connect``), the asyncio one in
``app.client.aio``; both talk to a queue manager's ``/v1`` REST API (docs/api.md). Structures ``MD``,
``GMO``, ``PMO``, ``OD``, ``CD`` carry pymqi's attribute names; constants are in ``CMQC``;
failures raise ``MQMIError`` with ``comp`` and ``reason``. Against queue managers with
authentication on, connect with pymqi's ``user``/``password`` (or an MQCSP ``csp``) or with
``api_key``; wrong credentials fail with MQRC_NOT_AUTHORIZED (2035).

Differences from pymqi worth knowing: a connection name ``host(port)`` is the queue manager's
REST address; message properties, message handles, distribution lists, PCF and XA are not
offered; MQGMO_CONVERT is accepted and does nothing (bodies come back as they were put).
"""

from app.client import CMQC, aio
from app.client.core import CD, CNO, CSP, GMO, MD, OD, PMO, Error, MQMIError, PYIFError
from app.client.session import RetryPolicy
from app.client.sync import Queue, QueueManager, connect

__all__ = ["CD", "CMQC", "CNO", "CSP", "GMO", "MD", "OD", "PMO", "Error", "MQMIError", "PYIFError", "Queue",
           "QueueManager", "RetryPolicy", "aio", "connect"]
