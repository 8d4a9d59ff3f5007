"""Tables of the shared repository (the Db2 of z/OS).

Object definitions of every disposition are kept here:

* ``SHARED`` and ``GROUP`` definitions belong to the QSG (location ``@SHARED`` / ``@GROUP``);
* ``QMGR`` and ``COPY`` definitions belong to one queue manager (location = its name), which
  stands in for that queue manager's page set zero. The unique key on (qsg, class, name,
  location) gives z/OS's namespace rules: one queue of a name per page set, whatever its type,
  while a shared or group queue may carry the same name as a private one.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    ForeignKeyConstraint,
    Integer,
    MetaData,
    String,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class QSGRow(Base):
    """A queue-sharing group."""

    __tablename__ = "qsg"

    name: Mapped[str] = mapped_column(String(4), primary_key=True)
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class QMgrRow(Base):
    """A queue manager of a QSG with its QMGR attributes (PERFMEV, TRIGINT, ...)."""

    __tablename__ = "qmgr"
    __table_args__ = (ForeignKeyConstraint(["qsg"], ["qsg.name"]),)

    qsg: Mapped[str] = mapped_column(String(4), primary_key=True)
    name: Mapped[str] = mapped_column(String(4), primary_key=True)
    attrs: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    version: Mapped[int] = mapped_column(Integer, default=1)
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    altered: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    __mapper_args__ = {"version_id_col": version}


class ObjectRow(Base):
    """One object definition: QLOCAL, QALIAS, PROCESS or CFSTRUCT."""

    __tablename__ = "object_def"
    __table_args__ = (
        UniqueConstraint("qsg", "objclass", "name", "location", name="uq_object_def_location"),
        ForeignKeyConstraint(["qsg"], ["qsg.name"]),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    qsg: Mapped[str] = mapped_column(String(4), index=True)
    objclass: Mapped[str] = mapped_column(String(8))  # QUEUE, PROCESS, CFSTRUCT
    objtype: Mapped[str] = mapped_column(String(8))  # QLOCAL, QALIAS, PROCESS, CFSTRUCT
    name: Mapped[str] = mapped_column(String(48))
    qsgdisp: Mapped[str] = mapped_column(String(6))  # QMGR, COPY, GROUP, SHARED
    location: Mapped[str] = mapped_column(String(8))  # the QM's name, or @GROUP / @SHARED
    attrs: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    version: Mapped[int] = mapped_column(Integer, default=1)
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    altered: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    __mapper_args__ = {"version_id_col": version}


# ---- security (docs/howto/security.md) --------------------------------------------------


class UserRow(Base):
    """A user of the REST APIs (the RACF user ID of z/OS): its password hash (argon2), whether
    it is an administrator (every right), and the groups it belongs to."""

    __tablename__ = "qsg_user"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    password_hash: Mapped[str | None] = mapped_column(String(255), nullable=True)
    admin: Mapped[bool] = mapped_column(Boolean, default=False)
    groups: Mapped[list[str]] = mapped_column(JSON, default=list)
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ApiKeyRow(Base):
    """An API key of a user: ``qsg_<key_id>_<secret>``; only the secret's argon2 hash is kept."""

    __tablename__ = "api_key"
    __table_args__ = (ForeignKeyConstraint(["user_name"], ["qsg_user.name"], ondelete="CASCADE"),)

    key_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    user_name: Mapped[str] = mapped_column(String(64), index=True)
    key_hash: Mapped[str] = mapped_column(String(255))
    revoked: Mapped[bool] = mapped_column(Boolean, default=False)
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class AuthRecRow(Base):
    """An authority record (SET AUTHREC): rights of one principal or group on a profile."""

    __tablename__ = "authrec"
    __table_args__ = (
        UniqueConstraint("qsg", "objtype", "profile", "entity_type", "entity", name="uq_authrec_entity"),
        ForeignKeyConstraint(["qsg"], ["qsg.name"]),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    qsg: Mapped[str] = mapped_column(String(4), index=True)
    objtype: Mapped[str] = mapped_column(String(8))  # QUEUE, QMGR
    profile: Mapped[str] = mapped_column(String(48))  # a name or a generic name ending in *
    entity_type: Mapped[str] = mapped_column(String(9))  # PRINCIPAL or GROUP
    entity: Mapped[str] = mapped_column(String(64))
    rights: Mapped[list[str]] = mapped_column(JSON, default=list)
    altered: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class CFStructRow(Base):
    """A CF structure's allocation and status (z/OS keeps these in Db2 too): the allocation id
    tells a queue manager that a structure missing from Redis was there before, i.e. failed."""

    __tablename__ = "cf_struct"
    __table_args__ = (ForeignKeyConstraint(["qsg"], ["qsg.name"]),)

    qsg: Mapped[str] = mapped_column(String(4), primary_key=True)
    name: Mapped[str] = mapped_column(String(12), primary_key=True)
    alloc_id: Mapped[str] = mapped_column(String(32))
    alloc_ns: Mapped[int] = mapped_column(BigInteger)  # when this allocation was made
    status: Mapped[str] = mapped_column(String(10), default="ACTIVE")  # ACTIVE, FAILED, RECOVERING
    fail_ms: Mapped[int] = mapped_column(BigInteger, default=0)


class CFBackupRow(Base):
    """One BACKUP CFSTRUCT: which queue manager took it, when, and where its file is."""

    __tablename__ = "cf_backup"
    __table_args__ = (ForeignKeyConstraint(["qsg"], ["qsg.name"]),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    qsg: Mapped[str] = mapped_column(String(4), index=True)
    name: Mapped[str] = mapped_column(String(12))
    qmgr: Mapped[str] = mapped_column(String(4))
    start_ns: Mapped[int] = mapped_column(BigInteger)  # the backup started (wall clock, ns)
    log_from_ns: Mapped[int] = mapped_column(BigInteger)  # recovery reads the logs from here
    end_ns: Mapped[int] = mapped_column(BigInteger)
    path: Mapped[str] = mapped_column(String(1024))
    messages: Mapped[int] = mapped_column(Integer)
    size: Mapped[int] = mapped_column(BigInteger)
