"""The live console (``/console``) of real queue-manager processes: its JSON state, its event
stream and its MQSC over HTTP, its refusal of callers without the MQSC admin right, and the page
itself in a real headless Chromium (Debian's, through Playwright): a put made elsewhere shows as
a new depth without a reload, a queue is browsed, a test message put, MQSC run."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from tests.support.mq import connections
from tests.support.mqsc import shared_q
from tests.support.security import ADMIN, ALICE, assert_2035, qsg_cli


@pytest.fixture(scope="module")
def group(make_cluster):
    g = make_cluster(["QM1", "QM2"])
    g.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5)")
    return g


@pytest.fixture
def connect(group):
    yield from connections(group, "CONSOLE.TEST")


def test_state_events_and_mqsc_over_http(group, connect):
    q = shared_q(group)
    m = connect("QM2")
    m.put1(q, "one", options=["NO_SYNCPOINT"])
    state = httpx.get(f"{group.url('QM1')}/console/state", timeout=10).json()
    assert state["qmgr"]["name"] == "QM1" and {m["QMNAME"] for m in state["members"]} >= {"QM1", "QM2"}
    (row,) = [r for r in state["queues"] if r["QUEUE"] == q]
    assert (row["QSGDISP"], row["CURDEPTH"], row["CFSTRUCT"]) == ("SHARED", 1, "APPL1")
    assert any(s.get("CFSTATUS") == "APPL1" or "APPL1" in s.values() for s in state["structures"]), state["structures"]

    with httpx.stream("GET", f"{group.url('QM1')}/console/events", timeout=10) as events:
        assert events.headers["content-type"].startswith("text/event-stream")
        first = next(line for line in events.iter_lines() if line.startswith("data: "))
    assert any(r["QUEUE"] == q for r in json.loads(first.removeprefix("data: "))["queues"])

    answer = httpx.post(f"{group.url('QM1')}/console/mqsc", json={"script": f"DISPLAY QLOCAL({q}) CURDEPTH"},
                        timeout=10).json()
    assert "CURDEPTH(1)" in answer["text"] and "CSQ9022I" in answer["text"], answer["text"]


def test_the_console_needs_the_mqsc_admin_right(make_cluster):
    secured = make_cluster(["QM1"], env={"QSG_AUTH": "on"})
    qsg_cli(secured, "user", "add", ADMIN[0], "--admin", "--password-stdin", stdin=ADMIN[1] + "\n")
    qsg_cli(secured, "user", "add", ALICE[0], "--password-stdin", stdin=ALICE[1] + "\n")
    url = secured.url("QM1")
    assert httpx.get(f"{url}/console", timeout=10).status_code == 200  # the page: its login form, no data
    refused = httpx.get(f"{url}/console/state", timeout=10)
    assert refused.status_code == 401 and "www-authenticate" not in refused.headers  # no basic dialog
    assert_2035(httpx.get(f"{url}/console/state", auth=ALICE, timeout=10))
    assert_2035(httpx.get(f"{url}/console/events", auth=ALICE, timeout=10))
    refused = httpx.post(f"{url}/console/mqsc", json={"script": "DISPLAY QMGR"}, auth=ALICE, timeout=10).json()
    assert refused["results"][0]["reason"] == 2035
    assert httpx.get(f"{url}/console/state", auth=ADMIN, timeout=10).status_code == 200


def test_console_in_chromium_follows_the_group_live(group, connect, tmp_path: Path):
    from playwright.sync_api import expect, sync_playwright

    q = shared_q(group, "DESCR('console test')")
    url = group.url("QM1")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium",
                                    args=["--headless", "--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            requested: list[str] = []
            errors: list[str] = []
            page.on("request", lambda r: requested.append(r.url))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"{url}/console")
            depth = page.locator(f"#queues tr[data-queue='{q}'] td[data-field=curdepth]")
            expect(depth).to_have_text("0", timeout=15000)
            expect(page.locator("#title")).to_have_text("QM1 of QSG1")
            expect(page.locator("#members tr[data-qmgr='QM2']")).to_have_count(1)

            # three puts through another queue manager: the page follows without a reload
            m = connect("QM2")
            for i in range(3):
                m.put1(q, f"message {i}", options=["NO_SYNCPOINT"])
            expect(depth).to_have_text("3", timeout=15000)

            page.click(f"#queues tr[data-queue='{q}']")
            expect(page.locator("#messages tbody tr")).to_have_count(3, timeout=15000)
            expect(page.locator("#messages tbody tr").first.locator("td[data-field=data]")).to_have_text("message 0")

            page.fill("#put-q", q)
            page.fill("#put-data", "from the console")
            page.click("#put-form button")
            expect(page.locator("#put-result")).to_contain_text("put, MsgId", timeout=15000)
            expect(depth).to_have_text("4", timeout=15000)

            page.fill("#mqsc-script", f"DISPLAY QLOCAL({q}) CURDEPTH")
            page.click("#mqsc-form button")
            expect(page.locator("#mqsc-output")).to_contain_text("CURDEPTH(4)", timeout=15000)

            shot = tmp_path / "console.png"
            page.screenshot(path=str(shot), full_page=True)
            assert shot.stat().st_size > 20_000
            assert errors == []
            assert all(u.startswith(url) or u.startswith("data:") for u in requested), requested  # offline
        finally:
            browser.close()
