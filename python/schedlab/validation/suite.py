"""The validation suite file (``validation/suite.toml``; its header documents
the format, the metrics and the tolerance syntax): its scenarios, the metrics
each is judged on, and their tolerances, read and checked.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schedlab._paths import VALIDATION
from schedlab.errors import ScenarioError, UsageError
from schedlab.metrics import parse_cpulist
from schedlab.overrides import Override, toml_literal
from schedlab.qemu.oracle import KERNELS as ORACLE_KERNELS
from schedlab.scenarios import parse_toml

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

#: metric -> its unit.
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
}
#: The metrics of an entry that runs a real tool, and only of such an entry.
TOOL_METRICS = ("tool_time", "latency_avg", "latency_max")
#: tolerance unit -> (metric unit, factor to it).
_TOL_UNITS: dict[str, tuple[str, float]] = {
    "points": ("points", 1.0),
    "point": ("points", 1.0),
    "/s": ("/s", 1.0),
    "us": ("us", 1.0),
    "µs": ("us", 1.0),
    "ms": ("us", 1000.0),
}
_TOL_SYNTAX = '"±3 points", "±2/s", "±20 us", "±25 %", "<= 5/s", or alternatives joined by " or "'


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


_BOUND_RE = re.compile(r"^(±|\+-|\+/-|<=)\s*([0-9]+(?:\.[0-9]+)?)\s*(points?|%|/s|us|µs|ms)$")


def parse_tolerance(text: str, where: str = "tol") -> Tolerance:
    """Parse a tolerance (syntax in validation/suite.toml's header).
    Raises ``ScenarioError`` (SL102) naming ``where``."""
    if not isinstance(text, str) or not text.strip():
        raise ScenarioError("SL102", f"{where}: {text!r}; accepted: {_TOL_SYNTAX}")
    bounds = []
    for part in text.split(" or "):
        m = _BOUND_RE.match(part.strip())
        if not m:
            raise ScenarioError("SL102", f"{where}: cannot read {part.strip()!r} in {text!r}; accepted: {_TOL_SYNTAX}")
        op, num, unit = m.group(1), float(m.group(2)), m.group(3)
        if unit == "%":
            if op == "<=":
                raise ScenarioError(
                    "SL102", f'{where}: {part.strip()!r}: "%" is relative, only with "±"; for percentages use points'
                )
            bounds.append(Bound("rel", num, None))
            continue
        munit, factor = _TOL_UNITS[unit]
        bounds.append(Bound("max" if op == "<=" else "abs", num * factor, munit))
    return Tolerance(text, tuple(bounds))


# ---------------------------------------------------------------- the suite


@dataclass(frozen=True)
class MetricSpec:
    metric: str
    tol: Tolerance
    task: str | None = None
    group: str | None = None
    cpu: str | None = None  # "all" or a CPU number
    cpus: str | None = None
    sets: tuple[str, ...] = ()
    thread: int | None = None  # cyclictest's thread number (T: N)

    @property
    def label(self) -> str:
        parts = [self.metric]
        if self.task is not None:
            parts.append(self.task)
        if self.group is not None:
            parts.append(f"group {self.group}")
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


_ENTRY_KEYS = {"name", "file", "why", "control", "sim_set", "metrics", "tool"}
_METRIC_KEYS = {"metric", "tol", "task", "group", "cpu", "cpus", "sets", "thread"}


def _metric_spec(m: Any, where: str) -> MetricSpec:
    if not isinstance(m, Mapping):
        raise ScenarioError("SL102", f"{where}: not a table; accepted: {{ metric = ..., tol = ... }}")
    unknown = set(m) - _METRIC_KEYS
    if unknown:
        raise ScenarioError("SL101", f"{where}: unknown key(s) {sorted(unknown)}; accepted: {sorted(_METRIC_KEYS)}")
    for k in ("metric", "tol"):
        if k not in m:
            raise ScenarioError("SL103", f"{where}: missing key {k!r}")
    metric = m["metric"]
    if metric not in METRIC_UNITS:
        raise ScenarioError("SL102", f"{where}.metric: {metric!r}; accepted: {', '.join(METRIC_UNITS)}")
    tol = parse_tolerance(m["tol"], f"{where}.tol")
    bad_units = tol.units() - {METRIC_UNITS[metric]}
    if bad_units:
        raise ScenarioError(
            "SL102",
            f"{where}.tol: {tol.text!r}: unit {sorted(bad_units)} for {metric}, which is in {METRIC_UNITS[metric]}",
        )
    cpu = m.get("cpu")
    if cpu is not None and not (cpu == "all" or (isinstance(cpu, int) and not isinstance(cpu, bool) and cpu >= 0)):
        raise ScenarioError("SL102", f'{where}.cpu: {cpu!r}; accepted: a CPU number or "all"')
    sets = m.get("sets", [])
    if not isinstance(sets, list) or not all(isinstance(s, str) for s in sets):
        raise ScenarioError("SL102", f"{where}.sets: {sets!r}; accepted: a list of cpulists")
    for s in (*sets, *([m["cpus"]] if "cpus" in m else [])):
        try:
            parse_cpulist(str(s))
        except ValueError:
            raise ScenarioError("SL102", f'{where}: cpulist {s!r}; accepted: e.g. "0-3,6"') from None
    spec = MetricSpec(
        metric=metric,
        tol=tol,
        task=None if m.get("task") is None else str(m["task"]),
        group=None if m.get("group") is None else str(m["group"]),
        cpu=None if cpu is None else str(cpu),
        cpus=None if m.get("cpus") is None else str(m["cpus"]),
        sets=tuple(sets),
        thread=int(m["thread"]) if isinstance(m.get("thread"), int) else None,
    )
    need: dict[str, Callable[[MetricSpec], bool]] = {
        "share": lambda s: (s.task is None) != (s.group is None),
        "share_min": lambda s: s.group is not None,
        "share_max": lambda s: s.group is not None,
        "idle": lambda s: (s.cpu is None) != (s.cpus is None),
        "idle_spread": lambda s: len(s.sets) >= 2,
        "sibling_overlap": lambda s: len(s.sets) >= 1,
        "migrations": lambda s: s.task is None or s.group is None,
        "switches": lambda s: s.task is None or s.group is None,
        "wakeup_p50": lambda s: s.task is None or s.group is None,
        "wakeup_p90": lambda s: s.task is None or s.group is None,
        "wakeup_p99": lambda s: s.task is None or s.group is None,
        "wait": lambda s: (s.task is None) != (s.group is None),
        "wait_min": lambda s: s.group is not None,
        "wait_max": lambda s: s.group is not None,
        "wait_avg": lambda s: s.task is None or s.group is None,
        "migrations_max": lambda s: s.group is not None,
        "tool_time": lambda s: (s.task, s.group, s.cpu, s.cpus, s.sets, s.thread) == (None, None, None, None, (), None),
        "latency_avg": lambda s: s.thread is not None,
        "latency_max": lambda s: s.thread is not None,
    }
    if not need[metric](spec):
        raise ScenarioError("SL102", f"{where}: {metric} does not take these selectors; see the suite file's header")
    return spec


def load_suite(path: str | Path | None = None) -> Suite:
    """Read and check a suite file (default: ``$SCHEDLAB_SUITE``, else validation/suite.toml)."""
    p = Path(path) if path is not None else Path(os.environ.get(SUITE_ENV) or DEFAULT_SUITE)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as err:
        raise UsageError("SL001", f"{p}: cannot read the validation suite: {err.strerror or err}") from None
    doc = parse_toml(text, str(p))
    meta = doc.get("suite") or {}
    entries: list[Entry] = []
    names: set[str] = set()
    raw = doc.get("scenario")
    if not isinstance(raw, list) or not raw:
        raise ScenarioError("SL103", f"{p}: no [[scenario]] entries")
    for i, e in enumerate(raw):
        where = f"{p}: scenario[{i}]"
        unknown = set(e) - _ENTRY_KEYS
        if unknown:
            raise ScenarioError("SL101", f"{where}: unknown key(s) {sorted(unknown)}; accepted: {sorted(_ENTRY_KEYS)}")
        for k in ("name", "file", "metrics"):
            if k not in e:
                raise ScenarioError("SL103", f"{where}: missing key {k!r}")
        name = str(e["name"])
        if name in names:
            raise ScenarioError("SL102", f"{where}.name: {name!r} appears twice")
        names.add(name)
        where = f"{p}: scenario {name}"
        f = (p.parent / str(e["file"])).resolve()
        if not f.is_file():
            raise ScenarioError("SL102", f"{where}.file: {e['file']!r}: no such file next to the suite")
        sim_set = e.get("sim_set", {})
        if not isinstance(sim_set, Mapping):
            raise ScenarioError("SL102", f'{where}.sim_set: accepted: a table {{ "task.0.nice" = 0 }}')
        metrics = e["metrics"]
        if not isinstance(metrics, list) or not metrics:
            raise ScenarioError("SL102", f"{where}.metrics: accepted: a non-empty list")
        specs = tuple(_metric_spec(m, f"{where}.metrics[{j}]") for j, m in enumerate(metrics))
        tool = e.get("tool", [])
        if not isinstance(tool, list) or not all(isinstance(a, str) for a in tool):
            raise ScenarioError(
                "SL102", f'{where}.tool: accepted: a command as a list of strings, e.g. ["hackbench", "-g", "1"]'
            )
        for s in specs:
            if (s.metric in TOOL_METRICS) != bool(tool):
                why = "needs the entry's `tool`" if tool == [] else "is not measured when the entry runs a `tool`"
                raise ScenarioError(
                    "SL102", f"{where}: metric {s.metric} {why}; accepted with a tool: {', '.join(TOOL_METRICS)}"
                )
        entries.append(
            Entry(
                name=name,
                file=f,
                why=str(e.get("why", "")),
                control=bool(e.get("control", False)),
                sim_set=tuple((str(k), toml_literal(v)) for k, v in sim_set.items()),
                metrics=specs,
                tool=tuple(tool),
            )
        )
    return Suite(p, str(meta.get("name", p.stem)), int(meta.get("seed", 1)), tuple(entries))


def select_entries(suite: Suite, only: Sequence[str]) -> list[Entry]:
    if not only:
        return list(suite.entries)
    names = {e.name for e in suite.entries}
    unknown = [n for n in only if n not in names]
    if unknown:
        raise UsageError("SL001", f"--only {' '.join(unknown)}: not in {suite.path}; accepted: {', '.join(names)}")
    return [e for e in suite.entries if e.name in set(only)]
