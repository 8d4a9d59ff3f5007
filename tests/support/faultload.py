"""Persistent put+commit / get+commit load on shared queues that rides through faults, and the
bookkeeping that shows every committed message delivered exactly once. The fault soak test
(tests/test_soak_faults.py) and bench/bench_faults.py both drive it.

The check (``judge``, pure: unit-tested on synthetic ledgers in tests/test_faultload_check.py):

(a) every message whose put was committed (MQCMIT answered OK) is delivered exactly once;
(b) nothing uncommitted is delivered: an MQCMIT that answered 2003 (MQRC_BACKED_OUT), or any
    other definite refusal, means NOT committed, so such a message showing up is ``unexpected``;
(c) order: the messages one consumer connection got (and committed) from one producer come in
    put order - their sequence numbers increase. Gets by several consumers interleave, so the
    rule is per consumer connection; a message returned to the queue by a backout legitimately
    comes out later than its successors, and it says so (MQMD BackoutCount > 0), so such
    deliveries are left out, as are messages whose put was in doubt;
(d) in doubt are only calls whose outcome the client cannot know (``commit_in_doubt``): a
    transport failure (httpx error, no answer), 2009 CONNECTION_BROKEN (the queue manager says it
    cannot know), 2195 UNEXPECTED_ERROR or an answer without an MQ reason. They are counted in the
    Outcome and excused from (a) and (b). Strict: every other answer - 2345 CF_NOT_AVAILABLE
    included - is a promise that the call changed nothing (DESIGN.md principle 7), so a message
    whose MQCMIT answered it must never be delivered, and one whose get's MQCMIT answered it
    must be delivered again.

A client that loses a call connects again (to its own queue manager, or with ``failover`` to
the next one of the group that answers, as a client with a CCDT would) and abandons the old
connection: that one ends after the idle timeout, backing out its unit of work (docs/api.md §4), so
run the group with a short ``QSG_IDLE_TIMEOUT_S``.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import httpx
import redis

from app.cf.keys import QueueKeys, QueueLocation, shared_tag, uow_registry
from tests.support.cluster import Cluster
from tests.support.mq import MQ, MQFailed
from tests.support.redis_cluster import sync_client

Failure = int | str  # an MQ reason code, or the name of the HTTP error (the QM did not answer)


class Observer:
    """What the load reports as it goes; the bench keeps it, the soak test does not."""

    def call(self, verb: str, start: float, end: float, failure: Failure | None) -> None:
        """One MQI call (CONN, OPEN, PUT, GET, CMIT) ended, at ``time.monotonic()`` ``end``."""

    def committed(self, qm: str, kind: str, count: int, start: float, end: float) -> None:
        """A unit of work of ``count`` puts or gets (``kind`` "put" / "get") committed on ``qm``."""


#: Reasons of a failed MQCMIT after which the unit of work may or may not have committed: the
#: queue manager's "I cannot know" (CONNECTION_BROKEN) and an unexpected error.
IN_DOUBT_REASONS = frozenset({2009, 2195})  # CONNECTION_BROKEN, UNEXPECTED_ERROR
BACKED_OUT = 2003


def commit_in_doubt(exc: BaseException) -> bool:
    """Whether an MQCMIT that raised ``exc`` may have committed: transport failures (no answer),
    2009, 2195 and answers without an MQ reason are in doubt; 2003 BACKED_OUT, 2345
    CF_NOT_AVAILABLE and every other MQ answer are a definite "not committed" (strict)."""
    if isinstance(exc, httpx.HTTPError):
        return True
    if isinstance(exc, MQFailed):
        return exc.reason is None or exc.reason in IN_DOUBT_REASONS
    return True  # anything else: the client cannot tell


@dataclass(frozen=True)
class Delivery:
    """One message got under a successful MQCMIT (or drained at the end)."""

    key: str
    conn: str  # the consumer connection that got it ("QM1:<hconn>", "DRAIN")
    backout_count: int = 0  # MQMD BackoutCount: > 0 when a backout returned it to the queue


@dataclass
class Ledger:
    """What the clients know of every unit of work; the checker's input (plain data)."""

    committed_puts: set[str] = field(default_factory=set)  # MQCMIT answered OK
    in_doubt_puts: set[str] = field(default_factory=set)  # MQCMIT failed in doubt
    backed_out_puts: set[str] = field(default_factory=set)  # MQCMIT answered 2003 (or refused)
    deliveries: list[Delivery] = field(default_factory=list)  # in the order each connection got them
    in_doubt_gets: set[str] = field(default_factory=set)
    backed_out_gets: set[str] = field(default_factory=set)


@dataclass
class Outcome:
    """The exactly-once check after the load stopped and the group settled."""

    committed_puts: int
    uncertain_puts: int  # in doubt: the MQCMIT failed without a definite answer (commit_in_doubt)
    delivered: int  # messages got under a successful MQCMIT, plus what was drained at the end
    drained: int
    uncertain_gets: int  # got, but the MQCMIT was in doubt: may have been consumed
    duplicates: list[str]
    missing: list[str]  # committed, never delivered, and not an in-doubt get
    unexpected: list[str]  # delivered though nobody committed it (or its MQCMIT answered 2003)
    depth: dict[str, int]  # CURDEPTH per queue after the drain
    uncommitted: dict[str, int]  # uncommitted puts and gets per queue after the drain
    cf_uows: list[str] = field(default_factory=list)  # units of work still registered in the CF
    members: list[dict] = field(default_factory=list)
    order_violations: list[str] = field(default_factory=list)  # "conn: key after key" (rule (c))
    backed_out_puts: int = 0  # MQCMIT of puts answered 2003 (or another definite refusal)
    backed_out_gets: int = 0  # MQCMIT of gets answered so: the messages must come again

    @property
    def in_doubt_puts(self) -> int:
        return self.uncertain_puts

    @property
    def in_doubt_gets(self) -> int:
        return self.uncertain_gets

    @property
    def ok(self) -> bool:
        return not (self.duplicates or self.missing or self.unexpected or self.order_violations
                    or any(self.depth.values()) or any(self.uncommitted.values()) or self.cf_uows)

    def summary(self) -> str:
        """One paragraph for a report or an assertion message."""
        return (f"committed puts {self.committed_puts} (in doubt {self.uncertain_puts}, backed out "
                f"{self.backed_out_puts}); delivered {self.delivered} ({self.drained} drained; in-doubt gets "
                f"{self.uncertain_gets}, backed-out gets {self.backed_out_gets}); duplicates "
                f"{len(self.duplicates)} {self.duplicates[:5]}, missing {len(self.missing)} {self.missing[:5]}, "
                f"unexpected {len(self.unexpected)} {self.unexpected[:5]}, order violations "
                f"{len(self.order_violations)} {self.order_violations[:3]}; left: depth {sum(self.depth.values())}, "
                f"uncommitted {sum(self.uncommitted.values())}, CF units of work {self.cf_uows[:5]}")


def split_key(key: str) -> tuple[str, int]:
    """A message key "<producer>-<sequence>" as (producer, sequence number)."""
    producer, _, seq = key.rpartition("-")
    return producer, int(seq)


def order_violations(deliveries: Iterable[Delivery], committed: set[str]) -> list[str]:
    """Rule (c): per consumer connection and producer, the sequence numbers of the committed
    messages it got with BackoutCount 0 increase. One entry per message that came after a later one."""
    last: dict[tuple[str, str], tuple[int, str]] = {}
    found = []
    for d in deliveries:
        if d.backout_count or d.key not in committed:
            continue
        producer, seq = split_key(d.key)
        prev = last.get((d.conn, producer))
        if prev is not None and seq <= prev[0]:
            found.append(f"{d.conn}: {d.key} after {prev[1]}")
        if prev is None or seq > prev[0]:
            last[(d.conn, producer)] = (seq, d.key)
    return found


def judge(ledger: Ledger, *, drained: int = 0, depth: dict[str, int] | None = None,
          uncommitted: dict[str, int] | None = None, cf_uows: list[str] | None = None,
          members: list[dict] | None = None) -> Outcome:
    """Rules (a)-(d) of the module docstring over ``ledger`` and what the CF holds afterwards."""
    got = Counter(d.key for d in ledger.deliveries)
    seen = set(got)
    return Outcome(
        committed_puts=len(ledger.committed_puts), uncertain_puts=len(ledger.in_doubt_puts),
        delivered=len(ledger.deliveries), drained=drained, uncertain_gets=len(ledger.in_doubt_gets),
        duplicates=sorted(k for k, n in got.items() if n > 1),
        # a message is accounted for when it was delivered, or its get's MQCMIT was in doubt
        missing=sorted(ledger.committed_puts - seen - ledger.in_doubt_gets),
        # in doubt is the only excuse: a put whose MQCMIT answered 2003 must never be delivered
        unexpected=sorted(seen - ledger.committed_puts - ledger.in_doubt_puts),
        depth=depth or {}, uncommitted=uncommitted or {}, cf_uows=cf_uows or [], members=members or [],
        order_violations=order_violations(ledger.deliveries, ledger.committed_puts - ledger.in_doubt_puts),
        backed_out_puts=len(ledger.backed_out_puts), backed_out_gets=len(ledger.backed_out_gets))


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
        self.ledger = Ledger()

    # the ledger's sets under their former names (callers of earlier versions read them)
    @property
    def committed_puts(self) -> set[str]:
        return self.ledger.committed_puts

    @property
    def uncertain_puts(self) -> set[str]:
        return self.ledger.in_doubt_puts

    @property
    def uncertain_gets(self) -> set[str]:
        return self.ledger.in_doubt_gets

    @property
    def committed_gets(self) -> list[str]:
        return [d.key for d in self.ledger.deliveries]

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

    def _commit(self, qm: str, mq: MQ, kind: str, keys: list[str], start: float,
                backout_counts: list[int] | None = None) -> None:
        """MQCMIT of a unit of work that put or got (``kind``) the messages ``keys``; when the call
        fails they are in doubt or definitely not committed (``commit_in_doubt``)."""
        ledger = self.ledger
        try:
            self._call("CMIT", mq.commit)
        except (MQFailed, httpx.HTTPError) as exc:
            doubt = commit_in_doubt(exc)
            with self.lock:
                if kind == "put":
                    (ledger.in_doubt_puts if doubt else ledger.backed_out_puts).update(keys)
                else:
                    (ledger.in_doubt_gets if doubt else ledger.backed_out_gets).update(keys)
            raise
        with self.lock:
            if kind == "put":
                ledger.committed_puts.update(keys)
            else:
                conn = f"{qm}:{mq.hconn}"
                counts = backout_counts or [0] * len(keys)
                ledger.deliveries.extend(Delivery(k, conn, n) for k, n in zip(keys, counts, strict=False))
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
            self._commit(qm, mq, "get", [key_of(message["data"])], start,
                         [int(message["md"].get("backout_count", 0))])

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

    def _cf_state(self, cf: redis.Redis | redis.RedisCluster) -> tuple[dict[str, int], dict[str, int], list[str]]:
        tag = shared_tag(self.group.qsg, self.struct)
        ctl = {q: cf.hgetall(QueueKeys(QueueLocation(tag, q)).ctl) for q in sorted(self.queues)}
        depth = {q: int(c.get(b"depth", 0)) for q, c in ctl.items()}
        uncom = {q: int(c.get(b"uncom", 0)) for q, c in ctl.items()}
        return depth, uncom, sorted(m.decode() for m in cf.smembers(uow_registry(tag)))

    def settle_and_check(self, timeout_s: float = 30) -> Outcome:
        """After ``stop``: wait for peer recovery of any failed QM and for abandoned connections
        to end (their units of work backed out), drain every queue, and account for each message."""
        url = self.group.url(next(iter(self.group.qms)))
        cf = sync_client(self.group.redis_url)  # a single Redis or a Redis Cluster
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
                    message = reader.get(h, ["WAIT", "NO_SYNCPOINT"], wait_ms=3000)
                except MQFailed as exc:
                    if exc.reason != 2033:
                        raise
                    break
                self.ledger.deliveries.append(Delivery(key_of(message["data"]), f"DRAIN:{q}",
                                                       int(message["md"].get("backout_count", 0))))
                drained += 1
        reader.disconnect()
        depth, uncom, uows = self._cf_state(cf)
        cf.close()
        return judge(self.ledger, drained=drained, depth=depth, uncommitted=uncom, cf_uows=uows, members=members)
