//! Models kernel/sched/fair.c, split as the kernel's 14k-line file asks to
//! be: the entity (CFS and EEVDF), PELT, the wakeup path and the balancer.

pub mod active_balance;
pub mod balance;
pub mod balance_2625;
pub mod balance_avg;
#[cfg(test)]
mod balance_tests;
pub mod bandwidth;
#[cfg(test)]
mod bandwidth_tests;
pub mod blocked;
pub mod cfs;
pub mod cpu_load;
pub mod eevdf;
#[cfg(test)]
mod eevdf_tests;
pub mod entity;
pub mod group;
pub mod h_load;
pub mod lb_snap;
#[cfg(test)]
mod linux618_tests;
pub mod load_avg;
pub mod migrate;
pub mod migrate_avg;
pub mod newidle;
pub mod nohz;
pub mod nohz_owner;
pub mod sched_idle_lb;
pub mod sd_lb_stats;
pub mod throttle_task;
#[cfg(test)]
mod throttle_task_tests;
pub mod wakeup;
pub mod wakeup_avg;

use crate::sched::class::{
    FairSchedClass, Pick, SchedClassOps, WakeSource, ENQUEUE_DELAYED, ENQUEUE_INITIAL, ENQUEUE_WAKEUP, WF_FORK,
};
use crate::sched::env::SchedEnv;
use crate::sched::fair::group::by_groups;
use crate::sched::pelt;
use crate::sched::task::TaskId;

impl SchedClassOps for FairSchedClass {
    fn enqueue_task(sim: &mut SchedEnv, cpu: usize, p: TaskId, flags: u32) {
        if flags & ENQUEUE_DELAYED != 0 {
            sim.requeue_delayed_entity(cpu, p);
            return;
        }
        let (initial, wakeup) = (flags & ENQUEUE_INITIAL != 0, flags & ENQUEUE_WAKEUP != 0);
        let counted = by_groups!(sim.enqueue_task_fair(cpu, p, initial, wakeup));
        if sim.cfg.mech.fair_server && counted && sim.sched.cfs_rqs[cpu].h_nr_running == 1 {
            // The first fair task here starts the fair server (6.12).
            let was_idle = sim.sched.rqs[cpu].nr_running == 1;
            sim.fair_server_enqueue(cpu, was_idle);
        }
    }

    fn dequeue_task(sim: &mut SchedEnv, cpu: usize, p: TaskId, flags: u32) -> bool {
        by_groups!(sim.dequeue_task_fair(cpu, p, flags))
    }

    fn yield_task(sim: &mut SchedEnv, p: TaskId) {
        sim.yield_task_fair(p);
    }

    fn wakeup_preempt(sim: &mut SchedEnv, cpu: usize, curr: TaskId, p: TaskId, wake_flags: u32) {
        sim.check_preempt_wakeup_fair(cpu, curr, p, wake_flags);
    }

    /// pick_next_task_fair(): the entity CFS or EEVDF picks; with nothing
    /// queued, a newly idle balance (sched_balance_newidle), and RETRY_TASK
    /// if it pulled anything.
    fn pick_next_task(sim: &mut SchedEnv, cpu: usize, newidle: bool) -> Pick {
        if let Some(p) = by_groups!(sim.pick_next_task_fair(cpu)) {
            return Pick::Task(p);
        }
        if newidle && sim.newidle_balance(cpu) > 0 {
            return Pick::Retry;
        }
        Pick::Empty
    }

    /// put_prev_task_fair(): a preempted task goes back into the tree, and
    /// so does a sched_delayed one (still on_rq).
    #[inline]
    fn put_prev_task(sim: &mut SchedEnv, cpu: usize, p: TaskId, runnable: bool) {
        let t = &sim.sched.tasks[p];
        // A task that parked (6.18, fair/throttle_task.rs) is runnable
        // but off the runqueue: put_prev_entity() finds it !on_rq.
        if (runnable && !t.throttled) || t.se.sched_delayed {
            by_groups!(sim.put_prev_task_fair(cpu, p));
        }
        if sim.sched.groups.any() {
            let next = sim.sched.rqs[cpu].picked;
            sim.put_prev_group_entities(cpu, p, next);
            if sim.sched.groups.bandwidth_used {
                sim.put_prev_check_cfs_rq_runtime(cpu, p); // fair/bandwidth.rs
            }
        }
    }

    fn set_next_task(sim: &mut SchedEnv, cpu: usize, p: TaskId) {
        by_groups!(sim.set_next_entity(cpu, p));
    }

    fn select_task_rq(sim: &mut SchedEnv, p: TaskId, cpu: usize, wake_flags: u32, src: WakeSource) -> usize {
        if wake_flags & WF_FORK != 0 {
            sim.select_task_rq_fork(p, cpu)
        } else {
            sim.select_task_rq_fair_wakeup(p, cpu, src)
        }
    }

    /// init_entity_runnable_average() and post_init_entity_util_avg(): a
    /// new task starts fully loaded, with half the CPU's spare capacity as
    /// its utilisation (weight-scaled since 6.10).
    fn post_init(sim: &mut SchedEnv, cpu: usize, p: TaskId) {
        let w = sim.sched.tasks[p].se.load.weight as u64;
        pelt::init_entity(&mut sim.sched.tasks[p].se.avg, w);
        let cfs_rq = sim.task_cfs_rq_on(p, cpu);
        sim.update_load_avg::<true>(cfs_rq, None);
        let util_weight = if sim.cfg.mech.post_init_util_by_weight { w } else { w << 10 };
        let cap = sim.capacity_of(cpu);
        let cfs_avg = sim.cfs_rq(cfs_rq).avg;
        pelt::post_init_entity_util_avg(&cfs_avg, &mut sim.sched.tasks[p].se.avg, util_weight, cap);
    }

    fn migrate_task_rq(sim: &mut SchedEnv, p: TaskId, old: usize, new: usize) {
        sim.migrate_task_rq_fair(p, old, new);
    }

    /// task_dead_fair() -> remove_entity_load_avg(): the dead task's load and
    /// utilisation leave the cfs_rq at once instead of decaying.
    /// Deviation: the kernel parks them in cfs_rq->removed until that
    /// cfs_rq's next update, and a group then propagates
    /// -(removed runnable_avg × divider) >> 10; here they leave at once and
    /// the group propagates the task's -load_sum (detach_task_load_avg).
    fn task_dead(sim: &mut SchedEnv, cpu: usize, p: TaskId) {
        if sim.sched.tasks[p].se.attached {
            let cfs_rq = sim.task_cfs_rq_on(p, cpu);
            sim.detach_task_load_avg(cfs_rq, p);
        }
    }

    fn task_tick(sim: &mut SchedEnv, cpu: usize, curr: TaskId) {
        by_groups!(sim.task_tick_fair(cpu, curr));
    }

    // Inline into the core's update_curr_charge(), its one caller: one
    // function's register saves a charge, not two.
    #[inline(always)]
    fn update_curr(sim: &mut SchedEnv, cpu: usize, curr: TaskId, delta: u64) {
        by_groups!(sim.update_curr_task_fair(cpu, curr, delta));
        if sim.cfg.mech.fair_server && sim.sched.rqs[cpu].dl.fs.active {
            sim.dl_server_update(cpu, delta);
        }
    }
}
