"""Perfetto protobuf traces (``perfetto`` on Linux or Android, ``schedlab run
--perfetto``) as the reader's events.

A trace is a stream of length-delimited ``TracePacket``s (``Trace.packet``,
field 1); each is decoded with the Perfetto project's own protos (the
``perfetto`` wheel's ``perfetto_trace_pb2``, the ``perfetto`` extra). What
the import reads from them:

* ``ftrace_events`` bundles, one CPU each: the sched, irq, softirq and
  hrtimer ``FtraceEvent``s, with the context task's pid and, where recorded,
  its ``common_flags`` (the hardirq and softirq bits become the ftrace flags
  column's ``h``/``s``);
* a bundle's ``compact_sched`` (what ``perfetto`` records by default): its
  switches and wakings in columns, each timestamp a delta on the one before
  (the first absolute), comms interned; a compact switch has no prev_pid
  and a compact waking no context pid: both are the task the CPU's last
  switch switched in (as Perfetto's trace processor reads them);
* ``process_tree`` and ``task_newtask``/``task_rename`` for the comms of
  tasks an event names only by pid, and ``system_info`` for the release.

``prev_state`` is the kernel's bitmask: 0 runnable, ``TASK_REPORT_MAX``
(0x80 and above with no state bit) preempted, 0x10 dead and 0x20 zombie
(EXIT_DEAD, EXIT_ZOMBIE), any other bit a sleep.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from schedlab.errors import TraceError
from schedlab.traceimport.event import KEPT, Event

__all__ = ["read_perfetto"]

_WAKES = ("sched_waking", "sched_wakeup", "sched_wakeup_new")


def _state(v: int) -> str:
    if v & 0x10:
        return "X"
    if v & 0x20:
        return "Z"
    if v & 0x7F == 0:
        return "R+" if v else "R"
    return "D" if v & 0x02 else "S"


def _flags(c: int) -> str:
    hard, soft = c & 0x08, c & 0x10
    ctx = "H" if hard and soft else "h" if hard else "s" if soft else "."
    return f"{'d' if c & 0x01 else '.'}{'N' if c & 0x04 else '.'}{ctx}."


def _packets(data: bytes, source: str) -> list[tuple[int, int]]:
    """The (start, end) of each Trace.packet (field 1, length-delimited)."""
    out = []
    i, n = 0, len(data)
    while i < n:
        key = data[i]
        i += 1
        if key != 0x0A:
            raise TraceError("SL130", f"{source}: byte {i - 1}: not a Perfetto Trace.packet (key {key:#x})")
        length, shift = 0, 0
        while True:
            if i >= n:
                raise TraceError("SL130", f"{source}: the trace ends inside a packet's length (truncated?)")
            b = data[i]
            i += 1
            length |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                break
        if i + length > n:
            raise TraceError("SL130", f"{source}: the last packet runs past the file's end (truncated?)")
        out.append((i, i + length))
        i += length
    return out


def _fields(name: str, ev: Any) -> dict[str, Any]:
    if name == "sched_switch":
        return {
            "prev_comm": ev.prev_comm, "prev_pid": ev.prev_pid, "prev_prio": ev.prev_prio,
            "prev_state": _state(ev.prev_state), "next_comm": ev.next_comm, "next_pid": ev.next_pid,
            "next_prio": ev.next_prio,
        }  # fmt: skip
    if name in _WAKES:
        return {"comm": ev.comm, "pid": ev.pid, "prio": ev.prio, "target_cpu": ev.target_cpu}
    if name == "sched_process_fork":
        return {"comm": ev.parent_comm, "pid": ev.parent_pid, "child_comm": ev.child_comm, "child_pid": ev.child_pid}
    if name == "sched_process_exec":
        return {"filename": ev.filename, "pid": ev.pid}
    if name == "sched_process_exit":
        return {"comm": ev.comm, "pid": ev.pid, "prio": ev.prio}
    if name == "sched_migrate_task":
        return {"comm": ev.comm, "pid": ev.pid, "prio": ev.prio, "orig_cpu": ev.orig_cpu, "dest_cpu": ev.dest_cpu}
    if name.startswith("hrtimer_"):
        # The callback is a kernel address here (symbolised apart): never
        # "hrtimer_wakeup", so a task's own timer is told by its expiry bracket.
        return {
            "hrtimer": f"{getattr(ev, 'hrtimer', 0):x}",
            "function": "",
            "expires": getattr(ev, "expires", 0),
            "softexpires": getattr(ev, "softexpires", 0),
        }
    return {}


def read_perfetto(path: Path, source: str) -> tuple[list[Event], set[str], dict[str, str], int]:
    """The events of the Perfetto trace at ``path`` in time order, the event
    names present, what the trace says of its machine (``release``), and how
    many packets were not read (other data sources)."""
    try:
        from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
    except ImportError:
        raise TraceError(
            "SL130",
            f"{source}: a Perfetto trace is read with the Perfetto project's protos; install them with "
            "`pip install 'schedlab[perfetto]'` (the `perfetto` package), or convert the trace to text "
            "(`trace_processor --query` or `traceconv systrace`)",
        ) from None
    from google.protobuf.message import DecodeError

    data = path.read_bytes()
    events: list[Event] = []
    comms: dict[int, str] = {}
    meta: dict[str, str] = {}
    unknown_ctx: list[int] = []  # indices of events whose context task is the CPU's current one
    skipped = 0
    new = tuple.__new__
    for start, end in _packets(data, source):
        pkt = pb.TracePacket()
        try:
            pkt.ParseFromString(data[start:end])
        except DecodeError as e:
            raise TraceError(
                "SL130", f"{source}: byte {start}: a packet the Perfetto protos cannot decode: {e}"
            ) from None
        if pkt.HasField("system_info") and pkt.system_info.utsname.release:
            meta["release"] = pkt.system_info.utsname.release
        if pkt.HasField("process_tree"):
            for p in pkt.process_tree.processes:
                if p.cmdline:
                    comms.setdefault(p.pid, Path(p.cmdline[0]).name[:15])
            for t in pkt.process_tree.threads:
                if t.name:
                    comms[t.tid] = t.name
        if not pkt.HasField("ftrace_events"):
            skipped += not (pkt.HasField("system_info") or pkt.HasField("process_tree"))
            continue
        bundle = pkt.ftrace_events
        cpu = bundle.cpu
        for ev in bundle.event:
            kind = ev.WhichOneof("event")
            if kind == "task_newtask":
                comms[ev.task_newtask.pid] = ev.task_newtask.comm
                continue
            if kind == "task_rename":
                comms[ev.task_rename.pid] = ev.task_rename.newcomm
                continue
            if kind not in KEPT:
                skipped += 1
                continue
            f = _fields(kind, getattr(ev, kind))
            if kind == "sched_switch":
                comms[f["prev_pid"]], comms[f["next_pid"]] = f["prev_comm"], f["next_comm"]
            flags = _flags(ev.common_flags) if ev.HasField("common_flags") else None
            events.append(new(Event, (ev.timestamp, cpu, ev.pid, "", flags, kind, f)))
        if bundle.HasField("compact_sched"):
            cs = bundle.compact_sched
            table = list(cs.intern_table)
            ts = 0
            for i in range(len(cs.switch_timestamp)):
                ts += cs.switch_timestamp[i]
                nxt = cs.switch_next_pid[i]
                comm = table[cs.switch_next_comm_index[i]] if i < len(cs.switch_next_comm_index) else ""
                comms[nxt] = comm or comms.get(nxt, "")
                f = {
                    # prev_prio -2: not recorded (as a switch the reader puts back)
                    "prev_comm": "", "prev_pid": -1, "prev_prio": -2,
                    "prev_state": _state(cs.switch_prev_state[i]), "next_comm": comm, "next_pid": nxt,
                    "next_prio": cs.switch_next_prio[i],
                }  # fmt: skip
                unknown_ctx.append(len(events))
                events.append(new(Event, (ts, cpu, -1, "", None, "sched_switch", f)))
            ts = 0
            has_flags = len(cs.waking_common_flags) == len(cs.waking_timestamp)
            for i in range(len(cs.waking_timestamp)):
                ts += cs.waking_timestamp[i]
                pid = cs.waking_pid[i]
                comm = table[cs.waking_comm_index[i]] if i < len(cs.waking_comm_index) else comms.get(pid, "")
                f = {"comm": comm, "pid": pid, "prio": cs.waking_prio[i], "target_cpu": cs.waking_target_cpu[i]}
                flags = _flags(cs.waking_common_flags[i]) if has_flags else None
                unknown_ctx.append(len(events))
                events.append(new(Event, (ts, cpu, -1, "", flags, "sched_waking", f)))
    del data
    _fill_context(events, unknown_ctx, comms)
    return events, {e.name for e in events}, meta, skipped


def _fill_context(events: list[Event], unknown: list[int], comms: dict[int, str]) -> None:
    """Sort by time (a CPU's own order kept), give a compact switch its
    prev_pid and a compact waking its context (the CPU's current task), and
    every event its context task's comm."""
    marked = set(unknown)
    # At one instant a compact switch goes after the CPU's other events: the
    # task that woke another and then slept did both in its own context
    # (a compact waking's only witness of who ran it is the switch order).
    order = sorted(range(len(events)), key=lambda i: (events[i].ts, i in marked and events[i].name == "sched_switch"))
    out: list[Event] = []
    cur: dict[int, tuple[int, str]] = {}
    for i in order:
        e = events[i]
        if i in marked:
            c = cur.get(e.cpu)
            if c is None:  # the CPU's first event: nothing is known to run there
                c = (0, f"swapper/{e.cpu}") if e.name == "sched_switch" else (0, "<idle>")
            if e.name == "sched_switch":
                f = dict(e.f)
                f["prev_pid"], f["prev_comm"] = c
                e = e._replace(pid=c[0], comm=c[1], f=f)
            else:
                e = e._replace(pid=c[0], comm=c[1])
        elif not e.comm:
            e = e._replace(comm=comms.get(e.pid, f"<{e.pid}>") if e.pid else f"swapper/{e.cpu}")
        if e.name == "sched_switch":
            cur[e.cpu] = (e.f["next_pid"], e.f["next_comm"] or comms.get(e.f["next_pid"], ""))
        out.append(e)
    events[:] = out
