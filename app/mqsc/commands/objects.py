"""DEFINE, ALTER, DELETE of queues, processes and CF structures, and CLEAR QLOCAL, with z/OS
QSGDISP semantics (a GROUP object generates a COPY on every queue manager). The repository is
written here; the rest of the change (coupling facility, broadcast, re-triggering) goes through
the definition workflow (app/qmgr/workflow.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.core import attributes
from app.core.errors import MQError
from app.core.names import check_object_name
from app.core.objects import GROUP_LOCATION, OBJECT_CLASS, ObjectDef, location_of
from app.core.reasons import MQRC
from app.mqsc.commands.base import QSGDISP_FOR, CommandBase, open_handles
from app.mqsc.commands.channel import channel_attrs, check_same_type
from app.mqsc.commands.pubsub import check_topic_define
from app.mqsc.parser import Command
from app.qmgr.definitions import EVENT_SWITCHES, queue_location


class ObjectCommands(CommandBase):
    """DEFINE, ALTER, DELETE (QLOCAL, QALIAS, QREMOTE, QMODEL, PROCESS, CFSTRUCT) and CLEAR QLOCAL."""

    def _check_shared_queue(self, objtype: str, qsgdisp: str, attrs: dict) -> None:
        # z/OS: a shared queue, and a model whose DEFTYPE(SHAREDYN) makes shared dynamic queues,
        # needs the CF structure its messages live in (CFSTRUCT cannot be blank for SHAREDYN).
        sharedyn = objtype == "QMODEL" and attrs.get("DEFTYPE") == "SHAREDYN"
        if (objtype == "QLOCAL" and qsgdisp == "SHARED") or sharedyn:
            cfname = str(attrs.get("CFSTRUCT", "")).strip()
            if not cfname:
                raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, "a shared queue (or a DEFTYPE(SHAREDYN) model) "
                                                            "needs CFSTRUCT(name)")
            if self.qm.cache.cfstruct(cfname) is None:
                raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, f"CFSTRUCT({cfname}) is not defined: DEFINE CFSTRUCT first")

    async def define(self, cmd: Command) -> None:
        self._check_cmdscope(cmd)
        objtype = cmd.objtype or ""
        name = self._name(cmd)
        qsgdisp = "GROUP" if objtype == "CFSTRUCT" else self._qsgdisp(cmd, "QMGR", QSGDISP_FOR[objtype])
        location = location_of(qsgdisp, self.qm.name)
        base = await self._like_attrs(cmd, objtype, qsgdisp, name)
        if objtype == "CHANNEL" and not cmd.has("LIKE") and qsgdisp != "COPY":
            base = {}  # the type's own defaults (channel.channel_attrs)
        attrs = self._apply(cmd, objtype, base, self._attribute_keywords(cmd))
        attributes.validate_cross(objtype, attrs)
        self._check_shared_queue(objtype, qsgdisp, attrs)
        if objtype == "TOPIC":
            check_topic_define(self.qm.cache, name, qsgdisp, attrs)
        new = ObjectDef(objtype, name, qsgdisp, location, attrs)
        existing = await self._find(objtype, name, location)
        if existing and existing.objtype != objtype:
            raise MQError(MQRC.MQRCCF_OBJECT_WRONG_TYPE,
                          f"{name} already exists as a {existing.objtype} with QSGDISP({qsgdisp})")
        if existing and not cmd.has("REPLACE"):
            raise MQError(MQRC.OBJECT_ALREADY_EXISTS, f"{objtype}({name}) QSGDISP({qsgdisp}) already exists")
        if existing and objtype == "CHANNEL":
            check_same_type(existing, str(attrs["CHLTYPE"]))
        async with await self._structure_move(existing, attrs) as move:
            if existing:
                await self._check_force(existing, attrs, force=False)
                saved = await self.qm.db(self.qm.repo.update, new, lambda _cur: attrs)
            else:
                saved = await self.qm.db(self.qm.repo.insert, new)
            move.stored = True
            changed = [saved]
            if qsgdisp == "GROUP" and objtype != "CFSTRUCT":
                changed += await self._make_copies(saved)
            # DEFINE ... REPLACE sets the event switches as given; a new queue gets them anyway
            await self.qm.workflow.change_definitions(changed, [(saved.objclass, name)],
                                                      set_switches=existing is not None)
        if objtype == "CFSTRUCT":
            await self.qm.structures.connect(name)  # allocated now: a later loss is noticed

    def _apply(self, cmd: Command, objtype: str, base: dict[str, Any], keywords: list[tuple[str, Any]],
               existing: ObjectDef | None = None) -> dict[str, Any]:
        """The attributes after the command's keywords: a channel's by its CHLTYPE's rules."""
        if objtype == "CHANNEL":
            return channel_attrs(cmd, base, keywords, existing)
        return attributes.apply_keywords(objtype, base, keywords)

    async def _like_attrs(self, cmd: Command, objtype: str, qsgdisp: str, name: str) -> dict[str, Any]:
        """Starting attributes: IBM defaults, the LIKE object's, or (QSGDISP COPY) the group object's."""
        like = cmd.get("LIKE")
        if qsgdisp == "COPY":
            group = await self._find(objtype, name, GROUP_LOCATION)
            if group is None:
                raise MQError(MQRC.UNKNOWN_OBJECT_NAME, f"QSGDISP(COPY) needs a QSGDISP(GROUP) {objtype}({name})")
            return dict(group.attrs)
        if like is None:
            return attributes.defaults(objtype)
        like_name = check_object_name(like.value or "") if objtype != "CFSTRUCT" else (like.value or "")
        candidates = [d for d in self.qm.cache.all(OBJECT_CLASS[objtype]) if d.name == like_name]
        # z/OS looks for the LIKE object on this QM's page set first, then in the shared repository.
        candidates.sort(key=lambda d: {self.qm.name: 0, "@SHARED": 1, GROUP_LOCATION: 2}.get(d.location, 3))
        if not candidates:
            raise MQError(MQRC.UNKNOWN_OBJECT_NAME, f"LIKE object {like_name} is not defined")
        if candidates[0].objtype != objtype:
            raise MQError(MQRC.MQRCCF_LIKE_OBJECT_WRONG_TYPE, f"LIKE object {like_name} is a {candidates[0].objtype}")
        return {**attributes.defaults(objtype), **candidates[0].attrs}

    async def _make_copies(self, group_obj: ObjectDef) -> list[ObjectDef]:
        """Generate DEFINE ... REPLACE QSGDISP(COPY) on every queue manager of the group."""
        made = []
        for qmgr in await self.qm.db(self.qm.repo.qmgr_names):
            copy = ObjectDef(group_obj.objtype, group_obj.name, "COPY", qmgr, dict(group_obj.attrs))
            own = await self._find(group_obj.objtype, group_obj.name, qmgr)
            if own is not None and own.qsgdisp == "QMGR":
                self.messages.append(f"{qmgr}: {group_obj.name} exists with QSGDISP(QMGR); no COPY made there")
                continue
            if own is not None and own.objtype != group_obj.objtype:
                self.messages.append(f"{qmgr}: {group_obj.name} exists as a {own.objtype}; no COPY made there")
                continue
            made.append(await self.qm.db(self.qm.repo.upsert, copy))
        return made

    async def alter(self, cmd: Command) -> None:
        self._check_cmdscope(cmd)
        objtype = cmd.objtype or ""
        name = self._name(cmd)
        qsgdisp = "GROUP" if objtype == "CFSTRUCT" else self._qsgdisp(cmd, "QMGR", QSGDISP_FOR[objtype])
        existing = await self._require(objtype, name, qsgdisp)
        keywords = self._attribute_keywords(cmd)
        new_attrs = self._apply(cmd, objtype, {**attributes.defaults(objtype), **existing.attrs}, keywords, existing)
        attributes.validate_cross(objtype, new_attrs)
        self._check_shared_queue(objtype, qsgdisp, new_attrs)
        if objtype == "TOPIC" and new_attrs.get("TOPICSTR") != existing.attrs.get("TOPICSTR"):
            raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, f"TOPICSTR of TOPIC({name}) cannot be altered")
        if objtype == "QLOCAL" and qsgdisp == "SHARED" and new_attrs["CFSTRUCT"] != existing.attrs.get("CFSTRUCT"):
            status = await self.qm.cf.queue_status(queue_location(self.qm.cache, existing))
            if status.depth or open_handles(status):
                raise MQError(MQRC.OBJECT_IN_USE,
                              "CFSTRUCT of a shared queue can change only while it is empty and closed")
        forced = await self._check_force(existing, new_attrs, force=cmd.has("FORCE"))
        async with await self._structure_move(existing, new_attrs) as move:
            saved = await self.qm.db(self.qm.repo.update, existing, lambda cur: self._apply(
                cmd, objtype, {**attributes.defaults(objtype), **cur.attrs}, keywords, existing))
            move.stored = True
            changed = [saved]
            if qsgdisp == "GROUP" and objtype != "CFSTRUCT":
                changed += await self._make_copies(saved)
            switches = {k.name for k in cmd.keywords if k.name in EVENT_SWITCHES}  # only those named
            await self.qm.workflow.change_definitions(changed, [(saved.objclass, name)], bump_gen=forced,
                                                      set_switches=switches, invalidate=forced)
        # condition 13 is evaluated by this QM for the definition it uses (a GROUP object's COPY)
        used = next((d for d in changed if d.location in (self.qm.name, "@SHARED")), None)
        if used is not None:
            await self.qm.workflow.definition_changed(existing, used)
        if objtype == "CFSTRUCT":
            # a failed structure altered to RECAUTO(YES) is recovered now (app/qmgr/cfstruct.py)
            await self.qm.structures.connect(name)

    async def _structure_move(self, existing: ObjectDef | None, new_attrs: dict[str, Any]) -> StructureMove:
        """A CFSTRUCT whose HASHTAG (an emulator addition: its place on a Redis Cluster) changes
        moves: allowed only while nothing would be stranded (app/qmgr/cfstruct.py); any other
        definition change moves nothing."""
        if existing is None or existing.objtype != "CFSTRUCT":
            return StructureMove(self.qm.structures, "", None)
        old, new = (str(a.get("HASHTAG", "") or "") for a in (existing.attrs, new_attrs))
        if old == new:
            return StructureMove(self.qm.structures, existing.name, None)
        return StructureMove(self.qm.structures, existing.name,
                             await self.qm.structures.prepare_move(existing.name, old, new))


    async def _require(self, objtype: str, name: str, qsgdisp: str) -> ObjectDef:
        location = location_of(qsgdisp, self.qm.name)
        existing = await self._find(objtype, name, location)
        if existing is None:
            hint = ""
            others = [d for d in self.qm.cache.all(OBJECT_CLASS[objtype]) if d.name == name]
            if others:
                hint = " (it exists with QSGDISP " + ", ".join(sorted({d.qsgdisp for d in others})) + \
                       ": name that QSGDISP)"
            raise MQError(MQRC.UNKNOWN_OBJECT_NAME, f"{objtype}({name}) QSGDISP({qsgdisp}) not found{hint}")
        if existing.objtype != objtype:
            raise MQError(MQRC.MQRCCF_OBJECT_WRONG_TYPE, f"{name} is a {existing.objtype}, not a {objtype}")
        return existing

    async def _check_force(self, existing: ObjectDef, new_attrs: dict, *, force: bool) -> bool:
        """IBM's FORCE rules; returns True when open handles must be invalidated.

        QLOCAL: changing USAGE, or NOSHARE while more than one handle has it open for input.
        QALIAS: changing TARGET while the alias is open anywhere in the QSG.
        """
        needs: str | None = None
        if existing.objtype == "QLOCAL":
            locs = [queue_location(self.qm.cache, d) for d in await self._instances(existing)]
            if new_attrs.get("USAGE") != existing.attrs.get("USAGE"):
                for loc in locs:
                    if open_handles(await self.qm.cf.queue_status(loc)):
                        needs = "USAGE of an open queue"
            if not new_attrs.get("SHARE", True) and existing.attrs.get("SHARE", True):
                for loc in locs:
                    if (await self.qm.cf.queue_status(loc)).ipprocs > 1:
                        needs = "NOSHARE while several handles have it open for input"
        elif existing.objtype == "QALIAS" and new_attrs.get("TARGET") != existing.attrs.get("TARGET"):
            for inst in await self._instances(existing):
                if inst.owner_qmgr and await self.qm.cf.alias_handle_count(inst.owner_qmgr, inst.name):
                    needs = "TARGET of an open alias"
        if needs is None:
            return False
        if not force:
            raise MQError(MQRC.MQRCCF_OBJECT_OPEN, f"cannot change {needs} without FORCE")
        return True

    async def _instances(self, obj: ObjectDef) -> list[ObjectDef]:
        """The usable definitions an object stands for: a GROUP object's copies, else itself."""
        if obj.location == GROUP_LOCATION:
            return await self.qm.db(self.qm.repo.copies_of, obj.objclass, obj.name)
        return [obj]

    async def delete(self, cmd: Command) -> None:
        self._check_cmdscope(cmd)
        objtype = cmd.objtype or ""
        name = self._name(cmd)
        qsgdisp = "GROUP" if objtype == "CFSTRUCT" else self._qsgdisp(cmd, "QMGR", QSGDISP_FOR[objtype])
        existing = await self._require(objtype, name, qsgdisp)
        purge = cmd.has("PURGE")
        if objtype == "CFSTRUCT":
            users = [d.name for d in self.qm.cache.all("QUEUE")
                     if d.qsgdisp == "SHARED" and d.attrs.get("CFSTRUCT") == name]
            if users:
                raise MQError(MQRC.CF_STRUC_IN_USE,
                              f"CFSTRUCT({name}) is used by shared queue(s) {', '.join(users[:5])}")
        if objtype == "QLOCAL" and qsgdisp != "GROUP":
            await self.qm.cf.delete_queue(queue_location(self.qm.cache, existing), purge=purge)
        elif objtype == "QALIAS" and qsgdisp != "GROUP":
            if await self.qm.cf.alias_handle_count(self.qm.name, name):
                raise MQError(MQRC.OBJECT_IN_USE, f"alias {name} is open")
        await self.qm.db(self.qm.repo.delete, existing)
        if qsgdisp == "GROUP" and objtype != "CFSTRUCT":
            await self._delete_copies(existing, purge)
        if objtype == "CFSTRUCT":
            await self.qm.db(self.qm.structures.store.forget, name)
        await self.qm.workflow.announce([(existing.objclass, name)])

    async def _delete_copies(self, group_obj: ObjectDef, purge: bool) -> None:
        """The generated DELETE ... QSGDISP(COPY) on every QM; a copy that is open or holds
        messages (without PURGE) stays, with a message saying so."""
        await self.qm.cf.know_pagesets()  # each copy is on its queue manager's page set
        for copy in await self.qm.db(self.qm.repo.copies_of, group_obj.objclass, group_obj.name):
            try:
                if copy.objtype == "QLOCAL":
                    await self.qm.cf.delete_queue(queue_location(self.qm.cache, copy), purge=purge)
                elif copy.objtype == "QALIAS" and await self.qm.cf.alias_handle_count(copy.location, copy.name):
                    raise MQError(MQRC.OBJECT_IN_USE, "the alias is open")
            except MQError as exc:
                self.messages.append(f"{copy.location}: COPY of {copy.name} not deleted: {exc.message}")
                continue
            await self.qm.db(self.qm.repo.delete, copy)

    async def clear_qlocal(self, cmd: Command) -> None:
        name = self._name(cmd)
        qsgdisp = self._qsgdisp(cmd, "PRIVATE", ("PRIVATE", "SHARED"))
        found = [d for d in self.qm.cache.usable("QUEUE", name) if (d.qsgdisp == "SHARED") == (qsgdisp == "SHARED")]
        if not found or found[0].objtype != "QLOCAL":
            raise MQError(MQRC.UNKNOWN_OBJECT_NAME, f"QLOCAL({name}) QSGDISP({qsgdisp}) not found")
        loc = queue_location(self.qm.cache, found[0])
        try:
            removed = await self.qm.cf.clear_queue(loc)
        except MQError as exc:
            if exc.reason != MQRC.OBJECT_IN_USE:
                raise
            # IBM: CLEAR QLOCAL fails while any handle has the queue open - browse, inquire and
            # set handles too, which IPPROCS / OPPROCS do not count; name what holds it
            held = "; ".join(
                f"{qmgr}: {c.get('handles', 0)} handle(s) (input {c.get('ipprocs', 0)}, output "
                f"{c.get('opprocs', 0)}, browse {c.get('browse', 0)}, inquire {c.get('inq', 0)}, set {c.get('set', 0)})"
                for qmgr, c in sorted((await self.qm.cf.queue_status(loc)).opens.items()) if int(c.get("handles", 0)))
            raise MQError(MQRC.OBJECT_IN_USE, f"QLOCAL({name}) is open - {held or 'by a handle'}; "
                                              f"DISPLAY QSTATUS({name}) TYPE(HANDLE) shows this QM's handles") from None
        self.messages.append(f"{removed} message(s) cleared from {name}")


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
