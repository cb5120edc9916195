//! Builds the typed report (`crate::report::Report`, the one schema of
//! docs/report.md) of one simulation from the machine's final state.

use std::collections::BTreeMap;

use crate::report::pct;
use crate::report::LbCounters;
use crate::report::PackagePower;
use crate::report::{
    CpuIdleRow, CpufreqReport, CpufreqRow, CpuidleReport, DbenchReport, DiskReport, IdleStateInfo, WorkqueueRow,
};
use crate::report::{
    CpuSchedstat, CpuTimes, DomainInfo, DomainSchedstat, GroupRow, KernelInfo, MachineInfo, MeasureInfo,
    MigrationsByDistance, Mpstat, MpstatCpu, MpstatRow, MpstatSample, Report, RtInfo, RtmtEarlierThreads, RtmtReport,
    ScaledInfo, Schedstat, SchedstatTotals, SimInfo, TaskRow,
};
use crate::scenario::Scenario;
use crate::sched::cpustat::CpuTime;
use crate::sched::delays::Delays;
use crate::sched::task::{Task, TaskCounters, TaskId, TaskState, LATENCY_HIST_BUCKETS};
use crate::sched::topology::cpulist;
use crate::sim::report_mm::round2;
use crate::sim::Sim;

fn mpstat_row(cpu: MpstatCpu, d: &CpuTime) -> MpstatRow {
    let t = d.total();
    MpstatRow {
        cpu,
        usr: pct(d.usr, t),
        nice: pct(d.nice, t),
        sys: pct(d.sys, t),
        iowait: pct(d.iowait, t),
        irq: pct(d.irq, t),
        soft: pct(d.soft, t),
        idle: pct(d.idle, t),
        ..Default::default()
    }
}

/// mpstat's rows for per-CPU deltas: the `all` row, then one per CPU.
fn rows(deltas: &[CpuTime]) -> Vec<MpstatRow> {
    let mut all = CpuTime::default();
    for d in deltas {
        all.add(d);
    }
    let mut out = vec![mpstat_row(MpstatCpu::All, &all)];
    out.extend(deltas.iter().enumerate().map(|(i, d)| mpstat_row(MpstatCpu::Cpu(i), d)));
    out
}

/// The report of a finished simulation.
/// About the bytes `build` takes: a row per task (the struct, its strings
/// and its histogram) and one per CPU per kept mpstat sample. The heap
/// budget refuses the report before it is built when these cannot fit
/// (lib.rs), so building it is not a burst past the budget.
pub fn heap_estimate(sim: &Sim) -> usize {
    const TASK_ROW_HEAP: usize = 192; // comm, group, policy, cpus_allowed, the log2 histogram
    let rows = sim.stats.rec.samples.len() * (sim.w.m.kt.k.sched.rqs.len() + 1);
    sim.w.m.kt.k.sched.tasks.len() * (std::mem::size_of::<crate::report::TaskRow>() + TASK_ROW_HEAP)
        + rows * (std::mem::size_of::<crate::report::MpstatRow>() + 8)
}

pub fn build(sim: &Sim, sc: &Scenario) -> Report {
    let nr = sim.w.m.kt.k.sched.rqs.len();
    let end = sim.end_ns;
    let warm = sim.stats.rec.warmup.min(end);
    let (cpus, mpstat) = cpu_time(sim);
    // The kernel's own threads (the per-CPU vmstat kworkers) are listed
    // apart from the scenario's tasks.
    // The runner's main thread (measure.start = "runner") is neither: its
    // own report does not list it.
    let harness = sim.w.m.kt.progs.harness_group;
    let nr_scenario = sim.w.m.kt.progs.nr_scenario_groups;
    let is_kernel_thread = |t: &Task| t.group >= nr_scenario && Some(t.group) != harness;
    let started_scenario_task = |t: &Task| t.state != TaskState::New && t.group < nr_scenario;
    let listed = listed_tasks(sim);
    let tasks = (0..sim.w.m.kt.k.sched.tasks.len())
        .filter(|&i| started_scenario_task(&sim.w.m.kt.k.sched.tasks[i]) && listed[i])
        .map(|i| task_row(sim, i))
        .collect();
    let mut timer_delays = Delays::default();
    for t in sim.w.m.kt.k.sched.tasks.iter().filter(|t| started_scenario_task(t)) {
        timer_delays.merge(&t.stats.timer_delays);
    }
    let kernel_threads = (0..sim.w.m.kt.k.sched.tasks.len())
        .filter(|&i| is_kernel_thread(&sim.w.m.kt.k.sched.tasks[i]))
        .map(|i| task_row(sim, i))
        .collect();
    let schedstat = schedstat(sim);
    let migrations: u64 = sim.w.m.kt.k.sched.tasks.iter().map(|t| t.stats.nr_migrations).sum();
    let features: BTreeMap<String, bool> =
        sim.w.m.kt.k.cfg.features.names().into_iter().map(|(n, on)| (n.to_string(), on)).collect();
    // The sysctls this kernel has (a 6.1 report shows no sched_base_slice_ns).
    let has = crate::kernel::Tunables::names_for(&sim.w.m.kt.k.cfg.mech, sim.w.m.kt.k.cfg.version);
    let sysctl = sim
        .w
        .m
        .kt
        .k
        .cfg
        .sysctl
        .as_map()
        .into_iter()
        .filter(|(k, _)| has.contains(k))
        // Autogroup's switch only where the scenario has sessions: reports
        // without one keep the sysctls they had before autogroup was modelled.
        .filter(|(k, _)| *k != "kernel.sched_autogroup_enabled" || !sc.sessions.is_empty())
        // The bandwidth slice likewise only where a cgroup has a quota.
        .filter(|(k, _)| {
            *k != "kernel.sched_cfs_bandwidth_slice_us" || sc.cgroups.iter().any(|c| c.bandwidth.is_some())
        })
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    let mech = &sim.w.m.kt.k.cfg.mech;
    let mut r = Report {
        schedlab: env!("CARGO_PKG_VERSION").to_string(),
        scenario: sc.name.clone(),
        source: sc.source.clone(),
        seed: sim.w.m.kt.k.seed,
        kernel: KernelInfo {
            version: sim.w.m.kt.k.cfg.version.to_string(),
            hz: Some(sim.w.m.kt.k.cfg.hz),
            fair: Some(format!("{:?}", mech.fair).to_lowercase()),
            balancer: Some(if mech.avg_load() { "avg_load" } else { "group_type" }.to_string()),
            features: Some(features),
            sysctl: Some(sysctl),
            scaled: Some(ScaledInfo {
                sched_latency_ns: sim.w.m.kt.k.tun.sched_latency,
                sched_min_granularity_ns: sim.w.m.kt.k.tun.sched_min_granularity,
                sched_wakeup_granularity_ns: sim.w.m.kt.k.tun.sched_wakeup_granularity,
                sched_base_slice_ns: sim.w.m.kt.k.tun.sched_base_slice,
            }),
            isolcpus: sc.isolcpus.as_ref().map(|m| m.to_list_string()),
            ..Default::default()
        },
        machine: MachineInfo {
            name: sim.w.m.kt.k.machine.name.clone(),
            nr_cpus: nr,
            description: sim.w.m.kt.k.machine.description.clone(),
            domains: Some(
                sim.w.m.kt.k.topo.cpu_domains[0]
                    .iter()
                    .map(|&d| DomainInfo {
                        name: sim.w.m.kt.k.topo.domains[d].name.to_string(),
                        span: sim.w.m.kt.k.topo.domains[d].span_weight,
                    })
                    .collect(),
            ),
        },
        sim: Some(SimInfo {
            end_ns: end,
            events: sim.stats.events_processed,
            reason: sim.stop_reason.to_string(),
            trace_hash: format!("{:016x}", sim.w.m.kt.k.trace.hash),
            trace_events: sim.w.m.kt.k.trace.count,
        }),
        measure: MeasureInfo { start_ns: warm, end_ns: end, interval_ns: sc.measure.interval },
        cpus,
        mpstat,
        tasks,
        kernel_threads: Some(kernel_threads),
        groups: groups(sim, sc),
        active_balances: Some(schedstat.totals.alb_pushed),
        schedstat: Some(schedstat),
        migrations,
        migrations_by_distance: Some({
            let [smt, llc, remote_llc, remote_node] = sim.w.m.kt.k.sched.migrations_by_distance;
            MigrationsByDistance { smt, llc, remote_llc, remote_node }
        }),
        wasted_cpu_ns: Some(sim.w.m.kt.k.sched.wasted.ns),
        wasted_cpu_pct: Some(if end > warm {
            (sim.w.m.kt.k.sched.wasted.ns as f64 * 10000.0 / ((end - warm) as f64 * nr as f64)).round() / 100.0
        } else {
            0.0
        }),
        rt: Some(RtInfo {
            push_pull: mech.rt_push_pull(),
            rt_migrations: sim.w.m.kt.k.sched.rt_migrations,
            push_ipis: sim.w.m.kt.k.sched.rd.rto_push.ipis,
            throttle_events: sim.w.m.kt.k.sched.rt_throttle_events,
        }),
        rt_migrate_test: sim
            .w
            .wl
            .rtmt
            .as_ref()
            .map(|r| RtmtReport { earlier_threads: earlier_threads(sim, &listed), ..r.report() }),
        timer_delay: timer_delays.stats(),
        warnings: sim.warnings.clone(),
        ..Default::default()
    };
    kernel_sections(sim, &mut r);
    r.cgroups = crate::sim::report_cgroup::cgroups(sim, sc);
    r.mm = crate::sim::report_mm::mm_report(sim, &r);
    r
}

/// Per-CPU times over the window, and mpstat's samples (whole intervals
/// only, when kept) and Average.
fn cpu_time(sim: &Sim) -> (Vec<CpuTimes>, Mpstat) {
    let nr = sim.w.m.kt.k.sched.rqs.len();
    let rec = &sim.stats.rec;
    let zero = vec![CpuTime::default(); nr];
    let base = rec.base.as_ref().unwrap_or(&zero);
    let deltas: Vec<CpuTime> = sim.w.m.kt.k.sched.rqs.iter().zip(base).map(|(rq, b)| rq.cpu_times().delta(b)).collect();
    // Interrupt and iowait columns exist in a run with devices.
    let io = !sim.w.m.kt.block.disks.is_empty();
    let cpus = deltas
        .iter()
        .enumerate()
        .map(|(cpu, d)| CpuTimes {
            cpu,
            usr_ns: d.usr,
            nice_ns: d.nice,
            sys_ns: d.sys,
            idle_ns: d.idle,
            iowait_ns: io.then_some(d.iowait),
            irq_ns: io.then_some(d.irq),
            soft_ns: io.then_some(d.soft),
            run_delay_ns: Some(d.run_delay),
            ..Default::default()
        })
        .collect();
    let samples = rec
        .samples
        .iter()
        .map(|(t1, d)| MpstatSample {
            end_ns: *t1,
            rows: rows(d),
            run_delay_ns: Some(d.iter().map(|c| c.run_delay).collect()),
        })
        .collect();
    let average = if rec.intervals == 0 { rows(&deltas) } else { rows(&rec.sum) };
    (cpus, Mpstat { samples, average, intervals: rec.intervals })
}

/// One task's row, with its counters over the measurement window.
fn task_row(sim: &Sim, i: TaskId) -> TaskRow {
    let t = &sim.w.m.kt.k.sched.tasks[i];
    let w = sim.task_counters(i).since(&sim.stats.task_base.get(i).copied().unwrap_or_default());
    let s = &t.stats;
    let timer = s.timer_delays.stats();
    TaskRow {
        pid: t.pid,
        comm: t.comm.clone(),
        group: sim.w.m.kt.progs.group_names[t.group].clone(),
        policy: t.policy.name().to_string(),
        nice: t.nice,
        rt_priority: t.rt_priority,
        prio: t.prio(),
        cpus_allowed: t.cpus.to_list_string(),
        start_ns: Some(s.start_ns),
        exit_ns: s.exit_ns,
        runtime_ns: t.se.sum_exec_runtime,
        wait_ns: s.wait_ns,
        wait_max_ns: Some(s.wait_max),
        nr_switches: s.nr_switches,
        nr_voluntary_switches: s.nvcsw,
        nr_involuntary_switches: s.nivcsw,
        nr_migrations: Some(s.nr_migrations),
        nr_wakeups: Some(s.nr_wakeups),
        wakeup_latency_avg_ns: Some(s.wakeup_latency_sum.checked_div(s.wakeup_latencies).unwrap_or(0)),
        wakeup_latency_max_ns: Some(s.wakeup_latency_max),
        wakeup_latency_max_at_ns: Some(s.wakeup_latency_max_at),
        wakeup_latency_count: Some(s.wakeup_latencies),
        wakeup_latency_hist_us: Some(s.wakeup_latency_hist.to_vec()),
        timer_delay_avg_ns: (timer.count > 0).then_some(timer.avg_ns),
        timer_delay_max_ns: timer.max_ns,
        timer_delay_p50_ns: timer.p50_ns,
        timer_delay_p90_ns: timer.p90_ns,
        timer_delay_p99_ns: timer.p99_ns,
        timer_delay_count: timer.count,
        last_cpu: Some(t.cpu),
        window: Some(w),
        ..Default::default()
    }
}

/// Which tasks the report lists one by one: all but the rt-migrate-test
/// threads of runs before the last (one task per thread group per run;
/// `[rt_migrate_test] runs = 6500` would be 32,500 rows, 29 MB of JSON).
fn listed_tasks(sim: &Sim) -> Vec<bool> {
    let mut listed = vec![true; sim.w.m.kt.k.sched.tasks.len()];
    let Some(rtmt) = sim.w.wl.rtmt.as_ref() else { return listed };
    let mut last: Vec<Option<TaskId>> = vec![None; sim.w.m.kt.progs.group_names.len()];
    for (i, t) in sim.w.m.kt.k.sched.tasks.iter().enumerate() {
        if t.state != TaskState::New && rtmt.task_groups.contains(&t.group) {
            if let Some(prev) = last[t.group].replace(i) {
                listed[prev] = false;
            }
        }
    }
    listed
}

/// The tasks `listed_tasks` leaves out, merged into one row.
fn earlier_threads(sim: &Sim, listed: &[bool]) -> Option<RtmtEarlierThreads> {
    let mut e = RtmtEarlierThreads { wakeup_latency_hist_us: vec![0; LATENCY_HIST_BUCKETS], ..Default::default() };
    let mut latency_sum = 0u64;
    for (t, _) in sim.w.m.kt.k.sched.tasks.iter().zip(listed).filter(|(_, &l)| !l) {
        let s = &t.stats;
        e.count += 1;
        e.runtime_ns += t.se.sum_exec_runtime;
        e.nr_switches += s.nr_switches;
        e.nr_migrations += s.nr_migrations;
        e.wakeup_latency_count += s.wakeup_latencies;
        latency_sum += s.wakeup_latency_sum;
        if s.wakeup_latency_max > e.wakeup_latency_max_ns {
            e.wakeup_latency_max_ns = s.wakeup_latency_max;
            e.wakeup_latency_max_at_ns = s.wakeup_latency_max_at;
        }
        for (a, b) in e.wakeup_latency_hist_us.iter_mut().zip(s.wakeup_latency_hist.iter()) {
            *a += u64::from(*b);
        }
    }
    e.wakeup_latency_avg_ns = latency_sum.checked_div(e.wakeup_latency_count).unwrap_or(0);
    (e.count > 0).then_some(e)
}

/// Per group of the scenario (kernel threads, ktask's helpers among them,
/// are listed as tasks under `kernel_threads`).
fn groups(sim: &Sim, sc: &Scenario) -> Vec<GroupRow> {
    let mut groups = Vec::new();
    for (gi, name) in sim.w.m.kt.progs.group_names.iter().enumerate().take(sim.w.m.kt.progs.nr_scenario_groups) {
        let members: Vec<&Task> =
            sim.w.m.kt.k.sched.tasks.iter().filter(|t| t.group == gi && t.state != TaskState::New).collect();
        if members.is_empty() {
            if gi < sc.groups.len() {
                groups.push(GroupRow { name: name.clone(), ..Default::default() });
            }
            continue;
        }
        let start = members.iter().map(|t| t.stats.start_ns).min().unwrap_or(0);
        let window = sim.end_ns.saturating_sub(sim.stats.rec.warmup.min(sim.end_ns));
        let window_runtime: u64 = (0..sim.w.m.kt.k.sched.tasks.len())
            .filter(|&i| sim.w.m.kt.k.sched.tasks[i].group == gi && sim.w.m.kt.k.sched.tasks[i].state != TaskState::New)
            .map(|i| sim.task_counters(i).since(&sim.stats.task_base.get(i).copied().unwrap_or_default()).runtime_ns)
            .sum();
        let all_exited = members.iter().all(|t| t.stats.exit_ns.is_some());
        let end_ns = if all_exited { members.iter().filter_map(|t| t.stats.exit_ns).max() } else { None };
        groups.push(GroupRow {
            name: name.clone(),
            count: members.len(),
            start_ns: Some(start),
            end_ns,
            elapsed_s: end_ns.map(|e| (e - start) as f64 / 1e9),
            runtime_ns: members.iter().map(|t| t.se.sum_exec_runtime).sum(),
            cpu_pct: (window > 0).then(|| pct(window_runtime / members.len() as u64, window)),
        });
    }
    groups
}

/// schedstat per CPU and domain, and the totals a user greps for first.
fn schedstat(sim: &Sim) -> Schedstat {
    // A domain's cpulist, made once for all the CPUs it is the domain of.
    let mut lists: Vec<Option<String>> = vec![None; sim.w.m.kt.k.topo.domains.len()];
    let cpus = sim
        .w
        .m
        .kt
        .k
        .sched
        .rqs
        .iter()
        .map(|rq| {
            let domains = rq
                .sd
                .iter()
                .enumerate()
                .map(|(lvl, st)| {
                    let dom = &sim.w.m.kt.k.topo.domains[sim.w.m.kt.k.topo.cpu_domains[rq.cpu][lvl]];
                    DomainSchedstat {
                        name: dom.name.to_string(),
                        span: dom.span_weight,
                        cpus: lists[sim.w.m.kt.k.topo.cpu_domains[rq.cpu][lvl]]
                            .get_or_insert_with(|| cpulist(&dom.span))
                            .clone(),
                        counters: st.stats.clone(),
                    }
                })
                .collect();
            let s = &rq.stats;
            CpuSchedstat {
                cpu: rq.cpu,
                sched_count: s.sched_count,
                sched_goidle: s.sched_goidle,
                ttwu_count: s.ttwu_count,
                ttwu_local: s.ttwu_local,
                run_ns: s.run_ns,
                wait_ns: s.wait_ns,
                timeslices: s.timeslices,
                domains,
            }
        })
        .collect();
    let sum = |f: &dyn Fn(&LbCounters) -> u64| -> u64 {
        sim.w.m.kt.k.sched.rqs.iter().flat_map(|rq| rq.sd.iter()).map(|st| f(&st.stats)).sum()
    };
    let totals = SchedstatTotals {
        alb_pushed: sum(&|s| s.alb_pushed),
        lb_failed: sum(&|s| s.lb_failed.iter().sum()),
        lb_gained: sum(&|s| s.lb_gained.iter().sum()),
    };
    Schedstat { cpus, totals }
}

impl Sim {
    /// A task's cumulative counters now, without touching its accounting
    /// (the running task's current stretch and a waiting task's current
    /// wait are added on the side).
    pub fn task_counters(&self, tid: TaskId) -> TaskCounters {
        let t = &self.w.m.kt.k.sched.tasks[tid];
        let running = t.state == TaskState::Runnable && self.w.m.kt.k.sched.rqs[t.cpu].curr == Some(tid);
        let runtime =
            t.se.sum_exec_runtime + if running { self.w.m.kt.k.now.saturating_sub(t.se.exec_start) } else { 0 };
        let wait = t.stats.wait_ns + t.stats.wait_start.map_or(0, |ws| self.w.m.kt.k.now.saturating_sub(ws));
        TaskCounters {
            runtime_ns: runtime,
            wait_ns: wait,
            nr_switches: t.stats.nr_switches,
            nr_voluntary_switches: t.stats.nvcsw,
            nr_involuntary_switches: t.stats.nivcsw,
            nr_migrations: t.stats.nr_migrations,
            nr_wakeups: t.stats.nr_wakeups,
        }
    }
}

/// /proc/pressure at the end of the run (sched/psi.rs).
fn pressure_section(sim: &Sim, kbase: &crate::stats::KernelBase, window: u64) -> Option<crate::report::PressureReport> {
    use crate::report::{PressureFile, PressureLine};
    use crate::sched::psi_group::{CPU_FULL, CPU_SOME, FIXED_1, IO_FULL, IO_SOME, MEM_FULL, MEM_SOME};
    let k = &sim.w.m.kt.k;
    if !k.psi.enabled {
        return None;
    }
    let p = k.psi.read(k.now, k.cfg.tick_ns);
    // psi_show(): LOAD_INT.LOAD_FRAC, the fraction truncated.
    let pct = |x: u64| (x / FIXED_1) as f64 + (((x & (FIXED_1 - 1)) * 100) / FIXED_1) as f64 / 100.0;
    let line = |s: usize| PressureLine {
        avg10: pct(p.avg[s][0]),
        avg60: pct(p.avg[s][1]),
        avg300: pct(p.avg[s][2]),
        total_us: p.total[s] / 1000,
        window_pct: round2(100.0 * (p.total[s] - kbase.psi[s]) as f64 / window.max(1) as f64),
    };
    let r = p.rules;
    let cpu_full = match (r.v5_13, r.cpu_full_zero) {
        (false, _) => None,
        (true, false) => Some(line(CPU_FULL)),
        (true, true) => Some(PressureLine::default()),
    };
    Some(crate::report::PressureReport {
        cpu: PressureFile { some: line(CPU_SOME), full: cpu_full },
        memory: PressureFile { some: line(MEM_SOME), full: Some(line(MEM_FULL)) },
        io: PressureFile { some: line(IO_SOME), full: Some(line(IO_FULL)) },
    })
}

/// Each node's memory bandwidth and traffic over the window.
fn membw_section(sim: &Sim, kbase: &crate::stats::KernelBase, window: u64) -> Option<Vec<crate::report::MemBwNode>> {
    let k = &sim.w.m.kt.k;
    if !k.membw.enabled() {
        return None;
    }
    let now = k.membw_counters();
    let secs = window.max(1) as f64 / 1e9;
    Some(
        now.iter()
            .enumerate()
            .map(|(node, &(bytes, sat, stall))| {
                let (b0, s0, st0) = kbase.membw.get(node).copied().unwrap_or_default();
                let bw = k.membw.nodes[node].bandwidth as f64 * 1e6;
                let traffic = (bytes - b0) / secs;
                crate::report::MemBwNode {
                    node,
                    bandwidth_gbs: round2(bw / 1e9),
                    traffic_gbs: round2(traffic / 1e9),
                    utilization_pct: round2(100.0 * traffic / bw),
                    saturated_pct: round2(100.0 * (sat - s0) as f64 / window.max(1) as f64),
                    stall_mean: round2((stall - st0) as f64 / 1024.0 / window.max(1) as f64),
                }
            })
            .collect(),
    )
}

/// turbostat's view of the CPUs' frequencies over the window (`base`: the
/// counters at its start).
fn cpufreq_section(sim: &Sim, kbase: &crate::stats::KernelBase, window: u64) -> Option<CpufreqReport> {
    let f = &sim.w.m.kt.k.cpufreq;
    let p = f.processor?;
    let base = &kbase.cpufreq;
    let m = &sim.w.m.kt.k.machine;
    // Energy: each core's (ns x mW) since the window's start, then the
    // uncore of every package.
    let core_j: Vec<f64> = (0..f.core_energy.len())
        .map(|c| (f.core_energy[c] - kbase.core_energy.get(c).copied().unwrap_or(0)) as f64 / 1e12)
        .collect();
    let secs = window.max(1) as f64 / 1e9;
    let packages: Vec<PackagePower> = (0..m.nr_packages)
        .map(|pkg| {
            let cores = m.nr_cores / m.nr_packages;
            let j = core_j[pkg * cores..(pkg + 1) * cores].iter().sum::<f64>() + p.power.uncore_mw as f64 / 1e3 * secs;
            PackagePower { package: pkg, energy_j: round2(j), watts: round2(j / secs) }
        })
        .collect();
    let start = sim.end_ns - window;
    // A CPU that never left its boot-time idle has no period recorded:
    // idle the whole window if it spent none of it in C0.
    let open = |cpu: usize, c0: u64| {
        let entry = sim.w.m.kt.k.cpuidle.devs.get(cpu).and_then(|d| d.entry);
        let never_woke = c0 == 0 && sim.w.m.kt.k.sched.rqs[cpu].curr.is_none() && sim.w.m.kt.k.cpuidle.enabled();
        entry.map_or(if never_woke { window } else { 0 }, |e| sim.end_ns.saturating_sub(e.at.max(start)))
    };
    let window = window.max(1) as f64;
    let mut cpus = Vec::with_capacity(f.cpus.len());
    let (mut c0_all, mut aperf_all, mut tr_all) = (0u64, 0u64, 0u64);
    for (cpu, c) in f.cpus.iter().enumerate() {
        let (c0_0, a_0, t_0) = base.get(cpu).copied().unwrap_or_default();
        let (c0, aperf, tr) = (c.c0_ns - c0_0, c.aperf - a_0, c.transitions - t_0);
        c0_all += c0;
        aperf_all += aperf;
        tr_all += tr;
        let info = &sim.w.m.kt.k.machine.cpus[cpu];
        let cores_per_package = sim.w.m.kt.k.machine.nr_cores / sim.w.m.kt.k.machine.nr_packages;
        cpus.push(CpufreqRow {
            cpu,
            package: info.package,
            core: info.core % cores_per_package,
            avg_mhz: round2(aperf as f64 / window),
            busy_pct: round2(100.0 * c0 as f64 / window),
            bzy_mhz: round2(if c0 > 0 { aperf as f64 / c0 as f64 } else { 0.0 }),
            transitions: tr,
            energy_j: round2(core_j[info.core] / m.threads_per_core as f64),
            idle_open_ns: open(cpu, c0),
        });
    }
    let n = f.cpus.len().max(1) as f64;
    Some(CpufreqReport {
        processor: p.name.to_string(),
        model: p.model.to_string(),
        governor: f.governor.map_or("", |g| g.name()).to_string(),
        hwp: p.hwp,
        freq_invariance: f.invariant,
        base_mhz: p.base_khz / 1000,
        avg_mhz: round2(aperf_all as f64 / window / n),
        busy_pct: round2(100.0 * c0_all as f64 / window / n),
        bzy_mhz: round2(if c0_all > 0 { aperf_all as f64 / c0_all as f64 } else { 0.0 }),
        transitions: tr_all,
        energy_j: round2(packages.iter().map(|p| p.energy_j).sum()),
        packages,
        cpus,
    })
}

/// The parts of the report that the rest of the kernel fills: cpuidle,
/// disks, workqueues, dbench.
pub(crate) fn kernel_sections(sim: &Sim, r: &mut Report) {
    let base = sim.stats.kernel_base.clone().unwrap_or_default();
    let warm = sim.stats.rec.warmup.min(sim.end_ns);
    let window = sim.end_ns - warm;
    if let Some(table) = sim.w.m.kt.k.cpuidle.table {
        let states = table.states();
        let sub = |now: &[u64], b: Option<&Vec<u64>>| -> Vec<u64> {
            now.iter().enumerate().map(|(i, v)| v - b.and_then(|b| b.get(i)).copied().unwrap_or(0)).collect()
        };
        let cpus: Vec<CpuIdleRow> = sim
            .w
            .m
            .kt
            .k
            .cpuidle
            .devs
            .iter()
            .enumerate()
            .map(|(cpu, d)| CpuIdleRow {
                cpu,
                usage: sub(&d.usage, base.idle_usage.get(cpu)),
                time_ns: sub(&d.time_ns, base.idle_time.get(cpu)),
            })
            .collect();
        let mut usage = vec![0; states.len()];
        let mut time_ns = vec![0; states.len()];
        for c in &cpus {
            for i in 0..states.len() {
                usage[i] += c.usage[i];
                time_ns[i] += c.time_ns[i];
            }
        }
        let total: u64 = time_ns.iter().sum();
        r.cpuidle = Some(CpuidleReport {
            table: table.name().to_string(),
            states: states
                .iter()
                .map(|s| IdleStateInfo {
                    name: s.name.to_string(),
                    exit_latency_ns: s.exit_latency_ns,
                    target_residency_ns: s.target_residency_ns,
                })
                .collect(),
            deepest_pct: pct(*time_ns.last().unwrap_or(&0), total),
            usage,
            time_ns,
            cpus,
        });
    }
    r.cpufreq = cpufreq_section(sim, &base, window);
    r.memory_bandwidth = membw_section(sim, &base, window);
    r.pressure = pressure_section(sim, &base, window);
    if !sim.w.m.kt.block.disks.is_empty() {
        r.disks = Some(
            sim.w
                .m
                .kt
                .block
                .disks
                .iter()
                .enumerate()
                .map(|(i, d)| {
                    let b = base.disks.get(i).cloned().unwrap_or_default();
                    let s = &d.stats_at(sim.end_ns);
                    let n = (s.reads + s.writes + s.flushes) - (b.reads + b.writes + b.flushes);
                    let busy = s.busy_ns - b.busy_ns;
                    DiskReport {
                        name: d.cfg.name.clone(),
                        reads: s.reads - b.reads,
                        writes: s.writes - b.writes,
                        flushes: s.flushes - b.flushes,
                        read_bytes: s.read_bytes - b.read_bytes,
                        write_bytes: s.write_bytes - b.write_bytes,
                        await_us: if n == 0 {
                            0.0
                        } else {
                            ((s.wait_ns - b.wait_ns) as f64 / n as f64 / 10.0).round() / 100.0
                        },
                        util_pct: pct(busy, window),
                    }
                })
                .collect(),
        );
    }
    let works: Vec<WorkqueueRow> = sim
        .w
        .m
        .kt
        .kthreads
        .works_done
        .iter()
        .enumerate()
        .filter_map(|(i, &n)| {
            let n = n - base.works_done.get(i).copied().unwrap_or(0);
            (n > 0).then(|| WorkqueueRow { name: sim.w.m.kt.kthreads.workqueues[i].name.clone(), works: n })
        })
        .collect();
    if !works.is_empty() {
        r.workqueues = Some(works);
    }
    if let Some(cfg) = &sim.w.wl.dbench.cfg {
        let d = &sim.w.wl.dbench;
        let n = d.passes;
        let mean = if n == 0 { 0.0 } else { d.sum_ms as f64 / n as f64 };
        let var = if n < 2 { 0.0 } else { (d.sumsq_ms as f64 - n as f64 * mean * mean) / (n - 1) as f64 };
        let secs = (window / 1_000_000_000) as usize;
        let samples: Vec<f64> = (0..secs).map(|s| d.bytes_per_s.get(s).copied().unwrap_or(0) as f64 / 1e6).collect();
        let hmean = if samples.is_empty() || samples.contains(&0.0) {
            0.0
        } else {
            samples.len() as f64 / samples.iter().map(|v| 1.0 / v).sum::<f64>()
        };
        let migrations: u64 =
            r.tasks.iter().filter(|t| t.group == "dbench").filter_map(|t| t.window.map(|w| w.nr_migrations)).sum();
        let round2 = |x: f64| (x * 100.0).round() / 100.0;
        r.dbench = Some(DbenchReport {
            clients: cfg.clients,
            filesystem: match cfg.fs {
                crate::workload::dbench::Filesystem::Xfs => "xfs",
                crate::workload::dbench::Filesystem::Ext4 => "ext4",
            }
            .to_string(),
            passes: n,
            amean_ms: round2(mean),
            stddev_ms: round2(var.max(0.0).sqrt()),
            min_ms: d.min_ms,
            max_ms: d.max_ms,
            hmean_mbs: round2(hmean),
            bytes_per_pass: cfg.bytes_per_pass,
            loadfile_cpu_ns: cfg.loadfile_cpu_ns,
            flushes_per_pass: crate::workload::dbench::FLUSHES_PER_PASS,
            migrations_per_pass: if n == 0 { 0.0 } else { round2(migrations as f64 / n as f64) },
        });
    }
}
