"""The documentation site (mkdocs.yml, docs/): it builds with ``mkdocs build --strict`` (a broken
link, a page outside the nav or a nav entry without its page fails the suite), its generated
reference holds every id the code has, every lab and guide with commands is run by a test, the
README's links resolve, and ``qsg docs`` serves the site over HTTP without the Internet."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.support.doclabs import DOCS, ROOT, blocks
from tests.support.ports import free_port_block

sys.path.insert(0, str(ROOT / "tools"))
import docs_reference  # noqa: E402 - the mkdocs hook, a file of tools/


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "WARNING" not in done.stderr, done.stderr[-6000:]
    return out


def _text(site: Path, page: str) -> str:
    return (site / page).read_text()


def test_the_site_builds_strictly_with_every_page(site):
    for page in ("index.html", "get-started.html", "labs/index.html", "labs/peer-recovery.html", "api.html",
                 "design.html", "ibm-rules.html", "reference/openapi.html", "explanation/reliability.html"):
        assert (site / page).exists(), page
    assert "lab.sh" in {p.name for p in (site / "labs").iterdir()}  # the helpers the labs source


def test_the_generated_reference_holds_every_id_of_the_code(site):
    reasons = _text(site, "reference/reason-codes.html")
    assert all(f"{name}</code>" in reasons for name, _ in docs_reference.reason_codes())
    assert "MQRCCF_CF_STRUC_ERROR" in reasons and "MQRC_MQRCCF" not in reasons
    assert "MQRC_NO_MSG_AVAILABLE" in reasons and "2033" in reasons
    settings = _text(site, "reference/settings.html")
    assert all(var in settings for var, *_ in docs_reference.settings())
    metrics = _text(site, "reference/metrics.html")
    names = [name for name, *_ in docs_reference.metrics()]
    assert {"qsg_mqi_calls_total", "qsg_queue_depth", "qsg_peer_recoveries_total"} <= set(names)
    assert all(name in metrics for name in names)
    messages = _text(site, "reference/log-messages.html")
    source_ids = {m for p in (ROOT / "app").rglob("*.py") for m in docs_reference.MESSAGE_ID.findall(p.read_text())}
    written = set(docs_reference.log_messages())
    assert {"CSQE011I", "CSQE013I", "CSQY022I", "QSGE201W"} <= written
    assert all(mid in messages for mid in written)
    # an id the code names only in a comment or docstring is not a message it writes
    assert source_ids - written <= {"CSQ5100I"}, source_ids - written
    api = _text(site, "reference/openapi.html")
    schema = docs_reference.openapi()
    assert all(path.replace("{", "").replace("}", "") in api.replace("{", "").replace("}", "")
               for path in schema["paths"])
    assert "/v1/connections/{hconn}/objects/{hobj}/get" in schema["paths"]


#: Guides whose commands no test runs yet, and why; a page leaves this list when a test runs it.
NOT_RUN_YET: dict[str, str] = {}


def test_every_lab_and_guide_with_commands_is_run_by_a_test():
    tests = "".join(p.read_text() for p in (ROOT / "tests").glob("test_*.py") if p.name != Path(__file__).name)
    pages = [p.relative_to(DOCS).as_posix() for p in sorted(DOCS.rglob("*.md"))
             if p.parent.name in ("labs", "howto") or p.name == "get-started.md"]
    with_commands = [page for page in pages if any(b.lang == "bash" for b in blocks(page))]
    unrun = [page for page in with_commands if f'"{page}"' not in tests and page not in NOT_RUN_YET]
    assert not unrun, f"pages whose commands no test runs: {unrun}"
    assert not [page for page in NOT_RUN_YET if f'"{page}"' in tests], "a page now run: take it off NOT_RUN_YET"
    assert all(page.startswith("howto/") for page in NOT_RUN_YET)  # every lab runs


def test_the_readme_is_a_short_front_page_whose_links_resolve():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 220
    assert "qsg up" in readme and "pytest" in readme
    links = re.findall(r"\]\(([^)#]+\.md)(?:#[^)]*)?\)", readme)
    assert len(links) >= 10, links
    missing = [link for link in links if not link.startswith("http") and not (ROOT / link).exists()]
    assert not missing, missing


def test_qsg_docs_serves_the_site_offline(tmp_path):
    port = free_port_block(1)
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "docs", "--port", str(port), "--site-dir",
                             str(tmp_path / "site")], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # the build comes first; this line once it serves
        assert f"http://127.0.0.1:{port}/" in line, line + proc.stdout.read()
        base = f"http://127.0.0.1:{port}"
        page = httpx.get(f"{base}/labs/peer-recovery.html", timeout=10)
        assert page.status_code == 200 and "Peer recovery" in page.text
        assert "MQRC_NO_MSG_AVAILABLE" in httpx.get(f"{base}/reference/reason-codes.html", timeout=10).text
        # nothing is loaded from the Internet: every script and stylesheet is the site's own
        sources = re.findall(r'(?:src|href)="([^"]+\.(?:js|css))"', page.text)
        assert sources and not [s for s in sources if s.startswith(("http:", "https:", "//"))], sources
        for source in sources:
            assert httpx.get(f"{base}/labs/{source}", timeout=10).status_code == 200, source
        assert "fonts.googleapis" not in page.text
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
