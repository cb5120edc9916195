//! schedlab-core: a deterministic discrete-event model of the Linux CPU
//! scheduler (and, later, memory reclaim). Scenario -> Simulation -> Report.

#![deny(unsafe_code)]

pub mod block;
pub mod cpufreq;
pub mod cpumask;
pub mod engine;
pub mod error;
pub mod idle;
pub mod irq;
pub mod kernel;
pub mod kthread;
pub mod machine;
pub mod membw;
pub mod mm;
pub mod prio;
pub mod program;
pub mod report;
pub mod scenario;
pub mod sched;
pub mod sim;
pub mod stats;
pub mod trace;
pub mod units;
pub mod workload;

pub use error::{Result, SimError};

/// Options of one run.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub seed: u64,
    pub check: bool,
    /// Write the ftrace-text trace here.
    pub trace_path: Option<String>,
    /// Write the Perfetto protobuf trace here.
    pub perfetto_path: Option<String>,
    /// A warning (a deadlock, the limit reached) is an error.
    pub strict: bool,
    /// Stop with SL210 when the live heap passes this many bytes; needs an
    /// embedding that counts its allocations (engine::heap). None: no budget.
    pub heap_budget: Option<u64>,
    /// Where the run publishes its progress for another thread to read (a
    /// progress bar); None: nowhere.
    pub progress: Option<std::sync::Arc<engine::Progress>>,
}

/// Parse, validate and simulate a scenario; return its report
/// (`Report::to_json` gives the bytes every writer writes).
pub fn run_text(text: &str, file: &str, overrides: &[(String, String)], opts: &RunOptions) -> Result<report::Report> {
    let sc = scenario::load(text, file, overrides)?;
    run_scenario(&sc, opts)
}

/// Simulate an already validated scenario.
pub fn run_scenario(sc: &scenario::Scenario, opts: &RunOptions) -> Result<report::Report> {
    // The trace files are opened before the simulation: a path that cannot
    // be written is refused now, not after the run. Their bytes stream out
    // to temporary files as the run goes (trace::sink), renamed over the
    // targets when the run has succeeded.
    let cannot = |p: &str, opt: &str, e: std::io::Error| {
        SimError::bad_value(&sc.source, opt, format!("cannot write {p}: {e}"), "a writable path")
    };
    let open = |p: &Option<String>, opt: &str| -> Result<Option<trace::sink::Sink>> {
        p.as_deref().map(|p| trace::sink::Sink::create(p).map_err(|e| cannot(p, opt, e))).transpose()
    };
    // `--trace FILE.dat`: the trace-cmd binary format; any other name: ftrace text.
    let dat_path = opts.trace_path.as_deref().filter(|p| p.ends_with(".dat"));
    let mut trace = match dat_path {
        Some(p) => {
            trace::Trace::new(None).with_dat(trace::tracedat::TraceDat::create(p).map_err(|e| cannot(p, "--trace", e))?)
        }
        None => trace::Trace::new(open(&opts.trace_path, "--trace")?),
    };
    if let Some(out) = open(&opts.perfetto_path, "--perfetto")? {
        trace = trace.with_perfetto(&sc.kernel.version.to_string(), sc.kernel.mech.trace_prev_state_4_14, out);
    }
    let mut sim = sim::Sim::with_budget(sc, opts.seed, opts.check, trace, opts.heap_budget)?;
    if let Some(p) = &opts.progress {
        p.start(sim.end_ns);
        sim.progress = Some(p.clone());
    }
    // A run that fails (or that --strict refuses) leaves every target as it
    // was (trace/atomic.rs). When the model stopped on a fault (SL200), the
    // trace up to it is what explains it: it is kept beside the target as
    // FILE.fault, and the error says so.
    if let Err(e) = sim.run() {
        return Err(keep_fault_traces(&mut sim, opts, e));
    }
    if let (true, Some(w)) = (opts.strict, sim.warnings.first()) {
        return Err(SimError::Invariant { message: format!("{}: {w} (--strict)", sc.source) });
    }
    if let (Some(p), Some(text)) = (&opts.trace_path, sim.w.m.kt.k.trace.text.take()) {
        text.finish().map_err(|e| cannot(p, "--trace", e))?;
    }
    if let (Some(p), Some(d)) = (&opts.trace_path, sim.w.m.kt.k.trace.dat.take()) {
        d.finish(sim.w.m.kt.k.sched.rqs.len()).map_err(|e| cannot(p, "--trace", e))?;
    }
    if let (Some(p), Some(mut pf)) = (&opts.perfetto_path, sim.w.m.kt.k.trace.pf.take()) {
        let stoppers: Vec<(u32, String)> =
            (0..sim.w.m.kt.k.sched.rqs.len()).map(|c| (trace::stopper_pid(c), format!("migration/{c}"))).collect();
        let names = sim.w.m.kt.k.sched.tasks.iter().map(|t| (t.pid, t.comm.as_str()));
        pf.process_tree(names.chain(stoppers.iter().map(|(pid, n)| (*pid, n.as_str()))));
        pf.out.finish().map_err(|e| cannot(p, "--perfetto", e))?;
    }
    // Building the report takes a row per task and per kept sample: refused
    // before it when those cannot fit in the budget.
    sim.check_heap_for(sim::report::heap_estimate(&sim))?;
    let r = sim::report::build(&sim, sc);
    sim.check_heap()?;
    Ok(r)
}

/// The traces of a run that stopped on `e`: for a fault of the model
/// (SL200), written whole to `FILE.fault` beside each target, named in the
/// error's message; for any other error, dropped (their temporary files go).
fn keep_fault_traces(sim: &mut sim::Sim, opts: &RunOptions, e: SimError) -> SimError {
    let SimError::Invariant { mut message } = e else { return e };
    let fault = |p: &Option<String>| p.as_ref().map(|p| std::path::PathBuf::from(format!("{p}.fault")));
    let mut kept = Vec::new();
    let nr_cpus = sim.w.m.kt.k.sched.rqs.len();
    if let (Some(to), Some(text)) = (fault(&opts.trace_path), sim.w.m.kt.k.trace.text.take()) {
        text.finish_as(Some(&to)).is_ok().then(|| kept.push(to));
    }
    if let (Some(to), Some(d)) = (fault(&opts.trace_path), sim.w.m.kt.k.trace.dat.take()) {
        d.finish_as(nr_cpus, Some(&to)).is_ok().then(|| kept.push(to));
    }
    if let (Some(to), Some(pf)) = (fault(&opts.perfetto_path), sim.w.m.kt.k.trace.pf.take()) {
        pf.out.finish_as(Some(&to)).is_ok().then(|| kept.push(to));
    }
    if !kept.is_empty() {
        let names: Vec<String> = kept.iter().map(|p| p.display().to_string()).collect();
        message.push_str(&format!(" (the trace up to the fault: {})", names.join(", ")));
    }
    SimError::Invariant { message }
}

/// Parse and validate only; a short summary. Its "machine" is the whole
/// layout the core built (see [`machine_layout`]), so that the QEMU oracle
/// (python/schedlab/qemu/) boots the same machine without a copy of the
/// presets or of the layout rules.
pub fn check_text(text: &str, file: &str, overrides: &[(String, String)]) -> Result<serde_json::Value> {
    Ok(summary(&scenario::load(text, file, overrides)?))
}

/// A validated scenario's summary (what [`check_text`] returns).
pub fn summary(sc: &scenario::Scenario) -> serde_json::Value {
    serde_json::json!({
        "name": sc.name,
        "machine": machine_layout(&sc.machine),
        "kernel": scenario::describe::kernel_info(sc.kernel.version, &sc.kernel.mech),
        "tasks": sc.groups.iter().map(|g| g.count).sum::<usize>(),
        "notes": sc.notes,
    })
}

/// A machine as JSON: `name`, `nr_cpus`, `sockets`, `cores_per_socket`,
/// `threads_per_core`, `nodes`, `distance` (the SLIT, nodes x nodes),
/// `memory_bytes` (0: not given) and `cpus`, one `{cpu, package, core,
/// thread, llc, node}` per CPU in CPU order, with the global ids of
/// [`machine::CpuInfo`] (`core` and `llc` are unique across packages).
/// O(cpus + nodes^2).
fn machine_layout(m: &machine::Machine) -> serde_json::Value {
    let cpus: Vec<serde_json::Value> = m
        .cpus
        .iter()
        .map(|c| {
            serde_json::json!({
                "cpu": c.id, "package": c.package, "core": c.core, "thread": c.thread, "llc": c.llc, "node": c.node,
            })
        })
        .collect();
    serde_json::json!({
        "name": m.name,
        "nr_cpus": m.nr_cpus(),
        "sockets": m.nr_packages,
        "cores_per_socket": m.nr_cores / m.nr_packages,
        "threads_per_core": m.threads_per_core,
        "nodes": m.nr_nodes,
        "distance": m.node_distance,
        "memory_bytes": m.memory_bytes,
        "cpus": cpus,
    })
}
