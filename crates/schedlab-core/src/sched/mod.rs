//! Models kernel/sched/: the core, the scheduling classes and the topology.

pub mod class;
pub mod core;
pub mod cpufreq;
pub mod cpupri;
pub mod cpustat;
pub mod cputime;
pub mod delays;
pub mod env;
pub mod fair;
pub mod fork;
pub mod idle;
pub mod membw;
pub mod op_timer;
pub mod pelt;
pub mod rt;
pub mod rt_legacy;
#[allow(clippy::module_inception)] // kernel/sched/sched.h
pub mod sched;
pub mod sd_build;
pub mod sd_flags;
pub mod sd_init;
pub mod stop_task;
pub mod syscalls;
pub mod task;
pub mod topology;
pub mod wasted;
