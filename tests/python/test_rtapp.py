"""rt-app workloads in and out (schedlab.rtapp): the lenient JSON rt-app
reads, the example set run through the simulator, the round trip through
export-rtapp (the same trace, event for event), the exported files run by
Debian's rt-app 1.0, and the refusals with their key paths."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import schedlab
from _tools import real_tool
from schedlab import rtapp
from schedlab._paths import PACKAGE
from schedlab.errors import NotModelledError, ScenarioError, UsageError

pytestmark = pytest.mark.native

EXAMPLES = PACKAGE / "data" / "rtapp"


def _run_json(path: Path, tmp: Path, machine: str = "4cpu") -> dict[str, Any]:
    out = tmp / f"{path.stem}.report.json"
    r = subprocess.run(
        [sys.executable, "-m", "schedlab", "run", str(path), "--machine", machine, "--json", str(out), "-q"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    return dict(json.loads(out.read_text()))


def _tasks(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["comm"]: t for t in report["tasks"]}


def _share(report: dict[str, Any], comm: str) -> float:
    m = report["measure"]
    window = float(m["end_ns"] - m["start_ns"])
    return 100.0 * float(_tasks(report)[comm]["window"]["runtime_ns"]) / window


def test_lenient_json_as_json_c_reads_it() -> None:
    text = """{ /* c */ "tasks": { "t": { "run": 1, // line
                "run": 2, "sleep": 3, }, }, }"""
    doc = rtapp.loads(text, "x.json")
    # A duplicated key: its last value, in its first place.
    assert list(doc["tasks"]["t"].items()) == [("run", 2), ("sleep", 3)]
    with pytest.raises(ScenarioError, match=r"x\.json: syntax error: line 2, column \d+: not rt-app JSON"):
        rtapp.loads('{"tasks": {\n "t": {"run": }}}', "x.json")


def test_event_keys_go_by_prefix_in_rt_apps_order() -> None:
    doc = {"tasks": {"t": {"loop": 2, "runtime7": 5, "run-a": 10, "sleep_x": 20, "yield": "", "timerA": {
        "ref": "unique", "period": 100}}}}  # fmt: skip
    groups, duration = rtapp.to_scenario(doc, "x.json")
    assert duration == -1
    body = groups[0]["program"][0]["loop"]
    assert body["count"] == 2
    assert body["body"] == [
        {"runtime": "5us"}, {"run": "10us"}, {"sleep": "20us"}, {"yield": True},
        {"timer": {"period": "100us", "mode": "relative", "anchor": "start"}},
    ]  # fmt: skip


def test_periodic_tasks_get_their_duty_cycle(tmp_path: Path) -> None:
    r = _run_json(EXAMPLES / "periodic.json", tmp_path)
    assert _share(r, "light-0") == pytest.approx(20.0, abs=1.0)
    assert _share(r, "heavy") == pytest.approx(30.0, abs=1.5)
    assert _tasks(r)["heavy"]["nice"] == 5


def test_a_mutex_chain_runs_one_holder_at_a_time(tmp_path: Path) -> None:
    r = _run_json(EXAMPLES / "mutex-chain.json", tmp_path)
    total = sum(_share(r, f"chain-{i}") for i in range(3))
    assert 95.0 <= total <= 100.5, total  # four CPUs, but one mutex: at most one CPU's worth
    assert max(_share(r, f"chain-{i}") for i in range(3)) - min(_share(r, f"chain-{i}") for i in range(3)) < 2.0


def test_a_barrier_fan_out_moves_in_step(tmp_path: Path) -> None:
    r = _run_json(EXAMPLES / "barrier-fanout.json", tmp_path)
    shares = [_share(r, f"worker-{i}") for i in range(4)]
    assert max(shares) - min(shares) < 0.5, shares
    assert _share(r, "leader") == pytest.approx(2 * shares[0], rel=0.05)


def test_fifo_and_idle_threads_through_the_rtapp_key() -> None:
    r = schedlab.run_scenario("rtapp-fifo-idle")
    t = _tasks(dict(r))
    assert t["rt"]["policy"] == "SCHED_FIFO" and t["idle"]["policy"] == "SCHED_IDLE"
    assert _share(dict(r), "rt") == pytest.approx(60.0, abs=1.0)
    assert _share(dict(r), "idle") < 1.0 < _share(dict(r), "hog")


@pytest.mark.parametrize("name", ["periodic", "mutex-chain", "barrier-fanout", "fifo-idle"])
def test_export_round_trips_to_the_same_trace(name: str, tmp_path: Path) -> None:
    src = EXAMPLES / f"{name}.json"
    scen = tmp_path / "s.toml"
    scen.write_text(f'rtapp = "{src}"\n[machine]\npreset = "4cpu"\n')
    doc = rtapp.export(scen, scen.read_text(), target="head")
    out = tmp_path / f"{name}.out.json"
    out.write_text(json.dumps(doc))
    a, b = _run_json(src, tmp_path), _run_json(out, tmp_path)
    assert a["sim"]["trace_hash"] == b["sim"]["trace_hash"]
    assert a["sim"]["events"] == b["sim"]["events"]


@pytest.fixture(scope="module")
def rt_app() -> str:
    return real_tool(("rt-app",), "rt-app")


@pytest.mark.parametrize("name", ["periodic", "mutex-chain", "barrier-fanout", "fifo-idle"])
def test_exported_files_run_under_debians_rt_app(rt_app: str, name: str, tmp_path: Path) -> None:
    doc = rtapp.loads((EXAMPLES / f"{name}.json").read_text(), name)
    doc["tasks"].pop("idle", None)  # rt-app 1.0 has no SCHED_IDLE (refused below)
    src = tmp_path / "in.json"
    src.write_text(json.dumps(doc))
    scen = tmp_path / "s.toml"
    scen.write_text(f'rtapp = "{src}"\n[machine]\npreset = "4cpu"\n[measure]\nduration = "1s"\n')
    # An integer calibration: rt-app's own (CPU0) can take long on a loaded machine.
    out = rtapp.export(scen, scen.read_text(), target="1.0", calibration=100)
    f = tmp_path / "rtapp.json"
    f.write_text(json.dumps(out))
    # In tmp_path: rt-app writes its per-thread logs to its working directory.
    r = subprocess.run([rt_app, str(f)], capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path)
    log = r.stdout + r.stderr
    assert r.returncode == 0, log
    threads = sum(t["instance"] for t in out["tasks"].values())
    for i in range(threads):
        assert f"[{i}] starting thread" in log, log


DEADLINE_SCENARIO = """[machine]
preset = "4cpu"
[measure]
duration = "1s"
[[task]]
name = "dl"
policy = "SCHED_DEADLINE"
sched_runtime = "2ms"
sched_deadline = "8ms"
sched_period = "10ms"
program = [{ loop = { count = 0, body = [{ timer = { period = "10ms", anchor = "start" } }, { run = "1ms" }] } }]
"""


def test_deadline_tasks_round_trip_and_run_under_debians_rt_app(rt_app: str, tmp_path: Path) -> None:
    scen = tmp_path / "dl.toml"
    scen.write_text(DEADLINE_SCENARIO)
    out = rtapp.export(scen, scen.read_text(), target="1.0", calibration=100)
    task = out["tasks"]["dl"]
    assert (task["policy"], task["dl-runtime"], task["dl-deadline"], task["dl-period"]) == (
        "SCHED_DEADLINE",
        2000,
        8000,
        10000,
    )
    groups, _ = rtapp.to_scenario(out, "dl.json")
    (g,) = groups
    assert (g["policy"], g["sched_runtime"], g["sched_deadline"], g["sched_period"]) == (
        "SCHED_DEADLINE",
        "2000us",
        "8000us",
        "10000us",
    )
    f = tmp_path / "rtapp.json"
    f.write_text(json.dumps(out))
    r = subprocess.run([rt_app, str(f)], capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path)
    log = r.stdout + r.stderr
    assert r.returncode == 0, log
    # rt-app prints the reservation it asked sched_setattr() for, in ns.
    assert "period: 10000000, exec: 2000000, deadline: 8000000" in log, log


def test_refusals_name_the_key(tmp_path: Path) -> None:
    cases: dict[str, tuple[dict[str, Any], type[Exception], str]] = {
        "wait": (
            {"tasks": {"t": {"wait": {"ref": "c", "mutex": "m"}}}},
            NotModelledError,
            "tasks.t.wait: not modelled by schedlab: the wait event",
        ),
        "memory_limit": ({"tasks": {"t": {"run": 1, "memory_limit": 5}}}, NotModelledError, "tasks.t.memory_limit"),
        "frob": ({"tasks": {"t": {"run": 1, "frob": 5}}}, ScenarioError, "tasks.t.frob: not an rt-app key"),
        "deadline": ({"tasks": {"t": {"policy": "SCHED_DEADLINE", "run": 1}}}, ScenarioError, "tasks.t.dl-runtime"),
        "legacy deadline keys": (
            {"tasks": {"t": {"policy": "SCHED_DEADLINE", "dl-runtime": 100, "period": 1000, "run": 1}}},
            NotModelledError,
            "tasks.t.period",
        ),
        "custom slice": ({"tasks": {"t": {"dl-runtime": 100, "run": 1}}}, NotModelledError, "tasks.t.dl-runtime"),
        "phase cpus": (
            {"tasks": {"t": {"cpus": [0], "phases": {"a": {"run": 1, "cpus": [1]}}}}},
            NotModelledError,
            "tasks.t.phases.a.cpus",
        ),
        "shared timer": (
            {"tasks": {"t": {"instance": 2, "run": 1, "timer": {"ref": "tick", "period": 10}}}},
            NotModelledError,
            r'tasks\.t\.timer\.ref: not modelled by schedlab: the timer "tick" is shared by 2 threads',
        ),
        "global": ({"global": {"frob": 1}, "tasks": {"t": {"run": 1}}}, ScenarioError, "global.frob"),
    }
    for what, (doc, cls, match) in cases.items():
        with pytest.raises(cls, match=match):
            rtapp.to_scenario(doc, "x.json")
        del what
    scen = tmp_path / "s.toml"
    scen.write_text(f'rtapp = "{EXAMPLES / "fifo-idle.json"}"\n[machine]\npreset = "4cpu"\n')
    with pytest.raises(NotModelledError, match=r"task\[2\]\.policy: rt-app 1\.0 has no SCHED_IDLE"):
        rtapp.export(scen, scen.read_text())
    with pytest.raises(NotModelledError, match="timer anchored at its first use"):
        t = tmp_path / "t.toml"
        prog = 'program = [{ run = "1ms" }, { timer = "10ms" }]'
        t.write_text(f'[machine]\npreset = "4cpu"\n[[task]]\nname = "p"\n{prog}\n')
        rtapp.export(t, t.read_text())


def test_cli_refuses_with_status_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"tasks": {"t": {"run": 1,, }}}')
    for args, msg in (
        (["run", str(bad), "--machine", "4cpu"], "not rt-app JSON"),
        (["run", str(EXAMPLES / "periodic.json")], "names no machine"),
        (["export-rtapp", "smp64-mixed"], "has no rt-app form"),
    ):
        r = subprocess.run([sys.executable, "-m", "schedlab", *args], capture_output=True, text=True, check=False)
        assert r.returncode == 2 and msg in r.stderr, (args, r.stderr)
    with pytest.raises(UsageError):
        rtapp.export(EXAMPLES / "x.toml", "", target="2.0")


def test_taskgroups_round_trip_as_cgroups(tmp_path: Path) -> None:
    """A scenario's cgroups of the kernel's defaults export as upstream
    rt-app's taskgroup and import back as the same [[cgroup]]s; the
    scenario beside an rt-app file sets their cpu.weight."""
    scen = tmp_path / "g.toml"
    scen.write_text(
        '[machine]\npreset = "4cpu"\n[kernel]\nversion = "6.12"\n[[cgroup]]\npath = "/a"\n[[cgroup]]\npath = "/a/b"\n'
        '[[task]]\nname = "t"\ncgroup = "/a/b"\nprogram = [{ loop = { count = 0, body = [{ run = "1ms" }, '
        '{ sleep = "1ms" }] } }]\n'
    )
    doc = rtapp.export(scen, scen.read_text(), target="head")
    assert doc["tasks"]["t"]["taskgroup"] == "/a/b"
    groups, _ = rtapp.to_scenario(doc, "g.json")
    assert groups[0]["cgroup"] == "/a/b"
    with pytest.raises(NotModelledError, match=r"rt-app 1\.0 has no taskgroup"):
        rtapp.export(scen, scen.read_text(), target="1.0")
    weighted = scen.read_text().replace('path = "/a"\n', 'path = "/a"\n"cpu.weight" = 200\n', 1)
    with pytest.raises(NotModelledError, match=r"cgroup\[0\]\.cpu\.weight: rt-app's taskgroup sets no cgroup file"):
        rtapp.export(scen, weighted, target="head")
    # The weight comes from the scenario that names the rt-app file.
    (tmp_path / "w.json").write_text(json.dumps(doc))
    beside = tmp_path / "beside.toml"
    beside.write_text(
        'rtapp = "w.json"\n[machine]\npreset = "4cpu"\n[kernel]\nversion = "6.12"\n[measure]\nduration = "200ms"\n'
        '[[cgroup]]\npath = "/a"\n"cpu.weight" = 200\n'
    )
    report = schedlab.run_scenario(beside, seed=1)
    got = [(c["path"], c["weight"]) for c in report["cgroups"]]
    assert got == [("/a", 200), ("/a/b", 100)], got
