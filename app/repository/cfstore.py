"""CF structure allocations and backups in the shared repository (as z/OS keeps them in Db2).
Synchronous SQLAlchemy: queue managers call it from a worker thread, never on the put/get path."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine, delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import sessionmaker

from app.repository.models import CFBackupRow, CFStructRow


@dataclass(frozen=True)
class StructureRecord:
    """A structure's current allocation and the status last recorded for it."""

    name: str
    alloc_id: str
    alloc_ns: int
    status: str
    fail_ms: int


@dataclass(frozen=True)
class BackupRecord:
    """One BACKUP CFSTRUCT."""

    name: str
    qmgr: str
    start_ns: int
    log_from_ns: int
    end_ns: int
    path: str
    messages: int
    size: int


class StructureStore:
    """The ``cf_struct`` and ``cf_backup`` tables of one QSG."""

    def __init__(self, engine: Engine, qsg: str) -> None:
        self.qsg = qsg
        self._sessions = sessionmaker(engine, expire_on_commit=False)

    def structure(self, name: str) -> StructureRecord | None:
        with self._sessions.begin() as s:
            row = s.get(CFStructRow, (self.qsg, name))
            return _structure(row) if row else None

    def allocated(self, name: str, alloc_id: str, alloc_ns: int) -> StructureRecord:
        """Record a new allocation (first use, or an empty reallocation); a concurrent first
        allocation by another queue manager wins when it was recorded first."""
        try:
            with self._sessions.begin() as s:
                row = s.get(CFStructRow, (self.qsg, name))
                if row is None:
                    row = CFStructRow(qsg=self.qsg, name=name)
                    s.add(row)
                row.alloc_id, row.alloc_ns, row.status, row.fail_ms = alloc_id, alloc_ns, "ACTIVE", 0
                return _structure(row)
        except IntegrityError:
            found = self.structure(name)
            assert found is not None
            return found

    def set_status(self, name: str, status: str, fail_ms: int | None = None) -> None:
        with self._sessions.begin() as s:
            row = s.get(CFStructRow, (self.qsg, name))
            if row is not None:
                row.status = status
                if fail_ms is not None:
                    row.fail_ms = fail_ms

    def forget(self, name: str) -> None:
        """DELETE CFSTRUCT: the structure, and its backups' records, are gone."""
        with self._sessions.begin() as s:
            s.execute(delete(CFStructRow).where(CFStructRow.qsg == self.qsg, CFStructRow.name == name))
            s.execute(delete(CFBackupRow).where(CFBackupRow.qsg == self.qsg, CFBackupRow.name == name))

    def add_backup(self, b: BackupRecord) -> None:
        with self._sessions.begin() as s:
            s.add(CFBackupRow(qsg=self.qsg, name=b.name, qmgr=b.qmgr, start_ns=b.start_ns,
                              log_from_ns=b.log_from_ns, end_ns=b.end_ns, path=b.path,
                              messages=b.messages, size=b.size))

    def latest_backup(self, name: str) -> BackupRecord | None:
        with self._sessions.begin() as s:
            row = s.scalars(select(CFBackupRow).where(CFBackupRow.qsg == self.qsg, CFBackupRow.name == name)
                            .order_by(CFBackupRow.start_ns.desc()).limit(1)).first()
            return _backup(row) if row else None


def _structure(row: CFStructRow) -> StructureRecord:
    return StructureRecord(row.name, row.alloc_id, row.alloc_ns, row.status, row.fail_ms)


def _backup(row: CFBackupRow) -> BackupRecord:
    return BackupRecord(row.name, row.qmgr, row.start_ns, row.log_from_ns, row.end_ns, row.path,
                        row.messages, row.size)
