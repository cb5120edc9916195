//! Compiles a task's program: every op of `program = [...]` (and of the
//! work items it queues) checked with its key path, loops laid out flat
//! with their jump targets, barrier and event names interned. The task
//! groups around the programs are `compile.rs`.

use crate::block::{BioOp, EndIo};
use crate::error::{Location, Result, SimError};
use crate::kernel::workqueue::{WorkqueueDef, WQ_UNBOUND};
use crate::kernel::Costs;
use crate::machine::Machine;
use crate::mm::ReadOp;
use crate::units::parse_size;
use crate::units::{dist_at, duration_at, DURATION_ACCEPTED};
use crate::workload::channel::{compile_chan_op, ChannelDef};
use crate::workload::{IoOp, Op, Program, QueueWorkOp};

pub(super) fn loc(file: &str, key: &str) -> Location {
    Location { file: file.to_string(), key: key.to_string() }
}

pub(crate) const OPS_ACCEPTED: &str =
    "run, runtime, sleep, timer, yield, loop, barrier, wait, signal, lock, unlock, send, recv, fork, exec, exit, parallel, queue_work, io, read, write, anon";
/// The ops a work item may have (a kworker runs them).
const WORK_OPS_ACCEPTED: &str = "run, runtime, sleep, yield, loop, wait, signal, queue_work, io";

pub(super) struct ProgCtx<'a> {
    pub(super) file: &'a str,
    pub(super) barriers: &'a mut Vec<(String, usize)>,
    pub(super) events: &'a mut Vec<String>,
    pub(super) fork_refs: &'a mut Vec<(String, String)>,
    pub(super) barrier_uses: Vec<usize>,
    pub(super) machine: &'a Machine,
    pub(super) wqs: &'a [WorkqueueDef],
    pub(super) work_programs: &'a mut Vec<Program>,
    pub(super) io_ops: &'a mut Vec<IoOp>,
    pub(super) queue_works: &'a mut Vec<QueueWorkOp>,
    pub(super) read_ops: &'a mut Vec<ReadOp>,
    /// `[[channel]]`s and the index of each one's first instance.
    pub(super) chans: &'a [ChannelDef],
    pub(super) chan_base: &'a [usize],
    pub(super) costs: &'a Costs,
    /// Compiling a work item's ops (a kworker runs them).
    pub(super) in_work: bool,
}

pub(super) fn intern(v: &mut Vec<String>, name: &str) -> usize {
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
pub(super) fn choice_at(t: &toml::Table, key: &str, (off, on): (&str, &str), file: &str, sub: &str) -> Result<bool> {
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

pub(super) fn compile_ops(list: &[toml::Value], key: &str, ctx: &mut ProgCtx, out: &mut Vec<Op>) -> Result<()> {
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
        if ctx.in_work && ["timer", "barrier", "fork", "exec", "exit", "parallel"].contains(&name.as_str()) {
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
            "read" => out.push(read_at(val, &sub, ctx, false)?),
            "write" => out.push(read_at(val, &sub, ctx, true)?),
            "anon" => out.push(anon_at(val, &sub, ctx)?),
            "runtime" => out.push(Op::Runtime(dist_at(val, file, &sub)?)),
            "sleep" => out.push(Op::Sleep(dist_at(val, file, &sub)?)),
            "timer" => out.push(timer_at(val, file, &sub)?),
            "yield" => out.push(Op::Yield),
            "exec" => {
                if val.as_bool() != Some(true) {
                    return Err(SimError::bad_value(file, &sub, format!("{val}"), "true"));
                }
                out.push(Op::Exec)
            }
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
pub(super) fn work_program_at(t: &toml::Table, sub: &str, ctx: &mut ProgCtx) -> Result<usize> {
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

pub(super) fn check_keys(t: &toml::Table, sub: &str, file: &str, accepted: &[&str]) -> Result<()> {
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

pub(super) fn bool_at(v: Option<&toml::Value>, key: &str, file: &str, default: bool) -> Result<bool> {
    match v {
        None => Ok(default),
        Some(toml::Value::Boolean(b)) => Ok(*b),
        Some(v) => Err(SimError::bad_value(file, key, format!("{v}"), "true or false")),
    }
}

/// `io = { disk = NAME, op = read|write|flush, size = S, wait = B, iowait = B,
/// submit = { wq, run|work }, end_io = { wq, run|work } }`.
/// `read = { disk = NAME | [NAMES], size = SIZE, direct = false,
/// file_size = SIZE }`: a read(2) of `size` bytes of a file on the disk
/// (mm/filemap.rs); with a list, the tasks running the op take the disks
/// in turn; with `file_size`, each task reads its own file of that size
/// on, from the start again after its end (mm/workingset.rs).
/// `write = { disk = NAME | [NAMES], size = SIZE }`: a buffered write(2)
/// of `size` bytes to a file on the disk (mm/page_writeback.rs).
fn read_at(val: &toml::Value, sub: &str, ctx: &mut ProgCtx, write: bool) -> Result<Op> {
    let file = ctx.file;
    let (accepted, keys, what): (&str, &[&str], _) = if write {
        ("{ disk = NAME or [NAMES], size = SIZE }", &["disk", "size"], "write")
    } else {
        (
            "{ disk = NAME or [NAMES], size = SIZE, direct = false, file_size = SIZE }",
            &["disk", "size", "direct", "file_size"],
            "read",
        )
    };
    let t = val.as_table().ok_or_else(|| SimError::bad_value(file, sub, "expected a table", accepted))?;
    check_keys(t, sub, file, keys)?;
    if ctx.in_work {
        return Err(SimError::bad_value(
            file,
            sub,
            format!("a {what} in a work item"),
            format!("{what} ops in [[task]] programs only"),
        ));
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
    let fk = format!("{sub}.file_size");
    let file_size = match t.get("file_size") {
        None => None,
        Some(toml::Value::String(s)) => Some(parse_size(s).filter(|&b| b > 0).ok_or_else(|| {
            SimError::bad_value(file, &fk, format!("cannot read \"{s}\" as a size"), "e.g. \"2GiB\"")
        })?),
        Some(v) => return Err(SimError::bad_value(file, &fk, format!("{v}"), "a size, e.g. \"2GiB\"")),
    };
    if file_size.is_some() && direct {
        return Err(SimError::bad_value(
            file,
            &fk,
            "a file read again with O_DIRECT",
            "file_size with a buffered read (O_DIRECT bypasses the page cache)",
        ));
    }
    ctx.read_ops.push(ReadOp { disks: list, bytes, direct, anon: false, write, file_size });
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
    ctx.read_ops.push(ReadOp { disks: Vec::new(), bytes, direct: false, anon: true, write: false, file_size: None });
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
