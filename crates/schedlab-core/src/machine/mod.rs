//! Models the hardware the kernel discovers at boot: SMT siblings, cores,
//! last-level caches, packages and NUMA nodes with a SLIT distance table
//! (arch/x86/kernel/smpboot.c, drivers/base/arch_topology.c,
//! drivers/acpi/numa). Presets by name and explicit layouts.
//!
//! CPU numbering: CPUs are numbered package by package, core by core, and
//! thread by thread within a core (cpu = ((pkg * cores + core) * threads) + t).
//! Deviation: x86 firmware usually enumerates all first threads, then all
//! second threads; the numbering does not change scheduling decisions here
//! except the order of idle scans, which start at the target and wrap.
//!
//! Layout rules (checked by [`Machine::build`]):
//!
//! * every count is >= 1;
//! * `llcs_per_socket` divides `cores_per_socket` (each LLC holds whole cores);
//! * either `nodes` divides `sockets` (each node holds sockets/nodes whole
//!   sockets, e.g. the UMA 4-socket box of seed 002), or `sockets` divides
//!   `nodes` (each socket is split into nodes/sockets nodes, as with AMD NPS or
//!   Intel SNC); in the second case the nodes of a socket must split its cores
//!   and its LLCs evenly, so no LLC straddles two nodes;
//! * the SLIT table is nodes x nodes, 10 on the diagonal, 11..=254 elsewhere
//!   (x86 numa_set_distance rejects a remote distance <= LOCAL_DISTANCE; 255
//!   means unreachable in ACPI), and symmetric.
//!
//! Complexity: `build` is O(cpus + nodes^2); every helper is O(1).

use serde::Deserialize;

pub mod disk;
pub mod idle_states;
mod presets;
pub mod processors;

use crate::error::{Result, SimError};
pub use crate::units::parse_size;
use crate::units::SIZE_ACCEPTED;
use disk::{compile_disks, DiskConfig, RawDisk};
use idle_states::IdleTable;
pub use presets::PRESETS;
use presets::{preset_description, preset_layout, preset_names, PresetLayout};
use processors::{Processor, PROCESSORS};

/// The `[machine]` table of a scenario.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineSpec {
    /// A preset name (see `PRESETS`). Explicit keys below override it.
    pub preset: Option<String>,
    pub sockets: Option<usize>,
    pub cores_per_socket: Option<usize>,
    pub threads_per_core: Option<usize>,
    /// NUMA nodes; sockets are split evenly among them (or nodes among sockets).
    pub nodes: Option<usize>,
    /// Last-level caches per socket (default 1).
    pub llcs_per_socket: Option<usize>,
    /// SLIT node distance table, nodes x nodes (default 10 local, 21 remote).
    pub distance: Option<Vec<Vec<u32>>>,
    /// Memory size, e.g. "64GiB" (used by the mm model).
    pub memory: Option<String>,
    /// The CPUs' idle-state table (the intel_idle driver's, machine/idle_states.rs):
    /// "skx", "hsw", "hsx", "bdw", "gnr", "haltpoll", or "none" (no cpuidle driver: the idle loop
    /// halts and a wakeup pays the flat `kernel.costs.idle_exit`).
    pub cpuidle: Option<String>,
    /// The processor whose P-states the CPUs run at (machine/processors.rs,
    /// the cpufreq room), or "none" (every CPU at one fixed speed).
    pub cpufreq: Option<String>,
    /// What each NUMA node's DRAM delivers, e.g. "99.5GB/s" (the memory
    /// bandwidth room, membw/), or "none" (no limit).
    pub memory_bandwidth: Option<String>,
    /// Block devices (machine/disk.rs).
    #[serde(default)]
    pub disk: Vec<RawDisk>,
    /// Free-text description shown in reports.
    pub description: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuInfo {
    pub id: usize,
    /// Global core id (unique across packages).
    pub core: usize,
    /// Thread index within its core (0 for the first sibling).
    pub thread: usize,
    /// Global LLC id.
    pub llc: usize,
    pub package: usize,
    pub node: usize,
    /// arch_scale_cpu_capacity: 1024 on symmetric machines.
    pub capacity: u32,
}

#[derive(Debug, Clone)]
pub struct Machine {
    pub name: String,
    pub description: String,
    pub cpus: Vec<CpuInfo>,
    pub nr_packages: usize,
    pub nr_cores: usize,
    pub nr_llcs: usize,
    pub nr_nodes: usize,
    pub threads_per_core: usize,
    /// SLIT distances, `node_distance[a][b]`.
    pub node_distance: Vec<Vec<u32>>,
    /// Memory in bytes (0 if not given).
    pub memory_bytes: u64,
    /// The idle-state table of the CPUs; None: no cpuidle driver.
    pub idle_table: Option<IdleTable>,
    /// The processor's P-states; None: no CPU frequency (every CPU runs
    /// at one speed).
    pub processor: Option<&'static Processor>,
    /// Bytes per second each node's memory delivers; 0: no limit.
    pub memory_bandwidth: u64,
    /// Block devices, by index.
    pub disks: Vec<DiskConfig>,
    // Precomputed masks, each a sorted list of CPU ids.
    pub core_cpus: Vec<Vec<usize>>,
    pub llc_cpus: Vec<Vec<usize>>,
    pub package_cpus: Vec<Vec<usize>>,
    pub node_cpus: Vec<Vec<usize>>,
}

/// SLIT distance of a node to itself (include/linux/topology.h LOCAL_DISTANCE).
pub const LOCAL_DISTANCE: u32 = 10;
/// Default remote distance used when no table is given: 21 is what most
/// two-socket x86 firmware reports (REMOTE_DISTANCE in the kernel is 20).
pub const DEFAULT_REMOTE_DISTANCE: u32 = 21;
/// Largest machine schedlab accepts: x86_64 NR_CPUS with CONFIG_MAXSMP.
pub const MAX_CPUS: usize = 8192;
/// x86_64 MAX_NUMNODES with CONFIG_MAXSMP (NODES_SHIFT 10).
pub const MAX_NODES: usize = 1024;
/// arch_scale_cpu_capacity of every CPU on a symmetric machine
/// (SCHED_CAPACITY_SCALE).
pub const CPU_CAPACITY: u32 = 1024;

/// The default SLIT: LOCAL_DISTANCE on the diagonal, 21 elsewhere.
/// The CPUs of a layout in schedlab's numbering, and the CPU lists of
/// every core, LLC, package and node.
fn lay_out(
    sockets: usize,
    cores_per_socket: usize,
    threads_per_core: usize,
    llcs_per_socket: usize,
    nodes: usize,
    nodes_per_socket: usize,
) -> (Vec<CpuInfo>, [Vec<Vec<usize>>; 4]) {
    let nr_cpus = sockets * cores_per_socket * threads_per_core;
    let cores_per_llc = cores_per_socket / llcs_per_socket;
    let sockets_per_node = if nodes <= sockets { sockets / nodes } else { 1 };
    let cores_per_node_in_socket = cores_per_socket / nodes_per_socket;
    let nr_cores = sockets * cores_per_socket;
    let nr_llcs = sockets * llcs_per_socket;
    let mut cpus = Vec::with_capacity(nr_cpus);
    let mut core_cpus = vec![Vec::with_capacity(threads_per_core); nr_cores];
    let mut llc_cpus = vec![Vec::new(); nr_llcs];
    let mut package_cpus = vec![Vec::new(); sockets];
    let mut node_cpus = vec![Vec::new(); nodes];
    for (pkg, pkg_cpus) in package_cpus.iter_mut().enumerate() {
        for c in 0..cores_per_socket {
            let core = pkg * cores_per_socket + c;
            let llc = pkg * llcs_per_socket + c / cores_per_llc;
            let node = if nodes <= sockets {
                pkg / sockets_per_node
            } else {
                pkg * nodes_per_socket + c / cores_per_node_in_socket
            };
            for thread in 0..threads_per_core {
                let id = core * threads_per_core + thread;
                cpus.push(CpuInfo { id, core, thread, llc, package: pkg, node, capacity: CPU_CAPACITY });
                core_cpus[core].push(id);
                llc_cpus[llc].push(id);
                pkg_cpus.push(id);
                node_cpus[node].push(id);
            }
        }
    }
    (cpus, [core_cpus, llc_cpus, package_cpus, node_cpus])
}

/// How many nodes share a socket: 1 when each node holds whole sockets,
/// nodes / sockets when each socket is split into nodes (which must split
/// its cores and LLCs evenly).
fn split_nodes(
    nodes: usize,
    sockets: usize,
    cores_per_socket: usize,
    llcs_per_socket: usize,
    file: &str,
) -> Result<usize> {
    const NODES_ACCEPTED: &str = "a divisor of sockets (each node holds whole sockets) or a multiple of \
        sockets (each socket split into nodes/sockets nodes, which must split cores_per_socket and \
        llcs_per_socket evenly)";
    if nodes <= sockets {
        if !sockets.is_multiple_of(nodes) {
            return Err(SimError::topology(
                file,
                "machine.nodes",
                format!("{nodes} nodes do not split {sockets} sockets evenly"),
                NODES_ACCEPTED,
            ));
        }
        Ok(1)
    } else {
        if !nodes.is_multiple_of(sockets) {
            return Err(SimError::topology(
                file,
                "machine.nodes",
                format!("{nodes} nodes are not a whole number of nodes per socket for {sockets} sockets"),
                NODES_ACCEPTED,
            ));
        }
        let nps = nodes / sockets;
        if !cores_per_socket.is_multiple_of(nps) || !llcs_per_socket.is_multiple_of(nps) {
            return Err(SimError::topology(
                file,
                "machine.nodes",
                format!(
                    "{nps} nodes per socket do not split {cores_per_socket} cores and \
                     {llcs_per_socket} LLCs per socket evenly"
                ),
                NODES_ACCEPTED,
            ));
        }
        Ok(nps)
    }
}

/// `machine.cpuidle`: a table by name, "none", or the preset's.
fn idle_table_at(name: Option<&str>, preset: Option<IdleTable>, file: &str) -> Result<Option<IdleTable>> {
    match name {
        None => Ok(preset),
        Some("none") => Ok(None),
        Some(t) => IdleTable::from_name(t).map(Some).ok_or_else(|| {
            SimError::topology(
                file,
                "machine.cpuidle",
                format!("unknown idle-state table \"{t}\""),
                "skx (Skylake-SP, Cascade Lake), hsw (Haswell), hsx (Haswell-EP: hsw's C1, C1E, C3, C6), bdw (Broadwell), gnr (Granite Rapids, Xeon 6), haltpoll (a KVM guest), none (no cpuidle driver)",
            )
        }),
    }
}

/// `machine.cpufreq`: a processor by name, "none", or the preset's.
fn processor_at(
    name: Option<&str>,
    preset: Option<&'static Processor>,
    file: &str,
) -> Result<Option<&'static Processor>> {
    match name {
        None => Ok(preset),
        Some("none") => Ok(None),
        Some(n) => processors::processor(n).map(Some).ok_or_else(|| {
            let names: Vec<String> = PROCESSORS.iter().map(|p| format!("{} ({})", p.name, p.model)).collect();
            SimError::topology(
                file,
                "machine.cpufreq",
                format!("unknown processor \"{n}\""),
                format!("{}, or none (no CPU frequency: every CPU at one speed)", names.join(", ")),
            )
        }),
    }
}

/// `machine.memory_bandwidth`: bytes per second per node, "none" (0), or
/// the preset's.
fn memory_bandwidth_at(spec: &MachineSpec, preset: Option<&PresetLayout>, file: &str) -> Result<u64> {
    match spec.memory_bandwidth.as_deref().or(preset.and_then(|p| p.bandwidth)) {
        None | Some("none") => Ok(0),
        Some(s) => crate::units::parse_mem_rate(s).ok_or_else(|| {
            SimError::bad_value(
                file,
                "machine.memory_bandwidth",
                format!("\"{s}\""),
                format!("{}, or \"none\" (no limit)", crate::units::MEM_RATE_ACCEPTED),
            )
        }),
    }
}

/// `machine.memory` ("756GiB") in bytes; 0 when not given.
fn memory_at(memory: Option<&str>, file: &str) -> Result<u64> {
    Ok(match memory {
        None => 0,
        Some(m) => match parse_size(m) {
            Some(0) => return Err(SimError::topology(file, "machine.memory", "memory size is zero", SIZE_ACCEPTED)),
            Some(b) => b,
            None => {
                return Err(SimError::topology(
                    file,
                    "machine.memory",
                    format!("cannot read \"{m}\" as a size"),
                    SIZE_ACCEPTED,
                ))
            }
        },
    })
}

pub fn default_distance(nodes: usize) -> Vec<Vec<u32>> {
    (0..nodes)
        .map(|a| (0..nodes).map(|b| if a == b { LOCAL_DISTANCE } else { DEFAULT_REMOTE_DISTANCE }).collect())
        .collect()
}

impl Machine {
    /// Build a machine from the `[machine]` table: start from the preset if
    /// one is named, apply the explicit keys, validate, and precompute the
    /// masks. `file` names the scenario in errors.
    pub fn build(spec: &MachineSpec, file: &str) -> Result<Machine> {
        let preset = match &spec.preset {
            Some(name) => match preset_layout(name) {
                Some(p) => Some((name.as_str(), p)),
                None => {
                    return Err(SimError::topology(
                        file,
                        "machine.preset",
                        format!("unknown preset \"{name}\""),
                        preset_names(),
                    ))
                }
            },
            None => None,
        };

        if preset.is_none() && spec.sockets.is_none() {
            return Err(SimError::topology(
                file,
                "machine",
                "no layout: the machine needs a preset or an explicit layout",
                format!(
                    "preset = one of {}, or sockets and cores_per_socket \
                     (with optional threads_per_core, nodes, llcs_per_socket, distance)",
                    preset_names()
                ),
            ));
        }
        if preset.is_none() && spec.cores_per_socket.is_none() {
            return Err(SimError::topology(
                file,
                "machine.cores_per_socket",
                "missing: an explicit layout without a preset needs cores_per_socket",
                "an integer >= 1",
            ));
        }

        let pl = preset.as_ref().map(|(_, p)| p);
        let pick = |explicit: Option<usize>, from_preset: Option<usize>, default: usize| {
            explicit.or(from_preset).unwrap_or(default)
        };
        let sockets = pick(spec.sockets, pl.map(|p| p.sockets), 1);
        let cores_per_socket = pick(spec.cores_per_socket, pl.map(|p| p.cores_per_socket), 1);
        let threads_per_core = pick(spec.threads_per_core, pl.map(|p| p.threads_per_core), 1);
        let llcs_per_socket = pick(spec.llcs_per_socket, pl.map(|p| p.llcs_per_socket), 1);
        // Without a preset and without `nodes`, an explicit distance table
        // gives the node count.
        let nodes = pick(spec.nodes, pl.map(|p| p.nodes), spec.distance.as_ref().map_or(1, |d| d.len().max(1)));

        for (key, v) in [
            ("machine.sockets", sockets),
            ("machine.cores_per_socket", cores_per_socket),
            ("machine.threads_per_core", threads_per_core),
            ("machine.nodes", nodes),
            ("machine.llcs_per_socket", llcs_per_socket),
        ] {
            if v == 0 {
                return Err(SimError::topology(file, key, "must be at least 1", "an integer >= 1"));
            }
        }

        let nr_cpus = sockets
            .checked_mul(cores_per_socket)
            .and_then(|c| c.checked_mul(threads_per_core))
            .filter(|&n| n <= MAX_CPUS);
        if nr_cpus.is_none() {
            return Err(SimError::topology(
                file,
                "machine",
                "too many CPUs",
                format!("sockets x cores_per_socket x threads_per_core <= {MAX_CPUS}"),
            ));
        }
        if nodes > MAX_NODES {
            return Err(SimError::topology(
                file,
                "machine.nodes",
                format!("{nodes} nodes is more than the kernel's MAX_NUMNODES"),
                format!("an integer from 1 to {MAX_NODES}"),
            ));
        }

        if cores_per_socket % llcs_per_socket != 0 {
            return Err(SimError::topology(
                file,
                "machine.llcs_per_socket",
                format!("{llcs_per_socket} LLCs do not split {cores_per_socket} cores per socket evenly"),
                format!("a divisor of cores_per_socket ({cores_per_socket})"),
            ));
        }

        let nodes_per_socket = split_nodes(nodes, sockets, cores_per_socket, llcs_per_socket, file)?;

        let node_distance = match (&spec.distance, pl) {
            (Some(d), _) => d.clone(),
            (None, Some(p)) if p.nodes == nodes => p.distance.clone().unwrap_or_else(|| default_distance(nodes)),
            _ => default_distance(nodes),
        };
        validate_distance(&node_distance, nodes, file)?;

        let memory_bytes = memory_at(spec.memory.as_deref().or(pl.map(|p| p.memory)), file)?;
        let idle_table = idle_table_at(spec.cpuidle.as_deref(), pl.and_then(|p| p.idle), file)?;
        let processor = processor_at(spec.cpufreq.as_deref(), pl.and_then(|p| p.processor), file)?;

        // Lay out the CPUs (see the numbering rule at the top of the file).
        let (cpus, [core_cpus, llc_cpus, package_cpus, node_cpus]) =
            lay_out(sockets, cores_per_socket, threads_per_core, llcs_per_socket, nodes, nodes_per_socket);
        let (nr_cores, nr_llcs) = (core_cpus.len(), llc_cpus.len());
        let disks = compile_disks(&spec.disk, file, cpus.len())?;

        let name = match &preset {
            Some((n, _)) => (*n).to_string(),
            None => "custom".to_string(),
        };
        let mut m = Machine {
            name,
            description: String::new(),
            cpus,
            nr_packages: sockets,
            nr_cores,
            nr_llcs,
            nr_nodes: nodes,
            threads_per_core,
            node_distance,
            memory_bytes,
            idle_table,
            processor,
            memory_bandwidth: memory_bandwidth_at(spec, pl, file)?,
            disks,
            core_cpus,
            llc_cpus,
            package_cpus,
            node_cpus,
        };
        // The preset's line describes the preset only while its layout stands.
        let layout_overridden = spec.sockets.is_some()
            || spec.cores_per_socket.is_some()
            || spec.threads_per_core.is_some()
            || spec.nodes.is_some()
            || spec.llcs_per_socket.is_some()
            || spec.distance.is_some()
            || spec.cpuidle.is_some();
        m.description = match (&spec.description, &preset) {
            (Some(d), _) => d.clone(),
            (None, Some((n, _))) if !layout_overridden => preset_description(n).unwrap_or_default().to_string(),
            _ => m.summary(),
        };
        Ok(m)
    }

    /// Build a preset with no overrides.
    pub fn preset(name: &str) -> Result<Machine> {
        let spec = MachineSpec { preset: Some(name.to_string()), ..MachineSpec::default() };
        Machine::build(&spec, "<preset>")
    }

    /// "2 sockets x 12 cores x 2 threads = 48 CPUs, 2 LLCs, 2 nodes".
    pub fn summary(&self) -> String {
        let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        format!(
            "{} x {} x {} = {}, {}, {}",
            plural(self.nr_packages, "socket", "sockets"),
            plural(self.nr_cores / self.nr_packages, "core", "cores"),
            plural(self.threads_per_core, "thread", "threads"),
            plural(self.nr_cpus(), "CPU", "CPUs"),
            plural(self.nr_llcs, "LLC", "LLCs"),
            plural(self.nr_nodes, "node", "nodes"),
        )
    }

    pub fn nr_cpus(&self) -> usize {
        self.cpus.len()
    }

    /// cpus_share_cache at the hardware level: same last-level cache.
    pub fn shares_llc(&self, a: usize, b: usize) -> bool {
        self.cpus[a].llc == self.cpus[b].llc
    }

    /// The SMT siblings of `cpu`, itself included (topology_sibling_cpumask).
    pub fn smt_siblings(&self, cpu: usize) -> &[usize] {
        &self.core_cpus[self.cpus[cpu].core]
    }

    /// CPUs sharing `cpu`'s LLC, itself included (cpu_llc_shared_mask).
    pub fn llc_siblings(&self, cpu: usize) -> &[usize] {
        &self.llc_cpus[self.cpus[cpu].llc]
    }

    /// cpu_to_node.
    pub fn node_of(&self, cpu: usize) -> usize {
        self.cpus[cpu].node
    }

    pub fn has_smt(&self) -> bool {
        self.threads_per_core > 1
    }

    /// node_distance(a, b) between the nodes of two CPUs.
    pub fn cpu_distance(&self, a: usize, b: usize) -> u32 {
        self.node_distance[self.cpus[a].node][self.cpus[b].node]
    }
}

fn validate_distance(d: &[Vec<u32>], nodes: usize, file: &str) -> Result<()> {
    let accepted = format!(
        "a {nodes} x {nodes} table (one row per node), {LOCAL_DISTANCE} on the diagonal, 11..=254 elsewhere, symmetric"
    );
    let err = |msg: String| Err(SimError::topology(file, "machine.distance", msg, accepted.clone()));
    if d.len() != nodes {
        return err(format!("{} rows for {nodes} nodes", d.len()));
    }
    for (a, row) in d.iter().enumerate() {
        if row.len() != nodes {
            return err(format!("row {a} has {} entries for {nodes} nodes", row.len()));
        }
        for (b, &v) in row.iter().enumerate() {
            if a == b && v != LOCAL_DISTANCE {
                return err(format!("distance[{a}][{a}] is {v}; a node's distance to itself is {LOCAL_DISTANCE}"));
            }
            if a != b && !(LOCAL_DISTANCE + 1..=254).contains(&v) {
                return err(format!("distance[{a}][{b}] is {v}; remote distances are 11..=254"));
            }
        }
    }
    for (a, row) in d.iter().enumerate() {
        for (b, &v) in row.iter().enumerate().take(a) {
            if v != d[b][a] {
                return err(format!("distance[{a}][{b}] = {v} but distance[{b}][{a}] = {}", d[b][a]));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(spec: MachineSpec) -> Result<Machine> {
        Machine::build(&spec, "t.toml")
    }

    fn key_of(e: &SimError) -> String {
        match e {
            SimError::Topology { at, .. } => at.key.clone(),
            other => panic!("expected a topology error, got {other:?}"),
        }
    }

    fn check_masks(m: &Machine) {
        // Every CPU appears exactly once in each family of masks, at its own index.
        for (i, c) in m.cpus.iter().enumerate() {
            assert_eq!(c.id, i);
            assert!(m.core_cpus[c.core].contains(&i));
            assert!(m.llc_cpus[c.llc].contains(&i));
            assert!(m.package_cpus[c.package].contains(&i));
            assert!(m.node_cpus[c.node].contains(&i));
            assert_eq!(c.capacity, 1024);
        }
        for fam in [&m.core_cpus, &m.llc_cpus, &m.package_cpus, &m.node_cpus] {
            assert_eq!(fam.iter().map(Vec::len).sum::<usize>(), m.nr_cpus());
            for mask in fam.iter() {
                assert!(!mask.is_empty());
                assert!(mask.windows(2).all(|w| w[0] < w[1]), "masks are sorted");
            }
        }
        // LLCs sit inside packages and inside nodes.
        for llc in &m.llc_cpus {
            assert!(llc.iter().all(|&c| m.cpus[c].package == m.cpus[llc[0]].package));
            assert!(llc.iter().all(|&c| m.cpus[c].node == m.cpus[llc[0]].node));
        }
    }

    #[test]
    fn every_preset_builds() {
        for (name, desc) in PRESETS {
            let m = Machine::preset(name).unwrap();
            assert_eq!(m.name, *name);
            assert_eq!(m.description, *desc);
            assert!(m.memory_bytes > 0);
            check_masks(&m);
        }
    }

    #[test]
    fn preset_counts() {
        // name, cpus, packages, cores, llcs, nodes, threads, llc size
        type Row = (&'static str, usize, usize, usize, usize, usize, usize, usize);
        let table: &[Row] = &[
            ("8cpu-llc", 8, 1, 8, 1, 1, 1, 8),
            ("4cpu", 4, 1, 4, 1, 1, 1, 4),
            ("4x4", 16, 4, 16, 4, 1, 1, 4),
            ("uma8", 8, 1, 8, 1, 1, 1, 8),
            ("numa48", 48, 2, 24, 2, 2, 2, 24),
            ("skl52", 52, 2, 52, 2, 2, 1, 26),
            ("2x8smt", 16, 1, 8, 1, 1, 2, 16),
            ("smp64", 64, 2, 32, 2, 2, 2, 32),
            ("smp256", 256, 4, 128, 4, 4, 2, 64),
            ("smp1024", 1024, 16, 512, 16, 16, 2, 64),
            ("turin768", 768, 2, 384, 24, 2, 2, 32),
            ("gnr384", 384, 2, 192, 6, 6, 2, 64),
            ("uv4096", 4096, 256, 2048, 256, 256, 2, 16),
        ];
        assert_eq!(table.len(), PRESETS.len());
        for &(name, cpus, pkgs, cores, llcs, nodes, threads, llc_size) in table {
            let m = Machine::preset(name).unwrap();
            assert_eq!(m.nr_cpus(), cpus, "{name}");
            assert_eq!(m.nr_packages, pkgs, "{name}");
            assert_eq!(m.nr_cores, cores, "{name}");
            assert_eq!(m.nr_llcs, llcs, "{name}");
            assert_eq!(m.nr_nodes, nodes, "{name}");
            assert_eq!(m.threads_per_core, threads, "{name}");
            assert_eq!(m.has_smt(), threads > 1, "{name}");
            assert!(m.llc_cpus.iter().all(|l| l.len() == llc_size), "{name}");
            assert_eq!(m.node_distance.len(), nodes, "{name}");
        }
    }

    #[test]
    fn preset_masks_and_helpers() {
        let m = Machine::preset("numa48").unwrap();
        // cpu = ((pkg * cores + core) * threads) + t
        assert_eq!(m.smt_siblings(0), &[0, 1]);
        assert_eq!(m.smt_siblings(25), &[24, 25]);
        assert_eq!(m.cpus[25], CpuInfo { id: 25, core: 12, thread: 1, llc: 1, package: 1, node: 1, capacity: 1024 });
        assert_eq!(m.node_cpus[0], (0..24).collect::<Vec<_>>());
        assert_eq!(m.node_cpus[1], (24..48).collect::<Vec<_>>());
        assert!(m.shares_llc(0, 23) && !m.shares_llc(23, 24));
        assert_eq!(m.node_of(47), 1);
        assert_eq!(m.node_distance, vec![vec![10, 21], vec![21, 10]]);
        assert_eq!(m.cpu_distance(0, 47), 21);

        let m = Machine::preset("4x4").unwrap();
        assert_eq!(m.package_cpus[2], vec![8, 9, 10, 11]);
        assert_eq!(m.llc_cpus[3], vec![12, 13, 14, 15]);
        assert_eq!(m.node_cpus[0], (0..16).collect::<Vec<_>>());
        assert!(!m.shares_llc(3, 4));
        assert_eq!(m.smt_siblings(5), &[5]);

        let m = Machine::preset("smp1024").unwrap();
        assert_eq!(m.node_distance[0][3], 21);
        assert_eq!(m.node_distance[0][4], 31);
        assert_eq!(m.node_distance[5][4], 21);
        assert_eq!(m.node_distance[15][15], 10);
        assert_eq!(m.node_of(64), 1);
        assert_eq!(m.memory_bytes, 4 << 40);
    }

    #[test]
    fn explicit_layout() {
        let m = build(MachineSpec {
            sockets: Some(2),
            cores_per_socket: Some(8),
            threads_per_core: Some(2),
            nodes: Some(4),
            llcs_per_socket: Some(2),
            distance: Some(vec![
                vec![10, 11, 21, 21],
                vec![11, 10, 21, 21],
                vec![21, 21, 10, 11],
                vec![21, 21, 11, 10],
            ]),
            memory: Some("64GiB".into()),
            ..MachineSpec::default()
        })
        .unwrap();
        check_masks(&m);
        assert_eq!(m.name, "custom");
        assert_eq!(m.nr_cpus(), 32);
        assert_eq!(m.nr_llcs, 4);
        assert_eq!(m.nr_nodes, 4);
        // Socket 0 is split into nodes 0 and 1, each with one LLC of 4 cores.
        assert_eq!(m.node_cpus[1], (8..16).collect::<Vec<_>>());
        assert_eq!(m.llc_cpus[1], (8..16).collect::<Vec<_>>());
        assert_eq!(m.cpus[17].node, 2);
        assert_eq!(m.memory_bytes, 64 << 30);
        assert_eq!(m.description, "2 sockets x 8 cores x 2 threads = 32 CPUs, 4 LLCs, 4 nodes");

        // Override on top of a preset: 4x4 with SMT.
        let m = build(MachineSpec { preset: Some("4x4".into()), threads_per_core: Some(2), ..MachineSpec::default() })
            .unwrap();
        assert_eq!(m.nr_cpus(), 32);
        assert_eq!(m.nr_nodes, 1);
        assert_eq!(m.smt_siblings(3), &[2, 3]);
        assert_eq!(m.description, m.summary());

        // Several sockets per node.
        let m =
            build(MachineSpec { sockets: Some(4), cores_per_socket: Some(2), nodes: Some(2), ..Default::default() })
                .unwrap();
        assert_eq!(m.node_cpus[1], vec![4, 5, 6, 7]);
        assert_eq!(m.node_distance, default_distance(2));
        assert_eq!(m.memory_bytes, 0);

        // A distance table alone gives the node count.
        let m = build(MachineSpec {
            sockets: Some(2),
            cores_per_socket: Some(2),
            distance: Some(vec![vec![10, 30], vec![30, 10]]),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(m.nr_nodes, 2);
    }

    #[test]
    fn bad_specs_name_their_key() {
        let base = || MachineSpec { sockets: Some(2), cores_per_socket: Some(4), ..MachineSpec::default() };
        let cases: Vec<(MachineSpec, &str)> = vec![
            (MachineSpec::default(), "machine"),
            (MachineSpec { preset: Some("nope".into()), ..Default::default() }, "machine.preset"),
            (MachineSpec { sockets: Some(2), ..Default::default() }, "machine.cores_per_socket"),
            (MachineSpec { sockets: Some(0), ..base() }, "machine.sockets"),
            (MachineSpec { cores_per_socket: Some(0), ..base() }, "machine.cores_per_socket"),
            (MachineSpec { threads_per_core: Some(0), ..base() }, "machine.threads_per_core"),
            (MachineSpec { nodes: Some(0), ..base() }, "machine.nodes"),
            (MachineSpec { nodes: Some(3), ..base() }, "machine.nodes"),
            (MachineSpec { nodes: Some(16), ..base() }, "machine.nodes"),
            (MachineSpec { llcs_per_socket: Some(3), ..base() }, "machine.llcs_per_socket"),
            (MachineSpec { llcs_per_socket: Some(0), ..base() }, "machine.llcs_per_socket"),
            (MachineSpec { nodes: Some(2), distance: Some(vec![vec![10, 21]]), ..base() }, "machine.distance"),
            (
                MachineSpec { nodes: Some(2), distance: Some(vec![vec![10, 21], vec![20, 10]]), ..base() },
                "machine.distance",
            ),
            (
                MachineSpec { nodes: Some(2), distance: Some(vec![vec![10, 10], vec![10, 10]]), ..base() },
                "machine.distance",
            ),
            (
                MachineSpec { nodes: Some(2), distance: Some(vec![vec![12, 21], vec![21, 10]]), ..base() },
                "machine.distance",
            ),
            (MachineSpec { memory: Some("lots".into()), ..base() }, "machine.memory"),
            (MachineSpec { memory: Some("0".into()), ..base() }, "machine.memory"),
            (MachineSpec { sockets: Some(1 << 40), ..base() }, "machine"),
        ];
        for (spec, key) in cases {
            let err = build(spec.clone()).expect_err(&format!("{spec:?} should fail"));
            assert_eq!(key_of(&err), key, "{spec:?}: {err}");
            assert_eq!(err.code(), "SL110");
            let text = err.to_string();
            assert!(text.starts_with("t.toml: "), "{text}");
            assert!(text.contains("accepted: "), "{text}");
        }
        let err = build(MachineSpec { preset: Some("nope".into()), ..Default::default() }).unwrap_err();
        assert!(err.to_string().contains("8cpu-llc, 4cpu, 4x4"), "{err}");
        // Preset distance is dropped (not misapplied) when nodes change.
        let m = build(MachineSpec { preset: Some("smp1024".into()), nodes: Some(4), ..Default::default() }).unwrap();
        assert_eq!(m.node_distance, default_distance(4));
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("64GiB"), Some(64 << 30));
        assert_eq!(parse_size("512MiB"), Some(512 << 20));
        assert_eq!(parse_size("4G"), Some(4 << 30));
        assert_eq!(parse_size("4 gb"), Some(4 << 30));
        assert_eq!(parse_size("1TiB"), Some(1 << 40));
        assert_eq!(parse_size("16k"), Some(16 << 10));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("10B"), Some(10));
        assert_eq!(parse_size(""), None);
        assert_eq!(parse_size("G"), None);
        assert_eq!(parse_size("1.5G"), None);
        assert_eq!(parse_size("-1G"), None);
        assert_eq!(parse_size("4PiB"), None);
        assert_eq!(parse_size("99999999999999999999"), None);
        assert_eq!(parse_size("100000000T"), None); // overflows u64
    }
}
