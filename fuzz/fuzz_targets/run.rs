//! The whole run path on arbitrary scenarios, kept short (20 ms simulated
//! after a warm-up of 0 to 5 ms picked by the input's length, at most 64 CPUs and
//! 512 tasks) with the invariant checker on: never a panic, never an
//! internal error or a checker violation (a livelock or deadlock the
//! scenario asked for is fine), and the same bytes again from a second run
//! without the checker (so the checker changes nothing it watches).
#![no_main]

use libfuzzer_sys::fuzz_target;
use schedlab_core::{RunOptions, SimError};

#[path = "common.rs"]
mod common;

/// Errors a valid scenario may end with: what it asked for, not a bug.
fn scenario_made(e: &SimError) -> bool {
    let text = e.to_string();
    e.code().starts_with("SL1") || (e.code() == "SL200" && (text.contains("no progress") || text.contains("deadlock")))
}

/// Warm-ups: none, inside a first context switch, inside a first tick, a few ticks.
const WARMUPS: [&str; 4] = ["\"0ns\"", "\"1us\"", "\"1ms\"", "\"5ms\""];

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let short = [
        ("measure.warmup".to_string(), WARMUPS[data.len() % 4].to_string()),
        ("measure.duration".to_string(), "\"20ms\"".to_string()),
    ];
    let sc = match schedlab_core::scenario::load(text, "fuzz.toml", &short) {
        Ok(sc) => sc,
        Err(e) => return common::check_user_error(&e),
    };
    let tasks: usize = sc.groups.iter().map(|g| g.count).sum();
    if sc.machine.nr_cpus() > 64 || tasks > 512 {
        return;
    }
    let checked = RunOptions { seed: 1, check: true, ..Default::default() };
    let first = schedlab_core::run_scenario(&sc, &checked);
    if let Err(e) = &first {
        assert!(scenario_made(e), "{}: {e}", e.code());
    }
    let second = schedlab_core::run_scenario(&sc, &RunOptions { check: false, ..checked });
    match (first, second) {
        (Ok(a), Ok(b)) => assert_eq!(a.to_json(), b.to_json(), "not deterministic"),
        (Err(a), Err(b)) => assert_eq!(a, b, "not deterministic"),
        (a, b) => panic!("not deterministic: {:?} then {:?}", a.err(), b.err()),
    }
});
