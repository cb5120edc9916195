"""docs/scenario.md against the code's own lists (``_native.catalog()``): the
generated tables are current, and each hand-written key table lists exactly
the keys the core accepts there, so the document cannot drift from the
parser."""

from __future__ import annotations

import re

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
