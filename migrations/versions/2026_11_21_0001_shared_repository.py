"""Shared repository: QSG, queue managers and object definitions.

Revision ID: 0001
Revises:
Create Date: 2026-11-21
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "qsg",
        sa.Column("name", sa.String(4), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_qsg"),
    )
    op.create_table(
        "qmgr",
        sa.Column("qsg", sa.String(4), nullable=False),
        sa.Column("name", sa.String(4), nullable=False),
        sa.Column("attrs", sa.JSON(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("altered", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["qsg"], ["qsg.name"], name="fk_qmgr_qsg_qsg"),
        sa.PrimaryKeyConstraint("qsg", "name", name="pk_qmgr"),
    )
    op.create_table(
        "object_def",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("qsg", sa.String(4), nullable=False),
        sa.Column("objclass", sa.String(8), nullable=False),
        sa.Column("objtype", sa.String(8), nullable=False),
        sa.Column("name", sa.String(48), nullable=False),
        sa.Column("qsgdisp", sa.String(6), nullable=False),
        sa.Column("location", sa.String(8), nullable=False),
        sa.Column("attrs", sa.JSON(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("altered", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["qsg"], ["qsg.name"], name="fk_object_def_qsg_qsg"),
        sa.PrimaryKeyConstraint("id", name="pk_object_def"),
        sa.UniqueConstraint("qsg", "objclass", "name", "location", name="uq_object_def_location"),
    )
    op.create_index("ix_object_def_qsg", "object_def", ["qsg"])


def downgrade() -> None:
    op.drop_index("ix_object_def_qsg", table_name="object_def")
    op.drop_table("object_def")
    op.drop_table("qmgr")
    op.drop_table("qsg")
