//! The kernel version chosen once into named mechanisms.
//!
//! A scenario names `kernel.version`; this table turns it into one field per
//! mechanism whose form changed between the modelled versions, so the code
//! of a mechanism asks `cfg.mech.lb_detach_shift`, never a version number,
//! and a reader greps the mechanism. Every field says which kernel change it
//! stands for and, where known, the release that brought it; "believed" marks
//! a release read off a later tree but not checked against the commit.
//!
//! Versions between the presets take the form of the newest change at or
//! below them (`KernelVersion` ordering). The sched_features live apart, in
//! `kernel/features.rs` (they are runtime switches in the kernel too), and the
//! tunables' defaults in `kernel/mod.rs`.

use super::version::KernelVersion;

/// Which fair-class pick rule the version uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FairEra {
    /// vruntime, min_vruntime, sched_latency/min_granularity (2.6.23 .. 6.5).
    Cfs,
    /// Earliest eligible virtual deadline first (6.6+).
    Eevdf,
}

/// Which load balancer the version uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BalancerEra {
    /// avg_load find_busiest_group (2.6.x .. 5.4).
    AvgLoad,
    /// Group types and migration types (5.5+, Vincent Guittot's rework).
    GroupType,
}

/// How RT tasks are balanced (docs/LINUX-FACTS.md §5.3, 5.4; seed 004).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RtBalance {
    /// 2.6.24: RT tasks weigh 2 × nice −20 in rq->load and move only through
    /// the generic balancer; try_to_wake_up places every class
    /// (`sched/rt_legacy.rs`).
    Legacy,
    /// 2.6.25: push/pull with cpupri; select_task_rq_rt moves a woken task
    /// whenever an RT task runs on its CPU, and there is no equal-priority
    /// preemption check.
    PushPull2625,
    /// 2.6.26+: select_task_rq_rt moves it only when the running RT task is
    /// pinned or not lower; check_preempt_equal_prio.
    PushPull,
}

/// Which form of the fair wakeup and fork placement runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WakeupForm {
    /// The 2.6.35 select_task_rq_fair on cpu_load[]: wake_affine with
    /// source/target_load, the 2.6.35 select_idle_sibling, find_idlest_group
    /// on avg load (`fair/wakeup_avg.rs`). Kernels before 4.16.
    V2635,
    /// wake_affine_idle/weight, wake_wide, select_idle_sibling with its
    /// idle-core/CPU/SMT scans, find_idlest_group by group type
    /// (`fair/wakeup.rs`). 4.16+ (Deviation: 4.16 .. 5.4 use the 5.5 form).
    Modern,
}

/// Which sched-domain construction the version uses (`sched/topology.rs`).
/// Versions between the listed ones take the older one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SdInit {
    /// 2.6.24/2.6.25 SD_*_INIT templates.
    Tmpl25,
    /// 2.6.35 templates (2.6.35 .. 4.15).
    Tmpl35,
    /// sd_init with cpu_load indices and smt_gain (4.16, 4.19). The indices
    /// went in 5.3 (believed; unverified) and smt_gain in 4.20.
    Init416,
    /// sd_init without indices, busy_factor 32 (5.4, 5.5, 5.7).
    Init55,
    /// sd_init with busy_factor 16, imbalance_pct 117, no SD_LOAD_BALANCE
    /// (6.1+; the changes lie between 5.7.14 and 6.1, docs/LINUX-FACTS.md §3.2, 3.3).
    Init61,
}

impl SdInit {
    /// The 2.6.x templates rather than sd_init().
    pub fn is_26(self) -> bool {
        self <= SdInit::Tmpl35
    }
}

/// How idle CPUs are balanced while their tick is stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NohzModel {
    /// 2.6.2x .. 2.6.35: one idle CPU, nohz.load_balancer, keeps its tick
    /// and balances for every tickless idle CPU (`fair/nohz_owner.rs`).
    Owner,
    /// 2.6.36+: a busy CPU kicks an idle one (the ILB) to balance on behalf
    /// of the others (`fair/nohz.rs`).
    Kick,
}

/// The mechanisms of one kernel version. Built by [`Mechanisms::of`];
/// `kernel.fair` and `kernel.balancer` in a scenario override the two eras.
#[derive(Debug, Clone, PartialEq)]
pub struct Mechanisms {
    // ------------------------------------------------------------- eras
    pub fair: FairEra,
    pub balancer: BalancerEra,
    pub rt_balance: RtBalance,
    pub wakeup: WakeupForm,
    pub sd_init: SdInit,
    pub nohz: NohzModel,
    /// The package level is named PKG (6.12; DIE before).
    pub sd_pkg_named_pkg: bool,

    // ----------------------------------------------- weights and tunables
    /// WEIGHT_IDLEPRIO and its inverse: 3 since 2.6.29 (commit
    /// cce7ade80369), 2 before.
    pub weight_idleprio: (u32, u32),
    /// sched_init_granularity() of 2.6.24 .. 2.6.32: the latency tunables
    /// scale by 1 + ilog2(all online CPUs), capped at 200 ms; from 2.6.33
    /// get_update_sysctl_factor() with sched_tunable_scaling and at most 8
    /// CPUs counted (docs/LINUX-FACTS.md §1.4).
    pub sched_init_granularity_2624: bool,
    /// sd->balance_interval starts at the domain's weight (4.16+; 1 before).
    pub balance_interval_starts_at_span: bool,
    /// hrtimer slack for fair sleepers (current->timer_slack_ns, 2.6.28).
    pub hrtimer_slack: bool,
    /// post_init_entity_util_avg() scales the new task's share of the spare
    /// capacity by its load weight rather than by weight << 10 (6.10).
    pub post_init_util_by_weight: bool,
    /// sched_idle_cpu(): a CPU running only SCHED_IDLE tasks counts as idle
    /// for the wakeup path (5.4).
    pub sched_idle_cpu: bool,

    // ------------------------------------------------------------- CFS
    /// Migrated CFS tasks are renormalized as 4.x+ does ("sched/fair: Fix
    /// min_vruntime tracking", 2016): against the min_vruntime the task held
    /// back, after the destination's update_curr(). Before (2.6.x), after
    /// update_min_vruntime() and against the destination's stale
    /// min_vruntime.
    pub cfs_renorm_fixed: bool,
    /// check_preempt_tick() also preempts once curr is a whole slice of
    /// vruntime ahead of the leftmost (2.6.35; 2.6.25 had the slice test only).
    pub check_preempt_tick_vdiff: bool,
    /// sched_slice(): a SCHED_IDLE entity among non-idle ones has a floor
    /// of sysctl_sched_idle_min_granularity (0.75 ms, unscaled), not
    /// min_granularity, under BASE_SLICE (5.15, 51ce83ed523b).
    pub sched_idle_min_granularity: bool,
    /// place_entity(): a waking SCHED_IDLE task gets min_granularity, not
    /// sched_latency, as its sleeper credit (6.1).
    pub idle_sleeper_credit_min_granularity: bool,

    // ------------------------------------------- the avg_load balancer
    /// The sched.c balancer forms of 2.6.24 and 2.6.25: group_imb above
    /// SCHED_LOAD_SCALE, the older imbalance arithmetic
    /// (calculate_imbalance_2625), SCHED_LOAD_SCALE_FUZZ and the
    /// highest-priority exception in balance_tasks, one move_tasks walk,
    /// load_balance_newidle() (`fair/balance_2625.rs`). Each changed
    /// somewhere in 2.6.26 .. 2.6.33.
    pub lb_sched_c_2625: bool,
    /// The SD_LOAD_BALANCE flag decides whether a domain balances (before
    /// 5.8, which removed it; every domain balances after).
    pub sd_load_balance_flag: bool,
    /// cpu_load[] and task loads come from PELT (3.8+) rather than from the
    /// instantaneous rq->load.weight.
    pub cpu_load_from_pelt: bool,
    /// decay_load_missed(): the cpu_load[] of a CPU whose tick resumes
    /// catches up the missed ticks as zero-load ticks (2.6.36).
    pub cpu_load_decay_missed: bool,
    /// scale_rt_power(): cpu_power shrinks with recent RT time (modelled
    /// from 2.6.35; Deviation: it dates from 2.6.31, unverified).
    pub scale_rt_power: bool,
    /// task_hot(): SCHED_IDLE tasks are never cache hot (4.16+ here).
    pub task_hot_idle_exempt: bool,
    /// A newidle balance may kick active balance (4.16+; 2.6.3x only with
    /// sched_mc_power_savings >= 2, i.e. never by default).
    pub newidle_active_balance: bool,
    /// Newidle failures count in nr_balance_failed (until 2.6.37,
    /// "Increment cache_nice_tries only on periodic lb").
    pub newidle_counts_failures: bool,
    /// idle_balance() is skipped while avg_idle < sysctl_sched_migration_cost
    /// (2.6.35; 2.6.2x had no guard).
    pub newidle_avg_idle_guard: bool,
    /// sched_balance_newidle()'s guard is the lowest domain's
    /// max_newidle_lb_cost, not sysctl_sched_migration_cost ("sched/fair:
    /// Remove sysctl_sched_migration_cost condition", 5.16).
    pub newidle_guard_lb_cost: bool,
    /// idle_balance() is skipped when no runqueue is overloaded (4.16).
    pub newidle_overload_guard: bool,

    // ------------------------------------------ the group-type balancer
    /// group_classify() also reads the runnable average (5.7).
    pub lb_group_runnable: bool,
    /// adjust_numa_imbalance(): a small NUMA imbalance may remain (5.7):
    /// calculate_imbalance() leaves it when the busiest group runs at most
    /// two tasks, and find_idlest_group() keeps a forked task on its node
    /// while the node has an idle CPU.
    pub lb_numa_imbalance: bool,
    /// The imb_numa_nr form of that rule (5.18, "applied consistently" in
    /// 6.0): the imbalance stays when the destination would run at most
    /// sd->imb_numa_nr tasks and the unhalved imbalance is at most
    /// NUMA_IMBALANCE_MIN; calculate_imbalance() halves after the check.
    pub lb_numa_imb_nr: bool,
    /// find_busiest_queue() skips a CPU with one task when pulling
    /// utilisation (6.x; believed 5.10, unverified).
    pub lb_util_skip_single_task: bool,
    /// can_migrate_task() refuses per-CPU kthreads (5.10).
    pub lb_skip_per_cpu_kthread: bool,
    /// detach_tasks() relaxes a heavy task's test by shifting its load with
    /// the failure count (5.10); 5.5 skipped tasks heavier than twice the
    /// imbalance until cache_nice_tries failures.
    pub lb_detach_shift: bool,
    /// detach_tasks() relaxes migrate_util the same way, shifting a task's
    /// util by the failures ("sched/fair: Use all little CPUs for CPU-bound
    /// workloads", Pierre Gondois, v6.8-rc1, backported to 6.1.y and 6.6.y
    /// stable, whose current releases the 6.1 and 6.6 presets stand for).
    /// Without it an idle CPU can never take one of two hogs whose util
    /// exceeds its spare capacity (issue 19's idle CPU).
    pub lb_util_shift: bool,
    /// calculate_imbalance(): a local group with spare capacity fills it
    /// from an overloaded busiest one by utilisation only across LLCs;
    /// within an LLC it evens out the task counts ("sched/fair: Ensure tasks
    /// spreading in LLC during LB", 16b0a7a1a0af, v5.10-rc4).
    pub lb_llc_spread_tasks: bool,
    /// update_pick_idlest(): between groups with spare capacity and as many
    /// idle CPUs, the slow path (fork, exec) takes the one with the lower
    /// utilisation ("sched/fair: update_pick_idlest() Select group with
    /// lowest group_util when idle_cpus are equal", Peter Puhov,
    /// 3edecfef0285, v5.9-rc1). Before it the first such group won, so
    /// threads created in a tight loop that went to sleep at once (a start
    /// gate) all landed on the CPU that had just gone idle again.
    pub pick_idlest_group_util: bool,
    /// sibling_imbalance() (6.6, "sched/fair: Implement prefer sibling
    /// imbalance calculation between asymmetric groups"): the task-count
    /// imbalance between single-CPU or prefer-sibling groups is 0 when the
    /// balancing CPU is not idle.
    pub lb_sibling_imbalance: bool,
    /// task_hot(): no task is cache hot between SMT siblings (6.12).
    pub task_hot_smt_exempt: bool,
    /// need_active_balance(): after enough failures only a migrate_task
    /// imbalance kicks the stopper ("sched/fair: Reduce cases for active
    /// balance", believed 5.12, unverified; docs/LINUX-FACTS.md §3.9).
    pub alb_migrate_task_only: bool,
    /// get_sd_balance_interval(): a busy CPU's interval is one jiffy shorter
    /// (6.1).
    pub balance_interval_busy_minus_one: bool,

    // ------------------------------------------------ the wakeup path
    /// wake_affine_idle() returns prev when prev is idle (6.0).
    pub wa_idle_prev: bool,
    /// KTHREAD_STACKING applies only when a task (not an interrupt) wakes:
    /// in_task(), 8b4e74ccb582 "sched/fair: Fix detection of per-CPU
    /// kthreads waking a task", v5.17-rc1 (docs/notes/seed-001-research.md §0).
    pub kthread_stacking_in_task: bool,
    /// recent_used_cpu as 89aafd67f28c "sched/fair: Use prev instead of new
    /// target as recent_used_cpu" (v5.15-rc1) left it: select_idle_sibling()
    /// sets p->recent_used_cpu = prev on every pass that reaches the
    /// recent-CPU test, and select_task_rq_fair() no longer sets the
    /// waker's. Before it the wakee's was set only when the test chose it,
    /// and every affine wakeup set the waker's to the waking CPU.
    pub recent_used_cpu_prev: bool,
    /// wake_affine_idle(): a sync wakeup's "the waker is alone" test does
    /// not count sched_delayed tasks (aa3ee4f0b754 "sched/fair: Fixup
    /// wake_up_sync() vs DELAYED_DEQUEUE", mainline 6.16, in 6.12.37
    /// stable; docs/notes/linux-6.13-6.18-sched-changes.md §3).
    pub sync_ignores_delayed: bool,

    // ------------------------------------------------------------ EEVDF
    /// A sched_delayed task is not runnable for PELT: se_runnable() is 0
    /// and a cfs_rq's runnable count is h_nr_running - h_nr_delayed
    /// ("sched/eevdf: More PELT vs DELAYED_DEQUEUE", 6.13, in 6.12.7
    /// stable). 6.12.0 .. 6.12.6 count it as runnable.
    pub delayed_not_runnable: bool,
    /// yield_task_fair() forfeits the rest of the request: an eligible
    /// task's vruntime jumps to its deadline and it gets a new one
    /// (79104becf42b "sched/fair: Forfeit vruntime on yield", mainline 6.19,
    /// in 6.12.63 and 6.18.2 stable); 6.6 .. 6.18.1 push the deadline one
    /// slice on.
    pub yield_forfeits_vruntime: bool,
    /// update_entity_lag() clamps the lag to the virtual time of the
    /// largest slice on the cfs_rq plus one tick, not of max(2 slices, one
    /// tick) (6e3c0a4e1ad1 "sched/fair: Fix lag clamp", mainline 7.0, in
    /// 6.18.17 stable; not in 6.12.y): 4.0 ms -> 5.4 ms at HZ 250 on 2 CPUs.
    pub lag_clamp_max_slice_plus_tick: bool,
    /// check_preempt_wakeup_fair(): a WF_FORK wakee, or one still
    /// sched_delayed (a delayed task the balancer moved), returns before
    /// the preemption pick, and that pick (pick_next_entity) completes the
    /// dequeue of a sched_delayed task it lands on and picks again
    /// (e837456fdca8 "sched/fair: Reimplement NEXT_BUDDY to align with
    /// EEVDF goals" in its final form, NEXT_BUDDY off and no forced
    /// preemption: mainline 6.19, in 6.18.33 stable; not in 6.12.y).
    pub fork_wakeup_no_preempt: bool,

    // ------------------------------------ the group-type balancer, 6.14
    /// The balancer counts runnable fair tasks, cfs_rq->h_nr_runnable, where
    /// it counted queued ones: sched_delayed tasks no longer make a CPU or
    /// group look busy in update_sg_lb_stats (sum_h_nr_running),
    /// update_sg_wakeup_stats, sched_balance_find_src_rq and
    /// need_active_balance (1a49104496d3 "sched/fair: Use the new
    /// cfs_rq.h_nr_runnable", 6.14; not in 6.12.y).
    pub lb_counts_runnable_only: bool,
    /// can_migrate_task() refuses a sched_delayed task unless the imbalance
    /// is migrate_load (61b82dfb6b7e "sched/fair: Do not try to migrate
    /// delayed dequeue task", 6.14; not in 6.12.y).
    pub lb_skip_delayed: bool,
    /// can_migrate_task() refuses a task that is not eligible on its source
    /// cfs_rq while the domain has no balance failure, PLACE_LAG is on and
    /// the destination cfs_rq is not empty (873199d27bb2 "sched/fair:
    /// Prioritize migrating eligible tasks in sched_balance_rq()", 6.14;
    /// not in 6.12.y).
    pub lb_eligible_first: bool,

    // ---------------------------------------------------- CFS bandwidth
    /// A cfs_rq's slice of a group's quota expires with the period it was
    /// drawn in (runtime_expires, expires_seq); de53fd7aedb1 "sched/fair:
    /// Fix low cpu usage with high throttling by removing expiration of
    /// cpu-local slices" (5.4, and 4.19.84 stable) removed it.
    /// Deviation: 4.15 .. 4.17 are given 4.18's expires_seq test
    /// (512ac999d275 "sched/fair: Fix bandwidth timer clock drift
    /// condition"), which made slices expire as meant; before it they
    /// rarely did.
    pub cfs_runtime_expires: bool,
    /// throttle_cfs_rq() first tries to take runtime from the pool
    /// (26a8b12747c9 "sched/fair: Fix race between runtime distribution and
    /// assignment", 5.7).
    pub cfs_throttle_assign: bool,
    /// cpu.max.burst: the refill adds the quota to what is left, up to
    /// quota + burst, and runs even in an idle period (f4183717b370, 5.14).
    pub cfs_burst: bool,
    /// cpu.stat's nr_bursts and burst_usec (bcb1704a1ed2, 5.16).
    pub cfs_burst_stats: bool,
    /// distribute_cfs_runtime() unthrottles the cfs_rqs of other CPUs by
    /// an IPI to each (unthrottle_cfs_rq_async, __cfsb_csd_unthrottle;
    /// 8ad075c2eb1f "sched: Async unthrottling for cfs bandwidth", 6.3);
    /// before, the timer's CPU unthrottles every one itself.
    pub cfs_async_unthrottle: bool,
    /// The task based throttle model (e1fad12dcb66 "sched/fair: Switch to
    /// task based throttle model" and its series, 6.18): a throttled
    /// cfs_rq stays queued; each task picked below it is dequeued onto the
    /// cfs_rq's limbo list as it returns to user space, and unthrottle
    /// enqueues them again one by one; the PELT clock stops only once the
    /// cfs_rq is empty; the balancer checks only the destination; the
    /// throttled time starts with the first parked task.
    pub cfs_task_throttle: bool,

    // ------------------------------------------------------------- RT
    /// rto_next_cpu(): the RT_PUSH_IPI chain never takes the CPU it runs
    /// on as its next hop (94894c9c477e "sched/rt: Skip currently executing
    /// CPU in rto_next_cpu()", mainline 7.0, in 6.12.75 and 6.18.14 stable).
    pub rto_skip_self: bool,

    // ------------------------------------------------------- deadline
    /// SCHED_DEADLINE exists (3.14, "sched: Add SCHED_DEADLINE"); before
    /// it the policy is refused.
    pub sched_deadline: bool,
    /// __checkparam_dl() bounds the period by the sysctls
    /// sched_deadline_period_min_us (100) and _max_us (2^22): "sched/deadline:
    /// Impose global limits on sched_attr::sched_period". Absent from 4.16,
    /// present in 6.1; the model takes it from 5.4 (the release that
    /// brought it between them, 5.1 or 5.2, is UNVERIFIED here).
    pub dl_period_limits: bool,
    /// A CPU with queued deadline tasks sits at CPUPRI_HIGHER in the RT
    /// class's cpupri, above every RT level, so RT pushes do not target it
    /// (absent from 4.16, present in 6.1; the model takes it from 5.11,
    /// UNVERIFIED).
    pub dl_cpupri_higher: bool,
    /// A constrained task (deadline < period) activated after its deadline
    /// but before its next period is throttled until that period
    /// (dl_check_constrained_dl, 4.11: "sched/deadline: Throttle a
    /// constrained deadline task activated after the deadline").
    pub dl_constrained_throttle: bool,
    /// A constrained task woken before its deadline with too much budget
    /// keeps its deadline with the budget its density allows (the revised
    /// CBS wakeup rule, 4.13: "sched/deadline: Use the revised wakeup rule
    /// for suspending constrained dl tasks"); before, a new instance.
    pub dl_revised_wakeup: bool,
    /// GRUB (4.13, Luca Abeni's series: "sched/deadline: Implement GRUB
    /// accounting" .. "Reclaim bandwidth not used by dl tasks"): each
    /// runqueue's active (running_bw) and total (this_bw) deadline
    /// bandwidth, the inactive timer that drops a blocked task's bandwidth
    /// at its 0-lag time, and SCHED_FLAG_RECLAIM, whose tasks' budgets
    /// deplete at the rate of the active bandwidth, not of time.
    pub dl_grub: bool,
    /// GRUB's equation with Umax applied to both terms (6.5, 6a9d623aad89
    /// "sched/deadline: Fix bandwidth reclaim equation in GRUB"): a lone
    /// reclaiming task reaches Umax (95 %) whatever its own bandwidth;
    /// before, 1 - Uextra, less for smaller reservations.
    pub dl_grub_max_bw: bool,
    /// SCHED_FLAG_DL_OVERRUN (4.16, "sched/deadline: Add
    /// SCHED_FLAG_DL_OVERRUN"): SIGXCPU when a task overruns its runtime.
    pub dl_overrun: bool,
    /// The fair servers' bandwidth leaks out of extra_bw at boot (6.12 ..
    /// 6.16): each server is applied at its CPU's first fair enqueue while
    /// the CPUs are still coming up, then again as sched_init_smp()
    /// attaches each runqueue to the root domain (__dl_server_attach_root),
    /// and dl_clear_root_domain() never resets extra_bw. Fixed in 6.17 by
    /// 9f239df55546 "sched/deadline: Initialize dl_servers after SMP" and
    /// fcc9276c4d33 "sched/deadline: Reset extra_bw to max_bw when
    /// clearing root domains" (6.15.y, 6.16.y stable) [deadline.c,
    /// topology.c @6.12.117].
    pub dl_server_boot_leak: bool,
    /// The fair server (6.12, "sched/fair: Fair server interface" and the
    /// dl_server series with its deferred form): a deadline entity per CPU
    /// that runs the fair class for 50 ms a second when it is starved; RT
    /// bandwidth control is left to CONFIG_RT_GROUP_SCHED ("sched/rt:
    /// Remove default bandwidth control"; read in 6.12.117).
    pub fair_server: bool,
    /// A deadline runqueue is overloaded (in rd->dlo_mask: it pushes and
    /// is pulled from) while it has a pushable task, 6.7 (5fe7765997b1
    /// "sched/deadline: Make dl_rq->pushable_dl_tasks update drive
    /// dl_rq->overloaded"); before, while it has two or more deadline
    /// entities one of which may migrate, and push_dl_task() does nothing
    /// otherwise [deadline.c @4.16, @6.1, @6.12].
    pub dl_overload_pushable: bool,
    /// The same for the RT class (612f769edd06 "sched/rt: Make
    /// rt_rq->pushable_tasks updates drive rto_mask", 6.7): an rt_rq is
    /// overloaded while it has a pushable task; before, while it has two
    /// or more RT tasks one of which may migrate [rt.c @6.1, @6.12].
    pub rt_overload_pushable: bool,

    // -------------------------------------------------- kernel threads
    /// Concurrency-managed workqueues (2.6.36): per-CPU "kworker/N:M" at
    /// nice 0; before them "events/N" at nice −5.
    pub cmwq: bool,

    /// kthreadd starts every kernel thread at nice −5 (2.6.22 .. 2.6.31;
    /// docs/LINUX-FACTS.md §7.3): kswapd among them.
    pub kthreadd_nice_minus_5: bool,

    // ------------------------------------------------------------- mm
    /// PAGEVEC_SIZE, the pages a pagevec (6.12: a folio batch) carries:
    /// 14 until 2.6.25, 15 after, 31 from 6.12.
    pub pagevec_size: u64,
    /// Shadow entries and workingset refault detection (3.15).
    pub workingset: bool,
    /// zswap, the compressed swap cache (3.11).
    pub zswap: bool,
    /// vm.watermark_scale_factor: the watermark gap grows with the zone
    /// (4.6); before, low = min + min/4 and high = min + min/2.
    pub watermark_scale_factor: bool,
    /// The largest vm.watermark_scale_factor accepted: 1000, 3000 from 6.12.
    pub watermark_scale_factor_max: u64,
    /// calculate_min_free_kbytes()'s cap, KiB: 65536, 262144 from 5.7 (the
    /// cap moved between 5.5-rc5 and 5.7.14; 5.6 is taken as the old cap).
    pub min_free_kbytes_cap: u64,
    /// zone_batchsize()'s cap, KiB: 512, 1024 from 4.19 ("mm, page_alloc:
    /// double zone's batchsize").
    pub zone_batch_cap_kb: u64,
    /// inactive_list_is_low() sizes the inactive file list by
    /// int_sqrt(10 × GiB) too (4.10, "mm: vmscan: reduce size of inactive
    /// file list"); before, 1:1.
    pub inactive_file_ratio: bool,
    /// ...and drops the ratio to 0 while refaults activate pages (4.12,
    /// "mm: vmscan: fix IO/refault regression in cache workingset
    /// transition").
    pub inactive_refault_reset: bool,
    /// A refault is compared with the anonymous lists too when there is
    /// swap (5.9, "mm: workingset: age nonresident information alongside
    /// anonymous pages").
    pub workingset_anon: bool,
    /// pcp->high is the zone's low watermark over the node's CPUs (5.14,
    /// zone_highsize()), not 6 × batch.
    pub pcp_high_from_low_wmark: bool,
    /// throttle_direct_reclaim() on pfmemalloc_wait (3.6).
    pub throttle_direct_reclaim: bool,
    /// too_many_isolated() lets a __GFP_IO|__GFP_FS reclaimer isolate only
    /// an eighth of the inactive list (3.8, "mm/vmscan.c: avoid possible
    /// deadlock caused by too_many_isolated()").
    pub too_many_isolated_iofs: bool,
    /// How a direct reclaimer with too many pages isolated waits.
    pub isolated_throttle: IsolatedThrottle,
    /// How drain_all_pages() empties the per-CPU page lists.
    pub drain_all_pages: DrainAllPages,

    // ------------------------------------------------------- tracing
    /// sched_switch's prev_state as 4.14+ prints it (Perfetto's reader).
    pub trace_prev_state_4_14: bool,
}

/// shrink_inactive_list()'s wait while too_many_isolated().
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IsolatedThrottle {
    /// congestion_wait(BLK_RW_ASYNC, HZ/10) in a loop until the check
    /// passes (in iowait: io_schedule_timeout).
    CongestionWait,
    /// msleep(100) once, then give up the batch if still too many (4.14,
    /// "mm, vmscan: do not loop on too_many_isolated for ever").
    Msleep,
    /// reclaim_throttle(VMSCAN_THROTTLE_ISOLATED): HZ/50 on the node's
    /// waitqueue, woken by the next reclaimer that passes the check, then
    /// give up the batch if still too many (5.16).
    ReclaimThrottle,
}

/// drain_all_pages() after a direct reclaim whose allocation still failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DrainAllPages {
    /// on_each_cpu_mask(): an IPI to every CPU with pages on its lists,
    /// waiting for the handlers; callers may drain concurrently.
    Ipi,
    /// A work on every such CPU's mm_percpu_wq, flushed; one drainer at a
    /// time (pcpu_drain_mutex, trylock) (4.11: "mm, page_alloc: drain
    /// per-cpu pages from workqueue context").
    Workqueue,
    /// The caller drains each CPU's lists itself under their spinlocks
    /// ("mm/page_alloc: remotely drain per-cpu lists"; 6.0 unverified, 6.1
    /// has it: the modelled versions are 5.7 and 6.1 on either side).
    Remote,
}

impl Mechanisms {
    /// The mechanisms of version `v`.
    pub fn of(v: KernelVersion) -> Mechanisms {
        let at = |major, minor| v.at_least(major, minor);
        let at26 = |x| v.at_least_26(x);
        // A stable backport: in `major.minor.patch` and every later release
        // (a bare "6.12" is the newest stable and has them all).
        let stable = |major, minor, patch| v >= KernelVersion::new(major, minor, patch);
        // A fix from its mainline release on, and in the stable series
        // listed from the release that got the backport (a bare "6.18" is
        // its newest stable and has them all). A series not listed lacks
        // it: it ended before the backport, or its stable tree was not read
        // (6.13 .. 6.17; docs/notes/linux-6.13-6.18-sched-changes.md §0).
        let backport = |mainline: (u16, u16), series: &[(u16, u16, u16)]| {
            at(mainline.0, mainline.1) || series.iter().any(|&(a, b, p)| (v.major, v.minor) == (a, b) && v.patch >= p)
        };
        let sd_init = if !at26(35) {
            SdInit::Tmpl25
        } else if !at(4, 16) {
            SdInit::Tmpl35
        } else if !at(5, 4) {
            SdInit::Init416
        } else if !at(6, 1) {
            SdInit::Init55
        } else {
            SdInit::Init61
        };
        Mechanisms {
            fair: if at(6, 6) { FairEra::Eevdf } else { FairEra::Cfs },
            balancer: if at(5, 5) { BalancerEra::GroupType } else { BalancerEra::AvgLoad },
            rt_balance: if !at26(25) {
                RtBalance::Legacy
            } else if !at26(26) {
                RtBalance::PushPull2625
            } else {
                RtBalance::PushPull
            },
            wakeup: if at(4, 16) { WakeupForm::Modern } else { WakeupForm::V2635 },
            sd_init,
            nohz: if at26(36) { NohzModel::Kick } else { NohzModel::Owner },
            sd_pkg_named_pkg: at(6, 12),
            weight_idleprio: if at26(29) { (3, 1_431_655_765) } else { (2, 2_147_483_648) },
            sched_init_granularity_2624: !at26(33),
            balance_interval_starts_at_span: at(4, 16),
            hrtimer_slack: at26(28),
            post_init_util_by_weight: at(6, 10),
            sched_idle_cpu: at(5, 4),
            cfs_renorm_fixed: at(4, 16),
            check_preempt_tick_vdiff: at26(35),
            sched_idle_min_granularity: at(5, 15),
            idle_sleeper_credit_min_granularity: at(6, 1),
            lb_sched_c_2625: !at26(26),
            sd_load_balance_flag: !at(5, 8),
            cpu_load_from_pelt: at(3, 8),
            cpu_load_decay_missed: at26(36),
            scale_rt_power: at26(35),
            task_hot_idle_exempt: at(4, 16),
            newidle_active_balance: at(4, 16),
            newidle_counts_failures: !at26(37),
            newidle_avg_idle_guard: at26(35),
            newidle_guard_lb_cost: at(5, 16),
            newidle_overload_guard: at(4, 16),
            lb_group_runnable: at(5, 7),
            lb_numa_imbalance: at(5, 7),
            lb_numa_imb_nr: at(6, 0),
            lb_util_skip_single_task: at(5, 10),
            lb_skip_per_cpu_kthread: at(5, 10),
            lb_detach_shift: at(5, 10),
            lb_util_shift: at(6, 1),
            lb_llc_spread_tasks: at(5, 10),
            lb_sibling_imbalance: at(6, 6),
            pick_idlest_group_util: at(5, 9),
            task_hot_smt_exempt: at(6, 12),
            alb_migrate_task_only: at(5, 12),
            balance_interval_busy_minus_one: at(6, 1),
            wa_idle_prev: at(6, 0),
            kthread_stacking_in_task: at(5, 17),
            recent_used_cpu_prev: at(5, 15),
            sync_ignores_delayed: stable(6, 12, 37),
            delayed_not_runnable: stable(6, 12, 7),
            yield_forfeits_vruntime: backport((6, 19), &[(6, 12, 63), (6, 18, 2)]),
            lag_clamp_max_slice_plus_tick: backport((7, 0), &[(6, 18, 17)]),
            fork_wakeup_no_preempt: backport((6, 19), &[(6, 18, 33)]),
            lb_counts_runnable_only: at(6, 14),
            lb_skip_delayed: at(6, 14),
            lb_eligible_first: at(6, 14),
            cfs_runtime_expires: !backport((5, 4), &[(4, 19, 84)]),
            cfs_throttle_assign: at(5, 7),
            cfs_burst: at(5, 14),
            cfs_burst_stats: at(5, 16),
            cfs_async_unthrottle: at(6, 3),
            cfs_task_throttle: at(6, 18),
            rto_skip_self: backport((7, 0), &[(6, 12, 75), (6, 18, 14)]),
            sched_deadline: at(3, 14),
            dl_period_limits: at(5, 4),
            dl_cpupri_higher: at(5, 11),
            dl_constrained_throttle: at(4, 11),
            dl_revised_wakeup: at(4, 13),
            dl_grub: at(4, 13),
            dl_grub_max_bw: at(6, 5),
            dl_overrun: at(4, 16),
            dl_server_boot_leak: at(6, 12) && !at(6, 17),
            fair_server: at(6, 12),
            dl_overload_pushable: at(6, 7),
            rt_overload_pushable: at(6, 7),
            cmwq: at26(36),
            kthreadd_nice_minus_5: at26(22) && !at26(32),
            pagevec_size: if at(6, 12) {
                31
            } else if at(2, 6) && !at26(26) {
                14
            } else {
                15
            },
            workingset: at(3, 15),
            zswap: at(3, 11),
            watermark_scale_factor: at(4, 6),
            watermark_scale_factor_max: if at(6, 12) { 3000 } else { 1000 },
            min_free_kbytes_cap: if at(5, 7) { 262_144 } else { 65_536 },
            zone_batch_cap_kb: if at(4, 19) { 1024 } else { 512 },
            inactive_file_ratio: at(4, 10),
            inactive_refault_reset: at(4, 12),
            workingset_anon: at(5, 9),
            pcp_high_from_low_wmark: at(5, 14),
            throttle_direct_reclaim: at(3, 6),
            too_many_isolated_iofs: at(3, 8),
            isolated_throttle: if at(5, 16) {
                IsolatedThrottle::ReclaimThrottle
            } else if at(4, 14) {
                IsolatedThrottle::Msleep
            } else {
                IsolatedThrottle::CongestionWait
            },
            drain_all_pages: if at(6, 0) {
                DrainAllPages::Remote
            } else if at(4, 11) {
                DrainAllPages::Workqueue
            } else {
                DrainAllPages::Ipi
            },
            trace_prev_state_4_14: at(4, 14),
        }
    }

    /// RT tasks are balanced by push/pull (2.6.25+).
    #[inline]
    pub fn rt_push_pull(&self) -> bool {
        self.rt_balance != RtBalance::Legacy
    }

    /// The fair class runs the avg_load balancer.
    #[inline]
    pub fn avg_load(&self) -> bool {
        self.balancer == BalancerEra::AvgLoad
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(s: &str) -> Mechanisms {
        Mechanisms::of(KernelVersion::parse(s).unwrap())
    }

    #[test]
    fn presets_pick_their_eras() {
        let m = of("2.6.24");
        assert_eq!(
            (m.rt_balance, m.balancer, m.wakeup, m.nohz),
            (RtBalance::Legacy, BalancerEra::AvgLoad, WakeupForm::V2635, NohzModel::Owner)
        );
        assert!(m.lb_sched_c_2625 && !m.hrtimer_slack && m.weight_idleprio.0 == 2);
        let m = of("2.6.35");
        assert_eq!((m.rt_balance, m.sd_init), (RtBalance::PushPull, SdInit::Tmpl35));
        assert!(!m.lb_sched_c_2625 && m.weight_idleprio.0 == 3 && m.nohz == NohzModel::Owner);
        let m = of("5.5");
        assert_eq!((m.balancer, m.fair, m.wakeup), (BalancerEra::GroupType, FairEra::Cfs, WakeupForm::Modern));
        assert!(!m.lb_detach_shift && m.sd_load_balance_flag);
        let m = of("6.12");
        assert_eq!(m.fair, FairEra::Eevdf);
        assert!(m.sd_pkg_named_pkg && m.task_hot_smt_exempt && m.recent_used_cpu_prev && m.post_init_util_by_weight);
    }

    #[test]
    fn the_6_18_line_gates_its_backports_by_release() {
        let lb = |m: &Mechanisms| (m.lb_counts_runnable_only, m.lb_skip_delayed, m.lb_eligible_first);
        // 6.12 (its newest stable): none of 6.14's balancer, two backports.
        let m = of("6.12");
        assert_eq!(lb(&m), (false, false, false));
        assert!(m.yield_forfeits_vruntime && m.rto_skip_self);
        assert!(!m.lag_clamp_max_slice_plus_tick && !m.fork_wakeup_no_preempt);
        assert!(!of("6.12.62").yield_forfeits_vruntime && !of("6.12.74").rto_skip_self);
        // 6.18.0 has 6.14's balancer and none of the 6.18.y backports.
        let m = of("6.18.0");
        assert_eq!(lb(&m), (true, true, true));
        assert!(!m.yield_forfeits_vruntime && !m.rto_skip_self);
        assert!(!m.lag_clamp_max_slice_plus_tick && !m.fork_wakeup_no_preempt);
        // Each from the release that got it.
        let gate = |f: fn(&Mechanisms) -> bool, first: &str, before: &str| f(&of(first)) && !f(&of(before));
        assert!(gate(|m| m.yield_forfeits_vruntime, "6.18.2", "6.18.1"));
        assert!(gate(|m| m.rto_skip_self, "6.18.14", "6.18.13"));
        assert!(gate(|m| m.lag_clamp_max_slice_plus_tick, "6.18.17", "6.18.16"));
        assert!(gate(|m| m.fork_wakeup_no_preempt, "6.18.33", "6.18.32"));
        // A bare "6.18" is its newest stable: all of them.
        let m = of("6.18");
        assert_eq!(lb(&m), (true, true, true));
        assert!(m.yield_forfeits_vruntime && m.rto_skip_self && m.lag_clamp_max_slice_plus_tick);
        assert!(m.fork_wakeup_no_preempt && m.fair == FairEra::Eevdf);
        // Between: 6.13 has none of it, 6.15 the balancer but no backport
        // (its stable tree was not read); 6.19 the 6.19 mainline fixes.
        assert_eq!(lb(&of("6.13")), (false, false, false));
        assert!(lb(&of("6.15")) == (true, true, true) && !of("6.15").yield_forfeits_vruntime);
        let m = of("6.19");
        assert!(m.yield_forfeits_vruntime && m.fork_wakeup_no_preempt && !m.lag_clamp_max_slice_plus_tick);
    }
}
