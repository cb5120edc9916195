//! Task programs and their interpreter state.

pub mod interp;
pub mod program;
pub mod rt_migrate_test;

pub use program::{Dist, Op, Program};

use crate::sched::task::TaskId;

/// State of a barrier or event.
#[derive(Debug, Clone, Default)]
pub struct SyncObj {
    pub participants: usize,
    pub arrived: Vec<TaskId>,
    pub pending: u64,
    pub waiters: Vec<TaskId>,
}
