"""One queue manager of the group: its repository, coupling facility, caches and life cycle.

The QueueManager creates the services and wires them: each is given this object typed as the
small Protocol of what it uses (app/qmgr/ports.py), so no service imports this module. The one
service it does not make itself is the command server (app/cmdserver), which runs MQSC and so
sits above app/qmgr: whoever composes the queue manager (app/api/app.py) hands in its factory.

Every definition change, whether MQSC, a dynamic queue or MQSET, goes through
``DefinitionWorkflow`` in app/qmgr/workflow.py (``define``, ``alter``, ``delete``,
``apply_mqset``): its checks, the repository, then the queue's runtime attributes in the
coupling facility, then the acknowledged broadcast that refreshes every QM's cache.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from app.activity import ActivityLog, Verb
from app.cf.engine import CFHooks, CouplingFacility
from app.cf.errors import MQ_OR_CF_FAILURES
from app.cf.groupclock import GroupClock
from app.cf.keys import QueueLocation, private_tag, structure_name
from app.core import attributes
from app.core.clock import Clock, SystemClock
from app.core.errors import MQError
from app.core.objects import ObjectDef
from app.core.reasons import MQRC
from app.qmgr.broadcast import Broadcaster
from app.qmgr.cfstruct import StructureService
from app.qmgr.definitions import DefinitionCache, queue_location
from app.qmgr.dynamic import DynamicQueues
from app.qmgr.events import EventService
from app.qmgr.expiry import ExpiryService
from app.qmgr.igq import IgqAgent
from app.qmgr.looplag import LoopLag
from app.qmgr.membership import Membership, NameInUse
from app.qmgr.metrics import QmgrMetrics
from app.qmgr.mqi import Mqi
from app.qmgr.pubsub import PubSub
from app.qmgr.sysobjects import ensure_default_objects
from app.qmgr.triggers import TriggerService
from app.qmgr.workflow import DefinitionWorkflow
from app.repository.store import Repository
from app.security.service import SECURITY_CHANGED, Security
from app.settings import Settings
from app.tls import peer_ssl_context

if TYPE_CHECKING:
    from app.cf.redisconn import RedisClient
    from app.qmgr.connection import Connection
    from app.qmgr.ports import CommandServerFactory

log = logging.getLogger(__name__)
T = TypeVar("T")


#: What stops a rejoin attempt for now (it is tried again): Redis away, the name still held.
_REJOIN_FAILURES: tuple[type[Exception], ...] = (NameInUse, *MQ_OR_CF_FAILURES)
#: Seconds a starting queue manager waits for its structures' notices to be subscribed.
NOTICES_READY_S = 10.0
#: Seconds a definition broadcast naming a new structure waits for its notices (then it is
#: acknowledged anyway: the subscription goes on in the background).
NOTICES_NEW_S = 2.0

class QueueManager:
    """State and services of one running queue manager."""

    def __init__(self, settings: Settings, repo: Repository, redis: RedisClient,
                 clock: Clock | None = None, *, pageset: RedisClient | None = None,
                 command_server: CommandServerFactory) -> None:
        self.settings = settings
        self.name = settings.qmgr
        self.qsg = settings.qsg
        self.repo = repo
        # The client the coupling facility is built on: only app.cf uses it (and whoever
        # closes it); this queue manager calls the CF layer's objects (self.cf and its parts).
        self.redis = redis
        # The group clock (the coupling facility's time) unless a test injects its own clock:
        # times compared across queue managers must not depend on the hosts' clocks agreeing.
        self.group_clock: GroupClock | None = None
        self.pageset_clock: GroupClock | None = None
        if clock is None:
            self.group_clock = GroupClock(lambda: self.cf.group.server_time_us(), name=self.name)
        self.clock: Clock = clock or self.group_clock or SystemClock()
        repo.now = self._now_datetime  # ALTDATE/ALTTIME on the same clock
        if self.group_clock is not None:
            # the page set is a server of its own, whose clock may differ from the QM's (a
            # separate host, or a QM whose clock alone is skewed): measured the same way
            self.pageset_clock = GroupClock(lambda: self.cf.pageset_time_us(), name=f"{self.name} page set")
        # The services the coupling facility reports to exist before it: it is given them once.
        self.events = EventService(self)
        self.expiry = ExpiryService(self)
        self.structures = StructureService(self)
        # Its private queues live in its page set (``pageset``; None: in the CF's Redis too).
        self.cf: CouplingFacility = CouplingFacility(redis, self.qsg, self.clock, pageset=pageset,
                                                     hooks=self._cf_hooks(settings))
        # The coupling facility as MQSC reads it (app/mqsc/commands/base.py QueueStates)
        self.queue_states = self.cf
        self.cache = DefinitionCache(self.qsg, self.name)
        self.attrs: dict[str, Any] = {}
        self.status = "STARTING"
        self.activity = ActivityLog.from_settings(settings, self.clock)
        self.broadcaster = Broadcaster(self.cf.broadcasts, self.name, on_message=self._on_broadcast,
                                       on_reconnect=self.coupling_facility_back,
                                       timeout_ms=settings.broadcast_timeout_ms)
        # The services; each sees this object through the Protocol of what it uses (ports.py).
        self.workflow = DefinitionWorkflow(
            qsg=self.qsg, qmgr=self.name, repo=repo, db=self.db, cf=self.cf, cache=self.cache, clock=self.clock,
            broadcaster=self.broadcaster, retrigger=self._definition_changed, structures=self.structures)
        self.mqi = Mqi(self)
        self.dynamic = DynamicQueues(self)
        self.pubsub = PubSub(self)
        self.triggers = TriggerService(self)
        self.igq = IgqAgent(self)
        self.cmdserver = command_server(self)  # SYSTEM.COMMAND.INPUT: MQSC and PCF requests
        self.security = Security(self)
        # a waiting get checks its caller again after a security change (Security.waiting_check)
        self.security.on_change(self.cf.wake_all_waiters)
        self.metrics = QmgrMetrics(self)  # fed by the activity records and the CF's script calls
        self.activity.observer = self.metrics.observe
        self.loop_lag = LoopLag(self.name, settings.loop_lag_warn_s, self.metrics.observe_loop_lag)
        self.started_ms = self.clock.now_ms()
        self.membership = Membership(
            self.cf, self.clock, qsg=self.qsg, qmgr=self.name,
            url=settings.advertised_url, interval_s=settings.heartbeat_interval_s,
            ttl_s=settings.heartbeat_ttl_s, shared_tags=self.shared_tags, on_recovered=self._peer_recovered,
            on_lease_lost=self.lease_lost, on_renewed=self._refresh_clocks if self.group_clock else None)
        # Every script runs as this QM's current incarnation (none until it has joined).
        self.cf.incarnation = None
        self._rejoin_task: asyncio.Task[None] | None = None
        # Built once: loading a trust store costs milliseconds, and every forwarded call needs it.
        self.peer_tls = peer_ssl_context(settings.tls_ca, settings.tls_cert)

    def _cf_hooks(self, settings: Settings) -> CFHooks:
        """What this queue manager tells its coupling facility (app/cf/hooks.py), given once at
        its construction. Services made after it (membership, metrics) are reached when called."""
        hooks = CFHooks(
            qmgr=self.name,
            lease_valid=lambda: self.membership.lease_valid(),
            confirm_lease=lambda: self.membership.confirm_lease(),
            on_fenced=self.lease_lost,
            tolerate_cf_loss=self.tolerates_cf_loss,
            replica_acks=settings.cf_replica_acks,
            replica_timeout_ms=settings.cf_replica_timeout_ms,
            on_replica_shortfall=lambda tag: self.metrics.replica_shortfall(tag),
            observe_call=lambda script, seconds: self.metrics.observe_cf_call(script, seconds),
            on_reports=self.expiry.reports_queued,
            on_event=self.events.fired,
            on_expired=self.expiry.expired_on_get,
            perfmev_enabled=self.events.enabled,
            recovery_log=self.structures.recovery_log,
            structure_lost=self.structures.structure_lost)
        clock, pageset = self.group_clock, self.pageset_clock
        if clock is None or pageset is None:
            return hooks  # a test's clock: script deadlines on the wall clock
        # script deadlines are on the CF's own clock (and the page set's), never a test's
        return dataclasses.replace(
            hooks, cf_now_ms=clock.cf_now_ms, clock_check=clock.refresh, clock_error_ms=clock.error_ms,
            pageset_now_ms=pageset.cf_now_ms, pageset_clock_error_ms=pageset.error_ms)

    # ---- life cycle ---------------------------------------------------------------------

    async def start(self) -> None:
        """Join the QSG, load definitions, recover what a failed previous incarnation left,
        make sure every local queue has CF state, then serve.

        Raises ``NameInUse`` when another live process already is this queue manager.
        """
        self.loop_lag.start()  # first: a stall during start-up counts too
        previous_failed = await self._join()
        self.cf.private_incarnation = self.cf.incarnation  # the page set's fence is set below it
        await self.cf.publish_pageset()  # where its private queues are, for the group's commands
        await self.cf.know_pagesets()
        await self.activity.start()  # after join: only the one live process of this name uses its spool
        self.attrs = await self.db(self.repo.register_qmgr, self.name, attributes.defaults("QMGR"))
        await self.cf.start()
        await self.broadcaster.start()
        await self.triggers.start()
        await self.reload_definitions()
        await self.follow_structures(NOTICES_READY_S, always=True)
        await self.structures.connect_all()
        await self._recover_previous_incarnation(previous_failed)
        await self._refresh_group_copies()
        await self.events.ensure_event_queue()
        await ensure_default_objects(self)
        # temporary dynamic queues never outlive the queue manager run that made them
        await self.dynamic.purge_temporary()
        await self.pubsub.start()  # after the default objects (models, SYSTEM.BASE.TOPIC)
        await self.reconcile_queue_state()
        self.mqi.start()
        await self._serve()

    async def _refresh_clocks(self) -> bool:
        """Each heartbeat: measure the page set's clock and the group clock again."""
        if self.pageset_clock is not None:
            await self.pageset_clock.refresh()
        return self.group_clock is not None and await self.group_clock.refresh()

    async def _join(self) -> bool:
        """Join the group as a new incarnation; True when the previous one failed."""
        if self.group_clock is not None:
            if self.group_clock.synced:
                await self.group_clock.refresh()  # rejoining: a failed measurement keeps the last offset
            else:
                await self.group_clock.sync()  # before anything is stamped (raises when the CF is away)
                if self.pageset_clock is not None:
                    await self.pageset_clock.sync()  # before the first private queue's call
                self.started_ms = self.clock.now_ms()
        previous_failed = await self.membership.join()
        self.cf.incarnation = self.membership.incarnation
        return previous_failed

    async def _recover_previous_incarnation(self, previous_failed: bool) -> None:
        if previous_failed:
            # Serialization with peer recovery: shared work of the failed incarnation is resolved
            # (by a peer, or here) before this QM serves, so nothing is processed out of order.
            await self.membership.recover_peer(self.name, wait=True)
        backed_out, committed, _ = await self.membership.recover_own_private_work()
        if backed_out or committed:
            log.info("%s: restart recovery of private queues: %d unit(s) of work backed out, %d committed",
                     self.name, backed_out, committed)
        # As z/OS at restart: nonpersistent messages on the queue manager's own queues are gone.
        own = private_tag(self.qsg, self.name)
        discarded = 0
        for name in sorted(await self.cf.queue_names(own)):
            try:
                discarded += await self.cf.purge_nonpersistent(QueueLocation(own, name))
            except MQError as exc:
                if exc.reason != MQRC.UNKNOWN_OBJECT_NAME:
                    raise
        if discarded:
            log.info("%s: restart: %d nonpersistent message(s) on private queues discarded", self.name, discarded)

    async def _serve(self) -> None:
        self.expiry.start()
        await self.membership.start_watching()
        self.igq.start()
        self.cmdserver.start()
        self.status = "RUNNING"
        log.info("CSQY022I queue manager %s of %s initialization complete, running (incarnation %s)",
                 self.name, self.qsg, self.cf.incarnation)

    # ---- losing and regaining the place in the group -------------------------------------

    def tolerates_cf_loss(self) -> bool:
        """CFCONLOS(TOLERATE): a lost coupling facility leaves private-queue work running. The
        QMGR's CFCONLOS is for the administration structure (here: the group's records and the
        heartbeat lease) and each CFSTRUCT's for its structure, ASQMGR following the QMGR's; all
        live in one coupling facility, so its loss is tolerated only when the QMGR and every
        structure tolerate it. IBM's TERMINATE is stood in for by ending every connection and
        rejoining the group (this emulator's behaviour before CFCONLOS was read)."""
        if str(self.attrs.get("CFCONLOS", "TERMINATE")) != "TOLERATE":
            return False
        return all(str(cf.attrs.get("CFCONLOS", "ASQMGR")) != "TERMINATE" for cf in self.cache.all("CFSTRUCT"))

    def lease_lost(self, why: str) -> None:
        """This incarnation lost its place in the group (its lease lapsed, or a peer fenced it):
        stop serving with the old identity at once, then rejoin as a new incarnation. With
        CFCONLOS(TOLERATE) only the connections that touched shared queues end; those that
        touched only private queues go on, on the page set, while the QM rejoins."""
        if self.status not in ("RUNNING", "QUIESCING") or self._rejoin_task is not None:
            return  # starting (start() fails by itself), stopping, or already rejoining
        self.status = "REJOINING"
        self.cf.incarnation = None  # nothing more reaches the CF as the old incarnation
        self.membership.lost(why)
        self.metrics.cf_connectivity(False)
        for tag in self.shared_tags():
            log.warning("CSQE006I Structure %s connection name %s disconnected", structure_name(tag), self.name)
        ended: list[Connection] = []
        if self.tolerates_cf_loss():
            ended = self.mqi.break_shared_connections()
            broken = len(ended)
            log.error("%s lost its place in the group (%s): CFCONLOS(TOLERATE): %d connection(s) that used shared "
                      "queues ended (MQRC_CONNECTION_BROKEN), %d on private queues go on; rejoining as a new "
                      "incarnation", self.name, why, broken, len(self.mqi.connections))
        else:
            broken = self.mqi.break_all_connections()
            log.error("%s lost its place in the group (%s): %d connection(s) ended (MQRC_CONNECTION_BROKEN); "
                      "rejoining as a new incarnation", self.name, why, broken)
        self._rejoin_task = asyncio.create_task(self._rejoin(ended), name=f"rejoin-{self.name}")

    async def _rejoin(self, ended: list[Connection] | None = None) -> None:
        """Stop the agents, claim the name again as a new incarnation (waiting while Redis cannot
        be reached or another live process holds the name), recover the old incarnation's work
        (fencing it), reload what may have been missed, and serve again. With CFCONLOS(TOLERATE)
        (``ended``: the connections that used shared queues) the private work of the connections
        that go on is left as it is, and the private part of those ended is backed out here."""
        tolerated = self.tolerates_cf_loss()
        try:
            for step in (self.cmdserver.stop, self.igq.stop, self.expiry.stop):
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(step(), timeout=5)
            self.igq.forget_unit_of_work()
            for conn in ended or ():
                try:
                    await self.mqi.end_private_part(conn)
                except MQError as exc:  # its page set did not answer: the next restart backs it out
                    log.warning("%s: private work of ended connection %s not backed out yet: %s",
                                self.name, conn.hconn, exc)
            delay = 0.2
            while self.status == "REJOINING":
                try:
                    previous_failed = await self._join()
                    await self.reload_definitions()
                    await self.structures.connect_all()
                    if tolerated:
                        # Only the shared work of the old incarnation: its private work belongs
                        # to connections that went on (or was backed out above).
                        if previous_failed:
                            await self.membership.recover_peer(self.name, wait=True)
                    else:
                        await self._recover_previous_incarnation(previous_failed)
                        # every connection ended: the temporary dynamic queues they made go too
                        await self.dynamic.purge_temporary()
                    await self.reconcile_queue_state()
                    break
                except _REJOIN_FAILURES as exc:
                    log.warning("%s: cannot rejoin the group yet: %s", self.name, exc)
                    self.cf.incarnation = None
                    self.membership.lost("rejoin failed")
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 5.0)
            if self.status == "REJOINING":
                await self._serve()
                self.metrics.cf_connectivity(True)
                for tag in self.shared_tags():
                    log.info("CSQE005I Structure %s connected as %s, version=%s", structure_name(tag), self.name,
                             self.cf.incarnation)
        finally:
            self._rejoin_task = None

    def begin_quiesce(self) -> None:
        """SIGTERM: no new work; waiting gets and FAIL_IF_QUIESCING calls end with 2161."""
        if self.status == "RUNNING":
            self.status = "QUIESCING"
            log.info("queue manager %s is quiescing", self.name)
            self.cf.wake_all_waiters()

    async def stop(self) -> None:
        """Clean shutdown: end every connection (backing out its unit of work, closing its
        handles), then leave the group as STOPPED, so nothing is left for peer recovery."""
        self.begin_quiesce()
        self.status = "STOPPING"
        if self._rejoin_task is not None:
            self._rejoin_task.cancel()
            await asyncio.gather(self._rejoin_task, return_exceptions=True)
        for step in (self.cmdserver.stop, self.igq.stop, self.mqi.stop, self.mqi.end_all_connections, self.expiry.stop,
                     self.membership.leave,
                     self.triggers.stop, self.broadcaster.stop, self.cf.stop, self.structures.stop,
                     self.cf.close_peers, self.loop_lag.stop):
            try:
                # A shutdown must end: a step that hangs (Redis gone, a stuck task) is abandoned.
                await asyncio.wait_for(step(), timeout=5)
            except TimeoutError:
                log.error("%s: shutdown step %s did not finish in 5s; continuing", self.name, step.__qualname__)
        try:
            # Last, so that the records of the connections ended above are in it too.
            await asyncio.wait_for(self.activity.stop(), timeout=30)
        except TimeoutError:
            log.error("%s: the activity log was not fully written within 30s", self.name)

    async def _peer_recovered(self, failed: str, counts: tuple[int, int, int]) -> None:
        """Activity record of a peer recovery this QM did (of ``failed``, maybe itself)."""
        backed_out, committed, cleared = counts
        self.activity.emit(Verb.PEER_RECOVERY, object=failed, count=backed_out + committed,
                           detail=json.dumps({"backed_out": backed_out, "committed": committed,
                                              "handles_cleared": cleared}))

    async def _definition_changed(self, old: ObjectDef, new: ObjectDef) -> None:
        """Re-triggering after a definition change (the workflow knows no trigger service)."""
        await self.triggers.definition_changed(old, new)

    def shared_tags(self) -> list[str]:
        """Hash tags of every CF structure of the group (where shared units of work can be)."""
        return [self.cache.structure_tag(cf.name) for cf in self.cache.all("CFSTRUCT")]

    def structure_tags(self) -> set[str]:
        """The structures whose notices this QM follows: its own queues' and each CF structure
        of the group, and that of any shared queue it knows."""
        queues = self._shared_queue_tags(self.cache.all("QUEUE"))
        return {private_tag(self.qsg, self.name), *self.shared_tags(), *queues}

    def _shared_queue_tags(self, queues: Iterable[ObjectDef]) -> set[str]:
        return {queue_location(self.cache, q).tag for q in queues
                if q.objtype == "QLOCAL" and q.qsgdisp == "SHARED" and str(q.attrs.get("CFSTRUCT", "")).strip()}

    async def follow_structures(self, wait_s: float, *, tags: set[str] | None = None, always: bool = False) -> None:
        """Follow the notices (availability, trigger counts) of the structures this QM uses
        (``tags``, default ``structure_tags()``); when some are new (or ``always``), wait at most
        ``wait_s`` until they are subscribed (a structure whose node is down is subscribed in
        the background once it has a master)."""
        if self.cf.follow(self.structure_tags() if tags is None else tags) or always:
            if not await self.cf.wait_following(wait_s):
                log.warning("%s: the notices of some CF structures are not subscribed yet; "
                            "they are tried again in the background", self.name)

    async def db(self, fn: Callable[..., T], *args: Any) -> T:
        """Run a repository call in a worker thread (SQL never blocks the event loop)."""
        return await asyncio.to_thread(fn, *args)

    async def coupling_facility_back(self) -> None:
        """Redis answered again after an outage: reload the definitions (broadcasts were missed)
        and give every local queue its runtime state back if Redis came back without its data
        (define is idempotent: kept counters, messages and event switches stay as they are)."""
        await self.reload_definitions()
        await self.structures.connect_all()  # a structure that came back empty has failed
        await self.reconcile_queue_state()
        log.info("%s: coupling facility available again; definitions and queue state reconciled", self.name)

    async def reload_definitions(self) -> None:
        self.cache.replace_all(await self.db(self.repo.visible_to, self.name))
        self.cf.follow(self.structure_tags())  # a structure defined meanwhile
        self.attrs = await self.db(self.repo.qmgr_attrs, self.name)
        await self.security.reload()  # authority records are definitions too

    async def _refresh_group_copies(self) -> None:
        """As z/OS does at start-up: a GROUP object with no COPY on this QM gets one."""
        for group_obj in await self.db(self.repo.group_objects):
            own = await self.db(self.repo.find, group_obj.objclass, group_obj.name, self.name)
            if own is None:
                copy = ObjectDef(group_obj.objtype, group_obj.name, "COPY", self.name, dict(group_obj.attrs))
                try:
                    await self.workflow.define_own(copy)
                except MQError:
                    continue  # created meanwhile by a concurrent DEFINE
        await self.reload_definitions()

    async def reconcile_queue_state(self) -> None:
        """Give every local queue this QM can use runtime state in the CF (self-healing after a
        lost Redis or a change that reached SQL but not Redis)."""
        for obj in self.cache.all("QUEUE"):
            if obj.objtype == "QLOCAL" and obj.location != "@GROUP":
                if queue_location(self.cache, obj).tag in self.cf.failed:
                    continue  # a failed structure gets its queues back with RECOVER CFSTRUCT
                await self.workflow.sync_queue_state(obj)
                if obj.qsgdisp != "SHARED" and obj.attrs.get("QSVCIEV", "NONE") != "NONE":
                    # docs/ibm-rules.md §1.5: at start-up the timer is set to start-up time if messages wait
                    await self.workflow.start_service_timer(queue_location(self.cache, obj))
        # This QM's page sets carry a state hash too: missing later means Redis lost them.
        await self.cf.structure_state(private_tag(self.qsg, self.name), "CHECK", "", "private",
                                      str(self.clock.now_ms()))

    # ---- broadcasts --------------------------------------------------------------------

    async def _own_copies(self, queues: list[ObjectDef], invalidate: bool) -> None:
        """The state of this QM's COPY queues of a changed GROUP object, in its page set: the
        defining QM writes it when it reaches this page set; this makes sure, before the change
        is acknowledged (e.g. the page sets are on loopback addresses of different hosts)."""
        for obj in queues:
            if obj.objtype == "QLOCAL" and obj.qsgdisp == "COPY" and obj.location == self.name:
                try:
                    await self.workflow.sync_queue_state(obj, bump_gen=invalidate)
                except MQError as exc:
                    log.warning("%s: state of COPY queue %s not updated: %s", self.name, obj.name, exc)

    async def _on_broadcast(self, message: dict[str, Any]) -> None:
        if message.get("kind") == "defs":
            queues: list[ObjectDef] = []
            tags: set[str] = set()
            for objclass, name in message.get("names", []):
                self.cache.replace_name(objclass, name, await self.db(self.repo.visible_to, self.name, objclass, name))
                if message.get("invalidate"):
                    self.invalidate_handles(objclass, name)
                if objclass == "QUEUE":
                    queues += self.cache.usable("QUEUE", name)
                elif objclass == "CFSTRUCT" and self.cache.cfstruct(name) is not None:
                    tags.add(self.cache.structure_tag(name))
            # A new CF structure (or shared queue) is followed before the broadcast is acknowledged.
            await self.follow_structures(NOTICES_NEW_S, tags=tags | self._shared_queue_tags(queues))
            await self._own_copies(queues, bool(message.get("invalidate")))
        elif message.get("kind") == "cfstatus":
            await self.structures.refresh(str(message.get("name", "")))
        elif message.get("kind") == SECURITY_CHANGED["kind"]:
            await self.security.reload()
        elif message.get("kind") == "perfm" and message.get("origin") != self.name:
            await self.events.answer(message)

    def invalidate_handles(self, objclass: str, name: str) -> None:
        """Fail this QM's open handles on ``name`` with MQRC_OBJECT_CHANGED on their next use."""
        if objclass == "QUEUE":
            self.mqi.invalidate(name)

    def cf_connected(self) -> bool:
        """False from a loss of the coupling facility until this QM has rejoined the group."""
        return self.metrics.cf_connected

    def cf_connection(self) -> dict[str, Any]:
        """This QM's connection to the coupling facility as it knows it: ``state`` CONNECTED,
        LOST (unreachable; the lease holds, or with CFCONLOS(TOLERATE) private work goes on) or
        REJOINING (the lease lapsed: rejoining as a new incarnation); ``since`` (ms) when it was
        found unreachable (None: connected); ``cfconlos`` how the QM takes the loss."""
        since = self.membership.unreachable_since_ms
        state = "REJOINING" if self.status == "REJOINING" else "LOST" if since is not None else "CONNECTED"
        return {"state": state, "since": since, "cfconlos": "TOLERATE" if self.tolerates_cf_loss() else "TERMINATE"}

    def info(self) -> dict[str, Any]:
        """GET /v1/qmgr: name, QSG, status and the QMGR attributes."""
        shown = {spec.name: attributes.display_value(spec, self.attrs.get(spec.name, spec.default))
                 for spec in attributes.specs("QMGR").values()}
        return {"name": self.name, "qsg": self.qsg, "status": self.status, **shown, **self.igq.info(),
                # the emulator's own state, kept out of IBM's DISPLAY QMSTATUS: CONNECTED, or LOST
                # until the QM has rejoined the group (with CFCONLOS(TOLERATE) private queues go on)
                "CFCONN": "CONNECTED" if self.cf_connected() else "LOST",
                "clock_offset_ms": self.clock_offset_ms()}

    def _now_datetime(self) -> datetime:
        return datetime.fromtimestamp(self.clock.now_ms() / 1000, tz=UTC)

    def clock_offset_ms(self) -> int:
        """How far the group clock is from this host's wall clock (0 on an injected clock)."""
        return self.group_clock.offset_ms if self.group_clock is not None else 0

    async def group_info(self) -> list[dict[str, Any]]:
        """The members of the QSG and their state (DISPLAY GROUP, /v1/qmgr)."""
        return [m.as_dict() for m in await self.membership.members()]
