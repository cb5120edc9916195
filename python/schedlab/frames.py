"""Reports and traces as DataFrames (pandas or polars, whichever is
installed): ``schedlab.load(report_or_trace)``.

    >>> t = schedlab.load("out.json")          # schedlab run --json (or schedlab real --json)
    >>> t.tasks.sort_values("runtime_ns")      # one row per task
    >>> t = schedlab.load("trace.txt")         # schedlab run --trace
    >>> t.df_event("sched_switch")             # LISA's columns: __cpu, __pid, __comm, prev_comm, next_pid, ...

Tables of a report:

* ``tasks``: one row per task, the report's fields (``comm``, ``pid``,
  ``runtime_ns``, ``wait_ns``, switches, migrations, wakeup latencies,
  timer delays); the measurement window's counts as ``window_*`` columns.
* ``cpus``: one row per CPU (usr/nice/sys/idle ns, run_delay_ns).
* ``mpstat``: the ``Average:`` rows (``cpu`` is ``"all"`` or a number).
* ``samples``: every mpstat interval's rows with its ``end_ns`` (a report
  made with ``--samples``; empty otherwise).
* ``schedstat``: one row per CPU and domain (``/proc/schedstat``'s domain
  lines; the three idle types of the ``lb_*`` counters as ``_idle``,
  ``_busy``, ``_newly_idle`` columns).
* ``timer_delays``: per task, its timer delays (``timer_delay_*``: timer
  expiry to the return to user space; mean, max, percentiles, count).
* ``wakeup_latencies``: per task, its wakeup latencies
  (``wakeup_latency_*``: wakeup to pick; a simulation's only).

A trace (the ftrace text of ``--trace``, or a real kernel's ``trace`` file)
gives one table per event, as LISA's ``trace.df_event()``: the time in
seconds as ``Time`` (pandas: the index), the common fields ``__cpu``,
``__pid``, ``__comm``, then the event's own fields named as in the
kernel's format, integers where they are numbers.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from schedlab.args import cut
from schedlab.errors import UsageError

__all__ = ["Tables", "check_report", "load", "parse_ftrace"]

#: What a report is, for the refusals' "accepted".
REPORT_ACCEPTED = "a schedlab run/real report (docs/report.md)"

#: The deepest nesting of objects and lists in a report's task (a real one
#: has three levels).
MAX_DEPTH = 64

#: /proc/schedstat's idle types, in the order the report keeps them.
IDLE_TYPES = ("idle", "busy", "newly_idle")

_LINE = re.compile(
    r"^\s*(?P<comm>.+?)-(?P<pid>\d+)\s+(?:\(\s*[\d-]+\)\s+)?\[(?P<cpu>\d+)\]\s+(?:[^\s:]+\s+)?"
    r"(?P<ts>\d+\.\d+):\s+(?P<event>[\w@]+):\s?(?P<body>.*)$"
)
_FIELD = re.compile(r"(\w+)=(\S*)")


def _backend(name: str | None) -> str:
    """ "pandas" or "polars": the one asked for, else the first installed."""
    import importlib.util

    options = ("pandas", "polars")
    if name is not None:
        if name not in options:
            raise UsageError("SL001", f"backend={name!r}; accepted: {', '.join(options)}")
        if importlib.util.find_spec(name) is None:
            raise UsageError("SL001", f"backend={name!r} is not installed; accepted: pip install {name}")
        return name
    for o in options:
        if importlib.util.find_spec(o) is not None:
            return o
    raise UsageError("SL001", "schedlab.load needs pandas or polars; accepted: pip install 'schedlab[pandas]'")


def _frame(backend: str, rows: Sequence[Mapping[str, Any]], columns: Sequence[str], index: str | None = None) -> Any:
    cols = list(columns)
    for r in rows:
        for k in r:
            if k not in cols:
                cols.append(k)
    data = {c: [r.get(c) for r in rows] for c in cols}
    if backend == "pandas":
        import pandas as pd  # type: ignore[import-untyped,unused-ignore]

        df = pd.DataFrame(data, columns=cols)
        return df.set_index(index) if index is not None else df
    import polars as pl  # type: ignore[import-not-found,unused-ignore]

    return pl.DataFrame(data, strict=False)


class Tables:
    """The tables of one report or trace; ``names()`` lists them, ``t[name]``
    or ``t.name`` gives one."""

    def __init__(self, backend: str, tables: dict[str, Any], source: str) -> None:
        self.backend = backend
        self.source = source
        self._tables = tables

    def names(self) -> list[str]:
        return sorted(self._tables)

    def __getitem__(self, name: str) -> Any:
        if name not in self._tables:
            raise KeyError(f"{name!r}: not a table of {self.source}; accepted: {', '.join(self.names())}")
        return self._tables[name]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError as e:
            raise AttributeError(str(e)) from None

    def df_event(self, event: str) -> Any:
        """One trace event's table (LISA's ``trace.df_event``)."""
        return self[event]

    def __repr__(self) -> str:
        return f"<schedlab.Tables {self.source} ({self.backend}): {', '.join(self.names())}>"


# ------------------------------------------------------ a report's shape


class _Spec:
    """What a field must be: ``what`` for the message, ``ok`` the test."""

    def __init__(self, what: str) -> None:
        self.what = what

    def check(self, v: Any, path: str, bad: Any) -> None:
        raise NotImplementedError


class _Scalar(_Spec):
    def __init__(self, what: str, ok: Any) -> None:
        super().__init__(what)
        self.ok = ok

    def check(self, v: Any, path: str, bad: Any) -> None:
        if not self.ok(v):
            bad(path, self.what, v)


class _List(_Spec):
    def __init__(self, what: str, item: _Spec | None = None) -> None:
        super().__init__(what)
        self.item = item

    def check(self, v: Any, path: str, bad: Any) -> None:
        if not _is_list(v):
            bad(path, self.what, v)
        if self.item is not None:
            for i, x in enumerate(v):
                self.item.check(x, f"{path}[{i}]", bad)


class _Obj(_Spec):
    """An object; ``fields`` are checked when present and not null,
    ``required`` ones must be there."""

    def __init__(self, what: str, fields: Mapping[str, _Spec] | None = None, required: Sequence[str] = ()) -> None:
        super().__init__(what)
        self.fields = dict(fields or {})
        self.required = tuple(required)

    def check(self, v: Any, path: str, bad: Any) -> None:
        if not isinstance(v, Mapping):
            bad(path, self.what, v)
        for k in self.required:
            if v.get(k) is None:
                bad(f"{path}.{k}" if path else k, f"{self.fields[k].what} (required)", v.get(k))
        for k, spec in self.fields.items():
            x = v.get(k)
            if x is not None:
                spec.check(x, f"{path}.{k}" if path else k, bad)


def _is_list(v: Any) -> bool:
    return isinstance(v, Sequence) and not isinstance(v, (str, bytes, bytearray))


def finite(v: Any) -> float | None:
    """``v`` as a finite float, or None when it is not a number (a bool, a
    string, NaN, an integer too large for a float)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    try:
        f = float(v)
    except OverflowError:
        return None
    return f if math.isfinite(f) else None


def _kind_of(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, Mapping):
        return "an object"
    if _is_list(v):
        return "a list"
    return f"a {type(v).__name__}"


_NUMBER = _Scalar("a finite number", lambda v: finite(v) is not None)
_COUNT = _Scalar("an integer >= 0", lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0)
_CPU = _Scalar(
    '"all" or a CPU number', lambda v: v == "all" or (isinstance(v, int) and not isinstance(v, bool) and v >= 0)
)
_ANY_OBJECTS = _List("a list of objects", _Obj("an object"))
_ROW = _Obj("an mpstat row (an object)", {"cpu": _CPU, "idle": _NUMBER}, required=("cpu",))

#: The fields of a report that ``load`` and ``plot`` read, and what each
#: must be (docs/report.md); the others are taken as they are.
REPORT = _Obj(
    "a report (a JSON object)",
    {
        "tasks": _List(
            "a list of tasks (objects)",
            _Obj("a task (an object)", {"wakeup_latency_hist_us": _List("a list of integers >= 0", _COUNT)}),
        ),
        "cpus": _ANY_OBJECTS,
        "mpstat": _Obj(
            "an object with samples and average",
            {
                "samples": _List(
                    "a list of mpstat samples (objects with end_ns and rows)",
                    _Obj(
                        "an mpstat sample (an object with end_ns and rows)",
                        {"end_ns": _NUMBER, "rows": _List("a list of mpstat rows (objects)", _ROW)},
                        required=("end_ns", "rows"),
                    ),
                ),
                "average": _List("a list of mpstat rows (objects)", _ROW),
            },
        ),
        "schedstat": _Obj(
            "an object with cpus",
            {"cpus": _List("a list of CPUs (objects)", _Obj("a CPU (an object)", {"domains": _ANY_OBJECTS}))},
        ),
        "measure": _Obj("an object", {"start_ns": _NUMBER}),
    },
)


def check_report(doc: Any, source: str, spec: _Spec = REPORT, accepted: str = REPORT_ACCEPTED) -> None:
    """Every field ``load`` and ``plot`` read has its type, or SL001 naming
    ``source``, the field's key path and what it must be."""

    def bad(path: str, what: str, v: Any) -> None:
        shown = _kind_of(v) if isinstance(v, (Mapping, list, tuple)) or v is None else f"{_kind_of(v)} {cut(v, 40)}"
        where = f"{path}: " if path else ""
        raise UsageError("SL001", f"{source}: {where}expected {what}, not {shown}; accepted: {accepted}")

    spec.check(doc, "", bad)


def _flat(row: Mapping[str, Any], where: str, prefix: str = "", depth: int = 0) -> dict[str, Any]:
    if depth > MAX_DEPTH:
        raise UsageError("SL001", f"{where}: nested deeper than {MAX_DEPTH} levels; accepted: {REPORT_ACCEPTED}")
    out: dict[str, Any] = {}
    for k, v in row.items():
        if isinstance(v, Mapping):
            out.update(_flat(v, f"{where}.{k}", f"{prefix}{k}_", depth + 1))
        elif isinstance(v, list):
            out[f"{prefix}{k}"] = tuple(v)
        else:
            out[f"{prefix}{k}"] = v
    return out


def _report_tables(doc: Mapping[str, Any], backend: str, source: str = "report") -> dict[str, Any]:
    check_report(doc, source)
    tasks = [_flat(t, f"{source}: tasks[{i}]") for i, t in enumerate(doc.get("tasks") or [])]
    mp = doc.get("mpstat") or {}
    samples = [{"end_ns": s.get("end_ns"), **r} for s in mp.get("samples") or [] for r in s.get("rows") or []]
    domains = []
    for c in (doc.get("schedstat") or {}).get("cpus") or []:
        for level, d in enumerate(c.get("domains") or []):
            row: dict[str, Any] = {"cpu": c.get("cpu"), "level": level}
            for k, v in d.items():
                if isinstance(v, list) and len(v) == len(IDLE_TYPES):
                    row.update({f"{k}_{it}": x for it, x in zip(IDLE_TYPES, v)})
                else:
                    row[k] = v
            domains.append(row)

    def per_task(prefix: str) -> list[dict[str, Any]]:
        return [
            {"comm": t.get("comm"), "pid": t.get("pid"), **{k: v for k, v in t.items() if k.startswith(prefix)}}
            for t in tasks
        ]

    return {
        "tasks": _frame(backend, tasks, ["comm", "pid", "group"]),
        "cpus": _frame(backend, doc.get("cpus") or [], ["cpu"]),
        "mpstat": _frame(backend, mp.get("average") or [], ["cpu"]),
        "samples": _frame(backend, samples, ["end_ns", "cpu"]),
        "schedstat": _frame(backend, domains, ["cpu", "level", "name"]),
        "timer_delays": _frame(backend, per_task("timer_delay_"), ["comm", "pid"]),
        "wakeup_latencies": _frame(backend, per_task("wakeup_latency_"), ["comm", "pid"]),
    }


def _value(v: str) -> Any:
    try:
        return int(v)
    except ValueError:
        return v


def parse_ftrace(lines: Any) -> dict[str, list[dict[str, Any]]]:
    """Rows per event from ftrace text lines (the kernel's ``trace`` file
    layout, as schedlab writes it and ``trace-cmd report`` prints it)."""
    events: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        if line.startswith("#"):
            continue
        m = _LINE.match(line)
        if m is None:
            continue
        body = m["body"].replace(" ==> ", " ")
        row: dict[str, Any] = {
            "Time": float(m["ts"]),
            "__cpu": int(m["cpu"]),
            "__pid": int(m["pid"]),
            "__comm": m["comm"].strip(),
        }
        for k, v in _FIELD.findall(body):
            row[k] = _value(v)
        events.setdefault(m["event"], []).append(row)
    return events


def read_json_or_text(path: Path, accepted: str) -> tuple[dict[str, Any] | None, str]:
    """(the JSON object, or None when the file is not JSON, and its text).
    Only a regular file is read (``/dev/zero`` would never end)."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            what = "a directory" if path.is_dir() else "not a regular file"
            raise UsageError("SL001", f"{path}: {what}; accepted: {accepted}")
        text = path.read_text(encoding="utf-8", errors="replace")
    except (OSError, ValueError) as e:  # ValueError: a NUL in the path
        why = getattr(e, "strerror", None) or e
        raise UsageError("SL001", f"{cut(str(path))}: cannot read: {why}; accepted: {accepted}") from None
    if not text.lstrip().startswith("{"):
        return None, text
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise UsageError("SL001", f"{path}: not JSON ({e}); accepted: {accepted}") from None
    except RecursionError:
        raise UsageError(
            "SL001", f"{path}: objects and lists nested deeper than {MAX_DEPTH} levels; accepted: {accepted}"
        ) from None
    except ValueError:  # an integer of more than 4,300 digits
        raise UsageError("SL001", f"{path}: a number of more than 4300 digits; accepted: {accepted}") from None
    if not isinstance(doc, dict):
        raise UsageError("SL001", f"{path}: not a JSON object; accepted: {accepted}")
    return doc, text


def load(src: str | os.PathLike[str] | Mapping[str, Any], *, backend: str | None = None) -> Tables:
    """The tables of a report (a ``--json`` file or the dict
    ``run_scenario`` returns) or of an ftrace text trace."""
    accepted = (
        "a report (a path to a schedlab run/real --json file, or the dict run_scenario returns) "
        "or the path of an ftrace text trace"
    )
    if isinstance(src, Mapping):
        be = _backend(backend)
        source = src.get("source")
        name = source if isinstance(source, str) and source else "report"
        return Tables(be, _report_tables(src, be, cut(name, 200).strip("'\"")), name)
    fs = os.fspath(src) if isinstance(src, (str, os.PathLike)) else None
    if not isinstance(fs, str) or not fs:
        raise UsageError("SL001", f"src={cut(src)}: accepted: {accepted}, not {type(src).__name__}")
    be = _backend(backend)
    path = Path(fs)
    doc, text = read_json_or_text(path, "a report (.json) or a trace")
    if doc is not None:
        if "tasks" not in doc:
            raise UsageError("SL001", f"{path}: a JSON file with no 'tasks'; accepted: a schedlab run/real report")
        return Tables(be, _report_tables(doc, be, str(path)), str(path))
    events = parse_ftrace(text.splitlines())
    if not events:
        raise UsageError(
            "SL001", f"{path}: no trace events found; accepted: a report (.json) or ftrace text (--trace FILE)"
        )
    cols = ["Time", "__cpu", "__pid", "__comm"]
    return Tables(be, {name: _frame(be, rows, cols, index="Time") for name, rows in events.items()}, str(path))
