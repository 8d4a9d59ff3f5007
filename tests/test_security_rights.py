"""The pure access decision, the default of QSG_AUTH and argon2 hashing (no servers)."""

from __future__ import annotations

import pytest

from app.core.errors import MQError
from app.core.rights import AuthRec, Principal, parse_rights, profile_matches, rights_of
from app.repository.passwords import hash_secret, new_api_key, split_api_key, verify_secret
from app.settings import Settings


def rec(profile, entity, rights, entity_type="PRINCIPAL", objtype="QUEUE"):
    return AuthRec(objtype, profile, entity_type, entity, frozenset(rights))


def test_auth_is_on_unless_said_off(monkeypatch):
    monkeypatch.delenv("QSG_AUTH", raising=False)
    assert Settings().auth == "on"
    monkeypatch.setenv("QSG_AUTH", "OFF")
    assert Settings().auth == "off"
    monkeypatch.setenv("QSG_AUTH", "maybe")
    with pytest.raises(ValueError):
        Settings()


def test_most_specific_profile_per_entity_and_union_over_groups():
    alice = Principal("alice", frozenset({"clerks"}))
    records = [rec("**", "alice", {"BROWSE"}), rec("PAY*", "alice", {"PUT"}), rec("PAYROLL.*", "alice", {"GET"}),
               rec("PAYROLL.SECRET", "alice", {"INQ"}), rec("PAY*.**", "clerks", {"SET"}, "GROUP"),
               rec("PAYROLL.A", "bob", {"PUT", "GET"}), rec("PAYROLL.A", "alice", {"CONNECT"}, objtype="QMGR")]
    assert rights_of(alice, "QUEUE", "PAYROLL.A", records) == {"GET", "SET"}
    assert rights_of(alice, "QUEUE", "PAYROLL.SECRET", records) == {"INQ", "SET"}
    assert rights_of(alice, "QUEUE", "PAYDAY", records) == {"PUT", "SET"}
    assert rights_of(alice, "QUEUE", "OTHER", records) == {"BROWSE"}
    assert rights_of(Principal("carol"), "QUEUE", "PAYROLL.A", records) == frozenset()
    assert {"GET", "BROWSE", "PUT", "INQ", "SET", "DSP"} <= rights_of(Principal("root", admin=True), "QUEUE", "X", [])


def test_ibm_generic_profiles_and_their_priority():
    """IBM's OAM wildcards: ? one character, * within a qualifier, ** any number of qualifiers;
    left to right a plain character beats ?, which beats *, which beats **."""
    assert profile_matches("DEV.**", "DEV.QUEUE.1") and profile_matches("DEV.**", "DEV")
    assert not profile_matches("DEV.**", "DEVX.Q")
    assert profile_matches("AB.*", "AB.CD") and not profile_matches("AB.*", "AB.CD.EF")
    assert profile_matches("ABC*", "ABCDEF") and not profile_matches("ABC*", "ABCDEF.XYZ")
    assert profile_matches("A?C", "ABC") and not profile_matches("A?C", "ABBC")
    assert profile_matches("**", "ANY.THING.AT.ALL") and profile_matches("A.**.Z", "A.B.C.Z")
    fred = Principal("fred")
    records = [rec("AB.*", "fred", {"PUT"}), rec("AB.C*", "fred", {"GET"}), rec("AB.**", "fred", {"INQ"}),
               rec("AB.?D", "fred", {"BROWSE"})]
    assert rights_of(fred, "QUEUE", "AB.CD", records) == {"GET"}  # IBM's own example
    assert rights_of(fred, "QUEUE", "AB.XD", records) == {"BROWSE"}
    assert rights_of(fred, "QUEUE", "AB.X.Y", records) == {"INQ"}


def test_rights_are_checked_per_object_type():
    assert parse_rights("QUEUE", ["ALLMQI"]) == {"GET", "BROWSE", "PUT", "INQ", "SET", "PASSALL", "PASSID",
                                                 "SETALL", "SETID"}
    assert parse_rights("QUEUE", ["ALLADM"]) == {"CHG", "CLR", "DLT", "DSP"}
    assert parse_rights("QUEUE", ["ALL"]) == parse_rights("QUEUE", ["ALLMQI", "ALLADM", "CRT"])
    assert parse_rights("QMGR", ["connect", "CTX", "NONE"]) == {"CONNECT", "CTX"}
    assert parse_rights("QMGR", ["ALLMQI"]) == {"ALTUSR", "CONNECT", "INQ", "SET", "SETALL", "SETID"}
    assert parse_rights("TOPIC", ["PUB", "SUB", "RESUME"]) == {"PUB", "SUB", "RESUME"}
    for objtype, bad in (("QUEUE", "CONNECT"), ("QMGR", "GET"), ("PROCESS", "PUT"), ("QUEUE", "BOGUS")):
        with pytest.raises(MQError):
            parse_rights(objtype, [bad])
    # what IBM authorities imply of the emulator's QMGR rights: ALLADM makes an MQSC administrator,
    # SETALL lets an application choose its PutApplName
    admin = Principal("ops", frozenset({"mqadmin"}))
    grants = [rec("*", "mqadmin", parse_rights("QMGR", ["ALLADM", "CONNECT"]), "GROUP", "QMGR")]
    assert {"ADMIN", "CONNECT"} <= rights_of(admin, "QMGR", "QM1", grants)
    assert "CTX" in rights_of(admin, "QMGR", "QM1", [rec("*", "ops", {"SETALL"}, objtype="QMGR")])
    assert "ADMIN" not in rights_of(admin, "QMGR", "QM1", [rec("*", "ops", {"DSP"}, objtype="QMGR")])


def test_secrets_are_hashed_and_keys_split():
    h = hash_secret("s3cret")
    assert h.startswith("$argon2") and "s3cret" not in h
    assert verify_secret(h, "s3cret") and not verify_secret(h, "other") and not verify_secret(None, "x")
    key_id, secret, key = new_api_key()
    assert split_api_key(key) == (key_id, secret)
    assert split_api_key("nope") is None and split_api_key("qsg_abc") is None
