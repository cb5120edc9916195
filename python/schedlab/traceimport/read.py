"""Reading a captured trace into one time-ordered list of scheduler events.

Five inputs, told apart by their first bytes:

* ftrace text: the kernel's ``trace`` file, ``trace-cmd report`` (with or
  without its ``-l`` flags column) and ``schedlab run --trace``;
* ``perf script`` text of a ``perf sched record`` (``comm tid [cpu] time:
  sched:sched_switch: ...``);
* a ``perf.data`` file (``PERFILE2``), read through ``perf script``;
* a ``trace.dat`` (trace-cmd's binary), read through ``trace-cmd report``;
* a Perfetto protobuf trace (the ``perfetto`` module).

Only the events the replay uses are kept: the sched tracepoints, the
interrupt brackets (irq, softirq, hrtimer expiry) and hrtimer_start.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import gzip
import itertools
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from schedlab import native
from schedlab.errors import TraceError, UsageError
from schedlab.traceimport.event import Event

__all__ = ["Event", "Trace", "read_trace"]


@dataclass
class Topology:
    """The recording machine's CPUs as `schedlab capture` read them from /sys."""

    cpus: dict[int, dict[str, str]] = field(default_factory=dict)  # per CPU: package, core, node, llc
    distance: dict[int, list[int]] = field(default_factory=dict)  # per NUMA node: its distance row


@dataclass
class Trace:
    """A trace's events in time order, with what the reader learnt of it."""

    source: str
    kind: str  # "ftrace", "perf", "perf.data", "trace.dat"
    events: list[Event]
    nr_cpus: int
    names: set[str] = field(default_factory=set)  # events present
    skipped: int = 0  # lines that were not a kept event
    lost_switches: int = 0  # sched_switch events put in where the trace lost one (_repair)
    lost_tasks: set[str] = field(default_factory=set)
    meta: dict[str, str] = field(default_factory=dict)  # `schedlab capture`'s machine lines
    task_attrs: dict[int, dict[str, str]] = field(default_factory=dict)  # its tasks' policy, nice, CPUs
    topology: Topology = field(default_factory=Topology)  # the recording machine's, from `capture`


class _Parsed(NamedTuple):
    kind: str
    events: list[Event]
    names: set[str]
    skipped: int
    nr_cpus: int  # one above the highest CPU an event ran on or names (target_cpu, dest_cpu)
    unsorted: bool  # a time earlier than the one before it


#: Lines handed to the core's reader at a time.
_BATCH = 8192


def _parse_lines(
    lines: Iterable[str], source: str, meta: dict[str, str], tasks: dict[int, dict[str, str]], topo: Topology
) -> _Parsed:
    """The lines' events, read by the core (trace/textread.rs: the ftrace and
    perf script line formats and each event's print format), wrapped as
    Events here; the `# schedlab-capture:` header lines read into ``meta``,
    ``tasks`` and ``topo``."""
    reader = native.load().TextReader()
    events: list[Event] = []
    wrap = functools.partial(tuple.__new__, Event)  # an Event without NamedTuple's Python-level __new__
    it = iter(lines)
    while batch := list(itertools.islice(it, _BATCH)):
        got, comments, bad = reader.feed(batch)
        events.extend(map(wrap, got))
        for line in comments:
            if line.startswith("# schedlab-capture: "):
                _capture_line(line[len("# schedlab-capture: ") :].rstrip("\n"), meta, tasks, topo)
        if bad is not None:
            lineno, name, body = bad
            raise TraceError(
                "SL130",
                f"{source}:{lineno}: a {name} event without the kernel's fields: {body!r}; "
                "accepted: the kernel's print format of the event (its format file)",
            )
    names = {e.name for e in events}
    return _Parsed(reader.kind, events, names, reader.skipped, reader.top + 1, reader.unsorted)


def _capture_line(body: str, meta: dict[str, str], tasks: dict[int, dict[str, str]], topo: Topology) -> None:
    """A ``# schedlab-capture:`` header line: the machine, one task's
    attributes (``task pid=...``), one CPU's topology (``cpu cpu=...``) or
    a node's distances (``distance node=N 10,21``)."""
    if body.startswith("task "):
        kv = dict(w.split("=", 1) for w in body.split()[1:] if "=" in w)
        if kv.get("pid", "").isdigit():
            tasks[int(kv["pid"])] = kv
    elif body.startswith("cpu "):
        kv = dict(w.split("=", 1) for w in body.split()[1:] if "=" in w)
        if kv.get("cpu", "").isdigit():
            topo.cpus[int(kv["cpu"])] = kv
    elif body.startswith("distance "):
        words = body.split()
        if len(words) == 3 and words[1][5:].isdigit() and all(x.isdigit() for x in words[2].split(",")):
            topo.distance[int(words[1][5:])] = [int(x) for x in words[2].split(",")]
    else:
        key, _, val = body.partition("=")
        meta[key.strip()] = val.strip()


@contextlib.contextmanager
def _tool_lines(cmd: list[str], tool: str, package: str, source: str) -> Iterator[Iterable[str]]:
    """The lines ``cmd`` prints, as it prints them (a million-event trace is
    not held twice)."""
    if shutil.which(cmd[0]) is None:
        raise TraceError(
            "SL130",
            f"{source}: a {tool} file needs `{cmd[0]}` to read it, and it is not installed; "
            f"accepted: install {package}, or give the text it prints (`{' '.join(cmd)} > trace.txt`)",
        )
    with tempfile.TemporaryFile(mode="w+") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True, errors="replace")
        assert proc.stdout is not None
        try:
            yield proc.stdout
        finally:
            proc.stdout.close()
            code = proc.wait()
        if code != 0:
            err.seek(0)
            tail = err.read().strip().splitlines()[-1:] or ["(no output)"]
            raise TraceError("SL130", f"{source}: `{' '.join(cmd)}` failed (exit {code}): {tail[0]}")


@contextlib.contextmanager
def _file_lines(p: Path, gz: bool, source: str) -> Iterator[Iterable[str]]:
    try:
        fh = gzip.open(p, "rt", errors="replace") if gz else p.open(errors="replace")  # noqa: SIM115 (closed below)
    except OSError as e:
        raise UsageError("SL001", f"{source}: cannot read the trace: {e.strerror or e}") from None
    try:
        with fh:
            yield fh
    except (OSError, EOFError) as e:
        if gz:
            raise TraceError("SL130", f"{source}: a damaged gzip file: {e}") from None
        raise UsageError("SL001", f"{source}: cannot read the trace: {e}") from None


_NEEDED = (
    "accepted: ftrace text (the kernel's trace file, trace-cmd report, schedlab run --trace), perf script "
    "text, perf.data, trace.dat or a Perfetto trace, with at least sched:sched_switch and sched:sched_waking "
    "(or sched_wakeup)"
)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a million events are built: they
    hold no cycles, and its passes over them were a seventh of the import."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def read_trace(path: str | Path) -> Trace:
    """The trace at ``path``, whatever its format (module docstring).
    Raises ``UsageError`` (SL001) for a missing file and ``TraceError``
    (SL130) for one that is not a trace this reads."""
    p = Path(path)
    source = str(path)
    try:
        with p.open("rb") as fh:
            head = fh.read(16)
    except OSError as e:
        raise UsageError("SL001", f"{source}: cannot read the trace: {e.strerror or e}") from None
    if head.startswith(b"PERFILE2"):
        cmd = ["perf", "script", "--ns", "-i", source, "-F", "comm,tid,cpu,time,event,trace"]
        opened = _tool_lines(cmd, "perf.data", "perf (Debian: linux-perf)", source)
        kind_hint = "perf.data"
    elif head.startswith(b"\x17\x08\x44tracing"):
        opened = _tool_lines(["trace-cmd", "report", "-l", "-i", source], "trace.dat", "trace-cmd", source)
        kind_hint = "trace.dat"
    elif _looks_protobuf(head):
        return _perfetto_trace(p, source)
    else:
        opened = _file_lines(p, head.startswith(b"\x1f\x8b"), source)  # gzip: a kept trace.txt.gz
        kind_hint = ""
    meta: dict[str, str] = {}
    tasks: dict[int, dict[str, str]] = {}
    topo = Topology()
    with opened as lines, gc_paused():
        kind, events, names, skipped, nr_cpus, unsorted = _parse_lines(lines, source, meta, tasks, topo)
    if not events:
        raise TraceError("SL130", f"{source}: no scheduler events found; {_NEEDED}")
    # Stable: a CPU's own order is kept for equal times (the kernel's trace
    # file, trace-cmd and perf already print in time order).
    if unsorted:
        events.sort(key=lambda e: e.ts)
    if meta.get("nr_cpus", "").isdigit():
        nr_cpus = max(nr_cpus, int(meta["nr_cpus"]))
    trace = Trace(
        source, kind_hint or kind, events, nr_cpus, names, skipped, meta=meta, task_attrs=tasks, topology=topo
    )
    with gc_paused():
        _repair(trace)
    return trace


def _perfetto_trace(p: Path, source: str) -> Trace:
    from schedlab.traceimport.perfetto import read_perfetto

    with gc_paused():
        events, names, meta, skipped = read_perfetto(p, source)
    if not events:
        raise TraceError("SL130", f"{source}: a Perfetto trace with no ftrace events; {_NEEDED}")
    top = max(max(e.cpu, e.f.get("target_cpu", -1), e.f.get("dest_cpu", -1)) for e in events)
    trace = Trace(source, "perfetto", events, top + 1, names, skipped, meta=meta)
    with gc_paused():
        _repair(trace)
    return trace


def _repair(trace: Trace) -> None:
    """Put back the context switches a trace lost. A CPU runs the task its
    last sched_switch switched in until the next one; a sched_switch from
    another task, or an event in a task's context on a CPU running the idle
    task, means the switch between them was lost (a full ring buffer; perf
    not seeing the events of a task it may not trace; this machine's 6.18
    loses about half its switches from the idle task, to perf and ftrace
    alike). A sched_switch (prev_state "S": its state is unknown) is put in
    at that event. A task running on a CPU when the trace begins is switched
    in at the trace's first instant (from the idle task, prev_state "R"), so
    that every reader sees the same runs."""
    cur: dict[int, tuple[int, str]] = {}
    out: list[Event] = []
    t0 = trace.events[0].ts
    for e in trace.events:
        c = cur.get(e.cpu)
        if c is None:
            # The CPU's first event: the task in whose context it ran (or the
            # one its first switch switches out) was running from the start.
            first = (int(e.f["prev_pid"]), str(e.f["prev_comm"])) if e.name == "sched_switch" else (e.pid, e.comm)
            if first[0] > 0:
                f0 = {
                    "prev_comm": f"swapper/{e.cpu}",
                    "prev_pid": 0,
                    "prev_prio": -2,
                    "prev_state": "R",
                    "next_comm": first[1],
                    "next_pid": first[0],
                    "next_prio": -2,
                }
                out.append(Event(t0, e.cpu, 0, f"swapper/{e.cpu}", None, "sched_switch", f0))
            cur[e.cpu] = c = first
        # A switch from another task than the current one, or an event in a
        # task's context on an idle CPU (this machine's kernel loses some
        # switches from the idle task, to perf and to ftrace alike).
        if c is not None and e.pid != c[0] and (e.name == "sched_switch" or (c[0] == 0 and e.pid > 0)):
            trace.lost_switches += 1
            trace.lost_tasks.add(c[1])
            f = {
                "prev_comm": c[1],
                "prev_pid": c[0],
                "prev_prio": -2,
                "prev_state": "S",
                "next_comm": e.comm,
                "next_pid": e.pid,
                "next_prio": -2,
            }
            out.append(Event(e.ts, e.cpu, c[0], c[1], None, "sched_switch", f))
            cur[e.cpu] = (e.pid, e.comm)
        out.append(e)
        if e.name == "sched_switch":
            cur[e.cpu] = (int(e.f["next_pid"]), str(e.f["next_comm"]))
    trace.events = out


def _looks_protobuf(head: bytes) -> bool:
    """A Perfetto trace starts with a length-delimited TracePacket (field 1, wire type 2: 0x0a)."""
    return head[:1] == b"\x0a" and any(b < 9 or 13 < b < 32 or b > 126 for b in head[1:])
