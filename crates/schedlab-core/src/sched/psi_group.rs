//! Pressure stall information: the state (sched/psi.rs drives it).
//!
//! Pressure stall information (kernel/sched/psi.c, 4.20+; `kernel.psi`):
//! for each CPU, the time some or all of its non-idle tasks were stalled
//! on the CPU, on memory or on IO, aggregated over the CPUs every 2 s into
//! the totals and the 10 s, 60 s and 300 s running averages that
//! /proc/pressure/{cpu,memory,io} print.
//!
//! Each CPU keeps its task counts (psi_group_cpu): NR_IOWAIT (tasks that
//! went to sleep in io_schedule() on it until their wakeup: the
//! runqueue's nr_iowait), NR_MEMSTALL (tasks between psi_memstall_enter
//! and _leave: __perform_reclaim's direct reclaim and kswapd's
//! balance_pgdat; not throttle_direct_reclaim's sleep), NR_RUNNING (the
//! runqueue's tasks, curr included), NR_MEMSTALL_RUNNING (the runnable
//! memstall tasks) and whether a task is on the CPU. From them,
//! test_state() (eb414681d5a0, 4.20, and its changes):
//!
//! * IO some: NR_IOWAIT; full: NR_IOWAIT and no task runnable.
//! * MEM some: NR_MEMSTALL; full: no task runnable (4.20), or every
//!   runnable task a memstall one (5.17, cb0e52b77487); and from 5.13
//!   (7fae6c8171d2) whenever the task on the CPU is in a memstall.
//! * CPU some: more than one runnable task (4.20), more than the one on
//!   the CPU (5.7, b05e75d61138); full (5.13, e7fcd7622823): runnable
//!   tasks and none on the CPU.
//! * NONIDLE: any of the counts.
//!
//! Every PSI_FREQ (2 x HZ + 1 jiffies) the times are collected: the
//! system's stall time of a state over the period is each CPU's time in it
//! weighted by the CPU's non-idle time in jiffies, over the sum of the
//! weights (collect_percpu_times), and each average moves by calc_load's
//! fixed point (FIXED_1 = 2048; EXP_10s 1677, EXP_60s 1981, EXP_300s 2034)
//! toward the period's percentage, the sample capped at the period
//! (update_averages, calc_avgs). /proc/pressure/cpu has no "full" line
//! before 5.13 and prints zeros for the system's from 5.19 (890d550d7dba).
//!
//! Deviation: the averaging runs exactly on its period (the kernel's is a
//! delayed work, late by its wakeup); before 5.13 a memstall task on the
//! CPU makes MEM full from the moment it runs (4.20's psi_memstall_tick
//! added at most a jiffy per tick); no IRQ pressure (6.1,
//! CONFIG_IRQ_TIME_ACCOUNTING); no per-cgroup pressure; a sched_delayed
//! task (EEVDF's delayed dequeue) counts as runnable.

/// enum psi_states, without PSI_IRQ_FULL.
pub const IO_SOME: usize = 0;
pub const IO_FULL: usize = 1;
pub const MEM_SOME: usize = 2;
pub const MEM_FULL: usize = 3;
pub const CPU_SOME: usize = 4;
pub const CPU_FULL: usize = 5;
pub const NONIDLE: usize = 6;
const NR_STATES: usize = 7;

/// loadavg.h's fixed point and psi.c's decay factors (1/exp(2s/10s) etc.).
pub const FIXED_1: u64 = 1 << 11;
const EXP: [u64; 3] = [1677, 1981, 2034];

/// One CPU's counts and state clock (struct psi_group_cpu).
#[derive(Debug, Clone, Default)]
pub struct PsiCpu {
    pub nr_memstall: u32,
    pub nr_memstall_running: u32,
    /// The states it is in (bit per state) since `state_start`.
    pub state_mask: u8,
    pub state_start: u64,
    /// Time in each state up to `state_start`, ns.
    pub times: [u64; NR_STATES],
    /// `times` as the last collection saw them (times_prev).
    pub times_prev: [u64; NR_STATES],
}

/// What test_state() looks like in the version.
#[derive(Debug, Clone, Copy, Default)]
pub struct PsiRules {
    /// CPU some is NR_RUNNING > NR_ONCPU (5.7+), not > 1.
    pub cpu_some_oncpu: bool,
    /// CPU full exists (5.13+), and the task on the CPU in a memstall
    /// makes MEM full.
    pub v5_13: bool,
    /// MEM full when every runnable task is a memstall one (5.17+).
    pub mem_full_running: bool,
    /// The system's cpu "full" line is zeros (5.19+).
    pub cpu_full_zero: bool,
}

impl PsiRules {
    pub fn of(v: &crate::kernel::KernelVersion) -> Self {
        PsiRules {
            cpu_some_oncpu: v.at_least(5, 7),
            v5_13: v.at_least(5, 13),
            mem_full_running: v.at_least(5, 17),
            cpu_full_zero: v.at_least(5, 19),
        }
    }
}

/// The system's pressure (psi_system).
#[derive(Debug, Clone, Default)]
pub struct Psi {
    pub enabled: bool,
    /// The version's rules (see the module's head).
    pub rules: PsiRules,
    /// PSI_FREQ in ns.
    pub period: u64,
    pub cpus: Vec<PsiCpu>,
    /// When the next collection and averaging run.
    pub next_update: u64,
    pub last_update: u64,
    /// Stall time of each state but NONIDLE, ns (group->total[PSI_AVGS]).
    pub total: [u64; NR_STATES - 1],
    /// `total` at the last averaging (avg_total).
    pub avg_total: [u64; NR_STATES - 1],
    /// avg10, avg60, avg300 of each state, FIXED_1 x percent.
    pub avg: [[u64; 3]; NR_STATES - 1],
}

impl Psi {
    /// `tick_ns`: a jiffy. Off: every call is a no-op.
    /// For the scenario's kernel (`kernel.psi`).
    pub fn for_kernel(k: &crate::kernel::KernelConfig, nr_cpus: usize) -> Self {
        Psi::new(k.psi, PsiRules::of(&k.version), nr_cpus, k.tick_ns, k.hz as u64)
    }

    pub fn new(enabled: bool, rules: PsiRules, nr_cpus: usize, tick_ns: u64, hz: u64) -> Self {
        if !enabled {
            return Psi::default();
        }
        // PSI_FREQ (2*HZ+1) jiffies.
        let period = (2 * hz + 1) * tick_ns;
        Psi { enabled, rules, period, cpus: vec![PsiCpu::default(); nr_cpus], next_update: period, ..Psi::default() }
    }

    /// test_states() for one CPU's counts.
    pub(crate) fn states(&self, c: &PsiCpu, nr_running: u32, nr_iowait: u32, oncpu: bool, curr_memstall: bool) -> u8 {
        let r = self.rules;
        let mut m = 0u8;
        if nr_iowait > 0 {
            m |= 1 << IO_SOME;
            if nr_running == 0 {
                m |= 1 << IO_FULL;
            }
        }
        if c.nr_memstall > 0 {
            m |= 1 << MEM_SOME;
            let all = if r.mem_full_running { nr_running == c.nr_memstall_running } else { nr_running == 0 };
            if all || (curr_memstall && (oncpu || !r.v5_13)) {
                m |= 1 << MEM_FULL;
            }
        }
        if nr_running > if r.cpu_some_oncpu { oncpu as u32 } else { 1 } {
            m |= 1 << CPU_SOME;
        }
        if r.v5_13 && nr_running > 0 && !oncpu {
            m |= 1 << CPU_FULL;
        }
        if nr_iowait > 0 || c.nr_memstall > 0 || nr_running > 0 {
            m |= 1 << NONIDLE;
        }
        m
    }

    /// `cpu`'s times to `at` (the open stretch since its last change
    /// included).
    pub(crate) fn times_at(c: &PsiCpu, at: u64) -> [u64; NR_STATES] {
        let mut t = c.times;
        let open = at.saturating_sub(c.state_start);
        for (s, v) in t.iter_mut().enumerate() {
            if c.state_mask & (1 << s) != 0 {
                *v += open;
            }
        }
        t
    }

    /// collect_percpu_times() at `at`: each state's stall time since the
    /// last collection, the CPUs weighted by their non-idle jiffies.
    fn collect(&mut self, at: u64, tick_ns: u64) {
        let mut deltas = [0u128; NR_STATES - 1];
        let mut nonidle_total = 0u128;
        for c in &mut self.cpus {
            let now = Self::times_at(c, at);
            let mut d = [0u64; NR_STATES];
            for s in 0..NR_STATES {
                d[s] = now[s] - c.times_prev[s];
            }
            c.times_prev = now;
            // nsecs_to_jiffies(times[PSI_NONIDLE]).
            let nonidle = (d[NONIDLE] / tick_ns.max(1)) as u128;
            for s in 0..NR_STATES - 1 {
                deltas[s] += d[s] as u128 * nonidle;
            }
            nonidle_total += nonidle;
        }
        for (t, d) in self.total.iter_mut().zip(deltas) {
            *t += (d / nonidle_total.max(1)) as u64;
        }
    }

    /// update_averages() at `at`, one period after the last.
    fn average(&mut self, at: u64) {
        let period = at - self.last_update;
        self.last_update = at;
        for s in 0..NR_STATES - 1 {
            let sample = (self.total[s] - self.avg_total[s]).min(period);
            self.avg_total[s] += sample;
            // calc_avgs(): the period's percentage, then calc_load().
            let pct = sample * 100 / period.max(1) * FIXED_1;
            for (w, e) in EXP.iter().enumerate() {
                let load = self.avg[s][w];
                let mut next = load * e + pct * (FIXED_1 - e);
                if pct >= load {
                    next += FIXED_1 - 1;
                }
                self.avg[s][w] = next / FIXED_1;
            }
        }
    }

    /// Run every collection and averaging due by `now`.
    #[inline]
    pub(crate) fn catch_up(&mut self, now: u64, tick_ns: u64) {
        if !self.enabled {
            return;
        }
        while now >= self.next_update {
            let at = self.next_update;
            self.collect(at, tick_ns);
            self.average(at);
            self.next_update += self.period;
        }
    }

    /// /proc/pressure as read at `now`: the totals collected to now.
    pub fn read(&self, now: u64, tick_ns: u64) -> Psi {
        if !self.enabled {
            return Psi::default();
        }
        let mut p = self.clone();
        p.catch_up(now, tick_ns);
        p.collect(now, tick_ns);
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_period_of_stall_moves_the_averages_by_their_decay() {
        let mut p = Psi::new(true, PsiRules::of(&crate::kernel::KernelVersion::new(6, 1, 0)), 1, 4_000_000, 250);
        // One CPU in CPU some (and non-idle) for the whole first period.
        p.cpus[0].state_mask = (1 << CPU_SOME) | (1 << NONIDLE);
        p.catch_up(p.period, 4_000_000);
        assert_eq!(p.total[CPU_SOME], p.period);
        // 100 % x FIXED_1 x (1 - 1677/2048), rounded up: 18.12 %.
        assert_eq!(p.avg[CPU_SOME][0], (100 * FIXED_1 * (FIXED_1 - 1677)).div_ceil(FIXED_1));
        assert_eq!(p.total[IO_SOME], 0);
    }

    #[test]
    fn cpus_are_weighted_by_their_non_idle_time() {
        let mut p = Psi::new(true, PsiRules::of(&crate::kernel::KernelVersion::new(6, 1, 0)), 2, 4_000_000, 250);
        // CPU 0 stalled and busy all period; CPU 1 idle: the system stall
        // is CPU 0's whole period (an idle CPU weighs nothing).
        p.cpus[0].state_mask = (1 << IO_SOME) | (1 << NONIDLE);
        p.catch_up(p.period, 4_000_000);
        assert_eq!(p.total[IO_SOME], p.period);
    }
}
