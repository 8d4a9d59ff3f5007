"""MQGMO_CONVERT over real HTTP: MQFMT_STRING messages converted between EBCDIC 037, 500, 1047,
1140, Latin-1 819 and UTF-8 1208 to the CodedCharSetId the get's md asks for, the returned MQMD
saying the new CCSID; IBM's warnings with the message returned unconverted (2110, 2111, 2115,
2119, 2120); response bodies as UTF-8 text only when the data is UTF-8 text."""

from __future__ import annotations

import base64
from typing import Any

import httpx
import pytest

import app.core.cp1047  # noqa: F401  (registers the cp1047 codec the tests encode with)
from tests.support.mq import MQ, connections
from tests.support.names import uniq

TEXT = "Hello [z/OS] ^ ¬ café"


@pytest.fixture(scope="module")
def group(make_cluster):
    return make_cluster(["QM1"])


@pytest.fixture
def connect(group):
    yield from connections(group, "CONVERT")


@pytest.fixture
def queue(group, connect):
    q = uniq("CNV")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q})")
    m = connect()
    return m, m.open(q, ["OUTPUT", "INPUT_SHARED", "BROWSE"])


def put_bytes(m: MQ, hobj: str, data: bytes, ccsid: int, fmt: str = "MQSTR") -> None:
    m.put(hobj, base64.b64encode(data).decode(), md={"coded_char_set_id": ccsid, "format": fmt},
          encoding="base64")


def get(m: MQ, hobj: str, options: list[str], md: dict | None = None, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"options": options, **extra}
    if md is not None:
        body["md"] = md
    return m.call("POST", f"/v1/connections/{m.hconn}/objects/{hobj}/get", body)


def raw(got: dict[str, Any]) -> bytes:
    if got["data_encoding"] == "base64":
        return base64.b64decode(got["data"])
    return got["data"].encode("utf-8")


@pytest.mark.parametrize("ccsid,codec", [(37, "cp037"), (500, "cp500"), (1047, "cp1047"), (1140, "cp1140"),
                                         (819, "latin-1")])
def test_ebcdic_and_latin1_to_utf8(queue, ccsid, codec):
    m, hobj = queue
    put_bytes(m, hobj, TEXT.encode(codec), ccsid)
    browsed = get(m, hobj, ["BROWSE_FIRST"])
    # without CONVERT the bytes come back as put, and non-UTF-8 data is never given as text
    assert browsed["data_encoding"] == "base64" and raw(browsed) == TEXT.encode(codec)
    assert browsed["md"]["coded_char_set_id"] == ccsid
    got = get(m, hobj, ["CONVERT", "NO_SYNCPOINT"])  # md absent: the client's 1208
    assert got["data_encoding"] == "utf-8" and got["data"] == TEXT
    assert got["md"]["coded_char_set_id"] == 1208 and "reason" not in got


def test_utf8_to_each_ebcdic_page_and_between_them(queue):
    m, hobj = queue
    for target, codec in ((1047, "cp1047"), (37, "cp037"), (500, "cp500"), (1140, "cp1140"), (819, "latin-1")):
        m.put(hobj, TEXT)
        got = get(m, hobj, ["CONVERT", "NO_SYNCPOINT"], md={"coded_char_set_id": target, "encoding": 785})
        assert got["md"]["coded_char_set_id"] == target and got["md"]["encoding"] == 785
        assert got["data_encoding"] == "base64" and raw(got) == TEXT.encode(codec)
    put_bytes(m, hobj, TEXT.encode("cp037"), 37)
    got = get(m, hobj, ["CONVERT", "NO_SYNCPOINT"], md={"coded_char_set_id": 1047})
    assert raw(got) == TEXT.encode("cp1047") and raw(got) != TEXT.encode("cp037")


def test_q_mgr_ccsid_means_the_queue_managers(queue):
    m, hobj = queue
    m.put(hobj, "plain")
    got = get(m, hobj, ["CONVERT", "NO_SYNCPOINT"], md={"coded_char_set_id": 0})  # MQCCSI_Q_MGR: 500 on z/OS
    assert got["md"]["coded_char_set_id"] == 500 and raw(got) == "plain".encode("cp500")


def test_unmappable_character_is_2119_unconverted(queue):
    m, hobj = queue
    put_bytes(m, hobj, "price 5€".encode("cp1140"), 1140)  # the euro sign is not in Latin-1
    got = get(m, hobj, ["CONVERT", "NO_SYNCPOINT"], md={"coded_char_set_id": 819})
    assert got["completion_code"] == 1 and got["reason"] == 2119
    assert raw(got) == "price 5€".encode("cp1140") and got["md"]["coded_char_set_id"] == 1140


def test_unknown_source_and_target_ccsid(queue):
    m, hobj = queue
    put_bytes(m, hobj, b"\x01\x02", 4396)
    got = get(m, hobj, ["CONVERT", "NO_SYNCPOINT"])
    assert got["reason"] == 2111 and got["completion_code"] == 1 and raw(got) == b"\x01\x02"
    assert got["md"]["coded_char_set_id"] == 4396
    m.put(hobj, "to nowhere")
    got = get(m, hobj, ["CONVERT", "NO_SYNCPOINT"], md={"coded_char_set_id": 4396})
    assert got["reason"] == 2115 and got["data"] == "to nowhere" and got["md"]["coded_char_set_id"] == 1208


def test_non_string_formats_are_not_converted(queue):
    m, hobj = queue
    put_bytes(m, hobj, b"\xc1\xc2", 37, fmt="")  # MQFMT_NONE
    got = get(m, hobj, ["CONVERT", "NO_SYNCPOINT"])
    assert got["reason"] == 2110 and raw(got) == b"\xc1\xc2" and got["md"]["coded_char_set_id"] == 37
    put_bytes(m, hobj, b"\xc1\xc2", 37, fmt="MYFMT")  # no conversion exit for it
    assert get(m, hobj, ["CONVERT", "NO_SYNCPOINT"])["reason"] == 2110


def test_converted_message_too_big_for_the_buffer_is_2120(queue):
    m, hobj = queue
    put_bytes(m, hobj, "ééé".encode("latin-1"), 819)  # 3 bytes; 6 in UTF-8
    got = get(m, hobj, ["CONVERT", "NO_SYNCPOINT"], buffer_length=4)
    assert got["reason"] == 2120 and raw(got) == "ééé".encode("latin-1")
    assert got["md"]["coded_char_set_id"] == 819


def test_get_batch_converts_each_message(queue):
    m, hobj = queue
    put_bytes(m, hobj, "one".encode("cp500"), 500)
    put_bytes(m, hobj, "two".encode("cp1047"), 1047)
    out = m.call("POST", f"/v1/connections/{m.hconn}/objects/{hobj}/get-batch",
                 {"options": ["CONVERT", "NO_SYNCPOINT"], "max_messages": 10})
    assert [g["data"] for g in out["messages"]] == ["one", "two"]
    assert all(g["md"]["coded_char_set_id"] == 1208 for g in out["messages"])


def test_ascii_in_latin1_is_text_without_convert(queue):
    m, hobj = queue
    put_bytes(m, hobj, b"plain ascii", 819)
    got = get(m, hobj, ["NO_SYNCPOINT"])
    assert got["data_encoding"] == "utf-8" and got["data"] == "plain ascii"


@pytest.mark.parametrize("ccsid,codec", [(37, "cp037"), (1047, "cp1047"), (819, "latin-1")])
def test_ibm_rest_api_returns_string_messages_as_utf8(group, connect, ccsid, codec):
    """mqweb's messaging API answers text/plain in UTF-8 whatever the string message's code page."""
    q = uniq("CNVR")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q})")
    m = connect()
    hobj = m.open(q, ["OUTPUT"])
    put_bytes(m, hobj, TEXT.encode(codec), ccsid)
    put_bytes(m, hobj, TEXT.encode(codec), ccsid)
    url = f"{group.url('QM1')}/ibmmq/rest/v2/messaging/qmgr/QM1/queue/{q}/message"
    with httpx.Client(timeout=30) as http:
        browsed = http.get(url)
        assert browsed.status_code == 200, browsed.text
        assert browsed.content.decode("utf-8") == TEXT
        got = http.delete(url, headers={"ibm-mq-rest-csrf-token": ""})
        assert got.status_code == 200, got.text
        assert got.content.decode("utf-8") == TEXT


def test_pymqi_shaped_client_get_with_convert(group):
    """GMO MQGMO_CONVERT through the client: the MD's CodedCharSetId is what the data comes
    back in (MQCCSI_Q_MGR: the client's UTF-8)."""
    import qsg_pymqi as pymqi
    from qsg_pymqi import CMQC

    q = uniq("CNVP")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q})")
    host, port = group.url("QM1").removeprefix("http://").rsplit(":", 1)
    qmgr = pymqi.connect("QM1", "SVRCONN", f"{host}({port})")
    queue = pymqi.Queue(qmgr, q, CMQC.MQOO_OUTPUT | CMQC.MQOO_INPUT_SHARED)
    pmo = pymqi.PMO(Options=CMQC.MQPMO_NO_SYNCPOINT)
    for _ in range(3):
        queue.put(TEXT.encode("cp037"), pymqi.MD(CodedCharSetId=37, Format=CMQC.MQFMT_STRING), pmo)
    gmo = pymqi.GMO(Options=CMQC.MQGMO_CONVERT | CMQC.MQGMO_NO_SYNCPOINT)
    md = pymqi.MD()
    assert queue.get(None, md, gmo) == TEXT.encode("utf-8") and md.CodedCharSetId == 1208
    md = pymqi.MD(CodedCharSetId=1047)
    assert queue.get(None, md, gmo) == TEXT.encode("cp1047") and md.CodedCharSetId == 1047
    md = pymqi.MD()
    assert queue.get(None, md, pymqi.GMO(Options=CMQC.MQGMO_NO_SYNCPOINT)) == TEXT.encode("cp037")
    assert md.CodedCharSetId == 37  # without CONVERT: as put
    queue.put(b"\x00\x01", pymqi.MD(CodedCharSetId=37), pmo)  # MQFMT_NONE
    with pytest.raises(pymqi.MQMIError) as caught:
        queue.get(None, pymqi.MD(), gmo)
    assert caught.value.comp == 1 and caught.value.reason == 2110  # a warning, as pymqi raises it
    queue.close()
    qmgr.disconnect()
