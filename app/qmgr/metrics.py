"""Prometheus metrics of one queue manager (``GET /metrics``, prometheus-client's text format).

Two kinds, so that the hot path pays only a counter increment:
- **counted as they happen**, from the activity records every MQI call and group happening
  already produces (app/activity/hooks.py; one funnel, ``ActivityLog.observer``): calls by verb
  and reason code with latency histograms, events, trigger messages, expired messages, IGQ
  transfers, peer recoveries; and the coupling-facility script round
  trips (app/cf/base.py ``observe_call``);
- **read at scrape time** from the coupling facility and the queue manager: per local queue
  CURDEPTH, uncommitted messages, this QM's enqueue/dequeue counts, open input/output handles
  and the age of its last put and get; connections, units of work, the heartbeat lease and
  each CF structure's status.

Names follow Prometheus conventions (``qsg_`` prefix, ``_total`` counters, seconds);
docs/reference/metrics.md lists them (generated from this file). The registry is the queue
manager's own, so several QMs in one process (tests) keep apart.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Iterable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from app.activity.schema import MQI_VERBS, Verb
from app.cf.keys import structure_name
from app.core.reasons import reason_name
from app.qmgr.definitions import queue_location

log = logging.getLogger(__name__)

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_HAPPENINGS = frozenset({Verb.EVENT, Verb.TRIGGER, Verb.EXPIRY, Verb.IGQ, Verb.PEER_RECOVERY, Verb.REPORT})
# MQI calls take from tens of microseconds (a get from an empty queue) to a wait of minutes.
#: How many of the latest happenings the console's timeline keeps, and which of their fields.
RECENT = 200
_RECENT_FIELDS = ("ts", "verb", "object", "rc", "count", "qmgr", "correl_id", "msg_id", "detail")
_CALL_BUCKETS = (0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30, 300)
_LAG_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
_CF_BUCKETS = (0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.05, 0.25, 1)


class QmgrMetrics:
    """The metrics of one queue manager ``qm`` (a ``QueueManager``)."""

    def __init__(self, qm: Any) -> None:
        self.qm = qm
        self.registry = CollectorRegistry(auto_describe=False)
        r = self.registry
        self.calls = Counter("qsg_mqi_calls", "MQI calls by verb and reason code (0 = MQRC_NONE)",
                             ("verb", "reason"), registry=r)
        self.latency = Histogram("qsg_mqi_call_duration_seconds", "Latency of MQI calls in the queue manager",
                                 ("verb",), buckets=_CALL_BUCKETS, registry=r)
        self.events = Counter("qsg_events", "Instrumentation events issued, by reason", ("reason",), registry=r)
        self.triggers = Counter("qsg_trigger_messages", "Trigger messages put", registry=r)
        self.expired = Counter("qsg_expired_messages", "Expired messages discarded", registry=r)
        self.igq = Counter("qsg_igq_messages", "Messages moved by intra-group queuing", registry=r)
        self.recoveries = Counter("qsg_peer_recoveries", "Peer recoveries of failed queue managers done here",
                                  registry=r)
        self.cf_calls = Histogram("qsg_cf_call_duration_seconds", "Round trips of coupling-facility scripts",
                                  ("script",), buckets=_CF_BUCKETS, registry=r)
        self.replica_shortfalls = Counter(
            "qsg_cf_replica_shortfalls", "State-changing CF calls acknowledged by fewer replicas than "
            "QSG_CF_REPLICA_ACKS within QSG_CF_REPLICA_TIMEOUT_MS (done, but a failover may lose them)",
            ("structure",), registry=r)
        self.loop_lag = Histogram("qsg_event_loop_lag_seconds",
                                  "How late a 0.1 s timer of the event loop fired (app/qmgr/looplag.py): time the "
                                  "loop was held by one piece of work", buckets=_LAG_BUCKETS, registry=r)
        self.cf_losses = Counter("qsg_cf_connectivity_losses", "Times this QM lost its connection to the coupling "
                                 "facility (its heartbeat lease lapsed)", registry=r)
        self.cf_reconnections = Counter("qsg_cf_reconnections", "Times this QM connected to the coupling facility "
                                        "again after a loss (rejoined the group)", registry=r)
        #: False from a loss of the coupling facility until this QM has rejoined the group.
        self.cf_connected = True
        r.register(_Snapshot(self))
        self._snapshot: list[Metric] = []
        self._render_lock = asyncio.Lock()
        # labelled children, looked up once (labels() takes a lock and builds a key each call)
        self._by_verb: dict[tuple[str, int], Any] = {}
        self._by_script: dict[str, Any] = {}
        #: The latest group happenings (events, trigger messages, expiries, IGQ, peer recoveries, reports),
        #: newest last, for the console's timeline.
        self.recent: deque[dict[str, Any]] = deque(maxlen=RECENT)

    # -- as it happens --

    def observe(self, record: dict[str, Any], count: int = 1) -> None:
        """One activity record (``ActivityLog.observer``); for an MQI verb, ``count`` calls
        described by it (the messages of a batch call, which share their latency)."""
        verb = record.get("verb")
        if verb in MQI_VERBS:
            rc = int(record.get("rc", 0))
            key = (verb, rc)
            children = self._by_verb.get(key)
            if children is None:
                children = (self.calls.labels(verb, str(rc)), self.latency.labels(verb))
                self._by_verb[key] = children
            latency = record.get("latency_us", 0) / 1e6
            if count == 1:
                children[0].inc()
                children[1].observe(latency)
            else:
                children[0].inc(count)
                _observe_times(children[1], latency, count)
            return
        if verb in _HAPPENINGS:
            self.recent.append({k: record[k] for k in _RECENT_FIELDS if k in record})
        if verb == Verb.EVENT:
            self.events.labels(reason_name(int(record.get("rc", 0)))).inc()
        elif verb == Verb.TRIGGER:
            self.triggers.inc()
        elif verb == Verb.EXPIRY:
            self.expired.inc(int(record.get("count", 1)))
        elif verb == Verb.IGQ:
            self.igq.inc()
        elif verb == Verb.PEER_RECOVERY:
            self.recoveries.inc()

    def observe_cf_call(self, script: str, seconds: float) -> None:
        """One coupling-facility script round trip (``CFBase.observe_call``)."""
        child = self._by_script.get(script)
        if child is None:
            child = self._by_script[script] = self.cf_calls.labels(script)
        child.observe(seconds)

    def observe_loop_lag(self, seconds: float) -> None:
        """One sample of the event loop's lag (``LoopLag``)."""
        self.loop_lag.observe(seconds)

    def cf_connectivity(self, connected: bool) -> None:
        """The coupling facility was lost (False) or this QM is connected again (True)."""
        if connected and not self.cf_connected:
            self.cf_reconnections.inc()
        elif not connected and self.cf_connected:
            self.cf_losses.inc()
        self.cf_connected = connected

    def replica_shortfall(self, tag: str) -> None:
        """A CF call's WAIT got fewer replica acknowledgements than asked (``CFBase._replicated``);
        labelled by structure name, or the tag for the group's records and private queues."""
        self.replica_shortfalls.labels(structure_name(tag) or tag).inc()

    # -- at scrape time --

    async def render(self, *, per_queue: bool = True) -> bytes:
        """The whole exposition: the live state read now, then every metric; without the series
        labelled by queue name unless ``per_queue``."""
        async with self._render_lock:  # one scrape's snapshot at a time (it is the collector's state)
            self._snapshot = await self._read_state(per_queue)
            return generate_latest(self.registry)

    async def _read_state(self, per_queue: bool = True) -> list[Metric]:
        qm = self.qm
        labels = ("queue", "qsgdisp")
        depth = GaugeMetricFamily("qsg_queue_depth",
                                  "CURDEPTH: messages on the queue (as MQ counts it, uncommitted puts included)",
                                  labels=labels)
        uncommitted = GaugeMetricFamily("qsg_queue_uncommitted_messages",
                                        "Messages put or got in units of work not yet resolved", labels=labels)
        ipprocs = GaugeMetricFamily("qsg_queue_open_input_handles", "IPPROCS: handles open for input on this QM",
                                    labels=labels)
        opprocs = GaugeMetricFamily("qsg_queue_open_output_handles",
                                    "OPPROCS: handles open for output on this QM", labels=labels)
        enq = GaugeMetricFamily("qsg_queue_enqueued_messages",
                                "MsgEnqCount: messages put through this QM since the last RESET QSTATS",
                                labels=labels)
        deq = GaugeMetricFamily("qsg_queue_dequeued_messages",
                                "MsgDeqCount: messages got through this QM since the last RESET QSTATS",
                                labels=labels)
        last_put = GaugeMetricFamily("qsg_queue_last_put_age_seconds",
                                     "Seconds since this QM last put a message to the queue", labels=labels)
        last_get = GaugeMetricFamily("qsg_queue_last_get_age_seconds",
                                     "Seconds since this QM last got a message from the queue", labels=labels)
        now_ms = qm.clock.now_ms()
        for obj, status in await self.queue_statuses() if per_queue else ():
            key = (obj.name, obj.qsgdisp)
            depth.add_metric(key, status.depth)
            uncommitted.add_metric(key, status.uncommitted)
            mine = status.opens.get(qm.name, {})
            ipprocs.add_metric(key, int(mine.get("ipprocs", 0)))
            opprocs.add_metric(key, int(mine.get("opprocs", 0)))
            stats = status.stats.get(qm.name)
            if stats is not None:
                enq.add_metric(key, stats.enq)
                deq.add_metric(key, stats.deq)
                if stats.last_put_ms:
                    last_put.add_metric(key, max(0, now_ms - stats.last_put_ms) / 1000)
                if stats.last_get_ms:
                    last_get.add_metric(key, max(0, now_ms - stats.last_get_ms) / 1000)
        connections = qm.mqi.connections
        conns = GaugeMetricFamily("qsg_connections", "Connections (hconns) to this queue manager")
        conns.add_metric((), len(connections))
        uows = GaugeMetricFamily("qsg_units_of_work", "Connections with a unit of work in progress")
        uows.add_metric((), sum(1 for c in connections.values() if c.uow_tags))
        running = GaugeMetricFamily("qsg_qmgr_running", "1 while the queue manager is RUNNING")
        running.add_metric((), 1 if qm.status == "RUNNING" else 0)
        lease = GaugeMetricFamily("qsg_heartbeat_lease_valid",
                                  "1 while this QM's heartbeat lease in the group surely holds")
        lease.add_metric((), 1 if qm.membership.lease_valid() else 0)
        lag_max = GaugeMetricFamily("qsg_event_loop_lag_max_seconds",
                                    "The longest the event loop was held since the queue manager started")
        lag_max.add_metric((), qm.loop_lag.max_s)
        offset = GaugeMetricFamily("qsg_clock_offset_ms",
                                   "Group clock (the coupling facility's time) minus this host's wall clock, ms")
        offset.add_metric((), qm.clock_offset_ms())
        cf = GaugeMetricFamily("qsg_cf_connected", "1 while this QM is connected to the coupling facility, 0 from a "
                               "loss until it has rejoined the group (CFCONLOS(TOLERATE): private queues go on)")
        cf.add_metric((), 1 if self.cf_connected else 0)
        structures = GaugeMetricFamily("qsg_cf_structure_active",
                                       "1 for an ACTIVE CF structure, 0 for a failed one", labels=("structure",))
        for name, active in self._structure_states().items():
            structures.add_metric((name,), 1 if active else 0)
        security = qm.security
        verified = CounterMetricFamily("qsg_auth_password_checks",
                                     "argon2 checks of a password or API key run since start; 'unknown' ones "
                                     "are of an unknown user or key, against a dummy hash", labels=("kind",))
        for kind, count in security.verifications.items():
            verified.add_metric((kind,), count)
        throttled = CounterMetricFamily("qsg_auth_throttled",
                                      "Authentications refused by the failed-login throttle since start")
        throttled.add_metric((), security.throttle.refused)
        fsyncs = CounterMetricFamily("qsg_mqlog_fsyncs", "fsyncs of this QM's recovery log since start (persistent "
                                     "messages of RECOVER(YES) structures; concurrent calls share one)")
        fsyncs.add_metric((), qm.structures.recovery_log.fsyncs)
        return [depth, uncommitted, ipprocs, opprocs, enq, deq, last_put, last_get, conns, uows, running, lease,
                lag_max, offset, cf, structures, verified, throttled, fsyncs, *self._igq_agent()]

    def _igq_agent(self) -> list[Metric]:
        """The IGQ agent's state (GET /v1/qmgr's IGQAGENT, IGQRETRIES, IGQRESTARTS): 1 for the
        state it is in, and its retry and restart counts."""
        info = self.qm.igq.info()
        state = GaugeMetricFamily("qsg_igq_agent_state", "1 for the state the IGQ agent is in", labels=("state",))
        state.add_metric((str(info.get("IGQAGENT", "")),), 1)
        retries = GaugeMetricFamily("qsg_igq_agent_retries", "Retries of the IGQ agent's current message")
        retries.add_metric((), int(info.get("IGQRETRIES", 0)))
        restarts = CounterMetricFamily("qsg_igq_agent_restarts", "Times the IGQ agent has restarted since start")
        restarts.add_metric((), int(info.get("IGQRESTARTS", 0)))
        return [state, retries, restarts]

    async def queue_statuses(self) -> list[tuple[Any, Any]]:
        """The local queues this QM serves (its private ones and the shared ones) with their
        status; a queue whose structure cannot answer now is left out (of this scrape, or of the
        console's rates sample)."""
        qm = self.qm
        queues = [obj for obj in qm.cache.all("QUEUE") if obj.objtype == "QLOCAL"
                  and (obj.qsgdisp == "SHARED" or obj.owner_qmgr == qm.name)]
        limit = asyncio.Semaphore(16)

        async def one(obj: Any) -> tuple[Any, Any] | None:
            async with limit:
                try:
                    return obj, await qm.cf.queue_status(queue_location(qm.cache, obj))
                except Exception:  # noqa: BLE001 - a failed structure must not fail the scrape
                    return None

        found = await asyncio.gather(*(one(obj) for obj in queues))
        return [pair for pair in found if pair is not None]

    def _structure_states(self) -> dict[str, bool]:
        """Each CF structure this QM knows, and whether it is usable (not failed) as this QM saw
        it last (app/qmgr/cfstruct.py keeps ``cf.failed``)."""
        qm = self.qm
        return {obj.name: qm.cache.structure_tag(obj.name) not in qm.cf.failed for obj in qm.cache.all("CFSTRUCT")}


class _Snapshot(Collector):
    """Yields the live state ``QmgrMetrics.render`` read just before (collectors are sync)."""

    def __init__(self, metrics: QmgrMetrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterable[Metric]:
        return list(self.metrics._snapshot)


def _observe_times(histogram: Histogram, value: float, count: int) -> None:
    """``count`` observations of ``value`` in ``histogram`` (a labelled child). prometheus_client
    has no count for ``observe``: its sum and the one bucket are added to once, as its ``observe``
    adds to them; one by one where a version of the library keeps them otherwise."""
    buckets, bounds, total = (getattr(histogram, name, None) for name in ("_buckets", "_upper_bounds", "_sum"))
    if buckets is None or bounds is None or total is None:
        for _ in range(count):
            histogram.observe(value)
        return
    total.inc(value * count)
    for i, bound in enumerate(bounds):
        if value <= bound:
            buckets[i].inc(count)
            return
