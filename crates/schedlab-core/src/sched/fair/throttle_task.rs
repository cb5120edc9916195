//! Models 6.18's task based throttle of kernel/sched/fair.c (e1fad12dcb66
//! "sched/fair: Switch to task based throttle model" and the series
//! around it, Valentin Schneider and Aaron Lu): the CFS bandwidth of
//! fair/bandwidth.rs with a throttled cfs_rq that stays queued.
//!
//! - throttle_cfs_rq() only marks the hierarchy throttled (throttle_count)
//!   and puts the cfs_rq on its group's throttled list; nothing leaves the
//!   runqueue. A cfs_rq's PELT clock stops once it has no entity queued
//!   (at the throttle, or at the dequeue that empties it), and goes on at
//!   the enqueue that fills it.
//! - A task picked below a throttled cfs_rq (pick_task_fair()'s walk saw
//!   check_cfs_rq_runtime() true) gets its throttle work; when it returns
//!   to user space it dequeues itself (DEQUEUE_SLEEP | DEQUEUE_THROTTLE,
//!   never a delayed dequeue) onto its cfs_rq's throttled_limbo_list and
//!   reschedules. A kernel thread never returns to user space: it runs on.
//! - unthrottle_cfs_rq() enqueues each parked task again (ENQUEUE_WAKEUP,
//!   the most recently parked first), children's cfs_rqs before their
//!   parents' (tg_unthrottle_up).
//! - The balancer refuses a task only when its group is throttled on the
//!   destination (lb_throttled_hierarchy); a parked task is not queued, so
//!   the balancer never sees it.
//! - cpu.stat's throttled time of a cfs_rq starts when its first task
//!   parks (record_throttle_clock), not at the throttle.
//!
//! Deviation: the model has no user mode. A task runs its throttle work
//! when it is switched in, or at once when it is picked again while it
//! runs (before its program takes its next step): where a user-space hog,
//! preempted or woken from a system call, returns to user space. A task
//! in a long system call parks later in the kernel.
//! Deviation: cfs_rq->throttled_clock_self (cpu.stat.local) is not kept.

use crate::prio::SchedClass;
use crate::sched::cfs_rq::CfsRqId;
use crate::sched::class::{
    FairSchedClass, SchedClassOps, DEQUEUE_MIGRATING, DEQUEUE_SLEEP, DEQUEUE_THROTTLE, ENQUEUE_WAKEUP,
};
use crate::sched::env::SchedEnv;
use crate::sched::task::{SeId, TaskId, TaskState};

impl SchedEnv {
    /// The throttle of throttle_cfs_rq() from 6.18, once `q` is on the
    /// throttled list: tg_throttle_down() over the subtree, each cfs_rq
    /// without an entity queued stopping its PELT clock.
    pub(super) fn throttle_cfs_rq_task_based(&mut self, q: CfsRqId) {
        let cpu = self.cfs_rq(q).cpu;
        let pelt_now = self.rq_clock_pelt(cpu);
        for c in self.cfs_rqs_below(q) {
            let empty = self.cfs_rq(c).nr_running == 0;
            let bw = self.rq_bw_mut(c);
            bw.throttle_count += 1;
            if bw.throttle_count == 1 && empty {
                bw.throttled_clock_pelt = pelt_now;
                bw.pelt_clock_throttled = true;
            }
        }
        self.rq_bw_mut(q).throttled = true;
    }

    /// unthrottle_cfs_rq() from 6.18: not while `q` still has no runtime
    /// (a remote CPU's tasks used the runtime the IPI brought); the time
    /// throttled since the first task parked counts into cpu.stat; then
    /// tg_unthrottle_up() over the subtree, children first: the PELT
    /// clocks go on and the parked tasks are enqueued again.
    pub(super) fn unthrottle_cfs_rq_task_based(&mut self, q: CfsRqId) {
        let bw = *self.rq_bw(q);
        if bw.runtime_enabled && bw.runtime_remaining <= 0 {
            return;
        }
        let (tg, cpu) = (self.cfs_rq(q).tg, self.cfs_rq(q).cpu);
        let now = self.now;
        let bw = self.rq_bw_mut(q);
        bw.throttled = false;
        let since = std::mem::take(&mut bw.throttled_clock);
        let b = self.cfs_b_mut(tg);
        if since != 0 {
            b.throttled_time += now - since;
        }
        b.throttled_cfs_rq.retain(|&x| x != q);
        // walk_tg_tree_from()'s up calls: each cfs_rq after its children
        // (the subtree's pre-order, reversed; the kernel lists the newest
        // child first, as the reversal does).
        for c in self.cfs_rqs_below(q).into_iter().rev() {
            let bw = self.rq_bw_mut(c);
            bw.throttle_count -= 1;
            if bw.throttle_count > 0 {
                continue;
            }
            self.pelt_clock_resume(c);
            let parked = std::mem::take(&mut self.sched.groups.limbo[c.index()]);
            for &p in parked.iter().rev() {
                self.sched.tasks[p].throttled = false;
                <FairSchedClass as SchedClassOps>::enqueue_task(self, cpu, p, ENQUEUE_WAKEUP);
            }
        }
        if self.sched.rqs[cpu].curr.is_none() && self.sched.cfs_rqs[cpu].nr_running > 0 {
            self.resched_curr(cpu);
        }
    }

    /// task_throttle_setup_work(): `p`, picked below a throttled cfs_rq,
    /// parks when it returns to user space; a kernel thread never does.
    #[cold]
    pub(super) fn task_throttle_setup_work(&mut self, p: TaskId) {
        let t = &mut self.sched.tasks[p];
        if !t.kthread {
            t.throttle_work = true;
        }
    }

    /// throttle_cfs_rq_work(): `p`, running on `cpu`, returns to user
    /// space; if its cfs_rq is still in a throttled hierarchy it leaves
    /// the runqueue for the cfs_rq's limbo list, and the CPU reschedules.
    #[cold]
    pub fn throttle_cfs_rq_work(&mut self, cpu: usize, p: TaskId) {
        let t = &mut self.sched.tasks[p];
        t.throttle_work = false;
        if t.state != TaskState::Runnable || t.sched_class() != SchedClass::Fair {
            return;
        }
        let q = self.task_cfs_rq_on(p, cpu);
        if self.rq_bw(q).throttle_count == 0 {
            return;
        }
        self.dequeue_task_fair::<true>(cpu, p, DEQUEUE_SLEEP | DEQUEUE_THROTTLE);
        self.sched.groups.limbo[q.index()].push(p);
        self.sched.tasks[p].throttled = true;
        self.resched_curr(cpu);
    }

    /// dequeue_throttled_task(): a parked task leaves its limbo list; one
    /// that moves to another CPU takes its load along.
    #[cold]
    pub(super) fn dequeue_throttled_task(&mut self, cpu: usize, p: TaskId, flags: u32) {
        let q = self.task_cfs_rq_on(p, cpu);
        self.sched.groups.limbo[q.index()].retain(|&x| x != p);
        if flags & DEQUEUE_SLEEP != 0 {
            self.sched.tasks[p].throttled = false;
            return;
        }
        if flags & DEQUEUE_MIGRATING != 0 && self.sched.tasks[p].se.attached {
            // detach_task_cfs_rq().
            self.update_load_avg::<true>(q, Some(SeId::task(p)));
            self.detach_task_load_avg(q, p);
        }
    }

    /// enqueue_throttled_task(): a parked task queued again (it moved)
    /// stays parked if its new cfs_rq is in a throttled hierarchy and it
    /// is not the running task; whether it did.
    #[cold]
    pub(super) fn enqueue_throttled_task(&mut self, cpu: usize, p: TaskId) -> bool {
        let q = self.task_cfs_rq_on(p, cpu);
        if self.throttled_hierarchy(q) && self.sched.rqs[cpu].curr != Some(p) {
            self.sched.groups.limbo[q.index()].push(p);
            return true;
        }
        self.sched.tasks[p].throttled = false;
        false
    }

    /// record_throttle_clock(): a task parked below `q`; a throttled `q`
    /// starts counting its throttled time now, if it has not yet.
    #[cold]
    pub(super) fn record_throttle_clock(&mut self, q: CfsRqId) {
        let now = self.now;
        let bw = self.rq_bw_mut(q);
        if bw.throttled && bw.throttled_clock == 0 {
            bw.throttled_clock = now;
        }
    }

    /// The end of dequeue_entity() from 6.18: a cfs_rq in a throttled
    /// hierarchy that has just emptied stops its PELT clock.
    #[cold]
    pub(super) fn pelt_clock_stop_if_throttled(&mut self, q: CfsRqId) {
        if !self.throttled_hierarchy(q) {
            return;
        }
        let pelt_now = self.rq_clock_pelt(self.cfs_rq(q).cpu);
        let bw = self.rq_bw_mut(q);
        bw.throttled_clock_pelt = pelt_now;
        bw.pelt_clock_throttled = true;
    }

    /// The end of enqueue_entity() from 6.18 (and tg_unthrottle_up()): a
    /// cfs_rq whose PELT clock stopped while throttled and empty starts it
    /// again, less the time it was stopped.
    #[cold]
    pub(super) fn pelt_clock_resume(&mut self, q: CfsRqId) {
        let pelt_now = self.rq_clock_pelt(self.cfs_rq(q).cpu);
        let bw = self.rq_bw_mut(q);
        if bw.pelt_clock_throttled {
            bw.throttled_clock_pelt_time += pelt_now - bw.throttled_clock_pelt;
            bw.pelt_clock_throttled = false;
        }
    }
}
