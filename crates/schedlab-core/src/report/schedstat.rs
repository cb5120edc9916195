//! /proc/schedstat: per CPU and per domain, the balancer's counters,
//! migrations by distance and the RT class's counters.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// schedstat-named counters (/proc/schedstat version 15).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Schedstat {
    /// Per CPU.
    pub cpus: Vec<CpuSchedstat>,
    /// Sums over every CPU and level.
    pub totals: SchedstatTotals,
}

/// One CPU's schedstat line and its domains'.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CpuSchedstat {
    /// The CPU.
    pub cpu: usize,
    /// schedule() calls.
    pub sched_count: u64,
    /// schedule() calls that left the CPU idle.
    pub sched_goidle: u64,
    /// try_to_wake_up() calls issued on this CPU.
    pub ttwu_count: u64,
    /// ...of which woke the task onto this CPU.
    pub ttwu_local: u64,
    /// Time tasks ran on this CPU.
    pub run_ns: u64,
    /// Time tasks waited on this CPU's runqueue.
    pub wait_ns: u64,
    /// Timeslices run on this CPU.
    pub timeslices: u64,
    /// Per sched domain of this CPU, bottom-up.
    pub domains: Vec<DomainSchedstat>,
}

/// One sched domain's schedstat line on one CPU: its name and span, and
/// its load-balance counters. The three-element arrays are indexed by enum
/// cpu_idle_type: [CPU_IDLE, CPU_NOT_IDLE, CPU_NEWLY_IDLE].
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
pub struct DomainSchedstat {
    /// The level's name.
    pub name: String,
    /// CPUs in the span.
    pub span: usize,
    /// The span's CPUs as the kernel prints a cpulist ("0-63,128-191"):
    /// a few ranges, where a list of every CPU made the report quadratic in
    /// CPUs (8 MB of 31 on a 1,024-CPU machine).
    pub cpus: String,
    /// The counters.
    #[serde(flatten)]
    pub counters: LbCounters,
}

/// The fields `#[serde(flatten)]` gives, written as one struct: serde
/// writes a flattened struct through the map path, its keys found by text,
/// which cost a 1,024-CPU report's conversion to Python millions of
/// instructions (schedstat's per-domain rows are most of its values).
impl Serialize for DomainSchedstat {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        // Every field by name: a field added to either struct fails to
        // compile here until it is written.
        let DomainSchedstat { name, span, cpus, counters } = self;
        let LbCounters {
            lb_count,
            lb_balanced,
            lb_failed,
            lb_imbalance,
            lb_gained,
            lb_nobusyg,
            lb_nobusyq,
            alb_count,
            alb_pushed,
            alb_failed,
            ttwu_wake_remote,
            ttwu_move_affine,
        } = counters;
        let mut st = s.serialize_struct("DomainSchedstat", 15)?;
        st.serialize_field("name", name)?;
        st.serialize_field("span", span)?;
        st.serialize_field("cpus", cpus)?;
        st.serialize_field("lb_count", lb_count)?;
        st.serialize_field("lb_balanced", lb_balanced)?;
        st.serialize_field("lb_failed", lb_failed)?;
        st.serialize_field("lb_imbalance", lb_imbalance)?;
        st.serialize_field("lb_gained", lb_gained)?;
        st.serialize_field("lb_nobusyg", lb_nobusyg)?;
        st.serialize_field("lb_nobusyq", lb_nobusyq)?;
        st.serialize_field("alb_count", alb_count)?;
        st.serialize_field("alb_pushed", alb_pushed)?;
        st.serialize_field("alb_failed", alb_failed)?;
        st.serialize_field("ttwu_wake_remote", ttwu_wake_remote)?;
        st.serialize_field("ttwu_move_affine", ttwu_move_affine)?;
        st.end()
    }
}

/// One domain's load-balance counters on one CPU (the scheduler keeps them
/// in this form as it runs). The three-element arrays are indexed by enum
/// cpu_idle_type: [CPU_IDLE, CPU_NOT_IDLE, CPU_NEWLY_IDLE].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LbCounters {
    /// load_balance() calls.
    pub lb_count: [u64; 3],
    /// ...that found the domain balanced.
    pub lb_balanced: [u64; 3],
    /// ...that found an imbalance but moved nothing.
    pub lb_failed: [u64; 3],
    /// Sum of the imbalances found.
    pub lb_imbalance: [u64; 3],
    /// Tasks pulled.
    pub lb_gained: [u64; 3],
    /// No busiest group found.
    pub lb_nobusyg: [u64; 3],
    /// No busiest queue found.
    pub lb_nobusyq: [u64; 3],
    /// Active balances attempted.
    pub alb_count: u64,
    /// Active balances that moved a task.
    pub alb_pushed: u64,
    /// Active balances that moved nothing.
    pub alb_failed: u64,
    /// Wakeups onto another CPU than the waker's, in this domain.
    pub ttwu_wake_remote: u64,
    /// wake_affine() decisions to pull the wakee to the waker's CPU.
    pub ttwu_move_affine: u64,
}

/// schedstat totals.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SchedstatTotals {
    /// Sum of alb_pushed.
    pub alb_pushed: u64,
    /// Sum of lb_failed.
    pub lb_failed: u64,
    /// Sum of lb_gained.
    pub lb_gained: u64,
}

/// Task migrations by how far they went.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MigrationsByDistance {
    /// To an SMT sibling of the same core.
    pub smt: u64,
    /// To another core sharing the LLC.
    pub llc: u64,
    /// To another LLC of the same node.
    pub remote_llc: u64,
    /// To another node.
    pub remote_node: u64,
}

/// The RT class's counters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RtInfo {
    /// RT tasks are balanced by push/pull (2.6.25+), not by the generic
    /// balancer.
    pub push_pull: bool,
    /// Tasks moved by push/pull.
    pub rt_migrations: u64,
    /// RT_PUSH_IPI: IPIs of the push irq_work chain.
    pub push_ipis: u64,
    /// Times an rt_rq was throttled (sched_rt_runtime_us exhausted).
    pub throttle_events: u64,
}
