"""The validation suite file (``validation/suite.toml``; its header documents
the format, the metrics and the tolerance syntax): its scenarios, the metrics
each is judged on, and their tolerances. The core reads and checks the file
and the tolerances (``schedlab_core::scenario::suite``, through
:mod:`schedlab.native`); here they become the dataclasses the judging uses.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schedlab import native
from schedlab._paths import VALIDATION
from schedlab.errors import ScenarioError, UsageError
from schedlab.overrides import Override
from schedlab.qemu.oracle import KERNELS as ORACLE_KERNELS

__all__ = [
    "DEFAULT_SUITE",
    "KERNELS",
    "METRIC_UNITS",
    "Bound",
    "Entry",
    "MetricSpec",
    "Suite",
    "Tolerance",
    "load_suite",
    "parse_tolerance",
    "select_entries",
]

SUITE_ENV = "SCHEDLAB_SUITE"
#: The bundled suite (package data; the checkout's validation/ links to it).
DEFAULT_SUITE = VALIDATION / "suite.toml"
#: The kernels a suite runs against: the QEMU oracle's.
KERNELS = tuple(ORACLE_KERNELS)

#: metric -> its unit (the core checks each tolerance against its own copy,
#: ``METRIC_UNITS`` in crates/schedlab-core/src/scenario/suite.rs; a test
#: keeps the two the same).
METRIC_UNITS: dict[str, str] = {
    "share": "points",
    "share_min": "points",
    "share_max": "points",
    "idle": "points",
    "idle_spread": "points",
    "sibling_overlap": "points",
    "migrations": "/s",
    "switches": "/s",
    "wakeup_p50": "us",
    "wakeup_p90": "us",
    "wakeup_p99": "us",
    "wait": "points",
    "wait_min": "points",
    "wait_max": "points",
    "wait_avg": "us",
    "migrations_max": "/s",
    # Real benchmark tools (an entry with `tool`): what the tool prints.
    "tool_time": "s",
    "latency_avg": "us",
    "latency_max": "us",
    # Pressure (`kernel.psi`): the share of the window a /proc/pressure
    # line grew by.
    "psi_cpu_some": "points",
    "psi_memory_some": "points",
    "psi_memory_full": "points",
    "psi_io_some": "points",
    "psi_io_full": "points",
    # Buffered writes: the dirty pages' level against the dirty threshold,
    # and the writers' mean sleep (balance_dirty_pages' pauses).
    "dirty_pct": "points",
    "sleep_avg": "us",
    # A [[cgroup]] (cgroup = PATH): its CPU time with its descendants', the
    # periods it was throttled in out of those it ran in, its bursts a second.
    "cgroup_share": "points",
    "throttled": "points",
    "bursts": "/s",
}


# ---------------------------------------------------------------- tolerances


@dataclass(frozen=True)
class Bound:
    """One alternative: ``abs`` |sim-real| <= value, ``rel`` <= value % of
    |real|, ``max`` both <= value; ``unit`` is the metric unit it applies to
    (None for ``rel``)."""

    kind: str
    value: float
    unit: str | None

    def holds(self, sim: float, real: float) -> bool:
        eps = 1e-9
        if self.kind == "abs":
            return abs(sim - real) <= self.value + eps
        if self.kind == "rel":
            return abs(sim - real) <= self.value / 100.0 * abs(real) + eps
        return sim <= self.value + eps and real <= self.value + eps


@dataclass(frozen=True)
class Tolerance:
    text: str
    bounds: tuple[Bound, ...]

    def ok(self, sim: float, real: float) -> bool:
        return any(b.holds(sim, real) for b in self.bounds)

    def units(self) -> set[str]:
        return {b.unit for b in self.bounds if b.unit is not None}


def parse_tolerance(text: str, where: str = "tol") -> Tolerance:
    """Read a tolerance (syntax in validation/suite.toml's header), by the
    core's reader. Raises ``ScenarioError`` (SL102) naming ``where``."""
    try:
        doc = native.tolerance(text)
    except ValueError as e:
        raise ScenarioError("SL102", f"{where}: {e}") from None
    return _tolerance(doc)


def _tolerance(doc: dict[str, Any]) -> Tolerance:
    bounds = tuple(Bound(str(b["kind"]), float(b["value"]), b["unit"]) for b in doc["bounds"])
    return Tolerance(str(doc["text"]), bounds)


# ---------------------------------------------------------------- the suite


@dataclass(frozen=True)
class MetricSpec:
    metric: str
    tol: Tolerance
    task: str | None = None
    group: str | None = None
    cgroup: str | None = None  # a [[cgroup]]'s path (the cgroup metrics)
    cpu: str | None = None  # "all" or a CPU number
    cpus: str | None = None
    sets: tuple[str, ...] = ()
    thread: int | None = None  # cyclictest's thread number (T: N)
    #: Who judges the row: "local" (the real-timing oracle, ``validate
    #: --local``), "qemu" (the guests) or "any"; the suite's ``oracle``, by
    #: default "local" for the timing metrics (suite.toml's header).
    oracle: str = "any"

    def judged_by(self, oracle: str) -> bool:
        """Whether a run on ``oracle`` ("local", "qemu"; "any": every row) judges this row."""
        return oracle == "any" or self.oracle in ("any", oracle)

    @property
    def label(self) -> str:
        parts = [self.metric]
        if self.task is not None:
            parts.append(self.task)
        if self.group is not None:
            parts.append(f"group {self.group}")
        if self.cgroup is not None:
            parts.append(f"cgroup {self.cgroup}")
        if self.cpu is not None:
            parts.append("all" if self.cpu == "all" else f"cpu {self.cpu}")
        if self.cpus is not None:
            parts.append(f"cpus {self.cpus}")
        if self.sets:
            parts.append("|".join(self.sets))
        if self.thread is not None:
            parts.append(f"T:{self.thread}")
        return " ".join(parts)


@dataclass(frozen=True)
class Entry:
    name: str
    file: Path
    why: str
    control: bool
    sim_set: tuple[Override, ...]
    metrics: tuple[MetricSpec, ...]
    #: The real side runs this command in the guest (a real benchmark tool)
    #: instead of the runner; the simulator runs the scenario, its model.
    tool: tuple[str, ...] = ()


@dataclass(frozen=True)
class Suite:
    path: Path
    name: str
    seed: int
    entries: tuple[Entry, ...]


def _metric_spec(m: dict[str, Any]) -> MetricSpec:
    return MetricSpec(
        metric=str(m["metric"]),
        tol=_tolerance(m["tol"]),
        task=m["task"],
        group=m["group"],
        cgroup=m["cgroup"],
        cpu=m["cpu"],
        cpus=m["cpus"],
        sets=tuple(m["sets"]),
        thread=m["thread"],
        oracle=str(m["oracle"]),
    )


def load_suite(path: str | Path | None = None) -> Suite:
    """Read and check a suite file (default: ``$SCHEDLAB_SUITE``, else
    validation/suite.toml). The core checks it: its keys, each entry's file
    (beside the suite), overrides, tool and metrics, each metric's selectors
    and its tolerance in the metric's unit (``ScenarioError`` naming the key
    path)."""
    p = Path(path) if path is not None else Path(os.environ.get(SUITE_ENV) or DEFAULT_SUITE)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as err:
        raise UsageError("SL001", f"{p}: cannot read the validation suite: {err.strerror or err}") from None
    doc = native.suite(text, str(p), p.stem, str(p.parent))
    entries = tuple(
        Entry(
            name=str(e["name"]),
            file=(p.parent / str(e["file"])).resolve(),
            why=str(e["why"]),
            control=bool(e["control"]),
            sim_set=tuple((str(k), str(lit)) for k, _, lit in e["sim_set"]),
            metrics=tuple(_metric_spec(m) for m in e["metrics"]),
            tool=tuple(str(a) for a in e["tool"]),
        )
        for e in doc["entries"]
    )
    return Suite(p, str(doc["name"]), int(doc["seed"]), entries)


def select_entries(suite: Suite, only: Sequence[str]) -> list[Entry]:
    if not only:
        return list(suite.entries)
    names = {e.name for e in suite.entries}
    unknown = [n for n in only if n not in names]
    if unknown:
        raise UsageError("SL001", f"--only {' '.join(unknown)}: not in {suite.path}; accepted: {', '.join(names)}")
    return [e for e in suite.entries if e.name in set(only)]
