//! The scheduler and what it works on: its own state (`Sched`: the tasks,
//! the runqueues, the root domain) beside the parts of the machine it reads
//! or drives (the configuration, the topology, the clock and event queue,
//! cpuidle, the trace). The simulation owns one
//! (`Sim::k`); nothing of the rooms above the scheduler is in it.
//!
//! Every function of `kernel/sched/` is a method on `SchedEnv`, and the
//! class table's hooks (`sched/class.rs`) take it, so the scheduler names
//! what it uses and nothing above it (kernel threads, memory, the
//! workload) is reachable from here. The rooms above call down through
//! `sim.w.m.kt.k`; the points where the kernel's scheduler calls up (the
//! workqueue's concurrency hooks in schedule(), the timer softirq on the
//! tick, the task's next op once it is picked) are stitched in by
//! `sim/schedule.rs`, in the kernel's order.
//!
//! The parts are held by value, not borrowed per call: the scheduler's hot
//! paths then reach a runqueue with one load, as they did when every part
//! was a field of the simulation (a struct of references cost 5–9 % more
//! instructions per event, measured with cachegrind on the bench cases).

use crate::cpufreq::CpuFreq;
use crate::engine::event::Ev;
use crate::engine::queue::EventQueue;
use crate::engine::rng::Rng;
use crate::idle::Cpuidle;
use crate::kernel::{KernelConfig, ScaledTunables};
use crate::machine::Machine;
use crate::membw::MemBw;
use crate::sched::sched::Sched;
use crate::sched::topology::SchedTopology;
use crate::trace::Trace;

/// The scheduler and the parts of the simulation it uses.
pub struct SchedEnv {
    /// The kernel's configuration (version -> mechanisms, features, costs).
    pub cfg: KernelConfig,
    pub machine: Machine,
    /// The sched domains and groups (read-only after boot).
    pub topo: SchedTopology,
    /// The fair tunables after boot-time scaling.
    pub tun: ScaledTunables,
    /// The run's seed: every task's random stream forks from it.
    pub seed: u64,
    /// Virtual time, ns (the engine advances it between events).
    pub now: u64,
    pub q: EventQueue<Ev>,
    /// sched_rng(): NI_RANDOM's dice. Deviation: the kernel keeps a
    /// prandom state per CPU; one seeded stream serves every CPU here.
    pub rng: Rng,
    /// The scheduler's state: the tasks, the runqueues and what the
    /// balancer and the RT class keep beside them (sched/sched.rs).
    pub sched: Sched,
    /// The cpuidle driver and its per-CPU devices (idle/), which the idle
    /// loop enters and leaves (sched/idle.rs).
    pub cpuidle: Cpuidle,
    /// The CPUs' frequencies (cpufreq/): what speed each runs at, which
    /// the governor changes at the scheduler's cpufreq_update_util() calls
    /// (sched/cpufreq.rs).
    pub cpufreq: CpuFreq,
    /// The nodes' memory bandwidth (membw/): the stall of memory-bound
    /// work on a saturated node (sched/membw.rs).
    pub membw: MemBw,
    /// Pressure stall information (sched/psi.rs; `kernel.psi`).
    pub psi: crate::sched::psi_group::Psi,
    /// When the measurement starts (the end of the warm-up): a task's
    /// wakeup counters start then.
    pub warmup: u64,
    pub trace: Trace,
}
