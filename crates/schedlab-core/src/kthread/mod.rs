//! Kernel threads that do work for others: the workqueues' kworkers
//! (kernel/workqueue.c; `workqueue.rs`), the per-CPU vmstat_update work
//! that runs on them (`vmstat.rs`) and ktask's helper threads (the ktask
//! RFC; `ktask.rs`). The state they keep beside the tasks is here.

pub mod ktask;
pub mod vmstat;
pub mod workqueue;

use std::collections::VecDeque;

use crate::cpumask::CpuMask;
use crate::engine::EventKey;
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

// alloc_workqueue() flags (include/linux/workqueue.h).
/// Not bound to a CPU: served by the per-node unbound pools.
pub const WQ_UNBOUND: u32 = 1 << 1;
/// Freezable across suspend (no effect here).
pub const WQ_FREEZABLE: u32 = 1 << 2;
/// Has a rescuer for memory reclaim (no effect here: no memory pressure).
pub const WQ_MEM_RECLAIM: u32 = 1 << 3;
/// Served by the per-CPU highpri pools (workers at nice -20).
pub const WQ_HIGHPRI: u32 = 1 << 4;
/// Its work items do not take part in concurrency management.
pub const WQ_CPU_INTENSIVE: u32 = 1 << 5;

/// The unbound workqueue ktask's helpers run on (v4's ktask_wq).
pub const KTASK_WQ: &str = "ktask";

/// The flags by name, as `[[kernel.workqueue]]` writes them.
pub const WQ_FLAG_NAMES: &[(&str, u32)] = &[
    ("WQ_UNBOUND", WQ_UNBOUND),
    ("WQ_FREEZABLE", WQ_FREEZABLE),
    ("WQ_MEM_RECLAIM", WQ_MEM_RECLAIM),
    ("WQ_HIGHPRI", WQ_HIGHPRI),
    ("WQ_CPU_INTENSIVE", WQ_CPU_INTENSIVE),
];

/// struct workqueue_struct, reduced: what alloc_workqueue() was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkqueueDef {
    pub name: String,
    pub flags: u32,
    /// Nice of the unbound pools' workers (workqueue_attrs.nice; 0 unless
    /// set, as ktask's P0 sets it to 19). Bound workqueues use the CPU's
    /// normal (0) or highpri (-20) pool.
    pub nice: i32,
}

impl WorkqueueDef {
    pub fn new(name: &str, flags: u32) -> Self {
        WorkqueueDef { name: name.to_string(), flags, nice: 0 }
    }

    /// The workqueues every kernel has (kernel/workqueue.c
    /// workqueue_init_early, block/blk-core.c, mm/vmstat.c).
    pub fn system() -> Vec<WorkqueueDef> {
        vec![
            WorkqueueDef::new("events", 0),
            WorkqueueDef::new("events_highpri", WQ_HIGHPRI),
            WorkqueueDef::new("events_unbound", WQ_UNBOUND),
            WorkqueueDef::new("kblockd", WQ_MEM_RECLAIM | WQ_HIGHPRI),
            WorkqueueDef::new("mm_percpu_wq", WQ_MEM_RECLAIM),
        ]
    }
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
    /// Work items in flight (a slab) and the free slots.
    pub works: Vec<Option<WorkItem>>,
    pub free_works: Vec<usize>,
    /// The report group and program template of every kworker.
    pub kworker_group: Option<(usize, usize)>,
    /// Work items run, per workqueue.
    pub works_done: Vec<u64>,
}
