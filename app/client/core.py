"""What the synchronous and asyncio clients share: the MQI structures (MD, GMO, PMO, OD, CD)
with pymqi's attribute names and defaults, ``MQMIError``, and the translation between them and
the emulator's ``/v1`` request and response bodies (docs/api.md). No I/O here."""

from __future__ import annotations

import base64
import os
import re
import ssl
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

import app.client.CMQC as CMQC

DEFAULT_URL = "http://127.0.0.1:9441"
CA_FILE_ENV = "QSG_CA_FILE"


def ssl_context(ca_file: str | os.PathLike[str] | None = None) -> ssl.SSLContext | bool:
    """How a client verifies a queue manager served over https (httpx's ``verify=``, and the
    context for a wss:// session): the CA bundle ``ca_file``, else the one QSG_CA_FILE names
    (``qsg up --tls`` prints it), else ``True`` - httpx's own defaults, which also honour
    SSL_CERT_FILE. A CA file that cannot be read raises ``PYIFError`` here, naming it, rather
    than as a handshake failure later."""
    path = os.fspath(ca_file) if ca_file else os.environ.get(CA_FILE_ENV, "")
    if not path:
        return True
    try:
        return ssl.create_default_context(cafile=path)
    except (OSError, ssl.SSLError) as exc:
        raise PYIFError(f"cannot use the CA file {path}: {exc}") from None


class Error(Exception):
    """Base class of the client's exceptions (pymqi's ``pymqi.Error``)."""


class PYIFError(Error):
    """A misuse of the client itself, not an MQ reason (pymqi's ``PYIFError``)."""


_REASON_NAMES = {v: k for k, v in vars(CMQC).items() if k.startswith("MQRC_") and isinstance(v, int)}
_COMP_NAMES = {CMQC.MQCC_OK: "OK", CMQC.MQCC_WARNING: "WARNING", CMQC.MQCC_FAILED: "FAILED"}


class MQMIError(Error):
    """An MQI call that did not complete, with IBM's completion and reason codes.

    ``comp`` and ``reason`` as in pymqi and ibmmq; ``explanation`` is the queue manager's text.
    A warning (``comp == MQCC_WARNING``) is raised too, as pymqi does. Keyword arguments become
    attributes, read directly or with ``get(name)`` as ibmmq's are: for a truncated message
    (2079 accepted, 2080 failed) ``message`` is the data returned (as much of the message as
    fits the buffer; for 2080 the message stays on the queue) and ``original_length`` the
    message's whole length, as pymqi and ibmmq shape it;
    ``original_data`` is the same data (this client's older name). For every other error
    ``message`` is the explanation.
    """

    def __init__(self, comp: int, reason: int, explanation: str = "", original_data: bytes | None = None,
                 **kw: Any) -> None:
        self.comp = comp
        self.reason = reason
        self.explanation = explanation
        self.message: Any = explanation
        self.original_data = original_data
        for key, value in kw.items():
            setattr(self, key, value)
        super().__init__(self.errorAsString())

    def get(self, key: str) -> Any:
        """An attribute the error carries (ibmmq: ``e.get('original_length')``)."""
        return getattr(self, key)

    def errorAsString(self) -> str:  # noqa: N802 - pymqi's name
        """``MQI Error. Comp: 2, Reason 2033: FAILED: MQRC_NO_MSG_AVAILABLE``, as pymqi words it."""
        name = _REASON_NAMES.get(self.reason, f"MQRC_{self.reason}")
        return f"MQI Error. Comp: {self.comp}, Reason {self.reason}: {_COMP_NAMES.get(self.comp, self.comp)}: {name}"

    error_as_string = errorAsString  # ibmmq's name

    def __str__(self) -> str:
        return self.errorAsString() + (f" ({self.explanation})" if self.explanation else "")


# ---- MQI structures ----------------------------------------------------------------------------


class MQOpts:
    """A structure with a fixed set of fields and their defaults, set by attribute, by keyword
    or by item (``md.MsgId``, ``MD(MsgId=...)``, ``md['MsgId']``), as in pymqi. Unknown field
    names raise instead of being silently ignored."""

    _fields: dict[str, Any] = {}

    def __init__(self, **kw: Any) -> None:
        for name, default in self._fields.items():
            object.__setattr__(self, name, default)
        self.set(**kw)

    def __getattr__(self, name: str) -> Any:
        # Only reached for names that are not fields (fields are instance attributes); it also
        # tells type checkers that a structure's fields are its attributes.
        raise AttributeError(f"{type(self).__name__} has no field {name}")

    def __setattr__(self, name: str, value: Any) -> None:
        # Any name may be assigned, as in pymqi; only the fields are sent (``get``).
        object.__setattr__(self, name, value)

    def set(self, **kw: Any) -> None:
        """Set fields by keyword; a name that is no field raises AttributeError, as in pymqi.
        (Plain assignment of another name - ``md.ReportOptions = ...`` in IBM's samples - keeps
        an attribute that the structure ignores, as pymqi's and ibmmq's structures do.)"""
        for name, value in kw.items():
            if name not in self._fields:
                raise AttributeError(f"{type(self).__name__} has no field {name}")
            setattr(self, name, value)

    def get(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self._fields}

    def __getitem__(self, name: str) -> Any:
        return getattr(self, name)

    def __setitem__(self, name: str, value: Any) -> None:
        setattr(self, name, value)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.get().items())})"


class MD(MQOpts):
    """Message descriptor (MQMD) with pymqi's field names and MQ's defaults."""

    _fields = {
        "StrucId": b"MD  ", "Version": 1, "Report": CMQC.MQRO_NONE, "MsgType": CMQC.MQMT_DATAGRAM,
        "Expiry": CMQC.MQEI_UNLIMITED, "Feedback": CMQC.MQFB_NONE, "Encoding": CMQC.MQENC_NATIVE,
        "CodedCharSetId": CMQC.MQCCSI_Q_MGR, "Format": CMQC.MQFMT_NONE, "Priority": CMQC.MQPRI_PRIORITY_AS_Q_DEF,
        "Persistence": CMQC.MQPER_PERSISTENCE_AS_Q_DEF, "MsgId": CMQC.MQMI_NONE, "CorrelId": CMQC.MQCI_NONE,
        "BackoutCount": 0, "ReplyToQ": b"", "ReplyToQMgr": b"", "UserIdentifier": b"",
        "AccountingToken": CMQC.MQACT_NONE, "ApplIdentityData": b"", "PutApplType": 0, "PutApplName": b"",
        "PutDate": b"", "PutTime": b"", "ApplOriginData": b"", "GroupId": CMQC.MQGI_NONE, "MsgSeqNumber": 1,
        "Offset": 0, "MsgFlags": 0, "OriginalLength": -1,
    }


class GMO(MQOpts):
    """Get-message options (MQGMO). MatchOptions defaults to matching MsgId and CorrelId, as in
    MQ: reuse an MD after a get only after resetting its MsgId/CorrelId."""

    _fields = {
        "StrucId": b"GMO ", "Version": 1, "Options": CMQC.MQGMO_NO_WAIT, "WaitInterval": 0, "Signal1": 0,
        "Signal2": 0, "ResolvedQName": b"", "MatchOptions": CMQC.MQMO_MATCH_MSG_ID | CMQC.MQMO_MATCH_CORREL_ID,
        "GroupStatus": b" ", "SegmentStatus": b" ", "Segmentation": b" ", "Reserved1": b" ",
        "MsgToken": b"\0" * 16, "ReturnedLength": CMQC.MQRL_UNDEFINED,
        "Reserved2": 0, "MsgHandle": CMQC.MQHM_NONE,  # version 4: the handle a get fills (app.client.properties)
    }


class PMO(MQOpts):
    """Put-message options (MQPMO)."""

    _fields = {
        "StrucId": b"PMO ", "Version": 1, "Options": CMQC.MQPMO_NONE, "Timeout": -1, "Context": 0,
        "KnownDestCount": 0, "UnknownDestCount": 0, "InvalidDestCount": 0, "ResolvedQName": b"",
        "ResolvedQMgrName": b"",
        # version 3: the message handles whose properties a put carries (app.client.properties)
        "OriginalMsgHandle": CMQC.MQHM_NONE, "NewMsgHandle": CMQC.MQHM_NONE, "Action": CMQC.MQACTP_NEW,
    }


class OD(MQOpts):
    """Object descriptor (MQOD)."""

    _fields = {
        "StrucId": b"OD  ", "Version": 1, "ObjectType": CMQC.MQOT_Q, "ObjectName": b"", "ObjectQMgrName": b"",
        "DynamicQName": b"AMQ.*", "AlternateUserId": b"",
    }


class CD(MQOpts):
    """Channel definition (MQCD) with pymqi's fields and MQ's defaults, so that a program that
    fills one in (channel name, type, transport, cipher spec, ...) runs unchanged. Only
    ``ConnectionName`` is used: ``host(port)`` (the first of a list) is the queue manager's REST
    address, or a URL. The channel itself does not exist here: the REST API is the way in."""

    _fields = {
        "ChannelName": b"", "Version": 6, "ChannelType": CMQC.MQCHT_CLNTCONN, "TransportType": CMQC.MQXPT_TCP,
        "Desc": b"", "QMgrName": b"", "XmitQName": b"", "ShortConnectionName": b"", "MCAName": b"",
        "ModeName": b"", "TpName": b"", "BatchSize": 50, "DiscInterval": 6000, "ShortRetryCount": 10,
        "ShortRetryInterval": 60, "LongRetryCount": 999999999, "LongRetryInterval": 1200,
        "SecurityExit": b"", "MsgExit": b"", "SendExit": b"", "ReceiveExit": b"", "SeqNumberWrap": 999999999,
        "MaxMsgLength": 4194304, "PutAuthority": CMQC.MQPA_DEFAULT,
        "DataConversion": CMQC.MQCDC_NO_SENDER_CONVERSION, "SecurityUserData": b"", "MsgUserData": b"",
        "SendUserData": b"", "ReceiveUserData": b"", "UserIdentifier": b"", "Password": b"",
        "MCAUserIdentifier": b"", "MCAType": CMQC.MQMCAT_PROCESS, "ConnectionName": b"",
        "RemoteUserIdentifier": b"", "RemotePassword": b"", "MsgRetryExit": b"", "MsgRetryUserData": b"",
        "MsgRetryCount": 10, "MsgRetryInterval": 1000, "HeartbeatInterval": 300, "BatchInterval": 0,
        "NonPersistentMsgSpeed": CMQC.MQNPMS_FAST, "StrucLength": 0, "ExitNameLength": CMQC.MQ_EXIT_NAME_LENGTH,
        "ExitDataLength": CMQC.MQ_EXIT_DATA_LENGTH, "MsgExitsDefined": 0, "SendExitsDefined": 0,
        "ReceiveExitsDefined": 0, "ClustersDefined": 0, "NetworkPriority": 0, "LongMCAUserIdLength": 0,
        "LongRemoteUserIdLength": 0, "MCASecurityId": b"", "RemoteSecurityId": b"", "SSLCipherSpec": b"",
        "SSLPeerName": b"", "SSLPeerNameLength": 0, "SSLClientAuth": 0, "KeepAliveInterval": -1,
        "LocalAddress": b"", "BatchHeartbeat": 0, "HdrCompList": [0, -1], "MsgCompList": [0] + 15 * [-1],
        "CLWLChannelRank": 0, "CLWLChannelPriority": 0, "CLWLChannelWeight": 50, "ChannelMonitoring": 0,
        "ChannelStatistics": 0, "SharingConversations": 10, "PropertyControl": 0, "MaxInstances": 999999999,
        "MaxInstancesPerClient": 999999999, "ClientChannelWeight": 0, "ConnectionAffinity": 1,
        "BatchDataLimit": 5000, "UseDLQ": 2, "DefReconnect": 0, "CertificateLabel": b"", "SPLProtection": 0,
    }


class SCO(MQOpts):
    """TLS options (MQSCO) with pymqi's fields: accepted so that TLS programs run as written.
    The key repository and certificate label do not apply: give the queue manager an
    ``https://`` address and the CA file as ``ca_file`` / QSG_CA_FILE (docs/howto/tls.md)."""

    _fields = {
        "StrucId": CMQC.MQSCO_STRUC_ID, "Version": CMQC.MQSCO_VERSION_5, "KeyRepository": b"",
        "CryptoHardware": b"", "AuthInfoRecCount": 0, "AuthInfoRecOffset": 0, "AuthInfoRecPtr": 0,
        "KeyResetCount": 0, "FipsRequired": 0, "EncryptionPolicySuiteB": [1, 0, 0, 0],
        "CertificateValPolicy": 0, "CertificateLabel": b"",
    }


class CNO(MQOpts):
    """Connect options (MQCNO): accepted for pymqi compatibility; of the options only the
    handle-sharing ones mean something here (see ``QueueManager.connect_with_options``)."""

    _fields = {"StrucId": b"CNO ", "Version": 1, "Options": 0, "ConnTag": b"\0" * 128,
               "ApplName": b""}


class CSP(MQOpts):
    """Security parameters (MQCSP): the user id and password of MQCONNX, as pymqi builds from
    ``connect_with_options(..., user=, password=)`` and as IBM's ``ibmmq`` takes (``csp=``)."""

    _fields = {"StrucId": b"CSP ", "Version": 1, "AuthenticationType": CMQC.MQCSP_AUTH_USER_ID_AND_PWD,
               "CSPUserId": b"", "CSPPassword": b""}

    def __repr__(self) -> str:
        return f"CSP(CSPUserId={self.CSPUserId!r}, CSPPassword=***)"


@dataclass(frozen=True)
class Credentials:
    """How a connection authenticates to the queue managers (docs/howto/security.md): a user and
    password (HTTP basic, what MQCSP carries) or an API key (``X-API-Key``). Sent with every
    call of the connection, since each REST call is authenticated on its own."""

    user: str = ""
    password: str = field(default="", repr=False)
    api_key: str = field(default="", repr=False)

    def headers(self) -> dict[str, str]:
        if self.api_key:
            return {"X-API-Key": self.api_key}
        token = base64.b64encode(f"{self.user}:{self.password}".encode()).decode("ascii")
        return {"Authorization": f"Basic {token}"}


def _secret_text(value: Any, what: str) -> str:
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8")
    if isinstance(value, str):
        return value
    raise ValueError(f"{what} must be an instance of str or bytes")


def credentials_of(user: Any = None, password: Any = None, api_key: Any = None,
                   csp: CSP | None = None) -> Credentials | None:
    """The credentials of an MQCONN: ``user``/``password`` (or an MQCSP) as pymqi takes them,
    or an API key; None for none. As pymqi: a user without a password is a ValueError (an
    empty password is a password)."""
    if csp is not None and not user:
        if csp.AuthenticationType == CMQC.MQCSP_AUTH_NONE:
            return credentials_of(None, None, api_key)
        user, password = csp.CSPUserId, csp.CSPPassword
    user_text = _secret_text(user, "user").strip() if user else ""
    key_text = _secret_text(api_key, "api_key").strip() if api_key else ""
    if user_text and key_text:
        raise ValueError("give a user and password, or an API key, not both")
    if key_text:
        return Credentials(api_key=key_text)
    if not user_text:
        return None
    if password is None:
        raise ValueError("Password must not be None if user is provided")
    if ":" in user_text:
        raise ValueError("a user name cannot contain ':'")
    return Credentials(user=user_text, password=_secret_text(password, "password"))


# ---- small conversions -------------------------------------------------------------------------


def text(value: Any) -> str:
    """A pymqi character field (bytes or str) as stripped text."""
    if value is None:
        return ""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace").rstrip(" \0").strip()
    return str(value).strip()


def padded(value: str, length: int) -> bytes:
    """Text as a blank-padded MQ character field, as pymqi returns them."""
    return value.encode("utf-8")[:length].ljust(length, b" ")


def id_hex(value: Any, field: str) -> str:
    """A 24-byte MsgId / CorrelId as docs/api.md's 48 hex digits."""
    if isinstance(value, str):
        value = value.encode("utf-8")
    if not isinstance(value, (bytes, bytearray)) or len(value) > 24:
        raise MQMIError(CMQC.MQCC_FAILED, CMQC.MQRC_MD_ERROR, f"{field} must be at most 24 bytes")
    return bytes(value).ljust(24, b"\0").hex()


def url_of(conn_info: str | bytes | None) -> str:
    """The REST URL of a pymqi connection name (``host(port)``), a URL, the MQSERVER
    environment variable (``CHANNEL/TCP/host(port)``), or the local default (QM1 of ``qsg up``)."""
    info = text(conn_info) if conn_info else ""
    if not info:
        server = os.environ.get("MQSERVER", "")
        info = server.split("/", 2)[2] if server.count("/") >= 2 else DEFAULT_URL
    if info.startswith(("http://", "https://")):
        return info.rstrip("/")
    m = re.fullmatch(r"\s*([^\s(]+)\s*(?:\(\s*(\d+)\s*\))?\s*", info.split(",")[0])
    if not m:
        raise PYIFError(f"'{info}' is not a connection name (host(port)) or a URL")
    return f"http://{m.group(1)}:{m.group(2) or 1414}"


def queue_name(desc: Any) -> tuple[str, str]:
    """(object name, object queue manager) of an OD or a plain queue name."""
    if isinstance(desc, OD):
        return text(desc.ObjectName), text(desc.ObjectQMgrName)
    if isinstance(desc, (str, bytes)):
        return text(desc), ""
    raise PYIFError("a queue is named by a string or an OD")


# ---- options -----------------------------------------------------------------------------------

OPEN_OPTIONS = {
    CMQC.MQOO_INPUT_AS_Q_DEF: "INPUT_AS_Q_DEF", CMQC.MQOO_INPUT_SHARED: "INPUT_SHARED",
    CMQC.MQOO_INPUT_EXCLUSIVE: "INPUT_EXCLUSIVE", CMQC.MQOO_BROWSE: "BROWSE", CMQC.MQOO_OUTPUT: "OUTPUT",
    CMQC.MQOO_INQUIRE: "INQUIRE", CMQC.MQOO_SET: "SET", CMQC.MQOO_FAIL_IF_QUIESCING: "FAIL_IF_QUIESCING",
    CMQC.MQOO_SAVE_ALL_CONTEXT: "SAVE_ALL_CONTEXT", CMQC.MQOO_PASS_IDENTITY_CONTEXT: "PASS_IDENTITY_CONTEXT",
    CMQC.MQOO_PASS_ALL_CONTEXT: "PASS_ALL_CONTEXT", CMQC.MQOO_SET_IDENTITY_CONTEXT: "SET_IDENTITY_CONTEXT",
    CMQC.MQOO_SET_ALL_CONTEXT: "SET_ALL_CONTEXT", CMQC.MQOO_ALTERNATE_USER_AUTHORITY: "ALTERNATE_USER_AUTHORITY",
}
# Bits with no meaning here (binding of cluster queues): accepted and ignored.
# Read-ahead is a client-side optimisation of non-persistent gets: harmless.
OPEN_IGNORED = (CMQC.MQOO_BIND_ON_OPEN | CMQC.MQOO_BIND_NOT_FIXED | CMQC.MQOO_BIND_ON_GROUP
                | CMQC.MQOO_READ_AHEAD | CMQC.MQOO_NO_READ_AHEAD)
PUT_OPTIONS = {
    CMQC.MQPMO_SYNCPOINT: "SYNCPOINT", CMQC.MQPMO_NO_SYNCPOINT: "NO_SYNCPOINT",
    CMQC.MQPMO_NEW_MSG_ID: "NEW_MSG_ID", CMQC.MQPMO_NEW_CORREL_ID: "NEW_CORREL_ID",
    CMQC.MQPMO_FAIL_IF_QUIESCING: "FAIL_IF_QUIESCING", CMQC.MQPMO_DEFAULT_CONTEXT: "DEFAULT_CONTEXT",
    CMQC.MQPMO_NO_CONTEXT: "NO_CONTEXT", CMQC.MQPMO_PASS_IDENTITY_CONTEXT: "PASS_IDENTITY_CONTEXT",
    CMQC.MQPMO_PASS_ALL_CONTEXT: "PASS_ALL_CONTEXT", CMQC.MQPMO_SET_IDENTITY_CONTEXT: "SET_IDENTITY_CONTEXT",
    CMQC.MQPMO_SET_ALL_CONTEXT: "SET_ALL_CONTEXT", CMQC.MQPMO_ALTERNATE_USER_AUTHORITY: "ALTERNATE_USER_AUTHORITY",
    CMQC.MQPMO_LOGICAL_ORDER: "LOGICAL_ORDER",
    CMQC.MQPMO_WARN_IF_NO_SUBS_MATCHED: "WARN_IF_NO_SUBS_MATCHED",  # publications (app/client/pubsub.py)
}
# Put response types: MQPMO_ASYNC_RESPONSE puts are counted for MQSTAT (RESPONSE_AS_Q_DEF is 0).
PUT_OPTIONS[CMQC.MQPMO_ASYNC_RESPONSE] = "ASYNC_RESPONSE"
PUT_OPTIONS[CMQC.MQPMO_SYNC_RESPONSE] = "SYNC_RESPONSE"
PUT_IGNORED = 0
# What an MD supplies of the context under MQPMO_SET_IDENTITY_CONTEXT / SET_ALL_CONTEXT (docs/api.md names).
_IDENTITY = ("user_identifier", "accounting_token", "appl_identity_data")
_SET_CONTEXT = {CMQC.MQPMO_SET_IDENTITY_CONTEXT: _IDENTITY,
                CMQC.MQPMO_SET_ALL_CONTEXT: (*_IDENTITY, "put_appl_type", "put_appl_name", "put_date_time",
                                             "appl_origin_data")}
GET_OPTIONS = {
    CMQC.MQGMO_WAIT: "WAIT", CMQC.MQGMO_SYNCPOINT: "SYNCPOINT", CMQC.MQGMO_NO_SYNCPOINT: "NO_SYNCPOINT",
    CMQC.MQGMO_SYNCPOINT_IF_PERSISTENT: "SYNCPOINT_IF_PERSISTENT", CMQC.MQGMO_BROWSE_FIRST: "BROWSE_FIRST",
    CMQC.MQGMO_BROWSE_NEXT: "BROWSE_NEXT", CMQC.MQGMO_MSG_UNDER_CURSOR: "MSG_UNDER_CURSOR",
    CMQC.MQGMO_ACCEPT_TRUNCATED_MSG: "ACCEPT_TRUNCATED_MSG", CMQC.MQGMO_FAIL_IF_QUIESCING: "FAIL_IF_QUIESCING",
    # groups, marking and the browse cursor (the server answers z/OS's reasons, e.g. 2394, 2062)
    CMQC.MQGMO_LOGICAL_ORDER: "LOGICAL_ORDER", CMQC.MQGMO_ALL_MSGS_AVAILABLE: "ALL_MSGS_AVAILABLE",
    CMQC.MQGMO_ALL_SEGMENTS_AVAILABLE: "ALL_SEGMENTS_AVAILABLE", CMQC.MQGMO_MARK_SKIP_BACKOUT: "MARK_SKIP_BACKOUT",
    CMQC.MQGMO_BROWSE_MSG_UNDER_CURSOR: "BROWSE_MSG_UNDER_CURSOR", CMQC.MQGMO_LOCK: "LOCK",
    CMQC.MQGMO_UNLOCK: "UNLOCK", CMQC.MQGMO_SET_SIGNAL: "SET_SIGNAL",
}
# MQGMO_CONVERT: the queue manager converts string messages to the MD's CodedCharSetId.
GET_OPTIONS[CMQC.MQGMO_CONVERT] = "CONVERT"
GET_OPTIONS[CMQC.MQGMO_COMPLETE_MSG] = "COMPLETE_MSG"  # z/OS: needs INDXTYPE(GROUPID) (2394)
# Properties options: the body never holds an MQRFH2 here; properties reach a program only
# through the GMO's message handle (app.client.properties), which NO_PROPERTIES leaves empty.
GET_IGNORED = (CMQC.MQGMO_NO_PROPERTIES | CMQC.MQGMO_PROPERTIES_COMPATIBILITY | CMQC.MQGMO_PROPERTIES_FORCE_MQRFH2
               | CMQC.MQGMO_PROPERTIES_IN_HANDLE)


def option_names(options: int, table: dict[int, str], ignored: int, what: str, reason: int) -> list[str]:
    """MQ option bits as docs/api.md's option names; bits this emulator cannot honour fail as MQ would."""
    if not isinstance(options, int) or isinstance(options, bool) or options < 0:
        raise MQMIError(CMQC.MQCC_FAILED, reason, f"{what} options must be a non-negative integer")
    names = [name for bit, name in table.items() if options & bit]
    rest = options & ~ignored & ~sum(table)
    if rest:
        raise MQMIError(CMQC.MQCC_FAILED, reason, f"{what} options 0x{rest:08x} are not supported")
    return names


# ---- MQMD <-> docs/api.md md ------------------------------------------------------------------------

_PERSISTENCE = {CMQC.MQPER_NOT_PERSISTENT: "NOT_PERSISTENT", CMQC.MQPER_PERSISTENT: "PERSISTENT",
                CMQC.MQPER_PERSISTENCE_AS_Q_DEF: "AS_Q_DEF"}
_MSG_TYPES = {CMQC.MQMT_REQUEST: "REQUEST", CMQC.MQMT_REPLY: "REPLY", CMQC.MQMT_REPORT: "REPORT",
              CMQC.MQMT_DATAGRAM: "DATAGRAM"}
# Report families: the widest option whose bits are all set wins within a family.
_REPORT_FAMILIES = (
    ((CMQC.MQRO_EXCEPTION_WITH_FULL_DATA, "EXCEPTION_WITH_FULL_DATA"),
     (CMQC.MQRO_EXCEPTION_WITH_DATA, "EXCEPTION_WITH_DATA"), (CMQC.MQRO_EXCEPTION, "EXCEPTION")),
    ((CMQC.MQRO_EXPIRATION_WITH_FULL_DATA, "EXPIRATION_WITH_FULL_DATA"),
     (CMQC.MQRO_EXPIRATION_WITH_DATA, "EXPIRATION_WITH_DATA"), (CMQC.MQRO_EXPIRATION, "EXPIRATION")),
    ((CMQC.MQRO_COA_WITH_FULL_DATA, "COA_WITH_FULL_DATA"),
     (CMQC.MQRO_COA_WITH_DATA, "COA_WITH_DATA"), (CMQC.MQRO_COA, "COA")),
    ((CMQC.MQRO_COD_WITH_FULL_DATA, "COD_WITH_FULL_DATA"),
     (CMQC.MQRO_COD_WITH_DATA, "COD_WITH_DATA"), (CMQC.MQRO_COD, "COD")),
    ((CMQC.MQRO_PAN, "PAN"),),
    ((CMQC.MQRO_NAN, "NAN"),),
    ((CMQC.MQRO_ACTIVITY, "ACTIVITY"),),
    ((CMQC.MQRO_PASS_CORREL_ID, "PASS_CORREL_ID"),),
    ((CMQC.MQRO_PASS_MSG_ID, "PASS_MSG_ID"),),
    ((CMQC.MQRO_DISCARD_MSG, "DISCARD_MSG"),),
    ((CMQC.MQRO_PASS_DISCARD_AND_EXPIRY, "PASS_DISCARD_AND_EXPIRY"),),
)
_REPORT_BITS = {name: bits for family in _REPORT_FAMILIES for bits, name in family}


def report_names(report: int) -> list[str]:
    out = []
    for family in _REPORT_FAMILIES:
        for bits, name in family:
            if report & bits == bits:
                out.append(name)
                break
    known = 0
    for name in out:
        known |= _REPORT_BITS[name]
    if report & ~known:
        raise MQMIError(CMQC.MQCC_FAILED, CMQC.MQRC_REPORT_OPTIONS_ERROR,
                        f"report options 0x{report:08x} are not supported")
    return out


def md_to_api(md: MD) -> dict[str, Any]:
    """The application-set fields of an MD as docs/api.md's ``md``."""
    if md.Persistence not in _PERSISTENCE:
        raise MQMIError(CMQC.MQCC_FAILED, CMQC.MQRC_PERSISTENCE_ERROR, f"Persistence {md.Persistence} is not valid")
    if md.MsgType not in _MSG_TYPES:
        raise MQMIError(CMQC.MQCC_FAILED, CMQC.MQRC_MSG_TYPE_ERROR, f"MsgType {md.MsgType} is not supported")
    out = {"msg_id": id_hex(md.MsgId, "MsgId"), "correl_id": id_hex(md.CorrelId, "CorrelId"),
           "priority": md.Priority, "persistence": _PERSISTENCE[md.Persistence], "expiry": md.Expiry,
           "reply_to_q": text(md.ReplyToQ), "reply_to_qmgr": text(md.ReplyToQMgr),
           "report": report_names(md.Report), "msg_type": _MSG_TYPES[md.MsgType], "feedback": md.Feedback,
           "format": text(md.Format)}
    # The rarer fields only when they differ from MQ's defaults (smaller requests). As an MQ
    # client does, MQCCSI_Q_MGR means the client's own CCSID: this client's text is UTF-8.
    ccsid = UTF8_CCSID if md.CodedCharSetId == CMQC.MQCCSI_Q_MGR else md.CodedCharSetId
    if ccsid != UTF8_CCSID:
        out["coded_char_set_id"] = ccsid
    if md.Encoding != CMQC.MQENC_NATIVE:
        out["encoding"] = md.Encoding
    if md.GroupId != CMQC.MQGI_NONE:
        out["group_id"] = id_hex(md.GroupId, "GroupId")
    if md.MsgSeqNumber != 1:
        out["msg_seq_number"] = md.MsgSeqNumber
    if md.Offset:
        out["offset"] = md.Offset
    if md.MsgFlags:
        out["msg_flags"] = msg_flag_names(md.MsgFlags)
    if md.OriginalLength != CMQC.MQOL_UNDEFINED:
        out["original_length"] = md.OriginalLength
    return out


_MSG_FLAGS = {CMQC.MQMF_SEGMENTATION_ALLOWED: "SEGMENTATION_ALLOWED", CMQC.MQMF_SEGMENT: "SEGMENT",
              CMQC.MQMF_LAST_SEGMENT: "LAST_SEGMENT", CMQC.MQMF_MSG_IN_GROUP: "MSG_IN_GROUP",
              CMQC.MQMF_LAST_MSG_IN_GROUP: "LAST_MSG_IN_GROUP"}


def msg_flag_names(flags: int) -> list[str]:
    """MQMF_ bits as docs/api.md's msg_flags names; an unknown bit fails as MQ fails it (2249)."""
    if not isinstance(flags, int) or flags & ~sum(_MSG_FLAGS):
        raise MQMIError(CMQC.MQCC_FAILED, CMQC.MQRC_MSG_FLAGS_ERROR, f"MsgFlags {flags!r} are not valid")
    return [name for bit, name in _MSG_FLAGS.items() if flags & bit]


def context_to_api(md: MD, fields: tuple[str, ...]) -> dict[str, Any]:
    """The context fields of an MD (``fields``: docs/api.md names) as docs/api.md's ``md`` holds
    them, for a put that sets context (MQPMO_SET_IDENTITY_CONTEXT / SET_ALL_CONTEXT)."""
    values = {"user_identifier": lambda: text(md.UserIdentifier),
              "accounting_token": lambda: bytes(md.AccountingToken).ljust(32, b"\0")[:32].hex(),
              "appl_identity_data": lambda: text(md.ApplIdentityData),
              "put_appl_type": lambda: md.PutApplType, "put_appl_name": lambda: text(md.PutApplName),
              "put_date_time": lambda: _put_date_time(md), "appl_origin_data": lambda: text(md.ApplOriginData)}
    return {name: values[name]() for name in fields}


def _put_date_time(md: MD) -> str:
    """PutDate (YYYYMMDD) and PutTime (HHMMSSTH) as docs/api.md's ISO-8601 put_date_time."""
    date, time_ = text(md.PutDate), text(md.PutTime)
    if len(date) != 8 or len(time_) < 6:
        return ""
    hundredths = time_[6:8].ljust(2, "0")
    return f"{date[:4]}-{date[4:6]}-{date[6:8]}T{time_[:2]}:{time_[2:4]}:{time_[4:6]}.{hundredths}0Z"


def md_from_api(md: MD, api: dict[str, Any]) -> None:
    """Update an MD in place from a returned docs/api.md ``md`` (what MQ does to the caller's MQMD)."""
    inverse_persistence = {v: k for k, v in _PERSISTENCE.items()}
    inverse_types = {v: k for k, v in _MSG_TYPES.items()}
    report = 0
    for name in api.get("report", []):
        report |= _REPORT_BITS.get(name, 0)
    md.set(MsgId=bytes.fromhex(api["msg_id"]), CorrelId=bytes.fromhex(api.get("correl_id", "0" * 48)),
           Priority=api.get("priority", md.Priority),
           Persistence=inverse_persistence.get(str(api.get("persistence")), md.Persistence),
           Expiry=api.get("expiry", md.Expiry), ReplyToQ=padded(api.get("reply_to_q", ""), 48),
           ReplyToQMgr=padded(api.get("reply_to_qmgr", ""), 48), Report=report,
           MsgType=inverse_types.get(str(api.get("msg_type")), md.MsgType), Feedback=api.get("feedback", 0),
           Format=padded(api.get("format", ""), 8), BackoutCount=api.get("backout_count", 0),
           PutApplName=padded(api.get("put_appl_name", ""), 28),
           UserIdentifier=padded(api.get("user_identifier") or "", 12),  # who put it (authentication on)
           Encoding=api.get("encoding", CMQC.MQENC_NATIVE), CodedCharSetId=api.get("coded_char_set_id", UTF8_CCSID),
           GroupId=bytes.fromhex(api.get("group_id", "0" * 48)), MsgSeqNumber=api.get("msg_seq_number", 1),
           Offset=api.get("offset", 0), OriginalLength=api.get("original_length", CMQC.MQOL_UNDEFINED),
           MsgFlags=sum(bit for bit, name in _MSG_FLAGS.items() if name in api.get("msg_flags", [])),
           AccountingToken=bytes.fromhex(api.get("accounting_token", "0" * 64)),
           ApplIdentityData=padded(api.get("appl_identity_data", ""), 32), PutApplType=api.get("put_appl_type", 0),
           ApplOriginData=padded(api.get("appl_origin_data", ""), 4))
    stamp = api.get("put_date_time")
    if stamp:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        md.set(PutDate=when.strftime("%Y%m%d").encode(),
               PutTime=(when.strftime("%H%M%S") + f"{when.microsecond // 10000:02d}").encode())


# ---- request and response bodies --------------------------------------------------------------


def string_message(msg: Any, md: MD) -> None:
    """As pymqi does: a ``str`` message is put as text, its MD saying so (MQFMT_STRING, CCSID 1208,
    UTF-8), so that a receiver - or IBM's REST API - reads it as text."""
    if isinstance(msg, str):
        md.Format = CMQC.MQFMT_STRING
        md.CodedCharSetId = UTF8_CCSID


UTF8_CCSID = 1208


def message_bytes(msg: Any) -> bytes:
    if isinstance(msg, str):
        return msg.encode("utf-8")
    if isinstance(msg, (bytes, bytearray, memoryview)):
        return bytes(msg)
    raise PYIFError("a message is bytes or str")


def put_request(msg: Any, md: MD, pmo: PMO) -> dict[str, Any]:
    """docs/api.md's put body (data always base64: bytes go through unchanged): with
    MQPMO_SET_*_CONTEXT the MD's context fields too, with MQPMO_PASS_*_CONTEXT the handle of
    ``pmo.Context`` (a Queue opened with MQOO_SAVE_ALL_CONTEXT, or its handle)."""
    body: dict[str, Any] = {
        "md": md_to_api(md),
        "options": option_names(pmo.Options, PUT_OPTIONS, PUT_IGNORED, "put", CMQC.MQRC_OPTIONS_ERROR),
        "data": base64.b64encode(message_bytes(msg)).decode("ascii"), "data_encoding": "base64"}
    for bit, fields in _SET_CONTEXT.items():
        if pmo.Options & bit:
            body["md"].update(context_to_api(md, fields))
    if pmo.Options & (CMQC.MQPMO_PASS_IDENTITY_CONTEXT | CMQC.MQPMO_PASS_ALL_CONTEXT):
        body["context"] = context_handle(pmo.Context)
    return body


def context_handle(context: Any) -> str | None:
    """MQPMO Context as the put body's ``context``: a Queue object's handle, or a handle as
    ``Queue.get_handle`` gives it; 0 (MQHO_NONE) or an unopened Queue: none (the queue manager
    answers MQRC_CONTEXT_HANDLE_ERROR)."""
    if isinstance(context, str):
        return context
    if isinstance(context, int) and not isinstance(context, bool):
        return str(context) if context else None
    hobj = getattr(context, "_hobj", None)
    return hobj if isinstance(hobj, str) else None


@dataclass(frozen=True)
class GetCall:
    """An MQGET as a request body, with the read timeout the wait needs."""

    body: dict[str, Any]
    wait_ms: int


_MATCH_ALL = (CMQC.MQMO_MATCH_MSG_ID | CMQC.MQMO_MATCH_CORREL_ID | CMQC.MQMO_MATCH_GROUP_ID
              | CMQC.MQMO_MATCH_MSG_SEQ_NUMBER | CMQC.MQMO_MATCH_OFFSET | CMQC.MQMO_MATCH_MSG_TOKEN)
_GROUP_STATUS = {"MSG_IN_GROUP": CMQC.MQGS_MSG_IN_GROUP, "LAST_MSG_IN_GROUP": CMQC.MQGS_LAST_MSG_IN_GROUP}


def get_request(max_length: int | None, md: MD, gmo: GMO) -> GetCall:
    """docs/api.md's get body. As MQ does, the MD's MsgId and CorrelId select the message when
    ``gmo.MatchOptions`` asks for them and they are not MQMI_NONE / MQCI_NONE."""
    options = option_names(gmo.Options, GET_OPTIONS, GET_IGNORED, "get", CMQC.MQRC_OPTIONS_ERROR)
    body: dict[str, Any] = {"options": options}
    match: dict[str, Any] = {}
    if gmo.MatchOptions & ~_MATCH_ALL:
        raise MQMIError(CMQC.MQCC_FAILED, CMQC.MQRC_MATCH_OPTIONS_ERROR, "unknown MQMO_ match option")
    if gmo.MatchOptions & CMQC.MQMO_MATCH_GROUP_ID and id_hex(md.GroupId, "GroupId") != "0" * 48:
        match["group_id"] = id_hex(md.GroupId, "GroupId")
    if gmo.MatchOptions & CMQC.MQMO_MATCH_MSG_SEQ_NUMBER:
        match["msg_seq_number"] = md.MsgSeqNumber
    if gmo.MatchOptions & CMQC.MQMO_MATCH_OFFSET:
        match["offset"] = md.Offset
    if gmo.MatchOptions & CMQC.MQMO_MATCH_MSG_TOKEN:
        match["msg_token"] = bytes(gmo.MsgToken).hex().upper()
    if gmo.MatchOptions & CMQC.MQMO_MATCH_MSG_ID and id_hex(md.MsgId, "MsgId") != "0" * 48:
        match["msg_id"] = id_hex(md.MsgId, "MsgId")
    if gmo.MatchOptions & CMQC.MQMO_MATCH_CORREL_ID and id_hex(md.CorrelId, "CorrelId") != "0" * 48:
        match["correl_id"] = id_hex(md.CorrelId, "CorrelId")
    if match:
        body["match"] = match
    if gmo.Options & CMQC.MQGMO_CONVERT:
        # the MD names what the data is wanted in; MQCCSI_Q_MGR on a client is the client's own
        # CCSID (IBM MQ clients send their CCSID), UTF-8 here
        ccsid = UTF8_CCSID if md.CodedCharSetId == CMQC.MQCCSI_Q_MGR else md.CodedCharSetId
        body["md"] = {"coded_char_set_id": ccsid, "encoding": md.Encoding}
    wait_ms = 0
    if gmo.Options & CMQC.MQGMO_WAIT:
        if gmo.WaitInterval < CMQC.MQWI_UNLIMITED:
            raise MQMIError(CMQC.MQCC_FAILED, CMQC.MQRC_WAIT_INTERVAL_ERROR, "WaitInterval must be -1 or >= 0")
        wait_ms = gmo.WaitInterval
        body["wait_ms"] = wait_ms
    if max_length is not None:
        if max_length < 0:
            raise MQMIError(CMQC.MQCC_FAILED, CMQC.MQRC_BUFFER_LENGTH_ERROR, "max_length must be >= 0")
        body["buffer_length"] = max_length
    return GetCall(body, wait_ms)


def get_result(result: dict[str, Any], md: MD, gmo: GMO) -> bytes:
    """The message body of a get response; updates ``md`` and ``gmo.ReturnedLength``."""
    md_from_api(md, result["md"])
    if result.get("data_encoding") == "base64":
        data = base64.b64decode(result.get("data", ""))
    else:
        data = str(result.get("data", "")).encode("utf-8")
    gmo.ReturnedLength = len(data)
    gmo.GroupStatus = _GROUP_STATUS.get(result.get("group_status", ""), CMQC.MQGS_NOT_IN_GROUP)
    if result.get("msg_token"):
        gmo.MsgToken = bytes.fromhex(result["msg_token"])
    if result.get("completion_code"):
        raise MQMIError(result["completion_code"], result["reason"], result.get("message", ""), original_data=data,
                        message=data, original_length=int(result.get("data_length", len(data))))
    return data


class Reply(Protocol):
    """The answer to one call: an ``httpx.Response``, or a session's answer frame
    (``app.client.session.FrameReply``) - the same status and body either way."""

    @property
    def status_code(self) -> int: ...

    def json(self) -> Any: ...


def error_of(response: Reply) -> MQMIError | None:
    """The MQMIError an answer carries (the error body of docs/api.md §2), or None for success."""
    if response.status_code < 300:
        return None
    try:
        err = response.json()["error"]
        if "data_length" in err:  # 2080 from a server that answered it as an error: the length a buffer needs
            return MQMIError(int(err["completion_code"]), int(err["reason"]), str(err.get("message", "")),
                             message=b"", original_length=int(err["data_length"]))
        return MQMIError(int(err["completion_code"]), int(err["reason"]), str(err.get("message", "")))
    except (ValueError, KeyError, TypeError):
        return MQMIError(CMQC.MQCC_FAILED, CMQC.MQRC_UNEXPECTED_ERROR,
                         f"HTTP {response.status_code} without an MQ error body")


def warning_of(body: dict[str, Any]) -> MQMIError | None:
    """A completed call's warning (completion code 1, e.g. 2049), raised as pymqi does."""
    if body.get("completion_code"):
        return MQMIError(int(body["completion_code"]), int(body["reason"]), str(body.get("message", "")))
    return None


# Integer and character attributes MQINQ / MQSET can reach, by selector: (MQSC name, decode).
def _yes(value: Any, true_word: str, mq_true: int, mq_false: int) -> int:
    return mq_true if str(value).upper() == true_word else mq_false


INQUIRE_SELECTORS: dict[int, tuple[str, Any]] = {
    CMQC.MQIA_CURRENT_Q_DEPTH: ("CURDEPTH", int),
    CMQC.MQIA_MAX_Q_DEPTH: ("MAXDEPTH", int),
    CMQC.MQIA_MAX_MSG_LENGTH: ("MAXMSGL", int),
    CMQC.MQIA_OPEN_INPUT_COUNT: ("IPPROCS", int),
    CMQC.MQIA_OPEN_OUTPUT_COUNT: ("OPPROCS", int),
    CMQC.MQIA_DEF_PRIORITY: ("DEFPRTY", int),
    CMQC.MQIA_BACKOUT_THRESHOLD: ("BOTHRESH", int),
    CMQC.MQIA_TRIGGER_DEPTH: ("TRIGDPTH", int),
    CMQC.MQIA_TRIGGER_MSG_PRIORITY: ("TRIGMPRI", int),
    CMQC.MQIA_INHIBIT_GET: ("GET", lambda v: _yes(v, "DISABLED", CMQC.MQQA_GET_INHIBITED, CMQC.MQQA_GET_ALLOWED)),
    CMQC.MQIA_INHIBIT_PUT: ("PUT", lambda v: _yes(v, "DISABLED", CMQC.MQQA_PUT_INHIBITED, CMQC.MQQA_PUT_ALLOWED)),
    CMQC.MQIA_DEF_PERSISTENCE: ("DEFPSIST", lambda v: _yes(v, "YES", CMQC.MQPER_PERSISTENT, CMQC.MQPER_NOT_PERSISTENT)),
    CMQC.MQIA_TRIGGER_CONTROL: ("TRIGGER", lambda v: _yes(v, "TRIGGER", CMQC.MQTC_ON, CMQC.MQTC_OFF)),
    CMQC.MQIA_TRIGGER_TYPE: ("TRIGTYPE", lambda v: {"NONE": 0, "FIRST": 1, "EVERY": 2, "DEPTH": 3}.get(str(v), 0)),
    CMQC.MQIA_Q_TYPE: ("TYPE", lambda v: CMQC.MQQT_ALIAS if v == "QALIAS" else CMQC.MQQT_LOCAL),
    CMQC.MQCA_Q_NAME: ("QUEUE", lambda v: padded(str(v), 48)),
    CMQC.MQCA_Q_DESC: ("DESCR", lambda v: padded(str(v), 64)),
    CMQC.MQCA_TRIGGER_DATA: ("TRIGDATA", lambda v: padded(str(v), 64)),
    CMQC.MQCA_PROCESS_NAME: ("PROCESS", lambda v: padded(str(v), 48)),
    CMQC.MQCA_INITIATION_Q_NAME: ("INITQ", lambda v: padded(str(v), 48)),
    CMQC.MQCA_BACKOUT_REQ_Q_NAME: ("BOQNAME", lambda v: padded(str(v), 48)),
    CMQC.MQCA_CF_STRUC_NAME: ("CFSTRUCT", lambda v: padded(str(v), 12)),
}


def inquire_value(attrs: dict[str, Any], selector: int) -> Any:
    if selector not in INQUIRE_SELECTORS:
        raise MQMIError(CMQC.MQCC_FAILED, CMQC.MQRC_SELECTOR_ERROR, f"selector {selector} is not supported")
    name, decode = INQUIRE_SELECTORS[selector]
    return decode(attrs.get(name, 0))


def set_request(selector: int, value: Any) -> dict[str, Any]:
    """An MQSET of one attribute as docs/api.md's PATCH body."""
    if selector == CMQC.MQIA_INHIBIT_GET:
        return {"GET": "DISABLED" if value == CMQC.MQQA_GET_INHIBITED else "ENABLED"}
    if selector == CMQC.MQIA_INHIBIT_PUT:
        return {"PUT": "DISABLED" if value == CMQC.MQQA_PUT_INHIBITED else "ENABLED"}
    if selector == CMQC.MQIA_TRIGGER_CONTROL:
        return {"TRIGGER": value == CMQC.MQTC_ON}
    if selector == CMQC.MQIA_TRIGGER_TYPE:
        return {"TRIGTYPE": {0: "NONE", 1: "FIRST", 2: "EVERY", 3: "DEPTH"}.get(value, "NONE")}
    if selector == CMQC.MQIA_TRIGGER_DEPTH:
        return {"TRIGDPTH": value}
    if selector == CMQC.MQIA_TRIGGER_MSG_PRIORITY:
        return {"TRIGMPRI": value}
    if selector == CMQC.MQCA_TRIGGER_DATA:
        return {"TRIGDATA": text(value)}
    raise MQMIError(CMQC.MQCC_FAILED, CMQC.MQRC_SELECTOR_ERROR, f"selector {selector} cannot be set by MQSET")


# ---- pymqi's connection and inquiry conventions ------------------------------------------------

# MQCONNX options under which a thread may connect again without MQRC_ALREADY_CONNECTED.
SHARE_OPTIONS = CMQC.MQCNO_HANDLE_SHARE_BLOCK | CMQC.MQCNO_HANDLE_SHARE_NO_BLOCK
# What the queue manager says of itself to MQINQ (the emulated level, IBM MQ for z/OS 9.3).
QMGR_VERSION = b"09030000"


def already_connected(qmgr_name: str) -> MQMIError:
    """MQCONN on a connected object: a warning (MQCC_WARNING, 2002) and the connection stays,
    as pymqi raises it from MQCONNX."""
    return MQMIError(CMQC.MQCC_WARNING, CMQC.MQRC_ALREADY_CONNECTED, f"already connected to {qmgr_name}")


def connect_arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[CD | None, SCO | None, int]:
    """(cd, sco, opts) of pymqi's ``connect_with_options(name, cd, sco)`` or its keywords
    (``opts`` an int or an MQCNO)."""
    if len(args) > 2:
        raise TypeError(f"Invalid options: {args}")
    cd = args[0] if args else kwargs.get("cd")
    sco = args[1] if len(args) > 1 else kwargs.get("sco")
    opts = kwargs.get("opts", CMQC.MQCNO_NONE)
    if isinstance(opts, CNO):
        opts = opts.Options
    if cd is not None and not isinstance(cd, CD):
        raise PYIFError("cd must be a CD")
    return cd, sco, int(opts or 0)


def selectors_of(selector: int | list[int] | tuple[int, ...]) -> tuple[list[int], bool]:
    """The selectors of an MQINQ and whether several were asked (a list gives a dict back)."""
    if isinstance(selector, (list, tuple)):
        if not selector:
            raise MQMIError(CMQC.MQCC_FAILED, CMQC.MQRC_SELECTOR_COUNT_ERROR, "no selectors")
        return [int(s) for s in selector], True
    return [int(selector)], False


def qmgr_inquire_value(info: dict[str, Any], selector: int) -> Any:
    """One queue manager attribute for MQINQ, from ``GET /v1/qmgr``: strings blank-padded to
    MQ's lengths, as pymqi returns them."""
    attrs = {str(k).upper(): v for k, v in info.items()}
    if selector == CMQC.MQCA_Q_MGR_NAME:
        return padded(str(info.get("name", "")), CMQC.MQ_Q_MGR_NAME_LENGTH)
    if selector == CMQC.MQCA_QSG_NAME:
        return padded(str(info.get("qsg", "")), CMQC.MQ_QSG_NAME_LENGTH)
    if selector == CMQC.MQCA_Q_MGR_DESC:
        return padded(str(attrs.get("DESCR", "")), 64)
    if selector == CMQC.MQCA_DEAD_LETTER_Q_NAME:
        return padded(str(attrs.get("DEADQ", "")), CMQC.MQ_Q_NAME_LENGTH)
    if selector == CMQC.MQCA_VERSION:
        return QMGR_VERSION
    if selector == CMQC.MQIA_COMMAND_LEVEL:
        return CMQC.MQCMDL_LEVEL_930
    if selector == CMQC.MQIA_PLATFORM:
        return CMQC.MQPL_ZOS
    if selector == CMQC.MQIA_CODED_CHAR_SET_ID:
        return UTF8_CCSID  # bodies and names are UTF-8 here, not EBCDIC
    if selector == CMQC.MQIA_SYNCPOINT:
        return CMQC.MQSP_AVAILABLE
    if selector == CMQC.MQIA_MAX_PRIORITY:
        return 9
    for sel, name in ((CMQC.MQIA_TRIGGER_INTERVAL, "TRIGINT"), (CMQC.MQIA_EXPIRY_INTERVAL, "EXPRYINT")):
        if selector == sel and name in attrs:
            return int(attrs[name])
    raise MQMIError(CMQC.MQCC_FAILED, CMQC.MQRC_SELECTOR_ERROR, f"selector {selector} is not supported")


def open_request(desc: Any, options: int) -> dict[str, Any]:
    name, qmgr = queue_name(desc)
    names = option_names(options, OPEN_OPTIONS, OPEN_IGNORED, "open", CMQC.MQRC_OPTIONS_ERROR)
    body = {"object_name": name, "object_qmgr": qmgr, "options": names}
    if isinstance(desc, OD) and text(desc.DynamicQName).strip():
        body["dynamic_q_name"] = text(desc.DynamicQName)  # used when the queue is a model queue
    if isinstance(desc, OD) and options & CMQC.MQOO_ALTERNATE_USER_AUTHORITY:
        body["alternate_user_id"] = text(desc.AlternateUserId).strip()
    return body


CLOSE_OPTIONS = {CMQC.MQCO_DELETE: "DELETE", CMQC.MQCO_DELETE_PURGE: "DELETE_PURGE"}
# Subscription and quiesce bits: no topics here, and a close never waits for read-ahead.
CLOSE_IGNORED = CMQC.MQCO_KEEP_SUB | CMQC.MQCO_REMOVE_SUB | CMQC.MQCO_QUIESCE


def close_request(options: int) -> dict[str, Any] | None:
    """The MQCLOSE body for pymqi's close options (None: MQCO_NONE, no body)."""
    names = option_names(options, CLOSE_OPTIONS, CLOSE_IGNORED, "close", CMQC.MQRC_OPTION_NOT_VALID_FOR_TYPE)
    return {"options": names} if names else None


class STS(MQOpts):
    """MQSTS, what MQSTAT answers: pymqi's/ibmmq's field names (``PutSuccessCount`` ...)."""

    _fields: dict[str, Any] = {
        "StrucId": CMQC.MQSTS_STRUC_ID, "Version": CMQC.MQSTS_VERSION_2, "CompCode": CMQC.MQCC_OK,
        "Reason": CMQC.MQRC_NONE, "PutSuccessCount": 0, "PutWarningCount": 0, "PutFailureCount": 0,
        "ObjectType": CMQC.MQOT_Q, "ObjectName": b"", "ObjectQMgrName": b"", "ResolvedObjectName": b"",
        "ResolvedQMgrName": b"", "OpenOptions": 0, "SubOptions": 0,
    }


def stat_type_name(stat_type: int) -> str:
    """An MQSTAT Type as docs/api.md's name (any other value: the queue manager answers 2430)."""
    names = {CMQC.MQSTAT_TYPE_ASYNC_ERROR: "ASYNC_ERROR", CMQC.MQSTAT_TYPE_RECONNECTION: "RECONNECTION",
             CMQC.MQSTAT_TYPE_RECONNECTION_ERROR: "RECONNECTION_ERROR"}
    return names.get(stat_type, str(stat_type))


def sts_of(body: dict[str, Any]) -> STS:
    """The STS of a ``POST .../stat`` answer: names blank-padded to 48 bytes, as pymqi returns them."""
    return STS(CompCode=int(body.get("completion_code", 0)), Reason=int(body.get("reason", 0)),
               PutSuccessCount=int(body.get("put_success_count", 0)),
               PutWarningCount=int(body.get("put_warning_count", 0)),
               PutFailureCount=int(body.get("put_failure_count", 0)),
               ObjectType=int(body.get("object_type", CMQC.MQOT_Q)),
               ObjectName=padded(str(body.get("object_name", "")), 48),
               ObjectQMgrName=padded(str(body.get("object_qmgr_name", "")), 48),
               ResolvedObjectName=padded(str(body.get("resolved_object_name", "")), 48),
               ResolvedQMgrName=padded(str(body.get("resolved_qmgr_name", "")), 48))
