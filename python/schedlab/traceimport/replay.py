"""A trace's tasks as a scenario that replays them (``exact`` mode).

Each task of the trace becomes a ``[[task]]`` of one whose program is what
the task asked of the scheduler, not what the scheduler gave it: the CPU
time it consumed between blocking (``run``, summed across preemptions) and
each block, ended the way the trace shows it was ended:

* woken by another replayed task: ``wait`` on the wakee's event, and the
  waker ``signal``s it at the same point of its own CPU time (the waker was
  running when it called try_to_wake_up(): sched_waking's context);
* woken from an interrupt (an irq, softirq or hrtimer callback bracketing the
  wakeup on that CPU, the ftrace flags column's ``h``/``s``, the idle task
  as context) or by its own timer (an hrtimer_wakeup armed in the burst
  before it blocked, expired): ``sleep`` for as long as it slept;
* forks, execs and exits as ``fork`` (the child a group of count 0 the
  parent starts), ``exec`` and ``exit``.

Deviation: the time a CPU spent in interrupt handlers stays in the burst of
the task they interrupted (it is not replayed as the interrupts' own work;
0.17 to 0.66 % of the CPUs in the captures measured, docs/import.md).

A task that existed when the trace began starts at its beginning; blocked
then, its first op is the block. At the trace's end every task still alive
blocks for good, so the replay's demand is the trace's.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from schedlab.errors import TraceError
from schedlab.traceimport.read import Event, Trace

__all__ = ["Replay", "TaskReplay", "build_replay"]

#: Per-CPU kernel threads are pinned where their name says (kworker/3:1, ksoftirqd/3, rcuc/3, cpuhp/3).
_PERCPU = re.compile(r"^(?:kworker/(?P<a>\d+):\S+|(?:ksoftirqd|rcuc|cpuhp|watchdog|irq_work|idle_inject)/(?P<b>\d+))$")
#: Kernel threads by name (a trace does not say which tasks are kthreads).
_KTHREAD = re.compile(
    r"^(?:kworker/|ksoftirqd/|rcu_|rcuc/|rcuog/|rcuop/|cpuhp/|kswapd|kcompactd|khugepaged|kthreadd$|"
    r"watchdog|jbd2/|kblockd|writeback|irq/|khungtaskd|oom_reaper|ksmd|kauditd|kdevtmpfs|xfs|"
    r"scsi_|nvme|card\d|kvm|vhost-|psimon|irq_work/|idle_inject/|pr/|kintegrityd|ext4-)"
)
#: Never replayed: the idle task and the stopper (the model has its own).
_EXCLUDED = re.compile(r"^(?:swapper(?:/\d+)?|<idle>|migration/\d+)$")

#: The event a replayed task that is still alive at the trace's end waits on for good.
END_EVENT = "trace-end"


@dataclass
class TaskReplay:
    """One task of the trace and the program that replays it."""

    pid: int
    comm: str
    uid: str  # the group name: comm and pid, unique in the scenario
    prios: Counter[int] = field(default_factory=Counter)
    ops: list[tuple[str, Any]] = field(default_factory=list)
    start_ns: int = 0  # start delay when no fork of the trace starts it
    forked: bool = False  # a fork op of its parent starts it
    kthread: bool = False
    cpus: str | None = None  # its affinity when not every CPU (a per-CPU kthread's, or as captured)
    state: str = "new"  # new, running, runnable, blocked, dead
    ran: int = 0  # CPU time since the last op boundary
    on_since: int = 0
    block_start: int = 0
    armed: tuple[str, int, int] | None = None  # hrtimer_wakeup armed in this burst: (hrtimer, soft, hard)
    block_timer: tuple[str, int, int] | None = None
    cpu_ns: int = 0  # the trace's CPU time, for the import's summary
    attrs: dict[str, str] | None = None  # policy, nice, rt_priority, cpus from `schedlab capture`
    exiting: bool = False  # past sched_process_exit

    def cut(self, ts: int) -> None:
        """Close the current burst at ``ts`` (when running) and emit the CPU
        time since the last op boundary as a ``run``."""
        if self.state == "running":
            self.ran += ts - self.on_since
            self.cpu_ns += ts - self.on_since
            self.on_since = ts
        if self.ran > 0:
            self.ops.append(("run", self.ran))
        self.ran = 0


@dataclass
class Replay:
    """What the import made of a trace."""

    trace: Trace
    t0: int
    t_end: int
    tasks: list[TaskReplay]
    wake_event: str  # the event that names wakers: sched_waking, else sched_wakeup
    wakeups: Counter[str] = field(default_factory=Counter)  # how each block ended: signal, irq, timer, idle, ...
    notes: list[str] = field(default_factory=list)


def _policy(t: TaskReplay) -> tuple[str, int, int]:
    """(policy, nice, rt_priority): what `schedlab capture` read from /proc,
    else from the prio the trace printed most (a fair task's nice, an RT
    task's priority as SCHED_FIFO). Deviation: without a capture's
    attributes a SCHED_BATCH or SCHED_IDLE task replays as SCHED_NORMAL and
    SCHED_RR as SCHED_FIFO (sched_switch prints only the prio)."""
    a = t.attrs
    if a and a.get("policy") in ("SCHED_NORMAL", "SCHED_BATCH", "SCHED_IDLE", "SCHED_FIFO", "SCHED_RR"):
        try:
            return a["policy"], int(a.get("nice", "0")), int(a.get("rt_priority", "0"))
        except ValueError:
            pass
    prio = t.prios.most_common(1)[0][0] if t.prios else 120
    if prio < 0:
        raise TraceError(
            "SL130",
            f"task {t.comm}-{t.pid} has prio {prio} (SCHED_DEADLINE): its runtime, deadline and period are not "
            "in a trace; accepted: traces whose tasks are fair or RT",
        )
    if prio < 100:
        return "SCHED_FIFO", 0, 99 - prio
    return "SCHED_NORMAL", max(-20, min(19, prio - 120)), 0


class _Builder:
    def __init__(self, trace: Trace, kthreads: bool) -> None:
        self.trace = trace
        self.kthreads = kthreads
        self.t0 = trace.events[0].ts
        self.by_pid: dict[int, TaskReplay] = {}
        self.order: list[TaskReplay] = []
        self.uids: Counter[str] = Counter()
        self.depth = [0] * trace.nr_cpus  # interrupt brackets open per CPU
        self.timers: dict[str, TaskReplay] = {}
        self.wakeups: Counter[str] = Counter()
        self.wake_event = "sched_waking" if "sched_waking" in trace.names else "sched_wakeup"

    def task(self, pid: int, comm: str) -> TaskReplay | None:
        """The replayed task ``pid`` (created on first sight); None for tasks never replayed."""
        t = self.by_pid.get(pid)
        if t is not None:
            return t
        if pid <= 0 or _EXCLUDED.match(comm):
            return None
        kthread = bool(_KTHREAD.match(comm))
        if kthread and not self.kthreads:
            return None
        base = re.sub(r"[^A-Za-z0-9_.+-]", "_", comm) or "task"
        self.uids[f"{base}.{pid}"] += 1
        n = self.uids[f"{base}.{pid}"]
        uid = f"{base}.{pid}" if n == 1 else f"{base}.{pid}.{n}"
        t = TaskReplay(pid=pid, comm=comm, uid=uid, kthread=kthread, attrs=self.trace.task_attrs.get(pid))
        m = _PERCPU.match(comm)
        if m is not None:
            cpu = int(m["a"] or m["b"])
            t.cpus = str(cpu) if cpu < self.trace.nr_cpus else None
        if t.attrs and t.attrs.get("cpus") and t.attrs["cpus"] != f"0-{self.trace.nr_cpus - 1}":
            t.cpus = t.attrs["cpus"]
        self.by_pid[pid] = t
        self.order.append(t)
        return t

    # A task first seen running or runnable was so at the trace's start.
    def ensure_started(self, t: TaskReplay, ts: int, state: str) -> None:
        if t.state != "new" or t.forked:
            return
        t.state = state
        if state == "running":
            t.on_since = self.t0
        elif state == "blocked":
            t.block_start = self.t0

    def in_interrupt(self, e: Event) -> bool:
        if e.flags is not None and len(e.flags) >= 4:
            # The ftrace flags column (irqs-off, need-resched, hardirq/softirq,
            # preempt depth) says it: h, H or s.
            return e.flags[2] in "hHs"
        # perf has no such column: the brackets around the handlers. They do
        # not always pair (this machine's 6.18 traces no hrtimer_expire_exit
        # for some ticks), so a context switch closes any left open.
        return self.depth[e.cpu] > 0

    def on_switch(self, e: Event) -> None:
        f = e.f
        prev = self.task(f["prev_pid"], f["prev_comm"])
        if prev is not None:
            if f["prev_prio"] != -2:  # -2: a switch _repair put in
                prev.prios[f["prev_prio"]] += 1
                prev.comm = f["prev_comm"]  # the latest (an exec renames it)
            self.ensure_started(prev, e.ts, "running")
            state = f["prev_state"]
            if prev.state == "dead":
                pass
            elif state[:1] in ("X", "Z") or (prev.exiting and not state.startswith("R")):
                # Its last switch: do_exit's CPU time, after sched_process_exit, is its own.
                prev.cut(e.ts)
                prev.ops.append(("exit", True))
                prev.state = "dead"
            elif state.startswith("R"):
                if prev.state == "running":
                    prev.ran += e.ts - prev.on_since
                    prev.cpu_ns += e.ts - prev.on_since
                prev.state = "runnable"
            else:
                prev.cut(e.ts)
                prev.state, prev.block_start = "blocked", e.ts
                prev.block_timer, prev.armed = prev.armed, None
        nxt = self.task(f["next_pid"], f["next_comm"])
        if nxt is not None:
            if f["next_prio"] != -2:
                nxt.prios[f["next_prio"]] += 1
            self.ensure_started(nxt, e.ts, "runnable")
            if nxt.state == "blocked":
                # Switched in with no wakeup recorded: woken by something the trace lacks.
                self.wakeups["unrecorded"] += 1
                nxt.ops.append(("sleep", e.ts - nxt.block_start))
            if nxt.state == "new":  # forked, no wakeup_new seen
                nxt.state = "runnable"
            nxt.state, nxt.on_since = "running", e.ts
            nxt.armed = None

    def on_wake(self, e: Event) -> None:
        t = self.task(e.f["pid"], e.f["comm"])
        if t is None:
            return
        t.prios[e.f["prio"]] += 1
        self.ensure_started(t, e.ts, "blocked")
        if t.state != "blocked":
            return  # woken before it slept: no block
        slept = e.ts - t.block_start
        waker = self.task(e.pid, e.comm) if e.pid > 0 else None
        if waker is not None and waker is not t:
            self.ensure_started(waker, e.ts, "running")  # first seen waking another: running since the start
        how = "signal"
        if self.in_interrupt(e):
            how = "irq"
        elif e.pid <= 0:
            how = "idle"
        elif t.block_timer is not None and e.ts >= t.block_timer[1] - 1000 and waker is not t:
            how = "timer"
        elif waker is None or waker is t or waker.state != "running":
            how = "other"  # a task the replay leaves out, or one the trace does not show running
        if how == "signal" and waker is not None:
            waker.cut(e.ts)
            waker.ops.append(("signal", t.uid))
            t.ops.append(("wait", t.uid))
        else:
            t.ops.append(("sleep", slept))
        self.wakeups[how] += 1
        t.state, t.block_timer = "runnable", None

    def on_fork(self, e: Event) -> None:
        parent = self.task(e.f["pid"], e.f["comm"])
        cpid = e.f["child_pid"]
        old = self.by_pid.pop(cpid, None)
        if old is not None and old.state not in ("dead", "new"):
            old.cut(e.ts)
            old.state = "dead"
        child = self.task(cpid, e.f["child_comm"])
        if child is None:
            return
        if parent is not None:
            self.ensure_started(parent, e.ts, "running")
            parent.cut(e.ts)
            parent.ops.append(("fork", child.uid))
            child.forked = True
        else:
            child.start_ns = e.ts - self.t0
        child.state = "runnable"

    def on_wakeup_new(self, e: Event) -> None:
        t = self.task(e.f["pid"], e.f["comm"])
        if t is None:
            return
        t.prios[e.f["prio"]] += 1
        if t.state == "new" and not t.forked:
            # No fork in the trace (schedlab's own traces, or the fork before it): start it here.
            t.start_ns = e.ts - self.t0
            t.state = "runnable"

    def on_exec(self, e: Event) -> None:
        t = self.by_pid.get(e.f["pid"])
        if t is not None and t.state == "running":
            t.cut(e.ts)
            t.ops.append(("exec", True))

    def on_exit(self, e: Event) -> None:
        t = self.by_pid.get(e.f["pid"])
        if t is None or t.state == "dead":
            return
        self.ensure_started(t, e.ts, "running")
        t.exiting = True  # do_exit() goes on until its last switch (prev_state X or Z)

    def on_hrtimer(self, e: Event) -> None:
        name = e.name
        h = e.f.get("hrtimer", "")
        if name == "hrtimer_expire_entry":
            self.depth[e.cpu] += 1
        elif name == "hrtimer_expire_exit":
            self.depth[e.cpu] = max(0, self.depth[e.cpu] - 1)
        elif name == "hrtimer_start" and e.f.get("function") == "hrtimer_wakeup":
            t = self.by_pid.get(e.pid)
            if t is not None:
                soft = e.f["softexpires"] or e.f["expires"]
                t.armed = (h, soft, e.f["expires"])
                self.timers[h] = t
        elif name == "hrtimer_cancel":
            t = self.timers.pop(h, None)
            if t is not None:
                if t.armed is not None and t.armed[0] == h:
                    t.armed = None
                if t.block_timer is not None and t.block_timer[0] == h:
                    t.block_timer = None

    def run(self) -> None:
        wake = self.wake_event
        for e in self.trace.events:
            n = e.name
            if n == "sched_switch":
                self.depth[e.cpu] = 0  # no interrupt spans a context switch
                self.on_switch(e)
            elif n == wake:
                self.on_wake(e)
            elif n == "sched_wakeup_new":
                self.on_wakeup_new(e)
            elif n == "sched_process_fork":
                self.on_fork(e)
            elif n == "sched_process_exec":
                self.on_exec(e)
            elif n == "sched_process_exit":
                self.on_exit(e)
            elif n.startswith("hrtimer_"):
                self.on_hrtimer(e)
            elif n.endswith("_entry"):
                self.depth[e.cpu] += 1
            elif n.endswith("_exit"):
                self.depth[e.cpu] = max(0, self.depth[e.cpu] - 1)
        end = self.trace.events[-1].ts
        for t in self.order:
            if t.state == "dead":
                continue
            if t.state in ("running", "runnable"):
                t.cut(end)
            t.ops.append(("wait", END_EVENT))


def build_replay(trace: Trace, *, kthreads: bool = True) -> Replay:
    """The exact replay of ``trace``. Raises ``TraceError`` (SL130) when the
    trace lacks sched_switch or any wakeup event: without them no task's
    bursts or blocks can be told."""
    missing = []
    if "sched_switch" not in trace.names:
        missing.append("sched:sched_switch")
    if not ({"sched_waking", "sched_wakeup"} & trace.names):
        missing.append("sched:sched_waking (or sched:sched_wakeup)")
    if missing:
        raise TraceError(
            "SL130",
            f"{trace.source}: the trace lacks {' and '.join(missing)}; record them, e.g. "
            "`perf sched record -- CMD`, `trace-cmd record -e sched -e irq -e timer CMD`, or `schedlab capture`",
        )
    b = _Builder(trace, kthreads)
    b.run()
    tasks = [t for t in b.order if t.ops and any(op != "wait" or arg != END_EVENT for op, arg in t.ops)]
    replay = Replay(trace, b.t0, trace.events[-1].ts, tasks, b.wake_event, b.wakeups)
    flagged = any(e.flags is not None for e in trace.events)  # an ftrace flags column, or Perfetto's common_flags
    if not ({"irq_handler_entry", "softirq_entry", "hrtimer_expire_entry"} & trace.names) and not flagged:
        replay.notes.append(
            "no interrupt brackets (irq, softirq, hrtimer_expire events) in the trace: a wakeup from an "
            "interrupt on a busy CPU is taken for a wakeup by the task it interrupted (record "
            "-e irq -e timer, as `schedlab capture` does)"
        )
    if trace.lost_switches:
        replay.notes.append(
            f"{trace.lost_switches} context switches missing from the trace (an event in another task's "
            f"context on a CPU whose task was never switched out), put in at that event: "
            f"{', '.join(sorted(trace.lost_tasks)[:5])}{' ...' if len(trace.lost_tasks) > 5 else ''}"
        )
    if b.wakeups["unrecorded"]:
        replay.notes.append(f"{b.wakeups['unrecorded']} blocks ended with no wakeup in the trace: replayed as sleeps")
    return replay
