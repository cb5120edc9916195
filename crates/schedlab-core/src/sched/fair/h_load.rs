//! task_h_load() and update_cfs_rq_h_load() (kernel/sched/fair.c, 3.8+):
//! with task groups a task weighs, for the load balancer and wake_affine,
//! its share of its group entity's load on each level up to the root, not
//! its own load_avg. Each cfs_rq caches its h_load for a jiffy.

use crate::sched::env::SchedEnv;
use crate::sched::sched::CfsRqId;
use crate::sched::task::{SeId, TaskId};
use crate::sched::task_group::{HLoad, ROOT_TG};

impl SchedEnv {
    /// task_h_load(): `p`'s load_avg scaled by its cfs_rq's h_load over
    /// that cfs_rq's load_avg.
    /// Deviation: without cgroups the model returns the task's load_avg;
    /// the kernel (CONFIG_FAIR_GROUP_SCHED) divides by the root's
    /// load_avg + 1, which makes it 1 less.
    #[inline]
    pub fn task_h_load(&self, p: TaskId) -> u64 {
        let load = self.sched.tasks[p].se.avg.load_avg;
        if !self.sched.groups.any() {
            return load;
        }
        self.task_h_load_groups(p, load)
    }

    #[inline(never)]
    fn task_h_load_groups(&self, p: TaskId, load: u64) -> u64 {
        let t = &self.sched.tasks[p];
        let cfs_rq = self.task_cfs_rq_on(p, t.cpu);
        self.update_cfs_rq_h_load(cfs_rq);
        let h_load = self.sched.groups.h_load.borrow()[cfs_rq.index()].h_load;
        load * h_load / (self.cfs_rq(cfs_rq).avg.load_avg + 1)
    }

    /// The group entity whose own cfs_rq `q` is (None: a root cfs_rq).
    fn owner_se(&self, q: CfsRqId) -> Option<SeId> {
        let c = self.cfs_rq(q);
        if c.tg == ROOT_TG {
            None
        } else {
            self.sched.groups.tgs[c.tg].se[c.cpu]
        }
    }

    /// update_cfs_rq_h_load(): walk up from `cfs_rq` to the first cfs_rq
    /// updated this jiffy (or the root, whose h_load is its load_avg),
    /// leaving h_load_next on the way, then down: each level's h_load is
    /// its parent's times the group entity's share of the parent's
    /// load_avg.
    pub(crate) fn update_cfs_rq_h_load(&self, cfs_rq: CfsRqId) {
        let now = self.now / self.cfg.tick_ns;
        let mut hl = self.sched.groups.h_load.borrow_mut();
        if hl.len() < self.sched.cfs_rqs.len() {
            hl.resize(self.sched.cfs_rqs.len(), HLoad::default());
        }
        if hl[cfs_rq.index()].last_update == now {
            return;
        }
        let mut q = cfs_rq;
        hl[q.index()].next = None;
        let mut se = self.owner_se(q);
        while let Some(e) = se {
            q = self.cfs_rq_of(e);
            hl[q.index()].next = Some(e);
            if hl[q.index()].last_update == now {
                break;
            }
            se = self.parent_entity(e);
        }
        if se.is_none() {
            hl[q.index()] = HLoad { h_load: self.cfs_rq(q).avg.load_avg, last_update: now, ..hl[q.index()] };
        }
        while let Some(e) = hl[q.index()].next {
            let load = hl[q.index()].h_load * self.se(e).avg.load_avg / (self.cfs_rq(q).avg.load_avg + 1);
            q = self.group_cfs_rq(e).expect("h_load_next is a group entity");
            hl[q.index()].h_load = load;
            hl[q.index()].last_update = now;
        }
    }
}
