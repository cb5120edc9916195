//! struct dl_rq (kernel/sched/sched.h): the deadline class's per-CPU
//! state, which sched/deadline.rs and cpudeadline.rs work on.

use std::collections::BTreeSet;

use crate::sched::pelt;
use crate::sched::task::TaskId;

/// struct dl_rq, reduced: the queued deadline entities by deadline (the
/// running one included, as the kernel keeps it in the tree), and the
/// pushable ones.
#[derive(Debug, Clone, Default)]
pub struct DlRq {
    /// dl_rq->root: (deadline, seq, task); equal deadlines in the order
    /// they were queued, as rb_add_cached() puts an equal key to the right.
    pub root: BTreeSet<(u64, u64, TaskId)>,
    /// dl_nr_running: entities in the tree.
    pub dl_nr_running: u32,
    /// pushable_dl_tasks_root: (deadline, seq, task), queued, not running,
    /// nr_cpus_allowed > 1.
    pub pushable: BTreeSet<(u64, u64, TaskId)>,
    /// dl_rq->overloaded: in rd->dlo_mask.
    pub overloaded: bool,
    /// rq->avg_dl: PELT utilisation of deadline tasks on this CPU, which
    /// scale_rt_capacity takes off the capacity the fair balancer sees.
    pub avg_dl: pelt::SchedAvg,
}

impl DlRq {
    /// earliest_dl.curr: the earliest queued deadline (None: no entity).
    #[inline]
    pub fn earliest(&self) -> Option<u64> {
        self.root.first().map(|&(d, _, _)| d)
    }

    /// earliest_dl.next: the earliest pushable deadline (0 / None: none).
    #[inline]
    pub fn earliest_next(&self) -> Option<u64> {
        self.pushable.first().map(|&(d, _, _)| d)
    }
}

/// What the deadline class did, for the report and the tests.
#[derive(Debug, Clone, Default)]
pub struct DlStats {
    /// Times a deadline entity was throttled.
    pub throttles: u64,
    /// Tasks moved by deadline push/pull.
    pub migrations: u64,
}
