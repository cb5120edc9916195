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
//! costs nothing and teaches the governor nothing. With the power:cpu_idle
//! tracepoint on, the choices and tick replays are made as simulated time
//! passes them instead (`advance`, before the events that follow), so that
//! the transitions are written in time order; the per-state counts are
//! credited at the period's end either way, and the run is the same.
//!
//! A period in which the governor kept the tick and the tick came first is
//! replayed tick by tick: each tick wakes the CPU, the governor learns of a
//! tick wakeup and chooses again (usually to stop the tick).
//! Deviation: those idle ticks run nothing else (the model's idle CPUs are
//! tickless; their balancing is done for them by the ILB), and their own
//! exit latencies are not charged to anyone.

use crate::idle::menu::{Choice, IdleEntry};
use crate::idle::{Cpuidle, IdleEntryAt, IdleSeg, IdleTable};

/// The next timer of a CPU with no hrtimer armed. Deviation: the kernel's
/// own timers (watchdogs, writeback, the clocksource watchdog, ...) are not
/// modelled;
/// an idle server CPU sees one within about a second. Plucked from the air:
/// it only needs to be far beyond every state's target residency.
pub const NO_TIMER_NS: u64 = 1_000_000_000;

/// At most this many tick wakeups are replayed in one idle period; after
/// them the tick is taken as stopped (the governor stops it long before).
const MAX_TICK_REPLAYS: u16 = 64;

/// How a CPU left its idle state: the state's exit latency and whether it
/// was polling (a wakeup needs no IPI then: TIF_POLLING_NRFLAG).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdleExit {
    pub exit_latency_ns: u64,
    pub polling: bool,
}

/// haltpoll_select() (drivers/cpuidle/governors/haltpoll.c): POLL, with
/// the tick kept, under a PM-QoS request of 0; else HLT with the tick
/// stopped, the guest's poll window being closed.
///
/// Deviation: the adaptive poll window (poll_limit_ns, grown from
/// guest_halt_poll_ns by halt_poll_ns_grow) is not modelled: it is taken as
/// 0, as `haltpoll.guest_halt_poll_ns=0` sets it on this project's KVM host.
fn haltpoll_select(latency_req_ns: Option<u64>) -> Choice {
    if latency_req_ns == Some(0) {
        Choice { idx: 0, stop_tick: false, predicted_ns: 0 }
    } else {
        Choice { idx: 1, stop_tick: true, predicted_ns: 0 }
    }
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
        dev.entry = Some(IdleEntryAt { at: now, next_timer_at, nr_iowaiters, seg: None });
        if self.tracing {
            self.next_action_at = self.next_action_at.min(now);
        }
    }

    /// The governor picks a state for the stretch of `cpu`'s idle period
    /// that begins at `at` (the period's start or a tick wakeup).
    #[inline]
    fn select_at(&mut self, cpu: usize, entry: &IdleEntryAt, at: u64, tick: u64) -> Choice {
        let table = self.table.expect("a device without a table");
        let next_tick_at = (at / tick + 1) * tick;
        let e = IdleEntry {
            next_timer_ns: entry.next_timer_at.saturating_sub(at),
            delta_tick_ns: next_tick_at - at,
            tick_stopped: self.devs[cpu].tick_stopped,
            nr_iowaiters: entry.nr_iowaiters,
            tick_ns: tick,
        };
        let choice = if table == IdleTable::Haltpoll {
            haltpoll_select(self.latency_req_ns)
        } else {
            self.devs[cpu].menu.select(table.states(), e, self.latency_req_ns)
        };
        if self.tracing {
            self.traced.push((at, cpu, choice.idx as u32));
        }
        choice
    }

    /// Bring `cpu`'s idle period up to `until`: the governor's first choice
    /// once time has passed since it began, then each tick before `until`
    /// that the chosen state kept and that found the CPU still idle — the
    /// tick wakes it, the governor learns of a tick wakeup and chooses
    /// again. What `exit` would do at `until`, minus the end itself. Returns
    /// when the period next needs this (u64::MAX: not before it ends).
    pub fn advance(&mut self, cpu: usize, until: u64, tick: u64) -> u64 {
        let Some(mut entry) = self.devs.get_mut(cpu).and_then(|d| d.entry.take()) else { return u64::MAX };
        let next = self.advance_entry(cpu, &mut entry, until, tick);
        self.devs[cpu].entry = Some(entry);
        next
    }

    /// `advance` on the period taken out of its device.
    #[inline]
    fn advance_entry(&mut self, cpu: usize, entry: &mut IdleEntryAt, until: u64, tick: u64) -> u64 {
        if entry.at >= until {
            return entry.at;
        }
        let seg = match entry.seg {
            Some(seg) => seg,
            None => {
                let c = self.select_at(cpu, entry, entry.at, tick);
                let seg = IdleSeg { at: entry.at, idx: c.idx as u16, stop_tick: c.stop_tick, replays: 0 };
                entry.seg = Some(seg);
                seg
            }
        };
        if seg.stop_tick {
            return u64::MAX;
        }
        self.replay_ticks(cpu, entry, until, tick)
    }

    /// The tick wakeups before `until` of a period whose state kept the
    /// tick (see `advance`).
    #[inline(never)]
    fn replay_ticks(&mut self, cpu: usize, entry: &mut IdleEntryAt, until: u64, tick: u64) -> u64 {
        let states = self.table.expect("a device without a table").states();
        loop {
            let seg = entry.seg.expect("chosen before");
            if seg.stop_tick || seg.replays >= MAX_TICK_REPLAYS {
                return u64::MAX;
            }
            let next_tick_at = (seg.at / tick + 1) * tick;
            if next_tick_at >= entry.next_timer_at {
                return u64::MAX;
            }
            if next_tick_at >= until {
                return next_tick_at;
            }
            // Only a polling state keeps the tick under haltpoll, so the
            // host's halt polling never applies here.
            let idx = seg.idx as usize;
            let s = states[idx];
            let dev = &mut self.devs[cpu];
            dev.replayed_usage[idx] += 1;
            dev.replayed_ns[idx] += next_tick_at - seg.at;
            dev.menu.reflect(states, next_tick_at - seg.at + s.exit_latency_ns, true, tick);
            if self.tracing {
                self.traced.push((next_tick_at, cpu, PWR_EVENT_EXIT));
            }
            let c = self.select_at(cpu, entry, next_tick_at, tick);
            entry.seg =
                Some(IdleSeg { at: next_tick_at, idx: c.idx as u16, stop_tick: c.stop_tick, replays: seg.replays + 1 });
        }
    }

    /// With the tracepoint on: bring every idle period up to `until`
    /// (before the events at `until` run).
    pub fn advance_all(&mut self, until: u64, tick: u64) {
        if until <= self.next_action_at {
            return;
        }
        let mut next = u64::MAX;
        for cpu in 0..self.devs.len() {
            next = next.min(self.advance(cpu, until, tick));
        }
        self.next_action_at = next;
    }

    /// CPU `cpu` leaves its idle period at `now` (the tick every `tick_ns`).
    /// None if it was not in one (no driver, already awake, or an interrupt
    /// handler has it).
    pub fn exit(&mut self, cpu: usize, now: u64, tick_ns: u64) -> Option<IdleExit> {
        let mut entry = self.devs.get_mut(cpu)?.entry.take()?;
        if entry.at == now {
            // Woken before it got as far as cpuidle: still polling.
            return Some(IdleExit { exit_latency_ns: 0, polling: true });
        }
        self.advance_entry(cpu, &mut entry, now, tick_ns);
        let table = self.table.expect("a device without a table");
        let dev = &mut self.devs[cpu];
        let seg = entry.seg.expect("advanced above");
        let idx = seg.idx as usize;
        let mut s = table.states()[idx];
        if table == IdleTable::Haltpoll && !s.polling {
            // The host's halt polling catches a short halt.
            s.exit_latency_ns = if now - entry.at < self.halt_poll_ns { 0 } else { self.halt_exit_ns };
        }
        let tick_first = !seg.stop_tick && {
            let next_tick_at = (seg.at / tick_ns + 1) * tick_ns;
            next_tick_at < now && next_tick_at < entry.next_timer_at
        };
        if seg.replays > 0 {
            for i in 0..dev.usage.len() {
                dev.usage[i] += std::mem::take(&mut dev.replayed_usage[i]);
                dev.time_ns[i] += std::mem::take(&mut dev.replayed_ns[i]);
            }
        }
        dev.usage[idx] += 1;
        dev.time_ns[idx] += now - seg.at;
        dev.menu.reflect(table.states(), now - seg.at + s.exit_latency_ns, false, tick_ns);
        dev.tick_stopped = seg.stop_tick || tick_first;
        if self.tracing {
            self.traced.push((now, cpu, PWR_EVENT_EXIT));
        }
        Some(IdleExit { exit_latency_ns: s.exit_latency_ns, polling: s.polling })
    }
}

/// The cpu_idle state of a CPU leaving idle ((u32)-1, PWR_EVENT_EXIT).
pub const PWR_EVENT_EXIT: u32 = u32::MAX;

#[cfg(test)]
mod tests {
    use super::*;

    const TICK: u64 = 4_000_000;

    /// One idle period of `len` ns on CPU 0 of a haltpoll guest.
    fn period(c: &mut Cpuidle, len: u64) -> IdleExit {
        c.enter(0, 1_000, NO_TIMER_NS, 0, true);
        c.exit(0, 1_000 + len, TICK).expect("in an idle period")
    }

    #[test]
    fn a_haltpoll_guest_halts_unless_a_request_of_0_keeps_it_polling() {
        // No request: HLT, whose exit costs what the host takes (the
        // idle_exit figure), not the 1 us the driver declares.
        let mut c = Cpuidle::new(Some(IdleTable::Haltpoll), 2, None, (40_000, 300_000));
        assert_eq!(period(&mut c, 1_000_000), IdleExit { exit_latency_ns: 40_000, polling: false });
        assert_eq!(c.devs[0].usage, vec![0, 1]);
        // A halt shorter than the host's polling window costs nothing.
        assert_eq!(period(&mut c, 200_000), IdleExit { exit_latency_ns: 0, polling: false });
        // cyclictest's request: POLL, nothing to pay and no IPI needed.
        let mut c = Cpuidle::new(Some(IdleTable::Haltpoll), 2, Some(0), (40_000, 300_000));
        assert_eq!(period(&mut c, 1_000_000), IdleExit { exit_latency_ns: 0, polling: true });
        assert_eq!(c.devs[0].usage, vec![1, 0]);
    }
}
