"""schedlab abtest: the statistics against known values, the population
from one seed, and the done-when run in small: KTHREAD_STACKING off against
on changes the scenarios with IO completions and nothing else."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from schedlab import native
from schedlab.abtest import benjamini_hochberg, generate, welch

pytestmark = pytest.mark.native


def test_welch_and_benjamini_hochberg_against_known_values() -> None:
    # References: the t density integrated numerically (midpoint rule, 4e5 steps).
    t, p = welch([1, 2, 3, 4, 5], [2, 3, 4, 5, 6])
    assert t == pytest.approx(1.0) and p == pytest.approx(0.3465935, abs=1e-6)  # df 8
    t, p = welch([10.1, 9.8, 10.3, 10.0], [12.2, 11.7, 12.5, 12.1, 11.9])
    assert t == pytest.approx(11.8729016) and p == pytest.approx(7.591264e-06, rel=1e-5)  # Welch's df 6.905
    assert welch([3, 3, 3], [3, 3, 3]) == (0.0, 1.0)
    assert welch([3, 3, 3], [4, 4, 4])[1] == 0.0  # a deterministic difference
    assert benjamini_hochberg([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.02, 0.04, 0.04, 0.02])


def test_the_population_comes_from_its_seed() -> None:
    a, b = generate(7, 12), generate(7, 12)
    assert [c.text for c in a] == [c.text for c in b]
    assert [c.text for c in generate(8, 12)] != [c.text for c in a]
    for c in a:
        native.check(c.text, c.name, [])
        assert c.name.split("-", 1)[1] == "+".join(c.kinds)


def test_kthread_stacking_changes_the_io_scenarios_and_nothing_else(tmp_path: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "schedlab", "abtest", "--a", 'kernel.features=["NO_KTHREAD_STACKING"]',
         "--b", 'kernel.features=["KTHREAD_STACKING"]', "--scenarios", "40", "--repeats", "3",
         "--out", str(tmp_path / "ab"), "--html", str(tmp_path / "html")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "ab" / "abtest.json").read_text())
    throughput = [x for x in doc["changes"] if x["metric"].endswith(".ops_per_s") or x["metric"] == "hogs.cpu_ms_per_s"]
    assert throughput and all("io" in x["kinds"] for x in throughput), throughput
    assert any(x["rel_change"] > 0 for x in throughput)
    # Without IO completions there is no kworker to stack on: nothing at all changes.
    assert all("io" in x["kinds"] for x in doc["changes"])
    hogs = doc["by_kind"].get("hogs alone")
    assert hogs is None or hogs["unchanged"] == hogs["scenarios"]
    assert "rerun B" in r.stdout and "schedlab run" in r.stdout
    assert (tmp_path / "html" / "index.html").read_text().count("data:image/svg+xml") == 1


def test_a_given_scenario_is_the_population(tmp_path: Path) -> None:
    """--scenario FILE: the change judged on the user's own scenario (a
    trace's model-mode import: its seeds draw its bursts and sleeps anew)."""
    from schedlab.traceimport import import_trace

    data = Path(__file__).resolve().parent / "data" / "hackbench-6.18-host.txt.gz"
    scen = tmp_path / "hb.toml"
    scen.write_text(import_trace(data, kernel="6.18", mode="model").text)
    cmd = [sys.executable, "-m", "schedlab", "abtest", "--a", 'kernel.preempt="lazy"', "--b", 'kernel.preempt="full"']
    r = subprocess.run(
        [*cmd, "--scenario", str(scen), "--repeats", "3", "--out", str(tmp_path / "ab")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "ab" / "abtest.json").read_text())
    assert doc["scenarios"] == 1 and list(doc["by_kind"]) == ["given alone"]
    assert {t["scenario"] for t in doc["tests"]} == {"hb"}
    assert any(t["metric"] == "switches_per_s" for t in doc["tests"])
    r = subprocess.run(
        [*cmd, "--scenario", str(tmp_path / "none.toml"), "--out", str(tmp_path / "ab2")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert r.returncode == 2 and "[SL001]" in r.stderr and "none.toml" in r.stderr
