//! Models the menu governor (drivers/cpuidle/governors/menu.c, the 5.6
//! form with nanosecond fields; docs/notes/seed-001-research.md §3.2).
//!
//! For each idle period it predicts the idle length from the time to the
//! next timer, scaled by a learned correction factor per bucket, and caps
//! it by the typical interval of the last eight idle periods. It then picks
//! the deepest state whose target residency fits the prediction and whose
//! exit latency fits the latency limit. The limit is the PM-QoS request,
//! tightened by the "performance multiplier": predicted / (1 + 10 x the
//! CPU's tasks in iowait).
//!
//! Deviation: every state is enabled; the POLL state's time limit is not
//! modelled (a POLL period is measured like any other).

use crate::machine::idle_states::IdleState;

const BUCKETS: usize = 12;
const INTERVALS: usize = 8;
const RESOLUTION: u64 = 1024;
const DECAY: u64 = 8;
/// MAX_INTERESTING: 50 ms.
const MAX_INTERESTING_NS: u64 = 50_000_000;
const NSEC_PER_USEC: u64 = 1000;

/// struct menu_device: one CPU's governor state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Menu {
    correction_factor: [u64; BUCKETS],
    /// The last idle periods, in us (ring).
    intervals: [u32; INTERVALS],
    interval_ptr: usize,
    bucket: usize,
    next_timer_ns: u64,
    last_state_idx: usize,
}

impl Default for Menu {
    /// menu_enable_device(): every correction factor at 1.0.
    fn default() -> Self {
        Menu {
            correction_factor: [RESOLUTION * DECAY; BUCKETS],
            intervals: [0; INTERVALS],
            interval_ptr: 0,
            bucket: 0,
            next_timer_ns: 0,
            last_state_idx: 0,
        }
    }
}

/// What the governor knows when the CPU goes idle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdleEntry {
    /// tick_nohz_get_sleep_length(): time to the next timer event.
    pub next_timer_ns: u64,
    /// Time to the next tick (delta_tick).
    pub delta_tick_ns: u64,
    /// The tick is already stopped (the CPU was idle and tickless before).
    pub tick_stopped: bool,
    /// nr_iowait_cpu(): tasks of this CPU sleeping in io_schedule().
    pub nr_iowaiters: u32,
    /// The tick period (TICK_NSEC).
    pub tick_ns: u64,
}

/// The governor's choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choice {
    /// Index into the state table.
    pub idx: usize,
    /// Whether the tick may be stopped for this period.
    pub stop_tick: bool,
    /// The idle length it predicted.
    pub predicted_ns: u64,
}

/// which_bucket(): by the order of magnitude of the time to the next
/// timer, and apart when tasks wait for IO.
fn which_bucket(duration_ns: u64, nr_iowaiters: u32) -> usize {
    let base = if nr_iowaiters > 0 { BUCKETS / 2 } else { 0 };
    let step = match duration_ns {
        d if d < 10 * NSEC_PER_USEC => 0,
        d if d < 100 * NSEC_PER_USEC => 1,
        d if d < 1_000 * NSEC_PER_USEC => 2,
        d if d < 10_000 * NSEC_PER_USEC => 3,
        d if d < 100_000 * NSEC_PER_USEC => 4,
        _ => 5,
    };
    base + step
}

impl Menu {
    /// get_typical_interval(): the average of the last eight idle periods
    /// if they agree (stddev <= 20 us, or avg > 6 stddev over at least six
    /// of them, dropping the largest as outliers), else u32::MAX. In us.
    pub fn typical_interval_us(&self, predicted_us: u64) -> u64 {
        let mut thresh = u32::MAX;
        loop {
            let kept = || self.intervals.iter().map(|&v| v as u64).filter(|&v| v <= thresh as u64);
            // One pass for the count, the extremes and the sum, as the
            // kernel's loop.
            let (mut divisor, mut max, mut min, mut sum) = (0u64, 0u64, u64::MAX, 0u64);
            for v in kept() {
                divisor += 1;
                max = max.max(v);
                min = min.min(v);
                sum += v;
            }
            if max == 0 {
                return u32::MAX as u64;
            }
            // The result would be discarded anyway.
            if min >= predicted_us {
                return u32::MAX as u64;
            }
            let avg = sum / divisor;
            let variance = kept().map(|v| (v as i64 - avg as i64).unsigned_abs().pow(2)).sum::<u64>() / divisor;
            if variance <= u64::MAX / 36
                && ((avg * avg > variance * 36 && divisor * 4 >= INTERVALS as u64 * 3) || variance <= 400)
            {
                return avg;
            }
            if divisor * 4 <= INTERVALS as u64 * 3 {
                return u32::MAX as u64;
            }
            thresh = (max - 1) as u32;
        }
    }

    /// menu_select(): the state for the idle period starting now, under the
    /// PM-QoS CPU latency request `qos_ns` (cpuidle_governor_latency_req).
    pub fn select(&mut self, states: &[IdleState], e: IdleEntry, qos_ns: Option<u64>) -> Choice {
        self.next_timer_ns = e.next_timer_ns;
        self.bucket = which_bucket(e.next_timer_ns, e.nr_iowaiters);
        let poll_only = Choice { idx: 0, stop_tick: !states[0].polling, predicted_ns: 0 };
        // State 0 whatever comes (no other state, a request of 0, the next
        // timer too close or the request too tight for state 1).
        let qos = qos_ns.unwrap_or(u64::MAX);
        if states.len() <= 1
            || qos == 0
            || e.next_timer_ns < states[1].target_residency_ns
            || qos < states[1].exit_latency_ns
        {
            self.last_state_idx = 0;
            return poll_only;
        }
        // Round up half microseconds.
        let cf = self.correction_factor[self.bucket];
        let scale = RESOLUTION * DECAY * NSEC_PER_USEC;
        let predicted_us =
            ((e.next_timer_ns as u128 * cf as u128 + scale as u128 / 2) / scale as u128).min(u64::MAX as u128) as u64;
        let mut predicted_ns = predicted_us.min(self.typical_interval_us(predicted_us)) * NSEC_PER_USEC;
        let mut latency_req = qos;
        if e.tick_stopped {
            // The tick is not coming: a short prediction would only keep
            // the CPU shallow until the next timer.
            if predicted_ns < e.tick_ns {
                predicted_ns = e.next_timer_ns;
            }
        } else {
            // The performance multiplier.
            latency_req = latency_req.min(predicted_ns / (1 + 10 * e.nr_iowaiters as u64));
        }
        let mut idx: Option<usize> = None;
        for (i, s) in states.iter().enumerate() {
            if s.target_residency_ns > predicted_ns {
                // Polling is worse than a real state that fits the next
                // timer, if the prediction was too short for any.
                if idx == Some(0) && s.exit_latency_ns <= latency_req && s.target_residency_ns <= e.next_timer_ns {
                    predicted_ns = s.target_residency_ns;
                    idx = Some(i);
                    break;
                }
                if predicted_ns < e.tick_ns {
                    break;
                }
                let j = idx.unwrap_or(0);
                if !e.tick_stopped {
                    // A shallow state so far: keep the tick and let the
                    // governor run again at it.
                    predicted_ns = states[j].target_residency_ns;
                    break;
                }
                // The tick is stopped: a state deeper than the prediction
                // but within the time to the tick is still fine.
                let k = if states[j].target_residency_ns < e.tick_ns && s.target_residency_ns <= e.delta_tick_ns {
                    i
                } else {
                    j
                };
                return self.chosen(k, true, predicted_ns);
            }
            if s.exit_latency_ns > latency_req {
                // Out for latency: expect the chosen state's residency,
                // so the tick stays if that is short.
                predicted_ns = states[idx.unwrap_or(0)].target_residency_ns;
                break;
            }
            idx = Some(i);
        }
        let mut idx = idx.unwrap_or(0);
        // Keep the tick for a short period; then do not pick a state the
        // tick would cut short.
        let keep_tick = (states[idx].polling || predicted_ns < e.tick_ns) && !e.tick_stopped;
        if keep_tick && states[idx].target_residency_ns > e.delta_tick_ns {
            idx = (0..idx).rev().find(|&i| states[i].target_residency_ns <= e.delta_tick_ns).unwrap_or(0);
        }
        self.chosen(idx, !keep_tick, predicted_ns)
    }

    fn chosen(&mut self, idx: usize, stop_tick: bool, predicted_ns: u64) -> Choice {
        self.last_state_idx = idx;
        Choice { idx, stop_tick, predicted_ns }
    }

    /// menu_reflect() + menu_update() (which the kernel runs at the next
    /// select; here at once): the idle period that just ended
    /// lasted `residency_ns` (woken by the tick if `tick_wakeup`); learn the
    /// correction factor of its bucket and remember its length.
    pub fn reflect(&mut self, states: &[IdleState], residency_ns: u64, tick_wakeup: bool, tick_ns: u64) {
        let target = &states[self.last_state_idx];
        let mut measured = if tick_wakeup && self.next_timer_ns > tick_ns {
            // The tick woke a CPU with a timer further out: the period
            // would have been long. Count it as a long one.
            9 * MAX_INTERESTING_NS / 10
        } else if residency_ns > 2 * target.exit_latency_ns {
            residency_ns - target.exit_latency_ns
        } else {
            residency_ns / 2
        };
        measured = measured.min(self.next_timer_ns);
        let mut f = self.correction_factor[self.bucket];
        f -= f / DECAY;
        if self.next_timer_ns > 0 && measured < MAX_INTERESTING_NS {
            f += (RESOLUTION as u128 * measured as u128 / self.next_timer_ns as u128) as u64;
        } else {
            f += RESOLUTION;
        }
        self.correction_factor[self.bucket] = f;
        self.intervals[self.interval_ptr] = (measured / NSEC_PER_USEC).min(u32::MAX as u64) as u32;
        self.interval_ptr = (self.interval_ptr + 1) % INTERVALS;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::idle_states::SKX;

    const TICK: u64 = 4_000_000; // HZ=250

    fn entry(next_timer_ns: u64) -> IdleEntry {
        IdleEntry { next_timer_ns, delta_tick_ns: TICK, tick_stopped: false, nr_iowaiters: 0, tick_ns: TICK }
    }

    fn name(m: &mut Menu, e: IdleEntry) -> &'static str {
        SKX[m.select(&SKX, e, None).idx].name
    }

    #[test]
    fn a_fresh_governor_goes_by_the_next_timer() {
        let mut m = Menu::default();
        // Shorter than C1's residency: poll.
        assert_eq!(name(&mut m, entry(1_000)), "POLL");
        // 50 us to the next timer: C1E (20 us) fits, C6 (600 us) does not.
        assert_eq!(name(&mut m, entry(50_000)), "C1E");
        // 1 ms, tick running: C6 fits the prediction but the tick (4 ms
        // away) is kept for a prediction under a tick, and C6 fits in it.
        assert_eq!(name(&mut m, entry(1_000_000)), "C6");
        // 10 ms and the tick 300 us away: C6 would be cut by the tick.
        let e = IdleEntry { delta_tick_ns: 300_000, ..entry(10_000_000) };
        let c = m.select(&SKX, e, None);
        assert_eq!((SKX[c.idx].name, c.stop_tick), ("C6", true), "long prediction: tick stopped, deep state");
    }

    #[test]
    fn a_pm_qos_request_caps_the_exit_latency() {
        let mut m = Menu::default();
        // cyclictest's /dev/cpu_dma_latency of 0: POLL, whatever the timer.
        let c = m.select(&SKX, entry(10_000_000), Some(0));
        assert_eq!((SKX[c.idx].name, c.stop_tick), ("POLL", false));
        // 50 us: C6 (133 us to leave) is out, C1E (10 us) is the deepest left.
        let e = IdleEntry { delta_tick_ns: 300_000, ..entry(10_000_000) };
        assert_eq!(SKX[Menu::default().select(&SKX, e, Some(50_000)).idx].name, "C1E");
        // 1 us: tighter than C1's 2 us exit, so state 0.
        assert_eq!(SKX[Menu::default().select(&SKX, e, Some(1_000)).idx].name, "POLL");
    }

    #[test]
    fn a_typical_interval_keeps_a_cpu_shallow_despite_a_far_timer() {
        let mut m = Menu::default();
        // Eight idle periods of ~40 us each (a CPU woken by IO completions).
        for _ in 0..8 {
            m.select(&SKX, entry(10_000_000), None);
            m.reflect(&SKX, 40_000 + 10_000, false, TICK); // C6 then C1E: measured = residency - exit
        }
        assert!((30..=50).contains(&m.typical_interval_us(10_000)), "{}", m.typical_interval_us(10_000));
        assert_eq!(name(&mut m, entry(10_000_000)), "C1E");
    }

    #[test]
    fn scattered_intervals_are_not_typical() {
        let mut m = Menu::default();
        for (i, us) in [10u64, 3_000, 50, 7_000, 200, 1_500, 20, 9_000].into_iter().enumerate() {
            m.select(&SKX, entry(10_000_000), None);
            m.reflect(&SKX, us * 1000 + 133_000 * (i as u64 % 2), false, TICK);
        }
        assert_eq!(m.typical_interval_us(1_000_000), u32::MAX as u64);
    }

    #[test]
    fn iowaiters_tighten_the_latency_limit() {
        // 500 us predicted: without iowaiters C1E (10 us exit) is the
        // deepest that fits; C6 needs 600 us anyway. With one iowaiter the
        // limit is 500/11 = 45 us: still C1E. With a 1.2 ms prediction C6
        // fits alone (133 us exit) but not with an iowaiter (109 us limit).
        let mut m = Menu::default();
        assert_eq!(name(&mut m, entry(1_200_000)), "C6");
        let e = IdleEntry { nr_iowaiters: 1, ..entry(1_200_000) };
        assert_eq!(name(&mut m, e), "C1E");
    }

    #[test]
    fn buckets_split_by_magnitude_and_iowait() {
        assert_eq!(which_bucket(5_000, 0), 0);
        assert_eq!(which_bucket(50_000, 0), 1);
        assert_eq!(which_bucket(500_000, 0), 2);
        assert_eq!(which_bucket(5_000_000, 0), 3);
        assert_eq!(which_bucket(50_000_000, 0), 4);
        assert_eq!(which_bucket(500_000_000, 2), 11);
    }

    #[test]
    fn the_correction_factor_learns_early_wakeups() {
        let mut m = Menu::default();
        // The next timer is 10 ms out but something wakes the CPU after 1 ms,
        // again and again: the factor of that bucket falls towards 0.1.
        for _ in 0..64 {
            m.select(&SKX, entry(10_000_000), None);
            m.reflect(&SKX, 1_133_000, false, TICK);
        }
        let f = m.correction_factor[which_bucket(10_000_000, 0)];
        assert!(f < RESOLUTION * DECAY / 5, "{f}");
    }
}
