//! Models kernel/sched/idle.c: the idle class, lowest of all, whose only
//! task is each CPU's idle task. In the model a CPU with `rq.curr == None`
//! runs its idle task (see `sched/class.rs`). What the CPU does while idle
//! (cpuidle states, their exit latency) belongs in `idle/` (cpuidle), not
//! here.

use crate::sched::class::{IdleSchedClass, Pick, SchedClassOps, WakeSource};
use crate::sched::task::TaskId;
use crate::sim::Sim;

impl SchedClassOps for IdleSchedClass {
    fn enqueue_task(_sim: &mut Sim, _cpu: usize, _p: TaskId, _flags: u32) {
        unreachable!("the idle task is never queued")
    }

    fn dequeue_task(_sim: &mut Sim, _cpu: usize, _p: TaskId, _flags: u32) -> bool {
        unreachable!("the idle task is never queued")
    }

    /// pick_next_task_idle(): the idle task, always.
    fn pick_next_task(_sim: &mut Sim, _cpu: usize, _newidle: bool) -> Pick {
        Pick::Idle
    }

    fn select_task_rq(_sim: &mut Sim, _p: TaskId, cpu: usize, _wake_flags: u32, _src: WakeSource) -> usize {
        cpu
    }
}

impl Sim {
    /// set_next_task_idle(): `cpu` switches to its idle task: count the
    /// schedstat sched_goidle, stamp the idle period for avg_idle, and note
    /// a fully idle core for select_idle_core (update_idle_core).
    pub fn set_next_task_idle(&mut self, cpu: usize) {
        self.rqs[cpu].stats.sched_goidle += 1;
        self.rqs[cpu].idle_stamp = Some(self.now);
        self.update_idle_core(cpu);
        self.cpuidle_enter(cpu, true);
    }
}
