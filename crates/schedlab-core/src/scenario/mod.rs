//! Scenario schema, parsing and validation (the override grammar is
//! `overrides.rs`).
//!
//! Text -> TOML tree -> (drop the Python-only `experiment` and `variant`
//! tables) -> apply overrides -> serde into the raw schema (unknown keys are
//! errors, with their key path) -> `compile` into a validated `Scenario`
//! whose every value has been checked with its key path.

pub mod overrides;
pub mod units;

use serde::Deserialize;

use crate::error::{Location, Result, SimError};
use crate::kernel::config::{compile_kernel, RawKernel};
use crate::kernel::KernelConfig;
use crate::machine::{Machine, MachineSpec};
use crate::workload::compile::{compile_tasks, RawRtMigrateTest, RawTask};
use crate::workload::rt_migrate_test::RtmtConfig;
use crate::workload::TaskGroup;
use units::{duration_at, DURATION_ACCEPTED};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    name: Option<String>,
    description: Option<String>,
    machine: Option<MachineSpec>,
    #[serde(default)]
    kernel: RawKernel,
    #[serde(default)]
    measure: RawMeasure,
    #[serde(default)]
    task: Vec<RawTask>,
    rt_migrate_test: Option<RawRtMigrateTest>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMeasure {
    warmup: Option<String>,
    duration: Option<String>,
    interval: Option<String>,
    check: Option<bool>,
}

/// What to measure.
#[derive(Debug, Clone)]
pub struct Measure {
    pub warmup: u64,
    /// None: run until every task has exited.
    pub duration: Option<u64>,
    pub interval: u64,
    pub check: bool,
}

/// A validated scenario, ready to simulate.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    pub source: String,
    pub machine: Machine,
    pub kernel: KernelConfig,
    pub measure: Measure,
    pub groups: Vec<TaskGroup>,
    /// Barrier names and their participant counts.
    pub barriers: Vec<(String, usize)>,
    /// wait/signal event names.
    pub events: Vec<String>,
    /// `[rt_migrate_test]`: the tool's options and its threads' template
    /// groups (lowest priority first).
    pub rt_migrate_test: Option<(RtmtConfig, Vec<usize>)>,
}

fn loc(file: &str, key: &str) -> Location {
    Location { file: file.to_string(), key: key.to_string() }
}

/// Safety net: a run with no end time must still stop.
pub const MAX_SIM_NS: u64 = 30 * 24 * 3600 * 1_000_000_000;

/// Convert a serde error into a SimError with the key path.
fn serde_error(e: serde_path_to_error::Error<toml::de::Error>, file: &str) -> SimError {
    let path = e.path().to_string();
    let msg = e.inner().message().to_string();
    if let Some(rest) = msg.strip_prefix("unknown field `") {
        let (field, tail) = rest.split_once('`').unwrap_or((rest, ""));
        let accepted = tail.trim_start_matches(", expected ").trim_start_matches("one of ").replace('`', "");
        let key = if path.is_empty() || path == "." { field.to_string() } else { path.clone() };
        let key = if key.ends_with(field) { key } else { format!("{key}.{field}") };
        return SimError::UnknownKey { at: loc(file, &key), accepted };
    }
    if let Some(rest) = msg.strip_prefix("missing field `") {
        let field = rest.split('`').next().unwrap_or(rest);
        let key = if path.is_empty() || path == "." { field.to_string() } else { format!("{path}.{field}") };
        return SimError::MissingKey { at: loc(file, &key) };
    }
    let accepted = if msg.contains("invalid type") {
        msg.split("expected ").nth(1).unwrap_or("see docs/scenario.md").to_string()
    } else {
        "see docs/scenario.md".to_string()
    };
    SimError::BadValue { at: loc(file, if path.is_empty() { "." } else { &path }), message: msg, accepted }
}

/// Parse, override and validate a scenario.
pub fn load(text: &str, file: &str, overrides: &[(String, String)]) -> Result<Scenario> {
    let mut root: toml::Table = text.parse().map_err(|e: toml::de::Error| SimError::Syntax {
        file: file.to_string(),
        message: e.to_string().trim().replace('\n', " "),
    })?;
    // Interpreted by the Python front end (experiments); ignored here.
    root.remove("experiment");
    root.remove("variant");
    for (k, v) in overrides {
        overrides::apply_override(&mut root, k, v, file)?;
    }
    let de = toml::Value::Table(root);
    let raw: RawScenario = serde_path_to_error::deserialize(de).map_err(|e| serde_error(e, file))?;
    compile(raw, file)
}

fn compile(raw: RawScenario, file: &str) -> Result<Scenario> {
    let Some(mspec) = raw.machine else {
        return Err(SimError::MissingKey { at: loc(file, "machine") });
    };
    let machine = Machine::build(&mspec, file)?;

    let kernel = compile_kernel(&raw.kernel, file)?;

    // Measure.
    let m = &raw.measure;
    let measure = Measure {
        warmup: m.warmup.as_deref().map(|s| duration_at(s, file, "measure.warmup")).transpose()?.unwrap_or(0),
        duration: m.duration.as_deref().map(|s| duration_at(s, file, "measure.duration")).transpose()?,
        interval: m
            .interval
            .as_deref()
            .map(|s| duration_at(s, file, "measure.interval"))
            .transpose()?
            .unwrap_or(1_000_000_000),
        check: m.check.unwrap_or(false),
    };
    if measure.interval == 0 {
        return Err(SimError::bad_value(file, "measure.interval", "must be positive", DURATION_ACCEPTED));
    }
    if measure.duration == Some(0) {
        return Err(SimError::bad_value(file, "measure.duration", "must be positive", DURATION_ACCEPTED));
    }

    // Tasks.
    let (groups, barriers, events, rt_migrate_test) =
        compile_tasks(&raw.task, raw.rt_migrate_test.as_ref(), file, &machine)?;
    Ok(Scenario {
        name: raw.name.unwrap_or_else(|| file.rsplit('/').next().unwrap_or(file).trim_end_matches(".toml").to_string()),
        description: raw.description.unwrap_or_default(),
        source: file.to_string(),
        machine,
        kernel,
        measure,
        groups,
        barriers,
        events,
        rt_migrate_test,
    })
}
