//! struct dl_rq (kernel/sched/sched.h): the deadline class's per-CPU
//! state, which sched/deadline.rs and cpudeadline.rs work on.

use std::collections::BTreeSet;

use crate::sched::pelt;
use crate::sched::task::{DlEntity, TaskId};

/// The fair server's key in the dl_rq tree, where the tasks' ids are.
pub const FAIR_SERVER: TaskId = TaskId::MAX;

/// rq->fair_server (6.12+): a deadline entity that runs the fair class
/// (sched/dl_server.rs).
#[derive(Debug, Clone, Default)]
pub struct FairServer {
    /// Its reservation, budget, deadline, throttle and timer, as a task's.
    pub dl: DlEntity,
    /// dl_server_active: started (a fair task came), not yet stopped.
    pub active: bool,
    /// dl_defer_armed: waiting for the zero-laxity time (deadline -
    /// runtime) before it may run.
    pub defer_armed: bool,
    /// dl_defer_running: the starvation it waited for came; it now runs
    /// as an ordinary deadline entity, period after period.
    pub defer_running: bool,
    /// The idle task's exec_start: idle time counts as the fair class's
    /// service (dl_server_update_idle_time).
    pub idle_start: u64,
    /// Times it ran the fair class (was picked), and times it stopped.
    pub picks: u64,
    pub stops: u64,
    /// rq->dl_server: the fair task the server's pick chose, while that
    /// pick stands (the next pick clears it), whether the server is still
    /// queued or throttled itself in that pick.
    pub served: Option<TaskId>,
}

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
    /// dl_nr_migratory (before 6.7): queued tasks that may migrate.
    pub dl_nr_migratory: u32,
    /// rq->avg_dl: PELT utilisation of deadline tasks on this CPU, which
    /// scale_rt_capacity takes off the capacity the fair balancer sees.
    pub avg_dl: pelt::SchedAvg,
    /// rq->fair_server.
    pub fs: FairServer,
    /// GRUB (4.13+, sched/dl_grub.rs), all << BW_SHIFT. running_bw: the
    /// active bandwidth (entities queued, throttled, or blocked before
    /// their 0-lag time); this_bw: every deadline entity of this runqueue,
    /// blocked ones too; extra_bw: this CPU's share of the root domain's
    /// unreserved bandwidth; max_bw: Umax; bw_ratio: 1 / Umax <<
    /// RATIO_SHIFT.
    pub running_bw: u64,
    pub this_bw: u64,
    pub extra_bw: u64,
    pub max_bw: u64,
    pub bw_ratio: u64,
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
    /// Runtime overruns of SCHED_FLAG_DL_OVERRUN tasks (each a SIGXCPU).
    pub overruns: u64,
}
