//! An experiment's schema: the `[experiment]` and `[[variant]]` tables of a
//! scenario file, which [`super::tree`] drops before the scenario is
//! validated. Read and checked here, once, with the scenario's error codes
//! and key paths; the front end gets the [`Experiment`] (as JSON, through
//! `schedlab._native.experiment`) and runs it: variants x seeds, metrics
//! from the reports, bands (python/schedlab/experiment.py).
//!
//! * `[[variant]]`: a name, a `set` table of overrides (any scenario key),
//!   the metrics it reports, the seed's `published` numbers.
//! * `[experiment.metrics]`: where each metric is in a report ([`Metric`]).
//! * `[[experiment.derive]]`: a workload size solved before the variants.
//! * `[[experiment.band]]`: acceptance bands over the means; a band names a
//!   metric as `VARIANT.METRIC` or, with case tables, `VARIANT.METRIC@CASE`.
//! * `[[experiment.table]]` (`experiment_table.rs`): every variant at every
//!   value of a parameter, as cases `VARIANT@TABLE/VALUE`.

use serde::Serialize;

use super::doc::{self, get, join, ordered, Checker, Setting, Table, V};
use super::experiment_table::{case_tables, expand, glob_match, CaseOf, CaseTable, Mmtests};
use crate::error::Result;
use crate::units::parse_duration;

/// The keys of `[experiment]`.
pub const EXPERIMENT_KEYS: &[&str] = &[
    "name",
    "title",
    "description",
    "seed_file",
    "repeat",
    "quick_repeat",
    "quick_set",
    "metrics",
    "derive",
    "band",
    "notes",
    "table",
    "mmtests",
];
/// The keys of a `[[variant]]`.
pub const VARIANT_KEYS: &[&str] = &["name", "title", "description", "set", "metrics", "published", "published_stdev"];
/// Where a metric comes from: one of these names it.
pub const METRIC_SOURCES: &[&str] = &["group", "task", "mpstat", "report"];
/// The keys of a metric (`[experiment.metrics]`, `[sweep.metrics]`).
pub const METRIC_KEYS: &[&str] = &["group", "task", "mpstat", "report", "field", "cpu", "stat", "per_s"];
/// mpstat's columns.
pub const MPSTAT_FIELDS: &[&str] = &["usr", "nice", "sys", "iowait", "irq", "soft", "steal", "guest", "gnice", "idle"];
/// Reductions of the per-sample mpstat list to one number.
pub const SAMPLE_STATS: &[&str] = &["min", "max", "range", "stdev"];
/// The keys of a `[[experiment.derive]]`.
pub const DERIVE_KEYS: &[&str] = &["key", "variant", "metric", "target", "low", "high", "why"];
/// Band kinds (python/schedlab/experiment.py `evaluate_band` says what each computes).
pub const BAND_KINDS: &[&str] =
    &["pct_change", "ratio", "diff", "value", "gain", "trend", "gain_ratio", "peak_ratio", "rise"];
/// The keys of a `[[experiment.band]]`.
pub const BAND_KEYS: &[&str] = &["name", "kind", "num", "den", "of", "low", "high", "why", "cases"];

/// Where a metric is in a report. `source` is group, task, mpstat or
/// report; `selector` the group name, task comm, `average`/`samples`, or
/// the report's key path.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metric {
    pub name: String,
    pub source: &'static str,
    pub selector: String,
    pub field: String,
    /// mpstat's row: `all` or a CPU number, as text.
    pub cpu: String,
    /// For mpstat samples: the reduction to one number, or empty.
    pub stat: String,
    /// A report counter over the window per second of it.
    pub per_s: bool,
}

impl Metric {
    /// The metric is a per-sample list, not a number.
    pub fn is_list(&self) -> bool {
        self.source == "mpstat" && self.selector == "samples" && self.stat.is_empty()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Variant {
    pub name: String,
    pub title: String,
    /// In file order; the core applies them in order, so a later one wins.
    pub overrides: Vec<Setting>,
    pub metrics: Vec<String>,
    #[serde(serialize_with = "ordered")]
    pub published: Vec<(String, f64)>,
    #[serde(serialize_with = "ordered")]
    pub published_stdev: Vec<(String, f64)>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Derive {
    pub index: usize,
    /// The scenario key solved, canonical.
    pub key: String,
    pub variant: String,
    pub metric: String,
    pub target: f64,
    pub low_ms: u64,
    pub high_ms: u64,
    pub why: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Band {
    pub name: String,
    pub kind: String,
    pub low: f64,
    pub high: f64,
    /// `VARIANT.METRIC` (a case's as `VARIANT@CASE.METRIC`); empty when the
    /// kind does not take it.
    pub num: String,
    pub den: String,
    pub of: String,
    /// With case tables: the cases the rule holds for, in the order the
    /// patterns name them (each pattern's in the tables' order).
    pub cases: Vec<String>,
}

/// A checked experiment. With case tables, `variants` are the cases and
/// `base_variants` the variants as written.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Experiment {
    pub name: String,
    pub title: String,
    pub source: String,
    pub seed_file: String,
    pub repeat: i64,
    pub quick_repeat: i64,
    pub quick_set: Vec<Setting>,
    pub metrics: Vec<Metric>,
    pub variants: Vec<Variant>,
    pub base_variants: Vec<Variant>,
    pub tables: Vec<CaseTable>,
    pub mmtests: Option<Mmtests>,
    #[serde(serialize_with = "ordered")]
    pub case_of: Vec<(String, CaseOf)>,
    pub derives: Vec<Derive>,
    pub bands: Vec<Band>,
}

/// A file's experiment: `None` when it has no `[experiment]` table (a plain
/// scenario). `default_name` is the file's stem.
pub fn read(text: &str, file: &str, default_name: &str) -> Result<Option<Experiment>> {
    let root = doc::parse(text, file)?;
    match get(&root, "experiment") {
        None => Ok(None),
        Some(exp) => from_doc(&root, exp, file, default_name).map(Some),
    }
}

/// What `schedlab list` shows of a file without checking it: `name`,
/// `description` and, for an experiment, its `name` and `title` (each null
/// when absent or not a string).
pub fn heading(text: &str, file: &str) -> Result<serde_json::Value> {
    let root = doc::parse(text, file)?;
    let s = |t: &[(String, V)], k: &str| match get(t, k) {
        Some(V::Str(s)) => serde_json::Value::from(s.as_str()),
        _ => serde_json::Value::Null,
    };
    let exp = match get(&root, "experiment") {
        Some(V::Table(e)) => serde_json::json!({"name": s(e, "name"), "title": s(e, "title")}),
        Some(_) => serde_json::json!({"name": null, "title": null}),
        None => serde_json::Value::Null,
    };
    Ok(serde_json::json!({"name": s(&root, "name"), "description": s(&root, "description"), "experiment": exp}))
}

fn from_doc(root: &Table, exp: &V, file: &str, default_name: &str) -> Result<Experiment> {
    let c = Checker { file };
    let exp = c.table(exp, "experiment")?;
    c.keys(exp, "experiment", EXPERIMENT_KEYS)?;
    let name = c.str_(exp, "name", "experiment", Some(default_name))?;
    let title = match get(exp, "title") {
        Some(V::Str(s)) if !s.is_empty() => s.clone(),
        Some(V::Str(_)) | None => match get(root, "description") {
            Some(V::Str(d)) if !d.is_empty() => d.clone(),
            _ => name.clone(),
        },
        Some(_) => c.text(exp, "title", "experiment", "")?,
    };
    let seed_file = c.text(exp, "seed_file", "experiment", "")?;
    let repeat = c.int_(exp, "repeat", "experiment", 1, 1)?;
    let quick_repeat = c.int_(exp, "quick_repeat", "experiment", 1, 1)?;
    let quick_set = c.overrides(get(exp, "quick_set"), "experiment.quick_set")?;
    let metrics = metrics(&c, c.table_or_empty(exp, "metrics", "experiment")?, "experiment.metrics")?;
    let metric_names: Vec<&str> = metrics.iter().map(|m| m.name.as_str()).collect();

    let raw_variants = match get(root, "variant") {
        Some(V::Array(xs)) if !xs.is_empty() => xs,
        _ => return Err(c.bad("variant", "an experiment needs at least one [[variant]]", "[[variant]] tables")),
    };
    let mut variants: Vec<Variant> = Vec::new();
    for (i, raw) in raw_variants.iter().enumerate() {
        let v = variant(&c, i, raw, &metric_names, &variants)?;
        variants.push(v);
    }
    let base_variants = variants.clone();
    let base_names: Vec<&str> = base_variants.iter().map(|v| v.name.as_str()).collect();
    let tables = case_tables(&c, get(exp, "table"), &base_names, &metric_names)?;
    let mut case_of = Vec::new();
    if !tables.is_empty() {
        variants = expand(&tables, &base_variants, &mut case_of);
    }
    let all_cases: Vec<String> = tables.iter().flat_map(|t| t.cases.iter().cloned()).collect();
    let needs_mmtests = tables.iter().any(|t| t.print.is_empty()) || get(exp, "mmtests").is_some();
    let mmtests = if !tables.is_empty() && needs_mmtests {
        Some(super::experiment_table::mmtests(&c, get(exp, "mmtests"), &metric_names)?)
    } else {
        None
    };

    let derives = c
        .tables(get(exp, "derive"), "experiment.derive")?
        .into_iter()
        .enumerate()
        .map(|(i, t)| derive(&c, i, t, &metrics, &variants))
        .collect::<Result<Vec<_>>>()?;
    let bands = c
        .tables(get(exp, "band"), "experiment.band")?
        .into_iter()
        .enumerate()
        .map(|(i, t)| band(&c, i, t, &variants, &all_cases))
        .collect::<Result<Vec<_>>>()?;
    Ok(Experiment {
        name,
        title,
        source: file.to_string(),
        seed_file,
        repeat,
        quick_repeat,
        quick_set,
        metrics,
        variants,
        base_variants,
        tables,
        mmtests,
        case_of,
        derives,
        bands,
    })
}

/// A table of metrics, `name = { SOURCE = ..., field = ... }`, in order
/// (`[experiment.metrics]`; a sweep's `[sweep.metrics]` too).
pub fn metrics(c: &Checker<'_>, t: &[(String, V)], path: &str) -> Result<Vec<Metric>> {
    t.iter().map(|(name, raw)| metric(c, name, raw, path)).collect()
}

/// The metrics table at `path` (`sweep.metrics`) of a file that is not an
/// experiment: a sweep spec names its metrics in the experiment's grammar.
/// Empty when the file has none.
pub fn metrics_at(text: &str, file: &str, path: &str) -> Result<Vec<Metric>> {
    let root = doc::parse(text, file)?;
    let c = Checker { file };
    let mut t: &[(String, V)] = &root;
    let mut at = String::new();
    for seg in path.split('.') {
        match get(t, seg) {
            None => return Ok(Vec::new()),
            Some(v) => {
                at = join(&at, seg);
                t = c.table(v, &at)?;
            }
        }
    }
    metrics(&c, t, path)
}

/// One metric (see [`Metric`]).
pub fn metric(c: &Checker<'_>, name: &str, raw: &V, table: &str) -> Result<Metric> {
    let path = join(table, name);
    let t = c.table(raw, &path)?;
    c.keys(t, &path, METRIC_KEYS)?;
    let sources: Vec<&'static str> = METRIC_SOURCES.iter().copied().filter(|s| get(t, s).is_some()).collect();
    let [source] = sources[..] else {
        return Err(c.bad(
            &path,
            format!("names {} sources", sources.len()),
            "exactly one of { group = NAME, field = F }, { task = COMM, field = F }, \
             { mpstat = \"average\"|\"samples\", cpu = \"all\"|N, field = F }, { report = KEY }",
        ));
    };
    let selector = c.str_(t, source, &path, None)?;
    let mut m = Metric {
        name: name.to_string(),
        source,
        selector,
        field: String::new(),
        cpu: "all".into(),
        stat: String::new(),
        per_s: false,
    };
    if source == "report" {
        if let Some(k) = ["field", "cpu", "stat"].into_iter().find(|k| get(t, k).is_some()) {
            return Err(c.unknown(&join(&path, k), &["report", "per_s"]));
        }
        m.per_s = match get(t, "per_s") {
            None => false,
            Some(V::Bool(b)) => *b,
            Some(v) => return Err(c.bad(&join(&path, "per_s"), c.shown(v), "true or false")),
        };
        return Ok(m);
    }
    if get(t, "per_s").is_some() {
        return Err(c.unknown(&join(&path, "per_s"), &[source, "field"]));
    }
    m.field = c.str_(t, "field", &path, None)?;
    if source != "mpstat" {
        if let Some(k) = ["stat", "cpu"].into_iter().find(|k| get(t, k).is_some()) {
            return Err(c.unknown(&join(&path, k), &[source, "field"]));
        }
        return Ok(m);
    }
    if !matches!(m.selector.as_str(), "average" | "samples") {
        return Err(c.bad(
            &join(&path, "mpstat"),
            format!("unknown mpstat block {:?}", m.selector),
            "\"average\", \"samples\"",
        ));
    }
    if !MPSTAT_FIELDS.contains(&m.field.as_str()) {
        return Err(c.bad(
            &join(&path, "field"),
            format!("unknown mpstat column {:?}", m.field),
            MPSTAT_FIELDS.join(", "),
        ));
    }
    m.cpu = match get(t, "cpu") {
        None => "all".into(),
        Some(V::Str(s)) if s == "all" => "all".into(),
        Some(V::Int(n)) if *n >= 0 => n.to_string(),
        Some(v) => {
            return Err(c.bad(&join(&path, "cpu"), format!("bad CPU {}", c.shown(v)), "\"all\" or a CPU number"))
        }
    };
    m.stat = match get(t, "stat") {
        None => String::new(),
        Some(V::Str(s)) if s.is_empty() || (m.selector == "samples" && SAMPLE_STATS.contains(&s.as_str())) => s.clone(),
        Some(v) => {
            return Err(c.bad(
                &join(&path, "stat"),
                format!("bad reduction {}", c.shown(v)),
                format!("with mpstat = \"samples\": {}", SAMPLE_STATS.join(", ")),
            ))
        }
    };
    Ok(m)
}

/// The metric names a value names: an array of strings, each a metric.
fn metric_list(c: &Checker<'_>, v: &V, path: &str, metrics: &[&str]) -> Result<Vec<String>> {
    let accepted = if metrics.is_empty() { "(none defined)".to_string() } else { metrics.join(", ") };
    let names = match v {
        V::Array(xs) if xs.iter().all(|x| matches!(x, V::Str(_))) => c.strings(v, path, &accepted)?,
        _ => return Err(c.bad(path, "expected an array of metric names", accepted)),
    };
    if let Some(m) = names.iter().find(|m| !metrics.contains(&m.as_str())) {
        return Err(c.bad(path, format!("unknown metric {m:?}"), accepted));
    }
    Ok(names)
}

/// `published`/`published_stdev`: metric -> a finite number, in order.
fn published(
    c: &Checker<'_>,
    t: &[(String, V)],
    key: &str,
    path: &str,
    metrics: &[&str],
) -> Result<Vec<(String, f64)>> {
    let table = c.table_or_empty(t, key, path)?;
    let path = join(path, key);
    if let Some((m, _)) = table.iter().find(|(m, _)| !metrics.contains(&m.as_str())) {
        return Err(c.bad(&join(&path, m), format!("unknown metric {m:?}"), metrics.join(", ")));
    }
    table.iter().map(|(m, v)| Ok((m.clone(), c.num_value(v, &join(&path, m))?))).collect()
}

fn variant(c: &Checker<'_>, i: usize, raw: &V, metrics: &[&str], taken: &[Variant]) -> Result<Variant> {
    let path = format!("variant[{i}]");
    let t = c.table(raw, &path)?;
    c.keys(t, &path, VARIANT_KEYS)?;
    let name = c.str_(t, "name", &path, None)?;
    if taken.iter().any(|v| v.name == name) {
        return Err(c.bad(
            &join(&path, "name"),
            format!("duplicate variant name {name:?}"),
            "a name not used by another variant",
        ));
    }
    if name.contains('.') {
        return Err(c.bad(&join(&path, "name"), format!("{name:?} contains a dot"), "letters, digits, '_' and '-'"));
    }
    let overrides = c.overrides(get(t, "set"), &join(&path, "set"))?;
    let names = match get(t, "metrics") {
        None => metrics.iter().map(|m| m.to_string()).collect(),
        Some(v) => metric_list(c, v, &join(&path, "metrics"), metrics)?,
    };
    let published_ = published(c, t, "published", &path, metrics)?;
    let published_stdev = published(c, t, "published_stdev", &path, metrics)?;
    let title = match get(t, "title") {
        Some(_) => c.text(t, "title", &path, "")?,
        None => c.text(t, "description", &path, "")?,
    };
    Ok(Variant { name, title, overrides, metrics: names, published: published_, published_stdev })
}

fn derive(c: &Checker<'_>, i: usize, t: &[(String, V)], metrics: &[Metric], variants: &[Variant]) -> Result<Derive> {
    let path = format!("experiment.derive[{i}]");
    c.keys(t, &path, DERIVE_KEYS)?;
    let key = c.str_(t, "key", &path, None)?;
    let key = doc::canonical_key(&key).map_err(|why| c.bad(&join(&path, "key"), why, "a dotted scenario key"))?;
    let variant = c.str_(t, "variant", &path, None)?;
    if !variants.iter().any(|v| v.name == variant) {
        let names: Vec<&str> = variants.iter().map(|v| v.name.as_str()).collect();
        return Err(c.bad(&join(&path, "variant"), format!("unknown variant {variant:?}"), names.join(", ")));
    }
    let metric = c.str_(t, "metric", &path, None)?;
    if !metrics.iter().any(|m| m.name == metric && !m.is_list()) {
        let numeric: Vec<&str> = metrics.iter().filter(|m| !m.is_list()).map(|m| m.name.as_str()).collect();
        return Err(c.bad(&join(&path, "metric"), format!("{metric:?} is not a numeric metric"), numeric.join(", ")));
    }
    let mut bounds = [0u64; 2];
    for (b, k) in bounds.iter_mut().zip(["low", "high"]) {
        let text = c.str_(t, k, &path, None)?;
        let ns = parse_duration(&text).map_err(|why| c.bad(&join(&path, k), why, "a duration such as \"100s\""))?;
        *b = ns / 1_000_000;
    }
    let [low_ms, high_ms] = bounds;
    if low_ms >= high_ms {
        return Err(c.bad(
            &join(&path, "high"),
            format!("high ({high_ms}ms) is not above low ({low_ms}ms)"),
            "low < high",
        ));
    }
    let target = c.num(t, "target", &path)?;
    let why = c.text(t, "why", &path, "")?;
    Ok(Derive { index: i, key, variant, metric, target, low_ms, high_ms, why })
}

/// `VARIANT.METRIC@CASE` (as a band writes it) -> `VARIANT@CASE.METRIC`.
fn case_ref(r: &str) -> String {
    match r.split_once('@') {
        None => r.to_string(),
        Some((left, case)) => {
            let (vname, metric) = left.rsplit_once('.').unwrap_or(("", left));
            format!("{vname}@{case}.{metric}")
        }
    }
}

/// `VARIANT.METRIC` in a case: `VARIANT@CASE.METRIC`.
pub fn in_case(r: &str, case: &str) -> String {
    let (vname, metric) = r.rsplit_once('.').unwrap_or(("", r));
    format!("{vname}@{case}.{metric}")
}

fn band(c: &Checker<'_>, i: usize, t: &[(String, V)], variants: &[Variant], all_cases: &[String]) -> Result<Band> {
    let path = format!("experiment.band[{i}]");
    c.keys(t, &path, BAND_KEYS)?;
    let name = c.str_(t, "name", &path, None)?;
    let kind = c.str_(t, "kind", &path, Some("pct_change"))?;
    if !BAND_KINDS.contains(&kind.as_str()) {
        return Err(c.bad(&join(&path, "kind"), format!("unknown band kind {kind:?}"), BAND_KINDS.join(", ")));
    }
    let refs: &[&str] = if matches!(kind.as_str(), "value" | "rise") { &["of"] } else { &["num", "den"] };
    if let Some(k) = ["num", "den", "of"].into_iter().find(|k| get(t, k).is_some() && !refs.contains(k)) {
        let accepted: Vec<&str> =
            ["name", "kind"].into_iter().chain(refs.iter().copied()).chain(["low", "high", "why", "cases"]).collect();
        return Err(c.unknown(&join(&path, k), &accepted));
    }
    let mut cases: Vec<String> = Vec::new();
    if let Some(raw) = get(t, "cases") {
        let accepted = "case names or patterns of [[experiment.table]] (TABLE/VALUE)";
        let patterns = match raw {
            V::Array(xs) if !all_cases.is_empty() && xs.iter().all(|x| matches!(x, V::Str(_))) => {
                c.strings(raw, &join(&path, "cases"), accepted)?
            }
            _ => return Err(c.bad(&join(&path, "cases"), c.shown(raw), accepted)),
        };
        // In the patterns' order (a gain_ratio's first case is its
        // numerator), each pattern's cases in the tables' order.
        for p in &patterns {
            for case in all_cases.iter().filter(|case| glob_match(p, case)) {
                if !cases.contains(case) {
                    cases.push(case.clone());
                }
            }
        }
        if cases.is_empty() {
            return Err(c.bad(&join(&path, "cases"), format!("{} names no case", c.shown(raw)), all_cases.join(", ")));
        }
    }
    let across = matches!(kind.as_str(), "trend" | "gain_ratio" | "peak_ratio" | "rise");
    if across && cases.is_empty() {
        return Err(c.missing(&join(&path, "cases")));
    }
    if kind == "gain_ratio" && cases.len() != 2 {
        return Err(c.bad(
            &join(&path, "cases"),
            format!("{cases:?}"),
            "two cases (the ratio's numerator, then its denominator)",
        ));
    }
    let mut values = [String::new(), String::new(), String::new()];
    for k in refs {
        let r = case_ref(&c.str_(t, k, &path, None)?);
        let probes: Vec<String> =
            if cases.is_empty() { vec![r.clone()] } else { cases.iter().map(|x| in_case(&r, x)).collect() };
        for probe in &probes {
            check_ref(c, &join(&path, k), probe, variants)?;
        }
        values[["num", "den", "of"].iter().position(|x| x == k).unwrap_or(0)] = r;
    }
    let low = c.num(t, "low", &path)?;
    let high = c.num(t, "high", &path)?;
    if low > high {
        return Err(c.bad(
            &join(&path, "high"),
            format!("high ({}) is below low ({})", doc::float_text(high), doc::float_text(low)),
            "low <= high",
        ));
    }
    let [num, den, of] = values;
    Ok(Band { name, kind, low, high, num, den, of, cases })
}

/// A band's `VARIANT.METRIC` names a variant that reports the metric.
fn check_ref(c: &Checker<'_>, path: &str, probe: &str, variants: &[Variant]) -> Result<()> {
    let found = probe
        .rsplit_once('.')
        .and_then(|(vname, metric)| variants.iter().find(|v| v.name == vname).map(|v| (v, metric)));
    let Some((v, metric)) = found else {
        let mut bases: Vec<&str> = variants.iter().map(|v| v.name.split('@').next().unwrap_or("")).collect();
        bases.sort_unstable();
        bases.dedup();
        return Err(c.bad(
            path,
            format!("{probe:?} does not name a variant"),
            format!("VARIANT.METRIC (or VARIANT.METRIC@CASE) with VARIANT one of {}", bases.join(", ")),
        ));
    };
    if !v.metrics.iter().any(|m| m == metric) {
        return Err(c.bad(path, format!("variant {} does not report {metric:?}", v.name), v.metrics.join(", ")));
    }
    Ok(())
}
