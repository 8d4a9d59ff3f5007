"""The one workflow through which definitions change, whether by an MQSC command (DEFINE, ALTER,
DELETE: ``define``, ``alter``, ``delete``), by MQOPEN of a model queue or the end of a dynamic
queue (app/qmgr/dynamic.py: ``define``, ``delete_dynamic``), by MQSET (an application's, or
the queue manager's own after a DEPTH trigger: ``apply_mqset``) or by the queue manager itself at
start (its system and default objects, the COPY of a GROUP object: ``define_own``). The caller
validates the definition; the order is this module's:

1. the checks that need the group (FORCE, a structure's move, DELETE's: app/qmgr/defsteps.py);
2. the shared repository (and the COPY objects a QSGDISP(GROUP) definition generates);
3. then each changed local queue's runtime attributes in the coupling facility
   (``sync_queue_state``);
4. then the acknowledged broadcast that refreshes every QM's definition cache (``announce``);
5. and last the re-trigger conditions of a changed trigger definition (``definition_changed``)
   and, for a CFSTRUCT, its connection (a later loss is noticed).

``change_definitions`` does steps 3 and 4 for what step 2 wrote. ``define_own`` is step 2
alone: a QMGR or COPY object of this queue manager is seen by no other one (nothing to
broadcast), and the start gives every local queue its state afterwards
(``QueueManager.reconcile_queue_state``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from typing import TYPE_CHECKING, Any

from app.core import attributes
from app.core.errors import MQError
from app.core.objects import GROUP_LOCATION, ObjectDef
from app.core.reasons import MQRC
from app.qmgr.definitions import queue_location, runtime_attrs, switches_to_set
from app.qmgr.defsteps import Db, DefinitionSteps, StructureChanges, open_handles

if TYPE_CHECKING:
    from app.cf.engine import CouplingFacility
    from app.cf.keys import QueueLocation
    from app.core.clock import Clock
    from app.qmgr.definitions import DefinitionCache
    from app.qmgr.ports import Publisher
    from app.repository.store import Repository

#: condition 13 of the trigger rules: (definition before, definition after) of a changed queue
Retrigger = Callable[[ObjectDef, ObjectDef], Awaitable[None]]


class DefinitionWorkflow(DefinitionSteps):
    """Definition changes of one queue manager: repository, coupling facility, broadcast."""

    def __init__(self, *, qsg: str, qmgr: str, repo: Repository, db: Db,
                 cf: CouplingFacility, cache: DefinitionCache, clock: Clock, broadcaster: Publisher,
                 retrigger: Retrigger, structures: StructureChanges) -> None:
        super().__init__(qsg=qsg, qmgr=qmgr, repo=repo, db=db, cf=cf, cache=cache, structures=structures)
        self.clock = clock
        self.broadcaster = broadcaster
        self.retrigger = retrigger

    async def find(self, objclass: str, name: str, location: str) -> ObjectDef | None:
        """The stored definition of ``name`` at ``location`` (None: there is none)."""
        return await self.db(self.repo.find, objclass, name, location)

    async def visible_to(self, qmgr: str, objclass: str) -> list[ObjectDef]:
        """The stored definitions of ``objclass`` queue manager ``qmgr`` sees (DISPLAY)."""
        return await self.db(self.repo.visible_to, qmgr, objclass)

    async def alter_qmgr(self, qmgr: str, keywords: list[tuple[str, str | None]]) -> dict[str, Any]:
        """ALTER QMGR: the keywords applied to the stored attributes; returns them as stored."""
        return await self.db(self.repo.alter_qmgr, qmgr, lambda cur: attributes.apply_keywords(
            "QMGR", {**attributes.defaults("QMGR"), **cur}, keywords))

    async def define(self, new: ObjectDef, existing: ObjectDef | None = None,
                     messages: list[str] | None = None) -> ObjectDef:
        """DEFINE (``existing``: DEFINE ... REPLACE of it) of a definition its caller validated,
        also of a dynamic queue. ``messages`` receives what the command reports (COPY objects
        not made). Returns the stored definition."""
        async with await self._structure_move(existing, new.attrs) as move:
            if existing:
                await self._check_force(existing, new.attrs, force=False)
                saved = await self.db(self.repo.update, new, lambda _cur: new.attrs)
            else:
                saved = await self.db(self.repo.insert, new)
            move.stored = True
            changed = [saved]
            if new.qsgdisp == "GROUP" and new.objtype != "CFSTRUCT":
                changed += await self._make_copies(saved, messages if messages is not None else [])
            # DEFINE ... REPLACE sets the event switches as given; a new queue gets them anyway
            await self.change_definitions(changed, [(saved.objclass, saved.name)], set_switches=existing is not None)
        if new.objtype == "CFSTRUCT":
            await self.structures.connect(new.name)  # allocated now: a later loss is noticed
        return saved

    async def define_own(self, new: ObjectDef) -> ObjectDef:
        """A definition the queue manager makes for itself at start, with QSGDISP(QMGR) or
        COPY: stored (MQError MQRC_OBJECT_ALREADY_EXISTS when it was defined meanwhile), with
        no broadcast and no coupling-facility state yet (see the module's docstring)."""
        if new.qsgdisp not in ("QMGR", "COPY") or new.location != self.qmgr:
            raise ValueError(f"{new.name}: only this queue manager's own QMGR or COPY objects are defined at start")
        return await self.db(self.repo.insert, new)

    async def alter(self, existing: ObjectDef, new_attrs: dict[str, Any],
                    change: Callable[[dict[str, Any]], dict[str, Any]], *, force: bool, switches: Collection[str],
                    messages: list[str]) -> ObjectDef:
        """ALTER of ``existing``: ``change`` makes the new attributes from the stored ones
        (``new_attrs``: its result on ``existing``, as its command validated it; it is applied
        again to the stored definition, which another change may have altered meanwhile).
        ``switches``: the event switches the command named."""
        objtype = existing.objtype
        if objtype == "QLOCAL" and existing.qsgdisp == "SHARED" and \
                new_attrs["CFSTRUCT"] != existing.attrs.get("CFSTRUCT"):
            status = await self.cf.queue_status(queue_location(self.cache, existing))
            if status.depth or open_handles(status):
                raise MQError(MQRC.OBJECT_IN_USE,
                              "CFSTRUCT of a shared queue can change only while it is empty and closed")
        forced = await self._check_force(existing, new_attrs, force=force)
        async with await self._structure_move(existing, new_attrs) as move:
            saved = await self.db(self.repo.update, existing, lambda cur: change(cur.attrs))
            move.stored = True
            changed = [saved]
            if existing.qsgdisp == "GROUP" and objtype != "CFSTRUCT":
                changed += await self._make_copies(saved, messages)
            await self.change_definitions(changed, [(saved.objclass, saved.name)], bump_gen=forced,
                                          set_switches=switches, invalidate=forced)
        # condition 13 is evaluated by this QM for the definition it uses (a GROUP object's COPY)
        used = next((d for d in changed if d.location in (self.qmgr, "@SHARED")), None)
        if used is not None:
            await self.definition_changed(existing, used)
        if objtype == "CFSTRUCT":
            # a failed structure altered to RECAUTO(YES) is recovered now (app/qmgr/cfstruct.py)
            await self.structures.connect(existing.name)
        return saved

    async def delete(self, existing: ObjectDef, *, purge: bool, messages: list[str]) -> None:
        """DELETE of ``existing``: its checks and a local queue's state first (app/qmgr/defsteps.py),
        then the repository (a GROUP object's copies, a CFSTRUCT's bookkeeping), then the broadcast."""
        await self._check_deletable(existing, purge=purge)
        await self.db(self.repo.delete, existing)
        if existing.qsgdisp == "GROUP" and existing.objtype != "CFSTRUCT":
            await self._delete_copies(existing, purge, messages)
        if existing.objtype == "CFSTRUCT":
            await self.db(self.structures.store.forget, existing.name)
        await self.announce([(existing.objclass, existing.name)])

    async def delete_dynamic(self, obj: ObjectDef) -> None:
        """A dynamic queue's definition goes at once (no new MQOPEN finds it; one gone already
        is no error) and every QM is told; its coupling-facility state is the caller's to
        remove, now or at the last close (app/qmgr/dynamic.py)."""
        found = await self.db(self.repo.find, obj.objclass, obj.name, obj.location)
        if found is not None:
            await self.db(self.repo.delete, found)
            await self.announce([(obj.objclass, obj.name)])

    async def change_definitions(self, changed: list[ObjectDef], announce: list[tuple[str, str]], *,
                                 bump_gen: bool = False, set_switches: bool | Collection[str] = False,
                                 invalidate: bool = False) -> None:
        """Definitions the repository has just stored (``changed``): their local queues' runtime
        attributes into the coupling facility, then the acknowledged broadcast of ``announce``
        ((class, name) pairs). ``bump_gen``/``invalidate``: an ALTER ... FORCE (open handles
        fail with MQRC_OBJECT_CHANGED)."""
        if any(o.objtype == "QLOCAL" and o.qsgdisp == "COPY" for o in changed):
            await self.cf.know_pagesets()  # the copies are on every queue manager's page set
        for obj in changed:
            if obj.objtype == "QLOCAL" and obj.location != GROUP_LOCATION:
                try:
                    await self.sync_queue_state(obj, bump_gen=bump_gen, set_switches=set_switches)
                except MQError as exc:
                    if obj.qsgdisp != "COPY" or obj.location == self.qmgr or exc.reason != MQRC.CF_NOT_AVAILABLE:
                        raise
                    # That queue manager is not running (its page set with it): it makes its
                    # COPY's state when it starts (QueueManager.reconcile_queue_state).
        await self.announce(announce, invalidate=invalidate)

    async def apply_mqset(self, obj: ObjectDef, keywords: list[tuple[str, str | None]], *,
                          retrigger: bool = True) -> ObjectDef:
        """MQSET: change the attributes of the opened object's own definition, as an ALTER would
        (also used by the queue manager itself to set TRIGGER off after a DEPTH trigger)."""
        current = await self.db(self.repo.find, obj.objclass, obj.name, obj.location)
        if current is None:
            raise MQError(MQRC.Q_DELETED, f"{obj.name} has been deleted")
        attributes.apply_keywords(obj.objtype, {**attributes.defaults(obj.objtype), **current.attrs}, keywords)
        saved = await self.db(self.repo.update, current, lambda cur: attributes.apply_keywords(
            obj.objtype, {**attributes.defaults(obj.objtype), **cur.attrs}, keywords))
        if saved.objtype == "QLOCAL":
            await self.sync_queue_state(saved)
        await self.announce([(saved.objclass, saved.name)])
        if retrigger:
            await self.definition_changed(current, saved)
        return saved

    async def definition_changed(self, old: ObjectDef, new: ObjectDef) -> None:
        """Re-trigger conditions of a changed definition (trigger attributes, GET or PUT allowed)."""
        await self.retrigger(old, new)

    async def sync_queue_state(self, obj: ObjectDef, *, bump_gen: bool = False,
                               set_switches: bool | Collection[str] = False) -> None:
        """Write a local queue's runtime attributes into its CF state (created if missing).

        ``set_switches``: the event switches that replace the live ones - all four (``True``,
        DEFINE REPLACE) or those an ALTER named; the others keep the value the queue manager
        last switched them to.

        The service timer is left alone: it restarts only on an MQPUT to an empty queue and an
        MQGET (docs/ibm-rules.md §1.2), never on an ALTER. The one exception is a service
        interval event being enabled where it was NONE: the CF does not keep the timer while the
        event is NONE, and the timer is active whenever the queue has messages and the event is
        enabled (docs/ibm-rules.md §1.4), so it starts now if messages wait, else is OFF.
        """
        cfstruct = self.cache.cfstruct(str(obj.attrs.get("CFSTRUCT", ""))) if obj.qsgdisp == "SHARED" else None
        loc = queue_location(self.cache, obj)
        enabling = False
        if "QSVCIEV" in switches_to_set(set_switches) and obj.attrs.get("QSVCIEV", "NONE") != "NONE":
            enabling = await self._service_interval_was_off(loc)
        await self.cf.define_queue(loc, runtime_attrs(obj, cfstruct, set_switches=set_switches))
        if enabling:
            await self.start_service_timer(loc)
        if bump_gen:
            await self.cf.alter_queue(loc, {}, bump_gen=True)

    async def _service_interval_was_off(self, loc: QueueLocation) -> bool:
        """Whether the queue's live QSVCIEV is NONE (or the queue has no CF state yet)."""
        try:
            status = await self.cf.queue_status(loc)
        except MQError as exc:
            if exc.reason == MQRC.UNKNOWN_OBJECT_NAME:
                return True
            raise
        return status.attributes.get("qsvciev", "NONE") in ("NONE", "", None)

    async def start_service_timer(self, loc: QueueLocation) -> None:
        """The service timer runs from now while the queue holds messages, else it is OFF."""
        depth = await self.cf.queue_depth(loc)
        await self.cf.alter_queue(loc, {"svctimer": str(self.clock.now_ms()) if depth else ""})

    async def announce(self, changed: list[tuple[str, str]], *, invalidate: bool = False) -> int:
        """Broadcast that definitions of these (class, name) pairs changed; wait for the acks.

        ``invalidate`` tells every QM to fail open handles on those names with
        MQRC_OBJECT_CHANGED (an ALTER ... FORCE).
        """
        return await self.broadcaster.publish(
            {"kind": "defs", "names": [list(c) for c in changed], "invalidate": invalidate})
