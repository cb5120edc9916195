"""Render the report's schema (the Rust types of ``crates/schedlab-core/src/report.rs``,
exported by ``schedlab._native.report_schema()``) as ``docs/report.md`` and as
``python/schedlab/report_types.py``. ``scripts/gen-report-types`` writes both;
``tests/core/test_report_schema.py`` fails when either is stale.

Each documented type is one section of docs/report.md, headed by its name and
the key paths where it appears (``tasks[]`` for the elements of ``tasks``), with
one table row per field: key, type, meaning. A field whose type is a map
(``kernel.features``) says so, and its keys are data, not fields.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from schedlab._paths import checkout

__all__ = ["Schema", "load_schema", "render_markdown", "render_python", "write_all"]

#: The checkout (a developer tool: it regenerates the checkout's docs and types).
REPO = checkout() or Path.cwd()
DOC = REPO / "docs" / "report.md"
TYPES = REPO / "python" / "schedlab" / "report_types.py"
SOURCE = "crates/schedlab-core/src/report.rs"

Schema = dict[str, Any]


def load_schema() -> Schema:
    from schedlab import native

    return dict(json.loads(native.load().report_schema()))


def _ref(node: Schema) -> str | None:
    ref = node.get("$ref")
    return ref.rsplit("/", 1)[-1] if isinstance(ref, str) else None


def _nullable(node: Schema) -> tuple[Schema, bool]:
    """The non-null part of a node and whether null is allowed."""
    if "anyOf" in node:
        parts = [p for p in node["anyOf"] if p.get("type") != "null"]
        if len(parts) == 1 and len(parts) < len(node["anyOf"]):
            return parts[0], True
    t = node.get("type")
    if isinstance(t, list) and "null" in t:
        rest = [x for x in t if x != "null"]
        return {**node, "type": rest[0] if len(rest) == 1 else rest}, True
    return node, False


def _doc_type(node: Schema) -> str:
    """A node's type as the docs print it."""
    node, null = _nullable(node)
    ref = _ref(node)
    if ref:
        s = f"[{ref}](#{ref.lower()})"
    elif "oneOf" in node:
        s = " or ".join(f'`"{o["const"]}"`' if "const" in o else _doc_type(o) for o in node["oneOf"])
    else:
        t = node.get("type")
        if t == "array":
            n = node.get("minItems")
            inner = _doc_type(node.get("items", {}))
            s = f"array of {n} {inner}" if n is not None and n == node.get("maxItems") else f"array of {inner}"
        elif t == "object" and "additionalProperties" in node:
            s = f"map of string to {_doc_type(node['additionalProperties'])}"
        else:
            s = {"integer": "integer", "number": "number", "string": "string", "boolean": "boolean"}.get(str(t), str(t))
    return s + (" or null" if null else "")


def _py_type(node: Schema) -> str:
    node, null = _nullable(node)
    ref = _ref(node)
    if ref:
        s = ref
    elif "oneOf" in node:
        s = " | ".join(f'Literal["{o["const"]}"]' if "const" in o else _py_type(o) for o in node["oneOf"])
    else:
        t = node.get("type")
        if t == "array":
            s = f"list[{_py_type(node.get('items', {}))}]"
        elif t == "object" and "additionalProperties" in node:
            s = f"dict[str, {_py_type(node['additionalProperties'])}]"
        else:
            s = {"integer": "int", "number": "float", "string": "str", "boolean": "bool"}.get(str(t), "Any")
    return f"{s} | None" if null else s


def _children(node: Schema) -> Iterator[tuple[str, str]]:
    """(path suffix, type name) of the documented types a field leads to."""
    node, _ = _nullable(node)
    ref = _ref(node)
    if ref:
        yield "", ref
    elif node.get("type") == "array":
        for suffix, name in _children(node.get("items", {})):
            yield "[]" + suffix, name


def _where(schema: Schema) -> dict[str, list[str]]:
    """Type name -> the key paths where it appears, in schema order."""
    out: dict[str, list[str]] = {"Report": ["(the report)"]}
    defs = schema.get("$defs", {})

    def walk(name: str, props: Schema, prefix: str) -> None:
        for key, node in props.items():
            for suffix, child in _children(node):
                path = f"{prefix}{key}{suffix}"
                out.setdefault(child, []).append(path)
                walk(child, defs.get(child, {}).get("properties", {}), path + ".")

    walk("Report", schema.get("properties", {}), "")
    return out


def _sections(schema: Schema) -> Iterator[tuple[str, Schema]]:
    """The report itself, then every type in the order it is first reached."""
    yield "Report", schema
    defs = schema.get("$defs", {})
    for name in _where(schema):
        if name != "Report" and name in defs and "properties" in defs[name]:
            yield name, defs[name]


def _one_line(text: str) -> str:
    return " ".join(text.split())


INTRO = """\
# The report

Every run writes one report: `schedlab run --json FILE`, `schedlab.run_scenario()`
(a dict), `schedlab-runner` on a real kernel (`schedlab real`, the QEMU oracle).
Simulated and real reports share this one schema, so `reproduce`, `validate` and
`compare` read both the same way. Fields only one side can have are marked
"Simulation:" or "Real kernel:" and "(optional)": they are left out of the
other's JSON, never null; `null` means the run has the field but no value. Units are in the names (`_ns`, `_us`,
`_ms`, `_s`, `_pct`); everything else is a count. Keys are sorted.

Unless a field says otherwise, a per-task or per-CPU figure covers the
measurement window (`measure.start_ns` .. `measure.end_ns`), in simulated time.

This page is generated from the doc comments of `{source}` by
`scripts/gen-report-types` (as is `schedlab.report_types`, the same types as
Python TypedDicts); the tests fail when it is stale. Do not edit it by hand.
"""


def render_markdown(schema: Schema) -> str:
    where = _where(schema)
    out = [INTRO.format(source=SOURCE)]
    for name, node in _sections(schema):
        out.append(f"## {name}\n")
        paths = ", ".join(f"`{p}`" for p in where.get(name, [])) if name != "Report" else "the top level"
        desc = _one_line(node.get("description", ""))
        out.append(f"{desc} At: {paths}.\n" if desc else f"At: {paths}.\n")
        out.append("| key | type | meaning |\n|---|---|---|")
        for key, prop in node.get("properties", {}).items():
            typ = _doc_type(prop) + (" (optional)" if prop.get("x-optional") else "")
            out.append(f"| `{key}` | {typ} | {_one_line(prop.get('description', ''))} |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def render_python(schema: Schema) -> str:
    lines = [
        f'"""The report\'s types as TypedDicts, generated from ``{SOURCE}`` by',
        "``scripts/gen-report-types`` (see docs/report.md); do not edit by hand.",
        "",
        "A key that a report may leave out is not required (``total=False``); a",
        "value typed ``X | None`` may be ``None``. ``Report`` is what ``schedlab.run_scenario``",
        "returns and ``schedlab run --json`` writes.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Literal, TypedDict, Union",
        "",
        "__all__ = [",
    ]
    sections = list(_sections(schema))
    # Referenced types first, so that each class is defined before use.
    ordered = list(reversed(sections))
    defs = schema.get("$defs", {})
    aliases = [name for name, d in defs.items() if "properties" not in d]
    lines += [f'    "{name}",' for name in sorted([n for n, _ in sections] + aliases)] + ["]", ""]
    for name, d in defs.items():
        if "properties" not in d:
            alias = _py_type(d).replace(" | ", ", ")
            lines += ["", f"#: {_one_line(d.get('description', ''))}", f"{name} = Union[{alias}]", ""]
    for name, node in ordered:
        # The keys every report has, then (total=False) those it may leave out.
        props = node.get("properties", {})
        for cls, base, keys in (
            (f"_{name}Keys", "TypedDict", [k for k in props if not props[k].get("x-optional")]),
            (name, f"_{name}Keys, total=False", [k for k in props if props[k].get("x-optional")]),
        ):
            doc = _one_line(node.get("description", name)) if cls == name else f"The keys of every {name}."
            lines += ["", f"class {cls}({base}):", *_docstring(doc), ""]
            for key in keys:
                lines.append(f"    {key}: {_py_type(props[key])}")
                lines += _docstring(_one_line(props[key].get("description", "")))
            if not keys:
                lines.append("    pass")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _docstring(text: str, indent: str = "    ", width: int = 116) -> list[str]:
    """A docstring at `indent`, wrapped to fit the line length (one line when
    it fits ruff's 120 columns, as ruff format would join it)."""
    if len(indent) + len(text) + 6 <= 120:
        return [f'{indent}"""{text}"""']
    body = textwrap.wrap(text, width - len(indent))
    return [f'{indent}"""{body[0]}', *(f"{indent}{line}" for line in body[1:]), f'{indent}"""']


def write_all(schema: Schema | None = None) -> list[Path]:
    """Write docs/report.md and report_types.py; return the files that changed."""
    schema = schema or load_schema()
    changed = []
    for path, text in ((DOC, render_markdown(schema)), (TYPES, render_python(schema))):
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            changed.append(path)
    return changed
