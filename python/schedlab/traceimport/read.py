"""Reading a captured trace into one time-ordered list of scheduler events.

Four inputs, told apart by their first bytes:

* ftrace text: the kernel's ``trace`` file, ``trace-cmd report`` (with or
  without its ``-l`` flags column) and ``schedlab run --trace``;
* ``perf script`` text of a ``perf sched record`` (``comm tid [cpu] time:
  sched:sched_switch: ...``);
* a ``perf.data`` file (``PERFILE2``), read through ``perf script``;
* a ``trace.dat`` (trace-cmd's binary), read through ``trace-cmd report``.

Perfetto protobuf traces are refused for now with a clear error. Only the
events the replay uses are kept: the sched tracepoints, the interrupt
brackets (irq, softirq, hrtimer expiry) and hrtimer_start.
"""

from __future__ import annotations

import contextlib
import gc
import gzip
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from schedlab.errors import TraceError, UsageError

__all__ = ["Event", "Trace", "read_trace"]

#: The handlers' brackets: a wakeup between them is an interrupt's (read
#: where a trace has no flags column, as perf's).
_BRACKETS = frozenset(
    {
        "irq_handler_entry",
        "irq_handler_exit",
        "softirq_entry",
        "softirq_exit",
        "hrtimer_expire_entry",
        "hrtimer_expire_exit",
    }
)
#: Events the replay reads; everything else in a trace is skipped.
KEPT = (
    frozenset(
        {
            "sched_switch",
            "sched_waking",
            "sched_wakeup",
            "sched_wakeup_new",
            "sched_migrate_task",
            "sched_process_fork",
            "sched_process_exec",
            "sched_process_exit",
            "hrtimer_start",
            "hrtimer_cancel",
        }
    )
    | _BRACKETS
)

# The kernel's trace file and trace-cmd report: "comm-pid [cpu] flags ts: event: body";
# the (tgid) column and the five-character flags column are optional.
_FTRACE = re.compile(
    r"^\s*(?P<comm>.+?)-(?P<pid>\d+)\s+(?:\(\s*[\d-]+\)\s+)?\[(?P<cpu>\d+)\]\s+(?:(?P<flags>[^\s:]{4,6})\s+)?"
    r"(?P<ts>\d+\.\d+):\s+(?P<event>\w+):\s?(?P<body>.*)$"
)
# perf script: "comm pid[/tid] [cpu] ts: sched:sched_switch: body" (comm right-aligned, may hold spaces).
_PERF = re.compile(
    r"^\s*(?P<comm>.+?)\s+(?:\d+/)?(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+(?P<flags>(?!))?(?P<ts>\d+\.\d+):\s+"
    r"(?:\d+\s+)?(?:\w+:)?(?P<event>\w+):\s?(?P<body>.*)$"
)

# Each event's print format (the kernel's format file), its groups named as its fields.
_SWITCH = re.compile(
    r"prev_comm=(?P<prev_comm>.*?) prev_pid=(?P<prev_pid>-?\d+) prev_prio=(?P<prev_prio>-?\d+)"
    r" prev_state=(?P<prev_state>\S+) ==> next_comm=(?P<next_comm>.*?) next_pid=(?P<next_pid>-?\d+)"
    r" next_prio=(?P<next_prio>-?\d+)"
)
_WAKE = re.compile(
    r"comm=(?P<comm>.*?) pid=(?P<pid>\d+) prio=(?P<prio>-?\d+)(?: success=\d+)?(?: target_cpu=(?P<target_cpu>\d+))?"
)
_WAKES = frozenset({"sched_waking", "sched_wakeup", "sched_wakeup_new"})
_FORMATS = {
    "sched_switch": _SWITCH,
    "sched_waking": _WAKE,
    "sched_wakeup": _WAKE,
    "sched_wakeup_new": _WAKE,
    "sched_migrate_task": re.compile(
        r"comm=(?P<comm>.*?) pid=(?P<pid>\d+) prio=(?P<prio>-?\d+)"
        r" orig_cpu=(?P<orig_cpu>\d+) dest_cpu=(?P<dest_cpu>\d+)"
    ),
    "sched_process_fork": re.compile(
        r"comm=(?P<comm>.*?) pid=(?P<pid>\d+) child_comm=(?P<child_comm>.*?) child_pid=(?P<child_pid>\d+)"
    ),
    "sched_process_exec": re.compile(r"filename=(?P<filename>\S*) pid=(?P<pid>\d+)"),
    "sched_process_exit": re.compile(r"comm=(?P<comm>.*?) pid=(?P<pid>\d+) prio=(?P<prio>-?\d+)"),
}
_HRTIMER = re.compile(
    r"hrtimer=(?P<hrtimer>\S+)(?: function=(?P<function>\S+))?(?: expires=(?P<expires>\d+))?"
    r"(?: softexpires=(?P<softexpires>\d+))?"
)
_FORMATS.update(
    {n: _HRTIMER for n in ("hrtimer_start", "hrtimer_cancel", "hrtimer_expire_entry", "hrtimer_expire_exit")}
)
#: The fields read as integers, and what a field the event may leave out is.
_TEXT = frozenset({"prev_comm", "prev_state", "next_comm", "comm", "child_comm", "filename", "hrtimer", "function"})
_ABSENT: dict[str, Any] = {"target_cpu": -1, "function": "", "expires": 0, "softexpires": 0}


class Event(NamedTuple):
    """One tracepoint hit: ``ts`` in ns from the trace's clock, the CPU and
    the task (pid, comm) in whose context it ran, the ftrace flags column if
    the trace has one, and the event's own fields. (A tuple: a trace of a
    million events is held in memory.)"""

    ts: int
    cpu: int
    pid: int
    comm: str
    flags: str | None
    name: str
    f: dict[str, Any]


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


_SCALE: list[int] = [int(10 ** (9 - n)) for n in range(10)]


def _ns(ts: str) -> int:
    """Seconds with 6 (ftrace) or 9 (perf --ns) decimals, as integer ns."""
    return int(ts.replace(".", "", 1)) * _SCALE[len(ts) - ts.index(".") - 1]


#: Per event, its pattern and the fields read as integers (the others are text).
_CONVERT: dict[str, tuple[re.Pattern[str], tuple[str, ...]]] = {
    name: (pat, tuple(k for k in pat.groupindex if k not in _TEXT)) for name, pat in _FORMATS.items()
}


def _fields(name: str, body: str) -> dict[str, Any] | None:
    """The fields of event ``name`` from its printed body; None when the body
    does not have the kernel's layout (the irq brackets: no fields)."""
    conv = _CONVERT.get(name)
    if conv is None:
        return {}
    m = conv[0].match(body)
    if m is None:
        return None
    d = m.groupdict()
    for k in conv[1]:
        v = d[k]
        d[k] = _ABSENT[k] if v is None else int(v)
    if None in d.values():
        for k, v in d.items():
            if v is None:
                d[k] = _ABSENT[k]
    return d


_NO_FIELDS: dict[str, Any] = {}


class _Parsed(NamedTuple):
    kind: str
    events: list[Event]
    names: set[str]
    skipped: int
    nr_cpus: int  # one above the highest CPU an event ran on or names (target_cpu, dest_cpu)
    unsorted: bool  # a time earlier than the one before it


def _parse_lines(lines: Iterable[str], source: str, meta: dict[str, str], tasks: dict[int, dict[str, str]]) -> _Parsed:
    events: list[Event] = []
    append = events.append
    names: set[str] = set()
    kind = ""
    pattern = None
    skipped = 0
    intern = sys.intern
    kept = {n: n for n in KEPT}
    top, last, unsorted = 0, 0, False  # the highest CPU a field or column names; a time going back
    switch, wake = _SWITCH.match, _WAKE.match
    new = tuple.__new__  # an Event without NamedTuple's Python-level __new__ (a million of them)
    for lineno, line in enumerate(lines, 1):
        if line.startswith("#"):
            if line.startswith("# schedlab-capture: "):
                _capture_line(line[len("# schedlab-capture: ") :].rstrip("\n"), meta, tasks)
            continue
        if pattern is None:
            if not line.strip() or line.startswith(("version =", "cpus=", "CPU ")):
                continue
            if _FTRACE.match(line):
                kind, pattern = "ftrace", _FTRACE
            elif _PERF.match(line):
                kind, pattern = "perf", _PERF
            else:
                skipped += 1
                continue
        m = pattern.match(line)
        if m is None:
            skipped += 1
            continue
        comm, pid, cpu, flags, ts, name, body = m.groups()
        name = kept.get(name)  # the one string object per event name
        if name is None:
            skipped += 1
            continue
        if name in _BRACKETS:
            if flags is not None:
                continue  # the flags column says which context each event ran in
            fields: dict[str, Any] | None = _NO_FIELDS
        elif name == "hrtimer_start" and "hrtimer_wakeup" not in body:
            continue  # only a task's sleep timer tells the replay anything
        elif name == "sched_switch":  # the hot two: a dict display, not groupdict and a loop
            a = switch(body)
            fields = None if a is None else {
                "prev_comm": a[1], "prev_pid": int(a[2]), "prev_prio": int(a[3]), "prev_state": a[4],
                "next_comm": a[5], "next_pid": int(a[6]), "next_prio": int(a[7]),
            }  # fmt: skip
        elif name in _WAKES:
            a = wake(body)
            fields = None if a is None else {
                "comm": a[1], "pid": int(a[2]), "prio": int(a[3]), "target_cpu": -1 if a[4] is None else int(a[4]),
            }  # fmt: skip
            if fields is not None and fields["target_cpu"] > top:
                top = fields["target_cpu"]
        else:
            fields = _fields(name, body)
            if name == "sched_migrate_task" and fields is not None and fields["dest_cpu"] > top:
                top = fields["dest_cpu"]
        if fields is None:
            raise TraceError(
                "SL130",
                f"{source}:{lineno}: a {name} event without the kernel's fields: {body[:120]!r}; "
                "accepted: the kernel's print format of the event (its format file)",
            )
        t, c = _ns(ts), int(cpu)
        if t < last:
            unsorted = True
        last = t
        if c > top:
            top = c
        append(new(Event, (t, c, int(pid), intern(comm.strip()), flags, name, fields)))
        names.add(name)
    return _Parsed(kind, events, names, skipped, top + 1, unsorted)


def _capture_line(body: str, meta: dict[str, str], tasks: dict[int, dict[str, str]]) -> None:
    """A ``# schedlab-capture:`` header line: the machine, or one task's attributes."""
    if body.startswith("task "):
        kv = dict(w.split("=", 1) for w in body.split()[1:] if "=" in w)
        if kv.get("pid", "").isdigit():
            tasks[int(kv["pid"])] = kv
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
        raise TraceError(
            "SL130",
            f"{source}: a Perfetto protobuf trace is not read yet; accepted: ftrace text, trace-cmd's "
            "trace.dat, perf.data or `perf script` text (record with `schedlab capture`)",
        )
    else:
        opened = _file_lines(p, head.startswith(b"\x1f\x8b"), source)  # gzip: a kept trace.txt.gz
        kind_hint = ""
    meta: dict[str, str] = {}
    tasks: dict[int, dict[str, str]] = {}
    with opened as lines, gc_paused():
        kind, events, names, skipped, nr_cpus, unsorted = _parse_lines(lines, source, meta, tasks)
    if not events:
        raise TraceError(
            "SL130",
            f"{source}: no scheduler events found; accepted: ftrace text (the kernel's trace file, "
            "trace-cmd report, schedlab run --trace), perf script text, perf.data or trace.dat "
            "with at least sched:sched_switch and sched:sched_waking (or sched_wakeup)",
        )
    # Stable: a CPU's own order is kept for equal times (the kernel's trace
    # file, trace-cmd and perf already print in time order).
    if unsorted:
        events.sort(key=lambda e: e.ts)
    if meta.get("nr_cpus", "").isdigit():
        nr_cpus = max(nr_cpus, int(meta["nr_cpus"]))
    trace = Trace(source, kind_hint or kind, events, nr_cpus, names, skipped, meta=meta, task_attrs=tasks)
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
