"""schedlab.metrics: one reader for simulator and real reports, over the
measurement window (the simulator's per-task "window" counters; the runner's
counters, which are window deltas already)."""

from __future__ import annotations

from typing import Any

import pytest

from schedlab.metrics import MetricError, ReportView, parse_cpulist, percentile, reduce_samples, row_field

#: A simulator-shaped report: a 2 s window after a 1 s warm-up; the tasks'
#: own counters count from time 0, their "window" over the window only.
SIM: dict[str, Any] = {
    "machine": {"nr_cpus": 2},
    "measure": {"start_ns": 1_000_000_000, "end_ns": 3_000_000_000},
    "tasks": [
        {"pid": 1, "comm": "a", "group": "g", "runtime_ns": 2_900_000_000, "nr_switches": 30, "nr_migrations": 3,
         "window": {"runtime_ns": 2_000_000_000, "nr_switches": 20, "nr_migrations": 2}},
        {"pid": 2, "comm": "b", "group": "g", "runtime_ns": 1_500_000_000, "nr_switches": 15, "nr_migrations": 1,
         "window": {"runtime_ns": 1_000_000_000, "nr_switches": 10, "nr_migrations": 0}},
    ],
    "mpstat": {"average": [{"cpu": "all", "idle": 25.0}, {"cpu": 0, "idle": 0.0}, {"cpu": 1, "idle": 50.0}]},
    "migrations": 4,  # from time 0
    "wasted_cpu_ns": 40_000_000,
}  # fmt: skip

#: A runner-shaped report: no "window", the counters are window deltas.
REAL: dict[str, Any] = {
    "source": "real",
    "measure": {"start_ns": 500_000_000, "end_ns": 1_500_000_000},
    "tasks": [
        {"comm": "a", "group": "g", "runtime_ns": 600_000_000, "nr_switches": 8, "nr_migrations": None,
         "timer_delay_count": 3, "timer_delay_p50_ns": 55_000, "timer_delay_p90_ns": 90_000},
        {"comm": "b", "group": "g", "runtime_ns": 300_000_000, "nr_switches": 4, "nr_migrations": 1,
         "timer_delay_count": 0, "timer_delay_p50_ns": None},
    ],
    "mpstat": {"average": [{"cpu": "all", "idle": 55.0}, {"cpu": 0, "idle": 40.0}, {"cpu": 1, "idle": 70.0}]},
    "migrations": 1,
    "timer_delay": {"count": 3, "p50_ns": 55_000, "p90_ns": 90_000},
}  # fmt: skip


def test_sim_report_reads_the_window_counters() -> None:
    r = ReportView(SIM)
    assert r.has_window_counters
    assert r.window_s == 2.0
    a = r.task("a")
    assert (a.runtime_ns, a.nr_switches, a.nr_migrations) == (2e9, 20.0, 2.0)
    assert r.share_pct(a) == 100.0 and r.share_pct(r.task("b")) == 50.0
    assert r.switches() == 30.0 and r.per_s(r.switches()) == 15.0
    assert r.migrations(r.group_tasks("g")) == 2.0
    # The report-wide "migrations" counts from time 0: the total is the windows'.
    assert r.total_migrations() == 2.0


def test_real_report_counters_are_the_window() -> None:
    r = ReportView(REAL)
    assert not r.has_window_counters
    assert r.window_s == 1.0
    assert r.share_pct(r.task("a")) == pytest.approx(60.0)
    assert r.per_s(r.switches()) == 12.0
    assert r.migrations([r.task("b")]) == 1.0
    assert r.migrations(list(r.tasks.values())) is None  # a's was not measured
    assert r.total_migrations() == 1.0  # the runner's own total
    assert r.timer_delay_us("a", 90) == 90.0 and r.timer_delay_us(None, 50) == 55.0
    assert r.timer_delay_us("b", 50) is None  # measured none
    assert ReportView(SIM).timer_delay_us("a", 50) is None


def test_cpus() -> None:
    r = ReportView(REAL)
    assert r.idle() == {"all": 55.0, "0": 40.0, "1": 70.0}
    assert r.idle_pct("1") == 70.0 and r.mean_idle_pct("0-1") == 55.0
    assert r.mpstat_row(r.mpstat_average(), "0")["idle"] == 40.0


def test_keys() -> None:
    r = ReportView(SIM)
    assert r.key("machine.nr_cpus") == 2
    assert r.key("wasted_cpu_pct") == 1.0  # 40 ms of 2 CPUs x 2 s, computed
    with pytest.raises(MetricError, match="report key 'nope' is not in the report; accepted: migrations"):
        r.key("nope")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda r: r.task("zz"), "task 'zz' is not in the report; accepted: a, b"),
        (lambda r: r.group_tasks("h"), "a task of group 'h' is not in the report; accepted: g"),
        (lambda r: r.idle_pct("7"), "mpstat CPU 7 is not in the report; accepted: all, 0, 1"),
        (lambda r: r.group_row("g"), "group 'g' is not in the report; accepted: (nothing there)"),
        (lambda r: row_field(r.task_row("a"), "colour"), "field 'colour' is not in the report; accepted: comm"),
    ],
)
def test_missing_things_name_what_the_report_has(call: Any, message: str) -> None:
    with pytest.raises(MetricError) as e:
        call(ReportView(REAL))
    assert str(e.value).startswith(message)


def test_no_window() -> None:
    r = ReportView({"tasks": [{"comm": "a", "runtime_ns": 5}], "measure": {"start_ns": 3, "end_ns": 3}})
    assert r.window_s is None and r.share_pct(r.task("a")) is None and r.per_s(1.0) is None


@pytest.mark.native
def test_a_simulated_cpu_is_fully_accounted_over_the_window() -> None:
    """Two hogs pinned on one CPU after a warm-up: their window runtimes add
    up to the whole window (the window counters include the running task's
    current stretch at both ends)."""
    import schedlab

    text = (
        'name = "w"\n[machine]\npreset = "4cpu"\n[kernel]\nversion = "6.1"\n'
        '[measure]\nwarmup = "1s"\nduration = "2s"\n'
        '[[task]]\nname = "hog"\ncount = 2\ncpus = "0"\n'
        'program = [{ loop = { count = 0, body = [{ run = "7ms" }] } }]\n'
    )
    r = ReportView(schedlab.run_scenario(text=text, seed=1))
    shares = [r.share_pct(t) for t in r.tasks.values()]
    assert sum(s for s in shares if s is not None) == pytest.approx(100.0 - r.idle_pct("0"), abs=0.01)


def test_helpers() -> None:
    assert parse_cpulist("0-3,8") == [0, 1, 2, 3, 8]
    # The core's parser (the one a scenario's cpus go through): an empty
    # part between commas is skipped, as it always was for a scenario.
    assert parse_cpulist("1,,2") == [1, 2]
    for bad in ("", "3-1", "a", "1,x", "8192"):
        with pytest.raises(ValueError):
            parse_cpulist(bad)
    assert percentile([], 50) is None
    assert percentile([float(x) for x in range(1, 101)], 90) == 90.0
    assert percentile([5.0], 99) == 5.0
    assert reduce_samples([1.0, 4.0, 2.0], "range") == 3.0
    assert reduce_samples([2.0], "stdev") == 0.0
    assert reduce_samples([], "min") is None
