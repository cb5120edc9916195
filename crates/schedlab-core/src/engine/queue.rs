//! The event queue: a binary min-heap ordered by `(time, sequence)`.
//!
//! The sequence number is assigned at insertion, so two events at the same
//! instant fire in the order they were scheduled: this is what makes a run
//! reproducible byte for byte. Cancellation is lazy: a cancelled event stays
//! in the heap and is dropped when it reaches the top. Each event lives in a
//! slot of a slab; a heap entry names its slot and the sequence it was given,
//! so a stale entry (slot cancelled and reused) is recognised by a mismatch.
//!
//! Complexity: `schedule` and `pop` are O(log n), `cancel` is O(1).

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use super::time::Instant;

/// A handle to a scheduled event, used to cancel it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventKey {
    slot: u32,
    seq: u64,
}

/// A heap entry: `(time << 64) | sequence` as one u128, so the heap's
/// sift loops compare a single integer (measured: tuple comparison was a
/// third of the engine's own time), plus the slot it names.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Entry {
    key: u128,
    slot: u32,
}

impl Ord for Entry {
    #[inline]
    fn cmp(&self, o: &Self) -> Ordering {
        self.key.cmp(&o.key)
    }
}

impl PartialOrd for Entry {
    #[inline]
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

#[inline]
fn key(t: u64, seq: u64) -> u128 {
    ((t as u128) << 64) | seq as u128
}

struct Slot<E> {
    seq: u64,
    event: Option<E>,
}

pub struct EventQueue<E> {
    heap: BinaryHeap<Reverse<Entry>>,
    slots: Vec<Slot<E>>,
    free: Vec<u32>,
    next_seq: u64,
    live: usize,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue { heap: BinaryHeap::new(), slots: Vec::new(), free: Vec::new(), next_seq: 0, live: 0 }
    }

    /// Schedule `event` at `at`. Events at the same instant fire in
    /// scheduling order.
    pub fn schedule(&mut self, at: Instant, event: E) -> EventKey {
        let seq = self.next_seq;
        self.next_seq += 1;
        let slot = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = Slot { seq, event: Some(event) };
                s
            }
            None => {
                self.slots.push(Slot { seq, event: Some(event) });
                (self.slots.len() - 1) as u32
            }
        };
        self.heap.push(Reverse(Entry { key: key(at.0, seq), slot }));
        self.live += 1;
        EventKey { slot, seq }
    }

    /// Cancel a scheduled event. Cancelling an event that already fired or
    /// was already cancelled is a no-op and returns false.
    pub fn cancel(&mut self, key: EventKey) -> bool {
        let Some(s) = self.slots.get_mut(key.slot as usize) else { return false };
        if s.seq != key.seq || s.event.is_none() {
            return false;
        }
        s.event = None;
        self.live -= 1;
        // The slot is recycled only when its heap entry is popped, so that a
        // stale heap entry can never name a live event of another sequence.
        true
    }

    /// Remove and return the earliest live event.
    pub fn pop(&mut self) -> Option<(Instant, E)> {
        while let Some(Reverse(Entry { key, slot })) = self.heap.pop() {
            let t = (key >> 64) as u64;
            let s = &mut self.slots[slot as usize];
            debug_assert_eq!(s.seq, key as u64);
            let ev = s.event.take();
            self.free.push(slot);
            if let Some(ev) = ev {
                self.live -= 1;
                return Some((Instant(t), ev));
            }
        }
        None
    }

    /// Time of the earliest live event, dropping cancelled ones on the way.
    pub fn peek_time(&mut self) -> Option<Instant> {
        while let Some(&Reverse(Entry { key, slot })) = self.heap.peek() {
            if self.slots[slot as usize].event.is_some() {
                return Some(Instant((key >> 64) as u64));
            }
            self.heap.pop();
            self.free.push(slot);
        }
        None
    }

    pub fn len(&self) -> usize {
        self.live
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_by_time_then_sequence() {
        let mut q = EventQueue::new();
        q.schedule(Instant(30), "c");
        q.schedule(Instant(10), "a");
        q.schedule(Instant(20), "b1");
        q.schedule(Instant(20), "b2");
        q.schedule(Instant(20), "b3");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(order, vec!["a", "b1", "b2", "b3", "c"]);
    }

    #[test]
    fn cancellation() {
        let mut q = EventQueue::new();
        let a = q.schedule(Instant(10), 1);
        let b = q.schedule(Instant(10), 2);
        q.schedule(Instant(5), 0);
        assert!(q.cancel(a));
        assert!(!q.cancel(a), "double cancel is a no-op");
        assert_eq!(q.len(), 2);
        assert_eq!(q.pop(), Some((Instant(5), 0)));
        assert_eq!(q.pop(), Some((Instant(10), 2)));
        assert!(!q.cancel(b), "cancelling a fired event is a no-op");
        assert_eq!(q.pop(), None);
        assert!(q.is_empty());
    }

    #[test]
    fn stale_entries_do_not_fire_after_slot_reuse() {
        let mut q = EventQueue::new();
        let a = q.schedule(Instant(100), 'a');
        q.cancel(a);
        // Slot of 'a' is not yet recycled (its heap entry is still there).
        let b = q.schedule(Instant(50), 'b');
        assert_ne!(a, b);
        assert_eq!(q.pop(), Some((Instant(50), 'b')));
        let c = q.schedule(Instant(60), 'c');
        assert_eq!(q.peek_time(), Some(Instant(60)));
        assert_eq!(q.pop(), Some((Instant(60), 'c')));
        assert_eq!(q.pop(), None);
        assert!(!q.cancel(c));
    }

    #[test]
    fn many_events_pop_sorted() {
        let mut q = EventQueue::new();
        let mut x: u64 = 12345;
        for i in 0..10_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            q.schedule(Instant(x >> 40), i);
        }
        let mut last = (0u64, 0u64);
        let mut n = 0;
        while let Some((t, i)) = q.pop() {
            assert!((t.0, 0) >= (last.0, 0));
            if t.0 == last.0 && n > 0 {
                assert!(i > last.1, "same-time events keep insertion order");
            }
            last = (t.0, i);
            n += 1;
        }
        assert_eq!(n, 10_000);
    }
}
