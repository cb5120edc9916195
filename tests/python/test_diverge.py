"""schedlab diverge: the decisions counted from a trace (both sides go
through this one function; the real side's recording needs root and
tracefs, which the command checks)."""

from __future__ import annotations

from schedlab.diverge import (
    background,
    decisions,
    diverge_rows,
    format_background,
    format_rows,
    kind_of,
    placement_rows,
)
from schedlab.frames import parse_ftrace


def _line(comm: str, pid: int, cpu: int, ts: float, event: str, body: str) -> str:
    return f"{comm:>16}-{pid:<7} [{cpu:03d}] d..2. {ts:12.6f}: {event}: {body}"


def _sw(cpu: int, ts: float, prev: tuple[str, int], state: str, nxt: tuple[str, int]) -> str:
    return _line(
        prev[0], prev[1], cpu, ts, "sched_switch",
        f"prev_comm={prev[0]} prev_pid={prev[1]} prev_prio=120 prev_state={state} ==> "
        f"next_comm={nxt[0]} next_pid={nxt[1]} next_prio=120",
    )  # fmt: skip


def _wake(cpu: int, ts: float, who: tuple[str, int], target: int) -> str:
    return _line("<idle>", 0, cpu, ts, "sched_wakeup", f"comm={who[0]} pid={who[1]} prio=120 target_cpu={target:03d}")


HOG, TICK, IDLE = ("hog", 10), ("tick", 11), ("swapper/0", 0)


def test_preemption_at_wakeup_waits_placement_and_slices_are_counted() -> None:
    lines = [
        _sw(0, 1.000000, IDLE, "R", HOG),
        _sw(0, 1.001000, HOG, "R", TICK),  # the tick task ran on CPU 0 first
        _sw(0, 1.001500, TICK, "S", HOG),
        # A wakeup onto the busy CPU 0, switched in at the same instant: a
        # preemption at wakeup (the switch comes after the wakeup).
        _wake(0, 1.006500, TICK, 0),
        _sw(0, 1.006500, HOG, "R", TICK),
        _sw(0, 1.007000, TICK, "S", HOG),
        # One that waits 3 ms for the tick.
        _wake(0, 1.012000, TICK, 0),
        _sw(0, 1.015000, HOG, "R", TICK),
        _sw(0, 1.015500, TICK, "S", HOG),
        # Woken on CPU 1 (idle) after a migration there.
        _line("<idle>", 0, 1, 1.020000, "sched_migrate_task", "comm=tick pid=11 prio=120 orig_cpu=0 dest_cpu=1"),
        _wake(0, 1.020000, TICK, 1),  # issued on CPU 0
        _sw(1, 1.020010, ("swapper/1", 0), "R", TICK),
        _sw(1, 1.020500, TICK, "S", ("swapper/1", 0)),
        _sw(0, 1.030000, HOG, "R", HOG),
    ]
    d = decisions(parse_ftrace(lines), {"hog", "tick"}, 0.0)
    assert d.wakeups == 3
    assert d.placement == {"prev": 2, "other": 1}
    assert (d.contended, d.preempted) == (2, 1)
    assert [round(w) for w in d.contended_wait_us] == [3000]
    assert sorted(round(w) for w in d.wait_us) == [0, 10, 3000]
    assert (d.migrations_wakeup, d.migrations_other) == (1, 0)
    # The hog was switched out runnable after 1 ms, 5 ms, 8 ms and 14.5 ms.
    assert sorted(round(s) for s in d.slices_us) == [1000, 5000, 8000, 14500]
    m = d.metrics()
    assert m["of those, preempting at once %"] == 50.0 and m["wakeup on prev CPU %"] == 200 / 3


def test_rows_put_the_biggest_difference_first() -> None:
    a = decisions(parse_ftrace([_sw(0, 1.0, IDLE, "R", HOG), _sw(0, 2.0, HOG, "R", HOG)]), {"hog"}, 0.0)
    rows = diverge_rows(a, a)
    assert all(r[3] == 0.0 for r in rows)
    assert format_rows(rows).splitlines()[0].split() == ["decision", "sim", "real", "differs", "by"]


def test_placement_names_the_tasks_that_ran_elsewhere() -> None:
    here = [_sw(0, 1.0, IDLE, "R", HOG), _sw(0, 1.5, HOG, "R", TICK), _sw(0, 2.0, TICK, "S", HOG)]
    there = [_sw(0, 1.0, IDLE, "R", HOG), _sw(1, 1.5, ("swapper/1", 0), "R", TICK), _sw(1, 2.0, TICK, "S", IDLE)]
    a = decisions(parse_ftrace(here), {"hog", "tick"}, 0.0)
    b = decisions(parse_ftrace(there), {"hog", "tick"}, 0.0)
    assert a.ran_on == {"hog": {0: 2}, "tick": {0: 1}}
    assert placement_rows(a, b) == ["  tick: sim CPU0 100%; real CPU1 100%"]


def test_background_lists_the_threads_outside_the_scenario_by_kind() -> None:
    runner, kw3, kw1 = ("runner", 5), ("kworker/1:1", 40), ("kworker/1:2H", 41)
    lines = [
        _sw(0, 1.000000, IDLE, "R", HOG),
        _sw(1, 1.000000, ("swapper/1", 0), "R", TICK),
        # The runner's main thread takes CPU 0 from the hog for 100 ms ...
        _sw(0, 1.500000, HOG, "R", runner).replace("next_prio=120", "next_prio=0"),
        _sw(0, 1.600000, runner, "S", HOG),
        # ... and two kworkers run on CPU 1 after the tick task sleeps.
        _sw(1, 1.700000, TICK, "S", kw3),
        _sw(1, 1.700010, kw3, "S", kw1),
        _sw(1, 1.700030, kw1, "S", ("swapper/1", 0)),
        _sw(1, 1.800000, ("swapper/1", 0), "R", TICK),
        _sw(0, 2.000000, HOG, "R", HOG),
    ]
    seconds, kinds, idle = background(parse_ftrace(lines), {"hog", "tick"}, 0.0)
    assert seconds == 1.0
    assert kind_of("kworker/1:2H") == "kworker" and kind_of("runner") == "runner"
    assert set(kinds) == {"runner", "kworker"}
    r, k = kinds["runner"], kinds["kworker"]
    assert (r.runs, r.prio, r.over_scenario, [round(x) for x in r.run_us]) == (1, 0, 1, [100000])
    assert (k.runs, k.over_scenario, sorted(round(x) for x in k.run_us), k.cpus) == (2, 0, [10, 20], {1})
    assert idle == {1: 1}
    text = format_background("real", seconds, kinds, idle)
    assert "runner" in text.splitlines()[2] and "CPU1 1.0" in text  # the biggest CPU share first
