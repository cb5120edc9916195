//! Models the EEVDF half of kernel/sched/fair.c (6.6+).
//!
//! V = Σ w_i v_i / Σ w_i is the virtual time of an ideal fluid scheduler; an
//! entity with lag V - v_i >= 0 is eligible; among eligible entities run the
//! one with the earliest virtual deadline v_i + r_i/w_i. Eligible entities
//! are a prefix of the vruntime-ordered tree (v_i <= V), so the pick scans
//! that prefix. Deviation: the kernel finds the same entity in O(log n) with
//! an augmented rbtree; this scan is O(eligible).
//!
//! The sums are kept relative to min_vruntime, as the kernel keeps them:
//! cfs_rq.avg_vruntime = Σ w_i (v_i - min_vruntime), avg_load = Σ w_i over
//! the tree (curr added when read). The era's common entity code is
//! `fair/entity.rs`.
//!
//! 6.12 (read in 6.12.95, the oracle's kernel): DELAY_DEQUEUE and
//! DELAY_ZERO (a task that sleeps while ineligible stays queued, asleep,
//! until a pick reaches it or a wakeup requeues it where it is),
//! PLACE_REL_DEADLINE (a migration keeps the deadline relative).
//! PREEMPT_SHORT has no effect: every task has the base slice (custom
//! slices, sched_attr.sched_runtime, are not modelled).
//!
//! 6.14 .. 6.18.y (docs/notes/linux-6.13-6.18-sched-changes.md): the lag
//! clamp of 6.18.17 (`update_entity_lag`) and the wakeup check of 6.18.33
//! (`check_preempt_wakeup_eevdf`). Deviation: the 6.17 form of slice
//! protection (vprot, 74eec63661d4 and its followers) is not modelled.
//! With RUN_TO_PARITY, the default, and every slice the base slice it
//! protects what the 6.12 marker (vlag == deadline) does; with
//! NO_RUN_TO_PARITY 6.17+ still protects one base slice, the model none.
//!
//! Deviation: 6.12.64+ keeps keys relative to zero_vruntime, which
//! avg_vruntime() moves to V, instead of min_vruntime; the model keeps
//! min_vruntime as the base for every EEVDF version. Eligibility is exact
//! either way; V's floor division may differ by 1 ns of virtual time.

use crate::kernel::features::Feature;
use crate::sched::class::{DEQUEUE_DELAYED, DEQUEUE_SLEEP, WF_FORK};
use crate::sched::env::SchedEnv;
use crate::sched::sched::CfsRqId;
use crate::sched::task::{SeId, TaskId};

/// `a / b`, truncated as i128 division truncates, in 64-bit arithmetic
/// when both fit (one idiv instead of __divti3's long division; the sums
/// are 128-bit so that they cannot overflow, but their values rarely need
/// more than 64 bits). `b` is positive.
#[inline(always)]
fn div_i128(a: i128, b: i128) -> i128 {
    debug_assert!(b > 0);
    match (i64::try_from(a), i64::try_from(b)) {
        (Ok(x), Ok(y)) => (x / y) as i128,
        _ => a / b,
    }
}

impl SchedEnv {
    #[inline(always)]
    pub(crate) fn entity_key<const G: bool>(&self, cfs_rq: CfsRqId, se: SeId) -> i128 {
        self.se_g::<G>(se).vruntime as i128 - self.cfs_rq(cfs_rq).min_vruntime as i128
    }

    /// (Σ w_i key_i, Σ w_i) with curr included, as avg_vruntime() builds them.
    #[inline(always)]
    pub(crate) fn avg_sums<const G: bool>(&self, cfs_rq: CfsRqId) -> (i128, i128) {
        let cfs = self.cfs_rq(cfs_rq);
        let (mut avg, mut load) = (cfs.avg_vruntime, cfs.avg_load);
        if let Some(c) = self.curr_on_rq::<G>(cfs_rq) {
            let w = self.se_g::<G>(c).load.weight as i128;
            avg += self.entity_key::<G>(cfs_rq, c) * w;
            load += w;
        }
        (avg, load)
    }

    /// avg_vruntime(): V, rounded toward -inf so an entity at V is eligible.
    #[inline]
    pub fn avg_vruntime<const G: bool>(&self, cfs_rq: CfsRqId) -> u64 {
        let (avg, load) = self.avg_sums::<G>(cfs_rq);
        let mut a = avg;
        if load > 0 {
            if a < 0 {
                a -= load - 1;
            }
            a = div_i128(a, load);
        }
        (self.cfs_rq(cfs_rq).min_vruntime as i128 + a) as u64
    }

    /// entity_eligible(): Σ w_j (v_j - v0) >= (v_i - v0) Σ w_j.
    pub(crate) fn entity_eligible<const G: bool>(&self, cfs_rq: CfsRqId, se: SeId) -> bool {
        let (avg, load) = self.avg_sums::<G>(cfs_rq);
        avg >= self.entity_key::<G>(cfs_rq, se) * load
    }

    pub(crate) fn avg_add<const G: bool>(&mut self, cfs_rq: CfsRqId, se: SeId) {
        let w = self.se_g::<G>(se).load.weight as i128;
        let k = self.entity_key::<G>(cfs_rq, se);
        let cfs = self.cfs_rq_mut(cfs_rq);
        cfs.avg_vruntime += k * w;
        cfs.avg_load += w;
    }

    pub(crate) fn avg_sub<const G: bool>(&mut self, cfs_rq: CfsRqId, se: SeId) {
        let w = self.se_g::<G>(se).load.weight as i128;
        let k = self.entity_key::<G>(cfs_rq, se);
        let cfs = self.cfs_rq_mut(cfs_rq);
        cfs.avg_vruntime -= k * w;
        cfs.avg_load -= w;
    }

    /// update_entity_lag(): vlag = V - v, clamped to the virtual time of
    /// max(2 slices, one tick); from 6.18.17 (`lag_clamp_max_slice_plus_tick`)
    /// of the largest slice on the cfs_rq plus one tick.
    pub(crate) fn update_entity_lag<const G: bool>(&mut self, cfs_rq: CfsRqId, se: SeId) {
        let v = self.avg_vruntime::<G>(cfs_rq) as i128;
        let e = self.se_g::<G>(se);
        let lag = v - e.vruntime as i128;
        let span = if self.cfg.mech.lag_clamp_max_slice_plus_tick {
            // cfs_rq_max_slice() + TICK_NSEC. Deviation: every task has the
            // base slice (no custom slices), so the largest slice queued is
            // this entity's own, which is on the cfs_rq.
            e.slice + self.cfg.tick_ns
        } else {
            (2 * e.slice).max(self.cfg.tick_ns)
        };
        let limit = self.vdelta::<G>(span, se) as i128;
        self.se_mut_g::<G>(se).vlag = lag.clamp(-limit, limit) as i64;
    }

    /// update_deadline(): once vruntime passes the deadline, issue a new
    /// request of base_slice. Returns true when a new request was issued.
    #[inline]
    pub(crate) fn update_deadline<const G: bool>(&mut self, se: SeId) -> bool {
        let e = self.se_g::<G>(se);
        if e.vruntime < e.deadline {
            return false;
        }
        let slice = self.tun.sched_base_slice;
        let vs = self.vdelta::<G>(slice, se);
        let e = self.se_mut_g::<G>(se);
        e.slice = slice;
        e.deadline = e.vruntime + vs;
        true
    }

    /// pick_eevdf().
    pub(crate) fn pick_eevdf<const G: bool>(&self, cfs_rq: CfsRqId) -> Option<SeId> {
        let cfs = self.cfs_rq(cfs_rq);
        let mut curr = self.curr_on_rq::<G>(cfs_rq);
        let left = cfs.leftmost().map(|(_, t)| t);
        if cfs.nr_running == 1 {
            return curr.or(left);
        }
        if let Some(c) = curr {
            if !self.entity_eligible::<G>(cfs_rq, c) {
                curr = None;
            }
        }
        if self.cfg.features.on(Feature::NEXT_BUDDY) {
            if let Some(n) = cfs.next {
                if self.se_g::<G>(n).on_rq && self.entity_eligible::<G>(cfs_rq, n) {
                    return Some(n);
                }
            }
        }
        if self.cfg.features.on(Feature::RUN_TO_PARITY) {
            if let Some(c) = curr {
                let e = self.se_g::<G>(c);
                if e.vlag == e.deadline as i64 {
                    return Some(c);
                }
            }
        }
        let (avg, load) = self.avg_sums::<G>(cfs_rq);
        let v0 = cfs.min_vruntime as i128;
        let mut best: Option<SeId> = None;
        for &(v, t) in cfs.tasks_timeline.iter() {
            if avg < (v as i128 - v0) * load {
                break; // the rest are ineligible
            }
            if best.is_none_or(|b| self.se_g::<G>(t).deadline < self.se_g::<G>(b).deadline) {
                best = Some(t);
            }
        }
        if let Some(c) = curr {
            if best.is_none_or(|b| self.se_g::<G>(c).deadline < self.se_g::<G>(b).deadline) {
                best = Some(c);
            }
        }
        // "EEVDF scheduling fail, picking leftmost" (a rounding corner case).
        best.or(left).or(self.curr_on_rq::<G>(cfs_rq))
    }

    /// check_preempt_wakeup_fair()'s EEVDF part from 6.18.33
    /// (`fork_wakeup_no_preempt`): a forked wakee, or one still
    /// sched_delayed, never preempts; else preempt if the wakee is the pick,
    /// where the pick (pick_next_entity) completes the dequeue of a
    /// sched_delayed task it lands on and picks again. Deviation: the new
    /// NEXT_BUDDY (a buddy kept while its deadline is earlier; a WF_SYNC
    /// wakee preempting once curr has run migration_cost) is not modelled;
    /// NEXT_BUDDY is off by default, as on every 6.18.y.
    pub(crate) fn check_preempt_wakeup_eevdf<const G: bool>(
        &mut self,
        cfs_rq: CfsRqId,
        p: TaskId,
        pse: SeId,
        wake_flags: u32,
    ) {
        if wake_flags & WF_FORK != 0 || self.sched.tasks[p].se.sched_delayed {
            return;
        }
        let cpu = self.rq_of(cfs_rq);
        loop {
            match self.pick_eevdf::<G>(cfs_rq) {
                Some(n) if n == pse => return self.resched_curr(cpu),
                // curr, asleep with its switch pending, is left to schedule().
                Some(n)
                    if n.task_of().is_some()
                        && self.se_g::<G>(n).sched_delayed
                        && self.sched.rqs[cpu].curr != Some(n.tid()) =>
                {
                    crate::sched::fair::group::by_groups!(self.dequeue_delayed(cpu, n.tid()));
                }
                _ => return,
            }
        }
    }

    /// place_entity() of EEVDF: at V minus the saved lag, inflated by the
    /// load the entity joins (PLACE_LAG); a new deadline one vslice away
    /// (half for a new task with PLACE_DEADLINE_INITIAL).
    pub(crate) fn place_entity_eevdf<const G: bool>(&mut self, cfs_rq: CfsRqId, se: SeId, initial: bool) {
        let slice = self.tun.sched_base_slice;
        let mut vslice = self.vdelta::<G>(slice, se);
        let v = self.avg_vruntime::<G>(cfs_rq) as i128;
        let mut lag: i128 = 0;
        let cfs = self.cfs_rq(cfs_rq);
        if self.cfg.features.on(Feature::PLACE_LAG) && cfs.nr_running > 0 && !initial {
            lag = self.se_g::<G>(se).vlag as i128;
            let mut load = cfs.avg_load;
            if let Some(c) = self.curr_on_rq::<G>(cfs_rq) {
                load += self.se_g::<G>(c).load.weight as i128;
            }
            if load > 0 {
                lag = div_i128(lag * (load + self.se_g::<G>(se).load.weight as i128), load);
            }
        }
        if initial && self.cfg.features.on(Feature::PLACE_DEADLINE_INITIAL) {
            vslice /= 2;
        }
        let rel = self.cfg.features.on(Feature::PLACE_REL_DEADLINE);
        let se = self.se_mut_g::<G>(se);
        se.slice = slice;
        se.vruntime = (v - lag).max(0) as u64;
        if rel && se.rel_deadline {
            // PLACE_REL_DEADLINE: the deadline a migration dequeue kept
            // relative to vruntime (dequeue_task_fair).
            se.deadline = se.deadline.wrapping_add(se.vruntime);
            se.rel_deadline = false;
            return;
        }
        se.deadline = se.vruntime + vslice;
    }

    // ------------------------------------------------ DELAY_DEQUEUE (6.12)

    /// set_delayed(): the sleeping task stays queued, asleep.
    pub(crate) fn set_delayed(&mut self, cpu: usize, tid: TaskId) {
        self.sched.tasks[tid].se.sched_delayed = true;
        self.add_h_nr_delayed(cpu, tid, 1);
        self.sched.wasted.nr_delayed += 1;
        self.sched.wasted.track(self.sched.tasks[tid].nr_cpus_allowed, self.sched.rqs.len(), false);
    }

    /// clear_delayed(); with DELAY_ZERO, finish_delayed_dequeue_entity()
    /// also drops positive lag (the caller has counted the cfs_rq).
    pub(crate) fn finish_delayed_dequeue_entity(&mut self, tid: TaskId) {
        let se = &mut self.sched.tasks[tid].se;
        se.sched_delayed = false;
        self.sched.wasted.nr_delayed -= 1;
        if self.cfg.features.on(Feature::DELAY_ZERO) && se.vlag > 0 {
            se.vlag = 0;
        }
    }

    /// The pick reached a sched_delayed task: dequeue_entities(DEQUEUE_SLEEP
    /// | DEQUEUE_DELAYED) completes its sleep, then __block_task().
    pub(crate) fn dequeue_delayed<const G: bool>(&mut self, cpu: usize, tid: TaskId) {
        self.dequeue_task_fair::<G>(cpu, tid, DEQUEUE_SLEEP | DEQUEUE_DELAYED);
        self.block_task_accounting(cpu, tid);
    }

    /// requeue_delayed_entity(): a sched_delayed task is woken where it is
    /// still queued (ttwu_runnable). It keeps its place unless DELAY_ZERO
    /// finds it eligible by now: then it is placed again at zero lag.
    pub(crate) fn requeue_delayed_entity(&mut self, cpu: usize, tid: TaskId) {
        let cfs_rq = self.task_cfs_rq_on(tid, cpu);
        let se = SeId::task(tid);
        debug_assert!(self.se(se).sched_delayed && self.se(se).on_rq);
        if self.cfg.features.on(Feature::DELAY_ZERO) {
            self.update_entity_lag::<true>(cfs_rq, se);
            if self.se(se).vlag > 0 {
                let is_curr = self.cfs_rq(cfs_rq).curr == Some(se);
                self.cfs_rq_mut(cfs_rq).nr_running -= 1;
                if !is_curr {
                    self.avg_sub::<true>(cfs_rq, se);
                    let v = self.se(se).vruntime;
                    let removed = self.cfs_rq_mut(cfs_rq).tasks_timeline.remove(&(v, se));
                    debug_assert!(removed, "delayed task was not in the tree");
                }
                self.se_mut(se).vlag = 0;
                self.place_entity_eevdf::<true>(cfs_rq, se, false);
                if !is_curr {
                    let v = self.se(se).vruntime;
                    self.cfs_rq_mut(cfs_rq).tasks_timeline.insert((v, se));
                    self.avg_add::<true>(cfs_rq, se);
                }
                self.cfs_rq_mut(cfs_rq).nr_running += 1;
                self.update_min_vruntime::<true>(cfs_rq);
            }
        }
        self.update_load_avg::<true>(cfs_rq, Some(se));
        // clear_delayed(): runnable again.
        self.sched.tasks[tid].se.sched_delayed = false;
        self.add_h_nr_delayed(cpu, tid, -1);
        self.sched.wasted.nr_delayed -= 1;
        self.sched.wasted.track(self.sched.tasks[tid].nr_cpus_allowed, self.sched.rqs.len(), true);
    }

    /// set_delayed() / clear_delayed()'s h_nr_delayed: on the task's cfs_rq
    /// on `cpu` and every cfs_rq above it, up to a throttled one (whose
    /// counts its ancestors no longer hold; until 2026-11-28 the walk went
    /// on and took the root's count below zero: difftest --groups). From
    /// 6.18 a throttled cfs_rq stays queued: the walk goes to the root.
    fn add_h_nr_delayed(&mut self, cpu: usize, tid: TaskId, n: i32) {
        let mut q = Some(self.task_cfs_rq_on(tid, cpu));
        while let Some(c) = q {
            let cfs = self.cfs_rq_mut(c);
            cfs.h_nr_delayed = cfs.h_nr_delayed.wrapping_add_signed(n);
            let tg = cfs.tg;
            if tg != crate::sched::task_group::ROOT_TG && self.cfs_rq_throttled(c) && !self.cfg.mech.cfs_task_throttle {
                break;
            }
            q = self.sched.groups.tgs.get(tg).and_then(|g| g.se[cpu]).map(|e| self.cfs_rq_of(e));
        }
    }
}
