"""Hostile inputs (issue 14's table, one test or more per row): each gives a
clear error, a correct number or a bounded run. Errors are checked as a user
meets them: exit status 2, one ``schedlab: error: [CODE]`` line naming the
file and key path, no traceback, no panic; through the Python API, the
``SchedlabError`` subclass."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import schedlab
from conftest import TINY, RunCli, cli_env
from schedlab.errors import InvariantError, ScenarioError, UsageError

pytestmark = pytest.mark.native

HEAD = """\
name = "limits"
[machine]
preset = "{preset}"
[kernel]
version = "6.1"
"""


def scenario(tasks: str, measure: str = "", preset: str = "4cpu") -> str:
    return HEAD.format(preset=preset) + (f"[measure]\n{measure}\n" if measure else "") + tasks


HOG = '[[task]]\nname = "hog"\nprogram = [ { loop = { body = [ { run = "10ms" } ] } } ]\n'


def error_line(out: subprocess.CompletedProcess[str], code: str, *must: str) -> str:
    everything = out.stdout + out.stderr
    assert out.returncode == 2, everything
    assert "Traceback" not in everything and "panicked" not in everything
    lines = [x for x in out.stderr.splitlines() if x.startswith("schedlab: error: ")]
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith(f"schedlab: error: [{code}]"), lines[0]
    for piece in must:
        assert piece in lines[0], (piece, lines[0])
    return lines[0]


def cli_report(run_cli: RunCli, path: Path, tmp_path: Path) -> tuple[dict[str, Any], str]:
    """`schedlab run PATH --json`: it succeeds; its report and its stderr."""
    dest = tmp_path / "r.json"
    out = run_cli("run", str(path), "-q", "--json", str(dest))
    assert out.returncode == 0, out.stderr
    report = json.loads(dest.read_text())
    assert isinstance(report, dict)
    return report, out.stderr


# -------------------------------------------------- row 1: an endless hog and no measure.duration


def test_an_endless_run_stops_at_the_limit_with_a_warning(
    write_scenario: Callable[..., Path], run_cli: RunCli, tmp_path: Path
) -> None:
    path = write_scenario(scenario(HOG, 'limit = "2s"'), "endless.toml")
    report, stderr = cli_report(run_cli, path, tmp_path)
    assert report["sim"]["reason"] == "limit reached" and report["sim"]["end_ns"] == 2_000_000_000
    assert any("measure.limit (2s)" in w for w in report["warnings"])
    assert "schedlab: warning:" in stderr and "measure.limit" in stderr
    strict = run_cli("run", str(path), "-q", "--strict")
    error_line(strict, "SL200", "measure.limit", "--strict")


def test_the_default_limit_is_one_hour() -> None:
    report = schedlab.run_scenario(text=scenario(HOG))
    assert report["sim"]["end_ns"] == 3600 * 10**9 and report["sim"]["reason"] == "limit reached"


#: One simulated hour on 64 CPUs: sleepers and periodic timers on every
#: node, so each CPU's tick, idle entries, wakeups and timer delays run
#: all hour long.
LONG64 = scenario(
    """\
[[task]]
name = "sleeper"
count = 16
program = [ { loop = { body = [ { run = "1ms" }, { sleep = "20ms" } ] } } ]
[[task]]
name = "timer"
count = 4
program = [ { loop = { body = [ { timer = "10ms" }, { run = "100us" } ] } } ]
""",
    preset="smp64",
)

#: The child's peak RSS is its VmHWM: ru_maxrss would carry the pytest
#: parent's peak over fork and exec.
HWM = """
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
"""

PEAK_RSS = (
    "import sys, schedlab\n"
    + HWM
    + """
over = dict(a.split("=", 1) for a in sys.argv[2:])
schedlab.run_scenario(text=open(sys.argv[1]).read(), overrides=over)
print(hwm())
"""
)


def peak_rss_kib(path: Path, *overrides: str) -> int:
    out = subprocess.run(
        [sys.executable, "-c", PEAK_RSS, str(path), *overrides],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=600,
        check=True,
    )
    return int(out.stdout.split()[-1])


def test_memory_does_not_grow_with_simulated_time(write_scenario: Callable[..., Path]) -> None:
    """A 1-hour 64-CPU run (13 M events, 1.4 M timer wakeups) peaks where a
    1-minute run does: mpstat keeps sums, not samples, and the wakeup delays
    a histogram, not one word per wakeup."""
    path = write_scenario(LONG64, "long64.toml")
    one_minute = peak_rss_kib(path, "measure.duration=1min")
    one_hour = peak_rss_kib(path)  # no duration: the 1 h default limit
    assert one_hour < 64 * 1024, one_hour
    assert one_hour - one_minute < 8 * 1024, (one_minute, one_hour)


def test_a_trace_streams_to_disk(write_scenario: Callable[..., Path], tmp_path: Path) -> None:
    path = write_scenario(LONG64, "long64.toml")
    trace = tmp_path / "t.txt"
    short = peak_rss_kib(path, "measure.duration=10s")
    traced = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, schedlab\n"
            + HWM
            + "schedlab.run_scenario(sys.argv[1], overrides={'measure.duration': '2min'}, trace=sys.argv[2])\n"
            "print(hwm())",
            str(path),
            str(trace),
        ],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=600,
        check=True,
    )
    size = trace.stat().st_size
    assert size > 40 * 2**20, size  # the trace is big ...
    assert int(traced.stdout.split()[-1]) - short < 8 * 1024  # ... and not in memory


# -------------------------------------------------- rows 2, 3: a 1 ns interval, a 100-year run


@pytest.mark.parametrize(
    ("measure", "key", "accepted"),
    [
        ('duration = "1s"\ninterval = "1ns"', "measure.interval", "at least one tick (4ms)"),
        ('duration = "876000h"', "measure.duration", "24h"),
        ('warmup = "20h"\nduration = "5h"', "measure.duration", "24h"),
        ('limit = "48h"', "measure.limit", "24h"),
        ('duration = "99999999999999999999999h"', "measure.duration", ""),
        ('duration = "1e300s"', "measure.duration", ""),
        ('duration = "1s"\nwarmup = "2h"\nlimit = "1h"', "measure.limit", "longer than the limit (1h)"),
    ],
)
def test_runs_that_cannot_fit_are_refused_before_they_start(
    measure: str, key: str, accepted: str, write_scenario: Callable[..., Path], run_cli: RunCli
) -> None:
    path = write_scenario(scenario(HOG, measure), "long.toml")
    error_line(run_cli("run", str(path)), "SL102", "long.toml", key, accepted)


def test_the_python_interpreter_survives_a_huge_run() -> None:
    with pytest.raises(ScenarioError, match=r"measure\.duration"):
        schedlab.run_scenario(text=scenario(HOG, 'duration = "876000h"'))
    with pytest.raises(ScenarioError, match=r"measure\.interval"):
        schedlab.run_scenario(text=scenario(HOG, 'duration = "1s"\ninterval = "1ns"'))


# -------------------------------------------------- the heap budget: SL210, never an abort

FORK_LOOP = """
name = "fork-loop"
[machine]
preset = "4cpu"
[measure]
duration = "600s"
[[task]]
name = "parent"
program = [{ loop = { body = [{ fork = "child" }, { sleep = "10us" }] } }]
[[task]]
name = "child"
count = 0
program = [{ run = "1us" }, { exit = true }]
"""


def test_a_run_that_outgrows_its_heap_budget_stops_with_sl210(monkeypatch: pytest.MonkeyPatch) -> None:
    """A parent forking 100,000 tasks a second: the task table grows until the
    heap budget stops the run with ResourceError, and the interpreter goes on."""
    monkeypatch.setenv("SCHEDLAB_MEMORY_LIMIT", "16MiB")
    with pytest.raises(
        schedlab.ResourceError,
        match=r"<string>: the run.s heap reached .*over its budget of 16\.0 MiB.*SCHEDLAB_MEMORY_LIMIT",
    ):
        schedlab.run_scenario(text=FORK_LOOP)
    # The same run with a 100 ms duration fits.
    r = schedlab.run_scenario(text=FORK_LOOP, overrides={"measure.duration": "100ms"})
    assert r["sim"]["end_ns"] == 100_000_000


def test_the_heap_budget_comes_from_the_host_or_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from schedlab.heap import heap_budget, parse_bytes

    assert parse_bytes("512MiB") == 512 * 2**20 and parse_bytes("1.5G") == 1_500_000_000
    assert parse_bytes("4096") == 4096
    monkeypatch.delenv("SCHEDLAB_MEMORY_LIMIT", raising=False)
    default = heap_budget()
    assert default is not None and 0 < default < 2**50  # 80 % of MemAvailable
    monkeypatch.setenv("SCHEDLAB_MEMORY_LIMIT", "off")
    assert heap_budget() is None
    for bad in ("lots", "-1", "0"):
        monkeypatch.setenv("SCHEDLAB_MEMORY_LIMIT", bad)
        with pytest.raises(UsageError, match="SCHEDLAB_MEMORY_LIMIT"):
            schedlab.run_scenario(text=FORK_LOOP)


def test_the_cli_reports_sl210(write_scenario: Callable[..., Path]) -> None:
    path = write_scenario(FORK_LOOP, "fork-loop.toml")
    env = {**cli_env(), "SCHEDLAB_MEMORY_LIMIT": "16MiB"}
    out = subprocess.run(
        [sys.executable, "-m", "schedlab", "run", str(path)], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 2, out.stderr
    assert "[SL210] " in out.stderr and "fork-loop.toml" in out.stderr


# -------------------------------------------------- row 4: loops that never let time pass


@pytest.mark.parametrize(
    "body",
    [
        "{ yield = true }",
        '{ fork = "child" }',
        '{ signal = "e" }',
        '{ yield = true }, { signal = "e" }',
    ],
)
def test_a_loop_without_a_time_taking_op_is_refused(
    body: str, write_scenario: Callable[..., Path], run_cli: RunCli
) -> None:
    tasks = f'[[task]]\nname = "spin"\nprogram = [ {{ loop = {{ body = [ {body} ] }} }} ]\n'
    tasks += '[[task]]\nname = "child"\ncount = 0\nprogram = [ { run = "1ms" } ]\n'
    # A fork takes the parent kernel.costs.fork of time: a loop of forks
    # alone spins only when that cost is zero.
    text = scenario(tasks, 'duration = "1s"').replace(
        'version = "6.1"\n', 'version = "6.1"\ncosts = { fork = "0ns" }\n'
    )
    path = write_scenario(text, "spin.toml")
    error_line(run_cli("run", str(path)), "SL102", "spin.toml", "task[0].program[0].loop.body", "run, runtime, sleep")


def test_a_loop_of_zero_time_ops_is_stopped_while_running(write_scenario: Callable[..., Path], run_cli: RunCli) -> None:
    tasks = '[[task]]\nname = "spin"\nprogram = [ { loop = { body = [ { yield = true }, { run = "0ns" } ] } } ]\n'
    path = write_scenario(scenario(tasks, 'duration = "1s"'), "zero.toml")
    error_line(run_cli("run", str(path)), "SL200", "zero.toml", "no progress", "spin on CPU 0")


def test_the_trace_up_to_a_fault_is_kept_beside_the_target(write_scenario: Callable[..., Path], tmp_path: Path) -> None:
    """A run stopped by a fault of the model keeps the trace it has, as
    FILE.fault (it is what explains the error), and leaves FILE as it was."""
    spin = '{ loop = { body = [ { yield = true }, { run = "0ns" } ] } }'
    tasks = f'[[task]]\nname = "spin"\nprogram = [ {{ run = "1ms" }}, {spin} ]\n'
    trace = tmp_path / "t.txt"
    trace.write_text("an earlier trace\n")
    with pytest.raises(InvariantError, match=r"no progress.*the trace up to the fault: .*t\.txt\.fault"):
        schedlab.run_scenario(text=scenario(tasks, 'duration = "1s"'), trace=trace)
    text = (tmp_path / "t.txt.fault").read_text()
    assert "sched_switch" in text and "next_comm=spin " in text
    assert trace.read_text() == "an earlier trace\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.txt", "t.txt.fault"]


# -------------------------------------------------- row 5: a context switch longer than the tick


def test_costs_longer_than_the_tick_are_refused(write_scenario: Callable[..., Path], run_cli: RunCli) -> None:
    text = scenario(HOG, 'duration = "1s"').replace("[measure]", '[kernel.costs]\ncontext_switch = "100ms"\n[measure]')
    path = write_scenario(text, "costly.toml")
    error_line(run_cli("run", str(path)), "SL102", "kernel.costs.context_switch", "up to one tick")


def test_mpstat_columns_sum_to_100_with_the_largest_accepted_costs() -> None:
    """The costs at their bound (one tick) on a busy machine: every CPU's
    Average columns still sum to 100 % and no column leaves 0..100."""
    costs = '[kernel.costs]\ncontext_switch = "4ms"\nwakeup_ipi = "4ms"\nmigration_remote_node = "4ms"\n'
    tasks = HOG.replace('name = "hog"', 'name = "hog"\ncount = 6') + (
        '[[task]]\nname = "s"\ncount = 4\nprogram = [ { loop = { body = [ { run = "1ms" }, { sleep = "3ms" } ] } } ]\n'
    )
    text = scenario(tasks, 'duration = "2s"').replace("[measure]", costs + "[measure]")
    report = schedlab.run_scenario(text=text, check=True)
    for row in report["mpstat"]["average"]:
        values = [row[k] for k in ("usr", "nice", "sys", "iowait", "irq", "soft", "steal", "idle")]
        assert all(0.0 <= v <= 100.0 for v in values), row
        assert sum(values) == pytest.approx(100.0, abs=0.05), row


# -------------------------------------------------- row 6: empty windows and deadlocks


def test_an_empty_window_is_an_error_naming_the_warmup(write_scenario: Callable[..., Path], run_cli: RunCli) -> None:
    tasks = '[[task]]\nname = "quick"\nprogram = [ { run = "10ms" } ]\n'
    path = write_scenario(scenario(tasks, 'warmup = "10s"'), "empty.toml")
    error_line(run_cli("run", str(path)), "SL102", "measure.warmup", "10s", "all tasks exited")


DEADLOCK = '[[task]]\nname = "waiter"\ncount = 2\nprogram = [ { run = "5ms" }, { wait = "never" } ]\n'
DEADLOCK += '[[task]]\nname = "signaller"\ncount = 0\nprogram = [ { signal = "never" } ]\n'


def test_a_deadlock_inside_a_fixed_duration_is_a_warning(
    write_scenario: Callable[..., Path], run_cli: RunCli, tmp_path: Path
) -> None:
    path = write_scenario(scenario(DEADLOCK, 'duration = "1s"'), "stuck.toml")
    report, stderr = cli_report(run_cli, path, tmp_path)
    (warning,) = report["warnings"]
    assert "deadlock" in warning and 'waiter-0 on wait "never"' in warning and "since 5.006ms" in warning
    assert f"schedlab: warning: {path}: deadlock" in stderr
    error_line(run_cli("run", str(path), "--strict"), "SL200", "deadlock", "--strict")
    with pytest.raises(InvariantError, match="deadlock"):
        schedlab.run_scenario(path, strict=True)


def test_a_deadlock_without_a_duration_is_an_error(write_scenario: Callable[..., Path], run_cli: RunCli) -> None:
    path = write_scenario(scenario(DEADLOCK), "stuck.toml")
    error_line(run_cli("run", str(path)), "SL200", "stuck.toml", "deadlock", "a wait without a signal")


# -------------------------------------------------- row 7: arguments of the wrong type or range


@pytest.mark.parametrize("seed", ["99999999999999999999999", "-1", str(2**64)])
def test_cli_seeds_out_of_range(seed: str, write_scenario: Callable[..., Path], run_cli: RunCli) -> None:
    error_line(run_cli("run", str(write_scenario(TINY)), "--seed", seed), "SL001", f"--seed {seed}", "from 0 to")


def test_the_largest_seed_runs(write_scenario: Callable[..., Path]) -> None:
    assert schedlab.run_scenario(write_scenario(TINY), seed=2**64 - 1)["seed"] == 2**64 - 1


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"seed": None}, "seed"),
        ({"seed": "1"}, "seed"),
        ({"seed": 1.5}, "seed"),
        ({"seed": 2**64}, "seed"),
        ({"seed": -1}, "seed"),
        ({"seed": True}, "seed"),
        ({"check": "yes"}, "check"),
        ({"strict": 1}, "strict"),
        ({"trace": 5}, "trace"),
        ({"perfetto": b"x.pftrace"}, "perfetto"),
        ({"overrides": "task.0.nice=1"}, "overrides"),
        ({"overrides": {1: 2}}, "overrides"),
        ({"overrides": [("task.0.nice",)]}, "overrides"),
    ],
)
def test_api_arguments_are_checked(kwargs: dict[str, object], name: str, write_scenario: Callable[..., Path]) -> None:
    with pytest.raises(UsageError, match=rf"^\[SL001\] {name}="):
        schedlab.run_scenario(write_scenario(TINY), **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("scenario_arg", [5, None, ["a.toml"]])
def test_api_scenario_argument_is_checked(scenario_arg: object) -> None:
    with pytest.raises(UsageError, match=r"scenario"):
        schedlab.run_scenario(scenario_arg)  # type: ignore[arg-type]


def test_text_goes_through_its_own_argument() -> None:
    with pytest.raises(UsageError, match=r"looks like TOML text.*text="):
        schedlab.run_scenario(TINY)
    assert schedlab.run_scenario(text=TINY)["source"] == "<string>"
    assert schedlab.check_scenario(text=TINY)["name"] == "tiny"
    with pytest.raises(UsageError, match="give one of them"):
        schedlab.run_scenario("tiny.toml", text=TINY)


# -------------------------------------------------- row 8: a path is a path


def test_a_path_with_an_equals_sign_is_a_path(tmp_path: Path) -> None:
    d = tmp_path / "a=b"
    d.mkdir()
    (d / "x.toml").write_text(TINY)
    report = schedlab.run_scenario(str(d / "x.toml"))
    assert report["source"] == str(d / "x.toml")


def test_stdin_is_a_scenario(run_cli: RunCli) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "schedlab", "run", "-", "-q", "--json", "-"],
        input=TINY,
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=600,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["source"] == "<stdin>"


# -------------------------------------------------- row 9: output paths checked first


@pytest.mark.parametrize("flag", ["--json", "--trace", "--perfetto", "--schedstat-file"])
def test_an_unwritable_output_is_refused_before_the_run(
    flag: str, write_scenario: Callable[..., Path], run_cli: RunCli
) -> None:
    # The scenario deadlocks without a duration (SL200 at its end): an
    # SL001 naming the output proves nothing was simulated.
    path = write_scenario(scenario(DEADLOCK), "stuck.toml")
    error_line(run_cli("run", str(path), flag, "/proc/nope/x.out"), "SL001", flag, "/proc/nope", "does not exist")


def test_api_trace_paths_are_checked_first(write_scenario: Callable[..., Path], tmp_path: Path) -> None:
    path = write_scenario(scenario(DEADLOCK))
    with pytest.raises(UsageError, match=r"trace /proc/nope/t\.txt"):
        schedlab.run_scenario(path, trace="/proc/nope/t.txt")
    with pytest.raises(UsageError, match="is a directory"):
        schedlab.run_scenario(path, perfetto=tmp_path)


# -------------------------------------------------- rows 10, 11: messages in scenario words, cut short


def test_a_megabyte_key_is_not_echoed_whole(write_scenario: Callable[..., Path], run_cli: RunCli) -> None:
    path = write_scenario(TINY.replace("[measure]", "[measure]\n" + "k" * 1_000_000 + " = 1"), "big.toml")
    line = error_line(run_cli("check", str(path)), "SL101", "big.toml", "1000008 characters")
    assert len(line) < 2000


def test_a_section_of_the_wrong_type(write_scenario: Callable[..., Path], run_cli: RunCli) -> None:
    text = "kernel = 5\n" + TINY.replace('[kernel]\nversion = "6.1"\n', "")
    error_line(run_cli("check", str(write_scenario(text, "k.toml"))), "SL102", "k.toml: kernel: invalid", "a table")


@pytest.mark.parametrize(
    ("old", "new", "key", "accepted"),
    [
        ('preset = "4cpu"', "sockets = 1e30", "machine.sockets", "an integer >= 0"),
        ("count = 2", 'count = "3"', "task[0].count", "an integer"),
        ('name = "hog"', "name = 5", "task[0].name", "a string"),
        ('program = [ { run = "10ms" } ]', 'program = "run"', "task[0].program", "an array"),
        ("[machine]", 'machine = ["4cpu"]\n[x]', "machine", "a table"),
        ('version = "6.1"', 'version = "6.1"\nfeatures = "NEXT_BUDDY"', "kernel.features", "an array"),
    ],
)
def test_type_errors_speak_toml(
    old: str, new: str, key: str, accepted: str, write_scenario: Callable[..., Path], run_cli: RunCli
) -> None:
    assert old in TINY
    path = write_scenario(TINY.replace(old, new, 1), "typed.toml")
    out = run_cli("check", str(path))
    line = error_line(out, "SL102", f"typed.toml: {key}: invalid", f"accepted: {accepted}")
    for rust in ("usize", "i64", "u64", "u32", "struct ", "sequence", " map"):
        assert rust not in line, line


# -------------------------------------------------- row 12: sysctls the version lacks or the kernel refuses


@pytest.mark.parametrize(
    ("version", "sysctl", "value", "must"),
    [
        ("6.1", "kernel.sched_base_slice_ns", 3000000, "EEVDF's"),
        ("6.6", "kernel.sched_latency_ns", 24000000, "CFS's"),
        ("6.6", "kernel.sched_wakeup_granularity_ns", 1000000, "CFS's"),
        ("2.6.24", "kernel.sched_rt_runtime_us", 950000, "from 2.6.25"),
        ("2.6.25", "kernel.sched_tunable_scaling", 1, "from 2.6.33"),
        ("2.6.35", "kernel.sched_rr_timeslice_ms", 100, "from 3.9"),
        ("6.1", "kernel.sched_rt_runtime_us", 2000000, "above sched_rt_period_us"),
        ("6.1", "kernel.sched_latency_ns", 0, "100000 .. 1000000000"),
        ("6.1", "kernel.sched_min_granularity_ns", 2000000000, "100000 .. 1000000000"),
        ("6.1", "kernel.sched_child_runs_first", 2, "0 or 1"),
        ("6.1", "kernel.sched_rt_runtime_us", -2, "-1 (no limit)"),
        ("6.1", "kernel.sched_cfs_bandwidth_slice_us", 0, "1 .. 2147483647"),
        ("2.6.35", "kernel.sched_cfs_bandwidth_slice_us", 5000, "from 3.2"),
    ],
)
def test_sysctls_the_kernel_would_refuse(
    version: str, sysctl: str, value: int, must: str, write_scenario: Callable[..., Path], run_cli: RunCli
) -> None:
    text = TINY.replace('version = "6.1"', f'version = "{version}"\n[kernel.sysctl]\n"{sysctl}" = {value}')
    error_line(run_cli("check", str(write_scenario(text))), "SL102", sysctl, must)


def test_the_report_lists_only_the_versions_sysctls() -> None:
    cfs = schedlab.run_scenario(text=TINY)["kernel"]["sysctl"]
    eevdf = schedlab.run_scenario(text=TINY, overrides={"kernel.version": "6.6"})["kernel"]["sysctl"]
    assert "kernel.sched_latency_ns" in cfs and "kernel.sched_base_slice_ns" not in cfs
    assert "kernel.sched_base_slice_ns" in eevdf and "kernel.sched_latency_ns" not in eevdf


# -------------------------------------------------- row 13: unlisted versions


@pytest.mark.parametrize(("version", "runs_as"), [("3.10", "2.6.35"), ("5.15", "5.7"), ("6.7.99", "6.6")])
def test_an_unlisted_version_says_what_it_runs_as(
    version: str, runs_as: str, write_scenario: Callable[..., Path], run_cli: RunCli
) -> None:
    path = write_scenario(TINY.replace('"6.1"', f'"{version}"'), "odd.toml")
    report = schedlab.run_scenario(path)
    assert any(f"mechanisms of {runs_as}" in w for w in report["warnings"]), report["warnings"]
    out = run_cli("check", str(path))
    assert out.returncode == 0 and f"kernel.version {version} is not a modelled version" in out.stderr
    out = run_cli("run", str(path), "-q")
    assert out.returncode == 0 and f"mechanisms of {runs_as}" in out.stderr
    error_line(run_cli("run", str(path), "-q", "--strict"), "SL200", "not a modelled version")


def test_a_stable_update_runs_as_its_series() -> None:
    assert schedlab.run_scenario(text=TINY, overrides={"kernel.version": "6.1.192"})["warnings"] == []


# -------------------------------------------------- row 14: the documented timer form


def test_the_documented_timer_forms_run() -> None:
    for op in ('{ timer = "10ms" }', '{ timer = { period = "10ms" } }'):
        tasks = (
            f'[[task]]\nname = "t"\nprogram = [ {{ loop = {{ count = 5, body = [ {op}, {{ run = "1ms" }} ] }} }} ]\n'
        )
        report = schedlab.run_scenario(text=scenario(tasks))
        (t,) = report["tasks"]
        assert t["exit_ns"] is not None and 50_000_000 <= t["exit_ns"] <= 52_000_000, t
