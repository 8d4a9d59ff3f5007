"""Message handles and message properties (MQCRTMH, MQSETMP, MQINQMP, MQDLTMP, MQDLTMH) as
pymqi and IBM's ``ibmmq`` offer them: ``MessageHandle(qmgr)``, ``handle.properties.set(name,
value, property_type=CMQC.MQTYPE_INT32)``, ``.get(name)``, ``.dlt(name)``, and the handle's
``msg_handle`` given to a put as ``PMO.OriginalMsgHandle`` / ``PMO.NewMsgHandle`` or to a get as
``GMO.MsgHandle`` (MQGMO_PROPERTIES_IN_HANDLE).

A handle lives in the client, as an MQ client's does between calls: its properties travel with
an MQPUT as the message descriptor's ``properties`` (docs/api.md: a flat object of name ->
string, number, boolean or null, a byte string as ``{"$bytes": base64}``), and an MQGET with a
handle fills it from the got message's ``properties``. The JSON carries no integer width: a
property put as MQTYPE_INT8..INT64 comes back as MQTYPE_INT64, MQTYPE_FLOAT32 as MQTYPE_FLOAT64,
and asking for any integer (or float) type of such a property gives its value.

IBM's rules followed (MQSETMP/MQINQMP in the IBM MQ reference, "Property names" and "Property
data types and values"): names in the ``usr`` folder may be given with or without ``usr.``;
names starting ``JMS`` (or ``usr.JMS``) and names with a wildcard are refused on a set with
MQRC_PROPERTY_NAME_ERROR (2442); an inquiry of a name that is not there, and the end of a
wildcard (``%``, ``usr.%``) walk with MQIMPO_INQ_NEXT, is MQRC_PROPERTY_NOT_AVAILABLE (2471); a
value longer than ``max_value_length`` is MQRC_PROPERTY_VALUE_TOO_BIG (2469); a handle deleted
or unknown, or given to another connection's call, is MQRC_HMSG_ERROR (2460).
"""

from __future__ import annotations

import base64
import itertools
import re
import struct
import threading
from dataclasses import dataclass, field
from typing import Any

import app.client.CMQC as CMQC
from app.client.core import GMO, PMO, MQMIError, MQOpts

# ---- the option structures of the property calls (pymqi's and ibmmq's fields) ---------------------


class CMHO(MQOpts):
    """Create-message-handle options (MQCMHO): accepted; validation is always done."""

    _fields = {"StrucId": CMQC.MQCMHO_STRUC_ID, "Version": CMQC.MQCMHO_VERSION_1,
               "Options": CMQC.MQCMHO_DEFAULT_VALIDATION}


class DMHO(MQOpts):
    """Delete-message-handle options (MQDMHO)."""

    _fields = {"StrucId": CMQC.MQDMHO_STRUC_ID, "Version": CMQC.MQDMHO_VERSION_1, "Options": CMQC.MQDMHO_NONE}


class PD(MQOpts):
    """Property descriptor (MQPD): accepted, as a client-side handle has nothing to enforce."""

    _fields = {"StrucId": CMQC.MQPD_STRUC_ID, "Version": CMQC.MQPD_VERSION_1, "Options": CMQC.MQPD_NONE,
               "Support": CMQC.MQPD_SUPPORT_OPTIONAL, "Context": CMQC.MQPD_NO_CONTEXT,
               "CopyOptions": CMQC.MQCOPY_DEFAULT}


class SMPO(MQOpts):
    """Set-message-property options (MQSMPO)."""

    _fields = {"StrucId": CMQC.MQSMPO_STRUC_ID, "Version": CMQC.MQSMPO_VERSION_1,
               "Options": CMQC.MQSMPO_SET_FIRST, "ValueEncoding": CMQC.MQENC_NATIVE,
               "ValueCCSID": CMQC.MQCCSI_APPL}


class DMPO(MQOpts):
    """Delete-message-property options (MQDMPO)."""

    _fields = {"StrucId": CMQC.MQDMPO_STRUC_ID, "Version": CMQC.MQDMPO_VERSION_1,
               "Options": CMQC.MQDMPO_DEL_FIRST}


class IMPO(MQOpts):
    """Inquire-message-property options (MQIMPO); ``TypeString`` and the returned fields are set
    by an inquiry."""

    _fields = {"StrucId": CMQC.MQIMPO_STRUC_ID, "Version": CMQC.MQIMPO_VERSION_1,
               "Options": CMQC.MQIMPO_INQ_FIRST, "RequestedEncoding": CMQC.MQENC_NATIVE,
               "RequestedCCSID": CMQC.MQCCSI_APPL, "ReturnedEncoding": CMQC.MQENC_NATIVE,
               "ReturnedCCSID": 0, "Reserved1": 0, "ReturnedNameVSPtr": 0, "ReturnedNameVSOffset": 0,
               "ReturnedNameVSBufSize": 0, "ReturnedNameVSLength": 0, "ReturnedNameVSCCSID": 0,
               "TypeString": b""}


# ---- property names, types and values ------------------------------------------------------------

_NAME = re.compile(r"[A-Za-z_$][A-Za-z0-9_$.]{0,254}")
_INT_RANGES = {CMQC.MQTYPE_INT8: 8, CMQC.MQTYPE_INT16: 16, CMQC.MQTYPE_INT32: 32, CMQC.MQTYPE_INT64: 64}
_FLOATS = (CMQC.MQTYPE_FLOAT32, CMQC.MQTYPE_FLOAT64)
_KNOWN_TYPES = frozenset((CMQC.MQTYPE_NULL, CMQC.MQTYPE_BOOLEAN, CMQC.MQTYPE_BYTE_STRING, CMQC.MQTYPE_STRING,
                          *_INT_RANGES, *_FLOATS))


def _fail(reason: int, message: str) -> MQMIError:
    return MQMIError(CMQC.MQCC_FAILED, reason, message)


def _name_text(name: Any) -> str:
    if isinstance(name, (bytes, bytearray)):
        name = bytes(name).decode("utf-8", "replace")
    if not isinstance(name, str):
        raise _fail(CMQC.MQRC_PROPERTY_NAME_ERROR, "a property name is str or bytes")
    return name.strip().rstrip("\0")


def canonical_name(name: Any) -> str:
    """A property name as stored: the ``usr`` folder is the default one, so ``usr.X`` is ``X``."""
    text = _name_text(name)
    return text[4:] if text.startswith("usr.") else text


def _settable_name(name: Any) -> str:
    """The canonical name of a property to set, or MQRC_PROPERTY_NAME_ERROR as MQSETMP gives it."""
    text = canonical_name(name)
    if not _NAME.fullmatch(text) or text.upper().startswith("JMS") or text.endswith("."):
        raise _fail(CMQC.MQRC_PROPERTY_NAME_ERROR, f"'{_name_text(name)}' is not a valid property name")
    return text


def _typed(value: Any, property_type: int, value_length: int) -> Any:
    """The value of an MQSETMP checked against its type (MQRC_PROPERTY_TYPE_ERROR when it is not
    one), cut to ``value_length`` for strings when that is given."""
    if property_type not in _KNOWN_TYPES:
        raise _fail(CMQC.MQRC_PROPERTY_TYPE_ERROR, f"property type {property_type} is not valid")
    if property_type == CMQC.MQTYPE_NULL:
        return None
    if property_type == CMQC.MQTYPE_STRING:
        if isinstance(value, (bytes, bytearray)):
            value = bytes(value).decode("utf-8")
        if not isinstance(value, str):
            raise _fail(CMQC.MQRC_PROPERTY_TYPE_ERROR, "an MQTYPE_STRING property is str")
        value = value.split("\0", 1)[0] if value_length == CMQC.MQVL_NULL_TERMINATED else value[:value_length]
        return value
    if property_type == CMQC.MQTYPE_BYTE_STRING:
        if isinstance(value, str):
            value = value.encode("utf-8")
        if not isinstance(value, (bytes, bytearray)):
            raise _fail(CMQC.MQRC_PROPERTY_TYPE_ERROR, "an MQTYPE_BYTE_STRING property is bytes")
        return bytes(value) if value_length < 0 else bytes(value)[:value_length]
    if property_type == CMQC.MQTYPE_BOOLEAN:
        if not isinstance(value, (bool, int)):
            raise _fail(CMQC.MQRC_PROPERTY_TYPE_ERROR, "an MQTYPE_BOOLEAN property is bool")
        return bool(value)
    if property_type in _INT_RANGES:
        bits = _INT_RANGES[property_type]
        if isinstance(value, bool) or not isinstance(value, int) or not -(1 << bits - 1) <= value < 1 << bits - 1:
            raise _fail(CMQC.MQRC_PROPERTY_TYPE_ERROR, f"the value is not an integer of {bits} bits")
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _fail(CMQC.MQRC_PROPERTY_TYPE_ERROR, "a float property is a number")
    if property_type == CMQC.MQTYPE_FLOAT32:
        return struct.unpack("<f", struct.pack("<f", float(value)))[0]  # what a 4-byte float holds
    return float(value)


def _type_of(value: Any) -> int:
    """The MQTYPE of a property got from a message (its JSON value)."""
    if value is None:
        return CMQC.MQTYPE_NULL
    if isinstance(value, bool):
        return CMQC.MQTYPE_BOOLEAN
    if isinstance(value, int):
        return CMQC.MQTYPE_INT64
    if isinstance(value, float):
        return CMQC.MQTYPE_FLOAT64
    if isinstance(value, bytes):
        return CMQC.MQTYPE_BYTE_STRING
    return CMQC.MQTYPE_STRING


def _converted(value: Any, have: int, want: int, options: int) -> Any:
    """The value of an MQINQMP asked as type ``want``: the integer types are one family here (the
    JSON keeps no width), as are the float types; anything else only with MQIMPO_CONVERT_TYPE."""
    if want in (CMQC.MQTYPE_AS_SET, have):
        return value
    if want in _INT_RANGES and have in _INT_RANGES:
        return _typed(value, want, -1)
    if want in _FLOATS and have in _FLOATS:
        return _typed(value, want, -1)
    if not options & CMQC.MQIMPO_CONVERT_TYPE:
        raise _fail(CMQC.MQRC_PROPERTY_TYPE_ERROR, "the property has another type (MQIMPO_CONVERT_TYPE converts)")
    try:
        if want == CMQC.MQTYPE_STRING:
            if isinstance(value, bool):
                return "TRUE" if value else "FALSE"
            return value.decode("utf-8") if isinstance(value, bytes) else ("" if value is None else str(value))
        if want in _INT_RANGES:
            return _typed(int(value), want, -1)
        if want in _FLOATS:
            return _typed(float(value), want, -1)
        if want == CMQC.MQTYPE_BOOLEAN:
            return str(value).upper() in ("TRUE", "1") if isinstance(value, str) else bool(value)
        if want == CMQC.MQTYPE_BYTE_STRING:
            return value.encode("utf-8") if isinstance(value, str) else value
    except (TypeError, ValueError, MQMIError):
        pass
    raise _fail(CMQC.MQRC_PROP_CONV_NOT_SUPPORTED, f"property of type {have} cannot be converted to {want}")


def to_wire(value: Any) -> Any:
    """A property value as docs/api.md's md.properties carries it."""
    if isinstance(value, bytes):
        return {"$bytes": base64.b64encode(value).decode("ascii")}
    return value


def from_wire(value: Any) -> Any:
    if isinstance(value, dict) and "$bytes" in value:
        return base64.b64decode(value["$bytes"])
    return value


# ---- message handles ---------------------------------------------------------------------------------


@dataclass
class _Store:
    """What one message handle holds: its connection ("" = unassociated), its properties in the
    order they were set, and the MQINQMP cursor."""

    hconn: str
    props: dict[str, tuple[int, Any]] = field(default_factory=dict)
    cursor: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


_handles: dict[int, _Store] = {}
_next_handle = itertools.count(1)
_registry_lock = threading.Lock()


def _store(msg_handle: Any) -> _Store:
    store = _handles.get(msg_handle) if isinstance(msg_handle, int) else None
    if store is None:
        raise _fail(CMQC.MQRC_HMSG_ERROR, f"{msg_handle!r} is not a message handle")
    return store


def _hconn_of(qmgr: Any) -> str:
    if qmgr is None:
        return ""
    hconn = qmgr.get_handle()
    if not hconn:
        raise _fail(CMQC.MQRC_HCONN_ERROR, "not connected")
    return str(hconn)


class MessageHandle:
    """A message handle (MQCRTMH) with its ``properties``; ``msg_handle`` is the integer a PMO
    or GMO names. ``MessageHandle(None)`` is not tied to a connection; ``dup_handle`` wraps an
    existing handle number (as ibmmq does for a handle a callback hands over)."""

    def __init__(self, qmgr: Any = None, cmho: CMHO | None = None, dup_handle: int | None = None) -> None:
        if cmho is not None and not isinstance(cmho, CMHO):
            raise TypeError("cmho must be an instance of CMHO")
        if dup_handle is None:
            hconn = _hconn_of(qmgr)
            with _registry_lock:
                self.msg_handle = next(_next_handle)
                _handles[self.msg_handle] = _Store(hconn)
            self.conn_handle = hconn
            self.duplicated = False
        else:
            self.conn_handle = _store(dup_handle).hconn
            self.msg_handle = dup_handle
            self.duplicated = True
        self.properties = Properties(self.msg_handle)

    def get_handle(self) -> int:
        return self.msg_handle

    def get_queue_manager(self) -> str:
        return self.conn_handle

    def dlt(self, dmho: DMHO | None = None) -> None:
        """MQDLTMH: the handle and its properties are gone; using it again is MQRC_HMSG_ERROR."""
        if self.duplicated:
            raise _fail(CMQC.MQRC_HMSG_ERROR, "a duplicated handle is deleted through its original")
        with _registry_lock:
            if _handles.pop(self.msg_handle, None) is None:
                raise _fail(CMQC.MQRC_HMSG_ERROR, "the message handle was deleted")
        self.properties = Properties(CMQC.MQHM_UNUSABLE_HMSG)

    delete = dlt


class Properties:
    """The properties of one message handle (pymqi's and ibmmq's ``MessageHandle.properties``)."""

    def __init__(self, msg_handle: int) -> None:
        self.msg_handle = msg_handle
        self.default_value_length = 64

    def __getitem__(self, name: str | bytes) -> Any:
        try:
            return self.get(name)
        except MQMIError as exc:
            if exc.reason == CMQC.MQRC_PROPERTY_NOT_AVAILABLE:
                raise KeyError(f"No such property [{_name_text(name)}]") from None
            raise

    def __setitem__(self, name: str | bytes, value: Any) -> None:
        self.set(name, value)

    def set(self, name: str | bytes, value: Any, property_type: int = CMQC.MQTYPE_STRING,
            value_length: int = CMQC.MQVL_NULL_TERMINATED, pd: PD | None = None, smpo: SMPO | None = None) -> None:
        """MQSETMP: set (or replace) a property; ``property_type`` is one of CMQC.MQTYPE_*."""
        store = _store(self.msg_handle)
        canonical = _settable_name(name)
        typed = _typed(value, property_type, value_length)
        with store.lock:
            store.props[canonical] = (property_type, typed)

    def get(self, name: str | bytes, default: Any = None, max_value_length: int | None = None,
            impo_options: int = CMQC.MQIMPO_INQ_FIRST, impo: IMPO | None = None, pd: Any = None,
            property_type: int = CMQC.MQTYPE_AS_SET) -> Any:
        """MQINQMP: the value of a property (of the type asked, MQTYPE_AS_SET for as it was set).
        A wildcard name (``%``, ``usr.%``, ``folder.%``) walks the matching properties with
        MQIMPO_INQ_FIRST then MQIMPO_INQ_NEXT and returns ``(value, name)``."""
        store = _store(self.msg_handle)
        if impo is not None and not isinstance(impo, IMPO):
            raise TypeError("impo must be an instance of IMPO")
        options = impo.Options if impo is not None else impo_options
        text = _name_text(name)
        wildcard = text.endswith("%")
        prefix = canonical_name(text[:-1]) if wildcard else ""
        with store.lock:
            found = self._find(store, canonical_name(text), wildcard, prefix, options)
            if found is None:
                raise _fail(CMQC.MQRC_PROPERTY_NOT_AVAILABLE, f"no property {text}")
            store.cursor = found
            have, value = store.props[found]
        value = _converted(value, have, property_type, options)
        limit = max_value_length or self.default_value_length
        size = len(value.encode("utf-8")) if isinstance(value, str) else len(value) if isinstance(value, bytes) else 0
        if size > limit and not options & CMQC.MQIMPO_QUERY_LENGTH:
            raise MQMIError(CMQC.MQCC_FAILED, CMQC.MQRC_PROPERTY_VALUE_TOO_BIG,
                            f"the value is {size} bytes, more than {limit}")
        if impo is not None:
            impo.TypeString = b""
        return (value, found) if wildcard else value

    @staticmethod
    def _find(store: _Store, name: str, wildcard: bool, prefix: str, options: int) -> str | None:
        if not wildcard:
            return name if name in store.props else None
        names = [n for n in store.props if n.startswith(prefix)]
        if options & CMQC.MQIMPO_INQ_PROP_UNDER_CURSOR:
            return store.cursor if store.cursor in names else None
        if options & CMQC.MQIMPO_INQ_NEXT and store.cursor is not None:
            order = list(store.props)
            after = order.index(store.cursor) + 1 if store.cursor in store.props else 0
            names = [n for n in order[after:] if n.startswith(prefix)]
        return names[0] if names else None

    def dlt(self, name: str | bytes, dmpo: DMPO | None = None) -> None:
        """MQDLTMP: delete a property; one that is not there is MQRC_PROPERTY_NOT_AVAILABLE."""
        store = _store(self.msg_handle)
        canonical = canonical_name(name)
        with store.lock:
            if store.props.pop(canonical, None) is None and canonical not in store.props:
                raise _fail(CMQC.MQRC_PROPERTY_NOT_AVAILABLE, f"no property {_name_text(name)}")
            if store.cursor == canonical:
                store.cursor = None

    delete = dlt


# ---- the hooks of MQPUT and MQGET (app.client.session) ---------------------------------------------


def _connection_store(msg_handle: int, hconn: str) -> _Store:
    store = _store(msg_handle)
    if store.hconn and store.hconn != hconn:
        raise _fail(CMQC.MQRC_HMSG_ERROR, "the message handle belongs to another connection")
    return store


def put_properties(pmo: PMO, hconn: str) -> dict[str, Any] | None:
    """The md.properties of an MQPUT whose PMO names message handles: the original message's
    (OriginalMsgHandle) overlaid with the new ones (NewMsgHandle), as MQPUT merges them."""
    original, new = pmo.OriginalMsgHandle, pmo.NewMsgHandle
    if not original and not new:
        return None
    out: dict[str, Any] = {}
    for msg_handle in (original, new):
        if msg_handle:
            store = _connection_store(msg_handle, hconn)
            with store.lock:
                out.update((name, to_wire(value)) for name, (_t, value) in store.props.items())
    return out


def get_handle_of(gmo: GMO, hconn: str) -> _Store | None:
    """The handle an MQGET fills (GMO.MsgHandle), checked before the message is taken; None when
    there is none or the options ask for no properties."""
    if not gmo.MsgHandle or gmo.Options & CMQC.MQGMO_NO_PROPERTIES:
        return None
    return _connection_store(gmo.MsgHandle, hconn)


def fill(store: _Store, md: dict[str, Any]) -> None:
    """Replace the handle's properties with the got message's."""
    props = md.get("properties") or {}
    with store.lock:
        store.props = {name: (_type_of(v := from_wire(value)), v) for name, value in props.items()}
        store.cursor = None
