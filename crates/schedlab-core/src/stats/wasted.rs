//! The wasted-CPU figure: time a CPU sat idle while a runnable task it
//! could have run waited on another runqueue.

use crate::cpumask::CpuMask;
use crate::sched::task::TaskId;
use crate::sim::Sim;

impl Sim {
    /// Fold the wasted-CPU rate of the interval that just ended and
    /// recompute it for the next one. "Wasted" = a CPU sits idle while a
    /// runnable task allowed on it waits on another runqueue.
    /// O(1) unless a waiting task has a restricted affinity mask.
    pub(crate) fn account_wasted(&mut self) {
        let w = &mut self.stats.wasted;
        let from = w.last.max(self.stats.rec.warmup);
        if self.now > from {
            w.ns += w.rate * (self.now - from);
        }
        w.last = self.now;
        let nr = self.rqs.len() as u64;
        let pinned_waiting = w.nr_pinned_runnable.saturating_sub(w.nr_pinned_running);
        // sched_delayed tasks count in nr_running but sleep: never waiting.
        let waiting =
            (w.total_nr_running - w.nr_delayed).saturating_sub(nr - w.nr_idle_cpus).saturating_sub(pinned_waiting);
        w.rate = if waiting == 0 || w.nr_idle_cpus == 0 {
            0
        } else if w.nr_restricted == 0 {
            // Every waiting task may run anywhere: every idle CPU is wasted.
            w.nr_idle_cpus.min(waiting)
        } else {
            // Slow path: an idle CPU is wasted when some waiting task may
            // run on it, i.e. when it is in the union of the waiting tasks'
            // masks: one pass over the queued tasks, then one over the CPUs
            // (until 2026-11-25 each idle CPU walked every queue).
            let mut union = CpuMask::new(self.rqs.len());
            for rq in &self.rqs {
                for &(_, t) in rq.cfs.tasks_timeline.iter() {
                    if !self.tasks[t].se.sched_delayed {
                        union.or_assign(&self.tasks[t].cpus);
                    }
                }
                if rq.rt.rt_nr_running > 0 {
                    for t in rq.rt.active.iter() {
                        if rq.curr != Some(t) {
                            union.or_assign(&self.tasks[t].cpus);
                        }
                    }
                }
            }
            let n = union.iter().filter(|&c| !self.rq_idle[c].has_curr).count() as u64;
            n.min(waiting)
        };
    }

    /// Book-keeping of the wasted-CPU counters when `tid` becomes runnable
    /// (`on`) or stops being runnable.
    #[inline]
    pub fn wasted_track(&mut self, tid: TaskId, on: bool) {
        let n = self.tasks[tid].nr_cpus_allowed;
        let slot = if n == 1 {
            &mut self.stats.wasted.nr_pinned_runnable
        } else if n < self.rqs.len() {
            &mut self.stats.wasted.nr_restricted
        } else {
            return;
        };
        if on {
            *slot += 1;
        } else {
            *slot -= 1;
        }
    }
}
