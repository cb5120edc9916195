"""The report's types as TypedDicts, generated from ``crates/schedlab-core/src/report.rs`` by
``scripts/gen-report-types`` (see docs/report.md); do not edit by hand.

A key that a report may leave out is not required (``total=False``); a
value typed ``X | None`` may be ``None``. ``Report`` is what ``schedlab.run_scenario``
returns and ``schedlab run --json`` writes.
"""

from __future__ import annotations

from typing import Literal, TypedDict, Union

__all__ = [
    "AllocRow",
    "Calibration",
    "CgroupRow",
    "CostFigure",
    "CpuIdleRow",
    "CpuSchedstat",
    "CpuTimes",
    "CpufreqReport",
    "CpufreqRow",
    "CpuidleReport",
    "DbenchReport",
    "DelayStats",
    "DirtySample",
    "DiskReport",
    "DomainInfo",
    "DomainSchedstat",
    "GroupRow",
    "HostInfo",
    "IdleStateInfo",
    "KernelInfo",
    "KswapdRow",
    "MachineInfo",
    "MeasureInfo",
    "MemBwNode",
    "MigrationsByDistance",
    "MmReport",
    "Mpstat",
    "MpstatCpu",
    "MpstatRow",
    "MpstatSample",
    "NodeRow",
    "OracleInfo",
    "PackagePower",
    "PressureFile",
    "PressureLine",
    "PressureReport",
    "ProcsRow",
    "RealInfo",
    "Report",
    "RtInfo",
    "RtmtAt",
    "RtmtEarlierThreads",
    "RtmtReport",
    "RtmtRun",
    "RtmtTask",
    "ScaledInfo",
    "Schedstat",
    "SchedstatTotals",
    "SimInfo",
    "TaskRow",
    "TaskWindow",
    "ThrottleRow",
    "ToolRun",
    "WbRow",
    "WorkqueueRow",
    "WritebackReport",
]


#: `"all"` or a CPU number.
MpstatCpu = Union[Literal["all"], int]


class _WorkqueueRowKeys(TypedDict):
    """The keys of every WorkqueueRow."""

    name: str
    """"""
    works: int
    """"""


class WorkqueueRow(_WorkqueueRowKeys, total=False):
    """One workqueue's work items run over the window."""

    pass


class _ToolRunKeys(TypedDict):
    """The keys of every ToolRun."""

    argv: list[str]
    """The command line, the tool first (`cyclictest`, `perf`, `hackbench`)."""
    stderr: str
    """What it printed on standard error."""
    stdout: str
    """What it printed on standard output."""


class ToolRun(_ToolRunKeys, total=False):
    """A real tool's run in the guest: what it was given and what it printed (the validation suite's metrics are parsed
    from `stdout`).
    """

    pass


class _DelayStatsKeys(TypedDict):
    """The keys of every DelayStats."""

    avg_ns: int
    """Mean delay."""
    count: int
    """Timer delays measured."""
    max_ns: int | None
    """The longest."""
    p50_ns: int | None
    """Median (nearest rank; null without wakeups)."""
    p90_ns: int | None
    """90th percentile."""
    p99_ns: int | None
    """99th percentile."""


class DelayStats(_DelayStatsKeys, total=False):
    """Timer delay statistics over a set of wakeups."""

    pass


class _SimInfoKeys(TypedDict):
    """The keys of every SimInfo."""

    end_ns: int
    """Simulated time at the end of the run."""
    events: int
    """Events the engine processed."""
    reason: str
    """Why the run stopped: `duration reached`, `all tasks exited` or `safety limit reached`."""
    trace_events: int
    """Tracepoint events in the stream (power:cpu_idle's not counted: the run writes them only when traced)."""
    trace_hash: str
    """A fingerprint (FNV-1a, hex) of the sched tracepoint stream: equal hashes, equal schedules."""


class SimInfo(_SimInfoKeys, total=False):
    """How a simulation went."""

    pass


class _SchedstatTotalsKeys(TypedDict):
    """The keys of every SchedstatTotals."""

    alb_pushed: int
    """Sum of alb_pushed."""
    lb_failed: int
    """Sum of lb_failed."""
    lb_gained: int
    """Sum of lb_gained."""


class SchedstatTotals(_SchedstatTotalsKeys, total=False):
    """schedstat totals."""

    pass


class _DomainSchedstatKeys(TypedDict):
    """The keys of every DomainSchedstat."""

    alb_count: int
    """Active balances attempted."""
    alb_failed: int
    """Active balances that moved nothing."""
    alb_pushed: int
    """Active balances that moved a task."""
    cpus: str
    """The span's CPUs as the kernel prints a cpulist ("0-63,128-191"): a few ranges, where a list of every CPU made
    the report quadratic in CPUs (8 MB of 31 on a 1,024-CPU machine).
    """
    lb_balanced: list[int]
    """...that found the domain balanced."""
    lb_count: list[int]
    """load_balance() calls."""
    lb_failed: list[int]
    """...that found an imbalance but moved nothing."""
    lb_gained: list[int]
    """Tasks pulled."""
    lb_imbalance: list[int]
    """Sum of the imbalances found."""
    lb_nobusyg: list[int]
    """No busiest group found."""
    lb_nobusyq: list[int]
    """No busiest queue found."""
    name: str
    """The level's name."""
    span: int
    """CPUs in the span."""
    ttwu_move_affine: int
    """wake_affine() decisions to pull the wakee to the waker's CPU."""
    ttwu_wake_remote: int
    """Wakeups onto another CPU than the waker's, in this domain."""


class DomainSchedstat(_DomainSchedstatKeys, total=False):
    """One sched domain's schedstat line on one CPU: its name and span, and its load-balance counters. The three-
    element arrays are indexed by enum cpu_idle_type: [CPU_IDLE, CPU_NOT_IDLE, CPU_NEWLY_IDLE].
    """

    pass


class _CpuSchedstatKeys(TypedDict):
    """The keys of every CpuSchedstat."""

    cpu: int
    """The CPU."""
    domains: list[DomainSchedstat]
    """Per sched domain of this CPU, bottom-up."""
    run_ns: int
    """Time tasks ran on this CPU."""
    sched_count: int
    """schedule() calls."""
    sched_goidle: int
    """schedule() calls that left the CPU idle."""
    timeslices: int
    """Timeslices run on this CPU."""
    ttwu_count: int
    """try_to_wake_up() calls issued on this CPU."""
    ttwu_local: int
    """...of which woke the task onto this CPU."""
    wait_ns: int
    """Time tasks waited on this CPU's runqueue."""


class CpuSchedstat(_CpuSchedstatKeys, total=False):
    """One CPU's schedstat line and its domains'."""

    pass


class _SchedstatKeys(TypedDict):
    """The keys of every Schedstat."""

    cpus: list[CpuSchedstat]
    """Per CPU."""
    totals: SchedstatTotals
    """Sums over every CPU and level."""


class Schedstat(_SchedstatKeys, total=False):
    """schedstat-named counters (/proc/schedstat version 15)."""

    pass


class _RtmtTaskKeys(TypedDict):
    """The keys of every RtmtTask."""

    avg_us: int
    """Mean start delay, us."""
    max_us: int
    """Max start delay, us."""
    min_us: int
    """Min start delay, us."""
    prio: int
    """Its priority."""
    task: int
    """The thread's index."""
    tot_us: int
    """Total start delay, us."""


class RtmtTask(_RtmtTaskKeys, total=False):
    """One rt-migrate-test thread's summary."""

    pass


class _RtmtAtKeys(TypedDict):
    """The keys of every RtmtAt."""

    iteration: int
    """The iteration in it (from 0)."""
    run: int
    """The run (from 0)."""


class RtmtAt(_RtmtAtKeys, total=False):
    """A run and an iteration."""

    pass


class _RtmtRunKeys(TypedDict):
    """The keys of every RtmtRun."""

    failed: bool
    """Whether an iteration failed."""
    lens_us: list[list[int]]
    """Per iteration and thread: time from start to end, us."""
    loops: list[list[int]]
    """Per iteration and thread: busy-loop passes done."""
    parent_pid: int
    """The main thread's pid."""
    pids: list[int]
    """The threads' pids."""
    run: int
    """The run (from 0)."""
    starts_us: list[list[int]]
    """Per iteration and thread: start delay from the release, us."""


class RtmtRun(_RtmtRunKeys, total=False):
    """One kept rt-migrate-test run."""

    pass


class _RtmtEarlierThreadsKeys(TypedDict):
    """The keys of every RtmtEarlierThreads."""

    count: int
    """Threads merged."""
    nr_migrations: int
    """Their migrations."""
    nr_switches: int
    """Their context switches."""
    runtime_ns: int
    """Their time on a CPU."""
    wakeup_latency_avg_ns: int
    """Their mean."""
    wakeup_latency_count: int
    """Their wakeup latencies (wakeup -> pick, as `TaskRow`'s `wakeup_latency_*`) counted."""
    wakeup_latency_hist_us: list[int]
    """The latencies in log2 buckets of microseconds."""
    wakeup_latency_max_at_ns: int
    """When the largest ended."""
    wakeup_latency_max_ns: int
    """The largest."""


class RtmtEarlierThreads(_RtmtEarlierThreadsKeys, total=False):
    """rt-migrate-test's threads of earlier runs as one row, as `perf sched latency` merges the tasks of one comm
    (`comm:(N)`).
    """

    pass


class _RtmtReportKeys(TypedDict):
    """The keys of every RtmtReport."""

    check: bool
    """-c: stop a run at its first failed iteration."""
    earlier_threads: RtmtEarlierThreads | None
    """The threads of the runs before the last, merged: the report's `tasks` lists only the last run's (runs x threads
    would be thousands of rows, 29 MB of JSON for 6,500 runs); null with one run.
    """
    failed_iterations: int
    """Iterations where a higher thread ran after a lower one had finished."""
    failed_later_iterations: int
    """Failed iterations other than a run's first."""
    failed_runs: int
    """Runs with a failed iteration."""
    iterations: int
    """Iterations done, over every run."""
    kept_runs: list[RtmtRun]
    """The first runs, kept whole (the tool's per-iteration rows)."""
    latency_hist_us: list[int]
    """Per iteration, the worst wait of a higher thread behind a lower one, in log2 buckets of microseconds."""
    loops: int
    """Iterations per run (-l)."""
    max_wake_latency_at: RtmtAt
    """Where it happened."""
    max_wake_latency_us: float
    """The worst such wait, us."""
    maxerr_us: int
    """Allowed start skew (-e), us."""
    nr_tasks: int
    """Threads per run (-t)."""
    prio: int
    """The lowest thread's priority (-p)."""
    rotate_high: bool
    """The highest thread rotates its affinity (rt-tests 2.x)."""
    run_ms: int
    """Busy time per iteration (-r), ms."""
    runs: int
    """Runs done."""
    sleep_ms: int
    """Sleep between iterations (-s), ms."""
    tasks: list[RtmtTask]
    """Per thread: its times, as the tool's summary prints them."""


class RtmtReport(_RtmtReportKeys, total=False):
    """rt-migrate-test's results (rt-tests), as the tool prints them."""

    pass


class _RtInfoKeys(TypedDict):
    """The keys of every RtInfo."""

    push_ipis: int
    """RT_PUSH_IPI: IPIs of the push irq_work chain."""
    push_pull: bool
    """RT tasks are balanced by push/pull (2.6.25+), not by the generic balancer."""
    rt_migrations: int
    """Tasks moved by push/pull."""
    throttle_events: int
    """Times an rt_rq was throttled (sched_rt_runtime_us exhausted)."""


class RtInfo(_RtInfoKeys, total=False):
    """The RT class's counters."""

    pass


class _RealInfoKeys(TypedDict):
    """The keys of every RealInfo."""

    end_ns: int
    """Time from the start of the run to its end (CLOCK_MONOTONIC)."""
    fork_ns: int | None
    """The main thread's own CPU time per thread it created at the start (clone, the stack, its bookkeeping):
    `kernel.costs.fork` for this run.
    """
    read_stat_ns: int | None
    """The same for one CPU's share of a /proc/stat and /proc/schedstat read at an interval's end (the median over the
    samples, divided by the CPUs read): `kernel.costs.proc_read_stat` for this run.
    """
    read_task_ns: int | None
    """The runner's main thread's own CPU time (its thread clock) to read one task's /proc counters at the window's
    start: the base read's time divided by the tasks it read. What `kernel.costs.proc_read_task` is for this run (a
    QEMU guest's vCPUs take turns, so it grows with the busy vCPUs). None: a runner before it was kept, or no task
    read.
    """
    reason: str
    """Why the run stopped."""
    run_overshoot_ns: int | None
    """The mean over every `run` op of the run of what it ran beyond its ask, before the runner took it off the
    thread's next ops: the gaps the kernel charges as CPU time that an op cannot stop inside (a QEMU TCG guest's
    vCPU turns: 220 us beside a hog in a two-vCPU 6.1 guest; on real CPUs a few microseconds). None: a runner before
    it was kept, or no `run` op.
    """
    thread_start_ns: int | None
    """The median over the scenario's threads the runner started of their own CPU time from clone to the start gate
    (glibc's thread start, the setup's syscalls): `kernel.costs.thread_start` for this run.
    """


class RealInfo(_RealInfoKeys, total=False):
    """How a real-kernel run went."""

    pass


class _PressureLineKeys(TypedDict):
    """The keys of every PressureLine."""

    avg10: float
    """"""
    avg300: float
    """"""
    avg60: float
    """"""
    total_us: int
    """"""
    window_pct: float
    """"""


class PressureLine(_PressureLineKeys, total=False):
    """One line: the running averages as printed (%, two decimals truncated), the total since boot (µs), and the share
    of the measurement window stalled (%).
    """

    pass


class _PressureFileKeys(TypedDict):
    """The keys of every PressureFile."""

    some: PressureLine
    """"""


class PressureFile(_PressureFileKeys, total=False):
    """One /proc/pressure file: its "some" line and its "full" line (absent from cpu before 5.13)."""

    full: PressureLine
    """"""


class _PressureReportKeys(TypedDict):
    """The keys of every PressureReport."""

    cpu: PressureFile
    """"""
    io: PressureFile
    """"""
    memory: PressureFile
    """"""


class PressureReport(_PressureReportKeys, total=False):
    """Pressure stall information (`kernel.psi`, 4.20+): /proc/pressure/cpu, memory and io as read at the end of the
    run.
    """

    pass


class _OracleInfoKeys(TypedDict):
    """The keys of every OracleInfo."""

    exit_status: int | None
    """The runner's exit status in the guest (null: it did not say)."""
    kernel: str
    """The oracle kernel's label (`6.1`, `6.12`)."""
    release: str | None
    """Its release (`6.1.0-50-amd64`; null if the oracle's manifest lacks it)."""
    shift: int
    """QEMU's `-icount shift`."""
    wall_s: float
    """Wall time of the guest's boot and run, seconds."""


class OracleInfo(_OracleInfoKeys, total=False):
    """A real run under the QEMU oracle."""

    pass


class _MpstatSampleKeys(TypedDict):
    """The keys of every MpstatSample."""

    end_ns: int
    """End of the interval."""
    rows: list[MpstatRow]
    """The `all` row, then one per CPU."""


class MpstatSample(_MpstatSampleKeys, total=False):
    """One mpstat interval."""

    run_delay_ns: list[int]
    """Per CPU, in CPU order: the time tasks waited on its runqueue in the interval (/proc/schedstat's cpuN run_delay;
    absent: not read). Beside the idle column it bounds the CPU time left idle while tasks waited (`schedlab
    difftest`'s wasted-CPU audit).
    """


class _MpstatRowKeys(TypedDict):
    """The keys of every MpstatRow."""

    cpu: MpstatCpu
    """`"all"` or the CPU number."""
    gnice: float
    """%gnice."""
    guest: float
    """%guest."""
    idle: float
    """%idle."""
    iowait: float
    """%iowait."""
    irq: float
    """%irq."""
    nice: float
    """%nice."""
    soft: float
    """%soft."""
    steal: float
    """%steal."""
    sys: float
    """%sys."""
    usr: float
    """%usr."""


class MpstatRow(_MpstatRowKeys, total=False):
    """One mpstat row: percentages of the row's time, two decimals."""

    pass


class _MpstatKeys(TypedDict):
    """The keys of every Mpstat."""

    average: list[MpstatRow]
    """The Average block over the window: the `all` row, then one per CPU. Over the whole intervals when there is one,
    else over the window.
    """
    intervals: int
    """Whole intervals in the window (the samples there are, kept or not)."""
    samples: list[MpstatSample]
    """One per whole interval of the window, when asked for (`measure.samples`, `schedlab run --samples`); else empty.
    """


class Mpstat(_MpstatKeys, total=False):
    """`mpstat -P ALL`: the samples and the Average block."""

    pass


class _ThrottleRowKeys(TypedDict):
    """The keys of every ThrottleRow."""

    dirtied_kbs: float
    """Pages dirtied per second, KiB/s."""
    group: str
    """"""
    pause_max_ms: float
    """"""
    pause_p50_ms: float
    """"""
    pause_p90_ms: float
    """"""
    paused_pct: float
    """"""
    pauses: int
    """balance_dirty_pages() pauses: how many, their time in all as % of the group's tasks' time, and their lengths
    (ms).
    """


class ThrottleRow(_ThrottleRowKeys, total=False):
    """A group's writes and the throttle's pauses over the window."""

    pass


class _DirtySampleKeys(TypedDict):
    """The keys of every DirtySample."""

    dirty_kb: int
    """"""
    time_s: float
    """"""
    writeback_kb: int
    """"""


class DirtySample(_DirtySampleKeys, total=False):
    """Dirty and under-writeback pages at one time (KiB)."""

    pass


class _WbRowKeys(TypedDict):
    """The keys of every WbRow."""

    balanced_dirty_ratelimit_kbs: int
    """"""
    bdi_dirty_thresh_kb: int
    """BdiDirtyThresh, BdiReclaimable, BdiWriteback (KiB)."""
    device: str
    """"""
    dirty_ratelimit_kbs: int
    """The rate each writer is held to at pos_ratio 1 (dirty_ratelimit), and the rate the last estimate found balanced,
    KiB/s.
    """
    flusher: str
    """The flusher's thread."""
    flusher_cpu_pct: float
    """Its CPU use over the window (top's %CPU)."""
    reclaimable_kb: int
    """"""
    write_bandwidth_kbs: int
    """BdiWriteBandwidth (the smoothed estimate, avg_write_bandwidth), KiB/s."""
    writeback_kb: int
    """"""
    written_kbs: float
    """Pages written back per second over the window, KiB/s."""


class WbRow(_WbRowKeys, total=False):
    """One device's writeback at the end of the run."""

    pass


class _WritebackReportKeys(TypedDict):
    """The keys of every WritebackReport."""

    background_thresh_kb: int
    """"""
    devices: list[WbRow]
    """"""
    dirty_limit_kb: int
    """"""
    dirty_mean_kb: int
    """"""
    dirty_thresh_kb: int
    """DirtyThresh and BackgroundThresh at the end of the run (KiB; for a writer that is not RT), and the domain's
    smoothed limit.
    """
    dirtyable_kb: int
    """The dirtyable memory the thresholds are taken of (free pages above the reserves, and the file pages) at the end,
    KiB; and the mean of the samples' Dirty + Writeback, KiB.
    """
    nr_dirtied: int
    """/proc/vmstat nr_dirtied and nr_written over the window (pages)."""
    nr_written: int
    """"""
    samples: list[DirtySample]
    """/proc/meminfo's Dirty and Writeback at the end of each interval."""
    throttle: list[ThrottleRow]
    """"""


class WritebackReport(_WritebackReportKeys, total=False):
    """Buffered writes: the dirty limits, each device's writeback as /sys/kernel/debug/bdi/*/stats shows it, the
    writers' throttling, and /proc/meminfo's Dirty and Writeback at each interval.
    """

    pass


class _ProcsRowKeys(TypedDict):
    """The keys of every ProcsRow."""

    b: int
    """b: tasks asleep in io_schedule() (/proc/stat procs_blocked, nr_iowait())."""
    r: int
    """r: tasks running or waiting for a CPU (/proc/stat procs_running, nr_running() summed over the CPUs)."""
    time_s: float
    """Seconds since the start of the run."""


class ProcsRow(_ProcsRowKeys, total=False):
    """One vmstat line's procs columns."""

    pass


class _NodeRowKeys(TypedDict):
    """The keys of every NodeRow."""

    active_file_pages: int
    """"""
    free_pages: int
    """NR_FREE_PAGES: the buddy lists, which the watermarks test."""
    high_pages: int
    """"""
    inactive_file_pages: int
    """"""
    kswapd_allowed: float
    """The node's kswapd threads allowed to run: vm.kswapd_threads, or the mean of the `auto` policy's once-a-second
    choices.
    """
    kswapd_cpu_pct: float
    """The node's kswapd threads' mean %CPU over the window (top's %CPU per thread, averaged over the node's threads).
    """
    kswapd_cpu_total_pct: float
    """Their %CPU summed: the CPUs the node's reclaim threads take."""
    low_pages: int
    """"""
    lru_lock_acquisitions: int
    """"""
    lru_lock_contended: int
    """"""
    lru_lock_held_pct: float
    """Time the lock was held, % of the window."""
    lru_lock_spin_ms: float
    """CPU time spent spinning on the lock, all CPUs, ms."""
    managed_pages: int
    """"""
    min_pages: int
    """"""
    node: int
    """"""
    pcp_pages: int
    """Free pages on the CPUs' per-CPU lists of the zone (/proc/zoneinfo's pagesets' counts), not in free_pages."""
    zone_lock_held_pct: float
    """zone->lock held, % of the window."""
    zone_lock_spin_ms: float
    """zone->lock (the buddy lists): CPU time spent spinning on it, ms."""


class NodeRow(_NodeRowKeys, total=False):
    """One node at the end of the run, and its LRU lock over the window."""

    pass


class _KswapdRowKeys(TypedDict):
    """The keys of every KswapdRow."""

    comm: str
    """"""
    cpu_pct: float
    """"""
    node: int
    """"""


class KswapdRow(_KswapdRowKeys, total=False):
    """One kswapd thread."""

    pass


class _AllocRowKeys(TypedDict):
    """The keys of every AllocRow."""

    direct_reclaims: int
    """"""
    drains: int
    """drain_all_pages() after a reclaim whose allocation still failed: calls that drained, and those that found
    another drain running.
    """
    drains_skipped: int
    """"""
    fast: int
    """"""
    group: str
    """"""
    isolated_stalls: int
    """Waits of its direct reclaimers for too_many_isolated() (msleep, congestion_wait or reclaim_throttle by version).
    """
    slow: int
    """"""
    slow_max_us: float
    """"""
    slow_p50_us: float
    """"""
    slow_p99_us: float
    """"""


class AllocRow(_AllocRowKeys, total=False):
    """A group's allocations over the run: those served at once, those that left the fast path (their latency, from the
    first slow-path step to the pages), and its direct reclaims.
    """

    pass


class _MmReportKeys(TypedDict):
    """The keys of every MmReport."""

    alloc: list[AllocRow]
    """Per task group that allocated: how its allocations went."""
    kswapd: list[KswapdRow]
    """Each kswapd thread's CPU use over the window (top's %CPU)."""
    kswapd_threads: str
    """vm.kswapd_threads, vm.min_free_kbytes (the value used) and whether shadow entries are on."""
    min_free_kbytes: int
    """"""
    nodes: list[NodeRow]
    """"""
    procs: list[ProcsRow]
    """vmstat's procs columns at the end of each mpstat interval in the window, where vmstat prints a line."""
    read_kbs: float
    """Pages read from the disks per second, KiB/s (iostat's kB_read/s summed over the devices)."""
    vmstat: dict[str, int]
    """/proc/vmstat event counters over the window, by name."""
    workingset: bool
    """"""
    writeback: WritebackReport | None
    """Dirty pages and their writeback, when a task writes (mm/page_writeback.rs, mm/fs_writeback.rs)."""


class MmReport(_MmReportKeys, total=False):
    """Memory and reclaim over the window."""

    pass


class _MigrationsByDistanceKeys(TypedDict):
    """The keys of every MigrationsByDistance."""

    llc: int
    """To another core sharing the LLC."""
    remote_llc: int
    """To another LLC of the same node."""
    remote_node: int
    """To another node."""
    smt: int
    """To an SMT sibling of the same core."""


class MigrationsByDistance(_MigrationsByDistanceKeys, total=False):
    """Task migrations by how far they went."""

    pass


class _MemBwNodeKeys(TypedDict):
    """The keys of every MemBwNode."""

    bandwidth_gbs: float
    """What the node's DRAM delivers, GB/s (10^9 bytes)."""
    node: int
    """"""
    saturated_pct: float
    """The share of the window the node was saturated (its memory-bound work slowed)."""
    stall_mean: float
    """The mean stall over the window: how many times longer memory-bound work took than on an idle node (1: never
    slowed).
    """
    traffic_gbs: float
    """The traffic of the work its CPUs ran (page clearing, copies, run ops with `memory_traffic`), GB/s, and as a
    share of the bandwidth.
    """
    utilization_pct: float
    """"""


class MemBwNode(_MemBwNodeKeys, total=False):
    """One NUMA node's memory bandwidth over the window (membw/: `machine.memory_bandwidth`)."""

    pass


class _MeasureInfoKeys(TypedDict):
    """The keys of every MeasureInfo."""

    end_ns: int
    """End of the window: the end of the run."""
    interval_ns: int
    """The mpstat interval."""
    start_ns: int
    """Start of the window: the end of the warm-up."""


class MeasureInfo(_MeasureInfoKeys, total=False):
    """The measurement window."""

    pass


class _DomainInfoKeys(TypedDict):
    """The keys of every DomainInfo."""

    name: str
    """The level's name (SMT, MC, DIE/PKG, NUMA; 2.6.x SIBLING, MC, CPU, NODE, ALLNODES)."""
    span: int
    """CPUs in the domain's span."""


class DomainInfo(_DomainInfoKeys, total=False):
    """One sched domain level."""

    pass


class _MachineInfoKeys(TypedDict):
    """The keys of every MachineInfo."""

    description: str
    """One line describing the machine."""
    name: str
    """The preset's name, or `custom`."""
    nr_cpus: int
    """CPUs of the machine (real kernel: CPUs the run used)."""


class MachineInfo(_MachineInfoKeys, total=False):
    """The machine of a run."""

    domains: list[DomainInfo]
    """Simulation: CPU 0's sched domains, bottom-up."""


class _TaskWindowKeys(TypedDict):
    """The keys of every TaskWindow."""

    nr_involuntary_switches: int
    """Involuntary switches."""
    nr_migrations: int
    """Migrations."""
    nr_switches: int
    """Context switches."""
    nr_voluntary_switches: int
    """Voluntary switches."""
    nr_wakeups: int
    """Wakeups."""
    runtime_ns: int
    """CPU time."""
    wait_ns: int
    """Time runnable but waiting."""


class TaskWindow(_TaskWindowKeys, total=False):
    """A task's counters over the measurement window."""

    pass


class _TaskRowKeys(TypedDict):
    """The keys of every TaskRow."""

    comm: str
    """Its comm: the group's name, with `-N` for group members."""
    cpus_allowed: str
    """Its CPU affinity as a CPU list (`0-3,6`)."""
    exit_ns: int | None
    """When it exited (null: it did not)."""
    group: str
    """Its group."""
    last_cpu: int | None
    """The CPU it last ran on (null: not known)."""
    nice: int
    """Its nice value."""
    nr_involuntary_switches: int
    """Switches out because it was preempted."""
    nr_migrations: int | None
    """Migrations between CPUs (null: the kernel does not say)."""
    nr_switches: int
    """Context switches, voluntary and involuntary."""
    nr_voluntary_switches: int
    """Switches out because it blocked."""
    nr_wakeups: int | None
    """Wakeups (null: the kernel has no schedstats)."""
    pid: int
    """Its pid (the simulator's, or the real thread's tid)."""
    policy: str
    """`SCHED_NORMAL`, `SCHED_BATCH`, `SCHED_IDLE`, `SCHED_FIFO`, `SCHED_RR`."""
    prio: int
    """The kernel prio as traces print it: 120 + nice, or 99 - rt_priority."""
    rt_priority: int
    """Its RT priority (1..99; 0 for the fair policies)."""
    runtime_ns: int
    """CPU time. Simulation: over the whole run; real kernel: over the window."""
    start_ns: int | None
    """When it started (null: a real thread that never did)."""
    timer_delay_count: int
    """Timer delays measured over the window."""
    timer_delay_p50_ns: int | None
    """Median timer delay over the window (null: none measured). Percentiles are nearest-rank."""
    timer_delay_p90_ns: int | None
    """90th percentile timer delay (null: none measured)."""
    timer_delay_p99_ns: int | None
    """99th percentile timer delay (null: none measured)."""
    wait_max_ns: int | None
    """The longest wait (null: the kernel has no schedstats)."""
    wait_ns: int
    """Time spent runnable but waiting, over the same span as runtime_ns."""


class TaskRow(_TaskRowKeys, total=False):
    """One task."""

    forked: bool
    """Real kernel: created by a `fork` op (not at the start)."""
    timer_delay_avg_ns: int
    """Mean timer delay over the window (cyclictest's "Avg"; absent: none measured). A timer delay runs from the sleep
    timer's expiry (hrtimer slack included; a wakeup without a timer: from the wakeup) to the task's return to user
    space: the switch to it plus the kernel time it pays before its own work (the context switch, a wakeup IPI, the
    idle exit). The runner measures it on a real kernel (the time its absolute sleep woke, less the time asked), the
    simulator the same.
    """
    timer_delay_max_ns: int
    """The longest timer delay over the window (cyclictest's "Max"; absent: none measured)."""
    timeslices: int
    """Real kernel: timeslices (schedstat's third field)."""
    wakeup_latency_avg_ns: int
    """Simulation: mean wakeup latency, over the whole run. A wakeup latency runs from a wakeup (sched_wakeup,
    sched_wakeup_new) to the task's pick (its sched_switch in), every wakeup counted: `perf sched latency`'s
    "Average delay". Absent from a real run's report: the runner measures timer delays (`timer_delay_*`), not this.
    """
    wakeup_latency_count: int
    """Simulation: wakeup latencies counted."""
    wakeup_latency_hist_us: list[int]
    """Simulation: wakeup latencies in log2 buckets of microseconds: [0] below 1 us, [k] in [2^(k-1), 2^k) us, the last
    open-ended.
    """
    wakeup_latency_max_at_ns: int
    """Simulation: when the longest wakeup latency ended (perf sched latency's "max at")."""
    wakeup_latency_max_ns: int
    """Simulation: the longest wakeup latency (0 without wakeups)."""
    window: TaskWindow
    """Simulation: its counters over the measurement window (deltas since the warm-up; the whole run without one)."""


class _ScaledInfoKeys(TypedDict):
    """The keys of every ScaledInfo."""

    sched_base_slice_ns: int
    """sysctl_sched_base_slice (EEVDF request size)."""
    sched_latency_ns: int
    """sysctl_sched_latency (CFS period target)."""
    sched_min_granularity_ns: int
    """sysctl_sched_min_granularity."""
    sched_wakeup_granularity_ns: int
    """sysctl_sched_wakeup_granularity."""


class ScaledInfo(_ScaledInfoKeys, total=False):
    """The fair class's latency tunables after boot-time scaling, in ns."""

    pass


class _KernelInfoKeys(TypedDict):
    """The keys of every KernelInfo."""

    version: str
    """Simulation: the modelled version (`6.1`, `2.6.35`). Real kernel: the running kernel's release (`uname -r`)."""


class KernelInfo(_KernelInfoKeys, total=False):
    """The kernel of a run."""

    balancer: str
    """Simulation: the load balancer's era, `avg_load` or `group_type`."""
    fair: str
    """Simulation: the fair class's pick rule, `cfs` or `eevdf`."""
    features: dict[str, bool]
    """Simulation: every sched_feature the version has, by its debugfs name, and whether it was on."""
    hz: int
    """Simulation: CONFIG_HZ."""
    isolcpus: str
    """The isolcpus= boot parameter's CPUs (`kernel.isolcpus`), a CPU list; absent without it. Real:
    /sys/devices/system/cpu/isolated.
    """
    scaled: ScaledInfo
    """Simulation: the latency tunables as the kernel ran with them (after the boot-time CPU-count scaling)."""
    scenario_version: str
    """Real kernel: the version the scenario asked for."""
    sysctl: dict[str, int]
    """Simulation: the scheduler sysctls by name (before CPU-count scaling), in each sysctl's own unit."""


class _HostInfoKeys(TypedDict):
    """The keys of every HostInfo."""

    arch: str
    """`uname -m`."""
    coordinator_fifo: bool
    """The runner's coordinating thread ran SCHED_FIFO (it could set it)."""
    cpus_used: list[int]
    """The host CPU that played each scenario CPU (index = scenario CPU)."""
    kernel_release: str
    """`uname -r`."""
    kernel_version: str
    """`uname -v`."""
    nr_cpus: int
    """Online CPUs of the host."""
    user_hz: int
    """USER_HZ: /proc/stat's tick."""


class HostInfo(_HostInfoKeys, total=False):
    """The host of a real-kernel run."""

    pass


class _GroupRowKeys(TypedDict):
    """The keys of every GroupRow."""

    count: int
    """Its tasks that started."""
    cpu_pct: float | None
    """Its tasks' mean CPU use over the window, % of one CPU: top's %CPU averaged over the group (null: no window or no
    tasks).
    """
    elapsed_s: float | None
    """end_ns - start_ns in seconds (null if not all exited): a workload's completion time."""
    end_ns: int | None
    """When its last task exited, if all did (null otherwise)."""
    name: str
    """The group's name."""
    runtime_ns: int
    """CPU time of its tasks (simulation: whole run; real: window)."""
    start_ns: int | None
    """When its first task started (null: none did)."""


class GroupRow(_GroupRowKeys, total=False):
    """One task group."""

    pass


class _DiskReportKeys(TypedDict):
    """The keys of every DiskReport."""

    await_us: float
    """Mean time from submission to completion, us (await)."""
    flushes: int
    """"""
    name: str
    """"""
    read_bytes: int
    """"""
    reads: int
    """Requests completed."""
    util_pct: float
    """Time with a request in the device, % of the window (%util)."""
    write_bytes: int
    """"""
    writes: int
    """"""


class DiskReport(_DiskReportKeys, total=False):
    """One block device over the window (iostat -x)."""

    pass


class _DbenchReportKeys(TypedDict):
    """The keys of every DbenchReport."""

    amean_ms: float
    """Arithmetic mean of the pass times, ms (dbench's integer ms; mmtests' Amean)."""
    bytes_per_pass: int
    """ReadX/WriteX bytes of one pass."""
    clients: int
    """"""
    filesystem: str
    """xfs or ext4."""
    flushes_per_pass: int
    """Flush ops (fsync) per pass."""
    hmean_mbs: float
    """Harmonic mean of the per-second MB/s samples (decimal MB of ReadX/WriteX; mmtests' Hmean), whole seconds of the
    window.
    """
    loadfile_cpu_ns: int
    """CPU time of a pass's ops other than Flush, ns."""
    max_ms: int
    """"""
    migrations_per_pass: float
    """The clients' migrations over the window, per pass."""
    min_ms: int
    """"""
    passes: int
    """Passes completed in the window, all clients."""
    stddev_ms: float
    """Sample standard deviation of the pass times, ms."""


class DbenchReport(_DbenchReportKeys, total=False):
    """dbench's results (every client's load-file passes), as mmtests' io-dbench4 reads them."""

    pass


class _CpuTimesKeys(TypedDict):
    """The keys of every CpuTimes."""

    cpu: int
    """The scenario's CPU number."""
    idle_ns: int
    """Idle time."""
    nice_ns: int
    """User time of tasks at nice > 0."""
    sys_ns: int
    """Kernel time: kernel threads and the context switches themselves."""
    usr_ns: int
    """User time of tasks at nice <= 0."""


class CpuTimes(_CpuTimesKeys, total=False):
    """One CPU's time by kind over the window (/proc/stat's columns)."""

    host_cpu: int
    """Real kernel: the host CPU that played it."""
    iowait_ns: int
    """Real kernel: idle time with IO outstanding."""
    irq_ns: int
    """Real kernel: hard-interrupt time."""
    run_delay_ns: int
    """Time tasks waited on this CPU's runqueue, counted when each wait ends (/proc/schedstat's cpuN run_delay; absent:
    not read).
    """
    soft_ns: int
    """Real kernel: softirq time."""
    steal_ns: int
    """Real kernel: time stolen by the hypervisor."""


class _IdleStateInfoKeys(TypedDict):
    """The keys of every IdleStateInfo."""

    exit_latency_ns: int
    """"""
    name: str
    """"""
    target_residency_ns: int
    """"""


class IdleStateInfo(_IdleStateInfoKeys, total=False):
    """One idle state of the table."""

    pass


class _CpuIdleRowKeys(TypedDict):
    """The keys of every CpuIdleRow."""

    cpu: int
    """"""
    time_ns: list[int]
    """"""
    usage: list[int]
    """"""


class CpuIdleRow(_CpuIdleRowKeys, total=False):
    """One CPU's idle-state counters."""

    pass


class _CpuidleReportKeys(TypedDict):
    """The keys of every CpuidleReport."""

    cpus: list[CpuIdleRow]
    """Per CPU: entries and time of each state."""
    deepest_pct: float
    """The share of the time in idle states spent in the deepest one, %."""
    states: list[IdleStateInfo]
    """The states, shallowest first (state 0 is POLL)."""
    table: str
    """The intel_idle table (skx, hsw, bdw)."""
    time_ns: list[int]
    """Time in each state, all CPUs, ns (credited when an idle period ends)."""
    usage: list[int]
    """Entries of each state, all CPUs."""


class CpuidleReport(_CpuidleReportKeys, total=False):
    """The idle states of the CPUs (drivers/cpuidle, sysfs `cpuidle/stateN/{usage,time}`), over the window."""

    pass


class _PackagePowerKeys(TypedDict):
    """The keys of every PackagePower."""

    energy_j: float
    """"""
    package: int
    """"""
    watts: float
    """"""


class PackagePower(_PackagePowerKeys, total=False):
    """One package's energy over the window."""

    pass


class _CpufreqRowKeys(TypedDict):
    """The keys of every CpufreqRow."""

    avg_mhz: float
    """"""
    busy_pct: float
    """"""
    bzy_mhz: float
    """"""
    core: int
    """"""
    cpu: int
    """"""
    energy_j: float
    """Its core's energy over the window shared by the core's threads, J."""
    idle_open_ns: int
    """The part of the window in an idle period still open at its end, ns: cpuidle credits a period to its state only
    when it ends.
    """
    package: int
    """Its package and its core within the package (topology's physical_package_id and core_id; turbostat's Package and
    Core).
    """
    transitions: int
    """"""


class CpufreqRow(_CpufreqRowKeys, total=False):
    """One CPU's frequency counters over the window."""

    pass


class _CpufreqReportKeys(TypedDict):
    """The keys of every CpufreqReport."""

    avg_mhz: float
    """All CPUs: the average frequency over the window, idle included (turbostat's Avg_MHz), the share of it in C0
    (Busy%) and the average frequency while in C0 (Bzy_MHz).
    """
    base_mhz: int
    """Base (TSC) frequency, MHz."""
    busy_pct: float
    """"""
    bzy_mhz: float
    """"""
    cpus: list[CpufreqRow]
    """"""
    energy_j: float
    """Energy over the window, all packages, J (the power model of machine/processors.rs), and per package: J and the
    average W (turbostat's PkgWatt).
    """
    freq_invariance: bool
    """Whether PELT is frequency invariant (x86 from 5.7, or `kernel.freq_invariance`)."""
    governor: str
    """The scaling governor (`kernel.cpufreq_governor` or the version's default)."""
    hwp: bool
    """Whether the processor has hardware P-states (HWP)."""
    model: str
    """"""
    packages: list[PackagePower]
    """"""
    processor: str
    """The processor (`machine.cpufreq`) and its model name."""
    transitions: int
    """Frequency changes (cpu_frequency events), all CPUs."""


class CpufreqReport(_CpufreqReportKeys, total=False):
    """The CPUs' frequencies over the window (machine.cpufreq): turbostat's Avg_MHz, Busy% and Bzy_MHz, from the
    model's APERF and MPERF.
    """

    pass


class _CgroupRowKeys(TypedDict):
    """The keys of every CgroupRow."""

    burst_usec: int
    """cpu.stat burst_usec over the window (5.16+): runtime used beyond the quota in bursting periods."""
    cpu_pct: float | None
    """usage_usec as a percentage of one CPU over the window (null: no window)."""
    cpus_effective: str | None
    """cpuset.cpus.effective, a CPU list, where the scenario sets a cpuset.cpus (absent otherwise)."""
    idle: bool
    """cpu.idle."""
    max: str
    """cpu.max as it reads: "$MAX $PERIOD" in us ("max 100000": no quota)."""
    max_burst: int
    """cpu.max.burst, us."""
    nr_bursts: int
    """cpu.stat nr_bursts over the window (5.16+)."""
    nr_periods: int
    """cpu.stat nr_periods over the window: periods with the group active."""
    nr_throttled: int
    """cpu.stat nr_throttled over the window: periods that ended with a cfs_rq of the group throttled."""
    path: str
    """Its path below the root ("/a/b")."""
    threads: int
    """Its own tasks still alive (cgroup.threads' count, not its descendants')."""
    throttled_usec: int
    """cpu.stat throttled_usec over the window: time its cfs_rqs spent throttled, summed over CPUs (counted at each
    unthrottle).
    """
    usage_usec: int
    """cpu.stat usage_usec over the window: its tasks' and its descendants' CPU time."""
    weight: int
    """cpu.weight (cpu.weight.nice's weight reads back as its cpu.weight)."""


class CgroupRow(_CgroupRowKeys, total=False):
    """One cgroup (`[[cgroup]]`), as its cpu controller's files read at the end."""

    pass


class _CostFigureKeys(TypedDict):
    """The keys of every CostFigure."""

    key: str
    """Its `kernel.costs` key (`pipe_write`, `context_switch`, `fork`, ...)."""
    max_ns: int
    """The largest round, ns."""
    measured: str | None
    """A row added to a kept calibration after its run: when, and by what (the runner never writes it)."""
    median_ns: int
    """The median of the rounds, ns: the value to use."""
    min_ns: int
    """The smallest round, ns."""


class CostFigure(_CostFigureKeys, total=False):
    """One measured cost constant."""

    pass


class _CalibrationKeys(TypedDict):
    """The keys of every Calibration."""

    costs: list[CostFigure]
    """One row per constant, named as its `kernel.costs` key."""
    cpu: int
    """The host CPU they ran on."""


class Calibration(_CalibrationKeys, total=False):
    """The cost constants measured on a machine by `schedlab-runner --calibrate`: microbenchmarks on one CPU, timed
    with the threads' CPU clocks, the median of several rounds each.
    """

    pass


class _ReportKeys(TypedDict):
    """The keys of every Report."""

    cpus: list[CpuTimes]
    """Per CPU: its time by kind over the window (/proc/stat's columns)."""
    groups: list[GroupRow]
    """Per task group of the scenario."""
    kernel: KernelInfo
    """The kernel that ran."""
    machine: MachineInfo
    """The machine the scenario describes."""
    measure: MeasureInfo
    """The measurement window: everything below is counted from `start_ns` (the end of the warm-up) to `end_ns`, unless
    it says otherwise.
    """
    migrations: int
    """Task migrations: simulation, over the whole run; real kernel, over the window."""
    mpstat: Mpstat
    """`mpstat -P ALL` over the window: each interval's sample and the Average block."""
    rt_migrate_test: RtmtReport | None
    """The rt-migrate-test tool's results, for a scenario with `[rt_migrate_test]`; null otherwise."""
    scenario: str
    """The scenario's name."""
    schedlab: str
    """The schedlab version that wrote the report."""
    seed: int
    """The seed of the run (the simulator's RNG streams; the runner's distributions)."""
    source: str
    """Simulation: the scenario's file as given (or `<string>`). Real kernel: `"real"` (the file is then in
    `scenario_file`), or `"real-tool"` for a real tool's run (then only `source`, `oracle` and `tool` are there), or
    `"real-calibration"` for `schedlab-runner --calibrate` (then `host`, `calibration` and, in the oracle's guest,
    `oracle`).
    """
    tasks: list[TaskRow]
    """The scenario's tasks (those that started), in creation order."""
    timer_delay: DelayStats
    """The scenario's tasks' timer delays over the window, all tasks together (see `TaskRow.timer_delay_avg_ns`)."""
    warnings: list[str]
    """What went wrong without stopping the run: a deadlock inside a fixed duration, measure.limit reached, a version
    without a preset of its own. The CLI prints them on stderr; `--strict` (`strict=True`) makes them errors.
    """


class Report(_ReportKeys, total=False):
    """The report of one run."""

    active_balances: int
    """Simulation: tasks moved by active balance (the stopper), over the whole run."""
    calibration: Calibration
    """Real kernel: this machine's values of the cost constants, measured by `schedlab-runner --calibrate` (`schedlab
    calibrate`).
    """
    cgroups: list[CgroupRow]
    """Simulation: per `[[cgroup]]` of the scenario (its cpu controller's files); absent without cgroups."""
    cpufreq: CpufreqReport
    """Simulation: the CPUs' frequencies over the window, with a processor (`machine.cpufreq`); absent without one."""
    cpuidle: CpuidleReport
    """Simulation: the CPUs' idle states over the window, with a cpuidle driver (`machine.cpuidle`); absent without
    one.
    """
    dbench: DbenchReport
    """Simulation: dbench's results for a scenario with `[dbench]`."""
    disks: list[DiskReport]
    """Simulation: the block devices over the window, as iostat reports them; absent without `[[machine.disk]]`."""
    host: HostInfo
    """Real kernel: the host it ran on."""
    kernel_threads: list[TaskRow]
    """Simulation: the kernel's own threads (the per-CPU vmstat kworkers), listed apart from the scenario's tasks."""
    memory_bandwidth: list[MemBwNode]
    """Simulation: each NUMA node's memory bandwidth and the traffic over the window; absent without
    `machine.memory_bandwidth` (membw/).
    """
    migrations_by_distance: MigrationsByDistance
    """Simulation: `migrations` by how far the task moved (each distance pays its own `kernel.costs.migration_*` cache
    refill), over the whole run.
    """
    mm: MmReport
    """Simulation: memory and reclaim, when the scenario uses them (mm/)."""
    oracle: OracleInfo
    """Real kernel under the QEMU oracle: the guest's kernel and the emulator's settings (added by
    python/schedlab/qemu/guest.py).
    """
    pressure: PressureReport
    """Simulation: pressure stall information, as /proc/pressure prints it at the end; absent without `kernel.psi`
    (sched/psi.rs).
    """
    real: RealInfo
    """Real kernel: how the run went."""
    repeat: int
    """Real kernel: the number of runs this report is the median of (`--repeat N`, N > 1: every number is their
    median).
    """
    rt: RtInfo
    """Simulation: the RT class's counters over the whole run."""
    scenario_file: str
    """Real kernel: the scenario's file."""
    schedstat: Schedstat
    """Simulation: schedstat-named counters per CPU and per sched domain, over the whole run."""
    sim: SimInfo
    """Simulation: how the simulation went."""
    switches: int
    """Real kernel: context switches of the scenario's tasks over the window."""
    tool: ToolRun
    """Real kernel: a real tool (perf bench, hackbench, cyclictest) run in the oracle's guest by `schedlab validate`
    for an entry with `tool`.
    """
    wasted_cpu_ns: int
    """Simulation: time a CPU sat idle while a runnable task allowed on it waited on another runqueue, summed over the
    CPUs, over the window.
    """
    wasted_cpu_pct: float
    """Simulation: `wasted_cpu_ns` as a percentage of the window's CPU time (window length times CPUs), two decimals."""
    workqueues: list[WorkqueueRow]
    """Simulation: work items each workqueue ran over the window (the workqueues that ran any)."""
