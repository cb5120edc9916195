//! Page reclaim (mm/vmscan.c): shrink_node over the inactive file list in
//! SWAP_CLUSTER_MAX batches under the node's LRU lock, and direct reclaim
//! (do_try_to_free_pages) in the allocating task [docs/LINUX-FACTS.md
//! §7.4-7.6]. kswapd's loop is kswapd.rs; both use `shrink_chunk`.
//!
//! A batch: isolate_lru_pages() takes up to 32 pages off the inactive list
//! under the lock; shrink_page_list() frees them without it (a clean,
//! unmapped page-cache page: trylock, __remove_mapping with the mapping's
//! own lock, a shadow entry left in its slot when workingset detection is
//! on, the free); the lock is taken again to put back what was not freed
//! and to fold the counters. Streaming-read pages were referenced once
//! (PG_referenced, no mapped PTE): page_check_references() says
//! PAGEREF_RECLAIM_CLEAN, so every scanned page is reclaimed — as P3 says
//! of its test ("the page steal rate ... is almost identical to the scan
//! rate").
//!
//! Deviation: reclaim advances in chunks of RECLAIM_CHUNK pages (16
//! batches) per step; the pages of a chunk are freed when its CPU time is
//! spent. The active file list holds only pages of files read again
//! (workingset.rs), deactivated a chunk at a time beside the inactive
//! list's while inactive_list_is_low(); the anonymous active list is never
//! aged.

use crate::engine::event::Ev;
use crate::engine::time::Instant;
use crate::kernel::IsolatedThrottle;
use crate::kthread::floor::LendsKthreads;
use crate::mm::floor::MmFloor;
use crate::mm::page_alloc::Alloc;
use crate::mm::spinlock::Handoff;
use crate::mm::{DirectReclaim, Lru, ScanControl, DEF_PRIORITY, RECLAIM_CHUNK, SWAP_CLUSTER_MAX};
use crate::sched::task::TaskId;
use crate::trace::MmVmscan;

impl MmFloor {
    /// The LRU lock's hand-off costs.
    pub(crate) fn lru_handoff(&self) -> Handoff {
        let c = &self.kt.k.cfg.costs;
        Handoff { base_ns: c.lru_lock_handoff_ns, per_waiter_ns: c.lru_lock_handoff_waiter_ns }
    }

    /// The list reclaim scans on `node`: the inactive file list while it
    /// has pages, then, with zswap, the inactive anon list.
    ///
    /// Deviation: get_scan_count() balances anon against file by
    /// vm.swappiness and the lists' recent rotations; here file pages go
    /// first and anonymous pages only when no file page is left.
    pub(crate) fn reclaim_lru(&self, node: usize) -> Lru {
        let pg = &self.mm.nodes[node];
        if pg.reclaimable(Lru::InactiveFile) == 0 && self.mm.zswap && pg.lru[Lru::InactiveAnon as usize] > 0 {
            Lru::InactiveAnon
        } else {
            Lru::InactiveFile
        }
    }

    /// get_scan_count() for a node's list at `priority`: size >> priority
    /// (at least SWAP_CLUSTER_MAX of a non-empty list).
    pub(crate) fn scan_target(&self, node: usize, priority: u32) -> u64 {
        let size = self.mm.nodes[node].lru[self.reclaim_lru(node) as usize];
        let scan = size >> priority;
        if scan == 0 {
            size.min(SWAP_CLUSTER_MAX)
        } else {
            scan
        }
    }

    /// Memory work `ns` done from a CPU of node `from` on pages of node
    /// `to`: scaled by the SLIT distance over LOCAL_DISTANCE.
    ///
    /// Deviation: the kernel has no such term; it stands for the remote
    /// cache misses on struct pages and list heads, taking the ACPI SLIT's
    /// relative latency at its word.
    pub(crate) fn numa_cost(&self, ns: u64, from: usize, to: usize) -> u64 {
        ns * self.kt.k.machine.node_distance[from][to] as u64 / crate::machine::LOCAL_DISTANCE as u64
    }

    /// `n` pages through `node`'s zone->lock from a CPU of node `from`, a
    /// per-CPU list's batch at a time: (spin, hold).
    pub(crate) fn zone_lock_pages(&mut self, node: usize, from: usize, n: u64, per_page: u64) -> (u64, u64) {
        let handoff = self.lru_handoff();
        let per_page = self.numa_cost(per_page, from, node);
        let pg = &mut self.mm.nodes[node];
        let batches = n.div_ceil(pg.pcp_batch.max(1));
        pg.zone_lock.acquire(self.kt.k.now, batches, n * per_page / batches.max(1), handoff)
    }

    /// Isolate and reclaim up to RECLAIM_CHUNK of `want` pages of `node`'s
    /// inactive file list from CPU `cpu` at `now`. Returns (pages, CPU ns):
    /// the spin and hold of the LRU lock for two holds per batch, the work
    /// of shrink_page_list, and the free of the pages (free_unref_page_list:
    /// onto the CPU's per-CPU list, which overflows a batch at a time under
    /// zone->lock). The pages are freed by `reclaim_chunk_done`.
    pub(crate) fn shrink_chunk(&mut self, node: usize, want: u64, kswapd: bool, cpu: usize) -> (u64, u64) {
        let handoff = self.lru_handoff();
        let from = self.kt.k.machine.cpus[cpu].node;
        let c = &self.kt.k.cfg.costs;
        let (lru_page, reclaim_page, shadow) = (c.lru_page_ns, c.reclaim_page_ns, c.shadow_entry_ns);
        let zone_free = c.zone_free_page_ns;
        let (lru_page, reclaim_page) = (self.numa_cost(lru_page, from, node), self.numa_cost(reclaim_page, from, node));
        // shrink_active_list() first while the inactive file list is low.
        let deactivate_ns = self.shrink_active_file(node, want, from);
        let c = &self.kt.k.cfg.costs;
        let list = self.reclaim_lru(node);
        let anon = list == Lru::InactiveAnon;
        let zswap_compress = c.zswap_compress_ns;
        let workingset = self.mm.cfg.workingset && !anon;
        let n = want.min(RECLAIM_CHUNK).min(self.mm.nodes[node].reclaimable(list));
        // The free's spill from this CPU's list to the buddy lists, as the
        // list stands now (the pages are freed when the chunk is done).
        let spill = self.pcp_spill(node, cpu, n);
        let (zspin, zhold) = if spill > 0 { self.zone_lock_pages(node, from, spill, zone_free) } else { (0, 0) };
        if n == 0 {
            return (0, deactivate_ns);
        }
        if self.mm.ws.on && !anon {
            self.ws_evict(node, n);
        }
        let pg = &mut self.mm.nodes[node];
        pg.lru[list as usize] -= n;
        if anon {
            pg.nr_isolated_anon += n;
        } else {
            pg.nr_isolated_file += n;
        }
        let batches = n.div_ceil(SWAP_CLUSTER_MAX);
        // Under the lock: isolation of each page; the putback hold moves
        // the counters (two pages' worth of list work).
        let work = (n * lru_page + batches * 2 * lru_page) / (2 * batches);
        let (spin, hold) = pg.lru_lock.acquire(self.kt.k.now, 2 * batches, work, handoff);
        let mut outside = n * reclaim_page;
        if anon {
            // add_to_swap, then swap_writepage -> frontswap_store: zswap
            // Deviation: the compressed copy is not charged to memory
            // (zswap's pool and its max_pool_percent are not modelled).
            // compresses the page on this CPU.
            outside += n * zswap_compress;
            self.mm.ev.zswpout += n;
        }
        if workingset {
            // workingset_eviction(): pack the shadow entry and keep it in
            // the mapping's tree.
            outside += n * shadow;
            pg.nonresident += n;
            self.mm.ev.workingset_eviction += n;
        }
        let ev = &mut self.mm.ev;
        if kswapd {
            ev.pgscan_kswapd += n;
            ev.pgsteal_kswapd += n;
        } else {
            ev.pgscan_direct += n;
            ev.pgsteal_direct += n;
        }
        (n, spin + hold + outside + zspin + zhold + deactivate_ns)
    }

    /// shrink_active_list() of `node`'s active file list when
    /// inactive_list_is_low(): as many of its pages as get_scan_count()
    /// pairs with a chunk of the inactive list (the lists' sizes' ratio; at
    /// least a batch, at most a chunk) go to the inactive list, under two
    /// holds of the LRU lock per batch. Returns the CPU time.
    fn shrink_active_file(&mut self, node: usize, want: u64, from: usize) -> u64 {
        if !self.mm.ws.on || !self.inactive_file_is_low(node) {
            return 0;
        }
        let pg = &self.mm.nodes[node];
        let (inactive, active) = (pg.lru[Lru::InactiveFile as usize], pg.lru[Lru::ActiveFile as usize]);
        let chunk = want.clamp(1, RECLAIM_CHUNK);
        let nr = (chunk * active / inactive.max(1)).clamp(SWAP_CLUSTER_MAX, RECLAIM_CHUNK).min(active);
        let k = self.ws_deactivate(node, nr);
        if k == 0 {
            return 0;
        }
        let handoff = self.lru_handoff();
        let lru_page = self.numa_cost(self.kt.k.cfg.costs.lru_page_ns, from, node);
        let batches = k.div_ceil(SWAP_CLUSTER_MAX);
        let pg = &mut self.mm.nodes[node];
        let (spin, hold) = pg.lru_lock.acquire(self.kt.k.now, 2 * batches, k * lru_page / batches, handoff);
        spin + hold
    }

    /// The chunk's pages are freed on `cpu` (free_unref_page_list: onto
    /// its per-CPU list, which spills back a batch at a time).
    pub(crate) fn reclaim_chunk_done(&mut self, node: usize, n: u64, anon: bool, cpu: usize) {
        let pg = &mut self.mm.nodes[node];
        if anon {
            pg.nr_isolated_anon -= n;
        } else {
            pg.nr_isolated_file -= n;
        }
        self.pcp_free(node, cpu, n);
        self.mm.ev.pgfree += n;
    }

    /// try_to_free_pages() begins: priority DEF_PRIORITY, the zonelist of
    /// the task's node, nr_to_reclaim SWAP_CLUSTER_MAX.
    pub(crate) fn start_direct_reclaim(&mut self, tid: TaskId) {
        let sc = ScanControl { priority: DEF_PRIORITY, nr_to_reclaim: SWAP_CLUSTER_MAX, ..Default::default() };
        let t = self.mm.task(tid);
        t.reclaim = Some(DirectReclaim { sc, ..Default::default() });
        t.drained = false;
        // __perform_reclaim(): the reclaim is a memory stall (sched/psi.rs).
        self.kt.k.psi_memstall_enter(tid);
        let t = &self.kt.k.sched.tasks[tid];
        self.kt.k.trace.mm_vmscan(self.kt.k.now, t.cpu, t, MmVmscan::DirectReclaimBegin, 0);
        self.kt.k.sched.tasks[tid].in_sys = true;
    }

    /// One step of do_try_to_free_pages(): free the chunk just reclaimed,
    /// then start the next one (Some(Reclaiming)), sleep in a throttle
    /// (Some(Blocked)), or finish (None, the reclaim state cleared).
    ///
    /// shrink_zones() shrinks each node of the zonelist at a priority; at
    /// DEF_PRIORITY a direct reclaimer scans the whole target
    /// (scan_adjusted, "multiple streaming readers/writers ... it is best
    /// to do a batch of work at once"), below it shrink_node stops once it
    /// reclaimed nr_to_reclaim; the priority drops until 32 pages were
    /// reclaimed in all.
    pub(crate) fn direct_reclaim_step(&mut self, tid: TaskId) -> Option<Alloc> {
        let home = self.task_node(tid);
        let mut dr = self.mm.task(tid).reclaim.take().expect("a direct reclaim");
        if dr.sc.pending > 0 {
            let cpu = self.kt.k.sched.tasks[tid].cpu;
            self.reclaim_chunk_done(dr.sc.pending_node, dr.sc.pending, dr.sc.pending_anon, cpu);
            dr.sc.nr_reclaimed += dr.sc.pending;
            dr.node_reclaimed += dr.sc.pending;
            dr.sc.pending = 0;
        }
        loop {
            let adjusted = dr.sc.priority == DEF_PRIORITY;
            if dr.sc.scan_left > 0 && !adjusted && dr.node_reclaimed >= dr.sc.nr_to_reclaim {
                dr.sc.scan_left = 0;
            }
            if dr.sc.scan_left == 0 {
                let zl = &self.mm.zonelist[home];
                if dr.zl_pos >= zl.len() {
                    // shrink_zones() done at this priority.
                    if dr.sc.nr_reclaimed >= dr.sc.nr_to_reclaim || dr.sc.priority == 0 {
                        let t = &self.kt.k.sched.tasks[tid];
                        self.kt.k.trace.mm_vmscan(
                            self.kt.k.now,
                            t.cpu,
                            t,
                            MmVmscan::DirectReclaimEnd,
                            dr.sc.nr_reclaimed,
                        );
                        self.kt.k.psi_memstall_leave(tid);
                        self.ws_snapshot_refaults();
                        self.mm.task(tid).reclaimed = dr.sc.nr_reclaimed;
                        return None;
                    }
                    dr.sc.priority -= 1;
                    dr.zl_pos = 0;
                    continue;
                }
                let node = zl[dr.zl_pos];
                dr.zl_pos += 1;
                dr.sc.pending_node = node;
                dr.node_reclaimed = 0;
                dr.sc.scan_left = self.scan_target(node, dr.sc.priority);
                continue;
            }
            let node = dr.sc.pending_node;
            // shrink_inactive_list()'s entry: wait while too many pages
            // are isolated; a batch that waited once and still finds too
            // many is given up (4.14+: it returns 0, the batch's scan
            // count already taken by shrink_node_memcg).
            if self.too_many_isolated(node) {
                let once = self.kt.k.cfg.mech.isolated_throttle != IsolatedThrottle::CongestionWait;
                if dr.stalled && once {
                    dr.stalled = false;
                    dr.sc.scan_left -= dr.sc.scan_left.min(SWAP_CLUSTER_MAX);
                    continue;
                }
                dr.stalled = true;
                self.mm.task(tid).reclaim = Some(dr);
                self.isolated_throttle(tid, node);
                return Some(Alloc::Blocked);
            }
            dr.stalled = false;
            let cpu = self.kt.k.sched.tasks[tid].cpu;
            dr.sc.pending_anon = self.reclaim_lru(node) == Lru::InactiveAnon;
            let (n, ns) = self.shrink_chunk(node, dr.sc.scan_left, false, cpu);
            if n == 0 {
                dr.sc.scan_left = 0;
                continue;
            }
            dr.sc.scan_left -= n;
            dr.sc.nr_scanned += n;
            dr.sc.pending = n;
            self.mm.task(tid).reclaim = Some(dr);
            self.kt.k.sched.tasks[tid].work_left = ns.max(1);
            self.kt.k.sched.tasks[tid].work_is_cpu();
            return Some(Alloc::Reclaiming);
        }
    }

    /// too_many_isolated(): a direct reclaimer (kswapd never waits) finds
    /// more pages isolated from the list it scans than it may: the list's
    /// length, or from 3.8 an eighth of it for a __GFP_IO|__GFP_FS
    /// allocation — every allocation modelled (the page cache's and an
    /// anonymous fault's masks have both). From 5.16 a check that passes
    /// wakes the node's ISOLATED waiters.
    fn too_many_isolated(&mut self, node: usize) -> bool {
        let pg = &self.mm.nodes[node];
        let (isolated, inactive) = match self.reclaim_lru(node) {
            Lru::InactiveAnon => (pg.nr_isolated_anon, pg.lru[Lru::InactiveAnon as usize]),
            _ => (pg.nr_isolated_file, pg.lru[Lru::InactiveFile as usize]),
        };
        let mech = &self.kt.k.cfg.mech;
        let too_many = isolated > isolated_limit(inactive, mech.too_many_isolated_iofs);
        if !too_many && mech.isolated_throttle == IsolatedThrottle::ReclaimThrottle {
            self.wake_throttle_isolated(node);
        }
        too_many
    }

    /// The wait of a direct reclaimer with too many pages isolated on
    /// `node`: congestion_wait(BLK_RW_ASYNC, HZ/10), in iowait (nobody
    /// clears a blk-mq queue's congestion, so it sleeps the whole
    /// timeout); msleep(100), which is msecs_to_jiffies(100) + 1 jiffies
    /// (4.14); reclaim_throttle(VMSCAN_THROTTLE_ISOLATED), HZ/50 on the
    /// node's waitqueue (5.16). Each is a timer that fires on a tick.
    fn isolated_throttle(&mut self, tid: TaskId, node: usize) {
        let g = self.kt.k.sched.tasks[tid].group;
        self.alloc_latency(g).isolated_stalls += 1;
        let kind = self.kt.k.cfg.mech.isolated_throttle;
        let (jiffies, iowait) = isolated_timeout(kind, self.kt.k.cfg.hz as u64);
        self.kt.k.sched.tasks[tid].in_iowait = iowait;
        if kind == IsolatedThrottle::ReclaimThrottle {
            self.mm.nodes[node].reclaim_wait_isolated.push(tid);
            self.mm.task(tid).isolated_wait = Some(node);
        }
        let tick = self.kt.k.cfg.tick_ns;
        let due = (self.kt.k.now / tick + jiffies.max(1)) * tick;
        self.mm_sleep(tid, due - self.kt.k.now);
    }

    /// wake_throttle_isolated(): wake every task on the node's ISOLATED
    /// waitqueue (their timers are then ignored).
    fn wake_throttle_isolated(&mut self, node: usize) {
        if self.mm.nodes[node].reclaim_wait_isolated.is_empty() {
            return;
        }
        for tid in std::mem::take(&mut self.mm.nodes[node].reclaim_wait_isolated) {
            let t = self.mm.task(tid);
            t.isolated_wait = None;
            t.sleep_seq = t.sleep_seq.wrapping_add(1);
            let cpu = self.kt.k.sched.tasks[tid].cpu;
            self.kt.k.try_to_wake_up(tid, cpu, false);
        }
    }

    /// Block `tid` for `ns` (schedule_timeout): an mm timer, whose wakeup
    /// is ignored if the task was woken for another reason first.
    pub(crate) fn mm_sleep(&mut self, tid: TaskId, ns: u64) {
        let seq = {
            let t = self.mm.task(tid);
            t.sleep_seq = t.sleep_seq.wrapping_add(1);
            t.sleep_seq
        };
        self.block(tid);
        self.kt.k.q.schedule(Instant(self.kt.k.now + ns), Ev::MmTimer(tid as u32, seq));
    }

    /// An mm timer fires.
    pub(crate) fn mm_timer(&mut self, tid: TaskId, seq: u32) {
        if self.mm.task(tid).sleep_seq != seq {
            return;
        }
        self.mm.task(tid).sleep_seq = seq.wrapping_add(1);
        if let Some(node) = self.mm.task(tid).isolated_wait.take() {
            self.mm.nodes[node].reclaim_wait_isolated.retain(|&t| t != tid);
        }
        if let Some(k) = self.mm.kswapds.iter().position(|k| k.task == tid) {
            self.mm.kswapds[k].timed_out = true;
        }
        let cpu = self.kt.k.sched.tasks[tid].cpu;
        self.kt.k.try_to_wake_up(tid, cpu, false);
    }
}

/// The most pages a direct reclaimer may find isolated from a list of
/// `inactive` pages before it waits: an eighth for a __GFP_IO|__GFP_FS
/// allocation from 3.8 (`iofs`), else the whole list.
pub fn isolated_limit(inactive: u64, iofs: bool) -> u64 {
    if iofs {
        inactive >> 3
    } else {
        inactive
    }
}

/// The wait of a reclaimer with too many pages isolated, in jiffies at
/// `hz`, and whether it is an IO wait.
pub fn isolated_timeout(kind: IsolatedThrottle, hz: u64) -> (u64, bool) {
    match kind {
        // congestion_wait(BLK_RW_ASYNC, HZ/10): io_schedule_timeout().
        IsolatedThrottle::CongestionWait => (hz / 10, true),
        // msleep(100): msecs_to_jiffies(100) + 1.
        IsolatedThrottle::Msleep => ((100 * hz).div_ceil(1000) + 1, false),
        IsolatedThrottle::ReclaimThrottle => (hz / 50, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::{KernelVersion, Mechanisms};

    fn mech(v: &str) -> Mechanisms {
        Mechanisms::of(KernelVersion::parse(v).unwrap())
    }

    #[test]
    fn an_iofs_reclaimer_waits_once_an_eighth_of_the_list_is_isolated_from_3_8() {
        assert!(!mech("2.6.35").too_many_isolated_iofs);
        assert!(mech("4.16").too_many_isolated_iofs);
        let m = mech("4.16");
        assert_eq!(isolated_limit(80_000, m.too_many_isolated_iofs), 10_000);
        assert_eq!(isolated_limit(80_000, false), 80_000);
    }

    #[test]
    fn the_wait_is_congestion_wait_then_msleep_then_reclaim_throttle() {
        assert_eq!(mech("2.6.35").isolated_throttle, IsolatedThrottle::CongestionWait);
        assert_eq!(mech("4.16").isolated_throttle, IsolatedThrottle::Msleep);
        assert_eq!(mech("5.7").isolated_throttle, IsolatedThrottle::Msleep);
        assert_eq!(mech("6.1").isolated_throttle, IsolatedThrottle::ReclaimThrottle);
        // HZ=250: 25 jiffies in iowait; msleep(100) is 26; HZ/50 is 5.
        assert_eq!(isolated_timeout(IsolatedThrottle::CongestionWait, 250), (25, true));
        assert_eq!(isolated_timeout(IsolatedThrottle::Msleep, 250), (26, false));
        assert_eq!(isolated_timeout(IsolatedThrottle::Msleep, 1000), (101, false));
        assert_eq!(isolated_timeout(IsolatedThrottle::ReclaimThrottle, 1000), (20, false));
    }

    #[test]
    fn drain_all_pages_moves_from_ipis_to_mm_percpu_wq_to_remote_draining() {
        use crate::kernel::DrainAllPages;
        assert_eq!(mech("2.6.35").drain_all_pages, DrainAllPages::Ipi);
        assert_eq!(mech("4.16").drain_all_pages, DrainAllPages::Workqueue);
        assert_eq!(mech("5.7").drain_all_pages, DrainAllPages::Workqueue);
        assert_eq!(mech("6.1").drain_all_pages, DrainAllPages::Remote);
    }
}
