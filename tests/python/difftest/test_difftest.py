"""schedlab difftest: the generator, the judge and its wasted-CPU estimate,
shrinking, the campaign file; one real batch under QEMU when the oracle is
set up."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conftest import RunCli
from schedlab import native
from schedlab.difftest import sim_scan
from schedlab.difftest.campaign import Campaign, candidates, run_campaign, sim_report, summary_table
from schedlab.difftest.generate import (
    Case,
    TaskSpec,
    case_from_dict,
    case_to_dict,
    describe,
    generate_batch,
    machine_cpus,
)
from schedlab.difftest.judge import judge, specs, wasted_estimate_pct
from schedlab.validation.runners import real_side, sim_side

SEEDS = range(1, 41)


def test_generator_is_deterministic_and_named_by_seed_and_hash() -> None:
    a, b = generate_batch(7), generate_batch(7)
    assert a == b
    assert [c.text for c in a.cases] == [c.text for c in b.cases]
    assert generate_batch(8).cases[0].text != a.cases[0].text
    for c in a.cases:
        assert c.name.startswith(f"dt7.{c.index}-") and c.name.endswith(c.digest) and len(c.digest) == 10


@pytest.mark.parametrize("seed", SEEDS)
def test_every_generated_case_is_a_valid_scenario(seed: int) -> None:
    batch = generate_batch(seed)
    nr = machine_cpus(dict(batch.machine))
    assert 2 <= nr <= 16
    for case in batch.cases:
        assert 1 <= len(case.tasks) <= 14
        native.check(case.text, case.name, [])
        for t in case.tasks:
            if t.policy == "SCHED_FIFO":
                assert t.kind == "sleeper"  # never an RT hog


def test_generator_covers_what_the_issue_lists() -> None:
    cases = [c for s in range(1, 61) for c in generate_batch(s).cases]
    kinds = {t.kind for c in cases for t in c.tasks}
    policies = {t.policy for c in cases for t in c.tasks}
    machines = {tuple(sorted(dict(c.machine))) for c in cases}
    assert kinds == {"hog", "sleeper", "ping", "pong"}
    assert policies == {"SCHED_NORMAL", "SCHED_BATCH", "SCHED_IDLE", "SCHED_FIFO"}
    assert any(t.cpus is not None for c in cases for t in c.tasks)
    assert any(t.nice == 19 for c in cases for t in c.tasks)
    assert ("cores_per_socket", "nodes", "sockets", "threads_per_core") in machines  # NUMA
    assert any(dict(c.machine).get("threads_per_core") == 2 for c in cases)  # SMT


def test_case_round_trips_through_the_campaign_file() -> None:
    for c in [*generate_batch(3).cases, *generate_batch(3, groups=True).cases]:
        back = case_from_dict(json.loads(json.dumps(case_to_dict(c))))
        assert back == c and back.text == c.text


def test_groups_keep_the_cases_tasks_and_are_valid_scenarios() -> None:
    """--groups draws cgroups from a stream of their own: the machine and the
    tasks are those drawn without them; every case is a valid scenario on
    the oldest oracle kernel, RT tasks stay in the root, and the draws cover
    weights, nesting, cpu.idle and cpu.max."""
    cases = []
    for seed in range(1, 31):
        plain, grouped = generate_batch(seed), generate_batch(seed, groups=True)
        assert grouped.machine == plain.machine
        for p, g in zip(plain.cases, grouped.cases):
            assert [replace(t, cgroup=None) for t in g.tasks] == list(p.tasks)
            assert 1 <= len(g.cgroups) <= 3
            assert all(t.cgroup is None for t in g.tasks if t.policy == "SCHED_FIFO")
            native.check(g.text, g.name, [])
            cases.append(g)
    cgroups = [c for case in cases for c in case.cgroups]
    assert any(c.path.count("/") == 2 for c in cgroups)
    assert any(c.idle for c in cgroups) and any(c.max_pct for c in cgroups)
    assert len({c.weight for c in cgroups}) >= 4
    assert any(t.cgroup is None for case in cases for t in case.tasks)


def _case(
    tasks: Sequence[TaskSpec], machine: tuple[tuple[str, int], ...] = (("sockets", 1), ("cores_per_socket", 2))
) -> Case:
    return Case(99, 0, machine, tuple(tasks))


def test_candidates_are_smaller_and_keep_chains_whole() -> None:
    c = _case(
        [
            TaskSpec("t0", "hog", nice=5, cpus="1"),
            TaskSpec("t1", "ping", run_us=500, partner="t2"),
            TaskSpec("t2", "pong", run_us=500, partner="t1"),
        ],
        (("sockets", 2), ("cores_per_socket", 2), ("threads_per_core", 2), ("nodes", 2)),
    )
    cands = candidates(c)
    origins = [x.origin for x in cands]
    assert origins[:2] == ["without t0", "without t1,t2"]
    assert {"no SMT", "one node", "one socket", "a core fewer", "t0 nice 0", "t0 unpinned"} <= set(origins)
    for x in cands:
        names = {t.name for t in x.tasks}
        assert ("t1" in names) == ("t2" in names)  # a chain is dropped whole
        native.check(x.text, x.name, [])
        assert x.digest != c.digest


def test_candidates_skip_machines_a_pinned_task_does_not_fit() -> None:
    c = _case([TaskSpec("t0", "hog", cpus="3")], (("sockets", 1), ("cores_per_socket", 4)))
    assert "a core fewer" not in [x.origin for x in candidates(c)]


def _sample_doc(idle: Sequence[Sequence[float]], delay: Sequence[Sequence[int]] | None) -> dict[str, Any]:
    samples = []
    for i, row in enumerate(idle):
        s: dict[str, Any] = {
            "end_ns": (i + 1) * 100_000_000,
            "rows": [{"cpu": "all", "idle": sum(row) / len(row)}] + [{"cpu": c, "idle": v} for c, v in enumerate(row)],
        }
        if delay is not None:
            s["run_delay_ns"] = list(delay[i])
        samples.append(s)
    return {"measure": {"start_ns": 0}, "mpstat": {"samples": samples}}


def test_wasted_estimate() -> None:
    # Two hogs on CPU 1 (each waits half the interval), CPU 0 idle: half the machine wasted.
    doc = _sample_doc([[100.0, 0.0]], [[0, 100_000_000]])
    assert wasted_estimate_pct(doc) == pytest.approx(50.0)
    # Waiting with no idle CPU wastes nothing; idle with no waiting neither.
    assert wasted_estimate_pct(_sample_doc([[0.0, 0.0]], [[50_000_000, 50_000_000]])) == 0.0
    assert wasted_estimate_pct(_sample_doc([[100.0, 100.0]], [[0, 0]])) == 0.0
    # The bound: a short wait beside a long idle counts only the wait.
    assert wasted_estimate_pct(_sample_doc([[80.0, 0.0], [0.0, 0.0]], [[0, 10_000_000], [0, 0]])) == pytest.approx(2.5)
    assert wasted_estimate_pct(_sample_doc([[100.0, 0.0]], None)) is None


def test_the_simulator_reports_run_delay_per_cpu_and_sample() -> None:
    c = _case([TaskSpec("a", "hog", cpus="1"), TaskSpec("b", "hog", cpus="1")])
    rep = sim_report(c, "6.1", [])
    samples = rep["mpstat"]["samples"]
    assert len(samples) == 15 and all(len(s["run_delay_ns"]) == 2 for s in samples)
    assert all(s["run_delay_ns"][0] == 0 for s in samples)
    # Two hogs pinned to CPU 1: each waits while the other runs.
    assert sum(s["run_delay_ns"][1] for s in samples) == pytest.approx(1.5e9, rel=0.05)
    assert rep["cpus"][1]["run_delay_ns"] >= sum(s["run_delay_ns"][1] for s in samples)
    # Pinned: not wasted in the exact figure; the estimate counts it (both sides alike).
    assert rep["wasted_cpu_pct"] == 0.0
    assert wasted_estimate_pct(rep) == pytest.approx(50.0, abs=1.0)


def test_judge_rows_and_waste_flags() -> None:
    c = _case([TaskSpec("a", "hog"), TaskSpec("b", "hog")])
    rep = sim_report(c, "6.1", [])
    v = judge(c, sim_side(rep), real_side(rep), rep, rep)
    assert v.agrees and len(v.rows) == len(specs(c)) + 2 == 2 + 2 + 2
    assert v.waste_flag == ""
    stacked = sim_report(replace(c, tasks=(TaskSpec("a", "hog", cpus="1"), TaskSpec("b", "hog", cpus="1"))), "6.1", [])
    v2 = judge(c, sim_side(stacked), real_side(rep), stacked, rep)
    # Stacked, they also switch at the tick where alone they never switch.
    assert {r.metric for r in v2.off} == {"share group a", "share group b", "idle rank 1", "switches"}
    assert v2.waste_flag == "model"
    assert judge(c, sim_side(stacked), real_side(stacked), stacked, stacked).waste_flag == "kernel"


def _sim_as_real(seed: int) -> Any:
    """A stand-in for the guest that runs the simulator at another seed, so
    the campaign's bookkeeping is tested without QEMU (the real path is the
    oracle test below)."""

    def run(machine: Mapping[str, int], texts: Sequence[str]) -> list[Any]:
        return [native.run(t, "stand-in.toml", seed, [("kernel.version", '"6.1.176"')], False) for t in texts]

    return run


def test_campaign_resumes_and_shrinks(tmp_path: Path) -> None:
    camp = Campaign.open(tmp_path, "6.1")
    doc = run_campaign(camp, _sim_as_real(2), cases=8, shrink_off=False, progress=lambda m: None)
    assert doc["summary"]["cases"] == 8
    assert len(list((tmp_path / "real").glob("*.json"))) == 8
    # Resuming does not redo a batch; asking for more runs the next seeds.
    again = Campaign.open(tmp_path, "6.1")
    doc2 = run_campaign(again, _sim_as_real(2), cases=12, shrink_off=False, progress=lambda m: None)
    assert [c["name"] for c in doc2["cases"][:8]] == [c["name"] for c in doc["cases"]]
    assert {c["batch_seed"] for c in doc2["cases"]} == {1, 2, 3}
    assert "cases: 12 generated" in summary_table(doc2)
    with pytest.raises(Exception, match=r"a campaign of kernel 6\.1"):
        Campaign.open(tmp_path, "6.12")


def test_shrinking_reaches_a_smaller_case_that_still_disagrees(tmp_path: Path) -> None:
    from schedlab.difftest.campaign import shrink

    # The "real" side runs every task unpinned; the "simulator" runs the case
    # as written (two pinned hogs stacked on CPU 1), so they disagree on idle.
    def real(machine: Mapping[str, int], texts: Sequence[str]) -> list[Any]:
        return [native.run(t.replace('cpus = "1"\n', ""), "r.toml", 1, [], False) for t in texts]

    c = _case(
        [
            TaskSpec("t0", "hog", cpus="1"),
            TaskSpec("t1", "hog", cpus="1"),
            TaskSpec("t2", "sleeper", run_us=1000, sleep_us=4000, nice=5),
        ]
    )
    camp = Campaign.open(tmp_path, "6.1")
    sim = sim_report(c, "6.1", [])
    v = judge(c, sim_side(sim), real_side(real({}, [c.text])[0]), sim, {})
    assert not v.agrees
    rec = shrink(c, v, real, "6.1", [], camp, progress=lambda m: None)
    small = case_from_dict(rec["smallest"]["case"])
    # The two pinned hogs still disagree (the real side spreads them); one
    # alone would not (idle is compared by rank), nor the sleeper.
    assert [t.cpus for t in small.tasks] == ["1", "1"] and rec["steps"] == ["without t2"]
    assert not rec["smallest"]["agrees"]
    assert (tmp_path / rec["saved"] / "scenario.toml").read_text() == small.text


def test_sim_scan_and_cli(run_cli: RunCli) -> None:
    rows = sim_scan(6, 1, "6.12")
    assert [r["name"] for r in rows] == [c.name for s in (1, 2) for c in generate_batch(s).cases][:6]
    r = run_cli("difftest", "--sim-only", "--cases", "4", "--kernel", "6.12")
    assert r.returncode == 0 and "4 cases on the simulator (6.12)" in r.stdout
    bad = run_cli("difftest", "--cases", "0")
    assert bad.returncode == 2 and "--cases 0" in bad.stderr
    nodir = run_cli("difftest", "--kernel", "6.1")
    assert nodir.returncode == 2 and "--out DIR" in nodir.stderr
    budget = run_cli("difftest", "--out", "/tmp/x-never", "--budget", "soon")
    assert budget.returncode == 2 and "--budget soon" in budget.stderr


def test_idle_is_compared_by_rank_not_by_cpu_number() -> None:
    # One hog on CPU 0 against one on CPU 1: the same behaviour.
    a = _case([TaskSpec("h", "hog", cpus="0")])
    b = _case([TaskSpec("h", "hog", cpus="1")])
    ra, rb = sim_report(a, "6.1", []), sim_report(b, "6.1", [])
    v = judge(a, sim_side(ra), real_side(rb), ra, rb)
    assert v.agrees and [r.metric for r in v.rows if r.metric.startswith("idle")] == ["idle rank 1", "idle rank 2"]


def test_describe_names_the_machine_and_tasks() -> None:
    c = _case([TaskSpec("t0", "sleeper", policy="SCHED_FIFO", rt_priority=5, run_us=1000, sleep_us=4000, cpus="0")])
    assert describe(c) == "1x2x1 (2 CPUs): sleeper 1/4ms fifo5 @0"


# --------------------------------------------------------------------------
# One batch in the QEMU oracle (needs `make oracle-setup`)


def _oracle() -> Any:
    from schedlab import qemu

    try:
        return qemu.find_oracle()
    except qemu.OracleError:
        return None


ORACLE = _oracle()


@pytest.mark.skipif(ORACLE is None, reason="the QEMU oracle is not set up: run `make oracle-setup`")
def test_a_batch_boots_once_and_reports_each_case() -> None:
    from schedlab import qemu
    from schedlab.validation.runners import static_runner

    short = (("sockets", 1), ("cores_per_socket", 2))
    cases = [_case([TaskSpec("a", "hog"), TaskSpec("b", "hog")], short), _case([TaskSpec("a", "hog", cpus="1")], short)]
    texts = [c.text.replace('duration = "1500ms"', 'duration = "300ms"') for c in cases]
    docs = qemu.run_batch_in_guest(dict(short), texts, static_runner(), kernel="6.1", timeout=600, oracle=ORACLE)
    assert len(docs) == 2 and all(isinstance(d, dict) for d in docs), docs
    for d in docs:
        assert isinstance(d, dict)
        assert d["source"] == "real" and d["oracle"]["kernel"] == "6.1"
        # /proc/schedstat's run_delay read beside /proc/stat, per sample.
        assert all(len(s["run_delay_ns"]) == 2 for s in d["mpstat"]["samples"])
        assert wasted_estimate_pct(d) is not None
    last = docs[1]
    assert isinstance(last, dict) and [t["comm"] for t in last["tasks"]] == ["a"]


def test_a_local_campaign_draws_its_workloads_for_the_hosts_machine() -> None:
    from schedlab.difftest.generate import host_machine

    m = host_machine(2)
    b = generate_batch(5, machine=m)
    assert all(c.machine == m and c.nr_cpus == 2 for c in b.cases)
    # Every pinned task fits the host, and the case is a valid scenario.
    for c in b.cases:
        assert all(t.cpus is None or int(t.cpus.split("-")[-1]) < 2 for t in c.tasks)
        native.check(c.text, c.name + ".toml", [])
    # Deterministic, and not the drawn machine's workloads renamed.
    assert generate_batch(5, machine=m) == b


def test_local_and_kernel_are_one_or_the_other(run_cli: RunCli, tmp_path: Path) -> None:
    r = run_cli("difftest", "--local", "--kernel", "6.1", "--out", str(tmp_path))
    assert r.returncode == 2 and "--local --kernel" in r.stderr
    Campaign.open(tmp_path / "q", "6.1").save()
    with pytest.raises(Exception, match=r"\(qemu\); accepted: --kernel 6\.1"):
        Campaign.open(tmp_path / "q", "6.1", "local")


def test_groups_case_that_stalled_the_simulator_runs() -> None:
    """dt10.0 of the first `difftest --groups` campaign: a running task of a
    cgroup moved by the stopper left its group entity current on its old
    CPU, the next pick overwrote it, and both CPUs idled for the rest of
    the run (44 events in 2 s). Its tasks must run, and the runqueues stay
    consistent (the invariant checker)."""
    text = (Path(__file__).parent / "cases" / "dt10.0-stopper-groups.toml").read_text()
    ns = {
        "halt_poll": "1ms",
        "wakeup_ipi": "26445ns",
        "timer_irq_delay": "16221ns",
        "context_switch": "2189ns",
        "proc_read_task": "89194ns",
        "proc_read_stat": "46161ns",
        "thread_start": "88677ns",
        "fork": "50199ns",
    }
    costs = [("measure.start", '"runner"'), ("kernel.preempt", '"none"')]
    costs += [(f"kernel.costs.{k}", f'"{v}"') for k, v in ns.items()]
    # The campaign's kernel (this host's 6.18), and 6.1's CFS. Under the
    # checker: once the run went on, a delayed task below a throttled
    # cfs_rq took the root's h_nr_delayed below zero (6.12+).
    for version in ("6.18.44", "6.1"):
        rep = native.run(text, "dt10.0.toml", 1, [("kernel.version", f'"{version}"'), *costs], True)
        assert rep["sim"]["events"] > 1000
        assert all((c["cpu_pct"] or 0) > 5 for c in rep["cgroups"]), rep["cgroups"]
