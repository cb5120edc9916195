"""`--trace FILE.dat` writes trace-cmd's binary format: Debian's `trace-cmd
report -N` (the events' own print formats, no plugins) must print every
event of schedlab's ftrace text of the same run, CPU by CPU, in the same
order, with the same timestamp, task and fields. `make test` installs
trace-cmd (scripts/test-tools) and sets SCHEDLAB_REQUIRE_TOOLS=1, so a
missing trace-cmd fails there instead of skipping."""

from __future__ import annotations

import re
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

import schedlab
from _tools import real_tool
from schedlab.errors import UsageError

pytestmark = pytest.mark.native

REPO = Path(__file__).resolve().parents[2]
_LINE = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+(?:\S+\s+)?(\d+\.\d+):\s+(\w+):\s+(.*)$")

#: (scenario, overrides): between them every event the trace has: wakeups
#: and hrtimers, forks and exits, RT pushes, the stopper's active balance
#: (migration/N), kswapd and direct reclaim.
CASES = {
    "smt-numa-wakers": (REPO / "validation" / "smt-numa-wakers.toml", {}),
    "fork-exit": (REPO / "validation" / "fork-exit.toml", {}),
    "rt-push-pull": (REPO / "validation" / "rt-push-pull.toml", {}),
    "kswapd-zswap": (REPO / "scenarios" / "seeds" / "kswapd-zswap.toml", {"measure.duration": "1s"}),
    "sched-idle": (REPO / "scenarios" / "seeds" / "sched-idle.toml", {"measure.duration": "2s"}),
    "cpufreq": (
        REPO / "scenarios" / "seeds" / "kworker-stack.toml",
        {"machine.preset": "numa48", "machine.cpufreq": "e5-2670v3", "measure.duration": "500ms"},
    ),
}


@pytest.fixture(scope="module")
def trace_cmd() -> str:
    return real_tool(("trace-cmd",), "trace-cmd")


def _per_cpu(lines: list[str]) -> dict[int, list[tuple[str, str, int, str, str]]]:
    per: dict[int, list[tuple[str, str, int, str, str]]] = defaultdict(list)
    for ln in lines:
        if ln.startswith("#") or ln.startswith("cpus=") or not ln.strip():
            continue
        m = _LINE.match(ln)
        assert m, f"unparsed line: {ln!r}"
        comm, pid, cpu, ts, ev, body = m.groups()
        per[int(cpu)].append((ts, comm.strip(), int(pid), ev, " ".join(body.split())))
    return per


@pytest.mark.parametrize("case", sorted(CASES))
def test_trace_cmd_reports_the_same_events_as_the_text(trace_cmd: str, case: str, tmp_path: Path) -> None:
    scen, over = CASES[case]
    txt, dat = tmp_path / "t.txt", tmp_path / "t.dat"
    a = schedlab.run_scenario(scen, seed=1, overrides=over, trace=str(txt))
    b = schedlab.run_scenario(scen, seed=1, overrides=over, trace=str(dat))
    assert a["sim"]["trace_hash"] == b["sim"]["trace_hash"]
    assert not (tmp_path / "t.dat.pages").exists(), "the spill file is removed"
    r = subprocess.run([trace_cmd, "report", "-N", str(dat)], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    text = _per_cpu(txt.read_text().splitlines())
    report = _per_cpu(r.stdout.splitlines())
    # power:cpu_idle and sched_waking are written only when traced, so not in the run's count.
    idle = sum(1 for evs in text.values() for *_, ev, _ in evs if ev in ("cpu_idle", "sched_waking"))
    assert sum(map(len, text.values())) - idle == a["sim"]["trace_events"] > 0
    for cpu in sorted(set(text) | set(report)):
        assert len(text[cpu]) == len(report[cpu]), f"CPU {cpu}: {len(text[cpu])} events in the text, {len(report[cpu])}"
        for x, y in zip(text[cpu], report[cpu]):
            assert x == y, f"CPU {cpu}: text {x} != trace-cmd {y}"
    if case == "sched-idle":
        assert any(c.startswith("migration/") for evs in report.values() for _, c, *_ in evs)
    if case == "cpufreq":
        assert any(ev == "cpu_frequency" for evs in report.values() for *_, ev, _ in evs)
        assert any(ev == "cpu_idle" for evs in report.values() for *_, ev, _ in evs)
    if case == "kswapd-zswap":
        assert any(ev.startswith("mm_vmscan_") for evs in report.values() for *_, ev, _ in evs)


def test_a_dat_path_that_cannot_be_written_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        schedlab.run_scenario(REPO / "validation" / "fork-exit.toml", trace=str(tmp_path / "no" / "t.dat"))
