"""``schedlab abtest``: two kernel configurations over a generated population
of scenarios, and every metric that changed significantly.

    schedlab abtest --a 'kernel.features=["KTHREAD_STACKING"]' \\
                    --b 'kernel.features=["NO_KTHREAD_STACKING"]' \\
                    --scenarios 200 --repeats 5 --seed 1 --out ab [--html ab/html]

The population comes from one seed (``--seed``): each scenario draws a
machine preset (4cpu, uma8, 8cpu-llc, 2x8smt) and one to three kinds of
workload, each a task group of a random size: CPU hogs, periodic tasks on a
timer, IO chains (CPU work, then a block write whose completion is punted
to a bound workqueue whose kworker wakes the task: XFS's ioend path), sleepers,
and SCHED_FIFO tasks. Its name says its kinds (``ab017-io+hogs``). Each
scenario runs ``--repeats`` seeds under each configuration (the same seeds
for both), at ``--version`` (default 6.1).

Metrics per run: each group's blocking ops completed per second (its
throughput: voluntary switches; for hogs their CPU time per second) and
CPU time per second, and the machine's migrations/s, switches/s, timer
delay p50/p99 (``wakeup_p50_us``, ``wakeup_p99_us``) and mean %idle. For
every (scenario, metric): Welch's t-test over the repeats, B against A, and Benjamini and
Hochberg's false discovery rate over all the tests (``--alpha``, default
0.05). A metric whose repeats do not vary (a deterministic difference) has
p = 0 if the means differ and 1 if not. The report lists the significant
changes sorted by their size (relative change of the mean), each with the
command that reruns the scenario; ``OUT/scenarios/`` has every scenario,
``OUT/abtest.json`` every test; ``--html DIR`` writes a page with the
distribution of the effects per kind of workload.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shlex
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from statistics import mean, variance
from typing import Any

from schedlab import native
from schedlab.args import SEED_MAX, cut
from schedlab.errors import SchedlabError, UsageError
from schedlab.overrides import Override, parse_set_arg

__all__ = ["Case", "abtest", "benjamini_hochberg", "check_options", "cmd_abtest", "generate", "welch"]

#: Limits checked before any work: the population, the seeds per side (a
#: t-test needs two), the runs in all (scenarios x 2 sides x repeats).
MAX_SCENARIOS = 100_000
MAX_REPEATS = 1_000
MAX_RUNS = 1_000_000
MAX_JOBS = 1_024

PRESETS = {"4cpu": 4, "uma8": 8, "8cpu-llc": 8, "2x8smt": 16}
KINDS = ("hogs", "periodic", "io", "sleepers", "rt")


@dataclass(frozen=True)
class Case:
    name: str
    kinds: tuple[str, ...]
    text: str


def _group(kind: str, rng: random.Random, cpus: int) -> str:
    def us(lo: int, hi: int) -> str:
        return f"{rng.randint(lo, hi)}us"

    if kind == "hogs":
        n, body = rng.randint(1, 2 * cpus), '{ run = "10ms" }'
    elif kind == "periodic":
        n = rng.randint(1, cpus)
        body = f'{{ run = "{us(300, 3000)}" }}, {{ timer = {{ period = "{rng.randint(5, 20)}ms" }} }}'
    elif kind == "io":
        n = rng.randint(1, cpus)
        size = rng.choice((4, 16, 64))
        io = f'{{ disk = "d0", op = "write", size = "{size}KiB", end_io = {{ wq = "io-end", run = "5us" }} }}'
        body = f'{{ run = "{us(20, 200)}" }}, {{ io = {io} }}'
    elif kind == "sleepers":
        n = rng.randint(1, 2 * cpus)
        body = f'{{ run = "{us(100, 2000)}" }}, {{ sleep = "{us(500, 5000)}" }}'
    else:  # rt
        n = rng.randint(1, max(1, cpus // 2))
        body = f'{{ run = "{us(200, 1000)}" }}, {{ sleep = "{us(2000, 10000)}" }}'
    head = f'[[task]]\nname = "{kind}"\ncount = {n}\n'
    if kind == "rt":
        head += f'policy = "SCHED_FIFO"\nrt_priority = {rng.randint(10, 50)}\n'
    return head + f"program = [{{ loop = {{ count = 0, body = [{body}] }} }}]\n"


def _int(name: str, value: object, lo: int, hi: int | None, why: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError("SL001", f"{name} {cut(value)}: accepted: an integer{why}, not {type(value).__name__}")
    if value < lo or (hi is not None and value > hi):
        span = f"from {lo} to {hi}" if hi is not None else f">= {lo}"
        raise UsageError("SL001", f"{name} {value}: accepted: an integer {span}{why}")
    return value


def _alpha(value: object, name: str = "--alpha") -> float:
    """The false discovery rate: a finite number strictly between 0 and 1."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and 0 < value < 1
    if not ok:
        raise UsageError(
            "SL001", f"{name} {cut(value)}: accepted: a false discovery rate strictly between 0 and 1 (0.05)"
        )
    return float(value)  # type: ignore[arg-type]


def _population(seed: object, n: object, version: object, duration: object, prefix: str = "--") -> None:
    """The arguments of ``generate``, checked (SL001 naming the one that is wrong)."""
    from schedlab.units import parse_duration_ns

    _int(f"{prefix}seed", seed, 0, SEED_MAX)
    _int(f"{prefix}scenarios", n, 1, MAX_SCENARIOS)
    try:
        native.kernel_version(version)  # type: ignore[arg-type]  # the core's version parser decides
    except ValueError:
        raise UsageError(
            "SL001", f"{prefix}version {cut(version)}: accepted: a kernel version such as 6.1 or 6.12"
        ) from None
    bad = f"{prefix}duration {cut(duration)}: accepted: a duration longer than 0 such as 1s or 500ms"
    if not isinstance(duration, str):
        raise UsageError("SL001", bad)
    try:
        ns = parse_duration_ns(duration)
    except ValueError:
        raise UsageError("SL001", bad) from None
    if ns <= 0:
        raise UsageError("SL001", bad)


def check_options(
    *, scenarios: object, repeats: object, seed: object, alpha: object, jobs: object, top: object,
    version: object = "6.1", duration: object = "1s",
) -> None:  # fmt: skip
    """Every numeric option of ``schedlab abtest`` against its meaning, before
    any work: SL001 naming the option and what is accepted."""
    _population(seed, scenarios, version, duration)
    _int("--repeats", repeats, 2, MAX_REPEATS, " (a t-test needs two seeds per side)")
    _alpha(alpha)
    if jobs is not None:
        _int("--jobs", jobs, 1, MAX_JOBS)
    _int("--top", top, 1, None)
    runs = 2 * scenarios * repeats  # type: ignore[operator]
    if runs > MAX_RUNS:
        raise UsageError(
            "SL001",
            f"--scenarios {scenarios} --repeats {repeats}: {runs} runs; accepted: at most {MAX_RUNS} "
            "(2 sides x scenarios x repeats)",
        )


def generate(seed: int, n: int, version: str = "6.1", duration: str = "1s") -> list[Case]:
    """The population: ``n`` scenarios from ``seed`` (the same seed, the same texts)."""
    _population(seed, n, version, duration, prefix="")
    cases = []
    for i in range(n):
        rng = random.Random(f"abtest/{seed}/{i}")
        preset = rng.choice(sorted(PRESETS))
        kinds = tuple(sorted(rng.sample(KINDS, rng.randint(1, 3)), key=KINDS.index))
        name = f"ab{i:03d}-{'+'.join(kinds)}"
        text = (
            f'name = "{name}"\n[machine]\npreset = "{preset}"\n[[machine.disk]]\nname = "d0"\nwrite = "30us"\n'
            f'[kernel]\nversion = "{version}"\n[[kernel.workqueue]]\nname = "io-end"\n'
            f'[measure]\nwarmup = "200ms"\nduration = "{duration.strip()}"\n\n'
        )
        text += "\n".join(_group(k, rng, PRESETS[preset]) for k in kinds)
        cases.append(Case(name, kinds, text))
    return cases


def run_metrics(text: str, source: str, overrides: Sequence[Override], seed: int) -> dict[str, float | None]:
    """One run's metrics (see the module's doc)."""
    from schedlab.sweep import _standard

    r = native.run(text, source, seed, list(overrides), False)
    m = r["measure"]
    win = (m["end_ns"] - m["start_ns"]) / 1e9
    out: dict[str, float | None] = {}
    for g in r["groups"]:
        ws: list[Mapping[str, Any]] = [t.get("window") or {} for t in r["tasks"] if t["group"] == g["name"]]
        out[f"{g['name']}.cpu_ms_per_s"] = sum(w.get("runtime_ns", 0) for w in ws) / 1e6 / win
        # A blocking op completed is a voluntary switch: the group's throughput
        # (CPU time is not: a migrated task also pays its cache refill).
        ops = sum(w.get("nr_voluntary_switches", 0) for w in ws)
        if ops:
            out[f"{g['name']}.ops_per_s"] = ops / win
    std = _standard(r)
    for k in ("migrations_per_s", "switches_per_s", "wakeup_p50_us", "wakeup_p99_us", "idle_pct"):
        v = std[k]
        out[k] = None if v is None else float(v)
    return out


# ------------------------------------------------------------- statistics


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (Lentz)."""
    tiny, qab, qap, qam = 1e-300, a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c if abs(1.0 + aa / c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c if abs(1.0 + aa / c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-12:
            break
    return h


def _betai(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(1.0 - x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(lbt) * _betacf(a, b, x) / a
    return 1.0 - math.exp(lbt) * _betacf(b, a, 1.0 - x) / b


def welch(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """Welch's t-test: (t, two-sided p). Samples that do not vary: p is 0
    when the means differ (a deterministic difference), 1 when not."""
    ma, mb = mean(a), mean(b)
    va = variance(a) if len(a) > 1 else 0.0
    vb = variance(b) if len(b) > 1 else 0.0
    se2 = va / len(a) + vb / len(b)
    if se2 == 0.0:
        return (0.0, 1.0) if ma == mb else (math.copysign(math.inf, mb - ma), 0.0)
    t = (mb - ma) / math.sqrt(se2)
    dof = se2**2 / ((va / len(a)) ** 2 / max(len(a) - 1, 1) + (vb / len(b)) ** 2 / max(len(b) - 1, 1))
    return t, _betai(dof / 2.0, 0.5, dof / (dof + t * t))


def benjamini_hochberg(ps: Sequence[float]) -> list[float]:
    """The q-values (Benjamini-Hochberg adjusted p-values), in input order."""
    n = len(ps)
    order = sorted(range(n), key=lambda i: ps[i])
    q = [0.0] * n
    running = 1.0
    for rank in range(n, 0, -1):
        i = order[rank - 1]
        running = min(running, ps[i] * n / rank)
        q[i] = running
    return q


# -------------------------------------------------------------------- run


def _task(args: tuple[str, str, list[Override], int]) -> dict[str, float | None] | str:
    text, source, ov, seed = args
    try:
        return run_metrics(text, source, ov, seed)
    except SchedlabError as e:
        return str(e)


def _pairs(value: object) -> bool:
    return isinstance(value, (list, tuple)) and all(
        isinstance(o, tuple) and len(o) == 2 and all(isinstance(x, str) for x in o) for o in value
    )


def _check_api(cases: object, a: object, b: object) -> None:
    """The arguments of ``abtest`` that are not numbers (SL001 naming the one that is wrong)."""
    if not isinstance(cases, (list, tuple)) or not all(isinstance(c, Case) for c in cases):
        raise UsageError("SL001", f"cases={cut(cases)}: accepted: a list of abtest.Case (abtest.generate)")
    for name, conf in (("a", a), ("b", b)):
        if not _pairs(conf):
            raise UsageError("SL001", f"{name}={cut(conf)}: accepted: a list of (key, value) string pairs")


def abtest(
    cases: Sequence[Case], a: Sequence[Override], b: Sequence[Override], repeats: int, jobs: int, alpha: float
) -> dict[str, Any]:
    """Run every case under both configurations; the tests and the changes."""
    from schedlab.progress import Steps

    _check_api(cases, a, b)
    _int("repeats", repeats, 2, MAX_REPEATS, " (a t-test needs two seeds per side)")
    _int("jobs", jobs, 1, MAX_JOBS)
    alpha = _alpha(alpha, "alpha")

    work = [(c, side, ov, seed) for c in cases for side, ov in (("a", a), ("b", b)) for seed in range(1, repeats + 1)]
    results: dict[tuple[str, str, int], dict[str, float | None] | str] = {}
    with Steps("abtest", len(work)) as steps, ProcessPoolExecutor(max_workers=jobs) as pool:
        args = [(c.text, c.name, list(ov), seed) for c, _, ov, seed in work]
        for (c, side, _, seed), res in zip(work, pool.map(_task, args, chunksize=8)):
            results[(c.name, side, seed)] = res
            steps.done(f"{c.name} {side} seed {seed}")
    tests: list[dict[str, Any]] = []
    failed = []
    for c in cases:
        runs = {s: [results[(c.name, s, k)] for k in range(1, repeats + 1)] for s in ("a", "b")}
        errs = [r for rs in runs.values() for r in rs if isinstance(r, str)]
        if errs:
            failed.append({"scenario": c.name, "error": errs[0]})
            continue
        metrics = sorted({m for rs in runs.values() for r in rs if isinstance(r, dict) for m in r})
        for m in metrics:
            va = [r[m] for r in runs["a"] if isinstance(r, dict) and r.get(m) is not None]
            vb = [r[m] for r in runs["b"] if isinstance(r, dict) and r.get(m) is not None]
            if len(va) != repeats or len(vb) != repeats:
                continue  # not measured in every run (a wakeup percentile with no wakeups)
            fa, fb = [float(x) for x in va if x is not None], [float(x) for x in vb if x is not None]
            t, p = welch(fa, fb)
            ma, mb = mean(fa), mean(fb)
            rel = (mb - ma) / abs(ma) if ma else (0.0 if mb == ma else math.copysign(math.inf, mb - ma))
            tests.append(
                {"scenario": c.name, "kinds": list(c.kinds), "metric": m, "a": ma, "b": mb,
                 "rel_change": rel, "t": t, "p": p}
            )  # fmt: skip
    for row, q in zip(tests, benjamini_hochberg([r["p"] for r in tests])):
        row["q"] = q
        row["significant"] = q < alpha
    changes = sorted((r for r in tests if r["significant"]), key=lambda r: -abs(r["rel_change"]))
    return {"tests": tests, "changes": changes, "failed": failed}


def _fmt_change(r: Mapping[str, Any], cmd: str) -> str:
    rel = r["rel_change"]
    shown = f"{100 * rel:+.1f} %" if math.isfinite(rel) else ("+inf" if rel > 0 else "-inf")
    return f"{r['scenario']:<28} {r['metric']:<26} {r['a']:>12.3f} {r['b']:>12.3f} {shown:>9} {r['q']:9.2g}  {cmd}"


def _by_kind(doc: Mapping[str, Any]) -> dict[str, dict[str, int]]:
    """Per kind of workload: its scenarios whose throughput (a group's ops
    per second; the hogs' CPU time) rose significantly, fell, or did neither."""
    per_case: dict[str, dict[str, Any]] = {}
    for r in doc["tests"]:
        c = per_case.setdefault(r["scenario"], {"kinds": r["kinds"], "gain": False, "loss": False})
        if r["significant"] and r["metric"].endswith((".ops_per_s", "hogs.cpu_ms_per_s")):
            c["gain" if r["rel_change"] > 0 else "loss"] = True
    kinds = (*KINDS, "given")  # given: a --scenario file
    rows = [f"{k} alone" for k in kinds] + [f"{k} with others" for k in kinds]
    out: dict[str, dict[str, int]] = {
        r: {"scenarios": 0, "gain": 0, "loss": 0, "mixed": 0, "unchanged": 0} for r in rows
    }
    for c in per_case.values():
        verdict = ("mixed" if c["loss"] else "gain") if c["gain"] else ("loss" if c["loss"] else "unchanged")
        for k in c["kinds"]:
            row = out[f"{k} alone" if len(c["kinds"]) == 1 else f"{k} with others"]
            row["scenarios"] += 1
            row[verdict] += 1
    return {k: v for k, v in out.items() if v["scenarios"]}


def _html(doc: Mapping[str, Any], out: Path, command: str, rerun: str) -> Path:
    """The page: the per-kind summary, the distribution of the effects, the changes."""
    import html as h
    import tempfile

    from schedlab.html import _page, _write

    body = ["<h2>Per kind of workload</h2>", "<table><tr><th>kind</th><th>scenarios</th><th>throughput up</th>"
            "<th>down</th><th>both</th><th>unchanged</th></tr>"]  # fmt: skip
    for k, d in doc["by_kind"].items():
        body.append(
            f"<tr><td>{h.escape(k)}</td><td class=num>{d['scenarios']}</td><td class=num>{d['gain']}</td>"
            f"<td class=num>{d['loss']}</td><td class=num>{d['mixed']}</td><td class=num>{d['unchanged']}</td></tr>"
        )
    body.append("</table>")
    body += ["<h2>Significant changes</h2>", "<table><tr><th>scenario</th><th>metric</th><th>A</th><th>B</th>"
             "<th>change</th><th>q</th></tr>"]  # fmt: skip
    for r in doc["changes"]:
        rel = r["rel_change"]
        shown = f"{100 * rel:+.1f} %" if math.isfinite(rel) else str(rel)
        body.append(
            f"<tr><td>{h.escape(r['scenario'])}</td><td>{h.escape(r['metric'])}</td><td class=num>{r['a']:.3f}</td>"
            f"<td class=num>{r['b']:.3f}</td><td class=num>{shown}</td><td class=num>{r['q']:.2g}</td></tr>"
        )
    body += ["</table>", f"<p>Rerun a scenario under B: <code>{h.escape(rerun)}</code></p>"]
    with tempfile.TemporaryDirectory() as tmp:
        figures = []
        try:
            from schedlab.plot import _plt, _save

            plt = _plt()
            fig, ax = plt.subplots(figsize=(8, 4))
            for k in (*KINDS, "given"):
                vals = [
                    100 * r["rel_change"] for r in doc["changes"] if k in r["kinds"] and math.isfinite(r["rel_change"])
                ]
                if vals:
                    ax.hist(vals, bins=30, alpha=0.5, label=k)
            ax.set_xlabel("change of the mean, B against A (%)")
            ax.set_ylabel("significant (scenario, metric) pairs")
            ax.set_title("the distribution of the significant effects, per kind of workload")
            ax.legend(fontsize="small")
            figures.append(_save(fig, Path(tmp), "effects", "svg"))
            plt.close(fig)
        except UsageError:
            body.append("<p>No picture: matplotlib is not installed.</p>")
        return _write(out, _page("schedlab abtest", command, None, body, figures))


def _mkdir(d: Path, flag: str) -> None:
    try:
        d.mkdir(parents=True, exist_ok=True)
    except (OSError, ValueError) as e:
        raise UsageError(
            "SL001", f"{flag} {d}: cannot create the directory: {getattr(e, 'strerror', None) or e}"
        ) from None


def _given(paths: Sequence[str]) -> list[Case]:
    """``--scenario FILE`` ...: the user's scenarios, an imported trace's for
    one, as the population (kind ``given``)."""
    cases, names = [], set()
    for p in paths:
        try:
            text = Path(p).read_text()
        except OSError as e:
            raise UsageError("SL001", f"--scenario {p}: cannot read it: {e.strerror or e}") from None
        name = Path(p).stem
        while name in names:
            name += "_"
        names.add(name)
        cases.append(Case(name, ("given",), text))
    return cases


def cmd_abtest(args: argparse.Namespace) -> int:
    import os

    from schedlab.outputs import write_text

    # Every option is checked before any work.
    check_options(
        scenarios=args.scenarios, repeats=args.repeats, seed=args.seed, alpha=args.alpha, jobs=args.jobs,
        top=args.top, version=args.version, duration=args.duration,
    )  # fmt: skip
    a = [parse_set_arg(s) for s in args.a or []]
    b = [parse_set_arg(s) for s in args.b or []]
    if not a and not b:
        raise UsageError(
            "SL001", "abtest: --a and --b give the two configurations; accepted: --a KEY=VALUE ... --b KEY=VALUE ..."
        )
    cases = _given(args.scenario) if args.scenario else generate(args.seed, args.scenarios, args.version, args.duration)
    for c in cases:
        native.check(c.text, c.name, [*a])
        native.check(c.text, c.name, [*b])
    out = Path(args.out)
    _mkdir(out / "scenarios", "--out")
    if args.html:
        _mkdir(Path(args.html), "--html")
    for c in cases:
        write_text(out / "scenarios" / f"{c.name}.toml", c.text, flag="--out")

    doc = abtest(cases, a, b, args.repeats, args.jobs or os.cpu_count() or 1, args.alpha)
    doc |= {"seed": args.seed, "scenarios": len(cases), "repeats": args.repeats, "version": args.version,
            "a": [f"{k}={v}" for k, v in a], "b": [f"{k}={v}" for k, v in b], "alpha": args.alpha}  # fmt: skip
    doc["by_kind"] = _by_kind(doc)
    write_text(out / "abtest.json", json.dumps(doc, indent=1, default=str) + "\n", flag="--out")
    sets = " ".join(f"--set {shlex.quote(f'{k}={v}')}" for k, v in b)
    sides = f"B ({' '.join(doc['b'])}) against A ({' '.join(doc['a'])})"
    print(f"abtest: {len(cases)} scenarios x {args.repeats} seeds, {sides}")
    n_changes, n_tests = len(doc["changes"]), len(doc["tests"])
    print(f"{n_changes} significant changes of {n_tests} tests (FDR {args.alpha}); per kind of workload:")
    for k, d in doc["by_kind"].items():
        print(
            f"  {k:<20} {d['scenarios']:4d} scenarios: throughput up in {d['gain']}, down in {d['loss']}, "
            f"both in {d['mixed']}, unchanged in {d['unchanged']}"
        )
    print(f"\n{'scenario':<28} {'metric':<26} {'A':>12} {'B':>12} {'change':>9} {'q':>9}  rerun B")
    for r in doc["changes"][: args.top]:
        print(_fmt_change(r, f"schedlab run {out / 'scenarios' / (r['scenario'] + '.toml')} {sets}"))
    if args.html:
        from schedlab.html import command_line

        page = _html(doc, Path(args.html), command_line(), f"schedlab run {out}/scenarios/NAME.toml {sets}")
        print(f"abtest: wrote {page}")
    return 0
