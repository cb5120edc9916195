//! A run's progress, published for a reader on another thread (the Python
//! front end's progress bar polls it while the run holds no GIL). The run
//! writes it every `heap::CHECK_EVERY` events and at its end: a relaxed
//! store, nothing per event, and nothing the simulation reads back, so it
//! cannot change a result.

use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Default)]
pub struct Progress {
    /// Simulated ns reached.
    now_ns: AtomicU64,
    /// Where the run ends (measure.duration plus warm-up, or its limit).
    end_ns: AtomicU64,
    events: AtomicU64,
}

impl Progress {
    pub fn start(&self, end_ns: u64) {
        self.end_ns.store(end_ns, Ordering::Relaxed);
        self.now_ns.store(0, Ordering::Relaxed);
        self.events.store(0, Ordering::Relaxed);
    }

    pub fn publish(&self, now_ns: u64, events: u64) {
        self.now_ns.store(now_ns, Ordering::Relaxed);
        self.events.store(events, Ordering::Relaxed);
    }

    /// (simulated ns reached, the run's end in ns, events so far).
    pub fn read(&self) -> (u64, u64, u64) {
        (self.now_ns.load(Ordering::Relaxed), self.end_ns.load(Ordering::Relaxed), self.events.load(Ordering::Relaxed))
    }
}
