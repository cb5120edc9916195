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
use crate::idle::IdleEntryAt;
use crate::sched::sched::{CpuWindow, WindowKind};
use crate::sched::task::TaskId;
use crate::sim::Sim;

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

impl Sim {
    /// The CPU starts an idle period: after switching to its idle task
    /// (`after_task`: the tick was running) or after an interrupt that woke
    /// nothing on it (the tick stays as the last period left it).
    #[inline(never)]
    pub fn cpuidle_enter(&mut self, cpu: usize, after_task: bool) {
        if !self.cpuidle.enabled() {
            return;
        }
        let next_timer_at = self.next_timer_at(cpu);
        let nr_iowaiters = self.rqs[cpu].nr_iowait;
        let dev = &mut self.cpuidle.devs[cpu];
        if after_task {
            dev.tick_stopped = false;
        }
        dev.entry = Some(IdleEntryAt { at: self.now, next_timer_at, nr_iowaiters });
    }

    /// tick_nohz_get_sleep_length(): when the CPU's next timer fires, from
    /// the sleep hrtimers armed on it.
    fn next_timer_at(&self, cpu: usize) -> u64 {
        let far = self.now.saturating_add(NO_TIMER_NS);
        self.rqs[cpu].hrtimers.iter().map(|&(at, _)| at).min().map_or(far, |t| t.min(far))
    }

    /// The CPU leaves its idle period now. None if it was not in one (no
    /// driver, already awake, or an interrupt handler has it).
    pub fn cpuidle_exit(&mut self, cpu: usize) -> Option<IdleExit> {
        let entry = self.cpuidle.devs.get_mut(cpu)?.entry.take()?;
        if entry.at == self.now {
            // Woken before it got as far as cpuidle: still polling.
            return Some(IdleExit { exit_latency_ns: 0, polling: true });
        }
        let table = self.cpuidle.table.expect("a device without a table");
        let states = table.states();
        let tick = self.cfg.tick_ns;
        let now = self.now;
        let dev = &mut self.cpuidle.devs[cpu];
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

    /// A task is being woken onto `cpu` (from `from`): with a cpuidle
    /// driver, an idle CPU pays its state's exit latency and, unless it was
    /// polling, the IPI: the CPU runs its next task only after both
    /// (`Rq::busy_until`); a busy remote CPU pays the IPI in the wakee's
    /// debt, as without a driver.
    #[inline(never)]
    pub(crate) fn wakeup_idle_cost_cpuidle(&mut self, tid: TaskId, from: usize, cpu: usize) {
        let ipi = self.cfg.costs.wakeup_ipi_ns;
        match self.cpuidle_exit(cpu) {
            Some(x) => {
                let wake = x.exit_latency_ns + if cpu != from && !x.polling { ipi } else { 0 };
                self.idle_exit_window(cpu, wake);
            }
            None if cpu != from && self.rqs[cpu].curr.is_some() => {
                let t = &mut self.tasks[tid];
                t.cs_debt += ipi;
                t.stats.wake_cost += ipi;
            }
            None => {}
        }
    }

    /// The idle CPU switches to a task for another reason than a wakeup
    /// (a task pulled onto it, a new task): it leaves its idle state.
    #[inline(never)]
    pub(crate) fn cpuidle_exit_to(&mut self, cpu: usize) {
        if let Some(x) = self.cpuidle_exit(cpu) {
            self.idle_exit_window(cpu, x.exit_latency_ns);
        }
    }

    /// The CPU spends `wake` ns coming out of its idle state: idle time,
    /// after which it may run a task.
    fn idle_exit_window(&mut self, cpu: usize, wake: u64) {
        if wake == 0 {
            return;
        }
        let end = self.now + wake;
        self.rqs[cpu].windows.push(CpuWindow { start: self.now, end, kind: WindowKind::Idle });
        self.rqs[cpu].busy_until = self.rqs[cpu].busy_until.max(end);
    }
}
