//! Unit tests of sched/topology.rs: levels, groups and parameters per
//! preset and kernel version.
use super::*;
use crate::kernel::{KernelVersion, Mechanisms};
use crate::machine::Machine;
use crate::sched::sd_build::build_sched_domains;

use crate::sched::sd_flags::*;

fn kv(s: &str) -> KernelVersion {
    KernelVersion::parse(s).unwrap()
}

fn topo(preset: &str, v: &str) -> (Machine, SchedTopology) {
    let m = Machine::preset(preset).unwrap();
    let t = build_sched_domains(&m, &Mechanisms::of(kv(v)), None);
    check_invariants(&m, &t);
    (m, t)
}

/// (name, span weight, group count) of `cpu`'s domains, bottom-up.
fn shape(t: &SchedTopology, cpu: usize) -> Vec<(&'static str, usize, usize)> {
    t.cpu_domains[cpu]
        .iter()
        .map(|&d| (t.domains[d].name, t.domains[d].span_weight, t.domains[d].groups.len()))
        .collect()
}

fn dom(t: &SchedTopology, cpu: usize, k: usize) -> &SchedDomainTopo {
    &t.domains[t.cpu_domains[cpu][k]]
}

fn check_invariants(m: &Machine, t: &SchedTopology) {
    let n = m.nr_cpus();
    assert_eq!(t.cpu_domains.len(), n);
    for c in 0..n {
        let ds = &t.cpu_domains[c];
        assert_eq!(ds.len(), t.cpu_local_group[c].len());
        for (k, &d) in ds.iter().enumerate() {
            let sd = &t.domains[d];
            assert_eq!(sd.level, k, "uniform machines: level = chain index");
            assert!(sd.span.binary_search(&c).is_ok(), "domain spans its cpu");
            assert_eq!(sd.span_weight, sd.span.len());
            assert!(sd.groups.len() >= 2, "no single-group domain survives");
            let lg = t.cpu_local_group[c][k];
            assert!(t.groups[lg].cpus.binary_search(&c).is_ok(), "local group holds the cpu");
            assert_eq!(sd.groups[t.cpu_local_group_idx[c][k]], lg);
            // Groups cover the span exactly (no overlap on these machines).
            let mut all: Vec<usize> = sd.groups.iter().flat_map(|&g| t.groups[g].cpus.iter().copied()).collect();
            all.sort_unstable();
            assert_eq!(all, sd.span);
            assert!(sd.groups.windows(2).all(|w| t.groups[w[0]].first_cpu < t.groups[w[1]].first_cpu));
            // The local group is the child's span.
            if k > 0 {
                assert_eq!(t.groups[lg].cpus, t.domains[ds[k - 1]].span);
                assert_eq!(t.domains[ds[k - 1]].parent, Some(d));
            }
            for &g in &sd.groups {
                let grp = &t.groups[g];
                assert_eq!(grp.weight, grp.cpus.len());
                assert_eq!(grp.first_cpu, grp.cpus[0]);
                assert_eq!(grp.capacity, 1024 * grp.weight as u64);
            }
        }
        if let Some(&top) = ds.last() {
            assert_eq!(t.domains[top].parent, None);
        }
    }
}

#[test]
fn llc8_on_6_1_is_one_mc_level() {
    let (_, t) = topo("8cpu-llc", "6.1");
    for c in 0..8 {
        assert_eq!(shape(&t, c), vec![("MC", 8, 8)]);
    }
    assert_eq!(t.domains.len(), 1);
    assert_eq!(t.groups.len(), 8);
    let d = &t.domains[0];
    assert_eq!((d.imbalance_pct, d.busy_factor, d.min_interval_ms, d.max_interval_ms), (117, 16, 8, 16));
    assert_eq!(d.cache_nice_tries, 1);
    assert_eq!(
        d.flags,
        SD_BALANCE_NEWIDLE
            | SD_BALANCE_EXEC
            | SD_BALANCE_FORK
            | SD_WAKE_AFFINE
            | SD_SHARE_PKG_RESOURCES
            | SD_PREFER_SIBLING
    );
    assert_eq!(d.flags & SD_LOAD_BALANCE, 0, "6.x has no SD_LOAD_BALANCE");
    assert_eq!((d.busy_idx, d.idle_idx, d.smt_gain, d.numa_distance), (0, 0, 0, 0));
    assert_eq!(t.sd_llc, vec![Some(0); 8]);
    assert_eq!(t.sd_llc_size, vec![8; 8]);
    assert_eq!(t.sd_llc_id, vec![0; 8]);
    assert_eq!(t.sd_numa, vec![None; 8]);
    assert_eq!(t.nr_levels(), 1);
    // The walk for CPU 3 starts at its own group and wraps.
    let walk: Vec<usize> = t.groups_from(3, 0).map(|g| t.groups[g].first_cpu).collect();
    assert_eq!(walk, vec![3, 4, 5, 6, 7, 0, 1, 2]);
    assert!(t.describe(0).starts_with("level 0 MC span=0-7 groups={0},{1},"), "{}", t.describe(0));
}

#[test]
fn box_4x4_on_2_6_35() {
    let (_, t) = topo("4x4", "2.6.35");
    for c in 0..16 {
        assert_eq!(shape(&t, c), vec![("MC", 4, 4), ("CPU", 16, 4)]);
    }
    let mc = dom(&t, 5, 0);
    assert_eq!(mc.span, vec![4, 5, 6, 7]);
    assert_eq!((mc.min_interval_ms, mc.max_interval_ms, mc.busy_factor, mc.imbalance_pct), (1, 4, 64, 125));
    assert_eq!(mc.cache_nice_tries, 1);
    assert_eq!((mc.busy_idx, mc.idle_idx, mc.newidle_idx, mc.wake_idx, mc.forkexec_idx), (2, 0, 0, 0, 0));
    assert_eq!(
        mc.flags,
        SD_LOAD_BALANCE
            | SD_BALANCE_NEWIDLE
            | SD_BALANCE_EXEC
            | SD_BALANCE_FORK
            | SD_WAKE_AFFINE
            | SD_SHARE_PKG_RESOURCES
            | SD_PREFER_SIBLING
    );
    let cpu = dom(&t, 5, 1);
    assert_eq!((cpu.min_interval_ms, cpu.max_interval_ms, cpu.busy_factor, cpu.imbalance_pct), (1, 4, 64, 125));
    assert_eq!((cpu.busy_idx, cpu.idle_idx, cpu.newidle_idx, cpu.wake_idx, cpu.forkexec_idx), (2, 1, 0, 0, 0));
    assert_eq!(
        cpu.flags,
        SD_LOAD_BALANCE | SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE | SD_PREFER_SIBLING
    );
    let socket_groups: Vec<Vec<usize>> = cpu.groups.iter().map(|&g| t.groups[g].cpus.clone()).collect();
    assert_eq!(socket_groups, vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7], vec![8, 9, 10, 11], vec![12, 13, 14, 15]]);
    assert_eq!(t.cpu_local_group_idx[5], vec![1, 1]);
    assert_eq!(t.sd_llc_size[5], 4);
    assert_eq!(t.sd_llc_id[5], 4);
    assert!(t.cpus_share_cache(4, 7) && !t.cpus_share_cache(3, 4));
    // Shared arena: 4 MC domains + 1 CPU domain, 16 + 4 groups.
    assert_eq!(t.domains.len(), 5);
    assert_eq!(t.groups.len(), 20);
}

#[test]
fn box_4x4_other_versions() {
    // 2.6.25: same shape, no PREFER_SIBLING, CPU newidle_idx 2.
    let (_, t) = topo("4x4", "2.6.25");
    assert_eq!(shape(&t, 0), vec![("MC", 4, 4), ("CPU", 16, 4)]);
    assert_eq!(
        dom(&t, 0, 1).flags,
        SD_LOAD_BALANCE | SD_BALANCE_NEWIDLE | SD_BALANCE_FORK | SD_BALANCE_EXEC | SD_WAKE_AFFINE
    );
    assert_eq!(dom(&t, 0, 1).newidle_idx, 2);
    assert_eq!(dom(&t, 0, 0).wake_idx, 1);
    // 4.16: DIE spans the node (all 16), MC the socket.
    let (_, t) = topo("4x4", "4.16");
    assert_eq!(shape(&t, 0), vec![("MC", 4, 4), ("DIE", 16, 4)]);
    let die = dom(&t, 0, 1);
    assert_eq!((die.min_interval_ms, die.max_interval_ms, die.busy_factor, die.imbalance_pct), (16, 32, 32, 125));
    assert_eq!((die.busy_idx, die.idle_idx, die.cache_nice_tries), (2, 1, 1));
    assert_eq!(dom(&t, 0, 0).imbalance_pct, 117);
    // 6.12 calls it PKG.
    let (_, t) = topo("4x4", "6.12");
    assert_eq!(shape(&t, 0), vec![("MC", 4, 4), ("PKG", 16, 4)]);
}

#[test]
fn numa48_on_6_1() {
    let (_, t) = topo("numa48", "6.1");
    for c in [0, 1, 23, 24, 47] {
        assert_eq!(shape(&t, c), vec![("SMT", 2, 2), ("MC", 24, 12), ("NUMA", 48, 2)]);
    }
    let smt = dom(&t, 0, 0);
    assert_eq!((smt.imbalance_pct, smt.cache_nice_tries, smt.smt_gain), (110, 0, 0));
    assert_eq!(
        smt.flags & (SD_SHARE_CPUCAPACITY | SD_SHARE_PKG_RESOURCES),
        SD_SHARE_CPUCAPACITY | SD_SHARE_PKG_RESOURCES
    );
    let numa = dom(&t, 0, 2);
    assert_eq!(numa.numa_distance, 21);
    assert_eq!(
        (numa.min_interval_ms, numa.max_interval_ms, numa.imbalance_pct, numa.cache_nice_tries),
        (48, 96, 117, 2)
    );
    assert_eq!(
        numa.flags,
        SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE | SD_SERIALIZE | SD_NUMA | SD_OVERLAP
    );
    assert_eq!(t.sd_llc_size, vec![24; 48]);
    assert_eq!(t.sd_llc_id[30], 24);
    assert_eq!(t.sd_numa[30], Some(t.cpu_domains[30][2]));
    assert_eq!(t.sd_llc[30], Some(t.cpu_domains[30][1]));
    assert_eq!(t.domains.len(), 24 + 2 + 1);
    assert_eq!(t.lowest_domain_spanning(0, 1), Some(t.cpu_domains[0][0]));
    assert_eq!(t.lowest_domain_spanning(0, 2), Some(t.cpu_domains[0][1]));
    assert_eq!(t.lowest_domain_spanning(0, 40), Some(t.cpu_domains[0][2]));
    assert_eq!(t.highest_flag_domain(0, SD_SHARE_CPUCAPACITY), Some(t.cpu_domains[0][0]));
    assert_eq!(t.highest_flag_domain(0, SD_WAKE_AFFINE), Some(t.cpu_domains[0][2]));
    assert_eq!(t.highest_flag_domain(0, SD_NUMA), Some(t.cpu_domains[0][2]));
    assert_eq!(t.lowest_flag_domain(0, SD_SERIALIZE), Some(t.cpu_domains[0][2]));
}

#[test]
fn numa48_old_versions() {
    // 2.6.35: SIBLING with smt_gain, MC = node, NODE spans both nodes.
    let (_, t) = topo("numa48", "2.6.35");
    assert_eq!(shape(&t, 0), vec![("SIBLING", 2, 2), ("MC", 24, 12), ("NODE", 48, 2)]);
    assert_eq!(dom(&t, 0, 0).smt_gain, 1178);
    assert_eq!(dom(&t, 0, 0).max_interval_ms, 2);
    let node = dom(&t, 0, 2);
    assert_eq!((node.min_interval_ms, node.max_interval_ms, node.busy_factor, node.cache_nice_tries), (8, 32, 32, 2));
    assert_eq!((node.busy_idx, node.idle_idx), (3, 2));
    assert_eq!(
        node.flags,
        SD_LOAD_BALANCE | SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE | SD_SERIALIZE
    );
    assert_eq!(t.sd_numa[0], None, "2.6.x has no SD_NUMA");
    // 2.6.25: WAKE_IDLE on SIBLING, NODE without NEWIDLE or WAKE_AFFINE.
    let (_, t) = topo("numa48", "2.6.25");
    assert_eq!(shape(&t, 0), vec![("SIBLING", 2, 2), ("MC", 24, 12), ("NODE", 48, 2)]);
    assert_ne!(dom(&t, 0, 0).flags & SD_WAKE_IDLE, 0);
    assert_eq!(dom(&t, 0, 0).smt_gain, 0);
    let node = dom(&t, 0, 2);
    assert_eq!(node.flags, SD_LOAD_BALANCE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_SERIALIZE | SD_WAKE_BALANCE);
    assert_eq!((node.busy_idx, node.idle_idx, node.newidle_idx, node.wake_idx, node.forkexec_idx), (3, 2, 0, 1, 1));
    // 4.16: indices and smt_gain, LOAD_BALANCE, busy_factor 32.
    let (_, t) = topo("numa48", "4.16");
    assert_eq!(shape(&t, 0), vec![("SMT", 2, 2), ("MC", 24, 12), ("NUMA", 48, 2)]);
    let (smt, mc, numa) = (dom(&t, 0, 0), dom(&t, 0, 1), dom(&t, 0, 2));
    assert_eq!((smt.smt_gain, smt.imbalance_pct, smt.busy_factor), (1178, 110, 32));
    assert_ne!(smt.flags & SD_PREFER_SIBLING, 0);
    assert_eq!((mc.busy_idx, mc.idle_idx, mc.imbalance_pct), (2, 0, 117));
    assert_eq!((numa.busy_idx, numa.idle_idx, numa.imbalance_pct), (3, 2, 125));
    assert_eq!(numa.flags & (SD_LOAD_BALANCE | SD_PREFER_SIBLING), SD_LOAD_BALANCE);
    // 5.5: no indices, no smt_gain.
    let (_, t) = topo("numa48", "5.5");
    assert_eq!((dom(&t, 0, 0).smt_gain, dom(&t, 0, 1).busy_idx, dom(&t, 0, 2).busy_idx), (0, 0, 0));
    assert_eq!(dom(&t, 0, 2).flags & SD_PREFER_SIBLING, 0);
    assert_ne!(dom(&t, 0, 1).flags & SD_PREFER_SIBLING, 0);
}

#[test]
fn smp1024_has_two_numa_levels() {
    let (_, t) = topo("smp1024", "6.1");
    for c in [0, 63, 64, 300, 1023] {
        assert_eq!(shape(&t, c), vec![("SMT", 2, 2), ("MC", 64, 32), ("NUMA", 256, 4), ("NUMA", 1024, 4)]);
    }
    let (near, far) = (dom(&t, 300, 2), dom(&t, 300, 3));
    assert_eq!(near.span, (256..512).collect::<Vec<_>>());
    assert_eq!((near.numa_distance, far.numa_distance), (21, 31));
    assert_ne!(near.flags & (SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE), 0);
    assert_eq!(far.flags & (SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE), 0, "beyond RECLAIM_DISTANCE");
    assert_ne!(far.flags & SD_SERIALIZE, 0);
    assert_eq!((far.min_interval_ms, far.max_interval_ms), (1024, 2048));
    let far_groups: Vec<usize> = far.groups.iter().map(|&g| t.groups[g].weight).collect();
    assert_eq!(far_groups, vec![256; 4]);
    assert_eq!(t.sd_numa[300], Some(t.cpu_domains[300][2]));
    assert_eq!(t.highest_flag_domain(300, SD_NUMA), Some(t.cpu_domains[300][3]));
    assert_eq!(t.highest_flag_domain(300, SD_WAKE_AFFINE), Some(t.cpu_domains[300][2]));
    assert_eq!(t.sd_llc_size[300], 64);
    // Memory stays O(levels x cpus).
    assert_eq!(t.domains.len(), 512 + 16 + 4 + 1);
    let span_entries: usize = t.domains.iter().map(|d| d.span.len()).sum();
    let group_entries: usize = t.groups.iter().map(|g| g.cpus.len()).sum();
    assert_eq!(span_entries, 4 * 1024);
    assert_eq!(group_entries, 4 * 1024);
    // 2.6.35: one NODE level of 16 nodes (SD_NODES_PER_DOMAIN), no ALLNODES.
    let (_, t) = topo("smp1024", "2.6.35");
    assert_eq!(shape(&t, 0), vec![("SIBLING", 2, 2), ("MC", 64, 32), ("NODE", 1024, 16)]);
}

#[test]
fn smt_presets() {
    let (_, t) = topo("2x8smt", "6.1");
    assert_eq!(shape(&t, 5), vec![("SMT", 2, 2), ("MC", 16, 8)]);
    assert_eq!(dom(&t, 5, 0).span, vec![4, 5]);
    assert_eq!((dom(&t, 5, 0).min_interval_ms, dom(&t, 5, 0).max_interval_ms), (2, 4));
    assert_eq!(t.sd_llc_size[5], 16);
    assert_eq!(t.highest_flag_domain(5, SD_SHARE_CPUCAPACITY), Some(t.cpu_domains[5][0]));
    let (_, t) = topo("2x8smt", "2.6.35");
    assert_eq!(shape(&t, 5), vec![("SIBLING", 2, 2), ("MC", 16, 8)]);
    let (_, t) = topo("smp64", "6.1");
    assert_eq!(shape(&t, 0), vec![("SMT", 2, 2), ("MC", 32, 16), ("NUMA", 64, 2)]);
    let (_, t) = topo("smp256", "5.7");
    assert_eq!(shape(&t, 0), vec![("SMT", 2, 2), ("MC", 64, 32), ("NUMA", 256, 4)]);
    let (_, t) = topo("skl52", "6.1");
    assert_eq!(shape(&t, 0), vec![("MC", 26, 26), ("NUMA", 52, 2)]);
    let (_, t) = topo("skl52", "2.6.35");
    assert_eq!(shape(&t, 51), vec![("MC", 26, 26), ("NODE", 52, 2)]);
}

#[test]
fn large_presets() {
    // Two Xeon 6972P in SNC3: the LLC domain is the SNC node (32 cores),
    // then the next die (15), the socket (17), both sockets (24). The
    // middle die is 15 from both outer ones, so the outer dies' socket
    // domains have overlapping groups (their own pair of dies, and the
    // middle die's whole socket), as build_overlap_sched_groups() makes
    // them; not the no-overlap machines check_invariants() is for.
    let m = Machine::preset("gnr384").unwrap();
    let t = build_sched_domains(&m, &Mechanisms::of(kv("6.18")), None);
    assert_eq!(shape(&t, 0), vec![("SMT", 2, 2), ("MC", 64, 32), ("NUMA", 128, 2), ("NUMA", 192, 2), ("NUMA", 384, 2)]);
    assert_eq!(t.sd_llc_size[0], 64);
    let socket = dom(&t, 0, 3);
    let groups: Vec<(usize, usize)> =
        socket.groups.iter().map(|&g| (t.groups[g].cpus[0], t.groups[g].weight)).collect();
    assert_eq!(groups, vec![(0, 128), (64, 128)]);
    assert_eq!(shape(&t, 64)[2], ("NUMA", 192, 3));
    // SGI UV 2000: a blade (2 sockets), a chassis (16), a rack (64), all.
    let (_, t) = topo("uv4096", "6.12");
    assert_eq!(
        shape(&t, 4095),
        vec![("SMT", 2, 2), ("MC", 16, 8), ("NUMA", 32, 2), ("NUMA", 256, 8), ("NUMA", 1024, 4), ("NUMA", 4096, 4)]
    );
}

#[test]
fn small_presets_every_version() {
    for v in ["2.6.24", "2.6.25", "2.6.35", "4.16", "4.19", "5.4", "5.5", "5.7", "6.1", "6.6", "6.12"] {
        for p in ["4cpu", "uma8", "8cpu-llc"] {
            let (m, t) = topo(p, v);
            let n = m.nr_cpus();
            assert_eq!(shape(&t, 0), vec![("MC", n, n)], "{p} on {v}");
            let d = dom(&t, 0, 0);
            assert_eq!(d.flags & SD_LOAD_BALANCE != 0, !kv(v).at_least(6, 1), "{p} on {v}");
            assert_eq!(
                d.busy_factor,
                if kv(v).at_least(6, 1) {
                    16
                } else if kv(v).at_least(4, 16) {
                    32
                } else {
                    64
                }
            );
        }
    }
}

#[test]
fn numa_in_package_skips_pkg() {
    // One socket split into two nodes (SNC-like), SLIT 10/11.
    let spec = crate::machine::MachineSpec {
        sockets: Some(1),
        cores_per_socket: Some(8),
        nodes: Some(2),
        llcs_per_socket: Some(2),
        distance: Some(vec![vec![10, 11], vec![11, 10]]),
        ..Default::default()
    };
    let m = Machine::build(&spec, "t").unwrap();
    let t = build_sched_domains(&m, &Mechanisms::of(kv("6.12")), None);
    check_invariants(&m, &t);
    assert_eq!(shape(&t, 0), vec![("MC", 4, 4), ("NUMA", 8, 2)]);
    assert_eq!(dom(&t, 0, 1).numa_distance, 11);
    // Two nodes per LLC-less split on 2.6.35: CPU = node, NODE = both.
    let t = build_sched_domains(&m, &Mechanisms::of(kv("2.6.35")), None);
    check_invariants(&m, &t);
    assert_eq!(shape(&t, 0), vec![("MC", 4, 4), ("NODE", 8, 2)]);
}

#[test]
fn asymmetric_ring_builds_overlapping_groups() {
    // The 4-node ring of the topology.c comment, one CPU per node.
    let spec = crate::machine::MachineSpec {
        sockets: Some(4),
        cores_per_socket: Some(1),
        nodes: Some(4),
        distance: Some(vec![vec![10, 20, 30, 20], vec![20, 10, 20, 30], vec![30, 20, 10, 20], vec![20, 30, 20, 10]]),
        ..Default::default()
    };
    let m = Machine::build(&spec, "t").unwrap();
    let t = build_sched_domains(&m, &Mechanisms::of(kv("6.1")), None);
    let spans = |c: usize| -> Vec<Vec<usize>> { t.cpu_domains[c].iter().map(|&d| t.domains[d].span.clone()).collect() };
    // NUMA-1: 0-1,3 for node 0; NUMA-2: 0-3.
    assert_eq!(spans(0), vec![vec![0, 1, 3], vec![0, 1, 2, 3]]);
    assert_eq!(spans(1), vec![vec![0, 1, 2], vec![0, 1, 2, 3]]);
    let groups =
        |c: usize, k: usize| -> Vec<Vec<usize>> { t.groups_from(c, k).map(|g| t.groups[g].cpus.clone()).collect() };
    // As in the kernel comment: node 0 NUMA-2 groups {0-1,3},{1-3};
    // node 1 {0-2},{0,2-3}; each CPU's walk starts at its own child.
    assert_eq!(groups(0, 1), vec![vec![0, 1, 3], vec![1, 2, 3]]);
    assert_eq!(groups(2, 1), vec![vec![1, 2, 3], vec![0, 1, 3]]);
    assert_eq!(groups(1, 1), vec![vec![0, 1, 2], vec![0, 2, 3]]);
    assert_eq!(groups(3, 1), vec![vec![0, 2, 3], vec![0, 1, 2]]);
    assert_eq!(groups(0, 0), vec![vec![0], vec![1], vec![3]]);
    // Far level (30) is at RECLAIM_DISTANCE, not beyond: keeps WAKE_AFFINE.
    assert_ne!(dom(&t, 0, 1).flags & SD_WAKE_AFFINE, 0);
    for c in 0..4 {
        for k in 0..2 {
            assert!(t.groups[t.cpu_local_group[c][k]].cpus.contains(&c));
        }
    }
}

#[test]
fn helpers() {
    assert_eq!(cpulist(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
    assert_eq!(cpulist(&[]), "");
    assert_eq!(flag_names(SD_NUMA | SD_SERIALIZE), "SD_SERIALIZE|SD_NUMA");
    assert_eq!(flag_names(0), "0");
    // Every flag has its own bit.
    let all: u32 = SD_FLAG_NAMES.iter().map(|(f, _)| f).fold(0, |a, f| {
        assert_eq!(a & f, 0);
        a | f
    });
    assert_eq!(all.count_ones() as usize, SD_FLAG_NAMES.len());
}

fn spec_topo(spec: crate::machine::MachineSpec, v: &str) -> SchedTopology {
    let m = Machine::build(&spec, "<test>").unwrap();
    build_sched_domains(&m, &Mechanisms::of(kv(v)), None)
}

#[test]
fn imb_numa_nr_follows_llcs_and_numa_spans() {
    // One LLC per node: an eighth of the node (24 >> 3), scaled by nothing
    // on the one NUMA level.
    let (_, t) = topo("numa48", "6.1");
    assert_eq!(dom(&t, 0, 2).name, "NUMA");
    assert_eq!(dom(&t, 0, 2).imb_numa_nr, 3);
    // Two NUMA levels: the upper one covers four first-level spans.
    let (_, t) = topo("smp1024", "6.12");
    let ds = &t.cpu_domains[0];
    let numa: Vec<u32> =
        ds.iter().filter(|&&d| t.domains[d].flags & SD_NUMA != 0).map(|&d| t.domains[d].imb_numa_nr).collect();
    assert_eq!(numa, vec![8, 32]);
    // Nodes of one CPU: the PKG domain is pruned, but its 1 (at least one
    // task) still reaches the NUMA domain.
    let spec = crate::machine::MachineSpec {
        sockets: Some(2),
        cores_per_socket: Some(1),
        nodes: Some(2),
        ..Default::default()
    };
    let t = spec_topo(spec, "6.1");
    assert_eq!(t.cpu_domains[0].len(), 1);
    assert_eq!((dom(&t, 0, 0).name, dom(&t, 0, 0).imb_numa_nr), ("NUMA", 1));
    // Two LLCs per node: the number of LLCs.
    let spec = crate::machine::MachineSpec {
        sockets: Some(2),
        cores_per_socket: Some(8),
        nodes: Some(2),
        llcs_per_socket: Some(2),
        ..Default::default()
    };
    let t = spec_topo(spec, "6.1");
    let top = *t.cpu_domains[0].last().unwrap();
    assert_eq!((t.domains[top].flags & SD_NUMA != 0, t.domains[top].imb_numa_nr), (true, 2));
}

#[test]
fn isolated_cpus_are_on_the_null_domain_and_out_of_every_span() {
    // Two packages of four cores; isolcpus=2-3,6.
    let spec = crate::machine::MachineSpec { sockets: Some(2), cores_per_socket: Some(4), ..Default::default() };
    let m = Machine::build(&spec, "t").unwrap();
    let iso = crate::cpumask::CpuMask::from_cpus(8, &[2, 3, 6]);
    let t = build_sched_domains(&m, &Mechanisms::of(kv("6.12")), Some(&iso));
    check_invariants(&m, &t);
    for c in [2, 3, 6] {
        assert!(t.cpu_domains[c].is_empty() && t.sd_llc[c].is_none(), "cpu {c}");
        assert_eq!((t.sd_llc_size[c], t.sd_llc_id[c]), (1, c));
    }
    // build_sched_domain(): tl->mask(cpu) & cpu_map, so CPU 0's LLC is 0-1
    // and the machine level the five housekeeping CPUs; sd_init() sizes the
    // intervals by the topology mask (4 and 8 CPUs), not by the span.
    let spans: Vec<Vec<usize>> = t.cpu_domains[0].iter().map(|&d| t.domains[d].span.clone()).collect();
    assert_eq!(spans, vec![vec![0, 1], vec![0, 1, 4, 5, 7]]);
    assert_eq!((dom(&t, 0, 0).min_interval_ms, dom(&t, 0, 1).min_interval_ms), (4, 8));
    assert_eq!(t.sd_llc_size[4], 3);
    assert_eq!(t.isolated.to_list_string(), "2-3,6");
    // Without isolation nothing changes.
    let plain = build_sched_domains(&m, &Mechanisms::of(kv("6.12")), None);
    assert_eq!(shape(&plain, 2), vec![("MC", 4, 4), ("PKG", 8, 2)]);
    assert!(plain.isolated.is_empty());
}
