"""``GET /metrics`` of real queue-manager processes, parsed with prometheus-client's own parser:
call counts by verb and reason code, latency histograms, live queue state, connections,
units of work, the lease, CF structures and the coupling facility's round trips."""

from __future__ import annotations

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.support.mq import connections
from tests.support.mqsc import shared_q


@pytest.fixture(scope="module")
def group(make_cluster):
    g = make_cluster(["QM1", "QM2"])
    g.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5)")
    return g


@pytest.fixture
def connect(group):
    yield from connections(group, "METRICS")


def scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    r = httpx.get(f"{url}/metrics", timeout=10)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain"), r.text
    samples = {}
    for family in text_string_to_metric_families(r.text):
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return samples


def value(samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def growth(before, after):
    """How much a sample grew between two scrapes: ``grew(name, **labels)``."""
    def grew(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)
    return grew


def test_calls_queues_and_group_state(group, connect):
    q = shared_q(group)
    before = scrape(group.url("QM1"))
    m = connect("QM1")
    h = m.open(q, ["OUTPUT", "INPUT_SHARED"])
    for _ in range(3):
        m.put(h, "x", options=["NO_SYNCPOINT"])
    m.get(h, ["NO_SYNCPOINT"])
    m.put(h, "in a unit of work", options=["SYNCPOINT"])
    r = m.http.post(f"/v1/connections/{m.hconn}/objects/{h}/get", json={"options": ["NO_SYNCPOINT"],
                                                                          "match": {"msg_id": "ab" * 24}})
    assert r.json()["error"]["reason"] == 2033

    after = scrape(group.url("QM1"))
    grew = growth(before, after)
    assert grew("qsg_mqi_calls_total", verb="PUT", reason="0") == 4
    assert grew("qsg_mqi_calls_total", verb="GET", reason="0") == 1
    assert grew("qsg_mqi_calls_total", verb="GET", reason="2033") == 1
    assert grew("qsg_mqi_call_duration_seconds_count", verb="PUT") == 4
    assert grew("qsg_cf_call_duration_seconds_count", script="put") >= 4
    labels = {"queue": q, "qsgdisp": "SHARED"}
    assert value(after, "qsg_queue_depth", **labels) == 3  # CURDEPTH counts the uncommitted put, as in MQ
    assert value(after, "qsg_queue_uncommitted_messages", **labels) == 1
    assert value(after, "qsg_queue_open_input_handles", **labels) == 1
    assert value(after, "qsg_queue_open_output_handles", **labels) == 1
    assert value(after, "qsg_queue_enqueued_messages", **labels) == 4
    assert value(after, "qsg_queue_dequeued_messages", **labels) == 1
    assert value(after, "qsg_queue_last_put_age_seconds", **labels) >= 0
    assert value(after, "qsg_units_of_work") >= 1 and value(after, "qsg_connections") >= 1
    assert value(after, "qsg_cf_structure_active", structure="APPL1") == 1
    assert value(after, "qsg_heartbeat_lease_valid") == 1 and value(after, "qsg_qmgr_running") == 1
    assert abs(value(after, "qsg_clock_offset_ms")) < 1000  # one host: its clock is Redis's

    # QM2 sees the same shared queue's depth but none of QM1's handles or calls
    other = scrape(group.url("QM2"))
    assert value(other, "qsg_queue_depth", **labels) == 3
    assert value(other, "qsg_queue_open_input_handles", **labels) == 0
    m.backout()
    assert value(scrape(group.url("QM1")), "qsg_queue_uncommitted_messages", **labels) == 0


def test_batch_calls_count_every_message_in_the_calls_and_the_latency_histogram(group, connect):
    """A put-batch and a get-batch count as the MQPUTs and MQGETs they stand for: in the call
    counter by reason, and in the latency histogram (count, sum and buckets agree)."""
    q = shared_q(group)
    m = connect("QM1")
    h = m.open(q, ["OUTPUT", "INPUT_SHARED", "BROWSE"])
    before = scrape(group.url("QM1"))
    path = f"/v1/connections/{m.hconn}/objects/{h}"
    r = m.http.post(f"{path}/put-batch", json={"options": ["NO_SYNCPOINT"],
                                                "messages": [{"data": f"m{i}"} for i in range(7)]})
    assert r.status_code == 201, r.text
    r = m.http.post(f"{path}/get-batch", json={"options": ["NO_SYNCPOINT"], "max_messages": 5})
    assert r.status_code == 200 and len(r.json()["messages"]) == 5, r.text
    r = m.http.post(f"{path}/get-batch", json={"options": ["BROWSE_FIRST"], "max_messages": 10})
    assert r.status_code == 200 and len(r.json()["messages"]) == 2, r.text
    grew = growth(before, scrape(group.url("QM1")))
    assert grew("qsg_mqi_calls_total", verb="PUT", reason="0") == 7
    assert grew("qsg_mqi_calls_total", verb="GET", reason="0") == 5
    assert grew("qsg_mqi_calls_total", verb="BROWSE", reason="0") == 2
    for verb, n in (("PUT", 7), ("GET", 5), ("BROWSE", 2)):
        assert grew("qsg_mqi_call_duration_seconds_count", verb=verb) == n
        assert grew("qsg_mqi_call_duration_seconds_bucket", verb=verb, le="+Inf") == n
        assert grew("qsg_mqi_call_duration_seconds_sum", verb=verb) > 0


def test_metrics_need_credentials_when_authentication_is_on(make_cluster):
    secured = make_cluster(["QM1"], env={"QSG_AUTH": "on"})
    r = httpx.get(f"{secured.url('QM1')}/metrics", timeout=10)
    assert r.status_code == 401 and r.json()["error"]["reason"] == 2035
