"""``schedlab sweep SPEC.toml``: a scenario over the cross product of axes
and seeds, streamed to a Parquet dataset as runs finish, resumable.

    [sweep]
    scenario = "sched-idle"                 # a bundled name or a path (relative to the spec)
    seeds = 5                               # seeds 1..5, or a list [1, 7, 9]
    out = "sched-idle.sweep"                # the results directory (default: SPEC's stem + ".sweep")
    set = { "measure.duration" = "2s" }     # overrides of every run
    max_runs = 1000000                      # the most runs (axes x seeds) this file may ask for

    [[sweep.axis]]
    key = "kernel.version"                  # any scenario key, as --set takes it
    values = ["2.6.35", "4.19", "5.5", "6.1", "6.6"]

    [sweep.metrics]                         # optional: as an experiment's [experiment.metrics]
    busy_idle = { mpstat = "average", cpu = "all", field = "idle" }

Every run is a row: one column per axis (named by its key), ``seed``, the
standard metrics (wasted CPU %, mean %idle, migrations/s and switches/s
over the window, timer delay p50/p99 as ``wakeup_p50_us``/``wakeup_p99_us``, events), the spec's own metrics,
``wall_s``, ``schedlab`` (the version), ``scenario_hash`` (SHA-256 of the
scenario text with the run's overrides: a changed scenario is a new row)
and ``error`` (null, or why the run failed: a failed run is recorded and
the sweep goes on). ``run_id`` is a hash of the scenario hash and the seed.

An axis column keeps its values' type, chosen when the spec is read,
before any run: booleans, integers (int64), numbers (float64: integers and
floats together, every integer exact) or strings. Any other axis (arrays,
tables, dates, or values of several of those types, ``[1, "auto"]``) is a
``toml`` column: each value as its TOML literal text (``1``, ``"auto"``,
``[0, 1, 2]``), which is what the run was given. ``OUT/sweep.json`` and the
Parquet field metadata (``schedlab.axis``) say which.

Limits come before work: the sweep's size (the product of the axes'
lengths and the seeds) is computed, not expanded, and refused above
``sweep.max_runs`` (default 1,000,000); ``--out`` is checked before the
spec is read. Points are expanded lazily, so a large sweep starts at once.
Every point's scenario is checked before the first run when there are at
most ``CHECK_ALL`` combinations of axis values; above that each axis value
once (the other axes at their first values), up to ``CHECK_MAX`` checks
(a combination the core refuses is then a failed row).

Rows are never lost. Each finished row is appended to ``OUT/journal.jsonl``
at once (a JSON line; a SIGKILL can tear only the last one, which is then
run again); every ``FLUSH_ROWS`` rows or ``FLUSH_S`` seconds the journal's
rows become ``OUT/part-NNNNN.parquet``, written whole (a temporary file,
fsync'd and renamed: schedlab.outputs), and the journal starts again. The
journal's first line names the part its rows go to, so a sweep killed
between the two steps neither loses nor doubles a row: the next one writes
the part if it is not there yet. (The journal is fsync'd every ``FSYNC_S``
seconds, not per row: power loss can cost that long of rows.) Run the
sweep again and it skips every ``run_id`` already in OUT
(``--retry-failed`` reruns the failed ones; the new row then replaces the
failed one in ``load_sweep``). A part that cannot be read (truncated,
corrupted) is set aside as ``part-NNNNN.parquet.corrupt`` with a warning
and its runs are redone. One sweep writes to a directory at a time
(``OUT/.lock``).

``schedlab.load_sweep`` reads OUT (parts and journal) as one DataFrame.
Writing needs pyarrow: ``pip install 'schedlab[sweep]'``; without it the
command stops before any work and says so.

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
import base64
import contextlib
import hashlib
import itertools
import json
import math
import os
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from schedlab.errors import InternalError, ScenarioError, SchedlabError, UsageError
from schedlab.overrides import Override, toml_literal

__all__ = [
    "Axis",
    "SweepSpec",
    "check_out_dir",
    "cmd_sweep",
    "load_spec",
    "load_sweep",
    "pending",
    "plan",
    "run_one",
    "run_sweep",
]

#: Rows a part holds (a part is written once this many have finished, or
#: FLUSH_S seconds after the last part); a finished row is in the journal
#: before that, so parts can be few and large. The journal is fsync'd at
#: most every FSYNC_S seconds (a kill loses nothing written; power loss at
#: most that long of rows, without an fsync per row).
FLUSH_ROWS = 256
FLUSH_S = 60.0
FSYNC_S = 1.0
#: The default of ``sweep.max_runs`` (the core's, which reads the spec:
#: schedlab_core::scenario::sweep::MAX_RUNS).
MAX_RUNS = 1_000_000
#: Every combination is checked before the first run up to this many
#: combinations; above, each axis value once, up to CHECK_MAX checks (a check
#: costs ~0.3 ms for sched-idle).
CHECK_ALL = 256
CHECK_MAX = 4096
#: ``--jobs`` at most (each job is a process, a thread or a batch in flight).
JOBS_MAX = 1024
#: The metrics every row has (besides the spec's own).
STANDARD_METRICS = (
    "wasted_cpu_pct", "idle_pct", "migrations_per_s", "switches_per_s", "wakeup_p50_us", "wakeup_p99_us", "events",
)  # fmt: skip
#: Columns every row has besides the axes and the spec's metrics.
BOOKKEEPING = ("run_id", "seed", "error", "wall_s", "schedlab", "scenario_hash")
JOURNAL = "journal.jsonl"
_JOURNAL_VERSION = 1
_PART = re.compile(r"part-(\d+)\.parquet")
_PART_ANY = re.compile(r"part-(\d+)\.parquet(\..*)?")
_INSTALL = "pip install 'schedlab[sweep]'"
_OUT_ACCEPTED = "a directory that exists and is writable, or that can be created"


# --------------------------------------------------------------------------
# The spec


class TomlText(str):
    """A value of a ``toml`` axis: the TOML literal text the core wrote for
    it, which is both the run's override and the column's cell."""

    __slots__ = ()


def _literal(v: Any) -> str:
    """A point's value as the override a run is given."""
    return str(v) if isinstance(v, TomlText) else toml_literal(v)


@dataclass(frozen=True)
class Axis:
    """One swept key: its values (as TOML gave them), their TOML literals
    (the overrides the runs get) and the column kind (see the module doc)."""

    key: str
    values: tuple[Any, ...]
    literals: tuple[str, ...]
    kind: str
    types: tuple[str, ...]  # the TOML types present, in order of first use

    def cell(self, v: Any) -> Any:
        """A value as its column holds it."""
        if self.kind == "toml":
            return _literal(v)
        if self.kind == "float":
            return float(v)
        return v

    def describe(self) -> dict[str, Any]:
        return {"key": self.key, "column": self.kind, "types": list(self.types), "values": len(self.values)}


@dataclass(frozen=True)
class SweepSpec:
    source: str
    scenario: Path
    text: str
    seeds: Sequence[int]  # a range for `seeds = N` (never a list of N ints)
    axes: tuple[Axis, ...]
    fixed: tuple[Override, ...]
    metrics: Mapping[str, Any]  # name -> experiment.MetricSpec
    out: Path
    max_runs: int = MAX_RUNS

    @property
    def size(self) -> int:
        """Runs in the sweep: the axes' lengths times the seeds (computed, not expanded)."""
        return len(self.seeds) * math.prod(len(a.values) for a in self.axes)

    def points(self) -> Iterator[tuple[dict[str, Any], int]]:
        """(axis values, seed) of every run, axes in file order, seeds innermost; lazily."""
        keys = [a.key for a in self.axes]
        for combo in itertools.product(*(a.values for a in self.axes)):
            values = dict(zip(keys, combo))
            for seed in self.seeds:
                yield values, seed

    def overrides(self, values: Mapping[str, Any]) -> list[Override]:
        """A point's overrides: the fixed ones, the axes', samples when a metric needs them."""
        ov = [*self.fixed, *_overrides(values)]
        if any(m.needs_samples for m in self.metrics.values()):
            ov.append(("measure.samples", "true"))
        return ov

    def __len__(self) -> int:
        return self.size


def _bad(source: str, path: str, what: str, accepted: str) -> ScenarioError:
    return ScenarioError("SL102", f"{source}: {path}: {what}; accepted: {accepted}")


def _cut(v: object, limit: int = 80) -> str:
    text = repr(v)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _key(k: str, limit: int = 60) -> str:
    """A key as a message names it: as written, or its cut repr when long or unprintable."""
    return k if k.isprintable() and len(k) <= limit else _cut(k, limit)


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def check_out_dir(path: Path | str, flag: str = "--out") -> Path:
    """The results directory, checked without creating anything: an
    existing writable directory, or a path whose nearest existing ancestor
    is a writable directory. UsageError (SL001) naming ``flag`` otherwise."""
    text = os.fspath(path)
    if not isinstance(text, str) or not text or "\0" in text:
        raise UsageError("SL001", f"{flag} {_cut(text)}: not a path; accepted: {_OUT_ACCEPTED}")
    p = Path(text)
    try:
        if p.exists():
            if not p.is_dir():
                raise UsageError("SL001", f"{flag} {text}: exists and is not a directory; accepted: {_OUT_ACCEPTED}")
            if not os.access(p, os.W_OK | os.X_OK):
                raise UsageError("SL001", f"{flag} {text}: the directory is not writable; accepted: {_OUT_ACCEPTED}")
            return p
        anc = p.absolute().parent
        while not anc.exists() and anc != anc.parent:
            anc = anc.parent
        if not anc.is_dir():
            raise UsageError(
                "SL001", f"{flag} {text}: cannot be created: {anc} is not a directory; accepted: {_OUT_ACCEPTED}"
            )
        if not os.access(anc, os.W_OK | os.X_OK):
            raise UsageError(
                "SL001", f"{flag} {text}: cannot be created: {anc} is not writable; accepted: {_OUT_ACCEPTED}"
            )
    except OSError as e:
        raise UsageError("SL001", f"{flag} {text}: {e.strerror or e}; accepted: {_OUT_ACCEPTED}") from None
    return p


def _axis(raw: Mapping[str, Any]) -> Axis:
    """An axis as the core read it: its values as the runs' points hold
    them (a ``toml`` axis's as their literal text, a non-finite float,
    which the core sends as its literal, as a float)."""
    kind = str(raw["kind"])
    literals = tuple(str(x) for x in raw["literals"])
    if kind == "toml":
        values: tuple[Any, ...] = tuple(TomlText(x) for x in literals)
    elif kind == "float":
        values = tuple(float(v) if isinstance(v, str) else v for v in raw["values"])
    else:
        values = tuple(raw["values"])
    return Axis(str(raw["key"]), values, literals, kind, tuple(str(t) for t in raw["types"]))


def load_spec(path: Path, out: str | None = None) -> SweepSpec:
    """Read and check a sweep file: its keys, its size against
    ``sweep.max_runs`` and the results directory (``out``, the --out flag,
    else ``sweep.out``), all before anything is expanded; then every run's
    scenario (see the module doc). Creates nothing."""
    from schedlab import native
    from schedlab.experiment import MetricSpec
    from schedlab.scenarios import read_text, resolve, scenario_text

    if out is not None:
        check_out_dir(out, "--out")
    source = str(path)
    # The core reads and checks the file (keys, seeds, axes, set, metrics,
    # the size against max_runs); what is left here is the file system and
    # the rows' own columns.
    doc = native.sweep_spec(read_text(path), source)
    out_dir = (
        Path(out)
        if out is not None
        else check_out_dir(path.parent / (doc["out"] or path.stem + ".sweep"), f"{source}: sweep.out")
    )
    max_runs = int(doc["max_runs"])
    raw_seeds = doc["seeds"]
    seeds: Sequence[int] = range(1, int(raw_seeds["count"]) + 1) if "count" in raw_seeds else tuple(raw_seeds["list"])
    metrics = {m["name"]: MetricSpec.from_native(m) for m in doc["metrics"]}
    clash = [n for n in metrics if n in STANDARD_METRICS or n in BOOKKEEPING or not n]
    if clash:
        raise _bad(
            source, f"sweep.metrics.{_key(clash[0]) or repr('')}", "the name of a column every row has", "another name"
        )
    axes = tuple(_axis(a) for a in doc["axes"])
    reserved = {*STANDARD_METRICS, *BOOKKEEPING, *metrics}
    for i, a in enumerate(axes):
        if a.key in reserved:
            raise _bad(source, f"sweep.axis[{i}].key", f"{a.key!r} is a column of every row", "a scenario key")
    name = doc["scenario"]
    rel = path.parent / name
    scen = rel if rel.is_file() else resolve(name)
    text = scenario_text(scen)
    fixed = tuple((str(k), str(lit)) for k, _, lit in doc["set"])
    spec = SweepSpec(source, scen, text, seeds, axes, fixed, metrics, out_dir, max_runs)
    # Every point's scenario is checked now: a typo in an axis fails before hours of runs.
    for values in _points_to_check(axes):
        native.check(text, str(scen), spec.overrides(values))
    return spec


def _points_to_check(axes: Sequence[Axis]) -> Iterator[dict[str, Any]]:
    """Every combination of axis values when there are at most CHECK_ALL;
    else each value of each axis once (the others at their first), at most
    CHECK_MAX in all."""
    keys = [a.key for a in axes]
    if math.prod(len(a.values) for a in axes) <= CHECK_ALL:
        for combo in itertools.product(*(a.values for a in axes)):
            yield dict(zip(keys, combo))
        return
    first = {a.key: a.values[0] for a in axes}
    n = 0
    for a in axes:
        for v in a.values:
            if n >= CHECK_MAX:
                return
            n += 1
            yield {**first, a.key: v}


def _overrides(values: Mapping[str, Any]) -> list[Override]:
    return [(k, _literal(v)) for k, v in values.items()]


def scenario_hash(text: str, overrides: Sequence[Override]) -> str:
    h = hashlib.sha256(text.encode())
    for k, v in overrides:
        h.update(f"\0{k}={v}".encode())
    return h.hexdigest()[:16]


def run_id(shash: str, seed: int) -> str:
    return hashlib.sha256(f"{shash}/{seed}".encode()).hexdigest()[:16]


# --------------------------------------------------------------------------
# One run


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
        "wakeup_p50_us": v.timer_delay_us(None, 50),
        "wakeup_p99_us": v.timer_delay_us(None, 99),
        "events": (report.get("sim") or {}).get("events"),
    }


def run_one(
    text: str, source: str, fixed: Sequence[Override], values: Mapping[str, Any], seed: int, metrics: Mapping[str, Any]
) -> dict[str, Any]:
    """One run's row (never raises for a failed run: its ``error`` says why)."""
    from schedlab import native
    from schedlab._version import __version__
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
    except Exception as e:  # noqa: BLE001 -- one run's bug is its row's error, not the sweep's end
        row["error"] = f"[SL900] internal error (please report): {type(e).__name__}: {e}"
    row["wall_s"] = round(time.monotonic() - t0, 4)
    row["schedlab"] = __version__
    row["scenario_hash"] = shash
    return row


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


# --------------------------------------------------------------------------
# Storage: parts and the journal


def need_pyarrow(what: str = "schedlab sweep") -> None:
    """UsageError (SL001) with the install line when pyarrow is missing."""
    try:
        import pyarrow
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise UsageError(
            "SL001", f"{what} writes Parquet and needs pyarrow, which is not installed; accepted: {_INSTALL}"
        ) from None


_ARROW_TYPES = {"bool": "bool_", "int": "int64", "float": "float64", "string": "string", "toml": "string"}


def _schema(spec: SweepSpec) -> Any:
    """One Arrow schema for every part (a part whose column is all null
    would otherwise not merge with the others); each axis field says its
    kind in its metadata."""
    import pyarrow as pa

    fields = [pa.field("run_id", pa.string())]
    for a in spec.axes:
        meta = {"schedlab.axis": a.kind, "schedlab.types": ",".join(a.types)}
        fields.append(pa.field(a.key, getattr(pa, _ARROW_TYPES[a.kind])(), metadata=meta))
    fields += [pa.field("seed", pa.int64())]
    fields += [pa.field(m, pa.int64() if m == "events" else pa.float64()) for m in STANDARD_METRICS]
    fields += [pa.field(n, pa.string() if m.is_list else pa.float64()) for n, m in spec.metrics.items()]
    fields += [
        pa.field("error", pa.string()), pa.field("wall_s", pa.float64()), pa.field("schedlab", pa.string()),
        pa.field("scenario_hash", pa.string()),
    ]  # fmt: skip
    return pa.schema(fields)


def _field_kind(field: Any) -> str:
    meta = field.metadata or {}
    kind = meta.get(b"schedlab.axis")
    if kind is not None:
        return str(kind.decode())
    # Parts written before the kinds were recorded: the kind their type implies.
    return {"bool": "bool", "int64": "int", "double": "float", "string": "string"}.get(str(field.type), "?")


def _parts(out: Path) -> list[tuple[int, Path]]:
    """OUT's part files, by number."""
    found = []
    for p in out.glob("part-*.parquet"):
        m = _PART.fullmatch(p.name)
        if m:
            found.append((int(m.group(1)), p))
    return sorted(found)


def _read_part(p: Path) -> Any:
    """A whole part (every page's checksum verified): ArrowInvalid or
    OSError when it is truncated or corrupt, ValueError when it is not a sweep's."""
    import pyarrow.parquet as pq

    t = pq.read_table(p, page_checksum_verification=True)
    if "run_id" not in t.column_names or "error" not in t.column_names:
        raise ValueError("not a sweep part (no run_id and error columns)")
    return t


def _unreadable() -> tuple[type[BaseException], ...]:
    import pyarrow as pa

    return (OSError, ValueError, pa.ArrowException)


def _read_journal(out: Path) -> tuple[dict[str, Any] | None, list[dict[str, Any]], int]:
    """(header, rows, lines dropped) of OUT's journal. A line that is not a
    whole JSON row (the last one, torn by a kill) is dropped: its run is
    redone."""
    try:
        data = (out / JOURNAL).read_bytes()
    except FileNotFoundError:
        return None, [], 0
    lines = data.split(b"\n")
    dropped = 1 if lines[-1] else 0  # after the last newline: a line being written when the writer died
    lines = lines[:-1]
    if not lines:
        return None, [], dropped
    try:
        header = json.loads(lines[0])
    except ValueError:
        header = None
    if not (
        isinstance(header, dict)
        and header.get("journal") == _JOURNAL_VERSION
        and _is_int(header.get("part"))
        and header["part"] >= 0
        and isinstance(header.get("schema"), str)
    ):
        return None, [], len(lines) + dropped
    rows = []
    for line in lines[1:]:
        try:
            row = json.loads(line)
        except ValueError:
            row = None
        if isinstance(row, dict) and isinstance(row.get("run_id"), str):
            rows.append(row)
        else:
            dropped += 1
    return header, rows, dropped


def _journal_table(header: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], schema: Any) -> Any:
    """A journal's rows as a table of the schema its header records (else
    ``schema``); a row that does not fit it is left out with a warning (its
    run is redone)."""
    import pyarrow as pa

    with contextlib.suppress(ValueError, pa.ArrowException):  # a damaged header: the caller's schema
        schema = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(header["schema"], validate=True)))
    try:
        return _table(rows, schema)
    except (ValueError, TypeError, pa.ArrowException):
        fits: list[Mapping[str, Any]] = []
        for r in rows:  # quadratic, on a damaged journal of at most a part's rows
            try:
                _table([*fits, r], schema)
                fits.append(r)
            except (ValueError, TypeError, pa.ArrowException):
                continue
        _warn(f"{JOURNAL}: {len(rows) - len(fits)} row(s) that do not fit the sweep's columns left out")
        return _table(fits, schema)


def _table(rows: Sequence[Mapping[str, Any]], schema: Any) -> Any:
    """Rows as a table of ``schema`` (None: the types pyarrow infers)."""
    import pyarrow as pa

    if schema is None:
        return pa.Table.from_pylist(list(rows))
    return pa.Table.from_pylist([{c: r.get(c) for c in schema.names} for r in rows], schema=schema)


def _write_part(path: Path, table: Any) -> None:
    """A part, whole or not at all (schedlab.outputs: a temporary file, fsync'd, renamed)."""
    import pyarrow.parquet as pq

    from schedlab.outputs import atomic_open

    with atomic_open(path, "wb", flag="sweep part") as f:
        pq.write_table(table, f, write_page_checksum=True)


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def _warn(msg: str) -> None:
    print(f"schedlab: warning: {msg}", file=sys.stderr, flush=True)


# The lock's descriptor is closed in forked workers, so that a worker left
# behind by a killed sweep does not hold it (flock: the lock goes with the
# last descriptor of the open file).
_LOCK_FDS: set[int] = set()


def _close_locks_in_child() -> None:
    for fd in _LOCK_FDS:
        with contextlib.suppress(OSError):
            os.close(fd)
    _LOCK_FDS.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_close_locks_in_child)


def _make_dir(out: Path, flag: str) -> list[Path]:
    """Create ``out`` and its missing parents: the directories created (to
    remove if what follows fails). UsageError naming ``flag``."""
    missing = []
    p = out.absolute()
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(
            "SL001", f"{flag} {out}: cannot create the directory: {e.strerror or e}; accepted: {_OUT_ACCEPTED}"
        ) from None
    return missing


def _remove_dirs(dirs: Sequence[Path]) -> None:
    for d in dirs:  # deepest first; only empty ones go
        with contextlib.suppress(OSError):
            d.rmdir()


class _Store:
    """OUT while a sweep writes to it: the lock, the rows already there
    (``done``), the journal of finished rows and the parts they become."""

    def __init__(self, spec: SweepSpec, *, retry_failed: bool = False, flag: str = "--out") -> None:
        self.out = spec.out
        self.schema = _schema(spec)
        self.rows: list[dict[str, Any]] = []
        self.journal: IO[str] | None = None
        self.lock_fd: int | None = None
        self.last = self.synced = time.monotonic()
        need_pyarrow()
        _make_dir(self.out, flag)
        self._lock(flag)
        try:
            self.done, self.part = self._recover(retry_failed)
            self._new_journal()
        except BaseException:
            self.close()
            raise

    def _lock(self, flag: str) -> None:
        try:
            fd = os.open(self.out / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise UsageError(
                "SL001", f"{flag} {self.out}: cannot write there: {e.strerror or e}; accepted: {_OUT_ACCEPTED}"
            ) from None
        try:
            import fcntl
        except ImportError:  # not POSIX: no lock
            os.close(fd)
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise UsageError(
                "SL001",
                f"{flag} {self.out}: another `schedlab sweep` is writing there; accepted: one sweep per results "
                "directory (wait for it, or use another --out)",
            ) from None
        self.lock_fd = fd
        _LOCK_FDS.add(fd)

    def _recover(self, retry_failed: bool) -> tuple[set[str], int]:
        """The run_ids already in OUT, and the next part's number: corrupt
        parts set aside, the journal of a killed sweep made a part."""
        for stale in self.out.glob(".*.tmp"):  # a write the kill cut short (outputs.atomic_open's)
            with contextlib.suppress(OSError):
                stale.unlink()
        done: set[str] = set()
        present: set[int] = set()
        for n, p in _parts(self.out):
            try:
                t = _read_part(p)
            except _unreadable() as e:
                aside = self._set_aside(p)
                _warn(f"{p}: unreadable ({_first_line(e)}); set aside as {aside.name}, its runs will be run again")
                continue
            self._compatible(p, t.schema)
            present.add(n)
            done |= _done_ids(t.column("run_id").to_pylist(), t.column("error").to_pylist(), retry_failed)
        numbers = [int(m.group(1)) for p in self.out.iterdir() if (m := _PART_ANY.fullmatch(p.name))]
        part = 1 + max(numbers, default=-1)
        header, rows, dropped = _read_journal(self.out)
        if dropped:
            _warn(
                f"{self.out / JOURNAL}: {dropped} torn line(s) of a killed sweep left out; their runs will be run again"
            )
        if header is None:
            return done, part
        h = header["part"]
        if h in present:  # the killed sweep wrote its part and died before starting a new journal
            return done, max(part, h + 1)
        if rows:
            # A killed sweep's last rows: they become the part they were meant for.
            n = h if not (self.out / f"part-{h:05d}.parquet").exists() else part
            table = _journal_table(header, rows, self.schema)
            p = self.out / f"part-{n:05d}.parquet"
            self._compatible(p, table.schema)
            _write_part(p, table)
            done |= _done_ids(table.column("run_id").to_pylist(), table.column("error").to_pylist(), retry_failed)
            part = max(part, n + 1)
        return done, max(part, h)

    def _set_aside(self, p: Path) -> Path:
        aside = p.with_name(p.name + ".corrupt")
        i = 1
        while aside.exists():
            i += 1
            aside = p.with_name(f"{p.name}.corrupt-{i}")
        try:
            p.rename(aside)
        except OSError as e:
            raise UsageError(
                "SL001", f"{p}: unreadable, and cannot be set aside: {e.strerror or e}; accepted: a writable --out"
            ) from None
        return aside

    def _compatible(self, p: Path, schema: Any) -> None:
        """A part's columns have the types this spec gives them (an axis that
        became mixed, or numbers that became strings, would not merge)."""
        for f in self.schema:
            if f.name not in schema.names:
                continue
            old = schema.field(f.name)
            if old.type != f.type or (f.metadata and _field_kind(old) != _field_kind(f)):
                raise UsageError(
                    "SL001",
                    f"{self.out}: {p.name} holds column {f.name!r} as {_field_kind(old)} ({old.type}); this spec "
                    f"makes it {_field_kind(f)} ({f.type}); accepted: the same value types on each axis as the rows "
                    "already there, or another --out",
                )

    def _new_journal(self) -> None:
        """An empty journal for the next part (replacing the old one whole)."""
        from schedlab.outputs import write_text

        if self.journal is not None:
            self.journal.close()
            self.journal = None
        schema = base64.b64encode(self.schema.serialize().to_pybytes()).decode()
        header = {"journal": _JOURNAL_VERSION, "part": self.part, "schema": schema}
        write_text(self.out / JOURNAL, json.dumps(header) + "\n", flag="sweep journal")
        self.journal = (self.out / JOURNAL).open("a", encoding="utf-8")  # open while the sweep runs

    def add(self, rows: Sequence[dict[str, Any]]) -> None:
        """Rows that finished: in the journal now (one write), in a part soon."""
        assert self.journal is not None
        self.journal.write("".join(json.dumps(r) + "\n" for r in rows))
        self.journal.flush()
        if time.monotonic() - self.synced >= FSYNC_S:
            os.fsync(self.journal.fileno())
            self.synced = time.monotonic()
        self.rows += rows
        if len(self.rows) >= FLUSH_ROWS or time.monotonic() - self.last >= FLUSH_S:
            self.flush()

    def flush(self) -> None:
        """The journal's rows as the next part, then a new journal."""
        self.last = time.monotonic()
        if not self.rows:
            return
        _write_part(self.out / f"part-{self.part:05d}.parquet", _table(self.rows, self.schema))
        self.part += 1
        self.rows = []
        self._new_journal()

    def close(self) -> None:
        """Every row in a part (on success the journal goes; if this fails
        the journal keeps the rows for the next sweep), the lock released."""
        try:
            if self.journal is not None:
                self.flush()
                self.journal.close()
                self.journal = None
                with contextlib.suppress(OSError):
                    (self.out / JOURNAL).unlink()
        finally:
            if self.journal is not None:
                with contextlib.suppress(OSError):
                    self.journal.close()
                self.journal = None
            if self.lock_fd is not None:
                _LOCK_FDS.discard(self.lock_fd)
                with contextlib.suppress(OSError):
                    os.close(self.lock_fd)
                self.lock_fd = None


def _done_ids(ids: Iterable[str], errors: Iterable[Any], retry_failed: bool) -> set[str]:
    return {r for r, e in zip(ids, errors) if not (retry_failed and e)}


def _done(out: Path, retry_failed: bool) -> set[str]:
    """The run_ids in OUT, read only (an unreadable part counts as absent)."""
    if not out.is_dir():
        return set()
    done: set[str] = set()
    present = set()
    if _parts(out):
        need_pyarrow()
    for n, p in _parts(out):
        try:
            t = _read_part(p)
        except _unreadable():
            continue
        present.add(n)
        done |= _done_ids(t.column("run_id").to_pylist(), t.column("error").to_pylist(), retry_failed)
    header, rows, _ = _read_journal(out)
    if header is not None and header["part"] not in present:
        done |= _done_ids([r["run_id"] for r in rows], [r.get("error") for r in rows], retry_failed)
    return done


def pending(spec: SweepSpec, done: set[str]) -> Iterator[tuple[dict[str, Any], int]]:
    """The points whose run_id is not in ``done``, lazily (a point's hash
    is computed once for all its seeds, and not at all when nothing is done)."""
    keys = [a.key for a in spec.axes]
    for combo in itertools.product(*(a.values for a in spec.axes)):
        values = dict(zip(keys, combo))
        if not done:
            for seed in spec.seeds:
                yield values, seed
            continue
        shash = scenario_hash(spec.text, spec.overrides(values))
        for seed in spec.seeds:
            if run_id(shash, seed) not in done:
                yield values, seed


def plan(spec: SweepSpec, retry_failed: bool = False) -> list[tuple[dict[str, Any], int]]:
    """The points whose rows are not in ``spec.out`` yet (with
    ``retry_failed``, failed rows count as not there), as a list: for
    small sweeps and tests (``schedlab sweep`` iterates :func:`pending`)."""
    return list(pending(spec, _done(spec.out, retry_failed)))


# --------------------------------------------------------------------------
# The sweep


def _sweep_json(spec: SweepSpec) -> str:
    from schedlab._version import __version__

    return json.dumps(
        {
            "spec": spec.source,
            "scenario": str(spec.scenario),
            "schedlab": __version__,
            "runs": spec.size,
            "seeds": len(spec.seeds),
            "axes": [a.describe() for a in spec.axes],
        },
        indent=1,
    )


def run_sweep(
    spec: SweepSpec,
    todo: Iterable[tuple[dict[str, Any], int]],
    submit: Submit,
    *,
    jobs: int,
    step: Callable[[str, float], None] | None = None,
    chunk: int = 1,
    store: _Store | None = None,
    total: int | None = None,
) -> dict[str, int]:
    """Run ``todo`` (see :func:`pending`) through ``submit`` (a backend),
    ``chunk`` points a task, each finished row into ``spec.out`` at once;
    counts of runs. ``store``: OUT opened by the caller (else opened here,
    and closed at the end); ``total``: how many ``todo`` holds, when it is
    an iterator."""
    from schedlab.outputs import write_text

    own = store is None
    st = store if store is not None else _Store(spec)
    if total is None and isinstance(todo, Sequence):
        total = len(todo)
    failed = ran = 0
    pending_: dict[Future[list[dict[str, Any]]], list[tuple[dict[str, Any], int]]] = {}
    it = iter(todo)
    size = max(1, chunk)
    broken: BaseException | None = None
    try:
        write_text(spec.out / "sweep.json", _sweep_json(spec), flag="sweep.json")
        while broken is None:
            while len(pending_) < max(1, jobs) * 2:
                batch = list(itertools.islice(it, size))
                if not batch:
                    break
                try:
                    pending_[submit(batch)] = batch
                except BrokenProcessPool as e:
                    broken = e
                    break
            if not pending_:
                break
            finished, _ = wait(pending_, return_when=FIRST_COMPLETED)
            # Every finished batch is kept before a broken pool stops the sweep.
            for f in finished:
                batch = pending_.pop(f)
                try:
                    rows = f.result()
                except BrokenProcessPool as e:
                    broken = e
                    continue
                except Exception as e:  # noqa: BLE001 -- the batch's rows say why; the sweep goes on
                    msg = f"[SL900] internal error (please report): {type(e).__name__}: {e}"
                    rows = [_failed_row(spec, values, seed, msg) for values, seed in batch]
                cells = [_cells(spec, row) for row in rows]
                st.add(cells)
                for row in cells:
                    ran += 1
                    failed += row["error"] is not None
                    if step is not None:
                        label = " ".join(f"{a.key}={row.get(a.key)}" for a in spec.axes) + f" seed {row['seed']}"
                        step(label, 0.0)
        if broken is not None:
            raise InternalError(
                "SL900",
                f"a worker process died ({broken}); the {ran} rows finished before are in {spec.out}: run the "
                "sweep again to go on from there",
            )
    finally:
        for f in pending_:
            f.cancel()
        if own:
            st.close()
        else:
            st.flush()
    todo_n = total if total is not None else ran
    return {"runs": spec.size, "skipped": spec.size - todo_n, "ran": ran, "failed": failed}


def _cells(spec: SweepSpec, row: dict[str, Any]) -> dict[str, Any]:
    """A row as its columns hold it (an axis's values in its kind)."""
    out = dict(row)
    for a in spec.axes:
        if a.key in out:
            out[a.key] = a.cell(out[a.key])
    return out


def _failed_row(spec: SweepSpec, values: Mapping[str, Any], seed: int, error: str) -> dict[str, Any]:
    from schedlab._version import __version__

    shash = scenario_hash(spec.text, spec.overrides(values))
    return {
        "run_id": run_id(shash, seed), **values, "seed": seed, "error": error, "wall_s": 0.0,
        "schedlab": __version__, "scenario_hash": shash,
    }  # fmt: skip


def load_sweep(path: str | os.PathLike[str], *, backend: str | None = None) -> Any:
    """A sweep's results directory as one DataFrame (pandas, else polars):
    its parts and the journal of rows not in a part yet; a run that was
    retried is its last row. Sorted by the axes and the seed."""
    p = Path(os.fspath(path))
    need_pyarrow("schedlab.load_sweep")
    import pyarrow as pa

    from schedlab.frames import _backend

    parts = _parts(p) if p.is_dir() else []
    header, rows, _ = _read_journal(p) if p.is_dir() else (None, [], 0)
    if not parts and not rows:
        raise UsageError("SL001", f"{p}: no part-*.parquet files; accepted: a `schedlab sweep` results directory")
    tables = []
    present = set()
    for n, part in parts:
        try:
            tables.append(_read_part(part))
        except _unreadable() as e:
            raise UsageError(
                "SL001",
                f"{part}: unreadable ({_first_line(e)}); accepted: a whole "
                "part: run the sweep again, which sets it aside and redoes its runs",
            ) from None
        present.add(n)
    if header is not None and rows and header["part"] not in present:
        tables.append(_journal_table(header, rows, tables[0].schema if tables else None))
    try:
        table = pa.concat_tables(tables, promote_options="default")
    except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
        raise UsageError(
            "SL001", f"{p}: its parts disagree on a column's type ({e}); accepted: one sweep's parts"
        ) from None
    # A retried run's last row is its row.
    last = {rid: i for i, rid in enumerate(table.column("run_id").to_pylist())}
    if len(last) < table.num_rows:
        table = table.take(sorted(last.values()))
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


def _need_distributed() -> None:
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise UsageError(
            "SL001", "--backend dask needs dask.distributed; accepted: pip install 'schedlab[dask]'"
        ) from None


def _dask_backend(spec: SweepSpec, scheduler: str) -> tuple[Submit, Callable[[], None]]:
    _need_distributed()
    from distributed import Client

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
    """``schedlab sweep``: everything that can be refused is refused before
    any work (pyarrow, the backend, --jobs, --out, the spec and its size),
    then the runs not in OUT yet."""
    from schedlab.progress import Steps

    need_pyarrow()
    if args.jobs is not None and not 1 <= args.jobs <= JOBS_MAX:
        raise UsageError("SL001", f"--jobs {args.jobs}: accepted: 1 to {JOBS_MAX} (default: all CPUs)")
    jobs = args.jobs or os.cpu_count() or 1
    if args.backend == "dask":
        if not args.scheduler:
            raise UsageError("SL001", "--backend dask needs --scheduler ADDR (tcp://host:8786)")
        _need_distributed()
    created: list[Path] = []
    if args.out is not None:
        # Made now, so that a path that cannot be a directory (/proc/x) is
        # refused before the spec is read; removed again if the spec is refused.
        created = _make_dir(check_out_dir(args.out, "--out"), "--out")
    try:
        spec = load_spec(Path(args.spec), args.out)
        store = _Store(
            spec, retry_failed=args.retry_failed, flag="--out" if args.out is not None else f"{spec.source}: sweep.out"
        )
    except BaseException:
        _remove_dirs(created)
        raise
    try:
        # A fresh sweep runs every point; a resumed one counts what is left
        # (hashing each point once; nothing is kept).
        total = spec.size if not store.done else sum(1 for _ in pending(spec, store.done))
        if args.backend == "dask":
            submit, close = _dask_backend(spec, args.scheduler)
        else:
            submit, close = _local_backend(spec, jobs, processes=args.backend == "processes")
        try:
            with Steps(f"sweep {Path(args.spec).stem}", total, quiet=args.quiet) as steps:
                # Processes get several runs a task (short runs otherwise spend
                # more in dispatch than in simulation); threads and Dask one.
                chunk = max(1, min(32, total // (jobs * 16))) if args.backend == "processes" else 1
                counts = run_sweep(
                    spec, pending(spec, store.done), submit, jobs=jobs, step=steps.done, chunk=chunk, store=store,
                    total=total,
                )  # fmt: skip
        finally:
            close()
    finally:
        store.close()
    if not args.quiet:
        print(
            f"sweep: {counts['runs']} runs, {counts['skipped']} already in {spec.out}, {counts['ran']} run now, "
            f"{counts['failed']} failed"
        )
    return 0
