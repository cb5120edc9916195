//! Models drivers/cpuidle/: the idle states a CPU can enter (the
//! intel_idle tables, `states.rs`), the menu governor that picks one for
//! each idle period (`menu.rs`), and the cpuidle core that runs the
//! governor when a CPU goes idle and pays the chosen state's exit latency
//! when it is woken (`cpuidle.rs`). docs/notes/seed-001-research.md §3 has
//! the sources.
//!
//! A machine without a table (`machine.cpuidle = "none"`, the default of
//! the presets that model no particular CPU) has no cpuidle driver: its
//! idle loop halts, and a wakeup pays the flat `kernel.costs.idle_exit`.

pub mod cpuidle;
pub mod menu;

pub use crate::machine::idle_states::{IdleState, IdleTable};
pub use menu::Menu;

/// An idle period in progress on a CPU: what the governor will know about
/// it. The governor runs when the period ends (see cpuidle.rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdleEntryAt {
    /// When the CPU went idle.
    pub at: u64,
    /// When its next timer fires (absolute, ns).
    pub next_timer_at: u64,
    /// nr_iowait_cpu() when it went idle.
    pub nr_iowaiters: u32,
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
}

/// The machine's cpuidle driver: its state table and one device per CPU;
/// both empty without a driver.
#[derive(Debug, Clone, Default)]
pub struct Cpuidle {
    pub table: Option<IdleTable>,
    pub devs: Vec<CpuidleDevice>,
}

impl Cpuidle {
    pub fn new(table: Option<IdleTable>, nr_cpus: usize) -> Self {
        let Some(t) = table else { return Cpuidle::default() };
        let n = t.states().len();
        let dev = CpuidleDevice { usage: vec![0; n], time_ns: vec![0; n], ..Default::default() };
        Cpuidle { table, devs: vec![dev; nr_cpus] }
    }

    #[inline]
    pub fn enabled(&self) -> bool {
        self.table.is_some()
    }
}
