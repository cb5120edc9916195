//! The wasted-CPU figure: time a CPU sat idle while a runnable task it
//! could have run waited on another runqueue.

use crate::engine::sim::Sim;
use crate::sched::task::TaskId;

impl Sim {
    /// The invariant checker (--check): one running task per CPU, affinity
    /// respected, every runnable task on exactly one runqueue, CPU time
    /// conserved.
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
            // Slow path: match idle CPUs with the waiting tasks' masks.
            let mut n = 0;
            for c in 0..self.rqs.len() {
                if self.rqs[c].curr.is_some() {
                    continue;
                }
                let any = self.rqs.iter().any(|rq| {
                    rq.cfs
                        .tasks_timeline
                        .iter()
                        .any(|&(_, t)| !self.tasks[t].se.sched_delayed && self.tasks[t].cpus.test(c))
                        || (rq.rt.rt_nr_running > 0
                            && rq.rt.active.iter().any(|t| rq.curr != Some(t) && self.tasks[t].cpus.test(c)))
                });
                n += u64::from(any);
            }
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
