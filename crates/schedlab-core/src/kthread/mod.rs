//! Kernel threads that do work for others: the workqueues' kworkers
//! (kernel/workqueue.c; `workqueue.rs`) and ktask's helper threads (the
//! ktask RFC; `ktask.rs`). The state they keep beside the tasks is here.

pub mod ktask;
pub mod workqueue;

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

/// The kernel threads' state beside the tasks.
#[derive(Debug, Clone, Default)]
pub struct Kthreads {
    /// Per CPU: the bound kworker that runs vmstat_update (workqueue.rs).
    pub vmstat_kworker: Vec<Option<TaskId>>,
    /// Per CPU: when its deferrable vmstat timer is next due.
    pub vmstat_next: Vec<u64>,
    /// ktask jobs, by id (ktask.rs).
    pub ktask_jobs: Vec<KtaskJob>,
}
