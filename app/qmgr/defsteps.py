"""The steps of a definition change that look at more than the one definition, used by the
definition workflow (app/qmgr/workflow.py): IBM's FORCE rules (open handles), the COPY objects
a QSGDISP(GROUP) definition generates on every queue manager, and a CF structure's move to a
new HASHTAG. Moved here from the MQSC command processor, which now calls the workflow."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from app.core.errors import MQError
from app.core.objects import GROUP_LOCATION, ObjectDef
from app.core.reasons import MQRC
from app.qmgr.definitions import queue_location

if TYPE_CHECKING:
    from app.cf.engine import CouplingFacility, QueueStatus
    from app.qmgr.definitions import DefinitionCache
    from app.repository.cfstore import StructureStore
    from app.repository.store import Repository


T = TypeVar("T")


class Db(Protocol):
    """The queue manager's ``db``: a repository call run off the event loop."""

    def __call__(self, fn: Callable[..., T], /, *args: Any) -> Awaitable[T]: ...


class StructureChanges(Protocol):
    """CF structure administration as a definition change uses it (app.qmgr.cfstruct)."""

    store: StructureStore

    async def connect(self, name: str) -> Any: ...

    async def prepare_move(self, name: str, old_hashtag: str, new_hashtag: str) -> tuple[str, str]: ...

    async def finish_move(self, name: str, old_tag: str, new_tag: str) -> None: ...

    async def abandon_move(self, new_tag: str) -> None: ...


def open_handles(status: QueueStatus) -> int:
    """Handles open on a queue, summed over the queue managers of the group."""
    return sum(int(c.get("handles", 0)) for c in status.opens.values())


class DefinitionSteps:
    """What the workflow's steps need: the repository, the coupling facility, the structures."""

    def __init__(self, *, qsg: str, qmgr: str, repo: Repository, db: Db,
                 cf: CouplingFacility, cache: DefinitionCache, structures: StructureChanges) -> None:
        self.qsg = qsg
        self.qmgr = qmgr
        self.repo = repo
        self.db = db
        self.cf = cf
        self.cache = cache
        self.structures = structures

    async def _make_copies(self, group_obj: ObjectDef, messages: list[str]) -> list[ObjectDef]:
        """Generate DEFINE ... REPLACE QSGDISP(COPY) on every queue manager of the group."""
        made = []
        for qmgr in await self.db(self.repo.qmgr_names):
            copy = ObjectDef(group_obj.objtype, group_obj.name, "COPY", qmgr, dict(group_obj.attrs))
            own = await self.db(self.repo.find, group_obj.objclass, group_obj.name, qmgr)
            if own is not None and own.qsgdisp == "QMGR":
                messages.append(f"{qmgr}: {group_obj.name} exists with QSGDISP(QMGR); no COPY made there")
                continue
            if own is not None and own.objtype != group_obj.objtype:
                messages.append(f"{qmgr}: {group_obj.name} exists as a {own.objtype}; no COPY made there")
                continue
            made.append(await self.db(self.repo.upsert, copy))
        return made

    async def _structure_move(self, existing: ObjectDef | None, new_attrs: dict[str, Any]) -> StructureMove:
        """A CFSTRUCT whose HASHTAG (an emulator addition: its place on a Redis Cluster) changes
        moves: allowed only while nothing would be stranded (app/qmgr/cfstruct.py); any other
        definition change moves nothing."""
        if existing is None or existing.objtype != "CFSTRUCT":
            return StructureMove(self.structures, "", None)
        old, new = (str(a.get("HASHTAG", "") or "") for a in (existing.attrs, new_attrs))
        if old == new:
            return StructureMove(self.structures, existing.name, None)
        return StructureMove(self.structures, existing.name,
                             await self.structures.prepare_move(existing.name, old, new))

    async def _check_force(self, existing: ObjectDef, new_attrs: dict[str, Any], *, force: bool) -> bool:
        """IBM's FORCE rules; returns True when open handles must be invalidated.

        QLOCAL: changing USAGE, or NOSHARE while more than one handle has it open for input.
        QALIAS: changing TARGET while the alias is open anywhere in the QSG.
        """
        needs: str | None = None
        if existing.objtype == "QLOCAL":
            locs = [queue_location(self.cache, d) for d in await self._instances(existing)]
            if new_attrs.get("USAGE") != existing.attrs.get("USAGE"):
                for loc in locs:
                    if open_handles(await self.cf.queue_status(loc)):
                        needs = "USAGE of an open queue"
            if not new_attrs.get("SHARE", True) and existing.attrs.get("SHARE", True):
                for loc in locs:
                    if (await self.cf.queue_status(loc)).ipprocs > 1:
                        needs = "NOSHARE while several handles have it open for input"
        elif existing.objtype == "QALIAS" and new_attrs.get("TARGET") != existing.attrs.get("TARGET"):
            for inst in await self._instances(existing):
                if inst.owner_qmgr and await self.cf.alias_handle_count(inst.owner_qmgr, inst.name):
                    needs = "TARGET of an open alias"
        if needs is None:
            return False
        if not force:
            raise MQError(MQRC.MQRCCF_OBJECT_OPEN, f"cannot change {needs} without FORCE")
        return True

    async def _instances(self, obj: ObjectDef) -> list[ObjectDef]:
        """The usable definitions an object stands for: a GROUP object's copies, else itself."""
        if obj.location == GROUP_LOCATION:
            return await self.db(self.repo.copies_of, obj.objclass, obj.name)
        return [obj]

    async def _check_deletable(self, existing: ObjectDef, *, purge: bool) -> None:
        """DELETE's checks, and a local queue's coupling-facility state deleted (it must be
        empty, or PURGE, and closed): a CFSTRUCT no shared queue uses; an alias not open."""
        objtype, name, group = existing.objtype, existing.name, existing.qsgdisp == "GROUP"
        if objtype == "CFSTRUCT":
            users = [d.name for d in self.cache.all("QUEUE")
                     if d.qsgdisp == "SHARED" and d.attrs.get("CFSTRUCT") == name]
            if users:
                raise MQError(MQRC.CF_STRUC_IN_USE,
                              f"CFSTRUCT({name}) is used by shared queue(s) {', '.join(users[:5])}")
        elif objtype == "QLOCAL" and not group:
            await self.cf.delete_queue(queue_location(self.cache, existing), purge=purge)
        elif objtype == "QALIAS" and not group:
            if await self.cf.alias_handle_count(self.qmgr, name):
                raise MQError(MQRC.OBJECT_IN_USE, f"alias {name} is open")

    async def _delete_copies(self, group_obj: ObjectDef, purge: bool, messages: list[str]) -> None:
        """The generated DELETE ... QSGDISP(COPY) on every QM; a copy that is open or holds
        messages (without PURGE) stays, with a message saying so."""
        await self.cf.know_pagesets()  # each copy is on its queue manager's page set
        for copy in await self.db(self.repo.copies_of, group_obj.objclass, group_obj.name):
            try:
                if copy.objtype == "QLOCAL":
                    await self.cf.delete_queue(queue_location(self.cache, copy), purge=purge)
                elif copy.objtype == "QALIAS" and await self.cf.alias_handle_count(copy.location, copy.name):
                    raise MQError(MQRC.OBJECT_IN_USE, "the alias is open")
            except MQError as exc:
                messages.append(f"{copy.location}: COPY of {copy.name} not deleted: {exc.message}")
                continue
            await self.db(self.repo.delete, copy)


@dataclass
class StructureMove:
    """Around storing a definition: a CFSTRUCT's move to a new HASHTAG (``tags``: old, new; None
    when nothing moves). Left normally, the old place is forgotten; left by an exception before
    the definition was stored (``stored``), the copy at the new place goes. Stored but not
    acknowledged by every QM: both places keep the bookkeeping (a QM on either finds it)."""

    structures: Any
    name: str
    tags: tuple[str, str] | None
    stored: bool = False

    async def __aenter__(self) -> StructureMove:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, *_: object) -> None:
        if self.tags is None:
            return
        if exc_type is None:
            await self.structures.finish_move(self.name, *self.tags)
        elif not self.stored:
            await self.structures.abandon_move(self.tags[1])
