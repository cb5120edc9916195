//! The simulated machine: one kernel's state on one machine running one
//! workload, and its construction from a scenario.
//!
//! `Sim` owns every room's state and is the only place that sees all of
//! it. The rooms are floors, each owning the ones beneath it by value: the
//! scheduler and the parts it uses (`SchedEnv`: sched/env.rs) inside the
//! kernel threads' floor (`KthreadFloor`: kthread/floor.rs, also the
//! interrupt handlers'), inside memory management's (`MmFloor`:
//! mm/floor.rs), inside the workload's (`WorkloadFloor`:
//! workload/floor.rs), which is `Sim`'s `w`. A mechanism is a method on
//! its floor, with the kernel's name, and sees nothing above it. This
//! file holds the state and how it is set up; the event loop that drives
//! it is `run.rs`, and the points where the scheduler hands over to the
//! rooms above are `schedule.rs`.

pub mod check;
pub mod report;
pub mod report_cgroup;
pub mod report_mm;
pub mod run;
pub mod schedule;

use crate::block::Block;
use crate::cpufreq::CpuFreq;
use crate::cpumask::CpuMask;
use crate::engine::event::Ev;
use crate::engine::heap;
use crate::engine::queue::EventQueue;
use crate::engine::rng::Rng;
use crate::engine::time::Instant;
use crate::error::SimError;
use crate::idle::Cpuidle;
use crate::kernel::{CpufreqDriver, CpufreqGovernor, KernelConfig, ScaledTunables};
use crate::kthread::floor::KthreadFloor;
use crate::kthread::Kthreads;
use crate::membw::MemBw;
use crate::mm::floor::MmFloor;
use crate::program::Programs;
use crate::report::LbCounters;
use crate::scenario::{Measure, Scenario, StartPhase, StartProtocol};
use crate::sched::cpustat::CpuTime;
use crate::sched::env::SchedEnv;
use crate::sched::sched::Wasted;
use crate::sched::sched::{CfsRq, LbSnap, Nohz, RootDomain, Rq, RqIdle, RqStats, Sched, SchedDomainShared, SdState};
use crate::sched::sd_build::build_partitioned_sched_domains;
use crate::sched::task_group::Partition;
use crate::sched::topology::SchedTopology;
use crate::stats::{Recorder, Stats};
use crate::trace::Trace;
use crate::workload::cpuset::partition_cpus;
use crate::workload::floor::WorkloadFloor;
use crate::workload::rt_migrate_test::RtMigrateTest;
use crate::workload::{SyncObj, Workload};

/// The simulation: one machine, one kernel, one workload.
pub struct Sim {
    /// Every room of the kernel and the workload, floor by floor: the
    /// workload's own state (`w.wl`), memory management (`w.m.mm`), the
    /// kernel threads, programs registry and block layer (`w.m.kt`), the
    /// scheduler and the machine it runs on (`w.m.kt.k`).
    pub w: WorkloadFloor,
    /// The run's statistics (stats/): mpstat snapshots, the warm-up's
    /// baselines, event counts.
    pub stats: Stats,
    // ---------------------------------------------------------- the run
    pub end_ns: u64,
    /// No measure.duration: the run ends when every task has exited, or at
    /// measure.limit (end_ns) with a warning.
    pub open_ended: bool,
    pub stop_reason: &'static str,
    /// What the report warns about (the limit reached, a deadlock).
    pub warnings: Vec<String>,
    /// Run the invariant checker after every event (`--check`).
    pub check: bool,
    /// Stop with SL210 when the live heap passes this many bytes
    /// (engine::heap; `RunOptions::heap_budget`).
    pub heap_budget: Option<u64>,
    /// Progress published for a reader on another thread (RunOptions::progress).
    pub progress: Option<std::sync::Arc<crate::engine::Progress>>,
    /// Since when the RT invariant has been violated, and rt_migrations then
    /// (the checker; RT_PUSH_IPI allows one push round without a move).
    pub rt_inv_since: std::cell::Cell<Option<(u64, u64)>>,
}

impl Sim {
    pub fn new(sc: &Scenario, seed: u64, check: bool, trace: Trace) -> Result<Sim, SimError> {
        Sim::with_budget(sc, seed, check, trace, None)
    }

    /// `new`, with the run's heap budget (engine::heap) in force from the
    /// first task created: a scenario of a million tasks stops with SL210
    /// while its tasks are built, not after.
    pub fn with_budget(
        sc: &Scenario,
        seed: u64,
        check: bool,
        trace: Trace,
        heap_budget: Option<u64>,
    ) -> Result<Sim, SimError> {
        let (cfg, machine) = (sc.kernel.clone(), sc.machine.clone());
        let null_domain = null_domain(sc);
        let roots = partition_cpus(&sc.cgroups, Partition::Root);
        let nr = machine.nr_cpus();
        let topo = build_partitioned_sched_domains(&machine, &cfg.mech, null_domain.as_ref(), &roots);
        let many_cpus = nr > 512; // Sched::idle_mask
        let tun = ScaledTunables::new(&cfg, nr);
        let mut rqs = sched_init(&cfg, &topo, seed);
        let cpufreq = new_cpufreq(sc, rqs.len());
        for (rq, &speed) in rqs.iter_mut().zip(&cpufreq.scale) {
            rq.cpu_speed = speed;
        }
        let ngroups = topo.groups.len();
        let group_names: Vec<String> = sc.groups.iter().map(|g| g.name.clone()).collect();
        let open_ended = sc.measure.duration.is_none();
        let (phase, warmup, end_ns) = run_window(&sc.measure, sc.kernel.tick_ns, seed);
        let rec = Recorder::new(nr, warmup, sc.measure.interval, end_ns, sc.measure.samples);
        let max_load_balance_interval = (cfg.hz as u64 * rqs.len() as u64 / 10).max(1);
        let cpu_scale = machine.cpus.iter().map(|c| u64::from(c.capacity)).collect();
        // sched_switch prints the idle task with init_task's prio.
        let mut trace = trace;
        trace.swapper_prio = crate::prio::DEFAULT_PRIO;
        let mut sim = Sim {
            w: WorkloadFloor {
                m: MmFloor {
                    kt: KthreadFloor {
                        k: SchedEnv {
                            cfg,
                            machine,
                            topo,
                            tun,
                            now: 0,
                            q: EventQueue::new(),
                            seed,
                            rng: Rng::fork(seed, "sim"),
                            sched: Sched {
                                tasks: Vec::new(),
                                rq_idle: vec![RqIdle::default(); rqs.len()],
                                idle_mask: many_cpus.then(|| crate::cpumask::CpuMask::full(nr)),
                                max_load_balance_interval,
                                cpu_scale,
                                cfs_rqs: (0..nr).map(|cpu| CfsRq { cpu, ..CfsRq::new() }).collect(),
                                rqs,
                                groups: Default::default(),
                                rd: RootDomain::new(nr),
                                // Every CPU starts idle and tickless: no LLC has a busy CPU.
                                nohz: Nohz::at_boot(nr, null_domain.as_ref()),
                                sds: vec![SchedDomainShared::AT_BOOT; nr],
                                sg_imbalance: vec![false; ngroups],
                                lb_cpus: Vec::new(),
                                resched_pending: Vec::new(),
                                resched_spare: Vec::new(),
                                rt_period_active: false,
                                rt_nr_tasks: 0,
                                dl_nr_tasks: 0,
                                dl_stats: Default::default(),
                                rt_pressure: false,
                                lb_exec: None,
                                lb_snap: vec![LbSnap::default(); nr],
                                lb_snap_at: u64::MAX,
                                // Above every migration/N's stand-in pid (trace::stopper_pid).
                                next_pid: (nr as u32 + 2).div_ceil(100).max(1) * 100,
                                list_seq: 0,
                                live_tasks: 0,
                                group_tasks: Vec::new(),
                                wasted: Wasted { nr_idle_cpus: nr as u64, ..Default::default() },
                                rt_throttle_events: 0,
                                rt_migrations: 0,
                                migrations_by_distance: [0; 4],
                                distribute_cpu_mask_prev: Vec::new(),
                                group_masks: Vec::new(),
                            },
                            cpuidle: Cpuidle::new(
                                sc.machine.idle_table,
                                nr,
                                sc.kernel.cpu_dma_latency_ns,
                                (sc.kernel.costs.idle_exit_ns, sc.kernel.costs.halt_poll_ns),
                            )
                            .traced_if(trace.on()),
                            cpufreq,
                            membw: MemBw::new(sc.machine.memory_bandwidth, &sc.machine.node_cpus, nr),
                            psi: crate::sched::psi_group::Psi::for_kernel(&sc.kernel, nr),
                            warmup,
                            trace,
                        },
                        block: Block::new(&sc.machine.disks, seed),
                        progs: Programs {
                            templates: sc.groups.clone(),
                            nr_scenario_groups: sc.groups.len(),
                            group_names,
                            work_programs: sc.work_programs.clone(),
                            harness_group: None,
                        },
                        kthreads: Kthreads {
                            vmstat_next: vec![u64::MAX; nr],
                            workqueues: sc.kernel.workqueues.clone(),
                            works_done: vec![0; sc.kernel.workqueues.len()],
                            ..Default::default()
                        },
                    },
                    mm: crate::mm::Mm::new(sc.read_ops.clone(), warmup),
                    source: sc.source.clone(),
                    fatal: None,
                },
                wl: workload_state(sc),
            },
            stats: Stats::new(rec),
            end_ns,
            open_ended,
            stop_reason: "duration reached",
            warnings: sc.notes.clone(),
            check: check || sc.measure.check,
            heap_budget,
            progress: None,
            rt_inv_since: std::cell::Cell::new(None),
        };
        sim.w.m.kt.k.init_dl_bw();
        sim.w.m.kt.k.create_cgroups(&sc.cgroups);
        sim.w.m.kt.create_housekeeping();
        sim.w.m.mm_init(sc.memory, sc.zswap)?;
        // Create the initial tasks, or the runner's main thread that will.
        if sc.measure.start == StartProtocol::Runner {
            sim.w.runner_start(&sc.groups, (sc.measure.warmup, sc.measure.duration, sc.measure.interval), phase);
        }
        for (gi, g) in sc.groups.iter().enumerate().filter(|_| sc.measure.start == StartProtocol::Fork) {
            for i in 0..g.count {
                let tid = sim.w.m.kt.k.alloc_task(gi, Some(gi), g, i);
                sim.w.m.kt.k.schedule_start(tid, g.start, phase);
                if tid.is_multiple_of(heap::CHECK_EVERY as usize) {
                    sim.check_heap()?;
                }
            }
        }
        // mpstat: a baseline snapshot when the warm-up ends (at 0 the recorder starts from zeros),
        // then one per interval; a sample that falls on the end of the run is the End handler's.
        let first = if warmup > 0 { warmup } else { sc.measure.interval };
        if first < end_ns {
            sim.w.m.kt.k.q.schedule(Instant(first), Ev::Sample);
        }
        sim.w.m.kt.k.q.schedule(Instant(end_ns), Ev::End);
        Ok(sim)
    }
}

/// Where the workload starts after a jiffy (`measure.start_phase`), when
/// its window opens (the warm-up after that) and when the run ends, ns.
fn run_window(m: &Measure, tick_ns: u64, seed: u64) -> (u64, u64, u64) {
    let phase = match m.start_phase {
        StartPhase::Jiffy => 0,
        StartPhase::Seed => Rng::fork(seed, "start_phase").range(0, tick_ns),
        StartPhase::At(ns) => ns,
    };
    let warmup = m.warmup + phase;
    (phase, warmup, m.duration.map_or(m.limit, |d| warmup + d))
}

/// sched_init() and the domains' attachment: one runqueue per CPU, idle
/// and tickless, with the per-CPU state of each of its sched domains.
/// The CPUs' frequencies: the machine's processor under the kernel's
/// governor (its version's default unless `kernel.cpufreq_governor`);
/// schedutil's rate limit is intel_cpufreq's transition delay (500 us, 5 ms
/// with HWP), x86 frequency invariance from 5.7.
fn new_cpufreq(sc: &Scenario, nr: usize) -> CpuFreq {
    let driver = sc.kernel.cpufreq_driver;
    let hwp = sc.machine.processor.is_some_and(|p| p.hwp) && driver == CpufreqDriver::IntelPstate;
    let v = sc.kernel.version;
    let gov = (driver, sc.kernel.default_governor(hwp));
    // Passive mode (intel_cpufreq under schedutil) implied no_hwp until
    // 5.9 (f6ebbcf08f37 "cpufreq: intel_pstate: Implement passive mode
    // with HWP enabled"), and with it INTEL_CPUFREQ_TRANSITION_DELAY_HWP.
    let passive_hwp = hwp && gov.1 == CpufreqGovernor::Schedutil && v.at_least(5, 9);
    let rate_limit_ns = match driver {
        CpufreqDriver::IntelPstate if passive_hwp => 5_000_000,
        CpufreqDriver::IntelPstate => 500_000,
        // cpufreq_policy_transition_delay_us() for acpi-cpufreq's FFH
        // P-states (a 10 us latency): 1000 x the latency capped at 10 ms,
        // at 2 ms from 6.8 (e13aa799c2a6), 1.5 x the latency from 6.12
        // (37c6dccd6837; docs/notes/cpufreq-research.md §3.2).
        CpufreqDriver::AcpiCpufreq if v.at_least(6, 12) => 15_000,
        CpufreqDriver::AcpiCpufreq if v.at_least(6, 8) => 2_000_000,
        CpufreqDriver::AcpiCpufreq => 10_000_000,
    };
    // 1567c3e3467c (5.7); `kernel.freq_invariance` applies the series to an
    // older kernel or takes it away.
    let invariant = sc.machine.processor.is_some() && sc.kernel.freq_invariance.unwrap_or(v.at_least(5, 7));
    let tpc = sc.machine.threads_per_core;
    CpuFreq::new(sc.machine.processor, gov, invariant, rate_limit_ns, nr, tpc)
}

/// The CPUs on the NULL domain: isolcpus= and `isolated` cpuset partitions.
fn null_domain(sc: &Scenario) -> Option<CpuMask> {
    let isolated = partition_cpus(&sc.cgroups, Partition::Isolated);
    if isolated.is_empty() {
        return sc.isolcpus.clone();
    }
    let mut all = sc.isolcpus.clone().unwrap_or_else(|| CpuMask::new(sc.machine.nr_cpus()));
    isolated.iter().for_each(|p| all.or_assign(p));
    Some(all)
}

fn sched_init(cfg: &KernelConfig, topo: &SchedTopology, seed: u64) -> Vec<Rq> {
    let nr = topo.cpu_domains.len();
    let tick = cfg.tick_ns;
    let mut rqs = Vec::with_capacity(nr);
    // The machine has been up for a while when the workload starts, so
    // each CPU's domains last balanced at an arbitrary point within
    // their interval: the phase is drawn from the seed (this, not a
    // fudge factor, is where repeated runs differ).
    let mut phase_rng = Rng::fork(seed, "sd_last_balance");
    for cpu in 0..nr {
        let sd = topo.cpu_domains[cpu]
            .iter()
            .map(|&d| {
                let dom = &topo.domains[d];
                let max_ns = cfg.msecs_to_jiffies(dom.max_interval_ms * dom.busy_factor as u64) * tick;
                SdState {
                    last_balance: -(phase_rng.range(0, max_ns) as i64),
                    balance_interval: if cfg.mech.balance_interval_starts_at_span { dom.span_weight as u64 } else { 1 },
                    nr_balance_failed: 0,
                    max_newidle_lb_cost: 0,
                    newidle_call: 512,
                    newidle_success: 256,
                    newidle_ratio: 512,
                    stats: LbCounters::default(),
                }
            })
            .collect();
        rqs.push(Rq {
            cpu,
            curr: None,
            nr_running: 0,
            rt: Box::default(),
            dl: Box::default(),
            need_resched: false,
            picked: None,
            tick_key: None,
            op_key: None,
            op_at: 0,
            cpu_speed: crate::cpufreq::SCALE,
            mem_stall: crate::membw::SCALE,
            idle_stamp: Some(0),
            avg_idle: 2 * cfg.sysctl.sched_migration_cost_ns,
            max_idle_balance_cost: cfg.sysctl.sched_migration_cost_ns,
            next_balance: tick,
            sd,
            active_balance: false,
            stopper_running: false,
            push_cpu: 0,
            nohz_idle: true,
            acct: CpuTime::default(),
            acct_since: 0,
            nr_iowait: 0,
            windows: Vec::new(),
            hrtimers: Vec::new(),
            busy_until: 0,
            stats: RqStats::default(),
            cpu_load: [0; 5],
            last_load_update_tick: 0,
            in_nohz_recently: true,
            normal_avg: 0,
            age_stamp: 0,
        });
    }
    rqs
}

/// The workload's own state at the start: the synchronisation objects, the
/// channels, the ops' parameters and the benchmarks' tallies.
fn workload_state(sc: &Scenario) -> Workload {
    let barriers = sc.barriers.iter().map(|(_, n)| SyncObj { participants: *n, ..Default::default() }).collect();
    let events = sc
        .events
        .iter()
        .map(|n| SyncObj { pending: crate::workload::initial_pending(n), ..SyncObj::default() })
        .collect();
    Workload {
        barriers,
        events,
        barrier_names: sc.barriers.iter().map(|(n, _)| n.clone()).collect(),
        event_names: sc.events.clone(),
        channels: sc
            .channels
            .iter()
            .flat_map(|d| std::iter::repeat_n(d, d.count))
            .map(crate::workload::channel::Channel::new)
            .collect(),
        rtmt: sc.rt_migrate_test.clone().map(|(c, g)| Box::new(RtMigrateTest::new(c, g))),
        io_ops: sc.io_ops.clone(),
        queue_works: sc.queue_works.clone(),
        dbench: crate::workload::dbench::DbenchState { cfg: sc.dbench.clone(), ..Default::default() },
    }
}
