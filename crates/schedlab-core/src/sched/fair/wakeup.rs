//! Models the wakeup and fork placement of kernel/sched/fair.c (5.5 .. 6.x
//! forms): select_task_rq_fair, record_wakee/wake_wide, wake_affine,
//! select_idle_sibling and its idle scans, and the slow path
//! find_idlest_group / find_idlest_group_cpu / find_idlest_cpu.

use crate::kernel::features::Feature;
use crate::sched::class::WakeSource;
use crate::sched::env::SchedEnv;
use crate::sched::fair::balance::{GroupType, SgStats, NUMA_IMBALANCE_MIN};
use crate::sched::sd_flags::{SD_BALANCE_FORK, SD_BALANCE_WAKE, SD_NUMA, SD_WAKE_AFFINE};
use crate::sched::task::TaskId;

const NSEC_PER_SEC: u64 = 1_000_000_000;

impl SchedEnv {
    // ---------------------------------------------------------- loads

    /// cpu_load(): the cfs_rq's PELT load_avg (5.5+; includes blocked load).
    #[inline]
    pub fn cpu_load(&self, cpu: usize) -> u64 {
        self.sched.cfs_rqs[cpu].avg.load_avg
    }

    /// cpu_util(): util_avg capped at the CPU's capacity.
    #[inline]
    pub fn cpu_util(&self, cpu: usize) -> u64 {
        self.sched.cfs_rqs[cpu].avg.util_avg.min(self.capacity_of(cpu))
    }

    /// capacity_of(): the CPU's capacity less what RT and deadline tasks
    /// use (scale_rt_capacity with rq->avg_rt and avg_dl, 4.19+; at least 1). Deviation:
    /// the kernel refreshes rq->cpu_capacity only when the CPU balances; the
    /// model reads avg_rt as of the last RT switch or tick.
    #[inline]
    pub fn capacity_of(&self, cpu: usize) -> u64 {
        let max = self.sched.cpu_scale[cpu];
        if !self.sched.rt_pressure {
            return max;
        }
        let rq = &self.sched.rqs[cpu];
        let used = rq.rt.avg_rt.util_avg + rq.dl.avg_dl.util_avg;
        if used >= max {
            1
        } else {
            max - used
        }
    }

    fn task_contrib_here(&self, cpu: usize, p: TaskId) -> bool {
        let t = &self.sched.tasks[p];
        t.cpu == cpu && t.se.attached
    }

    /// cpu_load_without(): the CPU's load as if p were not there; `p_h_load`
    /// is task_h_load(p), which the caller takes once for all its CPUs.
    pub fn cpu_load_without(&self, cpu: usize, p: TaskId, p_h_load: u64) -> u64 {
        let l = self.cpu_load(cpu);
        if self.task_contrib_here(cpu, p) {
            l.saturating_sub(p_h_load)
        } else {
            l
        }
    }

    pub fn cpu_util_without(&self, cpu: usize, p: TaskId) -> u64 {
        let u = self.sched.cfs_rqs[cpu].avg.util_avg;
        let u = if self.task_contrib_here(cpu, p) { u.saturating_sub(self.sched.tasks[p].se.avg.util_avg) } else { u };
        u.min(self.capacity_of(cpu))
    }

    #[inline]
    pub fn available_idle_cpu(&self, cpu: usize) -> bool {
        self.idle_cpu(cpu)
    }

    #[inline]
    fn idle_or_sched_idle(&self, cpu: usize) -> bool {
        self.available_idle_cpu(cpu) || self.sched_idle_cpu(cpu)
    }

    // -------------------------------------------------- record_wakee

    /// record_wakee(): count how often the waker switches wakee.
    pub fn record_wakee(&mut self, waker: TaskId, wakee: TaskId) {
        let now = self.now;
        let t = &mut self.sched.tasks[waker];
        if now > t.wakee_flip_decay_ts + NSEC_PER_SEC {
            t.wakee_flips >>= 1;
            t.wakee_flip_decay_ts = now;
        }
        if t.last_wakee != Some(wakee) {
            t.last_wakee = Some(wakee);
            t.wakee_flips += 1;
        }
    }

    /// wake_wide(): detect one-to-many wakeup patterns.
    fn wake_wide(&self, p: TaskId, waker: Option<TaskId>, this_cpu: usize) -> bool {
        let Some(w) = waker else { return false };
        let mut master = self.sched.tasks[w].wakee_flips as usize;
        let mut slave = self.sched.tasks[p].wakee_flips as usize;
        let factor = self.topo.sd_llc_size[this_cpu];
        if master < slave {
            std::mem::swap(&mut master, &mut slave);
        }
        !(slave < factor || master < slave * factor)
    }

    // --------------------------------------------------- wake_affine

    fn wake_affine_idle(&self, this: usize, prev: usize, sync: bool) -> Option<usize> {
        if self.available_idle_cpu(this) && self.topo.cpus_share_cache(this, prev) {
            return Some(if self.available_idle_cpu(prev) { prev } else { this });
        }
        // 6.12.37+: the waker is alone if only sched_delayed tasks sleep
        // beside it (nr_running - cfs_h_nr_delayed()).
        let delayed = if self.cfg.mech.sync_ignores_delayed { self.sched.cfs_rqs[this].h_nr_delayed } else { 0 };
        if sync && self.sched.rqs[this].nr_running - delayed == 1 {
            return Some(this);
        }
        if self.cfg.mech.wa_idle_prev && self.available_idle_cpu(prev) {
            return Some(prev);
        }
        None
    }

    fn wake_affine_weight(
        &self,
        sd: usize,
        p: TaskId,
        waker: Option<TaskId>,
        this: usize,
        prev: usize,
        sync: bool,
    ) -> Option<usize> {
        let mut this_eff = self.cpu_load(this) as i128;
        if sync {
            if let Some(w) = waker {
                let cl = self.task_h_load(w) as i128;
                if cl > this_eff {
                    return Some(this);
                }
                this_eff -= cl;
            }
        }
        let task_load = self.task_h_load(p) as i128;
        this_eff += task_load;
        let f = &self.cfg.features;
        if f.on(Feature::WA_BIAS) {
            this_eff *= 100;
        }
        this_eff *= self.capacity_of(prev) as i128;
        let mut prev_eff = self.cpu_load(prev) as i128 - task_load;
        if f.on(Feature::WA_BIAS) {
            prev_eff *= 100 + (self.topo.domains[sd].imbalance_pct as i128 - 100) / 2;
        }
        prev_eff *= self.capacity_of(this) as i128;
        if sync {
            prev_eff += 1;
        }
        (this_eff < prev_eff).then_some(this)
    }

    #[allow(clippy::too_many_arguments)] // the kernel passes the same set
    fn wake_affine(
        &mut self,
        sd: usize,
        lvl: usize,
        p: TaskId,
        waker: Option<TaskId>,
        this: usize,
        prev: usize,
        sync: bool,
    ) -> usize {
        let mut target = None;
        if self.cfg.features.on(Feature::WA_IDLE) {
            target = self.wake_affine_idle(this, prev, sync);
        }
        if target.is_none() && self.cfg.features.on(Feature::WA_WEIGHT) {
            target = self.wake_affine_weight(sd, p, waker, this, prev, sync);
        }
        match target {
            Some(t) => {
                self.sched.rqs[this].sd[lvl].stats.ttwu_move_affine += 1;
                t
            }
            None => prev,
        }
    }

    // --------------------------------------------- select_idle_sibling

    /// __update_idle_core(): remember that the LLC has a fully idle core.
    pub fn update_idle_core(&mut self, cpu: usize) {
        if !self.machine.has_smt() {
            return;
        }
        if self.machine.smt_siblings(cpu).iter().all(|&s| self.idle_cpu(s)) {
            let id = self.topo.sd_llc_id[cpu];
            self.sched.sds[id].has_idle_cores = true;
        }
    }

    /// for_each_cpu_wrap(cpu, llc span, target + 1), without allocating.
    fn llc_cpus_from(&self, target: usize) -> impl Iterator<Item = usize> + '_ {
        let span: &[usize] = match self.topo.sd_llc[target] {
            Some(d) => &self.topo.domains[d].span,
            None => std::slice::from_ref(&self.topo.sd_llc_id[target]),
        };
        let pos = span.partition_point(|&c| c <= target);
        span[pos..].iter().chain(span[..pos].iter()).copied()
    }

    fn select_idle_core(&mut self, p: TaskId, target: usize) -> Option<usize> {
        if !self.machine.has_smt() {
            return None;
        }
        let id = self.topo.sd_llc_id[target];
        if !self.sched.sds[id].has_idle_cores {
            return None;
        }
        let mut found = None;
        for cpu in self.llc_cpus_from(target) {
            let sibs = self.machine.smt_siblings(cpu);
            // Visit each core once, by its first sibling.
            if sibs[0] != cpu {
                continue;
            }
            if sibs.iter().all(|&s| self.idle_cpu(s)) {
                if let Some(&c) = sibs.iter().find(|&&s| self.sched.tasks[p].cpus.test(s)) {
                    found = Some(c);
                    break;
                }
            }
        }
        if found.is_none() {
            self.sched.sds[id].has_idle_cores = false;
        }
        found
    }

    fn select_idle_smt(&self, p: TaskId, target: usize) -> Option<usize> {
        if !self.machine.has_smt() {
            return None;
        }
        self.machine
            .smt_siblings(target)
            .iter()
            .copied()
            .find(|&s| s != target && self.sched.tasks[p].cpus.test(s) && self.idle_or_sched_idle(s))
    }

    /// select_idle_cpu() with the SIS_PROP or SIS_UTIL scan limit.
    fn select_idle_cpu(&self, p: TaskId, target: usize, this_cpu: usize) -> Option<usize> {
        let llc = self.topo.sd_llc[target]?;
        let span_weight = self.topo.domains[llc].span_weight as u64;
        let mut nr: i64 = i64::MAX;
        let f = &self.cfg.features;
        if f.on(Feature::SIS_UTIL) {
            let scan = self.sched.sds[self.topo.sd_llc_id[target]].nr_idle_scan;
            if scan == 0 {
                return None;
            }
            nr = scan.min(span_weight as usize) as i64 + 1;
        } else if f.on(Feature::SIS_PROP) {
            // Deviation: the scan's own duration is not modelled, so
            // avg_scan_cost stays 0 and avg_cost = 1.
            let avg_idle = self.sched.rqs[this_cpu].avg_idle / 512;
            let avg_cost = 1u64;
            let span_avg = span_weight * avg_idle;
            nr = if span_avg > 4 * avg_cost { (span_avg / avg_cost) as i64 } else { 4 };
        }
        // for_each_cpu_wrap(cpu, cpus, target + 1): each allowed CPU
        // costs one of nr, and the scan stops when nr reaches 0; the first
        // idle_or_sched_idle() one is taken. On a large LLC a word at a
        // time (Sched::idle_mask), else CPU by CPU.
        if let Some(idle) = &self.sched.idle_mask {
            let span = &self.topo.llc_mask[self.topo.sd_llc_id[target]];
            let budget = (nr - 1).max(0) as u64;
            return span.first_wrap_in(&self.sched.tasks[p].cpus, idle, target + 1, budget);
        }
        for cpu in self.llc_cpus_from(target) {
            if !self.sched.tasks[p].cpus.test(cpu) {
                continue;
            }
            nr -= 1;
            if nr <= 0 {
                return None;
            }
            if self.idle_or_sched_idle(cpu) {
                return Some(cpu);
            }
        }
        None
    }

    /// select_idle_sibling(). `current` is the task running on the waking
    /// CPU `this_cpu` (the kthread stacking rule's waker; an interrupt
    /// handler runs on top of it: `from_task` false).
    fn select_idle_sibling(
        &mut self,
        p: TaskId,
        prev: usize,
        target: usize,
        current: Option<TaskId>,
        this_cpu: usize,
        from_task: bool,
    ) -> usize {
        let allowed = |s: &SchedEnv, c: usize| s.sched.tasks[p].cpus.test(c);
        if allowed(self, target) && self.idle_or_sched_idle(target) {
            return target;
        }
        if prev != target
            && self.topo.cpus_share_cache(prev, target)
            && allowed(self, prev)
            && self.idle_or_sched_idle(prev)
        {
            return prev;
        }
        // P1 (5.6+): a per-CPU kthread waking a task on its own CPU stacks it.
        if self.cfg.features.on(Feature::KTHREAD_STACKING) {
            if let Some(w) = current {
                let in_task_ok = from_task || !self.cfg.mech.kthread_stacking_in_task;
                if self.sched.tasks[w].is_per_cpu_kthread()
                    && prev == this_cpu
                    && self.sched.rqs[this_cpu].nr_running <= 1
                    && in_task_ok
                {
                    return prev;
                }
            }
        }
        // Check a recently used CPU as a potential idle candidate. From
        // 5.15 the wakee's recent_used_cpu becomes prev on every pass that
        // gets here (89aafd67f28c), before that only when it is chosen.
        // Deviation: from 5.15 until ae2ad293d6be (6.5, and the stable
        // trees it went back to) the kernel tested p->recent_used_cpu
        // (just set to prev) against the task's CPUs instead of the
        // candidate; the model tests the candidate in every version.
        let recent = self.sched.tasks[p].recent_used_cpu;
        let every_pass = self.cfg.mech.recent_used_cpu_prev;
        if every_pass {
            self.sched.tasks[p].recent_used_cpu = prev;
        }
        if recent != prev
            && recent != target
            && self.topo.cpus_share_cache(recent, target)
            && self.idle_or_sched_idle(recent)
            && allowed(self, recent)
        {
            if !every_pass {
                self.sched.tasks[p].recent_used_cpu = prev;
            }
            return recent;
        }
        if self.topo.sd_llc[target].is_none() {
            return target;
        }
        if let Some(c) = self.select_idle_core(p, target) {
            return c;
        }
        if let Some(c) = self.select_idle_cpu(p, target, this_cpu) {
            return c;
        }
        if let Some(c) = self.select_idle_smt(p, target) {
            return c;
        }
        target
    }

    // ------------------------------------------ select_task_rq_fair

    /// select_task_rq_fair() for a wakeup (WF_TTWU).
    #[inline] // into try_to_wake_up(), its one caller on the hot path
    pub fn select_task_rq_fair_wakeup(&mut self, p: TaskId, prev: usize, src: WakeSource) -> usize {
        let (waker_cpu, from_task, sync) = (src.cpu, src.in_task, src.sync);
        if self.sched.tasks[p].nr_cpus_allowed == 1 {
            return self.fallback_cpu(p, prev);
        }
        if self.wakeup_placement_26() {
            let t = self.select_task_rq_fair_wakeup_avg(p, prev, waker_cpu, sync); // balance_avg.rs
            return self.fallback_cpu(p, t);
        }
        let cpu = waker_cpu;
        let waker = if from_task { self.sched.rqs[cpu].curr } else { None };
        let want_affine = !self.wake_wide(p, waker, cpu) && self.sched.tasks[p].cpus.test(cpu);
        let mut new_cpu = prev;
        let mut slow: Option<usize> = None;
        for lvl in 0..self.topo.cpu_domains[cpu].len() {
            let d = self.topo.cpu_domains[cpu][lvl];
            let dom = &self.topo.domains[d];
            if want_affine && dom.flags & SD_WAKE_AFFINE != 0 && dom.span.binary_search(&prev).is_ok() {
                if cpu != prev {
                    new_cpu = self.wake_affine(d, lvl, p, waker, cpu, prev, sync);
                }
                slow = None;
                break;
            }
            if dom.flags & SD_BALANCE_WAKE != 0 {
                slow = Some(lvl);
            } else if !want_affine {
                break;
            }
        }
        let target = if let Some(lvl) = slow {
            self.find_idlest_cpu(cpu, lvl, p, prev, SD_BALANCE_WAKE)
        } else {
            // The stacking rule looks at `current`, whatever context wakes.
            let current = self.sched.rqs[cpu].curr;
            self.select_idle_sibling(p, prev, new_cpu, current, cpu, from_task)
        };
        if target != cpu {
            if let Some(sd0) = self.sched.rqs[cpu].sd.first_mut() {
                sd0.stats.ttwu_wake_remote += 1;
            }
        }
        // Before 5.15 an affine wakeup on the fast path also set the
        // waker's recent_used_cpu (not after find_idlest_cpu's slow path).
        if from_task && slow.is_none() && !self.cfg.mech.recent_used_cpu_prev {
            if let Some(w) = waker {
                if want_affine {
                    self.sched.tasks[w].recent_used_cpu = cpu;
                }
            }
        }
        self.fallback_cpu(p, target)
    }

    /// select_task_rq_fair() for a fork (SD_BALANCE_FORK): the slow path from
    /// the highest domain with the flag.
    pub fn select_task_rq_fork(&mut self, p: TaskId, cpu: usize) -> usize {
        self.select_task_rq_balance(p, cpu, SD_BALANCE_FORK)
    }

    /// select_task_rq_fair() for a fork or an exec (`sd_flag`
    /// SD_BALANCE_FORK or SD_BALANCE_EXEC): the slow path from the highest
    /// domain with the flag.
    pub fn select_task_rq_balance(&mut self, p: TaskId, cpu: usize, sd_flag: u32) -> usize {
        let cpu = self.fallback_cpu(p, cpu);
        if self.sched.tasks[p].nr_cpus_allowed == 1 {
            return cpu;
        }
        if self.avg_load_era() {
            let t = self.select_task_rq_fork_avg(p, cpu, sd_flag); // wakeup_avg.rs
            return self.fallback_cpu(p, t);
        }
        let mut sd: Option<usize> = None;
        for (lvl, &d) in self.topo.cpu_domains[cpu].iter().enumerate() {
            if self.topo.domains[d].flags & sd_flag != 0 {
                sd = Some(lvl);
            } else {
                break;
            }
        }
        let target = match sd {
            Some(lvl) => self.find_idlest_cpu(cpu, lvl, p, cpu, sd_flag),
            None => cpu,
        };
        self.fallback_cpu(p, target)
    }

    // ------------------------------------------------------ slow path

    /// update_sg_wakeup_stats().
    fn sg_wakeup_stats(&self, sd: usize, g: usize, p: TaskId) -> SgStats {
        let grp = &self.topo.groups[g];
        let mut s = SgStats { group_capacity: grp.capacity, group_weight: grp.weight as u32, ..Default::default() };
        let p_h_load = self.task_h_load(p);
        for &i in &grp.cpus {
            s.group_load += self.cpu_load_without(i, p, p_h_load);
            s.group_util += self.cpu_util_without(i, p);
            let here = self.sched.tasks[p].cpu == i && self.sched.tasks[p].se.on_rq;
            let nr = self.sched.rqs[i].nr_running - u32::from(here);
            s.sum_nr_running += nr;
            // 6.14+ counts h_nr_runnable, which a queued sched_delayed p is not in.
            s.sum_h_nr_running += self.lb_h_nr_running(i).saturating_sub(u32::from(here));
            // idle_cpu_without(): p's own CPU counts as idle (sched_exec's
            // p is running there).
            if nr == 0 && (self.idle_cpu(i) || self.sched.rqs[i].curr == Some(p)) {
                s.idle_cpus += 1;
            }
        }
        s.group_type = self.group_classify(sd, &s, g);
        if matches!(s.group_type, GroupType::FullyBusy | GroupType::Overloaded) {
            s.avg_load = s.group_load * 1024 / s.group_capacity.max(1);
        }
        s
    }

    /// find_idlest_group() (5.5+ form).
    fn find_idlest_group(&self, sd: usize, lvl: usize, p: TaskId, this_cpu: usize) -> Option<usize> {
        let dom = &self.topo.domains[sd];
        let mut idlest: Option<(usize, SgStats)> = None;
        let mut local: Option<(usize, SgStats)> = None;
        // sd->groups starts at this CPU's group and wraps.
        for g in self.topo.groups_from(this_cpu, lvl) {
            let grp = &self.topo.groups[g];
            if !grp.cpus.iter().any(|&c| self.sched.tasks[p].cpus.test(c)) {
                continue;
            }
            let sgs = self.sg_wakeup_stats(sd, g, p);
            if grp.cpus.binary_search(&this_cpu).is_ok() {
                local = Some((g, sgs));
                continue;
            }
            let better = match &idlest {
                None => true,
                Some((_, is)) => {
                    if sgs.group_type != is.group_type {
                        sgs.group_type < is.group_type
                    } else {
                        match sgs.group_type {
                            GroupType::Overloaded | GroupType::FullyBusy => is.avg_load > sgs.avg_load,
                            GroupType::HasSpare => {
                                is.idle_cpus < sgs.idle_cpus
                                    || (self.cfg.mech.pick_idlest_group_util
                                        && is.idle_cpus == sgs.idle_cpus
                                        && is.group_util > sgs.group_util)
                            }
                            _ => false,
                        }
                    }
                }
            };
            if better {
                idlest = Some((g, sgs));
            }
        }
        let (ig, is) = idlest?;
        let Some((lg, ls)) = local else { return Some(ig) };
        if ls.group_type < is.group_type {
            return None;
        }
        if ls.group_type > is.group_type {
            return Some(ig);
        }
        match ls.group_type {
            GroupType::Overloaded | GroupType::FullyBusy => {
                let imbalance = 1024 * (dom.imbalance_pct as u64 - 100) / 100;
                if dom.flags & SD_NUMA != 0 && is.avg_load + imbalance >= ls.avg_load {
                    return None;
                }
                if is.avg_load >= ls.avg_load + imbalance {
                    return None;
                }
            }
            GroupType::HasSpare => {
                // Deviation: no NUMA balancing, so no task has a preferred
                // node and the CONFIG_NUMA_BALANCING shortcuts never fire.
                if dom.flags & SD_NUMA != 0 && self.cfg.mech.lb_numa_imb_nr {
                    // Keep the task near its waker while the local node
                    // would stay under imb_numa_nr, clamped to the CPUs it
                    // may use there (p->nr_cpus_allowed is never NR_CPUS on
                    // the machines modelled).
                    let allowed =
                        self.topo.groups[lg].cpus.iter().filter(|&&c| self.sched.tasks[p].cpus.test(c)).count();
                    let imb_numa_nr = (allowed as u32).min(dom.imb_numa_nr);
                    let imbalance = (ls.idle_cpus as i64 - is.idle_cpus as i64).abs();
                    if ls.sum_nr_running < imb_numa_nr && imbalance <= NUMA_IMBALANCE_MIN {
                        return None;
                    }
                } else if dom.flags & SD_NUMA != 0 && self.cfg.mech.lb_numa_imbalance && ls.idle_cpus > 0 {
                    // 5.7: stay on this node while it has an idle CPU.
                    return None;
                }
                if ls.idle_cpus >= is.idle_cpus {
                    return None;
                }
            }
            _ => return None,
        }
        Some(ig)
    }

    /// find_idlest_group_cpu().
    fn find_idlest_group_cpu(&mut self, g: usize, p: TaskId) -> usize {
        if self.topo.groups[g].weight == 1 {
            return self.topo.groups[g].cpus[0];
        }
        let mut min_load = u64::MAX;
        let mut least_loaded = None;
        // (CPU, its idle state's exit latency, idle_stamp).
        let mut shallowest: Option<(usize, u64, u64)> = None;
        for k in 0..self.topo.groups[g].cpus.len() {
            let i = self.topo.groups[g].cpus[k];
            if !self.sched.tasks[p].cpus.test(i) {
                continue;
            }
            if self.sched_idle_cpu(i) {
                return i;
            }
            if self.available_idle_cpu(i) {
                // The shallowest idle state first, whatever its timestamp;
                // among equals (or without a cpuidle state: idle_get_state()
                // NULL) the most recently idled CPU, whose cache may be warmer.
                // Deviation: the first idle CPU is taken even with an
                // idle_stamp of 0, where the kernel's `> latest` (from 0)
                // skips a NULL-state CPU that never idled.
                let stamp = self.sched.rqs[i].idle_stamp.unwrap_or(0);
                let latency = self.idle_get_state_exit_latency(i);
                let better = match (shallowest, latency) {
                    (None, _) => true,
                    (Some((_, min, _)), Some(l)) if l < min => true,
                    (Some((_, min, s)), l) => l.is_none_or(|l| l == min) && stamp > s,
                };
                if better {
                    let min = match (shallowest, latency) {
                        (_, Some(l)) => l,
                        (Some((_, m, _)), None) => m,
                        (None, None) => u64::MAX,
                    };
                    shallowest = Some((i, min, stamp));
                }
            } else if shallowest.is_none() {
                let load = self.cpu_load(i);
                if load < min_load {
                    min_load = load;
                    least_loaded = Some(i);
                }
            }
        }
        shallowest.map(|(c, ..)| c).or(least_loaded).unwrap_or(self.topo.groups[g].first_cpu)
    }

    /// find_idlest_cpu(): descend from domain level `lvl` of `cpu`.
    pub fn find_idlest_cpu(&mut self, cpu: usize, lvl: usize, p: TaskId, prev: usize, sd_flag: u32) -> usize {
        let d = self.topo.cpu_domains[cpu][lvl];
        if !self.topo.domains[d].span.iter().any(|&c| self.sched.tasks[p].cpus.test(c)) {
            return prev;
        }
        let mut cpu = cpu;
        let mut new_cpu = cpu;
        let mut level: Option<usize> = Some(lvl);
        while let Some(l) = level {
            let d = self.topo.cpu_domains[cpu][l];
            let child = if l == 0 { None } else { Some(l - 1) };
            if self.topo.domains[d].flags & sd_flag == 0 {
                level = child;
                continue;
            }
            let Some(g) = self.find_idlest_group(d, l, p, cpu) else {
                level = child;
                continue;
            };
            new_cpu = self.find_idlest_group_cpu(g, p);
            if new_cpu == cpu {
                level = child;
                continue;
            }
            let weight = self.topo.domains[d].span_weight;
            cpu = new_cpu;
            level = self.topo.highest_flag_level_below(cpu, weight, sd_flag);
        }
        new_cpu
    }
}

#[cfg(test)]
#[path = "wakeup_tests.rs"]
mod tests;
