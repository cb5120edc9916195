//! Models kernel/sched/stop_task.c and the per-CPU stopper of
//! kernel/stop_machine.c: the highest class, one "migration/N" thread per
//! CPU that preempts anything. The balancer's active balance runs on it
//! (active_load_balance_cpu_stop; in 2.6.x the SCHED_FIFO-99 migration
//! thread did the same job).
//!
//! Deviation: the stopper is not a task of the model. A kicked active
//! balance is an event (`Ev::ActiveBalance`); while it runs, `rq.curr` is
//! None and `rq.stopper_running` says the CPU belongs to the stopper, so the
//! trace shows `migration/N`; its work takes no time beyond the two context
//! switches charged to the task it preempts.

use crate::sched::class::{Pick, SchedClassOps, StopSchedClass, WakeSource};
use crate::sched::env::SchedEnv;
use crate::sched::task::TaskId;
use crate::trace::Ctx;

impl SchedClassOps for StopSchedClass {
    fn enqueue_task(_sim: &mut SchedEnv, _cpu: usize, _p: TaskId, _flags: u32) {
        unreachable!("no task of the model is in the stop class")
    }

    fn dequeue_task(_sim: &mut SchedEnv, _cpu: usize, _p: TaskId, _flags: u32) -> bool {
        unreachable!("no task of the model is in the stop class")
    }

    /// pick_next_task_stop(): the stopper runs as an event, never picked.
    fn pick_next_task(_sim: &mut SchedEnv, _cpu: usize, _newidle: bool) -> Pick {
        Pick::Empty
    }

    /// select_task_rq_stop(): the stopper never migrates.
    fn select_task_rq(_sim: &mut SchedEnv, _p: TaskId, cpu: usize, _wake_flags: u32, _src: WakeSource) -> usize {
        cpu
    }
}

impl SchedEnv {
    /// active_load_balance_cpu_stop(): runs on `busiest` as the stopper.
    /// The stopper (migration thread) runs on `busiest` for a kicked active
    /// balance: clear the request and charge the preempted task the two
    /// switches. Returns push_cpu, or None if nothing was requested.
    pub(crate) fn stopper_enter(&mut self, busiest: usize) -> Option<usize> {
        if !self.sched.rqs[busiest].active_balance {
            return None;
        }
        self.sched.rqs[busiest].active_balance = false;
        self.sched.rqs[busiest].stopper_running = true;
        self.update_curr(busiest);
        if let Some(c) = self.sched.rqs[busiest].curr {
            self.sched.tasks[c].cs_debt += 2 * self.cfg.costs.context_switch_ns;
        }
        Some(self.sched.rqs[busiest].push_cpu)
    }

    /// The stopper (or 2.6.x migration thread) preempts `p`, the task
    /// running on `cpu`, so that active balance may move it: its CPU time is
    /// booked, it goes back into the tree, and the CPU is left to the
    /// stopper (idle for the model) until schedule() runs.
    pub fn stopper_preempt_curr(&mut self, cpu: usize, p: TaskId) {
        self.sched.account_cpu(cpu, self.now);
        // The next task is the stopper, of no fair level: p's group
        // entities are all put. (`picked` was the last switch's; with it,
        // a group entity stayed current here after p moved away, and the
        // next pick lost it: difftest --groups, a run gone idle for good.)
        self.sched.rqs[cpu].picked = None;
        self.sched.tasks[p].sched_class().put_prev_task(self, cpu, p, true);
        self.cpufreq_busy_changed(cpu, false); // sched/cpufreq.rs
        self.sched.rqs[cpu].curr = None;
        self.sched.rq_idle[cpu].has_curr = false;
        self.rq_idle_changed(cpu);
        self.sched.rqs[cpu].stopper_running = true;
        self.sched.wasted.nr_idle_cpus += 1;
        if self.sched.tasks[p].nr_cpus_allowed == 1 {
            self.sched.wasted.nr_pinned_running -= 1;
        }
        if let Some(k) = self.sched.rqs[cpu].op_key.take() {
            self.q.cancel(k);
        }
        self.sched.tasks[p].stats.nivcsw += 1;
        self.sched.tasks[p].stats.nr_switches += 1;
        self.trace.sched_switch(self.now, cpu, Ctx::Task(&self.sched.tasks[p]), Ctx::Stopper);
    }
}
