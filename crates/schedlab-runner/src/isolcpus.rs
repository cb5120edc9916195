//! `kernel.isolcpus` on a real kernel: the boot parameter cannot be set by
//! a program, so the runner checks that the kernel it runs on was booted
//! with the scenario's (/sys/devices/system/cpu/isolated; the QEMU oracle
//! boots its guests with it), and reports what the kernel isolates.
//!
//! init's affinity leaves the isolated CPUs out (sched_init_smp()), and the
//! runner inherits it: with isolcpus in the scenario it first widens its
//! own CPUs to every online one, so that the scenario's CPUs are the
//! machine's, isolated ones included, as in the simulation.

use std::fs;

use schedlab_core::cpumask::CpuMask;
use schedlab_core::machine::MAX_CPUS;
use schedlab_core::scenario::Scenario;

const ISOLATED: &str = "/sys/devices/system/cpu/isolated";

/// The CPUs this kernel isolates (empty: none, or no such file).
pub fn host_isolated() -> Vec<usize> {
    let text = fs::read_to_string(ISOLATED).unwrap_or_default();
    CpuMask::parse_list(text.trim(), MAX_CPUS).map(|m| m.iter().collect()).unwrap_or_default()
}

/// Before the run: with a scenario's isolcpus, the runner's CPUs widened to
/// every online CPU. Returns the CPUs the runner may use.
pub fn widen(sc: &Scenario, allowed: Vec<usize>) -> Result<Vec<usize>, String> {
    if sc.isolcpus.is_none() {
        return Ok(allowed);
    }
    let online = fs::read_to_string("/sys/devices/system/cpu/online")
        .map_err(|e| format!("/sys/devices/system/cpu/online: {e}"))?;
    let online =
        CpuMask::parse_list(online.trim(), MAX_CPUS).map_err(|e| format!("/sys/devices/system/cpu/online: {e}"))?;
    let cpus: Vec<usize> = online.iter().collect();
    crate::sys::set_affinity(0, &cpus).map_err(|e| format!("sched_setaffinity({cpus:?}): {e}"))?;
    crate::sys::allowed_cpus().map_err(|e| format!("sched_getaffinity: {e}"))
}

/// The scenario's isolated CPUs must be the kernel's, among the run's
/// CPUs (`host_cpus`: scenario CPU -> host CPU).
pub fn check(sc: &Scenario, host_cpus: &[usize], host_iso: &[usize]) -> Result<(), String> {
    let Some(iso) = &sc.isolcpus else { return Ok(()) };
    let want: Vec<usize> = iso.iter().map(|c| host_cpus[c]).collect();
    let have: Vec<usize> = host_cpus.iter().copied().filter(|h| host_iso.contains(h)).collect();
    if want != have {
        let list = schedlab_core::sched::topology::cpulist;
        return Err(format!(
            "{}: kernel.isolcpus: the scenario isolates CPUs {} (host CPUs {}), this kernel {} ({ISOLATED}: {:?}); \
             isolcpus= is a boot parameter: boot the kernel with isolcpus={} (the QEMU oracle does), or run a \
             scenario without it",
            sc.source,
            iso.to_list_string(),
            list(&want),
            if have.is_empty() { "none of them".to_string() } else { format!("host CPUs {}", list(&have)) },
            list(host_iso),
            list(&want),
        ));
    }
    Ok(())
}

/// The report's kernel.isolcpus: the kernel's isolated CPUs among the
/// run's, as scenario CPUs (None: none).
pub fn report(host_cpus: &[usize], host_iso: &[usize]) -> Option<String> {
    let cpus: Vec<usize> = (0..host_cpus.len()).filter(|&c| host_iso.contains(&host_cpus[c])).collect();
    (!cpus.is_empty()).then(|| schedlab_core::sched::topology::cpulist(&cpus))
}
