//! Models CFS bandwidth control of kernel/sched/fair.c
//! (CONFIG_CFS_BANDWIDTH), issue 39 step 2: a group's `cpu.max` quota per
//! period is a global pool (struct cfs_bandwidth); each of its cfs_rqs
//! draws 5 ms slices from it as its tasks run (assign_cfs_rq_runtime). A
//! cfs_rq that cannot draw more is throttled: its group entity leaves the
//! parent's cfs_rq, and with it every task below, until the period timer
//! refills the pool and distributes runtime to the throttled cfs_rqs in
//! the order they were throttled. A cfs_rq whose last entity leaves gives
//! back what it holds beyond 1 ms; when the pool then holds more than a
//! slice and some cfs_rq is throttled, the slack timer distributes it 5 ms
//! later.
//!
//! By version: before 5.4 a slice expires with the period it was drawn in
//! (runtime_expires, expires_seq; de53fd7aedb1 removed it); from 5.7
//! throttle_cfs_rq() tries the pool once more first; from 5.14 the refill
//! adds the quota to what is left, up to quota + cpu.max.burst; from 5.16
//! cpu.stat counts bursts.
//!
//! A throttled hierarchy's PELT clock stops (cfs_rq_clock_pelt()): its
//! cfs_rqs' and tasks' averages neither decay nor grow while throttled.
//! From 6.3 (8ad075c2eb1f) distribute_cfs_runtime() hands a remote
//! cfs_rq its runtime and leaves the unthrottle to an IPI to that CPU
//! (`wakeup_ipi` later); the timer's own CPU's cfs_rq is unthrottled at the
//! end of the walk. The period timer runs on the CPU that armed it.
//! Deviation: a quota written at the start arms the timer on CPU 0 (the
//! kernel's is the writer's CPU), and the slack timer runs on the CPU of
//! the cfs_rq that armed it (the kernel's unpinned hrtimer may move to a
//! busy CPU).
//! From 6.18 a throttled cfs_rq stays queued and its tasks park one by one
//! (the task based throttle: fair/throttle_task.rs).
//! The slice is the sysctl kernel.sched_cfs_bandwidth_slice_us (5 ms).

use crate::engine::event::Ev;
use crate::engine::Instant;
use crate::sched::cfs_rq::CfsRqId;
use crate::sched::env::SchedEnv;
use crate::sched::task::{SeId, TaskId};
use crate::sched::task_group::{BandwidthDef, CfsBandwidth, CfsRqBandwidth, TgId};

/// min_cfs_rq_runtime: what a cfs_rq keeps of its slice when it empties.
const MIN_CFS_RQ_RUNTIME: i64 = 1_000_000;
/// min_bandwidth_expiration: no slack distribution this close to a refill.
const MIN_BANDWIDTH_EXPIRATION: u64 = 2_000_000;
/// cfs_bandwidth_slack_period: the slack timer's delay.
const CFS_BANDWIDTH_SLACK_PERIOD: u64 = 5_000_000;

impl SchedEnv {
    /// sched_cfs_bandwidth_slice(): what a cfs_rq draws from its group's
    /// pool at a time, sysctl_sched_cfs_bandwidth_slice us (5,000).
    #[inline]
    fn sched_cfs_bandwidth_slice(&self) -> u64 {
        self.cfg.sysctl.sched_cfs_bandwidth_slice_us * 1000
    }

    fn cfs_b(&self, tg: TgId) -> &CfsBandwidth {
        self.sched.groups.tgs[tg].cfs_b.as_deref().expect("a group with a quota")
    }

    pub(super) fn cfs_b_mut(&mut self, tg: TgId) -> &mut CfsBandwidth {
        self.sched.groups.tgs[tg].cfs_b.as_deref_mut().expect("a group with a quota")
    }

    #[inline]
    pub(crate) fn rq_bw(&self, q: CfsRqId) -> &CfsRqBandwidth {
        &self.sched.groups.rq_bw[q.index()]
    }

    pub(super) fn rq_bw_mut(&mut self, q: CfsRqId) -> &mut CfsRqBandwidth {
        &mut self.sched.groups.rq_bw[q.index()]
    }

    /// cfs_rq_throttled().
    #[inline]
    pub(crate) fn cfs_rq_throttled(&self, q: CfsRqId) -> bool {
        self.sched.groups.bandwidth_used && self.rq_bw(q).throttled
    }

    /// throttled_hierarchy(): the cfs_rq or an ancestor is throttled.
    #[inline]
    pub(crate) fn throttled_hierarchy(&self, q: CfsRqId) -> bool {
        self.sched.groups.bandwidth_used && self.rq_bw(q).throttle_count > 0
    }

    /// cfs_rq_clock_pelt(): `q`'s PELT clock, `pelt_now` (its CPU's
    /// rq_clock_pelt()) less the time its hierarchy spent throttled, and
    /// stopped while it is (from 6.18: while it is and `q` is empty).
    #[inline]
    pub(crate) fn cfs_rq_clock_pelt(&self, q: CfsRqId, pelt_now: u64) -> u64 {
        match self.sched.groups.rq_bw.get(q.index()) {
            Some(b) if b.pelt_clock_throttled => b.throttled_clock_pelt - b.throttled_clock_pelt_time,
            Some(b) => pelt_now - b.throttled_clock_pelt_time,
            None => pelt_now,
        }
    }

    /// throttled_lb_pair(): the task's group is throttled on either CPU;
    /// from 6.18 lb_throttled_hierarchy(): on the destination (a task
    /// still queued below a throttled cfs_rq may move).
    pub(crate) fn throttled_lb_pair(&self, p: TaskId, src: usize, dst: usize) -> bool {
        if self.cfg.mech.cfs_task_throttle {
            return self.throttled_hierarchy(self.task_cfs_rq_on(p, dst));
        }
        self.throttled_hierarchy(self.task_cfs_rq_on(p, src)) || self.throttled_hierarchy(self.task_cfs_rq_on(p, dst))
    }

    /// tg_set_cfs_bandwidth() of each group with a quota, once its cfs_rqs
    /// exist: runtime_enabled on every CPU, the pool full, the period timer
    /// started.
    pub(crate) fn init_cfs_bandwidth(&mut self, tg: TgId, def: BandwidthDef) {
        let groups = &mut self.sched.groups;
        groups.bandwidth_used = true;
        groups.rq_bw.resize(self.sched.cfs_rqs.len(), CfsRqBandwidth::default());
        for &q in &groups.tgs[tg].cfs_rq {
            groups.rq_bw[q.index()] = CfsRqBandwidth { runtime_enabled: true, ..CfsRqBandwidth::default() };
        }
        groups.tgs[tg].cfs_b = Some(Box::new(CfsBandwidth {
            period: def.period,
            quota: def.quota,
            burst: def.burst,
            ..CfsBandwidth::default()
        }));
        let nr_cpus = groups.tgs[tg].cfs_rq.len();
        groups.cfsb_csd_list.resize(nr_cpus, Vec::new());
        groups.limbo.resize(groups.rq_bw.len(), Vec::new());
        self.refill_cfs_bandwidth_runtime(tg);
        self.start_cfs_bandwidth(tg, 0);
    }

    /// __refill_cfs_bandwidth_runtime(): the pool for a new period.
    fn refill_cfs_bandwidth_runtime(&mut self, tg: TgId) {
        let m = &self.cfg.mech;
        let (now, burst, burst_stats, expires) = (self.now, m.cfs_burst, m.cfs_burst_stats, m.cfs_runtime_expires);
        let b = self.cfs_b_mut(tg);
        if burst {
            b.runtime += b.quota;
            if burst_stats && b.runtime_snap > b.runtime {
                b.burst_time += b.runtime_snap - b.runtime;
                b.nr_burst += 1;
            }
            b.runtime = b.runtime.min(b.quota + b.burst);
            b.runtime_snap = b.runtime;
        } else {
            b.runtime = b.quota;
        }
        if expires {
            b.runtime_expires = now + b.period;
            b.expires_seq += 1;
        }
    }

    /// start_cfs_bandwidth(): arm the period timer if it is not; its
    /// expiries stay on a grid of whole periods (hrtimer_forward_now).
    fn start_cfs_bandwidth(&mut self, tg: TgId, cpu: usize) {
        let b = self.cfs_b(tg);
        if b.period_active {
            return;
        }
        let at = self.hrtimer_period_next(b.period);
        let b = self.cfs_b_mut(tg);
        b.period_active = true;
        b.timer_cpu = cpu;
        b.period_expires = at;
        self.q.schedule(Instant(at), Ev::CfsPeriod(tg as u32));
    }

    /// sched_cfs_period_timer() -> do_sched_cfs_period_timer(): count the
    /// period, refill, and hand the pool to the throttled cfs_rqs; stop
    /// after a period in which nothing drew from the pool.
    pub fn sched_cfs_period_timer(&mut self, tg: TgId) {
        let burst_era = self.cfg.mech.cfs_burst;
        let b = self.cfs_b_mut(tg);
        let throttled = !b.throttled_cfs_rq.is_empty();
        b.nr_periods += 1;
        let idle = b.idle;
        if burst_era {
            // 5.14+: the burst pool refills even in an idle period.
            self.refill_cfs_bandwidth_runtime(tg);
        }
        let deactivate = if idle && !throttled {
            true
        } else {
            if !burst_era {
                self.refill_cfs_bandwidth_runtime(tg);
            }
            if throttled {
                self.cfs_b_mut(tg).nr_throttled += 1;
                let cpu = self.cfs_b(tg).timer_cpu;
                self.distribute_cfs_runtime(tg, cpu);
            }
            // An idle period: nothing drew from the pool until the next.
            self.cfs_b_mut(tg).idle = !throttled;
            false
        };
        let b = self.cfs_b_mut(tg);
        if deactivate {
            b.period_active = false;
        } else {
            b.period_expires += b.period;
            let at = b.period_expires;
            self.q.schedule(Instant(at), Ev::CfsPeriod(tg as u32));
        }
    }

    /// runtime_refresh_within(): the period timer fires (or is not armed)
    /// within `min_expire`.
    fn runtime_refresh_within(&self, tg: TgId, min_expire: u64) -> bool {
        let b = self.cfs_b(tg);
        !b.period_active || b.period_expires.saturating_sub(self.now) < min_expire
    }

    /// do_sched_cfs_slack_timer(): distribute the pool returned by idle
    /// cfs_rqs, unless a refill is about to.
    pub fn sched_cfs_slack_timer(&mut self, tg: TgId) {
        self.cfs_b_mut(tg).slack_started = false;
        if self.runtime_refresh_within(tg, MIN_BANDWIDTH_EXPIRATION) {
            return;
        }
        if self.cfs_b(tg).runtime > self.sched_cfs_bandwidth_slice() {
            let cpu = self.cfs_b(tg).slack_cpu;
            self.distribute_cfs_runtime(tg, cpu);
        }
    }

    /// distribute_cfs_runtime(): each throttled cfs_rq, in the order they
    /// were throttled, gets what brings it to 1 ns of runtime, and is
    /// unthrottled, until the pool is empty.
    fn distribute_cfs_runtime(&mut self, tg: TgId, this_cpu: usize) {
        let list = self.cfs_b(tg).throttled_cfs_rq.clone();
        let expires_era = self.cfg.mech.cfs_runtime_expires;
        let asynchronous = self.cfg.mech.cfs_async_unthrottle;
        let mut local = None;
        for q in list {
            if !self.rq_bw(q).throttled || self.rq_bw(q).csd_queued {
                continue;
            }
            let want = (-self.rq_bw(q).runtime_remaining + 1).max(0) as u64;
            let b = self.cfs_b_mut(tg);
            let give = want.min(b.runtime);
            b.runtime -= give;
            let (left, expires, seq) = (b.runtime, b.runtime_expires, b.expires_seq);
            let bw = self.rq_bw_mut(q);
            bw.runtime_remaining += give as i64;
            if expires_era {
                bw.runtime_expires = expires;
                bw.expires_seq = seq;
            }
            if bw.runtime_remaining > 0 {
                let cpu = self.cfs_rq(q).cpu;
                if !asynchronous {
                    self.unthrottle_cfs_rq(q);
                } else if cpu != this_cpu {
                    self.unthrottle_cfs_rq_async(q, cpu);
                } else {
                    local = Some(q);
                }
            }
            if left == 0 {
                break;
            }
        }
        if let Some(q) = local.filter(|&q| self.rq_bw(q).throttled) {
            self.unthrottle_cfs_rq(q);
        }
    }

    /// unthrottle_cfs_rq_async() (6.3+): queue `q` on its CPU's
    /// cfsb_csd_list and, if the list was empty, send that CPU the IPI.
    fn unthrottle_cfs_rq_async(&mut self, q: CfsRqId, cpu: usize) {
        self.rq_bw_mut(q).csd_queued = true;
        let list = &mut self.sched.groups.cfsb_csd_list[cpu];
        list.push(q);
        if list.len() == 1 {
            let at = self.now + self.cfg.costs.wakeup_ipi_ns;
            self.q.schedule(Instant(at), Ev::CfsbCsd(cpu as u32));
        }
    }

    /// __cfsb_csd_unthrottle(): the IPI arrives on `cpu`; every cfs_rq on
    /// its list that is still throttled is unthrottled.
    pub fn cfsb_csd_unthrottle(&mut self, cpu: usize) {
        let list = std::mem::take(&mut self.sched.groups.cfsb_csd_list[cpu]);
        for q in list {
            self.rq_bw_mut(q).csd_queued = false;
            if self.rq_bw(q).throttled {
                self.unthrottle_cfs_rq(q);
            }
        }
    }

    /// account_cfs_rq_runtime(): `delta` ns ran below `q`; when its slice
    /// is used up it draws another, and reschedules its running task if
    /// the pool is empty (the pick then throttles it).
    #[inline]
    pub(crate) fn account_cfs_rq_runtime(&mut self, q: CfsRqId, delta: u64) {
        if !self.rq_bw(q).runtime_enabled {
            return;
        }
        let bw = self.rq_bw_mut(q);
        bw.runtime_remaining -= delta as i64;
        if self.cfg.mech.cfs_runtime_expires {
            self.expire_cfs_rq_runtime(q);
        }
        let bw = self.rq_bw(q);
        if bw.runtime_remaining > 0 || bw.throttled {
            return;
        }
        if !self.assign_cfs_rq_runtime(q, self.sched_cfs_bandwidth_slice()) && self.cfs_rq(q).curr.is_some() {
            self.resched_curr(self.cfs_rq(q).cpu);
        }
    }

    /// Before 5.4, expire_cfs_rq_runtime(): past its expiry a slice drawn
    /// in an earlier period is void; one of this period (the local clock
    /// ran ahead) gets a tick more.
    fn expire_cfs_rq_runtime(&mut self, q: CfsRqId) {
        let now = self.now;
        let tick = self.cfg.tick_ns;
        let tg = self.cfs_rq(q).tg;
        let seq = self.cfs_b(tg).expires_seq;
        let bw = self.rq_bw_mut(q);
        if now < bw.runtime_expires || bw.runtime_remaining < 0 {
            return;
        }
        if bw.expires_seq == seq {
            bw.runtime_expires += tick;
        } else {
            bw.runtime_remaining = 0;
        }
    }

    /// __assign_cfs_rq_runtime(): draw up to `target` - runtime_remaining
    /// from the pool (starting the period timer); whether runtime is left.
    fn assign_cfs_rq_runtime(&mut self, q: CfsRqId, target: u64) -> bool {
        let tg = self.cfs_rq(q).tg;
        let min_amount = (target as i64 - self.rq_bw(q).runtime_remaining).max(0) as u64;
        self.start_cfs_bandwidth(tg, self.cfs_rq(q).cpu);
        let b = self.cfs_b_mut(tg);
        let mut amount = 0;
        if b.runtime > 0 {
            amount = b.runtime.min(min_amount);
            b.runtime -= amount;
            b.idle = false;
        }
        let (expires, seq) = (b.runtime_expires, b.expires_seq);
        let expires_era = self.cfg.mech.cfs_runtime_expires;
        let bw = self.rq_bw_mut(q);
        bw.runtime_remaining += amount as i64;
        if expires_era && bw.expires_seq != seq {
            bw.expires_seq = seq;
            bw.runtime_expires = expires;
        }
        bw.runtime_remaining > 0
    }

    /// check_cfs_rq_runtime(): throttle a cfs_rq out of runtime; whether it
    /// is throttled (pick_task_fair() then starts its walk again).
    #[inline]
    pub(crate) fn check_cfs_rq_runtime(&mut self, q: CfsRqId) -> bool {
        let bw = self.rq_bw(q);
        if !bw.runtime_enabled || bw.runtime_remaining > 0 {
            return false;
        }
        if bw.throttled {
            return true;
        }
        self.throttle_cfs_rq(q)
    }

    /// put_prev_entity()'s check_cfs_rq_runtime() at each level of `prev`,
    /// from its own cfs_rq up: a cfs_rq that ran out of runtime under the
    /// previous task is throttled as the task is put back, not only when
    /// a later pick walks into it. The levels the pick walked (those
    /// shared with the next task) were checked there and stay as they are.
    /// Until 2026-11-29 the model left it to the next walk.
    /// Deviation: the kernel checks each level before putting its entity
    /// back; the model checks once every level is back (a throttle then
    /// dequeues the group entity from the tree instead of finding it off
    /// it: the same runqueue after).
    #[cold]
    pub(crate) fn put_prev_check_cfs_rq_runtime(&mut self, cpu: usize, prev: TaskId) {
        let mut q = self.task_cfs_rq_on(prev, cpu);
        while let Some(e) = self.sched.groups.tgs[self.cfs_rq(q).tg].se[cpu] {
            self.check_cfs_rq_runtime(q);
            q = self.cfs_rq_of(e);
        }
    }

    /// check_enqueue_throttle(): a cfs_rq whose first entity was just
    /// queued (and that is not running) draws runtime, or is throttled.
    pub(crate) fn check_enqueue_throttle(&mut self, q: CfsRqId) {
        let bw = *self.rq_bw(q);
        if !bw.runtime_enabled || bw.throttled || self.cfs_rq(q).curr.is_some() {
            return;
        }
        self.account_cfs_rq_runtime(q, 0);
        if self.rq_bw(q).runtime_remaining <= 0 {
            self.throttle_cfs_rq(q);
        }
    }

    /// return_cfs_rq_runtime(): a cfs_rq whose last entity left gives the
    /// pool what it holds beyond min_cfs_rq_runtime (before 5.4, only a
    /// slice of the current period), and arms the slack timer when the
    /// pool then holds more than a slice and some cfs_rq is throttled.
    pub(crate) fn return_cfs_rq_runtime(&mut self, q: CfsRqId) {
        let bw = *self.rq_bw(q);
        if !bw.runtime_enabled || self.cfs_rq(q).nr_running > 0 {
            return;
        }
        let slack = bw.runtime_remaining - MIN_CFS_RQ_RUNTIME;
        if slack <= 0 {
            return;
        }
        let tg = self.cfs_rq(q).tg;
        let expires_era = self.cfg.mech.cfs_runtime_expires;
        let slice = self.sched_cfs_bandwidth_slice();
        let b = self.cfs_b_mut(tg);
        if !expires_era || bw.runtime_expires == b.runtime_expires {
            b.runtime += slack as u64;
            if b.runtime > slice && !b.throttled_cfs_rq.is_empty() {
                self.start_cfs_slack_bandwidth(tg, self.cfs_rq(q).cpu);
            }
        }
        self.rq_bw_mut(q).runtime_remaining -= slack;
    }

    /// start_cfs_slack_bandwidth(): arm the slack timer, unless a refill
    /// comes first or it is armed already.
    /// Deviation: before 5.3 (66567fcbaeca) an armed slack timer was pushed
    /// on; the model never pushes it.
    fn start_cfs_slack_bandwidth(&mut self, tg: TgId, cpu: usize) {
        if self.runtime_refresh_within(tg, CFS_BANDWIDTH_SLACK_PERIOD + MIN_BANDWIDTH_EXPIRATION) {
            return;
        }
        let b = self.cfs_b_mut(tg);
        if b.slack_started {
            return;
        }
        b.slack_started = true;
        b.slack_cpu = cpu;
        let at = self.now + CFS_BANDWIDTH_SLACK_PERIOD;
        self.q.schedule(Instant(at), Ev::CfsSlack(tg as u32));
    }

    /// The group cfs_rqs on `q`'s CPU at and below `q` (walk_tg_tree_from).
    pub(super) fn cfs_rqs_below(&self, q: CfsRqId) -> Vec<CfsRqId> {
        let (tg0, cpu) = (self.cfs_rq(q).tg, self.cfs_rq(q).cpu);
        let tgs = &self.sched.groups.tgs;
        // Children come after their parents: one pass marks the subtree.
        let mut inside = vec![false; tgs.len()];
        inside[tg0] = true;
        let mut out = vec![q];
        for (i, g) in tgs.iter().enumerate().skip(tg0 + 1) {
            if g.parent.is_some_and(|p| inside[p]) {
                inside[i] = true;
                out.push(g.cfs_rq[cpu]);
            }
        }
        out
    }

    /// The tasks queued at and below `q` that enqueue_task_fair() counted
    /// as runnable (sched_delayed ones are not).
    fn tasks_below(&self, q: CfsRqId) -> Vec<TaskId> {
        let mut v = Vec::new();
        for c in self.cfs_rqs_below(q) {
            let cfs = self.cfs_rq(c);
            v.extend(cfs.tasks_timeline.iter().filter_map(|&(_, e)| e.task_of()));
            v.extend(cfs.curr.and_then(SeId::task_of));
        }
        v.retain(|&t| !self.sched.tasks[t].se.sched_delayed);
        v
    }

    /// The h_nr_* counts of cfs_rq `q` moved by whole subtrees (throttle
    /// and unthrottle); the root's idle count is the runqueue's too.
    fn add_h_nr(&mut self, q: CfsRqId, n: i32, idle: i32, delayed: i32) {
        let cfs = self.cfs_rq_mut(q);
        cfs.h_nr_running = cfs.h_nr_running.wrapping_add_signed(n);
        cfs.idle_h_nr_running = cfs.idle_h_nr_running.wrapping_add_signed(idle);
        cfs.h_nr_delayed = cfs.h_nr_delayed.wrapping_add_signed(delayed);
        if q.index() < self.sched.rqs.len() {
            let r = &mut self.sched.rq_idle[q.index()].idle_h_nr_running;
            *r = r.wrapping_add_signed(idle);
            self.rq_idle_changed(q.index());
        }
    }

    /// One level of the walk up from a throttled (`sign` -1) or
    /// unthrottled (+1) cfs_rq: the cfs_rq `e` queues on gains or loses the
    /// subtree's `n` tasks, all of them idle from an idle group up.
    fn carry_h_nr(&mut self, e: SeId, sign: i32, n: i32, idle: &mut i32, delayed: i32) {
        if self.group_cfs_rq(e).is_some_and(|g| self.cfs_rq_is_idle(g)) {
            *idle = n;
        }
        let q = self.cfs_rq_of(e);
        self.add_h_nr(q, sign * n, sign * *idle, sign * delayed);
    }

    /// throttle_cfs_rq(): unless the pool still has runtime (5.7+), `q`
    /// joins the throttled list, its subtree counts one more throttled
    /// ancestor, and its group entity leaves the parent (and each ancestor
    /// left empty, its own) with every task below. Whether it throttled.
    fn throttle_cfs_rq(&mut self, q: CfsRqId) -> bool {
        let (tg, cpu) = (self.cfs_rq(q).tg, self.cfs_rq(q).cpu);
        if self.cfg.mech.cfs_throttle_assign && self.assign_cfs_rq_runtime(q, 1) {
            return false;
        }
        self.cfs_b_mut(tg).throttled_cfs_rq.push(q);
        if self.cfg.mech.cfs_task_throttle {
            self.throttle_cfs_rq_task_based(q); // fair/throttle_task.rs
            return true;
        }
        // tg_throttle_down(): each cfs_rq below stops its PELT clock.
        let pelt_now = self.rq_clock_pelt(cpu);
        for c in self.cfs_rqs_below(q) {
            let bw = self.rq_bw_mut(c);
            if bw.throttle_count == 0 {
                bw.throttled_clock_pelt = pelt_now;
                bw.pelt_clock_throttled = true;
            }
            bw.throttle_count += 1;
        }
        let cfs = self.cfs_rq(q);
        let (n, mut idle, delayed) = (cfs.h_nr_running as i32, cfs.idle_h_nr_running as i32, cfs.h_nr_delayed as i32);
        let tasks = self.tasks_below(q);
        let mut se = self.sched.groups.tgs[tg].se[cpu];
        let mut reached_root = true;
        while let Some(e) = se {
            if !self.se(e).on_rq {
                reached_root = false;
                break;
            }
            let parent_q = self.cfs_rq_of(e);
            self.dequeue_entity::<true>(parent_q, e, true);
            self.carry_h_nr(e, -1, n, &mut idle, delayed);
            se = self.parent_entity(e);
            if self.cfs_rq(parent_q).load_weight > 0 {
                break;
            }
        }
        if reached_root {
            while let Some(e) = se {
                let parent_q = self.cfs_rq_of(e);
                self.update_load_avg::<true>(parent_q, Some(e));
                self.update_cfs_group(e);
                self.carry_h_nr(e, -1, n, &mut idle, delayed);
                se = self.parent_entity(e);
            }
            for _ in 0..n {
                self.sub_nr_running(cpu);
            }
            for t in tasks {
                self.sched.wasted.track(self.sched.tasks[t].nr_cpus_allowed, self.sched.rqs.len(), false);
            }
        }
        let now = self.now;
        let bw = self.rq_bw_mut(q);
        bw.throttled = true;
        bw.throttled_clock = now;
        true
    }

    /// unthrottle_cfs_rq(): the reverse of throttle_cfs_rq(); the time
    /// throttled counts into cpu.stat's throttled_usec, and an idle CPU
    /// with work again reschedules.
    fn unthrottle_cfs_rq(&mut self, q: CfsRqId) {
        if self.cfg.mech.cfs_task_throttle {
            self.unthrottle_cfs_rq_task_based(q); // fair/throttle_task.rs
            return;
        }
        let (tg, cpu) = (self.cfs_rq(q).tg, self.cfs_rq(q).cpu);
        let now = self.now;
        let since = self.rq_bw(q).throttled_clock;
        self.rq_bw_mut(q).throttled = false;
        let b = self.cfs_b_mut(tg);
        b.throttled_time += now - since;
        b.throttled_cfs_rq.retain(|&x| x != q);
        // tg_unthrottle_up(): the clocks go on, less the time stopped.
        let pelt_now = self.rq_clock_pelt(cpu);
        for c in self.cfs_rqs_below(q) {
            let bw = self.rq_bw_mut(c);
            bw.throttle_count -= 1;
            if bw.throttle_count == 0 {
                bw.throttled_clock_pelt_time += pelt_now - bw.throttled_clock_pelt;
                bw.pelt_clock_throttled = false;
            }
        }
        if self.cfs_rq(q).load_weight == 0 {
            return;
        }
        let cfs = self.cfs_rq(q);
        let (n, mut idle, delayed) = (cfs.h_nr_running as i32, cfs.idle_h_nr_running as i32, cfs.h_nr_delayed as i32);
        let root_before = self.sched.cfs_rqs[cpu].h_nr_running;
        let mut se = self.sched.groups.tgs[tg].se[cpu];
        let mut reached_root = true;
        while let Some(e) = se {
            if self.se(e).on_rq {
                break;
            }
            let parent_q = self.cfs_rq_of(e);
            self.enqueue_entity::<true>(parent_q, e, false, true, false);
            self.carry_h_nr(e, 1, n, &mut idle, delayed);
            se = self.parent_entity(e);
            if self.rq_bw_throttled(parent_q) {
                reached_root = false;
                se = None;
            }
        }
        while let Some(e) = se {
            let parent_q = self.cfs_rq_of(e);
            self.update_load_avg::<true>(parent_q, Some(e));
            self.update_cfs_group(e);
            self.carry_h_nr(e, 1, n, &mut idle, delayed);
            se = self.parent_entity(e);
            if self.rq_bw_throttled(parent_q) {
                reached_root = false;
                break;
            }
        }
        if reached_root {
            for _ in 0..n {
                self.add_nr_running(cpu);
            }
            for t in self.tasks_below(q) {
                self.sched.wasted.track(self.sched.tasks[t].nr_cpus_allowed, self.sched.rqs.len(), true);
            }
            if self.cfg.mech.fair_server && root_before == 0 && self.sched.cfs_rqs[cpu].h_nr_running > 0 {
                let was_idle = self.sched.rqs[cpu].nr_running == n as u32;
                self.fair_server_enqueue(cpu, was_idle);
            }
        }
        if self.sched.rqs[cpu].curr.is_none() && self.sched.cfs_rqs[cpu].nr_running > 0 {
            self.resched_curr(cpu);
        }
    }

    /// The end of an enqueue that stopped at a throttled cfs_rq
    /// (enqueue_throttle): the task waits, uncounted by the runqueue.
    #[cold]
    pub(super) fn enqueue_throttled(&mut self, tid: TaskId, task_running: bool, seq: u64) -> bool {
        if !task_running {
            self.sched.tasks[tid].stats.wait_start.get_or_insert(self.now);
        }
        self.sched.tasks[tid].list_seq = seq;
        false
    }

    /// The end of a dequeue that stopped at a throttled cfs_rq
    /// (dequeue_throttle): the runqueue did not count the task.
    #[cold]
    pub(super) fn dequeue_throttled(&mut self, tid: TaskId, finish_delayed: bool) -> bool {
        if finish_delayed {
            self.finish_delayed_dequeue_entity(tid);
        }
        true
    }

    /// Whether a task queued on its cfs_rq on `cpu` counts in the root's
    /// h_nr_* (the checker): not below a throttled cfs_rq, which took its
    /// counts off, before 6.18.
    pub(crate) fn counted_at_root(&self, t: TaskId, cpu: usize) -> bool {
        self.cfg.mech.cfs_task_throttle || !self.throttled_hierarchy(self.task_cfs_rq_on(t, cpu))
    }

    /// cfs_rq_throttled() of a cfs_rq that may be the root (never throttled).
    #[inline]
    fn rq_bw_throttled(&self, q: CfsRqId) -> bool {
        self.sched.groups.rq_bw.get(q.index()).is_some_and(|b| b.throttled)
    }
}
