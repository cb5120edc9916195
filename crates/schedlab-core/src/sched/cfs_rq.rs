//! struct cfs_rq (kernel/sched/sched.h): the fair class's runqueue, its
//! timeline (the rbtree of entities by vruntime) and the ids that name a
//! cfs_rq (a CPU's root one or, with issue 39, a task group's).

use crate::sched::pelt::SchedAvg;
use crate::sched::task::SeId;

// --------------------------------------------------------------- cfs_rq

/// Where min_vruntime starts. The kernel starts at (u64)(-(1 << 20)) and
/// relies on wrapping arithmetic; we start high enough that placing an
/// entity a sleeper credit or a lag behind never underflows, and compare
/// plain u64s (virtual time of 30 simulated days at weight 2 fits easily).
pub const MIN_VRUNTIME_START: u64 = 1 << 52;

/// The cfs_rq's timeline (the kernel's rbtree of entities by vruntime): a
/// sorted vector of (vruntime, entity). Insert and erase are O(n) memmoves
/// instead of the rbtree's O(log n), but a runqueue rarely holds more than a
/// handful of entities and the contiguous layout beats a tree there
/// (callgrind, smp64-mixed 2 s: 302.9M -> 295.8M instructions against the
/// BTreeSet it replaced).
/// Leftmost is O(1); iteration is in (vruntime, id) order.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    v: Vec<(u64, SeId)>,
}

impl Timeline {
    pub fn new() -> Self {
        Timeline { v: Vec::new() }
    }

    #[inline]
    pub fn insert(&mut self, key: (u64, SeId)) -> bool {
        match self.v.binary_search(&key) {
            Ok(_) => false,
            Err(i) => {
                self.v.insert(i, key);
                true
            }
        }
    }

    #[inline]
    pub fn remove(&mut self, key: &(u64, SeId)) -> bool {
        match self.v.binary_search(key) {
            Ok(i) => {
                self.v.remove(i);
                true
            }
            Err(_) => false,
        }
    }

    #[inline]
    pub fn first(&self) -> Option<&(u64, SeId)> {
        self.v.first()
    }

    #[inline]
    pub fn iter(&self) -> std::slice::Iter<'_, (u64, SeId)> {
        self.v.iter()
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.v.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.v.is_empty()
    }
}

/// Which cfs_rq: its index in `Sched.cfs_rqs`, where each CPU's root one
/// (rq->cfs) sits at the CPU's number and the task groups' (issue 39)
/// follow. The fair class's entity code takes a `CfsRqId` where the kernel
/// takes a `struct cfs_rq *`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CfsRqId(usize);

impl CfsRqId {
    /// &cpu_rq(cpu)->cfs.
    #[inline]
    pub const fn root(cpu: usize) -> CfsRqId {
        CfsRqId(cpu)
    }

    /// The cfs_rq at `index` in `Sched.cfs_rqs`.
    #[inline]
    pub const fn at(index: usize) -> CfsRqId {
        CfsRqId(index)
    }

    #[inline]
    pub const fn index(self) -> usize {
        self.0
    }
}

/// struct cfs_rq.
///
/// `tasks_timeline` is the rbtree: entities ordered by (vruntime, id); the
/// running entity (`curr`) is not in it, as in the kernel (see `Timeline`).
#[derive(Debug, Clone)]
pub struct CfsRq {
    /// rq_of(): the CPU it is on.
    pub cpu: usize,
    /// The task group it belongs to (0: the root, rq->cfs).
    pub tg: usize,
    /// tg_load_avg_contrib: what it last published to tg->load_avg.
    pub tg_load_avg_contrib: u64,
    pub tasks_timeline: Timeline,
    pub curr: Option<SeId>,
    pub nr_running: u32,
    /// h_nr_running (h_nr_queued from 6.13): queued tasks, sched_delayed
    /// ones included.
    pub h_nr_running: u32,
    pub idle_h_nr_running: u32,
    /// h_nr_delayed (6.12.7+): the sched_delayed tasks among h_nr_running
    /// (h_nr_runnable = h_nr_running - h_nr_delayed).
    pub h_nr_delayed: u32,
    /// load.weight: sum of queued weights, curr included.
    pub load_weight: u64,
    pub min_vruntime: u64,
    /// EEVDF: Σ w_i (v_i - min_vruntime) over the tree (curr excluded).
    pub avg_vruntime: i128,
    /// EEVDF: Σ w_i over the tree (curr excluded).
    pub avg_load: i128,
    pub next: Option<SeId>,
    pub last: Option<SeId>,
    pub skip: Option<SeId>,
    pub avg: SchedAvg,
    /// propagate / prop_runnable_sum: unweighted runnable time that tasks
    /// attached to (> 0) or detached from (< 0) this group cfs_rq brought,
    /// not yet folded into its entity (add_tg_cfs_propagate).
    pub propagate: bool,
    pub prop_runnable_sum: i64,
    /// The group entity's se->runnable_weight (5.7+): this cfs_rq's
    /// runnable tasks when it was last refreshed (se_update_runnable).
    pub se_runnable_weight: u32,
}

impl CfsRq {
    pub fn new() -> Self {
        CfsRq {
            cpu: 0,
            tg: 0,
            tg_load_avg_contrib: 0,
            tasks_timeline: Timeline::new(),
            curr: None,
            nr_running: 0,
            h_nr_running: 0,
            idle_h_nr_running: 0,
            h_nr_delayed: 0,
            load_weight: 0,
            min_vruntime: MIN_VRUNTIME_START,
            avg_vruntime: 0,
            avg_load: 0,
            next: None,
            last: None,
            skip: None,
            avg: SchedAvg::default(),
            propagate: false,
            prop_runnable_sum: 0,
            se_runnable_weight: 0,
        }
    }

    pub fn leftmost(&self) -> Option<(u64, SeId)> {
        self.tasks_timeline.first().copied()
    }
}

impl Default for CfsRq {
    fn default() -> Self {
        Self::new()
    }
}
