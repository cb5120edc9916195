//! The report of one run, simulated (`sim/report.rs` builds it from a
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

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

mod kernel;
mod mm;
mod mpstat;
mod rt_migrate;
mod run;
mod schedstat;
pub mod sorted;
mod task;
pub use kernel::{
    CpuIdleRow, CpufreqReport, CpufreqRow, CpuidleReport, DbenchReport, DiskReport, IdleStateInfo, MemBwNode,
    PackagePower, PressureFile, PressureLine, PressureReport, WorkqueueRow,
};
pub use mm::{AllocRow, DirtySample, KswapdRow, MmReport, NodeRow, ProcsRow, ThrottleRow, WbRow, WritebackReport};
pub use mpstat::{CpuTimes, Mpstat, MpstatCpu, MpstatRow, MpstatSample};
pub use rt_migrate::{RtmtAt, RtmtEarlierThreads, RtmtReport, RtmtRun, RtmtTask};
pub use run::{
    Calibration, CostFigure, DomainInfo, HostInfo, KernelInfo, MachineInfo, MeasureInfo, OracleInfo, RealInfo,
    ScaledInfo, SimInfo, ToolRun,
};
pub use schedstat::{
    CpuSchedstat, DomainSchedstat, LbCounters, MigrationsByDistance, RtInfo, Schedstat, SchedstatTotals,
};
pub use task::{percentile, CgroupRow, DelayStats, GroupRow, TaskRow, TaskWindow};

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
    /// Real kernel: the number of runs this report is the median of
    /// (`--repeat N`, N > 1: every number is their median).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub repeat: Option<u32>,
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
    /// Simulation: per `[[cgroup]]` of the scenario (its cpu controller's
    /// files); absent without cgroups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub cgroups: Option<Vec<CgroupRow>>,
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
    /// The scenario's tasks' timer delays over the window, all tasks
    /// together (see `TaskRow.timer_delay_avg_ns`).
    pub timer_delay: DelayStats,
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
    /// Simulation: the CPUs' frequencies over the window, with a
    /// processor (`machine.cpufreq`); absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub cpufreq: Option<CpufreqReport>,
    /// Simulation: each NUMA node's memory bandwidth and the traffic over
    /// the window; absent without `machine.memory_bandwidth` (membw/).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub memory_bandwidth: Option<Vec<MemBwNode>>,
    /// Simulation: pressure stall information, as /proc/pressure prints
    /// it at the end; absent without `kernel.psi` (sched/psi.rs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = absent_when_none)]
    pub pressure: Option<PressureReport>,
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
pub(crate) fn absent_when_none(schema: &mut schemars::Schema) {
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

/// A share in percent with two decimals, as mpstat prints it.
pub fn pct(x: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        (x as f64 * 10000.0 / total as f64).round() / 100.0
    }
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
        // Selected as sorting would give them, ties and every length.
        let mut x = 12345u64;
        for n in 1..300 {
            let v: Vec<u64> = (0..n)
                .map(|_| {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    (x >> 33) % 50
                })
                .collect();
            let mut sorted = v.clone();
            sorted.sort_unstable();
            let d = DelayStats::of(&v);
            let want = [percentile(&sorted, 50.0), percentile(&sorted, 90.0), percentile(&sorted, 99.0)];
            assert_eq!([d.p50_ns, d.p90_ns, d.p99_ns], want, "{n}");
            assert_eq!(d.max_ns, sorted.last().copied());
        }
        let e = DelayStats::of(&[]);
        assert_eq!((e.count, e.avg_ns, e.p50_ns, e.max_ns), (0, 0, None, None));
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
