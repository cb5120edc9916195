//! Dirty pages and the throttle of their writers (mm/page-writeback.c,
//! the IO-less balance_dirty_pages() of 3.2 on): a buffered write dirties
//! page-cache pages; every `nr_dirtied_pause` pages the writer enters
//! balance_dirty_pages(), which lets it run free below the freerun ceiling
//! ((thresh + bg_thresh) / 2) and above it sleeps it, in
//! io_schedule_timeout(), long enough that the writers together dirty
//! pages as fast as the device writes them back.
//!
//! The rate each writer is held to is the device's `dirty_ratelimit`
//! (tracked every 200 ms towards write_bw / N: wb_update_dirty_ratelimit)
//! scaled by `pos_ratio`, the position of the dirty pages against their
//! setpoint: the global cubic control line (pos_ratio_polynom) times the
//! device's linear one (wb_position_ratio). The write bandwidth is
//! estimated from the pages written back every 200 ms
//! (wb_update_write_bandwidth). Numbers follow the kernel's: pages,
//! pages per second, jiffies, pos_ratio in 1/1024 (RATELIMIT_CALC_SHIFT).
//!
//! The flusher that writes the pages back is `fs_writeback.rs`.
//!
//! Deviation: one writeback domain (no memcg domains, no strictlimit
//! devices); every write dirties new pages (no rewrites of cached pages,
//! no fsync); dirty pages sit on the inactive file list, where reclaim
//! skips them without scanning them (the kernel scans them and rotates
//! them with PG_reclaim); the per-CPU bdp_ratelimits and
//! dirty_throttle_leaks are not modelled; the write bandwidth is updated
//! where 3.2-5.14 update it (balance_dirty_pages and wb_writeback), also
//! on 5.15+, which moved it to the completion side (wb_bandwidth_estimate
//! start and the delayed bw_dwork).

use std::collections::VecDeque;

pub use crate::kernel::vm::DirtyConfig;
use crate::mm::floor::MmFloor;
use crate::mm::PAGE_SIZE;
use crate::sched::task::TaskId;

/// mm/page-writeback.c: pos_ratio and rates are fixed point in 1/1024.
pub const RATELIMIT_CALC_SHIFT: u32 = 10;
/// Estimate the write bandwidth and the ratelimit every 200 ms.
pub fn bandwidth_interval(hz: u64) -> u64 {
    (hz / 5).max(1)
}
/// The longest pause: 200 ms.
pub fn max_pause(hz: u64) -> u64 {
    (hz / 5).max(1)
}
/// Pages a writer may dirty between polls when the ratelimit is low:
/// 128 KiB (DIRTY_POLL_THRESH).
pub const DIRTY_POLL_THRESH: u64 = 128 * 1024 / PAGE_SIZE;
/// The first write bandwidth and ratelimit of a device: 100 MB/s in
/// pages (INIT_BW).
pub const INIT_BW: u64 = 100 << (20 - 12);
/// fs/fs-writeback.c: a background chunk is a multiple of 4 MiB.
pub const MIN_WRITEBACK_PAGES: u64 = 4096 * 1024 / PAGE_SIZE;
/// A chunk is at most an eighth of the dirty limit (DIRTY_SCOPE).
pub const DIRTY_SCOPE: u64 = 8;

/// roundup_pow_of_two().
pub fn roundup_pow_of_two(x: u64) -> u64 {
    x.max(1).next_power_of_two()
}

/// ilog2() (of a nonzero value; 0 for 0).
pub fn ilog2(x: u64) -> u64 {
    if x == 0 {
        0
    } else {
        63 - x.leading_zeros() as u64
    }
}

/// dirty_freerun_ceiling(): below it writers are not throttled.
pub fn dirty_freerun_ceiling(thresh: u64, bg_thresh: u64) -> u64 {
    (thresh + bg_thresh) / 2
}

/// dirty_poll_interval(): how many pages a free-running writer may
/// dirty before it looks again — the square root of the distance to the
/// limit, as a power of two.
pub fn dirty_poll_interval(dirty: u64, thresh: u64) -> u64 {
    if thresh > dirty {
        1 << (ilog2(thresh - dirty) >> 1)
    } else {
        1
    }
}

/// pos_ratio_polynom(): the global control line,
/// 1 + ((setpoint - dirty) / (limit - setpoint))^3, in 1/1024, within
/// [0, 2].
pub fn pos_ratio_polynom(setpoint: u64, dirty: u64, limit: u64) -> i64 {
    let den = (limit.saturating_sub(setpoint) | 1) as i64;
    let x = ((setpoint as i64 - dirty as i64) << RATELIMIT_CALC_SHIFT) / den;
    let mut p = x;
    p = (p * x) >> RATELIMIT_CALC_SHIFT;
    p = (p * x) >> RATELIMIT_CALC_SHIFT;
    p += 1 << RATELIMIT_CALC_SHIFT;
    p.clamp(0, 2 << RATELIMIT_CALC_SHIFT)
}

/// global_dirty_limits(): (thresh, bg_thresh) in pages from the
/// dirtyable memory and vm.dirty_* (bytes, when set, win over ratios).
/// An RT writer gets a quarter more of both (PF_LESS_THROTTLE or
/// rt_task()).
pub fn global_dirty_limits(dirtyable: u64, cfg: &DirtyConfig, rt: bool) -> (u64, u64) {
    let mut thresh = match cfg.dirty_bytes {
        Some(b) => b.div_ceil(PAGE_SIZE),
        None => cfg.dirty_ratio * dirtyable / 100,
    };
    let mut bg = match cfg.dirty_background_bytes {
        Some(b) => b.div_ceil(PAGE_SIZE),
        None => cfg.dirty_background_ratio * dirtyable / 100,
    };
    if bg >= thresh {
        bg = thresh / 2;
    }
    if rt {
        bg += bg / 4;
        thresh += thresh / 4;
    }
    (thresh, bg)
}

/// What the flusher of a device is doing (wb_workfn's state).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlusherState {
    /// Not yet run.
    Boot,
    /// Asleep until work is queued or the periodic timer fires.
    Idle,
    /// Writing back: `background` (down to the background threshold) or
    /// kupdate (pages older than dirty_expire).
    Writing { background: bool },
    /// Waiting for a request (blk_mq_get_tag's io_schedule).
    WaitTag { background: bool },
}

/// struct bdi_writeback of one device, with what its flusher holds.
#[derive(Debug, Clone)]
pub struct Wb {
    pub disk: usize,
    /// WB_RECLAIMABLE: dirty pages of the device's files.
    pub reclaimable: u64,
    /// WB_WRITEBACK: pages being written.
    pub writeback: u64,
    /// WB_DIRTIED and WB_WRITTEN: pages dirtied and written, ever.
    pub dirtied: u64,
    pub written: u64,
    /// The bandwidth estimate's snapshot (jiffies; page counts), and
    /// whether one was taken since boot.
    pub bw_time_stamp: u64,
    pub bw_stamped: bool,
    pub dirtied_stamp: u64,
    pub written_stamp: u64,
    /// Pages per second.
    pub write_bandwidth: u64,
    pub avg_write_bandwidth: u64,
    pub dirty_ratelimit: u64,
    pub balanced_dirty_ratelimit: u64,
    pub dirty_exceeded: bool,
    /// The device's writeouts in the flex proportions' current period
    /// (wb->completions; aged with the domain's).
    pub completions: u64,
    /// Dirty pages in the order they were dirtied: (node, pages, jiffies).
    pub dirty_fifo: VecDeque<(usize, u64, u64)>,
    /// Pages under writeback in submission order: (node, pages).
    pub writeback_fifo: VecDeque<(usize, u64)>,
    pub flusher: TaskId,
    pub state: FlusherState,
    /// Work queued for the flusher (wb_start_background_writeback).
    pub bg_queued: bool,
    /// The periodic timer is armed (wb_wakeup_delayed), and for when.
    pub delayed_at: Option<u64>,
    /// When the last kupdate pass ran (wb->last_old_flush, ns).
    pub last_old_flush: u64,
    /// The current wb_writeback's start (jiffies).
    pub wb_start: u64,
    /// Pages of the chunk being written (submitted when its CPU time is
    /// spent).
    pub chunk: u64,
    /// Requests and pages written, ever (the report).
    pub chunks: u64,
}

impl Wb {
    pub fn new(disk: usize, flusher: TaskId) -> Self {
        Wb {
            disk,
            reclaimable: 0,
            writeback: 0,
            dirtied: 0,
            written: 0,
            bw_time_stamp: 0,
            bw_stamped: false,
            dirtied_stamp: 0,
            written_stamp: 0,
            write_bandwidth: INIT_BW,
            avg_write_bandwidth: INIT_BW,
            dirty_ratelimit: INIT_BW,
            balanced_dirty_ratelimit: INIT_BW,
            dirty_exceeded: false,
            completions: 0,
            dirty_fifo: VecDeque::new(),
            writeback_fifo: VecDeque::new(),
            flusher,
            state: FlusherState::Boot,
            bg_queued: false,
            delayed_at: None,
            last_old_flush: 0,
            wb_start: 0,
            chunk: 0,
            chunks: 0,
        }
    }

    /// wb_update_write_bandwidth(): `elapsed` jiffies since the last
    /// estimate, `written` the pages written ever.
    pub fn update_write_bandwidth(&mut self, hz: u64, elapsed: u64, written: u64) {
        let period = roundup_pow_of_two(3 * hz);
        let mut avg = self.avg_write_bandwidth;
        let old = self.write_bandwidth;
        let mut bw = (written - written.min(self.written_stamp)) * hz;
        if elapsed > period {
            bw /= elapsed.max(1);
            avg = bw;
        } else {
            bw += self.write_bandwidth * (period - elapsed);
            bw >>= ilog2(period);
            // One more level of smoothing, for sudden spikes.
            if avg > old && old >= bw {
                avg -= (avg - old) >> 3;
            }
            if avg < old && old <= bw {
                avg += (old - avg) >> 3;
            }
        }
        self.write_bandwidth = bw;
        self.avg_write_bandwidth = avg.max(1);
    }

    /// wb_update_dirty_ratelimit(): move dirty_ratelimit towards the
    /// balanced rate (task_ratelimit x write_bw / dirty_rate), slowly near
    /// it, and only in the direction the dirty pages' position allows.
    pub fn update_dirty_ratelimit(&mut self, hz: u64, d: &DirtyControl, dirtied: u64, elapsed: u64) {
        let freerun = dirty_freerun_ceiling(d.thresh, d.bg_thresh);
        let limit = d.limit;
        let setpoint = (freerun + limit) / 2;
        let write_bw = self.avg_write_bandwidth;
        let mut ratelimit = self.dirty_ratelimit;
        let dirty_rate = (dirtied - self.dirtied_stamp) * hz / elapsed.max(1);
        let task_ratelimit = ((ratelimit as u128 * d.pos_ratio as u128) >> RATELIMIT_CALC_SHIFT) as u64 + 1;
        let balanced = ((task_ratelimit as u128 * write_bw as u128) / (dirty_rate | 1) as u128) as u64;
        let balanced = balanced.min(write_bw);
        let mut step = 0;
        if d.dirty < setpoint {
            let x = self.balanced_dirty_ratelimit.min(balanced).min(task_ratelimit);
            if ratelimit < x {
                step = x - ratelimit;
            }
        } else {
            let x = self.balanced_dirty_ratelimit.max(balanced).max(task_ratelimit);
            if ratelimit > x {
                step = ratelimit - x;
            }
        }
        // Do not chase the balanced rate exactly: slow down near it.
        let shift = ratelimit / (2 * step + 1);
        step = if shift < 64 { (step >> shift).div_ceil(8) } else { 0 };
        if ratelimit < balanced {
            ratelimit += step;
        } else {
            ratelimit -= step.min(ratelimit);
        }
        self.dirty_ratelimit = ratelimit.max(1);
        self.balanced_dirty_ratelimit = balanced;
    }

    /// wb_max_pause(): a pause short enough that the device's dirty pages
    /// do not run dry while the writers sleep.
    pub fn max_pause(&self, hz: u64, wb_dirty: u64) -> u64 {
        let bw = self.avg_write_bandwidth;
        let t = wb_dirty / (1 + bw / roundup_pow_of_two(1 + hz / 8)) + 1;
        t.min(max_pause(hz))
    }

    /// wb_min_pause(): the shortest pause worth sleeping (jiffies) and the
    /// pages to dirty before the next call (nr_dirtied_pause): ~10 ms
    /// pauses for one writer, N x 10 ms for 2^N writers.
    pub fn min_pause(&self, hz: u64, max_pause: u64, task_ratelimit: u64, dirty_ratelimit: u64) -> (u64, u64) {
        let hi = ilog2(self.avg_write_bandwidth) as i64;
        let lo = ilog2(dirty_ratelimit) as i64;
        let mut t = (hz / 100).max(1) as i64;
        if hi > lo {
            t += (hi - lo) * (10 * hz as i64) / 1024;
        }
        t = t.min(1 + max_pause as i64 / 2);
        let hz_pow = roundup_pow_of_two(hz) as i64;
        let mut pages = dirty_ratelimit as i64 * t / hz_pow;
        if pages < DIRTY_POLL_THRESH as i64 {
            t = max_pause as i64;
            pages = dirty_ratelimit as i64 * t / hz_pow;
            if pages > DIRTY_POLL_THRESH as i64 {
                pages = DIRTY_POLL_THRESH as i64;
                t = hz as i64 * DIRTY_POLL_THRESH as i64 / dirty_ratelimit.max(1) as i64;
            }
        }
        let pause = hz as i64 * pages / (task_ratelimit as i64 + 1);
        if pause > max_pause as i64 {
            t = max_pause as i64;
            pages = task_ratelimit as i64 * t / hz_pow;
        }
        let min = if pages >= DIRTY_POLL_THRESH as i64 { 1 + t / 2 } else { t };
        (min.max(0) as u64, pages.max(0) as u64)
    }
}

/// struct dirty_throttle_control of the global domain for one device.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DirtyControl {
    /// NR_FILE_DIRTY + NR_WRITEBACK.
    pub dirty: u64,
    pub thresh: u64,
    pub bg_thresh: u64,
    /// hard_dirty_limit(): the domain's smoothed limit.
    pub limit: u64,
    pub wb_dirty: u64,
    pub wb_thresh: u64,
    pub wb_bg_thresh: u64,
    /// 1/1024.
    pub pos_ratio: u64,
}

impl DirtyControl {
    /// wb_position_ratio(): the global cubic line at the setpoint, scaled
    /// by the device's linear line around its share of it (span 8 x
    /// write_bw for a lone device), and raised when the device's dirty
    /// pages fall below half its threshold (the reserve area).
    pub fn position_ratio(&mut self, write_bw: u64) {
        self.pos_ratio = 0;
        let limit = self.limit;
        if self.dirty >= limit {
            return;
        }
        let freerun = dirty_freerun_ceiling(self.thresh, self.bg_thresh);
        let setpoint = (freerun + limit) / 2;
        let mut pos = pos_ratio_polynom(setpoint, self.dirty, limit) as u128;
        let mut wb_thresh = self.wb_thresh.min(self.thresh);
        // A device idle for long keeps a workable threshold.
        wb_thresh = wb_thresh.max((limit - self.dirty) / 8);
        let x = ((wb_thresh as u128) << 16) / (self.thresh | 1) as u128;
        let wb_setpoint = (setpoint as u128 * x) >> 16;
        let span = ((self.thresh.saturating_sub(wb_thresh) + 8 * write_bw) as u128 * x) >> 16;
        let x_intercept = wb_setpoint + span;
        let wb_dirty = self.wb_dirty as u128;
        if wb_dirty < x_intercept - span / 4 {
            pos = pos * (x_intercept - wb_dirty) / ((x_intercept - wb_setpoint) | 1);
        } else {
            pos /= 4;
        }
        let reserve = (wb_thresh / 2) as u128;
        if wb_dirty < reserve {
            if wb_dirty > reserve / 8 {
                pos = pos * reserve / wb_dirty;
            } else {
                pos *= 8;
            }
        }
        self.pos_ratio = pos.min(u64::MAX as u128) as u64;
    }
}

/// The writeback domain (global_wb_domain): the smoothed dirty limit and
/// the flex proportions' period.
#[derive(Debug, Clone, Default)]
pub struct WbDomain {
    /// dom->dirty_limit and when it was last updated (jiffies).
    pub dirty_limit: u64,
    pub dirty_limit_tstamp: u64,
    /// Writeouts of every device in the current period (dom->completions).
    pub completions: u64,
    /// When the current period of the proportions ends (ns; 0: none).
    pub period_end: u64,
}

impl WbDomain {
    /// update_dirty_limit(): follow a rising threshold at once, a falling
    /// one by 1/32 of the gap per update (not below the dirty pages).
    pub fn update_dirty_limit(&mut self, thresh: u64, dirty: u64) {
        let mut limit = self.dirty_limit;
        if limit < thresh {
            limit = thresh;
        } else {
            let floor = thresh.max(dirty);
            if limit > floor {
                limit -= (limit - floor) >> 5;
            }
        }
        self.dirty_limit = limit;
    }

    /// hard_dirty_limit().
    pub fn hard_dirty_limit(&self, thresh: u64) -> u64 {
        self.dirty_limit.max(thresh)
    }
}

/// Per task: where its writes stand against the throttle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskDirty {
    /// current->nr_dirtied, nr_dirtied_pause, dirty_paused_when (jiffies).
    pub nr_dirtied: u64,
    pub nr_dirtied_pause: u64,
    pub dirty_paused_when: u64,
}

impl Default for TaskDirty {
    /// copy_process(): 128 KiB before the first look.
    fn default() -> Self {
        TaskDirty { nr_dirtied: 0, nr_dirtied_pause: 128 * 1024 / PAGE_SIZE, dirty_paused_when: 0 }
    }
}

/// A write(2) in progress: bytes still to write, pages of the step
/// being copied on `node` (dirtied when the copy is done), and the pages
/// of a balance_dirty_pages() call to make again after its pause (its
/// task_ratelimit was 0).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteState {
    pub disk: usize,
    pub left: u64,
    pub copying: u64,
    pub node: usize,
    pub bdp_again: u64,
}

/// A group's throttling, for the report.
#[derive(Debug, Clone, Default)]
pub struct ThrottleStats {
    pub dirtied: u64,
    /// The pauses (ns), each as slept.
    pub pauses: Vec<u64>,
}

/// fs/fs-writeback.c VM_COMPLETIONS_PERIOD_LEN: the writeout proportions
/// halve every 3 s.
pub const COMPLETIONS_PERIOD_NS: u64 = 3_000_000_000;

impl MmFloor {
    /// The clock in jiffies.
    pub(crate) fn jiffies(&self) -> u64 {
        self.kt.k.now / self.kt.k.cfg.tick_ns
    }

    /// global_dirtyable_memory() (3.14+): free pages above the reserves
    /// and the file pages. Deviation: totalreserve_pages is taken as the
    /// high watermarks (the lowmem reserves of a one-zone node are 0).
    pub(crate) fn global_dirtyable_memory(&self) -> u64 {
        let free: u64 = self.mm.nodes.iter().map(|n| n.free).sum();
        let reserve: u64 = self.mm.nodes.iter().map(|n| n.wmark.high).sum();
        let file: u64 = self.mm.nodes.iter().map(|n| n.file_pages()).sum();
        free - free.min(reserve) + file + 1
    }

    /// NR_FILE_DIRTY and NR_WRITEBACK, summed over the nodes.
    pub(crate) fn global_dirty(&self) -> (u64, u64) {
        let d = self.mm.nodes.iter().map(|n| n.nr_dirty).sum();
        let w = self.mm.nodes.iter().map(|n| n.nr_writeback).sum();
        (d, w)
    }

    /// __wb_calc_thresh(): the device's share of `thresh`, by its share of
    /// the recent writeouts (bdi min_ratio 0, max_ratio 100).
    pub(crate) fn wb_calc_thresh(&self, w: usize, thresh: u64) -> u64 {
        let den = self.mm.wb_dom.completions;
        if den == 0 {
            return 0;
        }
        (thresh as u128 * self.mm.wbs[w].completions as u128 / den as u128) as u64
    }

    /// The device's limits and its global ones as balance_dirty_pages
    /// reads them (domain_dirty_limits, wb_dirty_limits).
    fn dirty_control(&self, w: usize, rt: bool) -> DirtyControl {
        let (nr_dirty, nr_wb) = self.global_dirty();
        let (thresh, bg_thresh) = global_dirty_limits(self.global_dirtyable_memory(), &self.mm.cfg.dirty, rt);
        let wb = &self.mm.wbs[w];
        let wb_thresh = self.wb_calc_thresh(w, thresh);
        DirtyControl {
            dirty: nr_dirty + nr_wb,
            thresh,
            bg_thresh,
            limit: self.mm.wb_dom.hard_dirty_limit(thresh),
            wb_dirty: wb.reclaimable + wb.writeback,
            wb_thresh,
            wb_bg_thresh: if thresh > 0 { (wb_thresh as u128 * bg_thresh as u128 / thresh as u128) as u64 } else { 0 },
            pos_ratio: 0,
        }
    }

    /// __wb_update_bandwidth(): every 200 ms, the write bandwidth, and
    /// from balance_dirty_pages the domain's limit and the ratelimit.
    /// A device idle for over a second since `start` (jiffies) only takes
    /// a new snapshot.
    pub(crate) fn wb_update_bandwidth(&mut self, w: usize, d: Option<&DirtyControl>, start: u64) {
        let hz = self.kt.k.cfg.hz as u64;
        let now = self.jiffies();
        let wb = &self.mm.wbs[w];
        // The stamp of a device idle since boot is its mount, long before:
        // the first estimate is a snapshot, as after any quiet second.
        let elapsed = if wb.bw_stamped { now.saturating_sub(wb.bw_time_stamp) } else { u64::MAX };
        if elapsed < bandwidth_interval(hz) {
            return;
        }
        let (dirtied, written) = (wb.dirtied, wb.written);
        if !(elapsed > hz && (wb.bw_time_stamp < start || !wb.bw_stamped)) {
            if let Some(d) = d {
                // domain_update_bandwidth(): the smoothed limit, every 200 ms.
                if now >= self.mm.wb_dom.dirty_limit_tstamp + bandwidth_interval(hz) {
                    self.mm.wb_dom.update_dirty_limit(d.thresh, d.dirty);
                    self.mm.wb_dom.dirty_limit_tstamp = now;
                }
                self.mm.wbs[w].update_dirty_ratelimit(hz, d, dirtied, elapsed);
            }
            self.mm.wbs[w].update_write_bandwidth(hz, elapsed, written);
        }
        let wb = &mut self.mm.wbs[w];
        wb.dirtied_stamp = dirtied;
        wb.written_stamp = written;
        wb.bw_time_stamp = now;
        wb.bw_stamped = true;
    }

    /// writeback_in_progress(): the flusher has work or is at it.
    pub(crate) fn writeback_in_progress(&self, w: usize) -> bool {
        let wb = &self.mm.wbs[w];
        wb.bg_queued || matches!(wb.state, FlusherState::Writing { .. } | FlusherState::WaitTag { .. })
    }

    /// balance_dirty_pages_ratelimited(): the pages a writer may dirty
    /// before it must call balance_dirty_pages (8 while the device is over
    /// its limit).
    pub(crate) fn dirty_ratelimit_pages(&mut self, tid: TaskId, w: usize) -> u64 {
        let td = self.mm.task(tid).dirty;
        let mut ratelimit = td.nr_dirtied_pause;
        if self.mm.wbs[w].dirty_exceeded {
            ratelimit = ratelimit.min(32 * 1024 / PAGE_SIZE / 4);
        }
        ratelimit.max(1)
    }

    /// balance_dirty_pages() for `tid`, which dirtied `pages_dirtied`
    /// pages of device `w`: Some(jiffies) when it sleeps that long (and
    /// whether it must look again after: task_ratelimit was 0), None when
    /// it goes on.
    pub(crate) fn balance_dirty_pages(&mut self, tid: TaskId, w: usize, pages_dirtied: u64) -> Option<(u64, bool)> {
        let hz = self.kt.k.cfg.hz as u64;
        let start = self.jiffies();
        let mut now = start;
        let rt = self.kt.k.sched.tasks[tid].policy.is_rt();
        let mut d = self.dirty_control(w, rt);
        let (nr_reclaimable, _) = self.global_dirty();
        let freerun = dirty_freerun_ceiling(d.thresh, d.bg_thresh);
        let mut out = None;
        let mut dirty_exceeded = false;
        'bdp: {
            if d.dirty <= freerun {
                let td = &mut self.mm.task(tid).dirty;
                td.dirty_paused_when = now;
                td.nr_dirtied = 0;
                td.nr_dirtied_pause = dirty_poll_interval(d.dirty, d.thresh);
                break 'bdp;
            }
            if !self.writeback_in_progress(w) {
                self.wb_start_background_writeback(w);
            }
            dirty_exceeded = d.wb_dirty > d.wb_thresh && d.dirty > d.thresh;
            if dirty_exceeded {
                self.mm.wbs[w].dirty_exceeded = true;
            }
            d.position_ratio(self.mm.wbs[w].avg_write_bandwidth);
            if !self.mm.wbs[w].bw_stamped || now >= self.mm.wbs[w].bw_time_stamp + bandwidth_interval(hz) {
                self.wb_update_bandwidth(w, Some(&d), start);
            }
            let wb = &self.mm.wbs[w];
            let dirty_ratelimit = wb.dirty_ratelimit;
            let task_ratelimit = ((dirty_ratelimit as u128 * d.pos_ratio as u128) >> RATELIMIT_CALC_SHIFT) as u64;
            let max_pause = wb.max_pause(hz, d.wb_dirty);
            let (min_pause, nr_dirtied_pause) = wb.min_pause(hz, max_pause, task_ratelimit, dirty_ratelimit);
            let pause;
            if let Some(period) = (hz * pages_dirtied).checked_div(task_ratelimit) {
                let td = self.mm.task(tid).dirty;
                let mut p = period as i64;
                if td.dirty_paused_when != 0 {
                    p -= now as i64 - td.dirty_paused_when as i64;
                }
                if p < min_pause as i64 {
                    let td = &mut self.mm.task(tid).dirty;
                    if p < -(hz as i64) {
                        td.dirty_paused_when = now;
                        td.nr_dirtied = 0;
                    } else if period > 0 {
                        td.dirty_paused_when += period;
                        td.nr_dirtied = 0;
                    } else if td.nr_dirtied_pause <= pages_dirtied {
                        td.nr_dirtied_pause += pages_dirtied;
                    }
                    break 'bdp;
                }
                if p > max_pause as i64 {
                    // For an occasional dropped task_ratelimit.
                    now += (p as u64 - max_pause).min(max_pause);
                    p = max_pause as i64;
                }
                pause = p as u64;
            } else {
                // task_ratelimit 0: the longest pause, then look again.
                pause = max_pause;
            }
            let td = &mut self.mm.task(tid).dirty;
            td.dirty_paused_when = now + pause;
            td.nr_dirtied = 0;
            td.nr_dirtied_pause = nr_dirtied_pause;
            out = Some((pause, task_ratelimit == 0 && d.wb_dirty > 0));
        }
        if !dirty_exceeded && self.mm.wbs[w].dirty_exceeded {
            self.mm.wbs[w].dirty_exceeded = false;
        }
        if out.is_none() && !self.writeback_in_progress(w) && nr_reclaimable > d.bg_thresh {
            self.wb_start_background_writeback(w);
        }
        out
    }

    /// account_page_dirtied() for `pages` new pages of device `w` on
    /// `node`.
    pub(crate) fn account_page_dirtied(&mut self, tid: TaskId, w: usize, node: usize, pages: u64) {
        let now = self.jiffies();
        self.mm.nodes[node].nr_dirty += pages;
        let wb = &mut self.mm.wbs[w];
        wb.reclaimable += pages;
        wb.dirtied += pages;
        match wb.dirty_fifo.back_mut() {
            Some(last) if last.0 == node && last.2 == now => last.1 += pages,
            _ => wb.dirty_fifo.push_back((node, pages, now)),
        }
        self.mm.task(tid).dirty.nr_dirtied += pages;
        if self.kt.k.now >= self.mm.window_start {
            let g = self.kt.k.sched.tasks[tid].group;
            self.throttle_stats(g).dirtied += pages;
        }
        // __mark_inode_dirty(): the first dirty inode arms the periodic
        // flush.
        if self.mm.wbs[w].state == FlusherState::Idle && self.mm.wbs[w].delayed_at.is_none() {
            self.wb_wakeup_delayed(w);
        }
    }

    /// A group's throttle counters.
    pub(crate) fn throttle_stats(&mut self, group: usize) -> &mut ThrottleStats {
        if self.mm.throttle.len() <= group {
            self.mm.throttle.resize_with(group + 1, ThrottleStats::default);
        }
        &mut self.mm.throttle[group]
    }

    /// The writeout proportions' period (fprop_new_period): halve every
    /// device's and the domain's writeouts for each 3 s that passed.
    pub(crate) fn writeout_period(&mut self) {
        let now = self.kt.k.now;
        let dom = &mut self.mm.wb_dom;
        if dom.period_end == 0 {
            dom.period_end = now + COMPLETIONS_PERIOD_NS;
            return;
        }
        if now < dom.period_end {
            return;
        }
        let periods = 1 + (now - dom.period_end) / COMPLETIONS_PERIOD_NS;
        let shift = periods.min(63) as u32;
        dom.completions >>= shift;
        dom.period_end += periods * COMPLETIONS_PERIOD_NS;
        for wb in &mut self.mm.wbs {
            wb.completions >>= shift;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_global_control_line_is_one_at_the_setpoint_and_two_at_the_freerun_edge() {
        assert_eq!(pos_ratio_polynom(1000, 1000, 2000), 1024);
        // At the limit: 1 - 1, but for the `| 1` of the kernel's divisor
        // (5/1024); halfway to it: 1 - 1/8.
        assert_eq!(pos_ratio_polynom(1000, 2000, 2000), 5);
        assert_eq!(pos_ratio_polynom(1000, 1500, 2000), 1024 - 128);
        // Far below, clamped at 2.
        assert_eq!(pos_ratio_polynom(1000, 0, 1500), 2048);
    }

    #[test]
    fn limits_follow_the_ratios_unless_bytes_are_set() {
        let c = DirtyConfig::default();
        assert_eq!(global_dirty_limits(1000, &c, false), (200, 100));
        assert_eq!(global_dirty_limits(1000, &c, true), (250, 125));
        let b = DirtyConfig { dirty_bytes: Some(40 * PAGE_SIZE), dirty_background_bytes: Some(50 * PAGE_SIZE), ..c };
        // A background limit above the limit is halved from it.
        assert_eq!(global_dirty_limits(1000, &b, false), (40, 20));
        assert_eq!(dirty_freerun_ceiling(200, 100), 150);
        assert_eq!(dirty_poll_interval(100, 200), 8);
        assert_eq!(dirty_poll_interval(300, 200), 1);
    }

    #[test]
    fn the_ratelimit_steps_towards_the_balanced_rate_only_from_the_far_side() {
        // 1000 pages/s written; the writer dirtied 2000 pages/s. Above the
        // setpoint (pos_ratio 1/2) the balanced rate is 500 and the
        // ratelimit comes down by an eighth of half the gap; below it, a
        // ratelimit above the balanced rate is left alone.
        let hz = 250;
        let mut wb = Wb::new(0, 0);
        wb.avg_write_bandwidth = 1000;
        wb.dirty_ratelimit = 2000;
        wb.balanced_dirty_ratelimit = 1000;
        let d = DirtyControl {
            dirty: 1900,
            thresh: 2000,
            bg_thresh: 1000,
            limit: 2000,
            pos_ratio: 512,
            ..Default::default()
        };
        wb.update_dirty_ratelimit(hz, &d, 400, 50);
        assert_eq!((wb.balanced_dirty_ratelimit, wb.dirty_ratelimit), (500, 1937));
        let mut wb2 = Wb::new(0, 0);
        wb2.avg_write_bandwidth = 1000;
        wb2.dirty_ratelimit = 2000;
        wb2.balanced_dirty_ratelimit = 1000;
        let below = DirtyControl { dirty: 1600, pos_ratio: 1024, ..d };
        wb2.update_dirty_ratelimit(hz, &below, 400, 50);
        assert_eq!((wb2.balanced_dirty_ratelimit, wb2.dirty_ratelimit), (1000, 2000));
    }

    #[test]
    fn the_write_bandwidth_is_smoothed_over_three_seconds() {
        let hz = 250;
        let mut wb = Wb::new(0, 0);
        // 200 ms at 25,600 pages/s (100 MB/s): stays at INIT_BW.
        wb.update_write_bandwidth(hz, 50, 5120);
        assert_eq!(wb.write_bandwidth, INIT_BW);
        // After a long gap the rate is taken as measured.
        wb.written_stamp = 0;
        wb.update_write_bandwidth(hz, 2000, 8000);
        assert_eq!(wb.write_bandwidth, 1000);
        assert_eq!(wb.avg_write_bandwidth, 1000);
    }

    #[test]
    fn pauses_are_about_10ms_for_one_writer_and_capped_at_200ms() {
        let hz = 1000;
        let mut wb = Wb::new(0, 0);
        wb.avg_write_bandwidth = 25_600;
        let (min, pages) = wb.min_pause(hz, 200, 25_600, 25_600);
        // 10 ms of 25,600 pages/s in 1024ths of a second: 250 pages.
        assert_eq!((min, pages), (6, 250));
        assert_eq!(wb.max_pause(hz, 1_000_000), 200);
        assert_eq!(wb.max_pause(hz, 0), 1);
    }
}
