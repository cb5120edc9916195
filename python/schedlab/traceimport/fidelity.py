"""How faithful a replay is: the imported scenario simulated with its trace
on, and the same measures taken from both traces (``schedlab import --check``).

Both sides are measured the same way, from their sched_switch and
sched_wakeup events, over the same window (the original trace's span):

* ``share``: each task's CPU time over the window, in % of one CPU;
* ``switches``: its switch-ins a second;
* ``migrations``: its switch-ins on another CPU than its last, a second;
* ``wakelat_p50``, ``wakelat_p90``: sched_wakeup to switch-in, in us, over
  every replayed task (the machine's scheduling delay);
* ``busy``: the replayed tasks' CPU time over the window, in % of one CPU.

A task's rows are judged when it ran at least 1 % of a CPU on either side;
the rest are summed into ``share`` of ``(small tasks)``.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from schedlab.traceimport.read import Trace, read_trace

if TYPE_CHECKING:
    from schedlab.traceimport import Imported
from schedlab.validation.suite import Tolerance, parse_tolerance

__all__ = ["Row", "check_replay", "measure_trace"]

# The tolerances of the replay's rows, written 2026-11-28 before the first
# real trace was imported and not to be edited after seeing results (as the
# validation suite's): the suite's own for the same kinds of measure.
TOLERANCES = {
    "share": "±3 points",
    "busy": "±3 points",
    "switches": "±30 % or ±20/s",
    "migrations": "±50 % or ±5/s",
    "wakelat_p50": "±30 % or ±100 us",
    "wakelat_p90": "±30 % or ±100 us",
}

SMALL = 1.0  # points: tasks under this share on both sides are summed


@dataclass(frozen=True)
class Row:
    metric: str
    what: str  # a task's group name, or "all"
    real: float
    sim: float
    tol: str
    ok: bool


def _pct(vals: list[int], q: float) -> float:
    if not vals:
        return 0.0
    vals = sorted(vals)
    return float(vals[min(len(vals) - 1, int(q * len(vals)))])


def measure_trace(trace: Trace, key_of: dict[int, str], t0: int, span: int) -> dict[str, dict[str, float]]:
    """Per key (a replayed task's name), its measures over ``[t0, t0 + span)``;
    ``key_of`` maps the trace's pids to keys (pids not in it are left out).
    Key ``"all"`` holds the machine-wide ones."""
    end = t0 + span
    on: dict[int, int] = {}  # pid -> since (running)
    last_cpu: dict[int, int] = {}
    woke: dict[int, int] = {}
    cpu_ns: dict[str, int] = defaultdict(int)
    switches: dict[str, int] = defaultdict(int)
    migrations: dict[str, int] = defaultdict(int)
    lat: list[int] = []
    for e in trace.events:
        if e.ts >= end:
            break
        if e.name == "sched_wakeup":
            p = int(e.f["pid"])
            if p in key_of:
                woke[p] = e.ts
        elif e.name == "sched_switch":
            prev, nxt = int(e.f["prev_pid"]), int(e.f["next_pid"])
            if prev in on:
                cpu_ns[key_of[prev]] += e.ts - max(on.pop(prev), t0)
            if nxt in key_of:
                on[nxt] = e.ts
                if e.ts >= t0:
                    k = key_of[nxt]
                    switches[k] += 1
                    if nxt in last_cpu and last_cpu[nxt] != e.cpu:
                        migrations[k] += 1
                    w = woke.pop(nxt, None)
                    if w is not None:
                        lat.append(e.ts - w)
                last_cpu[nxt] = e.cpu
    for p, since in on.items():
        cpu_ns[key_of[p]] += end - max(since, t0)
    sec = span / 1e9
    out: dict[str, dict[str, float]] = {}
    for k in set(key_of.values()):
        out[k] = {
            "share": 100.0 * cpu_ns[k] / span,
            "switches": switches[k] / sec,
            "migrations": migrations[k] / sec,
        }
    out["all"] = {
        "busy": 100.0 * sum(cpu_ns.values()) / span,
        "switches": sum(switches.values()) / sec,
        "migrations": sum(migrations.values()) / sec,
        "wakelat_p50": _pct(lat, 0.5) / 1000.0,
        "wakelat_p90": _pct(lat, 0.9) / 1000.0,
    }
    return out


def compare(real: dict[str, dict[str, float]], sim: dict[str, dict[str, float]]) -> list[Row]:
    tols: dict[str, Tolerance] = {k: parse_tolerance(v, f"TOLERANCES[{k}]") for k, v in TOLERANCES.items()}
    rows: list[Row] = []

    def row(metric: str, what: str, r: float, s: float) -> None:
        t = tols[metric]
        rows.append(Row(metric, what, r, s, t.text, t.ok(s, r)))

    small_r = small_s = 0.0
    for k in sorted(k for k in real if k != "all"):
        r, s = real[k], sim.get(k, {"share": 0.0, "switches": 0.0, "migrations": 0.0})
        if max(r["share"], s["share"]) < SMALL:
            small_r += r["share"]
            small_s += s["share"]
            continue
        for m in ("share", "switches", "migrations"):
            row(m, k, r[m], s[m])
    if small_r or small_s:
        row("share", "(small tasks)", small_r, small_s)
    for m in ("busy", "switches", "migrations", "wakelat_p50", "wakelat_p90"):
        row(m, "all", real["all"][m], sim["all"][m])
    return rows


def check_replay(imp: Imported, *, seed: int = 1, json_path: str | None = None, quiet: bool = False) -> int:
    """Simulate ``imp`` (an ``Imported``) with a trace, compare (module
    docstring), print the rows; 0 when every row is ok, 1 otherwise."""
    from schedlab import native

    replay = imp.replay
    span = replay.t_end - replay.t0
    with tempfile.TemporaryDirectory(prefix="schedlab-import-") as d:
        path = str(Path(d) / "replay.txt")
        report = native.run(imp.text, "<import>", seed, [], False, path)
        sim_trace = read_trace(path)
    real_keys = {t.pid: t.uid for t in replay.tasks}
    # pids are reused across a trace; the replay's tasks are told apart by their start
    sim_keys = {int(t["pid"]): str(t["group"]) for t in report["tasks"]}
    real = measure_trace(replay.trace, real_keys, replay.t0, span)
    sim = measure_trace(sim_trace, sim_keys, sim_trace.events[0].ts if sim_trace.events else 0, span)
    rows = compare(real, sim)
    ok = sum(r.ok for r in rows)
    if json_path:
        doc = {
            "source": replay.trace.source,
            "seed": seed,
            "rows": [r.__dict__ for r in rows],
            "ok": ok,
            "total": len(rows),
        }
        Path(json_path).write_text(json.dumps(doc, indent=1) + "\n")
    if not quiet:
        out = sys.stdout
        print(f"\nreplay fidelity ({replay.trace.source}, seed {seed}): real trace against its replay", file=out)
        print(f"  {'metric':12} {'task':32} {'real':>10} {'sim':>10}  tolerance", file=out)
        for r in rows:
            mark = "ok" if r.ok else "OFF"
            print(f"  {r.metric:12} {r.what[:32]:32} {r.real:10.2f} {r.sim:10.2f}  {r.tol:18} {mark}", file=out)
        print(f"{ok} of {len(rows)} rows ok", file=out)
    return 0 if ok == len(rows) else 1
