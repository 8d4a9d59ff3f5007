"""Changes of users, passwords and API keys with the `qsg user` CLI are in force on every queue
manager of the group when the command returns (the REFRESH SECURITY broadcast), not after
QSG_AUTH_CACHE_S: checked on a queue manager other than the one the credential was used on,
right after the command. And in-process: a repository read that an invalidation overtook is
not cached."""

from __future__ import annotations

import asyncio
import base64
import threading

import httpx
import pytest

from app.security import service as service_module
from app.security.service import AuthenticationFailed
from tests.support.redis_server import free_port
from tests.support.security import ADMIN, CSRF, assert_2035, mqsc_ok, qsg_cli


@pytest.fixture(scope="module")
def group(make_cluster):
    # a long cache: anything that works at once below is the broadcast, not an expiry
    g = make_cluster(["QM1", "QM2"], env={"QSG_AUTH": "on", "QSG_AUTH_CACHE_S": "600"})
    qsg_cli(g, "user", "add", "admin", "--admin", "--password-stdin", stdin=ADMIN[1] + "\n")
    return g


def qmgr_info(group, qm: str, **kwargs) -> httpx.Response:
    return httpx.get(f"{group.url(qm)}/v1/qmgr", **kwargs)


def test_a_revoked_key_fails_at_once_on_every_qmgr(group):
    qsg_cli(group, "user", "add", "carol", "--password-stdin", stdin="carol-secret\n")
    key = qsg_cli(group, "user", "key", "carol").stdout.strip()
    other = qsg_cli(group, "user", "key", "carol").stdout.strip()
    for qm in ("QM1", "QM2"):  # verified and cached on both
        assert qmgr_info(group, qm, headers={"X-API-Key": key}).status_code == 200
        assert qmgr_info(group, qm, headers={"X-API-Key": other}).status_code == 200
    key_id = key.split("_")[1]
    out = qsg_cli(group, "user", "revoke", "carol", "--key-id", key_id)
    assert "in force on the 2 running queue manager(s)" in out.stdout
    for qm in ("QM2", "QM1"):
        assert_2035(qmgr_info(group, qm, headers={"X-API-Key": key}), 401)
        assert qmgr_info(group, qm, headers={"X-API-Key": other}).status_code == 200  # only that key


def test_a_changed_password_and_a_deleted_user_fail_at_once(group):
    qsg_cli(group, "user", "add", "dave", "--password-stdin", stdin="old-secret\n")
    mqsc_ok(group, "QM1", "SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('dave') AUTHADD(CONNECT)")
    assert qmgr_info(group, "QM2", auth=("dave", "old-secret")).status_code == 200
    with httpx.Client(base_url=group.url("QM2")) as ibm:  # an IBM REST login of dave
        assert ibm.post("/ibmmq/rest/v1/login", json={"username": "dave", "password": "old-secret"},
                        headers=CSRF).status_code == 204
        assert ibm.get("/ibmmq/rest/v1/login").status_code == 200
        qsg_cli(group, "user", "add", "dave", "--replace", "--password-stdin", stdin="new-secret\n")
        assert_2035(qmgr_info(group, "QM2", auth=("dave", "old-secret")), 401)
        assert qmgr_info(group, "QM2", auth=("dave", "new-secret")).status_code == 200
        r = httpx.post(f"{group.url('QM1')}/v1/connections", auth=("dave", "new-secret"))
        assert r.status_code == 201, r.text
        hconn = r.json()["hconn"]
        qsg_cli(group, "user", "delete", "dave")
        assert_2035(qmgr_info(group, "QM2", auth=("dave", "new-secret")), 401)
        # a connection made before cannot be used any more, nor a login token
        r = httpx.post(f"{group.url('QM1')}/v1/connections/{hconn}/commit", auth=("dave", "new-secret"))
        assert_2035(r, 401)
        r = ibm.get("/ibmmq/rest/v1/login")
        assert r.status_code == 401 and r.json()["error"][0]["reasonCode"] == 2035


def test_a_new_user_is_known_at_once_after_a_failed_attempt(group):
    assert_2035(qmgr_info(group, "QM1", auth=("erin", "erin-secret")), 401)  # QM1 notes: no such user
    qsg_cli(group, "user", "add", "erin", "--password-stdin", stdin="erin-secret\n")
    assert qmgr_info(group, "QM1", auth=("erin", "erin-secret")).status_code == 200


def test_revocation_that_cannot_reach_the_group_says_so(group):
    qsg_cli(group, "user", "add", "fred", "--password-stdin", stdin="fred-secret\n")
    qsg_cli(group, "user", "key", "fred")
    env_url = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    out = qsg_cli(group, "user", "revoke", "fred", "--redis-url", env_url, status=3)
    assert "1 key(s) of fred revoked" in out.stdout
    assert "could not be told" in out.stderr and "REFRESH SECURITY" in out.stderr


async def test_a_read_overtaken_by_an_invalidation_is_not_cached(qm):  # noqa: F811
    """A password read from the repository just before a change, and returned after every QM
    applied the invalidation, serves its own call but is not kept."""
    security = qm.security
    await qm.db(security.store.add_user, "gina", "old-pw")
    read_done, go_on = threading.Event(), threading.Event()
    read = security.store.user

    def slow_read(name: str):
        record = read(name)  # the old password hash
        read_done.set()
        go_on.wait(timeout=30)
        return record

    security.store.user = slow_read
    try:
        call = asyncio.create_task(security.check_password("gina", "old-pw"))
        await asyncio.to_thread(read_done.wait, 30)
        await qm.db(lambda: security.store.add_user("gina", "new-pw", replace=True))
        await security.reload()  # what the broadcast does on every QM
        go_on.set()
        assert (await call).name == "gina"  # the call in flight when the change happened
    finally:
        security.store.user = read
    assert (await security.check_password("gina", "new-pw")).name == "gina"
    with pytest.raises(AuthenticationFailed):
        await security.check_password("gina", "old-pw")


async def test_remembered_basic_credentials_hold_until_a_change_or_the_cache_time(qm, monkeypatch):  # noqa: F811
    """The hot path's remembered HTTP basic credentials (``Security.remembered``): used again
    while nothing changed, forgotten by every security change, not kept when a change overtook
    their check, and never longer than the user record they were checked against."""
    security = qm.security
    await qm.db(security.store.add_user, "hank", "hank-pw")
    header = b"Basic " + base64.b64encode(b"hank:hank-pw")
    wrong = b"Basic " + base64.b64encode(b"hank:other-pw")

    async def check_and_remember(authorization: bytes):
        generation = security.generation
        principal = await security.authenticate({"authorization": authorization.decode()}, {})
        security.remember(authorization, principal, generation)
        return principal

    principal = await check_and_remember(header)
    assert security.remembered(header) == principal and principal.name == "hank"
    assert security.remembered(wrong) is None
    await security.reload()  # any security change (a broadcast REFRESH SECURITY, a qsg user change)
    assert security.remembered(header) is None
    # a check that a change overtook serves its own call only
    generation = security.generation
    principal = await security.authenticate({"authorization": header.decode()}, {})
    await security.reload()
    security.remember(header, principal, generation)
    assert security.remembered(header) is None
    # kept no longer than the user record read for it (QSG_AUTH_CACHE_S)
    await check_and_remember(header)
    expires = security._users["hank"].expires
    monkeypatch.setattr(service_module.time, "monotonic", lambda: expires + 1)
    assert security.remembered(header) is None
