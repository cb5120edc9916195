"""One front door (issue 34 item 1): every file a user gives is parsed and
validated once, by the core; Python asks the core (schedlab.native) and gets
typed objects back. This test fails when Python code in python/schedlab
reads TOML or JSON, or matches a regular expression, or splits a cpulist
range, anywhere not listed below with the reason it is not a second parser
of a user's input. A listed use that has gone must leave the list too, so
the list only shrinks.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest

from conftest import REPO

PACKAGE = REPO / "python" / "schedlab"

#: (file, kind) -> (how many, why it is not a second parser of user input).
#: Kinds: "toml" (tomllib/tomli, parse_toml), "json" (json.load/loads),
#: "regex" (re.compile/match/fullmatch/search/findall/split/sub), "range"
#: (str.partition("-"): a hand-made cpulist range).
ALLOWED: dict[tuple[str, str], tuple[int, str]] = {
    # The core's own answers.
    ("native.py", "json"): (1, "the core's answers (reports, summaries, trees) cross the binding as JSON"),
    ("_scenario_doc.py", "json"): (1, "the core's catalog, as JSON"),
    ("_scenario_doc.py", "regex"): (1, "the generated-section markers of docs/scenario.md"),
    ("_report_schema.py", "json"): (1, "the core's report schema, as JSON"),
    # What schedlab itself wrote: reports, runner output, journals.
    ("calibrate.py", "json"): (1, "schedlab-runner's calibration output"),
    ("real.py", "json"): (2, "schedlab-runner's report; a report file schedlab wrote (compare)"),
    ("frames.py", "json"): (1, "a report file schedlab wrote (the core's serializer)"),
    ("frames.py", "regex"): (2, "ftrace text lines the core's trace writer wrote"),
    ("qemu/guest.py", "json"): (2, "the runner's JSON report on the guest's console"),
    ("qemu/oracle.py", "json"): (1, "the manifest.json scripts/oracle-setup wrote"),
    ("sweep.py", "json"): (2, "the sweep's own journal lines"),
    ("sweep.py", "regex"): (2, "the sweep's own part file names"),
    ("difftest/campaign.py", "json"): (2, "the campaign's own campaign.json and saved reports"),
    ("validation/runners.py", "json"): (2, "real-side report files schedlab wrote (a kept report, its kernel)"),
    ("validation/runners.py", "regex"): (3, "a real tool's output (perf bench, cyclictest, the suite's expected text)"),
    # A real kernel's trace (the core writes traces but reads none): `schedlab import`.
    ("traceimport/replay.py", "regex"): (4, "kernel-thread names (kworker/3:1) and a group-name sanitizer"),
    ("traceimport/__init__.py", "regex"): (1, "the release a capture names (uname -r)"),
    # Not one of the kinds the core owns.
    ("heap.py", "regex"): (2, "SCHEDLAB_MEMORY_LIMIT (an environment size) and /proc/meminfo"),
    ("plot.py", "regex"): (2, "a file-name sanitizer and a natural sort key for axis labels"),
    ("rtapp.py", "regex"): (2, "export-rtapp --calibration: rt-app's CPUn or ns-per-loop field, an option"),
}

_REGEX_CALLS = {"compile", "match", "fullmatch", "search", "findall", "finditer", "split", "sub", "subn"}


def _uses(path: Path) -> Counter[str]:
    """How many times ``path`` reads TOML or JSON, matches a regex or splits a range."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: Counter[str] = Counter()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names]
            module = node.module if isinstance(node, ast.ImportFrom) else None
            toml_module = module in ("tomllib", "tomli") or (module == "schedlab._compat" and "tomllib" in names)
            if toml_module or any(n.split(".")[0] in ("tomllib", "tomli") for n in names):
                found["toml"] += 1
        elif isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            owner = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else ""
            if owner == "json" and name in ("load", "loads"):
                found["json"] += 1
            elif owner in ("tomllib", "tomli") or name == "parse_toml":
                found["toml"] += 1
            elif owner == "re" and name in _REGEX_CALLS:
                found["regex"] += 1
            elif name == "partition" and node.args and getattr(node.args[0], "value", None) == "-":
                found["range"] += 1
        elif isinstance(node, ast.FunctionDef) and node.name == "parse_toml":
            found["toml"] += 1
    return found


def _all_uses() -> dict[tuple[str, str], int]:
    out: dict[tuple[str, str], int] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        for kind, n in _uses(path).items():
            out[(rel, kind)] = n
    return out


def test_python_parses_no_user_file_the_core_owns() -> None:
    uses = _all_uses()
    extra = {k: n for k, n in uses.items() if n > ALLOWED.get(k, (0, ""))[0]}
    assert not extra, (
        f"{extra}: Python reads TOML/JSON, matches a regex or splits a cpulist range here; ask the core "
        "(schedlab.native: scenario_tree, rtapp_import, parse_cpulist, parse_duration_ns, kernel_version, suite, "
        "tolerance) or, if it is not a user's input, add it to ALLOWED with the reason"
    )


def test_the_exceptions_only_shrink() -> None:
    uses = _all_uses()
    stale = {k: (n, uses.get(k, 0)) for k, (n, _) in ALLOWED.items() if uses.get(k, 0) < n}
    assert not stale, f"{stale}: fewer uses than ALLOWED says (allowed, found); lower or drop the entry"


@pytest.mark.parametrize(
    "source",
    [
        "import tomllib\n",
        "from schedlab._compat import tomllib\n",
        "import json\njson.loads(x)\n",
        "import re\nre.fullmatch(r'[0-9]+ms', x)\n",
        "a, _, b = part.partition('-')\n",
        "doc = parse_toml(text, src)\n",
    ],
)
def test_the_scan_sees_each_kind(source: str, tmp_path: Path) -> None:
    f = tmp_path / "x.py"
    f.write_text(source)
    assert sum(_uses(f).values()) >= 1
