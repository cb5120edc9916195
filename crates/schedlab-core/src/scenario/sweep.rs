//! A sweep spec (`schedlab sweep SPEC.toml`), read and checked once, here:
//! the `[sweep]` table's keys, the seeds, the axes (their keys, values,
//! the TOML literal each run is given and the column kind the values go
//! to), the fixed `set` overrides, the metrics (an experiment's grammar)
//! and the size against `max_runs`, computed before anything is expanded.
//! Errors name the file and the key path (SL101, SL102, SL103; the size,
//! SL001). What touches the file system (the scenario's path, the results
//! directory) and the output's own columns stay with the front end.

use std::collections::BTreeSet;

use serde::Serialize;

use super::doc::{self, get, literal, Checker, Setting, Table, V};
use super::experiment::{metrics, Metric};
use super::overrides;
use crate::error::{cut, Result, SimError};

/// `max_runs`' default: a million runs of the smallest scenario take hours
/// on a laptop; a file asking for more is more likely a typo
/// (`seeds = 5000000000`) than a plan.
pub const MAX_RUNS: i64 = 1_000_000;
/// Seeds are int64 in the results' `seed` column.
pub const SEED_MAX: i64 = i64::MAX;
/// Integers a float64 holds exactly.
const EXACT_IN_FLOAT: i64 = 1 << 53;
/// The keys of `[sweep]`.
pub const KEYS: &[&str] = &["scenario", "seeds", "out", "set", "axis", "metrics", "max_runs"];

/// The seeds: `seeds = N` (1..=N, never expanded) or a list.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Seeds {
    Count(i64),
    List(Vec<i64>),
}

impl Seeds {
    pub fn len(&self) -> u128 {
        match self {
            Seeds::Count(n) => *n as u128,
            Seeds::List(xs) => xs.len() as u128,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One swept key.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Axis {
    /// As written (the column's name).
    pub key: String,
    /// The values as written; a non-finite float as its literal text
    /// (`nan`, `inf`, `-inf`: JSON has none).
    pub values: Vec<V>,
    /// Each value as TOML literal text: the override a run is given.
    pub literals: Vec<String>,
    /// The column the values go to: `bool`, `int`, `float` (integers and
    /// floats together, every integer exact), `string`, or `toml` (the
    /// literal text: anything else, and mixes).
    pub kind: &'static str,
    /// The TOML types present, in order of first use.
    pub types: Vec<&'static str>,
}

/// A sweep spec as the front end gets it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepSpec {
    /// A bundled name or a path relative to the spec (resolved by the caller).
    pub scenario: String,
    pub seeds: Seeds,
    /// `sweep.out`, if given (the caller's default: the spec's stem + `.sweep`).
    pub out: Option<String>,
    pub max_runs: i64,
    /// Overrides of every run, in order: `[key, value, literal]`.
    pub set: Vec<Setting>,
    pub axes: Vec<Axis>,
    pub metrics: Vec<Metric>,
}

impl SweepSpec {
    /// Runs in the sweep: the axes' lengths times the seeds, saturating.
    pub fn size(&self) -> u128 {
        self.axes.iter().fold(self.seeds.len(), |n, a| n.saturating_mul(a.values.len() as u128))
    }
}

/// Read and check a sweep spec's text (`file` names it in errors).
pub fn read(text: &str, file: &str) -> Result<SweepSpec> {
    let root = doc::parse(text, file)?;
    let c = Checker { file };
    let sw = match get(&root, "sweep") {
        None => return Err(c.missing("sweep")),
        Some(v) => c.table(v, "sweep")?,
    };
    c.keys(sw, "sweep", KEYS)?;
    let out = match get(sw, "out") {
        None => None,
        Some(V::Str(s)) if !s.is_empty() && !s.contains('\0') => Some(s.clone()),
        Some(v) => return Err(c.bad("sweep.out", c.shown(v), "a directory path (a non-empty string)")),
    };
    let max_runs = match get(sw, "max_runs") {
        None => MAX_RUNS,
        Some(V::Int(n)) if *n >= 1 => *n,
        Some(v) => {
            return Err(c.bad(
                "sweep.max_runs",
                c.shown(v),
                "a positive integer (the most runs this sweep may ask for)",
            ))
        }
    };
    let seeds = seeds(&c, get(sw, "seeds"))?;
    let metrics = metrics(&c, c.table_or_empty(sw, "metrics", "sweep")?, "sweep.metrics")?;
    let axes = axes(&c, get(sw, "axis"))?;
    let scenario = match get(sw, "scenario") {
        None => return Err(c.missing("sweep.scenario")),
        Some(V::Str(s)) if !s.is_empty() && !s.contains('\0') => s.clone(),
        Some(v) => return Err(c.bad("sweep.scenario", c.shown(v), "a bundled scenario's name or a path")),
    };
    let set = match get(sw, "set") {
        Some(v @ V::Table(_)) => c.overrides(Some(v), "sweep.set")?,
        Some(v) => return Err(c.bad("sweep.set", c.shown(v), "a table of overrides: { \"KEY\" = VALUE }")),
        None => Vec::new(),
    };
    let spec = SweepSpec { scenario, seeds, out, max_runs, set, axes, metrics };
    check_size(file, &spec)?;
    Ok(spec)
}

/// The size against `max_runs`, by arithmetic: nothing is expanded before
/// it is known to fit.
fn check_size(file: &str, spec: &SweepSpec) -> Result<()> {
    let size = spec.size();
    if size <= spec.max_runs as u128 {
        return Ok(());
    }
    let mut shape: Vec<String> = spec.axes.iter().map(|a| format!("{} {}", a.values.len(), cut(&a.key, 60))).collect();
    shape.push(format!("{} seeds", spec.seeds.len()));
    let shape = cut(&shape.join(" x "), 200).into_owned();
    let (size_text, raise) = if size == u128::MAX {
        ("more than 2^128".to_string(), String::new())
    } else {
        (thousands(size), format!(": max_runs = {size} in [sweep]"))
    };
    Err(SimError::Usage {
        message: format!(
            "{file}: sweep.max_runs: the sweep is {size_text} runs ({shape}), more than sweep.max_runs = {}; \
             accepted: at most sweep.max_runs runs (fewer values or seeds, or raise the limit{raise})",
            thousands(spec.max_runs as u128)
        ),
    })
}

/// `1234567` -> `1,234,567`.
fn thousands(n: u128) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() * 4 / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

fn seeds(c: &Checker<'_>, v: Option<&V>) -> Result<Seeds> {
    let accepted =
        format!("a count from 1 to {SEED_MAX}, or a non-empty list of distinct integers from 0 to {SEED_MAX}");
    match v {
        None => Ok(Seeds::Count(1)),
        Some(V::Int(n)) if *n >= 1 => Ok(Seeds::Count(*n)),
        Some(V::Array(xs)) if !xs.is_empty() => {
            let mut seen = BTreeSet::new();
            let mut out = Vec::with_capacity(xs.len());
            for x in xs {
                match x {
                    V::Int(s) if *s >= 0 => {
                        if !seen.insert(*s) {
                            return Err(c.bad("sweep.seeds", format!("seed {s} is listed twice"), accepted));
                        }
                        out.push(*s);
                    }
                    _ => return Err(c.bad("sweep.seeds", format!("{} in the list", c.shown(x)), accepted)),
                }
            }
            Ok(Seeds::List(out))
        }
        Some(v) => Err(c.bad("sweep.seeds", c.shown(v), accepted)),
    }
}

fn axes(c: &Checker<'_>, v: Option<&V>) -> Result<Vec<Axis>> {
    let xs = match v {
        None => return Ok(Vec::new()),
        Some(V::Array(xs)) => xs,
        Some(v) => {
            return Err(c.bad("sweep.axis", c.shown(v), "[[sweep.axis]] tables: key = \"KEY\", values = [V, ...]"))
        }
    };
    let mut out: Vec<Axis> = Vec::with_capacity(xs.len());
    let mut seen: Vec<(String, usize)> = Vec::new(); // (canonical key, axis), sorted
    for (i, raw) in xs.iter().enumerate() {
        let p = format!("sweep.axis[{i}]");
        let t = match raw {
            V::Table(t) if t.len() == 2 && get(t, "key").is_some() && get(t, "values").is_some() => t,
            _ => return Err(c.bad(&p, c.shown(raw), "{ key = \"KEY\", values = [V, ...] }")),
        };
        let key = axis_key(c, t, &p)?;
        let norm = overrides::normalize_key(&key).map_err(|why| {
            c.bad(&format!("{p}.key"), format!("{:?}: {why}", cut(&key, 60)), "a dotted scenario key")
        })?;
        match seen.binary_search_by(|(k, _)| k.as_str().cmp(&norm)) {
            Ok(j) => {
                let other = &out[seen[j].1].key;
                return Err(c.bad(
                    &format!("{p}.key"),
                    format!("{:?} is swept twice (also as {:?})", cut(&key, 60), cut(other, 60)),
                    "each key once",
                ));
            }
            Err(j) => seen.insert(j, (norm, i)),
        }
        out.push(axis(c, key, get(t, "values"), &p)?);
    }
    Ok(out)
}

fn axis_key(c: &Checker<'_>, t: &Table, p: &str) -> Result<String> {
    match get(t, "key") {
        Some(V::Str(s)) if !s.is_empty() => Ok(s.clone()),
        Some(v) => Err(c.bad(&format!("{p}.key"), c.shown(v), "a dotted scenario key (a non-empty string)")),
        None => Err(c.missing(&format!("{p}.key"))),
    }
}

fn axis(c: &Checker<'_>, key: String, v: Option<&V>, p: &str) -> Result<Axis> {
    let path = format!("{p}.values");
    let vals = match v {
        Some(V::Array(xs)) if !xs.is_empty() => xs,
        Some(v) => return Err(c.bad(&path, c.shown(v), "a non-empty list")),
        None => return Err(c.missing(&path)),
    };
    let literals: Vec<String> = vals.iter().map(literal).collect();
    let mut seen = BTreeSet::new();
    if let Some(dup) = literals.iter().find(|l| !seen.insert(l.as_str())) {
        return Err(c.bad(&path, format!("{} is listed twice", cut(dup, 80)), "each value once"));
    }
    let mut types: Vec<&'static str> = Vec::new();
    for t in vals.iter().map(toml_type) {
        if !types.contains(&t) {
            types.push(t);
        }
    }
    let kind = axis_kind(vals, &types);
    let values = vals
        .iter()
        .map(|x| match x {
            V::Float(f) if !f.is_finite() => V::Str(literal(x)),
            _ => x.clone(),
        })
        .collect();
    Ok(Axis { key, values, literals, kind, types })
}

/// A value's TOML type, as the results' metadata names it.
pub fn toml_type(v: &V) -> &'static str {
    match v {
        V::Bool(_) => "boolean",
        V::Int(_) => "integer",
        V::Float(_) => "float",
        V::Str(_) => "string",
        V::Array(_) => "array",
        V::Table(_) => "table",
        V::Datetime(d) if d.contains(':') && d.contains('-') => "datetime",
        V::Datetime(d) if d.contains('-') => "date",
        V::Datetime(_) => "time",
    }
}

/// The column an axis's values go to (see [`Axis::kind`]).
fn axis_kind(values: &[V], types: &[&str]) -> &'static str {
    let only = |t: &str| types.len() == 1 && types[0] == t;
    let exact = values.iter().all(|v| !matches!(v, V::Int(i) if i.unsigned_abs() > EXACT_IN_FLOAT as u64));
    if only("boolean") {
        "bool"
    } else if only("integer") {
        "int"
    } else if types.iter().all(|t| matches!(*t, "integer" | "float")) && exact {
        "float"
    } else if only("string") {
        "string"
    } else {
        "toml"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        read(text, "s.toml").unwrap_err().to_string()
    }

    #[test]
    fn a_spec_reads_in_order_with_kinds_and_literals() {
        let s = read(
            "[sweep]\nscenario = \"sched-idle\"\nseeds = 3\nset = { \"measure.duration\" = \"2s\" }\n\
             [[sweep.axis]]\nkey = \"kernel.vm.kswapd_threads\"\nvalues = [1, \"auto\"]\n\
             [[sweep.axis]]\nkey = \"x.y\"\nvalues = [1, 2.5, nan]\n\
             [[sweep.axis]]\nkey = \"task.0.count\"\nvalues = [2, 4]\n",
            "s.toml",
        )
        .unwrap();
        assert_eq!(s.seeds, Seeds::Count(3));
        assert_eq!(s.size(), 3 * 2 * 3 * 2);
        let kinds: Vec<&str> = s.axes.iter().map(|a| a.kind).collect();
        assert_eq!(kinds, ["toml", "float", "int"]);
        assert_eq!(s.axes[0].literals, ["1", "\"auto\""]);
        assert_eq!(s.axes[0].types, ["integer", "string"]);
        assert_eq!(s.axes[1].values[2], V::Str("nan".into()));
        assert_eq!(s.set[0].literal, "\"2s\"");
        assert_eq!(s.max_runs, MAX_RUNS);
    }

    #[test]
    fn bad_specs_name_the_key_path() {
        assert!(err("x = 1").contains("s.toml: sweep: required key is missing"));
        assert!(err("[sweep]\nfrob = 1").contains("sweep.frob: unknown key"));
        assert!(err("[sweep]\nscenario = \"a\"\nseeds = [1, 1]").contains("seed 1 is listed twice"));
        assert!(err("[sweep]\nscenario = \"a\"\nseeds = 0").contains("sweep.seeds: 0; accepted"));
        let two = "[sweep]\nscenario = \"a\"\naxis = [{ key = \"task.0.count\", values = [1] }, \
                   { key = 'task.\"0\".count', values = [2] }]";
        assert!(err(two).contains("sweep.axis[1].key: \"task.\\\"0\\\".count\" is swept twice"), "{}", err(two));
        let dup = "[sweep]\nscenario = \"a\"\naxis = [{ key = \"k\", values = [1, 1] }]";
        assert!(err(dup).contains("sweep.axis[0].values: 1 is listed twice"));
        assert!(err("[sweep]\nseeds = 2").contains("sweep.scenario: required key is missing"));
        assert!(err("[sweep]\nscenario = \"a\"\nseeds = 9223372036854775808").contains("syntax error"));
    }

    #[test]
    fn the_size_is_refused_by_arithmetic() {
        let e = read("[sweep]\nscenario = \"a\"\nseeds = 5000000000\n", "s.toml").unwrap_err();
        assert_eq!(e.code(), "SL001");
        assert!(e.to_string().contains("the sweep is 5,000,000,000 runs (5000000000 seeds)"), "{e}");
        assert!(e.to_string().contains("max_runs = 5000000000 in [sweep]"));
        let many: String = (0..200).map(|i| format!("[[sweep.axis]]\nkey = \"k{i}\"\nvalues = [1, 2, 3]\n")).collect();
        let e = read(&format!("[sweep]\nscenario = \"a\"\n{many}"), "s.toml").unwrap_err();
        assert!(e.to_string().contains("more than 2^128"), "{e}");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(999), "999");
    }
}
