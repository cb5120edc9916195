//! The wasted-CPU figure: time a CPU sat idle while a runnable task it
//! could have run waited on another runqueue.

use crate::cpumask::CpuMask;
use crate::sched::sched::{CfsRq, Rq, RqIdle, Wasted};
use crate::sched::task::Task;

impl Wasted {
    /// Fold the wasted-CPU rate of the interval that just ended (at `now`;
    /// nothing counts before `warmup`) and recompute it for the next one
    /// from the runqueues. "Wasted" = a CPU sits idle while a runnable task
    /// allowed on it waits on another runqueue.
    /// O(1) unless a waiting task has a restricted affinity mask.
    pub(crate) fn account(
        &mut self,
        now: u64,
        warmup: u64,
        rqs: &[Rq],
        rq_idle: &[RqIdle],
        tasks: &[Task],
        cfs_rqs: &[CfsRq],
    ) {
        let w = self;
        let from = w.last.max(warmup);
        if now > from {
            w.ns += w.rate * (now - from);
        }
        w.last = now;
        let nr = rqs.len() as u64;
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
            let mut union = CpuMask::new(rqs.len());
            // A group cfs_rq's waiting tasks too (its curr, if any, is on
            // the running task's path).
            for cfs in cfs_rqs {
                for t in cfs.tasks_timeline.iter().filter_map(|&(_, se)| se.task_of()) {
                    if !tasks[t].se.sched_delayed {
                        union.or_assign(&tasks[t].cpus);
                    }
                }
            }
            for rq in rqs {
                if rq.rt.rt_nr_running > 0 {
                    for t in rq.rt.active.iter() {
                        if rq.curr != Some(t) {
                            union.or_assign(&tasks[t].cpus);
                        }
                    }
                }
            }
            let n = union.iter().filter(|&c| !rq_idle[c].has_curr).count() as u64;
            n.min(waiting)
        };
    }

    /// Book-keeping of the wasted-CPU counters when a task allowed on
    /// `nr_cpus_allowed` of the machine's `nr_cpus` CPUs becomes runnable
    /// (`on`) or stops being runnable.
    #[inline]
    pub fn track(&mut self, nr_cpus_allowed: usize, nr_cpus: usize, on: bool) {
        let n = nr_cpus_allowed;
        let slot = if n == 1 {
            &mut self.nr_pinned_runnable
        } else if n < nr_cpus {
            &mut self.nr_restricted
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
