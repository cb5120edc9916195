//! The scenario parser and compiler on arbitrary text: never a panic, and
//! every error a user error that names the file, in the scenario's words,
//! and of a readable length.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Err(e) = schedlab_core::scenario::load(text, "fuzz.toml", &[]) {
        common::check_user_error(&e);
    }
});
