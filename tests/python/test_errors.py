"""Bad inputs through the CLI, in a subprocess, exactly as a user meets them.

Each case breaks one thing in the minimal valid scenario (conftest.TINY) and
expects: exit status 2, one ``schedlab: error: [CODE] ...`` line naming the
file and the key path and saying what is accepted (for syntax errors: the
line), and never a Python traceback or a Rust panic. Cases marked ``native``
go through the Rust core's validation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import TINY, RunCli

NATIVE = pytest.mark.native


@dataclass(frozen=True)
class Bad:
    text: str  # the scenario file's content
    codes: tuple[str, ...]  # acceptable codes (one, unless the kind is a judgement call)
    must: tuple[str, ...]  # substrings the message must contain
    args: tuple[str, ...] = ()  # extra CLI arguments after the path


def edit(old: str, new: str) -> str:
    assert old in TINY, old
    return TINY.replace(old, new, 1)


TASK_EXTRA = 'name = "hog"\ncount = 2\n'

CASES = {
    "unknown top-level key": Bad('colour = "red"\n' + TINY, ("SL101",), ("colour", "accepted")),
    "unknown key in [kernel]": Bad(
        edit('version = "6.1"', 'version = "6.1"\nbogus = 1'), ("SL101",), ("kernel.bogus", "accepted")
    ),
    "bad duration unit": Bad(
        edit('{ run = "10ms" }', '{ run = "20 parsecs" }'), ("SL102",), ("task[0].program[0].run", "accepted")
    ),
    "unknown machine preset": Bad(
        edit('preset = "4cpu"', 'preset = "16cpu-magic"'), ("SL110",), ("machine.preset", "accepted", "4cpu")
    ),
    "affinity outside the machine": Bad(
        edit(TASK_EXTRA, TASK_EXTRA + 'cpus = "0-7"\n'), ("SL110",), ("task[0].cpus", "accepted")
    ),
    "nice out of range": Bad(
        edit(TASK_EXTRA, TASK_EXTRA + "nice = 25\n"), ("SL102",), ("task[0].nice", "accepted", "-20", "19")
    ),
    "unknown policy": Bad(
        edit(TASK_EXTRA, TASK_EXTRA + 'policy = "SCHED_FAIR"\n'),
        ("SL102",),
        ("task[0].policy", "accepted", "SCHED_BATCH"),
    ),
    "unknown kernel version": Bad(
        edit('version = "6.1"', 'version = "9.9"'), ("SL102",), ("kernel.version", "accepted", "6.1")
    ),
    "unknown sched feature": Bad(
        edit('version = "6.1"', 'version = "6.1"\nfeatures = ["NO_SUCH_FEATURE"]'),
        ("SL102",),
        ("kernel.features", "NO_SUCH_FEATURE", "accepted"),
    ),
    "negative count": Bad(edit("count = 2", "count = -1"), ("SL102",), ("task[0].count", "accepted")),
    "count of the wrong type": Bad(edit("count = 2", 'count = "two"'), ("SL102",), ("task[0].count", "accepted")),
    "TOML syntax error": Bad(edit("[machine]", "[machine"), ("SL100",), ("syntax error", "line 2")),
    "unknown program op": Bad(
        edit('{ run = "10ms" }', '{ teleport = "10ms" }'),
        ("SL101", "SL102"),
        ("task[0].program[0]", "teleport", "accepted"),
    ),
    "RT priority out of range": Bad(
        edit(TASK_EXTRA, TASK_EXTRA + 'policy = "SCHED_FIFO"\nrt_priority = 100\n'),
        ("SL102",),
        ("task[0].rt_priority", "100", "1..99"),
    ),
    "RT policy without an RT priority": Bad(
        edit(TASK_EXTRA, TASK_EXTRA + 'policy = "SCHED_RR"\n'),
        ("SL102",),
        ("task[0].rt_priority", "SCHED_RR", "1..99"),
    ),
    "RT priority on a fair policy": Bad(
        edit(TASK_EXTRA, TASK_EXTRA + "rt_priority = 5\n"),
        ("SL102",),
        ("task[0].rt_priority", "SCHED_FIFO or SCHED_RR", "0 for fair policies"),
    ),
    "unknown sysctl": Bad(
        edit("[measure]", '[kernel.sysctl]\n"kernel.sched_bogus_ns" = 1\n[measure]'),
        ("SL101", "SL102"),
        ("kernel.sysctl", "kernel.sched_bogus_ns", "accepted"),
    ),
    "missing required key": Bad(edit('name = "hog"\n', ""), ("SL103",), ("task[0].name", "missing")),
    "bad cpus list": Bad(
        edit(TASK_EXTRA, TASK_EXTRA + 'cpus = "0-"\n'), ("SL102", "SL110"), ("task[0].cpus", "accepted")
    ),
    "--set of an unknown key": Bad(TINY, ("SL101",), ("bogus", "accepted"), args=("--set", "task.0.bogus=1")),
    "--set of a bad value": Bad(TINY, ("SL102",), ("nice", "accepted"), args=("--set", "task.hog.nice=99")),
}


def _check(out_stderr: str, out_stdout: str, rc: int, codes: tuple[str, ...], must: tuple[str, ...]) -> str:
    everything = out_stderr + out_stdout
    assert rc == 2, everything
    assert "Traceback" not in everything
    assert "panicked" not in everything and "PanicException" not in everything
    error_lines = [line for line in out_stderr.splitlines() if line.startswith("schedlab: error: ")]
    assert len(error_lines) == 1, out_stderr
    code = error_lines[0][len("schedlab: error: [") :][:5]
    assert code in codes, out_stderr
    for piece in must:
        assert piece in out_stderr, f"{piece!r} not in {out_stderr!r}"
    return out_stderr


@NATIVE
@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_bad_scenario(case: str, write_scenario: Callable[..., Path], run_cli: RunCli) -> None:
    bad = CASES[case]
    path = write_scenario(bad.text, "bad_input.toml")
    out = run_cli("run", str(path), *bad.args)
    _check(out.stderr, out.stdout, out.returncode, bad.codes, (*bad.must, "bad_input.toml"))


@NATIVE
def test_check_command_reports_the_same(write_scenario: Callable[..., Path], run_cli: RunCli) -> None:
    path = write_scenario(CASES["nice out of range"].text, "bad_input.toml")
    out = run_cli("check", str(path))
    _check(out.stderr, out.stdout, out.returncode, ("SL102",), ("task[0].nice", "bad_input.toml"))


# ---------------------------------------------------------------- Python-side misuse (no native module needed)


def test_missing_scenario_file(tmp_path: Path, run_cli: RunCli) -> None:
    out = run_cli("run", str(tmp_path / "nowhere.toml"))
    _check(out.stderr, out.stdout, out.returncode, ("SL001",), ("nowhere.toml", "no such file", "accepted"))


def test_unknown_bundled_name(run_cli: RunCli) -> None:
    out = run_cli("run", "no-such-scenario")
    _check(out.stderr, out.stdout, out.returncode, ("SL001",), ("no-such-scenario", "accepted"))


def test_unknown_experiment(run_cli: RunCli) -> None:
    out = run_cli("reproduce", "no-such-experiment")
    _check(out.stderr, out.stdout, out.returncode, ("SL001",), ("no-such-experiment", "accepted"))


def test_bad_set_syntax(write_scenario: Callable[..., Path], run_cli: RunCli) -> None:
    path = write_scenario(TINY)
    out = run_cli("run", str(path), "--set", "task.0.nice")
    _check(out.stderr, out.stdout, out.returncode, ("SL001",), ("--set", "KEY=VALUE", "accepted"))


def test_bad_set_key(write_scenario: Callable[..., Path], run_cli: RunCli) -> None:
    path = write_scenario(TINY)
    out = run_cli("run", str(path), "--set", "task..nice=1")
    _check(out.stderr, out.stdout, out.returncode, ("SL001",), ("task..nice", "accepted"))


def test_reproduce_needs_an_experiment(write_scenario: Callable[..., Path], run_cli: RunCli) -> None:
    path = write_scenario(TINY, "plain.toml")
    out = run_cli("reproduce", str(path))
    _check(out.stderr, out.stdout, out.returncode, ("SL001",), ("plain.toml", "no [experiment]", "accepted"))


def test_bad_experiment_table(write_scenario: Callable[..., Path], run_cli: RunCli) -> None:
    text = TINY.replace('name = "tiny"\n', 'name = "tiny"\n[experiment]\nrepeats = 3\n', 1)
    path = write_scenario(text, "exp.toml")
    out = run_cli("reproduce", str(path))
    _check(out.stderr, out.stdout, out.returncode, ("SL101",), ("exp.toml", "experiment.repeats", "accepted"))


def test_syntax_error_before_reproduce(write_scenario: Callable[..., Path], run_cli: RunCli) -> None:
    path = write_scenario(CASES["TOML syntax error"].text, "broken.toml")
    out = run_cli("reproduce", str(path))
    _check(out.stderr, out.stdout, out.returncode, ("SL100",), ("broken.toml", "syntax error", "line 2"))


@pytest.mark.parametrize(
    "args",
    [
        (),
        ("frobnicate",),
        ("run",),
        ("run", "x.toml", "--seed", "many"),
        ("run", "x.toml", "--bogus"),
    ],
)
def test_usage_errors(args: tuple[str, ...], run_cli: RunCli) -> None:
    out = run_cli(*args)
    _check(out.stderr, out.stdout, out.returncode, ("SL001",), ())
    assert "usage: schedlab" in out.stderr


@pytest.mark.parametrize(
    ("args", "must"),
    [
        (("run", "{path}", "--seed", "-3"), "--seed -3"),
        (("reproduce", "{path}", "--repeat", "0"), "--repeat 0"),
        (("reproduce", "{path}", "--jobs", "0"), "--jobs 0"),
    ],
)
def test_bad_numbers(args: tuple[str, ...], must: str, write_scenario: Callable[..., Path], run_cli: RunCli) -> None:
    path = write_scenario(TINY)
    out = run_cli(*(a.format(path=path) for a in args))
    _check(out.stderr, out.stdout, out.returncode, ("SL001",), (must, "accepted"))
