"""cpuidle and placement: find_idlest_group_cpu() prefers the idle CPU in the
shallowest idle state, whatever its idle timestamp (83a0a96a5f26, 3.16),
and among equals the most recently idled one."""

from __future__ import annotations

from collections import Counter

import pytest

import schedlab

pytestmark = pytest.mark.native

#: A parent on CPU 0 forks a short child every 1.35 ms; CPUs 1-3 run hogs,
#: so each child goes to the other socket's idle CPU 4 or 5. CPU 4 idles
#: 500 us at a time (C1E: C6 does not fit), CPU 5 3 ms (C6); CPU 5 is the
#: more recently idled of the two about one fork in ten.
SCEN = """
name = "shallowest"
[machine]
sockets = 2
cores_per_socket = 3
cpuidle = "{cpuidle}"
[kernel]
version = "5.5"
vmstat_kworkers = false
[measure]
warmup = "100ms"
duration = "1s"
[[task]]
name = "parent"
cpus = "0"
program = [{{ loop = {{ count = 0, body = [{{ run = "50us" }}, {{ fork = "child" }}, {{ sleep = "1300us" }}] }} }}]
[[task]]
name = "child"
count = 0
program = [{{ run = "10us" }}, {{ exit = true }}]
[[task]]
name = "short"
cpus = "4"
program = [{{ loop = {{ count = 0, body = [{{ run = "20us" }}, {{ sleep = "500us" }}] }} }}]
[[task]]
name = "long"
cpus = "5"
program = [{{ loop = {{ count = 0, body = [{{ run = "20us" }}, {{ sleep = "3ms" }}] }} }}]
[[task]]
name = "hog"
count = 3
cpus = "1-3"
program = [{{ run = "10s" }}]
"""


def placed(cpuidle: str) -> Counter[int | None]:
    r = schedlab.run_scenario(text=SCEN.format(cpuidle=cpuidle), seed=1)
    return Counter(t["last_cpu"] for t in r["tasks"] if t["comm"] == "child")


def test_a_fork_prefers_the_shallowest_idle_state_over_the_latest_idle() -> None:
    with_states, without = placed("skx"), placed("none")
    total = sum(with_states.values())
    assert total > 600 and set(with_states) <= {4, 5}
    # With the states CPU 5 (C6) gets a child only while CPU 4 is busy (20 us
    # of every 520); without a driver the later idle stamp wins more often.
    assert with_states[5] < 0.07 * total
    assert without[5] > with_states[5] + 40
