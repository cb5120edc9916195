//! Models kernel/sched/sched.h, the scheduler's shared header: the
//! per-CPU runqueue (`struct rq`) with its fair and RT sub-queues
//! (`struct cfs_rq`, `struct rt_rq`), the per-CPU state of each sched
//! domain, and the schedstat counters kept beside them. Every scheduling
//! class and the core read and write these; the header itself imports
//! only the leaf modules below it (PELT sums, priorities, the engine's keys).

use std::collections::{BTreeSet, VecDeque};
use std::sync::Arc;

use crate::cpumask::CpuMask;
use crate::engine::EventKey;
use crate::prio::MAX_RT_PRIO;
use crate::report::LbCounters;
use crate::sched::cpupri::CpuPri;
use crate::sched::cpustat::CpuTime;
pub use crate::sched::dl_rq::DlRq;
use crate::sched::pelt;
use crate::sched::task::{Task, TaskId};

// ------------------------------------------------------------------- rq

/// The runqueue fields the wakeup path's idle scans read — idle_cpu() and
/// sched_idle_cpu() over every CPU of an LLC (select_idle_core/cpu/smt)
/// or of the machine (find_idlest_group_cpu) — copied into one dense
/// per-CPU array (`Sim::rq_idle`), 12 bytes a CPU instead of two cache
/// lines of a 640-byte `Rq`. Written where the kernel writes the fields
/// (the switch, add/sub_nr_running, the cfs_rq's idle_h_nr_running);
/// `check_invariants` compares it with the runqueues. A layout, not a
/// model change: every read gives what the runqueue holds.
#[derive(Debug, Clone, Copy, Default)]
pub struct RqIdle {
    /// rq->nr_running.
    pub nr_running: u32,
    /// rq->cfs.idle_h_nr_running.
    pub idle_h_nr_running: u32,
    /// rq->curr is a task (not the idle task, nor the stopper).
    pub has_curr: bool,
}

/// struct rq. `repr(C)`: on large machines each event's
/// runqueue has left the cache since its last event, so what every event
/// reads is together at the start (as Task's fields are).
#[derive(Debug, Clone)]
#[repr(C)]
pub struct Rq {
    // Hot: read by every event on the CPU (the switch, the op timer, the clock).
    pub cpu: usize,
    pub curr: Option<TaskId>,
    /// Runnable tasks of every class, including curr.
    pub nr_running: u32,
    pub need_resched: bool,
    /// The stopper (migration/N) has the CPU: it preempted curr for an
    /// active balance and schedule() has not yet switched away from it.
    pub stopper_running: bool,
    pub active_balance: bool,
    pub nohz_idle: bool,
    /// The CPU's speed, 1/1024ths of max_freq: the cpufreq room's
    /// `scale`, kept here beside the op timer that reads it
    /// (sched/cpufreq.rs sets both).
    pub cpu_speed: u32,
    /// The stall of memory-bound work on this CPU's node, 1/1024ths
    /// (SCALE: none): the memory bandwidth room's (sched/membw.rs sets it).
    pub mem_stall: u32,
    /// rq->nr_iowait: tasks that went to sleep in io_schedule() on this CPU
    /// and have not woken yet; while it is above 0 the idle CPU's time is
    /// iowait.
    pub nr_iowait: u32,
    /// The task __schedule() picked, while it puts the previous one
    /// (the fair class walks both to their common cfs_rq).
    pub picked: Option<TaskId>,
    pub tick_key: Option<EventKey>,
    pub op_key: Option<EventKey>,
    /// When the armed op event fires (valid while op_key is Some).
    pub op_at: u64,
    /// Until when the CPU cannot run its next task: it is still leaving
    /// its idle state (with a cpuidle driver) or running an interrupt
    /// handler it was woken for. The task picked starts then (its
    /// exec_start), so the time is neither its runtime nor its work.
    pub busy_until: u64,
    pub acct_since: u64,
    /// Stretches of this CPU's time that belong neither to its task nor to
    /// its idle loop, in time order: interrupt handlers (irq/mod.rs) and
    /// the wakeup from an idle state (idle/cpuidle.rs). account_cpu folds
    /// them into their columns and drops them once past. Usually empty.
    pub windows: Vec<CpuWindow>,
    pub acct: CpuTime,
    pub stats: RqStats,
    /// Boxed: the fair hot path touches only nr_running, and a smaller rq
    /// keeps the balancer's walks over the runqueues cheap.
    pub rt: Box<RtRq>,
    /// rq->dl (sched/deadline.rs).
    pub dl: Box<DlRq>,
    pub idle_stamp: Option<u64>,
    pub avg_idle: u64,
    /// In ns (jiffies × TICK_NSEC).
    pub next_balance: u64,
    pub sd: Vec<SdState>,
    /// The sleep hrtimers armed on this CPU: (when it fires, whose), for the
    /// cpuidle governor's next-timer estimate (kept only with a cpuidle
    /// driver). Few at a time; O(n) removal.
    pub hrtimers: Vec<(u64, TaskId)>,
    // The balancer's and the idle path's.
    pub max_idle_balance_cost: u64,
    pub push_cpu: usize,
    // avg_load era (fair/balance_avg.rs).
    /// rq->cpu_load[]: rq load decayed per tick with factors 2^-i (docs/LINUX-FACTS.md §2.3).
    pub cpu_load: [u64; 5],
    /// Jiffy of the last update_cpu_load (2.6.36+ catch-up after nohz).
    pub last_load_update_tick: u64,
    /// 2.6.x NOHZ owner model: stopped the tick since the last busy tick.
    pub in_nohz_recently: bool,
    /// Seed 002 (3/6): decaying sum of SCHED_NORMAL/BATCH run time (ns) and
    /// the start of its current averaging period.
    pub normal_avg: u64,
    pub age_stamp: u64,
}

/// What a stretch of a CPU's time in `Rq::windows` was spent on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowKind {
    /// A hard interrupt handler: /proc/stat's irq.
    Irq,
    /// A softirq handler: softirq.
    Soft,
    /// Still in an idle state, coming out of it (the exit latency): idle.
    Idle,
}

/// `[start, end)` of a CPU's time spent as `kind` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuWindow {
    pub start: u64,
    pub end: u64,
    pub kind: WindowKind,
}

impl Rq {
    /// The CPU's cumulative times with its runqueue's run_delay, as
    /// /proc/stat and /proc/schedstat read together.
    pub fn cpu_times(&self) -> CpuTime {
        CpuTime { run_delay: self.stats.wait_ns, ..self.acct }
    }
}

/// Per-runqueue schedstat counters.
#[derive(Debug, Clone, Default)]
pub struct RqStats {
    pub sched_count: u64,
    pub sched_goidle: u64,
    pub ttwu_count: u64,
    pub ttwu_local: u64,
    pub run_ns: u64,
    pub wait_ns: u64,
    pub timeslices: u64,
}

/// The per-CPU, per-level mutable part of struct sched_domain (each CPU has
/// its own copy in the kernel; the span and groups are shared in topology).
#[derive(Debug, Clone)]
pub struct SdState {
    /// In ns; may be negative: the domain was built before the workload started.
    pub last_balance: i64,
    /// In ms, like the kernel's balance_interval.
    pub balance_interval: u64,
    pub nr_balance_failed: u32,
    pub max_newidle_lb_cost: u64,
    /// NI_RANDOM (stable backport, 6.1.160 / 6.12.65): newidle balances
    /// counted, and those that pulled (weighted), since the last halving;
    /// newidle_ratio is the success rate per 1024 (topology.c starts them
    /// at 512 / 256 / 512).
    pub newidle_call: u32,
    pub newidle_success: u32,
    pub newidle_ratio: u32,
    /// Its schedstat counters, as the report prints them.
    pub stats: LbCounters,
}

/// enum cpu_idle_type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuIdleType {
    Idle = 0,
    NotIdle = 1,
    NewlyIdle = 2,
}

// ---------------------------------------------- root domain, nohz, LLC

/// struct root_domain: what every CPU of the (one) root domain shares.
#[derive(Debug, Clone)]
pub struct RootDomain {
    /// Runqueues with nr_running >= 2 (rd->overload, kept as a count).
    pub nr_overloaded: usize,
    /// rd->cpupri: the CPUs by the priority they run (RT push).
    pub cpupri: CpuPri,
    /// rd->rto_mask and rd->rto_count: RT-overloaded runqueues.
    pub rto_mask: CpuMask,
    pub rto_count: usize,
    /// RT_PUSH_IPI's iterator over rto_mask (rd->rto_cpu, rto_loop, ...).
    pub rto_push: RtoPush,
    /// rd->dlo_mask, dlo_count: runqueues with pushable deadline tasks.
    pub dlo_mask: CpuMask,
    pub dlo_count: usize,
}

impl RootDomain {
    pub fn new(nr_cpus: usize) -> Self {
        RootDomain {
            nr_overloaded: 0,
            cpupri: CpuPri::new(nr_cpus),
            rto_mask: CpuMask::new(nr_cpus),
            rto_count: 0,
            rto_push: RtoPush::default(),
            dlo_mask: CpuMask::new(nr_cpus),
            dlo_count: 0,
        }
    }
}

/// The NOHZ idle-balancing state (fair.c's `static struct nohz`).
#[derive(Debug, Clone)]
pub struct Nohz {
    /// nohz.idle_cpus_mask: CPUs idle with their tick stopped.
    pub idle_cpus: CpuMask,
    /// nohz.next_balance.
    pub next_balance: u64,
    /// nohz.load_balancer (2.6.2x .. 2.6.35, the owner model): the idle CPU
    /// that keeps its tick and balances for the tickless ones.
    pub load_balancer: Option<usize>,
}

impl Nohz {
    /// At boot every CPU is idle and tickless, but an isolated one, which
    /// never joins (on_null_domain()).
    pub fn at_boot(nr: usize, isolated: Option<&CpuMask>) -> Nohz {
        let mut idle_cpus = CpuMask::full(nr);
        isolated.iter().flat_map(|i| i.iter()).for_each(|c| idle_cpus.clear(c));
        Nohz { idle_cpus, next_balance: 0, load_balancer: None }
    }
}

/// struct sched_domain_shared: per LLC (indexed by sd_llc_id).
#[derive(Debug, Clone)]
pub struct SchedDomainShared {
    /// CPUs of the LLC not in NOHZ idle.
    pub nr_busy_cpus: usize,
    /// select_idle_core may find a fully idle core here.
    pub has_idle_cores: bool,
    /// SIS_UTIL: how many CPUs select_idle_cpu scans.
    pub nr_idle_scan: usize,
}

impl SchedDomainShared {
    /// At boot every CPU is idle and tickless: no busy CPU, idle cores, no
    /// scan limit yet.
    pub const AT_BOOT: SchedDomainShared =
        SchedDomainShared { nr_busy_cpus: 0, has_idle_cores: true, nr_idle_scan: usize::MAX };
}

// ------------------------------------------------- rq->rt_avg (2.6.x)

/// sched_avg_period(): sysctl_sched_time_avg (1000 ms) / 2 [sched.c @2.6.35].
pub const SCHED_AVG_PERIOD_NS: u64 = 500_000_000;

/// sched_avg_update() [sched.c @2.6.35]: a decaying sum (rq->rt_avg, and
/// seed 002's normal_avg) seen at `now` with its period start: halved once
/// per elapsed sched_avg_period(). Returns (sum, period start).
pub fn sched_avg_update(normal_avg: u64, age_stamp: u64, now: u64) -> (u64, u64) {
    let mut avg = normal_avg;
    let mut age = age_stamp;
    let elapsed = now.saturating_sub(age);
    if elapsed > SCHED_AVG_PERIOD_NS {
        let periods = (elapsed - 1) / SCHED_AVG_PERIOD_NS;
        age += periods * SCHED_AVG_PERIOD_NS;
        avg = if periods >= 64 { 0 } else { avg >> periods };
    }
    (avg, age)
}

pub use crate::sched::cfs_rq::{CfsRq, CfsRqId, Timeline, MIN_VRUNTIME_START};

// ---------------------------------------------------------------- rt_rq

/// RT_MAX_TRIES of find_lock_lowest_rq (one try suffices here: no lock
/// races, so the rq found cannot change under us).
pub const RT_MAX_TRIES: u32 = 3;

/// struct rt_prio_array: the bitmap and the per-priority FIFO lists.
///
/// Complexity: enqueue (head or tail), pick (find-first-set over two words)
/// and requeue of the head are O(1). Deviation: the kernel's list_del is O(1)
/// for any element; removing a task from the middle of its VecDeque is
/// O(k) in the tasks of that one priority (the common removal is the running
/// task, which is the head).
#[derive(Debug, Clone)]
pub struct RtPrioArray {
    bitmap: [u64; 2],
    queue: Vec<VecDeque<TaskId>>,
}

impl Default for RtPrioArray {
    fn default() -> Self {
        RtPrioArray { bitmap: [0; 2], queue: vec![VecDeque::new(); MAX_RT_PRIO] }
    }
}

impl RtPrioArray {
    #[inline]
    fn set_bit(&mut self, prio: usize) {
        self.bitmap[prio / 64] |= 1 << (prio % 64);
    }

    #[inline]
    fn clear_bit(&mut self, prio: usize) {
        self.bitmap[prio / 64] &= !(1 << (prio % 64));
    }

    /// sched_find_first_bit(): the highest (numerically lowest) non-empty prio.
    #[inline]
    pub fn first(&self) -> Option<usize> {
        if self.bitmap[0] != 0 {
            Some(self.bitmap[0].trailing_zeros() as usize)
        } else if self.bitmap[1] != 0 {
            Some(64 + self.bitmap[1].trailing_zeros() as usize)
        } else {
            None
        }
    }

    /// __enqueue_rt_entity(): at the tail, or the head (ENQUEUE_HEAD).
    pub fn enqueue(&mut self, prio: usize, tid: TaskId, head: bool) {
        if head {
            self.queue[prio].push_front(tid);
        } else {
            self.queue[prio].push_back(tid);
        }
        self.set_bit(prio);
    }

    /// __dequeue_rt_entity(). Returns false if the task was not queued.
    pub fn dequeue(&mut self, prio: usize, tid: TaskId) -> bool {
        let q = &mut self.queue[prio];
        let removed = if q.front() == Some(&tid) {
            q.pop_front();
            true
        } else if let Some(i) = q.iter().position(|&t| t == tid) {
            q.remove(i);
            true
        } else {
            false
        };
        if q.is_empty() {
            self.clear_bit(prio);
        }
        removed
    }

    /// requeue_task_rt(): move to the tail (or head) of its list.
    pub fn requeue(&mut self, prio: usize, tid: TaskId, head: bool) {
        if self.queue[prio].len() > 1 && self.dequeue(prio, tid) {
            self.enqueue(prio, tid, head);
        }
    }

    /// The head of the highest non-empty list (pick_next_rt_entity).
    #[inline]
    pub fn pick(&self) -> Option<TaskId> {
        self.first().and_then(|p| self.queue[p].front().copied())
    }

    /// Number of tasks queued at `prio`.
    pub fn len_at(&self, prio: usize) -> usize {
        self.queue[prio].len()
    }

    /// The tasks queued at `prio`, head first.
    pub fn tasks_at(&self, prio: usize) -> impl DoubleEndedIterator<Item = TaskId> + '_ {
        self.queue[prio].iter().copied()
    }

    /// Every queued task, highest priority first (for checks and reports).
    pub fn iter(&self) -> impl Iterator<Item = TaskId> + '_ {
        self.queue.iter().flat_map(|q| q.iter().copied())
    }
}

/// struct rt_rq.
#[derive(Debug, Clone)]
pub struct RtRq {
    pub active: RtPrioArray,
    /// Queued RT tasks, the running one included.
    pub rt_nr_running: u32,
    /// Queued RT tasks that may run elsewhere (nr_cpus_allowed > 1).
    pub rt_nr_migratory: u32,
    /// The queued RT tasks' load weights: their part of rq->load before
    /// 2.6.25 (rt_legacy.rs).
    pub load_weight: u64,
    /// In rd->rto_mask.
    pub overloaded: bool,
    /// highest_prio.curr: the highest queued prio, MAX_RT_PRIO if none.
    pub highest_prio: usize,
    /// pushable_tasks plist: (prio, seq, task), waiting and migratable.
    pub pushable: BTreeSet<(usize, u64, TaskId)>,
    /// Run time charged in the current period (ns).
    pub rt_time: u64,
    /// rt_rq->rt_runtime: this CPU's budget per period; None until first
    /// used (then the global sched_rt_runtime_us). RT_RUNTIME_SHARE moves
    /// budget between CPUs.
    pub rt_runtime: Option<u64>,
    pub rt_throttled: bool,
    /// rq->avg_rt (4.19+): PELT utilisation of RT tasks on this CPU, which
    /// scale_rt_capacity takes off the capacity the fair balancer sees.
    pub avg_rt: pelt::SchedAvg,
    /// rq->rt_avg (2.6.31 .. 4.18): decaying sum of RT run time, halved per
    /// sched_avg_period, for scale_rt_power; and its period start.
    pub rt_avg: u64,
    pub rt_age_stamp: u64,
}

impl Default for RtRq {
    fn default() -> Self {
        RtRq {
            active: RtPrioArray::default(),
            rt_nr_running: 0,
            rt_nr_migratory: 0,
            load_weight: 0,
            overloaded: false,
            highest_prio: MAX_RT_PRIO,
            pushable: BTreeSet::new(),
            rt_time: 0,
            rt_runtime: None,
            rt_throttled: false,
            avg_rt: pelt::SchedAvg::default(),
            rt_avg: 0,
            rt_age_stamp: 0,
        }
    }
}

impl RtRq {
    /// highest_prio.next as pull_rt_task reads it. Deviation: the kernel
    /// tracks the second-highest queued prio; the model uses the best
    /// pushable one (the task a pull could take), a tighter hint.
    #[inline]
    pub fn next_pushable_prio(&self) -> usize {
        self.pushable.first().map(|&(p, _, _)| p).unwrap_or(MAX_RT_PRIO)
    }
}

/// RT_PUSH_IPI's state in the root domain [rt.c @6.12]: the CPU the push
/// irq_work visits (rto_cpu, None = -1), the loop counters and the
/// rto_loop_start "lock" that lets a single chain run at a time.
#[derive(Debug, Clone, Default)]
pub struct RtoPush {
    pub rto_cpu: Option<usize>,
    pub rto_loop: u64,
    pub rto_loop_next: u64,
    pub rto_loop_start: bool,
    /// IPIs sent (hops of the chain), for the report.
    pub ipis: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bitmap_pick_is_highest_priority_fifo() {
        let mut a = RtPrioArray::default();
        assert_eq!(a.pick(), None);
        a.enqueue(50, 1, false);
        a.enqueue(50, 2, false);
        a.enqueue(98, 3, false);
        a.enqueue(70, 4, false);
        assert_eq!(a.first(), Some(50));
        assert_eq!(a.pick(), Some(1));
        a.requeue(50, 1, false);
        assert_eq!(a.pick(), Some(2));
        assert!(a.dequeue(50, 2));
        assert!(a.dequeue(50, 1));
        assert_eq!(a.first(), Some(70));
        a.enqueue(0, 5, false);
        assert_eq!(a.pick(), Some(5));
        a.enqueue(0, 6, true);
        assert_eq!(a.pick(), Some(6));
        assert!(!a.dequeue(0, 99));
        assert!(a.dequeue(0, 6) && a.dequeue(0, 5) && a.dequeue(70, 4));
        assert_eq!(a.first(), Some(98));
        assert!(a.dequeue(98, 3));
        assert_eq!(a.first(), None);
    }

    #[test]
    fn bitmap_covers_both_words() {
        let mut a = RtPrioArray::default();
        for p in [99, 64, 63, 0] {
            a.enqueue(p, p, false);
        }
        assert_eq!(a.first(), Some(0));
        a.dequeue(0, 0);
        assert_eq!(a.first(), Some(63));
        a.dequeue(63, 63);
        assert_eq!(a.first(), Some(64));
        a.dequeue(64, 64);
        assert_eq!(a.first(), Some(99));
        assert_eq!(a.iter().collect::<Vec<_>>(), vec![99]);
    }

    #[test]
    fn requeue_alone_is_a_no_op() {
        let mut a = RtPrioArray::default();
        a.enqueue(10, 7, false);
        a.requeue(10, 7, false);
        assert_eq!(a.pick(), Some(7));
        assert_eq!(a.len_at(10), 1);
    }
}

/// What update_sg_lb_stats() and find_busiest_queue() read of a runqueue,
/// as it was before a periodic balance moved tasks to or from it at `at`.
/// The CPUs tick together (sched_skew_tick=0) and run their SCHED_SOFTIRQ
/// at once, each reading the others' runqueues without their locks: a
/// balancer on another CPU at the same instant reads this, not the runqueue
/// the pull left, while the balancer that pulled (`by`) goes on from what
/// it did.
#[derive(Debug, Clone, Copy)]
pub struct LbSnap {
    pub at: u64,
    pub by: usize,
    pub load: u64,
    pub util: u64,
    pub runnable: u64,
    pub nr_running: u32,
    pub h_nr_running: u32,
    pub idle: bool,
}

impl Default for LbSnap {
    fn default() -> Self {
        LbSnap { at: u64::MAX, by: 0, load: 0, util: 0, runnable: 0, nr_running: 0, h_nr_running: 0, idle: false }
    }
}

/// The scheduler's state (what kernel/sched keeps in its per-CPU runqueues,
/// the root domain and its globals), owned by the simulation (`sim/`).
#[derive(Debug)]
pub struct Sched {
    /// Every task that exists or existed, by id.
    pub tasks: Vec<Task>,
    /// Per-CPU runqueues.
    pub rqs: Vec<Rq>,
    /// Every cfs_rq: each CPU's root one at the CPU's index (rq->cfs),
    /// then the task groups' (CfsRqId is the index).
    pub cfs_rqs: Vec<CfsRq>,
    /// The task groups (cgroups' cpu controller), their cfs_rqs and
    /// entities (sched/fair/group.rs).
    pub groups: crate::sched::task_group::TaskGroups,
    /// Each runqueue's idle-scan fields, dense (see `RqIdle`).
    pub rq_idle: Vec<RqIdle>,
    /// The CPUs where available_idle_cpu() or sched_idle_cpu() holds, kept
    /// with `rq_idle` (rq_idle_changed()), on a machine of more than 512
    /// CPUs: the wakeup's scan of an LLC reads it a word at a time there
    /// (smp1024-mixed: -5.6 % instructions an event, turin768-mixed
    /// +0.6 %; on smp256-mixed and gnr384-mixed keeping it cost 1 % more
    /// than the walk it saved). A layout, not a model change.
    pub idle_mask: Option<crate::cpumask::CpuMask>,
    /// max_load_balance_interval (fair.c): HZ × online CPUs / 10 jiffies,
    /// the cap of every domain's balance interval (set once at boot, as
    /// update_sysctl() does).
    pub max_load_balance_interval: u64,
    /// Each CPU's arch_scale_cpu_capacity (per_cpu(cpu_scale) on arm64 and
    /// x86's hybrid parts): the machine's value, in a dense per-CPU array
    /// as the kernel keeps it, for the scans of every CPU's capacity.
    pub cpu_scale: Vec<u64>,
    pub rd: RootDomain,
    pub nohz: Nohz,
    /// Per LLC (indexed by sd_llc_id).
    pub sds: Vec<SchedDomainShared>,
    /// sched_group_capacity->imbalance, per group (set by pinned-task failures).
    pub sg_imbalance: Vec<bool>,
    /// The buffer load_balance() copies its domain's span into (env.cpus).
    pub lb_cpus: Vec<usize>,
    /// CPUs whose need_resched schedule() must honour after this event
    /// (two buffers swapped back and forth).
    pub resched_pending: Vec<usize>,
    pub resched_spare: Vec<usize>,
    /// The RT bandwidth period timer is armed (rt_bandwidth.rt_period_active).
    pub rt_period_active: bool,
    /// RT tasks that exist (started, not dead): the RT checks are skipped at 0.
    pub rt_nr_tasks: usize,
    /// Deadline tasks that exist (started, not dead): 0 skips their pick.
    pub dl_nr_tasks: usize,
    /// Deadline throttles and push/pull moves (sched/deadline.rs).
    pub dl_stats: crate::sched::dl_rq::DlStats,
    /// Some RT task has run: capacities carry RT pressure from now on.
    pub rt_pressure: bool,
    /// The CPU running the balancer for idle CPUs (the NOHZ owner or ILB)
    /// while it does; trace lines of its pulls are written there.
    pub lb_exec: Option<usize>,
    /// Each runqueue as the tick's balancers on other CPUs saw it, when a
    /// pull changed it at the instant every CPU ticked (fair/lb_snap.rs
    /// `lb_view`).
    pub lb_snap: Vec<LbSnap>,
    /// The instant of the newest `lb_snap` entry (u64::MAX: none yet): the
    /// balancer looks at the per-CPU entries only at that instant.
    pub lb_snap_at: u64,
    pub next_pid: u32,
    /// Stamps for list positions (cfs_tasks, pushable_tasks).
    pub list_seq: u64,
    /// Tasks started and not dead, kernel threads not counted.
    pub live_tasks: usize,
    /// The wasted-CPU figure's book-keeping (sched/wasted.rs).
    pub wasted: Wasted,
    /// Times an rt_rq was throttled.
    pub rt_throttle_events: u64,
    /// Tasks moved by RT push/pull.
    pub rt_migrations: u64,
    /// Migrations by distance (set_task_cpu): SMT sibling, LLC, another
    /// LLC of the node, another node.
    pub migrations_by_distance: [u64; 4],
    /// Tasks made so far per report group (a fork's index in its group,
    /// without a scan of every task).
    pub group_tasks: Vec<usize>,
    /// cpumask_any_and_distribute()'s per-CPU `distribute_cpu_mask_prev`
    /// (lib/cpumask.c), by the calling CPU; empty until first used.
    pub distribute_cpu_mask_prev: Vec<usize>,
    /// Per report group, the affinity mask its last task was made with,
    /// which the group's next task shares (fork.rs alloc_task).
    /// Deviation: the kernel embeds a cpumask in every task_struct; here
    /// the tasks of a group share one, so the wakeup's and the balancer's
    /// tests of 10,000 tasks' masks read a few masks that stay in cache
    /// (on 768 CPUs, 96 bytes each). A mask is copied when it changes
    /// (sched_setaffinity), never written in place.
    pub group_masks: Vec<Option<Arc<CpuMask>>>,
}

/// Book-keeping for the wasted-CPU figure (sched/wasted.rs).
#[derive(Debug, Clone, Default)]
pub struct Wasted {
    pub ns: u64,
    pub last: u64,
    /// CPUs wasted right now.
    pub rate: u64,
    pub total_nr_running: u64,
    pub nr_idle_cpus: u64,
    /// Runnable tasks whose affinity is more than one CPU but not the whole
    /// machine (they need the slow path).
    pub nr_restricted: u64,
    /// Runnable tasks pinned to one CPU, and how many of them run: a pinned
    /// task waits only for its own CPU, so it never makes another CPU's idle
    /// time wasted.
    pub nr_pinned_runnable: u64,
    pub nr_pinned_running: u64,
    /// sched_delayed tasks (DELAY_DEQUEUE): counted in nr_running but
    /// asleep, so never waiting.
    pub nr_delayed: u64,
}

impl Sched {
    /// The prio the rq runs now as push/pull compare it: curr's prio, or
    /// MAX_PRIO-ish for idle (anything RT beats it).
    #[inline]
    pub fn curr_prio(&self, cpu: usize) -> i32 {
        self.rqs[cpu].curr.map(|c| self.tasks[c].prio()).unwrap_or(crate::prio::MAX_PRIO)
    }

    /// The next stamp for a list position (the order a task joined
    /// cfs_tasks or pushable_tasks).
    pub fn next_list_seq(&mut self) -> u64 {
        self.list_seq += 1;
        self.list_seq
    }
}
