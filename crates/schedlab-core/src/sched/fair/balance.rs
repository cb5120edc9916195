//! Models the load balancer of kernel/sched/fair.c in its 5.5+ group-type
//! form (Vincent Guittot's rework): sched_balance_domains / rebalance_domains
//! from the tick, load_balance with should_we_balance, find_busiest_group
//! (group_classify, update_sd_pick_busiest, calculate_imbalance),
//! find_busiest_queue, detach_tasks / can_migrate_task, active balance via
//! the stopper (newidle balance: `fair/newidle.rs`)
//! (docs/LINUX-FACTS.md §3). The NOHZ kick that balances idle CPUs is
//! `fair/nohz.rs`.
//!
//! Deviations: the balancer's own CPU time is not modelled (so
//! max_newidle_lb_cost and the scan costs stay 0); no cgroups, no
//! asymmetric capacity (misfit, asym_packing never arise); NUMA fbq
//! classes are not modelled.

use crate::kernel::features::Feature;
use crate::sched::class::SchedClass;
use crate::sched::env::SchedEnv;
use crate::sched::sched::CfsRqId;
use crate::sched::sched::CpuIdleType;
use crate::sched::sd_flags::{SD_NUMA, SD_PREFER_SIBLING, SD_SHARE_LLC};
use crate::sched::task::{TaskId, TaskState};

/// enum group_type, in the order that makes a group "busier" (5.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum GroupType {
    #[default]
    HasSpare,
    FullyBusy,
    MisfitTask,
    AsymPacking,
    Imbalanced,
    Overloaded,
}

/// enum migration_type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MigrationType {
    Load,
    Util,
    Task,
    Misfit,
}

/// struct sg_lb_stats.
#[derive(Debug, Clone, Copy, Default)]
pub struct SgStats {
    pub avg_load: u64,
    pub group_load: u64,
    pub group_capacity: u64,
    pub group_util: u64,
    pub group_runnable: u64,
    pub sum_nr_running: u32,
    pub sum_h_nr_running: u32,
    pub idle_cpus: u32,
    pub group_weight: u32,
    pub group_type: GroupType,
}

/// MAX_PINNED_INTERVAL (ms).
const MAX_PINNED_INTERVAL: u64 = 512;
/// SCHED_NR_MIGRATE_BREAK.
pub(super) const SCHED_NR_MIGRATE_BREAK: u32 = 32;
/// NUMA_IMBALANCE_MIN: adjust_numa_imbalance() lets an imbalance of up to
/// this many tasks stay between lightly loaded NUMA groups.
pub(crate) const NUMA_IMBALANCE_MIN: i64 = 2;

/// struct lb_env.
pub(super) struct LbEnv {
    pub(super) sd: usize,
    pub(super) lvl: usize,
    pub(super) dst_cpu: usize,
    pub(super) src_cpu: usize,
    pub(super) idle: CpuIdleType,
    pub(super) imbalance: i64,
    pub(super) migration_type: MigrationType,
    pub(super) cpus: Vec<usize>,
    pub(super) all_pinned: bool,
    pub(super) some_pinned: bool,
    pub(super) dst_pinned: bool,
    pub(super) new_dst_cpu: usize,
    /// The CPU whose SCHED_SOFTIRQ runs this balance (the ILB for an idle
    /// CPU's), None for newidle: whose view of the runqueues it takes
    /// (`lb_view`).
    pub(super) view_by: Option<usize>,
    pub(super) loop_: u32,
    pub(super) loop_max: u32,
    pub(super) loop_break: u32,
}

impl SchedEnv {
    /// group_classify().
    pub fn group_classify(&self, sd: usize, s: &SgStats, g: usize) -> GroupType {
        let pct = self.topo.domains[sd].imbalance_pct as u64;
        let runnable = self.cfg.mech.lb_group_runnable;
        // group_is_overloaded
        if s.sum_nr_running > s.group_weight
            && (s.group_capacity * 100 < s.group_util * pct
                || (runnable && s.group_runnable * 100 > s.group_capacity * pct))
        {
            return GroupType::Overloaded;
        }
        if self.sched.sg_imbalance[g] {
            return GroupType::Imbalanced;
        }
        // group_has_capacity
        let has_capacity = s.sum_nr_running < s.group_weight
            || (s.group_capacity * 100 > s.group_util * pct
                && !(runnable && s.group_runnable * 100 > s.group_capacity * pct));
        if !has_capacity {
            return GroupType::FullyBusy;
        }
        GroupType::HasSpare
    }

    /// check_cpu_capacity(): the CPU lost a noticeable part of its capacity
    /// to other classes (RT here), so even its only fair task may be moved.
    #[inline]
    pub(super) fn check_cpu_capacity(&self, cpu: usize, sd: usize) -> bool {
        self.sched.rt_pressure
            && self.capacity_of(cpu) * (self.topo.domains[sd].imbalance_pct as u64) < self.sched.cpu_scale[cpu] * 100
    }

    /// The fair tasks the balancer counts on `cpu`: cfs.h_nr_running, less
    /// the sched_delayed ones from 6.14 (h_nr_runnable, `lb_counts_runnable_only`).
    #[inline]
    pub(super) fn lb_h_nr_running(&self, cpu: usize) -> u32 {
        let cfs = &self.sched.cfs_rqs[cpu];
        cfs.h_nr_running - if self.cfg.mech.lb_counts_runnable_only { cfs.h_nr_delayed } else { 0 }
    }

    /// update_sg_lb_stats().
    fn update_sg_lb_stats(&mut self, env: &LbEnv, g: usize) -> SgStats {
        let grp = &self.topo.groups[g];
        let mut s = SgStats { group_capacity: grp.capacity, group_weight: grp.weight as u32, ..Default::default() };
        if self.sched.rt_pressure {
            // update_group_capacity(): the sum of the CPUs' RT-scaled capacities.
            s.group_capacity = 0;
            for k in 0..self.topo.groups[g].cpus.len() {
                let i = self.topo.groups[g].cpus[k];
                let running_rt = self.sched.rqs[i].curr.is_some_and(|c| self.sched.tasks[c].policy.is_rt());
                self.update_rt_rq_load_avg(i, running_rt);
                if self.sched.dl_nr_tasks > 0 {
                    let running_dl = self.sched.rqs[i].curr.is_some_and(|c| self.sched.tasks[c].policy.is_dl());
                    self.update_dl_rq_load_avg(i, running_dl);
                }
                s.group_capacity += self.capacity_of(i);
            }
        }
        // env.cpus is the whole span unless pinned tasks removed CPUs.
        let full = env.cpus.len() == self.topo.domains[env.sd].span_weight;
        for k in 0..self.topo.groups[g].cpus.len() {
            let i = self.topo.groups[g].cpus[k];
            if !full && env.cpus.binary_search(&i).is_err() {
                continue;
            }
            let curr = self.sched.rqs[i].curr;
            if curr.is_none()
                || self.sched.rt_pressure && curr.is_some_and(|c| self.sched.tasks[c].sched_class() < SchedClass::Fair)
            {
                // An idle CPU's blocked load decays only when someone updates
                // it; the kernel does that in update_blocked_averages (newidle,
                // NOHZ_STATS_KICK, and the tick of a CPU running RT).
                // Deviation: done here, at read time (with groups, the
                // group cfs_rqs too, once a jiffy: fair/blocked.rs).
                self.update_nohz_stats(i);
                self.update_load_avg::<true>(CfsRqId::root(i), None);
            }
            if let Some(v) = self.lb_view(env, i) {
                s.group_load += v.load;
                s.group_util += v.util;
                s.group_runnable += v.runnable;
                s.sum_nr_running += v.nr_running;
                s.sum_h_nr_running += v.h_nr_running;
                s.idle_cpus += u32::from(v.nr_running == 0 && v.idle);
                continue;
            }
            s.group_load += self.cpu_load(i);
            s.group_util += self.cpu_util(i);
            s.group_runnable += self.sched.cfs_rqs[i].avg.runnable_avg;
            let nr = self.sched.rqs[i].nr_running;
            s.sum_nr_running += nr;
            s.sum_h_nr_running += self.lb_h_nr_running(i);
            if nr == 0 && self.idle_cpu(i) {
                s.idle_cpus += 1;
            }
        }
        s.group_type = self.group_classify(env.sd, &s, g);
        if s.group_type == GroupType::Overloaded {
            s.avg_load = s.group_load * 1024 / s.group_capacity.max(1);
        }
        s
    }

    /// update_sd_pick_busiest() (5.5).
    fn update_sd_pick_busiest(&self, s: &SgStats, busiest: &SgStats) -> bool {
        if s.sum_h_nr_running == 0 {
            return false;
        }
        if s.group_type != busiest.group_type {
            return s.group_type > busiest.group_type;
        }
        match s.group_type {
            GroupType::Overloaded => s.avg_load > busiest.avg_load,
            GroupType::Imbalanced => false,
            // "XXX for now avg_load is not computed and always 0 so we
            // select the 1st one" (5.5).
            GroupType::FullyBusy => s.avg_load > busiest.avg_load,
            GroupType::HasSpare => {
                !(s.idle_cpus > busiest.idle_cpus
                    || (s.idle_cpus == busiest.idle_cpus && s.sum_nr_running <= busiest.sum_nr_running))
            }
            _ => false,
        }
    }

    /// should_we_balance(): one CPU per group balances a level.
    fn should_we_balance(&self, env: &LbEnv) -> bool {
        self.should_we_balance_in(env.dst_cpu, env.lvl, env.idle, &env.cpus)
    }

    fn should_we_balance_in(&self, dst_cpu: usize, lvl: usize, idle: CpuIdleType, cpus: &[usize]) -> bool {
        if idle == CpuIdleType::NewlyIdle {
            return true;
        }
        let g = self.topo.cpu_local_group[dst_cpu][lvl];
        let grp = &self.topo.groups[g];
        // env.cpus is the domain's span less the CPUs a redo excluded: at
        // the span's size it is the span, and holds every CPU of the group.
        let whole = cpus.len() == self.topo.domains[self.topo.cpu_domains[dst_cpu][lvl]].span.len();
        let balance_cpu = grp
            .cpus
            .iter()
            .copied()
            .find(|&c| (whole || cpus.binary_search(&c).is_ok()) && self.idle_cpu(c))
            .unwrap_or(grp.first_cpu);
        balance_cpu == dst_cpu
    }

    /// find_busiest_group() with calculate_imbalance(). Returns the group.
    fn find_busiest_group(&mut self, env: &mut LbEnv) -> Option<usize> {
        let sd = env.sd;
        // The kernel's per-CPU sd->groups list starts at the local group and
        // wraps, so ties ("the first one found") go to the next group after
        // ours: this is what rotates the pulled-from CPU around the domain.
        // (By index: a collected list was an allocation per call.)
        let nr_groups = self.topo.domains[sd].groups.len();
        let local_g = self.topo.cpu_local_group[env.dst_cpu][env.lvl];
        let mut local = SgStats::default();
        let mut busiest_g: Option<usize> = None;
        let mut busiest = SgStats::default();
        let (mut total_load, mut total_capacity) = (0u64, 0u64);
        for k in 0..nr_groups {
            let g = self.topo.group_from(env.dst_cpu, env.lvl, k);
            let s = self.update_sg_lb_stats(env, g);
            total_load += s.group_load;
            total_capacity += s.group_capacity;
            if g == local_g {
                local = s;
                continue;
            }
            if busiest_g.is_none() && s.sum_h_nr_running > 0
                || busiest_g.is_some() && self.update_sd_pick_busiest(&s, &busiest)
            {
                busiest_g = Some(g);
                busiest = s;
            }
        }
        // SIS_UTIL: the LLC's periodic balance refreshes nr_idle_scan.
        if env.idle != CpuIdleType::NewlyIdle && self.topo.sd_llc[env.dst_cpu] == Some(sd) {
            self.update_idle_cpu_scan(env.dst_cpu, total_load, sd);
        }
        let busiest_g = busiest_g?;
        let dom = &self.topo.domains[sd];
        let prefer_sibling = env.lvl > 0 && {
            let child = self.topo.cpu_domains[env.dst_cpu][env.lvl - 1];
            self.topo.domains[child].flags & SD_PREFER_SIBLING != 0
        };
        let mut sds_avg_load = 0u64;
        let force =
            matches!(busiest.group_type, GroupType::MisfitTask | GroupType::AsymPacking | GroupType::Imbalanced);
        if !force {
            if local.group_type > busiest.group_type {
                return None;
            }
            if local.group_type == GroupType::Overloaded {
                if local.avg_load >= busiest.avg_load {
                    return None;
                }
                sds_avg_load = total_load * 1024 / total_capacity.max(1);
                if local.avg_load >= sds_avg_load {
                    return None;
                }
                if 100 * busiest.avg_load <= dom.imbalance_pct as u64 * local.avg_load {
                    return None;
                }
            }
            let sibling_force = prefer_sibling
                && local.group_type == GroupType::HasSpare
                && busiest.sum_nr_running > local.sum_nr_running + 1;
            if !sibling_force && busiest.group_type != GroupType::Overloaded {
                if env.idle == CpuIdleType::NotIdle {
                    return None;
                }
                if busiest.group_weight > 1 && local.idle_cpus <= busiest.idle_cpus + 1 {
                    return None;
                }
                if busiest.sum_h_nr_running == 1 {
                    return None;
                }
            }
        }
        // calculate_imbalance()
        if busiest.group_type == GroupType::Imbalanced {
            env.migration_type = MigrationType::Task;
            env.imbalance = 1;
        } else if local.group_type == GroupType::HasSpare {
            let llc = self.cfg.mech.lb_llc_spread_tasks && dom.flags & SD_SHARE_LLC != 0;
            if busiest.group_type > GroupType::FullyBusy && !llc {
                env.migration_type = MigrationType::Util;
                env.imbalance = (local.group_capacity.max(local.group_util) - local.group_util) as i64;
                if env.idle != CpuIdleType::NotIdle && env.imbalance == 0 {
                    env.migration_type = MigrationType::Task;
                    env.imbalance = 1;
                }
            } else {
                env.migration_type = MigrationType::Task;
                // Deviation: 6.6+ computes this with sibling_imbalance(),
                // which normalises by the groups' core counts; the plain
                // difference is the same for groups of equal size.
                let imbalance = if busiest.group_weight == 1 || prefer_sibling {
                    if self.cfg.mech.lb_sibling_imbalance && env.idle == CpuIdleType::NotIdle {
                        // sibling_imbalance(): a busy CPU evens out no counts.
                        0
                    } else {
                        busiest.sum_nr_running.saturating_sub(local.sum_nr_running) as i64
                    }
                } else {
                    (local.idle_cpus as i64 - busiest.idle_cpus as i64).max(0)
                };
                let numa = dom.flags & SD_NUMA != 0;
                env.imbalance = if numa && self.cfg.mech.lb_numa_imb_nr {
                    // adjust_numa_imbalance(imbalance, local->sum_nr_running + 1,
                    // sd->imb_numa_nr), then "number of tasks to move" >>= 1.
                    let allow = local.sum_nr_running < dom.imb_numa_nr; // dst_running = local + 1 <= imb_numa_nr
                    if allow && imbalance <= NUMA_IMBALANCE_MIN {
                        0
                    } else {
                        imbalance >> 1
                    }
                } else if numa && self.cfg.mech.lb_numa_imbalance && busiest.sum_nr_running <= 2 {
                    // 5.7: adjust_numa_imbalance(imbalance, busiest->sum_nr_running).
                    0
                } else {
                    imbalance >> 1
                };
            }
        } else {
            if local.group_type < GroupType::Overloaded {
                local.avg_load = local.group_load * 1024 / local.group_capacity.max(1);
                sds_avg_load = total_load * 1024 / total_capacity.max(1);
            }
            // Deviation (6.x guard applied to every version): 5.5 computed
            // this in unsigned arithmetic and could wrap when local was
            // above the average; later kernels return balanced here.
            if local.avg_load >= busiest.avg_load || local.avg_load >= sds_avg_load {
                return None;
            }
            env.migration_type = MigrationType::Load;
            // Unsigned long, as the kernel computes it. Nothing keeps an
            // overloaded busiest group above the domain's average: a fully
            // busy group holding a heavy task raises the average over
            // groups of SCHED_IDLE or nice-19 tasks. Then busiest - average
            // wraps, min() takes the local term, and the balancer pulls up
            // to (average - local) of load (every version from 5.5 to 6.18).
            let a = busiest.avg_load.wrapping_sub(sds_avg_load).wrapping_mul(busiest.group_capacity);
            let b = (sds_avg_load - local.avg_load) * local.group_capacity;
            env.imbalance = (a.min(b) / 1024) as i64;
        }
        (env.imbalance > 0).then_some(busiest_g)
    }

    /// find_busiest_queue().
    fn find_busiest_queue(&self, env: &LbEnv, g: usize) -> Option<usize> {
        let mut busiest = None;
        let (mut busiest_load, mut busiest_capacity) = (0u64, 1u64);
        let mut busiest_util = 0u64;
        let mut busiest_nr = 0u32;
        for &i in &self.topo.groups[g].cpus {
            if env.cpus.binary_search(&i).is_err() {
                continue;
            }
            let view = self.lb_view(env, i);
            let nr = view.map_or_else(|| self.lb_h_nr_running(i), |v| v.h_nr_running);
            if nr == 0 {
                continue;
            }
            let capacity = self.capacity_of(i);
            match env.migration_type {
                MigrationType::Load => {
                    let load = view.map_or_else(|| self.cpu_load(i), |v| v.load);
                    if nr == 1 && load as i64 > env.imbalance && !self.check_cpu_capacity(i, env.sd) {
                        continue;
                    }
                    if load * busiest_capacity > busiest_load * capacity || busiest.is_none() {
                        busiest_load = load;
                        busiest_capacity = capacity;
                        busiest = Some(i);
                    }
                }
                MigrationType::Util => {
                    // "Don't try to pull utilization from a CPU with one
                    // running task": detach_tasks would fail on it (6.x;
                    // believed 5.10, unverified).
                    if nr <= 1 && self.cfg.mech.lb_util_skip_single_task {
                        continue;
                    }
                    let util = view.map_or_else(|| self.cpu_util(i), |v| v.util);
                    if busiest_util < util || busiest.is_none() {
                        busiest_util = util;
                        busiest = Some(i);
                    }
                }
                MigrationType::Task | MigrationType::Misfit => {
                    if busiest_nr < nr {
                        busiest_nr = nr;
                        busiest = Some(i);
                    }
                }
            }
        }
        busiest
    }

    /// load_balance(). Returns the number of tasks moved.
    pub(crate) fn load_balance(
        &mut self,
        this_cpu: usize,
        lvl: usize,
        idle: CpuIdleType,
        continue_balancing: &mut bool,
    ) -> u32 {
        if self.avg_load_era() {
            // balance_avg.rs
            return self.load_balance_avg(this_cpu, lvl, idle, continue_balancing);
        }
        let sd = self.topo.cpu_domains[this_cpu][lvl];
        let max_interval = self.topo.domains[sd].max_interval_ms;
        let ix = idle as usize;
        // Most CPUs are not their group's designated balancer: answer that
        // before copying the domain's span into env.cpus (the kernel's
        // first redo pass asks the same question with the same mask).
        if !self.should_we_balance_in(this_cpu, lvl, idle, &self.topo.domains[sd].span) {
            *continue_balancing = false;
            self.sched.rqs[this_cpu].sd[lvl].stats.lb_count[ix] += 1;
            if lvl + 1 < self.topo.cpu_domains[this_cpu].len() {
                let pg = self.topo.cpu_local_group[this_cpu][lvl + 1];
                self.sched.sg_imbalance[pg] = false;
            }
            self.sched.rqs[this_cpu].sd[lvl].stats.lb_balanced[ix] += 1;
            self.sched.rqs[this_cpu].sd[lvl].nr_balance_failed = 0;
            self.tune_interval_up(this_cpu, lvl, idle, false, max_interval);
            return 0;
        }
        // env.cpus reuses one buffer (a copy of a 1,024-CPU span on every
        // call was a fifth of a busy balancer's instructions, in malloc).
        let mut cpus = std::mem::take(&mut self.sched.lb_cpus);
        cpus.clear();
        cpus.extend_from_slice(&self.topo.domains[sd].span);
        let (moved, cpus) = self.load_balance_env(this_cpu, lvl, idle, continue_balancing, cpus);
        self.sched.lb_cpus = cpus;
        moved
    }

    /// load_balance() from the copy of the span on: returns what it moved
    /// and the buffer of env.cpus.
    fn load_balance_env(
        &mut self,
        this_cpu: usize,
        lvl: usize,
        idle: CpuIdleType,
        continue_balancing: &mut bool,
        cpus: Vec<usize>,
    ) -> (u32, Vec<usize>) {
        let sd = self.topo.cpu_domains[this_cpu][lvl];
        let dom = &self.topo.domains[sd];
        let (min_interval, max_interval, cache_nice_tries) =
            (dom.min_interval_ms, dom.max_interval_ms, dom.cache_nice_tries);
        let ix = idle as usize;
        let mut env = LbEnv {
            sd,
            lvl,
            dst_cpu: this_cpu,
            src_cpu: this_cpu,
            idle,
            imbalance: 0,
            migration_type: MigrationType::Load,
            cpus,
            all_pinned: false,
            some_pinned: false,
            dst_pinned: false,
            new_dst_cpu: this_cpu,
            view_by: (idle != CpuIdleType::NewlyIdle).then(|| self.sched.lb_exec.unwrap_or(this_cpu)),
            loop_: 0,
            loop_max: 0,
            loop_break: SCHED_NR_MIGRATE_BREAK,
        };
        self.sched.rqs[this_cpu].sd[lvl].stats.lb_count[ix] += 1;
        let mut moved = 0;
        let mut active_kicked = false;
        let mut busiest_cpu = None;
        let outcome_balanced;
        'redo: loop {
            if !self.should_we_balance(&env) {
                *continue_balancing = false;
                outcome_balanced = true;
                break 'redo;
            }
            let Some(g) = self.find_busiest_group(&mut env) else {
                self.sched.rqs[this_cpu].sd[lvl].stats.lb_nobusyg[ix] += 1;
                outcome_balanced = true;
                break 'redo;
            };
            let Some(busiest) = self.find_busiest_queue(&env, g) else {
                self.sched.rqs[this_cpu].sd[lvl].stats.lb_nobusyq[ix] += 1;
                outcome_balanced = true;
                break 'redo;
            };
            busiest_cpu = Some(busiest);
            self.sched.rqs[this_cpu].sd[lvl].stats.lb_imbalance[ix] += env.imbalance.max(0) as u64;
            env.src_cpu = busiest;
            env.all_pinned = true;
            if self.sched.rqs[busiest].nr_running > 1 {
                env.loop_max = (self.cfg.sysctl.sched_nr_migrate as u32).min(self.sched.rqs[busiest].nr_running);
                env.loop_ = 0;
                moved += self.detach_tasks(&mut env);
                if env.dst_pinned && env.imbalance > 0 && moved == 0 {
                    // LBF_DST_PINNED: retry towards another CPU of our group.
                    env.dst_cpu = env.new_dst_cpu;
                    env.dst_pinned = false;
                    env.loop_ = 0;
                    moved += self.detach_tasks(&mut env);
                    env.dst_cpu = this_cpu;
                }
                if env.some_pinned && lvl + 1 < self.topo.cpu_domains[this_cpu].len() {
                    // Flag the parent's local group as imbalanced.
                    let pg = self.topo.cpu_local_group[this_cpu][lvl + 1];
                    if env.imbalance > 0 {
                        self.sched.sg_imbalance[pg] = true;
                    }
                }
                if env.all_pinned {
                    env.cpus.retain(|&c| c != busiest);
                    if !env.cpus.is_empty()
                        && env
                            .cpus
                            .iter()
                            .any(|c| !self.topo.groups[self.topo.cpu_local_group[this_cpu][lvl]].cpus.contains(c))
                    {
                        env.loop_break = SCHED_NR_MIGRATE_BREAK;
                        continue 'redo;
                    }
                    // out_all_pinned
                    self.sched.rqs[this_cpu].sd[lvl].stats.lb_balanced[ix] += 1;
                    self.sched.rqs[this_cpu].sd[lvl].nr_balance_failed = 0;
                    self.tune_interval_up(this_cpu, lvl, idle, true, max_interval);
                    return (0, env.cpus);
                }
            }
            outcome_balanced = false;
            break 'redo;
        }
        if outcome_balanced {
            if lvl + 1 < self.topo.cpu_domains[this_cpu].len() && !env.all_pinned {
                let pg = self.topo.cpu_local_group[this_cpu][lvl + 1];
                self.sched.sg_imbalance[pg] = false;
            }
            self.sched.rqs[this_cpu].sd[lvl].stats.lb_balanced[ix] += 1;
            self.sched.rqs[this_cpu].sd[lvl].nr_balance_failed = 0;
            self.tune_interval_up(this_cpu, lvl, idle, env.all_pinned, max_interval);
            return (0, env.cpus);
        }
        let busiest = busiest_cpu.expect("busiest set");
        self.sched.rqs[this_cpu].sd[lvl].stats.lb_gained[ix] += moved as u64;
        if moved == 0 {
            self.sched.rqs[this_cpu].sd[lvl].stats.lb_failed[ix] += 1;
            if idle != CpuIdleType::NewlyIdle {
                self.sched.rqs[this_cpu].sd[lvl].nr_balance_failed += 1;
            }
            if self.need_active_balance(&env) {
                let curr_ok = self.sched.rqs[busiest].curr.is_some_and(|c| self.sched.tasks[c].cpus.test(this_cpu));
                if !curr_ok {
                    self.tune_interval_up(this_cpu, lvl, idle, true, max_interval);
                    return (0, env.cpus);
                }
                active_kicked |= self.kick_active_balance(busiest, this_cpu);
                self.sched.rqs[this_cpu].sd[lvl].nr_balance_failed = cache_nice_tries + 1;
            }
        } else {
            self.sched.rqs[this_cpu].sd[lvl].nr_balance_failed = 0;
        }
        let st = &mut self.sched.rqs[this_cpu].sd[lvl];
        if !active_kicked {
            st.balance_interval = min_interval;
        } else if st.balance_interval < max_interval {
            st.balance_interval *= 2;
        }
        (moved, env.cpus)
    }

    fn tune_interval_up(&mut self, cpu: usize, lvl: usize, idle: CpuIdleType, all_pinned: bool, max_interval: u64) {
        if idle == CpuIdleType::NewlyIdle {
            return;
        }
        let st = &mut self.sched.rqs[cpu].sd[lvl];
        if (all_pinned && st.balance_interval < MAX_PINNED_INTERVAL) || st.balance_interval < max_interval {
            st.balance_interval *= 2;
        }
    }

    /// get_sd_balance_interval(), in ns.
    pub(crate) fn sd_balance_interval(&self, cpu: usize, lvl: usize, busy: bool) -> u64 {
        let d = self.topo.cpu_domains[cpu][lvl];
        let mut ms = self.sched.rqs[cpu].sd[lvl].balance_interval;
        if busy {
            ms *= self.topo.domains[d].busy_factor as u64;
        }
        let mut j = self.cfg.msecs_to_jiffies(ms);
        if busy && self.cfg.mech.balance_interval_busy_minus_one {
            j = j.saturating_sub(1);
        }
        j.clamp(1, self.sched.max_load_balance_interval) * self.cfg.tick_ns
    }

    /// rebalance_domains() / sched_balance_domains().
    pub(crate) fn rebalance_domains(&mut self, cpu: usize, mut idle: CpuIdleType) {
        if self.avg_load_era() {
            return self.rebalance_domains_avg(cpu, idle); // balance_avg.rs
        }
        let mut continue_balancing = true;
        let mut next_balance = self.now + 60 * self.cfg.hz as u64 * self.cfg.tick_ns;
        let mut busy = idle != CpuIdleType::Idle && !self.sched_idle_cpu(cpu);
        let levels = self.topo.cpu_domains[cpu].len();
        for lvl in 0..levels {
            let mut interval = self.sd_balance_interval(cpu, lvl, busy);
            // Deviation: an SD_SERIALIZE domain takes a global trylock first;
            // in a serial simulation it never contends, so it is not modelled.
            if self.now as i64 >= self.sched.rqs[cpu].sd[lvl].last_balance + interval as i64 {
                if self.load_balance(cpu, lvl, idle, &mut continue_balancing) > 0 {
                    idle = if self.idle_cpu(cpu) { CpuIdleType::Idle } else { CpuIdleType::NotIdle };
                    busy = idle != CpuIdleType::Idle && !self.sched_idle_cpu(cpu);
                }
                self.sched.rqs[cpu].sd[lvl].last_balance = self.now as i64;
                interval = self.sd_balance_interval(cpu, lvl, busy);
            }
            next_balance = next_balance.min((self.sched.rqs[cpu].sd[lvl].last_balance + interval as i64).max(0) as u64);
            if !continue_balancing {
                break;
            }
        }
        self.sched.rqs[cpu].next_balance = next_balance;
    }

    /// update_idle_cpu_scan() (SIS_UTIL, 6.0+).
    fn update_idle_cpu_scan(&mut self, cpu: usize, _total_load: u64, sd: usize) {
        if !self.cfg.features.on(Feature::SIS_UTIL) {
            return;
        }
        let span = &self.topo.domains[sd].span;
        let llc_weight = span.len() as u64;
        let sum_util: u64 = span.iter().map(|&c| self.cpu_util(c)).sum();
        let pct = self.topo.domains[sd].imbalance_pct as u64;
        let x = sum_util / llc_weight.max(1);
        let y = 1024i64 - (x * x * pct * pct / (10000 * 1024)) as i64;
        let y = y.max(0) as u64;
        let id = self.topo.sd_llc_id[cpu];
        self.sched.sds[id].nr_idle_scan = (y * llc_weight / 1024) as usize;
    }

    pub fn task_is_runnable(&self, p: TaskId) -> bool {
        self.sched.tasks[p].state == TaskState::Runnable
    }
}
