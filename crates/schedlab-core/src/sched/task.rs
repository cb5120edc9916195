//! struct task_struct, reduced to what the model needs.

use crate::cpumask::CpuMask;
use crate::engine::Rng;
use crate::sched::pelt::SchedAvg;

pub use crate::prio::DlAttr;
use crate::prio::{nice_to_prio, rt_priority_to_prio, Policy, SchedClass};
/// The per-task counters a measurement window takes deltas of: the
/// report's `TaskWindow` (its "window": the same names as the task's totals).
pub use crate::report::TaskWindow as TaskCounters;

pub use crate::engine::event::TaskId;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskState {
    /// Not yet created (start delay pending).
    New,
    /// TASK_RUNNING: on a runqueue, running or waiting.
    Runnable,
    /// TASK_INTERRUPTIBLE: blocked.
    Blocked,
    /// TASK_DEAD.
    Dead,
}

/// Which sched_entity: the fair class's entity code takes an `SeId` where
/// the kernel takes a `struct sched_entity *`. A task's entity has the
/// task's id; a task group's entity on one CPU (issue 39) will be numbered
/// from `SeId::GROUP` up, so that no group id can be taken for a task's.
/// Ordered by the raw id, so the timeline's ties break as by task id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SeId(usize);

impl SeId {
    /// The first group entity's id.
    pub const GROUP: usize = 1 << (usize::BITS - 1);

    /// A task's entity (&p->se).
    #[inline]
    pub const fn task(t: TaskId) -> SeId {
        SeId(t)
    }

    /// task_of(): the task whose entity this is (entity_is_task()), or None
    /// for a group's.
    #[inline]
    pub const fn task_of(self) -> Option<TaskId> {
        if self.0 & Self::GROUP == 0 {
            Some(self.0)
        } else {
            None
        }
    }

    #[inline]
    pub(crate) const fn from_raw(raw: usize) -> SeId {
        SeId(raw)
    }

    #[inline]
    pub(crate) const fn raw(self) -> usize {
        self.0
    }

    /// task_of() where only tasks' entities exist: no task group has an
    /// entity until issue 39's hierarchy, so every SeId is a task's.
    #[inline]
    pub fn tid(self) -> TaskId {
        debug_assert!(self.0 & Self::GROUP == 0, "a group entity where a task's was expected");
        self.0
    }
}

/// struct sched_entity (fair class).
#[derive(Debug, Clone, Default)]
pub struct SchedEntity {
    /// se->load: the entity's weight and its inverse (2^32 / weight), as
    /// set_load_weight() gives a task (a group entity's will come from its
    /// group's shares).
    pub load: LoadWeight,
    pub vruntime: u64,
    /// EEVDF virtual deadline.
    pub deadline: u64,
    /// EEVDF saved virtual lag (V - v_i); also the RUN_TO_PARITY marker.
    pub vlag: i64,
    /// EEVDF request size (ns).
    pub slice: u64,
    pub exec_start: u64,
    pub sum_exec_runtime: u64,
    pub prev_sum_exec_runtime: u64,
    pub on_rq: bool,
    pub avg: SchedAvg,
    /// PELT attached to a cfs_rq (false for a brand-new or migrated-away task).
    pub attached: bool,
    /// CFS: the old cfs_rq's min_vruntime that a !DEQUEUE_SLEEP dequeue
    /// normalized vruntime against, for the migration that follows.
    pub norm_min_vruntime: Option<u64>,
    /// EEVDF DELAY_DEQUEUE (6.12): the task slept while ineligible and
    /// stays queued (on_rq, counted in nr_running and load) until it is
    /// picked, becomes eligible and is picked, or is woken.
    pub sched_delayed: bool,
    /// EEVDF PLACE_REL_DEADLINE (6.12): a migration dequeue left `deadline`
    /// relative to vruntime; place_entity() makes it absolute again.
    pub rel_deadline: bool,
}

/// struct load_weight: a weight and its inverse for calc_delta().
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoadWeight {
    pub weight: u32,
    pub inv_weight: u32,
}

/// struct sched_rt_entity, reduced.
#[derive(Debug, Clone, Default)]
pub struct RtEntity {
    /// On its rt_rq (running or waiting).
    pub on_rq: bool,
    /// SCHED_RR: ticks left in the timeslice.
    pub time_slice: u64,
    /// Key in the rq's pushable list while the task is pushable.
    pub pushable_seq: Option<u64>,
}

/// struct sched_dl_entity (kernel/sched/deadline.c), reduced: the
/// reservation's parameters and its CBS state.
#[derive(Debug, Clone, Default)]
pub struct DlEntity {
    /// dl_runtime, dl_deadline, dl_period: the reservation (ns).
    pub dl_runtime: u64,
    pub dl_deadline: u64,
    pub dl_period: u64,
    /// dl_bw = dl_runtime / dl_period, dl_density = dl_runtime /
    /// dl_deadline, both << BW_SHIFT (to_ratio).
    pub dl_bw: u64,
    pub dl_density: u64,
    /// runtime: what is left of the current instance's budget (it goes
    /// below zero by what the task overran before the throttle saw it).
    pub runtime: i64,
    /// deadline: the current instance's absolute deadline (ns).
    pub deadline: u64,
    /// dl_throttled: the budget is spent; off the dl_rq until the
    /// replenishment timer fires.
    pub dl_throttled: bool,
    /// dl_yielded: sched_yield() gave up the rest of the instance.
    pub dl_yielded: bool,
    /// On its rq's dl_rq tree (on_dl_rq), with its tree key's sequence.
    pub on_dl_rq: bool,
    pub seq: u64,
    /// In the rq's pushable_dl_tasks tree (by deadline), with its key's
    /// sequence.
    pub pushable_seq: Option<u64>,
    /// dl_timer: the replenishment timer's event while armed.
    pub timer: Option<crate::engine::queue::EventKey>,
    /// flags: sched_attr's SCHED_FLAG_RECLAIM / SCHED_FLAG_DL_OVERRUN.
    pub flags: u64,
    /// dl_non_contending (GRUB, 4.13): blocked before its 0-lag time, its
    /// bandwidth still counts in running_bw until the inactive timer.
    pub dl_non_contending: bool,
    /// inactive_timer: the 0-lag timer's event while armed.
    pub inactive_timer: Option<crate::engine::queue::EventKey>,
    /// The last wakeup moved it (ENQUEUE_MIGRATED): task_contending() adds
    /// its bandwidth to the new runqueue's this_bw.
    pub wake_migrated: bool,
}

/// What a ktask worker is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KtaskRole {
    Main(usize),
    Helper(usize),
}

/// `repr(C)` for the same reason as `Task`: what the wakeup and the pick
/// touch comes first.
#[derive(Debug, Clone, Default)]
#[repr(C)]
pub struct TaskStats {
    // Hot: the wakeup and the pick.
    /// A wakeup in the measurement window waits to run: measured from here.
    pub timer_delay_from: Option<u64>,
    /// A timer delay up to the switch to the task, waiting for the switch's
    /// own cost to be added (`switched_in`): the runner's delay ends on the
    /// return to user space.
    pub timer_delay_open: Option<u64>,
    /// When the current wait began (None: running or blocked). A queued
    /// task that migrates keeps it, as the kernel keeps the wait across
    /// the move (the wait is accounted once, when the task next runs).
    pub wait_start: Option<u64>,
    pub wait_ns: u64,
    pub wait_max: u64,
    /// Time of the last wakeup (sched_wakeup / sched_wakeup_new), for its
    /// wakeup latency: wakeup -> pick, as perf sched latency measures it.
    pub last_wakeup: Option<u64>,
    /// Wakeup latencies over the whole run: their sum, the longest, when
    /// the longest ended (perf sched latency's "max at"), how many.
    pub wakeup_latency_sum: u64,
    pub wakeup_latency_max: u64,
    pub wakeup_latency_max_at: u64,
    pub wakeup_latencies: u64,
    pub nr_switches: u64,
    pub nvcsw: u64,
    pub nivcsw: u64,
    pub nr_wakeups: u64,
    /// The soft expiry of the sleep timer armed last (hrtimer_start), until
    /// the wakeup it leads to.
    pub timer_softexpires: Option<u64>,
    /// The kernel time the last wakeup charged the task before its work
    /// (the wakeup IPI, the idle exit without a cpuidle driver; in
    /// cs_debt too), for its timer delay. A migration's cache refill,
    /// also in cs_debt, is not in it: it slows the task's work, not its
    /// return to user space.
    pub wake_cost: u64,
    /// When it last blocked.
    pub blocked_at: u64,
    pub nr_migrations: u64,
    /// Wakeup latencies in log2 buckets of microseconds: [0] < 1 us,
    /// [k] in [2^(k-1), 2^k) us, the last open-ended.
    pub wakeup_latency_hist: [u32; LATENCY_HIST_BUCKETS],
    /// Timer delays in the measurement window, as schedlab-runner
    /// measures them on a real kernel: from the sleep timer's expiry (a
    /// wakeup without a timer: from the wakeup) to the return to user
    /// space, ns. Bounded memory (sched/delays.rs).
    pub timer_delays: crate::sched::delays::Delays,
    pub start_ns: u64,
    pub exit_ns: Option<u64>,
}

/// Buckets of TaskStats::wakeup_latency_hist (the last holds >= 2^21 us ~ 2 s).
pub const LATENCY_HIST_BUCKETS: usize = 23;

impl TaskStats {
    /// The task was woken at `now`: a wakeup in the measurement window
    /// (from `window_start`) starts a timer delay, from the timer's soft
    /// expiry if a sleep timer woke it.
    #[inline]
    pub fn woken(&mut self, now: u64, window_start: u64) {
        let since = self.timer_softexpires.take().unwrap_or(now);
        if now >= window_start && self.timer_delay_from.is_none() {
            self.timer_delay_from = Some(since.min(now));
        }
    }

    /// The task starts running at `now`: close its wait and its wakeup
    /// latency (perf sched latency); returns the wait that ended.
    #[inline]
    pub fn picked(&mut self, now: u64) -> u64 {
        if let Some(from) = self.timer_delay_from.take() {
            if let Some(d) = self.timer_delay_open.replace(now - from) {
                self.timer_delays.push(d); // picked again without a switch: as it was
            }
        }
        let mut w = 0;
        if let Some(ws) = self.wait_start.take() {
            w = now - ws;
            self.wait_ns += w;
            self.wait_max = self.wait_max.max(w);
        }
        if let Some(wk) = self.last_wakeup.take() {
            let d = now - wk;
            self.wakeup_latency_sum += d;
            if d > self.wakeup_latency_max || self.wakeup_latencies == 0 {
                self.wakeup_latency_max = d;
                self.wakeup_latency_max_at = now;
            }
            self.wakeup_latencies += 1;
            let us = d / 1000;
            let b = (64 - us.leading_zeros() as usize).min(LATENCY_HIST_BUCKETS - 1);
            self.wakeup_latency_hist[b] += 1;
        }
        w
    }

    /// The switch to the task is done, costing `switch_ns`: close an open
    /// timer delay at its return to user space, after the switch and the
    /// wakeup's own costs.
    #[inline]
    pub fn switched_in(&mut self, switch_ns: u64) {
        let wake = std::mem::take(&mut self.wake_cost);
        if let Some(d) = self.timer_delay_open.take() {
            self.timer_delays.push(d + switch_ns + wake);
        }
    }
}

/// `repr(C)`: the fields in the order written, the ones every event of the
/// task reads first and together, so that a task whose lines left the
/// cache (10,000 tasks on 768 CPUs) costs as few misses as it can: the
/// hot fields, `se` and the hot half of `stats` fill the first lines; the
/// identity the reports read is last.
#[derive(Debug, Clone)]
#[repr(C)]
pub struct Task {
    // Hot: read by nearly every event of the task (wakeup, pick, op, block).
    pub state: TaskState,
    /// p->sched_class: the class `policy` maps to
    /// (`SchedClass::of_policy`), kept beside it as the kernel keeps the
    /// pointer.
    pub class: SchedClass,
    /// Set only by `sched_fork` and `sched_setattr`, which set `class`
    /// with it.
    pub policy: Policy,
    pub kthread: bool,
    /// The program must be advanced when the task next runs.
    pub need_advance: bool,
    /// Its op's completion fell due at the instant it was switched out (the
    /// OpDone event was cancelled with the switch): the op is done when it
    /// next runs, whether or not a context switch cost delays that.
    pub op_done_owed: bool,
    /// Sleeping in io_schedule(): counted in its runqueue's nr_iowait.
    pub in_iowait: bool,
    /// Its CPU time is system time (a syscall's work: the mm ops).
    pub in_sys: bool,
    /// p->throttled (6.18): parked on its cfs_rq's throttled_limbo_list,
    /// off the runqueue though runnable (sched/fair/bandwidth.rs).
    pub throttled: bool,
    /// p->sched_throttle_work is pending (6.18): picked below a throttled
    /// cfs_rq, it parks itself when it returns to user space.
    pub throttle_work: bool,
    /// Between psi_memstall_enter and _leave (PF_MEMSTALL; sched/psi.rs).
    pub memstall: bool,
    /// The share of its work that does not speed up with frequency,
    /// 1/1024ths (its group's `memory_bound`; cpufreq/).
    pub memory_bound: u16,
    pub nice: i32,
    /// (Read by every tracepoint: the trace hash.)
    pub pid: u32,
    /// task_cpu(p).
    pub cpu: usize,
    pub nr_cpus_allowed: usize,
    pub cpus: std::sync::Arc<CpuMask>,
    /// The task group it runs in (sched/fair/group.rs; 0: the root).
    pub tg: usize,
    /// Time the task owes before its work progresses (context switch,
    /// cache refill after migration).
    pub cs_debt: u64,
    pub pc: usize,
    /// Work (ns at nominal speed) left in the current run op or chunk.
    pub work_left: u64,
    /// Index of the program template it runs (a scenario group), or None for
    /// a ktask helper.
    pub template: Option<usize>,
    /// The workqueue worker this kthread is (kthread/workqueue.rs).
    pub worker: Option<usize>,
    pub recent_used_cpu: usize,
    pub wakee_flips: u32,
    /// sched_param.sched_priority: 1..99 for SCHED_FIFO/RR, 0 otherwise.
    pub rt_priority: u32,
    pub wakee_flip_decay_ts: u64,
    pub last_wakee: Option<TaskId>,
    pub timer_next: Option<u64>,
    /// A wakeup that came while the task, blocked, was still on its CPU
    /// (p->on_cpu: its schedule() not done yet): (waker CPU, from a task).
    /// try_to_wake_up waits for on_cpu to clear; finish_task_switch goes on
    /// with it.
    pub wake_pending: Option<(usize, bool, u32)>,
    pub se: SchedEntity,
    pub stats: TaskStats,
    pub rng: Rng,
    pub loop_stack: Vec<(usize, u64)>,
    /// Wall-clock end of a `runtime` op.
    pub runtime_end: Option<u64>,
    // Read by some classes and mechanisms only.
    /// Bytes of DRAM traffic per us of its current work at max_freq (0:
    /// none): the memory bandwidth room's demand (membw/).
    pub mem_rate: u32,
    /// Its group's `memory_bound` and `memory_traffic` (the latter 0
    /// without memory bandwidth): what its run ops' work is.
    pub group_mem: (u16, u32),
    pub ktask: Option<KtaskRole>,
    /// The deadline entity, from the first time the task is
    /// SCHED_DEADLINE (None for every other task: the fair hot path does
    /// not carry it).
    pub dl: Option<Box<DlEntity>>,
    pub rt: RtEntity,
    // Identity: read by the reports and the trace files.
    pub comm: String,
    /// Index of the report group this task belongs to.
    pub group: usize,
    /// Index of the task within its group (`comm`'s suffix).
    pub idx: u32,
    /// Position in rq->cfs_tasks: larger = nearer the head (more recently picked).
    pub list_seq: u64,
}

impl Task {
    /// Its next work is a run op of its group (its memory-bound share and
    /// traffic).
    #[inline]
    pub fn work_is_run(&mut self) {
        (self.memory_bound, self.mem_rate) = self.group_mem;
    }

    /// Its next work is its group's share but moves no memory of note
    /// (a syscall's CPU time, the kernel's list and lock work).
    #[inline]
    pub fn work_is_cpu(&mut self) {
        self.memory_bound = self.group_mem.0;
        self.mem_rate = 0;
    }

    /// Its next work streams through DRAM (clear_page, copy_to_user): all
    /// memory-bound, `bytes` of traffic over `work` ns at max_freq; with
    /// memory bandwidth (`bandwidth`) the node shares it out (membw/).
    #[inline]
    pub fn work_is_stream(&mut self, bytes: u64, work: u64, bandwidth: bool) {
        self.memory_bound = crate::membw::SCALE as u16;
        self.mem_rate = if bandwidth { (bytes * 1000 / work.max(1)).min(u32::MAX as u64) as u32 } else { 0 };
    }

    #[inline]
    pub fn is_idle_policy(&self) -> bool {
        self.policy == Policy::Idle
    }

    /// is_per_cpu_kthread(): a kernel thread bound to one CPU.
    pub fn is_per_cpu_kthread(&self) -> bool {
        self.kthread && self.nr_cpus_allowed == 1
    }

    /// Kernel prio as traces print it: 120 + nice for fair tasks,
    /// 99 - rt_priority (0..98) for RT tasks, -1 for SCHED_DEADLINE.
    #[inline]
    pub fn prio(&self) -> i32 {
        if self.policy.is_dl() {
            crate::prio::MAX_DL_PRIO - 1
        } else if self.policy.is_rt() {
            rt_priority_to_prio(self.rt_priority)
        } else {
            nice_to_prio(self.nice)
        }
    }
}

impl crate::trace::Traced for Task {
    #[inline]
    fn comm(&self) -> &str {
        &self.comm
    }

    #[inline]
    fn pid(&self) -> u32 {
        self.pid
    }

    #[inline]
    fn prio(&self) -> i32 {
        Task::prio(self)
    }

    #[inline]
    fn switch_state(&self) -> &'static str {
        match self.state {
            TaskState::Runnable => "R",
            TaskState::Dead => "X",
            _ => "S",
        }
    }
}

impl<'a> From<Option<&'a Task>> for crate::trace::Ctx<'a> {
    fn from(t: Option<&'a Task>) -> Self {
        t.map_or(crate::trace::Ctx::Idle, |t| crate::trace::Ctx::Task(t))
    }
}
