//! Models the CFS half of kernel/sched/fair.c (2.6.23 .. 6.5): run the
//! entity with the smallest vruntime; a waking task is placed at
//! min_vruntime minus a sleeper credit; the tick preempts once the entity
//! ran its slice `period * w / W`; a wakee preempts when it is more than
//! wakeup_granularity behind; next/last/skip buddies bend the pick.
//! The era's common entity code is `fair/entity.rs`.

use crate::kernel::features::Feature;
use crate::sched::env::SchedEnv;
use crate::sched::sched::CfsRqId;
use crate::sched::task::SeId;

impl SchedEnv {
    /// __sched_period().
    pub(crate) fn sched_period(&self, nr: u64) -> u64 {
        if nr > self.tun.sched_nr_latency {
            nr * self.tun.sched_min_granularity
        } else {
            self.tun.sched_latency
        }
    }

    /// sched_slice(): period * w / W (W counting the entity if not queued).
    pub fn sched_slice<const G: bool>(&self, cfs_rq: CfsRqId, se: SeId) -> u64 {
        let cfs = self.cfs_rq(cfs_rq);
        let se = self.se_g::<G>(se);
        let on_rq = se.on_rq;
        let nr = cfs.nr_running as u64 + u64::from(!on_rq);
        let mut load = cfs.load_weight;
        if !on_rq {
            load += se.load.weight as u64;
        }
        let period = self.sched_period(nr);
        let mut slice =
            if load == 0 { period } else { (period as u128 * se.load.weight as u128 / load as u128) as u64 };
        if self.cfg.features.on(Feature::BASE_SLICE) {
            slice = slice.max(self.tun.sched_min_granularity);
        }
        slice
    }

    /// wakeup_gran(): the wakeup granularity in the wakee's virtual time.
    pub(crate) fn wakeup_gran<const G: bool>(&self, se: SeId) -> u64 {
        self.vdelta::<G>(self.tun.sched_wakeup_granularity, se)
    }

    /// wakeup_preempt_entity(curr, se): -1 if se is not ahead of curr, 1 if
    /// it is more than a wakeup granularity ahead, else 0.
    pub(crate) fn wakeup_preempt_entity<const G: bool>(&self, curr: SeId, se: SeId) -> i32 {
        let vdiff = self.se_g::<G>(curr).vruntime as i128 - self.se_g::<G>(se).vruntime as i128;
        if vdiff <= 0 {
            return -1;
        }
        if vdiff > self.wakeup_gran::<G>(se) as i128 {
            1
        } else {
            0
        }
    }

    /// pick_next_entity(cfs_rq, curr) of 2.6.35 .. 6.5, with the skip, last
    /// and next buddies.
    pub(crate) fn pick_next_entity_cfs<const G: bool>(&self, cfs_rq: CfsRqId) -> Option<SeId> {
        let cfs = self.cfs_rq(cfs_rq);
        let curr = self.curr_on_rq::<G>(cfs_rq);
        let mut left = cfs.leftmost().map(|(_, t)| t);
        if let Some(c) = curr {
            if left.is_none_or(|l| self.se_g::<G>(c).vruntime < self.se_g::<G>(l).vruntime) {
                left = Some(c);
            }
        }
        let left = left?;
        let mut se = left;
        if cfs.skip == Some(se) {
            let second = if Some(se) == curr {
                cfs.leftmost().map(|(_, t)| t)
            } else {
                let mut s = cfs.tasks_timeline.iter().nth(1).map(|&(_, t)| t);
                if let Some(c) = curr {
                    if s.is_none_or(|x| self.se_g::<G>(c).vruntime < self.se_g::<G>(x).vruntime) {
                        s = Some(c);
                    }
                }
                s
            };
            if let Some(s) = second {
                if self.wakeup_preempt_entity::<G>(s, left) < 1 {
                    se = s;
                }
            }
        }
        if let Some(l) = cfs.last {
            if self.se_g::<G>(l).on_rq && self.wakeup_preempt_entity::<G>(l, left) < 1 {
                se = l;
            }
        }
        if let Some(n) = cfs.next {
            if self.se_g::<G>(n).on_rq && self.wakeup_preempt_entity::<G>(n, left) < 1 {
                se = n;
            }
        }
        Some(se)
    }

    /// check_preempt_tick() (CFS).
    #[inline]
    pub(crate) fn check_preempt_tick<const G: bool>(&mut self, cfs_rq: CfsRqId, curr: SeId) {
        let ideal = self.sched_slice::<G>(cfs_rq, curr);
        let se = self.se_g::<G>(curr);
        let delta_exec = se.sum_exec_runtime - se.prev_sum_exec_runtime;
        if delta_exec > ideal {
            self.resched_curr(self.rq_of(cfs_rq));
            self.clear_buddies(cfs_rq, curr);
            return;
        }
        if !self.cfg.mech.check_preempt_tick_vdiff {
            return; // 2.6.25 had only the slice test.
        }
        if delta_exec < self.tun.sched_min_granularity {
            return;
        }
        let Some((lv, _)) = self.cfs_rq(cfs_rq).leftmost() else { return };
        let delta = self.se_g::<G>(curr).vruntime as i128 - lv as i128;
        if delta < 0 {
            return;
        }
        if delta > ideal as i128 {
            self.resched_curr(self.rq_of(cfs_rq));
        }
    }

    /// place_entity() of CFS: a new task at min_vruntime (+ one vslice with
    /// START_DEBIT); a waking one no further back than min_vruntime minus
    /// the sleeper credit (NEW_/GENTLE_FAIR_SLEEPERS).
    pub(crate) fn place_entity_cfs<const G: bool>(&mut self, cfs_rq: CfsRqId, se: SeId, initial: bool) {
        let cfs = self.cfs_rq(cfs_rq);
        let mut vruntime = cfs.min_vruntime;
        if initial {
            // Deviation: task_fork_fair starts the child at the
            // parent's vruntime and place_entity takes the max; the
            // model's tasks are launched by no parent on that
            // runqueue, so the child starts at min_vruntime (+ the
            // START_DEBIT vslice), which is where the max lands
            // whenever the parent is not far ahead.
            if self.cfg.features.on(Feature::START_DEBIT) {
                let s = self.sched_slice::<G>(cfs_rq, se);
                vruntime += self.vdelta::<G>(s, se);
            }
            self.se_mut_g::<G>(se).vruntime = vruntime;
            return;
        }
        let f = &self.cfg.features;
        let mut thresh = self.tun.sched_latency;
        if self.se_is_idle(se) && self.cfg.mech.idle_sleeper_credit_min_granularity {
            thresh = self.tun.sched_min_granularity;
        }
        if f.on(Feature::GENTLE_FAIR_SLEEPERS) {
            thresh >>= 1;
        }
        if f.on(Feature::GENTLE_FAIR_SLEEPERS) || f.on(Feature::NEW_FAIR_SLEEPERS) {
            vruntime = vruntime.saturating_sub(thresh);
        }
        let se = self.se_mut_g::<G>(se);
        se.vruntime = se.vruntime.max(vruntime);
    }

    /// check_preempt_wakeup() of CFS: set the next buddy (NEXT_BUDDY), and
    /// preempt if the wakee is more than wakeup_granularity behind curr in
    /// virtual time (then curr is the last buddy, LAST_BUDDY).
    pub(crate) fn check_preempt_wakeup_cfs<const G: bool>(&mut self, cfs_rq: CfsRqId, curr: SeId, p: SeId) {
        let scale = self.cfs_rq(cfs_rq).nr_running as u64 >= self.tun.sched_nr_latency;
        if self.cfg.features.on(Feature::NEXT_BUDDY) && scale {
            self.cfs_rq_mut(cfs_rq).next = Some(p);
        }
        if self.wakeup_preempt_entity::<G>(curr, p) == 1 {
            self.resched_curr(self.rq_of(cfs_rq));
            if self.cfg.features.on(Feature::LAST_BUDDY) && scale && self.se_g::<G>(curr).on_rq {
                self.cfs_rq_mut(cfs_rq).last = Some(curr);
            }
        }
    }
}
