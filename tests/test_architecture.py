"""Architecture guards (docs/design.md §3), by static analysis of the source with ``ast``: nothing
of app/ is imported. Each failure lists every offending import as file:line.

(a) app/core is plain Python: it imports only app.core and the standard library.
(b) Only app/cf talks to Redis: no other package imports ``redis`` (tests/ and bench/ aside).
(c) Only app/repository (and migrations/) use SQL: no other package imports ``sqlalchemy`` or
    ``alembic``.
(d) No import cycles among the modules of app/, counting function-local imports and those under
    ``if TYPE_CHECKING:``; importing a package counts as importing its ``__init__``.
    ``python -m tests.support.import_cycles`` prints the same cycles (exit status 1 if any).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.import_cycles import report
from tests.support.import_graph import Import, cycles, graph, is_stdlib, project_imports, strongly_connected

# Packages of the product (tests/ and bench/ may use anything).
PRODUCT = ("app", "migrations", "spark_jobs")


def offenders(imports: list[Import]) -> str:
    unique = {(str(i.path), i.line, i.target): i for i in imports}
    return "\n".join("  " + unique[k].where() for k in sorted(unique))


def guard(bad: list[Import], rule: str) -> None:
    """Fail listing every offending import (file:line), without pytest's repr of the list."""
    if bad:
        pytest.fail(f"{rule} ({len({i.path for i in bad})} files):\n{offenders(bad)}", pytrace=False)


def outside(imports: list[Import], *allowed: str) -> list[Import]:
    """Imports made by modules that are not in (or under) one of the ``allowed`` packages."""
    return [i for i in imports if not any(i.importer == a or i.importer.startswith(a + ".") for a in allowed)]


# ---- the rules ---------------------------------------------------------------------------------


def test_core_imports_only_core_and_the_standard_library():
    bad = [i for i in project_imports("app/core")
           if not (is_stdlib(i.top) or i.target == "app.core" or i.target.startswith("app.core."))]
    guard(bad, "app/core must import only app.core.* and the standard library")


def test_core_imports_no_framework_or_storage_library():
    banned = {"fastapi", "starlette", "redis", "sqlalchemy", "alembic", "httpx", "uvicorn"}
    bad = [i for i in project_imports("app/core") if i.top in banned]
    guard(bad, "app/core must not import a framework or storage library")


def test_only_the_coupling_facility_package_imports_redis():
    users = [i for i in project_imports(*PRODUCT) if i.top == "redis"]
    bad = outside(users, "app.cf")
    guard(bad, "only app/cf may import redis")


def test_only_the_repository_imports_sqlalchemy_or_alembic():
    users = [i for i in project_imports(*PRODUCT) if i.top in ("sqlalchemy", "alembic")]
    bad = outside(users, "app.repository", "migrations")
    guard(bad, "only app/repository and migrations/ may import sqlalchemy or alembic")


def test_no_import_cycles_in_app():
    count, text = report(["app"])
    if count:
        pytest.fail(text, pytrace=False)


# ---- the analysis itself, on a made-up package ---------------------------------------------------


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_analysis_sees_type_checking_local_relative_and_package_imports(tmp_path):
    write(tmp_path, {
        "pkg/__init__.py": "from pkg.b import thing\n",
        "pkg/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.c import C\n",
        "pkg/b.py": "def f():\n    from . import a\n    return a\nthing = 1\n",
        "pkg/c.py": "import pkg.b\n",
        "pkg/d.py": "from pkg import thing\n",  # a package import: counts as pkg/__init__
        "pkg/e.py": "import os, json\nfrom pkg.a import nothing\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/f.py": "from .. import e\nfrom ..sub import g\n",
        "pkg/sub/g.py": "",
    })
    edges, first = graph("pkg", root=tmp_path)
    assert edges["pkg.a"] == {"pkg.c"}  # under TYPE_CHECKING
    assert edges["pkg.b"] == {"pkg"} | {"pkg.a"}  # function-local relative import: pkg and pkg.a
    assert edges["pkg.c"] == {"pkg.b"}
    assert edges["pkg.d"] == {"pkg"}
    assert edges["pkg.e"] == {"pkg.a"}
    assert edges["pkg.sub.f"] == {"pkg", "pkg.e", "pkg.sub", "pkg.sub.g"}
    assert first[("pkg.a", "pkg.c")].line == 3
    assert strongly_connected(edges) == [["pkg", "pkg.a", "pkg.b", "pkg.c"]]
    ((members, inside),) = cycles("pkg", root=tmp_path)
    assert members == ["pkg", "pkg.a", "pkg.b", "pkg.c"]
    assert {(i.importer, i.line) for i in inside} >= {("pkg", 1), ("pkg.a", 3), ("pkg.b", 2), ("pkg.c", 1)}
    tops = {(i.importer, i.top) for i in project_imports("pkg", root=tmp_path)}
    assert {("pkg.e", "os"), ("pkg.e", "json")} <= tops


def test_tarjan_finds_self_loops_and_separate_cycles():
    edges = {"a": {"b"}, "b": {"a"}, "c": {"c"}, "d": {"e"}, "e": set(), "f": {"g"}, "g": {"h"}, "h": {"f", "e"}}
    assert strongly_connected(edges) == [["f", "g", "h"], ["a", "b"], ["c"]]
    assert strongly_connected({"x": {"y"}, "y": set()}) == []
