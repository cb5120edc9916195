//! Models the task-group half of kernel/sched/fair.c
//! (CONFIG_FAIR_GROUP_SCHED), issue 39 step 3: a task group has a cfs_rq and
//! a group sched_entity on every CPU; the entity (`my_q` its cfs_rq) is
//! queued on the parent group's cfs_rq of the same CPU, and the root group's
//! cfs_rq is the CPU's `rq->cfs` (LINUX-FACTS §11.1).
//!
//! A group entity's weight is calc_group_shares() of its cfs_rq (§11.2):
//! the group's shares times this CPU's part of the group's load, where the
//! group's load is the sum the CPUs published to tg->load_avg.
//!
//! Without a `[[cgroup]]` every task is in the root group, no group entity
//! exists and every walk up the tree stops at the task's own entity.

use crate::kernel::FairEra;
use crate::sched::env::SchedEnv;
use crate::sched::sched::{CfsRq, CfsRqId};
use crate::sched::task::{LoadWeight, SeId, TaskId};
pub use crate::sched::task_group::{GroupSe, TaskGroups, Tg, TgId, MAX_SHARES, MIN_SHARES, ROOT_TG};

/// `by_groups!(env.f(args))`: `f::<true>` when a task group exists besides
/// the root, `f::<false>` (its walks up the tree compiled away) when not.
macro_rules! by_groups {
    ($env:ident . $f:ident ( $($a:expr),* )) => {
        if $env.sched.groups.any() {
            $env.$f::<true>($($a),*)
        } else {
            $env.$f::<false>($($a),*)
        }
    };
}
pub(crate) use by_groups;

impl SchedEnv {
    /// The fair class's update_curr(): the task's entity, then (with
    /// groups) each ancestor, charged the same `delta` in its own virtual
    /// time.
    /// Deviation: the kernel charges each level's curr when that level's
    /// cfs_rq is next updated (an enqueue, dequeue or tick there); the
    /// model charges every level at once. The sums are the same; a group
    /// entity's request can end (and reschedule) earlier than the kernel's
    /// check of it.
    #[inline(always)]
    pub(crate) fn update_curr_task_fair<const G: bool>(&mut self, cpu: usize, curr: TaskId, delta: u64) {
        let mut se = SeId::task(curr);
        let mut cfs_rq = if G { self.cfs_rq_of(se) } else { CfsRqId::root(cpu) };
        loop {
            self.update_curr_fair::<G>(cfs_rq, se, delta);
            if G && self.sched.groups.bandwidth_used {
                self.account_cfs_rq_runtime(cfs_rq, delta); // fair/bandwidth.rs
            }
            let Some(parent) = (if G { self.parent_entity(se) } else { None }) else { break };
            self.charge_group_entity(parent, delta);
            (se, cfs_rq) = (parent, self.cfs_rq_of(parent));
        }
    }

    /// parent_entity().
    #[inline]
    pub(crate) fn parent_entity(&self, se: SeId) -> Option<SeId> {
        match se.task_of() {
            Some(t) => {
                let task = &self.sched.tasks[t];
                if task.tg == ROOT_TG {
                    None
                } else {
                    self.sched.groups.tgs[task.tg].se[task.cpu]
                }
            }
            None => self.sched.groups.ses[se.group_index()].parent,
        }
    }

    /// cfs_rq_of(): the cfs_rq an entity queues on (a task's: its group's
    /// on its CPU).
    #[inline]
    pub(crate) fn cfs_rq_of(&self, se: SeId) -> CfsRqId {
        match se.task_of() {
            Some(t) => {
                let task = &self.sched.tasks[t];
                if task.tg == ROOT_TG {
                    CfsRqId::root(task.cpu)
                } else {
                    self.sched.groups.tgs[task.tg].cfs_rq[task.cpu]
                }
            }
            None => self.sched.groups.ses[se.group_index()].cfs_rq,
        }
    }

    /// parent_entity() where `G` says whether any task group exists but
    /// the root (false: none, and no entity has a parent).
    #[inline(always)]
    pub(crate) fn parent_of<const G: bool>(&self, se: SeId) -> Option<SeId> {
        if G {
            self.parent_entity(se)
        } else {
            None
        }
    }

    /// cfs_rq_of() of an entity on `cpu`, where `G` says whether any task
    /// group exists but the root (false: every entity is a task's, queued
    /// on its CPU's root cfs_rq).
    #[inline(always)]
    pub(crate) fn cfs_rq_of_on<const G: bool>(&self, se: SeId, cpu: usize) -> CfsRqId {
        if G {
            self.cfs_rq_of(se)
        } else {
            CfsRqId::root(cpu)
        }
    }

    /// group_cfs_rq(): a group entity's own cfs_rq (None for a task's).
    #[inline]
    pub(crate) fn group_cfs_rq(&self, se: SeId) -> Option<CfsRqId> {
        match se.task_of() {
            Some(_) => None,
            None => Some(self.sched.groups.ses[se.group_index()].my_q),
        }
    }

    /// The fair tasks queued on `cpu` (its cfs_rq and every group cfs_rq
    /// there), running one included: the rq's cfs_tasks list.
    pub(crate) fn rq_cfs_tasks(&self, cpu: usize) -> Vec<TaskId> {
        let mut v = Vec::new();
        let mut push = |cfs: &CfsRq| {
            v.extend(cfs.tasks_timeline.iter().filter_map(|&(_, e)| e.task_of()));
            v.extend(cfs.curr.and_then(SeId::task_of));
        };
        push(&self.sched.cfs_rqs[cpu]);
        for tg in self.sched.groups.tgs.iter().skip(1) {
            push(&self.sched.cfs_rqs[tg.cfs_rq[cpu].index()]);
        }
        v
    }

    /// se->depth.
    pub(crate) fn se_depth(&self, se: SeId) -> u32 {
        match se.task_of() {
            Some(t) => self.sched.groups.tgs.get(self.sched.tasks[t].tg).map_or(0, |g| g.depth),
            None => self.sched.groups.ses[se.group_index()].depth,
        }
    }
}

impl SchedEnv {
    /// calc_group_shares(): the group's shares times this CPU's part of the
    /// group's load, clamped to [MIN_SHARES, shares], in the kernel's
    /// scaled units and then scale_load_down() to the entity's weight.
    pub(crate) fn calc_group_shares(&self, q: CfsRqId) -> u64 {
        let g = self.cfs_rq(q);
        let tg = &self.sched.groups.tgs[g.tg];
        let tg_shares = tg.shares << 10;
        let load = g.load_weight.max(g.avg.load_avg);
        let tg_weight = tg.load_avg - g.tg_load_avg_contrib as i64 + load as i64;
        let mut shares = tg_shares * load;
        if tg_weight > 0 {
            shares /= tg_weight as u64;
        }
        let shares = shares.clamp(MIN_SHARES, tg_shares);
        (shares >> 10).max(2)
    }

    /// update_cfs_group(): a group entity's weight from its cfs_rq.
    /// Deviation: before 6.7 (eab03c23c2a1) the kernel reweights even when
    /// the weight is unchanged, which recomputes the entity's load_avg from
    /// its load_sum; here an unchanged weight is left alone on every version.
    pub(crate) fn update_cfs_group(&mut self, se: SeId) {
        let Some(q) = self.group_cfs_rq(se) else { return };
        let tg = self.cfs_rq(q).tg;
        let shares = if self.sched.groups.tgs[tg].idle {
            self.cfg.mech.weight_idleprio.0 as u64
        } else {
            self.calc_group_shares(q)
        };
        if self.se(se).load.weight as u64 != shares {
            let cfs_rq = self.cfs_rq_of(se);
            self.reweight_entity(cfs_rq, se, shares as u32);
        }
    }

    /// reweight_entity() as 6.12.117 has it: a queued entity leaves its
    /// cfs_rq's load and sums at the old weight and comes back at the new
    /// one. CFS keeps its vruntime. EEVDF (reweight_eevdf, 6.7 .. 6.12)
    /// keeps its lag and its relative deadline in real time, about V taken
    /// before it leaves the sums: v' = V - lag(V, v) w / w', d' = V + (d -
    /// V) w / w' (lag() clamped as entity_lag() clamps it); an entity not
    /// queued has its saved vlag scaled by w / w'.
    /// Deviation: 6.6.0 scaled the deadline only, and 6.13 .. 6.18
    /// (6d71a9c61604) scale the saved lag and place the entity again; the
    /// model uses 6.7's form for every EEVDF version.
    pub(crate) fn reweight_entity(&mut self, cfs_rq: CfsRqId, se: SeId, weight: u32) {
        let eevdf = self.cfg.mech.fair == crate::kernel::FairEra::Eevdf;
        let on_rq = self.se(se).on_rq;
        let is_curr = self.cfs_rq(cfs_rq).curr == Some(se);
        let old = self.se(se).load.weight;
        let mut avruntime = 0;
        if on_rq {
            if eevdf {
                avruntime = self.avg_vruntime::<true>(cfs_rq);
            }
            if !is_curr {
                if eevdf {
                    self.avg_sub::<true>(cfs_rq, se);
                }
                let v = self.se(se).vruntime;
                let removed = self.cfs_rq_mut(cfs_rq).tasks_timeline.remove(&(v, se));
                debug_assert!(removed, "a queued group entity was not in the tree");
            }
            self.cfs_rq_mut(cfs_rq).load_weight -= old as u64;
        }
        if eevdf && on_rq {
            let v = avruntime as i128;
            if avruntime != self.se(se).vruntime {
                let span = (2 * self.se(se).slice).max(self.cfg.tick_ns);
                let limit = self.vdelta::<true>(span, se) as i128;
                let e = self.se_mut(se);
                let lag = (v - e.vruntime as i128).clamp(-limit, limit) * old as i128 / weight as i128;
                e.vruntime = (v - lag).max(0) as u64;
            }
            let e = self.se_mut(se);
            let vslice = (e.deadline as i128 - v) * old as i128 / weight as i128;
            e.deadline = (v + vslice).max(0) as u64;
        } else if eevdf {
            let e = self.se_mut(se);
            e.vlag = (e.vlag as i128 * old as i128 / weight as i128) as i64;
        }
        let (w, inv) = crate::prio::load_weight_of(weight);
        self.se_mut(se).load = LoadWeight { weight: w, inv_weight: inv };
        if self.se(se).attached {
            let mut se_avg = self.se(se).avg;
            crate::sched::pelt::reweight_load_avg(&mut self.cfs_rq_mut(cfs_rq).avg, &mut se_avg, old as u64, w as u64);
            self.se_mut(se).avg = se_avg;
        }
        if on_rq {
            self.cfs_rq_mut(cfs_rq).load_weight += w as u64;
            if !is_curr {
                let v = self.se(se).vruntime;
                self.cfs_rq_mut(cfs_rq).tasks_timeline.insert((v, se));
                if eevdf {
                    self.avg_add::<true>(cfs_rq, se);
                }
            }
        }
    }

    /// update_curr() of a running task's group entity `se`: what
    /// update_curr() does besides the virtual time (update_curr_fair).
    pub(crate) fn charge_group_entity(&mut self, se: SeId, delta: u64) {
        let now = self.now;
        let g = self.se_mut(se);
        g.sum_exec_runtime += delta;
        g.exec_start = now;
    }

    /// update_tg_load_avg(): publish this cfs_rq's load_avg to tg->load_avg
    /// when it moved by more than 1/64 of what was last published.
    /// Deviation: 6.7's rate limit (once a millisecond, 1528c661c24b) is not
    /// modelled.
    pub(crate) fn update_tg_load_avg(&mut self, q: CfsRqId) {
        let g = &mut self.sched.cfs_rqs[q.index()];
        if g.tg == ROOT_TG {
            return;
        }
        let delta = g.avg.load_avg as i64 - g.tg_load_avg_contrib as i64;
        if delta.unsigned_abs() > g.tg_load_avg_contrib / 64 {
            g.tg_load_avg_contrib = g.avg.load_avg;
            let tg = g.tg;
            self.sched.groups.tgs[tg].load_avg += delta;
        }
    }
}

impl SchedEnv {
    /// sched_create_group() of each `[[cgroup]]`, parents first: task group
    /// `c.tg` with a cfs_rq and an entity on every CPU; then cpu.max.
    pub fn create_cgroups(&mut self, cgroups: &[crate::sched::task_group::CgroupDef]) {
        for c in cgroups {
            let tg = self.sched.groups.create(&mut self.sched.cfs_rqs, &c.path, c.parent, c.shares, c.idle);
            debug_assert_eq!(tg, c.tg);
        }
        for c in cgroups {
            if let Some(def) = c.bandwidth {
                self.init_cfs_bandwidth(c.tg, def); // fair/bandwidth.rs
            }
        }
    }
}

/// The walks up the tree of the fair class's task-level paths (sched/fair/entity.rs).
impl SchedEnv {
    /// The h_nr_* counts of one cfs_rq for a task joining (`n` = 1) or
    /// leaving (-1) below it; the root's idle count is the runqueue's too.
    pub(crate) fn account_h_nr<const G: bool>(&mut self, cfs_rq: CfsRqId, n: i32, idle: bool, delayed: bool) {
        let cfs = self.cfs_rq_mut(cfs_rq);
        cfs.h_nr_running = cfs.h_nr_running.wrapping_add_signed(n);
        if idle {
            cfs.idle_h_nr_running = cfs.idle_h_nr_running.wrapping_add_signed(n);
        }
        if delayed {
            cfs.h_nr_delayed = cfs.h_nr_delayed.wrapping_add_signed(n);
        }
        if idle && (!G || self.cfs_rq(cfs_rq).tg == ROOT_TG) {
            let cpu = self.cfs_rq(cfs_rq).cpu;
            let r = &mut self.sched.rq_idle[cpu].idle_h_nr_running;
            *r = r.wrapping_add_signed(n);
            self.rq_idle_changed(cpu);
        }
    }

    /// cfs_rq_is_idle(): a group cfs_rq of an idle group (cpu.idle); from
    /// there up, its tasks count as idle.
    pub(crate) fn cfs_rq_is_idle(&self, cfs_rq: CfsRqId) -> bool {
        let tg = self.cfs_rq(cfs_rq).tg;
        tg != ROOT_TG && self.sched.groups.tgs[tg].idle
    }

    /// Whether `se` is the running task's entity or one of its ancestors.
    pub(crate) fn entity_is_running(&self, cpu: usize, se: SeId) -> bool {
        let Some(c) = self.sched.rqs[cpu].curr else { return false };
        let mut e = Some(SeId::task(c));
        if se.task_of().is_some() {
            return e == Some(se);
        }
        if self.sched.tasks[c].sched_class() != crate::sched::class::SchedClass::Fair {
            return false;
        }
        while let Some(x) = e {
            if x == se {
                return true;
            }
            e = self.parent_entity(x);
        }
        false
    }

    /// set_next_buddy(): `se` and its ancestors become their cfs_rqs' next
    /// buddies (an idle entity stops the walk).
    pub(crate) fn set_next_buddy(&mut self, se: SeId) {
        let mut e = Some(se);
        while let Some(x) = e {
            if self.se_is_idle(x) {
                return;
            }
            let q = self.cfs_rq_of(x);
            self.cfs_rq_mut(q).next = Some(x);
            e = self.parent_entity(x);
        }
    }

    /// put_prev_entity() of `prev`'s group entities on `cpu`, from its
    /// parent up to (not including) the first that is also an ancestor of
    /// `next`, the task picked to run next: the levels the switch leaves
    /// (the walk of pick_next_task_fair() to the common cfs_rq). On `cpu`,
    /// not on prev's CPU: a running task moved away before this switch
    /// (an affinity change) left its group entities current here, and
    /// walking its new CPU's left them so, lost to this CPU's picks (found
    /// by `difftest --groups`: a run where both CPUs went idle for good).
    pub(crate) fn put_prev_group_entities(&mut self, cpu: usize, prev: TaskId, next: Option<TaskId>) {
        let tg = self.sched.tasks[prev].tg;
        let mut e = if tg == ROOT_TG { None } else { self.sched.groups.tgs[tg].se[cpu] };
        while let Some(x) = e {
            if next.is_some_and(|n| self.is_ancestor(x, n)) {
                return;
            }
            let q = self.cfs_rq_of(x);
            if self.cfs_rq(q).curr == Some(x) {
                if self.se(x).on_rq {
                    self.update_load_avg::<true>(q, Some(x));
                    let v = self.se(x).vruntime;
                    self.cfs_rq_mut(q).tasks_timeline.insert((v, x));
                    if self.cfg.mech.fair == FairEra::Eevdf {
                        self.avg_add::<true>(q, x);
                    }
                }
                self.cfs_rq_mut(q).curr = None;
            }
            e = self.parent_entity(x);
        }
    }

    /// Whether the group entity `se` is an ancestor of task `t`'s entity
    /// (on the task's CPU).
    pub(crate) fn is_ancestor(&self, se: SeId, t: TaskId) -> bool {
        if self.sched.tasks[t].sched_class() != crate::sched::class::SchedClass::Fair {
            return false;
        }
        let mut e = self.parent_entity(SeId::task(t));
        while let Some(x) = e {
            if x == se {
                return true;
            }
            e = self.parent_entity(x);
        }
        false
    }

    /// find_matching_se(): walk both entities up to the same depth, then on
    /// until they are queued on the same cfs_rq.
    pub(crate) fn find_matching_se(&self, mut se: SeId, mut pse: SeId) -> (SeId, SeId) {
        let (mut d, mut pd) = (self.se_depth(se), self.se_depth(pse));
        while d > pd {
            d -= 1;
            se = self.parent_entity(se).expect("an entity below the root has a parent");
        }
        while pd > d {
            pd -= 1;
            pse = self.parent_entity(pse).expect("an entity below the root has a parent");
        }
        while self.cfs_rq_of(se) != self.cfs_rq_of(pse) {
            se = self.parent_entity(se).expect("entities on different cfs_rqs have parents");
            pse = self.parent_entity(pse).expect("entities on different cfs_rqs have parents");
        }
        (se, pse)
    }

    /// The cfs_rq task `tid` queues on when on `cpu` (its group's there).
    pub(crate) fn task_cfs_rq_on(&self, tid: TaskId, cpu: usize) -> CfsRqId {
        let tg = self.sched.tasks[tid].tg;
        if tg == crate::sched::fair::group::ROOT_TG {
            CfsRqId::root(cpu)
        } else {
            self.sched.groups.tgs[tg].cfs_rq[cpu]
        }
    }
}

#[cfg(test)]
mod tests {

    /// Run `body` (the scenario's `[[cgroup]]`s and `[[task]]`s) on `cpus`
    /// CPUs for `ms` milliseconds of `version`; each task group's share of
    /// the machine's CPU time (index: the task group; 0 the root's).
    fn shares(version: &str, cpus: usize, ms: u64, body: &str) -> Vec<f64> {
        let sim = crate::sched::fair::bandwidth_tests::run(version, cpus, ms, body);
        let k = &sim.w.m.kt.k;
        let mut by_tg = vec![0u64; k.sched.groups.tgs.len().max(1)];
        for t in &k.sched.tasks {
            by_tg[t.tg] += t.se.sum_exec_runtime;
        }
        let total = (cpus as u64 * ms * 1_000_000) as f64;
        by_tg.iter().map(|&ns| ns as f64 / total).collect()
    }

    /// `n` CPU hogs named `name` in `cgroup`.
    fn hogs(name: &str, n: usize, cgroup: &str) -> String {
        format!("[[task]]\nname = \"{name}\"\ncount = {n}\ncgroup = \"{cgroup}\"\nprogram = [{{ run = \"100s\" }}]\n")
    }

    fn cgroup(path: &str, extra: &str) -> String {
        format!("[[cgroup]]\npath = \"{path}\"\n{extra}\n")
    }

    /// /a (cpu.weight 100) with `na` hogs and /b (200) with `nb` on `cpus`
    /// CPUs, 3 s: each task group's share.
    fn weights_100_200(version: &str, cpus: usize, na: usize, nb: usize) -> Vec<f64> {
        weights_100_200_for(version, cpus, na, nb, 3000)
    }

    fn weights_100_200_for(version: &str, cpus: usize, na: usize, nb: usize, ms: u64) -> Vec<f64> {
        let (a, b) = (cgroup("/a", "\"cpu.weight\" = 100"), cgroup("/b", "\"cpu.weight\" = 200"));
        shares(version, cpus, ms, &format!("{a}{b}{}{}", hogs("a", na, "/a"), hogs("b", nb, "/b")))
    }

    #[test]
    fn two_groups_split_one_cpu_by_their_weights_whatever_their_task_counts() {
        for version in ["6.1", "6.12"] {
            for (na, nb) in [(1, 3), (3, 1), (2, 2)] {
                let s = weights_100_200(version, 1, na, nb);
                assert!(
                    (s[1] - 1.0 / 3.0).abs() < 0.01 && (s[2] - 2.0 / 3.0).abs() < 0.01,
                    "{version} {na}/{nb}: {s:?}"
                );
            }
        }
    }

    /// /a and /b (weight 100 each); under /a, /a/x (100) with 2 hogs and
    /// /a/y (300) with 1; /b with 3. Task groups 1 /a, 2 /a/x, 3 /a/y, 4 /b.
    fn nested_body() -> String {
        format!(
            "{}{}{}{}{}{}{}",
            cgroup("/a", ""),
            cgroup("/a/x", ""),
            cgroup("/a/y", "\"cpu.weight\" = 300"),
            cgroup("/b", ""),
            hogs("x", 2, "/a/x"),
            hogs("y", 1, "/a/y"),
            hogs("b", 3, "/b")
        )
    }

    #[test]
    fn nested_groups_split_their_parents_share() {
        // /a and /b halve the CPU; /a's children split its half 1:3.
        for version in ["6.1", "6.12"] {
            let s = shares(version, 1, 3000, &nested_body());
            let want = [0.0, 0.0, 0.125, 0.375, 0.5];
            for (tg, w) in want.iter().enumerate() {
                assert!((s[tg] - w).abs() < 0.01, "{version}: task group {tg}: {s:?}");
            }
        }
    }

    #[test]
    fn an_idle_group_yields_to_a_busy_one() {
        // cpu.idle: the group entity weighs WEIGHT_IDLEPRIO (3) against the
        // busy group's 1024, and its tasks count as idle.
        let body = format!(
            "{}{}{}{}",
            cgroup("/busy", ""),
            cgroup("/idle", "\"cpu.idle\" = 1"),
            hogs("busy", 2, "/busy"),
            hogs("idle", 2, "/idle")
        );
        let s = shares("6.12", 1, 3000, &body);
        assert!(s[2] < 0.01 && s[1] > 0.99, "{s:?}");
    }

    #[test]
    fn sleepers_in_groups_keep_the_runqueues_consistent() {
        // Sleepers are delayed (6.12's DELAY_DEQUEUE) on their group's
        // cfs_rq and woken there (requeue_delayed_entity); h_nr_delayed
        // counts them at every level. The invariant checker runs at every
        // event (`check = true` in shares()).
        let mut body = String::new();
        for i in 0..8 {
            body += &cgroup(&format!("/g{i}"), &format!("\"cpu.weight\" = {}", 50 + 50 * (i % 3)));
        }
        for i in 0..8 {
            body += &format!(
                "[[task]]\nname = \"t{i}\"\ncount = 3\ncgroup = \"/g{i}\"\n\
                 program = [{{ loop = {{ body = [{{ run = \"2ms\" }}, {{ sleep = \"3ms\" }}] }} }}]\n"
            );
        }
        for version in ["6.1", "6.6", "6.12", "6.18"] {
            let s = shares(version, 4, 500, &body);
            assert!(s.iter().sum::<f64>() > 0.5, "{version}: {s:?}");
        }
    }

    #[test]
    fn two_groups_split_two_cpus_as_this_hosts_kernel_does() {
        // /a (cpu.shares 1024) and /b (2048) with na and nb hogs on two
        // CPUs, measured on this project's host (Linux 6.18.44, two vCPUs
        // under KVM, cgroup v1; 10-20 s after 1 s, 2026-11-27): /a's share
        // of the CPU time. The balancer weighs each task by task_h_load()
        // and rotates the hogs a few times a second, as the host's kernel
        // does (1.5-3 migrations a second each).
        // Not held: 1/2 (host 0.325-0.338, the model 0.380): there the
        // model's balances always find /b's hog waiting and move it, never
        // /a's, where the host moves all three alike. 1/5 (host 0.3555)
        // held at 0.354 until the group entities' PELT propagation; with
        // it the model gives 0.30: /a's CPU pulls a /b hog back within
        // 36 ms of each return to {a, b} | {b, b, b, b}. Not traced
        // further; in that placement, settled, the detach test is a tie in
        // exact arithmetic (h_load 409.6 >> 2 against an imbalance of
        // 102.4), as it is for 1/3 (682.7 >> 2 against 170.7), which the
        // 6.1 guest resolves the model's way. The model of 6.12 is judged
        // by a 6.12 guest instead (validation/cg-weights.toml).
        let host = [((2, 6), 0.3333), ((1, 3), 0.3396), ((2, 2), 0.3342), ((2, 3), 0.3318), ((3, 1), 0.4995)];
        for version in ["6.18"] {
            for ((na, nb), real) in host {
                let s = weights_100_200_for(version, 2, na, nb, 10_000);
                let a = s[1] / (s[1] + s[2]);
                assert!((a - real).abs() < 0.015, "{version} {na}/{nb}: /a {a:.4}, the host {real}");
            }
        }
    }

    #[test]
    fn nested_and_idle_groups_on_two_cpus_as_this_hosts_kernel_does() {
        // Measured on this project's host (6.18.44, two vCPUs, cgroup v1;
        // 10 s after 1 s, 2026-11-27): each cgroup's part of the CPU time.
        let s = shares("6.18", 2, 10_000, &nested_body());
        for (tg, real) in [(2, 0.1245), (3, 0.3795), (4, 0.4925)] {
            assert!((s[tg] - real).abs() < 0.015, "nested: task group {tg}: {s:?}, the host {real}");
        }
        // cpu.idle beside one busy hog (the idle group takes the other
        // CPU) and beside three (it gets almost nothing).
        for (busy, real_busy, real_idle) in [(1, 0.4980, 0.4965), (3, 0.9905, 0.0045)] {
            let body = format!(
                "{}{}{}{}",
                cgroup("/busy", ""),
                cgroup("/idle", "\"cpu.idle\" = 1"),
                hogs("busy", busy, "/busy"),
                hogs("idle", 2, "/idle")
            );
            let s = shares("6.18", 2, 10_000, &body);
            assert!((s[1] - real_busy).abs() < 0.015 && (s[2] - real_idle).abs() < 0.015, "{busy} busy: {s:?}");
        }
    }

    #[test]
    fn two_groups_split_several_cpus_by_their_weights() {
        // The textbook's 1:2 with enough tasks on every CPU (no real
        // measurement: this host has two CPUs). 6.12 on four CPUs: 4 + 4
        // hogs 0.342, 2 + 10 0.356; 6.1 on two: 2 + 6 0.334.
        for (version, cpus, na, nb, tol) in [("6.1", 2, 2, 6, 0.01), ("6.12", 4, 4, 4, 0.03), ("6.12", 4, 2, 10, 0.03)]
        {
            let s = weights_100_200_for(version, cpus, na, nb, 10_000);
            let ok = (s[1] - 1.0 / 3.0).abs() < tol && (s[2] - 2.0 / 3.0).abs() < tol;
            assert!(ok, "{version} {cpus} CPUs {na}/{nb}: {s:?}");
        }
    }
}
