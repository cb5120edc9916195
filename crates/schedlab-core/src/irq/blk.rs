//! The block completion's interrupt side (block/blk-mq.c
//! __blk_mq_complete_request, block/blk-softirq.c): when the device is done
//! (`block/blk_mq.rs`), its interrupt lands on the submitter's queue's CPU
//! or the single queue's IRQ CPU; rq_affinity picks the CPU the
//! completion runs on (an IPI to the submitter when it is elsewhere), in the
//! hard interrupt with per-CPU queues or in BLOCK_SOFTIRQ with one; there
//! bio_endio() wakes the waiter or queues its work.

use crate::block::EndIo;
use crate::irq::IrqAction;
use crate::kthread::floor::KthreadFloor;
use crate::kthread::WorkDone;

impl KthreadFloor {
    /// Ev::BlkDone: the device finished `req`; raise the completion
    /// interrupt.
    #[inline(never)]
    pub(crate) fn blk_done(&mut self, req: usize) {
        let r = self.block.blk_done(req, self.k.now, &mut self.k.q);
        let cfg = &self.block.disks[r.disk].cfg;
        let (per_cpu, irq_cpu, aff) = (cfg.per_cpu_queues, cfg.irq_cpu, cfg.rq_affinity);
        let on_submitter = per_cpu || cfg.irq_on_submitter;
        let c = &self.k.cfg.costs;
        let (hard, done) = (c.irq_ns, c.blk_complete_ns);
        // Where the interrupt lands: the submitter's own queue (or reply
        // queue), or the single queue's IRQ CPU.
        let irq = if on_submitter { r.submit_cpu } else { irq_cpu };
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
            1 if self.k.topo.cpus_share_cache(irq, submit) => irq,
            _ => submit,
        }
    }

    /// The completion IPI reaches the submitting CPU: complete there
    /// (in the IPI's hard interrupt with per-CPU queues, else in
    /// BLOCK_SOFTIRQ).
    pub(crate) fn blk_complete_ipi(&mut self, _from: usize, req: usize) {
        let r = self.block.get(req);
        let (cpu, per_cpu) = (r.submit_cpu, self.block.disks[r.disk].cfg.per_cpu_queues);
        let c = &self.k.cfg.costs;
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
                    self.k.try_to_wake_up(w, cpu, false);
                }
            }
            EndIo::Work { wq, program } => {
                let done = WorkDone { wake: r.waiter, ..Default::default() };
                self.queue_work(wq, program, cpu, done, false);
            }
            EndIo::Writeback => self.block.wb_done.push((r.disk, r.bytes)),
        }
    }
}
