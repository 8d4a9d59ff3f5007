"""DEFINE, ALTER, DELETE of queues, processes and CF structures, and CLEAR QLOCAL, with z/OS
QSGDISP semantics (a GROUP object generates a COPY on every queue manager). The command is
parsed and its definition validated here; the change itself, in its order (checks, repository,
coupling facility, broadcast, re-triggering), is the definition workflow's (app/qmgr/workflow.py)."""

from __future__ import annotations

from typing import Any

from app.core import attributes
from app.core.errors import MQError, echo
from app.core.names import check_object_name
from app.core.objects import GROUP_LOCATION, OBJECT_CLASS, ObjectDef, location_of
from app.core.reasons import MQRC
from app.mqsc.commands.base import QSGDISP_FOR, CommandBase
from app.mqsc.commands.channel import channel_attrs, check_same_type
from app.mqsc.commands.pubsub import check_topic_define
from app.mqsc.parser import Command
from app.qmgr.definitions import EVENT_SWITCHES, queue_location


class ObjectCommands(CommandBase):
    """DEFINE, ALTER, DELETE (QLOCAL, QALIAS, QREMOTE, QMODEL, PROCESS, CFSTRUCT) and CLEAR QLOCAL."""

    def _check_shared_queue(self, objtype: str, qsgdisp: str, attrs: dict[str, Any]) -> None:
        # z/OS: a shared queue, and a model whose DEFTYPE(SHAREDYN) makes shared dynamic queues,
        # needs the CF structure its messages live in (CFSTRUCT cannot be blank for SHAREDYN).
        sharedyn = objtype == "QMODEL" and attrs.get("DEFTYPE") == "SHAREDYN"
        if (objtype == "QLOCAL" and qsgdisp == "SHARED") or sharedyn:
            cfname = str(attrs.get("CFSTRUCT", "")).strip()
            if not cfname:
                raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, "a shared queue (or a DEFTYPE(SHAREDYN) model) "
                                                            "needs CFSTRUCT(name)")
            if self.qm.cache.cfstruct(cfname) is None:
                raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR,
                              f"CFSTRUCT({echo(cfname)}) is not defined: DEFINE CFSTRUCT first")

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
                          f"{echo(name)} already exists as a {existing.objtype} with QSGDISP({qsgdisp})")
        if existing and not cmd.has("REPLACE"):
            raise MQError(MQRC.OBJECT_ALREADY_EXISTS, f"{objtype}({echo(name)}) QSGDISP({qsgdisp}) already exists")
        if existing and objtype == "CHANNEL":
            check_same_type(existing, str(attrs["CHLTYPE"]))
        await self.qm.workflow.define(new, existing, self.messages)

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
                raise MQError(MQRC.UNKNOWN_OBJECT_NAME, f"QSGDISP(COPY) needs a QSGDISP(GROUP) {objtype}({echo(name)})")
            return dict(group.attrs)
        if like is None:
            return attributes.defaults(objtype)
        like_name = check_object_name(like.value or "") if objtype != "CFSTRUCT" else (like.value or "")
        candidates = [d for d in self.qm.cache.all(OBJECT_CLASS[objtype]) if d.name == like_name]
        # z/OS looks for the LIKE object on this QM's page set first, then in the shared repository.
        candidates.sort(key=lambda d: {self.qm.name: 0, "@SHARED": 1, GROUP_LOCATION: 2}.get(d.location, 3))
        if not candidates:
            raise MQError(MQRC.UNKNOWN_OBJECT_NAME, f"LIKE object {echo(like_name)} is not defined")
        if candidates[0].objtype != objtype:
            raise MQError(MQRC.MQRCCF_LIKE_OBJECT_WRONG_TYPE,
                          f"LIKE object {echo(like_name)} is a {candidates[0].objtype}")
        return {**attributes.defaults(objtype), **candidates[0].attrs}

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
            raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, f"TOPICSTR of TOPIC({echo(name)}) cannot be altered")
        switches = {k.name for k in cmd.keywords if k.name in EVENT_SWITCHES}  # only those named
        await self.qm.workflow.alter(
            existing, new_attrs, lambda attrs: self._apply(
                cmd, objtype, {**attributes.defaults(objtype), **attrs}, keywords, existing),
            force=cmd.has("FORCE"), switches=switches, messages=self.messages)

    async def _require(self, objtype: str, name: str, qsgdisp: str) -> ObjectDef:
        location = location_of(qsgdisp, self.qm.name)
        existing = await self._find(objtype, name, location)
        if existing is None:
            hint = ""
            others = [d for d in self.qm.cache.all(OBJECT_CLASS[objtype]) if d.name == name]
            if others:
                hint = " (it exists with QSGDISP " + ", ".join(sorted({d.qsgdisp for d in others})) + \
                       ": name that QSGDISP)"
            raise MQError(MQRC.UNKNOWN_OBJECT_NAME, f"{objtype}({echo(name)}) QSGDISP({qsgdisp}) not found{hint}")
        if existing.objtype != objtype:
            raise MQError(MQRC.MQRCCF_OBJECT_WRONG_TYPE, f"{echo(name)} is a {existing.objtype}, not a {objtype}")
        return existing

    async def delete(self, cmd: Command) -> None:
        self._check_cmdscope(cmd)
        objtype = cmd.objtype or ""
        name = self._name(cmd)
        qsgdisp = "GROUP" if objtype == "CFSTRUCT" else self._qsgdisp(cmd, "QMGR", QSGDISP_FOR[objtype])
        existing = await self._require(objtype, name, qsgdisp)
        await self.qm.workflow.delete(existing, purge=cmd.has("PURGE"), messages=self.messages)

    async def clear_qlocal(self, cmd: Command) -> None:
        name = self._name(cmd)
        qsgdisp = self._qsgdisp(cmd, "PRIVATE", ("PRIVATE", "SHARED"))
        found = [d for d in self.qm.cache.usable("QUEUE", name) if (d.qsgdisp == "SHARED") == (qsgdisp == "SHARED")]
        if not found or found[0].objtype != "QLOCAL":
            raise MQError(MQRC.UNKNOWN_OBJECT_NAME, f"QLOCAL({echo(name)}) QSGDISP({qsgdisp}) not found")
        loc = queue_location(self.qm.cache, found[0])
        try:
            removed = await self.qm.queue_states.clear_queue(loc)
        except MQError as exc:
            if exc.reason != MQRC.OBJECT_IN_USE:
                raise
            # IBM: CLEAR QLOCAL fails while any handle has the queue open - browse, inquire and
            # set handles too, which IPPROCS / OPPROCS do not count; name what holds it
            opens = (await self.qm.queue_states.queue_status(loc)).opens
            held = "; ".join(
                f"{qmgr}: {c.get('handles', 0)} handle(s) (input {c.get('ipprocs', 0)}, output "
                f"{c.get('opprocs', 0)}, browse {c.get('browse', 0)}, inquire {c.get('inq', 0)}, set {c.get('set', 0)})"
                for qmgr, c in sorted(opens.items()) if int(c.get("handles", 0)))
            raise MQError(MQRC.OBJECT_IN_USE, f"QLOCAL({name}) is open - {held or 'by a handle'}; "
                                              f"DISPLAY QSTATUS({name}) TYPE(HANDLE) shows this QM's handles") from None
        self.messages.append(f"{removed} message(s) cleared from {echo(name)}")

