"""Text reports from hand-written report dicts (no native module needed)."""

from __future__ import annotations

import copy
from typing import Any

from schedlab.report import format_experiment, format_mpstat, format_run_report, mpstat_clock


def _row(cpu: object, usr: float, nice: float, sys: float, idle: float) -> dict[str, Any]:
    zero = dict.fromkeys(("iowait", "irq", "soft", "steal", "guest", "gnice"), 0.0)
    return {"cpu": cpu, "usr": usr, "nice": nice, "sys": sys, **zero, "idle": idle}


REPORT: dict[str, Any] = {
    "schedlab": "0.1.0",
    "scenario": "tiny",
    "source": "tiny.toml",
    "seed": 1,
    "kernel": {"version": "6.1", "hz": 250, "features": {"GENTLE_FAIR_SLEEPERS": True}, "sysctl": {}},
    "machine": {"name": "2cpu", "nr_cpus": 2, "description": "two CPUs"},
    "sim": {"end_ns": 2_000_000_000, "events": 1234567, "reason": "duration reached"},
    "measure": {"start_ns": 0, "end_ns": 2_000_000_000, "interval_ns": 1_000_000_000},
    "cpus": [],
    "mpstat": {
        "samples": [
            {
                "end_ns": 1_000_000_000,
                "rows": [_row("all", 97.52, 0.0, 1.98, 0.5), _row(0, 98.0, 0.0, 2.0, 0.0), _row(1, 97.04, 0, 1.96, 1)],
            },
            {
                "end_ns": 2_000_000_000,
                "rows": [_row("all", 50.0, 25.0, 0.0, 25.0), _row(0, 100.0, 0, 0, 0), _row(1, 0, 50.0, 0, 50.0)],
            },
        ],
        "average": [_row("all", 73.76, 12.5, 0.99, 12.75), _row(0, 99.0, 0, 1.0, 0), _row(1, 48.52, 25.0, 0.98, 25.5)],
    },
    "tasks": [
        {
            "pid": 101,
            "comm": "hog-0",
            "group": "hog",
            "policy": "SCHED_NORMAL",
            "nice": 0,
            "rt_priority": 0,
            "cpus_allowed": "0-1",
            "start_ns": 0,
            "exit_ns": None,
            "runtime_ns": 1_975_000_000,
            "wait_ns": 12_345_678,
            "nr_switches": 12,
            "nr_voluntary_switches": 2,
            "nr_involuntary_switches": 10,
            "nr_migrations": 3,
            "nr_wakeups": 2,
            "last_cpu": 0,
        },
        {
            "pid": 102,
            "comm": "background-helper",
            "group": "bg",
            "policy": "SCHED_IDLE",
            "nice": 19,
            "runtime_ns": 500_000_000,
            "wait_ns": 1_000_000_000,
            "nr_switches": 7,
            "nr_migrations": 0,
        },
    ],
    "groups": [
        {"name": "hog", "count": 1, "start_ns": 0, "end_ns": None, "elapsed_s": None, "runtime_ns": 1_975_000_000},
        {"name": "bg", "count": 1, "start_ns": 0, "end_ns": 1, "elapsed_s": 1.5, "runtime_ns": 500_000_000},
    ],
    "schedstat": {
        "cpus": [
            {
                "cpu": 0,
                "sched_count": 10,
                "sched_goidle": 1,
                "ttwu_count": 3,
                "ttwu_local": 2,
                "run_ns": 5,
                "wait_ns": 6,
                "timeslices": 7,
                "domains": [],
            }
        ]
    },
    "wasted_cpu_ns": 40_000_000,
    "an_extra_key": {"ignored": True},
}

HEADER = "Linux 6.1 (schedlab) \t2cpu \t(2 CPU)"
COLS = "    %usr   %nice    %sys %iowait    %irq   %soft  %steal  %guest  %gnice   %idle"


def test_mpstat_clock() -> None:
    assert mpstat_clock(0) == "00:00:00"
    assert mpstat_clock(3_723_000_000_000) == "01:02:03"
    assert mpstat_clock(1_500_000_000) == "00:00:01.500"


def test_mpstat_layout_matches_sysstat() -> None:
    text = format_mpstat(REPORT, samples=True)
    assert text.splitlines() == [
        HEADER,
        "",
        "00:00:00     CPU" + COLS,
        "00:00:01     all   97.52    0.00    1.98    0.00    0.00    0.00    0.00    0.00    0.00    0.50",
        "00:00:01       0   98.00    0.00    2.00    0.00    0.00    0.00    0.00    0.00    0.00    0.00",
        "00:00:01       1   97.04    0.00    1.96    0.00    0.00    0.00    0.00    0.00    0.00    1.00",
        "",
        "00:00:01     CPU" + COLS,
        "00:00:02     all   50.00   25.00    0.00    0.00    0.00    0.00    0.00    0.00    0.00   25.00",
        "00:00:02       0  100.00    0.00    0.00    0.00    0.00    0.00    0.00    0.00    0.00    0.00",
        "00:00:02       1    0.00   50.00    0.00    0.00    0.00    0.00    0.00    0.00    0.00   50.00",
        "",
        "Average:     CPU" + COLS,
        "Average:     all   73.76   12.50    0.99    0.00    0.00    0.00    0.00    0.00    0.00   12.75",
        "Average:       0   99.00    0.00    1.00    0.00    0.00    0.00    0.00    0.00    0.00    0.00",
        "Average:       1   48.52   25.00    0.98    0.00    0.00    0.00    0.00    0.00    0.00   25.50",
    ]


def test_mpstat_average_only() -> None:
    lines = format_mpstat(REPORT, samples=False).splitlines()
    assert lines[0] == HEADER
    assert lines[2] == "Average:     CPU" + COLS
    assert len(lines) == 6


def test_run_report() -> None:
    text = format_run_report(REPORT)
    assert "scenario tiny (tiny.toml), seed 1" in text
    assert "1,234,567 events; duration reached" in text
    assert "Average:     all   73.76" in text
    assert "(2 interval sample(s) not shown; --samples prints them)" in text
    lines = text.splitlines()
    t = lines.index("Tasks")
    assert lines[t + 1].split() == [
        "COMM",
        "PID",
        "POLICY",
        "NICE",
        "RUNTIME(ms)",
        "WAIT(ms)",
        "SWITCHES",
        "MIGRATIONS",
    ]
    assert lines[t + 2].split() == ["hog-0", "101", "SCHED_NORMAL", "0", "1975.000", "12.346", "12", "3"]
    assert lines[t + 3].split() == ["background-helper", "102", "SCHED_IDLE", "19", "500.000", "1000.000", "7", "0"]
    # Columns line up: every row of the table has the same width up to the last column.
    assert len({len(line) for line in lines[t + 1 : t + 4]}) == 1
    g = lines.index("Groups")
    assert lines[g + 1].split() == ["GROUP", "TASKS", "ELAPSED(s)", "RUNTIME(ms)"]
    assert lines[g + 2].split() == ["hog", "1", "not", "finished", "1975.000"]
    assert lines[g + 3].split() == ["bg", "1", "1.500", "500.000"]
    assert "Wasted CPU (idle while a task it may run waited): 40.000 ms (1.00% of CPU time)" in text
    assert "Schedstat" not in text
    assert "Schedstat (per CPU)" in format_run_report(REPORT, schedstat=True)
    assert "00:00:02       1    0.00   50.00" in format_run_report(REPORT, samples=True)


def test_run_report_tolerates_missing_sections() -> None:
    minimal = {"schedlab": "0.1.0", "scenario": "x", "seed": 3}
    text = format_run_report(minimal)
    assert "scenario x" in text
    assert "(no mpstat data in this report)" in text
    partial = copy.deepcopy(REPORT)
    del partial["tasks"], partial["groups"], partial["schedstat"], partial["wasted_cpu_ns"]
    partial["mpstat"]["average"][0]["idle"] = None
    text = format_run_report(partial, schedstat=True)
    assert "Tasks" not in text and "Groups" not in text
    all_row = next(line for line in text.splitlines() if line.startswith("Average:     all"))
    assert all_row.endswith("    0.00       -")


RESULT: dict[str, Any] = {
    "experiment": "ktask-nice",
    "title": "ktask helpers at MAX_NICE",
    "source": "scenarios/seeds/ktask-nice.toml",
    "seed_file": "000_6a8301dca5bdbc28.txt",
    "mode": "full",
    "repeat": 3,
    "seeds": [1, 2, 3],
    "metrics": ["stressng_s", "ktask_s", "idle_samples"],
    "derived": {
        "task.ktask.program.0.parallel.work": {
            "value": "700000ms",
            "variant": "normal_prio",
            "metric": "ktask_s",
            "target": 90.81,
            "achieved": 90.8123,
            "evaluations": 7,
            "why": "not published",
        }
    },
    "results": [
        {
            "variant": "alone",
            "params": {},
            "metrics": {"stressng_s": 43.04},
            "stdev": {"stressng_s": 0.0},
            "published": {"stressng_s": 43.04},
        },
        {
            "variant": "max_nice",
            "params": {},
            "metrics": {"stressng_s": 43.5812, "ktask_s": 96.87},
            "stdev": {"stressng_s": 0.01, "ktask_s": 1.09},
            "published": {"stressng_s": 43.58, "ktask_s": 96.87},
            "published_stdev": {"ktask_s": 1.09},
        },
        {
            "variant": "normal_prio",
            "params": {},
            "metrics": {"stressng_s": 75.86, "ktask_s": None, "idle_samples": [1.0, 2.0]},
            "stdev": {"stressng_s": 0.39, "ktask_s": None},
            "published": {"stressng_s": 75.86, "ktask_s": 90.81},
        },
    ],
    "bands": [
        {"name": "slowdown max_nice (%)", "value": 1.2575, "low": 0.0, "high": 3.0, "ok": True},
        {"name": "ktask slower (%)", "value": None, "low": 3.0, "high": 12.0, "ok": False},
    ],
}


def test_experiment_table() -> None:
    lines = format_experiment(RESULT).splitlines()
    assert lines[0] == "ktask-nice: ktask helpers at MAX_NICE"
    assert lines[1] == "scenario scenarios/seeds/ktask-nice.toml, seed 000_6a8301dca5bdbc28.txt"
    assert lines[2] == "full mode: seeds 1..3 per variant; mean (sample stdev) over seeds"
    assert lines[4] == "Derived"
    assert lines[5].startswith("  task.ktask.program.0.parallel.work = 700000ms  (ktask_s = 90.8123 in normal_prio")
    assert lines[6] == "    why: not published"
    head = lines[8]
    assert head.split() == ["alone", "max_nice", "normal_prio"]
    cell = 22
    pad = len("Published ") + len("stressng_s")
    assert lines[9] == (
        "Amean     stressng_s"
        + "     43.04 (   0.00)".rjust(cell)
        + "     43.58 (   0.01)".rjust(cell)
        + "     75.86 (   0.39)".rjust(cell)
    )
    published = "".join(
        v.rjust(cell) for v in ("     43.04" + " " * 10, "     43.58" + " " * 10, "     75.86" + " " * 10)
    )
    assert lines[10] == "Published stressng_s" + published.rstrip()
    assert len(head) == pad + 3 * cell
    assert lines[11].split() == ["Amean", "ktask_s", "-", "96.87", "(", "1.09)", "-"]
    assert lines[12].split() == ["Published", "ktask_s", "-", "96.87", "(", "1.09)", "90.81"]
    assert lines[13] == "(idle_samples: a per-sample series, 2 points per variant; see --json)"
    assert lines[15] == "Bands"
    assert lines[16].split() == ["slowdown", "max_nice", "(%)", "1.26", "in", "[0.0,", "3.0]", "ok"]
    assert lines[17].split()[-5:] == ["n/a", "in", "[3.0,", "12.0]", "OUT"]
    assert lines[18] == "1 of 2 bands ok"


def test_experiment_table_small_values_get_four_decimals() -> None:
    result = {"experiment": "x", "results": [{"variant": "a", "metrics": {"m": 0.0501}, "stdev": {"m": 0.0002}}]}
    assert format_experiment(result).splitlines()[-1].split() == ["Amean", "m", "0.0501", "(", "0.0002)"]


def test_experiment_table_tolerates_missing_sections() -> None:
    text = format_experiment({"experiment": "x", "results": [{"variant": "a", "metrics": {"m": 1.0}}]})
    assert text.splitlines()[0] == "x"
    assert "Amean" in text and "Published" not in text and "Bands" not in text


def test_proc_schedstat_v15_layout() -> None:
    """/proc/schedstat v15: a cpu line of 9 fields, domain lines of a hex mask
    then 36 numbers (3 idle types x 8, then 12 trailing)."""
    from schedlab.report import proc_schedstat

    report = {
        "machine": {"nr_cpus": 40},
        "kernel": {"hz": 250},
        "sim": {"end_ns": 2_000_000_000},
        "schedstat": {
            "cpus": [
                {
                    "cpu": 0,
                    "sched_count": 5,
                    "sched_goidle": 1,
                    "ttwu_count": 2,
                    "ttwu_local": 1,
                    "run_ns": 10,
                    "wait_ns": 3,
                    "timeslices": 4,
                    "domains": [
                        {
                            "name": "MC",
                            "cpus": "0-3,33",
                            "lb_count": [1, 2, 3],
                            "lb_balanced": [0, 0, 0],
                            "lb_failed": [0, 0, 0],
                            "lb_imbalance": [0, 0, 0],
                            "lb_gained": [0, 7, 0],
                            "lb_nobusyq": [0, 0, 0],
                            "lb_nobusyg": [0, 0, 0],
                            "alb_count": 9,
                            "alb_failed": 0,
                            "alb_pushed": 8,
                            "ttwu_wake_remote": 0,
                            "ttwu_move_affine": 0,
                        }
                    ],
                }
            ]
        },
    }
    lines = proc_schedstat(report).splitlines()
    assert lines[0] == "version 15" and lines[1] == "timestamp 500"
    assert lines[2].split() == ["cpu0", "0", "0", "5", "1", "2", "1", "10", "3", "4"]
    dom = lines[3].split()
    assert dom[0] == "domain0" and dom[1] == "02,0000000f"
    nums = [int(x) for x in dom[2:]]
    assert len(nums) == 36
    assert nums[0] == 1 and nums[8] == 2 and nums[16] == 3  # lb_count per idle type
    assert nums[8 + 4] == 7  # busy lb_gained
    assert nums[24:27] == [9, 0, 8]  # alb_count, alb_failed, alb_pushed
