"""``schedlab capture``: record what ``schedlab import`` needs on this machine.

A tracing instance of its own (``/sys/kernel/tracing/instances/schedlab-PID``:
its own ring buffer and event switches, so the machine's other tracing is
left alone) with the sched tracepoints and the interrupt brackets, around a
command or for a duration; the instance's ``trace`` file is written as ftrace
text with a header naming the machine (``# schedlab-capture:`` lines:
kernel release, CPUs, preemption model, cpuidle driver; each task's
policy, nice, RT priority and CPUs, sampled from /proc every 100 ms while
it runs), which the import reads. Needs root (or write access to tracefs).
"""

from __future__ import annotations

import os
import platform
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from schedlab.errors import HostError, UsageError

__all__ = ["EVENTS", "capture"]

#: The tracepoints recorded (subsystem/event), the ones the import reads.
EVENTS = (
    "sched/sched_switch",
    "sched/sched_waking",
    "sched/sched_wakeup",
    "sched/sched_wakeup_new",
    "sched/sched_migrate_task",
    "sched/sched_process_fork",
    "sched/sched_process_exec",
    "sched/sched_process_exit",
    "irq/irq_handler_entry",
    "irq/irq_handler_exit",
    "irq/softirq_entry",
    "irq/softirq_exit",
    "timer/hrtimer_start",
    "timer/hrtimer_cancel",
    "timer/hrtimer_expire_entry",
    "timer/hrtimer_expire_exit",
)

_TRACEFS = (Path("/sys/kernel/tracing"), Path("/sys/kernel/debug/tracing"))


def _tracefs() -> Path:
    for p in _TRACEFS:
        if (p / "instances").is_dir():
            return p
    raise HostError("SL300", "tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)")


def _write(path: Path, value: str) -> None:
    try:
        path.write_text(value)
    except OSError as e:
        raise HostError("SL300", f"{path}: cannot write {value!r}: {e.strerror or e} (capture needs root)") from None


def machine_header() -> list[str]:
    """The ``# schedlab-capture:`` lines describing this machine."""
    from schedlab.validation.runners import host_cpuidle, host_preempt

    lines = [
        f"# schedlab-capture: release={platform.release()}",
        f"# schedlab-capture: nr_cpus={os.cpu_count() or 1}",
    ]
    preempt = host_preempt()
    if preempt:
        lines.append(f"# schedlab-capture: preempt={preempt}")
    idle = host_cpuidle()
    if idle:
        lines.append(f"# schedlab-capture: cpuidle={idle}")
    return lines + topology_header()


def _sysfs(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def topology_header(
    sys_cpu: Path = Path("/sys/devices/system/cpu"), sys_node: Path = Path("/sys/devices/system/node")
) -> list[str]:
    """The CPUs' topology as /sys shows it, a ``cpu`` line each (package,
    core, NUMA node, the CPUs sharing its last-level cache) and a
    ``distance`` line per node: ``schedlab import`` builds the machine from
    them."""
    lines = []
    cpus = sorted(
        (int(d.name[3:]), d) for d in sys_cpu.glob("cpu[0-9]*") if d.name[3:].isdigit() and (d / "topology").is_dir()
    )
    for n, d in cpus:
        package = _sysfs(d / "topology" / "physical_package_id")
        core = _sysfs(d / "topology" / "core_id")
        nodes = sorted(p.name[4:] for p in d.glob("node[0-9]*"))
        caches = sorted(d.glob("cache/index[0-9]*"), key=lambda p: int(p.name[5:]))
        llc = _sysfs(caches[-1] / "shared_cpu_list") if caches else None
        if package is None or core is None:
            continue
        words = [f"cpu={n}", f"package={package}", f"core={core}", f"node={nodes[0] if nodes else 0}"]
        lines.append("# schedlab-capture: cpu " + " ".join(words + ([f"llc={llc}"] if llc else [])))
    for node in sorted(sys_node.glob("node[0-9]*"), key=lambda p: int(p.name[4:])):
        dist = _sysfs(node / "distance")
        if dist:
            lines.append(f"# schedlab-capture: distance node={node.name[4:]} {dist.replace(' ', ',')}")
    return lines


#: How often the attribute sampler looks at /proc, and how long it keeps
#: re-reading a task it has seen (a program sets its threads' policy and
#: affinity as it starts them).
SAMPLE_S = 0.1
YOUNG_S = 1.0
_POLICIES = {0: "SCHED_NORMAL", 1: "SCHED_FIFO", 2: "SCHED_RR", 3: "SCHED_BATCH", 5: "SCHED_IDLE", 6: "SCHED_DEADLINE"}


class _Sampler(threading.Thread):
    """Every task's policy, nice, RT priority and CPUs, from /proc while the
    capture runs (a trace has none of them: sched_switch prints a priority
    only). A task is read when first seen and again until it is YOUNG_S old."""

    def __init__(self) -> None:
        super().__init__(name="schedlab-sampler", daemon=True)
        self.attrs: dict[int, str] = {}
        self.first: dict[int, float] = {}
        self.stop = threading.Event()

    def sweep(self) -> None:
        now = time.monotonic()
        for task in Path("/proc").glob("[0-9]*/task/[0-9]*"):
            try:
                tid = int(task.name)
            except ValueError:
                continue
            if now - self.first.setdefault(tid, now) > YOUNG_S and tid in self.attrs:
                continue
            try:
                stat = (task / "stat").read_text()
                status = (task / "status").read_text()
            except OSError:
                continue  # exited
            fields = stat.rsplit(")", 1)[-1].split()
            # After the comm: state is field 3; nice 19, rt_priority 40, policy 41 (proc(5)).
            try:
                nice, rt, policy = int(fields[16]), int(fields[37]), int(fields[38])
            except (IndexError, ValueError):
                continue
            cpus = next(
                (ln.split(":", 1)[1].strip() for ln in status.splitlines() if ln.startswith("Cpus_allowed_list:")), ""
            )
            self.attrs[tid] = (
                f"task pid={tid} policy={_POLICIES.get(policy, policy)} nice={nice} rt_priority={rt} cpus={cpus}"
            )

    def run(self) -> None:
        while not self.stop.wait(SAMPLE_S):
            self.sweep()


def capture(out: str, command: Sequence[str], *, duration_s: float | None = None, buffer_kb: int = 65536) -> int:
    """Record ``command`` (or ``duration_s`` seconds of the whole machine) into
    ``out``; returns the command's exit status (0 for a duration). Raises
    ``HostError`` (SL300) when tracefs cannot be used and when the ring
    buffer overflowed (events lost: a larger ``buffer_kb`` or a shorter run)."""
    if not command and duration_s is None:
        raise UsageError("SL001", "capture: give a command (after --) or --duration")
    if buffer_kb < 64:
        raise UsageError("SL001", f"--buffer-kb {buffer_kb}: at least 64 (KiB per CPU)")
    base = _tracefs()
    inst = base / "instances" / f"schedlab-{os.getpid()}"
    try:
        inst.mkdir()
    except OSError as e:
        raise HostError("SL300", f"{inst}: cannot create a tracing instance: {e.strerror or e} (needs root)") from None
    status = 0
    try:
        _write(inst / "buffer_size_kb", str(buffer_kb))
        for ev in EVENTS:
            enable = inst / "events" / ev / "enable"
            if enable.exists():  # hrtimer and irq events exist on every config schedlab models; sched_waking from 4.3
                _write(enable, "1")
        sampler = _Sampler()
        sampler.sweep()
        _write(inst / "tracing_on", "1")
        sampler.start()
        if command:
            try:
                status = subprocess.run(list(command), check=False).returncode
            except OSError as e:
                raise UsageError("SL001", f"capture: cannot run {command[0]!r}: {e.strerror or e}") from None
        else:
            time.sleep(duration_s or 0.0)
        _write(inst / "tracing_on", "0")
        sampler.stop.set()
        sampler.join()
        lost = _lost(inst)
        text = (inst / "trace").read_text(errors="replace")
    finally:
        try:
            (inst / "tracing_on").write_text("0")
            inst.rmdir()
        except OSError:
            pass
    if lost:
        raise HostError(
            "SL300",
            f"capture: the ring buffer lost {lost} events (per CPU --buffer-kb {buffer_kb} too small for the run); "
            "give a larger --buffer-kb or a shorter command",
        )
    from schedlab.outputs import write_text

    head = machine_header() + [f"# schedlab-capture: {a}" for _, a in sorted(sampler.attrs.items())]
    write_text(out, "\n".join(head) + "\n" + text, flag="--out")
    return status


def _lost(inst: Path) -> int:
    """Events the instance's per-CPU buffers overwrote or dropped."""
    n = 0
    for stats in sorted((inst / "per_cpu").glob("cpu*/stats")):
        for line in stats.read_text().splitlines():
            key, _, val = line.partition(":")
            if key.strip() in ("overrun", "dropped events") and val.strip().isdigit():
                n += int(val.strip())
    return n
