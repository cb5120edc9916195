//! The report's rt-migrate-test section (workload/rt_migrate_test.rs): the
//! tool's own results, its first runs whole, and the threads of earlier
//! runs merged.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// rt-migrate-test's results (rt-tests), as the tool prints them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RtmtReport {
    /// Threads per run (-t).
    pub nr_tasks: usize,
    /// The lowest thread's priority (-p).
    pub prio: u32,
    /// Busy time per iteration (-r), ms.
    pub run_ms: u64,
    /// Sleep between iterations (-s), ms.
    pub sleep_ms: u64,
    /// Iterations per run (-l).
    pub loops: usize,
    /// Allowed start skew (-e), us.
    pub maxerr_us: u64,
    /// -c: stop a run at its first failed iteration.
    pub check: bool,
    /// The highest thread rotates its affinity (rt-tests 2.x).
    pub rotate_high: bool,
    /// Runs done.
    pub runs: usize,
    /// Runs with a failed iteration.
    pub failed_runs: usize,
    /// Iterations done, over every run.
    pub iterations: u64,
    /// Iterations where a higher thread ran after a lower one had finished.
    pub failed_iterations: u64,
    /// Failed iterations other than a run's first.
    pub failed_later_iterations: u64,
    /// Per iteration, the worst wait of a higher thread behind a lower one,
    /// in log2 buckets of microseconds.
    pub latency_hist_us: Vec<u64>,
    /// The worst such wait, us.
    pub max_wake_latency_us: f64,
    /// Where it happened.
    pub max_wake_latency_at: RtmtAt,
    /// Per thread: its times, as the tool's summary prints them.
    pub tasks: Vec<RtmtTask>,
    /// The first runs, kept whole (the tool's per-iteration rows).
    pub kept_runs: Vec<RtmtRun>,
    /// The threads of the runs before the last, merged: the report's
    /// `tasks` lists only the last run's (runs x threads would be thousands
    /// of rows, 29 MB of JSON for 6,500 runs); null with one run.
    #[serde(default)]
    pub earlier_threads: Option<RtmtEarlierThreads>,
}

/// rt-migrate-test's threads of earlier runs as one row, as `perf sched
/// latency` merges the tasks of one comm (`comm:(N)`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RtmtEarlierThreads {
    /// Threads merged.
    pub count: usize,
    /// Their time on a CPU.
    pub runtime_ns: u64,
    /// Their context switches.
    pub nr_switches: u64,
    /// Their migrations.
    pub nr_migrations: u64,
    /// Their wakeup latencies (wakeup -> pick, as `TaskRow`'s
    /// `wakeup_latency_*`) counted.
    pub wakeup_latency_count: u64,
    /// Their mean.
    pub wakeup_latency_avg_ns: u64,
    /// The largest.
    pub wakeup_latency_max_ns: u64,
    /// When the largest ended.
    pub wakeup_latency_max_at_ns: u64,
    /// The latencies in log2 buckets of microseconds.
    pub wakeup_latency_hist_us: Vec<u64>,
}

/// A run and an iteration.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RtmtAt {
    /// The run (from 0).
    pub run: usize,
    /// The iteration in it (from 0).
    pub iteration: usize,
}

/// One rt-migrate-test thread's summary.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RtmtTask {
    /// The thread's index.
    pub task: usize,
    /// Its priority.
    pub prio: usize,
    /// Max start delay, us.
    pub max_us: u64,
    /// Min start delay, us.
    pub min_us: u64,
    /// Total start delay, us.
    pub tot_us: u64,
    /// Mean start delay, us.
    pub avg_us: u64,
}

/// One kept rt-migrate-test run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RtmtRun {
    /// The run (from 0).
    pub run: usize,
    /// Whether an iteration failed.
    pub failed: bool,
    /// The main thread's pid.
    pub parent_pid: u32,
    /// The threads' pids.
    pub pids: Vec<u32>,
    /// Per iteration and thread: start delay from the release, us.
    pub starts_us: Vec<Vec<u64>>,
    /// Per iteration and thread: time from start to end, us.
    pub lens_us: Vec<Vec<u64>>,
    /// Per iteration and thread: busy-loop passes done.
    pub loops: Vec<Vec<u64>>,
}
