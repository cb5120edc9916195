//! The cpu_maps sched domains are built over (kernel/sched/topology.c
//! partition_sched_domains(), after kernel/cgroup/cpuset.c
//! generate_sched_domains()): every CPU but the isolated ones (isolcpus=
//! and `isolated` cpuset partitions: the NULL domain), less each `root`
//! cpuset partition's CPUs, which are a cpu_map of their own. Each cpu_map
//! is built on its own, so a topology span that crosses cpu_maps becomes
//! one span per cpu_map (sched/sd_build.rs).

use std::collections::BTreeMap;

use crate::cpumask::CpuMask;

/// Per CPU, its cpu_map (0: the root cpuset's; 1 + i: partition i's; None:
/// the NULL domain), None for all when there is one cpu_map of every CPU;
/// and per CPU the weight of its cpu_map (0 on the NULL domain).
pub(crate) fn cpu_maps(
    n: usize,
    isolated: Option<&CpuMask>,
    partitions: &[CpuMask],
) -> (Option<Vec<Option<usize>>>, Vec<usize>) {
    if isolated.is_none() && partitions.is_empty() {
        return (None, vec![n; n]);
    }
    let dom: Vec<Option<usize>> = (0..n)
        .map(|c| match partitions.iter().position(|p| p.test(c)) {
            _ if isolated.is_some_and(|i| i.test(c)) => None,
            Some(p) => Some(p + 1),
            None => Some(0),
        })
        .collect();
    let mut weight = vec![0; partitions.len() + 1];
    dom.iter().flatten().for_each(|&x| weight[x] += 1);
    let nr_map = dom.iter().map(|x| x.map_or(0, |x| weight[x])).collect();
    (Some(dom), nr_map)
}

/// One topology level's spans within the cpu_maps `dom`: each span split
/// by cpu_map, spans left alike merged, no span for a CPU on the NULL
/// domain. Returns the spans, each CPU's span, and each span's topology
/// mask weight (the span before the split, which sd_init() sizes the
/// intervals by).
pub(crate) fn split_spans(
    spans: &[Vec<usize>],
    cpu_span: &[Option<usize>],
    dom: &[Option<usize>],
) -> (Vec<Vec<usize>>, Vec<Option<usize>>, Vec<usize>) {
    let mut index: BTreeMap<Vec<usize>, usize> = BTreeMap::new();
    let (mut out, mut weight) = (Vec::new(), Vec::new());
    let mut remap: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    for (sid, span) in spans.iter().enumerate() {
        let mut maps: Vec<usize> = Vec::new();
        span.iter().filter_map(|&c| dom[c]).for_each(|d| {
            if !maps.contains(&d) {
                maps.push(d);
            }
        });
        for d in maps {
            let kept: Vec<usize> = span.iter().copied().filter(|&c| dom[c] == Some(d)).collect();
            let next = out.len();
            let id = *index.entry(kept.clone()).or_insert(next);
            if id == next {
                out.push(kept);
                weight.push(span.len());
            }
            remap.insert((sid, d), id);
        }
    }
    let cpu_span = cpu_span
        .iter()
        .enumerate()
        .map(|(c, s)| match (*s, dom[c]) {
            (Some(s), Some(d)) => remap.get(&(s, d)).copied(),
            _ => None,
        })
        .collect();
    (out, cpu_span, weight)
}
