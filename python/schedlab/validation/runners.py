"""The two sides of a validation row. The simulator's: one run of the
scenario at the oracle kernel's version, its report and (for the wakeup-delay
percentiles) its sched trace. The real one: the scenario under the QEMU
oracle (:func:`schedlab.qemu.run_in_guest`, icount shift=0, with the static
``schedlab-runner``, built if missing), on this kernel (``--local``), or a
report kept earlier (``--save-real`` / ``--real-from``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schedlab import native
from schedlab.errors import TopologyError, UsageError
from schedlab.metrics import ReportView, percentile
from schedlab.overrides import Override, toml_literal
from schedlab.report import write_json
from schedlab.scenarios import read_text
from schedlab.validation.suite import REPO, Entry

__all__ = [
    "GUEST_TIMEOUT_S",
    "KERNEL_SIM_SET",
    "RealRunner",
    "Side",
    "kept_real",
    "local_real",
    "note",
    "qemu_real",
    "real_side",
    "run_sim",
    "saving_real",
    "sim_side",
    "sim_wakeup_delays_us",
    "static_runner",
    "trace_delays_us",
]

RUNNER_TARGET = "x86_64-unknown-linux-gnu"
STATIC_RUNNER = REPO / "target" / RUNNER_TARGET / "release" / "schedlab-runner"
#: Simulator overrides per oracle kernel, beyond ``kernel.version``: what the
#: simulator cannot model of that kernel and refuses (SL120) unless turned off.
#: 6.12 runs DELAY_DEQUEUE (default on since 6.12), which schedlab does not
#: model: the simulation runs without it, the guest with it -- a known gap
#: the results carry under "sim_overrides".
KERNEL_SIM_SET: dict[str, tuple[Override, ...]] = {"6.12": (("kernel.features", '["NO_DELAY_DEQUEUE"]'),)}
#: Wall seconds a guest may take (TCG at shift=0 is slow: ~10 s per busy guest CPU-second).
GUEST_TIMEOUT_S = 900.0


# ---------------------------------------------------------------- the sides


@dataclass(frozen=True)
class Side:
    """One side of a comparison: its report (read over its measurement
    window) and where its wakeup-delay percentiles come from: ``(task comm,
    or None for every task, p) -> us``."""

    report: ReportView
    wakeup_us: Callable[[str | None, float], float | None]


def real_side(doc: Mapping[str, Any]) -> Side:
    """A real run's side: the runner's report has the percentiles."""
    rep = ReportView(doc)
    return Side(rep, rep.wakeup_delay_us)


def sim_side(report: Mapping[str, Any], trace: str | None) -> Side:
    """The simulator's side: its report, and the wakeup delays of its sched
    trace text (``trace``) over the report's measurement window."""
    rep = ReportView(report)
    delays = sim_wakeup_delays_us(report, trace) if trace is not None else {}

    def pct(comm: str | None, p: float) -> float | None:
        vals = delays.get(comm, []) if comm is not None else [d for v in delays.values() for d in v]
        return percentile(vals, p)

    return Side(rep, pct)


# TODO(report): replace with the report's timer-delay fields
def sim_wakeup_delays_us(report: Mapping[str, Any], trace: str) -> dict[str, list[float]]:
    """Wakeup delays (us) per task comm in the report's measurement window,
    from the run's ftrace text (see :func:`trace_delays_us`): the simulator's
    report does not carry them measured as the runner measures them yet."""
    window = ReportView(report).window_ns or (0.0, 0.0)
    pids = {int(t["pid"]): str(t["comm"]) for t in report.get("tasks") or []}
    return trace_delays_us(trace, pids, window[0] / 1e9, window[1] / 1e9)


_TRACE_RE = re.compile(r"\s(\d+\.\d+): (sched_wakeup|sched_switch|hrtimer_start): (.*)$")


def trace_delays_us(trace: str, pids: Mapping[int, str], start_s: float, end_s: float) -> dict[str, list[float]]:
    """Wakeup delays (us) per comm from ftrace text, measured as the runner
    measures them: from the sleep timer's expiry (the ``softexpires`` of the
    task's last ``hrtimer_start``, so hrtimer slack counts) or, for a wakeup
    without a timer, from its ``sched_wakeup``, to the next ``sched_switch``
    to the task. Wakeups in [start_s, end_s] only."""
    armed: dict[int, float] = {}
    pending: dict[int, float] = {}
    out: dict[str, list[float]] = {c: [] for c in pids.values()}
    for line in trace.splitlines():
        m = _TRACE_RE.search(line)
        if not m:
            continue
        t = float(m.group(1))
        kv = dict(x.split("=", 1) for x in m.group(3).replace(" ==> ", " ").split() if "=" in x)
        event = m.group(2)
        if event == "hrtimer_start":
            pid = _pid_of_line(line)
            if pid in pids:
                armed[pid] = int(kv.get("softexpires", "0")) / 1e9
        elif event == "sched_wakeup":
            pid = int(kv.get("pid", -1))
            since = armed.pop(pid, t)
            if pid in pids and start_s <= t <= end_s and pid not in pending:
                pending[pid] = min(since, t)
        else:
            pid = int(kv.get("next_pid", -1))
            if pid in pending:
                out[pids[pid]].append((t - pending.pop(pid)) * 1e6)
    return out


_WHO_RE = re.compile(r"^\s*\S+-(\d+)\s+\[")


def _pid_of_line(line: str) -> int:
    """The pid of the task an ftrace line was recorded in (``comm-PID [CPU]``)."""
    m = _WHO_RE.match(line)
    return int(m.group(1)) if m else -1


# ---------------------------------------------------------------- the simulator


def note(msg: str) -> None:
    """A progress line on stderr."""
    print(f"  {msg}", file=sys.stderr, flush=True)


def run_sim(entry: Entry, kernel: str, seed: int) -> Side:
    """The simulator at ``kernel`` with the entry's ``sim_set``: one run, its
    report (window counters) and its sched trace (wakeup delays)."""
    text = read_text(entry.file)
    source = str(entry.file)
    overrides: list[Override] = [
        ("kernel.version", toml_literal(kernel)),
        *KERNEL_SIM_SET.get(kernel, ()),
        *entry.sim_set,
    ]
    with tempfile.TemporaryDirectory(prefix="schedlab-validate-") as tmp:
        trace_path = str(Path(tmp) / "trace.txt")
        report = native.run(text, source, seed, overrides, False, trace_path)
        trace = Path(trace_path).read_text(encoding="utf-8", errors="replace")
    return sim_side(report, trace)


# ---------------------------------------------------------------- real runs


def static_runner(progress: Callable[[str], None] = note) -> Path:
    """The static runner for the guest: ``$SCHEDLAB_RUNNER`` if set, else the
    checkout's target/x86_64-unknown-linux-gnu/release, built like `make runner`."""
    env = os.environ.get("SCHEDLAB_RUNNER")
    if env:
        p = Path(env)
        if not (p.is_file() and os.access(p, os.X_OK)):
            raise UsageError("SL001", f"SCHEDLAB_RUNNER={env}: not an executable file")
        return p
    if STATIC_RUNNER.is_file():
        return STATIC_RUNNER
    cargo = shutil.which("cargo")
    if cargo is None or not (REPO / "Cargo.toml").is_file():
        raise UsageError("SL001", f"{STATIC_RUNNER} is missing and cargo is not available; accepted: `make runner`")
    progress(f"building the static runner ({STATIC_RUNNER.relative_to(REPO)}) ...")
    env_vars = dict(os.environ, RUSTFLAGS="-C target-feature=+crt-static")
    cmd = [cargo, "build", "--release", "-p", "schedlab-runner", "--target", RUNNER_TARGET]
    r = subprocess.run(cmd, cwd=REPO, env=env_vars, check=False)
    if r.returncode != 0 or not STATIC_RUNNER.is_file():
        raise UsageError("SL001", f"building the static runner failed (status {r.returncode}); try `make runner`")
    return STATIC_RUNNER


RealRunner = Callable[[Entry], Mapping[str, Any]]


def qemu_real(kernel: str, progress: Callable[[str], None] = note) -> RealRunner:
    from schedlab import qemu

    orc = qemu.find_oracle()  # SL300 now, before any simulation, when it is missing
    runner = static_runner(progress)

    def run(entry: Entry) -> Mapping[str, Any]:
        return qemu.run_in_guest(entry.file, runner, kernel=kernel, shift=0, timeout=GUEST_TIMEOUT_S, oracle=orc)

    return run


def local_real(entries: Sequence[Entry]) -> RealRunner:
    from schedlab import real

    host = os.cpu_count() or 1
    too_big = []
    for e in entries:
        nr = int((native.check(read_text(e.file), str(e.file), []).get("machine") or {}).get("nr_cpus") or 0)
        if nr > host:
            too_big.append(f"{e.name} ({nr} CPUs)")
    if too_big:
        fits = [e.name for e in entries if not any(t.startswith(e.name + " ") for t in too_big)]
        raise TopologyError(
            "SL110",
            f"--local: this host has {host} CPUs; a real run cannot create CPUs, so these scenarios cannot run "
            f"here: {', '.join(too_big)}; accepted: --only with scenarios of at most {host} CPUs"
            + (f" ({' '.join(fits)})" if fits else "")
            + ", or the QEMU oracle (drop --local)",
        )
    runner = real.find_runner()

    def run(entry: Entry) -> Mapping[str, Any]:
        return real.run_real(str(entry.file), runner=runner)

    return run


def saving_real(inner: RealRunner, directory: str) -> RealRunner:
    """Keep every real report the inner runner returns (re-judge a model change later with --real-from)."""
    d = Path(directory)
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError("SL001", f"--save-real {directory}: cannot create: {e.strerror or e}") from None

    def run(entry: Entry) -> Mapping[str, Any]:
        doc = inner(entry)
        write_json(str(d / f"{entry.file.stem}.json"), doc)
        return doc

    return run


def kept_real(directory: str) -> RealRunner:
    """Real reports kept by --save-real, one per scenario file."""

    def run(entry: Entry) -> Mapping[str, Any]:
        p = Path(directory) / f"{entry.file.stem}.json"
        try:
            doc = json.loads(p.read_text(encoding="utf-8"))
        except OSError as e:
            raise UsageError(
                "SL001",
                f"--real-from {directory}: no kept report for {entry.name} ({p}): {e.strerror or e}; "
                "accepted: a directory written by --save-real",
            ) from None
        except ValueError as e:
            raise UsageError("SL001", f"--real-from {directory}: {p} is not JSON: {e}") from None
        if not isinstance(doc, dict):
            raise UsageError("SL001", f"--real-from {directory}: {p} is not a report object")
        return doc

    return run
