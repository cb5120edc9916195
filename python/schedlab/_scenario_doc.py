"""The generated parts of docs/scenario.md: the tables whose rows are the
core's own lists (``schedlab._native.catalog()``): kernel versions, machine
presets, sched features and sysctls with their defaults per version.

Each sits between ``<!-- generated: NAME -->`` and ``<!-- end: NAME -->``;
``scripts/gen-scenario-tables`` rewrites them and tests/repo/test_docs.py checks
that they are current (and that the hand-written key tables list exactly the
keys the core accepts).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from schedlab._paths import checkout

__all__ = ["DOC", "catalog", "render", "update", "write"]

#: The checkout's scenario reference (a developer tool: a wheel ships no docs).
DOC = (checkout() or Path.cwd()) / "docs" / "scenario.md"


def catalog() -> dict[str, Any]:
    from schedlab import native

    doc = json.loads(native.load().catalog())
    assert isinstance(doc, dict)
    return doc


def _versions(c: dict[str, Any]) -> str:
    return ", ".join(f"`{v}`" for v in c["versions"])


def _presets(c: dict[str, Any]) -> str:
    rows = ["| preset | machine |", "|---|---|"]
    rows += [f"| `{p['name']}` | {p['description']} |" for p in c["presets"]]
    return "\n".join(rows)


def _by_version(c: dict[str, Any], items: list[dict[str, Any]], cell: Callable[[Any], str]) -> list[str]:
    versions = c["versions"]
    head = "| name | " + " | ".join(versions) + " |"
    rule = "|---|" + "---|" * len(versions)
    return [head, rule] + [
        f"| `{it['name']}` | " + " | ".join(cell(it["default"][v]) for v in versions) + " |" for it in items
    ]


#: A cell for a version that lacks the feature or sysctl.
_ABSENT = "\u2013"


def _feature_cell(d: Any) -> str:
    return _ABSENT if d is None else ("on" if d else "off")


def _sysctl_cell(d: Any) -> str:
    return _ABSENT if d is None else str(d)


def _features(c: dict[str, Any]) -> str:
    table = _by_version(c, c["features"], _feature_cell)
    notes = [f"* `{f['name']}`: {f['doc']}" for f in c["features"]]
    return "\n".join([*table, "", *notes])


def _sysctls(c: dict[str, Any]) -> str:
    return "\n".join(_by_version(c, c["sysctls"], _sysctl_cell))


_BLOCKS: dict[str, Callable[[dict[str, Any]], str]] = {
    "versions": _versions,
    "presets": _presets,
    "features": _features,
    "sysctls": _sysctls,
}


def render(name: str, c: dict[str, Any]) -> str:
    return _BLOCKS[name](c)


def _replacer(body: str, sep: str) -> Callable[[re.Match[str]], str]:
    def replace(m: re.Match[str]) -> str:
        return f"{m.group(1)}{sep}{body}{sep}{m.group(3)}"

    return replace


def update(text: str, c: dict[str, Any]) -> str:
    """``text`` with every generated block rewritten from the catalog."""
    for name in _BLOCKS:
        pattern = re.compile(rf"(<!-- generated: {name} -->)(.*?)(<!-- end: {name} -->)", re.S)
        if not pattern.search(text):
            raise ValueError(f"docs/scenario.md has no block {name!r}")
        body = render(name, c)
        sep = " " if name == "versions" else "\n"
        text = pattern.sub(_replacer(body, sep), text)
    return text


def write() -> Path:
    DOC.write_text(update(DOC.read_text(encoding="utf-8"), catalog()), encoding="utf-8")
    return DOC
