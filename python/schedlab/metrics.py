"""Reading a report: the one place that knows where a number lives in the
report JSON, and what "over the measurement window" means for it.

The simulator's report (crates/schedlab-core/src/sim/report.rs) and the
real-kernel runner's (crates/schedlab-runner/src/report.rs) have one shape:

* ``measure`` ``{start_ns, end_ns}``: the measurement window, after the warm-up;
* ``mpstat`` ``{average, samples}``: rows of %usr, %nice, %sys, %idle ... per
  CPU (``"all"``, then ``0``, ``1``, ...), over the window and per interval;
* ``tasks``: one row per task (``comm``, ``group``, ``runtime_ns``,
  ``nr_switches``, ``nr_migrations``, ...), ``groups``: one row per group;
* report-wide keys (``migrations``, ``active_balances``, ``wasted_cpu_ns``, ...).

The difference this module hides: a simulated task's own counters count from
time 0, and its ``window`` object holds the same counters over the
measurement window (deltas since the end of the warm-up); a real task's
counters are window deltas already, and it has no ``window``.

``schedlab reproduce`` (experiment.py, ``[experiment.metrics]``), ``schedlab
validate`` (validation/, the suite's metrics) and ``schedlab compare``
(real.py) all read reports through :class:`ReportView`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from schedlab import native

__all__ = [
    "MetricError",
    "ReportView",
    "TaskWindow",
    "is_number",
    "parse_cpulist",
    "percentile",
    "reduce_samples",
    "row_field",
]


class MetricError(LookupError):
    """A metric asks for something the report does not have (a task, group,
    CPU, field or key); the message names what it has."""

    def __init__(self, what: str, have: Sequence[str]) -> None:
        super().__init__(f"{what} is not in the report; accepted: {', '.join(have) or '(nothing there)'}")


def is_number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _num(v: object) -> float | None:
    """``v`` as a float, None if it is not a number (null, missing, a bool)."""
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


@dataclass(frozen=True)
class TaskWindow:
    """One task's counters over the measurement window (None: the report
    does not have it, e.g. ``se.nr_migrations`` where the guest kernel lacks
    it)."""

    comm: str
    group: str
    runtime_ns: float | None
    nr_switches: float | None
    nr_migrations: float | None
    #: Time runnable but waiting (/proc/PID/schedstat's run_delay).
    wait_ns: float | None = None
    #: Times it got a CPU (schedstat's pcount; the simulator: its switches).
    timeslices: float | None = None
    #: Times it slept (/proc/PID/status voluntary_ctxt_switches).
    nr_voluntary_switches: float | None = None


class ReportView:
    """A report (simulator or real) read over its measurement window.

    Complexity: construction is O(tasks); every lookup is O(rows) at most."""

    def __init__(self, doc: Mapping[str, Any]) -> None:
        self.doc = doc
        rows = [t for t in doc.get("tasks") or [] if isinstance(t, Mapping)]
        self._task_rows: dict[str, Mapping[str, Any]] = {}
        for t in rows:  # by comm; of two tasks with one comm, the first
            self._task_rows.setdefault(str(t.get("comm")), t)
        #: Whether the tasks carry "window" counters (the simulator's report).
        self.has_window_counters = any(isinstance(t.get("window"), Mapping) for t in rows)
        self.tasks: dict[str, TaskWindow] = {comm: self._task_window(t) for comm, t in self._task_rows.items()}

    @staticmethod
    def _task_window(t: Mapping[str, Any]) -> TaskWindow:
        w = t.get("window")
        counters = w if isinstance(w, Mapping) else t
        return TaskWindow(
            comm=str(t.get("comm")),
            group=str(t.get("group")),
            runtime_ns=_num(counters.get("runtime_ns")),
            nr_switches=_num(counters.get("nr_switches")),
            nr_migrations=_num(counters.get("nr_migrations")),
            wait_ns=_num(counters.get("wait_ns")),
            timeslices=_num(counters.get("timeslices", counters.get("nr_switches"))),
            nr_voluntary_switches=_num(counters.get("nr_voluntary_switches")),
        )

    # ---------------------------------------------------------------- the window

    @property
    def window_ns(self) -> tuple[float, float] | None:
        """``(start_ns, end_ns)`` of the measurement window, None without one."""
        m = self.doc.get("measure") or {}
        start, end = _num(m.get("start_ns")), _num(m.get("end_ns"))
        if start is None or end is None or end <= start:
            return None
        return start, end

    @property
    def window_s(self) -> float | None:
        """Length of the measurement window in seconds (None: no window)."""
        w = self.window_ns
        return None if w is None else (w[1] - w[0]) / 1e9

    def per_s(self, count: float | None) -> float | None:
        """A count over the window as a rate per second."""
        window = self.window_s
        return None if count is None or window is None else count / window

    # ---------------------------------------------------------------- tasks

    def task(self, comm: str) -> TaskWindow:
        if comm not in self.tasks:
            raise MetricError(f"task {comm!r}", list(self.tasks))
        return self.tasks[comm]

    def group_tasks(self, group: str) -> list[TaskWindow]:
        ts = [t for t in self.tasks.values() if t.group == group]
        if not ts:
            raise MetricError(f"a task of group {group!r}", sorted({t.group for t in self.tasks.values()}))
        return ts

    def share_pct(self, t: TaskWindow) -> float | None:
        """The task's CPU time over the window as % of one CPU."""
        window = self.window_s
        if t.runtime_ns is None or window is None:
            return None
        return t.runtime_ns / 1e9 / window * 100.0

    def wait_pct(self, t: TaskWindow) -> float | None:
        """The task's runnable-but-waiting time over the window as % of the window."""
        window = self.window_s
        if t.wait_ns is None or window is None:
            return None
        return t.wait_ns / 1e9 / window * 100.0

    def wait_avg_us(self, tasks: Sequence[TaskWindow]) -> float | None:
        """Mean wait per timeslice of ``tasks`` (run_delay / pcount, summed
        over them), us; None if one was not measured or none ran."""
        waits = [t.wait_ns for t in tasks]
        slices = [t.timeslices for t in tasks]
        if any(w is None for w in waits) or any(n is None for n in slices):
            return None
        n = sum(x for x in slices if x is not None)
        return None if n <= 0 else sum(w for w in waits if w is not None) / n / 1000.0

    def sleep_avg_us(self, tasks: Sequence[TaskWindow]) -> float | None:
        """Mean length of a sleep of ``tasks``: the window less their CPU
        and runnable time, over their voluntary switches (summed over them),
        us; None if a count is missing or none slept."""
        window = self.window_s
        if window is None:
            return None
        asleep = 0.0
        sleeps = 0.0
        for t in tasks:
            if t.runtime_ns is None or t.wait_ns is None or t.nr_voluntary_switches is None:
                return None
            asleep += max(window * 1e9 - t.runtime_ns - t.wait_ns, 0.0)
            sleeps += t.nr_voluntary_switches
        return None if sleeps <= 0 else asleep / sleeps / 1000.0

    def dirty_pct(self) -> float | None:
        """The mean, over the window's interval samples, of the dirty and
        under-writeback pages (/proc/meminfo Dirty + Writeback) as % of the
        dirty threshold (/proc/vmstat nr_dirty_threshold); None without
        writes."""
        wb = (self.doc.get("mm") or {}).get("writeback")
        if not isinstance(wb, Mapping):
            return None
        thresh = _num(wb.get("dirty_thresh_kb"))
        samples = [s for s in wb.get("samples") or [] if isinstance(s, Mapping)]
        if not thresh or not samples:
            return None
        level = [(_num(s.get("dirty_kb")) or 0.0) + (_num(s.get("writeback_kb")) or 0.0) for s in samples]
        return sum(level) / len(level) / thresh * 100.0

    def switches(self, tasks: Sequence[TaskWindow] | None = None) -> float:
        """Context switches of ``tasks`` (default: all) over the window; a
        missing count is 0."""
        return sum(t.nr_switches or 0.0 for t in (self.tasks.values() if tasks is None else tasks))

    def migrations(self, tasks: Sequence[TaskWindow]) -> float | None:
        """Migrations of ``tasks`` over the window; None if one of them was
        not measured."""
        ms = [t.nr_migrations for t in tasks]
        if any(m is None for m in ms):
            return None
        return sum(m for m in ms if m is not None)

    def total_migrations(self) -> float | None:
        """Every task's migrations over the window: the sum of the window
        counters where the report has them (the simulator's report-wide
        ``migrations`` counts from time 0), else the report's own total (the
        runner's, which counts an unmeasured task as 0; in a ``schedlab
        real --repeat`` report, the median of the runs' totals)."""
        if self.has_window_counters:
            return sum(t.nr_migrations or 0.0 for t in self.tasks.values())
        return _num(self.doc.get("migrations"))

    def task_row(self, comm: str) -> Mapping[str, Any]:
        """The task's row as the report has it (its own counters: from time 0
        in a simulator report)."""
        if comm not in self._task_rows:
            raise MetricError(f"task {comm!r}", list(self._task_rows))
        return self._task_rows[comm]

    def group_row(self, name: str) -> Mapping[str, Any]:
        """The group's row (``elapsed_s``, ``runtime_ns``, ...)."""
        rows = [g for g in self.doc.get("groups") or [] if isinstance(g, Mapping)]
        for g in rows:
            if g.get("name") == name:
                return g
        raise MetricError(f"group {name!r}", [str(g.get("name")) for g in rows])

    def cgroup_row(self, path: str) -> Mapping[str, Any]:
        """The ``[[cgroup]]``'s row (``cpu_pct``, cpu.stat's counters)."""
        rows = [c for c in self.doc.get("cgroups") or [] if isinstance(c, Mapping)]
        for c in rows:
            if c.get("path") == path:
                return c
        raise MetricError(f"cgroup {path!r}", [str(c.get("path")) for c in rows])

    # ---------------------------------------------------------------- CPUs (mpstat)

    def mpstat_average(self) -> list[Mapping[str, Any]]:
        return [r for r in (self.doc.get("mpstat") or {}).get("average") or [] if isinstance(r, Mapping)]

    def mpstat_samples(self) -> list[list[Mapping[str, Any]]]:
        """Each interval's rows, in time order."""
        samples = (self.doc.get("mpstat") or {}).get("samples") or []
        return [[r for r in s.get("rows") or [] if isinstance(r, Mapping)] for s in samples if isinstance(s, Mapping)]

    @staticmethod
    def mpstat_row(rows: Sequence[Mapping[str, Any]], cpu: str) -> Mapping[str, Any]:
        """The row of ``cpu`` ("all" or a CPU number as text)."""
        for r in rows:
            if str(r.get("cpu")) == cpu:
                return r
        raise MetricError(f"mpstat CPU {cpu}", [str(r.get("cpu")) for r in rows])

    def idle(self) -> dict[str, float]:
        """%idle over the window per CPU label ("all", "0", "1", ...)."""
        return {str(r.get("cpu")): float(r["idle"]) for r in self.mpstat_average() if "idle" in r}

    def idle_pct(self, cpu: str) -> float:
        idle = self.idle()
        if cpu not in idle:
            raise MetricError(f"mpstat CPU {cpu}", list(idle))
        return idle[cpu]

    def mean_idle_pct(self, cpulist: str) -> float:
        """Mean %idle of the CPUs of ``cpulist`` ("0-3,6")."""
        cpus = parse_cpulist(cpulist)
        return sum(self.idle_pct(str(c)) for c in cpus) / len(cpus)

    # ---------------------------------------------------------------- report keys

    def key(self, path: str) -> Any:
        """The value at a dotted key path (``rt_migrate_test.runs``);
        ``wasted_cpu_pct`` is computed when the report lacks it."""
        if path == "wasted_cpu_pct" and path not in self.doc:
            return self.wasted_cpu_pct()
        node: Any = self.doc
        for part in path.split("."):
            if isinstance(node, list):
                # A list of rows: by position, or by the row's comm/name/group
                # (``mm.kswapd.kswapd1.cpu_pct``).
                rows = [r for r in node if isinstance(r, Mapping)]
                named = [r for r in rows if part in (r.get("comm"), r.get("name"), r.get("group"))]
                if part.isdigit() and int(part) < len(node):
                    node = node[int(part)]
                    continue
                if len(named) == 1:
                    node = named[0]
                    continue
                labels = [str(r.get("comm", r.get("name", r.get("group")))) for r in rows]
                raise MetricError(f"report key {path!r}: row {part!r}", [*map(str, range(len(node))), *labels])
            if not isinstance(node, Mapping) or part not in node:
                have = sorted(k for k, v in self.doc.items() if is_number(v))
                raise MetricError(f"report key {path!r}", [*have, "wasted_cpu_pct"])
            node = node[part]
        return node

    def wasted_cpu_pct(self) -> float | None:
        """Wasted CPU time (idle while a task it may run waited) as % of all
        CPU time in the window."""
        w = _num(self.doc.get("wasted_cpu_ns"))
        n = _num((self.doc.get("machine") or {}).get("nr_cpus"))
        m = self.doc.get("measure") or {}
        t0, t1 = _num(m.get("start_ns")), _num(m.get("end_ns"))
        if w is None or n is None or t0 is None or t1 is None:
            return None
        total = (t1 - t0) * n
        return 100.0 * w / total if total > 0 else None

    # ---------------------------------------------------------------- timer delays

    def timer_delay_us(self, comm: str | None, p: float) -> float | None:
        """The ``p``-th percentile timer delay (timer expiry to the return
        to user space: ``timer_delay_*``) of task ``comm`` (None: of all
        tasks), in us; None when the report measured none."""
        key = f"p{int(p)}_ns"
        if comm is None:
            wd = self.doc.get("timer_delay") or {}
            v = wd.get(key) if wd.get("count") else None
        else:
            t = self._task_rows.get(comm) or {}
            v = t.get(f"timer_delay_{key}") if t.get("timer_delay_count") else None
        ns = _num(v)
        return None if ns is None else ns / 1000.0


# -------------------------------------------------------------------- helpers


def row_field(row: Mapping[str, Any], name: str) -> Any:
    """``row[name]``, or ``MetricError`` naming the row's fields."""
    if name not in row:
        raise MetricError(f"field {name!r}", list(row))
    return row[name]


def parse_cpulist(text: str) -> list[int]:
    """``"0-3,8"`` -> ``[0, 1, 2, 3, 8]``, by the core's parser (ValueError if malformed)."""
    return native.parse_cpulist(text)


def percentile(values: Sequence[float], p: float) -> float | None:
    """Nearest-rank percentile (as schedlab-runner computes it)."""
    if not values:
        return None
    s = sorted(values)
    rank = math.ceil(p / 100.0 * len(s))
    return float(s[min(max(rank, 1), len(s)) - 1])


def reduce_samples(values: Sequence[float], stat: str) -> float | None:
    """min / max / range (max - min) / sample stdev of per-sample values."""
    if not values:
        return None
    if stat == "min":
        return min(values)
    if stat == "max":
        return max(values)
    if stat == "range":
        return max(values) - min(values)
    if len(values) < 2:
        return 0.0
    m = sum(values) / len(values)
    var: float = sum((v - m) ** 2 for v in values) / (len(values) - 1)
    return float(var**0.5)
