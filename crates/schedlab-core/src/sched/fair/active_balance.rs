//! Active balance (fair.c): when load_balance() keeps failing to move a
//! task it may not pull (the task runs there), it wakes the busiest CPU's
//! stopper, which pushes its running task away: need_active_balance, the
//! kick, and active_load_balance_cpu_stop.

use crate::engine::event::Ev;
use crate::engine::Instant;
use crate::sched::env::SchedEnv;
use crate::sched::fair::balance::{LbEnv, MigrationType};
use crate::sched::sched::CpuIdleType;

impl SchedEnv {
    /// Mark `busiest` for active balance towards `this_cpu` and queue the
    /// stopper there (stop_one_cpu_nowait), unless one is already pending.
    /// Returns true if this call kicked it.
    pub(crate) fn kick_active_balance(&mut self, busiest: usize, this_cpu: usize) -> bool {
        if self.sched.rqs[busiest].active_balance {
            return false;
        }
        self.sched.rqs[busiest].active_balance = true;
        self.sched.rqs[busiest].push_cpu = this_cpu;
        let at = self.now + if busiest != this_cpu { self.cfg.costs.wakeup_ipi_ns } else { 0 };
        self.q.schedule(Instant(at), Ev::ActiveBalance(busiest));
        true
    }

    /// need_active_balance() (5.5: voluntary cases, then the failure count).
    /// need_active_balance(): 5.5 kicks the stopper after enough failures
    /// whatever the migration type; since "sched/fair: Reduce cases for
    /// active balance" (Vincent Guittot, believed v5.12, unverified) only a
    /// migrate_task imbalance does (docs/LINUX-FACTS.md §3.9, @6.12).
    pub(super) fn need_active_balance(&self, env: &LbEnv) -> bool {
        // The idle dst may take the only fair task of a CPU whose capacity
        // other classes (RT) took away.
        if env.idle != CpuIdleType::NotIdle
            && self.lb_h_nr_running(env.src_cpu) == 1
            && self.check_cpu_capacity(env.src_cpu, env.sd)
            && self.capacity_of(env.src_cpu) * (self.topo.domains[env.sd].imbalance_pct as u64)
                < self.capacity_of(env.dst_cpu) * 100
        {
            return true;
        }
        if env.migration_type == MigrationType::Misfit {
            return true;
        }
        if self.cfg.mech.alb_migrate_task_only && env.migration_type != MigrationType::Task {
            return false;
        }
        let failed = self.sched.rqs[env.dst_cpu].sd[env.lvl].nr_balance_failed;
        failed > self.topo.domains[env.sd].cache_nice_tries + 2
    }

    pub fn active_load_balance_cpu_stop(&mut self, busiest: usize) {
        let had_curr = self.sched.rqs[busiest].curr.is_some();
        if self.avg_load_era() {
            self.active_load_balance_cpu_stop_avg(busiest); // balance_avg.rs
        } else {
            self.active_load_balance_cpu_stop_gt(busiest);
        }
        // Unless it preempted the task it moved (schedule() then switches
        // away from it), the stopper has slept again unseen by the trace.
        if !(had_curr && self.sched.rqs[busiest].curr.is_none()) {
            self.sched.rqs[busiest].stopper_running = false;
        }
    }

    /// active_load_balance_cpu_stop() of the group-type era.
    pub(super) fn active_load_balance_cpu_stop_gt(&mut self, busiest: usize) {
        let Some(target) = self.stopper_enter(busiest) else { return };
        if self.sched.cfs_rqs[busiest].h_nr_running == 0 {
            return;
        }
        let Some(lvl) = self.topo.cpu_domains[target]
            .iter()
            .position(|&d| self.topo.domains[d].span.binary_search(&busiest).is_ok())
        else {
            return;
        };
        let sd = self.topo.cpu_domains[target][lvl];
        self.sched.rqs[target].sd[lvl].stats.alb_count += 1;
        let mut env = LbEnv {
            sd,
            lvl,
            dst_cpu: target,
            src_cpu: busiest,
            idle: CpuIdleType::Idle,
            imbalance: 1,
            migration_type: MigrationType::Task,
            cpus: Vec::new(),
            all_pinned: false,
            some_pinned: false,
            dst_pinned: false,
            new_dst_cpu: target,
            // The stopper runs as a task, not at the tick's instant.
            view_by: None,
            loop_: 0,
            loop_max: 0,
            loop_break: 0,
        };
        // detach_one_task(): the stopper is running, so the preempted task
        // is no longer "running" and may go.
        let curr = self.sched.rqs[busiest].curr;
        // detach_one_task() walks cfs_tasks from the tail: the least
        // recently run task first, the just-preempted one last.
        let cand = self.cfs_tasks_tail_first(busiest);
        for p in cand {
            let is_curr = Some(p) == curr;
            if !self.sched.tasks[p].cpus.test(target) {
                continue;
            }
            if !is_curr && !self.can_migrate_task(p, &mut env, true) {
                continue;
            }
            if is_curr {
                self.stopper_preempt_curr(busiest, p);
            }
            self.move_queued_task(p, busiest, target, busiest);
            self.sched.rqs[target].sd[lvl].stats.alb_pushed += 1;
            self.sched.rqs[target].sd[lvl].nr_balance_failed = 0;
            self.resched_curr(busiest);
            return;
        }
        self.sched.rqs[target].sd[lvl].stats.alb_failed += 1;
    }
}
