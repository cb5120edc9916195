//! Models drivers/cpuidle/: the idle states a CPU can enter (the
//! intel_idle tables and a KVM guest's haltpoll driver,
//! machine/idle_states.rs), the menu governor that picks one for each idle
//! period (`menu.rs`; the haltpoll driver's own governor is in
//! `cpuidle.rs`), and the cpuidle core that runs the governor when a CPU
//! goes idle and pays the chosen state's exit latency when it is woken
//! (`cpuidle.rs`). docs/notes/seed-001-research.md §3 has the sources.
//! A PM-QoS CPU latency request (`kernel.cpu_dma_latency`) limits the
//! states both governors may pick; without a driver it has no effect, as
//! in the kernel (the idle loop's default_idle_call halts regardless).
//!
//! A machine without a table (`machine.cpuidle = "none"`, the default of
//! the presets that model no particular CPU) has no cpuidle driver: its
//! idle loop halts, and a wakeup pays the flat `kernel.costs.idle_exit`.

pub mod cpuidle;
pub mod menu;

pub use crate::machine::idle_states::{IdleState, IdleTable};
pub use menu::Menu;

/// An idle period in progress on a CPU: what the governor will know about
/// it. The governor runs when the period ends, or earlier when a trace
/// needs its choice (see cpuidle.rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdleEntryAt {
    /// When the CPU went idle.
    pub at: u64,
    /// When its next timer fires (absolute, ns).
    pub next_timer_at: u64,
    /// nr_iowait_cpu() when it went idle.
    pub nr_iowaiters: u32,
    /// The governor's choice for the stretch of the period that began at
    /// `seg.at` (the period's start, or the last tick that woke it), once
    /// made.
    pub seg: Option<IdleSeg>,
}

/// One stretch of an idle period in one state: when it began, the
/// governor's choice (the state and whether it stopped the tick) and the
/// tick wakeups replayed before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdleSeg {
    pub at: u64,
    pub idx: u16,
    pub stop_tick: bool,
    pub replays: u16,
}

/// struct cpuidle_device: one CPU's governor, its idle period in progress
/// and its per-state statistics (sysfs `stateN/usage` and `stateN/time`).
#[derive(Debug, Clone, Default)]
pub struct CpuidleDevice {
    pub menu: Menu,
    pub entry: Option<IdleEntryAt>,
    /// The last idle period stopped the tick and the CPU has run no task
    /// since (only interrupts): the next period starts with it stopped.
    pub tick_stopped: bool,
    /// Times each state was entered.
    pub usage: Vec<u64>,
    /// Time spent in each state, ns (credited when the period ends).
    pub time_ns: Vec<u64>,
    /// The stretches of the period in progress before its last tick
    /// wakeup, per state: entries and ns, credited to `usage` and
    /// `time_ns` when the period ends (as when replayed at its end).
    pub replayed_usage: Vec<u64>,
    pub replayed_ns: Vec<u64>,
}

/// The machine's cpuidle driver: its state table and one device per CPU;
/// both empty without a driver.
#[derive(Debug, Clone, Default)]
pub struct Cpuidle {
    pub table: Option<IdleTable>,
    pub devs: Vec<CpuidleDevice>,
    /// The CPU latency PM-QoS request in force (`kernel.cpu_dma_latency`:
    /// a process holding /dev/cpu_dma_latency open, as cyclictest does),
    /// ns; None: no request (PM_QOS_CPU_LATENCY_DEFAULT_VALUE, no limit).
    /// Deviation: one request for the whole run and every CPU; the kernel's
    /// requests come and go with the file and can be per device.
    pub latency_req_ns: Option<u64>,
    /// What leaving the haltpoll driver's HLT state costs
    /// (`kernel.costs.idle_exit`; see idle_states.rs `HALTPOLL`).
    pub halt_exit_ns: u64,
    /// A halt woken within this long costs nothing to leave: the host
    /// polls for the vCPU's wakeup before it deschedules its thread
    /// (`kernel.costs.halt_poll`, KVM's halt_poll_ns).
    pub halt_poll_ns: u64,
    /// The power:cpu_idle tracepoint is on: the choices are made as the
    /// periods go (`advance`), and the transitions wait in `traced`.
    pub tracing: bool,
    /// (time, CPU, state) transitions for power:cpu_idle, oldest first;
    /// u32::MAX is PWR_EVENT_EXIT.
    pub traced: Vec<(u64, usize, u32)>,
    /// No idle period needs its choice or a tick replayed before this time
    /// (with `tracing`).
    pub next_action_at: u64,
}

impl Cpuidle {
    /// The driver of `table` on `nr_cpus` CPUs, under the PM-QoS request
    /// `latency_req_ns`; `halt` is what leaving a KVM guest's HLT costs and
    /// the host's halt-polling window (`kernel.costs.idle_exit`,
    /// `kernel.costs.halt_poll`).
    pub fn new(table: Option<IdleTable>, nr_cpus: usize, latency_req_ns: Option<u64>, halt: (u64, u64)) -> Self {
        let Some(t) = table else { return Cpuidle::default() };
        let n = t.states().len();
        let dev = CpuidleDevice {
            usage: vec![0; n],
            time_ns: vec![0; n],
            replayed_usage: vec![0; n],
            replayed_ns: vec![0; n],
            ..Default::default()
        };
        Cpuidle {
            table,
            devs: vec![dev; nr_cpus],
            latency_req_ns,
            halt_exit_ns: halt.0,
            halt_poll_ns: halt.1,
            tracing: false,
            traced: Vec::new(),
            next_action_at: u64::MAX,
        }
    }

    #[inline]
    pub fn enabled(&self) -> bool {
        self.table.is_some()
    }

    /// With a driver and a trace: the power:cpu_idle tracepoint on.
    pub fn traced_if(mut self, trace: bool) -> Self {
        self.tracing = trace && self.enabled();
        self
    }
}
