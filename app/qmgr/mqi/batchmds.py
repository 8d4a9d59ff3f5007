"""The MQMDs of a batch's messages, encoded for the coupling facility and parsed back, at the
cost of one encoding or parse for a run of messages that differ only in their MsgIds (a
put-batch of messages with no MQMD of their own, and a get-batch of what one stored)."""

from __future__ import annotations

from typing import Any

import orjson

from app.core.mqmd import MQMD, fields_but_msg_id

#: The start of a compact MQMD's JSON (``to_dict`` puts the MsgId first); after it, 48 hex digits.
_MSG_ID_HEAD = b'{"msg_id":"'
_MSG_ID_END = len(_MSG_ID_HEAD) + 48


class StoredMDs:
    """The stored encodings (compact JSON, ``to_dict(compact=True)``) of the MQMDs of a batch's
    messages, in order: a message whose MQMD differs from the previous encoded one only in its
    MsgId gets that one's bytes with its own MsgId in them, the same bytes ``orjson.dumps``
    would make, for a fraction of the cost (a put-batch of messages with no MQMD of their
    own is all such messages)."""

    __slots__ = ("_key", "_tail")

    def __init__(self) -> None:
        self._key: tuple[Any, ...] | None = None
        self._tail = b""

    def encode(self, md: MQMD) -> bytes:
        key = fields_but_msg_id(md)
        msg_id = md.msg_id
        plain = len(msg_id) == 48 and msg_id.isascii() and msg_id.isalnum()  # hex: nothing to escape
        if plain and key == self._key:
            return _MSG_ID_HEAD + msg_id.encode() + self._tail
        encoded = orjson.dumps(md.to_dict(compact=True))
        if plain and encoded.startswith(_MSG_ID_HEAD):
            # the key's lists and dict copied: the MQMD may be changed after it was encoded
            self._key = tuple(v.copy() if isinstance(v, (list, dict)) else v for v in key)
            self._tail = encoded[_MSG_ID_END:]
        else:
            self._key = None
        return encoded


class ParsedMDs:
    """The MQMDs of a batch's messages parsed from their stored encodings (``StoredMDs``'), in
    order: a message whose stored MQMD is the previous parsed one's but for its MsgId (the same
    bytes around it) gets a copy of that MQMD with its own MsgId instead of a second parse
    (a get-batch of messages a put-batch stored is all such messages)."""

    __slots__ = ("_md", "_tail")

    def __init__(self) -> None:
        self._md: MQMD | None = None
        self._tail = b""

    def parse(self, stored: bytes) -> MQMD:
        """The MQMD stored as ``stored`` (``MQMD.from_dict`` of its JSON). Raises
        ``orjson.JSONDecodeError`` when it is not JSON."""
        plain = stored.startswith(_MSG_ID_HEAD) and stored[_MSG_ID_END:_MSG_ID_END + 1] == b'"'
        msg_id = stored[len(_MSG_ID_HEAD):_MSG_ID_END]
        plain = plain and msg_id.isalnum()  # bytes.isalnum: ASCII letters and digits only
        template = self._md
        if plain and template is not None and stored[_MSG_ID_END:] == self._tail:
            return template.copy(msg_id.decode())
        md = MQMD.from_dict(orjson.loads(stored))
        if plain and md.msg_id == msg_id.decode():
            self._md, self._tail = md.copy(md.msg_id), stored[_MSG_ID_END:]
        else:
            self._md = None
        return md
