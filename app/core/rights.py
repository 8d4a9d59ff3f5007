"""Authorities, authority records and the access decision (pure: no I/O).

IBM MQ's object authority manager as ``SET AUTHREC`` / ``setmqaut`` define it (IBM MQ
"SET AUTHREC on Multiplatforms", "Authorities you can set on IBM MQ objects"): an authority
record grants IBM authorities (CONNECT, GET, PUT, DSP, ...) on a profile of one object type to a
principal (user) or a group. A profile is a name or a generic profile, with IBM's wildcards
("Using OAM generic profiles"): ``?`` is one character, ``*`` any string within one qualifier
(qualifiers are separated by ``.``), ``**`` zero or more whole qualifiers. For each entity (the
user and each of its groups) only the most specific matching profile applies ("Profile
priorities": compare left to right; a plain character beats ``?``, which beats ``*``, which
beats ``**``); the user has the union over its entities. An administrator
(``qsg user add --admin``) has every authority.

Two QMGR rights of this emulator stand for what z/OS checks through RACF profiles: ADMIN (may
issue every MQSC command) and CTX (may choose PutApplName). They can be granted by name, and
follow from IBM authorities: ADMIN from the administration authorities of the queue manager
(ALLADM: CHG, DLT and DSP on OBJTYPE(QMGR)), CTX from SETALL on OBJTYPE(QMGR) (the authority
that lets an application set all context, PutApplName included).
"""

from __future__ import annotations

import contextvars
import re
from dataclasses import dataclass, field

from app.core.errors import MQError
from app.core.reasons import MQRC
from app.core.wildcards import char_matches

# IBM's authorities, in the order of the SET AUTHREC syntax diagram (AUTHLIST shows this order).
AUTHORITY_ORDER = ("ALTUSR", "BROWSE", "CHG", "CLR", "CONNECT", "CRT", "DLT", "DSP", "GET", "INQ", "PUT",
                   "PASSALL", "PASSID", "SET", "SETALL", "SETID", "SUB", "RESUME", "PUB", "SYSTEM", "CTRL",
                   "CTRLX", "ADMIN", "CTX")
# Which authorities apply to which object type (IBM's "Authorities you can set on IBM MQ objects").
_ADM = ("CHG", "CRT", "DLT", "DSP")
AUTHORITIES_BY_OBJTYPE: dict[str, tuple[str, ...]] = {
    "QMGR": ("ALTUSR", "CONNECT", "INQ", "SET", "SETALL", "SETID", "SYSTEM", *_ADM, "ADMIN", "CTX"),
    "QUEUE": ("BROWSE", "GET", "INQ", "PUT", "PASSALL", "PASSID", "SET", "SETALL", "SETID", "CLR", *_ADM),
    "TOPIC": ("PUB", "SUB", "RESUME", "PASSALL", "PASSID", "SETALL", "SETID", "CLR", "CTRL", *_ADM),
    "PROCESS": ("INQ", *_ADM),
    "NAMELIST": ("INQ", *_ADM),
    "AUTHINFO": ("INQ", *_ADM),
    "CHANNEL": ("CTRL", "CTRLX", *_ADM),
    "CLNTCONN": _ADM,
    "COMMINFO": _ADM,
    "LISTENER": ("CTRL", *_ADM),
    "SERVICE": ("CTRL", *_ADM),
    "RQMNAME": ("PUT",),
}
# The generic authorities, each restricted to the object type it is granted on:
# ALLMQI every MQI authority, ALLADM every administration authority, ALL both plus CRT and SYSTEM.
_MQI = frozenset({"ALTUSR", "BROWSE", "CONNECT", "GET", "INQ", "PASSALL", "PASSID", "PUB", "PUT", "RESUME",
                  "SET", "SETALL", "SETID", "SUB"})
_ADMIN_OPS = frozenset({"CHG", "CLR", "CTRL", "CTRLX", "DLT", "DSP"})
ALL = "ALL"
# Kept for callers that list the object types whose authorities this emulator enforces.
RIGHTS_BY_OBJTYPE = AUTHORITIES_BY_OBJTYPE
# The QMGR authorities that together make an MQSC administrator (ALLADM on the queue manager).
_ADMIN_FROM = frozenset({"CHG", "DLT", "DSP"})

# MQOPEN option -> right needed (MQOO_ names of docs/api.md).
RIGHT_FOR_OPEN_OPTION = {"INPUT_AS_Q_DEF": "GET", "INPUT_SHARED": "GET", "INPUT_EXCLUSIVE": "GET",
                         "BROWSE": "BROWSE", "OUTPUT": "PUT", "INQUIRE": "INQ", "SET": "SET"}

# Context security. z/OS checks, at MQOPEN and MQPUT1, the caller's access to the MQADMIN profile
# hlq.CONTEXT.queuename: READ to pass identity or all context, UPDATE to set identity context,
# CONTROL to set all context; none for SAVE_ALL_CONTEXT, NO_CONTEXT or DEFAULT_CONTEXT (IBM "Profiles
# for context security", https://www.ibm.com/docs/en/ibm-mq/9.3.x?topic=resources-profiles-context-security).
# Here the profile's access levels are the queue's authorities PASSID, PASSALL, SETID and SETALL
# (IBM's OAM names for the same rights), in this order: each grants the ones before it, as a
# higher RACF access level does. The queue manager's CTX (implied by SETALL on OBJTYPE(QMGR)) is
# hlq.CONTEXT.** at CONTROL: every context right on every queue.
CONTEXT_LADDER = ("PASSID", "PASSALL", "SETID", "SETALL")
RIGHT_FOR_CONTEXT = {"PASS_IDENTITY": "PASSID", "PASS_ALL": "PASSALL", "SET_IDENTITY": "SETID", "SET_ALL": "SETALL"}


def context_right_needed(context: frozenset[str] | set[str]) -> str | None:
    """The queue authority an open (or MQPUT1) that passes or sets ``context`` (PASS_IDENTITY,
    PASS_ALL, SET_IDENTITY, SET_ALL) needs: the highest of the ladder; None for none."""
    needed = [CONTEXT_LADDER.index(RIGHT_FOR_CONTEXT[c]) for c in context if c in RIGHT_FOR_CONTEXT]
    return CONTEXT_LADDER[max(needed)] if needed else None


def has_context_right(rights: frozenset[str] | set[str], needed: str) -> bool:
    """Whether the authorities ``rights`` on a queue include ``needed`` or one above it."""
    return any(r in rights for r in CONTEXT_LADDER[CONTEXT_LADDER.index(needed):])


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
# The credentials that request presented (headers, cookies, client address) and the security
# generation they were checked at (``Security.generation``): a call that waits (MQGET with a wait
# interval) checks them again when a security change came meanwhile. ``None``: nothing to check.
current_credentials: contextvars.ContextVar[tuple[dict[str, str], dict[str, str], str, int] | None] = \
    contextvars.ContextVar("qsg_credentials", default=None)


@dataclass(frozen=True)
class AuthRec:
    """One authority record (``SET AUTHREC``)."""

    objtype: str
    profile: str
    entity_type: str  # PRINCIPAL or GROUP
    entity: str
    rights: frozenset[str] = field(default_factory=frozenset)


def parse_rights(objtype: str, values: list[str]) -> set[str]:
    """The authorities of an AUTHADD/AUTHRMV list: IBM's names, ALLMQI / ALLADM / ALL expanded to
    the authorities of the object type, NONE nothing."""
    allowed = AUTHORITIES_BY_OBJTYPE[objtype]
    out: set[str] = set()
    for value in values:
        v = value.strip().upper()
        if v == ALL:
            out.update(allowed)  # every authority of the type: ALLMQI + ALLADM + CRT + SYSTEM
        elif v == "ALLMQI":
            out.update(a for a in allowed if a in _MQI)
        elif v == "ALLADM":
            out.update(a for a in allowed if a in _ADMIN_OPS)
        elif v in allowed:
            out.add(v)
        elif v in ("", "NONE"):
            continue
        else:
            raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR,
                          f"{v} is not an authority of OBJTYPE({objtype}); use {', '.join(allowed)}, "
                          "ALLMQI, ALLADM, ALL or NONE")
    return out


def authlist(rights: frozenset[str] | set[str]) -> list[str]:
    """Authorities in IBM's display order."""
    rank = {a: i for i, a in enumerate(AUTHORITY_ORDER)}
    return sorted(rights, key=lambda a: (rank.get(a, len(rank)), a))


_PROFILE = re.compile(r"[A-Za-z0-9./_%*?]{1,48}")


def check_profile(profile: str) -> str:
    """A valid profile: an object name with IBM's wildcards ``?``, ``*`` and ``**``."""
    if not _PROFILE.fullmatch(profile):
        raise MQError(MQRC.OBJECT_NAME_ERROR,
                      f"'{profile}' is not a valid profile (1-48 of A-Z a-z 0-9 . / _ % and the wildcards ? * **)")
    return profile


def _qualifier_matches(qualifier: str, name: str) -> bool:
    """One qualifier of a profile: ``?`` one character, ``*`` (or ``**`` inside a qualifier) any
    string; the qualifier never spans a ``.``. Matched in bounded time (``app.core.wildcards``:
    a backtracking regex of ``*a*a*a...`` would stall every MQOPEN checked against it)."""
    return char_matches(qualifier.replace("**", "*"), name)


def _match_qualifiers(profile: tuple[str, ...], name: tuple[str, ...]) -> bool:
    if not profile:
        return not name
    head = profile[0]
    if head == "**":  # zero or more whole qualifiers
        return any(_match_qualifiers(profile[1:], name[i:]) for i in range(len(name) + 1))
    return bool(name) and _qualifier_matches(head, name[0]) and _match_qualifiers(profile[1:], name[1:])


def profile_matches(profile: str, name: str) -> bool:
    """Whether ``profile`` (a name or an IBM generic profile) applies to object ``name``."""
    if not any(c in profile for c in "*?"):
        return profile == name
    return _match_qualifiers(tuple(profile.split(".")), tuple(name.split(".")))


def _specificity(profile: str) -> tuple[int, ...]:
    """IBM's profile priority as a sort key: compared left to right, a plain character (3) is more
    specific than ``?`` (2), than ``*`` (1), than ``**`` (0); a name without wildcards beats all."""
    if not any(c in profile for c in "*?"):
        return (4,)
    key: list[int] = []
    i = 0
    while i < len(profile):
        if profile.startswith("**", i):
            key.append(0)
            i += 2
            continue
        key.append({"?": 2, "*": 1}.get(profile[i], 3))
        i += 1
    return tuple(key)


def implied(objtype: str, rights: set[str]) -> set[str]:
    """``rights`` plus the emulator's ADMIN and CTX where IBM authorities imply them."""
    if objtype == "QMGR":
        if _ADMIN_FROM <= rights:
            rights.add("ADMIN")
        if "SETALL" in rights:
            rights.add("CTX")
    return rights


def rights_of(principal: Principal, objtype: str, name: str, records: list[AuthRec]) -> frozenset[str]:
    """The authorities ``principal`` has on object ``name`` of ``objtype``."""
    if principal.admin:
        return frozenset(AUTHORITIES_BY_OBJTYPE.get(objtype, ()))
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
    return frozenset(implied(objtype, out))


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
