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
//! Deviation: the submission path's own CPU time is in the submitting op's
//! `run`; requests are neither merged nor plugged; a flush is one request
//! (the kernel's flush state machine may issue a PREFLUSH, the write and a
//! POSTFLUSH, and aggregates concurrent flushes).

use crate::block::{BioOp, EndIo, Request};
use crate::engine::event::Ev;
use crate::engine::time::Instant;
use crate::irq::IrqAction;
use crate::kthread::WorkDone;
use crate::sched::task::TaskId;
use crate::sim::Sim;

impl Sim {
    /// Make a request (not yet submitted) for `waiter`.
    pub(crate) fn blk_alloc_request(
        &mut self,
        disk: usize,
        op: BioOp,
        bytes: u64,
        waiter: Option<TaskId>,
        end_io: EndIo,
    ) -> usize {
        let r = Request { disk, op, bytes, submit_cpu: 0, waiter, end_io, queued_at: self.now };
        self.block.alloc(r)
    }

    /// submit_bio() of request `req` from `cpu`'s context.
    pub fn submit_bio(&mut self, req: usize, cpu: usize) {
        let r = self.block.reqs[req].as_mut().expect("a live request");
        r.submit_cpu = cpu;
        r.queued_at = self.now;
        let disk = r.disk;
        self.block.disks[disk].pending.push_back(req);
        self.blk_mq_dispatch(disk);
    }

    /// blk_mq_run_hw_queue(): start pending requests while the device takes
    /// them, in order.
    fn blk_mq_dispatch(&mut self, disk: usize) {
        while let Some(&req) = self.block.disks[disk].pending.front() {
            let op = self.block.get(req).op;
            let d = &self.block.disks[disk];
            let exclusive = op == BioOp::Flush && !d.cfg.flush_queued;
            let room = d.inflight < d.cfg.queue_depth && !d.flush_running && (!exclusive || d.inflight == 0);
            if !room {
                return;
            }
            let bytes = self.block.get(req).bytes;
            let d = &mut self.block.disks[disk];
            d.pending.pop_front();
            if d.inflight == 0 {
                d.busy_since = self.now;
            }
            d.inflight += 1;
            d.flush_running = exclusive;
            let dist = match op {
                BioOp::Read => d.cfg.read,
                BioOp::Write => d.cfg.write,
                BioOp::Flush => d.cfg.flush,
            };
            let mut done = self.now + dist.sample(&mut d.rng);
            if d.cfg.bandwidth > 0 {
                // The transfer waits for the data path.
                let xfer = (bytes as u128 * 1_000_000_000 / d.cfg.bandwidth as u128) as u64;
                done = done.max(d.xfer_free_at) + xfer;
                d.xfer_free_at = done;
            }
            self.q.schedule(Instant(done.max(self.now + 1)), Ev::BlkDone(req));
        }
    }

    /// The device finished `req`: free its tag, start the next, and raise
    /// the completion interrupt.
    #[inline(never)]
    pub(crate) fn blk_done(&mut self, req: usize) {
        let r = self.block.get(req).clone();
        let d = &mut self.block.disks[r.disk];
        d.inflight -= 1;
        if r.op == BioOp::Flush && !d.cfg.flush_queued {
            d.flush_running = false;
        }
        if d.inflight == 0 {
            d.stats.busy_ns += self.now - d.busy_since;
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
        s.wait_ns += self.now - r.queued_at;
        let (per_cpu, irq_cpu, aff) = (d.cfg.per_cpu_queues, d.cfg.irq_cpu, d.cfg.rq_affinity);
        self.blk_mq_dispatch(r.disk);
        let c = &self.cfg.costs;
        let (hard, done) = (c.irq_ns, c.blk_complete_ns);
        // Where the interrupt lands: the submitter's own queue, or the
        // single queue's IRQ CPU.
        let irq = if per_cpu { r.submit_cpu } else { irq_cpu };
        let target = self.blk_completion_cpu(irq, r.submit_cpu, aff);
        match (target == irq, per_cpu) {
            // Completed in the hard interrupt (nr_hw_queues > 1).
            (true, true) => self.raise_irq(irq, hard + done, 0, IrqAction::BlkComplete(req as u32)),
            // Completed in BLOCK_SOFTIRQ on the way out of the interrupt.
            (true, false) => self.raise_irq(irq, hard, done, IrqAction::BlkComplete(req as u32)),
            // The handler sends the completion to the submitter.
            _ => self.raise_irq(irq, hard, 0, IrqAction::BlkIpi(req as u32)),
        }
    }

    /// The CPU a completion runs on (rq_affinity).
    fn blk_completion_cpu(&self, irq: usize, submit: usize, rq_affinity: u8) -> usize {
        match rq_affinity {
            0 => irq,
            1 if self.cpus_share_cache(irq, submit) => irq,
            _ => submit,
        }
    }

    /// The completion IPI reaches the submitting CPU: complete there
    /// (in the IPI's hard interrupt with per-CPU queues, else in
    /// BLOCK_SOFTIRQ).
    pub(crate) fn blk_complete_ipi(&mut self, _from: usize, req: usize) {
        let r = self.block.get(req);
        let (cpu, per_cpu) = (r.submit_cpu, self.block.disks[r.disk].cfg.per_cpu_queues);
        let c = &self.cfg.costs;
        let (ipi, done) = (c.wakeup_ipi_ns, c.blk_complete_ns);
        if per_cpu {
            self.raise_irq(cpu, ipi + done, 0, IrqAction::BlkComplete(req as u32));
        } else {
            self.raise_irq(cpu, ipi, done, IrqAction::BlkComplete(req as u32));
        }
    }

    /// blk_mq_end_request() -> bio_endio(): the end_io of `req` on `cpu`,
    /// in interrupt context.
    pub(crate) fn blk_complete_request(&mut self, cpu: usize, req: usize) {
        let r = self.block.take(req);
        match r.end_io {
            EndIo::Wake => {
                if let Some(w) = r.waiter {
                    self.try_to_wake_up(w, cpu, false);
                }
            }
            EndIo::Work { wq, program } => {
                let done = WorkDone { wake: r.waiter, submit: None };
                self.queue_work(wq, program, cpu, done, false);
            }
        }
    }
}
