//! Models `struct sched_class` (kernel/sched/sched.h): the operations every
//! scheduling class implements, under the kernel's hook names, and the
//! order in which the core asks the classes (for_each_class). The core
//! (`sched/core.rs`) calls through this table and never branches on the
//! class; "what does RT do on enqueue" is `impl SchedClassOps for
//! RtSchedClass` in `sched/rt.rs`.
//!
//! The table is a trait of associated functions on `&mut SchedEnv` (a class is
//! code, not state: its state lives in the runqueues of `sched/sched.rs`),
//! dispatched through the `SchedClass` enum with a `match`, so the hot path
//! is a jump table, not a virtual call.
//!
//! Classes: stop (`sched/stop_task.rs`: the per-CPU stopper that active
//! balance runs on; the model runs it as an event), dl
//! (`sched/deadline.rs`), rt (`sched/rt.rs`), fair (`sched/fair/mod.rs`)
//! and idle (`sched/idle.rs`).
//!
//! Deviation: the model has no idle task; a CPU running "nothing"
//! (`rq.curr == None`) runs the idle task. So the idle class's hooks that
//! take a task are never called; `set_next_task_idle` and the pick's
//! `Pick::Idle` stand for what the kernel does with rq->idle.

use crate::sched::env::SchedEnv;
use crate::sched::task::{Task, TaskId};

pub use crate::prio::SchedClass;

/// stop_sched_class: `impl SchedClassOps` in sched/stop_task.rs.
pub struct StopSchedClass;
/// dl_sched_class (SCHED_DEADLINE): sched/deadline.rs.
pub struct DlSchedClass;
/// rt_sched_class (SCHED_FIFO, SCHED_RR): sched/rt.rs.
pub struct RtSchedClass;
/// fair_sched_class (SCHED_NORMAL, SCHED_BATCH, SCHED_IDLE): sched/fair/mod.rs.
pub struct FairSchedClass;
/// idle_sched_class: sched/idle.rs.
pub struct IdleSchedClass;

impl Task {
    /// p->sched_class.
    #[inline(always)]
    pub fn sched_class(&self) -> SchedClass {
        self.class
    }
}

// enqueue_task() / dequeue_task() flags (kernel/sched/sched.h).
/// DEQUEUE_SLEEP: the task blocks (as opposed to moving between queues).
pub const DEQUEUE_SLEEP: u32 = 0x01;
/// ENQUEUE_WAKEUP: the task wakes up.
pub const ENQUEUE_WAKEUP: u32 = 0x01;
/// ENQUEUE_HEAD: at the head of its list (RT).
pub const ENQUEUE_HEAD: u32 = 0x10;
/// ENQUEUE_REPLENISH: a deadline entity comes back with a new budget
/// (the replenishment timer).
pub const ENQUEUE_REPLENISH: u32 = 0x20;
/// ENQUEUE_INITIAL: a new task (wake_up_new_task).
pub const ENQUEUE_INITIAL: u32 = 0x80;
/// DEQUEUE_MIGRATING: the task moves to another runqueue while queued
/// (move_queued_task; the kernel marks it TASK_ON_RQ_MIGRATING, and has
/// passed this flag too since 6.12), so fair's dequeue detaches its load
/// (DO_DETACH).
pub const DEQUEUE_MIGRATING: u32 = 0x100;
/// DEQUEUE_DELAYED: finish the dequeue of a sched_delayed task (6.12).
pub const DEQUEUE_DELAYED: u32 = 0x200;
/// ENQUEUE_DELAYED: a sched_delayed task is woken where it is still queued
/// (ttwu_runnable, 6.12).
pub const ENQUEUE_DELAYED: u32 = 0x200;
/// DEQUEUE_THROTTLE: a task parks itself below a throttled cfs_rq (6.18,
/// throttle_cfs_rq_work); never a delayed dequeue.
pub const DEQUEUE_THROTTLE: u32 = 0x800;

// Wake flags (kernel/sched/sched.h).
/// WF_TTWU: a wakeup.
pub const WF_TTWU: u32 = 0x08;
/// WF_SYNC: the waker will sleep soon.
pub const WF_SYNC: u32 = 0x10;
/// WF_FORK: a new task.
pub const WF_FORK: u32 = 0x04;

/// Who issues a wakeup: the CPU it runs on (smp_processor_id()) and
/// whether a task issues it (in_task()) rather than an interrupt or a timer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WakeSource {
    pub cpu: usize,
    pub in_task: bool,
    /// WF_SYNC: the waker is about to sleep (pipes, sockets:
    /// wake_up_interruptible_sync_poll).
    pub sync: bool,
}

/// What a class's pick_next_task() returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// The class has nothing to run; ask the next one.
    Empty,
    /// Run this task.
    Task(TaskId),
    /// Run the idle task (the idle class always picks).
    Idle,
    /// RETRY_TASK: newidle balancing pulled tasks; walk the classes again
    /// (without balancing again).
    Retry,
}

/// The operations of a scheduling class. Hooks without a body here are
/// required; the others default to nothing, as a NULL hook in the kernel.
/// Every hook runs with the runqueue "locked": nothing else happens between
/// its first and last line.
pub trait SchedClassOps {
    /// enqueue_task(): `p` becomes runnable on `cpu`'s runqueue (it may be
    /// the running task, woken before it switched out). Adds to nr_running.
    fn enqueue_task(sim: &mut SchedEnv, cpu: usize, p: TaskId, flags: u32);

    /// dequeue_task(): `p` leaves `cpu`'s runqueue: it blocks
    /// (DEQUEUE_SLEEP), exits, or moves to another runqueue. Returns false
    /// when the class keeps a sleeping task queued instead (the fair class's
    /// DELAY_DEQUEUE, 6.12; only ever with DEQUEUE_SLEEP).
    fn dequeue_task(sim: &mut SchedEnv, cpu: usize, p: TaskId, flags: u32) -> bool;

    /// yield_task(): the running task `p` yields.
    fn yield_task(_sim: &mut SchedEnv, _p: TaskId) {}

    /// wakeup_preempt() (check_preempt_curr before 6.6): `p` of this class
    /// became runnable on `cpu` where `curr`, of the same class, runs;
    /// reschedule if it should preempt. (A higher class always preempts;
    /// the core decides that.) `wake_flags`: WF_FORK, WF_TTWU | WF_SYNC, or
    /// 0 for a task the balancer moved.
    fn wakeup_preempt(_sim: &mut SchedEnv, _cpu: usize, _curr: TaskId, _p: TaskId, _wake_flags: u32) {}

    /// balance(): called for the previous task's class before the pick,
    /// to pull work (RT's pull_rt_task when the runqueue lowers its
    /// priority). The fair class balances newly idle in its pick.
    fn balance(_sim: &mut SchedEnv, _cpu: usize, _prev: TaskId) {}

    /// pick_next_task(): the task to run next on `cpu`, or Empty.
    /// `newidle`: the pick may balance a newly idle CPU (the kernel's
    /// pick_next_task_fair with rq_flags); false on a retry.
    fn pick_next_task(sim: &mut SchedEnv, cpu: usize, newidle: bool) -> Pick;

    /// put_prev_task(): `p`, which ran on `cpu`, stops running; `runnable`:
    /// it is still queued there (preempted) rather than blocked or gone.
    fn put_prev_task(_sim: &mut SchedEnv, _cpu: usize, _p: TaskId, _runnable: bool) {}

    /// set_next_task(): `p`, just picked, starts running on `cpu`.
    fn set_next_task(_sim: &mut SchedEnv, _cpu: usize, _p: TaskId) {}

    /// The balance callback set_next_task() queued (queue_balance_callback),
    /// run once the switch to `p` is done: RT pushes its waiting tasks away.
    fn balance_callback(_sim: &mut SchedEnv, _cpu: usize, _p: TaskId) {}

    /// select_task_rq(): the CPU a waking (WF_TTWU, `cpu` = task_cpu) or new
    /// (WF_FORK, `cpu` = the parent's) task should be queued on.
    fn select_task_rq(sim: &mut SchedEnv, p: TaskId, cpu: usize, wake_flags: u32, src: WakeSource) -> usize;

    /// task_fork(): `p` was just forked on `parent_cpu` (sched_fork).
    fn task_fork(_sim: &mut SchedEnv, _p: TaskId, _parent_cpu: usize) {}

    /// The new task `p`, placed on `cpu`, gets its load-tracking start
    /// (init_entity_runnable_average, post_init_entity_util_avg: the kernel
    /// calls them from wake_up_new_task for every class and they return
    /// early for the others).
    fn post_init(_sim: &mut SchedEnv, _cpu: usize, _p: TaskId) {}

    /// task_woken(): `p` was woken onto `cpu` and did not preempt there.
    fn task_woken(_sim: &mut SchedEnv, _cpu: usize, _p: TaskId) {}

    /// migrate_task_rq(): `p`, not queued, moves from `old` to `new`
    /// (set_task_cpu).
    fn migrate_task_rq(_sim: &mut SchedEnv, _p: TaskId, _old: usize, _new: usize) {}

    /// task_dead(): `p` exited on `cpu`.
    fn task_dead(_sim: &mut SchedEnv, _cpu: usize, _p: TaskId) {}

    /// task_tick(): the tick on `cpu`, where `curr` runs.
    fn task_tick(_sim: &mut SchedEnv, _cpu: usize, _curr: TaskId) {}

    /// update_curr(): charge `curr` the `delta` ns it just ran on `cpu`
    /// (the core has done the class-independent part).
    fn update_curr(_sim: &mut SchedEnv, _cpu: usize, _curr: TaskId, _delta: u64) {}
}

/// The enum dispatch: `SchedClass::Rt.enqueue_task(sim, ..)` calls
/// `<RtSchedClass as SchedClassOps>::enqueue_task(sim, ..)`.
///
/// The fair class is tested first, inline; the others go through a cold
/// function of their own (`others::enqueue_task`, ..). Nearly every call
/// is for the fair class, and with the match inline LLVM folded the test
/// into the match's jump table (an indirect jump a call).
macro_rules! dispatch {
    ($( fn $name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty)?; )*) => {
        impl SchedClass {
            $(
                #[inline]
                pub fn $name(self, sim: &mut SchedEnv $(, $arg: $ty)*) $(-> $ret)? {
                    if self == SchedClass::Fair {
                        return <FairSchedClass as SchedClassOps>::$name(sim $(, $arg)*);
                    }
                    others::$name(self, sim $(, $arg)*)
                }
            )*
        }

        /// The classes but fair, out of the fair class's hot path.
        mod others {
            use super::*;
            $(
                #[cold]
                #[inline(never)]
                pub(super) fn $name(class: SchedClass, sim: &mut SchedEnv $(, $arg: $ty)*) $(-> $ret)? {
                    match class {
                        SchedClass::Stop => <StopSchedClass as SchedClassOps>::$name(sim $(, $arg)*),
                        SchedClass::Dl => <DlSchedClass as SchedClassOps>::$name(sim $(, $arg)*),
                        SchedClass::Rt => <RtSchedClass as SchedClassOps>::$name(sim $(, $arg)*),
                        SchedClass::Fair => <FairSchedClass as SchedClassOps>::$name(sim $(, $arg)*),
                        SchedClass::Idle => <IdleSchedClass as SchedClassOps>::$name(sim $(, $arg)*),
                    }
                }
            )*
        }
    };
}

dispatch! {
    fn enqueue_task(cpu: usize, p: TaskId, flags: u32);
    fn dequeue_task(cpu: usize, p: TaskId, flags: u32) -> bool;
    fn yield_task(p: TaskId);
    fn wakeup_preempt(cpu: usize, curr: TaskId, p: TaskId, wake_flags: u32);
    fn balance(cpu: usize, prev: TaskId);
    fn pick_next_task(cpu: usize, newidle: bool) -> Pick;
    fn put_prev_task(cpu: usize, p: TaskId, runnable: bool);
    fn set_next_task(cpu: usize, p: TaskId);
    fn balance_callback(cpu: usize, p: TaskId);
    fn select_task_rq(p: TaskId, cpu: usize, wake_flags: u32, src: WakeSource) -> usize;
    fn task_fork(p: TaskId, parent_cpu: usize);
    fn post_init(cpu: usize, p: TaskId);
    fn task_woken(cpu: usize, p: TaskId);
    fn migrate_task_rq(p: TaskId, old: usize, new: usize);
    fn task_dead(cpu: usize, p: TaskId);
    fn task_tick(cpu: usize, curr: TaskId);
    fn update_curr(cpu: usize, curr: TaskId, delta: u64);
}
