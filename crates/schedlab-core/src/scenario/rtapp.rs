//! rt-app workloads in (docs/FORMATS.md §1): an rt-app JSON file becomes
//! the scenario's `[[task]]` groups, built as the TOML tree the scenario
//! parser makes, so that one validator checks both. The JSON is read as
//! rt-app's json-c reads it (`json.rs`).
//!
//! Two doors: `schedlab run WORKLOAD.json --machine PRESET [--kernel V]`
//! ([`workload_tree`]), and a scenario's top-level `rtapp = "FILE.json"`
//! ([`expand`]): the file's tasks join the scenario's, and its
//! `global.duration` becomes `measure.duration` unless the scenario sets one.
//!
//! What it becomes (rt-app's HEAD semantics):
//!
//! * a task description is a `[[task]]` group: `instance` -> `count`,
//!   `delay` (us) -> `start`, `policy` and `priority` (the nice value of
//!   SCHED_OTHER/BATCH/IDLE, the RT priority of SCHED_FIFO/RR, default 10)
//!   -> `policy`, `nice`, `rt_priority`; SCHED_DEADLINE's `dl-runtime`,
//!   `dl-period` (default: the runtime) and `dl-deadline` (default: the
//!   period), us -> `sched_runtime`, `sched_period`, `sched_deadline`;
//!   `cpus` -> `cpus`;
//! * `phases` (or the task itself as its one phase) become loops: a phase's
//!   `loop` repeats its events, the task's `loop` (default forever) repeats
//!   the phases, and the thread exits when they end;
//! * an event is any key that *starts* with an event name (`run0`,
//!   `sleep-2`, `timer_a`), in the order rt-app's parser tries them:
//!   `run` (fixed work, us) -> `run`; `runtime` (wall-clock us) ->
//!   `runtime`; `sleep` -> `sleep`; `timer` -> `timer` on rt-app's grid
//!   (`anchor = "start"`, its `mode`, relative by default); `barrier`,
//!   `yield`, `lock`/`unlock` -> the same ops;
//! * `global.duration` -> `measure.duration` (`-1`: until every thread ends).
//!
//! Refused with the key path the user wrote (`tasks.thread0.phases.p1.run`):
//! the legacy `runtime`/`period`/`deadline` keys, HEAD's custom slice
//! (`dl-runtime` on a fair policy), uclamp, task groups, memory policies, a phase that
//! changes the task's policy, priority or CPUs, condition variables,
//! suspend/resume, memory and io events, fork, semaphores, a timer shared
//! between threads or two timers in one thread, a barrier named twice by one
//! task, and any key rt-app does not know. Names (tasks, barriers, mutexes)
//! are kept exactly, any Unicode included; numbers the simulator could not
//! take are refused with their range.
//!
//! Deviation: task names follow schedlab's `<task>-<i>` numbering within a
//! task (rt-app numbers threads across the file: `light-0 light-1 rt-2`);
//! `calibration` and the logging keys have no effect (`run` is work at the
//! simulated CPU's nominal speed, which is what calibration arranges).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use toml::Value;

use super::json::{self, JStr, Json};
use super::rtapp_taskgroup::{add_cgroups, taskgroup_of};
use crate::error::{cut, Result, SimError};

/// The largest numbers a scenario takes: 10^16 us is the core's longest
/// duration (10^19 ns); 100,000 threads per task; CPUs 0-8191 (NR_CPUS);
/// a day of simulated time.
pub const MAX_US: i128 = 10_000_000_000_000_000;
pub const MAX_INSTANCES: i128 = 100_000;
pub const MAX_LOOP: i128 = i64::MAX as i128;
pub const MAX_CPU: i128 = 8191;
pub const MAX_DURATION_S: i128 = 86_400;

/// The largest rt-app file read (as for a scenario file).
pub const MAX_INPUT_BYTES: u64 = 64 * 1024 * 1024;

const POLICIES: &[(&str, &str)] = &[
    ("SCHED_OTHER", "SCHED_NORMAL"),
    ("SCHED_BATCH", "SCHED_BATCH"),
    ("SCHED_IDLE", "SCHED_IDLE"),
    ("SCHED_FIFO", "SCHED_FIFO"),
    ("SCHED_RR", "SCHED_RR"),
    ("SCHED_DEADLINE", "SCHED_DEADLINE"),
];

/// Keys of `global` with no effect on a simulation (rt-app's own logging and
/// set-up), accepted; `mem_buffer_size`/`io_device` serve only refused events.
const GLOBAL_INERT: &[&str] = &[
    "calibration",
    "default_policy",
    "duration",
    "pi_enabled",
    "lock_pages",
    "logdir",
    "log_basename",
    "log_size",
    "ftrace",
    "gnuplot",
    "io_device",
    "mem_buffer_size",
    "cumulative_slack",
];
const TASK_KEYS: &[&str] = &[
    "instance",
    "delay",
    "loop",
    "phases",
    "policy",
    "priority",
    "cpus",
    "dl-runtime",
    "dl-period",
    "dl-deadline",
    "taskgroup",
];
const PHASE_KEYS: &[&str] =
    &["loop", "policy", "priority", "cpus", "dl-runtime", "dl-period", "dl-deadline", "taskgroup"];

fn refused_attr(key: &str) -> Option<&'static str> {
    Some(match key {
        "runtime_dl" | "period" | "deadline" => "the legacy SCHED_DEADLINE keys: dl-runtime, dl-period, dl-deadline",
        "util_min" | "util_max" => "uclamp is not modelled",
        "nodes_membind" => "memory policies are not modelled",
        _ => return None,
    })
}

/// rt-app's event names in the order its parser tries them (a key is the
/// first whose name it starts with: `runtime` before `run`).
const EVENTS: &[&str] = &[
    "runtime", "run", "sleep", "memrun", "mem", "iorun", "lock", "unlock", "signal", "broad", "wait", "sync",
    "barrier", "timer", "resume", "suspend", "yield", "fork", "sem_post", "sem_wait",
];

fn refused_event(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "memrun" => "memory-access workloads are not modelled",
        "mem" => "rt-app's memory writes are not modelled",
        "iorun" => "rt-app's io writes are not modelled",
        "signal" => "condition variables are not modelled (rt-app loses a signal nobody waits for; schedlab keeps it)",
        "broad" | "wait" | "sync" => "condition variables are not modelled",
        "resume" => "suspend/resume are not modelled (a resume with nobody suspended is lost in rt-app)",
        "suspend" => "suspend/resume are not modelled",
        "fork" => "rt-app's fork is not modelled here (it is not in rt-app 1.0)",
        "sem_post" | "sem_wait" => "semaphores are not modelled",
        _ => return None,
    })
}

fn event_kind(key: &str) -> Option<&'static str> {
    EVENTS.iter().copied().find(|e| key.starts_with(e))
}

/// What an rt-app file may hold, for the refusals.
const ACCEPTED: &str = "SCHED_OTHER/BATCH/IDLE/FIFO/RR/DEADLINE tasks with instance, delay, loop, phases, priority, \
     dl-runtime/period/deadline, cpus (the same in every phase), taskgroup (one per thread) and the events run, runtime, sleep, timer (a unique ref), barrier, yield, lock, unlock";

/// The converter's context: the file every error names.
struct Cx<'a> {
    file: &'a str,
}

impl Cx<'_> {
    fn bad(&self, key: &str, what: impl Into<String>, accepted: impl Into<String>) -> SimError {
        SimError::bad_value(self.file, key, what, accepted)
    }

    fn nm(&self, key: &str, why: &str) -> SimError {
        SimError::not_modelled(self.file, key, format!("{why}; accepted: {ACCEPTED}"))
    }

    /// An integer from `lo` to `hi`, else SL102 naming the key and the range.
    ///
    /// Deviation: rt-app reads its numbers with json-c's get_int, which
    /// truncates a fraction (`"run": 10.5` runs 10 us) and saturates at
    /// INT32_MAX; a number that is not a whole integer in range is refused
    /// here instead, naming the key, rather than silently changed.
    fn int(&self, key: &str, v: &Json, lo: i128, hi: i128, what: &str) -> Result<i64> {
        match v.as_int() {
            // Every range here is within i64 (MAX_LOOP is i64::MAX).
            Some(n) if (lo..=hi).contains(&n) => Ok(n as i64),
            _ => Err(self.bad(key, v.show(), format!("an integer from {lo} to {hi}{what}"))),
        }
    }

    /// Microseconds, as a duration string.
    fn us(&self, key: &str, v: &Json) -> Result<Value> {
        Ok(Value::String(format!("{}us", self.int(key, v, 0, MAX_US, " (microseconds)")?)))
    }

    /// A name the scenario keeps exactly (a barrier's, a mutex's).
    fn name(&self, key: &str, v: &Json, what: &str) -> Result<String> {
        match v {
            Json::Str(s) if !s.text.is_empty() => match s.as_text() {
                Some(t) => Ok(t.to_string()),
                None => Err(self.bad(key, v.show(), format!("a {what} name that is Unicode text (no lone surrogate)"))),
            },
            _ => Err(self.bad(key, v.show(), format!("a {what} name (a non-empty string)"))),
        }
    }
}

fn table<const N: usize>(entries: [(&str, Value); N]) -> Value {
    Value::Table(entries.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// rt-app's loop count (-1 forever) around `body`.
fn wrap_loop(cx: &Cx, count: &Json, body: Vec<Value>, key: &str) -> Result<Vec<Value>> {
    let n = cx.int(key, count, -1, MAX_LOOP, " (-1: forever)")?;
    Ok(match n {
        0 => Vec::new(),
        1 => body,
        n => vec![table([(
            "loop",
            table([("count", Value::Integer(if n == -1 { 0 } else { n })), ("body", Value::Array(body))]),
        )])],
    })
}

/// A task's (or a phase's) scheduling attributes as the `[[task]]` keys.
#[derive(PartialEq)]
struct Attrs {
    policy: &'static str,
    nice: Option<i64>,
    rt_priority: Option<i64>,
    cpus: Option<Vec<i64>>,
    /// SCHED_DEADLINE's sched_runtime, sched_deadline, sched_period (us).
    dl: Option<(i64, i64, i64)>,
}

impl Attrs {
    /// The attributes as the `[[task]]` keys.
    fn insert_into(self, grp: &mut toml::Table) {
        grp.insert("policy".into(), Value::String(self.policy.into()));
        if let Some(n) = self.nice {
            grp.insert("nice".into(), Value::Integer(n));
        }
        if let Some(p) = self.rt_priority {
            grp.insert("rt_priority".into(), Value::Integer(p));
        }
        if let Some(c) = self.cpus {
            grp.insert("cpus".into(), Value::Array(c.into_iter().map(Value::Integer).collect()));
        }
        if let Some((runtime, deadline, period)) = self.dl {
            grp.insert("sched_runtime".into(), Value::String(format!("{runtime}us")));
            grp.insert("sched_deadline".into(), Value::String(format!("{deadline}us")));
            grp.insert("sched_period".into(), Value::String(format!("{period}us")));
        }
    }
}

fn attrs(cx: &Cx, path: &str, get: &dyn Fn(&str) -> Option<Json>, default_policy: &Json) -> Result<Attrs> {
    let pol = get("policy").unwrap_or_else(|| default_policy.clone());
    let key = format!("{path}.policy");
    let Some(&(rtapp_pol, policy)) = pol.as_str().and_then(|p| POLICIES.iter().find(|(k, _)| *k == p)) else {
        let names: Vec<&str> = POLICIES.iter().map(|(k, _)| *k).collect();
        return Err(cx.bad(&key, pol.show(), names.join(", ")));
    };
    if rtapp_pol == "SCHED_DEADLINE" {
        // rt-app: dl-period defaults to dl-runtime, dl-deadline to
        // dl-period (us); priority is ignored.
        let us = |k: &str, dflt: Option<i64>| -> Result<i64> {
            match (get(k), dflt) {
                (Some(v), _) => cx.int(&format!("{path}.{k}"), &v, 1, MAX_US, " (microseconds)"),
                (None, Some(d)) => Ok(d),
                (None, None) => Err(cx.bad(
                    &format!("{path}.{k}"),
                    "SCHED_DEADLINE without dl-runtime (sched_setattr() fails with EINVAL)".to_string(),
                    "dl-runtime in microseconds",
                )),
            }
        };
        let runtime = us("dl-runtime", None)?;
        let period = us("dl-period", Some(runtime))?;
        let deadline = us("dl-deadline", Some(period))?;
        let mut out =
            Attrs { policy, nice: None, rt_priority: None, cpus: None, dl: Some((runtime, deadline, period)) };
        if let Some(cpus) = get("cpus") {
            out.cpus = Some(cpu_list(cx, &format!("{path}.cpus"), &cpus)?);
        }
        return Ok(out);
    }
    if let Some(k) = ["dl-runtime", "dl-period", "dl-deadline"].into_iter().find(|k| get(k).is_some()) {
        // HEAD's custom EEVDF slice for SCHED_OTHER (Linux 6.12+).
        return Err(cx.nm(&format!("{path}.{k}"), &format!("{k} on {rtapp_pol} (a custom slice) is not modelled")));
    }
    let rt = matches!(rtapp_pol, "SCHED_FIFO" | "SCHED_RR");
    let key = format!("{path}.priority");
    let prio = match get("priority") {
        None => Some(if rt { 10 } else { 0 }),
        Some(v @ Json::Num(_)) => match v.as_int() {
            Some(n) => Some(n),
            None if v.to_json().contains(['.', 'e', 'E', 'N', 'I']) => {
                return Err(cx.bad(&key, v.show(), "an integer"));
            }
            None => None, // an integer past i128: out of every range below
        },
        Some(v) => return Err(cx.bad(&key, v.show(), "an integer")),
    };
    let shown = || get("priority").map_or_else(|| "10".to_string(), |v| v.show());
    let mut out = Attrs { policy, nice: None, rt_priority: None, cpus: None, dl: None };
    match prio {
        Some(p) if rt && (1..=99).contains(&p) => out.rt_priority = Some(p as i64),
        Some(p) if !rt && (-20..=19).contains(&p) => out.nice = Some(p as i64),
        _ if rt => return Err(cx.bad(&key, shown(), "1..99 for SCHED_FIFO/RR")),
        _ => return Err(cx.bad(&key, shown(), "a nice value -20..19")),
    }
    if let Some(cpus) = get("cpus") {
        out.cpus = Some(cpu_list(cx, &format!("{path}.cpus"), &cpus)?);
    }
    Ok(out)
}

/// rt-app's `cpus`: a non-empty list of CPU numbers.
fn cpu_list(cx: &Cx, key: &str, cpus: &Json) -> Result<Vec<i64>> {
    let list = match cpus {
        Json::Array(a) if !a.is_empty() => a,
        v => return Err(cx.bad(key, v.show(), format!("a non-empty list of CPU numbers 0 to {MAX_CPU}"))),
    };
    let mut got = Vec::with_capacity(list.len());
    for (i, c) in list.iter().enumerate() {
        got.push(cx.int(&format!("{key}[{i}]"), c, 0, MAX_CPU, " (a CPU number)")?);
    }
    Ok(got)
}

/// A timer's `ref`, as rt-app compares them (a non-string is its JSON text).
fn timer_ref(v: Option<&Json>) -> String {
    match v {
        None => String::new(),
        Some(Json::Str(s)) => s.text.clone(),
        Some(other) => other.to_json(),
    }
}

/// The events of one phase (or of a task without phases) as ops. `timers`
/// collects the refs of the timers used, with the key of their first use.
fn phase_ops(
    cx: &Cx,
    path: &str,
    phase: &[(JStr, Json)],
    allowed: &[&str],
    timers: &mut Vec<(String, String)>,
) -> Result<Vec<Value>> {
    let mut ops = Vec::new();
    let mut barriers: BTreeSet<String> = BTreeSet::new();
    for (key, v) in phase {
        let kp = format!("{path}.{}", key.segment());
        let k = key.text.as_str();
        let Some(kind) = event_kind(k) else {
            if allowed.contains(&k) {
                continue;
            }
            if let Some(why) = refused_attr(k) {
                return Err(cx.nm(&kp, why));
            }
            let accepted: Vec<&str> = allowed.iter().chain(EVENTS).copied().collect();
            return Err(cx.bad(&kp, "not an rt-app key", accepted.join(", ")));
        };
        if let Some(why) = refused_event(kind) {
            return Err(cx.nm(&kp, &format!("the {kind} event: {why}")));
        }
        match kind {
            "run" | "runtime" | "sleep" => ops.push(table([(kind, cx.us(&kp, v)?)])),
            "timer" => {
                let accepted = r#"{"ref": "unique", "period": US, "mode": "relative"|"absolute"}"#;
                let t = match v.as_object() {
                    Some(t) if v.get("period").is_some() => t,
                    _ => return Err(cx.bad(&kp, v.show(), accepted)),
                };
                for (tk, _) in t {
                    if !matches!(tk.as_text(), Some("ref" | "period" | "mode")) {
                        return Err(cx.bad(&format!("{kp}.{}", tk.segment()), "not a timer key", "ref, period, mode"));
                    }
                }
                let r = timer_ref(v.get("ref"));
                let mode = match v.get("mode") {
                    None => "relative",
                    Some(m) => match m.as_str() {
                        Some(s @ ("relative" | "absolute")) => s,
                        _ => return Err(cx.bad(&format!("{kp}.mode"), m.show(), r#""relative" or "absolute""#)),
                    },
                };
                if !timers.iter().any(|(t, _)| *t == r) {
                    timers.push((r, format!("{kp}.ref")));
                }
                let period = cx.us(&format!("{kp}.period"), v.get("period").unwrap_or(&Json::Null))?;
                ops.push(table([(
                    "timer",
                    table([
                        ("period", period),
                        ("mode", Value::String(mode.into())),
                        ("anchor", Value::String("start".into())),
                    ]),
                )]));
            }
            "barrier" => {
                let name = cx.name(&kp, v, "barrier")?;
                if barriers.contains(&name) {
                    let why =
                        format!("barrier {} named twice by one task: rt-app counts references, not threads", v.show());
                    return Err(cx.nm(&kp, &why));
                }
                barriers.insert(name.clone());
                ops.push(table([("barrier", Value::String(name))]));
            }
            "yield" => ops.push(table([("yield", Value::Boolean(true))])),
            "lock" | "unlock" => ops.push(table([(kind, Value::String(cx.name(&kp, v, "mutex")?))])),
            _ => return Err(SimError::internal(format!("rt-app event {kind} neither refused nor converted"))),
        }
    }
    if ops.is_empty() {
        return Err(cx.bad(path, "no events (rt-app aborts: No events found)", "at least one event"));
    }
    Ok(ops)
}

fn uses_lock(ops: &[Value]) -> bool {
    ops.iter().any(|op| match op.get("loop").and_then(|l| l.get("body")).and_then(Value::as_array) {
        Some(body) => uses_lock(body),
        None => op.get("lock").is_some(),
    })
}

/// The `[[task]]` groups of an rt-app document, and its `global.duration`
/// in seconds (-1: none, run until every thread has ended).
pub fn to_groups(doc: &Json, file: &str) -> Result<(Vec<Value>, i64)> {
    let cx = Cx { file };
    let Some(top) = doc.as_object() else {
        return Err(SimError::Syntax {
            file: file.to_string(),
            message: "not rt-app JSON: an rt-app file is a JSON object with 'tasks'".into(),
        });
    };
    let empty = Json::Object(Vec::new());
    let g = doc.get("global").filter(|g| g.truthy()).unwrap_or(&empty);
    let Some(global) = g.as_object() else { return Err(cx.bad("global", g.show(), "an object")) };
    for (k, _) in global {
        if !k.as_text().is_some_and(|k| GLOBAL_INERT.contains(&k)) {
            let key = format!("global.{}", k.segment());
            return Err(cx.bad(&key, "not an rt-app global key", GLOBAL_INERT.join(", ")));
        }
    }
    for (k, _) in top {
        if !matches!(k.as_text(), Some("tasks" | "global" | "resources")) {
            return Err(cx.bad(&k.segment(), "not an rt-app top-level key", "tasks, global, resources"));
        }
    }
    let duration = match g.get("duration") {
        // -1, however written (-1.0 reads as -1 in rt-app too): no duration.
        Some(Json::Num(t)) if t.parse::<f64>() == Ok(-1.0) => -1,
        Some(d) => cx.int("global.duration", d, 1, MAX_DURATION_S, " seconds (a day), or -1")?,
        None => -1,
    };
    let default_policy = g.get("default_policy").cloned().unwrap_or(Json::Str(JStr::plain("SCHED_OTHER")));
    let tasks = match doc.get("tasks") {
        Some(Json::Object(t)) if !t.is_empty() => t,
        _ => return Err(cx.bad("tasks", "missing or empty", "an object: task name -> task")),
    };
    let mut groups = Vec::with_capacity(tasks.len());
    // Timer refs not starting with "unique", in first-use order: the
    // threads using each and the key of its first use (`index` finds them).
    let mut shared: Vec<(String, i64, String)> = Vec::new();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    let mut locks = false;
    for (name, t) in tasks {
        let path = format!("tasks.{}", name.segment());
        let name = match name.as_text() {
            Some(n) if !n.is_empty() && !n.chars().any(char::is_whitespace) => n,
            _ => {
                return Err(cx.bad(
                    &path,
                    "a task name schedlab cannot take (empty, white space or a lone surrogate)",
                    "a non-empty task name of Unicode text without white space",
                ))
            }
        };
        let Some(task) = t.as_object() else { return Err(cx.bad(&path, t.show(), "a task object")) };
        let get = |k: &str| t.get(k).cloned();
        let a = attrs(&cx, &path, &get, &default_policy)?;
        let mut timers: Vec<(String, String)> = Vec::new();
        let one = Json::Num("1".into());
        let forever = Json::Num("-1".into());
        let fair = matches!(a.policy, "SCHED_NORMAL" | "SCHED_BATCH" | "SCHED_IDLE");
        let taskgroup = taskgroup_of(file, &path, t, fair)?;
        let program = if let Some(phases) = t.get("phases") {
            let phases = match phases {
                Json::Object(p) if !p.is_empty() => p,
                v => return Err(cx.bad(&format!("{path}.phases"), v.show(), "an object: phase name -> phase")),
            };
            for (k, _) in task {
                let kt = k.as_text().unwrap_or("");
                if let Some(why) = refused_attr(kt) {
                    return Err(cx.nm(&format!("{path}.{}", k.segment()), why));
                }
                if !TASK_KEYS.contains(&kt) || k.as_text().is_none() {
                    let what = if event_kind(&k.text).is_some() {
                        "an event beside phases (rt-app ignores it)"
                    } else {
                        "not an rt-app task key"
                    };
                    return Err(cx.bad(&format!("{path}.{}", k.segment()), what, TASK_KEYS.join(", ")));
                }
            }
            let mut body = Vec::new();
            for (pname, ph) in phases {
                let pp = format!("{path}.phases.{}", pname.segment());
                let Some(phase) = ph.as_object() else { return Err(cx.bad(&pp, ph.show(), "a phase object")) };
                for k in ["policy", "priority", "cpus"] {
                    if let Some(pv) = ph.get(k) {
                        let merged = |key: &str| if key == k { Some(pv.clone()) } else { t.get(key).cloned() };
                        if attrs(&cx, &pp, &merged, &default_policy)? != a {
                            return Err(
                                cx.nm(&format!("{pp}.{k}"), "a phase that changes the task's policy, priority or CPUs")
                            );
                        }
                    }
                }
                let ops = phase_ops(&cx, &pp, phase, PHASE_KEYS, &mut timers)?;
                body.extend(wrap_loop(&cx, ph.get("loop").unwrap_or(&one), ops, &format!("{pp}.loop"))?);
            }
            wrap_loop(&cx, t.get("loop").unwrap_or(&forever), body, &format!("{path}.loop"))?
        } else {
            let ops = phase_ops(&cx, &path, task, TASK_KEYS, &mut timers)?;
            wrap_loop(&cx, t.get("loop").unwrap_or(&forever), ops, &format!("{path}.loop"))?
        };
        if timers.len() > 1 {
            let mut refs: Vec<String> = timers.iter().map(|(r, _)| JStr::plain(r).quoted()).collect();
            refs.sort();
            let why = format!("timers [{}] in one thread: schedlab keeps one timer per task", refs.join(", "));
            return Err(cx.nm(&path, &why));
        }
        let count = cx.int(&format!("{path}.instance"), t.get("instance").unwrap_or(&one), 0, MAX_INSTANCES, "")?;
        for (r, at) in timers {
            if !r.starts_with("unique") {
                let i = *index.entry(r.clone()).or_insert_with(|| {
                    shared.push((r, 0, at));
                    shared.len() - 1
                });
                shared[i].1 += count;
            }
        }
        locks = locks || uses_lock(&program);
        let mut grp = toml::Table::new();
        grp.insert("name".into(), Value::String(name.to_string()));
        grp.insert("count".into(), Value::Integer(count));
        a.insert_into(&mut grp);
        if let Some(tg) = taskgroup {
            grp.insert("cgroup".into(), Value::String(tg));
        }
        if let Some(d) = t.get("delay") {
            grp.insert("start".into(), cx.us(&format!("{path}.delay"), d)?);
        }
        let program = if program.is_empty() { vec![table([("exit", Value::Boolean(true))])] } else { program };
        grp.insert("program".into(), Value::Array(program));
        groups.push(Value::Table(grp));
    }
    if let Some((r, users, at)) = shared.into_iter().find(|(_, users, _)| *users > 1) {
        let why = format!(
            "the timer {} is shared by {users} threads: shared timers are not modelled",
            cut(&JStr::plain(&r).quoted(), 80)
        );
        return Err(cx.nm(&at, &why));
    }
    if locks && g.get("pi_enabled").is_some_and(Json::truthy) {
        return Err(cx.nm("global.pi_enabled", "priority inheritance is not modelled"));
    }
    Ok((groups, duration))
}

/// `text` (an rt-app file) as the `[[task]]` groups and the duration in
/// seconds (-1 for none).
pub fn import(text: &str, file: &str) -> Result<(Vec<Value>, i64)> {
    to_groups(&json::parse(text, file)?, file)
}

/// A file name's stem, as Python's `Path.stem` gives it.
fn stem(file: &str) -> &str {
    let base = file.rsplit('/').next().unwrap_or(file);
    match base.rfind('.') {
        Some(i) if i > 0 => &base[..i],
        _ => base,
    }
}

/// `schedlab run WORKLOAD.json`: the scenario's tree, named after the file,
/// with the workload's duration; the machine and the kernel come as
/// overrides (`--machine` is `machine.preset`, `--kernel` `kernel.version`).
pub fn workload_tree(text: &str, file: &str) -> Result<toml::Table> {
    let (groups, duration) = import(text, file)?;
    let mut root = toml::Table::new();
    root.insert("name".into(), Value::String(stem(file).to_string()));
    if duration > 0 {
        root.insert("measure".into(), table([("duration", Value::String(format!("{duration}s")))]));
    }
    add_cgroups(&mut root, &groups, file)?;
    root.insert("task".into(), Value::Array(groups));
    Ok(root)
}

/// Where a scenario's `rtapp = "FILE.json"` points: beside the scenario.
fn beside(scenario: &str, file: &str) -> PathBuf {
    let f = Path::new(file);
    if f.is_absolute() {
        return f.to_path_buf();
    }
    Path::new(scenario).parent().unwrap_or(Path::new("")).join(f)
}

/// A scenario's top-level `rtapp = "FILE.json"`, expanded in place: the
/// file's tasks after the scenario's, its duration the measurement's unless
/// the scenario has one.
pub fn expand(root: &mut toml::Table, file: &str) -> Result<()> {
    let Some(r) = root.remove("rtapp") else { return Ok(()) };
    let bad = |key: &str, v: &Value, accepted: &str| {
        SimError::bad_value(file, key, format!("invalid type: {}", v.type_str()), accepted)
    };
    let Value::String(r) = r else { return Err(bad("rtapp", &r, "the path of an rt-app JSON file")) };
    let path = beside(file, &r);
    let shown = path.display().to_string();
    let text = read_text(&path).map_err(|why| SimError::Usage {
        message: format!("{file}: rtapp = {}: {shown}: {why}", super::overrides::quote(&r)),
    })?;
    let (groups, duration) = import(&text, &shown)?;
    add_cgroups(root, &groups, file)?;
    match root.entry("task").or_insert_with(|| Value::Array(Vec::new())) {
        Value::Array(tasks) => tasks.extend(groups),
        v => return Err(bad("task", v, "[[task]] tables")),
    }
    match root.entry("measure").or_insert_with(|| Value::Table(toml::Table::new())) {
        Value::Table(m) => {
            if duration > 0 && !m.contains_key("duration") {
                m.insert("duration".into(), Value::String(format!("{duration}s")));
            }
        }
        v => return Err(bad("measure", v, "a [measure] table")),
    }
    Ok(())
}

/// A file's text: a regular file of at most [`MAX_INPUT_BYTES`], UTF-8.
/// Err: why not, to follow the path in a message. A device or a FIFO is
/// refused before it is opened.
pub fn read_text(path: &Path) -> std::result::Result<String, String> {
    use std::io::Read;
    let accepted = "accepted: a UTF-8 text file of at most 64 MiB";
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err("no such file; accepted: a path to an rt-app .json file".into())
        }
        Err(e) => return Err(format!("cannot read: {e}; {accepted}")),
    };
    if meta.is_dir() {
        return Err(format!("is a directory; {accepted}"));
    }
    if !meta.is_file() {
        return Err(format!("not a regular file (a device, a FIFO or a socket); {accepted}"));
    }
    if meta.len() > MAX_INPUT_BYTES {
        return Err(format!("{:.0} MiB, too large; {accepted}", meta.len() as f64 / 1_048_576.0));
    }
    let mut data = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_INPUT_BYTES + 1).read_to_end(&mut data))
        .map_err(|e| format!("cannot read: {e}; {accepted}"))?;
    if data.len() as u64 > MAX_INPUT_BYTES {
        return Err(format!("more than 64 MiB, too large; {accepted}"));
    }
    String::from_utf8(data).map_err(|e| {
        format!("not UTF-8 text at byte {} (invalid UTF-8); accepted: a UTF-8 text file", e.utf8_error().valid_up_to())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn groups(text: &str) -> Result<Vec<Value>> {
        import(text, "w.json").map(|(g, _)| g)
    }

    fn err(text: &str) -> String {
        groups(text).unwrap_err().to_string()
    }

    #[test]
    fn events_go_by_prefix_in_rt_apps_order() {
        let g = groups(
            r#"{"tasks": {"t": {"loop": 2, "runtime7": 5, "run-a": 10, "sleep_x": 20, "yield": "",
                "timerA": {"ref": "unique", "period": 100}}}}"#,
        )
        .unwrap();
        let lp = &g[0]["program"][0]["loop"];
        assert_eq!(lp["count"].as_integer(), Some(2));
        let body: Vec<String> = lp["body"].as_array().unwrap().iter().map(|v| v.to_string()).collect();
        assert_eq!(
            body,
            [
                "{ runtime = \"5us\" }",
                "{ run = \"10us\" }",
                "{ sleep = \"20us\" }",
                "{ yield = true }",
                "{ timer = { anchor = \"start\", mode = \"relative\", period = \"100us\" } }",
            ]
        );
    }

    #[test]
    fn minus_one_is_no_duration_however_written() {
        for d in ["-1", "-1.0", "-1e0"] {
            let (_, duration) =
                import(&format!(r#"{{"global": {{"duration": {d}}}, "tasks": {{"t": {{"run": 1}}}}}}"#), "w.json")
                    .unwrap();
            assert_eq!(duration, -1);
        }
        assert!(err(r#"{"global": {"duration": 2.5}, "tasks": {"t": {"run": 1}}}"#).contains("global.duration: 2.5"));
    }

    #[test]
    fn the_four_hostile_inputs() {
        let deep = format!("{{\"tasks\": {}{}}}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(err(&deep).contains("nested deeper than 64 levels"));
        let e = err(r#"{"tasks": {"t1": {"loop": 1e24, "run": 1}}}"#);
        assert_eq!(e, "w.json: tasks.t1.loop: 1e24; accepted: an integer from -1 to 9223372036854775807 (-1: forever)");
        for name in ["t😀", "a,]"] {
            let g = groups(&format!(r#"{{"tasks": {{"{name}": {{"run": 1}}}}}}"#)).unwrap();
            assert_eq!(g[0]["name"].as_str(), Some(name));
        }
    }

    #[test]
    fn refusals_name_the_rt_app_key_path() {
        let e = err(r#"{"tasks": {"thread0": {"phases": {"p1": {"run": -5}}}}}"#);
        assert!(e.starts_with("w.json: tasks.thread0.phases.p1.run: -5; accepted: an integer from 0"), "{e}");
        let e = err(r#"{"tasks": {"t": {"instance": 2, "run": 1, "timer": {"ref": "tick", "period": 10}}}}"#);
        assert!(
            e.starts_with("w.json: tasks.t.timer.ref: not modelled by schedlab: the timer \"tick\" is shared"),
            "{e}"
        );
        let e = err(r#"{"tasks": {"t\ud800": {"run": 1}}}"#);
        assert!(e.starts_with(r#"w.json: tasks."t\ud800": a task name schedlab cannot take"#), "{e}");
    }
}
