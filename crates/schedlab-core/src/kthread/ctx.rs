//! What the kernel threads work on during one call: the scheduler (their
//! workers are tasks; queueing work wakes them), the workqueues' and
//! ktask's own state, the registry of work items' programs, and the block
//! layer (a work item may submit IO). Borrowed from the simulation for the
//! call (`Sim::kt`), so nothing above this room (memory, interrupts, the
//! workload) is reachable from it.
//!
//! The scheduler's state is held by value in `SchedEnv` because its hot
//! paths touch a runqueue on nearly every line; the workqueue paths are
//! colder, and a struct of references costs them little (measured with
//! cachegrind on the kworker-stack bench: see the commit that added it).

use crate::block::Block;
use crate::kthread::Kthreads;
use crate::program::Programs;
use crate::sched::env::SchedEnv;
use crate::sched::task::TaskId;

/// The kernel threads' view of the simulation during one call.
pub struct KthreadCtx<'a> {
    pub k: &'a mut SchedEnv,
    pub kthreads: &'a mut Kthreads,
    /// The work items' programs and the report groups kworkers join.
    pub progs: &'a mut Programs,
    /// The block devices (a work item may submit IO).
    pub block: &'a mut Block,
}

impl KthreadCtx<'_> {
    /// The running task `tid` goes to sleep (schedule()); a workqueue
    /// worker first lets its pool know (sched_submit_work ->
    /// wq_worker_sleeping).
    #[inline]
    pub fn block(&mut self, tid: TaskId) {
        if self.k.sched.tasks[tid].worker.is_some() {
            self.wq_worker_sleeping(tid); // kthread/workqueue.rs
        }
        self.k.block(tid);
    }

    /// The running task sleeps until an IO completion wakes it, in
    /// io_schedule() (counted in its CPU's nr_iowait: the idle CPU's time
    /// is iowait) or in plain schedule().
    pub(crate) fn io_block(&mut self, tid: TaskId, iowait: bool) {
        // io_schedule_prepare(): in_iowait before schedule(), whose
        // __block_task() counts it (block_task_accounting).
        self.k.sched.tasks[tid].in_iowait = iowait;
        self.block(tid);
    }
}

/// A view of a room above the kernel threads that can lend their view
/// (`MmCtx`, `WorkloadCtx`): a task blocks through it, so a workqueue
/// worker's pool hears of it (sched_submit_work -> wq_worker_sleeping).
pub trait LendsKthreads {
    /// The kernel threads' view, for a call into them.
    fn kt(&mut self) -> KthreadCtx<'_>;

    /// The running task `tid` sleeps.
    #[inline]
    fn block(&mut self, tid: TaskId) {
        self.kt().block(tid);
    }

    /// The running task sleeps in io_schedule().
    #[inline]
    fn io_block(&mut self, tid: TaskId, iowait: bool) {
        self.kt().io_block(tid, iowait);
    }
}
