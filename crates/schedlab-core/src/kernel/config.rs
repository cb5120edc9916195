//! Compiles a scenario's `[kernel]` table into the `KernelConfig` of one
//! run: the version's presets (mechanisms, features, tunables, costs), then
//! the scenario's overrides by the kernel's own names, each checked with its
//! key path.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::error::{Location, Result, SimError};
use crate::kernel::version::{KernelVersion, KNOWN_VERSIONS};
use crate::kernel::workqueue::{WorkqueueDef, KTASK_WQ, WQ_FLAG_NAMES, WQ_HIGHPRI, WQ_UNBOUND};
use crate::kernel::{
    BalancerEra, CpufreqDriver, CpufreqGovernor, FairEra, KernelConfig, PreemptModel, SysctlError, Tunables,
};
use crate::prio::{is_nice, nice_range, MAX_NICE, MIN_NICE};
use crate::units::{duration_at, parse_duration};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawKernel {
    pub(crate) version: Option<String>,
    pub(crate) hz: Option<i64>,
    #[serde(default)]
    pub(crate) features: Vec<String>,
    #[serde(default)]
    pub(crate) sysctl: BTreeMap<String, toml::Value>,
    #[serde(default)]
    pub(crate) costs: RawCosts,
    #[serde(default)]
    pub(crate) ktask: RawKtask,
    pub(crate) preempt: Option<String>,
    /// CONFIG_PREEMPT_DYNAMIC: the build is preemptible whatever `preempt`.
    pub(crate) preempt_dynamic: Option<bool>,
    /// Mechanism-era overrides: "cfs"/"eevdf", "avg_load"/"group_type".
    pub(crate) fair: Option<String>,
    /// Per-CPU vmstat_update kworkers (kernel background activity).
    pub(crate) vmstat_kworkers: Option<bool>,
    /// CONFIG_RT_GROUP_SCHED.
    pub(crate) rt_group_sched: Option<bool>,
    /// A CPU latency PM-QoS request held for the whole run
    /// (/dev/cpu_dma_latency), a duration.
    pub(crate) cpu_dma_latency: Option<String>,
    /// CLOCK_MONOTONIC at the boot CPU's first tick, a duration.
    pub(crate) tick_next_period: Option<String>,
    /// The cpufreq scaling governor (with a processor, `machine.cpufreq`).
    pub(crate) cpufreq_governor: Option<String>,
    /// The cpufreq driver: "intel_pstate" or "acpi-cpufreq".
    pub(crate) cpufreq_driver: Option<String>,
    /// x86 frequency invariance (the 1567c3e3467c series) on or off.
    pub(crate) freq_invariance: Option<bool>,
    /// Pressure stall information (the psi= boot parameter), 4.20+.
    pub(crate) psi: Option<bool>,
    /// The isolcpus= boot parameter (scenario/isolcpus.rs).
    pub(crate) isolcpus: Option<String>,
    pub(crate) balancer: Option<String>,
    /// Workqueues beyond the system ones (alloc_workqueue()).
    #[serde(default)]
    pub(crate) workqueue: Vec<RawWorkqueue>,
    /// `[kernel.vm]` (kernel/vm.rs).
    pub(crate) vm: Option<crate::kernel::vm::RawVm>,
}

/// A `[[kernel.workqueue]]`: what a subsystem's alloc_workqueue() makes.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawWorkqueue {
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) flags: Vec<String>,
    /// An unbound workqueue's workers' nice (workqueue_attrs).
    pub(crate) nice: Option<i64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCosts {
    pub(crate) context_switch: Option<String>,
    pub(crate) migration_smt: Option<String>,
    pub(crate) migration_llc: Option<String>,
    pub(crate) migration_remote_llc: Option<String>,
    pub(crate) migration_remote_node: Option<String>,
    pub(crate) wakeup_ipi: Option<String>,
    pub(crate) timer_slack: Option<String>,
    pub(crate) timer_irq_delay: Option<String>,
    pub(crate) timer_irq_spread: Option<String>,
    pub(crate) halt_poll: Option<String>,
    pub(crate) idle_exit: Option<String>,
    pub(crate) irq: Option<String>,
    pub(crate) blk_complete: Option<String>,
    pub(crate) copy_page: Option<String>,
    pub(crate) pagecache_add: Option<String>,
    pub(crate) zone_alloc_page: Option<String>,
    pub(crate) zone_free_page: Option<String>,
    pub(crate) lru_page: Option<String>,
    pub(crate) reclaim_page: Option<String>,
    pub(crate) lru_lock_handoff: Option<String>,
    pub(crate) lru_lock_handoff_waiter: Option<String>,
    pub(crate) shadow_entry: Option<String>,
    pub(crate) writeback_page: Option<String>,
    pub(crate) write_page: Option<String>,
    pub(crate) dio_page: Option<String>,
    pub(crate) pipe_write: Option<String>,
    pub(crate) pipe_read: Option<String>,
    pub(crate) unix_send: Option<String>,
    pub(crate) unix_recv: Option<String>,
    pub(crate) fork: Option<String>,
    pub(crate) exit: Option<String>,
    pub(crate) anon_fault: Option<String>,
    pub(crate) zswap_compress: Option<String>,
    pub(crate) proc_read_task: Option<String>,
    pub(crate) proc_read_stat: Option<String>,
    pub(crate) thread_start: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawKtask {
    pub(crate) helper_nice: Option<i64>,
}

/// `[kernel]` -> KernelConfig.
pub(crate) fn compile_kernel(raw: &RawKernel, file: &str) -> Result<KernelConfig> {
    let vstr = raw.version.as_deref().unwrap_or("6.1");
    let version = KernelVersion::parse_why(vstr).map_err(|why| {
        SimError::bad_value(
            file,
            "kernel.version",
            format!("\"{vstr}\": {why}"),
            format!("{}; with presets: {}", crate::kernel::version::ACCEPTED, KNOWN_VERSIONS.join(", ")),
        )
    })?;
    let mut kernel = KernelConfig::defaults(version);
    if let Some(hz) = raw.hz {
        if ![100, 250, 300, 1000].contains(&hz) {
            return Err(SimError::bad_value(
                file,
                "kernel.hz",
                format!("HZ {hz} is not a Kconfig choice"),
                "100, 250, 300, 1000",
            ));
        }
        kernel.hz = hz as u32;
        kernel.tick_ns = 1_000_000_000 / hz as u64;
    }
    for (i, f) in raw.features.iter().enumerate() {
        let accepted = kernel.features.accepted_names();
        kernel
            .features
            .apply(f, version)
            .map_err(|m| SimError::bad_value(file, &format!("kernel.features[{i}]"), m, accepted))?;
    }
    // The eras first: which sysctls exist depends on them.
    if let Some(f) = &raw.fair {
        kernel.mech.fair = match f.as_str() {
            "cfs" => FairEra::Cfs,
            "eevdf" => FairEra::Eevdf,
            _ => return Err(SimError::bad_value(file, "kernel.fair", format!("\"{f}\""), "cfs, eevdf")),
        };
    }
    if let Some(b) = &raw.balancer {
        kernel.mech.balancer = match b.as_str() {
            "avg_load" => BalancerEra::AvgLoad,
            "group_type" => BalancerEra::GroupType,
            _ => return Err(SimError::bad_value(file, "kernel.balancer", format!("\"{b}\""), "avg_load, group_type")),
        };
    }
    for (name, v) in &raw.sysctl {
        let key = format!("kernel.sysctl.\"{name}\"");
        let val = match v {
            toml::Value::Integer(n) => *n,
            toml::Value::String(s) => match parse_duration(s) {
                Ok(ns) if name.ends_with("_ns") => ns as i64,
                Ok(ns) if name.ends_with("_us") => (ns / 1000) as i64,
                Ok(ns) if name.ends_with("_ms") => (ns / 1_000_000) as i64,
                _ => {
                    return Err(SimError::bad_value(
                        file,
                        &key,
                        format!("\"{s}\" is not an integer"),
                        "an integer in the sysctl's own unit, or a duration string for *_ns/_us/_ms",
                    ))
                }
            },
            _ => {
                return Err(SimError::bad_value(
                    file,
                    &key,
                    format!("{v} is not an integer"),
                    "an integer in the sysctl's own unit",
                ))
            }
        };
        let mech = kernel.mech.clone();
        kernel.sysctl.set(name, val, &mech, kernel.version).map_err(|e| match e {
            SysctlError::Unknown => SimError::UnknownKey { at: loc(file, &key), accepted: Tunables::NAMES.join(", ") },
            SysctlError::NotInVersion(whose) => SimError::bad_value(
                file,
                &key,
                format!("kernel {} has no {name}: it is {whose}", kernel.version),
                format!(
                    "the sysctls of kernel {}: {}",
                    kernel.version,
                    Tunables::names_for(&mech, kernel.version).join(", ")
                ),
            ),
            SysctlError::Range(m, accepted) => SimError::bad_value(file, &key, m, accepted),
        })?;
    }
    kernel
        .sysctl
        .validate()
        .map_err(|(name, m, accepted)| SimError::bad_value(file, &format!("kernel.sysctl.\"{name}\""), m, accepted))?;
    compile_costs(&raw.costs, &mut kernel, file)?;
    if let Some(n) = raw.ktask.helper_nice {
        if !is_nice(n) {
            return Err(SimError::bad_value(
                file,
                "kernel.ktask.helper_nice",
                format!("nice {n} out of range"),
                format!("{} (P0 uses {MAX_NICE}, MAX_NICE)", nice_range()),
            ));
        }
        kernel.ktask_helper_nice = n as i32;
    }
    kernel.vm =
        crate::kernel::vm::compile_vm(raw.vm.as_ref().unwrap_or(&Default::default()), version, &kernel.mech, file)?;
    kernel.vm_given = raw.vm.is_some();
    if let Some(p) = &raw.preempt {
        kernel.preempt = match p.as_str() {
            "none" => PreemptModel::None,
            "voluntary" => PreemptModel::Voluntary,
            "full" => PreemptModel::Full,
            "lazy" if version.at_least(6, 13) => PreemptModel::Lazy,
            "lazy" => {
                return Err(SimError::bad_value(
                    file,
                    "kernel.preempt",
                    format!("\"lazy\" on {version}"),
                    "\"lazy\" from 6.13 (PREEMPT_LAZY); none, voluntary, full",
                ))
            }
            _ => {
                return Err(SimError::bad_value(
                    file,
                    "kernel.preempt",
                    format!("\"{p}\""),
                    "none, voluntary, full, lazy (6.13+)",
                ))
            }
        };
    }
    if let Some(d) = raw.preempt_dynamic {
        kernel.preempt_dynamic = d;
    }
    if let Some(v) = raw.vmstat_kworkers {
        kernel.vmstat_kworkers = v;
    }
    if let Some(v) = raw.rt_group_sched {
        kernel.rt_group_sched = v;
    }
    check_fair_server(&kernel.sysctl, file)?;
    if let Some(s) = &raw.cpu_dma_latency {
        kernel.cpu_dma_latency_ns = Some(duration_at(s, file, "kernel.cpu_dma_latency")?);
    }
    if let Some(s) = &raw.tick_next_period {
        kernel.tick_next_period_ns = Some(duration_at(s, file, "kernel.tick_next_period")?);
    }
    compile_cpufreq(raw, file, &mut kernel)?;
    compile_workqueues(&raw.workqueue, file, &mut kernel.workqueues, kernel.ktask_helper_nice)?;
    Ok(kernel)
}

/// The fair server's runtime fits its period (sched_fair_server_write()).
fn check_fair_server(t: &Tunables, file: &str) -> Result<()> {
    if t.sched_fair_server_runtime_ns > t.sched_fair_server_period_ns {
        return Err(SimError::bad_value(
            file,
            "kernel.sysctl.\"kernel.sched_fair_server_runtime_ns\"",
            format!("{} ns, longer than the period", t.sched_fair_server_runtime_ns),
            "a runtime at most kernel.sched_fair_server_period_ns",
        ));
    }
    Ok(())
}

/// `kernel.cpufreq_governor` and `kernel.cpufreq_driver`: the names, and
/// ondemand only where it exists (the generic governors, under
/// acpi-cpufreq).
fn compile_cpufreq(raw: &RawKernel, file: &str, kernel: &mut KernelConfig) -> Result<()> {
    if let Some(g) = &raw.cpufreq_governor {
        kernel.cpufreq_governor = Some(CpufreqGovernor::from_name(g).ok_or_else(|| {
            SimError::bad_value(file, "kernel.cpufreq_governor", format!("\"{g}\""), CpufreqGovernor::NAMES)
        })?);
    }
    if let Some(d) = &raw.cpufreq_driver {
        kernel.cpufreq_driver = match d.as_str() {
            "intel_pstate" => CpufreqDriver::IntelPstate,
            "acpi-cpufreq" => CpufreqDriver::AcpiCpufreq,
            _ => {
                return Err(SimError::bad_value(
                    file,
                    "kernel.cpufreq_driver",
                    format!("\"{d}\""),
                    "intel_pstate (default), acpi-cpufreq",
                ))
            }
        };
    }
    kernel.freq_invariance = raw.freq_invariance;
    if raw.psi == Some(true) && !kernel.version.at_least(4, 20) {
        return Err(SimError::bad_value(
            file,
            "kernel.psi",
            format!("true on {} (PSI came with 4.20)", kernel.version),
            "true from version 4.20, or false",
        ));
    }
    kernel.psi = raw.psi.unwrap_or(false);
    if kernel.cpufreq_governor == Some(CpufreqGovernor::Ondemand) && kernel.cpufreq_driver == CpufreqDriver::IntelPstate
    {
        return Err(SimError::bad_value(
            file,
            "kernel.cpufreq_governor",
            "\"ondemand\" with intel_pstate (it has its own powersave algorithm)",
            "performance, powersave, schedutil with intel_pstate; ondemand with kernel.cpufreq_driver = \"acpi-cpufreq\"",
        ));
    }
    Ok(())
}

/// `[[kernel.workqueue]]` tables after the system workqueues.
/// ktask's unbound workqueue (its workers at the helpers' nice) comes first.
fn compile_workqueues(raw: &[RawWorkqueue], file: &str, wqs: &mut Vec<WorkqueueDef>, ktask_nice: i32) -> Result<()> {
    wqs.push(WorkqueueDef { name: KTASK_WQ.to_string(), flags: WQ_UNBOUND, nice: ktask_nice });
    for (i, w) in raw.iter().enumerate() {
        let k = |s: &str| format!("kernel.workqueue[{i}].{s}");
        if w.name.is_empty() || w.name.contains(char::is_whitespace) || wqs.iter().any(|o| o.name == w.name) {
            let taken: Vec<&str> = wqs.iter().map(|o| o.name.as_str()).collect();
            return Err(SimError::bad_value(
                file,
                &k("name"),
                format!("\"{}\"", w.name),
                format!("a name without spaces, not one of {}", taken.join(", ")),
            ));
        }
        let mut flags = 0;
        for (j, f) in w.flags.iter().enumerate() {
            let Some(&(_, bit)) = WQ_FLAG_NAMES.iter().find(|(n, _)| n == f) else {
                let names: Vec<&str> = WQ_FLAG_NAMES.iter().map(|(n, _)| *n).collect();
                return Err(SimError::bad_value(
                    file,
                    &format!("kernel.workqueue[{i}].flags[{j}]"),
                    format!("unknown flag \"{f}\""),
                    names.join(", "),
                ));
            };
            flags |= bit;
        }
        if flags & WQ_UNBOUND != 0 && flags & WQ_HIGHPRI != 0 {
            return Err(SimError::bad_value(
                file,
                &k("flags"),
                "WQ_HIGHPRI with WQ_UNBOUND: an unbound workqueue's priority is its nice",
                "WQ_UNBOUND with nice = N, or WQ_HIGHPRI for the bound highpri pools",
            ));
        }
        let nice = match w.nice {
            None => 0,
            Some(n) if flags & WQ_UNBOUND == 0 => {
                return Err(SimError::bad_value(
                    file,
                    &k("nice"),
                    format!("nice {n} on a bound workqueue"),
                    format!("nice only with WQ_UNBOUND (bound ones run at 0, or {MIN_NICE} with WQ_HIGHPRI)"),
                ))
            }
            Some(n) if is_nice(n) => n as i32,
            Some(n) => {
                return Err(SimError::bad_value(file, &k("nice"), format!("nice {n} out of range"), nice_range()))
            }
        };
        wqs.push(WorkqueueDef { name: w.name.clone(), flags, nice });
    }
    Ok(())
}

fn loc(file: &str, key: &str) -> Location {
    Location { file: file.to_string(), key: key.to_string() }
}

/// `[kernel.costs]`: each a duration no longer than the tick (the runner's
/// own costs: a second).
fn compile_costs(raw: &RawCosts, kernel: &mut KernelConfig, file: &str) -> Result<()> {
    let c = raw;
    let tick = kernel.tick_ns;
    let costs = &mut kernel.costs;
    for (val, slot, k) in [
        (&c.context_switch, &mut costs.context_switch_ns, "context_switch"),
        (&c.migration_smt, &mut costs.migration_smt_ns, "migration_smt"),
        (&c.migration_llc, &mut costs.migration_llc_ns, "migration_llc"),
        (&c.migration_remote_llc, &mut costs.migration_remote_llc_ns, "migration_remote_llc"),
        (&c.migration_remote_node, &mut costs.migration_remote_node_ns, "migration_remote_node"),
        (&c.wakeup_ipi, &mut costs.wakeup_ipi_ns, "wakeup_ipi"),
        (&c.timer_slack, &mut costs.timer_slack_ns, "timer_slack"),
        (&c.timer_irq_delay, &mut costs.timer_irq_delay_ns, "timer_irq_delay"),
        (&c.timer_irq_spread, &mut costs.timer_irq_spread_ns, "timer_irq_spread"),
        (&c.halt_poll, &mut costs.halt_poll_ns, "halt_poll"),
        (&c.idle_exit, &mut costs.idle_exit_ns, "idle_exit"),
        (&c.irq, &mut costs.irq_ns, "irq"),
        (&c.blk_complete, &mut costs.blk_complete_ns, "blk_complete"),
        (&c.copy_page, &mut costs.copy_page_ns, "copy_page"),
        (&c.pagecache_add, &mut costs.pagecache_add_ns, "pagecache_add"),
        (&c.zone_alloc_page, &mut costs.zone_alloc_page_ns, "zone_alloc_page"),
        (&c.zone_free_page, &mut costs.zone_free_page_ns, "zone_free_page"),
        (&c.lru_page, &mut costs.lru_page_ns, "lru_page"),
        (&c.reclaim_page, &mut costs.reclaim_page_ns, "reclaim_page"),
        (&c.lru_lock_handoff, &mut costs.lru_lock_handoff_ns, "lru_lock_handoff"),
        (&c.lru_lock_handoff_waiter, &mut costs.lru_lock_handoff_waiter_ns, "lru_lock_handoff_waiter"),
        (&c.shadow_entry, &mut costs.shadow_entry_ns, "shadow_entry"),
        (&c.writeback_page, &mut costs.writeback_page_ns, "writeback_page"),
        (&c.write_page, &mut costs.write_page_ns, "write_page"),
        (&c.dio_page, &mut costs.dio_page_ns, "dio_page"),
        (&c.anon_fault, &mut costs.anon_fault_ns, "anon_fault"),
        (&c.zswap_compress, &mut costs.zswap_compress_ns, "zswap_compress"),
        (&c.pipe_write, &mut costs.pipe_write_ns, "pipe_write"),
        (&c.pipe_read, &mut costs.pipe_read_ns, "pipe_read"),
        (&c.unix_send, &mut costs.unix_send_ns, "unix_send"),
        (&c.unix_recv, &mut costs.unix_recv_ns, "unix_recv"),
        (&c.fork, &mut costs.fork_ns, "fork"),
        (&c.exit, &mut costs.exit_ns, "exit"),
        (&c.proc_read_task, &mut costs.proc_read_task_ns, "proc_read_task"),
        (&c.proc_read_stat, &mut costs.proc_read_stat_ns, "proc_read_stat"),
        (&c.thread_start, &mut costs.thread_start_ns, "thread_start"),
    ] {
        if let Some(s) = val {
            let key = format!("kernel.costs.{k}");
            let ns = duration_at(s, file, &key)?;
            // The runner's reads of its counters and its threads' start-up
            // are a stretch of one thread's time, not a per-switch cost (a
            // QEMU guest's take milliseconds): up to a second.
            if k.starts_with("proc_read") || k == "thread_start" {
                if ns > 1_000_000_000 {
                    return Err(SimError::bad_value(
                        file,
                        &key,
                        format!("{s} is longer than 1 s"),
                        "a duration up to 1s",
                    ));
                }
            // A cost is a short stretch of one CPU's time; longer than a tick
            // it would outlast the scheduler's own period of decisions (and
            // a switch dearer than the tick never lets a task run).
            } else if ns > tick {
                return Err(SimError::bad_value(
                    file,
                    &key,
                    format!("{s} is longer than the tick ({}ms at HZ {})", tick / 1_000_000, kernel.hz),
                    format!("a duration up to one tick ({}ms)", tick / 1_000_000),
                ));
            }
            *slot = ns;
        }
    }
    Ok(())
}
