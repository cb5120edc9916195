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

/// sysctl_sched_idle_min_granularity (5.15): not scaled by the CPU count.
const SCHED_IDLE_MIN_GRANULARITY: u64 = 750_000;

/// `a * b / c` as the kernel's 64-bit products of a slice and a weight
/// would be if they could not overflow: in 64-bit arithmetic when the
/// product fits (one div), in 128 bits when not (the same quotient; a call
/// to __udivti3).
#[inline]
fn mul_div(a: u64, b: u64, c: u64) -> u64 {
    match a.checked_mul(b) {
        Some(x) => x / c,
        None => (a as u128 * b as u128 / c as u128) as u64,
    }
}

impl SchedEnv {
    /// __sched_period().
    pub(crate) fn sched_period(&self, nr: u64) -> u64 {
        if nr > self.tun.sched_nr_latency {
            nr * self.tun.sched_min_granularity
        } else {
            self.tun.sched_latency
        }
    }

    /// sched_slice(): the period times w / W at every level from the
    /// entity up to the root (for_each_sched_entity), W counting an entity
    /// that is not queued. With ALT_PERIOD (5.13 .. 6.5) the period is that
    /// of the whole runqueue's tasks (rq->cfs.h_nr_running), not of the
    /// entity's own cfs_rq; with BASE_SLICE it is at least min_granularity.
    pub fn sched_slice<const G: bool>(&self, cfs_rq: CfsRqId, se: SeId) -> u64 {
        let on_rq = self.se_g::<G>(se).on_rq;
        let nr_running = if self.cfg.features.on(Feature::ALT_PERIOD) {
            let cpu = if G { self.rq_of(cfs_rq) } else { cfs_rq.index() };
            self.sched.cfs_rqs[cpu].h_nr_running
        } else {
            self.cfs_rq(cfs_rq).nr_running
        };
        let mut slice = self.sched_period(nr_running as u64 + u64::from(!on_rq));
        let (mut level, mut q) = (Some(se), cfs_rq);
        while let Some(x) = level {
            let e = self.se_g::<G>(x);
            let w = e.load.weight as u64;
            let load = self.cfs_rq(q).load_weight + if e.on_rq { 0 } else { w };
            if load != 0 {
                slice = mul_div(slice, w, load);
            }
            level = self.parent_of::<G>(x);
            if let Some(p) = level {
                q = self.cfs_rq_of(p);
            }
        }
        if self.cfg.features.on(Feature::BASE_SLICE) {
            let idle_floor =
                self.cfg.mech.sched_idle_min_granularity && self.se_is_idle(se) && !self.sched_idle_cfs_rq::<G>(cfs_rq);
            slice = slice.max(if idle_floor { SCHED_IDLE_MIN_GRANULARITY } else { self.tun.sched_min_granularity });
        }
        slice
    }

    /// sched_idle_cfs_rq(): every entity queued on `cfs_rq` is idle.
    /// Deviation: the kernel keeps cfs_rq->idle_nr_running; the model counts
    /// the entities here, which only a SCHED_IDLE entity's slice asks for.
    fn sched_idle_cfs_rq<const G: bool>(&self, cfs_rq: CfsRqId) -> bool {
        let cfs = self.cfs_rq(cfs_rq);
        cfs.nr_running > 0
            && cfs.curr.is_none_or(|c| !self.se_g::<G>(c).on_rq || self.se_is_idle(c))
            && cfs.tasks_timeline.iter().all(|&(_, e)| self.se_is_idle(e))
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

#[cfg(test)]
mod tests {
    use crate::sched::task::SeId;
    use crate::sim::Sim;
    use crate::trace::Trace;

    /// A cgroup of two hogs beside a root hog, all on CPU 0 of a two-CPU
    /// 6.1: a grouped hog's slice is the runqueue's period (ALT_PERIOD: of
    /// its three tasks, 12 ms) times its share of the group times the group
    /// entity's share of the root (about 3 ms), as sched_slice() walks
    /// for_each_sched_entity; its own cfs_rq alone would give 6 ms.
    #[test]
    fn a_grouped_task_slices_through_every_level() {
        let text = "name = \"t\"\n[machine]\nsockets = 1\ncores_per_socket = 2\n[kernel]\nversion = \"6.1\"\nvmstat_kworkers = false\n\
                    [measure]\nduration = \"300ms\"\n[[cgroup]]\npath = \"/g\"\n\
                    [[task]]\nname = \"g\"\ncount = 2\ncgroup = \"/g\"\ncpus = [0]\nprogram = [{ run = \"1s\" }]\n\
                    [[task]]\nname = \"r\"\ncpus = [0]\nprogram = [{ run = \"1s\" }]\n";
        let sc = crate::scenario::load(text, "t.toml", &[]).expect("scenario");
        let mut sim = Sim::new(&sc, 1, false, Trace::new(None)).expect("sim");
        sim.run().expect("run");
        let k = &sim.w.m.kt.k;
        let g = (0..k.sched.tasks.len())
            .find(|&t| k.sched.tasks[t].comm.starts_with("g") && k.sched.tasks[t].se.on_rq)
            .expect("a grouped hog");
        let se = SeId::task(g);
        let q = k.cfs_rq_of(se);
        let gse = k.parent_entity(se).expect("in a group");
        let root = k.cfs_rq_of(gse);
        assert_eq!(k.cfs_rq(root).nr_running, 2, "the group entity and the root hog");
        let period = k.sched_period(3) as u128;
        let w = |e: SeId| k.se(e).load.weight as u128;
        let want = period * w(se) / k.cfs_rq(q).load_weight as u128 * w(gse) / k.cfs_rq(root).load_weight as u128;
        let got = k.sched_slice::<true>(q, se) as u128;
        assert!(got.abs_diff(want) <= 1, "slice {got} ns, want {want} ns");
        assert!(got < k.sched_slice::<true>(root, gse) as u128, "below the group entity's own slice");
    }

    /// A SCHED_IDLE hog beside a nice-0 one on CPU 0 of a two-CPU machine:
    /// its slice's floor is sysctl_sched_idle_min_granularity (0.75 ms)
    /// from 5.15, min_granularity (0.75 ms scaled by 2 CPUs) on 5.13.
    #[test]
    fn an_idle_entity_among_normal_ones_has_the_idle_floor() {
        let slice = |version: &str| {
            let text = format!(
                "name = \"t\"\n[machine]\nsockets = 1\ncores_per_socket = 2\n[kernel]\nversion = \"{version}\"\nvmstat_kworkers = false\n\
                 [measure]\nduration = \"100ms\"\n\
                 [[task]]\nname = \"i\"\npolicy = \"SCHED_IDLE\"\ncpus = [0]\nprogram = [{{ run = \"1s\" }}]\n\
                 [[task]]\nname = \"n\"\ncpus = [0]\nprogram = [{{ run = \"1s\" }}]\n"
            );
            let sc = crate::scenario::load(&text, "t.toml", &[]).expect("scenario");
            let mut sim = Sim::new(&sc, 1, false, Trace::new(None)).expect("sim");
            sim.run().expect("run");
            let k = &sim.w.m.kt.k;
            let i = (0..k.sched.tasks.len()).find(|&t| k.sched.tasks[t].comm == "i").expect("the idle hog");
            let se = SeId::task(i);
            k.sched_slice::<false>(k.cfs_rq_of(se), se)
        };
        assert_eq!(slice("6.1"), 750_000);
        assert_eq!(slice("5.13"), 1_500_000);
    }
}
