//! The end of the running task's current op. The model runs a task's
//! program op by op (`workload/interp.rs`); while it runs a compute op, the
//! one event that stands for "the task reaches its next syscall" is armed
//! here, and re-armed whenever the task's progress changes: it is switched
//! in, an interrupt holds it up, its runtime is charged.
//!
//! Deviation: the kernel has no such timer; a real task simply reaches its
//! next system call. The event is how a discrete-event model lets the CPU
//! time of an op pass.

use crate::engine::event::Ev;
use crate::engine::time::Instant;
use crate::sched::env::SchedEnv;

impl SchedEnv {
    /// Arm the completion event of the current op of the task on `cpu`.
    pub fn arm_op_timer(&mut self, cpu: usize) {
        self.membw_update(cpu); // sched/membw.rs
        let Some(tid) = self.sched.rqs[cpu].curr else {
            if let Some(k) = self.sched.rqs[cpu].op_key.take() {
                self.q.cancel(k);
            }
            return;
        };
        let t = &self.sched.tasks[tid];
        // A task that has not started yet (its CPU leaving an idle state or
        // in an interrupt handler: exec_start ahead) starts at exec_start.
        let from = t.se.exec_start.max(self.now);
        let at = if let Some(end) = t.runtime_end {
            (from + t.cs_debt).max(end)
        } else if t.work_left > 0 || t.cs_debt > 0 {
            let rq = &self.sched.rqs[cpu];
            let speed = crate::cpufreq::task_speed(rq.cpu_speed, t.memory_bound, rq.mem_stall);
            from + t.cs_debt + crate::cpufreq::wall_for(t.work_left, speed)
        } else if t.need_advance || t.op_done_owed || from > self.now {
            // Its next op (or the end of the one an interrupt held up, or
            // of the one whose end came with the switch that took it off).
            from
        } else {
            if let Some(k) = self.sched.rqs[cpu].op_key.take() {
                self.q.cancel(k);
            }
            return;
        };
        // The completion time of a running op does not move while the task
        // keeps running, so most re-arms are no-ops: skip the cancel/insert.
        if self.sched.rqs[cpu].op_key.is_some() && self.sched.rqs[cpu].op_at == at {
            return;
        }
        if let Some(k) = self.sched.rqs[cpu].op_key.take() {
            self.q.cancel(k);
        }
        self.sched.rqs[cpu].op_at = at;
        self.sched.rqs[cpu].op_key = Some(self.q.schedule(Instant(at), Ev::OpDone(cpu)));
    }
}

#[cfg(test)]
#[path = "op_timer_tests.rs"]
mod tests;
