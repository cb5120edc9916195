"""Experiments: a scenario with ``[experiment]`` and ``[[variant]]`` tables.

The core reads and checks those two tables (``scenario/experiment.rs``,
through ``schedlab.native.experiment``) and hands over the experiment as
typed objects; this module runs it:

* ``[[variant]]`` -- a name, a ``set`` table of overrides (any scenario key),
  the metrics it reports, and the ``published`` numbers from the seed.
* ``repeat`` / ``quick_repeat`` -- each variant runs with seeds ``1..repeat``
  (``quick_repeat`` and ``quick_set`` with ``--quick``); the metrics are
  averaged over the seeds (sample stdev beside them).
* ``[experiment.metrics]`` -- where each metric comes from in the report.
* ``[[experiment.derive]]`` -- a workload size the seed does not publish,
  solved before the variants so that one variant's metric hits a published
  number, then applied to every variant (see ``solve_monotone``).
* ``[[experiment.band]]`` -- acceptance bands over the means.

Override order for a variant run: ``quick_set`` (with ``--quick``), then the
derived values, then the variant's ``set``; the core applies them in order,
so a later one wins.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any, Union

from schedlab import native
from schedlab.errors import ScenarioError
from schedlab.experiment_tables import CaseTable, MmtestsStats
from schedlab.metrics import MetricError, ReportView, reduce_samples, row_field
from schedlab.overrides import Override, toml_literal
from schedlab.units import format_duration_ms

__all__ = [
    "MPSTAT_FIELDS",
    "Band",
    "Derive",
    "Experiment",
    "MetricSpec",
    "Runner",
    "SolveError",
    "SolveResult",
    "Variant",
    "aggregate",
    "default_jobs",
    "evaluate_band",
    "extract_metric",
    "solve_monotone",
]

#: A metric value: a number, a per-sample list, or None (e.g. a group that never finished).
MetricValue = Union[float, list[float], None]

#: Runs the experiment's scenario: (seed, overrides) -> report dict.
Runner = Callable[[int, Sequence[Override]], Mapping[str, Any]]

#: mpstat's columns (the core checks a metric's ``field`` against its own list).
MPSTAT_FIELDS = ("usr", "nice", "sys", "iowait", "irq", "soft", "steal", "guest", "gnice", "idle")


# --------------------------------------------------------------------------
# The parsed experiment


@dataclass(frozen=True)
class MetricSpec:
    """Where a metric comes from. ``source`` is one of group, task, mpstat, report."""

    name: str
    source: str
    selector: str  # group name, task comm, "average"/"samples", or report key path
    field: str = ""
    cpu: str = "all"  # mpstat row: "all" or a CPU number as text
    stat: str = ""  # for mpstat samples: reduce the list with min/max/range/stdev
    #: A report counter over the window divided by the window's seconds
    #: (``/proc/vmstat`` deltas as rates, comparable across window lengths).
    per_s: bool = False

    @classmethod
    def from_native(cls, m: Mapping[str, Any]) -> MetricSpec:
        """A metric as the core checked it (``schedlab.native.experiment``/``metrics``)."""
        return cls(m["name"], m["source"], m["selector"], m["field"], m["cpu"], m["stat"], m["per_s"])

    @property
    def is_list(self) -> bool:
        return self.source == "mpstat" and self.selector == "samples" and not self.stat

    @property
    def needs_samples(self) -> bool:
        """The metric reads mpstat's per-interval samples, which a run keeps
        only when asked (measure.samples)."""
        return self.source == "mpstat" and self.selector == "samples"


@dataclass(frozen=True)
class Variant:
    name: str
    title: str
    overrides: list[tuple[str, object]]  # canonical key -> Python value, in file order
    metrics: list[str]
    published: dict[str, float] = field(default_factory=dict)
    published_stdev: dict[str, float] = field(default_factory=dict)
    #: The same overrides as the run is given them: (key, TOML literal
    #: written by the core).
    literals: list[Override] = field(default_factory=list)

    @property
    def params(self) -> dict[str, object]:
        return dict(self.overrides)


@dataclass(frozen=True)
class Derive:
    index: int
    key: str
    variant: str
    metric: str
    target: float
    low_ms: int
    high_ms: int
    why: str


@dataclass(frozen=True)
class Band:
    name: str
    kind: str
    low: float
    high: float
    num: str = ""  # "variant.metric"
    den: str = ""
    of: str = ""
    #: With case tables: the cases the rule holds for (the refs then name
    #: base variants); empty: the refs name cases themselves.
    cases: tuple[str, ...] = ()


@dataclass
class Experiment:
    name: str
    title: str
    source: str
    seed_file: str
    repeat: int
    quick_repeat: int
    quick_set: list[tuple[str, object]]
    metrics: dict[str, MetricSpec]
    derives: list[Derive]
    bands: list[Band]
    variants: list[Variant]
    #: ``[[experiment.table]]``: the variants above are then the cases
    #: (``VARIANT@TABLE/VALUE``), made from ``base_variants``.
    tables: list[CaseTable] = field(default_factory=list)
    base_variants: list[Variant] = field(default_factory=list)
    mmtests: MmtestsStats | None = None
    case_of: dict[str, dict[str, str]] = field(default_factory=dict)

    #: ``quick_set`` as the run is given it: (key, TOML literal).
    quick_literals: list[Override] = field(default_factory=list)

    # ---------------------------------------------------------------- read

    @classmethod
    def read(cls, text: str, source: str, default_name: str) -> Experiment | None:
        """A file's experiment, read and checked by the core; None for a
        file without ``[experiment]``. Raises ``ScenarioError`` (the file,
        the key path, what is accepted)."""
        doc = native.experiment(text, source, default_name)
        return None if doc is None else cls.from_native(doc)

    @classmethod
    def from_native(cls, d: native.ExperimentDoc) -> Experiment:
        """The core's checked experiment as the runner's objects."""

        def variant(v: Mapping[str, Any]) -> Variant:
            return Variant(
                v["name"],
                v["title"],
                [(k, val) for k, val, _ in v["overrides"]],
                list(v["metrics"]),
                dict(v["published"]),
                dict(v["published_stdev"]),
                [(k, lit) for k, _, lit in v["overrides"]],
            )

        metrics = {m["name"]: MetricSpec.from_native(m) for m in d["metrics"]}
        tables = [
            CaseTable(
                t["name"],
                t["title"],
                t["key"],
                list(t["cases"]),
                [list(col) for col in t["columns"]],
                list(t["print"]),
                t["key_label"],
            )
            for t in d["tables"]
        ]
        mm = d["mmtests"]
        return cls(
            d["name"],
            d["title"],
            d["source"],
            d["seed_file"],
            d["repeat"],
            d["quick_repeat"],
            [(k, v) for k, v, _ in d["quick_set"]],
            metrics,
            [Derive(**x) for x in d["derives"]],
            [Band(**{**b, "cases": tuple(b["cases"])}) for b in d["bands"]],
            [variant(v) for v in d["variants"]],
            tables,
            [variant(v) for v in d["base_variants"]],
            None if mm is None else MmtestsStats(**mm),
            {name: dict(c) for name, c in d["case_of"].items()},
            [(k, lit) for k, _, lit in d["quick_set"]],
        )

    # ---------------------------------------------------------------- run

    def nr_runs(self, *, quick: bool = False, repeat: int | None = None) -> int:
        """How many simulations :meth:`run` makes (variants x seeds; derived values add a few)."""
        n = repeat if repeat is not None else (self.quick_repeat if quick else self.repeat)
        return len(self.variants) * max(n, 0)

    def run(
        self,
        runner: Runner,
        *,
        quick: bool = False,
        repeat: int | None = None,
        jobs: int = 1,
        progress: Callable[[str], None] | None = None,
        step: Callable[[str, float], None] | None = None,
    ) -> dict[str, Any]:
        """Derive, run variants x seeds, aggregate, judge the bands.

        ``progress`` gets a line per event (a derived value, a run started or
        done); ``step``, when given, gets each finished run instead (its
        label and simulated seconds), for a progress bar.

        Returns the experiment JSON (``{"experiment", "results", "derived", "bands", ...}``).
        """
        say = progress or (lambda _msg: None)
        n = repeat if repeat is not None else (self.quick_repeat if quick else self.repeat)
        if n < 1:
            raise ScenarioError("SL102", f"{self.source}: repeat: {n} runs per variant; accepted: 1 or more")
        base: list[Override] = list(self.quick_literals) if quick else []

        derived_pairs: list[Override] = []
        derived: dict[str, Any] = {}
        for d in self.derives:
            info = self._derive(d, runner, base + derived_pairs, say)
            derived[d.key] = info
            derived_pairs.append((d.key, toml_literal(info["value"])))

        seeds = list(range(1, n + 1))
        jobs_list = [(v, seed) for v in self.variants for seed in seeds]
        per_run: dict[tuple[str, int], dict[str, MetricValue]] = {}

        sim_s: dict[tuple[str, int], float] = {}

        def one(v: Variant, seed: int) -> dict[str, MetricValue]:
            report = runner(seed, base + derived_pairs + v.literals + self._samples_for(v.metrics))
            sim_s[(v.name, seed)] = float((report.get("sim") or {}).get("end_ns") or 0) / 1e9
            return {m: extract_metric(report, self.metrics[m]) for m in v.metrics}

        def finished(key: tuple[str, int]) -> None:
            if step is not None:
                step(f"{key[0]} seed {key[1]}", sim_s.get(key, 0.0))
            else:
                say(f"{self.name}: {key[0]} seed {key[1]} done")

        if jobs <= 1 or len(jobs_list) <= 1:
            for v, seed in jobs_list:
                per_run[(v.name, seed)] = one(v, seed)
                finished((v.name, seed))
        else:
            # The native run releases the GIL, so threads run simulations in
            # parallel. Results are keyed, so the output does not depend on
            # which run finishes first.
            pool = ThreadPoolExecutor(max_workers=jobs)
            try:
                futures = {pool.submit(one, v, seed): (v.name, seed) for v, seed in jobs_list}
                for fut in as_completed(futures):
                    key = futures[fut]
                    per_run[key] = fut.result()
                    finished(key)
            except BaseException:
                # An error or Ctrl-C: drop the queued runs (running ones finish).
                pool.shutdown(wait=False, cancel_futures=True)
                raise
            pool.shutdown()

        results: list[dict[str, Any]] = []
        means: dict[str, dict[str, MetricValue]] = {}
        for v in self.variants:
            runs = [per_run[(v.name, s)] for s in seeds]
            reps = [{"seed": s, "metrics": r} for s, r in zip(seeds, runs)]
            mean: dict[str, MetricValue] = {}
            stdev: dict[str, float | None] = {}
            for m in v.metrics:
                mean[m], stdev[m] = aggregate([r[m] for r in runs])
            means[v.name] = mean
            results.append(
                {
                    "variant": v.name,
                    **self.case_of.get(v.name, {}),
                    "title": v.title,
                    "params": v.params,
                    "metrics": mean,
                    "stdev": stdev,
                    "published": dict(v.published),
                    "published_stdev": dict(v.published_stdev),
                    "repeats": reps,
                }
            )
        out: dict[str, Any] = {
            "experiment": self.name,
            "title": self.title,
            "source": self.source,
            "seed_file": self.seed_file,
            "mode": "quick" if quick else "full",
            "repeat": n,
            "seeds": seeds,
            "metrics": list(self.metrics),
            "derived": derived,
            "results": results,
            "bands": [evaluate_band(b, means) for b in self.bands],
        }
        if self.tables:
            out["tables"] = [
                {
                    "name": t.name,
                    "title": t.title,
                    "key": t.key,
                    "cases": t.cases,
                    "labels": [c.split("/", 1)[1] for c in t.cases],
                    "columns": t.columns,
                    "print": t.print_metrics,
                    "key_label": t.key_label,
                }
                for t in self.tables
            ]
        if self.mmtests is not None:
            out["mmtests"] = {
                "mean": self.mmtests.mean,
                "stddev": self.mmtests.stddev,
                "count": self.mmtests.count,
                "hmean": self.mmtests.hmean,
            }
        return out

    def _samples_for(self, metrics: Sequence[str]) -> list[Override]:
        """``measure.samples = true`` when one of the metrics reads the samples."""
        return [("measure.samples", "true")] if any(self.metrics[m].needs_samples for m in metrics) else []

    def _derive(self, d: Derive, runner: Runner, before: list[Override], say: Callable[[str], None]) -> dict[str, Any]:
        v = next(x for x in self.variants if x.name == d.variant)
        spec = self.metrics[d.metric]
        fixed = before + v.literals + self._samples_for([d.metric])

        def f(ms: int) -> float:
            report = runner(1, [*fixed, (d.key, toml_literal(format_duration_ms(ms)))])
            value = extract_metric(report, spec)
            if not isinstance(value, (int, float)):
                raise ScenarioError(
                    "SL102",
                    f"{self.source}: experiment.derive[{d.index}].metric: {d.metric} has no value "
                    f"with {d.key} = {format_duration_ms(ms)} in variant {d.variant} (did the group finish "
                    "inside measure.duration?); accepted: a metric that is a number in every run",
                )
            say(f"{self.name}: derive {d.key} = {format_duration_ms(ms)} -> {d.metric} = {value:.4f}")
            return float(value)

        try:
            res = solve_monotone(f, d.target, d.low_ms, d.high_ms)
        except SolveError as e:
            raise ScenarioError(
                "SL102",
                f"{self.source}: experiment.derive[{d.index}].target: {d.metric} = {d.target} in variant "
                f"{d.variant} is outside what {d.key} in [{format_duration_ms(d.low_ms)}, "
                f"{format_duration_ms(d.high_ms)}] gives; accepted: {e.f_low:.4f} .. {e.f_high:.4f} "
                "(widen low/high)",
            ) from None
        return {
            "value": format_duration_ms(res.x),
            "variant": d.variant,
            "metric": d.metric,
            "target": d.target,
            "achieved": res.fx,
            "low": format_duration_ms(d.low_ms),
            "high": format_duration_ms(d.high_ms),
            "evaluations": res.evaluations,
            "why": d.why,
        }


def _in_case(ref: str, case: str) -> str:
    vname, _, metric = ref.rpartition(".")
    return f"{vname}@{case}.{metric}"


# --------------------------------------------------------------------------
# Metrics, aggregation, bands


def extract_metric(report: Mapping[str, Any], spec: MetricSpec) -> MetricValue:
    """One metric from a report (see ``[experiment.metrics]``), read through
    :class:`schedlab.metrics.ReportView`.

    A missing group/task/CPU row is a ``ScenarioError`` naming what the report
    has; a value that is null in the report (a group that never finished) is None.
    """
    where = f"experiment.metrics.{spec.name}"
    rep = ReportView(report)
    try:
        if spec.source == "report":
            v = _number(rep.key(spec.selector))
            return v if v is None or not spec.per_s else _per_second(report, v, where)
        if spec.source == "group":
            return _number(row_field(rep.group_row(spec.selector), spec.field))
        if spec.source == "task":
            return _number(row_field(rep.task_row(spec.selector), spec.field))
        if spec.selector == "average":
            return _number(row_field(rep.mpstat_row(rep.mpstat_average(), spec.cpu), spec.field))
        out: list[float] = []
        for rows in rep.mpstat_samples():
            v = _number(row_field(rep.mpstat_row(rows, spec.cpu), spec.field))
            if v is not None:
                out.append(v)
    except MetricError as e:
        raise ScenarioError("SL102", f"{where}: {e}") from None
    if spec.stat:
        return reduce_samples(out, spec.stat)
    return out


def _per_second(report: Mapping[str, Any], v: float, where: str) -> float:
    m = report.get("measure") or {}
    t0, t1 = m.get("start_ns"), m.get("end_ns")
    if not isinstance(t0, (int, float)) or not isinstance(t1, (int, float)) or t1 <= t0:
        raise ScenarioError(
            "SL102",
            f"{where}: per_s: the report has no measurement window; accepted: a report with measure.start_ns < end_ns",
        )
    return v * 1e9 / (t1 - t0)


def _number(v: Any) -> float | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ScenarioError("SL102", f"metric value {v!r} is not a number; accepted: a numeric report field")
    return float(v)


def aggregate(values: Sequence[MetricValue]) -> tuple[MetricValue, float | None]:
    """Mean and sample stdev over repeats.

    Numbers: (mean, stdev; 0.0 for one repeat). Lists (per-sample metrics): the
    mean at each position over the repeats that have it, stdev None. Any None
    makes the mean None (a repeat without a value must not hide).
    """
    if not values or any(v is None for v in values):
        return None, None
    if all(isinstance(v, list) for v in values):
        lists = [v for v in values if isinstance(v, list)]
        longest = max(len(v) for v in lists)
        return [statistics.fmean(v[i] for v in lists if i < len(v)) for i in range(longest)], None
    nums = [float(v) for v in values if isinstance(v, (int, float))]
    if len(nums) != len(values):
        return None, None
    return statistics.fmean(nums), (statistics.stdev(nums) if len(nums) > 1 else 0.0)


def evaluate_band(band: Band, means: Mapping[str, Mapping[str, MetricValue]]) -> dict[str, Any]:
    """``{"name", "kind", "value", "low", "high", "ok"}``.

    pct_change: (num/den - 1) * 100; gain: (den - num) / den * 100 (a lower
    num is better, as mmtests' percentages of times); ratio: num/den; diff:
    num - den; value: the mean named by ``of``. With ``cases`` the rule holds
    for each case (``values`` has them; ``value`` is the one nearest an edge
    or furthest out); trend: the largest rise of the gain from one case to
    the next; gain_ratio: the first case's gain over the second's;
    peak_ratio: the largest num over the cases divided by the largest den
    (one curve's peak against another's, wherever each peaks); rise: the
    last case's ``of`` minus the first's. A missing value is never ok.
    """

    def get(ref: str) -> float | None:
        vname, _, metric = ref.rpartition(".")
        v = means.get(vname, {}).get(metric)
        return float(v) if isinstance(v, (int, float)) else None

    def one(num: str, den: str, of: str, kind: str) -> float | None:
        if kind == "peak_ratio":
            return get(num)
        if kind in ("value", "rise"):
            return get(of)
        n, d = get(num), get(den)
        if n is None or d is None:
            return None
        if kind == "diff":
            return n - d
        if d == 0:
            return None
        if kind == "ratio":
            return n / d
        if kind in ("gain", "trend", "gain_ratio"):
            return (d - n) / d * 100.0
        return (n / d - 1.0) * 100.0

    out: dict[str, Any] = {"name": band.name, "kind": band.kind}
    if band.kind in ("value", "rise"):
        out["of"] = band.of
    else:
        out["num"], out["den"] = band.num, band.den
    value: float | None
    if not band.cases:
        value = one(band.num, band.den, band.of, band.kind)
    else:
        out["cases"] = list(band.cases)
        per = {
            case: one(_in_case(band.num, case), _in_case(band.den, case), _in_case(band.of, case), band.kind)
            for case in band.cases
        }
        out["values"] = per
        vals = list(per.values())
        if any(v is None for v in vals):
            value = None
        elif band.kind == "trend":
            value = max((b - a for a, b in zip(vals, vals[1:])), default=0.0)  # type: ignore[operator]
        elif band.kind == "gain_ratio":
            value = None if vals[1] == 0 else vals[0] / vals[1]  # type: ignore[operator]
        elif band.kind == "rise":
            value = vals[-1] - vals[0]  # type: ignore[operator]
        elif band.kind == "peak_ratio":
            dens = [get(_in_case(band.den, case)) for case in band.cases]
            peak_den = None if any(d is None for d in dens) else max(dens)  # type: ignore[type-var]
            value = None if not peak_den else max(vals) / peak_den  # type: ignore[type-var,operator]
        else:
            nums = [float(v) for v in vals if v is not None]
            value = min(nums, key=lambda v: min(v - band.low, band.high - v))
    out.update(
        {"value": value, "low": band.low, "high": band.high, "ok": value is not None and band.low <= value <= band.high}
    )
    return out


# --------------------------------------------------------------------------
# Solving a workload size


class SolveError(ValueError):
    """The target is outside [f(low), f(high)]."""

    def __init__(self, target: float, f_low: float, f_high: float) -> None:
        super().__init__(f"target {target} is outside [{f_low}, {f_high}]")
        self.target, self.f_low, self.f_high = target, f_low, f_high


@dataclass(frozen=True)
class SolveResult:
    x: int
    fx: float
    lo: int
    hi: int
    evaluations: int
    iterations: int


def solve_monotone(
    f: Callable[[int], float],
    target: float,
    lo: int,
    hi: int,
    *,
    tol: int = 1,
    max_iter: int = 40,
    method: str = "illinois",
) -> SolveResult:
    """Find integer x in [lo, hi] with f(x) closest to ``target``, for f monotone
    non-decreasing, keeping a bracket f(lo) <= target <= f(hi).

    Stops when the bracket is ``tol`` wide or after ``max_iter`` steps.
    ``method="bisect"`` halves the bracket each step (about 21 steps for
    100 s..2000 s at 1 ms). ``"illinois"`` (default) probes where the secant
    through the bracket ends crosses the target, halving the stale end's
    residual when one end is kept twice (the Illinois rule), and falls back to
    a bisection step whenever two probes failed to halve the bracket, so it is
    never much worse than bisection and takes 5-8 runs when f is near linear,
    as run time in work is. Every f(x) is a whole simulation, hence the care.
    Raises ``SolveError`` when target is outside [f(lo), f(hi)].
    """
    cache: dict[int, float] = {}

    def F(x: int) -> float:
        if x not in cache:
            cache[x] = f(x)
        return cache[x]

    flo, fhi = F(lo), F(hi)
    if not flo <= target <= fhi:
        raise SolveError(target, flo, fhi)
    if flo == target:
        return SolveResult(lo, flo, lo, hi, len(cache), 0)
    glo, ghi = flo - target, fhi - target  # Illinois-scaled residuals, glo < 0 < ghi
    kept = 0  # -1: lo moved last step, +1: hi moved last step
    widths = [hi - lo]
    it = 0
    while hi - lo > tol and it < max_iter:
        it += 1
        stalled = len(widths) >= 3 and widths[-1] * 2 > widths[-3]
        if method == "illinois" and not stalled and ghi > glo:
            x = lo + round(-glo * (hi - lo) / (ghi - glo))
        else:
            x = (lo + hi) // 2
        x = min(max(x, lo + 1), hi - 1)
        fx = F(x)
        if fx == target:
            return SolveResult(x, fx, x, x, len(cache), it)
        if fx < target:
            lo, glo = x, fx - target
            if kept == -1:
                ghi /= 2
            kept = -1
        else:
            hi, ghi = x, fx - target
            if kept == 1:
                glo /= 2
            kept = 1
        widths.append(hi - lo)
    flo, fhi = F(lo), F(hi)
    x, fx = (lo, flo) if target - flo <= fhi - target else (hi, fhi)
    return SolveResult(x, fx, lo, hi, len(cache), it)


def default_jobs() -> int:
    """Parallel runs: the native run releases the GIL, so threads use every core."""
    return max(1, os.cpu_count() or 1)
