//! Models the fork and wakeup placement of kernel/sched_fair.c in 2.6.35
//! (the avg_load era): find_idlest_group / find_idlest_cpu on cpu_load[]
//! (SD_BALANCE_FORK/EXEC), wake_affine with source/target_load at wake_idx,
//! and the 2.6.35 select_idle_sibling. docs/LINUX-FACTS.md §3.10, 4.2, 4.3. Used for
//! kernels before 4.16; 4.16+ use fair/wakeup.rs.

use crate::kernel::WakeupForm;
use crate::sched::env::SchedEnv;
use crate::sched::fair::cpu_load::SCHED_LOAD_SCALE;
use crate::sched::sd_flags::{SD_BALANCE_WAKE, SD_SHARE_PKG_RESOURCES, SD_WAKE_AFFINE};
use crate::sched::task::TaskId;

impl SchedEnv {
    /// The 2.6.x wakeup placement applies: the version's form, on the
    /// avg_load balancer whose cpu_load[] it reads (from 4.16 wakeup.rs's
    /// wake_affine/select_idle_sibling are used).
    #[inline]
    pub fn wakeup_placement_26(&self) -> bool {
        self.cfg.mech.wakeup == WakeupForm::V2635 && self.avg_load_era()
    }

    /// select_task_rq_fair(SD_BALANCE_FORK or _EXEC) [sched_fair.c @2.6.35]: from the
    /// highest domain with the flag, descend through find_idlest_group and
    /// find_idlest_cpu.
    pub fn select_task_rq_fork_avg(&mut self, p: TaskId, cpu: usize, sd_flag: u32) -> usize {
        let mut sd = None;
        for (lvl, &d) in self.topo.cpu_domains[cpu].iter().enumerate() {
            if self.sd_balances(d) && self.topo.domains[d].flags & sd_flag != 0 {
                sd = Some(lvl);
            }
        }
        self.find_idlest_descend_avg(p, cpu, sd, sd_flag)
    }

    /// The slow-path loop of select_task_rq_fair(): `sd` indexes `cpu`'s
    /// chain; moving to new_cpu continues in its chain below the old span.
    fn find_idlest_descend_avg(&self, p: TaskId, cpu: usize, sd: Option<usize>, sd_flag: u32) -> usize {
        let mut cpu = cpu;
        let mut new_cpu = cpu;
        let mut level = sd;
        while let Some(l) = level {
            let d = self.topo.cpu_domains[cpu][l];
            let child = l.checked_sub(1);
            let dom = &self.topo.domains[d];
            if dom.flags & sd_flag == 0 {
                level = child;
                continue;
            }
            let load_idx = if sd_flag & SD_BALANCE_WAKE != 0 { dom.wake_idx } else { dom.forkexec_idx };
            let Some(g) = self.find_idlest_group_avg(d, l, p, cpu, load_idx) else {
                level = child;
                continue;
            };
            let Some(c) = self.find_idlest_cpu_avg(g, p, cpu) else {
                level = child;
                continue;
            };
            new_cpu = c;
            if c == cpu {
                level = child;
                continue;
            }
            let weight = dom.span_weight;
            cpu = c;
            level = self.topo.highest_flag_level_below(cpu, weight, sd_flag);
        }
        new_cpu
    }

    /// find_idlest_group() [sched_fair.c @2.6.35]: the group with the lowest
    /// avg load (source_load for our group, target_load for the others),
    /// taken only if `100·this_load ≥ (100 + (imbalance_pct−100)/2)·min_load`.
    fn find_idlest_group_avg(
        &self,
        d: usize,
        lvl: usize,
        p: TaskId,
        this_cpu: usize,
        load_idx: usize,
    ) -> Option<usize> {
        let imbalance = 100 + (self.topo.domains[d].imbalance_pct as u64 - 100) / 2;
        let (mut min_load, mut this_load) = (u64::MAX, 0u64);
        let mut idlest = None;
        for g in self.topo.groups_from(this_cpu, lvl) {
            let grp = &self.topo.groups[g];
            if !grp.cpus.iter().any(|&c| self.sched.tasks[p].cpus.test(c)) {
                continue;
            }
            let local = grp.cpus.binary_search(&this_cpu).is_ok();
            let sum: u64 = grp
                .cpus
                .iter()
                .map(|&i| if local { self.source_load(i, load_idx) } else { self.target_load(i, load_idx) })
                .sum();
            let avg_load = sum * SCHED_LOAD_SCALE / self.group_power(g);
            if local {
                this_load = avg_load;
            } else if avg_load < min_load {
                min_load = avg_load;
                idlest = Some(g);
            }
        }
        let idlest = idlest?;
        if (100 * this_load as u128) < imbalance as u128 * min_load as u128 {
            return None;
        }
        Some(idlest)
    }

    /// find_idlest_cpu() [sched_fair.c @2.6.35]: the allowed CPU with the
    /// lowest weighted_cpuload, this CPU winning ties.
    fn find_idlest_cpu_avg(&self, g: usize, p: TaskId, this_cpu: usize) -> Option<usize> {
        let mut min_load = u64::MAX;
        let mut idlest = None;
        for &i in &self.topo.groups[g].cpus {
            if !self.sched.tasks[p].cpus.test(i) {
                continue;
            }
            let load = self.weighted_cpuload(i);
            if load < min_load || (load == min_load && i == this_cpu) {
                min_load = load;
                idlest = Some(i);
            }
        }
        idlest
    }

    /// select_task_rq_fair(SD_BALANCE_WAKE) [sched_fair.c @2.6.35]: the
    /// lowest SD_WAKE_AFFINE domain of the waking CPU that spans prev picks
    /// this CPU (wake_affine) or prev, then select_idle_sibling. No 2.6.35
    /// template sets SD_BALANCE_WAKE, so the slow path is not taken.
    pub fn select_task_rq_fair_wakeup_avg(&mut self, p: TaskId, prev: usize, this_cpu: usize, sync: bool) -> usize {
        let want_affine = self.sched.tasks[p].cpus.test(this_cpu);
        let mut affine = None;
        let mut slow = None;
        for (lvl, &d) in self.topo.cpu_domains[this_cpu].iter().enumerate() {
            if !self.sd_balances(d) {
                continue;
            }
            let dom = &self.topo.domains[d];
            if want_affine
                && affine.is_none()
                && dom.flags & SD_WAKE_AFFINE != 0
                && dom.span.binary_search(&prev).is_ok()
            {
                affine = Some((d, lvl));
            }
            if dom.flags & SD_BALANCE_WAKE != 0 {
                slow = Some(lvl);
            }
        }
        if let Some((d, lvl)) = affine {
            let target =
                if this_cpu == prev || self.wake_affine_avg(d, lvl, p, this_cpu, prev, sync) { this_cpu } else { prev };
            return self.select_idle_sibling_avg(p, target, this_cpu, prev);
        }
        match slow {
            Some(lvl) => self.find_idlest_descend_avg(p, this_cpu, Some(lvl), SD_BALANCE_WAKE),
            None => prev,
        }
    }

    /// wake_affine() [sched_fair.c @2.6.35]: loads at wake_idx, prev by
    /// source_load and this CPU by target_load;
    /// balanced = this_load == 0 or
    /// 100·power(prev)·(this_load + w(p)) ≤ (100 + (pct−100)/2)·power(this)·prev_load
    /// (effective_load() of p at prev is 0 without cgroups). Affine if
    /// balanced, or if this_load ≤ prev_load and
    /// this_load + target_load(prev) ≤ this CPU's load per task.
    #[allow(clippy::too_many_arguments)] // the kernel passes the same set
    fn wake_affine_avg(&mut self, d: usize, lvl: usize, p: TaskId, this_cpu: usize, prev: usize, sync: bool) -> bool {
        let dom = &self.topo.domains[d];
        let idx = dom.wake_idx;
        let load = self.source_load(prev, idx);
        let mut this_load = self.target_load(this_cpu, idx);
        if sync {
            // Remove the waker's weight from this CPU.
            if let Some(c) = self.sched.rqs[this_cpu].curr {
                this_load = this_load.saturating_sub(self.lb_task_load(c));
            }
        }
        let weight = self.lb_task_load(p) as u128;
        let balanced = this_load == 0 || {
            let this_eff = 100 * self.power_of(prev) as u128 * (this_load as u128 + weight);
            let prev_eff =
                (100 + (dom.imbalance_pct as u128 - 100) / 2) * self.power_of(this_cpu) as u128 * load as u128;
            this_eff <= prev_eff
        };
        if sync && balanced {
            return true;
        }
        let tl_per_task = self.cpu_avg_load_per_task(this_cpu);
        if balanced || (this_load <= load && this_load + self.target_load(prev, idx) <= tl_per_task) {
            self.sched.rqs[this_cpu].sd[lvl].stats.ttwu_move_affine += 1;
            return true;
        }
        false
    }

    /// select_idle_sibling() [sched_fair.c @2.6.35]: this CPU if it is the
    /// target and idle; prev if it is the target and idle; else, walking the
    /// target's domains while they share the package cache, the first idle
    /// allowed CPU of each, stopping at the domain spanning this CPU and prev.
    fn select_idle_sibling_avg(&self, p: TaskId, target: usize, this_cpu: usize, prev: usize) -> usize {
        if target == this_cpu && self.idle_cpu(this_cpu) {
            return this_cpu;
        }
        if target == prev && self.idle_cpu(prev) {
            return prev;
        }
        let mut t = target;
        for &d in &self.topo.cpu_domains[target] {
            let dom = &self.topo.domains[d];
            if dom.flags & SD_SHARE_PKG_RESOURCES == 0 {
                break;
            }
            if let Some(&i) = dom.span.iter().find(|&&i| self.sched.tasks[p].cpus.test(i) && self.idle_cpu(i)) {
                t = i;
            }
            if dom.span.binary_search(&this_cpu).is_ok() && dom.span.binary_search(&prev).is_ok() {
                break;
            }
        }
        t
    }
}
