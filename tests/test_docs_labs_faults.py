"""The labs and guides that kill a queue manager, cut the coupling facility or need a group started
another way (docs/labs/, docs/howto/), each on a ``qsg up`` of its own as the page tells its reader
(restart qsg up afterwards, or start it as the page says); tests/support/doclabs.py says how a
page is read."""

from __future__ import annotations

import pytest

from tests.support.doclabs import QsgUp, qsg_up_command, run_page


@pytest.fixture
def fresh_group(tmp_path):
    groups: list[QsgUp] = []

    def start(page: str) -> QsgUp:
        groups.append(QsgUp.for_page(tmp_path / "reader", page).start())
        return groups[-1]

    yield start
    for group in groups:
        group.stop()


def test_lab_peer_recovery(fresh_group):
    group = fresh_group("labs/peer-recovery.md")
    run_page("labs/peer-recovery.md", group)
    assert "a queue manager process exited with status -9" in group.output  # qsg up saw QM2 die


def test_lab_cf_connectivity(fresh_group):
    out = run_page("labs/cf-connectivity.md", fresh_group("labs/cf-connectivity.md"))
    # the shared queue's open failed, with one of the two answers the lab names
    assert '"reason_name":"MQRC_CF_NOT_AVAILABLE"' in out or '"reason_name":"MQRC_CONNECTION_BROKEN"' in out, out


def test_lab_analytics(fresh_group):
    page = "labs/analytics.md"
    assert qsg_up_command(page) == ({"QSG_ACTIVITY_ROTATE_S": "5"}, [])
    run_page(page, fresh_group(page), timeout_s=900)


def test_guide_tls(fresh_group):
    group = fresh_group("howto/tls.md")
    assert group.extra_args == ["--tls"]
    run_page("howto/tls.md", group)
