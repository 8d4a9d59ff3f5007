"""Publish/subscribe over real HTTP on a real group: TOPIC objects (MQSC), MQOPEN of a topic and
publishing with MQPUT/MQPUT1, MQSUB (managed, unmanaged, durable, wildcards), MQCLOSE of a
subscription, MQDISC and a queue manager restart, DISPLAY SUB / TPSTATUS, the reason codes;
and the drop-in client running what IBM's mq-dev-patterns basicpublish/basicsubscribe do."""

from __future__ import annotations

import pytest

from tests.support.mq import MQ, connections, mq_reason
from tests.support.names import uniq

# On one redis-server and on a 3-master Redis Cluster (tests/conftest.py).
pytestmark = pytest.mark.group_suite


@pytest.fixture(scope="module")
def group(make_cluster):
    return make_cluster(["QM1", "QM2"])


@pytest.fixture
def connect(group):
    yield from connections(group, "PUBSUB")


def open_topic(m: MQ, topic: str, object_name: str = "", options: list[str] | None = None) -> dict:
    return m.call("POST", f"/v1/connections/{m.hconn}/objects",
                  {"object_type": "TOPIC", "object_name": object_name, "object_string": topic,
                   "options": options or ["OUTPUT"]})


def subscribe(m: MQ, topic: str, options: list[str], **extra) -> dict:
    return m.call("POST", f"/v1/connections/{m.hconn}/subscriptions",
                  {"object_string": topic, "options": options, **extra})


def close_sub(m: MQ, hsub: str, options: list[str] | None = None) -> None:
    m.call("DELETE", f"/v1/connections/{m.hconn}/subscriptions/{hsub}", {"options": options or []})


def display_sub(group, qm: str, name: str) -> list[dict]:
    [res] = group.mqsc(qm, f"DISPLAY SUB('{name}') ALL")
    return res["objects"] if res["completion_code"] == 0 else []


def test_publish_reaches_every_matching_subscriber(connect):
    base = uniq("price")
    pub, s1, s2 = connect(), connect(), connect()
    exact = subscribe(s1, f"{base}/fruit/apples", ["CREATE", "MANAGED", "NON_DURABLE"])
    wild = subscribe(s2, f"{base}/fruit/#", ["CREATE", "MANAGED"])
    other = subscribe(s2, f"{base}/veg/+", ["CREATE", "MANAGED"])
    assert exact["object_name"].startswith("SYSTEM.MANAGED.NDURABLE.")
    hobj = open_topic(pub, f"{base}/fruit/apples")["hobj"]
    put = pub.put(hobj, "apples at 3", options=["NO_SYNCPOINT"])
    got1 = s1.get(exact["hobj"])
    got2 = s2.get(wild["hobj"])
    assert got1["data"] == got2["data"] == "apples at 3"
    # each subscriber's copy: its own MsgId, the subscription's CorrelId
    assert got1["md"]["msg_id"] != got2["md"]["msg_id"]
    assert got1["md"]["correl_id"] == exact["sub_correl_id"] and got2["md"]["correl_id"] == wild["sub_correl_id"]
    assert put["md"]["put_appl_name"] == got1["md"]["put_appl_name"]
    with mq_reason(2033):
        s2.get(other["hobj"])  # veg/+ does not match fruit/apples
    # '#' matches zero levels too; '+' exactly one
    r = pub.call("POST", f"/v1/connections/{pub.hconn}/put1",
                 {"object_type": "TOPIC", "object_string": f"{base}/fruit", "data": "all fruit",
                  "options": ["NO_SYNCPOINT"]})
    assert r["md"]["msg_id"] != "0" * 48
    assert s2.get(wild["hobj"])["data"] == "all fruit"
    with mq_reason(2033):
        s1.get(exact["hobj"])


def test_no_subscriber_warns_only_when_asked(connect):
    pub = connect()
    hobj = open_topic(pub, uniq("nobody") + "/here")["hobj"]
    quiet = pub.put(hobj, "x", options=["NO_SYNCPOINT"])
    assert "reason" not in quiet or quiet["reason"] == 0
    warned = pub.put(hobj, "x", options=["NO_SYNCPOINT", "WARN_IF_NO_SUBS_MATCHED"])
    assert warned["completion_code"] == 1 and warned["reason"] == 2550


def test_syncpoint_publish_rolled_back_delivers_nothing(connect):
    topic = uniq("uow") + "/t"
    pub, sub = connect(), connect()
    s = subscribe(sub, topic, ["CREATE", "MANAGED"])
    hobj = open_topic(pub, topic)["hobj"]
    pub.put(hobj, "undone", options=["SYNCPOINT"])
    pub.backout()
    with mq_reason(2033):
        sub.get(s["hobj"])
    pub.put(hobj, "done", options=["SYNCPOINT"])
    with mq_reason(2033):
        sub.get(s["hobj"])  # not yet committed
    pub.commit()
    assert sub.get(s["hobj"])["data"] == "done"


def test_unmanaged_subscription_with_set_correl_id(group, connect):
    queue, topic = uniq("SUBQ"), uniq("unmanaged") + "/a"
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({queue})")
    sub, pub = connect(), connect()
    qh = sub.open(queue, ["INPUT_AS_Q_DEF"])
    keep = subscribe(sub, topic, ["CREATE", "SET_CORREL_ID"], hobj=qh, sub_correl_id="00" * 24)
    mine = subscribe(sub, topic, ["CREATE", "SET_CORREL_ID"], hobj=qh, sub_correl_id="ab" * 24)
    assert "hobj" not in keep
    t = open_topic(pub, topic)["hobj"]
    pub.put(t, "hi", md={"correl_id": "12" * 24}, options=["NO_SYNCPOINT"])
    correls = sorted(sub.get(qh)["md"]["correl_id"] for _ in range(2))
    assert correls == sorted(["12" * 24, "ab" * 24])  # MQCI_NONE keeps the publisher's CorrelId
    close_sub(sub, keep["hsub"])
    close_sub(sub, mine["hsub"])
    pub.put(t, "after close", options=["NO_SYNCPOINT"])
    with mq_reason(2033):
        sub.get(qh)


def test_managed_non_durable_goes_at_close_and_at_disconnect(group, connect):
    topic = uniq("nd") + "/x"
    m = connect()
    s = subscribe(m, topic, ["CREATE", "MANAGED", "NON_DURABLE"], sub_name=uniq("ND"))
    assert display_sub(group, "QM1", s["sub_name"])[0]["DURABLE"] == "NO"
    close_sub(m, s["hsub"])
    m.close(s["hobj"])
    assert display_sub(group, "QM1", s["sub_name"]) == []
    [res] = group.mqsc("QM1", f"DISPLAY QLOCAL({s['object_name']})")
    assert res["reason"] == 2085  # the managed queue went with its handle
    m2 = connect()
    s2 = subscribe(m2, topic, ["CREATE", "MANAGED"], sub_name=uniq("ND"))
    m2.disconnect()
    assert display_sub(group, "QM1", s2["sub_name"]) == []
    [res] = group.mqsc("QM1", f"DISPLAY QLOCAL({s2['object_name']})")
    assert res["reason"] == 2085


def test_durable_subscription_resumed_after_disconnect_and_error_reasons(group, connect):
    topic, name = uniq("dur") + "/y", uniq("DURSUB")
    m = connect()
    s = subscribe(m, topic, ["CREATE", "MANAGED", "DURABLE"], sub_name=name)
    assert s["object_name"].startswith("SYSTEM.MANAGED.DURABLE.")
    with mq_reason(2429, 409):
        subscribe(connect(), "", ["RESUME", "MANAGED", "DURABLE"], sub_name=name)
    with mq_reason(2432, 409):
        subscribe(connect(), topic, ["CREATE", "MANAGED", "DURABLE"], sub_name=name)
    m.disconnect()
    pub = connect()
    pub.put(open_topic(pub, topic)["hobj"], "while away", options=["NO_SYNCPOINT"])
    back = connect()
    r = subscribe(back, "", ["RESUME", "MANAGED", "DURABLE"], sub_name=name)
    assert r["resumed"] and r["object_name"] == s["object_name"] and r["object_string"] == topic
    assert back.get(r["hobj"])["data"] == "while away"
    row = display_sub(group, "QM1", name)[0]
    assert row["DURABLE"] == "YES" and row["TOPICSTR"] == topic and row["DEST"] == s["object_name"]
    close_sub(back, r["hsub"], ["REMOVE_SUB"])
    back.close(r["hobj"])
    assert display_sub(group, "QM1", name) == []
    with mq_reason(2428, 404):
        subscribe(back, "", ["RESUME", "MANAGED", "DURABLE"], sub_name=name)
    with mq_reason(2440):
        subscribe(back, topic, ["CREATE", "MANAGED", "DURABLE"])
    with mq_reason(2046):
        subscribe(back, topic, ["MANAGED"])
    with mq_reason(2019):
        subscribe(back, topic, ["CREATE"])  # unmanaged without a queue handle


def test_topic_objects_and_their_rules(group, connect):
    base, name = uniq("admin"), uniq("TOP")
    group.mqsc_ok("QM1", f"DEFINE TOPIC({name}) TOPICSTR('{base}/news') DESCR('news') DURSUB(NO) PUB(DISABLED)")
    [res] = group.mqsc_ok("QM1", f"DISPLAY TOPIC({name}) ALL")
    row = res["objects"][0]
    assert row["TOPIC"] == name and row["TOPICSTR"] == f"{base}/news" and row["QSGDISP"] == "QMGR"
    assert row["DEFPSIST"] == "ASPARENT" and row["DEFPRTY"] == "ASPARENT"
    [res] = group.mqsc("QM1", f"DEFINE TOPIC({uniq('TOP')}) TOPICSTR('{base}/news')")
    assert res["reason"] == 4005  # the topic string is another object's
    [res] = group.mqsc("QM1", f"ALTER TOPIC({name}) TOPICSTR('{base}/other')")
    assert res["reason"] == 4005
    [base_row] = group.mqsc_ok("QM1", "DISPLAY TOPIC(SYSTEM.BASE.TOPIC) TOPICSTR DURSUB")[0]["objects"]
    assert base_row["TOPICSTR"] == "" and base_row["DURSUB"] == "YES"
    m = connect()
    # object_name's TOPICSTR joined to object_string; PUB(DISABLED) and DURSUB(NO) inherited below
    opened = open_topic(m, "sport", object_name=name)
    assert opened["object_string"] == f"{base}/news/sport"
    with mq_reason(2051):
        m.put(opened["hobj"], "no", options=["NO_SYNCPOINT"])
    with mq_reason(2436):
        subscribe(m, f"{base}/news/sport", ["CREATE", "MANAGED", "DURABLE"], sub_name=uniq("S"))
    group.mqsc_ok("QM1", f"ALTER TOPIC({name}) PUB(ENABLED)")
    s = subscribe(m, f"{base}/news/#", ["CREATE", "MANAGED"])
    m.put(opened["hobj"], "goal", options=["NO_SYNCPOINT"])
    assert m.get(s["hobj"])["data"] == "goal"
    [res] = group.mqsc_ok("QM1", f"DISPLAY TPSTATUS('{base}/#')")
    rows = {r["TOPICSTR"]: r for r in res["objects"]}
    assert rows[f"{base}/news"]["ADMIN"] == name and rows[f"{base}/news"]["DURSUB"] == "NO"
    assert rows[f"{base}/news"]["SUBCOUNT"] == 1
    with mq_reason(2085):
        open_topic(m, "", object_name=uniq("NOTOPIC"))
    with mq_reason(2425):
        open_topic(m, f"{base}/#")  # no wildcards in a publication's topic
    with mq_reason(2045):
        open_topic(m, f"{base}/a", options=["INPUT_AS_Q_DEF"])
    with mq_reason(2045):  # a namelist opens for INQUIRE only
        m.call("POST", f"/v1/connections/{m.hconn}/objects",
               {"object_type": "NAMELIST", "object_name": "X", "options": ["OUTPUT"]})
    with mq_reason(2043):  # no MQOPEN of a channel
        m.call("POST", f"/v1/connections/{m.hconn}/objects",
               {"object_type": "CHANNEL", "object_name": "X", "options": ["OUTPUT"]})
    group.mqsc_ok("QM1", f"DELETE TOPIC({name})")


def test_subscriptions_belong_to_their_queue_manager(connect):
    topic = uniq("qsg") + "/z"
    on1, on2 = connect("QM1"), connect("QM2")
    s1 = subscribe(on1, topic, ["CREATE", "MANAGED"])
    on2.put(open_topic(on2, topic)["hobj"], "from QM2", options=["NO_SYNCPOINT"])
    with mq_reason(2033):
        on1.get(s1["hobj"])  # z/OS: no pub/sub cluster or hierarchy, no publication across QMs
    on1.put(open_topic(on1, topic)["hobj"], "from QM1", options=["NO_SYNCPOINT"])
    assert on1.get(s1["hobj"])["data"] == "from QM1"


def test_durable_subscription_survives_a_restart(make_fresh_cluster):
    g = make_fresh_cluster(["QM1"])
    topic, name = uniq("restart") + "/r", uniq("KEEP")
    m = MQ(g.url("QM1"), "PUBSUB")
    s = subscribe(m, topic, ["CREATE", "MANAGED", "DURABLE"], sub_name=name)
    nd = subscribe(m, topic, ["CREATE", "MANAGED"], sub_name=uniq("GONE"))
    g.qms["QM1"].kill()
    g.qms["QM1"].start()
    m.http.close()
    assert display_sub(g, "QM1", nd["sub_name"]) == []
    m = MQ(g.url("QM1"), "PUBSUB")
    m.put(open_topic(m, topic)["hobj"], "after restart", options=["NO_SYNCPOINT"])
    r = subscribe(m, "", ["RESUME", "MANAGED", "DURABLE"], sub_name=name)
    assert r["object_name"] == s["object_name"]
    assert m.get(r["hobj"])["data"] == "after restart"
    g.mqsc_ok("QM1", f"DISPLAY SUB('{name}')")
    m.disconnect()
    m.http.close()


# ---- the drop-in client (pymqi's and ibmmq's Topic, Subscription, SD) ----------------------------


def test_dev_patterns_basic_publish_and_subscribe_through_the_drop_in_client(group):
    """What IBM's mq-dev-patterns Python/basicsubscribe.py and basicpublish.py do, written here
    against ``import qsg_pymqi as mq``: a managed non-durable subscription made from an SD with
    set_vs('ObjectString'), a Topic(qmgr, topic_string=...) opened for output and published to
    with MQPMO_NO_SYNCPOINT, gets with WAIT until MQRC_NO_MSG_AVAILABLE, close(close_sub_queue=True)."""
    import json

    import qsg_pymqi as mq
    from tests.support.pymqi_group import conn_name

    topic_string = uniq("dev") + "/"
    sub_qmgr = mq.connect("QM1", "DEV.APP.SVRCONN", conn_name(group))
    sd = mq.SD()
    sd.Options = mq.CMQC.MQSO_CREATE | mq.CMQC.MQSO_MANAGED | mq.CMQC.MQSO_NON_DURABLE | mq.CMQC.MQSO_FAIL_IF_QUIESCING
    sd.set_vs("ObjectString", topic_string)
    subscription = mq.Subscription(sub_qmgr)
    subscription.sub(sub_desc=sd)

    pub_qmgr = mq.QueueManager(None)
    cd = mq.CD(Version=mq.CMQXC.MQCD_VERSION_11)
    cd.ChannelName, cd.ConnectionName = "DEV.APP.SVRCONN", conn_name(group)
    cd.ChannelType, cd.TransportType = mq.CMQXC.MQCHT_CLNTCONN, mq.CMQXC.MQXPT_TCP
    pub_qmgr.connect_with_options("QM1", cd=cd, sco=mq.SCO())
    topic = mq.Topic(pub_qmgr, topic_string=topic_string)
    topic.open(open_opts=mq.CMQC.MQOO_OUTPUT)
    md = mq.MD()
    md.Format = mq.CMQC.MQFMT_STRING
    pmo = mq.PMO()
    pmo.Options = mq.CMQC.MQPMO_NO_SYNCPOINT
    sent = json.dumps({"Greeting": "Hello from Python!"})
    topic.pub(sent, md, pmo)
    topic.close()
    pub_qmgr.disconnect()

    gmo = mq.GMO(Options=mq.CMQC.MQGMO_NO_SYNCPOINT | mq.CMQC.MQGMO_FAIL_IF_QUIESCING | mq.CMQC.MQGMO_WAIT
                 | mq.CMQC.MQGMO_NO_PROPERTIES)
    gmo.WaitInterval = 2000
    received = []
    while True:
        got_md = mq.MD()
        try:
            received.append(subscription.get(None, got_md, gmo))
        except mq.MQMIError as e:
            assert e.comp == mq.CMQC.MQCC_FAILED and e.reason == mq.CMQC.MQRC_NO_MSG_AVAILABLE
            break
        assert got_md.CorrelId == sd.SubCorrelId  # the subscription's CorrelId
    assert [json.loads(m) for m in received] == [json.loads(sent)]
    queue_name = text_of(subscription.get_sub_queue())
    subscription.close(close_sub_queue=True)
    sub_qmgr.disconnect()
    [res] = group.mqsc("QM1", f"DISPLAY QLOCAL({queue_name})")
    assert res["reason"] == 2085  # the managed queue went with the subscription


def text_of(queue) -> str:
    desc = queue._desc
    return desc if isinstance(desc, str) else desc.decode()


def test_pymqi_durable_resume_unmanaged_and_reasons(group):
    import qsg_pymqi as pymqi
    from tests.support.pymqi_group import conn_name

    topic, name, queue = uniq("pymqi") + "/d", uniq("PYSUB"), uniq("PYQ")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({queue})")
    qmgr = pymqi.connect("QM1", "SVRCONN", conn_name(group))
    sd = pymqi.SD()
    sd["Options"] = pymqi.CMQC.MQSO_CREATE + pymqi.CMQC.MQSO_DURABLE + pymqi.CMQC.MQSO_MANAGED
    sd.set_vs("SubName", name)
    sd.set_vs("ObjectString", topic)
    sub = pymqi.Subscription(qmgr)
    sub.sub(sub_desc=sd)
    again = pymqi.SD(Options=pymqi.CMQC.MQSO_CREATE + pymqi.CMQC.MQSO_DURABLE + pymqi.CMQC.MQSO_MANAGED)
    again.set_vs("SubName", name)
    again.set_vs("ObjectString", topic)
    with pytest.raises(pymqi.MQMIError) as caught:
        pymqi.Subscription(qmgr).sub(sub_desc=again)
    assert caught.value.reason == pymqi.CMQC.MQRC_SUB_ALREADY_EXISTS
    sub.close(sub_close_options=pymqi.CMQC.MQCO_KEEP_SUB, close_sub_queue=True)
    # unmanaged: publications to a queue the program opened
    unmanaged = pymqi.Subscription(qmgr)
    sub_queue = pymqi.Queue(qmgr, queue, pymqi.CMQC.MQOO_INPUT_AS_Q_DEF)
    usd = pymqi.SD(Options=pymqi.CMQC.MQSO_CREATE)
    usd.set_vs("ObjectString", topic)
    unmanaged.sub(sub_desc=usd, sub_queue=sub_queue)
    t = pymqi.Topic(qmgr, topic_string=topic)
    t.open(open_opts=pymqi.CMQC.MQOO_OUTPUT)
    t.pub(b"to both")  # pymqi's default PMO: on z/OS inside the unit of work
    t.close()
    with pytest.raises(pymqi.MQMIError) as caught:
        unmanaged.get(None, pymqi.MD(), pymqi.GMO())
    assert caught.value.reason == pymqi.CMQC.MQRC_NO_MSG_AVAILABLE
    qmgr.commit()
    assert unmanaged.get(None, pymqi.MD(), pymqi.GMO()) == b"to both"
    unmanaged.close(sub_close_options=0, close_sub_queue=True)
    resumed = pymqi.Subscription(qmgr)
    rsd = pymqi.SD(Options=pymqi.CMQC.MQSO_RESUME + pymqi.CMQC.MQSO_DURABLE + pymqi.CMQC.MQSO_MANAGED)
    rsd.set_vs("SubName", name)
    resumed.sub(sub_desc=rsd)
    assert resumed.get(None, pymqi.MD(), pymqi.GMO()) == b"to both"
    resumed.close(sub_close_options=pymqi.CMQC.MQCO_REMOVE_SUB, close_sub_queue=True)
    with pytest.raises(pymqi.MQMIError) as caught:
        pymqi.Subscription(qmgr).sub(sub_desc=rsd)
    assert caught.value.reason == pymqi.CMQC.MQRC_NO_SUBSCRIPTION
    qmgr.disconnect()


def test_asyncio_client_publish_and_subscribe(group):
    import asyncio

    from app.client import CMQC, MD, PMO, aio
    from tests.support.pymqi_group import conn_name

    topic = uniq("aio") + "/t"

    async def scenario() -> bytes:
        qmgr = aio.QueueManager(None)
        await qmgr.connect_tcp_client("QM1", None, "SVRCONN", conn_name(group))
        sub = aio.Subscription(qmgr)
        sd = aio.SD(Options=CMQC.MQSO_CREATE | CMQC.MQSO_MANAGED)
        sd.set_vs("ObjectString", topic)
        await sub.sub(sub_desc=sd)
        t = aio.Topic(qmgr, topic_string=topic)
        await t.open(open_opts=CMQC.MQOO_OUTPUT)
        await t.pub(b"async hello", MD(),
                    PMO(Options=CMQC.MQPMO_NO_SYNCPOINT))
        await t.close()
        got = await sub.get(None)
        await sub.close(close_sub_queue=True)
        await qmgr.disconnect()
        return got

    assert asyncio.run(scenario()) == b"async hello"


def test_publish_and_subscribe_need_pub_and_sub_rights(make_fresh_cluster):
    """Authentication on: PUB (MQOPEN of a topic for output) and SUB (MQSUB) are checked on the
    topic object above the topic string (SET AUTHREC OBJTYPE(TOPIC)); the managed queue needs no
    right of its own, as the queue manager makes it for the subscriber."""
    import httpx

    from tests.support.security import ADMIN, ALICE, assert_2035, mqsc_ok, qsg_cli

    g = make_fresh_cluster(["QM1"], env={"QSG_AUTH": "on"})
    qsg_cli(g, "user", "add", "admin", "--admin", "--password-stdin", stdin=ADMIN[1] + "\n")
    qsg_cli(g, "user", "add", "alice", "--password-stdin", stdin=ALICE[1] + "\n")
    mqsc_ok(g, "QM1", "DEFINE TOPIC(PRICES) TOPICSTR('prices')\n"
                      "SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('alice') AUTHADD(CONNECT)")
    url = g.url("QM1")
    with httpx.Client(base_url=url, auth=ALICE, timeout=30) as http:
        hconn = http.post("/v1/connections", json={}).json()["hconn"]
        topic = {"object_type": "TOPIC", "object_string": "prices/fruit", "options": ["OUTPUT"]}
        sub = {"object_string": "prices/#", "options": ["CREATE", "MANAGED"]}
        assert_2035(http.post(f"/v1/connections/{hconn}/objects", json=topic))
        assert_2035(http.post(f"/v1/connections/{hconn}/subscriptions", json=sub))
        mqsc_ok(g, "QM1", "SET AUTHREC PROFILE(PRICES) OBJTYPE(TOPIC) PRINCIPAL('alice') AUTHADD(PUB,SUB)")
        made = http.post(f"/v1/connections/{hconn}/subscriptions", json=sub)
        assert made.status_code == 201, made.text
        opened = http.post(f"/v1/connections/{hconn}/objects", json=topic)
        assert opened.status_code == 201, opened.text
        put = http.post(f"/v1/connections/{hconn}/objects/{opened.json()['hobj']}/put",
                        json={"data": "pears", "options": ["NO_SYNCPOINT"]})
        assert put.status_code == 201, put.text
        got = http.post(f"/v1/connections/{hconn}/objects/{made.json()['hobj']}/get", json={})
        assert got.json()["data"] == "pears"
        # another topic string, under SYSTEM.BASE.TOPIC, where alice has no right
        other = {**topic, "object_string": "news/today"}
        assert_2035(http.post(f"/v1/connections/{hconn}/objects", json=other))
        http.delete(f"/v1/connections/{hconn}")
