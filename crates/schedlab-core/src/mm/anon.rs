//! Anonymous memory (mm/memory.c do_anonymous_page): the `anon` op faults
//! in a size of memory the task keeps — a memory hog, as usemem. Each page
//! is allocated (page_alloc.rs: may wake kswapd, reclaim directly or be
//! throttled), cleared and added to the node's LRU through the pagevec.
//! With `[memory] swap = "zswap"` reclaim can take these pages back:
//! vmscan.rs compresses each into zswap's pool on the reclaiming thread.
//!
//! Deviation: faults are taken ANON_CHUNK pages at a time (one allocation
//! of the chunk, as the read path allocates a readahead window); new
//! anonymous pages go to the inactive anon list (4.16 puts them on the
//! active list and shrink_active_list deactivates them: the active/inactive
//! balance is not modelled); the pages are never touched again (no swap-in).

use crate::mm::floor::MmFloor;
use crate::mm::page_alloc::Alloc;
use crate::mm::{Lru, PAGE_SIZE};
use crate::sched::task::TaskId;

/// Pages faulted in per step (2 MiB).
const ANON_CHUNK: u64 = 512;

impl MmFloor {
    /// Run the `anon` op `idx` for `tid`: true when it is done.
    pub(crate) fn mm_anon(&mut self, tid: TaskId, idx: usize) -> bool {
        let left = match self.mm.task(tid).anon_left {
            Some(l) => l,
            None => self.mm.read_ops[idx].bytes,
        };
        if left == 0 {
            self.mm.task(tid).anon_left = None;
            self.kt.k.sched.tasks[tid].in_sys = false;
            return true;
        }
        let bytes = left.min(ANON_CHUNK * PAGE_SIZE);
        let pages = bytes.div_ceil(PAGE_SIZE);
        self.kt.k.sched.tasks[tid].in_sys = true;
        self.mm.task(tid).anon_left = Some(left);
        self.kt.k.sched.tasks[tid].pc -= 1;
        match self.alloc_pages(tid, pages) {
            Alloc::Got(node) => {
                let locks = self.lru_cache_add(tid, node, pages, Lru::InactiveAnon);
                // clear_page: each page written once. Deviation: the whole
                // fault counts as memory-bound streaming (its exception
                // entry, rmap and charge too), as clear_page dominates it.
                let bw = self.kt.k.membw.enabled();
                let t = &mut self.kt.k.sched.tasks[tid];
                t.work_left = (pages * self.kt.k.cfg.costs.anon_fault_ns + locks).max(1);
                t.work_is_stream(pages * PAGE_SIZE, t.work_left, bw);
                self.mm.task(tid).anon_left = Some(left - bytes);
                false
            }
            Alloc::Reclaiming | Alloc::Blocked => false,
        }
    }
}
