//! The JSON report of one run (shape documented in docs/scenario.md).

use serde_json::{json, Map, Value};

use crate::engine::sim::Sim;
use crate::scenario::Scenario;
use crate::sched::task::{TaskCounters, TaskId, TaskState};
use crate::stats::CpuTime;

/// A share in percent with two decimals, as mpstat prints it.
pub fn pct(x: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        (x as f64 * 10000.0 / total as f64).round() / 100.0
    }
}

fn mpstat_row(cpu: Value, d: &CpuTime) -> Value {
    let t = d.total();
    json!({
        "cpu": cpu, "usr": pct(d.usr, t), "nice": pct(d.nice, t), "sys": pct(d.sys, t),
        "iowait": 0.0, "irq": 0.0, "soft": 0.0, "steal": 0.0, "guest": 0.0, "gnice": 0.0,
        "idle": pct(d.idle, t)
    })
}

fn rows(deltas: &[CpuTime]) -> Vec<Value> {
    let mut all = CpuTime::default();
    for d in deltas {
        all.add(d);
    }
    let mut out = vec![mpstat_row(json!("all"), &all)];
    for (i, d) in deltas.iter().enumerate() {
        out.push(mpstat_row(json!(i), d));
    }
    out
}

/// Time a CPU sat idle while a task allowed on it waited elsewhere is not
/// tracked per instant yet; this estimate is filled by the balancer issue.
pub fn build(sim: &Sim, sc: &Scenario) -> Value {
    let nr = sim.rqs.len();
    let end = sim.end_ns;
    let warm = sc.measure.warmup.min(end);
    // Per-CPU totals over the measurement window.
    let base = sim.rec.snaps.first().map(|(_, v)| v.clone()).unwrap_or_else(|| vec![CpuTime::default(); nr]);
    let cpus: Vec<Value> = sim
        .rqs
        .iter()
        .enumerate()
        .map(|(i, rq)| {
            let d = rq.acct.delta(&base[i]);
            json!({"cpu": i, "usr_ns": d.usr, "nice_ns": d.nice, "sys_ns": d.sys, "idle_ns": d.idle})
        })
        .collect();
    // mpstat samples: consecutive snapshot deltas (full intervals only).
    let mut samples = Vec::new();
    let mut sum = vec![CpuTime::default(); nr];
    for w in sim.rec.snaps.windows(2) {
        let (t1, a) = (&w[1].0, &w[1].1);
        let b = &w[0].1;
        let deltas: Vec<CpuTime> = a.iter().zip(b).map(|(x, y)| x.delta(y)).collect();
        for (s, d) in sum.iter_mut().zip(&deltas) {
            s.add(d);
        }
        samples.push(json!({"end_ns": t1, "rows": rows(&deltas)}));
    }
    let average = if samples.is_empty() {
        let deltas: Vec<CpuTime> = sim.rqs.iter().enumerate().map(|(i, rq)| rq.acct.delta(&base[i])).collect();
        rows(&deltas)
    } else {
        rows(&sum)
    };
    // The kernel's own threads (the per-CPU vmstat kworkers) are listed
    // apart from the scenario's tasks.
    let is_kernel_thread = |t: &&crate::sched::task::Task| t.group >= 2 * sim.nr_scenario_groups;
    // Each task's counters over the measurement window (after the warm-up).
    let windows: Vec<TaskCounters> = (0..sim.tasks.len())
        .map(|i| sim.task_counters(i).since(&sim.task_base.get(i).copied().unwrap_or_default()))
        .collect();
    let task_json = |(i, t): (usize, &crate::sched::task::Task)| {
        let w = &windows[i];
        json!({
            "pid": t.pid, "comm": t.comm, "group": sim.group_names[t.group], "policy": t.policy.name(),
            "nice": t.nice, "rt_priority": t.rt_priority, "prio": t.prio(), "cpus_allowed": t.cpus.to_list_string(),
            "start_ns": t.stats.start_ns, "exit_ns": t.stats.exit_ns,
            "runtime_ns": t.se.sum_exec_runtime, "wait_ns": t.stats.wait_ns, "wait_max_ns": t.stats.wait_max,
            "nr_switches": t.stats.nr_switches, "nr_voluntary_switches": t.stats.nvcsw,
            "nr_involuntary_switches": t.stats.nivcsw, "nr_migrations": t.stats.nr_migrations,
            "nr_wakeups": t.stats.nr_wakeups,
            "wakeup_delay_avg_ns": t.stats.wakeup_delay_sum.checked_div(t.stats.wakeup_delays).unwrap_or(0),
            "wakeup_delay_max_ns": t.stats.wakeup_delay_max,
            "wakeup_delay_max_at_ns": t.stats.wakeup_delay_max_at,
            "wakeup_delays": t.stats.wakeup_delays,
            "wakeup_delay_hist_us": t.stats.wakeup_delay_hist,
            "last_cpu": t.cpu,
            "window": {"runtime_ns": w.runtime_ns, "wait_ns": w.wait_ns, "nr_switches": w.nr_switches,
                       "nr_voluntary_switches": w.nr_voluntary_switches,
                       "nr_involuntary_switches": w.nr_involuntary_switches,
                       "nr_migrations": w.nr_migrations, "nr_wakeups": w.nr_wakeups},
        })
    };
    let tasks: Vec<Value> = sim
        .tasks
        .iter()
        .enumerate()
        .filter(|(_, t)| t.state != crate::sched::task::TaskState::New && !is_kernel_thread(t))
        .map(task_json)
        .collect();
    let kernel_threads: Vec<Value> =
        sim.tasks.iter().enumerate().filter(|(_, t)| is_kernel_thread(t)).map(task_json).collect();
    let mut groups = Vec::new();
    for (gi, name) in sim.group_names.iter().enumerate().take(2 * sim.nr_scenario_groups) {
        let members: Vec<&crate::sched::task::Task> =
            sim.tasks.iter().filter(|t| t.group == gi && t.state != crate::sched::task::TaskState::New).collect();
        if members.is_empty() {
            if gi < sc.groups.len() {
                groups.push(json!({"name": name, "count": 0, "start_ns": null, "end_ns": null, "elapsed_s": null, "runtime_ns": 0}));
            }
            continue;
        }
        let start = members.iter().map(|t| t.stats.start_ns).min().unwrap_or(0);
        let all_exited = members.iter().all(|t| t.stats.exit_ns.is_some());
        let end_ns = if all_exited { members.iter().filter_map(|t| t.stats.exit_ns).max() } else { None };
        let runtime: u64 = members.iter().map(|t| t.se.sum_exec_runtime).sum();
        groups.push(json!({
            "name": name, "count": members.len(), "start_ns": start, "end_ns": end_ns,
            "elapsed_s": end_ns.map(|e| (e - start) as f64 / 1e9), "runtime_ns": runtime,
        }));
    }
    let schedstat: Vec<Value> = sim
        .rqs
        .iter()
        .map(|rq| {
            let domains: Vec<Value> = rq
                .sd
                .iter()
                .enumerate()
                .map(|(lvl, st)| {
                    let d = sim.topo.cpu_domains[rq.cpu][lvl];
                    let s = &st.stats;
                    json!({
                        "name": sim.topo.domains[d].name, "span": sim.topo.domains[d].span_weight,
                        "cpus": sim.topo.domains[d].span,
                        "lb_count": s.lb_count, "lb_balanced": s.lb_balanced, "lb_failed": s.lb_failed,
                        "lb_imbalance": s.lb_imbalance, "lb_gained": s.lb_gained,
                        "lb_nobusyg": s.lb_nobusyg, "lb_nobusyq": s.lb_nobusyq,
                        "alb_count": s.alb_count, "alb_pushed": s.alb_pushed, "alb_failed": s.alb_failed,
                        "ttwu_wake_remote": s.ttwu_wake_remote, "ttwu_move_affine": s.ttwu_move_affine,
                    })
                })
                .collect();
            let s = &rq.stats;
            json!({
                "cpu": rq.cpu, "sched_count": s.sched_count, "sched_goidle": s.sched_goidle,
                "ttwu_count": s.ttwu_count, "ttwu_local": s.ttwu_local, "run_ns": s.run_ns,
                "wait_ns": s.wait_ns, "timeslices": s.timeslices, "domains": domains,
            })
        })
        .collect();
    // Totals over every CPU and level: what a user greps schedstat for first.
    let sum_lb = |f: &dyn Fn(&crate::sched::sched::LbStats) -> u64| -> u64 {
        sim.rqs.iter().flat_map(|rq| rq.sd.iter()).map(|st| f(&st.stats)).sum()
    };
    let active_balances = sum_lb(&|s| s.alb_pushed);
    let lb_failed = sum_lb(&|s| s.lb_failed.iter().sum());
    let lb_gained = sum_lb(&|s| s.lb_gained.iter().sum());
    let migrations: u64 = sim.tasks.iter().map(|t| t.stats.nr_migrations).sum();
    let mut features = Map::new();
    for (n, on) in sim.cfg.features.names() {
        features.insert(n.to_string(), json!(on));
    }
    json!({
        "schedlab": env!("CARGO_PKG_VERSION"),
        "scenario": sc.name,
        "source": sc.source,
        "seed": sim.seed,
        "kernel": {
            "version": sim.cfg.version.to_string(), "hz": sim.cfg.hz,
            "fair": format!("{:?}", sim.cfg.mech.fair).to_lowercase(),
            "balancer": match sim.cfg.mech.balancer { crate::kernel::BalancerEra::AvgLoad => "avg_load", crate::kernel::BalancerEra::GroupType => "group_type" },
            "features": features, "sysctl": sim.cfg.sysctl.as_map(),
            "scaled": {"sched_latency_ns": sim.tun.sched_latency, "sched_min_granularity_ns": sim.tun.sched_min_granularity,
                       "sched_wakeup_granularity_ns": sim.tun.sched_wakeup_granularity, "sched_base_slice_ns": sim.tun.sched_base_slice},
        },
        "machine": {"name": sim.machine.name, "nr_cpus": nr, "description": sim.machine.description,
                    "domains": sim.topo.cpu_domains[0].iter().map(|&d| json!({"name": sim.topo.domains[d].name, "span": sim.topo.domains[d].span_weight})).collect::<Vec<_>>()},
        "sim": {"end_ns": end, "events": sim.events_processed, "reason": sim.stop_reason, "trace_hash": format!("{:016x}", sim.trace.hash), "trace_events": sim.trace.count},
        "measure": {"start_ns": warm, "end_ns": end, "interval_ns": sc.measure.interval},
        "cpus": cpus,
        "mpstat": {"samples": samples, "average": average},
        "tasks": tasks,
        "kernel_threads": kernel_threads,
        "groups": groups,
        "schedstat": {"cpus": schedstat, "totals": {"alb_pushed": active_balances, "lb_failed": lb_failed, "lb_gained": lb_gained}},
        "active_balances": active_balances,
        "migrations": migrations,
        "wasted_cpu_ns": sim.wasted.ns,
        "wasted_cpu_pct": if end > warm { (sim.wasted.ns as f64 * 10000.0 / ((end - warm) as f64 * nr as f64)).round() / 100.0 } else { 0.0 },
        "rt": {"push_pull": sim.cfg.mech.rt_push_pull(), "rt_migrations": sim.rt_migrations, "push_ipis": sim.rto_push.ipis,
               "throttle_events": sim.rt_throttle_events},
        "rt_migrate_test": sim.rtmt.as_ref().map(|r| r.report()),
    })
}

impl Sim {
    /// A task's cumulative counters now, without touching its accounting
    /// (the running task's current stretch and a waiting task's current
    /// wait are added on the side).
    pub fn task_counters(&self, tid: TaskId) -> TaskCounters {
        let t = &self.tasks[tid];
        let running = t.state == TaskState::Runnable && self.rqs[t.cpu].curr == Some(tid);
        let runtime = t.se.sum_exec_runtime + if running { self.now.saturating_sub(t.se.exec_start) } else { 0 };
        let wait = t.stats.wait_ns + t.stats.wait_start.map_or(0, |ws| self.now.saturating_sub(ws));
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
