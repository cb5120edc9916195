//! Boot of the memory model: the nodes, their watermarks and page cache,
//! the kswapd threads.

use crate::cpumask::CpuMask;
use crate::engine::event::Ev;
use crate::engine::time::Instant;
use crate::error::SimError;
use crate::mm::floor::MmFloor;
use crate::mm::{watermark, Kswapd, KswapdState, KswapdThreads, Lru, MemoryStart, Pgdat, ScanControl, PAGE_SIZE};
use crate::prio::Policy;
use crate::program::{Op, Program, TaskGroup};

impl MmFloor {
    /// Boot the memory model when the scenario uses it (a buffered or
    /// direct `read` op, `[kernel.vm]` or `[memory]`): the nodes' memory
    /// and watermarks (init_per_zone_wmark_min), the page cache it starts
    /// with, and the kswapd threads (kswapd_run).
    /// `memory`: the scenario's `[memory]` page cache; `zswap`: its swap.
    pub(crate) fn mm_init(&mut self, memory: Option<MemoryStart>, zswap: bool) -> Result<(), SimError> {
        let nr_read_ops = self.mm.read_ops.len();
        let used = nr_read_ops > 0 || self.kt.k.cfg.vm_given || memory.is_some();
        self.mm.zswap = zswap;
        self.mm.rr = vec![0; nr_read_ops];
        if !used {
            return Ok(());
        }
        let mech = &self.kt.k.cfg.mech;
        let mut cfg = self.kt.k.cfg.vm.clone();
        if let Some(start) = memory {
            cfg.start = start;
        }
        let nodes = self.kt.k.machine.nr_nodes;
        let bytes = self.kt.k.machine.memory_bytes;
        if bytes == 0 {
            return Err(SimError::bad_value(
                &self.source,
                "machine.memory",
                "the machine has no memory size, and the scenario reads files or sets [kernel.vm]",
                "a size, e.g. \"756GiB\" (the presets have one)",
            ));
        }
        let total = bytes / PAGE_SIZE;
        let min_free = cfg.min_free_kbytes.unwrap_or_else(|| watermark::default_min_free_kbytes(total * 4, mech));
        self.mm.pagevec = mech.pagevec_size;
        for node in 0..nodes {
            let managed = total / nodes as u64;
            let wmark = watermark::setup_zone_wmarks(managed, total, min_free, cfg.watermark_scale_factor, mech);
            let pcp_batch = watermark::zone_batchsize(managed, mech);
            let node_cpus = self.kt.k.machine.cpus.iter().filter(|c| c.node == node).count() as u64;
            let pcp_high = watermark::pcp_high(pcp_batch, wmark.low, node_cpus, mech);
            let pcp = vec![0; self.kt.k.machine.cpus.len()];
            let mut pg = Pgdat { node, managed, free: managed, wmark, pcp_batch, pcp_high, pcp, ..Default::default() };
            if cfg.start == MemoryStart::PageCacheFull {
                pg.free = wmark.high.min(managed);
                pg.lru[Lru::InactiveFile as usize] = managed - pg.free;
            }
            self.mm.nodes.push(pg);
        }
        self.mm.zonelist = (0..nodes)
            .map(|n| {
                let mut zl: Vec<usize> = (0..nodes).collect();
                zl.sort_by_key(|&m| (self.kt.k.machine.node_distance[n][m], m));
                zl
            })
            .collect();
        // `auto`: every thread exists from boot, one per node may run until
        // the first re-evaluation a second later.
        let (per_node, active) = match cfg.kswapd_threads {
            KswapdThreads::Fixed(n) => (n as usize, n),
            KswapdThreads::Auto { max, .. } => {
                self.kt.k.q.schedule(Instant(crate::engine::time::NSEC_PER_SEC), Ev::MmAuto);
                self.mm.auto_idle = vec![0; self.kt.k.sched.rqs.len()];
                self.mm.auto_sum = vec![0; nodes];
                (max as usize, 1)
            }
        };
        self.mm.kswapd_active = vec![active; nodes];
        self.mm.cfg = cfg;
        self.mm.enabled = true;
        let group = self.kt.progs.group_names.len();
        self.kt.progs.group_names.push("kswapd".into());
        for node in 0..nodes {
            let mut cpus = CpuMask::new(self.kt.k.sched.rqs.len());
            for c in self.kt.k.machine.cpus.iter().filter(|c| c.node == node) {
                cpus.set(c.id);
            }
            for hid in 0..per_node {
                let k = self.mm.kswapds.len();
                let g = TaskGroup {
                    name: "kswapd".into(),
                    count: 0,
                    policy: Policy::Normal,
                    nice: self.mm.cfg.kswapd_nice,
                    rt_priority: 0,
                    dl: Default::default(),
                    cpus: cpus.clone(),
                    start: crate::engine::rng::Dist::Const(0),
                    kthread: true,
                    memory_bound: 0,
                    memory_traffic: 0,
                    cgroup: 0,
                    program: Program { ops: vec![Op::Kswapd(k as u32)] },
                };
                let template = self.kt.progs.templates.len();
                self.kt.progs.templates.push(g.clone());
                let tid = self.kt.k.alloc_task(group, Some(template), &g, hid);
                let comm = if self.mm.cfg.kswapd_threads == KswapdThreads::Fixed(1) {
                    format!("kswapd{node}")
                } else {
                    format!("kswapd{node}:{hid}")
                };
                self.kt.k.sched.tasks[tid].comm = comm;
                self.kt.k.sched.tasks[tid].cpu = cpus.first().unwrap_or(0);
                self.mm.kswapds.push(Kswapd {
                    task: tid,
                    node,
                    hid: hid as u32,
                    state: KswapdState::Boot,
                    sc: ScanControl::default(),
                    run_reclaimed: 0,
                    round_start_reclaimed: 0,
                    timed_out: false,
                });
                self.mm.nodes[node].kswapd.push(k);
                self.kt.k.q.schedule(Instant(0), Ev::Start(tid));
            }
        }
        self.ws_init();
        self.writeback_init()
    }

    /// A writeback device and its flusher for every disk a `write` op
    /// writes to (bdi_init, and the flusher's thread).
    fn writeback_init(&mut self) -> Result<(), SimError> {
        let disks: Vec<usize> = {
            let mut v: Vec<usize> =
                self.mm.read_ops.iter().filter(|o| o.write).flat_map(|o| o.disks.iter().copied()).collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        self.mm.wb_of_disk = vec![None; self.kt.block.disks.len()];
        if disks.is_empty() {
            return Ok(());
        }
        let v = self.kt.k.cfg.version;
        if !v.at_least(3, 2) {
            return Err(SimError::not_modelled(
                &self.source,
                "task.program.write",
                format!(
                    "buffered writes on kernel {v}: before 3.2 balance_dirty_pages() made the writer write pages \
                     back itself; the IO-less throttle of 3.2 and later is modelled"
                ),
            ));
        }
        let group = self.kt.progs.group_names.len();
        self.kt.progs.group_names.push("flusher".into());
        let ncpu = self.kt.k.sched.rqs.len();
        for (i, &disk) in disks.iter().enumerate() {
            let w = self.mm.wbs.len();
            let g = TaskGroup {
                name: "flusher".into(),
                count: 0,
                policy: Policy::Normal,
                nice: 0,
                rt_priority: 0,
                dl: Default::default(),
                cpus: CpuMask::full(ncpu),
                start: crate::engine::rng::Dist::Const(0),
                kthread: true,
                memory_bound: 0,
                memory_traffic: 0,
                cgroup: 0,
                program: Program { ops: vec![Op::Flusher(w as u32)] },
            };
            let template = self.kt.progs.templates.len();
            self.kt.progs.templates.push(g.clone());
            let tid = self.kt.k.alloc_task(group, Some(template), &g, i);
            let name = &self.kt.block.disks[disk].cfg.name;
            // 2.6.32-3.9: a thread per device; later an unbound kworker
            // whose description names the device.
            self.kt.k.sched.tasks[tid].comm = if v.at_least(3, 10) {
                format!("kworker/u{}:{i}+flush-{name}", 2 * ncpu)
            } else {
                format!("flush-{name}")
            };
            self.mm.wbs.push(crate::mm::page_writeback::Wb::new(disk, tid));
            self.mm.wb_of_disk[disk] = Some(w);
            self.kt.k.q.schedule(Instant(0), Ev::Start(tid));
        }
        Ok(())
    }
}
