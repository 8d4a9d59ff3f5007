"""From MQI calls to the report in a browser: three in-process queue managers on one Redis and
one clock drive known traffic; their activity logs are shipped on a clean shutdown; the
nightly job runs on the day; the QMs serve /reports; headless Chromium shows the report.

The traffic (2025-06-01, UTC; every time set on the shared ManualClock):

09:00:00 + i s  (i = 0..5)  QM1, appl ORDERS,   puts m0..m5 on the shared queue ORDERS.Q
09:00:10 + j s  (j = 0..3)  QM2, appl BILLING,  puts m6..m9 on ORDERS.Q
09:00:20                    QM1, ORDERS puts 3 messages on its private queue QM1.LOCAL
10:00:00.100 * (k + 1)      QM3, appl SHIPPING, gets m0..m4 (FIFO)
10:00:01 + 0.100 * (k + 1)  QM2, BILLING gets m5..m9
10:00:02                    QM1, ORDERS gets 2 messages of QM1.LOCAL; QM3 gets from the empty
                            ORDERS.Q: fails with 2033

Residency of the ten gets on ORDERS.Q, by hand (get time - put time, ms):
  m0..m4: 3600100, 3599200, 3598300, 3597400, 3596500
  m5..m9: 3601100 - 5000 = 3596100, 3601200 - 10000 = 3591200, 3590300, 3589400, 3588500
  sorted: 3588500 3589400 3590300 3591200 3596100 | 3596500 3597400 3598300 3599200 3600100
  p50 = (3596100 + 3596500) / 2 = 3596300; p95 at rank 8.55 = 3599200 + 0.55 * 900 = 3599695;
  p99 at rank 8.91 = 3599200 + 0.91 * 900 = 3600019; max 3600100.
Work on ORDERS.Q: QM1 6 puts; QM2 4 puts + 5 gets; QM3 5 gets -> 6/20, 9/20, 5/20 = 30%, 45%, 25%;
balance = 0.25 / 0.45.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import redis as redis_sync
import uvicorn

from app.api.app import create_app
from app.cf import keys
from app.cf.keys import QueueLocation, shared_tag
from app.core.clock import ManualClock
from app.settings import Settings
from tests.support.inproc import inprocess_group
from tests.support.mq import MQFailed
from tests.support.redis_server import free_port

DATE = "2025-06-01"
T0 = 1_748_768_400_000  # 2025-06-01T09:00:00Z
HOUR = 3_600_000


async def _drive(redis_url: str, workdir: Path) -> dict[str, Any]:
    """The traffic of the module docstring; returns what the clients saw."""
    clock = ManualClock(T0)

    def at(ms: int) -> None:
        clock.advance(ms - clock.now_ms())
    seen: dict[str, Any] = {"put_ids": [], "put_times": []}
    async with inprocess_group(["QM1", "QM2", "QM3"], redis_url, workdir, clock) as qms:
        await qms["QM1"].mqsc("DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER(YES)\n"
                              "DEFINE QLOCAL(ORDERS.Q) QSGDISP(SHARED) CFSTRUCT(APPL1) BOTHRESH(2)\n"
                              "DEFINE QLOCAL(QM1.LOCAL) QSGDISP(QMGR)")
        orders = await qms["QM1"].connect("ORDERS")
        billing = await qms["QM2"].connect("BILLING")
        shipping = await qms["QM3"].connect("SHIPPING")
        o_out = await orders.open("ORDERS.Q", ["OUTPUT"])
        b_out = await billing.open("ORDERS.Q", ["OUTPUT"])
        for i in range(6):
            at(T0 + i * 1000)
            md = (await orders.put(o_out, f"order {i}"))["md"]
            seen["put_ids"].append(md["msg_id"])
        for j in range(4):
            at(T0 + 10_000 + j * 1000)
            md = (await billing.put(b_out, f"bill {j}"))["md"]
            seen["put_ids"].append(md["msg_id"])
        at(T0 + 20_000)
        local = await orders.open("QM1.LOCAL", ["OUTPUT", "INPUT_SHARED"])
        for n in range(3):
            await orders.put(local, f"local {n}")

        s_in = await shipping.open("ORDERS.Q", ["INPUT_SHARED"])
        b_in = await billing.open("ORDERS.Q", ["INPUT_SHARED"])
        got = []
        for k in range(5):
            at(T0 + HOUR + (k + 1) * 100)
            got.append((await shipping.get(s_in))["md"]["msg_id"])
        for k in range(5):
            at(T0 + HOUR + 1000 + (k + 1) * 100)
            got.append((await billing.get(b_in))["md"]["msg_id"])
        seen["got_ids"] = got
        at(T0 + HOUR + 2000)
        for _ in range(2):
            await orders.get(local)
        with pytest.raises(MQFailed) as failed:
            await shipping.get(s_in)
        assert failed.value.reason == 2033

        # A peer recovery: QM9 failed (a member record, no heartbeat) with a put in a unit of
        # work. Whichever QM takes the recovery lock first (a watcher or one of these calls)
        # recovers it; with wait=True every call returns only once the recovery is done.
        await qms["QM3"].qm.cf.put(QueueLocation(shared_tag("QSG1", "APPL1"), "ORDERS.Q"), qmgr="QM9", hconn="h9",
                                   gen=None, syncpoint=True, priority=0, persistent=True, msg_id=None,
                                   correl_id=None, md_json=b"{}", body=b"in flight")
        r = redis_sync.Redis.from_url(redis_url)
        r.hset(keys.members_key("QSG1"), "QM9", json.dumps({"status": "ACTIVE", "recovered": False}))
        r.close()
        done = await asyncio.gather(*(qm.qm.membership.recover_peer("QM9", wait=True) for qm in qms.values()))
        assert done.count(True) <= 1

        for client in (orders, billing, shipping):
            await client.disconnect()
    return seen


@pytest.fixture(scope="module")
def day(tmp_path_factory, redis_server, spark) -> dict[str, Any]:
    """The traffic, then the nightly job on its day."""
    from spark_jobs.activity_daily import run_job

    work = tmp_path_factory.mktemp("e2e")
    redis_sync.Redis.from_url(redis_server.url).flushall()
    try:
        seen = asyncio.run(_drive(redis_server.url, work))
    finally:  # the session's Redis is shared: leave no group members (QM9) behind
        redis_sync.Redis.from_url(redis_server.url).flushall()
    summary = run_job(spark, DATE, str(work / "activity"), str(work / "reports"))
    return {"work": work, "seen": seen, "summary": summary}


def _records(work: Path) -> list[dict[str, Any]]:
    out = []
    for f in sorted((work / "activity").glob(f"date={DATE}/qmgr=*/*.jsonl")):
        out += [json.loads(line) for line in f.read_text().splitlines()]
    return out


def test_activity_logs_hold_every_call_after_a_clean_shutdown(day):
    work, seen = day["work"], day["seen"]
    assert not list((work / "activity" / ".spool").rglob("*.jsonl*"))  # all shipped, nothing half-written
    assert sorted(p.name for p in (work / "activity").glob("date=*")) == [f"date={DATE}"]
    records = _records(work)
    puts = [r for r in records if r["verb"] == "PUT" and r["object"] == "ORDERS.Q"]
    assert [r["msg_id"] for r in sorted(puts, key=lambda r: r["ts"])] == seen["put_ids"]
    assert [r["ts"] for r in sorted(puts, key=lambda r: r["ts"])] == \
        [T0 + i * 1000 for i in range(6)] + [T0 + 10_000 + j * 1000 for j in range(4)]
    assert {(r["qmgr"], r["appl"], r["qsgdisp"], r["depth"]) for r in puts if r["depth"] == 10} \
        == {("QM2", "BILLING", "SHARED", 10)}
    gets = sorted((r for r in records if r["verb"] == "GET" and r["object"] == "ORDERS.Q" and r["cc"] == 0),
                  key=lambda r: r["ts"])
    assert [g["msg_id"] for g in gets] == seen["got_ids"] == seen["put_ids"]  # FIFO across the group
    assert [g["put_ts"] for g in gets] == [p["ts"] for p in sorted(puts, key=lambda r: r["ts"])]
    assert all(g["size"] in (7, 6) and g["bothresh"] == 2 and g["backout_count"] == 0 and g["syncpoint"] is False
               for g in gets)
    failed = [r for r in records if r["cc"] == 2]
    assert [(f["qmgr"], f["appl"], f["verb"], f["object"], f["rc"]) for f in failed] == \
        [("QM3", "SHIPPING", "GET", "ORDERS.Q", 2033)]
    recovery = [r for r in records if r["verb"] == "PEER_RECOVERY"]
    assert [(r["object"], r["count"]) for r in recovery] == [("QM9", 1)]  # once, by one of the QMs
    assert json.loads(recovery[0]["detail"])["backed_out"] == 1
    assert all(r["latency_us"] >= 0 for r in records if r["verb"] in ("PUT", "GET"))


def test_tables_show_exactly_the_traffic(day):
    s = day["summary"]
    queues = {q["queue"]: q for q in s["queues"]}
    orders = queues["ORDERS.Q"]
    assert (orders["qsgdisp"], orders["puts"], orders["gets"], orders["failures"], orders["peak_depth"]) == \
        ("SHARED", 10, 10, 1, 10)
    assert (orders["residency_p50_ms"], orders["residency_p95_ms"], orders["residency_p99_ms"],
            orders["residency_max_ms"]) == pytest.approx((3596300.0, 3599695.0, 3600019.0, 3600100))
    assert orders["balance"] == pytest.approx(0.25 / 0.45)
    local = queues["QM1.LOCAL"]
    assert (local["qsgdisp"], local["puts"], local["gets"], local["qmgrs"]) == ("QMGR", 3, 2, 1)
    shares = {r["qmgr"]: (r["puts"], r["gets"], r["work_share"]) for r in s["queue_share"]}
    assert shares == {"QM1": (6, 0, pytest.approx(0.30)), "QM2": (4, 5, pytest.approx(0.45)),
                      "QM3": (0, 5, pytest.approx(0.25))}
    hours = {h["hour"]: (h["puts"], h["gets"]) for h in s["hourly"]}
    assert hours[9] == (13, 0) and hours[10] == (0, 12)
    assert sum(p for p, _ in hours.values()) == 13 and sum(g for _, g in hours.values()) == 12
    assert s["failures_by_reason"] == [{"rc": 2033, "reason_name": "MQRC_NO_MSG_AVAILABLE", "count": 1}]
    apps = {a["appl"]: (a["rank"], a["puts"], a["gets"], a["failures"]) for a in s["applications"]}
    assert apps == {"ORDERS": (1, 9, 2, 0), "BILLING": (2, 4, 5, 0), "SHIPPING": (3, 0, 5, 1)}
    assert (s["totals"]["connections"], s["totals"]["peer_recoveries"], s["totals"]["expired"]) == (3, 1, 0)


@pytest.fixture(scope="module")
def reports_url(day):
    """A queue manager's REST app serving the day's reports over real HTTP (no QM behind it:
    /reports reads only the analytics output)."""
    settings = Settings(qmgr="QM1", reports_dir=str(day["work"] / "reports"), auth="off")
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, lifespan="off",
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "the reports server did not start"
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


def test_reports_api(reports_url, day):
    import httpx

    listing = httpx.get(f"{reports_url}/reports").json()["reports"]
    assert [(d["date"], d["status"], d["records"], d["report"]) for d in listing] == \
        [(DATE, "OK", day["summary"]["records"], f"/reports/{DATE}")]
    summary = httpx.get(f"{reports_url}/reports/{DATE}/summary.json").json()
    assert summary["totals"] == day["summary"]["totals"]
    page = httpx.get(f"{reports_url}/reports/{DATE}")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    missing = httpx.get(f"{reports_url}/reports/2025-01-01")
    assert missing.status_code == 404 and missing.json()["error"]["reason"] == 2085
    assert httpx.get(f"{reports_url}/reports/..%2F..%2Fetc").status_code in (400, 404)


def test_report_renders_in_chromium_with_the_days_numbers(reports_url):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium",
                                    args=["--headless", "--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            requested: list[str] = []
            errors: list[str] = []
            page.on("request", lambda r: requested.append(r.url))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"{reports_url}/reports")
            page.click(f"a[href='reports/{DATE}']")
            page.wait_for_url(f"{reports_url}/reports/{DATE}")

            charts = page.locator("svg[data-chart]")
            assert charts.count() == 6
            for i in range(6):
                box = charts.nth(i).bounding_box()
                assert box is not None and box["width"] > 300 and box["height"] > 80
            # drawn, not just laid out: the hourly chart has bars for 09:00 and 10:00
            bars = page.evaluate("""() => [...document.querySelectorAll('svg[data-chart=hourly] g[id^=patch] path')]
                                      .map(p => p.getBBox()).filter(b => b.width > 0 && b.height > 0).length""")
            assert bars >= 4  # background + at least one bar each for puts and gets
            share_labels = page.locator("svg[data-chart=share] text").all_text_contents()
            assert {"30%", "45%", "25%"} <= {t.strip() for t in share_labels}

            def cell(table: str, row: str, metric: str) -> str:
                return page.locator(f"#{table} tr[{row}] td[data-metric={metric}]").inner_text().strip()

            assert cell("queues", "data-queue='ORDERS.Q'", "puts") == "10"
            assert cell("queues", "data-queue='ORDERS.Q'", "gets") == "10"
            assert cell("queues", "data-queue='ORDERS.Q'", "residency_p50_ms") == "3,596,300.0"
            assert cell("queues", "data-queue='ORDERS.Q'", "residency_max_ms") == "3,600,100"
            assert cell("shares", "data-qmgr='QM2'", "work_share") == "45.0%"
            assert page.locator("[data-total=peer_recoveries]").inner_text() == "1"
            assert page.locator("[data-total=puts]").inner_text() == "13"
            assert page.locator("#failures tr[data-rc='2033'] td[data-metric=count]").inner_text() == "1"
            assert errors == []
            assert all(u.startswith(reports_url) for u in requested), requested  # works offline
        finally:
            browser.close()
