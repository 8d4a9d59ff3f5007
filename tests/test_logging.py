"""The one logging set-up of ``qsg serve`` (app/logsetup.py), read from real queue-manager
processes' stderr: JSON lines when QSG_LOG_FORMAT=json, IBM's message ids on group happenings
(initialization, peer recovery), and no access line for a successful readiness probe."""

from __future__ import annotations

import json

import httpx

from tests.support.waits import wait_until


def _records(log_text: str) -> list[dict]:
    return [json.loads(line) for line in log_text.splitlines() if line.strip()]


def test_json_logs_carry_csq_ids_and_leave_probes_out(make_fresh_cluster):
    group = make_fresh_cluster(["QM1", "QM2"], env={"QSG_LOG_FORMAT": "json", "QSG_LOG_LEVEL": "info",
                                                    "QSG_HEARTBEAT_TTL_S": "2"})
    qm1, qm2 = group.qms["QM1"], group.qms["QM2"]
    for _ in range(3):
        assert httpx.get(f"{qm1.url}/v1/ready", timeout=5).status_code == 200
    assert httpx.get(f"{qm1.url}/v1/no-such-path", timeout=5).status_code == 404  # an access line
    qm2.kill()  # QM1 recovers QM2's work once the lease lapses: CSQE011I ... CSQE013I

    def recovered() -> bool:
        text = qm1.log_path.read_text()
        return "CSQE013I" in text and "/v1/no-such-path" in text
    wait_until(recovered, 30, "QM1 logging the peer recovery of QM2")

    records = _records(qm1.log_path.read_text())  # every line is one JSON object
    assert all({"time", "level", "logger", "message"} <= r.keys() for r in records)
    messages = [r["message"] for r in records]
    assert any(m.startswith("CSQY022I") and "QM1" in m for m in messages), messages
    start = next(i for i, m in enumerate(messages) if m.startswith("CSQE011I") and "QM2" in m)
    done = next(i for i, m in enumerate(messages) if m.startswith("CSQE013I") and "QM2" in m)
    assert start < done
    access = [r["message"] for r in records if r["logger"] == "uvicorn.access"]
    assert any("/v1/no-such-path" in m and "404" in m for m in access), access
    assert not any("/v1/ready" in m for m in access), access
