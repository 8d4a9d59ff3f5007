"""Security commands (issue 11): authority records, as IBM's distributed SET/DELETE/DISPLAY
AUTHREC, and REFRESH SECURITY."""

from __future__ import annotations

from typing import Any

from app.core.errors import MQError
from app.core.names import check_generic_name, matches
from app.core.reasons import MQRC
from app.mqsc.commands.base import CommandBase
from app.mqsc.parser import Command
from app.security.rights import RIGHTS_BY_OBJTYPE, parse_rights


class SecurityCommands(CommandBase):
    """SET AUTHREC, DELETE AUTHREC, DISPLAY AUTHREC, REFRESH SECURITY."""

    def _authrec_target(self, cmd: Command, *, need_entity: bool = True) -> tuple[str, str, str | None, str | None]:
        """(OBJTYPE, PROFILE, entity type, entity) of an AUTHREC command."""
        objtype = cmd.value("OBJTYPE").upper()
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
        kw = principal or group
        if kw is not None:
            entity = (kw.value or "").strip()
            if not entity:
                raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, f"{kw.name} needs a name")
            return objtype, profile, "PRINCIPAL" if principal else "GROUP", entity
        if need_entity:
            raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR,
                          f"{cmd.verb} AUTHREC needs PRINCIPAL('user') or GROUP('group')")
        return objtype, profile, None, None

    async def set_authrec(self, cmd: Command) -> list[dict[str, Any]]:
        """SET AUTHREC PROFILE('PAYROLL.*') OBJTYPE(QUEUE) PRINCIPAL('alice') AUTHADD(GET,PUT) AUTHRMV(...)."""
        objtype, profile, entity_type, entity = self._authrec_target(cmd)
        authadd, authrmv = cmd.get("AUTHADD"), cmd.get("AUTHRMV")
        add = parse_rights(objtype, authadd.values()) if authadd else set()
        remove = parse_rights(objtype, authrmv.values()) if authrmv else set()
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
        profile = cmd.value("PROFILE").strip()
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


def _authrec_row(rec) -> dict[str, Any]:
    return {"PROFILE": rec.profile, "ENTITY": rec.entity, "ENTTYPE": rec.entity_type, "OBJTYPE": rec.objtype,
            "AUTHLIST": ",".join(sorted(rec.rights)) or "NONE"}
