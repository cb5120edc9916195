"""Pressure stall information (sched/psi.rs, `kernel.psi`): each CPU's
stall states as kernel/sched/psi.c tests them, weighted by the CPUs'
non-idle time into /proc/pressure's totals and averages."""

from __future__ import annotations

from typing import Any

import pytest

import schedlab
from schedlab.errors import ScenarioError

pytestmark = pytest.mark.native

HOGS = """
name = "hogs"
[machine]
preset = "4cpu"
[kernel]
version = "{version}"
psi = true
vmstat_kworkers = false
[measure]
warmup = "1s"
duration = "{duration}"
[[task]]
name = "hog"
count = {count}
program = [{{ run = "1000s" }}]
"""

READER = """
name = "reader"
[machine]
preset = "4cpu"
[[machine.disk]]
name = "ssd"
read = "1ms"
[kernel]
version = "6.1"
psi = true
vmstat_kworkers = false
[measure]
warmup = "1s"
duration = "10s"
[[task]]
name = "dd"
program = [{ loop = { count = 0, body = [
    { run = "1ms" }, { read = { disk = ["ssd"], size = "4KiB", direct = true } },
] } }]
"""


def hogs(count: int, version: str = "6.1", duration: str = "20s") -> Any:
    return schedlab.run_scenario(text=HOGS.format(count=count, version=version, duration=duration), seed=1)


def test_more_hogs_than_cpus_stall_on_the_cpu() -> None:
    # 6 hogs on 4 CPUs: two CPUs run two hogs each, two one: the CPUs in
    # "some" are half the non-idle CPU time.
    p = hogs(6)["pressure"]
    assert p["cpu"]["some"]["window_pct"] == pytest.approx(50.0, abs=1.0)
    for res in ("memory", "io"):
        assert p[res]["some"]["total_us"] == 0
    # avg10 after 21 s at 50 %: 50 x (1 - (1677/2048)^10) = 43.2.
    assert p["cpu"]["some"]["avg10"] == pytest.approx(43.2, abs=1.0)
    assert p["cpu"]["some"]["avg60"] < p["cpu"]["some"]["avg10"]


def test_as_many_hogs_as_cpus_do_not_stall() -> None:
    p = hogs(4)["pressure"]
    assert p["cpu"]["some"]["total_us"] == 0


def test_an_io_bound_task_stalls_on_io_and_fully_when_alone() -> None:
    # 1 ms of CPU, then a 1 ms read: half its time in iowait, and nothing
    # else runs, so every iowait is a full stall.
    p = schedlab.run_scenario(text=READER, seed=1)["pressure"]
    some, full = p["io"]["some"]["window_pct"], p["io"]["full"]["window_pct"]
    assert 40 < some < 60
    assert full == some
    assert p["cpu"]["some"]["total_us"] == 0


def test_the_cpu_full_line_follows_the_version() -> None:
    assert "full" not in hogs(6, "5.10", "4s")["pressure"]["cpu"]
    # 5.13-5.18 print the system's cpu full; 5.19 on prints zeros.
    assert hogs(6, "5.15", "4s")["pressure"]["cpu"]["full"]["total_us"] >= 0
    assert hogs(6, "6.1", "4s")["pressure"]["cpu"]["full"] == {
        "avg10": 0.0,
        "avg60": 0.0,
        "avg300": 0.0,
        "total_us": 0,
        "window_pct": 0.0,
    }


def test_reclaim_is_a_memory_stall() -> None:
    over = {
        "kernel.version": "6.1",
        "kernel.psi": True,
        "measure.warmup": "500ms",
        "measure.duration": "500ms",
        "task.dd.count": 40,
    }
    p = schedlab.run_scenario("kswapd-threads", seed=1, overrides=over)["pressure"]
    assert p["memory"]["some"]["window_pct"] > 10
    assert p["memory"]["full"]["window_pct"] > 0
    assert p["io"]["some"]["window_pct"] > 0


def test_without_psi_nothing_changes() -> None:
    text = HOGS.format(count=6, version="6.1", duration="4s")
    on = schedlab.run_scenario(text=text, seed=1)
    off = schedlab.run_scenario(text=text.replace("psi = true", ""), seed=1)
    assert "pressure" not in off
    on.pop("pressure")
    for key in ("tasks", "groups", "cpus", "schedstat", "mpstat"):
        assert on[key] == off[key], key


def test_psi_before_4_20_is_refused() -> None:
    with pytest.raises(ScenarioError) as e:
        hogs(6, "4.19", "1s")
    assert "kernel.psi" in str(e.value) and "4.20" in str(e.value)


VMSTAT_PROCS = """
name = "procs"
[machine]
preset = "4cpu"
[[machine.disk]]
name = "hdd"
read = "10ms"
[kernel]
vmstat_kworkers = false
[measure]
warmup = "1s"
duration = "5s"
interval = "1s"
[[task]]
name = "hog"
count = 2
program = [{ run = "1000s" }]
[[task]]
name = "dd"
count = 4
program = [{ loop = { count = 0, body = [
    { run = "100us" }, { read = { disk = ["hdd"], size = "4KiB", direct = true } },
] } }]
"""


def test_vmstat_procs_columns_count_runnable_and_io_blocked_tasks() -> None:
    # vmstat's r (procs_running) and b (procs_blocked) at the end of each
    # interval: the two hogs always run; each reader is running or asleep
    # in io_schedule(), so r + b is every task, and the readers mostly wait
    # on the disk.
    rows = schedlab.run_scenario(text=VMSTAT_PROCS, seed=1)["mm"]["procs"]
    assert [row["time_s"] for row in rows] == [2.0, 3.0, 4.0, 5.0, 6.0]
    assert all(row["r"] >= 2 and row["r"] + row["b"] == 6 for row in rows), rows
    assert sum(row["b"] for row in rows) >= 3 * len(rows), rows
