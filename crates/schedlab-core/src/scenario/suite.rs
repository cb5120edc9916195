//! The validation suite file (`validation/suite.toml`, `schedlab validate
//! --suite FILE`), read and checked once, here: `[suite]`, each
//! `[[scenario]]`'s keys, its `sim_set` overrides, its `tool` command and
//! its metrics, each with the selectors its metric takes and a tolerance
//! (the grammar below, [`tolerance`]) in the metric's unit. Errors name the
//! file and the key path (SL101, SL102, SL103), an entry by its name once
//! it is known (`scenario nice-pinned.metrics[0].tol`). Whether an entry's
//! `file` exists is asked of the caller (`exists`); resolving it, and
//! judging the numbers, stay with the front end
//! (python/schedlab/validation).
//!
//! A tolerance: `"±3 points"`, `"±2/s"`, `"±20 us"` (`ms` too), `"±25 %"`
//! (relative to the real value), `"<= 5/s"` (both values at most that), or
//! alternatives joined by `" or "`; `+-` or `+/-` for `±`.

use serde::Serialize;

use super::describe;
use super::doc::{self, get, Checker, Setting, Table, V};
use super::overrides;
use crate::error::{cut, Result};

/// The top-level keys.
pub const KEYS: &[&str] = &["suite", "scenario"];
/// The keys of `[suite]`.
pub const SUITE_KEYS: &[&str] = &["name", "seed"];
/// The keys of a `[[scenario]]`.
pub const ENTRY_KEYS: &[&str] = &["name", "file", "why", "control", "sim_set", "metrics", "tool"];
/// The keys of a metric.
pub const METRIC_KEYS: &[&str] =
    &["metric", "tol", "task", "group", "cgroup", "cpu", "cpus", "sets", "thread", "oracle"];
/// Who judges a row (`oracle`): the real-timing oracle (`validate
/// --local`, this machine's own kernel under KVM), the QEMU guests, or
/// either.
pub const ORACLES: &[&str] = &["local", "qemu", "any"];
/// The metrics that measure timing (sub-millisecond delays, hand-off
/// rates, a tool's elapsed time): a TCG guest runs its vCPUs in turn and
/// one instruction per nanosecond, so only the real-timing oracle judges
/// them unless the metric names another.
pub const TIMING_METRICS: &[&str] =
    &["wakeup_p50", "wakeup_p90", "wakeup_p99", "wait_avg", "switches", "tool_time", "latency_avg", "latency_max"];
/// metric -> its unit (what a tolerance's absolute bounds are in).
pub const METRIC_UNITS: &[(&str, &str)] = &[
    ("share", "points"),
    ("share_min", "points"),
    ("share_max", "points"),
    ("idle", "points"),
    ("idle_spread", "points"),
    ("sibling_overlap", "points"),
    ("migrations", "/s"),
    ("switches", "/s"),
    ("wakeup_p50", "us"),
    ("wakeup_p90", "us"),
    ("wakeup_p99", "us"),
    ("wait", "points"),
    ("wait_min", "points"),
    ("wait_max", "points"),
    ("wait_avg", "us"),
    ("migrations_max", "/s"),
    // Real benchmark tools (an entry with `tool`): what the tool prints.
    ("tool_time", "s"),
    ("latency_avg", "us"),
    ("latency_max", "us"),
    // Pressure (`kernel.psi`): the share of the window a /proc/pressure
    // line grew by.
    ("psi_cpu_some", "points"),
    ("psi_memory_some", "points"),
    ("psi_memory_full", "points"),
    ("psi_io_some", "points"),
    ("psi_io_full", "points"),
    // Buffered writes (mm/page_writeback.rs): the dirty pages' level and
    // the writers' sleeps.
    ("dirty_pct", "points"),
    ("sleep_avg", "us"),
    // A `[[cgroup]]` (cgroup = PATH), from the report's `cgroups`: its CPU
    // time with its descendants' (cpu.stat usage_usec), the periods it was
    // throttled in out of those it ran in (nr_throttled / nr_periods), and
    // its bursts a second (nr_bursts).
    ("cgroup_share", "points"),
    ("throttled", "points"),
    ("bursts", "/s"),
];
/// The metrics of a cgroup, which take `cgroup = PATH` and no other selector.
pub const CGROUP_METRICS: &[&str] = &["cgroup_share", "throttled", "bursts"];
/// The metrics of an entry that runs a real tool, and only of such an entry.
pub const TOOL_METRICS: &[&str] = &["tool_time", "latency_avg", "latency_max"];
/// What a tolerance may be, in a message.
pub const TOLERANCE_ACCEPTED: &str =
    "\"±3 points\", \"±2/s\", \"±20 us\", \"±25 %\", \"<= 5/s\", or alternatives joined by \" or \"";
/// A tolerance's unit as written -> (the metric unit, the factor to it).
const TOL_UNITS: &[(&str, &str, f64)] = &[
    ("points", "points", 1.0),
    ("point", "points", 1.0),
    ("/s", "/s", 1.0),
    ("us", "us", 1.0),
    ("µs", "us", 1.0),
    ("ms", "us", 1000.0),
];
const ACCEPTED_CPULIST: &str = "a cpulist, e.g. \"0-3,6\"";

/// One alternative of a tolerance: `abs` |sim - real| <= value, `rel` <=
/// value % of |real|, `max` both <= value; `unit` is the metric unit it is
/// in (none for `rel`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bound {
    pub kind: &'static str,
    pub value: f64,
    pub unit: Option<&'static str>,
}

/// A tolerance: its text as written and its alternatives (any may hold).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tolerance {
    pub text: String,
    pub bounds: Vec<Bound>,
}

/// One metric of an entry, its selectors as the front end labels them
/// (`cpu`: `all` or a CPU number, as text).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricSpec {
    pub metric: String,
    pub tol: Tolerance,
    pub task: Option<String>,
    pub group: Option<String>,
    /// A `[[cgroup]]`'s path (the cgroup metrics).
    pub cgroup: Option<String>,
    pub cpu: Option<String>,
    pub cpus: Option<String>,
    pub sets: Vec<String>,
    pub thread: Option<i64>,
    /// Which oracle judges the row (one of ORACLES): as written, else
    /// "local" for TIMING_METRICS and "any" for the others.
    pub oracle: &'static str,
}

/// One `[[scenario]]`. `file` as written (relative to the suite).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Entry {
    pub name: String,
    pub file: String,
    pub why: String,
    pub control: bool,
    /// The simulator's overrides, in order: `[key, value, literal]`.
    pub sim_set: Vec<Setting>,
    pub metrics: Vec<MetricSpec>,
    pub tool: Vec<String>,
}

/// A suite as the front end gets it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Suite {
    pub name: String,
    pub seed: i64,
    pub entries: Vec<Entry>,
}

/// Python's whitespace (`str.strip`, `\s`): Unicode's, and the four
/// separators U+001C..U+001F.
fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// One alternative, stripped: `OP NUMBER UNIT`, spaces optional between.
fn bound(part: &str) -> Option<(&'static str, f64, &str)> {
    let (op, rest) = ["±", "+-", "+/-", "<="].iter().find_map(|op| part.strip_prefix(op).map(|r| (*op, r)))?;
    let rest = rest.trim_start_matches(is_space);
    let int_end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    if int_end == 0 {
        return None;
    }
    let mut end = int_end;
    if let Some(frac) = rest[int_end..].strip_prefix('.') {
        let n = frac.find(|c: char| !c.is_ascii_digit()).unwrap_or(frac.len());
        if n > 0 {
            end = int_end + 1 + n;
        }
    }
    let value: f64 = rest[..end].parse().ok().filter(|v: &f64| v.is_finite())?;
    let unit = rest[end..].trim_start_matches(is_space);
    (unit == "%" || TOL_UNITS.iter().any(|(u, _, _)| *u == unit)).then_some((op, value, unit))
}

/// Read a tolerance. Err: (what is wrong, what is accepted).
pub fn tolerance(text: &str) -> std::result::Result<Tolerance, (String, String)> {
    let shown = |s: &str| overrides::quote(&cut(s, 80));
    if text.trim_matches(is_space).is_empty() {
        return Err((shown(text), TOLERANCE_ACCEPTED.into()));
    }
    let mut bounds = Vec::new();
    for part in text.split(" or ") {
        let part = part.trim_matches(is_space);
        let Some((op, value, unit)) = bound(part) else {
            return Err((format!("cannot read {} in {}", shown(part), shown(text)), TOLERANCE_ACCEPTED.into()));
        };
        if unit == "%" {
            if op == "<=" {
                return Err((
                    format!("{}: \"%\" is relative, only with \"±\"", shown(part)),
                    "\"±25 %\"; for percentages use points (\"<= 5 points\")".into(),
                ));
            }
            bounds.push(Bound { kind: "rel", value, unit: None });
            continue;
        }
        let (_, munit, factor) = TOL_UNITS.iter().find(|(u, _, _)| *u == unit).expect("bound() checked the unit");
        let kind = if op == "<=" { "max" } else { "abs" };
        bounds.push(Bound { kind, value: value * factor, unit: Some(munit) });
    }
    Ok(Tolerance { text: text.to_string(), bounds })
}

/// Read and check a suite file's text (`file` names it in errors).
/// `default_name`: `[suite] name` when absent (the file's stem);
/// `exists(file)`: whether an entry's scenario file is there, beside the suite.
pub fn read(text: &str, file: &str, default_name: &str, exists: &dyn Fn(&str) -> bool) -> Result<Suite> {
    let root = doc::parse(text, file)?;
    let c = Checker { file };
    c.keys(&root, "", KEYS)?;
    let meta = c.table_or_empty(&root, "suite", "")?;
    c.keys(meta, "suite", SUITE_KEYS)?;
    let name = c.str_(meta, "name", "suite", Some(default_name))?;
    let seed = c.int_(meta, "seed", "suite", 1, 0)?;
    let raw = match get(&root, "scenario") {
        None => return Err(c.missing("scenario")),
        Some(V::Array(xs)) if xs.is_empty() => return Err(c.missing("scenario[0]")),
        v => c.tables(v, "scenario")?,
    };
    let mut entries: Vec<Entry> = Vec::with_capacity(raw.len());
    for (i, t) in raw.into_iter().enumerate() {
        let e = entry(&c, i, t, &entries, exists)?;
        entries.push(e);
    }
    Ok(Suite { name, seed, entries })
}

fn entry(c: &Checker<'_>, i: usize, t: &Table, before: &[Entry], exists: &dyn Fn(&str) -> bool) -> Result<Entry> {
    let at = format!("scenario[{i}]");
    c.keys(t, &at, ENTRY_KEYS)?;
    for k in ["name", "file", "metrics"] {
        if get(t, k).is_none() {
            return Err(c.missing(&format!("{at}.{k}")));
        }
    }
    let name = c.str_(t, "name", &at, None)?;
    if before.iter().any(|e| e.name == name) {
        return Err(c.bad(
            &format!("{at}.name"),
            format!("{} appears twice", c.shown(&V::Str(name))),
            "each name once",
        ));
    }
    // From here on the entry is named by its name, as the suite's reader does.
    let at = format!("scenario {}", cut(&name, 60));
    let scenario = c.str_(t, "file", &at, None)?;
    if !exists(&scenario) {
        return Err(c.bad(
            &format!("{at}.file"),
            format!("{}: no such file next to the suite", c.shown(&V::Str(scenario))),
            "a scenario file's path, relative to the suite",
        ));
    }
    let why = c.text(t, "why", &at, "")?;
    let control = match get(t, "control") {
        None => false,
        Some(V::Bool(b)) => *b,
        Some(v) => return Err(c.bad(&format!("{at}.control"), c.shown(v), "true or false")),
    };
    let sim_set = match get(t, "sim_set") {
        None => Vec::new(),
        Some(v @ V::Table(_)) => c.overrides(Some(v), &format!("{at}.sim_set"))?,
        Some(v) => return Err(c.bad(&format!("{at}.sim_set"), c.shown(v), "a table { \"task.0.nice\" = 0 }")),
    };
    let metrics = match get(t, "metrics") {
        Some(V::Array(xs)) if !xs.is_empty() => xs,
        Some(v) => {
            return Err(c.bad(&format!("{at}.metrics"), c.shown(v), "a non-empty list of { metric = ..., tol = ... }"))
        }
        None => unreachable!("checked above"),
    };
    let metrics = metrics
        .iter()
        .enumerate()
        .map(|(j, m)| metric_spec(c, m, &format!("{at}.metrics[{j}]")))
        .collect::<Result<Vec<_>>>()?;
    let tool = match get(t, "tool") {
        None => Vec::new(),
        Some(v) => {
            c.strings(v, &format!("{at}.tool"), "a command as a list of strings, e.g. [\"hackbench\", \"-g\", \"1\"]")?
        }
    };
    for (j, m) in metrics.iter().enumerate() {
        if TOOL_METRICS.contains(&m.metric.as_str()) == tool.is_empty() {
            let why = if tool.is_empty() {
                "needs the entry's `tool`"
            } else {
                "is not measured when the entry runs a `tool`"
            };
            return Err(c.bad(
                &format!("{at}.metrics[{j}]"),
                format!("metric {} {why}", m.metric),
                format!("with a tool: {}", TOOL_METRICS.join(", ")),
            ));
        }
    }
    Ok(Entry { name, file: scenario, why, control, sim_set, metrics, tool })
}

/// The unit a metric is in; None for a metric there is not.
pub fn metric_unit(metric: &str) -> Option<&'static str> {
    METRIC_UNITS.iter().find(|(m, _)| *m == metric).map(|(_, u)| *u)
}

fn metric_spec(c: &Checker<'_>, raw: &V, at: &str) -> Result<MetricSpec> {
    let m = match raw {
        V::Table(m) => m,
        _ => return Err(c.bad(at, c.shown(raw), "{ metric = ..., tol = ... }")),
    };
    c.keys(m, at, METRIC_KEYS)?;
    for k in ["metric", "tol"] {
        if get(m, k).is_none() {
            return Err(c.missing(&format!("{at}.{k}")));
        }
    }
    let names = || METRIC_UNITS.iter().map(|(m, _)| *m).collect::<Vec<_>>().join(", ");
    let (metric, unit) = match get(m, "metric") {
        Some(V::Str(s)) if metric_unit(s).is_some() => (s.clone(), metric_unit(s).unwrap_or_default()),
        Some(v) => return Err(c.bad(&format!("{at}.metric"), c.shown(v), names())),
        None => unreachable!("checked above"),
    };
    let tol_at = format!("{at}.tol");
    let tol = match get(m, "tol") {
        Some(V::Str(s)) => tolerance(s).map_err(|(why, accepted)| c.bad(&tol_at, why, accepted))?,
        Some(v) => return Err(c.bad(&tol_at, c.shown(v), TOLERANCE_ACCEPTED)),
        None => unreachable!("checked above"),
    };
    let mut bad_units: Vec<&str> = tol.bounds.iter().filter_map(|b| b.unit).filter(|u| *u != unit).collect();
    bad_units.sort_unstable();
    bad_units.dedup();
    if !bad_units.is_empty() {
        return Err(c.bad(
            &tol_at,
            format!(
                "{}: unit {} for {metric}, which is in {unit}",
                c.shown(&V::Str(tol.text.clone())),
                bad_units.join(", ")
            ),
            format!("a tolerance in {unit} (or \"±N %\")"),
        ));
    }
    let cpu = match get(m, "cpu") {
        None => None,
        Some(V::Str(s)) if s == "all" => Some(s.clone()),
        Some(V::Int(n)) if *n >= 0 => Some(n.to_string()),
        Some(v) => return Err(c.bad(&format!("{at}.cpu"), c.shown(v), "a CPU number or \"all\"")),
    };
    let sets = match get(m, "sets") {
        None => Vec::new(),
        Some(v) => c.strings(v, &format!("{at}.sets"), "a list of cpulists")?,
    };
    for s in &sets {
        cpulist(c, s, &format!("{at}.sets"))?;
    }
    let cpus = match get(m, "cpus") {
        None => None,
        Some(V::Str(s)) => Some(cpulist(c, s, &format!("{at}.cpus"))?),
        Some(v) => return Err(c.bad(&format!("{at}.cpus"), c.shown(v), ACCEPTED_CPULIST)),
    };
    let task = selector(c, m, "task", at, "a task's comm")?;
    let group = selector(c, m, "group", at, "a group's name")?;
    let cgroup = selector(c, m, "cgroup", at, "a [[cgroup]]'s path")?;
    let thread = match get(m, "thread") {
        None => None,
        Some(V::Int(n)) if *n >= 0 => Some(*n),
        Some(v) => return Err(c.bad(&format!("{at}.thread"), c.shown(v), "cyclictest's thread number (0 or more)")),
    };
    let oracle = match get(m, "oracle") {
        None if TIMING_METRICS.contains(&metric.as_str()) => "local",
        None => "any",
        Some(V::Str(o)) if ORACLES.contains(&o.as_str()) => ORACLES.iter().copied().find(|x| x == o).unwrap_or("any"),
        Some(v) => return Err(c.bad(&format!("{at}.oracle"), c.shown(v), "\"local\", \"qemu\" or \"any\"")),
    };
    let spec = MetricSpec { metric, tol, task, group, cgroup, cpu, cpus, sets, thread, oracle };
    let (takes, accepted) = selectors(&spec);
    if !takes {
        return Err(c.bad(at, format!("{} does not take these selectors", spec.metric), accepted));
    }
    Ok(spec)
}

fn cpulist(c: &Checker<'_>, s: &str, at: &str) -> Result<String> {
    match describe::cpulist(s, describe::NR_CPUS) {
        Ok(_) => Ok(s.to_string()),
        Err(why) => Err(c.bad(at, format!("cpulist {}: {why}", c.shown(&V::Str(s.to_string()))), ACCEPTED_CPULIST)),
    }
}

fn selector(c: &Checker<'_>, m: &Table, key: &str, at: &str, what: &str) -> Result<Option<String>> {
    match get(m, key) {
        None => Ok(None),
        Some(V::Str(s)) if !s.is_empty() => Ok(Some(s.clone())),
        Some(v) => Err(c.bad(&format!("{at}.{key}"), c.shown(v), format!("{what} (a non-empty string)"))),
    }
}

/// Whether a metric takes the selectors given, and what it takes (the
/// suite file's header says what each computes).
fn selectors(s: &MetricSpec) -> (bool, &'static str) {
    let (task, group) = (s.task.is_some(), s.group.is_some());
    let one_of_task_group = "task = COMM or group = NAME (one of them)";
    let narrowed = "task = COMM, group = NAME, or neither (every task)";
    if CGROUP_METRICS.contains(&s.metric.as_str()) {
        let only = !task && !group && s.cpu.is_none() && s.cpus.is_none() && s.sets.is_empty() && s.thread.is_none();
        return (only && s.cgroup.is_some(), "cgroup = PATH (a [[cgroup]]'s path), and no other selector");
    }
    if s.cgroup.is_some() {
        return (false, "no cgroup = PATH (only cgroup_share, throttled and bursts take it)");
    }
    match s.metric.as_str() {
        "share" | "wait" => (task != group, one_of_task_group),
        "share_min" | "share_max" | "wait_min" | "wait_max" | "migrations_max" => (group, "group = NAME"),
        "idle" => (s.cpu.is_some() != s.cpus.is_some(), "cpu = N or \"all\", or cpus = \"CPULIST\" (one of them)"),
        "idle_spread" => (s.sets.len() >= 2, "sets = [\"CPULIST\", ...], two or more"),
        "sibling_overlap" => (!s.sets.is_empty(), "sets = [\"CPULIST\", ...], one or more"),
        "tool_time" => {
            let none = !task && !group && s.cpu.is_none() && s.cpus.is_none() && s.sets.is_empty();
            (none && s.thread.is_none(), "no selector")
        }
        "latency_avg" | "latency_max" => (s.thread.is_some(), "thread = N (cyclictest's thread)"),
        m if m.starts_with("psi_") => {
            let none = !task && !group && s.cpu.is_none() && s.cpus.is_none() && s.sets.is_empty();
            (none && s.thread.is_none(), "no selector (the system's pressure)")
        }
        // migrations, switches, wakeup_p50/p90/p99, wait_avg
        _ => (!(task && group), narrowed),
    }
}

#[cfg(test)]
#[path = "suite_tests.rs"]
mod tests;
