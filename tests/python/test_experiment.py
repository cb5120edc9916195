"""Experiments: the [experiment]/[[variant]] tables as the core reads and
checks them (schedlab_core::scenario::experiment), metric extraction,
aggregation, bands, the workload solver, and a whole run against a
synthetic runner."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from _toml import tomllib
from schedlab.errors import ScenarioError
from schedlab.experiment import (
    Band,
    Experiment,
    MetricSpec,
    SolveError,
    aggregate,
    evaluate_band,
    extract_metric,
    solve_monotone,
)
from schedlab.units import parse_duration_ns

EXPERIMENT = """
name = "toy"
[machine]
preset = "8cpu-llc"
[kernel]
version = "5.5"
[[task]]
name = "stressng"
count = 7
program = [ { run = "40s" } ]
[[task]]
name = "ktask"
count = 1
program = [ { parallel = { work = "100s", threads = 8 } } ]

[experiment]
name = "toy-nice"
title = "a toy experiment"
seed_file = "000_x.txt"
repeat = 3
quick_repeat = 1
quick_set = { "measure.interval" = "2s" }
[experiment.metrics]
stressng_s = { group = "stressng", field = "elapsed_s" }
ktask_s = { group = "ktask", field = "elapsed_s" }
idle_pct = { mpstat = "average", cpu = "all", field = "idle" }
idle_samples = { mpstat = "samples", cpu = "all", field = "idle" }
wasted = { report = "wasted_cpu_pct" }
[[experiment.derive]]
key = "task.stressng.program.0.run"
variant = "alone"
metric = "stressng_s"
target = 43.04
low = "1s"
high = "200s"
why = "stress-ng's work is what takes 43.04 s alone"
[[experiment.derive]]
key = "task.ktask.program.0.parallel.work"
variant = "normal_prio"
metric = "ktask_s"
target = 90.81
low = "100s"
high = "2000s"
[[experiment.band]]
name = "stress-ng slowdown with max_nice (%)"
kind = "pct_change"
num = "max_nice.stressng_s"
den = "alone.stressng_s"
low = 0.0
high = 3.0
[[experiment.band]]
name = "stress-ng slowdown with normal_prio (%)"
num = "normal_prio.stressng_s"
den = "alone.stressng_s"
low = 60.0
high = 90.0
[[experiment.band]]
name = "ktask alone (s)"
kind = "value"
of = "max_nice.ktask_s"
low = 90.0
high = 110.0

[[variant]]
name = "alone"
set = { "task.ktask.count" = 0 }
metrics = ["stressng_s", "idle_pct", "idle_samples", "wasted"]
published = { stressng_s = 43.04 }
[[variant]]
name = "max_nice"
set = { kernel.ktask.helper_nice = 19 }
metrics = ["stressng_s", "ktask_s"]
published = { stressng_s = 43.58, ktask_s = 96.87 }
published_stdev = { ktask_s = 1.09 }
[[variant]]
name = "normal_prio"
set = { kernel.ktask.helper_nice = 0 }
metrics = ["stressng_s", "ktask_s"]
published = { stressng_s = 75.86, ktask_s = 90.81 }
"""


def _exp(text: str = EXPERIMENT) -> Experiment:
    exp = Experiment.read(text, "toy.toml", "toy")
    assert exp is not None
    return exp


def test_parse() -> None:
    exp = _exp()
    assert exp.name == "toy-nice"
    assert (exp.repeat, exp.quick_repeat) == (3, 1)
    assert exp.quick_set == [("measure.interval", "2s")]
    assert [v.name for v in exp.variants] == ["alone", "max_nice", "normal_prio"]
    assert exp.variants[1].overrides == [("kernel.ktask.helper_nice", 19)]
    assert exp.variants[1].published == {"stressng_s": 43.58, "ktask_s": 96.87}
    assert exp.metrics["idle_samples"] == MetricSpec("idle_samples", "mpstat", "samples", "idle", "all")
    assert exp.metrics["idle_samples"].is_list
    assert [(d.key, d.low_ms, d.high_ms) for d in exp.derives] == [
        ("task.stressng.program.0.run", 1_000, 200_000),
        ("task.ktask.program.0.parallel.work", 100_000, 2_000_000),
    ]
    assert exp.bands[1].kind == "pct_change"  # the default kind
    assert exp.bands[2] == Band("ktask alone (s)", "value", 90.0, 110.0, of="max_nice.ktask_s")


def _broken(old: str, new: str) -> str:
    assert old in EXPERIMENT
    return EXPERIMENT.replace(old, new, 1)


@pytest.mark.parametrize(
    ("old", "new", "code", "where"),
    [
        ('title = "a toy', 'colour = "red"\ntitle = "a toy', "SL101", "experiment.colour"),
        ("repeat = 3", "repeat = 0", "SL102", "experiment.repeat"),
        ("repeat = 3", 'repeat = "3"', "SL102", "experiment.repeat"),
        (
            'field = "idle" }\nidle_samples',
            'field = "busy" }\nidle_samples',
            "SL102",
            "experiment.metrics.idle_pct.field",
        ),
        ('{ group = "ktask", field = "elapsed_s" }', '{ field = "elapsed_s" }', "SL102", "experiment.metrics.ktask_s"),
        (
            '{ group = "ktask", field = "elapsed_s" }',
            '{ group = "ktask" }',
            "SL103",
            "experiment.metrics.ktask_s.field",
        ),
        ('{ group = "ktask", field = "elapsed_s" }', '{ group = "k", field = "f", cpu = 1 }', "SL101", "ktask_s.cpu"),
        ('mpstat = "average"', 'mpstat = "median"', "SL102", "experiment.metrics.idle_pct.mpstat"),
        ('variant = "alone"', 'variant = "lonely"', "SL102", "experiment.derive[0].variant"),
        ('metric = "stressng_s"', 'metric = "idle_samples"', "SL102", "experiment.derive[0].metric"),
        ('low = "1s"', 'low = "1 parsec"', "SL102", "experiment.derive[0].low"),
        ('high = "200s"', 'high = "1s"', "SL102", "experiment.derive[0].high"),
        ("target = 43.04", 'target = "fast"', "SL102", "experiment.derive[0].target"),
        ("target = 43.04", "", "SL103", "experiment.derive[0].target"),
        ('kind = "pct_change"', 'kind = "median"', "SL102", "experiment.band[0].kind"),
        ('num = "max_nice.stressng_s"', 'num = "max_nice.idle_pct"', "SL102", "experiment.band[0].num"),
        ('num = "max_nice.stressng_s"', 'num = "nobody.stressng_s"', "SL102", "experiment.band[0].num"),
        ('of = "max_nice.ktask_s"', 'of = "max_nice.ktask_s"\nnum = "a.b"', "SL101", "experiment.band[2].num"),
        ("low = 60.0", "low = 95.0", "SL102", "experiment.band[1].high"),
        ('name = "max_nice"', 'name = "alone"', "SL102", "variant[1].name"),
        ('name = "max_nice"', 'name = "max.nice"', "SL102", "variant[1].name"),
        ('metrics = ["stressng_s", "ktask_s"]', 'metrics = ["stressng_s", "nope"]', "SL102", "variant[1].metrics"),
        ("published = { stressng_s = 43.04 }", "published = { nope = 1.0 }", "SL102", "variant[0].published.nope"),
        ("published = { stressng_s = 43.04 }", "extra = 1", "SL101", "variant[0].extra"),
        ('set = { "task.ktask.count" = 0 }', "set = 5", "SL102", "variant[0].set"),
        ('set = { "task.ktask.count" = 0 }', 'set = { "a..b" = 0 }', "SL102", "variant[0].set"),
    ],
)
def test_validation_errors(old: str, new: str, code: str, where: str) -> None:
    with pytest.raises(ScenarioError) as e:
        _exp(_broken(old, new))
    assert e.value.code == code
    assert e.value.message.startswith("toy.toml: ")
    assert where in e.value.message
    if code != "SL103":
        assert "accepted" in e.value.message


def test_experiment_needs_variants() -> None:
    text = EXPERIMENT[: EXPERIMENT.index("[[variant]]")]
    text = text[: text.index("[[experiment.derive]]")]
    with pytest.raises(ScenarioError, match="variant"):
        _exp(text)


REPORT: dict[str, Any] = {
    "machine": {"nr_cpus": 4},
    "measure": {"start_ns": 0, "end_ns": 2_000_000_000},
    "wasted_cpu_ns": 80_000_000,
    "sim": {"events": 99},
    "groups": [{"name": "g", "elapsed_s": 1.5, "runtime_ns": 7}, {"name": "late", "elapsed_s": None}],
    "tasks": [{"comm": "g-0", "nr_migrations": 4}],
    "mpstat": {
        "samples": [
            {"end_ns": 1, "rows": [{"cpu": "all", "idle": 10.0}, {"cpu": 0, "idle": 1.0}]},
            {"end_ns": 2, "rows": [{"cpu": "all", "idle": 20.0}, {"cpu": 0, "idle": 2.0}]},
        ],
        "average": [{"cpu": "all", "idle": 15.0}, {"cpu": 0, "idle": 1.5}],
    },
}


@pytest.mark.parametrize(
    ("spec", "value"),
    [
        (MetricSpec("m", "group", "g", "elapsed_s"), 1.5),
        (MetricSpec("m", "group", "g", "runtime_ns"), 7.0),
        (MetricSpec("m", "group", "late", "elapsed_s"), None),
        (MetricSpec("m", "task", "g-0", "nr_migrations"), 4.0),
        (MetricSpec("m", "mpstat", "average", "idle", "all"), 15.0),
        (MetricSpec("m", "mpstat", "average", "idle", "0"), 1.5),
        (MetricSpec("m", "mpstat", "samples", "idle", "all"), [10.0, 20.0]),
        (MetricSpec("m", "mpstat", "samples", "idle", "0"), [1.0, 2.0]),
        (MetricSpec("m", "report", "wasted_cpu_ns"), 80_000_000.0),
        (MetricSpec("m", "report", "sim.events"), 99.0),
        # Not in the report: computed from wasted_cpu_ns over nr_cpus x the window.
        (MetricSpec("m", "report", "wasted_cpu_pct"), 1.0),
    ],
)
def test_extract_metric(spec: MetricSpec, value: object) -> None:
    assert extract_metric(REPORT, spec) == value


@pytest.mark.parametrize(
    ("spec", "hint"),
    [
        (MetricSpec("m", "group", "nope", "elapsed_s"), "g, late"),
        (MetricSpec("m", "group", "g", "nope"), "elapsed_s"),
        (MetricSpec("m", "task", "nope", "x"), "g-0"),
        (MetricSpec("m", "mpstat", "average", "idle", "7"), "all, 0"),
        (MetricSpec("m", "report", "nope"), "wasted_cpu_ns"),
    ],
)
def test_extract_metric_missing(spec: MetricSpec, hint: str) -> None:
    with pytest.raises(ScenarioError) as e:
        extract_metric(REPORT, spec)
    assert "experiment.metrics.m" in e.value.message
    assert "accepted" in e.value.message and hint in e.value.message


def test_aggregate() -> None:
    assert aggregate([2.0]) == (2.0, 0.0)
    mean, sd = aggregate([1.0, 2.0, 3.0])
    assert mean == 2.0 and sd == pytest.approx(1.0)
    assert aggregate([1.0, None]) == (None, None)
    assert aggregate([]) == (None, None)
    assert aggregate([[1.0, 2.0], [3.0, 4.0, 5.0]]) == ([2.0, 3.0, 5.0], None)


def test_bands() -> None:
    means: dict[str, dict[str, Any]] = {
        "alone": {"s": 40.0},
        "max": {"s": 41.0, "k": 100.0},
        "norm": {"s": 70.0, "k": 90.0, "z": 0.0, "none": None},
    }
    pct = evaluate_band(Band("b", "pct_change", 0.0, 3.0, num="max.s", den="alone.s"), means)
    assert pct["value"] == pytest.approx(2.5) and pct["ok"] is True
    assert pct["name"] == "b" and pct["low"] == 0.0 and pct["high"] == 3.0
    out = evaluate_band(Band("b", "pct_change", 60.0, 70.0, num="norm.s", den="alone.s"), means)
    assert out["value"] == pytest.approx(75.0) and out["ok"] is False
    ktask = evaluate_band(Band("b", "pct_change", 3.0, 12.0, num="max.k", den="norm.k"), means)
    assert ktask["value"] == pytest.approx(11.111, abs=1e-3) and ktask["ok"] is True
    assert evaluate_band(Band("b", "ratio", 1.0, 2.0, num="norm.s", den="alone.s"), means)["value"] == 1.75
    assert evaluate_band(Band("b", "diff", 0.0, 1.0, num="max.s", den="alone.s"), means)["value"] == 1.0
    val = evaluate_band(Band("b", "value", 100.0, 100.0, of="max.k"), means)
    assert val["value"] == 100.0 and val["ok"] is True  # bounds are inclusive
    assert evaluate_band(Band("b", "pct_change", 0, 1, num="max.s", den="norm.z"), means) | {} == {
        "name": "b", "kind": "pct_change", "num": "max.s", "den": "norm.z",
        "value": None, "low": 0, "high": 1, "ok": False,
    }  # fmt: skip
    assert evaluate_band(Band("b", "value", 0, 1, of="norm.none"), means)["ok"] is False


# ---------------------------------------------------------------- solver


def _linear(x: int) -> float:
    return 0.001 * x + 0.25  # seconds for x ms of work, plus a start-up cost


def _ktask(x: int) -> float:
    return x / 8000 + 0.25  # x ms of work over 8 threads


@pytest.mark.parametrize("method", ["bisect", "illinois"])
@pytest.mark.parametrize(
    ("f", "target", "lo", "hi", "expect"),
    [
        (_linear, 43.04, 1_000, 200_000, 42_790),
        (_ktask, 90.81, 100_000, 2_000_000, 724_480),
        (lambda x: (x / 1000.0) ** 2, 100.0, 0, 50_000, 10_000),  # convex
        (lambda x: math.sqrt(x), 30.0, 0, 2_000_000, 900),  # concave, root near lo
        (lambda x: float(x // 1000), 7.0, 0, 100_000, None),  # steps: any x in [7000, 7999]
        (lambda x: 1.0 if x >= 123_456 else 0.0, 0.5, 0, 2_000_000, None),  # a cliff
    ],
)
def test_solve_monotone(method: str, f: Any, target: float, lo: int, hi: int, expect: int | None) -> None:
    calls: list[int] = []

    def counted(x: int) -> float:
        calls.append(x)
        return float(f(x))

    res = solve_monotone(counted, target, lo, hi, method=method)
    assert len(calls) == len(set(calls)) == res.evaluations  # never the same run twice
    assert res.iterations <= 40
    assert res.fx == f(res.x)
    if expect is not None:
        assert abs(res.x - expect) <= 1
    else:
        assert res.hi - res.lo <= 1 or res.fx == target
    # The bracket holds the target and is at most 1 ms wide (or the target was hit).
    assert f(res.lo) <= target <= f(res.hi)
    assert res.hi - res.lo <= 1 or res.fx == target


def test_illinois_is_faster_on_near_linear_runs() -> None:
    bis = solve_monotone(_ktask, 90.8123, 100_000, 2_000_000, method="bisect")
    ill = solve_monotone(_ktask, 90.8123, 100_000, 2_000_000)
    assert bis.x == ill.x
    assert bis.x == 724_498 and bis.hi - bis.lo == 1
    assert bis.evaluations >= 20
    assert ill.evaluations <= 8


def test_solve_monotone_out_of_range() -> None:
    with pytest.raises(SolveError) as e:
        solve_monotone(_linear, 1000.0, 1_000, 200_000)
    assert (e.value.f_low, e.value.f_high) == (_linear(1_000), _linear(200_000))
    with pytest.raises(SolveError):
        solve_monotone(_linear, 0.0, 1_000, 200_000)


def test_solve_monotone_stops_after_max_iter() -> None:
    res = solve_monotone(_linear, 90.81, 0, 10**15, method="bisect", max_iter=40)
    assert res.iterations == 40 and res.hi - res.lo > 1


def test_solve_exact_hit_at_low() -> None:
    res = solve_monotone(_linear, _linear(5_000), 5_000, 9_000)
    assert (res.x, res.evaluations) == (5_000, 2)


# ---------------------------------------------------------------- a whole run


class ToyKernel:
    """A stand-in for schedlab._native.run: elapsed times as simple functions
    of the overrides, so derive, aggregation and bands can be checked exactly."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, dict[str, Any]]] = []

    def __call__(self, seed: int, overrides: Sequence[tuple[str, str]]) -> Mapping[str, Any]:
        o: dict[str, Any] = {k: tomllib.loads("v = " + v)["v"] for k, v in overrides}
        self.calls.append((seed, o))
        stress_s = parse_duration_ns(o.get("task.stressng.program.0.run", "40s")) / 1e9
        work_s = parse_duration_ns(o.get("task.ktask.program.0.parallel.work", "100s")) / 1e9
        ktask_on = o.get("task.ktask.count", 1) > 0
        nice = o.get("kernel.ktask.helper_nice", 0)
        jitter = 0.01 * (seed - 2)  # seeds 1, 2, 3 -> -0.01, 0, +0.01
        if not ktask_on:
            stressng = stress_s + jitter
        elif nice == 19:
            stressng = stress_s * 1.0125 + jitter
        else:
            stressng = stress_s * 1.7625 + jitter
        ktask = work_s / 8.0 * (1.07 if nice == 19 else 1.0) + jitter
        groups = [{"name": "stressng", "count": 7, "elapsed_s": stressng}]
        if ktask_on:
            groups.append({"name": "ktask", "count": 1, "elapsed_s": ktask})
        rows = [{"cpu": "all", "idle": 2.0 + seed}]
        return {
            "groups": groups,
            "mpstat": {"average": rows, "samples": [{"end_ns": 1, "rows": rows}, {"end_ns": 2, "rows": rows}]},
            "machine": {"nr_cpus": 8},
            "measure": {"start_ns": 0, "end_ns": 10**9},
            "wasted_cpu_ns": 8 * 10**7 * seed,
        }


def test_run_full() -> None:
    kernel = ToyKernel()
    seen: list[str] = []
    result = _exp().run(kernel, jobs=1, progress=seen.append)
    derived = result["derived"]
    # stress-ng alone: x ms of work takes x/1000 s (seed 1 jitter -0.01 s).
    assert derived["task.stressng.program.0.run"]["value"] == "43050ms"
    assert derived["task.stressng.program.0.run"]["achieved"] == pytest.approx(43.04)
    assert derived["task.stressng.program.0.run"]["why"].startswith("stress-ng's work")
    # ktask in normal_prio: work/8 s; target 90.81 (+0.01 for the seed-1 jitter).
    assert derived["task.ktask.program.0.parallel.work"]["value"] == "726560ms"
    assert result["mode"] == "full" and result["seeds"] == [1, 2, 3]

    by = {r["variant"]: r for r in result["results"]}
    assert list(by) == ["alone", "max_nice", "normal_prio"]
    assert by["alone"]["metrics"]["stressng_s"] == pytest.approx(43.05)
    assert by["alone"]["stdev"]["stressng_s"] == pytest.approx(0.01)
    assert by["alone"]["metrics"]["idle_pct"] == pytest.approx(4.0)
    assert by["alone"]["metrics"]["idle_samples"] == pytest.approx([4.0, 4.0])
    assert by["alone"]["metrics"]["wasted"] == pytest.approx(2.0)
    assert [r["seed"] for r in by["alone"]["repeats"]] == [1, 2, 3]
    assert by["alone"]["repeats"][0]["metrics"]["stressng_s"] == pytest.approx(43.04)
    assert by["alone"]["params"] == {"task.ktask.count": 0}
    assert by["max_nice"]["params"] == {"kernel.ktask.helper_nice": 19}
    assert by["max_nice"]["published"] == {"stressng_s": 43.58, "ktask_s": 96.87}
    assert by["max_nice"]["metrics"]["ktask_s"] == pytest.approx(726.56 / 8 * 1.07)
    assert set(by["max_nice"]["metrics"]) == {"stressng_s", "ktask_s"}

    bands = result["bands"]
    assert [b["ok"] for b in bands] == [True, True, True]
    assert bands[0]["value"] == pytest.approx(1.25)
    assert bands[1]["value"] == pytest.approx(76.25)

    # Derived values reach every variant run; the variant's own set comes last.
    variant_calls = kernel.calls[-9:]
    assert all(o["task.ktask.program.0.parallel.work"] == "726560ms" for _, o in variant_calls)
    assert all(o["task.stressng.program.0.run"] == "43050ms" for _, o in variant_calls)
    assert sorted(seed for seed, _ in variant_calls) == [1, 1, 1, 2, 2, 2, 3, 3, 3]
    # Derivation runs use seed 1 and do not see quick_set in full mode.
    assert all(seed == 1 and "measure.interval" not in o for seed, o in kernel.calls[:-9])
    assert any("derive" in line for line in seen)


def test_run_quick_parallel_matches_serial() -> None:
    serial = _exp().run(ToyKernel(), quick=True, jobs=1)
    kernel = ToyKernel()
    parallel = _exp().run(kernel, quick=True, jobs=4)
    assert serial == parallel
    assert serial["mode"] == "quick" and serial["seeds"] == [1]
    assert all(o.get("measure.interval") == "2s" for _, o in kernel.calls)
    assert _exp().run(ToyKernel(), quick=True, repeat=2)["seeds"] == [1, 2]


def test_derive_target_out_of_range() -> None:
    text = _broken('high = "200s"', 'high = "20s"')
    with pytest.raises(ScenarioError) as e:
        _exp(text).run(ToyKernel())
    msg = e.value.message
    assert e.value.code == "SL102"
    assert msg.startswith("toy.toml: experiment.derive[0].target: ")
    assert "accepted: 0.9900 .. 19.9900" in msg and "widen low/high" in msg


def test_derive_metric_without_value() -> None:
    class NoKtask(ToyKernel):
        def __call__(self, seed: int, overrides: Sequence[tuple[str, str]]) -> Mapping[str, Any]:
            report = dict(super().__call__(seed, overrides))
            report["groups"] = [*report["groups"][:1], {"name": "ktask", "elapsed_s": None}]
            return report

    with pytest.raises(ScenarioError, match=r"experiment.derive\[1\].metric: ktask_s has no value"):
        _exp().run(NoKtask())


def test_runner_errors_propagate_from_threads() -> None:
    class Boom(ToyKernel):
        def __call__(self, seed: int, overrides: Sequence[tuple[str, str]]) -> Mapping[str, Any]:
            if seed == 2:
                raise ScenarioError("SL102", "boom")
            return super().__call__(seed, overrides)

    with pytest.raises(ScenarioError, match="boom"):
        _exp().run(Boom(), jobs=3)


def test_a_bands_cases_keep_the_order_its_patterns_name_them() -> None:
    """A gain_ratio's first case is its numerator even when its table comes
    second (kworker-stack: numa48's gain over uma8's, uma8's table first);
    a glob's cases come in the table's order."""
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "scenarios" / "seeds" / "kworker-stack.toml"
    exp = Experiment.read(path.read_text(), str(path), "kworker-stack")
    assert exp is not None
    bands = {b.kind: b for b in exp.bands}
    assert bands["gain_ratio"].cases == ("numa48/1", "uma8/1")
    assert bands["trend"].cases[:3] == ("numa48/1", "numa48/2", "numa48/4")
    means = {
        f"{v}@{case}": {"amean_ms": ms}
        for v, case, ms in (
            ("baseline", "numa48/1", 100.0),
            ("kworkerstack", "numa48/1", 50.0),
            ("baseline", "uma8/1", 100.0),
            ("kworkerstack", "uma8/1", 90.0),
        )
    }
    assert evaluate_band(bands["gain_ratio"], means)["value"] == pytest.approx(5.0)
