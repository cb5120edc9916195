//! An experiment's case tables: `[[experiment.table]]` is one compare table
//! of a seed, a machine (its `set`) and a parameter (`key`, such as
//! `dbench.clients`) over `values`. Every variant runs at every value: the
//! variant `baseline` at 4 clients of table `numa48` is the case
//! `baseline@numa48/4`, with the table's overrides, then the value, then
//! the variant's own. `[experiment.mmtests]` names the metrics a run
//! reports its samples' mean, stddev and count in. The tables are printed
//! by the front end (python/schedlab/experiment_tables.py).

use serde::Serialize;

use super::doc::{get, join, label, ordered, Checker, Setting, V};
use super::experiment::Variant;
use crate::error::Result;

/// The keys of a `[[experiment.table]]`.
pub const TABLE_KEYS: &[&str] =
    &["name", "title", "set", "key", "values", "published", "published_stdev", "columns", "print", "key_label"];
/// The keys of `[experiment.mmtests]`.
pub const MMTESTS_KEYS: &[&str] = &["mean", "stddev", "count", "hmean"];

/// Published numbers of a table: variant -> metric -> one per value.
type Published = Vec<(String, Vec<(String, Vec<Option<f64>>)>)>;

/// Serialize [`Published`] as nested JSON objects in order.
fn published_json<S: serde::Serializer>(p: &Published, s: S) -> std::result::Result<S::Ok, S::Error> {
    struct Inner<'a>(&'a [(String, Vec<Option<f64>>)]);
    impl Serialize for Inner<'_> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
            ordered(self.0, s)
        }
    }
    let wrapped: Vec<(String, Inner<'_>)> = p.iter().map(|(k, v)| (k.clone(), Inner(v))).collect();
    ordered(&wrapped, s)
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseTable {
    pub name: String,
    pub title: String,
    pub overrides: Vec<Setting>,
    /// The parameter's key, as written.
    pub key: String,
    pub values: Vec<V>,
    /// `TABLE/VALUE`, one per value.
    pub cases: Vec<String>,
    #[serde(serialize_with = "published_json")]
    pub published: Published,
    #[serde(serialize_with = "published_json")]
    pub published_stdev: Published,
    /// The compare tables to print: each a list of variants, first = baseline.
    pub columns: Vec<Vec<String>>,
    /// The metrics to print as the seed's own table instead of mmtests'
    /// compare layout.
    pub print: Vec<String>,
    /// The first column's heading (`print` tables).
    pub key_label: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mmtests {
    pub mean: String,
    pub stddev: String,
    pub count: String,
    /// The throughput whose harmonic mean mmtests prints (empty: none).
    pub hmean: String,
}

/// Which case a variant of the expanded list is.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseOf {
    pub case: String,
    pub table: String,
    pub base: String,
}

/// `[[experiment.table]]` -> the tables, checked against the variants and metrics.
pub fn case_tables(c: &Checker<'_>, raw: Option<&V>, variants: &[&str], metrics: &[&str]) -> Result<Vec<CaseTable>> {
    let raw = match raw {
        None => return Ok(Vec::new()),
        Some(V::Array(xs)) => xs,
        Some(_) => return Err(c.bad("experiment.table", "expected an array of tables", "[[experiment.table]] tables")),
    };
    let mut out: Vec<CaseTable> = Vec::new();
    for (i, t) in raw.iter().enumerate() {
        let path = format!("experiment.table[{i}]");
        let t = c.table(t, &path)?;
        c.keys(t, &path, TABLE_KEYS)?;
        let name = c.str_(t, "name", &path, None)?;
        if name.contains(['/', '@', '.']) || out.iter().any(|x| x.name == name) {
            return Err(c.bad(&join(&path, "name"), format!("{name:?}"), "a unique name without '/', '@' or '.'"));
        }
        let key = c.str_(t, "key", &path, None)?;
        let values = match get(t, "values") {
            Some(V::Array(xs)) if !xs.is_empty() => xs.clone(),
            v => {
                let shown = v.map_or("nothing".to_string(), |v| c.shown(v));
                return Err(c.bad(&join(&path, "values"), shown, "a non-empty array of distinct values"));
            }
        };
        let labels: Vec<String> = values.iter().map(label).collect();
        if let Some(dup) = labels.iter().enumerate().find(|(j, l)| labels[..*j].contains(l)).map(|(_, l)| l) {
            return Err(c.bad(
                &join(&path, "values"),
                format!("{dup} is listed twice"),
                "a non-empty array of distinct values",
            ));
        }
        let published = table_published(c, t, "published", &path, variants, metrics, values.len())?;
        let published_stdev = table_published(c, t, "published_stdev", &path, variants, metrics, values.len())?;
        let all_variants = || vec![variants.iter().map(|v| v.to_string()).collect::<Vec<_>>()];
        let columns = match get(t, "columns") {
            None => all_variants(),
            Some(v) => columns(c, v, &join(&path, "columns"), variants)?,
        };
        let print = match get(t, "print") {
            None => Vec::new(),
            Some(v) => {
                let accepted = format!("an array of metric names: {}", metrics.join(", "));
                let names = match v {
                    V::Array(xs) if xs.iter().all(|x| matches!(x, V::Str(_))) => {
                        c.strings(v, &join(&path, "print"), &accepted)?
                    }
                    _ => return Err(c.bad(&join(&path, "print"), c.shown(v), accepted)),
                };
                if let Some(m) = names.iter().find(|m| !metrics.contains(&m.as_str())) {
                    return Err(c.bad(&join(&path, "print"), format!("unknown metric {m:?}"), accepted));
                }
                names
            }
        };
        let title = c.text(t, "title", &path, &name)?;
        let overrides = c.overrides(get(t, "set"), &join(&path, "set"))?;
        let key_label = c.text(t, "key_label", &path, key.rsplit('.').next().unwrap_or(&key))?;
        let cases = labels.iter().map(|l| format!("{name}/{l}")).collect();
        out.push(CaseTable {
            name,
            title,
            overrides,
            key,
            values,
            cases,
            published,
            published_stdev,
            columns,
            print,
            key_label,
        });
    }
    Ok(out)
}

fn columns(c: &Checker<'_>, v: &V, path: &str, variants: &[&str]) -> Result<Vec<Vec<String>>> {
    let accepted = format!("arrays of variant names: {}", variants.join(", "));
    let bad = || c.bad(path, c.shown(v), accepted.clone());
    let V::Array(cols) = v else { return Err(bad()) };
    cols.iter()
        .map(|col| match col {
            V::Array(xs) if !xs.is_empty() => xs
                .iter()
                .map(|x| match x {
                    V::Str(s) if variants.contains(&s.as_str()) => Ok(s.clone()),
                    _ => Err(bad()),
                })
                .collect(),
            _ => Err(bad()),
        })
        .collect()
}

/// A table's `published`/`published_stdev`: variant -> metric -> one number per value.
fn table_published(
    c: &Checker<'_>,
    t: &[(String, V)],
    key: &str,
    path: &str,
    variants: &[&str],
    metrics: &[&str],
    n: usize,
) -> Result<Published> {
    let path = join(path, key);
    let mut out = Vec::new();
    for (vname, per_metric) in c.table_or_empty(t, key, &path)? {
        let vpath = join(&path, vname);
        if !variants.contains(&vname.as_str()) {
            return Err(c.bad(&vpath, format!("unknown variant {vname:?}"), variants.join(", ")));
        }
        let mut by_metric = Vec::new();
        for (m, nums) in c.table(per_metric, &vpath)? {
            let where_ = join(&vpath, m);
            if !metrics.contains(&m.as_str()) {
                return Err(c.bad(&where_, format!("unknown metric {m:?}"), metrics.join(", ")));
            }
            let accepted = format!("an array of {n} numbers, one per value");
            let xs = match nums {
                V::Array(xs) if xs.len() == n => xs,
                _ => return Err(c.bad(&where_, c.shown(nums), accepted)),
            };
            let parsed = xs
                .iter()
                .map(|x| match x {
                    V::Int(i) => Ok(Some(*i as f64)),
                    V::Float(f) => Ok(Some(*f)),
                    _ => Err(c.bad(&where_, c.shown(nums), accepted.clone())),
                })
                .collect::<Result<Vec<_>>>()?;
            by_metric.push((m.clone(), parsed));
        }
        out.push((vname.clone(), by_metric));
    }
    Ok(out)
}

/// `[experiment.mmtests]`: the metrics that hold a run's samples' mean,
/// stddev and count (and the throughput for Hmean).
pub fn mmtests(c: &Checker<'_>, raw: Option<&V>, metrics: &[&str]) -> Result<Mmtests> {
    let path = "experiment.mmtests";
    let Some(raw) = raw else { return Err(c.missing(path)) };
    let t = c.table(raw, path)?;
    c.keys(t, path, MMTESTS_KEYS)?;
    let mut names = Vec::new();
    for k in MMTESTS_KEYS {
        if *k == "hmean" && get(t, k).is_none() {
            names.push(String::new());
            continue;
        }
        let v = c.str_(t, k, path, None)?;
        if !metrics.contains(&v.as_str()) {
            return Err(c.bad(&join(path, k), format!("unknown metric {v:?}"), metrics.join(", ")));
        }
        names.push(v);
    }
    let [mean, stddev, count, hmean] = <[String; 4]>::try_from(names).unwrap_or_default();
    Ok(Mmtests { mean, stddev, count, hmean })
}

/// The cases of every base variant: in each table at each value, its name
/// (`VARIANT@TABLE/VALUE`), overrides (the table's, the value, the
/// variant's) and published numbers (the table's for that value).
pub fn expand(tables: &[CaseTable], bases: &[Variant], case_of: &mut Vec<(String, CaseOf)>) -> Vec<Variant> {
    let mut out = Vec::new();
    for v in bases {
        for t in tables {
            for (i, (value, case)) in t.values.iter().zip(&t.cases).enumerate() {
                let at = |p: &Published| -> Vec<(String, f64)> {
                    let per = p.iter().find(|(n, _)| *n == v.name).map_or(&[][..], |(_, m)| m.as_slice());
                    per.iter().filter_map(|(m, xs)| xs[i].map(|x| (m.clone(), x))).collect()
                };
                let mut overrides = t.overrides.clone();
                overrides.push(Setting::new(t.key.clone(), value.clone()));
                overrides.extend(v.overrides.iter().cloned());
                let name = format!("{}@{case}", v.name);
                case_of
                    .push((name.clone(), CaseOf { case: case.clone(), table: t.name.clone(), base: v.name.clone() }));
                out.push(Variant {
                    name,
                    title: v.title.clone(),
                    overrides,
                    metrics: v.metrics.clone(),
                    published: at(&t.published),
                    published_stdev: at(&t.published_stdev),
                });
            }
        }
    }
    out
}

/// One piece of a glob pattern.
enum Tok {
    Star,
    Any,
    /// `[...]`: its ranges (a single character is a range of one), negated with `!`.
    Class(Vec<(char, char)>, bool),
    Lit(char),
}

fn tokens(p: &[char]) -> Vec<Tok> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < p.len() {
        match p[i] {
            '*' => out.push(Tok::Star),
            '?' => out.push(Tok::Any),
            '[' => {
                let mut j = i + 1;
                let negate = p.get(j) == Some(&'!');
                if negate {
                    j += 1;
                }
                let start = j;
                let mut ranges = Vec::new();
                while j < p.len() && (p[j] != ']' || j == start) {
                    if j + 2 < p.len() && p[j + 1] == '-' && p[j + 2] != ']' {
                        ranges.push((p[j], p[j + 2]));
                        j += 3;
                    } else {
                        ranges.push((p[j], p[j]));
                        j += 1;
                    }
                }
                if j < p.len() {
                    out.push(Tok::Class(ranges, negate));
                    i = j + 1;
                    continue;
                }
                out.push(Tok::Lit('['));
            }
            c => out.push(Tok::Lit(c)),
        }
        i += 1;
    }
    out
}

/// Python's `fnmatch.fnmatchcase`: `*`, `?`, `[seq]`, `[!seq]` (a `[`
/// without its `]` is itself). Dynamic programming, O(pattern x name).
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let s: Vec<char> = name.chars().collect();
    let toks = tokens(&p);
    // ok[j]: the tokens so far match s[..j].
    let mut ok = vec![false; s.len() + 1];
    ok[0] = true;
    for t in &toks {
        let mut next = vec![false; s.len() + 1];
        match t {
            Tok::Star => {
                let mut any = false;
                for j in 0..=s.len() {
                    any |= ok[j];
                    next[j] = any;
                }
            }
            _ => {
                for j in 1..=s.len() {
                    let c = s[j - 1];
                    let hit = match t {
                        Tok::Any => true,
                        Tok::Lit(l) => *l == c,
                        Tok::Class(r, neg) => r.iter().any(|(a, b)| *a <= c && c <= *b) != *neg,
                        Tok::Star => unreachable!(),
                    };
                    next[j] = ok[j - 1] && hit;
                }
            }
        }
        ok = next;
    }
    ok[s.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_as_fnmatch_does() {
        assert!(glob_match("numa48/*", "numa48/4"));
        assert!(!glob_match("numa48/*", "smp/4"));
        assert!(glob_match("t/?", "t/8") && !glob_match("t/?", "t/16"));
        assert!(glob_match("t/[12]", "t/2") && !glob_match("t/[!12]", "t/2"));
        assert!(glob_match("t/[0-9]", "t/5") && glob_match("a[", "a["));
    }
}
