//! CPU time by kind (include/linux/kernel_stat.h's kernel_cpustat): the
//! /proc/stat columns that `cputime.rs` accounts into and mpstat prints.

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
