//! rq->nr_running and the runqueue's idle tests (kernel/sched/sched.h's
//! add_nr_running() and sub_nr_running(), core.c's idle_cpu(), fair.c's
//! sched_idle_cpu()), with the dense copies the idle scans read
//! (`Sched::rq_idle`, `Sched::idle_mask`).

use crate::sched::env::SchedEnv;

impl SchedEnv {
    pub fn add_nr_running(&mut self, cpu: usize) {
        self.sched.wasted.total_nr_running += 1;
        self.sched.rqs[cpu].nr_running += 1;
        self.sched.rq_idle[cpu].nr_running += 1;
        self.rq_idle_changed(cpu);
        if self.sched.rqs[cpu].nr_running == 2 {
            self.sched.rd.nr_overloaded += 1;
        }
        self.psi_update(cpu); // sched/psi.rs
    }

    pub fn sub_nr_running(&mut self, cpu: usize) {
        self.sched.wasted.total_nr_running -= 1;
        self.sched.rqs[cpu].nr_running -= 1;
        self.sched.rq_idle[cpu].nr_running -= 1;
        self.rq_idle_changed(cpu);
        if self.sched.rqs[cpu].nr_running == 1 {
            self.sched.rd.nr_overloaded -= 1;
        }
        self.psi_update(cpu);
    }

    /// Keep `idle_mask` (where there is one) with `rq_idle[cpu]`: set where
    /// available_idle_cpu() or sched_idle_cpu() holds. Called after each
    /// change of its fields.
    #[inline]
    pub(crate) fn rq_idle_changed(&mut self, cpu: usize) {
        if self.sched.idle_mask.is_some() {
            let idle = self.idle_cpu(cpu) || self.sched_idle_cpu(cpu);
            if let Some(m) = &mut self.sched.idle_mask {
                m.assign(cpu, idle);
            }
        }
    }

    /// `idle_mask` (where there is one) says what rq_idle does (the
    /// checker).
    pub(crate) fn idle_mask_agrees(&self, cpu: usize) -> bool {
        let idle = self.idle_cpu(cpu) || self.sched_idle_cpu(cpu);
        self.sched.idle_mask.as_ref().is_none_or(|m| m.test(cpu) == idle)
    }

    /// idle_cpu(): nothing running and nothing queued.
    #[inline]
    pub fn idle_cpu(&self, cpu: usize) -> bool {
        let rq = &self.sched.rq_idle[cpu];
        !rq.has_curr && rq.nr_running == 0
    }

    /// sched_idle_cpu() (5.4+): only SCHED_IDLE tasks are runnable.
    #[inline]
    pub fn sched_idle_cpu(&self, cpu: usize) -> bool {
        let rq = &self.sched.rq_idle[cpu];
        self.cfg.mech.sched_idle_cpu && rq.nr_running > 0 && rq.nr_running == rq.idle_h_nr_running
    }
}
