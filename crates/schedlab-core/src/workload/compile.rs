//! Compiles the scenario's `[[task]]` groups and `[rt_migrate_test]` into
//! task groups with their programs: every op checked with its key path,
//! loops laid out flat with their jump targets, barrier and event names
//! interned, fork targets resolved.

use serde::Deserialize;

use crate::cpumask::CpuMask;
use crate::engine::rng::Dist;
use crate::error::{Result, SimError};
use crate::kernel::workqueue::WorkqueueDef;
use crate::kernel::Costs;
use crate::machine::Machine;
use crate::mm::ReadOp;
use crate::prio::{is_nice, nice_range, Policy, MAX_RT_PRIORITY, SCHED_FLAG_DL_OVERRUN, SCHED_FLAG_RECLAIM};
use crate::program::RtmtOp;
use crate::sched::task::DlAttr;
use crate::units::{duration_at, DURATION_ACCEPTED};
use crate::workload::channel::{instance_bases, ChannelDef};
use crate::workload::compile_ops::{compile_ops, ProgCtx, OPS_ACCEPTED};
use crate::workload::rt_migrate_test::RtmtConfig;
use crate::workload::{IoOp, Op, Program, QueueWorkOp, TaskGroup};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTask {
    pub(crate) name: String,
    pub(crate) count: Option<i64>,
    pub(crate) policy: Option<String>,
    pub(crate) nice: Option<i64>,
    pub(crate) rt_priority: Option<i64>,
    /// SCHED_DEADLINE's reservation, as sched_attr names it ("10ms").
    pub(crate) sched_runtime: Option<String>,
    pub(crate) sched_deadline: Option<String>,
    pub(crate) sched_period: Option<String>,
    /// sched_attr.sched_flags by name: "SCHED_FLAG_RECLAIM",
    /// "SCHED_FLAG_DL_OVERRUN".
    pub(crate) sched_flags: Option<Vec<String>>,
    pub(crate) cpus: Option<toml::Value>,
    /// A duration, or a distribution drawn once per task.
    pub(crate) start: Option<toml::Value>,
    pub(crate) kthread: Option<bool>,
    /// The share of the run ops' work bound by memory (0..1): it does not
    /// speed up with the CPU's frequency.
    pub(crate) memory_bound: Option<f64>,
    /// The DRAM traffic of the run ops' work at max_freq ("4.9GB/s"): its
    /// demand on the node's memory bandwidth.
    pub(crate) memory_traffic: Option<String>,
    /// The cgroup its tasks run in (`[[cgroup]]`'s path; workload/cgroup.rs).
    pub(crate) cgroup: Option<String>,
    /// The `[[session]]` its tasks run in (setsid(); their autogroup).
    pub(crate) session: Option<String>,
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

/// `task.memory_traffic`: bytes per us of work; it needs a memory-bound
/// share, which is what a saturated node slows.
fn memory_traffic_at(v: Option<&str>, memory_bound: u16, file: &str, k: &dyn Fn(&str) -> String) -> Result<u32> {
    let Some(s) = v else { return Ok(0) };
    let Some(bps) = crate::units::parse_mem_rate(s) else {
        return Err(SimError::bad_value(
            file,
            &k("memory_traffic"),
            format!("\"{s}\""),
            crate::units::MEM_RATE_ACCEPTED,
        ));
    };
    if memory_bound == 0 {
        return Err(SimError::bad_value(
            file,
            &k("memory_traffic"),
            format!("\"{s}\" without memory_bound"),
            "memory_traffic with a memory_bound above 0: the memory-bound share of the work is what a saturated node slows",
        ));
    }
    u32::try_from(bps / 1_000_000)
        .map_err(|_| SimError::bad_value(file, &k("memory_traffic"), format!("\"{s}\""), "at most 4,294 GB/s"))
}

/// `task.policy` (default SCHED_NORMAL).
fn policy_at(t: &RawTask, file: &str, k: &dyn Fn(&str) -> String) -> Result<Policy> {
    let pstr = t.policy.as_deref().unwrap_or("SCHED_NORMAL");
    Policy::parse(pstr).ok_or_else(|| {
        SimError::bad_value(
            file,
            &k("policy"),
            format!("unknown policy \"{pstr}\""),
            "SCHED_NORMAL (SCHED_OTHER), SCHED_BATCH, SCHED_IDLE, SCHED_FIFO, SCHED_RR, SCHED_DEADLINE",
        )
    })
}

/// `task.sched_runtime`, `sched_deadline`, `sched_period`: required
/// (runtime and deadline) for SCHED_DEADLINE, refused for the others.
/// The kernel's own checks (__checkparam_dl, admission) come once the
/// version is known (sched/deadline.rs check_dl_groups).
fn dl_attr_at(t: &RawTask, policy: Policy, file: &str, k: &dyn Fn(&str) -> String) -> Result<DlAttr> {
    let keys =
        [("sched_runtime", &t.sched_runtime), ("sched_deadline", &t.sched_deadline), ("sched_period", &t.sched_period)];
    if !policy.is_dl() {
        let given = keys.iter().find(|(_, v)| v.is_some()).map(|(key, _)| *key);
        if let Some(key) = given.or(t.sched_flags.as_ref().map(|_| "sched_flags")) {
            return Err(SimError::bad_value(
                file,
                &k(key),
                format!("{key} for {}", policy.name()),
                "sched_runtime, sched_deadline, sched_period and sched_flags only with policy = \"SCHED_DEADLINE\"",
            ));
        }
        return Ok(DlAttr::default());
    }
    let mut v = [0u64; 3];
    for (i, (key, val)) in keys.iter().enumerate() {
        match val {
            Some(s) => v[i] = duration_at(s, file, &k(key))?,
            None if i < 2 => {
                return Err(SimError::bad_value(
                    file,
                    &k(key),
                    format!("SCHED_DEADLINE without {key}"),
                    format!(
                        "sched_runtime and sched_deadline ({DURATION_ACCEPTED}); sched_period defaults to the deadline"
                    ),
                ))
            }
            None => {}
        }
    }
    let mut flags = 0;
    for (i, name) in t.sched_flags.iter().flatten().enumerate() {
        flags |= match name.as_str() {
            "SCHED_FLAG_RECLAIM" => SCHED_FLAG_RECLAIM,
            "SCHED_FLAG_DL_OVERRUN" => SCHED_FLAG_DL_OVERRUN,
            other => {
                return Err(SimError::bad_value(
                    file,
                    &k(&format!("sched_flags[{i}]")),
                    format!("\"{other}\""),
                    "\"SCHED_FLAG_RECLAIM\" (GRUB reclaiming, 4.13+), \"SCHED_FLAG_DL_OVERRUN\" (SIGXCPU on overrun, 4.16+)",
                ))
            }
        };
    }
    Ok(DlAttr { runtime: v[0], deadline: v[1], period: v[2], flags })
}

/// The `[[task]]` groups and `[rt_migrate_test]` of a scenario; ops name
/// the kernel's workqueues `wqs` and the machine's disks.
/// `task.memory_bound`: a share 0..1, in 1/1024ths.
fn memory_bound_at(v: Option<f64>, file: &str, key: &str) -> Result<u16> {
    match v {
        None => Ok(0),
        Some(m) if (0.0..=1.0).contains(&m) => Ok((m * 1024.0).round() as u16),
        Some(m) => Err(SimError::bad_value(
            file,
            key,
            format!("{m}"),
            "a share from 0 (all work scales with the CPU's frequency) to 1 (none does)",
        )),
    }
}

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
    let mut index_of: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
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
        let policy = policy_at(t, file, &k)?;
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
        let start = t
            .start
            .as_ref()
            .map(|v| crate::units::dist_at(v, file, &k("start")))
            .transpose()?
            .unwrap_or(Dist::Const(0));
        let memory_bound = memory_bound_at(t.memory_bound, file, &k("memory_bound"))?;
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
            dl: dl_attr_at(t, policy, file, &k)?,
            cpus,
            start,
            kthread: t.kthread.unwrap_or(false),
            memory_bound,
            memory_traffic: memory_traffic_at(t.memory_traffic.as_deref(), memory_bound, file, &k)?,
            cgroup: 0, // scenario/mod.rs resolves task.cgroup
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
        dl: Default::default(),
        cpus: cpus.clone(),
        start: Dist::Const(0),
        kthread: false,
        memory_bound: 0,
        memory_traffic: 0,
        cgroup: 0,
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
            dl: Default::default(),
            cpus: cpus.clone(),
            start: Dist::Const(0),
            kthread: false,
            memory_bound: 0,
            memory_traffic: 0,
            cgroup: 0,
            program: Program { ops },
        });
    }
    Ok((cfg, child_groups))
}
