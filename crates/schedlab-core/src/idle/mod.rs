//! Models drivers/cpuidle/: the idle states a CPU can enter (the
//! intel_idle tables, `states.rs`) and the menu governor that picks one for
//! each idle period (`menu.rs`). docs/notes/seed-001-research.md §3 has the
//! sources.
//!
//! Not yet wired into the run: today a wakeup onto an idle CPU pays the
//! flat `kernel.costs.idle_exit`. Issue 12 replaces that with the exit
//! latency of the state the governor chose.

pub mod menu;
pub mod states;

pub use menu::Menu;
pub use states::{IdleState, IdleTable};
