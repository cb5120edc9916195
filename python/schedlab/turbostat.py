"""turbostat's output (tools/power/x86/turbostat/turbostat.c, 5.5) from a
report's `cpufreq` and `cpuidle` sections: one interval, the measured window.

turbostat prints a header line, a summary row (its topology columns `-`)
and one row per CPU, the columns separated by tabs: Package, Core and CPU
(each only when the machine has more than one), Avg_MHz, Busy%, Bzy_MHz,
TSC_MHz, then the cpuidle driver's states — first how often each was entered
(`POLL C1 C1E C6`), then the share of the interval in each (`POLL% C1% ...`)
— then the core's hardware C-state residencies (`CPU%c1 CPU%c3 CPU%c6`).
MHz are printed `%.0f`, shares `%.2f`. The summary averages the per-CPU
columns and sums the state counts, as turbostat does.

PkgWatt is the package's average power over the window from the model's
power model (machine/processors.rs), summed over packages in the summary
row as turbostat sums RAPL energy. As turbostat does, a core's columns are
printed on its first thread only and a package's on its first CPU only, so
the other rows end early. Columns the model has no counter for are left
out, in turbostat's order of the rest: IRQ and SMI, temperatures, package
C-states, CorWatt and RAMWatt. CPU%c1 is turbostat's own remainder (100 - Busy% -
the deeper core states), CPU%cN the time in the driver's CN state: the
model's idle states are the core's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

#: The hardware core C-states turbostat reports (CPU%c3, CPU%c6, CPU%c7),
#: by the cpuidle state names that stand for them.
CORE_STATES = (("C3", "CPU%c3"), ("C6", "CPU%c6"), ("C7s", "CPU%c7"))


def format_turbostat(report: Mapping[str, Any]) -> str:
    """turbostat's table for the report's window; a one-line note when the
    run had no processor (`machine.cpufreq = "none"`)."""
    cf = report.get("cpufreq")
    if not cf:
        return 'turbostat: no CPU frequency modelled (machine.cpufreq = "none")'
    rows: Sequence[Mapping[str, Any]] = cf.get("cpus") or []
    measure = report.get("measure") or {}
    window = max(1, int(measure.get("end_ns") or 0) - int(measure.get("start_ns") or 0))
    idle = report.get("cpuidle") or {}
    names = [s["name"] for s in idle.get("states") or []]
    idle_rows = {r["cpu"]: r for r in idle.get("cpus") or []}
    multi_pkg = len({r["package"] for r in rows}) > 1
    multi_core = len({(r["package"], r["core"]) for r in rows}) > 1
    topo = (["Package"] if multi_pkg else []) + (["Core"] if multi_core else []) + (["CPU"] if len(rows) > 1 else [])
    core_cols = [(n, col) for n, col in CORE_STATES if n in names]
    thread_hdr = topo + ["Avg_MHz", "Busy%", "Bzy_MHz", "TSC_MHz"] + names + [f"{n}%" for n in names] + ["CPU%c1"]
    header = thread_hdr + [col for _, col in core_cols] + ["PkgWatt"]
    tsc = float(cf.get("base_mhz") or 0)
    watts = {p["package"]: float(p["watts"]) for p in cf.get("packages") or []}

    def values(avg: float, busy: float, bzy: float, usage: list[float], pct: list[float]) -> list[str]:
        deeper = sum(pct[names.index(n)] for n, _ in core_cols)
        c1 = max(0.0, 100.0 - busy - deeper)
        out = [f"{avg:.0f}", f"{busy:.2f}", f"{bzy:.0f}", f"{tsc:.0f}"]
        out += [f"{u:.0f}" for u in usage] + [f"{p:.2f}" for p in pct]
        return out + [f"{c1:.2f}"] + [f"{pct[names.index(n)]:.2f}" for n, _ in core_cols]

    # turbostat prints a core's columns on its first thread only and a
    # package's on its first CPU only: the other rows end early.
    first_thread: dict[tuple[int, int], int] = {}
    for r in rows:
        first_thread.setdefault((r["package"], r["core"]), r["cpu"])
    first_cpu: dict[int, int] = {}
    for r in rows:
        first_cpu.setdefault(r["package"], r["cpu"])
    lines = ["\t".join(header)]
    per_cpu: list[list[str]] = []
    usage_sum = [0.0] * len(names)
    pct_sum = [0.0] * len(names)
    for r in rows:
        ir = idle_rows.get(r["cpu"]) or {}
        usage = [float(u) for u in ir.get("usage") or [0] * len(names)]
        times = list(ir.get("time_ns") or [0] * len(names))
        if names and r.get("idle_open_ns"):
            # Deviation: an idle period still open at the window's end is
            # credited to the deepest state (the menu governor's choice for
            # a long idle with no timer armed); cpuidle has not chosen yet.
            times[-1] += r["idle_open_ns"]
        pct = [100.0 * t / window for t in times]
        usage_sum = [a + b for a, b in zip(usage_sum, usage)]
        pct_sum = [a + b for a, b in zip(pct_sum, pct)]
        ids = ([str(r["package"])] if multi_pkg else []) + ([str(r["core"])] if multi_core else [])
        ids += [str(r["cpu"])] if len(rows) > 1 else []
        row = ids + values(r["avg_mhz"], r["busy_pct"], r["bzy_mhz"], usage, pct)
        if first_cpu[r["package"]] == r["cpu"]:
            row.append(f"{watts.get(r['package'], 0.0):.2f}")
        elif first_thread[(r["package"], r["core"])] != r["cpu"]:
            row = row[: len(thread_hdr)]
        per_cpu.append(row)
    n = max(1, len(rows))
    summary = ["-"] * len(topo)
    summary += values(cf["avg_mhz"], cf["busy_pct"], cf["bzy_mhz"], usage_sum, [p / n for p in pct_sum])
    summary.append(f"{sum(watts.values()):.2f}")
    lines.append("\t".join(summary))
    if len(rows) > 1:
        lines += ["\t".join(x) for x in per_cpu]
    return "\n".join(lines)
