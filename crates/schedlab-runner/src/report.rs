//! The report of a real run: the shared `schedlab_core::report::Report`
//! (docs/report.md), with the fields a real kernel gives (`"source":
//! "real"`, `host`, `real`, the timer delays) and without those only the
//! simulator has (the balancer's counters, the wakeup latencies).

use std::collections::BTreeMap;

use schedlab_core::prio::{nice_to_prio, rt_priority_to_prio};
use schedlab_core::report::pct;
use schedlab_core::report::{
    CpuTimes, DelayStats, GroupRow, HostInfo, KernelInfo, MachineInfo, MeasureInfo, Mpstat, MpstatCpu, MpstatRow,
    MpstatSample, RealInfo, Report, TaskRow,
};
use schedlab_core::scenario::Scenario;

use crate::procfs::{CpuJiffies, TaskCounters};
use crate::{sys, Measured};

/// Per group: (count, first start, all exited, last exit, runtime).
type GroupAcc = (usize, Option<u64>, bool, Option<u64>, u64);

fn mpstat_row(cpu: MpstatCpu, d: &CpuJiffies) -> MpstatRow {
    let t = d.total();
    let c: BTreeMap<&str, u64> = d.columns().into_iter().collect();
    let p = |k: &str| pct(c[k], t);
    MpstatRow {
        cpu,
        usr: p("usr"),
        nice: p("nice"),
        sys: p("sys"),
        iowait: p("iowait"),
        irq: p("irq"),
        soft: p("soft"),
        steal: p("steal"),
        guest: p("guest"),
        gnice: p("gnice"),
        idle: p("idle"),
    }
}

/// Deltas of the scenario's CPUs (scenario CPU i = host CPU `host[i]`).
fn deltas(a: &BTreeMap<usize, CpuJiffies>, b: &BTreeMap<usize, CpuJiffies>, host: &[usize]) -> Vec<CpuJiffies> {
    host.iter()
        .map(|h| match (a.get(h), b.get(h)) {
            (Some(x), Some(y)) => x.delta(y),
            _ => CpuJiffies::default(),
        })
        .collect()
}

fn rows(d: &[CpuJiffies]) -> Vec<MpstatRow> {
    let mut all = CpuJiffies::default();
    for x in d {
        all.add(x);
    }
    let mut out = vec![mpstat_row(MpstatCpu::All, &all)];
    out.extend(d.iter().enumerate().map(|(i, x)| mpstat_row(MpstatCpu::Cpu(i), x)));
    out
}

fn cpu_times(m: &Measured, cpu_d: &[CpuJiffies]) -> Vec<CpuTimes> {
    let ns_per_jiffy = 1_000_000_000 / sys::clock_ticks();
    cpu_d
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let c: BTreeMap<&str, u64> = d.columns().into_iter().collect();
            CpuTimes {
                cpu: i,
                host_cpu: Some(m.host_cpus[i]),
                usr_ns: c["usr"] * ns_per_jiffy,
                nice_ns: c["nice"] * ns_per_jiffy,
                sys_ns: c["sys"] * ns_per_jiffy,
                idle_ns: c["idle"] * ns_per_jiffy,
                iowait_ns: Some(c["iowait"] * ns_per_jiffy),
                irq_ns: Some(c["irq"] * ns_per_jiffy),
                soft_ns: Some(c["soft"] * ns_per_jiffy),
                steal_ns: Some(c["steal"] * ns_per_jiffy),
                run_delay_ns: d.run_delay_ns,
            }
        })
        .collect()
}

/// /proc/pressure at the window's end, each line with the share of the
/// window it grew by.
fn pressure(m: &Measured) -> Option<schedlab_core::report::PressureReport> {
    use schedlab_core::report::{PressureFile, PressureLine, PressureReport};
    let (base, end) = m.pressure.as_ref()?;
    let window_us = (m.window.1.saturating_sub(m.window.0) / 1000).max(1) as f64;
    let line = |b: Option<crate::procfs::PressureRead>, e: Option<crate::procfs::PressureRead>| {
        e.map(|e| PressureLine {
            avg10: e.avg[0],
            avg60: e.avg[1],
            avg300: e.avg[2],
            total_us: e.total_us,
            window_pct: {
                let d = e.total_us.saturating_sub(b.map_or(e.total_us, |b| b.total_us));
                (100.0 * d as f64 / window_us * 100.0).round() / 100.0
            },
        })
    };
    let file = |i: usize| PressureFile {
        some: line(base[i].0, end[i].0).unwrap_or_default(),
        full: line(base[i].1, end[i].1),
    };
    Some(PressureReport { cpu: file(0), memory: file(1), io: file(2) })
}

pub fn build(sc: &Scenario, m: &Measured, seed: u64) -> Report {
    let (ws, we) = m.window;
    let cpu_d = deltas(&m.stat_end, &m.stat_base, &m.host_cpus);
    let mut samples = Vec::new();
    let mut prev = &m.stat_base;
    for (t, snap) in &m.samples {
        let d = deltas(snap, prev, &m.host_cpus);
        let run_delay_ns = d.iter().map(|c| c.run_delay_ns).collect::<Option<Vec<u64>>>();
        samples.push(MpstatSample { end_ns: *t, rows: rows(&d), run_delay_ns });
        prev = snap;
    }
    let mut tasks = Vec::new();
    let mut timer_delays = Vec::new();
    let mut groups: Vec<GroupAcc> = vec![(0, None, true, None, 0); sc.groups.len()];
    let mut migrations = 0u64;
    let mut switches = 0u64;
    // Each task group's own threads' CPU time over the window, and those alive.
    let mut cg_own = vec![(0u64, 0usize); sc.cgroups.len() + 1];
    for (i, s) in m.slots.iter().enumerate() {
        if s.tid == 0 {
            continue;
        }
        let g = &sc.groups[s.group];
        let gone_before_window = s.exit_ns.is_some_and(|e| e < ws);
        let fin = m.end[i].or(s.own_final);
        let d = match (fin, gone_before_window) {
            (Some(f), false) => f.delta(&m.base[i].unwrap_or_default()),
            _ => TaskCounters::default(),
        };
        let nsw = d.nvcsw + d.nivcsw;
        migrations += d.nr_migrations.unwrap_or(0);
        switches += nsw;
        timer_delays.extend_from_slice(&s.timer_delays);
        let w = DelayStats::of(&s.timer_delays);
        let prio = if g.policy.is_rt() { rt_priority_to_prio(g.rt_priority) } else { nice_to_prio(g.nice) };
        tasks.push(TaskRow {
            pid: s.tid as u32,
            comm: s.comm.clone(),
            group: g.name.clone(),
            policy: g.policy.name().to_string(),
            nice: g.nice,
            rt_priority: g.rt_priority,
            prio,
            cpus_allowed: g.cpus.to_list_string(),
            start_ns: s.start_ns,
            exit_ns: s.exit_ns,
            runtime_ns: d.cpu_ns,
            wait_ns: d.wait_ns,
            wait_max_ns: d.wait_max_ns,
            timeslices: Some(d.timeslices),
            nr_switches: nsw,
            nr_voluntary_switches: d.nvcsw,
            nr_involuntary_switches: d.nivcsw,
            nr_migrations: d.nr_migrations,
            nr_wakeups: d.nr_wakeups,
            // What the runner measures is the timer delay (exec.rs,
            // sleep_abs: woken less the absolute time asked); it does not
            // see wakeup -> pick, so `wakeup_latency_*` stay absent.
            timer_delay_avg_ns: (w.count > 0).then_some(w.avg_ns),
            timer_delay_max_ns: w.max_ns,
            timer_delay_p50_ns: w.p50_ns,
            timer_delay_p90_ns: w.p90_ns,
            timer_delay_p99_ns: w.p99_ns,
            timer_delay_count: w.count,
            last_cpu: fin.and_then(|f| f.last_cpu).and_then(|h| m.host_cpus.iter().position(|&x| x == h)),
            forked: Some(s.forked),
            ..Default::default()
        });
        let e = &mut groups[s.group];
        e.0 += 1;
        e.1 = Some(e.1.map_or(s.start_ns.unwrap_or(0), |x: u64| x.min(s.start_ns.unwrap_or(0))));
        e.2 &= s.exit_ns.is_some();
        e.3 = e.3.max(s.exit_ns);
        e.4 += d.cpu_ns;
        let o = &mut cg_own[g.cgroup];
        o.0 += d.cpu_ns;
        o.1 += usize::from(s.exit_ns.is_none());
    }
    let cgroups = (!sc.cgroups.is_empty()).then(|| {
        let mut rows =
            schedlab_core::sim::report_cgroup::cgroup_rows(&sc.cgroups, &cg_own, we.saturating_sub(ws), |tg| {
                m.cpu_stat.get(tg).copied().unwrap_or_default()
            });
        if sc.cgroups.iter().any(|c| c.cpuset_cpus.is_some()) {
            // As the kernel reads it back; the root's (every CPU) where it has none.
            let all = schedlab_core::sched::topology::cpulist(&(0..sc.machine.nr_cpus()).collect::<Vec<_>>());
            for (row, c) in rows.iter_mut().zip(&sc.cgroups) {
                row.cpus_effective = Some(m.cpus_effective.get(c.tg).cloned().flatten().unwrap_or_else(|| all.clone()));
            }
        }
        rows
    });
    let groups = sc
        .groups
        .iter()
        .zip(&groups)
        .map(|(g, &(count, start, all_exited, last, runtime))| {
            let end_ns = if count > 0 && all_exited { last } else { None };
            GroupRow {
                name: g.name.clone(),
                count,
                start_ns: start,
                end_ns,
                elapsed_s: end_ns.zip(start).map(|(e, s)| e.saturating_sub(s) as f64 / 1e9),
                runtime_ns: runtime,
                cpu_pct: (we > ws && count > 0).then(|| {
                    let share = runtime as f64 * 100.0 / (we - ws) as f64 / count as f64;
                    (share * 100.0).round() / 100.0
                }),
            }
        })
        .collect();
    let u = sys::uname();
    Report {
        schedlab: env!("CARGO_PKG_VERSION").to_string(),
        scenario: sc.name.clone(),
        scenario_file: Some(sc.source.clone()),
        source: "real".to_string(),
        seed,
        host: Some(HostInfo {
            kernel_release: u.release.clone(),
            kernel_version: u.version,
            arch: u.machine,
            nr_cpus: sys::online_cpus(),
            cpus_used: m.host_cpus.clone(),
            user_hz: sys::clock_ticks(),
            coordinator_fifo: m.main_rt,
        }),
        kernel: KernelInfo {
            version: u.release,
            scenario_version: Some(sc.kernel.version.to_string()),
            isolcpus: m.isolcpus.clone(),
            ..Default::default()
        },
        machine: MachineInfo {
            name: sc.machine.name.clone(),
            nr_cpus: m.host_cpus.len(),
            description: sc.machine.description.clone(),
            domains: None,
        },
        real: Some(RealInfo {
            end_ns: we,
            reason: m.reason.to_string(),
            read_task_ns: (m.read_tasks.1 > 0).then(|| m.read_tasks.0 / m.read_tasks.1 as u64),
            read_stat_ns: median(m.read_stats.iter().map(|&(ns, cpus)| ns / cpus.max(1) as u64).collect()),
            thread_start_ns: median(m.slots.iter().filter(|s| !s.forked).filter_map(|s| s.ready_cpu_ns).collect()),
            fork_ns: m.spawn_ns,
            run_overshoot_ns: {
                let ops: u64 = m.slots.iter().map(|s| s.run_ops).sum();
                (ops > 0).then(|| m.slots.iter().map(|s| s.run_over_ns).sum::<u64>() / ops)
            },
        }),
        measure: MeasureInfo { start_ns: ws, end_ns: we, interval_ns: m.interval_ns },
        cpus: cpu_times(m, &cpu_d),
        mpstat: Mpstat { intervals: samples.len() as u64, samples, average: rows(&cpu_d) },
        tasks,
        groups,
        migrations,
        switches: Some(switches),
        timer_delay: DelayStats::of(&timer_delays),
        pressure: pressure(m),
        mm: writeback(m),
        cgroups,
        warnings: late_start_warning(m.late_start_ns, m.main_rt).into_iter().collect(),
        ..Default::default()
    }
}

/// A window read this late (the coordinator's wakeup at its start held off
/// its CPU) is said so; the shares are over the window read.
const LATE_START_WARN_NS: u64 = 5_000_000;

fn late_start_warning(late_ns: u64, main_rt: bool) -> Option<String> {
    (late_ns > LATE_START_WARN_NS).then(|| {
        let policy = if main_rt { "SCHED_FIFO 99" } else { "SCHED_OTHER: no RT priority allowed" };
        format!(
            "the window's start was read {:.1} ms late (the runner's coordinator, {policy}, was kept off its CPU); \
             shares and rates are over the window read",
            late_ns as f64 / 1e6
        )
    })
}

/// With write ops: the memory section's writeback part as the kernel
/// shows it (/proc/meminfo's Dirty and Writeback at each interval,
/// /proc/vmstat's thresholds at the end and its nr_dirtied and nr_written
/// over the window); the model's other memory figures are not read.
fn writeback(m: &Measured) -> Option<schedlab_core::report::MmReport> {
    use schedlab_core::report::{DirtySample, MmReport, WritebackReport};
    let (b, samples, e) = m.dirty.as_ref()?;
    let page_kb = schedlab_core::mm::PAGE_SIZE / 1024;
    let wb = WritebackReport {
        dirty_thresh_kb: e.thresh * page_kb,
        background_thresh_kb: e.bg_thresh * page_kb,
        dirty_limit_kb: 0,
        dirtyable_kb: 0,
        dirty_mean_kb: samples.iter().map(|(_, d)| d.dirty_kb + d.writeback_kb).sum::<u64>()
            / (samples.len() as u64).max(1),
        nr_dirtied: e.nr_dirtied.saturating_sub(b.nr_dirtied),
        nr_written: e.nr_written.saturating_sub(b.nr_written),
        // A disk held to the scenario's bandwidth: that bandwidth.
        devices: m
            .enforced
            .iter()
            .map(|(name, bw)| schedlab_core::report::WbRow {
                device: name.clone(),
                write_bandwidth_kbs: bw / 1024,
                ..Default::default()
            })
            .collect(),
        throttle: Vec::new(),
        samples: samples
            .iter()
            .map(|(t, d)| DirtySample { time_s: *t as f64 / 1e9, dirty_kb: d.dirty_kb, writeback_kb: d.writeback_kb })
            .collect(),
    };
    Some(MmReport { writeback: Some(wb), ..Default::default() })
}

/// The median of `v` (None: empty).
fn median(mut v: Vec<u64>) -> Option<u64> {
    v.sort_unstable();
    v.get(v.len() / 2).copied()
}

#[cfg(test)]
mod tests {
    use super::late_start_warning;

    #[test]
    fn a_late_window_is_said_with_the_coordinators_policy() {
        assert_eq!(late_start_warning(4_000_000, true), None);
        let w = late_start_warning(1_240_300_000, true).expect("late");
        assert!(
            w.starts_with("the window's start was read 1240.3 ms late (the runner's coordinator, SCHED_FIFO 99,"),
            "{w}"
        );
        assert!(late_start_warning(6_000_000, false).expect("late").contains("SCHED_OTHER"));
    }
}
