"""What the services of one queue manager need from each other and from their queue manager.

Each service (the MQI, events, expiry, triggers, the IGQ agent, CF structures, the MQSC command
processor) is given its queue manager typed as one of the small Protocols below, naming exactly
what it uses; the QueueManager (app/qmgr/qmgr.py) satisfies them all and wires the services
together. No service imports app.qmgr.qmgr, and services that call each other (the MQI and
triggers, say) do so through these Protocols, never by importing each other.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from app.activity import ActivityLog
    from app.cf.engine import CouplingFacility
    from app.cf.keys import QueueLocation
    from app.core.calls import PutOutcome
    from app.core.clock import Clock
    from app.core.mqmd import MsgIdGenerator
    from app.core.objects import ObjectDef
    from app.qmgr.connection import Connection
    from app.qmgr.definitions import DefinitionCache
    from app.repository.store import Repository
    from app.settings import Settings

T = TypeVar("T")


# ---- collaborators, as the services that call them see them ------------------------------

class Publisher(Protocol):
    """The acknowledged broadcast to every queue manager of the group."""

    async def publish(self, message: dict[str, Any]) -> int: ...


class Members(Protocol):
    """Who is in the group."""

    #: When (ms) this QM found the coupling facility unreachable; None while connected.
    unreachable_since_ms: int | None

    async def members(self) -> list[Any]: ...


class Authority(Protocol):
    """Authorization checks (app.security.service.Security)."""

    def check_qmgr(self, principal: Any, right: str) -> None: ...

    def may_set_context(self, principal: Any) -> bool: ...

    def check(self, principal: Any, right: str, objtype: str, name: str) -> None: ...

    def check_open(self, principal: Any, name: str, options: Any) -> None: ...

    def check_context(self, principal: Any, queue: str, context: frozenset[str]) -> None: ...

    async def alternate_principal(self, principal: Any, user_id: str) -> Any: ...

    async def live(self, principal: Any) -> Any: ...

    def waiting_check(self) -> Callable[[], Awaitable[None]] | None: ...

    async def check_igq_put(self, queue: str, user_identifier: str) -> None: ...


class TriggerHooks(Protocol):
    """Trigger evaluation (app.qmgr.triggers.TriggerService) as the MQI and the IGQ agent call it."""

    async def counts_changed(self, queue: ObjectDef, before: int, after: int, added: int = 1,
                             conn: Connection | None = None, syncpoint: bool = False) -> None: ...

    async def retrigger(self, queue: ObjectDef, *, skip: frozenset[int] = frozenset(),
                        types: tuple[str, ...] = ("FIRST", "EVERY", "DEPTH")) -> bool: ...

    async def initq_opened(self, initq: ObjectDef) -> None: ...

    async def unit_of_work_ended(self, conn: Connection, committed: bool) -> None: ...


class DeadLetters(Protocol):
    """The dead-letter queue (app.qmgr.expiry.ExpiryService.dead_letter)."""

    async def dead_letter(self, md: dict[str, Any], data: bytes, reason: int, dest_q: str, dest_qmgr: str,
                          *, conn: Any = None) -> None: ...


class SystemPuts(Protocol):
    """The MQI as the queue manager's own agents use it: puts of reports, events, trigger
    messages and dead letters."""

    msg_ids: MsgIdGenerator

    async def put_system(self, queue: str, md: dict[str, Any], data: bytes, *, qmgr: str | None = None,
                         conn: Connection | None = None, keep_context: bool = False,
                         keep_identity: bool = False, arrival_reports: bool = True) -> PutOutcome: ...


class AgentMqi(SystemPuts, Protocol):
    """The MQI as an agent with its own unit of work (the IGQ agent) uses it."""

    async def commit_unit_of_work(self, conn: Connection) -> None: ...

    async def backout_unit_of_work(self, conn: Connection) -> None: ...


class StructureFailures(Protocol):
    """What the MQI must know when a CF structure fails."""

    def structure_failed(self, tag: str) -> None: ...


class PubSubHooks(Protocol):
    """Publish/subscribe (app.qmgr.pubsub.PubSub) as the MQI uses it."""

    def open_topic(self, conn: Connection, object_name: Any, object_string: Any, options: Any) -> Any: ...

    def topic_handle(self, hconn: str, hobj: str) -> Any: ...

    def close_topic(self, conn: Connection, hobj: str) -> bool: ...

    async def publish(self, conn: Connection, topic: Any, call: Any) -> PutOutcome: ...

    async def connection_ended(self, conn: Connection) -> None: ...

    def connections_broken(self, hconns: list[str]) -> None: ...


class DynamicQueueAdmin(Protocol):
    """Dynamic queues (app.qmgr.dynamic.DynamicQueues) as the MQI uses them."""

    async def create(self, model: ObjectDef, dynamic_q_name: object) -> ObjectDef: ...

    async def check_deletable(self, obj: ObjectDef, *, purge: bool) -> None: ...

    async def delete(self, obj: ObjectDef) -> bool: ...

    async def remove_state(self, loc: QueueLocation) -> bool: ...


class DefinitionChanges(Protocol):
    """The definition-change workflow (app.qmgr.workflow.DefinitionWorkflow)."""

    async def sync_queue_state(self, obj: ObjectDef, *, bump_gen: bool = False,
                               set_switches: bool | Collection[str] = False) -> None: ...

    async def apply_mqset(self, obj: ObjectDef, keywords: list[tuple[str, str | None]], *,
                          retrigger: bool = True) -> ObjectDef: ...

    async def define_own(self, new: ObjectDef) -> ObjectDef: ...


class CommandServerTask(Protocol):
    """The command server that serves SYSTEM.COMMAND.INPUT (app.cmdserver.server.CommandServer).
    It runs MQSC, which reads the domain, so app/qmgr never imports it: the composition root
    (app/api/app.py) gives the queue manager a ``CommandServerFactory``."""

    @property
    def state(self) -> str: ...

    def start(self) -> None: ...

    async def stop(self) -> None: ...


#: Makes the command server of a queue manager (given the queue manager itself).
CommandServerFactory = Callable[[Any], CommandServerTask]


# ---- what each service reads from its queue manager ----------------------------------------

class QmgrContext(Protocol):
    """Identity and live attributes of the queue manager (``attrs`` is replaced when they change:
    read it each time)."""

    @property
    def name(self) -> str: ...
    @property
    def qsg(self) -> str: ...
    @property
    def attrs(self) -> dict[str, Any]: ...
    @property
    def settings(self) -> Settings: ...
    @property
    def clock(self) -> Clock: ...
    @property
    def cf(self) -> CouplingFacility: ...
    @property
    def cache(self) -> DefinitionCache: ...


class MqiHost(QmgrContext, Protocol):
    @property
    def status(self) -> str: ...
    @property
    def membership(self) -> Members: ...
    @property
    def security(self) -> Authority: ...
    @property
    def triggers(self) -> TriggerHooks: ...
    @property
    def workflow(self) -> DefinitionChanges: ...
    @property
    def dynamic(self) -> DynamicQueueAdmin: ...
    @property
    def pubsub(self) -> PubSubHooks: ...
    def tolerates_cf_loss(self) -> bool: ...


class EventsHost(QmgrContext, Protocol):
    @property
    def started_ms(self) -> int: ...
    @property
    def workflow(self) -> DefinitionChanges: ...
    @property
    def activity(self) -> ActivityLog: ...
    @property
    def mqi(self) -> SystemPuts: ...
    @property
    def broadcaster(self) -> Publisher: ...

    async def reload_definitions(self) -> None: ...


class ExpiryHost(QmgrContext, Protocol):
    @property
    def activity(self) -> ActivityLog: ...
    @property
    def mqi(self) -> SystemPuts: ...
    @property
    def triggers(self) -> TriggerHooks: ...

    def shared_tags(self) -> list[str]: ...


class TriggersHost(QmgrContext, Protocol):
    @property
    def activity(self) -> ActivityLog: ...
    @property
    def mqi(self) -> SystemPuts: ...
    @property
    def expiry(self) -> DeadLetters: ...
    @property
    def workflow(self) -> DefinitionChanges: ...


class IgqHost(QmgrContext, Protocol):
    @property
    def activity(self) -> ActivityLog: ...
    @property
    def security(self) -> Authority: ...
    @property
    def mqi(self) -> AgentMqi: ...
    @property
    def triggers(self) -> TriggerHooks: ...
    @property
    def expiry(self) -> DeadLetters: ...


class StructuresHost(QmgrContext, Protocol):
    @property
    def repo(self) -> Repository: ...
    def db(self, fn: Callable[..., T], *args: Any) -> Awaitable[T]: ...
    @property
    def mqi(self) -> StructureFailures: ...
    @property
    def broadcaster(self) -> Publisher: ...
    @property
    def workflow(self) -> DefinitionChanges: ...
    @property
    def membership(self) -> Members: ...

    async def reconcile_queue_state(self) -> None: ...


__all__ = ["AgentMqi", "Authority", "DeadLetters", "DefinitionChanges", "EventsHost", "ExpiryHost",
           "IgqHost", "Members", "MqiHost", "Publisher", "QmgrContext", "StructureFailures", "StructuresHost",
           "SystemPuts", "TriggerHooks", "TriggersHost"]
