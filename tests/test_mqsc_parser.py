"""Tests of the MQSC script parser (app.mqsc.parser)."""

from __future__ import annotations

import random
import string

import pytest

from app.core.errors import MQError
from app.core.reasons import MQRC
from app.mqsc.parser import (
    Command,
    Keyword,
    ParseFailure,
    parse_command,
    parse_script,
    split_commands,
)


def syntax_error(text: str) -> MQError:
    """Parse ``text`` expecting a syntax error, and return it."""
    with pytest.raises(MQError) as caught:
        parse_command(text)
    assert caught.value.reason == MQRC.MQRCCF_PARM_SYNTAX_ERROR
    return caught.value


# --- verbs, object types, names --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "verb", "objtype"),
    [
        ("DEF QL(A)", "DEFINE", "QLOCAL"),
        ("def qa(A)", "DEFINE", "QALIAS"),
        ("DEFINE QR(A)", "DEFINE", "QREMOTE"),
        ("DEFINE QM(A)", "DEFINE", "QMODEL"),
        ("DIS Q(A)", "DISPLAY", "QUEUE"),
        ("DIS QS(A)", "DISPLAY", "QSTATUS"),
        ("DEL PRO(A)", "DELETE", "PROCESS"),
        ("ALT CHL(A)", "ALTER", "CHANNEL"),
        ("ALTER NL(A)", "ALTER", "NAMELIST"),
        ("DIS STC(A)", "DISPLAY", "STGCLASS"),
        ("DIS CHS(A)", "DISPLAY", "CHSTATUS"),
        ("DIS LSTR(A)", "DISPLAY", "LISTENER"),
        ("DIS CS", "DISPLAY", "CMDSERV"),
        ("REF QMGR", "REFRESH", "QMGR"),
        ("STA CHINIT", "START", "CHINIT"),
        ("RESET QSTATS(A)", "RESET", "QSTATS"),
        ("BACKUP CFSTRUCT(APP1)", "BACKUP", "CFSTRUCT"),
        ("RECOVER BSDS", "RECOVER", "BSDS"),
        ("ARCHIVE LOG", "ARCHIVE", "LOG"),
        ("MOVE QLOCAL(A)", "MOVE", "QLOCAL"),
        ("PING QMGR", "PING", "QMGR"),
        ("SET LOG", "SET", "LOG"),
        ("STOP CHANNEL(A)", "STOP", "CHANNEL"),
        ("CLEAR QLOCAL(A)", "CLEAR", "QLOCAL"),
        ("DIS QSG", "DISPLAY", "QSG"),
        ("DIS GROUP", "DISPLAY", "GROUP"),
        ("DIS SUB(A)", "DISPLAY", "SUB"),
        ("DIS CFSTATUS(*)", "DISPLAY", "CFSTATUS"),
    ],
)
def test_verb_and_object_type_synonyms_are_normalised(text: str, verb: str, objtype: str) -> None:
    command = parse_command(text)
    assert (command.verb, command.objtype) == (verb, objtype)


def test_unquoted_name_is_folded_and_quoted_name_keeps_case() -> None:
    assert parse_command("DEFINE QLOCAL(my.q)").name == "MY.Q"
    assert parse_command("define qlocal('my.q')").name == "my.q"
    assert parse_command("DEFINE QLOCAL ( app.q )").name == "APP.Q"


def test_generic_names_and_missing_name() -> None:
    assert parse_command("DIS QSTATUS(APP.*)").name == "APP.*"
    command = parse_command("DISPLAY QMGR")
    assert command.name is None and command.keywords == ()


def test_verb_without_object_type() -> None:
    command = parse_command("end")
    assert (command.verb, command.objtype, command.name) == ("END", None, None)


def test_command_text_is_kept_for_echoing() -> None:
    command = parse_command("  dis ql(a)  ;  ")
    assert command.text == "dis ql(a)  ;"
    assert command.name == "A"


# --- keywords and values ---------------------------------------------------------------------


def test_keywords_keep_order_and_bare_keywords_have_no_value() -> None:
    command = parse_command("DEFINE QLOCAL(A) replace MaxDepth(5000) NOTRIGGER descr('x')")
    assert [kw.name for kw in command.keywords] == ["REPLACE", "MAXDEPTH", "NOTRIGGER", "DESCR"]
    assert command.get("replace") == Keyword("REPLACE", None)
    assert command.get("maxdepth") == Keyword("MAXDEPTH", "5000")
    assert command.has("NoTrigger") and not command.has("TRIGGER")
    assert command.get("TRIGGER") is None


def test_blanks_around_values() -> None:
    command = parse_command("DEFINE QLOCAL(A) MAXDEPTH (5000) DESCR( 'hello' ) BOQNAME(  x.y  )")
    assert command.get("MAXDEPTH").value == "5000"
    assert command.get("DESCR") == Keyword("DESCR", "hello", quoted=True)
    assert command.get("BOQNAME") == Keyword("BOQNAME", "X.Y", quoted=False)


def test_quoted_value_keeps_case_blanks_and_doubled_quotes() -> None:
    command = parse_command("DEFINE QLOCAL(A) DESCR('  It''s  Mixed ''Case''  ')")
    assert command.get("DESCR").value == "  It's  Mixed 'Case'  "
    assert command.get("DESCR").quoted is True
    assert command.get("DESCR").values() == ["  It's  Mixed 'Case'  "]


def test_unquoted_value_is_folded() -> None:
    assert parse_command("ALTER QLOCAL(A) INITQ(system.default.initiation.queue)").get("INITQ").value == (
        "SYSTEM.DEFAULT.INITIATION.QUEUE"
    )


def test_empty_parentheses_mean_empty_string() -> None:
    descr = parse_command("ALTER QLOCAL(A) DESCR()").get("DESCR")
    assert descr == Keyword("DESCR", "", quoted=False)
    assert descr.values() == []
    assert parse_command("ALTER QLOCAL(A) DESCR('')").get("DESCR") == Keyword("DESCR", "", quoted=True)


def test_list_values() -> None:
    names = parse_command("DEFINE NAMELIST(NL1) NAMES(a, 'b,c', C , 'It''s')").get("NAMES")
    assert names.quoted is False
    assert names.value == "A, 'b,c', C , 'It''s'"  # quoted parts kept in source form
    assert names.values() == ["A", "b,c", "C", "It's"]
    assert Keyword("X", None).values() == []
    assert parse_command("DEF NL(N) NAMES(A)").get("NAMES").values() == ["A"]


def test_where_expressions() -> None:
    where = parse_command("DIS QLOCAL(*) WHERE(CURDEPTH GT 5)").get("WHERE")
    assert where.value == "CURDEPTH GT 5"
    where = parse_command("dis ql(*) where(descr lk 'abc*') all").get("WHERE")
    assert where.value == "DESCR LK 'abc*'"
    assert where.values() == ["DESCR LK 'abc*'"]


def test_balanced_nested_parentheses_stay_in_value() -> None:
    assert parse_command("DIS QL(*) WHERE((A))").get("WHERE").value == "(A)"
    conname = parse_command("DEF CHL(C) CONNAME(host1(1414),host2(1415))").get("CONNAME")
    assert conname.values() == ["HOST1(1414)", "HOST2(1415)"]
    # A ')' inside quotes closes nothing.
    assert parse_command("DEF QL(A) DESCR('a)b')").get("DESCR").value == "a)b"


def test_keyword_may_follow_a_value_without_blank() -> None:
    command = parse_command("DEFINE QLOCAL(A)MAXDEPTH(5)REPLACE")
    assert [(kw.name, kw.value) for kw in command.keywords] == [("MAXDEPTH", "5"), ("REPLACE", None)]


@pytest.mark.parametrize("text", ["ALTER QLOCAL(A) MAXDEPTH(1) MAXDEPTH(2)",
                                  "DISPLAY QLOCAL(*) CMDSCOPE(QM1) cmdscope(*)", "DISPLAY QLOCAL(*) CURDEPTH CURDEPTH",
                                  "DEFINE QLOCAL(A) REPLACE DESCR('x') REPLACE"])
def test_a_keyword_given_twice_is_refused(text: str) -> None:
    """z/OS: CSQ9000E 'keyword' appears more than once; the command is not processed."""
    with pytest.raises(MQError) as caught:
        parse_command(text)
    assert caught.value.reason == MQRC.MQRCCF_PARM_SYNTAX_ERROR and "CSQ9000E" in caught.value.message


def test_trailing_semicolon_is_ignored() -> None:
    command = parse_command("DEFINE QLOCAL(A) REPLACE ;")
    assert command.keywords == (Keyword("REPLACE", None),)


def test_quoted_value_may_hold_any_character() -> None:
    assert parse_command("DEF QL(A) DESCR('a=b{c};:\x00é')").get("DESCR").value == "a=b{c};:\x00é"


def test_negative_numbers_and_special_characters_unquoted() -> None:
    command = parse_command("ALTER QL(A) QDEPTHLO(-1) USERDATA(@#$%_/.*)")
    assert command.get("QDEPTHLO").value == "-1"
    assert command.get("USERDATA").value == "@#$%_/.*"


def test_result_types_are_frozen() -> None:
    command = parse_command("DIS QMGR")
    assert isinstance(command, Command)
    with pytest.raises(AttributeError):
        command.verb = "DEFINE"  # type: ignore[misc]


# --- splitting scripts -----------------------------------------------------------------------


def test_plus_continuation_removes_leading_blanks_of_next_line() -> None:
    script = "DEFINE QLOCAL(A) +\n      MAXDEPTH(5) +   \n\t   REPLACE\n"
    assert split_commands(script) == ["DEFINE QLOCAL(A) MAXDEPTH(5) REPLACE"]


def test_minus_continuation_keeps_leading_blanks_of_next_line() -> None:
    script = "DEFINE QLOCAL(A) -\n   MAXDEPTH(5)"
    assert split_commands(script) == ["DEFINE QLOCAL(A)    MAXDEPTH(5)"]


def test_continuation_inside_quoted_string() -> None:
    assert split_commands("DEF QL(A) DESCR('abc+\n     def')") == ["DEF QL(A) DESCR('abcdef')"]
    assert split_commands("DEF QL(A) DESCR('abc-\n  def')") == ["DEF QL(A) DESCR('abc  def')"]
    assert parse_script("DEF QL(A) DESCR('Abc+\n     Def')")[0].get("DESCR").value == "AbcDef"


def test_trailing_minus_of_a_value_is_continuation() -> None:
    assert split_commands("ALTER QL(A) QDEPTHLO(-\n5)") == ["ALTER QL(A) QDEPTHLO(5)"]


def test_continuation_at_end_of_script_ends_command() -> None:
    assert split_commands("DIS QMGR +") == ["DIS QMGR"]
    assert split_commands("DIS QMGR -\n") == ["DIS QMGR"]


def test_comments_blank_lines_and_line_ends() -> None:
    script = "* a comment +\r\n\r\n   * indented comment\rDIS QMGR\n\n  \t\nDIS QL(A)\n*last"
    assert split_commands(script) == ["DIS QMGR", "DIS QL(A)"]


def test_comment_mark_inside_continuation_belongs_to_command() -> None:
    assert split_commands("DIS QS(+\n*)") == ["DIS QS(*)"]


def test_form_feed_is_not_a_line_end() -> None:
    assert split_commands("DEF QL(A) DESCR('a\x0cb')") == ["DEF QL(A) DESCR('a\x0cb')"]


def test_script_of_several_commands() -> None:
    script = """
* Define the application queues
DEFINE QLOCAL(app.in) +
       DESCR('Input queue') +
       MAXDEPTH(10000) REPLACE
DEF QA(APP.ALIAS) TARGET(APP.IN);
DIS QL(APP.*) CURDEPTH
"""
    results = parse_script(script)
    assert [type(r) for r in results] == [Command, Command, Command]
    first, second, third = results
    assert first.text == "DEFINE QLOCAL(app.in) DESCR('Input queue') MAXDEPTH(10000) REPLACE"
    assert (first.verb, first.objtype, first.name) == ("DEFINE", "QLOCAL", "APP.IN")
    assert first.get("DESCR").value == "Input queue"
    assert second.get("TARGET").value == "APP.IN"
    assert third.keywords == (Keyword("CURDEPTH", None),)


# --- syntax errors ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "column", "words"),
    [
        ("DEFINE QLOCAL(A", 14, "no matching ')'"),
        ("DEFINE QLOCAL(A) WHERE((X)", 23, "no matching ')'"),
        ("DEFINE QLOCAL(A))", 17, "no matching '('"),
        ("DEFINE QLOCAL(A) DESCR('oops)", 24, "no closing quote"),
        ("DEFINE QLOCAL(A) (5)", 18, "must follow a keyword"),
        ("DEFINE QLOCAL(A) MAXDEPTH=5", 26, "'='"),
        ("DEFINE QLOCAL(A) MAX{DEPTH(5)", 21, "'{'"),
        ("DEFINE QLOCAL(A) 9LIVES", 18, "start with a letter"),
        ("DEFINE QLOCAL(A) DESCR(a:b)", 25, "quote the value"),
        ("DEFINE QLOCAL(A) 'x'", 18, "inside parentheses"),
        ("DEFINE QLOCAL(A B)", 14, "single name"),
        ("DEFINE QLOCAL(A,B)", 14, "single name"),
        ("DEFINE(A)", 7, "takes no value"),
        ("FROB QLOCAL(A)", 1, "unknown command verb 'FROB'"),
        ("DEFINE QWIBBLE(A)", 8, "unknown object type 'QWIBBLE'"),
        ("DEFINE", 7, "needs an object type"),
        (";", 1, "empty"),
        ("   ;  ", 4, "empty"),
        ("DIS QMGR ;;", 10, "';'"),
        ("DÉFINE QLOCAL(A)", 2, "'É'"),
    ],
)
def test_malformed_commands_give_positioned_syntax_errors(text: str, column: int, words: str) -> None:
    error = syntax_error(text)
    assert f"column {column} " in error.message
    assert words in error.message


def test_parse_script_reports_failures_and_continues() -> None:
    script = "\n".join(
        [
            "DEFINE QLOCAL(A",
            "DEFINE QLOCAL(A) DESCR('x",
            "DEFINE QLOCAL(A) (5)",
            "DEFINE QLOCAL(A) X=1",
            "DEFINE QLOCAL(A) {",
            ";",
            "NOTAVERB QMGR",
            "DEFINE NOTATYPE(A)",
            "DEFINE QLOCAL(OK.Q) DESCR() REPLACE",
        ]
    )
    results = parse_script(script)
    assert len(results) == 9
    failures, last = results[:-1], results[-1]
    assert all(isinstance(r, ParseFailure) for r in failures)
    assert all(r.error.reason == MQRC.MQRCCF_PARM_SYNTAX_ERROR for r in failures)
    assert [r.text for r in failures] == script.splitlines()[:-1]
    assert isinstance(last, Command) and last.name == "OK.Q" and last.get("DESCR").value == ""


def test_failure_text_is_after_continuation() -> None:
    (failure,) = parse_script("DEFINE QLOCAL(A) +\n   MAXDEPTH(5")
    assert isinstance(failure, ParseFailure)
    assert failure.text == "DEFINE QLOCAL(A) MAXDEPTH(5"
    assert "column 26" in failure.error.message


def test_non_string_input_is_a_syntax_error() -> None:
    for call in (parse_command, split_commands, parse_script):
        with pytest.raises(MQError) as caught:
            call(b"DIS QMGR")  # type: ignore[arg-type]
        assert caught.value.reason == MQRC.MQRCCF_PARM_SYNTAX_ERROR


# --- robustness ------------------------------------------------------------------------------


def test_very_long_and_deeply_nested_input() -> None:
    long_name = "A" * 200_000
    assert parse_command(f"DIS QL({long_name})").name == long_name
    assert parse_command("DIS QL(*) WHERE(" + "(" * 50_000 + "X" + ")" * 50_000 + ")").get("WHERE").value.count(
        "("
    ) == 50_000
    syntax_error("DIS QL(*) WHERE(" + "(" * 50_000)
    syntax_error("ALTER QL(A) DESCR('" + "x" * 100_000)


def test_random_input_only_ever_raises_mqerror() -> None:
    rng = random.Random(20240601)
    alphabet = string.printable + "'''((()))+-;*,é\x00\x85\u2028\udcff"
    parsed = failed = 0
    for _ in range(3000):
        length = rng.randint(0, 80)
        if rng.random() < 0.5:
            text = "".join(rng.choice(alphabet) for _ in range(length))
        else:
            text = "".join(chr(rng.randint(0, 0x2FF)) for _ in range(length))
        if rng.random() < 0.3:
            text = rng.choice(["DEF QL(A) ", "DIS QS(*) WHERE(", "ALTER QLOCAL("]) + text
        try:
            parse_command(text)
            parsed += 1
        except MQError as error:
            assert error.reason == MQRC.MQRCCF_PARM_SYNTAX_ERROR
            failed += 1
        for result in parse_script(text):  # must not raise at all
            assert isinstance(result, (Command, ParseFailure))
            if isinstance(result, Command):
                for keyword in result.keywords:
                    assert isinstance(keyword.values(), list)
    assert parsed + failed == 3000 and failed > 0


def test_random_token_soup_parses_or_fails_cleanly() -> None:
    rng = random.Random(7)
    tokens = ["DEF", "dis", "QL", "QMGR", "(", ")", "'", "''", "a.b", "*", " ", "  ", ",", "WHERE",
              "GT", "5", "REPLACE", "DESCR", "+\n", "-\n", "\n", ";", "*x\n", "=", "\t"]
    outcomes = {"command": 0, "failure": 0}
    for _ in range(3000):
        # Mostly blank-separated so that well-formed commands do come up.
        script = rng.choice(["DEF QL", "DIS QMGR", ""]) + " ".join(
            rng.choice(tokens) for _ in range(rng.randint(0, 12))
        )
        for result in parse_script(script):
            if isinstance(result, Command):
                outcomes["command"] += 1
                assert result.verb in ("DEFINE", "DISPLAY")
                assert all(kw.name.isalnum() and kw.name.isupper() for kw in result.keywords)
            else:
                outcomes["failure"] += 1
                assert result.error.reason == MQRC.MQRCCF_PARM_SYNTAX_ERROR
                assert "column" in result.error.message
    # The soup must exercise both paths, or the loop proves nothing.
    assert outcomes["command"] > 0 and outcomes["failure"] > 0


# --- DISPLAY: attribute keywords take no value (z/OS CSQ9011E) -------------------------------


@pytest.mark.parametrize("text", ["DISPLAY QLOCAL(X) CURDEPTH(5)", "DIS QL(X) ALL(YES)", "DIS Q(*) MAXDEPTH()",
                                  "DIS QMGR DEADQ(DLQ)", "DIS QSTATUS(X) IPPROCS(1)", "DIS CHL(*) CONNAME('h')"])
def test_display_refuses_a_value_on_an_attribute_keyword(text: str) -> None:
    keyword = text.split(")")[-2].split()[-1].split("(")[0] if text.count("(") > 1 else text.split()[-1].split("(")[0]
    assert f"CSQ9011E Parameter(s) not allowed for '{keyword}'" in syntax_error(text).message


def test_display_keeps_its_value_keywords_and_other_verbs_their_values() -> None:
    cmd = parse_command("DIS Q(A*) TYPE(QLOCAL) QSGDISP(SHARED) CMDSCOPE(*) CFSTRUCT(APP*) WHERE(CURDEPTH GT 0) "
                        "CURDEPTH IPPROCS")
    assert [(k.name, k.value) for k in cmd.keywords] == [
        ("TYPE", "QLOCAL"), ("QSGDISP", "SHARED"), ("CMDSCOPE", "*"), ("CFSTRUCT", "APP*"),
        ("WHERE", "CURDEPTH GT 0"), ("CURDEPTH", None), ("IPPROCS", None)]
    assert parse_command("DIS NL(*) NLTYPE(QUEUE)").value("NLTYPE") == "QUEUE"
    assert parse_command("DIS AUTHREC PROFILE(A.*) OBJTYPE(QUEUE) PRINCIPAL('app')").value("OBJTYPE") == "QUEUE"
    assert parse_command("ALTER QLOCAL(X) MAXDEPTH(5)").value("MAXDEPTH") == "5"



@pytest.mark.parametrize("text, keyword, value", [
    ("DIS CHL(*) CHLTYPE(SVRCONN)", "CHLTYPE", "SVRCONN"),  # IBM: TYPE (or CHLTYPE) selects channels
    ("DIS AUTHINFO(*) AUTHTYPE(CRLLDAP)", "AUTHTYPE", "CRLLDAP"),
    ("DIS THREAD(*) TYPE(INDOUBT) QMNAME(QM2)", "QMNAME", "QM2"),
    ("DIS CLUSQMGR(*) CHANNEL(TO.*)", "CHANNEL", "TO.*"),
    ("DIS TRACE(*) COMMENT('why') DETAIL(1)", "COMMENT", "why"),
    ("DIS TRACE(*) DETAIL(1)", "DETAIL", "1"),
    ("DIS CFSTATUS(APP*) TYPE(SMDS) SMDS(*)", "SMDS", "*"),
])
def test_display_filter_keywords_of_ibm_syntax_keep_their_values(text: str, keyword: str, value: str) -> None:
    """Keywords IBM's DISPLAY syntax diagrams give a value (filters and options, z/OS): no CSQ9011E."""
    assert parse_command(text).value(keyword) == value
