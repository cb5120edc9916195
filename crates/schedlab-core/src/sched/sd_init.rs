//! The per-level parameters of the sched domains and the rules that drop
//! degenerate ones: the 2.6.x SD_*_INIT templates [include/linux/topology.h,
//! include/asm-x86/topology.h @2.6.25; include/linux/topology.h,
//! arch/x86/include/asm/topology.h @2.6.35] and sd_init() of
//! kernel/sched/topology.c [@4.16, @5.5, @6.1, @6.12], chosen by
//! `cfg.mech.sd_init`; sd_degenerate() and sd_parent_degenerate(). The
//! construction that uses them is `sched/topology.rs`.

use crate::kernel::SdInit as Era;
use crate::sched::sd_flags::*;

/// RECLAIM_DISTANCE / node_reclaim_distance [include/linux/topology.h,
/// kernel/sched/topology.c @4.16 .. @6.12]: NUMA levels beyond it lose
/// EXEC, FORK and WAKE_AFFINE.
pub const RECLAIM_DISTANCE: u32 = 30;
/// SMT capacity gain, ~15% [SD_SIBLING_INIT @2.6.35; sd_init @4.16].
pub const SMT_GAIN: u32 = 1178;

// ---------------------------------------------------------------------------
// Eras and per-level parameters
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Smt,
    Mc,
    /// DIE / PKG (4.16+) or CPU (2.6.x): the node, despite the name.
    Pkg,
    /// 4.16+: the NUMA identity level; 2.6.x: the node and its nearest nodes.
    Node,
    /// 4.16+ NUMA level of one remote distance.
    Numa,
    /// 2.6.x: all CPUs, on machines of more than 16 nodes' worth of CPUs.
    AllNodes,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Params {
    pub(crate) flags: u32,
    pub(crate) min_interval_ms: u64,
    pub(crate) max_interval_ms: u64,
    pub(crate) busy_factor: u32,
    pub(crate) imbalance_pct: u32,
    pub(crate) cache_nice_tries: u32,
    /// busy, idle, newidle, wake, forkexec.
    pub(crate) idx: [usize; 5],
    pub(crate) smt_gain: u32,
}

/// A template: `flags, min, max, busy_factor, imbalance_pct, cache_nice_tries, idx`.
pub(crate) fn tmpl(flags: u32, min: u64, max: u64, busy: u32, imb: u32, cnt: u32, idx: [usize; 5]) -> Params {
    Params {
        flags,
        min_interval_ms: min,
        max_interval_ms: max,
        busy_factor: busy,
        imbalance_pct: imb,
        cache_nice_tries: cnt,
        idx,
        smt_gain: 0,
    }
}

pub(crate) const LB: u32 = SD_LOAD_BALANCE;
pub(crate) const NEWIDLE: u32 = SD_BALANCE_NEWIDLE;
pub(crate) const EXEC: u32 = SD_BALANCE_EXEC;
pub(crate) const FORK: u32 = SD_BALANCE_FORK;
pub(crate) const AFFINE: u32 = SD_WAKE_AFFINE;

/// The 2.6.25 templates [include/linux/topology.h SD_SIBLING_INIT,
/// SD_MC_INIT, SD_CPU_INIT, SD_ALLNODES_INIT; include/asm-x86/topology.h
/// SD_NODE_INIT @2.6.25]. BALANCE_FOR_MC_POWER / BALANCE_FOR_PKG_POWER add
/// nothing with sched_{mc,smt}_power_savings at their default 0.
pub(crate) fn tmpl_2_6_25(kind: Kind, nr_cpus: usize) -> Params {
    match kind {
        Kind::Smt => tmpl(
            LB | NEWIDLE | FORK | EXEC | AFFINE | SD_WAKE_IDLE | SD_SHARE_CPUPOWER,
            1,
            2,
            64,
            110,
            0,
            [0, 0, 0, 0, 0],
        ),
        Kind::Mc => {
            tmpl(LB | NEWIDLE | FORK | EXEC | AFFINE | SD_SHARE_PKG_RESOURCES, 1, 4, 64, 125, 1, [2, 0, 0, 1, 1])
        }
        Kind::Pkg => tmpl(LB | NEWIDLE | FORK | EXEC | AFFINE, 1, 4, 64, 125, 1, [2, 1, 2, 1, 1]),
        // x86_64 values: SD_CACHE_NICE_TRIES 2, SD_IDLE_IDX 2, SD_NEWIDLE_IDX 0,
        // SD_FORKEXEC_IDX 1. No NEWIDLE and no WAKE_AFFINE at this level.
        // Deviation: 32-bit x86 (1/1/2/0) is not modelled.
        Kind::Node => tmpl(LB | EXEC | FORK | SD_SERIALIZE | SD_WAKE_BALANCE, 8, 32, 32, 125, 2, [3, 2, 0, 1, 1]),
        Kind::AllNodes => tmpl(LB | SD_SERIALIZE, 64, 64 * nr_cpus as u64, 128, 133, 1, [3, 3, 0, 0, 0]),
        Kind::Numa => unreachable!("no NUMA levels in 2.6.x"),
    }
}

/// The 2.6.35 templates [include/linux/topology.h SD_SIBLING_INIT,
/// SD_MC_INIT, SD_CPU_INIT, SD_ALLNODES_INIT; arch/x86/include/asm/topology.h
/// SD_NODE_INIT @2.6.35].
///
/// SD_MC_INIT ORs in sd_balance_for_mc_power() and SD_CPU_INIT
/// sd_balance_for_package_power(); with the power-savings knobs at their
/// default 0 both return SD_PREFER_SIBLING, so MC and CPU carry it
/// [include/linux/sched.h @2.6.3x]. (docs/LINUX-FACTS.md §3.2 lists the literal flags
/// only.)
pub(crate) fn tmpl_2_6_35(kind: Kind, nr_cpus: usize) -> Params {
    let base = LB | NEWIDLE | EXEC | FORK | AFFINE;
    match kind {
        Kind::Smt => Params {
            smt_gain: SMT_GAIN,
            ..tmpl(base | SD_SHARE_CPUPOWER | SD_SHARE_PKG_RESOURCES, 1, 2, 64, 110, 0, [0, 0, 0, 0, 0])
        },
        Kind::Mc => tmpl(base | SD_SHARE_PKG_RESOURCES | SD_PREFER_SIBLING, 1, 4, 64, 125, 1, [2, 0, 0, 0, 0]),
        Kind::Pkg => tmpl(base | SD_PREFER_SIBLING, 1, 4, 64, 125, 1, [2, 1, 0, 0, 0]),
        // x86_64: SD_CACHE_NICE_TRIES 2, SD_IDLE_IDX 2.
        Kind::Node => tmpl(base | SD_SERIALIZE, 8, 32, 32, 125, 2, [3, 2, 0, 0, 0]),
        Kind::AllNodes => tmpl(LB | NEWIDLE | SD_SERIALIZE, 64, 64 * nr_cpus as u64, 128, 133, 1, [3, 3, 0, 0, 0]),
        Kind::Numa => unreachable!("no NUMA levels in 2.6.x"),
    }
}

/// sd_init [kernel/sched/topology.c @4.16, @5.5, @5.7, @6.1, @6.12]:
/// intervals span_weight .. 2*span_weight, then "convert topological
/// properties into behaviour" by the level's descriptive flags.
pub(crate) fn sd_init(era: Era, kind: Kind, weight: usize, numa_distance: u32) -> Params {
    // The tl->sd_flags of each level: cpu_smt_flags, cpu_core_flags,
    // cpu_numa_flags; DIE/PKG and NODE have none.
    let topo_flags = match kind {
        Kind::Smt => SD_SHARE_CPUCAPACITY | SD_SHARE_PKG_RESOURCES,
        Kind::Mc => SD_SHARE_PKG_RESOURCES,
        Kind::Numa => SD_NUMA,
        _ => 0,
    };
    let mut flags = NEWIDLE | EXEC | FORK | AFFINE | topo_flags;
    if era < Era::Init61 {
        flags |= LB;
    }
    if era >= Era::Init55 {
        // 5.x: PREFER_SIBLING is in the base set, removed again on NUMA.
        flags |= SD_PREFER_SIBLING;
    }
    let w = weight as u64;
    let (busy_factor, imbalance_pct) = if era >= Era::Init61 { (16, 117) } else { (32, 125) };
    let mut p = tmpl(flags, w, 2 * w, busy_factor, imbalance_pct, 0, [0; 5]);
    let idx = era == Era::Init416;
    if p.flags & SD_SHARE_CPUCAPACITY != 0 {
        p.imbalance_pct = 110;
        if idx {
            p.flags |= SD_PREFER_SIBLING;
            p.smt_gain = SMT_GAIN;
        }
    } else if p.flags & SD_SHARE_PKG_RESOURCES != 0 {
        p.imbalance_pct = 117;
        p.cache_nice_tries = 1;
        if idx {
            p.flags |= SD_PREFER_SIBLING;
            p.idx[0] = 2;
        }
    } else if p.flags & SD_NUMA != 0 {
        p.cache_nice_tries = 2;
        if idx {
            p.idx[0] = 3;
            p.idx[1] = 2;
        }
        p.flags &= !SD_PREFER_SIBLING;
        p.flags |= SD_SERIALIZE;
        if numa_distance > RECLAIM_DISTANCE {
            p.flags &= !(EXEC | FORK | AFFINE);
        }
    } else {
        p.cache_nice_tries = 1;
        if idx {
            p.flags |= SD_PREFER_SIBLING;
            p.idx[0] = 2;
            p.idx[1] = 1;
        }
    }
    if kind == Kind::Numa {
        // build_sched_domains: tl->flags & SDTL_OVERLAP -> sd->flags |= SD_OVERLAP.
        p.flags |= SD_OVERLAP;
    }
    p
}

pub(crate) fn level_params(era: Era, kind: Kind, weight: usize, numa_distance: u32, nr_cpus: usize) -> Params {
    match era {
        Era::Tmpl25 => tmpl_2_6_25(kind, nr_cpus),
        Era::Tmpl35 => tmpl_2_6_35(kind, nr_cpus),
        _ => sd_init(era, kind, weight, numa_distance),
    }
}

// ---------------------------------------------------------------------------
// Degenerate domains (sd_degenerate, sd_parent_degenerate, cpu_attach_domain)
// ---------------------------------------------------------------------------

/// Flags that need at least two groups to mean anything (sd_degenerate).
pub(crate) fn needs_groups_mask(era: Era) -> u32 {
    match era {
        // [kernel/sched.c @2.6.25, @2.6.35]
        Era::Tmpl25 | Era::Tmpl35 => LB | NEWIDLE | FORK | EXEC | SD_SHARE_CPUPOWER | SD_SHARE_PKG_RESOURCES,
        // [kernel/sched/topology.c @4.16]
        Era::Init416 | Era::Init55 => {
            LB | NEWIDLE | FORK | EXEC | SD_SHARE_CPUCAPACITY | SD_ASYM_CPUCAPACITY | SD_SHARE_PKG_RESOURCES
        }
        // [@6.1]
        Era::Init61 => SD_DEGENERATE_GROUPS_MASK,
    }
}

/// Flags that keep a single-group domain alive (sd_degenerate: "don't use groups").
pub(crate) fn no_groups_mask(era: Era) -> u32 {
    match era {
        Era::Tmpl25 => SD_WAKE_IDLE | AFFINE | SD_WAKE_BALANCE,
        _ => AFFINE,
    }
}

/// Flags of a single-group parent that do not count (sd_parent_degenerate).
pub(crate) fn parent_single_group_mask(era: Era) -> u32 {
    match era {
        Era::Tmpl25 | Era::Tmpl35 => LB | NEWIDLE | FORK | EXEC | SD_SHARE_CPUPOWER | SD_SHARE_PKG_RESOURCES,
        Era::Init416 | Era::Init55 => {
            LB | NEWIDLE
                | FORK
                | EXEC
                | SD_ASYM_CPUCAPACITY
                | SD_SHARE_CPUCAPACITY
                | SD_SHARE_PKG_RESOURCES
                | SD_PREFER_SIBLING
        }
        Era::Init61 => SD_DEGENERATE_GROUPS_MASK,
    }
}

pub(crate) struct RawDomain {
    pub(crate) level: usize,
    pub(crate) span_id: usize,
    pub(crate) weight: usize,
    pub(crate) p: Params,
    pub(crate) groups: Vec<usize>,
    /// sd->imb_numa_nr, set by `Builder::set_imb_numa_nr` over the
    /// unpruned chains.
    pub(crate) imb_numa_nr: u32,
}

pub(crate) fn sd_degenerate(era: Era, d: &RawDomain) -> bool {
    if d.weight == 1 {
        return true;
    }
    if d.p.flags & needs_groups_mask(era) != 0 && d.groups.len() > 1 {
        return false;
    }
    d.p.flags & no_groups_mask(era) == 0
}

pub(crate) fn sd_parent_degenerate(
    era: Era,
    child: &RawDomain,
    parent: &RawDomain,
    same_span: bool,
    nr_nodes: usize,
) -> bool {
    if sd_degenerate(era, parent) {
        return true;
    }
    if !same_span {
        return false;
    }
    let cflags = child.p.flags;
    let mut pflags = parent.p.flags;
    if era == Era::Tmpl25 && cflags & AFFINE != 0 {
        // "WAKE_BALANCE is a subset of WAKE_AFFINE" [@2.6.25].
        pflags &= !SD_WAKE_BALANCE;
    }
    if parent.groups.len() == 1 {
        pflags &= !parent_single_group_mask(era);
        // Deviation: 2.6.25 lacks this rule (added for 2.6.26, "fix
        // sd_parent_degenerate on non-numa smp machine"), so a CONFIG_NUMA
        // 2.6.25 kernel keeps a single-group NODE domain on a one-node
        // machine. That domain never finds a busiest group; it is dropped
        // here for every version. In 6.1+ SERIALIZE is in the mask anyway.
        if nr_nodes == 1 {
            pflags &= !SD_SERIALIZE;
        }
    }
    !cflags & pflags == 0
}
