//! Counters: per-CPU time split as mpstat splits it,
//! per-task and per-group figures, schedstat counters.

use crate::sched::cpustat::CpuTime;

/// mpstat's bookkeeping at each interval: the window's baseline, the last
/// snapshot and the sum of whole intervals, so memory stays the same however
/// long the run; each interval's own deltas are kept only when asked
/// (`measure.samples`).
#[derive(Debug, Clone)]
pub struct Recorder {
    pub warmup: u64,
    pub interval: u64,
    pub end: u64,
    /// Keep every interval's deltas (`measure.samples`).
    pub keep_samples: bool,
    /// Every CPU's cumulative times when the window opened; None until the
    /// warm-up ends.
    pub base: Option<Vec<CpuTime>>,
    /// The last snapshot: its time and every CPU's cumulative times.
    last: Option<(u64, Vec<CpuTime>)>,
    /// Every CPU's time summed over the whole intervals so far.
    pub sum: Vec<CpuTime>,
    /// Whole intervals in `sum`.
    pub intervals: u64,
    /// (end of the interval, every CPU's delta), with `keep_samples`.
    pub samples: Vec<(u64, Vec<CpuTime>)>,
}

impl Recorder {
    pub fn new(nr_cpus: usize, warmup: u64, interval: u64, end: u64, keep_samples: bool) -> Self {
        let mut r = Recorder {
            warmup,
            interval,
            end,
            keep_samples,
            base: None,
            last: None,
            sum: vec![CpuTime::default(); nr_cpus],
            intervals: 0,
            samples: Vec::new(),
        };
        if warmup == 0 {
            r.sample(0, &vec![CpuTime::default(); nr_cpus]);
        }
        r
    }

    pub fn sample(&mut self, now: u64, accts: &[CpuTime]) {
        if now < self.warmup {
            return;
        }
        match &mut self.last {
            None => {
                self.base = Some(accts.to_vec());
                self.last = Some((now, accts.to_vec()));
            }
            Some((at, prev)) => {
                let deltas: Vec<CpuTime> = accts.iter().zip(prev.iter()).map(|(a, p)| a.delta(p)).collect();
                for (s, d) in self.sum.iter_mut().zip(&deltas) {
                    s.add(d);
                }
                self.intervals += 1;
                prev.copy_from_slice(accts);
                *at = now;
                if self.keep_samples {
                    self.samples.push((now, deltas));
                }
            }
        }
    }
}

/// The run's statistics: what the reports are made of beyond the tasks' and
/// runqueues' own counters.
#[derive(Debug, Clone)]
pub struct Stats {
    /// mpstat snapshots.
    pub rec: Recorder,
    /// Every task's counters when the warm-up ended (report "window" =
    /// final − base); empty without a warm-up. Indexed by task id.
    pub task_base: Vec<crate::sched::task::TaskCounters>,
    /// Events the engine processed.
    pub events_processed: u64,
    /// The counters of the rest of the kernel when the warm-up ended
    /// (idle-state usage and time per CPU, disks, works per workqueue).
    pub kernel_base: Option<KernelBase>,
    /// With memory modelled: at each mpstat sample in the window, the time,
    /// nr_running() and nr_iowait() (vmstat's r and b).
    pub procs: Vec<(u64, u32, u32)>,
    /// With writes: at each mpstat sample in the window, the time and the
    /// dirty and under-writeback pages.
    pub dirty: Vec<(u64, u64, u64)>,
}

impl Stats {
    /// Nothing counted yet but the mpstat recorder's setup.
    pub fn new(rec: Recorder) -> Stats {
        Stats {
            rec,
            task_base: Vec::new(),
            events_processed: 0,
            kernel_base: None,
            procs: Vec::new(),
            dirty: Vec::new(),
        }
    }
}

/// Counters outside the scheduler at the start of the window.
#[derive(Debug, Clone, Default)]
pub struct KernelBase {
    pub idle_usage: Vec<Vec<u64>>,
    pub idle_time: Vec<Vec<u64>>,
    pub disks: Vec<crate::block::DiskStats>,
    pub works_done: Vec<u64>,
    pub vm: crate::mm::VmEvents,
    /// Per node: the LRU lock's counters.
    pub lru_lock: Vec<crate::mm::spinlock::LockStats>,
    /// Per node: zone->lock's counters.
    pub zone_lock: Vec<crate::mm::spinlock::LockStats>,
    /// Per CPU: C0 time, APERF and frequency changes (cpufreq/).
    pub cpufreq: Vec<(u64, u64, u64)>,
    /// Per core: its energy, ns x mW (cpufreq/).
    pub core_energy: Vec<u128>,
    /// Per node: bytes moved, saturated ns and stall-weighted ns (membw/).
    pub membw: Vec<(f64, u64, u128)>,
    /// The pressure totals (ns; sched/psi.rs).
    pub psi: [u64; 6],
    /// Per writeback device: pages dirtied and written (mm/page_writeback.rs).
    pub wb: Vec<(u64, u64)>,
    /// Per task group: cpu.stat's bandwidth counters (TaskGroups::cpu_stat).
    pub cpu_stat: Vec<[u64; 5]>,
}
