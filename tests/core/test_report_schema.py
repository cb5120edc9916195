"""The report's one schema: docs/report.md and schedlab.report_types are
generated from the Rust types (crates/schedlab-core/src/report.rs) and must be
current, and every key of real reports, simulated and measured, must be
documented in docs/report.md at the path where it appears."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import schedlab
from schedlab import _report_schema as rs

pytestmark = pytest.mark.native

REPO = Path(__file__).resolve().parents[2]


def test_generated_files_are_current() -> None:
    schema = rs.load_schema()
    assert rs.DOC.read_text() == rs.render_markdown(schema), "run scripts/gen-report-types"
    assert rs.TYPES.read_text() == rs.render_python(schema), "run scripts/gen-report-types"


def documented() -> dict[str, dict[str, str]]:
    """Key path (`tasks[]`, `(the report)` for the top) -> {key: doc type}."""
    out: dict[str, dict[str, str]] = {}
    section: dict[str, str] = {}
    for line in rs.DOC.read_text().splitlines():
        if line.startswith("## "):
            section = {}
        elif line.startswith("At: ") or " At: " in line:
            at = line.split("At: ", 1)[1].rstrip(".")
            paths = ["(the report)"] if at == "the top level" else re.findall(r"`([^`]+)`", at)
            for p in paths:
                out[p] = section
        elif line.startswith("| `"):
            key, typ = re.match(r"\| `([^`]+)` \| ([^|]+) \|", line).groups()  # type: ignore[union-attr]
            section[key] = typ.strip()
    return out


def undocumented(report: Any, docs: dict[str, dict[str, str]]) -> list[str]:
    missing: list[str] = []

    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict):
            rows = docs.get(path or "(the report)")
            if rows is None:
                missing.append(f"{path}: no section")
                return
            for k, v in node.items():
                if k not in rows:
                    missing.append(f"{path}.{k}" if path else k)
                elif not rows[k].startswith("map of"):
                    walk(v, f"{path}.{k}" if path else k)
        elif isinstance(node, list):
            for x in node:
                walk(x, f"{path}[]")

    walk(report, "")
    return missing


SIM_CASES = [
    ("n-hogs-n-cpus", {}),
    ("ktask-nice", {"measure.duration": "2s"}),
    ("rt-migrate", {"rt_migrate_test.runs": 2}),
    ("sched-idle", {"kernel.version": "2.6.35", "measure.warmup": "100ms", "measure.duration": "1s"}),
    ("mixed-nice-smt", {"kernel.version": "6.6"}),
]


@pytest.mark.parametrize(("name", "overrides"), SIM_CASES, ids=[c[0] for c in SIM_CASES])
def test_every_simulated_key_is_documented(name: str, overrides: dict[str, Any]) -> None:
    report = schedlab.run_scenario(name, overrides=overrides)
    assert undocumented(report, documented()) == []


def test_every_real_key_is_documented() -> None:
    # host-sets.json: what a --local run's simulator took, not a report.
    files = sorted(f for f in (REPO / "validation" / "real").rglob("*.json") if f.name != "host-sets.json")
    assert files, "validation/real holds the guests' reports"
    docs = documented()
    for f in files:
        assert undocumented(json.loads(f.read_text()), docs) == [], f


def test_a_missing_key_is_caught() -> None:
    report: dict[str, Any] = json.loads(json.dumps(schedlab.run_scenario("n-hogs-n-cpus")))
    report["tasks"][0]["mystery_ns"] = 1
    report["sim"]["other"] = 2
    assert sorted(undocumented(report, documented())) == ["sim.other", "tasks[].mystery_ns"]
