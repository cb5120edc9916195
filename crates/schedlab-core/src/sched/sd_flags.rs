//! Models include/linux/sched/sd_flags.h: the sched-domain flags, their
//! names as /proc/sys/kernel/sched_domain/.../flags prints them, and the
//! flag classes (SDF_SHARED_CHILD, SDF_NEEDS_GROUPS) the topology code
//! tests. Imports nothing.

// ---------------------------------------------------------------------------
// Domain flags. Values are the 2.6.3x bits of include/linux/sched.h @2.6.35
// (docs/LINUX-FACTS.md §3.2); flags that 2.6.35 lacks get fresh bits above 0x2000.
// 6.x generates its values from include/linux/sched/sd_flags.h; the values
// never leave schedlab, so one numbering serves every version.
// ---------------------------------------------------------------------------

/// Balance this domain at all (removed in 5.8: every domain balances).
pub const SD_LOAD_BALANCE: u32 = 0x0001;
/// Balance when the CPU is about to go idle.
pub const SD_BALANCE_NEWIDLE: u32 = 0x0002;
/// Pick the idlest CPU of the domain at exec.
pub const SD_BALANCE_EXEC: u32 = 0x0004;
/// Pick the idlest CPU of the domain at fork.
pub const SD_BALANCE_FORK: u32 = 0x0008;
/// Take the slow (find_idlest) path at wakeup (2.6.3x+; asym capacity only in 4.16/5.x).
pub const SD_BALANCE_WAKE: u32 = 0x0010;
/// Allow waking onto the waker's CPU.
pub const SD_WAKE_AFFINE: u32 = 0x0020;
/// 2.6.3x: prefer the waker's domain (never set by the templates).
pub const SD_PREFER_LOCAL: u32 = 0x0040;
/// Members share CPU capacity: SMT siblings (SD_SHARE_CPUPOWER in 2.6.x).
pub const SD_SHARE_CPUCAPACITY: u32 = 0x0080;
/// 2.6.x name of SD_SHARE_CPUCAPACITY.
pub const SD_SHARE_CPUPOWER: u32 = SD_SHARE_CPUCAPACITY;
/// 2.6.x power-saving balance (sched_mc/smt_power_savings; off by default).
pub const SD_POWERSAVINGS_BALANCE: u32 = 0x0100;
/// Members share the last-level cache.
pub const SD_SHARE_PKG_RESOURCES: u32 = 0x0200;
/// 6.12 name of SD_SHARE_PKG_RESOURCES.
pub const SD_SHARE_LLC: u32 = SD_SHARE_PKG_RESOURCES;
/// Only one CPU at a time balances this domain (global trylock).
pub const SD_SERIALIZE: u32 = 0x0400;
/// Place busy tasks on the preferred CPUs (ITMT, POWER SMT); never set here.
pub const SD_ASYM_PACKING: u32 = 0x0800;
/// Spread tasks to sibling groups first (2.6.32+).
pub const SD_PREFER_SIBLING: u32 = 0x1000;
/// Groups may overlap (NUMA levels, 3.x+).
pub const SD_OVERLAP: u32 = 0x2000;
/// A NUMA level (4.x+). Fresh bit.
pub const SD_NUMA: u32 = 0x4000;
/// Members differ in CPU capacity (big.LITTLE); never set on schedlab machines. Fresh bit.
pub const SD_ASYM_CPUCAPACITY: u32 = 0x8000;
/// 2.6.25 only: pull the wakee to an idle CPU of the domain. Its kernel bit
/// 0x10 was reused by SD_BALANCE_WAKE, hence a fresh bit here.
pub const SD_WAKE_IDLE: u32 = 0x1_0000;
/// 2.6.25 only: passive balancing at wakeup. Its kernel bit 0x40 was reused
/// by SD_PREFER_LOCAL, hence a fresh bit here.
pub const SD_WAKE_BALANCE: u32 = 0x2_0000;
/// Members share an L2 cluster (6.x CLS level); not built here. Fresh bit.
pub const SD_CLUSTER: u32 = 0x4_0000;

/// Names for printing, in bit order.
pub const SD_FLAG_NAMES: &[(u32, &str)] = &[
    (SD_LOAD_BALANCE, "SD_LOAD_BALANCE"),
    (SD_BALANCE_NEWIDLE, "SD_BALANCE_NEWIDLE"),
    (SD_BALANCE_EXEC, "SD_BALANCE_EXEC"),
    (SD_BALANCE_FORK, "SD_BALANCE_FORK"),
    (SD_BALANCE_WAKE, "SD_BALANCE_WAKE"),
    (SD_WAKE_AFFINE, "SD_WAKE_AFFINE"),
    (SD_PREFER_LOCAL, "SD_PREFER_LOCAL"),
    (SD_SHARE_CPUCAPACITY, "SD_SHARE_CPUCAPACITY"),
    (SD_POWERSAVINGS_BALANCE, "SD_POWERSAVINGS_BALANCE"),
    (SD_SHARE_PKG_RESOURCES, "SD_SHARE_PKG_RESOURCES"),
    (SD_SERIALIZE, "SD_SERIALIZE"),
    (SD_ASYM_PACKING, "SD_ASYM_PACKING"),
    (SD_PREFER_SIBLING, "SD_PREFER_SIBLING"),
    (SD_OVERLAP, "SD_OVERLAP"),
    (SD_NUMA, "SD_NUMA"),
    (SD_ASYM_CPUCAPACITY, "SD_ASYM_CPUCAPACITY"),
    (SD_WAKE_IDLE, "SD_WAKE_IDLE"),
    (SD_WAKE_BALANCE, "SD_WAKE_BALANCE"),
    (SD_CLUSTER, "SD_CLUSTER"),
];

/// "SD_BALANCE_NEWIDLE|SD_WAKE_AFFINE", or "0".
pub fn flag_names(flags: u32) -> String {
    let names: Vec<&str> = SD_FLAG_NAMES.iter().filter(|(f, _)| flags & f != 0).map(|(_, n)| *n).collect();
    if names.is_empty() {
        "0".to_string()
    } else {
        names.join("|")
    }
}

/// Flags marked SDF_SHARED_CHILD in sd_flags.h @6.1: if a domain has one,
/// its children have it too, so highest_flag_domain may stop at the first
/// domain without it.
pub const SD_SHARED_CHILD_MASK: u32 = SD_BALANCE_NEWIDLE
    | SD_BALANCE_EXEC
    | SD_BALANCE_FORK
    | SD_BALANCE_WAKE
    | SD_WAKE_AFFINE
    | SD_SHARE_CPUCAPACITY
    | SD_CLUSTER
    | SD_SHARE_PKG_RESOURCES
    | SD_ASYM_PACKING
    | SD_PREFER_SIBLING;

/// SD_DEGENERATE_GROUPS_MASK @6.1: the flags marked SDF_NEEDS_GROUPS in
/// sd_flags.h, meaningless on a domain with a single group.
pub const SD_DEGENERATE_GROUPS_MASK: u32 = SD_BALANCE_NEWIDLE
    | SD_BALANCE_EXEC
    | SD_BALANCE_FORK
    | SD_BALANCE_WAKE
    | SD_SHARE_CPUCAPACITY
    | SD_CLUSTER
    | SD_SHARE_PKG_RESOURCES
    | SD_SERIALIZE
    | SD_ASYM_PACKING
    | SD_PREFER_SIBLING
    | SD_OVERLAP
    | SD_NUMA
    | SD_ASYM_CPUCAPACITY;
