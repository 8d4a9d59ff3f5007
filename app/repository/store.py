"""The shared repository port: reading and changing definitions in SQL.

Synchronous (SQLAlchemy); the queue manager calls it from a worker thread and never on the
put/get path. Concurrent changes from several QMs are made safe by the unique key on an
object's location (two DEFINEs of one name: one wins, the other gets OBJECT_ALREADY_EXISTS)
and by the version column (two ALTERs of one object: the loser re-reads and re-applies).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import Engine, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.orm.exc import StaleDataError

from app.core.errors import MQError
from app.core.objects import GROUP_LOCATION, SHARED_LOCATION, ObjectDef
from app.core.reasons import MQRC
from app.repository.models import ObjectRow, QMgrRow, QSGRow, utcnow

R = TypeVar("R")


def _to_def(row: ObjectRow) -> ObjectDef:
    """The domain value of a stored definition (no ORM state)."""
    return ObjectDef(row.objtype, row.name, row.qsgdisp, row.location, dict(row.attrs), row.version, row.altered)


class Repository:
    """Definitions of one QSG in the shared repository."""

    def __init__(self, engine: Engine, qsg: str) -> None:
        self.engine = engine
        self.qsg = qsg
        self._sessions = sessionmaker(engine, expire_on_commit=False)
        #: When a definition is made or altered (ALTDATE/ALTTIME): a queue manager gives its group
        #: clock, so the stamps of every queue manager's changes are on one clock.
        self.now: Callable[[], datetime] = utcnow

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A transaction (an unreachable database surfaces as MQRC_DB2_NOT_AVAILABLE at the edge)."""
        with self._sessions.begin() as session:
            yield session

    # ---- queue managers ----------------------------------------------------------------

    def register_qmgr(self, qmgr: str, default_attrs: dict[str, Any]) -> dict[str, Any]:
        """Add the QSG and queue manager when missing; return the QM's attributes with defaults filled."""
        for _ in range(3):
            try:
                with self.session() as s:
                    if s.get(QSGRow, self.qsg) is None:
                        s.add(QSGRow(name=self.qsg))
                        s.flush()
                    row = s.get(QMgrRow, (self.qsg, qmgr))
                    if row is None:
                        row = QMgrRow(qsg=self.qsg, name=qmgr, attrs=dict(default_attrs))
                        s.add(row)
                    elif set(default_attrs) - set(row.attrs):
                        # a newer release knows more attributes: add their defaults
                        row.attrs = {**default_attrs, **row.attrs}
                    return dict(row.attrs)
            except IntegrityError:
                continue  # another QM registered the QSG at the same moment: read again
        raise MQError(MQRC.UNEXPECTED_ERROR, f"could not register {qmgr} in {self.qsg}")

    def qmgr_names(self) -> list[str]:
        with self.session() as s:
            return list(s.scalars(select(QMgrRow.name).where(QMgrRow.qsg == self.qsg).order_by(QMgrRow.name)))

    def qmgr_attrs(self, qmgr: str) -> dict[str, Any]:
        with self.session() as s:
            row = s.get(QMgrRow, (self.qsg, qmgr))
            if row is None:
                raise MQError(MQRC.Q_MGR_NAME_ERROR, f"queue manager {qmgr} is not a member of {self.qsg}")
            return dict(row.attrs)

    def alter_qmgr(self, qmgr: str, change: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
        """Apply ``change`` to the QM's attributes with optimistic locking; return the new ones."""
        return self._retry(lambda s: self._alter_qmgr(s, qmgr, change))

    def _alter_qmgr(self, s: Session, qmgr: str, change: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
        row = s.get(QMgrRow, (self.qsg, qmgr))
        if row is None:
            raise MQError(MQRC.Q_MGR_NAME_ERROR, f"queue manager {qmgr} is not a member of {self.qsg}")
        row.attrs = change(dict(row.attrs))
        row.altered = self.now()
        return dict(row.attrs)

    # ---- object definitions -------------------------------------------------------------

    def visible_to(self, qmgr: str, objclass: str | None = None, name: str | None = None) -> list[ObjectDef]:
        """Definitions a QM can see: group-wide ones and those on its own page set."""
        with self.session() as s:
            q = select(ObjectRow).where(
                ObjectRow.qsg == self.qsg,
                or_(ObjectRow.location == qmgr, ObjectRow.location.in_([GROUP_LOCATION, SHARED_LOCATION])),
            )
            if objclass:
                q = q.where(ObjectRow.objclass == objclass)
            if name:
                q = q.where(ObjectRow.name == name)
            return [_to_def(r) for r in s.scalars(q.order_by(ObjectRow.name, ObjectRow.location))]

    def find(self, objclass: str, name: str, location: str) -> ObjectDef | None:
        with self.session() as s:
            row = self._row(s, objclass, name, location)
            return _to_def(row) if row else None

    def copies_of(self, objclass: str, name: str) -> list[ObjectDef]:
        """Every QSGDISP(COPY) definition of a group object, on every QM."""
        with self.session() as s:
            q = select(ObjectRow).where(ObjectRow.qsg == self.qsg, ObjectRow.objclass == objclass,
                                        ObjectRow.name == name, ObjectRow.qsgdisp == "COPY")
            return [_to_def(r) for r in s.scalars(q)]

    def group_objects(self) -> list[ObjectDef]:
        with self.session() as s:
            q = select(ObjectRow).where(ObjectRow.qsg == self.qsg, ObjectRow.location == GROUP_LOCATION)
            return [_to_def(r) for r in s.scalars(q)]

    def insert(self, obj: ObjectDef) -> ObjectDef:
        """Add a definition; MQRC_OBJECT_ALREADY_EXISTS when its location already holds the name."""
        try:
            with self.session() as s:
                row = ObjectRow(qsg=self.qsg, objclass=obj.objclass, objtype=obj.objtype, name=obj.name,
                                qsgdisp=obj.qsgdisp, location=obj.location, attrs=dict(obj.attrs))
                row.created = row.altered = self.now()
                s.add(row)
                s.flush()
                return _to_def(row)
        except IntegrityError as exc:
            raise MQError(MQRC.OBJECT_ALREADY_EXISTS,
                          f"{obj.objclass} {obj.name} already exists with QSGDISP {obj.qsgdisp}") from exc

    def update(self, obj: ObjectDef, change: Callable[[ObjectDef], dict[str, Any]]) -> ObjectDef:
        """Replace a definition's type-specific attributes with ``change(current)``.

        Re-reads and re-applies when another QM changed the object meanwhile (version check).
        """
        def attempt(s: Session) -> ObjectDef:
            row = self._row(s, obj.objclass, obj.name, obj.location)
            if row is None:
                raise MQError(MQRC.UNKNOWN_OBJECT_NAME, f"{obj.objtype}({obj.name}) QSGDISP({obj.qsgdisp}) not found")
            row.attrs = change(_to_def(row))
            row.objtype = obj.objtype
            row.altered = self.now()
            s.flush()
            return _to_def(row)

        return self._retry(attempt)

    def upsert(self, obj: ObjectDef) -> ObjectDef:
        """Create or replace (DEFINE ... REPLACE and the generated COPY definitions)."""
        existing = self.find(obj.objclass, obj.name, obj.location)
        if existing is None:
            try:
                return self.insert(obj)
            except MQError:
                pass  # defined concurrently: replace it below
        return self.update(obj, lambda _cur: dict(obj.attrs))

    def delete(self, obj: ObjectDef) -> bool:
        """Remove a definition; False when it was already gone."""
        with self.session() as s:
            row = self._row(s, obj.objclass, obj.name, obj.location)
            if row is None:
                return False
            s.delete(row)
            return True

    def _row(self, s: Session, objclass: str, name: str, location: str) -> ObjectRow | None:
        q = select(ObjectRow).where(ObjectRow.qsg == self.qsg, ObjectRow.objclass == objclass,
                                    ObjectRow.name == name, ObjectRow.location == location)
        return s.scalars(q).first()

    def _retry(self, attempt: Callable[[Session], R], tries: int = 10) -> R:
        for _ in range(tries):
            try:
                with self.session() as s:
                    return attempt(s)
            except StaleDataError as exc:
                last = exc  # another QM altered the object first: read it again and re-apply
                continue
        raise MQError(MQRC.MQRCCF_COMMAND_FAILED, f"the repository stayed busy: {last}")
