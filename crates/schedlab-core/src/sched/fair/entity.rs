//! Models the entity half of kernel/sched/fair.c: update_curr, place_entity,
//! enqueue/dequeue_entity, pick_next_entity, the tick and wakeup preemption,
//! in both eras.
//!
//! CFS (2.6.23 .. 6.5): run the entity with the smallest vruntime; a waking
//! task is placed at min_vruntime minus a sleeper credit; the tick preempts
//! once the entity ran its slice `period * w / W`.
//!
//! EEVDF (6.6+): V = Σ w_i v_i / Σ w_i is the virtual time of an ideal fluid
//! scheduler; an entity with lag V - v_i >= 0 is eligible; among eligible
//! entities run the one with the earliest virtual deadline v_i + r_i/w_i.
//! Eligible entities are a prefix of the vruntime-ordered tree (v_i <= V), so
//! the pick scans that prefix. Deviation: the kernel finds the same entity in
//! O(log n) with an augmented rbtree; this scan is O(eligible).

use crate::engine::sim::Sim;
use crate::kernel::FairEra;
use crate::sched::features::Feature;
use crate::sched::pelt;
use crate::sched::prio::{calc_delta_fair, Policy};
use crate::sched::task::{TaskId, TaskState};

impl Sim {
    #[inline]
    fn vdelta(&self, delta: u64, tid: TaskId) -> u64 {
        let t = &self.tasks[tid];
        calc_delta_fair(delta, t.weight, t.inv_weight)
    }

    #[inline]
    fn curr_on_rq(&self, cpu: usize) -> Option<TaskId> {
        self.rqs[cpu].cfs.curr.filter(|&c| self.tasks[c].se.on_rq)
    }

    /// The fair part of update_curr().
    pub fn update_curr_fair(&mut self, cpu: usize, tid: TaskId, delta: u64) {
        let dv = self.vdelta(delta, tid);
        self.tasks[tid].se.vruntime += dv;
        if self.cfg.mech.fair == FairEra::Eevdf
            && self.tasks[tid].se.on_rq
            && self.update_deadline(tid)
            && self.rqs[cpu].cfs.nr_running > 1
        {
            // 6.6 update_deadline: the request is used up -> reschedule.
            self.clear_buddies(cpu, tid);
            self.resched_curr(cpu);
        }
        self.update_min_vruntime(cpu);
    }

    /// update_min_vruntime(): monotonic, max(old, min(curr, leftmost)).
    pub fn update_min_vruntime(&mut self, cpu: usize) {
        let cfs = &self.rqs[cpu].cfs;
        let mut v = cfs.min_vruntime;
        let curr = self.curr_on_rq(cpu);
        if let Some(c) = curr {
            v = self.tasks[c].se.vruntime;
        }
        if let Some((lv, _)) = cfs.leftmost() {
            v = if curr.is_some() { v.min(lv) } else { lv };
        }
        let cfs = &mut self.rqs[cpu].cfs;
        if v > cfs.min_vruntime {
            // avg_vruntime_update: keys are relative to min_vruntime.
            cfs.avg_vruntime -= cfs.avg_load * (v - cfs.min_vruntime) as i128;
            cfs.min_vruntime = v;
        }
    }

    // ------------------------------------------------------------- EEVDF

    fn entity_key(&self, cpu: usize, tid: TaskId) -> i128 {
        self.tasks[tid].se.vruntime as i128 - self.rqs[cpu].cfs.min_vruntime as i128
    }

    /// (Σ w_i key_i, Σ w_i) with curr included, as avg_vruntime() builds them.
    fn avg_sums(&self, cpu: usize) -> (i128, i128) {
        let cfs = &self.rqs[cpu].cfs;
        let (mut avg, mut load) = (cfs.avg_vruntime, cfs.avg_load);
        if let Some(c) = self.curr_on_rq(cpu) {
            let w = self.tasks[c].weight as i128;
            avg += self.entity_key(cpu, c) * w;
            load += w;
        }
        (avg, load)
    }

    /// avg_vruntime(): V, rounded toward -inf so an entity at V is eligible.
    pub fn avg_vruntime(&self, cpu: usize) -> u64 {
        let (avg, load) = self.avg_sums(cpu);
        let mut a = avg;
        if load > 0 {
            if a < 0 {
                a -= load - 1;
            }
            a /= load;
        }
        (self.rqs[cpu].cfs.min_vruntime as i128 + a) as u64
    }

    /// entity_eligible(): Σ w_j (v_j - v0) >= (v_i - v0) Σ w_j.
    fn entity_eligible(&self, cpu: usize, tid: TaskId) -> bool {
        let (avg, load) = self.avg_sums(cpu);
        avg >= self.entity_key(cpu, tid) * load
    }

    fn avg_add(&mut self, cpu: usize, tid: TaskId) {
        let w = self.tasks[tid].weight as i128;
        let k = self.entity_key(cpu, tid);
        let cfs = &mut self.rqs[cpu].cfs;
        cfs.avg_vruntime += k * w;
        cfs.avg_load += w;
    }

    fn avg_sub(&mut self, cpu: usize, tid: TaskId) {
        let w = self.tasks[tid].weight as i128;
        let k = self.entity_key(cpu, tid);
        let cfs = &mut self.rqs[cpu].cfs;
        cfs.avg_vruntime -= k * w;
        cfs.avg_load -= w;
    }

    /// update_entity_lag(): vlag = V - v, clamped to the virtual time of
    /// max(2 slices, one tick).
    fn update_entity_lag(&mut self, cpu: usize, tid: TaskId) {
        let v = self.avg_vruntime(cpu) as i128;
        let se = &self.tasks[tid].se;
        let lag = v - se.vruntime as i128;
        let limit = self.vdelta((2 * se.slice).max(self.cfg.tick_ns), tid) as i128;
        self.tasks[tid].se.vlag = lag.clamp(-limit, limit) as i64;
    }

    /// update_deadline(): once vruntime passes the deadline, issue a new
    /// request of base_slice. Returns true when a new request was issued.
    fn update_deadline(&mut self, tid: TaskId) -> bool {
        let se = &self.tasks[tid].se;
        if se.vruntime < se.deadline {
            return false;
        }
        let slice = self.tun.sched_base_slice;
        let vs = self.vdelta(slice, tid);
        let se = &mut self.tasks[tid].se;
        se.slice = slice;
        se.deadline = se.vruntime + vs;
        true
    }

    /// pick_eevdf().
    fn pick_eevdf(&self, cpu: usize) -> Option<TaskId> {
        let cfs = &self.rqs[cpu].cfs;
        let mut curr = self.curr_on_rq(cpu);
        let left = cfs.leftmost().map(|(_, t)| t);
        if cfs.nr_running == 1 {
            return curr.or(left);
        }
        if let Some(c) = curr {
            if !self.entity_eligible(cpu, c) {
                curr = None;
            }
        }
        if self.cfg.features.on(Feature::NEXT_BUDDY) {
            if let Some(n) = cfs.next {
                if self.tasks[n].se.on_rq && self.entity_eligible(cpu, n) {
                    return Some(n);
                }
            }
        }
        if self.cfg.features.on(Feature::RUN_TO_PARITY) {
            if let Some(c) = curr {
                let se = &self.tasks[c].se;
                if se.vlag == se.deadline as i64 {
                    return Some(c);
                }
            }
        }
        let (avg, load) = self.avg_sums(cpu);
        let v0 = cfs.min_vruntime as i128;
        let mut best: Option<TaskId> = None;
        for &(v, t) in cfs.tasks_timeline.iter() {
            if avg < (v as i128 - v0) * load {
                break; // the rest are ineligible
            }
            if best.is_none_or(|b| self.tasks[t].se.deadline < self.tasks[b].se.deadline) {
                best = Some(t);
            }
        }
        if let Some(c) = curr {
            if best.is_none_or(|b| self.tasks[c].se.deadline < self.tasks[b].se.deadline) {
                best = Some(c);
            }
        }
        // "EEVDF scheduling fail, picking leftmost" (a rounding corner case).
        best.or(left).or(self.curr_on_rq(cpu))
    }

    // --------------------------------------------------------------- CFS

    /// __sched_period().
    fn sched_period(&self, nr: u64) -> u64 {
        if nr > self.tun.sched_nr_latency {
            nr * self.tun.sched_min_granularity
        } else {
            self.tun.sched_latency
        }
    }

    /// sched_slice(): period * w / W (W counting the entity if not queued).
    pub fn sched_slice(&self, cpu: usize, tid: TaskId) -> u64 {
        let cfs = &self.rqs[cpu].cfs;
        let se = &self.tasks[tid];
        let on_rq = se.se.on_rq;
        let nr = cfs.nr_running as u64 + u64::from(!on_rq);
        let mut load = cfs.load_weight;
        if !on_rq {
            load += se.weight as u64;
        }
        let period = self.sched_period(nr);
        let mut slice = if load == 0 { period } else { (period as u128 * se.weight as u128 / load as u128) as u64 };
        if self.cfg.features.on(Feature::BASE_SLICE) {
            slice = slice.max(self.tun.sched_min_granularity);
        }
        slice
    }

    /// wakeup_gran(): the wakeup granularity in the wakee's virtual time.
    fn wakeup_gran(&self, tid: TaskId) -> u64 {
        self.vdelta(self.tun.sched_wakeup_granularity, tid)
    }

    /// wakeup_preempt_entity(curr, se): -1 if se is not ahead of curr, 1 if
    /// it is more than a wakeup granularity ahead, else 0.
    fn wakeup_preempt_entity(&self, curr: TaskId, se: TaskId) -> i32 {
        let vdiff = self.tasks[curr].se.vruntime as i128 - self.tasks[se].se.vruntime as i128;
        if vdiff <= 0 {
            return -1;
        }
        if vdiff > self.wakeup_gran(se) as i128 {
            1
        } else {
            0
        }
    }

    /// pick_next_entity(cfs_rq, curr) of 2.6.35 .. 6.5, with the skip, last
    /// and next buddies.
    fn pick_next_entity_cfs(&self, cpu: usize) -> Option<TaskId> {
        let cfs = &self.rqs[cpu].cfs;
        let curr = self.curr_on_rq(cpu);
        let mut left = cfs.leftmost().map(|(_, t)| t);
        if let Some(c) = curr {
            if left.is_none_or(|l| self.tasks[c].se.vruntime < self.tasks[l].se.vruntime) {
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
                    if s.is_none_or(|x| self.tasks[c].se.vruntime < self.tasks[x].se.vruntime) {
                        s = Some(c);
                    }
                }
                s
            };
            if let Some(s) = second {
                if self.wakeup_preempt_entity(s, left) < 1 {
                    se = s;
                }
            }
        }
        if let Some(l) = cfs.last {
            if self.tasks[l].se.on_rq && self.wakeup_preempt_entity(l, left) < 1 {
                se = l;
            }
        }
        if let Some(n) = cfs.next {
            if self.tasks[n].se.on_rq && self.wakeup_preempt_entity(n, left) < 1 {
                se = n;
            }
        }
        Some(se)
    }

    pub fn clear_buddies(&mut self, cpu: usize, tid: TaskId) {
        let cfs = &mut self.rqs[cpu].cfs;
        if cfs.next == Some(tid) {
            cfs.next = None;
        }
        if cfs.last == Some(tid) {
            cfs.last = None;
        }
        if cfs.skip == Some(tid) {
            cfs.skip = None;
        }
    }

    // --------------------------------------------------- class operations

    /// The entity pick of pick_next_task_fair(): a still runnable previous
    /// task is cfs_rq->curr and competes with the tree.
    pub fn pick_next_task_fair(&mut self, cpu: usize) -> Option<TaskId> {
        if self.rqs[cpu].cfs.nr_running == 0 {
            return None;
        }
        match self.cfg.mech.fair {
            FairEra::Cfs => self.pick_next_entity_cfs(cpu),
            FairEra::Eevdf => self.pick_eevdf(cpu),
        }
    }

    /// put_prev_entity(): the previous task goes back into the tree.
    pub fn put_prev_task_fair(&mut self, cpu: usize, tid: TaskId) {
        self.update_load_avg(cpu, Some(tid));
        let v = self.tasks[tid].se.vruntime;
        let cfs = &mut self.rqs[cpu].cfs;
        debug_assert_eq!(cfs.curr, Some(tid));
        cfs.curr = None;
        cfs.tasks_timeline.insert((v, tid));
        if self.cfg.mech.fair == FairEra::Eevdf {
            self.avg_add(cpu, tid);
        }
        self.tasks[tid].stats.wait_start = Some(self.now);
    }

    /// set_next_entity(): the picked task leaves the tree and becomes curr.
    pub fn set_next_entity(&mut self, cpu: usize, tid: TaskId) {
        self.clear_buddies(cpu, tid);
        let v = self.tasks[tid].se.vruntime;
        if self.rqs[cpu].cfs.curr != Some(tid) {
            if self.cfg.mech.fair == FairEra::Eevdf {
                self.avg_sub(cpu, tid);
            }
            let removed = self.rqs[cpu].cfs.tasks_timeline.remove(&(v, tid));
            debug_assert!(removed, "picked task was not in the tree");
            self.rqs[cpu].cfs.curr = Some(tid);
        }
        self.update_load_avg(cpu, Some(tid));
        let now = self.now;
        let seq = self.next_list_seq();
        let t = &mut self.tasks[tid];
        t.se.exec_start = now;
        t.se.prev_sum_exec_runtime = t.se.sum_exec_runtime;
        if self.cfg.mech.fair == FairEra::Eevdf {
            // RUN_TO_PARITY marker (protect_slice): vlag == deadline.
            t.se.vlag = t.se.deadline as i64;
        }
        t.list_seq = seq;
        let w = t.stats.picked(now);
        self.rqs[cpu].stats.wait_ns += w;
    }

    /// PELT: update the entity (if any) and the cfs_rq to now
    /// (update_load_avg without the group parts).
    pub fn update_load_avg(&mut self, cpu: usize, tid: Option<TaskId>) {
        let now = self.now;
        let running = self.rqs[cpu].cfs.curr;
        if let Some(t) = tid {
            let task = &mut self.tasks[t];
            if task.se.attached {
                pelt::update_se(&mut task.se.avg, now, task.weight as u64, task.se.on_rq, running == Some(t));
            }
        }
        let cfs = &mut self.rqs[cpu].cfs;
        pelt::update_cfs_rq(&mut cfs.avg, now, cfs.load_weight, cfs.h_nr_running as u64, running.is_some());
    }

    /// place_entity() for both eras.
    fn place_entity(&mut self, cpu: usize, tid: TaskId, initial: bool) {
        match self.cfg.mech.fair {
            FairEra::Cfs => {
                let cfs = &self.rqs[cpu].cfs;
                let mut vruntime = cfs.min_vruntime;
                if initial {
                    // Deviation: task_fork_fair starts the child at the
                    // parent's vruntime and place_entity takes the max; the
                    // model's tasks are launched by no parent on that
                    // runqueue, so the child starts at min_vruntime (+ the
                    // START_DEBIT vslice), which is where the max lands
                    // whenever the parent is not far ahead.
                    if self.cfg.features.on(Feature::START_DEBIT) {
                        let s = self.sched_slice(cpu, tid);
                        vruntime += self.vdelta(s, tid);
                    }
                    self.tasks[tid].se.vruntime = vruntime;
                    return;
                }
                let f = &self.cfg.features;
                let mut thresh = self.tun.sched_latency;
                if self.tasks[tid].is_idle_policy() && self.cfg.mech.idle_sleeper_credit_min_granularity {
                    thresh = self.tun.sched_min_granularity;
                }
                if f.on(Feature::GENTLE_FAIR_SLEEPERS) {
                    thresh >>= 1;
                }
                if f.on(Feature::GENTLE_FAIR_SLEEPERS) || f.on(Feature::NEW_FAIR_SLEEPERS) {
                    vruntime = vruntime.saturating_sub(thresh);
                }
                let se = &mut self.tasks[tid].se;
                se.vruntime = se.vruntime.max(vruntime);
            }
            FairEra::Eevdf => {
                let slice = self.tun.sched_base_slice;
                let mut vslice = self.vdelta(slice, tid);
                let v = self.avg_vruntime(cpu) as i128;
                let mut lag: i128 = 0;
                let cfs = &self.rqs[cpu].cfs;
                if self.cfg.features.on(Feature::PLACE_LAG) && cfs.nr_running > 0 && !initial {
                    lag = self.tasks[tid].se.vlag as i128;
                    let mut load = cfs.avg_load;
                    if let Some(c) = self.curr_on_rq(cpu) {
                        load += self.tasks[c].weight as i128;
                    }
                    if load > 0 {
                        lag = lag * (load + self.tasks[tid].weight as i128) / load;
                    }
                }
                if initial && self.cfg.features.on(Feature::PLACE_DEADLINE_INITIAL) {
                    vslice /= 2;
                }
                let se = &mut self.tasks[tid].se;
                se.slice = slice;
                se.vruntime = (v - lag).max(0) as u64;
                se.deadline = se.vruntime + vslice;
            }
        }
    }

    /// enqueue_task_fair(). `initial`: a new task; `wakeup`: ENQUEUE_WAKEUP.
    pub fn enqueue_task_fair(&mut self, cpu: usize, tid: TaskId, initial: bool, wakeup: bool) {
        self.update_curr(cpu);
        self.tasks[tid].se.norm_min_vruntime = None;
        // PELT: bring the cfs_rq up to date, then attach or update the entity.
        if !self.tasks[tid].se.attached {
            self.update_load_avg(cpu, None);
            let w = self.tasks[tid].weight as u64;
            let cfs_avg = &mut self.rqs[cpu].cfs.avg;
            pelt::attach_entity(cfs_avg, &mut self.tasks[tid].se.avg, w);
            self.tasks[tid].se.attached = true;
        } else {
            self.update_load_avg(cpu, Some(tid));
        }
        if initial || wakeup || self.cfg.mech.fair == FairEra::Eevdf {
            self.place_entity(cpu, tid, initial);
        }
        let is_curr = self.rqs[cpu].curr == Some(tid);
        let t = &self.tasks[tid];
        let (w, v, idle) = (t.weight as u64, t.se.vruntime, t.is_idle_policy());
        let seq = self.next_list_seq();
        let cfs = &mut self.rqs[cpu].cfs;
        cfs.load_weight += w;
        cfs.nr_running += 1;
        cfs.h_nr_running += 1;
        if idle {
            cfs.idle_h_nr_running += 1;
        }
        if is_curr {
            // ttwu of a task that has not switched out yet: it is curr again.
            cfs.curr = Some(tid);
        } else {
            cfs.tasks_timeline.insert((v, tid));
            if self.cfg.mech.fair == FairEra::Eevdf {
                self.avg_add(cpu, tid);
            }
            self.tasks[tid].stats.wait_start = Some(self.now);
        }
        let t = &mut self.tasks[tid];
        t.se.on_rq = true;
        t.list_seq = seq;
        self.wasted_track(tid, true);
        self.add_nr_running(cpu);
        self.update_min_vruntime(cpu);
    }

    /// dequeue_task_fair(). `sleep`: DEQUEUE_SLEEP.
    pub fn dequeue_task_fair(&mut self, cpu: usize, tid: TaskId, sleep: bool) {
        self.update_curr(cpu);
        if !sleep && self.cfg.mech.fair == FairEra::Cfs && self.cfg.mech.cfs_renorm_fixed {
            // dequeue_entity since "sched/fair: Fix min_vruntime tracking"
            // (2016; every modelled version from 4.16 has it): normalize
            // after update_curr(), which counted @se if it held min_vruntime
            // back, and before update_min_vruntime() discounts it.
            self.tasks[tid].se.norm_min_vruntime = Some(self.rqs[cpu].cfs.min_vruntime);
        }
        self.update_load_avg(cpu, Some(tid));
        self.clear_buddies(cpu, tid);
        if self.cfg.mech.fair == FairEra::Eevdf {
            self.update_entity_lag(cpu, tid);
        }
        let is_curr = self.rqs[cpu].cfs.curr == Some(tid);
        let t = &self.tasks[tid];
        let (w, v, idle) = (t.weight as u64, t.se.vruntime, t.is_idle_policy());
        if is_curr {
            self.rqs[cpu].cfs.curr = None;
        } else {
            if self.cfg.mech.fair == FairEra::Eevdf {
                self.avg_sub(cpu, tid);
            }
            let removed = self.rqs[cpu].cfs.tasks_timeline.remove(&(v, tid));
            debug_assert!(removed, "dequeued task was not in the tree");
        }
        let cfs = &mut self.rqs[cpu].cfs;
        cfs.load_weight -= w;
        cfs.nr_running -= 1;
        cfs.h_nr_running -= 1;
        if idle {
            cfs.idle_h_nr_running -= 1;
        }
        self.tasks[tid].se.on_rq = false;
        self.wasted_track(tid, false);
        self.sub_nr_running(cpu);
        self.update_min_vruntime(cpu);
    }

    /// migrate_task_rq_fair(): the task changes runqueue while not queued.
    /// CFS keeps vruntime relative to min_vruntime across the move; PELT
    /// removes the task's contribution from the old cfs_rq.
    pub fn migrate_task_rq_fair(&mut self, tid: TaskId, old: usize, new: usize) {
        if self.cfg.mech.fair == FairEra::Cfs {
            // A queued task was normalized by its dequeue; 2.6.x did that
            // after update_min_vruntime() had already stepped past @se when
            // it was the leftmost (its cfs_rq->curr was the stopper's
            // prev, or another task), so a pulled leftmost task arrives
            // behind the new min_vruntime by the gap to the next one. A
            // sleeping (waking) task is normalized against the old
            // min_vruntime as it is now.
            let se = &mut self.tasks[tid].se;
            let v = se.vruntime;
            let base = se.norm_min_vruntime.take().unwrap_or(self.rqs[old].cfs.min_vruntime);
            let rel = v as i128 - base as i128;
            if self.cfg.mech.cfs_renorm_fixed {
                // enqueue_entity() renormalizes a migrated task after
                // update_curr() of the destination ("placed at the current
                // moment in time"); 2.6.x added the stale min_vruntime first.
                self.update_curr(new);
            }
            self.tasks[tid].se.vruntime = (self.rqs[new].cfs.min_vruntime as i128 + rel).max(0) as u64;
        }
        if self.tasks[tid].se.attached {
            self.update_load_avg(old, Some(tid));
            let w = self.tasks[tid].weight as u64;
            let se_avg = self.tasks[tid].se.avg;
            pelt::detach_entity(&mut self.rqs[old].cfs.avg, &se_avg, w);
            self.tasks[tid].se.attached = false;
        }
    }

    /// task_tick_fair(): PELT and tick preemption.
    pub fn task_tick_fair(&mut self, cpu: usize, curr: TaskId) {
        if self.tasks[curr].state != TaskState::Runnable {
            return;
        }
        self.update_load_avg(cpu, Some(curr));
        if self.cfg.mech.fair == FairEra::Cfs && self.rqs[cpu].cfs.nr_running > 1 {
            self.check_preempt_tick(cpu, curr);
        }
    }

    /// check_preempt_tick() (CFS).
    fn check_preempt_tick(&mut self, cpu: usize, curr: TaskId) {
        let ideal = self.sched_slice(cpu, curr);
        let se = &self.tasks[curr].se;
        let delta_exec = se.sum_exec_runtime - se.prev_sum_exec_runtime;
        if delta_exec > ideal {
            self.resched_curr(cpu);
            self.clear_buddies(cpu, curr);
            return;
        }
        if !self.cfg.mech.check_preempt_tick_vdiff {
            return; // 2.6.25 had only the slice test.
        }
        if delta_exec < self.tun.sched_min_granularity {
            return;
        }
        let Some((lv, _)) = self.rqs[cpu].cfs.leftmost() else { return };
        let delta = self.tasks[curr].se.vruntime as i128 - lv as i128;
        if delta < 0 {
            return;
        }
        if delta > ideal as i128 {
            self.resched_curr(cpu);
        }
    }

    /// check_preempt_wakeup() / check_preempt_wakeup_fair().
    pub fn check_preempt_wakeup_fair(&mut self, cpu: usize, curr: TaskId, p: TaskId) {
        if !self.cfg.features.on(Feature::WAKEUP_PREEMPTION) {
            return;
        }
        let curr_idle = self.tasks[curr].is_idle_policy();
        let p_idle = self.tasks[p].is_idle_policy();
        if curr_idle && !p_idle {
            self.resched_curr(cpu);
            return;
        }
        if self.tasks[p].policy != Policy::Normal {
            return; // Batch and idle tasks do not preempt.
        }
        self.update_curr(cpu);
        match self.cfg.mech.fair {
            FairEra::Cfs => {
                let scale = self.rqs[cpu].cfs.nr_running as u64 >= self.tun.sched_nr_latency;
                if self.cfg.features.on(Feature::NEXT_BUDDY) && scale {
                    self.rqs[cpu].cfs.next = Some(p);
                }
                if self.wakeup_preempt_entity(curr, p) == 1 {
                    self.resched_curr(cpu);
                    if self.cfg.features.on(Feature::LAST_BUDDY) && scale && self.tasks[curr].se.on_rq {
                        self.rqs[cpu].cfs.last = Some(curr);
                    }
                }
            }
            FairEra::Eevdf => {
                if self.pick_eevdf(cpu) == Some(p) {
                    self.resched_curr(cpu);
                }
            }
        }
    }

    /// yield_task_fair().
    pub fn yield_task_fair(&mut self, tid: TaskId) {
        let cpu = self.tasks[tid].cpu;
        if self.rqs[cpu].cfs.nr_running <= 1 {
            return;
        }
        self.clear_buddies(cpu, tid);
        self.update_curr(cpu);
        match self.cfg.mech.fair {
            FairEra::Cfs => self.rqs[cpu].cfs.skip = Some(tid),
            FairEra::Eevdf => {
                let vs = self.vdelta(self.tasks[tid].se.slice, tid);
                self.tasks[tid].se.deadline += vs;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::sim::Sim;
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
        let mut sim = Sim::new(&sc, 1, false, Trace::new(false)).expect("sim");
        sim.run().expect("run");
        sim
    }

    /// Pull CPU 0's leftmost waiting task to the empty CPU 1; return how far
    /// it lands from CPU 1's min_vruntime (vruntime - min_vruntime).
    fn pull_leftmost(sim: &mut Sim) -> i128 {
        sim.update_curr(0);
        let curr = sim.rqs[0].cfs.curr.expect("a hog runs");
        let mut queued = sim.rqs[0].cfs.tasks_timeline.iter().map(|&(v, _)| v);
        let (left, next) = (queued.next().expect("two wait"), queued.next().expect("two wait"));
        // The leftmost holds min_vruntime back: curr and the next one are
        // to its right (the state in which the two rules differ).
        assert!(sim.tasks[curr].se.vruntime > left && next > left);
        let l = sim.rqs[0].cfs.leftmost().expect("queued").1;
        let before = sim.rqs[1].cfs.min_vruntime;
        sim.move_queued_task(l, 0, 1, 1);
        sim.tasks[l].se.vruntime as i128 - before as i128
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
}
