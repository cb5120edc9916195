//! Kernel threads that do work for others: the workqueues' kworkers
//! (kernel/workqueue.c; `workqueue.rs`), the per-CPU vmstat_update work
//! that runs on them (`vmstat.rs`) and ktask's helper threads (the ktask
//! RFC; `ktask.rs`). The state they keep beside the tasks is here.

pub mod floor;
pub mod ktask;
pub mod vmstat;
pub mod workqueue;

use std::collections::VecDeque;

use crate::cpumask::CpuMask;
use crate::engine::EventKey;
use crate::kernel::workqueue::WorkqueueDef;
use crate::sched::task::TaskId;

#[derive(Debug, Clone)]
pub struct KtaskJob {
    pub main: TaskId,
    pub total: u64,
    pub chunk: u64,
    /// Work handed out so far.
    pub cursor: u64,
    pub nthreads: usize,
    pub active_helpers: usize,
    pub main_waiting: bool,
}

// worker->flags (kernel/workqueue.c).
/// Preparing to run works: does not count in nr_running.
pub const WORKER_PREP: u32 = 1 << 3;
/// On the pool's idle list.
pub const WORKER_IDLE: u32 = 1 << 2;
/// Serves an unbound pool: never counts in nr_running.
pub const WORKER_UNBOUND: u32 = 1 << 7;
/// Runs a CPU_INTENSIVE work: does not count in nr_running.
pub const WORKER_CPU_INTENSIVE: u32 = 1 << 6;
/// The flags under which a worker is not counted in nr_running.
pub const WORKER_NOT_RUNNING: u32 = WORKER_PREP | WORKER_CPU_INTENSIVE | WORKER_UNBOUND;

/// struct worker_pool: the per-CPU normal and highpri pools, and the
/// unbound pools (one per node and nice).
#[derive(Debug, Clone)]
pub struct WorkerPool {
    /// The CPU a bound pool serves.
    pub cpu: Option<usize>,
    /// The node an unbound pool serves.
    pub node: Option<usize>,
    /// Its workers' nice: 0, HIGHPRI_NICE_LEVEL (-20), or an unbound
    /// pool's attrs.
    pub nice: i32,
    pub cpus: CpuMask,
    /// Pending work items, oldest first.
    pub worklist: VecDeque<usize>,
    /// Workers running works and not blocked: concurrency management
    /// wakes another worker only when this drops to 0.
    pub nr_running: i32,
    /// Idle workers, most recently idle last (the kernel adds to the head
    /// of idle_list and wakes the first: LIFO).
    pub idle_list: Vec<TaskId>,
    /// The workers running a work item (pool->busy_hash, a list here: a
    /// pool has few), so finding who executes a work does not walk every
    /// worker of the machine.
    pub busy: Vec<usize>,
    pub nr_workers: u32,
    /// The next worker's id in its name (kworker/N:<id>).
    pub next_id: u32,
    /// The idle timer that reaps surplus idle workers.
    pub idle_timer: Option<EventKey>,
    /// The pool's index, for unbound workers' names (kworker/u<id>:<n>).
    pub id: usize,
}

/// struct worker.
#[derive(Debug, Clone)]
pub struct Worker {
    pub task: TaskId,
    pub pool: usize,
    /// The work item it runs (current_work).
    pub current: Option<usize>,
    pub flags: u32,
    /// It blocked inside a work (wq_worker_sleeping) and has not run since.
    pub sleeping: bool,
    /// When it last went idle.
    pub last_active: u64,
}

/// What happens when a work item is done, besides its own ops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WorkDone {
    /// complete() a waiter: flush_work()'s barrier, or the task an IO
    /// completion work was for.
    pub wake: Option<TaskId>,
    /// submit_bio() of this request (a work that dispatches IO, as
    /// kblockd's blk_mq_requeue_work).
    pub submit: Option<usize>,
    /// Count down this barrier of `Kthreads::barriers`: its waiter is
    /// woken when the last of its works is done (flush_work() of each).
    pub barrier: Option<u32>,
}

/// A task flushing several works at once: how many are still to run.
///
/// Deviation: the kernel's flush_work() of each in turn wakes the waiter
/// whenever the work it is waiting for completes; here it is woken once,
/// when the last one does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Barrier {
    pub left: u32,
    pub waiter: TaskId,
}

/// struct work_struct, with what it runs.
#[derive(Debug, Clone)]
pub struct WorkItem {
    /// Its program in `Workload::work_programs`.
    pub program: usize,
    /// The workqueue it was queued on.
    pub wq: usize,
    pub done: WorkDone,
    pub queued_at: u64,
}

/// The kernel threads' state beside the tasks.
#[derive(Debug, Clone, Default)]
pub struct Kthreads {
    /// Per CPU: when its deferrable vmstat timer is next due (vmstat.rs).
    pub vmstat_next: Vec<u64>,
    /// vmstat_update's work program.
    pub vmstat_program: usize,
    /// ktask jobs, by id (ktask.rs).
    pub ktask_jobs: Vec<KtaskJob>,
    /// The kernel's workqueues, by index (`[[kernel.workqueue]]` after the
    /// system ones).
    pub workqueues: Vec<WorkqueueDef>,
    pub pools: Vec<WorkerPool>,
    /// Per CPU: its normal and highpri pools, once used.
    pub cpu_pools: Vec<[Option<usize>; 2]>,
    /// Unbound pools: (node, nice, pool).
    pub unbound_pools: Vec<(usize, i32, usize)>,
    pub workers: Vec<Worker>,
    /// Flushes of several works in progress (a slab; None is free).
    pub barriers: Vec<Option<Barrier>>,
    /// Work items in flight (a slab) and the free slots.
    pub works: Vec<Option<WorkItem>>,
    pub free_works: Vec<usize>,
    /// The report group and program template of every kworker.
    pub kworker_group: Option<(usize, usize)>,
    /// Work items run, per workqueue.
    pub works_done: Vec<u64>,
}
