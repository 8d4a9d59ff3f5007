"""CF structure allocation, status and backups (BACKUP / RECOVER CFSTRUCT).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-21
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "cf_struct",
        sa.Column("qsg", sa.String(4), nullable=False),
        sa.Column("name", sa.String(12), nullable=False),
        sa.Column("alloc_id", sa.String(32), nullable=False),
        sa.Column("alloc_ns", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("fail_ms", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["qsg"], ["qsg.name"], name="fk_cf_struct_qsg_qsg"),
        sa.PrimaryKeyConstraint("qsg", "name", name="pk_cf_struct"),
    )
    op.create_table(
        "cf_backup",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("qsg", sa.String(4), nullable=False),
        sa.Column("name", sa.String(12), nullable=False),
        sa.Column("qmgr", sa.String(4), nullable=False),
        sa.Column("start_ns", sa.BigInteger(), nullable=False),
        sa.Column("log_from_ns", sa.BigInteger(), nullable=False),
        sa.Column("end_ns", sa.BigInteger(), nullable=False),
        sa.Column("path", sa.String(1024), nullable=False),
        sa.Column("messages", sa.Integer(), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["qsg"], ["qsg.name"], name="fk_cf_backup_qsg_qsg"),
        sa.PrimaryKeyConstraint("id", name="pk_cf_backup"),
    )
    op.create_index("ix_cf_backup_qsg", "cf_backup", ["qsg"])


def downgrade() -> None:
    op.drop_index("ix_cf_backup_qsg", table_name="cf_backup")
    op.drop_table("cf_backup")
    op.drop_table("cf_struct")
