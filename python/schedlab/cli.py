"""The ``schedlab`` command.

    schedlab run SCENARIO|- [--seed N] [--set KEY=VALUE]... [--json FILE] [--check] [--strict] [--quiet]
    schedlab check SCENARIO [--set KEY=VALUE]...
    schedlab list
    schedlab reproduce NAME [--quick] [--repeat N] [--json FILE] [--jobs N] [--strict] [--quiet]
    schedlab version
    schedlab real SCENARIO [--repeat N] [--json FILE] [--set KEY=VALUE]... [--quiet]
    schedlab compare SIM.json REAL.json
    schedlab validate [--kernel 6.1|6.12] [--json FILE] [--only NAME ...] [--local]
    schedlab difftest [--kernel 6.1|6.12] --out DIR [--cases N] [--budget 30m] [--seed S] [--sim-only] [--rejudge]
    schedlab plot INPUT... --out DIR [--format png|svg] [--window [START:]END]
    schedlab qemu args|probe MACHINE / qemu run SCENARIO --runner PATH

Every subcommand's arguments are defined here; the commands themselves live
beside what they do (``real.py``, ``validation/``, ``qemu/``) and this
module dispatches to them.

SCENARIO and NAME are a bundled name (``schedlab list``) or a path. Every error
schedlab raises on purpose prints ``schedlab: error: [CODE] message`` and exits
with status 2; ``reproduce`` exits 1 when a band is OUT, ``validate`` when a
row is off (or a negative control ok), ``qemu probe`` when the guest's
topology differs from the machine's.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO

from schedlab import native
from schedlab._version import __version__
from schedlab.args import SEED_MAX, check_output_path
from schedlab.errors import SchedlabError, UsageError
from schedlab.kernels import ORACLE_KERNELS
from schedlab.overrides import Override, parse_set_arg, toml_literal
from schedlab.scenarios import ScenarioInput, bundled, read_text, resolve, scenario_input, scenarios_dir

# The commands import what they need when they run (the oracle, the
# validation suite, experiments, the text report): `schedlab run` of a
# small scenario then pays for argparse and the native module only.

__all__ = ["build_parser", "main"]

EXIT_OK = 0
EXIT_BANDS_OUT = 1
EXIT_ERROR = 2


class _Parser(argparse.ArgumentParser):
    """argparse, but its usage errors are ``UsageError`` (one error format)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        raise UsageError("SL001", f"{self.prog}: {message}")


class _Skipped:
    """Stands in for the parser of a command the command line does not name:
    takes its arguments and drops them. Building all thirteen parsers was a
    fifth of `schedlab run`'s start-up (argparse's formatter and gettext on
    every argument)."""

    required = False

    def add_argument(self, *args: Any, **kwargs: Any) -> None:
        return None

    def add_subparsers(self, *args: Any, **kwargs: Any) -> _Skipped:
        return self

    def add_parser(self, *args: Any, **kwargs: Any) -> _Skipped:
        return self


class _Only:
    """The subcommands, of which only `command` is built (all when None)."""

    def __init__(self, sub: Any, command: str | None) -> None:
        self.sub, self.command = sub, command

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        if self.command is None or self.command == name:
            return self.sub.add_parser(name, **kwargs)
        return _Skipped()


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command-line parser; with `command`, only that subcommand's
    parser is built (the one `main` will use)."""
    p = _Parser(
        prog="schedlab",
        description="A deterministic simulator of the Linux CPU scheduler.",
        epilog="Scenarios are TOML files (docs/scenario.md); `schedlab list` shows the bundled ones.",
    )
    p.add_argument("--version", action="version", version=f"schedlab {__version__}")
    subparsers = p.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    sub = _Only(subparsers, command)

    def add_set(sp: argparse.ArgumentParser) -> None:
        sp.add_argument(
            "--set",
            metavar="KEY=VALUE",
            action="append",
            default=[],
            help="override a scenario key (repeatable): task.0.nice=19, task.ktask.count=0, "
            'measure.duration=2s, kernel.sysctl."kernel.sched_migration_cost_ns"=0; '
            "VALUE is a TOML literal, or else a string",
        )

    r = sub.add_parser("run", help="simulate one scenario and print mpstat-style and per-task reports")
    r.add_argument("scenario", metavar="SCENARIO", help="bundled scenario name, path to a .toml file, or - for stdin")
    r.add_argument("--seed", type=int, default=1, help="RNG seed, 0 to 2**64-1 (default 1)")
    add_set(r)
    r.add_argument("--json", metavar="FILE", help="write the JSON report to FILE ('-' for stdout)")
    r.add_argument("--check", action="store_true", help="run the invariant checker while simulating")
    r.add_argument(
        "--strict", action="store_true", help="a warning (deadlock, measure.limit reached) is an error (exit 2)"
    )
    r.add_argument("--trace", metavar="FILE", help="write the sched tracepoints as ftrace text to FILE")
    r.add_argument("--machine", metavar="PRESET", help="the machine of an rt-app .json workload (a preset name)")
    r.add_argument("--kernel", metavar="VERSION", help="the kernel version of an rt-app .json workload")
    r.add_argument(
        "--html",
        metavar="DIR",
        help="write DIR/index.html: the report, the CPU heat map, wakeup CDFs (and with --trace the timeline)",
    )
    r.add_argument(
        "--perfetto", metavar="FILE", help="write the sched tracepoints as a Perfetto protobuf trace to FILE"
    )
    r.add_argument("--quiet", "-q", action="store_true", help="print no text report")
    r.add_argument("--samples", action="store_true", help="print every mpstat interval, not just Average")
    r.add_argument("--schedstat", action="store_true", help="also print per-CPU schedstat counters")
    r.add_argument(
        "--schedstat-file", metavar="FILE", help="write the counters as /proc/schedstat (version 15) text to FILE"
    )
    r.add_argument(
        "--latency", action="store_true", help="print the perf sched latency table (wakeup-to-run delay per task)"
    )
    r.add_argument("--histogram", action="store_true", help="with --latency: each task's delays in log2 buckets")
    r.add_argument(
        "--turbostat",
        action="store_true",
        help="print turbostat's table for the window (Avg_MHz, Busy%%, Bzy_MHz, idle states; needs machine.cpufreq)",
    )
    r.add_argument(
        "--rt-migrate-test",
        action="store_true",
        help="print rt-migrate-test's own output (scenarios with [rt_migrate_test]) instead of the report",
    )

    c = sub.add_parser("check", help="parse and validate a scenario (and its experiment) without running it")
    c.add_argument("scenario", metavar="SCENARIO", help="bundled scenario name, path to a .toml file, or - for stdin")
    add_set(c)

    sub.add_parser("list", help="list the bundled scenarios and experiments")

    x = sub.add_parser("reproduce", help="run a bundled experiment (variants x seeds) and compare with the seed")
    x.add_argument("name", metavar="NAME", help="experiment name or path to a .toml file with [experiment]")
    x.add_argument("--quick", action="store_true", help="fewer seeds and the experiment's quick_set")
    x.add_argument("--html", metavar="DIR", help="write DIR/index.html: the bands, the compare table, the curves")
    x.add_argument("--repeat", type=int, metavar="N", help="seeds per variant (overrides repeat/quick_repeat)")
    x.add_argument("--json", metavar="FILE", help="write the experiment JSON to FILE ('-' for stdout)")
    x.add_argument("--jobs", "-j", type=int, metavar="N", help="parallel runs (default: number of CPUs)")
    x.add_argument("--quiet", "-q", action="store_true", help="no progress lines and no table")
    x.add_argument("--strict", action="store_true", help="a run's warning (deadlock, limit reached) is an error")
    add_set(x)

    sub.add_parser("version", help="print the versions of the package and the native core")

    r = sub.add_parser("real", help="run a scenario as real threads on this kernel (schedlab-runner), medians")
    r.add_argument("scenario", metavar="SCENARIO", help="bundled scenario name or path to a .toml file")
    r.add_argument("--repeat", type=int, default=1, metavar="N", help="runs; every number is the median (default 1)")
    r.add_argument("--json", metavar="FILE", help="write the median report to FILE ('-' for stdout)")
    r.add_argument(
        "--set",
        "-o",
        dest="set",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="override a scenario key (repeatable), as `schedlab run --set`",
    )
    r.add_argument("--quiet", "-q", action="store_true", help="print no text report")

    dv = sub.add_parser(
        "diverge",
        help="where the simulator's scheduling decisions part from this kernel's on a scenario (both traced)",
    )
    dv.add_argument("scenario", metavar="SCENARIO", help="bundled scenario name or path to a .toml file")
    dv.add_argument("--seed", type=int, default=1, metavar="S", help="the simulator's seed (default 1)")
    dv.add_argument("--keep", metavar="DIR", help="keep both traces there (sim.txt, real.txt)")
    dv.add_argument(
        "--kernel",
        choices=("6.1", "6.12", "6.18"),
        help="trace the real side in this QEMU oracle guest (the scenario's machine) instead of on this host",
    )
    dv.add_argument(
        "--background",
        action="store_true",
        help="also list, for each side, the threads outside the scenario that ran (kworkers, rcu, the runner's own) "
        "and how often each CPU went idle",
    )
    add_set(dv)

    k = sub.add_parser(
        "calibrate",
        help="measure this machine's cost constants (kernel.costs) and print them as a [kernel.costs] table",
    )
    k.add_argument("--json", metavar="FILE", help="write the runner's calibration report to FILE ('-' for stdout)")
    k.add_argument("--quiet", "-q", action="store_true", help="print no table")

    c = sub.add_parser("compare", help="compare a `schedlab run --json` report with a `schedlab real --json` one")
    c.add_argument("sim", metavar="SIM.json", help="simulator report")
    c.add_argument("real", metavar="REAL.json", help="real-kernel report")

    v = sub.add_parser(
        "validate",
        help="run the validation suite on the simulator and for real (QEMU oracle or --local) and compare",
    )
    v.add_argument(
        "--kernel", choices=tuple(ORACLE_KERNELS), help="oracle kernel (default 6.1; --local: from this host's release)"
    )
    v.add_argument("--json", metavar="FILE", help="write the results to FILE ('-' for stdout)")
    v.add_argument("--only", nargs="+", metavar="NAME", default=[], help="only these suite scenarios")
    v.add_argument("--local", action="store_true", help="the real runs on this kernel instead of under QEMU")
    v.add_argument("--suite", metavar="FILE", help="suite file (default: validation/suite.toml)")
    v.add_argument("--quiet", "-q", action="store_true", help="no progress lines and no table")
    v.add_argument("--save-real", metavar="DIR", help="keep each real run's report as DIR/<scenario file stem>.json")
    v.add_argument(
        "--real-from",
        metavar="DIR",
        help="judge the simulator against real reports kept earlier with --save-real (no guest is booted); "
        "'bundled': the QEMU guests' reports that ship with schedlab, for --kernel",
    )
    v.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="N real runs per scenario (a guest boot each) and N simulator seeds; every number is the median "
        "(default 1; with --real-from only the simulator repeats)",
    )
    v.add_argument(
        "--costs",
        choices=("measured", "default"),
        default="measured",
        help="the simulator's cost constants: measured on the real machine first (`schedlab-runner --calibrate` "
        "in the guest, on this host with --local, or kept with --real-from; the default), or the documented defaults",
    )

    d = sub.add_parser(
        "difftest",
        help="generated scenarios in the simulator and on a real kernel (QEMU oracle), compared and shrunk",
    )
    d.add_argument(
        "--kernel", choices=tuple(ORACLE_KERNELS), help="oracle kernel (default 6.1; --local: from this host's release)"
    )
    d.add_argument(
        "--local",
        action="store_true",
        help="the real runs on this kernel instead of under QEMU, every case on this host's machine (no boot)",
    )
    d.add_argument("--out", metavar="DIR", help="the campaign directory (created, or resumed when it has one)")
    d.add_argument("--cases", type=int, default=100, metavar="N", help="generated cases in all (default 100)")
    d.add_argument("--seed", type=int, default=1, metavar="S", help="the first batch's seed (default 1)")
    d.add_argument("--budget", metavar="DURATION", help="stop starting guest boots after this much wall time (30m, 2h)")
    d.add_argument("--no-shrink", action="store_true", help="do not shrink the disagreements")
    d.add_argument(
        "--groups",
        action="store_true",
        help="put each case's tasks in cgroups drawn for it (weights, nesting, cpu.idle, cpu.max)",
    )
    d.add_argument(
        "--sim-only",
        action="store_true",
        help="no guest: generate the cases and audit the simulator's wasted CPU alone (a table on stdout)",
    )
    d.add_argument("--rejudge", action="store_true", help="judge the campaign again from its kept real reports")
    d.add_argument("--quiet", "-q", action="store_true", help="no progress lines")

    sw = sub.add_parser("sweep", help="a scenario over the cross product of axes and seeds, to Parquet, resumable")
    sw.add_argument("spec", help="the sweep file (TOML with a [sweep] table)")
    sw.add_argument("--out", metavar="DIR", help="results directory (default: the spec's sweep.out)")
    sw.add_argument("--jobs", "-j", type=int, metavar="N", help="runs at once on the local backend (default: all CPUs)")
    sw.add_argument(
        "--backend", choices=("processes", "threads", "dask"), default="processes",
        help="where runs go: local worker processes (the default: the faster here), threads, a Dask cluster",
    )  # fmt: skip
    sw.add_argument("--scheduler", metavar="ADDR", help="the Dask scheduler (--backend dask): tcp://host:8786")
    sw.add_argument("--retry-failed", action="store_true", help="run again the points whose runs failed")
    sw.add_argument("--quiet", "-q", action="store_true", help="no progress and no summary")

    ab = sub.add_parser("abtest", help="two kernel configurations over a generated population of scenarios")
    ab.add_argument("--a", action="append", metavar="KEY=VALUE", help="configuration A (repeatable)")
    ab.add_argument("--b", action="append", metavar="KEY=VALUE", help="configuration B (repeatable)")
    ab.add_argument(
        "--scenarios", type=int, default=200, metavar="N", help="generated scenarios, 1 to 100000 (default 200)"
    )
    ab.add_argument(
        "--repeats", type=int, default=5, metavar="N", help="seeds per scenario and side, 2 to 1000 (default 5)"
    )
    ab.add_argument(
        "--scenario",
        action="append",
        metavar="FILE",
        help="judge the change on this scenario (repeatable; an imported trace's, say) instead of a generated "
        "population: --scenarios, --seed, --version and --duration are then the file's own",
    )
    ab.add_argument("--seed", type=int, default=1, metavar="S", help="the population's seed, 0 to 2**64-1 (default 1)")
    ab.add_argument("--version", default="6.1", help="kernel.version of every scenario (default 6.1)")
    ab.add_argument("--duration", default="1s", help="measure.duration of every scenario (default 1s)")
    ab.add_argument(
        "--alpha", type=float, default=0.05, help="false discovery rate, strictly between 0 and 1 (default 0.05)"
    )
    ab.add_argument("--jobs", "-j", type=int, metavar="N", help="worker processes, 1 to 1024 (default: all CPUs)")
    ab.add_argument("--out", required=True, metavar="DIR", help="scenarios/ and abtest.json go here")
    ab.add_argument("--html", metavar="DIR", help="also write DIR/index.html: the effects' distribution")
    ab.add_argument("--top", type=int, default=30, metavar="N", help="changes printed, at least 1 (default 30)")

    ex = sub.add_parser("export-rtapp", help="write a scenario's workload as rt-app JSON (what rt-app 1.0 runs)")
    ex.add_argument("scenario", help="bundled name or .toml path")
    ex.add_argument("--out", "-o", metavar="FILE", help="write it here (default stdout)")
    ex.add_argument(
        "--target", choices=("1.0", "head"), default="1.0", help="rt-app 1.0 (Debian's; the default) or HEAD"
    )
    ex.add_argument(
        "--calibration",
        default="CPU0",
        metavar="CPUn|NS",
        help="rt-app's global.calibration: CPUn, the CPU to measure on at start (default CPU0), "
        "or a positive integer of ns per loop",
    )

    im = sub.add_parser(
        "import",
        help="a captured trace (ftrace text, trace.dat, perf.data, perf script, Perfetto) as a scenario replaying it",
    )
    im.add_argument("trace", help="the trace file")
    im.add_argument("--out", "-o", metavar="FILE", help="write the scenario here (default stdout)")
    im.add_argument(
        "--kernel",
        metavar="VERSION",
        help="the replay's kernel.version (default: the release a `schedlab capture` trace names, else 6.18)",
    )
    im.add_argument("--machine", metavar="PRESET", help="a machine preset (default: one socket of the trace's CPUs)")
    im.add_argument(
        "--mode",
        choices=("exact", "model"),
        default="exact",
        help="exact: the recorded bursts and blocks, in order; model: each task a loop of bursts and sleeps "
        "drawn from distributions fitted to its own, its waits and signals in the trace's order",
    )
    im.add_argument("--no-kthreads", action="store_true", help="leave the trace's kernel threads out of the replay")
    im.add_argument(
        "--host", action="store_true", help="recorded on this machine: take its preemption model and cpuidle driver"
    )
    im.add_argument("--check", action="store_true", help="simulate the replay and compare it with the trace")
    im.add_argument("--seed", type=int, default=1, help="the replay's seed for --check (default 1)")
    im.add_argument("--json", metavar="FILE", help="--check's rows as JSON")
    im.add_argument("--quiet", "-q", action="store_true", help="no summary, no table")

    cp = sub.add_parser(
        "capture", help="record the sched and interrupt tracepoints `schedlab import` reads (tracefs; needs root)"
    )
    cp.add_argument("--out", "-o", required=True, metavar="FILE", help="the trace (ftrace text)")
    cp.add_argument("--duration", type=float, metavar="SECONDS", help="record the whole machine this long")
    cp.add_argument("--buffer-kb", type=int, default=65536, metavar="KIB", help="ring buffer per CPU (default 65536)")
    cp.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- COMMAND", help="record while COMMAND [ARGS...] runs")

    pl = sub.add_parser(
        "plot",
        help="pictures (matplotlib): a run report's CPU heat map and wakeup CDF, a trace's timeline, "
        "an experiment's curves",
    )
    pl.add_argument("inputs", nargs="+", metavar="INPUT", help="run --json reports, --trace files, reproduce --json")
    pl.add_argument("--out", required=True, metavar="DIR", help="directory for the pictures (created)")
    pl.add_argument("--format", choices=("png", "svg"), default="png", help="picture format (default png)")
    pl.add_argument("--window", metavar="[START:]END", help="a trace's timeline window (default: its first 50 ms)")
    pl.add_argument("--quiet", "-q", action="store_true", help="do not print the paths written")

    _add_qemu(sub)
    return p


def _add_qemu(sub: Any) -> None:
    """``schedlab qemu args|probe|run``: the QEMU oracle by hand (``python -m
    schedlab.qemu`` is the same command)."""
    q = sub.add_parser("qemu", help="the QEMU oracle: a machine's QEMU options, its topology in a guest, a guest run")
    qsub = q.add_subparsers(dest="qemu_command", metavar="COMMAND")
    qsub.required = True
    a = qsub.add_parser("args", help="print the QEMU options for a machine")
    a.add_argument("machine", help="preset name or scenario")
    pr = qsub.add_parser("probe", help="boot a machine and print the topology the guest sees")
    pr.add_argument("machine", help="preset name or scenario")
    ru = qsub.add_parser("run", help="boot a scenario's machine and run the workload runner in it")
    ru.add_argument("scenario", help="bundled scenario name or path to a .toml file")
    ru.add_argument("--runner", required=True, help="the static runner executable")
    ru.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE",
        help="override a scenario key (repeatable), as `schedlab run --set`: the guest runs the scenario the core "
        "resolved",
    )  # fmt: skip
    for sp in (pr, ru):
        sp.add_argument("--kernel", choices=sorted(ORACLE_KERNELS), help="oracle kernel (probe: 6.1)")
        sp.add_argument("--shift", type=int, help="-icount shift (probe: 3, run: 0)")
        sp.add_argument("--timeout", type=float, help="wall seconds (probe: 300, run: 1800)")
    ru.add_argument("--keep", metavar="DIR", help="keep initrd.gz, console.log and cmdline in DIR")


def main(argv: Sequence[str] | None = None) -> int:
    try:
        words = sys.argv[1:] if argv is None else list(argv)
        # The command is the first word that is not an option; anything
        # else (--help, --version, a typo) gets the whole parser.
        first = next((w for w in words if not w.startswith("-")), None)
        args = build_parser(first if first in _COMMANDS else None).parse_args(words)
        handler = _COMMANDS[args.command]
        return handler(args)
    except SchedlabError as e:
        _flush_quietly()
        print(f"schedlab: error: {e}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("schedlab: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `schedlab run ... | head`: the reader left; not an error of ours.
        # Point stdout at /dev/null so the interpreter's final flush is quiet.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK


def _flush_quietly() -> None:
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()


def _overrides(args: argparse.Namespace) -> list[Override]:
    return [parse_set_arg(s) for s in args.set]


def _input(name: str, machine: str | None = None, kernel: str | None = None) -> tuple[Path, ScenarioInput]:
    """(path, what the core is handed); ``-`` reads the scenario from stdin;
    an rt-app ``.json`` runs on ``machine`` (the core imports it)."""
    if name == "-":
        from schedlab.scenarios import read_stdin

        return Path("stdin.toml"), ScenarioInput(read_stdin(), "<stdin>")
    path = resolve(name)
    return path, scenario_input(path, machine=machine, kernel=kernel)


def _load(name: str) -> tuple[Path, str, str]:
    """(path, text, source) of a scenario (TOML); ``-`` reads it from stdin."""
    path, inp = _input(name)
    return path, inp.text, inp.source


def _warn(report: Mapping[str, Any]) -> None:
    """The report's warnings on stderr, as `schedlab: warning: ...` lines."""
    for w in report.get("warnings") or []:
        print(f"schedlab: warning: {report.get('source', '')}: {w}", file=sys.stderr)


def _cmd_run(args: argparse.Namespace) -> int:
    if not 0 <= args.seed <= SEED_MAX:
        raise UsageError("SL001", f"--seed {args.seed}: accepted: an integer from 0 to {SEED_MAX}")
    overrides = _overrides(args)
    if args.samples or args.html:
        overrides.append(("measure.samples", "true"))
    # Every output file is checked before the simulation, not after it.
    for flag, dest in (
        ("--json", args.json),
        ("--trace", args.trace),
        ("--perfetto", args.perfetto),
        ("--schedstat-file", args.schedstat_file),
    ):
        if dest is not None and not (flag == "--json" and dest == "-"):
            check_output_path(dest, flag)
    _check_html_dir(args.html)
    if args.scenario == "-" and (args.machine or args.kernel):
        # As for a scenario file: the flags are an rt-app workload's, which
        # names no machine or kernel of its own.
        raise UsageError(
            "SL001",
            "-: --machine and --kernel are for an rt-app .json workload file; accepted for a scenario on stdin: "
            "--set machine.preset=NAME and --set kernel.version=VERSION",
        )
    _, inp = _input(args.scenario, args.machine, args.kernel)
    text, source = inp.text, inp.source
    overrides = [*inp.overrides, *overrides]
    from schedlab.progress import watch_run

    report = watch_run(
        lambda p: native.run(
            text,
            source,
            args.seed,
            overrides,
            args.check,
            args.trace,
            args.perfetto,
            strict=args.strict,
            progress=p,
            rtapp=inp.rtapp,
        ),
        Path(source).stem,
        quiet=args.quiet or args.json == "-",
    )
    _warn(report)
    if args.json:
        from schedlab.report import write_json

        write_json(args.json, report)
    if args.schedstat_file:
        from schedlab.outputs import write_text
        from schedlab.report import proc_schedstat

        write_text(args.schedstat_file, proc_schedstat(report), flag="--schedstat-file")
    if args.html:
        from schedlab.html import command_line, run_page
        from schedlab.report import format_run_report

        page = run_page(Path(args.html), report, format_run_report(report), text, command_line(), args.trace)
        if not args.quiet and args.json != "-":
            print(f"schedlab: wrote {page}", file=sys.stderr)
    if args.json == "-":
        return EXIT_OK
    if args.rt_migrate_test:
        from schedlab.report import format_rt_migrate_test

        print(format_rt_migrate_test(report))
        r = report.get("rt_migrate_test")
        # The tool's exit status: 255 (-1) when a checked run failed.
        return 255 if r and r["check"] and r["failed_runs"] else EXIT_OK
    if not args.quiet:
        from schedlab.report import format_run_report

        print(format_run_report(report, samples=args.samples, schedstat=args.schedstat))
    if args.latency:
        from schedlab.report import format_perf_sched_latency

        print()
        print(format_perf_sched_latency(report, histogram=args.histogram))
    if args.turbostat:
        from schedlab.turbostat import format_turbostat

        print()
        print(format_turbostat(report))
    return EXIT_OK


def _cmd_check(args: argparse.Namespace) -> int:
    overrides = _overrides(args)
    path, text, source = _load(args.scenario)
    summary = native.check(text, source, overrides)
    for note in summary.get("notes") or []:
        print(f"schedlab: warning: {source}: {note}", file=sys.stderr)
    machine = summary.get("machine") or {}
    kernel = summary.get("kernel") or {}
    print(
        f"{source}: ok: scenario {summary.get('name', path.stem)}: machine {machine.get('name', '?')} "
        f"({machine.get('nr_cpus', '?')} CPUs), kernel {kernel.get('version', '?')}, "
        f"{summary.get('tasks', '?')} task group(s)"
    )
    from schedlab.experiment import Experiment

    exp = Experiment.read(text, source, path.stem)
    if exp is not None:
        for quick in (False, True):
            base = overrides + (exp.quick_literals if quick else [])
            for v in exp.variants:
                native.check(text, source, base + v.literals)
            for d in exp.derives:
                native.check(text, source, [*base, (d.key, toml_literal(f"{d.low_ms}ms"))])
        print(
            f"{source}: ok: experiment {exp.name}: {len(exp.variants)} variant(s), "
            f"{len(exp.metrics)} metric(s), {len(exp.derives)} derived value(s), {len(exp.bands)} band(s)"
        )
    return EXIT_OK


def _cmd_list(args: argparse.Namespace) -> int:
    root = scenarios_dir()
    files = bundled(root)
    if not files:
        print(f"no bundled scenarios in {root} (set SCHEDLAB_SCENARIOS to a scenarios directory)")
        return EXIT_OK
    width = max(len(f.name) for f in files)
    plain = [f for f in files if not f.is_experiment]
    exps = [f for f in files if f.is_experiment]

    def show(out: TextIO, items: Sequence[Any], heading: str) -> None:
        if not items:
            return
        print(heading, file=out)
        for f in items:
            title = f"(unreadable: {f.error})" if f.error else f.title
            alias = f"  [experiment {f.experiment}]" if f.experiment and f.experiment != f.name else ""
            print(f"  {f.name:<{width}}  {title}{alias}", file=out)

    print(f"bundled scenarios in {root}")
    show(sys.stdout, plain, "Scenarios (schedlab run NAME):")
    show(sys.stdout, exps, "Experiments (schedlab reproduce NAME):")
    return EXIT_OK


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from schedlab.experiment import Experiment, default_jobs
    from schedlab.report import format_experiment, write_json

    if args.repeat is not None and args.repeat < 1:
        raise UsageError("SL001", f"--repeat {args.repeat}: accepted: an integer >= 1")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("SL001", f"--jobs {args.jobs}: accepted: an integer >= 1")
    extra = _overrides(args)
    path, text, source = _load(args.name)
    exp = Experiment.read(text, source, path.stem)
    if exp is None:
        raise UsageError(
            "SL001",
            f"{source}: has no [experiment] table, so there is nothing to reproduce; "
            f"accepted: an experiment (see `schedlab list`), or run it with `schedlab run {args.name}`",
        )

    if args.json not in (None, "-"):
        check_output_path(args.json, "--json")
    _check_html_dir(args.html)

    def runner(seed: int, overrides: Sequence[Override]) -> Mapping[str, Any]:
        report = native.run(text, source, seed, [*extra, *overrides], False, strict=args.strict)
        _warn(report)
        return report

    from schedlab.progress import Steps

    with Steps(exp.name, exp.nr_runs(quick=args.quick, repeat=args.repeat), quiet=args.quiet) as steps:
        result = exp.run(
            runner,
            quick=args.quick,
            repeat=args.repeat,
            jobs=args.jobs or default_jobs(),
            progress=steps.note,
            step=steps.done,
        )
    result["schedlab"] = __version__
    if extra:
        result["set"] = dict(extra)
    if args.json:
        write_json(args.json, result)
    if args.html:
        from schedlab.html import command_line, experiment_page

        page = experiment_page(Path(args.html), result, text, command_line())
        if not args.quiet:
            print(f"schedlab: wrote {page}", file=sys.stderr)
    if not args.quiet and args.json != "-":
        print(format_experiment(result))
    return EXIT_OK if all(b["ok"] for b in result["bands"]) else EXIT_BANDS_OUT


def _cmd_version(args: argparse.Namespace) -> int:
    print(f"schedlab {__version__}")
    try:
        print(f"schedlab._native {native.version()}")
    except SchedlabError as e:
        print(f"schedlab._native: not available: {e.message}")
    return EXIT_OK


def _cmd_qemu(args: argparse.Namespace) -> int:
    from schedlab import qemu

    commands = {"args": qemu.cmd_args, "probe": qemu.cmd_probe, "run": qemu.cmd_run}
    return commands[args.qemu_command](args)


def _cmd_real(args: argparse.Namespace) -> int:
    from schedlab import real

    return real.cmd_real(args)


def _cmd_diverge(args: argparse.Namespace) -> int:
    from schedlab import diverge

    return diverge.cmd_diverge(args)


def _cmd_calibrate(args: argparse.Namespace) -> int:
    from schedlab import calibrate

    return calibrate.cmd_calibrate(args)


def _cmd_compare(args: argparse.Namespace) -> int:
    from schedlab import real

    return real.cmd_compare(args)


def _cmd_validate(args: argparse.Namespace) -> int:
    from schedlab import validation

    return validation.cmd_validate(args)


def _cmd_difftest(args: argparse.Namespace) -> int:
    from schedlab import difftest

    return difftest.cmd_difftest(args)


def _check_html_dir(d: str | None) -> None:
    """--html DIR is created (or must be a writable directory) before anything runs."""
    if d is None:
        return
    try:
        Path(d).mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError("SL001", f"--html {d}: cannot create the directory: {e.strerror or e}") from None
    if not os.access(d, os.W_OK):
        raise UsageError("SL001", f"--html {d}: not writable; accepted: a writable directory")


def _cmd_export_rtapp(args: argparse.Namespace) -> int:
    import json

    from schedlab import rtapp

    # Every option is checked before any work.
    cal = rtapp.check_calibration(args.calibration, "--calibration")
    if args.out:
        check_output_path(args.out, "--out")
    path, text, source = _load(args.scenario)
    native.check(text, source, [])  # a scenario the simulator refuses is not exported
    doc = rtapp.export(path, read_text(path), target=args.target, calibration=cal)
    out = json.dumps(doc, indent=2) + "\n"
    if args.out:
        from schedlab.outputs import write_text

        write_text(args.out, out, flag="--out")
        return EXIT_OK
    try:
        sys.stdout.write(out)
        sys.stdout.flush()
    except BrokenPipeError:
        raise  # the reader left: main() exits quietly
    except OSError as e:
        raise UsageError("SL001", f"stdout: cannot write: {e.strerror or e}") from None
    return EXIT_OK


def _cmd_sweep(args: argparse.Namespace) -> int:
    from schedlab import sweep

    return sweep.cmd_sweep(args)


def _cmd_abtest(args: argparse.Namespace) -> int:
    from schedlab import abtest

    return abtest.cmd_abtest(args)


def _cmd_import(args: argparse.Namespace) -> int:
    from schedlab import traceimport

    return traceimport.cmd_import(args)


def _cmd_capture(args: argparse.Namespace) -> int:
    from schedlab import traceimport

    return traceimport.cmd_capture(args)


def _cmd_plot(args: argparse.Namespace) -> int:
    from schedlab import plot

    return plot.cmd_plot(args)


_COMMANDS = {
    "run": _cmd_run,
    "check": _cmd_check,
    "list": _cmd_list,
    "reproduce": _cmd_reproduce,
    "version": _cmd_version,
    "real": _cmd_real,
    "diverge": _cmd_diverge,
    "calibrate": _cmd_calibrate,
    "compare": _cmd_compare,
    "validate": _cmd_validate,
    "difftest": _cmd_difftest,
    "plot": _cmd_plot,
    "sweep": _cmd_sweep,
    "abtest": _cmd_abtest,
    "export-rtapp": _cmd_export_rtapp,
    "import": _cmd_import,
    "capture": _cmd_capture,
    "qemu": _cmd_qemu,
}
