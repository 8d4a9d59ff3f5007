"""Security: users, API keys and authority records (docs/howto/security.md).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21
"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "qsg_user",
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("password_hash", sa.String(255), nullable=True),
        sa.Column("admin", sa.Boolean(), nullable=False),
        sa.Column("groups", sa.JSON(), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_qsg_user"),
    )
    op.create_table(
        "api_key",
        sa.Column("key_id", sa.String(32), nullable=False),
        sa.Column("user_name", sa.String(64), nullable=False),
        sa.Column("key_hash", sa.String(255), nullable=False),
        sa.Column("revoked", sa.Boolean(), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["user_name"], ["qsg_user.name"], name="fk_api_key_user_name_qsg_user",
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("key_id", name="pk_api_key"),
    )
    op.create_index("ix_api_key_user_name", "api_key", ["user_name"])
    op.create_table(
        "authrec",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("qsg", sa.String(4), nullable=False),
        sa.Column("objtype", sa.String(8), nullable=False),
        sa.Column("profile", sa.String(48), nullable=False),
        sa.Column("entity_type", sa.String(9), nullable=False),
        sa.Column("entity", sa.String(64), nullable=False),
        sa.Column("rights", sa.JSON(), nullable=False),
        sa.Column("altered", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["qsg"], ["qsg.name"], name="fk_authrec_qsg_qsg"),
        sa.PrimaryKeyConstraint("id", name="pk_authrec"),
        sa.UniqueConstraint("qsg", "objtype", "profile", "entity_type", "entity", name="uq_authrec_entity"),
    )
    op.create_index("ix_authrec_qsg", "authrec", ["qsg"])


def downgrade() -> None:
    op.drop_index("ix_authrec_qsg", table_name="authrec")
    op.drop_table("authrec")
    op.drop_index("ix_api_key_user_name", table_name="api_key")
    op.drop_table("api_key")
    op.drop_table("qsg_user")
