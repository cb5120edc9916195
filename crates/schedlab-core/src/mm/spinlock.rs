//! A queued spinlock (kernel/locking/qspinlock.c) as a timeline: the LRU
//! lock of a node (`pgdat->lru_lock`, 4.8+; `zone->lru_lock` before,
//! `lruvec->lru_lock` in 6.x, one per node here with one memory cgroup).
//!
//! Waiters are served in arrival order and neither spinner nor holder can
//! be preempted (spin_lock_irq), so when a CPU asks for the lock the time
//! it is granted is already known: it is the end of the holds reserved
//! before it. A request therefore costs its CPU a known burst: the spin
//! until the grant, then the hold.
//!
//! A hold is its work under the lock plus, when others are waiting, the
//! hand-off: the lock word and the data it guards (the list heads, the
//! node's counters, the struct pages at the list ends) move to the next
//! CPU. With more CPUs spinning every hand-off also competes with their
//! polling of the lock's cache line, so it grows with the number of
//! waiters ("Non-scalable locks are dangerous", Boyd-Wickizer et al.,
//! Linux Symposium 2012, measured the growth for ticket locks; the MCS
//! queue of qspinlock takes the polling off the lock word for all but the
//! first waiter, but arrivals still hit it with their trylock).
//!
//! Deviation: a batch of acquisitions of one caller (the pagevec drains
//! of one read, the isolations of one reclaim chunk) is one reservation
//! of their summed holds; each of them pays the hand-off when the lock is
//! contended, as it would when the holds of several CPUs interleave. In
//! the kernel the spinning CPU cannot be preempted; here its burst can
//! be (the lock's timeline is not moved by it).

use std::collections::VecDeque;

/// A lock's counters (what lock_stat would show: acquisitions,
/// contentions, wait and hold time).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LockStats {
    pub acquisitions: u64,
    pub contended: u64,
    pub spin_ns: u64,
    pub hold_ns: u64,
}

/// One spinlock's timeline.
#[derive(Debug, Clone, Default)]
pub struct SpinLock {
    /// When the last reserved hold ends.
    pub free_at: u64,
    /// Grant times of the reservations not yet started: the CPUs spinning.
    waiting: VecDeque<u64>,
    pub stats: LockStats,
}

/// The cost of a hand-off (kernel.costs.lru_lock_handoff and
/// lru_lock_handoff_waiter).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Handoff {
    pub base_ns: u64,
    pub per_waiter_ns: u64,
}

impl SpinLock {
    /// CPUs spinning on the lock at `now`.
    pub fn nr_waiting(&mut self, now: u64) -> usize {
        while self.waiting.front().is_some_and(|&g| g <= now) {
            self.waiting.pop_front();
        }
        self.waiting.len()
    }

    /// `n` acquisitions at `now`, each holding the lock for `work` ns.
    /// Returns (spin, hold): the caller's CPU spins, then holds.
    pub fn acquire(&mut self, now: u64, n: u64, work: u64, handoff: Handoff) -> (u64, u64) {
        if n == 0 {
            return (0, 0);
        }
        let waiters = self.nr_waiting(now) as u64;
        let grant = self.free_at.max(now);
        let contended = grant > now;
        let per = if contended { work + handoff.base_ns + handoff.per_waiter_ns * waiters } else { work };
        let hold = n * per;
        self.free_at = grant + hold;
        if contended {
            self.waiting.push_back(grant);
            self.stats.contended += n;
        }
        self.stats.acquisitions += n;
        self.stats.spin_ns += grant - now;
        self.stats.hold_ns += hold;
        (grant - now, hold)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: Handoff = Handoff { base_ns: 100, per_waiter_ns: 10 };

    #[test]
    fn free_lock_costs_only_the_work() {
        let mut l = SpinLock::default();
        assert_eq!(l.acquire(1000, 4, 50, H), (0, 200));
        assert_eq!(l.free_at, 1200);
        assert_eq!(l.stats.contended, 0);
        // Released before the next request: again uncontended.
        assert_eq!(l.acquire(1300, 1, 50, H), (0, 50));
    }

    #[test]
    fn waiters_queue_in_order_and_pay_the_handoff() {
        let mut l = SpinLock::default();
        l.acquire(0, 1, 1000, H); // held [0, 1000)
                                  // Second CPU at 100: spins 900, one waiter ahead of it? none
                                  // waiting yet (the holder is not a waiter).
        assert_eq!(l.acquire(100, 1, 1000, H), (900, 1100));
        // Third at 200: one CPU spinning (granted at 1000).
        assert_eq!(l.acquire(200, 1, 1000, H), (1900, 1110));
        assert_eq!(l.nr_waiting(500), 2);
        assert_eq!(l.nr_waiting(1000), 1);
        assert_eq!(l.nr_waiting(2100), 0);
        assert_eq!(l.stats.spin_ns, 2800);
        assert_eq!(l.stats.contended, 2);
    }
}
