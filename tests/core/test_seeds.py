"""Reproductions are tests: each bundled experiment (the seeds' and the other
published results') must land inside its acceptance bands (taken from the
published numbers) in --quick mode.

The bands live in the experiment file; this test fails if any is OUT, so a
model change that moves a reproduction out of its band shows up here."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.native

EXPERIMENTS = [
    "ktask-nice",
    "ktask-vfio",
    "sched-idle",
    "rt-migrate",
    "kworker-stack",
    "kswapd-threads",
    "kswapd-cost",
    "kswapd-zswap",
    "gitsource-invariance",
    "dirty-throttle",
    "workingset-transition",
    "fair-server-osnoise",
    "grub-reclaim",
    "fibtest-slice-expiry",
]

#: Bands the model is known to miss, with the reason (also in the closing
#: notes). The test insists they stay OUT, so the day the model reaches one
#: this list must be updated rather than silently carrying a stale excuse.
KNOWN_OUT = {
    "fibtest-slice-expiry": {
        "64 CPUs, affected: 88 ms of the 500 ms quota": (
            "171 ms, the mean of 8 boots at HZ 250 (80 at HZ 1000, variant before-hz1000; the source does not "
            "give HZ). Each refill repays the fast thread's overrun and unthrottles it with 1 ns; the slow "
            "threads take the rest of the pool within microseconds, so the fast thread runs from the refill "
            "to its next tick: kernel.tick_next_period 0.5 ms gives 79 ms, 2 ms 148, 3.5 ms 220. The "
            "published run is one boot; 88 ms is a refill 0.7 ms before a tick at HZ 250"
        ),
        "64 CPUs, the fast thread alone: 501 ms": (
            "512 ms: the window holds 51 partial periods, each begun with a full pool (the first one full "
            "from the quota's write), and the last tick's overrun; runfibtest's shell commands run in the "
            "cgroup before fibtest, drawing on the first period's pool, which the scenario does not model"
        ),
        "8 CPUs, affected: 380 ms": (
            "264 ms at HZ 250 (299 at HZ 1000): as on 64 CPUs, the 7 slow threads, throttled at the end of a "
            "period and released together by the refill, take the pool before the fast thread's next tick; "
            "whether the real ones drift apart (their wakes are not locked to the refill) is not known"
        ),
    },
    "sched-idle": {
        "baseline per-second %idle fluctuates (max - min, points)": (
            "the model sits near a fixed point (3 of 16 CPUs idle nearly every second); a soaker comes back "
            "only when a kworker queued for a tick makes another socket outweigh the nice-0 task's, about "
            "once per 25 s with vmstat_update's kworkers as the only background activity"
        ),
    },
    "kworker-stack": {
        "numa48, 1 client: the patch cuts the time per load file by 30-60 %": (
            "20 %: a migration costs the model about 150 us (the seed's loss implies about 350 us). The model's "
            "client ping-pongs between two CPUs of the LLC (recent_used_cpu), which stay warm (Bzy_MHz 1316 "
            "against 1597 stacked), where the seed saw it round-robin over all 24; and every fsync leaves the "
            "CPU idle for about 550 us (C6 exits at intel_idle's declared 133 us, which is the package C6 "
            "figure), so the stacked CPU is only 44 % busy and intel_pstate keeps it near 1.6 GHz"
        ),
        "numa48: the gain shrinks as clients fill the machine (largest rise from one count to the next, points)": (
            "the gain rises by 5 points from 16 to 32 clients: see the next band"
        ),
        "numa48, 32 clients and more: within 5 %": (
            "4.4-5.8 %: from 32 clients the drive is the bottleneck, every CPU is about 2 % busy and intel_pstate "
            "keeps all of them at 1.2 GHz, so the CPU work between two non-queued flushes (softirq, requeue "
            "work, xlog_ioend_work) runs 2.6 times slower than at turbo, and the patch shortens that chain; "
            "without CPU frequency the pair differs by 1.5 % at 64 clients"
        ),
        "1 client: the gain on numa48 is at least 3x the gain on uma8": (
            "about 2x: numa48's gain is too small (see above)"
        ),
    },
    "gitsource-invariance": {
        "uma8: intel_pstate with HWP cuts the time by 0-20 % (published 7.79 %)": (
            "76 %: the model's HWP runs a core at its turbo bin the moment it leaves idle (3.9 GHz); the "
            "hardware's own ramp after an idle exit, which keeps the real chain near the baseline, is not modelled"
        ),
        "numa48: intel_pstate is within -5..+15 % of the baseline (published 3 %)": (
            "28 %: exec's find_idlest_group_cpu() returns the idle CPU in the shallowest state, most recently "
            "idled, so the chain comes back to a few CPUs (two 15-28 % busy) whose 10 ms samples raise their "
            "requests to 2.1-3.1 GHz, held across idle; the real chain left no CPU that busy. Not modelled: "
            "git's own subprocesses and pipelines, which give the real chain more CPUs to hop over"
        ),
    },
    "dirty-throttle": {
        "1000 dd: ~100 ms pauses (50-150 ms)": (
            "200 ms: on a 60 MiB/s disk a writer's share is ~15 pages a second, below DIRTY_POLL_THRESH (32) "
            "per wb_min_pause's 104 ms target, so the kernel's own rule stretches the pause to max_pause; "
            "the ~100 ms needs ~1.3 GB/s for 1000 writers"
        ),
    },
    "kswapd-threads": {
        "Test #3: direct reclaims from 22 readers on (per second)": (
            "0 at 22 readers: kswapd is 100 % busy but keeps up (P3: 489 direct reclaims in 5 minutes, 1.6/s); "
            "from 28 readers on the model has them (9, then 37-79 per second against P3's 2-172)"
        ),
        "Test #3: one kswapd per node plateaus within 15 % of 17.5 GB/s from 40 readers (KiB/s)": (
            "24 GB/s at 40 readers falling to 21 at 90 (P3: 17.3-18.0): the LRU lock and zone->lock bring "
            "the curve down once direct reclaim grows, but the model's readers are too fast at mid counts — "
            "P3's Test #2 readers need 90 readers for 25 GB/s, the model's 34 — and P3's readers at 90 spend "
            "about 8 ms of every 4 MiB read neither on a CPU nor waiting for the drive, which the model does not "
            "give them: not the slow path's modelled waits (too_many_isolated and drain_all_pages never fire at 40 "
            "or 90 readers); readahead's __GFP_NORETRY failures and memory latency under load are not modelled"
        ),
        "Test #4: four threads' peak throughput is 1.25-1.6x one thread's peak": (
            "1.07-1.08: four threads reach 25.8 GB/s as P3's 25.1, but one thread's peak is too high (see above)"
        ),
    },
}


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_reproduction_lands_in_its_bands(name: str, tmp_path: Path) -> None:
    out = tmp_path / f"{name}.json"
    proc = subprocess.run(
        [sys.executable, "-m", "schedlab", "reproduce", name, "--quick", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.exists(), proc.stderr
    data = json.loads(out.read_text())
    assert data["experiment"] == name
    assert data["bands"], "an experiment without bands proves nothing"
    known = KNOWN_OUT.get(name, {})
    bad = [b for b in data["bands"] if not b["ok"] and b["name"] not in known]
    why = "; ".join(f"{b['name']}: {b['value']} not in [{b['low']}, {b['high']}]" for b in bad)
    assert not bad, "bands OUT: " + why
    for b in data["bands"]:
        if b["name"] in known:
            assert not b["ok"], f"{name}: {b['name']!r} is now inside its band: remove it from KNOWN_OUT"
    assert proc.returncode == (1 if known else 0), proc.stderr


def test_ktask_nice_numbers_follow_the_mechanism(tmp_path: Path) -> None:
    """Beyond the bands: MAX_NICE helpers leave stress-ng within a few percent
    of alone, nice-0 helpers take close to their fair share (8/15 of the CPUs
    for 15 equal tasks), and the derived ktask work is reported."""
    out = tmp_path / "k.json"
    subprocess.run(
        [sys.executable, "-m", "schedlab", "reproduce", "ktask-nice", "--quick", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    data = json.loads(out.read_text())
    by = {r["variant"]: r["metrics"] for r in data["results"]}
    alone = by["alone"]["stressng_s"]
    assert alone == pytest.approx(43.04, abs=0.05)
    assert by["max_nice"]["stressng_s"] < alone * 1.03
    # A fluid fair share would give 43.04 * 15 / 8 = 80.7 s.
    assert 43.04 * 1.6 < by["normal_prio"]["stressng_s"] < 43.04 * 1.9
    assert by["normal_prio"]["ktask_s"] == pytest.approx(90.81, abs=0.5)
    assert data["derived"]


def test_sched_idle_pathology_needs_the_2635_group_imb() -> None:
    """The seed says its baseline ran on v2.6.25-rc6. 2.6.25's own balancer
    marks a group imbalanced only past one nice-0 task of spread, so the
    nice-0 task among weight-2 soakers never makes its socket busiest and
    nothing is evicted: no idle time. 2.6.35's test (two average tasks)
    produces it. The README reads the seed's 2.6.25 as 2.6.35 on this basis."""
    import schedlab

    idle = {}
    for version in ("2.6.25", "2.6.35"):
        report = schedlab.run_scenario(
            "sched-idle", seed=1, overrides={"kernel.version": version, "measure.samples": True}
        )
        rows = [r for s in report["mpstat"]["samples"] for r in s["rows"] if r["cpu"] == "all"]
        idle[version] = sum(r["idle"] for r in rows) / len(rows)
        if version == "2.6.25":
            assert report["active_balances"] == 0
    assert idle["2.6.25"] < 1.0
    assert idle["2.6.35"] > 8.0


def test_kswapd_run_shows_the_mm_tracepoints_and_sections(tmp_path: Path) -> None:
    """A run of P3's machine past kswapd's saturation: the ftrace text has
    the mm_vmscan tracepoints in the kernel's format (a direct reclaim at
    DEF_PRIORITY reclaims far more than SWAP_CLUSTER_MAX), and the text
    report has the memory sections."""
    trace = tmp_path / "t.txt"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "schedlab",
            "run",
            "kswapd-threads",
            "--set",
            "task.dd.count=40",
            "--set",
            "measure.warmup=100ms",
            "--set",
            "measure.duration=300ms",
            "--trace",
            str(trace),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    text = trace.read_text()
    assert "mm_vmscan_kswapd_wake: nid=0 zid=2 order=0" in text
    assert "mm_vmscan_direct_reclaim_begin: order=0" in text
    ends = [int(x) for x in re.findall(r"mm_vmscan_direct_reclaim_end: nr_reclaimed=(\d+)", text)]
    assert ends and min(ends) > 32, ends
    for heading in ("Memory (vm.kswapd_threads 1", "/proc/vmstat over the window", "kswapd threads (top's %CPU)"):
        assert heading in proc.stdout, heading
