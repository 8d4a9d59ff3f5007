"""Defining CF structures and shared queues through MQSC (on QM1 unless told)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.support.names import uniq


def shared_q(group: Any, attrs: str = "", struct: str = "APPL1", *, prefix: str = "SQ", qm: str = "QM1",
             length: int = 8, run: Callable[[str, str], object] | None = None) -> str:
    """Define a uniquely named shared queue (QSGDISP(SHARED) in CFSTRUCT ``struct``) with the
    extra MQSC keywords ``attrs``; return its name. ``run(qm, script)`` runs the MQSC (default
    ``group.mqsc_ok``; tests with authentication pass their own)."""
    q = uniq(prefix, length)
    (run or group.mqsc_ok)(qm, f"DEFINE QLOCAL({q}) QSGDISP(SHARED) CFSTRUCT({struct}) {attrs}".rstrip())
    return q


def mqsc_keywords(**attrs: object) -> str:
    """``KEY(value)`` keywords from keyword arguments, in order."""
    return " ".join(f"{k}({v})" for k, v in attrs.items())


def define_shared(group: Any, *queues_by_struct: tuple[str, str], qm: str = "QM1") -> None:
    """Define each structure (RECOVER(YES)) and each (struct, queue) as a persistent-by-default
    shared queue, in one script."""
    script = [f"DEFINE CFSTRUCT({struct}) RECOVER(YES)" for struct in sorted({s for s, _ in queues_by_struct})]
    script += [f"DEFINE QLOCAL({q}) QSGDISP(SHARED) CFSTRUCT({struct}) DEFPSIST(YES)" for struct, q in queues_by_struct]
    group.mqsc_ok(qm, "\n".join(script))
