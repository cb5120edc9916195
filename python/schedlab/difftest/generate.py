"""Generated scenarios for ``schedlab difftest``: from a seed, a machine of
2 to 16 CPUs and a few workloads for it, each a schedlab scenario the
simulator and the runner both run.

A :class:`Batch` is one machine and its :class:`Case` workloads: the real
side runs a batch's cases one after another in one guest boot (the boot is
a good part of a short run's wall time). A case is plain data (a machine
and :class:`TaskSpec` rows) so that the shrinker can take it apart; its
scenario text is :func:`case_toml`, and its name is the batch's seed, its
index and the first 10 hex digits of the text's SHA-256 (the same text
gives the same name, whoever made it).

What the generator draws from, and why:

* machines: flat (one socket of 2 to 8 cores), SMT (2 to 4 cores of 2
  threads), two sockets (2 to 4 cores each), two NUMA nodes (a socket each,
  2 to 4 cores, with or without SMT); at most 16 CPUs, smaller ones more
  often (a guest's wall time grows with its busy CPUs);
* tasks, up to twice the CPUs plus two (at most 14): hogs, periodic
  sleepers (fixed or random run and sleep lengths) and wakeup chains (two
  tasks handing a turn to each other with signal/wait);
* nice levels -5 to 19 and the policies SCHED_NORMAL, SCHED_BATCH,
  SCHED_IDLE and SCHED_FIFO (FIFO only for sleepers that run at most half
  of the time, so that no RT task takes a CPU whole);
* affinity: unpinned, one CPU, or a contiguous range;
* with ``groups`` (``difftest --groups``): one to three cgroups (a quarter
  of them nested in an earlier one) of cpu.weight 25 to 400, an eighth
  with cpu.idle, a fifth with a cpu.max of 20 % to 150 % of a CPU per
  100 ms, and each non-RT task in one of them three times in four. The
  groups come from a stream of their own (the batch's seed and the case's
  index), so a case's machine and tasks are those drawn without them.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field, replace
from typing import Any

from schedlab.overrides import toml_literal

__all__ = [
    "GENERATOR_VERSION",
    "MAX_CPUS",
    "Batch",
    "Case",
    "CgroupSpec",
    "TaskSpec",
    "case_toml",
    "generate_batch",
    "host_machine",
    "machine_cpus",
]

#: Bumped whenever the same seed would give different scenarios.
GENERATOR_VERSION = 1
MAX_CPUS = 16
#: Workloads per machine (per guest boot).
CASES_PER_BATCH = 4
#: The measurement every generated scenario uses: a short warm-up, a window
#: long enough for a few hundred balancer passes, and 100 ms samples for
#: the wasted-CPU audit (idle and run_delay per CPU per interval).
WARMUP = "500ms"
DURATION = "1500ms"
INTERVAL = "100ms"


@dataclass(frozen=True)
class TaskSpec:
    """One generated task (count 1). ``kind``: ``hog``, ``sleeper`` (run,
    then sleep, in a loop; ``run``/``sleep`` are fixed lengths or
    ``(low, high)`` uniform ranges), ``ping`` or ``pong`` (a wakeup chain:
    ``partner`` is the other's name)."""

    name: str
    kind: str
    nice: int = 0
    policy: str = "SCHED_NORMAL"
    rt_priority: int = 0
    cpus: str | None = None
    run_us: int | tuple[int, int] = 0
    sleep_us: int | tuple[int, int] = 0
    partner: str | None = None
    #: The ``[[cgroup]]`` path it runs in (None: the root).
    cgroup: str | None = None


@dataclass(frozen=True)
class CgroupSpec:
    """One generated ``[[cgroup]]``: ``max_pct`` is cpu.max's quota in % of
    a CPU per 100 ms period (None: "max")."""

    path: str
    weight: int = 100
    idle: bool = False
    max_pct: int | None = None


@dataclass(frozen=True)
class Case:
    """A machine and its tasks: one generated scenario."""

    batch_seed: int
    index: int
    machine: tuple[tuple[str, int], ...]
    tasks: tuple[TaskSpec, ...]
    #: What the shrinker did to get here from the generated case ("" for a generated one).
    origin: str = ""
    cgroups: tuple[CgroupSpec, ...] = ()

    @property
    def text(self) -> str:
        return case_toml(self)

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()[:10]

    @property
    def name(self) -> str:
        return f"dt{self.batch_seed}.{self.index}-{self.digest}"

    @property
    def nr_cpus(self) -> int:
        return machine_cpus(dict(self.machine))

    def with_tasks(self, tasks: tuple[TaskSpec, ...], origin: str) -> Case:
        return replace(self, tasks=tasks, origin=origin)


@dataclass(frozen=True)
class Batch:
    """One machine's cases (one guest boot)."""

    seed: int
    machine: tuple[tuple[str, int], ...]
    cases: tuple[Case, ...] = field(default=())


def machine_cpus(m: dict[str, int]) -> int:
    return m.get("sockets", 1) * m.get("cores_per_socket", 1) * m.get("threads_per_core", 1)


def host_machine(nr_cpus: int) -> tuple[tuple[str, int], ...]:
    """The machine of a host of ``nr_cpus`` CPUs as the generator writes it:
    one socket of that many cores (this machine's KVM guest: two vCPUs, no
    SMT siblings, one LLC, one node)."""
    return (("sockets", 1), ("cores_per_socket", nr_cpus))


def _machine(rng: random.Random) -> tuple[tuple[str, int], ...]:
    kind = rng.choices(["flat", "smt", "sockets", "numa"], weights=[4, 3, 2, 2])[0]
    if kind == "flat":
        return (("sockets", 1), ("cores_per_socket", rng.choice([2, 2, 3, 4, 4, 6, 8])))
    if kind == "smt":
        return (("sockets", 1), ("cores_per_socket", rng.choice([2, 2, 3, 4])), ("threads_per_core", 2))
    if kind == "sockets":
        return (("sockets", 2), ("cores_per_socket", rng.choice([1, 2, 2, 3, 4])))
    threads = rng.choice([1, 1, 2])
    cores = rng.choice([1, 2, 2, 4] if threads == 1 else [1, 2, 2])
    return (("sockets", 2), ("cores_per_socket", cores), ("threads_per_core", threads), ("nodes", 2))


_RUN_US = [200, 500, 1000, 2000, 3000, 5000]
_SLEEP_US = [500, 1000, 2000, 4000, 8000, 16000]


def _length(rng: random.Random, choices: list[int]) -> int | tuple[int, int]:
    v = rng.choice(choices)
    return (v // 2, v * 3 // 2) if rng.random() < 0.3 else v


def _mean(v: int | tuple[int, int]) -> float:
    return (v[0] + v[1]) / 2 if isinstance(v, tuple) else float(v)


def _affinity(rng: random.Random, nr: int) -> str | None:
    r = rng.random()
    if r < 0.75:
        return None
    if r < 0.88:
        return str(rng.randrange(nr))
    lo = rng.randrange(nr - 1)
    hi = rng.randrange(lo + 1, nr)
    return f"{lo}-{hi}"


def _attrs(rng: random.Random, rt_ok: bool) -> tuple[str, int, int]:
    """(policy, nice, rt_priority)."""
    r = rng.random()
    if rt_ok and r < 0.12:
        return "SCHED_FIFO", 0, rng.randrange(1, 60)
    if r < 0.22:
        return "SCHED_BATCH", rng.choice([0, 0, 5]), 0
    if r < 0.30:
        return "SCHED_IDLE", 0, 0
    nice = 0 if rng.random() < 0.6 else rng.choice([-5, -2, 2, 5, 10, 19])
    return "SCHED_NORMAL", nice, 0


def _tasks(rng: random.Random, nr: int) -> tuple[TaskSpec, ...]:
    n = rng.randint(1, min(14, 2 * nr + 2))
    out: list[TaskSpec] = []
    while len(out) < n:
        i = len(out)
        kind = rng.choices(["hog", "sleeper", "chain"], weights=[4, 5, 2])[0]
        if kind == "chain" and n - len(out) >= 2:
            a, b = f"t{i}", f"t{i + 1}"
            turn = rng.choice([100, 300, 500, 1000, 2000])
            for name, role, partner in ((a, "ping", b), (b, "pong", a)):
                policy, nice, _ = _attrs(rng, rt_ok=False)
                out.append(TaskSpec(name, role, nice, policy, 0, _affinity(rng, nr), run_us=turn, partner=partner))
            continue
        if kind == "hog":
            policy, nice, _ = _attrs(rng, rt_ok=False)
            out.append(TaskSpec(f"t{i}", "hog", nice, policy, 0, _affinity(rng, nr)))
            continue
        run, sleep = _length(rng, _RUN_US), _length(rng, _SLEEP_US)
        policy, nice, prio = _attrs(rng, rt_ok=_mean(run) <= _mean(sleep))
        out.append(TaskSpec(f"t{i}", "sleeper", nice, policy, prio, _affinity(rng, nr), run, sleep))
    return tuple(out)


def _cgroups(rng: random.Random, tasks: tuple[TaskSpec, ...]) -> tuple[tuple[CgroupSpec, ...], tuple[TaskSpec, ...]]:
    """Cgroups for a case, and its tasks placed in them (RT tasks stay in
    the root: a kernel with RT group scheduling gives a new cgroup no RT
    runtime)."""
    specs: list[CgroupSpec] = []
    for k in range(rng.randint(1, 3)):
        parent = specs[rng.randrange(len(specs))].path if specs and rng.random() < 0.25 else ""
        max_pct = rng.choice([20, 50, 100, 150]) if rng.random() < 0.2 else None
        idle = rng.random() < 0.12
        specs.append(CgroupSpec(f"{parent}/g{k}", rng.choice([25, 50, 100, 100, 200, 400]), idle, max_pct))
    placed = tuple(
        replace(t, cgroup=rng.choice(specs).path) if t.policy != "SCHED_FIFO" and rng.random() < 0.75 else t
        for t in tasks
    )
    return tuple(specs), placed


def generate_batch(
    seed: int, cases: int = CASES_PER_BATCH, machine: tuple[tuple[str, int], ...] | None = None, groups: bool = False
) -> Batch:
    """Batch ``seed``: its machine and ``cases`` workloads. Deterministic in
    the seed and ``GENERATOR_VERSION``. ``machine``: this machine instead
    of the drawn one (``difftest --local``: the host's own), the workloads
    drawn for it. ``groups``: each case's tasks in cgroups drawn for it."""
    rng = random.Random(f"schedlab-difftest-{GENERATOR_VERSION}-{seed}")
    drawn = _machine(rng)
    machine = drawn if machine is None else machine
    nr = machine_cpus(dict(machine))
    out = []
    for i in range(cases):
        case = Case(seed, i, machine, _tasks(rng, nr))
        if groups:
            cg, tasks = _cgroups(random.Random(f"schedlab-difftest-groups-{GENERATOR_VERSION}-{seed}-{i}"), case.tasks)
            case = replace(case, tasks=tasks, cgroups=cg)
        out.append(case)
    return Batch(seed, machine, tuple(out))


# ---------------------------------------------------------------- the scenario text


def _dur(us: int) -> str:
    return f"{us // 1000}ms" if us % 1000 == 0 else f"{us}us"


def _len(v: int | tuple[int, int]) -> str:
    if isinstance(v, tuple):
        return f'{{ uniform = ["{_dur(v[0])}", "{_dur(v[1])}"] }}'
    return f'"{_dur(v)}"'


def _program(t: TaskSpec) -> str:
    if t.kind == "hog":
        body = '{ run = "100ms" }'
    elif t.kind == "sleeper":
        body = f"{{ run = {_len(t.run_us)} }}, {{ sleep = {_len(t.sleep_us)} }}"
    elif t.kind == "ping":
        body = f'{{ run = {_len(t.run_us)} }}, {{ signal = "{t.partner}" }}, {{ wait = "{t.name}" }}'
    elif t.kind == "pong":
        body = f'{{ wait = "{t.name}" }}, {{ run = {_len(t.run_us)} }}, {{ signal = "{t.partner}" }}'
    else:
        raise ValueError(f"task kind {t.kind!r}")
    return f"[{{ loop = {{ count = 0, body = [{body}] }} }}]"


def case_toml(case: Case) -> str:
    """The scenario of ``case`` (kernel.version is the caller's override)."""
    lines = [
        f"# schedlab difftest, generator {GENERATOR_VERSION}, batch {case.batch_seed}, case {case.index}"
        + (f" ({case.origin})" if case.origin else ""),
        f'name = "difftest-{case.batch_seed}-{case.index}"',
        "",
        "[machine]",
        *(f"{k} = {v}" for k, v in case.machine),
        "",
        "[kernel]",
        'version = "6.1"',
        'preempt = "voluntary"',
        "preempt_dynamic = true",
        "",
        "[measure]",
        f'warmup = "{WARMUP}"',
        f'duration = "{DURATION}"',
        f'interval = "{INTERVAL}"',
        "samples = true",
    ]
    for c in case.cgroups:
        lines += ["", "[[cgroup]]", f'path = "{c.path}"']
        if c.weight != 100:
            lines.append(f'"cpu.weight" = {c.weight}')
        if c.idle:
            lines.append('"cpu.idle" = 1')
        if c.max_pct is not None:
            lines.append(f'"cpu.max" = "{c.max_pct * 1000} 100000"')
    for t in case.tasks:
        lines += ["", "[[task]]", f'name = "{t.name}"']
        if t.policy != "SCHED_NORMAL":
            lines.append(f'policy = "{t.policy}"')
        if t.rt_priority:
            lines.append(f"rt_priority = {t.rt_priority}")
        if t.nice:
            lines.append(f"nice = {t.nice}")
        if t.cpus is not None:
            lines.append(f"cpus = {toml_literal(t.cpus)}")
        if t.cgroup is not None:
            lines.append(f'cgroup = "{t.cgroup}"')
        lines.append(f"program = {_program(t)}")
    return "\n".join(lines) + "\n"


def describe(case: Case) -> str:
    """One line: the machine and each task's kind and attributes."""
    m = dict(case.machine)
    mach = f"{m.get('sockets', 1)}x{m.get('cores_per_socket', 1)}x{m.get('threads_per_core', 1)}"
    if m.get("nodes", 1) > 1:
        mach += f" {m['nodes']} nodes"
    parts: list[str] = []
    for t in case.tasks:
        s = t.kind
        if t.kind == "sleeper":
            s += f" {_mean(t.run_us) / 1000:g}/{_mean(t.sleep_us) / 1000:g}ms"
        if t.policy != "SCHED_NORMAL":
            s += " " + t.policy.removeprefix("SCHED_").lower() + (f"{t.rt_priority}" if t.rt_priority else "")
        if t.nice:
            s += f" n{t.nice}"
        if t.cpus is not None:
            s += f" @{t.cpus}"
        if t.cgroup is not None:
            s += f" in {t.cgroup}"
        parts.append(s)
    groups = ""
    if case.cgroups:
        shown = []
        for c in case.cgroups:
            attrs = [f"w{c.weight}"] + (["idle"] if c.idle else []) + ([f"max {c.max_pct}%"] if c.max_pct else [])
            shown.append(f"{c.path} {' '.join(attrs)}")
        groups = "; cgroups " + ", ".join(shown)
    return f"{mach} ({case.nr_cpus} CPUs): " + ", ".join(parts) + groups


def case_from_dict(d: dict[str, Any]) -> Case:
    """A case written by :func:`case_to_dict` (the campaign file)."""
    tasks = []
    for t in d["tasks"]:
        t = dict(t)
        for k in ("run_us", "sleep_us"):
            if isinstance(t.get(k), list):
                t[k] = tuple(t[k])
        tasks.append(TaskSpec(**t))
    machine = tuple((str(k), int(v)) for k, v in d["machine"])
    cgroups = tuple(CgroupSpec(**c) for c in d.get("cgroups") or ())
    return Case(int(d["batch_seed"]), int(d["index"]), machine, tuple(tasks), str(d.get("origin", "")), cgroups)


def case_to_dict(case: Case) -> dict[str, Any]:
    return {
        "batch_seed": case.batch_seed,
        "index": case.index,
        "origin": case.origin,
        "machine": [list(kv) for kv in case.machine],
        "tasks": [
            {k: (list(v) if isinstance(v, tuple) else v) for k, v in t.__dict__.items() if k != "cgroup" or v}
            for t in case.tasks
        ],
        **({"cgroups": [dict(c.__dict__) for c in case.cgroups]} if case.cgroups else {}),
    }
