"""rt-app workloads in and out (docs/FORMATS.md §1).

In: the core reads rt-app JSON itself (``schedlab_core::scenario::rtapp``,
its module doc says what each key becomes and what is refused, with the
rt-app key path): ``schedlab run WORKLOAD.json --machine PRESET [--kernel
VERSION]`` (``schedlab._native.run(..., rtapp=True)``), or a scenario with a
top-level ``rtapp = "FILE.json"`` (expanded by the core when it parses the
scenario). This module only asks the core: :func:`loads` (the file as
rt-app's json-c reads it) and :func:`import_workload` (the ``[[task]]``
groups it becomes).

Out: ``schedlab export-rtapp SCENARIO`` writes the workload as rt-app JSON
that Debian's rt-app 1.0 runs (always with ``phases``, unique event keys,
timers ``unique``). It refuses what rt-app cannot express: kernel threads,
channels, ``[rt_migrate_test]``, ``[dbench]``, memory, ``[[cgroup]]``, ops other than the
ones above and ``loop``, a loop inside a loop's body, a distribution
instead of a fixed duration, a timer anchored at its first use, a duration
that is not whole seconds. The machine and the kernel are not part of an
rt-app file: rt-app runs on the machine it is started on. The scenario is
read through the core (``scenario_tree``: ``rtapp`` expanded); only the
JSON it writes is made here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from schedlab import native
from schedlab.args import cut
from schedlab.errors import NotModelledError, ScenarioError, UsageError

__all__ = ["check_calibration", "export", "import_workload", "loads", "to_scenario"]

#: The largest CPU number (NR_CPUS - 1), as the core takes it.
MAX_CPU = 8191


def loads(text: str, source: str) -> dict[str, Any]:
    """An rt-app file's JSON, read by the core as rt-app's json-c reads it
    (comments, trailing commas, a duplicated key's last value in its first
    place; nesting at most 64 deep). SL100 naming the file, line and column."""
    doc = native.rtapp_loads(text, source)
    if not isinstance(doc, dict):
        raise ScenarioError(
            "SL100", f"{source}: syntax error: not rt-app JSON: an rt-app file is a JSON object with 'tasks'"
        )
    return doc


def import_workload(text: str, source: str) -> tuple[list[dict[str, Any]], int]:
    """(the ``[[task]]`` groups, ``global.duration`` in s or -1) of an rt-app
    file, as the core imports it; refusals name the rt-app key path."""
    out = native.rtapp_import(text, source)
    return list(out["task"]), int(out["duration"])


def to_scenario(doc: Mapping[str, Any], source: str) -> tuple[list[dict[str, Any]], int]:
    """:func:`import_workload` of a document given as Python objects."""
    return import_workload(json.dumps(doc), source)


#: What an rt-app file may hold, for the refusals' "accepted".
_ACCEPTED = (
    "SCHED_OTHER/BATCH/IDLE/FIFO/RR/DEADLINE tasks with instance, delay, loop, phases, priority, "
    "dl-runtime/period/deadline, cpus (the same in every phase), taskgroup (one per thread) and the events run, "
    "runtime, sleep, timer (a "
    "unique ref), barrier, yield, lock, unlock"
)


def _nm(source: str, path: str, why: str, accepted: str = _ACCEPTED) -> NotModelledError:
    return NotModelledError("SL120", f"{source}: {path}: {why}; accepted: {accepted}")


def _bad(source: str, path: str, what: str, accepted: str) -> ScenarioError:
    return ScenarioError("SL102", f"{source}: {path}: {what}; accepted: {accepted}")


def _show(v: Any) -> str:
    """A value for a message: a scalar's repr, cut; a container by its kind and size."""
    if isinstance(v, dict):
        return f"an object of {len(v)} key(s)"
    if isinstance(v, list):
        return f"a list of {len(v)} item(s)"
    return cut(v)


# -------------------------------------------------------------- toml -> rt-app


def _cpulist(v: Any) -> list[int]:
    """A scenario's ``cpus`` (a list, or a cpulist string the core parses)."""
    if isinstance(v, list):
        return [int(x) for x in v]
    return native.parse_cpulist(str(v))


def _whole_us(v: Any, where: str, source: str) -> int:
    if not isinstance(v, str):
        raise _nm(source, where, "a distribution has no rt-app form (rt-app takes fixed durations)")
    try:
        ns = native.parse_duration_ns(v)
    except ValueError as e:
        raise _bad(source, where, str(e).split("; accepted")[0], "a duration") from None
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
    "1.0": ("SCHED_OTHER", "SCHED_FIFO", "SCHED_RR", "SCHED_DEADLINE"),
    "head": ("SCHED_OTHER", "SCHED_BATCH", "SCHED_IDLE", "SCHED_FIFO", "SCHED_RR", "SCHED_DEADLINE"),
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
    source = str(scenario)
    doc = native.scenario_tree(text, source, [])
    for k in ("channel", "rt_migrate_test", "dbench", "memory"):
        if k in doc:
            raise _nm(source, k, f"[{k}] has no rt-app form")
    for i, c in enumerate(doc.get("cgroup") or []):
        # rt-app's "taskgroup" (upstream only) puts a thread in a cpu cgroup
        # and sets none of its files.
        if target != "head":
            raise _nm(source, "cgroup", f"rt-app {target} has no taskgroup", "--target head for [[cgroup]]s")
        files = sorted(k for k in c if k != "path")
        if files:
            raise _nm(
                source,
                f"cgroup[{i}].{files[0]}",
                "rt-app's taskgroup sets no cgroup file",
                "[[cgroup]]s of the kernel's defaults (a path only)",
            )
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
        if t.get("sched_flags"):
            raise _nm(source, f"{where}.sched_flags", "rt-app sets SCHED_DEADLINE without sched_flags (no reclaiming)")
        if pol == "SCHED_DEADLINE":
            # rt-app's dl-period defaults to dl-runtime, schedlab's
            # sched_period to the deadline: all three are written.
            runtime = _whole_us(t["sched_runtime"], f"{where}.sched_runtime", source)
            deadline = _whole_us(t["sched_deadline"], f"{where}.sched_deadline", source)
            period = _whole_us(t.get("sched_period", t["sched_deadline"]), f"{where}.sched_period", source)
            task.update({"dl-runtime": runtime, "dl-period": period or deadline, "dl-deadline": deadline})
        else:
            rt = pol in ("SCHED_FIFO", "SCHED_RR")
            task["priority"] = int(t.get("rt_priority", 10)) if rt else int(t.get("nice", 0))
        if "cpus" in t:
            task["cpus"] = _cpulist(t["cpus"])
        if "start" in t:
            task["delay"] = _whole_us(t["start"], f"{where}.start", source)
        if "cgroup" in t:
            task["taskgroup"] = str(t["cgroup"])
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
