//! update_blocked_averages() (sched_balance_update_blocked_averages in
//! 6.10+) of kernel/sched/fair.c with CONFIG_FAIR_GROUP_SCHED: a CPU's
//! group cfs_rqs that hold only blocked load (their tasks asleep or gone)
//! decay when someone walks rq->leaf_cfs_rq_list, bottom-up, and each
//! publishes its decayed load to tg->load_avg (update_tg_load_avg) and
//! passes it to its group entity on the level above. Without the walk a
//! group whose task left a CPU would keep that CPU's load in tg->load_avg,
//! and calc_group_shares() would give the group's entities on the CPUs it
//! runs on too little weight.
//!
//! Who walks: the periodic balance softirq of a busy CPU for itself
//! (run_rebalance_domains), a newly idle CPU before it balances
//! (newidle_balance past its guard), and the idle load balancer for each
//! tickless idle CPU (update_nohz_stats, at most once a jiffy per CPU).
//! Deviation: the kernel's stats-only NOHZ kick (NOHZ_STATS_KICK, every
//! LOAD_AVG_PERIOD ms while an idle CPU has blocked load) is not modelled;
//! as for the root cfs_rq, an idle CPU's groups are brought up to date
//! where the balancer reads that CPU (update_sg_lb_stats), at most once a
//! jiffy.
//!
//! Only with task groups: without them the root cfs_rq keeps the model's
//! read-time update (sched/fair/balance.rs), so runs without cgroups are
//! unchanged.

use crate::sched::env::SchedEnv;
use crate::sched::sched::CfsRqId;
use crate::sched::task_group::{TgId, ROOT_TG};

impl SchedEnv {
    /// list_add_leaf_cfs_rq(): group `tg`'s cfs_rq on `cpu` got an entity
    /// (enqueue_entity with nr_queued == 1); it and its ancestors are kept
    /// on the CPU's leaf list until they have decayed.
    pub(crate) fn list_add_leaf_cfs_rq(&mut self, cpu: usize, tg: TgId) {
        let mut t = Some(tg);
        while let Some(g) = t {
            if g == ROOT_TG {
                break;
            }
            let leaf = &mut self.sched.groups.leaf[cpu];
            match leaf.binary_search_by(|x| g.cmp(x)) {
                Ok(_) => break, // on the list, and so are its ancestors
                Err(i) => leaf.insert(i, g),
            }
            t = self.sched.groups.tgs[g].parent;
        }
    }

    /// sched_balance_update_blocked_averages(): decay every listed group
    /// cfs_rq of `cpu` bottom-up, publish it to tg->load_avg, update its
    /// group entity one level up unless that has nothing left
    /// (skip_blocked_update), drop the fully decayed ones
    /// (cfs_rq_is_decayed), then the root cfs_rq.
    pub(crate) fn update_blocked_averages(&mut self, cpu: usize) {
        if !self.sched.groups.any() {
            return;
        }
        self.sched.groups.blocked_tick[cpu] = self.now / self.cfg.tick_ns;
        let mut k = 0;
        while k < self.sched.groups.leaf[cpu].len() {
            let tg = self.sched.groups.leaf[cpu][k];
            let q = self.sched.groups.tgs[tg].cfs_rq[cpu];
            self.update_load_avg::<true>(q, None); // update_tg_load_avg() when it decayed
            let se = self.sched.groups.tgs[tg].se[cpu].expect("a child group has an entity on every CPU");
            let skip = {
                let e = self.se(se);
                e.avg.load_avg == 0 && e.avg.util_avg == 0 && !self.cfs_rq(q).propagate
            };
            if !skip {
                let parent_q = self.cfs_rq_of(se);
                self.update_load_avg::<true>(parent_q, Some(se));
            }
            if self.cfs_rq_is_decayed(cpu, q) {
                self.sched.groups.leaf[cpu].remove(k);
            } else {
                k += 1;
            }
        }
        self.update_load_avg::<true>(CfsRqId::root(cpu), None);
    }

    /// update_nohz_stats(): the blocked averages of an idle `cpu`, at most
    /// once a jiffy.
    pub(crate) fn update_nohz_stats(&mut self, cpu: usize) {
        if self.sched.groups.any() && self.sched.groups.blocked_tick[cpu] != self.now / self.cfg.tick_ns {
            self.update_blocked_averages(cpu);
        }
    }

    /// cfs_rq_is_decayed(): no entity queued, every PELT sum at zero, no
    /// listed child, nothing left in tg->load_avg.
    fn cfs_rq_is_decayed(&self, cpu: usize, q: CfsRqId) -> bool {
        let c = self.cfs_rq(q);
        if c.load_weight != 0
            || c.avg.load_sum != 0
            || c.avg.util_sum != 0
            || c.avg.runnable_sum != 0
            || c.tg_load_avg_contrib != 0
        {
            return false;
        }
        let tg = c.tg;
        !self.sched.groups.leaf[cpu].iter().any(|&g| self.sched.groups.tgs[g].parent == Some(tg))
    }
}

#[cfg(test)]
mod tests {
    use crate::sched::sched::CfsRqId;

    /// /a's task on CPU 0 runs 100 ms and sleeps for good while its
    /// sibling hogs CPU 1: a second later CPU 0's part of /a has decayed
    /// out of tg->load_avg (CPU 1's balance reads idle CPU 0 and walks its
    /// blocked groups), its cfs_rq is off the leaf list, and /a's entity on
    /// CPU 1 weighs the whole group's shares.
    #[test]
    fn a_group_that_left_a_cpu_decays_out_of_tg_load_avg() {
        for version in ["6.1", "6.12"] {
            let body = "[[cgroup]]\npath = \"/a\"\n\
                 [[task]]\nname = \"once\"\ncgroup = \"/a\"\ncpus = [0]\nprogram = [{ run = \"100ms\" }, { sleep = \"100s\" }]\n\
                 [[task]]\nname = \"hog\"\ncgroup = \"/a\"\ncpus = [1]\nprogram = [{ run = \"100s\" }]\n";
            let sim = crate::sched::fair::bandwidth_tests::run(version, 2, 1100, body);
            let g = &sim.w.m.kt.k.sched.groups;
            let a = &g.tgs[1];
            let cfs_rqs = &sim.w.m.kt.k.sched.cfs_rqs;
            let (q0, q1): (CfsRqId, CfsRqId) = (a.cfs_rq[0], a.cfs_rq[1]);
            assert_eq!(cfs_rqs[q0.index()].avg.load_avg, 0, "{version}: CPU 0's /a decayed");
            assert_eq!(cfs_rqs[q0.index()].tg_load_avg_contrib, 0, "{version}");
            assert!(!g.leaf[0].contains(&1), "{version}: CPU 0's /a left the leaf list");
            let contrib = cfs_rqs[q1.index()].tg_load_avg_contrib as i64;
            assert!((a.load_avg - contrib).abs() <= contrib / 32, "{version}: tg {} cpu1 {contrib}", a.load_avg);
            let se1 = &g.ses[a.se[1].unwrap().group_index()].se;
            assert!(se1.load.weight >= 1000, "{version}: /a's entity on CPU 1 weighs {}", se1.load.weight);
        }
    }
}
