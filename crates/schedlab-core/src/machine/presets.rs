//! The preset machines: their names, one-line descriptions and layouts,
//! each with the sources of its figures.

use super::idle_states::IdleTable;
use super::processors::Processor;
use super::LOCAL_DISTANCE;

/// Preset machines: (name, one-line description).
pub const PRESETS: &[(&str, &str)] = &[
    ("8cpu-llc", "8 CPUs: 1 package, 8 cores, no SMT, one shared LLC, 1 node"),
    ("4cpu", "4 CPUs: 1 package, 4 cores, no SMT, one shared LLC, 1 node"),
    ("4x4", "16 CPUs: 4 sockets x 4 cores, no SMT, one LLC per socket, one node (UMA 4-socket box of seed 002)"),
    ("uma8", "8 CPUs: 1 socket, 8 cores, no SMT, one LLC, 1 node, skx idle states (seed 001 UMA box)"),
    (
        "numa48",
        "48 CPUs: 2 nodes x 12 cores x 2 threads, one LLC per node, SLIT 10/21, skx idle states (seed 001 NUMA box)",
    ),
    ("skl52", "52 CPUs: 2 sockets x 26 cores (Skylake-SP), no SMT, one LLC per socket, SLIT 10/21, skx idle states"),
    ("2x8smt", "16 CPUs: 1 socket, 8 cores x 2 threads, one LLC"),
    ("smp64", "64 CPUs: 2 sockets x 16 cores x 2 threads, 2 nodes, SLIT 10/21 (benchmarks)"),
    ("smp256", "256 CPUs: 4 sockets x 32 cores x 2 threads, 4 nodes, SLIT 10/21 (benchmarks)"),
    ("smp1024", "1024 CPUs: 16 sockets x 32 cores x 2 threads, 16 nodes in groups of 4, SLIT 10/21/31 (benchmarks)"),
    (
        "turin768",
        "768 CPUs: 2 sockets of AMD EPYC 9965 (192 Zen 5c cores x 2 threads), one LLC per 16-core CCD, 2 nodes (NPS1), SLIT 10/32",
    ),
    (
        "gnr384",
        "384 CPUs: 2 sockets of Intel Xeon 6972P (96 cores x 2 threads), SNC3: 6 nodes of 32 cores, an LLC domain each, SLIT 10/15/17 in a socket and 24 across, gnr idle states",
    ),
    (
        "uv4096",
        "4096 CPUs: SGI UV 2000 at its largest, 256 sockets x 8 cores x 2 threads, a node and LLC per socket, 2 sockets a blade, SLIT 10/13/22/26/30 by blade, chassis and rack",
    ),
];

/// The layout a preset stands for.
pub(super) struct PresetLayout {
    pub(super) sockets: usize,
    pub(super) cores_per_socket: usize,
    pub(super) threads_per_core: usize,
    pub(super) nodes: usize,
    pub(super) llcs_per_socket: usize,
    /// None: default table (10 local, 21 remote).
    pub(super) distance: Option<Vec<Vec<u32>>>,
    pub(super) memory: &'static str,
    /// The machines of the seeds are Skylake/Cascade Lake servers (skx);
    /// the others model no particular CPU and have no cpuidle driver.
    pub(super) idle: Option<IdleTable>,
    /// The processor the preset's CPUs run as, with their frequencies.
    /// None for every preset so far: `uma8` and `numa48` stand for an
    /// E3-1240 v5 and two E5-2670 v3 (docs/notes/cpufreq-research.md §1),
    /// but seed 001's scenario is not yet rebuilt on CPU frequency (issue
    /// 37), so a scenario names them (`machine.cpufreq = "e5-2670v3"`).
    pub(super) processor: Option<&'static Processor>,
    /// Each node's memory bandwidth (`machine.memory_bandwidth`).
    pub(super) bandwidth: Option<&'static str>,
}

pub(super) fn preset_layout(name: &str) -> Option<PresetLayout> {
    // (sockets, cores/socket, threads/core, nodes, llcs/socket, memory).
    // Memory sizes are plausible for each class of box; they only matter
    // to the mm model and can be overridden with `memory`.
    let (sockets, cores, threads, nodes, llcs, memory) = match name {
        "8cpu-llc" => (1, 8, 1, 1, 1, "16GiB"),
        "4cpu" => (1, 4, 1, 1, 1, "8GiB"),
        "4x4" => (4, 4, 1, 1, 1, "16GiB"),
        "uma8" => (1, 8, 1, 1, 1, "16GiB"),
        "numa48" => (2, 12, 2, 2, 1, "128GiB"),
        "skl52" => (2, 26, 1, 2, 1, "192GiB"),
        "2x8smt" => (1, 8, 2, 1, 1, "32GiB"),
        "smp64" => (2, 16, 2, 2, 1, "256GiB"),
        "smp256" => (4, 32, 2, 4, 1, "1TiB"),
        "smp1024" => (16, 32, 2, 16, 1, "4TiB"),
        // AMD EPYC 9965 (Turin dense, 5th generation EPYC, 2024): 192
        // Zen 5c cores in twelve CCDs of 16 cores, each CCD one CCX with a
        // 32 MB L3 all 16 share (die shots, tomshw.it 2025-04-22; 384 MB L3
        // in all on AMD's product page). Two sockets in NPS1, a node each;
        // 24 x 64 GiB DIMMs (12 channels a socket).
        "turin768" => (2, 192, 2, 2, 12, "1536GiB"),
        // Intel Xeon 6972P (Granite Rapids-AP, 2024): 96 cores of 2
        // threads and 480 MB of L3 a socket (hardwareluxx.de's Xeon 6900P
        // review; /proc/cpuinfo "cache size: 491520 KB" in
        // archspec/archspec-json issue 137), on three compute dies (how
        // the 96 cores split among them is not cited; taken even, 32 a
        // die). SNC3, the 6900P's default (phoronix.com/review/
        // xeon-6980p-snc3-hex), makes each die a node. CPUID gives the
        // socket one L3, but match_llc() (arch/x86/kernel/smpboot.c,
        // intel_cod_cpu[]) does not share an LLC across SNC nodes, so the
        // MC domain is the node: three LLC domains a socket. 12 channels
        // a socket, 24 x 64 GiB.
        "gnr384" => (2, 96, 2, 6, 3, "1536GiB"),
        // SGI UV 2000 at its largest (SGI, "Technical Advances in the SGI
        // UV Architecture", 2012: 4,096 threads in one system image;
        // UV 2000 User Guide 007-5832-002: blades of one HARP hub and two
        // 8-core Xeon E5-4600, 8 blades a 10U chassis (IRU), 4 a rack):
        // 256 sockets of 8 cores x 2 threads, a node and an L3 each.
        "uv4096" => (256, 8, 2, 256, 1, "64TiB"),
        _ => return None,
    };
    let distance = if name == "smp1024" {
        // Two NUMA levels: nodes in the same group of 4 are one hop apart.
        Some(
            (0..nodes)
                .map(|a| {
                    (0..nodes)
                        .map(|b| {
                            if a == b {
                                LOCAL_DISTANCE
                            } else if a / 4 == b / 4 {
                                21
                            } else {
                                31
                            }
                        })
                        .collect()
                })
                .collect(),
        )
    } else if name == "gnr384" {
        // A two-socket Granite Rapids in SNC3 as Linux reads its SLIT (the
        // message of commit 4d6dd05d07d0, "sched/topology: Fix sched domain
        // build error for GNR, CWF in SNC-3 mode"; gramine PR 2122): 10
        // local, 15 to the next die, 17 between the outer dies, 21..28
        // across the sockets.
        // Deviation: that table is not symmetric across the sockets (node
        // 0 to 4 is 28, 4 to 0 is 23), which the model refuses; the preset
        // takes the average the kernel itself puts in its place for sched
        // domains since that commit (v6.19, in 6.18.y), 24, for every
        // version. Before it the asymmetric table failed to build the
        // domains; that failure is not modelled.
        let die = [[10, 15, 17], [15, 10, 15], [17, 15, 10]];
        Some(
            (0..nodes)
                .map(|a| (0..nodes).map(|b| if a / 3 == b / 3 { die[a % 3][b % 3] } else { 24 }).collect())
                .collect(),
        )
    } else if name == "uv4096" {
        // Deviation: no SLIT of a UV 2000 is cited. Its predecessor, a UV
        // 1000 of 48 nodes (hwloc-devel, July 2010: open-mpi/ompi-www
        // community/lists/hwloc-devel/2010/07/1226.php), reads 13 within a
        // blade and 22 and up beyond it, about 2 more a NUMAlink hop, with
        // many distinct values; the preset keeps four remote levels: 13
        // within a blade (2 sockets), 22 within a chassis (16), 26 within
        // a rack (64), 30 across racks.
        Some(
            (0..nodes)
                .map(|a| {
                    (0..nodes)
                        .map(|b| match () {
                            _ if a == b => LOCAL_DISTANCE,
                            _ if a / 2 == b / 2 => 13,
                            _ if a / 16 == b / 16 => 22,
                            _ if a / 64 == b / 64 => 26,
                            _ => 30,
                        })
                        .collect()
                })
                .collect(),
        )
    } else if name == "turin768" {
        // Deviation: the ACPI SLIT of a two-socket EPYC in NPS1 as
        // Linux reads it on Genoa and Turin boards (10 local, 32 remote) is
        // what their firmware commonly reports; no table of this exact
        // machine is cited.
        Some(vec![vec![LOCAL_DISTANCE, 32], vec![32, LOCAL_DISTANCE]])
    } else {
        None
    };
    Some(PresetLayout {
        sockets,
        cores_per_socket: cores,
        threads_per_core: threads,
        nodes,
        llcs_per_socket: llcs,
        distance,
        memory,
        idle: match name {
            "uma8" | "numa48" | "skl52" => Some(IdleTable::Skx),
            "gnr384" => Some(IdleTable::Gnr),
            // Deviation: the UV 2000's E5-4600 v1/v2 (Sandy Bridge-EP, Ivy
            // Bridge-EP) have intel_idle tables the model does not carry.
            _ => None,
        },
        processor: None,
        bandwidth: match name {
            // Skylake-SP with six channels of DDR4-2666 per socket: Intel's
            // STREAM figure for two sockets is 199 GB/s (AnandTech,
            // "Intel Skylake-EP vs AMD EPYC 7000", 2017-07-11, p. 12),
            // 99.5 GB/s per socket, one node each.
            "skl52" => Some("99.5GB/s"),
            // Deviation: the other presets' memory has no limit (seed 001's
            // boxes are named by their processors, whose DIMMs are not
            // known; the synthetic ones stand for no real machine).
            _ => None,
        },
    })
}

pub(super) fn preset_names() -> String {
    PRESETS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
}

pub(super) fn preset_description(name: &str) -> Option<&'static str> {
    PRESETS.iter().find(|(n, _)| *n == name).map(|(_, d)| *d)
}
