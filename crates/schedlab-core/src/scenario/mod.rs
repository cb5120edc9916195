//! Scenario schema, parsing and validation (the override grammar is
//! `overrides.rs`).
//!
//! Text -> TOML tree -> (drop the `experiment` and `variant` tables, which
//! `experiment.rs` reads; expand `rtapp = "FILE.json"`) -> apply overrides -> serde into
//! the raw schema (unknown keys are errors, with their key path) ->
//! `compile` into a validated `Scenario` whose every value has been checked
//! with its key path. An rt-app JSON workload (`rtapp.rs`) enters as the
//! same tree, so the same validator checks it.

pub mod catalog;
pub mod describe;
pub mod doc;
pub mod experiment;
pub mod experiment_table;
mod isolcpus;
pub mod json;
pub mod overrides;
pub mod rtapp;
mod rtapp_taskgroup;
pub mod suite;
pub mod sweep;

use serde::Deserialize;

use crate::error::{Location, Result, SimError};
use crate::kernel::config::{compile_kernel, RawKernel};
use crate::kernel::KernelConfig;
use crate::machine::{Machine, MachineSpec};
use crate::units::{duration_at, DURATION_ACCEPTED};
use crate::workload::compile::{compile_tasks, RawRtMigrateTest, RawTask};
use crate::workload::dbench::{compile_dbench, filesystem_at, fs_workqueues, DbenchConfig, RawDbench};
use crate::workload::rt_migrate_test::RtmtConfig;
use crate::workload::TaskGroup;

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
    dbench: Option<RawDbench>,
    /// `[[channel]]` (workload/channel.rs).
    #[serde(default)]
    channel: Vec<toml::Value>,
    /// `[memory]` (kernel/vm.rs).
    memory: Option<crate::kernel::vm::RawMemory>,
    /// `[[cgroup]]` (workload/cgroup.rs).
    #[serde(default)]
    cgroup: Vec<crate::workload::cgroup::RawCgroup>,
    /// `[[session]]`: setsid() sessions, each with its autogroup (workload/cgroup.rs).
    #[serde(default)]
    session: Vec<crate::workload::cgroup::RawSession>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMeasure {
    warmup: Option<String>,
    duration: Option<String>,
    interval: Option<String>,
    limit: Option<String>,
    samples: Option<bool>,
    check: Option<bool>,
    start: Option<String>,
    start_phase: Option<String>,
}

/// How the workload's tasks start (`measure.start`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StartProtocol {
    /// Each task forked at its `start` time with its own attributes, from
    /// its first allowed CPU.
    #[default]
    Fork,
    /// As schedlab's real-kernel runner starts them (workload/start.rs):
    /// cloned from a running main thread, each sets its own attributes and
    /// waits at a start gate the main thread opens.
    Runner,
}

/// Where the workload starts against the jiffy grid
/// (`measure.start_phase`): the ticks, the kernel threads' timers and the
/// period timers keep the grid the boot laid; the scenario's tasks and its
/// window start this far after a jiffy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StartPhase {
    /// On a jiffy (the default): every run starts as the tick fires.
    #[default]
    Jiffy,
    /// Drawn from the seed, uniform over a jiffy, as a real run's start
    /// falls anywhere between two ticks.
    Seed,
    /// This many ns after a jiffy (below the tick).
    At(u64),
}

/// What to measure.
#[derive(Debug, Clone)]
pub struct Measure {
    pub warmup: u64,
    /// None: run until every task has exited, or `limit`.
    pub duration: Option<u64>,
    /// How long a run without `duration` may go: it stops there with a
    /// warning in the report.
    pub limit: u64,
    pub interval: u64,
    /// Keep every interval's mpstat sample in the report (memory grows with
    /// simulated time); without it only the Average block.
    pub samples: bool,
    pub check: bool,
    pub start: StartProtocol,
    pub start_phase: StartPhase,
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
    /// `[[cgroup]]`s, parents first, then the sessions' autogroups
    /// (workload/cgroup.rs).
    pub cgroups: Vec<crate::workload::cgroup::CgroupDef>,
    /// `[[session]]`s: (name, autogroup nice).
    pub sessions: Vec<(String, i64)>,
    /// `kernel.isolcpus`: the CPUs on the NULL domain (scenario/isolcpus.rs).
    pub isolcpus: Option<crate::cpumask::CpuMask>,
    /// Barrier names and their participant counts.
    pub barriers: Vec<(String, usize)>,
    /// wait/signal event names.
    pub events: Vec<String>,
    /// `[[channel]]`s (workload/channel.rs).
    pub channels: Vec<crate::workload::channel::ChannelDef>,
    /// `[rt_migrate_test]`: the tool's options and its threads' template
    /// groups (lowest priority first).
    pub rt_migrate_test: Option<(RtmtConfig, Vec<usize>)>,
    /// Work item programs (queue_work bodies, IO works).
    pub work_programs: Vec<crate::workload::Program>,
    /// The `io` and `queue_work` ops' parameters.
    pub io_ops: Vec<crate::workload::IoOp>,
    pub queue_works: Vec<crate::workload::QueueWorkOp>,
    /// The `read` ops' parameters.
    pub read_ops: Vec<crate::mm::ReadOp>,
    /// `[memory]`'s starting state.
    pub memory: Option<crate::kernel::vm::MemoryStart>,
    /// `[memory] swap = "zswap"`.
    pub zswap: bool,
    /// `[dbench]`: the benchmark's parameters and its client group.
    pub dbench: Option<DbenchConfig>,
    /// What the scenario asks for that runs as something near it (an
    /// unlisted kernel version): the report's first warnings.
    pub notes: Vec<String>,
}

fn loc(file: &str, key: &str) -> Location {
    Location { file: file.to_string(), key: key.to_string() }
}

/// The longest run schedlab simulates (warm-up + duration, or the limit):
/// one day of simulated time. Longer runs are split by the user.
pub const MAX_RUN_NS: u64 = 24 * 3600 * 1_000_000_000;
/// `measure.limit`'s default: a run without a duration stops after one
/// simulated hour unless every task has exited before.
pub const DEFAULT_LIMIT_NS: u64 = 3600 * 1_000_000_000;

/// `[measure]`, checked: positive times, an interval of at least one tick,
/// and runs no longer than MAX_RUN_NS.
fn compile_measure(m: &RawMeasure, file: &str, tick_ns: u64) -> Result<Measure> {
    let get = |v: &Option<String>, key: &str| v.as_deref().map(|s| duration_at(s, file, key)).transpose();
    let warmup = get(&m.warmup, "measure.warmup")?.unwrap_or(0);
    let duration = get(&m.duration, "measure.duration")?;
    let given_limit = get(&m.limit, "measure.limit")?;
    // The limit caps every run; its 1h default only a run without a
    // duration (a run with one is capped by the day).
    let limit = given_limit.unwrap_or(if duration.is_some() { MAX_RUN_NS } else { DEFAULT_LIMIT_NS });
    let interval = get(&m.interval, "measure.interval")?.unwrap_or(1_000_000_000);
    let ms = |ns: u64| format!("{}ms", ns / 1_000_000);
    if interval < tick_ns {
        return Err(SimError::bad_value(
            file,
            "measure.interval",
            format!("{} is below the tick ({})", crate::units::format_duration(interval), ms(tick_ns)),
            format!("a duration of at least one tick ({})", ms(tick_ns)),
        ));
    }
    let day = "at most 24h of simulated time in all (split a longer study into runs)";
    match duration {
        Some(0) => return Err(SimError::bad_value(file, "measure.duration", "must be positive", DURATION_ACCEPTED)),
        Some(d) if warmup.checked_add(d).is_none_or(|t| t > MAX_RUN_NS) => {
            return Err(SimError::bad_value(file, "measure.duration", "warm-up + duration is longer than a day", day))
        }
        _ => {}
    }
    if limit == 0 || limit > MAX_RUN_NS {
        return Err(SimError::bad_value(file, "measure.limit", "must be positive and at most a day", day));
    }
    if let (Some(d), Some(l)) = (duration, given_limit) {
        if warmup + d > l {
            let f = crate::units::format_duration;
            return Err(SimError::bad_value(
                file,
                "measure.limit",
                format!("the run (warm-up {} + duration {}) is longer than the limit ({})", f(warmup), f(d), f(l)),
                "a limit at least warm-up + duration, or no limit",
            ));
        }
    }
    if duration.is_none() && warmup >= limit {
        return Err(SimError::bad_value(
            file,
            "measure.warmup",
            "the warm-up reaches measure.limit: nothing would be measured",
            "a warm-up shorter than measure.limit (default 1h)",
        ));
    }
    Ok(Measure {
        warmup,
        duration,
        limit,
        interval,
        samples: m.samples.unwrap_or(false),
        check: m.check.unwrap_or(false),
        start: match m.start.as_deref() {
            None | Some("fork") => StartProtocol::Fork,
            Some("runner") => StartProtocol::Runner,
            Some(other) => {
                return Err(SimError::bad_value(file, "measure.start", format!("{other:?}"), "\"fork\" or \"runner\""))
            }
        },
        start_phase: match m.start_phase.as_deref() {
            None | Some("jiffy") => StartPhase::Jiffy,
            Some("seed") => StartPhase::Seed,
            Some(s) => match crate::units::parse_duration(s) {
                Ok(ns) if ns < tick_ns => StartPhase::At(ns),
                _ => {
                    return Err(SimError::bad_value(
                        file,
                        "measure.start_phase",
                        format!("{s:?}"),
                        format!(
                        "\"jiffy\" (the default), \"seed\" (drawn from the seed), or a duration below the tick ({})",
                        crate::units::format_duration(tick_ns)
                    ),
                    ))
                }
            },
        },
    })
}

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
    let key = if path.is_empty() { "." } else { &path };
    // "invalid type: string \"3\", expected i64": serde's words, said in
    // the scenario's (TOML's) words.
    for (prefix, what) in [("invalid type: ", "invalid type"), ("invalid value: ", "invalid value")] {
        if let Some((found, expected)) = msg.strip_prefix(prefix).and_then(|r| r.rsplit_once(", expected ")) {
            return SimError::BadValue {
                at: loc(file, key),
                message: format!("{what}: {}", found_in_toml_words(found)),
                accepted: expected_in_toml_words(expected),
            };
        }
    }
    SimError::BadValue { at: loc(file, key), message: msg, accepted: "see docs/scenario.md".to_string() }
}

/// serde's `expected ...` (a Rust type or serde's data model) as a
/// scenario writer reads it.
fn expected_in_toml_words(expected: &str) -> String {
    let e = expected.trim();
    match e {
        "usize" | "u64" | "u32" | "u16" | "u8" => "an integer >= 0".into(),
        "i64" | "i32" | "i16" | "i8" | "isize" => "an integer".into(),
        "f64" | "f32" => "a number".into(),
        "a sequence" => "an array".into(),
        "a map" => "a table".into(),
        "a boolean" | "a string" => e.into(),
        _ if e.starts_with("struct ") || e.starts_with("a tuple") || e.starts_with("tuple ") => "a table".into(),
        _ if e.starts_with("enum ") => "one of the values in docs/scenario.md".into(),
        _ => e.replace("a sequence", "an array").replace("a map", "a table"),
    }
}

/// serde's description of what it found (`floating point `1.5``, `string
/// "3"`, `sequence`) in TOML's words: `a number (1.5)`, `a string ("3")`.
fn found_in_toml_words(found: &str) -> String {
    let f = found.trim();
    let value = |rest: &str| rest.trim().trim_matches('`').to_string();
    if let Some(rest) = f.strip_prefix("floating point") {
        format!("a number ({})", value(rest))
    } else if let Some(rest) = f.strip_prefix("integer") {
        format!("an integer ({})", value(rest))
    } else if let Some(rest) = f.strip_prefix("string") {
        format!("a string ({})", rest.trim())
    } else if let Some(rest) = f.strip_prefix("boolean") {
        format!("a boolean ({})", value(rest))
    } else if f == "sequence" {
        "an array".into()
    } else if f == "map" {
        "a table".into()
    } else {
        f.into()
    }
}

/// The sections are tables and every `[[task]]` is one: serde would also
/// read a struct from an array (`machine = ["4cpu"]`), and its message
/// would then be about the array's elements.
fn require_tables(root: &toml::Table, file: &str) -> Result<()> {
    let not_table = |key: &str, v: &toml::Value| {
        let what = match v.type_str() {
            "integer" => "an integer",
            "float" => "a number",
            "array" => "an array",
            "string" => "a string",
            "boolean" => "a boolean",
            _ => "a date-time",
        };
        SimError::bad_value(file, key, format!("invalid type: {what}"), "a table")
    };
    for key in ["machine", "kernel", "measure", "rt_migrate_test", "dbench"] {
        match root.get(key) {
            Some(v) if !v.is_table() => return Err(not_table(key, v)),
            _ => {}
        }
    }
    if let Some(toml::Value::Array(tasks)) = root.get("task") {
        for (i, t) in tasks.iter().enumerate() {
            if !t.is_table() {
                return Err(not_table(&format!("task[{i}]"), t));
            }
        }
    }
    Ok(())
}

/// A TOML syntax error as one line: where, why, and the text around the
/// column. toml's own message quotes the whole source line before its
/// reason, so a 2,000-character line left the reason past the cut.
fn syntax_message(e: &toml::de::Error, text: &str) -> String {
    let reason = e.message().trim().replace('\n', " ");
    let Some(span) = e.span() else { return reason };
    let at = span.start.min(text.len());
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line_no = text[..at].matches('\n').count() + 1;
    let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let line = &text[line_start..line_end];
    let col = text[line_start..at].chars().count() + 1;
    // At most 40 characters either side of the column.
    let before: String = text[line_start..at].chars().rev().take(40).collect::<Vec<_>>().into_iter().rev().collect();
    let after: String = text[at..line_end].chars().take(40).collect();
    let (pre, post) =
        (if before.len() < at - line_start { "…" } else { "" }, if after.len() < line_end - at { "…" } else { "" });
    let near =
        if line.trim().is_empty() { String::new() } else { format!(" near: {pre}{before}⟨here⟩{after}{post}") };
    format!("line {line_no}, column {col}: {reason}{near}")
}

/// What a scenario's text is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A schedlab scenario (TOML).
    Toml,
    /// An rt-app JSON workload; the machine (and the kernel) come as
    /// overrides (`machine.preset`, `kernel.version`).
    RtApp,
}

/// A scenario's tree before validation: the TOML parsed (or the rt-app
/// workload imported), the `experiment`/`variant` tables dropped, an
/// `rtapp` key expanded and the overrides applied.
pub fn tree(text: &str, file: &str, format: Format, overrides: &[(String, String)]) -> Result<toml::Table> {
    let mut root = match format {
        Format::RtApp => rtapp::workload_tree(text, file)?,
        Format::Toml => {
            let mut root: toml::Table = text.parse().map_err(|e: toml::de::Error| SimError::Syntax {
                file: file.to_string(),
                message: syntax_message(&e, text),
            })?;
            // An experiment's own tables (experiment.rs), not the scenario's.
            root.remove("experiment");
            root.remove("variant");
            rtapp::expand(&mut root, file)?;
            root
        }
    };
    for (k, v) in overrides {
        overrides::apply_override(&mut root, k, v, file)?;
    }
    Ok(root)
}

/// [`tree`] as TOML text, self-contained (no `rtapp` key, the overrides
/// applied): what a QEMU guest's runner reads. The core's one TOML writer.
pub fn tree_toml(text: &str, file: &str, format: Format, overrides: &[(String, String)]) -> Result<String> {
    let t = tree(text, file, format, overrides)?;
    toml::to_string(&t).map_err(|e| SimError::internal(format!("{file}: the scenario as TOML: {e}")))
}

/// Parse, override and validate a scenario.
pub fn load(text: &str, file: &str, overrides: &[(String, String)]) -> Result<Scenario> {
    load_as(text, file, Format::Toml, overrides)
}

/// Parse (as `format`), override and validate a scenario.
pub fn load_as(text: &str, file: &str, format: Format, overrides: &[(String, String)]) -> Result<Scenario> {
    validate(tree(text, file, format, overrides)?, file)
}

/// As [`load`], for the real-kernel runner: what sched_setattr() would
/// refuse of the SCHED_DEADLINE groups is left to the kernel to refuse
/// (`check_dl_groups` is the simulator's prediction of its answer).
pub fn load_real(text: &str, file: &str, overrides: &[(String, String)]) -> Result<Scenario> {
    validate_as(tree(text, file, Format::Toml, overrides)?, file, false)
}

/// Validate a scenario's tree (see [`tree`]).
pub fn validate(root: toml::Table, file: &str) -> Result<Scenario> {
    validate_as(root, file, true)
}

fn validate_as(root: toml::Table, file: &str, setattr_checks: bool) -> Result<Scenario> {
    require_tables(&root, file)?;
    let de = toml::Value::Table(root);
    let raw: RawScenario = serde_path_to_error::deserialize(de).map_err(|e| serde_error(e, file))?;
    compile(raw, file, setattr_checks)
}

fn compile(raw: RawScenario, file: &str, setattr_checks: bool) -> Result<Scenario> {
    let Some(mspec) = raw.machine else {
        return Err(SimError::MissingKey { at: loc(file, "machine") });
    };
    let machine = Machine::build(&mspec, file)?;

    let mut kernel = compile_kernel(&raw.kernel, file)?;
    if let (Some(g), None) = (kernel.cpufreq_governor, machine.processor) {
        // No cpufreq driver, no governor to choose (scaling_governor).
        return Err(SimError::bad_value(
            file,
            "kernel.cpufreq_governor",
            format!("\"{}\" on a machine without CPU frequency (machine.cpufreq = \"none\")", g.name()),
            "a governor with a processor: set machine.cpufreq (docs/models/cpufreq.md)",
        ));
    }
    if let (Some(_), None) = (kernel.freq_invariance, machine.processor) {
        return Err(SimError::bad_value(
            file,
            "kernel.freq_invariance",
            "set on a machine without CPU frequency (machine.cpufreq = \"none\")",
            "true or false with a processor: set machine.cpufreq (docs/models/cpufreq.md)",
        ));
    }
    if let Some(d) = &raw.dbench {
        // Mounting the filesystem makes its workqueues.
        for wq in fs_workqueues(filesystem_at(d, file)?) {
            if !kernel.workqueues.iter().any(|w| w.name == wq.name) {
                kernel.workqueues.push(wq);
            }
        }
    }
    let notes = kernel.version.unlisted_note().into_iter().collect();
    let memory = raw.memory.as_ref().map(|m| crate::kernel::vm::compile_memory(m, file)).transpose()?;
    let zswap = match &raw.memory {
        Some(m) => crate::kernel::vm::compile_swap(m, kernel.version, &kernel.mech, file)?,
        None => false,
    };

    let measure = compile_measure(&raw.measure, file, kernel.tick_ns)?;
    if measure.start == StartProtocol::Runner && (raw.dbench.is_some() || raw.rt_migrate_test.is_some()) {
        return Err(SimError::bad_value(
            file,
            "measure.start",
            "\"runner\" with [dbench] or [rt_migrate_test], which start their own threads",
            "\"runner\" for a workload of [[task]] groups; \"fork\" for any",
        ));
    }

    // Tasks.
    let channels = crate::workload::channel::compile_channels(&raw.channel, file)?;
    let mut ct = compile_tasks(
        &raw.task,
        raw.rt_migrate_test.as_ref(),
        file,
        &machine,
        &kernel.workqueues,
        &channels,
        &kernel.costs,
    )?;
    let isolcpus = isolcpus::parse_isolcpus(raw.kernel.isolcpus.as_deref(), file, machine.nr_cpus())?;
    if let Some(iso) = &isolcpus {
        let given: Vec<bool> = raw.task.iter().map(|t| t.cpus.is_some()).collect();
        isolcpus::apply_isolcpus(&mut ct.groups, &given, iso, file)?;
    }
    let mut cgroups = crate::workload::cgroup::compile_cgroups(&raw.cgroup, file, kernel.version, machine.nr_cpus())?;
    for (i, t) in raw.task.iter().enumerate() {
        let key = format!("task[{i}].cgroup");
        let tg = crate::workload::cgroup::cgroup_of(t.cgroup.as_deref(), &cgroups, file, &key)?;
        ct.groups[i].cgroup = tg;
        if tg > 0 {
            let g = &mut ct.groups[i];
            let key = format!("task[{i}].cpus");
            let cg = &cgroups[tg - 1];
            if let Some(cpus) = crate::workload::cpuset::cpus_in_cgroup(&g.cpus, cg, file, &key)? {
                g.cpus = cpus;
            }
        }
    }
    let sessions = crate::workload::cgroup::compile_sessions(
        &raw.session,
        &raw.task,
        &mut ct.groups,
        &mut cgroups,
        file,
        &kernel,
    )?;
    if setattr_checks {
        crate::sched::syscalls::check_dl_groups(&ct.groups, file, &kernel, machine.nr_cpus())?;
    }
    let dbench = match &raw.dbench {
        Some(d) => {
            let tables = (&mut ct.work_programs, &mut ct.io_ops, &mut ct.queue_works);
            Some(compile_dbench(d, file, &machine, &kernel.workqueues, &mut ct.groups, tables)?)
        }
        None => None,
    };
    if let Some(iso) = &isolcpus {
        // dbench's and rt-migrate-test's groups, after the [[task]]s.
        isolcpus::apply_isolcpus(&mut ct.groups, &vec![true; raw.task.len()], iso, file)?;
        isolcpus::check_partitions(&cgroups, iso, file)?;
    }
    crate::workload::cpuset::apply_partitions(&mut ct.groups, &cgroups, file)?;
    Ok(Scenario {
        name: raw.name.unwrap_or_else(|| file.rsplit('/').next().unwrap_or(file).trim_end_matches(".toml").to_string()),
        description: raw.description.unwrap_or_default(),
        source: file.to_string(),
        machine,
        kernel,
        measure,
        notes,
        groups: ct.groups,
        cgroups,
        isolcpus,
        sessions,
        barriers: ct.barriers,
        events: ct.events,
        channels,
        rt_migrate_test: ct.rt_migrate_test,
        work_programs: ct.work_programs,
        io_ops: ct.io_ops,
        queue_works: ct.queue_works,
        read_ops: ct.read_ops,
        memory,
        zswap,
        dbench,
    })
}

#[cfg(test)]
mod tests {
    /// The kernel's ranges (prio.rs defines them once) in the
    /// errors' "accepted" text, word for word as the errors always said them.
    #[test]
    fn range_errors_name_the_kernel_ranges() {
        let base = "name = \"r\"\n[machine]\npreset = \"4cpu\"\n[kernel]\nversion = \"6.1\"\n[[task]]\nname = \"t\"\n\
                    program = [{ run = \"1ms\" }]\n";
        let err = |extra: &str| super::load(&format!("{base}{extra}"), "r.toml", &[]).unwrap_err().to_string();
        let cases = [
            ("nice = 20\n", "accepted: -20..19"),
            ("policy = \"SCHED_FIFO\"\nrt_priority = 100\n", "accepted: 1..99 for SCHED_FIFO and SCHED_RR"),
            ("[kernel.ktask]\nhelper_nice = -21\n", "accepted: -20..19 (P0 uses 19, MAX_NICE)"),
            ("[kernel.vm]\nkswapd_nice = 20\n", "accepted: -20..19"),
            ("[[kernel.workqueue]]\nname = \"w\"\nflags = [\"WQ_UNBOUND\"]\nnice = 20\n", "accepted: -20..19"),
            (
                "[[kernel.workqueue]]\nname = \"w\"\nnice = 5\n",
                "accepted: nice only with WQ_UNBOUND (bound ones run at 0, or -20 with WQ_HIGHPRI)",
            ),
            ("[rt_migrate_test]\nprio = 99\n", "accepted: 1..98"),
            ("[rt_migrate_test]\nprio = 90\nnr_tasks = 10\n", "accepted: prio + nr_tasks <= 99"),
        ];
        for (extra, want) in cases {
            let e = err(extra);
            assert!(e.ends_with(want), "{extra}: {e}");
        }
    }
}
