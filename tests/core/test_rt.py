"""The RT class (issue 4, first half): SCHED_RR timeslicing, RT throttling,
preemption of fair tasks, push/pull placement, and the RT invariant.

Every run uses the invariant checker, which includes the RT rule: with
push/pull on, no runnable RT task with an unrestricted affinity waits while
an unthrottled CPU runs something of lower priority.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import schedlab
from schedlab.report_types import Report

HOG = 'program = [{ loop = { count = 0, body = [{ run = "100ms" }] } }]'
MS = 1_000_000
SWITCH = re.compile(r"\[(\d+)\] d\.\.2\.\s+(\d+)\.(\d+): sched_switch: prev_comm=(\S+) .* next_comm=(\S+) ")


def scenario(tasks: str, *, machine: str = "4cpu", version: str = "6.1", duration: str = "5s", sysctl: str = "") -> str:
    sys_block = f"[kernel.sysctl]\n{sysctl}\n" if sysctl else ""
    return (
        f'name = "rt"\n[machine]\npreset = "{machine}"\n[kernel]\nversion = "{version}"\n{sys_block}'
        f'[measure]\nduration = "{duration}"\n{tasks}'
    )


def task(name: str, *, policy: str = "", prio: int = 0, cpus: str = "", count: int = 1, program: str = HOG) -> str:
    s = f'[[task]]\nname = "{name}"\ncount = {count}\n'
    if policy:
        s += f'policy = "{policy}"\nrt_priority = {prio}\n'
    if cpus:
        s += f'cpus = "{cpus}"\n'
    return s + program + "\n"


def run(text: str, **kw: Any) -> Report:
    return schedlab.run_scenario(text=text, seed=1, check=True, **kw)


def by_comm(report: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["comm"]: t for t in report["tasks"]}


def switches(trace: Path, cpu: int) -> list[tuple[int, str, str]]:
    """(time ns, prev_comm, next_comm) of the sched_switch lines on `cpu`."""
    out = []
    for line in trace.read_text().splitlines():
        m = SWITCH.search(line)
        if m and int(m.group(1)) == cpu:
            out.append((int(m.group(2)) * 1_000_000_000 + int(m.group(3)) * 1000, m.group(4), m.group(5)))
    return out


# ------------------------------------------------------------------ reports


def test_report_has_rt_priority_and_prio() -> None:
    r = run(scenario(task("f", policy="SCHED_FIFO", prio=50) + task("n"), duration="100ms"))
    t = by_comm(r)
    assert (t["f"]["policy"], t["f"]["rt_priority"], t["f"]["prio"]) == ("SCHED_FIFO", 50, 49)
    assert (t["n"]["rt_priority"], t["n"]["prio"]) == (0, 120)


# ------------------------------------------------------------ RR timeslice


@pytest.mark.parametrize("slice_ms", [100, 20])
def test_rr_tasks_alternate_every_timeslice(tmp_path: Path, slice_ms: int) -> None:
    trace = tmp_path / "rr.trace"
    sysctl = f'"kernel.sched_rt_runtime_us" = -1\n"kernel.sched_rr_timeslice_ms" = {slice_ms}'
    text = scenario(task("rr", policy="SCHED_RR", prio=10, cpus="0", count=2), duration="1s", sysctl=sysctl)
    r = run(text, trace=str(trace))
    sw = [s for s in switches(trace, 0) if s[1].startswith("rr-") and s[2].startswith("rr-")]
    assert len(sw) >= 1000 // slice_ms - 2
    gaps = [b[0] - a[0] for a, b in zip(sw, sw[1:])]
    # Each slice is slice_ms of ticks (HZ=250: whole 4 ms ticks, +1 tick for
    # the partial first one at most).
    assert all(slice_ms * MS - 4 * MS <= g <= slice_ms * MS + 4 * MS for g in gaps), gaps
    assert all(a[2] == b[1] for a, b in zip(sw, sw[1:]))  # strict alternation
    t = by_comm(r)
    assert abs(t["rr-0"]["runtime_ns"] - t["rr-1"]["runtime_ns"]) <= slice_ms * MS + 4 * MS


def test_fifo_does_not_timeslice() -> None:
    text = scenario(
        task("f", policy="SCHED_FIFO", prio=10, cpus="0", count=2),
        duration="1s",
        sysctl='"kernel.sched_rt_runtime_us" = -1',
    )
    t = by_comm(run(text))
    assert t["f-0"]["runtime_ns"] >= 995 * MS and t["f-1"]["runtime_ns"] == 0


# --------------------------------------------------------------- throttling


def test_throttling_leaves_fair_tasks_5_percent_of_each_period(tmp_path: Path) -> None:
    trace = tmp_path / "thr.trace"
    text = scenario(task("fifo", policy="SCHED_FIFO", prio=50, cpus="0") + task("fair", cpus="0"), duration="5s")
    r = run(text, trace=str(trace))
    t = by_comm(r)
    share = t["fair"]["runtime_ns"] / 5e9
    # 4 or 5 period ends fall in the 5 s (the period timer's grid keeps the
    # boot's phase against the run, kernel.tick_next_period).
    assert 0.038 <= share <= 0.055, share
    # Per period: the fair task runs once, for about 50 ms, at the end.
    sw = switches(trace, 0)
    fair_runs = []
    start = None
    for ts, prev, nxt in sw:
        if nxt == "fair":
            start = ts
        elif prev == "fair" and start is not None:
            fair_runs.append((start, ts - start))
            start = None
    assert len(fair_runs) >= 4
    for begin, length in fair_runs:
        assert 40 * MS <= length <= 55 * MS, (begin, length)
    # Each ends at a period boundary: one grid of whole seconds.
    assert len({(begin + length) % 1_000_000_000 for begin, length in fair_runs}) == 1, fair_runs


def test_throttling_off_starves_the_fair_task() -> None:
    text = scenario(
        task("fifo", policy="SCHED_FIFO", prio=50, cpus="0") + task("fair", cpus="0"),
        duration="2s",
        sysctl='"kernel.sched_rt_runtime_us" = -1',
    )
    assert by_comm(run(text))["fair"]["runtime_ns"] == 0


def test_throttling_follows_the_runtime_sysctl() -> None:
    text = scenario(
        task("fifo", policy="SCHED_FIFO", prio=50, cpus="0") + task("fair", cpus="0"),
        duration="5s",
        sysctl='"kernel.sched_rt_runtime_us" = 800000',
    )
    # Whole periods in the window: the period timer's grid from the start.
    text = text.replace("[kernel]\n", '[kernel]\ntick_next_period = "0ns"\n')
    share = by_comm(run(text))["fair"]["runtime_ns"] / 5e9
    assert 0.19 <= share <= 0.205, share


# --------------------------------------------------------------- preemption


def test_rt_wakeup_preempts_a_fair_task_at_once() -> None:
    rt = 'program = [{ loop = { count = 0, body = [{ sleep = "7ms" }, { run = "2ms" }] } }]'
    text = scenario(
        task("fair", cpus="0") + task("rt", policy="SCHED_FIFO", prio=1, cpus="0", program=rt), duration="1s"
    )
    t = by_comm(run(text))
    assert t["rt"]["nr_wakeups"] >= 100
    # The wakee waits only for the switch itself (no tick, no slice).
    assert t["rt"]["wakeup_latency_max_ns"] < 100_000
    assert t["fair"]["nr_involuntary_switches"] >= t["rt"]["nr_wakeups"]


def test_higher_rt_priority_preempts_lower() -> None:
    lo = task("lo", policy="SCHED_FIFO", prio=10, cpus="0")
    hi_prog = 'program = [{ loop = { count = 0, body = [{ sleep = "10ms" }, { run = "1ms" }] } }]'
    hi = task("hi", policy="SCHED_FIFO", prio=20, cpus="0", program=hi_prog)
    t = by_comm(run(scenario(lo + hi, duration="1s", sysctl='"kernel.sched_rt_runtime_us" = -1')))
    assert t["hi"]["wakeup_latency_max_ns"] < 100_000
    assert t["lo"]["nr_involuntary_switches"] >= 80


# ------------------------------------------------------- mixed, push / pull


AVG_LOAD_RT_GAP = {"2.6.25", "2.6.35", "4.16"}


@pytest.mark.parametrize("version", ["2.6.25", "2.6.35", "4.16", "5.4", "6.1", "6.6"])
def test_fifo_hogs_never_wait_and_fair_hogs_share_the_rest(version: str) -> None:
    text = scenario(
        task("fifo", policy="SCHED_FIFO", prio=20, count=3) + task("fair", count=2),
        version=version,
        sysctl='"kernel.sched_rt_runtime_us" = -1',
    )
    r = run(text)
    t = by_comm(r)
    fifo_cpus = {t[f"fifo-{i}"]["last_cpu"] for i in range(3)}
    assert len(fifo_cpus) == 3
    for i in range(3):
        f = t[f"fifo-{i}"]
        assert f["wait_ns"] == 0 and f["nr_migrations"] <= 1
        assert f["runtime_ns"] >= 4990 * MS
    fair = [t["fair-0"], t["fair-1"]]
    total = sum(f["runtime_ns"] for f in fair)
    assert total >= 4.5e9  # one CPU's worth between them
    if version in AVG_LOAD_RT_GAP:
        # Known gap (issue 4): in the avg_load balancer era the fair task
        # queued behind an RT hog is moved late (2.6.35, 4.16: scale_rt_power
        # builds up over sched_avg_period) or never (2.6.25: the RT load
        # weight in rq->load is not modelled).
        return
    for f in fair:
        assert 0.35 <= f["runtime_ns"] / total <= 0.65, version


def test_fifo_and_fair_hogs_with_throttling() -> None:
    r = run(scenario(task("fifo", policy="SCHED_FIFO", prio=20, count=3) + task("fair", count=2)))
    t = by_comm(r)
    for i in range(3):
        assert t[f"fifo-{i}"]["runtime_ns"] >= 0.94 * 5e9
        assert t[f"fifo-{i}"]["wakeup_latency_max_ns"] == 0
    assert t["fair-0"]["runtime_ns"] + t["fair-1"]["runtime_ns"] >= 4.5e9


def migrate_like(version: str = "6.1") -> str:
    """rt-migrate-test -c 5 shape on 4 CPUs: five FIFO threads at 2..6
    released together, 20 ms of work, 100 ms sleep (no parent thread here)."""
    body = '[{ barrier = "go" }, { runtime = "20ms" }, { sleep = "100ms" }]'
    tasks = "".join(
        task(f"t{p}", policy="SCHED_FIFO", prio=p, program=f"program = [{{ loop = {{ count = 0, body = {body} }} }}]")
        for p in range(2, 7)
    )
    return scenario(tasks, version=version, duration="3s")


@pytest.mark.parametrize("version", ["2.6.25", "4.16", "6.1"])
def test_push_pull_keeps_the_highest_tasks_running(version: str) -> None:
    # The checker enforces the RT invariant after every event; here we also
    # check that the four highest threads start at once each release.
    t = by_comm(run(migrate_like(version)))
    for p in range(3, 7):
        assert t[f"t{p}"]["wakeup_latency_max_ns"] < 1 * MS, (p, t[f"t{p}"]["wakeup_latency_max_ns"])
    # The lowest waits for a CPU: about one run interval.
    assert t["t2"]["wakeup_latency_max_ns"] <= 21 * MS


def test_rt_affinity_is_respected() -> None:
    text = scenario(
        task("a", policy="SCHED_FIFO", prio=30, cpus="1") + task("b", policy="SCHED_FIFO", prio=30, cpus="1"),
        duration="1s",
    )
    t = by_comm(run(text))
    assert t["a"]["last_cpu"] == 1 and t["b"]["last_cpu"] == 1


# One idle CPU serving several waiting RT tasks of equal priority in turn
# (found by tests/core/test_properties.py): each pull sends the push IPI, each
# push moves one task, and the last one waits longer than one push round in
# all. That is progress, not a stuck chain; the checker's window restarts
# with every RT migration.
PUSH_ONE_AT_A_TIME = """
name = "push-one-at-a-time"
[machine]
sockets = 1
cores_per_socket = 1
threads_per_core = 2
[kernel]
version = "4.16"
vmstat_kworkers = false
[measure]
duration = "1000us"
[[task]]
name = "long"
count = 3
policy = "SCHED_FIFO"
rt_priority = 1
program = [{ run = "8us" }, { exit = true }]
[[task]]
name = "short"
count = 4
policy = "SCHED_FIFO"
rt_priority = 1
program = [{ sleep = "1us" }, { exit = true }]
"""


def test_an_rt_push_chain_serving_waiters_in_turn_is_not_a_violation() -> None:
    r = schedlab.run_scenario(text=PUSH_ONE_AT_A_TIME, seed=0, check=True)
    assert r["rt"]["push_ipis"] >= 3 and r["rt"]["rt_migrations"] >= 3
    assert all(t["exit_ns"] is not None for t in r["tasks"] if t["comm"].startswith(("long", "short")))


# A task forked into a group pinned to CPU 0 by a parent on CPU 1, on 2.6.24
# (found by tests/core/test_properties.py): the RT class kept the parent's CPU.
# select_task_rq() sends a CPU outside the mask to select_fallback_rq.
FORK_INTO_A_PINNED_GROUP = """
name = "fork-pinned"
[machine]
sockets = 2
cores_per_socket = 1
threads_per_core = 1
[kernel]
version = "2.6.24"
vmstat_kworkers = false
[measure]
duration = "1000us"
[[task]]
name = "pinned"
count = 0
policy = "SCHED_FIFO"
rt_priority = 1
cpus = [0]
program = [{ run = "1us" }, { exit = true }]
[[task]]
name = "parent"
count = 2
program = [{ run = "1us" }, { fork = "pinned" }, { exit = true }]
"""


@pytest.mark.parametrize("version", ["2.6.24", "2.6.25", "6.6"])
def test_a_forked_task_starts_inside_its_affinity(version: str) -> None:
    r = schedlab.run_scenario(text=FORK_INTO_A_PINNED_GROUP, seed=0, check=True, overrides={"kernel.version": version})
    pinned = [t for t in r["tasks"] if t["comm"].startswith("pinned")]
    assert len(pinned) == 2 and all(t["last_cpu"] == 0 and t["exit_ns"] is not None for t in pinned)
