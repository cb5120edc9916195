//! Models kernel/sched/cpupri.c (2.6.27+, Gregory Haskins): the 2-D
//! priority map the RT push logic searches for the lowest-priority CPUs.
//!
//! pri_to_cpu[level] holds the CPUs whose *highest runnable* priority is at
//! that level (a mask plus a count); cpu_to_pri[cpu] is the inverse.
//! Levels (2.6.27 .. 5.x, CPUPRI_NR_PRIORITIES = MAX_RT_PRIO + 2 = 102):
//! INVALID (-1), IDLE (0), NORMAL (1), then RT at `MAX_RT_PRIO - prio + 1`
//! (kernel prio 98, rt_priority 1 -> level 3; kernel prio 0 -> level 101).
//!
//! cpupri_set is O(1); cpupri_find scans the levels from the bottom up to just
//! below the task's own level and stops at the first one whose mask meets the
//! task's affinity: O(1) for an unrestricted task (the lowest non-empty level
//! always meets a full mask), at most 102 steps otherwise.

use crate::cpumask::CpuMask;
use crate::prio::{MAX_PRIO, MAX_RT_PRIO};

pub const CPUPRI_NR_PRIORITIES: usize = MAX_RT_PRIO + 3;
/// CPUPRI_HIGHER: a CPU with queued deadline tasks, above every RT level
/// (the model's levels are the pre-6.1 ones, NORMAL at 1, so it is one
/// above the highest RT level, 101).
pub const CPUPRI_HIGHER: i32 = MAX_RT_PRIO as i32 + 2;
pub const CPUPRI_INVALID: i32 = -1;
pub const CPUPRI_IDLE: i32 = 0;
pub const CPUPRI_NORMAL: i32 = 1;

/// convert_prio(): a kernel prio (0..98 RT, 100..139 fair, 140 idle) to a level.
///
/// Deviation (none in behaviour): the kernel never calls cpupri_set with
/// MAX_PRIO, so IDLE stays empty and idle CPUs sit at NORMAL with the CPUs
/// running fair tasks (6.1 dropped the IDLE level for that reason); the model
/// does the same, and keeps the IDLE level only so the map has its shape.
pub fn convert_prio(prio: i32) -> i32 {
    if prio == CPUPRI_INVALID {
        CPUPRI_INVALID
    } else if prio == MAX_PRIO {
        CPUPRI_IDLE
    } else if prio >= MAX_RT_PRIO as i32 {
        CPUPRI_NORMAL
    } else {
        MAX_RT_PRIO as i32 - prio + 1
    }
}

#[derive(Debug, Clone)]
pub struct CpuPri {
    /// Per level: (count, mask) — struct cpupri_vec.
    pub pri_to_cpu: Vec<(u32, CpuMask)>,
    /// Per CPU: its level, CPUPRI_INVALID while offline (never, here).
    pub cpu_to_pri: Vec<i32>,
}

impl CpuPri {
    /// cpupri_init(); every CPU starts at NORMAL (nothing RT runs).
    pub fn new(nr_cpus: usize) -> Self {
        let mut cp = CpuPri {
            pri_to_cpu: vec![(0, CpuMask::new(nr_cpus)); CPUPRI_NR_PRIORITIES],
            cpu_to_pri: vec![CPUPRI_INVALID; nr_cpus],
        };
        for cpu in 0..nr_cpus {
            cp.set(cpu, MAX_RT_PRIO as i32);
        }
        cp
    }

    /// cpupri_set(cp, cpu, newpri): `newpri` is a kernel prio (MAX_RT_PRIO
    /// for "no RT task"). O(1).
    pub fn set(&mut self, cpu: usize, newpri: i32) {
        self.set_level(cpu, convert_prio(newpri));
    }

    /// cpupri_set(cp, cpu, CPUPRI_HIGHER): deadline tasks are queued there.
    pub fn set_higher(&mut self, cpu: usize) {
        self.set_level(cpu, CPUPRI_HIGHER);
    }

    fn set_level(&mut self, cpu: usize, new: i32) {
        let old = self.cpu_to_pri[cpu];
        if new == old {
            return;
        }
        if new != CPUPRI_INVALID {
            let v = &mut self.pri_to_cpu[new as usize];
            v.1.set(cpu);
            v.0 += 1;
        }
        if old != CPUPRI_INVALID {
            let v = &mut self.pri_to_cpu[old as usize];
            v.0 -= 1;
            v.1.clear(cpu);
        }
        self.cpu_to_pri[cpu] = new;
    }

    /// cpupri_find(cp, p, lowest_mask): the CPUs of the lowest level below
    /// the task's own (`prio` is the task's kernel prio) that meet `allowed`.
    pub fn find(&self, prio: i32, allowed: &CpuMask) -> Option<CpuMask> {
        let task_pri = convert_prio(prio);
        for idx in 0..task_pri.max(0) as usize {
            let (cnt, mask) = &self.pri_to_cpu[idx];
            if *cnt == 0 || !mask.intersects(allowed) {
                continue;
            }
            return Some(mask.and(allowed));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_follow_kernel_prio() {
        assert_eq!(convert_prio(MAX_PRIO), CPUPRI_IDLE);
        assert_eq!(convert_prio(120), CPUPRI_NORMAL);
        assert_eq!(convert_prio(100), CPUPRI_NORMAL);
        assert_eq!(convert_prio(98), 3); // rt_priority 1
        assert_eq!(convert_prio(0), 101); // rt_priority 99
        assert_eq!(convert_prio(-1), CPUPRI_INVALID);
    }

    #[test]
    fn set_moves_a_cpu_between_levels() {
        let mut cp = CpuPri::new(4);
        assert_eq!(cp.pri_to_cpu[CPUPRI_NORMAL as usize].0, 4);
        cp.set(2, 49); // rt_priority 50
        assert_eq!(cp.cpu_to_pri[2], 52);
        assert_eq!(cp.pri_to_cpu[CPUPRI_NORMAL as usize].0, 3);
        assert!(cp.pri_to_cpu[52].1.test(2));
        cp.set(2, 49); // no-op
        assert_eq!(cp.pri_to_cpu[52].0, 1);
        cp.set(2, 100);
        assert_eq!(cp.pri_to_cpu[52].0, 0);
        assert!(!cp.pri_to_cpu[52].1.test(2));
        assert_eq!(cp.pri_to_cpu[CPUPRI_NORMAL as usize].0, 4);
    }

    #[test]
    fn find_returns_the_lowest_level_meeting_affinity() {
        let mut cp = CpuPri::new(4);
        cp.set(0, 10); // rt 89
        cp.set(1, 50); // rt 49
        cp.set(2, 90); // rt 9
                       // CPU 3 runs no RT task: it is the lowest.
        let all = CpuMask::full(4);
        assert_eq!(cp.find(60, &all).unwrap().iter().collect::<Vec<_>>(), vec![3]);
        // Restricted to CPUs 0-2: the lowest RT level there is CPU 2 (prio 90).
        let m = CpuMask::from_cpus(4, &[0, 1, 2]);
        assert_eq!(cp.find(60, &m).unwrap().iter().collect::<Vec<_>>(), vec![2]);
        // A prio-95 task cannot preempt any of CPUs 0-2.
        assert!(cp.find(95, &m).is_none());
        // Equal priority is not lower: a prio-90 task finds nothing on 0-2.
        assert!(cp.find(90, &m).is_none());
        // A fair task never finds a CPU (nothing is below NORMAL).
        assert!(cp.find(120, &all).is_none());
        // Two CPUs at the same lowest level: both are in the mask.
        cp.set(3, 90);
        assert_eq!(cp.find(60, &all).unwrap().iter().collect::<Vec<_>>(), vec![2, 3]);
    }
}
