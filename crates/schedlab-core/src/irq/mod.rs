//! Models interrupt time on a CPU (kernel/irq/, kernel/softirq.c) as far as
//! the scheduler sees it: a hard interrupt takes the CPU from whatever runs
//! there (or wakes it from its idle state), its handler runs, then the
//! softirq it raised (BLOCK_SOFTIRQ) runs on the same CPU on the way out,
//! and what the handlers do (wake a task, queue a work item) happens at
//! the end. The time is /proc/stat's irq and softirq.
//!
//! The handlers take the kernel threads' view (`KthreadFloor`: the
//! scheduler, the block layer, the workqueues a completion queues work
//! on), nothing above it.
//!
//! The handlers of one CPU run one after another: an interrupt arriving
//! while another's handler runs starts when it ends.
//!
//! Deviation: the interrupted task is charged the handlers' time as a
//! delay of its work (as with IRQ_TIME_ACCOUNTING, its runtime excludes
//! them); if it is switched out while a handler it was interrupted by is
//! still running, the rest of the delay goes with it.

use crate::engine::event::Ev;
use crate::engine::time::Instant;
use crate::kthread::floor::KthreadFloor;
use crate::sched::sched::{CpuWindow, WindowKind};

pub mod blk;

pub use crate::engine::event::IrqAction;

impl KthreadFloor {
    /// A hard interrupt arrives on `cpu` now: a hard handler of `hard_ns`,
    /// then the softirq it raised for `soft_ns` (0: none), then `action`.
    pub fn raise_irq(&mut self, cpu: usize, hard_ns: u64, soft_ns: u64, action: IrqAction) {
        self.k.sched.account_cpu(cpu, self.k.now);
        let now = self.k.now;
        let busy_until = self.k.sched.rqs[cpu]
            .windows
            .iter()
            .map(|w| w.end)
            .max()
            .unwrap_or(0)
            .max(self.k.sched.rqs[cpu].busy_until);
        let mut start = now.max(busy_until);
        if self.k.sched.rqs[cpu].curr.is_none() && busy_until <= now && self.k.sched.rqs[cpu].nr_running == 0 {
            // The interrupt wakes the CPU from its idle state.
            let exit = if self.k.cpuidle.enabled() {
                self.k.cpuidle_exit(cpu).map_or(0, |x| x.exit_latency_ns)
            } else {
                self.k.cfg.costs.idle_exit_ns
            };
            if exit > 0 {
                self.k.sched.rqs[cpu].windows.push(CpuWindow { start: now, end: now + exit, kind: WindowKind::Idle });
            }
            start = now + exit;
        }
        let hard_end = start + hard_ns;
        let end = hard_end + soft_ns;
        let rq = &mut self.k.sched.rqs[cpu];
        rq.busy_until = rq.busy_until.max(end);
        rq.windows.push(CpuWindow { start, end: hard_end, kind: WindowKind::Irq });
        if soft_ns > 0 {
            rq.windows.push(CpuWindow { start: hard_end, end, kind: WindowKind::Soft });
        }
        if let Some(curr) = self.k.sched.rqs[cpu].curr {
            // The task's work waits for the handlers: it resumes at their
            // end (its runtime to now is settled first).
            self.k.update_curr(cpu);
            let t = &mut self.k.sched.tasks[curr].se;
            t.exec_start = t.exec_start.max(end);
            self.k.arm_op_timer(cpu);
        }
        self.k.q.schedule(Instant(end), Ev::IrqDone(cpu as u32, action));
    }

    /// The handlers of an interrupt on `cpu` are done: do what they do; an
    /// idle CPU that nothing was woken on goes back to its idle state.
    #[inline(never)]
    pub(crate) fn irq_done(&mut self, cpu: usize, action: IrqAction) {
        match action {
            IrqAction::BlkComplete(req) => self.blk_complete_request(cpu, req as usize),
            IrqAction::BlkIpi(req) => self.blk_complete_ipi(cpu, req as usize),
        }
        let rq = &self.k.sched.rqs[cpu];
        let handlers_left = rq.windows.iter().any(|w| w.end > self.k.now);
        if rq.curr.is_none() && rq.nr_running == 0 && !rq.need_resched && !handlers_left {
            self.k.cpuidle_enter(cpu, false);
        }
    }
}
