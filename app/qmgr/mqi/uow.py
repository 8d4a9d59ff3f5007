"""Units of work: MQCMIT and MQBACK, and their commit or backout in the coupling facility
(one structure at a time; a commit spanning several is recorded first, for peer recovery)."""

from __future__ import annotations

import contextlib
import logging
import time

from app.activity import Verb, recorded
from app.cf.engine import FencedError, OutcomeUnknownError
from app.cf.keys import structure_name
from app.core.errors import MQError
from app.core.reasons import MQRC
from app.qmgr.connection import Connection
from app.qmgr.mqi.table import MqiTable

log = logging.getLogger(__name__)


class UnitsOfWork(MqiTable):
    """MQCMIT, MQBACK and the commit or backout of a connection's unit of work."""

    @recorded(Verb.CMIT)
    async def commit(self, hconn: str) -> None:
        """MQCMIT."""
        had_work, _ = self.broken.get(hconn, (False, 0.0))
        if had_work:
            self.broken[hconn] = (False, time.monotonic())  # reported once; then 2009 as any call
            raise MQError(MQRC.BACKED_OUT, "the unit of work was backed out: the connection ended when queue "
                                           f"manager {self.qm.name} lost its place in the group")
        await self._commit(self.connection(hconn))

    @recorded(Verb.BACK)
    async def backout(self, hconn: str) -> None:
        """MQBACK (a get marked MQGMO_MARK_SKIP_BACKOUT stays got, in a new unit of work).

        After an MQCMIT that was never answered (MQRC_CONNECTION_BROKEN) the commit may have
        happened: it is completed instead, and MQBACK answers MQRC_CONNECTION_BROKEN again."""
        conn = self.connection(hconn)
        if conn.commit_in_doubt:
            await self._commit(conn)
            raise MQError(MQRC.CONNECTION_BROKEN, "the unit of work cannot be backed out: the MQCMIT whose "
                                                  "outcome was unknown has been completed (it is committed)")
        await self._backout(conn, keep_marked=True)
        conn.uow_broken = ""

    async def commit_unit_of_work(self, conn: Connection) -> None:
        """Commit the unit of work of a connection the queue manager's own agent owns (the IGQ
        agent): as MQCMIT, without the connection table."""
        await self._commit(conn)

    async def backout_unit_of_work(self, conn: Connection) -> None:
        """Back out the unit of work of an agent's own connection: as MQBACK."""
        await self._backout(conn)

    async def _commit(self, conn: Connection) -> None:
        await self._clear_stale_intent(conn)
        if conn.uow_broken and not conn.commit_in_doubt:
            # A call of the unit of work was never answered: it cannot commit (what it did is
            # unknown), so all of it is backed out once the coupling facility answers again
            # (until then this MQCMIT fails with MQRC_CF_NOT_AVAILABLE and changes nothing more).
            why = conn.uow_broken
            await self._backout(conn)
            conn.uow_broken = ""
            raise MQError(MQRC.BACKED_OUT, f"the unit of work was backed out: {why}")
        failed = conn.uow_tags & conn.lost_tags
        conn.lost_tags.clear()
        if failed:
            # Part of the unit of work was in a structure that failed: it cannot commit whole,
            # so none of it does (recovery brings back the persistent messages it got).
            await self._backout(conn)
            raise MQError(MQRC.BACKED_OUT, f"the unit of work was backed out: CF structure(s) "
                                           f"{', '.join(structure_name(t) for t in sorted(failed))} failed")
        # A unit of work spanning several structures commits each in turn; the order is
        # recorded first so that a peer can finish an interrupted commit (roll forward).
        tags = sorted(conn.uow_tags)
        intent = False
        try:
            if len(tags) > 1:
                await self.qm.cf.record_commit_intent(self.qm.name, conn.hconn, tags)
                intent = True
            for tag in tags:
                await self.qm.cf.commit(tag, self.qm.name, conn.hconn)
                conn.uow_tags.discard(tag)
        except OutcomeUnknownError:
            # The commit (or its record) was sent and not answered: it may have happened. It is
            # completed, never undone: by the next MQCMIT, MQBACK or MQDISC, or by peer recovery.
            conn.commit_in_doubt = True
            raise
        except FencedError:
            conn.uow_tags.clear()
            if intent:
                # The commit record was written before peer recovery fenced this incarnation, and
                # recovery reads the records only after fencing: it finishes this commit.
                log.warning("%s: commit of %s was interrupted when the queue manager lost its place in "
                            "the group; peer recovery completes it from the commit record", self.qm.name, conn.hconn)
                return
            raise MQError(MQRC.BACKED_OUT, "the unit of work was backed out: queue manager "
                                           f"{self.qm.name} lost its place in the group") from None
        except MQError as exc:
            if not intent:
                raise  # nothing was committed (one structure's commit.lua is all or nothing)
            # The commit record is written (and maybe some structures committed): the unit of
            # work is committing, whatever stopped this MQCMIT - an answer "nothing happened"
            # would be false. The next MQCMIT, MQBACK or MQDISC (or peer recovery) completes it.
            conn.commit_in_doubt = True
            raise MQError(MQRC.CONNECTION_BROKEN, f"the commit was interrupted ({exc.message}): it is "
                                                  "completed by the next MQCMIT") from exc
        conn.commit_in_doubt = False
        if len(tags) > 1:
            conn.stale_intent = True
            with contextlib.suppress(MQError):  # committed all the same: the record goes later
                await self._clear_stale_intent(conn)
        conn.marked = None
        conn.uow_messages = 0  # a new unit of work starts (MAXUMSGS)
        await self.qm.triggers.unit_of_work_ended(conn, committed=True)

    async def _clear_stale_intent(self, conn: Connection) -> None:
        """Remove the record of the connection's last multi-structure commit, done already."""
        if conn.stale_intent:
            await self.qm.cf.clear_commit_intent(self.qm.name, conn.hconn)
            conn.stale_intent = False

    async def _backout(self, conn: Connection, *, keep_marked: bool = False) -> None:
        await self._clear_stale_intent(conn)
        marked, conn.marked = conn.marked, None
        for tag in sorted(conn.uow_tags):
            if keep_marked and tag == marked:
                # z/OS MQGMO_MARK_SKIP_BACKOUT: the marked get is not backed out; it forms a new
                # unit of work of its own, which the application commits or backs out.
                await self.qm.cf.backout(tag, self.qm.name, conn.hconn, keep_marked=True)
                continue
            await self.qm.cf.backout(tag, self.qm.name, conn.hconn)
            conn.uow_tags.discard(tag)
        for handle in conn.handles.values():  # a backed-out group starts again from its first message
            handle.get_msg_group = None
            handle.put_msg_group = None
        conn.uow_messages = 0  # a new unit of work starts (MAXUMSGS)
        await self.qm.triggers.unit_of_work_ended(conn, committed=False)

    def structure_failed(self, tag: str) -> None:
        """A structure failed: units of work with operations in it can no longer commit."""
        for conn in self.connections.values():
            if tag in conn.uow_tags:
                conn.lost_tags.add(tag)
