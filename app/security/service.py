"""One queue manager's security: who calls (authentication) and what they may do (authorization).

docs/design.md principle 2 holds: no SQL on the put/get path. Authority records are cached whole in
each QM, reloaded when ``SET AUTHREC`` / ``DELETE AUTHREC`` / ``REFRESH SECURITY`` broadcast a
change (and after a broadcast reconnect). Users and API keys are read on a cache miss and kept
for ``QSG_AUTH_CACHE_S`` seconds; every change of a user, password or API key made with the
``qsg user`` CLI broadcasts the same invalidation as ``REFRESH SECURITY`` (as on z/OS after a
RACF change), which every QM applies before the command returns. A credential verified once
(argon2 is slow on purpose) is remembered by its SHA-256 with the stored hash it matched, so a
changed password or key is checked again while an unchanged one is not, even after an
invalidation; concurrent checks of one credential share one argon2 run, which runs on a pool of
its own; an unknown user costs the same argon2 (a dummy hash); failed checks are throttled per
user name and client address (``Throttle``). A read from the repository that an invalidation
overtook is not cached. Checks happen at MQCONN, MQOPEN, MQPUT1, MQSUB, per MQSC command, and in
the IGQ agent (IGQAUT / IGQUSER), against the current authority of the caller (``live``); after
every change the listeners (the open sessions) are told (``on_change``).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import hashlib
import logging
import secrets
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from app.core.errors import MQError
from app.core.reasons import MQRC
from app.core.rights import (
    RIGHT_FOR_OPEN_OPTION,
    AuthRec,
    Principal,
    context_right_needed,
    current_credentials,
    has_context_right,
    igq_checked_users,
    not_authorized,
    rights_of,
)
from app.repository.passwords import split_api_key, verify_off_loop
from app.repository.security import KeyRecord, SecurityStore, UserNotFound, UserRecord

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


class Throttle:
    """Failed authentications per user name and per client address within a sliding window:
    past the limit, a credential that would need an argon2 check is refused at once (MQRC 2035,
    no argon2 run) until the window has passed. A credential verified before (its digest kept)
    still passes: the throttle bounds the work wrong guesses cause, it does not lock anyone out
    who already proved who they are.

    Checks still running count as failures until they end (``started`` / ``ended``): a burst of
    wrong passwords sent all at once from one address would otherwise pass the check together,
    before the first of them has failed, and queue an argon2 run each on the shared argon2 pool
    - the CPU of the queue manager, and the first login of every other user waiting behind
    them. So one user name or address has at most its limit of argon2 runs under way and
    recently failed together, and a new check of anyone else waits behind that many at most."""

    def __init__(self, limit_user: int, limit_client: int, window_s: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = {"user": limit_user, "client": limit_client}
        self.window_s = window_s
        self.clock = clock
        self._fails: dict[tuple[str, str], deque[float]] = {}
        self._running: dict[tuple[str, str], int] = {}  # argon2 checks under way
        self.refused = 0

    def _recent(self, key: tuple[str, str], now: float) -> deque[float]:
        fails = self._fails.get(key)
        if fails is None:
            return deque()
        while fails and fails[0] <= now - self.window_s:
            fails.popleft()
        if not fails:
            del self._fails[key]
        return fails

    def check(self, user: str, client: str) -> None:
        now = self.clock()
        for kind, who in (("user", user), ("client", client)):
            key = (kind, who)
            if who and len(self._recent(key, now)) + self._running.get(key, 0) >= self.limits[kind]:
                self.refused += 1
                raise AuthenticationFailed(f"too many failed attempts ({kind} {who!r}): try again in "
                                           f"{self.window_s:.0f} s")

    def started(self, user: str, client: str) -> None:
        """An argon2 check of ``user`` from ``client`` passed ``check`` and runs: it counts as a
        failure until ``ended``."""
        for key in (("user", user), ("client", client)):
            if key[1]:
                self._running[key] = self._running.get(key, 0) + 1

    def ended(self, user: str, client: str) -> None:
        for key in (("user", user), ("client", client)):
            left = self._running.get(key, 0) - 1
            if left > 0:
                self._running[key] = left
            else:
                self._running.pop(key, None)

    def failed(self, user: str, client: str) -> None:
        now = self.clock()
        if len(self._fails) > 10_000:
            self._fails.clear()  # bound the memory a stream of made-up names could take
        for kind, who in (("user", user), ("client", client)):
            if who:
                fails = self._fails.setdefault((kind, who), deque())
                fails.append(now)
                if len(fails) > self.limits[kind]:
                    fails.popleft()


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
        # Credentials argon2 accepted, as (stored hash, SHA-256 of the secret): kept across
        # invalidations, since a changed password or key has another stored hash.
        self._verified: set[tuple[str, str]] = set()
        self._verifying: dict[tuple[str, str], asyncio.Future[bool]] = {}  # one argon2 per burst
        self.verifications = {"known": 0, "unknown": 0}  # argon2 runs (the unknown ones on a dummy hash)
        settings = qm.settings
        self.throttle = Throttle(settings.auth_fail_limit, settings.auth_fail_limit_client,
                                 settings.auth_fail_window_s)
        self._listeners: set[Callable[[], None]] = set()  # told after every invalidation
        # HTTP basic credentials authenticated since the last security change, by a keyed hash of
        # the header (``remembered``): the hot path's calls skip decoding and checking them again.
        self._remembered: dict[bytes, tuple[Principal, float]] = {}
        self._mac_key = secrets.token_bytes(32)

    # ---- caches -----------------------------------------------------------------------------

    async def reload(self) -> None:
        """Authority records from the repository; users and keys are read again when next used."""
        self._generation += 1
        self._users.clear()
        self._keys.clear()
        self._remembered.clear()
        self.records = await self.qm.db(self.store.authrecs)
        for listener in list(self._listeners):
            try:
                listener()
            except Exception:  # noqa: BLE001 - one listener must not keep the others uninformed
                log.exception("a security change listener failed")

    @property
    def generation(self) -> int:
        """Bumped by every security change applied here."""
        return self._generation

    @contextlib.asynccontextmanager
    async def credentials_for_peers(self, principal: Principal | None) -> AsyncIterator[dict[str, str]]:
        """Headers that let another queue manager of the group run a CMDSCOPE command as
        ``principal`` when the request carried no credentials of its own (the command server's:
        its requester is the message's UserIdentifier). A new API key of that user, revoked when
        the block ends, so the other queue managers check the requester's authority as their own.
        Empty with authentication off, or for a principal with no user record."""
        if not self.enabled or principal is None:
            yield {}
            return
        try:
            key = await self.qm.db(self.store.new_key, principal.name)
        except UserNotFound:
            yield {}
            return
        try:
            yield {"x-api-key": key}
        finally:
            key_id = (split_api_key(key) or ("",))[0]
            await self.qm.db(self.store.revoke_keys, principal.name, key_id)

    def waiting_check(self) -> Callable[[], Awaitable[None]] | None:
        """For a call that waits (MQGET with a wait interval): a check it makes before each try
        to take a message, so that a message that arrives after the caller's credentials stopped
        holding (``qsg user revoke`` / ``delete``, a replaced password, a logged-out token) is
        not given to it: MQRC_NOT_AUTHORIZED, the answer the same call gets if made now. Free
        (one integer compared) until a security change comes; then the credentials are checked
        again, from the caches (the verified-credential cache spares argon2). None when there is
        nothing to check (authentication off, the queue manager's own work)."""
        credentials = current_credentials.get()
        if not self.enabled or credentials is None:
            return None
        headers, cookies, client, seen = credentials

        async def still_valid() -> None:
            nonlocal seen
            if seen == self._generation:
                return
            seen = self._generation
            try:
                await self.authenticate(headers, cookies, client)
            except AuthenticationFailed as exc:
                raise MQError(MQRC.NOT_AUTHORIZED, f"the caller's credentials no longer hold: {exc}") from None
            except Exception:  # noqa: BLE001 - cannot tell (the repository away): refuse rather than trust
                log.exception("checking a waiting caller's credentials again failed")
                raise MQError(MQRC.NOT_AUTHORIZED, "the caller's credentials could not be checked again") from None

        return still_valid

    def on_change(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` after every security change applied here (REFRESH SECURITY, SET or
        DELETE AUTHREC, a ``qsg user`` change): sessions re-resolve their principal then."""
        self._listeners.add(listener)

    def off_change(self, listener: Callable[[], None]) -> None:
        self._listeners.discard(listener)

    async def announce(self) -> None:
        """Tell every QM of the group (this one included) to reload; returns after their acks."""
        await self.qm.broadcaster.publish(SECURITY_CHANGED)

    async def _cached(self, table: dict[str, _Cached[T]], key: str, load: Callable[[str], T | None]) -> _Cached[T]:
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

    async def _verify(self, stored_hash: str | None, secret: str, user: str, client: str) -> bool:
        """argon2 of ``secret`` against ``stored_hash`` (None: an unknown user or key, checked
        against a dummy hash so that it costs the same), once per credential: remembered when it
        matched, and shared by the concurrent checks of the same credential (the check runs as a
        task of its own, so a caller that goes away does not cancel it for the others). Throttled."""
        key = (stored_hash or "", _digest(secret))
        if stored_hash and key in self._verified:
            return True
        pending = self._verifying.get(key) if stored_hash else None
        if pending is None:
            self.throttle.check(user, client)
            self.throttle.started(user, client)  # ended by _argon2, however it ends
            pending = asyncio.ensure_future(self._argon2(key, stored_hash, secret, user, client))
            if stored_hash:
                self._verifying[key] = pending
        return await asyncio.shield(pending)

    async def _argon2(self, key: tuple[str, str], stored_hash: str | None, secret: str, user: str,
                      client: str) -> bool:
        try:
            self.verifications["known" if stored_hash else "unknown"] += 1
            ok = await verify_off_loop(stored_hash, secret)
            if ok:
                if len(self._verified) > 10_000:
                    self._verified.clear()  # bound the memory; a credential is verified again
                self._verified.add(key)
            else:
                self.throttle.failed(user, client)
            return ok
        finally:
            self.throttle.ended(user, client)
            self._verifying.pop(key, None)

    async def _principal(self, name: str, method: str) -> Principal:
        entry = await self._cached(self._users, name, self.store.user)
        if entry.value is None:
            raise AuthenticationFailed(f"user '{name}' is not defined")
        return Principal(entry.value.name, entry.value.groups, entry.value.admin, method)

    # ---- remembered credentials ---------------------------------------------------------------

    def _mac(self, authorization: bytes) -> bytes:
        # keyed: what is kept is no hash of a password that could be guessed offline
        return hashlib.blake2b(authorization, digest_size=16, key=self._mac_key).digest()

    def remembered(self, authorization: bytes) -> Principal | None:
        """The principal an ``Authorization`` header (HTTP basic) authenticated before, while it
        still holds: no security change since (every one forgets them all) and the user record it
        was checked against not older than ``QSG_AUTH_CACHE_S``. None: authenticate it in full."""
        entry = self._remembered.get(self._mac(authorization))
        if entry is None or entry[1] < time.monotonic():
            return None
        return entry[0]

    def remember(self, authorization: bytes, principal: Principal, generation: int) -> None:
        """Keep what ``authenticate`` found for ``authorization`` (an HTTP basic header), unless a
        security change (``generation`` moved on) overtook the check: until the next change, or
        until the user record it was checked against expires from the cache."""
        user = self._users.get(principal.name)
        if principal.method != "basic" or generation != self._generation or user is None or user.value is None:
            return
        if len(self._remembered) > 10_000:
            self._remembered.clear()  # bound the memory; credentials are checked again
        self._remembered[self._mac(authorization)] = (principal, user.expires)

    # ---- authentication ---------------------------------------------------------------------

    async def authenticate(self, headers: dict[str, str], cookies: dict[str, str], client: str = "") -> Principal:
        """The caller of a request: API key (``X-API-Key`` or ``Authorization: Bearer``), HTTP
        basic, or the ``LtpaToken2`` cookie of an IBM REST login. ``client``: the caller's
        address (the failed-authentication throttle)."""
        auth = headers.get("authorization", "")
        scheme, _, value = auth.partition(" ")
        api_key = headers.get("x-api-key") or (value.strip() if scheme.lower() == "bearer" else "")
        if api_key:
            return await self._by_key(api_key, client)
        if scheme.lower() == "basic":
            try:
                user, sep, password = base64.b64decode(value.strip(), validate=True).decode("utf-8").partition(":")
            except (binascii.Error, UnicodeDecodeError):
                raise AuthenticationFailed("malformed basic credentials") from None
            if not sep:
                raise AuthenticationFailed("malformed basic credentials")
            return await self.check_password(user, password, client)
        token = next((v for k, v in cookies.items() if k.startswith(LTPA_COOKIE)), "")
        if token:
            name = await self.qm.cf.tokens.user(_digest(token))
            if name is None:
                raise AuthenticationFailed("the login token has expired or was logged out")
            return await self._principal(name, "token")
        raise AuthenticationFailed("no credentials: use HTTP basic, an API key (X-API-Key) or log in")

    async def check_password(self, user: str, password: str, client: str = "") -> Principal:
        """The user of a name and password; AuthenticationFailed when either is wrong (an unknown
        name takes the same argon2 check as a wrong password)."""
        entry = await self._cached(self._users, user, self.store.user)
        rec = entry.value
        stored = rec.password_hash if rec is not None else None
        if not await self._verify(stored, password, user, client) or rec is None:
            raise AuthenticationFailed(f"wrong user name or password for '{user}'")
        return Principal(rec.name, rec.groups, rec.admin, "basic")

    async def _by_key(self, presented: str, client: str = "") -> Principal:
        parts = split_api_key(presented)
        if parts is None:
            raise AuthenticationFailed("the API key is not valid")
        key_id, secret = parts
        entry = await self._cached(self._keys, key_id, self.store.key)
        rec = entry.value
        stored = rec.key_hash if rec is not None and not rec.revoked else None
        if not await self._verify(stored, secret, "", client) or rec is None or stored is None:
            raise AuthenticationFailed("the API key is not valid or was revoked")
        return await self._principal(rec.user_name, "apikey")

    async def login(self, user: str, password: str, client: str = "") -> str:
        """IBM REST login: a new token (the LtpaToken2 cookie's value), valid on every QM."""
        await self.check_password(user, password, client)
        token = secrets.token_urlsafe(32)
        await self.qm.cf.tokens.issue(_digest(token), user, int(self.qm.settings.ltpa_expiry_s))
        return token

    async def logout(self, cookies: dict[str, str]) -> None:
        for k, v in cookies.items():
            if k.startswith(LTPA_COOKIE):
                await self.qm.cf.tokens.revoke(_digest(v))

    async def live(self, principal: Principal | None) -> Principal | None:
        """``principal`` as the repository has it now (its groups, whether it is an administrator):
        what a new MQOPEN, MQPUT1 or MQSUB of an existing connection is checked against (IBM:
        handles keep the access they were opened with, new opens get the current authority).
        From the user cache, which every security change empties: no SQL but after a change or
        ``QSG_AUTH_CACHE_S``. MQRC_NOT_AUTHORIZED when the user was deleted."""
        if principal is None or not self.enabled:
            return principal
        entry = await self._cached(self._users, principal.name, self.store.user)
        rec = entry.value
        if rec is None:
            raise MQError(MQRC.NOT_AUTHORIZED, f"user '{principal.name}' is no longer defined")
        if rec.groups == principal.groups and rec.admin == principal.admin:
            return principal
        return Principal(rec.name, rec.groups, rec.admin, principal.method)

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
        return await self._known_user(user_id, "alternate")

    async def principal_of(self, user_id: str) -> Principal | None:
        """The principal a message's UserIdentifier names, for work the queue manager does on
        its behalf (the command server runs a command as the user who put it). None with
        authentication off (nothing is checked); MQRC_NOT_AUTHORIZED for a blank or unknown user."""
        if not self.enabled:
            return None
        if not user_id:
            raise MQError(MQRC.NOT_AUTHORIZED, "the request message carries no UserIdentifier")
        return await self._known_user(user_id, "cmdserver")

    async def _known_user(self, user_id: str, source: str) -> Principal:
        """The principal of user ``user_id`` from the security cache, as ``source`` names it
        (an alternate user, the command server's requester); MQRC_NOT_AUTHORIZED when unknown."""
        entry = await self._cached(self._users, user_id, self.store.user)
        if entry.value is None:
            raise MQError(MQRC.NOT_AUTHORIZED, f"{'alternate ' if source == 'alternate' else ''}user '{user_id}' "
                                               "is not defined")
        return Principal(entry.value.name, entry.value.groups, entry.value.admin, source)

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
