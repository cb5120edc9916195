//! The report of one run, simulated (`stats/report.rs` builds it from a
//! `Sim`) or measured on a real kernel (`schedlab-runner` builds it from
//! /proc): one schema for both, so every reader (the text reports,
//! `reproduce`, `validate`, `compare`) reads one vocabulary.
//!
//! These types are the one source of the report's shape: `docs/report.md`
//! and `python/schedlab/report_types.py` are generated from their doc
//! comments (`scripts/gen-report-types`, checked by the tests), so a field
//! is documented here or nowhere. Every quantity says its unit in its name
//! (`_ns`, `_us`, `_ms`, `_s`, `_pct`) unless it is a count.
//!
//! Fields a real-kernel report cannot have (the balancer's counters, the
//! trace fingerprint) or a simulation does not make (the host) are left out
//! of the JSON where absent; `null` means "this run has the field but no
//! value" (a task that did not exit, a counter the kernel did not expose).
//!
//! The JSON object's keys are sorted (serde_json's map), so a report's
//! bytes depend only on its values.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

mod kernel;
mod mm;
mod rt_migrate;
pub mod sorted;
pub use kernel::{CpuIdleRow, CpuidleReport, DbenchReport, DiskReport, IdleStateInfo, WorkqueueRow};
pub use mm::{AllocRow, KswapdRow, MmReport, NodeRow};
pub use rt_migrate::{RtmtAt, RtmtEarlierThreads, RtmtReport, RtmtRun, RtmtTask};

/// The report of one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Report {
    /// The schedlab version that wrote the report.
    pub schedlab: String,
    /// The scenario's name.
    pub scenario: String,
    /// Simulation: the scenario's file as given (or `<string>`). Real kernel:
    /// `"real"` (the file is then in `scenario_file`), or `"real-tool"` for a
    /// real tool's run (then only `source`, `oracle` and `tool` are there),
    /// or `"real-calibration"` for `schedlab-runner --calibrate` (then
    /// `host`, `calibration` and, in the oracle's guest, `oracle`).
    pub source: String,
    /// Real kernel: the scenario's file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub scenario_file: Option<String>,
    /// The seed of the run (the simulator's RNG streams; the runner's
    /// distributions).
    pub seed: u64,
    /// The kernel that ran.
    pub kernel: KernelInfo,
    /// The machine the scenario describes.
    pub machine: MachineInfo,
    /// Real kernel: the host it ran on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub host: Option<HostInfo>,
    /// Real kernel under the QEMU oracle: the guest's kernel and the
    /// emulator's settings (added by python/schedlab/qemu/guest.py).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub oracle: Option<OracleInfo>,
    /// Real kernel: a real tool (perf bench, hackbench, cyclictest) run in
    /// the oracle's guest by `schedlab validate` for an entry with `tool`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub tool: Option<ToolRun>,
    /// Real kernel: this machine's values of the cost constants, measured
    /// by `schedlab-runner --calibrate` (`schedlab calibrate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub calibration: Option<Calibration>,
    /// Simulation: how the simulation went.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub sim: Option<SimInfo>,
    /// Real kernel: how the run went.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub real: Option<RealInfo>,
    /// The measurement window: everything below is counted from `start_ns`
    /// (the end of the warm-up) to `end_ns`, unless it says otherwise.
    pub measure: MeasureInfo,
    /// Per CPU: its time by kind over the window (/proc/stat's columns).
    pub cpus: Vec<CpuTimes>,
    /// `mpstat -P ALL` over the window: each interval's sample and the
    /// Average block.
    pub mpstat: Mpstat,
    /// The scenario's tasks (those that started), in creation order.
    pub tasks: Vec<TaskRow>,
    /// Simulation: the kernel's own threads (the per-CPU vmstat kworkers),
    /// listed apart from the scenario's tasks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub kernel_threads: Option<Vec<TaskRow>>,
    /// Per task group of the scenario.
    pub groups: Vec<GroupRow>,
    /// Simulation: schedstat-named counters per CPU and per sched domain,
    /// over the whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub schedstat: Option<Schedstat>,
    /// Simulation: tasks moved by active balance (the stopper), over the
    /// whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub active_balances: Option<u64>,
    /// Task migrations: simulation, over the whole run; real kernel, over
    /// the window.
    pub migrations: u64,
    /// Simulation: `migrations` by how far the task moved (each distance
    /// pays its own `kernel.costs.migration_*` cache refill), over the
    /// whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub migrations_by_distance: Option<MigrationsByDistance>,
    /// Real kernel: context switches of the scenario's tasks over the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub switches: Option<u64>,
    /// Simulation: time a CPU sat idle while a runnable task allowed on it
    /// waited on another runqueue, summed over the CPUs, over the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub wasted_cpu_ns: Option<u64>,
    /// Simulation: `wasted_cpu_ns` as a percentage of the window's CPU time
    /// (window length times CPUs), two decimals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub wasted_cpu_pct: Option<f64>,
    /// The scenario's tasks' timer wakeup delays over the window, all tasks
    /// together (see `TaskRow.wakeup_delay_p50_ns`).
    pub wakeup_delay: DelayStats,
    /// Simulation: the RT class's counters over the whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub rt: Option<RtInfo>,
    /// What went wrong without stopping the run: a deadlock inside a fixed
    /// duration, measure.limit reached, a version without a preset of its
    /// own. The CLI prints them on stderr; `--strict` (`strict=True`) makes
    /// them errors.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// The rt-migrate-test tool's results, for a scenario with
    /// `[rt_migrate_test]`; null otherwise.
    pub rt_migrate_test: Option<RtmtReport>,
    /// Simulation: the CPUs' idle states over the window, with a cpuidle
    /// driver (`machine.cpuidle`); absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub cpuidle: Option<CpuidleReport>,
    /// Simulation: the block devices over the window, as iostat reports
    /// them; absent without `[[machine.disk]]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub disks: Option<Vec<DiskReport>>,
    /// Simulation: work items each workqueue ran over the window (the
    /// workqueues that ran any).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub workqueues: Option<Vec<WorkqueueRow>>,
    /// Simulation: dbench's results for a scenario with `[dbench]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub dbench: Option<DbenchReport>,
    /// Simulation: memory and reclaim, when the scenario uses them (mm/).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub mm: Option<MmReport>,
}

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
    /// Tracepoint events in the stream.
    pub trace_events: u64,
}

/// How a real-kernel run went.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RealInfo {
    /// Time from the start of the run to its end (CLOCK_MONOTONIC).
    pub end_ns: u64,
    /// Why the run stopped.
    pub reason: String,
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

/// One CPU's time by kind over the window (/proc/stat's columns).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CpuTimes {
    /// The scenario's CPU number.
    pub cpu: usize,
    /// Real kernel: the host CPU that played it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub host_cpu: Option<usize>,
    /// User time of tasks at nice <= 0.
    pub usr_ns: u64,
    /// User time of tasks at nice > 0.
    pub nice_ns: u64,
    /// Kernel time: kernel threads and the context switches themselves.
    pub sys_ns: u64,
    /// Idle time.
    pub idle_ns: u64,
    /// Real kernel: idle time with IO outstanding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub iowait_ns: Option<u64>,
    /// Real kernel: hard-interrupt time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub irq_ns: Option<u64>,
    /// Real kernel: softirq time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub soft_ns: Option<u64>,
    /// Real kernel: time stolen by the hypervisor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub steal_ns: Option<u64>,
    /// Time tasks waited on this CPU's runqueue, counted when each wait
    /// ends (/proc/schedstat's cpuN run_delay; absent: not read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub run_delay_ns: Option<u64>,
}

/// `mpstat -P ALL`: the samples and the Average block.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Mpstat {
    /// One per whole interval of the window, when asked for
    /// (`measure.samples`, `schedlab run --samples`); else empty.
    pub samples: Vec<MpstatSample>,
    /// The Average block over the window: the `all` row, then one per CPU.
    /// Over the whole intervals when there is one, else over the window.
    pub average: Vec<MpstatRow>,
    /// Whole intervals in the window (the samples there are, kept or not).
    #[serde(default)]
    pub intervals: u64,
}

/// One mpstat interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MpstatSample {
    /// End of the interval.
    pub end_ns: u64,
    /// The `all` row, then one per CPU.
    pub rows: Vec<MpstatRow>,
    /// Per CPU, in CPU order: the time tasks waited on its runqueue in the
    /// interval (/proc/schedstat's cpuN run_delay; absent: not read).
    /// Beside the idle column it bounds the CPU time left idle while tasks
    /// waited (`schedlab difftest`'s wasted-CPU audit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub run_delay_ns: Option<Vec<u64>>,
}

/// One mpstat row: percentages of the row's time, two decimals.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MpstatRow {
    /// `"all"` or the CPU number.
    pub cpu: MpstatCpu,
    /// %usr.
    pub usr: f64,
    /// %nice.
    pub nice: f64,
    /// %sys.
    pub sys: f64,
    /// %iowait.
    pub iowait: f64,
    /// %irq.
    pub irq: f64,
    /// %soft.
    pub soft: f64,
    /// %steal.
    pub steal: f64,
    /// %guest.
    pub guest: f64,
    /// %gnice.
    pub gnice: f64,
    /// %idle.
    pub idle: f64,
}

/// An mpstat row's CPU: `"all"` or a CPU number.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MpstatCpu {
    /// The `all` row.
    #[default]
    All,
    /// One CPU.
    Cpu(usize),
}

impl Serialize for MpstatCpu {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            MpstatCpu::All => s.serialize_str("all"),
            MpstatCpu::Cpu(n) => s.serialize_u64(*n as u64),
        }
    }
}

impl<'de> Deserialize<'de> for MpstatCpu {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::String(s) if s == "all" => Ok(MpstatCpu::All),
            serde_json::Value::Number(n) if n.is_u64() => Ok(MpstatCpu::Cpu(n.as_u64().unwrap_or(0) as usize)),
            v => Err(serde::de::Error::custom(format!("an mpstat cpu is \"all\" or a CPU number, not {v}"))),
        }
    }
}

impl JsonSchema for MpstatCpu {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "MpstatCpu".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "`\"all\"` or a CPU number.",
            "oneOf": [{"const": "all"}, {"type": "integer", "minimum": 0}]
        })
    }
}

/// One task.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TaskRow {
    /// Its pid (the simulator's, or the real thread's tid).
    pub pid: u32,
    /// Its comm: the group's name, with `-N` for group members.
    pub comm: String,
    /// Its group.
    pub group: String,
    /// `SCHED_NORMAL`, `SCHED_BATCH`, `SCHED_IDLE`, `SCHED_FIFO`, `SCHED_RR`.
    pub policy: String,
    /// Its nice value.
    pub nice: i32,
    /// Its RT priority (1..99; 0 for the fair policies).
    pub rt_priority: u32,
    /// The kernel prio as traces print it: 120 + nice, or 99 - rt_priority.
    pub prio: i32,
    /// Its CPU affinity as a CPU list (`0-3,6`).
    pub cpus_allowed: String,
    /// When it started (null: a real thread that never did).
    pub start_ns: Option<u64>,
    /// When it exited (null: it did not).
    pub exit_ns: Option<u64>,
    /// CPU time. Simulation: over the whole run; real kernel: over the window.
    pub runtime_ns: u64,
    /// Time spent runnable but waiting, over the same span as runtime_ns.
    pub wait_ns: u64,
    /// The longest wait (null: the kernel has no schedstats).
    pub wait_max_ns: Option<u64>,
    /// Real kernel: timeslices (schedstat's third field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub timeslices: Option<u64>,
    /// Context switches, voluntary and involuntary.
    pub nr_switches: u64,
    /// Switches out because it blocked.
    pub nr_voluntary_switches: u64,
    /// Switches out because it was preempted.
    pub nr_involuntary_switches: u64,
    /// Migrations between CPUs (null: the kernel does not say).
    pub nr_migrations: Option<u64>,
    /// Wakeups (null: the kernel has no schedstats).
    pub nr_wakeups: Option<u64>,
    /// Mean delay from wakeup to running. Simulation: every wakeup; real
    /// kernel: the timer wakeups it measured.
    pub wakeup_delay_avg_ns: u64,
    /// The longest such delay.
    pub wakeup_delay_max_ns: u64,
    /// Simulation: when the longest delay ended (perf sched latency's
    /// "max at").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub wakeup_delay_max_at_ns: Option<u64>,
    /// Simulation: wakeup delays counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub wakeup_delays: Option<u64>,
    /// Simulation: the mean timer wakeup delay over the window, as
    /// `wakeup_delay_p50_ns` measures it (a real kernel's report has it as
    /// `wakeup_delay_avg_ns`; cyclictest's "Avg").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub timer_delay_avg_ns: Option<u64>,
    /// Simulation: the longest timer wakeup delay over the window
    /// (cyclictest's "Max").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub timer_delay_max_ns: Option<u64>,
    /// Simulation: wakeup delays in log2 buckets of microseconds: [0] below
    /// 1 us, [k] in [2^(k-1), 2^k) us, the last open-ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub wakeup_delay_hist_us: Option<Vec<u32>>,
    /// Median timer wakeup delay over the window (null: none measured).
    /// A timer wakeup delay runs from the sleep timer's expiry (hrtimer
    /// slack included; a wakeup without a timer: from the wakeup) to the
    /// task's return to user space: the switch to it plus the kernel time
    /// it pays before its own work (the context switch, a wakeup IPI, the
    /// idle exit); the runner measures the same on a real kernel.
    /// Percentiles are nearest-rank.
    #[serde(default)]
    pub wakeup_delay_p50_ns: Option<u64>,
    /// 90th percentile timer wakeup delay (null: none measured).
    #[serde(default)]
    pub wakeup_delay_p90_ns: Option<u64>,
    /// 99th percentile timer wakeup delay (null: none measured).
    #[serde(default)]
    pub wakeup_delay_p99_ns: Option<u64>,
    /// Timer wakeups measured over the window.
    #[serde(default)]
    pub wakeups_measured: u64,
    /// The CPU it last ran on (null: not known).
    pub last_cpu: Option<usize>,
    /// Real kernel: created by a `fork` op (not at the start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub forked: Option<bool>,
    /// Simulation: its counters over the measurement window (deltas since
    /// the warm-up; the whole run without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub window: Option<TaskWindow>,
}

/// A task's counters over the measurement window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TaskWindow {
    /// CPU time.
    pub runtime_ns: u64,
    /// Time runnable but waiting.
    pub wait_ns: u64,
    /// Context switches.
    pub nr_switches: u64,
    /// Voluntary switches.
    pub nr_voluntary_switches: u64,
    /// Involuntary switches.
    pub nr_involuntary_switches: u64,
    /// Migrations.
    pub nr_migrations: u64,
    /// Wakeups.
    pub nr_wakeups: u64,
}

/// One task group.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GroupRow {
    /// The group's name.
    pub name: String,
    /// Its tasks that started.
    pub count: usize,
    /// When its first task started (null: none did).
    pub start_ns: Option<u64>,
    /// When its last task exited, if all did (null otherwise).
    pub end_ns: Option<u64>,
    /// end_ns - start_ns in seconds (null if not all exited): a workload's
    /// completion time.
    pub elapsed_s: Option<f64>,
    /// CPU time of its tasks (simulation: whole run; real: window).
    pub runtime_ns: u64,
    /// Its tasks' mean CPU use over the window, % of one CPU: top's %CPU
    /// averaged over the group (null: no window or no tasks).
    #[serde(default)]
    pub cpu_pct: Option<f64>,
}

/// schedstat-named counters (/proc/schedstat version 15).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Schedstat {
    /// Per CPU.
    pub cpus: Vec<CpuSchedstat>,
    /// Sums over every CPU and level.
    pub totals: SchedstatTotals,
}

/// One CPU's schedstat line and its domains'.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CpuSchedstat {
    /// The CPU.
    pub cpu: usize,
    /// schedule() calls.
    pub sched_count: u64,
    /// schedule() calls that left the CPU idle.
    pub sched_goidle: u64,
    /// try_to_wake_up() calls issued on this CPU.
    pub ttwu_count: u64,
    /// ...of which woke the task onto this CPU.
    pub ttwu_local: u64,
    /// Time tasks ran on this CPU.
    pub run_ns: u64,
    /// Time tasks waited on this CPU's runqueue.
    pub wait_ns: u64,
    /// Timeslices run on this CPU.
    pub timeslices: u64,
    /// Per sched domain of this CPU, bottom-up.
    pub domains: Vec<DomainSchedstat>,
}

/// One sched domain's schedstat line on one CPU: its name and span, and
/// its load-balance counters. The three-element arrays are indexed by enum
/// cpu_idle_type: [CPU_IDLE, CPU_NOT_IDLE, CPU_NEWLY_IDLE].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DomainSchedstat {
    /// The level's name.
    pub name: String,
    /// CPUs in the span.
    pub span: usize,
    /// The span's CPUs as the kernel prints a cpulist ("0-63,128-191"):
    /// a few ranges, where a list of every CPU made the report quadratic in
    /// CPUs (8 MB of 31 on a 1,024-CPU machine).
    pub cpus: String,
    /// The counters.
    #[serde(flatten)]
    pub counters: LbCounters,
}

/// One domain's load-balance counters on one CPU (the scheduler keeps them
/// in this form as it runs). The three-element arrays are indexed by enum
/// cpu_idle_type: [CPU_IDLE, CPU_NOT_IDLE, CPU_NEWLY_IDLE].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LbCounters {
    /// load_balance() calls.
    pub lb_count: [u64; 3],
    /// ...that found the domain balanced.
    pub lb_balanced: [u64; 3],
    /// ...that found an imbalance but moved nothing.
    pub lb_failed: [u64; 3],
    /// Sum of the imbalances found.
    pub lb_imbalance: [u64; 3],
    /// Tasks pulled.
    pub lb_gained: [u64; 3],
    /// No busiest group found.
    pub lb_nobusyg: [u64; 3],
    /// No busiest queue found.
    pub lb_nobusyq: [u64; 3],
    /// Active balances attempted.
    pub alb_count: u64,
    /// Active balances that moved a task.
    pub alb_pushed: u64,
    /// Active balances that moved nothing.
    pub alb_failed: u64,
    /// Wakeups onto another CPU than the waker's, in this domain.
    pub ttwu_wake_remote: u64,
    /// wake_affine() decisions to pull the wakee to the waker's CPU.
    pub ttwu_move_affine: u64,
}

/// schedstat totals.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SchedstatTotals {
    /// Sum of alb_pushed.
    pub alb_pushed: u64,
    /// Sum of lb_failed.
    pub lb_failed: u64,
    /// Sum of lb_gained.
    pub lb_gained: u64,
}

/// Delay statistics over a set of wakeups.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DelayStats {
    /// Wakeups measured.
    pub count: u64,
    /// Mean delay.
    pub avg_ns: u64,
    /// Median (nearest rank; null without wakeups).
    pub p50_ns: Option<u64>,
    /// 90th percentile.
    pub p90_ns: Option<u64>,
    /// 99th percentile.
    pub p99_ns: Option<u64>,
    /// The longest.
    pub max_ns: Option<u64>,
}

/// Task migrations by how far they went.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MigrationsByDistance {
    /// To an SMT sibling of the same core.
    pub smt: u64,
    /// To another core sharing the LLC.
    pub llc: u64,
    /// To another LLC of the same node.
    pub remote_llc: u64,
    /// To another node.
    pub remote_node: u64,
}

/// The RT class's counters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RtInfo {
    /// RT tasks are balanced by push/pull (2.6.25+), not by the generic
    /// balancer.
    pub push_pull: bool,
    /// Tasks moved by push/pull.
    pub rt_migrations: u64,
    /// RT_PUSH_IPI: IPIs of the push irq_work chain.
    pub push_ipis: u64,
    /// Times an rt_rq was throttled (sched_rt_runtime_us exhausted).
    pub throttle_events: u64,
}

impl TaskWindow {
    /// `self - base`, field by field.
    pub fn since(&self, base: &TaskWindow) -> TaskWindow {
        TaskWindow {
            runtime_ns: self.runtime_ns - base.runtime_ns,
            wait_ns: self.wait_ns - base.wait_ns,
            nr_switches: self.nr_switches - base.nr_switches,
            nr_voluntary_switches: self.nr_voluntary_switches - base.nr_voluntary_switches,
            nr_involuntary_switches: self.nr_involuntary_switches - base.nr_involuntary_switches,
            nr_migrations: self.nr_migrations - base.nr_migrations,
            nr_wakeups: self.nr_wakeups - base.nr_wakeups,
        }
    }
}

impl DelayStats {
    /// The statistics of a set of delays (ns); O(n log n).
    pub fn of(delays: &[u64]) -> DelayStats {
        let mut s = delays.to_vec();
        s.sort_unstable();
        let avg = if s.is_empty() { 0 } else { s.iter().sum::<u64>() / s.len() as u64 };
        DelayStats {
            count: s.len() as u64,
            avg_ns: avg,
            p50_ns: percentile(&s, 50.0),
            p90_ns: percentile(&s, 90.0),
            p99_ns: percentile(&s, 99.0),
            max_ns: s.last().copied(),
        }
    }
}

/// Nearest-rank percentile of sorted values.
pub fn percentile(sorted: &[u64], p: f64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

impl Report {
    /// The report as a JSON value with sorted keys (the bytes every writer
    /// produces).
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("a report always serializes")
    }

    /// The report as compact JSON text with sorted keys.
    pub fn to_json(&self) -> String {
        sorted::to_string(self, None).expect("a report always serializes")
    }

    /// `to_json`, stopping with SL210 when the live heap passes `budget`
    /// while the text is written (engine::heap). `source` names the
    /// scenario in the error.
    pub fn to_json_within(&self, budget: Option<u64>, source: &str) -> Result<String, crate::SimError> {
        sorted::to_string(self, budget).map_err(|e| match e {
            sorted::Error::OverBudget(live) => crate::SimError::Resource {
                message: format!(
                    "{source}: the report's heap reached {} while its JSON was written ({} tasks, {} mpstat samples), \
                     over its budget of {}; accepted: fewer tasks, measure.samples = false or a longer \
                     measure.interval, or a larger SCHEDLAB_MEMORY_LIMIT",
                    crate::engine::heap::format_bytes(live),
                    self.tasks.len(),
                    self.mpstat.samples.len(),
                    crate::engine::heap::format_bytes(budget.unwrap_or(0)),
                ),
            },
            sorted::Error::Custom(m) => crate::SimError::internal(format!("the report cannot be written: {m}")),
        })
    }
}

/// A field left out of the JSON when it has no value is never null: its
/// schema loses the `null` schemars gives every `Option`, and says
/// `"x-optional": true` (schemars leaves every `Option` out of `required`,
/// so that list cannot tell "may be absent" from "may be null").
fn absent_when_none(schema: &mut schemars::Schema) {
    schema.insert("x-optional".into(), true.into());
    if let Some(serde_json::Value::Array(types)) = schema.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let t = types[0].clone();
            schema.insert("type".into(), t);
        }
    }
    if let Some(serde_json::Value::Array(any)) = schema.get("anyOf").cloned() {
        let rest: Vec<serde_json::Value> = any.into_iter().filter(|x| x.get("type") != Some(&"null".into())).collect();
        if rest.len() == 1 {
            schema.remove("anyOf");
            if let serde_json::Value::Object(o) = &rest[0] {
                for (k, v) in o {
                    schema.insert(k.clone(), v.clone());
                }
            }
        }
    }
}

/// The report's JSON schema (draft 2020-12), with every field's doc
/// comment as its description: the source of docs/report.md and
/// python/schedlab/report_types.py.
pub fn schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(Report)).expect("the schema serializes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 50.0), Some(50));
        assert_eq!(percentile(&v, 99.0), Some(99));
        assert_eq!(percentile(&v, 100.0), Some(100));
        assert_eq!(percentile(&[7], 90.0), Some(7));
        assert_eq!(percentile(&[], 50.0), None);
        let d = DelayStats::of(&[30, 10, 20]);
        assert_eq!((d.count, d.avg_ns, d.p50_ns, d.max_ns), (3, 20, Some(20), Some(30)));
    }

    #[test]
    fn keys_are_sorted_and_options_null_or_absent() {
        let v = Report { rt_migrate_test: None, ..Default::default() }.to_value();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
        // Always there, possibly null; left out when absent.
        assert!(v["rt_migrate_test"].is_null());
        assert!(v.get("host").is_none() && v.get("sim").is_none());
        let row = serde_json::to_value(TaskRow::default()).unwrap();
        assert!(row["exit_ns"].is_null() && row.get("window").is_none());
        assert_eq!(serde_json::to_value(MpstatCpu::All).unwrap(), "all");
        assert_eq!(serde_json::to_value(MpstatCpu::Cpu(3)).unwrap(), 3);
    }
}
