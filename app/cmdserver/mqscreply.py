"""MQSC command replies as z/OS's command server frames them (IBM "Interpreting the reply
messages from the command server"): a set of reply messages, each holding one line, the first
being CSQN205I with the COUNT of messages in the set (itself included, right-justified in 8
characters), the command preprocessor's RETURN code and the command processor's REASON code,
each as 8 hexadecimal characters."""

from __future__ import annotations

from typing import Any

from app.mqsc.text import value_text

#: RETURN/REASON of a command that failed (z/OS: RETURN=0000000C, REASON=00000008).
FAILED = (0x0C, 0x08)


def object_line(qmgr: str, obj: dict[str, Any]) -> str:
    """One DISPLAY result object as one reply line (CSQM401I and the object's KEY(VALUE) pairs)."""
    pairs = []
    for key, value in obj.items():
        if isinstance(value, bool):
            pairs.append(key if value else f"NO{key}")
        elif isinstance(value, str) and value == key:
            pairs.append(key)
        else:
            pairs.append(f"{key}({value_text(value)})")
    return f"CSQM401I {qmgr} " + " ".join(pairs)


def reply_set(qmgr: str, result: dict[str, Any]) -> list[str]:
    """The reply lines of one command's result (``app.mqsc.executor.run_script``'s shape)."""
    lines = [object_line(str(o.get("QMNAME", qmgr)), o) for o in result.get("objects", [])]
    lines += [str(m) for m in result.get("messages", [])]
    ret, reason = FAILED if result.get("completion_code") else (0, 0)
    head = f"CSQN205I   COUNT={len(lines) + 1:>8}, RETURN={ret:08X}, REASON={reason:08X}"
    return [head, *lines]
