"""The pure access decision, the default of QSG_AUTH and argon2 hashing (no servers)."""

from __future__ import annotations

import pytest

from app.core.errors import MQError
from app.security.passwords import hash_secret, new_api_key, split_api_key, verify_secret
from app.security.rights import AuthRec, Principal, parse_rights, rights_of
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
    records = [rec("*", "alice", {"BROWSE"}), rec("PAY*", "alice", {"PUT"}), rec("PAYROLL.*", "alice", {"GET"}),
               rec("PAYROLL.SECRET", "alice", {"INQ"}), rec("PAY*", "clerks", {"SET"}, "GROUP"),
               rec("PAYROLL.A", "bob", {"PUT", "GET"}), rec("PAYROLL.A", "alice", {"CONNECT"}, objtype="QMGR")]
    assert rights_of(alice, "QUEUE", "PAYROLL.A", records) == {"GET", "SET"}
    assert rights_of(alice, "QUEUE", "PAYROLL.SECRET", records) == {"INQ", "SET"}
    assert rights_of(alice, "QUEUE", "PAYDAY", records) == {"PUT", "SET"}
    assert rights_of(alice, "QUEUE", "OTHER", records) == {"BROWSE"}
    assert rights_of(Principal("carol"), "QUEUE", "PAYROLL.A", records) == frozenset()
    assert rights_of(Principal("root", admin=True), "QUEUE", "X", []) == {"GET", "BROWSE", "PUT", "INQ", "SET"}


def test_rights_are_checked_per_object_type():
    assert parse_rights("QUEUE", ["ALL"]) == {"GET", "BROWSE", "PUT", "INQ", "SET"}
    assert parse_rights("QMGR", ["connect", "CTX"]) == {"CONNECT", "CTX"}
    with pytest.raises(MQError):
        parse_rights("QUEUE", ["CONNECT"])


def test_secrets_are_hashed_and_keys_split():
    h = hash_secret("s3cret")
    assert h.startswith("$argon2") and "s3cret" not in h
    assert verify_secret(h, "s3cret") and not verify_secret(h, "other") and not verify_secret(None, "x")
    key_id, secret, key = new_api_key()
    assert split_api_key(key) == (key_id, secret)
    assert split_api_key("nope") is None and split_api_key("qsg_abc") is None
