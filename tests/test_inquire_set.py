"""MQINQ and MQSET by selector over real HTTP (docs/api.md §7): MQSC names, IBM's MQIA_/MQCA_
names and numbers, the queue manager object (MQOPEN with ObjectType Q_MGR) and IBM's reasons:
2067 a selector not valid (or not for this kind of object, or not settable), 2068 a queue
selector the queue's type lacks (warning), 2065 too many, 2045 an open option not valid for the
queue manager object, 2043 a bad object type, the MQSET value reasons."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.mq import MQ, connections, mq_reason
from tests.support.names import uniq


@pytest.fixture(scope="module")
def group(make_cluster):
    return make_cluster(["QM1"])


@pytest.fixture
def connect(group):
    yield from connections(group, "INQSET")


def inq(m: MQ, hobj: str, selectors: str | None = None) -> dict[str, Any]:
    path = f"/v1/connections/{m.hconn}/objects/{hobj}/attributes"
    if selectors is not None:
        path += f"?selectors={selectors}"
    return m.call("GET", path)


def open_qmgr(m: MQ, options: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    body = {"object_name": "", "object_type": "Q_MGR", "options": options or ["INQUIRE"], **extra}
    return m.call("POST", f"/v1/connections/{m.hconn}/objects", body)


def test_no_selectors_returns_every_attribute_as_before(group, connect):
    q = uniq("INQ")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q}) MAXDEPTH(77)")
    m = connect()
    hobj = m.open(q, ["INQUIRE", "OUTPUT"])
    m.put(hobj, "one")
    out = inq(m, hobj)
    assert out["QUEUE"] == q and out["MAXDEPTH"] == 77 and out["CURDEPTH"] == 1
    assert {"TRIGGER", "DEFPSIST", "IPPROCS", "OPPROCS"} <= set(out)


def test_selectors_by_mqsc_name_ibm_name_and_number(group, connect):
    q = uniq("INQ")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q}) MAXDEPTH(5000) DESCR('by selector')")
    m = connect()
    hobj = m.open(q, ["INQUIRE", "OUTPUT"])
    m.put(hobj, "a")
    m.put(hobj, "b")
    assert inq(m, hobj, "CURDEPTH,MAXDEPTH") == {"CURDEPTH": 2, "MAXDEPTH": 5000}
    # MQIA_CURRENT_Q_DEPTH (3), MQIA_MAX_Q_DEPTH (15), MQCA_Q_DESC (2013), MQCA_Q_NAME (2016)
    out = inq(m, hobj, "MQIA_CURRENT_Q_DEPTH,15,MQCA_Q_DESC,2016,mqia_open_output_count")
    assert out == {"CURDEPTH": 2, "MAXDEPTH": 5000, "DESCR": "by selector", "QUEUE": q, "OPPROCS": 1}
    assert inq(m, hobj, "") == {}  # SelectorCount 0: nothing asked, nothing returned


def test_unknown_selector_is_2067(group, connect):
    q = uniq("INQ")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q})")
    m = connect()
    hobj = m.open(q, ["INQUIRE"])
    for bad in ("NOSUCHATTR", "MQIA_NO_SUCH", "99999"):
        with mq_reason(2067, 400):
            inq(m, hobj, f"CURDEPTH,{bad}")
    # a queue-manager selector on a queue: not applicable to this type of object (2067)
    for qmgr_selector in ("MQCA_Q_MGR_NAME", "2015", "MAXUMSGS", "MQIA_MAX_UNCOMMITTED_MSGS"):
        with mq_reason(2067, 400):
            inq(m, hobj, qmgr_selector)


def test_too_many_selectors_is_2065(group, connect):
    q = uniq("INQ")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q})")
    m = connect()
    hobj = m.open(q, ["INQUIRE"])
    with mq_reason(2065):
        inq(m, hobj, ",".join(["CURDEPTH"] * 257))


def test_queue_selector_not_for_the_queue_type_is_warning_2068(group, connect):
    base, alias = uniq("BASE"), uniq("ALIAS")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({base})\nDEFINE QALIAS({alias}) TARGET({base})")
    m = connect()
    hobj = m.open(alias, ["INQUIRE"])
    out = inq(m, hobj, "TARGET,MQIA_CURRENT_Q_DEPTH,INITQ")
    # IBM: the call completes with MQCC_WARNING; MQIAV_NOT_APPLICABLE (-1) for an integer,
    # asterisks for a character attribute; the applicable ones are answered
    assert out["completion_code"] == 1 and out["reason"] == 2068
    assert out["TARGET"] == base and out["CURDEPTH"] == -1 and out["INITQ"] == "*" * 48
    lq = m.open(base, ["INQUIRE"])
    assert inq(m, lq, "MQCA_BASE_Q_NAME")["reason"] == 2068  # a local queue has no TARGET


def test_not_open_for_inquire_is_2038(group, connect):
    q = uniq("INQ")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q})")
    m = connect()
    hobj = m.open(q, ["OUTPUT"])
    with mq_reason(2038):
        inq(m, hobj, "CURDEPTH")


def test_queue_manager_object_by_selector(group, connect):
    group.mqsc_ok("QM1", "ALTER QMGR DEADQ(SYSTEM.DEAD.LETTER.QUEUE) MAXUMSGS(4321)")
    m = connect()
    opened = open_qmgr(m)
    assert opened["object_type"] == "Q_MGR" and opened["object_name"] == "QM1"
    hobj = opened["hobj"]
    out = inq(m, hobj, "MQCA_Q_MGR_NAME,MQCA_QSG_NAME,MQIA_COMMAND_LEVEL,MQIA_PLATFORM,MQCA_DEAD_LETTER_Q_NAME,"
                       "MQIA_CODED_CHAR_SET_ID,MQIA_MAX_MSG_LENGTH,MQIA_MAX_UNCOMMITTED_MSGS,MQIA_MAX_HANDLES,"
                       "MQIA_SYNCPOINT")
    assert out["QMNAME"] == "QM1" and out["QSGNAME"] == group.qsg
    assert out["CMDLEVEL"] == 930 and out["PLATFORM"] == "MVS" and out["SYNCPT"] == "AVAILABLE"
    assert out["DEADQ"] == "SYSTEM.DEAD.LETTER.QUEUE" and out["CCSID"] == 500
    assert out["MAXMSGL"] == 104857600 and out["MAXUMSGS"] == 4321 and out["MAXHANDS"] == 256
    assert inq(m, hobj, "2015,33") == {"QMNAME": "QM1", "MAXUMSGS": 4321}
    everything = inq(m, hobj)
    assert everything["QMNAME"] == "QM1" and "TRIGINT" in everything
    # a queue selector on the queue manager: 2067
    with mq_reason(2067):
        inq(m, hobj, "CURDEPTH")
    with mq_reason(2067):
        inq(m, hobj, "MQIA_CURRENT_Q_DEPTH")
    # the queue manager object takes MQINQ and MQCLOSE only
    with mq_reason(2040):
        m.set(hobj, {"PUT": "DISABLED"})
    m.close(hobj)
    with mq_reason(2019):
        inq(m, hobj, "QMNAME")
    group.mqsc_ok("QM1", "ALTER QMGR MAXUMSGS(10000)")


def test_queue_manager_open_rules(group, connect):
    m = connect()
    assert open_qmgr(m, object_name="QM1")["object_name"] == "QM1"  # blank or the local name
    assert open_qmgr(m, object_type="MQOT_Q_MGR")["object_type"] == "Q_MGR"
    assert open_qmgr(m, object_type=5)["object_type"] == "Q_MGR"
    for options in (["OUTPUT"], ["INQUIRE", "SET"], ["BROWSE"]):
        with mq_reason(2045):
            open_qmgr(m, options)
    with mq_reason(2085):
        open_qmgr(m, object_name="QM9")
    with mq_reason(2043):
        open_qmgr(m, object_type="AUTH_INFO")  # an object type this MQI does not open


def test_mqset_by_selector_names_and_numbers(group, connect):
    q = uniq("SET")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q})")
    m = connect()
    hobj = m.open(q, ["SET", "INQUIRE"])
    # IBM's constants: MQIA_INHIBIT_PUT (10) = MQQA_PUT_INHIBITED (1), MQIA_TRIGGER_TYPE (28) =
    # MQTT_EVERY (2), MQIA_TRIGGER_DEPTH = 5, MQCA_TRIGGER_DATA (2023)
    m.set(hobj, {"MQIA_INHIBIT_PUT": 1, "28": 2, "MQIA_TRIGGER_DEPTH": 5, "2023": "hello"})
    out = inq(m, hobj, "PUT,TRIGTYPE,TRIGDPTH,TRIGDATA")
    assert out == {"PUT": "DISABLED", "TRIGTYPE": "EVERY", "TRIGDPTH": 5, "TRIGDATA": "hello"}
    m.set(hobj, {"PUT": "ENABLED", "MQIA_TRIGGER_CONTROL": 1})
    assert inq(m, hobj, "PUT,TRIGGER") == {"PUT": "ENABLED", "TRIGGER": "TRIGGER"}


def test_mqset_reasons(group, connect):
    q, alias = uniq("SET"), uniq("SETA")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q})\nDEFINE QALIAS({alias}) TARGET({q})")
    m = connect()
    hobj = m.open(q, ["SET"])
    with mq_reason(2067):  # not settable
        m.set(hobj, {"MAXDEPTH": 5})
    with mq_reason(2067):
        m.set(hobj, {"MQIA_MAX_Q_DEPTH": 5})
    with mq_reason(2067):  # unknown
        m.set(hobj, {"NOSUCH": 1})
    with mq_reason(2020):
        m.set(hobj, {"MQIA_INHIBIT_GET": 7})
    with mq_reason(2020):
        m.set(hobj, {"GET": "MAYBE"})
    with mq_reason(2078):
        m.set(hobj, {"TRIGTYPE": "SOMETIMES"})
    with mq_reason(2076):
        m.set(hobj, {"TRIGDPTH": 0})
    with mq_reason(2077):
        m.set(hobj, {"MQIA_TRIGGER_MSG_PRIORITY": 10})
    with mq_reason(2075):
        m.set(hobj, {"TRIGGER": "sometimes"})
    with mq_reason(2006):
        m.set(hobj, {"TRIGDATA": "x" * 65})
    with mq_reason(2065):
        m.set(hobj, {f"X{i}": 1 for i in range(257)})
    ah = m.open(alias, ["SET"])
    with mq_reason(2067):  # an alias queue has no trigger attributes
        m.set(ah, {"TRIGGER": True})
    m.set(ah, {"PUT": "DISABLED"})


def test_event_switches_and_depth_limits_cannot_be_inquired_on_zos(group, connect):
    """IBM, queue attributes QDepthHighEvent, QDepthHighLimit, QDepthLowEvent, QDepthLowLimit,
    QDepthMaxEvent, QServiceInterval, QServiceIntervalEvent: "supported on z/OS, but the MQINQ
    call cannot be used to determine its value" - 2067 by MQSC name, IBM name or number;
    DISPLAY QLOCAL shows them."""
    q = uniq("INQZ")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q}) QDPHIEV(ENABLED) QDEPTHHI(70)")
    m = connect()
    hobj = m.open(q, ["INQUIRE"])
    for selector in ("QDPHIEV", "QDPLOEV", "QDPMAXEV", "QSVCIEV", "QSVCINT", "QDEPTHHI", "QDEPTHLO",
                     "MQIA_Q_DEPTH_HIGH_EVENT", "MQIA_Q_DEPTH_HIGH_LIMIT", "40", "41", "42", "43", "44", "46", "54"):
        with mq_reason(2067):
            inq(m, hobj, selector)
    with mq_reason(2067):  # one of them spoils the call, as any selector not valid does
        inq(m, hobj, "MAXDEPTH,QDPHIEV")
    assert "QDPHIEV" not in inq(m, hobj) and "QDEPTHHI" not in inq(m, hobj)  # nor among every attribute
    shown = group.mqsc_ok("QM1", f"DISPLAY QLOCAL({q}) QDPHIEV QDEPTHHI")[0]["objects"][0]
    assert (shown["QDPHIEV"], shown["QDEPTHHI"]) == ("ENABLED", 70)


def test_mqset_takes_ibm_constants_by_name(group, connect):
    """docs/api.md §7: MQSET values are MQSC words or IBM's constants (MQQA_*, MQTC_*, MQTT_*),
    by value or by name; a constant of another attribute is a bad value (its reason)."""
    q = uniq("SETC")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q})")
    m = connect()
    hobj = m.open(q, ["SET", "INQUIRE"])
    m.set(hobj, {"MQIA_INHIBIT_PUT": "MQQA_PUT_INHIBITED", "GET": "MQQA_GET_INHIBITED",
                 "TRIGTYPE": "MQTT_DEPTH", "TRIGGER": "MQTC_ON"})
    assert inq(m, hobj, "PUT,GET,TRIGTYPE,TRIGGER") == {"PUT": "DISABLED", "GET": "DISABLED",
                                                        "TRIGTYPE": "DEPTH", "TRIGGER": "TRIGGER"}
    m.set(hobj, {"PUT": "MQQA_PUT_ALLOWED", "MQIA_TRIGGER_CONTROL": "mqtc_off"})
    assert inq(m, hobj, "PUT,TRIGGER") == {"PUT": "ENABLED", "TRIGGER": "NOTRIGGER"}
    with mq_reason(2020):
        m.set(hobj, {"GET": "MQQA_PUT_INHIBITED"})
    with mq_reason(2078):
        m.set(hobj, {"TRIGTYPE": "MQTC_ON"})
