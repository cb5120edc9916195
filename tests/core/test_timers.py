"""hrtimer slack (kernel.costs.timer_slack): a fair task's sleep timer fires
anywhere in [expiry, expiry + slack]; with the tick of its CPU inside that
range it runs in the same interrupt, after scheduler_tick, else at
expiry + slack. RT tasks sleep without slack."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import schedlab

BATCH = """
name = "slack"
[machine]
sockets = 1
cores_per_socket = 2
[kernel]
version = "6.1"
vmstat_kworkers = false
{costs}
[measure]
duration = "2s"
[[task]]
name = "hog"
cpus = "0"
program = [{{ loop = {{ count = 0, body = [{{ run = "100ms" }}] }} }}]
[[task]]
name = "b"
policy = "{policy}"
{prio}
cpus = "0"
program = [{{ loop = {{ count = 0, body = [{{ timer = "10ms" }}, {{ run = "1ms" }}] }} }}]
"""


#: No switch or idle-exit cost: a task's first op (and so its periodic
#: timer's epoch) is then at time 0, and every other expiry is on a tick.
ZERO_COSTS = 'context_switch = "0ns"\nidle_exit = "0ns"\n'


def hist(policy: str = "SCHED_BATCH", costs: str = "", prio: str = "") -> list[int]:
    costs = "[kernel.costs]\n" + ZERO_COSTS + costs
    r = schedlab.run_scenario(text=BATCH.format(policy=policy, costs=costs, prio=prio), seed=1, check=True)
    t = next(t for t in r["tasks"] if t["comm"] == "b")
    return list(t["wakeup_latency_hist_us"])


def test_batch_wakeups_wait_for_a_tick_and_slack_moves_them_past_it() -> None:
    # HZ=250: the 10 ms timer falls on a tick every other period, 2 ms before
    # one otherwise. A BATCH wakee never preempts: it runs at the next tick.
    with_slack = hist()
    # On a tick: the timer runs after scheduler_tick, so it waits a whole
    # tick (bucket [2048, 4096) us); else it fires 50 us late and waits
    # ~1.95 ms (bucket [1024, 2048) us). Nothing runs at once.
    assert sum(with_slack[:11]) == 0, with_slack
    assert with_slack[11] > 0 and with_slack[12] > 0, with_slack
    no_slack = hist(costs='timer_slack = "0ns"')
    # Without slack the on-tick wakeups are seen by that tick: no delay.
    assert no_slack[0] > 0, no_slack


def test_rt_sleepers_have_no_slack() -> None:
    rt = hist(policy="SCHED_FIFO", prio="rt_priority = 10")
    assert sum(rt[1:]) == 0, rt  # an RT wakee preempts the hog at once


@pytest.mark.parametrize(("mode", "anchor", "first", "third"), [
    ("absolute", "first_use", 12, 32),  # first use at 2 ms; late at 24: keeps the grid (22), next 32
    ("relative", "first_use", 12, 34),  # late at 24: the grid moves to 24, next 34
    ("absolute", "start", 10, 30),  # rt-app's grid from the task's start
    ("relative", "start", 10, 32),  # late at 22: next 32
])  # fmt: skip
def test_timer_modes_and_anchors(tmp_path: Path, mode: str, anchor: str, first: int, third: int) -> None:
    """A 10 ms periodic timer first used after 2 ms of work, whose second
    period overruns (12 ms of work): a late timer does not sleep, and its
    mode says where the grid goes on (the ms of each sleep's expiry)."""
    trace = tmp_path / "t.txt"
    timer = f'{{ timer = {{ period = "10ms", mode = "{mode}", anchor = "{anchor}" }} }}'
    text = f"""
[machine]
preset = "4cpu"
[measure]
duration = "100ms"
[[task]]
name = "p"
program = [{{ run = "2ms" }}, {timer}, {{ run = "12ms" }}, {timer}, {{ run = "1ms" }}, {timer}, {{ run = "1ms" }}]
"""
    schedlab.run_scenario(text=text, trace=str(trace))
    expiries = [int(m) / 1e6 for m in re.findall(r"softexpires=(\d+)", trace.read_text())]
    assert len(expiries) == 2, expiries
    assert expiries[0] == pytest.approx(first, abs=0.2) and expiries[1] == pytest.approx(third, abs=0.2), expiries
