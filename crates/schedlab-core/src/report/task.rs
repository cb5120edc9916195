//! Tasks and groups: what each did over the window, its switches,
//! migrations, wakeup latencies and timer delays.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::absent_when_none;

/// One task.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TaskRow {
    /// Its pid (the simulator's, or the real thread's tid).
    pub pid: u32,
    /// Its comm: the group's name, with `-N` for group members.
    pub comm: String,
    /// Its group.
    pub group: String,
    /// `SCHED_NORMAL`, `SCHED_BATCH`, `SCHED_IDLE`, `SCHED_FIFO`, `SCHED_RR`.
    pub policy: String,
    /// Its nice value.
    pub nice: i32,
    /// Its RT priority (1..99; 0 for the fair policies).
    pub rt_priority: u32,
    /// The kernel prio as traces print it: 120 + nice, or 99 - rt_priority.
    pub prio: i32,
    /// Its CPU affinity as a CPU list (`0-3,6`).
    pub cpus_allowed: String,
    /// When it started (null: a real thread that never did).
    pub start_ns: Option<u64>,
    /// When it exited (null: it did not).
    pub exit_ns: Option<u64>,
    /// CPU time. Simulation: over the whole run; real kernel: over the window.
    pub runtime_ns: u64,
    /// Time spent runnable but waiting, over the same span as runtime_ns.
    pub wait_ns: u64,
    /// The longest wait (null: the kernel has no schedstats).
    pub wait_max_ns: Option<u64>,
    /// Real kernel: timeslices (schedstat's third field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub timeslices: Option<u64>,
    /// Context switches, voluntary and involuntary.
    pub nr_switches: u64,
    /// Switches out because it blocked.
    pub nr_voluntary_switches: u64,
    /// Switches out because it was preempted.
    pub nr_involuntary_switches: u64,
    /// Migrations between CPUs (null: the kernel does not say).
    pub nr_migrations: Option<u64>,
    /// Wakeups (null: the kernel has no schedstats).
    pub nr_wakeups: Option<u64>,
    /// Simulation: mean wakeup latency, over the whole run. A wakeup
    /// latency runs from a wakeup (sched_wakeup, sched_wakeup_new) to the
    /// task's pick (its sched_switch in), every wakeup counted: `perf sched
    /// latency`'s "Average delay". Absent from a real run's report: the
    /// runner measures timer delays (`timer_delay_*`), not this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub wakeup_latency_avg_ns: Option<u64>,
    /// Simulation: the longest wakeup latency (0 without wakeups).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub wakeup_latency_max_ns: Option<u64>,
    /// Simulation: when the longest wakeup latency ended (perf sched
    /// latency's "max at").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub wakeup_latency_max_at_ns: Option<u64>,
    /// Simulation: wakeup latencies counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub wakeup_latency_count: Option<u64>,
    /// Simulation: wakeup latencies in log2 buckets of microseconds: [0]
    /// below 1 us, [k] in [2^(k-1), 2^k) us, the last open-ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub wakeup_latency_hist_us: Option<Vec<u32>>,
    /// Mean timer delay over the window (cyclictest's "Avg"; absent: none
    /// measured). A timer delay runs from the sleep timer's expiry (hrtimer
    /// slack included; a wakeup without a timer: from the wakeup) to the
    /// task's return to user space: the switch to it plus the kernel time
    /// it pays before its own work (the context switch, a wakeup IPI, the
    /// idle exit). The runner measures it on a real kernel (the time its
    /// absolute sleep woke, less the time asked), the simulator the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub timer_delay_avg_ns: Option<u64>,
    /// The longest timer delay over the window (cyclictest's "Max";
    /// absent: none measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub timer_delay_max_ns: Option<u64>,
    /// Median timer delay over the window (null: none measured).
    /// Percentiles are nearest-rank.
    #[serde(default)]
    pub timer_delay_p50_ns: Option<u64>,
    /// 90th percentile timer delay (null: none measured).
    #[serde(default)]
    pub timer_delay_p90_ns: Option<u64>,
    /// 99th percentile timer delay (null: none measured).
    #[serde(default)]
    pub timer_delay_p99_ns: Option<u64>,
    /// Timer delays measured over the window.
    #[serde(default)]
    pub timer_delay_count: u64,
    /// The CPU it last ran on (null: not known).
    pub last_cpu: Option<usize>,
    /// Real kernel: created by a `fork` op (not at the start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub forked: Option<bool>,
    /// Simulation: its counters over the measurement window (deltas since
    /// the warm-up; the whole run without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub window: Option<TaskWindow>,
}

/// A task's counters over the measurement window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TaskWindow {
    /// CPU time.
    pub runtime_ns: u64,
    /// Time runnable but waiting.
    pub wait_ns: u64,
    /// Context switches.
    pub nr_switches: u64,
    /// Voluntary switches.
    pub nr_voluntary_switches: u64,
    /// Involuntary switches.
    pub nr_involuntary_switches: u64,
    /// Migrations.
    pub nr_migrations: u64,
    /// Wakeups.
    pub nr_wakeups: u64,
}

/// One task group.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GroupRow {
    /// The group's name.
    pub name: String,
    /// Its tasks that started.
    pub count: usize,
    /// When its first task started (null: none did).
    pub start_ns: Option<u64>,
    /// When its last task exited, if all did (null otherwise).
    pub end_ns: Option<u64>,
    /// end_ns - start_ns in seconds (null if not all exited): a workload's
    /// completion time.
    pub elapsed_s: Option<f64>,
    /// CPU time of its tasks (simulation: whole run; real: window).
    pub runtime_ns: u64,
    /// Its tasks' mean CPU use over the window, % of one CPU: top's %CPU
    /// averaged over the group (null: no window or no tasks).
    #[serde(default)]
    pub cpu_pct: Option<f64>,
}

/// One cgroup (`[[cgroup]]`), as its cpu controller's files read at the end.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CgroupRow {
    /// Its path below the root ("/a/b").
    pub path: String,
    /// cpu.weight (cpu.weight.nice's weight reads back as its cpu.weight).
    pub weight: u64,
    /// cpu.idle.
    pub idle: bool,
    /// Its own tasks still alive (cgroup.threads' count, not its
    /// descendants').
    pub threads: usize,
    /// cpu.stat usage_usec over the window: its tasks' and its descendants'
    /// CPU time.
    pub usage_usec: u64,
    /// usage_usec as a percentage of one CPU over the window (null: no
    /// window).
    pub cpu_pct: Option<f64>,
    /// cpu.max as it reads: "$MAX $PERIOD" in us ("max 100000": no quota).
    pub max: String,
    /// cpu.max.burst, us.
    pub max_burst: u64,
    /// cpu.stat nr_periods over the window: periods with the group active.
    pub nr_periods: u64,
    /// cpu.stat nr_throttled over the window: periods that ended with a
    /// cfs_rq of the group throttled.
    pub nr_throttled: u64,
    /// cpu.stat throttled_usec over the window: time its cfs_rqs spent
    /// throttled, summed over CPUs (counted at each unthrottle).
    pub throttled_usec: u64,
    /// cpu.stat nr_bursts over the window (5.16+).
    pub nr_bursts: u64,
    /// cpu.stat burst_usec over the window (5.16+): runtime used beyond the
    /// quota in bursting periods.
    pub burst_usec: u64,
    /// cpuset.cpus.effective, a CPU list, where the scenario sets a
    /// cpuset.cpus (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus_effective: Option<String>,
}

/// Timer delay statistics over a set of wakeups.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DelayStats {
    /// Timer delays measured.
    pub count: u64,
    /// Mean delay.
    pub avg_ns: u64,
    /// Median (nearest rank; null without wakeups).
    pub p50_ns: Option<u64>,
    /// 90th percentile.
    pub p90_ns: Option<u64>,
    /// 99th percentile.
    pub p99_ns: Option<u64>,
    /// The longest.
    pub max_ns: Option<u64>,
}

impl TaskWindow {
    /// `self - base`, field by field.
    pub fn since(&self, base: &TaskWindow) -> TaskWindow {
        TaskWindow {
            runtime_ns: self.runtime_ns - base.runtime_ns,
            wait_ns: self.wait_ns - base.wait_ns,
            nr_switches: self.nr_switches - base.nr_switches,
            nr_voluntary_switches: self.nr_voluntary_switches - base.nr_voluntary_switches,
            nr_involuntary_switches: self.nr_involuntary_switches - base.nr_involuntary_switches,
            nr_migrations: self.nr_migrations - base.nr_migrations,
            nr_wakeups: self.nr_wakeups - base.nr_wakeups,
        }
    }
}

impl DelayStats {
    /// The statistics of a set of delays (ns); O(n log n).
    pub fn of(delays: &[u64]) -> DelayStats {
        let n = delays.len();
        if n == 0 {
            return DelayStats { count: 0, avg_ns: 0, p50_ns: None, p90_ns: None, p99_ns: None, max_ns: None };
        }
        // The nearest-rank values are order statistics: selected, the
        // highest rank first, each within the part below the one before
        // (O(n); a group of 10,000 tasks' delays sorted whole was 8 % of
        // a 1,024-CPU bench run).
        let mut s = delays.to_vec();
        let rank = |p: f64| ((p / 100.0) * n as f64).ceil().clamp(1.0, n as f64) as usize - 1;
        let max = *s.iter().max().unwrap_or(&0);
        let (r99, r90, r50) = (rank(99.0), rank(90.0), rank(50.0));
        let p99 = *s.select_nth_unstable(r99).1;
        let p90 = *s[..=r99].select_nth_unstable(r90).1;
        let p50 = *s[..=r90].select_nth_unstable(r50).1;
        DelayStats {
            count: n as u64,
            avg_ns: delays.iter().sum::<u64>() / n as u64,
            p50_ns: Some(p50),
            p90_ns: Some(p90),
            p99_ns: Some(p99),
            max_ns: Some(max),
        }
    }
}

/// Nearest-rank percentile of sorted values.
pub fn percentile(sorted: &[u64], p: f64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}
