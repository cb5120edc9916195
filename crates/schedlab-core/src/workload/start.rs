//! How schedlab's real-kernel runner starts a scenario's threads
//! (crates/schedlab-runner/src/lib.rs and exec.rs), modelled for
//! `measure.start = "runner"`, so that a simulation compared with a real
//! run starts its tasks where the real ones start.
//!
//! A shell on CPU 0 forks the runner, so its main thread starts on another
//! CPU where one is idle. The runner's main thread (SCHED_NORMAL, nice 0,
//! every CPU) creates the threads one after the other (clone(): each child copies its parent's
//! policy, nice and CPUs, and is placed as a fork is). Each thread sets its
//! own CPUs, policy and nice (sched_setaffinity(), sched_setscheduler(),
//! setpriority()), tells the main thread it is ready and waits at a start
//! gate. When all are ready the main thread makes itself SCHED_FIFO 99 and
//! opens the gate: time 0 of every thread (their timers' anchor), each
//! woken from the main thread's CPU. A thread with a `start` delay sleeps
//! it after the gate.
//!
//! Each thread's own start-up (the return from clone, glibc's
//! start_thread, the three syscalls) is CPU time it spends first, at the
//! attributes it was cloned with (`kernel.costs.thread_start`): while it
//! runs, its CPU is busy, so the next clone is placed elsewhere, as on the
//! real machine. Deviation: it is charged before the attribute changes
//! (the runner's own setup makes them part of it), the gate's mutex costs
//! nothing, and the gate wakes the threads in the order they reached it (a
//! futex wakes by priority first). The measurement window opens `warmup` after time 0 of
//! the simulation, which the clones come before: the window starts earlier
//! relative to the gate by the start's length (about the fork cost per
//! task). Tasks the workload forks later start as `fork` does, with their
//! own attributes.
//!
//! The main thread then measures, at SCHED_FIFO 99 wherever it last ran:
//! at the window's start it reads every task's /proc counters
//! (`kernel.costs.proc_read_task` each) and /proc/stat with
//! /proc/schedstat (`proc_read_stat` per CPU), at every interval's end
//! /proc/stat again, and at the window's end all of it. Each read is CPU
//! time that preempts whatever ran there, as on the real machine, where a
//! QEMU guest's reads take milliseconds. Deviation: its reads are timed
//! from its own start (a fork's cost after time 0), not from the gate;
//! /proc/pressure's read (`kernel.psi`) is not charged.
//! The shell starts on CPU 0, as a task the harness starts does (where
//! the guest's /init runs is not measured), and the runner's exec (sched_exec()'s balance) is not
//! modelled: the runner starts where its fork placed it.

use crate::cpumask::CpuMask;
use crate::engine::event::Ev;
use crate::engine::rng::Dist;
use crate::engine::time::Instant;
use crate::prio::{Policy, MAX_RT_PRIORITY};
use crate::program::{Program, TaskGroup};
use crate::sched::task::TaskId;
use crate::workload::floor::WorkloadFloor;
use crate::workload::{Op, SyncObj};

/// The runner's main thread's comm: its executable's name, as the kernel
/// keeps it (15 bytes).
pub const RUNNER_COMM: &str = "schedlab-runner";
/// The process that starts the runner (the QEMU guest's /init shell;
/// `schedlab real`'s Python on a host).
pub const SHELL_COMM: &str = "sh";

impl WorkloadFloor {
    /// Make the runner's main thread, which starts every task of the
    /// scenario's `groups` (a group of `count = 0` is started only by a
    /// `fork` op), and have it start at time 0.
    /// `window`: the measurement's warm-up, duration (None: until the
    /// tasks exit) and interval, which time the main thread's reads;
    /// `phase`: when the shell starts, after the jiffy at time 0.
    pub fn runner_start(&mut self, groups: &[TaskGroup], window: (u64, Option<u64>, u64), phase: u64) {
        let nr = self.m.kt.k.sched.rqs.len();
        let ready = self.wl.events.len();
        self.wl.events.push(SyncObj::default());
        self.wl.event_names.push("start ready".into());
        let gate = self.wl.barriers.len();
        let n: usize = groups.iter().map(|g| g.count).sum();
        self.wl.barriers.push(SyncObj { participants: n + 1, ..Default::default() });
        self.wl.barrier_names.push("start gate".into());
        let mut main = Vec::with_capacity(2 * n + 6);
        for (gi, g) in groups.iter().enumerate().filter(|(_, g)| g.count > 0) {
            let template = self.m.kt.progs.templates.len();
            let start = self.m.kt.k.cfg.costs.thread_start_ns;
            self.m.kt.progs.templates.push(TaskGroup { program: gated(g, gi, ready, gate, start), ..g.clone() });
            for _ in 0..g.count {
                // kernel.costs.fork: the parent's side of clone().
                if self.m.kt.k.cfg.costs.fork_ns > 0 {
                    main.push(Op::Sys(self.m.kt.k.cfg.costs.fork_ns));
                }
                main.push(Op::Clone { template: template as u32, group: gi as u32 });
            }
        }
        let fifo = self.m.kt.progs.templates.len();
        let runner = TaskGroup {
            name: RUNNER_COMM.into(),
            count: 1,
            policy: Policy::Normal,
            nice: 0,
            rt_priority: 0,
            dl: Default::default(),
            // init's CPUs: every CPU but isolcpus' (sched_init_smp()), and
            // the root cpuset's: none of a partition's.
            cpus: {
                let topo = &self.m.kt.k.topo;
                CpuMask::full(nr).andnot(&topo.isolated).andnot(&topo.partitioned)
            },
            start: Dist::Const(0),
            kthread: false,
            memory_bound: 0,
            memory_traffic: 0,
            cgroup: 0,
            program: Program::default(),
        };
        // The coordinator's SCHED_FIFO 99, set before the gate opens.
        self.m.kt.progs.templates.push(TaskGroup {
            policy: Policy::Fifo,
            rt_priority: MAX_RT_PRIORITY,
            dl: Default::default(),
            ..runner.clone()
        });
        if n > 0 {
            main.push(Op::LoopStart { count: n as u64, end: main.len() + 2 });
            main.push(Op::Wait(ready));
            main.push(Op::LoopEnd { start: main.len() - 2 });
        }
        main.push(Op::SetAttr(fifo));
        main.extend(self.runner_samples(n, window, gate, main.len()));
        main.push(Op::Park);
        let template = self.m.kt.progs.templates.len();
        self.m.kt.progs.templates.push(TaskGroup { program: Program { ops: main }, ..runner.clone() });
        let group = self.m.kt.progs.group_names.len();
        self.m.kt.progs.group_names.push(RUNNER_COMM.into());
        self.m.kt.progs.harness_group = Some(group);
        // The shell that starts the runner: it runs on CPU 0 when it forks
        // the runner, so the runner's main thread is placed as a fork beside
        // a busy CPU, then it waits for it.
        let mut shell_ops = Vec::new();
        if self.m.kt.k.cfg.costs.fork_ns > 0 {
            shell_ops.push(Op::Sys(self.m.kt.k.cfg.costs.fork_ns));
        }
        shell_ops.extend([Op::Clone { template: template as u32, group: group as u32 }, Op::Park]);
        let shell = TaskGroup { name: SHELL_COMM.into(), program: Program { ops: shell_ops }, ..runner.clone() };
        let sh = self.m.kt.progs.templates.len();
        self.m.kt.progs.templates.push(shell.clone());
        let tid = self.m.kt.k.alloc_task(group, Some(sh), &shell, 0);
        self.m.kt.k.q.schedule(Instant(phase), Ev::Start(tid));
    }

    /// The main thread's part from the gate on (schedlab-runner's
    /// `run()`): open the gate, read every task's counters and /proc/stat
    /// when the window opens, /proc/stat at each interval's end, and all
    /// of it again when the window closes (with no `duration`, the samples
    /// go on until the run ends).
    /// `at` is where the ops go in the main thread's program (the loop's
    /// jumps are absolute).
    fn runner_samples(&self, tasks: usize, window: (u64, Option<u64>, u64), gate: usize, at: usize) -> Vec<Op> {
        let (warmup, duration, interval) = window;
        let c = &self.m.kt.k.cfg.costs;
        let cpus = self.m.kt.k.sched.rqs.len() as u64;
        let stat = c.proc_read_stat_ns.saturating_mul(cpus);
        let all = c.proc_read_task_ns.saturating_mul(tasks as u64).saturating_add(stat);
        let read = |ns: u64| (ns > 0).then_some(Op::Sys(ns));
        let timer = |period: u64| Op::Timer { period, relative: false, from_start: false };
        let mut ops = Vec::new();
        if warmup == 0 {
            ops.extend(read(all)); // read before the gate opens
            ops.push(Op::StartGate(gate));
        } else {
            ops.push(Op::StartGate(gate));
            ops.push(Op::Timer { period: warmup, relative: false, from_start: true });
            ops.extend(read(all));
        }
        let interval = interval.max(1);
        match duration {
            Some(d) => {
                let samples = d.saturating_sub(1) / interval;
                for _ in 0..samples {
                    ops.push(timer(interval));
                    ops.extend(read(stat));
                }
                if d > samples * interval {
                    ops.push(timer(d - samples * interval));
                }
                ops.extend(read(all));
            }
            None => {
                let start = at + ops.len();
                ops.push(Op::LoopStart { count: 0, end: start + 2 + usize::from(stat > 0) });
                ops.push(timer(interval));
                ops.extend(read(stat));
                ops.push(Op::LoopEnd { start });
            }
        }
        ops
    }

    /// clone() of one task of `group` running `template`: it copies the
    /// running task's policy, nice and CPUs, and is placed as a fork.
    pub(crate) fn start_clone(&mut self, tid: TaskId, template: usize, group: usize) {
        let p = &self.m.kt.k.sched.tasks[tid];
        let attrs = TaskGroup {
            policy: p.policy,
            nice: p.nice,
            rt_priority: p.rt_priority,
            dl: Default::default(),
            cpus: (*p.cpus).clone(),
            program: Program::default(),
            ..self.m.kt.progs.templates[template].clone()
        };
        let cpu = p.cpu;
        let idx = self.m.kt.k.sched.group_tasks.get(group).copied().unwrap_or(0);
        let child = self.m.kt.k.alloc_task(group, Some(template), &attrs, idx);
        self.m.kt.k.wake_up_new_task(child, Some(cpu));
    }

    /// The running task takes template `t`'s attributes: its policy and
    /// nice, then its CPUs. False when that rescheduled or moved it.
    ///
    /// Deviation: the runner sets the CPUs first, then the policy and nice;
    /// here the policy changes while the task still runs where it was
    /// cloned, so a move by the affinity's stopper comes last. Its new
    /// CPU and attributes are the same either way.
    pub(crate) fn start_setattr(&mut self, tid: TaskId, t: usize) -> bool {
        let g = &self.m.kt.progs.templates[t];
        let (policy, nice, rt_priority, dl, cpus) = (g.policy, g.nice, g.rt_priority, g.dl, g.cpus.clone());
        let prio = self.m.kt.k.sched.tasks[tid].prio();
        self.m.kt.k.sched_setattr_curr(tid, policy, nice, rt_priority, dl);
        if *self.m.kt.k.sched.tasks[tid].cpus != cpus && !self.m.kt.k.sched_setaffinity_curr(tid, cpus) {
            return false;
        }
        if self.m.kt.k.sched.tasks[tid].prio() > prio {
            // A lower priority rescheduled it: it goes on when next picked.
            self.m.kt.k.sched.tasks[tid].need_advance = true;
            return false;
        }
        true
    }
}

/// Group `gi`'s program behind the runner's start: the thread's own
/// start-up (`start` ns, kernel.costs.thread_start), set the attributes,
/// signal `ready`, wait at `gate`, sleep the start delay; the loops' jumps
/// move with the ops.
fn gated(g: &TaskGroup, gi: usize, ready: usize, gate: usize, start: u64) -> Program {
    let mut ops = if start > 0 { vec![Op::Sys(start)] } else { Vec::new() };
    ops.extend([Op::SetAttr(gi), Op::Signal(ready), Op::StartGate(gate)]);
    if g.start != Dist::Const(0) {
        ops.push(Op::Sleep(g.start));
    }
    let k = ops.len();
    ops.extend(g.program.ops.iter().map(|op| match *op {
        Op::LoopStart { count, end } => Op::LoopStart { count, end: end + k },
        Op::LoopEnd { start } => Op::LoopEnd { start: start + k },
        other => other,
    }));
    Program { ops }
}

#[cfg(test)]
mod tests {
    use crate::prio::Policy;
    use crate::sched::task::TaskState;
    use crate::sim::Sim;
    use crate::trace::Trace;

    const GROUPS: &str = "[[task]]\nname = \"hog\"\ncount = 2\nnice = 5\nprogram = [{ run = \"1s\" }]\n\
        [[task]]\nname = \"rt\"\npolicy = \"SCHED_FIFO\"\nrt_priority = 10\ncpus = [1]\n\
        program = [{ loop = { count = 0, body = [{ timer = \"2ms\" }, { run = \"100us\" }] } }]\n\
        [[task]]\nname = \"idle\"\npolicy = \"SCHED_IDLE\"\ncpus = [0]\nstart = \"5ms\"\nprogram = [{ run = \"1s\" }]\n";

    fn scenario(start: &str) -> crate::scenario::Scenario {
        let text = format!(
            "name = \"t\"\n[machine]\nsockets = 1\ncores_per_socket = 2\n[kernel]\nversion = \"6.12\"\n\
             [measure]\nduration = \"50ms\"\nstart = \"{start}\"\n{GROUPS}"
        );
        crate::scenario::load(&text, "t.toml", &[]).expect("scenario")
    }

    #[test]
    fn the_runners_threads_take_their_attributes_and_start_together() {
        let sc = scenario("runner");
        let mut sim = Sim::new(&sc, 1, true, Trace::new(None)).expect("sim");
        sim.run().expect("run");
        let k = &sim.w.m.kt.k;
        let harness = sim.w.m.kt.progs.harness_group.expect("a main thread");
        let harness: Vec<_> = k.sched.tasks.iter().filter(|t| t.group == harness).collect();
        let [sh, main] = harness[..] else { panic!("a shell and the runner's main thread") };
        assert_eq!((sh.comm.as_str(), sh.cpu), ("sh", 0));
        assert_eq!((main.comm.as_str(), main.policy, main.rt_priority), ("schedlab-runner", Policy::Fifo, 99));
        assert_ne!(main.cpu, 0, "forked beside the busy shell");
        assert!(harness.iter().all(|t| t.state == TaskState::Blocked), "both sleep from the gate on");
        let tasks: Vec<_> = k.sched.tasks.iter().filter(|t| t.group < sim.w.m.kt.progs.nr_scenario_groups).collect();
        assert_eq!(tasks.len(), 4);
        for t in &tasks {
            let g = &sc.groups[t.group];
            assert_eq!(
                (t.policy, t.nice, t.rt_priority, &*t.cpus),
                (g.policy, g.nice, g.rt_priority, &g.cpus),
                "{}",
                t.comm
            );
            assert!(t.cpus.test(t.cpu), "{} runs outside its CPUs", t.comm);
        }
        // The gate is every thread's time 0, after the clones.
        let start = tasks[0].stats.start_ns;
        assert!(start > 0 && tasks.iter().all(|t| t.stats.start_ns == start));
        let comms: Vec<String> = crate::sim::report::build(&sim, &sc).tasks.into_iter().map(|t| t.comm).collect();
        assert_eq!(comms, ["hog-0", "hog-1", "rt", "idle"], "the report lists the scenario's tasks only");
    }

    #[test]
    fn the_main_thread_reads_the_counters_at_fifo_99_when_the_window_opens_and_at_each_interval() {
        let text = format!(
            "name = \"t\"\n[machine]\nsockets = 1\ncores_per_socket = 2\n[kernel]\nversion = \"6.12\"\n\
             [kernel.costs]\nproc_read_task = \"5ms\"\nproc_read_stat = \"100us\"\n\
             [measure]\nwarmup = \"10ms\"\nduration = \"50ms\"\ninterval = \"20ms\"\nstart = \"runner\"\n{GROUPS}"
        );
        let sc = crate::scenario::load(&text, "t.toml", &[]).expect("scenario");
        let mut sim = Sim::new(&sc, 1, true, Trace::new(None)).expect("sim");
        sim.run().expect("run");
        let k = &sim.w.m.kt.k;
        let harness = sim.w.m.kt.progs.harness_group.expect("a main thread");
        let main = k.sched.tasks.iter().find(|t| t.group == harness && t.comm == "schedlab-runner").expect("main");
        // Four tasks and two CPUs when the window opens (20.2 ms), /proc/stat
        // at 30 and 50 ms (0.2 ms each); the end's read comes after the run.
        let reads = 4 * 5_000_000 + 3 * 2 * 100_000;
        let ran = main.se.sum_exec_runtime;
        assert!(ran >= reads && ran < reads + 1_000_000, "{ran}");
        // It took its CPU from a hog for those 20 ms: the hogs share 2 CPUs
        // with the rt and idle tasks less that.
        let hogs: u64 = k.sched.tasks.iter().filter(|t| t.comm.starts_with("hog")).map(|t| t.se.sum_exec_runtime).sum();
        assert!(hogs < 2 * 60_000_000 - 20_000_000, "{hogs}");
    }

    #[test]
    fn the_fork_start_has_no_main_thread() {
        let sc = scenario("fork");
        let mut sim = Sim::new(&sc, 1, true, Trace::new(None)).expect("sim");
        sim.run().expect("run");
        assert!(sim.w.m.kt.progs.harness_group.is_none());
        assert!(sim.w.m.kt.k.sched.tasks.iter().all(|t| t.comm != "schedlab-runner"));
    }

    /// The scenario's tasks' start times and the window's start, ns, with
    /// `measure.start_phase = phase`, started as `start` says, at `seed`.
    fn started_at(start: &str, phase: &str, seed: u64) -> (Vec<u64>, u64) {
        let text = format!(
            "name = \"t\"\n[machine]\nsockets = 1\ncores_per_socket = 2\n[kernel]\nversion = \"6.12\"\n\
             [measure]\nwarmup = \"8ms\"\nduration = \"50ms\"\nstart = \"{start}\"\nstart_phase = \"{phase}\"\n{GROUPS}"
        );
        let sc = crate::scenario::load(&text, "t.toml", &[]).expect("scenario");
        let mut sim = Sim::new(&sc, seed, true, Trace::new(None)).expect("sim");
        sim.run().expect("run");
        let k = &sim.w.m.kt.k;
        let scenario = |t: &&crate::sched::task::Task| ["hog", "rt", "idle"].iter().any(|n| t.comm.starts_with(n));
        let starts = k.sched.tasks.iter().filter(scenario).map(|t| t.stats.start_ns).collect();
        // The report's window is the one measured.
        let m = crate::sim::report::build(&sim, &sc).measure;
        assert_eq!((m.start_ns, m.end_ns), (sim.stats.rec.warmup, sim.stats.rec.warmup + 50_000_000));
        (starts, sim.stats.rec.warmup)
    }

    #[test]
    fn the_start_phase_moves_the_workload_and_its_window_off_the_jiffy_grid() {
        // Forked: each task at its `start` after the phase (idle's 5 ms), the
        // window the warm-up after the phase; the ticks stay on the grid.
        assert_eq!(started_at("fork", "jiffy", 1), (vec![0, 0, 0, 5_000_000], 8_000_000));
        assert_eq!(started_at("fork", "1500us", 1), (vec![1_500_000, 1_500_000, 1_500_000, 6_500_000], 9_500_000));
        // The runner's shell starts at the phase; its gate comes later.
        let (on_jiffy, _) = started_at("runner", "jiffy", 1);
        let (off, window) = started_at("runner", "1500us", 1);
        assert_eq!(window, 9_500_000);
        assert!(off.iter().zip(&on_jiffy).all(|(a, b)| *a > *b), "{off:?} against {on_jiffy:?}");
        // Drawn from the seed: within a tick (HZ 250), one per seed.
        let drawn: Vec<u64> = (1..=4).map(|seed| started_at("fork", "seed", seed).1 - 8_000_000).collect();
        assert!(drawn.iter().all(|&p| p < 4_000_000), "{drawn:?}");
        assert!(drawn.windows(2).any(|w| w[0] != w[1]), "{drawn:?}");
        assert_eq!(started_at("fork", "seed", 3), started_at("fork", "seed", 3));
    }

    #[test]
    fn a_start_the_runner_cannot_make_is_refused() {
        let bad = |measure: &str, more: &str| {
            let text = format!("[machine]\nsockets = 1\ncores_per_socket = 2\n[measure]\n{measure}\n{more}");
            crate::scenario::load(&text, "t.toml", &[]).expect_err("refused").to_string()
        };
        let e = bad("start = \"gate\"", GROUPS);
        assert!(e.contains("measure.start") && e.contains("\"fork\" or \"runner\""), "{e}");
        let e = bad("start = \"runner\"", "[rt_migrate_test]\n");
        assert!(e.contains("measure.start") && e.contains("[rt_migrate_test]"), "{e}");
        for phase in ["\"4ms\"", "\"later\"", "\"-1ms\""] {
            let e = bad(&format!("start_phase = {phase}"), GROUPS);
            assert!(e.contains("measure.start_phase") && e.contains("below the tick (4ms)"), "{e}");
        }
    }
}
