//! Scenario schema, parsing and validation (the override grammar is
//! `overrides.rs`).
//!
//! Text -> TOML tree -> (drop the Python-only `experiment` and `variant`
//! tables) -> apply overrides -> serde into the raw schema (unknown keys are
//! errors, with their key path) -> `compile` into a validated `Scenario`
//! whose every value has been checked with its key path.

pub mod overrides;
pub mod units;

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::cpumask::CpuMask;
use crate::error::{Location, Result, SimError};
use crate::kernel::version::{KernelVersion, KNOWN_VERSIONS};
use crate::kernel::{BalancerEra, FairEra, KernelConfig, PreemptModel};
use crate::machine::{Machine, MachineSpec};
use crate::sched::prio::Policy;
use crate::workload::rt_migrate_test::{RtmtConfig, RtmtOp};
use crate::workload::{Dist, Op, Program};
use units::{parse_duration, DURATION_ACCEPTED};

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

/// `[rt_migrate_test]`: the rt-tests tool as a workload (its options).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRtMigrateTest {
    nr_tasks: Option<i64>,
    prio: Option<i64>,
    run: Option<String>,
    sleep: Option<String>,
    loops: Option<i64>,
    maxerr: Option<String>,
    check: Option<bool>,
    runs: Option<i64>,
    rotate_high: Option<bool>,
    loop_cost: Option<String>,
    cpus: Option<toml::Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawKernel {
    version: Option<String>,
    hz: Option<i64>,
    #[serde(default)]
    features: Vec<String>,
    #[serde(default)]
    sysctl: BTreeMap<String, toml::Value>,
    #[serde(default)]
    costs: RawCosts,
    #[serde(default)]
    ktask: RawKtask,
    preempt: Option<String>,
    /// Mechanism-era overrides: "cfs"/"eevdf", "avg_load"/"group_type".
    fair: Option<String>,
    /// Per-CPU vmstat_update kworkers (kernel background activity).
    vmstat_kworkers: Option<bool>,
    balancer: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCosts {
    context_switch: Option<String>,
    migration_smt: Option<String>,
    migration_llc: Option<String>,
    migration_remote_llc: Option<String>,
    migration_remote_node: Option<String>,
    wakeup_ipi: Option<String>,
    timer_slack: Option<String>,
    idle_exit: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawKtask {
    helper_nice: Option<i64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMeasure {
    warmup: Option<String>,
    duration: Option<String>,
    interval: Option<String>,
    check: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTask {
    name: String,
    count: Option<i64>,
    policy: Option<String>,
    nice: Option<i64>,
    rt_priority: Option<i64>,
    cpus: Option<toml::Value>,
    start: Option<String>,
    kthread: Option<bool>,
    #[serde(default)]
    program: Vec<toml::Value>,
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

/// A group of identical tasks.
#[derive(Debug, Clone)]
pub struct TaskGroup {
    pub name: String,
    pub count: usize,
    pub policy: Policy,
    pub nice: i32,
    pub rt_priority: u32,
    pub cpus: CpuMask,
    pub start: u64,
    pub kthread: bool,
    pub program: Program,
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

/// Safety net: a run with no end time must still stop.
pub const MAX_SIM_NS: u64 = 30 * 24 * 3600 * 1_000_000_000;

fn loc(file: &str, key: &str) -> Location {
    Location { file: file.to_string(), key: key.to_string() }
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

fn duration_at(s: &str, file: &str, key: &str) -> Result<u64> {
    parse_duration(s).map_err(|m| SimError::bad_value(file, key, m, DURATION_ACCEPTED))
}

fn dist_at(v: &toml::Value, file: &str, key: &str) -> Result<Dist> {
    let accepted = "a duration string (\"20ms\") or {exp = D}, {uniform = [D, D]}, {normal = [mean, sd]}";
    match v {
        toml::Value::String(s) => Ok(Dist::Const(duration_at(s, file, key)?)),
        toml::Value::Table(t) if t.len() == 1 => {
            let (k, val) = t.iter().next().expect("one entry");
            let sub = format!("{key}.{k}");
            let pair = |val: &toml::Value| -> Result<(u64, u64)> {
                match val.as_array().map(|a| a.as_slice()) {
                    Some([toml::Value::String(a), toml::Value::String(b)]) => {
                        Ok((duration_at(a, file, &sub)?, duration_at(b, file, &sub)?))
                    }
                    _ => Err(SimError::bad_value(file, &sub, "expected two duration strings", accepted)),
                }
            };
            match k.as_str() {
                "exp" => match val {
                    toml::Value::String(s) => Ok(Dist::Exp(duration_at(s, file, &sub)?)),
                    _ => Err(SimError::bad_value(file, &sub, "expected a duration string (the mean)", accepted)),
                },
                "uniform" => {
                    let (a, b) = pair(val)?;
                    if a > b {
                        return Err(SimError::bad_value(file, &sub, "low bound above high bound", accepted));
                    }
                    Ok(Dist::Uniform(a, b))
                }
                "normal" => {
                    let (m, sd) = pair(val)?;
                    Ok(Dist::Normal(m, sd))
                }
                _ => Err(SimError::UnknownKey { at: loc(file, &sub), accepted: "exp, uniform, normal".into() }),
            }
        }
        _ => Err(SimError::bad_value(file, key, format!("unexpected value {v}"), accepted)),
    }
}

const OPS_ACCEPTED: &str = "run, runtime, sleep, timer, yield, loop, barrier, wait, signal, fork, exit, parallel";

struct ProgCtx<'a> {
    file: &'a str,
    barriers: &'a mut Vec<(String, usize)>,
    events: &'a mut Vec<String>,
    fork_refs: &'a mut Vec<(String, String)>,
    barrier_uses: Vec<usize>,
}

fn intern(v: &mut Vec<String>, name: &str) -> usize {
    if let Some(i) = v.iter().position(|x| x == name) {
        i
    } else {
        v.push(name.to_string());
        v.len() - 1
    }
}

fn compile_ops(list: &[toml::Value], key: &str, ctx: &mut ProgCtx, out: &mut Vec<Op>) -> Result<()> {
    let file = ctx.file;
    for (i, v) in list.iter().enumerate() {
        let k = format!("{key}[{i}]");
        let t = v
            .as_table()
            .filter(|t| t.len() == 1)
            .ok_or_else(|| SimError::bad_value(file, &k, "an op is a table with exactly one key", OPS_ACCEPTED))?;
        let (name, val) = t.iter().next().expect("one entry");
        let sub = format!("{k}.{name}");
        let want_str = |val: &toml::Value| -> Result<String> {
            val.as_str()
                .map(str::to_string)
                .ok_or_else(|| SimError::bad_value(file, &sub, "expected a name string", "a string"))
        };
        match name.as_str() {
            "run" => out.push(Op::Run(dist_at(val, file, &sub)?)),
            "runtime" => out.push(Op::Runtime(dist_at(val, file, &sub)?)),
            "sleep" => out.push(Op::Sleep(dist_at(val, file, &sub)?)),
            "timer" => {
                let period = match val {
                    toml::Value::String(s) => duration_at(s, file, &sub)?,
                    toml::Value::Table(t) => {
                        for key in t.keys() {
                            if key != "period" {
                                return Err(SimError::UnknownKey {
                                    at: loc(file, &format!("{sub}.{key}")),
                                    accepted: "period".into(),
                                });
                            }
                        }
                        match t.get("period").and_then(|p| p.as_str()) {
                            Some(s) => duration_at(s, file, &format!("{sub}.period"))?,
                            None => return Err(SimError::MissingKey { at: loc(file, &format!("{sub}.period")) }),
                        }
                    }
                    _ => {
                        return Err(SimError::bad_value(
                            file,
                            &sub,
                            "expected a period",
                            "\"10ms\" or {period = \"10ms\"}",
                        ))
                    }
                };
                if period == 0 {
                    return Err(SimError::bad_value(file, &sub, "period must be positive", DURATION_ACCEPTED));
                }
                out.push(Op::Timer { period });
            }
            "yield" => out.push(Op::Yield),
            "exit" => out.push(Op::Exit),
            "barrier" => {
                let b = want_str(val)?;
                let idx = match ctx.barriers.iter().position(|(n, _)| *n == b) {
                    Some(i) => i,
                    None => {
                        ctx.barriers.push((b, 0));
                        ctx.barriers.len() - 1
                    }
                };
                if !ctx.barrier_uses.contains(&idx) {
                    ctx.barrier_uses.push(idx);
                }
                out.push(Op::Barrier(idx));
            }
            "wait" => {
                let e = want_str(val)?;
                out.push(Op::Wait(intern(ctx.events, &e)));
            }
            "signal" => {
                let e = want_str(val)?;
                out.push(Op::Signal(intern(ctx.events, &e)));
            }
            "fork" => {
                let g = want_str(val)?;
                ctx.fork_refs.push((g, sub.clone()));
                out.push(Op::Fork(usize::MAX)); // resolved after all groups are known
            }
            "loop" => {
                let t = val
                    .as_table()
                    .ok_or_else(|| SimError::bad_value(file, &sub, "expected a table", "{count = N, body = [ops]}"))?;
                for key in t.keys() {
                    if key != "count" && key != "body" {
                        return Err(SimError::UnknownKey {
                            at: loc(file, &format!("{sub}.{key}")),
                            accepted: "count, body".into(),
                        });
                    }
                }
                let count = match t.get("count") {
                    None => 0,
                    Some(toml::Value::Integer(n)) if *n >= 0 => *n as u64,
                    Some(_) => {
                        return Err(SimError::bad_value(
                            file,
                            &format!("{sub}.count"),
                            "expected a non-negative integer",
                            "0 (forever) or a positive count",
                        ))
                    }
                };
                let body = t
                    .get("body")
                    .and_then(|b| b.as_array())
                    .ok_or_else(|| SimError::MissingKey { at: loc(file, &format!("{sub}.body")) })?;
                let start = out.len();
                out.push(Op::LoopStart { count, end: 0 });
                compile_ops(body, &format!("{sub}.body"), ctx, out)?;
                let end = out.len();
                out.push(Op::LoopEnd { start });
                out[start] = Op::LoopStart { count, end };
            }
            "parallel" => {
                let t = val.as_table().ok_or_else(|| {
                    SimError::bad_value(file, &sub, "expected a table", "{work = D, threads = N, min_chunk = D}")
                })?;
                for key in t.keys() {
                    if !["work", "threads", "min_chunk"].contains(&key.as_str()) {
                        return Err(SimError::UnknownKey {
                            at: loc(file, &format!("{sub}.{key}")),
                            accepted: "work, threads, min_chunk".into(),
                        });
                    }
                }
                let work = match t.get("work").and_then(|w| w.as_str()) {
                    Some(s) => duration_at(s, file, &format!("{sub}.work"))?,
                    None => return Err(SimError::MissingKey { at: loc(file, &format!("{sub}.work")) }),
                };
                let threads = match t.get("threads") {
                    Some(toml::Value::Integer(n)) if (1..=4096).contains(n) => *n as usize,
                    None => 4, // KTASK_DEFAULT_MAX_THREADS
                    Some(_) => {
                        return Err(SimError::bad_value(
                            file,
                            &format!("{sub}.threads"),
                            "expected an integer 1..4096",
                            "1..4096 (default 4, KTASK_DEFAULT_MAX_THREADS)",
                        ))
                    }
                };
                let min_chunk = match t.get("min_chunk").and_then(|w| w.as_str()) {
                    Some(s) => duration_at(s, file, &format!("{sub}.min_chunk"))?.max(1),
                    None => 1_000_000,
                };
                out.push(Op::Parallel { work, threads, min_chunk });
            }
            "io" | "lock" | "unlock" | "queue_work" | "alloc" | "read" | "wake" => {
                return Err(SimError::not_modelled(
                    file,
                    &sub,
                    format!("op \"{name}\" is not modelled yet; accepted ops: {OPS_ACCEPTED}"),
                ));
            }
            _ => return Err(SimError::UnknownKey { at: loc(file, &sub), accepted: OPS_ACCEPTED.into() }),
        }
    }
    Ok(())
}

fn compile(raw: RawScenario, file: &str) -> Result<Scenario> {
    let Some(mspec) = raw.machine else {
        return Err(SimError::MissingKey { at: loc(file, "machine") });
    };
    let machine = Machine::build(&mspec, file)?;
    let nr_cpus = machine.nr_cpus();

    // Kernel.
    let vstr = raw.kernel.version.as_deref().unwrap_or("6.1");
    let version = KernelVersion::parse(vstr).ok_or_else(|| {
        SimError::bad_value(
            file,
            "kernel.version",
            format!("unknown kernel version \"{vstr}\""),
            format!("a version 2.6.23 or later, e.g. {}", KNOWN_VERSIONS.join(", ")),
        )
    })?;
    let mut kernel = KernelConfig::defaults(version);
    if let Some(hz) = raw.kernel.hz {
        if ![100, 250, 300, 1000].contains(&hz) {
            return Err(SimError::bad_value(
                file,
                "kernel.hz",
                format!("HZ {hz} is not a Kconfig choice"),
                "100, 250, 300, 1000",
            ));
        }
        kernel.hz = hz as u32;
        kernel.tick_ns = 1_000_000_000 / hz as u64;
    }
    for (i, f) in raw.kernel.features.iter().enumerate() {
        let accepted = kernel.features.accepted_names();
        kernel
            .features
            .apply(f, version)
            .map_err(|m| SimError::bad_value(file, &format!("kernel.features[{i}]"), m, accepted))?;
    }
    for (name, v) in &raw.kernel.sysctl {
        let key = format!("kernel.sysctl.\"{name}\"");
        let val = match v {
            toml::Value::Integer(n) => *n,
            toml::Value::String(s) => match parse_duration(s) {
                Ok(ns) if name.ends_with("_ns") => ns as i64,
                Ok(ns) if name.ends_with("_us") => (ns / 1000) as i64,
                Ok(ns) if name.ends_with("_ms") => (ns / 1_000_000) as i64,
                _ => {
                    return Err(SimError::bad_value(
                        file,
                        &key,
                        format!("\"{s}\" is not an integer"),
                        "an integer in the sysctl's own unit, or a duration string for *_ns/_us/_ms",
                    ))
                }
            },
            _ => {
                return Err(SimError::bad_value(
                    file,
                    &key,
                    format!("{v} is not an integer"),
                    "an integer in the sysctl's own unit",
                ))
            }
        };
        kernel.sysctl.set(name, val).map_err(|m| {
            if m.starts_with("unknown sysctl") {
                SimError::UnknownKey { at: loc(file, &key), accepted: crate::kernel::Tunables::NAMES.join(", ") }
            } else {
                SimError::bad_value(file, &key, m, "see the sysctl's documentation")
            }
        })?;
    }
    let c = &raw.kernel.costs;
    let costs = &mut kernel.costs;
    for (val, slot, k) in [
        (&c.context_switch, &mut costs.context_switch_ns, "context_switch"),
        (&c.migration_smt, &mut costs.migration_smt_ns, "migration_smt"),
        (&c.migration_llc, &mut costs.migration_llc_ns, "migration_llc"),
        (&c.migration_remote_llc, &mut costs.migration_remote_llc_ns, "migration_remote_llc"),
        (&c.migration_remote_node, &mut costs.migration_remote_node_ns, "migration_remote_node"),
        (&c.wakeup_ipi, &mut costs.wakeup_ipi_ns, "wakeup_ipi"),
        (&c.timer_slack, &mut costs.timer_slack_ns, "timer_slack"),
        (&c.idle_exit, &mut costs.idle_exit_ns, "idle_exit"),
    ] {
        if let Some(s) = val {
            *slot = duration_at(s, file, &format!("kernel.costs.{k}"))?;
        }
    }
    if let Some(n) = raw.kernel.ktask.helper_nice {
        if !(-20..=19).contains(&n) {
            return Err(SimError::bad_value(
                file,
                "kernel.ktask.helper_nice",
                format!("nice {n} out of range"),
                "-20..19 (P0 uses 19, MAX_NICE)",
            ));
        }
        kernel.ktask_helper_nice = n as i32;
    }
    if let Some(p) = &raw.kernel.preempt {
        kernel.preempt = match p.as_str() {
            "none" => PreemptModel::None,
            "voluntary" => PreemptModel::Voluntary,
            "full" => PreemptModel::Full,
            _ => return Err(SimError::bad_value(file, "kernel.preempt", format!("\"{p}\""), "none, voluntary, full")),
        };
    }
    if let Some(v) = raw.kernel.vmstat_kworkers {
        kernel.vmstat_kworkers = v;
    }
    if let Some(f) = &raw.kernel.fair {
        kernel.mech.fair = match f.as_str() {
            "cfs" => FairEra::Cfs,
            "eevdf" => FairEra::Eevdf,
            _ => return Err(SimError::bad_value(file, "kernel.fair", format!("\"{f}\""), "cfs, eevdf")),
        };
    }
    if let Some(b) = &raw.kernel.balancer {
        kernel.mech.balancer = match b.as_str() {
            "avg_load" => BalancerEra::AvgLoad,
            "group_type" => BalancerEra::GroupType,
            _ => return Err(SimError::bad_value(file, "kernel.balancer", format!("\"{b}\""), "avg_load, group_type")),
        };
    }

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
    let mut barriers = Vec::new();
    let mut events = Vec::new();
    let mut fork_refs: Vec<(String, String)> = Vec::new();
    let mut groups: Vec<TaskGroup> = Vec::new();
    let mut barrier_uses_per_group = Vec::new();
    for (i, t) in raw.task.iter().enumerate() {
        let k = |s: &str| format!("task[{i}].{s}");
        if t.name.is_empty() || t.name.contains(char::is_whitespace) {
            return Err(SimError::bad_value(
                file,
                &k("name"),
                format!("\"{}\"", t.name),
                "a non-empty name without spaces",
            ));
        }
        if groups.iter().any(|g| g.name == t.name) {
            return Err(SimError::bad_value(
                file,
                &k("name"),
                format!("duplicate task name \"{}\"", t.name),
                "unique names",
            ));
        }
        let count = t.count.unwrap_or(1);
        if !(0..=100_000).contains(&count) {
            return Err(SimError::bad_value(file, &k("count"), format!("{count}"), "0..100000"));
        }
        let pstr = t.policy.as_deref().unwrap_or("SCHED_NORMAL");
        let policy = Policy::parse(pstr).ok_or_else(|| {
            SimError::bad_value(
                file,
                &k("policy"),
                format!("unknown policy \"{pstr}\""),
                "SCHED_NORMAL (SCHED_OTHER), SCHED_BATCH, SCHED_IDLE, SCHED_FIFO, SCHED_RR",
            )
        })?;
        let nice = t.nice.unwrap_or(0);
        if !(-20..=19).contains(&nice) {
            return Err(SimError::bad_value(file, &k("nice"), format!("nice {nice} out of range"), "-20..19"));
        }
        let rt_priority = t.rt_priority.unwrap_or(0);
        if policy.is_rt() {
            if !(1..=99).contains(&rt_priority) {
                return Err(SimError::bad_value(
                    file,
                    &k("rt_priority"),
                    format!("rt_priority {rt_priority} out of range for {}", policy.name()),
                    "1..99 for SCHED_FIFO and SCHED_RR",
                ));
            }
        } else if rt_priority != 0 {
            return Err(SimError::bad_value(
                file,
                &k("rt_priority"),
                format!("rt_priority {rt_priority} needs SCHED_FIFO or SCHED_RR"),
                "0 for fair policies (SCHED_NORMAL, SCHED_BATCH, SCHED_IDLE)",
            ));
        }
        let cpus = match &t.cpus {
            None => CpuMask::full(nr_cpus),
            Some(v) => parse_cpus_at(v, file, &k("cpus"), nr_cpus)?,
        };
        let start = t.start.as_deref().map(|s| duration_at(s, file, &k("start"))).transpose()?.unwrap_or(0);
        let mut ops = Vec::new();
        let mut ctx = ProgCtx {
            file,
            barriers: &mut barriers,
            events: &mut events,
            fork_refs: &mut fork_refs,
            barrier_uses: Vec::new(),
        };
        compile_ops(&t.program, &k("program"), &mut ctx, &mut ops)?;
        barrier_uses_per_group.push(ctx.barrier_uses);
        if ops.is_empty() {
            return Err(SimError::bad_value(
                file,
                &k("program"),
                "the program is empty",
                format!("a list of ops: {OPS_ACCEPTED}"),
            ));
        }
        groups.push(TaskGroup {
            name: t.name.clone(),
            count: count as usize,
            policy,
            nice: nice as i32,
            rt_priority: rt_priority as u32,
            cpus,
            start,
            kthread: t.kthread.unwrap_or(false),
            program: Program { ops },
        });
    }
    for (gi, uses) in barrier_uses_per_group.iter().enumerate() {
        for &b in uses {
            barriers[b].1 += groups[gi].count;
        }
    }
    // Resolve fork targets in order of appearance.
    let mut refs = fork_refs.into_iter();
    for g in &mut groups {
        for op in &mut g.program.ops {
            if let Op::Fork(target) = op {
                let (name, key) = refs.next().expect("one ref per fork op");
                let Some(idx) = raw.task.iter().position(|t| t.name == name) else {
                    let names: Vec<&str> = raw.task.iter().map(|t| t.name.as_str()).collect();
                    return Err(SimError::bad_value(
                        file,
                        &key,
                        format!("no task group named \"{name}\""),
                        names.join(", "),
                    ));
                };
                *target = idx;
            }
        }
    }
    let rt_migrate_test = match &raw.rt_migrate_test {
        Some(r) => Some(compile_rt_migrate_test(r, file, &machine, &mut groups, &mut barriers, &mut events)?),
        None => None,
    };
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

/// A CPU list value (`"0-3,6"` or an array of integers) at `key`.
fn parse_cpus_at(v: &toml::Value, file: &str, key: &str, nr_cpus: usize) -> Result<CpuMask> {
    let mask = match v {
        toml::Value::String(s) => CpuMask::parse_list(s, nr_cpus).map_err(|m| {
            SimError::topology(file, key, m, format!("CPUs 0-{} as \"0-3,6\" or a list of integers", nr_cpus - 1))
        })?,
        toml::Value::Array(a) => {
            let mut mask = CpuMask::new(nr_cpus);
            for v in a {
                match v.as_integer() {
                    Some(c) if c >= 0 && (c as usize) < nr_cpus => mask.set(c as usize),
                    _ => {
                        return Err(SimError::topology(
                            file,
                            key,
                            format!("{v} is not a CPU of this machine"),
                            format!("CPUs 0-{}", nr_cpus - 1),
                        ))
                    }
                }
            }
            if mask.is_empty() {
                return Err(SimError::topology(file, key, "the CPU list is empty", format!("CPUs 0-{}", nr_cpus - 1)));
            }
            mask
        }
        v => {
            return Err(SimError::topology(
                file,
                key,
                format!("{v} is not a CPU list"),
                "\"0-3,6\" or a list of integers",
            ))
        }
    };
    Ok(mask)
}

/// Compile `[rt_migrate_test]` into the tool's main thread (a group of one
/// that runs `runs` times: create the threads, `loops` iterations, release
/// them one last time with `done`) and one template group per thread, forked
/// by the main thread at the start of each run. Barriers "rtmt-start" and
/// "rtmt-end" have nr_tasks + 1 participants, as the tool's.
///
/// Deviation: the main thread is one task for all runs (the real `while`
/// loop starts a new process, whose main thread fork balancing places); the
/// threads are created SCHED_FIFO (the tool creates them SCHED_OTHER and
/// each sets its own priority first thing); thread creation takes no time.
fn compile_rt_migrate_test(
    r: &RawRtMigrateTest,
    file: &str,
    machine: &Machine,
    groups: &mut Vec<TaskGroup>,
    barriers: &mut Vec<(String, usize)>,
    events: &mut Vec<String>,
) -> Result<(RtmtConfig, Vec<usize>)> {
    let k = |s: &str| format!("rt_migrate_test.{s}");
    let int = |v: Option<i64>, key: &str, def: i64, lo: i64, hi: i64| -> Result<i64> {
        let v = v.unwrap_or(def);
        if !(lo..=hi).contains(&v) {
            return Err(SimError::bad_value(file, &k(key), format!("{v}"), format!("{lo}..{hi}")));
        }
        Ok(v)
    };
    let dur = |v: &Option<String>, key: &str, def: u64| -> Result<u64> {
        match v {
            Some(s) => {
                let d = duration_at(s, file, &k(key))?;
                if d == 0 {
                    return Err(SimError::bad_value(file, &k(key), "must be positive", DURATION_ACCEPTED));
                }
                Ok(d)
            }
            None => Ok(def),
        }
    };
    let nr_cpus = machine.nr_cpus();
    let nr_tasks = int(r.nr_tasks, "nr_tasks", nr_cpus as i64 + 1, 1, 98)? as usize;
    let prio = int(r.prio, "prio", 2, 1, 98)?;
    if prio + nr_tasks as i64 > 99 {
        return Err(SimError::bad_value(
            file,
            &k("prio"),
            format!("prio {prio} with {nr_tasks} tasks puts the main thread at {}", prio + nr_tasks as i64),
            "prio + nr_tasks <= 99",
        ));
    }
    let cfg = RtmtConfig {
        nr_tasks,
        prio: prio as u32,
        run_ns: dur(&r.run, "run", 20_000_000)?,
        sleep_ns: dur(&r.sleep, "sleep", 100_000_000)?,
        loops: int(r.loops, "loops", 50, 1, 100_000)? as usize,
        maxerr_ns: dur(&r.maxerr, "maxerr", 1_000_000)?,
        check: r.check.unwrap_or(false),
        runs: int(r.runs, "runs", 1, 1, 10_000_000)? as usize,
        rotate_high: r.rotate_high.unwrap_or(true),
        loop_ns: dur(&r.loop_cost, "loop_cost", 119)?,
    };
    let cpus = match &r.cpus {
        Some(v) => parse_cpus_at(v, file, &k("cpus"), nr_cpus)?,
        None => CpuMask::full(nr_cpus),
    };
    for name in ["rt-migrate-test", "rt-migrate-test-start", "rt-migrate-test-end", "rt-migrate-test-join"] {
        if groups.iter().any(|g| g.name.starts_with(name))
            || barriers.iter().any(|(b, _)| b == name)
            || events.iter().any(|e| e == name)
        {
            return Err(SimError::bad_value(
                file,
                "task",
                format!("the name \"{name}\" is taken by [rt_migrate_test]"),
                "another task or barrier name",
            ));
        }
    }
    let b_start = barriers.len();
    barriers.push(("rt-migrate-test-start".into(), nr_tasks + 1));
    let b_end = barriers.len();
    barriers.push(("rt-migrate-test-end".into(), nr_tasks + 1));
    let join = events.len();
    events.push("rt-migrate-test-join".into());
    let first_child = groups.len() + 1;
    let child_groups: Vec<usize> = (0..nr_tasks).map(|i| first_child + i).collect();
    // The main thread.
    let mut ops = vec![Op::LoopStart { count: cfg.runs as u64, end: 0 }, Op::Rtmt(RtmtOp::RunStart)];
    ops.extend(child_groups.iter().map(|&g| Op::Fork(g)));
    let inner = ops.len();
    ops.push(Op::LoopStart { count: cfg.loops as u64, end: 0 });
    ops.extend([
        Op::Rtmt(RtmtOp::Mark),
        Op::Barrier(b_start),
        Op::Sleep(Dist::Const(cfg.sleep_ns)),
        Op::Barrier(b_end),
        Op::Rtmt(RtmtOp::Check),
    ]);
    ops.push(Op::LoopEnd { start: inner });
    let inner_end = ops.len() - 1;
    ops[inner] = Op::LoopStart { count: cfg.loops as u64, end: inner_end };
    ops.extend([Op::Rtmt(RtmtOp::Final), Op::Barrier(b_start), Op::Rtmt(RtmtOp::Done), Op::Barrier(b_end)]);
    // pthread_join() of every thread.
    ops.extend((0..nr_tasks).map(|_| Op::Wait(join)));
    ops.push(Op::LoopEnd { start: 0 });
    let outer_end = ops.len() - 1;
    ops[0] = Op::LoopStart { count: cfg.runs as u64, end: outer_end };
    groups.push(TaskGroup {
        name: "rt-migrate-test".into(),
        count: 1,
        policy: Policy::Fifo,
        nice: 0,
        rt_priority: cfg.prio + nr_tasks as u32,
        cpus: cpus.clone(),
        start: 0,
        kthread: false,
        program: Program { ops },
    });
    for i in 0..nr_tasks {
        let mut ops = vec![Op::LoopStart { count: 0, end: 0 }, Op::Rtmt(RtmtOp::ExitIfDone)];
        if cfg.rotate_high && i == nr_tasks - 1 {
            ops.push(Op::RtmtRotate);
        }
        ops.extend([
            Op::Barrier(b_start),
            Op::Rtmt(RtmtOp::Start(i)),
            Op::Runtime(Dist::Const(cfg.run_ns)),
            Op::Rtmt(RtmtOp::End(i)),
            Op::Barrier(b_end),
        ]);
        ops.push(Op::LoopEnd { start: 0 });
        let end = ops.len() - 1;
        ops[0] = Op::LoopStart { count: 0, end };
        ops.extend([Op::Signal(join), Op::Exit]);
        groups.push(TaskGroup {
            name: format!("rt-migrate-test-{i}"),
            count: 0,
            policy: Policy::Fifo,
            nice: 0,
            rt_priority: cfg.prio + i as u32,
            cpus: cpus.clone(),
            start: 0,
            kthread: false,
            program: Program { ops },
        });
    }
    Ok((cfg, child_groups))
}
