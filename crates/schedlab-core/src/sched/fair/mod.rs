//! Models kernel/sched/fair.c, split as the kernel's 14k-line file asks to
//! be: the entity (CFS and EEVDF), PELT, the wakeup path and the balancer.

pub mod balance;
pub mod balance_avg;
pub mod entity;
pub mod wakeup;
pub mod wakeup_avg;
