"""schedlab.load(): reports and ftrace text as DataFrames with LISA's column
names, checked against the report's own counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import schedlab
from schedlab.errors import UsageError
from schedlab.frames import parse_ftrace

pd = pytest.importorskip("pandas")
pytestmark = pytest.mark.native

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path, Path]:  # type: ignore[type-arg]
    d = tmp_path_factory.mktemp("frames")
    trace = d / "trace.txt"
    report = schedlab.run_scenario(
        REPO / "validation" / "smt-numa-wakers.toml", seed=1, overrides={"measure.samples": True}, trace=str(trace)
    )
    js = d / "r.json"
    js.write_text(json.dumps(report))
    return dict(report), js, trace


def test_report_tables(run: tuple[dict, Path, Path]) -> None:  # type: ignore[type-arg]
    report, js, _ = run
    t = schedlab.load(js)
    assert t.backend == "pandas"
    assert set(t.names()) == {"tasks", "cpus", "mpstat", "samples", "schedstat", "timer_delays", "wakeup_latencies"}
    assert len(t.tasks) == len(report["tasks"])
    assert t.tasks["nr_switches"].sum() == sum(x["nr_switches"] for x in report["tasks"])
    assert "window_runtime_ns" in t.tasks.columns
    assert len(t.cpus) == report["machine"]["nr_cpus"]
    assert len(t.samples) == sum(len(s["rows"]) for s in report["mpstat"]["samples"]) > 0
    # /proc/schedstat: one row per CPU and domain, the idle types spread out.
    assert len(t.schedstat) == sum(len(c["domains"]) for c in report["schedstat"]["cpus"])
    assert {"lb_count_idle", "lb_count_busy", "lb_count_newly_idle"} <= set(t.schedstat.columns)
    # The same tables from the dict run_scenario returns.
    assert schedlab.load(report).tasks.equals(t.tasks)


def test_trace_tables_have_lisas_columns_and_the_reports_count(run: tuple[dict, Path, Path]) -> None:  # type: ignore[type-arg]
    report, _, trace = run
    t = schedlab.load(trace)
    sw = t.df_event("sched_switch")
    assert sw.index.name == "Time"
    assert list(sw.columns[:3]) == ["__cpu", "__pid", "__comm"]
    for col in ("prev_comm", "prev_pid", "prev_prio", "prev_state", "next_comm", "next_pid", "next_prio"):
        assert col in sw.columns
    assert {"comm", "pid", "prio", "target_cpu"} <= set(t.df_event("sched_wakeup").columns)
    # Every traced event is a row: the report counts them (but sched_waking,
    # written only when traced).
    assert sum(len(t[n]) for n in t.names() if n != "sched_waking") == report["sim"]["trace_events"]
    # A task's switches in: its next_pid rows.
    pid = report["tasks"][0]["pid"]
    ins = int((sw["next_pid"] == pid).sum())
    assert ins == report["tasks"][0]["nr_switches"]


def test_parse_ftrace_reads_kernel_and_trace_cmd_lines() -> None:
    lines = [
        "# tracer: nop",
        "          <idle>-0       [001] d..2.   123.456789: sched_switch: prev_comm=swapper/1 prev_pid=0 "
        "prev_prio=120 prev_state=R ==> next_comm=hog next_pid=42 next_prio=120",
        "             hog-42    [001]  123.456800: sched_wakeup: comm=x pid=7 prio=120 target_cpu=003",
    ]
    ev = parse_ftrace(lines)
    assert ev["sched_switch"][0]["next_pid"] == 42 and ev["sched_switch"][0]["__comm"] == "<idle>"
    assert ev["sched_wakeup"][0] == {
        "Time": 123.4568,
        "__cpu": 1,
        "__pid": 42,
        "__comm": "hog",
        "comm": "x",
        "pid": 7,
        "prio": 120,
        "target_cpu": 3,
    }


def test_bad_inputs_are_refused(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text('{"a": 1}')
    (tmp_path / "x.txt").write_text("hello\n")
    for p, what in (
        (tmp_path / "x.json", "no 'tasks'"),
        (tmp_path / "x.txt", "no trace events"),
        (tmp_path / "no", "cannot read"),
    ):
        with pytest.raises(UsageError, match=what):
            schedlab.load(p)
    with pytest.raises(UsageError, match="accepted: pandas, polars"):
        schedlab.load(tmp_path / "x.json", backend="numpy")
