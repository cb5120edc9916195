//! Task programs and their interpreter state.

pub mod compile;
pub mod interp;
pub mod program;
pub mod rt_migrate_test;

pub use program::{Dist, Op, Program};

use crate::cpumask::CpuMask;
use crate::sched::prio::Policy;
use crate::sched::task::TaskId;

/// State of a barrier or event.
#[derive(Debug, Clone, Default)]
pub struct SyncObj {
    pub participants: usize,
    pub arrived: Vec<TaskId>,
    pub pending: u64,
    pub waiters: Vec<TaskId>,
}

/// A group of identical tasks.
#[derive(Debug, Clone)]
pub struct TaskGroup {
    pub name: String,
    pub count: usize,
    pub policy: Policy,
    pub nice: i32,
    pub rt_priority: u32,
    pub cpus: CpuMask,
    pub start: u64,
    pub kthread: bool,
    pub program: Program,
}
