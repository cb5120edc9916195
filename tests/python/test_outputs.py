"""Every output is written whole or not at all (issue 35 item 1): a failed
run leaves the files it was to write as they were, with nothing partial
beside them, and two writers of one path never interleave.

SCHEDLAB_OUTPUT_TRIES sets how many concurrent pairs the interleaving test
tries (default 10; the issue's acceptance is 100, run by hand)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import schedlab
from conftest import TINY, RunCli, cli_env
from schedlab.errors import UsageError
from schedlab.outputs import atomic_open, write_text

pytestmark = pytest.mark.native

#: Deadlocks at once: `m` is taken and never given back (`unlock n` is of
#: another mutex), so the second pass of the loop waits for ever.
DEADLOCK = TINY.replace(
    'program = [ { run = "10ms" } ]',
    'program = [ { loop = { body = [ { run = "10us" }, { lock = "m" }, { unlock = "n" } ] } } ]',
).replace('duration = "100ms"', 'duration = "50ms"')


def test_a_strict_failure_leaves_existing_traces_as_they_were(
    write_scenario: Callable[..., Path], run_cli: RunCli, tmp_path: Path
) -> None:
    path = write_scenario(DEADLOCK, "stuck.toml")
    text, pb, js = tmp_path / "t.txt", tmp_path / "t.pb", tmp_path / "r.json"
    for f in (text, pb, js):
        f.write_text(f"the earlier {f.name}\n")
    out = run_cli("run", str(path), "--strict", "--trace", str(text), "--perfetto", str(pb), "--json", str(js))
    assert out.returncode == 2, out.stderr
    assert "[SL200]" in out.stderr and "--strict" in out.stderr
    for f in (text, pb, js):
        assert f.read_text() == f"the earlier {f.name}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "stuck.toml", "t.pb", "t.txt"]
    # The same run without --strict writes them all, whole.
    out = run_cli("run", str(path), "--trace", str(text), "--perfetto", str(pb), "--json", str(js), "-q")
    assert out.returncode == 0, out.stderr
    assert "sched_switch" in text.read_text() and pb.stat().st_size > 0
    assert json.loads(js.read_text())["warnings"]


def test_a_trace_dat_of_a_failed_run_leaves_nothing(write_scenario: Callable[..., Path], tmp_path: Path) -> None:
    dat = tmp_path / "t.dat"
    with pytest.raises(schedlab.InvariantError):
        schedlab.run_scenario(text=DEADLOCK, trace=dat, strict=True)
    assert list(tmp_path.iterdir()) == []


def test_concurrent_writers_of_one_report_never_interleave(write_scenario: Callable[..., Path], tmp_path: Path) -> None:
    """Two `run --json same.json` at once, one with a long name (a longer
    report): the file is always one whole report."""
    short = write_scenario(TINY, "a.toml")
    long_name = "x" * 20_000
    long = write_scenario(TINY.replace('name = "tiny"', f'name = "{long_name}"'), "b.toml")
    out = tmp_path / "same.json"
    tries = int(os.environ.get("SCHEDLAB_OUTPUT_TRIES", "10"))
    for _ in range(tries):
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "schedlab", "run", str(p), "--json", str(out), "-q"],
                env=cli_env(),
                stderr=subprocess.PIPE,
            )
            for p in (short, long)
        ]
        for p in procs:
            assert p.wait(timeout=120) == 0
        doc = json.loads(out.read_text())  # one whole document, not one and the other's tail
        assert doc["scenario"] in ("tiny", long_name)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.toml", "b.toml", "same.json"]


def test_a_full_disk_is_a_clear_error_and_leaves_the_file(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"--out /dev/full: cannot write"):
        write_text("/dev/full", "x" * 100_000, flag="--out")
    f = tmp_path / "keep.txt"
    f.write_text("old")
    with pytest.raises(RuntimeError), atomic_open(f, "w") as w:
        w.write("new, half")
        raise RuntimeError("the writer failed")
    assert f.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_written_files_take_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        write_text(tmp_path / "r.txt", "x")
    finally:
        os.umask(old)
    assert (tmp_path / "r.txt").stat().st_mode & 0o777 == 0o644
