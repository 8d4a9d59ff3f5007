"""What the code cites is there to read: a comment or docstring that cites docs/ibm-rules.md names
sections that page has (``§N`` a heading, ``§N.M`` a numbered paragraph), and none cites the
working notes the rules were first written in ("document 003") or a tracker's issue number, which
a reader of the project cannot open - the rule itself is in docs/ (docs/ibm-rules.md, or the
site page that holds it)."""

from __future__ import annotations

import re

import pytest

from tests.support.import_graph import ROOT

pytestmark = pytest.mark.fast

CODE = ("app", "tests", "bench", "spark_jobs", "migrations", "tools")
SUFFIXES = {".py", ".lua", ".j2", ".js", ".html"}

#: a citation of the rules page: its sections, each "§N" or "§N.M", up to the next sentence
CITATION = re.compile(r"ibm-rules\.md((?:[ ,]*(?:and|or)?[ ,]*§\d+(?:\.\d+)?)+)")
UNREADABLE = re.compile(r"\b(?:[Dd]ocuments? 0\d\d|[Ii]ssues? #?\d+)\b")


def code_files() -> list:
    return sorted(p for top in CODE if (ROOT / top).exists() for p in (ROOT / top).rglob("*")
                  if p.suffix in SUFFIXES and "__pycache__" not in p.parts and p.name != "test_citations.py")


def rules_sections() -> set[str]:
    text = (ROOT / "docs" / "ibm-rules.md").read_text(encoding="utf-8")
    return set(re.findall(r"^## (\d+)\.", text, re.M)) | set(re.findall(r"^\*\*(\d+\.\d+) ", text, re.M))


def test_cited_sections_of_the_ibm_rules_exist():
    sections = rules_sections()
    assert {"1", "1.2", "5.3"} <= sections  # the page was really read
    missing = []
    for path in code_files():
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for match in CITATION.finditer(line):
                missing += [f"{path.relative_to(ROOT)}:{n} §{s}" for s in re.findall(r"§([\d.]+\d|\d)", match[1])
                            if s not in sections]
    assert not missing, "cited sections docs/ibm-rules.md does not have:\n" + "\n".join(missing)


def test_no_citation_of_working_notes_or_issue_numbers():
    found = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}" for path in code_files()
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if UNREADABLE.search(line)]
    assert not found, "cite the section of docs/ that holds the rule instead:\n" + "\n".join(found)


def test_the_patterns_see_what_they_are_for():
    assert [m[1] for m in CITATION.finditer("(docs/ibm-rules.md §1.4 and §2.2), docs/ibm-rules.md §5")] == \
        [" §1.4 and §2.2", " §5"]
    assert UNREADABLE.search("as document 004 says") and UNREADABLE.search("(issue 28, item 2)")
    assert not UNREADABLE.search("the issue of a report") and not UNREADABLE.search("issued 2 messages")
