//! What ran: the kernel and its tunables, the machine and its domains,
//! the host and the oracle of a real run, the simulator, the window.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::absent_when_none;

/// The kernel of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct KernelInfo {
    /// Simulation: the modelled version (`6.1`, `2.6.35`). Real kernel: the
    /// running kernel's release (`uname -r`).
    pub version: String,
    /// Real kernel: the version the scenario asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub scenario_version: Option<String>,
    /// Simulation: CONFIG_HZ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub hz: Option<u32>,
    /// Simulation: the fair class's pick rule, `cfs` or `eevdf`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub fair: Option<String>,
    /// Simulation: the load balancer's era, `avg_load` or `group_type`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub balancer: Option<String>,
    /// Simulation: every sched_feature the version has, by its debugfs name,
    /// and whether it was on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub features: Option<BTreeMap<String, bool>>,
    /// Simulation: the scheduler sysctls by name (before CPU-count scaling),
    /// in each sysctl's own unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub sysctl: Option<BTreeMap<String, i64>>,
    /// Simulation: the latency tunables as the kernel ran with them (after
    /// the boot-time CPU-count scaling).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub scaled: Option<ScaledInfo>,
    /// The isolcpus= boot parameter's CPUs (`kernel.isolcpus`), a CPU list;
    /// absent without it. Real: /sys/devices/system/cpu/isolated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub isolcpus: Option<String>,
}

/// The fair class's latency tunables after boot-time scaling, in ns.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ScaledInfo {
    /// sysctl_sched_latency (CFS period target).
    pub sched_latency_ns: u64,
    /// sysctl_sched_min_granularity.
    pub sched_min_granularity_ns: u64,
    /// sysctl_sched_wakeup_granularity.
    pub sched_wakeup_granularity_ns: u64,
    /// sysctl_sched_base_slice (EEVDF request size).
    pub sched_base_slice_ns: u64,
}

/// The machine of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MachineInfo {
    /// The preset's name, or `custom`.
    pub name: String,
    /// CPUs of the machine (real kernel: CPUs the run used).
    pub nr_cpus: usize,
    /// One line describing the machine.
    pub description: String,
    /// Simulation: CPU 0's sched domains, bottom-up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub domains: Option<Vec<DomainInfo>>,
}

/// One sched domain level.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DomainInfo {
    /// The level's name (SMT, MC, DIE/PKG, NUMA; 2.6.x SIBLING, MC, CPU,
    /// NODE, ALLNODES).
    pub name: String,
    /// CPUs in the domain's span.
    pub span: usize,
}

/// The host of a real-kernel run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HostInfo {
    /// `uname -r`.
    pub kernel_release: String,
    /// `uname -v`.
    pub kernel_version: String,
    /// `uname -m`.
    pub arch: String,
    /// Online CPUs of the host.
    pub nr_cpus: usize,
    /// The host CPU that played each scenario CPU (index = scenario CPU).
    pub cpus_used: Vec<usize>,
    /// USER_HZ: /proc/stat's tick.
    pub user_hz: u64,
    /// The runner's coordinating thread ran SCHED_FIFO (it could set it).
    pub coordinator_fifo: bool,
}

/// A real run under the QEMU oracle.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OracleInfo {
    /// The oracle kernel's label (`6.1`, `6.12`).
    pub kernel: String,
    /// Its release (`6.1.0-50-amd64`; null if the oracle's manifest lacks it).
    pub release: Option<String>,
    /// QEMU's `-icount shift`.
    pub shift: u32,
    /// Wall time of the guest's boot and run, seconds.
    pub wall_s: f64,
    /// The runner's exit status in the guest (null: it did not say).
    pub exit_status: Option<i32>,
}

/// A real tool's run in the guest: what it was given and what it printed
/// (the validation suite's metrics are parsed from `stdout`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolRun {
    /// The command line, the tool first (`cyclictest`, `perf`, `hackbench`).
    pub argv: Vec<String>,
    /// What it printed on standard output.
    pub stdout: String,
    /// What it printed on standard error.
    pub stderr: String,
}

/// The cost constants measured on a machine by `schedlab-runner
/// --calibrate`: microbenchmarks on one CPU, timed with the threads' CPU
/// clocks, the median of several rounds each.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Calibration {
    /// The host CPU they ran on.
    pub cpu: usize,
    /// One row per constant, named as its `kernel.costs` key.
    pub costs: Vec<CostFigure>,
}

/// One measured cost constant.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CostFigure {
    /// Its `kernel.costs` key (`pipe_write`, `context_switch`, `fork`, ...).
    pub key: String,
    /// The median of the rounds, ns: the value to use.
    pub median_ns: u64,
    /// The smallest round, ns.
    pub min_ns: u64,
    /// The largest round, ns.
    pub max_ns: u64,
    /// A row added to a kept calibration after its run: when, and by what
    /// (the runner never writes it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<String>,
}

/// How a simulation went.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SimInfo {
    /// Simulated time at the end of the run.
    pub end_ns: u64,
    /// Events the engine processed.
    pub events: u64,
    /// Why the run stopped: `duration reached`, `all tasks exited` or
    /// `safety limit reached`.
    pub reason: String,
    /// A fingerprint (FNV-1a, hex) of the sched tracepoint stream: equal
    /// hashes, equal schedules.
    pub trace_hash: String,
    /// Tracepoint events in the stream (power:cpu_idle's not counted: the
    /// run writes them only when traced).
    pub trace_events: u64,
}

/// How a real-kernel run went.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RealInfo {
    /// Time from the start of the run to its end (CLOCK_MONOTONIC).
    pub end_ns: u64,
    /// Why the run stopped.
    pub reason: String,
    /// The runner's main thread's own CPU time (its thread clock) to read
    /// one task's /proc counters at the window's start: the base read's
    /// time divided by the tasks it read. What `kernel.costs.proc_read_task`
    /// is for this run (a QEMU guest's vCPUs take turns, so it grows with
    /// the busy vCPUs). None: a runner before it was kept, or no task read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_task_ns: Option<u64>,
    /// The same for one CPU's share of a /proc/stat and /proc/schedstat
    /// read at an interval's end (the median over the samples, divided by
    /// the CPUs read): `kernel.costs.proc_read_stat` for this run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_stat_ns: Option<u64>,
    /// The median over the scenario's threads the runner started of their
    /// own CPU time from clone to the start gate (glibc's thread start, the
    /// setup's syscalls): `kernel.costs.thread_start` for this run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_start_ns: Option<u64>,
    /// The main thread's own CPU time per thread it created at the start
    /// (clone, the stack, its bookkeeping): `kernel.costs.fork` for this run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fork_ns: Option<u64>,
    /// The mean over every `run` op of the run of what it ran beyond its
    /// ask, before the runner took it off the thread's next ops: the gaps
    /// the kernel charges as CPU time that an op cannot stop inside (a
    /// QEMU TCG guest's vCPU turns: 220 us beside a hog in a two-vCPU 6.1
    /// guest; on real CPUs a few microseconds). None: a runner before it was
    /// kept, or no `run` op.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_overshoot_ns: Option<u64>,
}

/// The measurement window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MeasureInfo {
    /// Start of the window: the end of the warm-up.
    pub start_ns: u64,
    /// End of the window: the end of the run.
    pub end_ns: u64,
    /// The mpstat interval.
    pub interval_ns: u64,
}
