//! Models CPU frequency (drivers/cpufreq/, kernel/sched/cpufreq_schedutil.c
//! and the hardware under them): each CPU requests a P-state from its
//! governor, its core runs at the highest request of its threads capped by
//! the package's turbo bins, and the work of a task runs at that speed.
//! The processor's table is the machine's (`machine/processors.rs`); the
//! governors are `governors.rs`. This room knows nothing of the runqueues:
//! the scheduler calls it at the points where the kernel calls
//! cpufreq_update_util() (sched/cpufreq.rs) and passes what it measured.
//!
//! APERF and MPERF are kept as the model's own counters: a CPU's time in C0
//! (its non-idle time, interrupts included) and that time weighted by the
//! frequency it ran at. intel_pstate's busy fraction (ΔMPERF/ΔTSC), its
//! average P-state (ΔAPERF/ΔMPERF) and turbostat's columns come from them.
//!
//! Work is measured in ns at the processor's highest frequency (the
//! 1-core turbo, cpuinfo.max_freq): an op of 1 ms takes 1 ms on a CPU at
//! max_freq and 2.58 ms at 1.2 GHz on a 3.1 GHz part. Without a processor
//! (`machine.cpufreq = "none"`) every CPU runs at that speed, as before
//! this room existed.
//!
//! A task's `memory_bound` share of its work (cache misses to DRAM, whose
//! latency does not shrink with the core clock) takes the same time at
//! every frequency (`task_speed`).
//!
//! Deviation: the share is the task's, for all its ops. The scheduler's own costs (the
//! context switch, the cache refill after a migration, the IPI; the
//! task's `cs_debt`) and interrupt handlers are charged as wall time at
//! every frequency: they were measured as times, and the refill is memory
//! bound.

pub mod governors;

use crate::machine::processors::Processor;

/// SCHED_CAPACITY_SCALE: a CPU's speed at max_freq.
pub const SCALE: u32 = 1024;

pub use crate::kernel::CpufreqDriver as Driver;
pub use crate::kernel::CpufreqGovernor as Governor;

/// One CPU's frequency state (struct cpudata of intel_pstate, struct
/// sugov_cpu, and the hardware's counters).
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuFreqCpu {
    /// The frequency this CPU requests (PERF_CTL), kHz.
    pub req_khz: u32,
    /// The frequency it runs at, kHz.
    pub cur_khz: u32,
    /// C0 time accounted into `aperf` so far, ns (MPERF's time).
    pub c0_ns: u64,
    /// C0 time weighted by frequency, ns x MHz (APERF's cycles).
    pub aperf: u64,
    /// The counters at the governor's last sample (intel_pstate's
    /// struct sample; schedutil's last_freq_update_time).
    pub sample_at: u64,
    pub sample_c0: u64,
    pub sample_aperf: u64,
    /// The last cpufreq_update_util() call (intel_pstate's last_update).
    pub last_update: u64,
    /// intel_pstate's iowait_boost, 1/1024ths (schedutil's iowait_boost too).
    pub iowait_boost: u32,
    /// Frequency changes (cpu_frequency events).
    pub transitions: u64,
    /// rq->clock_pelt as of `pelt_at` (wall ns), while the CPU runs a task
    /// (sched/cpufreq.rs rq_clock_pelt()).
    pub pelt_base: u64,
    pub pelt_at: u64,
}

/// The machine's CPU frequencies: the processor, the governor and each
/// CPU's state; `scale` is what the scheduler's hot path reads.
#[derive(Debug, Clone, Default)]
pub struct CpuFreq {
    pub processor: Option<&'static Processor>,
    pub governor: Option<Governor>,
    pub driver: Option<Driver>,
    /// x86 frequency invariance (5.7+, 1567c3e3467c): PELT's clock runs at
    /// the CPU's frequency over the 4-core turbo, and schedutil uses
    /// max_freq, not the current frequency, in its formula.
    pub invariant: bool,
    /// schedutil's rate_limit_us, ns.
    pub rate_limit_ns: u64,
    pub cpus: Vec<CpuFreqCpu>,
    /// Each CPU's speed, cur_khz / max_freq in 1/1024ths (SCALE without a
    /// processor).
    pub scale: Vec<u32>,
    /// Per core: its threads running a task; per package: its cores with
    /// one (the turbo bins' active cores). Kept by the scheduler as CPUs
    /// leave and enter idle (`busy_changed`).
    pub core_busy: Vec<u8>,
    pub package_active: Vec<u16>,
    /// SMT threads per core (a core's CPUs are core x threads ..; see
    /// machine/mod.rs's numbering).
    pub threads_per_core: usize,
    /// Per core: its energy so far, ns x mW, integrated up to `core_mark`.
    pub core_energy: Vec<u128>,
    pub core_mark: Vec<u64>,
}

impl CpuFreq {
    /// `nr_cpus` CPUs of `processor` under `governor` of `driver` (None: no
    /// processor, every CPU at SCALE), `threads_per_core` to a core. They boot at the lowest P-state, where
    /// intel_pstate's init leaves them (intel_pstate_get_cpu_pstates() ->
    /// intel_pstate_set_min_pstate()); performance and HWP at the highest.
    pub fn new(
        processor: Option<&'static Processor>,
        (driver, governor): (Driver, Governor),
        invariant: bool,
        rate_limit_ns: u64,
        nr_cpus: usize,
        threads_per_core: usize,
    ) -> Self {
        let Some(p) = processor else {
            return CpuFreq { scale: vec![SCALE; nr_cpus], ..Default::default() };
        };
        // Under HWP (active mode's powersave) the hardware starts high; the
        // governors start from the lowest P-state.
        let boot = if governor == Governor::Performance
            || (p.hwp && driver == Driver::IntelPstate && governor == Governor::Powersave)
        {
            p.max_khz()
        } else {
            p.min_khz
        };
        let cpu = CpuFreqCpu { req_khz: boot, cur_khz: boot, ..Default::default() };
        let mut f = CpuFreq {
            processor,
            governor: Some(governor),
            driver: Some(driver),
            invariant,
            rate_limit_ns,
            cpus: vec![cpu; nr_cpus],
            scale: vec![SCALE; nr_cpus],
            core_busy: vec![0; nr_cpus / threads_per_core],
            package_active: Vec::new(),
            threads_per_core,
            core_energy: vec![0; nr_cpus / threads_per_core],
            core_mark: vec![0; nr_cpus / threads_per_core],
        };
        for c in 0..nr_cpus {
            f.scale[c] = f.scale_of(boot);
        }
        f
    }

    #[inline]
    pub fn enabled(&self) -> bool {
        self.processor.is_some()
    }

    /// `core` of `package` has one thread more (`busy`) or one fewer
    /// running a task.
    pub fn busy_changed(&mut self, core: usize, package: usize, busy: bool, now: u64) {
        self.integrate(core, now);
        if self.package_active.len() <= package {
            self.package_active.resize(package + 1, 0);
        }
        let c = &mut self.core_busy[core];
        if busy {
            *c += 1;
            if *c == 1 {
                self.package_active[package] += 1;
            }
        } else {
            *c -= 1;
            if *c == 0 {
                self.package_active[package] -= 1;
            }
        }
    }

    /// Bring `core`'s energy up to `now` at the power of its state since
    /// its last change.
    ///
    /// Deviation: a core's idle power is one figure, whatever C-state its
    /// threads are in; a busy core runs at its threads' highest frequency.
    pub fn integrate(&mut self, core: usize, now: u64) {
        let Some(p) = self.processor else { return };
        let dt = now.saturating_sub(self.core_mark[core]);
        if dt == 0 {
            return;
        }
        let mw = if self.core_busy[core] > 0 {
            let t = self.threads_per_core;
            let khz = self.cpus[core * t..core * t + t].iter().map(|c| c.cur_khz).max().unwrap_or(p.min_khz);
            p.power.core_c0_mw(khz)
        } else {
            p.power.core_idle_mw as u64
        };
        self.core_energy[core] += dt as u128 * mw as u128;
        self.core_mark[core] = now;
    }

    /// Every core's energy brought up to `now`.
    pub fn integrate_all(&mut self, now: u64) {
        for core in 0..self.core_energy.len() {
            self.integrate(core, now);
        }
    }

    /// The active cores of `package`.
    pub fn active_cores(&self, package: usize) -> usize {
        self.package_active.get(package).copied().unwrap_or(0) as usize
    }

    /// A frequency as a speed: kHz / max_freq in 1/1024ths.
    fn scale_of(&self, khz: u32) -> u32 {
        let max = self.processor.map_or(1, |p| p.max_khz()) as u64;
        ((khz as u64 * SCALE as u64) / max).max(1) as u32
    }

    /// arch_scale_freq_capacity(): `cpu`'s frequency over the invariance
    /// maximum (the 4-core turbo), in 1/1024ths, at most 1024.
    ///
    /// Deviation: the kernel computes it at each tick from the tick's
    /// ΔAPERF/ΔMPERF (the average frequency over the tick); the model takes
    /// the current frequency.
    #[inline]
    pub fn freq_scale(&self, cpu: usize) -> u64 {
        let p = self.processor.expect("a processor");
        (self.cpus[cpu].cur_khz as u64 * SCALE as u64 / p.invariance_max_khz() as u64).min(SCALE as u64)
    }

    /// Bring `cpu`'s APERF up to date: it spent C0 time up to `c0_ns` at
    /// its current frequency.
    pub fn account(&mut self, cpu: usize, c0_ns: u64) {
        let c = &mut self.cpus[cpu];
        let d = c0_ns.saturating_sub(c.c0_ns);
        c.aperf += d * (c.cur_khz as u64 / 1000);
        c.c0_ns = c.c0_ns.max(c0_ns);
    }

    /// The frequency a CPU runs at: the highest request of its core's
    /// threads in C0 (`threads`: itself and its busy SMT siblings), capped
    /// by the turbo bin of `active` cores in C0 in its package.
    ///
    /// Deviation: the turbo bin and the siblings' requests are taken at
    /// the CPU's own cpufreq callbacks, not followed as cores and threads
    /// enter and leave C0.
    pub fn delivered_khz(&self, threads: impl Iterator<Item = usize>, active: usize) -> u32 {
        let p = self.processor.expect("a processor");
        let req = threads.map(|c| self.cpus[c].req_khz).max().unwrap_or(p.min_khz);
        req.min(p.turbo_limit_khz(active))
    }

    /// `cpu` now runs at `khz`; true if that changed. The caller has
    /// brought its APERF up to date (`account`) and charged its running
    /// task the time at the old speed.
    pub fn set_cur(&mut self, cpu: usize, khz: u32, now: u64) -> bool {
        if self.cpus[cpu].cur_khz == khz {
            return false;
        }
        self.integrate(cpu / self.threads_per_core, now);
        self.cpus[cpu].cur_khz = khz;
        self.cpus[cpu].transitions += 1;
        self.scale[cpu] = self.scale_of(khz);
        true
    }
}

/// The speed of a task whose work is `memory_bound` (1/1024ths) bound by
/// memory, on a CPU at `scale`: that share takes the same time at every
/// frequency, the rest 1024 / scale times as long as at max_freq.
///
/// `stall` (1/1024ths, SCALE: none) stretches that share further: the
/// memory bandwidth room's slowdown of memory-bound work on a saturated
/// node (membw/).
#[inline]
pub fn task_speed(scale: u32, memory_bound: u16, stall: u32) -> u32 {
    if memory_bound == 0 || (scale == SCALE && stall == SCALE) {
        return scale;
    }
    let (s, m) = (scale as u64, memory_bound as u64);
    if stall == SCALE {
        let den = (SCALE as u64 - m) * SCALE as u64 + m * s;
        return ((SCALE as u64 * SCALE as u64 * s) / den).max(1) as u32;
    }
    // One unit of work: (1 - m) / s of compute, m * stall of memory.
    let den = (SCALE as u64 - m) * SCALE as u64 * SCALE as u64 + m * stall as u64 * s;
    ((SCALE as u64 * SCALE as u64 * SCALE as u64 * s) / den).max(1) as u32
}

/// Work done in `wall_ns` at speed `scale` (1/1024ths of max_freq).
#[inline]
pub fn work_in(wall_ns: u64, scale: u32) -> u64 {
    if scale == SCALE {
        wall_ns
    } else {
        wall_ns * scale as u64 / SCALE as u64
    }
}

/// Wall time `work` takes at speed `scale`, rounded up (so that
/// `work_in(wall_for(w, s), s) >= w`).
#[inline]
pub fn wall_for(work: u64, scale: u32) -> u64 {
    if scale == SCALE {
        work
    } else {
        (work * SCALE as u64).div_ceil(scale as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::processors::E5_2670_V3;

    #[test]
    fn work_stretches_with_frequency_and_rounds_so_an_op_ends_when_armed() {
        let f = CpuFreq::new(Some(&E5_2670_V3), (Driver::IntelPstate, Governor::Powersave), false, 0, 2, 1);
        // Booted at the lowest P-state: 1.2 of 3.1 GHz.
        assert_eq!(f.cpus[0].cur_khz, 1_200_000);
        let s = f.scale[0];
        assert_eq!(s, 1_200_000 * 1024 / 3_100_000);
        for w in [1, 999, 1_000_000, 123_456_789] {
            assert!(work_in(wall_for(w, s), s) >= w);
            assert!(work_in(wall_for(w, s) - 1, s) < w);
        }
        assert_eq!(wall_for(1000, SCALE), 1000);
        assert_eq!(
            CpuFreq::new(None, (Driver::IntelPstate, Governor::Powersave), false, 0, 3, 1).scale,
            vec![SCALE; 3]
        );
        // Half the work bound by memory at half speed: 1 / (0.5 / 0.5 + 0.5) = 2/3.
        assert_eq!(task_speed(512, 512, SCALE), 682);
        // Fully memory-bound at twice the memory time: half speed at any frequency.
        assert_eq!(task_speed(512, 1024, 2 * SCALE), 512);
        assert_eq!(task_speed(SCALE, 1024, 2 * SCALE), 512);
        assert_eq!(task_speed(512, 1024, SCALE), SCALE);
        assert_eq!(task_speed(512, 0, SCALE), 512);
        assert_eq!(task_speed(SCALE, 300, SCALE), SCALE);
    }

    #[test]
    fn a_core_runs_at_its_threads_highest_request_within_the_turbo_bin() {
        let mut f = CpuFreq::new(Some(&E5_2670_V3), (Driver::IntelPstate, Governor::Powersave), false, 0, 4, 2);
        f.cpus[0].req_khz = 1_200_000;
        f.cpus[1].req_khz = 3_100_000;
        assert_eq!(f.delivered_khz([0, 1].into_iter(), 1), 3_100_000);
        assert_eq!(f.delivered_khz([0, 1].into_iter(), 12), 2_600_000);
        // An idle sibling's request does not count.
        assert_eq!(f.delivered_khz([0].into_iter(), 1), 1_200_000);
        f.account(0, 1_000);
        assert_eq!(f.cpus[0].aperf, 1_000 * 1_200);
    }
}
