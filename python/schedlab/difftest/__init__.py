"""``schedlab difftest``: differential testing of the simulator against real
kernels with generated scenarios.

    schedlab difftest --kernel 6.12 --out DIR [--cases 100] [--budget 30m] [--seed 1]
    schedlab difftest --kernel 6.12 --out DIR --rejudge
    schedlab difftest --local --out DIR [--cases 100]
    schedlab difftest --sim-only [--cases 200] [--seed 1]

From a seed the generator (``generate.py``) draws a machine of 2 to 16 CPUs
(flat, SMT, two sockets, two NUMA nodes) and four workloads for it: hogs,
periodic sleepers and wakeup chains, at nice levels and policies from
SCHED_NORMAL to SCHED_FIFO, pinned or not. A batch boots the oracle kernel
once and runs its four cases one after another with the runner
(:func:`schedlab.qemu.run_batch_in_guest`); the simulator runs each at the
guest's exact release with the guest's measured cost constants (as
``schedlab validate``). ``judge.py`` compares per-task shares, per-CPU idle,
migrations and switches with tolerances fixed in the tool, and audits the
wasted CPU on both sides. ``campaign.py`` keeps the campaign resumable and
bounded in time, and shrinks each disagreement (fewer tasks, a smaller
machine, plainer tasks) to the smallest case that still disagrees, saved
with both reports as a regression case. Every case is named by its batch's
seed, its index and its scenario's hash.

``--local`` runs the real side on this kernel with the runner, no boot:
every case on this host's own machine (its CPU count, one socket), the
simulator at this host's release with its measured costs, preemption
model and cpuidle driver (``host_sets``: on this machine PREEMPT_NONE and
haltpoll). Cheap enough for 100 cases and every disagreement shrunk.

``--sim-only`` runs no guest: it generates the cases and lists those where
the simulator wastes CPU (an idle CPU while a task allowed on it waits), the
cheapest way to look for balancer gaps before spending guest time on them.
"""

from __future__ import annotations

import argparse
import sys

from schedlab import native
from schedlab.difftest.campaign import (
    Campaign,
    local_batch,
    qemu_batch,
    rejudge,
    run_campaign,
    sim_report,
    summary_table,
)
from schedlab.difftest.generate import describe, generate_batch, host_machine
from schedlab.difftest.judge import WASTE_THRESHOLD_PCT, wasted_estimate_pct
from schedlab.errors import UsageError
from schedlab.kernels import ORACLE_KERNELS

__all__ = ["cmd_difftest", "sim_scan"]


def sim_scan(cases: int, first_seed: int, version: str) -> list[dict[str, object]]:
    """The simulator alone on ``cases`` generated cases: per case its name,
    description and wasted CPU (exact, and the estimate the campaign uses)."""
    out: list[dict[str, object]] = []
    seed = first_seed
    while len(out) < cases:
        for case in generate_batch(seed).cases:
            if len(out) == cases:
                break
            rep = sim_report(case, version, [])
            out.append(
                {
                    "name": case.name,
                    "describe": describe(case),
                    "wasted_exact_pct": rep.get("wasted_cpu_pct"),
                    "wasted_estimate_pct": wasted_estimate_pct(rep),
                }
            )
        seed += 1
    return out


def _budget(text: str | None) -> float | None:
    """``--budget``: a wall-clock duration (90s, 30m, 2h), in seconds. The
    core's duration parser reads it; ``m`` is taken as minutes here (a
    budget is never milliseconds), the core's spelling being ``min``."""
    if text is None:
        return None
    t = text.strip()
    if t.endswith("m") and t[:-1].strip().replace(".", "", 1).isdigit():
        t += "in"  # 30m -> 30min
    try:
        ns = native.parse_duration_ns(t)
    except ValueError:
        ns = 0
    if ns <= 0:
        raise UsageError("SL001", f"--budget {text}: accepted: a duration above 0 in s, m or h (90s, 30m, 2h)")
    return ns / 1e9


def cmd_difftest(args: argparse.Namespace) -> int:
    if args.cases < 1:
        raise UsageError("SL001", f"--cases {args.cases}: accepted: an integer >= 1")
    local = bool(getattr(args, "local", False))
    if local and args.kernel is not None:
        raise UsageError("SL001", "--local --kernel: a local campaign runs this host's release; accepted: one of them")
    if local:
        from schedlab.validation.runners import host_series

        args.kernel = host_series()
    elif args.kernel is None:
        args.kernel = "6.1"
    if not local and args.kernel not in ORACLE_KERNELS:
        raise UsageError("SL001", f"--kernel {args.kernel}: accepted: {', '.join(ORACLE_KERNELS)}")
    progress = (lambda m: None) if args.quiet else (lambda m: print(m, file=sys.stderr, flush=True))
    if args.sim_only:
        rows = sim_scan(args.cases, args.seed, args.kernel)
        flagged = [r for r in rows if (r["wasted_exact_pct"] or 0.0) > WASTE_THRESHOLD_PCT]  # type: ignore[operator]
        print(f"{len(rows)} cases on the simulator ({args.kernel}); wasted CPU above {WASTE_THRESHOLD_PCT:g} %: "
              f"{len(flagged)}")  # fmt: skip
        for r in flagged:
            est = r["wasted_estimate_pct"]
            est_text = "-" if est is None else f"{est:.1f} %"
            print(f"  {r['name']}: wasted {r['wasted_exact_pct']} % (estimate {est_text}): {r['describe']}")
        return 0
    if not args.out:
        raise UsageError("SL001", "difftest: --out DIR is required (the campaign directory); accepted: --out DIR, "
                         "or --sim-only")  # fmt: skip
    budget_s = _budget(args.budget)  # a bad --budget is an error before any boot or calibration
    camp = Campaign.open(args.out, args.kernel, "local" if local else "qemu", bool(getattr(args, "groups", False)))
    if not local:
        from schedlab.kernels import ORACLE_SIM_SETS

        # What this oracle kernel's build differs in from the cases' TOML.
        camp.doc.setdefault("sim_set", [list(s) for s in ORACLE_SIM_SETS.get(args.kernel, ())])
    if args.rejudge:
        doc = rejudge(camp, progress)
    elif local:
        import os

        from schedlab.calibrate import run_local
        from schedlab.validation.runners import host_sets

        camp.doc.setdefault("sim_set", [list(s) for s in host_sets()])

        doc = run_campaign(
            camp,
            local_batch(progress),
            cases=args.cases,
            first_seed=args.seed,
            budget_s=budget_s,
            shrink_off=not args.no_shrink,
            calibrate=run_local,
            progress=progress,
            machine=host_machine(os.cpu_count() or 1),
        )
    else:
        from schedlab.validation.runners import qemu_calibration

        real = qemu_batch(args.kernel, progress)
        doc = run_campaign(
            camp,
            real,
            cases=args.cases,
            first_seed=args.seed,
            budget_s=budget_s,
            shrink_off=not args.no_shrink,
            calibrate=lambda: qemu_calibration(args.kernel, progress),
            progress=progress,
        )
    print(summary_table(doc))
    return 0
