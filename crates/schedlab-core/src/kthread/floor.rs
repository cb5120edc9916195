//! The kernel threads' floor: the scheduler (their workers are tasks;
//! queueing work wakes them), the workqueues' and ktask's own state, the
//! registry of work items' programs, and the block layer (a work item may
//! submit IO). Nothing above this room (memory, interrupts, the workload)
//! is reachable from it.
//!
//! Each floor owns the floors beneath it by value (`MmFloor` holds this
//! one, `WorkloadFloor` holds that, `Sim` the top), so a mechanism on any
//! floor reaches a runqueue at a fixed offset from its own `self`, as the
//! scheduler does in `SchedEnv`. Views made of references (one per call)
//! were tried first: every access went through one more pointer, and the
//! mm and workqueue bench cases ran 3-5 % more instructions per event.

use crate::block::Block;
use crate::kthread::Kthreads;
use crate::program::Programs;
use crate::sched::env::SchedEnv;
use crate::sched::task::TaskId;

/// The kernel threads and the rooms beneath them.
pub struct KthreadFloor {
    /// The scheduler and the machine it runs on (sched/env.rs).
    pub k: SchedEnv,
    pub kthreads: Kthreads,
    /// The work items' programs and the report groups kworkers join.
    pub progs: Programs,
    /// The block devices (a work item may submit IO).
    pub block: Block,
}

impl KthreadFloor {
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

/// A floor above the kernel threads (`MmFloor`, `WorkloadFloor`, `Sim`):
/// a task blocks through it, so a workqueue worker's pool hears of it
/// (sched_submit_work -> wq_worker_sleeping).
pub trait LendsKthreads {
    /// The kernel threads' floor, for a call into it.
    fn kt(&mut self) -> &mut KthreadFloor;

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
