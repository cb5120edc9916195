//! Models include/linux/sched/prio.h, include/uapi/linux/sched.h and the
//! weight tables of kernel/sched/core.c: scheduling policies, the priority
//! ranges, nice-to-weight and the fixed-point arithmetic on weights.
//! Imports nothing: every other room may use it.

/// MIN_NICE, MAX_NICE: the nice range, -20..19 (include/linux/sched/prio.h).
pub const MIN_NICE: i32 = -20;
pub const MAX_NICE: i32 = 19;
/// NICE_WIDTH: the nice levels, 40.
pub const NICE_WIDTH: i32 = MAX_NICE - MIN_NICE + 1;
/// MAX_RT_PRIO: kernel prios 0..99 are RT.
pub const MAX_RT_PRIO: usize = 100;
/// MAX_DL_PRIO: every SCHED_DEADLINE task has prio MAX_DL_PRIO - 1 = -1,
/// above every RT prio (include/linux/sched/prio.h, __normal_prio).
pub const MAX_DL_PRIO: i32 = 0;
/// MAX_PRIO (MAX_RT_PRIO + NICE_WIDTH): kernel prios 100..139 are the fair
/// nice levels; 140 is the idle task's (init_idle).
pub const MAX_PRIO: i32 = MAX_RT_PRIO as i32 + NICE_WIDTH;
/// DEFAULT_PRIO (MAX_RT_PRIO + NICE_WIDTH / 2): nice 0's prio, 120.
pub const DEFAULT_PRIO: i32 = MAX_RT_PRIO as i32 + NICE_WIDTH / 2;
/// The largest sched_param.sched_priority of SCHED_FIFO and SCHED_RR,
/// MAX_RT_PRIO - 1 = 99 (sched_setscheduler's check; MAX_USER_RT_PRIO - 1
/// before 5.12, the same value); the smallest is 1.
pub const MAX_RT_PRIORITY: u32 = MAX_RT_PRIO as u32 - 1;

/// Whether `n` is a nice value (MIN_NICE..=MAX_NICE).
pub fn is_nice(n: i64) -> bool {
    (MIN_NICE as i64..=MAX_NICE as i64).contains(&n)
}

/// The nice range as the errors' "accepted" text says it: `-20..19`.
pub fn nice_range() -> String {
    format!("{MIN_NICE}..{MAX_NICE}")
}

/// NICE_TO_PRIO: a fair task's static prio, DEFAULT_PRIO + nice (120 + nice).
pub const fn nice_to_prio(nice: i32) -> i32 {
    DEFAULT_PRIO + nice
}

/// An RT task's prio, MAX_RT_PRIO - 1 - rt_priority (__normal_prio):
/// rt_priority 99 is prio 0, rt_priority 1 is 98.
pub const fn rt_priority_to_prio(rt_priority: u32) -> i32 {
    MAX_RT_PRIO as i32 - 1 - rt_priority as i32
}

/// The scheduling classes in pick order (kernel/sched/sched.h:
/// for_each_class walks stop -> dl -> rt -> fair -> idle). Defined once
/// here, beside the policies, so that a task carries its class
/// (p->sched_class) without importing the class table, sched/class.rs,
/// which re-exports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SchedClass {
    Stop,
    Dl,
    Rt,
    Fair,
    Idle,
}

impl SchedClass {
    /// for_each_class(): the highest class first.
    pub const ORDER: [SchedClass; 5] =
        [SchedClass::Stop, SchedClass::Dl, SchedClass::Rt, SchedClass::Fair, SchedClass::Idle];
}

impl SchedClass {
    /// __setscheduler_class() (6.12; inline in __setscheduler_prio before):
    /// the class a task of `policy` runs in. (The model has no priority
    /// inheritance, so the policy alone decides.)
    #[inline(always)]
    pub fn of_policy(policy: Policy) -> SchedClass {
        if policy.is_dl() {
            SchedClass::Dl
        } else if policy.is_rt() {
            SchedClass::Rt
        } else {
            SchedClass::Fair
        }
    }
}

/// Scheduling policy (include/uapi/linux/sched.h).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    Normal,
    Batch,
    Idle,
    Fifo,
    Rr,
    /// SCHED_DEADLINE (3.14+): its runtime, deadline and period are the
    /// task's `DlAttr` (sched/deadline.rs).
    Deadline,
}

impl Policy {
    pub fn parse(s: &str) -> Option<Policy> {
        Some(match s {
            "SCHED_NORMAL" | "SCHED_OTHER" | "normal" | "other" => Policy::Normal,
            "SCHED_BATCH" | "batch" => Policy::Batch,
            "SCHED_IDLE" | "idle" => Policy::Idle,
            "SCHED_FIFO" | "fifo" => Policy::Fifo,
            "SCHED_RR" | "rr" => Policy::Rr,
            "SCHED_DEADLINE" | "deadline" => Policy::Deadline,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Policy::Normal => "SCHED_NORMAL",
            Policy::Batch => "SCHED_BATCH",
            Policy::Idle => "SCHED_IDLE",
            Policy::Fifo => "SCHED_FIFO",
            Policy::Rr => "SCHED_RR",
            Policy::Deadline => "SCHED_DEADLINE",
        }
    }

    /// dl_policy().
    #[inline]
    pub fn is_dl(self) -> bool {
        self == Policy::Deadline
    }

    pub fn is_rt(self) -> bool {
        matches!(self, Policy::Fifo | Policy::Rr)
    }
}

/// struct sched_attr's SCHED_DEADLINE part, as sched_setattr() takes it
/// (ns; `period` 0 means the deadline). Validated by __checkparam_dl at
/// load (sched/deadline.rs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DlAttr {
    pub runtime: u64,
    pub deadline: u64,
    pub period: u64,
    /// sched_flags: SCHED_FLAG_RECLAIM, SCHED_FLAG_DL_OVERRUN.
    pub flags: u64,
}

/// sched_attr.sched_flags (include/uapi/linux/sched.h): GRUB reclaiming
/// (4.13).
pub const SCHED_FLAG_RECLAIM: u64 = 0x02;
/// SIGXCPU on a runtime overrun (4.16).
pub const SCHED_FLAG_DL_OVERRUN: u64 = 0x04;

pub const NICE_0_LOAD: u64 = 1024;
pub const NICE_0_SHIFT: u32 = 10;
pub const WMULT_SHIFT: u32 = 32;

/// sched_prio_to_weight [kernel/sched/core.c @6.1; identical since 2.6.23].
pub const SCHED_PRIO_TO_WEIGHT: [u32; NICE_WIDTH as usize] = [
    /* -20 */ 88761, 71755, 56483, 46273, 36291, //
    /* -15 */ 29154, 23254, 18705, 14949, 11916, //
    /* -10 */ 9548, 7620, 6100, 4904, 3906, //
    /*  -5 */ 3121, 2501, 1991, 1586, 1277, //
    /*   0 */ 1024, 820, 655, 526, 423, //
    /*   5 */ 335, 272, 215, 172, 137, //
    /*  10 */ 110, 87, 70, 56, 45, //
    /*  15 */ 36, 29, 23, 18, 15,
];

/// sched_prio_to_wmult = 2^32 / weight [kernel/sched/core.c @6.1].
pub const SCHED_PRIO_TO_WMULT: [u32; NICE_WIDTH as usize] = [
    /* -20 */ 48388, 59856, 76040, 92818, 118348, //
    /* -15 */ 147320, 184698, 229616, 287308, 360437, //
    /* -10 */ 449829, 563644, 704093, 875809, 1099582, //
    /*  -5 */ 1376151, 1717300, 2157191, 2708050, 3363326, //
    /*   0 */ 4194304, 5237765, 6557202, 8165337, 10153587, //
    /*   5 */ 12820798, 15790321, 19976592, 24970740, 31350126, //
    /*  10 */ 39045157, 49367440, 61356676, 76695844, 95443717, //
    /*  15 */ 119304647, 148102320, 186737708, 238609294, 286331153,
];

/// Load weight and inverse weight for a fair task (set_load_weight).
/// `weight_idleprio` is the version's WEIGHT_IDLEPRIO (2 before 2.6.29,
/// 3 after); `rt_in_load`: RT tasks carry a load weight (2.6.24, whose
/// generic balancer moves them; rt_legacy.rs).
pub fn load_weight(policy: Policy, nice: i32, weight_idleprio: (u32, u32), rt_in_load: bool) -> (u32, u32) {
    if policy == Policy::Idle {
        return weight_idleprio;
    }
    if policy.is_rt() && rt_in_load {
        // set_load_weight(): RT tasks weigh twice nice -20 [sched.c @2.6.24].
        return (RT_LEGACY_WEIGHT, RT_LEGACY_WMULT);
    }
    // sched_prio_to_weight[static_prio - MAX_RT_PRIO], i.e. nice - MIN_NICE.
    let i = (nice - MIN_NICE).clamp(0, NICE_WIDTH - 1) as usize;
    (SCHED_PRIO_TO_WEIGHT[i], SCHED_PRIO_TO_WMULT[i])
}

/// update_load_set() + __update_inv_weight(): a weight and its inverse,
/// WMULT_CONST / w (1 for a weight above it, WMULT_CONST for 0).
pub fn load_weight_of(w: u32) -> (u32, u32) {
    let inv = u32::MAX.checked_div(w).unwrap_or(u32::MAX);
    (w, inv.max(1))
}

/// __calc_delta: delta * weight / lw, using the precomputed inverse weight
/// (delta * weight * wmult >> 32), as the kernel does to avoid a division.
/// Done in 128 bits so no precision-saving shifts are needed.
#[inline]
pub fn calc_delta(delta: u64, weight: u64, inv_weight: u32) -> u64 {
    ((delta as u128 * weight as u128 * inv_weight as u128) >> WMULT_SHIFT) as u64
}

/// calc_delta_fair: delta_exec scaled to virtual time (delta * 1024 / w).
#[inline]
pub fn calc_delta_fair(delta: u64, weight: u32, inv_weight: u32) -> u64 {
    if weight as u64 == NICE_0_LOAD {
        delta
    } else {
        calc_delta(delta, NICE_0_LOAD, inv_weight)
    }
}

/// set_load_weight() for RT tasks before 2.6.25: prio_to_weight[0] * 2.
pub const RT_LEGACY_WEIGHT: u32 = 2 * 88761;
/// Its inverse: prio_to_wmult[0] >> 1.
pub const RT_LEGACY_WMULT: u32 = 48388 >> 1;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weight_tables_are_consistent() {
        // Each nice level is worth ~1.25x, and wmult = 2^32 / weight.
        for i in 0..NICE_WIDTH as usize {
            let w = SCHED_PRIO_TO_WEIGHT[i] as u64;
            let inv = SCHED_PRIO_TO_WMULT[i] as u64;
            let exact = (1u64 << 32) / w;
            assert!(exact.abs_diff(inv) <= 1, "nice {}: {} vs {}", i as i32 + MIN_NICE, inv, exact);
            if i > 0 {
                let r = SCHED_PRIO_TO_WEIGHT[i - 1] as f64 / w as f64;
                assert!((1.15..1.35).contains(&r), "ratio at {i}: {r}");
            }
        }
        assert_eq!(SCHED_PRIO_TO_WEIGHT[20], 1024);
        assert_eq!(SCHED_PRIO_TO_WEIGHT[39], 15);
    }

    #[test]
    fn prio_h_values() {
        // include/linux/sched/prio.h.
        assert_eq!((MIN_NICE, MAX_NICE, NICE_WIDTH), (-20, 19, 40));
        assert_eq!((MAX_PRIO, DEFAULT_PRIO, MAX_RT_PRIORITY), (140, 120, 99));
        assert_eq!((nice_to_prio(MIN_NICE), nice_to_prio(0), nice_to_prio(MAX_NICE)), (100, 120, 139));
        assert_eq!((rt_priority_to_prio(MAX_RT_PRIORITY), rt_priority_to_prio(1)), (0, 98));
        assert!(is_nice(-20) && is_nice(19) && !is_nice(-21) && !is_nice(20));
        assert_eq!(nice_range(), "-20..19");
    }

    #[test]
    fn idle_weight_by_version() {
        let (old, new) = ((2, 2_147_483_648), (3, 1_431_655_765));
        assert_eq!(load_weight(Policy::Idle, 0, old, false).0, 2);
        assert_eq!(load_weight(Policy::Idle, 0, new, false).0, 3);
        assert_eq!(load_weight(Policy::Normal, 19, new, false).0, 15);
        assert_eq!(load_weight(Policy::Fifo, 0, new, true).0, 2 * 88761);
    }

    #[test]
    fn virtual_time_scales_with_weight() {
        // nice 0: identity; nice 19 (w 15) advances 1024/15 ~ 68x faster.
        assert_eq!(calc_delta_fair(1_000_000, 1024, 4194304), 1_000_000);
        let v = calc_delta_fair(1_000_000, 15, 286331153);
        assert!((68_260_000..68_270_000).contains(&v), "{v}");
        let v = calc_delta_fair(1_000_000, 3, 1_431_655_765);
        assert!((341_330_000..341_340_000).contains(&v), "{v}");
    }
}
