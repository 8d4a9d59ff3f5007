"""Rights, authority records and the access decision (pure: no I/O).

Like ``setmqaut`` / RACF profiles: an authority record grants rights on a profile (a name, or a
generic name ending in ``*`` as in MQSC) to a principal (user) or a group. For each entity (the
user and each of its groups) the most specific matching profile applies (an exact name before
the longest generic prefix); the user has the union over its entities. An administrator
(``qsg user add --admin``) has every right.
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass, field

from app.core.errors import MQError
from app.core.reasons import MQRC

# Rights on a queue manager (OBJTYPE(QMGR), profile matched against the QM's name) and on queues.
QMGR_RIGHTS = ("CONNECT", "ADMIN", "CTX")
QUEUE_RIGHTS = ("GET", "BROWSE", "PUT", "INQ", "SET")
RIGHTS_BY_OBJTYPE = {"QMGR": QMGR_RIGHTS, "QUEUE": QUEUE_RIGHTS}
ALL = "ALL"

# MQOPEN option -> right needed (MQOO_ names of docs/api.md).
RIGHT_FOR_OPEN_OPTION = {"INPUT_AS_Q_DEF": "GET", "INPUT_SHARED": "GET", "INPUT_EXCLUSIVE": "GET",
                         "BROWSE": "BROWSE", "OUTPUT": "PUT", "INQUIRE": "INQ", "SET": "SET"}


@dataclass(frozen=True)
class Principal:
    """An authenticated caller."""

    name: str
    groups: frozenset[str] = frozenset()
    admin: bool = False
    method: str = "basic"  # basic, apikey, token


# The caller of the request being served (set by the authentication middleware). ``None``: no
# authentication (QSG_AUTH=off) or the queue manager's own work - no checks.
current_principal: contextvars.ContextVar[Principal | None] = contextvars.ContextVar("qsg_principal", default=None)


@dataclass(frozen=True)
class AuthRec:
    """One authority record (``SET AUTHREC``)."""

    objtype: str
    profile: str
    entity_type: str  # PRINCIPAL or GROUP
    entity: str
    rights: frozenset[str] = field(default_factory=frozenset)


def parse_rights(objtype: str, values: list[str]) -> set[str]:
    """The rights of an AUTHADD/AUTHRMV list (``ALL`` = every right of the object type)."""
    allowed = RIGHTS_BY_OBJTYPE[objtype]
    out: set[str] = set()
    for value in values:
        v = value.strip().upper()
        if v == ALL:
            out.update(allowed)
        elif v in allowed:
            out.add(v)
        elif v in ("", "NONE"):
            continue
        else:
            raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR,
                          f"{v} is not a right of OBJTYPE({objtype}); use {', '.join(allowed)} or ALL")
    return out


def profile_matches(profile: str, name: str) -> bool:
    if profile.endswith("*"):
        return name.startswith(profile[:-1])
    return profile == name


def _specificity(profile: str) -> tuple[int, int]:
    """Exact names first, then the longest generic prefix."""
    return (0, len(profile)) if profile.endswith("*") else (1, len(profile))


def rights_of(principal: Principal, objtype: str, name: str, records: list[AuthRec]) -> frozenset[str]:
    """The rights ``principal`` has on object ``name`` of ``objtype``."""
    if principal.admin:
        return frozenset(RIGHTS_BY_OBJTYPE[objtype])
    entities = {("PRINCIPAL", principal.name), *(("GROUP", g) for g in principal.groups)}
    best: dict[tuple[str, str], AuthRec] = {}
    for rec in records:
        key = (rec.entity_type, rec.entity)
        if rec.objtype != objtype or key not in entities or not profile_matches(rec.profile, name):
            continue
        if key not in best or _specificity(rec.profile) > _specificity(best[key].profile):
            best[key] = rec
    out: set[str] = set()
    for rec in best.values():
        out |= rec.rights
    return frozenset(out)


# IGQAUT of the receiving queue manager -> whose PUT right on the destination queue its IGQ
# agent checks. IBM's table "User IDs checked against profile name for intra-group queuing",
# hlq.resourcename column, two-check rows (what z/OS does when no RESLEVEL profile lowers the
# checks): DEF  SND + IGQ, CTX  SND + ALT, ONLYIGQ  IGQ, ALTIGQ  IGQ + ALT.
#   IGQ: IGQUSER; blank means the receiving queue manager's own id, which is never checked.
#   ALT: the UserIdentifier of the message (who put it); blank for a message put while
#        authentication was off or by a queue manager itself: nobody to check.
#   SND: the id of the queue manager that put the message on SYSTEM.QSG.TRANSMIT.QUEUE. The
#        queue managers of a group are trusted alike here (as when they share one started-task
#        user id), so like the receiving queue manager's own id it is not checked.
_IGQ_CHECKED = {"DEF": ("IGQ",), "CTX": ("ALT",), "ONLYIGQ": ("IGQ",), "ALTIGQ": ("IGQ", "ALT")}


def igq_checked_users(igqaut: str, igquser: str, user_identifier: str) -> tuple[str, ...]:
    """The users whose PUT right on the destination queue the IGQ agent checks (IGQAUT values
    other than the four count as DEF, the default)."""
    ids = {"IGQ": igquser.strip(), "ALT": user_identifier.strip()}
    chosen = (ids[which] for which in _IGQ_CHECKED.get(igqaut.strip().upper(), _IGQ_CHECKED["DEF"]))
    return tuple(dict.fromkeys(user for user in chosen if user))


def not_authorized(principal: Principal, right: str, objtype: str, name: str) -> MQError:
    return MQError(MQRC.NOT_AUTHORIZED,
                   f"user '{principal.name}' is not authorized to {right} on {objtype.lower()} '{name}'")
