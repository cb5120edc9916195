//! Models memory bandwidth: each NUMA node's DRAM delivers at most
//! `machine.memory_bandwidth` bytes per second, and the work that streams
//! through it (page clearing, copy_to_user, a `run` op the scenario marks
//! with `memory_traffic`) shares that bandwidth. While the CPUs of a node
//! ask for less than it delivers, nothing changes; when they ask for more,
//! the memory-bound share of every streaming task's work stretches by one
//! common factor, the node's stall, until their traffic together is the
//! node's bandwidth: processor sharing of the memory controller, the
//! roofline's flat part.
//!
//! A streaming task on a CPU is a `Demand`: `rate`, the bytes it moves per
//! µs of its work; `share`, the part of its work that waits on memory (the
//! task's `memory_bound`, 1/1024ths); `speed`, its CPU's frequency
//! (1/1024ths of max_freq, the cpufreq room's). One unit of its work takes
//! `(1 - share) / speed + share * stall` units of wall time, so it moves
//! `rate / that` bytes per µs. The stall is the x >= 1 that brings the sum
//! over the node's CPUs down to its bandwidth (`solve`).
//!
//! This room knows nothing of the runqueues: the scheduler tells it what
//! each CPU runs (sched/membw.rs) and moves the end of every op on a node
//! whose stall changed.
//!
//! Deviation: the traffic is the node's of the CPU the task runs on (no
//! remote traffic and no interconnect limit); DMA by devices does not take
//! bandwidth; below saturation the latency of a miss does not grow with
//! the load (no loaded-latency curve), so a node at 60 % of its bandwidth
//! runs every copier at full speed.

/// 1/1024ths (SCHED_CAPACITY_SCALE), as the cpufreq room's speeds.
pub const SCALE: u32 = 1024;

/// One CPU's streaming work: what its running task asks of memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Demand {
    /// Bytes moved per µs of work at max_freq without stalls.
    pub rate: u32,
    /// The memory-bound share of the work, 1/1024ths (> 0).
    pub share: u16,
    /// The CPU's speed, 1/1024ths of max_freq.
    pub speed: u32,
}

impl Demand {
    /// Bytes per µs it moves on an unsaturated node (an integer, so that
    /// a node's sum can be kept exactly as CPUs come and go).
    #[inline]
    fn unstalled(&self) -> u64 {
        // rate / ((1 - m) / s + m), in 1/1024ths.
        let (s, m, one) = (self.speed as u64, self.share as u64, SCALE as u64);
        self.rate as u64 * one * s / ((one - m) * one + m * s).max(1)
    }

    /// Wall time per unit of work at stall `x`.
    fn wall(&self, x: f64) -> f64 {
        let m = self.share as f64 / SCALE as f64;
        (1.0 - m) * SCALE as f64 / self.speed.max(1) as f64 + m * x
    }
}

/// One node's memory controller.
#[derive(Debug, Clone, Default)]
pub struct MemNode {
    /// Bytes per µs the node delivers (0: no limit).
    pub bandwidth: u64,
    /// The stall of memory-bound work, 1/1024ths (SCALE: none).
    pub stall: u32,
    /// The CPUs of the node.
    pub cpus: Vec<usize>,
    /// What its CPUs ask for at no stall, bytes per µs (the sum of their
    /// demands' `unstalled`).
    pub asked: u64,
    /// The traffic of the node's CPUs now, bytes per ns.
    pub traffic: f64,
    /// Bytes moved by the node's CPUs up to `since`.
    pub bytes: f64,
    /// Time spent saturated (stall > SCALE) up to `since`, ns, and the
    /// time weighted by the stall (1/1024ths x ns).
    pub saturated_ns: u64,
    pub stall_ns: u128,
    /// When the demand or the stall last changed.
    pub since: u64,
}

/// The memory bandwidth of the machine's nodes.
#[derive(Debug, Clone, Default)]
pub struct MemBw {
    pub nodes: Vec<MemNode>,
    /// Per CPU: its demand (None: its task does not stream).
    pub cpus: Vec<Option<Demand>>,
    /// Per CPU: its node.
    pub node_of: Vec<usize>,
}

impl MemBw {
    /// `bandwidth`: bytes per second per node (0: no model, every call a
    /// no-op).
    pub fn new(bandwidth: u64, node_cpus: &[Vec<usize>], nr_cpus: usize) -> Self {
        if bandwidth == 0 {
            return MemBw::default();
        }
        let mut node_of = vec![0; nr_cpus];
        for (n, cpus) in node_cpus.iter().enumerate() {
            for &c in cpus {
                node_of[c] = n;
            }
        }
        let nodes = node_cpus
            .iter()
            .map(|cpus| MemNode {
                bandwidth: bandwidth / 1_000_000,
                stall: SCALE,
                cpus: cpus.clone(),
                ..MemNode::default()
            })
            .collect();
        MemBw { nodes, cpus: vec![None; nr_cpus], node_of }
    }

    #[inline]
    pub fn enabled(&self) -> bool {
        !self.nodes.is_empty()
    }

    /// `cpu` now runs `d`. Returns its node when that changed its demand.
    #[inline]
    pub fn set_cpu(&mut self, cpu: usize, d: Option<Demand>) -> Option<usize> {
        let old = self.cpus[cpu];
        if old == d {
            return None;
        }
        self.cpus[cpu] = d;
        let n = &mut self.nodes[self.node_of[cpu]];
        n.asked = n.asked - old.map_or(0, |o| o.unstalled()) + d.map_or(0, |d| d.unstalled());
        Some(self.node_of[cpu])
    }

    /// The stall (1/1024ths) that brings `node`'s traffic down to its
    /// bandwidth: SCALE when its CPUs ask for no more than it delivers.
    pub fn solve(&self, node: usize) -> u32 {
        let n = &self.nodes[node];
        if n.asked <= n.bandwidth {
            return SCALE;
        }
        let ds = || n.cpus.iter().filter_map(|&c| self.cpus[c]);
        let b = n.bandwidth as f64;
        // Bytes per µs at stall x.
        let traffic = |x: f64| ds().map(|d| d.rate as f64 / d.wall(x)).sum::<f64>();
        // The traffic falls and is convex in x: Newton's steps from the
        // left stay left of the root and climb to it. asked / bandwidth is
        // left of it (a unit of work takes at most x times its unstalled
        // time at stall x) and is the root when every task is wholly
        // memory-bound.
        let mut x = n.asked as f64 / b;
        for _ in 0..64 {
            let g = traffic(x) - b;
            let dg: f64 = ds()
                .map(|d| {
                    let w = d.wall(x);
                    -(d.rate as f64) * (d.share as f64 / SCALE as f64) / (w * w)
                })
                .sum();
            if g <= b * 1e-9 || dg >= 0.0 {
                break;
            }
            x -= g / dg;
        }
        (x * SCALE as f64).round().max(SCALE as f64) as u32
    }

    /// From `now` on, `node` runs at `stall` with its CPUs' demands as
    /// they are: the time since the last change is accounted at the old
    /// traffic and stall.
    pub fn commit(&mut self, node: usize, stall: u32, now: u64) {
        let (bytes, sat, stall_ns) = self.counters_at(node, now);
        let n = &self.nodes[node];
        let traffic = if stall == SCALE {
            n.asked as f64 / 1000.0
        } else {
            let x = stall as f64 / SCALE as f64;
            n.cpus.iter().filter_map(|&c| self.cpus[c]).map(|d| d.rate as f64 / d.wall(x)).sum::<f64>() / 1000.0
        };
        let n = &mut self.nodes[node];
        (n.bytes, n.saturated_ns, n.stall_ns) = (bytes, sat, stall_ns);
        n.since = now;
        n.stall = stall;
        n.traffic = traffic;
    }

    /// (bytes moved, saturated ns, stall-weighted ns) of `node` up to `now`.
    pub fn counters_at(&self, node: usize, now: u64) -> (f64, u64, u128) {
        let n = &self.nodes[node];
        let dt = now.saturating_sub(n.since);
        let sat = n.saturated_ns + if n.stall > SCALE { dt } else { 0 };
        (n.bytes + n.traffic * dt as f64, sat, n.stall_ns + dt as u128 * n.stall as u128)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bw(gbs: u64, cpus: usize) -> MemBw {
        MemBw::new(gbs * 1_000_000_000, &[(0..cpus).collect()], cpus)
    }

    #[test]
    fn no_stall_below_the_bandwidth() {
        let mut m = bw(10, 4);
        // Two copiers at 4 GB/s each: 8 of 10.
        for c in 0..2 {
            m.set_cpu(c, Some(Demand { rate: 4000, share: 1024, speed: 1024 }));
        }
        assert_eq!(m.solve(0), SCALE);
    }

    #[test]
    fn fully_memory_bound_copiers_share_the_bandwidth() {
        let mut m = bw(10, 4);
        // Four copiers at 5 GB/s ask for 20 of 10: each runs at half speed.
        for c in 0..4 {
            m.set_cpu(c, Some(Demand { rate: 5000, share: 1024, speed: 1024 }));
        }
        assert_eq!(m.solve(0), 2 * SCALE);
    }

    #[test]
    fn only_the_memory_share_stretches() {
        let mut m = bw(10, 4);
        // Half memory-bound at 10 GB/s of work, two of them: 20 of 10 at
        // x = 1; at x = 3 each unit of work takes 0.5 + 1.5 = 2, so each
        // moves 5 GB/s: 10 together.
        for c in 0..2 {
            m.set_cpu(c, Some(Demand { rate: 10_000, share: 512, speed: 1024 }));
        }
        assert_eq!(m.solve(0), 3 * SCALE);
    }

    #[test]
    fn the_same_demand_changes_nothing() {
        let mut m = bw(10, 2);
        let d = Some(Demand { rate: 1, share: 1, speed: 1024 });
        assert_eq!(m.set_cpu(1, d), Some(0));
        assert_eq!(m.set_cpu(1, d), None);
        assert!(!MemBw::new(0, &[vec![0]], 1).enabled());
    }
}
