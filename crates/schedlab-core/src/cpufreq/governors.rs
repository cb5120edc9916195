//! The governors: what a CPU requests when the scheduler calls
//! cpufreq_update_util() on it (sched/cpufreq.rs). Sources:
//! docs/notes/cpufreq-research.md §2 and §3 (drivers/cpufreq/intel_pstate.c
//! and kernel/sched/cpufreq_schedutil.c as of 5.5).
//!
//! * performance: the highest P-state, always.
//! * powersave on a part with HWP (intel_pstate active, HWP): the driver
//!   programs only the limits and the hardware picks.
//!   Deviation: the hardware's choice is taken as the highest P-state the
//!   turbo bins allow whenever the core is in C0 (its ramp after an idle
//!   exit, in the milliseconds with the default EPP, is not modelled: no
//!   measured figure was found).
//! * powersave without HWP (intel_pstate active, 4.14–5.x): every 10 ms at
//!   most, from a callback on the CPU itself (remote ones are dropped), the
//!   driver samples APERF/MPERF/TSC: busy = ΔMPERF/ΔTSC (the share of the
//!   window in C0, idle included), target = 1.25 x the 1-core turbo ratio x
//!   busy, at least the minimum ratio; if the P-state the CPU really ran at
//!   (base x ΔAPERF/ΔMPERF) was higher, half the difference is added back;
//!   the request holds until the next sample, across idle.
//! * schedutil (intel_cpufreq, passive): at most every rate_limit_us, the
//!   next frequency is 1.25 x f x util / max, f being max_freq with
//!   frequency invariance (x86 from 5.7) and the current frequency without
//!   it; resolved to the lowest P-state at or above it; a single-CPU policy
//!   that has not idled since its last update does not lower its frequency.
//!   On an invariant kernel the utilization itself is frequency invariant
//!   (PELT's clock runs at the CPU's speed: sched/cpufreq.rs).

use crate::cpufreq::{CpuFreq, Driver, Governor, SCALE};

/// INTEL_PSTATE_SAMPLING_INTERVAL.
pub const INTEL_PSTATE_SAMPLING_INTERVAL_NS: u64 = 10_000_000;
/// The size of one P-state ratio step (core_get_scaling(): 100 MHz).
pub const RATIO_KHZ: u32 = 100_000;
/// ONE_EIGHTH_FP / IOWAIT_BOOST_MIN: the first iowait boost, 1/8.
const IOWAIT_BOOST_MIN: u32 = SCALE / 8;

/// What the scheduler knows when it calls cpufreq_update_util().
#[derive(Debug, Clone, Copy, Default)]
pub struct UpdateUtil {
    pub now: u64,
    /// The CPU's C0 time so far, ns (its APERF already brought up to it).
    pub c0_ns: u64,
    /// SCHED_CPUFREQ_IOWAIT: a task that slept in io_schedule() was just
    /// enqueued.
    pub iowait: bool,
    /// schedutil_cpu_util(): the CFS and RT utilization, 0..=1024.
    pub util: u32,
    /// An RT task is runnable (without uclamp schedutil then goes to max).
    pub rt_runnable: bool,
    pub tick_ns: u64,
}

impl CpuFreq {
    /// cpufreq_update_util() on `cpu`, called on the CPU itself: the
    /// governor may change the CPU's request. True if it did.
    pub fn update_util(&mut self, cpu: usize, u: &UpdateUtil) -> bool {
        let p = self.processor.expect("a processor");
        let acpi = self.driver == Some(Driver::AcpiCpufreq);
        let req = match self.governor.expect("a governor") {
            Governor::Performance => p.max_khz(),
            // The generic powersave governor: the lowest P-state.
            Governor::Powersave if acpi => p.min_khz,
            Governor::Powersave if p.hwp => p.max_khz(),
            Governor::Powersave => match self.intel_pstate_update_util(cpu, u) {
                Some(r) => r,
                None => return false,
            },
            Governor::Schedutil => match self.sugov_update_single(cpu, u) {
                Some(r) => r,
                None => return false,
            },
            Governor::Ondemand => match self.od_update(cpu, u) {
                Some(r) => r,
                None => return false,
            },
        };
        let c = &mut self.cpus[cpu];
        if c.req_khz == req {
            return false;
        }
        c.req_khz = req;
        true
    }

    /// The iowait boost of both governors: 1/8 on an IOWAIT update after
    /// more than a tick, doubled on each further one up to 1, halved on
    /// updates without the flag, dropped after more than a tick.
    fn iowait_boost_update(&mut self, cpu: usize, u: &UpdateUtil) {
        let c = &mut self.cpus[cpu];
        let idle_gap = u.now.saturating_sub(c.last_update) > u.tick_ns;
        if u.iowait {
            c.iowait_boost = if idle_gap || c.iowait_boost < IOWAIT_BOOST_MIN {
                IOWAIT_BOOST_MIN
            } else {
                (c.iowait_boost * 2).min(SCALE)
            };
        } else if c.iowait_boost > 0 {
            c.iowait_boost = if idle_gap { 0 } else { c.iowait_boost / 2 };
        }
        c.last_update = u.now;
    }

    /// Take a sample of `cpu`'s counters if `interval` has passed since the
    /// last one: (ΔTSC, ΔMPERF, ΔAPERF) as (ns, C0 ns, C0 ns x MHz). None
    /// too early, and for the first sample (nothing to compare with).
    fn sample(&mut self, cpu: usize, now: u64, interval: u64) -> Option<(u64, u64, u64)> {
        let c = &mut self.cpus[cpu];
        let first = c.sample_at == 0 && c.sample_c0 == 0;
        if !first && now.saturating_sub(c.sample_at) < interval {
            return None;
        }
        let d = (now - c.sample_at, c.c0_ns - c.sample_c0, c.aperf - c.sample_aperf);
        c.sample_at = now;
        c.sample_c0 = c.c0_ns;
        c.sample_aperf = c.aperf;
        (!first && d.0 > 0).then_some(d)
    }

    /// intel_pstate_update_util() and get_target_pstate() (non-HWP active
    /// mode): the new request, or None if no sample was due.
    fn intel_pstate_update_util(&mut self, cpu: usize, u: &UpdateUtil) -> Option<u32> {
        self.iowait_boost_update(cpu, u);
        let p = self.processor.expect("a processor");
        let (tsc, mperf, aperf) = self.sample(cpu, u.now, INTEL_PSTATE_SAMPLING_INTERVAL_NS)?;
        // busy_frac in 1/1024ths, raised to the iowait boost, which halves.
        let c = &mut self.cpus[cpu];
        let busy = ((mperf * SCALE as u64) / tsc).max(c.iowait_boost as u64);
        c.iowait_boost /= 2;
        let turbo = (p.max_khz() / RATIO_KHZ) as u64;
        let mut target = ((turbo + (turbo >> 2)) * busy / SCALE as u64) as u32;
        let min = p.min_khz / RATIO_KHZ;
        target = target.max(min);
        // get_avg_pstate(): the ratio the CPU really ran at in C0.
        if let Some(mhz) = aperf.checked_div(mperf) {
            let avg = mhz as u32 * 1000 / RATIO_KHZ;
            if avg > target {
                target += (avg - target) >> 1;
            }
        }
        Some(target.clamp(min, turbo as u32) * RATIO_KHZ)
    }

    /// sugov_update_single(): the new request, or None if the rate limit
    /// holds it.
    fn sugov_update_single(&mut self, cpu: usize, u: &UpdateUtil) -> Option<u32> {
        self.iowait_boost_update(cpu, u);
        let p = self.processor.expect("a processor");
        let (tsc, mperf, _) = self.sample(cpu, u.now, self.rate_limit_ns)?;
        let c = &mut self.cpus[cpu];
        let boost = c.iowait_boost;
        c.iowait_boost /= 2;
        let max = p.max_khz() as u64;
        let cur = c.cur_khz as u64;
        let next = if u.rt_runnable {
            max
        } else {
            let f = if self.invariant { max } else { cur };
            let util = (u.util as u64).max(boost as u64);
            (f + (f >> 2)) * util / SCALE as u64
        };
        // CPUFREQ_RELATION_L: the lowest P-state at or above it.
        let ratio = (next.div_ceil(RATIO_KHZ as u64) as u32).clamp(p.min_khz / RATIO_KHZ, p.max_khz() / RATIO_KHZ);
        let mut next = ratio * RATIO_KHZ;
        if self.driver == Some(Driver::AcpiCpufreq) && next > p.base_khz {
            // acpi-cpufreq's table ends at base + 1 MHz: turbo.
            next = p.max_khz();
        }
        // sugov_cpu_is_busy(): no idle since the last update, no decrease.
        if next < c.req_khz && mperf >= tsc {
            return Some(c.req_khz);
        }
        Some(next)
    }
}

/// ondemand's up_threshold (with idle micro-accounting: 95 %).
pub const OD_UP_THRESHOLD: u64 = 95;

impl CpuFreq {
    /// od_update() (drivers/cpufreq/cpufreq_ondemand.c, 4.x–6.x) on
    /// acpi-cpufreq: once per sampling period, from a callback on the CPU,
    /// the busy share of the period (load, %): above up_threshold the
    /// highest P-state (acpi-cpufreq's base + 1 MHz entry, which lets the
    /// hardware turbo); else min + load x (max − min) / 100 to the closest
    /// P-state (CPUFREQ_RELATION_C), max being that base + 1 MHz entry.
    ///
    /// Deviation: the sampling period is rate_limit_ns (the transition
    /// delay) or two ticks, whichever is longer; sampling_down_factor and
    /// powersave_bias are at their defaults (1, 0).
    fn od_update(&mut self, cpu: usize, u: &UpdateUtil) -> Option<u32> {
        let p = self.processor.expect("a processor");
        let period = self.rate_limit_ns.max(2 * u.tick_ns);
        let (tsc, mperf, _) = self.sample(cpu, u.now, period)?;
        let load = 100 * mperf / tsc;
        if load > OD_UP_THRESHOLD {
            return Some(p.max_khz());
        }
        let (min, max) = (p.min_khz as u64, p.base_khz as u64 + 1000);
        let next = min + load * (max - min) / 100;
        let ratio = ((next + RATIO_KHZ as u64 / 2) / RATIO_KHZ as u64) as u32;
        let next = (ratio * RATIO_KHZ).clamp(p.min_khz, p.base_khz);
        Some(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::processors::E5_2670_V3;

    fn upd(now: u64, c0: u64) -> UpdateUtil {
        UpdateUtil { now, c0_ns: c0, tick_ns: 4_000_000, ..Default::default() }
    }

    #[test]
    fn intel_pstate_follows_the_busy_share_and_holds_half_the_lost_ground() {
        let mut f = CpuFreq::new(Some(&E5_2670_V3), (Driver::IntelPstate, Governor::Powersave), false, 0, 1, 1);
        // First sample at 10 ms: nothing to compare with.
        f.account(0, 10_000_000);
        assert!(!f.update_util(0, &upd(10_000_000, 10_000_000)));
        // Fully busy for the next 10 ms at the lowest (12): 1.25 x 31 = 38 -> 31.
        f.account(0, 20_000_000);
        assert!(f.update_util(0, &upd(20_000_000, 20_000_000)));
        assert_eq!(f.cpus[0].req_khz, 3_100_000);
        f.cpus[0].cur_khz = 3_100_000;
        // Too early: no sample.
        assert!(!f.update_util(0, &upd(25_000_000, 20_000_000)));
        // 10 % busy in the next window, at 31: target 1.25 x 31 x 0.1 = 3 ->
        // min 12; the CPU ran at 31, so 12 + (31 - 12) / 2 = 21.
        f.account(0, 21_500_000);
        f.update_util(0, &upd(35_000_000, 21_500_000));
        assert_eq!(f.cpus[0].req_khz, 2_100_000);
    }

    #[test]
    fn ondemand_goes_to_turbo_above_95_percent_and_scales_below() {
        let mut f = CpuFreq::new(Some(&E5_2670_V3), (Driver::AcpiCpufreq, Governor::Ondemand), false, 10_000_000, 1, 1);
        f.account(0, 0);
        f.update_util(0, &upd(10_000_000, 0));
        // 50 % busy: 1.2 + 0.5 x (2.301 - 1.2) = 1.75 GHz -> 1.8 (closest).
        f.account(0, 5_000_000);
        assert!(f.update_util(0, &upd(20_000_000, 5_000_000)));
        assert_eq!(f.cpus[0].req_khz, 1_800_000);
        // Fully busy: the turbo entry.
        f.account(0, 15_000_000);
        assert!(f.update_util(0, &upd(30_000_000, 15_000_000)));
        assert_eq!(f.cpus[0].req_khz, 3_100_000);
    }

    #[test]
    fn schedutil_asks_for_a_quarter_more_than_the_utilization() {
        let mut f = CpuFreq::new(Some(&E5_2670_V3), (Driver::IntelPstate, Governor::Schedutil), false, 500_000, 1, 1);
        f.account(0, 0);
        f.update_util(0, &upd(1_000_000, 0));
        // Half busy at 2.3 GHz, util 512: 1.25 x 2.3 x 0.5 = 1.44 -> 1.5 GHz.
        f.cpus[0].cur_khz = 2_300_000;
        f.account(0, 500_000);
        let u = UpdateUtil { util: 512, ..upd(2_000_000, 500_000) };
        assert!(f.update_util(0, &u));
        assert_eq!(f.cpus[0].req_khz, 1_500_000);
    }
}
