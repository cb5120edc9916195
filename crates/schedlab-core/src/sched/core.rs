//! Models kernel/sched/core.c: schedule() and the class order,
//! try_to_wake_up() and wake_up_new_task(), the context switch, the
//! scheduler tick, resched, set_task_cpu() and the queued-task move, and
//! the syscalls the workload makes (block, exit, sched_setaffinity).
//!
//! The core calls the scheduling classes only through their operations
//! table (`sched/class.rs`); it never branches on a class.

use crate::cpumask::CpuMask;
use crate::engine::event::Ev;
use crate::engine::rng::Rng;
use crate::engine::time::{Instant, NSEC_PER_SEC};
use crate::kernel::{BalancerEra, RtBalance};
use crate::sched::class::{
    DlSchedClass, FairSchedClass, IdleSchedClass, Pick, RtSchedClass, SchedClass, SchedClassOps, StopSchedClass,
    WakeSource, DEQUEUE_SLEEP, ENQUEUE_DELAYED, ENQUEUE_HEAD, ENQUEUE_INITIAL, ENQUEUE_WAKEUP, WF_FORK, WF_SYNC,
    WF_TTWU,
};
use crate::sched::env::SchedEnv;
use crate::sched::sched::Rq;
use crate::sched::task::{Task, TaskId, TaskState};
use crate::trace::Ctx;

/// What runs on a CPU for a trace line: the stopper while it has the CPU,
/// else the current task or the idle task.
fn trace_ctx<'a>(rq: &Rq, tasks: &'a [Task]) -> Ctx<'a> {
    if rq.stopper_running {
        return Ctx::Stopper;
    }
    rq.curr.map(|c| &tasks[c]).into()
}

/// What `schedule_pick` did on a CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Switch {
    /// The current task keeps running.
    Stay,
    /// The CPU went idle (prev's side is finished).
    Idle,
    /// `next` is current now (set_next_task has run); the switch to it
    /// goes on with `context_switch` and `schedule_finish`.
    To { prev: Option<TaskId>, next: TaskId, class: SchedClass, stopper: bool },
}

impl SchedEnv {
    // ------------------------------------------------------ resched / tick

    /// resched_curr(): mark the CPU; schedule() runs when the current event
    /// is done (Deviation: the reschedule IPI's latency is charged to the
    /// wakee instead of delaying the switch).
    pub fn resched_curr(&mut self, cpu: usize) {
        if !self.sched.rqs[cpu].need_resched {
            self.sched.rqs[cpu].need_resched = true;
            self.sched.resched_pending.push(cpu);
        }
    }

    /// Start the periodic tick on a CPU that became busy, aligned to the
    /// jiffy grid (sched_skew_tick=0: all CPUs tick together).
    /// Deviation: ticks of one instant run one after the other in a fixed
    /// order (CPU 0's first); the kernel's CPUs run them at once and race
    /// for shared locks (a group's cfs_b->lock: which CPU draws the last
    /// slice of a pool, docs/models/sched-fair.md).
    #[inline]
    pub fn tick_restart(&mut self, cpu: usize) {
        if self.sched.rqs[cpu].tick_key.is_some() {
            return;
        }
        let tick = self.cfg.tick_ns;
        let next = (self.now / tick + 1) * tick;
        self.sched.rqs[cpu].tick_key = Some(self.q.schedule(Instant(next), Ev::Tick(cpu)));
    }

    /// The next expiry of a periodic hrtimer that is forwarded from an
    /// expiry of 0, never restarted from now (hrtimer_forward_now(): the
    /// cfs_b and rt_bandwidth period timers): a grid of whole periods of
    /// CLOCK_MONOTONIC. The model's time 0 lies on the jiffy grid, which
    /// the boot CPU laid at ktime_get() when its tick device came up
    /// (tick_setup_device(): tick_next_period), so the two grids keep a
    /// phase that differs from boot to boot: drawn from the seed, uniform
    /// over a second. Until 2026-11-29 it was 0: every period began on a
    /// tick, and the tick ran first. `kernel.tick_next_period` sets it.
    pub(crate) fn hrtimer_period_next(&self, period: u64) -> u64 {
        let boot = match self.cfg.tick_next_period_ns {
            Some(ns) => ns,
            None => Rng::fork(self.seed, "tick_next_period").range(0, NSEC_PER_SEC),
        };
        ((self.now + boot) / period + 1) * period - boot
    }

    /// sched_tick(): runs every 1/HZ on busy CPUs (NO_HZ_IDLE stops it on
    /// idle ones). This is the tick's hard-interrupt part; it returns
    /// whether the CPU's balance is due (trigger_load_balance), or None on
    /// an idle CPU, where the tick is done. The softirqs follow in
    /// `sim/schedule.rs`: TIMER_SOFTIRQ (expired timers), then
    /// `run_tick_softirq` here (SCHED_SOFTIRQ).
    pub(crate) fn scheduler_tick(&mut self, cpu: usize) -> Option<bool> {
        self.sched.rqs[cpu].tick_key = None;
        let Some(curr) = self.sched.rqs[cpu].curr else {
            // Idle: the tick is stopped (nohz); the idle CPU is balanced by
            // the ILB on its behalf.
            if self.cfg.mech.balancer == BalancerEra::AvgLoad {
                // avg_load era: the NOHZ owner keeps ticking (balance_avg.rs).
                self.scheduler_tick_idle_avg(cpu);
                return None;
            }
            self.nohz_balance_enter_idle(cpu);
            return None;
        };
        self.update_curr(cpu);
        if self.cfg.mech.balancer == BalancerEra::AvgLoad {
            self.update_cpu_load(cpu); // avg_load era (balance_avg.rs)
        }
        self.sched.tasks[curr].sched_class().task_tick(self, cpu, curr);
        self.cpufreq_update_util(cpu, false); // sched/cpufreq.rs
                                              // trigger_load_balance() runs in the tick's hard interrupt: its
                                              // nohz_balancer_kick() sees the runqueue before any timer softirq
                                              // (a vmstat_update kworker woken on this tick is not counted in
                                              // nr_running yet). Then the softirqs in their order: TIMER_SOFTIRQ
                                              // (expired timers: the kworker wakes) before SCHED_SOFTIRQ
                                              // (rebalance_domains). Until 2026-11-24 the kick came after the
                                              // kworker's wakeup: difftest found a lone SCHED_IDLE hog, preempted
                                              // by the kworker, pulled to the idle CPU at every vmstat tick.
        Some(self.trigger_load_balance_kick(cpu))
    }

    /// The tick's SCHED_SOFTIRQ, after its TIMER_SOFTIRQ: rebalance_domains()
    /// when the balance is due, and the next tick armed.
    pub(crate) fn run_tick_softirq(&mut self, cpu: usize, balance_due: bool) {
        if balance_due {
            self.run_rebalance_domains(cpu);
        }
        let tick = self.cfg.tick_ns;
        self.sched.rqs[cpu].tick_key = Some(self.q.schedule(Instant(self.now + tick), Ev::Tick(cpu)));
    }

    // ------------------------------------------------------------- schedule

    /// __schedule(), up to the switch: pick the next task on `cpu` and make
    /// it current (set_next_task). What follows is stitched by
    /// `sim/schedule.rs`: the workqueue's wq_worker_running(), then
    /// `context_switch` and `schedule_finish` here, with the picked task's
    /// program stepped between them.
    pub fn schedule_pick(&mut self, cpu: usize) -> Switch {
        self.sched.rqs[cpu].need_resched = false;
        self.sched.rqs[cpu].stats.sched_count += 1;
        let prev = self.sched.rqs[cpu].curr;
        // The running fair task is charged inside the fair server's pick
        // when the server is what the deadline class picks (6.11+: pick_task
        // before put_prev_task, dl_server.rs); else here, before the pick.
        let in_server_pick = prev.is_some_and(|p| self.fair_server_picks_prev(cpu, p));
        if prev.is_some() && !in_server_pick {
            self.update_curr(cpu);
        }
        let prev_runnable =
            prev.filter(|&p| self.sched.tasks[p].state == TaskState::Runnable && self.sched.tasks[p].cpu == cpu);
        if let Some(p) = prev {
            // put_prev_task_balance(): prev's class may pull work first.
            self.sched.tasks[p].sched_class().balance(self, cpu, p);
        }
        let fair_server = prev.is_none() && self.cfg.mech.fair_server;
        let stops = if fair_server { self.sched.rqs[cpu].dl.fs.stops } else { 0 };
        if self.cfg.mech.fair_server {
            self.sched.rqs[cpu].dl.fs.served = None;
        }
        let next = self.pick_next_task(cpu);
        if in_server_pick {
            // put_prev_task_fair()'s update_curr() if the server did not
            // pick; then __schedule() clears need_resched after the pick,
            // so a resched the charge raised in it is lost.
            self.update_curr(cpu);
            self.sched.rqs[cpu].need_resched = false;
        }
        if fair_server && next.is_none() && self.sched.rqs[cpu].dl.fs.stops != stops {
            // Idle stays idle: the fair server, woken by its timer, found no
            // fair task and stopped (prev == next, no switch).
            // Deviation: the timer's interrupt does not take the CPU out of
            // its idle state.
            return Switch::Idle;
        }
        if let Some(n) = next.filter(|_| next == prev) {
            // Keep running; re-arm the op timer (its end may have moved).
            self.arm_op_timer(cpu);
            if self.sched.tasks[n].throttle_work {
                // Back to user space below a throttled cfs_rq: it parks
                // (6.18, fair/throttle_task.rs).
                self.throttle_cfs_rq_work(cpu, n);
            }
            return Switch::Stay;
        }
        self.sched.account_cpu(cpu, self.now);
        if let Some(p) = prev {
            if let Some(op) = self.sched.rqs[cpu].op_key.take() {
                self.q.cancel(op);
                // Its op ends now: an OpDone of this instant not yet run is owed.
                if self.sched.rqs[cpu].op_at <= self.now {
                    self.sched.tasks[p].op_done_owed = true;
                }
            }
            self.sched.rqs[cpu].picked = next;
            self.sched.tasks[p].sched_class().put_prev_task(self, cpu, p, prev_runnable.is_some());
            if prev_runnable.is_some() {
                self.sched.tasks[p].stats.nivcsw += 1;
            } else {
                self.sched.tasks[p].stats.nvcsw += 1;
            }
            self.sched.tasks[p].stats.nr_switches += 1;
        }
        match (prev.is_some(), next.is_some()) {
            (true, false) => self.sched.wasted.nr_idle_cpus += 1,
            (false, true) => self.sched.wasted.nr_idle_cpus -= 1,
            _ => {}
        }
        if prev.is_some_and(|p| self.sched.tasks[p].nr_cpus_allowed == 1) {
            self.sched.wasted.nr_pinned_running -= 1;
        }
        if next.is_some_and(|n| self.sched.tasks[n].nr_cpus_allowed == 1) {
            self.sched.wasted.nr_pinned_running += 1;
        }
        if prev.is_none() != next.is_none() {
            // Idle <-> busy: PELT's clock and the turbo bins (sched/cpufreq.rs).
            self.cpufreq_busy_changed(cpu, next.is_some());
            if prev.is_none() && self.cfg.mech.fair_server {
                // put_prev_task_idle(): the idle time was the fair class's.
                self.dl_server_update_idle_time(cpu);
            }
        }
        self.sched.rqs[cpu].curr = next;
        self.sched.rq_idle[cpu].has_curr = next.is_some();
        self.rq_idle_changed(cpu);
        self.psi_update(cpu);
        let stopper = std::mem::take(&mut self.sched.rqs[cpu].stopper_running);
        let Some(n) = next else {
            self.set_next_task_idle(cpu);
            self.membw_update(cpu); // sched/membw.rs
            let from = if stopper { Ctx::Stopper } else { prev.map(|p| &self.sched.tasks[p]).into() };
            self.trace.sched_switch(self.now, cpu, from, Ctx::Idle);
            self.finish_task_switch(prev);
            self.cpufreq_update_util(cpu, false); // sched/cpufreq.rs
            return Switch::Idle;
        };
        if prev.is_none() && self.cpuidle.enabled() {
            self.cpuidle_exit_to(cpu); // idle/cpuidle.rs
        }
        let class = self.sched.tasks[n].sched_class();
        class.set_next_task(self, cpu, n);
        Switch::To { prev, next: n, class, stopper }
    }

    /// context_switch() to the task `schedule_pick` chose: the switch is
    /// charged and traced, and prev's side is finished.
    pub fn context_switch(&mut self, cpu: usize, prev: Option<TaskId>, n: TaskId, stopper: bool) {
        self.sched.rqs[cpu].stats.timeslices += 1;
        let cs = self.cfg.costs.context_switch_ns;
        let t = &mut self.sched.tasks[n];
        t.cs_debt += cs;
        t.stats.switched_in(cs);
        let from = if stopper { Ctx::Stopper } else { prev.map(|p| &self.sched.tasks[p]).into() };
        self.trace.sched_switch(self.now, cpu, from, Ctx::Task(&self.sched.tasks[n]));
        self.finish_task_switch(prev);
    }

    /// Whether the task just switched to on `cpu` steps its program now:
    /// it has an op to start and the CPU is not still coming out of its
    /// idle state or running an interrupt handler (idle/cpuidle.rs:
    /// set_next_task started the task's clock then, and its next op waits
    /// for it).
    #[inline]
    pub fn switched_in_ready(&self, cpu: usize, n: TaskId) -> bool {
        self.sched.tasks[n].need_advance && self.sched.rqs[cpu].busy_until <= self.now
    }

    /// The end of __schedule() once `n` runs: its op timer is armed if it
    /// still runs (its program was stepped in between), the tick restarts, the CPU
    /// leaves nohz, and the class's balance callback runs (RT pushes).
    pub fn schedule_finish(&mut self, cpu: usize, n: TaskId, class: SchedClass) {
        if self.sched.rqs[cpu].curr == Some(n) {
            self.arm_op_timer(cpu); // sched/op_timer.rs
        }
        self.tick_restart(cpu);
        if self.sched.rqs[cpu].nohz_idle {
            self.nohz_balance_exit_idle(cpu);
        }
        class.balance_callback(self, cpu, n);
        self.cpufreq_update_util(cpu, false); // sched/cpufreq.rs
    }

    /// finish_task_switch(): prev is off its CPU; a wakeup that waited for
    /// that (try_to_wake_up on a task still on_cpu) goes on now.
    fn finish_task_switch(&mut self, prev: Option<TaskId>) {
        if let Some(p) = prev {
            if let Some((waker_cpu, from_task, flags)) = self.sched.tasks[p].wake_pending.take() {
                self.try_to_wake_up_flags(p, waker_cpu, from_task, flags);
            }
        }
    }

    /// __pick_next_task(): ask the classes from the highest; the idle class
    /// always has its idle task. A newidle balance that pulled tasks makes
    /// the walk start again, without balancing again.
    pub(crate) fn pick_next_task(&mut self, cpu: usize) -> Option<TaskId> {
        // for_each_class() written out (SchedClass::ORDER), each class's
        // pick called directly: the walk runs at every pick, and through
        // the enum each step was a jump table.
        let mut newidle = true;
        loop {
            macro_rules! ask {
                ($class:ty) => {
                    match <$class as SchedClassOps>::pick_next_task(self, cpu, newidle) {
                        Pick::Empty => {}
                        Pick::Task(p) => return Some(p),
                        Pick::Idle => return None,
                        Pick::Retry => {
                            newidle = false;
                            continue;
                        }
                    }
                };
            }
            ask!(StopSchedClass);
            ask!(DlSchedClass);
            ask!(RtSchedClass);
            ask!(FairSchedClass);
            ask!(IdleSchedClass);
            unreachable!("the idle class always picks");
        }
    }

    /// update_curr(): charge the running task for the time since exec_start.
    ///
    /// Inline up to its early returns (no task runs, or no time passed
    /// since the last charge: a third of the calls), so that those do not
    /// pay the call and the register saves of the body below.
    #[inline(always)]
    pub fn update_curr(&mut self, cpu: usize) {
        let Some(tid) = self.sched.rqs[cpu].curr else { return };
        let delta = self.now.saturating_sub(self.sched.tasks[tid].se.exec_start);
        if delta == 0 {
            return;
        }
        self.update_curr_charge(cpu, tid, delta);
    }

    /// update_curr()'s body: charge `tid`, running on `cpu`, `delta` ns.
    #[inline(never)]
    fn update_curr_charge(&mut self, cpu: usize, tid: TaskId, delta: u64) {
        let now = self.now;
        if self.sched.tasks[tid].cs_debt > 0 {
            // The switch itself is kernel time: account_cpu splits it off
            // while exec_start still marks where the debt began.
            self.sched.account_cpu(cpu, self.now);
        }
        let t = &mut self.sched.tasks[tid];
        t.se.exec_start = now;
        t.se.sum_exec_runtime += delta;
        let debt = t.cs_debt.min(delta);
        t.cs_debt -= debt;
        // The work done runs at the CPU's speed (cpufreq/).
        let rq = &self.sched.rqs[cpu];
        let speed = crate::cpufreq::task_speed(rq.cpu_speed, t.memory_bound, rq.mem_stall);
        t.work_left = t.work_left.saturating_sub(crate::cpufreq::work_in(delta - debt, speed));
        self.sched.rqs[cpu].stats.run_ns += delta;
        if self.cfg.mech.balancer == BalancerEra::AvgLoad {
            self.sched_normal_avg_update(cpu, tid, delta); // seed 002 (3/6), balance_avg.rs
        }
        self.sched.tasks[tid].sched_class().update_curr(self, cpu, tid, delta);
    }

    // -------------------------------------------------------------- wakeup

    /// wake_up_new_task(): place a new task and make it runnable.
    /// `parent_cpu` is the forking task's CPU (None: a scenario task the
    /// harness starts, "forked" on its first allowed CPU).
    pub fn wake_up_new_task(&mut self, p: TaskId, parent_cpu: Option<usize>) {
        let from = parent_cpu.unwrap_or_else(|| self.sched.tasks[p].cpus.first().unwrap_or(0));
        self.sched.tasks[p].stats.start_ns = self.now;
        // An open-ended run ends when the workload's tasks have exited:
        // kernel threads (kswapd, the flushers) do not keep it going.
        if !self.sched.tasks[p].kthread {
            self.sched.live_tasks += 1;
        }
        let class = self.sched.tasks[p].sched_class();
        class.task_fork(self, p, from);
        let cpu = class.select_task_rq(self, p, from, WF_FORK, WakeSource { cpu: from, in_task: true, sync: false });
        // select_task_rq(): a CPU outside the mask goes to select_fallback_rq.
        let cpu = self.fallback_cpu(p, cpu);
        self.sched.tasks[p].cpu = cpu;
        self.sched.tasks[p].recent_used_cpu = cpu;
        self.sched.tasks[p].state = TaskState::Runnable;
        class.post_init(self, cpu, p);
        self.trace.sched_wakeup_new(self.now, cpu, &self.sched.tasks[p]);
        class.enqueue_task(self, cpu, p, ENQUEUE_INITIAL);
        self.sched.tasks[p].stats.last_wakeup = Some(self.now);
        self.wakeup_idle_cost(p, from, cpu);
        self.wakeup_preempt(cpu, p, WF_FORK);
        class.task_woken(self, cpu, p);
    }

    /// is_cpu_allowed() or select_fallback_rq(): `cpu` if `p` may run
    /// there, else its first allowed CPU, preferring `cpu`'s node.
    /// Deviation: the kernel prefers the node of task_cpu(p), not of the
    /// CPU the class chose; no CPU is ever offline or inactive here, so the
    /// cpuset fallback stages do not arise.
    #[inline(always)]
    pub(crate) fn fallback_cpu(&self, p: TaskId, cpu: usize) -> usize {
        if self.sched.tasks[p].cpus.test(cpu) {
            return cpu;
        }
        self.select_fallback_rq(p, cpu)
    }

    /// select_fallback_rq()'s search, for the rare CPU outside the mask.
    #[cold]
    #[inline(never)]
    fn select_fallback_rq(&self, p: TaskId, cpu: usize) -> usize {
        let node = self.machine.node_of(cpu);
        let t = &self.sched.tasks[p];
        t.cpus.iter().find(|&c| self.machine.node_of(c) == node).or_else(|| t.cpus.first()).unwrap_or(cpu)
    }

    /// The wakee of an idle or remote CPU pays the IPI and the idle exit
    /// before its work progresses.
    #[inline]
    pub(crate) fn wakeup_idle_cost(&mut self, tid: TaskId, from: usize, cpu: usize) {
        if self.cpuidle.enabled() {
            self.wakeup_idle_cost_cpuidle(tid, from, cpu); // idle/cpuidle.rs
            return;
        }
        let mut cost = 0;
        if cpu != from {
            cost += self.cfg.costs.wakeup_ipi_ns;
        }
        if self.sched.rqs[cpu].curr.is_none() {
            cost += self.cfg.costs.idle_exit_ns;
        }
        let t = &mut self.sched.tasks[tid];
        t.cs_debt += cost;
        t.stats.wake_cost += cost;
    }

    /// try_to_wake_up(). `waker_cpu` is where the wakeup is issued;
    /// `from_task` says whether a task (vs an interrupt/timer) wakes it.
    pub fn try_to_wake_up(&mut self, tid: TaskId, waker_cpu: usize, from_task: bool) {
        self.try_to_wake_up_flags(tid, waker_cpu, from_task, 0);
    }

    /// try_to_wake_up() with wake flags: WF_SYNC from a task that is about
    /// to sleep (a pipe or socket write, or a read that makes room).
    pub fn try_to_wake_up_flags(&mut self, tid: TaskId, waker_cpu: usize, from_task: bool, wake_flags: u32) {
        if self.sched.tasks[tid].state != TaskState::Blocked {
            return;
        }
        let prev_cpu = self.sched.tasks[tid].cpu;
        if self.trace.writes_events() {
            let who = trace_ctx(&self.sched.rqs[waker_cpu], &self.sched.tasks);
            self.trace.sched_waking(self.now, waker_cpu, who, !from_task, &self.sched.tasks[tid], prev_cpu);
        }
        if self.sched.rqs[prev_cpu].curr == Some(tid) {
            // Still on its CPU: its schedule() is pending (p->on_cpu). The
            // kernel waits for on_cpu to clear before it picks a CPU (a
            // running task is never moved); the switch goes on with it.
            // Deviation: block() dequeued the task at once, so a wakeup in
            // the same instant always takes this path, never ttwu_runnable()
            // (woken before __schedule() deactivated it: no switch at all).
            self.sched.tasks[tid].wake_pending.get_or_insert((waker_cpu, from_task, wake_flags));
            return;
        }
        if self.sched.tasks[tid].se.sched_delayed {
            self.ttwu_runnable(tid, waker_cpu, from_task, WF_TTWU | wake_flags);
            return;
        }
        let iowait = self.sched.tasks[tid].in_iowait;
        if iowait {
            // The iowait ends where it began (task_rq(p)->nr_iowait).
            self.sched.account_cpu(prev_cpu, self.now);
            self.sched.rqs[prev_cpu].nr_iowait -= 1;
            self.sched.tasks[tid].in_iowait = false;
            self.psi_update(prev_cpu);
        }
        let class = self.sched.tasks[tid].sched_class();
        let cpu = if self.cfg.mech.rt_balance == RtBalance::Legacy {
            // 2.6.24's try_to_wake_up placed every class itself (the
            // select_task_rq hook came with 2.6.25's RT balancing).
            self.select_task_rq_legacy(tid, prev_cpu, waker_cpu)
        } else {
            // select_task_rq_fair(): `sync = (wake_flags & WF_SYNC) && !(current->flags & PF_EXITING)`.
            let sync = wake_flags & WF_SYNC != 0 && from_task;
            let src = WakeSource { cpu: waker_cpu, in_task: from_task, sync };
            class.select_task_rq(self, tid, prev_cpu, WF_TTWU | wake_flags, src)
        };
        // select_task_rq(): a CPU outside the mask goes to select_fallback_rq.
        let cpu = self.fallback_cpu(tid, cpu);
        self.sched.rqs[waker_cpu].stats.ttwu_count += 1;
        if cpu == waker_cpu {
            self.sched.rqs[waker_cpu].stats.ttwu_local += 1;
        }
        if cpu != prev_cpu {
            self.set_task_cpu(tid, cpu, waker_cpu);
        }
        self.sched.tasks[tid].state = TaskState::Runnable;
        self.sched.tasks[tid].stats.nr_wakeups += 1;
        self.sched.tasks[tid].stats.last_wakeup = Some(self.now);
        self.trace.sched_wakeup(self.now, cpu, &self.sched.tasks[tid]);
        self.sched.tasks[tid].stats.woken(self.now, self.warmup);
        // ttwu_do_activate: feed avg_idle from the idle period that ends.
        if let Some(stamp) = self.sched.rqs[cpu].idle_stamp.take() {
            let delta = self.now.saturating_sub(stamp);
            let max = 2 * self.sched.rqs[cpu].max_idle_balance_cost;
            let rq = &mut self.sched.rqs[cpu];
            if delta > max {
                rq.avg_idle = max;
            } else {
                // update_avg: avg += (sample - avg) / 8
                rq.avg_idle = (rq.avg_idle as i64 + (delta as i64 - rq.avg_idle as i64) / 8) as u64;
            }
        }
        class.enqueue_task(self, cpu, tid, ENQUEUE_WAKEUP);
        if self.psi.enabled {
            self.psi_memstall_running(cpu, tid, 1);
        }
        if iowait && cpu == waker_cpu {
            // enqueue_task_fair(): cpufreq_update_util(rq, SCHED_CPUFREQ_IOWAIT),
            // heard only on the CPU itself.
            self.cpufreq_update_util(cpu, true);
        }
        self.wakeup_idle_cost(tid, waker_cpu, cpu);
        self.wakeup_preempt(cpu, tid, WF_TTWU | wake_flags);
        class.task_woken(self, cpu, tid);
    }

    /// ttwu_runnable(): `tid` sleeps but is still queued (sched_delayed,
    /// DELAY_DEQUEUE): it is requeued where it is — no select_task_rq(), so
    /// no migration, no IPI, no idle exit — and competes with curr there.
    fn ttwu_runnable(&mut self, tid: TaskId, waker_cpu: usize, from_task: bool, wake_flags: u32) {
        let cpu = self.sched.tasks[tid].cpu;
        // Never counted in nr_iowait: __block_task() has not run.
        self.sched.tasks[tid].in_iowait = false;
        let class = self.sched.tasks[tid].sched_class();
        class.enqueue_task(self, cpu, tid, ENQUEUE_DELAYED);
        // enqueue_task() -> sched_info_enqueue(): the wait starts.
        self.sched.tasks[tid].stats.wait_start.get_or_insert(self.now);
        if self.sched.rqs[cpu].curr != Some(tid) {
            self.wakeup_preempt(cpu, tid, wake_flags);
        }
        // ttwu_do_wakeup(), then ttwu_stat().
        self.sched.tasks[tid].state = TaskState::Runnable;
        self.trace.sched_wakeup(self.now, cpu, &self.sched.tasks[tid]);
        self.sched.rqs[waker_cpu].stats.ttwu_count += 1;
        if cpu == waker_cpu {
            self.sched.rqs[waker_cpu].stats.ttwu_local += 1;
        }
        let t = &mut self.sched.tasks[tid];
        t.stats.nr_wakeups += 1;
        t.stats.last_wakeup = Some(self.now);
        t.stats.woken(self.now, self.warmup);
        let _ = from_task; // an interrupt wakes a delayed task the same way
    }

    /// wakeup_preempt() (check_preempt_curr before 6.6): `p` became
    /// runnable on `cpu` (`wake_flags`: WF_FORK, WF_TTWU with WF_SYNC, or 0
    /// for a move). Same class: the class decides; a higher class always
    /// preempts.
    pub(crate) fn wakeup_preempt(&mut self, cpu: usize, p: TaskId, wake_flags: u32) {
        match self.sched.rqs[cpu].curr {
            None => self.resched_curr(cpu),
            Some(curr) if curr != p => {
                let (pc, cc) = (self.sched.tasks[p].sched_class(), self.sched.tasks[curr].sched_class());
                if pc == cc {
                    pc.wakeup_preempt(self, cpu, curr, p, wake_flags);
                } else if pc < cc {
                    self.resched_curr(cpu);
                }
            }
            _ => {}
        }
    }

    /// set_task_cpu(): move a not-running task's accounting to `new_cpu`.
    /// `exec_cpu` runs it (for the trace line).
    pub fn set_task_cpu(&mut self, tid: TaskId, new_cpu: usize, exec_cpu: usize) {
        let old = self.sched.tasks[tid].cpu;
        if old == new_cpu {
            return;
        }
        self.sched.tasks[tid].sched_class().migrate_task_rq(self, tid, old, new_cpu);
        if self.psi.enabled {
            self.psi_memstall_migrate(tid, old, new_cpu);
        }
        let t = &mut self.sched.tasks[tid];
        t.cpu = new_cpu;
        t.stats.nr_migrations += 1;
        let c = &self.cfg.costs;
        let m = &self.machine;
        let (distance, refill) = if m.cpus[old].core == m.cpus[new_cpu].core {
            (0, c.migration_smt_ns)
        } else if m.cpus[old].llc == m.cpus[new_cpu].llc {
            (1, c.migration_llc_ns)
        } else if m.cpus[old].node == m.cpus[new_cpu].node {
            (2, c.migration_remote_llc_ns)
        } else {
            (3, c.migration_remote_node_ns)
        };
        t.cs_debt += refill;
        self.sched.migrations_by_distance[distance] += 1;
        let who = trace_ctx(&self.sched.rqs[exec_cpu], &self.sched.tasks);
        self.trace.sched_migrate_task(self.now, exec_cpu, who, &self.sched.tasks[tid], old, new_cpu);
    }

    /// Move a queued, not running task between runqueues (detach_task +
    /// attach_task of the balancer; move_queued_task).
    /// `exec_cpu` runs the move: the pulling CPU, or the source's stopper.
    pub fn move_queued_task(&mut self, tid: TaskId, src: usize, dst: usize, exec_cpu: usize) {
        let class = self.sched.tasks[tid].sched_class();
        class.dequeue_task(self, src, tid, crate::sched::class::DEQUEUE_MIGRATING);
        self.set_task_cpu(tid, dst, exec_cpu);
        class.enqueue_task(self, dst, tid, 0);
        self.wakeup_preempt(dst, tid, 0);
    }

    // ------------------------------------------------------------ syscalls

    /// sched_setaffinity() of the running RT task `tid` (rt-migrate-test's
    /// rotation): its queued accounting is redone under the new mask. When
    /// its CPU leaves the mask the caller has the stopper move it
    /// (affine_move_task); a task that blocks first moves as it blocks.
    pub fn set_cpus_allowed_curr(&mut self, tid: TaskId, mask: CpuMask) {
        let cpu = self.sched.tasks[tid].cpu;
        debug_assert!(self.sched.rqs[cpu].curr == Some(tid));
        let was_pinned = self.sched.tasks[tid].nr_cpus_allowed == 1;
        let class = self.sched.tasks[tid].sched_class();
        class.dequeue_task(self, cpu, tid, 0);
        self.sched.tasks[tid].nr_cpus_allowed = mask.weight();
        self.sched.tasks[tid].cpus = std::sync::Arc::new(mask);
        class.enqueue_task(self, cpu, tid, ENQUEUE_HEAD);
        let pinned = self.sched.tasks[tid].nr_cpus_allowed == 1;
        if was_pinned && !pinned {
            self.sched.wasted.nr_pinned_running -= 1;
        } else if pinned && !was_pinned {
            self.sched.wasted.nr_pinned_running += 1;
        }
    }

    /// The running task goes to sleep: deactivate it; schedule() follows.
    /// (A workqueue worker's concurrency hook runs first: `Sim::block`.)
    pub fn block(&mut self, tid: TaskId) {
        let cpu = self.sched.tasks[tid].cpu;
        self.update_curr(cpu);
        if self.dequeue_task(cpu, tid) {
            self.block_task_accounting(cpu, tid);
        }
        // A task whose CPU has left its mask never blocks here: the
        // affinity change moved it through the stopper (affine_move_task),
        // and a wakeup sends a CPU outside the mask to select_fallback_rq.
        debug_assert!(self.sched.tasks[tid].cpus.test(cpu), "{} blocks outside its mask", self.sched.tasks[tid].comm);
        self.sched.tasks[tid].stats.blocked_at = self.now;
        self.sched.tasks[tid].state = TaskState::Blocked;
        self.sched.tasks[tid].need_advance = true;
        self.resched_curr(cpu);
    }

    /// dequeue_task(rq, p, DEQUEUE_SLEEP): false if the class keeps the
    /// sleeping task queued (sched_delayed).
    pub(crate) fn dequeue_task(&mut self, cpu: usize, tid: TaskId) -> bool {
        self.sched.tasks[tid].sched_class().dequeue_task(self, cpu, tid, DEQUEUE_SLEEP)
    }

    /// __block_task(): the task has left its runqueue asleep; one in
    /// io_schedule() counts in the CPU's nr_iowait from now (a
    /// sched_delayed task only once its delayed dequeue completes).
    pub(crate) fn block_task_accounting(&mut self, cpu: usize, tid: TaskId) {
        if self.sched.tasks[tid].in_iowait {
            self.sched.account_cpu(cpu, self.now);
            self.sched.rqs[cpu].nr_iowait += 1;
            self.psi_update(cpu);
        }
        if self.psi.enabled {
            self.psi_memstall_running(cpu, tid, -1);
        }
    }

    pub fn do_exit(&mut self, tid: TaskId) {
        self.psi_memstall_leave(tid);
        let cpu = self.sched.tasks[tid].cpu;
        if self.sched.tasks[tid].state == TaskState::Runnable {
            self.update_curr(cpu);
            self.dequeue_task(cpu, tid);
        }
        self.sched.tasks[tid].state = TaskState::Dead;
        self.sched.tasks[tid].stats.exit_ns = Some(self.now);
        self.sched.tasks[tid].sched_class().task_dead(self, cpu, tid);
        self.trace.sched_process_exit(self.now, cpu, &self.sched.tasks[tid]);
        if !self.sched.tasks[tid].kthread {
            self.sched.live_tasks -= 1;
        }
        self.resched_curr(cpu);
    }
}
