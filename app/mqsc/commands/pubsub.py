"""Publish/subscribe MQSC: the TOPIC rules of DEFINE (TOPICSTR), DISPLAY SUB, DELETE SUB and
DISPLAY TPSTATUS (IBM MQ for z/OS MQSC reference: "DEFINE TOPIC", "DISPLAY SUB", "DELETE SUB",
"DISPLAY TPSTATUS"). Subscriptions are the queue manager's own (app/qmgr/pubsub.py)."""

from __future__ import annotations

from typing import Any

from app.core import topics
from app.core.errors import MQError, echo
from app.core.names import matches
from app.core.objects import GROUP_LOCATION
from app.core.reasons import MQRC
from app.mqsc.commands.base import CommandBase
from app.mqsc.parser import Command


def _unquoted(value: str) -> str:
    text = value.strip()
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1].replace("''", "'")
    return text


def check_topic_define(cache: Any, name: str, qsgdisp: str, attrs: dict[str, Any]) -> None:
    """DEFINE TOPIC: TOPICSTR is required and not blank, and no other topic object this
    queue manager uses (``cache``; or, for GROUP, no other group one) has the same topic string."""
    topicstr = topics.check_topic_string(str(attrs.get("TOPICSTR", "")), "TOPICSTR")
    if not topicstr:
        raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, f"TOPIC({echo(name)}) needs TOPICSTR('a/topic/string')")
    group = qsgdisp == "GROUP"
    for other in cache.all("TOPIC"):
        if other.name == name or (other.location == GROUP_LOCATION) != group:
            continue
        if str(other.attrs.get("TOPICSTR", "")) == topicstr:
            raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR,
                          f"TOPICSTR('{echo(topicstr)}') is already the topic string of TOPIC({other.name})")


class PubSubCommands(CommandBase):
    """TOPIC checks, DISPLAY SUB, DELETE SUB, DISPLAY TPSTATUS."""

    def _pattern(self, cmd: Command) -> str:
        if cmd.name is None:
            raise MQError(MQRC.MQRCCF_PARM_SYNTAX_ERROR, f"{cmd.verb} {cmd.objtype} needs a name in parentheses")
        return _unquoted(cmd.name)

    def _selected(self, cmd: Command) -> list[dict[str, Any]]:
        pattern = self._pattern(cmd)
        subid = _unquoted(cmd.value("SUBID")).upper() if cmd.get("SUBID") else ""
        kind = (cmd.value("SUBTYPE") or "USER").upper()
        if kind not in ("USER", "ALL", "API", "ADMIN", "PROXY"):
            raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, f"SUBTYPE({echo(kind)}) is not USER, ALL, API, ADMIN or PROXY")
        durable = (cmd.value("DURABLE") or "ALL").upper()
        rows = []
        for row in self.qm.pubsub.display_rows():
            if subid and row["SUBID"] != subid:
                continue
            if not subid and not (row["SUB"] == pattern or ("*" in pattern and matches(pattern, row["SUB"]))):
                continue
            if kind in ("ADMIN", "PROXY") or (durable in ("YES", "NO") and row["DURABLE"] != durable):
                continue
            rows.append(row)
        return rows

    async def display_sub(self, cmd: Command) -> list[dict[str, Any]]:
        """DISPLAY SUB(name|generic) [SUBID(id)] [DURABLE(YES|NO|ALL)] [SUBTYPE(...)]."""
        rows = self._selected(cmd)
        if not rows and "*" not in self._pattern(cmd):
            raise MQError(MQRC.NO_SUBSCRIPTION, f"subscription '{echo(self._pattern(cmd))}' not found")
        return rows

    async def delete_sub(self, cmd: Command) -> None:
        """DELETE SUB(name) or SUBID(id): end a subscription that no handle has open."""
        rows = self._selected(cmd)
        if len(rows) != 1:
            raise MQError(MQRC.NO_SUBSCRIPTION, f"subscription '{echo(self._pattern(cmd))}' not found")
        sub = self.qm.pubsub.subs.get(rows[0]["SUBID"])
        if sub is None:
            raise MQError(MQRC.NO_SUBSCRIPTION, f"subscription '{echo(self._pattern(cmd))}' not found")
        await self.qm.pubsub.delete(sub)
        self.messages.append(f"subscription '{sub.sub_name or sub.subid}' deleted")

    async def display_tpstatus(self, cmd: Command) -> list[dict[str, Any]]:
        """DISPLAY TPSTATUS('topic string', wildcards allowed) TYPE(TOPIC)."""
        kind = (cmd.value("TYPE") or "TOPIC").upper()
        if kind != "TOPIC":
            raise MQError(MQRC.MQRCCF_ATTR_VALUE_ERROR, f"TYPE({echo(kind)}): only TYPE(TOPIC) is supported here")
        return self.qm.pubsub.status_rows(self._pattern(cmd))
