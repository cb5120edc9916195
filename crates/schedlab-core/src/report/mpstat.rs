//! CPU time as /proc/stat and mpstat split it: per CPU, per interval.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::absent_when_none;

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
