"""Connections: MQCONN and MQDISC, the idle timeout, and the ends a connection meets when its
client goes away or its queue manager loses its place in the group."""

from __future__ import annotations

import asyncio
import logging
import secrets
import time

from app.activity import Verb, recorded
from app.cf.engine import FencedError
from app.cf.keys import is_private
from app.core.errors import MQError
from app.core.reasons import MQRC
from app.core.rights import current_principal
from app.qmgr.connection import Connection, connection_owner
from app.qmgr.mqi.handles import Handles

log = logging.getLogger(__name__)


#: How long a connection ended because its QM lost its place in the group still answers
#: 2003/2009 (then MQRC_HCONN_ERROR, as for any unknown handle): long enough for a client cut
#: off by the same partition to come back and learn what became of its unit of work.
BROKEN_KEPT_S = 3600.0


class Connections(Handles):
    """MQCONN, MQDISC and the ends of connections."""

    def start(self) -> None:
        self._reaper = asyncio.create_task(self._reap_idle(), name=f"idle-reaper-{self.qm.name}")

    async def stop(self) -> None:
        if self._reaper:
            self._reaper.cancel()
            await asyncio.gather(self._reaper, return_exceptions=True)

    @recorded(Verb.CONN)
    async def connect(self, appl_name: str | None) -> Connection:
        """MQCONN."""
        if appl_name is not None and (not isinstance(appl_name, str) or len(appl_name) > 28):
            raise MQError(MQRC.OPTIONS_ERROR, "appl_name must be a string of at most 28 characters")
        self._check_running()
        principal = current_principal.get()
        security = self.qm.security
        security.check_qmgr(principal, "CONNECT")
        self.connections.admit(principal.name if principal else "")
        appl = (appl_name or "").strip() or "REST CLIENT"
        if principal is not None and not security.may_set_context(principal):
            appl = principal.name[:28]  # PutApplName cannot be chosen without the context right
        hconn = f"{self.qm.name}-{secrets.token_hex(12)}"
        conn = Connection(hconn, appl, principal.name if principal else self.default_user, principal,
                          owner=connection_owner.get())
        self.connections[hconn] = conn
        return conn

    @recorded(Verb.DISC)
    async def disconnect(self, hconn: str, *, commit: bool = True) -> None:
        """MQDISC: close every handle and commit (or, for a broken connection, back out).

        Calls still in progress on the connection finish first, so that their work is part of
        what is committed or backed out (never left in a unit of work nobody owns); a get that
        waits is woken and ends with MQRC_CONNECTION_BROKEN.
        """
        conn = self.connection(hconn)
        del self.connections[hconn]
        for handle in conn.handles.values():
            self.qm.cf.listener.wake(handle.resolved.location)
        while conn.busy:
            conn.calls_done.clear()
            await conn.calls_done.wait()
        broken = conn.uow_broken
        try:
            if conn.commit_in_doubt or (commit and not broken):
                await self._commit(conn)  # (an MQCMIT without an answer is completed, never undone)
            else:
                await self._backout(conn)
                conn.uow_broken = ""
            await self.qm.pubsub.connection_ended(conn)  # before its handles: managed queues go with them
            for handle in list(conn.handles.values()):
                await self._close_handle(conn, handle)
            if commit and broken:
                raise MQError(MQRC.BACKED_OUT, f"the unit of work was backed out: {broken}")
        except MQError as exc:
            if isinstance(exc, FencedError):
                # This QM lost its place in the group: recovery resolves the connection's work,
                # and its client learns so from its next call (e.g. the idle timeout ended it).
                self.broken.setdefault(hconn, (bool(conn.uow_tags), time.monotonic()))
                raise
            if exc.reason == MQRC.BACKED_OUT or hconn in self.broken:
                raise
            # The coupling facility did not answer: keep the connection, so that its unit of work
            # and handles are never orphaned - the client's retry or the idle timeout ends it later
            # (each step is idempotent).
            conn.last_used = time.monotonic()
            self.connections[hconn] = conn
            raise

    async def _reap_idle(self) -> None:
        """End connections idle past the timeout; their unit of work is backed out."""
        timeout = self.qm.settings.idle_timeout_s
        while True:
            await asyncio.sleep(min(timeout / 4, 5.0))
            now = time.monotonic()
            for hconn, (_, ended) in list(self.broken.items()):
                if now - ended > max(timeout, BROKEN_KEPT_S):
                    del self.broken[hconn]  # a client that never came back: forget its handle
            for conn in list(self.connections.values()):
                # A connection owned by a session lives as long as its socket (which ends it at
                # once, ``end_owned``), as a client channel's does: idleness proves nothing there.
                if conn.busy == 0 and conn.owner is None and now - conn.last_used > timeout:
                    log.info("connection %s (%s) idle for %.0fs: ending it and backing out its unit of work",
                             conn.hconn, conn.appl_name, now - conn.last_used)
                    try:
                        await self.disconnect(conn.hconn, commit=False)
                    except MQError as exc:
                        log.warning("could not end idle connection %s yet: %s", conn.hconn, exc)
                    except Exception:  # the reaper must go on whatever one connection did
                        log.exception("ending idle connection %s failed", conn.hconn)

    def break_shared_connections(self) -> list[Connection]:
        """CFCONLOS(TOLERATE) and the lease lost: the connections that touched shared queues (a
        unit of work or a handle in a CF structure) end now, as ``break_all_connections`` ends
        every one - peer recovery resolves their shared work; the caller backs out their private
        part. Connections that touched only private queues go on. Returns those ended."""
        now = time.monotonic()
        ended = [c for c in self.connections.values()
                 if any(not is_private(t) for t in c.uow_tags)
                 or any(not is_private(h.resolved.location.tag) for h in c.handles.values())]
        for conn in ended:
            self.broken[conn.hconn] = (bool(conn.uow_tags), now)
            del self.connections[conn.hconn]
            conn.pending_triggers.clear()
        self.qm.pubsub.connections_broken([conn.hconn for conn in ended])
        self._system.uow_tags.clear()
        self.qm.cf.wake_all_waiters()
        return ended

    async def end_private_part(self, conn: Connection) -> None:
        """The private part of a connection ended by ``break_shared_connections``: its unit of
        work in this QM's page set backed out, its handles on private queues closed."""
        for tag in [t for t in conn.uow_tags if is_private(t)]:
            await self.qm.cf.backout(tag, self.qm.name, conn.hconn)
        conn.uow_tags.clear()
        for handle in list(conn.handles.values()):
            if is_private(handle.resolved.location.tag):
                await self.qm.cf.close_queue(handle.resolved.location, self.qm.name, f"{conn.hconn}:{handle.hobj}")
        conn.handles.clear()

    def break_all_connections(self) -> int:
        """This QM lost its place in the group: every connection ends now, without a word to the
        coupling facility (peer recovery or the rejoin resolves their units of work). Waiting
        getters are woken so they end at once. Returns how many ended."""
        now = time.monotonic()
        ended = list(self.connections.values())
        for conn in ended:
            self.broken[conn.hconn] = (bool(conn.uow_tags), now)
            conn.uow_tags.clear()
            conn.pending_triggers.clear()  # the unit of work they wait for is backed out
        self.connections.clear()
        self.qm.pubsub.connections_broken([conn.hconn for conn in ended])
        self._system.uow_tags.clear()
        self.qm.cf.wake_all_waiters()
        return len(ended)

    async def end_owned(self, owner: object) -> int:
        """The client behind ``owner`` (a session whose socket closed) is gone: each connection it
        made ends now, as when a client channel ends abnormally - its unit of work is backed out
        and its handles are closed (an exclusive input open is released for the next client).
        Calls still in progress finish first (a waiting get is woken), as for MQDISC. Returns
        how many ended; one connection that cannot end yet (the coupling facility did not
        answer) stays for the idle timeout, without its owner, and does not stop the others."""
        ended = 0
        for conn in [c for c in self.connections.values() if c.owner is owner]:
            try:
                await self.disconnect(conn.hconn, commit=False)
                ended += 1
            except MQError as exc:
                if self.connections.get(conn.hconn) is conn:
                    conn.owner = None  # the idle reaper retries it
                log.warning("could not end connection %s of a closed session yet: %s", conn.hconn, exc)
        return ended

    async def end_all_connections(self) -> None:
        """Shutdown: every connection ends abnormally, so its unit of work is backed out and its
        handles closed - nothing is left for peer recovery."""
        for hconn in list(self.connections):
            try:
                await self.disconnect(hconn, commit=False)
            except MQError as exc:
                log.warning("could not end connection %s at shutdown: %s", hconn, exc)
