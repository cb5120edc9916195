//! The thin PyO3 binding: no simulation logic here. Core errors cross as
//! instances of the classes in `schedlab.errors` (one mapping, `to_pyerr`).

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyList, PyMapping, PyString, PyTuple};
use schedlab_core::engine::heap::{format_bytes, LIVE_BYTES};
use schedlab_core::scenario::doc::{self, V};
use schedlab_core::scenario::{self, describe, overrides, Format};
use schedlab_core::trace::textread;
use schedlab_core::{RunOptions, SimError};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::Ordering::Relaxed;

mod pyreport;

/// The system allocator, counting the live bytes into
/// `schedlab_core::engine::heap::LIVE_BYTES`, so that a run stops with SL210
/// at its heap budget instead of aborting the interpreter when an
/// allocation fails.
struct Counting;

// SAFETY: every method forwards to `System` unchanged; the counter is only
// bookkeeping.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            LIVE_BYTES.fetch_add(layout.size(), Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            LIVE_BYTES.fetch_add(layout.size(), Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        LIVE_BYTES.fetch_sub(layout.size(), Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            LIVE_BYTES.fetch_add(new_size, Relaxed);
            LIVE_BYTES.fetch_sub(layout.size(), Relaxed);
        }
        p
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Map a core error onto `schedlab.errors.<Kind>(code, message)`.
fn to_pyerr(py: Python<'_>, e: SimError) -> PyErr {
    let made = (|| -> PyResult<PyErr> {
        let module = py.import("schedlab.errors")?;
        let cls = module.getattr(e.kind())?;
        let inst = cls.call1((e.code(), e.to_string()))?;
        Ok(PyErr::from_value(inst))
    })();
    made.unwrap_or_else(|_| PyRuntimeError::new_err(format!("[{}] {}", e.code(), e)))
}

/// What a caught panic said (its payload is a String or a &str).
fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "unknown panic".into())
}

/// Turn a panic inside the core into an InternalError instead of letting
/// it cross the boundary.
fn guard<T>(f: impl FnOnce() -> Result<T, SimError> + std::panic::UnwindSafe) -> Result<T, SimError> {
    match std::panic::catch_unwind(f) {
        Ok(r) => r,
        Err(p) => Err(SimError::internal(panic_message(p.as_ref()))),
    }
}

/// Call into the core with the GIL released (other Python threads run
/// meanwhile), a panic turned into an InternalError and the core's error
/// into the Python exception of its code.
fn core_call<T: Send>(
    py: Python<'_>,
    f: impl FnOnce() -> Result<T, SimError> + Send + std::panic::UnwindSafe,
) -> PyResult<T> {
    py.allow_threads(move || guard(f)).map_err(|e| to_pyerr(py, e))
}

/// A run's progress, read from another Python thread while `run` (which
/// releases the GIL) simulates: `read()` is (simulated ns reached, the run's
/// end in ns, events so far).
#[pyclass(frozen)]
struct Progress {
    inner: std::sync::Arc<schedlab_core::engine::Progress>,
}

#[pymethods]
impl Progress {
    #[new]
    fn new() -> Self {
        Progress { inner: Default::default() }
    }

    fn read(&self) -> (u64, u64, u64) {
        self.inner.read()
    }
}

/// `rtapp=True`: the text is an rt-app JSON workload, else a scenario's TOML.
fn format(rtapp: bool) -> Format {
    if rtapp {
        Format::RtApp
    } else {
        Format::Toml
    }
}

/// Run a scenario and return its report as Python objects: the dicts and
/// lists `json.loads` makes of the report's JSON (pyreport).
#[pyfunction]
#[pyo3(signature = (text, source, seed=1, overrides=Vec::new(), check=false, trace=None, perfetto=None, strict=false, heap_budget=None, progress=None, rtapp=false))]
#[allow(clippy::too_many_arguments)] // the Python keyword arguments
fn run(
    py: Python<'_>,
    text: String,
    source: String,
    seed: u64,
    overrides: Vec<(String, String)>,
    check: bool,
    trace: Option<String>,
    perfetto: Option<String>,
    strict: bool,
    heap_budget: Option<u64>,
    progress: Option<PyRef<'_, Progress>>,
    rtapp: bool,
) -> PyResult<PyObject> {
    let progress = progress.map(|p| p.inner.clone());
    let opts = RunOptions { seed, check, trace_path: trace, perfetto_path: perfetto, strict, heap_budget, progress };
    let name = source.clone();
    let report = core_call(py, move || {
        scenario::load_as(&text, &source, format(rtapp), &overrides)
            .and_then(|sc| schedlab_core::run_scenario(&sc, &opts))
    })?;
    report_objects(py, &report, heap_budget, &name)
}

/// The same run, its report as the JSON text `run` makes its objects
/// from (report::sorted: compact, keys sorted) — for the test that holds
/// the two to the same document, and for a caller that wants the text.
#[pyfunction]
#[pyo3(signature = (text, source, seed=1, overrides=Vec::new()))]
fn run_json(
    py: Python<'_>,
    text: String,
    source: String,
    seed: u64,
    overrides: Vec<(String, String)>,
) -> PyResult<String> {
    let opts = RunOptions { seed, ..Default::default() };
    core_call(py, move || {
        scenario::load_as(&text, &source, Format::Toml, &overrides)
            .and_then(|sc| schedlab_core::run_scenario(&sc, &opts))
            .and_then(|r| r.to_json_within(None, &source))
    })
}

/// The report as Python objects, with the cyclic garbage collector paused
/// while they are made (a report is a tree: a collection would find
/// nothing, and on a large machine its passes over the young dicts and
/// lists cost as much as making them). A budget passed is SL210.
#[inline(never)] // its own line in a profile
fn report_objects(
    py: Python<'_>,
    report: &schedlab_core::report::Report,
    budget: Option<u64>,
    source: &str,
) -> PyResult<PyObject> {
    let gc = py.import("gc")?;
    let was_enabled = gc.call_method0("isenabled")?.is_truthy()?;
    if was_enabled {
        gc.call_method0("disable")?;
    }
    let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| pyreport::to_python(py, report, budget)));
    if was_enabled {
        gc.call_method0("enable")?;
    }
    match made {
        Ok(Ok(obj)) => Ok(obj.unbind()),
        Ok(Err(pyreport::Error::Py(e))) => Err(e),
        Ok(Err(pyreport::Error::OverBudget(bytes, values))) => Err(to_pyerr(
            py,
            SimError::Resource {
                message: format!(
                    "{source}: the report as Python objects would pass the run's heap budget of {} \
                     ({values} values made, {} with the core's heap; {} tasks, {} mpstat samples); accepted: \
                     fewer tasks, measure.samples = false or a longer measure.interval, a shorter \
                     measure.duration, or a larger SCHEDLAB_MEMORY_LIMIT",
                    format_bytes(budget.unwrap_or(0)),
                    format_bytes(bytes),
                    report.tasks.len(),
                    report.mpstat.samples.len(),
                ),
            },
        )),
        Ok(Err(e @ pyreport::Error::Custom(_))) => {
            Err(to_pyerr(py, SimError::internal(format!("the report cannot be made into Python objects: {e}"))))
        }
        Err(p) => Err(to_pyerr(py, SimError::internal(panic_message(p.as_ref())))),
    }
}

/// Parse and validate a scenario; return a JSON summary.
#[pyfunction]
#[pyo3(signature = (text, source, overrides=Vec::new(), rtapp=false))]
fn check(
    py: Python<'_>,
    text: String,
    source: String,
    overrides: Vec<(String, String)>,
    rtapp: bool,
) -> PyResult<String> {
    core_call(py, move || {
        scenario::load_as(&text, &source, format(rtapp), &overrides).map(|sc| schedlab_core::summary(&sc))
    })
    .map(|v| v.to_string())
}

/// A scenario's tree before validation, as JSON: the TOML parsed (or the
/// rt-app workload imported), `rtapp = "FILE.json"` expanded, the
/// overrides applied (schedlab_core::scenario::tree).
#[pyfunction]
#[pyo3(signature = (text, source, overrides=Vec::new(), rtapp=false))]
fn scenario_tree(
    py: Python<'_>,
    text: String,
    source: String,
    overrides: Vec<(String, String)>,
    rtapp: bool,
) -> PyResult<String> {
    core_call(py, move || {
        let t = scenario::tree(&text, &source, format(rtapp), &overrides)?;
        serde_json::to_string(&t).map_err(|e| SimError::internal(format!("the scenario tree as JSON: {e}")))
    })
}

/// A scenario as TOML text, self-contained: `rtapp = "FILE.json"`
/// expanded and the overrides applied (for a guest that has neither the
/// JSON file nor the command line). The core's one TOML writer.
#[pyfunction]
#[pyo3(signature = (text, source, overrides=Vec::new(), rtapp=false))]
fn scenario_toml(
    py: Python<'_>,
    text: String,
    source: String,
    overrides: Vec<(String, String)>,
    rtapp: bool,
) -> PyResult<String> {
    core_call(py, move || scenario::tree_toml(&text, &source, format(rtapp), &overrides))
}

/// "0-3,8" -> [0, 1, 2, 3, 8]: the core's cpulist parser (the one the
/// scenario's `cpus` go through). ValueError saying what is wrong.
#[pyfunction]
#[pyo3(signature = (text, nr_cpus=describe::NR_CPUS))]
fn parse_cpulist(text: &str, nr_cpus: usize) -> PyResult<Vec<usize>> {
    describe::cpulist(text, nr_cpus).map_err(PyValueError::new_err)
}

/// "1.5s" -> 1500000000: the core's duration parser. ValueError saying
/// what is wrong and what is accepted.
#[pyfunction]
fn parse_duration(text: &str) -> PyResult<u64> {
    describe::duration_ns(text).map_err(PyValueError::new_err)
}

/// A `kernel.version` -> JSON of the version and its mechanism eras
/// (schedlab_core::scenario::describe::kernel_info). ValueError saying why
/// not and what is accepted.
#[pyfunction]
fn kernel_version(text: &str) -> PyResult<String> {
    describe::version_info(text).map(|v| v.to_string()).map_err(PyValueError::new_err)
}

/// An rt-app file read as rt-app's json-c reads it (comments, trailing
/// commas, a duplicated key's last value in its first place), as strict JSON.
#[pyfunction]
fn rtapp_loads(py: Python<'_>, text: String, source: String) -> PyResult<String> {
    core_call(py, move || scenario::json::parse(&text, &source).map(|v| v.to_json()))
}

/// An rt-app file imported: `{"task": [the [[task]] groups], "duration":
/// global.duration in s, -1 for none}` as JSON (schedlab_core::scenario::rtapp).
#[pyfunction]
fn rtapp_import(py: Python<'_>, text: String, source: String) -> PyResult<String> {
    core_call(py, move || {
        let (groups, duration) = scenario::rtapp::import(&text, &source)?;
        let doc = serde_json::json!({"task": groups, "duration": duration});
        Ok(doc.to_string())
    })
}

/// A file's experiment (`[experiment]`, `[[variant]]`), read and checked
/// by the core (schedlab_core::scenario::experiment), as JSON; None for a
/// file without an `[experiment]` table. `default_name`: the file's stem.
#[pyfunction]
fn experiment(py: Python<'_>, text: String, source: String, default_name: String) -> PyResult<Option<String>> {
    core_call(py, move || {
        let exp = scenario::experiment::read(&text, &source, &default_name)?;
        exp.map(|e| serde_json::to_string(&e))
            .transpose()
            .map_err(|e| SimError::internal(format!("the experiment as JSON: {e}")))
    })
}

/// The metrics table at `path` (`sweep.metrics`) of a file, checked in the
/// experiment's metric grammar, as a JSON list in file order.
#[pyfunction]
fn metrics(py: Python<'_>, text: String, source: String, path: String) -> PyResult<String> {
    core_call(py, move || {
        let m = scenario::experiment::metrics_at(&text, &source, &path)?;
        serde_json::to_string(&m).map_err(|e| SimError::internal(format!("the metrics as JSON: {e}")))
    })
}

/// A sweep spec read and checked by the core
/// (schedlab_core::scenario::sweep), as JSON: `{"scenario", "seeds":
/// {"count": N} or {"list": [...]}, "out", "max_runs", "set", "axes",
/// "metrics"}`.
#[pyfunction]
fn sweep_spec(py: Python<'_>, text: String, source: String) -> PyResult<String> {
    let r = py.allow_threads(move || {
        guard(move || {
            let s = scenario::sweep::read(&text, &source)?;
            serde_json::to_string(&s).map_err(|e| SimError::internal(format!("the sweep spec as JSON: {e}")))
        })
    });
    r.map_err(|e| to_pyerr(py, e))
}

/// A validation suite file read and checked by the core
/// (schedlab_core::scenario::suite), as JSON: `{"name", "seed", "entries":
/// [{"name", "file" (as written), "why", "control", "sim_set", "metrics",
/// "tool"}]}`. `default_name`: `[suite] name` when absent (the file's
/// stem); an entry's file must be a file under `dir` (the suite's folder).
#[pyfunction]
fn suite(py: Python<'_>, text: String, source: String, default_name: String, dir: String) -> PyResult<String> {
    core_call(py, move || {
        let exists = |f: &str| std::path::Path::new(&dir).join(f).is_file();
        let s = scenario::suite::read(&text, &source, &default_name, &exists)?;
        serde_json::to_string(&s).map_err(|e| SimError::internal(format!("the suite as JSON: {e}")))
    })
}

/// A validation tolerance (`"±3 points or ±25 %"`) read by the core, as
/// JSON `{"text", "bounds": [{"kind", "value", "unit"}]}`; ValueError
/// saying what is wrong and what is accepted.
#[pyfunction]
fn tolerance(text: &str) -> PyResult<String> {
    match scenario::suite::tolerance(text) {
        Ok(t) => serde_json::to_string(&t).map_err(|e| PyRuntimeError::new_err(format!("the tolerance as JSON: {e}"))),
        Err((why, accepted)) => Err(PyValueError::new_err(format!("{why}; accepted: {accepted}"))),
    }
}

/// What `schedlab list` shows of a file, unchecked: `{"name",
/// "description", "experiment": null or {"name", "title"}}` as JSON.
#[pyfunction]
fn heading(py: Python<'_>, text: String, source: String) -> PyResult<String> {
    core_call(py, move || scenario::experiment::heading(&text, &source)).map(|v| v.to_string())
}

/// `--set KEY=VALUE` -> (canonical key, TOML literal): the override
/// grammar (schedlab_core::scenario::overrides). UsageError (SL001) if malformed.
#[pyfunction]
fn parse_set(py: Python<'_>, arg: &str) -> PyResult<(String, String)> {
    overrides::parse_set(arg).map_err(|message| to_pyerr(py, SimError::Usage { message }))
}

/// The segments of an override key; ValueError if malformed.
#[pyfunction]
fn split_key(key: &str) -> PyResult<Vec<String>> {
    overrides::split_key(key).map_err(PyValueError::new_err)
}

/// Segments -> a key, quoting only the segments that need it.
#[pyfunction]
fn format_key(segments: Vec<String>) -> String {
    overrides::format_key(&segments)
}

/// The canonical form of an override key; ValueError if malformed.
#[pyfunction]
fn normalize_key(key: &str) -> PyResult<String> {
    overrides::normalize_key(key).map_err(PyValueError::new_err)
}

/// Deepest nesting `toml_literal` writes: the core's TOML reader stops
/// well before it, so a deeper value could never be read back.
const LITERAL_DEPTH: usize = 128;

/// A Python value as the core's [`V`]: a bool, int, float, str, a date or
/// time, a mapping (keys as `str()` gives them), a list or a tuple. TypeError
/// for anything else; ValueError for an integer beyond 64 bits (TOML has
/// none) or nesting past LITERAL_DEPTH.
fn py_value(v: &Bound<'_, PyAny>, depth: usize) -> PyResult<V> {
    if depth > LITERAL_DEPTH {
        return Err(PyValueError::new_err(format!(
            "a value nested deeper than {LITERAL_DEPTH} levels; accepted: what a scenario's TOML can hold"
        )));
    }
    if let Ok(b) = v.downcast::<PyBool>() {
        return Ok(V::Bool(b.is_true()));
    }
    if v.is_instance_of::<PyInt>() {
        return v.extract::<i64>().map(V::Int).map_err(|_| {
            let text = v.str().map(|s| s.to_string()).unwrap_or_default();
            PyValueError::new_err(format!(
                "{}: an integer beyond 64 bits; accepted: TOML's integers, -2^63 to 2^63-1",
                schedlab_core::error::cut(&text, 40)
            ))
        });
    }
    if let Ok(f) = v.downcast::<PyFloat>() {
        return Ok(V::Float(f.value()));
    }
    if let Ok(s) = v.downcast::<PyString>() {
        return Ok(V::Str(s.to_cow()?.into_owned()));
    }
    // A date or time needs the datetime module loaded: without it there can
    // be none, and the check does not import it (the CLI starts 1 ms sooner).
    let py = v.py();
    if let Ok(dt) = py.import("sys")?.getattr("modules")?.get_item("datetime") {
        let kinds = PyTuple::new(py, [dt.getattr("datetime")?, dt.getattr("date")?, dt.getattr("time")?])?;
        if v.is_instance(&kinds)? {
            return Ok(V::Datetime(v.call_method0("isoformat")?.str()?.to_string()));
        }
    }
    if let Ok(m) = v.downcast::<PyMapping>() {
        let mut t = Vec::new();
        for item in m.items()?.iter() {
            let (k, x): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
            t.push((k.str()?.to_string(), py_value(&x, depth + 1)?));
        }
        return Ok(V::Table(t));
    }
    if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        return v.try_iter()?.map(|x| py_value(&x?, depth + 1)).collect::<PyResult<Vec<_>>>().map(V::Array);
    }
    Err(PyTypeError::new_err(format!("cannot write {} {} as a TOML value", v.get_type().name()?, v.repr()?)))
}

/// A Python value as TOML literal text, by the core's one value writer
/// (schedlab_core::scenario::doc::literal): `19`, `"1s"`, `[1, 2]`,
/// `{ exp = "1ms" }`, a float as Python's repr writes it.
#[pyfunction]
fn toml_literal(value: &Bound<'_, PyAny>) -> PyResult<String> {
    py_value(value, 0).map(|v| doc::literal(&v))
}

/// A command-line value as TOML literal text (a literal, or else a string).
#[pyfunction]
fn value_literal(text: &str) -> String {
    overrides::value_literal(text)
}

/// The report's JSON schema (schedlab_core::report): the source of
/// docs/report.md and schedlab.report_types.
#[pyfunction]
fn report_schema() -> String {
    schedlab_core::report::schema().to_string()
}

/// The scenario format's vocabulary (schedlab_core::scenario::catalog):
/// keys per table, ops, versions, presets, features, sysctls per version.
#[pyfunction]
fn catalog() -> String {
    schedlab_core::scenario::catalog::catalog().to_string()
}

#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// The real-kernel runner (schedlab-runner's whole command line, argv[0]
/// first), for `python -m schedlab.runner`: an installed wheel runs
/// scenarios as real threads without a separate binary. Returns the exit
/// status; a panic is status 70 (EX_SOFTWARE) with its message, never an
/// unwind into Python.
#[pyfunction]
fn runner_main(py: Python<'_>, argv: Vec<String>) -> u8 {
    py.allow_threads(move || match std::panic::catch_unwind(move || schedlab_runner::main_with_args(argv)) {
        Ok(status) => status,
        Err(p) => {
            eprintln!("schedlab-runner: error: [SL900] internal error: {}", panic_message(p.as_ref()));
            70
        }
    })
}

/// `schedlab import`'s line reader (schedlab_core::trace::textread): fed
/// a trace's lines in batches, it returns each kept event as the tuple
/// `(ts_ns, cpu, pid, comm, flags, name, fields)` the Python `Event` wraps,
/// the `#` lines (a capture's header among them), and the first malformed
/// event as `(line number, event, body)`.
#[pyclass]
struct TextReader {
    format: Option<textread::Format>,
    lineno: usize,
    #[pyo3(get)]
    skipped: usize,
    /// The highest CPU a column, target_cpu or dest_cpu names.
    #[pyo3(get)]
    top: i64,
    last: i64,
    /// A time earlier than the one before it.
    #[pyo3(get)]
    unsorted: bool,
    keys: std::collections::BTreeMap<&'static str, Py<PyString>>,
}

type Fed = (Py<PyList>, Vec<String>, Option<(usize, String, String)>);

#[pymethods]
impl TextReader {
    #[new]
    fn new() -> Self {
        TextReader { format: None, lineno: 0, skipped: 0, top: 0, last: 0, unsorted: false, keys: Default::default() }
    }

    /// "ftrace" or "perf" once a line has told, else "".
    #[getter]
    fn kind(&self) -> &'static str {
        match self.format {
            Some(textread::Format::Ftrace) => "ftrace",
            Some(textread::Format::Perf) => "perf",
            None => "",
        }
    }

    fn feed(&mut self, py: Python<'_>, lines: &Bound<'_, PyList>) -> PyResult<Fed> {
        let out = PyList::empty(py);
        let mut comments = Vec::new();
        for item in lines.iter() {
            self.lineno += 1;
            let s = item.downcast::<PyString>()?.to_cow()?;
            let line: &str = &s;
            if line.starts_with('#') {
                comments.push(line.to_string());
                continue;
            }
            let format = match self.format {
                Some(f) => f,
                None => {
                    let t = line.trim();
                    if t.is_empty()
                        || line.starts_with("version =")
                        || line.starts_with("cpus=")
                        || line.starts_with("CPU ")
                    {
                        continue;
                    }
                    match textread::detect(line) {
                        Some(f) => *self.format.insert(f),
                        None => {
                            self.skipped += 1;
                            continue;
                        }
                    }
                }
            };
            match textread::read_line(line, format) {
                textread::Line::Event(e) => {
                    let fields = pyo3::types::PyDict::new(py);
                    for (k, v) in &e.fields {
                        let key = self.key(py, k);
                        match *v {
                            textread::Value::Int(i) => {
                                if (*k == "target_cpu" || *k == "dest_cpu") && i > self.top {
                                    self.top = i;
                                }
                                fields.set_item(key, i)?
                            }
                            textread::Value::Str(t) => fields.set_item(key, t)?,
                        }
                    }
                    if e.ts_ns < self.last {
                        self.unsorted = true;
                    }
                    self.last = e.ts_ns;
                    self.top = self.top.max(e.cpu);
                    let comm = PyString::intern(py, e.comm);
                    let name = self.key(py, e.name);
                    out.append((e.ts_ns, e.cpu, e.pid, comm, e.flags, name, fields))?;
                }
                textread::Line::Malformed { event, body } => {
                    let body: String = body.chars().take(120).collect();
                    return Ok((out.unbind(), comments, Some((self.lineno, event.to_string(), body))));
                }
                textread::Line::Comment | textread::Line::Dropped => {}
                textread::Line::NoMatch | textread::Line::Unkept => self.skipped += 1,
            }
        }
        Ok((out.unbind(), comments, None))
    }
}

impl TextReader {
    /// A field name or event name as one interned Python string.
    fn key<'py>(&mut self, py: Python<'py>, k: &'static str) -> Bound<'py, PyString> {
        self.keys.entry(k).or_insert_with(|| PyString::intern(py, k).unbind()).bind(py).clone()
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_tree, m)?)?;
    m.add_function(wrap_pyfunction!(rtapp_loads, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_toml, m)?)?;
    m.add_function(wrap_pyfunction!(parse_cpulist, m)?)?;
    m.add_function(wrap_pyfunction!(parse_duration, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_version, m)?)?;
    m.add_function(wrap_pyfunction!(rtapp_import, m)?)?;
    m.add_function(wrap_pyfunction!(experiment, m)?)?;
    m.add_function(wrap_pyfunction!(heading, m)?)?;
    m.add_function(wrap_pyfunction!(metrics, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_spec, m)?)?;
    m.add_function(wrap_pyfunction!(suite, m)?)?;
    m.add_function(wrap_pyfunction!(tolerance, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(parse_set, m)?)?;
    m.add_function(wrap_pyfunction!(split_key, m)?)?;
    m.add_function(wrap_pyfunction!(format_key, m)?)?;
    m.add_function(wrap_pyfunction!(normalize_key, m)?)?;
    m.add_function(wrap_pyfunction!(value_literal, m)?)?;
    m.add_function(wrap_pyfunction!(toml_literal, m)?)?;
    m.add_function(wrap_pyfunction!(report_schema, m)?)?;
    m.add_function(wrap_pyfunction!(catalog, m)?)?;
    m.add_function(wrap_pyfunction!(runner_main, m)?)?;
    m.add_class::<Progress>()?;
    m.add_class::<TextReader>()?;
    m.add("TRACE_EVENTS_KEPT", textread::kept_events())?;
    // include/linux/sched/prio.h's ranges, defined once in the core
    // (prio.rs), for the checks Python makes before it calls in.
    m.add("MIN_NICE", schedlab_core::prio::MIN_NICE)?;
    m.add("MAX_NICE", schedlab_core::prio::MAX_NICE)?;
    m.add("MAX_RT_PRIORITY", schedlab_core::prio::MAX_RT_PRIORITY)?;
    Ok(())
}
