//! The rt-app JSON reader and converter on arbitrary text, then the
//! scenario's validator on what it built (machine and kernel given as
//! `schedlab run WORKLOAD.json --machine uma8 --kernel 6.1` gives them):
//! never a panic, never a stack overflow however deep the nesting, and
//! every error a user error that names the file and the rt-app key.
#![no_main]

use libfuzzer_sys::fuzz_target;
use schedlab_core::scenario::{load_as, Format};

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let overrides = [
        ("machine.preset".to_string(), "\"uma8\"".to_string()),
        ("kernel.version".to_string(), "\"6.1\"".to_string()),
    ];
    if let Err(e) = load_as(text, "fuzz.toml", Format::RtApp, &overrides) {
        common::check_user_error(&e);
    }
});
