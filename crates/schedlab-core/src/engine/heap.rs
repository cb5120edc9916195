//! The heap budget: allocation failure as an error, never an abort.
//!
//! Rust aborts the process when an allocation fails, and through the
//! Python binding that kills the interpreter. The bounds of issue 14 (the
//! run limit, interval >= tick, streamed traces, bounded delay histograms)
//! keep a run's memory flat in simulated time; what is left to grow is what
//! the scenario creates (tasks forked in a loop). So the event loop watches
//! the heap: an embedding that counts its allocations (the Python binding's
//! global allocator does) keeps [`LIVE_BYTES`] current, and a run with a
//! budget stops with SL210 when the live bytes pass it, long before the
//! host runs out. Without a counting allocator `LIVE_BYTES` stays 0 and the
//! budget is never reached.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Bytes the process's counting allocator has handed out and not had back.
pub static LIVE_BYTES: AtomicUsize = AtomicUsize::new(0);

/// The event loop looks at the heap once every this many events (a power
/// of two: one AND and a branch per event).
pub const CHECK_EVERY: u64 = 1 << 12;

/// The live heap, if it is over `budget`.
pub fn over(budget: u64) -> Option<u64> {
    let live = LIVE_BYTES.load(Ordering::Relaxed) as u64;
    (live > budget).then_some(live)
}

/// `bytes` in the largest binary unit that keeps it at least 1 (`1.5 GiB`).
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_read_as_people_write_them() {
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(64 << 20), "64.0 MiB");
        assert_eq!(format_bytes(3 << 29), "1.5 GiB");
    }
}
