//! The override grammar, the one source of it: `--set KEY=VALUE` on every
//! command line (`schedlab run`, `schedlab-runner`, the examples), the
//! Python API's overrides and an experiment's `set` tables all end up as
//! (canonical key, TOML literal) pairs applied to the scenario's TOML tree.
//! The Python front end calls these functions through the binding; it keeps
//! only its argument parsing.
//!
//! * KEY is TOML's dotted-key syntax: bare segments of letters, digits, `_`
//!   and `-` (`task.0.nice`), or quoted ones, one key even with dots inside
//!   (`kernel.sysctl."kernel.sched_migration_cost_ns"`, `'vm.x'`). Array
//!   elements go by index or by their `name` key (`task.ktask.count`).
//!   Everything after `kernel.sysctl.` is one sysctl name, so
//!   `kernel.sysctl.kernel.sched_migration_cost_ns` is quoted for the user.
//! * VALUE is a TOML literal when it is exactly one (`19`, `true`,
//!   `[0, 1]`, `{ exp = "1ms" }`, `"x"`), else a string (`20ms`, `0-3`);
//!   `kernel.version` is always the string as typed (6.10 is not 6.1).
//! * The first `=` outside quotes separates KEY from VALUE.

use crate::error::{Location, Result, SimError};

/// What a key may look like, for error messages.
pub const KEY_ACCEPTED: &str = "accepted: dot-separated segments of letters, digits, '_' and '-', or quoted segments \
     (task.0.nice, task.ktask.count, kernel.sysctl.\"kernel.sched_migration_cost_ns\")";

/// Keys whose value is always a string, taken as written on the command line.
const STRING_KEYS: &[&str] = &["kernel.version"];

/// Python's repr() of a string, so messages read the same from every door.
fn repr(s: &str) -> String {
    let q = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(q);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c == q => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push(q);
    out
}

fn is_bare(seg: &str) -> bool {
    !seg.is_empty() && seg.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// `kernel.sysctl."a.b"` -> `["kernel", "sysctl", "a.b"]`.
pub fn split_key(key: &str) -> std::result::Result<Vec<String>, String> {
    let chars: Vec<char> = key.chars().collect();
    let n = chars.len();
    let blank = |c: char| c == ' ' || c == '\t';
    let mut segments = Vec::new();
    let mut i = 0;
    loop {
        while i < n && blank(chars[i]) {
            i += 1;
        }
        if i >= n {
            return Err(format!("key {} has an empty segment; {KEY_ACCEPTED}", repr(key)));
        }
        let seg;
        if chars[i] == '"' || chars[i] == '\'' {
            (seg, i) = quoted_segment(key, &chars, i)?;
        } else {
            let j = (i..n).find(|&j| chars[j] == '.' || blank(chars[j])).unwrap_or(n);
            seg = chars[i..j].iter().collect::<String>();
            if !is_bare(&seg) {
                return Err(format!("key {} has a bad segment {}; {KEY_ACCEPTED}", repr(key), repr(&seg)));
            }
            i = j;
        }
        segments.push(seg);
        while i < n && blank(chars[i]) {
            i += 1;
        }
        if i >= n {
            return Ok(segments);
        }
        if chars[i] != '.' {
            return Err(format!("key {}: unexpected {}; {KEY_ACCEPTED}", repr(key), repr(&chars[i].to_string())));
        }
        i += 1;
    }
}

/// A quoted segment starting at `chars[i]`: `"..."` with TOML's basic
/// escapes, or `'...'` taken literally. Returns it and the index after it.
fn quoted_segment(key: &str, chars: &[char], mut i: usize) -> std::result::Result<(String, usize), String> {
    let quote = chars[i];
    i += 1;
    let mut out = String::new();
    while i < chars.len() {
        let c = chars[i];
        if c == quote {
            return Ok((out, i + 1));
        }
        if c == '\\' && quote == '"' {
            let esc = match chars.get(i + 1) {
                Some('"') => '"',
                Some('\\') => '\\',
                Some('n') => '\n',
                Some('t') => '\t',
                Some('r') => '\r',
                Some('b') => '\u{8}',
                Some('f') => '\u{c}',
                _ => return Err(format!("key {}: bad escape in a quoted segment; {KEY_ACCEPTED}", repr(key))),
            };
            out.push(esc);
            i += 2;
            continue;
        }
        out.push(c);
        i += 1;
    }
    Err(format!("key {}: unterminated quote; {KEY_ACCEPTED}", repr(key)))
}

/// A TOML basic string.
pub fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `["kernel", "sysctl", "a.b"]` -> `kernel.sysctl."a.b"`: quotes only what
/// needs it.
pub fn format_key<S: AsRef<str>>(segments: &[S]) -> String {
    let parts: Vec<String> =
        segments.iter().map(|s| if is_bare(s.as_ref()) { s.as_ref().to_string() } else { quote(s.as_ref()) }).collect();
    parts.join(".")
}

/// Everything after `kernel.sysctl.` is one sysctl name.
fn sysctl_merge(mut segments: Vec<String>) -> Vec<String> {
    if segments.len() > 3 && segments[0] == "kernel" && segments[1] == "sysctl" {
        let name = segments[2..].join(".");
        segments.truncate(2);
        segments.push(name);
    }
    segments
}

/// The segments of a key as the scenario tree is addressed (split, with the
/// sysctl rule applied).
pub fn key_segments(key: &str) -> std::result::Result<Vec<String>, String> {
    split_key(key).map(sysctl_merge)
}

/// The canonical form of a key.
pub fn normalize_key(key: &str) -> std::result::Result<String, String> {
    key_segments(key).map(|s| format_key(&s))
}

/// The value of `--set key=value` as TOML literal text: passed through when
/// it is exactly one TOML value, otherwise quoted as a string.
pub fn value_literal(text: &str) -> String {
    match format!("v = {text}").parse::<toml::Table>() {
        Ok(t) if t.len() == 1 && t.contains_key("v") => text.trim().to_string(),
        _ => quote(text),
    }
}

/// The first `=` outside quotes.
fn first_unquoted_eq(text: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    for (i, c) in text.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '=' => return Some(i),
            None => {}
        }
    }
    None
}

/// `task.0.nice=19` -> (`task.0.nice`, `19`): the canonical key and the
/// value as TOML literal text. The error is the whole message (SL001).
pub fn parse_set(arg: &str) -> std::result::Result<(String, String), String> {
    let Some(eq) = first_unquoted_eq(arg) else {
        return Err(format!(
            "--set {}: expected KEY=VALUE; accepted: e.g. --set task.0.nice=19, --set measure.duration=2s, \
             --set 'kernel.sysctl.\"kernel.sched_migration_cost_ns\"=0'",
            repr(arg)
        ));
    };
    let (key, value) = (arg[..eq].trim(), &arg[eq + 1..]);
    let key = normalize_key(key).map_err(|e| format!("--set {}: {e}", repr(arg)))?;
    let v = value.trim();
    if STRING_KEYS.contains(&key.as_str()) && !(v.starts_with('"') || v.starts_with('\'')) {
        // A version reads as a TOML float (6.1), and 6.10 would become 6.1.
        return Ok((key, quote(v)));
    }
    Ok((key, value_literal(value)))
}

/// An override value as the scenario reads it: a TOML literal if it is one,
/// else a string.
pub(crate) fn parse_literal(v: &str) -> toml::Value {
    match format!("v = {v}").parse::<toml::Table>() {
        Ok(mut t) if t.len() == 1 => t.remove("v").unwrap_or_else(|| toml::Value::String(v.to_string())),
        _ => toml::Value::String(v.to_string()),
    }
}

fn set_path(node: &mut toml::Value, segs: &[String], value: toml::Value) -> std::result::Result<(), String> {
    let Some((seg, rest)) = segs.split_first() else { return Ok(()) };
    match node {
        toml::Value::Table(t) => {
            if rest.is_empty() {
                t.insert(seg.clone(), value);
                Ok(())
            } else {
                let child = t.entry(seg.clone()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
                set_path(child, rest, value)
            }
        }
        toml::Value::Array(a) => {
            let idx = match seg.parse::<usize>() {
                Ok(i) if i < a.len() => i,
                Ok(i) => return Err(format!("index {i} is past the end (length {})", a.len())),
                Err(_) => a
                    .iter()
                    .position(|e| e.get("name").and_then(|x| x.as_str()) == Some(seg.as_str()))
                    .ok_or_else(|| format!("no element named \"{seg}\""))?,
            };
            if rest.is_empty() {
                a[idx] = value;
                Ok(())
            } else {
                set_path(&mut a[idx], rest, value)
            }
        }
        _ => Err(format!("\"{seg}\" is below a value that is not a table or array")),
    }
}

/// Apply one override (`key`, TOML literal text) to a scenario's TOML tree.
pub(crate) fn apply_override(root: &mut toml::Table, key: &str, value: &str, file: &str) -> Result<()> {
    let at = |m: String| SimError::BadValue {
        at: Location { file: file.to_string(), key: key.to_string() },
        message: m,
        accepted: "a path of tables and arrays (array elements by index or by name; quote segments containing dots)"
            .into(),
    };
    let segs = key_segments(key).map_err(at)?;
    let mut tree = toml::Value::Table(std::mem::take(root));
    let r = set_path(&mut tree, &segs, parse_literal(value));
    if let toml::Value::Table(t) = tree {
        *root = t;
    }
    r.map_err(|m| at(format!("override: {m}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_split_with_quotes() {
        assert_eq!(split_key("a.b.c").unwrap(), vec!["a", "b", "c"]);
        assert_eq!(
            split_key("kernel.sysctl.\"kernel.sched_nr_migrate\"").unwrap(),
            vec!["kernel", "sysctl", "kernel.sched_nr_migrate"]
        );
        assert_eq!(split_key("a . \"b c\" . d").unwrap(), vec!["a", "b c", "d"]);
        assert_eq!(split_key("'vm.x'").unwrap(), vec!["vm.x"]);
        for bad in ["", "a..b", "a.", ".a", "a.\"b", "a.b c", "a/b", "a.$"] {
            assert!(split_key(bad).unwrap_err().contains("accepted"), "{bad}");
        }
    }

    #[test]
    fn canonical_keys() {
        assert_eq!(
            normalize_key("kernel.sysctl.kernel.sched_migration_cost_ns").unwrap(),
            "kernel.sysctl.\"kernel.sched_migration_cost_ns\""
        );
        assert_eq!(normalize_key("\"task\".0 . nice").unwrap(), "task.0.nice");
        assert_eq!(format_key(&["a b", "q\""]), "\"a b\".\"q\\\"\"");
    }

    #[test]
    fn values_and_set_args() {
        assert_eq!(value_literal(" 7 "), "7");
        assert_eq!(value_literal("20ms"), "\"20ms\"");
        assert_eq!(value_literal("1\nw = 2"), "\"1\\nw = 2\"");
        assert_eq!(parse_set("kernel.version=6.10").unwrap(), ("kernel.version".into(), "\"6.10\"".into()));
        assert_eq!(parse_set("kernel.sysctl.\"a=b\"=1").unwrap(), ("kernel.sysctl.\"a=b\"".into(), "1".into()));
        assert_eq!(parse_set("name=a=b").unwrap(), ("name".into(), "\"a=b\"".into()));
        assert!(parse_set("task.0.nice").unwrap_err().starts_with("--set 'task.0.nice': expected KEY=VALUE"));
    }

    #[test]
    fn literals() {
        assert_eq!(parse_literal("19"), toml::Value::Integer(19));
        assert_eq!(parse_literal("\"20ms\""), toml::Value::String("20ms".into()));
        assert_eq!(parse_literal("20ms"), toml::Value::String("20ms".into()));
        assert_eq!(parse_literal("true"), toml::Value::Boolean(true));
    }
}
