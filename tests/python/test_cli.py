"""The CLI and the Python API.

The first part runs ``schedlab.cli.main`` in-process against a stand-in for
``schedlab._native`` (so the plumbing is tested without simulating; the
stand-in lends the real extension's override grammar); the second part runs
the real extension. Both need the extension built.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_experiment import EXPERIMENT, ToyKernel
from test_report import REPORT

import schedlab
from conftest import TINY, RunCli
from schedlab import cli
from schedlab.errors import InternalError, ScenarioError

NATIVE = pytest.mark.native
pytestmark = NATIVE

_REAL_NATIVE = pytest.importorskip("schedlab._native")


class FakeNative:
    """Same signatures as schedlab._native; returns canned reports."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.toy = ToyKernel()

    def run(
        self,
        text: str,
        source: str,
        seed: int,
        overrides: list[tuple[str, str]],
        check: bool,
        trace: str | None = None,
        perfetto: str | None = None,
        strict: bool = False,
        heap_budget: int | None = None,
        progress: Any = None,
        rtapp: bool = False,
    ) -> dict[str, Any]:
        self.calls.append(("run", (source, seed, list(overrides), check)))
        if "PANIC" in text:
            raise BaseException("thread '<unnamed>' panicked")  # what an uncaught PanicException looks like
        if "BADNICE" in text:
            raise ScenarioError("SL102", f"{source}: task[0].nice: 25 is out of range; accepted: -20..19")
        report: dict[str, Any] = json.loads(json.dumps(REPORT))
        report.update({"source": source, "seed": seed})
        if "[experiment]" in text:
            report.update(self.toy(seed, overrides))
        return report

    def check(self, text: str, source: str, overrides: list[tuple[str, str]], rtapp: bool = False) -> str:
        self.calls.append(("check", (source, list(overrides))))
        return json.dumps(
            {"name": "tiny", "machine": {"name": "4cpu", "nr_cpus": 4}, "kernel": {"version": "6.1"}, "tasks": 1}
        )

    def version(self) -> str:
        return "0.1.0-fake"

    def __getattr__(self, name: str) -> Any:
        # The override grammar is the core's own (scenario/overrides.rs):
        # the fake hands it to the real extension, and the progress handle.
        real = ("parse_set", "split_key", "format_key", "normalize_key", "value_literal", "toml_literal", "Progress",
                "scenario_tree", "scenario_toml", "rtapp_loads", "rtapp_import", "parse_cpulist", "parse_duration",
                "kernel_version", "experiment", "heading", "metrics")  # fmt: skip
        if name in real:
            return getattr(_REAL_NATIVE, name)
        raise AttributeError(name)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeNative:
    f = FakeNative()
    monkeypatch.setitem(sys.modules, "schedlab._native", f)
    monkeypatch.setattr(schedlab, "_native", f, raising=False)
    return f


def main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = cli.main(list(args))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_run_prints_the_report(fake: FakeNative, write_scenario: Callable[..., Path], capsys: Any) -> None:
    path = write_scenario(TINY)
    rc, out, err = main(
        capsys, "run", str(path), "--seed", "7", "--set", "task.hog.nice=5", "--set", "measure.duration=1s"
    )
    assert (rc, err) == (0, "")
    assert "Linux 6.1 (schedlab) \t2cpu \t(2 CPU)" in out
    assert "Average:     all   73.76" in out
    assert fake.calls == [("run", (str(path), 7, [("task.hog.nice", "5"), ("measure.duration", '"1s"')], False))]


def test_run_json_and_quiet(fake: FakeNative, write_scenario: Callable[..., Path], tmp_path: Path, capsys: Any) -> None:
    path = write_scenario(TINY)
    dest = tmp_path / "out.json"
    rc, out, _ = main(capsys, "run", str(path), "--json", str(dest), "--quiet", "--check")
    assert rc == 0 and out == ""
    assert json.loads(dest.read_text())["scenario"] == "tiny"
    assert fake.calls[0][1][3] is True  # --check reaches the core
    rc, out, _ = main(capsys, "run", str(path), "--json", "-")
    assert rc == 0 and json.loads(out)["seed"] == 1


def test_run_samples_and_schedstat(fake: FakeNative, write_scenario: Callable[..., Path], capsys: Any) -> None:
    rc, out, _ = main(capsys, "run", str(write_scenario(TINY)), "--samples", "--schedstat")
    assert rc == 0 and "00:00:02     all" in out and "Schedstat (per CPU)" in out


def test_core_errors_exit_2(fake: FakeNative, write_scenario: Callable[..., Path], capsys: Any) -> None:
    rc, out, err = main(capsys, "run", str(write_scenario(TINY + "# BADNICE\n", "bad.toml")))
    assert rc == 2 and out == ""
    assert err.endswith("bad.toml: task[0].nice: 25 is out of range; accepted: -20..19\n")
    assert err.startswith("schedlab: error: [SL102] ")


def test_a_panic_is_an_internal_error(fake: FakeNative, write_scenario: Callable[..., Path], capsys: Any) -> None:
    rc, _, err = main(capsys, "run", str(write_scenario(TINY + "# PANIC\n")))
    assert rc == 2
    assert err.startswith("schedlab: error: [SL900] internal error (please report): native call failed")


def test_check(fake: FakeNative, write_scenario: Callable[..., Path], capsys: Any) -> None:
    path = write_scenario(TINY)
    rc, out, _ = main(capsys, "check", str(path))
    assert rc == 0
    assert out == f"{path}: ok: scenario tiny: machine 4cpu (4 CPUs), kernel 6.1, 1 task group(s)\n"


def test_check_experiment_checks_every_variant(
    fake: FakeNative, write_scenario: Callable[..., Path], capsys: Any
) -> None:
    path = write_scenario(EXPERIMENT, "toy.toml")
    rc, out, _ = main(capsys, "check", str(path))
    assert rc == 0
    assert (
        out.splitlines()[-1]
        == f"{path}: ok: experiment toy-nice: 3 variant(s), 5 metric(s), 2 derived value(s), 3 band(s)"
    )
    checked = [ovr for kind, (_, ovr) in fake.calls if kind == "check"]
    assert [] in checked
    assert [("kernel.ktask.helper_nice", "19")] in checked
    assert [("measure.interval", '"2s"'), ("kernel.ktask.helper_nice", "19")] in checked  # quick mode too
    assert [("task.stressng.program.0.run", '"1000ms"')] in checked  # derive keys exist


def test_reproduce(fake: FakeNative, write_scenario: Callable[..., Path], tmp_path: Path, capsys: Any) -> None:
    path = write_scenario(EXPERIMENT, "toy.toml")
    dest = tmp_path / "exp.json"
    rc, out, err = main(capsys, "reproduce", str(path), "--json", str(dest), "--jobs", "2")
    assert rc == 0, out + err
    doc = json.loads(dest.read_text())
    assert doc["experiment"] == "toy-nice" and doc["schedlab"] == schedlab.__version__
    assert [r["variant"] for r in doc["results"]] == ["alone", "max_nice", "normal_prio"]
    assert all({"variant", "params", "metrics", "repeats"} <= set(r) for r in doc["results"])
    assert doc["derived"]["task.stressng.program.0.run"]["value"] == "43050ms"
    assert [b["ok"] for b in doc["bands"]] == [True, True, True]
    assert "derive task.stressng.program.0.run" in err  # progress on stderr
    lines = out.splitlines()
    assert lines[0] == "toy-nice: a toy experiment"
    assert any(line.startswith("Amean     stressng_s") for line in lines)
    assert any(line.startswith("Published ktask_s") for line in lines)
    assert lines[-1] == "3 of 3 bands ok"


def test_reproduce_quick_quiet_and_out_of_band(
    fake: FakeNative, write_scenario: Callable[..., Path], capsys: Any
) -> None:
    text = EXPERIMENT.replace("low = 60.0\nhigh = 90.0", "low = 10.0\nhigh = 20.0")
    path = write_scenario(text, "toy.toml")
    rc, out, err = main(capsys, "reproduce", str(path), "--quick", "--quiet", "--json", "-")
    assert rc == 1  # a band is OUT
    assert err == ""
    doc = json.loads(out)
    assert doc["mode"] == "quick" and doc["seeds"] == [1]
    assert [b["ok"] for b in doc["bands"]] == [True, False, True]


def test_reproduce_set_reaches_every_run(fake: FakeNative, write_scenario: Callable[..., Path], capsys: Any) -> None:
    path = write_scenario(EXPERIMENT, "toy.toml")
    rc, _, _ = main(capsys, "reproduce", str(path), "--quick", "--quiet", "--set", "kernel.hz=1000")
    assert rc == 0
    runs = [ovr for kind, (_, _, ovr, _) in fake.calls if kind == "run"]
    assert runs and all(ovr[0] == ("kernel.hz", "1000") for ovr in runs)


def test_version(fake: FakeNative, capsys: Any) -> None:
    rc, out, _ = main(capsys, "version")
    assert rc == 0 and out == f"schedlab {schedlab.__version__}\nschedlab._native 0.1.0-fake\n"


def test_api_with_fake(fake: FakeNative, write_scenario: Callable[..., Path]) -> None:
    path = write_scenario(TINY)
    report = schedlab.run_scenario(path, seed=3, overrides={"task.0.nice": 19, "task.0.cpus": "0-1"})
    assert report["seed"] == 3
    assert fake.calls[-1] == ("run", (str(path), 3, [("task.0.nice", "19"), ("task.0.cpus", '"0-1"')], False))
    schedlab.run_scenario(text=TINY, overrides=[("kernel.sysctl.kernel.sched_migration_cost_ns", 0)])
    assert fake.calls[-1][1][0] == "<string>"
    assert fake.calls[-1][1][2] == [('kernel.sysctl."kernel.sched_migration_cost_ns"', "0")]
    assert schedlab.check_scenario(str(path))["name"] == "tiny"


def test_missing_native_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, write_scenario: Callable[..., Path], capsys: Any
) -> None:
    monkeypatch.setitem(sys.modules, "schedlab._native", None)  # makes the import fail
    monkeypatch.delattr(schedlab, "_native", raising=False)
    with pytest.raises(InternalError, match="make build"):
        schedlab.run_scenario(text=TINY)
    rc, _, err = main(capsys, "run", str(write_scenario(TINY)))
    assert rc == 2 and "[SL900]" in err and "make build" in err


def test_help_without_native(run_cli: RunCli) -> None:
    out = run_cli("--help")
    assert out.returncode == 0
    for command in ("run", "check", "list", "reproduce"):
        assert command in out.stdout
    out = run_cli("run", "--help")
    assert out.returncode == 0 and "--set KEY=VALUE" in out.stdout
    assert run_cli("--version").stdout == f"schedlab {schedlab.__version__}\n"


# ---------------------------------------------------------------- the real core


@NATIVE
def test_native_run(write_scenario: Callable[..., Path], tmp_path: Path, run_cli: RunCli) -> None:
    path = write_scenario(TINY, "tiny.toml")
    dest = tmp_path / "report.json"
    out = run_cli("run", str(path), "--json", str(dest))
    assert out.returncode == 0, out.stderr
    assert "Linux 6.1 (schedlab)" in out.stdout and "Average:" in out.stdout
    report = json.loads(dest.read_text())
    for key in (
        "schedlab",
        "scenario",
        "source",
        "seed",
        "kernel",
        "machine",
        "sim",
        "measure",
        "cpus",
        "mpstat",
        "tasks",
        "groups",
    ):
        assert key in report, key
    assert report["scenario"] == "tiny" and report["seed"] == 1 and report["source"] == str(path)
    assert report["machine"]["nr_cpus"] == 4 and report["kernel"]["version"] == "6.1"
    assert [t["group"] for t in report["tasks"]] == ["hog", "hog"]
    assert report["measure"]["end_ns"] - report["measure"]["start_ns"] == 100_000_000
    avg = {str(r["cpu"]): r for r in report["mpstat"]["average"]}
    assert set(avg) == {"all", "0", "1", "2", "3"}
    for row in avg.values():
        total = sum(row[k] for k in ("usr", "nice", "sys", "iowait", "irq", "soft", "steal", "idle"))
        assert total == pytest.approx(100.0, abs=0.05)


@NATIVE
def test_native_is_deterministic(write_scenario: Callable[..., Path]) -> None:
    path = write_scenario(TINY)
    loop = {"loop": {"count": 20, "body": [{"run": {"exp": "1ms"}}, {"sleep": {"uniform": ["1ms", "2ms"]}}]}}
    overrides = {"task.hog.count": 6, "task.hog.program": [loop]}
    a = schedlab.run_scenario(path, seed=5, overrides=overrides)
    b = schedlab.run_scenario(path, seed=5, overrides=overrides)
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


@NATIVE
def test_native_overrides(write_scenario: Callable[..., Path]) -> None:
    path = write_scenario(TINY)
    report = schedlab.run_scenario(
        path,
        overrides=[
            ("task.hog.count", 3),
            ("task.0.nice", 5),
            ("measure.duration", "50ms"),
            ("kernel.sysctl.kernel.sched_migration_cost_ns", 0),
        ],
    )
    assert len(report["tasks"]) == 3 and {t["nice"] for t in report["tasks"]} == {5}
    assert report["measure"]["end_ns"] - report["measure"]["start_ns"] == 50_000_000
    assert report["kernel"]["sysctl"]["kernel.sched_migration_cost_ns"] == 0
    summary = schedlab.check_scenario(str(path))
    assert summary["name"] == "tiny" and summary["tasks"] == 2 and summary["machine"]["nr_cpus"] == 4


TINY_EXPERIMENT = """\
name = "crowd"
[machine]
preset = "4cpu"
[kernel]
version = "6.1"
[[task]]
name = "hog"
count = 4
program = [ { run = "50ms" } ]
[measure]
interval = "10ms"

[experiment]
name = "crowd"
title = "twice the hogs, twice the time"
repeat = 2
quick_repeat = 1
[experiment.metrics]
hog_s = { group = "hog", field = "elapsed_s" }
idle = { mpstat = "average", cpu = "all", field = "idle" }
[[experiment.derive]]
key = "task.hog.program.0.run"
variant = "alone"
metric = "hog_s"
target = 0.05
low = "1ms"
high = "1s"
why = "50 ms of work per hog when each has a CPU"
[[experiment.band]]
name = "slowdown with 8 hogs on 4 CPUs (%)"
num = "crowded.hog_s"
den = "alone.hog_s"
low = 60.0
high = 140.0

[[variant]]
name = "alone"
published = { hog_s = 0.05 }
[[variant]]
name = "crowded"
set = { "task.hog.count" = 8 }
published = { hog_s = 0.10 }
"""


@NATIVE
def test_native_reproduce(write_scenario: Callable[..., Path], tmp_path: Path, run_cli: RunCli) -> None:
    path = write_scenario(TINY_EXPERIMENT, "crowd.toml")
    assert run_cli("check", str(path)).returncode == 0
    dest = tmp_path / "crowd.json"
    out = run_cli("reproduce", str(path), "--json", str(dest))
    assert out.returncode == 0, out.stdout + out.stderr
    doc = json.loads(dest.read_text())
    by = {r["variant"]: r for r in doc["results"]}
    assert by["alone"]["metrics"]["hog_s"] == pytest.approx(0.05, rel=0.02)
    # 8 x 50 ms on 4 CPUs cannot beat 100 ms; simultaneous forks stack on the
    # parent's CPU until the balancer spreads them, which costs a little.
    assert 0.10 <= by["crowded"]["metrics"]["hog_s"] <= 0.15
    assert len(by["crowded"]["repeats"]) == 2
    assert doc["bands"][0]["ok"] is True
    assert "1 of 1 bands ok" in out.stdout


def test_the_cli_imports_only_what_a_run_needs() -> None:
    """`schedlab run` of a small scenario pays for argparse and the native
    module, not for the oracle, the validation suite, experiments or the
    typed report (issue 16: start-up 0.125 s -> 0.045 s)."""
    code = (
        "import sys, schedlab.cli\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('schedlab') or m in "
        "('dataclasses', 'tomllib', 'concurrent.futures', 'subprocess'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    heavy = {
        "schedlab.qemu",
        "schedlab.real",
        "schedlab.validation",
        "schedlab.experiment",
        "schedlab.report",
        "schedlab.report_types",
        "dataclasses",
        "tomllib",
        "concurrent.futures",
        "subprocess",
    }
    assert not heavy & set(out), sorted(heavy & set(out))
