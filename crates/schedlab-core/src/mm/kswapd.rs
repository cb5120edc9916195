//! kswapd (mm/vmscan.c kswapd(), kswapd_try_to_sleep(), balance_pgdat())
//! as kernel threads bound to their node's CPUs, competing with every
//! other task [docs/LINUX-FACTS.md §7.3]. With P3's vm.kswapd_threads > 1
//! a node has several ("kswapd0:0", "kswapd0:1", ...) waiting on the same
//! pgdat->kswapd_wait and each running balance_pgdat on the node.
//!
//! balance_pgdat (4.16 .. 6.12, order 0, no boost): from DEF_PRIORITY,
//! each round checks pgdat_balanced() (the high watermark) and leaves if
//! so, else shrinks the node with nr_to_reclaim = the high watermark
//! (kswapd_shrink_node); the priority drops when the round scanned less
//! than that or reclaimed nothing; the run ends at priority 1.
//! kswapd_failures counts runs that reclaimed nothing.
//!
//! kswapd_try_to_sleep: a balanced node lets kswapd wake the throttled
//! allocators and nap HZ/10; woken early it counts
//! kswapd_low_wmark_hit_quickly and balances again; after the full nap a
//! still-balanced node puts it to sleep until wakeup_kswapd, otherwise it
//! counts kswapd_high_wmark_hit_quickly.
//!
//! Deviation: no kcompactd wakeup (no compaction modelled); 2.6.25's
//! balance_pgdat (passes of 32 pages restarting at priority 12) is not
//! modelled: every version runs the node-based loop of 4.8+.

use crate::engine::event::Ev;
use crate::engine::time::{Instant, NSEC_PER_SEC};
use crate::kthread::floor::LendsKthreads;
use crate::mm::floor::MmFloor;
use crate::mm::{KswapdState, KswapdThreads, ScanControl, DEF_PRIORITY, SWAP_CLUSTER_MAX};
use crate::sched::task::TaskId;
use crate::trace::MmVmscan;

impl MmFloor {
    /// kswapd(): thread `k` runs (its program is one endless op).
    pub(crate) fn kswapd(&mut self, tid: TaskId, k: usize) {
        self.kt.k.sched.tasks[tid].pc -= 1; // the op never completes
        loop {
            let (node, state) = (self.mm.kswapds[k].node, self.mm.kswapds[k].state);
            match state {
                KswapdState::Boot if self.kswapd_parked(k) => return,
                KswapdState::Boot => {
                    self.kswapd_try_to_sleep(k);
                    if self.mm.kswapds[k].state != KswapdState::Balancing {
                        return;
                    }
                }
                KswapdState::ShortSleep => {
                    if self.mm.kswapds[k].timed_out && self.kswapd_parked(k) {
                        return;
                    }
                    if !self.mm.kswapds[k].timed_out {
                        self.mm.ev.kswapd_low_wmark_hit_quickly += 1;
                        self.balance_pgdat_start(k);
                    } else if self.prepare_kswapd_sleep(node) {
                        // Sleep until wakeup_kswapd.
                        self.mm.kswapds[k].state = KswapdState::Sleeping;
                        let t = &self.kt.k.sched.tasks[tid];
                        self.kt.k.trace.mm_vmscan(self.kt.k.now, t.cpu, t, MmVmscan::KswapdSleep, node as u64);
                        self.block(tid);
                        return;
                    } else {
                        self.mm.ev.kswapd_high_wmark_hit_quickly += 1;
                        self.balance_pgdat_start(k);
                    }
                }
                KswapdState::Sleeping | KswapdState::Parked => self.balance_pgdat_start(k),
                KswapdState::Balancing => {
                    if self.balance_pgdat_step(k) {
                        return;
                    }
                    // The run ended: try to sleep (or balance again).
                    self.kswapd_try_to_sleep(k);
                    if self.mm.kswapds[k].state != KswapdState::Balancing {
                        return;
                    }
                }
            }
        }
    }

    /// kswapd_try_to_sleep(): nap if the node is balanced, else go on.
    fn kswapd_try_to_sleep(&mut self, k: usize) {
        let (node, tid) = (self.mm.kswapds[k].node, self.mm.kswapds[k].task);
        if self.prepare_kswapd_sleep(node) {
            self.wake_pfmemalloc_waiters(node);
            let ks = &mut self.mm.kswapds[k];
            ks.state = KswapdState::ShortSleep;
            ks.timed_out = false;
            self.kt.k.psi_memstall_leave(tid);
            let hz = self.kt.k.cfg.hz as u64;
            self.mm_sleep(tid, (hz / 10).max(1) * self.kt.k.cfg.tick_ns);
        } else {
            self.mm.ev.kswapd_high_wmark_hit_quickly += 1;
            self.balance_pgdat_start(k);
        }
    }

    /// balance_pgdat() begins.
    fn balance_pgdat_start(&mut self, k: usize) {
        self.mm.ev.pageoutrun += 1;
        let t = &self.kt.k.sched.tasks[self.mm.kswapds[k].task];
        self.kt.k.trace.mm_vmscan(self.kt.k.now, t.cpu, t, MmVmscan::KswapdWake, self.mm.kswapds[k].node as u64);
        // balance_pgdat() runs inside psi_memstall_enter (sched/psi.rs).
        let tid = self.mm.kswapds[k].task;
        self.kt.k.psi_memstall_enter(tid);
        let ks = &mut self.mm.kswapds[k];
        ks.state = KswapdState::Balancing;
        ks.sc = ScanControl { priority: DEF_PRIORITY, pending_node: ks.node, ..Default::default() };
        ks.run_reclaimed = 0;
        self.balance_round_start(k);
    }

    /// A round of balance_pgdat's loop: set up kswapd_shrink_node's scan
    /// (an exhausted scan_left means "leave").
    fn balance_round_start(&mut self, k: usize) {
        let node = self.mm.kswapds[k].node;
        if self.pgdat_balanced(node) {
            self.mm.kswapds[k].sc.scan_left = 0;
            self.mm.kswapds[k].sc.priority = 0; // leave
            return;
        }
        let high = self.mm.nodes[node].wmark.high;
        let prio = self.mm.kswapds[k].sc.priority;
        let scan = self.scan_target(node, prio);
        let ks = &mut self.mm.kswapds[k];
        ks.sc.nr_scanned = 0;
        ks.sc.nr_to_reclaim = high.max(SWAP_CLUSTER_MAX);
        ks.sc.scan_left = scan;
        ks.round_start_reclaimed = ks.sc.nr_reclaimed;
    }

    /// One step of balance_pgdat: free the chunk just reclaimed, then
    /// reclaim the next (true: the thread spends CPU) or end the run
    /// (false).
    fn balance_pgdat_step(&mut self, k: usize) -> bool {
        let (node, tid) = (self.mm.kswapds[k].node, self.mm.kswapds[k].task);
        let pending = self.mm.kswapds[k].sc.pending;
        if pending > 0 {
            let cpu = self.kt.k.sched.tasks[tid].cpu;
            self.reclaim_chunk_done(node, pending, self.mm.kswapds[k].sc.pending_anon, cpu);
            let ks = &mut self.mm.kswapds[k];
            ks.sc.nr_reclaimed += pending;
            ks.run_reclaimed += pending;
            ks.sc.pending = 0;
            self.mm.nodes[node].kswapd_failures = 0;
            self.wake_pfmemalloc_waiters(node);
        }
        loop {
            let sc = self.mm.kswapds[k].sc;
            if sc.priority < 1 {
                // Left because balanced ("goto out") is not a failure.
                if self.mm.kswapds[k].run_reclaimed == 0 && !self.pgdat_balanced(node) {
                    self.mm.nodes[node].kswapd_failures += 1;
                }
                self.ws_snapshot_refaults();
                return false;
            }
            let node_reclaimed = sc.nr_reclaimed - self.mm.kswapds[k].round_start_reclaimed;
            if sc.scan_left > 0 && node_reclaimed < sc.nr_to_reclaim {
                let cpu = self.kt.k.sched.tasks[tid].cpu;
                self.mm.kswapds[k].sc.pending_anon = self.reclaim_lru(node) == crate::mm::Lru::InactiveAnon;
                let (n, ns) = self.shrink_chunk(node, sc.scan_left, true, cpu);
                if n > 0 {
                    let ks = &mut self.mm.kswapds[k];
                    ks.sc.scan_left -= n;
                    ks.sc.nr_scanned += n;
                    ks.sc.pending = n;
                    self.kt.k.sched.tasks[tid].work_left = ns.max(1);
                    self.kt.k.sched.tasks[tid].work_is_cpu();
                    return true;
                }
            }
            // The round is over: raise the priority if it fell short.
            let ks = &mut self.mm.kswapds[k];
            let raise = ks.sc.nr_scanned < ks.sc.nr_to_reclaim;
            if raise || node_reclaimed == 0 {
                ks.sc.priority -= 1;
            }
            ks.sc.scan_left = 0;
            if ks.sc.priority >= 1 {
                self.balance_round_start(k);
            }
        }
    }

    /// Wake kswapd thread `k` if it waits on kswapd_wait (and the `auto`
    /// policy lets it run).
    pub(crate) fn kswapd_wake(&mut self, k: usize) {
        let ks = &self.mm.kswapds[k];
        if !matches!(ks.state, KswapdState::ShortSleep | KswapdState::Sleeping | KswapdState::Parked)
            || ks.hid >= self.mm.kswapd_active[ks.node]
        {
            return;
        }
        let tid = ks.task;
        if self.kt.k.sched.tasks[tid].state != crate::sched::task::TaskState::Blocked {
            return; // already woken, not yet run
        }
        // The nap's timer no longer matters.
        let t = self.mm.task(tid);
        t.sleep_seq = t.sleep_seq.wrapping_add(1);
        self.mm.kswapds[k].timed_out = false;
        let cpu = self.kt.k.sched.tasks[tid].cpu;
        self.kt.k.try_to_wake_up(tid, cpu, false);
    }

    /// A thread the `auto` policy does not let run parks (sleeps until a
    /// re-evaluation lets it run and wakeup_kswapd wakes it).
    fn kswapd_parked(&mut self, k: usize) -> bool {
        let ks = &self.mm.kswapds[k];
        if ks.hid < self.mm.kswapd_active[ks.node] {
            return false;
        }
        let tid = ks.task;
        self.mm.kswapds[k].state = KswapdState::Parked;
        self.block(tid);
        true
    }

    /// vm.kswapd_threads = "auto" (schedlab's policy for P3's reviewers,
    /// not a kernel's): once a second, each node may run one kswapd thread
    /// per `idle_per_thread` CPUs of the node that were idle on average over
    /// the last second (idle or iowait), at least one and at most `max`.
    /// Threads newly allowed are woken if the node needs reclaim; threads
    /// no longer allowed finish their balance_pgdat run and park.
    pub(crate) fn kswapd_auto(&mut self) {
        let KswapdThreads::Auto { idle_per_thread, max } = self.mm.cfg.kswapd_threads else {
            return;
        };
        for node in 0..self.mm.nodes.len() {
            let mut idle = 0;
            for cpu in 0..self.kt.k.sched.rqs.len() {
                if self.kt.k.machine.cpus[cpu].node != node {
                    continue;
                }
                self.kt.k.sched.account_cpu(cpu, self.kt.k.now);
                let a = self.kt.k.sched.rqs[cpu].acct;
                let now_idle = a.idle + a.iowait;
                idle += now_idle - self.mm.auto_idle[cpu];
                self.mm.auto_idle[cpu] = now_idle;
            }
            let idle_cpus = idle / NSEC_PER_SEC;
            let want = ((idle_cpus / idle_per_thread as u64) as u32).clamp(1, max);
            let before = self.mm.kswapd_active[node];
            self.mm.kswapd_active[node] = want;
            self.mm.auto_sum[node] += want as u64;
            if want > before {
                self.wakeup_kswapd(node, None);
            }
        }
        self.mm.auto_evals += 1;
        self.kt.k.q.schedule(Instant(self.kt.k.now + NSEC_PER_SEC), Ev::MmAuto);
    }

    /// prepare_kswapd_sleep(): the node is balanced, or hopeless (kswapd
    /// failed MAX_RECLAIM_RETRIES runs in a row: left to direct reclaim).
    fn prepare_kswapd_sleep(&self, node: usize) -> bool {
        self.mm.nodes[node].kswapd_failures >= crate::mm::MAX_RECLAIM_RETRIES || self.pgdat_balanced(node)
    }
}
