//! What the workload interpreter works on during one call: every room
//! below it (the scheduler, the kernel threads, the programs registry, the
//! block layer, memory) and the workload's own state (synchronisation
//! objects, channels, the ops' parameters, the benchmarks' tallies).
//! Borrowed from the simulation for the call (`Sim::wlc`); the run's own
//! state (its end, warnings, progress) is not reachable from here.
//!
//! `source` names the scenario in messages; an error that ends the run
//! (a program that never lets time pass) is left in `fatal`.

use crate::block::Block;
use crate::error::SimError;
use crate::kthread::ctx::{KthreadCtx, LendsKthreads};
use crate::kthread::Kthreads;
use crate::mm::ctx::MmCtx;
use crate::mm::Mm;
use crate::program::Programs;
use crate::sched::env::SchedEnv;
use crate::workload::Workload;

/// The interpreter's view of the simulation during one call.
pub struct WorkloadCtx<'a> {
    pub k: &'a mut SchedEnv,
    pub kthreads: &'a mut Kthreads,
    pub progs: &'a mut Programs,
    pub block: &'a mut Block,
    pub mm: &'a mut Mm,
    pub wl: &'a mut Workload,
    /// The scenario's file, for messages.
    pub source: &'a str,
    /// Where an error that ends the run is left (checked after the event).
    pub fatal: &'a mut Option<SimError>,
}

impl WorkloadCtx<'_> {
    /// Memory management's view, for a call into it.
    #[inline]
    pub fn mmc(&mut self) -> MmCtx<'_> {
        MmCtx {
            k: self.k,
            kthreads: self.kthreads,
            progs: self.progs,
            block: self.block,
            mm: self.mm,
            source: self.source,
            fatal: self.fatal,
        }
    }
}

impl LendsKthreads for WorkloadCtx<'_> {
    #[inline]
    fn kt(&mut self) -> KthreadCtx<'_> {
        KthreadCtx { k: self.k, kthreads: self.kthreads, progs: self.progs, block: self.block }
    }
}
