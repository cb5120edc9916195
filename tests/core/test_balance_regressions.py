"""Balancer cases a user found the model getting wrong, each pinned down by
the kernel code path that was missing."""

from __future__ import annotations

from pathlib import Path

import pytest

import schedlab

pytestmark = pytest.mark.native

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("version", ["6.1", "6.6", "6.12", "6.18"])
def test_an_idle_cpu_takes_one_of_two_hogs(version: str) -> None:
    """Issue 19: two hogs and two nice -5 3 ms / 7 ms tasks on two CPUs,
    forked onto one CPU. The CPU left with a sleeper only takes one of the
    hogs, so neither CPU idles and the hogs share about 70 % each, as on
    real 6.1 and 6.12. Within an LLC the pull evens out task counts since
    5.10 (16b0a7a1a0af); across LLCs it fills spare capacity by
    utilisation, relaxed by the failure count (shr_bound(util,
    nr_balance_failed), 6.1.y/6.6.y stable and 6.8+). Real 6.1 splits the
    two hogs unevenly (52 % and 82 %), 6.12 and 6.18 evenly (72 %): the
    group's mean is what holds on every version."""
    r = schedlab.run_scenario(
        REPO / "validation" / "eevdf-idle-cpu.toml", seed=1, overrides={"kernel.version": version}
    )
    assert r["mpstat"]["average"][0]["idle"] < 1.0
    window = r["measure"]["end_ns"] - r["measure"]["start_ns"]
    hogs = [t["window"]["runtime_ns"] / window * 100 for t in r["tasks"] if t["group"] == "hog"]
    assert 60 < sum(hogs) / len(hogs) < 80, hogs
    assert all(45 < h < 90 for h in hogs), hogs


IDLE_ROTATION = """
name = "idle-rotation"
description = "1 nice-0 hog and 4 SCHED_IDLE hogs on 4 CPUs"
[machine]
sockets = 1
cores_per_socket = 4
[kernel]
version = "6.12"
[measure]
warmup = "300ms"
duration = "3s"
[[task]]
name = "n0"
program = [{ loop = { count = 0, body = [{ run = "100ms" }] } }]
[[task]]
name = "idle"
count = 4
policy = "SCHED_IDLE"
program = [{ loop = { count = 0, body = [{ run = "100ms" }] } }]
"""


@pytest.mark.parametrize("version", ["5.10", "6.1", "6.12", "6.18"])
def test_sched_idle_hogs_rotate_under_a_heavy_average(version: str) -> None:
    """Issue 36 item 4: four SCHED_IDLE hogs and a nice-0 hog on four CPUs.
    The nice-0 hog's CPU lifts the domain's average load (~259) far above
    the overloaded busiest CPU's (two idle hogs, 6). calculate_imbalance()
    computes busiest - average in unsigned long, it wraps, min() takes the
    local term (average - local, ~256), and a CPU with one idle hog pulls
    the other CPU's queued one: the idle hogs keep rotating and share three
    CPUs (real 6.1, 6.12 and 6.18: 72-79 % each, 41-55 migrations/s). A
    saturating subtraction leaves them two on one CPU at 50 % and two alone
    at 100 %. Deviation from the guests: the model often settles with one
    queued idle hog pulled from CPU to CPU at each tick before it runs (a
    "hopper", down to ~30 %), the others near 90 %; see
    docs/models/sched-balance.md."""
    r = schedlab.run_scenario(text=IDLE_ROTATION, seed=1, overrides={"kernel.version": version})
    window = r["measure"]["end_ns"] - r["measure"]["start_ns"]
    idle = [t for t in r["tasks"] if t["group"] == "idle"]
    shares = [t["window"]["runtime_ns"] / window * 100 for t in idle]
    moves = sum(t["window"]["nr_migrations"] for t in idle) / (window / 1e9)
    assert all(25 < s < 97 for s in shares), shares
    assert abs(sum(shares) - 300) < 2, shares
    assert moves > 20, moves
