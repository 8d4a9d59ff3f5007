"""Call tokens of destructive gets outside syncpoint: no message is lost with a lost reply.

A destructive MQGET outside syncpoint (get, get-batch, MSG_UNDER_CURSOR; IF_PERSISTENT for a
non-persistent message) carries a call token ``<incarnation>:<n>``. The script takes the message
off the queue as before but keeps its data, recorded under the token (lua/held.lua), and then:

* the reply arrives: the token joins the releases of this event-loop turn; at the next turn one
  held.lua RELEASE (COD reports, data deleted) is written for all of them, and only then are
  their callers answered; its reply is read in the background. No round trip is added to a
  get's path (it waits for one write, not a reply), and under load one script call releases
  the gets of many connections, where one call per get cost the queue manager about 145 us of
  CPU and Redis about 75 us (bench_wrk, 2026-11-27).
* no reply (MQRC_CONNECTION_BROKEN once the get's deadline has passed, so it can no longer run;
  or the call was abandoned): the message goes back where it was (held.lua RESTORE: same
  priority and sequence, MQMD and backout count as they were), now or - while the coupling
  facility cannot be reached - as soon as it can.
* a waiting get-batch (app/cf/messaging.py): its first message, taken by a waiting get, stays
  held until the call that takes the rest has answered; both tokens are released together, or
  the first restored when the batch answers 2009 (under SYNCPOINT_IF_PERSISTENT a non-persistent
  first message is outside the unit of work the 2009 backs out).
* the queue manager dies first: peer recovery (or its own restart, for its private queues)
  restores every token of the dead incarnation. A token whose reply arrived was released (its
  release written) before its caller was answered, so what comes back was never returned to
  anyone.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from dataclasses import dataclass, field
from typing import Any

from app.cf import deadline, keys
from app.cf.base import CFBase
from app.cf.errors import OutcomeUnknownError
from app.cf.errors import cf_access as _cf_access
from app.cf.replies import HeldReply
from app.cf.scriptargs import GetArgs, HeldArgs
from app.cf.scripts import FollowUp
from app.core.errors import MQError
from app.core.reasons import MQRC

log = logging.getLogger(__name__)

#: Codes of a get's reply that returned a message (get.lua; get_batch.lua's code 0 returned at least one).
_GOT = (0, MQRC.TRUNCATED_MSG_ACCEPTED)
#: How long a release or restore that could not reach the coupling facility is tried again (s).
RETRY_FOR_S = 600.0
#: Pause between those tries (s).
RETRY_EVERY_S = 0.5


class HeldMessages(CFBase):
    """Call tokens and the release or restore of what they hold (the module's docstring)."""

    _tokens = itertools.count(1)  # unique in the process; the incarnation makes them unique in the group

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Work left behind a call whose outcome was unknown: releases, restores, opens taken back.
        self._held_tasks: set[asyncio.Future[None]] = set()
        # Releases of this event-loop turn, per structure and held key, written at the next turn.
        self._releases: dict[tuple[str, str], _Releases] = {}
        self._release_writes: set[asyncio.Future[None]] = set()

    def call_token(self, incarnation: int, mode: str, syncpoint: str) -> str:
        """A new token for a get that removes messages outside syncpoint, "" for any other."""
        if syncpoint == "YES" or mode not in ("GET", "MSG_UNDER_CURSOR"):
            return ""
        return f"{incarnation}:{next(self._tokens)}"

    async def _held_call(self, call: GetArgs, tag: str, incarnation: int, *, settle: bool = True) -> Any:
        """``_script`` for a get: with a token, a reply that got messages is released (written)
        before this returns, and a call without a reply restores them (once the get can no
        longer run). ``settle`` False: a reply that got messages is not released here; the
        caller delivers the token (``_deliver``) or restores it once it knows whether the
        messages reach its caller (a waiting get-batch's first message, app/cf/messaging.py)."""
        if not call.token:
            return await self._script(call, tag, incarnation)
        try:
            reply = await self._script(call, tag, incarnation)
        except OutcomeUnknownError:
            self._restore_soon(tag, call.held, call.token, 0.0)  # its deadline has passed: it cannot run any more
            raise
        except MQError:
            raise  # nothing ran (refused before it was sent, fenced, late)
        except BaseException:
            # Abandoned mid-call (cancelled): the get may still run until its deadline.
            self._restore_soon(tag, call.held, call.token, (self.call_budget_ms + 2 * deadline.MARGIN_MS) / 1000)
            raise
        if settle and isinstance(reply, list) and len(reply) > 4 and reply[0] in _GOT:
            await self._deliver(tag, call.held, [call.token])
        return reply

    async def _deliver(self, tag: str, held: str, tokens: list[str]) -> None:
        """Release ``tokens`` of gets whose messages are about to be returned: written (with the
        others of this event-loop turn) before this returns, so the caller is answered only then."""
        tokens = [token for token in tokens if token]
        if not tokens:
            return
        for token in tokens:
            batch = self._release(tag, held, token)
        await asyncio.shield(batch.written)  # a cancelled caller leaves the batch to the others
        if batch.gone.intersection(tokens):
            # Paused past its lease: peer recovery put the messages back before the release
            # ran, so they are not this caller's (another gets them); the incarnation is fenced.
            self._fenced("peer recovery restored what a get of it held")

    def _restore_now(self, tag: str, held: str, token: str) -> None:
        """Put back what ``token`` holds, in the background: messages a finished get took that
        will never be returned to its caller (its answer is 2009, or it was abandoned)."""
        if token:
            self._restore_soon(tag, held, token, 0.0)

    def _release(self, tag: str, held: str, token: str) -> _Releases:
        """Release ``token`` with the others of this event-loop turn (the returned batch's
        ``written`` is done once its release is written or could not be: then it is sent again
        in the background, and a restart or peer recovery restores what never got through)."""
        batch = self._releases.get((tag, held))
        if batch is None:
            batch = self._releases[(tag, held)] = _Releases(asyncio.get_running_loop().create_future())
            asyncio.get_running_loop().call_soon(self._write_releases, tag, held)
        batch.tokens.append(token)
        return batch

    def _write_releases(self, tag: str, held: str) -> None:
        batch = self._releases.pop((tag, held))
        replied: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        def done(reply: Any) -> None:
            replied.set_result(reply)
            self._released(tag, held, batch.tokens, reply)

        follow = FollowUp(self._scripts_for(tag).held, *_held_args(tag, held, "RELEASE", batch.tokens).call(),
                          done=done)

        async def write() -> None:
            try:
                if await self._scripts_for(tag).send(follow) and not self.lease_valid():
                    # The event loop was held past the lease (a pause) after these gets ran: peer
                    # recovery may have restored their messages first. Only here is the reply
                    # awaited, to learn which it did (they must not be answered as got).
                    reply = await replied
                    if not isinstance(reply, BaseException):
                        batch.gone = HeldReply.parse(reply).gone
            finally:
                batch.written.set_result(None)
        task = asyncio.ensure_future(write())
        self._release_writes.add(task)
        task.add_done_callback(self._release_writes.discard)

    def _released(self, tag: str, held: str, tokens: list[str], reply: Any) -> None:
        if isinstance(reply, BaseException):
            log.warning("%s: the release of %d get(s) in %s is unknown (%s): sending it again", self.qmgr,
                        len(tokens), tag, reply)
            self._in_background(self._until_done(tag, held, "RELEASE", tokens))
            return
        reports = HeldReply.parse(reply).reports
        if reports and self.on_reports is not None:
            self.on_reports(tag)  # COD reports queued

    def _restore_soon(self, tag: str, held: str, token: str, after_s: float) -> None:
        async def restore() -> None:
            await asyncio.sleep(after_s)
            await self._until_done(tag, held, "RESTORE", [token])
        self._in_background(restore())

    def _in_background(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._held_tasks.add(task)
        task.add_done_callback(self._held_tasks.discard)

    async def _until_done(self, tag: str, held: str, action: str, tokens: list[str]) -> None:
        """Release or restore ``tokens`` (idempotent), trying again while the CF cannot be reached
        (bounded; the queue manager's restart or peer recovery restores what is left)."""
        loop = asyncio.get_running_loop()
        give_up = loop.time() + RETRY_FOR_S
        while True:
            try:
                reply = await self._held(tag, held, action, tokens)
            except MQError as exc:
                if loop.time() > give_up:
                    log.error("%s: could not %s get(s) %s in %s (%s): peer recovery or a restart will", self.qmgr,
                              action.lower(), ",".join(tokens), tag, exc)
                    return
                await asyncio.sleep(RETRY_EVERY_S)
                continue
            if action == "RESTORE" and reply.messages:
                log.warning("%s: the reply to get %s in %s never arrived: %d message(s) restored to the queue",
                            self.qmgr, ",".join(tokens), tag, reply.messages)
            elif reply.reports and self.on_reports is not None:
                self.on_reports(tag)
            return

    async def restore_held(self, tag: str, qmgr: str, below: int) -> int:
        """Peer recovery, or a restart: restore every message ``qmgr`` holds in structure ``tag``
        under a token of an incarnation below ``below`` (fenced). Returns how many."""
        return (await self._held(tag, keys.held_key(tag, qmgr), "RESTORE", [f"<{below}"])).messages

    async def _held(self, tag: str, held: str, action: str, tokens: list[str]) -> HeldReply:
        # Idempotent and unfenced (a token resolved is a no-op): no deadline; a call without a
        # reply is MQRC_CF_NOT_AVAILABLE and simply sent again.
        with _cf_access(tag):
            return HeldReply.parse(await self._unfenced(tag, _held_args(tag, held, action, tokens)))

    async def releases_done(self) -> None:
        """Return once every release of an answered get has run and its reply been read (tests,
        and a look at a structure's raw contents)."""
        while self._releases or self._release_writes or self.scripts.follow_ups or self.pageset_scripts.follow_ups:
            pending = [*(b.written for b in self._releases.values()), *self._release_writes,
                       *self.scripts.follow_ups, *self.pageset_scripts.follow_ups]
            await asyncio.gather(*pending, return_exceptions=True)

    async def stop(self) -> None:
        for task in list(self._held_tasks):
            task.cancel()  # what is left, the restart or peer recovery restores
        await super().stop()


@dataclass(slots=True)
class _Releases:
    """The tokens of one event-loop turn's answered gets, and their release being written."""

    written: asyncio.Future[None]
    tokens: list[str] = field(default_factory=list)
    gone: frozenset[str] = frozenset()  # tokens peer recovery restored before the release ran


def _held_args(tag: str, held: str, action: str, tokens: list[str]) -> HeldArgs:
    return HeldArgs(held, keys.structure_prefix(tag), action, keys.availability_channel(tag), tokens)
