"""--perfetto writes the sched tracepoints as a Perfetto protobuf trace. It is
read here with the Perfetto project's own message classes (the `perfetto`
package's perfetto_trace_pb2), and checked event by event against the ftrace
text of the same run."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pb: Any = pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2")

pytestmark = pytest.mark.native

LINE = re.compile(
    r"^\s*(?P<comm>.+)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\] \S+\s+(?P<ts>\d+\.\d+): (?P<ev>\w+): (?P<rest>.*)$"
)

# One task that sleeps and one that exits, on 6.1 (prev_state in the 4.14+ layout).
SLEEP_EXIT = """
name = "sleep-exit"
[machine]
preset = "4cpu"
[kernel]
version = "6.1"
vmstat_kworkers = false
[measure]
duration = "100ms"
[[task]]
name = "sleeper"
program = [ { loop = { count = 0, body = [ { run = "2ms" }, { sleep = "3ms" } ] } } ]
[[task]]
name = "quitter"
program = [ { run = "5ms" } ]
"""


def run(tmp_path: Path, *args: str) -> tuple[Any, list[dict[str, str]]]:
    pf, txt = tmp_path / "t.pftrace", tmp_path / "t.txt"
    subprocess.run(
        [sys.executable, "-m", "schedlab", "run", *args, "-q", "--trace", str(txt), "--perfetto", str(pf)],
        check=True,
        timeout=300,
    )
    trace = pb.Trace.FromString(pf.read_bytes())
    lines = [m.groupdict() for ln in txt.read_text().splitlines() if (m := LINE.match(ln))]
    return trace, lines


def events(trace: Any) -> list[tuple[int, Any]]:
    bundles = [p.ftrace_events for p in trace.packet if p.HasField("ftrace_events")]
    return [(b.cpu, e) for b in bundles for e in b.event]


def test_every_tracepoint_is_in_the_perfetto_trace(tmp_path: Path) -> None:
    trace, lines = run(tmp_path, "sched-idle")
    assert trace.packet[0].system_info.utsname.release == "2.6.35"
    # sched_waking is Perfetto's extra copy of each sched_wakeup (the text's
    # own, in the waker's context, is not in the Perfetto stream);
    # hrtimer_start is text only.
    pf = [(cpu, e) for cpu, e in events(trace) if e.WhichOneof("event") != "sched_waking"]
    text = [ln for ln in lines if ln["ev"] not in ("hrtimer_start", "sched_waking")]
    assert len(pf) == len(text) > 1000
    for (cpu, e), ln in zip(pf, text):
        kind = e.WhichOneof("event")
        assert (kind, cpu, e.pid) == (ln["ev"], int(ln["cpu"]), int(ln["pid"]))
        assert (e.timestamp + 500) // 1000 == round(float(ln["ts"]) * 1e6)  # the text rounds to the us
        fields = dict(kv.split("=", 1) for kv in ln["rest"].replace("==> ", "").split())
        msg = getattr(e, kind)
        for name, value in fields.items():
            got = getattr(msg, name)
            if name == "prev_state":
                assert got == {"R": 0, "S": 1}[value]
            else:
                assert got == (int(value) if value.isdigit() else value), (name, ln)
    # Active balance: the stopper makes the move in its own name.
    migrations = [e for cpu, e in pf if e.WhichOneof("event") == "sched_migrate_task"]
    tree = next(p.process_tree for p in trace.packet if p.HasField("process_tree"))
    names = {t.tid: t.name for t in tree.threads}
    assert any(names[e.pid].startswith("migration/") for e in migrations)
    seen = {e.pid for _, e in pf} | {e.sched_switch.next_pid for _, e in pf if e.HasField("sched_switch")}
    assert seen <= set(names) | {0}


def test_prev_state_follows_the_kernel_layout(tmp_path: Path) -> None:
    scenario = tmp_path / "sleep-exit.toml"
    scenario.write_text(SLEEP_EXIT)
    trace, _ = run(tmp_path, str(scenario))
    assert trace.packet[0].system_info.utsname.release == "6.1"
    states = {
        (e.sched_switch.prev_comm.split("-")[0], e.sched_switch.prev_state)
        for _, e in events(trace)
        if e.HasField("sched_switch") and e.sched_switch.prev_pid
    }
    # 4.14+: 1 = S (the sleeper), 0x10 = X (the quitter's exit).
    assert ("sleeper", 1) in states
    assert ("quitter", 0x10) in states


def test_mm_vmscan_events_are_in_the_perfetto_trace(tmp_path: Path) -> None:
    """P3's readers past one kswapd's saturation: every mm_vmscan event of
    the text that Perfetto's FtraceEvent knows is in the protobuf stream,
    with the same CPU, pid, time and fields (mm_vmscan_wakeup_kswapd has no
    Perfetto message and is text only)."""
    sets = ["task.dd.count=40", "measure.warmup=100ms", "measure.duration=200ms"]
    trace, lines = run(tmp_path, "kswapd-threads", *[a for s in sets for a in ("--set", s)])
    known = {"mm_vmscan_kswapd_wake", "mm_vmscan_kswapd_sleep", "mm_vmscan_direct_reclaim_begin"}
    known.add("mm_vmscan_direct_reclaim_end")
    text = [ln for ln in lines if ln["ev"] in known]
    pf = [(cpu, e) for cpu, e in events(trace) if e.WhichOneof("event") in known]
    assert len(pf) == len(text) > 0
    assert {ln["ev"] for ln in text} >= {"mm_vmscan_kswapd_wake", "mm_vmscan_direct_reclaim_begin"}
    for (cpu, e), ln in zip(pf, text):
        kind = e.WhichOneof("event")
        assert (kind, cpu, e.pid) == (ln["ev"], int(ln["cpu"]), int(ln["pid"]))
        assert (e.timestamp + 500) // 1000 == round(float(ln["ts"]) * 1e6)  # the text rounds to the us
        msg = getattr(e, kind)
        for kv in ln["rest"].split():
            name, value = kv.split("=", 1)
            if value.isdigit() and name != "classzone_idx":
                assert getattr(msg, name) == int(value), (name, ln)


def test_cpu_frequency_events_are_in_the_perfetto_trace(tmp_path: Path) -> None:
    """With a processor (`machine.cpufreq`) every power:cpu_frequency line of
    the text is a CpuFrequencyFtraceEvent with the same CPU, pid, time,
    state (kHz) and cpu_id."""
    sets = ["machine.preset=numa48", "machine.cpufreq=e5-2670v3", "measure.warmup=0s", "measure.duration=300ms"]
    trace, lines = run(tmp_path, "kworker-stack", *[a for s in sets for a in ("--set", s)])
    text = [ln for ln in lines if ln["ev"] == "cpu_frequency"]
    pf = [(cpu, e) for cpu, e in events(trace) if e.WhichOneof("event") == "cpu_frequency"]
    assert len(pf) == len(text) > 0
    for (cpu, e), ln in zip(pf, text):
        assert (cpu, e.pid) == (int(ln["cpu"]), int(ln["pid"]))
        assert (e.timestamp + 500) // 1000 == round(float(ln["ts"]) * 1e6)
        assert ln["rest"] == f"state={e.cpu_frequency.state} cpu_id={e.cpu_frequency.cpu_id}"


def test_cpu_idle_events_are_in_the_perfetto_trace(tmp_path: Path) -> None:
    """With a cpuidle driver every power:cpu_idle line of the text is a
    CpuIdleFtraceEvent with the same CPU, time, state and cpu_id."""
    sets = ["measure.warmup=0s", "measure.duration=100ms"]
    trace, lines = run(tmp_path, "kworker-stack", *[a for s in sets for a in ("--set", s)])
    text = [ln for ln in lines if ln["ev"] == "cpu_idle"]
    pf = [(cpu, e) for cpu, e in events(trace) if e.WhichOneof("event") == "cpu_idle"]
    assert len(pf) == len(text) > 0
    for (cpu, e), ln in zip(pf, text):
        assert (cpu, e.pid) == (int(ln["cpu"]), 0)
        assert (e.timestamp + 500) // 1000 == round(float(ln["ts"]) * 1e6)
        assert ln["rest"] == f"state={e.cpu_idle.state} cpu_id={e.cpu_idle.cpu_id}"


def test_cpu_idle_follows_the_governor_period_by_period(tmp_path: Path) -> None:
    """Per CPU the cpu_idle lines alternate a state and PWR_EVENT_EXIT (a
    tick that finds the CPU idle exits and enters again), and the entries
    per state are the cpuidle section's usage counts; the report is the
    same bytes with and without the trace."""
    import json

    sets = ["measure.warmup=0s", "measure.duration=300ms"]
    args = [a for s in sets for a in ("--set", s)]
    _, lines = run(tmp_path, "kworker-stack", *args)
    plain = tmp_path / "plain.json"
    traced = tmp_path / "traced.json"
    for out, extra in ((plain, []), (traced, ["--trace", str(tmp_path / "t.txt")])):
        subprocess.run(
            [sys.executable, "-m", "schedlab", "run", "kworker-stack", *args, "--json", str(out), *extra],
            check=True,
            capture_output=True,
        )
    assert plain.read_bytes() == traced.read_bytes()
    report = json.loads(plain.read_text())
    exit_state = 2**32 - 1
    entries: dict[int, list[int]] = {}
    last: dict[int, int] = {}
    for ln in lines:
        if ln["ev"] != "cpu_idle":
            continue
        cpu = int(ln["cpu"])
        state = int(ln["rest"].split()[0].split("=")[1])
        if state == exit_state:
            assert last.get(cpu) not in (None, exit_state), f"CPU {cpu}: an exit without an entry"
        else:
            assert last.get(cpu, exit_state) == exit_state, f"CPU {cpu}: two entries in a row"
            entries.setdefault(cpu, [0] * len(report["cpuidle"]["states"]))[state] += 1
        last[cpu] = state
    assert entries
    for row in report["cpuidle"]["cpus"]:
        assert entries.get(row["cpu"], [0] * len(row["usage"])) == row["usage"], row["cpu"]
