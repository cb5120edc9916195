//! Models the periodic balance trigger and NOHZ idle balancing of
//! kernel/sched/fair.c in the kick model (2.6.36+; `cfg.mech.nohz ==
//! NohzModel::Kick`): trigger_load_balance() from the tick of a busy CPU,
//! nohz_balancer_kick() picking an idle CPU (the ILB) to balance for the
//! tickless ones, nohz_idle_balance(), and the nohz.idle_cpus_mask and
//! per-LLC nr_busy_cpus bookkeeping as CPUs enter and leave idle.
//! The older owner model is `fair/nohz_owner.rs`.

use crate::engine::event::Ev;
use crate::engine::time::Instant;
use crate::sched::env::SchedEnv;
use crate::sched::sched::CpuIdleType;

impl SchedEnv {
    /// trigger_load_balance() from the tick of a busy CPU, its
    /// hard-interrupt half: whether
    /// SCHED_SOFTIRQ is raised (a balance is due), and nohz_balancer_kick().
    /// The caller runs the softirq (`run_rebalance_domains`) afterwards.
    pub(crate) fn trigger_load_balance_kick(&mut self, cpu: usize) -> bool {
        // on_null_domain(): an isolated CPU does not balance, nor kick.
        if self.topo.isolated.test(cpu) {
            return false;
        }
        if self.avg_load_era() && self.trigger_load_balance_avg(cpu) {
            return false; // 2.6.x NOHZ owner model (balance_avg.rs)
        }
        let due = self.now >= self.sched.rqs[cpu].next_balance;
        self.nohz_balancer_kick(cpu);
        due
    }

    /// SCHED_SOFTIRQ on a busy CPU: rebalance_domains().
    pub(crate) fn run_rebalance_domains(&mut self, cpu: usize) {
        let idle = if self.idle_cpu(cpu) { CpuIdleType::Idle } else { CpuIdleType::NotIdle };
        if !self.avg_load_era() {
            self.update_blocked_averages(cpu); // fair/blocked.rs (with groups)
        }
        self.rebalance_domains(cpu, idle);
    }

    pub(crate) fn nohz_balancer_kick(&mut self, cpu: usize) {
        if self.sched.nohz.idle_cpus.is_empty() || self.now < self.sched.nohz.next_balance {
            return;
        }
        let mut kick = self.sched.rqs[cpu].nr_running >= 2;
        if !kick {
            let llc = self.topo.sd_llc_id[cpu];
            kick = self.sched.sds[llc].nr_busy_cpus > 1;
        }
        if !kick {
            return;
        }
        // find_new_ilb(): first idle CPU in the nohz mask.
        let Some(ilb) = self.sched.nohz.idle_cpus.iter().find(|&c| self.idle_cpu(c)) else { return };
        self.sched.nohz.next_balance = self.now + self.cfg.tick_ns;
        let at = self.now + self.cfg.costs.wakeup_ipi_ns;
        self.q.schedule(Instant(at), Ev::NohzKick(ilb));
    }

    /// nohz_idle_balance(): the kicked idle CPU balances for every tickless
    /// idle CPU whose next_balance is due, then for itself. nohz.next_balance
    /// becomes the earliest next_balance of the CPUs it went through; it is
    /// left alone when none was (update_next_balance) or when the walk
    /// stopped because this CPU got work (the abort), as the kernel leaves
    /// it. Until 2026-11-28 the model set it in both cases to the walk's
    /// start value, 60 s ahead, and no busy CPU kicked an idle balancer
    /// again for a minute.
    pub fn nohz_idle_balance(&mut self, ilb: usize) {
        if self.avg_load_era() && self.nohz_owner_model() {
            return self.nohz_ilb_nominated_avg(ilb); // balance_avg.rs
        }
        let cpus: Vec<usize> = self.sched.nohz.idle_cpus.iter().collect();
        let mut next = self.now + 60 * self.cfg.hz as u64 * self.cfg.tick_ns;
        let mut update_next_balance = false;
        for c in cpus.iter().copied().filter(|&c| c != ilb).chain(std::iter::once(ilb)) {
            if !self.idle_cpu(ilb) {
                return; // need_resched: this CPU got work; abort.
            }
            if !self.idle_cpu(c) {
                continue;
            }
            self.update_nohz_stats(c); // fair/blocked.rs (with groups)
            if self.now >= self.sched.rqs[c].next_balance {
                self.sched.lb_exec = (c != ilb).then_some(ilb);
                self.rebalance_domains(c, CpuIdleType::Idle);
                self.sched.lb_exec = None;
            }
            if self.sched.rqs[c].next_balance < next {
                next = self.sched.rqs[c].next_balance;
                update_next_balance = true;
            }
        }
        if update_next_balance {
            self.sched.nohz.next_balance = next;
        }
    }

    pub fn nohz_balance_enter_idle(&mut self, cpu: usize) {
        // "If we're a completely isolated CPU, we don't play" (on_null_domain()).
        if self.sched.rqs[cpu].nohz_idle || !self.idle_cpu(cpu) || self.topo.isolated.test(cpu) {
            return;
        }
        self.sched.rqs[cpu].nohz_idle = true;
        self.sched.nohz.idle_cpus.set(cpu);
        let llc = self.topo.sd_llc_id[cpu];
        self.sched.sds[llc].nr_busy_cpus = self.sched.sds[llc].nr_busy_cpus.saturating_sub(1);
    }

    pub fn nohz_balance_exit_idle(&mut self, cpu: usize) {
        if !self.sched.rqs[cpu].nohz_idle {
            return;
        }
        self.select_nohz_load_balancer_exit(cpu); // avg_load era (balance_avg.rs)
        self.sched.rqs[cpu].nohz_idle = false;
        self.sched.nohz.idle_cpus.clear(cpu);
        let llc = self.topo.sd_llc_id[cpu];
        self.sched.sds[llc].nr_busy_cpus += 1;
    }
}
