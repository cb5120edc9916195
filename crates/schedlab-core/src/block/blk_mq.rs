//! Models blk-mq's path of a request (block/blk-mq.c, block/blk-softirq.c,
//! 5.x): submit_bio() from the submitting CPU's context, dispatch to the
//! device when it has a free tag (a non-queued flush waits for the device
//! to drain and holds it), service, and the completion: the device's
//! interrupt, then __blk_mq_complete_request() on the CPU rq_affinity
//! picks — in the hard interrupt with one queue per CPU, in BLOCK_SOFTIRQ
//! with a single queue — where the bio's end_io wakes the waiter or punts
//! to a workqueue on that CPU.
//!
//! Completion CPU (5.5 __blk_mq_complete_request / __blk_complete_request):
//! with `rq_affinity` 1 (QUEUE_FLAG_SAME_COMP) the request completes on the
//! interrupted CPU if it shares a cache with the submitter, else on the
//! submitter through an IPI; with 2 (SAME_FORCE) always on the submitter;
//! with 0 where the interrupt lands.
//!
//! This file is the device side, which needs only the clock and the event
//! queue; the completion's interrupt side (where it runs, what end_io
//! wakes) is `irq/blk.rs`.
//!
//! Deviation: the submission path's own CPU time is in the submitting op's
//! `run`; requests are neither merged nor plugged; a flush is one request
//! (the kernel's flush state machine may issue a PREFLUSH, the write and a
//! POSTFLUSH, and aggregates concurrent flushes).

use crate::block::{BioOp, Block, EndIo, Request};
use crate::engine::event::{Ev, TaskId};
use crate::engine::queue::EventQueue;
use crate::engine::time::Instant;

impl Block {
    /// Make a request (not yet submitted) for `waiter`.
    pub(crate) fn alloc_request(
        &mut self,
        now: u64,
        disk: usize,
        op: BioOp,
        bytes: u64,
        waiter: Option<TaskId>,
        end_io: EndIo,
    ) -> usize {
        let r = Request { disk, op, bytes, submit_cpu: 0, waiter, end_io, queued_at: now };
        self.alloc(r)
    }

    /// submit_bio() of request `req` from `cpu`'s context at `now`.
    pub fn submit_bio(&mut self, req: usize, cpu: usize, now: u64, q: &mut EventQueue<Ev>) {
        let r = self.reqs[req].as_mut().expect("a live request");
        r.submit_cpu = cpu;
        r.queued_at = now;
        let disk = r.disk;
        self.disks[disk].pending.push_back(req);
        self.blk_mq_dispatch(disk, now, q);
    }

    /// blk_mq_run_hw_queue(): start pending requests while the device takes
    /// them, in order.
    fn blk_mq_dispatch(&mut self, disk: usize, now: u64, q: &mut EventQueue<Ev>) {
        while let Some(&req) = self.disks[disk].pending.front() {
            let op = self.get(req).op;
            let d = &self.disks[disk];
            let exclusive = op == BioOp::Flush && !d.cfg.flush_queued;
            let room = d.inflight < d.cfg.queue_depth && !d.flush_running && (!exclusive || d.inflight == 0);
            if !room {
                return;
            }
            let bytes = self.get(req).bytes;
            let d = &mut self.disks[disk];
            d.pending.pop_front();
            if d.inflight == 0 {
                d.busy_since = now;
            }
            d.inflight += 1;
            d.flush_running = exclusive;
            let dist = match op {
                BioOp::Read => d.cfg.read,
                BioOp::Write => d.cfg.write,
                BioOp::Flush => d.cfg.flush,
            };
            let mut done = now + dist.sample(&mut d.rng);
            if d.cfg.bandwidth > 0 {
                // The transfer waits for the data path.
                let xfer = (bytes as u128 * 1_000_000_000 / d.cfg.bandwidth as u128) as u64;
                done = done.max(d.xfer_free_at) + xfer;
                d.xfer_free_at = done;
            }
            q.schedule(Instant(done.max(now + 1)), Ev::BlkDone(req));
        }
    }

    /// The device finished `req` at `now`: free its tag, count it, start
    /// the next. Returns the request, whose completion interrupt the caller
    /// raises (irq/blk.rs).
    #[inline(never)]
    pub(crate) fn blk_done(&mut self, req: usize, now: u64, q: &mut EventQueue<Ev>) -> Request {
        let r = self.get(req).clone();
        let d = &mut self.disks[r.disk];
        d.inflight -= 1;
        if r.op == BioOp::Flush && !d.cfg.flush_queued {
            d.flush_running = false;
        }
        if d.inflight == 0 {
            d.stats.busy_ns += now - d.busy_since;
        }
        let s = &mut d.stats;
        match r.op {
            BioOp::Read => {
                s.reads += 1;
                s.read_bytes += r.bytes;
            }
            BioOp::Write => {
                s.writes += 1;
                s.write_bytes += r.bytes;
            }
            BioOp::Flush => s.flushes += 1,
        }
        s.wait_ns += now - r.queued_at;
        self.blk_mq_dispatch(r.disk, now, q);
        r
    }
}
