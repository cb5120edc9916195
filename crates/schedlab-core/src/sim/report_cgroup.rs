//! The report's `cgroups`: what each `[[cgroup]]` got over the window, as
//! its cgroup v2 files say it (cpu.weight, cpu.idle, cpu.max, cpu.stat's
//! usage_usec and bandwidth counters, cgroup.threads), for a scenario with
//! cgroups.

use crate::report::CgroupRow;
use crate::scenario::Scenario;
use crate::sched::task::TaskState;
use crate::sim::Sim;

/// cpu.stat's bandwidth counters of task group `tg` over the window
/// (TaskGroups::cpu_stat's order).
pub(crate) fn cpu_stat_window(sim: &Sim, tg: usize) -> [u64; 5] {
    let base = sim.stats.kernel_base.as_ref().and_then(|b| b.cpu_stat.get(tg).copied()).unwrap_or_default();
    let now = sim.w.m.kt.k.sched.groups.cpu_stat(tg);
    std::array::from_fn(|i| now[i] - base[i])
}

/// One row per `[[cgroup]]`, in the scenario's order; None without any.
pub(crate) fn cgroups(sim: &Sim, sc: &Scenario) -> Option<Vec<CgroupRow>> {
    if sc.cgroups.is_empty() {
        return None;
    }
    let k = &sim.w.m.kt.k;
    let window = sim.end_ns.saturating_sub(sim.stats.rec.warmup.min(sim.end_ns));
    // Each task group's own tasks' CPU time over the window, and count.
    let mut own = vec![(0u64, 0usize); sc.cgroups.len() + 1];
    for (i, t) in k.sched.tasks.iter().enumerate().filter(|(_, t)| t.state != TaskState::New) {
        let base = sim.stats.task_base.get(i).copied().unwrap_or_default();
        own[t.tg].0 += sim.task_counters(i).since(&base).runtime_ns;
        own[t.tg].1 += usize::from(t.state != TaskState::Dead);
    }
    let mut rows = cgroup_rows(&sc.cgroups, &own, window, |tg| cpu_stat_window(sim, tg));
    if sc.cgroups.iter().any(|c| c.cpuset_cpus.is_some()) {
        let all = crate::cpumask::CpuMask::full(k.sched.rqs.len());
        for (row, c) in rows.iter_mut().zip(&sc.cgroups) {
            row.cpus_effective = Some(c.cpus_effective.as_ref().unwrap_or(&all).to_list_string());
        }
    }
    Some(rows)
}

/// The report's `cgroups`, one row per `[[cgroup]]` in the scenario's
/// order, from what the simulator or the real-kernel runner measured over
/// a window of `window` ns: `own[tg]`, each task group's own tasks' CPU
/// time (ns) and its live tasks; `stat(tg)`, cpu.stat's bandwidth counters
/// over the window as [nr_periods, nr_throttled, throttled ns, burst ns,
/// nr_bursts].
pub fn cgroup_rows(
    cgroups: &[crate::workload::cgroup::CgroupDef],
    own: &[(u64, usize)],
    window: u64,
    stat: impl Fn(usize) -> [u64; 5],
) -> Vec<CgroupRow> {
    // usage_usec counts the descendants too: children come after their
    // parents, so one pass from the last adds each into its parent.
    let mut total: Vec<u64> = own.iter().map(|o| o.0).collect();
    for c in cgroups.iter().rev() {
        total[c.parent] += total[c.tg];
    }
    cgroups
        .iter()
        .map(|c| {
            let d = stat(c.tg);
            let max = match c.bandwidth {
                Some(b) => format!("{} {}", b.quota / 1000, c.max_period_us),
                None => format!("max {}", c.max_period_us),
            };
            CgroupRow {
                path: c.path.clone(),
                weight: crate::workload::cgroup::cpu_weight_of_shares(c.shares),
                idle: c.idle,
                threads: own[c.tg].1,
                usage_usec: total[c.tg] / 1000,
                cpu_pct: (window > 0).then(|| crate::report::pct(total[c.tg], window)),
                max,
                max_burst: c.max_burst_us,
                nr_periods: d[0],
                nr_throttled: d[1],
                throttled_usec: d[2] / 1000,
                burst_usec: d[3] / 1000,
                nr_bursts: d[4],
                cpus_effective: None,
            }
        })
        .collect()
}
