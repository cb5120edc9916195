//! The page allocator as reclaim sees it (mm/page_alloc.c __alloc_pages
//! and its slow path; mm/vmscan.c wakeup_kswapd, throttle_direct_reclaim)
//! [docs/LINUX-FACTS.md §7.2, §7.4].
//!
//! Deviation: an allocation is of a whole readahead window's pages at once
//! (the kernel allocates them one by one in __do_page_cache_readahead);
//! the watermark test is made for all of them. Readahead's __GFP_NORETRY
//! (give up rather than retry after reclaim) is not modelled: the window
//! is always allocated.

use crate::engine::rng::Dist;
use crate::kernel::DrainAllPages;
use crate::kthread::floor::LendsKthreads;
use crate::kthread::vmstat::MM_PERCPU_WQ;
use crate::kthread::WorkDone;
use crate::mm::floor::MmFloor;
use crate::mm::KswapdState;
use crate::mm::{Lru, MAX_RECLAIM_RETRIES};
use crate::program::{Op, Program};
use crate::sched::task::{TaskId, TaskState};
use crate::trace::MmVmscan;

/// What an allocation attempt did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alloc {
    /// Got the pages on this node.
    Got(usize),
    /// The task spends CPU time in direct reclaim (a burst is set).
    Reclaiming,
    /// The task sleeps (throttled).
    Blocked,
}

impl MmFloor {
    /// The node of `tid`'s CPU.
    pub(crate) fn task_node(&self, tid: TaskId) -> usize {
        self.kt.k.machine.cpus[self.kt.k.sched.tasks[tid].cpu].node
    }

    /// get_page_from_freelist() for `tid`: the first node of the zonelist
    /// whose free pages (NR_FREE_PAGES: the buddy lists) are above the mark
    /// when the CPU's per-CPU list takes its last batch from them; the
    /// pages come off that list (pcp.rs). The test comes before the batch
    /// is taken (rmqueue_bulk), so a refill can leave the node up to a
    /// batch below the mark — how its free pages fall below min.
    ///
    /// Deviation: the pages a window takes from the list after its last
    /// refill are not tested one by one.
    fn get_page_from_freelist(&mut self, tid: TaskId, home: usize, n: u64, low: bool) -> Option<usize> {
        let cpu = self.kt.k.sched.tasks[tid].cpu;
        for i in 0..self.mm.zonelist[home].len() {
            let node = self.mm.zonelist[home][i];
            let refill = self.pcp_refill(node, cpu, n);
            let pg = &self.mm.nodes[node];
            let mark = if low { pg.wmark.low } else { pg.wmark.min };
            let before_last = refill.saturating_sub(pg.pcp_batch);
            if pg.free > before_last + mark && pg.free >= refill {
                self.pcp_alloc(node, cpu, n, refill);
                self.mm.last_refill = refill;
                self.mm.ev.pgalloc_normal += n;
                return Some(node);
            }
        }
        None
    }

    /// The locks' part of `pages` just allocated on `node` by `tid` reaching
    /// the LRU list `list`: the per-CPU list's refill from the buddy lists
    /// under zone->lock (rmqueue_bulk, the allocation's `refill`), then
    /// lru_cache_add's pagevec drains under the node's LRU lock. Returns
    /// the CPU time (spin and hold).
    pub(crate) fn lru_cache_add(&mut self, tid: TaskId, node: usize, pages: u64, list: Lru) -> u64 {
        let (lru_page, zone_alloc) = (self.kt.k.cfg.costs.lru_page_ns, self.kt.k.cfg.costs.zone_alloc_page_ns);
        let from = self.task_node(tid);
        let refill = std::mem::take(&mut self.mm.last_refill);
        let (zspin, zhold) = if refill > 0 { self.zone_lock_pages(node, from, refill, zone_alloc) } else { (0, 0) };
        let handoff = self.lru_handoff();
        let lru_page = self.numa_cost(lru_page, from, node);
        let drains = pages.div_ceil(self.mm.pagevec);
        let pg = &mut self.mm.nodes[node];
        let (spin, hold) = pg.lru_lock.acquire(self.kt.k.now, drains, pages * lru_page / drains.max(1), handoff);
        pg.lru[list as usize] += pages;
        if self.mm.ws.on && list == Lru::InactiveFile && !std::mem::take(&mut self.mm.ws.inserting) {
            self.ws_push_untracked(node, pages);
        }
        spin + hold + zspin + zhold
    }

    /// __alloc_pages() of `n` order-0 pages for `tid`: the fast path at the
    /// low watermark; else wake every kswapd of the zonelist and retry at
    /// min; else throttle or reclaim directly, and retry when done.
    pub(crate) fn alloc_pages(&mut self, tid: TaskId, n: u64) -> Alloc {
        let home = self.task_node(tid);
        let started = self.mm.task(tid).alloc.map(|a| a.1);
        if started.is_none() {
            if let Some(node) = self.get_page_from_freelist(tid, home, n, true) {
                let g = self.kt.k.sched.tasks[tid].group;
                self.alloc_latency(g).fast += 1;
                return Alloc::Got(node);
            }
            self.mm.task(tid).alloc = Some((n, self.kt.k.now));
        }
        // A direct reclaim in progress goes on (or has just finished).
        let mut reclaimed = 0;
        if self.mm.task(tid).reclaim.is_some() {
            // Done (None): retry the freelist below.
            if let Some(a) = self.direct_reclaim_step(tid) {
                return a;
            }
            reclaimed = self.mm.task(tid).reclaimed;
        } else if self.mm.task(tid).draining {
            // Back from drain_all_pages(): mutex_unlock, then the retry.
            // Deviation: the mm_percpu_wq works' lists are emptied now, when
            // the last of them is done, not each as its work runs.
            self.mm.task(tid).draining = false;
            match self.kt.k.cfg.mech.drain_all_pages {
                DrainAllPages::Ipi => {}
                DrainAllPages::Workqueue => {
                    self.pcp_drain_all();
                    self.mm.pcpu_drain_busy = false;
                }
                DrainAllPages::Remote => self.mm.pcpu_drain_busy = false,
            }
        } else {
            // __alloc_pages_slowpath: wake_all_kswapds, then ALLOC_WMARK_MIN.
            for i in 0..self.mm.zonelist[home].len() {
                let node = self.mm.zonelist[home][i];
                self.wakeup_kswapd(node, Some(tid));
            }
        }
        if let Some(node) = self.get_page_from_freelist(tid, home, n, false) {
            return self.slow_path_got(tid, node);
        }
        // __alloc_pages_direct_reclaim(): a reclaim that made progress but
        // whose allocation still fails drains the per-CPU lists once and
        // retries. The kernel allocates one page at a time: a window the
        // node cannot give whole, but whose next page it can, is the next
        // page's slow path, not a failed retry.
        let one_page = self.mm.zonelist[home].iter().any(|&m| self.mm.nodes[m].free > self.mm.nodes[m].wmark.min);
        if reclaimed > 0 && !one_page && !self.mm.task(tid).drained {
            self.mm.task(tid).drained = true;
            if let Some(a) = self.drain_all_pages(tid) {
                return a;
            }
            if let Some(node) = self.get_page_from_freelist(tid, home, n, false) {
                return self.slow_path_got(tid, node);
            }
        }
        // __alloc_pages_direct_reclaim -> try_to_free_pages.
        if self.throttle_direct_reclaim(tid, home) {
            return Alloc::Blocked;
        }
        self.mm.ev.allocstall_normal += 1;
        let g = self.kt.k.sched.tasks[tid].group;
        self.alloc_latency(g).direct_reclaims += 1;
        self.start_direct_reclaim(tid);
        match self.direct_reclaim_step(tid) {
            Some(a) => a,
            None => {
                // Nothing to reclaim anywhere: the kernel would OOM-kill.
                self.fatal = Some(crate::error::SimError::NotModelled {
                    at: crate::error::Location { file: self.source.to_string(), key: "memory".into() },
                    what: format!(
                        "{} cannot allocate {n} pages: nothing is left to reclaim (the OOM killer is not modelled)",
                        self.kt.k.sched.tasks[tid].comm
                    ),
                });
                Alloc::Blocked
            }
        }
    }

    /// drain_all_pages(NULL): every CPU's per-CPU page lists back into
    /// the buddy lists, as the version does it (DrainAllPages). Returns
    /// what the task does meanwhile, or None when it goes straight on (no
    /// list has pages, or the mutex was held: 4.11+ global drains do not
    /// wait for each other).
    fn drain_all_pages(&mut self, tid: TaskId) -> Option<Alloc> {
        let mech = self.kt.k.cfg.mech.drain_all_pages;
        let g = self.kt.k.sched.tasks[tid].group;
        if mech != DrainAllPages::Ipi && self.mm.pcpu_drain_busy {
            self.alloc_latency(g).drains_skipped += 1;
            return None;
        }
        // cpus_with_pcps.
        let ncpus = self.kt.k.sched.rqs.len();
        let with: Vec<usize> = (0..ncpus).filter(|&c| self.mm.nodes.iter().any(|pg| pg.pcp[c] > 0)).collect();
        if with.is_empty() {
            return None;
        }
        self.alloc_latency(g).drains += 1;
        let zone_free = self.kt.k.cfg.costs.zone_free_page_ns;
        self.mm.task(tid).draining = true;
        let ns = match mech {
            // on_each_cpu_mask(..., wait): the handlers run at once in
            // interrupt context; the caller waits for the longest list.
            // Deviation: the handlers' time on the other CPUs is not
            // charged to them.
            DrainAllPages::Ipi => {
                let longest = with.iter().map(|&c| self.mm.nodes.iter().map(|pg| pg.pcp[c]).sum::<u64>()).max();
                self.pcp_drain_all();
                self.kt.k.cfg.costs.wakeup_ipi_ns + longest.unwrap_or(0) * zone_free
            }
            DrainAllPages::Workqueue => {
                self.mm.pcpu_drain_busy = true;
                let batch = self.mm.nodes[self.task_node(tid)].pcp_batch;
                let program = match self.mm.drain_program {
                    Some(p) => p,
                    None => {
                        let run = Op::Run(Dist::Const((batch * zone_free).max(1)));
                        self.kt.progs.work_programs.push(Program { ops: vec![run] });
                        let p = self.kt.progs.work_programs.len() - 1;
                        self.mm.drain_program = Some(p);
                        p
                    }
                };
                // queue_work_on() on the mm_percpu_wq of every CPU with
                // pages on its lists, then flush_work() of each; the lists
                // are emptied when the drainer is woken (alloc_pages).
                let barrier = self.kt.new_barrier(with.len() as u32, tid);
                let done = WorkDone { barrier: Some(barrier), ..Default::default() };
                for cpu in with {
                    self.kt.queue_work(MM_PERCPU_WQ, program, cpu, done, true);
                }
                self.block(tid);
                return Some(Alloc::Blocked);
            }
            // Each CPU's lists in turn under zone->lock.
            DrainAllPages::Remote => {
                self.mm.pcpu_drain_busy = true;
                let from = self.task_node(tid);
                let mut ns = 0;
                for node in 0..self.mm.nodes.len() {
                    let pages: u64 = self.mm.nodes[node].pcp.iter().sum();
                    if pages > 0 {
                        let (spin, hold) = self.zone_lock_pages(node, from, pages, zone_free);
                        ns += spin + hold;
                    }
                }
                self.pcp_drain_all();
                ns
            }
        };
        let t = &mut self.kt.k.sched.tasks[tid];
        t.work_left = ns.max(1);
        t.work_is_cpu();
        Some(Alloc::Reclaiming)
    }

    /// The slow path got its pages on `node`: its latency is recorded.
    fn slow_path_got(&mut self, tid: TaskId, node: usize) -> Alloc {
        let (_, t0) = self.mm.task(tid).alloc.take().expect("slow path started");
        let g = self.kt.k.sched.tasks[tid].group;
        let lat = self.kt.k.now - t0;
        self.alloc_latency(g).slow.push(lat);
        Alloc::Got(node)
    }

    pub(crate) fn alloc_latency(&mut self, group: usize) -> &mut crate::mm::AllocLatency {
        if self.mm.alloc_lat.len() <= group {
            self.mm.alloc_lat.resize_with(group + 1, Default::default);
        }
        &mut self.mm.alloc_lat[group]
    }

    /// pgdat_balanced(): the node's zone is above its high watermark.
    pub(crate) fn pgdat_balanced(&self, node: usize) -> bool {
        let pg = &self.mm.nodes[node];
        pg.free >= pg.wmark.high
    }

    /// wakeup_kswapd(): wake the node's kswapd threads if any is waiting,
    /// the node is not hopeless and not balanced (P3: they share
    /// pgdat->kswapd_wait, and wake_up_interruptible wakes them all).
    pub(crate) fn wakeup_kswapd(&mut self, node: usize, by: Option<TaskId>) {
        let pg = &self.mm.nodes[node];
        // waitqueue_active(&pgdat->kswapd_wait): a thread that may run waits.
        let waiting = pg.kswapd.iter().any(|&k| {
            let ks = &self.mm.kswapds[k];
            matches!(ks.state, KswapdState::ShortSleep | KswapdState::Sleeping | KswapdState::Parked)
                && ks.hid < self.mm.kswapd_active[node]
                && self.kt.k.sched.tasks[ks.task].state == TaskState::Blocked
        });
        if !waiting || pg.kswapd_failures >= MAX_RECLAIM_RETRIES || self.pgdat_balanced(node) {
            return;
        }
        if let Some(tid) = by {
            let t = &self.kt.k.sched.tasks[tid];
            self.kt.k.trace.mm_vmscan(self.kt.k.now, t.cpu, t, MmVmscan::WakeupKswapd, node as u64);
        }
        for i in 0..self.mm.nodes[node].kswapd.len() {
            let k = self.mm.nodes[node].kswapd[i];
            self.kswapd_wake(k);
        }
    }

    /// allow_direct_reclaim(): free pages above half the min watermark of
    /// the node's zones that have reclaimable pages (or the node is
    /// hopeless).
    pub(crate) fn allow_direct_reclaim(&self, node: usize) -> bool {
        let pg = &self.mm.nodes[node];
        if pg.kswapd_failures >= MAX_RECLAIM_RETRIES {
            return true;
        }
        let anon =
            if self.mm.zswap { pg.lru[Lru::InactiveAnon as usize] + pg.lru[Lru::ActiveAnon as usize] } else { 0 };
        let reclaimable = pg.lru[Lru::InactiveFile as usize] + pg.lru[Lru::ActiveFile as usize] + anon > 0;
        let reserve = if reclaimable { pg.wmark.min } else { 0 };
        reserve == 0 || pg.free > reserve / 2
    }

    /// throttle_direct_reclaim() (3.6+): a user task allocating while its
    /// node's free pages are at or below half its reserve sleeps on
    /// pfmemalloc_wait until kswapd brings them back (killable, without a
    /// timeout, for a __GFP_FS allocation as the page cache's). Returns
    /// true when the task sleeps.
    fn throttle_direct_reclaim(&mut self, tid: TaskId, node: usize) -> bool {
        if self.kt.k.sched.tasks[tid].kthread
            || !self.kt.k.cfg.mech.throttle_direct_reclaim
            || self.allow_direct_reclaim(node)
        {
            return false;
        }
        self.mm.ev.pgscan_direct_throttle += 1;
        self.wakeup_kswapd(node, Some(tid));
        self.mm.nodes[node].pfmemalloc_wait.push(tid);
        self.mm.task(tid).throttled = true;
        self.block(tid);
        true
    }

    /// wake_up_all(&pgdat->pfmemalloc_wait) once direct reclaim is allowed.
    pub(crate) fn wake_pfmemalloc_waiters(&mut self, node: usize) {
        if self.mm.nodes[node].pfmemalloc_wait.is_empty() || !self.allow_direct_reclaim(node) {
            return;
        }
        let waiters = std::mem::take(&mut self.mm.nodes[node].pfmemalloc_wait);
        for tid in waiters {
            self.mm.task(tid).throttled = false;
            let cpu = self.kt.k.sched.tasks[tid].cpu;
            self.kt.k.try_to_wake_up(tid, cpu, false);
        }
    }
}
