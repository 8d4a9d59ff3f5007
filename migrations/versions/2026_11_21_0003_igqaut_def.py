"""IGQAUT's default is spelled DEF, as in IBM's ALTER QMGR (it was stored as DEFAULT).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-21
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_qmgr = sa.table("qmgr", sa.column("qsg", sa.String), sa.column("name", sa.String), sa.column("attrs", sa.JSON))


def _respell(old: str, new: str) -> None:
    bind = op.get_bind()
    for qsg, name, attrs in bind.execute(sa.select(_qmgr.c.qsg, _qmgr.c.name, _qmgr.c.attrs)).all():
        if isinstance(attrs, dict) and attrs.get("IGQAUT") == old:
            bind.execute(_qmgr.update().where(_qmgr.c.qsg == qsg, _qmgr.c.name == name)
                         .values(attrs={**attrs, "IGQAUT": new}))


def upgrade() -> None:
    _respell("DEFAULT", "DEF")


def downgrade() -> None:
    _respell("DEF", "DEFAULT")
