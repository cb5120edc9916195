"""Judging a generated case: the rows every case is compared on, with the
tolerances fixed here (not per case), and the wasted-CPU audit.

Rows: each task's CPU share (with --groups each cgroup's too), the CPUs' %idle ranked (``idle rank 1`` is the
most idle CPU on each side, whichever CPU that is: the first campaign's
first batch put one light task on CPU 0 in the simulator and on CPU 1 in
the guest, two "off" rows for the same behaviour), the migrations and the
context switches of all tasks per second; computed as ``schedlab validate``
computes them (:func:`schedlab.validation.results.compute`).

The audit. The simulator knows its wasted CPU time exactly (a CPU idle
while a task allowed on it waits: the report's ``wasted_cpu_pct``); a real
kernel does not say. Both reports have, per CPU and per 100 ms interval,
the idle time and the time tasks waited on the CPU's runqueue
(``mpstat.samples[].run_delay_ns``, /proc/schedstat's run_delay). In each
interval the machine cannot have wasted more than its idle time, and a
wait that overlapped idle time elsewhere is at most all the waiting, so
``min(Σ idle, Σ run_delay)`` per interval, summed, is the same *estimate*
on both sides. Pinned waiters make it an overestimate (an idle CPU they may
not use); both sides count them alike. A case whose estimate is above
``WASTE_THRESHOLD_PCT`` on a side is flagged on that side, and the pair of
flags says which it is: ``model`` (the simulator wastes, the kernel does
not: a model bug), ``kernel`` (both waste: a kernel behaviour worth
knowing), ``real-only`` (the kernel wastes, the model does not).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from schedlab.difftest.generate import Case
from schedlab.metrics import MetricError, is_number
from schedlab.validation.results import compute
from schedlab.validation.runners import Side
from schedlab.validation.suite import MetricSpec, parse_tolerance

__all__ = [
    "TOLERANCES",
    "WASTE_THRESHOLD_PCT",
    "Row",
    "Verdict",
    "judge",
    "wasted_estimate_pct",
]

#: The tolerances of every generated case, fixed before the first campaign
#: and not to be tuned to its results (as the suite's). Shares and idle are
#: in points of one CPU; the relative part keeps a large share from being
#: held to a few points when the guest's timing moves it a little.
TOLERANCES = {
    "share": parse_tolerance("±6 points or ±20 %"),
    "idle": parse_tolerance("±8 points"),
    "migrations": parse_tolerance("±50 % or ±10/s"),
    "switches": parse_tolerance("±30 % or ±50/s"),
    # --groups (written 2026-11-28, before the first campaign with groups):
    # a cgroup's CPU time with its descendants', held as a task's share is.
    "cgroup_share": parse_tolerance("±6 points or ±20 %"),
}
#: A side "wastes" when its estimate is above this share of the machine's CPU time.
WASTE_THRESHOLD_PCT = 3.0


@dataclass(frozen=True)
class Row:
    metric: str
    sim: float
    real: float
    tolerance: str
    ok: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "sim": round(self.sim, 3),
            "real": round(self.real, 3),
            "tolerance": self.tolerance,
            "verdict": "ok" if self.ok else "off",
        }


@dataclass(frozen=True)
class Verdict:
    rows: tuple[Row, ...]
    unmeasured: tuple[str, ...]
    #: The wasted-CPU estimate on each side (None: the report has no run_delay samples).
    waste_sim: float | None
    waste_real: float | None
    #: The simulator's exact wasted_cpu_pct.
    waste_sim_exact: float | None

    @property
    def off(self) -> list[Row]:
        return [r for r in self.rows if not r.ok]

    @property
    def agrees(self) -> bool:
        return not self.off

    @property
    def waste_flag(self) -> str:
        s = self.waste_sim is not None and self.waste_sim > WASTE_THRESHOLD_PCT
        r = self.waste_real is not None and self.waste_real > WASTE_THRESHOLD_PCT
        return "kernel" if s and r else "model" if s else "real-only" if r else ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "agrees": self.agrees,
            "rows": [r.to_dict() for r in self.rows],
            "unmeasured": list(self.unmeasured),
            "wasted": {
                "sim_estimate_pct": _r(self.waste_sim),
                "real_estimate_pct": _r(self.waste_real),
                "sim_exact_pct": _r(self.waste_sim_exact),
                "flag": self.waste_flag,
            },
        }


def _num(v: object) -> float | None:
    return float(v) if is_number(v) else None  # type: ignore[arg-type]


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 2)


def specs(case: Case) -> list[MetricSpec]:
    """The rows of ``case`` but the idle ranks: one share per task (and per
    cgroup), the migrations and the switches of all tasks."""
    out = [MetricSpec("share", TOLERANCES["share"], group=t.name) for t in case.tasks]
    out += [MetricSpec("cgroup_share", TOLERANCES["cgroup_share"], cgroup=c.path) for c in case.cgroups]
    out += [MetricSpec("migrations", TOLERANCES["migrations"]), MetricSpec("switches", TOLERANCES["switches"])]
    return out


def _idle_ranked(side: Side, nr: int) -> list[float]:
    return sorted((side.report.idle_pct(str(c)) for c in range(nr)), reverse=True)


def wasted_estimate_pct(doc: Mapping[str, Any]) -> float | None:
    """Σ over the mpstat samples of min(Σ idle, Σ run_delay), as % of the
    machine's CPU time in them; None without run_delay samples."""
    samples = (doc.get("mpstat") or {}).get("samples") or []
    prev = _num((doc.get("measure") or {}).get("start_ns"))
    if not samples or prev is None:
        return None
    est = total = 0.0
    for s in samples:
        end = _num(s.get("end_ns"))
        delays = s.get("run_delay_ns")
        if end is None or not isinstance(delays, list):
            return None
        length = end - prev
        prev = end
        cpus = [r for r in s.get("rows") or [] if r.get("cpu") != "all"]
        if length <= 0 or not cpus:
            continue
        idle = sum(float(r.get("idle") or 0.0) for r in cpus) / 100.0 * length
        est += min(idle, float(sum(delays)))
        total += length * len(cpus)
    return 100.0 * est / total if total > 0 else None


def judge(case: Case, sim: Side, real: Side, sim_doc: Mapping[str, Any], real_doc: Mapping[str, Any]) -> Verdict:
    rows: list[Row] = []
    unmeasured: list[str] = []
    for spec in specs(case):
        try:
            a, b = compute(spec, sim), compute(spec, real)
        except MetricError as e:
            unmeasured.append(f"{spec.label}: {e}")
            continue
        if a is None or b is None:
            unmeasured.append(f"{spec.label}: {'real' if b is None else 'sim'} did not measure it")
            continue
        rows.append(Row(spec.label, a, b, spec.tol.text, spec.tol.ok(a, b)))
    tol = TOLERANCES["idle"]
    try:
        ranked = list(zip(_idle_ranked(sim, case.nr_cpus), _idle_ranked(real, case.nr_cpus)))
    except MetricError as e:
        unmeasured.append(f"idle: {e}")
        ranked = []
    for k, (a, b) in enumerate(ranked, 1):
        rows.append(Row(f"idle rank {k}", a, b, tol.text, tol.ok(a, b)))
    return Verdict(
        tuple(rows),
        tuple(unmeasured),
        wasted_estimate_pct(sim_doc),
        wasted_estimate_pct(real_doc),
        _num(sim_doc.get("wasted_cpu_pct")),
    )


def off_kinds(rows: Sequence[Row]) -> set[str]:
    """The metric kinds among off rows (share, idle, migrations, switches)."""
    return {r.metric.split()[0] for r in rows if not r.ok}
