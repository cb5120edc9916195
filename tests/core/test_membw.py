"""Memory bandwidth (membw/): the streaming work of a node's CPUs shares its
DRAM bandwidth; when they ask for more, the memory-bound share of each
one's work stretches until their traffic is the bandwidth."""

from __future__ import annotations

from typing import Any

import pytest

import schedlab
from schedlab.errors import ScenarioError

pytestmark = pytest.mark.native

COPIERS = """
name = "copiers"
[machine]
preset = "8cpu-llc"
{bandwidth}
[kernel]
vmstat_kworkers = false
[measure]
limit = "10s"
[[task]]
name = "copy"
count = {count}
memory_bound = {share}
memory_traffic = "2.5GB/s"
program = [{{ run = "1s" }}]
"""


def copiers(bandwidth: str | None, count: int = 8, share: float = 1.0) -> Any:
    text = COPIERS.format(
        bandwidth=f'memory_bandwidth = "{bandwidth}"' if bandwidth else "",
        count=count,
        share=share,
    )
    return schedlab.run_scenario(text=text, seed=1)


def elapsed(r: Any) -> float:
    return float(next(g["elapsed_s"] for g in r["groups"] if g["name"] == "copy"))


def test_copiers_that_ask_for_twice_the_bandwidth_take_twice_as_long() -> None:
    r = copiers("10GB/s")
    assert elapsed(r) == pytest.approx(2.0, abs=1e-3)
    (node,) = r["memory_bandwidth"]
    assert node["bandwidth_gbs"] == 10.0
    assert node["traffic_gbs"] == pytest.approx(10.0, abs=0.01)
    assert node["saturated_pct"] == pytest.approx(100.0, abs=0.1)
    assert node["stall_mean"] == pytest.approx(2.0, abs=0.01)


def test_only_the_memory_bound_share_stretches() -> None:
    # Half memory-bound at 2.5 GB/s: 8 ask for 20 of 10 GB/s. At stall x
    # one unit of work takes 0.5 + 0.5 x: traffic 20 / (0.5 + 0.5 x) = 10
    # at x = 3, so 1 s of work takes 2 s.
    r = copiers("10GB/s", share=0.5)
    assert elapsed(r) == pytest.approx(2.0, abs=1e-3)
    assert r["memory_bandwidth"][0]["stall_mean"] == pytest.approx(3.0, abs=0.01)


def test_below_the_bandwidth_nothing_changes() -> None:
    with_bw = copiers("100GB/s")
    without = copiers(None)
    assert elapsed(with_bw) == elapsed(without) == pytest.approx(1.0, abs=1e-3)
    assert "memory_bandwidth" not in without
    assert with_bw["memory_bandwidth"][0]["saturated_pct"] == 0.0
    assert with_bw["memory_bandwidth"][0]["traffic_gbs"] == pytest.approx(20.0, abs=0.01)
    with_bw.pop("memory_bandwidth")
    for key in ("tasks", "groups", "cpus", "schedstat"):
        assert with_bw[key] == without[key], key


def test_the_bandwidth_is_shared_as_tasks_come_and_go() -> None:
    # Four copiers ask for 10 of 10 GB/s: no stall. Four more that start
    # as the first four finish (1 s) never overlap them: nobody waits.
    text = COPIERS.format(bandwidth='memory_bandwidth = "10GB/s"', count=4, share=1.0)
    text += '[[task]]\nname = "late"\ncount = 4\nstart = "1s"\nmemory_bound = 1.0\n'
    text += 'memory_traffic = "2.5GB/s"\nprogram = [{ run = "1s" }]\n'
    r = schedlab.run_scenario(text=text, seed=1)
    assert elapsed(r) == pytest.approx(1.0, abs=1e-3)
    assert r["memory_bandwidth"][0]["saturated_pct"] == 0.0


@pytest.mark.parametrize(
    ("edit", "key", "fragment"),
    [
        ('memory_bandwidth = "fast"', "machine.memory_bandwidth", "GB/s"),
        ('memory_bandwidth = "0GB/s"', "machine.memory_bandwidth", "GB/s"),
    ],
)
def test_a_bad_bandwidth_is_refused(edit: str, key: str, fragment: str) -> None:
    text = COPIERS.format(bandwidth=edit, count=1, share=1.0)
    with pytest.raises(ScenarioError) as e:
        schedlab.run_scenario(text=text, seed=1)
    assert key in str(e.value) and fragment in str(e.value)


def test_traffic_without_a_memory_bound_share_is_refused() -> None:
    text = COPIERS.format(bandwidth='memory_bandwidth = "10GB/s"', count=1, share=0.0)
    with pytest.raises(ScenarioError) as e:
        schedlab.run_scenario(text=text, seed=1)
    assert "task[0].memory_traffic" in str(e.value) and "memory_bound" in str(e.value)
    text = COPIERS.format(bandwidth="", count=1, share=1.0).replace("2.5GB/s", "lots")
    with pytest.raises(ScenarioError) as e:
        schedlab.run_scenario(text=text, seed=1)
    assert "task[0].memory_traffic" in str(e.value)


def test_ktask_vfio_would_be_out_on_a_starved_node() -> None:
    """The control for seed 000's case 2: its bands hold because the socket
    is not saturated; the same experiment on a 20 GB/s node puts usemem
    far above the published +2.9 % beside MAX_NICE helpers."""
    over = {"machine.memory_bandwidth": "20GB/s", "task.ktask.program.0.parallel.work": "26s"}
    alone = schedlab.run_scenario("ktask-vfio", seed=1, overrides={**over, "task.ktask.count": 0})
    nice19 = schedlab.run_scenario("ktask-vfio", seed=1, overrides=over)
    slow = elapsed_of(nice19, "usemem") / elapsed_of(alone, "usemem") - 1
    assert slow > 0.10
    assert nice19["memory_bandwidth"][0]["saturated_pct"] > 50


def elapsed_of(r: Any, group: str) -> float:
    return float(next(g["elapsed_s"] for g in r["groups"] if g["name"] == group))
