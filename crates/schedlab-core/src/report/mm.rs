//! The report's memory section (mm/): the nodes, /proc/vmstat, the kswapd
//! threads as top shows them, the LRU locks, the allocation latencies.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Memory and reclaim over the window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MmReport {
    /// Pages read from the disks per second, KiB/s (iostat's kB_read/s
    /// summed over the devices).
    pub read_kbs: f64,
    /// /proc/vmstat event counters over the window, by name.
    pub vmstat: BTreeMap<String, u64>,
    pub nodes: Vec<NodeRow>,
    /// Each kswapd thread's CPU use over the window (top's %CPU).
    pub kswapd: Vec<KswapdRow>,
    /// Per task group that allocated: how its allocations went.
    pub alloc: Vec<AllocRow>,
    /// vm.kswapd_threads, vm.min_free_kbytes (the value used) and whether
    /// shadow entries are on.
    pub kswapd_threads: String,
    pub min_free_kbytes: u64,
    pub workingset: bool,
    /// vmstat's procs columns at the end of each mpstat interval in the
    /// window, where vmstat prints a line.
    pub procs: Vec<ProcsRow>,
    /// Dirty pages and their writeback, when a task writes
    /// (mm/page_writeback.rs, mm/fs_writeback.rs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writeback: Option<WritebackReport>,
}

/// Buffered writes: the dirty limits, each device's writeback as
/// /sys/kernel/debug/bdi/*/stats shows it, the writers' throttling, and
/// /proc/meminfo's Dirty and Writeback at each interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WritebackReport {
    /// DirtyThresh and BackgroundThresh at the end of the run (KiB; for a
    /// writer that is not RT), and the domain's smoothed limit.
    pub dirty_thresh_kb: u64,
    pub background_thresh_kb: u64,
    pub dirty_limit_kb: u64,
    /// The dirtyable memory the thresholds are taken of (free pages above
    /// the reserves, and the file pages) at the end, KiB; and the mean of
    /// the samples' Dirty + Writeback, KiB.
    #[serde(default)]
    pub dirtyable_kb: u64,
    #[serde(default)]
    pub dirty_mean_kb: u64,
    /// /proc/vmstat nr_dirtied and nr_written over the window (pages).
    pub nr_dirtied: u64,
    pub nr_written: u64,
    pub devices: Vec<WbRow>,
    pub throttle: Vec<ThrottleRow>,
    /// /proc/meminfo's Dirty and Writeback at the end of each interval.
    pub samples: Vec<DirtySample>,
}

/// One device's writeback at the end of the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WbRow {
    pub device: String,
    /// The flusher's thread.
    pub flusher: String,
    /// Its CPU use over the window (top's %CPU).
    pub flusher_cpu_pct: f64,
    /// BdiWriteBandwidth (the smoothed estimate, avg_write_bandwidth),
    /// KiB/s.
    pub write_bandwidth_kbs: u64,
    /// The rate each writer is held to at pos_ratio 1 (dirty_ratelimit),
    /// and the rate the last estimate found balanced, KiB/s.
    pub dirty_ratelimit_kbs: u64,
    pub balanced_dirty_ratelimit_kbs: u64,
    /// BdiDirtyThresh, BdiReclaimable, BdiWriteback (KiB).
    pub bdi_dirty_thresh_kb: u64,
    pub reclaimable_kb: u64,
    pub writeback_kb: u64,
    /// Pages written back per second over the window, KiB/s.
    pub written_kbs: f64,
}

/// A group's writes and the throttle's pauses over the window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ThrottleRow {
    pub group: String,
    /// Pages dirtied per second, KiB/s.
    pub dirtied_kbs: f64,
    /// balance_dirty_pages() pauses: how many, their time in all as % of
    /// the group's tasks' time, and their lengths (ms).
    pub pauses: u64,
    pub paused_pct: f64,
    pub pause_p50_ms: f64,
    pub pause_p90_ms: f64,
    pub pause_max_ms: f64,
}

/// Dirty and under-writeback pages at one time (KiB).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DirtySample {
    pub time_s: f64,
    pub dirty_kb: u64,
    pub writeback_kb: u64,
}

/// One vmstat line's procs columns.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProcsRow {
    /// Seconds since the start of the run.
    pub time_s: f64,
    /// r: tasks running or waiting for a CPU (/proc/stat procs_running,
    /// nr_running() summed over the CPUs).
    pub r: u32,
    /// b: tasks asleep in io_schedule() (/proc/stat procs_blocked,
    /// nr_iowait()).
    pub b: u32,
}

/// One node at the end of the run, and its LRU lock over the window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NodeRow {
    pub node: usize,
    pub managed_pages: u64,
    /// NR_FREE_PAGES: the buddy lists, which the watermarks test.
    pub free_pages: u64,
    /// Free pages on the CPUs' per-CPU lists of the zone (/proc/zoneinfo's
    /// pagesets' counts), not in free_pages.
    #[serde(default)]
    pub pcp_pages: u64,
    pub min_pages: u64,
    pub low_pages: u64,
    pub high_pages: u64,
    pub inactive_file_pages: u64,
    pub active_file_pages: u64,
    pub lru_lock_acquisitions: u64,
    pub lru_lock_contended: u64,
    /// CPU time spent spinning on the lock, all CPUs, ms.
    pub lru_lock_spin_ms: f64,
    /// Time the lock was held, % of the window.
    pub lru_lock_held_pct: f64,
    /// zone->lock (the buddy lists): CPU time spent spinning on it, ms.
    pub zone_lock_spin_ms: f64,
    /// zone->lock held, % of the window.
    pub zone_lock_held_pct: f64,
    /// The node's kswapd threads allowed to run: vm.kswapd_threads, or the
    /// mean of the `auto` policy's once-a-second choices.
    pub kswapd_allowed: f64,
    /// The node's kswapd threads' mean %CPU over the window (top's %CPU
    /// per thread, averaged over the node's threads).
    pub kswapd_cpu_pct: f64,
    /// Their %CPU summed: the CPUs the node's reclaim threads take.
    pub kswapd_cpu_total_pct: f64,
}

/// One kswapd thread.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct KswapdRow {
    pub comm: String,
    pub node: usize,
    pub cpu_pct: f64,
}

/// A group's allocations over the run: those served at once, those that
/// left the fast path (their latency, from the first slow-path step to the
/// pages), and its direct reclaims.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AllocRow {
    pub group: String,
    pub fast: u64,
    pub slow: u64,
    pub direct_reclaims: u64,
    pub slow_p50_us: f64,
    pub slow_p99_us: f64,
    pub slow_max_us: f64,
    /// Waits of its direct reclaimers for too_many_isolated() (msleep,
    /// congestion_wait or reclaim_throttle by version).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub isolated_stalls: u64,
    /// drain_all_pages() after a reclaim whose allocation still failed:
    /// calls that drained, and those that found another drain running.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub drains: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub drains_skipped: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
