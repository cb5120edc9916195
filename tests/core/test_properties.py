"""Property tests across the Python boundary: generated valid scenarios
(random machines, versions, features, sysctls, policies and programs) run
with the invariant checker on and silent, then again without it, and give
the same bytes both times.

Hypothesis draws the scenarios. CI runs ``SCHEDLAB_PROPERTY_EXAMPLES``
examples (default 500); the closing-note campaign ran 10,000::

    SCHEDLAB_PROPERTY_EXAMPLES=10000 .venv/bin/pytest -q tests/core/test_properties.py

``SCHEDLAB_PROPERTY_RANDOM=1`` draws new examples instead of CI's fixed ones.

A failing example is printed as the scenario's TOML text (run it with
``schedlab run FILE --check``), and Hypothesis shrinks it first.
"""

from __future__ import annotations

import json
import os
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import schedlab
from schedlab._scenario_doc import catalog

CATALOG = catalog()
VERSIONS: list[str] = CATALOG["versions"]
# EEVDF's slice knob, per version (None: the version is CFS's, with min_granularity).
BASE_SLICE = next(s["default"] for s in CATALOG["sysctls"] if s["name"] == "kernel.sched_base_slice_ns")
EXAMPLES = int(os.environ.get("SCHEDLAB_PROPERTY_EXAMPLES", "500"))
# CI draws the same examples every time; SCHEDLAB_PROPERTY_RANDOM=1 draws new
# ones (with pytest's --hypothesis-seed=N to repeat a draw).
DERANDOMIZE = os.environ.get("SCHEDLAB_PROPERTY_RANDOM", "") != "1"
# The small presets: a property run is many short runs, not a few big ones.
PRESETS = ["4cpu", "8cpu-llc", "uma8", "4x4", "2x8smt"]
EVENTS = ["e0", "e1"]
BARRIERS = ["b0"]


# ------------------------------------------------------------------ TOML text


def toml_value(v: Any) -> str:
    """A value as inline TOML (strings, integers, booleans, lists, tables)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{toml_key(k)} = {toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"no TOML for {v!r}")


def toml_key(k: str) -> str:
    return k if k.replace("_", "").isalnum() else json.dumps(k)


def toml_text(sc: dict[str, Any]) -> str:
    lines = [f"name = {toml_value(sc['name'])}"]
    for table in ("machine", "kernel", "measure"):
        lines.append(f"\n[{table}]")
        lines += [f"{toml_key(k)} = {toml_value(v)}" for k, v in sc[table].items()]
    for task in sc["task"]:
        lines.append("\n[[task]]")
        lines += [f"{toml_key(k)} = {toml_value(v)}" for k, v in task.items()]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- strategies


def durations(lo_us: int, hi_us: int) -> st.SearchStrategy[str]:
    return st.integers(lo_us, hi_us).map(lambda us: f"{us}us")


def dists(lo_us: int, hi_us: int) -> st.SearchStrategy[Any]:
    """A duration or one of the documented distributions."""
    d = durations(lo_us, hi_us)
    return st.one_of(
        d,
        d.map(lambda x: {"exp": x}),
        st.tuples(d, d).map(lambda p: {"uniform": sorted(p, key=lambda s: int(s[:-2]))}),
        st.tuples(d, durations(0, lo_us + 1)).map(lambda p: {"normal": list(p)}),
    )


TIMED_OPS = st.one_of(
    dists(1, 5_000).map(lambda d: {"run": d}),
    durations(1, 5_000).map(lambda d: {"runtime": d}),
    dists(1, 10_000).map(lambda d: {"sleep": d}),
    durations(100, 10_000).map(lambda d: {"timer": {"period": d}}),
)
OTHER_OPS = st.one_of(
    st.just({"yield": True}),
    st.sampled_from(EVENTS).map(lambda e: {"wait": e}),
    st.sampled_from(EVENTS).map(lambda e: {"signal": e}),
    st.sampled_from(BARRIERS).map(lambda b: {"barrier": b}),
)


def programs(depth: int = 2) -> st.SearchStrategy[list[dict[str, Any]]]:
    """A program: ops, possibly loops; every loop body takes time."""
    op = st.one_of(TIMED_OPS, TIMED_OPS, OTHER_OPS)
    if depth > 0:
        body = st.tuples(TIMED_OPS, st.lists(st.deferred(lambda: programs(depth - 1)), max_size=2))
        loop = st.tuples(st.integers(0, 20), body).map(
            lambda cb: {"loop": {"count": cb[0], "body": [cb[1][0]] + [o for p in cb[1][1] for o in p]}}
        )
        op = st.one_of(op, loop)
    return st.lists(op, min_size=1, max_size=4)


@st.composite
def machines(draw: st.DrawFn) -> tuple[dict[str, Any], int]:
    if draw(st.booleans()):
        preset = draw(st.sampled_from(PRESETS))
        nr = {"4cpu": 4, "8cpu-llc": 8, "uma8": 8, "4x4": 16, "2x8smt": 16}[preset]
        return {"preset": preset}, nr
    sockets = draw(st.integers(1, 2))
    cores = draw(st.integers(1, 6))
    threads = draw(st.integers(1, 2))
    m = {"sockets": sockets, "cores_per_socket": cores, "threads_per_core": threads}
    if sockets == 2 and draw(st.booleans()):
        m["nodes"] = 2
    return m, sockets * cores * threads


@st.composite
def kernels(draw: st.DrawFn) -> dict[str, Any]:
    version = draw(st.sampled_from(VERSIONS))
    k: dict[str, Any] = {"version": version, "hz": draw(st.sampled_from([100, 250, 300, 1000]))}
    present = [f["name"] for f in CATALOG["features"] if f["default"][version] is not None]
    # DELAY_DEQUEUE (6.12) is not modelled yet: a 6.12 run must turn it off.
    present = [n for n in present if n != "DELAY_DEQUEUE"]
    flips = draw(st.lists(st.sampled_from(present), max_size=3, unique=True)) if present else []
    features = [n if draw(st.booleans()) else f"NO_{n}" for n in flips]
    if version == "6.12":
        features.append("NO_DELAY_DEQUEUE")
    if features:
        k["features"] = features
    k["preempt"] = draw(st.sampled_from(["none", "voluntary", "full"]))
    k["vmstat_kworkers"] = draw(st.booleans())
    sysctl: dict[str, Any] = {}
    if draw(st.booleans()):
        sysctl["kernel.sched_migration_cost_ns"] = draw(st.integers(0, 5_000_000))
    if draw(st.booleans()):
        sysctl["kernel.sched_nr_migrate"] = draw(st.integers(1, 64))
    slice_knob = "kernel.sched_base_slice_ns" if BASE_SLICE[version] is not None else "kernel.sched_min_granularity_ns"
    if draw(st.booleans()):
        sysctl[slice_knob] = draw(st.integers(100_000, 20_000_000))
    if sysctl:
        k["sysctl"] = sysctl
    return k


@st.composite
def task_groups(draw: st.DrawFn, nr_cpus: int) -> list[dict[str, Any]]:
    n = draw(st.integers(1, 4))
    groups: list[dict[str, Any]] = []
    for i in range(n):
        g: dict[str, Any] = {"name": f"g{i}", "count": draw(st.integers(0, 6))}
        policy = draw(st.sampled_from(["SCHED_NORMAL", "SCHED_BATCH", "SCHED_IDLE", "SCHED_FIFO", "SCHED_RR"]))
        g["policy"] = policy
        if policy in ("SCHED_FIFO", "SCHED_RR"):
            g["rt_priority"] = draw(st.integers(1, 99))
        elif draw(st.booleans()):
            g["nice"] = draw(st.integers(-20, 19))
        if draw(st.booleans()):
            cpus = draw(st.lists(st.integers(0, nr_cpus - 1), min_size=1, max_size=nr_cpus, unique=True))
            g["cpus"] = sorted(cpus)
        if draw(st.booleans()):
            g["start"] = draw(durations(0, 5_000))
        if draw(st.integers(0, 4)) == 0:
            g["kthread"] = True
        prog = draw(programs())
        if i > 0 and draw(st.integers(0, 3)) == 0:
            # A later group forks one of an earlier group's tasks.
            prog.insert(draw(st.integers(0, len(prog))), {"fork": f"g{draw(st.integers(0, i - 1))}"})
        if draw(st.integers(0, 3)) == 0:
            prog.append({"exit": True})
        g["program"] = prog
        groups.append(g)
    return groups


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    machine, nr_cpus = draw(machines())
    measure: dict[str, Any] = {"warmup": draw(durations(0, 20_000)), "duration": draw(durations(1_000, 100_000))}
    if draw(st.booleans()):
        measure["interval"] = draw(st.sampled_from(["10ms", "20ms", "50ms"]))
    return {
        "name": "generated",
        "machine": machine,
        "kernel": draw(kernels()),
        "measure": measure,
        "task": draw(task_groups(nr_cpus)),
    }


# ------------------------------------------------------------------ property


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=DERANDOMIZE,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(scenarios(), st.integers(0, 2**64 - 1))
def test_generated_scenarios_run_checked_and_deterministic(sc: dict[str, Any], seed: int) -> None:
    text = toml_text(sc)
    try:
        first = schedlab.run_scenario(text=text, seed=seed, check=True)
        second = schedlab.run_scenario(text=text, seed=seed)
    except schedlab.InvariantError as e:
        # A livelock or deadlock the program asked for (yield against
        # itself, wait with nobody to signal) is the scenario's, not a fault.
        if "deadlock" in e.message or "no progress" in e.message:
            event("refused: " + ("deadlock" if "deadlock" in e.message else "no progress"))
            return
        raise AssertionError(f"{e}\n--- scenario ---\n{text}") from e
    except schedlab.SchedlabError as e:
        raise AssertionError(f"{e}\n--- scenario ---\n{text}") from e
    event("ran" + (" with warnings" if first["warnings"] else ""))
    by = first["migrations_by_distance"]
    assert by["smt"] + by["llc"] + by["remote_llc"] + by["remote_node"] == first["migrations"], text
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True), text
