//! The report's memory section (report/mm.rs) from the model's state.

use crate::mm::{KswapdThreads, Lru};
use crate::report::{
    AllocRow, DirtySample, KswapdRow, MmReport, NodeRow, ProcsRow, Report, ThrottleRow, WbRow, WritebackReport,
};
use crate::sim::Sim;

/// The memory section, when the model ran.
pub(crate) fn mm_report(sim: &Sim, _r: &Report) -> Option<MmReport> {
    if !sim.w.m.mm.enabled {
        return None;
    }
    let base = sim.stats.kernel_base.clone().unwrap_or_default();
    let warm = sim.stats.rec.warmup.min(sim.end_ns);
    let window = (sim.end_ns.min(sim.w.m.kt.k.now) - warm).max(1);
    let secs = window as f64 / 1e9;
    let ev = sim.w.m.mm.ev.delta(&base.vm);
    let vmstat = ev.items().iter().map(|(k, v)| (k.to_string(), *v)).collect();
    let read_bytes: u64 = sim
        .w
        .m
        .kt
        .block
        .disks
        .iter()
        .enumerate()
        .map(|(i, d)| d.stats.read_bytes - base.disks.get(i).map_or(0, |b| b.read_bytes))
        .sum();
    let kswapd: Vec<KswapdRow> = sim
        .w
        .m
        .mm
        .kswapds
        .iter()
        .map(|k| {
            let t = &sim.w.m.kt.k.sched.tasks[k.task];
            let b = sim.stats.task_base.get(k.task).map_or(0, |b| b.runtime_ns);
            let run = sim.task_counters(k.task).runtime_ns - b;
            KswapdRow { comm: t.comm.clone(), node: k.node, cpu_pct: round2(run as f64 * 100.0 / window as f64) }
        })
        .collect();
    let nodes = sim
        .w
        .m
        .mm
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let b = base.lru_lock.get(i).copied().unwrap_or_default();
            let s = n.lru_lock.stats;
            let zb = base.zone_lock.get(i).copied().unwrap_or_default();
            let z = n.zone_lock.stats;
            NodeRow {
                node: n.node,
                managed_pages: n.managed,
                free_pages: n.free,
                pcp_pages: n.pcp.iter().sum(),
                min_pages: n.wmark.min,
                low_pages: n.wmark.low,
                high_pages: n.wmark.high,
                inactive_file_pages: n.lru[Lru::InactiveFile as usize],
                active_file_pages: n.lru[Lru::ActiveFile as usize],
                lru_lock_acquisitions: s.acquisitions - b.acquisitions,
                lru_lock_contended: s.contended - b.contended,
                lru_lock_spin_ms: round2((s.spin_ns - b.spin_ns) as f64 / 1e6),
                lru_lock_held_pct: round2((s.hold_ns - b.hold_ns) as f64 * 100.0 / window as f64),
                zone_lock_spin_ms: round2((z.spin_ns - zb.spin_ns) as f64 / 1e6),
                zone_lock_held_pct: round2((z.hold_ns - zb.hold_ns) as f64 * 100.0 / window as f64),
                kswapd_allowed: match sim.w.m.mm.cfg.kswapd_threads {
                    KswapdThreads::Auto { .. } if sim.w.m.mm.auto_evals > 0 => {
                        round2(sim.w.m.mm.auto_sum[n.node] as f64 / sim.w.m.mm.auto_evals as f64)
                    }
                    _ => sim.w.m.mm.kswapd_active.get(n.node).copied().unwrap_or(0) as f64,
                },
                kswapd_cpu_pct: {
                    let mine: Vec<f64> = kswapd.iter().filter(|k| k.node == n.node).map(|k| k.cpu_pct).collect();
                    round2(mine.iter().sum::<f64>() / mine.len().max(1) as f64)
                },
                kswapd_cpu_total_pct: round2(kswapd.iter().filter(|k| k.node == n.node).map(|k| k.cpu_pct).sum()),
            }
        })
        .collect();
    let alloc = sim
        .w
        .m
        .mm
        .alloc_lat
        .iter()
        .enumerate()
        .filter(|(_, a)| a.fast + a.slow.len() as u64 > 0)
        .map(|(g, a)| {
            let mut v = a.slow.clone();
            v.sort_unstable();
            let q = |p: f64| quantile(&v, p, 1e3);
            AllocRow {
                group: sim.w.m.kt.progs.group_names.get(g).cloned().unwrap_or_default(),
                fast: a.fast,
                slow: v.len() as u64,
                direct_reclaims: a.direct_reclaims,
                slow_p50_us: q(0.5),
                slow_p99_us: q(0.99),
                slow_max_us: v.last().map_or(0.0, |&x| round2(x as f64 / 1e3)),
                isolated_stalls: a.isolated_stalls,
                drains: a.drains,
                drains_skipped: a.drains_skipped,
            }
        })
        .collect();
    let min_free_kbytes = sim.w.m.mm.nodes.iter().map(|n| n.wmark.min).sum::<u64>() * 4;
    Some(MmReport {
        read_kbs: round2(read_bytes as f64 / 1024.0 / secs),
        vmstat,
        nodes,
        kswapd,
        alloc,
        kswapd_threads: match sim.w.m.mm.cfg.kswapd_threads {
            KswapdThreads::Fixed(n) => n.to_string(),
            KswapdThreads::Auto { idle_per_thread, max } => {
                format!("auto (1 per {idle_per_thread} idle CPUs, max {max})")
            }
        },
        min_free_kbytes,
        workingset: sim.w.m.mm.cfg.workingset,
        procs: sim.stats.procs.iter().map(|&(at, r, b)| ProcsRow { time_s: at as f64 / 1e9, r, b }).collect(),
        writeback: writeback_report(sim, &base.wb, window),
    })
}

/// The writeback part, when a task writes.
fn writeback_report(sim: &Sim, base: &[(u64, u64)], window: u64) -> Option<WritebackReport> {
    let m = &sim.w.m;
    if m.mm.wbs.is_empty() {
        return None;
    }
    let kb = |pages: u64| pages * (crate::mm::PAGE_SIZE / 1024);
    let secs = window as f64 / 1e9;
    let (thresh, bg) =
        crate::mm::page_writeback::global_dirty_limits(m.global_dirtyable_memory(), &m.mm.cfg.dirty, false);
    let mut nr_dirtied = 0;
    let mut nr_written = 0;
    let devices =
        m.mm.wbs
            .iter()
            .enumerate()
            .map(|(i, wb)| {
                let (d0, w0) = base.get(i).copied().unwrap_or_default();
                nr_dirtied += wb.dirtied - d0;
                nr_written += wb.written - w0;
                let t = &m.kt.k.sched.tasks[wb.flusher];
                let b = sim.stats.task_base.get(wb.flusher).map_or(0, |b| b.runtime_ns);
                let run = sim.task_counters(wb.flusher).runtime_ns - b;
                WbRow {
                    device: m.kt.block.disks[wb.disk].cfg.name.clone(),
                    flusher: t.comm.clone(),
                    flusher_cpu_pct: round2(run as f64 * 100.0 / window as f64),
                    write_bandwidth_kbs: kb(wb.avg_write_bandwidth),
                    dirty_ratelimit_kbs: kb(wb.dirty_ratelimit),
                    balanced_dirty_ratelimit_kbs: kb(wb.balanced_dirty_ratelimit),
                    bdi_dirty_thresh_kb: kb(m.wb_calc_thresh(i, thresh)),
                    reclaimable_kb: kb(wb.reclaimable),
                    writeback_kb: kb(wb.writeback),
                    written_kbs: round2(kb(wb.written - w0) as f64 / secs),
                }
            })
            .collect();
    let throttle =
        m.mm.throttle
            .iter()
            .enumerate()
            .filter(|(_, t)| t.dirtied > 0 || !t.pauses.is_empty())
            .map(|(g, t)| {
                let mut v = t.pauses.clone();
                v.sort_unstable();
                let q = |p: f64| quantile(&v, p, 1e6);
                let tasks = m.kt.k.sched.tasks.iter().filter(|x| x.group == g).count().max(1);
                let paused: u64 = v.iter().sum();
                ThrottleRow {
                    group: m.kt.progs.group_names.get(g).cloned().unwrap_or_default(),
                    dirtied_kbs: round2(kb(t.dirtied) as f64 / secs),
                    pauses: v.len() as u64,
                    paused_pct: round2(paused as f64 * 100.0 / (window as f64 * tasks as f64)),
                    pause_p50_ms: q(0.5),
                    pause_p90_ms: q(0.9),
                    pause_max_ms: v.last().map_or(0.0, |&x| round2(x as f64 / 1e6)),
                }
            })
            .collect();
    Some(WritebackReport {
        dirty_thresh_kb: kb(thresh),
        background_thresh_kb: kb(bg),
        dirty_limit_kb: kb(m.mm.wb_dom.dirty_limit),
        dirtyable_kb: kb(m.global_dirtyable_memory()),
        dirty_mean_kb: {
            let s = &sim.stats.dirty;
            kb(s.iter().map(|&(_, d, w)| d + w).sum::<u64>() / (s.len() as u64).max(1))
        },
        nr_dirtied,
        nr_written,
        devices,
        throttle,
        samples: sim
            .stats
            .dirty
            .iter()
            .map(|&(at, d, w)| DirtySample { time_s: at as f64 / 1e9, dirty_kb: kb(d), writeback_kb: kb(w) })
            .collect(),
    })
}

/// The `p` quantile of sorted `v` (nearest rank) over `unit`, rounded to
/// 2 places; 0 for none.
fn quantile(v: &[u64], p: f64, unit: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let i = ((v.len() as f64 * p).ceil() as usize).clamp(1, v.len()) - 1;
    round2(v[i] as f64 / unit)
}

pub(crate) fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}
