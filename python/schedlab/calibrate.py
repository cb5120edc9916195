"""This machine's cost constants, measured.

    schedlab calibrate [--json FILE] [--quiet]

runs ``schedlab-runner --calibrate`` on this kernel: microbenchmarks on one
CPU, timed with the threads' own CPU clocks, that measure the values of the
simulator's ``kernel.costs`` keys a user's machine sets (a pipe's and a unix
socket's write and read, a blocking hand-off between two threads as the
simulator charges it, a thread's fork and exit). It prints them as a
``[kernel.costs]`` table to paste into a scenario, and ``--json`` keeps the
runner's report (``"source": "real-calibration"``).

``schedlab validate`` measures them the same way in the oracle's guest and
simulates the suite with them (``--costs measured``, its default), so that a
scenario is judged on the scheduler, not on how many instructions the
emulated machine spends per syscall. The microbenchmarks are not scenarios
of the suite: a scenario judged with them is still a prediction.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from collections.abc import Mapping, Sequence
from typing import Any

from schedlab.errors import InternalError, UsageError
from schedlab.overrides import Override, toml_literal
from schedlab.report import write_json

__all__ = ["KEYS", "OPTIONAL_KEYS", "check_calibration", "cmd_calibrate", "cost_overrides", "costs_table", "run_local"]

#: The keys the runner measures, in its order.
KEYS = ("pipe_write", "pipe_read", "unix_send", "unix_recv", "context_switch", "fork", "exit")
#: Measured only on a machine with a second CPU.
OPTIONAL_KEYS = (
    "timer_irq_delay",
    "timer_irq_spread",
    "idle_exit",
    "halt_poll",
    "wakeup_ipi",
    "proc_read_task",
    "proc_read_stat",
    "thread_start",
    # Measured where a scratch directory is on a disk (not in the QEMU guests).
    "write_page",
)


def check_calibration(doc: Any, where: str) -> dict[str, int]:
    """{key: median ns} of a calibration report; a clear error naming
    ``where`` if ``doc`` is not one."""
    if not isinstance(doc, Mapping) or doc.get("source") != "real-calibration":
        raise UsageError(
            "SL001",
            f"{where}: not a calibration report; accepted: the JSON of `schedlab calibrate --json` "
            '(or `schedlab-runner --calibrate`), with "source": "real-calibration"',
        )
    rows = (doc.get("calibration") or {}).get("costs")
    out: dict[str, int] = {}
    for i, r in enumerate(rows if isinstance(rows, list) else []):
        key, ns = (r.get("key"), r.get("median_ns")) if isinstance(r, Mapping) else (None, None)
        if key not in KEYS + OPTIONAL_KEYS or not isinstance(ns, int) or isinstance(ns, bool) or ns < 0:
            raise UsageError(
                "SL001",
                f"{where}: calibration.costs[{i}]: {json.dumps(r)}; accepted: "
                f"{{key: one of {', '.join(KEYS + OPTIONAL_KEYS)}; median_ns: an integer >= 0}}",
            )
        out[str(key)] = ns
    missing = [k for k in KEYS if k not in out]
    if missing:
        raise UsageError("SL001", f"{where}: calibration.costs lacks {', '.join(missing)}; accepted: all of {KEYS}")
    return out


def cost_overrides(costs: Mapping[str, int]) -> list[Override]:
    """``--set`` overrides ``kernel.costs.KEY = "Nns"`` for measured costs."""
    return [(f"kernel.costs.{k}", toml_literal(f"{ns}ns")) for k, ns in costs.items()]


def costs_table(doc: Mapping[str, Any]) -> str:
    """A ``[kernel.costs]`` TOML table of a calibration report, each key
    with its rounds' range and where it was measured."""
    check_calibration(doc, "calibration")
    host = doc.get("host") or {}
    oracle = doc.get("oracle") or {}
    where = f"{host.get('kernel_release', '?')}, CPU {(doc.get('calibration') or {}).get('cpu', '?')}"
    if oracle:
        where += f", QEMU oracle guest ({oracle.get('kernel')}, icount shift {oracle.get('shift')})"
    lines = [f"# measured by schedlab-runner --calibrate on {where}", "[kernel.costs]"]
    for r in (doc.get("calibration") or {}).get("costs") or []:
        lines.append(f'{r["key"]} = "{r["median_ns"]}ns"  # rounds {r["min_ns"]}-{r["max_ns"]} ns')
    return "\n".join(lines)


def run_local(runner: Sequence[str] | None = None) -> dict[str, Any]:
    """``schedlab-runner --calibrate`` on this kernel: its report."""
    from schedlab.real import _runner_error, find_runner

    cmd = [*(runner or find_runner()), "--calibrate", "--json", "-"]
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise _runner_error(r.stderr, r.returncode)
    try:
        doc = json.loads(r.stdout)
    except json.JSONDecodeError as e:
        raise InternalError("SL900", f"schedlab-runner --calibrate: output is not JSON: {e}") from None
    check_calibration(doc, "schedlab-runner --calibrate")
    return dict(doc)


def cmd_calibrate(args: argparse.Namespace) -> int:
    doc = run_local()
    if args.json:
        write_json(args.json, doc)
    if not args.quiet and args.json != "-":
        print(costs_table(doc))
    return 0


def table_of(costs: Mapping[str, int], keys: Sequence[str] = KEYS + OPTIONAL_KEYS) -> str:
    """One line, ``key=N ns`` each, for progress and notes."""
    return ", ".join(f"{k} {costs[k]} ns" for k in keys if k in costs)
