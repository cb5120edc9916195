//! Where the scheduler hands over to the rooms above it, in the kernel's
//! order. The scheduler (`sched/`) never calls up; at the three points
//! where the kernel's does, the simulation runs the other room between
//! two calls into the scheduler:
//!
//! - schedule(): a workqueue worker going to sleep first tells its pool
//!   (sched_submit_work -> wq_worker_sleeping), one coming back after it is
//!   picked (wq_worker_running); the picked task's next op starts once it
//!   runs (the interpreter, `workload/interp.rs`).
//! - The tick: the timer softirq's expired timers (vmstat_update) run
//!   between the tick's hard-interrupt part and SCHED_SOFTIRQ.
//! - Blocking (and io_schedule): the worker's hook before the task leaves
//!   its runqueue (kthread/floor.rs).

use crate::sched::core::Switch;
use crate::sched::task::TaskId;
use crate::sim::Sim;

impl Sim {
    /// Run schedule() on every CPU marked need_resched, until none is
    /// (a switch may mark others).
    pub(crate) fn flush_resched(&mut self) {
        // Two buffers swapped back and forth: no allocation per event.
        let mut cpus = std::mem::take(&mut self.w.m.kt.k.sched.resched_spare);
        while !self.w.m.kt.k.sched.resched_pending.is_empty() {
            std::mem::swap(&mut cpus, &mut self.w.m.kt.k.sched.resched_pending);
            cpus.sort_unstable();
            cpus.dedup();
            for &cpu in &cpus {
                if self.w.m.kt.k.sched.rqs[cpu].need_resched {
                    self.schedule(cpu);
                }
            }
            cpus.clear();
        }
        self.w.m.kt.k.sched.resched_spare = cpus;
    }

    /// __schedule() on `cpu` (sched/core.rs), with the workqueue's and the
    /// interpreter's parts at their places.
    pub fn schedule(&mut self, cpu: usize) {
        let (prev, n, class, stopper) = match self.w.m.kt.k.schedule_pick(cpu) {
            Switch::Stay | Switch::Idle => return,
            Switch::To { prev, next, class, stopper } => (prev, next, class, stopper),
        };
        if self.w.m.kt.k.sched.tasks[n].worker.is_some() {
            self.w.m.kt.wq_worker_running(n); // kthread/workqueue.rs
        }
        let s = &mut self.w.m.kt.k;
        s.context_switch(cpu, prev, n, stopper);
        if s.sched.tasks[n].throttle_work {
            // Picked below a throttled cfs_rq, it parks as it returns to
            // user space, before its program goes on (6.18,
            // sched/fair/throttle_task.rs).
            s.throttle_cfs_rq_work(cpu, n);
        }
        if s.switched_in_ready(cpu, n) && !s.sched.tasks[n].throttled {
            self.w.advance(n); // workload/interp.rs
        }
        self.w.m.kt.k.schedule_finish(cpu, n, class);
    }

    /// The tick on `cpu`: its hard-interrupt part (sched_tick,
    /// trigger_load_balance), TIMER_SOFTIRQ (the kernel's timers that
    /// expired: kthread/vmstat.rs), then SCHED_SOFTIRQ.
    pub(crate) fn scheduler_tick(&mut self, cpu: usize) {
        let Some(balance_due) = self.w.m.kt.k.scheduler_tick(cpu) else {
            return;
        };
        self.w.m.kt.run_housekeeping_timer(cpu);
        self.w.m.kt.k.run_tick_softirq(cpu, balance_due);
    }

    /// A running task goes to sleep (sched/core.rs `block`); a workqueue
    /// worker first lets its pool know (sched_submit_work; kthread/floor.rs).
    pub fn block(&mut self, tid: TaskId) {
        self.w.m.kt.block(tid); // kthread/floor.rs
    }
}
