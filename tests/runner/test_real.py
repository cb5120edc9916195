"""The real-kernel runner (schedlab-runner) and `schedlab real` / `compare`.

These run real threads on this machine for about half a second each. Bounds
are loose, and relative where other load on the host could skew absolute
numbers (a shared CI box): the nice 0 : nice 5 split on one CPU is a ratio
inside our own autogroup, whatever else runs.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from schedlab import real
from schedlab.errors import SchedlabError

# Real threads on this machine, judged by what they measure: run alone (pyproject, `alone`).
pytestmark = pytest.mark.alone

MACHINE2 = """\
[machine]
sockets = 1
cores_per_socket = 2
threads_per_core = 1
[kernel]
version = "6.6"
"""

HOGS = f"""\
name = "two-hogs"
{MACHINE2}
[measure]
duration = "500ms"
[[task]]
name = "hog"
count = 2
program = [{{ loop = {{ count = 0, body = [{{ run = "10ms" }}] }} }}]
"""

NICE_PAIR = f"""\
name = "nice-pair"
{MACHINE2}
[measure]
duration = "500ms"
[[task]]
name = "n0"
cpus = "1"
program = [{{ loop = {{ count = 0, body = [{{ run = "10ms" }}] }} }}]
[[task]]
name = "n5"
nice = 5
cpus = "1"
program = [{{ loop = {{ count = 0, body = [{{ run = "10ms" }}] }} }}]
[[task]]
name = "tick"
cpus = "0"
program = [{{ loop = {{ count = 0, body = [{{ timer = "10ms" }}, {{ run = "1ms" }}] }} }}]
"""

PARALLEL = f"""\
name = "ktask"
{MACHINE2}
[measure]
duration = "100ms"
[[task]]
name = "k"
program = [{{ run = "1ms" }}, {{ loop = {{ count = 2, body = [{{ parallel = {{ work = "10ms" }} }}] }} }}]
"""

RT = f"""\
name = "rt-vs-fair"
{MACHINE2}
[measure]
duration = "500ms"
[[task]]
name = "fifo"
policy = "SCHED_FIFO"
rt_priority = 10
cpus = "1"
program = [{{ loop = {{ count = 0, body = [{{ run = "10ms" }}] }} }}]
[[task]]
name = "fair"
cpus = "1"
program = [{{ loop = {{ count = 0, body = [{{ run = "10ms" }}] }} }}]
"""

CGROUPS = f"""\
name = "cgroups"
{MACHINE2}
[measure]
warmup = "100ms"
duration = "600ms"
[[cgroup]]
path = "/a"
"cpu.weight" = 100
[[cgroup]]
path = "/b"
"cpu.weight.nice" = -5
[[cgroup]]
path = "/b/capped"
"cpu.max" = "10000 50000"
[[task]]
name = "a"
cgroup = "/a"
cpus = "1"
program = [{{ run = "1h" }}]
[[task]]
name = "b"
cgroup = "/b"
cpus = "1"
program = [{{ run = "1h" }}]
[[task]]
name = "capped"
cgroup = "/b/capped"
cpus = "0"
program = [{{ run = "1h" }}]
"""


@pytest.fixture(scope="module")
def runner() -> list[str]:
    try:
        return real.find_runner()
    except SchedlabError as e:
        pytest.skip(f"schedlab-runner not available: {e}")


def _write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def _run(runner: list[str], scenario: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*runner, str(scenario), *extra], capture_output=True, text=True, timeout=30, check=False)


def _tasks(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["comm"]: t for t in doc["tasks"]}


def test_two_hogs_run_or_wait_the_whole_window(runner: list[str], tmp_path: Path) -> None:
    r = _run(runner, _write(tmp_path, HOGS))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["source"] == "real"
    assert doc["host"]["nr_cpus"] == os.cpu_count()
    assert doc["machine"]["nr_cpus"] == 2
    assert [row["cpu"] for row in doc["mpstat"]["average"]] == ["all", 0, 1]
    window = doc["measure"]["end_ns"] - doc["measure"]["start_ns"]
    assert window == 500_000_000
    t = _tasks(doc)
    assert set(t) == {"hog-0", "hog-1"}
    for task in t.values():
        # A hog never sleeps: it is on a CPU or on a run queue all the time (a
        # wait still in progress at either snapshot is not accounted yet: loose).
        assert 0.7 * window < task["runtime_ns"] + task["wait_ns"] < 1.1 * window, task
        assert task["runtime_ns"] > 0.05 * window, task
        assert task["nr_voluntary_switches"] <= 3, task
        assert task["exit_ns"] is None
    # Work is spun in user space: %usr dominates %sys on the busy CPUs.
    avg = doc["mpstat"]["average"][0]
    assert avg["usr"] + avg["nice"] > 5 * avg["sys"], avg


def test_nice_0_vs_5_on_one_cpu_split_by_weight(runner: list[str], tmp_path: Path) -> None:
    r = _run(runner, _write(tmp_path, NICE_PAIR))
    assert r.returncode == 0, r.stderr
    t = _tasks(json.loads(r.stdout))
    n0, n5 = t["n0"]["runtime_ns"], t["n5"]["runtime_ns"]
    share = n0 / (n0 + n5)
    # 1024 / (1024 + 335) = 75.4 %
    assert 0.65 < share < 0.85, (n0, n5, share)
    assert t["n0"]["last_cpu"] == 1 and t["n5"]["last_cpu"] == 1
    assert t["n0"]["nr_migrations"] in (0, None)
    # The periodic timer: ~50 wakeups in 0.5 s, each measured.
    tick = t["tick"]
    assert 20 <= tick["timer_delay_count"] <= 51, tick  # fewer when a busy host makes it overrun
    assert tick["timer_delay_p50_ns"] is not None and tick["timer_delay_p50_ns"] >= 0
    assert tick["timer_delay_p99_ns"] >= tick["timer_delay_p50_ns"]
    assert tick["timer_delay_avg_ns"] <= tick["timer_delay_max_ns"]
    # The runner measures timer delays only: no wakeup latency (wakeup -> pick).
    assert not [k for k in tick if k.startswith("wakeup_latency_")], tick


def test_parallel_is_refused_with_its_key_path(runner: list[str], tmp_path: Path) -> None:
    r = _run(runner, _write(tmp_path, PARALLEL))
    assert r.returncode == 2
    assert r.stdout == ""
    assert '"parallel"' in r.stderr
    assert "task[0].program[1].loop.body[0].parallel" in r.stderr
    assert "[SL120]" in r.stderr


def test_too_big_machine_is_refused(runner: list[str], tmp_path: Path) -> None:
    big = HOGS.replace("cores_per_socket = 2", f"cores_per_socket = {(os.cpu_count() or 1) + 2}")
    r = _run(runner, _write(tmp_path, big))
    assert r.returncode == 2
    assert "[SL110]" in r.stderr and "machine" in r.stderr


def test_schedlab_real_refuses_too_big_machine(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("schedlab._native")
    from schedlab.cli import main

    rc = main(["real", str(_write(tmp_path, HOGS)), "--set", f"machine.cores_per_socket={(os.cpu_count() or 1) * 4}"])
    assert rc == 2
    err = capsys.readouterr().err
    assert "[SL110]" in err and "CPUs" in err


def test_rt_fifo_beats_fair_on_one_cpu(runner: list[str], tmp_path: Path) -> None:
    r = _run(runner, _write(tmp_path, RT))
    if r.returncode == 3 and "EPERM" in r.stderr:
        pytest.skip(f"SCHED_FIFO not permitted here: {r.stderr.strip()}")
    assert r.returncode == 0, r.stderr
    t = _tasks(json.loads(r.stdout))
    assert t["fifo"]["policy"] == "SCHED_FIFO" and t["fifo"]["prio"] == 89
    fifo, fair = t["fifo"], t["fair"]
    # A FIFO hog starves a fair hog on its CPU (but for RT throttling / the fair
    # server, at most ~5 %); were both fair they would split the CPU 50/50.
    share = fifo["runtime_ns"] / (fifo["runtime_ns"] + fair["runtime_ns"])
    assert share > 0.85, (fifo, fair)
    # (The starved task's run_delay is only accounted when it next runs, so its
    # wait_ns is no witness; its CPU time is.)
    assert fair["runtime_ns"] < 0.15 * 500_000_000, (fifo, fair)


def test_serial_markers(runner: list[str], tmp_path: Path) -> None:
    r = _run(runner, _write(tmp_path, HOGS), "--serial", "--set", "measure.duration=100ms")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    begin = lines.index("=== SCHEDLAB-REPORT BEGIN ===")
    end = lines.index("=== SCHEDLAB-REPORT END ===")
    doc = json.loads("\n".join(lines[begin + 1 : end]))
    assert doc["measure"]["end_ns"] == 100_000_000


def test_real_repeat_medians_and_compare(runner: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("schedlab._native")
    from schedlab.cli import main

    scen = _write(tmp_path, NICE_PAIR.replace("500ms", "200ms"))
    real_json, sim_json = tmp_path / "real.json", tmp_path / "sim.json"
    assert main(["real", str(scen), "--repeat", "2", "--json", str(real_json), "-q"]) == 0
    doc = json.loads(real_json.read_text())
    assert doc["repeat"] == 2 and doc["source"] == "real"
    assert main(["run", str(scen), "--json", str(sim_json), "-q"]) == 0
    capsys.readouterr()
    assert main(["compare", str(sim_json), str(real_json)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["metric", "sim", "real", "difference"]
    rows = {line.rsplit(None, 3)[0]: line.split()[-3:] for line in out.splitlines()[1:]}
    assert "cpu share % n0" in rows and "%idle cpu 0" in rows
    assert "migrations/s" in rows and "switches/s" in rows
    sim_n0, real_n0 = float(rows["cpu share % n0"][0]), float(rows["cpu share % n0"][1])
    assert 60 < sim_n0 < 90 and 0 < real_n0 <= 100


def test_median_of_reports() -> None:
    a = {"tasks": [{"comm": "x", "runtime_ns": 1, "pid": 7}], "migrations": 1, "source": "real"}
    b = {"tasks": [{"comm": "x", "runtime_ns": 5, "pid": 8}], "migrations": 2, "source": "real"}
    c = {"tasks": [{"comm": "x", "runtime_ns": 3, "pid": 9}], "migrations": 9, "source": "real"}
    m = real.median_reports([a, b, c])
    assert m["tasks"][0]["runtime_ns"] == 3 and m["tasks"][0]["pid"] == 7
    assert m["migrations"] == 2 and m["repeat"] == 3


def test_compare_uses_the_simulators_window_not_its_totals() -> None:
    # The simulator's totals count from time 0 (warm-up included); its
    # "window" holds the deltas over the measurement, as the runner measures.
    import schedlab

    text = (
        'name = "w"\n[machine]\npreset = "4cpu"\n[kernel]\nversion = "6.1"\n'
        '[measure]\nwarmup = "1s"\nduration = "2s"\n'
        '[[task]]\nname = "hog"\ncount = 8\nprogram = [{ loop = { count = 0, body = [{ run = "100ms" }] } }]\n'
    )
    sim = schedlab.run_scenario(text=text, seed=1)
    for t in sim["tasks"]:
        assert t["runtime_ns"] > t["window"]["runtime_ns"]
    rows = {m: (a, b) for m, a, b in real.compare_rows(sim, sim)}
    shares = [a for m, (a, _) in rows.items() if m.startswith("cpu share % hog")]
    assert len(shares) == 8
    for s in shares:
        assert s is not None and 45.0 <= s <= 55.0  # 8 hogs on 4 CPUs: half a CPU each


# -------------------------------------------------------------- calibration


def test_calibrate_measures_every_cost_key(runner: list[str], tmp_path: Path) -> None:
    """`schedlab-runner --calibrate` on this host: every key the simulator
    takes, each a positive median within its rounds, in the order of the
    paths' weight (a pipe write is cheaper than a blocking hand-off, which
    is cheaper than starting a thread); the table parses as kernel.costs."""
    from schedlab import calibrate

    doc = calibrate.run_local(runner)
    costs = calibrate.check_calibration(doc, "here")
    assert tuple(costs)[: len(calibrate.KEYS)] == calibrate.KEYS
    # A second CPU gives the remote wakeup and the timers' spread beside a
    # busy CPU too (this host's affinity allowing).
    two = len(os.sched_getaffinity(0)) > 1
    assert ("wakeup_ipi" in costs) == two and ("timer_irq_spread" in costs) == two
    # What is left of a latency once the modelled parts are taken off, and
    # the halt-polling window, may be 0 (bare metal, a loaded host), and so
    # may the timers' spread (a QEMU TCG guest's icount clock); the costs of
    # a path the kernel runs are not.
    residual = {"wakeup_ipi", "timer_irq_delay", "timer_irq_spread", "idle_exit", "halt_poll"}
    for row in doc["calibration"]["costs"]:
        low = 0 if row["key"] in residual else 1
        assert low <= row["min_ns"] <= row["median_ns"] <= row["max_ns"], row
    assert costs["pipe_write"] < costs["context_switch"] < costs["fork"], costs
    table = calibrate.costs_table(doc)
    assert table.splitlines()[1] == "[kernel.costs]"
    text = _write(tmp_path, HOGS).read_text().replace("[machine]", table.split("\n", 1)[1] + "\n[machine]", 1)
    from schedlab import native

    native.check(text, "calibrated.toml", [])  # every key accepted, every value in range
    rep = native.run(text, "calibrated.toml", 1, [("measure.duration", '"10ms"')], False)
    assert rep["measure"]["end_ns"] > 0


def test_calibrate_refuses_a_scenario(runner: list[str], tmp_path: Path) -> None:
    r = _run(runner, _write(tmp_path, HOGS), "--calibrate")
    assert r.returncode == 2 and "--calibrate takes no SCENARIO" in r.stderr


def test_a_calibration_report_is_checked(tmp_path: Path) -> None:
    from schedlab import calibrate
    from schedlab.validation import kept_calibration

    with pytest.raises(SchedlabError, match="not a calibration report"):
        calibrate.check_calibration({"source": "real"}, "x.json")
    bad = {"source": "real-calibration", "calibration": {"cpu": 0, "costs": [{"key": "tea", "median_ns": 1}]}}
    with pytest.raises(SchedlabError, match=r"x.json: calibration.costs\[0\].*accepted"):
        calibrate.check_calibration(bad, "x.json")
    short = {"source": "real-calibration", "calibration": {"cpu": 0, "costs": [{"key": "fork", "median_ns": 1}]}}
    with pytest.raises(SchedlabError, match="lacks pipe_write"):
        calibrate.check_calibration(short, "x.json")
    assert calibrate.cost_overrides({"fork": 5}) == [("kernel.costs.fork", '"5ns"')]
    with pytest.raises(SchedlabError, match="--costs default"):
        kept_calibration(str(tmp_path))


# sched_setattr(SCHED_DEADLINE) on this kernel against the model's admission
# (sched/syscalls.rs check_dl_groups): each case is a 2-CPU scenario whose
# deadline group the kernel admits or refuses with an errno.
def _dl_case(name: str, extra: str, runtime: str = "5ms", deadline: str = "10ms", count: int = 1) -> str:
    return f"""\
name = "{name}"
{MACHINE2}
[measure]
duration = "50ms"
[[task]]
name = "dl"
count = {count}
policy = "SCHED_DEADLINE"
sched_runtime = "{runtime}"
sched_deadline = "{deadline}"
sched_period = "{deadline}"
{extra}
program = [{{ loop = {{ count = 0, body = [{{ run = "1ms" }}] }} }}]
"""


DL_ADMISSION = {
    "fits": _dl_case("fits", "", count=2),
    "over the root domain (1.92 CPUs of 1.9)": _dl_case("over", "", "9600us", count=2),
    "over once the fair servers hold theirs (1.84 CPUs; 6.12+)": _dl_case("servers", "", "9200us", count=2),
    "deadline below runtime": _dl_case("order", "", "5ms", "4ms"),
    "period below sched_deadline_period_min_us": _dl_case("short", "", "20us", "50us"),
    "runtime below 1024 ns": _dl_case("tiny", "", "1000ns", "1ms"),
    "affinity narrower than the root domain": _dl_case("pinned", 'cpus = "0"'),
    "SCHED_FLAG_RECLAIM": _dl_case("reclaim", 'sched_flags = ["SCHED_FLAG_RECLAIM"]'),
    "SCHED_FLAG_DL_OVERRUN": _dl_case("overrun", 'sched_flags = ["SCHED_FLAG_DL_OVERRUN"]'),
}
_ERRNO = {"os error 1)": "EPERM", "os error 16)": "EBUSY", "os error 22)": "EINVAL"}
SIGXCPU = 24


def _host_dl_sets() -> list[tuple[str, str]]:
    from schedlab.validation.runners import host_series

    sysctl = Path("/proc/sys/kernel")
    sets = [("kernel.version", json.dumps(host_series()))]
    for key in ("sched_rt_runtime_us", "sched_rt_period_us"):
        sets.append((f'kernel.sysctl."kernel.{key}"', (sysctl / key).read_text().strip()))
    return sets


def test_deadline_admission_refuses_what_this_kernel_refuses(runner: list[str], tmp_path: Path) -> None:
    from schedlab import native

    if os.cpu_count() != 2:
        pytest.skip("a deadline task's affinity must be the whole root domain: needs a 2-CPU host")
    sets = _host_dl_sets()
    verdicts = {}
    for case, text in DL_ADMISSION.items():
        r = _run(runner, _write(tmp_path, text))
        real_v = "ok" if r.returncode == 0 else next((e for k, e in _ERRNO.items() if k in r.stderr), r.stderr)
        if r.returncode in (-SIGXCPU, 128 + SIGXCPU):
            real_v = "SIGXCPU"  # admitted, then killed at its first overrun
        if case == "fits" and real_v == "EPERM":
            pytest.skip(f"SCHED_DEADLINE not permitted here: {r.stderr.strip()}")
        try:
            native.run(text, "t.toml", 1, sets, False)
            sim_v = "ok"
        except SchedlabError as e:
            sim_v = next((n for n in ("EPERM", "EBUSY", "EINVAL", "SIGXCPU") if n in str(e)), str(e))
        verdicts[case] = (sim_v, real_v)
    differ = {c: v for c, v in verdicts.items() if v[0] != v[1]}
    assert not differ, differ
    assert {r for _, r in verdicts.values()} >= {"ok", "EBUSY", "EINVAL", "EPERM", "SIGXCPU"}, verdicts


CPUSET = f"""\
name = "cpuset"
{MACHINE2}
[measure]
warmup = "100ms"
duration = "500ms"
[[cgroup]]
path = "/p"
"cpuset.cpus" = "0"
[[cgroup]]
path = "/p/q"
"cpuset.cpus" = "1"
[[cgroup]]
path = "/f"
[[task]]
name = "p"
count = 2
cgroup = "/p/q"
program = [{{ run = "1h" }}]
[[task]]
name = "f"
cgroup = "/f"
program = [{{ run = "1h" }}]
"""


def _cpu_hierarchy() -> Path | None:
    """Where this machine's cpu controller is mounted (v1 or v2), if at all."""
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        pre, _, post = line.partition(" - ")
        fields = post.split()
        if fields and fields[0] in ("cgroup", "cgroup2"):
            mnt = Path(pre.split()[4])
            if fields[0] == "cgroup" and "cpu" in fields[2].split(","):
                return mnt
            if fields[0] == "cgroup2" and "cpu" in (mnt / "cgroup.controllers").read_text().split():
                return mnt
    return None


def test_cgroups_are_made_weighted_capped_and_removed(runner: list[str], tmp_path: Path) -> None:
    mnt = _cpu_hierarchy()
    if os.geteuid() != 0 or mnt is None:
        pytest.skip("making cgroups needs root and a mounted cpu controller")
    r = _run(runner, _write(tmp_path, CGROUPS))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    rows = {c["path"]: c for c in doc["cgroups"]}
    assert list(rows) == ["/a", "/b", "/b/capped"]
    # cpu.weight.nice -5 is the weight 3121 (cpu.weight 305): /a's hog and
    # /b's share CPU 1 about 1:3.
    assert rows["/b"]["weight"] == 305
    t = _tasks(doc)
    share = t["b"]["runtime_ns"] / (t["a"]["runtime_ns"] + t["b"]["runtime_ns"])
    assert 0.65 < share < 0.85, share
    # 10 ms per 50 ms: the capped hog alone on CPU 0 gets about a fifth of
    # it, and throttles in every period of the window.
    capped = rows["/b/capped"]
    assert capped["max"] == "10000 50000"
    assert 12 < capped["cpu_pct"] < 28, capped
    assert capped["nr_periods"] >= 10 and capped["nr_throttled"] >= 10, capped
    assert capped["throttled_usec"] > 200_000, capped
    # /b's usage counts its child's.
    assert rows["/b"]["usage_usec"] >= rows["/b/capped"]["usage_usec"] + t["b"]["runtime_ns"] // 1000 - 1000
    # Nothing left behind.
    assert not list(mnt.glob("schedlab-*"))


def test_cpusets_hold_their_tasks_and_are_removed(runner: list[str], tmp_path: Path) -> None:
    mnt = _cpu_hierarchy()
    if os.geteuid() != 0 or mnt is None:
        pytest.skip("making cgroups needs root and a mounted cpu controller")
    if mnt.name == "cpu" and not (mnt.parent / "cpuset" / "cpuset.cpus").exists():
        pytest.skip("cgroup v1 without a cpuset hierarchy beside the cpu one")
    r = _run(runner, _write(tmp_path, CPUSET))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    # As the kernel reads them back: /p/q's 1 shares nothing with /p's 0, so
    # it runs on /p's (v2 computes that; on v1 the runner writes it).
    eff = {c["path"]: c.get("cpus_effective") for c in doc["cgroups"]}
    assert eff == {"/p": "0", "/p/q": "0", "/f": "0-1"}, eff
    # /p/q's two hogs may run on CPU 0 only (their cpus within the
    # cpuset), share it and never leave it.
    t = _tasks(doc)
    assert [t[c]["cpus_allowed"] for c in ("p-0", "p-1", "f")] == ["0", "0", "0-1"]
    pq = t["p-0"]["runtime_ns"] + t["p-1"]["runtime_ns"]
    window = doc["measure"]["end_ns"] - doc["measure"]["start_ns"]
    assert pq < 1.05 * window, (pq, window)
    assert t["p-0"]["nr_migrations"] in (0, None) and t["p-1"]["nr_migrations"] in (0, None)
    for h in {mnt, mnt.parent / "cpuset"}:
        assert not list(h.glob("schedlab-*")), h
