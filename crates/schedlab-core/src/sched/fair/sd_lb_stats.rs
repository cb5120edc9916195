//! The imbalance arithmetic of the avg_load balancer [sched_fair.c
//! @2.6.35; sched.c @2.6.24, @2.6.25]: struct sd_lb_stats, and how much
//! weighted load to move once the busiest group is known
//! (calculate_imbalance, fix_small_imbalance, and the 2.6.24/2.6.25 inline
//! form). Pure functions of the statistics, unit-tested below.

use crate::sched::fair::cpu_load::SCHED_LOAD_SCALE;

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

/// DIV_ROUND_CLOSEST(power, SCHED_LOAD_SCALE).
pub(crate) fn capacity_of_power(power: u64) -> u64 {
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
pub(crate) fn small_imbalance_imbn(sds: &mut SdLbStats, idle_per_task: u64) -> u64 {
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
pub(crate) fn moving_one_task_gains_power(sds: &SdLbStats) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
