//! Task programs and their interpreter state.

pub mod cgroup;
pub mod channel;
pub mod compile;
pub(crate) mod compile_ops;
pub mod cpuset;
pub mod dbench;
pub mod floor;
pub mod interp;
pub mod rt_migrate_test;
pub mod start;

pub use crate::program::{IoOp, Op, Program, QueueWorkOp, TaskGroup};

use crate::sched::task::TaskId;

/// A `lock`/`unlock` mutex is an event whose name starts with this: a
/// semaphore that starts at 1, so `lock` is a wait and `unlock` a signal.
///
/// Deviation: the mutex hands itself to the first waiter (FIFO), as a
/// futex-based pthread mutex does not promise: there a woken waiter
/// competes again, and a running locker may take it first; no priority
/// inheritance (rt-app's pi_enabled).
pub const MUTEX_PREFIX: &str = "mutex ";

/// An event's count when the run starts: 1 for a mutex, 0 otherwise.
pub fn initial_pending(name: &str) -> u64 {
    u64::from(name.starts_with(MUTEX_PREFIX))
}

/// State of a barrier or event.
#[derive(Debug, Clone, Default)]
pub struct SyncObj {
    pub participants: usize,
    pub arrived: Vec<TaskId>,
    pub pending: u64,
    pub waiters: Vec<TaskId>,
}

/// The workload's state beside the tasks: the synchronisation objects, the
/// channels, the ops' parameters and the benchmarks' tallies (the templates
/// and report groups are `program::Programs`).
#[derive(Debug, Clone, Default)]
pub struct Workload {
    /// Barriers, by index.
    pub barriers: Vec<SyncObj>,
    /// wait/signal events, by index.
    pub events: Vec<SyncObj>,
    /// Pipes and sockets (`[[channel]]`): every instance, by index.
    pub channels: Vec<channel::Channel>,
    /// Their names, for messages.
    pub barrier_names: Vec<String>,
    pub event_names: Vec<String>,
    /// The `io` and `queue_work` ops' parameters (Op::Io and Op::QueueWork
    /// index them).
    pub io_ops: Vec<IoOp>,
    pub queue_works: Vec<QueueWorkOp>,
    /// `[dbench]`: the benchmark's state (dbench.rs).
    pub dbench: dbench::DbenchState,
    /// `[rt_migrate_test]`: the tool's state (rt_migrate_test.rs).
    pub rtmt: Option<Box<rt_migrate_test::RtMigrateTest>>,
}
