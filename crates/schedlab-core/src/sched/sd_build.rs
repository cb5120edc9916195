//! Models kernel/sched/topology.c's construction (build_sched_domains, the
//! NUMA levels) with sd_init and the 2.6.x SD_*_INIT templates
//! (`sd_init.rs`): the hierarchy `topology.rs` holds.
//!
//! # What is built
//!
//! The topology levels, bottom-up (docs/LINUX-FACTS.md §3.1):
//!
//! * 2.6.x [kernel/sched.c build_sched_domains @2.6.25, @2.6.35]: SIBLING
//!   (SMT siblings), MC (cpu_coregroup_map = the LLC), CPU (the node:
//!   phys_domains span `node_to_cpumask(cpu_to_node(cpu))`), NODE (the node
//!   and its SD_NODES_PER_DOMAIN-1 = 15 nearest nodes, sched_domain_node_span)
//!   and ALLNODES (everything, only when the machine has more than
//!   16 nodes' worth of CPUs). Each level is filled from its SD_*_INIT template
//!   [include/linux/topology.h, include/asm-x86/topology.h @2.6.25;
//!   include/linux/topology.h, arch/x86/include/asm/topology.h @2.6.35].
//! * 4.16+ [kernel/sched/topology.c default_topology, sched_init_numa,
//!   sd_init @4.16, @5.5, @6.1, @6.12]: SMT, MC (the LLC), DIE (PKG from 6.12;
//!   cpu_cpu_mask, which is the *node*), then NODE (NUMA identity, the node)
//!   and one NUMA level per distinct remote SLIT distance d, spanning the
//!   nodes within d. On x86 DIE/PKG is left out when a package holds several
//!   nodes (x86_has_numa_in_package) [arch/x86/kernel/smpboot.c @6.12].
//!   Building stops for a CPU at the first level that spans every CPU.
//!
//! Groups of a domain are the spans of the *built* child level of each CPU
//! in the span (single CPUs at the lowest level; nodes for 2.6 ALLNODES),
//! collected in CPU order and skipping covered CPUs (build_sched_groups,
//! build_overlap_sched_groups). Then each CPU's chain is pruned exactly as
//! cpu_attach_domain does: a parent is dropped when sd_parent_degenerate()
//! says so (same span as the child and no flag the child lacks once the
//! group-needing flags of a single-group parent are ignored, or degenerate
//! by itself), and the bottom domain is dropped when sd_degenerate() says so
//! (one CPU, or a single group and no WAKE_AFFINE-type flag).
//!
//! # Data layout and complexity
//!
//! Domains and groups live in two arenas. A domain is shared by every CPU
//! whose domain at that level has the same span (and, on overlapping NUMA
//! levels, the same groups); a group is shared by every domain at that level
//! that contains it, like the kernel's shared sched_group_capacity. Spans are
//! sorted CPU lists, so memory is O(levels x cpus) in total: for `smp1024`
//! about 4 x 1024 span entries, no per-domain nr_cpus-sized vector. Build is
//! O(levels x cpus) plus group construction (O(span) per distinct domain, and
//! O(span) per distinct child domain on NUMA levels) plus O(nodes^2) per NUMA
//! level. Per-CPU lookups (`cpu_domains`, `cpu_local_group`, `sd_llc`, ...)
//! are O(1); `lowest_domain_spanning` is O(levels x log span).
//!
//! # Deviations
//!
//! * The kernel keeps a private sched_domain per CPU; here CPUs share one
//!   per span. Flag changes made while pruning (SD_PREFER_SIBLING handed down
//!   from a degenerate parent) are made on the shared domain; every CPU of
//!   the span would make the same change, so the result is the same on
//!   machines whose cores are alike (all machines schedlab builds).
//! * See the `// Deviation:` comments below for the rest.

use std::collections::{BTreeMap, BTreeSet};

use crate::cpumask::CpuMask;
use crate::kernel::{Mechanisms, SdInit as Era};
use crate::machine::Machine;
use crate::sched::sd_cpu_map::{cpu_maps, split_spans};
use crate::sched::sd_flags::*;
use crate::sched::sd_groups::{GroupIndex, GroupSrc};
use crate::sched::sd_init::{level_params, sd_degenerate, sd_parent_degenerate, Kind, RawDomain};

use crate::sched::topology::{SchedDomainTopo, SchedGroupTopo, SchedTopology};
/// SD_NODES_PER_DOMAIN [kernel/sched.c @2.6.25, @2.6.35].
const SD_NODES_PER_DOMAIN: usize = 16;

// ---------------------------------------------------------------------------
// Topology levels
// ---------------------------------------------------------------------------

/// One sched_domain_topology_level instantiated on a machine: its distinct
/// spans and, per CPU, which span it gets (None: no domain at this level).
struct Level {
    kind: Kind,
    name: &'static str,
    numa_distance: u32,
    /// Groups built with build_overlap_sched_groups (4.16+ NUMA levels).
    overlap: bool,
    spans: Vec<Vec<usize>>,
    cpu_span: Vec<Option<usize>>,
}

/// A level whose spans are one mask family of the machine (cores, LLCs, nodes).
fn family_level(
    m: &Machine,
    kind: Kind,
    name: &'static str,
    family: &[Vec<usize>],
    key: fn(&Machine, usize) -> usize,
) -> Level {
    Level {
        kind,
        name,
        numa_distance: 0,
        overlap: false,
        spans: family.to_vec(),
        cpu_span: (0..m.nr_cpus()).map(|c| Some(key(m, c))).collect(),
    }
}

/// A level whose span depends only on the CPU's node: `node_set(n)` lists the
/// nodes whose CPUs CPU-of-node-n's domain spans. Identical node sets share
/// one span. O(nodes^2 + cpus x distinct sets).
fn node_level(
    m: &Machine,
    kind: Kind,
    name: &'static str,
    numa_distance: u32,
    node_set: impl Fn(usize) -> Vec<usize>,
) -> Level {
    let mut by_set: BTreeMap<Vec<usize>, usize> = BTreeMap::new();
    let mut spans: Vec<Vec<usize>> = Vec::new();
    let mut node_span = Vec::with_capacity(m.nr_nodes);
    for node in 0..m.nr_nodes {
        let mut set = node_set(node);
        set.sort_unstable();
        set.dedup();
        let next = spans.len();
        let sid = *by_set.entry(set.clone()).or_insert(next);
        if sid == next {
            let mut span: Vec<usize> = set.iter().flat_map(|&k| m.node_cpus[k].iter().copied()).collect();
            span.sort_unstable();
            spans.push(span);
        }
        node_span.push(sid);
    }
    Level {
        kind,
        name,
        numa_distance,
        overlap: kind == Kind::Numa,
        spans,
        cpu_span: (0..m.nr_cpus()).map(|c| Some(node_span[m.node_of(c)])).collect(),
    }
}

/// sched_domain_node_span [kernel/sched.c @2.6.25]: the node plus its
/// SD_NODES_PER_DOMAIN-1 nearest nodes, by find_next_best_node (smallest
/// distance; ties go to the first node found scanning from node+1, wrapping).
fn sched_domain_node_span(m: &Machine, node: usize) -> Vec<usize> {
    let n = m.nr_nodes;
    let mut used = vec![false; n];
    used[node] = true;
    let mut set = vec![node];
    for _ in 1..SD_NODES_PER_DOMAIN.min(n) {
        let mut best: Option<(u32, usize)> = None;
        for i in 0..n {
            let cand = (node + i) % n;
            if used[cand] || m.node_cpus[cand].is_empty() {
                continue;
            }
            let d = m.node_distance[node][cand];
            match best {
                Some((bd, _)) if bd <= d => {}
                _ => best = Some((d, cand)),
            }
        }
        let Some((_, b)) = best else { break };
        used[b] = true;
        set.push(b);
    }
    set
}

fn topology_levels(m: &Machine, era: Era, pkg_named_pkg: bool) -> Vec<Level> {
    let n = m.nr_cpus();
    let core = |m: &Machine, c: usize| m.cpus[c].core;
    let llc = |m: &Machine, c: usize| m.cpus[c].llc;
    let node = |m: &Machine, c: usize| m.cpus[c].node;
    let mut levels = Vec::new();
    if era.is_26() {
        // build_sched_domains [kernel/sched.c @2.6.25, @2.6.35], with
        // CONFIG_SCHED_SMT, CONFIG_SCHED_MC and CONFIG_NUMA as x86_64
        // distributions built them.
        levels.push(family_level(m, Kind::Smt, "SIBLING", &m.core_cpus, core));
        levels.push(family_level(m, Kind::Mc, "MC", &m.llc_cpus, llc));
        levels.push(family_level(m, Kind::Pkg, "CPU", &m.node_cpus, node));
        levels.push(node_level(m, Kind::Node, "NODE", 0, |k| sched_domain_node_span(m, k)));
        // ALLNODES when cpus_weight(cpu_map) > SD_NODES_PER_DOMAIN * cpus_weight(nodemask).
        let cpu_span: Vec<Option<usize>> =
            (0..n).map(|c| (n > SD_NODES_PER_DOMAIN * m.node_cpus[m.node_of(c)].len()).then_some(0)).collect();
        if cpu_span.iter().any(Option::is_some) {
            levels.push(Level {
                kind: Kind::AllNodes,
                name: "ALLNODES",
                numa_distance: 0,
                overlap: false,
                spans: vec![(0..n).collect()],
                cpu_span,
            });
        }
        return levels;
    }

    // default_topology / x86_topology, bottom-up. Deviation: the 6.6+ CLS
    // (L2 cluster) level is not built; schedlab machines have one L2 per
    // core, where CLS spans the SMT siblings and degenerates.
    levels.push(family_level(m, Kind::Smt, "SMT", &m.core_cpus, core));
    levels.push(family_level(m, Kind::Mc, "MC", &m.llc_cpus, llc));
    // x86_has_numa_in_package: some package holds CPUs of two nodes. The
    // machine rules make that "more nodes than packages". Deviation: applied
    // from 4.16 on (x86_numa_in_package_topology predates 4.16; the check is
    // read at @6.12 only); without it DIE would span the node and NODE would
    // degenerate instead, so only the surviving level's name differs.
    let numa_in_package = m.nr_nodes > m.nr_packages;
    if !numa_in_package {
        let name = if pkg_named_pkg { "PKG" } else { "DIE" };
        levels.push(family_level(m, Kind::Pkg, name, &m.node_cpus, node));
    }
    // sched_init_numa: one level per distinct distance, the first (local
    // distance) being the NUMA identity level NODE. Deviation: 4.16 .. 5.15
    // read the distinct distances from node 0's row only ("node 0
    // representative"); the whole table is used here, as in 5.16+.
    let distances: BTreeSet<u32> = m.node_distance.iter().flatten().copied().collect();
    for (j, &d) in distances.iter().enumerate() {
        let within = |k: usize| (0..m.nr_nodes).filter(|&o| m.node_distance[k][o] <= d).collect::<Vec<_>>();
        if j == 0 {
            levels.push(node_level(m, Kind::Node, "NODE", 0, within));
        } else {
            levels.push(node_level(m, Kind::Numa, "NUMA", d, within));
        }
    }
    levels
}

// ---------------------------------------------------------------------------
// Building
// ---------------------------------------------------------------------------

struct Builder<'a> {
    m: &'a Machine,
    era: Era,
    levels: Vec<Level>,
    /// Per level and span: the weight of the topology mask it came from
    /// (tl->mask(cpu)), which sd_init() sizes the intervals by; the span
    /// itself is that mask within the cpu_map.
    mask_weight: Vec<Vec<usize>>,
    /// Per CPU, the CPUs in its cpu_map: every CPU but the isolated ones,
    /// or its cpuset partition's (0 for an isolated CPU).
    nr_map: Vec<usize>,
    isolated: Option<&'a CpuMask>,
    raws: Vec<RawDomain>,
    groups: Vec<SchedGroupTopo>,
    group_index: GroupIndex,
    /// Scratch "covered" marks, one per CPU, reused through a stamp.
    covered: Vec<u64>,
    stamp: u64,
}

impl Builder<'_> {
    fn span_of(&self, rid: usize) -> &[usize] {
        let r = &self.raws[rid];
        &self.levels[r.level].spans[r.span_id]
    }

    /// What `cpu`'s group at level `li` is made of, given `cpu`'s domain at
    /// the level below (`child`) and its span at this level.
    fn group_src(&self, li: usize, cpu: usize, child: Option<usize>) -> GroupSrc {
        let level = &self.levels[li];
        if level.kind == Kind::AllNodes {
            // cpu_to_allnodes_group [@2.6.25]: groups are nodes.
            return GroupSrc::Node(self.m.node_of(cpu));
        }
        match child {
            Some(c) => GroupSrc::Child(c),
            None if level.overlap => GroupSrc::Span(level.cpu_span[cpu].unwrap_or(0)),
            None => GroupSrc::Cpu(cpu),
        }
    }

    /// get_group / build_group_from_child_sched_domain, shared per level.
    fn get_group(&mut self, li: usize, src: GroupSrc) -> usize {
        if let Some(g) = self.group_index.get(li, src) {
            return g;
        }
        let cpus: Vec<usize> = match src {
            GroupSrc::Child(rid) => self.span_of(rid).to_vec(),
            GroupSrc::Cpu(c) => vec![c],
            GroupSrc::Node(n) => {
                self.m.node_cpus[n].iter().copied().filter(|&c| !self.isolated.is_some_and(|i| i.test(c))).collect()
            }
            GroupSrc::Span(sid) => self.levels[li].spans[sid].clone(),
        };
        let capacity = cpus.iter().map(|&c| u64::from(self.m.cpus[c].capacity)).sum();
        let g = self.groups.len();
        self.groups.push(SchedGroupTopo { first_cpu: cpus[0], weight: cpus.len(), capacity, cpus });
        self.group_index.insert(li, src, g);
        g
    }

    /// Walk `span` from position `start` (wrapping), adding the group of each
    /// CPU not yet covered (build_sched_groups / build_overlap_sched_groups).
    /// `seed`, if given, is taken first. `child[i]` is CPU i's domain at the
    /// level below, `present[i]` whether CPU i has a domain at this level.
    fn collect_groups(
        &mut self,
        li: usize,
        span_id: usize,
        seed: Option<usize>,
        start: usize,
        child: &[Option<usize>],
        present: &[bool],
    ) -> Vec<usize> {
        self.stamp += 1;
        let stamp = self.stamp;
        let len = self.levels[li].spans[span_id].len();
        let mut out = Vec::new();
        let walk = (0..len).map(|k| self.levels[li].spans[span_id][(start + k) % len]);
        let order: Vec<usize> = seed.into_iter().chain(walk).collect();
        for i in order {
            if self.covered[i] == stamp || !present[i] {
                continue;
            }
            let src = self.group_src(li, i, child[i]);
            let g = self.get_group(li, src);
            for &c in &self.groups[g].cpus {
                self.covered[c] = stamp;
            }
            out.push(g);
        }
        out
    }

    fn new_domain(&mut self, li: usize, span_id: usize, groups: Vec<usize>) -> usize {
        let level = &self.levels[li];
        let weight = level.spans[span_id].len();
        let sd_weight = self.mask_weight[li][span_id];
        let p = level_params(self.era, level.kind, sd_weight, level.numa_distance, self.m.nr_cpus());
        self.raws.push(RawDomain { level: li, span_id, weight, p, groups, imb_numa_nr: 0 });
        self.raws.len() - 1
    }

    /// Pass 1, level by level (all CPUs' lower domains exist before a
    /// level's groups are made): each CPU's chain of raw domains and,
    /// parallel to it, its own group in each.
    fn attach_levels(&mut self) -> (Vec<Vec<usize>>, Vec<Vec<usize>>) {
        let b = self;
        let (n, era) = (b.m.nr_cpus(), b.era);
        // A domain a level at most: sized once, not grown per CPU.
        let depth = b.levels.len();
        let mut chains: Vec<Vec<usize>> = (0..n).map(|_| Vec::with_capacity(depth)).collect();
        let mut local: Vec<Vec<usize>> = (0..n).map(|_| Vec::with_capacity(depth)).collect();
        let mut cur: Vec<Option<usize>> = vec![None; n];
        let mut alive = vec![true; n];
        for li in 0..b.levels.len() {
            let present: Vec<bool> = (0..n).map(|c| alive[c] && b.levels[li].cpu_span[c].is_some()).collect();
            let overlap = b.levels[li].overlap;
            let mut by_span: Vec<Option<usize>> = vec![None; b.levels[li].spans.len()];
            let mut by_child: BTreeMap<(Option<usize>, usize), Vec<usize>> = BTreeMap::new();
            let mut by_groups: BTreeMap<(usize, Vec<usize>), usize> = BTreeMap::new();
            let mut next = cur.clone();
            for c in 0..n {
                if !present[c] {
                    continue;
                }
                let sid = b.levels[li].cpu_span[c].unwrap_or(0);
                let rid = if !overlap {
                    match by_span[sid] {
                        Some(r) => r,
                        None => {
                            // build_sched_groups for the span's first CPU.
                            let groups = b.collect_groups(li, sid, None, 0, &cur, &present);
                            let r = b.new_domain(li, sid, groups);
                            by_span[sid] = Some(r);
                            r
                        }
                    }
                } else {
                    // build_overlap_sched_groups: the first group is the CPU's own
                    // child domain, then the uncovered CPUs onwards, wrapping.
                    // Deviation: after the CPU's own group the walk goes on from
                    // the first CPU of its child domain rather than from the CPU
                    // itself, so the CPUs of one child share the work; the group
                    // set can only differ from the kernel's when child spans are
                    // not contiguous (asymmetric SLITs).
                    let key = (cur[c], sid);
                    let groups = match by_child.get(&key) {
                        Some(g) => g.clone(),
                        None => {
                            let first = cur[c].map_or(c, |r| b.span_of(r)[0]);
                            let span = &b.levels[li].spans[sid];
                            let start = span.partition_point(|&x| x < first) % span.len();
                            let mut g = b.collect_groups(li, sid, Some(c), start, &cur, &present);
                            g.sort_by_key(|&x| (b.groups[x].first_cpu, x));
                            by_child.insert(key, g.clone());
                            g
                        }
                    };
                    match by_groups.get(&(sid, groups.clone())) {
                        Some(&r) => r,
                        None => {
                            let r = b.new_domain(li, sid, groups.clone());
                            by_groups.insert((sid, groups), r);
                            r
                        }
                    }
                };
                let src = b.group_src(li, c, cur[c]);
                let own = b.get_group(li, src);
                chains[c].push(rid);
                local[c].push(own);
                next[c] = Some(rid);
                // 4.16+: stop once a domain spans the whole cpu_map.
                if !era.is_26() && b.raws[rid].weight == b.nr_map[c] {
                    alive[c] = false;
                }
            }
            cur = next;
        }
        (chains, local)
    }

    /// build_sched_domains' "allowed NUMA imbalance" pass [kernel/sched/
    /// topology.c @6.1, @6.12], which runs over each CPU's chain before
    /// cpu_attach_domain() prunes it. On the first domain above the LLC it
    /// is the number of LLCs it spans, or an eighth of its span when it
    /// spans one LLC (at least 1); the domains above scale that by how many
    /// first-NUMA-domain spans they cover.
    fn set_imb_numa_nr(&mut self, chains: &[Vec<usize>]) {
        for ch in chains {
            let (mut imb, mut imb_span) = (0u32, 1usize);
            for (t, &r) in ch.iter().enumerate() {
                let child = t.checked_sub(1).map(|k| ch[k]);
                let flags = self.raws[r].p.flags;
                let weight = self.raws[r].weight;
                match child {
                    Some(c)
                        if flags & SD_SHARE_PKG_RESOURCES == 0
                            && self.raws[c].p.flags & SD_SHARE_PKG_RESOURCES != 0 =>
                    {
                        let nr_llcs = weight / self.raws[c].weight;
                        imb = if nr_llcs == 1 { (weight >> 3) as u32 } else { nr_llcs as u32 }.max(1);
                        self.raws[r].imb_numa_nr = imb;
                        // The span of the first NUMA domain above.
                        imb_span = ch[t + 1..]
                            .iter()
                            .find(|&&u| self.raws[u].p.flags & SD_NUMA != 0)
                            .map_or(weight, |&u| self.raws[u].weight);
                    }
                    _ => {
                        let factor = (weight / imb_span).max(1) as u32;
                        self.raws[r].imb_numa_nr = imb * factor;
                    }
                }
            }
        }
    }

    /// Pass 2: cpu_attach_domain's pruning, per CPU: the chain of
    /// (domain, own group) that survives sd_parent_degenerate and
    /// sd_degenerate.
    fn prune(&mut self, chains: &[Vec<usize>], local: &[Vec<usize>]) -> Vec<Vec<(usize, usize)>> {
        let b = self;
        let (n, era, m) = (b.m.nr_cpus(), b.era, b.m);
        let mut same_span: BTreeMap<(usize, usize), bool> = BTreeMap::new();
        let mut kept: Vec<Vec<(usize, usize)>> = Vec::with_capacity(n);
        for c in 0..n {
            let mut ch: Vec<(usize, usize)> = chains[c].iter().copied().zip(local[c].iter().copied()).collect();
            let mut t = 0;
            while t + 1 < ch.len() {
                let (child, parent) = (ch[t].0, ch[t + 1].0);
                let eq = *same_span.entry((child, parent)).or_insert_with(|| b.span_of(child) == b.span_of(parent));
                if sd_parent_degenerate(era, &b.raws[child], &b.raws[parent], eq, m.nr_nodes) {
                    ch.remove(t + 1);
                    // Transfer SD_PREFER_SIBLING down to the child (3.x+; absent
                    // in 2.6.35, which also did not mask it above).
                    if era >= Era::Init416 && b.raws[parent].p.flags & SD_PREFER_SIBLING != 0 {
                        b.raws[child].p.flags |= SD_PREFER_SIBLING;
                    }
                } else {
                    t += 1;
                }
            }
            if let Some(&(bottom, _)) = ch.first() {
                if sd_degenerate(era, &b.raws[bottom]) {
                    ch.remove(0);
                }
            }
            kept.push(ch);
        }
        kept
    }

    /// Pass 3: compact the arenas to what survived, renumber the levels,
    /// and give every CPU its chain of domains and local groups.
    #[allow(clippy::type_complexity)]
    fn compact(
        &self,
        kept: &[Vec<(usize, usize)>],
    ) -> (Vec<SchedDomainTopo>, Vec<SchedGroupTopo>, Vec<Vec<usize>>, Vec<Vec<usize>>, Vec<Vec<usize>>) {
        let b = self;
        let n = b.m.nr_cpus();
        let mut used = vec![false; b.raws.len()];
        for ch in kept {
            for &(r, _) in ch {
                used[r] = true;
            }
        }
        let live_levels: BTreeSet<usize> = (0..b.raws.len()).filter(|&r| used[r]).map(|r| b.raws[r].level).collect();
        let rank: BTreeMap<usize, usize> = live_levels.iter().enumerate().map(|(k, &li)| (li, k)).collect();
        let mut order: Vec<usize> = (0..b.raws.len()).filter(|&r| used[r]).collect();
        order.sort_by_key(|&r| (b.raws[r].level, b.span_of(r)[0], r));
        let mut new_id = vec![usize::MAX; b.raws.len()];
        for (k, &r) in order.iter().enumerate() {
            new_id[r] = k;
        }
        let mut new_gid = vec![usize::MAX; b.groups.len()];
        let mut groups: Vec<SchedGroupTopo> = Vec::new();
        let mut domains: Vec<SchedDomainTopo> = Vec::with_capacity(order.len());
        for &r in &order {
            let raw = &b.raws[r];
            let level = &b.levels[raw.level];
            let span = level.spans[raw.span_id].clone();
            let mut gl = Vec::with_capacity(raw.groups.len());
            for &g in &raw.groups {
                if new_gid[g] == usize::MAX {
                    new_gid[g] = groups.len();
                    groups.push(b.groups[g].clone());
                }
                gl.push(new_gid[g]);
            }
            domains.push(SchedDomainTopo {
                name: level.name,
                level: rank[&raw.level],
                span_weight: span.len(),
                span,
                groups: gl,
                flags: raw.p.flags,
                min_interval_ms: raw.p.min_interval_ms,
                max_interval_ms: raw.p.max_interval_ms,
                busy_factor: raw.p.busy_factor,
                imbalance_pct: raw.p.imbalance_pct,
                cache_nice_tries: raw.p.cache_nice_tries,
                busy_idx: raw.p.idx[0],
                idle_idx: raw.p.idx[1],
                newidle_idx: raw.p.idx[2],
                wake_idx: raw.p.idx[3],
                forkexec_idx: raw.p.idx[4],
                smt_gain: raw.p.smt_gain,
                numa_distance: level.numa_distance,
                imb_numa_nr: raw.imb_numa_nr,
                parent: None,
            });
        }

        let mut cpu_domains = Vec::with_capacity(n);
        let mut cpu_local_group = Vec::with_capacity(n);
        let mut cpu_local_group_idx = Vec::with_capacity(n);
        for (c, ch) in kept.iter().enumerate() {
            let ds: Vec<usize> = ch.iter().map(|&(r, _)| new_id[r]).collect();
            for w in ds.windows(2) {
                domains[w[0]].parent.get_or_insert(w[1]);
            }
            let mut lg = Vec::with_capacity(ch.len());
            let mut lgi = Vec::with_capacity(ch.len());
            for &(r, own) in ch {
                // Groups are sorted by first CPU: binary search, then scan ties.
                let raw_groups = &b.raws[r].groups;
                let first = b.groups[own].first_cpu;
                let pos = raw_groups.partition_point(|&x| b.groups[x].first_cpu < first);
                let idx = raw_groups[pos..]
                    .iter()
                    .position(|&x| x == own)
                    .map(|i| pos + i)
                    // Overlap groups of an asymmetric SLIT: the CPU's own child
                    // group may have been covered by another; use the first
                    // group containing the CPU.
                    .or_else(|| raw_groups.iter().position(|&x| b.groups[x].cpus.binary_search(&c).is_ok()))
                    .unwrap_or(0);
                lg.push(new_gid[raw_groups[idx]]);
                lgi.push(idx);
            }
            cpu_domains.push(ds);
            cpu_local_group.push(lg);
            cpu_local_group_idx.push(lgi);
        }
        (domains, groups, cpu_domains, cpu_local_group, cpu_local_group_idx)
    }
}

/// The levels within the cpu_maps (build_sched_domain(): the span is
/// tl->mask(cpu) & cpu_map; sched/sd_cpu_map.rs). Also each span's
/// topology mask weight. Without `dom`, the levels as they are: one
/// cpu_map, every CPU.
fn within_cpu_map(levels: Vec<Level>, dom: Option<&[Option<usize>]>) -> (Vec<Level>, Vec<Vec<usize>>) {
    let Some(dom) = dom else {
        let w = levels.iter().map(|l| l.spans.iter().map(Vec::len).collect()).collect();
        return (levels, w);
    };
    let mut weights = Vec::with_capacity(levels.len());
    let levels = levels
        .into_iter()
        .map(|l| {
            let (spans, cpu_span, w) = split_spans(&l.spans, &l.cpu_span, dom);
            weights.push(w);
            Level { spans, cpu_span, ..l }
        })
        .collect();
    (levels, weights)
}

/// Build the sched domains and groups of machine `m` as kernel `v` would at
/// boot (all CPUs online, one root domain): over every CPU but the
/// `isolated` ones (isolcpus=, HK_TYPE_DOMAIN: sched_init_domains() builds
/// over the housekeeping CPUs and attaches the others to the NULL domain,
/// so they have no domain at all).
pub fn build_sched_domains(m: &Machine, mech: &Mechanisms, isolated: Option<&CpuMask>) -> SchedTopology {
    build_partitioned_sched_domains(m, mech, isolated, &[])
}

/// build_sched_domains() over several cpu_maps, as
/// partition_sched_domains() gives them after cpuset partitions
/// (kernel/cgroup/cpuset.c generate_sched_domains()): each `root`
/// partition's CPUs, and every other CPU but the `isolated` ones (isolcpus=
/// and `isolated` partitions: the NULL domain). No domain spans two
/// cpu_maps. Deviation: the kernel gives each cpu_map a root domain of its
/// own; the model keeps one (sched.rd), so cpupri, the RT and deadline
/// overload masks and rd->overload span every CPU; a task's CPUs, which
/// its cpuset keeps within one partition, keep its pushes and pulls there.
pub fn build_partitioned_sched_domains(
    m: &Machine,
    mech: &Mechanisms,
    isolated: Option<&CpuMask>,
    partitions: &[CpuMask],
) -> SchedTopology {
    let era = mech.sd_init;
    let n = m.nr_cpus();
    let (dom, nr_map) = cpu_maps(n, isolated, partitions);
    let (levels, mask_weight) = within_cpu_map(topology_levels(m, era, mech.sd_pkg_named_pkg), dom.as_deref());
    let mut b = Builder {
        m,
        era,
        levels,
        mask_weight,
        nr_map,
        isolated,
        raws: Vec::new(),
        groups: Vec::new(),
        group_index: GroupIndex::default(),
        covered: vec![0; n],
        stamp: 0,
    };

    let (chains, local) = b.attach_levels();
    b.set_imb_numa_nr(&chains);
    let kept = b.prune(&chains, &local);
    let (domains, groups, cpu_domains, cpu_local_group, cpu_local_group_idx) = b.compact(&kept);
    let mut topo = SchedTopology {
        domains,
        groups,
        cpu_domains,
        cpu_local_group,
        cpu_local_group_idx,
        sd_llc: vec![None; n],
        sd_llc_size: vec![1; n],
        sd_llc_id: (0..n).collect(),
        sd_numa: vec![None; n],
        isolated: isolated.cloned().unwrap_or_else(|| CpuMask::new(n)),
        partitioned: partitions.iter().fold(CpuMask::new(n), |mut all, p| {
            all.or_assign(p);
            all
        }),
        llc_mask: vec![CpuMask::default(); n],
    };
    // update_top_cache_domain [kernel/sched/topology.c @4.16, @6.1].
    for c in 0..n {
        let llc = topo.highest_flag_domain(c, SD_SHARE_PKG_RESOURCES);
        if let Some(sd) = llc {
            topo.sd_llc_size[c] = topo.domains[sd].span_weight;
            topo.sd_llc_id[c] = topo.domains[sd].span[0];
            if c == topo.sd_llc_id[c] {
                topo.llc_mask[c] = CpuMask::from_cpus(n, &topo.domains[sd].span);
            }
        } else {
            topo.llc_mask[c] = CpuMask::from_cpus(n, &[c]);
        }
        topo.sd_llc[c] = llc;
        topo.sd_numa[c] = topo.lowest_flag_domain(c, SD_NUMA);
    }
    topo
}
