"""Each queue manager's cache of the definitions it can see, and MQOPEN name resolution.

The messaging path reads only this cache (docs/design.md principle 2); a change made through any QM
reaches every QM's cache through the definitions broadcast (``app.qmgr.broadcast``).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Protocol

from app.cf.keys import QueueLocation, private_tag, shared_tag
from app.core.errors import MQError
from app.core.objects import GROUP_LOCATION, ObjectDef
from app.core.reasons import MQRC

# Attributes the coupling facility needs on every put/get; written into the queue's ``ctl`` hash.
RUNTIME_ATTRS = ("PUT", "GET", "MAXDEPTH", "MAXMSGL", "MSGDLVSQ", "DEFPRTY", "USAGE", "QDEPTHHI", "QDEPTHLO",
                 "QSVCINT")
# Performance event switches: the queue manager flips them itself when an event fires (in the
# CF, atomically with the put or get), so the CF's copy is the live one.
EVENT_SWITCHES = ("QDPHIEV", "QDPLOEV", "QDPMAXEV", "QSVCIEV")
MAX_SHARED_MSG_WITHOUT_OFFLOAD = 63 * 1024


class StructureDefinitions(Protocol):
    """What names a structure's place: the group and its CFSTRUCT definitions (a QM's cache)."""

    qsg: str

    def cfstruct(self, name: str) -> ObjectDef | None: ...


def structure_tag(qsg: str, name: str, cfstruct: ObjectDef | None) -> str:
    """The tag of CF structure ``name`` as its definition places it: with the definition's
    HASHTAG (an emulator addition; blank, or no definition: the structure's own name)."""
    hashtag = str(cfstruct.attrs.get("HASHTAG", "") or "").strip() if cfstruct is not None else ""
    return shared_tag(qsg, name, hashtag)


def queue_location(defs: StructureDefinitions, obj: ObjectDef) -> QueueLocation:
    """Where a local queue's messages live: its CF structure (SHARED, placed by the structure's
    definition) or its QM's space."""
    if obj.qsgdisp == "SHARED":
        name = str(obj.attrs["CFSTRUCT"])
        return QueueLocation(structure_tag(defs.qsg, name, defs.cfstruct(name)), obj.name)
    if obj.owner_qmgr is None:
        raise ValueError(f"a {obj.qsgdisp} definition holds no messages")
    return QueueLocation(private_tag(defs.qsg, obj.owner_qmgr), obj.name)


def switches_to_set(set_switches: bool | Collection[str]) -> frozenset[str]:
    """The event switches a definition change sets as defined: all four (``True``: DEFINE
    REPLACE), the ones an ALTER named (a collection of names), or none (``False``)."""
    if set_switches is True:
        return frozenset(EVENT_SWITCHES)
    if not set_switches:
        return frozenset()
    return frozenset(set_switches) & frozenset(EVENT_SWITCHES)


def runtime_attrs(obj: ObjectDef, cfstruct: ObjectDef | None, *,
                  set_switches: bool | Collection[str] = False) -> dict[str, str | int]:
    """The ``ctl`` fields of a local queue.

    The event switches are written only where the queue has none yet, except those
    ``set_switches`` names (all four for DEFINE REPLACE, ``True``; the ones an ALTER named): the
    queue manager toggles QDPHIEV/QDPLOEV/QDPMAXEV/QSVCIEV itself when an event fires
    (docs/ibm-rules.md §1.4 and §2.2), and re-applying a definition - or an ALTER of another switch or
    attribute - must not undo those toggles.

    ``offload`` says whether messages over 63 KB may be stored: always for private queues; for
    shared queues only when the structure is CFLEVEL(4) or higher, as on z/OS (the body then
    goes to separate Redis keys, the counterpart of Db2 / SMDS offload).
    """
    out: dict[str, str | int] = {k.lower(): obj.attrs[k] for k in RUNTIME_ATTRS}
    # triggering: the CF counts messages for a queue whose TRIGGER is on (docs/ibm-rules.md §3.1)
    out.update(trigger="1" if obj.attrs.get("TRIGGER") else "0", trigtype=obj.attrs["TRIGTYPE"],
               trigmpri=obj.attrs["TRIGMPRI"])
    named = switches_to_set(set_switches)
    for k in EVENT_SWITCHES:
        out[("" if k in named else "?") + k.lower()] = obj.attrs[k]
    if obj.qsgdisp == "SHARED":
        level = int(cfstruct.attrs.get("CFLEVEL", 3)) if cfstruct else 0
        out["offload"] = "1" if level >= 4 else "0"
    else:
        out["offload"] = "1"
    return out


def recoverable(cfstruct: ObjectDef | None) -> bool:
    """Whether a CF structure holds persistent messages, logged for RECOVER CFSTRUCT: RECOVER(YES)."""
    return cfstruct is not None and cfstruct.attrs.get("RECOVER") == "YES"


@dataclass(frozen=True)
class ResolvedQueue:
    """The result of resolving an MQOPEN object name to the local queue that holds messages."""

    opened: ObjectDef  # what was named (a local queue or an alias)
    base: ObjectDef  # the local queue it resolves to
    location: QueueLocation
    # Intra-group queuing: (RemoteQName, RemoteQMgrName) when the queue is another QM's of the
    # group; ``base`` is then SYSTEM.QSG.TRANSMIT.QUEUE.
    remote: tuple[str, str] | None = None


class DefinitionCache:
    """The definitions one QM sees: group-wide (SHARED, GROUP) and its own (QMGR, COPY)."""

    def __init__(self, qsg: str, qmgr: str) -> None:
        self.qsg = qsg
        self.qmgr = qmgr
        self._by_name: dict[tuple[str, str], list[ObjectDef]] = {}

    def replace_all(self, defs: list[ObjectDef]) -> None:
        by_name: dict[tuple[str, str], list[ObjectDef]] = {}
        for d in defs:
            by_name.setdefault((d.objclass, d.name), []).append(d)
        self._by_name = by_name

    def replace_name(self, objclass: str, name: str, defs: list[ObjectDef]) -> None:
        """Replace what is cached for one name (after a broadcast said it changed)."""
        if defs:
            self._by_name[(objclass, name)] = defs
        else:
            self._by_name.pop((objclass, name), None)

    def all(self, objclass: str | None = None) -> list[ObjectDef]:
        return [d for (cls, _), ds in sorted(self._by_name.items()) for d in ds if objclass in (None, cls)]

    def usable(self, objclass: str, name: str) -> list[ObjectDef]:
        """Definitions of a name this QM can use: its own (QMGR/COPY) and SHARED ones, not GROUP."""
        return [d for d in self._by_name.get((objclass, name), []) if d.location != GROUP_LOCATION]

    def cfstruct(self, name: str) -> ObjectDef | None:
        found = self._by_name.get(("CFSTRUCT", name))
        return found[0] if found else None

    def structure_tag(self, name: str) -> str:
        """The tag of CF structure ``name`` (its HASHTAG decides where its keys live)."""
        return structure_tag(self.qsg, name, self.cfstruct(name))

    def process(self, name: str) -> ObjectDef | None:
        return self._one("PROCESS", name)

    def _one(self, objclass: str, name: str) -> ObjectDef | None:
        found = self.usable(objclass, name)
        if len(found) > 1:
            raise MQError(MQRC.OBJECT_NOT_UNIQUE,
                          f"{name} is defined both on {self.qmgr} and as a shared object: delete one")
        return found[0] if found else None

    def queue(self, name: str) -> ObjectDef | None:
        """The queue a name means on this QM; MQRC_OBJECT_NOT_UNIQUE (2343) when a private and
        a shared queue of that name both exist, as z/OS reports."""
        return self._one("QUEUE", name)

    def resolve_queue(self, name: str) -> ResolvedQueue:
        """Resolve an object name to the local queue that holds the messages (through an alias)."""
        opened = self.queue(name)
        if opened is None:
            raise MQError(MQRC.UNKNOWN_OBJECT_NAME, f"queue '{name}' is not defined on {self.qmgr}")
        if opened.objtype == "QMODEL":
            # a model queue holds no messages: MQOPEN of it creates a dynamic queue (Mqi.open)
            raise MQError(MQRC.OBJECT_TYPE_ERROR,
                          f"{name} is a model queue: MQOPEN it to create a dynamic queue, then use that queue")
        base = opened
        if opened.objtype == "QALIAS":
            target = str(opened.attrs.get("TARGET", "")).strip()
            if opened.attrs.get("TARGTYPE", "QUEUE") != "QUEUE":
                raise MQError(MQRC.ALIAS_BASE_Q_TYPE_ERROR, f"alias {name} resolves to a topic, not a queue")
            found = self.queue(target) if target else None
            if found is None:
                raise MQError(MQRC.UNKNOWN_ALIAS_BASE_Q,
                              f"alias {name} names base queue '{target}', which is not defined")
            if found.objtype != "QLOCAL":
                raise MQError(MQRC.ALIAS_BASE_Q_TYPE_ERROR,
                              f"alias {name} resolves to {target}, a {found.objtype}, not a local queue")
            base = found
        return ResolvedQueue(opened, base, queue_location(self, base))
