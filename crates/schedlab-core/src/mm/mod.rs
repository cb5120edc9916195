//! Memory reclaim (mm/): the nodes' free pages and watermarks, the page
//! cache on per-node LRU lists, the allocator's fast and slow paths, kswapd
//! as real kernel threads, direct reclaim in the allocating task, the LRU
//! lock they all contend for, and the `read` op that fills the page cache
//! (or bypasses it with O_DIRECT).
//!
//! Pages are counted, not kept one by one: a node's LRU list is a number of
//! pages, and for a streaming reader (every page read once, clean,
//! unmapped) a page's position on the list does not change what reclaim
//! does with it. The pages of files read again (a `read` with
//! `file_size`) are kept page by page (`workingset.rs`).
//!
//! Rooms: `watermark.rs` (the per-version arithmetic), `spinlock.rs` (the
//! LRU lock), `pcp.rs` (the per-CPU page lists), `page_alloc.rs`
//! (__alloc_pages, drain_all_pages, wakeup_kswapd,
//! throttle_direct_reclaim), `vmscan.rs` (shrink_node in chunks, direct
//! reclaim), `kswapd.rs` (the thread's loop, balance_pgdat and sleep),
//! `filemap.rs` (the read path), `kernel/vm.rs` (`[kernel.vm]`, `[memory]`: configuration).
//!
//! Deviation: one zone per node (ZONE_NORMAL; the DMA/DMA32 zones of node 0
//! are folded into it); order-0 allocations only, so no compaction, no
//! kcompactd and no watermark boost (it needs a fragmentation event); no
//! memory cgroups (one lruvec per node); no anonymous memory or swap yet;
//! dirty pages only from the `write` op (`page_writeback.rs`, written back
//! by `fs_writeback.rs`).

pub mod anon;
pub mod boot;
pub mod filemap;
pub mod floor;
pub mod fs_writeback;
pub mod kswapd;
pub mod page_alloc;
pub mod page_writeback;
pub mod pcp;
pub mod spinlock;
pub mod vmscan;
pub mod watermark;
pub mod workingset;

#[cfg(test)]
mod mm_tests;

pub use crate::kernel::vm::{KswapdThreads, MemoryStart, VmConfig};
use crate::sched::task::TaskId;
use spinlock::SpinLock;
use watermark::Watermarks;

pub const PAGE_SIZE: u64 = 4096;
/// include/linux/swap.h, every version.
pub const SWAP_CLUSTER_MAX: u64 = 32;
/// mm/vmscan.c.
pub const DEF_PRIORITY: u32 = 12;
/// mm/internal.h: a node whose kswapd failed this often is hopeless.
pub const MAX_RECLAIM_RETRIES: u32 = 16;
/// Pages a reclaimer isolates and frees per step of the simulation (16
/// SWAP_CLUSTER_MAX batches; the lock is still taken once per batch).
pub const RECLAIM_CHUNK: u64 = 16 * SWAP_CLUSTER_MAX;

/// The LRU lists of a node (enum lru_list, 2.6.28+, without unevictable).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lru {
    InactiveAnon = 0,
    ActiveAnon = 1,
    InactiveFile = 2,
    ActiveFile = 3,
}

/// /proc/vmstat event counters (include/linux/vm_event_item.h), summed
/// over the nodes; the names are the 4.16 ones.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VmEvents {
    pub pgpgin_kb: u64,
    pub pgalloc_normal: u64,
    pub pgfree: u64,
    pub pgscan_kswapd: u64,
    pub pgscan_direct: u64,
    pub pgsteal_kswapd: u64,
    pub pgsteal_direct: u64,
    pub pgscan_direct_throttle: u64,
    pub allocstall_normal: u64,
    pub pageoutrun: u64,
    pub kswapd_low_wmark_hit_quickly: u64,
    pub kswapd_high_wmark_hit_quickly: u64,
    pub workingset_eviction: u64,
    pub workingset_refault: u64,
    pub workingset_activate: u64,
    pub pgactivate: u64,
    pub pgdeactivate: u64,
    /// Pages stored in zswap (/proc/vmstat zswpout, 6.3+; counted here
    /// for every version that has zswap, 3.11+).
    pub zswpout: u64,
}

impl VmEvents {
    /// (name, value) in /proc/vmstat order.
    pub fn items(&self) -> [(&'static str, u64); 18] {
        [
            ("pgpgin", self.pgpgin_kb),
            ("pgalloc_normal", self.pgalloc_normal),
            ("pgfree", self.pgfree),
            ("pgactivate", self.pgactivate),
            ("pgdeactivate", self.pgdeactivate),
            ("pgsteal_kswapd", self.pgsteal_kswapd),
            ("pgsteal_direct", self.pgsteal_direct),
            ("pgscan_kswapd", self.pgscan_kswapd),
            ("pgscan_direct", self.pgscan_direct),
            ("pgscan_direct_throttle", self.pgscan_direct_throttle),
            ("workingset_refault", self.workingset_refault),
            ("workingset_activate", self.workingset_activate),
            // Not a /proc/vmstat item: shadow entries stored (the
            // workingset_eviction tracepoint's count).
            ("workingset_eviction", self.workingset_eviction),
            ("allocstall_normal", self.allocstall_normal),
            ("pageoutrun", self.pageoutrun),
            ("kswapd_low_wmark_hit_quickly", self.kswapd_low_wmark_hit_quickly),
            ("kswapd_high_wmark_hit_quickly", self.kswapd_high_wmark_hit_quickly),
            ("zswpout", self.zswpout),
        ]
    }

    pub fn delta(&self, b: &VmEvents) -> VmEvents {
        let (a, b) = (self.items(), b.items());
        let mut d = VmEvents::default();
        let v: Vec<u64> = a.iter().zip(b.iter()).map(|(x, y)| x.1 - y.1).collect();
        d.pgpgin_kb = v[0];
        d.pgalloc_normal = v[1];
        d.pgfree = v[2];
        d.pgactivate = v[3];
        d.pgdeactivate = v[4];
        d.pgsteal_kswapd = v[5];
        d.pgsteal_direct = v[6];
        d.pgscan_kswapd = v[7];
        d.pgscan_direct = v[8];
        d.pgscan_direct_throttle = v[9];
        d.workingset_refault = v[10];
        d.workingset_activate = v[11];
        d.workingset_eviction = v[12];
        d.allocstall_normal = v[13];
        d.pageoutrun = v[14];
        d.kswapd_low_wmark_hit_quickly = v[15];
        d.kswapd_high_wmark_hit_quickly = v[16];
        d.zswpout = v[17];
        d
    }
}

/// pg_data_t, reduced to what reclaim needs (with its one zone).
#[derive(Debug, Clone, Default)]
pub struct Pgdat {
    pub node: usize,
    /// zone->managed_pages.
    pub managed: u64,
    /// NR_FREE_PAGES.
    pub free: u64,
    pub wmark: Watermarks,
    /// NR_LRU_BASE + lru: pages on each list (isolated pages are on none).
    pub lru: [u64; 4],
    /// NR_ISOLATED_FILE.
    pub nr_isolated_file: u64,
    /// NR_ISOLATED_ANON.
    pub nr_isolated_anon: u64,
    /// Shadow entries left by evicted pages (workingset.c); their radix
    /// tree nodes stay until the shadow shrinker frees them.
    pub nonresident: u64,
    pub lru_lock: SpinLock,
    /// zone->lock of the node's one zone: the buddy lists, taken when a
    /// CPU's per-CPU page list is refilled (rmqueue_bulk) or drained
    /// (free_pcppages_bulk), `pcp_batch` pages at a time.
    pub zone_lock: SpinLock,
    /// pcp->batch (zone_batchsize()) and pcp->high (watermark::pcp_high).
    pub pcp_batch: u64,
    pub pcp_high: u64,
    /// Per CPU: the pages of this zone on its per-CPU list (pcp.rs); free,
    /// but not in `free` (NR_FREE_PAGES).
    pub pcp: Vec<u64>,
    /// This node's kswapd threads (indices of Mm::kswapds).
    pub kswapd: Vec<usize>,
    /// kswapd_failures: balance_pgdat runs that reclaimed nothing.
    pub kswapd_failures: u32,
    /// Tasks throttled in throttle_direct_reclaim (pgdat->pfmemalloc_wait).
    pub pfmemalloc_wait: Vec<TaskId>,
    /// NR_FILE_DIRTY and NR_WRITEBACK: pages of the inactive file list
    /// that reclaim cannot take.
    pub nr_dirty: u64,
    pub nr_writeback: u64,
    /// pgdat->reclaim_wait[VMSCAN_THROTTLE_ISOLATED] (5.16+).
    pub reclaim_wait_isolated: Vec<TaskId>,
}

impl Pgdat {
    pub fn file_pages(&self) -> u64 {
        self.lru[Lru::InactiveFile as usize] + self.lru[Lru::ActiveFile as usize]
    }

    /// The pages of list `lru` that reclaim can take: on the inactive
    /// file list, the clean ones.
    pub fn reclaimable(&self, lru: Lru) -> u64 {
        let n = self.lru[lru as usize];
        if lru == Lru::InactiveFile {
            n.saturating_sub(self.nr_dirty + self.nr_writeback)
        } else {
            n
        }
    }
}

/// Where a kswapd thread is in its loop (mm/vmscan.c kswapd()).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KswapdState {
    /// Not yet run.
    Boot,
    /// In kswapd_try_to_sleep's short sleep (HZ/10) after the node was
    /// balanced; woken early it counts low_wmark_hit_quickly.
    ShortSleep,
    /// Asleep until wakeup_kswapd.
    Sleeping,
    /// Running balance_pgdat.
    Balancing,
    /// Parked by the `auto` policy (not counted among the node's threads).
    Parked,
}

/// One pass of shrink_node's scanning over one node at one priority.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScanControl {
    pub priority: u32,
    /// Pages still to scan at this priority on the current node.
    pub scan_left: u64,
    pub nr_scanned: u64,
    pub nr_reclaimed: u64,
    pub nr_to_reclaim: u64,
    /// Pages of the chunk being reclaimed now (freed when it is done).
    pub pending: u64,
    pub pending_node: usize,
    /// The pending chunk is of anonymous pages.
    pub pending_anon: bool,
}

/// A kswapd thread.
#[derive(Debug, Clone)]
pub struct Kswapd {
    pub task: TaskId,
    pub node: usize,
    /// Its index among the node's threads (P3's `hid`).
    pub hid: u32,
    pub state: KswapdState,
    pub sc: ScanControl,
    /// Reclaimed in this balance_pgdat run (for kswapd_failures).
    pub run_reclaimed: u64,
    /// Reclaimed by this round's start (the round's progress).
    pub round_start_reclaimed: u64,
    /// The short sleep ended by its timer, not by a wakeup.
    pub timed_out: bool,
}

/// Per task: where its current mm op is (a read, a direct reclaim, a
/// throttle).
#[derive(Debug, Clone, Default)]
pub struct TaskMm {
    pub read: Option<ReadState>,
    /// An `anon` op in progress: the bytes still to fault in.
    pub anon_left: Option<u64>,
    /// The direct reclaim in progress (do_try_to_free_pages).
    pub reclaim: Option<DirectReclaim>,
    /// The allocation being made: pages, and when it began (latency).
    pub alloc: Option<(u64, u64)>,
    /// Sleep generation: a timer whose number is stale is ignored.
    pub sleep_seq: u32,
    pub throttled: bool,
    /// Asleep on this node's VMSCAN_THROTTLE_ISOLATED waitqueue.
    pub isolated_wait: Option<usize>,
    /// Pages reclaimed by the direct reclaim that just ended
    /// (__perform_reclaim's progress).
    pub reclaimed: u64,
    /// __alloc_pages_direct_reclaim()'s `drained`: this round has called
    /// drain_all_pages() (cleared when the next reclaim starts).
    pub drained: bool,
    /// In drain_all_pages(): waiting for the drain works, or spending the
    /// CPU time of the drain; the allocation retries when it is done.
    pub draining: bool,
    /// A `write` op in progress.
    pub write: Option<page_writeback::WriteState>,
    /// Its place against the dirty throttle.
    pub dirty: page_writeback::TaskDirty,
}

/// Latencies of allocations that left the fast path, per group (ns).
#[derive(Debug, Clone, Default)]
pub struct AllocLatency {
    pub fast: u64,
    pub slow: Vec<u64>,
    pub direct_reclaims: u64,
    /// Waits in shrink_inactive_list() for too_many_isolated().
    pub isolated_stalls: u64,
    /// drain_all_pages() calls that drained, and those that found another
    /// drain running.
    pub drains: u64,
    pub drains_skipped: u64,
}

/// The memory model's state.
#[derive(Debug, Clone, Default)]
pub struct Mm {
    pub enabled: bool,
    /// The `read` ops' parameters (Op::Read indexes them).
    pub read_ops: Vec<ReadOp>,
    pub cfg: VmConfig,
    pub nodes: Vec<Pgdat>,
    /// Each node's zonelist: itself first, then the others by distance.
    pub zonelist: Vec<Vec<usize>>,
    pub kswapds: Vec<Kswapd>,
    /// By task id (grown on demand).
    pub tasks: Vec<TaskMm>,
    pub ev: VmEvents,
    /// PAGEVEC_SIZE of the version (lru_cache_add's per-CPU batch).
    pub pagevec: u64,
    /// Round-robin cursors of the read ops over their disks.
    pub rr: Vec<usize>,
    /// Allocation latencies per task group (by group index).
    pub alloc_lat: Vec<AllocLatency>,
    /// The template of the kswapd threads.
    pub kswapd_template: Option<(usize, usize)>,
    /// `[memory] swap = "zswap"`: anonymous pages can be reclaimed, each
    /// compressed into zswap's pool by the reclaiming thread.
    pub zswap: bool,
    /// Per node: how many of its threads may run (all of them with a fixed
    /// vm.kswapd_threads; the `auto` policy's choice otherwise).
    pub kswapd_active: Vec<u32>,
    /// `auto`: per CPU, its idle + iowait time at the last re-evaluation.
    pub auto_idle: Vec<u64>,
    /// `auto`: Σ over re-evaluations of the threads allowed, per node, and
    /// their number (the report's mean).
    pub auto_sum: Vec<u64>,
    pub auto_evals: u64,
    /// Per device written to: its writeback state and flusher (by index;
    /// `wb_of_disk` maps a disk to it).
    pub wbs: Vec<page_writeback::Wb>,
    pub wb_of_disk: Vec<Option<usize>>,
    pub wb_dom: page_writeback::WbDomain,
    /// Per task group: dirtied pages and throttle pauses in the window.
    pub throttle: Vec<page_writeback::ThrottleStats>,
    /// Pages written back, ever (/proc/vmstat nr_written).
    pub written: u64,
    /// When the measurement window opens (ns).
    pub window_start: u64,
    /// Pages the last allocation took from the buddy lists into its CPU's
    /// per-CPU list (zone->lock's part of the lru_cache_add that follows).
    pub last_refill: u64,
    /// pcpu_drain_mutex is held (4.11+: one drainer at a time).
    pub pcpu_drain_busy: bool,
    /// drain_local_pages_wq's work program (mm_percpu_wq drains).
    pub drain_program: Option<usize>,
    /// The pages of files read again (workingset.rs).
    pub ws: workingset::Workingset,
}

impl Mm {
    /// The model of a scenario with these file ops, whose window opens at
    /// `window_start`.
    pub fn new(read_ops: Vec<ReadOp>, window_start: u64) -> Mm {
        Mm { read_ops, window_start, ..Default::default() }
    }

    pub fn task(&mut self, tid: TaskId) -> &mut TaskMm {
        if self.tasks.len() <= tid {
            self.tasks.resize_with(tid + 1, TaskMm::default);
        }
        &mut self.tasks[tid]
    }

    /// Σ free pages.
    pub fn nr_free(&self) -> u64 {
        self.nodes.iter().map(|n| n.free).sum()
    }

    /// The checker's page accounting: every page of a node is free in the
    /// buddy lists, on a per-CPU list, on an LRU list or isolated from one.
    pub fn page_accounting_error(&self) -> Option<String> {
        self.nodes.iter().find_map(|pg| {
            let pcp: u64 = pg.pcp.iter().sum();
            let lru: u64 = pg.lru.iter().sum();
            let held = pg.free + pcp + lru + pg.nr_isolated_file + pg.nr_isolated_anon;
            (held != pg.managed).then(|| {
                format!(
                    "node {}: {} pages managed but {} free + {} per-CPU + {} on LRU lists + {} isolated",
                    pg.node,
                    pg.managed,
                    pg.free,
                    pcp,
                    lru,
                    pg.nr_isolated_file + pg.nr_isolated_anon
                )
            })
        })
    }
}

/// A `read` op's parameters, or an `anon` op's (`anon`: fault in `bytes`
/// of anonymous memory; no disks), or a `write` op's (`write`: a buffered
/// write of `bytes` to a file on the first disk).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOp {
    /// The disks, by index; the tasks that run the op take them in turn
    /// (dd readers spread round-robin over the drives).
    pub disks: Vec<usize>,
    pub bytes: u64,
    /// O_DIRECT.
    pub direct: bool,
    pub anon: bool,
    pub write: bool,
    /// `file_size`: each task reads its own file of this many bytes from
    /// the start again after its end, so its pages can be found in the
    /// page cache again (workingset.rs).
    pub file_size: Option<u64>,
}

/// Where a task is in a read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadPhase {
    /// Allocate the next window's pages.
    Alloc,
    /// The pages are in the page cache: submit the IO.
    Submit,
    /// The IO completed: copy to user space.
    Copy,
    /// The last copy is done.
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadState {
    pub disk: usize,
    /// Bytes still to read.
    pub left: u64,
    /// Bytes of the current window.
    pub window: u64,
    pub phase: ReadPhase,
    /// O_DIRECT: no page cache, no copy.
    pub direct: bool,
    /// A tracked file's read: the file (workingset::UNTRACKED when not),
    /// the window's first page and how many of its pages were missing.
    pub file: u32,
    pub page: u64,
    pub missing: u64,
}

/// do_try_to_free_pages() in progress.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DirectReclaim {
    pub sc: ScanControl,
    /// Next position in the zonelist (shrink_zones).
    pub zl_pos: usize,
    /// Reclaimed by this shrink_node (shrink_node_memcg's local count).
    pub node_reclaimed: u64,
    /// shrink_inactive_list()'s `stalled`: this batch already waited once
    /// for too_many_isolated().
    pub stalled: bool,
}
