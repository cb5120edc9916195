//! The flusher (fs/fs-writeback.c wb_workfn, wb_do_writeback,
//! wb_writeback): one kernel thread per device that has dirty pages,
//! woken by a writer over the background threshold
//! (wb_start_background_writeback) or by the periodic timer
//! (dirty_writeback_centisecs, wb_wakeup_delayed). Background writeback
//! writes chunks of the oldest dirty pages until the dirty pages are
//! below the background threshold (wb_over_bg_thresh); the periodic
//! (kupdate) pass writes those dirty longer than dirty_expire_centisecs.
//! A chunk is min(write_bw / 2, dirty_limit / 8) pages rounded to 4 MiB
//! (writeback_chunk_size); its pages go from dirty to writeback and out
//! as requests of max_sectors_kb; when the device's requests are all
//! taken the flusher sleeps for one (blk_mq_get_tag). A completion
//! (end_page_writeback) cleans the pages, counts them for the bandwidth
//! estimate and the writeout proportions, and wakes a waiting flusher.
//!
//! Deviation: a dedicated thread per device, as 2.6.32-3.9's
//! "flush-MAJ:MIN" threads were; from 3.10 the work runs on bdi_wq's
//! unbound kworkers, which the model does not pick. Pages are written in
//! the order they were dirtied (the kernel goes inode by inode through
//! b_io, a chunk per inode), and the periodic pass's expiry is per page
//! (the kernel's is per inode: an inode dirty for 30 s has all its pages
//! written). The flusher's per-page work
//! (write_cache_pages, the filesystem's block mapping, and the
//! completion's end_page_writeback) is charged to it, as
//! `kernel.costs.writeback_page`. The request pool is
//! 2 x min(queue_depth, 128) (blk_mq_init_sched's nr_requests with an IO
//! scheduler); the flusher waits for one only after submitting a chunk.

use crate::block::{BioOp, EndIo};
use crate::kthread::floor::LendsKthreads;
use crate::mm::floor::MmFloor;
use crate::mm::page_writeback::{global_dirty_limits, FlusherState, DIRTY_SCOPE, MIN_WRITEBACK_PAGES};
use crate::mm::PAGE_SIZE;
use crate::sched::task::{TaskId, TaskState};

impl MmFloor {
    /// The flusher of device `w` runs (its program is one endless op).
    pub(crate) fn flusher(&mut self, tid: TaskId, w: usize) {
        self.kt.k.sched.tasks[tid].pc -= 1; // the op never completes
        loop {
            match self.mm.wbs[w].state {
                FlusherState::Boot => {
                    self.mm.wbs[w].state = FlusherState::Idle;
                    self.block(tid);
                    return;
                }
                FlusherState::Idle => {
                    // wb_do_writeback(): the periodic pass, then background.
                    let kupdate = self.wb_check_old_data_flush(w);
                    let bg = std::mem::take(&mut self.mm.wbs[w].bg_queued) || self.wb_over_bg_thresh(w);
                    if !kupdate && !bg {
                        self.flusher_sleep(tid, w);
                        return;
                    }
                    self.mm.wbs[w].wb_start = self.jiffies();
                    self.mm.wbs[w].state = FlusherState::Writing { background: bg };
                }
                FlusherState::WaitTag { background } => {
                    self.mm.wbs[w].state = FlusherState::Writing { background };
                }
                FlusherState::Writing { background } => {
                    if self.mm.wbs[w].chunk > 0 {
                        // The chunk's pages are ready: submit them.
                        self.writeback_submit(tid, w);
                        let start = self.mm.wbs[w].wb_start;
                        self.wb_update_bandwidth(w, None, start);
                        if self.wb_queue_full(w) {
                            self.mm.wbs[w].state = FlusherState::WaitTag { background };
                            self.io_block(tid, true);
                            return;
                        }
                    }
                    if self.writeback_chunk(tid, w, background) {
                        return;
                    }
                    // Done: the periodic pass is re-armed while dirty
                    // pages remain (wb_workfn's wb_wakeup_delayed).
                    let bg = std::mem::take(&mut self.mm.wbs[w].bg_queued);
                    if bg && self.wb_over_bg_thresh(w) {
                        self.mm.wbs[w].state = FlusherState::Writing { background: true };
                        continue;
                    }
                    self.mm.wbs[w].state = FlusherState::Idle;
                    self.flusher_sleep(tid, w);
                    return;
                }
            }
        }
    }

    /// The flusher sleeps until woken, with the periodic timer armed if
    /// the device has dirty pages.
    fn flusher_sleep(&mut self, tid: TaskId, w: usize) {
        let cs = self.mm.cfg.dirty.dirty_writeback_cs;
        if self.mm.wbs[w].reclaimable > 0 && cs > 0 {
            let at = self.kt.k.now + cs * 10_000_000;
            self.mm.wbs[w].delayed_at = Some(at);
            self.mm_sleep(tid, cs * 10_000_000);
        } else {
            self.mm.wbs[w].delayed_at = None;
            self.block(tid);
        }
    }

    /// wb_wakeup_delayed(): arm the periodic pass dirty_writeback_centisecs
    /// from now (the flusher is asleep without a timer).
    pub(crate) fn wb_wakeup_delayed(&mut self, w: usize) {
        let cs = self.mm.cfg.dirty.dirty_writeback_cs;
        let tid = self.mm.wbs[w].flusher;
        if cs == 0 || self.kt.k.sched.tasks[tid].state != TaskState::Blocked {
            return;
        }
        self.mm.wbs[w].delayed_at = Some(self.kt.k.now + cs * 10_000_000);
        let seq = {
            let t = self.mm.task(tid);
            t.sleep_seq = t.sleep_seq.wrapping_add(1);
            t.sleep_seq
        };
        let at = crate::engine::time::Instant(self.kt.k.now + cs * 10_000_000);
        self.kt.k.q.schedule(at, crate::engine::event::Ev::MmTimer(tid as u32, seq));
    }

    /// wb_start_background_writeback(): queue background work and wake
    /// the flusher.
    pub(crate) fn wb_start_background_writeback(&mut self, w: usize) {
        self.mm.wbs[w].bg_queued = true;
        self.flusher_wake(w);
    }

    /// Wake the flusher if it sleeps idle (its timer no longer matters).
    fn flusher_wake(&mut self, w: usize) {
        let tid = self.mm.wbs[w].flusher;
        if self.mm.wbs[w].state != FlusherState::Idle || self.kt.k.sched.tasks[tid].state != TaskState::Blocked {
            return;
        }
        let t = self.mm.task(tid);
        t.sleep_seq = t.sleep_seq.wrapping_add(1);
        self.mm.wbs[w].delayed_at = None;
        let cpu = self.kt.k.sched.tasks[tid].cpu;
        self.kt.k.try_to_wake_up(tid, cpu, false);
    }

    /// wb_over_bg_thresh(): the dirty pages (not those under writeback)
    /// over the background threshold, globally or the device's share.
    pub(crate) fn wb_over_bg_thresh(&self, w: usize) -> bool {
        let (nr_dirty, _) = self.global_dirty();
        let (_, bg) = global_dirty_limits(self.global_dirtyable_memory(), &self.mm.cfg.dirty, false);
        nr_dirty > bg || self.mm.wbs[w].reclaimable > self.wb_calc_thresh(w, bg)
    }

    /// wb_check_old_data_flush(): a periodic pass is due (at most every
    /// dirty_writeback_centisecs).
    fn wb_check_old_data_flush(&mut self, w: usize) -> bool {
        let cs = self.mm.cfg.dirty.dirty_writeback_cs;
        if cs == 0 {
            return false;
        }
        let now = self.kt.k.now;
        if now < self.mm.wbs[w].last_old_flush + cs * 10_000_000 {
            return false;
        }
        self.mm.wbs[w].last_old_flush = now;
        self.mm.wbs[w].reclaimable > 0
    }

    /// Pick the next chunk of dirty pages and spend its CPU time (true),
    /// or end the work (false): background while over the background
    /// threshold, kupdate while pages older than dirty_expire remain.
    fn writeback_chunk(&mut self, tid: TaskId, w: usize, background: bool) -> bool {
        let now_j = self.jiffies();
        let expire_j = self.mm.cfg.dirty.dirty_expire_cs * self.kt.k.cfg.hz as u64 / 100;
        let oldest = if background { u64::MAX } else { now_j.saturating_sub(expire_j) };
        if background && !self.wb_over_bg_thresh(w) {
            return false;
        }
        // writeback_chunk_size() for WB_SYNC_NONE work.
        let bw = self.mm.wbs[w].avg_write_bandwidth;
        let limit = self.mm.wb_dom.dirty_limit;
        let pages = (bw / 2).min(limit / DIRTY_SCOPE);
        let pages = (pages + MIN_WRITEBACK_PAGES) / MIN_WRITEBACK_PAGES * MIN_WRITEBACK_PAGES;
        let mut take = 0;
        let wb = &mut self.mm.wbs[w];
        while take < pages {
            let Some(front) = wb.dirty_fifo.front_mut() else { break };
            // kupdate: only pages dirtied before `oldest` (queue_io's
            // older_than_this).
            if front.2 > oldest {
                break;
            }
            let n = front.1.min(pages - take);
            let node = front.0;
            front.1 -= n;
            if front.1 == 0 {
                wb.dirty_fifo.pop_front();
            }
            match wb.writeback_fifo.back_mut() {
                Some(last) if last.0 == node => last.1 += n,
                _ => wb.writeback_fifo.push_back((node, n)),
            }
            wb.reclaimable -= n;
            wb.writeback += n;
            self.mm.nodes[node].nr_dirty -= n;
            self.mm.nodes[node].nr_writeback += n;
            take += n;
        }
        if take == 0 {
            return false;
        }
        self.mm.wbs[w].chunk = take;
        let t = &mut self.kt.k.sched.tasks[tid];
        t.work_left = (take * self.kt.k.cfg.costs.writeback_page_ns).max(1);
        t.work_is_cpu();
        t.in_sys = true;
        true
    }

    /// Submit the chunk as requests of at most max_sectors_kb.
    fn writeback_submit(&mut self, tid: TaskId, w: usize) {
        let disk = self.mm.wbs[w].disk;
        let max = self.kt.block.disks[disk].cfg.max_sectors_kb * 1024;
        let mut left = std::mem::take(&mut self.mm.wbs[w].chunk) * PAGE_SIZE;
        let cpu = self.kt.k.sched.tasks[tid].cpu;
        while left > 0 {
            let bytes = left.min(max);
            left -= bytes;
            let req = self.kt.block.alloc_request(self.kt.k.now, disk, BioOp::Write, bytes, None, EndIo::Writeback);
            self.kt.block.submit_bio(req, cpu, self.kt.k.now, &mut self.kt.k.q);
            self.mm.wbs[w].chunks += 1;
        }
    }

    /// Every request of the device's pool is taken.
    fn wb_queue_full(&self, w: usize) -> bool {
        let d = &self.kt.block.disks[self.mm.wbs[w].disk];
        let nr_requests = 2 * d.cfg.queue_depth.min(128) as usize;
        d.inflight as usize + d.pending.len() >= nr_requests
    }

    /// end_page_writeback() for the writeback requests completed since
    /// the last call: clean the pages, count them, wake a flusher waiting
    /// for a request.
    pub(crate) fn writeback_end_io(&mut self) {
        let done = std::mem::take(&mut self.kt.block.wb_done);
        for (disk, bytes) in done {
            let Some(w) = self.mm.wbs.iter().position(|wb| wb.disk == disk) else { continue };
            self.writeout_period();
            let mut pages = bytes / PAGE_SIZE;
            let wb = &mut self.mm.wbs[w];
            wb.written += pages;
            wb.writeback -= pages.min(wb.writeback);
            wb.completions += pages;
            self.mm.wb_dom.completions += pages;
            self.mm.written += pages;
            while pages > 0 {
                let wb = &mut self.mm.wbs[w];
                let Some(front) = wb.writeback_fifo.front_mut() else { break };
                let n = front.1.min(pages);
                let node = front.0;
                front.1 -= n;
                if front.1 == 0 {
                    wb.writeback_fifo.pop_front();
                }
                pages -= n;
                self.mm.nodes[node].nr_writeback -= n;
            }
            if matches!(self.mm.wbs[w].state, FlusherState::WaitTag { .. }) && !self.wb_queue_full(w) {
                let tid = self.mm.wbs[w].flusher;
                if self.kt.k.sched.tasks[tid].state == TaskState::Blocked {
                    let cpu = self.kt.k.sched.tasks[tid].cpu;
                    self.kt.k.try_to_wake_up(tid, cpu, false);
                }
            }
        }
    }
}
