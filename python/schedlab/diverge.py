"""``schedlab diverge``: where the simulator's scheduling decisions part
from this kernel's on one scenario, read from the sched tracepoints of both.

    schedlab diverge SCENARIO [--kernel K] [--background] [--set KEY=VALUE ...] [--seed S] [--keep DIR]

The simulator writes its tracepoints as ftrace text (``schedlab run
--trace``); on this host the runner runs the scenario while tracefs records
the same events (sched_switch, sched_wakeup, sched_wakeup_new,
sched_migrate_task: the kernel's own, so root and a mountable tracefs are
needed). The simulator runs this host's release with its measured costs
and settings, as ``validate --local`` does. Both traces go through one
parser, and the decisions of the scenario's own tasks (by name, after the
warm-up) are counted the same way on both sides:

* where a wakeup puts the task: its previous CPU, the waker's CPU, or
  another (select_task_rq's outcome);
* of the wakeups onto a CPU that runs another of the scenario's tasks, how
  many preempt it at once (the wakee runs within PREEMPT_WINDOW_US), and
  how long the others wait (a slice's end, the tick);
* the wait from wakeup to running, median and p90;
* migrations per second, at a wakeup and otherwise (the balancer);
* how long a task runs before it is switched out still runnable (its
  slice), and switches per second;
* where each task ran (its switch-ins by CPU), listed for the tasks whose
  CPUs differ between the sides.

With ``--kernel K`` the real side is the QEMU oracle guest of ``K`` on the
scenario's machine, tracefs recording in the guest (the trace comes back
gzip'd and base64'd on the console). ``--background`` lists each side's
threads outside the scenario (:func:`background`): the runner's own main
thread, the kernel's threads, and on a host everything else.

The rows are printed biggest relative difference first. Each side is one
run: a difference smaller than a run's own spread is not a finding (run it
twice). ``--keep DIR`` keeps both traces (``sim.txt``, ``real.txt``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from schedlab import native
from schedlab.errors import HostError, UsageError
from schedlab.frames import parse_ftrace
from schedlab.overrides import Override, parse_set_arg, toml_literal
from schedlab.scenarios import read_text, resolve
from schedlab.validation.runners import runner_read_sets

__all__ = ["Decisions", "cmd_diverge", "decisions", "diverge_rows", "format_rows", "placement_rows"]

#: A wakee that runs within this long of its wakeup on a CPU that ran
#: another task preempted it at wakeup (a KVM guest's wakeup path alone
#: takes tens of microseconds; a slice's end or the tick, milliseconds).
PREEMPT_WINDOW_US = 200.0
TRACEFS = Path("/sys/kernel/tracing")
EVENTS = ("sched_switch", "sched_wakeup", "sched_wakeup_new", "sched_migrate_task")
_ORDER = {"sched_migrate_task": 0, "sched_wakeup": 1, "sched_wakeup_new": 1, "sched_switch": 2}
#: The kernel's comm is 15 characters.
COMM_LEN = 15


@dataclass
class Decisions:
    """The decisions counted on one side."""

    seconds: float
    wakeups: int
    placement: dict[str, int]
    contended: int
    preempted: int
    contended_wait_us: list[float]
    wait_us: list[float]
    migrations_wakeup: int
    migrations_other: int
    slices_us: list[float]
    switches: int
    #: Per task, its switch-ins by CPU: where it ran.
    ran_on: dict[str, dict[int, int]] = field(default_factory=dict)

    def metrics(self) -> dict[str, float | None]:
        def share(n: int, d: int) -> float | None:
            return 100.0 * n / d if d else None

        def q(v: Sequence[float], p: float) -> float | None:
            if not v:
                return None
            s = sorted(v)
            return s[min(len(s) - 1, int(p * len(s)))]

        per_s = (lambda n: n / self.seconds) if self.seconds > 0 else (lambda n: None)
        return {
            "wakeups/s": per_s(self.wakeups),
            "wakeup on prev CPU %": share(self.placement.get("prev", 0), self.wakeups),
            "wakeup on waker's CPU %": share(self.placement.get("this", 0), self.wakeups),
            "wakeup elsewhere %": share(self.placement.get("other", 0), self.wakeups),
            "wakeups onto a busy CPU %": share(self.contended, self.wakeups),
            "of those, preempting at once %": share(self.preempted, self.contended),
            "of the rest, wait p50 us": q(self.contended_wait_us, 0.5),
            "wakeup to run p50 us": q(self.wait_us, 0.5),
            "wakeup to run p90 us": q(self.wait_us, 0.9),
            "migrations at wakeup /s": per_s(self.migrations_wakeup),
            "other migrations /s": per_s(self.migrations_other),
            "slice p50 us": q(self.slices_us, 0.5),
            "switches/s": per_s(self.switches),
        }


def decisions(events: Mapping[str, list[dict[str, Any]]], comms: set[str], skip_s: float) -> Decisions:
    """Count the decisions of the tasks named ``comms`` in a parsed trace,
    from ``skip_s`` seconds after their first event."""
    rows: list[tuple[float, int, str, dict[str, Any]]] = []
    for ev, rs in events.items():
        for i, r in enumerate(rs):
            rows.append((float(r["Time"]), i, ev, r))
    # At one timestamp the kernel's order: a wakeup's migration, the
    # wakeup, then the switch it may cause (parse_ftrace groups by event).
    rows.sort(key=lambda x: (x[0], _ORDER.get(x[2], 9), x[1]))
    mine = [r for r in rows if _comm_of(r[2], r[3]) in comms]
    if not mine:
        return Decisions(0.0, 0, {}, 0, 0, [], [], 0, 0, [], 0)
    start = mine[0][0] + skip_s
    end = mine[-1][0]
    curr: dict[int, str] = {}  # CPU -> comm running
    last_cpu: dict[int, int] = {}  # pid -> CPU it last ran on
    since: dict[int, float] = {}  # pid -> when it was switched in
    pending: dict[int, tuple[float, int, bool]] = {}  # pid -> (woken at, target, busy target)
    d = Decisions(max(0.0, end - start), 0, {}, 0, 0, [], [], 0, 0, [], 0)
    for ts, _, ev, r in rows:
        counted = ts >= start
        if ev == "sched_switch":
            cpu = int(r["__cpu"])
            prev_comm, next_comm = str(r.get("prev_comm", ""))[:COMM_LEN], str(r.get("next_comm", ""))[:COMM_LEN]
            prev_pid, next_pid = int(r.get("prev_pid", 0)), int(r.get("next_pid", 0))
            if prev_comm in comms:
                if counted and str(r.get("prev_state", "")).startswith("R") and prev_pid in since:
                    d.slices_us.append((ts - since[prev_pid]) * 1e6)
                since.pop(prev_pid, None)
            curr[cpu] = next_comm
            if next_comm in comms:
                if counted:
                    d.switches += 1
                    cpus = d.ran_on.setdefault(next_comm, {})
                    cpus[cpu] = cpus.get(cpu, 0) + 1
                since[next_pid] = ts
                last_cpu[next_pid] = cpu
                w = pending.pop(next_pid, None)
                if w is not None and counted:
                    wait = (ts - w[0]) * 1e6
                    d.wait_us.append(wait)
                    if w[2]:
                        if wait <= PREEMPT_WINDOW_US:
                            d.preempted += 1
                        else:
                            d.contended_wait_us.append(wait)
        elif ev in ("sched_wakeup", "sched_wakeup_new"):
            comm = str(r.get("comm", ""))[:COMM_LEN]
            if comm not in comms:
                continue
            pid, target, waker_cpu = int(r.get("pid", 0)), int(r.get("target_cpu", -1)), int(r["__cpu"])
            busy = curr.get(target, "") in comms and curr.get(target) != comm
            pending[pid] = (ts, target, busy)
            if counted and ev == "sched_wakeup":
                d.wakeups += 1
                if busy:
                    d.contended += 1
                kind = "prev" if last_cpu.get(pid) == target else "this" if target == waker_cpu else "other"
                d.placement[kind] = d.placement.get(kind, 0) + 1
        elif ev == "sched_migrate_task" and counted and str(r.get("comm", ""))[:COMM_LEN] in comms:
            # A wakeup's migration comes just before the wakeup of the same
            # task (set_task_cpu in try_to_wake_up).
            if _next_is_wakeup(rows, ts, int(r.get("pid", 0))):
                d.migrations_wakeup += 1
            else:
                d.migrations_other += 1
    return d


def _comm_of(ev: str, r: Mapping[str, Any]) -> str:
    if ev == "sched_switch":
        p, n = str(r.get("prev_comm", ""))[:COMM_LEN], str(r.get("next_comm", ""))[:COMM_LEN]
        return n if not n.startswith("swapper") and n != "<idle>" else p
    return str(r.get("comm", r.get("__comm", "")))[:COMM_LEN]


def _next_is_wakeup(rows: Sequence[tuple[float, int, str, dict[str, Any]]], ts: float, pid: int) -> bool:
    import bisect

    i = bisect.bisect_left(rows, ts, key=lambda x: x[0])
    for t, _, ev, r in rows[i : i + 16]:
        if t - ts > 1e-4:
            break
        if ev in ("sched_wakeup", "sched_wakeup_new") and int(r.get("pid", -1)) == pid:
            return True
    return False


def diverge_rows(sim: Decisions, real: Decisions) -> list[tuple[str, float | None, float | None, float]]:
    """(decision, sim, real, relative difference), biggest difference first."""
    out = []
    sm, rm = sim.metrics(), real.metrics()
    for k in sm:
        a, b = sm[k], rm[k]
        rel = 0.0 if a is None or b is None else abs(a - b) / max(abs(a), abs(b), 1e-9)
        out.append((k, a, b, rel))
    out.sort(key=lambda x: -x[3])
    return out


def placement_rows(sim: Decisions, real: Decisions, points: float = 20.0) -> list[str]:
    """One line per task whose share of switch-ins on some CPU differs by
    more than ``points`` between the sides: where each ran."""

    def shares(c: Mapping[int, int]) -> dict[int, float]:
        n = sum(c.values())
        return {cpu: 100.0 * k / n for cpu, k in sorted(c.items())} if n else {}

    def text(s: Mapping[int, float]) -> str:
        return " ".join(f"CPU{cpu} {v:.0f}%" for cpu, v in s.items()) or "-"

    out = []
    for comm in sorted(set(sim.ran_on) | set(real.ran_on)):
        a, b = shares(sim.ran_on.get(comm, {})), shares(real.ran_on.get(comm, {}))
        if any(abs(a.get(c, 0.0) - b.get(c, 0.0)) > points for c in set(a) | set(b)):
            out.append(f"  {comm}: sim {text(a)}; real {text(b)}")
    return out


@dataclass
class Background:
    """One kind of task outside the scenario, as a trace shows it: the
    kernel's and the runner's own threads (``kworker/3:1`` counts as
    ``kworker``)."""

    name: str
    runs: int = 0
    run_us: list[float] = field(default_factory=list)
    #: Its runs that took a CPU from one of the scenario's tasks.
    over_scenario: int = 0
    #: The lowest (best) kernel prio it ran at (< 100: real-time).
    prio: int = 140
    cpus: set[int] = field(default_factory=set)


def kind_of(comm: str) -> str:
    """A thread's kind: its comm up to the kernel's per-CPU or per-worker
    suffix (``kworker/3:1H-kblockd`` and ``ksoftirqd/3`` become ``kworker``
    and ``ksoftirqd``)."""
    return comm.split("/", 1)[0] if "/" in comm else comm


def background(
    events: Mapping[str, list[dict[str, Any]]], comms: set[str], skip_s: float
) -> tuple[float, dict[str, Background], dict[int, int]]:
    """The runs of every task not named in ``comms`` after the warm-up,
    by kind, and how often each CPU went idle there: (seconds counted,
    kinds, CPU -> switches to idle)."""
    rows = sorted(
        ((float(r["Time"]), i, r) for i, r in enumerate(events.get("sched_switch", ()))), key=lambda x: (x[0], x[1])
    )
    mine = [t for t, _, r in rows if _comm_of("sched_switch", r) in comms]
    if not mine:
        return 0.0, {}, {}
    start, end = mine[0] + skip_s, mine[-1]
    kinds: dict[str, Background] = {}
    idle_entries: dict[int, int] = {}
    on: dict[int, tuple[str, float, bool]] = {}  # CPU -> (kind running, since, took it from the scenario)
    for ts, _, r in rows:
        cpu = int(r["__cpu"])
        prev_comm, next_comm = str(r.get("prev_comm", ""))[:COMM_LEN], str(r.get("next_comm", ""))[:COMM_LEN]
        running = on.pop(cpu, None)
        if running is not None and start <= ts <= end:
            kinds[running[0]].run_us.append((ts - running[1]) * 1e6)
        if not (start <= ts <= end):
            continue
        if next_comm.startswith("swapper") or next_comm == "<idle>" or int(r.get("next_pid", -1)) == 0:
            idle_entries[cpu] = idle_entries.get(cpu, 0) + 1
            continue
        if next_comm in comms:
            continue
        k = kinds.setdefault(kind_of(next_comm), Background(kind_of(next_comm)))
        k.runs += 1
        k.cpus.add(cpu)
        k.prio = min(k.prio, int(r.get("next_prio", 140)))
        over = prev_comm in comms and str(r.get("prev_state", "")).startswith("R")
        k.over_scenario += over
        on[cpu] = (k.name, ts, over)
    return max(0.0, end - start), kinds, idle_entries


def format_background(label: str, seconds: float, kinds: Mapping[str, Background], idle: Mapping[int, int]) -> str:
    """The background table of one side: per kind, runs per second (all
    CPUs), run length, the share of one CPU it takes, and how many of its
    runs took a CPU from a scenario task still runnable."""
    if seconds <= 0:
        return f"{label}: no trace of the scenario's tasks"
    table = [("thread kind", "prio", "CPUs", "runs/s", "run p50 us", "run mean us", "CPU %", "over a task %")]
    for k in sorted(kinds.values(), key=lambda k: -sum(k.run_us)):
        mean = sum(k.run_us) / len(k.run_us) if k.run_us else 0.0
        p50 = sorted(k.run_us)[len(k.run_us) // 2] if k.run_us else 0.0
        table.append((
            k.name, str(k.prio), str(len(k.cpus)), f"{k.runs / seconds:.1f}", f"{p50:.1f}", f"{mean:.1f}",
            f"{100 * sum(k.run_us) / 1e6 / seconds:.3f}", f"{100 * k.over_scenario / max(1, k.runs):.0f}",
        ))  # fmt: skip
    w = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    lines = [f"{label}, {seconds:.2f} s after the warm-up: threads outside the scenario"]
    lines += ["  " + "  ".join(c.rjust(w[i]) if i else c.ljust(w[i]) for i, c in enumerate(r)).rstrip() for r in table]
    per_cpu = " ".join(f"CPU{c} {n / seconds:.1f}" for c, n in sorted(idle.items())) or "none"
    lines.append(f"  switches to idle per second: {per_cpu}")
    return "\n".join(lines)


def format_rows(rows: Iterable[tuple[str, float | None, float | None, float]]) -> str:
    def f(x: float | None) -> str:
        return "-" if x is None else f"{x:.1f}"

    table = [("decision", "sim", "real", "differs by")]
    table += [(k, f(a), f(b), f"{100 * rel:.0f} %") for k, a, b, rel in rows]
    w = [max(len(r[i]) for r in table) for i in range(4)]
    return "\n".join("  ".join(c.rjust(w[i]) if i else c.ljust(w[i]) for i, c in enumerate(r)).rstrip() for r in table)


# ---------------------------------------------------------------- the two sides


def _real_trace(path: Path, overrides: Sequence[Override], out: Path) -> Mapping[str, Any]:
    """The scenario on this host with the runner, tracefs recording."""
    from schedlab import real

    if os.geteuid() != 0:
        raise HostError("SL300", "diverge: recording the kernel's tracepoints needs root; accepted: run it as root")
    if not (TRACEFS / "trace").exists():
        subprocess.run(["mount", "-t", "tracefs", "nodev", str(TRACEFS)], capture_output=True, check=False)
    if not (TRACEFS / "trace").exists():
        raise HostError(
            "SL300", f"diverge: no tracefs at {TRACEFS} and it cannot be mounted; accepted: a host with tracefs"
        )

    def w(rel: str, text: str) -> None:
        (TRACEFS / rel).write_text(text)

    try:
        w("tracing_on", "0")
        w("trace", "")
        w("buffer_size_kb", "65536")
        for e in EVENTS:
            w(f"events/sched/{e}/enable", "1")
        w("tracing_on", "1")
        doc = real.run_real(str(path), overrides=overrides)
        w("tracing_on", "0")
        out.write_text((TRACEFS / "trace").read_text())
    except OSError as e:
        raise HostError("SL300", f"diverge: tracefs: {e.strerror or e}") from None
    finally:
        for name in EVENTS:
            with contextlib.suppress(OSError):
                w(f"events/sched/{name}/enable", "0")
    return doc


def _guest_trace(path: Path, overrides: Sequence[Override], kernel: str, out: Path) -> dict[str, Any]:
    """The scenario in the QEMU guest of ``kernel`` with the runner (as
    ``validate`` runs it), tracefs recording ``EVENTS``; the trace is
    written to ``out`` and the runner's report returned."""
    from schedlab import qemu
    from schedlab.validation.runners import GUEST_TIMEOUT_S, static_runner

    text = read_text(path)
    trace, doc = qemu.trace_in_guest(
        text, str(path), static_runner(), kernel=kernel, overrides=overrides, events=EVENTS, timeout=GUEST_TIMEOUT_S
    )
    out.write_bytes(trace)
    return doc


def cmd_diverge(args: argparse.Namespace) -> int:
    path = resolve(args.scenario)
    text = read_text(path)
    user = [parse_set_arg(s) for s in args.set]
    keep = Path(args.keep) if args.keep else None
    with tempfile.TemporaryDirectory(prefix="schedlab-diverge-") as tmp:
        d = keep or Path(tmp)
        d.mkdir(parents=True, exist_ok=True)
        sim_txt, real_txt = d / "sim.txt", d / "real.txt"
        # The real side first: the simulator takes the runner's own costs
        # as that run measured them (runner_read_sets), as validate does.
        doc: Mapping[str, Any]
        if args.kernel:
            doc = _guest_trace(path, user, args.kernel, real_txt)
            sim_sets = _guest_sim_sets(args.kernel, doc, user)
            where = f"the {args.kernel} guest ({(doc.get('host') or {}).get('kernel_release', '?')}, QEMU)"
        else:
            sim_sets = _local_sim_sets(text, path, user)
            doc = _real_trace(path, user, real_txt)
            where = f"this kernel ({os.uname().release})"
        # Both end with the user's --set, which stays last.
        sim_sets = [*sim_sets[: len(sim_sets) - len(user)], *runner_read_sets(doc), *user]
        report = native.run(text, str(path), args.seed, sim_sets, False, trace=str(sim_txt))
        comms = {str(t.get("comm", ""))[:COMM_LEN] for t in report["tasks"]} - {""}
        skip = float(report["measure"]["start_ns"]) / 1e9
        sim_ev = parse_ftrace(sim_txt.read_text().splitlines())
        real_ev = parse_ftrace(real_txt.read_text(errors="replace").splitlines())
    sd, rd = decisions(sim_ev, comms, skip), decisions(real_ev, comms, skip)
    version = dict(sim_sets)["kernel.version"].strip('"')
    print(f"{path.name}: simulator {version} vs {where}; "
          f"{sd.seconds:.2f} s and {rd.seconds:.2f} s traced after the warm-up")  # fmt: skip
    print(format_rows(diverge_rows(sd, rd)))
    moved = placement_rows(sd, rd)
    if moved:
        print("where the tasks ran (switch-ins by CPU), where the sides differ by more than 20 points:")
        print("\n".join(moved))
    if args.background:
        for label, ev in (("simulator", sim_ev), ("real", real_ev)):
            print()
            print(format_background(label, *background(ev, comms, skip)))
    return 0


def _local_sim_sets(text: str, path: Path, user: Sequence[Override]) -> list[Override]:
    """The simulator's settings against this host: its release, the runner's
    start, its measured costs and settings (as ``validate --local``)."""
    from schedlab.calibrate import cost_overrides, run_local
    from schedlab.validation.runners import RUNNER_START, START_PHASE, host_series, host_sets

    costs = cost_overrides(_costs(run_local()))
    sim_sets: list[Override] = [
        ("kernel.version", toml_literal(host_series())),
        RUNNER_START,
        START_PHASE,
        *costs,
        *host_sets(),
        *user,
    ]
    summary = native.check(text, str(path), sim_sets)
    nr = int((summary.get("machine") or {}).get("nr_cpus") or 0)
    if nr > (os.cpu_count() or 1):
        raise UsageError(
            "SL001", f"diverge: {path}: {nr} CPUs but this host has {os.cpu_count()}; accepted: a scenario that fits"
        )
    return sim_sets


def _guest_sim_sets(kernel: str, doc: Mapping[str, Any], user: Sequence[Override]) -> list[Override]:
    """The simulator's settings against a QEMU guest (as ``validate``): the
    guest's release, the runner's start, the guest build's settings, and the
    costs measured in that guest when a kept calibration ships with schedlab."""
    from schedlab._paths import VALIDATION
    from schedlab.calibrate import check_calibration, cost_overrides
    from schedlab.validation.results import oracle_sets
    from schedlab.validation.runners import RUNNER_START, START_PHASE, kept_calibration, sim_version

    kept = VALIDATION / "real" / kernel
    costs: list[Override] = []
    if (kept / "calibration.json").is_file():
        costs = cost_overrides(check_calibration(kept_calibration(str(kept)), str(kept / "calibration.json")))
    return [
        ("kernel.version", toml_literal(sim_version(kernel, doc))),
        RUNNER_START,
        START_PHASE,
        *oracle_sets(kernel),
        *costs,
        *user,
    ]


def _costs(cal: Mapping[str, Any]) -> dict[str, int]:
    from schedlab.calibrate import check_calibration

    return check_calibration(cal, "schedlab-runner --calibrate")
