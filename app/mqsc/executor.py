"""Runs parsed MQSC commands against a queue manager, with z/OS QSGDISP semantics.

* QSGDISP(QMGR) definitions live on the executing QM's page set; QSGDISP(SHARED) ones (local
  queues only) and QSGDISP(GROUP) ones in the shared repository.
* A GROUP definition generates a QSGDISP(COPY) object on every queue manager of the group
  (DEFINE/ALTER regenerate them, DELETE removes them), as the z/OS command processor does.
* DEFINE, ALTER and DELETE default to QSGDISP(QMGR); DISPLAY defaults to QSGDISP(LIVE)
  (QMGR, COPY and SHARED); CLEAR QLOCAL to QSGDISP(PRIVATE).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from app.cf.engine import QueueStatus
from app.core import attributes
from app.core.errors import MQError
from app.core.names import check_generic_name, check_object_name, matches
from app.core.reasons import MQRC
from app.mqsc.parser import Command, ParseFailure, parse_script
from app.qmgr.definitions import EVENT_SWITCHES, queue_location, recoverable
from app.qmgr.mqi import display_object, live_counts
from app.repository.store import GROUP_LOCATION, OBJECT_CLASS, ObjectDef, location_of
from app.security.rights import RIGHTS_BY_OBJTYPE, current_principal, parse_rights

if TYPE_CHECKING:
    from app.qmgr.qmgr import QueueManager

DEFINABLE = ("QLOCAL", "QALIAS", "QREMOTE", "PROCESS", "CFSTRUCT")
# Keywords of the commands themselves rather than of the object's attributes.
COMMAND_KEYWORDS = {"QSGDISP", "LIKE", "REPLACE", "NOREPLACE", "FORCE", "PURGE", "NOPURGE", "CMDSCOPE",
                    "ALL", "TYPE", "WHERE", "NAME", "EXCLINT", "ACTION"}
QSGDISP_FOR = {
    "QLOCAL": ("QMGR", "COPY", "GROUP", "SHARED"),
    "QALIAS": ("QMGR", "COPY", "GROUP"),
    "QREMOTE": ("QMGR", "COPY", "GROUP"),
    "PROCESS": ("QMGR", "COPY", "GROUP"),
}
MAX_SCRIPT_CHARS = 1_000_000


async def run_script(qm: QueueManager, script: Any) -> list[dict[str, Any]]:
    """Run every command of an MQSC script in order; one result per command."""
    if not isinstance(script, str):
        raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR, "script must be a string of MQSC commands")
    if len(script) > MAX_SCRIPT_CHARS:
        raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR, f"script longer than {MAX_SCRIPT_CHARS} characters")
    results = []
    principal = current_principal.get()
    for item in parse_script(script):
        if isinstance(item, ParseFailure):
            results.append(_failed(qm, item.text, item.error))
            continue
        try:
            qm.security.check_qmgr(principal, "ADMIN")  # every MQSC command needs ADMIN
            objects, messages = await Executor(qm).run(item)
        except MQError as exc:
            results.append(_failed(qm, item.text, exc))
            continue
        done = f"CSQ9022I {qm.name} {item.verb} {item.objtype or ''} NORMAL COMPLETION".replace("  ", " ")
        results.append({"command": item.text, "completion_code": 0, "reason": 0,
                        "messages": [*messages, done], "objects": objects})
    return results


def _failed(qm: QueueManager, text: str, exc: MQError) -> dict[str, Any]:
    return {"command": text, "completion_code": exc.comp, "reason": exc.reason, "reason_name": exc.reason_name,
            "messages": [exc.message, f"CSQ9023E {qm.name} ABNORMAL COMPLETION"], "objects": []}


class Executor:
    """One MQSC command on one queue manager."""

    def __init__(self, qm: QueueManager) -> None:
        self.qm = qm
        self.messages: list[str] = []

    async def run(self, cmd: Command) -> tuple[list[dict[str, Any]], list[str]]:
        table = {("DEFINE", t): self.define for t in DEFINABLE}
        table |= {("ALTER", t): self.alter for t in DEFINABLE}
        table |= {("DELETE", t): self.delete for t in DEFINABLE}
        table |= {("DISPLAY", t): self.display for t in ("QLOCAL", "QALIAS", "QREMOTE", "QUEUE", "PROCESS",
                                                            "CFSTRUCT")}
        table |= {("ALTER", "QMGR"): self.alter_qmgr, ("DISPLAY", "QMGR"): self.display_qmgr,
                  ("DISPLAY", "QSTATUS"): self.display_qstatus, ("CLEAR", "QLOCAL"): self.clear_qlocal,
                  ("DISPLAY", "GROUP"): self.display_group, ("DISPLAY", "QSG"): self.display_group,
                  ("REFRESH", "QMGR"): self.refresh_qmgr, ("RESET", "QSTATS"): self.reset_qstats,
                  ("SET", "AUTHREC"): self.set_authrec, ("DELETE", "AUTHREC"): self.delete_authrec,
                  ("DISPLAY", "AUTHREC"): self.display_authrec, ("REFRESH", "SECURITY"): self.refresh_security,
                  ("BACKUP", "CFSTRUCT"): self.backup_cfstruct, ("RECOVER", "CFSTRUCT"): self.recover_cfstruct,
                  ("RESET", "CFSTRUCT"): self.reset_cfstruct, ("DISPLAY", "CFSTATUS"): self.display_cfstatus}
        handler = table.get((cmd.verb, cmd.objtype or ""))
        if handler is None:
            raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR,
                          f"{cmd.verb} {cmd.objtype or ''} is not supported by this queue manager".strip())
        objects = await handler(cmd)
        return objects or [], self.messages

    # ---- helpers ------------------------------------------------------------------------

    def _name(self, cmd: Command, generic: bool = False) -> str:
        if not cmd.name:
            raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR, f"{cmd.verb} {cmd.objtype} needs an object name in parentheses")
        if generic:
            return check_generic_name(cmd.name)
        if cmd.objtype == "CFSTRUCT":
            if not re.fullmatch(r"[A-Z][A-Z0-9]{0,11}", cmd.name):
                raise MQError(MQRC.OBJECT_NAME_ERROR, f"'{cmd.name}' is not a CF structure name (1-12 of A-Z 0-9, first A-Z)")
            return cmd.name
        return check_object_name(cmd.name)

    def _qsgdisp(self, cmd: Command, default: str, allowed: tuple[str, ...]) -> str:
        kw = cmd.get("QSGDISP")
        value = (kw.value or "").upper() if kw else default
        if value not in allowed:
            raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR,
                          f"QSGDISP({value}) is not valid here; use one of {', '.join(allowed)}")
        return value

    def _attribute_keywords(self, cmd: Command) -> list[tuple[str, str | None]]:
        return [(k.name, k.value) for k in cmd.keywords if k.name not in COMMAND_KEYWORDS]

    def _check_cmdscope(self, cmd: Command) -> None:
        kw = cmd.get("CMDSCOPE")
        if kw and kw.value not in ("", " ", self.qm.name):
            raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR,
                          f"CMDSCOPE({kw.value}) is not supported: issue the command to that queue manager's URL")

    async def _find(self, objtype: str, name: str, location: str) -> ObjectDef | None:
        return await self.qm.db(self.qm.repo.find, OBJECT_CLASS[objtype], name, location)

    async def _queue_state_changed(self, objs: list[ObjectDef], *, bump_gen: bool = False,
                                   set_switches: bool = False) -> None:
        for obj in objs:
            if obj.objtype == "QLOCAL" and obj.location != GROUP_LOCATION:
                await self.qm.sync_queue_state(obj, bump_gen=bump_gen, set_switches=set_switches)

    def _check_shared_queue(self, objtype: str, qsgdisp: str, attrs: dict) -> None:
        if objtype == "QLOCAL" and qsgdisp == "SHARED":
            cfname = str(attrs.get("CFSTRUCT", "")).strip()
            if not cfname:
                raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, "a shared queue needs CFSTRUCT(name)")
            if self.qm.cache.cfstruct(cfname) is None:
                raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, f"CFSTRUCT({cfname}) is not defined: DEFINE CFSTRUCT first")

    # ---- DEFINE -------------------------------------------------------------------------

    async def define(self, cmd: Command) -> None:
        self._check_cmdscope(cmd)
        objtype = cmd.objtype or ""
        name = self._name(cmd)
        qsgdisp = "GROUP" if objtype == "CFSTRUCT" else self._qsgdisp(cmd, "QMGR", QSGDISP_FOR[objtype])
        location = location_of(qsgdisp, self.qm.name)
        base = await self._like_attrs(cmd, objtype, qsgdisp, name)
        attrs = attributes.apply_keywords(objtype, base, self._attribute_keywords(cmd))
        attributes.validate_cross(objtype, attrs)
        self._check_shared_queue(objtype, qsgdisp, attrs)
        new = ObjectDef(objtype, name, qsgdisp, location, attrs)
        existing = await self._find(objtype, name, location)
        if existing and existing.objtype != objtype:
            raise MQError(MQRC.MQRCCF_OBJECT_WRONG_TYPE,
                          f"{name} already exists as a {existing.objtype} with QSGDISP({qsgdisp})")
        if existing and not cmd.has("REPLACE"):
            raise MQError(MQRC.OBJECT_ALREADY_EXISTS, f"{objtype}({name}) QSGDISP({qsgdisp}) already exists")
        if existing:
            await self._check_force(existing, attrs, force=False)
            saved = await self.qm.db(self.qm.repo.update, new, lambda _cur: attrs)
        else:
            saved = await self.qm.db(self.qm.repo.insert, new)
        changed = [saved]
        if qsgdisp == "GROUP" and objtype != "CFSTRUCT":
            changed += await self._make_copies(saved)
        # DEFINE ... REPLACE sets the event switches as given; a new queue gets them anyway
        await self._queue_state_changed(changed, set_switches=existing is not None)
        await self.qm.announce([(saved.objclass, name)])
        if objtype == "CFSTRUCT":
            await self.qm.structures.connect(name)  # allocated now: a later loss is noticed

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

    # ---- ALTER --------------------------------------------------------------------------

    async def alter(self, cmd: Command) -> None:
        self._check_cmdscope(cmd)
        objtype = cmd.objtype or ""
        name = self._name(cmd)
        qsgdisp = "GROUP" if objtype == "CFSTRUCT" else self._qsgdisp(cmd, "QMGR", QSGDISP_FOR[objtype])
        existing = await self._require(objtype, name, qsgdisp)
        keywords = self._attribute_keywords(cmd)
        new_attrs = attributes.apply_keywords(objtype, {**attributes.defaults(objtype), **existing.attrs}, keywords)
        attributes.validate_cross(objtype, new_attrs)
        self._check_shared_queue(objtype, qsgdisp, new_attrs)
        if objtype == "QLOCAL" and qsgdisp == "SHARED" and new_attrs["CFSTRUCT"] != existing.attrs.get("CFSTRUCT"):
            status = await self.qm.cf.queue_status(queue_location(self.qm.qsg, existing))
            if status.depth or _handles(status):
                raise MQError(MQRC.OBJECT_IN_USE, "CFSTRUCT of a shared queue can change only while it is empty and closed")
        forced = await self._check_force(existing, new_attrs, force=cmd.has("FORCE"))
        saved = await self.qm.db(self.qm.repo.update, existing, lambda cur: attributes.apply_keywords(
            objtype, {**attributes.defaults(objtype), **cur.attrs}, keywords))
        changed = [saved]
        if qsgdisp == "GROUP" and objtype != "CFSTRUCT":
            changed += await self._make_copies(saved)
        switches = any(k.name in EVENT_SWITCHES for k in cmd.keywords)  # only when named
        await self._queue_state_changed(changed, bump_gen=forced, set_switches=switches)
        await self.qm.announce([(saved.objclass, name)], invalidate=forced)
        # condition 13 is evaluated by this QM for the definition it uses (a GROUP object's COPY)
        used = next((d for d in changed if d.location in (self.qm.name, "@SHARED")), None)
        if used is not None:
            await self.qm.triggers.definition_changed(existing, used)

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
            locs = [queue_location(self.qm.qsg, d) for d in await self._instances(existing)]
            if new_attrs.get("USAGE") != existing.attrs.get("USAGE"):
                for loc in locs:
                    if _handles(await self.qm.cf.queue_status(loc)):
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

    # ---- DELETE -------------------------------------------------------------------------

    async def delete(self, cmd: Command) -> None:
        self._check_cmdscope(cmd)
        objtype = cmd.objtype or ""
        name = self._name(cmd)
        qsgdisp = "GROUP" if objtype == "CFSTRUCT" else self._qsgdisp(cmd, "QMGR", QSGDISP_FOR[objtype])
        existing = await self._require(objtype, name, qsgdisp)
        purge = cmd.has("PURGE")
        if objtype == "CFSTRUCT":
            users = [d.name for d in self.qm.cache.all("QUEUE") if d.qsgdisp == "SHARED" and d.attrs.get("CFSTRUCT") == name]
            if users:
                raise MQError(MQRC.CF_STRUC_IN_USE, f"CFSTRUCT({name}) is used by shared queue(s) {', '.join(users[:5])}")
        if objtype == "QLOCAL" and qsgdisp != "GROUP":
            await self.qm.cf.delete_queue(queue_location(self.qm.qsg, existing), purge=purge)
        elif objtype == "QALIAS" and qsgdisp != "GROUP":
            if await self.qm.cf.alias_handle_count(self.qm.name, name):
                raise MQError(MQRC.OBJECT_IN_USE, f"alias {name} is open")
        await self.qm.db(self.qm.repo.delete, existing)
        if qsgdisp == "GROUP" and objtype != "CFSTRUCT":
            await self._delete_copies(existing, purge)
        if objtype == "CFSTRUCT":
            await self.qm.db(self.qm.structures.store.forget, name)
        await self.qm.announce([(existing.objclass, name)])

    async def _delete_copies(self, group_obj: ObjectDef, purge: bool) -> None:
        """The generated DELETE ... QSGDISP(COPY) on every QM; a copy that is open or holds
        messages (without PURGE) stays, with a message saying so."""
        for copy in await self.qm.db(self.qm.repo.copies_of, group_obj.objclass, group_obj.name):
            try:
                if copy.objtype == "QLOCAL":
                    await self.qm.cf.delete_queue(queue_location(self.qm.qsg, copy), purge=purge)
                elif copy.objtype == "QALIAS" and await self.qm.cf.alias_handle_count(copy.location, copy.name):
                    raise MQError(MQRC.OBJECT_IN_USE, "the alias is open")
            except MQError as exc:
                self.messages.append(f"{copy.location}: COPY of {copy.name} not deleted: {exc.message}")
                continue
            await self.qm.db(self.qm.repo.delete, copy)

    # ---- CLEAR --------------------------------------------------------------------------

    async def clear_qlocal(self, cmd: Command) -> None:
        name = self._name(cmd)
        qsgdisp = self._qsgdisp(cmd, "PRIVATE", ("PRIVATE", "SHARED"))
        found = [d for d in self.qm.cache.usable("QUEUE", name) if (d.qsgdisp == "SHARED") == (qsgdisp == "SHARED")]
        if not found or found[0].objtype != "QLOCAL":
            raise MQError(MQRC.UNKNOWN_OBJECT_NAME, f"QLOCAL({name}) QSGDISP({qsgdisp}) not found")
        removed = await self.qm.cf.clear_queue(queue_location(self.qm.qsg, found[0]))
        self.messages.append(f"{removed} message(s) cleared from {name}")

    # ---- QMGR ---------------------------------------------------------------------------

    async def alter_qmgr(self, cmd: Command) -> None:
        keywords = [(k.name, k.value) for k in cmd.keywords if k.name != "CMDSCOPE"]
        attributes.apply_keywords("QMGR", {**attributes.defaults("QMGR"), **self.qm.attrs}, keywords)  # validate first
        igq_before = self.qm.attrs.get("IGQ")
        self.qm.attrs = await self.qm.db(self.qm.repo.alter_qmgr, self.qm.name, lambda cur: attributes.apply_keywords(
            "QMGR", {**attributes.defaults("QMGR"), **cur}, keywords))
        if self.qm.attrs.get("IGQ") != igq_before:
            self.qm.mqi.invalidate_igq()  # handles resolved through the group: MQRC_OBJECT_CHANGED

    async def reset_qstats(self, cmd: Command) -> list[dict[str, Any]]:
        """RESET QSTATS: this QM's statistics of each matching local queue since the last reset
        (or event message), which start again now."""
        pattern = self._name(cmd, generic=True)
        out = []
        for d in self.qm.cache.all("QUEUE"):
            if d.objtype != "QLOCAL" or d.location == GROUP_LOCATION or not matches(pattern, d.name):
                continue
            stats = await self.qm.cf.reset_stats(queue_location(self.qm.qsg, d), self.qm.name)
            since = stats.reset_ms or self.qm.started_ms
            out.append({"QSTATS": d.name, "QSGDISP": d.qsgdisp, "MSGIN": stats.enq, "MSGOUT": stats.deq,
                        "HIQDEPTH": stats.hiq,
                        "TIMESINCERESET": max(0, (self.qm.clock.now_ms() - since) // 1000)})
        if not out and "*" not in pattern:
            raise MQError(MQRC.UNKNOWN_OBJECT_NAME, f"QLOCAL({pattern}) not found")
        return out

    async def refresh_qmgr(self, cmd: Command) -> None:
        """REFRESH QMGR TYPE(EXPIRY) NAME(generic name): discard expired messages now."""
        kind = (cmd.get("TYPE").value or "").upper() if cmd.get("TYPE") else ""
        if kind != "EXPIRY":
            raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, f"REFRESH QMGR TYPE({kind}) is not supported; use TYPE(EXPIRY)")
        pattern = check_generic_name(cmd.get("NAME").value or "*") if cmd.get("NAME") else "*"
        scanned, discarded = await self.qm.expiry.refresh(pattern)
        self.messages.append(f"{scanned} queue(s) scanned, {discarded} expired message(s) discarded")

    async def display_group(self, cmd: Command) -> list[dict[str, Any]]:
        """DISPLAY GROUP: the queue managers of the QSG and their state (CSQ5100I-style)."""
        return [{"QSGNAME": self.qm.qsg, **m} for m in await self.qm.group_info()]

    async def display_qmgr(self, cmd: Command) -> list[dict[str, Any]]:
        info = self.qm.info()
        return [{"QMNAME": info.pop("name"), "QSGNAME": info.pop("qsg"), "STATUS": info.pop("status"), **info}]

    # ---- security (issue 11): authority records, as IBM's distributed SET/DELETE/DISPLAY AUTHREC ----

    def _authrec_target(self, cmd: Command, *, need_entity: bool = True) -> tuple[str, str, str | None, str | None]:
        """(OBJTYPE, PROFILE, entity type, entity) of an AUTHREC command."""
        objtype = (cmd.get("OBJTYPE").value or "").upper() if cmd.get("OBJTYPE") else ""
        if objtype not in RIGHTS_BY_OBJTYPE:
            raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, "OBJTYPE must be QUEUE or QMGR")
        profile_kw = cmd.get("PROFILE")
        profile = (profile_kw.value or "").strip() if profile_kw else ""
        if not profile:
            if objtype != "QMGR" and need_entity:
                raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR, f"{cmd.verb} AUTHREC needs PROFILE(name or generic name)")
            profile = "*"  # OBJTYPE(QMGR): every queue manager of the group
        check_generic_name(profile) if objtype == "QUEUE" else None
        principal, group = cmd.get("PRINCIPAL"), cmd.get("GROUP")
        if principal and group:
            raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR, "give PRINCIPAL or GROUP, not both")
        if principal or group:
            kw = principal or group
            entity = (kw.value or "").strip()
            if not entity:
                raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, f"{kw.name} needs a name")
            return objtype, profile, "PRINCIPAL" if principal else "GROUP", entity
        if need_entity:
            raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR, f"{cmd.verb} AUTHREC needs PRINCIPAL('user') or GROUP('group')")
        return objtype, profile, None, None

    async def set_authrec(self, cmd: Command) -> list[dict[str, Any]]:
        """SET AUTHREC PROFILE('PAYROLL.*') OBJTYPE(QUEUE) PRINCIPAL('alice') AUTHADD(GET,PUT) AUTHRMV(...)."""
        objtype, profile, entity_type, entity = self._authrec_target(cmd)
        add = parse_rights(objtype, cmd.get("AUTHADD").values()) if cmd.get("AUTHADD") else set()
        remove = parse_rights(objtype, cmd.get("AUTHRMV").values()) if cmd.get("AUTHRMV") else set()
        if not add and not remove:
            raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR, "SET AUTHREC needs AUTHADD(...) or AUTHRMV(...)")
        store = self.qm.security.store
        rec = await self.qm.db(store.set_authrec, objtype, profile, entity_type, entity, add, remove)
        await self.qm.security.announce()
        return [_authrec_row(rec)]

    async def delete_authrec(self, cmd: Command) -> None:
        objtype, profile, entity_type, entity = self._authrec_target(cmd)
        if not await self.qm.db(self.qm.security.store.delete_authrec, objtype, profile, entity_type, entity):
            raise MQError(MQRC.UNKNOWN_OBJECT_NAME, f"no authority record for {entity_type}({entity}) on "
                                                    f"{objtype} profile {profile}")
        await self.qm.security.announce()

    async def display_authrec(self, cmd: Command) -> list[dict[str, Any]]:
        """DISPLAY AUTHREC [PROFILE(p)] [OBJTYPE(t)] [PRINCIPAL(u) | GROUP(g)]: the records whose
        profile is the one named (a generic PROFILE selects records whose profile matches it)."""
        objtype_kw = cmd.get("OBJTYPE")
        objtype = (objtype_kw.value or "").upper() if objtype_kw else ""
        profile = (cmd.get("PROFILE").value or "").strip() if cmd.get("PROFILE") else ""
        principal, group = cmd.get("PRINCIPAL"), cmd.get("GROUP")
        rows = []
        for rec in await self.qm.db(self.qm.security.store.authrecs):
            if objtype and rec.objtype != objtype:
                continue
            if profile and not (rec.profile == profile or matches(profile, rec.profile)):
                continue
            if principal and (rec.entity_type, rec.entity) != ("PRINCIPAL", principal.value):
                continue
            if group and (rec.entity_type, rec.entity) != ("GROUP", group.value):
                continue
            rows.append(_authrec_row(rec))
        return rows

    async def refresh_security(self, cmd: Command) -> None:
        """REFRESH SECURITY: every QM of the group reads users, keys and authority records again."""
        await self.qm.security.announce()

    # ---- CF structures: BACKUP, RECOVER, RESET CFSTRUCT and DISPLAY CFSTATUS ------------------

    def _structure_names(self, cmd: Command, *, recoverable_only: bool) -> list[str]:
        """The structures a command names: a list, or a generic name (``*`` = all)."""
        if not cmd.name:
            raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR, f"{cmd.verb} {cmd.objtype} needs a structure name in parentheses")
        out: list[str] = []
        for part in (p.strip() for p in cmd.name.split(",")):
            if "*" in part:
                out += [d.name for d in self.qm.cache.all("CFSTRUCT") if matches(part, d.name)
                        and (not recoverable_only or recoverable(d))]
            elif re.fullmatch(r"[A-Z][A-Z0-9]{0,11}", part):
                out.append(part)
            else:
                raise MQError(MQRC.OBJECT_NAME_ERROR, f"'{part}' is not a CF structure name (1-12 of A-Z 0-9, first A-Z)")
        return out

    async def backup_cfstruct(self, cmd: Command) -> None:
        """BACKUP CFSTRUCT(name) [EXCLINT(30-600)]."""
        kw = cmd.get("EXCLINT")
        raw = (kw.value or "") if kw else "30"
        if not raw.isdigit() or not 30 <= int(raw) <= 600:
            raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, f"EXCLINT({raw}) must be 30 to 600 seconds")
        for name in self._structure_names(cmd, recoverable_only=True):
            self.messages += await self.qm.structures.backup(name, int(raw))

    async def recover_cfstruct(self, cmd: Command) -> None:
        """RECOVER CFSTRUCT(name, ...) [TYPE(NORMAL | PURGE)]."""
        kind = (cmd.get("TYPE").value or "").upper() if cmd.get("TYPE") else "NORMAL"
        if kind not in ("NORMAL", "PURGE"):
            raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, f"TYPE({kind}) is not NORMAL or PURGE")
        self.messages += await self.qm.structures.recover(self._structure_names(cmd, recoverable_only=True),
                                                          purge=kind == "PURGE")

    async def reset_cfstruct(self, cmd: Command) -> None:
        """RESET CFSTRUCT(name) ACTION(FAIL): simulate a structure failure."""
        action = (cmd.get("ACTION").value or "").upper() if cmd.get("ACTION") else ""
        if action != "FAIL":
            raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR, "RESET CFSTRUCT needs ACTION(FAIL)")
        self.messages += await self.qm.structures.fail(self._name(cmd))

    async def display_cfstatus(self, cmd: Command) -> list[dict[str, Any]]:
        """DISPLAY CFSTATUS(generic name) [TYPE(SUMMARY | BACKUP)]."""
        kind = (cmd.get("TYPE").value or "").upper() if cmd.get("TYPE") else "SUMMARY"
        if kind not in ("SUMMARY", "BACKUP"):
            raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, f"TYPE({kind}) is not SUMMARY or BACKUP")
        names = self._structure_names(cmd, recoverable_only=False)
        for name in names:
            if self.qm.cache.cfstruct(name) is None and "*" not in (cmd.name or ""):
                raise MQError(MQRC.UNKNOWN_OBJECT_NAME, f"CFSTRUCT({name}) not found")
        return [await self.qm.structures.status(name, kind) for name in names]

    # ---- DISPLAY ------------------------------------------------------------------------

    async def display(self, cmd: Command) -> list[dict[str, Any]]:
        objtype = cmd.objtype or ""
        pattern = self._name(cmd, generic=True)
        objclass = "QUEUE" if objtype in ("QLOCAL", "QALIAS", "QREMOTE", "QUEUE") else objtype
        types = {"QLOCAL": {"QLOCAL"}, "QALIAS": {"QALIAS"}, "PROCESS": {"PROCESS"}, "CFSTRUCT": {"CFSTRUCT"},
                 "QREMOTE": {"QREMOTE"}, "QUEUE": {"QLOCAL", "QALIAS", "QREMOTE"}}[objtype]
        if objtype == "QUEUE" and cmd.get("TYPE"):
            wanted = (cmd.get("TYPE").value or "").upper()
            if wanted not in ("QLOCAL", "QALIAS", "QREMOTE", "ALL"):
                raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, f"TYPE({wanted}) is not QLOCAL, QALIAS, QREMOTE or ALL")
            types = {"QLOCAL", "QALIAS", "QREMOTE"} if wanted == "ALL" else {wanted}
        dispositions = self._display_dispositions(cmd, objtype)
        defs = await self.qm.db(self.qm.repo.visible_to, self.qm.name, objclass)
        where = _parse_where(cmd)
        out = []
        for d in defs:
            if d.objtype not in types or not matches(pattern, d.name):
                continue
            if objtype != "CFSTRUCT" and d.qsgdisp not in dispositions:
                continue
            row = display_object(d)
            loc = queue_location(self.qm.qsg, d) if d.objtype == "QLOCAL" and d.location != GROUP_LOCATION else None
            if loc is not None and loc.tag not in self.qm.cf.failed:  # a failed structure has no counts
                row.update(live_counts(await self.qm.cf.queue_status(loc), self.qm.name))
            if where is None or where(row):
                out.append(row)
        if not out and "*" not in pattern:
            raise MQError(MQRC.UNKNOWN_OBJECT_NAME, f"{objtype}({pattern}) not found")
        return out

    def _display_dispositions(self, cmd: Command, objtype: str) -> set[str]:
        kw = cmd.get("QSGDISP")
        value = (kw.value or "").upper() if kw else "LIVE"
        choices = {"LIVE": {"QMGR", "COPY", "SHARED"}, "ALL": {"QMGR", "COPY", "SHARED", "GROUP"},
                   "PRIVATE": {"QMGR", "COPY"}, "QMGR": {"QMGR"}, "COPY": {"COPY"}, "GROUP": {"GROUP"},
                   "SHARED": {"SHARED"}}
        if value not in choices:
            raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, f"QSGDISP({value}) is not valid for DISPLAY")
        return choices[value]

    async def display_qstatus(self, cmd: Command) -> list[dict[str, Any]]:
        """DISPLAY QSTATUS: per local queue, one object per QM that has it open (at least this QM)."""
        pattern = self._name(cmd, generic=True)
        kind = (cmd.get("TYPE").value or "QUEUE").upper() if cmd.get("TYPE") else "QUEUE"
        if kind not in ("QUEUE", "HANDLE"):
            raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, f"TYPE({kind}) is not QUEUE or HANDLE")
        out = []
        for d in self.qm.cache.all("QUEUE"):
            if d.objtype != "QLOCAL" or d.location == GROUP_LOCATION or not matches(pattern, d.name):
                continue
            if queue_location(self.qm.qsg, d).tag in self.qm.cf.failed and "*" in pattern:
                continue  # a generic DISPLAY shows what it can; a named queue answers 2373
            status = await self.qm.cf.queue_status(queue_location(self.qm.qsg, d))
            per_qm = status.opens
            holders = [q for q, c in per_qm.items() if int(c.get("handles", 0))] or [self.qm.name]
            for qmgr in sorted(holders):
                counts = per_qm.get(qmgr, {})
                out.append({
                    "QUEUE": d.name, "TYPE": kind, "QSGDISP": d.qsgdisp, "QMNAME": qmgr,
                    "CURDEPTH": status.depth, "IPPROCS": int(counts.get("ipprocs", 0)),
                    "OPPROCS": int(counts.get("opprocs", 0)), "UNCOM": "YES" if status.uncommitted else "NO",
                })
        if not out and "*" not in pattern:
            raise MQError(MQRC.UNKNOWN_OBJECT_NAME, f"QLOCAL({pattern}) not found")
        return out


def _authrec_row(rec) -> dict[str, Any]:
    return {"PROFILE": rec.profile, "ENTITY": rec.entity, "ENTTYPE": rec.entity_type, "OBJTYPE": rec.objtype,
            "AUTHLIST": ",".join(sorted(rec.rights)) or "NONE"}


def _handles(status: QueueStatus) -> int:
    return sum(int(c.get("handles", 0)) for c in status.opens.values())


_WHERE = re.compile(r"^\s*([A-Z0-9]+)\s+(EQ|NE|GT|LT|GE|LE|LK|NL)\s+(.+?)\s*$", re.IGNORECASE)


def _parse_where(cmd: Command):
    """DISPLAY ... WHERE(attr op value): EQ NE GT LT GE LE, and LK / NL with a trailing ``*``."""
    kw = cmd.get("WHERE")
    if kw is None:
        return None
    m = _WHERE.match(kw.value or "")
    if not m:
        raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR, "WHERE needs (attribute operator value), e.g. WHERE(CURDEPTH GT 0)")
    attr, op, raw = m.group(1).upper(), m.group(2).upper(), m.group(3).strip("'")

    def test(row: dict[str, Any]) -> bool:
        if attr not in row:
            raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR, f"WHERE names {attr}, which these objects do not have")
        value = row[attr]
        if op in ("LK", "NL"):
            return matches(raw, str(value)) == (op == "LK")
        if isinstance(value, int):
            try:
                other: Any = int(raw)
            except ValueError:
                raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, f"WHERE value '{raw}' is not a number") from None
        else:
            value, other = str(value), raw
        return {"EQ": value == other, "NE": value != other, "GT": value > other, "LT": value < other,
                "GE": value >= other, "LE": value <= other}[op]

    return test


async def apply_mqset(qm: QueueManager, obj: ObjectDef, keywords: list[tuple[str, str | None]], *,
                      retrigger: bool = True) -> ObjectDef:
    """MQSET: change the attributes of the opened object's own definition, as an ALTER would
    (also used by the queue manager itself to set TRIGGER off after a DEPTH trigger)."""
    current = await qm.db(qm.repo.find, obj.objclass, obj.name, obj.location)
    if current is None:
        raise MQError(MQRC.Q_DELETED, f"{obj.name} has been deleted")
    attributes.apply_keywords(obj.objtype, {**attributes.defaults(obj.objtype), **current.attrs}, keywords)
    saved = await qm.db(qm.repo.update, current, lambda cur: attributes.apply_keywords(
        obj.objtype, {**attributes.defaults(obj.objtype), **cur.attrs}, keywords))
    if saved.objtype == "QLOCAL":
        await qm.sync_queue_state(saved)
    await qm.announce([(saved.objclass, saved.name)])
    if retrigger:
        await qm.triggers.definition_changed(current, saved)
    return saved
