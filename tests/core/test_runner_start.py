"""The runner's start as the simulator models it (`measure.start =
"runner"`, workload/start.rs): each thread's own start-up keeps its CPU busy,
so the next clones go to other CPUs, as the real runner's do in the QEMU
guests; and the main thread's reads of the counters are CPU time at
SCHED_FIFO 99 that a hog sharing its CPU loses."""

from __future__ import annotations

import re
from pathlib import Path

import schedlab

HOGS = """
name = "start"
[machine]
sockets = 1
cores_per_socket = 8
[kernel]
version = "6.12"
vmstat_kworkers = false
[kernel.costs]
fork = "20us"
thread_start = "{start}"
proc_read_task = "{read}"
[measure]
warmup = "20ms"
duration = "200ms"
start = "runner"
[[task]]
name = "h"
count = 8
program = [{{ loop = {{ count = 0, body = [{{ run = "100ms" }}] }} }}]
"""


def _fork_targets(tmp_path: Path, start: str, version: str) -> list[int]:
    trace = tmp_path / f"{start}-{version}.txt"
    text = HOGS.format(start=start, read="0ns").replace('version = "6.12"', f'version = "{version}"')
    schedlab.run_scenario(text=text, seed=1, trace=str(trace))
    lines = [ln for ln in trace.read_text().splitlines() if "sched_wakeup_new: comm=h-" in ln]
    cpus = []
    for ln in lines:
        m = re.search(r"target_cpu=(\d+)", ln)
        assert m, ln
        cpus.append(int(m[1]))
    return cpus


def test_a_thread_still_starting_keeps_the_next_clone_off_its_cpu(tmp_path: Path) -> None:
    # 5.7 (before update_pick_idlest()'s utilisation tie-break): with a
    # start-up shorter than a clone each child is at the gate before the
    # next clone, and the most recently idled CPU takes them all ...
    quick = _fork_targets(tmp_path, "1us", "5.7")
    assert len(quick) == 8 and len(set(quick)) == 1, quick
    # ... while five clones' worth of start-up has five children starting
    # at once, each on its own idle CPU.
    slow = _fork_targets(tmp_path, "100us", "5.7")
    assert len(set(slow[:5])) == 5, slow
    # From 5.9 the tie-break spreads them either way (3edecfef0285).
    assert len(set(_fork_targets(tmp_path, "1us", "6.12")[:6])) == 6


def test_the_main_threads_reads_take_a_hogs_cpu_when_the_window_opens() -> None:
    def min_share(read: str) -> float:
        r = schedlab.run_scenario(text=HOGS.format(start="100us", read=read), seed=1)
        win = r["measure"]["end_ns"] - r["measure"]["start_ns"]
        return min(100 * t["window"]["runtime_ns"] / win for t in r["tasks"])

    assert min_share("0ns") > 99.0
    # 8 tasks x 5 ms at FIFO 99: 40 ms of one hog's 200 ms window.
    assert 75.0 < min_share("5ms") < 85.0


def test_the_runners_costs_may_exceed_a_tick_but_not_a_second() -> None:
    import pytest

    from schedlab.errors import ScenarioError

    ok = schedlab.run_scenario(text=HOGS.format(start="5ms", read="6ms"), seed=1)
    assert ok["tasks"]
    with pytest.raises(ScenarioError) as e:
        schedlab.run_scenario(text=HOGS.format(start="100us", read="2s"), seed=1)
    assert "kernel.costs.proc_read_task" in str(e.value) and "up to 1s" in str(e.value)
