"""Unique object names, so tests sharing one group never see each other's queues."""

from __future__ import annotations

import uuid


def uniq(prefix: str = "Q", length: int = 8) -> str:
    """``PREFIX.XXXXXXXX``: a prefix and ``length`` upper-case hex digits (a valid MQ name)."""
    return f"{prefix}.{uuid.uuid4().hex[:length].upper()}"


def uniq_struct(prefix: str = "S") -> str:
    """A unique CF structure name (up to 12 characters, starting with a letter)."""
    return prefix + uuid.uuid4().hex[:6].upper()
