"""``schedlab sweep SPEC.toml``: a scenario over the cross product of axes
and seeds, streamed to a Parquet dataset as runs finish, resumable.

    [sweep]
    scenario = "sched-idle"                 # a bundled name or a path (relative to the spec)
    seeds = 5                               # seeds 1..5, or a list [1, 7, 9]
    out = "sched-idle.sweep"                # the results directory (default: SPEC's stem + ".sweep")
    set = { "measure.duration" = "2s" }     # overrides of every run

    [[sweep.axis]]
    key = "kernel.version"                  # any scenario key, as --set takes it
    values = ["2.6.35", "4.19", "5.5", "6.1", "6.6"]

    [sweep.metrics]                         # optional: as an experiment's [experiment.metrics]
    busy_idle = { mpstat = "average", cpu = "all", field = "idle" }

Every run is a row: one column per axis (named by its key), ``seed``, the
standard metrics (wasted CPU %, mean %idle, migrations/s and switches/s
over the window, wakeup delay p50/p99, events), the spec's own metrics,
``wall_s``, ``schedlab`` (the version), ``scenario_hash`` (SHA-256 of the
scenario text with the run's overrides: a changed scenario is a new row)
and ``error`` (null, or why the run failed: a failed run is recorded and
the sweep goes on). ``run_id`` is a hash of the scenario hash and the seed.

Rows go to ``OUT/part-NNNNN.parquet`` files as they finish (a file every
``FLUSH_ROWS`` rows or ``FLUSH_S`` seconds), so an interrupted sweep loses
at most the last few seconds; run again, it skips every ``run_id`` already
in OUT (``--retry-failed`` reruns the failed ones). ``schedlab.load_sweep``
reads OUT as one DataFrame.

Backends: ``processes`` (the default) runs ``--jobs`` simulations at once
in worker processes; ``threads`` in threads of this process (the native
run releases the GIL, but each run's Python around it does not: on the
2-CPU development machine 300 sched-idle runs took 1.17 s with two
processes, 1.34 s with two threads, 1.7-2.2 s with one; processes take
short runs in batches of up to 32 a task); ``dask`` sends
them to a Dask cluster (``--scheduler ADDR``, the ``dask`` extra). Rows do
not depend on the backend: a run is deterministic in its scenario and seed.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schedlab.errors import ScenarioError, SchedlabError, UsageError
from schedlab.overrides import Override, toml_literal

__all__ = ["SweepSpec", "cmd_sweep", "load_spec", "load_sweep", "plan", "run_one", "run_sweep"]

#: Rows buffered before a part file is written, and the longest they wait.
FLUSH_ROWS = 256
FLUSH_S = 5.0
#: The metrics every row has (besides the spec's own).
STANDARD_METRICS = (
    "wasted_cpu_pct", "idle_pct", "migrations_per_s", "switches_per_s", "wakeup_p50_us", "wakeup_p99_us", "events",
)  # fmt: skip


@dataclass(frozen=True)
class SweepSpec:
    source: str
    scenario: Path
    text: str
    seeds: tuple[int, ...]
    axes: tuple[tuple[str, tuple[Any, ...]], ...]
    fixed: tuple[Override, ...]
    metrics: Mapping[str, Any]  # name -> experiment.MetricSpec
    out: Path

    def points(self) -> Iterator[tuple[dict[str, Any], int]]:
        """(axis values, seed) of every run, axes in file order, seeds innermost."""
        keys = [k for k, _ in self.axes]
        for combo in itertools.product(*(v for _, v in self.axes)):
            for seed in self.seeds:
                yield dict(zip(keys, combo)), seed

    def __len__(self) -> int:
        n = len(self.seeds)
        for _, v in self.axes:
            n *= len(v)
        return n


def _bad(source: str, path: str, what: str, accepted: str) -> ScenarioError:
    return ScenarioError("SL102", f"{source}: {path}: {what}; accepted: {accepted}")


def load_spec(path: Path, out: str | None = None) -> SweepSpec:
    """Read and check a sweep file (every run's scenario is checked before any runs)."""
    from schedlab import native
    from schedlab.experiment import _Checker, _parse_metric
    from schedlab.scenarios import parse_toml, read_text, resolve, scenario_text

    source = str(path)
    doc = parse_toml(read_text(path), source)
    sw = doc.get("sweep")
    if not isinstance(sw, dict):
        raise ScenarioError("SL103", f"{source}: sweep: required table is missing")
    allowed = ("scenario", "seeds", "out", "set", "axis", "metrics")
    for k in sw:
        if k not in allowed:
            raise ScenarioError("SL101", f"{source}: sweep.{k}: unknown key; accepted here: {', '.join(allowed)}")
    name = sw.get("scenario")
    if not isinstance(name, str):
        raise ScenarioError("SL103", f"{source}: sweep.scenario: required key is missing (a bundled name or a path)")
    rel = path.parent / name
    scen = rel if rel.is_file() else resolve(name)
    text = scenario_text(scen)
    seeds_raw = sw.get("seeds", 1)
    if isinstance(seeds_raw, int) and not isinstance(seeds_raw, bool) and seeds_raw >= 1:
        seeds = tuple(range(1, seeds_raw + 1))
    elif isinstance(seeds_raw, list) and seeds_raw and all(isinstance(s, int) and s >= 0 for s in seeds_raw):
        seeds = tuple(seeds_raw)
    else:
        raise _bad(source, "sweep.seeds", f"{seeds_raw!r}", "a count >= 1 or a list of seeds")
    fixed_raw = sw.get("set", {})
    if not isinstance(fixed_raw, dict):
        raise _bad(source, "sweep.set", f"{fixed_raw!r}", 'a table of overrides: { "KEY" = VALUE }')
    fixed = tuple((str(k), toml_literal(v)) for k, v in fixed_raw.items())
    axes: list[tuple[str, tuple[Any, ...]]] = []
    for i, ax in enumerate(sw.get("axis") or []):
        p = f"sweep.axis[{i}]"
        if not isinstance(ax, dict) or set(ax) != {"key", "values"}:
            raise _bad(source, p, f"{ax!r}", '{ key = "KEY", values = [V, ...] }')
        vals = ax["values"]
        if not isinstance(vals, list) or not vals:
            raise _bad(source, f"{p}.values", f"{vals!r}", "a non-empty list")
        if any(ax["key"] == k for k, _ in axes):
            raise _bad(source, f"{p}.key", f"{ax['key']!r} is swept twice", "each key once")
        axes.append((str(ax["key"]), tuple(vals)))
    c = _Checker(source)
    metrics_raw = sw.get("metrics", {})
    if not isinstance(metrics_raw, dict):
        raise _bad(source, "sweep.metrics", f"{metrics_raw!r}", "a table: name = metric")
    metrics = {n: _parse_metric(c, n, m, "sweep.metrics") for n, m in metrics_raw.items()}
    clash = [n for n in metrics if n in STANDARD_METRICS]
    if clash:
        raise _bad(source, f"sweep.metrics.{clash[0]}", "the name of a standard metric", "another name")
    out_dir = Path(out) if out else path.parent / str(sw.get("out") or (path.stem + ".sweep"))
    spec = SweepSpec(source, scen, text, seeds, tuple(axes), fixed, metrics, out_dir)
    # Every point's scenario is checked now: a typo in an axis fails before hours of runs.
    for values, _ in itertools.islice(spec.points(), 0, None, len(seeds)):
        native.check(text, str(scen), [*fixed, *_overrides(values)])
    return spec


def _overrides(values: Mapping[str, Any]) -> list[Override]:
    return [(k, toml_literal(v)) for k, v in values.items()]


def scenario_hash(text: str, overrides: Sequence[Override]) -> str:
    h = hashlib.sha256(text.encode())
    for k, v in overrides:
        h.update(f"\0{k}={v}".encode())
    return h.hexdigest()[:16]


def run_id(shash: str, seed: int) -> str:
    return hashlib.sha256(f"{shash}/{seed}".encode()).hexdigest()[:16]


def _standard(report: Mapping[str, Any]) -> dict[str, Any]:
    from schedlab.metrics import ReportView

    v = ReportView(report)
    nr = len(report.get("cpus") or [])
    win = v.window_s or 1.0
    migr = sum((t.get("window") or {}).get("nr_migrations", 0) for t in report.get("tasks") or [])
    return {
        "wasted_cpu_pct": v.wasted_cpu_pct(),
        "idle_pct": v.mean_idle_pct(f"0-{nr - 1}") if nr else None,
        "migrations_per_s": migr / win,
        "switches_per_s": v.switches() / win,
        "wakeup_p50_us": v.wakeup_delay_us(None, 50),
        "wakeup_p99_us": v.wakeup_delay_us(None, 99),
        "events": (report.get("sim") or {}).get("events"),
    }


def run_one(
    text: str, source: str, fixed: Sequence[Override], values: Mapping[str, Any], seed: int, metrics: Mapping[str, Any]
) -> dict[str, Any]:
    """One run's row (never raises for a failed run: its ``error`` says why)."""
    from schedlab import __version__, native
    from schedlab.experiment import extract_metric

    ov = [*fixed, *_overrides(values)]
    if any(m.needs_samples for m in metrics.values()):
        ov.append(("measure.samples", "true"))
    shash = scenario_hash(text, ov)
    row: dict[str, Any] = {"run_id": run_id(shash, seed), **values, "seed": seed}
    t0 = time.monotonic()
    try:
        report = native.run(text, source, seed, ov, False)
        row |= _standard(report)
        for name, spec in metrics.items():
            val = extract_metric(report, spec)
            row[name] = json.dumps(val) if isinstance(val, list) else val
        row["error"] = None
    except SchedlabError as e:
        row["error"] = str(e)
    row["wall_s"] = round(time.monotonic() - t0, 4)
    row["schedlab"] = __version__
    row["scenario_hash"] = shash
    return row


def _schema(spec: SweepSpec) -> Any:
    """One Arrow schema for every part (a part whose column is all null
    would otherwise not merge with the others)."""
    import pyarrow as pa

    def axis_type(vals: Sequence[Any]) -> Any:
        if all(isinstance(v, bool) for v in vals):
            return pa.bool_()
        if all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
            return pa.int64()
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
            return pa.float64()
        return pa.string()

    fields = [("run_id", pa.string())]
    fields += [(k, axis_type(v)) for k, v in spec.axes]
    fields += [("seed", pa.int64())]
    fields += [(m, pa.int64() if m == "events" else pa.float64()) for m in STANDARD_METRICS]
    fields += [(n, pa.string() if m.is_list else pa.float64()) for n, m in spec.metrics.items()]
    fields += [
        ("error", pa.string()), ("wall_s", pa.float64()), ("schedlab", pa.string()), ("scenario_hash", pa.string()),
    ]  # fmt: skip
    return pa.schema(fields)


class _Writer:
    """Rows into OUT/part-NNNNN.parquet, a part every FLUSH_ROWS rows or FLUSH_S seconds."""

    def __init__(self, out: Path, schema: Any) -> None:
        self.out = out
        self.schema = schema
        self.columns = list(schema.names)
        self.rows: list[dict[str, Any]] = []
        self.last = time.monotonic()
        out.mkdir(parents=True, exist_ok=True)
        self.part = 1 + max((int(p.stem.split("-")[1]) for p in out.glob("part-*.parquet")), default=-1)

    def add(self, row: dict[str, Any]) -> None:
        self.rows.append(row)
        if len(self.rows) >= FLUSH_ROWS or time.monotonic() - self.last >= FLUSH_S:
            self.flush()

    def flush(self) -> None:
        self.last = time.monotonic()
        if not self.rows:
            return
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pylist([{c: r.get(c) for c in self.columns} for r in self.rows], schema=self.schema)
        tmp = self.out / f".part-{self.part:05d}.parquet.tmp"
        pq.write_table(table, tmp)
        tmp.rename(self.out / f"part-{self.part:05d}.parquet")  # whole parts only: a kill leaves no half file
        self.part += 1
        self.rows.clear()


def _done(out: Path, retry_failed: bool) -> set[str]:
    if not out.is_dir() or not any(out.glob("part-*.parquet")):
        return set()
    import pyarrow.parquet as pq

    done: set[str] = set()
    for p in sorted(out.glob("part-*.parquet")):
        t = pq.read_table(p, columns=["run_id", "error"]).to_pylist()
        done |= {r["run_id"] for r in t if not (retry_failed and r["error"])}
    return done


#: A backend: run a batch of (axis values, seed) points; a future of their rows.
Submit = Callable[[list[tuple[dict[str, Any], int]]], "Future[list[dict[str, Any]]]"]


def run_many(
    text: str,
    source: str,
    fixed: Sequence[Override],
    points: list[tuple[dict[str, Any], int]],
    metrics: Mapping[str, Any],
) -> list[dict[str, Any]]:
    """A batch of runs in one task (a worker's dispatch paid once for several short runs)."""
    return [run_one(text, source, fixed, values, seed, metrics) for values, seed in points]


def plan(spec: SweepSpec, retry_failed: bool = False) -> list[tuple[dict[str, Any], int]]:
    """The points whose rows are not in ``spec.out`` yet (with
    ``retry_failed``, failed rows count as not there)."""
    done = _done(spec.out, retry_failed)
    todo = []
    for values, seed in spec.points():
        ov = [*spec.fixed, *_overrides(values)]
        if any(m.needs_samples for m in spec.metrics.values()):
            ov.append(("measure.samples", "true"))
        if run_id(scenario_hash(spec.text, ov), seed) not in done:
            todo.append((values, seed))
    return todo


def run_sweep(
    spec: SweepSpec,
    todo: Sequence[tuple[dict[str, Any], int]],
    submit: Submit,
    *,
    jobs: int,
    step: Callable[[str, float], None] | None = None,
    chunk: int = 1,
) -> dict[str, int]:
    """Run ``todo`` (see :func:`plan`) through ``submit`` (a backend),
    ``chunk`` points a task, streaming rows into ``spec.out`` as they
    finish; counts of runs."""
    from schedlab import __version__

    w = _Writer(spec.out, _schema(spec))
    (spec.out / "sweep.json").write_text(
        json.dumps({"spec": spec.source, "scenario": str(spec.scenario), "schedlab": __version__, "runs": len(spec)})
    )
    failed = 0
    pending: set[Future[list[dict[str, Any]]]] = set()
    batches = [list(todo[i : i + max(1, chunk)]) for i in range(0, len(todo), max(1, chunk))]
    it = iter(batches)
    try:
        while True:
            while len(pending) < max(1, jobs) * 2:
                nxt = next(it, None)
                if nxt is None:
                    break
                pending.add(submit(nxt))
            if not pending:
                break
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in finished:
                for row in f.result():
                    failed += row["error"] is not None
                    w.add(row)
                    if step is not None:
                        label = " ".join(f"{k}={row.get(k)}" for k, _ in spec.axes) + f" seed {row['seed']}"
                        step(label, 0.0)
    finally:
        w.flush()
    return {"runs": len(spec), "skipped": len(spec) - len(todo), "ran": len(todo), "failed": failed}


def load_sweep(path: str | os.PathLike[str], *, backend: str | None = None) -> Any:
    """A sweep's results directory as one DataFrame (pandas, else polars)."""
    import pyarrow.dataset as ds

    from schedlab.frames import _backend

    p = Path(path)
    if not p.is_dir() or not any(p.glob("part-*.parquet")):
        raise UsageError("SL001", f"{p}: no part-*.parquet files; accepted: a `schedlab sweep` results directory")
    table = ds.dataset(sorted(p.glob("part-*.parquet")), format="parquet").to_table()
    # Rows arrive as runs finish; sorted by the axes and the seed they read the same every time.
    keys = [c for c in table.column_names if c not in ("run_id", "error", "wall_s", "schedlab", "scenario_hash")]
    axes = keys[: keys.index("seed") + 1] if "seed" in keys else []
    table = table.sort_by([(c, "ascending") for c in axes])
    return table.to_pandas() if _backend(backend) == "pandas" else __import__("polars").from_arrow(table)


def _local_backend(spec: SweepSpec, jobs: int, processes: bool = False) -> tuple[Submit, Callable[[], None]]:
    pool: ProcessPoolExecutor | ThreadPoolExecutor = (
        ProcessPoolExecutor(max_workers=jobs) if processes else ThreadPoolExecutor(max_workers=jobs)
    )

    def submit(points: list[tuple[dict[str, Any], int]]) -> Future[list[dict[str, Any]]]:
        return pool.submit(run_many, spec.text, str(spec.scenario), spec.fixed, points, spec.metrics)

    # Queued runs are cancelled; running ones finish (a worker process left
    # behind would be reaped at exit with a broken-pipe warning).
    return submit, lambda: pool.shutdown(wait=True, cancel_futures=True)


def _dask_backend(spec: SweepSpec, scheduler: str) -> tuple[Submit, Callable[[], None]]:
    try:
        from distributed import Client
    except ImportError:
        raise UsageError(
            "SL001", "--backend dask needs dask.distributed; accepted: pip install 'schedlab[dask]'"
        ) from None
    client = Client(scheduler, timeout="30s")  # type: ignore[no-untyped-call]

    def submit(points: list[tuple[dict[str, Any], int]]) -> Future[list[dict[str, Any]]]:
        # A dask future is a concurrent.futures-like object; wrap it for wait().
        fut: Future[list[dict[str, Any]]] = Future()
        dfut = client.submit(
            run_many, spec.text, str(spec.scenario), spec.fixed, points, spec.metrics, pure=False, retries=3
        )

        def done(df: Any) -> None:
            try:
                fut.set_result(df.result())
            except BaseException as e:  # noqa: BLE001 -- handed to the waiting thread
                fut.set_exception(e)

        dfut.add_done_callback(done)  # type: ignore[no-untyped-call]
        return fut

    return submit, client.close


def cmd_sweep(args: argparse.Namespace) -> int:
    from schedlab.progress import Steps

    spec = load_spec(Path(args.spec), args.out)
    todo = plan(spec, args.retry_failed)
    jobs = args.jobs or os.cpu_count() or 1
    if args.backend == "dask":
        if not args.scheduler:
            raise UsageError("SL001", "--backend dask needs --scheduler ADDR (tcp://host:8786)")
        submit, close = _dask_backend(spec, args.scheduler)
    else:
        submit, close = _local_backend(spec, jobs, processes=args.backend == "processes")
    try:
        with Steps(f"sweep {Path(args.spec).stem}", len(todo), quiet=args.quiet) as steps:
            # Processes get several runs a task (short runs otherwise spend
            # more in dispatch than in simulation); threads and Dask one.
            chunk = max(1, min(32, len(todo) // (jobs * 16))) if args.backend == "processes" else 1
            counts = run_sweep(spec, todo, submit, jobs=jobs, step=steps.done, chunk=chunk)
    finally:
        close()
    if not args.quiet:
        print(
            f"sweep: {counts['runs']} runs, {counts['skipped']} already in {spec.out}, {counts['ran']} run now, "
            f"{counts['failed']} failed"
        )
    return 0
