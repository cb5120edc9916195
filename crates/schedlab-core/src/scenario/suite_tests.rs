//! The validation suite's reader (suite.rs): the tolerance grammar, the
//! bundled suite, and each error with its code and key path.

use super::*;

const HEAD: &str = "[suite]\nname = \"t\"\n[[scenario]]\nname = \"a\"\nfile = \"s.toml\"\n";

fn read_str(text: &str) -> Result<Suite> {
    read(text, "suite.toml", "suite", &|f| f == "s.toml")
}

/// The error a suite with one entry (HEAD + `rest`) gives: (code, message).
fn err(rest: &str) -> (&'static str, String) {
    let e = read_str(&format!("{HEAD}{rest}")).unwrap_err();
    (e.code(), e.to_string())
}

fn metric_err(m: &str) -> (&'static str, String) {
    err(&format!("metrics = [{m}]\n"))
}

fn tol(text: &str) -> Vec<(&'static str, f64, Option<&'static str>)> {
    tolerance(text).unwrap().bounds.into_iter().map(|b| (b.kind, b.value, b.unit)).collect()
}

#[test]
fn tolerances_read_in_their_units() {
    assert_eq!(tol("±3 points"), [("abs", 3.0, Some("points"))]);
    assert_eq!(tol("+-3 point"), [("abs", 3.0, Some("points"))]);
    assert_eq!(tol("+/-0.5points"), [("abs", 0.5, Some("points"))]);
    assert_eq!(tol("±2 ms"), [("abs", 2000.0, Some("us"))]);
    assert_eq!(tol("±20 µs"), [("abs", 20.0, Some("us"))]);
    assert_eq!(tol("<= 5/s"), [("max", 5.0, Some("/s"))]);
    assert_eq!(tol(" ±25 % or ±5/s "), [("rel", 25.0, None), ("abs", 5.0, Some("/s"))]);
    // Python's whitespace around an alternative, U+001F among it.
    assert_eq!(tol("\u{a0}±3 points\u{1f}"), [("abs", 3.0, Some("points"))]);
    assert!(tolerance("±3 points or\u{a0}±2/s").is_err(), "alternatives are joined by \" or \"");
}

#[test]
fn tolerances_that_do_not_read_say_what_is_accepted() {
    for bad in ["", "  ", "3 points", "±x points", "±3 parsecs", "±3 points or", "== 3/s", "±3. points", "±.5 points"]
    {
        let (why, accepted) = tolerance(bad).unwrap_err();
        assert_eq!(accepted, TOLERANCE_ACCEPTED, "{bad:?}: {why}");
    }
    let (why, _) = tolerance("±3 parsecs or ±2/s").unwrap_err();
    assert_eq!(why, "cannot read \"±3 parsecs\" in \"±3 parsecs or ±2/s\"");
    let (why, accepted) = tolerance("<= 5 %").unwrap_err();
    assert!(why.contains("\"%\" is relative, only with \"±\"") && accepted.contains("points"), "{why}");
    let huge = format!("±{} points", "9".repeat(400));
    assert!(tolerance(&huge).is_err(), "a tolerance too large for a float");
}

#[test]
fn the_bundled_suite_reads() {
    let text = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../python/schedlab/data/validation/suite.toml"));
    let s = read(text, "suite.toml", "suite", &|_| true).unwrap();
    assert_eq!((s.name.as_str(), s.seed), ("schedlab-validation", 1));
    assert!(s.entries.len() >= 25);
    let control = s.entries.iter().find(|e| e.name == "control-nice").unwrap();
    assert!(control.control);
    assert_eq!((control.sim_set[0].key.as_str(), control.sim_set[0].literal.as_str()), ("task.n5.nice", "0"));
    assert!(s.entries.iter().any(|e| !e.tool.is_empty()));
    let first = &s.entries[0].metrics[3];
    assert_eq!((first.metric.as_str(), first.cpu.as_deref()), ("idle", Some("0")));
}

#[test]
fn an_entry_reads_with_its_selectors_and_overrides() {
    let s = read_str(&format!(
        "{HEAD}why = \"w\"\nsim_set = {{ \"task.0.nice\" = 0, kernel.ktask.helper_nice = 19 }}\nmetrics = [\n\
         {{ metric = \"idle\", cpus = \"0-3\", tol = \"±3 points\" }},\n\
         {{ metric = \"idle_spread\", sets = [\"0-1\", \"2-3\"], tol = \"<= 3 points\" }},\n\
         {{ metric = \"share\", group = \"g\", tol = \"±25 % or ±2 points\" }},\n]\n"
    ))
    .unwrap();
    assert_eq!(s.seed, 1);
    let e = &s.entries[0];
    let keys: Vec<&str> = e.sim_set.iter().map(|s| s.key.as_str()).collect();
    assert_eq!(keys, ["task.0.nice", "kernel.ktask.helper_nice"]);
    assert_eq!(e.metrics[0].cpus.as_deref(), Some("0-3"));
    assert_eq!(e.metrics[1].sets, ["0-1", "2-3"]);
    assert_eq!(e.metrics[2].tol.bounds.len(), 2);
    assert_eq!((e.why.as_str(), e.control), ("w", false));
}

#[test]
fn suite_errors_name_the_key_path() {
    let cases: &[(&str, &str, &str)] = &[
        ("colour = 1\nmetrics = []\n", "SL101", "suite.toml: scenario[0].colour: unknown key"),
        ("", "SL103", "scenario[0].metrics: required key is missing"),
        ("metrics = []\n", "SL102", "scenario a.metrics: []; accepted: a non-empty list"),
        ("metrics = 1\n", "SL102", "scenario a.metrics: 1"),
        ("control = 1\nmetrics = []\n", "SL102", "scenario a.control: 1; accepted: true or false"),
        ("sim_set = 3\nmetrics = []\n", "SL102", "scenario a.sim_set: 3; accepted: a table"),
        ("sim_set = { \"a..b\" = 1 }\nmetrics = []\n", "SL102", "scenario a.sim_set:"),
        ("tool = [1]\nmetrics = [{ metric = \"tool_time\", tol = \"±1 %\" }]\n", "SL102", "scenario a.tool: 1 in"),
    ];
    for (rest, code, what) in cases {
        let (c, m) = err(rest);
        assert_eq!(c, *code, "{m}");
        assert!(m.contains(what), "{m}");
    }
    let e = read_str("[suite]\nname = \"t\"\n[[scenario]]\nname = \"a\"\nfile = \"nope.toml\"\nmetrics = []\n");
    let e = e.unwrap_err().to_string();
    assert!(e.contains("scenario a.file: \"nope.toml\": no such file next to the suite"), "{e}");
    let twice = format!(
        "{HEAD}metrics = [{{ metric = \"switches\", tol = \"±1/s\" }}]\n{}",
        &HEAD[HEAD.find("[[scenario]]").unwrap()..]
    );
    let e = read_str(&format!("{twice}metrics = []\n")).unwrap_err();
    assert!(e.to_string().contains("scenario[1].name: \"a\" appears twice"), "{e}");
    let top = |t: &str| read_str(t).unwrap_err();
    assert_eq!(top("[suite]\nname = \"t\"\n").code(), "SL103");
    assert_eq!(top("scenario = []\n").code(), "SL103");
    assert_eq!(top("frob = 1\n").code(), "SL101");
    assert!(top("[suite]\nseed = -1\n").to_string().contains("suite.seed: expected an integer >= 0"));
    assert_eq!(top("[suite\n").code(), "SL100");
}

#[test]
fn metric_errors_name_the_metric() {
    let cases: &[(&str, &str, &str)] = &[
        ("1", "SL102", "metrics[0]: 1; accepted: { metric = ..., tol = ... }"),
        ("{ metric = \"idle\", cpu = 0, colour = 1, tol = \"±1 points\" }", "SL101", "metrics[0].colour"),
        ("{ metric = \"idle\", cpu = 0 }", "SL103", "metrics[0].tol: required key is missing"),
        ("{ tol = \"±1 points\" }", "SL103", "metrics[0].metric: required key"),
        ("{ metric = \"speed\", tol = \"±3/s\" }", "SL102", "metrics[0].metric: \"speed\"; accepted: share, share_min"),
        ("{ metric = \"share\", task = \"n0\", tol = \"±3/s\" }", "SL102", "unit /s for share, which is in points"),
        ("{ metric = \"share\", task = \"n0\", tol = 3 }", "SL102", "metrics[0].tol: 3; accepted: \"±3 points\""),
        ("{ metric = \"share\", task = \"n0\", tol = \"3\" }", "SL102", "metrics[0].tol: cannot read \"3\""),
        ("{ metric = \"share\", tol = \"±3 points\" }", "SL102", "share does not take these selectors"),
        ("{ metric = \"idle\", cpu = -1, tol = \"±3 points\" }", "SL102", "metrics[0].cpu: -1"),
        ("{ metric = \"idle\", cpu = \"0\", tol = \"±3 points\" }", "SL102", "a CPU number or \"all\""),
        ("{ metric = \"idle\", cpus = \"3-1\", tol = \"±3 points\" }", "SL102", "cpus: cpulist \"3-1\": range"),
        ("{ metric = \"idle_spread\", sets = [\"0\", 1], tol = \"±3 points\" }", "SL102", "sets: 1 in the array"),
        ("{ metric = \"idle_spread\", sets = [\"0\", \"x\"], tol = \"±3 points\" }", "SL102", "cpulist \"x\""),
        ("{ metric = \"idle_spread\", sets = [\"0\"], tol = \"±3 points\" }", "SL102", "two or more"),
        ("{ metric = \"switches\", task = 1, tol = \"±3/s\" }", "SL102", "metrics[0].task: 1; accepted: a task's"),
        ("{ metric = \"switches\", task = \"a\", group = \"b\", tol = \"±3/s\" }", "SL102", "or neither"),
        ("{ metric = \"share_min\", task = \"a\", tol = \"±3 points\" }", "SL102", "accepted: group = NAME"),
        ("{ metric = \"latency_max\", thread = -1, tol = \"±3 us\" }", "SL102", "metrics[0].thread: -1"),
        ("{ metric = \"tool_time\", tol = \"±3 %\" }", "SL102", "metric tool_time needs the entry's `tool`"),
        ("{ metric = \"throttled\", tol = \"±3 points\" }", "SL102", "accepted: cgroup = PATH"),
        ("{ metric = \"bursts\", cgroup = \"/a\", task = \"x\", tol = \"±1/s\" }", "SL102", "no other selector"),
        ("{ metric = \"share\", task = \"x\", cgroup = \"/a\", tol = \"±1 points\" }", "SL102", "only cgroup_share"),
        ("{ metric = \"cgroup_share\", cgroup = \"/a\", tol = \"±1/s\" }", "SL102", "which is in points"),
    ];
    for (m, code, what) in cases {
        let (c, msg) = metric_err(m);
        assert_eq!(c, *code, "{m}: {msg}");
        assert!(msg.contains(what), "{m}: {msg}");
    }
    let (_, msg) = err("tool = [\"perf\"]\nmetrics = [{ metric = \"switches\", tol = \"±3/s\" }]\n");
    assert!(msg.contains("scenario a.metrics[0]: metric switches is not measured when the entry runs a `tool`"));
    let (_, msg) = err("tool = [\"perf\"]\nmetrics = [{ metric = \"tool_time\", task = \"x\", tol = \"±3 %\" }]\n");
    assert!(msg.contains("tool_time does not take these selectors; accepted: no selector"), "{msg}");
}

#[test]
fn each_row_names_its_oracle_timing_rows_the_real_timing_one() {
    let s = read_str(&format!(
        "{HEAD}metrics = [{{ metric = \"share\", task = \"a\", tol = \"±3 points\" }}, \
         {{ metric = \"wakeup_p90\", tol = \"±30 %\" }}, \
         {{ metric = \"switches\", tol = \"±30 %\", oracle = \"any\" }}, \
         {{ metric = \"idle\", cpu = \"all\", tol = \"±3 points\", oracle = \"qemu\" }}]\n"
    ))
    .unwrap();
    let oracles: Vec<&str> = s.entries[0].metrics.iter().map(|m| m.oracle).collect();
    assert_eq!(oracles, ["any", "local", "any", "qemu"]);
    let (code, msg) = metric_err("{ metric = \"share\", task = \"a\", tol = \"±3 points\", oracle = \"tcg\" }");
    assert_eq!(code, "SL102");
    assert!(msg.contains("metrics[0].oracle") && msg.contains("\"local\", \"qemu\" or \"any\""), "{msg}");
}
