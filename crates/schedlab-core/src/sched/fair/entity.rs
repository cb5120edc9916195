//! Models the entity code of kernel/sched/fair.c that both eras share:
//! update_curr, min_vruntime, enqueue/dequeue_entity, put_prev/set_next,
//! PELT updates, migration, the tick and wakeup preemption entry points.
//! Where the eras differ it calls into `fair/cfs.rs` (2.6.23 .. 6.5) or
//! `fair/eevdf.rs` (6.6+), chosen by `cfg.mech.fair`.

use crate::kernel::features::Feature;
use crate::kernel::FairEra;
use crate::prio::{calc_delta_fair, Policy};
use crate::sched::class::{DEQUEUE_DELAYED, DEQUEUE_MIGRATING, DEQUEUE_SLEEP, DEQUEUE_THROTTLE};
use crate::sched::env::SchedEnv;
use crate::sched::pelt;
use crate::sched::sched::{CfsRq, CfsRqId};
use crate::sched::task::{SchedEntity, SeId, TaskId, TaskState};

impl SchedEnv {
    /// The entity `id` names (a task's, &p->se).
    #[inline]
    pub(crate) fn se(&self, id: SeId) -> &SchedEntity {
        // A group entity's id has the top bit set, so it is past the end
        // of the task table: the bounds check a task's entity has anyway
        // is the only test (no second branch on the id's kind).
        match self.sched.tasks.get(id.raw()) {
            Some(t) => &t.se,
            None => &self.sched.groups.ses[id.group_index()].se,
        }
    }

    #[inline]
    pub(crate) fn se_mut(&mut self, id: SeId) -> &mut SchedEntity {
        match self.sched.tasks.get_mut(id.raw()) {
            Some(t) => &mut t.se,
            None => &mut self.sched.groups.ses[id.group_index()].se,
        }
    }

    /// se() where `G` false promises that no task group exists but the
    /// root: every entity is a task's.
    #[inline(always)]
    pub(crate) fn se_g<const G: bool>(&self, id: SeId) -> &SchedEntity {
        if G {
            self.se(id)
        } else {
            &self.sched.tasks[id.raw()].se
        }
    }

    #[inline(always)]
    pub(crate) fn se_mut_g<const G: bool>(&mut self, id: SeId) -> &mut SchedEntity {
        if G {
            self.se_mut(id)
        } else {
            &mut self.sched.tasks[id.raw()].se
        }
    }

    /// se_is_idle(): a SCHED_IDLE task's entity.
    #[inline]
    pub(crate) fn se_is_idle(&self, id: SeId) -> bool {
        match self.sched.tasks.get(id.raw()) {
            Some(t) => t.is_idle_policy(),
            None => {
                let q = self.sched.groups.ses[id.group_index()].my_q;
                self.sched.groups.tgs[self.cfs_rq(q).tg].idle
            }
        }
    }

    /// The cfs_rq `id` names.
    #[inline]
    pub(crate) fn cfs_rq(&self, id: CfsRqId) -> &CfsRq {
        &self.sched.cfs_rqs[id.index()]
    }

    #[inline]
    pub(crate) fn cfs_rq_mut(&mut self, id: CfsRqId) -> &mut CfsRq {
        &mut self.sched.cfs_rqs[id.index()]
    }

    /// rq_of(): the CPU of a cfs_rq.
    #[inline]
    pub(crate) fn rq_of(&self, id: CfsRqId) -> usize {
        self.sched.cfs_rqs[id.index()].cpu
    }

    #[inline]
    pub(crate) fn vdelta<const G: bool>(&self, delta: u64, se: SeId) -> u64 {
        let se = self.se_g::<G>(se);
        calc_delta_fair(delta, se.load.weight, se.load.inv_weight)
    }

    #[inline]
    pub(crate) fn curr_on_rq<const G: bool>(&self, cfs_rq: CfsRqId) -> Option<SeId> {
        self.cfs_rq(cfs_rq).curr.filter(|&c| self.se_g::<G>(c).on_rq)
    }

    /// The fair part of update_curr(): `se` is cfs_rq->curr.
    #[inline(always)]
    pub fn update_curr_fair<const G: bool>(&mut self, cfs_rq: CfsRqId, se: SeId, delta: u64) {
        let dv = self.vdelta::<G>(delta, se);
        self.se_mut_g::<G>(se).vruntime += dv;
        if self.cfg.mech.fair == FairEra::Eevdf
            && self.se_g::<G>(se).on_rq
            && self.update_deadline::<G>(se)
            && self.cfs_rq(cfs_rq).nr_running > 1
        {
            // 6.6 update_deadline: the request is used up -> reschedule.
            self.clear_buddies(cfs_rq, se);
            self.resched_curr(self.rq_of(cfs_rq));
        }
        self.update_min_vruntime::<G>(cfs_rq);
    }

    /// update_min_vruntime(): monotonic, max(old, min(curr, leftmost)).
    pub fn update_min_vruntime<const G: bool>(&mut self, cfs_rq: CfsRqId) {
        let cfs = self.cfs_rq(cfs_rq);
        let mut v = cfs.min_vruntime;
        let curr = self.curr_on_rq::<G>(cfs_rq);
        if let Some(c) = curr {
            v = self.se_g::<G>(c).vruntime;
        }
        if let Some((lv, _)) = cfs.leftmost() {
            v = if curr.is_some() { v.min(lv) } else { lv };
        }
        let cfs = self.cfs_rq_mut(cfs_rq);
        if v > cfs.min_vruntime {
            // avg_vruntime_update: keys are relative to min_vruntime.
            cfs.avg_vruntime -= cfs.avg_load * (v - cfs.min_vruntime) as i128;
            cfs.min_vruntime = v;
        }
    }

    pub fn clear_buddies(&mut self, cfs_rq: CfsRqId, se: SeId) {
        let cfs = self.cfs_rq_mut(cfs_rq);
        if cfs.next == Some(se) {
            cfs.next = None;
        }
        if cfs.last == Some(se) {
            cfs.last = None;
        }
        if cfs.skip == Some(se) {
            cfs.skip = None;
        }
    }

    // --------------------------------------------------- class operations

    /// place_entity() for the era (fair/cfs.rs, fair/eevdf.rs).
    fn place_entity<const G: bool>(&mut self, cfs_rq: CfsRqId, se: SeId, initial: bool) {
        match self.cfg.mech.fair {
            FairEra::Cfs => self.place_entity_cfs::<G>(cfs_rq, se, initial),
            FairEra::Eevdf => self.place_entity_eevdf::<G>(cfs_rq, se, initial),
        }
    }

    /// The entity pick of pick_next_task_fair(): a still runnable previous
    /// task is cfs_rq->curr and competes with the tree.
    /// With DELAY_DEQUEUE (6.12) the pick may land on a sched_delayed task:
    /// its dequeue completes there and the pick starts again
    /// (pick_task_fair's `goto again`).
    /// From 6.18 a throttled cfs_rq on the way down stays queued and the
    /// pick goes on; the task picked parks when it returns to user space
    /// (fair/throttle_task.rs).
    #[inline] // into pick_next_task(), the class walk
    pub fn pick_next_task_fair<const G: bool>(&mut self, cpu: usize) -> Option<TaskId> {
        loop {
            if self.sched.cfs_rqs[cpu].nr_running == 0 {
                return None;
            }
            // Down the tree, one level at a time: each cfs_rq's pick among
            // its own entities.
            let mut cfs_rq = CfsRqId::root(cpu);
            let mut throttled = false;
            let se = loop {
                if G && self.sched.groups.bandwidth_used && self.check_cfs_rq_runtime(cfs_rq) {
                    if !self.cfg.mech.cfs_task_throttle {
                        // Throttled on the way down (fair/bandwidth.rs): again.
                        break None;
                    }
                    throttled = true;
                }
                let se = match self.cfg.mech.fair {
                    FairEra::Cfs => self.pick_next_entity_cfs::<G>(cfs_rq)?,
                    FairEra::Eevdf => self.pick_eevdf::<G>(cfs_rq)?,
                };
                match self.group_cfs_rq(se).filter(|_| G) {
                    Some(q) => cfs_rq = q,
                    None => break Some(se),
                }
            };
            let Some(se) = se else { continue };
            if !self.se_g::<G>(se).sched_delayed {
                if G && throttled {
                    self.task_throttle_setup_work(se.tid());
                }
                return Some(se.tid());
            }
            self.dequeue_delayed::<G>(cpu, se.tid());
        }
    }

    /// put_prev_entity(): the previous task goes back into the tree.
    /// A sched_delayed task goes back too, asleep: it does not start a wait
    /// (sched_info_depart() requeues only a task still running).
    #[inline]
    pub fn put_prev_task_fair<const G: bool>(&mut self, cpu: usize, tid: TaskId) {
        let se = SeId::task(tid);
        let cfs_rq = self.cfs_rq_of_on::<G>(se, cpu);
        self.update_load_avg::<G>(cfs_rq, Some(se));
        let v = self.se_g::<G>(se).vruntime;
        let cfs = self.cfs_rq_mut(cfs_rq);
        debug_assert_eq!(cfs.curr, Some(se));
        cfs.curr = None;
        cfs.tasks_timeline.insert((v, se));
        if self.cfg.mech.fair == FairEra::Eevdf {
            self.avg_add::<G>(cfs_rq, se);
        }
        if !self.se_g::<G>(se).sched_delayed {
            self.sched.tasks[tid].stats.wait_start = Some(self.now);
        }
    }

    /// set_next_entity(): the picked task leaves the tree and becomes curr.
    pub fn set_next_entity<const G: bool>(&mut self, cpu: usize, tid: TaskId) {
        let se = SeId::task(tid);
        let cfs_rq = self.cfs_rq_of_on::<G>(se, cpu);
        self.clear_buddies(cfs_rq, se);
        let v = self.se_g::<G>(se).vruntime;
        if self.cfs_rq(cfs_rq).curr != Some(se) {
            if self.cfg.mech.fair == FairEra::Eevdf {
                self.avg_sub::<G>(cfs_rq, se);
            }
            let removed = self.cfs_rq_mut(cfs_rq).tasks_timeline.remove(&(v, se));
            debug_assert!(removed, "picked task was not in the tree");
            // PELT before it becomes curr, as the kernel's set_next_entity()
            // orders it: the time it waited in the tree is not running time.
            self.update_load_avg::<G>(cfs_rq, Some(se));
            self.cfs_rq_mut(cfs_rq).curr = Some(se);
        } else {
            self.update_load_avg::<G>(cfs_rq, Some(se));
        }
        // A CPU still leaving its idle state or in an interrupt handler
        // (Rq::busy_until) runs the task from then on.
        let now = self.now.max(self.sched.rqs[cpu].busy_until);
        let seq = self.sched.next_list_seq();
        let t = &mut self.sched.tasks[tid];
        t.se.exec_start = now;
        t.se.prev_sum_exec_runtime = t.se.sum_exec_runtime;
        if self.cfg.mech.fair == FairEra::Eevdf {
            // RUN_TO_PARITY marker (protect_slice): vlag == deadline.
            t.se.vlag = t.se.deadline as i64;
        }
        t.list_seq = seq;
        let w = t.stats.picked(now);
        self.sched.rqs[cpu].stats.wait_ns += w;
        // The group entities above, up to the first that is current already
        // (an ancestor the previous task shared).
        let mut e = self.parent_of::<G>(se);
        while let Some(x) = e {
            let q = self.cfs_rq_of(x);
            if self.cfs_rq(q).curr == Some(x) {
                break;
            }
            self.clear_buddies(q, x);
            if self.se_g::<G>(x).on_rq {
                if self.cfg.mech.fair == FairEra::Eevdf {
                    self.avg_sub::<G>(q, x);
                }
                let v = self.se_g::<G>(x).vruntime;
                let removed = self.cfs_rq_mut(q).tasks_timeline.remove(&(v, x));
                debug_assert!(removed, "a picked group entity was not in the tree");
            }
            self.update_load_avg::<true>(q, Some(x));
            self.cfs_rq_mut(q).curr = Some(x);
            let eevdf = self.cfg.mech.fair == FairEra::Eevdf;
            let g = self.se_mut_g::<G>(x);
            g.exec_start = now;
            g.prev_sum_exec_runtime = g.sum_exec_runtime;
            if eevdf {
                g.vlag = g.deadline as i64;
            }
            e = self.parent_entity(x);
        }
    }

    /// enqueue_entity(): `se` joins `cfs_rq`. `initial`: a new task;
    /// `wakeup`: ENQUEUE_WAKEUP. `running`: the entity is (or holds) the
    /// CPU's running task, which has not switched out yet: it is curr
    /// again, not in the tree.
    pub(crate) fn enqueue_entity<const G: bool>(
        &mut self,
        cfs_rq: CfsRqId,
        se: SeId,
        initial: bool,
        wakeup: bool,
        running: bool,
    ) {
        self.se_mut_g::<G>(se).norm_min_vruntime = None;
        // PELT: bring the cfs_rq up to date, then attach or update the entity.
        if !self.se_g::<G>(se).attached {
            self.update_load_avg::<G>(cfs_rq, None);
            let w = self.se_g::<G>(se).load.weight as u64;
            let mut se_avg = self.se_g::<G>(se).avg;
            pelt::attach_entity(&mut self.cfs_rq_mut(cfs_rq).avg, &mut se_avg, w);
            let e = self.se_mut_g::<G>(se);
            e.avg = se_avg;
            e.attached = true;
            if G {
                self.add_tg_cfs_propagate(cfs_rq, se_avg.load_sum as i64);
                self.update_tg_load_avg(cfs_rq);
            }
        } else {
            self.update_load_avg::<G>(cfs_rq, Some(se));
        }
        if G {
            self.update_cfs_group(se);
        }
        if initial || wakeup || self.cfg.mech.fair == FairEra::Eevdf {
            self.place_entity::<G>(cfs_rq, se, initial);
        }
        let (w, v) = (self.se_g::<G>(se).load.weight as u64, self.se_g::<G>(se).vruntime);
        let cfs = self.cfs_rq_mut(cfs_rq);
        cfs.load_weight += w;
        cfs.nr_running += 1;
        if running {
            cfs.curr = Some(se);
        } else {
            cfs.tasks_timeline.insert((v, se));
            if self.cfg.mech.fair == FairEra::Eevdf {
                self.avg_add::<G>(cfs_rq, se);
            }
        }
        self.se_mut_g::<G>(se).on_rq = true;
        self.update_min_vruntime::<G>(cfs_rq);
        if G && self.cfs_rq(cfs_rq).nr_running == 1 {
            if self.sched.groups.bandwidth_used {
                self.check_enqueue_throttle(cfs_rq); // fair/bandwidth.rs
                if self.cfg.mech.cfs_task_throttle {
                    self.pelt_clock_resume(cfs_rq); // fair/throttle_task.rs
                }
            }
            let (cpu, tg) = (self.cfs_rq(cfs_rq).cpu, self.cfs_rq(cfs_rq).tg);
            self.list_add_leaf_cfs_rq(cpu, tg); // fair/blocked.rs
        }
    }

    /// enqueue_task_fair(). `initial`: a new task; `wakeup`: ENQUEUE_WAKEUP.
    /// The first pass enqueues each entity up the tree that is not queued
    /// yet; the second updates the load and weight of the queued ancestors.
    /// Both stop at a throttled cfs_rq (fair/bandwidth.rs): the task then
    /// waits there and the runqueue does not count it. Returns whether it
    /// counts.
    pub fn enqueue_task_fair<const G: bool>(&mut self, cpu: usize, tid: TaskId, initial: bool, wakeup: bool) -> bool {
        if G && self.sched.tasks[tid].throttled && self.enqueue_throttled_task(cpu, tid) {
            return false; // Parked again (6.18, fair/throttle_task.rs).
        }
        self.update_curr(cpu);
        let task_se = SeId::task(tid);
        let t = &self.sched.tasks[tid];
        let (mut idle, delayed) = (t.is_idle_policy(), t.se.sched_delayed);
        let seq = self.sched.next_list_seq();
        let task_running = self.sched.rqs[cpu].curr == Some(tid);
        let (mut initial, mut wakeup) = (initial, wakeup);
        let mut se = Some(task_se);
        while let Some(e) = se {
            if self.se_g::<G>(e).on_rq {
                break;
            }
            let cfs_rq = self.cfs_rq_of_on::<G>(e, cpu);
            let running = if e == task_se { task_running } else { self.entity_is_running(cpu, e) };
            self.enqueue_entity::<G>(cfs_rq, e, initial, wakeup, running);
            self.account_h_nr::<G>(cfs_rq, 1, idle, delayed);
            idle |= G && self.cfs_rq_is_idle(cfs_rq);
            (initial, wakeup) = (false, true);
            se = self.parent_of::<G>(e);
            if G && self.cfs_rq_throttled(cfs_rq) && !self.cfg.mech.cfs_task_throttle {
                return self.enqueue_throttled(tid, task_running, seq);
            }
        }
        // (Without groups the task's entity is never queued already.)
        while let Some(e) = se.filter(|_| G) {
            let cfs_rq = self.cfs_rq_of(e);
            self.update_load_avg::<true>(cfs_rq, Some(e));
            self.update_cfs_group(e);
            self.account_h_nr::<true>(cfs_rq, 1, idle, delayed);
            idle |= self.cfs_rq_is_idle(cfs_rq);
            se = self.parent_entity(e);
            if self.cfs_rq_throttled(cfs_rq) && !self.cfg.mech.cfs_task_throttle {
                return self.enqueue_throttled(tid, task_running, seq);
            }
        }
        if !task_running {
            // A migrating task keeps the wait it began on its old runqueue
            // (__update_stats_wait_end/_start with task_on_rq_migrating).
            self.sched.tasks[tid].stats.wait_start.get_or_insert(self.now);
        }
        self.sched.tasks[tid].list_seq = seq;
        if !delayed {
            self.sched.wasted.track(self.sched.tasks[tid].nr_cpus_allowed, self.sched.rqs.len(), true);
        }
        self.add_nr_running(cpu);
        true
    }

    /// dequeue_entity(): `se` leaves `cfs_rq` (a sleep with DEQUEUE_SLEEP).
    pub(crate) fn dequeue_entity<const G: bool>(&mut self, cfs_rq: CfsRqId, se: SeId, sleep: bool) {
        if !sleep && self.cfg.mech.fair == FairEra::Cfs && self.cfg.mech.cfs_renorm_fixed {
            // dequeue_entity since "sched/fair: Fix min_vruntime tracking"
            // (2016; every modelled version from 4.16 has it): normalize
            // after update_curr(), which counted @se if it held min_vruntime
            // back, and before update_min_vruntime() discounts it.
            let m = self.cfs_rq(cfs_rq).min_vruntime;
            self.se_mut_g::<G>(se).norm_min_vruntime = Some(m);
        }
        self.update_load_avg::<G>(cfs_rq, Some(se));
        self.clear_buddies(cfs_rq, se);
        if self.cfg.mech.fair == FairEra::Eevdf {
            self.update_entity_lag::<G>(cfs_rq, se);
            if !sleep && self.cfg.features.on(Feature::PLACE_REL_DEADLINE) {
                let se = self.se_mut_g::<G>(se);
                se.deadline = se.deadline.wrapping_sub(se.vruntime);
                se.rel_deadline = true;
            }
        }
        let is_curr = self.cfs_rq(cfs_rq).curr == Some(se);
        let (w, v) = (self.se_g::<G>(se).load.weight as u64, self.se_g::<G>(se).vruntime);
        if is_curr {
            self.cfs_rq_mut(cfs_rq).curr = None;
        } else {
            if self.cfg.mech.fair == FairEra::Eevdf {
                self.avg_sub::<G>(cfs_rq, se);
            }
            let removed = self.cfs_rq_mut(cfs_rq).tasks_timeline.remove(&(v, se));
            debug_assert!(removed, "dequeued entity was not in the tree");
        }
        let cfs = self.cfs_rq_mut(cfs_rq);
        cfs.load_weight -= w;
        cfs.nr_running -= 1;
        self.se_mut_g::<G>(se).on_rq = false;
        if G {
            self.update_cfs_group(se);
            if self.sched.groups.bandwidth_used {
                self.return_cfs_rq_runtime(cfs_rq); // fair/bandwidth.rs
                if self.cfg.mech.cfs_task_throttle && self.cfs_rq(cfs_rq).nr_running == 0 {
                    self.pelt_clock_stop_if_throttled(cfs_rq); // fair/throttle_task.rs
                }
            }
        }
        self.update_min_vruntime::<G>(cfs_rq);
    }

    /// dequeue_task_fair() with the kernel's flags. Returns false when
    /// DELAY_DEQUEUE keeps a sleeping, ineligible task queued (6.12
    /// dequeue_entity()); DEQUEUE_DELAYED completes such a dequeue.
    /// Each entity up the tree leaves its cfs_rq until one that keeps some
    /// weight; with a sleeping task that cfs_rq's entity becomes the next
    /// buddy of its parent (set_next_buddy). The ancestors above have their
    /// load and weight updated.
    /// Deviation: group entities are never delayed (6.12 delays them too).
    pub fn dequeue_task_fair<const G: bool>(&mut self, cpu: usize, tid: TaskId, flags: u32) -> bool {
        if G && self.sched.tasks[tid].throttled {
            self.dequeue_throttled_task(cpu, tid, flags); // fair/throttle_task.rs
            return true;
        }
        let task_se = SeId::task(tid);
        let cfs_rq = self.cfs_rq_of_on::<G>(task_se, cpu);
        let mut sleep = flags & DEQUEUE_SLEEP != 0;
        let task_sleep = sleep;
        let finish_delayed = flags & DEQUEUE_DELAYED != 0;
        self.update_curr(cpu);
        if sleep
            && !finish_delayed
            && flags & DEQUEUE_THROTTLE == 0
            && self.cfg.mech.fair == FairEra::Eevdf
            && self.cfg.features.on(Feature::DELAY_DEQUEUE)
            && !self.entity_eligible::<G>(cfs_rq, task_se)
        {
            self.clear_buddies(cfs_rq, task_se);
            self.update_load_avg::<G>(cfs_rq, Some(task_se));
            self.set_delayed(cpu, tid);
            return false;
        }
        let t = &self.sched.tasks[tid];
        let (mut idle, delayed) = (t.is_idle_policy(), t.se.sched_delayed);
        let mut se = Some(task_se);
        while let Some(e) = se {
            let cfs_rq = self.cfs_rq_of_on::<G>(e, cpu);
            self.dequeue_entity::<G>(cfs_rq, e, sleep);
            if e == task_se && flags & DEQUEUE_MIGRATING != 0 && self.sched.tasks[tid].se.attached {
                // update_load_avg(DO_DETACH) in dequeue_entity(): the load
                // leaves before the levels above are reweighted.
                self.detach_task_load_avg(cfs_rq, tid);
            }
            self.account_h_nr::<G>(cfs_rq, -1, idle, delayed);
            idle |= G && self.cfs_rq_is_idle(cfs_rq);
            se = self.parent_of::<G>(e);
            if G && flags & DEQUEUE_THROTTLE != 0 {
                self.record_throttle_clock(cfs_rq); // fair/throttle_task.rs
            }
            if G && self.cfs_rq_throttled(cfs_rq) && !self.cfg.mech.cfs_task_throttle {
                return self.dequeue_throttled(tid, finish_delayed);
            }
            if self.cfs_rq(cfs_rq).load_weight > 0 {
                if let Some(p) = se.filter(|_| task_sleep) {
                    self.set_next_buddy(p);
                }
                break;
            }
            sleep = true;
        }
        while let Some(e) = se.filter(|_| G) {
            let cfs_rq = self.cfs_rq_of(e);
            self.update_load_avg::<true>(cfs_rq, Some(e));
            self.update_cfs_group(e);
            self.account_h_nr::<true>(cfs_rq, -1, idle, delayed);
            idle |= self.cfs_rq_is_idle(cfs_rq);
            se = self.parent_entity(e);
            if flags & DEQUEUE_THROTTLE != 0 {
                self.record_throttle_clock(cfs_rq);
            }
            if self.cfs_rq_throttled(cfs_rq) && !self.cfg.mech.cfs_task_throttle {
                return self.dequeue_throttled(tid, finish_delayed);
            }
        }
        if !delayed {
            self.sched.wasted.track(self.sched.tasks[tid].nr_cpus_allowed, self.sched.rqs.len(), false);
        }
        self.sub_nr_running(cpu);
        if finish_delayed {
            self.finish_delayed_dequeue_entity(tid);
        }
        true
    }

    /// migrate_task_rq_fair(): the task changes runqueue while not queued.
    /// CFS keeps vruntime relative to min_vruntime across the move; PELT
    /// removes the task's contribution from the old cfs_rq.
    pub fn migrate_task_rq_fair(&mut self, tid: TaskId, old: usize, new: usize) {
        let old_q = self.task_cfs_rq_on(tid, old);
        if self.cfg.mech.fair == FairEra::Cfs {
            // A queued task was normalized by its dequeue; 2.6.x did that
            // after update_min_vruntime() had already stepped past @se when
            // it was the leftmost (its cfs_rq->curr was the stopper's
            // prev, or another task), so a pulled leftmost task arrives
            // behind the new min_vruntime by the gap to the next one. A
            // sleeping (waking) task is normalized against the old
            // min_vruntime as it is now.
            let old_min = self.cfs_rq(old_q).min_vruntime;
            let se = &mut self.sched.tasks[tid].se;
            let v = se.vruntime;
            let base = se.norm_min_vruntime.take().unwrap_or(old_min);
            let rel = v as i128 - base as i128;
            if self.cfg.mech.cfs_renorm_fixed {
                // enqueue_entity() renormalizes a migrated task after
                // update_curr() of the destination ("placed at the current
                // moment in time"); 2.6.x added the stale min_vruntime first.
                self.update_curr(new);
            }
            let new_min = self.cfs_rq(self.task_cfs_rq_on(tid, new)).min_vruntime;
            self.sched.tasks[tid].se.vruntime = (new_min as i128 + rel).max(0) as u64;
        }
        if self.sched.tasks[tid].se.attached {
            // A task that was not queued (a wakeup's migration); a queued
            // one was detached by its dequeue (DEQUEUE_MIGRATING).
            // Deviation: the kernel's remove_entity_load_avg() leaves its
            // load on the old cfs_rq until that one's next update
            // (removed.*, propagating -runnable_avg × divider >> 10); here
            // it leaves at once, as a pulled task's does (-load_sum).
            self.update_load_avg::<true>(old_q, Some(SeId::task(tid)));
            self.detach_task_load_avg(old_q, tid);
        }
    }

    /// task_tick_fair(): PELT and tick preemption.
    #[inline]
    pub fn task_tick_fair<const G: bool>(&mut self, cpu: usize, curr: TaskId) {
        if self.sched.tasks[curr].state != TaskState::Runnable {
            return;
        }
        // entity_tick() at every level, from the task up.
        let mut e = Some(SeId::task(curr));
        while let Some(se) = e {
            let cfs_rq = self.cfs_rq_of_on::<G>(se, cpu);
            self.update_load_avg::<G>(cfs_rq, Some(se));
            if G {
                self.update_cfs_group(se);
            }
            if self.cfg.mech.fair == FairEra::Cfs && self.cfs_rq(cfs_rq).nr_running > 1 {
                self.check_preempt_tick::<G>(cfs_rq, se);
            }
            e = self.parent_of::<G>(se);
        }
    }

    /// check_preempt_wakeup() / check_preempt_wakeup_fair(), with the
    /// wakeup's WF_* flags.
    pub fn check_preempt_wakeup_fair(&mut self, cpu: usize, curr: TaskId, p: TaskId, wake_flags: u32) {
        if !self.cfg.features.on(Feature::WAKEUP_PREEMPTION) {
            return;
        }
        let curr_idle = self.sched.tasks[curr].is_idle_policy();
        let p_idle = self.sched.tasks[p].is_idle_policy();
        if curr_idle && !p_idle {
            self.resched_curr(cpu);
            return;
        }
        if self.sched.tasks[p].policy != Policy::Normal {
            return; // Batch and idle tasks do not preempt.
        }
        if self.sched.groups.bandwidth_used {
            // Queued on a throttled cfs_rq (fair/bandwidth.rs); from 6.18
            // task_is_throttled(): parked (fair/throttle_task.rs).
            let throttled = if self.cfg.mech.cfs_task_throttle {
                self.sched.tasks[p].throttled
            } else {
                self.throttled_hierarchy(self.cfs_rq_of(SeId::task(p)))
            };
            if throttled {
                return;
            }
        }
        self.update_curr(cpu);
        let (mut se, mut pse) = (SeId::task(curr), SeId::task(p));
        let mut cfs_rq = CfsRqId::root(cpu);
        if self.sched.groups.any() {
            // find_matching_se(): the ancestors that share a cfs_rq; an
            // idle group's entity yields to a non-idle sibling and does not
            // preempt one (5.15+).
            (se, pse) = self.find_matching_se(se, pse);
            cfs_rq = self.cfs_rq_of(se);
            let (ci, pi) = (self.se_is_idle(se), self.se_is_idle(pse));
            if ci && !pi {
                self.resched_curr(cpu);
                return;
            }
            if ci != pi {
                return;
            }
        }
        match self.cfg.mech.fair {
            FairEra::Cfs => self.check_preempt_wakeup_cfs::<true>(cfs_rq, se, pse),
            FairEra::Eevdf if self.cfg.mech.fork_wakeup_no_preempt => {
                self.check_preempt_wakeup_eevdf::<true>(cfs_rq, p, pse, wake_flags);
                // eevdf.rs
            }
            FairEra::Eevdf => {
                // Preempt if the wakee is what EEVDF would pick now.
                if self.pick_eevdf::<true>(cfs_rq) == Some(pse) {
                    self.resched_curr(cpu);
                }
            }
        }
    }

    /// yield_task_fair().
    pub fn yield_task_fair(&mut self, tid: TaskId) {
        let cpu = self.sched.tasks[tid].cpu;
        let se = SeId::task(tid);
        let cfs_rq = self.cfs_rq_of(se);
        if self.sched.cfs_rqs[cpu].h_nr_running <= 1 {
            return;
        }
        self.clear_buddies(cfs_rq, se);
        self.update_curr(cpu);
        match self.cfg.mech.fair {
            FairEra::Cfs => {
                // set_skip_buddy(): at every level.
                let mut e = Some(se);
                while let Some(x) = e {
                    let q = self.cfs_rq_of(x);
                    self.cfs_rq_mut(q).skip = Some(x);
                    e = self.parent_entity(x);
                }
            }
            FairEra::Eevdf if self.cfg.mech.yield_forfeits_vruntime => {
                // 6.12.63+: forfeit the rest of the request, if eligible.
                if self.entity_eligible::<true>(cfs_rq, se) {
                    let e = self.se_mut(se);
                    e.vruntime = e.deadline;
                    self.update_deadline::<true>(se);
                }
            }
            FairEra::Eevdf => {
                let vs = self.vdelta::<true>(self.se(se).slice, se);
                self.se_mut(se).deadline += vs;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::sim::Sim;
    use crate::trace::Trace;

    /// Three SCHED_IDLE hogs pinned to CPU 0, run `us` microseconds.
    fn idle_hogs(version: &str, us: u64) -> Sim {
        let text = format!(
            "name = \"t\"\n[machine]\npreset = \"4x4\"\n[kernel]\nversion = \"{version}\"\nvmstat_kworkers = false\n\
             [measure]\nduration = \"{us}us\"\n\
             [[task]]\nname = \"hog\"\ncount = 3\npolicy = \"SCHED_IDLE\"\ncpus = [0]\n\
             program = [{{ run = \"1s\" }}]\n"
        );
        let sc = crate::scenario::load(&text, "t.toml", &[]).expect("scenario");
        let mut sim = Sim::new(&sc, 1, false, Trace::new(None)).expect("sim");
        sim.run().expect("run");
        sim
    }

    /// Pull CPU 0's leftmost waiting task to the empty CPU 1; return how far
    /// it lands from CPU 1's min_vruntime (vruntime - min_vruntime).
    fn pull_leftmost(sim: &mut Sim) -> i128 {
        sim.w.m.kt.k.update_curr(0);
        let curr = sim.w.m.kt.k.sched.cfs_rqs[0].curr.expect("a hog runs").tid();
        let mut queued = sim.w.m.kt.k.sched.cfs_rqs[0].tasks_timeline.iter().map(|&(v, _)| v);
        let (left, next) = (queued.next().expect("two wait"), queued.next().expect("two wait"));
        // The leftmost holds min_vruntime back: curr and the next one are
        // to its right (the state in which the two rules differ).
        assert!(sim.w.m.kt.k.sched.tasks[curr].se.vruntime > left && next > left);
        let l = sim.w.m.kt.k.sched.cfs_rqs[0].leftmost().expect("queued").1.tid();
        let before = sim.w.m.kt.k.sched.cfs_rqs[1].min_vruntime;
        sim.w.m.kt.k.move_queued_task(l, 0, 1, 1);
        sim.w.m.kt.k.sched.tasks[l].se.vruntime as i128 - before as i128
    }

    #[test]
    fn pulled_leftmost_task_keeps_its_place_from_4_x() {
        // 2.6.35 normalized after update_min_vruntime() had stepped past the
        // departing leftmost: it arrives behind min_vruntime, by the gap.
        let mut old = idle_hogs("2.6.35", 50_500);
        assert!(pull_leftmost(&mut old) < 0);
        // "Fix min_vruntime tracking": normalized against the min_vruntime
        // it held back, it arrives at (not behind) the new min_vruntime.
        let mut new = idle_hogs("6.1", 56_500);
        assert_eq!(pull_leftmost(&mut new), 0);
    }

    /// Two nice-0 hogs pinned to one CPU for 400 ms: each runs half the
    /// time, so each one's util_avg settles near 512. PELT counts a task as
    /// running only from its pick (set_next_entity() updates it before it
    /// becomes cfs_rq->curr); were the wait in the tree counted as running,
    /// both would read near 1024.
    #[test]
    fn waiting_in_the_tree_is_not_running_time() {
        let text = "name = \"t\"\n[machine]\npreset = \"4x4\"\n[kernel]\nversion = \"6.1\"\nvmstat_kworkers = false\n\
                    [measure]\nduration = \"400ms\"\n\
                    [[task]]\nname = \"hog\"\ncount = 2\ncpus = [0]\nprogram = [{ run = \"1s\" }]\n";
        let sc = crate::scenario::load(text, "t.toml", &[]).expect("scenario");
        let mut sim = Sim::new(&sc, 1, false, Trace::new(None)).expect("sim");
        sim.run().expect("run");
        let k = &sim.w.m.kt.k;
        let hogs: Vec<_> =
            (0..k.sched.tasks.len()).filter(|&t| k.sched.tasks[t].cpu == 0 && k.sched.tasks[t].se.attached).collect();
        let utils: Vec<u64> = hogs.iter().map(|&t| k.sched.tasks[t].se.avg.util_avg).collect();
        assert_eq!(utils.len(), 2, "two hogs on CPU 0: {utils:?}");
        for u in utils {
            assert!((400..=640).contains(&u), "a hog at half a CPU has util_avg {u}, not about 512");
        }
    }
}
