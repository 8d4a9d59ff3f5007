"""CF structure failure, BACKUP CFSTRUCT and RECOVER CFSTRUCT, as on z/OS.

* A structure whose contents are lost (Redis restarted without its data, or RESET CFSTRUCT
  ACTION(FAIL)) is detected by the first queue manager that connects to it again: the shared
  repository names its allocation, Redis no longer has it (struct.lua). A RECOVER(YES)
  structure is then FAILED: its queues answer MQRC_CF_STRUC_FAILED (2373) on every queue
  manager until RECOVER CFSTRUCT, which a CFLEVEL(5) RECAUTO(YES) structure runs by itself
  (see ``_auto_recovers``).
  A RECOVER(NO) structure holds no persistent messages (MQRC_PERSISTENT_NOT_ALLOWED) and is
  reallocated empty at once.
* BACKUP CFSTRUCT copies the committed persistent messages to a backup file and records it in
  the repository; RECOVER CFSTRUCT reads the latest backup and every queue manager's log from
  a margin before it (``app.qmgr.mqlog``), replays (``app.core.cfrecovery``) and puts the
  messages back. Non-persistent messages are not recovered, as on z/OS.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from app.cf.keys import QueueLocation, private_tag, shared_tag, slot_tag, structure_name
from app.cf.leases import BACKUP_LOCK_MS, backup_lock
from app.core.cfrecovery import RecoveredStructure, SavedMessage, replay
from app.core.errors import MQError
from app.core.objects import ObjectDef
from app.core.reasons import MQRC
from app.qmgr.definitions import queue_location, recoverable
from app.qmgr.mqlog import MessageLog
from app.repository.cfstore import BackupRecord, StructureStore

if TYPE_CHECKING:
    from app.qmgr.ports import StructuresHost

log = logging.getLogger(__name__)

#: Recovery reads the logs from this long before a backup's window (a record written late by a
#: slow queue manager is not missed; replaying older records changes nothing).
LOG_MARGIN_NS = 600 * 10**9
RESTORE_BATCH = 200


class StructureService:
    """The structures of the group as one queue manager sees them, and the commands on them."""

    def __init__(self, qm: StructuresHost) -> None:
        self.qm = qm
        self.store = StructureStore(qm.repo.engine, qm.qsg)
        self.recovery_log = MessageLog(qm.settings.mqlog_dir, qm.qsg, qm.name, sync=qm.settings.mqlog_sync == "commit",
                              structure_of=self._recoverable, now_ns=self._now_ns)
        self._tasks: set[asyncio.Task[Any]] = set()
        # One check of a structure at a time: a stale answer must not overwrite a newer one.
        self._locks: dict[str, asyncio.Lock] = {}
        self._auto_running: set[str] = set()  # structures this QM is recovering by RECAUTO

    def _now_ns(self) -> int:
        """The group clock in nanoseconds: the recovery log's stamps and the backup and
        allocation times recovery compares with them, whichever queue manager wrote them."""
        return self.qm.clock.now_ms() * 1_000_000

    def _recoverable(self, tag: str) -> str | None:
        name = structure_name(tag)
        return name if name and recoverable(self.qm.cache.cfstruct(name)) else None

    def _tag(self, name: str) -> str:
        return self.qm.cache.structure_tag(name)

    def _definition(self, name: str) -> ObjectDef:
        cf = self.qm.cache.cfstruct(name)
        if cf is None:
            raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, f"CFSTRUCT({name}) is not defined")
        return cf

    def _queues(self, name: str) -> list[ObjectDef]:
        return [d for d in self.qm.cache.all("QUEUE")
                if d.objtype == "QLOCAL" and d.qsgdisp == "SHARED" and d.attrs.get("CFSTRUCT") == name]

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        self.recovery_log.stop()

    # ---- connecting: allocation and failure detection -------------------------------------

    async def connect_all(self) -> None:
        """Check every structure (start-up, and when Redis answers again after an outage)."""
        for cf in self.qm.cache.all("CFSTRUCT"):
            await self.connect(cf.name)

    async def structure_lost(self, tag: str) -> bool:
        """A queue's state is missing: True when its structure was lost (and is now failed or
        reallocated), not merely the queue undefined. This QM's own private queues ("page
        sets") get their state back at once."""
        if tag == private_tag(self.qm.qsg, self.qm.name):
            # The state hash is made on first check: missing again means Redis lost its data.
            state = await self.qm.cf.structure_state(tag, "CHECK", "", "private", str(self.qm.clock.now_ms()))
            if state.outcome != "NEW":
                return False
            await self.qm.reconcile_queue_state()
            return True
        name = structure_name(tag)
        if not name or self.qm.cache.cfstruct(name) is None:
            return False
        known = await self.qm.db(self.store.structure, name)
        before = known.alloc_id if known else ""
        status = await self.connect(name)
        after = await self.qm.db(self.store.structure, name)
        return status != "ACTIVE" or (after.alloc_id if after else "") != before

    async def connect(self, name: str, *, auto: bool = True) -> str:
        """Connect to one structure: allocate it on first use, notice that it was lost. Returns
        its status (ACTIVE, FAILED, RECOVERING). ``auto``: a FAILED structure is recovered by
        RECAUTO (not when the caller is RECOVER CFSTRUCT itself)."""
        async with self._locks.setdefault(name, asyncio.Lock()):
            return await self._connect(name, auto)

    async def _connect(self, name: str, auto: bool = True) -> str:
        tag = self._tag(name)
        known = await self.qm.db(self.store.structure, name)
        state = await self.qm.cf.structure_state(tag, "CHECK", known.alloc_id if known else "",
                                                 uuid.uuid4().hex, str(self.qm.clock.now_ms()))
        status = state.status
        if state.outcome == "NEW":
            await self.qm.db(self.store.allocated, name, state.alloc, self._now_ns())
        elif state.outcome == "LOST":
            log.error("%s: CF structure %s has failed: its contents were lost", self.qm.name, name)
            status = await self._failed(name, state.fail_ms)
        self._note(tag, status)
        # The repository says FAILED only once the failing QM emptied the structure: recovery
        # must not start (and restore messages) before that emptying.
        if auto and status == "FAILED" and known is not None and known.status == "FAILED":
            self._auto_recover_if_asked(name)
        return status

    def _note(self, tag: str, status: str) -> None:
        if status in ("FAILED", "RECOVERING"):
            if tag not in self.qm.cf.failed:
                self.qm.mqi.structure_failed(tag)
            self.qm.cf.failed.add(tag)
        else:
            self.qm.cf.failed.discard(tag)

    async def _failed(self, name: str, fail_ms: int) -> str:
        """This QM saw the structure fail: reallocate a RECOVER(NO) one empty, record a
        RECOVER(YES) one FAILED (and recover it when RECAUTO says so)."""
        cf = self._definition(name)
        tag = self._tag(name)
        if not recoverable(cf):
            for queue in self._queues(name):  # the queues first: ACTIVE means usable
                await self.qm.workflow.sync_queue_state(queue)
            alloc = uuid.uuid4().hex
            await self.qm.cf.structure_state(tag, "ACTIVE", alloc)
            await self.qm.db(self.store.allocated, name, alloc, self._now_ns())
            log.warning("%s: CF structure %s is RECOVER(NO): reallocated empty, its messages are lost",
                        self.qm.name, name)
            return "ACTIVE"
        await self.qm.db(self.store.set_status, name, "FAILED", fail_ms)
        self._auto_recover_if_asked(name)
        return "FAILED"

    def _auto_recovers(self, name: str) -> bool:
        """Whether a failed structure is recovered without an operator (RECAUTO).

        IBM's DEFINE CFSTRUCT, RECAUTO: YES (the default) recovers the structure automatically
        when a queue manager detects that it has failed, or when a queue manager lost
        connectivity to it and no system of the sysplex still has connectivity to its coupling
        facility (here: Redis comes back without the structure, which every queue manager
        lost); NO leaves it FAILED until RECOVER CFSTRUCT; it does nothing for RECOVER(NO)
        structures, which are reallocated empty. Automatic recovery is a CFLEVEL(5) function.
        https://www.ibm.com/docs/en/SSFKSJ_9.2.0/com.ibm.mq.ref.adm.doc/q085510_.html and
        https://developer.ibm.com/messaging/2017/12/11/set-cfconlos-recauto/ (CFCONLOS, RECAUTO).
        Whichever queue manager finds the structure FAILED starts it - the one that saw it fail,
        one that connects later, the one where RECAUTO was altered to YES - and a failed attempt
        is tried again when a queue manager next finds it FAILED (IBM APAR PI38522: automatic
        recovery that finds a structure FAILED schedules another attempt)."""
        cf = self.qm.cache.cfstruct(name)
        return cf is not None and recoverable(cf) and cf.attrs.get("RECAUTO", "YES") == "YES" \
            and int(cf.attrs.get("CFLEVEL", 3)) >= 5

    def _auto_recover_if_asked(self, name: str) -> None:
        """Start automatic recovery of a FAILED structure when RECAUTO says so, once at a time
        on this queue manager (RECOVER's BUSY answer keeps two queue managers from both
        recovering it)."""
        if not self._auto_recovers(name) or name in self._auto_running:
            return
        self._auto_running.add(name)
        task = asyncio.create_task(self._auto_recover(name))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _auto_recover(self, name: str) -> None:
        try:
            for line in await self.recover([name], purge=False):
                log.warning("%s: RECAUTO: %s", self.qm.name, line)
        except MQError as exc:
            if exc.reason not in (MQRC.CF_STRUC_IN_USE, MQRC.MQRCCF_CF_STRUC_ERROR):  # another QM has it
                log.error("%s: automatic recovery of CF structure %s failed: %s", self.qm.name, name, exc)
        except Exception as exc:  # noqa: BLE001 - logged; the next QM that finds it FAILED tries again
            log.error("%s: automatic recovery of CF structure %s failed: %s", self.qm.name, name, exc)
        finally:
            self._auto_running.discard(name)

    async def refresh(self, name: str) -> None:
        """Another QM changed a structure's state (broadcast): take it over."""
        if self.qm.cache.cfstruct(name) is not None:
            await self.connect(name)

    async def _announce(self, name: str) -> None:
        await self.qm.broadcaster.publish({"kind": "cfstatus", "name": name})

    # ---- HASHTAG: where the structure lives on a Redis Cluster -----------------------------

    async def prepare_move(self, name: str, old_hashtag: str, new_hashtag: str) -> tuple[str, str]:
        """Before a DEFINE REPLACE or ALTER changes a structure's HASHTAG (an emulator addition):
        refuse while anything would be stranded at the old place, then copy its bookkeeping
        (state, last ids, generations, fences) to the new place. Returns (old tag, new tag); the
        caller stores the definition, then calls ``finish_move`` (or ``abandon_move``).

        Refusals: MQRC_CF_STRUC_IN_USE (2346) while a shared queue is defined on the structure
        (as DELETE CFSTRUCT answers) or its place holds any other key (messages, units of work,
        handles, a running backup); MQRCCF_CF_STRUC_ERROR (3236), the reason of a command the
        structure's status is unsuitable for, while it is not ACTIVE."""
        old_tag = shared_tag(self.qm.qsg, name, old_hashtag)
        new_tag = shared_tag(self.qm.qsg, name, new_hashtag)
        change = f"HASHTAG of CFSTRUCT({name}) cannot change from '{old_hashtag}' to '{new_hashtag}'"
        users = sorted({d.name for d in self.qm.cache.all("QUEUE")
                        if d.qsgdisp == "SHARED" and d.attrs.get("CFSTRUCT") == name})
        if users:
            raise MQError(MQRC.CF_STRUC_IN_USE,
                          f"{change}: shared queue(s) {', '.join(users[:5])} are defined on it and their "
                          f"messages would be stranded; delete them (or move them to another structure) first")
        status = await self.connect(name, auto=False)
        if status != "ACTIVE":
            raise MQError(MQRC.MQRCCF_CF_STRUC_ERROR, f"{change}: its status is "
                          f"{'IN RECOVER' if status == 'RECOVERING' else status}, not ACTIVE")
        for tag, where in ((old_tag, "it still holds"), (new_tag, "the new place already holds")):
            held = await self.qm.cf.structure_keys_in_use(tag)
            if held:
                raise MQError(MQRC.CF_STRUC_IN_USE, f"{change}: {where} key(s) {', '.join(held)} "
                              f"(units of work, handles or messages would be stranded)")
        await self.qm.cf.copy_bookkeeping(old_tag, new_tag)
        return old_tag, new_tag

    async def finish_move(self, name: str, old_tag: str, new_tag: str) -> None:
        """The definition with the new HASHTAG is stored and every QM's cache has it: the old
        place is forgotten, and the structure is checked at its new place."""
        await self.qm.cf.drop_bookkeeping(old_tag)
        self.qm.cf.failed.discard(old_tag)
        log.info("%s: CF structure %s moved from {%s} to {%s}", self.qm.name, name,
                 slot_tag(old_tag), slot_tag(new_tag))

    async def abandon_move(self, new_tag: str) -> None:
        """Storing the new definition failed: the copy at the new place goes."""
        await self.qm.cf.drop_bookkeeping(new_tag)

    # ---- RESET CFSTRUCT ACTION(FAIL) ------------------------------------------------------

    async def fail(self, name: str) -> list[str]:
        """Simulate a structure failure: its contents are deleted, its status is FAILED.

        As IBM's RESET CFSTRUCT: "RESET CFSTRUCT requires the structure to be defined with
        CFLEVEL(5)" (https://www.ibm.com/docs/en/SSFKSJ_9.2.0/com.ibm.mq.ref.adm.doc/q086500_.html)
        - else MQRCCF_CF_STRUC_ERROR, the reason of a CF structure command the structure is
        unsuitable for (q047520_); a structure already FAILED answers
        MQRCCF_CF_STRUC_ALREADY_FAILED (3351, cmqcfc.h)."""
        cf = self._definition(name)
        if int(cf.attrs.get("CFLEVEL", 3)) < 5:
            raise MQError(MQRC.MQRCCF_CF_STRUC_ERROR,
                          f"RESET CFSTRUCT requires CFSTRUCT({name}) to be defined with CFLEVEL(5); "
                          f"it is CFLEVEL({cf.attrs.get('CFLEVEL', 3)})")
        if await self.connect(name) == "FAILED":
            raise MQError(MQRC.MQRCCF_CF_STRUC_ALREADY_FAILED, f"CF structure {name} has already failed "
                          f"(RECOVER CFSTRUCT({name}) makes it available again)")
        tag = self._tag(name)
        known = await self.qm.db(self.store.structure, name)
        now = self.qm.clock.now_ms()
        await self.qm.cf.structure_state(tag, "FAIL", str(now), known.alloc_id if known else uuid.uuid4().hex)
        self._note(tag, "FAILED")
        await self._announce(name)  # every QM answers 2373 from now on
        await self.qm.cf.empty_structure(tag)
        status = await self._failed(name, now)
        self._note(tag, status)
        await self._announce(name)
        return [f"CF structure {name} failed; status {status}"]

    # ---- BACKUP CFSTRUCT ------------------------------------------------------------------

    async def backup(self, name: str, exclint_s: int) -> list[str]:
        """BACKUP CFSTRUCT(name) EXCLINT(s): the committed persistent messages put more than
        ``exclint_s`` seconds ago go to a backup file (later ones are in the logs)."""
        cf = self._definition(name)
        if int(cf.attrs.get("CFLEVEL", 3)) < 3 or not recoverable(cf):
            raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR,
                          f"CFSTRUCT({name}) cannot be backed up: it needs CFLEVEL(3) or higher and RECOVER(YES)")
        tag = self._tag(name)
        status = await self.connect(name)
        if status != "ACTIVE":
            # a Backup CF Structure command when the structure's status is unsuitable (q047520_)
            raise MQError(MQRC.MQRCCF_CF_STRUC_ERROR, f"Unable to back up structure {name}: its status is "
                          f"{'IN RECOVER' if status == 'RECOVERING' else status}, not ACTIVE")
        await self.qm.cf.usable(tag)
        lock = backup_lock(tag)
        if not await self.qm.cf.leases.take(lock, self.qm.name, BACKUP_LOCK_MS):
            holder = await self.qm.cf.leases.holder(lock)
            raise MQError(MQRC.CF_STRUC_IN_USE, f"CFSTRUCT({name}) is being backed up by {holder or '?'}")
        try:
            start_ns = self._now_ns()
            before_ms = self.qm.clock.now_ms() - exclint_s * 1000
            messages: list[SavedMessage] = []
            for queue in sorted(await self.qm.cf.queue_names(tag)):
                loc = QueueLocation(tag, queue)
                cursor = "0"
                while True:
                    cursor, chunk = await self.qm.cf.backup_chunk(loc, cursor, before_ms)
                    messages += [SavedMessage(queue, *m) for m in chunk]
                    if cursor == "0":
                        break
            try:
                path, size = await asyncio.to_thread(
                    self.recovery_log.write_backup, f"{name}.{start_ns}.{self.qm.name}.bkp", messages)
            except OSError as exc:  # full or failing disk: no backup, an MQ failure (not a 500)
                raise MQError(MQRC.RESOURCE_PROBLEM,
                              f"Unable to back up structure {name}: the backup cannot be written ({exc})") from exc
            record = BackupRecord(name, self.qm.name, start_ns, start_ns - exclint_s * 10**9, self._now_ns(),
                                  str(path), len(messages), size)
            await self.qm.db(self.store.add_backup, record)
            pruned = await self._prune()
        finally:
            await self.qm.cf.leases.release(lock, self.qm.name)
        lines = [f"Backup of CF structure {name} complete: {len(messages)} persistent message(s), {size} bytes, "
                 f"on {self.qm.name} at {_when(start_ns)}"]
        if pruned:
            lines.append(f"{pruned} log segment(s) no longer needed for recovery deleted")
        return lines

    async def _prune(self) -> int:
        """Delete log segments older than what any recoverable structure's recovery reads."""
        oldest: int | None = None
        for cf in self.qm.cache.all("CFSTRUCT"):
            if not recoverable(cf):
                continue
            b = await self.qm.db(self.store.latest_backup, cf.name)
            s = await self.qm.db(self.store.structure, cf.name)
            start = b.log_from_ns if b else (s.alloc_ns if s else 0)
            oldest = start if oldest is None else min(oldest, start)
        if oldest is None:
            return 0
        try:
            return await asyncio.to_thread(self.recovery_log.prune, oldest - 2 * LOG_MARGIN_NS)
        except OSError as exc:  # housekeeping: the backup stands; the next one prunes again
            log.warning("recovery log segments not pruned after a backup: %s", exc)
            return 0

    # ---- RECOVER CFSTRUCT -----------------------------------------------------------------

    async def recover(self, names: list[str], *, purge: bool) -> list[str]:
        """RECOVER CFSTRUCT(names) TYPE(NORMAL | PURGE) of FAILED structures."""
        lines: list[str] = []
        for name in names:
            cf = self._definition(name)
            if not recoverable(cf):
                raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR,
                              f"CFSTRUCT({name}) is RECOVER(NO): it is reallocated empty when it fails")
            # Recovery reads every queue manager's log: one it cannot see would be left out
            # silently (QSG_MQLOG_DIR not on storage every queue manager reaches).
            missing = self.recovery_log.missing_logs([m.name for m in await self.qm.membership.members()])
            if missing:
                raise MQError(MQRC.MQRCCF_CF_STRUC_ERROR,
                              f"Unable to recover structure {name}: the recovery log of {', '.join(missing)} is not "
                              f"under {self.recovery_log.group_dir} (the log folder must be one every queue manager "
                              "reaches)")
            await self.connect(name, auto=False)
            tag = self._tag(name)
            state = await self.qm.cf.structure_state(tag, "RECOVER", self.qm.name)
            if state.outcome == "BUSY":
                if state.status == "RECOVERING":
                    raise MQError(MQRC.CF_STRUC_IN_USE, f"CFSTRUCT({name}) is being recovered by {state.by}")
                # MQRCCF_CF_STRUC_ERROR: a Recover CF Structure command when the status of the
                # structure is unsuitable (https://www.ibm.com/docs/en/SSFKSJ_latest/reference/q047520_.html),
                # with IBM's console message CSQE102E (its text as IBM APAR PI38522 quotes it)
                raise MQError(MQRC.MQRCCF_CF_STRUC_ERROR,
                              f"CSQE102E Unable to recover structure {name}, not in failed state "
                              f"(it is {state.status}; RESET CFSTRUCT({name}) ACTION(FAIL) fails it)")
            self._note(tag, "RECOVERING")
            await self.qm.db(self.store.set_status, name, "RECOVERING")
            try:
                lines += await self._rebuild(name, tag, state.alloc, purge)
            except BaseException as exc:
                await self.qm.cf.structure_state(tag, "FAIL", str(state.fail_ms or self.qm.clock.now_ms()), state.alloc)
                await self.qm.db(self.store.set_status, name, "FAILED")
                if isinstance(exc, OSError):
                    # The recovery log cannot be read or written (full or failing disk): the
                    # structure stays FAILED, to be recovered again once the disk is back; an
                    # MQ failure says so (insufficient resources), not an HTTP 500.
                    # A PURGE's CLEAR records stay buffered and may still reach the log: the
                    # message says so (the purge is to be repeated, not undone).
                    again = ("its purge may still reach the log, so repeat RECOVER CFSTRUCT TYPE(PURGE)"
                             if purge else "repeat RECOVER CFSTRUCT")
                    raise MQError(MQRC.RESOURCE_PROBLEM,
                                  f"CFSTRUCT({name}) not recovered: the recovery log cannot be used ({exc}); "
                                  f"it stays FAILED - {again} once the disk is back") from exc
                raise
            await self.qm.db(self.store.set_status, name, "ACTIVE", 0)
            self.qm.cf.failed.discard(tag)
            await self._announce(name)
        return lines

    async def _rebuild(self, name: str, tag: str, alloc: str, purge: bool) -> list[str]:
        await self.qm.cf.empty_structure(tag)
        backup = await self.qm.db(self.store.latest_backup, name)
        structure = await self.qm.db(self.store.structure, name)
        since = backup.log_from_ns if backup else (structure.alloc_ns if structure else 0)
        saved = await asyncio.to_thread(self.recovery_log.read_backup, backup.path) if backup and backup.path else []
        self.recovery_log.flush()  # on the loop: the thread below only reads
        records, puts = await asyncio.to_thread(self.recovery_log.read, name, since - LOG_MARGIN_NS)
        recovered = replay(saved, records, puts)
        if purge:
            # Every message so far is gone for good: a CLEAR record per queue says so to any
            # later recovery, and the queues' ids continue after the highest one seen.
            for queue, last_id in recovered.last_ids.items():
                self.recovery_log.removed_all(tag, queue, last_id, deleted=False)
            await self.recovery_log.force()  # on disk before the command answers, as CLEAR QLOCAL's
            recovered = RecoveredStructure(last_ids=recovered.last_ids)
            source = "TYPE(PURGE): recovered empty"
        else:
            source = (f"backup of {_when(backup.start_ns)} by {backup.qmgr} ({len(saved)} message(s))"
                      if backup and backup.path else "no backup: the logs since the structure was allocated") + \
                     f", then {len(puts) + len(records)} log record(s)"
        defined = {d.name: d for d in self._queues(name)}
        for d in defined.values():
            await self.qm.workflow.sync_queue_state(d)
        restored = dropped = 0
        for queue, last_id in recovered.last_ids.items():
            msgs = recovered.messages.get(queue, [])
            if queue not in defined:
                dropped += len(msgs)
                await self.qm.cf.remember_last_id(tag, queue, last_id)
                continue
            loc = queue_location(self.qm.cache, defined[queue])
            for i in range(0, max(len(msgs), 1), RESTORE_BATCH):
                batch = [(m.id, m.meta, m.md, m.data) for m in msgs[i:i + RESTORE_BATCH]]
                restored += await self.qm.cf.restore_messages(loc, last_id, batch)
        await self.qm.cf.structure_state(tag, "ACTIVE", alloc)
        lines = [f"Recovery of CF structure {name} complete from {source}: {restored} persistent message(s) "
                 f"restored to {len(defined)} shared queue(s); non-persistent messages are not recovered"]
        if dropped:
            lines.append(f"{dropped} message(s) of queues no longer defined were not restored")
        return lines

    # ---- DISPLAY CFSTATUS -----------------------------------------------------------------

    async def status(self, name: str, kind: str) -> dict[str, object]:
        """One DISPLAY CFSTATUS row (TYPE SUMMARY or BACKUP). While the coupling facility cannot
        be reached, answered from what this QM knows (z/OS answers the command then too): the
        repository's record of the structure, STATUS(UNKNOWN) unless it is FAILED there."""
        tag = self._tag(name)
        known = await self.qm.db(self.store.structure, name)
        entries = 0
        try:
            status = await self.connect(name)
            if kind == "SUMMARY" and tag not in self.qm.cf.failed:
                entries = sum([await self.qm.cf.queue_depth(QueueLocation(tag, q))
                               for q in await self.qm.cf.queue_names(tag)])
        except MQError as exc:
            if exc.reason != MQRC.CF_NOT_AVAILABLE:
                raise
            status = "FAILED" if known is not None and known.status == "FAILED" else "UNKNOWN"
        row: dict[str, object] = {"CFSTATUS": name, "TYPE": kind,
                                  "STATUS": "IN RECOVER" if status == "RECOVERING" else status}
        fail_ms = known.fail_ms if known else 0
        row["FAILDATE"], row["FAILTIME"] = _date_time(fail_ms * 10**6) if fail_ms else ("", "")
        if kind == "SUMMARY":
            row["CFTYPE"] = "APPL"
            row["ENTSUSED"] = entries
        else:
            backup = await self.qm.db(self.store.latest_backup, name)
            row["QMNAME"] = backup.qmgr if backup else ""
            row["BKUPDATE"], row["BKUPTIME"] = _date_time(backup.start_ns) if backup else ("", "")
            row["BKUPSIZE"] = round(backup.size / 1048576, 3) if backup else 0
        return row

    async def connections(self, name: str) -> list[dict[str, object]]:
        """DISPLAY CFSTATUS TYPE(CONNECT): one row per queue manager of the group connected to the
        structure (STATUS ACTIVE) or whose connection failed (FAILED, with when). While this QM
        cannot reach the coupling facility it knows only its own: FAILED since it lost it."""
        def row(qmgr: str, status: str, fail_ms: int = 0) -> dict[str, object]:
            date, time_ = _date_time(fail_ms * 10**6) if fail_ms else ("", "")
            return {"CFSTATUS": name, "TYPE": "CONNECT", "QMNAME": qmgr, "STATUS": status,
                    "SYSNAME": qmgr, "FAILDATE": date, "FAILTIME": time_}
        lost_ms = self.qm.membership.unreachable_since_ms
        if lost_ms is None:
            try:
                members = await self.qm.membership.members()
            except MQError as exc:
                if exc.reason != MQRC.CF_NOT_AVAILABLE:
                    raise
                lost_ms = self.qm.clock.now_ms()
            else:
                return [row(m.name, m.status) for m in members if m.status in ("ACTIVE", "FAILED")]
        return [row(self.qm.name, "FAILED", lost_ms)]


def _date_time(ns: int) -> tuple[str, str]:
    t = datetime.fromtimestamp(ns / 1e9, tz=UTC)
    return t.strftime("%Y-%m-%d"), t.strftime("%H.%M.%S")


def _when(ns: int) -> str:
    d, t = _date_time(ns)
    return f"{d} {t}"
