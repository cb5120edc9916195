//! The read path (mm/filemap.c generic_file_buffered_read, mm/readahead.c;
//! fs/direct-io.c): the `read` op.
//!
//! Buffered: the read proceeds window by window. For each readahead window
//! (read_ahead_kb, or the whole request up to the device's max_sectors_kb
//! when the request is larger: ondemand_readahead with bdi->io_pages,
//! 4.10+) the task allocates the window's pages (page_alloc.rs: may wake
//! kswapd, reclaim directly or be throttled), inserts them in the page
//! cache and adds them to the node's inactive file list through the
//! per-CPU pagevec (one LRU-lock hold per PAGEVEC_SIZE pages), submits
//! the IO and sleeps in io_schedule until it completes, then copies the
//! window to user space. Direct (O_DIRECT): the pages are pinned and the
//! IO goes straight to the user buffer; no page cache, no copy.
//!
//! The `write` op (generic_perform_write) copies into new page-cache
//! pages and dirties them; page_writeback.rs throttles it.
//!
//! A `read` with `file_size` reads its own file again and again
//! (workingset.rs): a window whose pages are all in the page cache is
//! copied without IO; otherwise its missing pages are allocated, added
//! (refaulting when they left shadow entries) and read.
//!
//! Deviation: no asynchronous readahead (the next window is not read while
//! the task copies the current one); without `file_size` every page is read
//! once; a tracked window's missing pages are read in one request, wherever
//! they are in it.

use crate::kthread::floor::LendsKthreads;
use crate::mm::floor::MmFloor;
use crate::mm::page_alloc::Alloc;
use crate::mm::page_writeback::WriteState;
use crate::mm::workingset::UNTRACKED;
use crate::mm::{Lru, ReadPhase, ReadState, PAGE_SIZE};
use crate::sched::task::TaskId;

/// Pages a writer copies per step of the simulation at most (2 MiB).
const WRITE_STEP: u64 = 512;
/// MAX_PAGECACHE_ORDER on x86-64: a PMD, 2 MiB.
const MAX_FOLIO_PAGES: u64 = 512;

/// Whether kernel `v` gives the regular files of `fs` large page-cache
/// folios: XFS from 5.18 ("xfs: Support large folios"), ext4 from 6.16
/// ("ext4: enable large folio for regular file").
fn large_folios(fs: crate::machine::disk::Filesystem, v: crate::kernel::KernelVersion) -> bool {
    use crate::machine::disk::Filesystem;
    match fs {
        Filesystem::Xfs => v.at_least(5, 18),
        Filesystem::Ext4 => v.at_least(6, 16),
    }
}

impl MmFloor {
    /// The readahead window of a read of `bytes` from `disk`.
    fn ra_window(&self, disk: usize, bytes: u64) -> u64 {
        let d = &self.kt.block.disks[disk].cfg;
        let ra = d.read_ahead_kb * 1024;
        let io = d.max_sectors_kb * 1024;
        let w = if bytes > ra && io > ra { bytes.min(io) } else { ra };
        w.max(PAGE_SIZE)
    }

    /// Run the `read` op `idx` for `tid`. Returns true when it is done
    /// (the interpreter goes on), false while it spends time or sleeps.
    pub(crate) fn mm_read(&mut self, tid: TaskId, idx: usize) -> bool {
        if self.mm.read_ops[idx].anon {
            return self.mm_anon(tid, idx);
        }
        if self.mm.read_ops[idx].write {
            return self.mm_write(tid, idx);
        }
        let st = match self.mm.task(tid).read {
            Some(st) => st,
            None => {
                let disk = self.next_disk(idx);
                let op = &self.mm.read_ops[idx];
                let (bytes, direct) = (op.bytes, op.direct);
                self.kt.k.sched.tasks[tid].in_sys = true;
                if direct {
                    // Pin the user pages and build the bios, then submit.
                    let pages = bytes.div_ceil(PAGE_SIZE);
                    self.kt.k.sched.tasks[tid].work_left = (pages * self.kt.k.cfg.costs.dio_page_ns).max(1);
                    self.kt.k.sched.tasks[tid].work_is_cpu();
                    let st = ReadState {
                        disk,
                        left: bytes,
                        window: bytes,
                        phase: ReadPhase::Submit,
                        direct: true,
                        file: UNTRACKED,
                        page: 0,
                        missing: 0,
                    };
                    return self.read_park(tid, st);
                }
                let file = if self.mm.read_ops[idx].file_size.is_some() {
                    match self.ws_file(tid, idx) {
                        Some(f) => f,
                        None => return false,
                    }
                } else {
                    UNTRACKED
                };
                ReadState {
                    disk,
                    left: bytes,
                    window: 0,
                    phase: ReadPhase::Alloc,
                    direct: false,
                    file,
                    page: 0,
                    missing: 0,
                }
            }
        };
        self.buffered_read(tid, st)
    }

    /// The disk of file op `idx`'s next call: its disks in turn.
    fn next_disk(&mut self, idx: usize) -> usize {
        let cur = self.mm.rr[idx];
        self.mm.rr[idx] = cur + 1;
        let disks = &self.mm.read_ops[idx].disks;
        disks[cur % disks.len()]
    }

    /// Submit a read request of `bytes` and sleep in io_schedule.
    fn submit_read(&mut self, tid: TaskId, disk: usize, bytes: u64) {
        use crate::block::{BioOp, EndIo};
        let here = self.kt.k.sched.tasks[tid].cpu;
        let req = self.kt.block.alloc_request(self.kt.k.now, disk, BioOp::Read, bytes, Some(tid), EndIo::Wake);
        self.kt.block.submit_bio(req, here, self.kt.k.now, &mut self.kt.k.q);
        self.mm.ev.pgpgin_kb += bytes / 1024;
        self.io_block(tid, true);
    }

    fn buffered_read(&mut self, tid: TaskId, mut st: ReadState) -> bool {
        let c = &self.kt.k.cfg.costs;
        let (add_ns, copy_ns) = (c.pagecache_add_ns, c.copy_page_ns);
        loop {
            match st.phase {
                ReadPhase::Alloc if st.file != UNTRACKED => {
                    if st.left == 0 {
                        st.phase = ReadPhase::Done;
                        continue;
                    }
                    if st.window == 0 {
                        self.tracked_window(&mut st);
                    }
                    if st.missing == 0 {
                        // Every page is in the page cache: no IO.
                        st.phase = ReadPhase::Copy;
                        continue;
                    }
                    match self.alloc_pages(tid, st.missing) {
                        Alloc::Got(node) => {
                            self.mm.ws.inserting = true;
                            let locks = self.lru_cache_add(tid, node, st.missing, Lru::InactiveFile);
                            self.ws_insert(st.file, st.page, st.window / PAGE_SIZE, st.missing, node);
                            self.kt.k.sched.tasks[tid].work_left = (st.missing * add_ns + locks).max(1);
                            self.kt.k.sched.tasks[tid].work_is_cpu();
                            st.phase = ReadPhase::Submit;
                            return self.read_park(tid, st);
                        }
                        Alloc::Reclaiming | Alloc::Blocked => return self.read_park(tid, st),
                    }
                }
                ReadPhase::Alloc => {
                    if st.left == 0 {
                        st.phase = ReadPhase::Done;
                        continue;
                    }
                    st.window = self.ra_window(st.disk, st.left).min(st.left);
                    let pages = st.window.div_ceil(PAGE_SIZE);
                    match self.alloc_pages(tid, pages) {
                        Alloc::Got(node) => {
                            // add_to_page_cache_lru: the insertion, then the
                            // pages onto the inactive file list.
                            let locks = self.lru_cache_add(tid, node, pages, Lru::InactiveFile);
                            self.kt.k.sched.tasks[tid].work_left = (pages * add_ns + locks).max(1);
                            self.kt.k.sched.tasks[tid].work_is_cpu();
                            self.kt.k.sched.tasks[tid].in_sys = true;
                            st.phase = ReadPhase::Submit;
                            return self.read_park(tid, st);
                        }
                        Alloc::Reclaiming | Alloc::Blocked => return self.read_park(tid, st),
                    }
                }
                ReadPhase::Submit => {
                    st.phase = ReadPhase::Copy;
                    self.mm.task(tid).read = Some(st);
                    self.kt.k.sched.tasks[tid].pc -= 1;
                    // A tracked window reads only its missing pages.
                    let bytes = if st.file == UNTRACKED { st.window } else { st.missing * PAGE_SIZE };
                    self.submit_read(tid, st.disk, bytes);
                    return false;
                }
                ReadPhase::Copy if st.direct => {
                    st.left = 0;
                    st.phase = ReadPhase::Done;
                }
                ReadPhase::Copy => {
                    let pages = st.window.div_ceil(PAGE_SIZE);
                    st.left -= st.left.min(st.window);
                    st.window = 0;
                    st.phase = ReadPhase::Alloc;
                    // mark_page_accessed() of each page copied.
                    let activated =
                        if st.file == UNTRACKED { 0 } else { self.ws_mark_accessed(st.file, st.page, pages) };
                    let lru_ns = activated * self.kt.k.cfg.costs.lru_page_ns;
                    // copy_to_user: each page read from the page cache
                    // and written to the user's buffer. Deviation: all of
                    // it memory-bound and all of it DRAM traffic (no LLC
                    // hits, no read-for-ownership counted).
                    let bw = self.kt.k.membw.enabled();
                    let t = &mut self.kt.k.sched.tasks[tid];
                    t.work_left = (pages * copy_ns + lru_ns).max(1);
                    t.work_is_stream(2 * pages * PAGE_SIZE, t.work_left, bw);
                    return self.read_park(tid, st);
                }
                ReadPhase::Done => {
                    self.mm.task(tid).read = None;
                    self.kt.k.sched.tasks[tid].in_sys = false;
                    return true;
                }
            }
        }
    }

    /// The next window of a tracked file's read: from the reader's place
    /// in its file to the readahead window's end, the request's or the
    /// file's, whichever is first (the next starts the file again).
    fn tracked_window(&mut self, st: &mut ReadState) {
        let want = self.ra_window(st.disk, st.left).min(st.left).div_ceil(PAGE_SIZE);
        let f = &mut self.mm.ws.files[st.file as usize];
        let total = f.pages.len() as u64;
        let start = f.next;
        let n = want.min(total - start).max(1);
        f.next = (start + n) % total;
        st.page = start;
        st.window = n * PAGE_SIZE;
        st.missing = self.ws_missing(st.file, start, n);
    }

    /// Keep the read's state and stay on its op.
    fn read_park(&mut self, tid: TaskId, st: ReadState) -> bool {
        self.mm.task(tid).read = Some(st);
        self.kt.k.sched.tasks[tid].pc -= 1;
        false
    }
}

impl MmFloor {
    /// Run the `write` op `idx` for `tid` (generic_perform_write): copy
    /// the data into new page-cache pages a step at a time, dirty them,
    /// and every `nr_dirtied_pause` pages call balance_dirty_pages, which
    /// may sleep the writer. True when the write is done.
    pub(crate) fn mm_write(&mut self, tid: TaskId, idx: usize) -> bool {
        let mut st = match self.mm.task(tid).write {
            Some(st) => st,
            None => {
                let disk = self.next_disk(idx);
                WriteState { disk, left: self.mm.read_ops[idx].bytes, copying: 0, node: 0, bdp_again: 0 }
            }
        };
        let w = self.mm.wb_of_disk[st.disk].expect("a writeback device for every disk written to");
        self.kt.k.sched.tasks[tid].pc -= 1;
        if st.copying > 0 {
            // The step's pages are copied: set_page_dirty, then
            // balance_dirty_pages_ratelimited.
            self.account_page_dirtied(tid, w, st.node, st.copying);
            st.copying = 0;
            let ratelimit = self.dirty_ratelimit_pages(tid, w);
            let nr_dirtied = self.mm.task(tid).dirty.nr_dirtied;
            if nr_dirtied >= ratelimit {
                st.bdp_again = nr_dirtied;
            }
        }
        if st.bdp_again > 0 {
            let pages = std::mem::take(&mut st.bdp_again);
            if let Some((pause, again)) = self.balance_dirty_pages(tid, w, pages) {
                if again {
                    st.bdp_again = pages;
                }
                self.mm.task(tid).write = Some(st);
                self.dirty_pause(tid, pause);
                return false;
            }
        }
        if st.left == 0 {
            self.mm.task(tid).write = None;
            self.kt.k.sched.tasks[tid].in_sys = false;
            self.kt.k.sched.tasks[tid].pc += 1;
            return true;
        }
        // The step: with 4 KiB folios, up to the pages left before the
        // next look; with large folios (XFS 5.18+, ext4 6.16+), one folio
        // of the write's size (__filemap_get_folio's order from the length,
        // up to PMD order), dirtied whole before balance_dirty_pages is
        // looked at again, as the kernel calls it once per folio.
        // Deviation: the file offset is taken as aligned to the folio (the
        // kernel also caps the order by the index's alignment).
        let left = st.left.div_ceil(PAGE_SIZE);
        let pages = if large_folios(self.kt.block.disks[st.disk].cfg.filesystem, self.kt.k.cfg.version) {
            1u64 << crate::mm::page_writeback::ilog2(left.min(MAX_FOLIO_PAGES))
        } else {
            let ratelimit = self.dirty_ratelimit_pages(tid, w);
            let nr_dirtied = self.mm.task(tid).dirty.nr_dirtied;
            left.min(ratelimit.saturating_sub(nr_dirtied).max(1)).min(WRITE_STEP)
        };
        self.kt.k.sched.tasks[tid].in_sys = true;
        match self.alloc_pages(tid, pages) {
            Alloc::Got(node) => {
                let locks = self.lru_cache_add(tid, node, pages, Lru::InactiveFile);
                // write_begin (the page into the page cache),
                // copy_from_user of the data, write_end.
                let write_ns = self.kt.k.cfg.costs.write_page_ns;
                let bw = self.kt.k.membw.enabled();
                let t = &mut self.kt.k.sched.tasks[tid];
                t.work_left = (pages * write_ns + locks).max(1);
                t.work_is_stream(2 * pages * PAGE_SIZE, t.work_left, bw);
                st.left -= st.left.min(pages * PAGE_SIZE);
                st.copying = pages;
                st.node = node;
            }
            Alloc::Reclaiming | Alloc::Blocked => {}
        }
        self.mm.task(tid).write = Some(st);
        false
    }

    /// balance_dirty_pages()'s io_schedule_timeout(pause): the writer
    /// sleeps `pause` jiffies (to the jiffy the timer is due), in iowait.
    fn dirty_pause(&mut self, tid: TaskId, pause: u64) {
        let tick = self.kt.k.cfg.tick_ns;
        let due = (self.jiffies() + pause) * tick;
        let ns = due.saturating_sub(self.kt.k.now).max(1);
        if self.kt.k.now >= self.mm.window_start {
            let g = self.kt.k.sched.tasks[tid].group;
            self.throttle_stats(g).pauses.push(ns);
        }
        self.kt.k.sched.tasks[tid].in_iowait = true;
        self.mm_sleep(tid, ns);
    }
}
