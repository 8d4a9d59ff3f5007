"""Authentication and authorization (docs/howto/security.md) on real queue managers with QSG_AUTH=on: users
made with the `qsg user` CLI, rights granted with MQSC SET AUTHREC on one QM and in force on the
others, IBM's token login, and PutApplName that cannot be forged without the context right."""

from __future__ import annotations

import httpx
import pytest

from tests.support.security import ADMIN, ALICE, CSRF, admin_shared_q, assert_2035, mqsc, mqsc_ok, qsg_cli


@pytest.fixture(scope="module")
def group(make_cluster):
    g = make_cluster(["QM1", "QM2"], env={"QSG_AUTH": "on"})
    qsg_cli(g, "user", "add", "admin", "--admin", "--password-stdin", stdin=ADMIN[1] + "\n")
    qsg_cli(g, "user", "add", "alice", "--group", "clerks", "--password-stdin", stdin=ALICE[1] + "\n")
    mqsc_ok(g, "QM1", "DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER(YES)")
    return g


def connect(group, qm: str, auth, appl_name: str | None = None) -> httpx.Response:
    return httpx.post(f"{group.url(qm)}/v1/connections", json={"appl_name": appl_name} if appl_name else None,
                      auth=auth)


def hconn_of(group, qm: str, auth, appl_name: str | None = None) -> str:
    r = connect(group, qm, auth, appl_name)
    assert r.status_code == 201, r.text
    return r.json()["hconn"]


def open_q(group, qm: str, hconn: str, queue: str, options: list[str], auth) -> httpx.Response:
    return httpx.post(f"{group.url(qm)}/v1/connections/{hconn}/objects", auth=auth,
                      json={"object_name": queue, "options": options})


def test_authentication_is_required_except_for_health(group):
    url = group.url("QM1")
    assert httpx.get(f"{url}/v1/health").status_code == 200
    r = httpx.get(f"{url}/v1/qmgr")
    assert_2035(r, 401)
    assert r.headers["www-authenticate"].startswith("Basic")
    assert_2035(httpx.get(f"{url}/v1/qmgr", auth=("admin", "wrong")), 401)
    assert_2035(httpx.get(f"{url}/v1/qmgr", auth=("nobody", "x")), 401)
    assert_2035(httpx.post(f"{url}/v1/admin/mqsc", json={"script": "DISPLAY QMGR"}), 401)
    assert httpx.get(f"{url}/v1/qmgr", auth=ADMIN).status_code == 200
    assert httpx.get(f"{url}/openapi.json").status_code == 200


def test_api_keys_work_until_revoked(group):
    key = qsg_cli(group, "user", "key", "admin").stdout.strip()
    assert key.startswith("qsg_")
    for qm in ("QM1", "QM2"):
        assert httpx.get(f"{group.url(qm)}/v1/qmgr", headers={"X-API-Key": key}).status_code == 200
        assert httpx.get(f"{group.url(qm)}/v1/qmgr", headers={"Authorization": f"Bearer {key}"}).status_code == 200
    assert_2035(httpx.get(f"{group.url('QM1')}/v1/qmgr", headers={"X-API-Key": key[:-2] + "xx"}), 401)
    # without the coupling facility's URL the CLI cannot tell the QMs: the key stays cached ...
    out = qsg_cli(group, "user", "revoke", "admin", tell=False)
    assert "were not told" in out.stderr and "REFRESH SECURITY" in out.stderr
    assert httpx.get(f"{group.url('QM1')}/v1/qmgr", headers={"X-API-Key": key}).status_code == 200
    mqsc_ok(group, "QM2", "REFRESH SECURITY")  # ... until every QM forgets the cached key at once
    for qm in ("QM1", "QM2"):
        assert_2035(httpx.get(f"{group.url(qm)}/v1/qmgr", headers={"X-API-Key": key}), 401)
    assert httpx.get(f"{group.url('QM1')}/v1/qmgr", auth=ADMIN).status_code == 200


def test_mqconn_needs_connect_granted_on_any_qm(group):
    qsg_cli(group, "user", "add", "bob", "--password-stdin", stdin="bob-secret\n")
    bob = ("bob", "bob-secret")
    assert_2035(connect(group, "QM1", bob))
    (res,) = mqsc_ok(group, "QM1", "SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('bob') AUTHADD(CONNECT)")
    assert res["objects"][0]["AUTHLIST"] == "CONNECT"
    assert connect(group, "QM2", bob).status_code == 201  # granted through QM1, in force on QM2
    mqsc_ok(group, "QM2", "SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('bob') AUTHRMV(CONNECT)")
    assert_2035(connect(group, "QM1", bob))
    # a profile that names another queue manager does not grant this one
    mqsc_ok(group, "QM1", "SET AUTHREC PROFILE('QM2') OBJTYPE(QMGR) PRINCIPAL('bob') AUTHADD(CONNECT)")
    assert connect(group, "QM2", bob).status_code == 201
    assert_2035(connect(group, "QM1", bob))


def test_mqopen_and_mqput1_by_option_with_generic_profiles_and_groups(group):
    q = admin_shared_q(group, prefix="PAYROLL")
    other = admin_shared_q(group, prefix="OTHER")
    mqsc_ok(group, "QM1", "SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('alice') AUTHADD(CONNECT)\n"
                          "SET AUTHREC PROFILE('PAYROLL.*') OBJTYPE(QUEUE) PRINCIPAL('alice') AUTHADD(PUT)")
    for qm in ("QM1", "QM2"):
        h = hconn_of(group, qm, ALICE)
        assert open_q(group, qm, h, q, ["OUTPUT"], ALICE).status_code == 201
        for option in ("INPUT_SHARED", "INPUT_EXCLUSIVE", "INPUT_AS_Q_DEF", "BROWSE", "INQUIRE", "SET"):
            assert_2035(open_q(group, qm, h, q, [option], ALICE))
        assert_2035(open_q(group, qm, h, other, ["OUTPUT"], ALICE))
        r = httpx.post(f"{group.url(qm)}/v1/connections/{h}/put1", auth=ALICE,
                       json={"object_name": q, "data": "pay", "options": ["NO_SYNCPOINT"]})
        assert r.status_code == 201, r.text
        assert_2035(httpx.post(f"{group.url(qm)}/v1/connections/{h}/put1", auth=ALICE,
                               json={"object_name": other, "data": "x", "options": ["NO_SYNCPOINT"]}))
    # a right of a group alice belongs to (qsg user add --group clerks), granted through QM2
    mqsc_ok(group, "QM2", "SET AUTHREC PROFILE('PAYROLL.*') OBJTYPE(QUEUE) GROUP('clerks') AUTHADD(GET,BROWSE)")
    h = hconn_of(group, "QM1", ALICE)
    r = open_q(group, "QM1", h, q, ["INPUT_SHARED"], ALICE)
    assert r.status_code == 201, r.text
    got = httpx.post(f"{group.url('QM1')}/v1/connections/{h}/objects/{r.json()['hobj']}/get", auth=ALICE,
                     json={"options": ["NO_SYNCPOINT"]})
    assert got.status_code == 200 and got.json()["data"] == "pay"
    # the most specific profile of an entity wins: an exact profile for alice without PUT
    mqsc_ok(group, "QM1", f"SET AUTHREC PROFILE('{q}') OBJTYPE(QUEUE) PRINCIPAL('alice') AUTHADD(INQ)")
    h2 = hconn_of(group, "QM2", ALICE)
    assert_2035(open_q(group, "QM2", h2, q, ["OUTPUT"], ALICE))
    assert open_q(group, "QM2", h2, q, ["INQUIRE", "BROWSE"], ALICE).status_code == 201  # INQ: alice, BROWSE: clerks
    (res,) = mqsc_ok(group, "QM2", f"DISPLAY AUTHREC PROFILE('{q}') PRINCIPAL('alice') MATCH(EXACT)")
    assert [(o["PROFILE"], o["AUTHLIST"]) for o in res["objects"]] == [(q, "INQ")]
    (res,) = mqsc_ok(group, "QM2", f"DISPLAY AUTHREC PROFILE('{q}') PRINCIPAL('alice')")  # MATCH(PROFILE)
    assert sorted((o["PROFILE"], o["AUTHLIST"]) for o in res["objects"]) == [("PAYROLL.*", "PUT"), (q, "INQ")]
    mqsc_ok(group, "QM2", f"DELETE AUTHREC PROFILE('{q}') OBJTYPE(QUEUE) PRINCIPAL('alice')")
    assert open_q(group, "QM1", h, q, ["OUTPUT"], ALICE).status_code == 201


def test_mqsc_needs_admin(group):
    results = mqsc(group, "QM1", "DISPLAY QMGR\nSET AUTHREC OBJTYPE(QMGR) PRINCIPAL('alice') AUTHADD(ADMIN)",
                   auth=ALICE)
    assert [(r["completion_code"], r["reason"]) for r in results] == [(2, 2035), (2, 2035)]
    mqsc_ok(group, "QM2", "SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('alice') AUTHADD(ADMIN)")
    (res,) = mqsc(group, "QM1", "DISPLAY QMGR", auth=ALICE)
    assert res["completion_code"] == 0
    mqsc_ok(group, "QM2", "SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('alice') AUTHRMV(ADMIN)")
    (res,) = mqsc(group, "QM1", "DISPLAY QMGR", auth=ALICE)
    assert res["reason"] == 2035


def test_ibm_login_cookie_authenticates_messaging(group):
    q = admin_shared_q(group, prefix="PAYROLL")
    mqsc_ok(group, "QM1", "SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('alice') AUTHADD(CONNECT)\n"
                          "SET AUTHREC PROFILE('PAYROLL.*') OBJTYPE(QUEUE) PRINCIPAL('alice') AUTHADD(PUT)\n"
                          "SET AUTHREC PROFILE('PAYROLL.*') OBJTYPE(QUEUE) GROUP('clerks') AUTHADD(GET,BROWSE)")
    url = group.url("QM2")
    path = f"/ibmmq/rest/v2/messaging/qmgr/QM2/queue/{q}/message"
    r = httpx.post(f"{url}{path}", content="x", headers={**CSRF, "content-type": "text/plain"})
    assert r.status_code == 401 and r.json()["error"][0]["reasonCode"] == 2035
    bad = httpx.post(f"{url}/ibmmq/rest/v1/login", json={"username": "alice", "password": "no"}, headers=CSRF)
    assert bad.status_code == 401 and "error" in bad.json()
    with httpx.Client(base_url=url) as client:
        r = client.post("/ibmmq/rest/v1/login", json={"username": "alice", "password": ALICE[1]}, headers=CSRF)
        assert r.status_code == 204 and "LtpaToken2" in client.cookies
        assert client.get("/ibmmq/rest/v1/login").json()["user"][0]["name"] == "alice"
        r = client.post(path, content="hello", headers={**CSRF, "content-type": "text/plain"})
        assert r.status_code == 201, r.text
        r = client.delete(path, headers=CSRF)
        assert r.status_code == 200 and r.text == "hello"
        # the token is the group's: it works on QM1 too
        token = client.cookies["LtpaToken2"]
        r = httpx.get(f"{group.url('QM1')}/ibmmq/rest/v1/login", cookies={"LtpaToken2": token})
        assert r.status_code == 200
        # alice has no right on OTHER.* queues: 403 with IBM's body
        other = admin_shared_q(group, prefix="OTHER")
        r = client.post(f"/ibmmq/rest/v2/messaging/qmgr/QM2/queue/{other}/message", content="x",
                        headers={**CSRF, "content-type": "text/plain"})
        assert r.status_code == 403 and r.json()["error"][0]["reasonCode"] == 2035
        assert client.delete("/ibmmq/rest/v1/login", headers=CSRF).status_code == 204
    r = httpx.post(f"{url}{path}", content="x", headers={**CSRF, "content-type": "text/plain"},
                   cookies={"LtpaToken2": token})
    assert r.status_code == 401 and r.json()["error"][0]["messageId"].startswith("MQWB")


def test_put_appl_name_cannot_be_forged_without_the_context_right(group):
    q = admin_shared_q(group, prefix="PAYROLL")
    mqsc_ok(group, "QM1", "SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('alice') AUTHADD(CONNECT)\n"
                          "SET AUTHREC PROFILE('PAYROLL.*') OBJTYPE(QUEUE) PRINCIPAL('alice') AUTHADD(PUT)\n"
                          "SET AUTHREC PROFILE('PAYROLL.*') OBJTYPE(QUEUE) GROUP('clerks') AUTHADD(GET,BROWSE)")

    def put_and_get(appl_name: str) -> dict:
        h = hconn_of(group, "QM1", ALICE, appl_name)
        r = httpx.post(f"{group.url('QM1')}/v1/connections/{h}/put1", auth=ALICE,
                       json={"object_name": q, "data": "m", "options": ["NO_SYNCPOINT"],
                             "md": {"put_appl_name": "FORGED", "user_identifier": "root"}})
        assert r.status_code == 201, r.text
        admin_h = hconn_of(group, "QM2", ADMIN)
        hobj = open_q(group, "QM2", admin_h, q, ["INPUT_SHARED"], ADMIN).json()["hobj"]
        got = httpx.post(f"{group.url('QM2')}/v1/connections/{admin_h}/objects/{hobj}/get", auth=ADMIN,
                         json={"options": ["NO_SYNCPOINT"]})
        assert got.status_code == 200, got.text
        return got.json()["md"]

    md = put_and_get("PAYROLL")
    assert (md["put_appl_name"], md["user_identifier"]) == ("alice", "alice")
    mqsc_ok(group, "QM2", "SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('alice') AUTHADD(CTX)")
    md = put_and_get("PAYROLL")
    assert (md["put_appl_name"], md["user_identifier"]) == ("PAYROLL", "alice")


def test_a_connection_handle_is_usable_by_its_own_user_only(group):
    """Knowing another user's hconn gives nothing: to anyone else it is no valid handle (2018)."""
    mqsc_ok(group, "QM1", "SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('alice') AUTHADD(CONNECT)")
    q = admin_shared_q(group, prefix="OWN")
    hconn = hconn_of(group, "QM1", ADMIN)
    r = open_q(group, "QM1", hconn, q, ["OUTPUT"], ALICE)
    assert r.status_code == 404 and r.json()["error"]["reason"] == 2018, r.text
    r = httpx.delete(f"{group.url('QM1')}/v1/connections/{hconn}", auth=ALICE)
    assert r.status_code == 404 and r.json()["error"]["reason"] == 2018, r.text
    assert open_q(group, "QM1", hconn, q, ["OUTPUT"], ADMIN).status_code == 201  # still the owner's
