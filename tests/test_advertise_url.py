"""Queue managers bound to every address (0.0.0.0, as in a container) give the group the URL set
by QSG_ADVERTISE_URL, and an IBM REST call naming another queue manager is forwarded there
(before the setting each QM advertised http://0.0.0.0:9441 and forwarded to itself)."""

from __future__ import annotations

import httpx
import pytest

from app.settings import Settings
from tests.support.names import uniq


def test_advertised_url_follows_the_setting_else_the_bind_address():
    assert Settings(host="127.0.0.1", port=9441).advertised_url == "http://127.0.0.1:9441"
    assert Settings(host="0.0.0.0", port=9441, advertise_url="http://qm1:9441/").advertised_url == "http://qm1:9441"
    assert "0.0.0.0" not in Settings(host="0.0.0.0", port=9441).advertised_url  # the host's name instead
    with pytest.raises(ValueError):
        Settings(advertise_url="qm1:9441")


def test_ibm_rest_call_naming_another_qmgr_reaches_it_through_the_advertised_url(make_cluster):
    group = make_cluster([], env={"QSG_HOST": "0.0.0.0"})  # bound to every address, as in a container
    for name in ("QM1", "QM2"):
        qm = group.add(name, start=False)
        qm.env["QSG_ADVERTISE_URL"] = f"http://localhost:{qm.port}"
        qm.start()
    members = {m["QMNAME"]: m for m in httpx.get(f"{group.url('QM1')}/v1/qmgr", timeout=10).json()["members"]}
    assert members["QM2"]["URL"] == f"http://localhost:{group.qms['QM2'].port}", members
    q = uniq("PRIV")
    group.mqsc_ok("QM2", f"DEFINE QLOCAL({q})")
    r = httpx.post(f"{group.url('QM1')}/ibmmq/rest/v2/messaging/qmgr/QM2/queue/{q}/message", content="via QM1",
                   headers={"ibm-mq-rest-csrf-token": "", "Content-Type": "text/plain"}, timeout=10)
    assert r.status_code == 201, r.text
    got = httpx.delete(f"{group.url('QM2')}/ibmmq/rest/v2/messaging/qmgr/QM2/queue/{q}/message",
                       headers={"ibm-mq-rest-csrf-token": ""}, timeout=10)
    assert (got.status_code, got.text) == (200, "via QM1")
