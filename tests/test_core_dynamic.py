"""DynamicQName rules and MQCLOSE options (app/core/dynamic.py), without any server."""

from __future__ import annotations

import pytest

from app.core.dynamic import DynamicNames, parse_close_options
from app.core.errors import MQError
from app.core.reasons import MQRC


def test_trailing_asterisk_is_replaced_by_a_unique_suffix_within_48_characters() -> None:
    names = DynamicNames("QM1")
    made = {names.name("APP.REPLY.*")[0] for _ in range(100)}
    assert len(made) == 100 and all(n.startswith("APP.REPLY.") and len(n) == 26 for n in made)
    long_name, generated = names.name("A" * 40 + "*")
    assert generated and len(long_name) == 48
    assert names.name("")[0].startswith("CSQ.")  # z/OS's default DynamicQName
    assert names.name("APP.FIXED") == ("APP.FIXED", False)


@pytest.mark.parametrize("bad", ["APP.*.X", "**", "A" * 49, "BAD NAME*", 7])
def test_malformed_dynamic_q_name_is_2011(bad: object) -> None:
    with pytest.raises(MQError) as info:
        DynamicNames("QM1").name(bad)
    assert info.value.reason == MQRC.DYNAMIC_Q_NAME_ERROR


def test_close_options() -> None:
    assert parse_close_options(None) == frozenset()
    assert parse_close_options(["NONE"]) == frozenset()
    assert parse_close_options(["delete_purge"]) == {"DELETE_PURGE"}
    for bad in (["DELETE", "DELETE_PURGE"], ["KEEP"], [1]):
        with pytest.raises(MQError) as info:
            parse_close_options(bad)
        assert info.value.reason == MQRC.OPTIONS_ERROR
