//! Models RT_PUSH_IPI of kernel/sched/rt.c (docs/LINUX-FACTS.md §5.6): a
//! CPU that lowers its priority does not take every overloaded runqueue's
//! lock to pull; it starts (or re-arms) one irq_work that hops from one
//! RT-overloaded CPU to the next, each pushing its waiting tasks.

use crate::engine::event::Ev;
use crate::engine::Instant;
use crate::sched::env::SchedEnv;

impl SchedEnv {
    /// rto_next_cpu(): the next CPU of rto_mask after rto_cpu (not
    /// `this_cpu` with `rto_skip_self`); at the end of the mask, another
    /// pass if a request came in meanwhile (rto_loop_next moved), else None.
    fn rto_next_cpu(&mut self, this_cpu: usize) -> Option<usize> {
        loop {
            let from = self.sched.rd.rto_push.rto_cpu.map_or(0, |c| c + 1);
            if let Some(cpu) = self.sched.rd.rto_mask.iter().find(|&c| c >= from) {
                self.sched.rd.rto_push.rto_cpu = Some(cpu);
                if cpu == this_cpu && self.cfg.mech.rto_skip_self {
                    continue;
                }
                return Some(cpu);
            }
            self.sched.rd.rto_push.rto_cpu = None;
            if self.sched.rd.rto_push.rto_loop == self.sched.rd.rto_push.rto_loop_next {
                return None;
            }
            self.sched.rd.rto_push.rto_loop = self.sched.rd.rto_push.rto_loop_next;
        }
    }

    /// tell_cpu_to_push(): note the request; if no chain runs, start one at
    /// the first overloaded CPU. Each hop is an IPI (costs.wakeup_ipi).
    pub(crate) fn tell_cpu_to_push(&mut self, this_cpu: usize) {
        self.sched.rd.rto_push.rto_loop_next += 1;
        if self.sched.rd.rto_push.rto_loop_start {
            return;
        }
        self.sched.rd.rto_push.rto_loop_start = true;
        match self.rto_next_cpu(this_cpu) {
            Some(cpu) => self.send_rto_push_ipi(cpu),
            None => self.sched.rd.rto_push.rto_loop_start = false,
        }
    }

    fn send_rto_push_ipi(&mut self, cpu: usize) {
        self.sched.rd.rto_push.ipis += 1;
        let at = self.now + self.cfg.costs.wakeup_ipi_ns;
        self.q.schedule(Instant(at), Ev::RtoPushIpi(cpu));
    }

    /// rto_push_irq_work_func(): push this CPU's waiting RT tasks if it is
    /// still overloaded, then forward the irq_work to the next overloaded
    /// CPU, or end the chain.
    #[inline(never)] // RT-only: keep it out of the fair hot path
    pub fn rto_push_irq_work_func(&mut self, cpu: usize) {
        if self.sched.rqs[cpu].rt.overloaded {
            self.push_rt_tasks(cpu);
        }
        match self.rto_next_cpu(cpu) {
            Some(next) => self.send_rto_push_ipi(next),
            None => self.sched.rd.rto_push.rto_loop_start = false,
        }
    }
}
