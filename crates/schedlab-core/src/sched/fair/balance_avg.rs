//! Models kernel/sched_fair.c load balancing of 2.6.35 (avg_load era):
//! rq->cpu_load[] (update_cpu_load), source_load/target_load with LB_BIAS,
//! cpu_power, find_busiest_group with its sd_lb_stats/sg_lb_stats helpers,
//! calculate_imbalance and fix_small_imbalance, find_busiest_queue,
//! move_tasks/balance_tasks/can_migrate_task, load_balance with its failure
//! counting, active balance through the stopper (the SCHED_FIFO-99
//! "migration/N" cpu_stop thread of 2.6.35), rebalance_domains, idle_balance
//! and the NOHZ "owner" model; plus the era's fork placement
//! (find_idlest_group/find_idlest_cpu) and wakeup placement (wake_affine,
//! select_idle_sibling). LINUX-FACTS 2.3, 3.3-3.10, 4.2, 4.3.
//!
//! Seed 002 (Nikhil Rao, 2010, feature `SD_IDLE_LOAD_BALANCE`, default off):
//! a second balancing pass for SCHED_IDLE tasks. Each piece is marked with
//! the patch (1/6 .. 6/6) it models. The seed holds the cover letter and the
//! patch list only, not the code; where the letter is silent the choice is
//! named in a comment.
//!
//! Version differences kept (cheap ones, LINUX-FACTS 2.3, 3.3, 3.5, 3.6):
//! cpu_load[] from instantaneous rq load before 3.8 and from PELT after;
//! no LB_BIAS feature before 2.6.35 (the bias is always on); no avg_idle guard
//! on newidle before 2.6.35; newidle failures count in nr_balance_failed
//! from 2.6.32 (load_balance_newidle folded in) to 2.6.36; the NOHZ owner
//! model before 2.6.36 and the kick model of fair/balance.rs after; the
//! cpu_load[] catch-up after a tickless stretch (decay_load_missed) from
//! 2.6.36. 2.6.24 and 2.6.25 run their own forms from sched.c (`lb_2625`):
//! group_imb above SCHED_LOAD_SCALE, the older imbalance arithmetic
//! (calculate_imbalance_2625), SCHED_LOAD_SCALE_FUZZ and the
//! highest-priority exception in balance_tasks, one walk of move_tasks, and
//! load_balance_newidle(), whose failures count only in schedstat.
//!
//! Deviations: 4.16 .. 5.4 run this 2.6.35 balancer with the differences above
//! only (no LBF_DST_PINNED/SOME_PINNED retries, no group_imbalance flag, no
//! misfit/asym cases); 2.6.24/2.6.25 use the 2.6.35 wakeup placement (their
//! wake_idle/SD_WAKE_IDLE, avg_overlap and passive balancing are not
//! modelled) and give each SMT sibling the full SCHED_LOAD_SCALE (2.6.35's
//! smt_gain exists only from 2.6.30). Power-savings balancing
//! (sched_mc/smt_power_savings) is off, as by default, and not modelled.

use crate::cpumask::CpuMask;
use crate::engine::event::Ev;
use crate::engine::sim::Sim;
use crate::engine::Instant;
use crate::kernel::{BalancerEra, NohzModel, PreemptModel};
use crate::sched::features::Feature;
use crate::sched::prio::Policy;
use crate::sched::prio::MAX_PRIO;
use crate::sched::sched::CpuIdleType;
use crate::sched::task::TaskId;
use crate::sched::topology::{SD_BALANCE_NEWIDLE, SD_LOAD_BALANCE, SD_PREFER_SIBLING, SD_SHARE_CPUPOWER};

/// SCHED_LOAD_SCALE (= NICE_0_LOAD, and the unit of cpu_power).
pub const SCHED_LOAD_SCALE: u64 = 1024;
/// CPU_LOAD_IDX_MAX [sched.c @2.6.35].
pub const CPU_LOAD_IDX_MAX: usize = 5;
/// MAX_PINNED_INTERVAL (ms).
const MAX_PINNED_INTERVAL: u64 = 512;
/// sched_avg_period(): sysctl_sched_time_avg (1000 ms) / 2 [sched.c @2.6.35].
pub const SCHED_AVG_PERIOD_NS: u64 = 500_000_000;

// ---------------------------------------------------------------------------
// Pure arithmetic (unit-tested below)
// ---------------------------------------------------------------------------

/// One update_cpu_load() step [sched.c @2.6.35]:
/// `cpu_load[i] = (old·(2^i − 1) + new) / 2^i`, rounding up while the load
/// rises ("prevents us from getting stuck on 9 if the load is 10").
pub fn cpu_load_tick(cpu_load: &mut [u64; CPU_LOAD_IDX_MAX], this_load: u64) {
    for (i, slot) in cpu_load.iter_mut().enumerate() {
        let scale = 1u64 << i;
        let old = *slot;
        let new = if this_load > old { this_load + scale - 1 } else { this_load };
        *slot = (old * (scale - 1) + new) >> i;
    }
}

/// struct sd_lb_stats [sched_fair.c @2.6.35], without the power-savings part.
/// Group powers are cached here (`sds->this->cpu_power`, `sds->busiest->cpu_power`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SdLbStats {
    pub busiest: Option<usize>,
    pub total_load: u64,
    pub total_pwr: u64,
    pub avg_load: u64,
    pub this_load: u64,
    pub this_load_per_task: u64,
    pub this_nr_running: u64,
    pub this_pwr: u64,
    pub max_load: u64,
    pub busiest_load_per_task: u64,
    pub busiest_nr_running: u64,
    pub busiest_group_capacity: u64,
    pub busiest_pwr: u64,
    pub group_imb: bool,
}

/// struct sg_lb_stats [sched_fair.c @2.6.35].
#[derive(Debug, Clone, Copy, Default)]
struct SgLbStats {
    avg_load: u64,
    group_load: u64,
    sum_nr_running: u64,
    sum_weighted_load: u64,
    group_capacity: u64,
    group_imb: bool,
    power: u64,
}

/// DIV_ROUND_CLOSEST(power, SCHED_LOAD_SCALE).
fn capacity_of_power(power: u64) -> u64 {
    (power + SCHED_LOAD_SCALE / 2) / SCHED_LOAD_SCALE
}

/// fix_small_imbalance() [sched_fair.c @2.6.35]: the computed imbalance is
/// below one task's load. Move one (average) task if the gap is at least
/// `imbn` such tasks (imbn = 1 when the busiest group's tasks are heavier
/// than ours), or if moving it raises the total "cpu power used"
/// Σ power·min(load per task, load). `this_cpu_avg_load_per_task` is
/// cpu_avg_load_per_task(this_cpu), used when our group runs nothing.
pub fn fix_small_imbalance(sds: &mut SdLbStats, this_cpu_avg_load_per_task: u64, imbalance: &mut u64) {
    let s = SCHED_LOAD_SCALE;
    let bpwr = sds.busiest_pwr.max(1);
    let imbn = small_imbalance_imbn(sds, this_cpu_avg_load_per_task);
    let scaled_busy_load_per_task = sds.busiest_load_per_task * s / bpwr;
    if sds.max_load.saturating_sub(sds.this_load) + scaled_busy_load_per_task >= scaled_busy_load_per_task * imbn {
        *imbalance = sds.busiest_load_per_task;
        return;
    }
    // Not enough imbalance to justify moving a task; but it may raise the
    // total CPU power used.
    if moving_one_task_gains_power(sds) {
        *imbalance = sds.busiest_load_per_task;
    }
}

/// The head of fix_small_imbalance(): our load per task (`idle_per_task`
/// when our group runs nothing) and how many busiest tasks the gap must
/// hold, 2, or 1 when the busiest group's tasks are heavier than ours.
fn small_imbalance_imbn(sds: &mut SdLbStats, idle_per_task: u64) -> u64 {
    match sds.this_load_per_task.checked_div(sds.this_nr_running) {
        Some(per_task) => {
            sds.this_load_per_task = per_task;
            if sds.busiest_load_per_task > per_task {
                return 1;
            }
        }
        None => sds.this_load_per_task = idle_per_task,
    }
    2
}

/// The tail of fix_small_imbalance() (2.6.24 .. 2.6.3x): whether moving one
/// busiest task here raises the total "cpu power used"
/// Σ power·min(load per task, load).
fn moving_one_task_gains_power(sds: &SdLbStats) -> bool {
    let s = SCHED_LOAD_SCALE;
    let bpwr = sds.busiest_pwr.max(1);
    let tpwr = sds.this_pwr.max(1);
    let mut pwr_now = bpwr * sds.busiest_load_per_task.min(sds.max_load);
    pwr_now += tpwr * sds.this_load_per_task.min(sds.this_load);
    pwr_now /= s;
    let mut pwr_move = 0;
    // Amount of load we'd subtract.
    let tmp = sds.busiest_load_per_task * s / bpwr;
    if sds.max_load > tmp {
        pwr_move += bpwr * sds.busiest_load_per_task.min(sds.max_load - tmp);
    }
    // Amount of load we'd add.
    let tmp = if sds.max_load * bpwr < sds.busiest_load_per_task * s {
        sds.max_load * bpwr / tpwr
    } else {
        sds.busiest_load_per_task * s / tpwr
    };
    pwr_move += tpwr * sds.this_load_per_task.min(sds.this_load + tmp);
    pwr_move /= s;
    pwr_move > pwr_now
}

/// calculate_imbalance() [sched_fair.c @2.6.35]: the weighted load to move,
/// min(what takes busiest down to the average (and not below its capacity),
/// what takes us up to the average); fix_small_imbalance below one task.
pub fn calculate_imbalance(sds: &mut SdLbStats, this_cpu_avg_load_per_task: u64) -> u64 {
    let s = SCHED_LOAD_SCALE;
    let mut imbalance = 0;
    sds.busiest_load_per_task /= sds.busiest_nr_running.max(1);
    if sds.group_imb {
        sds.busiest_load_per_task = sds.busiest_load_per_task.min(sds.avg_load);
    }
    // With smp-nice, max_load may be below the average (groups at or below
    // their capacity are skipped when picking busiest).
    if sds.max_load < sds.avg_load {
        fix_small_imbalance(sds, this_cpu_avg_load_per_task, &mut imbalance);
        return imbalance;
    }
    let mut load_above_capacity = u64::MAX;
    if !sds.group_imb {
        // Don't pull so many tasks that a group would go idle.
        load_above_capacity =
            sds.busiest_nr_running.saturating_sub(sds.busiest_group_capacity) * (s * s) / sds.busiest_pwr.max(1);
    }
    let max_pull = (sds.max_load - sds.avg_load).min(load_above_capacity);
    let a = (max_pull as u128) * sds.busiest_pwr as u128;
    let b = (sds.avg_load.saturating_sub(sds.this_load) as u128) * sds.this_pwr as u128;
    imbalance = (a.min(b) / s as u128) as u64;
    if imbalance < sds.busiest_load_per_task {
        fix_small_imbalance(sds, this_cpu_avg_load_per_task, &mut imbalance);
    }
    imbalance
}

/// SCHED_LOAD_SCALE_FUZZ [sched.h @2.6.24, @2.6.25]: slack added to the
/// remaining imbalance when deciding whether a task is too heavy to pull,
/// and to the gap in the small-imbalance test.
pub const SCHED_LOAD_SCALE_FUZZ: u64 = SCHED_LOAD_SCALE;

/// The imbalance part of find_busiest_group() as 2.6.24/2.6.25 wrote it
/// inline [sched.c @2.6.24, @2.6.25], after the same busiest-group choice
/// and balanced checks as 2.6.35. Differences from calculate_imbalance():
/// balanced when the busiest group's load is no more than one of its tasks;
/// max_pull stops one task above that, not at the group's capacity; the
/// small-imbalance test compares the raw gap plus SCHED_LOAD_SCALE_FUZZ
/// with `imbn` tasks, and takes SCHED_LOAD_SCALE as our load per task when
/// our group runs nothing. None: balanced after all.
pub fn calculate_imbalance_2625(sds: &mut SdLbStats) -> Option<u64> {
    let s = SCHED_LOAD_SCALE;
    sds.busiest_load_per_task /= sds.busiest_nr_running.max(1);
    if sds.group_imb {
        sds.busiest_load_per_task = sds.busiest_load_per_task.min(sds.avg_load);
    }
    // "Negative imbalances (*we* are more loaded than anyone else) will be
    // counted as no imbalance".
    if sds.max_load <= sds.busiest_load_per_task {
        return None;
    }
    let mut imbalance = 0;
    if sds.max_load >= sds.avg_load {
        // Don't pull so many tasks that a group would go idle.
        let max_pull = (sds.max_load - sds.avg_load).min(sds.max_load - sds.busiest_load_per_task);
        let a = (max_pull as u128) * sds.busiest_pwr as u128;
        let b = (sds.avg_load.saturating_sub(sds.this_load) as u128) * sds.this_pwr as u128;
        imbalance = (a.min(b) / s as u128) as u64;
        if imbalance >= sds.busiest_load_per_task {
            return Some(imbalance);
        }
    }
    // small_imbalance:
    let imbn = small_imbalance_imbn(sds, s);
    if sds.max_load.saturating_sub(sds.this_load) + SCHED_LOAD_SCALE_FUZZ >= sds.busiest_load_per_task * imbn {
        return Some(sds.busiest_load_per_task);
    }
    // Not enough imbalance to justify moving a task; but it may raise the
    // total CPU power used.
    if moving_one_task_gains_power(sds) {
        imbalance = sds.busiest_load_per_task;
    }
    Some(imbalance)
}

/// Seed 002 (3/6): the decaying sum `normal_avg` seen at `now` with its
/// period start: halved once per elapsed sched_avg_period(), as
/// sched_avg_update() halves rq->rt_avg [sched.c @2.6.35].
pub fn decayed_normal_avg(normal_avg: u64, age_stamp: u64, now: u64) -> (u64, u64) {
    let mut avg = normal_avg;
    let mut age = age_stamp;
    let elapsed = now.saturating_sub(age);
    if elapsed > SCHED_AVG_PERIOD_NS {
        let periods = (elapsed - 1) / SCHED_AVG_PERIOD_NS;
        age += periods * SCHED_AVG_PERIOD_NS;
        avg = if periods >= 64 { 0 } else { avg >> periods };
    }
    (avg, age)
}

/// Seed 002 (3/6): the fraction (in SCHED_LOAD_SCALE units) of the recent
/// period not spent on SCHED_NORMAL/BATCH work, computed as scale_rt_power()
/// computes the part not spent on RT [sched_fair.c @2.6.35].
pub fn scale_normal_power(normal_avg: u64, age_stamp: u64, now: u64) -> u64 {
    let total = SCHED_AVG_PERIOD_NS + now.saturating_sub(age_stamp);
    let available = total.saturating_sub(normal_avg);
    let total = total.max(SCHED_LOAD_SCALE) >> 10;
    available / total
}

// ---------------------------------------------------------------------------
// The balancer
// ---------------------------------------------------------------------------

/// Which tasks a balancing pass may move (seed 002, 4/6: the
/// `sched_idle_balance` argument of the lb functions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pass {
    /// The regular pass. With SD_IDLE_LOAD_BALANCE on it leaves SCHED_IDLE
    /// tasks alone ("we do not balance them with SCHED_NORMAL/SCHED_BATCH
    /// tasks", seed 002 cover letter).
    Normal,
    /// The second pass: SCHED_IDLE tasks only.
    SchedIdle,
}

/// The parts of struct lb_env that 2.6.35 passed as arguments.
struct AvgEnv {
    sd: usize,
    lvl: usize,
    this_cpu: usize,
    idle: CpuIdleType,
    /// load_balance_tmpmask: the active CPUs not yet excluded as all-pinned.
    cpus: CpuMask,
}

impl Sim {
    // ------------------------------------------------------------ loads

    /// The avg_load balancer is this run's (the dispatch test of balance.rs
    /// and wakeup.rs).
    #[inline]
    pub fn avg_load_era(&self) -> bool {
        self.cfg.mech.balancer == BalancerEra::AvgLoad
    }

    /// The balancer forms of kernel/sched.c in 2.6.24 and 2.6.25, the
    /// modelled versions before 2.6.35: find_busiest_group with its own
    /// group_imb test and imbalance arithmetic (calculate_imbalance_2625),
    /// balance_tasks with SCHED_LOAD_SCALE_FUZZ and the highest-priority
    /// exception, and load_balance_newidle() apart from load_balance().
    /// Each changed somewhere in 2.6.26 .. 2.6.33.
    #[inline]
    pub(crate) fn lb_2625(&self) -> bool {
        self.cfg.mech.lb_sched_c_2625
    }

    /// Whether the domain balances at all (SD_LOAD_BALANCE; every domain
    /// balances from 5.8, where the flag was removed).
    pub(crate) fn sd_balances(&self, d: usize) -> bool {
        self.topo.domains[d].flags & SD_LOAD_BALANCE != 0 || !self.cfg.mech.sd_load_balance_flag
    }

    /// weighted_cpuload(): rq->load.weight, the instantaneous sum of the
    /// runnable weights (2.6.x). From 3.8 it is the PELT runnable load.
    /// Deviation (3.8+): schedlab's PELT load_avg includes blocked load.
    pub fn weighted_cpuload(&self, cpu: usize) -> u64 {
        if self.cfg.mech.cpu_load_from_pelt {
            self.rqs[cpu].cfs.avg.load_avg
        } else if self.rt_legacy() {
            // 2.6.24: rq->load captures the RT tasks too (rt_legacy.rs).
            // Deviation: 2.6.25 .. 2.6.3x counted them as well; schedlab
            // counts them only in the legacy era, where RT tasks are balanced
            // by this load.
            self.rqs[cpu].cfs.load_weight + self.rqs[cpu].rt.load_weight
        } else {
            self.rqs[cpu].cfs.load_weight
        }
    }

    /// A task's contribution to weighted_cpuload (se.load.weight in 2.6.x).
    pub(crate) fn lb_task_load(&self, p: TaskId) -> u64 {
        if self.cfg.mech.cpu_load_from_pelt {
            self.tasks[p].se.avg.load_avg.max(1)
        } else {
            self.tasks[p].weight as u64
        }
    }

    /// update_cpu_load() [sched.c @2.6.35], from scheduler_tick(). Tickless
    /// idle CPUs are not updated, so their cpu_load[] goes stale (2.6.35);
    /// from 2.6.36 the missed ticks are decayed as zero-load ticks when the
    /// tick resumes (decay_load_missed; exact steps here instead of the
    /// kernel's degrade tables).
    pub fn update_cpu_load(&mut self, cpu: usize) {
        let jiffies = self.now / self.cfg.tick_ns;
        let this_load = self.weighted_cpuload(cpu);
        let catch_up = self.cfg.mech.cpu_load_decay_missed;
        let rq = &mut self.rqs[cpu];
        if catch_up {
            let missed = jiffies.saturating_sub(rq.last_load_update_tick).saturating_sub(1);
            for _ in 0..missed.min(128) {
                cpu_load_tick(&mut rq.cpu_load, 0);
            }
        }
        rq.last_load_update_tick = jiffies;
        cpu_load_tick(&mut rq.cpu_load, this_load);
    }

    /// LB_BIAS on (2.6.35 .. 4.x), or a version without the feature, where
    /// source_load/target_load always biased (2.6.2x) [LINUX-FACTS 2.3].
    fn lb_bias(&self) -> bool {
        let f = &self.cfg.features;
        !f.available(Feature::LB_BIAS) || f.on(Feature::LB_BIAS)
    }

    /// source_load(): a low guess at a migration source's load,
    /// min(cpu_load[idx−1], current).
    pub fn source_load(&self, cpu: usize, idx: usize) -> u64 {
        let total = self.weighted_cpuload(cpu);
        if idx == 0 || !self.lb_bias() {
            return total;
        }
        self.rqs[cpu].cpu_load[idx - 1].min(total)
    }

    /// target_load(): a high guess at a migration target's load,
    /// max(cpu_load[idx−1], current).
    pub fn target_load(&self, cpu: usize, idx: usize) -> u64 {
        let total = self.weighted_cpuload(cpu);
        if idx == 0 || !self.lb_bias() {
            return total;
        }
        self.rqs[cpu].cpu_load[idx - 1].max(total)
    }

    /// power_of() = rq->cpu_power as update_cpu_power() sets it: SCHED_LOAD_SCALE,
    /// times smt_gain/span_weight on an SMT level (default_scale_smt_power:
    /// 1178/2 = 589 per sibling), times scale_rt_power (the share of recent
    /// time not spent on RT tasks). arch_scale_freq_power is SCHED_LOAD_SCALE.
    pub fn power_of(&self, cpu: usize) -> u64 {
        let mut power = SCHED_LOAD_SCALE;
        if let Some(&d) = self.topo.cpu_domains[cpu].first() {
            let sd = &self.topo.domains[d];
            if sd.flags & SD_SHARE_CPUPOWER != 0 && sd.span_weight > 1 && sd.smt_gain > 0 {
                power = (power * (sd.smt_gain as u64 / sd.span_weight as u64)) >> 10;
            }
        }
        if self.rt_pressure && self.cfg.mech.scale_rt_power {
            // scale_rt_power(): the share of the recent sched_avg_period
            // not spent on RT [sched_fair.c @2.6.35]. Deviation: it dates
            // from 2.6.31 (unverified); 2.6.25 had no RT scaling.
            let rq = &self.rqs[cpu].rt;
            let (avg, age) = decayed_normal_avg(rq.rt_avg, rq.rt_age_stamp, self.now);
            power = (power * scale_normal_power(avg, age, self.now)) >> 10;
        }
        power.max(1)
    }

    /// sched_group->cpu_power: the sum of its CPUs' power.
    pub(crate) fn group_power(&self, g: usize) -> u64 {
        self.topo.groups[g].cpus.iter().map(|&c| self.power_of(c)).sum::<u64>().max(1)
    }

    /// cpu_avg_load_per_task().
    pub(crate) fn cpu_avg_load_per_task(&self, cpu: usize) -> u64 {
        self.weighted_cpuload(cpu).checked_div(self.rqs[cpu].nr_running as u64).unwrap_or(0)
    }

    // ---------------------------------------- seed 002 (SD_IDLE_LOAD_BALANCE)

    fn sched_idle_lb_on(&self) -> bool {
        self.cfg.features.on(Feature::SD_IDLE_LOAD_BALANCE)
    }

    /// Seed 002 (1/6, "account SCHED_IDLE tasks on rq->idle_nr_running"):
    /// schedlab's cfs_rq already counts its SCHED_IDLE tasks at every
    /// enqueue/dequeue (idle_h_nr_running), which is the patch's counter.
    fn idle_nr_running(&self, cpu: usize) -> u64 {
        self.rqs[cpu].cfs.idle_h_nr_running as u64
    }

    /// Seed 002 (2/6 adds the SD_IDLE_LOAD_BALANCE domain flag; 6/6 sets it
    /// in the MC, CPU and (x86) NODE templates): every level but the SMT
    /// siblings and ALLNODES. Kept here, not in topology.rs, because it
    /// exists only with the feature.
    fn sd_idle_load_balance(&self, d: usize) -> bool {
        let sd = &self.topo.domains[d];
        self.sched_idle_lb_on() && sd.flags & SD_SHARE_CPUPOWER == 0 && sd.name != "ALLNODES"
    }

    /// Seed 002 (3/6, "moving average of time spent servicing SCHED_NORMAL
    /// tasks"): called from update_curr() with the time the current task ran.
    pub fn sched_normal_avg_update(&mut self, cpu: usize, tid: TaskId, delta: u64) {
        if !self.sched_idle_lb_on() || !matches!(self.tasks[tid].policy, Policy::Normal | Policy::Batch) {
            return;
        }
        let rq = &mut self.rqs[cpu];
        let (avg, age) = decayed_normal_avg(rq.normal_avg, rq.age_stamp, self.now);
        rq.normal_avg = avg + delta;
        rq.age_stamp = age;
    }

    /// Seed 002 (3/6, 5/6): the power left for SCHED_IDLE tasks, cpu_power
    /// scaled down by the recent share of SCHED_NORMAL/BATCH work ("similar
    /// to the RT power scaling calculations"); at least 1, as update_cpu_power.
    fn idle_power(&self, cpu: usize) -> u64 {
        let rq = &self.rqs[cpu];
        let (avg, age) = decayed_normal_avg(rq.normal_avg, rq.age_stamp, self.now);
        ((self.power_of(cpu) * scale_normal_power(avg, age, self.now)) >> 10).max(1)
    }

    /// Seed 002 (5/6): idle load = idle_nr_running × WEIGHT_IDLEPRIO / idle
    /// power, in SCHED_LOAD_SCALE units like avg_load.
    fn idle_load(&self, cpu: usize) -> u64 {
        let w = self.cfg.mech.weight_idleprio.0 as u64;
        self.idle_nr_running(cpu) * w * SCHED_LOAD_SCALE / self.idle_power(cpu)
    }

    /// Seed 002 (5/6, "add SCHED_IDLE load balancer"): the second pass at one
    /// domain. It walks every CPU of the span (the letter: "we iterate through
    /// each cpu in the sched domain span and calculate the idle load"), takes
    /// the CPU with the highest idle load as busiest, and applies the
    /// find_busiest_group tests to idle loads: balanced if this CPU's idle
    /// load is at or above busiest's or the domain average
    /// (Σ idle weight / Σ idle power), or within imbalance_pct of busiest.
    /// The amount is calculate_imbalance's min((busiest − avg)·power(busiest),
    /// (avg − this)·power(this)), so a CPU busy with SCHED_NORMAL work (idle
    /// power near 0) pulls nothing. The SCHED_IDLE tasks then move with
    /// move_tasks in its sched-idle mode (4/6). Modelling choices (the seed
    /// has no code): the pass never kicks the stopper and leaves
    /// nr_balance_failed and balance_interval to the regular pass.
    fn load_balance_idle(&mut self, this_cpu: usize, lvl: usize, idle: CpuIdleType) -> u32 {
        let d = self.topo.cpu_domains[this_cpu][lvl];
        if !self.sd_idle_load_balance(d) {
            return 0;
        }
        let w = self.cfg.mech.weight_idleprio.0 as u64;
        let this_pwr = self.idle_power(this_cpu);
        let this_load = self.idle_load(this_cpu);
        let (mut total_w, mut total_pwr, mut max_load) = (0u64, 0u64, 0u64);
        let mut busiest: Option<(usize, u64)> = None;
        for &i in &self.topo.domains[d].span {
            let pwr = self.idle_power(i);
            let nr = self.idle_nr_running(i);
            total_w += nr * w;
            total_pwr += pwr;
            let load = nr * w * SCHED_LOAD_SCALE / pwr;
            if i != this_cpu && nr > 0 && load > max_load {
                max_load = load;
                busiest = Some((i, pwr));
            }
        }
        let Some((busiest, busiest_pwr)) = busiest else { return 0 };
        let avg = total_w * SCHED_LOAD_SCALE / total_pwr.max(1);
        let pct = self.topo.domains[d].imbalance_pct as u64;
        if this_load >= max_load || this_load >= avg || 100 * max_load <= pct * this_load {
            return 0;
        }
        // A lone task there is running and cannot be pulled (load_balance's
        // busiest->nr_running > 1).
        if self.rqs[busiest].nr_running <= 1 {
            return 0;
        }
        let imbalance =
            (max_load.saturating_sub(avg) * busiest_pwr).min((avg - this_load) * this_pwr) / SCHED_LOAD_SCALE;
        let mut all_pinned = false;
        let (_, moved) = self.move_tasks_avg(this_cpu, busiest, imbalance, lvl, idle, &mut all_pinned, Pass::SchedIdle);
        moved
    }

    fn pass_accepts(&self, pass: Pass, p: TaskId) -> bool {
        let idle = self.tasks[p].is_idle_policy();
        match pass {
            Pass::Normal => !(idle && self.sched_idle_lb_on()),
            Pass::SchedIdle => idle,
        }
    }

    // -------------------------------------------------- find_busiest_group

    /// update_sg_lb_stats() [sched_fair.c @2.6.35]. Sums target_load (local
    /// group) or source_load (others) and computes avg_load, group_imb and
    /// group_capacity. For the local group it also applies the balance-CPU
    /// rule: only the first idle CPU of the group, else its first CPU,
    /// balances this level (not for newidle).
    fn update_sg_lb_stats_avg(
        &self,
        env: &AvgEnv,
        g: usize,
        local: bool,
        load_idx: usize,
        sd_idle: &mut bool,
        balance: &mut bool,
    ) -> SgLbStats {
        let grp = &self.topo.groups[g];
        let mut s = SgLbStats::default();
        let mut balance_cpu = grp.first_cpu;
        let mut first_idle_cpu = false;
        let (mut max_cpu_load, mut min_cpu_load) = (0u64, u64::MAX);
        for &i in &grp.cpus {
            if !env.cpus.test(i) {
                continue;
            }
            let nr = self.rqs[i].nr_running as u64;
            if *sd_idle && nr > 0 {
                *sd_idle = false;
            }
            let load = if local {
                if self.idle_cpu(i) && !first_idle_cpu {
                    first_idle_cpu = true;
                    balance_cpu = i;
                }
                self.target_load(i, load_idx)
            } else {
                let l = self.source_load(i, load_idx);
                max_cpu_load = max_cpu_load.max(l);
                min_cpu_load = min_cpu_load.min(l);
                l
            };
            s.group_load += load;
            s.sum_nr_running += nr;
            s.sum_weighted_load += self.weighted_cpuload(i);
        }
        if env.idle != CpuIdleType::NewlyIdle && local && balance_cpu != env.this_cpu {
            *balance = false;
            return s;
        }
        s.power = self.group_power(g);
        s.avg_load = s.group_load * SCHED_LOAD_SCALE / s.power;
        // The group is imbalanced inside when its CPUs differ by more than
        // two average tasks; in 2.6.24/2.6.25 by more than one nice-0 task
        // (SCHED_LOAD_SCALE). (Unsigned as in the kernel: a group with no
        // counted CPU wraps to 1.)
        let spread = max_cpu_load.wrapping_sub(min_cpu_load);
        s.group_imb = if self.lb_2625() {
            spread > SCHED_LOAD_SCALE
        } else {
            spread > 2 * s.sum_weighted_load.checked_div(s.sum_nr_running).unwrap_or(0)
        };
        s.group_capacity = capacity_of_power(s.power);
        s
    }

    /// find_busiest_group() with update_sd_lb_stats() [sched_fair.c @2.6.35]:
    /// the busiest non-local group is the one with the highest avg_load among
    /// those running more tasks than their capacity (1 under a PREFER_SIBLING
    /// child) or internally imbalanced. Returns it with the imbalance, or
    /// None when balanced; `balance` is cleared when this CPU is not the
    /// group's balancer.
    fn find_busiest_group_avg(&self, env: &AvgEnv, sd_idle: &mut bool, balance: &mut bool) -> Option<(usize, u64)> {
        let dom = &self.topo.domains[env.sd];
        let prefer_sibling = env.lvl > 0 && {
            let child = self.topo.cpu_domains[env.this_cpu][env.lvl - 1];
            self.topo.domains[child].flags & SD_PREFER_SIBLING != 0
        };
        let load_idx = match env.idle {
            CpuIdleType::NotIdle => dom.busy_idx,
            CpuIdleType::NewlyIdle => dom.newidle_idx,
            CpuIdleType::Idle => dom.idle_idx,
        };
        let local_g = self.topo.cpu_local_group[env.this_cpu][env.lvl];
        let mut sds = SdLbStats::default();
        // sd->groups starts at the local group and wraps; ties go to the
        // first group found.
        for g in self.topo.groups_from(env.this_cpu, env.lvl) {
            let local = g == local_g;
            let mut sgs = self.update_sg_lb_stats_avg(env, g, local, load_idx, sd_idle, balance);
            if local && !*balance {
                return None;
            }
            sds.total_load += sgs.group_load;
            sds.total_pwr += sgs.power;
            if prefer_sibling {
                sgs.group_capacity = sgs.group_capacity.min(1);
            }
            if local {
                sds.this_load = sgs.avg_load;
                sds.this_pwr = sgs.power;
                sds.this_nr_running = sgs.sum_nr_running;
                sds.this_load_per_task = sgs.sum_weighted_load;
            } else if sgs.avg_load > sds.max_load && (sgs.sum_nr_running > sgs.group_capacity || sgs.group_imb) {
                sds.max_load = sgs.avg_load;
                sds.busiest = Some(g);
                sds.busiest_nr_running = sgs.sum_nr_running;
                sds.busiest_group_capacity = sgs.group_capacity;
                sds.busiest_load_per_task = sgs.sum_weighted_load;
                sds.busiest_pwr = sgs.power;
                sds.group_imb = sgs.group_imb;
            }
        }
        let busiest = sds.busiest?;
        if sds.busiest_nr_running == 0 || sds.this_load >= sds.max_load {
            return None;
        }
        sds.avg_load = SCHED_LOAD_SCALE * sds.total_load / sds.total_pwr.max(1);
        if sds.this_load >= sds.avg_load {
            return None;
        }
        if 100 * sds.max_load <= dom.imbalance_pct as u64 * sds.this_load {
            return None;
        }
        let imbalance = if self.lb_2625() {
            calculate_imbalance_2625(&mut sds)?
        } else {
            calculate_imbalance(&mut sds, self.cpu_avg_load_per_task(env.this_cpu))
        };
        Some((busiest, imbalance))
    }

    /// find_busiest_queue() [sched_fair.c @2.6.35]: the CPU with the highest
    /// weighted_cpuload/power, skipping a CPU whose single task is heavier
    /// than the imbalance (it could not move anyway).
    fn find_busiest_queue_avg(&self, g: usize, imbalance: u64, cpus: &CpuMask) -> Option<usize> {
        let mut busiest = None;
        let mut max_load = 0;
        for &i in &self.topo.groups[g].cpus {
            if !cpus.test(i) {
                continue;
            }
            let power = self.power_of(i);
            let capacity = capacity_of_power(power);
            let wl = self.weighted_cpuload(i);
            if capacity > 0 && self.rqs[i].nr_running == 1 && wl > imbalance {
                continue;
            }
            let wl = wl * SCHED_LOAD_SCALE / power;
            if wl > max_load {
                max_load = wl;
                busiest = Some(i);
            }
        }
        busiest
    }

    // -------------------------------------------------------- moving tasks

    /// The source's cfs_rq->tasks list from its head. 2.6.35 list_add()s at
    /// enqueue, so the head is the most recently queued task. Deviation:
    /// schedlab's list position is also refreshed when a task is picked
    /// (the 6.x cfs_tasks rule), so recently run tasks come first too.
    fn cfs_tasks_head_first(&self, cpu: usize) -> Vec<TaskId> {
        let rq = &self.rqs[cpu];
        let mut v: Vec<TaskId> = rq.cfs.tasks_timeline.iter().map(|&(_, t)| t).chain(rq.cfs.curr).collect();
        v.sort_by_key(|&t| std::cmp::Reverse(self.tasks[t].list_seq));
        v
    }

    /// task_hot() [sched.c @2.6.35]: a buddy of its cfs_rq is hot while the
    /// destination runs something; else hot if it ran within
    /// sysctl_sched_migration_cost. 2.6.35 has no SCHED_IDLE exemption
    /// (LINUX-FACTS 3.8); 4.16+ has one. Deviation: "this_rq()" is the
    /// destination even when the NOHZ owner balances on its behalf.
    fn task_hot_avg(&self, p: TaskId, src: usize, dst: usize) -> bool {
        let t = &self.tasks[p];
        if t.is_idle_policy() && self.cfg.mech.task_hot_idle_exempt {
            return false;
        }
        // task_hot(): only fair tasks are ever cache hot.
        if t.policy.is_rt() {
            return false;
        }
        let cfs = &self.rqs[src].cfs;
        if self.cfg.features.on(Feature::CACHE_HOT_BUDDY)
            && self.rqs[dst].nr_running > 0
            && (cfs.next == Some(p) || cfs.last == Some(p))
        {
            return true;
        }
        let mc = self.cfg.sysctl.sched_migration_cost_ns;
        mc > 0 && self.now.saturating_sub(t.se.exec_start) < mc
    }

    /// can_migrate_task() [sched_fair.c @2.6.35]: affinity, then not running,
    /// then not cache hot unless nr_balance_failed > cache_nice_tries.
    fn can_migrate_task_avg(&self, p: TaskId, src: usize, dst: usize, lvl: usize, all_pinned: &mut bool) -> bool {
        if !self.tasks[p].cpus.test(dst) {
            return false;
        }
        *all_pinned = false;
        if self.rqs[src].curr == Some(p) {
            return false;
        }
        let sd = self.topo.cpu_domains[dst][lvl];
        !self.task_hot_avg(p, src, dst)
            || self.rqs[dst].sd[lvl].nr_balance_failed > self.topo.domains[sd].cache_nice_tries
    }

    /// balance_tasks() [sched_fair.c @2.6.35]: walk the source list, at most
    /// sysctl_sched_nr_migrate (+1) tasks examined; skip a task whose
    /// weight/2 exceeds what is left to move; pull the others. Returns
    /// (load moved, tasks moved). As in the kernel, a task skipped for its
    /// weight never reaches can_migrate_task, so it leaves `all_pinned` set.
    ///
    /// The legacy era (2.6.24, rt_legacy.rs) walks the classes from the
    /// highest, RT first, with its own count of examined tasks per class,
    /// and keeps a task too heavy for the imbalance when it would be the
    /// highest priority on this CPU (skip_for_load && prio >= this_best_prio,
    /// with SCHED_LOAD_SCALE_FUZZ) [sched.c @2.6.24 move_tasks, balance_tasks].
    #[allow(clippy::too_many_arguments)] // the kernel passes the same set
    fn balance_tasks_avg(
        &mut self,
        this_cpu: usize,
        busiest: usize,
        max_load_move: u64,
        lvl: usize,
        idle: CpuIdleType,
        all_pinned: &mut bool,
        pass: Pass,
    ) -> (u64, u32) {
        if max_load_move == 0 {
            *all_pinned = false;
            return (0, 0);
        }
        let legacy = self.rt_legacy();
        let generic = self.lb_2625();
        let mut pinned = true;
        let mut rem = max_load_move as i64;
        let mut pulled = 0;
        let classes = if legacy {
            vec![self.rt_tasks_lb_order(busiest), self.cfs_tasks_head_first(busiest)]
        } else {
            vec![self.cfs_tasks_head_first(busiest)]
        };
        let fuzz = if generic { SCHED_LOAD_SCALE_FUZZ as i64 } else { 0 };
        let mut this_best_prio = self.rqs[this_cpu].curr.map(|c| self.tasks[c].prio()).unwrap_or(MAX_PRIO);
        'classes: for list in classes {
            // `if (loops++ > sysctl_sched_nr_migrate) break;`
            for (loops, p) in list.into_iter().enumerate() {
                if loops as u64 > self.cfg.sysctl.sched_nr_migrate {
                    break;
                }
                if !self.pass_accepts(pass, p) {
                    continue;
                }
                let w = self.lb_task_load(p);
                let skip_for_load = (w >> 1) as i64 > rem + fuzz;
                let keep_for_prio = generic && self.tasks[p].prio() < this_best_prio;
                if (skip_for_load && !keep_for_prio)
                    || !self.can_migrate_task_avg(p, busiest, this_cpu, lvl, &mut pinned)
                {
                    continue;
                }
                self.move_queued_task(p, busiest, this_cpu, self.lb_exec.unwrap_or(this_cpu));
                pulled += 1;
                rem -= w as i64;
                // CONFIG_PREEMPT: newidle stops after the first task (2.6.3x).
                if !generic && self.cfg.preempt == PreemptModel::Full && idle == CpuIdleType::NewlyIdle {
                    break 'classes;
                }
                if rem <= 0 {
                    break 'classes;
                }
                this_best_prio = this_best_prio.min(self.tasks[p].prio());
            }
        }
        *all_pinned = pinned;
        ((max_load_move as i64 - rem) as u64, pulled)
    }

    /// move_tasks() [sched_fair.c @2.6.35]: balance_tasks passes until the
    /// imbalance is moved or a pass moves nothing. Returns (moved?, tasks).
    #[allow(clippy::too_many_arguments)] // the kernel passes the same set
    fn move_tasks_avg(
        &mut self,
        this_cpu: usize,
        busiest: usize,
        max_load_move: u64,
        lvl: usize,
        idle: CpuIdleType,
        all_pinned: &mut bool,
        pass: Pass,
    ) -> (bool, u32) {
        let mut total = 0u64;
        let mut tasks = 0;
        loop {
            let rem = max_load_move.saturating_sub(total);
            let (moved, n) = self.balance_tasks_avg(this_cpu, busiest, rem, lvl, idle, all_pinned, pass);
            total += moved;
            tasks += n;
            if !self.lb_2625()
                && self.cfg.preempt == PreemptModel::Full
                && idle == CpuIdleType::NewlyIdle
                && self.rqs[this_cpu].nr_running > 0
            {
                break;
            }
            // 2.6.24/2.6.25's move_tasks is one walk over the classes.
            if moved == 0 || max_load_move <= total || self.lb_2625() {
                break;
            }
        }
        (total > 0, tasks)
    }

    // -------------------------------------------------------- load_balance

    /// need_active_balance() [sched_fair.c @2.6.35]: after more than
    /// cache_nice_tries + 2 failures. A newidle pass kicks it only with
    /// sched_mc_power_savings >= 2 (default 0), i.e. never, before 4.x.
    fn need_active_balance_avg(&self, this_cpu: usize, lvl: usize, idle: CpuIdleType) -> bool {
        if idle == CpuIdleType::NewlyIdle && !self.cfg.mech.newidle_active_balance {
            return false;
        }
        let sd = self.topo.cpu_domains[this_cpu][lvl];
        self.rqs[this_cpu].sd[lvl].nr_balance_failed > self.topo.domains[sd].cache_nice_tries + 2
    }

    /// load_balance() of the avg_load era. Returns the number of tasks
    /// pulled (the kernel's -1 "SMT sibling busy" result reads as 0 here).
    pub fn load_balance_avg(
        &mut self,
        this_cpu: usize,
        lvl: usize,
        idle: CpuIdleType,
        continue_balancing: &mut bool,
    ) -> u32 {
        self.load_balance_ld(this_cpu, lvl, idle, continue_balancing).max(0) as u32
    }

    /// load_balance() [sched_fair.c @2.6.35]. Returns ld_moved: tasks pulled,
    /// 0, or -1 when an SMT domain failed while a sibling is busy (which
    /// callers treat as "done": the sibling keeps the core busy).
    fn load_balance_ld(&mut self, this_cpu: usize, lvl: usize, idle: CpuIdleType, balance: &mut bool) -> i32 {
        let sd = self.topo.cpu_domains[this_cpu][lvl];
        let dom = &self.topo.domains[sd];
        let (min_interval, max_interval, cache_nice_tries) =
            (dom.min_interval_ms, dom.max_interval_ms, dom.cache_nice_tries);
        let share_power = dom.flags & SD_SHARE_CPUPOWER != 0;
        let ix = idle as usize;
        let mut env = AvgEnv { sd, lvl, this_cpu, idle, cpus: CpuMask::full(self.rqs.len()) };
        // sd_idle: an idle SMT sibling keeps CPU_IDLE semantics while every
        // sibling is idle (power-savings off).
        let mut sd_idle = idle != CpuIdleType::NotIdle && share_power;
        let mut all_pinned = false;
        self.rqs[this_cpu].sd[lvl].stats.lb_count[ix] += 1;
        // redo: drop all-pinned busiest CPUs and look again.
        let found = loop {
            let fbg = self.find_busiest_group_avg(&env, &mut sd_idle, balance);
            if !*balance {
                break None;
            }
            let Some((g, imbalance)) = fbg else {
                self.rqs[this_cpu].sd[lvl].stats.lb_nobusyg[ix] += 1;
                break None;
            };
            let Some(busiest) = self.find_busiest_queue_avg(g, imbalance, &env.cpus) else {
                self.rqs[this_cpu].sd[lvl].stats.lb_nobusyq[ix] += 1;
                break None;
            };
            self.rqs[this_cpu].sd[lvl].stats.lb_imbalance[ix] += imbalance;
            let mut moved = 0;
            if self.rqs[busiest].nr_running > 1 {
                let (_, n) =
                    self.move_tasks_avg(this_cpu, busiest, imbalance, lvl, idle, &mut all_pinned, Pass::Normal);
                moved = n;
                if all_pinned {
                    env.cpus.clear(busiest);
                    if !env.cpus.is_empty() {
                        continue;
                    }
                    break None;
                }
            }
            break Some((busiest, moved));
        };
        let Some((busiest, moved)) = found else {
            // out_balanced
            let st = &mut self.rqs[this_cpu].sd[lvl];
            st.stats.lb_balanced[ix] += 1;
            st.nr_balance_failed = 0;
            return self.lb_out_one_pinned(this_cpu, lvl, all_pinned, max_interval, sd_idle, share_power);
        };
        let mut active_balance = false;
        if moved == 0 {
            self.rqs[this_cpu].sd[lvl].stats.lb_failed[ix] += 1;
            // Newidle failures count too until 2.6.37 ("Increment
            // cache_nice_tries only on periodic lb").
            if idle != CpuIdleType::NewlyIdle || self.cfg.mech.newidle_counts_failures {
                self.rqs[this_cpu].sd[lvl].nr_balance_failed += 1;
            }
            if self.need_active_balance_avg(this_cpu, lvl, idle) {
                // Don't kick the stopper if busiest's current task can't
                // move here.
                let curr_ok = self.rqs[busiest].curr.is_some_and(|c| self.tasks[c].cpus.test(this_cpu));
                if !curr_ok {
                    return self.lb_out_one_pinned(this_cpu, lvl, true, max_interval, sd_idle, share_power);
                }
                // 2.6.35: the stopper is the SCHED_FIFO-99 migration thread.
                active_balance |= self.kick_active_balance(busiest, this_cpu);
                // We've kicked active balancing: reset the failure counter.
                self.rqs[this_cpu].sd[lvl].nr_balance_failed = cache_nice_tries + 1;
            }
        } else {
            let st = &mut self.rqs[this_cpu].sd[lvl];
            st.nr_balance_failed = 0;
            st.stats.lb_gained[ix] += moved as u64;
        }
        let st = &mut self.rqs[this_cpu].sd[lvl];
        if !active_balance {
            // We were unbalanced: reset the interval.
            st.balance_interval = min_interval;
        } else if st.balance_interval < max_interval {
            // Active balancing begun: back off.
            st.balance_interval *= 2;
        }
        if moved == 0 && !sd_idle && share_power {
            return -1;
        }
        moved as i32
    }

    /// load_balance_newidle() [sched.c @2.6.24, @2.6.25]: the newidle pass
    /// before 2.6.32 folded it into load_balance(). A failure is only
    /// counted in schedstat: nr_balance_failed, active balance and the
    /// balance interval are left to the periodic pass; a success or a
    /// balanced domain clears nr_balance_failed. Returns tasks pulled, 0, or
    /// -1 when an SMT domain found nothing while a sibling is busy.
    fn load_balance_newidle_2625(&mut self, this_cpu: usize, lvl: usize) -> i32 {
        let sd = self.topo.cpu_domains[this_cpu][lvl];
        let share_power = self.topo.domains[sd].flags & SD_SHARE_CPUPOWER != 0;
        let ix = CpuIdleType::NewlyIdle as usize;
        let mut env = AvgEnv { sd, lvl, this_cpu, idle: CpuIdleType::NewlyIdle, cpus: CpuMask::full(self.rqs.len()) };
        let mut sd_idle = share_power;
        let mut balance = true;
        self.rqs[this_cpu].sd[lvl].stats.lb_count[ix] += 1;
        let mut moved = 0;
        loop {
            let Some((g, imbalance)) = self.find_busiest_group_avg(&env, &mut sd_idle, &mut balance) else {
                self.rqs[this_cpu].sd[lvl].stats.lb_nobusyg[ix] += 1;
                return self.lb_newidle_balanced_2625(this_cpu, lvl, sd_idle, share_power);
            };
            let Some(busiest) = self.find_busiest_queue_avg(g, imbalance, &env.cpus) else {
                self.rqs[this_cpu].sd[lvl].stats.lb_nobusyq[ix] += 1;
                return self.lb_newidle_balanced_2625(this_cpu, lvl, sd_idle, share_power);
            };
            self.rqs[this_cpu].sd[lvl].stats.lb_imbalance[ix] += imbalance;
            if self.rqs[busiest].nr_running > 1 {
                let mut all_pinned = false;
                let (_, n) = self.move_tasks_avg(
                    this_cpu,
                    busiest,
                    imbalance,
                    lvl,
                    CpuIdleType::NewlyIdle,
                    &mut all_pinned,
                    Pass::Normal,
                );
                moved = n;
                if all_pinned {
                    // Unlike load_balance(), an emptied mask falls through
                    // to the failure below.
                    env.cpus.clear(busiest);
                    if !env.cpus.is_empty() {
                        continue;
                    }
                }
            }
            break;
        }
        let st = &mut self.rqs[this_cpu].sd[lvl];
        if moved == 0 {
            st.stats.lb_failed[ix] += 1;
            return if !sd_idle && share_power { -1 } else { 0 };
        }
        st.nr_balance_failed = 0;
        st.stats.lb_gained[ix] += moved as u64;
        moved as i32
    }

    /// load_balance_newidle()'s out_balanced [sched.c @2.6.25].
    fn lb_newidle_balanced_2625(&mut self, this_cpu: usize, lvl: usize, sd_idle: bool, share_power: bool) -> i32 {
        let st = &mut self.rqs[this_cpu].sd[lvl];
        st.stats.lb_balanced[CpuIdleType::NewlyIdle as usize] += 1;
        if !sd_idle && share_power {
            return -1;
        }
        st.nr_balance_failed = 0;
        0
    }

    /// load_balance()'s out_one_pinned tail: back the interval off.
    fn lb_out_one_pinned(
        &mut self,
        this_cpu: usize,
        lvl: usize,
        all_pinned: bool,
        max_interval: u64,
        sd_idle: bool,
        share_power: bool,
    ) -> i32 {
        let st = &mut self.rqs[this_cpu].sd[lvl];
        if (all_pinned && st.balance_interval < MAX_PINNED_INTERVAL) || st.balance_interval < max_interval {
            st.balance_interval *= 2;
        }
        if !sd_idle && share_power {
            -1
        } else {
            0
        }
    }

    /// active_load_balance_cpu_stop() [sched_fair.c @2.6.35], run by the
    /// stopper on `busiest`: move_one_task() to push_cpu within the lowest
    /// domain of push_cpu spanning busiest, as CPU_IDLE. The stopper itself
    /// is the running task, so the preempted CFS task may go too; there is
    /// something to move when any CFS task is queued ("nr_running <= 1"
    /// counts the stopper).
    pub fn active_load_balance_cpu_stop_avg(&mut self, busiest: usize) {
        let Some(target) = self.stopper_enter(busiest) else { return };
        // 2.6.24's migration thread moves any class (move_one_task walks
        // the classes, RT first).
        let legacy = self.rt_legacy();
        let movable = if legacy { self.rqs[busiest].nr_running } else { self.rqs[busiest].cfs.h_nr_running };
        if movable == 0 || busiest == target {
            return;
        }
        let Some(lvl) = self.topo.cpu_domains[target]
            .iter()
            .position(|&d| self.sd_balances(d) && self.topo.domains[d].span.binary_search(&busiest).is_ok())
        else {
            return;
        };
        self.rqs[target].sd[lvl].stats.alb_count += 1;
        let curr = self.rqs[busiest].curr;
        let mut candidates = if legacy { self.rt_tasks_lb_order(busiest) } else { Vec::new() };
        candidates.extend(self.cfs_tasks_head_first(busiest));
        for p in candidates {
            // Seed 002 (4/6): the regular pass's stopper leaves SCHED_IDLE
            // tasks alone when the feature is on.
            if !self.pass_accepts(Pass::Normal, p) || !self.tasks[p].cpus.test(target) {
                continue;
            }
            let is_curr = curr == Some(p);
            let sd = self.topo.cpu_domains[target][lvl];
            let hot_ok = !self.task_hot_avg(p, busiest, target)
                || self.rqs[target].sd[lvl].nr_balance_failed > self.topo.domains[sd].cache_nice_tries;
            if !hot_ok {
                continue;
            }
            if is_curr {
                self.stopper_preempt_curr(busiest, p);
            }
            self.move_queued_task(p, busiest, target, busiest);
            self.rqs[target].sd[lvl].stats.alb_pushed += 1;
            self.resched_curr(busiest);
            return;
        }
        self.rqs[target].sd[lvl].stats.alb_failed += 1;
    }

    // ------------------------------------------------- rebalance / newidle

    /// rebalance_domains() [sched_fair.c @2.6.35]: balance each due domain
    /// bottom-up; interval = balance_interval (× busy_factor unless idle), in
    /// jiffies, clamped to [1, HZ·NR_CPUS/10]; stop at a level where this CPU
    /// is not its group's balancer. Seed 002 (5/6): the SCHED_IDLE pass runs
    /// after the regular one at each SD_IDLE_LOAD_BALANCE domain.
    pub fn rebalance_domains_avg(&mut self, cpu: usize, idle: CpuIdleType) {
        let mut idle = idle;
        let mut balance = true;
        let tick = self.cfg.tick_ns;
        let mut next_balance = self.now + 60 * self.cfg.hz as u64 * tick;
        let mut update_next_balance = false;
        let max_j = (self.cfg.hz as u64 * self.rqs.len() as u64 / 10).max(1);
        for lvl in 0..self.topo.cpu_domains[cpu].len() {
            let d = self.topo.cpu_domains[cpu][lvl];
            if !self.sd_balances(d) {
                continue;
            }
            let mut ms = self.rqs[cpu].sd[lvl].balance_interval;
            if idle != CpuIdleType::Idle {
                ms *= self.topo.domains[d].busy_factor as u64;
            }
            let interval = self.cfg.msecs_to_jiffies(ms).clamp(1, max_j) * tick;
            // Deviation: SD_SERIALIZE's global trylock never contends in a
            // serial simulation.
            if self.now as i64 >= self.rqs[cpu].sd[lvl].last_balance + interval as i64 {
                if self.load_balance_ld(cpu, lvl, idle, &mut balance) != 0 {
                    // Pulled tasks (or an SMT sibling is busy): not idle.
                    idle = CpuIdleType::NotIdle;
                }
                if balance && self.load_balance_idle(cpu, lvl, idle) > 0 {
                    idle = CpuIdleType::NotIdle;
                }
                self.rqs[cpu].sd[lvl].last_balance = self.now as i64;
            }
            let due = (self.rqs[cpu].sd[lvl].last_balance + interval as i64).max(0) as u64;
            if due < next_balance {
                next_balance = due;
                update_next_balance = true;
            }
            if !balance {
                break;
            }
        }
        if update_next_balance {
            self.rqs[cpu].next_balance = next_balance;
        }
    }

    /// idle_balance() [sched_fair.c @2.6.35], from schedule() when the CPU
    /// is about to go idle: skipped while avg_idle < sysctl_sched_migration_cost
    /// (from 2.6.35; 2.6.2x had no guard; 4.16+ also skips when no runqueue
    /// is overloaded); load_balance(CPU_NEWLY_IDLE) on each SD_BALANCE_NEWIDLE
    /// domain bottom-up, stopping at the first success. Seed 002 (5/6): the
    /// SCHED_IDLE pass follows a failed regular pass at SD_IDLE_LOAD_BALANCE
    /// domains. Returns the tasks gained: schedule() picks again whatever
    /// load_balance() said, and it can pull tasks yet report 0 (a later
    /// balance_tasks() pass that skips a heavy task leaves all_pinned set,
    /// which sends load_balance() through redo to out_balanced).
    pub fn idle_balance_avg(&mut self, cpu: usize) -> u32 {
        let nr_before = self.rqs[cpu].nr_running;
        self.rqs[cpu].idle_stamp = Some(self.now);
        if self.cfg.mech.newidle_avg_idle_guard && self.rqs[cpu].avg_idle < self.cfg.sysctl.sched_migration_cost_ns {
            return 0;
        }
        if self.cfg.mech.newidle_overload_guard && self.nr_overloaded == 0 {
            return 0;
        }
        let tick = self.cfg.tick_ns;
        let mut next_balance = self.now + self.cfg.hz as u64 * tick;
        let mut pulled: i32 = 0;
        for lvl in 0..self.topo.cpu_domains[cpu].len() {
            let d = self.topo.cpu_domains[cpu][lvl];
            if !self.sd_balances(d) {
                continue;
            }
            if self.topo.domains[d].flags & SD_BALANCE_NEWIDLE != 0 {
                let mut balance = true;
                pulled = if self.lb_2625() {
                    self.load_balance_newidle_2625(cpu, lvl)
                } else {
                    self.load_balance_ld(cpu, lvl, CpuIdleType::NewlyIdle, &mut balance)
                };
                if pulled == 0 {
                    pulled = self.load_balance_idle(cpu, lvl, CpuIdleType::NewlyIdle) as i32;
                }
            }
            let interval = self.cfg.msecs_to_jiffies(self.rqs[cpu].sd[lvl].balance_interval) * tick;
            let due = (self.rqs[cpu].sd[lvl].last_balance + interval as i64).max(0) as u64;
            next_balance = next_balance.min(due);
            if pulled != 0 {
                self.rqs[cpu].idle_stamp = None;
                break;
            }
        }
        if pulled != 0 || self.now > self.rqs[cpu].next_balance {
            // Going idle: next_balance may have been set while busy.
            self.rqs[cpu].next_balance = next_balance;
        }
        self.rqs[cpu].nr_running.saturating_sub(nr_before)
    }

    // ----------------------------------------------------- NOHZ owner model

    /// The NOHZ "owner" model (2.6.2x .. 2.6.35): one idle CPU,
    /// nohz.load_balancer, keeps its tick and balances for every tickless
    /// idle CPU. 2.6.36 replaced it with the kick model of fair/balance.rs.
    pub fn nohz_owner_model(&self) -> bool {
        self.cfg.mech.nohz == NohzModel::Owner
    }

    /// A tick on an idle CPU (scheduler_tick() with the idle task current).
    /// In the owner model this is where the CPU stops its tick
    /// (tick_nohz_stop_sched_tick -> select_nohz_load_balancer(1)): it joins
    /// nohz.cpu_mask; it becomes the owner if there is none, and then keeps
    /// ticking; when every CPU is idle nobody needs balancing and the owner
    /// gives up. Deviation: the kernel stops the tick on idle entry, schedlab
    /// at the next tick.
    pub fn scheduler_tick_idle_avg(&mut self, cpu: usize) {
        self.nohz_balance_enter_idle(cpu);
        if !self.nohz_owner_model() {
            return;
        }
        self.rqs[cpu].in_nohz_recently = true;
        if self.nohz_idle_cpus.weight() == self.rqs.len() {
            if self.nohz_load_balancer == Some(cpu) {
                self.nohz_load_balancer = None;
            }
            return;
        }
        match self.nohz_load_balancer {
            None => self.nohz_load_balancer = Some(cpu),
            Some(c) if c != cpu => return,
            _ => {}
        }
        // The owner's tick: update_cpu_load (load 0) and trigger_load_balance.
        self.update_cpu_load(cpu);
        self.trigger_load_balance_avg(cpu);
        if self.nohz_load_balancer == Some(cpu) && self.idle_cpu(cpu) && self.rqs[cpu].tick_key.is_none() {
            let at = self.now + self.cfg.tick_ns;
            self.rqs[cpu].tick_key = Some(self.q.schedule(Instant(at), Ev::Tick(cpu)));
        }
    }

    /// trigger_load_balance() [sched_fair.c @2.6.35] in the owner model.
    /// A busy CPU that was tickless recently nominates a new owner when there
    /// is none (find_new_ilb: the first CPU of nohz.cpu_mask, woken with
    /// resched_cpu). SCHED_SOFTIRQ runs when next_balance is due. Returns
    /// false for versions with the kick model (the caller goes on).
    pub fn trigger_load_balance_avg(&mut self, cpu: usize) -> bool {
        if !self.nohz_owner_model() {
            return false;
        }
        let idle_at_tick = self.idle_cpu(cpu);
        if self.rqs[cpu].in_nohz_recently && !idle_at_tick {
            self.rqs[cpu].in_nohz_recently = false;
            if self.nohz_load_balancer == Some(cpu) {
                self.nohz_load_balancer = None;
            }
            if self.nohz_load_balancer.is_none() {
                if let Some(ilb) = self.nohz_idle_cpus.first() {
                    let at = self.now + self.cfg.costs.wakeup_ipi_ns;
                    self.q.schedule(Instant(at), Ev::NohzKick(ilb));
                }
            }
        }
        if self.now >= self.rqs[cpu].next_balance {
            self.run_rebalance_domains_avg(cpu, idle_at_tick);
        }
        true
    }

    /// run_rebalance_domains() [sched_fair.c @2.6.35]: this CPU's domains,
    /// then, for the owner, every other tickless CPU's (all of them: each
    /// domain's own interval decides), stopping if the owner got work.
    fn run_rebalance_domains_avg(&mut self, cpu: usize, idle_at_tick: bool) {
        let idle = if idle_at_tick { CpuIdleType::Idle } else { CpuIdleType::NotIdle };
        self.rebalance_domains_avg(cpu, idle);
        if !(idle_at_tick && self.nohz_load_balancer == Some(cpu)) {
            return;
        }
        let others: Vec<usize> = self.nohz_idle_cpus.iter().filter(|&c| c != cpu).collect();
        for c in others {
            if !self.idle_cpu(cpu) {
                break; // need_resched(): the owner has work now.
            }
            self.lb_exec = Some(cpu);
            self.rebalance_domains_avg(c, CpuIdleType::Idle);
            self.lb_exec = None;
            let nb = self.rqs[c].next_balance;
            if self.rqs[cpu].next_balance > nb {
                self.rqs[cpu].next_balance = nb;
            }
        }
    }

    /// The nominated idle CPU wakes (resched_cpu): schedule() runs
    /// idle_balance(), and back in the idle loop select_nohz_load_balancer(1)
    /// makes it the owner if there still is none; its tick restarts.
    pub fn nohz_ilb_nominated_avg(&mut self, ilb: usize) {
        if !self.idle_cpu(ilb) {
            return;
        }
        if self.idle_balance_avg(ilb) > 0 {
            return;
        }
        self.rqs[ilb].in_nohz_recently = true;
        if self.nohz_idle_cpus.weight() == self.rqs.len() || self.nohz_load_balancer.is_some() {
            return;
        }
        self.nohz_load_balancer = Some(ilb);
        self.tick_restart(ilb);
    }

    /// select_nohz_load_balancer(0): a CPU leaving idle gives up ownership.
    pub fn select_nohz_load_balancer_exit(&mut self, cpu: usize) {
        if self.avg_load_era() && self.nohz_load_balancer == Some(cpu) {
            self.nohz_load_balancer = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Trace;

    #[test]
    fn cpu_load_decays_by_index() {
        let mut cl = [0u64; CPU_LOAD_IDX_MAX];
        cpu_load_tick(&mut cl, 1024);
        // Rising: (old·(2^i−1) + new + 2^i − 1) >> i.
        assert_eq!(cl, [1024, 512, 256, 128, 64]);
        cpu_load_tick(&mut cl, 1024);
        assert_eq!(cl, [1024, 768, 448, 240, 124]);
        for _ in 0..200 {
            cpu_load_tick(&mut cl, 1024);
        }
        assert_eq!(cl, [1024; 5], "converges to the load, rounding up");
        cpu_load_tick(&mut cl, 0);
        // Falling: no rounding, old·(2^i−1) >> i.
        assert_eq!(cl, [0, 512, 768, 896, 960]);
        for _ in 0..400 {
            cpu_load_tick(&mut cl, 0);
        }
        assert_eq!(cl, [0; 5], "decays to zero");
        // A SCHED_IDLE task (weight 3) on a busy-then-idle CPU.
        let mut cl = [0u64; CPU_LOAD_IDX_MAX];
        cpu_load_tick(&mut cl, 3);
        assert_eq!(cl, [3, 2, 1, 1, 1]);
    }

    /// The P2 case (seed 002) at the CPU level of the 4x4 box: 16 SCHED_IDLE
    /// tasks (weight 3) one per CPU, one nice-0 task joins on a CPU of the
    /// first socket. Seen from another socket's idle-index balancer.
    #[test]
    fn calculate_imbalance_p2_case() {
        let busiest_group_load = 1024 + 4 * 3;
        let mut sds = SdLbStats {
            busiest: Some(0),
            total_load: busiest_group_load + 12 * 3,
            total_pwr: 4 * 4096,
            this_load: 3 * 4 * 1024 / 4096,
            this_nr_running: 4,
            this_load_per_task: 12,
            this_pwr: 4096,
            max_load: busiest_group_load * 1024 / 4096,
            busiest_load_per_task: busiest_group_load,
            busiest_nr_running: 5,
            busiest_group_capacity: 1,
            busiest_pwr: 4096,
            group_imb: true,
            ..Default::default()
        };
        sds.avg_load = SCHED_LOAD_SCALE * sds.total_load / sds.total_pwr;
        assert_eq!((sds.max_load, sds.avg_load, sds.this_load), (259, 67, 3));
        let imb = calculate_imbalance(&mut sds, 3);
        // group_imb: load per task min(1036/5, avg) = 67; no capacity cap;
        // min((259−67)·4096, (67−3)·4096)/1024 = 256 — a SCHED_IDLE task
        // (3/2 ≤ 256) may move, the nice-0 task (1024/2 > 256) may not.
        assert_eq!(sds.busiest_load_per_task, 67);
        assert_eq!(imb, 256);
    }

    /// The same kind of socket seen by 2.6.25 (SCHED_IDLE weight 2): the nice-0
    /// task and a soaker on one CPU, a soaker on each sibling, five tasks on
    /// four CPUs. Not group_imb (1026 − 2 is not above SCHED_LOAD_SCALE), but
    /// over capacity, so busiest.
    #[test]
    fn calculate_imbalance_2625_cases() {
        let busiest_group_load = 1024 + 4 * 2;
        let mk = || SdLbStats {
            busiest: Some(0),
            total_load: busiest_group_load + 12 * 2,
            total_pwr: 4 * 4096,
            this_load: 2 * 4 * 1024 / 4096,
            this_nr_running: 4,
            this_load_per_task: 8,
            this_pwr: 4096,
            max_load: busiest_group_load * 1024 / 4096,
            busiest_load_per_task: busiest_group_load,
            busiest_nr_running: 5,
            busiest_group_capacity: 4,
            busiest_pwr: 4096,
            group_imb: false,
            avg_load: SCHED_LOAD_SCALE * (busiest_group_load + 24) / (4 * 4096),
        };
        let mut sds = mk();
        assert_eq!((sds.max_load, sds.avg_load, sds.this_load), (258, 66, 2));
        // Load per task 1032/5 = 206; max_pull = min(258 − 66, 258 − 206) = 52;
        // min(52·4096, 64·4096)/1024 = 208: one soaker's worth and more, not
        // the nice-0 task.
        assert_eq!(calculate_imbalance_2625(&mut sds), Some(208));
        // 2.6.35 caps the pull at the load above capacity instead:
        // min(192, 1·1024²/4096 = 256) → min(192·4096, 64·4096)/1024 = 256.
        let mut sds = mk();
        assert_eq!(calculate_imbalance(&mut sds, 2), 256);
        // The nice-0 task alone: its group's load is no more than one of its
        // tasks, which 2.6.25 calls balanced.
        let mut sds = SdLbStats {
            max_load: 256,
            avg_load: 66,
            busiest_load_per_task: 1024,
            busiest_nr_running: 1,
            busiest_pwr: 4096,
            this_pwr: 4096,
            ..Default::default()
        };
        assert_eq!(calculate_imbalance_2625(&mut sds), None);
        // Small imbalance: the raw gap plus SCHED_LOAD_SCALE_FUZZ against two
        // tasks; an idle group counts SCHED_LOAD_SCALE per task.
        let mut sds = SdLbStats {
            max_load: 12,
            avg_load: 11,
            this_load: 10,
            this_nr_running: 0,
            busiest_load_per_task: 40,
            busiest_nr_running: 4,
            busiest_pwr: 4096,
            this_pwr: 4096,
            ..Default::default()
        };
        assert_eq!(calculate_imbalance_2625(&mut sds), Some(10));
        assert_eq!(sds.this_load_per_task, SCHED_LOAD_SCALE);
    }

    #[test]
    fn fix_small_imbalance_cases() {
        // 3 nice-0 tasks on two CPUs: 2 vs 1. The gap is one task, imbn = 2:
        // 2048 − 1024 + 1024 ≥ 2·1024, so one task moves (the 2.6 ping-pong).
        let mut sds = SdLbStats {
            this_load: 1024,
            this_nr_running: 1,
            this_load_per_task: 1024,
            this_pwr: 1024,
            max_load: 2048,
            busiest_load_per_task: 1024,
            busiest_pwr: 1024,
            ..Default::default()
        };
        let mut imb = 512;
        fix_small_imbalance(&mut sds, 1024, &mut imb);
        assert_eq!(imb, 1024);

        // Busiest tasks heavier than ours: imbn = 1, so any gap moves one.
        let mut sds = SdLbStats {
            this_load: 1000,
            this_nr_running: 2,
            this_load_per_task: 1000,
            this_pwr: 1024,
            max_load: 1024,
            busiest_load_per_task: 1024,
            busiest_pwr: 1024,
            ..Default::default()
        };
        let mut imb = 12;
        fix_small_imbalance(&mut sds, 0, &mut imb);
        assert_eq!(sds.this_load_per_task, 500);
        assert_eq!(imb, 1024);

        // Too small a gap, and moving would not raise the power used: a
        // 10-CPU local group with one task against a 2-CPU group at half
        // load keeps the imbalance as computed.
        let mut sds = SdLbStats {
            this_load: 102,
            this_nr_running: 1,
            this_load_per_task: 1024,
            this_pwr: 10240,
            max_load: 512,
            busiest_load_per_task: 1024,
            busiest_pwr: 2048,
            ..Default::default()
        };
        let mut imb = 7;
        fix_small_imbalance(&mut sds, 0, &mut imb);
        assert_eq!(imb, 7);

        // Nothing running locally: the CPU's own average stands in.
        let mut sds = SdLbStats {
            max_load: 10,
            busiest_load_per_task: 3,
            busiest_pwr: 1024,
            this_pwr: 1024,
            ..Default::default()
        };
        let mut imb = 0;
        fix_small_imbalance(&mut sds, 0, &mut imb);
        assert_eq!((sds.this_load_per_task, imb), (0, 3));
    }

    #[test]
    fn normal_avg_halves_each_period() {
        let p = SCHED_AVG_PERIOD_NS;
        assert_eq!(decayed_normal_avg(800, 0, p), (800, 0), "not past the period yet");
        assert_eq!(decayed_normal_avg(800, 0, p + 1), (400, p));
        assert_eq!(decayed_normal_avg(800, 0, 3 * p + 1), (100, 3 * p));
        assert_eq!(decayed_normal_avg(800, 0, 200 * p), (0, 199 * p));
        // Always busy with normal work: the power left for SCHED_IDLE is ~0.
        assert_eq!(scale_normal_power(p + p / 2, 0, p / 2), 0);
        // Never: all of it.
        assert_eq!(scale_normal_power(0, 0, p / 2), 1024);
        // Half the time.
        assert_eq!(scale_normal_power(p / 2, 0, 0), 512);
    }

    fn sim_2635(feature_on: bool) -> Sim {
        let features = if feature_on { "features = [\"SD_IDLE_LOAD_BALANCE\"]" } else { "" };
        let text = format!(
            "name = \"t\"\n[machine]\npreset = \"4x4\"\n[kernel]\nversion = \"2.6.35\"\n{features}\n\
             [[task]]\nname = \"hog\"\nprogram = [{{ run = \"1ms\" }}]\n"
        );
        let sc = crate::scenario::load(&text, "t.toml", &[]).expect("scenario");
        Sim::new(&sc, 1, false, Trace::new(false)).expect("sim")
    }

    #[test]
    fn source_and_target_load_bias() {
        let mut sim = sim_2635(false);
        assert_eq!(sim.cfg.mech.balancer, BalancerEra::AvgLoad);
        sim.rqs[5].cfs.load_weight = 1024;
        sim.rqs[5].cpu_load = [1024, 512, 256, 128, 64];
        // idx 0: the instantaneous load.
        assert_eq!((sim.source_load(5, 0), sim.target_load(5, 0)), (1024, 1024));
        // idx 2 reads cpu_load[1]: a source is underestimated, a target not.
        assert_eq!((sim.source_load(5, 2), sim.target_load(5, 2)), (512, 1024));
        // The load left: the history keeps the target looking busy.
        sim.rqs[5].cfs.load_weight = 0;
        assert_eq!((sim.source_load(5, 1), sim.target_load(5, 1)), (0, 1024));
        // NO_LB_BIAS: instantaneous everywhere.
        let v = sim.cfg.version;
        sim.cfg.features.apply("NO_LB_BIAS", v).unwrap();
        assert_eq!((sim.source_load(5, 1), sim.target_load(5, 1)), (0, 0));
        // No SMT on 4x4: every CPU has the full power.
        assert_eq!(sim.power_of(0), 1024);
    }

    #[test]
    fn idle_load_uses_idle_power() {
        let mut sim = sim_2635(true);
        sim.rqs[2].cfs.idle_h_nr_running = 2;
        assert_eq!(sim.idle_load(2), 6, "2 × WEIGHT_IDLEPRIO at full idle power");
        // The CPU spent its whole recent period on SCHED_NORMAL work.
        sim.now = SCHED_AVG_PERIOD_NS / 2;
        sim.rqs[2].normal_avg = SCHED_AVG_PERIOD_NS + SCHED_AVG_PERIOD_NS / 2;
        assert_eq!(sim.idle_power(2), 1);
        assert_eq!(sim.idle_load(2), 6 * 1024);
    }
}
