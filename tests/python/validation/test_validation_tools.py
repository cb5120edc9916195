"""The validation suite's real-tool entries: parsing what the tools print,
and the simulator's side of the same figures."""

from __future__ import annotations

import pytest

from schedlab import native
from schedlab._paths import VALIDATION
from schedlab.errors import ScenarioError
from schedlab.scenarios import read_text
from schedlab.validation.runners import parse_tool_output, real_side, sim_side
from schedlab.validation.suite import DEFAULT_SUITE, load_suite

PERF = """# Running 'sched/pipe' benchmark:
# Executed 2000 pipe operations between two processes

     Total time: 0.037 [sec]

      18.742500 usecs/op
"""
HACKBENCH = "Running in process mode with 2 groups using 40 file descriptors each (== 80 tasks)\nTime: 0.136\n"
CYCLICTEST = """# /dev/cpu_dma_latency set to 0us
T: 0 (   94) P:99 I:1000 C:    200 Min:      3 Act:    3 Avg:    3 Max:       4
T: 1 (   95) P:99 I:1000 C:    200 Min:      3 Act:    4 Avg:    5 Max:      12
"""


def test_what_the_tools_print() -> None:
    assert parse_tool_output(PERF, "tool_time", None) == 0.037
    assert parse_tool_output(HACKBENCH, "tool_time", None) == 0.136
    assert parse_tool_output(CYCLICTEST, "latency_avg", 1) == 5.0
    assert parse_tool_output(CYCLICTEST, "latency_max", 0) == 4.0
    assert parse_tool_output(CYCLICTEST, "latency_max", 2) is None
    assert real_side({"source": "real-tool", "tool": {"stdout": HACKBENCH}}).tool_value("tool_time", None) == 0.136


def test_the_simulator_side_of_a_tool_entry() -> None:
    f = VALIDATION / "perf-pipe-pinned.toml"
    side = sim_side(native.run(read_text(f), str(f), 1, [("kernel.version", '"6.1"')], False))
    t = side.tool_value("tool_time", None)
    # 20,000 round trips of two writes, two reads and two switches on one CPU.
    assert t is not None and 0.09 < t < 0.12


def test_tool_metrics_need_a_tool_and_a_tool_entry_only_tool_metrics(tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert any(e.tool for e in load_suite(DEFAULT_SUITE).entries)
    (tmp_path / "s.toml").write_text(read_text(VALIDATION / "nice-pinned.toml"))
    bad = '[[scenario]]\nname = "x"\nfile = "s.toml"\nmetrics = [{ metric = "tool_time", tol = "±30 %" }]\n'
    (tmp_path / "suite.toml").write_text(bad)
    with pytest.raises(ScenarioError, match="needs the entry's `tool`"):
        load_suite(tmp_path / "suite.toml")
    bad = bad.replace("metrics", 'tool = ["hackbench"]\nmetrics').replace("tool_time", "switches")
    (tmp_path / "suite.toml").write_text(bad.replace("±30 %", "±30 %"))
    with pytest.raises(ScenarioError, match="not measured when the entry runs a `tool`"):
        load_suite(tmp_path / "suite.toml")


def test_a_tool_run_on_this_host_is_a_guests_tool_record() -> None:
    from schedlab.validation.runners import _tool_program, host_preempt, host_series, local_tool

    doc = local_tool(["sh", "-c", "echo 'Time: 1.5'"])
    assert doc["source"] == "real-tool" and doc["oracle"]["exit_status"] == 0
    assert parse_tool_output(doc["tool"]["stdout"], "tool_time", None) == 1.5
    # The simulator runs this host's release (sim_version reads host).
    assert doc["host"]["kernel_release"].startswith(host_series() + ".")
    assert host_preempt() in (None, "none", "voluntary", "full")
    # What each suite tool needs installed.
    assert _tool_program(["taskset", "-c", "0", "perf", "bench"]) == "perf"
    assert _tool_program(["hackbench", "-g", "1"]) == "hackbench"
    assert _tool_program(["sh", "-c", "(loop) & cyclictest -m; kill %1"]) == "cyclictest"
