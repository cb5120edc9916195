"""The `exec` op: execve()'s sched_exec() balances the task from the highest
domain with SD_BALANCE_EXEC, as a fork does, and the stopper moves it
(kernel/sched/core.c). A shell forking a program and waiting for it, as
git's test suite does, so has each child moved once more after its fork."""

from __future__ import annotations

from typing import Any

import pytest

import schedlab
from schedlab.errors import ScenarioError

CHAIN = """
name = "chain"
[machine]
sockets = 2
cores_per_socket = 4
[kernel]
version = "{version}"
vmstat_kworkers = false
[measure]
duration = "200ms"
[[task]]
name = "sh"
cpus = "0"
program = [{{ loop = {{ count = 0, body = [{{ run = "100us" }}, {{ fork = "prog" }}, {{ wait = "done" }}] }} }}]
[[task]]
name = "prog"
count = 0
policy = "{policy}"
{prio}
program = [{exec}{{ run = "2ms" }}, {{ signal = "done" }}, {{ exit = true }}]
"""


def chain(exec_: bool = True, version: str = "5.5", policy: str = "SCHED_NORMAL") -> Any:
    text = CHAIN.format(
        version=version,
        policy=policy,
        prio="rt_priority = 10" if policy == "SCHED_FIFO" else "",
        exec="{ exec = true }, " if exec_ else "",
    )
    return schedlab.run_scenario(text=text, overrides={"task.sh.cpus": "0"}, seed=1)


def moves(r: Any) -> int:
    return int(sum(t["nr_migrations"] for t in r["tasks"] if t["comm"] == "prog"))


@pytest.mark.parametrize("version", ["2.6.35", "4.19"])
def test_before_5_5_a_task_that_execs_moves_off_the_cpu_its_fork_chose(version: str) -> None:
    # The old find_idlest_group() counts the task's own load on its CPU,
    # so another idle CPU always looks idler: every child moves once more.
    without, with_exec = chain(False, version), chain(True, version)
    children = sum(1 for t in with_exec["tasks"] if t["comm"] == "prog")
    assert moves(without) == 0
    assert children > 50 and moves(with_exec) == children


@pytest.mark.parametrize("version", ["5.5", "6.12"])
def test_from_5_5_exec_keeps_a_task_whose_cpu_is_otherwise_idle(version: str) -> None:
    # 5.5's find_idlest_group() rework counts the CPU as idle without the
    # task (idle_cpu_without()), and a tie in idle CPUs keeps the local
    # group, down to the CPU itself.
    assert moves(chain(True, version)) == 0


def test_exec_balances_a_task_whose_cpu_is_busy() -> None:
    # Eight hogs on CPUs 1-7: the fork puts a child beside a hog, and at
    # exec a CPU with less load is found for it, on 5.5 too.
    text = CHAIN.format(version="5.5", policy="SCHED_NORMAL", prio="", exec="{ exec = true }, ")
    text += '[[task]]\nname = "hog"\ncount = 8\ncpus = "1-7"\nprogram = [{ run = "1s" }]\n'
    r = schedlab.run_scenario(text=text, seed=1)
    assert moves(r) > 0


def test_an_rt_task_is_not_balanced_at_exec() -> None:
    assert moves(chain(True, policy="SCHED_FIFO")) == 0


def test_exec_takes_only_true() -> None:
    text = CHAIN.format(version="5.5", policy="SCHED_NORMAL", prio="", exec="{ exec = 1 }, ")
    with pytest.raises(ScenarioError, match=r"task\[1\]\.program\[0\]\.exec.*true"):
        schedlab.run_scenario(text=text)
