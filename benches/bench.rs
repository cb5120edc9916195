//! `schedlab-bench` (`make bench`): how fast the simulator runs the reference
//! scenarios.
//!
//! ```text
//! cargo run --release -p schedlab-core --bin schedlab-bench -- [--quick] [--runs N] [--duration D] [FILTER ...]
//! ```
//!
//! For each reference scenario it prints the machine size, the number of
//! tasks, the simulated time, the events processed, the wall time of the run
//! (best of 3), events per wall second and simulated seconds per wall second.
//!
//! * The wall time is `std::time::Instant` around `schedlab_core::run_text`
//!   only: it includes parsing and validating the scenario text (well under a
//!   millisecond) and building the JSON report, not reading the file.
//! * `--quick`: one run each, and `measure.duration = 2s` (ktask-nice then
//!   stops at 2 s instead of running until every task exits).
//! * `--runs N`: best of N runs instead of 3.
//! * `--duration D`: `measure.duration = D` (as `--quick`'s 2 s; a short
//!   one for profiling under cachegrind).
//! * `FILTER`: run only the scenarios whose name contains one of the filters
//!   (a filter that is a whole scenario name selects that scenario alone).
//! * `tasks` counts the tasks that existed in the run (ktask helper threads
//!   included), from the report.
//!
//! A scenario that fails prints its error and the bench goes on; the exit
//! status is then 1. Repeated runs must agree on the event count and trace
//! hash (the simulator is deterministic); a mismatch is reported as an error.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// One reference scenario: a name for the table, a file (relative to the
/// repository root) and the overrides applied to it.
struct Bench {
    name: &'static str,
    file: &'static str,
    overrides: &'static [(&'static str, &'static str)],
}

const BENCHES: &[Bench] = &[
    Bench { name: "ktask-nice/max_nice", file: "scenarios/seeds/ktask-nice.toml", overrides: &[] },
    Bench {
        name: "ktask-nice/normal_prio",
        file: "scenarios/seeds/ktask-nice.toml",
        overrides: &[("kernel.ktask.helper_nice", "0")],
    },
    Bench {
        name: "rt-migrate/push_pull x6500",
        file: "scenarios/seeds/rt-migrate.toml",
        overrides: &[("kernel.version", "\"2.6.25\"")],
    },
    Bench {
        name: "rt-migrate/v6.6 ipi x6500",
        file: "scenarios/seeds/rt-migrate.toml",
        overrides: &[("kernel.version", "\"6.6\"")],
    },
    // IO-heavy: dbench on XFS (workqueues, block IO, interrupts, cpuidle),
    // as the scenario ran before CPU frequency (one SATA interrupt on CPU 0,
    // every CPU at one speed), then seed 001's numa48 with its processor.
    Bench {
        name: "kworker-stack/numa48 x16",
        file: "scenarios/seeds/kworker-stack.toml",
        overrides: &[
            ("machine.preset", "\"numa48\""),
            ("machine.cpufreq", "\"none\""),
            ("machine.disk.0.irq_cpu", "0"),
            ("dbench.clients", "16"),
        ],
    },
    Bench {
        name: "kworker-stack/uma8 x64",
        file: "scenarios/seeds/kworker-stack.toml",
        overrides: &[
            ("machine.cpufreq", "\"none\""),
            ("machine.disk.0.irq_cpu", "0"),
            ("dbench.clients", "64"),
            ("kernel.features", "[\"KTHREAD_STACKING\"]"),
        ],
    },
    Bench {
        name: "kworker-stack/numa48 x16 cpufreq",
        file: "scenarios/seeds/kworker-stack.toml",
        overrides: &[
            ("machine.preset", "\"numa48\""),
            ("machine.cpufreq", "\"e5-2670v3\""),
            ("machine.cpuidle", "\"hsx\""),
            ("dbench.clients", "16"),
        ],
    },
    // Memory reclaim: P3's 40 dd readers past one kswapd's saturation (the
    // LRU lock and zone->lock, direct reclaim), and zswap's anon hogs.
    // (With skl52's memory bandwidth, membw/: 2058.5 instructions per
    // event without it, 2153.9 with it, on 2026-11-26.)
    Bench {
        name: "kswapd-threads/40 dd",
        file: "scenarios/seeds/kswapd-threads.toml",
        overrides: &[("task.dd.count", "40")],
    },
    Bench {
        name: "kswapd-zswap/4 hogs x16",
        file: "scenarios/seeds/kswapd-zswap.toml",
        overrides: &[("task.hog.count", "4"), ("kernel.vm.kswapd_threads", "16")],
    },
    // Files read again, page by page (mm/workingset.rs): hits, refaults,
    // activation and deactivation.
    // Scaled to churn within --quick's 2 s: 1 GiB, a 4 GiB/s disk, 768 MiB
    // files, the second set from 1 s.
    Bench {
        name: "workingset-transition/1GiB",
        file: "scenarios/published/workingset-transition.toml",
        overrides: &[
            ("machine.memory", "\"1GiB\""),
            ("machine.disk.0.bandwidth", "\"4GiB/s\""),
            ("task.db1.program.0.loop.body.0.read.file_size", "\"768MiB\""),
            ("task.db2.program.0.loop.body.0.read.file_size", "\"768MiB\""),
            ("task.db2.start", "\"1s\""),
        ],
    },
    Bench { name: "smp64-mixed/cfs", file: "scenarios/bench/smp64-mixed.toml", overrides: &[] },
    Bench {
        name: "smp64-mixed/eevdf",
        file: "scenarios/bench/smp64-mixed.toml",
        overrides: &[("kernel.version", "\"6.6\"")],
    },
    Bench { name: "smp256-mixed/cfs", file: "scenarios/bench/smp256-mixed.toml", overrides: &[] },
    Bench { name: "cgroups-1000/smp256", file: "gen:cgroups-1000", overrides: &[] },
    Bench {
        name: "smp256-mixed/eevdf",
        file: "scenarios/bench/smp256-mixed.toml",
        overrides: &[("kernel.version", "\"6.6\"")],
    },
    // 1,024 CPUs and 10,000 tasks: where the time per event rises with
    // cache misses.
    Bench {
        name: "smp1024-mixed/cfs",
        file: "scenarios/bench/smp256-mixed.toml",
        overrides: &[("machine.preset", "\"smp1024\""), ("task.hog.count", "5000"), ("task.sleeper.count", "5000")],
    },
    Bench {
        name: "smp1024-mixed/eevdf",
        file: "scenarios/bench/smp256-mixed.toml",
        overrides: &[
            ("kernel.version", "\"6.6\""),
            ("machine.preset", "\"smp1024\""),
            ("task.hog.count", "5000"),
            ("task.sleeper.count", "5000"),
        ],
    },
    // Issue 42's machine: two AMD EPYC 9965 (768 CPUs, 24 LLCs of 32) with
    // 10,000 tasks on 6.12.
    Bench {
        name: "turin768-mixed/eevdf",
        file: "scenarios/bench/smp256-mixed.toml",
        overrides: &[
            ("kernel.version", "\"6.12\""),
            ("machine.preset", "\"turin768\""),
            ("task.hog.count", "5000"),
            ("task.sleeper.count", "5000"),
        ],
    },
    // Two Xeon 6972P in SNC3 (6 nodes, an LLC domain each), 2,560 tasks.
    Bench {
        name: "gnr384-mixed/eevdf",
        file: "scenarios/bench/smp256-mixed.toml",
        overrides: &[
            ("kernel.version", "\"6.12\""),
            ("machine.preset", "\"gnr384\""),
            ("task.hog.count", "1280"),
            ("task.sleeper.count", "1280"),
        ],
    },
    // An SGI UV 2000 at its largest: 4,096 CPUs, 256 nodes, 40,000 tasks.
    Bench {
        name: "uv4096-mixed/eevdf",
        file: "scenarios/bench/smp256-mixed.toml",
        overrides: &[
            ("kernel.version", "\"6.12\""),
            ("machine.preset", "\"uv4096\""),
            ("task.hog.count", "20000"),
            ("task.sleeper.count", "20000"),
        ],
    },
    // The fixed cost of a run on a large machine (boot, domains, report).
    Bench {
        name: "one-task/smp1024",
        file: "scenarios/bench/one-task.toml",
        overrides: &[("machine.preset", "\"smp1024\"")],
    },
    Bench { name: "sched-idle/smp64", file: "scenarios/bench/sched-idle-scaled.toml", overrides: &[] },
    Bench {
        name: "sched-idle/smp256",
        file: "scenarios/bench/sched-idle-scaled.toml",
        overrides: &[("machine.preset", "\"smp256\""), ("task.idlehog.count", "256"), ("task.normal.count", "16")],
    },
    Bench {
        name: "sched-idle/smp1024",
        file: "scenarios/bench/sched-idle-scaled.toml",
        overrides: &[("machine.preset", "\"smp1024\""), ("task.idlehog.count", "1024"), ("task.normal.count", "64")],
    },
    Bench {
        name: "sched-idle/smp64/2.6.35",
        file: "scenarios/bench/sched-idle-scaled.toml",
        overrides: &[("kernel.version", "\"2.6.35\"")],
    },
    Bench {
        name: "sched-idle/smp256/2.6.35",
        file: "scenarios/bench/sched-idle-scaled.toml",
        overrides: &[
            ("kernel.version", "\"2.6.35\""),
            ("machine.preset", "\"smp256\""),
            ("task.idlehog.count", "256"),
            ("task.normal.count", "16"),
        ],
    },
    Bench {
        name: "sched-idle/smp1024/2.6.35",
        file: "scenarios/bench/sched-idle-scaled.toml",
        overrides: &[
            ("kernel.version", "\"2.6.35\""),
            ("machine.preset", "\"smp1024\""),
            ("task.idlehog.count", "1024"),
            ("task.normal.count", "64"),
        ],
    },
];

const SEED: u64 = 1;

/// What one scenario measured.
struct Row {
    cpus: usize,
    tasks: usize,
    sim_s: f64,
    events: u64,
    wall_s: f64,
}

fn usage() -> &'static str {
    "usage: schedlab-bench [--quick] [--runs N] [--duration D] [FILTER ...]\n\
     \x20 --quick       one run each, measure.duration = 2s\n\
     \x20 --runs N      best of N runs (default 3)\n\
     \x20 --duration D  measure.duration = D (\"300ms\")\n\
     \x20 FILTER        run only scenarios whose name contains FILTER"
}

fn repo_root() -> PathBuf {
    // benches/bench.rs is built as part of crates/schedlab-core.
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Issue 39's scale case, generated: 256 CPUs (smp256) on 6.12, 1,000
/// cgroups of 10 tasks each (10,000 tasks; cpu.weight 50, 100 or 200), every
/// tenth group capped at two CPUs (cpu.max "200000 100000"). Each task runs
/// ~2 ms and sleeps ~20 ms (exponential): about 3.5 times more demand than
/// CPUs. 2 simulated seconds.
fn cgroups_1000() -> String {
    let mut t = String::from(
        "name = \"cgroups-1000\"\n[machine]\npreset = \"smp256\"\n[kernel]\nversion = \"6.12\"\n\
         [measure]\nduration = \"2s\"\n",
    );
    for i in 0..1000 {
        t += &format!("[[cgroup]]\npath = \"/g{i}\"\n\"cpu.weight\" = {}\n", [50, 100, 200][i % 3]);
        if i % 10 == 0 {
            t += "\"cpu.max\" = \"200000 100000\"\n";
        }
    }
    for i in 0..1000 {
        t += &format!(
            "[[task]]\nname = \"t{i}\"\ncount = 10\ncgroup = \"/g{i}\"\n\
             program = [{{ loop = {{ count = 0, body = [{{ run = {{ exp = \"2ms\" }} }}, {{ sleep = {{ exp = \"20ms\" }} }}] }} }}]\n"
        );
    }
    t
}

fn run_one(b: &Bench, duration: Option<&str>, runs: usize) -> Result<Row, String> {
    let path = repo_root().join(b.file);
    let text = if b.file == "gen:cgroups-1000" {
        cgroups_1000()
    } else {
        std::fs::read_to_string(&path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?
    };
    let mut overrides: Vec<(String, String)> =
        b.overrides.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    if let Some(d) = duration {
        overrides.push(("measure.duration".to_string(), format!("\"{d}\"")));
    }
    let opts = schedlab_core::RunOptions { seed: SEED, ..Default::default() };
    let mut best = f64::INFINITY;
    let mut first: Option<(schedlab_core::report::Report, u64, String)> = None;
    for _ in 0..runs {
        let t0 = Instant::now();
        let result = schedlab_core::run_text(&text, b.file, &overrides, &opts);
        let dt = t0.elapsed().as_secs_f64();
        let report = result.map_err(|e| format!("error [{}]: {e}", e.code()))?;
        best = best.min(dt);
        let sim = report.sim.as_ref().ok_or("report has no sim")?;
        let (events, hash) = (sim.events, sim.trace_hash.clone());
        match &first {
            None => first = Some((report, events, hash)),
            Some((_, e0, h0)) => {
                if (*e0, h0) != (events, &hash) {
                    return Err(format!(
                        "not deterministic: run 1 gave {e0} events / hash {h0}, a later run {events} / {hash}"
                    ));
                }
            }
        }
    }
    let (report, events, _) = first.ok_or("no runs")?;
    let end_ns = report.sim.as_ref().map_or(0, |s| s.end_ns);
    // rt-migrate-test's threads of earlier runs are merged into one row.
    let merged = report.rt_migrate_test.as_ref().and_then(|r| r.earlier_threads.as_ref()).map_or(0, |e| e.count);
    Ok(Row {
        cpus: report.cpus.len(),
        tasks: report.tasks.len() + merged,
        sim_s: end_ns as f64 / 1e9,
        events,
        wall_s: best,
    })
}

fn main() -> ExitCode {
    let mut quick = false;
    let mut runs: Option<usize> = None;
    let mut duration: Option<String> = None;
    let mut filters: Vec<String> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--quick" => quick = true,
            "--runs" => match args.next().and_then(|n| n.parse().ok()) {
                Some(n) if n > 0 => runs = Some(n),
                _ => {
                    eprintln!("schedlab-bench: --runs takes a positive integer\n{}", usage());
                    return ExitCode::from(2);
                }
            },
            "--duration" => match args.next() {
                Some(d) if !d.is_empty() && !d.contains('"') => duration = Some(d),
                _ => {
                    eprintln!("schedlab-bench: --duration takes a duration (\"500ms\")\n{}", usage());
                    return ExitCode::from(2);
                }
            },
            "-h" | "--help" => {
                println!("{}", usage());
                return ExitCode::SUCCESS;
            }
            s if s.starts_with('-') => {
                eprintln!("schedlab-bench: unknown option {s}\n{}", usage());
                return ExitCode::from(2);
            }
            s => filters.push(s.to_string()),
        }
    }
    let runs = runs.unwrap_or(if quick { 1 } else { 3 });
    if quick && duration.is_none() {
        duration = Some("2s".to_string());
    }
    // A filter that is a scenario's whole name selects that one only
    // ("sched-idle/smp64" without "sched-idle/smp64/2.6.35"); others match
    // as substrings.
    let matches = |b: &Bench, f: &String| {
        if BENCHES.iter().any(|x| x.name == f.as_str()) {
            b.name == f.as_str()
        } else {
            b.name.contains(f.as_str())
        }
    };
    let selected: Vec<&Bench> =
        BENCHES.iter().filter(|b| filters.is_empty() || filters.iter().any(|f| matches(b, f))).collect();
    if selected.is_empty() {
        let names: Vec<&str> = BENCHES.iter().map(|b| b.name).collect();
        eprintln!("schedlab-bench: no scenario matches {filters:?}; scenarios: {}", names.join(", "));
        return ExitCode::from(2);
    }

    println!(
        "schedlab-bench: seed {SEED}, best of {runs} run{}{}; wall = run_text (parse + simulate + report), file read excluded",
        if runs == 1 { "" } else { "s" },
        match (&duration, quick) {
            (Some(d), true) => format!(", --quick (measure.duration = {d})"),
            (Some(d), false) => format!(", measure.duration = {d}"),
            (None, _) => String::new(),
        },
    );
    let w = selected.iter().map(|b| b.name.len()).max().unwrap_or(8).max(8);
    println!(
        "{:<w$} {:>5} {:>6} {:>7} {:>11} {:>8} {:>7} {:>9}",
        "scenario", "cpus", "tasks", "sim_s", "events", "wall_s", "Mev/s", "sim/wall"
    );
    let mut failed = 0;
    for b in selected {
        match run_one(b, duration.as_deref(), runs) {
            Ok(r) => println!(
                "{:<w$} {:>5} {:>6} {:>7.2} {:>11} {:>8.3} {:>7.2} {:>9.2}",
                b.name,
                r.cpus,
                r.tasks,
                r.sim_s,
                r.events,
                r.wall_s,
                r.events as f64 / r.wall_s / 1e6,
                r.sim_s / r.wall_s,
            ),
            Err(e) => {
                failed += 1;
                println!("{:<w$} FAILED: {e}", b.name);
            }
        }
    }
    if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
