//! What the front end asks the core about a scenario or a version instead
//! of parsing it again: a kernel version's eras (the QEMU oracle picks its
//! guest kernel by the fair-class era, not by a copy of the 6.6 boundary),
//! and the one cpulist and duration parsers, with messages that say what is
//! accepted.

use serde_json::{json, Value};

use crate::cpumask::CpuMask;
use crate::kernel::mechanisms::{BalancerEra, FairEra, Mechanisms, RtBalance};
use crate::kernel::version::{KernelVersion, ACCEPTED};
use crate::units::{parse_duration, DURATION_ACCEPTED};

/// NR_CPUS: the most CPUs a cpulist may name.
pub const NR_CPUS: usize = 8192;

/// A version and its mechanism eras: `version` (as the core prints it),
/// `major`, `minor`, `patch` (null: the newest stable release of the
/// series), `fair` (`"cfs"`/`"eevdf"`), `balancer` (`"avg_load"`/
/// `"group_type"`), `rt_balance` (`"legacy"`/`"push_pull"`), `note` (what an
/// unlisted version runs as, or null).
pub fn kernel_info(v: KernelVersion, mech: &Mechanisms) -> Value {
    let patch = (v.patch != KernelVersion::NEWEST_STABLE || v.major == 2).then_some(v.patch);
    json!({
        "version": v.to_string(),
        "major": v.major,
        "minor": v.minor,
        "patch": patch,
        "fair": match mech.fair { FairEra::Cfs => "cfs", FairEra::Eevdf => "eevdf" },
        "balancer": match mech.balancer { BalancerEra::AvgLoad => "avg_load", BalancerEra::GroupType => "group_type" },
        "rt_balance": match mech.rt_balance { RtBalance::Legacy => "legacy", _ => "push_pull" },
        "note": v.unlisted_note(),
    })
}

/// `kernel.version` text -> [`kernel_info`]; Err: why not, and what is accepted.
pub fn version_info(text: &str) -> Result<Value, String> {
    let v = KernelVersion::parse_why(text).map_err(|why| format!("{text:?}: {why}; accepted: {ACCEPTED}"))?;
    Ok(kernel_info(v, &Mechanisms::of(v)))
}

/// `"0-3,8"` -> the CPUs, in order; Err: what is wrong.
pub fn cpulist(text: &str, nr_cpus: usize) -> Result<Vec<usize>, String> {
    if nr_cpus == 0 || nr_cpus > NR_CPUS {
        return Err(format!("nr_cpus {nr_cpus}: accepted: 1 to {NR_CPUS}"));
    }
    let m = CpuMask::parse_list(text, nr_cpus)?;
    Ok(m.iter().collect())
}

/// A duration string -> ns; Err: what is wrong, and what is accepted.
pub fn duration_ns(text: &str) -> Result<u64, String> {
    parse_duration(text).map_err(|why| format!("{why}; accepted: {DURATION_ACCEPTED}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_eras_come_from_the_mechanisms_table() {
        assert_eq!(version_info("6.1").unwrap()["fair"], "cfs");
        assert_eq!(version_info("6.6").unwrap()["fair"], "eevdf");
        assert_eq!(version_info("6.6").unwrap()["patch"], Value::Null);
        assert_eq!(version_info("2.6.32").unwrap()["version"], "2.6.32");
        assert!(version_info("99.0").unwrap_err().contains("has not been released"));
    }

    #[test]
    fn cpulists_and_durations() {
        assert_eq!(cpulist("0-3,8", NR_CPUS).unwrap(), [0, 1, 2, 3, 8]);
        assert!(cpulist("3-1", NR_CPUS).is_err() && cpulist("", NR_CPUS).is_err() && cpulist("8", 8).is_err());
        assert_eq!(duration_ns("1.5s").unwrap(), 1_500_000_000);
        assert!(duration_ns("5 parsecs").unwrap_err().contains("accepted"));
    }
}
