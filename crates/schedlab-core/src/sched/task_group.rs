//! struct task_group's fair part (kernel/sched/sched.h), as data: the
//! groups, their per-CPU cfs_rqs and entities (issue 39). What the fair
//! class does with them is sched/fair/group.rs.

use std::cell::RefCell;

use crate::sched::cfs_rq::{CfsRq, CfsRqId};
use crate::sched::task::{LoadWeight, SchedEntity, SeId};

/// A task group's index; the root group is 0.
pub type TgId = usize;
pub const ROOT_TG: TgId = 0;

/// MIN_SHARES (kernel/sched/sched.h): the smallest group entity weight.
pub const MIN_SHARES: u64 = 2;
/// MAX_SHARES: 1 << 18 (cpu.shares' cap; cpu.weight 10000 maps below it).
pub const MAX_SHARES: u64 = 1 << 18;

/// struct task_group, its fair part.
#[derive(Debug, Clone)]
pub struct Tg {
    /// The cgroup's path ("/" for the root).
    pub path: String,
    pub parent: Option<TgId>,
    /// tg->shares, unscaled (nice 0 = 1024; cpu.weight 100 maps to it).
    pub shares: u64,
    /// tg->idle (cpu.idle, 5.15+): its entities weigh WEIGHT_IDLEPRIO and
    /// its tasks count as idle.
    pub idle: bool,
    /// tg->load_avg: the sum of the CPUs' published contributions.
    pub load_avg: i64,
    /// Per CPU: the group's cfs_rq (the root's: `CfsRqId::root(cpu)`).
    pub cfs_rq: Vec<CfsRqId>,
    /// Per CPU: the group's entity (the root has none).
    pub se: Vec<Option<SeId>>,
    pub depth: u32,
}

/// A cgroup, checked: its task group is `tg` (the root's is 0; the
/// scenario's are numbered in the order they are listed, parents first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgroupDef {
    pub path: String,
    pub tg: usize,
    /// The parent's task group (0: the root).
    pub parent: usize,
    /// tg->shares, unscaled (cpu.weight 100 = 1024).
    pub shares: u64,
    /// cpu.idle.
    pub idle: bool,
}

/// A group entity: its sched_entity and its place in the tree.
#[derive(Debug, Clone)]
pub struct GroupSe {
    pub se: SchedEntity,
    /// se->cfs_rq: the parent group's cfs_rq on this CPU, where it queues.
    pub cfs_rq: CfsRqId,
    /// se->my_q: the group's own cfs_rq on this CPU.
    pub my_q: CfsRqId,
    /// se->parent (None: queued on the root cfs_rq).
    pub parent: Option<SeId>,
    /// se->depth: 0 on the root cfs_rq.
    pub depth: u32,
}

/// The task groups, their per-CPU cfs_rqs and their entities.
#[derive(Debug, Clone, Default)]
pub struct TaskGroups {
    /// Every group, the root first (empty until a scenario has cgroups).
    pub tgs: Vec<Tg>,
    pub ses: Vec<GroupSe>,
    /// Per cfs_rq (indexed as `Sched.cfs_rqs`): h_load, last_h_load_update
    /// and h_load_next, the cache task_h_load() keeps a jiffy
    /// (sched/fair/h_load.rs). A cache that reads fill, so it sits in a
    /// RefCell; empty until the first read with groups.
    pub h_load: RefCell<Vec<HLoad>>,
}

/// A cfs_rq's h_load, last_h_load_update (jiffies) and h_load_next.
#[derive(Debug, Clone, Copy)]
pub struct HLoad {
    pub h_load: u64,
    pub last_update: u64,
    pub next: Option<SeId>,
}

impl Default for HLoad {
    fn default() -> Self {
        // Never updated: no jiffy matches.
        HLoad { h_load: 0, last_update: u64::MAX, next: None }
    }
}

impl SeId {
    /// The `i`-th group entity's id.
    #[inline]
    pub const fn group(i: usize) -> SeId {
        SeId::from_raw(SeId::GROUP | i)
    }

    /// The index of a group entity among `TaskGroups.ses`.
    #[inline]
    pub fn group_index(self) -> usize {
        debug_assert!(self.task_of().is_none());
        self.raw() & !SeId::GROUP
    }
}

impl TaskGroups {
    /// Whether any group other than the root exists: every walk up the
    /// tree is one step without one.
    #[inline]
    pub fn any(&self) -> bool {
        self.tgs.len() > 1
    }

    /// Create the root group for `nr_cpus` CPUs (once, before the first
    /// child).
    fn ensure_root(&mut self, nr_cpus: usize) {
        if self.tgs.is_empty() {
            self.tgs.push(Tg {
                path: "/".into(),
                parent: None,
                shares: 1024,
                idle: false,
                load_avg: 0,
                cfs_rq: (0..nr_cpus).map(CfsRqId::root).collect(),
                se: vec![None; nr_cpus],
                depth: 0,
            });
        }
    }

    /// sched_create_group() + alloc_fair_sched_group() + init_tg_cfs_entry():
    /// a group under `parent` with a cfs_rq and an entity of weight
    /// NICE_0_LOAD on every CPU, its cfs_rqs appended to `cfs_rqs`.
    /// Returns its id.
    pub fn create(&mut self, cfs_rqs: &mut Vec<CfsRq>, path: &str, parent: TgId, shares: u64, idle: bool) -> TgId {
        let nr_cpus = self.tgs.first().map_or(cfs_rqs.len(), |r| r.cfs_rq.len());
        self.ensure_root(nr_cpus);
        let id = self.tgs.len();
        let depth = self.tgs[parent].depth + 1;
        let mut cfs_rq = Vec::with_capacity(nr_cpus);
        let mut se = Vec::with_capacity(nr_cpus);
        for cpu in 0..nr_cpus {
            let q = CfsRqId::at(cfs_rqs.len());
            let e = SeId::group(self.ses.len());
            cfs_rqs.push(CfsRq { cpu, tg: id, ..CfsRq::new() });
            let (weight, inv_weight) = crate::prio::load_weight_of(1024);
            self.ses.push(GroupSe {
                se: SchedEntity { load: LoadWeight { weight, inv_weight }, ..SchedEntity::default() },
                cfs_rq: self.tgs[parent].cfs_rq[cpu],
                my_q: q,
                parent: self.tgs[parent].se[cpu],
                depth: depth - 1,
            });
            cfs_rq.push(q);
            se.push(Some(e));
        }
        self.tgs.push(Tg { path: path.into(), parent: Some(parent), shares, idle, load_avg: 0, cfs_rq, se, depth });
        id
    }
}
