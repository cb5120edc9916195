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


def _fork_targets(tmp_path: Path, start: str) -> list[int]:
    trace = tmp_path / f"{start}.txt"
    schedlab.run_scenario(text=HOGS.format(start=start, read="0ns"), seed=1, trace=str(trace))
    lines = [ln for ln in trace.read_text().splitlines() if "sched_wakeup_new: comm=h-" in ln]
    return [int(re.search(r"target_cpu=(\d+)", ln)[1]) for ln in lines]


def test_a_thread_still_starting_keeps_the_next_clone_off_its_cpu(tmp_path: Path) -> None:
    # Start-up shorter than a clone: each child is at the gate before the
    # next clone, and the most recently idled CPU takes them all.
    quick = _fork_targets(tmp_path, "1us")
    assert len(quick) == 8 and len(set(quick)) == 1, quick
    # Five clones' worth of start-up: five children start at once, each on
    # its own idle CPU, as the guests' first clones spread.
    slow = _fork_targets(tmp_path, "100us")
    assert len(set(slow[:5])) == 5, slow


def test_the_main_threads_reads_take_a_hogs_cpu_when_the_window_opens() -> None:
    def min_share(read: str) -> float:
        r = schedlab.run_scenario(text=HOGS.format(start="100us", read=read), seed=1)
        win = r["measure"]["end_ns"] - r["measure"]["start_ns"]
        return min(100 * t["window"]["runtime_ns"] / win for t in r["tasks"])

    assert min_share("0ns") > 99.0
    # 8 tasks x 5 ms at FIFO 99: 40 ms of one hog's 200 ms window.
    assert 75.0 < min_share("5ms") < 85.0
