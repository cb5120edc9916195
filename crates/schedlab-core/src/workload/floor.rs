//! The workload interpreter's floor: the workload's own state
//! (synchronisation objects, channels, the ops' parameters, the
//! benchmarks' tallies) on top of memory management's floor, which holds
//! every room beneath it (the scheduler, the kernel threads, the programs
//! registry, the block layer). The run's own state (its end, warnings,
//! progress) is `Sim`'s and not reachable from here. Each floor owns the
//! ones beneath it by value (kthread/floor.rs says why).

use crate::kthread::floor::{KthreadFloor, LendsKthreads};
use crate::mm::floor::MmFloor;
use crate::workload::Workload;

/// The workload and every room beneath it.
pub struct WorkloadFloor {
    /// Memory management's floor, and through it the kernel threads' and
    /// the scheduler (`self.m.kt.k`).
    pub m: MmFloor,
    pub wl: Workload,
}

impl LendsKthreads for WorkloadFloor {
    #[inline]
    fn kt(&mut self) -> &mut KthreadFloor {
        &mut self.m.kt
    }
}
