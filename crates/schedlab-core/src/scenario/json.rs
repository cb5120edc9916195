//! JSON as rt-app reads it (json-c's non-strict tokener): `//` and `/* */`
//! comments and trailing commas are accepted, and a key given twice keeps
//! one entry, its last value, in its first place. Used for rt-app workloads
//! (`rtapp.rs`); the simulator's own files are TOML.
//!
//! The reader is a recursive descent bounded by [`MAX_DEPTH`]: a file of
//! 100,000 nested brackets is refused at the 65th, before the stack grows.
//! Numbers keep the text the user wrote (`1e24` stays `1e24` in a message;
//! an integer of 5,000 digits is kept, not rounded), and a string keeps a
//! lone surrogate escape (`"\ud800"`, which is no Unicode text) as a mark
//! beside the text, so that the caller can refuse it by name. O(n) in the
//! text's length (keys are deduplicated through a map per object).

use std::collections::BTreeMap;

use crate::error::{Result, SimError};

/// The deepest nesting of arrays and objects read (a real rt-app file has
/// five levels: tasks, a task, phases, a phase, a timer).
pub const MAX_DEPTH: usize = 64;

/// A JSON string: its text, with U+FFFD standing for each lone surrogate
/// escape, whose code and byte offset in `text` are kept in `lone`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct JStr {
    pub text: String,
    pub lone: Vec<(usize, u16)>,
}

impl JStr {
    pub fn plain(text: &str) -> Self {
        JStr { text: text.to_string(), lone: Vec::new() }
    }

    /// The text, if it is Unicode text (no lone surrogate).
    pub fn as_text(&self) -> Option<&str> {
        self.lone.is_empty().then_some(self.text.as_str())
    }

    /// As a JSON string literal: `"…"` with `\"`, `\\`, the control
    /// characters and each lone surrogate escaped; everything else as itself.
    pub fn quoted(&self) -> String {
        let mut out = String::with_capacity(self.text.len() + 2);
        out.push('"');
        let mut lone = self.lone.iter().peekable();
        for (i, c) in self.text.char_indices() {
            if let Some(&&(at, code)) = lone.peek() {
                if at == i {
                    lone.next();
                    out.push_str(&format!("\\u{code:04x}"));
                    continue;
                }
            }
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }

    /// As one segment of a key path: as written when it is printable text
    /// without white space at its ends, else quoted as a JSON string
    /// (`tasks."t\ud800"`, `tasks.""`).
    pub fn segment(&self) -> String {
        let printable = |c: char| !c.is_control() && (c == ' ' || !c.is_whitespace()) && !is_format(c);
        let plain = self.lone.is_empty()
            && !self.text.is_empty()
            && self.text.trim() == self.text
            && !self.text.contains('"')
            && self.text.chars().all(printable);
        if plain {
            self.text.clone()
        } else {
            self.quoted()
        }
    }
}

/// Unicode's format characters a path would not show (zero-width spaces,
/// direction marks and overrides, the byte order mark).
fn is_format(c: char) -> bool {
    matches!(c as u32, 0xAD | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064 | 0xFEFF)
}

/// A JSON value. Objects keep their keys in first-written order.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    /// The number as written (`-1`, `1e24`, `10.5`, `NaN`).
    Num(String),
    Str(JStr),
    Array(Vec<Json>),
    Object(Vec<(JStr, Json)>),
}

impl Json {
    /// The integer this number is, when written as one (no `.`, no
    /// exponent) and within i128.
    pub fn as_int(&self) -> Option<i128> {
        match self {
            Json::Num(t) if !t.contains(['.', 'e', 'E']) => t.parse().ok(),
            _ => None,
        }
    }

    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(kv) => kv.iter().find(|(k, _)| k.lone.is_empty() && k.text == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&[(JStr, Json)]> {
        match self {
            Json::Object(kv) => Some(kv),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => s.as_text(),
            _ => None,
        }
    }

    /// Python's truth value, which rt-app's reader of booleans resembles:
    /// false for null, false, 0, "", [] and {}.
    pub fn truthy(&self) -> bool {
        match self {
            Json::Null => false,
            Json::Bool(b) => *b,
            Json::Num(t) => t.trim_start_matches('-').chars().any(|c| c.is_ascii_digit() && c != '0'),
            Json::Str(s) => !s.text.is_empty(),
            Json::Array(a) => !a.is_empty(),
            Json::Object(o) => !o.is_empty(),
        }
    }

    /// The value for a message: a scalar as JSON writes it, cut; a
    /// container by its kind and size (never its whole, possibly huge, text).
    pub fn show(&self) -> String {
        match self {
            Json::Object(o) => format!("an object of {} key(s)", o.len()),
            Json::Array(a) => format!("a list of {} item(s)", a.len()),
            other => crate::error::cut(&other.to_json(), 80).into_owned(),
        }
    }

    /// Strict JSON text (a lone surrogate kept as its `\uXXXX` escape).
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Num(t) => out.push_str(t),
            Json::Str(s) => out.push_str(&s.quoted()),
            Json::Array(a) => {
                out.push('[');
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    v.write(out);
                }
                out.push(']');
            }
            Json::Object(o) => {
                out.push('{');
                for (i, (k, v)) in o.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(&k.quoted());
                    out.push_str(": ");
                    v.write(out);
                }
                out.push('}');
            }
        }
    }
}

/// Read `text` as json-c reads an rt-app file. Errors are SL100 naming the
/// file, the line and the column.
pub fn parse(text: &str, file: &str) -> Result<Json> {
    let mut p = Parser { s: text.as_bytes(), text, i: 0, file };
    let v = p.value(0)?;
    p.blank()?;
    if p.i < p.s.len() {
        return Err(p.error("text after the end of the document"));
    }
    Ok(v)
}

struct Parser<'a> {
    s: &'a [u8],
    text: &'a str,
    i: usize,
    file: &'a str,
}

impl Parser<'_> {
    fn error(&self, why: &str) -> SimError {
        let at = self.i.min(self.text.len());
        // `at` may sit inside a multi-byte character: back to its start.
        let at = (0..=at).rev().find(|&j| self.text.is_char_boundary(j)).unwrap_or(0);
        let line_start = self.text[..at].rfind('\n').map_or(0, |j| j + 1);
        let line = self.text[..at].matches('\n').count() + 1;
        let col = self.text[line_start..at].chars().count() + 1;
        SimError::Syntax {
            file: self.file.to_string(),
            message: format!("line {line}, column {col}: not rt-app JSON: {why}"),
        }
    }

    /// White space and comments.
    fn blank(&mut self) -> Result<()> {
        loop {
            match self.s.get(self.i) {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.i += 1,
                Some(b'/') if self.s.get(self.i + 1) == Some(&b'/') => {
                    self.i = self.s[self.i..].iter().position(|&c| c == b'\n').map_or(self.s.len(), |n| self.i + n);
                }
                Some(b'/') if self.s.get(self.i + 1) == Some(&b'*') => {
                    let body = &self.s[self.i + 2..];
                    match body.windows(2).position(|w| w == b"*/") {
                        Some(n) => self.i += 2 + n + 2,
                        None => return Err(self.error("a /* comment that is never closed")),
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json> {
        self.blank()?;
        match self.s.get(self.i) {
            None => Err(self.error("the document ends where a value was expected")),
            Some(b'{' | b'[') if depth >= MAX_DEPTH => Err(self.error(&format!(
                "arrays and objects nested deeper than {MAX_DEPTH} levels; accepted: an rt-app file (tasks, \
                 phases, events: five levels)"
            ))),
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => Ok(Json::Str(self.string()?)),
            Some(b't') if self.s[self.i..].starts_with(b"true") => {
                self.i += 4;
                Ok(Json::Bool(true))
            }
            Some(b'f') if self.s[self.i..].starts_with(b"false") => {
                self.i += 5;
                Ok(Json::Bool(false))
            }
            Some(b'n') if self.s[self.i..].starts_with(b"null") => {
                self.i += 4;
                Ok(Json::Null)
            }
            Some(b'-' | b'0'..=b'9' | b'N' | b'I') => self.number(),
            Some(_) => {
                Err(self.error("expected a value (an object, an array, a string, a number, true, false or null)"))
            }
        }
    }

    fn number(&mut self) -> Result<Json> {
        let start = self.i;
        // NaN and ±Infinity, as Python's reader (and json-c's) take them; a
        // number the simulator cannot use is refused later, by its key.
        for word in ["NaN", "Infinity", "-Infinity"] {
            if self.s[self.i..].starts_with(word.as_bytes()) {
                self.i += word.len();
                return Ok(Json::Num(word.to_string()));
            }
        }
        let digits = |p: &mut Self| {
            let from = p.i;
            while p.s.get(p.i).is_some_and(u8::is_ascii_digit) {
                p.i += 1;
            }
            p.i > from
        };
        if self.s.get(self.i) == Some(&b'-') {
            self.i += 1;
        }
        let int_start = self.i;
        if !digits(self) {
            return Err(self.error("a number without digits"));
        }
        if self.s[int_start] == b'0' && self.i - int_start > 1 {
            self.i = int_start;
            return Err(self.error("a number with a leading zero"));
        }
        if self.s.get(self.i) == Some(&b'.') {
            self.i += 1;
            if !digits(self) {
                return Err(self.error("a number without digits after its '.'"));
            }
        }
        if matches!(self.s.get(self.i), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.s.get(self.i), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if !digits(self) {
                return Err(self.error("a number without digits in its exponent"));
            }
        }
        Ok(Json::Num(self.text[start..self.i].to_string()))
    }

    fn hex4(&mut self) -> Result<u16> {
        let h = self.s.get(self.i..self.i + 4).and_then(|h| std::str::from_utf8(h).ok());
        match h.and_then(|h| u16::from_str_radix(h, 16).ok()) {
            Some(v) if h.is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit())) => {
                self.i += 4;
                Ok(v)
            }
            _ => Err(self.error("a \\u escape without four hex digits")),
        }
    }

    fn string(&mut self) -> Result<JStr> {
        self.i += 1; // the opening quote
        let mut out = JStr::default();
        loop {
            let Some(&c) = self.s.get(self.i) else { return Err(self.error("a string that is never closed")) };
            match c {
                b'"' => {
                    self.i += 1;
                    return Ok(out);
                }
                b'\\' => {
                    self.i += 1;
                    let Some(&e) = self.s.get(self.i) else { return Err(self.error("a string that is never closed")) };
                    self.i += 1;
                    match e {
                        b'"' => out.text.push('"'),
                        b'\\' => out.text.push('\\'),
                        b'/' => out.text.push('/'),
                        b'b' => out.text.push('\u{8}'),
                        b'f' => out.text.push('\u{c}'),
                        b'n' => out.text.push('\n'),
                        b'r' => out.text.push('\r'),
                        b't' => out.text.push('\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            let pair =
                                (0xD800..0xDC00).contains(&hi) && self.s.get(self.i..self.i + 2) == Some(b"\\u") && {
                                    let save = self.i;
                                    self.i += 2;
                                    let lo = self.hex4();
                                    match lo {
                                        Ok(lo) if (0xDC00..0xE000).contains(&lo) => {
                                            let c =
                                                0x10000 + ((u32::from(hi) - 0xD800) << 10) + (u32::from(lo) - 0xDC00);
                                            out.text.push(char::from_u32(c).unwrap_or('\u{FFFD}'));
                                            true
                                        }
                                        _ => {
                                            self.i = save;
                                            false
                                        }
                                    }
                                };
                            if !pair {
                                match char::from_u32(u32::from(hi)) {
                                    Some(c) => out.text.push(c),
                                    None => {
                                        out.lone.push((out.text.len(), hi));
                                        out.text.push('\u{FFFD}');
                                    }
                                }
                            }
                        }
                        _ => {
                            self.i -= 1;
                            return Err(self.error("an unknown escape in a string"));
                        }
                    }
                }
                0x00..=0x1f => return Err(self.error("a control character inside a string (write it as \\uXXXX)")),
                _ => {
                    // A run of plain bytes up to the next quote, escape or
                    // control character: the text is UTF-8, and these bytes
                    // end on a character boundary.
                    let end = self.s[self.i..]
                        .iter()
                        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                        .map_or(self.s.len(), |n| self.i + n);
                    out.text.push_str(&self.text[self.i..end]);
                    self.i = end;
                }
            }
        }
    }

    /// After an element: `,` (and then maybe the closing bracket, a trailing
    /// comma) or the closing bracket. True when the container has ended.
    fn next_or_close(&mut self, close: u8, what: &str) -> Result<bool> {
        self.blank()?;
        match self.s.get(self.i) {
            Some(&c) if c == close => {
                self.i += 1;
                Ok(true)
            }
            Some(b',') => {
                self.i += 1;
                self.blank()?;
                if self.s.get(self.i) == Some(&close) {
                    self.i += 1; // a trailing comma
                    return Ok(true);
                }
                Ok(false)
            }
            _ => Err(self.error(&format!("expected ',' or '{}' in {what}", close as char))),
        }
    }

    fn array(&mut self, depth: usize) -> Result<Json> {
        self.i += 1;
        let mut items = Vec::new();
        self.blank()?;
        if self.s.get(self.i) == Some(&b']') {
            self.i += 1;
            return Ok(Json::Array(items));
        }
        loop {
            items.push(self.value(depth)?);
            if self.next_or_close(b']', "an array")? {
                return Ok(Json::Array(items));
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Json> {
        self.i += 1;
        let mut entries: Vec<(JStr, Json)> = Vec::new();
        // json-c: a key given twice keeps its first place and its last value.
        let mut index: BTreeMap<String, usize> = BTreeMap::new();
        self.blank()?;
        if self.s.get(self.i) == Some(&b'}') {
            self.i += 1;
            return Ok(Json::Object(entries));
        }
        loop {
            self.blank()?;
            if self.s.get(self.i) != Some(&b'"') {
                return Err(self.error("expected a key (a string in double quotes)"));
            }
            let key = self.string()?;
            self.blank()?;
            if self.s.get(self.i) != Some(&b':') {
                return Err(self.error("expected ':' after a key"));
            }
            self.i += 1;
            let v = self.value(depth)?;
            match index.get(&key.quoted()) {
                Some(&at) => entries[at].1 = v,
                None => {
                    index.insert(key.quoted(), entries.len());
                    entries.push((key, v));
                }
            }
            if self.next_or_close(b'}', "an object")? {
                return Ok(Json::Object(entries));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(v: &Json) -> Vec<String> {
        v.as_object().unwrap().iter().map(|(k, _)| k.text.clone()).collect()
    }

    #[test]
    fn lenient_as_json_c() {
        let v = parse("{ /* c */ \"t\": { \"run\": 1, // line\n \"run\": 2, \"sleep\": 3, }, }", "x.json").unwrap();
        let t = v.get("t").unwrap();
        assert_eq!(keys(t), ["run", "sleep"]);
        assert_eq!(t.get("run").unwrap().as_int(), Some(2));
    }

    #[test]
    fn strings_are_kept_exactly() {
        let v = parse(r#"{"a,]": "\ud83d\ude00", "b": "m\udfff", "c": "t😀"}"#, "x").unwrap();
        assert_eq!(keys(&v), ["a,]", "b", "c"]);
        assert_eq!(v.get("a,]").unwrap().as_str(), Some("😀"));
        assert_eq!(v.get("c").unwrap().as_str(), Some("t😀"));
        let Json::Str(s) = v.get("b").unwrap() else { panic!() };
        assert_eq!(s.as_text(), None);
        assert_eq!(s.quoted(), r#""m\udfff""#);
    }

    #[test]
    fn numbers_keep_their_text() {
        let v = parse("[1e24, -1, 99999999999999999999999999999999999999999999, 1.5]", "x").unwrap();
        let Json::Array(a) = v else { panic!() };
        assert_eq!(a[0], Json::Num("1e24".into()));
        assert_eq!(a[0].as_int(), None);
        assert_eq!(a[1].as_int(), Some(-1));
        assert_eq!(a[2].as_int(), None);
    }

    #[test]
    fn deep_nesting_is_refused_without_recursing() {
        let deep = format!("{{\"tasks\": {}{}}}", "[".repeat(100_000), "]".repeat(100_000));
        let e = parse(&deep, "deep.json").unwrap_err();
        assert_eq!(e.code(), "SL100");
        assert!(e.to_string().contains("nested deeper than 64 levels"), "{e}");
    }

    #[test]
    fn errors_say_where() {
        let e = parse("{\"tasks\": {\n \"t\": {\"run\": }}}", "x.json").unwrap_err();
        assert!(e.to_string().starts_with("x.json: syntax error: line 2, column 15: not rt-app JSON"), "{e}");
        assert!(parse("{\"a\": 1,, }", "x").is_err());
        assert!(parse("{\"a\": \"x", "x").is_err());
    }
}
