"""The live console (``/console``) of real queue-manager processes: its JSON state, its event
stream and its MQSC over HTTP, its refusal of callers without the MQSC admin right, and the page
itself in a real headless Chromium (Debian's, through Playwright): a put made elsewhere shows as
a new depth without a reload, a queue is browsed, a test message put, MQSC run; the rate charts
grow under load, the timeline shows a depth event with its CorrelId and links to its event
message, and the group view shows a SIGKILLed queue manager FAILED, then recovered by its peer.

Screenshots go to ``QSG_CONSOLE_SHOTS`` when it names a folder (else the test's tmp_path)."""

from __future__ import annotations

import json
import os
import re
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.support.mq import connections
from tests.support.mqsc import shared_q
from tests.support.names import uniq
from tests.support.security import ADMIN, ALICE, CSRF, assert_2035, mqsc_ok, qsg_cli


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> Path:
    """The group's nightly reports folder (QSG_REPORTS_DIR), where a test lays a day's report."""
    return tmp_path_factory.mktemp("reports")


@pytest.fixture(scope="module")
def group(make_cluster, reports):
    g = make_cluster(["QM1", "QM2"], env={"QSG_REPORTS_DIR": str(reports)})
    g.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5)")
    return g


@pytest.fixture
def connect(group):
    yield from connections(group, "CONSOLE.TEST")


def shots(tmp_path: Path) -> Path:
    """Where the screenshots go: ``QSG_CONSOLE_SHOTS`` (to look at them), else the test's folder."""
    folder = Path(os.environ.get("QSG_CONSOLE_SHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@contextmanager
def console_page(url: str, width: int = 1400):
    """The console of ``url`` in Debian's Chromium (no Playwright browser download); yields the
    page, and at the end checks that no script failed and nothing came from outside the QM."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium",
                                    args=["--headless", "--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": width, "height": 1000})
            requested: list[str] = []
            errors: list[str] = []
            page.on("request", lambda r: requested.append(r.url))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"{url}/console")
            yield page
            assert errors == []
            assert all(u.startswith(url) or u.startswith("data:") for u in requested), requested  # offline
        finally:
            browser.close()


def no_overflow(page) -> None:
    """No panel is wider than the page, and no table is wider than its panel (each could scroll
    inside its panel, but at 1280 to 1920 px none has to: the CF structures' used to)."""
    overflow = page.evaluate("""() => [...document.querySelectorAll('section')]
        .filter((s) => !s.hidden && s.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
        .map((s) => s.id || s.querySelector('h2').textContent)""")
    assert overflow == [] and page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), overflow
    scrolled = page.evaluate("""() => [...document.querySelectorAll('.scroll')]
        .filter((d) => d.offsetParent !== null && d.scrollWidth > d.clientWidth + 1)
        .map((d) => d.querySelector('table').id)""")
    assert scrolled == [], scrolled


def test_state_events_and_mqsc_over_http(group, connect):
    q = shared_q(group)
    m = connect("QM2")
    m.put1(q, "one", options=["NO_SYNCPOINT"])
    state = httpx.get(f"{group.url('QM1')}/console/state", timeout=10).json()
    assert state["qmgr"]["name"] == "QM1" and {m["QMNAME"] for m in state["members"]} >= {"QM1", "QM2"}
    (row,) = [r for r in state["queues"] if r["QUEUE"] == q]
    assert (row["QSGDISP"], row["CURDEPTH"], row["CFSTRUCT"]) == ("SHARED", 1, "APPL1")
    assert any(s.get("CFSTATUS") == "APPL1" or "APPL1" in s.values() for s in state["structures"]), state["structures"]
    # a private queue shows in its own queue manager's console only; the shared one in every one's
    private = uniq("CONSOLE.PRIV")
    group.mqsc_ok("QM2", f"DEFINE QLOCAL({private})")
    qm2 = {r["QUEUE"]: r for r in httpx.get(f"{group.url('QM2')}/console/state", timeout=10).json()["queues"]}
    assert (qm2[private]["QSGDISP"], qm2[q]["QSGDISP"]) == ("QMGR", "SHARED")
    state = httpx.get(f"{group.url('QM1')}/console/state", timeout=10).json()
    assert private not in {r["QUEUE"] for r in state["queues"]} and q in {r["QUEUE"] for r in state["queues"]}
    group.mqsc_ok("QM2", f"DELETE QLOCAL({private})")

    with httpx.stream("GET", f"{group.url('QM1')}/console/events", timeout=10) as events:
        assert events.headers["content-type"].startswith("text/event-stream")
        first = next(line for line in events.iter_lines() if line.startswith("data: "))
    assert any(r["QUEUE"] == q for r in json.loads(first.removeprefix("data: "))["queues"])

    # the group's happenings: QM1's and QM2's (none yet is fine), every peer answered; a bad scope is an MQ error
    merged = httpx.get(f"{group.url('QM1')}/console/happenings?scope=group", timeout=10).json()
    assert merged["unanswered"] == [] and isinstance(merged["happenings"], list)
    bad = httpx.get(f"{group.url('QM1')}/console/happenings?scope=everything", timeout=10)
    assert bad.status_code < 500 and bad.json()["error"]["reason"] == 3097

    answer = httpx.post(f"{group.url('QM1')}/console/mqsc", json={"script": f"DISPLAY QLOCAL({q}) CURDEPTH"},
                        timeout=10).json()
    assert "CURDEPTH(1)" in answer["text"] and "CSQ9022I" in answer["text"], answer["text"]


#: An administrator whose wrong passwords the throttle test makes (ADMIN is never throttled here).
OPS = ("ops", "ops-secret")


@pytest.fixture(scope="module")
def secured(make_cluster):
    """Two queue managers with authentication on (the throttle after 3 failures of one name), an
    administrator, another one (OPS) and a user without the admin right (ALICE)."""
    g = make_cluster(["QM1", "QM2"], env={"QSG_AUTH": "on", "QSG_AUTH_FAIL_LIMIT": "3"})
    for (name, password), admin in ((ADMIN, True), (OPS, True), (ALICE, False)):
        qsg_cli(g, "user", "add", name, *(["--admin"] if admin else []), "--password-stdin", stdin=password + "\n")
    return g


def password_checks(group, qm: str) -> dict[str, float]:
    """``qsg_auth_password_checks_total`` by kind (argon2 runs) and ``qsg_auth_throttled_total``
    of ``qm``, from its /metrics."""
    text = httpx.get(f"{group.url(qm)}/metrics", auth=ADMIN, timeout=10).text
    out = {kind: float(v) for kind, v in re.findall(r'^qsg_auth_password_checks_total\{kind="(\w+)"\} (\S+)$',
                                                     text, re.M)}
    out["throttled"] = float(re.search(r"^qsg_auth_throttled_total (\S+)$", text, re.M).group(1))
    return out


def test_the_console_needs_the_mqsc_admin_right(secured):
    url = secured.url("QM1")
    assert httpx.get(f"{url}/console", timeout=10).status_code == 200  # the page: its login form, no data
    # the charting library is no data either: the login page loads it; other names are unknown (2085)
    chart_lib = httpx.get(f"{url}/console/vendor/uPlot.iife.min.js", timeout=10)
    assert chart_lib.status_code == 200 and chart_lib.headers["content-type"].startswith("text/javascript")
    assert httpx.get(f"{url}/console/vendor/uPlot.min.css", timeout=10).status_code == 200
    unknown = httpx.get(f"{url}/console/vendor/other.js", auth=ADMIN, timeout=10)
    assert unknown.status_code == 404 and unknown.json()["error"]["reason"] == 2085
    refused = httpx.get(f"{url}/console/state", timeout=10)
    assert refused.status_code == 401 and "www-authenticate" not in refused.headers  # no basic dialog
    assert_2035(httpx.get(f"{url}/console/state", auth=ALICE, timeout=10))
    assert_2035(httpx.get(f"{url}/console/events", auth=ALICE, timeout=10))
    assert_2035(httpx.get(f"{url}/console/happenings?scope=group", auth=ALICE, timeout=10))
    refused = httpx.post(f"{url}/console/mqsc", json={"script": "DISPLAY QMGR"}, auth=ALICE, timeout=10).json()
    assert refused["results"][0]["reason"] == 2035
    admin_state = httpx.get(f"{url}/console/state", auth=ADMIN, timeout=10)
    assert admin_state.status_code == 200 and isinstance(admin_state.json()["history"], list)


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


def test_charts_grow_under_load_and_the_layout_holds(group, connect, reports, tmp_path: Path):
    from playwright.sync_api import expect

    q = shared_q(group, "DESCR('rates')")
    # a night's report that has the queue (the nightly job writes these; tests/test_analytics_e2e.py runs it)
    day = reports / "2026-11-26"
    day.mkdir()
    (day / "report.html").write_text(f'<table><tr data-queue="{q}" id="queue-{q}"><td>{q}</td></tr></table>')
    (day / "summary.json").write_text(json.dumps({"date": "2026-11-26", "queues": [{"queue": q, "puts": 1}]}))
    url = group.url("QM1")
    with console_page(url, width=1280) as page:
        expect(page.locator(f"#queues tr[data-queue='{q}']")).to_have_count(1, timeout=15000)
        link = page.locator(f"#queues tr[data-queue='{q}'] a")
        expect(link).to_have_attribute("href", f"/reports/2026-11-26#queue-{q}")
        assert httpx.get(f"{url}/reports/2026-11-26", timeout=10).status_code == 200
        expect(page.locator("#queues tr[data-queue='SYSTEM.ADMIN.PERFM.EVENT'] a")).to_have_count(0)  # not in it
        page.select_option("#chart-queue", q)
        expect(page.locator("#chart-queue-rates .chart-q")).to_have_text(q)
        for chart in ("chart-qmgr", "chart-queue-rates", "chart-depth"):
            expect(page.locator(f"#{chart} canvas")).to_have_count(1, timeout=15000)
        max_puts = "(id, label) => { const c = window.qsgConsole.charts[id]; if (!c) return 0;" \
                   " const i = c.labels.indexOf(label) + 1; return i ? Math.max(0, ...c.data[i]) : 0; }"
        assert page.evaluate(max_puts, ["chart-queue-rates", "puts"]) == 0

        # load through QM2: 60 puts, 20 gets; the rate series of the queue and of QM2 grow
        m = connect("QM2")
        for i in range(60):
            m.put1(q, f"load {i}", options=["NO_SYNCPOINT"])
        h = m.open(q, ["INPUT_SHARED"])
        for _ in range(20):
            m.get(h, options=["NO_SYNCPOINT"])
        page.wait_for_function(f"() => ({max_puts})('chart-queue-rates', 'puts') > 0", timeout=15000)
        page.wait_for_function(f"() => ({max_puts})('chart-queue-rates', 'gets') > 0", timeout=15000)
        page.wait_for_function(f"() => ({max_puts})('chart-qmgr', 'QM2 put') > 0", timeout=15000)
        page.wait_for_function(f"() => ({max_puts})('chart-depth', 'CURDEPTH') === 40", timeout=15000)
        # every put is counted once: the rates times the intervals add up to the 60 puts
        total = page.evaluate("""(q) => window.qsgConsole.points.reduce(
            (n, p) => n + ((p.queues[q] || {}).put || 0) * p.ms / 1000, 0)""", q)
        assert round(total) == 60
        assert page.evaluate(max_puts, ["chart-qmgr", "QM1 put"]) == 0  # QM1 put nothing to it
        no_overflow(page)
        page.wait_for_function("() => window.qsgConsole.points.length >= 5", timeout=15000)  # live: a point a second
        page.locator("#charts").screenshot(path=str(shots(tmp_path) / "charts-1280.png"))
        page.screenshot(path=str(shots(tmp_path) / "console-1280.png"), full_page=True)
        page.set_viewport_size({"width": 1920, "height": 1000})
        no_overflow(page)
        page.screenshot(path=str(shots(tmp_path) / "console-1920.png"), full_page=True)
        # every control has an accessible name
        unnamed = page.evaluate("""() => [...document.querySelectorAll('input, select, textarea')]
            .filter((e) => !e.getAttribute('aria-label') && !(e.id && document.querySelector(`label[for='${e.id}']`)))
            .map((e) => e.id)""")
        assert unnamed == []


def test_timeline_shows_a_depth_event_with_its_correl_id(group, connect, tmp_path: Path):
    from playwright.sync_api import expect

    for qm in ("QM1", "QM2"):
        group.mqsc_ok(qm, "ALTER QMGR PERFMEV(ENABLED)")
    q = shared_q(group, "MAXDEPTH(10) QDEPTHHI(50) QDPHIEV(ENABLED)")
    url = group.url("QM1")
    with console_page(url) as page:
        expect(page.locator(f"#queues tr[data-queue='{q}']")).to_have_count(1, timeout=15000)
        m = connect("QM2")
        for i in range(5):  # the fifth crosses 50 % of 10 through QM2: QM2 coordinates
            m.put1(q, f"deep {i}", options=["NO_SYNCPOINT"])
        page.fill("#timeline-filter", q)
        row = page.locator(f"#timeline tr[data-verb=EVENT][data-object='{q}']")
        expect(row).to_have_count(1, timeout=20000)
        expect(row).to_contain_text("MQRC_Q_DEPTH_HIGH")
        expect(row).to_contain_text("coordinated by QM2")
        expect(page.locator("#coordinator")).to_contain_text(f"MQRC_Q_DEPTH_HIGH on {q}", timeout=15000)
        expect(page.locator("#coordinator")).to_contain_text("coordinated by QM2")
        link = row.locator("td[data-field=correl_id] a")
        correl_id = link.inner_text().removeprefix("CorrelId ").strip()
        assert len(correl_id) == 48 and correl_id != "0" * 48
        page.fill("#timeline-filter", "NO.SUCH.QUEUE")  # the filter hides it
        expect(row).to_have_count(0)
        page.fill("#timeline-filter", q)
        row.locator("td[data-field=correl_id] a").click()
        # the link browses QM1's event message with that CorrelId: QM1's null event (it put nothing)
        expect(page.locator("#browse-q")).to_have_text("SYSTEM.ADMIN.PERFM.EVENT")
        message = page.locator(f"#messages tr[data-correl-id='{correl_id}']")
        expect(message).to_have_count(1, timeout=15000)
        event = json.loads(message.locator("td[data-field=data]").inner_text())
        assert (event["reason_name"], event["parameters"]["QName"], event["parameters"]["MsgEnqCount"]) == (
            "MQRC_Q_DEPTH_HIGH", q, 0)
        # the group's timeline: QM2's event message of the same group event, with the same CorrelId,
        # linked to QM2's console (the message is on QM2's SYSTEM.ADMIN.PERFM.EVENT)
        page.select_option("#timeline-scope", "group")
        events = page.locator(f"#timeline tr[data-verb=EVENT][data-object='{q}']")
        expect(events).to_have_count(2, timeout=15000)
        expect(events.locator("td[data-field=correl_id]")).to_have_text([f"CorrelId {correl_id}"] * 2)
        qm2_link = page.locator(
            f"#timeline tr[data-verb=EVENT][data-object='{q}'][data-qmgr=QM2] td[data-field=correl_id] a")
        assert qm2_link.get_attribute("href") == (
            f"{group.url('QM2')}/console#browse=SYSTEM.ADMIN.PERFM.EVENT&correl_id={correl_id}")
        page.locator("#timeline-section").screenshot(path=str(shots(tmp_path) / "timeline.png"))
    for qm in ("QM1", "QM2"):
        group.mqsc_ok(qm, "ALTER QMGR PERFMEV(DISABLED)")


def test_group_view_shows_a_killed_qmgr_failed_then_recovered(make_fresh_cluster, tmp_path: Path):
    from playwright.sync_api import expect

    g = make_fresh_cluster(["QM1", "QM2"], env={"QSG_HEARTBEAT_INTERVAL_S": "0.5", "QSG_HEARTBEAT_TTL_S": "3"})
    g.mqsc_ok("QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5)")
    with console_page(g.url("QM1"), width=1400) as page:
        qm2 = page.locator("#members tr[data-qmgr='QM2']")
        expect(qm2.locator("td[data-field=status]")).to_have_text("ACTIVE", timeout=15000)
        expect(page.locator("#structures tr[data-structure='APPL1']")).to_contain_text("ACTIVE", timeout=15000)
        no_overflow(page)
        incarnation = qm2.locator("td[data-field=incarnation]").inner_text()
        assert int(incarnation) >= 1

        g.qms["QM2"].kill()  # SIGKILL: no clean shutdown, its lease lapses
        expect(qm2.locator("td[data-field=status]")).to_have_text("FAILED", timeout=30000)
        expect(page.locator("#recoveries li[data-recovered='QM2']")).to_contain_text("QM2 recovered by QM1",
                                                                                   timeout=30000)
        expect(qm2.locator("td[data-field=recovered]")).to_have_text("YES", timeout=15000)
        expect(page.locator("#timeline tr[data-verb=PEER_RECOVERY][data-object='QM2']")).to_have_count(1)
        expect(page.locator("#recoveries")).to_contain_text("QM2 is FAILED")
        page.locator("#group").screenshot(path=str(shots(tmp_path) / "group-recovered.png"))


def test_group_view_draws_igq_flows_and_links_the_moved_message(group, connect, tmp_path: Path):
    from playwright.sync_api import expect

    group.mqsc_ok("QM1", "DEFINE QLOCAL(SYSTEM.QSG.TRANSMIT.QUEUE) QSGDISP(SHARED) CFSTRUCT(APPL1) USAGE(XMITQ) "
                         "REPLACE")
    target = uniq("QM2.ORDERS", 4)
    group.mqsc_ok("QM2", f"DEFINE QLOCAL({target}) QSGDISP(QMGR)")
    for qm in ("QM1", "QM2"):
        group.mqsc_ok(qm, "ALTER QMGR IGQ(ENABLED)")
    with console_page(group.url("QM2")) as page:
        page.wait_for_function("() => window.qsgConsole.points.length > 0", timeout=15000)
        m = connect("QM1")
        h = m.open(target, ["OUTPUT"], qmgr="QM2")  # resolves to the shared transmission queue
        msg_ids = [m.put(h, f"order {i}", options=["NO_SYNCPOINT"])["md"]["msg_id"] for i in range(5)]
        flow = page.locator("#igq-flows li[data-flow='QM1 \u2192 QM2']")
        expect(flow).to_have_text(f"QM1 \u2192 QM2: 5 to {target}", timeout=20000)
        expect(page.locator("#igq tr[data-qmgr='QM1'] td").nth(3)).to_have_text("5", timeout=15000)  # sent
        expect(page.locator("#igq tr[data-qmgr='QM2'] td").nth(4)).to_have_text("5", timeout=15000)  # received
        page.fill("#timeline-filter", target)
        moves = page.locator(f"#timeline tr[data-verb=IGQ][data-object='{target}']")
        expect(moves).to_have_count(5)
        expect(moves.first).to_contain_text("from QM1 to QM2")
        moves.first.locator("td[data-field=msg_id] a").click()
        expect(page.locator(f"#messages tr[data-msg-id='{msg_ids[-1]}']")).to_have_count(1, timeout=15000)
        page.locator("#group").screenshot(path=str(shots(tmp_path) / "group-igq.png"))
    for qm in ("QM1", "QM2"):
        group.mqsc_ok(qm, "ALTER QMGR IGQ(DISABLED)")


def test_timeline_shows_a_report_and_links_to_it(group, connect):
    from playwright.sync_api import expect

    q, reply = shared_q(group), shared_q(group)
    with console_page(group.url("QM1")) as page:
        page.wait_for_function("() => window.qsgConsole.points.length > 0", timeout=15000)
        put = connect("QM1").put1(q, "confirm me", md={"report": ["COA"], "reply_to_q": reply},
                                  options=["NO_SYNCPOINT"])
        page.select_option("#timeline-kind", "REPORT")
        row = page.locator(f"#timeline tr[data-verb=REPORT][data-object='{reply}']")
        expect(row).to_have_count(1, timeout=20000)
        expect(row).to_contain_text(f"COA report to {reply} at QM1")
        row.locator("td[data-field=msg_id] a").click()
        expect(page.locator("#browse-q")).to_have_text(reply)
        report = page.locator("#messages tbody tr[data-msg-id]")
        expect(report).to_have_count(1, timeout=15000)
        # a COA report's CorrelId is the original's MsgId (MQRO_COPY_MSG_ID_TO_CORREL_ID, the default)
        assert report.get_attribute("data-correl-id") == put["md"]["msg_id"]


def test_group_timeline_with_auth_on_for_an_admin_not_for_a_user(secured):
    """The group's timeline (``/console/happenings?scope=group``) with authentication on: an
    administrator sees every queue manager's happenings - QM2's asked by QM1 with the caller's
    credentials, HTTP basic or the login cookie - and a user without the admin right gets MQ's
    2035 as JSON (no page), however authenticated."""
    mqsc_ok(secured, "QM2", "ALTER QMGR PERFMEV(ENABLED)\n"
                            "DEFINE QLOCAL(CONSOLE.TL.PRIV) MAXDEPTH(2) QDEPTHHI(50) QDPHIEV(ENABLED) REPLACE")
    hconn = httpx.post(f"{secured.url('QM2')}/v1/connections", json={"appl_name": "TL"}, auth=ADMIN,
                       timeout=10).json()["hconn"]
    put = httpx.post(f"{secured.url('QM2')}/v1/connections/{hconn}/put1", auth=ADMIN, timeout=10,
                     json={"object_name": "CONSOLE.TL.PRIV", "options": ["NO_SYNCPOINT"], "data": "deep"})
    assert put.status_code == 201, put.text  # depth 1 of 2: the depth high event, on QM2

    def qm2_event(answer: dict) -> bool:
        return any(h["verb"] == "EVENT" and h["qmgr"] == "QM2" and h["object"] == "CONSOLE.TL.PRIV"
                   for h in answer["happenings"])

    url = secured.url("QM1")
    by_basic = httpx.get(f"{url}/console/happenings?scope=group", auth=ADMIN, timeout=10)
    assert by_basic.status_code == 200 and by_basic.json()["unanswered"] == [], by_basic.text
    assert qm2_event(by_basic.json()), by_basic.text
    assert not qm2_event(httpx.get(f"{url}/console/happenings", auth=ADMIN, timeout=10).json())  # QM1's own
    with httpx.Client(base_url=url, timeout=10) as admin:  # the console's way: IBM's login cookie
        assert admin.post("/ibmmq/rest/v1/login", json={"username": ADMIN[0], "password": ADMIN[1]},
                          headers=CSRF).status_code == 204
        by_cookie = admin.get("/console/happenings?scope=group")
        assert by_cookie.status_code == 200 and by_cookie.json()["unanswered"] == [], by_cookie.text
        assert qm2_event(by_cookie.json())
    with httpx.Client(base_url=url, timeout=10) as alice:
        assert alice.post("/ibmmq/rest/v1/login", json={"username": ALICE[0], "password": ALICE[1]},
                          headers=CSRF).status_code == 204
        refused = alice.get("/console/happenings?scope=group")
    for r in (refused, httpx.get(f"{url}/console/happenings?scope=group", auth=ALICE, timeout=10)):
        assert_2035(r)
        assert r.headers["content-type"].startswith("application/json")
    mqsc_ok(secured, "QM2", "ALTER QMGR PERFMEV(DISABLED)\nDELETE QLOCAL(CONSOLE.TL.PRIV) PURGE")


def test_console_polls_cost_no_argon2_but_a_wrong_password_does(secured):
    """The console asks for the group's timeline every 3 s; with HTTP basic credentials each poll
    is authenticated by QM1 and, forwarded, by every other QM. A credential checked once is
    remembered (no argon2 again, on either QM: ``qsg_auth_password_checks_total`` stays put); a
    wrong password still costs a full argon2 check each time and counts toward the throttle,
    which refuses the next guess without one - and still lets the right password through."""
    url = secured.url("QM1")

    def poll(auth) -> httpx.Response:
        return httpx.get(f"{url}/console/happenings?scope=group", auth=auth, timeout=10)

    assert poll(OPS).status_code == 200  # checked once (argon2 on QM1, and on QM2 when forwarded)
    before = {qm: password_checks(secured, qm) for qm in ("QM1", "QM2")}
    for _ in range(5):
        answer = poll(OPS)
        assert answer.status_code == 200 and answer.json()["unanswered"] == [], answer.text
    assert {qm: password_checks(secured, qm) for qm in ("QM1", "QM2")} == before
    wrong = (OPS[0], "not-the-password")
    for n in (1, 2, 3):  # QSG_AUTH_FAIL_LIMIT=3: each a full check on QM1 (QM2 is never asked)
        assert_2035(poll(wrong), 401)
        assert password_checks(secured, "QM1") == {**before["QM1"], "known": before["QM1"]["known"] + n}
    assert_2035(poll(wrong), 401)  # the fourth guess: refused by the throttle, no argon2
    assert password_checks(secured, "QM1") == {**before["QM1"], "known": before["QM1"]["known"] + 3,
                                               "throttled": before["QM1"]["throttled"] + 1}
    assert poll(OPS).status_code == 200  # the right password, checked before, is not locked out
    assert password_checks(secured, "QM2") == before["QM2"]
