//! Models GRUB, the deadline class's bandwidth reclaiming (kernel/sched/
//! deadline.c, 4.13+: Luca Abeni's series), and the bandwidth bookkeeping
//! it rests on.
//!
//! - **Active and total bandwidth.** Each runqueue counts the bandwidth of
//!   its deadline entities (this_bw: every one of them, blocked ones too)
//!   and of the active ones (running_bw: queued, throttled, or blocked but
//!   not yet at their 0-lag time). A task that blocks stays active until
//!   its 0-lag time, deadline - runtime * period / dl_runtime: the inactive
//!   timer then takes its bandwidth off running_bw (task_non_contending).
//!   A task that leaves SCHED_DEADLINE or exits gives its bandwidth back to
//!   the root domain at that time, not before.
//! - **Reclaiming.** A SCHED_FLAG_RECLAIM task's budget is not charged
//!   the time it runs but that time scaled by the bandwidth that is
//!   active: dq = -max{u, Umax - Uinact - Uextra} / Umax dt (grub_reclaim),
//!   where Uinact = this_bw - running_bw and Uextra is this CPU's share of
//!   what admission control left unreserved. A lone reclaiming task thus
//!   runs up to Umax (95 %) of its CPU. Before 6.5 the equation applied
//!   Umax to the first term only (max{u / Umax, 1 - Uinact - Uextra}), so a
//!   task reclaimed less the smaller its own reservation.
//! - **The fair server** (6.12+) holds bandwidth too: its reservation is in
//!   this_bw and the root domain's total from boot, and in running_bw
//!   while it is started.
//!
//! - **Boot** leaves the fair servers' bandwidth in extra_bw: once each,
//!   evenly, from 6.17; on 6.12 .. 6.16 as that boot's order of events
//!   deducted it, several times over and most from the lowest CPUs
//!   (`dl_server_boot_leak`).
//!
//! Deviation: the boot of 6.12 .. 6.16 is taken as one root domain built
//! over every CPU after each CPU's server started while it was not yet
//! active; CPU hotplug and later root-domain rebuilds (cpusets) are not
//! modelled. schedutil does not see running_bw (its frequency floor for
//! deadline tasks, 4.16+): it sees deadline tasks through avg_dl.

use crate::engine::event::Ev;
use crate::engine::queue::EventKey;
use crate::engine::Instant;
use crate::sched::deadline::{to_ratio, BW_SHIFT, BW_UNIT};
use crate::sched::env::SchedEnv;
use crate::sched::task::{DlEntity, TaskId, TaskState};

/// RATIO_SHIFT: bw_ratio's fixed point (8 fractional bits).
pub const RATIO_SHIFT: u32 = 8;

impl crate::sched::dl_rq::DlRq {
    /// __add_running_bw().
    fn add_running_bw(&mut self, bw: u64) {
        self.running_bw = self.running_bw.wrapping_add(bw);
    }

    /// __sub_running_bw(): an underflow is clamped to 0 (with a warning
    /// in the kernel).
    fn sub_running_bw(&mut self, bw: u64) {
        self.running_bw = self.running_bw.saturating_sub(bw);
    }

    fn add_rq_bw(&mut self, bw: u64) {
        self.this_bw = self.this_bw.wrapping_add(bw);
    }

    /// __sub_rq_bw(): clamped as well.
    fn sub_rq_bw(&mut self, bw: u64) {
        self.this_bw = self.this_bw.saturating_sub(bw);
    }
}

/// What task_non_contending() reads of an entity.
struct Lag {
    deadline: u64,
    runtime: i64,
    dl_runtime: u64,
    dl_period: u64,
    dl_bw: u64,
    armed: bool,
}

impl DlEntity {
    fn lag(&self) -> Lag {
        Lag {
            deadline: self.deadline,
            runtime: self.runtime,
            dl_runtime: self.dl_runtime,
            dl_period: self.dl_period,
            dl_bw: self.dl_bw,
            armed: self.inactive_timer.is_some(),
        }
    }
}

/// The 0-lag time less now (task_non_contending()'s zerolag_time): the
/// instant the entity's remaining budget, spent at its reserved rate,
/// would have run out.
fn zerolag_delta(deadline: u64, runtime: i64, dl_runtime: u64, dl_period: u64, now: u64) -> i64 {
    // div64_long(runtime * dl_period, dl_runtime): signed, truncated.
    let lag = (runtime as i128 * dl_period as i128 / dl_runtime.max(1) as i128) as i64;
    (deadline as i64).wrapping_sub(lag).wrapping_sub(now as i64)
}

impl SchedEnv {
    /// init_dl_rq_bw_ratio() of every runqueue, then the fair servers'
    /// reservations (dl_server_apply_params(init)).
    pub fn init_dl_bw(&mut self) {
        if !self.cfg.mech.dl_grub {
            return;
        }
        let rt_runtime = self.cfg.sysctl.sched_rt_runtime_us;
        let period_ns = self.cfg.sysctl.sched_rt_period_us * 1000;
        let (bw_ratio, max_bw) = if rt_runtime < 0 {
            (1 << RATIO_SHIFT, BW_UNIT)
        } else {
            let runtime_ns = rt_runtime as u64 * 1000;
            (to_ratio(runtime_ns, period_ns) >> (BW_SHIFT - RATIO_SHIFT), to_ratio(period_ns, runtime_ns))
        };
        for rq in &mut self.sched.rqs {
            (rq.dl.bw_ratio, rq.dl.max_bw, rq.dl.extra_bw) = (bw_ratio, max_bw, max_bw);
        }
        let fs_bw = self.fair_server_bw();
        if fs_bw == 0 {
            return;
        }
        let nr = self.sched.rqs.len();
        for cpu in 0..nr {
            self.sched.rqs[cpu].dl.add_rq_bw(fs_bw);
        }
        if !self.cfg.mech.dl_server_boot_leak {
            // As after 6.17's boot: each server applied once over every CPU
            // (nr times dl_bw_add()'s share, at once: O(nr), not O(nr^2)).
            let share = (fs_bw as i32 / nr as i32) as u64;
            for rq in &mut self.sched.rqs {
                rq.dl.extra_bw = rq.dl.extra_bw.wrapping_sub(share.wrapping_mul(nr as u64));
            }
            return;
        }
        // 6.12 .. 6.16. CPU k's server is applied at its first fair
        // enqueue, in bring-up before CPU k is active: dl_bw_cpus() counts
        // CPUs 0..k-1 (CPU 0 alone for the boot CPU), whose extra_bw gives
        // up bw / that count. Then sched_init_smp() attaches each runqueue
        // j to the new root domain, whose span is CPUs 0..j by then, and
        // __dl_server_attach_root() adds the server again. CPU i thus
        // gives up share(k) for each later CPU k's start (and CPU 0 its
        // own, share(1)), and share(j + 1) for each attachment j >= i:
        // suffix sums, from the last CPU down.
        let share = |cpus: usize| (fs_bw as i32 / cpus as i32) as u64;
        let (mut starts, mut attaches) = (0u64, 0u64);
        for i in (0..nr).rev() {
            attaches = attaches.wrapping_add(share(i + 1));
            let own = if i == 0 { share(1) } else { 0 };
            let rq = &mut self.sched.rqs[i];
            rq.dl.extra_bw = rq.dl.extra_bw.wrapping_sub(starts.wrapping_add(attaches).wrapping_add(own));
            if i > 0 {
                starts = starts.wrapping_add(share(i));
            }
        }
    }

    /// __dl_add(): admitted bandwidth joins the root domain's total_bw;
    /// each CPU's extra_bw gives up its share ((s32)bw / cpus, as the
    /// kernel divides).
    ///
    /// Deviation: total_bw itself is not kept: admission is checked once,
    /// at load (check_dl_groups); extra_bw is what GRUB reads of it.
    pub(crate) fn dl_bw_add(&mut self, bw: u64) {
        let share = (bw as i32 / self.sched.rqs.len() as i32) as i64;
        for rq in &mut self.sched.rqs {
            rq.dl.extra_bw = rq.dl.extra_bw.wrapping_add(share.wrapping_neg() as u64);
        }
    }

    /// __dl_sub().
    pub(crate) fn dl_bw_sub(&mut self, bw: u64) {
        let share = (bw as i32 / self.sched.rqs.len() as i32) as i64;
        for rq in &mut self.sched.rqs {
            rq.dl.extra_bw = rq.dl.extra_bw.wrapping_add(share as u64);
        }
    }

    /// enqueue_dl_entity()'s ENQUEUE_RESTORE / migration: the task's
    /// bandwidth joins this runqueue's total and active bandwidth.
    pub(crate) fn dl_grub_attach(&mut self, cpu: usize, tid: TaskId) {
        let bw = self.dle(tid).dl_bw;
        let dl = &mut self.sched.rqs[cpu].dl;
        dl.add_rq_bw(bw);
        dl.add_running_bw(bw);
    }

    /// dequeue_dl_entity()'s DEQUEUE_SAVE / migration: it leaves them.
    pub(crate) fn dl_grub_detach(&mut self, cpu: usize, tid: TaskId) {
        let bw = self.dle(tid).dl_bw;
        let dl = &mut self.sched.rqs[cpu].dl;
        dl.sub_running_bw(bw);
        dl.sub_rq_bw(bw);
    }

    /// task_contending(): a waking task is active again; if its 0-lag
    /// time has not come, it never stopped being (the inactive timer is
    /// cancelled). A wakeup that moved it brings its bandwidth here.
    pub(crate) fn task_contending(&mut self, cpu: usize, tid: TaskId) {
        let d = self.dle_mut(tid);
        if d.dl_runtime == 0 {
            return;
        }
        let (bw, migrated, non_contending) = (d.dl_bw, d.wake_migrated, d.dl_non_contending);
        d.wake_migrated = false;
        if migrated {
            self.sched.rqs[cpu].dl.add_rq_bw(bw);
        }
        if non_contending {
            let d = self.dle_mut(tid);
            d.dl_non_contending = false;
            if let Some(key) = d.inactive_timer.take() {
                self.q.cancel(key);
            }
        } else {
            self.sched.rqs[cpu].dl.add_running_bw(bw);
        }
    }

    /// task_non_contending(): a task blocks (or exits). Past its 0-lag
    /// time its bandwidth leaves running_bw at once; else the inactive
    /// timer takes it off then.
    pub(crate) fn task_non_contending(&mut self, cpu: usize, tid: TaskId) {
        let d = self.dle(tid);
        if d.dl_runtime == 0 {
            return;
        }
        if let Some(key) = self.arm_inactive_timer(cpu, d.lag(), Ev::DlInactiveTimer(tid)) {
            let d = self.dle_mut(tid);
            d.dl_non_contending = true;
            d.inactive_timer = Some(key);
        }
    }

    /// task_non_contending()'s test for a task or the fair server (`lag`:
    /// its deadline, runtime, dl_runtime, dl_period, bandwidth and whether
    /// its inactive timer is armed): the timer's key if the 0-lag time is
    /// ahead, else None, its bandwidth off running_bw now.
    fn arm_inactive_timer(&mut self, cpu: usize, lag: Lag, ev: Ev) -> Option<EventKey> {
        let zerolag = zerolag_delta(lag.deadline, lag.runtime, lag.dl_runtime, lag.dl_period, self.now);
        if zerolag < 0 || lag.armed {
            self.sched.rqs[cpu].dl.sub_running_bw(lag.dl_bw);
            return None;
        }
        Some(self.q.schedule(Instant(self.now + zerolag as u64), ev))
    }

    /// inactive_task_timer(): the 0-lag time of a task that blocked, left
    /// SCHED_DEADLINE or exited: its bandwidth leaves running_bw, and the
    /// root domain if the task is no longer a deadline task.
    pub fn dl_inactive_timer(&mut self, tid: TaskId) {
        let t = &self.sched.tasks[tid];
        let (dead, is_dl, cpu) = (t.state == TaskState::Dead, t.policy.is_dl(), t.cpu);
        let Some(d) = self.sched.tasks[tid].dl.as_deref_mut() else { return };
        d.inactive_timer = None;
        let (bw, non_contending) = (d.dl_bw, d.dl_non_contending);
        d.dl_non_contending = false;
        if !is_dl || dead {
            if dead && non_contending {
                let dl = &mut self.sched.rqs[cpu].dl;
                dl.sub_running_bw(bw);
                dl.sub_rq_bw(bw);
            }
            self.dl_bw_sub(bw);
            return;
        }
        if non_contending {
            self.sched.rqs[cpu].dl.sub_running_bw(bw);
        }
    }

    /// migrate_task_rq_dl(): a waking task moves; its bandwidth leaves the
    /// old runqueue (task_contending() adds it to the new one).
    pub(crate) fn migrate_task_rq_dl(&mut self, tid: TaskId, old: usize) {
        if !self.cfg.mech.dl_grub || self.sched.tasks[tid].state != TaskState::Blocked {
            return; // a queued task's move is a dequeue and an enqueue
        }
        let d = self.dle_mut(tid);
        let bw = d.dl_bw;
        d.wake_migrated = true;
        if d.dl_non_contending {
            d.dl_non_contending = false;
            if let Some(key) = d.inactive_timer.take() {
                self.q.cancel(key);
            }
            self.sched.rqs[old].dl.sub_running_bw(bw);
        }
        self.sched.rqs[old].dl.sub_rq_bw(bw);
    }

    /// task_dead: a task that exited past its 0-lag time gives its
    /// bandwidth back now (task_non_contending() with TASK_DEAD); one
    /// still before it, at the inactive timer.
    pub(crate) fn dl_grub_task_dead(&mut self, cpu: usize, tid: TaskId) {
        let d = self.dle(tid);
        if d.dl_non_contending {
            return;
        }
        let bw = d.dl_bw;
        self.sched.rqs[cpu].dl.sub_rq_bw(bw);
        self.dl_bw_sub(bw);
    }

    /// sched_setattr() of a task becoming SCHED_DEADLINE (sched_dl_overflow):
    /// its bandwidth joins the root domain; a previous reservation still
    /// waiting for its 0-lag time (it left SCHED_DEADLINE) goes.
    pub(crate) fn dl_grub_setattr(&mut self, old: Option<&crate::sched::task::DlEntity>, was_dl: bool, new_bw: u64) {
        if let Some(o) = old {
            if was_dl {
                self.dl_bw_sub(o.dl_bw);
            } else if let Some(key) = o.inactive_timer {
                self.q.cancel(key);
                self.dl_bw_sub(o.dl_bw);
            }
        }
        self.dl_bw_add(new_bw);
    }

    /// switched_from_dl(): a running task left SCHED_DEADLINE (its
    /// bandwidth already left the runqueue as it was dequeued); the root
    /// domain keeps it until its 0-lag time.
    pub(crate) fn switched_from_dl(&mut self, tid: TaskId) {
        let now = self.now;
        let d = self.dle(tid);
        let zerolag = zerolag_delta(d.deadline, d.runtime, d.dl_runtime, d.dl_period, now);
        if zerolag < 0 {
            let bw = d.dl_bw;
            self.dl_bw_sub(bw);
            return;
        }
        let key = self.q.schedule(Instant(now + zerolag as u64), Ev::DlInactiveTimer(tid));
        self.dle_mut(tid).inactive_timer = Some(key);
    }

    /// grub_reclaim(): the budget a SCHED_FLAG_RECLAIM task pays for
    /// `delta` of running on `cpu`.
    pub(crate) fn grub_reclaim(&self, cpu: usize, delta: u64, dl_bw: u64) -> u64 {
        let dl = &self.sched.rqs[cpu].dl;
        let u_inact = dl.this_bw.wrapping_sub(dl.running_bw);
        let u_act = if self.cfg.mech.dl_grub_max_bw {
            let u = if u_inact.wrapping_add(dl.extra_bw) > dl.max_bw.wrapping_sub(dl_bw) {
                dl_bw
            } else {
                dl.max_bw.wrapping_sub(u_inact).wrapping_sub(dl.extra_bw)
            };
            u.wrapping_mul(dl.bw_ratio) >> RATIO_SHIFT
        } else {
            let u_act_min = dl_bw.wrapping_mul(dl.bw_ratio) >> RATIO_SHIFT;
            if u_inact.wrapping_add(dl.extra_bw) > BW_UNIT.wrapping_sub(u_act_min) {
                u_act_min
            } else {
                BW_UNIT.wrapping_sub(u_inact).wrapping_sub(dl.extra_bw)
            }
        };
        delta.wrapping_mul(u_act) >> BW_SHIFT
    }

    // ------------------------------------------------------ the fair server

    /// task_contending() of the fair server, as dl_server_start() queues it.
    pub(crate) fn fs_contending(&mut self, cpu: usize) {
        if !self.cfg.mech.dl_grub {
            return;
        }
        let dl = &mut self.sched.rqs[cpu].dl;
        if dl.fs.dl.dl_non_contending {
            dl.fs.dl.dl_non_contending = false;
            if let Some(key) = dl.fs.dl.inactive_timer.take() {
                self.q.cancel(key);
            }
        } else {
            let bw = dl.fs.dl.dl_bw;
            dl.add_running_bw(bw);
        }
    }

    /// task_non_contending() of the fair server, as dl_server_stop()
    /// dequeues it.
    pub(crate) fn fs_non_contending(&mut self, cpu: usize) {
        if !self.cfg.mech.dl_grub {
            return;
        }
        let lag = self.sched.rqs[cpu].dl.fs.dl.lag();
        if let Some(key) = self.arm_inactive_timer(cpu, lag, Ev::DlServerInactiveTimer(cpu)) {
            let d = &mut self.sched.rqs[cpu].dl.fs.dl;
            d.dl_non_contending = true;
            d.inactive_timer = Some(key);
        }
    }

    /// inactive_task_timer() of the fair server.
    pub fn dl_server_inactive_timer(&mut self, cpu: usize) {
        let dl = &mut self.sched.rqs[cpu].dl;
        dl.fs.dl.inactive_timer = None;
        if dl.fs.dl.dl_non_contending {
            dl.fs.dl.dl_non_contending = false;
            let bw = dl.fs.dl.dl_bw;
            dl.sub_running_bw(bw);
        }
    }
}

impl SchedEnv {
    /// The invariant checker's view of GRUB: each runqueue's this_bw and
    /// running_bw are the sums over its entities in those states (the
    /// kernel's SCHED_WARN_ON(running_bw > this_bw) and more). None: they
    /// agree.
    pub fn check_dl_bw(&self) -> Option<String> {
        if !self.cfg.mech.dl_grub {
            return None;
        }
        let nr = self.sched.rqs.len();
        let fs_bw = self.fair_server_bw();
        let (mut this, mut running) = (vec![fs_bw; nr], vec![0u64; nr]);
        for (cpu, rq) in self.sched.rqs.iter().enumerate() {
            let fs = &rq.dl.fs;
            if fs.active || fs.dl.dl_non_contending {
                running[cpu] += fs.dl.dl_bw;
            }
        }
        for t in &self.sched.tasks {
            let Some(d) = t.dl.as_deref() else { continue };
            let live = t.policy.is_dl() && matches!(t.state, TaskState::Runnable | TaskState::Blocked);
            if live || (t.state == TaskState::Dead && d.dl_non_contending) {
                this[t.cpu] += d.dl_bw;
            }
            if (live && t.state == TaskState::Runnable) || d.dl_non_contending {
                running[t.cpu] += d.dl_bw;
            }
        }
        let rqs = self.sched.rqs.iter().enumerate();
        rqs.map(|(cpu, rq)| (cpu, &rq.dl))
            .find(|&(cpu, dl)| (dl.this_bw, dl.running_bw) != (this[cpu], running[cpu]))
            .map(|(cpu, dl)| {
                format!(
                    "CPU {cpu}: this_bw {} running_bw {}, its deadline entities sum to {} and {}",
                    dl.this_bw, dl.running_bw, this[cpu], running[cpu]
                )
            })
    }
}
