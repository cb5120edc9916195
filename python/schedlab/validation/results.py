"""Judging: each suite metric computed on both sides (through
``schedlab.metrics``), the rows and their verdicts, the JSON document, the
fidelity table and the exit status; and the ``schedlab validate`` command
(its arguments are in cli.py).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from schedlab.calibrate import check_calibration, cost_overrides, run_local, table_of
from schedlab.errors import ScenarioError, UsageError
from schedlab.metrics import MetricError, TaskWindow, is_number, parse_cpulist
from schedlab.overrides import Override
from schedlab.report import write_json
from schedlab.validation.runners import (
    CALIBRATION_FILE,
    RealRunner,
    Side,
    host_series,
    host_sets,
    kept_calibration,
    kept_host_sets,
    kept_is_local,
    kept_real,
    kept_series,
    local_real,
    note,
    noting_warnings,
    qemu_calibration,
    qemu_real,
    real_side,
    repeated_real,
    run_sim,
    runner_read_sets,
    save_calibration,
    save_host_sets,
    saving_real,
    sim_version,
)
from schedlab.validation.suite import METRIC_UNITS, MetricSpec, Suite, load_suite, select_entries

__all__ = ["cmd_validate", "compute", "exit_status", "format_table", "validate"]


def compute(spec: MetricSpec, side: Side) -> float | None:
    """The value of ``spec`` on one side (None: not measured); on a repeated
    side, the median of its values on the runs that measured it. Raises
    ``MetricError`` for a selector the report does not have."""
    if side.runs:
        vals = [v for v in (compute(spec, r) for r in side.runs) if v is not None]
        return statistics.median(vals) if vals else None
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
    if m in ("tool_time", "latency_avg", "latency_max"):
        return side.tool_value(m, spec.thread)
    if m.startswith("psi_"):
        # psi_<resource>_<some|full>: the line's share of the window (None:
        # the kernel has no PSI, or it is off).
        res, kind = m[len("psi_") :].rsplit("_", 1)
        if not isinstance(rep.doc.get("pressure"), Mapping):
            return None
        return float(rep.key(f"pressure.{res}.{kind}.window_pct"))
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
        # The share of the window all the set's CPUs must have been busy at
        # once: Σ busy - (n - 1) x 100, floored at 0. (The smallest busy of
        # the set counted a task moving between siblings as overlap.)
        def overlap(cpus: list[int]) -> float:
            busy = sum(100.0 - rep.idle_pct(str(c)) for c in cpus)
            return max(0.0, busy - 100.0 * (len(cpus) - 1))

        return sum(overlap(parse_cpulist(s)) for s in spec.sets) / len(spec.sets)
    if m in ("wait", "wait_min", "wait_max"):
        w = [rep.wait_pct(t) for t in select()]
        if any(x is None for x in w):
            return None
        ws = [x for x in w if x is not None]
        return sum(ws) / len(ws) if m == "wait" else min(ws) if m == "wait_min" else max(ws)
    if m == "wait_avg":
        return rep.wait_avg_us(select())
    if m == "sleep_avg":
        return rep.sleep_avg_us(select())
    if m == "dirty_pct":
        return rep.dirty_pct()
    if m in ("cgroup_share", "throttled", "bursts"):
        row = rep.cgroup_row(str(spec.cgroup))
        v = {
            k: float(row[k]) if is_number(row.get(k)) else None
            for k in ("cpu_pct", "nr_periods", "nr_throttled", "nr_bursts")
        }
        if m == "cgroup_share":
            return v["cpu_pct"]
        if m == "throttled":
            # None when the group never ran a period (no quota, or no work).
            return 100.0 * (v["nr_throttled"] or 0.0) / v["nr_periods"] if v["nr_periods"] else None
        return rep.per_s(v["nr_bursts"])
    if m == "migrations":
        return rep.per_s(rep.migrations(select()))
    if m == "migrations_max":
        per_task = [rep.per_s(rep.migrations([t])) for t in select()]
        return None if any(x is None for x in per_task) else max(x for x in per_task if x is not None)
    if m == "switches":
        return rep.per_s(rep.switches(select()))
    if m in ("wakeup_p50", "wakeup_p90", "wakeup_p99"):
        p = float(m[len("wakeup_p") :])
        if spec.group is not None:
            # The group's worst task: the largest of its tasks' percentiles.
            vs = [side.timer_delay_us(t.comm, p) for t in select()]
            have = [v for v in vs if v is not None]
            return max(have) if have else None
        if spec.task is not None:
            select()
        return side.timer_delay_us(spec.task, p)
    raise MetricError(f"metric {m!r}", list(METRIC_UNITS))


def _round(x: float) -> float:
    return round(x, 3)


def validate(
    suite: Suite,
    kernel: str,
    real_runner: RealRunner,
    *,
    only: Sequence[str] = (),
    progress: Callable[[str], None] | None = note,
    costs: Mapping[str, int] | None = None,
    repeat: int = 1,
    step: Callable[[str, float], None] | None = None,
    sim_set: Sequence[Override] = (),
    oracle: str = "any",
) -> dict[str, Any]:
    """Run the suite; the JSON document (``kernel``, ``results`` and extras).
    ``step``, when given, gets each finished scenario (its name and the
    simulator's simulated seconds) instead of a progress line.
    ``costs``: the real machine's measured cost constants ({key: ns}, see
    :mod:`schedlab.calibrate`), simulated in place of the defaults.
    ``repeat``: the simulator's side is the median of that many seeds (the
    real side's repeats are the real runner's, see ``repeated_real``).
    ``sim_set``: overrides every simulator run takes before the entry's own
    (``--local``: this host's preemption model).
    ``oracle``: the real side's kind ("qemu" or "local"): a row the suite
    names for the other is listed under ``elsewhere``, not judged, and a
    scenario with no row left is not run ("any": every row)."""
    cost_sets = [*cost_overrides(costs or {}), *sim_set]
    say = progress or (lambda m: None)
    entries = select_entries(suite, only)
    results: list[dict[str, Any]] = []
    unmeasured: list[dict[str, Any]] = []
    timings: dict[str, dict[str, float]] = {}
    reals: dict[Path, tuple[Mapping[str, Any], float]] = {}
    releases: set[str] = set()
    versions: set[str] = set()
    elsewhere: list[dict[str, Any]] = []
    for e in entries:
        specs = [m for m in e.metrics if m.judged_by(oracle)]
        elsewhere += [{"scenario": e.name, "metric": m.label, "oracle": m.oracle} for m in e.metrics if m not in specs]
        if not specs:
            continue
        if e.file not in reals:
            say(f"{e.name}: real run of {e.file.name} ...")
            t1 = time.monotonic()
            doc = real_runner(e)
            reals[e.file] = (doc, time.monotonic() - t1)
        doc, t_real = reals[e.file]
        rel = (doc.get("oracle") or {}).get("release") or (doc.get("host") or {}).get("kernel_release")
        if rel:
            releases.add(str(rel))
        version = sim_version(kernel, doc)
        versions.add(version)
        t0 = time.monotonic()
        sim = run_sim(e, version, suite.seed, [*cost_sets, *(runner_read_sets(doc) if costs else [])], repeat)
        t_sim = time.monotonic() - t0
        rv = real_side(doc)
        timings[e.name] = {"sim_s": round(t_sim, 2), "real_s": round(t_real, 2)}
        for spec in specs:
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
        if step is not None:
            step(e.name, float(((sim.raw or {}).get("sim") or {}).get("end_ns") or 0) / 1e9)
        else:
            say(f"{e.name}: sim {t_sim:.1f} s, real {t_real:.1f} s")
    return {
        "kernel": kernel,
        "suite": suite.name,
        "real_kernel": sorted(releases),
        "sim_version": sorted(versions),
        "costs": dict(costs) if costs else "default",
        "repeat": repeat,
        "results": results,
        "unmeasured": unmeasured,
        "elsewhere": elsewhere,
        "timings": timings,
    }


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
    away = doc.get("elsewhere") or []
    if away:
        by = {"local": "the real-timing oracle (validate --local)", "qemu": "the QEMU guests"}
        for o in sorted({str(u["oracle"]) for u in away}):
            rows = [u for u in away if u["oracle"] == o]
            lines.append(
                f"judged by {by.get(o, o)}, not here: {len(rows)} row(s) of "
                f"{len({u['scenario'] for u in rows})} scenario(s) (suite.toml names the oracle of each row)"
            )
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


# ---------------------------------------------------------------- the command (arguments: cli.py)


def oracle_sets(kernel: str) -> list[Override]:
    """What the QEMU oracle's ``kernel`` build differs in from the suite's
    scenario files (:data:`schedlab.kernels.ORACLE_SIM_SETS`)."""
    from schedlab.kernels import ORACLE_SIM_SETS

    return list(ORACLE_SIM_SETS.get(kernel, ()))


#: ``--real-from bundled``: the kept guest reports shipped in the package.
BUNDLED = "bundled"


def cmd_validate(args: argparse.Namespace) -> int:
    suite = load_suite(args.suite)
    entries = select_entries(suite, args.only)
    progress = None if args.quiet else note
    sim_sets: list[Override] = []
    not_judged: list[str] = []
    if args.real_from == BUNDLED:
        # The guests' reports that ship with schedlab (package data).
        from schedlab._paths import VALIDATION

        args.real_from = str(VALIDATION / "real" / (args.kernel or "6.1"))
    if args.real_from and not args.only:
        # A directory of kept reports for part of the suite (this host's
        # two-CPU scenarios, validation/real/local-6.18) judges that part;
        # the rest is named, not skipped in silence.
        kept = [e for e in entries if (Path(args.real_from) / f"{e.file.stem}.json").is_file()]
        left = [e.name for e in entries if e not in kept]
        if kept and left:
            args.only = [e.name for e in kept]
            entries = kept
            not_judged = left
            if progress:
                progress(f"{args.real_from} has no reports for {len(left)} scenario(s), not judged: {' '.join(left)}")
    if args.real_from:
        # The simulator runs the kept reports' kernel (6.18.44 for
        # validation/real/local-6.18) unless --kernel names another.
        kernel = args.kernel or kept_series(args.real_from) or "6.1"
        real_runner = kept_real(args.real_from)
        sim_sets = kept_host_sets(args.real_from) if kept_is_local(args.real_from) else oracle_sets(kernel)
    elif args.local:
        # The simulator runs this host's own release (sim_version reads it
        # from each real report): 6.18.44 here, not the oracle era's 6.12.
        kernel = args.kernel or host_series()
        real_runner = local_real(entries)
        sim_sets = host_sets()
        if args.save_real:
            save_host_sets(sim_sets, args.save_real)
        if progress and sim_sets:
            progress("the simulator takes this host's " + ", ".join(f"{k} = {v}" for k, v in sim_sets))
    else:
        kernel = args.kernel or "6.1"
        real_runner = qemu_real(kernel, progress or (lambda m: None))
        sim_sets = oracle_sets(kernel)
    # Which rows this run judges is fixed before any run: the suite names
    # each row's oracle, and the run is one or the other.
    judge = "local" if args.local or (args.real_from and kept_is_local(args.real_from)) else "qemu"
    t0 = time.monotonic()
    costs = None
    if args.costs == "measured":
        if args.real_from:
            cal = kept_calibration(args.real_from)
            where = f"{args.real_from}/{CALIBRATION_FILE}"
        elif args.local:
            cal = run_local()
            where = "schedlab-runner --calibrate"
        else:
            cal = qemu_calibration(kernel, progress or (lambda m: None))
            where = f"the {kernel} guest"
        costs = check_calibration(cal, where)
        if args.save_real:
            save_calibration(cal, args.save_real)
        if progress:
            progress(f"measured costs ({where}): {table_of(costs)}")
    if args.repeat < 1:
        raise UsageError("SL001", f"--repeat {args.repeat}: accepted: an integer >= 1")
    if not args.real_from:
        real_runner = noting_warnings(real_runner, progress or (lambda m: None))
    if args.repeat > 1 and not args.real_from:
        real_runner = repeated_real(real_runner, args.repeat, progress or (lambda m: None))
    if args.save_real:
        real_runner = saving_real(real_runner, args.save_real)
    from schedlab.progress import Steps

    with Steps(f"validate {kernel}", len(entries), quiet=args.quiet) as steps:
        doc = validate(
            suite,
            kernel,
            real_runner,
            only=args.only,
            progress=None if args.quiet else steps.note,
            costs=costs,
            repeat=args.repeat,
            step=steps.done,
            sim_set=sim_sets,
            oracle=judge,
        )
    doc["mode"] = "kept" if args.real_from else "local" if args.local else "qemu"
    if not_judged:
        doc["not_judged"] = not_judged
    doc["wall_s"] = round(time.monotonic() - t0, 1)
    if args.json:
        write_json(args.json, doc)
    if not args.quiet and args.json != "-":
        print(format_table(doc))
    return exit_status(doc["results"])
