"""``schedlab import``: a captured trace as a scenario that replays it.

    >>> imp = import_trace("perf.data", kernel="6.18")
    >>> imp.text                    # the scenario (TOML)
    >>> imp.summary()               # what the import made of the trace

The reader (``read``) takes ftrace text, trace.dat, perf.data and ``perf
script`` text; the replay (``replay``) turns each task into a program of its
CPU bursts and blocks, with who woke whom; ``fidelity`` runs the replay and
compares it with the trace it came from (``--check``).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schedlab.errors import TraceError
from schedlab.overrides import toml_literal
from schedlab.traceimport.model import model_task
from schedlab.traceimport.read import Topology, Trace, gc_paused, read_trace
from schedlab.traceimport.replay import Replay, TaskReplay, _policy, build_replay

__all__ = ["Imported", "cmd_import", "import_trace"]

#: The versions a replay may name (the simulator refuses others with its own error).
DEFAULT_KERNEL = "6.18"


@dataclass
class Imported:
    """A trace and the scenario that replays it."""

    replay: Replay
    text: str

    @property
    def trace(self) -> Trace:
        return self.replay.trace

    def summary(self) -> str:
        r = self.replay
        span = (r.t_end - r.t0) / 1e9
        cpu = sum(t.cpu_ns for t in r.tasks) / 1e9
        ops = sum(len(t.ops) for t in r.tasks)
        how = ", ".join(f"{k} {v}" for k, v in sorted(r.wakeups.items(), key=lambda kv: -kv[1]))
        lines = [
            f"{r.trace.source}: {r.trace.kind}, {len(r.trace.events)} events on {r.trace.nr_cpus} CPUs "
            f"over {span:.3f} s",
            f"  {len(r.tasks)} tasks replayed ({sum(t.kthread for t in r.tasks)} kernel threads), "
            f"{cpu:.3f} CPU-s, {ops} ops; blocks ended by: {how or 'none'} (wakers from {r.wake_event})",
        ]
        lines += [f"  note: {n}" for n in r.notes]
        return "\n".join(lines)


def _dur(ns: int) -> str:
    if ns % 1_000_000 == 0:
        return f"{ns // 1_000_000}ms"
    if ns % 1000 == 0:
        return f"{ns // 1000}us"
    return f"{ns}ns"


def _ops_text(ops: list[tuple[str, Any]]) -> str:
    """A program's ops as TOML inline tables, one a line (a million of them:
    the durations and names written inline, not through a call each)."""
    out: list[str] = []
    app = out.append
    names: dict[str, str] = {}  # a name's TOML literal, made once
    for op, arg in ops:
        if op == "run" or op == "sleep":
            ns = int(arg)
            if ns % 1000:
                app(f'{{ {op} = "{ns}ns" }}')
            elif ns % 1_000_000:
                app(f'{{ {op} = "{ns // 1000}us" }}')
            else:
                app(f'{{ {op} = "{ns // 1_000_000}ms" }}')
        elif op in ("wait", "signal", "fork"):
            lit = names.get(arg)
            if lit is None:
                lit = names[arg] = toml_literal(arg)
            app(f"{{ {op} = {lit} }}")
        else:
            app(f"{{ {op} = true }}")
    return ",\n  ".join(out)


def _task_toml(t: TaskReplay, mode: str) -> list[str]:
    policy, nice, rt_priority = _policy(t)
    lines = [
        "",
        "[[task]]",
        f"name = {toml_literal(t.uid)}",
        f"# {t.comm}, pid {t.pid}: {t.cpu_ns / 1e6:.3f} ms of CPU",
    ]
    forked = t.forked
    if forked:
        lines.append("count = 0  # started by its parent's fork")
    if policy != "SCHED_NORMAL":
        lines.append(f'policy = "{policy}"')
    if rt_priority:
        lines.append(f"rt_priority = {rt_priority}")
    if nice:
        lines.append(f"nice = {nice}")
    if t.cpus is not None:
        lines.append(f"cpus = {toml_literal(t.cpus)}")
    if t.kthread:
        lines.append("kthread = true")
    if t.start_ns and not forked:
        lines.append(f'start = "{_dur(t.start_ns)}"')
    if mode == "model":
        m = model_task(t)
        lines += [f"# {a}" for a in m.about]
        lines.append("program = [\n  " + ",\n  ".join(m.ops) + ",\n]")
    else:
        lines.append(f"program = [\n  {_ops_text(t.ops)},\n]")
    return lines


def scenario_toml(
    replay: Replay,
    *,
    kernel: str,
    machine: str | None,
    name: str,
    preempt: str | None = None,
    cpuidle: str | None = None,
    mode: str = "exact",
) -> str:
    """The replay as scenario text. ``preempt`` and ``cpuidle``: the
    recording machine's preemption model and cpuidle driver when known
    (``--host``), else a distribution's build of ``kernel``."""
    r = replay
    span = max(1000, r.t_end - r.t0)
    lines = [
        f"# schedlab import of {r.trace.source} ({r.trace.kind}): {mode} replay, {len(r.tasks)} tasks.",
        *(f"# recorded on: {k} {v}" for k, v in sorted(r.trace.meta.items())),
        *(
            [
                "# Each task's program is its CPU bursts and blocks as the trace shows them; a block",
                "# another replayed task ended is a wait on the waker's signal (docs/import.md).",
            ]
            if mode == "exact"
            else [
                "# Each task's program is a loop of bursts and blocks drawn from distributions fitted",
                "# to the trace's, with its rates of waits and signals (docs/import.md, model mode).",
            ]
        ),
        f"name = {toml_literal(name)}",
        "",
        "[machine]",
    ]
    layout = None if machine else machine_layout(r.trace.topology, r.trace.nr_cpus)
    if machine:
        lines.append(f"preset = {toml_literal(machine)}")
    elif layout:
        lines += ["# the recording machine's topology (/sys, as `schedlab capture` read it)", *layout]
    else:
        lines += ["sockets = 1", f"cores_per_socket = {r.trace.nr_cpus}  # the trace's CPUs; --machine names a preset"]
    if cpuidle:
        lines.append(f"cpuidle = {toml_literal(cpuidle)}  # the recording machine's driver")
    how = "the recording machine's boot choice" if preempt else "a distribution build (Debian's)"
    preempt = preempt or ("lazy" if _series(kernel) >= (6, 13) else "voluntary")
    lines += [
        "",
        "[kernel]",
        f"version = {toml_literal(kernel)}",
        f"preempt = {toml_literal(preempt)}  # {how}, PREEMPT_DYNAMIC",
        "preempt_dynamic = true",
    ]
    if any(t.kthread for t in r.tasks):
        lines.append("vmstat_kworkers = false  # the trace's own kworkers are replayed")
    lines += [
        "",
        # Deviation: the modelled kernel's switch, fork and exit paths and its
        # timer slack cost nothing in a replay; the recorded bursts and sleeps
        # already hold what the real ones cost.
        "[kernel.costs]",
        "# The recorded bursts already hold what the kernel spent on the task's",
        "# behalf (the context switch, fork and exit paths) and a recorded sleep its",
        "# timer slack: the replay does not charge them twice.",
        'context_switch = "0ns"',
        'fork = "0ns"',
        'exit = "0ns"',
        'timer_slack = "0ns"',
    ]
    lines += ["", "[measure]", 'warmup = "0ms"', f'duration = "{_dur(span)}"']
    for t in r.tasks:
        lines += _task_toml(t, mode)
    return "\n".join(lines) + "\n"


def machine_layout(topo: Topology, nr_cpus: int) -> list[str] | None:
    """``[machine]`` lines for the topology a capture recorded: sockets,
    cores per socket, threads per core, NUMA nodes (with their distances),
    last-level caches per socket. None when there is none, or when it is
    not the regular layout schedlab builds (every package alike, every core
    with as many threads, the nodes splitting the packages evenly).

    Deviation: CPU numbers are kept as the trace has them; schedlab numbers
    its own CPUs socket by socket, core by core, so a machine that numbers
    SMT siblings apart (cpu N and N + cores) pins a replayed task to the
    same number, not the same place."""
    cpus = topo.cpus
    if len(cpus) != nr_cpus or not cpus:
        return None
    packages: dict[str, set[tuple[str, str]]] = {}
    threads: dict[tuple[str, str], int] = {}
    llcs: dict[str, set[str]] = {}
    for c in cpus.values():
        core = (c.get("package", "0"), c.get("core", "0"))
        packages.setdefault(core[0], set()).add(core)
        threads[core] = threads.get(core, 0) + 1
        llcs.setdefault(core[0], set()).add(c.get("llc", ""))
    cores = {len(v) for v in packages.values()}
    tpc = set(threads.values())
    nllc = {len(v) for v in llcs.values()}
    nodes = len({c.get("node", "0") for c in cpus.values()})
    sockets = len(packages)
    if len(cores) != 1 or len(tpc) != 1 or len(nllc) != 1 or (nodes % sockets and sockets % nodes):
        return None
    out = [f"sockets = {sockets}", f"cores_per_socket = {cores.pop()}"]
    t = tpc.pop()
    if t > 1:
        out.append(f"threads_per_core = {t}")
    if nodes > 1:
        out.append(f"nodes = {nodes}")
        rows = [topo.distance.get(n) for n in range(nodes)]
        if all(r is not None and len(r) == nodes for r in rows):
            out.append(f"distance = {rows}")
    n_llc = nllc.pop()
    if n_llc > 1:
        out.append(f"llcs_per_socket = {n_llc}")
    return out


def _series(version: str) -> tuple[int, int]:
    try:
        parts = [int(x) for x in version.split(".")[:2]]
    except ValueError:
        return (0, 0)
    return (parts[0], parts[1] if len(parts) > 1 else 0)


def import_trace(
    path: str | Path,
    *,
    kernel: str | None = None,
    machine: str | None = None,
    kthreads: bool = True,
    name: str | None = None,
    host: bool = False,
    mode: str = "exact",
) -> Imported:
    """Read ``path`` and build its replay (module docstring): ``mode``
    ``"exact"`` (the recorded sequence) or ``"model"`` (fitted loops, the
    ``model`` module). ``kernel``:
    the replay's version (default: the release a ``schedlab capture`` trace
    names, else DEFAULT_KERNEL). ``host``:
    the trace was recorded on this machine, whose preemption model and
    cpuidle driver the scenario takes (as ``validate --local`` does).
    Raises ``TraceError`` (SL130) for a trace it cannot read or replay."""
    trace = read_trace(path)
    with gc_paused():
        replay = build_replay(trace, kthreads=kthreads)
    if not replay.tasks:
        raise TraceError("SL130", f"{trace.source}: no task to replay (only the idle task and the stopper ran)")
    # A `schedlab capture` trace names its machine; --host takes this one's.
    preempt, cpuidle = trace.meta.get("preempt"), trace.meta.get("cpuidle")
    if host:
        from schedlab.validation.runners import host_cpuidle, host_preempt

        preempt, cpuidle = host_preempt(), host_cpuidle()
    if kernel is None:
        m = re.match(r"(\d+\.\d+(?:\.\d+)?)", trace.meta.get("release", ""))
        kernel = m[1] if m else DEFAULT_KERNEL
    text = scenario_toml(
        replay,
        kernel=kernel,
        machine=machine,
        name=name or f"import-{Path(path).stem}",
        preempt=preempt,
        cpuidle=cpuidle,
        mode=mode,
    )
    return Imported(replay, text)


def cmd_import(args: argparse.Namespace) -> int:
    from schedlab.args import check_output_path
    from schedlab.outputs import write_text

    if args.out:
        check_output_path(args.out, "--out")
    imp = import_trace(
        args.trace,
        kernel=args.kernel,
        machine=args.machine,
        kthreads=not args.no_kthreads,
        host=args.host,
        mode=args.mode,
    )
    if args.out:
        write_text(args.out, imp.text, flag="--out")
    if not args.quiet:
        print(imp.summary(), file=sys.stderr if not args.out else sys.stdout)
    if not args.out:
        sys.stdout.write(imp.text)
    if args.check:
        from schedlab.traceimport.fidelity import check_replay

        return check_replay(imp, seed=args.seed, json_path=args.json, quiet=args.quiet)
    return 0


def cmd_capture(args: argparse.Namespace) -> int:
    from schedlab.args import check_output_path
    from schedlab.traceimport.capture import capture

    check_output_path(args.out, "--out")
    command = list(args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd)
    return capture(args.out, command, duration_s=args.duration, buffer_kb=args.buffer_kb)
