//! Models kernel/sched/cputime.c: CPU time accounted by kind, the
//! /proc/stat columns (user, nice, system, iowait, irq, softirq, idle)
//! that mpstat prints.

use crate::sched::sched::Sched;
use crate::sched::sched::WindowKind;

impl Sched {
    /// Fold the time since the last accounting point into the CPU's buckets
    /// (precise accounting, as with IRQ_TIME_ACCOUNTING and
    /// VIRT_CPU_ACCOUNTING_GEN; Deviation: /proc/stat is tick-sampled without
    /// them, so the kernel's split is noisier).
    ///
    /// Inlined everywhere (its fast path is a few compares): called out of
    /// line it costs 2 % more instructions per event (cachegrind, smp64).
    #[inline(always)]
    pub fn account_cpu(&mut self, cpu: usize, now: u64) {
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
