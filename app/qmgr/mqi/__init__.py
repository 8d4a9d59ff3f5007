"""The MQI verbs of one queue manager: MQCONN, MQDISC, MQOPEN, MQCLOSE, MQPUT, MQPUT1, MQGET,
MQCMIT, MQBACK, MQINQ, MQSET, MQSTAT, and the put-batch and get-batch of the REST API.

Connections and object handles live in this process (like a z/OS address space's thread
state); everything a peer must recover (units of work, open counts) is in the coupling facility.

One module per verb family, each a layer on the one below it (a module imports only the layer
under it, so the folder has no cycle; each method lives in exactly one file)::

    attributes   MQINQ, MQSET
    batch        put-batch, get-batch
    get          MQGET (groups, marking, conversion)
    put          MQPUT, MQPUT1 (of a queue or a topic)
    stat         asynchronous put responses, MQSTAT
    put_core     the put of one message to a resolved queue (also the queue manager's own)
    context      the MQMD a put completes: defaults, ids, context
    connections  MQCONN, MQDISC, the idle timeout, the ends of connections
    handles      MQOPEN, MQCLOSE (dynamic queues made and deleted)
    resolve      name resolution (aliases, remote definitions, intra-group queuing)
    uow          MQCMIT, MQBACK: units of work in the coupling facility
    table        the connection and handle table, and the checks every verb makes

``Mqi`` is the facade the queue manager and the API use: its public methods are those of
the layers.
"""

from __future__ import annotations

from app.qmgr.mqi.attributes import Attributes


class Mqi(Attributes):
    """Connection table and MQI verbs of one queue manager (the layers of this package)."""


__all__ = ["Mqi"]
