"""One queue manager's security: who calls (authentication) and what they may do (authorization).

docs/design.md principle 2 holds: no SQL on the put/get path. Authority records are cached whole in
each QM, reloaded when ``SET AUTHREC`` / ``DELETE AUTHREC`` / ``REFRESH SECURITY`` broadcast a
change (and after a broadcast reconnect). Users and API keys are read on a cache miss and kept
for ``QSG_AUTH_CACHE_S`` seconds; every change of a user, password or API key made with the
``qsg user`` CLI broadcasts the same invalidation as ``REFRESH SECURITY`` (as on z/OS after a
RACF change), which every QM applies before the command returns. A credential verified once
(argon2 is slow on purpose) is remembered by its SHA-256 with the cached user, so a changed or
revoked credential is checked again. A read from the repository that an invalidation overtook
is not cached. Checks happen at MQCONN, MQOPEN, MQPUT1, per MQSC command, and in the IGQ agent
(IGQAUT / IGQUSER).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from app.core.errors import MQError
from app.core.reasons import MQRC
from app.repository.security import KeyRecord, SecurityStore, UserRecord
from app.security.passwords import split_api_key, verify_secret
from app.security.rights import (
    RIGHT_FOR_OPEN_OPTION,
    AuthRec,
    Principal,
    context_right_needed,
    has_context_right,
    igq_checked_users,
    not_authorized,
    rights_of,
)

if TYPE_CHECKING:
    from app.cf.engine import CouplingFacility
    from app.repository.store import Repository
    from app.settings import Settings

log = logging.getLogger(__name__)
T = TypeVar("T")
LTPA_COOKIE = "LtpaToken2"
SECURITY_CHANGED = {"kind": "security"}  # the broadcast of REFRESH SECURITY and of the qsg user CLI


class AuthenticationFailed(Exception):
    """No valid credentials: HTTP 401 with MQRC_NOT_AUTHORIZED."""


@dataclass
class _Cached(Generic[T]):
    value: T | None
    expires: float
    verified: set[str] = field(default_factory=set)  # SHA-256 of secrets that matched


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


class SecurityHost(Protocol):
    """What the security service uses of its queue manager (the QueueManager wires it)."""

    @property
    def name(self) -> str: ...
    @property
    def qsg(self) -> str: ...
    @property
    def attrs(self) -> dict[str, Any]: ...
    @property
    def settings(self) -> Settings: ...
    @property
    def repo(self) -> Repository: ...
    @property
    def cf(self) -> CouplingFacility: ...
    @property
    def broadcaster(self) -> Any: ...  # publish(message): the acknowledged broadcast to the group

    def db(self, fn: Callable[..., T], *args: Any) -> Awaitable[T]: ...


class Security:
    """Authentication and authorization of one queue manager."""

    def __init__(self, qm: SecurityHost) -> None:
        self.qm = qm
        self.enabled = qm.settings.auth == "on"
        self.ttl_s = qm.settings.auth_cache_s
        self.store = SecurityStore(qm.repo.engine, qm.qsg)
        self.records: list[AuthRec] = []
        self._users: dict[str, _Cached[UserRecord]] = {}
        self._keys: dict[str, _Cached[KeyRecord]] = {}
        self._generation = 0  # bumped by every invalidation

    # ---- caches -----------------------------------------------------------------------------

    async def reload(self) -> None:
        """Authority records from the repository; users and keys are read again when next used."""
        self._generation += 1
        self._users.clear()
        self._keys.clear()
        self.records = await self.qm.db(self.store.authrecs)

    async def announce(self) -> None:
        """Tell every QM of the group (this one included) to reload; returns after their acks."""
        await self.qm.broadcaster.publish(SECURITY_CHANGED)

    async def _cached(self, table: dict[str, _Cached[T]], key: str, load) -> _Cached[T]:
        now = time.monotonic()
        entry = table.get(key)
        if entry is None or entry.expires < now:
            generation = self._generation
            entry = _Cached(await self.qm.db(load, key), now + self.ttl_s)
            if generation != self._generation:
                return entry  # invalidated while reading: this answer serves this call only
            if len(table) > 10_000:
                table.clear()  # bound the memory a stream of unknown names could take
            table[key] = entry
        return entry

    async def _verify(self, entry: _Cached, stored_hash: str | None, secret: str) -> bool:
        d = _digest(secret)
        if d in entry.verified:
            return True
        if await self.qm.db(verify_secret, stored_hash, secret):
            entry.verified.add(d)
            return True
        return False

    async def _principal(self, name: str, method: str) -> Principal:
        entry = await self._cached(self._users, name, self.store.user)
        if entry.value is None:
            raise AuthenticationFailed(f"user '{name}' is not defined")
        return Principal(entry.value.name, entry.value.groups, entry.value.admin, method)

    # ---- authentication ---------------------------------------------------------------------

    async def authenticate(self, headers: dict[str, str], cookies: dict[str, str]) -> Principal:
        """The caller of a request: API key (``X-API-Key`` or ``Authorization: Bearer``), HTTP
        basic, or the ``LtpaToken2`` cookie of an IBM REST login."""
        auth = headers.get("authorization", "")
        scheme, _, value = auth.partition(" ")
        api_key = headers.get("x-api-key") or (value.strip() if scheme.lower() == "bearer" else "")
        if api_key:
            return await self._by_key(api_key)
        if scheme.lower() == "basic":
            try:
                user, sep, password = base64.b64decode(value.strip(), validate=True).decode("utf-8").partition(":")
            except (binascii.Error, UnicodeDecodeError):
                raise AuthenticationFailed("malformed basic credentials") from None
            if not sep:
                raise AuthenticationFailed("malformed basic credentials")
            return await self.check_password(user, password)
        token = next((v for k, v in cookies.items() if k.startswith(LTPA_COOKIE)), "")
        if token:
            name = await self.qm.cf.tokens.user(_digest(token))
            if name is None:
                raise AuthenticationFailed("the login token has expired or was logged out")
            return await self._principal(name, "token")
        raise AuthenticationFailed("no credentials: use HTTP basic, an API key (X-API-Key) or log in")

    async def check_password(self, user: str, password: str) -> Principal:
        entry = await self._cached(self._users, user, self.store.user)
        if entry.value is None or not await self._verify(entry, entry.value.password_hash, password):
            raise AuthenticationFailed(f"wrong user name or password for '{user}'")
        return Principal(entry.value.name, entry.value.groups, entry.value.admin, "basic")

    async def _by_key(self, presented: str) -> Principal:
        parts = split_api_key(presented)
        if parts is None:
            raise AuthenticationFailed("the API key is not valid")
        key_id, secret = parts
        entry = await self._cached(self._keys, key_id, self.store.key)
        rec = entry.value
        if rec is None or rec.revoked or not await self._verify(entry, rec.key_hash, secret):
            raise AuthenticationFailed("the API key is not valid or was revoked")
        return await self._principal(rec.user_name, "apikey")

    async def login(self, user: str, password: str) -> str:
        """IBM REST login: a new token (the LtpaToken2 cookie's value), valid on every QM."""
        await self.check_password(user, password)
        token = secrets.token_urlsafe(32)
        await self.qm.cf.tokens.issue(_digest(token), user, int(self.qm.settings.ltpa_expiry_s))
        return token

    async def logout(self, cookies: dict[str, str]) -> None:
        for k, v in cookies.items():
            if k.startswith(LTPA_COOKIE):
                await self.qm.cf.tokens.revoke(_digest(v))

    # ---- authorization (no SQL: the cached records) -------------------------------------------

    def rights(self, principal: Principal, objtype: str, name: str) -> frozenset[str]:
        return rights_of(principal, objtype, name, self.records)

    def check(self, principal: Principal | None, right: str, objtype: str, name: str) -> None:
        """MQRC_NOT_AUTHORIZED unless ``principal`` (None: unchecked) has ``right``."""
        if principal is None or principal.admin:
            return
        if right not in self.rights(principal, objtype, name):
            raise not_authorized(principal, right, objtype, name)

    def check_qmgr(self, principal: Principal | None, right: str) -> None:
        self.check(principal, right, "QMGR", self.qm.name)

    def check_open(self, principal: Principal | None, name: str, options: Any) -> None:
        if principal is None or principal.admin:
            return
        for option in sorted(options):
            right = RIGHT_FOR_OPEN_OPTION.get(option)
            if right:
                self.check(principal, right, "QUEUE", name)

    def may_set_context(self, principal: Principal | None) -> bool:
        if principal is None or principal.admin:
            return True
        have = self.rights(principal, "QMGR", self.qm.name)
        return "CTX" in have or "ADMIN" in have

    def check_context(self, principal: Principal | None, queue: str, context: frozenset[str]) -> None:
        """Context security at MQOPEN / MQPUT1 (``rights`` module: hlq.CONTEXT.queuename): passing
        or setting ``context`` on ``queue`` needs the matching authority, or the queue manager's
        CTX; MQRC_NOT_AUTHORIZED otherwise. IBM checks the caller here even when the open uses an
        alternate user id ("AlternateUserId (MQCHAR12)": context checks use the current user)."""
        needed = context_right_needed(context)
        if principal is None or principal.admin or needed is None or self.may_set_context(principal):
            return
        if not has_context_right(self.rights(principal, "QUEUE", queue), needed):
            raise not_authorized(principal, needed, "QUEUE", queue)

    async def alternate_principal(self, principal: Principal | None, user_id: str) -> Principal | None:
        """MQOO_ALTERNATE_USER_AUTHORITY: the user the open's authority is checked for instead of
        the caller (None with authentication off: nothing is checked). IBM ("Alternate user
        authority"): the caller needs the authority to name another user - on z/OS access to
        hlq.ALTERNATE.USER.userid, here ALTUSR on the queue manager - and the alternate user must
        be one the security manager knows; a blank id can pass only where no authority is
        needed, which with authentication on is never the case for an open."""
        if principal is None:
            return None
        if not principal.admin:
            self.check_qmgr(principal, "ALTUSR")
        if not user_id:
            raise MQError(MQRC.NOT_AUTHORIZED, "ALTERNATE_USER_AUTHORITY with a blank alternate_user_id")
        entry = await self._cached(self._users, user_id, self.store.user)
        if entry.value is None:
            raise MQError(MQRC.NOT_AUTHORIZED, f"alternate user '{user_id}' is not defined")
        return Principal(entry.value.name, entry.value.groups, entry.value.admin, "alternate")

    async def principal_of(self, user_id: str) -> Principal | None:
        """The principal a message's UserIdentifier names, for work the queue manager does on
        its behalf (the command server runs a command as the user who put it). None with
        authentication off (nothing is checked); MQRC_NOT_AUTHORIZED for a blank or unknown user."""
        if not self.enabled:
            return None
        if not user_id:
            raise MQError(MQRC.NOT_AUTHORIZED, "the request message carries no UserIdentifier")
        entry = await self._cached(self._users, user_id, self.store.user)
        if entry.value is None:
            raise MQError(MQRC.NOT_AUTHORIZED, f"user '{user_id}' is not defined")
        return Principal(entry.value.name, entry.value.groups, entry.value.admin, "cmdserver")

    async def check_igq_put(self, queue: str, user_identifier: str) -> None:
        """The IGQ agent's check before it puts a message to ``queue``: the PUT right of the
        users that this QM's IGQAUT and IGQUSER name (``rights.igq_checked_users``), when
        authentication is on. MQRC_NOT_AUTHORIZED otherwise (the message is dead-lettered)."""
        if not self.enabled:
            return
        igqaut = str(self.qm.attrs.get("IGQAUT", "DEF"))
        for user in igq_checked_users(igqaut, str(self.qm.attrs.get("IGQUSER", "")), user_identifier):
            entry = await self._cached(self._users, user, self.store.user)
            if entry.value is None:
                raise MQError(MQRC.NOT_AUTHORIZED, f"IGQAUT({igqaut}): user '{user}' is not defined")
            principal = Principal(entry.value.name, entry.value.groups, entry.value.admin, "igq")
            if "PUT" not in self.rights(principal, "QUEUE", queue):
                raise MQError(MQRC.NOT_AUTHORIZED,
                              f"IGQAUT({igqaut}): user '{user}' is not authorized to PUT on queue '{queue}'")
