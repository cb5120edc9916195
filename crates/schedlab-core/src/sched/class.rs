//! The scheduling classes (kernel/sched/sched.h: struct sched_class).

/// The scheduling classes in pick order (kernel/sched/sched.h: for_each_class
/// walks stop -> dl -> rt -> fair -> idle). Defined once here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SchedClass {
    Stop,
    Rt,
    Fair,
    Idle,
}
