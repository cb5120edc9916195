"""docs/scenario.md against the code's own lists (``_native.catalog()``): the
generated tables are current, and each hand-written key table lists exactly
the keys the core accepts there, so the document cannot drift from the
parser."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from schedlab import _scenario_doc as sd

pytestmark = pytest.mark.native

#: The line that opens each key table's part of the document -> its table.
ANCHORS = {
    "## Top level": "",
    "## `[machine]`": "machine",
    "## `[kernel]`": "kernel",
    "`[kernel.costs]`": "kernel.costs",
    "`[kernel.ktask]`": "kernel.ktask",
    "## `[measure]`": "measure",
    "## `[[task]]`": "task",
    "### Program ops": "ops",
    "## `[rt_migrate_test]`": "rt_migrate_test",
    "`[[machine.disk]]`": "machine.disk",
    "`[[kernel.workqueue]]`": "kernel.workqueue",
    "## `[dbench]`": "dbench",
    "`[kernel.vm]`": "kernel.vm",
    "## `[memory]`": "memory",
    "### `[[channel]]`": "channel",
    "### `[experiment]` keys": "experiment",
    "### `[[variant]]` keys": "variant",
    "### A metric: `[experiment.metrics]`": "experiment.metrics.NAME",
    "### `[[experiment.derive]]` keys": "experiment.derive",
    "### `[[experiment.band]]` keys": "experiment.band",
    "#### `[[experiment.table]]` keys": "experiment.table",
    "#### `[experiment.mmtests]` keys": "experiment.mmtests",
}


def documented_keys() -> dict[str, list[str]]:
    """Table -> the keys in the first column of its first key table."""
    out: dict[str, list[str]] = {}
    current: str | None = None
    in_table = False
    for line in sd.DOC.read_text(encoding="utf-8").splitlines():
        anchor = next((t for a, t in ANCHORS.items() if line.startswith(a)), None)
        if anchor is not None:
            current, in_table = anchor, False
            continue
        if current is None:
            continue
        if line.startswith("| key |") or line.startswith("| op |"):
            in_table = True
            out[current] = []
            continue
        if in_table and line.startswith("|---"):
            continue
        if in_table and line.startswith("| "):
            first = line.split("|")[1]
            if current == "ops":  # `{ wait = "e" }` / `{ signal = "e" }`: two ops
                alternatives = re.findall(r"`([^`]+)`", first)
                found = sorted({m.group(1) for a in alternatives if (m := re.match(r"\{ (\w+) =", a))})
            else:
                found = re.findall(r"`([^`]+)`", first)[:1]
            assert found, line
            out[current] += found
            continue
        if in_table:
            current, in_table = None, False
    return out


def test_generated_tables_are_current() -> None:
    text = sd.DOC.read_text(encoding="utf-8")
    assert text == sd.update(text, sd.catalog()), "run scripts/gen-scenario-tables"


def test_every_key_table_lists_exactly_the_accepted_keys() -> None:
    c = sd.catalog()
    doc = documented_keys()
    expected = dict(c["keys"])
    # The front end's own top-level key (schedlab.rtapp expands it before the core sees the scenario).
    expected[""] = [*expected[""], "rtapp"]
    expected["ops"] = c["ops"]
    assert set(doc) == set(expected)
    for table, keys in expected.items():
        assert sorted(doc[table]) == sorted(keys), table


def test_every_version_preset_feature_and_sysctl_is_documented() -> None:
    text = sd.DOC.read_text(encoding="utf-8")
    c = sd.catalog()
    names = c["versions"] + [p["name"] for p in c["presets"]]
    names += [f["name"] for f in c["features"]] + [s["name"] for s in c["sysctls"]]
    for name in names:
        assert f"`{name}`" in text, name


# ---------------------------------------------------------------------------
# Every page: the commands it names exist, the model pages' scenario keys are
# the core's, its relative links lead somewhere, and the command pages are
# what scripts/gen-command-docs makes of the parser.

REPO = sd.DOC.parents[1]
DOCS = REPO / "docs"
MODELS = DOCS / "models"
#: Pages whose links' anchors are checked too (the generated docs/report.md
#: and the reference notes are held to their files only).
ANCHORED = ("README.md", "CHANGELOG.md", "docs/tutorial.md", "docs/developing.md", "docs/models/", "docs/commands/")
#: The sections of a model page, in ns-3's order.
MODEL_SECTIONS = ["Description", "Scope and limitations", "Usage", "Validation", "Deviations"]


def pages() -> list[Path]:
    """README.md, CHANGELOG.md and every page under docs/."""
    found = [REPO / "README.md", *sorted(DOCS.rglob("*.md"))]
    changelog = REPO / "CHANGELOG.md"
    return found + ([changelog] if changelog.exists() else [])


def rel(p: Path) -> str:
    return p.relative_to(REPO).as_posix()


def fences(text: str) -> Iterator[tuple[str, int, str]]:
    """(language, line number, line) of every line inside a fenced block."""
    lang: str | None = None
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            lang = None if lang is not None else (line[3:].strip().split(" ")[0] or "text")
            continue
        if lang is not None:
            yield lang, n, line


def prose(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of every line outside fenced blocks."""
    inside = False
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            inside = not inside
            continue
        if not inside:
            yield n, line


def named_commands(text: str) -> Iterator[tuple[int, str, bool]]:
    """(line, command line, whole) for each `schedlab WORD ...` the page
    names: `$ schedlab` lines of console blocks and `schedlab` lines of sh
    blocks are whole commands (parsed with every option); an inline code
    span `schedlab WORD ...` names a command (it may hold placeholders)."""
    for lang, n, line in fences(text):
        if lang == "console" and line.startswith("$ schedlab "):
            yield n, line[2:], True
        elif lang == "sh" and line.startswith("schedlab "):
            yield n, line.split(" #", 1)[0].strip(), True
    for n, line in prose(text):
        for span in re.findall(r"`([^`]+)`", line):
            if re.match(r"schedlab [a-z]", span):
                yield n, span, False


def test_command_pages_are_current() -> None:
    """docs/commands/ is what scripts/gen-command-docs makes of the parser
    and docs/commands/_source.md (no native module needed)."""
    r = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gen-command-docs"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stderr


def test_every_named_command_exists() -> None:
    from schedlab.cli import _COMMANDS, build_parser
    from schedlab.errors import UsageError

    bad: list[str] = []
    for page in pages():
        for n, cmd, whole in named_commands(page.read_text(encoding="utf-8")):
            words = shlex.split(cmd) if whole else cmd.split()
            if words[1] not in _COMMANDS:
                bad.append(f"{rel(page)}:{n}: {cmd}: no command {words[1]!r}")
            elif whole:
                try:
                    with contextlib.redirect_stderr(io.StringIO()):  # argparse prints the usage first
                        build_parser(words[1]).parse_args(words[1:])
                except (UsageError, SystemExit) as e:
                    bad.append(f"{rel(page)}:{n}: {cmd}: {e}")
    assert not bad, "\n".join(bad)


def model_tables(text: str) -> Iterator[tuple[int, str, str]]:
    """(line, kind, name) for the first column of every table in a model
    page's Usage section whose header names its kind: key, op, feature or
    sysctl."""
    section = ""
    kind: str | None = None
    for n, line in prose(text):
        if line.startswith("## "):
            section, kind = line[3:].strip(), None
            continue
        if section != "Usage":
            continue
        if not line.startswith("|"):
            kind = None
            continue
        first = line.split("|")[1].strip()
        if kind is None:
            kind = first if first in ("key", "op", "feature", "sysctl") else "other"
            continue
        if kind == "other" or first.startswith("---"):
            continue
        names = re.findall(r"`([^`]+)`", first)
        assert names, f"line {n}: {line}"
        yield n, kind, names[0]


def key_exists(key: str, c: dict[str, Any]) -> bool:
    """A dotted key path is a table's key in the catalog: `kernel.vm.workingset`
    is key `workingset` of table `kernel.vm`, `name` a top-level key."""
    keys = dict(c["keys"])
    keys[""] = [*keys[""], "rtapp"]  # expanded by the front end (schedlab.rtapp)
    table, _, last = key.rpartition(".")
    return table in keys and last in keys[table]


def test_model_pages_have_ns3_sections() -> None:
    found = sorted(MODELS.glob("*.md"))
    assert found, "no model pages"
    for page in found:
        heads = [line[3:].strip() for _, line in prose(page.read_text(encoding="utf-8")) if line.startswith("## ")]
        assert heads == MODEL_SECTIONS, f"{rel(page)}: sections {heads}"


def test_model_usage_names_exist() -> None:
    """Every key, op, feature and sysctl a model page's Usage names is one
    the core accepts (_native.catalog())."""
    c = sd.catalog()
    known = {
        "op": set(c["ops"]),
        "feature": {f["name"] for f in c["features"]},
        "sysctl": {s["name"] for s in c["sysctls"]},
    }
    bad = []
    for page in sorted(MODELS.glob("*.md")):
        for n, kind, name in model_tables(page.read_text(encoding="utf-8")):
            ok = key_exists(name, c) if kind == "key" else name in known[kind]
            if not ok:
                bad.append(f"{rel(page)}:{n}: {kind} {name!r} is not in the catalog")
    assert not bad, "\n".join(bad)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but hyphens
    dropped, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for _, line in prose(page.read_text(encoding="utf-8")):
        m = re.match(r"#{1,6} (.+)", line)
        if not m:
            continue
        base = slug(m.group(1))
        k = seen.get(base, 0)
        seen[base] = k + 1
        out.add(base if k == 0 else f"{base}-{k}")
    return out


def test_relative_links_resolve() -> None:
    bad = []
    for page in pages():
        check_anchor = rel(page).startswith(ANCHORED)
        for n, line in prose(page.read_text(encoding="utf-8")):
            for target in re.findall(r"\]\(([^)\s]+)\)", re.sub(r"`[^`]*`", "", line)):
                if re.match(r"[a-z]+:", target):
                    continue
                path, _, anchor = target.partition("#")
                dest = (page.parent / path).resolve() if path else page
                if not dest.exists():
                    bad.append(f"{rel(page)}:{n}: {target}: no such file")
                elif anchor and check_anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                    bad.append(f"{rel(page)}:{n}: {target}: no such heading")
    assert not bad, "\n".join(bad)


#: Rust files the pages name as ones a developer would create.
NEW_FILE_EXAMPLES = {"sched/deadline.rs"}
RUST_FILE = re.compile(r"(?<![\w./-])((?:[a-z_0-9]+/)*[a-z_0-9]+\.rs)\b")


def test_every_named_source_file_exists() -> None:
    """A page that names a Rust file (`sched/core.rs`, `crates/.../lib.rs`)
    names one that is there: the rooms move, and their pages move with them."""
    src = REPO / "crates" / "schedlab-core" / "src"
    bad = []
    for page in pages():
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            for m in RUST_FILE.finditer(line):
                name = m.group(1)
                if name in NEW_FILE_EXAMPLES:
                    continue
                here = [REPO / name, src / name, *(REPO / "crates").glob(f"*/src/{name}")]
                if "/" not in name:
                    here.extend(src.rglob(name))
                if not any(p.exists() for p in here):
                    bad.append(f"{rel(page)}:{n}: {name}")
    assert bad == []
