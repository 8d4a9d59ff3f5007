"""Dynamic queues: the name MQOPEN of a model queue gives the queue it creates, and MQCLOSE's
options for deleting one. Plain Python (docs/design.md principle 1).

IBM's rules followed here (MQOD DynamicQName, MQCLOSE Options):

* DynamicQName is 1-48 characters. An asterisk may appear only as the last non-blank
  character: the queue manager replaces it with characters of its own that make the name
  unique (on z/OS the default DynamicQName is ``CSQ.*``). A name without an asterisk is used
  as it is, and MQOPEN fails with MQRC_OBJECT_ALREADY_EXISTS (2100) when such a queue exists.
  Any other malformed DynamicQName is MQRC_DYNAMIC_Q_NAME_ERROR (2011).
* MQCLOSE options: MQCO_NONE, MQCO_DELETE (delete a permanent dynamic queue that holds no
  messages: else MQRC_Q_NOT_EMPTY 2055), MQCO_DELETE_PURGE (delete it with its messages).
  Either DELETE option on a predefined queue is MQRC_OPTION_NOT_VALID_FOR_TYPE (2045).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable

from app.core.errors import MQError
from app.core.names import check_object_name
from app.core.reasons import MQRC

#: DynamicQName when the application gives none: z/OS's default (CSQ.*; AMQ.* elsewhere).
DEFAULT_DYNAMIC_Q_NAME = "CSQ.*"
MAX_NAME = 48
CLOSE_OPTIONS = frozenset({"NONE", "DELETE", "DELETE_PURGE"})
_SUFFIX_LEN = 16


class DynamicNames:
    """Unique suffixes for ``*`` in a DynamicQName, shaped like IBM's: hexadecimal digits from
    the time the name is made and a counter, so names made by different queue managers of a
    group (a SHAREDYN queue is group-wide) differ by the queue manager's own tag too."""

    def __init__(self, tag: str) -> None:
        # one hex digit pair per character of the tag, so that two QMs never make the same suffix
        self._tag = tag.encode().hex().upper()[:4]
        self._counter = itertools.count(1)

    def suffix(self) -> str:
        """A new 16-digit suffix: 8 of seconds since the epoch, 4 of this QM, 4 of a counter."""
        return f"{int(time.time()) & 0xFFFFFFFF:08X}{self._tag:0>4}{next(self._counter) & 0xFFFF:04X}"

    def name(self, dynamic_q_name: object) -> tuple[str, bool]:
        """The queue name a DynamicQName gives, and whether it was generated (had a ``*``)."""
        if dynamic_q_name in (None, ""):
            dynamic_q_name = DEFAULT_DYNAMIC_Q_NAME
        if not isinstance(dynamic_q_name, str) or len(dynamic_q_name) > MAX_NAME:
            raise MQError(MQRC.DYNAMIC_Q_NAME_ERROR, "dynamic_q_name must be a string of 1-48 characters")
        text = dynamic_q_name.rstrip(" ")
        star = text.find("*")
        if star != -1 and star != len(text) - 1:
            raise MQError(MQRC.DYNAMIC_Q_NAME_ERROR,
                          f"dynamic_q_name '{dynamic_q_name}': an asterisk may only be its last character")
        prefix = text[:-1] if star != -1 else text
        if prefix:
            try:
                check_object_name(prefix)
            except MQError:
                raise MQError(MQRC.DYNAMIC_Q_NAME_ERROR,
                              f"dynamic_q_name '{dynamic_q_name}' has characters a queue name may not have") from None
        elif star == -1:
            raise MQError(MQRC.DYNAMIC_Q_NAME_ERROR, "dynamic_q_name is blank")
        if star == -1:
            return prefix, False
        # the generated part fills the name up to 48 characters at most (IBM: the whole name <= 48);
        # cut from the left, so that what is kept of a short suffix is the part that changes most
        suffix = self.suffix()
        return prefix + suffix[max(0, len(suffix) - (MAX_NAME - len(prefix))):], True


def parse_close_options(options: Iterable[object] | None) -> frozenset[str]:
    """MQCO_ names without the prefix; MQRC_OPTIONS_ERROR for unknown ones or both DELETEs."""
    if options is None:
        return frozenset()
    chosen: set[str] = set()
    for option in options:
        if not isinstance(option, str) or option.upper() not in CLOSE_OPTIONS:
            raise MQError(MQRC.OPTIONS_ERROR,
                          f"close option {option!r} is not one of {', '.join(sorted(CLOSE_OPTIONS))}")
        chosen.add(option.upper())
    if {"DELETE", "DELETE_PURGE"} <= chosen:
        raise MQError(MQRC.OPTIONS_ERROR, "give DELETE or DELETE_PURGE, not both")
    return frozenset(chosen - {"NONE"})
