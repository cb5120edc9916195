//! The event loop: pop the next event, hand it to the room that handles it,
//! run the reschedules it asked for, keep the books, stop at the end.

use crate::engine::event::Ev;
use crate::engine::heap;
use crate::engine::time::Instant;
use crate::error::SimError;
use crate::sched::cpustat::CpuTime;
use crate::sched::task::{TaskId, TaskState};
use crate::sim::Sim;
use crate::units::format_duration;
use crate::workload::Op;

/// More events than this at one instant of simulated time is a livelock:
/// the largest modelled burst (every CPU of a 1,024-CPU machine ticking and
/// balancing at once, a barrier releasing thousands of tasks) stays two
/// orders of magnitude below.
const MAX_EVENTS_AT_ONE_INSTANT: u64 = 1_000_000;

/// Events one task may bring to an instant beyond that: a burst of starts
/// (a million tasks that all start at t = 0) is a start, a wakeup and an
/// enqueue or two each, not a livelock. A livelock's events grow without
/// bound, so it still passes MAX + this × tasks.
const EVENTS_PER_TASK_AT_ONE_INSTANT: u64 = 16;

impl Sim {
    /// Run to the end. Returns an error if the model hit a fatal condition.
    pub fn run(&mut self) -> Result<(), SimError> {
        // Events at one instant of simulated time: a model in a livelock
        // (tasks spinning without letting time pass) never leaves it.
        let mut at_this_instant = 0u64;
        while let Some((t, ev)) = self.w.m.kt.k.q.pop() {
            if t.0 > self.end_ns {
                break;
            }
            if t.0 == self.w.m.kt.k.now {
                at_this_instant += 1;
                if at_this_instant > MAX_EVENTS_AT_ONE_INSTANT && at_this_instant > self.instant_limit() {
                    return Err(self.livelock(at_this_instant));
                }
            } else {
                at_this_instant = 0;
            }
            self.w.m.kt.k.cpuidle_advance(t.0);
            self.w.m.kt.k.now = t.0;
            self.stats.events_processed += 1;
            match ev {
                Ev::End => {
                    self.stop_reason = if self.open_ended { "limit reached" } else { "duration reached" };
                    let (w, iv) = (self.stats.rec.warmup, self.stats.rec.interval);
                    if self.w.m.kt.k.now > w && (self.w.m.kt.k.now - w).is_multiple_of(iv) {
                        self.take_sample();
                    }
                    self.w.m.kt.k.cpufreq_account_all();
                    break;
                }
                _ => self.handle(ev),
            }
            self.flush_resched();
            self.w.m.kt.k.sched.wasted.account(
                self.w.m.kt.k.now,
                self.stats.rec.warmup,
                &self.w.m.kt.k.sched.rqs,
                &self.w.m.kt.k.sched.rq_idle,
                &self.w.m.kt.k.sched.tasks,
                &self.w.m.kt.k.sched.cfs_rqs,
            );
            if let Some(e) = self.w.m.fatal.take() {
                return Err(e);
            }
            if self.check {
                self.check_invariants()?;
            }
            if self.stats.events_processed.is_multiple_of(heap::CHECK_EVERY) {
                self.check_heap()?;
                if let Some(p) = &self.progress {
                    p.publish(self.w.m.kt.k.now, self.stats.events_processed);
                }
            }
            if self.w.m.kt.k.sched.live_tasks == 0 && self.all_started() && self.open_ended {
                self.stop_reason = "all tasks exited";
                break;
            }
        }
        self.end_ns = self.w.m.kt.k.now.min(self.end_ns);
        if let Some(p) = &self.progress {
            p.publish(self.end_ns, self.stats.events_processed);
        }
        // The trace ends with the CPUs still idle: their states traced up
        // to the end, no exits.
        let now = self.w.m.kt.k.now;
        self.w.m.kt.k.cpuidle_advance(now);
        self.w.m.kt.k.cpuidle.tracing = false;
        for cpu in 0..self.w.m.kt.k.sched.rqs.len() {
            self.w.m.kt.k.sched.account_cpu(cpu, now);
            // Credit the idle periods in progress to their states.
            self.w.m.kt.k.cpuidle_exit(cpu);
        }
        self.check_the_end()
    }

    /// SL210 when the live heap is over the run's budget (engine::heap).
    pub(crate) fn check_heap(&self) -> Result<(), SimError> {
        self.check_heap_for(0)
    }

    /// SL210 when the live heap and `more` bytes about to be taken would
    /// pass the budget: a phase that allocates in one piece is refused
    /// before it, not caught after.
    pub fn check_heap_for(&self, more: usize) -> Result<(), SimError> {
        let Some(budget) = self.heap_budget else { return Ok(()) };
        let Some(live) = heap::over(budget.saturating_sub(more as u64)) else { return Ok(()) };
        let what = if more == 0 {
            format!("the run's heap reached {}", heap::format_bytes(live))
        } else {
            format!(
                "the report ({} more) would take the run's heap from {} to {}",
                heap::format_bytes(more as u64),
                heap::format_bytes(live),
                heap::format_bytes(live + more as u64)
            )
        };
        let samples = if self.stats.rec.samples.is_empty() { "" } else { ", measure.samples = false" };
        Err(SimError::Resource {
            message: format!(
                "{}: {what} at t = {} with {} tasks, over its budget of {}; \
                 accepted: a smaller machine, fewer tasks or forks, a shorter measure.duration{samples}, \
                 or a larger SCHEDLAB_MEMORY_LIMIT",
                self.w.m.source,
                format_duration(self.w.m.kt.k.now),
                self.w.m.kt.k.sched.tasks.len(),
                heap::format_bytes(budget),
            ),
        })
    }

    /// Events at one instant beyond which the run is in a livelock.
    fn instant_limit(&self) -> u64 {
        MAX_EVENTS_AT_ONE_INSTANT + EVENTS_PER_TASK_AT_ONE_INSTANT * self.w.m.kt.k.sched.tasks.len() as u64
    }

    /// The error for a livelock: what each CPU runs at the instant that
    /// does not pass.
    fn livelock(&self, events: u64) -> SimError {
        let running: Vec<String> = self
            .w
            .m
            .kt
            .k
            .sched
            .rqs
            .iter()
            .filter_map(|rq| rq.curr.map(|c| format!("{} on CPU {}", self.w.m.kt.k.sched.tasks[c].comm, rq.cpu)))
            .take(8)
            .collect();
        SimError::Invariant {
            message: format!(
                "{}: no progress: {events} events at t = {} without simulated time passing, with {} tasks ({}); \
                 a program loops on ops that take no time (yield with nobody else runnable, fork, signal)",
                self.w.m.source,
                format_duration(self.w.m.kt.k.now),
                self.w.m.kt.k.sched.tasks.len(),
                if running.is_empty() { "nothing running".to_string() } else { running.join(", ") }
            ),
        }
    }

    /// What the end of the run says: a deadlock (every task of the workload
    /// blocked on a wait or a barrier that nobody can release), the limit
    /// reached, an empty measurement window.
    fn check_the_end(&mut self) -> Result<(), SimError> {
        let stuck = self.deadlocked();
        if !stuck.is_empty() {
            let since = stuck.iter().map(|&t| self.w.m.kt.k.sched.tasks[t].stats.blocked_at).max().unwrap_or(0);
            let names: Vec<String> = stuck.iter().take(8).map(|&t| self.blocked_on(t)).collect();
            let more = if stuck.len() > 8 { format!(" and {} more", stuck.len() - 8) } else { String::new() };
            let message = format!(
                "deadlock: every task is blocked for good since {} ({}{more}): a wait without a signal, or a barrier that cannot fill",
                format_duration(since),
                names.join(", ")
            );
            if self.open_ended {
                // Nothing will ever happen again: the run cannot end well.
                return Err(SimError::Invariant { message: format!("{}: {message}", self.w.m.source) });
            }
            self.warnings.push(message);
        } else if self.open_ended && self.w.m.kt.k.sched.live_tasks > 0 && self.stop_reason == "limit reached" {
            self.warnings.push(format!(
                "the run reached measure.limit ({}) with {} tasks still running; give measure.duration, or a larger measure.limit (at most 24h)",
                format_duration(self.end_ns),
                self.w.m.kt.k.sched.live_tasks
            ));
        }
        if self.check {
            self.check_window()?;
        }
        if self.end_ns <= self.stats.rec.warmup {
            return Err(SimError::bad_value(
                &self.w.m.source,
                "measure.warmup",
                format!(
                    "the measurement window is empty: the warm-up ({}) ends at or after the end of the run ({}, {})",
                    format_duration(self.stats.rec.warmup),
                    format_duration(self.end_ns),
                    self.stop_reason
                ),
                "a warm-up that ends before the run does",
            ));
        }
        Ok(())
    }

    /// The checker on mpstat's accounting: every CPU's columns over the
    /// window add up to the window, so each CPU's percentages sum to 100,
    /// and the whole intervals add up to no more than the window.
    fn check_window(&self) -> Result<(), SimError> {
        let rec = &self.stats.rec;
        let Some(base) = rec.base.as_ref() else { return Ok(()) };
        let window = self.end_ns.saturating_sub(rec.warmup);
        for (rq, b) in self.w.m.kt.k.sched.rqs.iter().zip(base) {
            let a = &rq.acct;
            let back = [(a.usr, b.usr), (a.nice, b.nice), (a.sys, b.sys), (a.iowait, b.iowait), (a.irq, b.irq)];
            if back.iter().any(|(x, y)| x < y) || a.soft < b.soft || a.idle < b.idle {
                return Err(SimError::Invariant {
                    message: format!("CPU {}: a cputime column went backwards over the window", rq.cpu),
                });
            }
            let d = rq.acct.delta(b).total();
            if d != window {
                return Err(SimError::Invariant {
                    message: format!(
                        "CPU {}: mpstat columns add up to {d} ns over a window of {window} ns (not 100 %)",
                        rq.cpu
                    ),
                });
            }
        }
        let whole = rec.intervals.saturating_mul(rec.interval);
        if let Some(s) = rec.sum.iter().find(|s| s.total() != whole) {
            return Err(SimError::Invariant {
                message: format!(
                    "mpstat's {} whole intervals add up to {} ns on a CPU, not {whole} ns",
                    rec.intervals,
                    s.total()
                ),
            });
        }
        Ok(())
    }

    /// The workload's live tasks if every one of them is blocked on a
    /// barrier or an event (nothing but another task could release them),
    /// else nothing. Kernel threads do not count.
    fn deadlocked(&self) -> Vec<TaskId> {
        let mut stuck = Vec::new();
        for (i, t) in self.w.m.kt.k.sched.tasks.iter().enumerate() {
            if matches!(t.state, TaskState::New | TaskState::Dead) || t.group >= self.w.m.kt.progs.nr_scenario_groups {
                continue;
            }
            if t.state != TaskState::Blocked || !matches!(self.blocking_op(i), Some(Op::Barrier(_) | Op::Wait(_))) {
                return Vec::new();
            }
            stuck.push(i);
        }
        stuck
    }

    /// The op a blocked task is blocked in (the one before its pc).
    fn blocking_op(&self, tid: TaskId) -> Option<Op> {
        let t = &self.w.m.kt.k.sched.tasks[tid];
        let tmpl = t.template?;
        t.pc.checked_sub(1).and_then(|pc| self.w.m.kt.progs.templates[tmpl].program.ops.get(pc).cloned())
    }

    /// `comm (wait "e")` / `comm (barrier "b")` for a message.
    fn blocked_on(&self, tid: TaskId) -> String {
        let comm = &self.w.m.kt.k.sched.tasks[tid].comm;
        match self.blocking_op(tid) {
            Some(Op::Wait(e)) => {
                format!("{comm} on wait \"{}\"", self.w.wl.event_names.get(e).map_or("?", |s| s.as_str()))
            }
            Some(Op::Barrier(b)) => {
                format!("{comm} on barrier \"{}\"", self.w.wl.barrier_names.get(b).map_or("?", |s| s.as_str()))
            }
            _ => comm.clone(),
        }
    }

    fn all_started(&self) -> bool {
        !self.w.m.kt.k.sched.tasks.iter().any(|t| t.state == TaskState::New)
    }

    /// SIGXCPU for a SCHED_FLAG_DL_OVERRUN task's overrun: the signal's
    /// default action kills the process, so the run ends as the real
    /// workload does.
    ///
    /// Deviation: a handler for SIGXCPU is not modelled, and the signal is
    /// taken at the overrun, where the kernel sends it from the task's next
    /// tick (check_dl_overrun in posix-cpu-timers).
    fn sigxcpu(&mut self, tid: TaskId) {
        let t = &self.w.m.kt.k.sched.tasks[tid];
        self.w.m.fatal = Some(SimError::NotModelled {
            at: crate::error::Location {
                file: self.w.m.source.to_string(),
                key: format!("task[{}].sched_flags", t.group),
            },
            what: format!(
                "{} overran its runtime at {}: the kernel sends SIGXCPU (SCHED_FLAG_DL_OVERRUN), whose default \
                 action kills the process (a handler is not modelled)",
                t.comm,
                format_duration(self.w.m.kt.k.now)
            ),
        });
    }

    fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::Start(tid) => self.w.m.kt.k.wake_up_new_task(tid, None),
            Ev::Tick(cpu) => self.scheduler_tick(cpu),
            Ev::OpDone(cpu) => self.w.op_done(cpu),
            Ev::Timeout(tid) => {
                let cpu = self.w.m.kt.k.sched.tasks[tid].cpu;
                if self.w.m.kt.k.cpuidle.enabled() {
                    let timers = &mut self.w.m.kt.k.sched.rqs[cpu].hrtimers;
                    if let Some(i) = timers.iter().position(|&(at, t)| t == tid && at == self.w.m.kt.k.now) {
                        timers.swap_remove(i);
                    }
                }
                self.w.m.kt.k.try_to_wake_up(tid, cpu, false);
            }
            Ev::ActiveBalance(cpu) => self.w.m.kt.k.active_load_balance_cpu_stop(cpu),
            Ev::NohzKick(cpu) => self.w.m.kt.k.nohz_idle_balance(cpu),
            Ev::RtPeriod => self.w.m.kt.k.sched_rt_period_timer(),
            Ev::CfsPeriod(tg) => self.w.m.kt.k.sched_cfs_period_timer(tg as usize),
            Ev::CfsSlack(tg) => self.w.m.kt.k.sched_cfs_slack_timer(tg as usize),
            Ev::CfsbCsd(cpu) => self.w.m.kt.k.cfsb_csd_unthrottle(cpu as usize),
            Ev::DlTimer(tid) => self.w.m.kt.k.dl_task_timer(tid),
            Ev::DlServerTimer(cpu) => self.w.m.kt.k.dl_server_timer(cpu),
            Ev::DlInactiveTimer(tid) => self.w.m.kt.k.dl_inactive_timer(tid),
            Ev::DlServerInactiveTimer(cpu) => self.w.m.kt.k.dl_server_inactive_timer(cpu),
            Ev::DlOverrun(tid) => self.sigxcpu(tid),
            Ev::RtoPushIpi(cpu) => self.w.m.kt.k.rto_push_irq_work_func(cpu),
            Ev::BlkDone(req) => self.w.m.kt.blk_done(req),
            Ev::IrqDone(cpu, action) => {
                self.w.m.kt.irq_done(cpu as usize, action);
                if !self.w.m.kt.block.wb_done.is_empty() {
                    self.w.m.writeback_end_io();
                }
            }
            Ev::PoolIdleTimer(pool) => self.w.m.kt.pool_idle_timer(pool),
            Ev::MmTimer(tid, seq) => self.w.m.mm_timer(tid as usize, seq),
            Ev::MmAuto => self.w.m.kswapd_auto(),
            Ev::Sample => {
                self.take_sample();
                let next = self.w.m.kt.k.now + self.stats.rec.interval;
                if next < self.end_ns {
                    self.w.m.kt.k.q.schedule(Instant(next), Ev::Sample);
                }
            }
            Ev::End => {}
        }
    }

    fn take_sample(&mut self) {
        for cpu in 0..self.w.m.kt.k.sched.rqs.len() {
            self.w.m.kt.k.sched.account_cpu(cpu, self.w.m.kt.k.now);
        }
        self.w.m.kt.k.cpufreq_account_all();
        if self.stats.rec.warmup > 0 && self.w.m.kt.k.now == self.stats.rec.warmup && self.stats.task_base.is_empty() {
            self.stats.task_base = (0..self.w.m.kt.k.sched.tasks.len()).map(|t| self.task_counters(t)).collect();
            self.stats.kernel_base = Some(crate::stats::KernelBase {
                idle_usage: self.w.m.kt.k.cpuidle.devs.iter().map(|d| d.usage.clone()).collect(),
                idle_time: self.w.m.kt.k.cpuidle.devs.iter().map(|d| d.time_ns.clone()).collect(),
                disks: self.w.m.kt.block.disks.iter().map(|d| d.stats_at(self.w.m.kt.k.now)).collect(),
                works_done: self.w.m.kt.kthreads.works_done.clone(),
                vm: self.w.m.mm.ev,
                lru_lock: self.w.m.mm.nodes.iter().map(|n| n.lru_lock.stats).collect(),
                zone_lock: self.w.m.mm.nodes.iter().map(|n| n.zone_lock.stats).collect(),
                cpufreq: self.w.m.kt.k.cpufreq_counters(),
                core_energy: self.w.m.kt.k.cpufreq.core_energy.clone(),
                membw: self.w.m.kt.k.membw_counters(),
                psi: self.w.m.kt.k.psi.read(self.w.m.kt.k.now, self.w.m.kt.k.cfg.tick_ns).total,
                wb: self.w.m.mm.wbs.iter().map(|w| (w.dirtied, w.written)).collect(),
                cpu_stat: (0..self.w.m.kt.k.sched.groups.tgs.len())
                    .map(|g| self.w.m.kt.k.sched.groups.cpu_stat(g))
                    .collect(),
            });
        }
        if self.w.m.mm.enabled && self.w.m.kt.k.now > self.stats.rec.warmup {
            // /proc/stat's procs_running and procs_blocked, as vmstat reads
            // them at the end of each interval. Deviation: no vmstat process
            // runs, so r lacks the one task a real vmstat counts (itself),
            // and there is no first line of averages since boot.
            let rqs = &self.w.m.kt.k.sched.rqs;
            let r = rqs.iter().map(|q| q.nr_running).sum();
            let b = rqs.iter().map(|q| q.nr_iowait).sum();
            self.stats.procs.push((self.w.m.kt.k.now, r, b));
            if !self.w.m.mm.wbs.is_empty() {
                let (d, w) = self.w.m.global_dirty();
                self.stats.dirty.push((self.w.m.kt.k.now, d, w));
            }
        }
        let accts: Vec<CpuTime> = self.w.m.kt.k.sched.rqs.iter().map(|r| r.cpu_times()).collect();
        self.stats.rec.sample(self.w.m.kt.k.now, &accts);
    }
}
