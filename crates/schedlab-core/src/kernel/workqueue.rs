//! The workqueues a kernel defines (include/linux/workqueue.h): what
//! alloc_workqueue() is given, the system's own and a scenario's
//! `[[kernel.workqueue]]`. Configuration: the kworkers that serve them are
//! `kthread/workqueue.rs`.

// alloc_workqueue() flags (include/linux/workqueue.h).
/// Not bound to a CPU: served by the per-node unbound pools.
pub const WQ_UNBOUND: u32 = 1 << 1;
/// Freezable across suspend (no effect here).
pub const WQ_FREEZABLE: u32 = 1 << 2;
/// Has a rescuer for memory reclaim (no effect here: no memory pressure).
pub const WQ_MEM_RECLAIM: u32 = 1 << 3;
/// Served by the per-CPU highpri pools (workers at nice -20).
pub const WQ_HIGHPRI: u32 = 1 << 4;
/// Its work items do not take part in concurrency management.
pub const WQ_CPU_INTENSIVE: u32 = 1 << 5;

/// The unbound workqueue ktask's helpers run on (v4's ktask_wq).
pub const KTASK_WQ: &str = "ktask";

/// The flags by name, as `[[kernel.workqueue]]` writes them.
pub const WQ_FLAG_NAMES: &[(&str, u32)] = &[
    ("WQ_UNBOUND", WQ_UNBOUND),
    ("WQ_FREEZABLE", WQ_FREEZABLE),
    ("WQ_MEM_RECLAIM", WQ_MEM_RECLAIM),
    ("WQ_HIGHPRI", WQ_HIGHPRI),
    ("WQ_CPU_INTENSIVE", WQ_CPU_INTENSIVE),
];

/// struct workqueue_struct, reduced: what alloc_workqueue() was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkqueueDef {
    pub name: String,
    pub flags: u32,
    /// Nice of the unbound pools' workers (workqueue_attrs.nice; 0 unless
    /// set, as ktask's P0 sets it to 19). Bound workqueues use the CPU's
    /// normal (0) or highpri (-20) pool.
    pub nice: i32,
}

impl WorkqueueDef {
    pub fn new(name: &str, flags: u32) -> Self {
        WorkqueueDef { name: name.to_string(), flags, nice: 0 }
    }

    /// The workqueues every kernel has (kernel/workqueue.c
    /// workqueue_init_early, block/blk-core.c, mm/vmstat.c).
    pub fn system() -> Vec<WorkqueueDef> {
        vec![
            WorkqueueDef::new("events", 0),
            WorkqueueDef::new("events_highpri", WQ_HIGHPRI),
            WorkqueueDef::new("events_unbound", WQ_UNBOUND),
            WorkqueueDef::new("kblockd", WQ_MEM_RECLAIM | WQ_HIGHPRI),
            WorkqueueDef::new("mm_percpu_wq", WQ_MEM_RECLAIM),
        ]
    }
}
