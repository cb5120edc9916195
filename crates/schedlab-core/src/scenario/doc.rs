//! The front door's reading of the files beside a scenario (an
//! experiment's `[experiment]`/`[[variant]]` tables, a sweep spec, the
//! validation suite): TOML read in the order the user wrote it, a checker
//! whose errors name the file and the key path (the scenario's SL101,
//! SL102, SL103), and the one writer of a value as TOML literal text.
//!
//! `toml::Table` is sorted by key; these files need the written order (a
//! later override wins, metrics and variants are reported as listed), so a
//! document is read into [`V`], whose tables keep their pairs in order.
//! Lookups in a table are linear: these tables hold a handful of keys.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

use super::overrides;
use crate::error::{Result, SimError};

/// A table in written order.
pub type Table = Vec<(String, V)>;

/// One TOML value, tables in written order.
#[derive(Debug, Clone, PartialEq)]
pub enum V {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    /// A date or time, as TOML wrote it (a scenario never takes one).
    Datetime(String),
    Array(Vec<V>),
    Table(Table),
}

/// The key under which toml's deserializer hands over a date-time.
const DATETIME_KEY: &str = "$__toml_private_datetime";

impl<'de> Deserialize<'de> for V {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<V, D::Error> {
        d.deserialize_any(VVisitor)
    }
}

struct VVisitor;

impl<'de> Visitor<'de> for VVisitor {
    type Value = V;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a TOML value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> std::result::Result<V, E> {
        Ok(V::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<V, E> {
        Ok(V::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<V, E> {
        i64::try_from(v).map(V::Int).map_err(|_| E::custom("integer out of range"))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<V, E> {
        Ok(V::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<V, E> {
        Ok(V::Str(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> std::result::Result<V, E> {
        Ok(V::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<V, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element()? {
            out.push(v);
        }
        Ok(V::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<V, A::Error> {
        let mut out = Table::new();
        while let Some(k) = map.next_key::<String>()? {
            if k == DATETIME_KEY && out.is_empty() {
                let text: String = map.next_value()?;
                return Ok(V::Datetime(text));
            }
            let v: V = map.next_value()?;
            out.push((k, v));
        }
        Ok(V::Table(out))
    }
}

/// Values cross to Python as JSON, tables in written order. A non-finite
/// float becomes null there (JSON has none); its literal text, which is
/// what a run is given, keeps it.
impl Serialize for V {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            V::Str(x) | V::Datetime(x) => s.serialize_str(x),
            V::Int(x) => s.serialize_i64(*x),
            V::Float(x) => s.serialize_f64(*x),
            V::Bool(x) => s.serialize_bool(*x),
            V::Array(xs) => {
                let mut seq = s.serialize_seq(Some(xs.len()))?;
                for x in xs {
                    seq.serialize_element(x)?;
                }
                seq.end()
            }
            V::Table(t) => Ordered(t).serialize(s),
        }
    }
}

/// Pairs serialized as a JSON object in their order.
pub struct Ordered<'a, T>(pub &'a [(String, T)]);

impl<T: Serialize> Serialize for Ordered<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// `serialize_with` for an ordered `Vec<(String, T)>`.
pub fn ordered<T: Serialize, S: Serializer>(pairs: &[(String, T)], s: S) -> std::result::Result<S::Ok, S::Error> {
    Ordered(pairs).serialize(s)
}

/// Read a file's TOML in written order. SL100 as the scenario's syntax
/// errors read (line, column, the text around it).
pub fn parse(text: &str, file: &str) -> Result<Table> {
    match toml::from_str::<V>(text) {
        Ok(V::Table(t)) => Ok(t),
        Ok(_) => Err(SimError::internal(format!("{file}: a TOML document that is not a table"))),
        Err(e) => Err(SimError::Syntax { file: file.to_string(), message: super::syntax_message(&e, text) }),
    }
}

/// The value under `key` in a table.
pub fn get<'a>(t: &'a [(String, V)], key: &str) -> Option<&'a V> {
    t.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// What a value is, in a message: `an integer`, `a table`.
pub fn type_name(v: &V) -> &'static str {
    match v {
        V::Str(_) => "a string",
        V::Int(_) => "an integer",
        V::Float(_) => "a float",
        V::Bool(_) => "a boolean",
        V::Datetime(_) => "a date-time",
        V::Array(_) => "an array",
        V::Table(_) => "a table",
    }
}

/// A float as Python's `repr` writes it (the shortest text that reads
/// back the same; exponent form below 1e-4 and from 1e16): literal text
/// the same from the core as the front end wrote it before, so a sweep's
/// run ids, hashes of that text, do not move.
pub fn float_text(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    // `{:e}`: the shortest round-trip digits, `d.ddde±x`. When two of that
    // length are as near to x (562949953421312.25: .2 and .3), Rust's
    // shortest mode takes the upper one and repr the even one: x rounded
    // exactly to that many digits (ties to even) is repr's, if it reads back.
    let short = format!("{x:e}");
    let digits = short.split('e').next().map_or(0, |m| m.bytes().filter(u8::is_ascii_digit).count());
    let even = format!("{:.*e}", digits.saturating_sub(1), x);
    let sci = if even.parse::<f64>() == Ok(x) { even } else { short };
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mant) = mant.strip_prefix('-').map_or(("", mant), |m| ("-", m));
    let digits: String = mant.chars().filter(|c| *c != '.').collect();
    if !(-4..16).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let frac = if rest.is_empty() { String::new() } else { format!(".{rest}") };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{first}{frac}e{esign}{:02}", exp.abs());
    }
    if exp < 0 {
        return format!("{sign}0.{}{digits}", "0".repeat((-exp - 1) as usize));
    }
    let point = exp as usize + 1;
    if digits.len() <= point {
        format!("{sign}{digits}{}.0", "0".repeat(point - digits.len()))
    } else {
        format!("{sign}{}.{}", &digits[..point], &digits[point..])
    }
}

/// A value as TOML literal text: `19`, `"1s"`, `[1, 2]`, `{ exp = "1ms" }`.
/// The one writer of override values (a run is given this text).
pub fn literal(v: &V) -> String {
    match v {
        V::Bool(b) => b.to_string(),
        V::Int(i) => i.to_string(),
        V::Float(x) => float_text(*x),
        V::Str(s) => overrides::quote(s),
        V::Datetime(d) => d.clone(),
        V::Array(xs) => format!("[{}]", xs.iter().map(literal).collect::<Vec<_>>().join(", ")),
        V::Table(t) if t.is_empty() => "{}".into(),
        V::Table(t) => {
            let items: Vec<String> =
                t.iter().map(|(k, v)| format!("{} = {}", overrides::format_key(&[k]), literal(v))).collect();
            format!("{{ {} }}", items.join(", "))
        }
    }
}

/// A value as a case label or a message shows it: a string as written,
/// `true`/`false`, a number as Python prints it, anything else as its literal.
pub fn label(v: &V) -> String {
    match v {
        V::Str(s) => s.clone(),
        _ => literal(v),
    }
}

/// One override from a file: the canonical key, the value as written (for
/// reports: an experiment's `params`) and its literal text (what the run is
/// given). Crosses to Python as `[key, value, literal]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    pub key: String,
    pub value: V,
    pub literal: String,
}

impl Setting {
    pub fn new(key: String, value: V) -> Self {
        let literal = literal(&value);
        Setting { key, value, literal }
    }
}

impl Serialize for Setting {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        (&self.key, &self.value, &self.literal).serialize(s)
    }
}

/// Checks a file's tables, its errors in the scenario's words: `FILE: KEY
/// PATH: problem; accepted: what`.
pub struct Checker<'a> {
    pub file: &'a str,
}

/// `path.key`, or `key` at the top.
pub fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

impl Checker<'_> {
    pub fn unknown(&self, path: &str, accepted: &[&str]) -> SimError {
        SimError::UnknownKey { at: super::loc(self.file, path), accepted: accepted.join(", ") }
    }

    pub fn bad(&self, path: &str, message: impl Into<String>, accepted: impl Into<String>) -> SimError {
        SimError::bad_value(self.file, path, message, accepted)
    }

    pub fn missing(&self, path: &str) -> SimError {
        SimError::MissingKey { at: super::loc(self.file, path) }
    }

    /// Every key of `t` is one of `accepted`.
    pub fn keys(&self, t: &[(String, V)], path: &str, accepted: &[&str]) -> Result<()> {
        match t.iter().find(|(k, _)| !accepted.contains(&k.as_str())) {
            Some((k, _)) => Err(self.unknown(&join(path, &crate::error::cut(k, 60)), accepted)),
            None => Ok(()),
        }
    }

    pub fn table<'v>(&self, v: &'v V, path: &str) -> Result<&'v Table> {
        match v {
            V::Table(t) => Ok(t),
            _ => Err(self.bad(path, format!("expected a table, found {}", type_name(v)), "a table")),
        }
    }

    /// `t.key` if it is there (a table), else an empty table.
    pub fn table_or_empty<'v>(&self, t: &'v [(String, V)], key: &str, path: &str) -> Result<&'v [(String, V)]> {
        match get(t, key) {
            None => Ok(&[]),
            Some(v) => self.table(v, &join(path, key)).map(|t| t.as_slice()),
        }
    }

    /// A non-empty string at `t.key` (`default` when absent; missing when
    /// there is none).
    pub fn str_(&self, t: &[(String, V)], key: &str, path: &str, default: Option<&str>) -> Result<String> {
        match (get(t, key), default) {
            (None, Some(d)) => Ok(d.to_string()),
            (None, None) => Err(self.missing(&join(path, key))),
            (Some(V::Str(s)), _) if !s.is_empty() => Ok(s.clone()),
            (Some(v), _) => Err(self.bad(
                &join(path, key),
                format!("expected a non-empty string, found {}", self.shown(v)),
                "a string",
            )),
        }
    }

    /// A string at `t.key`, possibly empty (`default` when absent).
    pub fn text(&self, t: &[(String, V)], key: &str, path: &str, default: &str) -> Result<String> {
        match get(t, key) {
            None => Ok(default.to_string()),
            Some(V::Str(s)) => Ok(s.clone()),
            Some(v) => {
                Err(self.bad(&join(path, key), format!("expected a string, found {}", self.shown(v)), "a string"))
            }
        }
    }

    /// An integer >= `minimum` at `t.key` (`default` when absent).
    pub fn int_(&self, t: &[(String, V)], key: &str, path: &str, default: i64, minimum: i64) -> Result<i64> {
        match get(t, key) {
            None => Ok(default),
            Some(V::Int(i)) if *i >= minimum => Ok(*i),
            Some(v) => Err(self.bad(
                &join(path, key),
                format!("expected an integer >= {minimum}, found {}", self.shown(v)),
                format!("{minimum} or more"),
            )),
        }
    }

    /// A finite number at `t.key` (required).
    pub fn num(&self, t: &[(String, V)], key: &str, path: &str) -> Result<f64> {
        match get(t, key) {
            None => Err(self.missing(&join(path, key))),
            Some(v) => self.num_value(v, &join(path, key)),
        }
    }

    pub fn num_value(&self, v: &V, path: &str) -> Result<f64> {
        match v {
            V::Int(i) => Ok(*i as f64),
            V::Float(x) if x.is_finite() => Ok(*x),
            _ => Err(self.bad(path, format!("expected a number, found {}", self.shown(v)), "a finite number")),
        }
    }

    /// An array of strings at `t.key` (`None` when absent).
    pub fn strings(&self, v: &V, path: &str, accepted: &str) -> Result<Vec<String>> {
        match v {
            V::Array(xs) => xs
                .iter()
                .map(|x| match x {
                    V::Str(s) => Ok(s.clone()),
                    _ => Err(self.bad(path, format!("{} in the array is not a string", self.shown(x)), accepted)),
                })
                .collect(),
            _ => Err(self.bad(path, format!("expected an array of strings, found {}", type_name(v)), accepted)),
        }
    }

    /// An array of tables (`[[path]]`).
    pub fn tables<'v>(&self, v: Option<&'v V>, path: &str) -> Result<Vec<&'v Table>> {
        match v {
            None => Ok(Vec::new()),
            Some(V::Array(xs)) => xs.iter().enumerate().map(|(i, x)| self.table(x, &format!("{path}[{i}]"))).collect(),
            Some(v) => Err(self.bad(
                path,
                format!("expected an array of tables, found {}", type_name(v)),
                format!("[[{path}]] tables"),
            )),
        }
    }

    /// A value as a message echoes it: its literal, cut.
    pub fn shown(&self, v: &V) -> String {
        crate::error::cut(&literal(v), 80).into_owned()
    }

    /// The overrides of a `set = { ... }` table (see [`flatten_set`]).
    pub fn overrides(&self, v: Option<&V>, path: &str) -> Result<Vec<Setting>> {
        let Some(v) = v else { return Ok(Vec::new()) };
        let t = self.table(v, path)?;
        flatten_set(t).map_err(|why| {
            // The key grammar's message says what it accepts itself.
            let (message, accepted) = why.split_once("; accepted: ").unwrap_or((&why, "dotted scenario keys"));
            self.bad(path, message, accepted)
        })
    }
}

/// The pairs of a `set = { ... }` table, keys in canonical form, in order.
///
/// `{"task.ktask.count" = 0}` -> `task.ktask.count = 0`; `{ kernel.ktask.
/// helper_nice = 19 }` (TOML's dotted keys make it nested tables) ->
/// `kernel.ktask.helper_nice = 19`: a bare section name of the scenario
/// (the catalog's top-level tables) whose value is a table is flattened
/// back into one path per leaf, since replacing a whole section through an
/// override is never what is meant. A table under a quoted full path
/// (`"task.0.program.0.run" = { exp = "1ms" }`) stays a table.
pub fn flatten_set(t: &[(String, V)]) -> std::result::Result<Vec<Setting>, String> {
    let sections = super::catalog::sections();
    let mut out = Vec::new();
    for (key, value) in t {
        let segments = overrides::split_key(key)?;
        match value {
            V::Table(inner) if segments.len() == 1 && sections.contains(&segments[0].as_str()) => {
                flatten_into(&mut out, &segments, inner)?
            }
            _ => out.push(Setting::new(overrides::normalize_key(&overrides::format_key(&segments))?, value.clone())),
        }
    }
    Ok(out)
}

fn flatten_into(out: &mut Vec<Setting>, prefix: &[String], t: &[(String, V)]) -> std::result::Result<(), String> {
    for (k, v) in t {
        let mut path = prefix.to_vec();
        path.push(k.clone());
        match v {
            V::Table(inner) => flatten_into(out, &path, inner)?,
            // kernel.sysctl.kernel.sched_migration_cost_ns, nested by TOML's
            // dotted keys, is one sysctl name: normalize_key merges it back.
            _ => out.push(Setting::new(overrides::normalize_key(&overrides::format_key(&path))?, v.clone())),
        }
    }
    Ok(())
}

/// A dotted scenario key in canonical form (as a `set` table's would be).
pub fn canonical_key(key: &str) -> std::result::Result<String, String> {
    overrides::normalize_key(&overrides::format_key(&overrides::split_key(key)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_read_as_python_prints_them() {
        for (x, text) in [
            (1.0, "1.0"),
            (43.04, "43.04"),
            (100.0, "100.0"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (123456789012345.6, "123456789012345.6"),
            (-0.0, "-0.0"),
            (-2.5, "-2.5"),
            (562949953421312.2, "562949953421312.2"),
            (f64::INFINITY, "inf"),
        ] {
            assert_eq!(float_text(x), text);
        }
    }

    #[test]
    fn order_is_kept_and_sets_flatten() {
        let t = parse("z = 1\na = { y = 2, b = [1.5, \"x\"] }\n", "f.toml").unwrap();
        assert_eq!(t.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(), ["z", "a"]);
        assert_eq!(literal(get(&t, "a").unwrap()), "{ y = 2, b = [1.5, \"x\"] }");
        let s = parse(
            "set = { kernel.ktask.helper_nice = 19, \"task.0.program.0.run\" = { exp = \"1ms\" }, \
             kernel.sysctl.kernel.sched_migration_cost_ns = 0 }",
            "f",
        )
        .unwrap();
        let V::Table(set) = get(&s, "set").unwrap() else { panic!() };
        let keys: Vec<String> = flatten_set(set).unwrap().into_iter().map(|s| s.key).collect();
        // TOML's dotted keys build the `kernel` table where it first appears.
        let sysctl = "kernel.sysctl.\"kernel.sched_migration_cost_ns\"";
        assert_eq!(keys, ["kernel.ktask.helper_nice", sysctl, "task.0.program.0.run"]);
        assert!(matches!(parse("a = [", "f.toml"), Err(SimError::Syntax { .. })));
    }
}
