//! Compiles the scenario's `[[task]]` groups and `[rt_migrate_test]` into
//! task groups with their programs: every op checked with its key path,
//! loops laid out flat with their jump targets, barrier and event names
//! interned, fork targets resolved.

use serde::Deserialize;

use crate::block::{BioOp, EndIo};
use crate::cpumask::CpuMask;
use crate::engine::rng::Dist;
use crate::error::{Location, Result, SimError};
use crate::kernel::workqueue::{WorkqueueDef, WQ_UNBOUND};
use crate::kernel::Costs;
use crate::machine::Machine;
use crate::mm::ReadOp;
use crate::sched::prio::{is_nice, nice_range, Policy, MAX_RT_PRIORITY};
use crate::units::parse_size;
use crate::units::{dist_at, duration_at, DURATION_ACCEPTED};
use crate::workload::channel::{compile_chan_op, instance_bases, ChannelDef};
use crate::workload::rt_migrate_test::{RtmtConfig, RtmtOp};
use crate::workload::{IoOp, Op, Program, QueueWorkOp, TaskGroup};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTask {
    pub(crate) name: String,
    pub(crate) count: Option<i64>,
    pub(crate) policy: Option<String>,
    pub(crate) nice: Option<i64>,
    pub(crate) rt_priority: Option<i64>,
    pub(crate) cpus: Option<toml::Value>,
    pub(crate) start: Option<String>,
    pub(crate) kthread: Option<bool>,
    #[serde(default)]
    pub(crate) program: Vec<toml::Value>,
}

/// `[rt_migrate_test]`: the rt-tests tool as a workload (its options).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRtMigrateTest {
    pub(crate) nr_tasks: Option<i64>,
    pub(crate) prio: Option<i64>,
    pub(crate) run: Option<String>,
    pub(crate) sleep: Option<String>,
    pub(crate) loops: Option<i64>,
    pub(crate) maxerr: Option<String>,
    pub(crate) check: Option<bool>,
    pub(crate) runs: Option<i64>,
    pub(crate) rotate_high: Option<bool>,
    pub(crate) loop_cost: Option<String>,
    pub(crate) cpus: Option<toml::Value>,
}

/// What compile_tasks returns.
#[derive(Debug, Default)]
pub(crate) struct CompiledTasks {
    pub(crate) groups: Vec<TaskGroup>,
    /// Barriers: (name, participants).
    pub(crate) barriers: Vec<(String, usize)>,
    /// wait/signal event names.
    pub(crate) events: Vec<String>,
    /// The rt-migrate-test config with its threads' groups.
    pub(crate) rt_migrate_test: Option<(RtmtConfig, Vec<usize>)>,
    /// Work item programs (`queue_work` bodies, IO submission and
    /// completion works).
    pub(crate) work_programs: Vec<Program>,
    pub(crate) io_ops: Vec<IoOp>,
    pub(crate) queue_works: Vec<QueueWorkOp>,
    pub(crate) read_ops: Vec<ReadOp>,
}

/// The `[[task]]` groups and `[rt_migrate_test]` of a scenario; ops name
/// the kernel's workqueues `wqs` and the machine's disks.
pub(crate) fn compile_tasks(
    raw_tasks: &[RawTask],
    raw_rtmt: Option<&RawRtMigrateTest>,
    file: &str,
    machine: &Machine,
    wqs: &[WorkqueueDef],
    chans: &[ChannelDef],
    costs: &Costs,
) -> Result<CompiledTasks> {
    let chan_base = instance_bases(chans);
    let nr_cpus = machine.nr_cpus();
    let mut work_programs = Vec::new();
    let mut io_ops = Vec::new();
    let mut queue_works = Vec::new();
    let mut read_ops = Vec::new();
    let mut barriers = Vec::new();
    let mut events = Vec::new();
    let mut fork_refs: Vec<(String, String)> = Vec::new();
    let mut groups: Vec<TaskGroup> = Vec::new();
    let mut barrier_uses_per_group = Vec::new();
    // Names seen, for duplicates and fork targets (a search per group was quadratic).
    let mut index_of: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, t) in raw_tasks.iter().enumerate() {
        let k = |s: &str| format!("task[{i}].{s}");
        if t.name.is_empty() || t.name.contains(char::is_whitespace) {
            return Err(SimError::bad_value(
                file,
                &k("name"),
                format!("\"{}\"", t.name),
                "a non-empty name without spaces",
            ));
        }
        if index_of.insert(t.name.as_str(), i).is_some() {
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
        if !is_nice(nice) {
            return Err(SimError::bad_value(file, &k("nice"), format!("nice {nice} out of range"), nice_range()));
        }
        let rt_priority = t.rt_priority.unwrap_or(0);
        if policy.is_rt() {
            if !(1..=MAX_RT_PRIORITY as i64).contains(&rt_priority) {
                return Err(SimError::bad_value(
                    file,
                    &k("rt_priority"),
                    format!("rt_priority {rt_priority} out of range for {}", policy.name()),
                    format!("1..{MAX_RT_PRIORITY} for SCHED_FIFO and SCHED_RR"),
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
            machine,
            wqs,
            work_programs: &mut work_programs,
            io_ops: &mut io_ops,
            queue_works: &mut queue_works,
            read_ops: &mut read_ops,
            chans,
            chan_base: &chan_base,
            costs,
            in_work: false,
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
                let Some(&idx) = index_of.get(name.as_str()) else {
                    let names: Vec<&str> = raw_tasks.iter().take(20).map(|t| t.name.as_str()).collect();
                    let more = if raw_tasks.len() > 20 { ", ..." } else { "" };
                    let accepted = format!("{}{more}", names.join(", "));
                    return Err(SimError::bad_value(file, &key, format!("no task group named \"{name}\""), accepted));
                };
                *target = idx;
            }
        }
    }
    let rt_migrate_test = match raw_rtmt {
        Some(r) => Some(compile_rt_migrate_test(r, file, machine, &mut groups, &mut barriers, &mut events)?),
        None => None,
    };
    Ok(CompiledTasks { groups, barriers, events, rt_migrate_test, work_programs, io_ops, queue_works, read_ops })
}

fn loc(file: &str, key: &str) -> Location {
    Location { file: file.to_string(), key: key.to_string() }
}

pub(crate) const OPS_ACCEPTED: &str =
    "run, runtime, sleep, timer, yield, loop, barrier, wait, signal, lock, unlock, send, recv, fork, exit, parallel, queue_work, io, read, anon";
/// The ops a work item may have (a kworker runs them).
const WORK_OPS_ACCEPTED: &str = "run, runtime, sleep, yield, loop, wait, signal, queue_work, io";

struct ProgCtx<'a> {
    file: &'a str,
    barriers: &'a mut Vec<(String, usize)>,
    events: &'a mut Vec<String>,
    fork_refs: &'a mut Vec<(String, String)>,
    barrier_uses: Vec<usize>,
    machine: &'a Machine,
    wqs: &'a [WorkqueueDef],
    work_programs: &'a mut Vec<Program>,
    io_ops: &'a mut Vec<IoOp>,
    queue_works: &'a mut Vec<QueueWorkOp>,
    read_ops: &'a mut Vec<ReadOp>,
    /// `[[channel]]`s and the index of each one's first instance.
    chans: &'a [ChannelDef],
    chan_base: &'a [usize],
    costs: &'a Costs,
    /// Compiling a work item's ops (a kworker runs them).
    in_work: bool,
}

fn intern(v: &mut Vec<String>, name: &str) -> usize {
    if let Some(i) = v.iter().position(|x| x == name) {
        i
    } else {
        v.push(name.to_string());
        v.len() - 1
    }
}

/// `timer = "10ms"` or `timer = { period = "10ms" }`: the period in ns.
/// A key of two accepted strings: false for the first (the default, also
/// when the key is absent), true for the second.
fn choice_at(t: &toml::Table, key: &str, (off, on): (&str, &str), file: &str, sub: &str) -> Result<bool> {
    match t.get(key).map(|v| v.as_str()) {
        None => Ok(false),
        Some(Some(v)) if v == off => Ok(false),
        Some(Some(v)) if v == on => Ok(true),
        Some(_) => Err(SimError::bad_value(
            file,
            &format!("{sub}.{key}"),
            format!("unknown {key}"),
            format!("\"{off}\" or \"{on}\""),
        )),
    }
}

/// `timer = D` or `timer = { period = D, mode = "absolute"|"relative",
/// anchor = "first_use"|"start" }`.
fn timer_at(val: &toml::Value, file: &str, sub: &str) -> Result<Op> {
    let (mut relative, mut from_start) = (false, false);
    let period = match val {
        toml::Value::String(s) => duration_at(s, file, sub)?,
        toml::Value::Table(t) => {
            for key in t.keys() {
                if !["period", "mode", "anchor"].contains(&key.as_str()) {
                    return Err(SimError::UnknownKey {
                        at: loc(file, &format!("{sub}.{key}")),
                        accepted: "period, mode, anchor".into(),
                    });
                }
            }
            relative = choice_at(t, "mode", ("absolute", "relative"), file, sub)?;
            from_start = choice_at(t, "anchor", ("first_use", "start"), file, sub)?;
            match t.get("period").and_then(|p| p.as_str()) {
                Some(s) => duration_at(s, file, &format!("{sub}.period"))?,
                None => return Err(SimError::MissingKey { at: loc(file, &format!("{sub}.period")) }),
            }
        }
        _ => return Err(SimError::bad_value(file, sub, "expected a period", "\"10ms\" or {period = \"10ms\"}")),
    };
    if period == 0 {
        return Err(SimError::bad_value(file, sub, "period must be positive", DURATION_ACCEPTED));
    }
    Ok(Op::Timer { period, relative, from_start })
}

/// `parallel = { work = D, threads = N, min_chunk = D }`: a ktask job.
fn parallel_at(val: &toml::Value, file: &str, sub: &str) -> Result<Op> {
    let t = val
        .as_table()
        .ok_or_else(|| SimError::bad_value(file, sub, "expected a table", "{work = D, threads = N, min_chunk = D}"))?;
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
    Ok(Op::Parallel { work, threads, min_chunk })
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
        if ctx.in_work && ["timer", "barrier", "fork", "exit", "parallel"].contains(&name.as_str()) {
            return Err(SimError::bad_value(
                file,
                &sub,
                format!("op \"{name}\" cannot run in a work item (a kworker runs it)"),
                WORK_OPS_ACCEPTED,
            ));
        }
        match name.as_str() {
            "run" => out.push(Op::Run(dist_at(val, file, &sub)?)),
            "queue_work" => out.push(queue_work_at(val, &sub, ctx)?),
            "io" => out.push(io_at(val, &sub, ctx)?),
            "read" => out.push(read_at(val, &sub, ctx)?),
            "anon" => out.push(anon_at(val, &sub, ctx)?),
            "runtime" => out.push(Op::Runtime(dist_at(val, file, &sub)?)),
            "sleep" => out.push(Op::Sleep(dist_at(val, file, &sub)?)),
            "timer" => out.push(timer_at(val, file, &sub)?),
            "yield" => out.push(Op::Yield),
            "exit" => {
                // kernel.costs.exit: the thread's cost beyond its program.
                if ctx.costs.exit_ns > 0 {
                    out.push(Op::Sys(ctx.costs.exit_ns));
                }
                out.push(Op::Exit)
            }
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
            "wait" | "signal" => {
                let e = want_str(val)?;
                if e.starts_with(crate::workload::MUTEX_PREFIX) {
                    let what = "an event name may not start with \"mutex \" (the lock op's mutexes)";
                    return Err(SimError::bad_value(file, &sub, what, "another name"));
                }
                let i = intern(ctx.events, &e);
                out.push(if name == "wait" { Op::Wait(i) } else { Op::Signal(i) });
            }
            "lock" | "unlock" => {
                let m = want_str(val)?;
                let i = intern(ctx.events, &format!("{}{m}", crate::workload::MUTEX_PREFIX));
                out.push(if name == "lock" { Op::Wait(i) } else { Op::Signal(i) });
            }
            "send" | "recv" if !ctx.in_work => {
                compile_chan_op(name, val, &sub, file, (ctx.chans, ctx.chan_base), ctx.costs, out)?
            }
            "fork" => {
                let g = want_str(val)?;
                // kernel.costs.fork: the parent's side of starting the thread.
                if ctx.costs.fork_ns > 0 {
                    out.push(Op::Sys(ctx.costs.fork_ns));
                }
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
                // A loop must spend time or block somewhere, or it spins at
                // one instant of simulated time forever (yield with nobody
                // else runnable, fork, signal).
                if !out[start + 1..end].iter().any(Op::takes_time) {
                    return Err(SimError::bad_value(
                        file,
                        &format!("{sub}.body"),
                        "the loop has no op that takes time or blocks, so it never lets simulated time pass",
                        "a body with run, runtime, sleep, timer, barrier, wait, parallel or exit",
                    ));
                }
                out.push(Op::LoopEnd { start });
                out[start] = Op::LoopStart { count, end };
            }
            "parallel" => out.push(parallel_at(val, file, &sub)?),
            "alloc" | "wake" => {
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

/// A work item's ops: `run = D` (one `run`) or `work = [ops]`, as a
/// program in `work_programs`. Returns its index.
fn work_program_at(t: &toml::Table, sub: &str, ctx: &mut ProgCtx) -> Result<usize> {
    let file = ctx.file;
    let ops = match (t.get("run"), t.get("work")) {
        (Some(r), None) => vec![Op::Run(dist_at(r, file, &format!("{sub}.run"))?)],
        (None, Some(toml::Value::Array(body))) => {
            let was = std::mem::replace(&mut ctx.in_work, true);
            let mut ops = Vec::new();
            compile_ops(body, &format!("{sub}.work"), ctx, &mut ops)?;
            ctx.in_work = was;
            ops
        }
        _ => {
            return Err(SimError::bad_value(
                file,
                sub,
                "a work item needs its ops",
                "either run = DURATION (the work's CPU time) or work = [ops]",
            ))
        }
    };
    ctx.work_programs.push(Program { ops });
    Ok(ctx.work_programs.len() - 1)
}

/// A workqueue by name at `key`.
fn wq_at(v: Option<&toml::Value>, key: &str, ctx: &ProgCtx) -> Result<usize> {
    let names = || ctx.wqs.iter().map(|w| w.name.as_str()).collect::<Vec<_>>().join(", ");
    let Some(v) = v else { return Err(SimError::MissingKey { at: loc(ctx.file, key) }) };
    let name = v.as_str().unwrap_or("");
    ctx.wqs.iter().position(|w| w.name == name).ok_or_else(|| {
        SimError::bad_value(
            ctx.file,
            key,
            format!("no workqueue {v}"),
            format!("{} (or a [[kernel.workqueue]])", names()),
        )
    })
}

fn check_keys(t: &toml::Table, sub: &str, file: &str, accepted: &[&str]) -> Result<()> {
    for key in t.keys() {
        if !accepted.contains(&key.as_str()) {
            return Err(SimError::UnknownKey { at: loc(file, &format!("{sub}.{key}")), accepted: accepted.join(", ") });
        }
    }
    Ok(())
}

/// `queue_work = { wq = NAME, run = D | work = [ops], cpu = N, wait = B }`.
fn queue_work_at(val: &toml::Value, sub: &str, ctx: &mut ProgCtx) -> Result<Op> {
    let file = ctx.file;
    let accepted = "{ wq = NAME, run = DURATION or work = [ops], cpu = N (queue_work_on), wait = true (flush_work) }";
    let t = val.as_table().ok_or_else(|| SimError::bad_value(file, sub, "expected a table", accepted))?;
    check_keys(t, sub, file, &["wq", "run", "work", "cpu", "wait"])?;
    let wq = wq_at(t.get("wq"), &format!("{sub}.wq"), ctx)?;
    let nr = ctx.machine.nr_cpus();
    let cpu = match t.get("cpu") {
        None => None,
        Some(toml::Value::Integer(c)) if (0..nr as i64).contains(c) => Some(*c as usize),
        Some(v) => {
            return Err(SimError::bad_value(
                file,
                &format!("{sub}.cpu"),
                format!("{v}"),
                format!("a CPU 0..{}", nr - 1),
            ))
        }
    };
    let wait = bool_at(t.get("wait"), &format!("{sub}.wait"), file, false)?;
    let program = work_program_at(t, sub, ctx)?;
    ctx.queue_works.push(QueueWorkOp { wq, program, cpu, wait });
    Ok(Op::QueueWork { idx: (ctx.queue_works.len() - 1) as u32, wait })
}

fn bool_at(v: Option<&toml::Value>, key: &str, file: &str, default: bool) -> Result<bool> {
    match v {
        None => Ok(default),
        Some(toml::Value::Boolean(b)) => Ok(*b),
        Some(v) => Err(SimError::bad_value(file, key, format!("{v}"), "true or false")),
    }
}

/// `io = { disk = NAME, op = read|write|flush, size = S, wait = B, iowait = B,
/// submit = { wq, run|work }, end_io = { wq, run|work } }`.
/// `read = { disk = NAME | [NAMES], size = SIZE, direct = false }`: a
/// read(2) of `size` bytes of a file on the disk (mm/filemap.rs); with a
/// list, the tasks running the op take the disks in turn.
fn read_at(val: &toml::Value, sub: &str, ctx: &mut ProgCtx) -> Result<Op> {
    let file = ctx.file;
    let accepted = "{ disk = NAME or [NAMES], size = SIZE, direct = false }";
    let t = val.as_table().ok_or_else(|| SimError::bad_value(file, sub, "expected a table", accepted))?;
    check_keys(t, sub, file, &["disk", "size", "direct"])?;
    if ctx.in_work {
        return Err(SimError::bad_value(file, sub, "a read in a work item", "read ops in [[task]] programs only"));
    }
    let dk = format!("{sub}.disk");
    let find = |n: &str| disk_named(ctx.machine, n, file, &dk);
    let list = match t.get("disk") {
        None => return Err(SimError::MissingKey { at: loc(file, &dk) }),
        Some(toml::Value::String(n)) => vec![find(n)?],
        Some(toml::Value::Array(a)) if !a.is_empty() => {
            let mut v = Vec::new();
            for x in a {
                let n = x.as_str().ok_or_else(|| SimError::bad_value(file, &dk, format!("{x}"), "disk names"))?;
                v.push(find(n)?);
            }
            v
        }
        Some(x) => {
            return Err(SimError::bad_value(file, &dk, format!("{x}"), "a disk name or a non-empty list of them"))
        }
    };
    let bytes = match t.get("size") {
        None => 4096,
        Some(toml::Value::String(s)) => parse_size(s).filter(|&b| b > 0).ok_or_else(|| {
            SimError::bad_value(file, &format!("{sub}.size"), format!("cannot read \"{s}\" as a size"), "e.g. \"4MiB\"")
        })?,
        Some(v) => {
            return Err(SimError::bad_value(file, &format!("{sub}.size"), format!("{v}"), "a size, e.g. \"4MiB\""))
        }
    };
    let direct = bool_at(t.get("direct"), &format!("{sub}.direct"), file, false)?;
    ctx.read_ops.push(ReadOp { disks: list, bytes, direct, anon: false });
    Ok(Op::Read { idx: (ctx.read_ops.len() - 1) as u32 })
}

/// `{ anon = { size = SIZE } }`: fault in SIZE of anonymous memory (mm/anon.rs).
fn anon_at(val: &toml::Value, sub: &str, ctx: &mut ProgCtx) -> Result<Op> {
    let file = ctx.file;
    let accepted = "{ size = SIZE }";
    let t = val.as_table().ok_or_else(|| SimError::bad_value(file, sub, "expected a table", accepted))?;
    check_keys(t, sub, file, &["size"])?;
    if ctx.in_work {
        return Err(SimError::bad_value(file, sub, "an anon op in a work item", "anon ops in [[task]] programs only"));
    }
    let key = format!("{sub}.size");
    let bytes = match t.get("size") {
        None => return Err(SimError::MissingKey { at: loc(file, &key) }),
        Some(toml::Value::String(s)) => parse_size(s).filter(|&b| b > 0).ok_or_else(|| {
            SimError::bad_value(file, &key, format!("cannot read \"{s}\" as a size"), "e.g. \"1GiB\"")
        })?,
        Some(v) => return Err(SimError::bad_value(file, &key, format!("{v}"), "a size, e.g. \"1GiB\"")),
    };
    ctx.read_ops.push(ReadOp { disks: Vec::new(), bytes, direct: false, anon: true });
    Ok(Op::Read { idx: (ctx.read_ops.len() - 1) as u32 })
}

/// The index of the `[[machine.disk]]` named `n` (an op's `disk` at `key`).
fn disk_named(machine: &Machine, n: &str, file: &str, key: &str) -> Result<usize> {
    let disks = &machine.disks;
    disks.iter().position(|d| d.name == n).ok_or_else(|| {
        let have = disks.iter().map(|d| d.name.as_str()).collect::<Vec<_>>().join(", ");
        SimError::bad_value(
            file,
            key,
            format!("no disk \"{n}\""),
            if have.is_empty() { "a [[machine.disk]] name (the machine has none)".to_string() } else { have },
        )
    })
}

fn io_at(val: &toml::Value, sub: &str, ctx: &mut ProgCtx) -> Result<Op> {
    let file = ctx.file;
    let accepted = "{ disk = NAME, op = \"read\"|\"write\"|\"flush\", size = SIZE, wait = true, iowait = true, \
        submit = { wq = NAME, run = D }, end_io = { wq = NAME, run = D } }";
    let t = val.as_table().ok_or_else(|| SimError::bad_value(file, sub, "expected a table", accepted))?;
    check_keys(t, sub, file, &["disk", "op", "size", "wait", "iowait", "submit", "end_io"])?;
    let disk = match t.get("disk").and_then(|d| d.as_str()) {
        Some(n) => disk_named(ctx.machine, n, file, &format!("{sub}.disk"))?,
        None => return Err(SimError::MissingKey { at: loc(file, &format!("{sub}.disk")) }),
    };
    let op = match t.get("op").and_then(|o| o.as_str()) {
        Some("read") | None => BioOp::Read,
        Some("write") => BioOp::Write,
        Some("flush") => BioOp::Flush,
        Some(o) => {
            return Err(SimError::bad_value(file, &format!("{sub}.op"), format!("\"{o}\""), "read, write, flush"))
        }
    };
    let bytes = match t.get("size") {
        None => {
            if op == BioOp::Flush {
                0
            } else {
                4096
            }
        }
        Some(toml::Value::String(s)) => parse_size(s).ok_or_else(|| {
            SimError::bad_value(file, &format!("{sub}.size"), format!("cannot read \"{s}\" as a size"), "e.g. \"4KiB\"")
        })?,
        Some(v) => {
            return Err(SimError::bad_value(file, &format!("{sub}.size"), format!("{v}"), "a size, e.g. \"4KiB\""))
        }
    };
    let wait = bool_at(t.get("wait"), &format!("{sub}.wait"), file, true)?;
    let iowait = bool_at(t.get("iowait"), &format!("{sub}.iowait"), file, true)?;
    let mut stage = |key: &str| -> Result<Option<(usize, usize)>> {
        let Some(v) = t.get(key) else { return Ok(None) };
        let k = format!("{sub}.{key}");
        let s =
            v.as_table().ok_or_else(|| SimError::bad_value(file, &k, "expected a table", "{ wq = NAME, run = D }"))?;
        check_keys(s, &k, file, &["wq", "run", "work"])?;
        let wq = wq_at(s.get("wq"), &format!("{k}.wq"), ctx)?;
        if ctx.wqs[wq].flags & WQ_UNBOUND != 0 {
            return Err(SimError::bad_value(
                file,
                &format!("{k}.wq"),
                format!("\"{}\" is unbound", ctx.wqs[wq].name),
                "a bound workqueue: the work runs on the CPU that submits or completes the IO",
            ));
        }
        Ok(Some((wq, work_program_at(s, &k, ctx)?)))
    };
    let submit = stage("submit")?;
    let end_io = match stage("end_io")? {
        Some((wq, program)) => EndIo::Work { wq, program },
        None => EndIo::Wake,
    };
    ctx.io_ops.push(IoOp { disk, op, bytes, submit, end_io, iowait, wait });
    Ok(Op::Io { idx: (ctx.io_ops.len() - 1) as u32, wait })
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
    // rt-migrate-test's threads run at prio..prio + nr_tasks - 1 and its
    // main thread at prio + nr_tasks: all within 1..MAX_RT_PRIORITY.
    let top = MAX_RT_PRIORITY as i64;
    let nr_tasks = int(r.nr_tasks, "nr_tasks", nr_cpus as i64 + 1, 1, top - 1)? as usize;
    let prio = int(r.prio, "prio", 2, 1, top - 1)?;
    if prio + nr_tasks as i64 > top {
        return Err(SimError::bad_value(
            file,
            &k("prio"),
            format!("prio {prio} with {nr_tasks} tasks puts the main thread at {}", prio + nr_tasks as i64),
            format!("prio + nr_tasks <= {top}"),
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
