//! The report's sections from the rest of the kernel: cpuidle, block
//! devices, workqueues, and the benchmarks that use them (dbench).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The idle states of the CPUs (drivers/cpuidle, sysfs
/// `cpuidle/stateN/{usage,time}`), over the window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CpuidleReport {
    /// The intel_idle table (skx, hsw, bdw).
    pub table: String,
    /// The states, shallowest first (state 0 is POLL).
    pub states: Vec<IdleStateInfo>,
    /// Entries of each state, all CPUs.
    pub usage: Vec<u64>,
    /// Time in each state, all CPUs, ns (credited when an idle period ends).
    pub time_ns: Vec<u64>,
    /// The share of the time in idle states spent in the deepest one, %.
    pub deepest_pct: f64,
    /// Per CPU: entries and time of each state.
    pub cpus: Vec<CpuIdleRow>,
}

/// One idle state of the table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IdleStateInfo {
    pub name: String,
    pub exit_latency_ns: u64,
    pub target_residency_ns: u64,
}

/// One CPU's idle-state counters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CpuIdleRow {
    pub cpu: usize,
    pub usage: Vec<u64>,
    pub time_ns: Vec<u64>,
}

/// The CPUs' frequencies over the window (machine.cpufreq): turbostat's
/// Avg_MHz, Busy% and Bzy_MHz, from the model's APERF and MPERF.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CpufreqReport {
    /// The processor (`machine.cpufreq`) and its model name.
    pub processor: String,
    pub model: String,
    /// The scaling governor (`kernel.cpufreq_governor` or the version's default).
    pub governor: String,
    /// Whether the processor has hardware P-states (HWP).
    pub hwp: bool,
    /// Whether PELT is frequency invariant (x86 from 5.7, or
    /// `kernel.freq_invariance`).
    pub freq_invariance: bool,
    /// Base (TSC) frequency, MHz.
    pub base_mhz: u32,
    /// All CPUs: the average frequency over the window, idle included
    /// (turbostat's Avg_MHz), the share of it in C0 (Busy%) and the
    /// average frequency while in C0 (Bzy_MHz).
    pub avg_mhz: f64,
    pub busy_pct: f64,
    pub bzy_mhz: f64,
    /// Frequency changes (cpu_frequency events), all CPUs.
    pub transitions: u64,
    /// Energy over the window, all packages, J (the power model of
    /// machine/processors.rs), and per package: J and the average W
    /// (turbostat's PkgWatt).
    pub energy_j: f64,
    pub packages: Vec<PackagePower>,
    pub cpus: Vec<CpufreqRow>,
}

/// Pressure stall information (`kernel.psi`, 4.20+): /proc/pressure/cpu,
/// memory and io as read at the end of the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PressureReport {
    pub cpu: PressureFile,
    pub memory: PressureFile,
    pub io: PressureFile,
}

/// One /proc/pressure file: its "some" line and its "full" line (absent
/// from cpu before 5.13).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PressureFile {
    pub some: PressureLine,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = crate::report::absent_when_none)]
    pub full: Option<PressureLine>,
}

/// One line: the running averages as printed (%, two decimals
/// truncated), the total since boot (µs), and the share of the
/// measurement window stalled (%).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PressureLine {
    pub avg10: f64,
    pub avg60: f64,
    pub avg300: f64,
    pub total_us: u64,
    pub window_pct: f64,
}

/// One NUMA node's memory bandwidth over the window (membw/:
/// `machine.memory_bandwidth`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MemBwNode {
    pub node: usize,
    /// What the node's DRAM delivers, GB/s (10^9 bytes).
    pub bandwidth_gbs: f64,
    /// The traffic of the work its CPUs ran (page clearing, copies, run
    /// ops with `memory_traffic`), GB/s, and as a share of the bandwidth.
    pub traffic_gbs: f64,
    pub utilization_pct: f64,
    /// The share of the window the node was saturated (its memory-bound
    /// work slowed).
    pub saturated_pct: f64,
    /// The mean stall over the window: how many times longer memory-bound
    /// work took than on an idle node (1: never slowed).
    pub stall_mean: f64,
}

/// One package's energy over the window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PackagePower {
    pub package: usize,
    pub energy_j: f64,
    pub watts: f64,
}

/// One CPU's frequency counters over the window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CpufreqRow {
    pub cpu: usize,
    /// Its package and its core within the package (topology's
    /// physical_package_id and core_id; turbostat's Package and Core).
    pub package: usize,
    pub core: usize,
    pub avg_mhz: f64,
    pub busy_pct: f64,
    pub bzy_mhz: f64,
    pub transitions: u64,
    /// Its core's energy over the window shared by the core's threads, J.
    pub energy_j: f64,
    /// The part of the window in an idle period still open at its end, ns:
    /// cpuidle credits a period to its state only when it ends.
    pub idle_open_ns: u64,
}

/// One block device over the window (iostat -x).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DiskReport {
    pub name: String,
    /// Requests completed.
    pub reads: u64,
    pub writes: u64,
    pub flushes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Mean time from submission to completion, us (await).
    pub await_us: f64,
    /// Time with a request in the device, % of the window (%util).
    pub util_pct: f64,
}

/// One workqueue's work items run over the window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorkqueueRow {
    pub name: String,
    pub works: u64,
}

/// dbench's results (every client's load-file passes), as mmtests'
/// io-dbench4 reads them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DbenchReport {
    pub clients: usize,
    /// xfs or ext4.
    pub filesystem: String,
    /// Passes completed in the window, all clients.
    pub passes: u64,
    /// Arithmetic mean of the pass times, ms (dbench's integer ms; mmtests' Amean).
    pub amean_ms: f64,
    /// Sample standard deviation of the pass times, ms.
    pub stddev_ms: f64,
    pub min_ms: u64,
    pub max_ms: u64,
    /// Harmonic mean of the per-second MB/s samples (decimal MB of
    /// ReadX/WriteX; mmtests' Hmean), whole seconds of the window.
    pub hmean_mbs: f64,
    /// ReadX/WriteX bytes of one pass.
    pub bytes_per_pass: u64,
    /// CPU time of a pass's ops other than Flush, ns.
    pub loadfile_cpu_ns: u64,
    /// Flush ops (fsync) per pass.
    pub flushes_per_pass: u64,
    /// The clients' migrations over the window, per pass.
    pub migrations_per_pass: f64,
}
