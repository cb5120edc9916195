//! The balancer forms of kernel/sched.c in 2.6.24 and 2.6.25, the modelled
//! versions before 2.6.35 (`cfg.mech.lb_sched_c_2625`): find_busiest_group
//! with its own group_imb test and imbalance arithmetic
//! (calculate_imbalance_2625 in `sd_lb_stats.rs`), balance_tasks with
//! SCHED_LOAD_SCALE_FUZZ and the highest-priority exception
//! (`balance_avg.rs`), and load_balance_newidle() apart from
//! load_balance(), whose failures never lead to active balance.

use crate::cpumask::CpuMask;
use crate::sched::env::SchedEnv;
use crate::sched::fair::balance_avg::{AvgEnv, Pass};
use crate::sched::sched::CpuIdleType;
use crate::sched::sd_flags::SD_SHARE_CPUPOWER;

impl SchedEnv {
    /// The balancer forms of kernel/sched.c in 2.6.24 and 2.6.25, the
    /// modelled versions before 2.6.35: find_busiest_group with its own
    /// group_imb test and imbalance arithmetic (calculate_imbalance_2625),
    /// balance_tasks with SCHED_LOAD_SCALE_FUZZ and the highest-priority
    /// exception, and load_balance_newidle() apart from load_balance().
    /// Each changed somewhere in 2.6.26 .. 2.6.33.
    #[inline]
    pub(crate) fn lb_2625(&self) -> bool {
        self.cfg.mech.lb_sched_c_2625
    }

    /// load_balance_newidle() [sched.c @2.6.24, @2.6.25]: the newidle pass
    /// before 2.6.32 folded it into load_balance(). A failure is only
    /// counted in schedstat: nr_balance_failed, active balance and the
    /// balance interval are left to the periodic pass; a success or a
    /// balanced domain clears nr_balance_failed. Returns tasks pulled, 0, or
    /// -1 when an SMT domain found nothing while a sibling is busy.
    pub(crate) fn load_balance_newidle_2625(&mut self, this_cpu: usize, lvl: usize) -> i32 {
        let sd = self.topo.cpu_domains[this_cpu][lvl];
        let share_power = self.topo.domains[sd].flags & SD_SHARE_CPUPOWER != 0;
        let ix = CpuIdleType::NewlyIdle as usize;
        let mut env =
            AvgEnv { sd, lvl, this_cpu, idle: CpuIdleType::NewlyIdle, cpus: CpuMask::full(self.sched.rqs.len()) };
        let mut sd_idle = share_power;
        let mut balance = true;
        self.sched.rqs[this_cpu].sd[lvl].stats.lb_count[ix] += 1;
        let mut moved = 0;
        loop {
            let Some((g, imbalance)) = self.find_busiest_group_avg(&env, &mut sd_idle, &mut balance) else {
                self.sched.rqs[this_cpu].sd[lvl].stats.lb_nobusyg[ix] += 1;
                return self.lb_newidle_balanced_2625(this_cpu, lvl, sd_idle, share_power);
            };
            let Some(busiest) = self.find_busiest_queue_avg(g, imbalance, &env.cpus) else {
                self.sched.rqs[this_cpu].sd[lvl].stats.lb_nobusyq[ix] += 1;
                return self.lb_newidle_balanced_2625(this_cpu, lvl, sd_idle, share_power);
            };
            self.sched.rqs[this_cpu].sd[lvl].stats.lb_imbalance[ix] += imbalance;
            if self.sched.rqs[busiest].nr_running > 1 {
                let mut all_pinned = false;
                let (_, n) = self.move_tasks_avg(
                    this_cpu,
                    busiest,
                    imbalance,
                    lvl,
                    CpuIdleType::NewlyIdle,
                    &mut all_pinned,
                    Pass::Normal,
                );
                moved = n;
                if all_pinned {
                    // Unlike load_balance(), an emptied mask falls through
                    // to the failure below.
                    env.cpus.clear(busiest);
                    if !env.cpus.is_empty() {
                        continue;
                    }
                }
            }
            break;
        }
        let st = &mut self.sched.rqs[this_cpu].sd[lvl];
        if moved == 0 {
            st.stats.lb_failed[ix] += 1;
            return if !sd_idle && share_power { -1 } else { 0 };
        }
        st.nr_balance_failed = 0;
        st.stats.lb_gained[ix] += moved as u64;
        moved as i32
    }

    /// load_balance_newidle()'s out_balanced [sched.c @2.6.25].
    pub(crate) fn lb_newidle_balanced_2625(
        &mut self,
        this_cpu: usize,
        lvl: usize,
        sd_idle: bool,
        share_power: bool,
    ) -> i32 {
        let st = &mut self.sched.rqs[this_cpu].sd[lvl];
        st.stats.lb_balanced[CpuIdleType::NewlyIdle as usize] += 1;
        if !sd_idle && share_power {
            return -1;
        }
        st.nr_balance_failed = 0;
        0
    }
}
