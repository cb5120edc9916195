"""rt-app workloads in and out (docs/FORMATS.md §1).

In: ``schedlab run WORKLOAD.json --machine PRESET [--kernel VERSION]``, or a
scenario with a top-level ``rtapp = "WORKLOAD.json"`` (its tasks join the
scenario's, and its ``global.duration`` becomes ``measure.duration`` unless
the scenario sets one). The file is read as rt-app's json-c does: ``//`` and
``/* */`` comments and trailing commas are accepted, a duplicated key keeps
its last value in its first place, and an event is any key that *starts*
with an event name (``run0``, ``sleep-2``, ``timer_a``), in the order
rt-app's parser tries them.

What it becomes (rt-app's HEAD semantics):

* a task description is a ``[[task]]`` group: ``instance`` → ``count``,
  ``delay`` (us) → ``start``, ``policy`` and ``priority`` (the nice value of
  SCHED_OTHER/BATCH/IDLE, the RT priority of SCHED_FIFO/RR, default 10) →
  ``policy``, ``nice``, ``rt_priority``; ``cpus`` → ``cpus``;
* ``phases`` (or the task itself as its one phase) become loops: a phase's
  ``loop`` repeats its events, the task's ``loop`` (default forever with
  phases, once per ``loop`` without) repeats the phases, and the thread
  exits when they end;
* events: ``run`` (fixed work, us) → ``run``; ``runtime`` (wall-clock us) →
  ``runtime``; ``sleep`` → ``sleep``; ``timer`` → ``timer`` on rt-app's grid
  (``anchor = "start"``, its ``mode``, relative by default); ``barrier`` →
  ``barrier``; ``yield`` → ``yield``; ``lock``/``unlock`` → the mutex ops;
* ``global.duration`` → ``measure.duration`` (``-1``: until every thread
  has ended).

Refused, with the key path (a ``NotModelledError``, exit 2): SCHED_DEADLINE,
``util_min``/``util_max``, ``taskgroup``, ``nodes_membind``, a phase that
changes the task's policy, priority or CPUs, condition variables
(``wait``/``signal``/``broad``/``sync``: rt-app's lose a signal nobody waits
for, schedlab's events keep it), ``suspend``/``resume``, ``mem``,
``iorun``, ``memrun``, ``fork``, semaphores, a timer shared between threads
(a ``ref`` not starting with ``unique`` used by more than one thread) or two
timers in one thread, a barrier named twice by one task, and any key rt-app
does not know.

Names and numbers: a task's, barrier's or mutex's name is kept exactly
(any Unicode, commas and brackets included; a task name that is empty or
has white space, which the simulator refuses, is refused here with its key
path). Numbers are refused with their rt-app key path when the simulator
could not take them: microseconds from 0 to 10^16, ``instance`` up to
100,000, ``loop`` from -1 to 2^63-1, CPUs 0 to 8191, ``global.duration``
up to a day. The file is at most 64 MiB, UTF-8, nested at most 64 levels.

Deviation: task names follow schedlab's ``<task>-<i>`` numbering within a
task (rt-app numbers threads across the file: ``light-0 light-1 rt-2``);
``calibration`` and the logging keys have no effect (``run`` is work at the
simulated CPU's nominal speed, which is what calibration arranges).

Out: ``schedlab export-rtapp SCENARIO`` writes the workload as rt-app JSON
that Debian's rt-app 1.0 runs (always with ``phases``, unique event keys,
timers ``unique``). It refuses what rt-app cannot express: kernel threads,
channels, ``[rt_migrate_test]``, ``[dbench]``, memory, ops other than the
ones above and ``loop``, a loop inside a loop's body, a distribution
instead of a fixed duration, a timer anchored at its first use, a duration
that is not whole seconds. The machine and the kernel are not part of an
rt-app file: rt-app runs on the machine it is started on.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from schedlab import native
from schedlab.args import cut
from schedlab.errors import NotModelledError, ScenarioError, UsageError

__all__ = ["check_calibration", "dumps_toml", "expand_scenario", "export", "loads", "to_scenario"]

# ------------------------------------------------------------------ reading


#: The deepest nesting of arrays and objects an rt-app file may have (a
#: real one has five levels: tasks, a task, phases, a phase, a timer).
MAX_DEPTH = 64

_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_SPECIAL = re.compile(r'["/\[\]{}]')


def _strip(text: str, source: str = "<rt-app>") -> str:
    """Comments and trailing commas out, outside strings (json-c's non-strict
    mode); strings are kept byte for byte (a task named ``a,]`` stays
    ``a,]``). Nesting deeper than ``MAX_DEPTH`` is refused here, before the
    JSON reader recurses into it."""
    plain: list[str] = []  # text outside strings, since the last string
    out: list[str] = []
    depth = 0
    i, n = 0, len(text)

    def flush() -> None:
        out.append(_TRAILING_COMMA.sub(r"\1", "".join(plain)))
        plain.clear()

    while i < n:
        m = _SPECIAL.search(text, i)
        if m is None:
            plain.append(text[i:])
            break
        j = m.start()
        plain.append(text[i:j])
        c = text[j]
        if c == '"':
            k = j + 1
            while k < n and text[k] != '"':
                k += 2 if text[k] == "\\" else 1
            flush()
            out.append(text[j : k + 1])
            i = k + 1
        elif text.startswith("//", j):
            k = text.find("\n", j)
            i = n if k < 0 else k
        elif text.startswith("/*", j):
            k = text.find("*/", j + 2)
            # Keep the line count (error positions) with the comment's newlines.
            plain.append("\n" * text.count("\n", j, n if k < 0 else k))
            i = n if k < 0 else k + 2
        else:
            if c in "[{":
                depth += 1
                if depth > MAX_DEPTH:
                    line = text.count("\n", 0, j) + 1
                    raise ScenarioError(
                        "SL100",
                        f"{source}:{line}: not rt-app JSON: arrays and objects nested deeper than {MAX_DEPTH} "
                        f"levels; accepted: an rt-app file (tasks, phases, events: five levels)",
                    )
            elif c in "]}":
                depth -= 1
            plain.append(c)
            i = j + 1
    flush()
    return "".join(out)


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json-c: a duplicated key keeps one entry, the last value, in the first place.
    d: dict[str, Any] = {}
    for k, v in pairs:
        d[k] = v
    return d


def loads(text: str, source: str) -> dict[str, Any]:
    """An rt-app file's JSON (lenient, as rt-app reads it)."""
    try:
        doc = json.loads(_strip(text, source), object_pairs_hook=_pairs)
    except json.JSONDecodeError as e:
        raise ScenarioError("SL100", f"{source}:{e.lineno}:{e.colno}: not rt-app JSON: {e.msg}") from None
    except RecursionError:
        raise ScenarioError(
            "SL100", f"{source}: not rt-app JSON: nested too deep; accepted: at most {MAX_DEPTH} levels"
        ) from None
    except ValueError:  # an integer of more than 4,300 digits
        raise ScenarioError(
            "SL100", f"{source}: not rt-app JSON: a number of more than 4300 digits; accepted: an rt-app file"
        ) from None
    if not isinstance(doc, dict):
        raise ScenarioError("SL100", f"{source}: an rt-app file is a JSON object with 'tasks'")
    return doc


# ----------------------------------------------------------- rt-app -> toml

_POLICIES = {
    "SCHED_OTHER": "SCHED_NORMAL",
    "SCHED_BATCH": "SCHED_BATCH",
    "SCHED_IDLE": "SCHED_IDLE",
    "SCHED_FIFO": "SCHED_FIFO",
    "SCHED_RR": "SCHED_RR",
}
#: Keys of `global` with no effect on a simulation (rt-app's own logging and
#: set-up), accepted; `mem_buffer_size`/`io_device` serve only refused events.
_GLOBAL_INERT = (
    "calibration", "default_policy", "duration", "pi_enabled", "lock_pages", "logdir", "log_basename",
    "log_size", "ftrace", "gnuplot", "io_device", "mem_buffer_size", "cumulative_slack",
)  # fmt: skip
_TASK_KEYS = ("instance", "delay", "loop", "phases", "policy", "priority", "cpus")
_PHASE_KEYS = ("loop", "policy", "priority", "cpus")
_REFUSED_ATTRS = {
    "dl-runtime": "SCHED_DEADLINE is not modelled",
    "dl-period": "SCHED_DEADLINE is not modelled",
    "dl-deadline": "SCHED_DEADLINE is not modelled",
    "runtime_dl": "SCHED_DEADLINE is not modelled",
    "period": "SCHED_DEADLINE is not modelled",
    "deadline": "SCHED_DEADLINE is not modelled",
    "util_min": "uclamp is not modelled",
    "util_max": "uclamp is not modelled",
    "taskgroup": "task groups (cgroups) are not modelled",
    "nodes_membind": "memory policies are not modelled",
}
#: rt-app's event names in the order its parser tries them (a key is the
#: first whose name it starts with; `runtime` before `run`).
_EVENTS = (
    "runtime", "run", "sleep", "memrun", "mem", "iorun", "lock", "unlock", "signal", "broad", "wait", "sync",
    "barrier", "timer", "resume", "suspend", "yield", "fork", "sem_post", "sem_wait",
)  # fmt: skip
_REFUSED_EVENTS = {
    "memrun": "memory-access workloads are not modelled",
    "mem": "rt-app's memory writes are not modelled",
    "iorun": "rt-app's io writes are not modelled",
    "signal": "condition variables are not modelled (rt-app loses a signal nobody waits for; schedlab keeps it)",
    "broad": "condition variables are not modelled",
    "wait": "condition variables are not modelled",
    "sync": "condition variables are not modelled",
    "resume": "suspend/resume are not modelled (a resume with nobody suspended is lost in rt-app)",
    "suspend": "suspend/resume are not modelled",
    "fork": "rt-app's fork is not modelled here (it is not in rt-app 1.0)",
    "sem_post": "semaphores are not modelled",
    "sem_wait": "semaphores are not modelled",
}


def _event_kind(key: str) -> str | None:
    return next((e for e in _EVENTS if key.startswith(e)), None)


#: What an rt-app file may hold, for the refusals' "accepted".
_ACCEPTED = (
    "SCHED_OTHER/BATCH/IDLE/FIFO/RR tasks with instance, delay, loop, phases, priority, cpus (the same in every "
    "phase) and the events run, runtime, sleep, timer (a unique ref), barrier, yield, lock, unlock"
)


def _show(v: Any) -> str:
    """A value for a message: a scalar's repr, cut; a container by its kind
    and size (never its whole, possibly huge or deeply nested, repr)."""
    if isinstance(v, dict):
        return f"an object of {len(v)} key(s)"
    if isinstance(v, list):
        return f"a list of {len(v)} item(s)"
    return cut(v)


def _seg(name: str) -> str:
    """A key as a key path shows it: as written when printable, else its
    repr (control characters, lone surrogates escaped)."""
    return name if name and name.isprintable() and name.strip() == name else repr(name)


#: Unicode's White_Space characters: the core refuses a task name with one
#: (Rust's char::is_whitespace).
_WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)


def _is_unicode(text: str) -> bool:
    """No lone surrogate (JSON's "\\ud800"): the text can be UTF-8 and TOML."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _name(source: str, path: str, v: Any, what: str) -> str:
    """A name the scenario keeps exactly (a barrier's, a mutex's)."""
    if not isinstance(v, str) or not v:
        raise _bad(source, path, _show(v), f"a {what} name (a non-empty string)")
    if not _is_unicode(v):
        raise _bad(source, path, _show(v), f"a {what} name that is Unicode text (no lone surrogate)")
    return v


#: The largest numbers a scenario takes: 10^16 us is the core's longest
#: duration (10^19 ns); 100,000 threads per task; CPUs 0-8191 (NR_CPUS);
#: a day of simulated time.
MAX_US = 10**16
MAX_INSTANCES = 100_000
MAX_LOOP = 2**63 - 1
MAX_CPU = 8191
MAX_DURATION_S = 86_400


def _int(source: str, path: str, v: Any, lo: int, hi: int, what: str = "") -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise _bad(source, path, _show(v), f"an integer from {lo} to {hi}{what}")
    return v


def _nm(source: str, path: str, why: str, accepted: str = _ACCEPTED) -> NotModelledError:
    return NotModelledError("SL120", f"{source}: {path}: {why}; accepted: {accepted}")


def _bad(source: str, path: str, what: str, accepted: str) -> ScenarioError:
    return ScenarioError("SL102", f"{source}: {path}: {what}; accepted: {accepted}")


def _us(source: str, path: str, v: Any) -> str:
    return f"{_int(source, path, v, 0, MAX_US, ' (microseconds)')}us"


def _phase_ops(
    source: str, path: str, phase: Mapping[str, Any], allowed: Sequence[str], timers: dict[str, int]
) -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = []
    barriers: set[str] = set()
    for key, v in phase.items():
        kp = f"{path}.{_seg(key)}"
        kind = _event_kind(key)
        if kind is None:
            if key in allowed:
                continue
            if key in _REFUSED_ATTRS:
                raise _nm(source, kp, _REFUSED_ATTRS[key])
            raise _bad(source, kp, "not an rt-app key", ", ".join([*allowed, *_EVENTS]))
        if kind in _REFUSED_EVENTS:
            raise _nm(source, kp, f"the {kind} event: {_REFUSED_EVENTS[kind]}")
        if kind in ("run", "runtime", "sleep"):
            ops.append({kind: _us(source, kp, v)})
        elif kind == "timer":
            if not isinstance(v, dict) or "period" not in v:
                raise _bad(source, kp, _show(v), '{"ref": "unique", "period": US, "mode": "relative"|"absolute"}')
            for k in v:
                if k not in ("ref", "period", "mode"):
                    raise _bad(source, f"{kp}.{_seg(k)}", "not a timer key", "ref, period, mode")
            ref = str(v.get("ref", ""))
            mode = v.get("mode", "relative")
            if mode not in ("relative", "absolute"):
                raise _bad(source, f"{kp}.mode", _show(mode), '"relative" or "absolute"')
            timers[ref] = timers.get(ref, 0)
            period = _us(source, f"{kp}.period", v["period"])
            ops.append({"timer": {"period": period, "mode": mode, "anchor": "start"}})
        elif kind == "barrier":
            _name(source, kp, v, "barrier")
            if v in barriers:
                why = f"barrier {cut(v)} named twice by one task: rt-app counts references, not threads"
                raise _nm(source, kp, why)
            barriers.add(v)
            ops.append({"barrier": v})
        elif kind == "yield":
            ops.append({"yield": True})
        elif kind in ("lock", "unlock"):
            ops.append({kind: _name(source, kp, v, "mutex")})
    if not ops:
        raise _bad(source, path, "no events (rt-app aborts: No events found)", "at least one event")
    return ops


def _loop(count: Any, body: list[dict[str, Any]], source: str, path: str) -> list[dict[str, Any]]:
    """rt-app's loop count (-1 forever) around `body`."""
    _int(source, path, count, -1, MAX_LOOP, " (-1: forever)")
    if count == 0:
        return []
    if count == 1:
        return body
    return [{"loop": {"count": 0 if count == -1 else count, "body": body}}]


def _attrs(source: str, path: str, t: Mapping[str, Any], default_policy: str) -> dict[str, Any]:
    pol = t.get("policy", default_policy)
    if pol == "SCHED_DEADLINE":
        raise _nm(source, f"{path}.policy", "SCHED_DEADLINE is not modelled")
    if not isinstance(pol, str) or pol not in _POLICIES:
        raise _bad(source, f"{path}.policy", _show(pol), ", ".join([*_POLICIES, "SCHED_DEADLINE"]))
    out: dict[str, Any] = {"policy": _POLICIES[pol]}
    rt = pol in ("SCHED_FIFO", "SCHED_RR")
    prio = t.get("priority", 10 if rt else 0)
    if isinstance(prio, bool) or not isinstance(prio, int):
        raise _bad(source, f"{path}.priority", _show(prio), "an integer")
    core = native.load()  # the kernel's ranges, as the core defines them
    if rt:
        if not 1 <= prio <= core.MAX_RT_PRIORITY:
            raise _bad(source, f"{path}.priority", f"{prio}", f"1..{core.MAX_RT_PRIORITY} for SCHED_FIFO/RR")
        out["rt_priority"] = prio
    else:
        if not core.MIN_NICE <= prio <= core.MAX_NICE:
            raise _bad(source, f"{path}.priority", f"{prio}", f"a nice value {core.MIN_NICE}..{core.MAX_NICE}")
        out["nice"] = prio
    if "cpus" in t:
        cpus = t["cpus"]
        if not isinstance(cpus, list) or not cpus:
            raise _bad(source, f"{path}.cpus", _show(cpus), f"a non-empty list of CPU numbers 0 to {MAX_CPU}")
        for i, c in enumerate(cpus):
            _int(source, f"{path}.cpus[{i}]", c, 0, MAX_CPU, " (a CPU number)")
        out["cpus"] = list(cpus)
    return out


def to_scenario(doc: Mapping[str, Any], source: str) -> tuple[list[dict[str, Any]], int]:
    """(the ``[[task]]`` groups, global.duration in s, -1 for none) of an rt-app document."""
    g = doc.get("global") or {}
    if not isinstance(g, dict):
        raise _bad(source, "global", _show(g), "an object")
    for k in g:
        if k not in _GLOBAL_INERT:
            raise _bad(source, f"global.{_seg(k)}", "not an rt-app global key", ", ".join(_GLOBAL_INERT))
    for k in doc:
        if k not in ("tasks", "global", "resources"):
            raise _bad(source, _seg(k), "not an rt-app top-level key", "tasks, global, resources")
    duration = g.get("duration", -1)
    if duration != -1:
        _int(source, "global.duration", duration, 1, MAX_DURATION_S, " seconds (a day), or -1")
    default_policy = g.get("default_policy", "SCHED_OTHER")
    tasks = doc.get("tasks")
    if not isinstance(tasks, dict) or not tasks:
        raise _bad(source, "tasks", "missing or empty", "an object: task name -> task")
    groups: list[dict[str, Any]] = []
    shared_timers: dict[str, list[str]] = {}
    uses_lock = False
    for name, t in tasks.items():
        path = f"tasks.{_seg(name)}"
        if not name or not _is_unicode(name) or any(c in _WHITE_SPACE for c in name):
            raise _bad(
                source, path, "a task name schedlab cannot take (empty, white space or a lone surrogate)",
                "a non-empty task name of Unicode text without white space",
            )  # fmt: skip
        if not isinstance(t, dict):
            raise _bad(source, path, _show(t), "a task object")
        attrs = _attrs(source, path, t, default_policy)
        timers: dict[str, int] = {}
        if "phases" in t:
            phases = t["phases"]
            if not isinstance(phases, dict) or not phases:
                raise _bad(source, f"{path}.phases", _show(phases), "an object: phase name -> phase")
            for k in t:
                if k not in _TASK_KEYS and k not in _REFUSED_ATTRS:
                    kind = _event_kind(k)
                    what = "an event beside phases (rt-app ignores it)" if kind else "not an rt-app task key"
                    raise _bad(source, f"{path}.{_seg(k)}", what, ", ".join(_TASK_KEYS))
                if k in _REFUSED_ATTRS:
                    raise _nm(source, f"{path}.{k}", _REFUSED_ATTRS[k])
            body: list[dict[str, Any]] = []
            for pname, ph in phases.items():
                pp = f"{path}.phases.{_seg(pname)}"
                if not isinstance(ph, dict):
                    raise _bad(source, pp, _show(ph), "a phase object")
                for k in ("policy", "priority", "cpus"):
                    if k in ph and _attrs(source, pp, {**t, k: ph[k]}, default_policy) != attrs:
                        raise _nm(source, f"{pp}.{k}", "a phase that changes the task's policy, priority or CPUs")
                ops = _phase_ops(source, pp, ph, _PHASE_KEYS, timers)
                body += _loop(ph.get("loop", 1), ops, source, f"{pp}.loop")
            program = _loop(t.get("loop", -1), body, source, f"{path}.loop")
        else:
            ops = _phase_ops(source, path, t, _TASK_KEYS, timers)
            program = _loop(t.get("loop", -1), ops, source, f"{path}.loop")
        if len(timers) > 1:
            raise _nm(source, path, f"timers {sorted(timers)} in one thread: schedlab keeps one timer per task")
        count = _int(source, f"{path}.instance", t.get("instance", 1), 0, MAX_INSTANCES)
        for ref in timers:
            if not ref.startswith("unique"):
                shared_timers.setdefault(ref, []).extend([name] * count)
        uses_lock = uses_lock or any("lock" in op for op in _flat_ops(program))
        grp: dict[str, Any] = {"name": name, "count": count, **attrs}
        if "delay" in t:
            grp["start"] = _us(source, f"{path}.delay", t["delay"])
        grp["program"] = program or [{"exit": True}]
        groups.append(grp)
    for ref, users in shared_timers.items():
        if len(users) > 1:
            why = f"shared by {len(users)} threads: shared timers are not modelled"
            raise _nm(source, f"timer ref {cut(ref)}", why)
    if g.get("pi_enabled") and uses_lock:
        raise _nm(source, "global.pi_enabled", "priority inheritance is not modelled")
    return groups, duration


def _flat_ops(ops: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    out: list[Mapping[str, Any]] = []
    for op in ops:
        if "loop" in op:
            out += _flat_ops(op["loop"]["body"])
        else:
            out.append(op)
    return out


# --------------------------------------------------------------------- toml

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")
#: What a TOML basic string must escape: the quote, the backslash and the
#: control characters U+0000-U+001F and U+007F. Everything else, non-BMP
#: characters included, is written as itself (JSON's surrogate-pair escapes
#: are not TOML).
_MUST_ESCAPE = re.compile(r'["\\\x00-\x1f\x7f]')
_SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    return _SHORT.get(c) or f"\\u{ord(c):04X}"


def _string(text: str) -> str:
    """``text`` as a TOML basic string (it must be Unicode text: a lone
    surrogate has no TOML form)."""
    if not _is_unicode(text):
        raise UsageError("SL001", f"{cut(text)}: not Unicode text (a lone surrogate); it has no TOML form")
    return '"' + _MUST_ESCAPE.sub(_escape, text) + '"'


def _key(k: str) -> str:
    return k if _BARE.match(k) else _string(k)


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)  # inf, nan, 1e+24: TOML's spellings too
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, (datetime.datetime, datetime.date, datetime.time)):
        return v.isoformat()  # what tomllib read, as TOML writes it
    raise UsageError("SL001", f"cannot write {cut(v)} as TOML")


def dumps_toml(doc: Mapping[str, Any], prefix: str = "") -> str:
    """A scenario dict as TOML: tables as [sections], arrays of tables as
    [[sections]], everything below them inline."""
    lines: list[str] = []
    tables: list[tuple[str, Any]] = []
    for k, v in doc.items():
        if isinstance(v, dict) or (isinstance(v, list) and v and all(isinstance(x, dict) for x in v) and not prefix):
            tables.append((k, v))
        else:
            lines.append(f"{_key(k)} = {_value(v)}")
    for k, v in tables:
        name = f"{prefix}{_key(k)}"
        if isinstance(v, dict):
            lines += ["", f"[{name}]", dumps_toml(v, name + ".").rstrip("\n")]
        else:
            for item in v:
                lines += ["", f"[[{name}]]"] + [f"{_key(a)} = {_value(b)}" for a, b in item.items()]
    return "\n".join(x for x in lines if x is not None).lstrip("\n") + "\n"


def workload_toml(text: str, source: str, machine: str, kernel: str | None) -> str:
    """``schedlab run WORKLOAD.json --machine PRESET``: the scenario's TOML."""
    groups, duration = to_scenario(loads(text, source), source)
    doc: dict[str, Any] = {"name": Path(source).stem, "machine": {"preset": machine}}
    if kernel:
        doc["kernel"] = {"version": kernel}
    if duration > 0:
        doc["measure"] = {"duration": f"{duration}s"}
    doc["task"] = groups
    return dumps_toml(doc)


_RTAPP_KEY = re.compile(r"^\s*rtapp\s*=", re.M)


def expand_scenario(text: str, path: Path) -> str:
    """A scenario TOML with ``rtapp = "FILE.json"``: the file's tasks added,
    its duration the measurement's unless the scenario has one."""
    if not _RTAPP_KEY.search(text):
        return text
    from schedlab.scenarios import parse_toml, read_text

    doc = parse_toml(text, str(path))
    ref = doc.pop("rtapp", None)
    if ref is None:
        return text
    if not isinstance(ref, str):
        raise _bad(str(path), "rtapp", _show(ref), "the path of an rt-app JSON file")
    jpath = (path.parent / ref) if not Path(ref).is_absolute() else Path(ref)
    try:
        jtext = read_text(jpath)
    except UsageError as e:
        shown = _string(ref) if _is_unicode(ref) else cut(ref)
        raise UsageError(e.code, f"{path}: rtapp = {shown}: {e.message}") from None
    groups, duration = to_scenario(loads(jtext, str(jpath)), str(jpath))
    tasks = doc.get("task") or []
    if not isinstance(tasks, list):
        raise _bad(str(path), "task", _show(tasks), "[[task]] tables")
    doc["task"] = tasks + groups
    measure = doc.setdefault("measure", {})
    if not isinstance(measure, dict):
        raise _bad(str(path), "measure", _show(measure), "a [measure] table")
    if duration > 0 and "duration" not in measure:
        measure["duration"] = f"{duration}s"
    try:
        return dumps_toml(doc)
    except RecursionError:
        raise ScenarioError(
            "SL100", f"{path}: syntax error: arrays or inline tables nested too deep; accepted: at most 100 levels"
        ) from None


# -------------------------------------------------------------- toml -> rt-app


def _cpulist(v: Any) -> list[int]:
    if isinstance(v, list):
        return [int(x) for x in v]
    out: list[int] = []
    for part in str(v).split(","):
        a, _, b = part.partition("-")
        out += list(range(int(a), int(b or a) + 1))
    return out


def _whole_us(v: Any, where: str, source: str) -> int:
    from schedlab.units import parse_duration_ns

    if not isinstance(v, str):
        raise _nm(source, where, "a distribution has no rt-app form (rt-app takes fixed durations)")
    try:
        ns = parse_duration_ns(v)
    except ValueError as e:
        raise _bad(source, where, str(e), "a duration") from None
    return (ns + 999) // 1000


def _export_ops(ops: Sequence[Mapping[str, Any]], where: str, source: str, n: list[int]) -> dict[str, Any]:
    ev: dict[str, Any] = {}
    for i, op in enumerate(ops):
        (kind, v), *rest = op.items()
        w = f"{where}[{i}]"
        if rest:
            raise _bad(source, w, _show(op), "one op per table")
        n[0] += 1
        if kind in ("run", "runtime", "sleep"):
            ev[f"{kind}{n[0]}"] = _whole_us(v, f"{w}.{kind}", source)
        elif kind == "timer":
            t = v if isinstance(v, dict) else {"period": v}
            if t.get("anchor", "first_use") != "start":
                raise _nm(
                    source,
                    f"{w}.timer",
                    'a timer anchored at its first use; rt-app\'s starts with the thread (anchor = "start")',
                )
            ev[f"timer{n[0]}"] = {
                "ref": "unique",
                "period": _whole_us(t["period"], f"{w}.timer.period", source),
                "mode": t.get("mode", "absolute"),
            }
        elif kind == "barrier":
            ev[f"barrier{n[0]}"] = v
        elif kind == "yield":
            ev[f"yield{n[0]}"] = ""
        elif kind in ("lock", "unlock"):
            ev[f"{kind}{n[0]}"] = v
        elif kind == "loop":
            raise _nm(source, f"{w}.loop", "a loop inside a loop's body has no rt-app form")
        else:
            raise _nm(source, f"{w}.{kind}", f"the {kind} op has no rt-app form")
    return ev


#: The policies each rt-app knows: Debian's 1.0 has no SCHED_BATCH or SCHED_IDLE.
TARGET_POLICIES = {
    "1.0": ("SCHED_OTHER", "SCHED_FIFO", "SCHED_RR"),
    "head": ("SCHED_OTHER", "SCHED_BATCH", "SCHED_IDLE", "SCHED_FIFO", "SCHED_RR"),
}


def _export_phases(items: Sequence[Mapping[str, Any]], base: str, source: str, n: list[int]) -> dict[str, Any]:
    """A program's top level as rt-app phases: each loop a phase with its
    count, each run of plain ops between them a phase of one iteration."""
    phases: dict[str, Any] = {}
    plain: list[Mapping[str, Any]] = []

    def flush(at: int) -> None:
        if plain:
            phases[f"p{len(phases)}"] = {"loop": 1, **_export_ops(plain, f"{base}@{at}", source, n)}
            plain.clear()

    for j, op in enumerate(items):
        if "loop" in op:
            flush(j)
            lp = op["loop"]
            count = int(lp.get("count", 0))
            phases[f"p{len(phases)}"] = {
                "loop": -1 if count == 0 else count,
                **_export_ops(lp.get("body") or [], f"{base}[{j}].loop.body", source, n),
            }
        elif "exit" in op and j == len(items) - 1:
            continue  # the thread ends with its phases
        else:
            plain.append(op)
    flush(len(items))
    return phases


#: rt-app keeps the calibration (ns per loop) and the CPU number in a C int.
MAX_CALIBRATION = 2**31 - 1
_CALIBRATION_ACCEPTED = (
    f"CPUn, the CPU rt-app calibrates on at start (n from 0 to {MAX_CPU}), or the ns per loop as an integer "
    f"from 1 to {MAX_CALIBRATION}"
)


def check_calibration(value: object, flag: str = "--calibration") -> str | int:
    """rt-app's ``global.calibration``: ``"CPUn"`` (a CPU to measure on at
    start) or a positive integer of ns per loop (pLoad), given as an int or
    as its digits; anything else is SL001 naming ``flag``."""
    if isinstance(value, int) and not isinstance(value, bool):
        n = value
    elif isinstance(value, str):
        m = re.fullmatch(r"CPU([0-9]{1,6})", value)
        if m is not None and int(m.group(1)) <= MAX_CPU:
            return f"CPU{int(m.group(1))}"
        if not re.fullmatch(r"[0-9]{1,12}", value):
            raise UsageError("SL001", f"{flag} {cut(value)}: accepted: {_CALIBRATION_ACCEPTED}")
        n = int(value)
    else:
        raise UsageError("SL001", f"{flag}={cut(value)}: accepted: {_CALIBRATION_ACCEPTED}, not {type(value).__name__}")
    if not 1 <= n <= MAX_CALIBRATION:
        raise UsageError("SL001", f"{flag} {n}: accepted: {_CALIBRATION_ACCEPTED}")
    return n


def export(scenario: Path, text: str, *, target: str = "1.0", calibration: str | int = "CPU0") -> dict[str, Any]:
    """The scenario's workload as an rt-app JSON document for rt-app
    ``target`` (``"1.0"``, Debian's, or ``"head"``); ``calibration``: rt-app's
    (``"CPU0"`` measures ns per loop at start, an integer is pLoad)."""
    calibration = check_calibration(calibration, "calibration")
    if target not in TARGET_POLICIES:
        raise UsageError("SL001", f"--target {target}: accepted: {', '.join(TARGET_POLICIES)}")
    from schedlab.scenarios import parse_toml

    source = str(scenario)
    doc = parse_toml(expand_scenario(text, scenario), source)
    for k in ("channel", "rt_migrate_test", "dbench", "memory"):
        if k in doc:
            raise _nm(source, k, f"[{k}] has no rt-app form")
    duration = (doc.get("measure") or {}).get("duration")
    g: dict[str, Any] = {
        "default_policy": "SCHED_OTHER",
        "calibration": calibration,
        "log_size": "disable",
        "lock_pages": False,
    }
    if duration is None:
        g["duration"] = -1
    else:
        us = _whole_us(duration, "measure.duration", source)
        if us % 1_000_000:
            raise _nm(source, "measure.duration", "rt-app's duration is whole seconds")
        g["duration"] = us // 1_000_000
    tasks: dict[str, Any] = {}
    for i, t in enumerate(doc.get("task") or []):
        where = f"task[{i}]"
        if t.get("kthread"):
            raise _nm(source, f"{where}.kthread", "kernel threads have no rt-app form")
        pol = str(t.get("policy", "SCHED_NORMAL")).upper()
        pol = {"SCHED_NORMAL": "SCHED_OTHER", "SCHED_OTHER": "SCHED_OTHER"}.get(pol, pol)
        if pol not in TARGET_POLICIES[target]:
            raise _nm(
                source,
                f"{where}.policy",
                f"rt-app {target} has no {pol}",
                f"{', '.join(TARGET_POLICIES[target])} (--target head for SCHED_BATCH/IDLE)",
            )  # fmt: skip
        task: dict[str, Any] = {"instance": int(t.get("count", 1)), "policy": pol}
        task["priority"] = int(t.get("rt_priority", 10)) if pol in ("SCHED_FIFO", "SCHED_RR") else int(t.get("nice", 0))
        if "cpus" in t:
            task["cpus"] = _cpulist(t["cpus"])
        if "start" in t:
            task["delay"] = _whole_us(t["start"], f"{where}.start", source)
        prog = list(t.get("program") or [])
        n = [0]
        forever = len(prog) == 1 and "loop" in prog[0] and int(prog[0]["loop"].get("count", 0)) == 0
        items = prog[0]["loop"]["body"] if forever else prog
        base = f"{where}.program" + ("[0].loop.body" if forever else "")
        phases = _export_phases(items, base, source, n)
        if not phases:
            raise _nm(source, f"{where}.program", "a task with no ops has no rt-app form")
        task["loop"] = -1 if forever else 1
        task["phases"] = phases
        tasks[str(t.get("name"))] = task
    if not tasks:
        raise _bad(source, "task", "no tasks", "at least one [[task]]")
    return {"global": g, "tasks": tasks}
