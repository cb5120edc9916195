//! Models kernel/sched/cputime.c: CPU time accounted by kind, the
//! /proc/stat columns (user, nice, system, idle) that mpstat prints.

use crate::engine::sim::Sim;

impl Sim {
    /// Fold the time since the last accounting point into the CPU's buckets
    /// (precise accounting; Deviation: /proc/stat is tick-sampled unless
    /// VIRT_CPU_ACCOUNTING_GEN, so the kernel's split is noisier).
    #[inline]
    pub fn account_cpu(&mut self, cpu: usize) {
        let now = self.now;
        let since = self.rqs[cpu].acct_since;
        if now <= since {
            return;
        }
        let delta = now - since;
        self.rqs[cpu].acct_since = now;
        let Some(tid) = self.rqs[cpu].curr else {
            self.rqs[cpu].acct.idle += delta;
            return;
        };
        let t = &self.tasks[tid];
        // The context-switch debt update_curr has yet to settle lies at the
        // start of the task's unsettled time, [exec_start, exec_start +
        // debt): its part inside [since, now] is system time. Splitting it
        // here, not when update_curr settles it, keeps every column
        // monotonic across an mpstat sample.
        let switch = if t.cs_debt == 0 {
            0
        } else {
            let start = t.se.exec_start;
            let debt_end = start + t.cs_debt.min(now.saturating_sub(start));
            debt_end.saturating_sub(since.max(start)).min(delta)
        };
        let r = &mut self.rqs[cpu].acct;
        r.sys += switch;
        let rest = delta - switch;
        if t.kthread {
            r.sys += rest;
        } else if t.nice > 0 {
            r.nice += rest;
        } else {
            r.usr += rest;
        }
    }
}
