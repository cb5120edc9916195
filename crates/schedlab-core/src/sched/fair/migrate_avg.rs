//! Which tasks the avg_load balancer (2.6.x .. 5.4) may move, and moving
//! them: task_hot, can_migrate_task, and balance_tasks/move_tasks walking
//! cfs_tasks from the head until the load to move is met.

use crate::kernel::features::Feature;
use crate::prio::MAX_PRIO;
use crate::sched::env::SchedEnv;
use crate::sched::fair::balance_avg::Pass;
use crate::sched::fair::sd_lb_stats::SCHED_LOAD_SCALE_FUZZ;
use crate::sched::sched::CpuIdleType;
use crate::sched::task::{SeId, TaskId};

impl SchedEnv {
    /// The source's cfs_rq->tasks list from its head. 2.6.35 list_add()s at
    /// enqueue, so the head is the most recently queued task. Deviation:
    /// schedlab's list position is also refreshed when a task is picked
    /// (the 6.x cfs_tasks rule), so recently run tasks come first too.
    pub(super) fn cfs_tasks_head_first(&self, cpu: usize) -> Vec<TaskId> {
        let mut v: Vec<TaskId> = self.rq_cfs_tasks(cpu);
        v.sort_by_key(|&t| std::cmp::Reverse(self.sched.tasks[t].list_seq));
        v
    }

    /// task_hot() [sched.c @2.6.35]: a buddy of its cfs_rq is hot while the
    /// destination runs something; else hot if it ran within
    /// sysctl_sched_migration_cost. 2.6.35 has no SCHED_IDLE exemption
    /// (docs/LINUX-FACTS.md §3.8); 4.16+ has one. Deviation: "this_rq()" is the
    /// destination even when the NOHZ owner balances on its behalf.
    pub(super) fn task_hot_avg(&self, p: TaskId, src: usize, dst: usize) -> bool {
        let t = &self.sched.tasks[p];
        if t.is_idle_policy() && self.cfg.mech.task_hot_idle_exempt {
            return false;
        }
        // task_hot(): only fair tasks are ever cache hot.
        if t.policy.is_rt() {
            return false;
        }
        let cfs = &self.sched.cfs_rqs[src];
        if self.cfg.features.on(Feature::CACHE_HOT_BUDDY)
            && self.sched.rqs[dst].nr_running > 0
            && (cfs.next == Some(SeId::task(p)) || cfs.last == Some(SeId::task(p)))
        {
            return true;
        }
        let mc = self.cfg.sysctl.sched_migration_cost_ns;
        mc > 0 && self.now.saturating_sub(t.se.exec_start) < mc
    }

    /// can_migrate_task() [sched_fair.c @2.6.35]: affinity, then not running,
    /// then not cache hot unless nr_balance_failed > cache_nice_tries.
    pub(super) fn can_migrate_task_avg(
        &self,
        p: TaskId,
        src: usize,
        dst: usize,
        lvl: usize,
        all_pinned: &mut bool,
    ) -> bool {
        if !self.sched.tasks[p].cpus.test(dst) {
            return false;
        }
        *all_pinned = false;
        if self.sched.rqs[src].curr == Some(p) {
            return false;
        }
        let sd = self.topo.cpu_domains[dst][lvl];
        !self.task_hot_avg(p, src, dst)
            || self.sched.rqs[dst].sd[lvl].nr_balance_failed > self.topo.domains[sd].cache_nice_tries
    }

    /// balance_tasks() [sched_fair.c @2.6.35]: walk the source list, at most
    /// sysctl_sched_nr_migrate (+1) tasks examined; skip a task whose
    /// weight/2 exceeds what is left to move; pull the others. Returns
    /// (load moved, tasks moved). As in the kernel, a task skipped for its
    /// weight never reaches can_migrate_task, so it leaves `all_pinned` set.
    ///
    /// The legacy era (2.6.24, rt_legacy.rs) walks the classes from the
    /// highest, RT first, with its own count of examined tasks per class,
    /// and keeps a task too heavy for the imbalance when it would be the
    /// highest priority on this CPU (skip_for_load && prio >= this_best_prio,
    /// with SCHED_LOAD_SCALE_FUZZ) [sched.c @2.6.24 move_tasks, balance_tasks].
    #[allow(clippy::too_many_arguments)] // the kernel passes the same set
    pub(super) fn balance_tasks_avg(
        &mut self,
        this_cpu: usize,
        busiest: usize,
        max_load_move: u64,
        lvl: usize,
        idle: CpuIdleType,
        all_pinned: &mut bool,
        pass: Pass,
    ) -> (u64, u32) {
        if max_load_move == 0 {
            *all_pinned = false;
            return (0, 0);
        }
        let legacy = self.rt_legacy();
        let generic = self.lb_2625();
        let mut pinned = true;
        let mut rem = max_load_move as i64;
        let mut pulled = 0;
        let classes = if legacy {
            vec![self.rt_tasks_lb_order(busiest), self.cfs_tasks_head_first(busiest)]
        } else {
            vec![self.cfs_tasks_head_first(busiest)]
        };
        let fuzz = if generic { SCHED_LOAD_SCALE_FUZZ as i64 } else { 0 };
        let mut this_best_prio = self.sched.rqs[this_cpu].curr.map(|c| self.sched.tasks[c].prio()).unwrap_or(MAX_PRIO);
        'classes: for list in classes {
            // `if (loops++ > sysctl_sched_nr_migrate) break;`
            for (loops, p) in list.into_iter().enumerate() {
                if loops as u64 > self.cfg.sysctl.sched_nr_migrate {
                    break;
                }
                if !self.pass_accepts(pass, p) {
                    continue;
                }
                // 3.8+ detach_tasks() weighs a task by task_h_load(): its
                // part of the root's load (its load_avg without cgroups).
                let w =
                    if self.cfg.mech.cpu_load_from_pelt { self.task_h_load(p).max(1) } else { self.lb_task_load(p) };
                let skip_for_load = (w >> 1) as i64 > rem + fuzz;
                let keep_for_prio = generic && self.sched.tasks[p].prio() < this_best_prio;
                if (skip_for_load && !keep_for_prio)
                    || !self.can_migrate_task_avg(p, busiest, this_cpu, lvl, &mut pinned)
                {
                    continue;
                }
                self.move_queued_task(p, busiest, this_cpu, self.sched.lb_exec.unwrap_or(this_cpu));
                pulled += 1;
                rem -= w as i64;
                // CONFIG_PREEMPT: newidle stops after the first task (2.6.3x).
                if !generic && self.cfg.preemption() && idle == CpuIdleType::NewlyIdle {
                    break 'classes;
                }
                if rem <= 0 {
                    break 'classes;
                }
                this_best_prio = this_best_prio.min(self.sched.tasks[p].prio());
            }
        }
        *all_pinned = pinned;
        ((max_load_move as i64 - rem) as u64, pulled)
    }

    /// move_tasks() [sched_fair.c @2.6.35]: balance_tasks passes until the
    /// imbalance is moved or a pass moves nothing. Returns (moved?, tasks).
    #[allow(clippy::too_many_arguments)] // the kernel passes the same set
    pub(crate) fn move_tasks_avg(
        &mut self,
        this_cpu: usize,
        busiest: usize,
        max_load_move: u64,
        lvl: usize,
        idle: CpuIdleType,
        all_pinned: &mut bool,
        pass: Pass,
    ) -> (bool, u32) {
        let mut total = 0u64;
        let mut tasks = 0;
        loop {
            let rem = max_load_move.saturating_sub(total);
            let (moved, n) = self.balance_tasks_avg(this_cpu, busiest, rem, lvl, idle, all_pinned, pass);
            total += moved;
            tasks += n;
            if !self.lb_2625()
                && self.cfg.preemption()
                && idle == CpuIdleType::NewlyIdle
                && self.sched.rqs[this_cpu].nr_running > 0
            {
                break;
            }
            // 2.6.24/2.6.25's move_tasks is one walk over the classes.
            if moved == 0 || max_load_move <= total || self.lb_2625() {
                break;
            }
        }
        (total > 0, tasks)
    }
}
