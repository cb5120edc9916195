//! The block layer as far as a task's IO goes: devices (`device.rs`: the
//! `[[machine.disk]]` tables), and blk-mq's submission, dispatch and
//! completion (`blk_mq.rs`, modelling block/blk-mq.c and block/blk-softirq.c
//! of 5.x). The state kept beside the tasks is here.

pub mod bio;
pub mod blk_mq;

use std::collections::VecDeque;

use crate::engine::Rng;
pub use crate::machine::disk::DiskConfig;
use crate::sched::task::TaskId;
pub use bio::{BioOp, EndIo};

/// struct request, reduced.
#[derive(Debug, Clone)]
pub struct Request {
    pub disk: usize,
    pub op: BioOp,
    pub bytes: u64,
    /// The CPU that submitted it (rq->mq_ctx->cpu): where rq_affinity sends
    /// its completion.
    pub submit_cpu: usize,
    /// Who is woken when it completes.
    pub waiter: Option<TaskId>,
    pub end_io: EndIo,
    pub queued_at: u64,
}

/// One device's counters, as iostat reads them from /proc/diskstats.
#[derive(Debug, Clone, Default)]
pub struct DiskStats {
    pub reads: u64,
    pub writes: u64,
    pub flushes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Σ (completion - queued): iostat's await numerator.
    pub wait_ns: u64,
    /// Time with at least one request in the device: %util.
    pub busy_ns: u64,
}

impl Disk {
    /// The counters as /proc/diskstats reads them at `now`: part_stat_show()
    /// calls update_io_ticks() first, so a device busy since `busy_since`
    /// has that time in io_ticks (%util) even while its queue never drains.
    pub fn stats_at(&self, now: u64) -> DiskStats {
        let mut s = self.stats.clone();
        if self.inflight > 0 {
            s.busy_ns += now - self.busy_since;
        }
        s
    }
}

/// A device's state.
#[derive(Debug, Clone)]
pub struct Disk {
    pub cfg: DiskConfig,
    /// Requests in service in the device.
    pub inflight: u32,
    /// A non-queued flush has the device (SATA FLUSH CACHE).
    pub flush_running: bool,
    /// Requests waiting for a tag, in submission order.
    pub pending: VecDeque<usize>,
    pub rng: Rng,
    pub stats: DiskStats,
    /// Since when `inflight` has been above 0 (for busy_ns).
    pub busy_since: u64,
    /// When the data path is free (the transfers share `bandwidth`).
    pub xfer_free_at: u64,
}

/// The block layer's state: the devices and the requests in flight (a
/// slab: a request's index is its tag).
#[derive(Debug, Clone, Default)]
pub struct Block {
    pub disks: Vec<Disk>,
    pub reqs: Vec<Option<Request>>,
    pub free: Vec<usize>,
    /// Writeback requests completed and not yet seen by the memory model:
    /// (disk, bytes).
    pub wb_done: Vec<(usize, u64)>,
}

impl Block {
    pub fn new(disks: &[DiskConfig], seed: u64) -> Self {
        let disks = disks
            .iter()
            .map(|cfg| Disk {
                cfg: cfg.clone(),
                inflight: 0,
                flush_running: false,
                pending: VecDeque::new(),
                rng: Rng::fork(seed, &format!("disk:{}", cfg.name)),
                stats: DiskStats::default(),
                busy_since: 0,
                xfer_free_at: 0,
            })
            .collect();
        Block { disks, reqs: Vec::new(), free: Vec::new(), wb_done: Vec::new() }
    }

    pub fn alloc(&mut self, r: Request) -> usize {
        match self.free.pop() {
            Some(i) => {
                self.reqs[i] = Some(r);
                i
            }
            None => {
                self.reqs.push(Some(r));
                self.reqs.len() - 1
            }
        }
    }

    pub fn take(&mut self, i: usize) -> Request {
        let r = self.reqs[i].take().expect("a live request");
        self.free.push(i);
        r
    }

    pub fn get(&self, i: usize) -> &Request {
        self.reqs[i].as_ref().expect("a live request")
    }
}
