//! The scheduler's tunables by their sysctl names (`[kernel.sysctl]`):
//! defaults by version, the kernel's limits, which version has which.

use std::collections::BTreeMap;

use crate::kernel::{FairEra, KernelVersion, Mechanisms};

/// Tunables before CPU-count scaling, in ns unless named otherwise.
/// Names are the sysctls of the 2.6 .. 5.x kernels (debugfs knobs since 5.13
/// keep the same meaning).
#[derive(Debug, Clone, PartialEq)]
pub struct Tunables {
    pub sched_latency_ns: u64,
    pub sched_min_granularity_ns: u64,
    pub sched_wakeup_granularity_ns: u64,
    /// EEVDF base slice (6.6+; debugfs base_slice_ns).
    pub sched_base_slice_ns: u64,
    /// 0 none, 1 log (default), 2 linear.
    pub sched_tunable_scaling: u64,
    pub sched_migration_cost_ns: u64,
    pub sched_nr_migrate: u64,
    pub sched_child_runs_first: u64,
    pub sched_rt_runtime_us: i64,
    pub sched_rt_period_us: u64,
    pub sched_rr_timeslice_ms: u64,
    /// The fair server's reservation (6.12+; debugfs
    /// sched/fair_server/cpuN/runtime and period, set for every CPU).
    pub sched_fair_server_runtime_ns: u64,
    pub sched_fair_server_period_ns: u64,
    /// Autogroup (2.6.38+, CONFIG_SCHED_AUTOGROUP=y as Debian, Ubuntu and
    /// Fedora build it): 1 puts a session's root-cgroup tasks in its
    /// autogroup (workload/cgroup.rs, `[[session]]`).
    pub sched_autogroup_enabled: u64,
    /// CFS bandwidth (3.2+): the runtime a cfs_rq draws from its group's
    /// quota at a time, us (sched/fair/bandwidth.rs).
    pub sched_cfs_bandwidth_slice_us: u64,
}

impl Tunables {
    /// Defaults by version [docs/LINUX-FACTS.md §1.3].
    pub fn defaults(v: KernelVersion) -> Self {
        let ms = 1_000_000u64;
        let (lat, min_g, wake_g) = if v.at_least(4, 16) {
            (6 * ms, 750_000, ms)
        } else if v.at_least_26(35) {
            (6 * ms, 2 * ms, ms)
        } else if v.at_least_26(32) {
            (5 * ms, ms, ms)
        } else if v == KernelVersion::new(2, 6, 25) || v.at_least_26(28) {
            (20 * ms, 4 * ms, 5 * ms)
        } else {
            (20 * ms, 4 * ms, 10 * ms)
        };
        let base_slice = if v.at_least(6, 12) { 700_000 } else { 750_000 };
        Tunables {
            sched_latency_ns: lat,
            sched_min_granularity_ns: min_g,
            sched_wakeup_granularity_ns: wake_g,
            sched_base_slice_ns: base_slice,
            sched_tunable_scaling: 1,
            sched_migration_cost_ns: 500_000,
            sched_nr_migrate: 32,
            sched_child_runs_first: u64::from(!v.at_least_26(32)),
            // RT throttling came with 2.6.25 [docs/LINUX-FACTS.md §5.2]: before it
            // there is no budget (RUNTIME_INF, as -1 means).
            sched_rt_runtime_us: if v.at_least_26(25) { 950_000 } else { -1 },
            sched_rt_period_us: 1_000_000,
            sched_rr_timeslice_ms: 100,
            // dl_server_start(): 50 ms every second.
            sched_fair_server_runtime_ns: 50 * ms,
            sched_fair_server_period_ns: 1000 * ms,
            // sysctl_sched_autogroup_enabled = 1 (kernel/sched/autogroup.c),
            // 0 with the noautogroup boot parameter.
            sched_autogroup_enabled: u64::from(v.at_least_26(38)),
            // sysctl_sched_cfs_bandwidth_slice = 5000UL (kernel/sched/fair.c).
            sched_cfs_bandwidth_slice_us: 5000,
        }
    }

    pub const NAMES: &'static [&'static str] = &[
        "kernel.sched_latency_ns",
        "kernel.sched_min_granularity_ns",
        "kernel.sched_wakeup_granularity_ns",
        "kernel.sched_base_slice_ns",
        "kernel.sched_tunable_scaling",
        "kernel.sched_migration_cost_ns",
        "kernel.sched_nr_migrate",
        "kernel.sched_child_runs_first",
        "kernel.sched_rt_runtime_us",
        "kernel.sched_rt_period_us",
        "kernel.sched_rr_timeslice_ms",
        "kernel.sched_fair_server_runtime_ns",
        "kernel.sched_fair_server_period_ns",
        "kernel.sched_autogroup_enabled",
        "kernel.sched_cfs_bandwidth_slice_us",
    ];

    /// Set one sysctl by name, refusing what kernel `v` (with `mech`'s
    /// fair era) does not have and values outside the kernel's own limits.
    pub fn set(&mut self, name: &str, value: i64, mech: &Mechanisms, v: KernelVersion) -> Result<(), SysctlError> {
        if let Some(why) = Self::missing_in(name, mech, v) {
            return Err(SysctlError::NotInVersion(why.to_string()));
        }
        // The sysctl limits of kernel/sysctl.c (2.6.x) and kernel/sched/core.c
        // (3.x .. 5.12): min_sched_granularity_ns = 100 us, max = 1 s,
        // wakeup granularity 0 .. 1 s. Deviation: from 5.13 these knobs are
        // debugfs u32s that take any value; the model keeps the sysctl
        // limits (below them its CFS formulas divide by zero).
        const US100: i64 = 100_000;
        const S1: i64 = 1_000_000_000;
        let range = |lo: i64, hi: i64, what: &str| -> Result<u64, SysctlError> {
            if (lo..=hi).contains(&value) {
                Ok(value as u64)
            } else {
                Err(SysctlError::Range(format!("{name} = {value} is outside the kernel's limits"), what.to_string()))
            }
        };
        match name {
            "kernel.sched_latency_ns" => {
                self.sched_latency_ns = range(US100, S1, "100000 .. 1000000000 (100 us .. 1 s)")?
            }
            "kernel.sched_min_granularity_ns" => {
                self.sched_min_granularity_ns = range(US100, S1, "100000 .. 1000000000 (100 us .. 1 s)")?
            }
            "kernel.sched_wakeup_granularity_ns" => {
                self.sched_wakeup_granularity_ns = range(0, S1, "0 .. 1000000000 (up to 1 s)")?
            }
            "kernel.sched_base_slice_ns" => {
                self.sched_base_slice_ns = range(US100, S1, "100000 .. 1000000000 (100 us .. 1 s)")?
            }
            "kernel.sched_tunable_scaling" => {
                self.sched_tunable_scaling = range(0, 2, "0 (none), 1 (log) or 2 (linear)")?;
            }
            "kernel.sched_migration_cost_ns" => {
                self.sched_migration_cost_ns = range(0, u32::MAX as i64, "0 .. 4294967295 (an unsigned int)")?
            }
            "kernel.sched_nr_migrate" => {
                // The kernel takes 0 (no task moved by a periodic balance);
                // the model's balancers examine at least one task.
                self.sched_nr_migrate =
                    range(1, u32::MAX as i64, "1 .. 4294967295 (0, which moves nothing, is not modelled)")?
            }
            "kernel.sched_child_runs_first" => self.sched_child_runs_first = range(0, 1, "0 or 1")?,
            "kernel.sched_rt_runtime_us" => {
                self.sched_rt_runtime_us =
                    range(-1, i32::MAX as i64, "-1 (no limit) or 0 .. sched_rt_period_us")? as i64
            }
            "kernel.sched_rt_period_us" => self.sched_rt_period_us = range(1, i32::MAX as i64, "1 .. 2147483647 (us)")?,
            "kernel.sched_rr_timeslice_ms" => self.sched_rr_timeslice_ms = range(1, i32::MAX as i64, "1 or more (ms)")?,
            // sched_fair_server_write(): the runtime at most the period
            // (checked once both are known, kernel/config.rs), 0 disables
            // the server; the period 100 us .. 4.2 s (the deadline sysctls'
            // bounds, as dl_server_apply_params() is checked).
            "kernel.sched_fair_server_runtime_ns" => {
                self.sched_fair_server_runtime_ns = range(0, 1 << 32, "0 (no server) .. the period (ns)")?
            }
            "kernel.sched_fair_server_period_ns" => {
                self.sched_fair_server_period_ns = range(100_000, (1 << 22) * 1000, "100000 .. 4194304000 (ns)")?
            }
            "kernel.sched_autogroup_enabled" => self.sched_autogroup_enabled = range(0, 1, "0 or 1")?,
            // proc_dointvec_minmax with extra1 = SYSCTL_ONE: an int of 1 or more.
            "kernel.sched_cfs_bandwidth_slice_us" => {
                self.sched_cfs_bandwidth_slice_us = range(1, i32::MAX as i64, "1 .. 2147483647 (us)")?
            }
            _ => return Err(SysctlError::Unknown),
        }
        Ok(())
    }

    /// The checks across sysctls, once all are set: RT runtime within its
    /// period (sched_rt_global_validate refuses more with EINVAL).
    pub fn validate(&self) -> Result<(), (&'static str, String, String)> {
        let (rt, period) = (self.sched_rt_runtime_us, self.sched_rt_period_us);
        if rt > period as i64 {
            return Err((
                "kernel.sched_rt_runtime_us",
                format!("{rt} is above sched_rt_period_us ({period}): the kernel refuses it (EINVAL)"),
                "-1 (no limit) or 0 .. sched_rt_period_us".to_string(),
            ));
        }
        Ok(())
    }

    /// Why kernel `v` (fair era of `mech`) has no sysctl `name`, or None
    /// if it has it (or if the name is unknown).
    fn missing_in(name: &str, mech: &Mechanisms, v: KernelVersion) -> Option<&'static str> {
        let cfs = mech.fair == FairEra::Cfs;
        match name {
            "kernel.sched_latency_ns" | "kernel.sched_min_granularity_ns" if !cfs => {
                Some("CFS's (it went with EEVDF in 6.6; use kernel.sched_base_slice_ns)")
            }
            "kernel.sched_wakeup_granularity_ns" if !cfs => Some("CFS's (it went with EEVDF in 6.6)"),
            "kernel.sched_base_slice_ns" if cfs => {
                Some("EEVDF's (6.6+; CFS has sched_latency_ns and sched_min_granularity_ns)")
            }
            // RT bandwidth (sched_rt_runtime_us/period_us) came with RT
            // group scheduling in 2.6.25; the scaling knob in 2.6.33
            // (docs/LINUX-FACTS.md §1.4); the SCHED_RR knob in 3.9.
            "kernel.sched_rt_runtime_us" | "kernel.sched_rt_period_us" if !v.at_least_26(25) => {
                Some("from 2.6.25 (RT bandwidth control)")
            }
            "kernel.sched_tunable_scaling" if !v.at_least_26(33) => Some("from 2.6.33"),
            "kernel.sched_rr_timeslice_ms" if !v.at_least(3, 9) => {
                Some("from 3.9 (before it, RR_TIMESLICE is fixed at 100 ms)")
            }
            "kernel.sched_fair_server_runtime_ns" | "kernel.sched_fair_server_period_ns" if !mech.fair_server => {
                Some("from 6.12 (the fair server)")
            }
            // "sched: automated per session task groups" (5091faa449ee, 2.6.38).
            "kernel.sched_autogroup_enabled" if !v.at_least_26(38) => Some("from 2.6.38 (autogroup)"),
            // CFS bandwidth control (ec12cb7f31e2, 3.2).
            "kernel.sched_cfs_bandwidth_slice_us" if !v.at_least(3, 2) => Some("from 3.2 (CFS bandwidth control)"),
            _ => None,
        }
    }

    /// The sysctls kernel `v` has (with the fair era of `mech`).
    pub fn names_for(mech: &Mechanisms, v: KernelVersion) -> Vec<&'static str> {
        Self::NAMES.iter().copied().filter(|n| Self::missing_in(n, mech, v).is_none()).collect()
    }

    pub fn as_map(&self) -> BTreeMap<&'static str, i64> {
        let mut m = BTreeMap::new();
        m.insert("kernel.sched_latency_ns", self.sched_latency_ns as i64);
        m.insert("kernel.sched_min_granularity_ns", self.sched_min_granularity_ns as i64);
        m.insert("kernel.sched_wakeup_granularity_ns", self.sched_wakeup_granularity_ns as i64);
        m.insert("kernel.sched_base_slice_ns", self.sched_base_slice_ns as i64);
        m.insert("kernel.sched_tunable_scaling", self.sched_tunable_scaling as i64);
        m.insert("kernel.sched_migration_cost_ns", self.sched_migration_cost_ns as i64);
        m.insert("kernel.sched_nr_migrate", self.sched_nr_migrate as i64);
        m.insert("kernel.sched_child_runs_first", self.sched_child_runs_first as i64);
        m.insert("kernel.sched_rt_runtime_us", self.sched_rt_runtime_us);
        m.insert("kernel.sched_rt_period_us", self.sched_rt_period_us as i64);
        m.insert("kernel.sched_rr_timeslice_ms", self.sched_rr_timeslice_ms as i64);
        m.insert("kernel.sched_fair_server_runtime_ns", self.sched_fair_server_runtime_ns as i64);
        m.insert("kernel.sched_fair_server_period_ns", self.sched_fair_server_period_ns as i64);
        m.insert("kernel.sched_autogroup_enabled", self.sched_autogroup_enabled as i64);
        m.insert("kernel.sched_cfs_bandwidth_slice_us", self.sched_cfs_bandwidth_slice_us as i64);
        m
    }
}

/// Why a sysctl was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SysctlError {
    /// No such sysctl in any modelled kernel.
    Unknown,
    /// The kernel of this run does not have it: whose it is.
    NotInVersion(String),
    /// Outside the kernel's limits: (message, accepted).
    Range(String, String),
}
