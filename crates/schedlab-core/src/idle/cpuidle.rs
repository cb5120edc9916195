//! Models the cpuidle core (drivers/cpuidle/cpuidle.c) as the idle loop
//! (kernel/sched/idle.c cpuidle_idle_call) drives it: when a CPU goes idle
//! the governor picks a state from what it knows then (the time to the next
//! timer, the tick, the CPU's tasks in iowait, its history); when something
//! wakes the CPU it leaves the state, paying its exit latency, and the
//! governor learns how long the period really was.
//!
//! The governor's choice is made lazily, when the period ends, from what
//! was recorded when it began: the same choice, and a period that ends at
//! the instant it began (a wakeup already pending when the CPU switched to
//! its idle task: do_idle() sees need_resched and never calls cpuidle)
//! costs nothing and teaches the governor nothing.
//!
//! A period in which the governor kept the tick and the tick came first is
//! replayed tick by tick: each tick wakes the CPU, the governor learns of a
//! tick wakeup and chooses again (usually to stop the tick).
//! Deviation: those idle ticks run nothing else (the model's idle CPUs are
//! tickless; their balancing is done for them by the ILB), and their own
//! exit latencies are not charged to anyone.

use crate::idle::menu::IdleEntry;
use crate::idle::{Cpuidle, IdleEntryAt};

/// The next timer of a CPU with no hrtimer armed. Deviation: the kernel's
/// own timers (watchdogs, writeback, the clocksource watchdog, ...) are not
/// modelled;
/// an idle server CPU sees one within about a second. Plucked from the air:
/// it only needs to be far beyond every state's target residency.
pub const NO_TIMER_NS: u64 = 1_000_000_000;

/// At most this many tick wakeups are replayed in one idle period; after
/// them the tick is taken as stopped (the governor stops it long before).
const MAX_TICK_REPLAYS: u32 = 64;

/// How a CPU left its idle state: the state's exit latency and whether it
/// was polling (a wakeup needs no IPI then: TIF_POLLING_NRFLAG).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdleExit {
    pub exit_latency_ns: u64,
    pub polling: bool,
}

impl Cpuidle {
    /// CPU `cpu` starts an idle period at `now`, its next timer at
    /// `next_timer_at`, `nr_iowaiters` tasks of it in iowait: after
    /// switching to its idle task (`after_task`: the tick was running) or
    /// after an interrupt that woke nothing on it (the tick stays as the
    /// last period left it).
    #[inline]
    pub fn enter(&mut self, cpu: usize, now: u64, next_timer_at: u64, nr_iowaiters: u32, after_task: bool) {
        let dev = &mut self.devs[cpu];
        if after_task {
            dev.tick_stopped = false;
        }
        dev.entry = Some(IdleEntryAt { at: now, next_timer_at, nr_iowaiters });
    }

    /// CPU `cpu` leaves its idle period at `now` (the tick every `tick_ns`).
    /// None if it was not in one (no driver, already awake, or an interrupt
    /// handler has it).
    pub fn exit(&mut self, cpu: usize, now: u64, tick_ns: u64) -> Option<IdleExit> {
        let entry = self.devs.get_mut(cpu)?.entry.take()?;
        if entry.at == now {
            // Woken before it got as far as cpuidle: still polling.
            return Some(IdleExit { exit_latency_ns: 0, polling: true });
        }
        let table = self.table.expect("a device without a table");
        let states = table.states();
        let tick = tick_ns;
        let dev = &mut self.devs[cpu];
        let mut at = entry.at;
        let tick_stopped = dev.tick_stopped;
        let mut replays = 0;
        loop {
            let next_tick_at = (at / tick + 1) * tick;
            let e = IdleEntry {
                next_timer_ns: entry.next_timer_at.saturating_sub(at),
                delta_tick_ns: next_tick_at - at,
                tick_stopped,
                nr_iowaiters: entry.nr_iowaiters,
                tick_ns: tick,
            };
            let choice = dev.menu.select(states, e);
            dev.usage[choice.idx] += 1;
            let s = states[choice.idx];
            let tick_first = !choice.stop_tick && next_tick_at < now && next_tick_at < entry.next_timer_at;
            if tick_first && replays < MAX_TICK_REPLAYS {
                replays += 1;
                dev.time_ns[choice.idx] += next_tick_at - at;
                dev.menu.reflect(states, next_tick_at - at + s.exit_latency_ns, true, tick);
                at = next_tick_at;
                continue;
            }
            dev.time_ns[choice.idx] += now - at;
            dev.menu.reflect(states, now - at + s.exit_latency_ns, false, tick);
            dev.tick_stopped = choice.stop_tick || tick_first;
            return Some(IdleExit { exit_latency_ns: s.exit_latency_ns, polling: s.polling });
        }
    }
}
