"""Real-kernel runs and sim-vs-real comparison.

    schedlab real SCENARIO [--repeat N] [--json FILE] [--set KEY=VALUE]... [--quiet]
    schedlab compare SIM.json REAL.json

``real`` runs the scenario's tasks as real threads on the local kernel with the
runner built into the native module (``python -m schedlab.runner``; or the
``schedlab-runner`` binary named by ``SCHEDLAB_RUNNER``), ``--repeat`` times, and reports the median of every number
over the runs in the simulator's report shape (plus ``"source": "real"``).
``compare`` prints per-task CPU share, per-CPU %idle, migrations and switches
per second from a ``schedlab run --json`` report beside a ``schedlab real`` one,
each over its measurement window (read through ``schedlab.metrics``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from schedlab import native
from schedlab.errors import (
    HostError,
    InternalError,
    NotModelledError,
    ScenarioError,
    SchedlabError,
    TopologyError,
    UsageError,
)
from schedlab.metrics import ReportView
from schedlab.overrides import Override, parse_set_arg
from schedlab.report import format_run_report, write_json
from schedlab.scenarios import resolve, scenario_text

__all__ = [
    "HostError",
    "cmd_compare",
    "cmd_real",
    "compare_rows",
    "find_runner",
    "format_compare",
    "median_reports",
    "run_real",
]

RUNNER_ENV = "SCHEDLAB_RUNNER"
RUNNER_NAME = "schedlab-runner"

#: Keys whose value is an identity or a setting, not a measurement: taken from the first run.
_NOT_MEASURED = frozenset({"pid", "seed", "host", "cpu", "host_cpu", "last_cpu", "schedlab"})


_CLASSES: dict[str, type[SchedlabError]] = {
    "SL001": UsageError,
    "SL100": ScenarioError,
    "SL101": ScenarioError,
    "SL102": ScenarioError,
    "SL103": ScenarioError,
    "SL110": TopologyError,
    "SL120": NotModelledError,
    "SL300": HostError,
}


def find_runner() -> list[str]:
    """The runner's command (before its arguments): ``$SCHEDLAB_RUNNER`` if
    set, else the runner built into the native module (``python -m
    schedlab.runner``), which every install has."""
    env = os.environ.get(RUNNER_ENV)
    if env:
        p = Path(env)
        if not (p.is_file() and os.access(p, os.X_OK)):
            raise UsageError("SL001", f"{RUNNER_ENV}={env}: not an executable file; accepted: the schedlab-runner path")
        return [str(p)]
    if not hasattr(native.load(), "runner_main"):
        raise InternalError("SL900", "the native module has no runner_main: rebuild it (`make build`)")
    return [sys.executable, "-m", "schedlab.runner"]


def _runner_error(stderr: str, rc: int) -> SchedlabError:
    """Map ``schedlab-runner: error: [CODE] message`` onto the exception classes."""
    text = stderr.strip()
    for line in text.splitlines():
        _, sep, rest = line.partition("error: [")
        if sep:
            code, _, msg = rest.partition("] ")
            return _CLASSES.get(code, InternalError)(code, f"{RUNNER_NAME}: {msg}")
    return InternalError("SL900", f"{RUNNER_NAME} exited with status {rc}: {text or '(no message)'}")


def _median(values: list[Any]) -> Any:
    first = values[0]
    if isinstance(first, bool) or first is None or isinstance(first, str):
        return first
    if isinstance(first, (int, float)):
        nums = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if len(nums) != len(values):
            return first
        m = statistics.median(nums)
        if all(isinstance(v, int) for v in nums) and float(m).is_integer():
            return int(m)
        return m
    if isinstance(first, dict):
        out = {}
        for k in first:
            column = [v.get(k) if isinstance(v, dict) else None for v in values]
            out[k] = first[k] if k in _NOT_MEASURED else _median(column)
        return out
    if isinstance(first, list):
        lists = [v for v in values if isinstance(v, list)]
        if len(lists) != len(values):
            return first
        if first and all(isinstance(x, dict) and "comm" in x for x in first):
            # Tasks: by name (a fork may make one run longer than another).
            by_comm = [{x.get("comm"): x for x in lst if isinstance(x, dict)} for lst in lists]
            return [
                _median([b[x["comm"]] for b in by_comm]) if all(x["comm"] in b for b in by_comm) else x for x in first
            ]
        if any(len(v) != len(first) for v in lists):
            return first
        return [_median([v[i] for v in lists]) for i in range(len(first))]
    return first


def median_reports(reports: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One report whose every measured number is the median over ``reports``."""
    if not reports:
        raise InternalError("SL900", "median_reports: no reports")
    merged = _median(list(reports))
    assert isinstance(merged, dict)
    merged["repeat"] = len(reports)
    return merged


def scratch_dir() -> str:
    """Where a real run's `write` ops write: ``$SCHEDLAB_SCRATCH``, else
    /var/tmp (on most machines a disk, where /tmp may be tmpfs)."""
    return os.environ.get("SCHEDLAB_SCRATCH") or "/var/tmp"


def run_real(
    scenario: str,
    *,
    repeat: int = 1,
    overrides: Sequence[Override] = (),
    runner: Sequence[str] | None = None,
    progress: Callable[[str], None] | None = None,
    scratch: str | None = None,
) -> dict[str, Any]:
    """Run ``scenario`` on this kernel ``repeat`` times; the median report.
    ``scratch``: where its `write` ops write (the runner's --scratch)."""
    if repeat < 1:
        raise UsageError("SL001", f"--repeat {repeat}: accepted: an integer >= 1")
    path = resolve(scenario)
    text = scenario_text(path)
    source = str(path)
    summary = native.check(text, source, overrides)
    nr = int((summary.get("machine") or {}).get("nr_cpus") or 0)
    host = os.cpu_count() or 1
    if nr > host:
        raise TopologyError(
            "SL110",
            f"{source}: machine: the scenario's machine has {nr} CPUs but this host has {host}; a real run "
            f"cannot create CPUs; accepted: a machine of at most {host} CPUs (or simulate it: schedlab run)",
        )
    cmd = [*(runner or find_runner()), source, "--json", "-"]
    if scratch:
        cmd += ["--scratch", scratch]
    for k, v in overrides:
        cmd += ["--set", f"{k}={v}"]
    reports = []
    # The runner reads the scenario through the core too (an rtapp key included).
    for i in range(repeat):
        if progress:
            progress(f"real run {i + 1}/{repeat}: {' '.join(cmd)}")
        r = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if r.returncode != 0:
            raise _runner_error(r.stderr, r.returncode)
        try:
            reports.append(json.loads(r.stdout))
        except json.JSONDecodeError as e:
            raise InternalError("SL900", f"{RUNNER_NAME}: output is not JSON: {e}") from None
    return median_reports(reports)


# ---------------------------------------------------------------- compare


Row = tuple[str, "float | None", "float | None"]


def compare_rows(sim: Mapping[str, Any], real: Mapping[str, Any]) -> list[Row]:
    """(metric, sim, real) rows over each report's measurement window
    (schedlab.metrics): per-task CPU share (%), per-CPU %idle, migrations/s,
    switches/s."""
    a, b = ReportView(sim), ReportView(real)
    rows: list[Row] = []
    for comm in list(a.tasks) + [c for c in b.tasks if c not in a.tasks]:
        ta, tb = a.tasks.get(comm), b.tasks.get(comm)
        rows.append(
            (f"cpu share % {comm}", None if ta is None else a.share_pct(ta), None if tb is None else b.share_pct(tb))
        )
    ia, ib = a.idle(), b.idle()
    for cpu in list(ia) + [c for c in ib if c not in ia]:
        rows.append((f"%idle cpu {cpu}", ia.get(cpu), ib.get(cpu)))
    rows.append(("migrations/s", a.per_s(a.total_migrations()), b.per_s(b.total_migrations())))
    rows.append(("switches/s", a.per_s(a.switches()), b.per_s(b.switches())))
    return rows


def format_compare(rows: Sequence[Row], sim_name: str = "sim", real_name: str = "real") -> str:
    def f(x: float | None) -> str:
        return "-" if x is None else f"{x:.2f}"

    table = [["metric", sim_name, real_name, "difference"]]
    for metric, a, b in rows:
        diff = None if a is None or b is None else b - a
        table.append([metric, f(a), f(b), "-" if diff is None else f"{diff:+.2f}"])
    widths = [max(len(r[i]) for r in table) for i in range(4)]
    lines = []
    for r in table:
        lines.append("  ".join([r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:])]).rstrip())
    return "\n".join(lines)


# ---------------------------------------------------------------- commands (arguments: cli.py)


def _read_json(p: str) -> dict[str, Any]:
    try:
        doc = json.loads(Path(p).read_text(encoding="utf-8"))
    except OSError as e:
        raise UsageError("SL001", f"{p}: cannot read: {e.strerror or e}") from None
    except json.JSONDecodeError as e:
        raise UsageError("SL001", f"{p}: not JSON: {e}; accepted: a report from `schedlab run/real --json`") from None
    if not isinstance(doc, dict) or "tasks" not in doc:
        raise UsageError("SL001", f'{p}: not a schedlab report (no "tasks"); accepted: `schedlab run/real --json`')
    return doc


def cmd_real(args: argparse.Namespace) -> int:
    overrides = [parse_set_arg(s) for s in args.set]

    def progress(msg: str) -> None:
        print(f"  {msg}", file=sys.stderr, flush=True)

    report = run_real(
        args.scenario,
        repeat=args.repeat,
        overrides=overrides,
        progress=None if args.quiet else progress,
        scratch=scratch_dir(),
    )
    if args.json:
        write_json(args.json, report)
    if not args.quiet and args.json != "-":
        host = report.get("host") or {}
        print(
            f"real kernel {host.get('kernel_release', '?')} ({host.get('nr_cpus', '?')} CPUs), "
            f"median of {report.get('repeat', 1)} run(s)"
        )
        print(format_run_report(report))
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    sim, real = _read_json(args.sim), _read_json(args.real)
    print(format_compare(compare_rows(sim, real)))
    return 0
