//! A task program is a flat list of ops; `loop` bodies are compiled into a
//! `LoopStart` / `LoopEnd` pair so the interpreter keeps only a program
//! counter and a small loop stack per task.

use crate::block::bio::{BioOp, EndIo};
use crate::cpumask::CpuMask;
use crate::engine::rng::Dist;
use crate::prio::Policy;

/// rt-migrate-test's internal ops (workload/rt_migrate_test.rs; here,
/// below it, as the op's leaf type).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RtmtOp {
    /// Main thread, start of a run (after creating the threads).
    RunStart,
    /// Main thread: `now = get_time()` for the next iteration.
    Mark,
    /// Main thread, after the end barrier: check_times(loop) and `loop++`.
    Check,
    /// Main thread: the run's iterations are over (record_time ignores the
    /// last release); then the threads are told `done`.
    Final,
    Done,
    /// Thread: the top of its loop, `while (!done)`.
    ExitIfDone,
    /// Thread `i`: its start stamp after the release.
    Start(usize),
    /// Thread `i`: the busy loop ended.
    End(usize),
}

/// What a dbench client's internal op records (workload/dbench.rs; here,
/// below it, as the op's leaf type).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DbenchOp {
    /// A pass of the load file begins (gettimeofday at `again:`).
    PassStart,
    /// ReadX/WriteX bytes of the ops just done.
    Bytes(u64),
    /// The pass is complete.
    PassEnd,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op {
    /// CPU work at nominal speed: progresses only while the task runs.
    Run(Dist),
    /// Kernel work of a syscall the program makes, in ns: a cost constant
    /// (`kernel.costs.pipe_write`, `fork`, ...). Progresses like `Run`,
    /// counted as %sys. The real kernel does it itself: the runner skips it.
    Sys(u64),
    /// Busy until this much wall-clock time has passed since the op began,
    /// whether or not the task was running (rt-app "runtime").
    Runtime(Dist),
    /// Block for a duration.
    Sleep(Dist),
    /// Periodic timer (rt-app "timer"): sleep until the next expiry, one
    /// `period` (ns) after the last. The first expiry is a period after the
    /// first use, or with `from_start` after the task's start (rt-app's
    /// grid). A timer already late does not sleep; `relative` then moves
    /// the grid to now (rt-app's default mode), else it keeps it.
    Timer { period: u64, relative: bool, from_start: bool },
    /// sched_yield().
    Yield,
    /// Start of a loop body: `count` iterations (0 = forever); the matching
    /// `LoopEnd` is at `end`.
    LoopStart { count: u64, end: usize },
    /// End of a loop body; jumps back to `start` + 1.
    LoopEnd { start: usize },
    /// Wait until every participant reached the barrier.
    Barrier(usize),
    /// Wait for a signal on an event (semaphore semantics).
    Wait(usize),
    /// Post an event, waking one waiter.
    Signal(usize),
    /// Queue a message on channel instance `ch + task index % n` (blocks
    /// while it is full; workload/channel.rs). Its cost is a `Run` before it.
    Send { ch: u32, n: u32 },
    /// Take a message from channel instance `ch + task index % n` (blocks
    /// while it is empty). Its cost is a `Run` after it.
    Recv { ch: u32, n: u32 },
    /// Fork one task of a group template.
    Fork(usize),
    /// Exit now.
    Exit,
    /// execve()'s sched_exec(): the task may move to the idlest CPU of its
    /// highest SD_BALANCE_EXEC domain (kernel/sched/core.c).
    Exec,
    /// Block until woken explicitly (kernel threads waiting for work; not a
    /// scenario op).
    Park,
    /// A ktask job: the task becomes the main thread of `threads` workers.
    Parallel { work: u64, threads: usize, min_chunk: u64 },
    /// A ktask helper work item of job N (not a scenario op; the kworker
    /// takes chunks until none are left, kthread/ktask.rs).
    KtaskHelper(usize),
    /// queue_work() (queue_work_on() with `cpu`): hand a work item of
    /// `program` (in `Workload::work_programs`) to workqueue `wq` (an index
    /// of the kernel's workqueues); with `wait`, flush_work(): sleep until
    /// it is done (not iowait).
    /// The op is `Workload::queue_works[idx]` (kept apart: a small Op is
    /// cheap to copy on the interpreter's hot path).
    QueueWork { idx: u32, wait: bool },
    /// Block IO (block/blk_mq.rs): submit a request and, with `wait`,
    /// sleep until its completion wakes the task. The op is
    /// `Workload::io_ops[idx]`.
    Io { idx: u32, wait: bool },
    /// A read(2) of a file (mm/filemap.rs): buffered through the page
    /// cache or O_DIRECT. The op is `Workload::read_ops[idx]`.
    Read { idx: u32 },
    /// kswapd thread N's loop (not a scenario op; mm/kswapd.rs).
    Kswapd(u32),
    /// The flusher of writeback device N (not a scenario op;
    /// mm/fs_writeback.rs).
    Flusher(u32),
    /// dbench's bookkeeping (not a scenario op; workload/dbench.rs).
    Dbench(DbenchOp),
    /// rt-migrate-test's bookkeeping (not a scenario op; see
    /// workload/rt_migrate_test.rs).
    Rtmt(RtmtOp),
    /// rt-migrate-test's highest thread pins itself to the next CPU (not a
    /// scenario op).
    RtmtRotate,
    /// The runner's start (`measure.start = "runner"`, workload/start.rs;
    /// not a scenario op): clone one task of report group `group` running
    /// `template` from the running task, whose policy, nice and CPUs the
    /// child copies (copy_process()).
    Clone { template: u32, group: u32 },
    /// The runner's start: the running task sets its own CPUs, policy and
    /// nice to template N's (sched_setaffinity(), sched_setscheduler(),
    /// setpriority()).
    SetAttr(usize),
    /// The runner's start gate: barrier N, whose opening is every task's
    /// start (time 0 of its timers).
    StartGate(usize),
}

impl Op {
    /// The op may put the task to sleep (or end it): a task that still owes
    /// kernel time on its CPU pays it first (Sim::advance).
    #[inline]
    pub fn may_sleep(&self) -> bool {
        matches!(
            self,
            Op::Sleep(_)
                | Op::Timer { .. }
                | Op::Barrier(_)
                | Op::StartGate(_)
                | Op::Wait(_)
                | Op::Send { .. }
                | Op::Recv { .. }
                | Op::Exit
                | Op::QueueWork { wait: true, .. }
                | Op::Io { wait: true, .. }
        )
    }

    /// The op can let simulated time pass or block the task (a loop needs
    /// one: yield, fork and signal alone spin at one instant).
    pub fn takes_time(&self) -> bool {
        matches!(
            self,
            Op::Run(_)
                | Op::Sys(_)
                | Op::Runtime(_)
                | Op::Sleep(_)
                | Op::Timer { .. }
                | Op::Barrier(_)
                | Op::StartGate(_)
                | Op::Wait(_)
                | Op::Send { .. }
                | Op::Recv { .. }
                | Op::Park
                | Op::Parallel { .. }
                | Op::Exit
                | Op::Read { .. }
                | Op::Kswapd(_)
                | Op::Flusher(_)
        ) || matches!(self, Op::QueueWork { wait: true, .. } | Op::Io { wait: true, .. })
    }
}

/// A `queue_work` op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueWorkOp {
    pub wq: usize,
    pub program: usize,
    /// queue_work_on()'s CPU; None: the local CPU.
    pub cpu: Option<usize>,
    pub wait: bool,
}

/// An `io` op: what to submit, how, and how the task waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoOp {
    /// The disk, by index of `[[machine.disk]]`.
    pub disk: usize,
    pub op: BioOp,
    pub bytes: u64,
    /// The request is dispatched by a work item (workqueue, program) queued
    /// on the local CPU instead of by the task (blk-mq's requeue work on
    /// kblockd, as the flush machinery does).
    pub submit: Option<(usize, usize)>,
    pub end_io: EndIo,
    /// Sleep in io_schedule() (counted as iowait) rather than schedule().
    pub iowait: bool,
    /// Wait for the completion.
    pub wait: bool,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Program {
    pub ops: Vec<Op>,
}

/// A group of identical tasks.
#[derive(Debug, Clone)]
pub struct TaskGroup {
    pub name: String,
    pub count: usize,
    pub policy: Policy,
    pub nice: i32,
    pub rt_priority: u32,
    /// SCHED_DEADLINE's runtime, deadline and period (zero otherwise).
    pub dl: crate::prio::DlAttr,
    pub cpus: CpuMask,
    /// The start delay (a duration or a distribution, drawn once per task
    /// from its own random stream).
    pub start: crate::engine::rng::Dist,
    pub kthread: bool,
    /// The share of its run ops' work that does not speed up with the
    /// CPU's frequency (waiting on memory), 1/1024ths (`memory_bound`).
    pub memory_bound: u16,
    /// The DRAM traffic of its run ops, bytes per us of work at max_freq
    /// (`memory_traffic`): their demand on the node's memory bandwidth
    /// (membw/).
    pub memory_traffic: u32,
    /// The task group its tasks run in (`task.cgroup`; 0: the root's).
    pub cgroup: usize,
    pub program: Program,
}

/// The registry of what tasks run, shared by every room that makes tasks
/// or queues work: the task-group templates (the scenario's, then the
/// kernel's own: kworkers, kswapd), the report groups, and the programs of
/// work items.
#[derive(Debug, Clone, Default)]
pub struct Programs {
    /// Program templates: the scenario's groups, then the kernel's own
    /// (the vmstat kworkers).
    pub templates: Vec<TaskGroup>,
    /// Scenario groups come first in `templates` and `group_names`.
    pub nr_scenario_groups: usize,
    /// Report groups: the scenario's groups, then the kernel's (kworker).
    pub group_names: Vec<String>,
    /// The programs of work items (`queue_work` bodies, IO completion
    /// works), by index.
    pub work_programs: Vec<Program>,
    /// `measure.start = "runner"`: the report group of the runner's main
    /// thread (workload/start.rs), which reports do not list.
    pub harness_group: Option<usize>,
}
