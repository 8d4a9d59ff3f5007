"""``/docs`` works without Internet access: the Swagger UI page names only files the queue manager
serves itself, and those are open without credentials like the page (real server, auth on)."""

from __future__ import annotations

import re

import httpx


def test_docs_page_and_its_assets_come_from_the_queue_manager(make_cluster):
    group = make_cluster(["QM1"], env={"QSG_AUTH": "on"})
    url = group.url("QM1")
    page = httpx.get(f"{url}/docs", timeout=10)
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    sources = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert sources and all(s.startswith("/docs/assets/") for s in sources), sources
    assert "jsdelivr" not in page.text and "unpkg" not in page.text
    for source in sources:
        asset = httpx.get(f"{url}{source}", timeout=10)
        assert asset.status_code == 200 and len(asset.content) > 100, source
    schema = httpx.get(f"{url}/openapi.json", timeout=10)
    assert schema.status_code == 200 and "/v1/connections" in schema.text
    # the rest of the API still needs credentials
    assert httpx.get(f"{url}/v1/qmgr", timeout=10).status_code == 401
