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
