//! The RT legacy era: kernels before the 2.6.25 push/pull series
//! (docs/LINUX-FACTS.md §5.3; seed 004).
//!
//! In 2.6.24 an RT task was balanced like any other task:
//!
//! * it carried a CFS-style load weight of twice nice −20's
//!   (`set_load_weight`: prio_to_weight[0] × 2 = 177522), counted in
//!   `rq->load` ("capture load from *all* tasks on this cpu"), so the
//!   generic avg_load balancer of `fair/balance_avg.rs` saw it;
//! * `move_tasks` walked the classes from the highest, so the RT class's
//!   `load_balance_rt` iterator (highest priority first) offered its
//!   waiting tasks before any CFS task, and `balance_tasks` pulled a task
//!   too heavy for the imbalance when it would be the highest priority on
//!   its new runqueue ("to help distribute high priority tasks");
//! * active balance went through the per-CPU migration thread;
//! * there was no RT placement at wakeup: `try_to_wake_up` applied the
//!   same affine / passive-balance tests and `wake_idle` to every class,
//!   and `idle_cpu()` was only `rq->curr == rq->idle`, so several tasks
//!   woken in one burst could all land on the same not-yet-switched CPU.
//!
//! Nothing here runs from 2.6.25 on (`cfg.mech.rt_balance`).

use crate::prio::MAX_RT_PRIO;
use crate::sched::env::SchedEnv;
use crate::sched::sd_flags::{SD_WAKE_AFFINE, SD_WAKE_BALANCE, SD_WAKE_IDLE};
use crate::sched::task::TaskId;

impl SchedEnv {
    /// The kernel predates the push/pull series: RT tasks are balanced by
    /// the generic load balancer (2.6.24 and before).
    #[inline]
    pub fn rt_legacy(&self) -> bool {
        !self.cfg.mech.rt_push_pull()
    }

    /// idle_cpu() before 2.6.3x: `rq->curr == rq->idle`, nothing else. A CPU
    /// that was just handed a task but has not switched to it yet still
    /// counts as idle.
    #[inline]
    fn idle_cpu_legacy(&self, cpu: usize) -> bool {
        self.sched.rqs[cpu].curr.is_none()
    }

    /// try_to_wake_up()'s placement in 2.6.24, for every class [sched.c
    /// @2.6.24]: stay if the task last ran on the waking CPU; else, in the
    /// lowest domain of the waker spanning prev, move to the waker's CPU when
    /// SD_WAKE_AFFINE finds no bad imbalance or when SD_WAKE_BALANCE sees
    /// half the imbalance_pct; then wake_idle(). `this_cpu` is the waker's.
    /// Wakeups from the modelled ops (futex-style barrier, event, timer)
    /// are not sync wakeups.
    pub fn select_task_rq_legacy(&mut self, p: TaskId, prev: usize, this_cpu: usize) -> usize {
        let allowed = |s: &SchedEnv, c: usize| s.sched.tasks[p].cpus.test(c);
        let mut new_cpu = prev;
        if prev != this_cpu && allowed(self, this_cpu) {
            let this_sd = self.topo.cpu_domains[this_cpu]
                .iter()
                .copied()
                .find(|&d| self.topo.domains[d].span.binary_search(&prev).is_ok());
            if let Some(d) = this_sd {
                let dom = &self.topo.domains[d];
                let (idx, flags) = (dom.wake_idx, dom.flags);
                let imbalance = 100 + (dom.imbalance_pct as u64 - 100) / 2;
                let load = self.source_load(prev, idx);
                let this_load = self.target_load(this_cpu, idx);
                let mut affine = false;
                if flags & SD_WAKE_AFFINE != 0 {
                    let tl = this_load;
                    let tl_per_task = self.cpu_avg_load_per_task(this_cpu);
                    let w = self.lb_task_load(p);
                    affine = (tl <= load && tl + self.target_load(prev, idx) <= tl_per_task)
                        || 100 * (tl + w) <= imbalance * load;
                }
                // Passive balancing when half the imbalance_pct is reached.
                let passive = flags & SD_WAKE_BALANCE != 0 && imbalance * this_load <= 100 * load;
                if affine || passive {
                    new_cpu = this_cpu;
                }
            }
        }
        let new_cpu =
            if allowed(self, new_cpu) { new_cpu } else { self.sched.tasks[p].cpus.first().unwrap_or(new_cpu) };
        self.wake_idle_legacy(new_cpu, p)
    }

    /// wake_idle() [sched.c @2.6.24]: keep an idle CPU, or one that already
    /// has more than one task; else the first idle CPU of the SD_WAKE_IDLE
    /// domains above it (bottom-up, stopping at the first without the flag).
    fn wake_idle_legacy(&self, cpu: usize, p: TaskId) -> usize {
        if self.idle_cpu_legacy(cpu) || self.sched.rqs[cpu].nr_running > 1 {
            return cpu;
        }
        for &d in &self.topo.cpu_domains[cpu] {
            let dom = &self.topo.domains[d];
            if dom.flags & SD_WAKE_IDLE == 0 {
                break;
            }
            if let Some(&i) = dom.span.iter().find(|&&i| self.sched.tasks[p].cpus.test(i) && self.idle_cpu_legacy(i)) {
                return i;
            }
        }
        cpu
    }

    /// load_balance_start_rt / load_balance_next_rt [sched_rt.c @2.6.24]:
    /// the queued RT tasks from the highest priority down, each list from
    /// its tail (the most recently queued first). The running task is in
    /// the list; can_migrate_task() turns it down.
    pub fn rt_tasks_lb_order(&self, cpu: usize) -> Vec<TaskId> {
        let active = &self.sched.rqs[cpu].rt.active;
        let mut v = Vec::with_capacity(self.sched.rqs[cpu].rt.rt_nr_running as usize);
        for prio in 0..MAX_RT_PRIO {
            if active.len_at(prio) > 0 {
                v.extend(active.tasks_at(prio).rev());
            }
        }
        v
    }
}
