//! Models kernel/sched/cputime.c: CPU time accounted by kind, the
//! /proc/stat columns (user, nice, system, iowait, irq, softirq, idle)
//! that mpstat prints.

use crate::sched::sched::WindowKind;
use crate::sim::Sim;

/// Cumulative CPU time by kind, in ns (the /proc/stat columns schedlab
/// models: user, nice, system, iowait, irq, softirq, idle).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTime {
    pub usr: u64,
    pub nice: u64,
    pub sys: u64,
    /// Idle while a task that slept in io_schedule() on this CPU waits
    /// (rq->nr_iowait > 0): /proc/stat's iowait.
    pub iowait: u64,
    /// Hard interrupt handlers (irq/mod.rs).
    pub irq: u64,
    /// Softirq handlers (irq/mod.rs).
    pub soft: u64,
    pub idle: u64,
    /// Time tasks waited on this runqueue, counted when each wait ends
    /// (rq->rq_sched_info.run_delay, /proc/schedstat's cpuN run_delay).
    /// Not a share of the CPU's time: not in `total`.
    pub run_delay: u64,
}

impl CpuTime {
    pub fn total(&self) -> u64 {
        [self.nice, self.sys, self.iowait, self.irq, self.soft, self.idle]
            .iter()
            .fold(self.usr, |a, &b| a.saturating_add(b))
    }

    /// Time since `earlier`. Counters only grow; the checker
    /// (`check_invariants`) says so, and a wrap here would print a
    /// 46-quadrillion-percent column, so a backwards step saturates at 0.
    pub fn delta(&self, earlier: &CpuTime) -> CpuTime {
        CpuTime {
            usr: self.usr.saturating_sub(earlier.usr),
            nice: self.nice.saturating_sub(earlier.nice),
            sys: self.sys.saturating_sub(earlier.sys),
            iowait: self.iowait.saturating_sub(earlier.iowait),
            irq: self.irq.saturating_sub(earlier.irq),
            soft: self.soft.saturating_sub(earlier.soft),
            idle: self.idle.saturating_sub(earlier.idle),
            run_delay: self.run_delay.saturating_sub(earlier.run_delay),
        }
    }

    pub fn add(&mut self, o: &CpuTime) {
        self.usr = self.usr.saturating_add(o.usr);
        self.nice = self.nice.saturating_add(o.nice);
        self.sys = self.sys.saturating_add(o.sys);
        self.iowait = self.iowait.saturating_add(o.iowait);
        self.irq = self.irq.saturating_add(o.irq);
        self.soft = self.soft.saturating_add(o.soft);
        self.idle = self.idle.saturating_add(o.idle);
        self.run_delay = self.run_delay.saturating_add(o.run_delay);
    }
}

impl Sim {
    /// Fold the time since the last accounting point into the CPU's buckets
    /// (precise accounting, as with IRQ_TIME_ACCOUNTING and
    /// VIRT_CPU_ACCOUNTING_GEN; Deviation: /proc/stat is tick-sampled without
    /// them, so the kernel's split is noisier).
    ///
    /// Inlined everywhere (its fast path is a few compares): called out of
    /// line it costs 2 % more instructions per event (cachegrind, smp64).
    #[inline(always)]
    pub fn account_cpu(&mut self, cpu: usize) {
        let now = self.now;
        let since = self.rqs[cpu].acct_since;
        if now <= since {
            return;
        }
        let rq = &self.rqs[cpu];
        if !rq.windows.is_empty() || rq.nr_iowait > 0 {
            // Interrupts, idle exits or iowait: the rare case.
            self.account_cpu_windows(cpu, since, now);
            return;
        }
        let delta = now - since;
        self.rqs[cpu].acct_since = now;
        let Some(tid) = self.rqs[cpu].curr else {
            self.rqs[cpu].acct.idle += delta;
            return;
        };
        self.account_task_time(cpu, tid, since, now, 0);
    }

    /// account_cpu() when the CPU has windows or tasks in iowait.
    #[cold]
    #[inline(never)]
    fn account_cpu_windows(&mut self, cpu: usize, since: u64, now: u64) {
        let delta = now - since;
        self.rqs[cpu].acct_since = now;
        // Interrupt handlers and idle exits first: their time is neither
        // the task's nor the idle loop's.
        let taken = if self.rqs[cpu].windows.is_empty() { 0 } else { self.account_windows(cpu, since, now) };
        let Some(tid) = self.rqs[cpu].curr else {
            let r = &mut self.rqs[cpu];
            let idle = if r.nr_iowait > 0 { &mut r.acct.iowait } else { &mut r.acct.idle };
            *idle += delta - taken;
            return;
        };
        self.account_task_time(cpu, tid, since, now, taken);
    }

    /// The task's part of [since, now): its switch debt as system time, the
    /// rest by its kind; `taken` ns of it went to windows already.
    #[inline(always)]
    fn account_task_time(&mut self, cpu: usize, tid: usize, since: u64, now: u64, taken: u64) {
        let delta = now - since;
        let t = &self.tasks[tid];
        // The context-switch debt update_curr has yet to settle lies at the
        // start of the task's unsettled time, [exec_start, exec_start +
        // debt): its part inside [since, now] is system time. Splitting it
        // here, not when update_curr settles it, keeps every column
        // monotonic across an mpstat sample. The windows lie inside the
        // debt (an interrupt or an idle exit delays the task's work).
        let switch = if t.cs_debt == 0 {
            0
        } else {
            let start = t.se.exec_start;
            let debt_end = start + t.cs_debt.min(now.saturating_sub(start));
            debt_end.saturating_sub(since.max(start)).min(delta)
        };
        let switch = switch.saturating_sub(taken);
        let r = &mut self.rqs[cpu].acct;
        r.sys += switch;
        let rest = delta - taken - switch;
        if t.kthread || t.in_sys {
            r.sys += rest;
        } else if t.nice > 0 {
            r.nice += rest;
        } else {
            r.usr += rest;
        }
    }

    /// The part of [since, now) inside the CPU's windows, into their
    /// columns; windows that ended are dropped. Returns the time taken.
    #[cold]
    fn account_windows(&mut self, cpu: usize, since: u64, now: u64) -> u64 {
        let r = &mut self.rqs[cpu];
        let mut taken = 0;
        for w in &r.windows {
            let overlap = now.min(w.end).saturating_sub(since.max(w.start));
            match w.kind {
                WindowKind::Irq => r.acct.irq += overlap,
                WindowKind::Soft => r.acct.soft += overlap,
                WindowKind::Idle => r.acct.idle += overlap,
            }
            taken += overlap;
        }
        r.windows.retain(|w| w.end > now);
        taken
    }
}
