"""MQSC responses as runmqsc prints them (``qsg mqsc`` and the console share this layout)."""

from __future__ import annotations

from typing import Any


def value_text(value: Any) -> str:
    """An attribute value as MQSC shows it between parentheses (a list: its items, comma-separated)."""
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def format_result(result: dict[str, Any]) -> str:
    """One command's response in runmqsc's layout: the command, its objects as KEY(VALUE), messages."""
    lines = [f"     {result['command']}"]
    for obj in result.get("objects", []):
        pairs = [f"{k}({value_text(v)})" if not (isinstance(v, str) and v == k) else k for k, v in obj.items()]
        for i in range(0, len(pairs), 2):
            lines.append("   " + "".join(p.ljust(40) for p in pairs[i:i + 2]).rstrip())
    for msg in result.get("messages", []):
        lines.append(msg)
    if result.get("completion_code"):
        lines.append(f"reason {result['reason']} ({result.get('reason_name', '')})")
    return "\n".join(lines)
