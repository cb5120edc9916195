//! Models the part of kernel/sched/syscalls.c (core.c before 6.10) a task
//! uses on itself: sched_setscheduler(), setpriority() and
//! sched_setaffinity() of the running task, as schedlab's real-kernel
//! runner's threads set their attributes before its start gate
//! (workload/start.rs), and as rt-migrate-test's rotating thread pins
//! itself (workload/interp.rs); and what sched_setattr() refuses of a
//! SCHED_DEADLINE reservation (__checkparam_dl, sched_dl_overflow),
//! checked when the scenario loads.

use crate::cpumask::CpuMask;
use crate::error::{Result, SimError};
use crate::kernel::KernelConfig;
use crate::prio::{load_weight, Policy, SCHED_FLAG_DL_OVERRUN, SCHED_FLAG_RECLAIM};
use crate::program::{Op, TaskGroup};
use crate::sched::class::{SchedClass, ENQUEUE_HEAD};
use crate::sched::deadline::{setparam_dl, to_ratio, BW_UNIT, DL_SCALE};
use crate::sched::env::SchedEnv;
use crate::sched::pelt;
use crate::sched::sd_flags::SD_BALANCE_EXEC;
use crate::sched::task::{DlAttr, TaskId};

impl SchedEnv {
    /// __sched_setscheduler() and set_user_nice() of the running task `tid`:
    /// out of its class's queue, the new policy, priority, nice and the
    /// weight they give, back in (at the head, as ENQUEUE_RESTORE keeps
    /// its place); check_class_changed(): leaving the fair class detaches
    /// its load and utilisation from the cfs_rq (switched_from_fair), and a
    /// task whose priority fell reschedules.
    ///
    /// Deviation: put_prev_task()/set_next_task() around the change are not
    /// called (the model's dequeue and enqueue of a running task keep it
    /// current, as set_cpus_allowed_curr does); a fair task's new weight
    /// reaches the cfs_rq's load average as its PELT updates, where
    /// reweight_entity() re-adds its contribution at once.
    pub fn sched_setattr_curr(&mut self, tid: TaskId, policy: Policy, nice: i32, rt_priority: u32, dl: DlAttr) {
        let t = &self.sched.tasks[tid];
        let same_dl = !policy.is_dl()
            || t.dl.as_deref().is_some_and(|d| {
                let n = crate::sched::deadline::setparam_dl(&dl);
                (d.dl_runtime, d.dl_deadline, d.dl_period, d.flags)
                    == (n.dl_runtime, n.dl_deadline, n.dl_period, n.flags)
            });
        if (t.policy, t.nice, t.rt_priority) == (policy, nice, rt_priority) && same_dl {
            return;
        }
        let cpu = t.cpu;
        debug_assert!(self.sched.rqs[cpu].curr == Some(tid));
        let (old_prio, old_class) = (t.prio(), t.sched_class());
        self.update_curr(cpu);
        old_class.dequeue_task(self, cpu, tid, 0);
        let (weight, inv_weight) =
            load_weight(policy, nice, self.cfg.mech.weight_idleprio, !self.cfg.mech.rt_push_pull());
        let was_rt = self.sched.tasks[tid].policy.is_rt();
        let was_dl = self.sched.tasks[tid].policy.is_dl();
        if policy.is_dl() {
            // __setparam_dl(); its first instance is set up as it is queued
            // back (ENQUEUE_RESTORE with a deadline in the past).
            let old = self.sched.tasks[tid].dl.take();
            let mut e = crate::sched::deadline::setparam_dl(&dl);
            if self.cfg.mech.dl_grub {
                self.dl_grub_setattr(old.as_deref(), was_dl, e.dl_bw);
            }
            if let Some(o) = old {
                e.deadline = o.deadline;
            }
            self.sched.tasks[tid].dl = Some(Box::new(e));
        }
        let t = &mut self.sched.tasks[tid];
        (t.policy, t.nice, t.rt_priority) = (policy, nice, rt_priority);
        t.class = SchedClass::of_policy(policy);
        t.se.load = crate::sched::task::LoadWeight { weight, inv_weight };
        let new_class = t.sched_class();
        if old_class == SchedClass::Fair && new_class != SchedClass::Fair && t.se.attached {
            let se_avg = t.se.avg;
            t.se.attached = false;
            let cfs_rq = self.task_cfs_rq_on(tid, cpu);
            self.update_load_avg::<true>(cfs_rq, None);
            pelt::detach_entity(&mut self.cfs_rq_mut(cfs_rq).avg, &se_avg, weight as u64);
            self.update_tg_load_avg(cfs_rq);
        }
        match (was_rt, policy.is_rt()) {
            (false, true) => {
                // __sched_fork() gave every task a full RR slice.
                self.sched.rt_nr_tasks += 1;
                let t = &mut self.sched.tasks[tid];
                if t.rt.time_slice == 0 {
                    t.rt.time_slice = self.tun.sched_rr_timeslice;
                }
            }
            (true, false) => self.sched.rt_nr_tasks -= 1,
            _ => {}
        }
        match (was_dl, policy.is_dl()) {
            (false, true) => self.sched.dl_nr_tasks += 1,
            (true, false) => {
                self.sched.dl_nr_tasks -= 1;
                if self.cfg.mech.dl_grub {
                    self.switched_from_dl(tid);
                }
            }
            _ => {}
        }
        new_class.enqueue_task(self, cpu, tid, ENQUEUE_HEAD);
        if self.sched.tasks[tid].prio() > old_prio {
            self.resched_curr(cpu);
        }
    }

    /// sched_setaffinity() of the running task `tid`: its new mask; when
    /// its CPU has left it, affine_move_task() has the stopper
    /// (migration_cpu_stop) move it to cpumask_any_and_distribute() of the
    /// mask, where it goes on. Returns false when it moved.
    pub fn sched_setaffinity_curr(&mut self, tid: TaskId, mask: CpuMask) -> bool {
        let cpu = self.sched.tasks[tid].cpu;
        let stays = mask.test(cpu);
        let dest = if stays { cpu } else { self.cpumask_any_and_distribute(cpu, &mask) };
        self.set_cpus_allowed_curr(tid, mask);
        if !stays {
            self.affine_move_task(tid, dest);
        }
        stays
    }

    /// sched_exec() of the running task `tid` at execve(), "the best
    /// balancing opportunity, because at this point the task has the
    /// smallest effective memory and cache footprint": a fair task is
    /// placed as a new task would be, from the highest domain with
    /// SD_BALANCE_EXEC, and if that is another CPU the stopper moves it
    /// there (migration_cpu_stop). Returns false when it moved.
    pub fn sched_exec(&mut self, tid: TaskId) -> bool {
        let cpu = self.sched.tasks[tid].cpu;
        if self.sched.tasks[tid].sched_class() != SchedClass::Fair {
            // The RT and deadline classes balance only wakeups and forks.
            return true;
        }
        let dest = self.select_task_rq_balance(tid, cpu, SD_BALANCE_EXEC);
        if dest == cpu {
            return true;
        }
        self.affine_move_task(tid, dest);
        false
    }

    /// affine_move_task() of the running task `tid` to `dest`: the stopper
    /// preempts it and moves it; it goes on with its program there.
    pub fn affine_move_task(&mut self, tid: TaskId, dest: usize) {
        let cpu = self.sched.tasks[tid].cpu;
        self.sched.tasks[tid].need_advance = true;
        self.sched.tasks[tid].cs_debt += 2 * self.cfg.costs.context_switch_ns;
        self.stopper_preempt_curr(cpu, tid);
        self.move_queued_task(tid, cpu, dest, cpu);
        self.resched_curr(cpu);
    }

    /// cpumask_any_and_distribute() called on `cpu`: the next CPU of `mask`
    /// after the one this CPU chose last (the first choice skips CPU 0).
    pub(crate) fn cpumask_any_and_distribute(&mut self, cpu: usize, mask: &CpuMask) -> usize {
        let nr = self.sched.rqs.len();
        if self.sched.distribute_cpu_mask_prev.len() < nr {
            self.sched.distribute_cpu_mask_prev.resize(nr, 0);
        }
        let prev = self.sched.distribute_cpu_mask_prev[cpu];
        let next = (1..=nr).map(|i| (prev + i) % nr).find(|&c| mask.test(c)).unwrap_or(prev);
        self.sched.distribute_cpu_mask_prev[cpu] = next;
        next
    }
}

// ------------------------------------------- sched_setattr(SCHED_DEADLINE)

/// sysctl_sched_dl_period_min / _max (us): 100 us and 2^22 us (~4.2 s).
pub const DL_PERIOD_MIN_US: u64 = 100;
pub const DL_PERIOD_MAX_US: u64 = 1 << 22;

/// __checkparam_dl(): None if sched_setattr() takes the parameters, else
/// the rule they break (the syscall's EINVAL). `period_limits`: the
/// sysctl bounds on the period (mech `dl_period_limits`).
pub fn checkparam_dl(a: &DlAttr, period_limits: bool) -> Option<&'static str> {
    if a.deadline == 0 {
        return Some("sched_deadline must not be 0");
    }
    if a.runtime < 1 << DL_SCALE {
        return Some("sched_runtime must be at least 1024 ns (2^DL_SCALE)");
    }
    if a.deadline & 1 << 63 != 0 || a.period & 1 << 63 != 0 {
        return Some("sched_deadline and sched_period must be below 2^63 ns");
    }
    let period = if a.period == 0 { a.deadline } else { a.period };
    if period < a.deadline || a.deadline < a.runtime {
        return Some("sched_runtime <= sched_deadline <= sched_period must hold");
    }
    if period_limits && !(DL_PERIOD_MIN_US * 1000..=DL_PERIOD_MAX_US * 1000).contains(&period) {
        return Some("the period must be within sched_deadline_period_min_us (100) and _max_us (4194304)");
    }
    None
}

/// What sched_setattr() makes of the scenario's SCHED_DEADLINE groups on
/// this kernel, checked at load with its errors: the policy exists
/// (3.14+); each group's parameters pass __checkparam_dl (EINVAL); the
/// task may run on the whole root domain (EPERM: a deadline task's
/// affinity cannot be narrowed); it does not fork (sched_fork()'s EAGAIN);
/// it is started by the scenario, so that admission sees it; and the sum
/// of the bandwidths fits the root domain's share, sched_rt_runtime_us
/// over sched_rt_period_us of each CPU, less the fair servers' (6.12+)
/// (sched_dl_overflow()'s EBUSY).
/// `groups[i]` is `[[task]]` `i`.
///
/// Deviation: the kernel checks at each sched_setattr() against the
/// bandwidth admitted so far (and releases a task's at its 0-lag time);
/// the model checks every deadline task the scenario starts at once, at
/// load, which is the same sum for tasks that all live to the end.
pub(crate) fn check_dl_groups(groups: &[TaskGroup], file: &str, kernel: &KernelConfig, nr_cpus: usize) -> Result<()> {
    let mut total: u128 = 0;
    let mut first = None;
    for (i, g) in groups.iter().enumerate().filter(|(_, g)| g.policy.is_dl() && !g.kthread) {
        let k = |s: &str| format!("task[{i}].{s}");
        if !kernel.mech.sched_deadline {
            return Err(SimError::bad_value(
                file,
                &k("policy"),
                format!("SCHED_DEADLINE on Linux {}", kernel.version),
                "SCHED_DEADLINE on 3.14 or later",
            ));
        }
        if let Some(why) = checkparam_dl(&g.dl, kernel.mech.dl_period_limits) {
            return Err(SimError::bad_value(
                file,
                &k("sched_runtime"),
                format!(
                    "runtime {} ns, deadline {} ns, period {} ns: {why} (sched_setattr() fails with EINVAL)",
                    g.dl.runtime, g.dl.deadline, g.dl.period
                ),
                "parameters __checkparam_dl() accepts",
            ));
        }
        for (flag, name, on, since) in [
            (SCHED_FLAG_RECLAIM, "SCHED_FLAG_RECLAIM", kernel.mech.dl_grub, "4.13"),
            (SCHED_FLAG_DL_OVERRUN, "SCHED_FLAG_DL_OVERRUN", kernel.mech.dl_overrun, "4.16"),
        ] {
            if g.dl.flags & flag != 0 && !on {
                return Err(SimError::bad_value(
                    file,
                    &k("sched_flags"),
                    format!("{name} on Linux {} (sched_setattr() fails with EINVAL)", kernel.version),
                    format!("{name} on {since} or later"),
                ));
            }
        }
        if g.cpus.weight() != nr_cpus {
            return Err(SimError::bad_value(
                file,
                &k("cpus"),
                "a SCHED_DEADLINE task on part of the machine (sched_setattr() fails with EPERM)",
                "no `cpus` for SCHED_DEADLINE tasks: their affinity must be the whole root domain",
            ));
        }
        if g.program.ops.iter().any(|op| matches!(op, Op::Fork(_))) {
            return Err(SimError::bad_value(
                file,
                &k("program"),
                "a fork op in a SCHED_DEADLINE task (fork() fails with EAGAIN)",
                "SCHED_DEADLINE tasks that do not fork",
            ));
        }
        let forked = |h: &TaskGroup| h.program.ops.iter().any(|op| matches!(op, Op::Fork(j) if *j == i));
        if g.count == 0 && !groups.iter().any(forked) {
            continue; // absent
        }
        if g.count == 0 {
            return Err(SimError::bad_value(
                file,
                &k("count"),
                "a SCHED_DEADLINE group started only by fork ops",
                "count >= 1: admission control is checked for the tasks the scenario starts",
            ));
        }
        total += setparam_dl(&g.dl).dl_bw as u128 * g.count as u128;
        first.get_or_insert(i);
    }
    let Some(first) = first else { return Ok(()) };
    // dl_b->bw: to_ratio(global_rt_period, global_rt_runtime), -1 (no
    // limit) with sched_rt_runtime_us = -1; __dl_overflow() compares
    // cap_scale(bw, capacity) with the total (every CPU at 1024 here).
    let rt_runtime = kernel.sysctl.sched_rt_runtime_us;
    if rt_runtime < 0 {
        return Ok(());
    }
    let bw = to_ratio(kernel.sysctl.sched_rt_period_us, rt_runtime as u64) as u128;
    let cap = bw * nr_cpus as u128;
    // From 6.12 each CPU's fair server holds its share of it.
    let t = &kernel.sysctl;
    let fair = if kernel.mech.fair_server {
        to_ratio(t.sched_fair_server_period_ns, t.sched_fair_server_runtime_ns) as u128 * nr_cpus as u128
    } else {
        0
    };
    let cap = cap.saturating_sub(fair);
    if total > cap {
        return Err(SimError::bad_value(
            file,
            &format!("task[{first}].sched_runtime"),
            format!(
                "the SCHED_DEADLINE tasks ask for {:.3} CPUs (the sum of runtime / period) where the root domain \
                 admits {:.3} (sched_rt_runtime_us / sched_rt_period_us of {nr_cpus} CPUs): sched_setattr() \
                 fails with EBUSY",
                total as f64 / BW_UNIT as f64,
                cap as f64 / BW_UNIT as f64
            ),
            "deadline tasks whose bandwidths fit the root domain",
        ));
    }
    Ok(())
}
