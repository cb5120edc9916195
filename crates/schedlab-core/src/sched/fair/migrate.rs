//! Which tasks the load balancer may move, and moving them (fair.c's
//! task_hot, can_migrate_task and detach_tasks): the cache-hot test, the
//! affinity and running checks with their LBF_* outcomes, and the walk of
//! cfs_tasks from the tail that detaches up to the imbalance.

use crate::kernel::features::Feature;
use crate::kernel::FairEra;
use crate::sched::env::SchedEnv;
use crate::sched::fair::balance::{LbEnv, MigrationType, SCHED_NR_MIGRATE_BREAK};
use crate::sched::sched::CpuIdleType;
use crate::sched::sd_flags::SD_SHARE_CPUCAPACITY;
use crate::sched::task::{SeId, TaskId};

impl SchedEnv {
    /// task_hot().
    pub(super) fn task_hot(&self, p: TaskId, env: &LbEnv) -> bool {
        let t = &self.sched.tasks[p];
        if t.is_idle_policy() {
            return false;
        }
        if self.cfg.mech.task_hot_smt_exempt && self.topo.domains[env.sd].flags & SD_SHARE_CPUCAPACITY != 0 {
            return false;
        }
        // cfs_rq_of(&p->se): in a cgroup, its group's cfs_rq, whose buddies
        // are the task entities (the root's are group entities).
        let src = self.cfs_rq(self.task_cfs_rq_on(p, env.src_cpu));
        if self.cfg.features.on(Feature::CACHE_HOT_BUDDY)
            && self.sched.rqs[env.dst_cpu].nr_running > 0
            && (src.next == Some(SeId::task(p)) || src.last == Some(SeId::task(p)))
        {
            return true;
        }
        let mc = self.cfg.sysctl.sched_migration_cost_ns;
        if mc == 0 {
            return false;
        }
        self.now.saturating_sub(t.se.exec_start) < mc
    }

    /// can_migrate_task(). The 6.14 refusals come first, before the
    /// affinity test, so they leave LBF_ALL_PINNED set.
    pub(super) fn can_migrate_task(&self, p: TaskId, env: &mut LbEnv, active: bool) -> bool {
        if self.sched.groups.bandwidth_used && self.throttled_lb_pair(p, env.src_cpu, env.dst_cpu) {
            return false;
        }
        let t = &self.sched.tasks[p];
        // 6.14: a sched_delayed task moves only to even out load. Active
        // balance's lb_env leaves migration_type at 0, migrate_load.
        if t.se.sched_delayed && self.cfg.mech.lb_skip_delayed && !active && env.migration_type != MigrationType::Load {
            return false;
        }
        if self.cfg.mech.lb_eligible_first && self.task_is_ineligible_on_dst_cpu(p, env) {
            return false;
        }
        if t.is_per_cpu_kthread() && self.cfg.mech.lb_skip_per_cpu_kthread {
            return false;
        }
        if !t.cpus.test(env.dst_cpu) {
            env.some_pinned = true;
            if env.idle == CpuIdleType::NewlyIdle || env.dst_pinned || active {
                return false;
            }
            let g = self.topo.cpu_local_group[env.dst_cpu][env.lvl];
            if let Some(&c) = self.topo.groups[g]
                .cpus
                .iter()
                .find(|&&c| c != env.dst_cpu && env.cpus.binary_search(&c).is_ok() && t.cpus.test(c))
            {
                env.dst_pinned = true;
                env.new_dst_cpu = c;
            }
            return false;
        }
        env.all_pinned = false;
        if self.sched.rqs[env.src_cpu].curr == Some(p) {
            return false;
        }
        if active {
            return true;
        }
        !self.task_hot(p, env)
            || self.sched.rqs[env.dst_cpu].sd[env.lvl].nr_balance_failed > self.topo.domains[env.sd].cache_nice_tries
    }

    /// 6.14: while the domain has had no balance failure, a task that is
    /// not eligible where it is stays there if the destination has fair
    /// tasks (task_is_ineligible_on_dst_cpu(): with PLACE_LAG it would take
    /// its negative lag along and be ineligible there too). In a cgroup
    /// both are its group's cfs_rqs: the destination's (nr_queued) and its
    /// own (entity_eligible).
    fn task_is_ineligible_on_dst_cpu(&self, p: TaskId, env: &LbEnv) -> bool {
        self.sched.rqs[env.dst_cpu].sd[env.lvl].nr_balance_failed == 0
            && self.cfg.mech.fair == FairEra::Eevdf
            && self.cfg.features.on(Feature::PLACE_LAG)
            && self.cfs_rq(self.task_cfs_rq_on(p, env.dst_cpu)).nr_running > 0
            && !self.entity_eligible::<true>(self.task_cfs_rq_on(p, env.src_cpu), SeId::task(p))
    }

    /// The source's cfs_tasks list from the tail (least recently run first).
    pub(super) fn cfs_tasks_tail_first(&self, cpu: usize) -> Vec<TaskId> {
        let mut v: Vec<TaskId> = self.rq_cfs_tasks(cpu);
        v.sort_by_key(|&t| self.sched.tasks[t].list_seq);
        v
    }

    /// detach_tasks() + attach_tasks(): returns the number moved.
    pub(super) fn detach_tasks(&mut self, env: &mut LbEnv) -> u32 {
        if env.imbalance <= 0 {
            return 0;
        }
        let src = env.src_cpu;
        let mut moved = 0;
        let lvl = env.lvl;
        let sd = env.sd;
        let failed = self.sched.rqs[env.dst_cpu].sd[lvl].nr_balance_failed;
        let cache_nice = self.topo.domains[sd].cache_nice_tries;
        for p in self.cfs_tasks_tail_first(src) {
            if env.idle != CpuIdleType::NotIdle && self.sched.rqs[src].nr_running <= 1 {
                break;
            }
            env.loop_ += 1;
            if env.loop_ > env.loop_max {
                break;
            }
            if env.loop_ > env.loop_break {
                env.loop_break += SCHED_NR_MIGRATE_BREAK;
                break;
            }
            if !self.can_migrate_task(p, env, false) {
                continue;
            }
            match env.migration_type {
                MigrationType::Load => {
                    let load = self.task_h_load(p).max(1);
                    if self.cfg.features.on(Feature::LB_MIN) && load < 16 && failed == 0 {
                        continue;
                    }
                    // 5.10+ relaxes by shifting with the failure count;
                    // 5.5 skipped tasks heavier than twice the imbalance until
                    // cache_nice_tries failures.
                    let too_big = if self.cfg.mech.lb_detach_shift {
                        (load >> failed.min(63)) as i64 > env.imbalance
                    } else {
                        (load / 2) as i64 > env.imbalance && failed <= cache_nice
                    };
                    if too_big {
                        continue;
                    }
                    env.imbalance -= load as i64;
                }
                MigrationType::Util => {
                    let util = self.sched.tasks[p].se.avg.util_avg;
                    let shifted = if self.cfg.mech.lb_util_shift { util >> failed.min(63) } else { util };
                    if shifted as i64 > env.imbalance {
                        continue;
                    }
                    env.imbalance -= util as i64;
                }
                MigrationType::Task | MigrationType::Misfit => env.imbalance -= 1,
            }
            if let Some(by) = env.view_by {
                self.lb_snap_record(by, src);
                self.lb_snap_record(by, env.dst_cpu);
            }
            self.move_queued_task(p, src, env.dst_cpu, self.sched.lb_exec.unwrap_or(env.dst_cpu));
            moved += 1;
            if env.idle == CpuIdleType::NewlyIdle && self.cfg.preemption() {
                break;
            }
            if env.imbalance <= 0 {
                break;
            }
        }
        moved
    }
}
