//! dbench 4 as mmtests' io-dbench4-async runs it (seed 001): every client
//! replays a load file over and over in its own directory tree, with no
//! think time, and the benchmark reports the wall time of each complete
//! pass (`--show-execute-time`, integer ms) and the MB/s of its ReadX and
//! WriteX ops. docs/notes/dbench-loadfile-research.md has the sources.
//!
//! The load file: mmtests' `client-tiny.txt` is not published; we take it
//! as a proportional slice (1/133) of dbench's `client.txt` NetBench trace,
//! whose op mix is known from published end-of-run tables (research note
//! §1.2, §1.4): about 3,300 ops and 40 `Flush` ops per pass, 1,185 of them
//! ReadX/WriteX of 15.2 KB on average (18.0 MB per pass; the seed's own
//! figures, 321.41 MB/s at 58.69 ms a pass, give 18.9 MB). The CPU cost of
//! an op is its published dbench latency (research note §4, table A: ext4
//! on arm64 with 10 clients) times one scale, the CPU time of a whole pass
//! (`dbench.loadfile_cpu`): the one constant calibrated on a published
//! point. The ops run in file order; the CPU of the ops between two
//! Flushes is one `run`.
//!
//! A Flush is fsync() of a small file just written (the NetBench pattern:
//! create, write 12-19 KB, Flush, Close, Rename), so it writes the file's
//! data, then commits its metadata:
//!
//! * XFS (5.5 xfs_file_fsync): the data write is submitted by the client,
//!   which sleeps in io_schedule; an appending ioend completes through the
//!   bound `xfs-conv` workqueue (xfs_end_bio -> m_unwritten_workqueue), whose
//!   kworker on the completing CPU ends the writeback and wakes the client.
//!   The log force queues xlog_cil_push_work on the unbound `xfs-cil`
//!   workqueue and waits for it (flush_work); then the cache flush is
//!   dispatched by blk-mq's requeue work on `kblockd` on the client's CPU,
//!   and its completion runs xlog_ioend_work on the bound highpri `xfs-log`
//!   workqueue of the completing CPU, which wakes the client (xlog_wait:
//!   not iowait). Work times are Mel Gorman's trace (research-001 §2.3):
//!   CIL push 14 us, the client between 15 us, requeue work 6 us,
//!   xlog_ioend_work 25 us; xfs_end_io's size update is taken as the CIL
//!   push's 14 us (not measured).
//! * ext4 (5.5 ext4_sync_file, no dioread_nolock): the data write's
//!   completion ends the writeback in the interrupt, which wakes the
//!   client; the journal commit's cache flush wakes it from the interrupt
//!   too. Deviation: jbd2's commit thread (kjournald2, not a per-CPU
//!   kthread, so the stacking rule never applies to it) is not modelled.

use serde::Deserialize;

use crate::block::{BioOp, EndIo};
use crate::engine::rng::Dist;
use crate::error::{Result, SimError};
use crate::kernel::workqueue::{WorkqueueDef, WQ_FREEZABLE, WQ_HIGHPRI, WQ_MEM_RECLAIM, WQ_UNBOUND};
use crate::machine::Machine;
use crate::prio::Policy;
pub use crate::program::DbenchOp;
use crate::units::duration_at;
use crate::workload::{IoOp, Op, Program, QueueWorkOp, TaskGroup};

/// `[dbench]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawDbench {
    pub(crate) clients: Option<i64>,
    /// "xfs" or "ext4".
    pub(crate) filesystem: Option<String>,
    /// The `[[machine.disk]]` it runs on (default: the first).
    pub(crate) disk: Option<String>,
    /// CPU time of a pass's ops other than Flush.
    pub(crate) loadfile_cpu: Option<String>,
    /// Start of the first pass.
    pub(crate) start: Option<String>,
}

/// The filesystem a client's Flush goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filesystem {
    Xfs,
    Ext4,
}

/// One op type of the load file: name, count per pass, published latency
/// (us, research note §4 table A), and bytes moved per op.
struct LoadOp {
    name: &'static str,
    count: u32,
    cost_us: f64,
    bytes: u64,
}

/// client-tiny.txt, estimated (research note §1.4), with the op costs of
/// table A (§4). Flush is the fsync chain, not a CPU cost.
const CLIENT_TINY: &[LoadOp] = &[
    LoadOp { name: "ReadX", count: 900, cost_us: 4.0, bytes: 15_200 },
    LoadOp { name: "NTCreateX", count: 570, cost_us: 21.0, bytes: 0 },
    LoadOp { name: "Qpathinfo", count: 520, cost_us: 7.0, bytes: 0 },
    LoadOp { name: "Close", count: 420, cost_us: 1.0, bytes: 0 },
    LoadOp { name: "WriteX", count: 285, cost_us: 19.0, bytes: 15_200 },
    LoadOp { name: "Find", count: 200, cost_us: 19.0, bytes: 0 },
    LoadOp { name: "Unlink", count: 115, cost_us: 70.0, bytes: 0 },
    LoadOp { name: "Qfsinfo", count: 95, cost_us: 12.0, bytes: 0 },
    LoadOp { name: "Qfileinfo", count: 90, cost_us: 1.0, bytes: 0 },
    LoadOp { name: "Sfileinfo", count: 47, cost_us: 29.0, bytes: 0 },
    LoadOp { name: "Rename", count: 24, cost_us: 51.0, bytes: 0 },
    LoadOp { name: "LockX", count: 2, cost_us: 3.0, bytes: 0 },
    LoadOp { name: "UnlockX", count: 2, cost_us: 1.0, bytes: 0 },
];
/// Flush ops per pass (1.21 % of ~3,300).
pub const FLUSHES_PER_PASS: u64 = 40;
/// The data a Flush writes back: the file just written (12-19 KB).
const FSYNC_DATA_BYTES: u64 = 16 * 1024;
/// Default CPU time of a pass's other ops (before calibration): table A
/// as published.
pub fn tiny_published_cpu_ns() -> u64 {
    CLIENT_TINY.iter().map(|o| (o.count as f64 * o.cost_us * 1000.0) as u64).sum()
}

/// The ops of a pass other than Flush: (name, count).
pub fn tiny_mix() -> Vec<(&'static str, u32)> {
    CLIENT_TINY.iter().map(|o| (o.name, o.count)).collect()
}

/// Bytes of ReadX and WriteX in a pass (dbench's MB/s counts only these).
pub fn tiny_bytes() -> u64 {
    CLIENT_TINY.iter().map(|o| o.count as u64 * o.bytes).sum()
}

/// The `[dbench]` parameters, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct DbenchConfig {
    pub clients: usize,
    pub fs: Filesystem,
    pub disk: usize,
    pub loadfile_cpu_ns: u64,
    /// The client group's index.
    pub group: usize,
    pub bytes_per_pass: u64,
}

/// An io op: its parameters go in the io table, the op names them.
fn io_op(io_ops: &mut Vec<IoOp>, o: IoOp) -> Op {
    io_ops.push(o);
    Op::Io { idx: (io_ops.len() - 1) as u32, wait: o.wait }
}

/// The workqueues a filesystem brings (created at mount).
pub(crate) fn fs_workqueues(fs: Filesystem) -> Vec<WorkqueueDef> {
    match fs {
        Filesystem::Xfs => vec![
            // fs/xfs/xfs_super.c xfs_init_mount_workqueues (5.5) and
            // xfs_log.c (l_ioend_workqueue).
            WorkqueueDef::new("xfs-conv", WQ_MEM_RECLAIM | WQ_FREEZABLE),
            WorkqueueDef::new("xfs-cil", WQ_MEM_RECLAIM | WQ_FREEZABLE | WQ_UNBOUND),
            WorkqueueDef::new("xfs-log", WQ_MEM_RECLAIM | WQ_FREEZABLE | WQ_HIGHPRI),
        ],
        Filesystem::Ext4 => Vec::new(),
    }
}

pub(crate) fn filesystem_at(raw: &RawDbench, file: &str) -> Result<Filesystem> {
    match raw.filesystem.as_deref().unwrap_or("xfs") {
        "xfs" => Ok(Filesystem::Xfs),
        "ext4" => Ok(Filesystem::Ext4),
        f => Err(SimError::bad_value(file, "dbench.filesystem", format!("\"{f}\""), "xfs, ext4")),
    }
}

/// `[dbench]` -> the client group (appended to `groups`) and its works.
pub(crate) fn compile_dbench(
    raw: &RawDbench,
    file: &str,
    machine: &Machine,
    wqs: &[WorkqueueDef],
    groups: &mut Vec<TaskGroup>,
    tables: (&mut Vec<Program>, &mut Vec<IoOp>, &mut Vec<QueueWorkOp>),
) -> Result<DbenchConfig> {
    let (work_programs, io_ops, queue_works) = tables;
    let k = |s: &str| format!("dbench.{s}");
    let clients = raw.clients.unwrap_or(1);
    if !(1..=100_000).contains(&clients) {
        return Err(SimError::bad_value(file, &k("clients"), format!("{clients}"), "1..100000"));
    }
    let fs = filesystem_at(raw, file)?;
    let disk = match &raw.disk {
        None if !machine.disks.is_empty() => 0,
        None => {
            return Err(SimError::bad_value(
                file,
                "dbench",
                "the machine has no disk",
                "a [[machine.disk]] table for dbench's filesystem",
            ))
        }
        Some(n) => machine.disks.iter().position(|d| &d.name == n).ok_or_else(|| {
            let names: Vec<&str> = machine.disks.iter().map(|d| d.name.as_str()).collect();
            SimError::bad_value(file, &k("disk"), format!("no disk \"{n}\""), names.join(", "))
        })?,
    };
    let loadfile_cpu_ns = match &raw.loadfile_cpu {
        Some(s) => duration_at(s, file, &k("loadfile_cpu"))?,
        None => tiny_published_cpu_ns(),
    };
    let start = raw.start.as_deref().map(|s| duration_at(s, file, &k("start"))).transpose()?.unwrap_or(0);
    if let Some(g) = groups.iter().find(|g| g.name == "dbench" || g.name == "dbench-main") {
        return Err(SimError::bad_value(
            file,
            "task",
            format!("the name \"{}\" is taken by [dbench]", g.name),
            "another name",
        ));
    }
    let wq = |name: &str| wqs.iter().position(|w| w.name == name).expect("the filesystem's workqueues exist");
    let mut work = |ns: u64| {
        work_programs.push(Program { ops: vec![Op::Run(Dist::Const(ns))] });
        work_programs.len() - 1
    };
    // The Flush chain.
    let mut fsync: Vec<Op> = Vec::new();
    let data = |io_ops: &mut Vec<IoOp>, end_io| {
        let o =
            IoOp { disk, op: BioOp::Write, bytes: FSYNC_DATA_BYTES, submit: None, end_io, iowait: true, wait: true };
        io_op(io_ops, o)
    };
    match fs {
        Filesystem::Xfs => {
            let conv = EndIo::Work { wq: wq("xfs-conv"), program: work(14_000) };
            fsync.push(data(io_ops, conv));
            let cil = QueueWorkOp { wq: wq("xfs-cil"), program: work(14_000), cpu: None, wait: true };
            queue_works.push(cil);
            fsync.push(Op::QueueWork { idx: (queue_works.len() - 1) as u32, wait: true });
            fsync.push(Op::Run(Dist::Const(15_000)));
            fsync.push(io_op(
                io_ops,
                IoOp {
                    disk,
                    op: BioOp::Flush,
                    bytes: 0,
                    submit: Some((wq("kblockd"), work(6_000))),
                    end_io: EndIo::Work { wq: wq("xfs-log"), program: work(25_000) },
                    iowait: false,
                    wait: true,
                },
            ));
        }
        Filesystem::Ext4 => {
            fsync.push(data(io_ops, EndIo::Wake));
            fsync.push(io_op(
                io_ops,
                IoOp { disk, op: BioOp::Flush, bytes: 0, submit: None, end_io: EndIo::Wake, iowait: false, wait: true },
            ));
        }
    }
    // One pass: the other ops' CPU and bytes split evenly between the
    // Flushes, each followed by its chain.
    let bytes_per_pass = tiny_bytes();
    let mut ops = vec![Op::LoopStart { count: 0, end: 0 }, Op::Dbench(DbenchOp::PassStart)];
    let (cpu, bytes) = (loadfile_cpu_ns / FLUSHES_PER_PASS, bytes_per_pass / FLUSHES_PER_PASS);
    for _ in 0..FLUSHES_PER_PASS {
        ops.push(Op::Run(Dist::Const(cpu.max(1))));
        ops.push(Op::Dbench(DbenchOp::Bytes(bytes)));
        ops.extend(fsync.iter().cloned());
    }
    ops.push(Op::Dbench(DbenchOp::PassEnd));
    let end = ops.len();
    ops.push(Op::LoopEnd { start: 0 });
    ops[0] = Op::LoopStart { count: 0, end };
    let group = groups.len();
    let all = crate::cpumask::CpuMask::full(machine.nr_cpus());
    let task = |name: &str, count, start, program| TaskGroup {
        name: name.into(),
        count,
        policy: Policy::Normal,
        nice: 0,
        rt_priority: 0,
        dl: Default::default(),
        cpus: all.clone(),
        start,
        kthread: false,
        memory_bound: 0,
        memory_traffic: 0,
        cgroup: 0,
        program,
    };
    // The clients are forked by dbench's main process, so fork balancing
    // places them (with the parent running, the first goes to the idlest
    // node of a NUMA machine); the parent then prints its progress once a
    // second.
    groups.push(task("dbench", 0, Dist::Const(0), Program { ops }));
    let mut main = vec![Op::Fork(group); clients as usize];
    main.extend([
        Op::LoopStart { count: 0, end: main.len() + 3 },
        Op::Sleep(Dist::Const(1_000_000_000)),
        Op::Run(Dist::Const(10_000)),
        Op::LoopEnd { start: main.len() },
    ]);
    groups.push(task("dbench-main", 1, Dist::Const(start), Program { ops: main }));
    Ok(DbenchConfig { clients: clients as usize, fs, disk, loadfile_cpu_ns, group, bytes_per_pass })
}

/// The benchmark's results so far (every pass, every client).
#[derive(Debug, Clone, Default)]
pub struct DbenchState {
    pub cfg: Option<DbenchConfig>,
    /// Per task id: when its current pass began.
    pub pass_start: Vec<Option<u64>>,
    /// Passes completed in the window and the sums of their durations
    /// (integer ms, as dbench prints them).
    pub passes: u64,
    pub sum_ms: u64,
    pub sumsq_ms: u128,
    pub min_ms: u64,
    pub max_ms: u64,
    /// Bytes of ReadX/WriteX per second of the window (dbench's 1 s samples).
    pub bytes_per_s: Vec<u64>,
}

impl DbenchState {
    /// A client's internal op at `now` (window from `start`).
    pub fn op(&mut self, tid: usize, op: DbenchOp, now: u64, start: u64) {
        if self.pass_start.len() <= tid {
            self.pass_start.resize(tid + 1, None);
        }
        match op {
            DbenchOp::PassStart => self.pass_start[tid] = Some(now),
            DbenchOp::Bytes(b) => {
                if now >= start {
                    let s = ((now - start) / 1_000_000_000) as usize;
                    if self.bytes_per_s.len() <= s {
                        self.bytes_per_s.resize(s + 1, 0);
                    }
                    self.bytes_per_s[s] += b;
                }
            }
            DbenchOp::PassEnd => {
                let Some(t0) = self.pass_start[tid].take() else { return };
                if now < start {
                    return;
                }
                let ms = (now - t0) / 1_000_000;
                if self.passes == 0 || ms < self.min_ms {
                    self.min_ms = ms;
                }
                self.max_ms = self.max_ms.max(ms);
                self.passes += 1;
                self.sum_ms += ms;
                self.sumsq_ms += ms as u128 * ms as u128;
            }
        }
    }
}
