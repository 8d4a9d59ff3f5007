"""Object definitions as the domain sees them: a queue, process or CF structure definition with
its disposition (QSGDISP) and where it lives (a queue manager's page set or the shared
repository). Plain values: the repository stores them, every other part reads them."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

GROUP_LOCATION = "@GROUP"
SHARED_LOCATION = "@SHARED"
OBJECT_CLASS = {"QLOCAL": "QUEUE", "QALIAS": "QUEUE", "QREMOTE": "QUEUE", "QMODEL": "QUEUE", "PROCESS": "PROCESS",
                "CFSTRUCT": "CFSTRUCT", "TOPIC": "TOPIC", "NAMELIST": "NAMELIST", "CHANNEL": "CHANNEL"}


def location_of(qsgdisp: str, qmgr: str) -> str:
    """Where a definition of this disposition lives: a QM's page set or the shared repository."""
    return {"GROUP": GROUP_LOCATION, "SHARED": SHARED_LOCATION}.get(qsgdisp, qmgr)


@dataclass(frozen=True)
class ObjectDef:
    """An object definition as the rest of the product sees it (no ORM state)."""

    objtype: str
    name: str
    qsgdisp: str
    location: str
    attrs: dict[str, Any] = field(default_factory=dict)
    version: int = 1
    altered: datetime | None = None

    @property
    def objclass(self) -> str:
        return OBJECT_CLASS[self.objtype]

    @property
    def owner_qmgr(self) -> str | None:
        """The QM whose page set holds the definition (QMGR, COPY), None for group-wide ones."""
        return None if self.location.startswith("@") else self.location
