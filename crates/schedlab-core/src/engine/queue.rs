//! The event queue: a hierarchical timing wheel ordered exactly by
//! `(time, sequence)`.
//!
//! The sequence number is assigned at insertion, so two events at the same
//! instant fire in the order they were scheduled: this is what makes a run
//! reproducible byte for byte. Each event lives in a slot of a slab; the
//! slot knows where its entry is, so `cancel` takes the entry out at once
//! (about a fifth of the events a busy machine schedules are cancelled: an
//! op's completion when its task is preempted, a sleep cut short).
//!
//! The wheel, after the kernel's timer wheel (kernel/time/timer.c) but
//! exact: level `l` has 1,024 buckets of 2^(SHIFT + 10 l) ns each. An event
//! goes to the level of the highest bit in which its time differs from the
//! wheel's time `cur`, so every bucket of a level lies ahead of `cur` and
//! a level's earliest bucket is its lowest set bit in a 1,024-bit map. The
//! events of `cur`'s own level-0 bucket are the `run`, kept sorted by
//! `(time, sequence)`; `pop` takes the run's first. When the run is empty
//! the wheel moves `cur` to the start of the earliest bucket of its lowest
//! non-empty level and spreads that bucket's events down; a level-0 bucket
//! becomes the run with one sort of its few events. Level 0 spans 16.8 ms,
//! so a tick (4 ms ahead at HZ=250), an op's end or a short sleep goes
//! straight there and moves once. Times beyond the top level (none with
//! the settings below) would wait in an overflow list.
//!
//! Cost: `schedule` and `cancel` are O(1) but for the run (a sorted insert,
//! at its end for the usual event that is the latest so far), `pop`
//! amortised O(1) per level an event passes. Against the binary heap it
//! replaced (O(log n) sift-downs, and cancelled entries left in it until
//! they surfaced) this is issue 16's queue saving.

use super::time::Instant;

/// A handle to a scheduled event, used to cancel it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventKey {
    slot: u32,
    seq: u64,
}

/// An entry: `(time << 64) | sequence` as one u128 (one integer compare),
/// plus the slot it names.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Entry {
    key: u128,
    slot: u32,
}

impl Entry {
    #[inline]
    fn time(self) -> u64 {
        (self.key >> 64) as u64
    }
}

#[inline]
fn key(t: u64, seq: u64) -> u128 {
    ((t as u128) << 64) | seq as u128
}

/// Width of a level-0 bucket: 2^14 ns = 16.4 us. Measured (instructions,
/// scripts/bench-instructions): narrower buckets move an event down more
/// levels before it fires, wider ones make the run long (sorted inserts)
/// on a 1,024-CPU machine.
const SHIFT: u32 = 14;
/// Bits of time per level (1,024 buckets). Measured against 8 and 9
/// (scripts/bench-instructions): with 256 buckets level 0 spanned 4.2 ms,
/// and a tick 4 ms ahead usually crossed into level 1 and cascaded once
/// more (10 bits: 1-2 % fewer instructions per event on every CPU-bound
/// case).
const BITS: u32 = 10;
/// Levels: 14 + 10 * 5 = 64 bits of time: every time has a level, so the
/// overflow list (for settings that cover fewer bits) stays empty.
const LEVELS: usize = 5;
const BUCKETS: usize = 1 << BITS;
const WORDS: usize = BUCKETS / 64;
/// The summary word has a bit per word of a level's map.
const _: () = assert!(WORDS <= 64);

/// Where a slot's entry is (`Slot::loc`): a bucket `level * 1,024 + index`,
/// the run, the overflow list, or nowhere.
const LOC_RUN: u32 = (LEVELS * BUCKETS) as u32;
const LOC_OVERFLOW: u32 = LOC_RUN + 1;
const LOC_FREE: u32 = u32::MAX;

struct Slot<E> {
    seq: u64,
    loc: u32,
    /// Index of the entry in its bucket, the run or the overflow list.
    idx: u32,
    event: Option<E>,
}

/// A level's 1,024-bit map of non-empty buckets, with a summary word whose
/// bit k says word k is not zero (the first set bit in two lookups, not a
/// scan of sixteen words).
#[derive(Clone, Copy, Default)]
struct Bitmap {
    words: [u64; WORDS],
    summary: u64,
}

impl Bitmap {
    #[inline]
    fn set(&mut self, i: usize) {
        self.words[i / 64] |= 1u64 << (i % 64);
        self.summary |= 1u64 << (i / 64);
    }

    #[inline]
    fn clear(&mut self, i: usize) {
        let w = &mut self.words[i / 64];
        *w &= !(1u64 << (i % 64));
        if *w == 0 {
            self.summary &= !(1u64 << (i / 64));
        }
    }

    #[inline]
    fn first(&self) -> Option<usize> {
        if self.summary == 0 {
            return None;
        }
        let k = self.summary.trailing_zeros() as usize;
        Some(k * 64 + self.words[k].trailing_zeros() as usize)
    }
}

pub struct EventQueue<E> {
    /// The wheel's time: the start of the level-0 bucket the run is.
    cur: u64,
    /// The events of `cur`'s level-0 bucket, earliest first, from `head`
    /// (the ones before it have fired).
    run: Vec<Entry>,
    head: usize,
    /// `LEVELS * 1,024` buckets, level-major; unsorted.
    buckets: Vec<Vec<Entry>>,
    /// Per level, which buckets hold events.
    occupied: [Bitmap; LEVELS],
    overflow: Vec<Entry>,
    slots: Vec<Slot<E>>,
    free: Vec<u32>,
    next_seq: u64,
    len: usize,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            cur: 0,
            run: Vec::new(),
            head: 0,
            buckets: (0..LEVELS * BUCKETS).map(|_| Vec::new()).collect(),
            occupied: [Bitmap::default(); LEVELS],
            overflow: Vec::new(),
            slots: Vec::new(),
            free: Vec::new(),
            next_seq: 0,
            len: 0,
        }
    }

    /// Schedule `event` at `at`. Events at the same instant fire in
    /// scheduling order.
    pub fn schedule(&mut self, at: Instant, event: E) -> EventKey {
        let seq = self.next_seq;
        self.next_seq += 1;
        let fresh = Slot { seq, loc: LOC_FREE, idx: 0, event: Some(event) };
        let slot = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = fresh;
                s
            }
            None => {
                self.slots.push(fresh);
                (self.slots.len() - 1) as u32
            }
        };
        self.len += 1;
        self.place(Entry { key: key(at.0, seq), slot });
        EventKey { slot, seq }
    }

    /// Cancel a scheduled event: its entry leaves the queue now. Cancelling
    /// an event that already fired or was already cancelled is a no-op and
    /// returns false.
    pub fn cancel(&mut self, key: EventKey) -> bool {
        let Some(s) = self.slots.get_mut(key.slot as usize) else { return false };
        if s.seq != key.seq || s.loc == LOC_FREE {
            return false;
        }
        let (loc, idx) = (s.loc, s.idx as usize);
        s.loc = LOC_FREE;
        s.event = None;
        self.free.push(key.slot);
        self.len -= 1;
        match loc {
            LOC_RUN => {
                self.run.remove(idx);
                self.reindex_run(idx);
            }
            LOC_OVERFLOW => self.swap_remove_from(LOC_OVERFLOW, idx),
            b => {
                self.swap_remove_from(b, idx);
                if self.buckets[b as usize].is_empty() {
                    self.occupied[b as usize / BUCKETS].clear(b as usize % BUCKETS);
                }
            }
        }
        true
    }

    /// Remove and return the earliest event.
    pub fn pop(&mut self) -> Option<(Instant, E)> {
        if self.head == self.run.len() && !self.advance() {
            return None;
        }
        let e = self.run[self.head];
        self.head += 1;
        if self.head == self.run.len() {
            self.run.clear();
            self.head = 0;
        }
        let s = &mut self.slots[e.slot as usize];
        debug_assert_eq!(s.seq, e.key as u64);
        s.loc = LOC_FREE;
        let ev = s.event.take().expect("an entry names a live slot");
        self.free.push(e.slot);
        self.len -= 1;
        Some((Instant(e.time()), ev))
    }

    /// Time of the earliest event.
    pub fn peek_time(&mut self) -> Option<Instant> {
        if self.head == self.run.len() && !self.advance() {
            return None;
        }
        Some(Instant(self.run[self.head].time()))
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Put an entry where it belongs relative to `cur`. Inline into
    /// `schedule`, which is little more than it: one call's register saves
    /// an event scheduled, not two.
    #[inline(always)]
    fn place(&mut self, e: Entry) {
        let t = e.time();
        let diff = (t >> SHIFT) ^ (self.cur >> SHIFT);
        if diff == 0 || t < self.cur {
            // cur's own bucket (or, never in a run, a time already past:
            // it is the earliest there is, and the run keeps it first).
            self.run_insert(e);
            return;
        }
        let level = ((63 - diff.leading_zeros()) / BITS) as usize;
        if level >= LEVELS {
            self.overflow.push(e);
            self.slots[e.slot as usize].loc = LOC_OVERFLOW;
            self.slots[e.slot as usize].idx = (self.overflow.len() - 1) as u32;
            return;
        }
        let index = ((t >> (SHIFT + BITS * level as u32)) as usize) & (BUCKETS - 1);
        let b = level * BUCKETS + index;
        let bucket = &mut self.buckets[b];
        bucket.push(e);
        let s = &mut self.slots[e.slot as usize];
        s.loc = b as u32;
        s.idx = (bucket.len() - 1) as u32;
        self.occupied[level].set(index);
    }

    /// Insert into the run, earliest first: searched from the end, where a
    /// new event (the latest of its instant) usually goes.
    #[inline]
    fn run_insert(&mut self, e: Entry) {
        let mut i = self.run.len();
        while i > self.head && self.run[i - 1].key > e.key {
            i -= 1;
        }
        self.run.insert(i, e);
        self.slots[e.slot as usize].loc = LOC_RUN;
        self.reindex_run(i);
    }

    /// The run's entries from `from` on moved: tell their slots.
    #[inline]
    fn reindex_run(&mut self, from: usize) {
        for j in from..self.run.len() {
            self.slots[self.run[j].slot as usize].idx = j as u32;
        }
    }

    fn swap_remove_from(&mut self, loc: u32, idx: usize) {
        let list = if loc == LOC_OVERFLOW { &mut self.overflow } else { &mut self.buckets[loc as usize] };
        list.swap_remove(idx);
        if let Some(moved) = list.get(idx) {
            self.slots[moved.slot as usize].idx = idx as u32;
        }
    }

    /// Refill the empty run from the earliest non-empty bucket; false when
    /// nothing is left.
    #[cold]
    fn advance(&mut self) -> bool {
        debug_assert!(self.head == self.run.len());
        self.run.clear();
        self.head = 0;
        loop {
            let Some((level, index)) = self.occupied.iter().enumerate().find_map(|(l, m)| m.first().map(|i| (l, i)))
            else {
                return self.refill_from_overflow();
            };
            self.occupied[level].clear(index);
            // cur moves to the start of that bucket: its digit at `level`
            // becomes `index`, the digits below it zero.
            let unit = SHIFT + BITS * level as u32;
            let above = self.cur >> (unit + BITS) << (unit + BITS);
            self.cur = above | ((index as u64) << unit);
            let mut entries = std::mem::take(&mut self.buckets[level * BUCKETS + index]);
            if level == 0 {
                entries.sort_by_key(|e| e.key);
                for (i, e) in entries.iter().enumerate() {
                    let s = &mut self.slots[e.slot as usize];
                    s.loc = LOC_RUN;
                    s.idx = i as u32;
                }
                // The run's (empty) buffer goes back to the bucket.
                self.buckets[index] = std::mem::replace(&mut self.run, entries);
                return true;
            }
            for &e in &entries {
                self.place(e);
            }
            entries.clear();
            self.buckets[level * BUCKETS + index] = entries;
            if !self.run.is_empty() {
                return true;
            }
        }
    }

    /// Every level is empty: move `cur` to the earliest overflow event and
    /// spread the list again.
    #[cold]
    fn refill_from_overflow(&mut self) -> bool {
        let Some(first) = self.overflow.iter().map(|e| e.time()).min() else { return false };
        self.cur = first >> SHIFT << SHIFT;
        let entries = std::mem::take(&mut self.overflow);
        for e in entries {
            self.place(e);
        }
        true
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
    fn a_stale_key_does_not_cancel_the_slot_s_next_event() {
        let mut q = EventQueue::new();
        let a = q.schedule(Instant(100), 'a');
        assert!(q.cancel(a));
        // The slot of 'a' is recycled at once; its old key no longer matches.
        let b = q.schedule(Instant(50), 'b');
        assert_ne!(a, b);
        assert!(!q.cancel(a));
        assert_eq!(q.len(), 1);
        assert_eq!(q.pop(), Some((Instant(50), 'b')));
        let c = q.schedule(Instant(60), 'c');
        assert_eq!(q.peek_time(), Some(Instant(60)));
        assert_eq!(q.pop(), Some((Instant(60), 'c')));
        assert_eq!(q.pop(), None);
        assert!(!q.cancel(c));
    }

    /// Random schedules, cancels and pops against a sorted-map model of
    /// the same `(time, sequence)` order.
    #[test]
    fn agrees_with_an_ordered_map() {
        use std::collections::BTreeMap;
        let mut q = EventQueue::new();
        let mut model: BTreeMap<(u64, u64), u64> = BTreeMap::new();
        let mut keys: Vec<(EventKey, (u64, u64))> = Vec::new();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut now = 0u64;
        for i in 0..200_000u64 {
            match rnd() % 8 {
                0..=3 => {
                    // Same-instant events are common: a quarter land at
                    // `now`; the rest at every scale from 1 ns to 2^62 ns
                    // (every level of the wheel and its overflow list).
                    let at = if rnd() % 4 == 0 { now } else { now.saturating_add(rnd() % (2u64 << (rnd() % 62))) };
                    let k = q.schedule(Instant(at), i);
                    model.insert((at, i), i);
                    keys.push((k, (at, i)));
                }
                4 if !keys.is_empty() => {
                    let (k, m) = keys.swap_remove((rnd() % keys.len() as u64) as usize);
                    assert_eq!(q.cancel(k), model.remove(&m).is_some());
                }
                _ => {
                    let want = model.pop_first();
                    let got = q.pop();
                    assert_eq!(got.map(|(t, e)| ((t.0, e), e)), want);
                    if let Some(((t, _), _)) = want {
                        now = t;
                    }
                }
            }
            assert_eq!(q.len(), model.len());
            assert_eq!(q.peek_time().map(|t| t.0), model.keys().next().map(|k| k.0));
        }
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
