//! The sched domain hierarchy as the scheduler reads it: the domains and
//! groups each CPU sees, bottom-up, and the lookups the balancer and the
//! wakeup path make on them (for_each_domain, highest_flag_domain,
//! cpus_share_cache, ...). How it is built from the machine, level by
//! level and version by version, is `sd_build.rs`.
//!
//! Domains and groups live in two arenas. A domain is shared by every CPU
//! whose domain at that level has the same span (and, on overlapping NUMA
//! levels, the same groups); a group is shared by every domain at that level
//! that contains it, like the kernel's shared sched_group_capacity. Per-CPU
//! lookups (`cpu_domains`, `cpu_local_group`, `sd_llc`, ...) are O(1);
//! `lowest_domain_spanning` is O(levels x log span).

use crate::sched::sd_flags::{flag_names, SD_SHARED_CHILD_MASK};

// ---------------------------------------------------------------------------
// Public structures
// ---------------------------------------------------------------------------

/// A sched_group plus its shared sched_group_capacity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedGroupTopo {
    /// Sorted CPU ids.
    pub cpus: Vec<usize>,
    pub first_cpu: usize,
    /// Sum of arch_scale_cpu_capacity over the CPUs.
    pub capacity: u64,
    /// group_weight.
    pub weight: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedDomainTopo {
    /// "SMT", "MC", "DIE" (<6.12) / "PKG" (6.12+), "NODE", "NUMA";
    /// 2.6.x: "SIBLING", "MC", "CPU", "NODE", "ALLNODES".
    pub name: &'static str,
    /// 0 = lowest level that exists on this machine (counted over the levels
    /// that survive pruning on any CPU).
    pub level: usize,
    /// Sorted CPU ids.
    pub span: Vec<usize>,
    pub span_weight: usize,
    /// Ids into `SchedTopology::groups`, sorted by first CPU: the kernel's
    /// ring as built for the span's first CPU. The kernel's ring for CPU c
    /// starts at c's own group; see `SchedTopology::groups_from`.
    pub groups: Vec<usize>,
    pub flags: u32,
    pub min_interval_ms: u64,
    pub max_interval_ms: u64,
    pub busy_factor: u32,
    pub imbalance_pct: u32,
    pub cache_nice_tries: u32,
    /// cpu_load[] indices (2.6.x and 4.16/4.19); 0 where absent.
    pub busy_idx: usize,
    pub idle_idx: usize,
    pub newidle_idx: usize,
    pub wake_idx: usize,
    pub forkexec_idx: usize,
    /// SMT capacity gain: 1178 on SMT levels of 2.6.35 and 4.16/4.19, else 0.
    pub smt_gain: u32,
    /// The SLIT distance of a NUMA level; 0 for other levels.
    pub numa_distance: u32,
    /// sd->imb_numa_nr (5.18+): how many tasks a NUMA domain lets run on
    /// the destination while a small imbalance is allowed to remain.
    pub imb_numa_nr: u32,
    /// The domain above this one (sd->parent), if any.
    pub parent: Option<usize>,
}

#[derive(Debug, Clone)]
pub struct SchedTopology {
    /// Arena, shared by all CPUs whose domain at that level has the same span.
    pub domains: Vec<SchedDomainTopo>,
    /// Arena (kernel: sched_group + shared sched_group_capacity).
    pub groups: Vec<SchedGroupTopo>,
    /// Per CPU: domain ids bottom-up.
    pub cpu_domains: Vec<Vec<usize>>,
    /// Per CPU, parallel to cpu_domains: the group id (in that domain) that
    /// contains this CPU.
    pub cpu_local_group: Vec<Vec<usize>>,
    /// Per CPU, parallel to cpu_domains: the index of the local group in the
    /// domain's `groups` list.
    pub cpu_local_group_idx: Vec<Vec<usize>>,
    /// Per CPU: the highest domain with SD_SHARE_PKG_RESOURCES (the LLC domain).
    pub sd_llc: Vec<Option<usize>>,
    /// Per CPU: span weight of sd_llc, 1 without one.
    pub sd_llc_size: Vec<usize>,
    /// Per CPU: first CPU of sd_llc's span, the CPU itself without one.
    pub sd_llc_id: Vec<usize>,
    /// Per CPU: the lowest SD_NUMA domain (None on 2.6.x, which has no SD_NUMA).
    pub sd_numa: Vec<Option<usize>>,
    /// The CPUs isolcpus= and `isolated` cpuset partitions left out of the
    /// domains (HK_TYPE_DOMAIN), on the NULL domain: no balancing, no NOHZ
    /// idle balancing (on_null_domain()).
    pub isolated: crate::cpumask::CpuMask,
    /// The CPUs of `root` cpuset partitions: domains of their own, and out
    /// of the root cpuset's effective CPUs.
    pub partitioned: crate::cpumask::CpuMask,
    /// Indexed by sd_llc_id: the LLC's span as a mask (the wakeup's idle
    /// scan, a word at a time); empty at the other indices.
    pub llc_mask: Vec<crate::cpumask::CpuMask>,
}

impl SchedTopology {
    /// highest_flag_domain [kernel/sched/sched.h @6.1]: the highest domain of
    /// `cpu` with `flag`. For flags that children inherit (SDF_SHARED_CHILD)
    /// the walk stops at the first domain without it, as the kernel's does.
    pub fn highest_flag_domain(&self, cpu: usize, flag: u32) -> Option<usize> {
        let mut hsd = None;
        for &sd in &self.cpu_domains[cpu] {
            if self.domains[sd].flags & flag != 0 {
                hsd = Some(sd);
                continue;
            }
            if flag & SD_SHARED_CHILD_MASK != 0 {
                break;
            }
        }
        hsd
    }

    /// lowest_flag_domain [kernel/sched/sched.h @6.1].
    pub fn lowest_flag_domain(&self, cpu: usize, flag: u32) -> Option<usize> {
        self.cpu_domains[cpu].iter().copied().find(|&sd| self.domains[sd].flags & flag != 0)
    }

    /// The lowest domain of `cpu` whose span contains `other_cpu`
    /// (for_each_domain + cpumask_test_cpu, as in wake_affine's search).
    pub fn lowest_domain_spanning(&self, cpu: usize, other_cpu: usize) -> Option<usize> {
        self.cpu_domains[cpu].iter().copied().find(|&sd| self.domains[sd].span.binary_search(&other_cpu).is_ok())
    }

    /// cpus_share_cache [kernel/sched/core.c @6.1]: same sd_llc_id.
    pub fn cpus_share_cache(&self, a: usize, b: usize) -> bool {
        self.sd_llc_id[a] == self.sd_llc_id[b]
    }

    /// The groups of `cpu`'s domain number `k` (index into cpu_domains[cpu]) in
    /// the kernel's walk order for that CPU: its own group first, then on round
    /// the ring (`do { ... } while (sg = sg->next, sg != sd->groups)`).
    pub fn groups_from(&self, cpu: usize, k: usize) -> impl Iterator<Item = usize> + '_ {
        let n = self.domains[self.cpu_domains[cpu][k]].groups.len();
        (0..n).map(move |i| self.group_from(cpu, k, i))
    }

    /// The `i`th group of `groups_from(cpu, k)`: for a walk that needs
    /// `&mut SchedEnv` between groups (no list collected per walk).
    #[inline]
    pub fn group_from(&self, cpu: usize, k: usize, i: usize) -> usize {
        let sd = &self.domains[self.cpu_domains[cpu][k]];
        sd.groups[(self.cpu_local_group_idx[cpu][k] + i) % sd.groups.len()]
    }

    /// find_idlest_cpu's descent step: the highest level of `cpu` whose
    /// span is smaller than `weight` and that has `flag`.
    pub fn highest_flag_level_below(&self, cpu: usize, weight: usize, flag: u32) -> Option<usize> {
        let mut level = None;
        for (tl, &td) in self.cpu_domains[cpu].iter().enumerate() {
            if weight <= self.domains[td].span_weight {
                break;
            }
            if self.domains[td].flags & flag != 0 {
                level = Some(tl);
            }
        }
        level
    }

    /// Number of distinct levels (the longest chain).
    pub fn nr_levels(&self) -> usize {
        self.domains.iter().map(|d| d.level + 1).max().unwrap_or(0)
    }

    /// A sched_domain_debug-style listing of `cpu`'s domains, one line each:
    /// `MC span=0-7 groups={0},{1},... flags=... interval=8..16 busy_factor=16 imbalance_pct=117`.
    pub fn describe(&self, cpu: usize) -> String {
        let mut out = String::new();
        for &sd in &self.cpu_domains[cpu] {
            let d = &self.domains[sd];
            let groups: Vec<String> =
                d.groups.iter().map(|&g| format!("{{{}}}", cpulist(&self.groups[g].cpus))).collect();
            out.push_str(&format!(
                "level {} {} span={} groups={} flags={} interval={}..{} busy_factor={} imbalance_pct={} \
                 cache_nice_tries={}\n",
                d.level,
                d.name,
                cpulist(&d.span),
                groups.join(","),
                flag_names(d.flags),
                d.min_interval_ms,
                d.max_interval_ms,
                d.busy_factor,
                d.imbalance_pct,
                d.cache_nice_tries,
            ));
        }
        out
    }
}

/// A sorted CPU list as the kernel prints it (%*pbl): "0-3,8,10-11".
pub fn cpulist(cpus: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if i == j { cpus[i].to_string() } else { format!("{}-{}", cpus[i], cpus[j]) });
        i = j + 1;
    }
    parts.join(",")
}

#[cfg(test)]
#[path = "topology_tests.rs"]
mod tests;
