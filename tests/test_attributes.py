"""Tests of the MQSC attribute catalogue (app.core.attributes)."""

from __future__ import annotations

import copy

import pytest

from app.core.attributes import (
    MQSET_ATTRS,
    OBJECT_TYPES,
    QUEUE_TYPES,
    AttrSpec,
    apply_keywords,
    defaults,
    display_value,
    specs,
    validate_cross,
)
from app.core.errors import MQError
from app.core.reasons import MQRC

SYNTAX = MQRC.MQRCCF_PARM_SYNTAX_ERROR
VALUE = MQRC.MQRCCF_ATTR_VALUE_ERROR


def apply(objtype: str, *keywords: tuple[str, str | None]) -> dict[str, object]:
    """apply_keywords on the type's defaults."""
    return apply_keywords(objtype, defaults(objtype), keywords)


def reason_of(objtype: str, *keywords: tuple[str, str | None]) -> MQError:
    with pytest.raises(MQError) as info:
        apply(objtype, *keywords)
    return info.value


# ---------------------------------------------------------------------------------------------
# Catalogue shape
# ---------------------------------------------------------------------------------------------

def test_object_types_and_queue_types() -> None:
    assert OBJECT_TYPES == ("QLOCAL", "QALIAS", "QREMOTE", "QMODEL", "PROCESS", "CFSTRUCT", "QMGR", "TOPIC",
                            "NAMELIST", "CHANNEL")
    assert QUEUE_TYPES == ("QLOCAL", "QALIAS", "QREMOTE", "QMODEL")


@pytest.mark.parametrize("objtype", OBJECT_TYPES)
def test_specs_are_consistent(objtype: str) -> None:
    table = specs(objtype)
    assert table, objtype
    assert list(table) == sorted(table)  # DISPLAY order
    for name, spec in table.items():
        assert isinstance(spec, AttrSpec)
        assert spec.name == name
        assert spec.kind in ("int", "str", "enum", "flag", "list")
        if spec.kind == "flag":
            assert isinstance(spec.default, bool) and spec.negative
        elif spec.kind == "int":
            assert isinstance(spec.default, int) and not isinstance(spec.default, bool)
            assert spec.min is not None and spec.max is not None and spec.min <= spec.max
            in_range = spec.min <= spec.default <= spec.max
            assert in_range or spec.default in spec.special.values() or spec.default == 0, name
        elif spec.kind == "enum":
            assert spec.choices and all(c == c.upper() for c in spec.choices)
            assert spec.default in spec.choices, name
        elif spec.kind == "list":
            assert spec.default == () and spec.max and spec.max_len
        else:
            assert isinstance(spec.default, str) and spec.max_len
            assert len(spec.default) <= spec.max_len


@pytest.mark.parametrize("objtype", OBJECT_TYPES)
def test_no_qsgdisp_or_command_keywords_in_catalogue(objtype: str) -> None:
    for word in ("QSGDISP", "REPLACE", "NOREPLACE", "LIKE", "FORCE", "PURGE", "NOPURGE",
                 "CMDSCOPE", "ALL", "TYPE", "WHERE"):
        assert word not in specs(objtype)
        assert reason_of(objtype, (word, None)).reason == SYNTAX


def test_unknown_object_type_is_a_programming_error() -> None:
    with pytest.raises(ValueError):
        specs("STGCLASS")
    with pytest.raises(ValueError):
        apply_keywords("LISTENER", {}, [])


def test_qmodel_takes_the_local_queue_attributes_and_deftype() -> None:
    d = defaults("QMODEL")
    assert d["DEFTYPE"] == "TEMPDYN"  # IBM's default
    assert set(defaults("QLOCAL")) == set(d)  # the same attributes as a local queue
    assert apply_keywords("QMODEL", d, [("DEFTYPE", "sharedyn")])["DEFTYPE"] == "SHAREDYN"
    with pytest.raises(MQError) as info:
        apply_keywords("QLOCAL", defaults("QLOCAL"), [("DEFTYPE", "PERMDYN")])
    assert info.value.reason == SYNTAX  # read-only on a local queue: MQOPEN of a model sets it


def test_qremote_has_no_get_attribute_and_takes_rname_rqmname_xmitq() -> None:
    d = defaults("QREMOTE")
    assert d["RNAME"] == d["RQMNAME"] == d["XMITQ"] == "" and "GET" not in d and d["PUT"] == "ENABLED"
    with pytest.raises(MQError) as info:
        apply_keywords("QREMOTE", d, [("GET", "DISABLED")])
    assert info.value.reason == 3097


def test_specs_returns_a_copy() -> None:
    table = specs("QLOCAL")
    del table["MAXDEPTH"]
    assert "MAXDEPTH" in specs("QLOCAL")


def test_defaults_returns_a_fresh_dict() -> None:
    first = defaults("QLOCAL")
    first["MAXDEPTH"] = 5
    assert defaults("QLOCAL")["MAXDEPTH"] == 999999999


def test_mqset_attrs() -> None:
    assert MQSET_ATTRS == frozenset({"GET", "PUT", "TRIGGER", "TRIGTYPE", "TRIGDPTH", "TRIGMPRI", "TRIGDATA"})
    assert {n for n, s in specs("QLOCAL").items() if s.mqset} == MQSET_ATTRS
    assert {n for n, s in specs("QALIAS").items() if s.mqset} == {"GET", "PUT"}
    assert not any(s.mqset for s in specs("QMGR").values())


# ---------------------------------------------------------------------------------------------
# Defaults (IBM MQ for z/OS)
# ---------------------------------------------------------------------------------------------

def test_qlocal_zos_defaults() -> None:
    d = defaults("QLOCAL")
    assert d["DESCR"] == ""
    assert d["PUT"] == "ENABLED" and d["GET"] == "ENABLED"
    assert d["DEFPRTY"] == 0
    assert d["DEFPSIST"] == "NO"
    assert d["DEFPRESP"] == "SYNC"
    assert d["DEFREADA"] == "NO"
    assert d["DEFSOPT"] == "EXCL"  # z/OS default; SHARED on Multiplatforms
    assert d["MAXDEPTH"] == 999999999
    assert d["MAXMSGL"] == 4194304
    assert d["MSGDLVSQ"] == "PRIORITY"
    assert d["INDXTYPE"] == "NONE"
    assert d["USAGE"] == "NORMAL"
    assert d["SHARE"] is True
    assert d["TRIGGER"] is False
    assert d["TRIGTYPE"] == "FIRST"
    assert d["TRIGDPTH"] == 1
    assert d["TRIGMPRI"] == 0
    assert d["HARDENBO"] is False
    assert d["BOTHRESH"] == 0
    assert d["QDEPTHHI"] == 80 and d["QDEPTHLO"] == 20
    assert d["QDPHIEV"] == "DISABLED" and d["QDPLOEV"] == "DISABLED" and d["QDPMAXEV"] == "ENABLED"
    assert d["QSVCIEV"] == "NONE" and d["QSVCINT"] == 999999999
    assert d["RETINTVL"] == 999999999
    assert d["STGCLASS"] == "DEFAULT"
    assert d["CFSTRUCT"] == ""
    assert d["DEFBIND"] == "OPEN"
    assert d["CLWLUSEQ"] == "QMGR"
    assert d["ACCTQ"] == "QMGR" and d["MONQ"] == "QMGR"
    assert d["PROPCTL"] == "COMPAT"
    assert d["CAPEXPRY"] == -1


def test_qlocal_has_no_multiplatform_only_keywords() -> None:
    for word in ("STATQ", "NPMCLASS", "DISTL", "SCOPE", "IMGRCOVQ", "MAXFSIZE", "TARGET"):
        assert word not in specs("QLOCAL")
        assert reason_of("QLOCAL", (word, "X")).reason == SYNTAX


def test_qalias_defaults_and_keywords() -> None:
    d = defaults("QALIAS")
    assert d["TARGET"] == "" and d["TARGTYPE"] == "QUEUE"
    assert d["PUT"] == "ENABLED" and d["GET"] == "ENABLED"
    assert d["DEFPSIST"] == "NO" and d["DEFBIND"] == "OPEN"
    for local_only in ("MAXDEPTH", "TRIGGER", "USAGE", "INITQ", "CFSTRUCT", "STGCLASS", "TARGQ"):
        assert local_only not in d
    assert reason_of("QALIAS", ("MAXDEPTH", "5")).reason == SYNTAX
    assert reason_of("QALIAS", ("NOTRIGGER", None)).reason == SYNTAX


def test_process_defaults() -> None:
    d = defaults("PROCESS")
    assert d == {"APPLICID": "", "APPLTYPE": "CICS", "DESCR": "", "ENVRDATA": "", "USERDATA": ""}


def test_cfstruct_defaults() -> None:
    d = defaults("CFSTRUCT")
    assert d["CFLEVEL"] == 3
    assert d["RECOVER"] == "NO" and d["RECAUTO"] == "YES"
    assert d["CFCONLOS"] == "ASQMGR"
    assert d["OFFLOAD"] == "SMDS"
    assert (d["OFFLD1TH"], d["OFFLD1SZ"]) == (70, "32K")
    assert (d["OFFLD2TH"], d["OFFLD2SZ"]) == (80, "4K")
    assert (d["OFFLD3TH"], d["OFFLD3SZ"]) == (90, "0K")
    assert d["DSBLOCK"] == "256K" and d["DSBUFS"] == 100 and d["DSEXPAND"] == "YES"
    assert "QSGDISP" not in d


def test_qmgr_defaults() -> None:
    d = defaults("QMGR")
    assert d["PERFMEV"] == "DISABLED"
    assert d["TRIGINT"] == 999999999
    assert d["EXPRYINT"] == 0
    assert d["IGQ"] == "DISABLED" and d["IGQAUT"] == "DEF" and d["IGQUSER"] == ""
    assert d["DEADQ"] == "" and d["DEFXMITQ"] == ""
    assert d["MAXMSGL"] == 104857600
    assert d["MAXHANDS"] == 256 and d["MAXUMSGS"] == 10000
    assert d["STRSTPEV"] == "ENABLED"
    for event in ("INHIBTEV", "LOCALEV", "REMOTEEV", "CMDEV", "CONFIGEV", "CHLEV", "BRIDGEEV",
                  "SSLEV", "AUTHOREV"):
        assert d[event] == "DISABLED", event
    assert d["SCYCASE"] == "UPPER"
    assert d["CFCONLOS"] == "TERMINATE"
    assert d["ROUTEREC"] == "MSG" and d["ACTIVREC"] == "MSG"
    assert d["ACTVTRC"] == "OFF"
    assert d["CCSID"] == 500
    assert d["PLATFORM"] == "MVS"


# ---------------------------------------------------------------------------------------------
# apply_keywords
# ---------------------------------------------------------------------------------------------

def test_apply_does_not_mutate_input() -> None:
    attrs = defaults("QLOCAL")
    before = copy.deepcopy(attrs)
    keywords = [("MAXDEPTH", "10"), ("TRIGGER", None), ("DESCR", "hello")]
    result = apply_keywords("QLOCAL", attrs, keywords)
    assert attrs == before
    assert result is not attrs
    assert result["MAXDEPTH"] == 10 and result["TRIGGER"] is True and result["DESCR"] == "hello"


def test_apply_keeps_unrelated_attributes() -> None:
    result = apply_keywords("QLOCAL", {"MAXDEPTH": 7, "EXTRA": "x"}, [("PUT", "DISABLED")])
    assert result == {"MAXDEPTH": 7, "EXTRA": "x", "PUT": "DISABLED"}


def test_apply_accepts_a_generator_and_no_keywords() -> None:
    assert apply_keywords("QLOCAL", {"A": 1}, iter([])) == {"A": 1}
    result = apply_keywords("QLOCAL", {}, (kw for kw in [("DEFPRTY", "3")]))
    assert result == {"DEFPRTY": 3}


def test_flags_and_negatives() -> None:
    assert apply("QLOCAL", ("TRIGGER", None))["TRIGGER"] is True
    on = apply_keywords("QLOCAL", {"TRIGGER": True}, [("NOTRIGGER", None)])
    assert on["TRIGGER"] is False
    assert apply("QLOCAL", ("NOSHARE", None))["SHARE"] is False
    assert apply_keywords("QLOCAL", {"SHARE": False}, [("SHARE", None)])["SHARE"] is True
    assert apply("QLOCAL", ("HARDENBO", None))["HARDENBO"] is True
    assert apply_keywords("QLOCAL", {"HARDENBO": True}, [("NOHARDENBO", None)])["HARDENBO"] is False
    assert "NOTRIGGER" not in apply("QLOCAL", ("NOTRIGGER", None))


@pytest.mark.parametrize("keyword", ["TRIGGER", "NOTRIGGER", "SHARE", "NOHARDENBO"])
def test_flag_with_value_is_rejected(keyword: str) -> None:
    error = reason_of("QLOCAL", (keyword, "YES"))
    assert error.reason == VALUE
    assert keyword in error.message


@pytest.mark.parametrize("keyword", ["MAXDEPTH", "DESCR", "USAGE", "TARGET"])
def test_value_keyword_without_value_is_rejected(keyword: str) -> None:
    objtype = "QALIAS" if keyword == "TARGET" else "QLOCAL"
    error = reason_of(objtype, (keyword, None))
    assert error.reason == VALUE
    assert keyword in error.message


def test_synonym_targq_maps_to_target() -> None:
    result = apply("QALIAS", ("TARGQ", "APP.Q"))
    assert result["TARGET"] == "APP.Q"
    assert "TARGQ" not in result
    assert specs("QALIAS")["TARGET"].synonyms == ("TARGQ",)


def test_same_attribute_twice_is_rejected() -> None:
    assert reason_of("QLOCAL", ("TRIGGER", None), ("NOTRIGGER", None)).reason == SYNTAX
    assert reason_of("QALIAS", ("TARGET", "A"), ("TARGQ", "B")).reason == SYNTAX
    assert reason_of("QLOCAL", ("MAXDEPTH", "1"), ("MAXDEPTH", "2")).reason == SYNTAX


def test_keywords_are_case_insensitive() -> None:
    assert apply("QLOCAL", ("maxdepth", "12"))["MAXDEPTH"] == 12
    assert apply("QLOCAL", ("notrigger", None))["TRIGGER"] is False


def test_unknown_keyword() -> None:
    error = reason_of("QLOCAL", ("MAXDEPHT", "5"))
    assert error.reason == SYNTAX
    assert "MAXDEPHT" in error.message and "MAXDEPTH" in error.message  # says what is allowed
    assert reason_of("PROCESS", ("TRIGGER", None)).reason == SYNTAX
    assert reason_of("CFSTRUCT", ("QSGDISP", "GROUP")).reason == SYNTAX
    assert reason_of("QMGR", ("STATQ", "ON")).reason == SYNTAX


def test_read_only_attributes_are_refused() -> None:
    for word, value in (("PLATFORM", "MVS"), ("MAXMSGL", "4194304"), ("CCSID", "1047"),
                        ("COMMANDQ", "X")):
        assert not specs("QMGR")[word].settable
        error = reason_of("QMGR", (word, value))
        assert error.reason == SYNTAX
        assert word in error.message


def test_error_stops_and_input_is_untouched() -> None:
    attrs = defaults("QLOCAL")
    with pytest.raises(MQError):
        apply_keywords("QLOCAL", attrs, [("MAXDEPTH", "5"), ("DEFPRTY", "10")])
    assert attrs["MAXDEPTH"] == 999999999


# ---------------------------------------------------------------------------------------------
# Integers
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("objtype", "keyword", "low", "high"),
    [
        ("QLOCAL", "DEFPRTY", 0, 9),
        ("QLOCAL", "MAXDEPTH", 0, 999999999),
        ("QLOCAL", "MAXMSGL", 0, 104857600),
        ("QLOCAL", "TRIGDPTH", 1, 999999999),
        ("QLOCAL", "TRIGMPRI", 0, 9),
        ("QLOCAL", "BOTHRESH", 0, 999999999),
        ("QLOCAL", "QDEPTHHI", 0, 100),
        ("QLOCAL", "QDEPTHLO", 0, 100),
        ("QLOCAL", "QSVCINT", 0, 999999999),
        ("QLOCAL", "RETINTVL", 0, 999999999),
        ("QLOCAL", "CLWLPRTY", 0, 9),
        ("QALIAS", "CLWLRANK", 0, 9),
        ("QLOCAL", "CAPEXPRY", 1, 999999999),
        ("CFSTRUCT", "CFLEVEL", 1, 5),
        ("CFSTRUCT", "OFFLD1TH", 0, 100),
        ("CFSTRUCT", "DSBUFS", 1, 9999),
        ("QMGR", "TRIGINT", 0, 999999999),
        ("QMGR", "EXPRYINT", 1, 99999999),
        ("QMGR", "MAXHANDS", 0, 999999999),
        ("QMGR", "MAXUMSGS", 1, 999999999),
        ("QMGR", "TRAXTBL", 2, 2048),
    ],
)
def test_int_ranges(objtype: str, keyword: str, low: int, high: int) -> None:
    assert apply(objtype, (keyword, str(low)))[keyword] == low
    assert apply(objtype, (keyword, str(high)))[keyword] == high
    for bad in (low - 1, high + 1):
        error = reason_of(objtype, (keyword, str(bad)))
        assert error.reason == VALUE, bad
        assert keyword in error.message and f"{low}-{high}" in error.message


def test_int_parsing() -> None:
    assert apply("QLOCAL", ("MAXDEPTH", "+42"))["MAXDEPTH"] == 42
    assert apply("QLOCAL", ("MAXDEPTH", "007"))["MAXDEPTH"] == 7
    assert apply("QLOCAL", ("MAXDEPTH", "-0"))["MAXDEPTH"] == 0
    for junk in ("", "abc", "1.5", "1e3", "12X", "--1", "0x10", "1 2"):
        assert reason_of("QLOCAL", ("MAXDEPTH", junk)).reason == VALUE, junk
    assert reason_of("QLOCAL", ("DEFPRTY", "-1")).reason == VALUE


def test_expryint_off() -> None:
    result = apply_keywords("QMGR", {"EXPRYINT": 60}, [("EXPRYINT", "OFF")])
    assert result["EXPRYINT"] == 0
    assert apply("QMGR", ("EXPRYINT", "off"))["EXPRYINT"] == 0
    assert apply("QMGR", ("EXPRYINT", "300"))["EXPRYINT"] == 300
    assert "OFF" in reason_of("QMGR", ("EXPRYINT", "ON")).message


def test_capexpry_nolimit() -> None:
    result = apply_keywords("QLOCAL", {"CAPEXPRY": 50}, [("CAPEXPRY", "NOLIMIT")])
    assert result["CAPEXPRY"] == -1
    assert reason_of("QLOCAL", ("CAPEXPRY", "0")).reason == VALUE


def test_plain_ints_take_no_words() -> None:
    for keyword in ("TRIGINT", "MAXHANDS"):
        assert reason_of("QMGR", (keyword, "OFF")).reason == VALUE
    assert reason_of("QLOCAL", ("MAXDEPTH", "OFF")).reason == VALUE
    assert reason_of("QLOCAL", ("QSVCINT", "NOLIMIT")).reason == VALUE


def test_zero_or_range_ints() -> None:
    assert apply("QMGR", ("TREELIFE", "0"))["TREELIFE"] == 0
    assert apply("QMGR", ("TREELIFE", "60"))["TREELIFE"] == 60
    assert reason_of("QMGR", ("TREELIFE", "59")).reason == VALUE
    assert apply("QMGR", ("SSLRKEYC", "0"))["SSLRKEYC"] == 0
    assert reason_of("QMGR", ("SSLRKEYC", "32767")).reason == VALUE
    assert apply("QMGR", ("SSLRKEYC", "32768"))["SSLRKEYC"] == 32768


# ---------------------------------------------------------------------------------------------
# Strings
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("objtype", "keyword", "max_len"),
    [
        ("QLOCAL", "DESCR", 64),
        ("QLOCAL", "TRIGDATA", 64),
        ("QLOCAL", "INITQ", 48),
        ("QLOCAL", "PROCESS", 48),
        ("QLOCAL", "BOQNAME", 48),
        ("QLOCAL", "CFSTRUCT", 12),
        ("QLOCAL", "STGCLASS", 8),
        ("QALIAS", "TARGET", 48),
        ("PROCESS", "APPLICID", 256),
        ("PROCESS", "ENVRDATA", 128),
        ("PROCESS", "USERDATA", 128),
        ("QMGR", "DEADQ", 48),
        ("QMGR", "IGQUSER", 12),
    ],
)
def test_string_lengths(objtype: str, keyword: str, max_len: int) -> None:
    assert apply(objtype, (keyword, "A" * max_len))[keyword] == "A" * max_len
    error = reason_of(objtype, (keyword, "A" * (max_len + 1)))
    assert error.reason == VALUE
    assert keyword in error.message and str(max_len) in error.message


def test_strings_keep_case_and_drop_trailing_blanks() -> None:
    assert apply("QLOCAL", ("DESCR", "Mixed Case  "))["DESCR"] == "Mixed Case"
    assert apply("QLOCAL", ("DESCR", "  lead"))["DESCR"] == "  lead"
    assert apply("QLOCAL", ("DESCR", " "))["DESCR"] == ""
    assert apply_keywords("QLOCAL", {"INITQ": "X"}, [("INITQ", "")])["INITQ"] == ""


# ---------------------------------------------------------------------------------------------
# Enumerations
# ---------------------------------------------------------------------------------------------

def test_enum_case_insensitive_and_stored_upper() -> None:
    assert apply("QLOCAL", ("USAGE", "xmitq"))["USAGE"] == "XMITQ"
    assert apply("QLOCAL", ("MSGDLVSQ", "Fifo"))["MSGDLVSQ"] == "FIFO"
    assert apply("QLOCAL", ("DEFSOPT", "shared"))["DEFSOPT"] == "SHARED"
    assert apply("QALIAS", ("TARGTYPE", "topic"))["TARGTYPE"] == "TOPIC"
    assert apply("CFSTRUCT", ("OFFLOAD", "db2"))["OFFLOAD"] == "DB2"


def test_enum_bad_word() -> None:
    error = reason_of("QLOCAL", ("INDXTYPE", "BOGUS"))
    assert error.reason == VALUE
    assert "INDXTYPE" in error.message and "CORRELID" in error.message
    assert reason_of("QLOCAL", ("TRIGTYPE", "")).reason == VALUE
    assert reason_of("QLOCAL", ("GET", "YES")).reason == VALUE


def test_enum_all_choices_accepted() -> None:
    for word in ("NONE", "MSGID", "CORRELID", "GROUPID", "MSGTOKEN"):
        assert apply("QLOCAL", ("INDXTYPE", word))["INDXTYPE"] == word
    for word in ("FIRST", "EVERY", "DEPTH", "NONE"):
        assert apply("QLOCAL", ("TRIGTYPE", word))["TRIGTYPE"] == word


def test_appltype_words_and_integers() -> None:
    assert apply("PROCESS", ("APPLTYPE", "ims"))["APPLTYPE"] == "IMS"
    assert apply("PROCESS", ("APPLTYPE", "65536"))["APPLTYPE"] == "65536"
    assert apply("PROCESS", ("APPLTYPE", "999999999"))["APPLTYPE"] == "999999999"
    assert reason_of("PROCESS", ("APPLTYPE", "1000000000")).reason == VALUE
    assert reason_of("PROCESS", ("APPLTYPE", "HTTP")).reason == VALUE


def test_cfstruct_sizes() -> None:
    assert apply("CFSTRUCT", ("OFFLD1SZ", "64k"))["OFFLD1SZ"] == "64K"
    assert apply("CFSTRUCT", ("OFFLD3SZ", "0K"))["OFFLD3SZ"] == "0K"
    assert reason_of("CFSTRUCT", ("OFFLD2SZ", "65K")).reason == VALUE
    assert apply("CFSTRUCT", ("DSBLOCK", "1m"))["DSBLOCK"] == "1M"
    assert reason_of("CFSTRUCT", ("DSBLOCK", "4K")).reason == VALUE


def test_qmgr_event_switches() -> None:
    assert apply("QMGR", ("PERFMEV", "enabled"))["PERFMEV"] == "ENABLED"
    assert apply("QMGR", ("CHLEV", "EXCEPTION"))["CHLEV"] == "EXCEPTION"
    assert apply("QMGR", ("CMDEV", "NODISPLAY"))["CMDEV"] == "NODISPLAY"
    assert reason_of("QMGR", ("PERFMEV", "NODISPLAY")).reason == VALUE


# ---------------------------------------------------------------------------------------------
# display_value
# ---------------------------------------------------------------------------------------------

def test_display_value_flags() -> None:
    table = specs("QLOCAL")
    assert display_value(table["TRIGGER"], False) == "NOTRIGGER"
    assert display_value(table["TRIGGER"], True) == "TRIGGER"
    assert display_value(table["SHARE"], True) == "SHARE"
    assert display_value(table["SHARE"], False) == "NOSHARE"
    assert display_value(table["HARDENBO"], False) == "NOHARDENBO"


def test_display_value_specials_ints_and_strings() -> None:
    qmgr = specs("QMGR")
    assert display_value(qmgr["EXPRYINT"], 0) == "OFF"
    assert display_value(qmgr["EXPRYINT"], 30) == 30
    assert display_value(qmgr["TRIGINT"], 0) == 0
    assert display_value(specs("QLOCAL")["CAPEXPRY"], -1) == "NOLIMIT"
    assert display_value(specs("QLOCAL")["MAXDEPTH"], 5000) == 5000
    assert display_value(specs("QLOCAL")["USAGE"], "XMITQ") == "XMITQ"
    assert display_value(specs("QLOCAL")["DESCR"], "") == ""


def test_namelist_names_are_a_list_of_names() -> None:
    stored = apply_keywords("NAMELIST", defaults("NAMELIST"), [("NAMES", ["A.Q", "b.q"]), ("NLTYPE", "queue")])
    assert stored["NAMES"] == ["A.Q", "b.q"] and stored["NLTYPE"] == "QUEUE"
    assert apply_keywords("NAMELIST", stored, [("NAMES", [])])["NAMES"] == []
    for bad in ([f"N{i}" for i in range(257)], ["X" * 49]):
        with pytest.raises(MQError) as info:
            apply_keywords("NAMELIST", stored, [("NAMES", bad)])
        assert info.value.reason == VALUE


@pytest.mark.parametrize("objtype", OBJECT_TYPES)
def test_defaults_round_trip_through_display(objtype: str) -> None:
    """Every displayed default can be fed back to DEFINE and gives the same stored value."""
    table = specs(objtype)
    stored = defaults(objtype)
    keywords: list[tuple[str, str | None]] = []
    for name, spec in table.items():
        if not spec.settable:
            continue
        shown = display_value(spec, stored[name])
        if spec.kind == "list":
            keywords.append((name, shown))  # the MQSC layer hands a list's items over split
            continue
        keywords.append((str(shown), None) if spec.kind == "flag" else (name, str(shown)))
    assert apply_keywords(objtype, {}, keywords) == {
        n: v for n, v in stored.items() if table[n].settable
    }


# ---------------------------------------------------------------------------------------------
# validate_cross
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("objtype", OBJECT_TYPES)
def test_validate_cross_accepts_defaults(objtype: str) -> None:
    validate_cross(objtype, defaults(objtype))


def test_validate_cross_cfstruct_recover_needs_cflevel_3() -> None:
    attrs = apply("CFSTRUCT", ("CFLEVEL", "2"), ("RECOVER", "YES"))
    with pytest.raises(MQError) as info:
        validate_cross("CFSTRUCT", attrs)
    assert info.value.reason == VALUE
    assert "RECOVER" in info.value.message and "CFLEVEL" in info.value.message
    validate_cross("CFSTRUCT", apply("CFSTRUCT", ("CFLEVEL", "3"), ("RECOVER", "YES")))
    validate_cross("CFSTRUCT", apply("CFSTRUCT", ("CFLEVEL", "2"), ("RECOVER", "NO")))
