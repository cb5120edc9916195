"""A sweep killed with SIGKILL at random moments loses no finished row,
never leaves a truncated part, and once run to the end holds every row
exactly once, equal to an uninterrupted sweep's (issue 35).

The sweep runs as a process group (the CLI and its two worker processes)
with parts every 8 rows. Each kill comes a random 0-20 ms after a random
number of finished rows (about the sweep's length over the iterations, so
that every iteration kills a sweep at work), or at a random moment of the
start-up, so kills land in runs, in journal appends and in part writes.
CI kills it ``SCHEDLAB_CHAOS_ITERATIONS`` times (default 4); the
closing-note campaign runs 100::

    SCHEDLAB_CHAOS_ITERATIONS=100 .venv/bin/pytest -q tests/python/test_sweep_chaos.py

The kill moments come from ``random.Random(SCHEDLAB_CHAOS_SEED)`` (default 35).
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import schedlab
from conftest import tiny_loop

pq = pytest.importorskip("pyarrow.parquet")
pytestmark = pytest.mark.native

ITERATIONS = int(os.environ.get("SCHEDLAB_CHAOS_ITERATIONS", "4"))
SEED = int(os.environ.get("SCHEDLAB_CHAOS_SEED", "35"))

#: A 4-CPU scenario whose runs take a millisecond or two.
TINY = tiny_loop("10ms")

#: 3 x 2 x 4 x 6 = 144 runs; one axis of mixed types (a TOML-text column).
SPEC = """\
[sweep]
scenario = "tiny.toml"
seeds = 6

[[sweep.axis]]
key = "kernel.version"
values = ["5.5", "6.1", "6.6"]

[[sweep.axis]]
key = "task.0.cpus"
values = ["0-1", [0, 1, 2]]

[[sweep.axis]]
key = "task.0.count"
values = [2, 4, 6, 8]
"""
RUNS = 144

#: schedlab sweep with a part every 8 rows (the default, 256, would make one part).
RUNNER = (
    "import sys; import schedlab.sweep as s; s.FLUSH_ROWS = 8; "
    "from schedlab.cli import main; sys.exit(main(sys.argv[1:]))"
)


def _start(spec: Path, out: Path, *flags: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", RUNNER, "sweep", str(spec), "--out", str(out), "--jobs", "2", *flags],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip


def _rows(out: Path) -> list[dict[str, Any]]:
    df = schedlab.load_sweep(out).drop(columns=["wall_s"])
    df = df.astype(object).where(df.notna(), None)
    return df.to_dict("records")  # type: ignore[no-any-return]


def _parts_whole(out: Path) -> list[str]:
    """Every part reads whole (checksums verified); their run_ids, raw."""
    ids: list[str] = []
    for p in sorted(out.glob("part-*.parquet")):
        ids += pq.read_table(p, page_checksum_verification=True).column("run_id").to_pylist()
    return ids


def test_a_sweep_killed_at_random_moments_resumes_with_every_row_once(tmp_path: Path) -> None:
    (tmp_path / "tiny.toml").write_text(TINY)
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    ref = _start(spec, tmp_path / "ref", "-q")
    _, err = ref.communicate(timeout=120)
    assert ref.returncode == 0, err
    expected = _rows(tmp_path / "ref")
    assert len(expected) == RUNS and all(x["error"] is None for x in expected)

    out = tmp_path / "chaos"
    rng = random.Random(SEED)
    kept = 0
    per_kill = 2 * RUNS // (ITERATIONS + 1)
    for i in range(ITERATIONS):
        proc = _start(spec, out)  # not -q: a line on stderr per finished row
        assert proc.stderr is not None
        rows = rng.randint(0, per_kill)
        seen = 0  # rows this sweep reported finished (each is in OUT before its line)
        if rows == 0:
            time.sleep(rng.uniform(0.0, 1.0))  # somewhere in the start-up, the recovery or the first runs
        else:
            for line in proc.stderr:
                seen += " done (" in line
                if seen == rows:
                    break
            time.sleep(rng.uniform(0.0, 0.02))
        with contextlib.suppress(ProcessLookupError):  # it may have finished
            os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode in (0, -signal.SIGKILL), err
        assert "Traceback" not in err and "set aside" not in err, err
        ids = _parts_whole(out)
        assert len(ids) == len(set(ids)), f"iteration {i}: a row twice in the parts"
        assert not list(out.glob("*.corrupt*"))
        now = len(_rows(out)) if ids or (out / "journal.jsonl").exists() else 0
        assert now >= kept + seen, f"iteration {i}: {kept} rows before, {seen} finished, {now} kept after the kill"
        kept = now

    done = _start(spec, out, "-q")
    _, err = done.communicate(timeout=120)
    assert done.returncode == 0, err
    assert "set aside" not in err, err
    ids = _parts_whole(out)
    assert len(ids) == len(set(ids)) == RUNS
    assert not (out / "journal.jsonl").exists()
    assert _rows(out) == expected
