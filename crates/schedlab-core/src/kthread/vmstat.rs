//! Models mm/vmstat.c's per-CPU vmstat_update work on the bound workqueue
//! (mm_percpu_wq; 2.6.x: keventd's "events/N"): every CPU queues a
//! deferrable delayed work each `sysctl_stat_interval` (HZ, one second),
//! rounded with round_jiffies_relative(), which skews CPU n by 3·n jiffies
//! so the CPUs do not all fire on the same tick. The work runs in that
//! CPU's normal worker pool (kthread/workqueue.rs), whose first worker
//! (kworker/N:0; events/N at nice -5 before cmwq, 2.6.36) exists from boot.
//!
//! Deferrable: the timer does not wake an idle (tickless) CPU; it fires at
//! the first tick after the CPU is busy again. Its wakeup happens in the
//! timer softirq, before SCHED_SOFTIRQ runs the load balancer on that tick,
//! so for the instant of the balance the kworker is runnable on that CPU —
//! the background activity that keeps real machines from settling.
//!
//! `kernel.vmstat_kworkers = false` removes them (a noise-free machine).

use crate::engine::rng::Dist;
use crate::kthread::floor::KthreadFloor;
use crate::kthread::WorkDone;
use crate::program::{Op, Program};

/// The index of mm_percpu_wq among the system workqueues
/// (kernel::workqueue::WorkqueueDef::system()).
pub(crate) const MM_PERCPU_WQ: usize = 4;

impl KthreadFloor {
    /// Boot: each CPU's normal pool gets its first worker, and the
    /// vmstat timers are armed.
    pub fn create_housekeeping(&mut self) {
        if !self.k.cfg.vmstat_kworkers {
            return;
        }
        debug_assert_eq!(self.kthreads.workqueues[MM_PERCPU_WQ].name, "mm_percpu_wq");
        let run = Op::Run(Dist::Const(self.k.cfg.costs.vmstat_update_ns.max(1)));
        self.kthreads.vmstat_program = self.progs.work_programs.len();
        self.progs.work_programs.push(Program { ops: vec![run] });
        let hz = self.k.cfg.hz as u64;
        // A worker each: grown once, not doubled (and copied) ten times on
        // a large machine.
        let nr_cpus = self.k.sched.rqs.len();
        self.k.sched.tasks.reserve(nr_cpus);
        self.kthreads.workers.reserve(nr_cpus);
        for cpu in 0..nr_cpus {
            let pool = self.pool_for(MM_PERCPU_WQ, cpu);
            self.create_worker(pool);
            // First expiry: round_jiffies_relative(HZ) from boot, skewed.
            self.kthreads.vmstat_next[cpu] = self.round_jiffies_skewed(hz, cpu);
        }
    }

    /// round_jiffies() of `j` jiffies from now for `cpu`, in ns: the next
    /// whole second plus 3·cpu jiffies of skew.
    fn round_jiffies_skewed(&self, j: u64, cpu: usize) -> u64 {
        let hz = self.k.cfg.hz as u64;
        let now_j = self.k.now / self.k.cfg.tick_ns;
        let target = now_j + j;
        let skew = 3 * cpu as u64;
        // __round_jiffies: round (target + skew) to a whole second, then
        // remove the skew again; never earlier than now.
        let rounded = (target + skew).div_ceil(hz) * hz;
        let due = rounded.saturating_sub(skew).max(now_j + 1);
        due * self.k.cfg.tick_ns
    }

    /// From the tick of a busy CPU: fire the deferrable vmstat timer if due
    /// (it queues vmstat_update from the timer softirq).
    pub fn run_housekeeping_timer(&mut self, cpu: usize) {
        if !self.k.cfg.vmstat_kworkers || self.k.now < self.kthreads.vmstat_next[cpu] {
            return;
        }
        let hz = self.k.cfg.hz as u64;
        self.kthreads.vmstat_next[cpu] = self.round_jiffies_skewed(hz, cpu);
        // One vmstat_update at a time per CPU (a delayed work is queued
        // once: the next arming happens when it has run).
        let program = self.kthreads.vmstat_program;
        if self.work_pending_on(MM_PERCPU_WQ, cpu, program) {
            return;
        }
        self.queue_work(MM_PERCPU_WQ, program, cpu, WorkDone::default(), false);
    }
}
