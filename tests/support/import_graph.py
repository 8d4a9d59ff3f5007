"""Static import analysis of the project's packages (``ast`` only: nothing is imported).

Every import counts: module level, function-local, and those under ``if TYPE_CHECKING:``.
``import a.b`` is an edge to ``a.b``; ``from a.b import c`` is an edge to ``a.b`` (a package
counts as its ``__init__``) and, when ``a.b.c`` is a module, to ``a.b.c`` as well. Relative
imports are resolved against the importing module's package.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Import:
    """One imported name as written: the importing module, the file and line, the module path
    as resolved (absolute, dotted), and its top-level package."""

    importer: str
    path: Path
    line: int
    target: str
    name_of_from: bool = False  # ``c`` of ``from a.b import c``: an edge only if ``a.b.c`` is a module

    @property
    def top(self) -> str:
        return self.target.split(".", 1)[0]

    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line} imports {self.target}"


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def python_files(*packages: str, root: Path = ROOT) -> list[Path]:
    return sorted(p for pkg in packages for p in (root / pkg).rglob("*.py") if "__pycache__" not in p.parts)


def _package_of(module: str, path: Path) -> str:
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def imports_of(path: Path, root: Path = ROOT) -> Iterator[Import]:
    """Every import in one file (the ``from`` part and each name that is a module itself, found
    by ``is_module``)."""
    module = module_name(path, root)
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(module, path, node.lineno, alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _package_of(module, path).split(".")
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            yield Import(module, path, node.lineno, target)
            for alias in node.names:
                if alias.name != "*":
                    yield Import(module, path, node.lineno, f"{target}.{alias.name}", name_of_from=True)


def project_imports(*packages: str, root: Path = ROOT) -> list[Import]:
    """The imports of every file under ``packages`` (the modules they name, not the names
    taken from them): what layer rules look at."""
    return [imp for path in python_files(*packages, root=root) for imp in imports_of(path, root)
            if not imp.name_of_from]


def graph(*packages: str, root: Path = ROOT) -> tuple[dict[str, set[str]], dict[tuple[str, str], Import]]:
    """The module graph of ``packages``: module -> the project modules it imports, and for each
    edge the first import that makes it (for messages)."""
    files = python_files(*packages, root=root)
    modules = {module_name(p, root) for p in files}
    edges: dict[str, set[str]] = {m: set() for m in modules}
    first: dict[tuple[str, str], Import] = {}
    for imp in (i for path in files for i in imports_of(path, root)):
        target = imp.target
        if imp.name_of_from and target not in modules:
            continue  # ``from a.b import name``: an attribute of a.b, whose own edge is counted
        while target not in modules and "." in target:
            target = target.rpartition(".")[0]  # the nearest module that exists
        if target in modules and target != imp.importer:
            edges[imp.importer].add(target)
            known = first.get((imp.importer, target))
            if known is None or imp.line < known.line:
                first[(imp.importer, target)] = imp
    return edges, first


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative); those of more than one module, or of
    one module importing itself, each sorted, largest first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in edges.get(node, ()):
                    found.append(sorted(component))
    return sorted(found, key=lambda c: (-len(c), c))


def cycles(*packages: str, root: Path = ROOT) -> list[tuple[list[str], list[Import]]]:
    """Each import cycle among the modules of ``packages``: its modules and the imports inside it."""
    edges, first = graph(*packages, root=root)
    out = []
    for component in strongly_connected(edges):
        members = set(component)
        inside = sorted((first[(a, b)] for a in component for b in edges[a] & members),
                        key=lambda i: (str(i.path), i.line, i.target))
        out.append((component, inside))
    return out


def is_stdlib(top: str) -> bool:
    return top in sys.stdlib_module_names or top == "__future__"
