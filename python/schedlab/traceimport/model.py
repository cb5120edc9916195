"""A trace's tasks as fitted models (``--mode model``), not recorded durations.

The exact replay (``replay``) keeps every burst and block as it was; a model
keeps what each task does and draws how long from distributions fitted to
the trace. Each task's recorded program is cut into cycles, one per block:
the CPU it ran since the last block, what it did on the way (signals,
forks, exec), and how the block ended (a wait on another task's signal, or a sleep). Then:

* every burst is drawn from one distribution fitted to all the task's
  bursts, every sleep from one fitted to its sleeps: log-normal (long-tailed,
  as a real task's are) with their mean, so that the task's CPU demand and
  sleep time are the trace's in expectation, and the spread of their
  logarithms (``fit``); a constant where they hardly vary. Bursts before a
  wait and before a sleep are fitted apart; fewer than ``MIN_FIT`` values
  are kept as recorded (nothing to fit), and so is the first cycle, the
  task's start-up (an exec, the first touch of its memory: one long burst
  that would give every burst a long tail);
* who waits for whom is kept: the cycles' order of signals and waits is the
  trace's, so every wait has its signal (a count that only matched on
  average would leave a wakee blocked for good, or running on through
  waits it was meant to sleep in). A run of cycles that repeats a pattern
  of up to ``MAX_PATTERN`` cycles (the same ops: the same signals, the same
  kind of block, fitted durations) is one ``loop``: a ping-pong pair, a
  periodic task or a hog with a timer is a loop of one op line;
* forks, execs and signals come after the burst of their cycle, in their
  order; what the task ran after its last block, and its exit, follow.

``schedlab import --mode model --check`` measures how much the fitting
costs, against the same trace and tolerances as ``exact``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from schedlab.traceimport.replay import END_EVENT, TaskReplay

__all__ = ["MAX_PATTERN", "TaskModel", "fit", "model_task"]

#: The longest pattern of cycles a loop body holds.
MAX_PATTERN = 8
#: The widest log-normal a fit gives (sd about 2.9 times the mean): a wider
#: one's mean rests on draws so rare that a task's few hundred bursts miss
#: them, or hit one (a bimodal task — short bursts, a few long — measured:
#: its replay's CPU 0.2 to 7 times the trace's at sigma 3).
MAX_SIGMA = 1.5
#: Fewer values than this are replayed as recorded, not fitted.
MIN_FIT = 8
#: Below this sigma (of the logarithms: about the coefficient of variation) a fitted duration is a constant.
CONST_CV = 0.05


def _dur(ns: float) -> str:
    """A fitted duration, to the ns below 10 us and to the us above."""
    n = max(0, round(ns))
    if n >= 10_000:
        n = round(n / 1000) * 1000
    if n % 1_000_000 == 0 and n:
        return f"{n // 1_000_000}ms"
    if n % 1000 == 0 and n:
        return f"{n // 1000}us"
    return f"{n}ns"


def fit(xs: list[int]) -> tuple[str, str]:
    """The distribution fitted to durations ``xs`` (ns): its TOML value and a
    few words for the comment. Log-normal: its mean the values' mean (the
    task's demand kept), its shape (sigma) the standard deviation of their
    logarithms (Deviation from a moments fit: one long burst, an exec's or a
    first touch's, does not make every burst's spread huge). A constant
    (the mean) where sigma is under ``CONST_CV`` or there are under three
    values."""
    n = len(xs)
    mean = sum(xs) / n
    logs = [math.log(x) for x in xs if x > 0]
    if n < 3 or mean <= 0 or len(logs) < 3:
        return f'"{_dur(mean)}"', _dur(mean)
    mu = sum(logs) / len(logs)
    sigma = (sum((v - mu) ** 2 for v in logs) / len(logs)) ** 0.5
    if sigma < CONST_CV:
        return f'"{_dur(mean)}"', _dur(mean)
    sd = mean * math.sqrt(math.expm1(min(sigma, MAX_SIGMA) ** 2))
    return f'{{ lognormal = ["{_dur(mean)}", "{_dur(sd)}"] }}', f"mean {_dur(mean)}, sd {_dur(sd)}"


def _fitted(xs: list[int]) -> Callable[[int], str]:
    """A value for each of ``xs``: the fitted distribution's, or with fewer
    than ``MIN_FIT`` values the recorded one (nothing to fit)."""
    if len(xs) < MIN_FIT or not any(xs):
        return lambda x: f'"{_dur(x)}"'
    v = fit(xs)[0]
    return lambda x: v


def _about(xs: list[int]) -> str:
    return "as recorded" if len(xs) < MIN_FIT else fit(xs)[1]


@dataclass
class _Cycle:
    run: int
    acts: list[str]  # its signals, forks and exec, in order, after the burst
    wait: str | None  # the event a signal ended the block with
    sleep: int  # else how long it slept


@dataclass
class TaskModel:
    """A task's fitted program: TOML op texts, and what the comment says."""

    ops: list[str]
    about: list[str] = field(default_factory=list)


def _cycles(t: TaskReplay) -> tuple[list[_Cycle], int, list[str], bool]:
    """The task's cycles, then what it ran and did after the last block, and
    whether it exited."""
    cycles: list[_Cycle] = []
    run, acts = 0, []
    exited = False
    for op, arg in t.ops:
        if op == "run":
            run += arg
        elif op in ("signal", "fork"):
            acts.append(f'{{ {op} = "{arg}" }}')
        elif op == "exec":
            acts.append("{ exec = true }")
        elif op == "wait" and arg != END_EVENT:
            cycles.append(_Cycle(run, acts, arg, 0))
            run, acts = 0, []
        elif op == "sleep":
            cycles.append(_Cycle(run, acts, None, arg))
            run, acts = 0, []
        elif op == "exit":
            exited = True
    return cycles, run, acts, exited


def _runs(sigs: list[tuple[str, ...]]) -> list[tuple[int, int, int]]:
    """The cycles as (start, period, repeats): greedily, at each cycle the
    period (1 .. MAX_PATTERN) whose repeats cover the most cycles."""
    out: list[tuple[int, int, int]] = []
    i, n = 0, len(sigs)
    while i < n:
        best_p, best_reps = 1, 1
        for p in range(1, min(MAX_PATTERN, (n - i) // 2) + 1):
            reps = 1
            while i + (reps + 1) * p <= n and sigs[i + reps * p : i + (reps + 1) * p] == sigs[i : i + p]:
                reps += 1
            if reps >= 2 and reps * p > best_reps * best_p:
                best_p, best_reps = p, reps
        out.append((i, best_p, best_reps))
        i += best_p * best_reps
    return out


def model_task(t: TaskReplay) -> TaskModel:
    """The fitted program of replayed task ``t`` (module docstring)."""
    cycles, tail_run, tail_acts, exited = _cycles(t)
    ops: list[str] = []
    about: list[str] = []
    if cycles:
        # One fit per kind of block: a task's bursts before a wait (a pipe's
        # reader) and before a sleep (its timer's) are told apart. The first
        # cycle is the task's start-up (an exec, the first touch of its
        # memory): replayed as recorded, not fitted with the rest.
        steady = cycles[1:]
        kinds = {"wait": [c for c in steady if c.wait is not None], "sleep": [c for c in steady if c.wait is None]}
        run_v = {k: _fitted([c.run for c in cs]) for k, cs in kinds.items() if cs}
        sleep_v = _fitted([c.sleep for c in kinds["sleep"]])

        def cycle_ops(c: _Cycle, recorded: bool) -> tuple[str, ...]:
            k = "wait" if c.wait is not None else "sleep"
            run = f'"{_dur(c.run)}"' if recorded else run_v[k](c.run)
            sleep = f'"{_dur(c.sleep)}"' if recorded else sleep_v(c.sleep)
            block = f'{{ wait = "{c.wait}" }}' if c.wait is not None else f"{{ sleep = {sleep} }}"
            burst = () if run == '"0ns"' else (f"{{ run = {run} }}",)  # a block right after a block
            return (*burst, *c.acts, block)

        texts = [cycle_ops(c, i == 0) for i, c in enumerate(cycles)]
        runs = _runs(texts)  # a loop where the cycles' ops are the same text (fitted, not recorded)
        for start, period, reps in runs:
            body = [o for c in texts[start : start + period] for o in c]
            if reps == 1:
                ops += body
            else:
                ops.append(f"{{ loop = {{ count = {reps}, body = [ {', '.join(body)} ] }} }}")
        about.append(f"{len(cycles)} cycles in {len(runs)} runs")
        for k, cs in kinds.items():
            if cs:
                about.append(f"{len(cs)} {k}s after the first: bursts before them {_about([c.run for c in cs])}")
        if kinds["sleep"]:
            about.append(f"sleeps {_about([c.sleep for c in kinds['sleep']])}")
    if tail_run:
        ops.append(f'{{ run = "{_dur(tail_run)}" }}')
    ops += tail_acts
    ops.append("{ exit = true }" if exited else f'{{ wait = "{END_EVENT}" }}')
    return TaskModel(ops, about)
