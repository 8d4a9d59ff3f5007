"""MQINQ and MQSET: the attributes of an opened queue or of the queue manager object."""

from __future__ import annotations

from typing import Any

from app.activity import Verb, recorded
from app.core import attributes, selectors
from app.core.errors import MQError
from app.core.reasons import MQRC, CompCode
from app.qmgr import namelists
from app.qmgr.display import display_object, live_counts
from app.qmgr.mqi.batch import Batches


class Attributes(Batches):
    """MQINQ and MQSET."""

    @recorded(Verb.INQ)
    async def inquire(self, hconn: str, hobj: str, selected: Any = None) -> dict[str, Any]:
        """MQINQ: the opened object's attributes by MQSC name (a queue's with its live counts;
        the queue manager's for an MQOT_Q_MGR handle). ``selected``: the selectors asked (MQSC
        names, MQIA_/MQCA_ names or numbers; app/core/selectors.py), only those are returned;
        None: every attribute. A queue selector the queue's type lacks completes with the
        warning 2068 and MQIAV_NOT_APPLICABLE / asterisks, as IBM's MQINQ."""
        conn = self.connection(hconn)
        if hobj in conn.qmgr_handles:
            listed = conn.qmgr_handles[hobj].namelist
            objtype, out = ("NAMELIST", namelists.attributes_of(self.qm.cache, listed)) if listed \
                else ("QMGR", self.qmgr_attributes())
        else:
            handle = self.handle(conn, hobj)
            if not handle.options.inquire:
                raise MQError(MQRC.NOT_OPEN_FOR_INQUIRE, f"{handle.resolved.opened.name} is not open for inquire")
            tokens = None if selected is None else selectors.selector_list(selected)
            opened = self.qm.cache.queue(handle.resolved.opened.name) or handle.resolved.opened
            objtype, out = opened.objtype, display_object(opened)
            if tokens is not None:  # a selector that is not valid fails before the coupling facility is asked
                for token in tokens:
                    selectors.resolve(token, objtype)
            if opened.objtype == "QLOCAL" and (tokens is None or _needs_live(tokens, objtype)):
                status = await self.qm.cf.queue_status(handle.resolved.location)
                out.update(live_counts(status, self.qm.name))
        if selected is None:
            return selectors.inquirable(out) if objtype != "QMGR" else out
        picked, missing = selectors.select(out, selectors.selector_list(selected), objtype)
        if missing:
            picked.update(completion_code=int(CompCode.WARNING), reason=int(MQRC.SELECTOR_NOT_FOR_TYPE),
                          message=f"{', '.join(missing)} not applicable to a {objtype} (MQRC_SELECTOR_NOT_FOR_TYPE)")
        return picked

    def qmgr_attributes(self) -> dict[str, Any]:
        """The queue manager object's attributes by MQSC name, as DISPLAY QMGR shows them, with
        what MQINQ also answers of it (CMDLEVEL, SYNCPT)."""
        out: dict[str, Any] = {"QMNAME": self.qm.name, "QSGNAME": self.qm.qsg}
        for spec in attributes.specs("QMGR").values():
            out[spec.name] = attributes.display_value(spec, self.qm.attrs.get(spec.name, spec.default))
        # MQCMDL_LEVEL_930 (IBM MQ for z/OS 9.3, the level emulated) and MQSP_AVAILABLE: z/OS
        # queue managers always support units of work.
        out.update(CMDLEVEL=930, SYNCPT="AVAILABLE")
        return out

    @recorded(Verb.SET)
    async def set(self, hconn: str, hobj: str, changes: Any) -> dict[str, Any]:
        """MQSET of the attributes IBM lets an application change (needs MQOO_SET): keyed by MQSC
        name, MQIA_/MQCA_ selector name or number; values as MQSC words or IBM's constants.
        IBM's reasons: 2067 a selector that is not valid or cannot be set, 2065 too many, 2020
        a bad inhibit value, 2075-2078 bad trigger values, 2006 TRIGDATA too long."""
        conn = self.connection(hconn)
        if hobj in conn.qmgr_handles:
            raise MQError(MQRC.NOT_OPEN_FOR_SET, "the queue manager object is open for inquire only")
        handle = self.handle(conn, hobj)
        if not handle.options.set:
            raise MQError(MQRC.NOT_OPEN_FOR_SET, f"{handle.resolved.opened.name} is not open for set")
        if not isinstance(changes, dict) or not changes:
            raise MQError(MQRC.SELECTOR_ERROR, "give the attributes to set as an object, e.g. {\"PUT\": \"DISABLED\"}")
        if len(changes) > selectors.MAX_SELECTORS:
            raise MQError(MQRC.SELECTOR_COUNT_ERROR, f"at most {selectors.MAX_SELECTORS} selectors")
        objtype = handle.resolved.opened.objtype
        keywords: list[tuple[str, str | None]] = []
        for token, value in changes.items():
            name = selectors.settable(token, objtype)
            if name not in attributes.specs(objtype):  # e.g. TRIGGER of an alias queue
                raise MQError(MQRC.SELECTOR_ERROR, f"{name} is not an attribute of a {objtype}")
            keywords.append(selectors.set_keyword(name, value))
        try:
            updated = await self.qm.workflow.apply_mqset(handle.resolved.opened, keywords)
        except MQError as exc:
            if exc.reason == MQRC.MQRCCF_ATTR_VALUE_ERROR:
                raise MQError(_set_value_reason(exc.message, keywords), exc.message) from None
            raise
        return display_object(updated)


#: Attributes MQINQ reads from the coupling facility rather than the definition.
_LIVE = frozenset({"CURDEPTH", "IPPROCS", "OPPROCS", "QDPHIEV", "QDPLOEV", "QDPMAXEV", "QSVCIEV"})


def _needs_live(tokens: list[str], objtype: str) -> bool:
    return any(selectors.resolve(t, objtype)[0] in _LIVE for t in tokens)


def _set_value_reason(message: str, keywords: list[tuple[str, str | None]]) -> int:
    """IBM's MQSET reason for a value the catalogue refused: the reason of the attribute the
    message names (the first one's when none is named)."""
    for keyword, _ in keywords:
        name = "TRIGGER" if keyword == "NOTRIGGER" else keyword
        if name in message:
            return selectors.SETTABLE[name]
    first = keywords[0][0]
    return selectors.SETTABLE["TRIGGER" if first == "NOTRIGGER" else first]
