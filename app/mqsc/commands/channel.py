"""Channels: their definitions (DEFINE/ALTER/DELETE/DISPLAY CHANNEL go through the object
commands, with the CHLTYPE rules here), and the commands that would need a running channel.

There is no channel initiator in this emulator. z/OS answers a command that needs one while it
is not active with CSQM134I ("command requires an active channel initiator"), which PCF gives
as MQRCCF_NO_CHANNEL_INITIATOR (3217): START/STOP/PING/RESET/RESOLVE CHANNEL, DISPLAY CHSTATUS,
DISPLAY CHINIT, START/STOP LISTENER and DISPLAY LSSTATUS answer that here, after their syntax
(the channel name) is checked as the command processor checks it.
"""

from __future__ import annotations

from typing import Any

from app.core import attributes, channels
from app.core.errors import MQError, echo
from app.core.objects import ObjectDef
from app.core.reasons import MQRC
from app.mqsc.commands.base import CommandBase
from app.mqsc.parser import Command


def channel_attrs(cmd: Command, base: dict[str, Any], keywords: list[tuple[str, Any]],
                  existing: ObjectDef | None = None) -> dict[str, Any]:
    """A channel's attributes after DEFINE or ALTER: CHLTYPE is required (and on ALTER must be
    the channel's own type), every keyword must belong to that type, and the result holds the
    type's attributes only (``base`` empty: the type's defaults)."""
    chltype = cmd.value("CHLTYPE").strip().upper()
    if not chltype:
        raise MQError(MQRC.MQRCCF_PARM_MISSING, f"{cmd.verb} CHANNEL needs CHLTYPE(type)")
    channels.check_type(chltype)
    if existing is not None:
        check_same_type(existing, chltype)
    channels.check_keywords(chltype, [name for name, _ in keywords])
    if existing is None and not base:
        channels.check_required(chltype, [name for name, _ in keywords])
    start = {**channels.defaults_for(chltype), **{k: v for k, v in base.items() if k != "CHLTYPE"}}
    return channels.typed(chltype, attributes.apply_keywords("CHANNEL", start, keywords))


def check_same_type(existing: ObjectDef, chltype: str) -> None:
    """ALTER, or DEFINE ... REPLACE, of a channel names its own type (IBM: MQRCCF_CHANNEL_TYPE_ERROR
    when it "did not match the type of an existing channel being changed or replaced")."""
    have = str(existing.attrs.get("CHLTYPE", ""))
    if have and have != chltype:
        raise MQError(MQRC.MQRCCF_CHANNEL_TYPE_ERROR,
                      f"CHANNEL({existing.name}) is a CHLTYPE({have}) channel, not {echo(chltype)}")


class ChannelCommands(CommandBase):
    """The commands that need the channel initiator, answered as z/OS answers them while it is
    not active."""

    async def needs_channel_initiator(self, cmd: Command) -> None:
        shown = ""
        if cmd.objtype in ("CHANNEL", "CHSTATUS"):
            shown = f"({self._name(cmd, generic=cmd.verb in ('DISPLAY', 'STOP'))})"
        elif cmd.name:
            shown = f"({echo(cmd.name)})"
        raise MQError(MQRC.MQRCCF_NO_CHANNEL_INITIATOR,
                      f"CSQM134I {self.qm.name} {cmd.verb} {cmd.objtype}{shown} command requires an active "
                      f"channel initiator")
