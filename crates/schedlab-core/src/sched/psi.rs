//! Pressure stall information (kernel/sched/psi.c): where the scheduler
//! and reclaim change a CPU's task counts, its stall states are tested
//! again (psi_group_change). The states, the collection and the averages
//! are sched/psi_group.rs.

use crate::sched::env::SchedEnv;
use crate::sched::psi_group::Psi;
use crate::sched::task::{TaskId, TaskState};

impl SchedEnv {
    /// psi_group_change() on `cpu`: its counts may have changed; if its
    /// states did, the time in the old ones is recorded.
    #[inline]
    pub(crate) fn psi_update(&mut self, cpu: usize) {
        if self.psi.enabled {
            self.psi_change(cpu);
        }
    }

    #[inline(never)]
    fn psi_change(&mut self, cpu: usize) {
        let tick = self.cfg.tick_ns;
        self.psi.catch_up(self.now, tick);
        let rq = &self.sched.rqs[cpu];
        let curr_memstall = rq.curr.is_some_and(|t| self.sched.tasks[t].memstall);
        let m = self.psi.states(&self.psi.cpus[cpu], rq.nr_running, rq.nr_iowait, rq.curr.is_some(), curr_memstall);
        let c = &mut self.psi.cpus[cpu];
        if m == c.state_mask {
            return;
        }
        c.times = Psi::times_at(c, self.now);
        c.state_start = self.now;
        c.state_mask = m;
    }

    /// psi_memstall_enter(): `tid` stalls on memory from now.
    pub(crate) fn psi_memstall_enter(&mut self, tid: TaskId) {
        if !self.psi.enabled || self.sched.tasks[tid].memstall {
            return;
        }
        self.sched.tasks[tid].memstall = true;
        self.psi_memstall_count(tid, 1);
    }

    /// psi_memstall_leave().
    pub(crate) fn psi_memstall_leave(&mut self, tid: TaskId) {
        if !self.sched.tasks[tid].memstall {
            return;
        }
        self.sched.tasks[tid].memstall = false;
        self.psi_memstall_count(tid, -1);
    }

    fn psi_memstall_count(&mut self, tid: TaskId, by: i32) {
        let t = &self.sched.tasks[tid];
        let (cpu, running) = (t.cpu, t.state == TaskState::Runnable);
        let c = &mut self.psi.cpus[cpu];
        c.nr_memstall = c.nr_memstall.wrapping_add_signed(by);
        if running {
            c.nr_memstall_running = c.nr_memstall_running.wrapping_add_signed(by);
        }
        self.psi_change(cpu);
    }

    /// psi_enqueue / psi_dequeue for a memstall task: it joins (`by` 1)
    /// or leaves (-1) the runnable tasks of `cpu` (TSK_MEMSTALL_RUNNING).
    pub(crate) fn psi_memstall_running(&mut self, cpu: usize, tid: TaskId, by: i32) {
        if !self.sched.tasks[tid].memstall {
            return;
        }
        let c = &mut self.psi.cpus[cpu];
        c.nr_memstall_running = c.nr_memstall_running.wrapping_add_signed(by);
        self.psi_change(cpu);
    }

    /// A memstall task moves from `old` to `new` (set_task_cpu): its
    /// counts go with it.
    pub(crate) fn psi_memstall_migrate(&mut self, tid: TaskId, old: usize, new: usize) {
        if !self.sched.tasks[tid].memstall || old == new {
            return;
        }
        let running = self.sched.tasks[tid].state == TaskState::Runnable;
        for (cpu, by) in [(old, -1), (new, 1)] {
            let c = &mut self.psi.cpus[cpu];
            c.nr_memstall = c.nr_memstall.wrapping_add_signed(by);
            if running {
                c.nr_memstall_running = c.nr_memstall_running.wrapping_add_signed(by);
            }
            self.psi_change(cpu);
        }
    }
}
