//! The scheduler's side of CPU frequency (kernel/sched/sched.h
//! cpufreq_update_util()): where the kernel calls the governor, what it
//! passes, and what a new frequency does to the task running on the CPU.
//! The governors and the hardware are the cpufreq room (`cpufreq/`).
//!
//! The kernel calls cpufreq_update_util() from update_load_avg() when the
//! root cfs_rq's utilization changes, from the RT and deadline classes'
//! update_curr(), and with SCHED_CPUFREQ_IOWAIT when a task that slept in
//! io_schedule() is enqueued. The model calls it on the CPU itself at the
//! tick of a busy CPU, at every schedule() (a task switched in or the CPU
//! going idle: the put_prev/dequeue side's update_load_avg) and when a task
//! in iowait is woken onto the waker's own CPU.
//! Deviation: the kernel calls it only when PELT decayed (at most once per
//! 1024 us period) but also on remote enqueues, which intel_pstate and
//! single-CPU schedutil policies drop; both governors rate-limit far above
//! that (10 ms, 500 us), so the model's calls at switches stand for them.

use crate::cpufreq::governors::UpdateUtil;
use crate::sched::env::SchedEnv;

impl SchedEnv {
    /// cpufreq_update_util() on `cpu`, from `cpu` itself; `iowait`:
    /// SCHED_CPUFREQ_IOWAIT.
    #[inline]
    pub(crate) fn cpufreq_update_util(&mut self, cpu: usize, iowait: bool) {
        if self.cpufreq.enabled() {
            self.cpufreq_update(cpu, iowait);
        }
    }

    #[inline(never)]
    fn cpufreq_update(&mut self, cpu: usize, iowait: bool) {
        let c0_ns = self.c0_ns(cpu);
        self.cpufreq.account(cpu, c0_ns);
        let rq = &self.sched.rqs[cpu];
        // effective_cpu_util(): cfs + rt + dl utilisation. Deviation: the
        // deadline tasks' running_bw floor (cpu_bw_dl) is not modelled
        // (sched/deadline.rs).
        let util = (self.sched.cfs_rqs[cpu].avg.util_avg + rq.rt.avg_rt.util_avg + rq.dl.avg_dl.util_avg)
            .min(self.sched.cpu_scale[cpu]) as u32;
        let u = UpdateUtil {
            now: self.now,
            c0_ns,
            iowait,
            util,
            rt_runnable: rq.rt.rt_nr_running > 0,
            tick_ns: self.cfg.tick_ns,
        };
        self.cpufreq.update_util(cpu, &u);
        // The core runs at its busy threads' highest request, within the
        // turbo bin of the package's cores in C0 now.
        let m = &self.machine;
        let active = self.cpufreq.active_cores(m.cpus[cpu].package);
        let core = m.cpus[cpu].core;
        for i in 0..m.core_cpus[core].len() {
            let s = self.machine.core_cpus[core][i];
            let threads = self.machine.core_cpus[core].iter().copied().filter(|&t| t == s || self.c0(t));
            let khz = self.cpufreq.delivered_khz(threads, active);
            self.cpufreq_set_cur(s, khz);
        }
    }

    /// Every CPU's APERF brought up to now (for a sample or the report).
    pub(crate) fn cpufreq_account_all(&mut self) {
        if !self.cpufreq.enabled() {
            return;
        }
        for cpu in 0..self.cpufreq.cpus.len() {
            let c0_ns = self.c0_ns(cpu);
            self.cpufreq.account(cpu, c0_ns);
        }
        self.cpufreq.integrate_all(self.now);
    }

    /// Per CPU: (C0 ns, APERF, frequency changes) so far.
    pub(crate) fn cpufreq_counters(&self) -> Vec<(u64, u64, u64)> {
        self.cpufreq.cpus.iter().map(|c| (c.c0_ns, c.aperf, c.transitions)).collect()
    }

    /// rq_clock_pelt(): the clock PELT ages `cpu`'s averages by. Without
    /// frequency invariance it is the task clock; with it
    /// (update_rq_clock_pelt(), x86 from 5.7) it advances at the CPU's
    /// frequency over the 4-core turbo while the CPU runs a task, and is
    /// synced to the task clock while it is idle (the lost time shows as
    /// idle time).
    /// Deviation: lost_idle_time (a CPU that was fully busy keeps its
    /// utilization at the maximum across the sync) is not modelled.
    #[inline]
    pub(crate) fn rq_clock_pelt(&self, cpu: usize) -> u64 {
        if !self.cpufreq.invariant {
            return self.now;
        }
        self.rq_clock_pelt_scaled(cpu)
    }

    #[inline(never)]
    fn rq_clock_pelt_scaled(&self, cpu: usize) -> u64 {
        if self.sched.rqs[cpu].curr.is_none() {
            return self.now;
        }
        let c = &self.cpufreq.cpus[cpu];
        let scaled = c.pelt_base + (self.now - c.pelt_at) * self.cpufreq.freq_scale(cpu) / 1024;
        scaled.min(self.now)
    }

    /// `cpu` starts (`busy`) or stops running tasks: its PELT clock is
    /// folded and its core's and package's busy counts follow.
    #[inline]
    pub(crate) fn cpufreq_busy_changed(&mut self, cpu: usize, busy: bool) {
        if self.cpufreq.enabled() {
            self.cpufreq_busy_changed_slow(cpu, busy);
        }
    }

    #[inline(never)]
    fn cpufreq_busy_changed_slow(&mut self, cpu: usize, busy: bool) {
        self.clock_pelt_fold(cpu);
        let info = self.machine.cpus[cpu];
        self.cpufreq.busy_changed(info.core, info.package, busy, self.now);
    }

    /// Fold `cpu`'s PELT clock at now, before its frequency or its
    /// idleness changes.
    #[inline]
    pub(crate) fn clock_pelt_fold(&mut self, cpu: usize) {
        if self.cpufreq.invariant {
            let v = self.rq_clock_pelt_scaled(cpu);
            let c = &mut self.cpufreq.cpus[cpu];
            c.pelt_base = v;
            c.pelt_at = self.now;
        }
    }

    /// Whether `cpu` is in C0: running a task, or not yet back in its idle
    /// state after one.
    fn c0(&self, cpu: usize) -> bool {
        self.sched.rqs[cpu].curr.is_some()
    }

    /// `cpu`'s time in C0 so far (MPERF's time): all but its idle and
    /// iowait time.
    fn c0_ns(&mut self, cpu: usize) -> u64 {
        self.sched.account_cpu(cpu, self.now);
        let a = &self.sched.rqs[cpu].acct;
        a.total() - a.idle - a.iowait
    }

    /// `cpu` runs at `khz` from now: its task is charged the time so far at
    /// the old speed, and the end of its op moves.
    fn cpufreq_set_cur(&mut self, cpu: usize, khz: u32) {
        if self.cpufreq.cpus[cpu].cur_khz == khz {
            return;
        }
        self.update_curr(cpu);
        let c0_ns = self.c0_ns(cpu);
        self.cpufreq.account(cpu, c0_ns);
        self.clock_pelt_fold(cpu);
        self.cpufreq.set_cur(cpu, khz, self.now);
        self.sched.rqs[cpu].cpu_speed = self.cpufreq.scale[cpu];
        self.trace.cpu_frequency(self.now, cpu, self.sched.rqs[cpu].curr.map(|t| &self.sched.tasks[t]).into(), khz);
        // Only an op timer already armed moves (one not armed belongs to a
        // task between ops, which arms its own).
        if self.sched.rqs[cpu].op_key.is_some() {
            self.arm_op_timer(cpu);
        }
    }
}
