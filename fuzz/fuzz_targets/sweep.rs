//! The sweep spec's reader on arbitrary text (schedlab_core::scenario::
//! sweep::read): never a panic, never an overflow in the size's arithmetic
//! however many axes and seeds, and every error a user error that names
//! the file and the key path. What it accepts fits its own limits.
#![no_main]

use libfuzzer_sys::fuzz_target;
use schedlab_core::scenario::sweep::{read, Seeds};

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match read(text, "fuzz.toml") {
        Err(e) => common::check_user_error(&e),
        Ok(spec) => {
            assert!(spec.size() <= spec.max_runs as u128, "{} runs over max_runs {}", spec.size(), spec.max_runs);
            assert!(spec.max_runs >= 1 && !spec.scenario.is_empty());
            if let Seeds::List(xs) = &spec.seeds {
                assert!(!xs.is_empty() && xs.iter().all(|s| *s >= 0));
            }
            for a in &spec.axes {
                assert!(!a.values.is_empty() && a.values.len() == a.literals.len());
                assert!(["bool", "int", "float", "string", "toml"].contains(&a.kind), "{}", a.kind);
            }
        }
    }
});
