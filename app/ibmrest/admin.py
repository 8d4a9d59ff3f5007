"""The read resources of IBM's administrative REST API that tools poll:
``/admin/installation``, ``/admin/qmgr[/{qmgr}]`` and ``/admin/qmgr/{qmgr}/queue[/{queue}]``.

Answers use IBM's JSON shapes: ``{"installation": [...]}``, ``{"qmgr": [...]}``,
``{"queue": [...]}``, with IBM's attribute names grouped as IBM groups them (``general``,
``storage``, ``trigger``, ``events``, ..., ``status``) and IBM's query parameters
(``attributes``, ``status``, ``name``, ``type``, ``queueSharingGroupDisposition``, ``filter``,
``state``). A bad query parameter is 400 in IBM's error body.

Queues come from the MQSC command processor (``DISPLAY QUEUE``, run by ``run_script`` with the
caller's rights), so dispositions, generic names and live counts are exactly what DISPLAY
shows; this module only renames. The queue manager list comes from the group's membership and
the shared repository. Plain Python, no FastAPI: ``app/api/routes_ibm.py`` is the transport.
"""

from __future__ import annotations

import asyncio
import platform
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import orjson

from app.core.errors import MQError
from app.core.names import check_object_name, is_object_name
from app.core.reasons import MQRC
from app.ibmrest.errors import (
    IbmRestError,
    bad_query,
    from_mq_error,
    unknown_installation,
    unknown_parameter,
    unknown_qmgr,
)
from app.ibmrest.routing import Forwarder
from app.mqsc.executor import run_script

if TYPE_CHECKING:
    from app.qmgr.qmgr import QueueManager

# What the emulated installation reports: IBM MQ for z/OS, at the level whose behaviour the
# project follows (9.3). Emulator's choice, fixed here so that tools see one consistent answer.
PLATFORM = "zos"
VERSION = "9.3.0.0"
LEVEL = "qsg-emulator"

Convert = Callable[[Any], Any]


def _same(value: Any) -> Any:
    return value


def _is(word: str) -> Convert:
    """A boolean attribute shown by MQSC as a keyword or a value: true when it is ``word``."""
    return lambda value: str(value).upper() == word


def _words(table: dict[str, str]) -> Convert:
    """An MQSC enumeration as IBM's REST value (the lower-case word when the table has none)."""
    return lambda value: table.get(str(value).upper(), str(value).lower())


def _altered(row: dict[str, Any]) -> str | None:
    """ALTDATE + ALTTIME as an IBM REST time stamp (``YYYY-MM-DDTHH:MM:SS.sssZ``, UTC)."""
    date, time = row.get("ALTDATE"), row.get("ALTTIME")
    if not date or not time:
        return None
    return f"{date}T{str(time).replace('.', ':')}.000Z"


@dataclass(frozen=True)
class Attr:
    """One IBM REST queue attribute: its dotted path and the MQSC attribute it shows."""

    path: tuple[str, ...]
    mqsc: str
    convert: Convert = _same


_AS_QMGR = {"QMGR": "asQmgr"}
# IBM's REST queue attributes by group, from the DISPLAY QUEUE attribute they rename. Only what
# this queue manager keeps is listed (no channels, clusters or distribution lists live here).
QUEUE_ATTRS: tuple[Attr, ...] = (
    Attr(("remote", "qmgrName"), "RQMNAME"),
    Attr(("remote", "queueName"), "RNAME"),
    Attr(("remote", "transmissionQueueName"), "XMITQ"),
    Attr(("alias", "targetName"), "TARGET"),
    Attr(("alias", "targetType"), "TARGTYPE", _words({})),
    Attr(("general", "description"), "DESCR"),
    Attr(("general", "inhibitGet"), "GET", _is("DISABLED")),
    Attr(("general", "inhibitPut"), "PUT", _is("DISABLED")),
    Attr(("general", "isTransmissionQueue"), "USAGE", _is("XMITQ")),
    Attr(("queueSharingGroup", "disposition"), "QSGDISP", _words({})),
    Attr(("storage", "maximumDepth"), "MAXDEPTH"),
    Attr(("storage", "maximumMessageLength"), "MAXMSGL"),
    Attr(("storage", "messageDeliverySequence"), "MSGDLVSQ", _words({})),
    Attr(("storage", "storageClass"), "STGCLASS"),
    Attr(("storage", "couplingFacilityStructureName"), "CFSTRUCT"),
    Attr(("storage", "indexType"), "INDXTYPE", _words({"MSGID": "messageId", "CORRELID": "correlationId",
                                                       "GROUPID": "groupId", "MSGTOKEN": "messageToken"})),
    Attr(("applicationDefaults", "persistent"), "DEFPSIST", _is("YES")),
    Attr(("applicationDefaults", "priority"), "DEFPRTY"),
    Attr(("applicationDefaults", "putResponse"), "DEFPRESP", _words({"SYNC": "synchronous",
                                                                     "ASYNC": "asynchronous"})),
    Attr(("applicationDefaults", "readAhead"), "DEFREADA", _words({})),
    Attr(("applicationDefaults", "sharedInput"), "DEFSOPT", _is("SHARED")),
    Attr(("applicationDefaults", "messagePropertyControl"), "PROPCTL",
         _words({"COMPAT": "compatibility", "V6COMPAT": "version6Compatibility"})),
    Attr(("applicationDefaults", "clusterBind"), "DEFBIND", _words({"OPEN": "onOpen", "NOTFIXED": "notFixed"})),
    Attr(("trigger", "enabled"), "TRIGGER", _is("TRIGGER")),
    Attr(("trigger", "type"), "TRIGTYPE", _words({})),
    Attr(("trigger", "depth"), "TRIGDPTH"),
    Attr(("trigger", "messagePriority"), "TRIGMPRI"),
    Attr(("trigger", "data"), "TRIGDATA"),
    Attr(("trigger", "initiationQueueName"), "INITQ"),
    Attr(("trigger", "processName"), "PROCESS"),
    Attr(("events", "depth", "highEnabled"), "QDPHIEV", _is("ENABLED")),
    Attr(("events", "depth", "highPercentage"), "QDEPTHHI"),
    Attr(("events", "depth", "lowEnabled"), "QDPLOEV", _is("ENABLED")),
    Attr(("events", "depth", "lowPercentage"), "QDEPTHLO"),
    Attr(("events", "depth", "fullEnabled"), "QDPMAXEV", _is("ENABLED")),
    Attr(("events", "serviceInterval", "highEnabled"), "QSVCIEV", _is("HIGH")),
    Attr(("events", "serviceInterval", "okEnabled"), "QSVCIEV", _is("OK")),
    Attr(("events", "serviceInterval", "duration"), "QSVCINT"),
    Attr(("cluster", "name"), "CLUSTER"),
    Attr(("cluster", "namelist"), "CLUSNL"),
    Attr(("cluster", "workloadPriority"), "CLWLPRTY"),
    Attr(("cluster", "workloadRank"), "CLWLRANK"),
    Attr(("cluster", "workloadQueueUse"), "CLWLUSEQ", _words(_AS_QMGR)),
    Attr(("cluster", "transmissionQueueForChannelName"), "CLCHNAME"),
    Attr(("dataCollection", "accounting"), "ACCTQ", _words(_AS_QMGR)),
    Attr(("dataCollection", "monitoring"), "MONQ", _words(_AS_QMGR)),
    Attr(("extended", "allowSharedInput"), "SHARE", _is("SHARE")),
    Attr(("extended", "backoutRequeueQueueName"), "BOQNAME"),
    Attr(("extended", "backoutThreshold"), "BOTHRESH"),
    Attr(("extended", "hardenGetBackout"), "HARDENBO", _is("HARDENBO")),
    Attr(("extended", "retentionInterval"), "RETINTVL"),
    Attr(("extended", "customAttributes"), "CUSTOM"),
)
# What the coupling facility knows live, as DISPLAY QUEUE shows it for this queue manager.
QUEUE_STATUS: tuple[Attr, ...] = (
    Attr(("status", "currentDepth"), "CURDEPTH"),
    Attr(("status", "openInputCount"), "IPPROCS"),
    Attr(("status", "openOutputCount"), "OPPROCS"),
)
_TIMESTAMP = Attr(("timestamps", "altered"), "ALTDATE")

QUEUE_TYPES = {"QLOCAL": "local", "QALIAS": "alias", "QREMOTE": "remote", "QMODEL": "model"}
_MQSC_TYPE = {"all": "ALL", "local": "QLOCAL", "alias": "QALIAS", "remote": "QREMOTE", "model": "QMODEL"}
_NO_SUCH_TYPE = frozenset({"cluster"})  # IBM types this queue manager has no objects of
_DISPOSITIONS = frozenset({"live", "all", "copy", "group", "private", "qmgr", "shared"})
_FILTER_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "lessThan": lambda a, b: a < b, "greaterThan": lambda a, b: a > b,
    "lessThanOrEqualTo": lambda a, b: a <= b, "greaterThanOrEqualTo": lambda a, b: a >= b,
    "equalTo": lambda a, b: a == b, "notEqualTo": lambda a, b: a != b,
}
QUEUE_PARAMS = frozenset({"attributes", "status", "name", "type", "queueSharingGroupDisposition", "filter"})
QMGR_PARAMS = frozenset({"attributes", "status", "state"})
QMGR_STATUS = ("started", "channelInitiatorState", "connectionCount", "publishSubscribeState")
INSTALLATION_EXTENDED = ("level", "operatingSystem")


def _timestamp(ms: int) -> str:
    """Milliseconds since the epoch as an IBM REST time stamp."""
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _check_params(params: Mapping[str, str], allowed: frozenset[str]) -> None:
    for key in params:
        if key not in allowed:
            raise unknown_parameter(key)


def _items(params: Mapping[str, str], key: str) -> list[str]:
    """A comma-separated query parameter as its items (none when absent)."""
    value = params.get(key)
    if value is None:
        return []
    items = [i.strip() for i in value.split(",")]
    if not all(items):
        raise bad_query(key, value, "an empty item in the comma-separated list")
    return items


def _selector(params: Mapping[str, str], key: str, known: tuple[Attr, ...],
              everything: tuple[str, ...] = ()) -> Callable[[Attr], bool]:
    """Which attributes a query parameter asks for: ``*`` (or one of ``everything``) all of
    them, otherwise each item is a group (``storage``, ``events.depth``) or one attribute
    (``storage.maximumDepth``)."""
    items = _items(params, key)
    if any(i == "*" or i in everything for i in items):
        return lambda attr: True
    wanted = [tuple(i.split(".")) for i in items]
    for item, parts in zip(items, wanted, strict=True):
        if not any(a.path[:len(parts)] == parts for a in known):
            raise bad_query(key, item, f"not an attribute or attribute group of this resource ({key})")
    return lambda attr: any(attr.path[:len(parts)] == parts for parts in wanted)


def _put(out: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    for part in path[:-1]:
        out = out.setdefault(part, {})
    out[path[-1]] = value


def _get(record: dict[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = record
    for part in path:
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


@dataclass(frozen=True)
class _Filter:
    """IBM's ``filter=attribute:operator:value`` over the full record of each object."""

    path: tuple[str, ...]
    op: Callable[[Any, Any], bool]
    op_name: str
    value: str

    def accepts(self, record: dict[str, Any]) -> bool:
        actual = _get(record, self.path)
        if actual is None or isinstance(actual, dict):
            return False  # an object without the attribute never matches (IBM: not returned)
        if isinstance(actual, bool):
            if self.value not in ("true", "false"):
                raise bad_query("filter", self.value, "this attribute is true or false")
            return self.op(actual, self.value == "true")
        if isinstance(actual, int):
            try:
                return self.op(actual, int(self.value))
            except ValueError:
                raise bad_query("filter", self.value, "this attribute is a number") from None
        if self.value.endswith("*") and self.op_name in ("equalTo", "notEqualTo"):
            hit = str(actual).startswith(self.value[:-1])
            return hit if self.op_name == "equalTo" else not hit
        return self.op(str(actual), self.value)


def _queue_filter(params: Mapping[str, str]) -> _Filter | None:
    raw = params.get("filter")
    if raw is None:
        return None
    parts = raw.split(":", 2)
    if len(parts) != 3 or parts[1] not in _FILTER_OPS:
        raise bad_query("filter", raw, "give attribute:operator:value with operator one of "
                        + ", ".join(_FILTER_OPS))
    path = tuple(parts[0].split("."))
    leaves = {a.path for a in (*QUEUE_ATTRS, *QUEUE_STATUS, _TIMESTAMP)} | {("name",), ("type",)}
    if path not in leaves:
        raise bad_query("filter", raw, f"{parts[0]} is not an attribute of a queue")
    return _Filter(path, _FILTER_OPS[parts[1]], parts[1], parts[2])


class Admin:
    """The administrative resources of one queue manager (see the module docstring)."""

    def __init__(self, qm: QueueManager) -> None:
        self.qm = qm

    # ---- /admin/installation ---------------------------------------------------------------

    @property
    def installation_name(self) -> str:
        """The group's mqweb is one installation, named after the queue-sharing group."""
        return self.qm.qsg

    def installation(self, params: Mapping[str, str], name: str | None = None) -> dict[str, Any]:
        """``GET /admin/installation[/{name}]``: ``{"installation": [{name, platform, version}]}``,
        with ``extended`` (level, operatingSystem) when ``attributes`` asks for it."""
        _check_params(params, frozenset({"attributes"}))
        if name is not None and name != self.installation_name:
            raise unknown_installation(name, self.installation_name)
        items = _items(params, "attributes")
        wanted: set[str] = set()
        for item in items:
            if item in ("*", "extended"):
                wanted.update(INSTALLATION_EXTENDED)
            elif item.startswith("extended.") and item[len("extended."):] in INSTALLATION_EXTENDED:
                wanted.add(item[len("extended."):])
            else:
                raise bad_query("attributes", item, "use extended, * or extended.level / extended.operatingSystem")
        entry: dict[str, Any] = {"name": self.installation_name, "platform": PLATFORM, "version": VERSION}
        extended = {"level": f"{LEVEL} {VERSION}",
                    # the system the emulator really runs on: the platform above is what it emulates
                    "operatingSystem": f"{platform.system()} {platform.release()}".strip()}
        if wanted:
            entry["extended"] = {k: v for k, v in extended.items() if k in wanted}
        return {"installation": [entry]}

    # ---- /admin/qmgr -----------------------------------------------------------------------

    async def qmgrs(self, version: str, params: Mapping[str, str], headers: Mapping[str, str],
                    name: str | None = None) -> dict[str, Any]:
        """``GET /admin/qmgr[/{name}]``: the queue managers of the group (every member that ever
        joined and every one the repository defines) with their state, and their ``status``
        when asked. Another member's status comes from that member itself."""
        _check_params(params, QMGR_PARAMS)
        if "attributes" in params:
            # IBM: extended queue manager attributes exist only off z/OS.
            raise bad_query("attributes", params["attributes"], "not available for a queue manager on z/OS")
        state_filter = params.get("state")
        if state_filter is not None and state_filter not in ("running", "ended"):
            raise bad_query("state", state_filter, "on z/OS a queue manager's state is running or ended")
        status_items = _items(params, "status")
        valid = {"*", "status", *(f"status.{a}" for a in QMGR_STATUS)}
        for item in status_items:
            if item not in valid:
                raise bad_query("status", item, "use status, * or status." + ", status.".join(QMGR_STATUS))
        wanted = set(QMGR_STATUS) if {"*", "status"} & set(status_items) else \
            {i[len("status."):] for i in status_items}

        members = {m.name: m for m in await self.qm.membership.members()}
        names = set(members) | set(await self.qm.db(self.qm.repo.qmgr_names)) | {self.qm.name}
        if name is not None:
            if name not in names:
                raise unknown_qmgr(name, self.qm.qsg, admin=True)
            names = {name}
        out = []
        for qmgr in sorted(names):
            member = members.get(qmgr)
            running = qmgr == self.qm.name or (member is not None and member.status == "ACTIVE")
            entry: dict[str, Any] = {"name": qmgr, "state": "running" if running else "ended"}
            if state_filter is None or entry["state"] == state_filter:
                out.append(entry)
        if wanted:
            running_entries = [e for e in out if e["state"] == "running"]
            # each other member is asked at once, so that the list takes one round trip, not n
            statuses = await asyncio.gather(*(
                self._status_of(version, e["name"], params["status"], headers, strict=name is not None)
                for e in running_entries))
            for entry, status in zip(running_entries, statuses, strict=True):
                if status is not None:
                    entry["status"] = {k: v for k, v in status.items() if k in wanted}
        return {"qmgr": out}

    async def _status_of(self, version: str, qmgr: str, status: str, headers: Mapping[str, str], *,
                         strict: bool) -> dict[str, Any] | None:
        if qmgr == self.qm.name:
            return self._local_status()
        return await self._remote_status(version, qmgr, status, headers, strict=strict)

    def _local_status(self) -> dict[str, Any]:
        return {"started": _timestamp(self.qm.started_ms),
                # this emulator has neither a channel initiator nor a publish/subscribe engine
                "channelInitiatorState": "stopped", "publishSubscribeState": "stopped",
                "connectionCount": len(self.qm.mqi.connections)}

    async def _remote_status(self, version: str, qmgr: str, status: str, headers: Mapping[str, str], *,
                             strict: bool) -> dict[str, Any] | None:
        """Another member's own status (asked of it over REST). ``strict``: its failure is the
        call's failure (one queue manager asked for); otherwise the list shows it without."""
        try:
            answer = await Forwarder(self.qm).forward(
                qmgr, method="GET", path=f"/ibmmq/rest/{version}/admin/qmgr/{qmgr}",
                query=urlencode({"status": status}), headers=headers, body=b"", admin=True)
        except IbmRestError:
            if strict:
                raise
            return None
        if answer.status != 200:
            if strict:
                raise IbmRestError(answer.status, "MQWB0009E", (qmgr,), qmgr_name=qmgr,
                                   detail=answer.body.decode("utf-8", "replace")[:300])
            return None
        try:
            entries = orjson.loads(answer.body)["qmgr"]
            status_of = entries[0].get("status") if entries else None
        except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
            status_of = None
        return status_of if isinstance(status_of, dict) else None

    # ---- /admin/qmgr/{qmgr}/queue ----------------------------------------------------------

    async def queues(self, params: Mapping[str, str], name: str | None = None) -> dict[str, Any]:
        """``GET /admin/qmgr/{qmgr}/queue[/{name}]`` on this queue manager: ``{"queue": [...]}``,
        each with ``name`` and ``type`` and the attributes and status that were asked for."""
        _check_params(params, QUEUE_PARAMS)
        if name is not None:
            check_object_name(name)  # a path names one queue: no generic name here
            pattern = name
        else:
            pattern = params.get("name", "*")
            if not (is_object_name(pattern) or pattern == "*"
                    or (pattern.endswith("*") and is_object_name(pattern[:-1]))):
                raise bad_query("name", pattern, "a queue name, or a generic name ending in *")
        kind = params.get("type", "all")
        if kind not in (*_MQSC_TYPE, *_NO_SUCH_TYPE):
            raise bad_query("type", kind, "use all, local, alias, remote, cluster or model")
        disposition = params.get("queueSharingGroupDisposition", "live")
        if disposition not in _DISPOSITIONS:
            raise bad_query("queueSharingGroupDisposition", disposition,
                            "use live, all, copy, group, private, qmgr or shared")
        attributes = _selector(params, "attributes", (*QUEUE_ATTRS, _TIMESTAMP))
        status = _selector(params, "status", QUEUE_STATUS, everything=("status",))
        query = _queue_filter(params)
        if kind in _NO_SUCH_TYPE:
            if name is not None:
                raise MQError(MQRC.UNKNOWN_OBJECT_NAME, f"{kind} queue {name} is not defined")
            return {"queue": []}

        # The name is checked above (no quote can be in it), so quoting it keeps its case.
        script = f"DISPLAY QUEUE('{pattern}') TYPE({_MQSC_TYPE[kind]}) QSGDISP({disposition.upper()})"
        (result,) = await run_script(self.qm, script)
        if result["completion_code"] != 0:
            failure = MQError(result["reason"], result["messages"][0] if result["messages"] else "")
            raise from_mq_error(failure, action="display", target=f"queues on {self.qm.name}", qmgr=self.qm.name)
        # Without attributes / status IBM answers name and type only.
        shown = (attributes if "attributes" in params else _none, status if "status" in params else _none)
        out = []
        for row in result["objects"]:
            if query is not None and not query.accepts(self._queue(row, _all, _all)):
                continue
            out.append(self._queue(row, *shown))
        return {"queue": out}

    @staticmethod
    def _queue(row: dict[str, Any], attributes: Callable[[Attr], bool],
               status: Callable[[Attr], bool]) -> dict[str, Any]:
        """One DISPLAY QUEUE row in IBM's shape, keeping the attributes the selectors accept."""
        queue: dict[str, Any] = {"name": row["QUEUE"], "type": QUEUE_TYPES.get(row.get("TYPE", ""), "local")}
        for attr in QUEUE_ATTRS:
            if attr.mqsc in row and attributes(attr):
                _put(queue, attr.path, attr.convert(row[attr.mqsc]))
        altered = _altered(row)
        if altered is not None and attributes(_TIMESTAMP):
            _put(queue, _TIMESTAMP.path, altered)
        for attr in QUEUE_STATUS:
            if attr.mqsc in row and status(attr):  # live counts: local queues of this QM or shared
                _put(queue, attr.path, row[attr.mqsc])
        return queue


def _none(attr: Attr) -> bool:
    return False


def _all(attr: Attr) -> bool:
    return True
