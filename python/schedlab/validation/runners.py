"""The two sides of a validation row. The simulator's: one run of the
scenario at the oracle kernel's version and its report. The real one: the scenario under the QEMU
oracle (:func:`schedlab.qemu.run_in_guest`, icount shift=0, with the static
``schedlab-runner``, built if missing), on this kernel (``--local``), or a
report kept earlier (``--save-real`` / ``--real-from``).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schedlab import native
from schedlab._paths import checkout
from schedlab.errors import TopologyError, UsageError
from schedlab.metrics import MetricError, ReportView
from schedlab.overrides import Override, toml_literal
from schedlab.report import write_json
from schedlab.scenarios import read_text
from schedlab.validation.suite import Entry

__all__ = [
    "CALIBRATION_FILE",
    "GUEST_TIMEOUT_S",
    "RUNNER_START",
    "RUNS_KEY",
    "RUN_SEPARATOR",
    "START_PHASE",
    "RealRunner",
    "Side",
    "host_cpuidle",
    "host_preempt",
    "host_series",
    "host_sets",
    "kept_calibration",
    "kept_host_sets",
    "kept_is_local",
    "kept_real",
    "kept_series",
    "local_real",
    "local_tool",
    "note",
    "qemu_calibration",
    "qemu_real",
    "real_side",
    "repeated_real",
    "run_sim",
    "runner_read_sets",
    "save_calibration",
    "save_host_sets",
    "saving_real",
    "sim_side",
    "sim_version",
    "static_runner",
]

RUNNER_TARGET = "x86_64-unknown-linux-gnu"
STATIC_RUNNER = Path("target") / RUNNER_TARGET / "release" / "schedlab-runner"


def _series_of(release: str) -> str | None:
    """The leading major.minor of a kernel release string (``6.18`` of
    ``6.18.44-fc-v657``), for the core's version reader; None if none."""
    parts = release.split(".")
    if len(parts) < 2 or not parts[0].isdigit():
        return None
    minor = "".join(itertools.takewhile(str.isdigit, parts[1]))
    return f"{parts[0]}.{minor}" if minor else None


def host_series() -> str:
    """This host's kernel series (``6.18`` of ``6.18.44-fc-v657``), read by
    the core: the version ``validate --local`` simulates (a series newer
    than every modelled one runs the newest mechanisms, with the core's
    note). ``UsageError`` (SL001) if the core cannot read the release."""
    rel = os.uname().release
    try:
        series = _series_of(rel)
        if series is None:
            raise ValueError(rel)
        return str(native.kernel_version(series)["version"])
    except ValueError:
        raise UsageError("SL001", f"--local: this host's kernel release {rel!r} is not a version the core reads; "
                         "accepted: --kernel 6.1|6.12 to name the version to simulate") from None  # fmt: skip


def host_cpuidle() -> str | None:
    """This host's cpuidle table as ``machine.cpuidle`` names it, when the
    model has it: ``haltpoll`` for a KVM guest's haltpoll driver (this
    machine's); None for any other driver or none."""
    try:
        driver = Path("/sys/devices/system/cpu/cpuidle/current_driver").read_text().strip()
    except OSError:
        return None
    return "haltpoll" if driver == "haltpoll" else None


def host_sets() -> list[Override]:
    """What every simulator run judged against this host takes before the
    scenario's own settings: its preemption model and cpuidle driver, when
    they can be read and the model has them."""
    out: list[Override] = []
    preempt = host_preempt()
    if preempt is not None:
        # Read from PREEMPT_DYNAMIC's boot choice: the build is preemptible.
        out.append(("kernel.preempt", toml_literal(preempt)))
        out.append(("kernel.preempt_dynamic", "true"))
    idle = host_cpuidle()
    if idle is not None:
        out.append(("machine.cpuidle", toml_literal(idle)))
    return out


def host_preempt() -> str | None:
    """This kernel's preemption model ("none", "voluntary", "full", "lazy"), or
    None when it cannot be read: debugfs's sched/preempt names the one in
    force in parentheses under PREEMPT_DYNAMIC; without debugfs, the boot
    log's "Dynamic Preempt: X" line (this machine's: none)."""
    models = ("none", "voluntary", "full", "lazy")
    try:
        # "none voluntary (full)": the one in force in parentheses.
        for word in Path("/sys/kernel/debug/sched/preempt").read_text().split():
            if word.startswith("(") and word.endswith(")"):
                return word[1:-1] if word[1:-1] in models else None
    except OSError:
        pass
    try:
        r = subprocess.run(["dmesg"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = [ln.split("Dynamic Preempt: ", 1)[1].split() for ln in r.stdout.splitlines() if "Dynamic Preempt: " in ln]
    last = found[-1][0] if found and found[-1] else None
    return last if last in models else None


def sim_version(kernel: str, doc: Mapping[str, Any]) -> str:
    """The ``kernel.version`` the simulator runs against the real run
    ``doc`` of ``kernel``: the guest's exact stable release when it is of
    that series, else the series itself (its newest stable). Stable
    backports are gated on the release that brought them. Debian names 6.1
    kernels ``6.1.0-50-amd64``: the release is read from ``uname -v``
    (``... Debian 6.1.176-1 ...``) first, then from ``uname -r``."""
    host = doc.get("host") or {}
    texts = (host.get("kernel_version"), host.get("kernel_release"), (doc.get("oracle") or {}).get("release"))
    for pattern, text in zip((r"Debian (\d+)\.(\d+)\.(\d+)", r"(\d+)\.(\d+)\.(\d+)", r"(\d+)\.(\d+)\.(\d+)"), texts):
        m = re.search(pattern, str(text or ""))
        if m and f"{m[1]}.{m[2]}" == kernel and (pattern.startswith("Debian") or m[3] != "0"):
            return f"{m[1]}.{m[2]}.{m[3]}"
    return kernel


def runner_read_sets(doc: Mapping[str, Any]) -> list[Override]:
    """The runner's own reads as its report timed them in this run
    (``real.read_task_ns``, ``real.read_stat_ns``: its main thread's CPU
    clock), its threads' start-up (``real.thread_start_ns``) and its own
    share of their creation (``real.fork_ns``), as ``kernel.costs``
    ``proc_read_task``, ``proc_read_stat``, ``thread_start`` and ``fork``
    overrides: the instrument's cost on that machine, which in a QEMU guest
    grows with the busy vCPUs, so no calibration in a two-CPU guest gives
    it. Nothing from a report that lacks them (a runner before they were kept)."""
    real = doc.get("real") or {}
    out: list[Override] = []
    fields = (
        ("read_task_ns", "proc_read_task"),
        ("read_stat_ns", "proc_read_stat"),
        ("thread_start_ns", "thread_start"),
        ("fork_ns", "fork"),
    )
    for field, key in fields:
        ns = real.get(field) if isinstance(real, Mapping) else None
        if isinstance(ns, int) and not isinstance(ns, bool) and 0 <= ns <= 1_000_000_000:
            out.append((f"kernel.costs.{key}", toml_literal(f"{ns}ns")))
    out += writeback_sets(doc)
    return out


def writeback_sets(doc: Mapping[str, Any]) -> list[Override]:
    """With writes: the disk's bandwidth as the run wrote back through it
    (/proc/vmstat nr_written over the window), as `machine.disk.0.bandwidth`:
    the device's speed is a fact of the machine, not of the mechanism the
    rows judge (the dirty pages' level and the writers' pauses). Nothing
    when the run held the disk to the scenario's bandwidth (`enforce`: its
    device row)."""
    wb = (doc.get("mm") or {}).get("writeback") if isinstance(doc.get("mm"), Mapping) else None
    m = doc.get("measure") or {}
    if not isinstance(wb, Mapping) or not isinstance(m, Mapping) or wb.get("devices"):
        return []
    pages, start, end = wb.get("nr_written"), m.get("start_ns"), m.get("end_ns")
    if not (isinstance(pages, int) and isinstance(start, int) and isinstance(end, int)) or end <= start:
        return []
    kib_s = pages * 4 * 1_000_000_000 // (end - start)
    return [("machine.disk.0.bandwidth", toml_literal(f"{max(kib_s, 1)}KiB/s"))] if pages > 0 else []


#: Wall seconds a guest may take (TCG at shift=0 is slow: ~10 s per busy guest CPU-second).
GUEST_TIMEOUT_S = 900.0


# ---------------------------------------------------------------- the sides


@dataclass(frozen=True)
class Side:
    """One side of a comparison: its report, read over its measurement
    window, timer-delay percentiles included (the simulator's report and
    the runner's measure them the same way: from the sleep timer's expiry)."""

    report: ReportView
    #: The raw report (the simulator's or the runner's), or a real tool's
    #: run: {"source": "real-tool", "oracle": {...}, "tool": {"argv", "stdout", "stderr"}}.
    raw: Mapping[str, Any] | None = None
    #: A repeated side's runs: each metric is then the median of its value
    #: on each run (not its value on the report of medians, which mixes
    #: runs: two boots that filled different nodes have a median report
    #: with no spread at all).
    runs: tuple[Side, ...] = ()

    def tool_value(self, metric: str, thread: int | None) -> float | None:
        """A tool metric: what the real tool printed, or the simulator's
        figure for the same thing (the run's elapsed time; the timer
        delays of task ``cyclictest-N``, from the timer's expiry to its
        return to user space)."""
        raw = self.raw or {}
        if raw.get("source") == "real-tool":
            return parse_tool_output(str((raw.get("tool") or {}).get("stdout", "")), metric, thread)
        tasks = [t for t in raw.get("tasks", []) if isinstance(t, Mapping)]
        if metric == "tool_time":
            ends = [t.get("exit_ns") for t in tasks]
            if not ends or any(e is None for e in ends):
                return None
            last = max(int(e) for e in ends if e is not None)
            return (last - min(int(t.get("start_ns") or 0) for t in tasks)) / 1e9
        comm = f"cyclictest-{thread}"
        row = next((t for t in tasks if t.get("comm") == comm), None)
        if row is None:
            raise MetricError(f"task {comm!r}", [str(t.get("comm")) for t in tasks])
        v = row.get("timer_delay_avg_ns" if metric == "latency_avg" else "timer_delay_max_ns")
        return None if v is None else float(v) / 1000.0

    def timer_delay_us(self, comm: str | None, p: float) -> float | None:
        """The ``p``-th percentile timer delay of task ``comm`` (None: every
        task together), us."""
        return self.report.timer_delay_us(comm, p)


def parse_tool_output(out: str, metric: str, thread: int | None) -> float | None:
    """What perf bench / hackbench / cyclictest printed: ``tool_time`` (s)
    from perf's "Total time: X [sec]" or hackbench's "Time: X";
    ``latency_avg`` / ``latency_max`` (us) from cyclictest's "T: N (...) ...
    Avg: A Max: M" line of thread N; the median when the output holds
    several runs'. None: not in the output."""
    if metric == "tool_time":
        found = re.finditer(r"Total time:\s*([\d.]+)\s*\[sec\]|^Time:\s*([\d.]+)", out, re.M)
        vals = [float(m[1] or m[2]) for m in found]
    else:
        lines = (re.match(r"T:\s*(\d+)\s.*Avg:\s*(\d+)\s+Max:\s*(\d+)", ln.strip()) for ln in out.splitlines())
        vals = [float(m[2] if metric == "latency_avg" else m[3]) for m in lines if m and int(m[1]) == thread]
    # A repeated run holds each run's output (repeated_real): their median.
    return statistics.median(vals) if vals else None


#: In memory only: a repeated real run's individual reports, beside its
#: report of medians (saved as <stem>.run-<i>.json by --save-real).
RUNS_KEY = "_runs"


def real_side(doc: Mapping[str, Any]) -> Side:
    """A real run's side (the runner's report, or a real tool's output)."""
    if doc.get("source") == "real-tool":
        return Side(ReportView({}), doc)
    runs = tuple(real_side(r) for r in doc.get(RUNS_KEY) or ())
    view = {k: v for k, v in doc.items() if k != RUNS_KEY}
    return Side(ReportView(view), view, runs)


def sim_side(report: Mapping[str, Any]) -> Side:
    """The simulator's side."""
    return Side(ReportView(report), report)


# ---------------------------------------------------------------- running


def note(msg: str) -> None:
    """A progress line on stderr."""
    print(f"  {msg}", file=sys.stderr, flush=True)


#: The override every simulation compared with schedlab's runner takes: its
#: tasks start as the runner starts its threads (cloned from its main thread,
#: attributes set by each, released together at a gate; workload/start.rs).
#: A real tool (an entry with ``tool``) starts its own threads: not this.
RUNNER_START: Override = ("measure.start", toml_literal("runner"))

#: The override every simulation compared with a real run takes, a real
#: tool's too: the run starts where a real one does, anywhere between two
#: ticks (``measure.start_phase = "seed"``: drawn from the seed), not on a
#: jiffy. Where a budget or a slice runs out against the tick decides some
#: outcomes whole (the fair server's throttle inside its own pick,
#: docs/models/sched-deadline.md).
START_PHASE: Override = ("measure.start_phase", toml_literal("seed"))


def run_sim(entry: Entry, version: str, seed: int, costs: Sequence[Override] = (), repeat: int = 1) -> Side:
    """The simulator at ``version`` (see :func:`sim_version`) with the
    machine's measured ``costs`` (``kernel.costs.*`` overrides, see
    :mod:`schedlab.calibrate`) and then the entry's ``sim_set``: one run
    and its report (window counters, timer delays), or with
    ``repeat`` N the median report of seeds ``seed`` .. ``seed + N - 1``."""
    from schedlab.real import median_reports

    text = read_text(entry.file)
    source = str(entry.file)
    start = [START_PHASE] if entry.tool else [RUNNER_START, START_PHASE]
    overrides: list[Override] = [("kernel.version", toml_literal(version)), *start, *costs, *entry.sim_set]
    if repeat == 1:
        return sim_side(native.run(text, source, seed, overrides, False))
    runs = [native.run(text, source, seed + i, overrides, False) for i in range(repeat)]
    median = median_reports(runs)
    return Side(ReportView(median), median, tuple(sim_side(r) for r in runs))


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
    repo = checkout()
    if repo is None:
        raise UsageError(
            "SL001",
            "the QEMU guests need the static schedlab-runner, which a schedlab checkout builds (`make runner`); "
            "accepted: SCHEDLAB_RUNNER=<its path>, or validate --real-from / --local",
        )
    static = repo / STATIC_RUNNER
    cargo = shutil.which("cargo")
    if cargo is None:
        if static.is_file():
            return static  # as built; without cargo it cannot be checked against the sources
        raise UsageError("SL001", f"{static} is missing and cargo is not available; accepted: `make runner`")
    # Always through cargo, a no-op when it is up to date: a runner built
    # before a change to the scenario reader would refuse the new keys.
    progress(f"the static runner ({STATIC_RUNNER}), built if stale ...")
    env_vars = dict(os.environ, RUSTFLAGS="-C target-feature=+crt-static")
    cmd = [cargo, "build", "--release", "-p", "schedlab-runner", "--target", RUNNER_TARGET]
    r = subprocess.run(cmd, cwd=repo, env=env_vars, check=False)
    if r.returncode != 0 or not static.is_file():
        raise UsageError("SL001", f"building the static runner failed (status {r.returncode}); try `make runner`")
    return static


RealRunner = Callable[[Entry], Mapping[str, Any]]


def qemu_real(kernel: str, progress: Callable[[str], None] = note) -> RealRunner:
    from schedlab import qemu

    orc = qemu.find_oracle()  # SL300 now, before any simulation, when it is missing
    runner = static_runner(progress)

    def run(entry: Entry) -> Mapping[str, Any]:
        if entry.tool:
            machine = native.scenario_tree(read_text(entry.file), str(entry.file), []).get("machine") or {}
            res = qemu.run_tool(machine, kernel, list(entry.tool), shift=0, timeout=GUEST_TIMEOUT_S, oracle=orc)
            return {
                "source": "real-tool",
                "oracle": {
                    "kernel": kernel,
                    "release": res.release,
                    "shift": 0,
                    "wall_s": res.wall_s,
                    "exit_status": res.exit_status,
                },
                "tool": {"argv": res.argv, "stdout": res.stdout, "stderr": res.stderr},
            }
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
    missing = sorted({e.tool[0] for e in entries if e.tool and shutil.which(_tool_program(e.tool)) is None})
    if missing:
        raise UsageError(
            "SL001",
            f"--local: the suite's tool rows need {', '.join(missing)} on this host; accepted: "
            "`make test-tools` (apt: linux-perf, rt-tests), or --only without those scenarios",
        )

    def run(entry: Entry) -> Mapping[str, Any]:
        if entry.tool:
            return local_tool(list(entry.tool))
        return real.run_real(str(entry.file), runner=runner, scratch=real.scratch_dir())

    return run


def _tool_program(argv: Sequence[str]) -> str:
    """The program a tool command needs: the first word after taskset's
    CPU list, or the command; for a ``sh -c`` script, the last command name
    it runs that is a benchmark (cyclictest, hackbench, perf)."""
    args = list(argv)
    if args[:1] == ["taskset"] and len(args) >= 3:
        args = args[3:] if args[1] == "-c" else args[2:]
    if args[:2] == ["sh", "-c"] and len(args) >= 3:
        words = args[2].replace(";", " ").replace("&", " ").replace("(", " ").split()
        for name in ("cyclictest", "hackbench", "perf"):
            if name in words:
                return name
        return "sh"
    return args[0] if args else "sh"


def local_tool(argv: Sequence[str], timeout: float = GUEST_TIMEOUT_S) -> dict[str, Any]:
    """A real tool run on this host (``validate --local``): the record a
    guest's tool run gives (``source`` "real-tool"), with this host's kernel
    in ``host`` so the simulator runs its release."""
    import time

    u = os.uname()
    t0 = time.monotonic()
    try:
        r = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise UsageError("SL001", f"--local: {' '.join(argv)}: still running after {timeout:.0f} s") from None
    return {
        "source": "real-tool",
        "host": {"kernel_release": u.release, "kernel_version": u.version, "nr_cpus": os.cpu_count() or 1},
        "oracle": {
            "kernel": "local",
            "release": u.release,
            "wall_s": round(time.monotonic() - t0, 3),
            "exit_status": r.returncode,
        },
        "tool": {"argv": list(argv), "stdout": r.stdout, "stderr": r.stderr},
    }


#: Between two runs' output in a repeated real tool's ``tool.stdout``.
RUN_SEPARATOR = "=== schedlab: next run ==="


def noting_warnings(inner: RealRunner, progress: Callable[[str], None] = note) -> RealRunner:
    """Each real run's warnings as progress lines (the runner's: a window
    whose start was read late, its shares then over the window it read)."""

    def run(entry: Entry) -> Mapping[str, Any]:
        doc = inner(entry)
        for w in doc.get("warnings") or ():
            progress(f"{entry.name}: the real run warns: {w}")
        return doc

    return run


def repeated_real(inner: RealRunner, repeat: int, progress: Callable[[str], None] = note) -> RealRunner:
    """Each real run ``repeat`` times (a guest boot each under QEMU). The
    runner's reports become their median report (``"repeat": N``); a real
    tool's runs become one record whose stdout and stderr hold every run's,
    between ``RUN_SEPARATOR`` lines, so that each metric is the median of
    what the tool printed (:func:`parse_tool_output`)."""
    from schedlab.real import median_reports

    def run(entry: Entry) -> Mapping[str, Any]:
        docs = []
        for i in range(repeat):
            if i:
                progress(f"{entry.name}: real run {i + 1}/{repeat} ...")
            docs.append(inner(entry))
        if all(d.get("source") == "real-tool" for d in docs):
            merged = dict(docs[0])
            tool = dict(merged.get("tool") or {})
            for key in ("stdout", "stderr"):
                tool[key] = f"\n{RUN_SEPARATOR}\n".join(str((d.get("tool") or {}).get(key, "")) for d in docs)
            merged["tool"] = tool
            return merged
        merged = median_reports(docs)
        merged[RUNS_KEY] = docs
        return merged

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
        write_json(str(d / f"{entry.file.stem}.json"), {k: v for k, v in doc.items() if k != RUNS_KEY})
        for i, r in enumerate(doc.get(RUNS_KEY) or (), 1):
            write_json(str(d / f"{entry.file.stem}.run-{i}.json"), r)
        return doc

    return run


#: The calibration report's file name in a --save-real directory.
CALIBRATION_FILE = "calibration.json"


def qemu_calibration(kernel: str, progress: Callable[[str], None] = note) -> dict[str, Any]:
    """The oracle guest's cost constants (``schedlab-runner --calibrate`` in
    a two-CPU guest of ``kernel``)."""
    from schedlab import qemu

    orc = qemu.find_oracle()
    runner = static_runner(progress)
    progress(f"calibration: the cost constants of a {kernel} guest ...")
    return qemu.calibrate_in_guest(runner, kernel=kernel, timeout=GUEST_TIMEOUT_S, oracle=orc)


def kept_calibration(directory: str) -> dict[str, Any]:
    """The calibration report kept by --save-real in ``directory``."""
    return _read_kept(
        directory,
        Path(directory) / CALIBRATION_FILE,
        "no kept calibration",
        "a directory written by --save-real with --costs measured, or --costs default",
    )


def _read_kept(directory: str, p: Path, missing: str, accepted: str) -> dict[str, Any]:
    """A JSON object kept in a --save-real directory; a clear error if not."""
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except OSError as e:
        raise UsageError(
            "SL001", f"--real-from {directory}: {missing} ({p}): {e.strerror or e}; accepted: {accepted}"
        ) from None
    except ValueError as e:
        raise UsageError("SL001", f"--real-from {directory}: {p} is not JSON: {e}") from None
    if not isinstance(doc, dict):
        raise UsageError("SL001", f"--real-from {directory}: {p} is not a report object")
    return doc


def save_calibration(doc: Mapping[str, Any], directory: str) -> None:
    d = Path(directory)
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError("SL001", f"--save-real {directory}: cannot create: {e.strerror or e}") from None
    write_json(str(d / CALIBRATION_FILE), dict(doc))


#: In a --save-real directory of a --local run: the host settings the
#: simulator took (``host_sets``), so that --real-from takes them again.
HOST_SETS_FILE = "host-sets.json"


def save_host_sets(sets: Sequence[Override], directory: str) -> None:
    d = Path(directory)
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError("SL001", f"--save-real {directory}: cannot create: {e.strerror or e}") from None
    write_json(str(d / HOST_SETS_FILE), {"sets": [[k, v] for k, v in sets]})


def kept_host_sets(directory: str) -> list[Override]:
    """The host settings a --local run kept beside its reports; none when
    the directory has no HOST_SETS_FILE (the QEMU guests' reports)."""
    p = Path(directory) / HOST_SETS_FILE
    if not p.is_file():
        return []
    doc = _read_kept(directory, p, "unreadable host settings", "a directory written by --save-real")
    sets = doc.get("sets")
    if not isinstance(sets, list) or not all(
        isinstance(s, list) and len(s) == 2 and all(isinstance(x, str) for x in s) for s in sets
    ):
        raise UsageError("SL001", f"{p}: sets: accepted: a list of [key, TOML value] string pairs")
    return [(k, v) for k, v in sets]


def kept_is_local(directory: str) -> bool:
    """Whether ``directory`` holds a --local run's reports (it has the
    HOST_SETS_FILE that run writes), not a QEMU guest's."""
    return (Path(directory) / HOST_SETS_FILE).is_file()


def kept_series(directory: str) -> str | None:
    """The kernel series of reports kept in ``directory`` (``6.18`` of a
    host's ``6.18.44-fc-v657``, ``6.12`` of a guest's ``6.12.95+deb12-amd64``),
    from the first kept report naming its kernel; None when none does."""
    for p in sorted(Path(directory).glob("*.json")):
        try:
            doc = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(doc, dict):
            continue
        rel = (doc.get("host") or {}).get("kernel_release") or (doc.get("oracle") or {}).get("release")
        series = _series_of(str(rel or ""))
        if series is not None:
            return series
    return None


def kept_real(directory: str) -> RealRunner:
    """Real reports kept by --save-real, one per scenario file."""

    def run(entry: Entry) -> Mapping[str, Any]:
        p = Path(directory) / f"{entry.file.stem}.json"
        doc = _read_kept(directory, p, f"no kept report for {entry.name}", "a directory written by --save-real")
        runs = sorted(
            Path(directory).glob(f"{entry.file.stem}.run-*.json"), key=lambda q: int(q.stem.rsplit("-", 1)[1])
        )
        if runs:
            doc[RUNS_KEY] = [_read_kept(directory, q, "a kept run", "a directory written by --save-real") for q in runs]
        return doc

    return run
