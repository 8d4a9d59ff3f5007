"""Users, API keys and authority records in the shared repository (synchronous SQLAlchemy;
queue managers call it from a worker thread, never on the put/get path)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine, Select, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import sessionmaker

from app.core.errors import MQError
from app.core.reasons import MQRC
from app.core.rights import AuthRec
from app.repository.models import ApiKeyRow, AuthRecRow, QSGRow, UserRow, utcnow
from app.repository.passwords import hash_secret, new_api_key


@dataclass(frozen=True)
class UserRecord:
    name: str
    password_hash: str | None
    admin: bool
    groups: frozenset[str]


@dataclass(frozen=True)
class KeyRecord:
    key_id: str
    user_name: str
    key_hash: str
    revoked: bool


class UserNotFound(LookupError):
    pass


class SecurityStore:
    """Security data: users and keys are global to the repository, authority records per QSG."""

    def __init__(self, engine: Engine, qsg: str = "") -> None:
        self.engine = engine
        self.qsg = qsg
        self._sessions = sessionmaker(engine, expire_on_commit=False)

    # ---- users and keys (the CLI, and authentication on a cache miss) ------------------------

    def qsgs(self) -> list[str]:
        """The queue-sharing groups of the repository (users and keys are valid in all of them)."""
        with self._sessions.begin() as s:
            return list(s.scalars(select(QSGRow.name).order_by(QSGRow.name)))

    def add_user(self, name: str, password: str | None, *, admin: bool = False, groups: list[str] | None = None,
                 replace: bool = False) -> None:
        with self._sessions.begin() as s:
            row = s.get(UserRow, name)
            if row is not None and not replace:
                raise ValueError(f"user '{name}' already exists")
            if row is None:
                row = UserRow(name=name, groups=[], admin=False)
                s.add(row)
            if password is not None:
                row.password_hash = hash_secret(password)
            row.admin = admin
            row.groups = sorted(set(groups or []))

    def delete_user(self, name: str) -> bool:
        with self._sessions.begin() as s:
            row = s.get(UserRow, name)
            if row is None:
                return False
            for key in s.scalars(select(ApiKeyRow).where(ApiKeyRow.user_name == name)):
                s.delete(key)
            s.delete(row)
            return True

    def users(self) -> list[UserRecord]:
        with self._sessions.begin() as s:
            return [_user(r) for r in s.scalars(select(UserRow).order_by(UserRow.name))]

    def user(self, name: str) -> UserRecord | None:
        with self._sessions.begin() as s:
            row = s.get(UserRow, name)
            return _user(row) if row else None

    def new_key(self, user_name: str) -> str:
        """A new API key for the user; the key itself is returned once and never stored."""
        key_id, secret, key = new_api_key()
        with self._sessions.begin() as s:
            if s.get(UserRow, user_name) is None:
                raise UserNotFound(user_name)
            s.add(ApiKeyRow(key_id=key_id, user_name=user_name, key_hash=hash_secret(secret), revoked=False))
        return key

    def revoke_keys(self, user_name: str, key_id: str | None = None) -> int:
        """Revoke one key (by its id, the part after ``qsg_``) or every key of the user."""
        with self._sessions.begin() as s:
            q = select(ApiKeyRow).where(ApiKeyRow.user_name == user_name, ApiKeyRow.revoked.is_(False))
            if key_id:
                q = q.where(ApiKeyRow.key_id == key_id)
            rows = list(s.scalars(q))
            for row in rows:
                row.revoked = True
            return len(rows)

    def key(self, key_id: str) -> KeyRecord | None:
        with self._sessions.begin() as s:
            row = s.get(ApiKeyRow, key_id)
            return KeyRecord(row.key_id, row.user_name, row.key_hash, row.revoked) if row else None

    # ---- authority records (SET/DELETE/DISPLAY AUTHREC) -------------------------------------

    def authrecs(self) -> list[AuthRec]:
        with self._sessions.begin() as s:
            q = select(AuthRecRow).where(AuthRecRow.qsg == self.qsg).order_by(AuthRecRow.objtype, AuthRecRow.profile,
                                                                              AuthRecRow.entity_type, AuthRecRow.entity)
            return [AuthRec(r.objtype, r.profile, r.entity_type, r.entity, frozenset(r.rights)) for r in s.scalars(q)]

    def set_authrec(self, objtype: str, profile: str, entity_type: str, entity: str, add: set[str],
                    remove: set[str]) -> AuthRec:
        for _ in range(3):
            try:
                with self._sessions.begin() as s:
                    row = s.scalars(self._rec_query(objtype, profile, entity_type, entity)).first()
                    if row is None:
                        row = AuthRecRow(qsg=self.qsg, objtype=objtype, profile=profile, entity_type=entity_type,
                                         entity=entity, rights=[])
                        s.add(row)
                    row.rights = sorted((set(row.rights) | add) - remove)
                    row.altered = utcnow()
                    s.flush()
                    return AuthRec(objtype, profile, entity_type, entity, frozenset(row.rights))
            except IntegrityError:
                continue  # created concurrently by another QM: apply the change to it
        raise MQError(MQRC.MQRCCF_COMMAND_FAILED, "the repository stayed busy")

    def delete_authrec(self, objtype: str, profile: str, entity_type: str, entity: str) -> bool:
        with self._sessions.begin() as s:
            row = s.scalars(self._rec_query(objtype, profile, entity_type, entity)).first()
            if row is None:
                return False
            s.delete(row)
            return True

    def _rec_query(self, objtype: str, profile: str, entity_type: str, entity: str) -> Select[AuthRecRow]:
        return select(AuthRecRow).where(AuthRecRow.qsg == self.qsg, AuthRecRow.objtype == objtype,
                                        AuthRecRow.profile == profile, AuthRecRow.entity_type == entity_type,
                                        AuthRecRow.entity == entity)


def _user(row: UserRow) -> UserRecord:
    return UserRecord(row.name, row.password_hash, bool(row.admin), frozenset(row.groups or []))
