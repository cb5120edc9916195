"""Reports and traces as DataFrames (pandas or polars, whichever is
installed): ``schedlab.load(report_or_trace)``.

    >>> t = schedlab.load("out.json")          # schedlab run --json (or schedlab real --json)
    >>> t.tasks.sort_values("runtime_ns")      # one row per task
    >>> t = schedlab.load("trace.txt")         # schedlab run --trace
    >>> t.df_event("sched_switch")             # LISA's columns: __cpu, __pid, __comm, prev_comm, next_pid, ...

Tables of a report:

* ``tasks``: one row per task, the report's fields (``comm``, ``pid``,
  ``runtime_ns``, ``wait_ns``, switches, migrations, wakeup delays); the
  measurement window's counts as ``window_*`` columns.
* ``cpus``: one row per CPU (usr/nice/sys/idle ns, run_delay_ns).
* ``mpstat``: the ``Average:`` rows (``cpu`` is ``"all"`` or a number).
* ``samples``: every mpstat interval's rows with its ``end_ns`` (a report
  made with ``--samples``; empty otherwise).
* ``schedstat``: one row per CPU and domain (``/proc/schedstat``'s domain
  lines; the three idle types of the ``lb_*`` counters as ``_idle``,
  ``_busy``, ``_newly_idle`` columns).
* ``wakeup_delays``: per task, the wakeup delay percentiles.

A trace (the ftrace text of ``--trace``, or a real kernel's ``trace`` file)
gives one table per event, as LISA's ``trace.df_event()``: the time in
seconds as ``Time`` (pandas: the index), the common fields ``__cpu``,
``__pid``, ``__comm``, then the event's own fields named as in the
kernel's format, integers where they are numbers.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from schedlab.errors import UsageError

__all__ = ["Tables", "load", "parse_ftrace"]

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


def _flat(row: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in row.items():
        if isinstance(v, Mapping):
            out.update(_flat(v, f"{prefix}{k}_"))
        elif isinstance(v, list):
            out[f"{prefix}{k}"] = tuple(v)
        else:
            out[f"{prefix}{k}"] = v
    return out


def _report_tables(doc: Mapping[str, Any], backend: str) -> dict[str, Any]:
    tasks = [_flat(t) for t in doc.get("tasks") or []]
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
    delays = [
        {"comm": t.get("comm"), "pid": t.get("pid"), **{k: v for k, v in t.items() if k.startswith("wakeup_delay_")}}
        for t in tasks
    ]
    return {
        "tasks": _frame(backend, tasks, ["comm", "pid", "group"]),
        "cpus": _frame(backend, doc.get("cpus") or [], ["cpu"]),
        "mpstat": _frame(backend, mp.get("average") or [], ["cpu"]),
        "samples": _frame(backend, samples, ["end_ns", "cpu"]),
        "schedstat": _frame(backend, domains, ["cpu", "level", "name"]),
        "wakeup_delays": _frame(backend, delays, ["comm", "pid"]),
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
    """(the JSON object, or None when the file is not JSON, and its text)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise UsageError("SL001", f"{path}: cannot read: {e.strerror}; accepted: {accepted}") from None
    if not text.lstrip().startswith("{"):
        return None, text
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise UsageError("SL001", f"{path}: not JSON ({e}); accepted: {accepted}") from None
    if not isinstance(doc, dict):
        raise UsageError("SL001", f"{path}: not a JSON object; accepted: {accepted}")
    return doc, text


def load(src: str | os.PathLike[str] | Mapping[str, Any], *, backend: str | None = None) -> Tables:
    """The tables of a report (a ``--json`` file or the dict
    ``run_scenario`` returns) or of an ftrace text trace."""
    be = _backend(backend)
    if isinstance(src, Mapping):
        return Tables(be, _report_tables(src, be), str(src.get("source") or "report"))
    path = Path(src)
    doc, text = read_json_or_text(path, "a report (.json) or a trace")
    if doc is not None:
        if "tasks" not in doc:
            raise UsageError("SL001", f"{path}: a JSON file with no 'tasks'; accepted: a schedlab run/real report")
        return Tables(be, _report_tables(doc, be), str(path))
    events = parse_ftrace(text.splitlines())
    if not events:
        raise UsageError(
            "SL001", f"{path}: no trace events found; accepted: a report (.json) or ftrace text (--trace FILE)"
        )
    cols = ["Time", "__cpu", "__pid", "__comm"]
    return Tables(be, {name: _frame(be, rows, cols, index="Time") for name, rows in events.items()}, str(path))
