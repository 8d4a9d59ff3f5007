"""Persistent put+commit / get+commit load on shared queues that rides through faults, and the
bookkeeping that shows every committed message delivered exactly once. The fault soak test
(tests/test_soak_faults.py) and bench/bench_faults.py both drive it.

A client that loses a call connects again (to its own queue manager, or with ``failover`` to
the next one of the group that answers, as a client with a CCDT would) and abandons the old
connection: that one ends after the idle timeout, backing out its unit of work (API.md), so
run the group with a short ``QSG_IDLE_TIMEOUT_S``.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

import httpx
import redis

from app.cf.keys import QueueKeys, QueueLocation, shared_tag, uow_registry
from tests.cluster import Cluster
from tests.mqclient import MQ, MQFailed

Failure = int | str  # an MQ reason code, or the name of the HTTP error (the QM did not answer)


class Observer:
    """What the load reports as it goes; the bench keeps it, the soak test does not."""

    def call(self, verb: str, start: float, end: float, failure: Failure | None) -> None:
        """One MQI call (CONN, OPEN, PUT, GET, CMIT) ended, at ``time.monotonic()`` ``end``."""

    def committed(self, qm: str, kind: str, count: int, start: float, end: float) -> None:
        """A unit of work of ``count`` puts or gets (``kind`` "put" / "get") committed on ``qm``."""


@dataclass
class Outcome:
    """The exactly-once check after the load stopped and the group settled."""

    committed_puts: int
    uncertain_puts: int  # the MQCMIT call failed: each may or may not have been committed
    delivered: int  # messages got under a successful MQCMIT, plus what was drained at the end
    drained: int
    uncertain_gets: int  # got, but the MQCMIT failed: may have been consumed
    duplicates: list[str]
    missing: list[str]  # committed, never delivered, and not an uncertain get
    unexpected: list[str]  # delivered though nobody committed it
    depth: dict[str, int]  # CURDEPTH per queue after the drain
    uncommitted: dict[str, int]  # uncommitted puts and gets per queue after the drain
    cf_uows: list[str] = field(default_factory=list)  # units of work still registered in the CF
    members: list[dict] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.duplicates or self.missing or self.unexpected or any(self.depth.values())
                    or any(self.uncommitted.values()) or self.cf_uows)


def payload(key: str, size: int) -> str:
    """Message data: the message's key, padded to ``size`` characters."""
    return f"{key} ".ljust(size, "x")


def key_of(data: str) -> str:
    return data.split(" ", 1)[0]


class FaultLoad:
    """Producer and consumer threads, each one connection, on shared queues of ``group``."""

    def __init__(self, group: Cluster, *, struct: str = "APPL1", batch: int = 1, size: int = 0,
                 failover: bool = False, observer: Observer | None = None) -> None:
        self.group, self.struct, self.batch, self.size, self.failover = group, struct, batch, size, failover
        self.observer = observer or Observer()
        self.stop_event = threading.Event()
        self.lock = threading.Lock()
        self.queues: set[str] = set()
        self.threads: list[threading.Thread] = []
        self.committed_puts: set[str] = set()
        self.uncertain_puts: set[str] = set()
        self.committed_gets: list[str] = []
        self.uncertain_gets: set[str] = set()

    # ---- the clients ---------------------------------------------------------------------

    def _call(self, verb: str, fn, *args):
        start = time.monotonic()
        try:
            result = fn(*args)
        except MQFailed as exc:
            self.observer.call(verb, start, time.monotonic(), exc.reason)
            raise
        except httpx.HTTPError as exc:
            self.observer.call(verb, start, time.monotonic(), type(exc).__name__)
            raise
        self.observer.call(verb, start, time.monotonic(), None)
        return result

    def _open(self, home: str, queue: str, appl: str, options: list[str]) -> tuple[str, MQ, str]:
        """Connect (home first, then with failover the others in turn) and open the queue:
        (the queue manager, the connection, the object handle)."""
        order = [home] + ([qm for qm in self.group.qms if qm != home] if self.failover else [])
        for i, qm in enumerate(order):
            try:
                mq = self._call("CONN", MQ, self.group.url(qm), appl)
                break
            except (MQFailed, httpx.HTTPError):
                if i == len(order) - 1:
                    raise
        try:
            return qm, mq, self._call("OPEN", mq.open, queue, options)
        except (MQFailed, httpx.HTTPError):
            with contextlib.suppress(MQFailed, httpx.HTTPError):  # no unit of work yet: end it now
                self._call("DISC", mq.disconnect)
            mq.http.close()
            raise

    def _run(self, home: str, queue: str, appl: str, options: list[str], work) -> None:
        """Connect, open and ``work(qm, mq, hobj)`` until stopped; after a failed call, again."""
        while not self.stop_event.is_set():
            try:
                qm, mq, hobj = self._open(home, queue, appl, options)
                try:
                    while not self.stop_event.is_set():
                        work(qm, mq, hobj)
                finally:
                    mq.http.close()
            except (MQFailed, httpx.HTTPError):
                time.sleep(0.2)  # the QM or Redis is away: connect again (a client's retry)

    def _commit(self, qm: str, mq: MQ, kind: str, keys: list[str], start: float) -> None:
        """MQCMIT of a unit of work that put or got (``kind``) the messages ``keys``; when the call
        fails they are in doubt (it may or may not have committed)."""
        try:
            self._call("CMIT", mq.commit)
        except (MQFailed, httpx.HTTPError):
            with self.lock:
                (self.uncertain_puts if kind == "put" else self.uncertain_gets).update(keys)
            raise
        with self.lock:
            if kind == "put":
                self.committed_puts.update(keys)
            else:
                self.committed_gets.extend(keys)
        self.observer.committed(qm, kind, len(keys), start, time.monotonic())

    def producer(self, home: str, queue: str, pid: int) -> None:
        seq = 0

        def work(qm: str, mq: MQ, hobj: str) -> None:
            nonlocal seq
            start = time.monotonic()
            batch = [f"{pid}-{seq + i}" for i in range(self.batch)]
            seq += self.batch
            for key in batch:
                self._call("PUT", mq.put, hobj, payload(key, self.size), {"persistence": "PERSISTENT"},
                           ["SYNCPOINT"])
            self._commit(qm, mq, "put", batch, start)

        self._run(home, queue, f"P{pid}", ["OUTPUT"], work)

    def consumer(self, home: str, queue: str, cid: int) -> None:
        def work(qm: str, mq: MQ, hobj: str) -> None:
            start = time.monotonic()
            try:
                message = self._call("GET", mq.get, hobj, ["WAIT", "SYNCPOINT"], 500)
            except MQFailed as exc:
                if exc.reason == 2033:
                    return
                raise
            self._commit(qm, mq, "get", [key_of(message["data"])], start)

        self._run(home, queue, f"C{cid}", ["INPUT_SHARED"], work)

    def start(self, producers: list[tuple[str, str]], consumers: list[tuple[str, str]]) -> None:
        """One thread per (queue manager, queue) in each list."""
        for i, (qm, q) in enumerate(producers):
            self.threads.append(threading.Thread(target=self.producer, args=(qm, q, i), daemon=True))
        for i, (qm, q) in enumerate(consumers):
            self.threads.append(threading.Thread(target=self.consumer, args=(qm, q, i), daemon=True))
        self.queues |= {q for _, q in producers + consumers}
        for t in self.threads:
            t.start()

    def stop(self) -> None:
        self.stop_event.set()
        for t in self.threads:
            t.join(timeout=60)

    # ---- after the load ------------------------------------------------------------------

    def _cf_state(self, cf: redis.Redis) -> tuple[dict[str, int], dict[str, int], list[str]]:
        tag = shared_tag(self.group.qsg, self.struct)
        ctl = {q: cf.hgetall(QueueKeys(QueueLocation(tag, q)).ctl) for q in sorted(self.queues)}
        depth = {q: int(c.get(b"depth", 0)) for q, c in ctl.items()}
        uncom = {q: int(c.get(b"uncom", 0)) for q, c in ctl.items()}
        return depth, uncom, sorted(m.decode() for m in cf.smembers(uow_registry(tag)))

    def settle_and_check(self, timeout_s: float = 30) -> Outcome:
        """After ``stop``: wait for peer recovery of any failed QM and for abandoned connections
        to end (their units of work backed out), drain every queue, and account for each message."""
        url = self.group.url(next(iter(self.group.qms)))
        cf = redis.Redis.from_url(self.group.redis_url)
        deadline = time.monotonic() + timeout_s
        while True:
            members = httpx.get(f"{url}/v1/qmgr", timeout=10).json()["members"]
            recovered = all(m["RECOVERED"] == "YES" for m in members if m["STATUS"] == "FAILED")
            _, uncom, uows = self._cf_state(cf)
            if (recovered and not any(uncom.values()) and not uows) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        reader = MQ(url, "DRAIN")
        drained = 0
        for q in sorted(self.queues):
            h = reader.open(q, ["INPUT_SHARED"])
            while True:
                try:
                    self.committed_gets.append(key_of(reader.get(h, ["WAIT", "NO_SYNCPOINT"], wait_ms=3000)["data"]))
                    drained += 1
                except MQFailed as exc:
                    if exc.reason != 2033:
                        raise
                    break
        reader.disconnect()
        depth, uncom, uows = self._cf_state(cf)
        cf.close()
        got = Counter(self.committed_gets)
        seen = set(got)
        return Outcome(
            committed_puts=len(self.committed_puts), uncertain_puts=len(self.uncertain_puts), delivered=len(self.committed_gets),
            drained=drained, uncertain_gets=len(self.uncertain_gets), duplicates=sorted(k for k, n in got.items() if n > 1),
            # a message is accounted for when it was delivered, or its get's MQCMIT was in doubt
            missing=sorted(self.committed_puts - seen - self.uncertain_gets),
            unexpected=sorted(seen - self.committed_puts - self.uncertain_puts),
            depth=depth, uncommitted=uncom, cf_uows=uows, members=members)
