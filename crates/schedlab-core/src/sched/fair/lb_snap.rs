//! The tick's periodic balances run at once on every CPU (sched_skew_tick=0:
//! the CPUs tick together, and each CPU's SCHED_SOFTIRQ reads the other
//! runqueues without their locks): a pull by one is not seen by the others'
//! choice of busiest CPU at that instant, only by their detach, which takes
//! the busiest runqueue's lock. `LbSnap` (sched/sched.rs) keeps a runqueue
//! as it was before a periodic balance moved tasks to or from it.
//!
//! Deviation: the kernel's concurrent balances may also see a pull half
//! done, or one another's in any order; here each sees every other CPU's
//! runqueue whole, as it was at the tick. A runqueue keeps the figures of
//! the first pull that changed it at that instant, so a second CPU that
//! pulls from it too reads the first one's "before", not its own.

use crate::sched::env::SchedEnv;
use crate::sched::fair::balance::LbEnv;
use crate::sched::sched::LbSnap;

impl SchedEnv {
    /// The runqueue `cpu` as this periodic balance sees it: as it was at
    /// this instant before another CPU's balance moved tasks to or from it
    /// (`LbSnap`), else None (read the runqueue). Without it the CPUs'
    /// balances at one tick ran as a chain, each seeing the pulls before
    /// it: a queued SCHED_IDLE hog went round three CPUs in one tick, every
    /// tick, and never ran (val-idle-rotation: 255-392 migrations/s against
    /// the guests' 18-51).
    #[inline]
    pub(super) fn lb_view(&self, env: &LbEnv, cpu: usize) -> Option<LbSnap> {
        if self.sched.lb_snap_at != self.now {
            return None;
        }
        let by = env.view_by?;
        let v = self.sched.lb_snap[cpu];
        (v.at == self.now && v.by != by).then_some(v)
    }

    /// Keep `cpu`'s runqueue as the other CPUs' balances at this instant
    /// see it, before this periodic balance (`by`) moves a task to or from it.
    pub(super) fn lb_snap_record(&mut self, by: usize, cpu: usize) {
        if self.sched.lb_snap[cpu].at == self.now {
            return;
        }
        self.sched.lb_snap[cpu] = LbSnap {
            at: self.now,
            by,
            load: self.cpu_load(cpu),
            util: self.cpu_util(cpu),
            runnable: self.sched.cfs_rqs[cpu].avg.runnable_avg,
            nr_running: self.sched.rqs[cpu].nr_running,
            h_nr_running: self.lb_h_nr_running(cpu),
            idle: self.idle_cpu(cpu),
        };
        self.sched.lb_snap_at = self.now;
    }
}
