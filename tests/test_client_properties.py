"""Message properties through message handles, as pymqi and IBM's ibmmq programs use them:
MessageHandle(qmgr), properties.set/get/dlt with MQTYPE_* types, PMO.OriginalMsgHandle /
NewMsgHandle on a put, GMO.MsgHandle with MQGMO_PROPERTIES_IN_HANDLE on a get - across the
group (put through QM1, got through QM2), over real HTTP and the session transport."""

from __future__ import annotations

import pytest

import app.client as pymqi
from app.client import CMQC
from tests.support.mqsc import shared_q
from tests.support.pymqi_group import connections, reason_of


@pytest.fixture(scope="module")
def group(make_cluster):
    g = make_cluster(["QM1", "QM2"])
    g.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER(YES)")
    return g


@pytest.fixture
def connect(group):
    yield from connections(group)


def _put_with(qmgr, q, handle, body=b"body", **pmo_fields):
    pmo = pymqi.PMO(Version=CMQC.MQPMO_VERSION_3, Options=CMQC.MQPMO_NO_SYNCPOINT, **pmo_fields)
    if handle is not None and "OriginalMsgHandle" not in pmo_fields and "NewMsgHandle" not in pmo_fields:
        pmo.OriginalMsgHandle = handle.msg_handle
    md = pymqi.MD(Version=CMQC.MQMD_CURRENT_VERSION)
    pymqi.Queue(qmgr, q, CMQC.MQOO_OUTPUT).put(body, md, pmo)
    return md


def _get_into(qmgr, q, options=CMQC.MQGMO_PROPERTIES_IN_HANDLE):
    handle = pymqi.MessageHandle(qmgr)
    gmo = pymqi.GMO(Version=CMQC.MQGMO_CURRENT_VERSION, Options=options | CMQC.MQGMO_NO_SYNCPOINT,
                    MsgHandle=handle.msg_handle)
    body = pymqi.Queue(qmgr, q, CMQC.MQOO_INPUT_SHARED).get(None, pymqi.MD(), gmo)
    return body, handle


def test_every_type_travels_across_the_group(group, connect):
    q = shared_q(group)
    writer, reader = connect("QM1"), connect("QM2")
    put_h = pymqi.MessageHandle(writer)
    values = {
        "s": ("Hello from Python!", CMQC.MQTYPE_STRING), "b": (b"\x00\xffraw", CMQC.MQTYPE_BYTE_STRING),
        "t": (True, CMQC.MQTYPE_BOOLEAN), "i8": (-127, CMQC.MQTYPE_INT8), "i16": (-32768, CMQC.MQTYPE_INT16),
        "i32": (-2147483647, CMQC.MQTYPE_INT32), "i64": (-9223372036854775808, CMQC.MQTYPE_INT64),
        "f32": (1.5, CMQC.MQTYPE_FLOAT32), "f64": (2.2250738585072014e-308, CMQC.MQTYPE_FLOAT64),
        "n": (None, CMQC.MQTYPE_NULL),
    }
    for name, (value, mqtype) in values.items():
        put_h.properties.set(name, value, property_type=mqtype)
    _put_with(writer, q, put_h, b"payload")
    writer.commit()

    body, got = _get_into(reader, q)
    assert body == b"payload"  # the properties are not in the body (no MQRFH2)
    for name, (value, _) in values.items():
        assert got.properties.get(name) == value, name
        assert type(got.properties.get(name)) is type(value), name
    # asked with the type it was set as: the integer and float families answer
    assert got.properties.get("i32", property_type=CMQC.MQTYPE_INT32) == -2147483647
    assert got.properties.get("f32", property_type=CMQC.MQTYPE_FLOAT32) == 1.5
    # another type needs MQIMPO_CONVERT_TYPE
    assert reason_of(lambda: got.properties.get("s", property_type=CMQC.MQTYPE_INT32)).reason \
        == CMQC.MQRC_PROPERTY_TYPE_ERROR
    assert got.properties.get("i8", property_type=CMQC.MQTYPE_STRING,
                              impo_options=CMQC.MQIMPO_CONVERT_TYPE) == "-127"


def test_names_wildcards_cursor_and_delete(group, connect):
    q = shared_q(group)
    qmgr = connect("QM1")
    put_h = pymqi.MessageHandle(qmgr)
    put_h.properties.set("Property_0", "MyStringPropVal")
    put_h.properties.set("usr.Property_1", 42, property_type=CMQC.MQTYPE_INT32)  # usr. is the default folder
    put_h.properties["Property_2"] = "by item"
    for bad in ("JMSCorrelationID", "usr.JMSType", "Prop%", "", "1abc"):
        assert reason_of(lambda b=bad: put_h.properties.set(b, "x")).reason == CMQC.MQRC_PROPERTY_NAME_ERROR, bad
    assert reason_of(lambda: put_h.properties.set("p", "x", property_type=CMQC.MQTYPE_INT32)).reason \
        == CMQC.MQRC_PROPERTY_TYPE_ERROR
    assert reason_of(lambda: put_h.properties.set("p", 128, property_type=CMQC.MQTYPE_INT8)).reason \
        == CMQC.MQRC_PROPERTY_TYPE_ERROR
    _put_with(qmgr, q, put_h)

    _body, got = _get_into(qmgr, q, CMQC.MQGMO_PROPERTIES_AS_Q_DEF)  # a handle given: properties in it
    assert got.properties.get("Property_1") == 42
    assert got.properties.get("usr.Property_1") == 42
    seen, opts = [], CMQC.MQIMPO_INQ_FIRST
    while True:
        try:
            value, name = got.properties.get("usr.%", impo_options=opts)
        except pymqi.MQMIError as exc:
            assert exc.reason == CMQC.MQRC_PROPERTY_NOT_AVAILABLE
            break
        seen.append((name, value))
        opts = CMQC.MQIMPO_INQ_NEXT
    assert seen == [("Property_0", "MyStringPropVal"), ("Property_1", 42), ("Property_2", "by item")]

    got.properties.dlt("Property_1")
    assert reason_of(lambda: got.properties.get("Property_1")).reason == CMQC.MQRC_PROPERTY_NOT_AVAILABLE
    assert reason_of(lambda: got.properties.dlt("Property_1")).reason == CMQC.MQRC_PROPERTY_NOT_AVAILABLE
    with pytest.raises(KeyError):
        got.properties["Property_1"]
    assert got.properties.get("%")[1] == "Property_0"
    # a value longer than max_value_length (64 by default) is 2469, as MQINQMP answers
    got_h = pymqi.MessageHandle(qmgr)
    got_h.properties.set("long", "x" * 65)
    assert reason_of(lambda: got_h.properties.get("long")).reason == CMQC.MQRC_PROPERTY_VALUE_TOO_BIG
    assert got_h.properties.get("long", max_value_length=65) == "x" * 65


def test_handles_deleted_foreign_or_unknown_are_2460_and_no_message_is_lost(group, connect):
    q = shared_q(group)
    qm1, qm2 = connect("QM1"), connect("QM2")
    handle = pymqi.MessageHandle(qm1)
    handle.properties.set("a", "1")
    _put_with(qm1, q, handle)
    qm1.commit()
    # a handle of QM1's connection given to QM2's get: refused before the message is taken
    gmo = pymqi.GMO(Options=CMQC.MQGMO_PROPERTIES_IN_HANDLE, MsgHandle=handle.msg_handle)
    queue2 = pymqi.Queue(qm2, q, CMQC.MQOO_INPUT_SHARED)
    assert reason_of(lambda: queue2.get(None, pymqi.MD(), gmo)).reason == CMQC.MQRC_HMSG_ERROR
    assert reason_of(lambda: queue2.get(None, pymqi.MD(), pymqi.GMO(MsgHandle=987654321))).reason \
        == CMQC.MQRC_HMSG_ERROR
    handle.dlt()
    for call in (lambda: handle.properties.get("a"), lambda: handle.properties.set("a", "2"), handle.dlt,
                 lambda: _put_with(qm1, q, None, OriginalMsgHandle=handle.msg_handle)):
        assert reason_of(call).reason == CMQC.MQRC_HMSG_ERROR
    # the message is still there, with its property, for a handle of the right connection
    _body, got = _get_into(qm2, q)
    assert got.properties.get("a") == "1"


def test_new_handle_overrides_original_and_no_properties_leaves_the_handle_empty(group, connect):
    q = shared_q(group)
    qmgr = connect("QM1")
    original, new = pymqi.MessageHandle(qmgr), pymqi.MessageHandle(qmgr)
    original.properties.set("kept", "o")
    original.properties.set("over", "o")
    new.properties.set("over", "n")
    _put_with(qmgr, q, None, OriginalMsgHandle=original.msg_handle, NewMsgHandle=new.msg_handle)
    _put_with(qmgr, q, None, b"second", OriginalMsgHandle=original.msg_handle)
    _body, got = _get_into(qmgr, q)
    assert (got.properties.get("kept"), got.properties.get("over")) == ("o", "n")
    body, empty = _get_into(qmgr, q, CMQC.MQGMO_NO_PROPERTIES)
    assert body == b"second"
    assert reason_of(lambda: empty.properties.get("kept")).reason == CMQC.MQRC_PROPERTY_NOT_AVAILABLE


def test_asyncio_client_carries_properties(group, connect):
    import asyncio

    from app.client import aio
    from tests.support.pymqi_group import conn_name

    q = shared_q(group)

    async def main():
        async with await aio.connect("QM2", conn_info=conn_name(group, "QM2")) as qmgr:
            put_h = pymqi.MessageHandle(qmgr)
            put_h.properties.set("n", 7, property_type=CMQC.MQTYPE_INT32)
            queue = await aio.Queue.opened(qmgr, q, CMQC.MQOO_OUTPUT | CMQC.MQOO_INPUT_SHARED)
            await queue.put(b"x", pymqi.MD(), pymqi.PMO(Options=CMQC.MQPMO_NO_SYNCPOINT,
                                                              OriginalMsgHandle=put_h.msg_handle))
            get_h = pymqi.MessageHandle(qmgr)
            await queue.get(None, pymqi.MD(), pymqi.GMO(Options=CMQC.MQGMO_PROPERTIES_IN_HANDLE,
                                                        MsgHandle=get_h.msg_handle))
            return get_h.properties.get("n")

    assert asyncio.run(main()) == 7
