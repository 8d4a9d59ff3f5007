"""Architecture guards (docs/design.md §3), by static analysis of the source with ``ast``: nothing
of app/ is imported. Each failure lists every offending import as file:line.

(a) app/core is plain Python: it imports only app.core and the standard library.
(b) Only app/cf talks to Redis: no other package imports ``redis`` (tests/ and bench/ aside).
(c) Only app/repository (and migrations/) use SQL: no other package imports ``sqlalchemy`` or
    ``alembic``.
(d) No import cycles among the modules of app/, counting function-local imports and those under
    ``if TYPE_CHECKING:``; importing a package counts as importing its ``__init__``.
    ``python -m tests.support.import_cycles`` prints the same cycles (exit status 1 if any).
(e) No cycles among the packages of app/ either (app.qmgr, app.cf, app.api, ...: each module
    counted in its top package), which (d) cannot see: two packages whose modules import each
    other without any module cycle are still one tangle.
(f) The domain (app/qmgr, app/cf) knows no web framework: no FastAPI or Starlette import.
(g) The hot path (app/api/hotpath.py) serves exactly what FastAPI's route table routes to the
    same endpoints: it is a shortcut, never a second router.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.import_cycles import report
from tests.support.import_graph import Import, cycles, graph, is_stdlib, project_imports, strongly_connected

pytestmark = pytest.mark.fast  # static analysis only (its words name servers it never starts)

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


def package_of(module: str) -> str:
    """The top package of an app module: app.qmgr.mqi.put -> app.qmgr; app.cli -> app.cli."""
    return ".".join(module.split(".")[:2])


def package_cycles(package: str = "app", root: Path | None = None) -> list[tuple[list[str], list[str]]]:
    """The cycles among the top packages of ``package``: each its packages and the imports that make it."""
    edges, first = graph(package, root=root) if root is not None else graph(package)
    packages: dict[str, set[str]] = {}
    for module, targets in edges.items():
        source = package_of(module)
        packages.setdefault(source, set()).update(
            package_of(t) for t in targets if package_of(t) != source and package_of(t) != package)
    found = []
    for members in strongly_connected(packages):
        inside = sorted(f"{i.importer}:{i.line} imports {i.target} ({package_of(i.importer)} -> {package_of(i.target)})"
                        for (a, b), i in first.items()
                        if package_of(a) in members and package_of(b) in members and package_of(a) != package_of(b))
        found.append((members, inside))
    return found


def test_no_import_cycles_between_the_packages_of_app():
    found = package_cycles()
    if found:
        pytest.fail("package cycles (each: its packages, then the imports that make it):\n" +
                    "\n".join("  " + "\n    ".join([*members, *inside]) for members, inside in found), pytrace=False)


def test_the_domain_imports_no_web_framework():
    users = [i for i in project_imports("app/qmgr", "app/cf") if i.top in ("fastapi", "starlette")]
    guard(users, "app/qmgr and app/cf must not import FastAPI or Starlette")


def test_the_hot_path_serves_what_fastapi_routes_to_the_same_endpoint():
    from fastapi.routing import APIRoute
    from starlette.routing import Match

    from app.api.app import create_app
    from app.api.hotpath import hot_route
    from app.api.routes_mqi import HOT_CONNECTION_VERBS, HOT_VERBS
    from app.settings import Settings

    def api_routes(routes: list) -> list[APIRoute]:
        """The app's APIRoutes, also those of included routers (FastAPI >= 0.165 keeps them apart)."""
        out = []
        for route in routes:
            if isinstance(route, APIRoute):
                out.append(route)
            elif hasattr(route, "original_router"):  # an included router, its prefix in its routes
                out += api_routes(route.original_router.routes)
        return out

    app = create_app(Settings(qmgr="QM1", auth="off"))
    routes = api_routes(app.router.routes)
    assert len(routes) > 20  # the table really was read

    def fastapi_endpoint(method: str, path: str):
        scope = {"type": "http", "method": method, "path": path, "root_path": ""}
        for route in routes:
            match, child = route.matches(scope)
            if match == Match.FULL:
                return route.endpoint, tuple(child["path_params"].values())
        return None

    hot = [("/v1/connections/QM1-abc/objects/7/" + verb) for verb in HOT_VERBS] + \
          [("/v1/connections/QM1-abc/" + verb) for verb in HOT_CONNECTION_VERBS]
    for path in hot:
        assert hot_route("POST", path) is not None, path
        assert hot_route("POST", path) == fastapi_endpoint("POST", path), path
    # every POST FastAPI routes under /v1/connections/{hconn}: hot or not, never another endpoint
    for route in routes:
        if "POST" not in route.methods or not route.path.startswith("/v1/connections/{hconn}"):
            continue
        path = route.path.replace("{hconn}", "QM1-abc").replace("{hobj}", "7")
        found = hot_route("POST", path)
        assert found is None or found == fastapi_endpoint("POST", path), path
    # what is not POST, or not one of those paths, goes to FastAPI
    for method, path in [("GET", "/v1/connections/QM1-abc/objects/7/put"), ("POST", "/v1/connections/QM1-abc"),
                         ("POST", "/v1/connections//put1"), ("POST", "/v2/connections/QM1-abc/put1"),
                         ("POST", "/v1/connections/QM1-abc/objects//put")]:
        assert hot_route(method, path) is None, (method, path)


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


def test_package_cycles_are_seen_where_no_module_cycle_is(tmp_path):
    write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a/__init__.py": "",
        "pkg/a/one.py": "from pkg.b import two\n",
        "pkg/a/three.py": "",
        "pkg/b/__init__.py": "",
        "pkg/b/two.py": "",
        "pkg/b/four.py": "from pkg.a import three\n",
        "pkg/c.py": "from pkg.a import one\n",
    })
    assert cycles("pkg", root=tmp_path) == []  # no module cycle ...
    ((members, inside),) = package_cycles("pkg", root=tmp_path)  # ... but pkg.a and pkg.b are one tangle
    assert members == ["pkg.a", "pkg.b"]
    assert any(line.startswith("pkg.a.one:1 ") for line in inside)
    assert any(line.startswith("pkg.b.four:1 ") for line in inside)


def test_tarjan_finds_self_loops_and_separate_cycles():
    edges = {"a": {"b"}, "b": {"a"}, "c": {"c"}, "d": {"e"}, "e": set(), "f": {"g"}, "g": {"h"}, "h": {"f", "e"}}
    assert strongly_connected(edges) == [["f", "g", "h"], ["a", "b"], ["c"]]
    assert strongly_connected({"x": {"y"}, "y": set()}) == []
