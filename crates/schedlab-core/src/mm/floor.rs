//! Memory management's floor: mm's own state on top of the kernel
//! threads' floor (the scheduler: tasks block in reclaim and kswapd is
//! woken; the kernel threads: a blocking worker tells its pool; the
//! programs registry: kswapd's group; the block layer: reads submit IO).
//! Nothing above this room (the workload) is reachable from it. Each floor
//! owns the ones beneath it by value (kthread/floor.rs says why).
//!
//! `source` names the scenario in messages; an out-of-memory the model
//! cannot go on from is left in `fatal` and ends the run after the event.

use crate::error::SimError;
use crate::kthread::floor::{KthreadFloor, LendsKthreads};
use crate::mm::Mm;

/// Memory management and the rooms beneath it.
pub struct MmFloor {
    /// The kernel threads' floor: the scheduler, the workqueues, the
    /// programs registry, the block layer.
    pub kt: KthreadFloor,
    pub mm: Mm,
    /// The scenario's file, for messages.
    pub source: String,
    /// Where an error that ends the run is left (checked after the event).
    pub fatal: Option<SimError>,
}

impl LendsKthreads for MmFloor {
    #[inline]
    fn kt(&mut self) -> &mut KthreadFloor {
        &mut self.kt
    }
}
