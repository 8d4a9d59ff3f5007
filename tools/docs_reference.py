"""The generated reference pages of the documentation site, written from the code at build time.

``mkdocs.yml`` loads this file as a hook: a page whose Markdown holds a marker such as
``<!-- generated: reason-codes -->`` gets the marker replaced by a table made from the code, so
the reference cannot go stale (no copy is kept in docs/). The same functions are used by
tests/test_docs_site.py to check the pages hold every id the code has.

Markers: ``rest-api`` (the queue manager's OpenAPI), ``reason-codes`` (app/core/reasons.py),
``settings`` (app/settings.py), ``metrics`` (app/qmgr/metrics.py), ``log-messages`` (every
message id written by app/).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

#: Message ids of the log: IBM's (CSQxnnnc) and the emulator's own (QSGxnnnc).
MESSAGE_ID = re.compile(r"\b((?:CSQ[A-Z0-9]|QSG[A-Z])[0-9]{3}[IEWAD])\b")


def _cell(text: Any) -> str:
    """One Markdown table cell: no pipe or line break may end the row early."""
    return str(text).replace("|", "\\|").replace("\n", " ").strip()


# ---- REST API --------------------------------------------------------------------------------


def openapi() -> dict[str, Any]:
    """The OpenAPI document a queue manager serves at /openapi.json (made without starting it)."""
    from app.api.app import create_app
    from app.settings import Settings

    return create_app(Settings()).openapi()


def _schema_name(schema: dict[str, Any] | None) -> str:
    if not schema:
        return ""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        return f"[`{name}`](#schema-{name.lower()})"
    if schema.get("type") == "array":
        return f"array of {_schema_name(schema.get('items'))}"
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return " or ".join(_schema_name(s) for s in schema[key])
    return f"`{schema.get('type', 'object')}`"


def rest_api_markdown() -> str:
    """Every path and method of the OpenAPI document, then its schemas."""
    doc = openapi()
    lines = [f"OpenAPI {doc['openapi']}, generated from the code at build time "
             "(a running queue manager serves the same at `/openapi.json` and `/docs`).", ""]
    for path, methods in doc["paths"].items():
        for method, op in methods.items():
            lines += [f"### `{method.upper()} {path}`", ""]
            if op.get("summary"):
                lines += [f"**{op['summary']}**", ""]
            if op.get("description"):
                lines += [op["description"].strip(), ""]
            params = op.get("parameters", [])
            if params:
                lines += ["| parameter | in | required | schema |", "|---|---|---|---|"]
                lines += [f"| `{p['name']}` | {p['in']} | {'yes' if p.get('required') else 'no'} | "
                          f"{_cell(_schema_name(p.get('schema')))} |" for p in params]
                lines.append("")
            body = op.get("requestBody", {}).get("content", {})
            for media, content in body.items():
                lines += [f"Request body ({media}): {_schema_name(content.get('schema'))}", ""]
            responses = op.get("responses", {})
            if responses:
                lines += ["| status | meaning |", "|---|---|"]
                lines += [f"| {code} | {_cell(r.get('description', ''))} |" for code, r in responses.items()]
                lines.append("")
    lines += ["## Schemas", ""]
    for name, schema in doc.get("components", {}).get("schemas", {}).items():
        lines += [f'<a id="schema-{name.lower()}"></a>', f"### {name}", ""]
        if schema.get("description"):
            lines += [schema["description"].strip(), ""]
        props = schema.get("properties", {})
        if props:
            required = set(schema.get("required", []))
            lines += ["| field | type | required | description |", "|---|---|---|---|"]
            lines += [f"| `{field}` | {_cell(_schema_name(p))} | {'yes' if field in required else 'no'} | "
                      f"{_cell(p.get('description', ''))} |" for field, p in props.items()]
            lines.append("")
        elif "enum" in schema:
            lines += ["One of " + ", ".join(f"`{v}`" for v in schema["enum"]), ""]
    return "\n".join(lines)


# ---- reason codes ------------------------------------------------------------------------------


def reason_codes() -> list[tuple[str, int]]:
    """(name, value) of app/core/reasons.py, by value: MQI reasons without their MQRC_ prefix,
    the command server's with MQRCCF_."""
    from app.core.reasons import MQRC

    return sorted(((r.name, int(r.value)) for r in MQRC), key=lambda x: x[1])


def reason_codes_markdown() -> str:
    lines = ["| reason | value | hex |", "|---|---|---|"]
    for name, value in reason_codes():
        full = name if name.startswith("MQRCCF_") else f"MQRC_{name}"  # the command server's carry theirs
        lines.append(f"| `{full}` | {value} | `{value:04X}` |")
    return "\n".join(lines)


# ---- settings ----------------------------------------------------------------------------------


def settings() -> list[tuple[str, str, str, str]]:
    """(environment variable, type, default, description) of every field of Settings."""
    from app.settings import Settings

    rows = []
    for name, field in Settings.model_fields.items():
        kind = getattr(field.annotation, "__name__", None) or str(field.annotation).replace("typing.", "")
        rows.append((f"QSG_{name.upper()}", kind, repr(field.default), field.description or ""))
    return rows


def settings_markdown() -> str:
    lines = ["| variable | type | default | meaning |", "|---|---|---|---|"]
    lines += [f"| `{var}` | {_cell(kind)} | `{_cell(default)}` | {_cell(text)} |"
              for var, kind, default, text in settings()]
    return "\n".join(lines)


# ---- metrics -----------------------------------------------------------------------------------

_KINDS = {"Counter": "counter", "Histogram": "histogram", "Gauge": "gauge", "GaugeMetricFamily": "gauge",
          "CounterMetricFamily": "counter"}


def metrics() -> list[tuple[str, str, str]]:
    """(exposed name, kind, help) of every metric app/qmgr/metrics.py declares, read from its source."""
    tree = ast.parse((ROOT / "app" / "qmgr" / "metrics.py").read_text())
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or len(node.args) < 2:
            continue
        name, text = node.args[0], node.args[1]
        func = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        if (func in _KINDS and isinstance(name, ast.Constant) and isinstance(name.value, str)
                and name.value.startswith("qsg_") and isinstance(text, ast.Constant)):
            exposed = name.value + ("_total" if _KINDS[func] == "counter" else "")
            found.append((exposed, _KINDS[func], str(text.value)))
    return sorted(found)


def metrics_markdown() -> str:
    lines = ["| metric | type | what it counts |", "|---|---|---|"]
    lines += [f"| `{name}` | {kind} | {_cell(text)} |" for name, kind, text in metrics()]
    return "\n".join(lines)


# ---- log message ids ---------------------------------------------------------------------------


def _texts(tree: ast.AST) -> list[str]:
    """The text of every string of a module that starts with a message id, as the code writes it
    (an f-string's fields as ``{...}``); docstrings are not messages."""
    docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
    texts = []
    for node in ast.walk(tree):
        if id(node) in docstrings:
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            texts.append(node.value)
        elif isinstance(node, ast.JoinedStr):
            texts.append("".join(v.value if isinstance(v, ast.Constant) else "{" + ast.unparse(v.value) + "}"
                                 for v in node.values if isinstance(v, (ast.Constant, ast.FormattedValue))))
            for v in node.values:  # its parts are walked too: not messages of their own
                docstrings.add(id(v))
    return [t.strip() for t in texts if MESSAGE_ID.match(t.strip())]


def log_messages() -> dict[str, list[tuple[str, str]]]:
    """Each message id app/ writes, with (module, text) of every string that starts with it."""
    found: dict[str, list[tuple[str, str]]] = {}
    for path in sorted((ROOT / "app").rglob("*.py")):
        for text in _texts(ast.parse(path.read_text())):
            mid = MESSAGE_ID.match(text).group(1)  # type: ignore[union-attr]
            found.setdefault(mid, []).append((str(path.relative_to(ROOT)), text.splitlines()[0]))
    return dict(sorted(found.items()))


def log_messages_markdown() -> str:
    lines = ["| id | written by | text (as the code writes it) |", "|---|---|---|"]
    for mid, places in log_messages().items():
        modules = ", ".join(sorted({f"`{m}`" for m, _ in places}))
        texts = sorted({text for _, text in places})
        lines.append(f"| `{mid}` | {modules} | {'<br>'.join(f'`{_cell(t)}`' for t in texts[:3])} |")
    return "\n".join(lines)


# ---- the hook ----------------------------------------------------------------------------------

GENERATORS: dict[str, Callable[[], str]] = {
    "rest-api": rest_api_markdown,
    "reason-codes": reason_codes_markdown,
    "settings": settings_markdown,
    "metrics": metrics_markdown,
    "log-messages": log_messages_markdown,
}

MARKER = re.compile(r"<!-- generated: ([a-z-]+) -->")


def expand(markdown: str) -> str:
    """``markdown`` with every generated marker replaced by its table (an unknown marker fails)."""
    return MARKER.sub(lambda m: GENERATORS[m.group(1)](), markdown)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """MkDocs hook: fill the generated parts of a page."""
    return expand(markdown)
