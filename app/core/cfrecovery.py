"""What RECOVER CFSTRUCT rebuilds: a structure's backup plus the queue managers' log records.

A persistent message on a shared queue is named for ever by (queue, id): ids only grow, also
across DELETE and re-DEFINE of the queue and across recoveries. That makes replay a matter of
sets rather than of order, so the logs of several queue managers need no common clock:

* a message is there if the backup or a PUT record has it,
* and no GET record (a committed destructive get) names it,
* and no CLEAR or DELETE record of its queue covers its id (``upto``: every message removed
  by that command had an id up to it, and every later one a higher id).

Records older than the backup are harmless to replay for the same reason; recovery reads the
logs from a margin before the backup's window so that a record written late is not missed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

PUT, GET, CLEAR, DELETE = "P", "G", "C", "D"


@dataclass(frozen=True)
class SavedMessage:
    """One persistent message as a backup or a PUT record holds it.

    ``meta`` is the coupling facility's packed metadata (its first field the ordering score),
    ``md`` the MQMD JSON as stored, ``data`` the message data.
    """

    queue: str
    id: int
    meta: str
    md: bytes
    data: bytes

    @property
    def score(self) -> str:
        """The delivery-order score (16 digits, so that text order is numeric order)."""
        return self.meta.split("|", 1)[0]


@dataclass
class RecoveredStructure:
    """The outcome of replay: per queue, its messages in delivery order, and the lowest value
    its last message id may take afterwards."""

    messages: dict[str, list[SavedMessage]] = field(default_factory=dict)
    last_ids: dict[str, int] = field(default_factory=dict)

    @property
    def count(self) -> int:
        return sum(len(v) for v in self.messages.values())


def replay(backup: Iterable[SavedMessage], records: Iterable[dict[str, Any]],
           puts: Iterable[SavedMessage] = ()) -> RecoveredStructure:
    """Apply log ``records`` (dicts with ``o`` = P/G/C/D, ``q`` queue, ``i`` id, ``upto``) and the
    messages of PUT records (``puts``) to a ``backup``; see the module docstring."""
    present: dict[tuple[str, int], SavedMessage] = {}
    gone: set[tuple[str, int]] = set()
    cut: dict[str, int] = {}
    last: dict[str, int] = {}

    def seen(queue: str, ident: int) -> None:
        if ident > last.get(queue, 0):
            last[queue] = ident

    for msg in (*backup, *puts):
        present[(msg.queue, msg.id)] = msg
        seen(msg.queue, msg.id)
    for rec in records:
        op, queue = rec["o"], rec["q"]
        if op == GET:
            gone.add((queue, int(rec["i"])))
            seen(queue, int(rec["i"]))
        elif op in (CLEAR, DELETE):
            upto = int(rec["upto"])
            cut[queue] = max(cut.get(queue, 0), upto)
            seen(queue, upto)

    out = RecoveredStructure(last_ids=last)
    for key, msg in present.items():
        if key in gone or msg.id <= cut.get(msg.queue, 0):
            continue
        out.messages.setdefault(msg.queue, []).append(msg)
    for msgs in out.messages.values():
        msgs.sort(key=lambda m: (m.score, m.id))
    return out
