"""The validation suite: the simulator against real kernels.

    schedlab validate [--kernel 6.1|6.12] [--json FILE] [--only NAME ...] [--local] [--suite FILE]

For each scenario of ``validation/suite.toml`` (its header documents the
format, the metrics and the tolerance syntax) this runs the simulator at the
oracle kernel's version (``kernel.version`` overridden to 6.1 or 6.12, plus
the entry's ``sim_set``) and the same scenario for real: under the QEMU
oracle (:func:`schedlab.qemu.run_in_guest`, icount shift=0, with the static
``schedlab-runner``, built if missing) or, with ``--local``, on this kernel
(machines bigger than this host are refused). It prints a fidelity table
(scenario, metric, sim, real, difference, tolerance, verdict) and exits 0
when every row is ok and every negative-control row is off, 1 otherwise, 2 on
an error (SL300 when the oracle is missing or a guest fails).

Both sides are read over their measurement window by ``schedlab.metrics``
(the simulator's per-task ``window`` counters, the runner's counters, which
are window deltas already); each scenario is simulated once. At 6.12 the
simulator runs with NO_DELAY_DEQUEUE (not modelled; see ``KERNEL_SIM_SET``).
Its wakeup delays come from its sched trace (the sleep timer's expiry, or
``sched_wakeup``, to ``sched_switch``; :func:`sim_wakeup_delays_us`); the
runner's from its timer/sleep ops (expiry to return to user space, hrtimer
slack included).

Metrics the guest cannot measure are not emitted: a metric whose real value is
null (``se.nr_migrations`` absent, a task that recorded no wakeup delay) is
left out of ``results`` and listed under ``unmeasured``. nr_wakeups and
wait_max (schedstats, off by default) are not used at all.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schedlab import native
from schedlab.errors import ScenarioError, TopologyError, UsageError
from schedlab.metrics import MetricError, Report, TaskWindow, parse_cpulist, percentile
from schedlab.overrides import Override, toml_literal
from schedlab.report import write_json
from schedlab.scenarios import parse_toml, read_text

__all__ = [
    "KERNELS",
    "METRIC_UNITS",
    "Entry",
    "MetricError",
    "MetricSpec",
    "Side",
    "Suite",
    "Tolerance",
    "cmd_validate",
    "compute",
    "exit_status",
    "format_table",
    "load_suite",
    "parse_tolerance",
    "real_side",
    "sim_side",
    "sim_wakeup_delays_us",
    "trace_delays_us",
    "validate",
]

REPO = Path(__file__).resolve().parents[2]
SUITE_ENV = "SCHEDLAB_SUITE"
DEFAULT_SUITE = REPO / "validation" / "suite.toml"
KERNELS = ("6.1", "6.12")
RUNNER_TARGET = "x86_64-unknown-linux-gnu"
STATIC_RUNNER = REPO / "target" / RUNNER_TARGET / "release" / "schedlab-runner"
#: Simulator overrides per oracle kernel, beyond ``kernel.version``: what the
#: simulator cannot model of that kernel and refuses (SL120) unless turned off.
#: 6.12 runs DELAY_DEQUEUE (default on since 6.12), which schedlab does not
#: model: the simulation runs without it, the guest with it -- a known gap
#: the results carry under "sim_overrides".
KERNEL_SIM_SET: dict[str, tuple[Override, ...]] = {"6.12": (("kernel.features", '["NO_DELAY_DEQUEUE"]'),)}
#: Wall seconds a guest may take (TCG at shift=0 is slow: ~10 s per busy guest CPU-second).
GUEST_TIMEOUT_S = 900.0

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
}
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
        return " ".join(parts)


@dataclass(frozen=True)
class Entry:
    name: str
    file: Path
    why: str
    control: bool
    sim_set: tuple[Override, ...]
    metrics: tuple[MetricSpec, ...]


@dataclass(frozen=True)
class Suite:
    path: Path
    name: str
    seed: int
    entries: tuple[Entry, ...]


_ENTRY_KEYS = {"name", "file", "why", "control", "sim_set", "metrics"}
_METRIC_KEYS = {"metric", "tol", "task", "group", "cpu", "cpus", "sets"}


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
        "wakeup_p50": lambda s: s.group is None,
        "wakeup_p90": lambda s: s.group is None,
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
        entries.append(
            Entry(
                name=name,
                file=f,
                why=str(e.get("why", "")),
                control=bool(e.get("control", False)),
                sim_set=tuple((str(k), toml_literal(v)) for k, v in sim_set.items()),
                metrics=specs,
            )
        )
    return Suite(p, str(meta.get("name", p.stem)), int(meta.get("seed", 1)), tuple(entries))


# ---------------------------------------------------------------- measurements


@dataclass(frozen=True)
class Side:
    """One side of a comparison: its report (read over its measurement
    window) and where its wakeup-delay percentiles come from: ``(task comm,
    or None for every task, p) -> us``."""

    report: Report
    wakeup_us: Callable[[str | None, float], float | None]


def real_side(doc: Mapping[str, Any]) -> Side:
    """A real run's side: the runner's report has the percentiles."""
    rep = Report(doc)
    return Side(rep, rep.wakeup_delay_us)


def sim_side(report: Mapping[str, Any], trace: str | None) -> Side:
    """The simulator's side: its report, and the wakeup delays of its sched
    trace text (``trace``) over the report's measurement window."""
    rep = Report(report)
    delays = sim_wakeup_delays_us(report, trace) if trace is not None else {}

    def pct(comm: str | None, p: float) -> float | None:
        vals = delays.get(comm, []) if comm is not None else [d for v in delays.values() for d in v]
        return percentile(vals, p)

    return Side(rep, pct)


# TODO(report): replace with the report's timer-delay fields
def sim_wakeup_delays_us(report: Mapping[str, Any], trace: str) -> dict[str, list[float]]:
    """Wakeup delays (us) per task comm in the report's measurement window,
    from the run's ftrace text (see :func:`trace_delays_us`): the simulator's
    report does not carry them measured as the runner measures them yet."""
    window = Report(report).window_ns or (0.0, 0.0)
    pids = {int(t["pid"]): str(t["comm"]) for t in report.get("tasks") or []}
    return trace_delays_us(trace, pids, window[0] / 1e9, window[1] / 1e9)


_TRACE_RE = re.compile(r"\s(\d+\.\d+): (sched_wakeup|sched_switch|hrtimer_start): (.*)$")


def trace_delays_us(trace: str, pids: Mapping[int, str], start_s: float, end_s: float) -> dict[str, list[float]]:
    """Wakeup delays (us) per comm from ftrace text, measured as the runner
    measures them: from the sleep timer's expiry (the ``softexpires`` of the
    task's last ``hrtimer_start``, so hrtimer slack counts) or, for a wakeup
    without a timer, from its ``sched_wakeup``, to the next ``sched_switch``
    to the task. Wakeups in [start_s, end_s] only."""
    armed: dict[int, float] = {}
    pending: dict[int, float] = {}
    out: dict[str, list[float]] = {c: [] for c in pids.values()}
    for line in trace.splitlines():
        m = _TRACE_RE.search(line)
        if not m:
            continue
        t = float(m.group(1))
        kv = dict(x.split("=", 1) for x in m.group(3).replace(" ==> ", " ").split() if "=" in x)
        event = m.group(2)
        if event == "hrtimer_start":
            pid = _pid_of_line(line)
            if pid in pids:
                armed[pid] = int(kv.get("softexpires", "0")) / 1e9
        elif event == "sched_wakeup":
            pid = int(kv.get("pid", -1))
            since = armed.pop(pid, t)
            if pid in pids and start_s <= t <= end_s and pid not in pending:
                pending[pid] = min(since, t)
        else:
            pid = int(kv.get("next_pid", -1))
            if pid in pending:
                out[pids[pid]].append((t - pending.pop(pid)) * 1e6)
    return out


_WHO_RE = re.compile(r"^\s*\S+-(\d+)\s+\[")


def _pid_of_line(line: str) -> int:
    """The pid of the task an ftrace line was recorded in (``comm-PID [CPU]``)."""
    m = _WHO_RE.match(line)
    return int(m.group(1)) if m else -1


def compute(spec: MetricSpec, side: Side) -> float | None:
    """The value of ``spec`` on one side (None: not measured). Raises
    ``MetricError`` for a selector the report does not have."""
    rep = side.report

    def select() -> list[TaskWindow]:
        if spec.task is not None:
            return [rep.task(spec.task)]
        if spec.group is not None:
            return rep.group_tasks(spec.group)
        if not rep.tasks:
            raise MetricError("a task", [])
        return list(rep.tasks.values())

    def shares() -> list[float] | None:
        s = [rep.share_pct(t) for t in select()]
        return None if any(x is None for x in s) else [x for x in s if x is not None]

    m = spec.metric
    if m in ("share", "share_min", "share_max"):
        s = shares()
        if s is None:
            return None
        return sum(s) / len(s) if m == "share" else min(s) if m == "share_min" else max(s)
    if m == "idle":
        return rep.idle_pct(spec.cpu) if spec.cpu is not None else rep.mean_idle_pct(str(spec.cpus))
    if m == "idle_spread":
        means = [rep.mean_idle_pct(s) for s in spec.sets]
        return max(means) - min(means)
    if m == "sibling_overlap":
        return sum(min(100.0 - rep.idle_pct(str(c)) for c in parse_cpulist(s)) for s in spec.sets) / len(spec.sets)
    if m == "migrations":
        return rep.per_s(rep.migrations(select()))
    if m == "switches":
        return rep.per_s(rep.switches(select()))
    if m in ("wakeup_p50", "wakeup_p90"):
        if spec.task is not None:
            select()
        return side.wakeup_us(spec.task, float(m[len("wakeup_p") :]))
    raise MetricError(f"metric {m!r}", list(METRIC_UNITS))


# ---------------------------------------------------------------- running


def _note(msg: str) -> None:
    print(f"  {msg}", file=sys.stderr, flush=True)


def run_sim(entry: Entry, kernel: str, seed: int) -> Side:
    """The simulator at ``kernel`` with the entry's ``sim_set``: one run, its
    report (window counters) and its sched trace (wakeup delays)."""
    text = read_text(entry.file)
    source = str(entry.file)
    overrides: list[Override] = [
        ("kernel.version", toml_literal(kernel)),
        *KERNEL_SIM_SET.get(kernel, ()),
        *entry.sim_set,
    ]
    with tempfile.TemporaryDirectory(prefix="schedlab-validate-") as tmp:
        trace_path = str(Path(tmp) / "trace.txt")
        report = native.run(text, source, seed, overrides, False, trace_path)
        trace = Path(trace_path).read_text(encoding="utf-8", errors="replace")
    return sim_side(report, trace)


def static_runner(progress: Callable[[str], None] = _note) -> Path:
    """The static runner for the guest: ``$SCHEDLAB_RUNNER`` if set, else the
    checkout's target/x86_64-unknown-linux-gnu/release, built like `make runner`."""
    env = os.environ.get("SCHEDLAB_RUNNER")
    if env:
        p = Path(env)
        if not (p.is_file() and os.access(p, os.X_OK)):
            raise UsageError("SL001", f"SCHEDLAB_RUNNER={env}: not an executable file")
        return p
    if STATIC_RUNNER.is_file():
        return STATIC_RUNNER
    cargo = shutil.which("cargo")
    if cargo is None or not (REPO / "Cargo.toml").is_file():
        raise UsageError("SL001", f"{STATIC_RUNNER} is missing and cargo is not available; accepted: `make runner`")
    progress(f"building the static runner ({STATIC_RUNNER.relative_to(REPO)}) ...")
    env_vars = dict(os.environ, RUSTFLAGS="-C target-feature=+crt-static")
    cmd = [cargo, "build", "--release", "-p", "schedlab-runner", "--target", RUNNER_TARGET]
    r = subprocess.run(cmd, cwd=REPO, env=env_vars, check=False)
    if r.returncode != 0 or not STATIC_RUNNER.is_file():
        raise UsageError("SL001", f"building the static runner failed (status {r.returncode}); try `make runner`")
    return STATIC_RUNNER


RealRunner = Callable[[Entry], Mapping[str, Any]]


def qemu_real(kernel: str, progress: Callable[[str], None] = _note) -> RealRunner:
    from schedlab import qemu

    orc = qemu.find_oracle()  # SL300 now, before any simulation, when it is missing
    runner = static_runner(progress)

    def run(entry: Entry) -> Mapping[str, Any]:
        return qemu.run_in_guest(entry.file, runner, kernel=kernel, shift=0, timeout=GUEST_TIMEOUT_S, oracle=orc)

    return run


def local_real(entries: Sequence[Entry]) -> RealRunner:
    from schedlab import real

    host = os.cpu_count() or 1
    too_big = []
    for e in entries:
        nr = int((native.check(read_text(e.file), str(e.file), []).get("machine") or {}).get("nr_cpus") or 0)
        if nr > host:
            too_big.append(f"{e.name} ({nr} CPUs)")
    if too_big:
        fits = [e.name for e in entries if not any(t.startswith(e.name + " ") for t in too_big)]
        raise TopologyError(
            "SL110",
            f"--local: this host has {host} CPUs; a real run cannot create CPUs, so these scenarios cannot run "
            f"here: {', '.join(too_big)}; accepted: --only with scenarios of at most {host} CPUs"
            + (f" ({' '.join(fits)})" if fits else "")
            + ", or the QEMU oracle (drop --local)",
        )
    runner = real.find_runner()

    def run(entry: Entry) -> Mapping[str, Any]:
        return real.run_real(str(entry.file), runner=runner)

    return run


def _round(x: float) -> float:
    return round(x, 3)


def validate(
    suite: Suite,
    kernel: str,
    real_runner: RealRunner,
    *,
    only: Sequence[str] = (),
    progress: Callable[[str], None] | None = _note,
) -> dict[str, Any]:
    """Run the suite; the JSON document (``kernel``, ``results`` and extras)."""
    say = progress or (lambda m: None)
    entries = select_entries(suite, only)
    results: list[dict[str, Any]] = []
    unmeasured: list[dict[str, Any]] = []
    timings: dict[str, dict[str, float]] = {}
    reals: dict[Path, tuple[Mapping[str, Any], float]] = {}
    releases: set[str] = set()
    for e in entries:
        t0 = time.monotonic()
        sim = run_sim(e, kernel, suite.seed)
        t_sim = time.monotonic() - t0
        if e.file not in reals:
            say(f"{e.name}: real run of {e.file.name} ...")
            t1 = time.monotonic()
            doc = real_runner(e)
            reals[e.file] = (doc, time.monotonic() - t1)
        doc, t_real = reals[e.file]
        rel = (doc.get("oracle") or {}).get("release") or (doc.get("host") or {}).get("kernel_release")
        if rel:
            releases.add(str(rel))
        rv = real_side(doc)
        timings[e.name] = {"sim_s": round(t_sim, 2), "real_s": round(t_real, 2)}
        for spec in e.metrics:
            try:
                a, b = compute(spec, sim), compute(spec, rv)
            except MetricError as err:
                raise ScenarioError("SL102", f"{suite.path}: scenario {e.name}: metric {spec.label}: {err}") from None
            if b is None or a is None:
                why = "the real run did not measure it" if b is None else "the simulator did not measure it"
                unmeasured.append({"scenario": e.name, "metric": spec.label, "why": why})
                continue
            results.append(
                {
                    "scenario": e.name,
                    "metric": spec.label,
                    "sim": _round(a),
                    "real": _round(b),
                    "tolerance": spec.tol.text,
                    "verdict": "ok" if spec.tol.ok(a, b) else "off",
                    "control": e.control,
                }
            )
        say(f"{e.name}: sim {t_sim:.1f} s, real {t_real:.1f} s")
    return {
        "kernel": kernel,
        "suite": suite.name,
        "real_kernel": sorted(releases),
        "sim_overrides": [f"{k}={val}" for k, val in KERNEL_SIM_SET.get(kernel, ())],
        "results": results,
        "unmeasured": unmeasured,
        "timings": timings,
    }


def select_entries(suite: Suite, only: Sequence[str]) -> list[Entry]:
    if not only:
        return list(suite.entries)
    names = {e.name for e in suite.entries}
    unknown = [n for n in only if n not in names]
    if unknown:
        raise UsageError("SL001", f"--only {' '.join(unknown)}: not in {suite.path}; accepted: {', '.join(names)}")
    return [e for e in suite.entries if e.name in set(only)]


def exit_status(results: Sequence[Mapping[str, Any]]) -> int:
    """0 when every row is ok and every control row is off, else 1."""
    for r in results:
        want = "off" if r.get("control") else "ok"
        if r.get("verdict") != want:
            return 1
    return 0


def format_table(doc: Mapping[str, Any]) -> str:
    def f(x: Any) -> str:
        return "-" if x is None else f"{x:.2f}"

    head = ["scenario", "metric", "sim", "real", "difference", "tolerance", "verdict"]
    table = [head]
    for r in doc.get("results") or []:
        diff = r["sim"] - r["real"]
        verdict = r["verdict"] + (" (control: want off)" if r.get("control") else "")
        table.append([r["scenario"], r["metric"], f(r["sim"]), f(r["real"]), f"{diff:+.2f}", r["tolerance"], verdict])
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    right = {2, 3, 4}
    lines = [
        "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip()
        for row in table
    ]
    for u in doc.get("unmeasured") or []:
        lines.append(f"not measured: {u['scenario']}: {u['metric']}: {u['why']}")
    res = doc.get("results") or []
    bad = [r for r in res if r["verdict"] != ("off" if r.get("control") else "ok")]
    lines.append(
        f"kernel {doc.get('kernel')} ({', '.join(doc.get('real_kernel') or []) or '?'}): {len(res)} rows, "
        f"{sum(1 for r in res if not r.get('control') and r['verdict'] == 'ok')} ok, "
        f"{sum(1 for r in res if not r.get('control') and r['verdict'] == 'off')} off, "
        f"controls {sum(1 for r in res if r.get('control') and r['verdict'] == 'off')}/"
        f"{sum(1 for r in res if r.get('control'))} off as they must be; "
        + ("PASS" if not bad else f"FAIL ({len(bad)} row(s) not as required)")
    )
    return "\n".join(lines)


def saving_real(inner: RealRunner, directory: str) -> RealRunner:
    """Keep every real report the inner runner returns (re-judge a model change later with --real-from)."""
    d = Path(directory)
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError("SL001", f"--save-real {directory}: cannot create: {e.strerror or e}") from None

    def run(entry: Entry) -> Mapping[str, Any]:
        doc = inner(entry)
        write_json(str(d / f"{entry.file.stem}.json"), doc)
        return doc

    return run


def kept_real(directory: str) -> RealRunner:
    """Real reports kept by --save-real, one per scenario file."""

    def run(entry: Entry) -> Mapping[str, Any]:
        p = Path(directory) / f"{entry.file.stem}.json"
        try:
            doc = json.loads(p.read_text(encoding="utf-8"))
        except OSError as e:
            raise UsageError(
                "SL001",
                f"--real-from {directory}: no kept report for {entry.name} ({p}): {e.strerror or e}; "
                "accepted: a directory written by --save-real",
            ) from None
        except ValueError as e:
            raise UsageError("SL001", f"--real-from {directory}: {p} is not JSON: {e}") from None
        if not isinstance(doc, dict):
            raise UsageError("SL001", f"--real-from {directory}: {p} is not a report object")
        return doc

    return run


# ---------------------------------------------------------------- the command (arguments: cli.py)


def cmd_validate(args: argparse.Namespace) -> int:
    from schedlab.qemu import kernel_for_version

    suite = load_suite(args.suite)
    entries = select_entries(suite, args.only)
    progress = None if args.quiet else _note
    if args.real_from:
        kernel = args.kernel or "6.1"
        real_runner = kept_real(args.real_from)
    elif args.local:
        kernel = args.kernel or kernel_for_version(".".join(os.uname().release.split(".")[:2]))
        real_runner = local_real(entries)
    else:
        kernel = args.kernel or "6.1"
        real_runner = qemu_real(kernel, progress or (lambda m: None))
    if args.save_real:
        real_runner = saving_real(real_runner, args.save_real)
    t0 = time.monotonic()
    doc = validate(suite, kernel, real_runner, only=args.only, progress=progress)
    doc["mode"] = "kept" if args.real_from else "local" if args.local else "qemu"
    doc["wall_s"] = round(time.monotonic() - t0, 1)
    if args.json:
        write_json(args.json, doc)
    if not args.quiet and args.json != "-":
        print(format_table(doc))
    return exit_status(doc["results"])
