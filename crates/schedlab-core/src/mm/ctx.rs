//! What memory management works on during one call: the scheduler (tasks
//! block in reclaim and kswapd is woken), the kernel threads (a blocking
//! worker tells its pool), the programs registry (kswapd's group), the
//! block layer (reads submit IO), and mm's own state. Borrowed from the
//! simulation for the call (`Sim::mmc`), so nothing above this room (the
//! workload) is reachable from it.
//!
//! `source` names the scenario in messages; an out-of-memory the model
//! cannot go on from is left in `fatal` and ends the run after the event.

use crate::block::Block;
use crate::error::SimError;
use crate::kthread::ctx::{KthreadCtx, LendsKthreads};
use crate::kthread::Kthreads;
use crate::mm::Mm;
use crate::program::Programs;
use crate::sched::env::SchedEnv;

/// Memory management's view of the simulation during one call.
pub struct MmCtx<'a> {
    pub k: &'a mut SchedEnv,
    pub kthreads: &'a mut Kthreads,
    pub progs: &'a mut Programs,
    pub block: &'a mut Block,
    pub mm: &'a mut Mm,
    /// The scenario's file, for messages.
    pub source: &'a str,
    /// Where an error that ends the run is left (checked after the event).
    pub fatal: &'a mut Option<SimError>,
}

impl LendsKthreads for MmCtx<'_> {
    #[inline]
    fn kt(&mut self) -> KthreadCtx<'_> {
        KthreadCtx { k: self.k, kthreads: self.kthreads, progs: self.progs, block: self.block }
    }
}
