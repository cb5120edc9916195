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
    /// tg->cfs_bandwidth, for a group with a cpu.max quota (None: "max").
    pub cfs_b: Option<Box<CfsBandwidth>>,
}

/// cpu.max and cpu.max.burst as written, in ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BandwidthDef {
    pub quota: u64,
    pub period: u64,
    pub burst: u64,
}

/// struct cfs_bandwidth (kernel/sched/sched.h): a group's quota per period
/// and the global pool its cfs_rqs draw slices from (sched/fair/bandwidth.rs).
#[derive(Debug, Clone, Default)]
pub struct CfsBandwidth {
    pub period: u64,
    pub quota: u64,
    pub burst: u64,
    /// cfs_b->runtime: what is left in the pool this period.
    pub runtime: u64,
    /// cfs_b->runtime_snap (5.16+): the pool after the last refill.
    pub runtime_snap: u64,
    /// cfs_b->idle: no cfs_rq drew from the pool over a whole period.
    pub idle: bool,
    /// cfs_b->period_active: the period timer is armed.
    pub period_active: bool,
    /// The CPU the period timer runs on: the one that armed it
    /// (HRTIMER_MODE_ABS_PINNED), until it stops after an idle period.
    pub timer_cpu: usize,
    /// The period timer's expiry (its hrtimer's, on a grid of periods).
    pub period_expires: u64,
    /// cfs_b->slack_started: the slack timer is armed.
    pub slack_started: bool,
    /// The CPU the slack timer runs on (the armer's).
    pub slack_cpu: usize,
    /// cfs_b->throttled_cfs_rq, in list order.
    pub throttled_cfs_rq: Vec<CfsRqId>,
    /// Before 5.4: cfs_b->runtime_expires and expires_seq.
    pub runtime_expires: u64,
    pub expires_seq: u64,
    // cpu.stat
    pub nr_periods: u64,
    pub nr_throttled: u64,
    pub throttled_time: u64,
    pub nr_burst: u64,
    pub burst_time: u64,
}

/// The bandwidth fields of struct cfs_rq (kept beside `Sched.cfs_rqs`,
/// indexed as it is, so a scenario without cpu.max carries none).
#[derive(Debug, Clone, Copy, Default)]
pub struct CfsRqBandwidth {
    pub runtime_enabled: bool,
    pub runtime_remaining: i64,
    pub throttled: bool,
    /// throttle_count: this cfs_rq's throttled ancestors, itself included.
    pub throttle_count: u32,
    pub throttled_clock: u64,
    /// throttled_clock_pelt: rq_clock_pelt() when its hierarchy was
    /// throttled; throttled_clock_pelt_time: the PELT time spent throttled
    /// (cfs_rq_clock_pelt() leaves it out).
    pub throttled_clock_pelt: u64,
    pub throttled_clock_pelt_time: u64,
    /// pelt_clock_throttled: its PELT clock is stopped. Before 6.18 from
    /// the throttle of its hierarchy to the unthrottle; from 6.18 (task
    /// based throttle) only while the throttled hierarchy leaves it empty.
    pub pelt_clock_throttled: bool,
    /// On its CPU's rq->cfsb_csd_list: an asynchronous unthrottle is on
    /// its way (6.3+; !list_empty(&cfs_rq->throttled_csd_list)).
    pub csd_queued: bool,
    /// Before 5.4: the expiry of the slice it holds, and its period's seq.
    pub runtime_expires: u64,
    pub expires_seq: u64,
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
    /// cpu.weight.nice as written (None: cpu.weight, or the default), so
    /// that the real-kernel runner writes the file the scenario named.
    pub weight_nice: Option<i64>,
    /// cpu.idle.
    pub idle: bool,
    /// cpu.max and cpu.max.burst (None: "max", no quota).
    pub bandwidth: Option<BandwidthDef>,
    /// cpu.max's period and cpu.max.burst as they read back, us (kept
    /// without a quota too).
    pub max_period_us: u64,
    pub max_burst_us: u64,
    /// An autogroup (kernel/sched/autogroup.c), not a cgroup: the session
    /// whose root-cgroup tasks it holds (`[[session]]`, workload/cgroup.rs).
    pub autogroup: Option<String>,
    /// cpuset.cpus as written (None: empty, the parent's CPUs).
    pub cpuset_cpus: Option<crate::cpumask::CpuMask>,
    /// cpuset.cpus.effective (None: every CPU, the root's): cpuset.cpus
    /// and the parent's effective CPUs, or the parent's where they share
    /// none (workload/cgroup.rs).
    pub cpus_effective: Option<crate::cpumask::CpuMask>,
    /// cpuset.cpus.partition (workload/cpuset.rs).
    pub partition: Partition,
}

/// cpuset.cpus.partition: a cgroup in its parent's partition ("member"),
/// or the root of a partition of its own, with sched domains ("root") or
/// none ("isolated").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Partition {
    #[default]
    Member,
    Root,
    Isolated,
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
    /// cfs_bandwidth_used(): some group has a quota.
    pub bandwidth_used: bool,
    /// Per cfs_rq (indexed as `Sched.cfs_rqs`), once bandwidth is used.
    pub rq_bw: Vec<CfsRqBandwidth>,
    /// Per CPU, rq->leaf_cfs_rq_list: the task groups whose cfs_rq on that
    /// CPU is not fully decayed, children before parents (descending ids:
    /// a child is created after its parent). The root's is not listed; it
    /// is always updated (sched/fair/blocked.rs).
    pub leaf: Vec<Vec<TgId>>,
    /// Per CPU, rq->cfsb_csd_list: the cfs_rqs an IPI on its way will
    /// unthrottle (6.3+; sized once bandwidth is used).
    pub cfsb_csd_list: Vec<Vec<CfsRqId>>,
    /// Per cfs_rq (indexed as `Sched.cfs_rqs`; 6.18, sized once bandwidth
    /// is used), cfs_rq->throttled_limbo_list: the tasks parked there, the
    /// most recently parked last (the kernel's list_add() puts it first).
    pub limbo: Vec<Vec<crate::sched::task::TaskId>>,
    /// Per CPU, rq->last_blocked_load_update_tick (jiffies; u64::MAX:
    /// never).
    pub blocked_tick: Vec<u64>,
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
    /// cpu.stat's bandwidth counters of group `tg`: nr_periods,
    /// nr_throttled, throttled_usec and burst_usec in ns, nr_bursts (zeros
    /// without a quota).
    pub fn cpu_stat(&self, tg: TgId) -> [u64; 5] {
        match self.tgs[tg].cfs_b.as_deref() {
            Some(b) => [b.nr_periods, b.nr_throttled, b.throttled_time, b.burst_time, b.nr_burst],
            None => [0; 5],
        }
    }

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
                cfs_b: None,
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
        self.leaf.resize(nr_cpus, Vec::new());
        self.blocked_tick.resize(nr_cpus, u64::MAX);
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
        self.tgs.push(Tg {
            path: path.into(),
            parent: Some(parent),
            shares,
            idle,
            load_avg: 0,
            cfs_rq,
            se,
            depth,
            cfs_b: None,
        });
        id
    }
}
