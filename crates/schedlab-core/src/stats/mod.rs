//! Counters and the report: per-CPU time split as mpstat splits it,
//! per-task and per-group figures, schedstat counters.

pub mod report;
pub mod wasted;

/// Cumulative CPU time by kind, in ns (the /proc/stat columns schedlab
/// models: user, nice, system, idle).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTime {
    pub usr: u64,
    pub nice: u64,
    pub sys: u64,
    pub idle: u64,
}

impl CpuTime {
    pub fn total(&self) -> u64 {
        self.usr + self.nice + self.sys + self.idle
    }

    pub fn delta(&self, earlier: &CpuTime) -> CpuTime {
        CpuTime {
            usr: self.usr - earlier.usr,
            nice: self.nice - earlier.nice,
            sys: self.sys - earlier.sys,
            idle: self.idle - earlier.idle,
        }
    }

    pub fn add(&mut self, o: &CpuTime) {
        self.usr += o.usr;
        self.nice += o.nice;
        self.sys += o.sys;
        self.idle += o.idle;
    }
}

/// Snapshots of every CPU's cumulative time at each mpstat interval.
#[derive(Debug, Clone)]
pub struct Recorder {
    pub warmup: u64,
    pub interval: u64,
    pub end: u64,
    /// (time, per-CPU cumulative times); the first is the baseline.
    pub snaps: Vec<(u64, Vec<CpuTime>)>,
}

impl Recorder {
    pub fn new(nr_cpus: usize, warmup: u64, interval: u64, end: u64) -> Self {
        let mut r = Recorder { warmup, interval, end, snaps: Vec::new() };
        if warmup == 0 {
            r.snaps.push((0, vec![CpuTime::default(); nr_cpus]));
        }
        r
    }

    pub fn sample(&mut self, now: u64, accts: &[CpuTime]) {
        if now < self.warmup {
            return;
        }
        self.snaps.push((now, accts.to_vec()));
    }
}

/// Book-keeping for the wasted-CPU figure.
#[derive(Debug, Clone, Default)]
pub struct Wasted {
    pub ns: u64,
    pub last: u64,
    /// CPUs wasted right now.
    pub rate: u64,
    pub total_nr_running: u64,
    pub nr_idle_cpus: u64,
    /// Runnable tasks whose affinity is more than one CPU but not the whole
    /// machine (they need the slow path).
    pub nr_restricted: u64,
    /// Runnable tasks pinned to one CPU, and how many of them run: a pinned
    /// task waits only for its own CPU, so it never makes another CPU's idle
    /// time wasted.
    pub nr_pinned_runnable: u64,
    pub nr_pinned_running: u64,
}

/// The run's statistics: what the reports are made of beyond the tasks' and
/// runqueues' own counters.
#[derive(Debug, Clone)]
pub struct Stats {
    /// mpstat snapshots.
    pub rec: Recorder,
    /// The wasted-CPU figure (wasted.rs).
    pub wasted: Wasted,
    /// Every task's counters when the warm-up ended (report "window" =
    /// final − base); empty without a warm-up. Indexed by task id.
    pub task_base: Vec<crate::sched::task::TaskCounters>,
    /// Events the engine processed.
    pub events_processed: u64,
    /// Times an rt_rq was throttled.
    pub rt_throttle_events: u64,
    /// Tasks moved by RT push/pull.
    pub rt_migrations: u64,
}
