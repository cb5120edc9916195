//! Idle-state tables: each state's exit latency and target residency, as
//! drivers/idle/intel_idle.c declares them (unchanged from 4.16 to 6.12 for
//! these models; docs/LINUX-FACTS.md §9.4), and the haltpoll driver of a
//! KVM guest (drivers/cpuidle/cpuidle-haltpoll.c). State 0 is cpuidle's
//! POLL state (poll_idle: spin with TIF_POLLING_NRFLAG set), which every
//! x86 table starts with.

/// One idle state (struct cpuidle_state).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdleState {
    pub name: &'static str,
    /// Time to get out of the state (exit_latency_ns).
    pub exit_latency_ns: u64,
    /// Minimum stay for the state to pay off (target_residency_ns).
    pub target_residency_ns: u64,
    /// CPUIDLE_FLAG_POLLING: the CPU spins, a wakeup needs no IPI.
    pub polling: bool,
}

const fn state(name: &'static str, exit_us: u64, residency_us: u64) -> IdleState {
    IdleState { name, exit_latency_ns: exit_us * 1000, target_residency_ns: residency_us * 1000, polling: false }
}

/// cpuidle's POLL state (drivers/cpuidle/poll_state.c).
pub const POLL: IdleState = IdleState { name: "POLL", exit_latency_ns: 0, target_residency_ns: 0, polling: true };

/// skx_cstates: Skylake-SP and Cascade Lake servers.
pub const SKX: [IdleState; 4] = [POLL, state("C1", 2, 2), state("C1E", 10, 20), state("C6", 133, 600)];

/// hsw_cstates: Haswell.
pub const HSW: [IdleState; 9] = [
    POLL,
    state("C1", 2, 2),
    state("C1E", 10, 20),
    state("C3", 33, 100),
    state("C6", 133, 400),
    state("C7s", 166, 500),
    state("C8", 300, 900),
    state("C9", 600, 1800),
    state("C10", 2600, 7700),
];

/// hsw_cstates as a Haswell-EP server (E5 v3, CPUID model HASWELL_X)
/// registers them: intel_idle skips a state whose MWAIT sub-state count in
/// CPUID leaf 5 is 0, and these parts have no C7s..C10, which are client
/// package states (docs/notes/cpufreq-research.md §1.2).
pub const HSX: [IdleState; 5] = [HSW[0], HSW[1], HSW[2], HSW[3], HSW[4]];

/// bdw_cstates: Broadwell (as hsw, but C3 exits in 40 us).
pub const BDW: [IdleState; 9] = {
    let mut t = HSW;
    t[3] = state("C3", 40, 100);
    t
};

/// haltpoll_driver: a KVM guest's POLL and "haltpoll idle" (HLT), which
/// declares 1 us of exit latency and residency. What leaving HLT really
/// costs a guest is the host's: the vCPU's VM exit, the host waking its
/// thread and the VM entry that injects the interrupt; the cpuidle core
/// charges `kernel.costs.idle_exit` for it (`Cpuidle::halt_exit_ns`), the
/// declared figure only steers the governor.
/// Deviation: the kernel knows only the declared 1 us; the host's real
/// cost is the model's, measured (`schedlab-runner --calibrate`).
pub const HALTPOLL: [IdleState; 2] = [POLL, state("haltpoll idle", 1, 1)];

/// gnr_cstates: Granite Rapids Xeon 6 (intel_idle since v6.12, commit
/// 370406bf5738 "intel_idle: add Granite Rapids Xeon support"). C6 is
/// core C6; C6P lets the package into C6 when all its cores are idle.
/// Deviation: a kernel before 6.12 has no intel_idle entry for the part
/// and falls back to ACPI _CST (acpi_idle), whose firmware table is not
/// modelled; the table is this one whatever the version.
pub const GNR: [IdleState; 5] =
    [POLL, state("C1", 1, 1), state("C1E", 4, 4), state("C6", 170, 650), state("C6P", 210, 1000)];

/// A machine's idle-state table, by the intel_idle name (or the driver's,
/// `haltpoll`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdleTable {
    Skx,
    Hsw,
    /// hsw_cstates on a Haswell-EP server: C1, C1E, C3, C6.
    Hsx,
    Bdw,
    /// gnr_cstates: Granite Rapids (Xeon 6).
    Gnr,
    Haltpoll,
}

impl IdleTable {
    pub const ALL: [IdleTable; 6] =
        [IdleTable::Skx, IdleTable::Hsw, IdleTable::Hsx, IdleTable::Bdw, IdleTable::Gnr, IdleTable::Haltpoll];

    pub fn states(self) -> &'static [IdleState] {
        match self {
            IdleTable::Skx => &SKX,
            IdleTable::Hsw => &HSW,
            IdleTable::Hsx => &HSX,
            IdleTable::Bdw => &BDW,
            IdleTable::Gnr => &GNR,
            IdleTable::Haltpoll => &HALTPOLL,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            IdleTable::Skx => "skx",
            IdleTable::Hsw => "hsw",
            IdleTable::Hsx => "hsx",
            IdleTable::Bdw => "bdw",
            IdleTable::Gnr => "gnr",
            IdleTable::Haltpoll => "haltpoll",
        }
    }

    pub fn from_name(name: &str) -> Option<IdleTable> {
        IdleTable::ALL.into_iter().find(|t| t.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_deepen_monotonically() {
        for t in IdleTable::ALL {
            let s = t.states();
            assert!(s[0].polling && !s[1..].iter().any(|x| x.polling), "{}", t.name());
            for w in s.windows(2) {
                assert!(w[0].exit_latency_ns <= w[1].exit_latency_ns, "{}: {} -> {}", t.name(), w[0].name, w[1].name);
                assert!(w[0].target_residency_ns <= w[1].target_residency_ns);
                // A state never takes longer to leave than to pay off.
                assert!(w[1].exit_latency_ns <= w[1].target_residency_ns);
            }
            assert_eq!(IdleTable::from_name(t.name()), Some(t));
        }
        assert_eq!(SKX[3].exit_latency_ns, 133_000);
        assert_eq!(SKX[3].target_residency_ns, 600_000);
    }
}
