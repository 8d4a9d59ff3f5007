"""PCF administration from the pymqi-shaped client: ``PCFExecute`` as pymqi and IBM's ``ibmmq``
offer it. ``pcf.MQCMD_INQUIRE_Q_NAMES({CMQC.MQCA_Q_NAME: b'*'})`` puts an MQFMT_ADMIN request
(MQCFH version 3, MQCFT_COMMAND_XR, as both libraries send to z/OS) to the command queue
(SYSTEM.ADMIN.COMMAND.QUEUE: on these queue managers the alias of SYSTEM.COMMAND.INPUT), waits
for the replies on a temporary dynamic queue and returns one dict per answered item, keyed by
parameter id (strings as bytes, as pymqi returns them). z/OS's extended responses are read as
``ibmmq`` reads them: XR_MSG and XR_SUMMARY messages are not returned as items, and with
CMDSCOPE the replies are awaited until the CMDSCOPE-completed message. A reply whose MQCFH
carries a failure raises ``MQMIError(CompCode, Reason)`` (or, with ``responses=[...]``, the
items are stashed as ``(dict, CFH)`` and the first failure raised at the end, as ``ibmmq``).

The structures (MQCFH, MQCFIN, MQCFST, ...) are encoded by ``app.cmdserver.pcf``, the codec the
queue managers' command server uses.
"""

from __future__ import annotations

from typing import Any

import app.client.CMQC as CMQC
import app.client.CMQCFC as CMQCFC
from app.client.core import GMO, MD, OD, PMO, MQMIError, PYIFError, text
from app.client.sync import Queue, QueueManager
from app.cmdserver import pcf

# The list parameters pymqi sends as MQCFIL when given a single integer (the *_ATTRS selectors).
_ATTR_LISTS = frozenset(v for k, v in vars(CMQCFC).items() if k.startswith(("MQIACF_", "MQIACH_"))
                        and k.endswith("_ATTRS") and isinstance(v, int))


def to_string(value: Any) -> str:
    """ibmmq's ``to_string``: a returned byte string as text without its padding."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace").rstrip(" \0")
    return str(value).rstrip(" \0")


class ByteString:
    """A value to send as MQCFBS (pymqi's and ibmmq's ``ByteString``)."""

    def __init__(self, value: bytes | str) -> None:
        self.value = value.encode("utf-8") if isinstance(value, str) else bytes(value)

    def __len__(self) -> int:
        return len(self.value)


class _Structure:
    """A PCF parameter structure given by name (ibmmq's ``CFST(Parameter=..., String=...)``)."""

    kind = 0

    def __init__(self, **kw: Any) -> None:
        self.Parameter = int(kw.get("Parameter", 0))
        self.__dict__.update(kw)

    def parameter(self) -> pcf.Parameter:
        raise NotImplementedError


class CFIN(_Structure):
    def parameter(self) -> pcf.Parameter:
        return pcf.Parameter(pcf.MQCFT_INTEGER, self.Parameter, int(getattr(self, "Value", 0)))


class CFIN64(_Structure):
    def parameter(self) -> pcf.Parameter:
        return pcf.Parameter(pcf.MQCFT_INTEGER64, self.Parameter, int(getattr(self, "Value", 0)))


class CFST(_Structure):
    def parameter(self) -> pcf.Parameter:
        return pcf.Parameter(pcf.MQCFT_STRING, self.Parameter, text(getattr(self, "String", b"")))


class CFIL(_Structure):
    def parameter(self) -> pcf.Parameter:
        return pcf.Parameter(pcf.MQCFT_INTEGER_LIST, self.Parameter, [int(v) for v in getattr(self, "Values", [])])


class CFIL64(_Structure):
    def parameter(self) -> pcf.Parameter:
        return pcf.Parameter(pcf.MQCFT_INTEGER64_LIST, self.Parameter, [int(v) for v in getattr(self, "Values", [])])


class CFSL(_Structure):
    def parameter(self) -> pcf.Parameter:
        return pcf.Parameter(pcf.MQCFT_STRING_LIST, self.Parameter, [text(v) for v in getattr(self, "Strings", [])])


class CFBS(_Structure):
    def parameter(self) -> pcf.Parameter:
        value = getattr(self, "String", b"")
        return pcf.Parameter(pcf.MQCFT_BYTE_STRING, self.Parameter, value.encode() if isinstance(value, str) else value)


class CFIF(_Structure):
    def parameter(self) -> pcf.Parameter:
        return pcf.Parameter(pcf.MQCFT_INTEGER_FILTER, self.Parameter, int(getattr(self, "FilterValue", 0)),
                             operator=int(getattr(self, "Operator", 0)))


class CFSF(_Structure):
    def parameter(self) -> pcf.Parameter:
        return pcf.Parameter(pcf.MQCFT_STRING_FILTER, self.Parameter, text(getattr(self, "FilterValue", b"")),
                             operator=int(getattr(self, "Operator", 0)))


class CFH:
    """The MQCFH of a reply (pymqi's field names)."""

    def __init__(self, header: pcf.Header | None = None, **kw: Any) -> None:
        h = header or pcf.Header()
        self.Type, self.StrucLength, self.Version, self.Command = h.type, pcf.MQCFH_STRUC_LENGTH, h.version, h.command
        self.MsgSeqNumber, self.Control, self.CompCode, self.Reason = h.msg_seq_number, h.control, h.comp_code, h.reason
        self.ParameterCount = h.parameter_count
        self.__dict__.update(kw)


class _Filter:
    """An MQCFIF/MQCFSF filter (pymqi's ``Filter(selector).like(value)`` and friends)."""

    def __init__(self, selector: int, value: Any, operator: int) -> None:
        self.selector, self.value, self.operator = selector, value, operator

    def parameter(self) -> pcf.Parameter:
        if isinstance(self.value, int):
            return pcf.Parameter(pcf.MQCFT_INTEGER_FILTER, self.selector, self.value, operator=self.operator)
        return pcf.Parameter(pcf.MQCFT_STRING_FILTER, self.selector, text(self.value), operator=self.operator)


class Filter:
    """pymqi's filter factory: ``Filter(CMQC.MQIA_CURRENT_Q_DEPTH).greater(0)``."""

    _OPS = {"less": pcf.MQCFOP_LESS, "equal": pcf.MQCFOP_EQUAL, "greater": pcf.MQCFOP_GREATER,
            "not_less": pcf.MQCFOP_NOT_LESS, "not_equal": pcf.MQCFOP_NOT_EQUAL,
            "not_greater": pcf.MQCFOP_NOT_GREATER, "like": pcf.MQCFOP_LIKE, "not_like": pcf.MQCFOP_NOT_LIKE,
            "contains": pcf.MQCFOP_CONTAINS, "excludes": pcf.MQCFOP_EXCLUDES,
            "contains_gen": pcf.MQCFOP_CONTAINS_GEN, "excludes_gen": pcf.MQCFOP_EXCLUDES_GEN}

    def __init__(self, selector: int) -> None:
        self.selector = selector

    def __getattr__(self, name: str) -> Any:
        if name not in self._OPS:
            raise AttributeError(name)
        return lambda value: _Filter(self.selector, value, self._OPS[name])


def _parameters(args_dict: Any, filters: list[Any]) -> list[pcf.Parameter]:
    out: list[pcf.Parameter] = []
    if isinstance(args_dict, dict):
        for key, value in args_dict.items():
            out.append(_parameter(int(key), value))
    elif isinstance(args_dict, list):
        out += [p.parameter() for p in args_dict]
    elif args_dict:
        raise PYIFError("PCF arguments are a dict of parameter id to value, or a list of CF* structures")
    out += [f.parameter() for f in filters]
    return out


def _parameter(key: int, value: Any) -> pcf.Parameter:
    if isinstance(value, ByteString):
        return pcf.Parameter(pcf.MQCFT_BYTE_STRING, key, value.value)
    if isinstance(value, (str, bytes)):
        return pcf.Parameter(pcf.MQCFT_STRING, key, text(value))
    if isinstance(value, bool) or isinstance(value, int):
        if key in _ATTR_LISTS:
            return pcf.Parameter(pcf.MQCFT_INTEGER_LIST, key, [int(value)])
        return pcf.Parameter(pcf.MQCFT_INTEGER, key, int(value))
    if isinstance(value, list) and value:
        if isinstance(value[0], int):
            return pcf.Parameter(pcf.MQCFT_INTEGER_LIST, key, [int(v) for v in value])
        return pcf.Parameter(pcf.MQCFT_STRING_LIST, key, [text(v) for v in value])
    raise PYIFError(f"the value of PCF parameter {key} is not a string, integer, list or ByteString")


def _value(p: pcf.Parameter) -> Any:
    if p.type in (pcf.MQCFT_STRING, pcf.MQCFT_STRING_FILTER):
        return p.value.encode("utf-8") if isinstance(p.value, str) else p.value
    if p.type == pcf.MQCFT_STRING_LIST:
        return [v.encode("utf-8") for v in p.value]
    return p.value


def unpack(message: bytes, encoding: int = CMQC.MQENC_NATIVE) -> tuple[dict[int, Any], CFH]:
    """A reply as pymqi's ``PCFExecute.unpack`` gives it: (parameters by id, its CFH)."""
    decoded = pcf.decode(message, big=pcf.is_big_endian(encoding))
    res: dict[int, Any] = {}
    for p in decoded.parameters:
        if p.type == pcf.MQCFT_GROUP:
            res.setdefault(p.parameter, []).append({g.parameter: _value(g) for g in p.group})
        else:
            res[p.parameter] = _value(p)
    return res, CFH(decoded.header)


class _Method:
    def __init__(self, owner: PCFExecute, name: str) -> None:
        self.owner, self.name = owner, name

    def __call__(self, *args: Any, **kwargs: Any) -> list[Any]:
        name = self.name[7:] if self.name.startswith("CMQCFC.") else self.name
        command = getattr(CMQCFC, name, None)
        if not isinstance(command, int):
            raise PYIFError(f"{name} is not a PCF command of CMQCFC")
        args_dict = args[0] if args else {}
        filters = list(args[1]) if len(args) > 1 else []
        stash = kwargs.get("responses")
        if stash is not None and not isinstance(stash, list):
            raise TypeError("responses must be a list")
        return self.owner._execute(command, _parameters(args_dict, filters), stash)


class PCFExecute:
    """pymqi's / ibmmq's ``PCFExecute``: ``PCFExecute(qmgr)`` then ``pcf.MQCMD_...(args)``."""

    def __init__(self, name: Any = None, disconnect_on_exit: bool = True,
                 model_queue_name: bytes | str = b"SYSTEM.DEFAULT.MODEL.QUEUE",
                 dynamic_queue_name: bytes | str = b"PYMQPCF.*",
                 command_queue_name: bytes | str = b"SYSTEM.ADMIN.COMMAND.QUEUE",
                 response_wait_interval: int = 5000, convert: bool = False, *,
                 reply_queue_name: bytes | str | None = None, command_queue: Any = None,
                 reply_queue_open_options: int = CMQC.MQOO_INPUT_EXCLUSIVE, max_length: int | None = None,
                 command_timeout: int = 0) -> None:
        self.qm = name if isinstance(name, QueueManager) else QueueManager(name, disconnect_on_exit)
        self._command_queue_name = command_queue_name
        self._response_wait_interval = response_wait_interval
        self._convert = convert
        od = OD(ObjectName=reply_queue_name or model_queue_name, DynamicQName=dynamic_queue_name)
        self._reply_queue: Queue | None = Queue(self.qm, od, reply_queue_open_options)
        self._reply_queue_name = text(od.ObjectName).strip()

    @property
    def command_queue_name(self) -> bytes | str:
        return self._command_queue_name

    @property
    def reply_queue_name(self) -> str:
        return self._reply_queue_name

    @property
    def response_wait_interval(self) -> int:
        return self._response_wait_interval

    @property
    def reply_queue(self) -> Queue | None:
        return self._reply_queue

    @property
    def convert(self) -> bool:
        return self._convert

    unpack = staticmethod(unpack)

    def __getattr__(self, name: str) -> _Method:
        if name.startswith(("MQCMD_", "CMQCFC")):
            return _Method(self, name)
        raise AttributeError(name)

    def disconnect(self) -> None:
        """Close the reply queue (the connection stays the caller's, as in pymqi)."""
        try:
            if self._reply_queue is not None:
                self._reply_queue.close()
        except (MQMIError, PYIFError):
            pass
        finally:
            self._reply_queue = None

    def _execute(self, command: int, parameters: list[pcf.Parameter], stash: list | None) -> list[Any]:
        if self._reply_queue is None:
            raise PYIFError("PCFExecute is disconnected")
        header = pcf.Header(pcf.MQCFT_COMMAND_XR, command, pcf.MQCFH_VERSION_3)
        message = pcf.encode(header, parameters)
        put_md = MD(Format=CMQC.MQFMT_ADMIN, MsgType=CMQC.MQMT_REQUEST, ReplyToQ=self._reply_queue_name,
                    Feedback=CMQC.MQFB_NONE, Expiry=max(self._response_wait_interval // 100, 1),
                    Report=CMQC.MQRO_PASS_DISCARD_AND_EXPIRY | CMQC.MQRO_DISCARD_MSG)
        with Queue(self.qm, text(self._command_queue_name), CMQC.MQOO_OUTPUT) as command_queue:
            command_queue.put(message, put_md, PMO(Options=CMQC.MQPMO_NO_SYNCPOINT))
        gmo = GMO(Options=CMQC.MQGMO_NO_SYNCPOINT | CMQC.MQGMO_FAIL_IF_QUIESCING | CMQC.MQGMO_WAIT,
                  Version=CMQC.MQGMO_VERSION_2, MatchOptions=CMQC.MQMO_MATCH_CORREL_ID,
                  WaitInterval=self._response_wait_interval)
        results: list[Any] = stash if stash is not None else []
        first_error: MQMIError | None = None
        in_scope = False
        for _ in range(1_000_000):  # bounded: each reply is read once
            md = MD(CorrelId=put_md.MsgId)
            data = self._reply_queue.get(None, md, gmo)
            res, cfh = unpack(data, md.Encoding)
            if cfh.CompCode != CMQC.MQCC_OK:
                error = MQMIError(cfh.CompCode, cfh.Reason)
                if stash is None:
                    raise error
                first_error = first_error or error
            info = res.get(CMQCFC.MQIACF_COMMAND_INFO) if cfh.Type == pcf.MQCFT_XR_MSG else None
            if info == CMQCFC.MQCMDI_CMDSCOPE_ACCEPTED:
                in_scope = True
            done = info == CMQCFC.MQCMDI_CMDSCOPE_COMPLETED if in_scope else cfh.Control == CMQCFC.MQCFC_LAST
            if cfh.Type not in (pcf.MQCFT_XR_MSG, pcf.MQCFT_XR_SUMMARY):
                results.append((res, cfh) if stash is not None else res)
            if done:
                if in_scope:  # the completing set's summary follows: take it off the queue
                    self._reply_queue.get(None, MD(CorrelId=put_md.MsgId), gmo)
                break
        if first_error is not None:
            raise first_error
        return results
