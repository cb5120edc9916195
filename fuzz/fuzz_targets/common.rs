//! What every fuzz target holds an error to.

use schedlab_core::SimError;

/// A scenario error is the user's: not an internal fault, naming the
/// file, without Rust type names, cut to a readable length.
pub fn check_user_error(e: &SimError) {
    let text = e.to_string();
    assert_ne!(e.code(), "SL900", "internal error: {text}");
    assert!(text.len() < 4096, "a {}-byte message", text.len());
    if e.code().starts_with("SL1") {
        assert!(text.starts_with("fuzz.toml: "), "no file in: {text}");
    }
    // What is accepted is said in the scenario's words (the rest of a
    // message may echo the user's own text, which may say anything; so may
    // a list of the names the scenario itself gave, e.g. its disks, hence
    // whole words only). A syntax error's " near: " echoes the user's
    // text, which may hold "; accepted: " too (in a comment): not ours.
    let ours = match (e.code(), text.split_once(" near: ")) {
        ("SL100", Some((head, _))) => head,
        _ => text.as_str(),
    };
    if let Some((_, accepted)) = ours.rsplit_once("; accepted: ") {
        for rust in ["usize", "i64", "u64", "u32", "i32", "struct ", "a sequence", "a map"] {
            assert!(!has_word(accepted, rust), "Rust words ({rust}) in: {text}");
        }
    }
}

/// `word` occurs in `text` not inside a longer identifier.
fn has_word(text: &str, word: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back().is_none_or(|c| !ident(c));
        let after = text[i + word.len()..].chars().next().is_none_or(|c| !ident(c));
        before && after
    })
}
