"""Booting, probing and running in a guest: :func:`boot` boots an oracle
kernel on a machine with an initramfs running one program, captures the serial
console under a wall-time timeout and returns the program's report (the text
between the markers); :func:`probe` boots a busybox snippet that reports the
topology the guest sees (:func:`check_probe` compares it with the machine);
:func:`run_in_guest` runs the workload runner (``RUNNER --serial
SCENARIO.toml``) and returns its JSON report. Also the ``schedlab qemu``
commands (their arguments are in cli.py).
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from schedlab import native
from schedlab.overrides import Override, parse_set_arg
from schedlab.qemu.initramfs import BEGIN_MARKER, END_MARKER, EXIT_MARKER, FileSource, build_initramfs
from schedlab.qemu.machine import (
    DEFAULT_APPEND,
    MEMORY_PER_NODE_MIB,
    Layout,
    MachineLike,
    cpu_ranges,
    qemu_args,
    resolve_layout,
)
from schedlab.qemu.oracle import Oracle, OracleError, find_oracle, kernel_for_summary

__all__ = [
    "BootResult",
    "boot",
    "check_probe",
    "cmd_args",
    "cmd_probe",
    "cmd_run",
    "extract_report",
    "parse_cpulist",
    "probe",
    "run_batch_in_guest",
    "run_in_guest",
    "trace_in_guest",
]


# --------------------------------------------------------------------------
# Booting


@dataclass
class BootResult:
    """What a boot gave: the report text between the markers, the whole
    console, the program's exit status (None if /init did not print it), the
    wall time of the QEMU process and the command line."""

    report: str
    console: str
    exit_status: int | None
    wall_s: float
    command: list[str]


def _tail(console: str, n: int = 25) -> str:
    lines = [ln for ln in console.splitlines() if ln.strip()]
    return "\n".join(lines[-n:])


def extract_report(console: str) -> str | None:
    """The text between the last ``BEGIN_MARKER`` line and the next
    ``END_MARKER`` line, or None if there is no complete pair. A marker ends
    its line; anything before it on that line (the firmware's terminal
    escapes, an unfinished kernel message) is ignored, and so is ``\\r``."""
    lines = console.replace("\r", "").split("\n")
    begin = None
    for i, ln in enumerate(lines):
        if ln.rstrip().endswith(BEGIN_MARKER):
            begin = i
    if begin is None:
        return None
    for j in range(begin + 1, len(lines)):
        if lines[j].rstrip().endswith(END_MARKER):
            return "\n".join(lines[begin + 1 : j])
    return None


def _exit_status(console: str) -> int | None:
    for ln in reversed(console.replace("\r", "").split("\n")):
        s = ln.strip()
        if s.startswith(EXIT_MARKER):
            try:
                return int(s[len(EXIT_MARKER) :].strip().split()[0])
            except (ValueError, IndexError):
                return None
    return None


def boot(
    machine: MachineLike,
    kernel: str,
    program: Sequence[str],
    files: Mapping[str, FileSource] | None = None,
    *,
    shift: int = 3,
    timeout: float = 300.0,
    append: str = "",
    memory_per_node_mib: int = MEMORY_PER_NODE_MIB,
    oracle: Oracle | None = None,
    keep: str | Path | None = None,
) -> BootResult:
    """Boot the oracle ``kernel`` ("6.1" or "6.12") on ``machine`` with an
    initramfs running ``program`` (plus ``files``), and return its report.

    ``shift`` is the ``-icount`` shift (3: cheap; 0: one instruction per ns,
    when per-CPU speed matters). ``timeout`` is wall seconds for the whole
    QEMU process. ``append`` is added to the kernel command line. ``keep``
    names a directory that keeps initrd.gz, console.log and cmdline.
    Raises ``OracleError`` when the oracle is missing, the guest times out
    (with the last console lines), QEMU fails, or the markers are absent."""
    layout = resolve_layout(machine)
    orc = oracle or find_oracle()
    vmlinuz = orc.kernel(kernel)
    initrd_bytes = build_initramfs(orc.busybox, program, files)
    cmdline = DEFAULT_APPEND + (" " + append if append else "")
    with tempfile.TemporaryDirectory(prefix="schedlab-qemu-") as tmp:
        work = Path(keep) if keep is not None else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        initrd = work / "initrd.gz"
        initrd.write_bytes(initrd_bytes)
        args = qemu_args(layout, vmlinuz, initrd, shift=shift, append=cmdline, memory_per_node_mib=memory_per_node_mib)
        command = [str(orc.launcher), *args]
        (work / "cmdline").write_text(shlex.join(command) + "\n")
        log_path = work / "console.log"
        start = time.monotonic()
        with log_path.open("wb") as log:
            proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
            try:
                rc = proc.wait(timeout=timeout)
            except BaseException as e:  # the timeout, or ^C: never leave QEMU behind
                proc.kill()
                proc.wait()
                if not isinstance(e, subprocess.TimeoutExpired):
                    raise
                console = log_path.read_bytes().decode("utf-8", "replace")
                raise OracleError(
                    "SL300",
                    f"the guest ({layout.name}, {layout.nr_cpus} CPUs, kernel {kernel}) did not finish "
                    f"within {timeout:g} s of wall time; last console lines:\n{_tail(console)}",
                    _tail(console),
                ) from None
        wall = time.monotonic() - start
        console = log_path.read_bytes().decode("utf-8", "replace").replace("\r", "")
    report = extract_report(console)
    status = _exit_status(console)
    if rc != 0:
        raise OracleError(
            "SL300", f"QEMU exited with status {rc}; last console lines:\n{_tail(console)}", _tail(console)
        )
    if report is None:
        why = f"the program exited with status {status}" if status is not None else "/init did not finish"
        raise OracleError(
            "SL300",
            f"the guest printed no report between {BEGIN_MARKER!r} and {END_MARKER!r} ({why}); "
            f"last console lines:\n{_tail(console)}",
            _tail(console),
        )
    return BootResult(report, console, status, wall, command)


# --------------------------------------------------------------------------
# The topology probe

PROBE_SCRIPT = r"""
q='"'
cpus=""
for d in /sys/devices/system/cpu/cpu[0-9]*; do
  [ -d "$d/topology" ] || continue
  t=$d/topology
  c="{${q}cpu$q:${d##*/cpu},${q}package$q:$(cat $t/physical_package_id),${q}core_id$q:$(cat $t/core_id)"
  cpus="$cpus${cpus:+,}$c,${q}thread_siblings$q:$q$(cat $t/thread_siblings_list)$q}"
done
nodes=""
for d in /sys/devices/system/node/node[0-9]*; do
  [ -d "$d" ] || continue
  mem=$(awk '/MemTotal/ {print $4}' $d/meminfo)
  n="$q${d##*/node}$q:{${q}cpulist$q:$q$(cat $d/cpulist)$q,${q}distance$q:$q$(cat $d/distance)$q"
  nodes="$nodes${nodes:+,}$n,${q}mem_kb$q:$mem}"
done
domains=""
for d in /sys/kernel/debug/sched/domains/cpu0/domain*; do
  [ -f "$d/name" ] && domains="$domains${domains:+,}$q$(cat $d/name)$q"
done
echo "=== SCHEDLAB-REPORT BEGIN ==="
echo "{${q}uname_r$q:$q$(uname -r)$q,${q}online$q:$q$(cat /sys/devices/system/cpu/online)$q,"
echo " ${q}nproc$q:$(nproc),${q}uptime_s$q:$(cut -d' ' -f1 /proc/uptime),"
echo " ${q}cpus$q:[$cpus],${q}nodes$q:{$nodes},${q}cpu0_domains$q:[$domains]}"
echo "=== SCHEDLAB-REPORT END ==="
"""


def parse_cpulist(text: str) -> list[int]:
    """``"0-3,8"`` -> ``[0, 1, 2, 3, 8]``, by the core's parser."""
    return native.parse_cpulist(text)


def probe(
    machine: MachineLike, kernel: str, *, shift: int = 3, timeout: float = 300.0, oracle: Oracle | None = None
) -> dict[str, Any]:
    """Boot ``machine`` on ``kernel`` and report what the guest sees:
    ``{"uname_r", "online", "nproc", "uptime_s", "cpus": [{"cpu", "package",
    "core_id", "thread_siblings", "node"}], "nodes": {"0": {"cpulist",
    "distance", "mem_kb"}}, "cpu0_domains", "wall_s"}``."""
    res = boot(machine, kernel, ["/bin/sh", "/schedlab/probe.sh"], {"/schedlab/probe.sh": PROBE_SCRIPT.encode()},
               shift=shift, timeout=timeout, append="sched_verbose", oracle=oracle)  # fmt: skip
    try:
        doc = cast("dict[str, Any]", json.loads(res.report))
    except ValueError as e:
        raise OracleError("SL300", f"the probe's report is not JSON ({e}):\n{res.report[:2000]}") from None
    node_of: dict[int, int] = {}
    for n, info in doc["nodes"].items():
        for c in parse_cpulist(info["cpulist"]):
            node_of[c] = int(n)
    for c in doc["cpus"]:
        c["node"] = node_of.get(c["cpu"])
    doc["cpus"].sort(key=lambda c: c["cpu"])
    doc["wall_s"] = round(res.wall_s, 2)
    return doc


def check_probe(layout: Layout, doc: Mapping[str, Any]) -> list[str]:
    """Differences between ``layout`` and a :func:`probe` result (empty: the
    guest has exactly that topology)."""
    bad: list[str] = []
    if doc.get("nproc") != layout.nr_cpus:
        bad.append(f"nproc {doc.get('nproc')} != {layout.nr_cpus}")
    cpus = {c["cpu"]: c for c in doc.get("cpus", [])}
    if sorted(cpus) != list(range(layout.nr_cpus)):
        bad.append(f"CPUs {sorted(cpus)} != 0..{layout.nr_cpus - 1}")
    for i, c in sorted(cpus.items()):
        want = (layout.socket_of(i), layout.core_of(i), layout.node_of(i))
        got = (c.get("package"), c.get("core_id"), c.get("node"))
        if got != want:
            bad.append(f"cpu{i}: (package, core_id, node) {got} != {want}")
        sib = layout.thread_siblings(i)
        if parse_cpulist(str(c.get("thread_siblings", ""))) != sib:
            bad.append(f"cpu{i}: thread_siblings {c.get('thread_siblings')} != {cpu_ranges(sib)}")
    nodes = doc.get("nodes", {})
    if len(nodes) != layout.nodes:
        bad.append(f"{len(nodes)} nodes != {layout.nodes}")
    for n, info in nodes.items():
        row = [int(x) for x in str(info.get("distance", "")).split()]
        if int(n) < layout.nodes and row != list(layout.distance[int(n)]):
            bad.append(f"node{n}: distance {row} != {list(layout.distance[int(n)])}")
    return bad


# --------------------------------------------------------------------------
# The workload runner


def run_in_guest(
    scenario: str | Path,
    runner: str | Path,
    *,
    kernel: str | None = None,
    overrides: Sequence[Override] = (),
    shift: int = 0,
    timeout: float = 1800.0,
    extra_args: Sequence[str] = (),
    oracle: Oracle | None = None,
    keep: str | Path | None = None,
) -> dict[str, Any]:
    """Boot the scenario's machine on ``kernel`` (default: the oracle kernel
    for the scenario's fair-class era, see :func:`kernel_for_summary`), run
    ``RUNNER --serial /schedlab/scenario.toml`` at boot and return the JSON it
    prints between the markers (plus ``"oracle": {kernel, release, shift,
    wall_s}``). The runner must be a static executable. The scenario is read
    once, through the core, with ``overrides`` (``--set``) applied: the
    machine booted, the kernel picked and the TOML the guest runs are all
    the core's (an ``rtapp`` key expanded, so the guest needs no JSON file)."""
    from schedlab.scenarios import read_text, resolve

    path = resolve(str(scenario))
    text, source = read_text(path), str(path)
    summary = native.check(text, source, overrides)
    layout = Layout.from_summary(summary["machine"])
    if kernel is None:
        kernel = kernel_for_summary(summary)
    resolved = native.scenario_toml(text, source, overrides)
    orc = oracle or find_oracle()
    files: dict[str, FileSource] = {"/schedlab/runner": Path(runner), "/schedlab/scenario.toml": resolved.encode()}
    program = ["/schedlab/runner", "--serial", "/schedlab/scenario.toml", *extra_args]
    append = _boot_parameters(native.scenario_tree(text, source, overrides))
    res = boot(layout, kernel, program, files, shift=shift, timeout=timeout, append=append, oracle=orc, keep=keep)
    return _runner_doc(res, "report", kernel, shift, orc)


def _boot_parameters(tree: Mapping[str, Any]) -> str:
    """The kernel command line a scenario (its tree) asks for:
    ``isolcpus=`` from ``kernel.isolcpus`` (a boot parameter, which the
    runner checks in /sys/devices/system/cpu/isolated but cannot set)."""
    iso = (tree.get("kernel") or {}).get("isolcpus")
    return f"isolcpus={iso}" if isinstance(iso, str) else ""


CASE_MARKER = "=== SCHEDLAB-CASE"


def run_batch_in_guest(
    machine: MachineLike,
    scenarios: Sequence[str],
    runner: str | Path,
    *,
    kernel: str,
    shift: int = 0,
    timeout: float = 1800.0,
    oracle: Oracle | None = None,
    keep: str | Path | None = None,
) -> list[dict[str, Any] | str]:
    """Boot ``machine`` once on ``kernel`` and run the runner on each of
    ``scenarios`` (scenario texts, all for that machine) one after another.
    Per scenario, in order: the runner's JSON report plus ``"oracle"`` (its
    ``wall_s`` is the boot's, shared), or the error text of a run that
    printed no report (its last console lines)."""
    orc = oracle or find_oracle()
    files: dict[str, FileSource] = {"/schedlab/runner": Path(runner)}
    lines = []
    for i, text in enumerate(scenarios):
        files[f"/schedlab/case{i}.toml"] = text.encode()
        lines.append(
            f'echo "{CASE_MARKER} {i} ==="; /schedlab/runner --serial /schedlab/case{i}.toml; '
            f'echo "{CASE_MARKER}-EXIT {i} $? ==="'
        )
    files["/schedlab/batch.sh"] = ("\n".join(lines) + "\n").encode()
    res = boot(machine, kernel, ["/bin/sh", "/schedlab/batch.sh"], files, shift=shift, timeout=timeout,
               oracle=orc, keep=keep)  # fmt: skip
    out: list[dict[str, Any] | str] = []
    for i in range(len(scenarios)):
        head = f"{CASE_MARKER} {i} ==="
        start = res.console.find(head)
        if start < 0:
            out.append(f"case {i} did not start; last console lines:\n{_tail(res.console)}")
            continue
        end = res.console.find(f"{CASE_MARKER}-EXIT {i} ", start)
        segment = res.console[start : end if end >= 0 else len(res.console)]
        report = extract_report(segment)
        if report is None:
            out.append(f"case {i} printed no report; its last console lines:\n{_tail(segment)}")
            continue
        try:
            out.append(_runner_doc(BootResult(report, segment, res.exit_status, res.wall_s, res.command),
                                   "report", kernel, shift, orc))  # fmt: skip
        except OracleError as e:
            out.append(str(e))
    return out


def _runner_doc(res: BootResult, what: str, kernel: str, shift: int, orc: Oracle) -> dict[str, Any]:
    """The runner's JSON from a guest's console, plus ``"oracle"``."""
    try:
        doc = cast("dict[str, Any]", json.loads(res.report))
    except ValueError as e:
        raise OracleError("SL300", f"the runner's {what} is not JSON ({e}):\n{res.report[:2000]}") from None
    doc["oracle"] = {
        "kernel": kernel,
        "release": orc.kernel_releases.get(kernel),
        "shift": shift,
        "wall_s": round(res.wall_s, 2),
        "exit_status": res.exit_status,
    }
    return doc


TRACE_BEGIN = "=== SCHEDLAB-TRACE-GZ-BASE64 ==="
TRACE_END = "=== SCHEDLAB-TRACE-GZ-BASE64 DONE ==="
#: tracefs buffer per guest CPU, at most; the guests' memory is small (TCG).
TRACE_BUFFER_KB = 32768


def trace_in_guest(
    text: str,
    source: str,
    runner: str | Path,
    *,
    kernel: str,
    overrides: Sequence[Override] = (),
    events: Sequence[str] = ("sched_switch", "sched_wakeup"),
    shift: int = 0,
    timeout: float = 1800.0,
    oracle: Oracle | None = None,
) -> tuple[bytes, dict[str, Any]]:
    """Run the scenario ``text`` in the guest of ``kernel`` on its machine
    with the runner, as :func:`run_in_guest` does, while tracefs records
    the sched ``events``: (the trace file's text, the runner's report).
    The trace comes back on the console gzip'd and base64'd."""
    summary = native.check(text, source, overrides)
    layout = Layout.from_summary(summary["machine"])
    resolved = native.scenario_toml(text, source, overrides)
    script = traced_script("/schedlab/runner --serial /schedlab/scenario.toml", events, layout.nr_cpus)
    orc = oracle or find_oracle()
    files: dict[str, FileSource] = {"/schedlab/runner": Path(runner), "/schedlab/scenario.toml": resolved.encode()}
    res = boot(layout, kernel, ["sh", "-c", script], files, shift=shift, timeout=timeout, oracle=orc)
    return trace_of(res, kernel), _runner_doc(res, "report", kernel, shift, orc)


def traced_script(command: str, events: Sequence[str], nr_cpus: int) -> str:
    """A guest /bin/sh script: tracefs records the sched ``events`` while
    ``command`` runs; the trace file is then printed gzip'd and base64'd
    between the trace markers, and the script exits with the command's
    status."""
    kb = max(1024, min(TRACE_BUFFER_KB, 262144 // max(1, nr_cpus)))
    enable = "; ".join(f"echo 1 > events/sched/{e}/enable" for e in events)
    return (
        "mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; cd /sys/kernel/tracing || exit 97; "
        f"echo 0 > tracing_on; echo {kb} > buffer_size_kb; {enable}; echo 1 > tracing_on; "
        f"{command}; s=$?; echo 0 > tracing_on; "
        f"echo '{TRACE_BEGIN}'; gzip -c trace | base64; echo '{TRACE_END}'; exit $s"
    )


def trace_of(res: BootResult, kernel: str) -> bytes:
    """The trace a :func:`traced_script` guest printed on its console."""
    import base64
    import binascii
    import gzip

    body = res.console.split(TRACE_BEGIN + "\n", 1)
    if len(body) != 2 or TRACE_END not in body[1]:
        raise OracleError("SL300", f"the {kernel} guest printed no trace (no tracefs?):\n{_tail(res.console)}")
    try:
        return gzip.decompress(base64.b64decode("".join(body[1].split(TRACE_END, 1)[0].split())))
    except (OSError, EOFError, binascii.Error) as e:
        raise OracleError("SL300", f"the {kernel} guest's trace is damaged ({e})") from None


def calibrate_in_guest(
    runner: str | Path,
    *,
    kernel: str,
    machine: Mapping[str, Any] | None = None,
    shift: int = 0,
    timeout: float = 900.0,
    oracle: Oracle | None = None,
) -> dict[str, Any]:
    """Boot ``machine`` (default: one socket of two cores) on ``kernel`` and
    run ``RUNNER --calibrate --serial``: the guest's cost constants, as a
    calibration report plus ``"oracle"``. At icount ``shift`` 0 a guest
    nanosecond is one instruction, so these are instruction counts of the
    guest kernel's paths, not a host's timings."""
    orc = oracle or find_oracle()
    files: dict[str, FileSource] = {"/schedlab/runner": Path(runner)}
    mach = dict(machine or {"sockets": 1, "cores_per_socket": 2})
    res = boot(mach, kernel, ["/schedlab/runner", "--calibrate", "--serial"], files, shift=shift, timeout=timeout,
               oracle=orc)  # fmt: skip
    return _runner_doc(res, "calibration", kernel, shift, orc)


# --------------------------------------------------------------------------
# schedlab qemu args|probe|run (arguments: cli.py)


def cmd_args(args: argparse.Namespace) -> int:
    layout = resolve_layout(args.machine)
    print(shlex.join(["qemu-system-x86_64", *qemu_args(layout, "VMLINUZ", "INITRD")]))
    return 0


def cmd_probe(args: argparse.Namespace) -> int:
    layout = resolve_layout(args.machine)
    doc = probe(layout, args.kernel or "6.1", shift=3 if args.shift is None else args.shift,
                timeout=args.timeout or 300.0)  # fmt: skip
    print(json.dumps(doc, indent=2))
    bad = check_probe(layout, doc)
    for b in bad:
        print(f"mismatch: {b}", file=sys.stderr)
    return 1 if bad else 0


def cmd_run(args: argparse.Namespace) -> int:
    overrides = [parse_set_arg(a) for a in getattr(args, "set", None) or []]
    doc = run_in_guest(args.scenario, args.runner, kernel=args.kernel, overrides=overrides,
                       shift=0 if args.shift is None else args.shift, timeout=args.timeout or 1800.0,
                       keep=args.keep)  # fmt: skip
    print(json.dumps(doc, indent=2))
    return 0
