"""schedlab validate: tolerances, the suite file, metrics, the control logic,
the JSON shape, and (when `make oracle-setup` has run) one QEMU scenario end
to end, as CI runs it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import schedlab
from conftest import REPO, RunCli, trace_events
from schedlab import qemu
from schedlab import validation as v
from schedlab.errors import HostError, ScenarioError, SchedlabError, UsageError
from schedlab.metrics import MetricError, ReportView, percentile

NATIVE = pytest.mark.native

# --------------------------------------------------------------------------
# Tolerances


@pytest.mark.parametrize(
    ("text", "sim", "real", "ok"),
    [
        ("±3 points", 50.0, 52.9, True),
        ("±3 points", 50.0, 53.1, False),
        ("+-3 points", 50.0, 47.0, True),
        ("±25 %", 80.0, 100.0, True),
        ("±25 %", 74.0, 100.0, False),
        ("±25 %", 1.0, 0.0, False),
        ("±25 %", 0.0, 0.0, True),
        ("<= 5/s", 4.0, 5.0, True),
        ("<= 5/s", 0.0, 6.0, False),
        ("±2/s", 10.0, 12.0, True),
        ("±20 us", 30.0, 55.0, False),
        ("±1 ms", 30.0, 1000.0, True),
        ("±30 % or ±20 us", 5.0, 24.0, True),
        ("±30 % or ±20 us", 100.0, 140.0, True),
        ("±30 % or ±20 us", 5.0, 60.0, False),
    ],
)
@NATIVE
def test_tolerance_verdicts(text: str, sim: float, real: float, ok: bool) -> None:
    assert v.parse_tolerance(text).ok(sim, real) is ok


@NATIVE
def test_tolerance_units() -> None:
    assert v.parse_tolerance("±3 points").units() == {"points"}
    assert v.parse_tolerance("±25 % or ±5/s").units() == {"/s"}
    assert v.parse_tolerance("±2 ms").bounds[0].value == 2000.0


@NATIVE
@pytest.mark.parametrize("text", ["", "3 points", "±x points", "±3 parsecs", "<= 5 %", "±3 points or", "== 3/s"])
def test_tolerance_errors(text: str) -> None:
    with pytest.raises(ScenarioError) as e:
        v.parse_tolerance(text, "scenario x.metrics[0].tol")
    assert e.value.code == "SL102"
    assert "scenario x.metrics[0].tol" in e.value.message


# --------------------------------------------------------------------------
# The suite file


@NATIVE
def test_bundled_suite() -> None:
    suite = v.load_suite(REPO / "validation" / "suite.toml")
    plain = [e for e in suite.entries if not e.control]
    controls = [e for e in suite.entries if e.control]
    assert len(plain) >= 24 and controls
    assert sum(1 for e in plain if e.tool) >= 5, "real benchmark tools in the suite"
    assert all(c.sim_set for c in controls), "a control needs a deliberately wrong sim_set"
    metrics = {m.metric for e in plain for m in e.metrics}
    assert {"share", "idle", "migrations", "switches", "wakeup_p50", "wait", "wait_avg", "wakeup_p99"} <= metrics
    text = (REPO / "validation" / "suite.toml").read_text()
    assert "BEFORE ANY REAL RESULT" in text


@NATIVE
def test_bundled_suite_scenarios_are_valid_and_small() -> None:
    from schedlab import native

    suite = v.load_suite()
    big = set()
    for e in suite.entries:
        for kernel in v.KERNELS:
            summary = native.check(e.file.read_text(), str(e.file), [("kernel.version", f'"{kernel}"'), *e.sim_set])
            nr = summary["machine"]["nr_cpus"]
            assert nr <= 64, e.name
            if nr > 16:
                big.add(e.name)
        qemu.layout_from_scenario(e.file)  # the oracle can boot it
    # One 64-CPU guest (issue 15's bigger guests); TCG makes more too slow.
    assert big == {"smp64-spread"}


#: A suite entry's head: its name and file.
_A = '[[scenario]]\nname = "a"\nfile = "s.toml"\n'


def _suite(tmp_path: Path, body: str) -> Path:
    (tmp_path / "s.toml").write_text((REPO / "validation" / "nice-pinned.toml").read_text())
    p = tmp_path / "suite.toml"
    p.write_text('[suite]\nname = "t"\n' + body)
    return p


@pytest.mark.parametrize(
    ("body", "code", "what"),
    [
        ('[[scenario]]\nname = "a"\nfile = "s.toml"\ncolour = 1\nmetrics = []\n', "SL101", "colour"),
        ('[[scenario]]\nname = "a"\nfile = "s.toml"\n', "SL103", "metrics"),
        ('[[scenario]]\nname = "a"\nfile = "nope.toml"\nmetrics = []\n', "SL102", "nope.toml"),
        (
            '[[scenario]]\nname = "a"\nfile = "s.toml"\nmetrics = [{ metric = "share", task = "n0", tol = "±3/s" }]\n',
            "SL102",
            "unit",
        ),
        (
            '[[scenario]]\nname = "a"\nfile = "s.toml"\nmetrics = [{ metric = "speed", tol = "±3/s" }]\n',
            "SL102",
            "accepted",
        ),
        (
            '[[scenario]]\nname = "a"\nfile = "s.toml"\nmetrics = [{ metric = "share", tol = "±3 points" }]\n',
            "SL102",
            "selectors",
        ),
        ('[[scenario]]\nname = "a"\nfile = "s.toml"\nmetrics = [{ metric = "idle", cpu = 0 }]\n', "SL103", "tol"),
        # Each check the suite's reader makes (the core's, since issue 34), by the key path it names.
        ("", "SL103", "suite.toml: scenario: required key is missing"),
        ("[[scenario]\n", "SL100", "suite.toml: syntax error: line 3"),
        (_A + "metrics = [1]\n", "SL102", "scenario a.metrics[0]: 1"),
        (_A + 'metrics = [{ metric = "idle", x = 1 }]\n', "SL101", ".x"),
        (_A + "metrics = []\n", "SL102", "a.metrics: []"),
        (_A + "sim_set = 1\nmetrics = []\n", "SL102", "a.sim_set"),
        (_A + 'tool = "perf"\nmetrics = [{ metric = "tool_time", tol = "±9 %" }]\n', "SL102", "a.tool"),
        (
            _A + 'metrics = [{ metric = "switches", tol = "±1/s" }]\n' + _A + "metrics = []\n",
            "SL102",
            'scenario[1].name: "a" appears twice',
        ),
        (_A + 'metrics = [{ metric = "idle", cpu = "one", tol = "±1 points" }]\n', "SL102", "metrics[0].cpu"),
        (_A + 'metrics = [{ metric = "idle_spread", sets = "0", tol = "±1 points" }]\n', "SL102", "metrics[0].sets"),
        (_A + 'metrics = [{ metric = "idle", cpus = "0-", tol = "±1 points" }]\n', "SL102", 'cpulist "0-"'),
        (_A + 'metrics = [{ metric = "share", task = "n0", tol = "<= 3 %" }]\n', "SL102", "relative"),
    ],
)
@NATIVE
def test_suite_errors(tmp_path: Path, body: str, code: str, what: str) -> None:
    with pytest.raises(ScenarioError) as e:
        v.load_suite(_suite(tmp_path, body))
    assert e.value.code == code and what in e.value.message


@NATIVE
def test_metric_units_are_the_cores(tmp_path: Path) -> None:
    """METRIC_UNITS (what the results name) is the core's table, which checks
    each tolerance's unit: the same metrics in the same order, each in the
    same unit."""
    entry = '[[scenario]]\nname = "a"\nfile = "s.toml"\nmetrics = [{{ metric = "{}", tol = "{}" }}]\n'
    with pytest.raises(ScenarioError) as e:
        v.load_suite(_suite(tmp_path, entry.format("speed", "±1/s")))
    assert e.value.message.endswith("accepted: " + ", ".join(v.METRIC_UNITS)), e.value.message
    for metric, unit in v.METRIC_UNITS.items():
        with pytest.raises(ScenarioError) as e:
            v.load_suite(_suite(tmp_path, entry.format(metric, "±1/s" if unit != "/s" else "±1 points")))
        assert f"for {metric}, which is in {unit};" in e.value.message, e.value.message


@NATIVE
def test_only_unknown_name() -> None:
    with pytest.raises(UsageError, match="--only nope"):
        v.select_entries(v.load_suite(), ["nope"])


# --------------------------------------------------------------------------
# Metrics


def _side() -> v.Side:
    """A 1 s window: tasks a, b (group g) and c (group h, migrations not measured)."""
    idle = (("all", 40.0), (0, 0.0), (1, 100.0), (2, 20.0), (3, 40.0))
    doc = {
        "measure": {"start_ns": 0, "end_ns": 1_000_000_000},
        "tasks": [
            {"comm": "a", "group": "g", "runtime_ns": 500_000_000, "nr_switches": 100, "nr_migrations": 2,
             "wait_ns": 100_000_000, "timeslices": 100,
             "timer_delay_count": 10, "timer_delay_p50_ns": 50_000, "timer_delay_p90_ns": 90_000,
             "timer_delay_p99_ns": 99_000},
            {"comm": "b", "group": "g", "runtime_ns": 250_000_000, "nr_switches": 50, "nr_migrations": 0,
             "wait_ns": 400_000_000, "timeslices": 50,
             "timer_delay_count": 5, "timer_delay_p50_ns": 10_000, "timer_delay_p90_ns": 20_000,
             "timer_delay_p99_ns": 300_000},
            {"comm": "c", "group": "h", "runtime_ns": 1_000_000_000, "nr_switches": 10, "nr_migrations": None},
        ],
        "mpstat": {"average": [{"cpu": c, "idle": i} for c, i in idle]},
        "timer_delay": {"count": 12, "p50_ns": 7_000, "p90_ns": 9_000},
    }  # fmt: skip
    return v.Side(ReportView(doc))


def _spec(metric: str, **kw: Any) -> v.MetricSpec:
    return v.MetricSpec(metric, v.parse_tolerance("±1 points"), **kw)


def test_compute() -> None:
    side = _side()
    assert v.compute(_spec("share", task="a"), side) == 50.0
    assert v.compute(_spec("share", group="g"), side) == 37.5
    assert v.compute(_spec("share_min", group="g"), side) == 25.0
    assert v.compute(_spec("share_max", group="g"), side) == 50.0
    assert v.compute(_spec("idle", cpu="all"), side) == 40.0
    assert v.compute(_spec("idle", cpus="0-1"), side) == 50.0
    assert v.compute(_spec("idle_spread", sets=("0-1", "2-3")), side) == 20.0
    # 100 + 0 busy: no overlap needed; 80 + 60: at least 40 at once.
    assert v.compute(_spec("sibling_overlap", sets=("0-1", "2-3")), side) == 20.0
    assert v.compute(_spec("switches"), side) == 160.0
    assert v.compute(_spec("migrations", group="g"), side) == 2.0
    assert v.compute(_spec("migrations"), side) is None  # c's is null: not measured
    assert v.compute(_spec("wakeup_p90", task="a"), side) == 90.0
    assert v.compute(_spec("wakeup_p50"), side) == 7.0
    # The shape: per-task waits, the group's worst task.
    assert v.compute(_spec("wait", task="a"), side) == 10.0
    assert v.compute(_spec("wait", group="g"), side) == 25.0
    assert v.compute(_spec("wait_min", group="g"), side) == 10.0
    assert v.compute(_spec("wait_max", group="g"), side) == 40.0
    assert v.compute(_spec("wait_avg", group="g"), side) == 500_000_000 / 150 / 1000
    assert v.compute(_spec("wait_avg", task="b"), side) == 8000.0
    assert v.compute(_spec("migrations_max", group="g"), side) == 2.0
    assert v.compute(_spec("wakeup_p99", group="g"), side) == 300.0
    assert v.compute(_spec("wakeup_p50", group="g"), side) == 50.0
    assert v.compute(_spec("wait", task="c"), side) is None  # no wait_ns
    with pytest.raises(MetricError, match="task 'zz' is not in the report; accepted: a, b, c"):
        v.compute(_spec("share", task="zz"), side)
    with pytest.raises(MetricError, match="mpstat CPU 9 is not in the report"):
        v.compute(_spec("idle", cpu="9"), side)


def test_sim_side_reads_the_window_counters() -> None:
    """The simulator's tasks count from time 0; their "window" is what counts."""
    doc = {
        "measure": {"start_ns": 500_000_000, "end_ns": 1_500_000_000},
        "tasks": [
            {"pid": 1, "comm": "a", "group": "g", "runtime_ns": 9_000_000_000, "nr_switches": 900, "nr_migrations": 9,
             "wait_ns": 7, "window": {"runtime_ns": 250_000_000, "nr_switches": 20, "nr_migrations": 1,
                                      "wait_ns": 40_000_000}},
        ],
        "mpstat": {"average": [{"cpu": "all", "idle": 75.0}]},
    }  # fmt: skip
    side = v.sim_side(doc)
    assert v.compute(_spec("share", task="a"), side) == 25.0
    assert v.compute(_spec("switches"), side) == 20.0
    assert v.compute(_spec("migrations"), side) == 1.0
    assert v.compute(_spec("wait", task="a"), side) == 4.0
    assert v.compute(_spec("wait_avg"), side) == 2000.0  # 40 ms over its 20 switches
    assert v.compute(_spec("wakeup_p50"), side) is None  # no delays measured


def _report(
    shares: Mapping[str, float], *, migrations: int | None = 0, window_ns: int = 1_500_000_000
) -> dict[str, Any]:
    """A runner-shaped report with the given per-task CPU shares (%)."""
    tasks = [
        {"comm": c, "group": c, "runtime_ns": int(s / 100 * window_ns), "nr_switches": 150, "nr_migrations": migrations,
         "timer_delay_count": 0}
        for c, s in shares.items()
    ]  # fmt: skip
    return {
        "source": "real",
        "measure": {"start_ns": 500_000_000, "end_ns": 500_000_000 + window_ns},
        "tasks": tasks,
        "mpstat": {"average": [{"cpu": "all", "idle": 50.0}, {"cpu": 0, "idle": 0.0}, {"cpu": 1, "idle": 100.0}]},
        "migrations": 0,
        "timer_delay": {"count": 0},
        "host": {"kernel_release": "6.1.0-test"},
    }


def test_real_side_nulls() -> None:
    side = v.real_side(_report({"n0": 70.0}, migrations=None))
    assert v.compute(_spec("migrations"), side) is None
    assert v.compute(_spec("wakeup_p50", task="n0"), side) is None
    assert v.compute(_spec("share", task="n0"), side) == pytest.approx(70.0)


# --------------------------------------------------------------------------
# The control logic and the JSON


def test_exit_status() -> None:
    ok = {"verdict": "ok", "control": False}
    off = {"verdict": "off", "control": False}
    c_off = {"verdict": "off", "control": True}
    c_ok = {"verdict": "ok", "control": True}
    assert v.exit_status([ok, c_off]) == 0
    assert v.exit_status([ok, off, c_off]) == 1
    assert v.exit_status([ok, c_ok]) == 1
    assert v.exit_status([]) == 0


@NATIVE
@pytest.mark.parametrize("migrations", [0, None])
def test_validate_with_a_fake_real_run(migrations: int | None) -> None:
    """The whole pipeline against a made-up real run with the textbook shares."""
    suite = v.load_suite()
    calls: list[str] = []

    def fake_real(entry: v.Entry) -> Mapping[str, Any]:
        calls.append(entry.name)
        return _report({"n0": 69.7, "n5": 22.9, "n10": 7.5}, migrations=migrations)

    doc = v.validate(suite, "6.1", fake_real, only=["nice-pinned", "control-nice"], progress=None)
    assert calls == ["nice-pinned"], "the control reuses the scenario's real run"
    assert doc["kernel"] == "6.1"
    json.dumps(doc, allow_nan=False)
    for r in doc["results"]:
        assert set(r) == {"scenario", "metric", "sim", "real", "tolerance", "verdict", "control"}
        assert r["verdict"] in ("ok", "off")
        assert isinstance(r["sim"], float) and isinstance(r["real"], float)
    rows = {(r["scenario"], r["metric"]): r for r in doc["results"]}
    assert rows[("nice-pinned", "share n0")]["verdict"] == "ok"
    assert rows[("nice-pinned", "share n5")]["verdict"] == "ok"
    assert rows[("control-nice", "share n5")]["verdict"] == "off"
    assert rows[("control-nice", "share n5")]["control"] is True
    if migrations is None:
        assert ("nice-pinned", "migrations") not in rows
        assert {"scenario": "nice-pinned", "metric": "migrations", "why": "the real run did not measure it"} in doc[
            "unmeasured"
        ]
    table = v.format_table(doc)
    assert "control: want off" in table and "tolerance" in table.splitlines()[0]


@NATIVE
def test_a_run_judges_only_the_rows_named_for_its_oracle() -> None:
    """Under QEMU the timing rows wait for the real-timing oracle: listed,
    not judged; a scenario left with no row is not run at all."""
    suite = v.load_suite()
    calls: list[str] = []

    def fake_real(entry: v.Entry) -> Mapping[str, Any]:
        calls.append(entry.name)
        return _report({"n0": 69.7, "n5": 22.9, "n10": 7.5})

    only = ["nice-pinned", "control-batch"]
    doc = v.validate(suite, "6.1", fake_real, only=only, progress=None, oracle="qemu")
    assert calls == ["nice-pinned"], "control-batch has only timing rows"
    judged = {r["metric"] for r in doc["results"]}
    assert "share n0" in judged and "switches" not in judged
    assert {"scenario": "nice-pinned", "metric": "switches", "oracle": "local"} in doc["elsewhere"]
    assert {u["scenario"] for u in doc["elsewhere"]} == {"nice-pinned", "control-batch"}
    assert "judged by the real-timing oracle (validate --local), not here: " in v.format_table(doc)
    every = v.validate(suite, "6.1", fake_real, only=["nice-pinned"], progress=None)
    assert not every["elsewhere"] and any(r["metric"] == "switches" for r in every["results"])


# --------------------------------------------------------------------------
# The CLI


def test_cli_unknown_only(run_cli: RunCli) -> None:
    r = run_cli("validate", "--only", "nope", "--local")
    assert r.returncode == 2 and "[SL001]" in r.stderr and "nice-pinned" in r.stderr


@NATIVE
def test_cli_missing_oracle_is_sl300(run_cli: RunCli, tmp_path: Path) -> None:
    r = run_cli("validate", "--only", "nice-pinned", env={"SCHEDLAB_ORACLE": str(tmp_path / "none")})
    assert r.returncode == 2, r.stderr
    assert "[SL300]" in r.stderr and "make oracle-setup" in r.stderr
    assert "Traceback" not in r.stderr


@NATIVE
def test_cli_local_refuses_big_machines(run_cli: RunCli) -> None:
    import os

    if (os.cpu_count() or 1) >= 16:
        pytest.skip("this host has 16 CPUs or more")
    r = run_cli("validate", "--local", "--only", "4x4-spread")
    assert r.returncode == 2 and "[SL110]" in r.stderr and "4x4-spread (16 CPUs)" in r.stderr


def test_host_error_is_one_class() -> None:
    from schedlab import real

    assert qemu.OracleError is HostError and real.HostError is HostError
    e = HostError("SL300", "guest gone", "tail")
    assert str(e) == "[SL300] guest gone" and e.console_tail == "tail"


# --------------------------------------------------------------------------
# End to end under QEMU (CI runs `make oracle-setup` first)


def _oracle() -> qemu.Oracle | None:
    try:
        return qemu.find_oracle()
    except HostError:
        return None


@NATIVE
@pytest.mark.skipif(_oracle() is None, reason="the QEMU oracle is not set up: run `make oracle-setup`")
def test_validate_one_scenario_in_qemu(run_cli: RunCli, tmp_path: Path) -> None:
    """`schedlab validate --kernel 6.1 --only nice-pinned control-nice`: one
    2-CPU guest (~30-60 s of wall time), the control reusing its real run."""
    out = tmp_path / "results.json"
    r = run_cli("validate", "--kernel", "6.1", "--only", "nice-pinned", "control-nice", "--json", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(out.read_text())
    assert doc["kernel"] == "6.1" and doc["mode"] == "qemu"
    assert doc["real_kernel"] and doc["real_kernel"][0].startswith("6.1.")
    scenarios = {row["scenario"] for row in doc["results"]}
    assert scenarios == {"nice-pinned", "control-nice"}
    assert all(row["verdict"] == ("off" if row["control"] else "ok") for row in doc["results"])
    assert "PASS" in r.stdout


def test_save_real_and_real_from_round_trip(tmp_path: Path) -> None:
    # A kept real report is judged again without a guest: what the simulator
    # developer does after a model change.
    suite = v.load_suite()
    entry = v.select_entries(suite, ["nice-pinned"])[0]
    fake = {"tasks": [], "mpstat": {"average": []}, "measure": {"start_ns": 0, "end_ns": 1}}
    saved = v.saving_real(lambda e: fake, str(tmp_path / "kept"))
    assert saved(entry) == fake
    assert (tmp_path / "kept" / "nice-pinned.json").exists()
    assert v.kept_real(str(tmp_path / "kept"))(entry) == fake
    with pytest.raises(SchedlabError) as e:
        v.kept_real(str(tmp_path / "nothing"))(entry)
    assert "--save-real" in str(e.value)


#: kernel.costs.wakeup_ipi's default, us.
IPI_US = 2.0


def trace_delays_us(trace: str, pids: Mapping[int, str], start_s: float) -> dict[str, list[float]]:
    """An independent reading of the same delays from the ftrace text: from
    the task's last hrtimer_start softexpires (or its sched_wakeup) to the
    next sched_switch to it, for wakeups from start_s on."""
    armed: dict[int, float] = {}
    pending: dict[int, float] = {}
    out: dict[str, list[float]] = {c: [] for c in pids.values()}
    for e in trace_events(trace, ("sched_wakeup", "sched_switch", "hrtimer_start")):
        kv = e.fields
        if e.name == "hrtimer_start":
            if e.who in pids:
                armed[e.who] = int(kv["softexpires"]) / 1e9
        elif e.name == "sched_wakeup":
            pid = int(kv["pid"])
            since = armed.pop(pid, e.t)
            if pid in pids and e.t >= start_s and pid not in pending:
                pending[pid] = min(since, e.t)
        else:
            pid = int(kv["next_pid"])
            if pid in pending:
                out[pids[pid]].append((e.t - pending.pop(pid)) * 1e6)
    return out


@pytest.mark.native
@pytest.mark.parametrize("kernel", ["6.1", "6.12"])
def test_the_sim_report_measures_what_its_trace_shows(kernel: str, tmp_path: Path) -> None:
    """The simulator's timer wakeup delays (report) against the same delays
    read off its own ftrace text, which end at sched_switch: the report's
    end at the return to user space, the switch's cost (2 us, the default
    context_switch) later, plus a wakeup IPI (the default wakeup_ipi, 2 us)
    for a wakeup from another CPU; no CPU is idle here."""
    trace = tmp_path / "trace.txt"
    over: dict[str, object] = {"kernel.version": kernel}
    if kernel == "6.12":
        over["kernel.features"] = ["NO_DELAY_DEQUEUE"]
    report = schedlab.run_scenario(REPO / "validation" / "timer-vs-hogs.toml", overrides=over, trace=str(trace))
    pids = {t["pid"]: t["comm"] for t in report["tasks"]}
    by_trace = trace_delays_us(trace.read_text(), pids, report["measure"]["start_ns"] / 1e9)
    measured = 0
    for t in report["tasks"]:
        delays = sorted(by_trace[t["comm"]])
        assert t["timer_delay_count"] == len(delays), t["comm"]
        for p, key in ((50, "timer_delay_p50_ns"), (90, "timer_delay_p90_ns")):
            want = percentile(delays, p)
            got = t[key]  # type: ignore[literal-required]
            assert (got is None) == (want is None)
            if got is not None and want is not None:
                assert 2.0 - 1.0 <= got / 1000 - want <= 2.0 + IPI_US + 1.0, (t["comm"], p)
        measured += len(delays)
    assert measured > 100


# --------------------------------------------------------------------------
# Repeats


def test_a_real_runs_warnings_are_said_as_it_ends() -> None:
    late = "the window's start was read 1240.3 ms late"
    said: list[str] = []
    entry = v.select_entries(v.load_suite(), ["rt-fair-server"])[0]
    docs = iter([{"source": "real", "warnings": [late]}, {"source": "real", "warnings": []}])
    run = v.noting_warnings(lambda e: next(docs), progress=said.append)
    assert run(entry)["warnings"] == [late]
    assert said == [f"rt-fair-server: the real run warns: {late}"]
    run(entry)
    assert len(said) == 1


def test_a_repeated_tool_is_judged_on_the_median_of_its_runs() -> None:
    runs = [
        {"source": "real-tool", "oracle": {"kernel": "6.1"}, "tool": {"argv": ["perf"], "stdout": out, "stderr": ""}}
        for out in ("Total time: 0.300 [sec]\n", "Total time: 0.100 [sec]\n", "Total time: 0.250 [sec]\n")
    ]
    it = iter(runs)
    entry = v.select_entries(v.load_suite(), ["nice-pinned"])[0]
    doc = v.repeated_real(lambda e: next(it), 3, progress=lambda m: None)(entry)
    assert doc["tool"]["stdout"].count(v.RUN_SEPARATOR) == 2
    assert v.real_side(doc).tool_value("tool_time", None) == 0.25
    cyc = (
        "T: 0 ( 1) P:99 I:1000 C: 10 Min: 1 Act: 2 Avg: 3 Max: 9\n"
        "T: 1 ( 2) P:99 I:1000 C: 10 Min: 1 Act: 2 Avg: 40 Max: 90\n"
    )
    three = f"\n{v.RUN_SEPARATOR}\n".join([cyc, cyc.replace("Avg: 3 ", "Avg: 5 "), cyc.replace("Avg: 3 ", "Avg: 4 ")])
    assert v.parse_tool_output(three, "latency_avg", 0) == 4.0
    assert v.parse_tool_output(three, "latency_max", 1) == 90.0


def test_repeated_runner_reports_become_their_median() -> None:
    def report(share_ns: int) -> dict[str, Any]:
        return {"source": "real", "tasks": [{"comm": "a", "runtime_ns": share_ns}], "measure": {"end_ns": 10}}

    it = iter([report(30), report(10), report(20)])
    entry = v.select_entries(v.load_suite(), ["nice-pinned"])[0]
    doc = v.repeated_real(lambda e: next(it), 3, progress=lambda m: None)(entry)
    assert doc["repeat"] == 3 and doc["tasks"][0]["runtime_ns"] == 20


def test_a_repeated_metric_is_the_median_of_its_value_on_each_run(tmp_path: Path) -> None:
    # Three boots: the work fills CPU 0, CPU 1, then half of each. The
    # report of medians has no spread; the median run has a 100-point one.
    def report(idle: list[float]) -> dict[str, Any]:
        rows = [{"cpu": "all", "idle": 50.0}] + [{"cpu": c, "idle": x} for c, x in enumerate(idle)]
        return {"source": "real", "tasks": [], "measure": {"start_ns": 0, "end_ns": 10}, "mpstat": {"average": rows}}

    it = iter([report([0.0, 100.0]), report([100.0, 0.0]), report([50.0, 50.0])])
    entry = v.select_entries(v.load_suite(), ["nice-pinned"])[0]
    doc = v.repeated_real(lambda e: next(it), 3, progress=lambda m: None)(entry)
    spec = v.MetricSpec("idle_spread", v.parse_tolerance("±3 points"), sets=("0", "1"))
    assert v.compute(spec, v.Side(ReportView(doc), doc)) == 0.0  # the report of medians
    assert v.compute(spec, v.real_side(doc)) == 100.0
    # --save-real keeps each run beside the report of medians; --real-from reads them back.
    saved = v.saving_real(lambda e: doc, str(tmp_path))(entry)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        f"nice-pinned{s}.json" for s in ("", ".run-1", ".run-2", ".run-3")
    ]
    assert v.RUNS_KEY not in json.loads((tmp_path / "nice-pinned.json").read_text())
    kept = v.kept_real(str(tmp_path))(entry)
    assert v.compute(spec, v.real_side(kept)) == 100.0 and len(kept[v.RUNS_KEY]) == len(saved[v.RUNS_KEY]) == 3


@NATIVE
def test_the_simulator_repeats_over_seeds() -> None:
    entry = v.select_entries(v.load_suite(), ["sleepers-32-per-cpu"])[0]
    singles = [v.run_sim(entry, "6.1", seed) for seed in (1, 2, 3)]
    three = v.run_sim(entry, "6.1", 1, repeat=3)
    spec = _spec("wait_avg", group="s")
    vals = [v.compute(spec, s) for s in singles]
    assert len({*vals}) == 3  # three seeds, three values
    assert v.compute(spec, three) == sorted(x for x in vals if x is not None)[1]  # their median
    assert three.raw is not None and three.raw["repeat"] == 3


def test_cli_repeat_must_be_positive(run_cli: RunCli) -> None:
    r = run_cli("validate", "--repeat", "0", "--real-from", "validation/real/6.1", "--only", "nice-pinned")
    assert r.returncode == 2 and "[SL001]" in r.stderr and "--repeat 0" in r.stderr


def test_kept_cgroup_reports_judge_the_group_metrics(run_cli: RunCli, tmp_path: Path) -> None:
    """The 6.12 guest's kept reports of the nesting and burst scenarios
    (the runner made their cgroups): cgroup_share, throttled and bursts are
    measured on both sides and agree, and the burst's control is caught."""
    out = tmp_path / "r.json"
    r = run_cli(
        "validate", "--kernel", "6.12", "--real-from", "bundled", "--quiet", "--json", str(out),
        "--only", "cg-nested", "cg-burst", "control-cg-burst",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    rows = {(x["scenario"], x["metric"]): x for x in doc["results"]}
    assert rows[("cg-nested", "cgroup_share cgroup /p/y")]["verdict"] == "ok"
    assert abs(rows[("cg-nested", "cgroup_share cgroup /p/y")]["real"] - 75.0) < 2
    burst = rows[("cg-burst", "bursts cgroup /bursty")]
    assert burst["verdict"] == "ok" and burst["real"] > 3
    assert rows[("control-cg-burst", "bursts cgroup /bursty")]["verdict"].startswith("off")
