"""The default objects every queue manager of the group has, as z/OS's CSQ4INSG sample defines
them with QSGDISP(QMGR): SYSTEM.DEFAULT.LOCAL.QUEUE, SYSTEM.DEFAULT.MODEL.QUEUE (DEFTYPE(TEMPDYN),
the model an application opens for a temporary reply queue), SYSTEM.DEFAULT.ALIAS.QUEUE,
SYSTEM.DEFAULT.REMOTE.QUEUE and SYSTEM.DEFAULT.PROCESS; for publish/subscribe SYSTEM.BASE.TOPIC and
the managed-queue models SYSTEM.DURABLE.MODEL.QUEUE (PERMDYN) and SYSTEM.NDURABLE.MODEL.QUEUE
(TEMPDYN); and CSQ4INSX's default channels SYSTEM.DEF.SENDER, ... SYSTEM.DEF.CLUSRCVR.

They are made at queue manager start when missing, the way SYSTEM.ADMIN.PERFM.EVENT is
(app/qmgr/events.py), through the definition workflow (``DefinitionWorkflow.define_own``): an
operator's own definition (QMGR or COPY) is left as it is, so the start is idempotent and an
ALTER of a default object survives restarts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from app.core import attributes, channels
from app.core.errors import MQError
from app.core.objects import OBJECT_CLASS, ObjectDef

if TYPE_CHECKING:
    from app.qmgr.definitions import DefinitionCache
    from app.qmgr.ports import DefinitionChanges

#: (object type, name, attributes besides the IBM defaults) of each default object
DEFAULT_OBJECTS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("QLOCAL", "SYSTEM.DEFAULT.LOCAL.QUEUE", {"DESCR": "Default local queue"}),
    ("QMODEL", "SYSTEM.DEFAULT.MODEL.QUEUE", {"DESCR": "Default model queue", "DEFTYPE": "TEMPDYN"}),
    ("QALIAS", "SYSTEM.DEFAULT.ALIAS.QUEUE", {"DESCR": "Default alias queue"}),
    ("QREMOTE", "SYSTEM.DEFAULT.REMOTE.QUEUE", {"DESCR": "Default remote queue"}),
    ("PROCESS", "SYSTEM.DEFAULT.PROCESS", {"DESCR": "Default process"}),
    # Publish/subscribe (CSQ4INSG): the root of the topic tree, whose values the ASPARENT of every
    # other topic object ends at, and the models of managed subscription queues (app/qmgr/pubsub.py)
    ("TOPIC", "SYSTEM.BASE.TOPIC", {"DESCR": "Base topic for ASPARENT resolution", "TOPICSTR": "",
                                    "PUB": "ENABLED", "SUB": "ENABLED", "DEFPSIST": "NO", "DEFPRTY": 0,
                                    "DURSUB": "YES", "MDURMDL": "SYSTEM.DURABLE.MODEL.QUEUE",
                                    "MNDURMDL": "SYSTEM.NDURABLE.MODEL.QUEUE", "DEFPRESP": "SYNC",
                                    "NPMSGDLV": "ALLAVAIL", "PMSGDLV": "ALLDUR", "PUBSCOPE": "ALL",
                                    "SUBSCOPE": "ALL", "USEDLQ": "YES"}),
    ("QMODEL", "SYSTEM.DURABLE.MODEL.QUEUE", {"DESCR": "Model for managed durable subscriptions",
                                              "DEFTYPE": "PERMDYN", "DEFSOPT": "SHARED"}),
    ("QMODEL", "SYSTEM.NDURABLE.MODEL.QUEUE", {"DESCR": "Model for managed non-durable subscriptions",
                                               "DEFTYPE": "TEMPDYN", "DEFSOPT": "SHARED"}),
    # The command server (app/cmdserver): its input queue, the model of reply queues, and the alias
    # under the name of distributed MQ's command queue, which tools written for it open
    # (CSQ4INSG: SYSTEM.ADMIN.COMMAND.QUEUE as a QALIAS of SYSTEM.COMMAND.INPUT; IBM "Preparing queues
    # for administration programs", https://www.ibm.com/docs/en/ibm-mq/9.0.x?topic=zos-preparing-queues-administration-programs).
    ("QLOCAL", "SYSTEM.COMMAND.INPUT", {"DESCR": "System command input queue", "MAXMSGL": 32762,
                                        "SHARE": True, "DEFSOPT": "SHARED"}),
    ("QMODEL", "SYSTEM.COMMAND.REPLY.MODEL", {"DESCR": "System command reply model queue",
                                              "DEFTYPE": "TEMPDYN"}),
    ("QALIAS", "SYSTEM.ADMIN.COMMAND.QUEUE", {"DESCR": "Alias of the command input queue for PCF tools",
                                              "TARGET": "SYSTEM.COMMAND.INPUT"}),
    # The default channel of each type, as z/OS's CSQ4INSX sample defines them (definitions only:
    # there is no channel initiator to run them)
    *(("CHANNEL", f"SYSTEM.DEF.{suffix}", {"CHLTYPE": chltype, "DESCR": f"Default {suffix.lower()} channel"})
      for chltype, suffix in (("SDR", "SENDER"), ("SVR", "SERVER"), ("RCVR", "RECEIVER"), ("RQSTR", "REQUESTER"),
                              ("SVRCONN", "SVRCONN"), ("CLNTCONN", "CLNTCONN"), ("CLUSSDR", "CLUSSDR"),
                              ("CLUSRCVR", "CLUSRCVR"))),
)


class SystemObjectsHost(Protocol):
    """What making the default objects uses of the queue manager."""

    @property
    def name(self) -> str: ...
    @property
    def workflow(self) -> DefinitionChanges: ...
    @property
    def cache(self) -> DefinitionCache: ...

    async def reload_definitions(self) -> None: ...


async def ensure_default_objects(qm: SystemObjectsHost) -> int:
    """Define each missing default object on this queue manager; returns how many were made."""
    made = 0
    for objtype, name, extra in DEFAULT_OBJECTS:
        if any(d.qsgdisp in ("QMGR", "COPY") for d in qm.cache.usable(OBJECT_CLASS[objtype], name)):
            continue
        base = channels.defaults_for(str(extra["CHLTYPE"])) if objtype == "CHANNEL" else attributes.defaults(objtype)
        attrs = {**base, **extra}
        try:
            await qm.workflow.define_own(ObjectDef(objtype, name, "QMGR", qm.name, attrs))
            made += 1
        except MQError:
            pass  # defined meanwhile (another start of this QM's name cannot run: only a DEFINE)
    if made:
        await qm.reload_definitions()
    return made
