//! The NOHZ "owner" model of 2.6.2x .. 2.6.35 (`cfg.mech.nohz ==
//! NohzModel::Owner`) [sched.c, sched_fair.c @2.6.35]: one idle CPU,
//! nohz.load_balancer, keeps its tick and balances for every tickless idle
//! CPU. 2.6.36 replaced it with the kick model of `fair/nohz.rs`.

use crate::engine::event::Ev;
use crate::engine::time::Instant;
use crate::kernel::NohzModel;
use crate::sched::env::SchedEnv;
use crate::sched::sched::CpuIdleType;

impl SchedEnv {
    /// The NOHZ "owner" model (2.6.2x .. 2.6.35): one idle CPU,
    /// nohz.load_balancer, keeps its tick and balances for every tickless
    /// idle CPU. 2.6.36 replaced it with the kick model of fair/balance.rs.
    pub fn nohz_owner_model(&self) -> bool {
        self.cfg.mech.nohz == NohzModel::Owner
    }

    /// A tick on an idle CPU (scheduler_tick() with the idle task current).
    /// In the owner model this is where the CPU stops its tick
    /// (tick_nohz_stop_sched_tick -> select_nohz_load_balancer(1)): it joins
    /// nohz.cpu_mask; it becomes the owner if there is none, and then keeps
    /// ticking; when every CPU is idle nobody needs balancing and the owner
    /// gives up. Deviation: the kernel stops the tick on idle entry, schedlab
    /// at the next tick.
    pub fn scheduler_tick_idle_avg(&mut self, cpu: usize) {
        self.nohz_balance_enter_idle(cpu);
        if !self.nohz_owner_model() {
            return;
        }
        self.sched.rqs[cpu].in_nohz_recently = true;
        if self.sched.nohz.idle_cpus.weight() == self.sched.rqs.len() {
            if self.sched.nohz.load_balancer == Some(cpu) {
                self.sched.nohz.load_balancer = None;
            }
            return;
        }
        match self.sched.nohz.load_balancer {
            None => self.sched.nohz.load_balancer = Some(cpu),
            Some(c) if c != cpu => return,
            _ => {}
        }
        // The owner's tick: update_cpu_load (load 0) and trigger_load_balance.
        self.update_cpu_load(cpu);
        self.trigger_load_balance_avg(cpu);
        if self.sched.nohz.load_balancer == Some(cpu) && self.idle_cpu(cpu) && self.sched.rqs[cpu].tick_key.is_none() {
            let at = self.now + self.cfg.tick_ns;
            self.sched.rqs[cpu].tick_key = Some(self.q.schedule(Instant(at), Ev::Tick(cpu)));
        }
    }

    /// trigger_load_balance() [sched_fair.c @2.6.35] in the owner model.
    /// A busy CPU that was tickless recently nominates a new owner when there
    /// is none (find_new_ilb: the first CPU of nohz.cpu_mask, woken with
    /// resched_cpu). SCHED_SOFTIRQ runs when next_balance is due. Returns
    /// false for versions with the kick model (the caller goes on).
    pub fn trigger_load_balance_avg(&mut self, cpu: usize) -> bool {
        if !self.nohz_owner_model() {
            return false;
        }
        let idle_at_tick = self.idle_cpu(cpu);
        if self.sched.rqs[cpu].in_nohz_recently && !idle_at_tick {
            self.sched.rqs[cpu].in_nohz_recently = false;
            if self.sched.nohz.load_balancer == Some(cpu) {
                self.sched.nohz.load_balancer = None;
            }
            if self.sched.nohz.load_balancer.is_none() {
                if let Some(ilb) = self.sched.nohz.idle_cpus.first() {
                    let at = self.now + self.cfg.costs.wakeup_ipi_ns;
                    self.q.schedule(Instant(at), Ev::NohzKick(ilb));
                }
            }
        }
        if self.now >= self.sched.rqs[cpu].next_balance {
            self.run_rebalance_domains_avg(cpu, idle_at_tick);
        }
        true
    }

    /// run_rebalance_domains() [sched_fair.c @2.6.35]: this CPU's domains,
    /// then, for the owner, every other tickless CPU's (all of them: each
    /// domain's own interval decides), stopping if the owner got work.
    pub(crate) fn run_rebalance_domains_avg(&mut self, cpu: usize, idle_at_tick: bool) {
        let idle = if idle_at_tick { CpuIdleType::Idle } else { CpuIdleType::NotIdle };
        self.rebalance_domains_avg(cpu, idle);
        if !(idle_at_tick && self.sched.nohz.load_balancer == Some(cpu)) {
            return;
        }
        let others: Vec<usize> = self.sched.nohz.idle_cpus.iter().filter(|&c| c != cpu).collect();
        for c in others {
            if !self.idle_cpu(cpu) {
                break; // need_resched(): the owner has work now.
            }
            self.sched.lb_exec = Some(cpu);
            self.rebalance_domains_avg(c, CpuIdleType::Idle);
            self.sched.lb_exec = None;
            let nb = self.sched.rqs[c].next_balance;
            if self.sched.rqs[cpu].next_balance > nb {
                self.sched.rqs[cpu].next_balance = nb;
            }
        }
    }

    /// The nominated idle CPU wakes (resched_cpu): schedule() runs
    /// idle_balance(), and back in the idle loop select_nohz_load_balancer(1)
    /// makes it the owner if there still is none; its tick restarts.
    pub fn nohz_ilb_nominated_avg(&mut self, ilb: usize) {
        if !self.idle_cpu(ilb) {
            return;
        }
        if self.idle_balance_avg(ilb) > 0 {
            return;
        }
        self.sched.rqs[ilb].in_nohz_recently = true;
        if self.sched.nohz.idle_cpus.weight() == self.sched.rqs.len() || self.sched.nohz.load_balancer.is_some() {
            return;
        }
        self.sched.nohz.load_balancer = Some(ilb);
        self.tick_restart(ilb);
    }

    /// select_nohz_load_balancer(0): a CPU leaving idle gives up ownership.
    pub fn select_nohz_load_balancer_exit(&mut self, cpu: usize) {
        if self.avg_load_era() && self.sched.nohz.load_balancer == Some(cpu) {
            self.sched.nohz.load_balancer = None;
        }
    }
}
