"""Security commands: authority records as IBM MQ's SET / DELETE / DISPLAY AUTHREC on
Multiplatforms (IBM's authority names, OBJTYPEs and generic profiles; app/core/rights.py),
and REFRESH SECURITY."""

from __future__ import annotations

from typing import Any

from app.core.errors import MQError, echo
from app.core.reasons import MQRC
from app.core.rights import AUTHORITIES_BY_OBJTYPE, AuthRec, authlist, check_profile, parse_rights, profile_matches
from app.mqsc.commands.base import CommandBase
from app.mqsc.parser import Command


class SecurityCommands(CommandBase):
    """SET AUTHREC, DELETE AUTHREC, DISPLAY AUTHREC, REFRESH SECURITY."""

    def _authrec_target(self, cmd: Command, *, need_entity: bool = True) -> tuple[str, str, str | None, str | None]:
        """(OBJTYPE, PROFILE, entity type, entity) of an AUTHREC command."""
        objtype = _objtype(cmd.value("OBJTYPE").upper())
        if not objtype:
            raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR, f"{cmd.verb} AUTHREC needs OBJTYPE(...)")
        profile_kw = cmd.get("PROFILE")
        profile = (profile_kw.value or "").strip() if profile_kw else ""
        if not profile:
            if objtype != "QMGR" and need_entity:
                raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR, f"{cmd.verb} AUTHREC needs PROFILE(name or generic name)")
            profile = "*"  # OBJTYPE(QMGR): every queue manager of the group
        check_profile(profile)
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
            raise MQError(MQRC.UNKNOWN_OBJECT_NAME, f"no authority record for {entity_type}({echo(entity)}) on "
                                                    f"{objtype} profile {echo(profile)}")
        await self.qm.security.announce()

    async def display_authrec(self, cmd: Command) -> list[dict[str, Any]]:
        """DISPLAY AUTHREC [PROFILE(p)] [OBJTYPE(t)] [PRINCIPAL(u) | GROUP(g)]: the records whose
        profile is the one named (a generic PROFILE selects records whose profile matches it)."""
        objtype = _objtype(cmd.value("OBJTYPE").upper())
        profile = cmd.value("PROFILE").strip()
        match = (cmd.value("MATCH") or "PROFILE").upper()
        if match not in ("PROFILE", "EXACT", "MEMBERSHIP"):
            raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, f"MATCH({echo(match)}) is not PROFILE, EXACT or MEMBERSHIP")
        principal, group = cmd.get("PRINCIPAL"), cmd.get("GROUP")
        if principal and group:
            raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR, "give PRINCIPAL or GROUP, not both")
        entities: set[tuple[str, str]] | None = None
        if principal:
            entities = {("PRINCIPAL", principal.value or "")}
            if match == "MEMBERSHIP":  # the principal's records and those of the groups it is in
                user = await self.qm.db(self.qm.security.store.user, principal.value or "")
                entities |= {("GROUP", g) for g in (user.groups if user else ())}
        elif group:
            entities = {("GROUP", group.value or "")}
        rows = []
        for rec in await self.qm.db(self.qm.security.store.authrecs):
            if objtype and rec.objtype != objtype:
                continue
            # MATCH(PROFILE): the profile named and every generic profile that applies to it
            # (IBM's MQAUTHOPT_NAME_ALL_MATCHING); MATCH(EXACT): only the profile named.
            if profile and rec.profile != profile and (match == "EXACT" or not profile_matches(rec.profile, profile)):
                continue
            if entities is not None and (rec.entity_type, rec.entity) not in entities:
                continue
            rows.append(_authrec_row(rec))
        return rows

    async def refresh_security(self, cmd: Command) -> None:
        """REFRESH SECURITY: every QM of the group reads users, keys and authority records again."""
        await self.qm.security.announce()


def _objtype(value: str) -> str:
    """An OBJTYPE of SET/DELETE/DISPLAY AUTHREC (IBM's values), or "" when not given."""
    if value and value not in AUTHORITIES_BY_OBJTYPE:
        raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR,
                      f"OBJTYPE({echo(value)}) is not one of {', '.join(sorted(AUTHORITIES_BY_OBJTYPE))}")
    return value


def _authrec_row(rec: AuthRec) -> dict[str, Any]:
    """A DISPLAY AUTHREC row with IBM's attributes: PROFILE, ENTITY, ENTTYPE, OBJTYPE, AUTHLIST."""
    return {"PROFILE": rec.profile, "ENTITY": rec.entity, "ENTTYPE": rec.entity_type, "OBJTYPE": rec.objtype,
            "AUTHLIST": ",".join(authlist(rec.rights)) or "NONE"}
