//! Models kernel/sched/cputime.c: CPU time accounted by kind, the
//! /proc/stat columns (user, nice, system, idle) that mpstat prints.

use crate::engine::sim::Sim;

impl Sim {
    /// Fold the time since the last accounting point into the CPU's buckets
    /// (precise accounting; Deviation: /proc/stat is tick-sampled unless
    /// VIRT_CPU_ACCOUNTING_GEN, so the kernel's split is noisier).
    pub fn account_cpu(&mut self, cpu: usize) {
        let now = self.now;
        let since = self.rqs[cpu].acct_since;
        if now <= since {
            return;
        }
        let delta = now - since;
        self.rqs[cpu].acct_since = now;
        match self.rqs[cpu].curr {
            None => self.rqs[cpu].acct.idle += delta,
            Some(tid) => {
                // The task's debt (switch, refill) was settled in update_curr;
                // here we only split by kind.
                let t = &self.tasks[tid];
                if t.kthread {
                    self.rqs[cpu].acct.sys += delta;
                } else if t.nice > 0 {
                    self.rqs[cpu].acct.nice += delta;
                } else {
                    self.rqs[cpu].acct.usr += delta;
                }
            }
        }
    }
}
