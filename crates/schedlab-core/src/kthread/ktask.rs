//! Models ktask (RFC v4, Daniel Jordan, 2018; never merged): a job's work
//! is cut into chunks that the calling thread and helper work items on an
//! unbound workqueue take from a shared cursor. P0 runs the workqueue's
//! workers at MAX_NICE (`kernel.ktask.helper_nice = 19`).
//! docs/LINUX-FACTS.md §8.1. Deviation: one workqueue (v4 also has
//! ktask_nonuma_wq) and no 80 % cap on the CPUs running helpers.

use crate::kernel::workqueue::KTASK_WQ;
use crate::kthread::floor::KthreadFloor;
use crate::kthread::KtaskJob;
use crate::kthread::WorkDone;
use crate::program::{Op, Program};
use crate::sched::task::{KtaskRole, TaskId, TaskState};

/// KTASK_LOAD_BAL_SHIFT: about four chunks per thread.
pub const KTASK_LOAD_BAL_SHIFT: u32 = 2;

/// The v4 chunk size: (size / nthreads) >> KTASK_LOAD_BAL_SHIFT, rounded
/// down to a multiple of min_chunk when larger, at least min_chunk; one
/// chunk when single-threaded.
pub fn ktask_chunk_size(size: u64, nthreads: usize, min_chunk: u64) -> u64 {
    if nthreads <= 1 {
        return size.max(1);
    }
    let mut c = (size / nthreads as u64) >> KTASK_LOAD_BAL_SHIFT;
    if c > min_chunk {
        c -= c % min_chunk;
    }
    c.max(min_chunk)
}

/// nthreads = min(ceil(size / min_chunk), online CPUs, max_threads).
pub fn ktask_nthreads(size: u64, min_chunk: u64, online: usize, max_threads: usize) -> usize {
    (size.div_ceil(min_chunk.max(1)) as usize).min(online).min(max_threads).max(1)
}

impl KthreadFloor {
    /// ktask_run(): the running task `main` starts a job: nthreads - 1
    /// work items on the unbound `ktask` workqueue (its workers at
    /// `kernel.ktask.helper_nice`; kthread/workqueue.rs), and the caller
    /// works too.
    /// Returns the task whose program goes on now, as `ktask_chunk_done`.
    #[must_use]
    pub fn ktask_run(&mut self, main: TaskId, work: u64, max_threads: usize, min_chunk: u64) -> Option<TaskId> {
        let nthreads = ktask_nthreads(work, min_chunk, self.k.sched.rqs.len(), max_threads);
        let chunk = ktask_chunk_size(work, nthreads, min_chunk);
        let job = self.kthreads.ktask_jobs.len();
        self.kthreads.ktask_jobs.push(KtaskJob {
            main,
            total: work,
            chunk,
            cursor: 0,
            nthreads,
            active_helpers: nthreads - 1,
            main_waiting: false,
        });
        let cpu = self.k.sched.tasks[main].cpu;
        let program = self.progs.work_programs.len();
        self.progs.work_programs.push(Program { ops: vec![Op::KtaskHelper(job)] });
        let wq = self.kthreads.workqueues.iter().position(|w| w.name == KTASK_WQ).expect("the ktask workqueue");
        for _ in 0..nthreads - 1 {
            self.queue_work(wq, program, cpu, WorkDone::default(), true);
        }
        self.k.sched.tasks[main].ktask = Some(KtaskRole::Main(job));
        self.ktask_chunk_done(main)
    }

    /// A kworker runs one of the job's helper work items: it takes chunks
    /// until there are none.
    #[must_use]
    pub(crate) fn ktask_helper(&mut self, tid: TaskId, job: usize) -> Option<TaskId> {
        self.k.sched.tasks[tid].ktask = Some(KtaskRole::Helper(job));
        self.ktask_chunk_done(tid)
    }

    /// A worker finished a chunk (or just started): take the next one, or
    /// finish. The worker is running on its CPU. Returns the task whose
    /// program goes on now (the interpreter steps it): the helper whose
    /// work item ended, or the caller whose job is done.
    #[must_use]
    pub fn ktask_chunk_done(&mut self, tid: TaskId) -> Option<TaskId> {
        let role = self.k.sched.tasks[tid].ktask?;
        let job = match role {
            KtaskRole::Main(j) | KtaskRole::Helper(j) => j,
        };
        let j = &mut self.kthreads.ktask_jobs[job];
        if j.cursor < j.total {
            let c = j.chunk.min(j.total - j.cursor);
            j.cursor += c;
            // The job's work is its caller's kind of work (its group's
            // memory-bound share and traffic), whoever runs the chunk.
            let (share, rate) = self.k.sched.tasks[j.main].group_mem;
            let t = &mut self.k.sched.tasks[tid];
            t.work_left = c;
            (t.memory_bound, t.mem_rate) = (share, rate);
            return None;
        }
        match role {
            KtaskRole::Helper(_) => {
                j.active_helpers -= 1;
                let wake_main = j.active_helpers == 0 && j.main_waiting;
                let main = j.main;
                self.k.sched.tasks[tid].ktask = None;
                if wake_main {
                    // complete(): the last helper wakes the waiting caller.
                    self.kthreads.ktask_jobs[job].main_waiting = false;
                    self.k.sched.tasks[main].ktask = None;
                    let cpu = self.k.sched.tasks[tid].cpu;
                    self.k.try_to_wake_up(main, cpu, true);
                }
                // The work item ends; the worker goes on (workqueue.rs).
                self.k.sched.tasks[tid].need_advance = true;
                Some(tid)
            }
            KtaskRole::Main(_) => {
                if j.active_helpers == 0 {
                    self.k.sched.tasks[tid].ktask = None;
                    self.k.sched.tasks[tid].need_advance = true;
                    Some(tid)
                } else {
                    j.main_waiting = true;
                    // wait_for_completion(): sleep until the last helper is done.
                    self.block(tid);
                    debug_assert_eq!(self.k.sched.tasks[tid].state, TaskState::Blocked);
                    None
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunking_follows_v4() {
        // 8 threads over 400 s of work with a 1 ms minimum: ~4 chunks/thread.
        let c = ktask_chunk_size(400_000_000_000, 8, 1_000_000);
        assert_eq!(c, 12_500_000_000);
        assert_eq!(ktask_chunk_size(10, 1, 3), 10);
        assert_eq!(ktask_chunk_size(100, 8, 7), 7);
        assert_eq!(ktask_nthreads(400, 1, 8, 8), 8);
        assert_eq!(ktask_nthreads(3, 1, 8, 8), 3);
        assert_eq!(ktask_nthreads(400, 1, 8, 4), 4);
    }
}
