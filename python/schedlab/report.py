"""Human-readable reports, in the layouts kernel people already read.

* ``format_run_report``: for ``schedlab run`` -- an mpstat -P ALL block in
  sysstat 12.x's column layout (per-interval samples on request, always the
  ``Average:`` block), then per-task and per-group tables.
* ``format_experiment``: for ``schedlab reproduce`` -- an mmtests
  compare-kernels style table, one column per variant, ``mean (stdev)`` per
  metric with the published figure on the line below, then the bands.

Both take the plain dicts of the JSON report / experiment result and tolerate
extra keys and missing optional sections.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from schedlab.errors import UsageError


def write_json(dest: str, doc: Mapping[str, Any]) -> None:
    """Write a report as indented JSON to `dest` (`-`: stdout); SL001 if it cannot.

    The text is streamed as json.dump encodes it: `json.dumps` of a report
    with a million mpstat rows held some thirty string pieces per row in
    one list, eight times the report's own size, before the first byte
    went out."""
    from schedlab.outputs import atomic_open

    if dest == "-":
        json.dump(doc, sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
        return
    with atomic_open(dest, "w", flag="--json") as f:
        json.dump(doc, f, indent=2, allow_nan=False)
        f.write("\n")


__all__ = [
    "MPSTAT_COLUMNS",
    "format_experiment",
    "format_mpstat",
    "format_run_report",
    "mpstat_clock",
]

#: (report key, column header) in sysstat's order.
MPSTAT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("usr", "%usr"),
    ("nice", "%nice"),
    ("sys", "%sys"),
    ("iowait", "%iowait"),
    ("irq", "%irq"),
    ("soft", "%soft"),
    ("steal", "%steal"),
    ("guest", "%guest"),
    ("gnice", "%gnice"),
    ("idle", "%idle"),
)

_NS_PER_S = 1_000_000_000
_NS_PER_MS = 1_000_000


# --------------------------------------------------------------------------
# mpstat


def mpstat_clock(ns: int) -> str:
    """Simulated time as mpstat's time column: ``HH:MM:SS`` since the start of
    the simulation, with ``.mmm`` when the instant is not on a whole second."""
    s, rem = divmod(int(ns), _NS_PER_S)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    clock = f"{h:02d}:{m:02d}:{s:02d}"
    return clock if rem == 0 else f"{clock}.{rem // _NS_PER_MS:03d}"


def _mpstat_line(time: str, cpu: object, values: Sequence[str], width: int) -> str:
    # sysstat: the time in an 11-wide left-aligned field, the CPU right-aligned
    # in 5, then every column right-aligned in 8 (" %7.2f").
    return f"{time:<{width}}{cpu!s:>5}" + "".join(f"{v:>8}" for v in values)


def _mpstat_rows(time: str, rows: Sequence[Mapping[str, Any]], width: int) -> list[str]:
    out = []
    for r in rows:
        values = []
        for key, _ in MPSTAT_COLUMNS:
            v = r.get(key)
            values.append(f"{float(v):.2f}" if isinstance(v, (int, float)) else "-")
        out.append(_mpstat_line(time, r.get("cpu", "?"), values, width))
    return out


def format_mpstat(report: Mapping[str, Any], *, samples: bool = True) -> str:
    """The mpstat -P ALL text: the ``Linux ...`` header, the interval blocks if
    ``samples``, and the ``Average:`` block."""
    mp = report.get("mpstat") or {}
    kernel = report.get("kernel") or {}
    machine = report.get("machine") or {}
    lines = [
        f"Linux {kernel.get('version', '?')} (schedlab) \t{machine.get('name', '?')} \t"
        f"({machine.get('nr_cpus', '?')} CPU)"
    ]
    header = [h for _, h in MPSTAT_COLUMNS]
    sample_list: Sequence[Mapping[str, Any]] = mp.get("samples") or []
    measure = report.get("measure") or {}
    start = int(measure.get("start_ns") or 0)
    stamps: list[tuple[str, str]] = []
    prev = start
    for s in sample_list:
        end = int(s.get("end_ns") or 0)
        stamps.append((mpstat_clock(prev), mpstat_clock(end)))
        prev = end
    width = max([11, *(len(t) + 1 for pair in stamps for t in pair)])
    if samples:
        for s, (t0, t1) in zip(sample_list, stamps):
            lines.append("")
            lines.append(_mpstat_line(t0, "CPU", header, width))
            lines.extend(_mpstat_rows(t1, s.get("rows") or [], width))
    average = mp.get("average")
    if average:
        lines.append("")
        lines.append(_mpstat_line("Average:", "CPU", header, width))
        lines.extend(_mpstat_rows("Average:", average, width))
    elif not sample_list:
        lines.append("")
        lines.append("(no mpstat data in this report)")
    return "\n".join(lines)


# --------------------------------------------------------------------------
# run report


def _ms(ns: object) -> str:
    return f"{ns / _NS_PER_MS:.3f}" if isinstance(ns, (int, float)) else "-"


def _s(ns: object) -> str:
    return f"{ns / _NS_PER_S:.3f}" if isinstance(ns, (int, float)) else "-"


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], left: Sequence[int] = (0,)) -> list[str]:
    """Columns right-aligned except the indices in ``left``; two spaces between."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        parts = [c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))]
        return "  ".join(parts).rstrip()

    return [line(headers), *(line(r) for r in rows)]


def format_run_report(
    report: Mapping[str, Any], *, samples: bool = False, tasks: bool = True, schedstat: bool = False
) -> str:
    """The text ``schedlab run`` prints."""
    sim = report.get("sim") or {}
    measure = report.get("measure") or {}
    lines = [
        f"schedlab {report.get('schedlab', '?')}: scenario {report.get('scenario', '?')} "
        f"({report.get('source', '?')}), seed {report.get('seed', '?')}",
    ]
    if sim:
        events = sim.get("events")
        ev = f"{events:,} events" if isinstance(events, int) else "? events"
        lines.append(f"simulated {_s(sim.get('end_ns'))} s ({ev}; {sim.get('reason', '?')})")
    if measure:
        lines.append(
            f"measured {_s(measure.get('start_ns'))} s .. {_s(measure.get('end_ns'))} s, "
            f"mpstat interval {_s(measure.get('interval_ns'))} s"
        )
    lines.append("")
    lines.append(format_mpstat(report, samples=samples))
    mp = report.get("mpstat") or {}
    n_samples = mp.get("intervals") or len(mp.get("samples") or [])
    if not samples and n_samples:
        lines.append(f"({n_samples} interval sample(s) not shown; --samples prints them)")

    task_rows: Sequence[Mapping[str, Any]] = report.get("tasks") or []
    if tasks and task_rows:
        lines += ["", "Tasks"]
        rows = [
            [
                str(t.get("comm", "?")),
                str(t.get("pid", "?")),
                str(t.get("policy", "?")),
                str(t.get("nice", "?")),
                _ms(t.get("runtime_ns")),
                _ms(t.get("wait_ns")),
                str(t.get("nr_switches", "-")),
                str(t.get("nr_migrations", "-")),
            ]
            for t in task_rows
        ]
        lines += _table(
            ["COMM", "PID", "POLICY", "NICE", "RUNTIME(ms)", "WAIT(ms)", "SWITCHES", "MIGRATIONS"],
            rows,
            left=(0, 2),
        )
        unlisted = int((report.get("rt_migrate_test") or {}).get("tasks_not_listed") or 0)
        if unlisted:
            lines.append(f"({unlisted} rt-migrate-test threads of earlier runs not listed; Groups counts them)")

    groups: Sequence[Mapping[str, Any]] = report.get("groups") or []
    if groups:
        lines += ["", "Groups"]
        rows = []
        for g in groups:
            el = g.get("elapsed_s")
            rows.append(
                [
                    str(g.get("name", "?")),
                    str(g.get("count", "?")),
                    f"{el:.3f}" if isinstance(el, (int, float)) else "not finished",
                    _ms(g.get("runtime_ns")),
                ]
            )
        lines += _table(["GROUP", "TASKS", "ELAPSED(s)", "RUNTIME(ms)"], rows)

    cgroups: Sequence[Mapping[str, Any]] = report.get("cgroups") or []
    if cgroups:
        # As the cgroup v2 files read: cpu.weight, cpu.idle, cgroup.threads'
        # count, cpu.stat usage_usec (the descendants' time included).
        lines += ["", "Cgroups (cpu controller, over the window)"]
        rows = [
            [
                str(c.get("path", "?")),
                str(c.get("weight", "?")),
                "1" if c.get("idle") else "0",
                str(c.get("threads", "?")),
                str(c.get("usage_usec", "?")),
                f"{c['cpu_pct']:.2f}" if isinstance(c.get("cpu_pct"), (int, float)) else "-",
            ]
            for c in cgroups
        ]
        head = ["CGROUP", "CPU.WEIGHT", "CPU.IDLE", "THREADS", "USAGE_USEC", "%CPU"]
        if any("cpus_effective" in c for c in cgroups):
            # cpuset.cpus.effective, where the scenario sets a cpuset.cpus.
            head.append("CPUSET.CPUS.EFFECTIVE")
            for row, c in zip(rows, cgroups):
                row.append(str(c.get("cpus_effective", "?")))
        if any(not str(c.get("max", "max")).startswith("max") for c in cgroups):
            # cpu.max and cpu.stat's bandwidth counters, with a quota somewhere.
            head += ["CPU.MAX", "NR_PERIODS", "NR_THROTTLED", "THROTTLED_USEC"]
            for row, c in zip(rows, cgroups):
                row += [str(c.get(k, "?")) for k in ("max", "nr_periods", "nr_throttled", "throttled_usec")]
            if any(c.get("max_burst") for c in cgroups):
                head += ["CPU.MAX.BURST", "NR_BURSTS", "BURST_USEC"]
                for row, c in zip(rows, cgroups):
                    row += [str(c.get(k, "?")) for k in ("max_burst", "nr_bursts", "burst_usec")]
        lines += _table(head, rows, left=(0,))

    wasted = report.get("wasted_cpu_ns")
    if isinstance(wasted, (int, float)):
        nr = (report.get("machine") or {}).get("nr_cpus")
        window = (measure.get("end_ns") or 0) - (measure.get("start_ns") or 0)
        pct = ""
        if isinstance(nr, int) and nr > 0 and window > 0:
            pct = f" ({100.0 * wasted / (nr * window):.2f}% of CPU time)"
        lines += ["", f"Wasted CPU (idle while a task it may run waited): {_ms(wasted)} ms{pct}"]

    by = report.get("migrations_by_distance")
    if isinstance(by, dict):
        lines.append(
            f"Migrations (whole run): {report.get('migrations', 0)}: {by.get('smt', 0)} to an SMT sibling, "
            f"{by.get('llc', 0)} within an LLC, {by.get('remote_llc', 0)} to another LLC, "
            f"{by.get('remote_node', 0)} to another node"
        )

    lines += _kernel_sections(report)

    cpus = (report.get("schedstat") or {}).get("cpus") or []
    if schedstat and cpus:
        lines += ["", "Schedstat (per CPU)"]
        rows = [
            [
                str(c.get("cpu", "?")),
                *(str(c.get(k, "-")) for k in ("sched_count", "sched_goidle", "ttwu_count", "ttwu_local")),
                _ms(c.get("run_ns")),
                _ms(c.get("wait_ns")),
                str(c.get("timeslices", "-")),
            ]
            for c in cpus
        ]
        lines += _table(
            ["CPU", "SCHED_COUNT", "SCHED_GOIDLE", "TTWU_COUNT", "TTWU_LOCAL", "RUN(ms)", "WAIT(ms)", "TIMESLICES"],
            rows,
            left=(),
        )
        lines += ["", "Load balancing by domain level (sums over CPUs; [idle, busy, newly idle])"]
        lines += _table(
            ["LEVEL", "LB_COUNT", "LB_BALANCED", "LB_FAILED", "LB_GAINED", "ALB_COUNT", "ALB_PUSHED"],
            _domain_totals(cpus),
            left=(0,),
        )
    return "\n".join(lines)


def _kernel_sections(report: Mapping[str, Any]) -> list[str]:
    """What the rest of the kernel did over the window: idle states
    (cpuidle sysfs), CPU frequency and energy, disks (iostat -x),
    workqueues, dbench's results."""
    lines: list[str] = []
    measure = report.get("measure") or {}
    window_s = ((measure.get("end_ns") or 0) - (measure.get("start_ns") or 0)) / 1e9
    ci = report.get("cpuidle")
    if isinstance(ci, dict):
        total = sum(ci.get("time_ns") or []) or 1
        lines += ["", f"Idle states ({ci.get('table')}, all CPUs; menu governor)"]
        rows = [
            [
                str(s.get("name")),
                f"{(s.get('exit_latency_ns') or 0) / 1e3:g}",
                f"{(s.get('target_residency_ns') or 0) / 1e3:g}",
                str(u),
                f"{100.0 * t / total:.2f}",
            ]
            for s, u, t in zip(ci.get("states") or [], ci.get("usage") or [], ci.get("time_ns") or [])
        ]
        lines += _table(["STATE", "EXIT(us)", "RESIDENCY(us)", "USAGE", "TIME(%)"], rows)
    cf = report.get("cpufreq")
    if isinstance(cf, dict):
        lines += ["", f"CPU frequency ({cf.get('model')}; {cf.get('governor')}{', HWP' if cf.get('hwp') else ''})"]
        lines.append(
            f"all CPUs: Avg_MHz {cf.get('avg_mhz', 0):.0f}, Busy% {cf.get('busy_pct', 0):.2f}, "
            f"Bzy_MHz {cf.get('bzy_mhz', 0):.0f}; {cf.get('transitions', 0)} frequency changes; "
            f"{cf.get('energy_j', 0):.2f} J"
        )
        rows = [
            [str(p.get("package")), f"{p.get('energy_j', 0):.2f}", f"{p.get('watts', 0):.2f}"]
            for p in cf.get("packages") or []
        ]
        lines += _table(["PACKAGE", "ENERGY(J)", "PkgWatt"], rows)
        lines.append("(per CPU: schedlab run --turbostat)")
    pressure = report.get("pressure")
    if isinstance(pressure, dict):
        lines += ["", "Pressure (/proc/pressure at the end; window: share of the measurement window stalled)"]
        for res in ("cpu", "memory", "io"):
            f = pressure.get(res) or {}
            for kind in ("some", "full"):
                p = f.get(kind)
                if not isinstance(p, dict):
                    continue
                lines.append(
                    f"{res:<6} {kind} avg10={p.get('avg10', 0):.2f} avg60={p.get('avg60', 0):.2f} "
                    f"avg300={p.get('avg300', 0):.2f} total={p.get('total_us', 0)}"
                    f"   window {p.get('window_pct', 0):.2f}%"
                )
    bw = report.get("memory_bandwidth")
    if isinstance(bw, list) and bw:
        lines += ["", "Memory bandwidth (per node; memory-bound work stalls while a node is saturated)"]
        rows = [
            [
                str(n.get("node")),
                f"{n.get('bandwidth_gbs', 0):.2f}",
                f"{n.get('traffic_gbs', 0):.2f}",
                f"{n.get('utilization_pct', 0):.2f}",
                f"{n.get('saturated_pct', 0):.2f}",
                f"{n.get('stall_mean', 0):.2f}",
            ]
            for n in bw
        ]
        lines += _table(["NODE", "BANDWIDTH(GB/s)", "TRAFFIC(GB/s)", "UTIL(%)", "SATURATED(%)", "STALL"], rows)
    disks = report.get("disks")
    if isinstance(disks, list) and disks and window_s > 0:
        lines += ["", "Disks (iostat -x over the window)"]
        rows = [
            [
                str(d.get("name")),
                f"{d.get('reads', 0) / window_s:.1f}",
                f"{d.get('writes', 0) / window_s:.1f}",
                f"{d.get('flushes', 0) / window_s:.1f}",
                f"{d.get('read_bytes', 0) / 1024 / window_s:.1f}",
                f"{d.get('write_bytes', 0) / 1024 / window_s:.1f}",
                f"{d.get('await_us', 0) / 1e3:.3f}",
                f"{d.get('util_pct', 0):.2f}",
            ]
            for d in disks
        ]
        lines += _table(["DEVICE", "r/s", "w/s", "f/s", "rkB/s", "wkB/s", "await(ms)", "%util"], rows)
    mm = report.get("mm")
    if isinstance(mm, dict) and window_s > 0:
        lines += _mm_section(report, mm, window_s)
    wqs = report.get("workqueues")
    if isinstance(wqs, list) and wqs:
        lines += ["", "Work items run (by workqueue): " + ", ".join(f"{w.get('name')} {w.get('works')}" for w in wqs)]
    db = report.get("dbench")
    if isinstance(db, dict):
        lines += [
            "",
            f"dbench ({db.get('clients')} clients, {db.get('filesystem')}): {db.get('passes')} load files, "
            f"Amean {db.get('amean_ms')} ms (Stddev {db.get('stddev_ms')}, min {db.get('min_ms')}, "
            f"max {db.get('max_ms')}), Hmean {db.get('hmean_mbs')} MB/s, "
            f"{db.get('migrations_per_pass')} migrations per load file",
        ]
    return lines


def _mm_section(report: Mapping[str, Any], mm: Mapping[str, Any], window_s: float) -> list[str]:
    """Memory over the window: vmstat's procs, memory and CPU columns, the nodes
    with their locks, kswapd threads as top shows them, /proc/vmstat's
    events per second, and the allocations of each group."""
    nodes = [n for n in mm.get("nodes") or [] if isinstance(n, Mapping)]
    rows_avg = (report.get("mpstat") or {}).get("average") or []
    avg: Mapping[str, Any] = next((r for r in rows_avg if r.get("cpu") == "all"), {})
    shadow = "on" if mm.get("workingset") else "off"
    lines = [
        "",
        f"Memory (vm.kswapd_threads {mm.get('kswapd_threads')}, min_free_kbytes {mm.get('min_free_kbytes')}, "
        f"shadow entries {shadow}; vmstat's columns over the window, KiB)",
    ]
    free = sum(int(n.get("free_pages") or 0) for n in nodes) * 4
    cache = sum(int(n.get("inactive_file_pages") or 0) + int(n.get("active_file_pages") or 0) for n in nodes) * 4
    procs = [p for p in mm.get("procs") or [] if isinstance(p, Mapping)]
    # vmstat's r and b: the mean of the lines it would have printed.
    r = sum(int(p.get("r") or 0) for p in procs) / max(len(procs), 1)
    b = sum(int(p.get("b") or 0) for p in procs) / max(len(procs), 1)
    row = [f"{r:.1f}", f"{b:.1f}", str(free), str(cache), f"{float(mm.get('read_kbs') or 0):.0f}"]
    row += [f"{float(avg.get(k) or 0):.0f}" for k in ("usr", "sys", "idle", "iowait")]
    lines += _table(["r", "b", "free", "cache", "bi", "us", "sy", "id", "wa"], [row], left=())
    lines += ["", "Nodes (pages; the locks' held time as % of the window, spin as CPU ms)"]
    rows = [
        [
            str(n.get("node")),
            str(n.get("free_pages")),
            str(n.get("pcp_pages", 0)),
            f"{n.get('min_pages')}/{n.get('low_pages')}/{n.get('high_pages')}",
            str(n.get("inactive_file_pages")),
            f"{n.get('kswapd_allowed'):g} {n.get('kswapd_cpu_total_pct')}",
            f"{n.get('lru_lock_held_pct')} {n.get('lru_lock_spin_ms')}",
            f"{n.get('zone_lock_held_pct')} {n.get('zone_lock_spin_ms')}",
        ]
        for n in nodes
    ]
    head = [
        "NODE",
        "FREE",
        "PCP",
        "MIN/LOW/HIGH",
        "INACTIVE_FILE",
        "KSWAPD(n %CPU)",
        "LRU_LOCK(% ms)",
        "ZONE_LOCK(% ms)",
    ]
    lines += _table(head, rows)
    ks = [k for k in mm.get("kswapd") or [] if isinstance(k, Mapping)]
    if ks:
        lines += ["", "kswapd threads (top's %CPU): " + ", ".join(f"{k.get('comm')} {k.get('cpu_pct')}" for k in ks)]
    vm = mm.get("vmstat") or {}
    busy = [(k, v) for k, v in sorted(vm.items()) if v]
    if busy:
        lines += ["", "/proc/vmstat over the window (count, per second)"]
        lines += _table(["COUNTER", "COUNT", "PER_S"], [[k, str(v), f"{v / window_s:.1f}"] for k, v in busy])
    allocs = [a for a in mm.get("alloc") or [] if isinstance(a, Mapping)]
    if allocs:
        lines += ["", "Allocations by group (slow path: latency from leaving the fast path to the pages, us)"]
        rows = [
            [
                str(a.get("group")),
                str(a.get("fast")),
                str(a.get("slow")),
                str(a.get("direct_reclaims")),
                str(a.get("slow_p50_us")),
                str(a.get("slow_p99_us")),
                str(a.get("slow_max_us")),
            ]
            for a in allocs
        ]
        lines += _table(["GROUP", "FAST", "SLOW", "DIRECT", "P50", "P99", "MAX"], rows)
        waits = [a for a in allocs if a.get("isolated_stalls") or a.get("drains") or a.get("drains_skipped")]
        if waits:
            lines += ["", "Slow-path waits by group (too_many_isolated; drain_all_pages: drained, found busy)"]
            rows = [
                [
                    str(a.get("group")),
                    str(a.get("isolated_stalls", 0)),
                    str(a.get("drains", 0)),
                    str(a.get("drains_skipped", 0)),
                ]
                for a in waits
            ]
            lines += _table(["GROUP", "ISOLATED", "DRAINS", "DRAIN_BUSY"], rows)
    wb = mm.get("writeback")
    if isinstance(wb, Mapping):
        lines += _writeback_section(wb, window_s)
    return lines


def _writeback_section(wb: Mapping[str, Any], window_s: float) -> list[str]:
    """Buffered writes: the dirty limits, each device as
    /sys/kernel/debug/bdi/*/stats has it, the writers' throttle pauses,
    and /proc/meminfo's Dirty and Writeback over the window."""
    samples = [s for s in wb.get("samples") or [] if isinstance(s, Mapping)]
    dirty = [int(s.get("dirty_kb") or 0) for s in samples]
    wbk = [int(s.get("writeback_kb") or 0) for s in samples]

    def mean(v: list[int]) -> float:
        return sum(v) / max(len(v), 1)

    lines = [
        "",
        f"Dirty pages (KiB): DirtyThresh {wb.get('dirty_thresh_kb')}, BackgroundThresh "
        f"{wb.get('background_thresh_kb')}, dirty_limit {wb.get('dirty_limit_kb')}; meminfo Dirty mean "
        f"{mean(dirty):.0f} max {max(dirty, default=0)}, Writeback mean {mean(wbk):.0f}; "
        f"nr_dirtied {wb.get('nr_dirtied')}, nr_written {wb.get('nr_written')} "
        f"({int(wb.get('nr_written') or 0) / window_s:.1f}/s)",
    ]
    devs = [d for d in wb.get("devices") or [] if isinstance(d, Mapping)]
    if devs:
        lines += ["", "Writeback by device (bdi stats at the end, KiB and KiB/s; the flusher's %CPU)"]
        rows = [
            [
                str(d.get("device")),
                f"{float(d.get('written_kbs') or 0):.0f}",
                str(d.get("write_bandwidth_kbs")),
                str(d.get("dirty_ratelimit_kbs")),
                str(d.get("balanced_dirty_ratelimit_kbs")),
                str(d.get("bdi_dirty_thresh_kb")),
                str(d.get("reclaimable_kb")),
                str(d.get("writeback_kb")),
                f"{d.get('flusher')} {d.get('flusher_cpu_pct')}",
            ]
            for d in devs
        ]
        head = ["DEVICE", "WRITTEN/S", "WRITE_BW", "RATELIMIT", "BALANCED", "BDI_THRESH", "DIRTY", "WRITEBACK"]
        lines += _table([*head, "FLUSHER %CPU"], rows)
    thr = [t for t in wb.get("throttle") or [] if isinstance(t, Mapping)]
    if thr:
        lines += ["", "Dirty throttling by group (balance_dirty_pages pauses; KiB/s dirtied, ms)"]
        rows = [
            [
                str(t.get("group")),
                f"{float(t.get('dirtied_kbs') or 0):.0f}",
                str(t.get("pauses")),
                str(t.get("paused_pct")),
                str(t.get("pause_p50_ms")),
                str(t.get("pause_p90_ms")),
                str(t.get("pause_max_ms")),
            ]
            for t in thr
        ]
        lines += _table(["GROUP", "DIRTIED/S", "PAUSES", "PAUSED%", "P50", "P90", "MAX"], rows)
    return lines


def _domain_totals(cpus: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    """schedstat's per-domain counters summed over CPUs, one row per level."""
    levels: dict[str, dict[str, list[int]]] = {}
    order: list[str] = []
    for c in cpus:
        for d in c.get("domains") or []:
            name = str(d.get("name", "?"))
            if name not in levels:
                levels[name] = {}
                order.append(name)
            acc = levels[name]
            for key in ("lb_count", "lb_balanced", "lb_failed", "lb_gained"):
                v = d.get(key) or [0, 0, 0]
                acc[key] = [a + int(b) for a, b in zip(acc.get(key, [0, 0, 0]), v)]
            for key in ("alb_count", "alb_pushed"):
                acc[key] = [acc.get(key, [0])[0] + int(d.get(key) or 0)]
    rows = []
    for name in order:
        acc = levels[name]
        rows.append(
            [name]
            + ["/".join(str(x) for x in acc[k]) for k in ("lb_count", "lb_balanced", "lb_failed", "lb_gained")]
            + [str(acc["alb_count"][0]), str(acc["alb_pushed"][0])]
        )
    return rows


def _parse_cpulist(text: str) -> list[int]:
    from schedlab.metrics import parse_cpulist

    return parse_cpulist(text) if text else []


def _cpumask_hex(cpus: Sequence[int], nr_cpus: int) -> str:
    """A CPU set as the kernel prints a cpumask (%*pb): hex in 32-bit chunks
    separated by commas, the leading chunk only as wide as nr_cpu_ids needs."""
    nbits = max(1, nr_cpus)
    words = [0] * ((nbits + 31) // 32)
    for c in cpus:
        words[c // 32] |= 1 << (c % 32)
    top_bits = nbits - 32 * (len(words) - 1)
    chunks = [f"{words[-1]:0{(top_bits + 3) // 4}x}"] + [f"{w:08x}" for w in reversed(words[:-1])]
    return ",".join(chunks)


def proc_schedstat(report: Mapping[str, Any]) -> str:
    """The report's counters as /proc/schedstat version 15 text
    (Documentation/scheduler/sched-stats.rst): cpu lines (yld_count, 0,
    sched_count, sched_goidle, ttwu_count, ttwu_local, rq_cpu_time,
    run_delay, pcount) and domain lines (idle, busy and newly-idle groups of
    lb_count lb_balanced lb_failed lb_imbalance lb_gained lb_hot_gained
    lb_nobusyq lb_nobusyg, then alb_count alb_failed alb_pushed, six zeros,
    ttwu_wake_remote ttwu_move_affine ttwu_move_balance). Counters schedlab
    does not keep (yld_count, lb_hot_gained, ttwu_move_balance) are 0."""
    nr = int((report.get("machine") or {}).get("nr_cpus") or 0)
    hz = int((report.get("kernel") or {}).get("hz") or 250)
    end_ns = int((report.get("sim") or {}).get("end_ns") or 0)
    out = ["version 15", f"timestamp {end_ns * hz // 1_000_000_000}"]
    for c in (report.get("schedstat") or {}).get("cpus") or []:
        f = [0, 0, c.get("sched_count", 0), c.get("sched_goidle", 0), c.get("ttwu_count", 0)]
        f += [c.get("ttwu_local", 0), c.get("run_ns", 0), c.get("wait_ns", 0), c.get("timeslices", 0)]
        out.append(f"cpu{c.get('cpu')} " + " ".join(str(int(x)) for x in f))
        for i, d in enumerate(c.get("domains") or []):
            nums: list[int] = []
            for ix in range(3):
                for key in ("lb_count", "lb_balanced", "lb_failed", "lb_imbalance", "lb_gained"):
                    nums.append(int((d.get(key) or [0, 0, 0])[ix]))
                nums.append(0)  # lb_hot_gained
                nums.append(int((d.get("lb_nobusyq") or [0, 0, 0])[ix]))
                nums.append(int((d.get("lb_nobusyg") or [0, 0, 0])[ix]))
            nums += [int(d.get("alb_count") or 0), int(d.get("alb_failed") or 0), int(d.get("alb_pushed") or 0)]
            nums += [0] * 6
            nums += [int(d.get("ttwu_wake_remote") or 0), int(d.get("ttwu_move_affine") or 0), 0]
            mask = _cpumask_hex(_parse_cpulist(str(d.get("cpus") or "")), nr)
            out.append(f"domain{i} {mask} " + " ".join(str(x) for x in nums))
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------
# experiment compare table

_CELL = 22


def _num(v: object, width: int = 10, decimals: int = 2) -> str:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return f"{v:{width}.{decimals}f}"
    return "-".rjust(width)


def _decimals(values: Sequence[object]) -> int:
    """mmtests prints 2 decimals; a row whose numbers are all below 1 gets 4."""
    nums = [abs(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return 4 if nums and 0 < max(nums) < 1 else 2


def format_experiment(result: Mapping[str, Any]) -> str:
    """The text ``schedlab reproduce`` prints (mmtests compare-kernels style)."""
    results: Sequence[Mapping[str, Any]] = result.get("results") or []
    name = result.get("experiment", "?")
    title = result.get("title")
    lines = [f"{name}: {title}" if title and title != name else str(name)]
    src = result.get("source")
    seed_file = result.get("seed_file")
    if src or seed_file:
        lines.append(
            ", ".join(p for p in (f"scenario {src}" if src else "", f"seed {seed_file}" if seed_file else "") if p)
        )
    seeds = result.get("seeds") or []
    if seeds:
        span = f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {seeds[0]}..{seeds[-1]}"
        lines.append(f"{result.get('mode', '?')} mode: {span} per variant; mean (sample stdev) over seeds")

    derived: Mapping[str, Mapping[str, Any]] = result.get("derived") or {}
    if derived:
        lines += ["", "Derived"]
        for key, d in derived.items():
            achieved = d.get("achieved")
            ach = f"{achieved:.4f}" if isinstance(achieved, (int, float)) else "?"
            lines.append(
                f"  {key} = {d.get('value')}  ({d.get('metric')} = {ach} in {d.get('variant')}, "
                f"target {d.get('target')}; {d.get('evaluations', '?')} runs)"
            )
            if d.get("why"):
                lines.append(f"    why: {d['why']}")

    if result.get("tables"):
        # Case tables: the seed's compare tables (experiment_tables.py).
        from schedlab.experiment_tables import format_tables

        lines += format_tables(result)
        return "\n".join(lines + _format_bands(result))

    # Metric rows: in the experiment's order, else first appearance.
    order: list[str] = list(result.get("metrics") or [])
    for r in results:
        for m in r.get("metrics") or {}:
            if m not in order:
                order.append(m)
    scalar = [m for m in order if any(_is_scalar_or_none(r, m) for r in results)]
    series = [m for m in order if m not in scalar]

    label_w = max([len("Published"), *(len(m) for m in scalar)]) if scalar else 10
    stat_w = len("Published") + 1
    lines.append("")
    lines.append(" " * (stat_w + label_w) + "".join(str(r.get("variant", "?")).rjust(_CELL) for r in results))
    for m in scalar:
        dec = _decimals(
            [(r.get(k) or {}).get(m) for r in results for k in ("metrics", "published")],
        )
        cells = [_cell(r, "metrics", "stdev", m, dec) for r in results]
        pubs = [_cell(r, "published", "published_stdev", m, dec) for r in results]
        lines.append(f"{'Amean':<{stat_w}}{m:<{label_w}}" + "".join(c.rjust(_CELL) for c in cells).rstrip())
        if any((r.get("published") or {}).get(m) is not None for r in results):
            lines.append(f"{'Published':<{stat_w}}{m:<{label_w}}" + "".join(p.rjust(_CELL) for p in pubs).rstrip())
    for m in series:
        lens = [len(v) for r in results if isinstance(v := (r.get("metrics") or {}).get(m), list)]
        lines.append(f"({m}: a per-sample series, {max(lens) if lens else 0} points per variant; see --json)")

    return "\n".join(lines + _format_bands(result))


def _format_bands(result: Mapping[str, Any]) -> list[str]:
    lines: list[str] = []
    bands: Sequence[Mapping[str, Any]] = result.get("bands") or []
    if bands:
        lines += ["", "Bands"]
        name_w = max(len(str(b.get("name", ""))) for b in bands)
        n_ok = 0
        for b in bands:
            ok = bool(b.get("ok"))
            n_ok += ok
            value = b.get("value")
            val = f"{value:10.2f}" if isinstance(value, (int, float)) else "n/a".rjust(10)
            lines.append(
                f"  {b.get('name', '?')!s:<{name_w}}  {val}   in [{b.get('low')}, {b.get('high')}]   "
                f"{'ok' if ok else 'OUT'}"
            )
        lines.append(f"{n_ok} of {len(bands)} bands ok")
    return lines


def _cell(r: Mapping[str, Any], values: str, stdevs: str, m: str, dec: int) -> str:
    """``"     43.04 (   0.39)"``: value and stdev, or blanks where there is none."""
    table = r.get(values) or {}
    if m not in table or table[m] is None:
        return "-".rjust(10) + " " * 10
    sd = (r.get(stdevs) or {}).get(m)
    tail = f" ({_num(sd, 7, dec)})" if isinstance(sd, (int, float)) else " " * 10
    return _num(table[m], 10, dec) + tail


def _is_scalar_or_none(r: Mapping[str, Any], m: str) -> bool:
    v = (r.get("metrics") or {}).get(m)
    return m in (r.get("metrics") or {}) and not isinstance(v, list)


# --------------------------------------------------------------------------
# perf sched latency


def format_perf_sched_latency(report: Mapping[str, Any], *, histogram: bool = False) -> str:
    """The per-task table of ``perf sched latency -p`` (older perf's columns):
    runtime, switches, average and maximum wakeup latency (wakeup to pick,
    the report's ``wakeup_latency_*``) and when the maximum ended, sorted by
    average as perf sorts by default (``avg, max, switch, runtime``); a
    TOTAL row. With ``histogram``, each task's latencies in log2 buckets of
    microseconds follow.

    Kernel threads are included (they are tasks perf sees too), those that
    ran: perf lists only what switched in its trace.
    """
    kthreads = [t for t in report.get("kernel_threads") or [] if t.get("nr_switches")]
    tasks = [*(report.get("tasks") or []), *kthreads]
    earlier = (report.get("rt_migrate_test") or {}).get("earlier_threads")
    if earlier:
        # The threads of earlier runs, merged as perf merges one comm's tasks.
        tasks.append({**earlier, "comm": "rt-migrate-test", "pid": f"({earlier.get('count')})"})

    def key(t: Mapping[str, Any]) -> tuple[float, float, float, float]:
        return (
            -float(t.get("wakeup_latency_avg_ns") or 0),
            -float(t.get("wakeup_latency_max_ns") or 0),
            -float(t.get("nr_switches") or 0),
            -float(t.get("runtime_ns") or 0),
        )

    rule = " " + "-" * 113
    out = [
        rule,
        "  Task                  |   Runtime ms  | Switches | Average delay ms "
        "| Maximum delay ms | Maximum delay at       |",
        rule,
    ]
    total_rt, total_sw = 0, 0
    for t in sorted(tasks, key=key):
        rt = int(t.get("runtime_ns") or 0)
        sw = int(t.get("nr_switches") or 0)
        total_rt += rt
        total_sw += sw
        name = f"{t.get('comm')}:{t.get('pid')}"
        avg = int(t.get("wakeup_latency_avg_ns") or 0) / 1e6
        mx = int(t.get("wakeup_latency_max_ns") or 0) / 1e6
        at = int(t.get("wakeup_latency_max_at_ns") or 0) / 1e9
        out.append(
            f"  {name:<22}|{rt / 1e6:11.3f} ms |{sw:9d} | avg:{avg:9.3f} ms | max:{mx:9.3f} ms | max at: {at:13.6f} s"
        )
    out += [rule, f"  TOTAL:                |{total_rt / 1e6:11.3f} ms |{total_sw:9d} |", " " + "-" * 51]
    if histogram:
        out += ["", "Wakeup latency histogram (count per bucket; us)"]
        for t in sorted(tasks, key=key):
            hist = list(t.get("wakeup_latency_hist_us") or [])
            if not any(hist):
                continue
            out.append(f"  {t.get('comm')}:{t.get('pid')}")
            for i, n in enumerate(hist):
                if n:
                    lo = 0 if i == 0 else 1 << (i - 1)
                    hi = f"{1 << i}" if i < len(hist) - 1 else "inf"
                    out.append(f"    [{lo:>8} .. {hi:>8})  {n}")
    return "\n".join(out)


# --------------------------------------------------------------------------
# rt-migrate-test output


def format_rt_migrate_test(report: Mapping[str, Any]) -> str:
    """rt-migrate-test's own stdout for the runs the simulator kept (the
    first run and the first failed one): per iteration the start offsets
    (us from the main thread's time stamp), `` len:`` and `` loops:`` rows;
    ``Parent pid``; per thread Max/Min/Tot/Avg of its start offsets; with
    ``check``, `` Passed!`` or `` Failed!``. With several runs a ``#`` line
    names each printed run and a summary follows; for one run the text is
    the tool's alone, to diff against the real tool's output.
    """
    r = report.get("rt_migrate_test")
    if not isinstance(r, Mapping):
        raise UsageError("SL001", "--rt-migrate-test: the scenario has no [rt_migrate_test] table")
    n = int(r["nr_tasks"])
    prio = int(r["prio"])
    runs = int(r["runs"])
    out: list[str] = []
    for run in r.get("kept_runs") or []:
        if runs > 1:
            what = "failed" if run["failed"] else "passed"
            out.append(f"# schedlab: run {int(run['run']) + 1} of {runs} ({what})")
        out.append("Iter: " + "".join(f"{t:6d}  " for t in range(n)))
        starts, lens, loops = run["starts_us"], run["lens_us"], run["loops"]
        for i, row in enumerate(starts):
            out.append(f"{i:4d}:   " + "".join(f"{v:6d}  " for v in row))
            out.append(" len:   " + "".join(f"{v:6d}  " for v in lens[i]))
            out.append(" loops: " + "".join(f"{v:6d}  " for v in loops[i]))
            out.append("")
        out.append(f"Parent pid: {run['parent_pid']}")
        iters = max(len(starts), 1)
        for t in range(n):
            col = [row[t] for row in starts] or [0]
            out.append(f" Task {t} (prio {prio + t}) (pid {run['pids'][t]}):")
            out.append(f"   Max: {max(col)} us")
            out.append(f"   Min: {min(col)} us")
            out.append(f"   Tot: {sum(col)} us")
            out.append(f"   Avg: {sum(col) // iters} us")
            out.append("")
        if r.get("check"):
            out.append(" Failed!" if run["failed"] else " Passed!")
        out.append("")
    if runs > 1:
        out.append(
            f"# schedlab: {runs} runs, {r['failed_runs']} failed; {r['iterations']} iterations, "
            f"{r['failed_iterations']} failed; worst delay of a higher thread behind a lower one "
            f"{float(r['max_wake_latency_us']):.0f} us (run {int(r['max_wake_latency_at']['run']) + 1}, "
            f"iteration {r['max_wake_latency_at']['iteration']})"
        )
    return "\n".join(out).rstrip("\n")
