//! The processors a machine can name (`machine.cpufreq`): the frequencies
//! its P-states span, its turbo frequency by the number of active cores
//! (MSR_TURBO_RATIO_LIMIT), and whether it has hardware-managed P-states
//! (HWP, X86_FEATURE_HWP). What the cpufreq room (`cpufreq/`) needs to
//! run a CPU at a frequency; docs/notes/cpufreq-research.md §1 has the
//! sources and the reasons for naming each seed machine's processor.

/// One processor model's P-state table (what intel_pstate reads from
/// MSR_PLATFORM_INFO and MSR_TURBO_RATIO_LIMIT at boot), in kHz.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Processor {
    /// The name `machine.cpufreq` takes.
    pub name: &'static str,
    /// The marketing name.
    pub model: &'static str,
    /// Maximum efficiency ratio (MSR_PLATFORM_INFO bits 47:40): intel_pstate's
    /// min_pstate.
    pub min_khz: u32,
    /// Maximum non-turbo ratio (MSR_PLATFORM_INFO bits 15:8): the base
    /// frequency, MPERF's rate.
    pub base_khz: u32,
    /// The turbo frequency with 1, 2, ... cores of the package active; the
    /// last entry holds for every larger count (MSR_TURBO_RATIO_LIMIT).
    pub turbo_khz: &'static [u32],
    /// X86_FEATURE_HWP: the hardware picks the frequency (intel_pstate's
    /// active mode programs only its limits).
    pub hwp: bool,
    /// Where the figures come from.
    pub source: &'static str,
    /// The power a package draws (cpufreq/power.rs).
    pub power: PowerModel,
}

/// A package's power, in mW: its uncore (ring, LLC, memory controller)
/// whenever it is up, and each core by its state — in C0 a static part and
/// a dynamic part that grows as f³ (voltage rising with frequency: C x V²
/// x f), idle (C1E..C6, mostly power-gated) a small constant.
///
/// Calibrated from the RAPL package watts the x86 frequency-invariance
/// changelog (1567c3e3467c) prints for these machines under several
/// governors (docs/notes/cpufreq-research.md §5.5, §7): a single-threaded
/// workload (gitsource) at a low and at a high frequency gives the
/// dynamic term; the same with kernbench (every core busy about half the
/// time on the 48-CPU machine, all the time on the 8-CPU one) splits the
/// rest between the uncore and a core's static part. Three figures per
/// machine, and those assumptions: a model to compare governors by, not a
/// substitute for RAPL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PowerModel {
    pub uncore_mw: u32,
    /// A core in C0: static part, and the dynamic part's mW per GHz³.
    pub core_static_mw: u32,
    pub core_dyn_mw_per_ghz3: u32,
    /// A core with no thread in C0.
    pub core_idle_mw: u32,
}

impl PowerModel {
    /// A core in C0 at `khz`, mW.
    pub fn core_c0_mw(&self, khz: u32) -> u64 {
        let mhz = khz as u64 / 1000;
        self.core_static_mw as u64 + self.core_dyn_mw_per_ghz3 as u64 * mhz.pow(3) / 1_000_000_000
    }
}

impl Processor {
    /// The 1-core turbo frequency: cpuinfo.max_freq, the highest any CPU
    /// reaches (intel_pstate's turbo_pstate).
    pub fn max_khz(&self) -> u32 {
        self.turbo_khz[0]
    }

    /// The most a core may run at with `active` cores of its package in C0
    /// (the turbo bins).
    pub fn turbo_limit_khz(&self, active: usize) -> u32 {
        let i = active.max(1) - 1;
        self.turbo_khz[i.min(self.turbo_khz.len() - 1)]
    }

    /// The 4-core turbo frequency, or the 1-core one on parts with fewer
    /// cores: x86 frequency invariance's freq_max (5.7's
    /// core_set_max_freq_ratio, and its fix for parts with fewer than four
    /// cores).
    pub fn invariance_max_khz(&self) -> u32 {
        if self.turbo_khz.len() >= 4 {
            self.turbo_khz[3]
        } else {
            self.max_khz()
        }
    }
}

/// 2 x Xeon E5-2670 v3 (Haswell-EP, 12 cores per socket): the seed 001 NUMA
/// machine ("48x-HASWELL-NUMA" of the x86 frequency-invariance series,
/// whose changelog prints its MSRs; no HWP).
pub const E5_2670_V3: Processor = Processor {
    name: "e5-2670v3",
    model: "Intel Xeon E5-2670 v3 (Haswell-EP)",
    min_khz: 1_200_000,
    base_khz: 2_300_000,
    turbo_khz: &[3_100_000, 3_100_000, 2_900_000, 2_800_000, 2_700_000, 2_600_000],
    hwp: false,
    source: "MSR readout in the changelog of 1567c3e3467c (lore 20200122151617.531-2-ggherdovich@suse.cz)",
    // gitsource 36.79 W -> 40.35 W (1.2 -> 2.8 GHz on one core): 176 mW/GHz³;
    // kernbench 95.6 W with 12 of 24 cores busy at 2.6 GHz: 2.0 W static,
    // 17.2 W of uncore per package.
    power: PowerModel { uncore_mw: 17_200, core_static_mw: 2_000, core_dyn_mw_per_ghz3: 176, core_idle_mw: 100 },
};

/// Xeon E3-1240 v5 (Skylake, 4 cores / 8 threads): the seed 001 UMA machine
/// ("8x-SKYLAKE-UMA" of the same series; HWP).
pub const E3_1240_V5: Processor = Processor {
    name: "e3-1240v5",
    model: "Intel Xeon E3-1240 v5 (Skylake)",
    min_khz: 800_000,
    base_khz: 3_500_000,
    turbo_khz: &[3_900_000, 3_900_000, 3_800_000, 3_700_000],
    hwp: true,
    source: "MSR readout in the changelog of 1567c3e3467c (lore 20200122151617.531-2-ggherdovich@suse.cz)",
    // gitsource 13.32 W -> 17.33 W (1.2 -> 3.9 GHz on one core): 70 mW/GHz³;
    // kernbench 43.0 W with 4 cores busy at 3.7 GHz: 5.2 W static, 8.0 W
    // of uncore.
    power: PowerModel { uncore_mw: 8_000, core_static_mw: 5_200, core_dyn_mw_per_ghz3: 70, core_idle_mw: 100 },
};

/// Every processor `machine.cpufreq` may name.
pub const PROCESSORS: &[Processor] = &[E5_2670_V3, E3_1240_V5];

/// A processor by its `machine.cpufreq` name.
pub fn processor(name: &str) -> Option<&'static Processor> {
    PROCESSORS.iter().find(|p| p.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turbo_bins_fall_with_active_cores_and_stay_above_base() {
        for p in PROCESSORS {
            assert!(p.min_khz < p.base_khz && p.base_khz < p.max_khz(), "{}", p.name);
            for w in p.turbo_khz.windows(2) {
                assert!(w[0] >= w[1], "{}", p.name);
            }
            assert!(*p.turbo_khz.last().unwrap() > p.base_khz);
            assert_eq!(processor(p.name), Some(p));
        }
        assert_eq!(E5_2670_V3.turbo_limit_khz(1), 3_100_000);
        assert_eq!(E5_2670_V3.turbo_limit_khz(12), 2_600_000);
        assert_eq!(E5_2670_V3.invariance_max_khz(), 2_800_000);
        assert_eq!(E3_1240_V5.turbo_limit_khz(8), 3_700_000);
        // 2.0 W + 176 mW x 2.8³.
        assert_eq!(E5_2670_V3.power.core_c0_mw(2_800_000), 2_000 + 3_863);
    }
}
