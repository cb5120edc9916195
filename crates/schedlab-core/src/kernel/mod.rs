//! Kernel configuration of one run: version, mechanism eras, features,
//! tunables (by their sysctl names) and the global cost constants.

pub mod config;
pub mod features;
pub mod mechanisms;
mod tunables;
pub mod version;
pub mod vm;
pub mod workqueue;

use crate::kernel::features::Features;
pub use mechanisms::{
    BalancerEra, DrainAllPages, FairEra, IsolatedThrottle, Mechanisms, NohzModel, RtBalance, SdInit, WakeupForm,
};
pub use tunables::{SysctlError, Tunables};
pub use version::KernelVersion;

/// The factor the boot code multiplies latency/granularity tunables by
/// [docs/LINUX-FACTS.md §1.4: sched_init_granularity (2.6.24-2.6.32),
/// get_update_sysctl_factor (2.6.33+)].
pub fn sysctl_factor(m: &Mechanisms, scaling: u64, online_cpus: usize) -> u64 {
    let ilog2 = |n: usize| (usize::BITS - 1 - n.max(1).leading_zeros()) as u64;
    if m.sched_init_granularity_2624 {
        return 1 + ilog2(online_cpus);
    }
    let cpus = online_cpus.min(8);
    match scaling {
        0 => 1,
        2 => cpus as u64,
        _ => 1 + ilog2(cpus),
    }
}

/// The fair tunables as the running kernel holds them: the sysctls scaled
/// by the CPU-count factor at boot (sched_init_granularity /
/// update_sysctl), in ns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaledTunables {
    pub sched_latency: u64,
    pub sched_min_granularity: u64,
    pub sched_wakeup_granularity: u64,
    pub sched_base_slice: u64,
    /// sched_nr_latency = ceil(latency / min_granularity).
    pub sched_nr_latency: u64,
    /// sched_rr_timeslice: SCHED_RR's timeslice in ticks (at least one).
    pub sched_rr_timeslice: u64,
}

impl ScaledTunables {
    pub fn new(cfg: &KernelConfig, online_cpus: usize) -> Self {
        let t = &cfg.sysctl;
        let factor = sysctl_factor(&cfg.mech, t.sched_tunable_scaling, online_cpus);
        let mut sched_latency = t.sched_latency_ns * factor;
        let mut sched_min_granularity = t.sched_min_granularity_ns * factor;
        if cfg.mech.sched_init_granularity_2624 {
            // 2.6.24 .. 2.6.32 capped latency and min_granularity at 200 ms.
            sched_latency = sched_latency.min(200_000_000);
            sched_min_granularity = sched_min_granularity.min(200_000_000);
        }
        ScaledTunables {
            sched_latency,
            sched_min_granularity,
            sched_wakeup_granularity: t.sched_wakeup_granularity_ns * factor,
            sched_base_slice: t.sched_base_slice_ns * factor,
            sched_nr_latency: sched_latency.div_ceil(sched_min_granularity.max(1)),
            sched_rr_timeslice: cfg.msecs_to_jiffies(t.sched_rr_timeslice_ms).max(1),
        }
    }
}

/// Global cost constants: the only knobs that time depends on besides the
/// workload. Each default says where it comes from (docs/LINUX-FACTS.md §9).
#[derive(Debug, Clone, PartialEq)]
pub struct Costs {
    /// Direct cost of a context switch, charged as %sys on the CPU before the
    /// next task's work progresses. 2 us: community pipe ping-pong figures on
    /// recent kernels are 1-2.5 us [docs/LINUX-FACTS.md §9.1].
    pub context_switch_ns: u64,
    /// Cache refill after a migration, by distance, charged to the task's first
    /// run on the new CPU. For small working sets the indirect cost of a
    /// switch is "several us" [docs/LINUX-FACTS.md §9.1/9.2, Li et al. ExpCS'07]; an
    /// SMT sibling shares every cache level. Order of magnitude only.
    pub migration_smt_ns: u64,
    pub migration_llc_ns: u64,
    pub migration_remote_llc_ns: u64,
    pub migration_remote_node_ns: u64,
    /// Delivery of a reschedule/wakeup IPI to another CPU: 2 us, within the
    /// 1-3 us x86 figure of docs/LINUX-FACTS.md §9.3 (secondary sources).
    pub wakeup_ipi_ns: u64,
    /// hrtimer slack of a sleeping fair task (current->timer_slack_ns, 50 us
    /// by default since 2.6.28, PR_SET_TIMERSLACK; RT tasks sleep with none,
    /// hrtimer_nanosleep). A timer may fire anywhere in [expiry, expiry +
    /// slack]: with another interrupt (the tick) inside that range it runs in
    /// it, after the tick; else at expiry + slack.
    pub timer_slack_ns: u64,
    /// From a sleep timer's expiry to its interrupt on the CPU. 0 by
    /// default: on bare metal the local APIC's TSC-deadline timer fires
    /// within the clock's resolution and the handler's own time is not
    /// charged (cyclictest's Min on an idle bare-metal x86 is 1-2 us, which
    /// `idle_exit` and `context_switch` already hold). In a KVM guest the
    /// host's hrtimer and the VM entry that injects the interrupt come
    /// between: `schedlab-runner --calibrate` measures it (a thread's
    /// absolute 1 ms sleeps on an idle CPU, the median lateness less
    /// `idle_exit` and `context_switch`): 16-25 us on this project's KVM
    /// host (validation/real/local-6.18/README.md).
    pub timer_irq_delay_ns: u64,
    /// How far sleep timers' interrupts spread about `timer_irq_delay`:
    /// each arrives a delay drawn uniformly from [delay - spread/2, delay +
    /// spread/2] after its expiry (the task's own random stream), never
    /// before it, so the median stays the calibrated `timer_irq_delay`.
    /// Default 0: every interrupt comes the same time after its expiry.
    /// `schedlab-runner --calibrate` measures it as the 10th-90th
    /// percentile range of the lateness beside a busy CPU, over 0.8. A
    /// real machine's spread: on this project's
    /// KVM host an RT task's timer delays reach 54 us at the p90 against a
    /// median of 15 (validation, rt-fifo), and a periodic deadline task
    /// woken that much earlier or later than its last wakeup lands before
    /// or after its next period, which decides whether it is throttled and
    /// pushed (docs/validation.md, dl-periodic).
    pub timer_irq_spread_ns: u64,
    /// A KVM guest's halted vCPU (`machine.cpuidle = "haltpoll"`) woken
    /// within this long of halting pays no `idle_exit`: the host polls for
    /// its wakeup before descheduling its thread (kvm.halt_poll_ns, x86
    /// default 200 us, the window grown per vCPU up to it). 0 by default:
    /// every halt pays. `schedlab-runner --calibrate` measures it as the
    /// longest sleep whose lateness stays nearer the polled one than the
    /// halted one: 300-400 us on this project's KVM host.
    pub halt_poll_ns: u64,
    /// C1 exit latency when an idle CPU is woken: 2 us, Skylake-SP C1 in the
    /// intel_idle table [docs/LINUX-FACTS.md §9.4]. Deeper states are not modelled.
    pub idle_exit_ns: u64,
    /// A hard interrupt's entry, handler and exit: 1 us. Order of magnitude
    /// of an x86 device interrupt (the 1-3 us IPI figure of
    /// docs/LINUX-FACTS.md §9.3 is the same path); not from a measurement.
    pub irq_ns: u64,
    /// Completing a block request (blk_mq_complete_request to the bio's
    /// end_io: the waiter's wakeup or the queue_work, not the work): 3 us.
    /// Mel Gorman's trace of seed 001 shows 7 us from the completion
    /// softirq on an idle CPU to the kworker it woke running, which also
    /// holds the idle exit and the switch (docs/notes/seed-001-research.md
    /// §2.3).
    pub blk_complete_ns: u64,
    /// CPU time of one vmstat_update run (refresh_cpu_vm_stats folding a
    /// few dozen per-CPU counters): 5 us. Order of magnitude only, not
    /// from a measurement; it matters little, the wakeup itself does.
    pub vmstat_update_ns: u64,
    // ------------------------------------------------------------ mm/
    // Per-page costs of the read path and of reclaim (mm/). Their sizes
    // are of the right order for a 2 GHz Skylake-SP; their values are
    // calibrated on P3's Tests #2 and #3 (no page replacement; one kswapd
    // per node), and Test #4 and the shadow-entry tables follow from them
    // (docs/notes/seed-003-calibration.md).
    /// copy_to_user() of one 4 KiB page of page cache (a DRAM-cold copy at
    /// ~8 GB/s per core) with mark_page_accessed.
    pub copy_page_ns: u64,
    /// One page's way into the page cache outside the locks: the
    /// allocation from the per-CPU list, add_to_page_cache (radix tree
    /// insert, memcg charge), the bio's share and its completion
    /// (SetPageUptodate, unlock_page).
    pub pagecache_add_ns: u64,
    /// One page taken from the buddy lists under zone->lock when a CPU's
    /// per-CPU list is refilled (rmqueue_bulk: __rmqueue_smallest, the
    /// split, a cache miss on a cold struct page).
    pub zone_alloc_page_ns: u64,
    /// One page given back to the buddy lists under zone->lock when a
    /// per-CPU list is drained (free_pcppages_bulk: __free_one_page and
    /// its merges, each a miss on the buddy's struct page). The two are of
    /// the order of J. Brouer's page_bench figures for an order-0 page
    /// through the buddy allocator (~250 ns alloc + free, 2016-17), with
    /// the struct pages cold as in a machine whose memory is page cache.
    pub zone_free_page_ns: u64,
    /// One page's list work under the LRU lock (isolation, or a pagevec
    /// add): a cache miss on its struct page and the list updates.
    pub lru_page_ns: u64,
    /// shrink_page_list() for one clean, unmapped page-cache page outside
    /// the LRU lock: trylock, page_check_references, __remove_mapping
    /// (the mapping's tree lock), the free into the per-CPU list. Solved
    /// from P3's Test #3 at 10 readers, where kswapd is uncontended: 28 %
    /// of a CPU for 0.77 M pages/s per node is 365 ns a page in all
    /// (isolation, this, zone->lock's free), which leaves 150 ns.
    pub reclaim_page_ns: u64,
    /// Memory work done from a CPU of another node than the page's (a
    /// direct reclaimer shrinking a remote node, a page allocated from a
    /// remote node) costs the SLIT distance / 10 times as much: the
    /// distance is the ACPI table's relative memory latency.
    /// A contended hand-off of the LRU lock (and of zone->lock) to the next CPU (the lock's
    /// and the list heads' cache lines move): ~ a cross-core cache-line
    /// transfer on a Skylake-SP mesh (docs/LINUX-FACTS.md §9).
    pub lru_lock_handoff_ns: u64,
    /// What each further CPU spinning adds to a hand-off (its polling
    /// competes for the lock's line; Boyd-Wickizer et al. 2012).
    pub lru_lock_handoff_waiter_ns: u64,
    /// workingset_eviction(): pack and store the shadow entry of an evicted
    /// page, and the shadow node's accounting (list_lru).
    pub shadow_entry_ns: u64,
    /// The flusher's work for one dirty page written back: write_cache_pages
    /// (the tagged lookup, lock_page, clear_page_dirty_for_io,
    /// set_page_writeback), the filesystem's block mapping and bio_add_page,
    /// and the completion's end_page_writeback (mm/fs_writeback.rs).
    pub writeback_page_ns: u64,
    /// A buffered write(2)'s CPU time per 4 KiB page into a new page-cache
    /// page: the filesystem's write_begin (the page allocated and inserted,
    /// the delayed allocation's reservation), copy_from_user, write_end
    /// and set_page_dirty. 1 us: `schedlab-runner --calibrate` on this
    /// project's KVM host (ext4 on a virtio disk, Linux 6.18; 1 MiB writes
    /// into a new file below the dirty limits: 973 ns, 780-1,007 in three
    /// rounds).
    pub write_page_ns: u64,
    /// O_DIRECT per page: get_user_pages and the bio's share.
    pub dio_page_ns: u64,
    /// A first-touch fault of an anonymous page (do_anonymous_page): the
    /// exception's entry and exit, clear_page of 4 KiB (~10 GB/s), the
    /// rmap and memcg charge: ~1 us.
    pub anon_fault_ns: u64,
    /// zswap's compression of one 4 KiB page on the reclaiming CPU: LZO1X-1
    /// (zswap's default compressor through 5.x) compresses at ~700 MB/s
    /// on a ~2 GHz x86 core (lzbench), ~6 us a page.
    pub zswap_compress_ns: u64,
    /// A pipe write(2) of a few bytes that neither blocks nor wakes anyone:
    /// 350 ns; a read(2): 300 ns. Measured for this project on an AMD EPYC
    /// KVM guest with Linux 6.18 (a write then a read of 1 and of 100 bytes
    /// in one thread, 10^6 pairs: 380 / 336 ns with two vDSO clock reads
    /// each); the wakeup and the switch are modelled apart.
    pub pipe_write_ns: u64,
    pub pipe_read_ns: u64,
    /// A unix stream socket write(2) of 100 bytes (hackbench's message) and
    /// its read(2): 1 us each, measured the same way (958-1,052 ns).
    pub unix_send_ns: u64,
    pub unix_recv_ns: u64,
    /// A scenario's `fork` op: the parent's CPU time to start a thread
    /// (clone, its stack, the starting program's bookkeeping): 11 us.
    /// `exit`: all a thread that exits costs beyond its program, charged
    /// before its `exit` op (Deviation: the kernel spends part of it at the
    /// start, in ret_from_fork, and part in do_exit): 90 us. Both measured
    /// by `schedlab-runner --calibrate` on the project's KVM guest (AMD
    /// EPYC, Linux 6.18; 10.6-11.0 us and 89.5-90.8 us in three runs), so
    /// they are what the runner's own threads cost: most of `exit` is the
    /// runner reading the thread's /proc counters before it exits. The
    /// fork and exit of rt-migrate-test's and dbench's built-in threads
    /// are not charged (Deviation: they happen before the measurement).
    pub fork_ns: u64,
    pub exit_ns: u64,
    /// What the runner's main thread spends reading one task's /proc
    /// counters (schedstat, status, sched, stat) at the window's start and
    /// end, and one CPU's share of its /proc/stat and /proc/schedstat read
    /// at every interval: charged only with `measure.start = "runner"`
    /// (workload/start.rs). Defaults 50 us and 10 us: `schedlab-runner
    /// --calibrate` on the project's KVM host (Linux 6.18; 51 and 9.5 us,
    /// the task read while it spins on the other CPU). A QEMU TCG guest
    /// takes turns among its vCPUs, so there the cost grows with the busy
    /// vCPUs: 0.5 ms a task in a two-CPU guest, 6 ms in a sixteen-CPU one
    /// with every CPU busy; `validate` takes each run's own figures from
    /// the runner's report. Not limited to a tick: they are not per-switch.
    pub proc_read_task_ns: u64,
    pub proc_read_stat_ns: u64,
    /// A thread the runner starts (`measure.start = "runner"`): its own CPU
    /// time from clone to the start gate (the return from clone, glibc's
    /// start_thread, the runner's sched_setaffinity, sched_setscheduler and
    /// setpriority), charged before it sets its attributes. It decides where
    /// the next clones go: a child still starting keeps its CPU busy. 15 us
    /// by default (`schedlab-runner --calibrate` on the project's KVM host);
    /// 120-200 us in the QEMU guests, which `validate` takes from the run.
    pub thread_start_ns: u64,
}

impl Default for Costs {
    fn default() -> Self {
        Costs {
            context_switch_ns: 2_000,
            migration_smt_ns: 0,
            migration_llc_ns: 5_000,
            migration_remote_llc_ns: 50_000,
            migration_remote_node_ns: 100_000,
            wakeup_ipi_ns: 2_000,
            timer_slack_ns: 50_000,
            timer_irq_delay_ns: 0,
            timer_irq_spread_ns: 0,
            halt_poll_ns: 0,
            idle_exit_ns: 2_000,
            irq_ns: 1_000,
            blk_complete_ns: 3_000,
            vmstat_update_ns: 5_000,
            copy_page_ns: 500,
            pagecache_add_ns: 600,
            zone_alloc_page_ns: 100,
            zone_free_page_ns: 150,
            lru_page_ns: 60,
            reclaim_page_ns: 150,
            lru_lock_handoff_ns: 150,
            lru_lock_handoff_waiter_ns: 20,
            shadow_entry_ns: 150,
            writeback_page_ns: 500,
            write_page_ns: 1_000,
            dio_page_ns: 50,
            anon_fault_ns: 1_000,
            zswap_compress_ns: 6_000,
            pipe_write_ns: 350,
            pipe_read_ns: 300,
            unix_send_ns: 1_000,
            unix_recv_ns: 1_000,
            fork_ns: 11_000,
            exit_ns: 90_000,
            proc_read_task_ns: 50_000,
            proc_read_stat_ns: 10_000,
            thread_start_ns: 15_000,
        }
    }
}

/// Preemption model (Kconfig PREEMPT_NONE / VOLUNTARY / full PREEMPT /
/// 6.13's PREEMPT_LAZY), or the one a PREEMPT_DYNAMIC kernel booted with.
///
/// Deviation: the model has no preemption points inside the kernel's own
/// work, so the models differ only where the kernel's code is compiled
/// differently for a preemptible build (CONFIG_PREEMPTION): a newidle
/// balance that stops after one task. Lazy's deferral of a fair wakeup's
/// preemption to the tick or the return to user space is not modelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreemptModel {
    None,
    Voluntary,
    Full,
    Lazy,
}

/// The scaling governor (`kernel.cpufreq_governor`), with the driver the
/// version pairs it with (cpufreq/governors.rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpufreqGovernor {
    /// Every CPU requests the highest P-state (intel_pstate's or the
    /// generic performance governor).
    Performance,
    /// intel_pstate in active mode, "powersave": on a part with HWP the
    /// hardware picks the frequency; without it, the driver's own
    /// load-based algorithm (4.14–5.x) picks it every 10 ms. Under
    /// acpi-cpufreq, the generic powersave governor: the lowest P-state.
    Powersave,
    /// schedutil (on intel_pstate in passive mode, intel_cpufreq, or on
    /// acpi-cpufreq): the frequency follows the CPU's PELT utilization.
    Schedutil,
    /// ondemand (acpi-cpufreq): the busy share of each sampling period
    /// sets the next frequency; above up_threshold, the highest.
    Ondemand,
}

impl CpufreqGovernor {
    pub const NAMES: &'static str =
        "performance, powersave (intel_pstate active; the lowest P-state under acpi-cpufreq), schedutil, ondemand (acpi-cpufreq)";

    pub fn from_name(s: &str) -> Option<CpufreqGovernor> {
        match s {
            "performance" => Some(CpufreqGovernor::Performance),
            "powersave" => Some(CpufreqGovernor::Powersave),
            "schedutil" => Some(CpufreqGovernor::Schedutil),
            "ondemand" => Some(CpufreqGovernor::Ondemand),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            CpufreqGovernor::Performance => "performance",
            CpufreqGovernor::Powersave => "powersave",
            CpufreqGovernor::Schedutil => "schedutil",
            CpufreqGovernor::Ondemand => "ondemand",
        }
    }
}

/// The cpufreq driver (`kernel.cpufreq_driver`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpufreqDriver {
    /// intel_pstate (3.9+ on Sandy Bridge and later: the default).
    IntelPstate,
    /// acpi-cpufreq: the firmware's _PSS P-states (intel_pstate=disable,
    /// and every x86 before intel_pstate).
    AcpiCpufreq,
}

/// Everything about the kernel of one run.
#[derive(Debug, Clone)]
pub struct KernelConfig {
    pub version: KernelVersion,
    pub hz: u32,
    pub tick_ns: u64,
    /// The mechanism forms of this version (`kernel.fair` and
    /// `kernel.balancer` override the two eras).
    pub mech: Mechanisms,
    pub features: Features,
    /// Boxed: read at setup and at scaling, not per event, and a field
    /// added to it (the autogroup sysctl, 8 bytes) moved the hot fields
    /// after it and cost 1.4 % instructions per event on every bench.
    pub sysctl: Box<Tunables>,
    pub costs: Costs,
    pub preempt: PreemptModel,
    /// CONFIG_PREEMPT_DYNAMIC (`kernel.preempt_dynamic`): `preempt` is the
    /// boot-time choice of a preemptible build (PREEMPT_DYNAMIC selects
    /// PREEMPT_BUILD, hence CONFIG_PREEMPTION), as Debian's kernels are.
    pub preempt_dynamic: bool,
    /// Nice of ktask helper threads (P0 sets MAX_NICE = 19; before it, 0).
    pub ktask_helper_nice: i32,
    /// Per-CPU vmstat_update kworkers (kthread/vmstat.rs); on by default.
    pub vmstat_kworkers: bool,
    /// CONFIG_RT_GROUP_SCHED (`kernel.rt_group_sched`): from 6.12 the RT
    /// class is throttled (sched_rt_runtime_us) only with it; Debian's
    /// kernels leave it off, so the fair server alone keeps fair tasks
    /// alive beside an RT hog.
    pub rt_group_sched: bool,
    /// A CPU latency PM-QoS request held open for the whole run, ns: a
    /// process that wrote it to /dev/cpu_dma_latency (cyclictest does, 0,
    /// unless --laptop). cpuidle's governors pick no state that exits
    /// slower (0: POLL only). None: no request.
    pub cpu_dma_latency_ns: Option<u64>,
    /// tick_next_period at boot, ns: CLOCK_MONOTONIC when the boot CPU's
    /// tick device came up, where the jiffy grid (the model's time 0) lies
    /// against the period timers' grid of whole periods
    /// (SchedEnv::hrtimer_period_next). None: drawn from the seed.
    pub tick_next_period_ns: Option<u64>,
    /// The cpufreq governor (`kernel.cpufreq_governor`); None: the
    /// version's default for the machine's processor (`default_governor`).
    pub cpufreq_governor: Option<CpufreqGovernor>,
    /// The cpufreq driver (`kernel.cpufreq_driver`; default intel_pstate).
    pub cpufreq_driver: CpufreqDriver,
    /// `kernel.freq_invariance`: x86 frequency invariance forced on (the
    /// series applied to an older kernel) or off; None: on from 5.7.
    pub freq_invariance: Option<bool>,
    /// `kernel.psi`: pressure stall information (kernel/sched/psi.c, 4.20+)
    /// is kept and reported. Deviation: off unless asked for (upstream's
    /// CONFIG_PSI=y kernels keep it unless booted with psi=0), so that
    /// outputs without it stay as they were.
    pub psi: bool,
    /// The workqueues: the system ones, then `[[kernel.workqueue]]`.
    pub workqueues: Vec<crate::kernel::workqueue::WorkqueueDef>,
    /// `[kernel.vm]`: the vm sysctls (mm/).
    pub vm: crate::kernel::vm::VmConfig,
    /// The scenario has a `[kernel.vm]` table (the memory model runs).
    pub vm_given: bool,
}

impl KernelConfig {
    /// CONFIG_PREEMPTION: a full or lazy preemption model, or any boot
    /// choice of a PREEMPT_DYNAMIC build.
    #[inline]
    pub fn preemption(&self) -> bool {
        matches!(self.preempt, PreemptModel::Full | PreemptModel::Lazy) || self.preempt_dynamic
    }

    /// The governor a distribution kernel of this version runs on a
    /// processor with (`hwp`) or without hardware P-states: intel_pstate in
    /// active mode ("powersave") until 5.7; from 5.8 passive mode with
    /// schedutil where there is no HWP ("Use passive mode by default
    /// without HWP").
    /// Under acpi-cpufreq: ondemand, the governor distributions chose by
    /// default until intel_pstate took over.
    pub fn default_governor(&self, hwp: bool) -> CpufreqGovernor {
        if self.cpufreq_driver == CpufreqDriver::AcpiCpufreq {
            return self.cpufreq_governor.unwrap_or(CpufreqGovernor::Ondemand);
        }
        self.cpufreq_governor.unwrap_or(if hwp || !self.version.at_least(5, 8) {
            CpufreqGovernor::Powersave
        } else {
            CpufreqGovernor::Schedutil
        })
    }

    /// msecs_to_jiffies(): ms rounded up to whole ticks.
    pub fn msecs_to_jiffies(&self, ms: u64) -> u64 {
        (ms * self.hz as u64).div_ceil(1000)
    }

    pub fn defaults(v: KernelVersion) -> Self {
        let mech = Mechanisms::of(v);
        KernelConfig {
            version: v,
            hz: 250,
            tick_ns: 4_000_000,
            features: Features::defaults(v),
            sysctl: Box::new(Tunables::defaults(v)),
            costs: Costs::default(),
            preempt: PreemptModel::None,
            preempt_dynamic: false,
            ktask_helper_nice: 0,
            vmstat_kworkers: true,
            rt_group_sched: false,
            cpu_dma_latency_ns: None,
            tick_next_period_ns: None,
            cpufreq_governor: None,
            cpufreq_driver: CpufreqDriver::IntelPstate,
            freq_invariance: None,
            psi: false,
            workqueues: crate::kernel::workqueue::WorkqueueDef::system(),
            vm: crate::kernel::vm::VmConfig { workingset: mech.workingset, ..Default::default() },
            vm_given: false,
            mech,
        }
    }
}
