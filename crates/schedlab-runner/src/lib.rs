//! schedlab-runner: run a schedlab scenario's tasks as real threads on the
//! local kernel and measure them the way a kernel engineer would
//! (/proc/<pid>/task/<tid>/{schedstat,sched,status}, /proc/stat).
//!
//! Exit status: 0 success; 2 the scenario is invalid or asks for something
//! with no real counterpart (refused before anything runs); 3 the run failed
//! on this host (a syscall was refused, e.g. EPERM for SCHED_FIFO).

mod autogroup;
mod calibrate;
mod cgroup;
mod exec;
mod isolcpus;
mod plan;
mod procfs;
mod report;
mod sys;
mod write;

use std::collections::BTreeMap;

use schedlab_core::scenario;

use crate::exec::Shared;
use crate::procfs::{CpuJiffies, TaskCounters};

const USAGE: &str = "\
usage: schedlab-runner [--json FILE] [--serial] [--set KEY=VALUE]... [--seed N] [--timeout DURATION]
                       [--scratch DIR] SCENARIO
       schedlab-runner --calibrate [--json FILE] [--serial]

Runs the scenario's tasks as real threads of this process on the local kernel
and writes a JSON report shaped like `schedlab run --json` (plus \"source\": \"real\").

  --json FILE        write the report to FILE ('-': stdout, the default)
  --serial           print the report on stdout between the lines
                     === SCHEDLAB-REPORT BEGIN === and === SCHEDLAB-REPORT END ===
  --set KEY=VALUE    override a scenario key, as `schedlab run --set` (repeatable)
  --seed N           seed of the duration distributions (default 1)
  --timeout D        end a scenario without measure.duration after D (default 60s)
  --scratch DIR      where `write` ops write their files (a directory on the
                     disk the scenario writes to; needed by a scenario with
                     write ops, whose [kernel.vm] dirty sysctls the run sets
                     in /proc/sys/vm and puts back: root)
  --calibrate        measure this machine's values of the simulator's cost
                     constants (kernel.costs: pipe_write, pipe_read, unix_send,
                     unix_recv, context_switch, fork, exit) on one CPU and
                     report them (\"source\": \"real-calibration\")

exit status: 0 ok; 2 invalid or refused scenario; 3 the run failed on this host";

pub const BEGIN_MARK: &str = "=== SCHEDLAB-REPORT BEGIN ===";
pub const END_MARK: &str = "=== SCHEDLAB-REPORT END ===";

struct Args {
    scenario: String,
    json: Option<String>,
    serial: bool,
    sets: Vec<(String, String)>,
    seed: u64,
    timeout_ns: u64,
    calibrate: bool,
    scratch: Option<String>,
}

enum Fail {
    /// Exit 2: usage or refused scenario.
    Refused(String),
    /// Exit 3: the host refused something at run time.
    Host(String),
}

fn parse_args(argv: Vec<String>) -> Result<Option<Args>, Fail> {
    let mut a = Args {
        scenario: String::new(),
        json: None,
        serial: false,
        sets: Vec::new(),
        seed: 1,
        timeout_ns: 60_000_000_000,
        calibrate: false,
        scratch: None,
    };
    let mut it = argv.into_iter().skip(1);
    let mut positional = Vec::new();
    let usage = |m: String| Fail::Refused(format!("[SL001] {m}\n{USAGE}"));
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| usage(format!("{name} needs a value")));
        match arg.as_str() {
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(None);
            }
            "--version" => {
                println!("schedlab-runner {}", env!("CARGO_PKG_VERSION"));
                return Ok(None);
            }
            "--json" => a.json = Some(value("--json")?),
            "--serial" => a.serial = true,
            "--calibrate" => a.calibrate = true,
            "--scratch" => a.scratch = Some(value("--scratch")?),
            "--set" | "-o" => {
                let kv = value("--set")?;
                // The override grammar of every schedlab command line.
                a.sets.push(schedlab_core::scenario::overrides::parse_set(&kv).map_err(usage)?);
            }
            "--seed" => {
                let v = value("--seed")?;
                a.seed = v.parse().map_err(|_| usage(format!("--seed {v}: accepted: an integer >= 0")))?;
            }
            "--timeout" => {
                let v = value("--timeout")?;
                a.timeout_ns = schedlab_core::units::parse_duration(&v)
                    .map_err(|m| usage(format!("--timeout {v}: {m}; accepted: a duration (\"30s\")")))?;
            }
            s if s.starts_with('-') && s.len() > 1 => return Err(usage(format!("unknown option {s}"))),
            _ => positional.push(arg),
        }
    }
    match positional.as_slice() {
        [] if a.calibrate => {}
        [one] if a.calibrate => return Err(usage(format!("--calibrate takes no SCENARIO (got {one})"))),
        [one] => a.scenario = one.clone(),
        [] => return Err(usage("missing SCENARIO (a .toml file)".into())),
        _ => return Err(usage(format!("one SCENARIO expected, got {}", positional.join(" ")))),
    }
    Ok(Some(a))
}

/// The dirty counters at the window's start, at each interval (with its
/// end relative to t0) and at the end.
pub type DirtyReads = (write::DirtyRead, Vec<(u64, write::DirtyRead)>, write::DirtyRead);

/// Everything measured in one run, for the report.
pub struct Measured {
    pub slots: Vec<exec::Slot>,
    /// Per slot: counters at the window start (None: the thread came later).
    pub base: Vec<Option<TaskCounters>>,
    /// Per slot: counters at the window end (None: it had exited; use its own).
    pub end: Vec<Option<TaskCounters>>,
    pub stat_base: BTreeMap<usize, CpuJiffies>,
    pub stat_end: BTreeMap<usize, CpuJiffies>,
    /// (end of interval relative to t0, /proc/stat then).
    pub samples: Vec<(u64, BTreeMap<usize, CpuJiffies>)>,
    pub window: (u64, u64),
    /// How late the window's start counters were read (the coordinator's
    /// wakeup at the window's start, late).
    pub late_start_ns: u64,
    pub interval_ns: u64,
    pub host_cpus: Vec<usize>,
    pub reason: &'static str,
    pub main_rt: bool,
    /// /proc/pressure at the window's start and end (`kernel.psi`; None
    /// without it or on a kernel without PSI).
    pub pressure: Option<([procfs::PressureFileRead; 3], [procfs::PressureFileRead; 3])>,
    /// The main thread's CPU time for the window start's read of the tasks'
    /// counters, and the tasks it read.
    pub read_tasks: (u64, usize),
    /// Its CPU time for each interval's /proc/stat read, and the CPUs read.
    pub read_stats: Vec<(u64, usize)>,
    /// Its CPU time per thread it created at the start (None: none).
    pub spawn_ns: Option<u64>,
    /// With write ops: the dirty counters at the window's start, at each
    /// interval (with its end relative to t0) and at the end.
    pub dirty: Option<DirtyReads>,
    /// The disk held to its bandwidth (enforce = true): its name and
    /// bytes per second.
    pub enforced: Option<(String, u64)>,
    /// Per task group (0: the root's, zeros): cpu.stat's bandwidth counters
    /// over the window (cgroup::Cgroups::read_stats' order); empty without
    /// cgroups.
    pub cpu_stat: Vec<[u64; 5]>,
    /// Per task group: cpuset.cpus.effective in scenario CPUs, read at the
    /// end (None: no cpuset in the scenario, or the root's).
    pub cpus_effective: Vec<Option<String>>,
    /// The kernel's isolated CPUs among the run's (scenario CPUs).
    pub isolcpus: Option<String>,
}

fn read_all(shared: &Shared) -> Vec<Option<TaskCounters>> {
    let tids: Vec<(i32, bool)> = exec_lock(&shared.slots).iter().map(|s| (s.tid, s.finished)).collect();
    tids.into_iter()
        .map(
            |(tid, fin)| {
                if tid == 0 || fin {
                    None
                } else {
                    procfs::read_task(&format!("/proc/self/task/{tid}")).ok()
                }
            },
        )
        .collect()
}

fn exec_lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn proc_stat() -> Result<BTreeMap<usize, CpuJiffies>, Fail> {
    procfs::read_proc_stat().map_err(|e| Fail::Host(format!("/proc/stat: {e}")))
}

fn run(args: &Args) -> Result<serde_json::Value, Fail> {
    let text = std::fs::read_to_string(&args.scenario)
        .map_err(|e| Fail::Refused(format!("[SL001] {}: cannot read: {e}", args.scenario)))?;
    let sc = scenario::load_real(&text, &args.scenario, &args.sets)
        .map_err(|e| Fail::Refused(format!("[{}] {e}", e.code())))?;
    let allowed = sys::allowed_cpus().map_err(|e| Fail::Host(format!("sched_getaffinity: {e}")))?;
    let allowed = isolcpus::widen(&sc, allowed).map_err(|e| Fail::Host(format!("isolcpus: {e}")))?;
    plan::check(&sc, allowed.len()).map_err(|e| Fail::Refused(e.to_string()))?;
    let session = autogroup::session_tg(&sc).map_err(|e| Fail::Refused(e.to_string()))?;
    let host_cpus: Vec<usize> = allowed[..sc.machine.nr_cpus()].to_vec();
    let host_iso = isolcpus::host_isolated();
    isolcpus::check(&sc, &host_cpus, &host_iso).map_err(|e| Fail::Refused(format!("[SL110] {e}")))?;
    if sc.isolcpus.is_some() {
        // Back to init's CPUs: the main thread (and the threads it clones,
        // before they set their own) keeps off the isolated ones, as start.rs
        // has the simulated runner do.
        let housekeeping: Vec<usize> = allowed.iter().copied().filter(|c| !host_iso.contains(c)).collect();
        sys::set_affinity(0, &housekeeping).map_err(|e| Fail::Host(format!("sched_setaffinity: {e}")))?;
    }
    let writes = sc.read_ops.iter().any(|o| o.write);
    let scratch = match (&args.scratch, writes) {
        (Some(d), true) => {
            let p = std::path::PathBuf::from(d);
            if !p.is_dir() {
                return Err(Fail::Refused(format!("[SL001] --scratch {d}: not a directory")));
            }
            if write::free_bytes(&p).is_some_and(|f| f < write::MIN_FREE) {
                return Err(Fail::Refused(format!(
                    "[SL121] --scratch {d}: less than {} GiB free; a run's writes keep their files until it ends; \
                     accepted: a directory with that much space (SCHEDLAB_SCRATCH)",
                    write::MIN_FREE >> 30
                )));
            }
            if sys::is_memory_fs(&p) {
                return Err(Fail::Refused(format!(
                    "[SL121] --scratch {d}: a tmpfs or ramfs, whose pages are never written back (no dirty \
                     throttle); accepted: a directory on the disk the scenario writes to (SCHEDLAB_SCRATCH)"
                )));
            }
            Some(p)
        }
        (None, true) => {
            return Err(Fail::Refused(format!(
                "[SL121] {}: the scenario has write ops: give --scratch DIR, a directory on the disk it writes to",
                sc.source
            )))
        }
        (_, false) => None,
    };
    // The scenario's dirty limits for the run (put back on return).
    let _vm = match writes {
        true => Some(write::VmSysctls::apply(&sc.kernel.vm.dirty).map_err(Fail::Host)?),
        false => None,
    };
    // An enforced disk: the real device held to the scenario's bandwidth.
    let enforced: Vec<(String, u64)> = {
        let mut v: Vec<usize> = sc.read_ops.iter().filter(|o| o.write).flat_map(|o| o.disks.iter().copied()).collect();
        v.sort_unstable();
        v.dedup();
        v.into_iter()
            .map(|i| &sc.machine.disks[i])
            .filter(|d| d.enforce)
            .map(|d| (d.name.clone(), d.bandwidth))
            .collect()
    };
    if enforced.len() > 1 {
        return Err(Fail::Refused(format!(
            "[SL121] {}: write ops to {} disks with enforce = true, which all write to the one scratch directory; \
             accepted: one",
            sc.source,
            enforced.len()
        )));
    }
    let _throttle = match (enforced.first(), &scratch) {
        (Some((_, bw)), Some(dir)) => Some(write::BlkThrottle::apply(dir, *bw).map_err(Fail::Host)?),
        _ => None,
    };
    let read_dirty = || write::read_dirty().map_err(|e| Fail::Host(format!("/proc/meminfo, /proc/vmstat: {e}")));
    sys::install_wake_handler().map_err(|e| Fail::Host(format!("sigaction: {e}")))?;

    let chunk_iters = exec::calibrate();
    let cgroups = cgroup::Cgroups::create(&sc, &host_cpus).map_err(|e| Fail::Host(format!("cgroups: {e}")))?;
    let shared = Shared::new(&sc, host_cpus.clone(), args.seed, chunk_iters, scratch, cgroups);
    let read_cpu_stat = || shared.cgroups.as_ref().map(|c| c.read_stats()).unwrap_or_default();
    let mut cpu_stat_base = Vec::new();
    // The session (setsid) and the autogroup sysctl, put back when the run ends.
    let nice = |tg: usize| {
        let name = sc.cgroups[tg - 1].autogroup.as_deref();
        sc.sessions.iter().find(|(n, _)| Some(n.as_str()) == name).map_or(0, |s| s.1)
    };
    let mut ag = autogroup::Autogroup::start(session.map(nice)).map_err(|e| {
        shared.stop_and_join();
        Fail::Host(format!("autogroup: {e}"))
    })?;
    let mut n = 0;
    let spawn_cpu = sys::thread_cpu();
    for (gi, g) in sc.groups.iter().enumerate() {
        if g.count > 0 {
            if let Err(e) = ag.set(Some(g.cgroup) == session) {
                shared.stop_and_join();
                return Err(Fail::Host(format!("autogroup: {e}")));
            }
        }
        for _ in 0..g.count {
            if let Err(e) = shared.spawn(gi, false) {
                shared.stop_and_join();
                return Err(Fail::Host(format!("cannot create thread {} of {}: {e}", n, g.name)));
            }
            n += 1;
        }
    }
    let spawn_cpu = (n > 0).then(|| (sys::thread_cpu() - spawn_cpu) / n as u64);
    // Threads forked during the run: into the session's autogroup if there
    // is one (session_tg refused forks of root tasks then), else the root.
    if let Err(e) = ag.set(session.is_some()) {
        shared.stop_and_join();
        return Err(Fail::Host(format!("autogroup: {e}")));
    }
    let errors = shared.wait_ready(n);
    if !errors.is_empty() {
        shared.stop_and_join();
        return Err(Fail::Host(errors.join("\n")));
    }
    // The coordinator must wake on time even under RT hogs: SCHED_FIFO 99 if allowed.
    use schedlab_core::prio::{Policy, MAX_RT_PRIORITY};
    let main_rt = sys::set_policy(sys::gettid(), Policy::Fifo, MAX_RT_PRIORITY).is_ok();

    let warm = sc.measure.warmup;
    let t0 = sys::now();
    let win_start = t0 + warm;
    let win_end = sc.measure.duration.map(|d| win_start + d);
    shared.set_window(win_start, win_end.unwrap_or(u64::MAX));
    let mut base = Vec::new();
    let mut stat_base = BTreeMap::new();
    let psi = sc.kernel.psi;
    let mut psi_base = None;
    let mut dirty_base = None;
    let mut dirty_samples = Vec::new();
    let mut read_tasks = (0, 0);
    let mut read_base = |base: &mut Vec<Option<TaskCounters>>| {
        let t = sys::thread_cpu();
        *base = read_all(&shared);
        read_tasks = (sys::thread_cpu() - t, base.iter().flatten().count());
    };
    if warm == 0 {
        read_base(&mut base);
        stat_base = proc_stat()?;
        cpu_stat_base = read_cpu_stat();
        psi_base = psi.then(procfs::read_pressure).flatten();
        dirty_base = if writes { Some(read_dirty()?) } else { None };
    }
    shared.open_gate(t0);
    // Where the window's counters were read: its start, or later if the
    // coordinator was kept off its CPU (on 6.12-6.18 a fair task the fair
    // server runs on past its budget held a SCHED_FIFO 99 coordinator for
    // up to 1.2 s, docs/models/sched-deadline.md). Shares are over the
    // window read, not the one asked for.
    let mut base_at = win_start;
    if warm > 0 {
        while sys::now() < win_start {
            sys::sleep_until(win_start);
        }
        base_at = sys::now();
        read_base(&mut base);
        stat_base = proc_stat()?;
        cpu_stat_base = read_cpu_stat();
        psi_base = psi.then(procfs::read_pressure).flatten();
        dirty_base = if writes { Some(read_dirty()?) } else { None };
    }
    let interval = sc.measure.interval;
    let mut samples = Vec::new();
    let mut read_stats = Vec::new();
    let mut next = win_start + interval;
    // An interval that ended before the window was read is not sampled.
    while interval > 0 && next <= base_at {
        next += interval;
    }
    let hard_end = win_end.unwrap_or(win_start + args.timeout_ns);
    let reason;
    loop {
        let until = next.min(hard_end);
        if win_end.is_some() {
            while sys::now() < until {
                sys::sleep_until(until);
            }
        } else if shared.wait_all_exit(until) {
            reason = "all tasks exited";
            break;
        }
        if until >= hard_end {
            reason = if win_end.is_some() { "duration reached" } else { "timeout" };
            break;
        }
        let t = sys::thread_cpu();
        let stat = proc_stat()?;
        read_stats.push((sys::thread_cpu() - t, stat.len()));
        samples.push((until - t0, stat));
        if writes {
            dirty_samples.push((until - t0, read_dirty()?));
        }
        next += interval;
    }
    let end = read_all(&shared);
    let stat_end = proc_stat()?;
    let cpu_stat_end = read_cpu_stat();
    let cpus_effective = shared.cgroups.as_ref().map(|c| c.read_cpus_effective()).unwrap_or_default();
    let psi_end = psi.then(procfs::read_pressure).flatten();
    // /proc/vmstat's nr_dirty_threshold is the reader's own: an RT task's
    // is a quarter higher (domain_dirty_limits). The window is over: read
    // it as the scenario's SCHED_NORMAL writers see it.
    if writes && main_rt {
        let _ = sys::set_policy(sys::gettid(), Policy::Normal, 0);
    }
    let dirty_end = if writes { Some(read_dirty()?) } else { None };
    let t_end = sys::now();
    shared.stop_and_join();
    let late = exec_lock(&shared.late_errors).clone();
    if !late.is_empty() {
        return Err(Fail::Host(late.join("\n")));
    }
    let slots = exec_lock(&shared.slots).clone();
    base.resize(slots.len(), None);
    let mut end = end;
    end.resize(slots.len(), None);
    let isolcpus_row = isolcpus::report(&host_cpus, &host_iso);
    let m = Measured {
        slots,
        base,
        end,
        stat_base,
        stat_end,
        samples,
        window: (base_at - t0, t_end.min(hard_end).max(base_at) - t0),
        late_start_ns: base_at - win_start,
        interval_ns: interval,
        host_cpus,
        reason,
        main_rt,
        pressure: psi_base.zip(psi_end),
        read_tasks,
        read_stats,
        spawn_ns: spawn_cpu,
        dirty: dirty_base.zip(dirty_end).map(|(b, e)| (b, dirty_samples, e)),
        enforced: enforced.first().cloned(),
        cpu_stat: cpu_stat_base
            .into_iter()
            .zip(cpu_stat_end)
            .map(|(b, e)| std::array::from_fn(|i| e[i] - b[i]))
            .collect(),
        cpus_effective,
        isolcpus: isolcpus_row,
    };
    drop(shared);
    Ok(report::build(&sc, &m, args.seed).to_value())
}

/// `--calibrate`: a report of source "real-calibration" with the host and
/// the measured costs.
fn run_calibrate() -> Result<serde_json::Value, Fail> {
    use schedlab_core::report::{Calibration, CostFigure, HostInfo, Report};
    let (cpu, figs) = calibrate::run().map_err(Fail::Host)?;
    let u = sys::uname();
    let rep = Report {
        schedlab: env!("CARGO_PKG_VERSION").to_string(),
        scenario: "calibrate".to_string(),
        source: "real-calibration".to_string(),
        host: Some(HostInfo {
            kernel_release: u.release,
            kernel_version: u.version,
            arch: u.machine,
            nr_cpus: sys::online_cpus(),
            cpus_used: vec![cpu],
            user_hz: sys::clock_ticks(),
            coordinator_fifo: false,
        }),
        calibration: Some(Calibration {
            cpu,
            costs: figs
                .into_iter()
                .map(|f| CostFigure {
                    key: f.key.to_string(),
                    median_ns: f.median_ns,
                    min_ns: f.min_ns,
                    max_ns: f.max_ns,
                    measured: None,
                })
                .collect(),
        }),
        ..Default::default()
    };
    Ok(rep.to_value())
}

fn emit(args: &Args, doc: &serde_json::Value) -> Result<(), Fail> {
    let text = serde_json::to_string_pretty(doc).map_err(|e| Fail::Host(format!("JSON: {e}")))?;
    if args.serial {
        println!("{BEGIN_MARK}\n{text}\n{END_MARK}");
    }
    match args.json.as_deref() {
        None if !args.serial => println!("{text}"),
        Some("-") => println!("{text}"),
        Some(f) => std::fs::write(f, text + "\n").map_err(|e| Fail::Host(format!("--json {f}: cannot write: {e}")))?,
        None => {}
    }
    Ok(())
}

/// The whole command: `argv` as `std::env::args()` gives it (argv[0] first).
/// Returns the exit status. The `schedlab-runner` binary calls this, and so
/// does the Python package's embedded runner (`python -m schedlab.runner`),
/// so an installed wheel can run scenarios on the local kernel without a
/// separate binary or a Rust toolchain.
pub fn main_with_args(argv: Vec<String>) -> u8 {
    let r = parse_args(argv).and_then(|a| match a {
        None => Ok(()),
        Some(a) => {
            let doc = if a.calibrate { run_calibrate()? } else { run(&a)? };
            emit(&a, &doc)
        }
    });
    match r {
        Ok(()) => 0,
        Err(Fail::Refused(m)) => {
            eprintln!("schedlab-runner: error: {m}");
            2
        }
        Err(Fail::Host(m)) => {
            eprintln!("schedlab-runner: error: [SL300] {m}");
            3
        }
    }
}
