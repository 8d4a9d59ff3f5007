"""Message expiry rules (docs/ibm-rules.md §4): lifetimes in tenths of a second, what remains
on MQGET, and the expiration report a discarded message asked for."""

from __future__ import annotations

from typing import Any

from app.core.reasons import MQFB
from app.core.reports import report_md

UNLIMITED = -1
MQLONG_MAX = 2_147_483_647  # the largest Expiry an MQMD holds
REPORT_DATA_BYTES = 100  # EXPIRATION_WITH_DATA carries the first 100 bytes


def expiry_at(expiry_tenths: int, now_ms: int) -> int:
    """When a message put now expires, in ms since the epoch; 0 for MQEI_UNLIMITED."""
    return 0 if expiry_tenths == UNLIMITED else now_ms + expiry_tenths * 100


def remaining_tenths(expiry_at_ms: int, now_ms: int) -> int:
    """md.expiry on MQGET: the lifetime that remains, always > 0 for a message that is returned
    (an expired one never is), or MQEI_UNLIMITED."""
    if not expiry_at_ms:
        return UNLIMITED
    # Held to an MQLONG (the MQMD's Expiry field): a message stored by an older version with an
    # expiry beyond it (2**64 tenths) must still be answered, and answered as IBM could.
    return min(MQLONG_MAX, max(1, -((now_ms - expiry_at_ms) // 100)))


def expiration_report(original: dict[str, Any], new_msg_id: str, now_ms: int = 0) -> dict[str, Any]:
    """The MQMD of the expiration report for an expired message (IBM's report rules, see
    ``app.core.reports.report_md``): CorrelId the expired MsgId (or its CorrelId with
    MQRO_PASS_CORREL_ID), MsgId new unless MQRO_PASS_MSG_ID, the original's priority and
    persistence, unlimited expiry (an expired message has none left to pass on)."""
    md = report_md(original, MQFB.EXPIRATION, new_msg_id, now_ms)
    md["expiry"] = UNLIMITED
    return md
