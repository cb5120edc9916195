//! Models the scheduler's part of kernel/fork.c: copy_process() making
//! the task (its pid, comm, policy, weight, CPUs, its own random stream)
//! from the task group it belongs to. sched_fork(), the class's task_fork
//! and wake_up_new_task() are in sched/core.rs.

use crate::engine::rng::Rng;
use crate::prio::load_weight;
use crate::program::TaskGroup;
use crate::sched::env::SchedEnv;
use crate::sched::task::{LoadWeight, RtEntity, SchedEntity, Task, TaskId, TaskState, TaskStats};

impl SchedEnv {
    /// Start the allocated task `tid` after `start` (drawn from its own
    /// stream), counted from `phase` (measure.start_phase).
    pub fn schedule_start(&mut self, tid: TaskId, start: crate::engine::rng::Dist, phase: u64) {
        let at = start.sample(&mut self.sched.tasks[tid].rng) + phase;
        self.q.schedule(crate::engine::Instant(at), crate::engine::event::Ev::Start(tid));
    }

    /// Allocate a task (not yet runnable).
    pub fn alloc_task(&mut self, group: usize, template: Option<usize>, g: &TaskGroup, idx: usize) -> TaskId {
        let tid = self.sched.tasks.len();
        if self.sched.group_tasks.len() <= group {
            self.sched.group_tasks.resize(group + 1, 0);
        }
        self.sched.group_tasks[group] += 1;
        let (weight, inv_weight) =
            load_weight(g.policy, g.nice, self.cfg.mech.weight_idleprio, !self.cfg.mech.rt_push_pull());
        let pid = self.sched.next_pid;
        self.sched.next_pid += 1;
        let comm = if g.count > 1 || template.is_none() { format!("{}-{}", g.name, idx) } else { g.name.clone() };
        let comm: String = comm.chars().take(15).collect();
        if self.sched.group_masks.len() <= group {
            self.sched.group_masks.resize(group + 1, None);
        }
        let cpus = match &self.sched.group_masks[group] {
            Some(m) if **m == g.cpus => m.clone(),
            _ => {
                let m = std::sync::Arc::new(g.cpus.clone());
                self.sched.group_masks[group] = Some(m.clone());
                m
            }
        };
        self.sched.tasks.push(Task {
            pid,
            comm,
            group,
            idx: idx as u32,
            template,
            policy: g.policy,
            class: crate::prio::SchedClass::of_policy(g.policy),
            nice: g.nice,
            rt_priority: g.rt_priority,
            kthread: g.kthread,
            nr_cpus_allowed: g.cpus.weight(),
            cpus,
            state: TaskState::New,
            cpu: g.cpus.first().unwrap_or(0),
            tg: g.cgroup,
            se: SchedEntity { load: LoadWeight { weight, inv_weight }, ..SchedEntity::default() },
            rt: RtEntity::default(),
            dl: g.policy.is_dl().then(|| Box::new(crate::sched::deadline::setparam_dl(&g.dl))),
            pc: 0,
            loop_stack: Vec::new(),
            work_left: 0,
            memory_bound: g.memory_bound,
            mem_rate: 0,
            memstall: false,
            group_mem: (g.memory_bound, if self.membw.enabled() { g.memory_traffic } else { 0 }),
            runtime_end: None,
            cs_debt: 0,
            need_advance: true,
            op_done_owed: false,
            wake_pending: None,
            timer_next: None,
            ktask: None,
            worker: None,
            in_iowait: false,
            in_sys: false,
            throttled: false,
            throttle_work: false,
            rng: Rng::fork(self.seed, &format!("task:{}:{}", g.name, idx)),
            stats: TaskStats::default(),
            wakee_flips: 0,
            wakee_flip_decay_ts: 0,
            last_wakee: None,
            recent_used_cpu: 0,
            list_seq: 0,
        });
        tid
    }
}
