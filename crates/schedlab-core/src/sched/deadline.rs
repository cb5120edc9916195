//! Models kernel/sched/deadline.c and cpudeadline.c (3.14+): the
//! SCHED_DEADLINE class.
//!
//! - **CBS.** Each task holds a reservation of `dl_runtime` every
//!   `dl_period`, to be used before `dl_deadline` after the period starts.
//!   What it runs comes off `runtime`; at zero (or below, by what it
//!   overran before the class looked) it is throttled: off the dl_rq until
//!   its replenishment timer fires at the next period, when the deadline
//!   moves on by a period and the budget is topped up (replenish_dl_entity).
//!   A wakeup keeps the current deadline and budget unless they would let
//!   the task exceed its bandwidth (dl_entity_overflow), in which case it
//!   starts a new instance; a constrained task (deadline < period) gets the
//!   revised rule instead (4.13), and one woken after its deadline but
//!   before its next period waits for that period (4.11).
//! - **EDF.** The runqueue runs the queued entity with the earliest
//!   absolute deadline; a waking task preempts the running one when its
//!   deadline is earlier.
//! - **Global EDF across CPUs** (push/pull, cpudl): a woken task that
//!   cannot run at once is sent where it would (find_later_rq: a CPU
//!   without deadline tasks, else the one whose earliest deadline is the
//!   latest); waiting tasks are pushed after a switch, and a CPU whose
//!   running deadline task leaves pulls the earliest waiting one of the
//!   overloaded CPUs.
//! - **Admission control** (sched_dl_overflow, __checkparam_dl): checked
//!   when the scenario loads (`check_dl_groups`), with the errors
//!   sched_setattr() returns.
//!
//! The budget is enforced at the tick and at every other update_curr() (a
//! switch, a wakeup on the CPU): HRTICK is off by default (SCHED_FEAT
//! HRTICK / HRTICK_DL false), so a task overruns its budget by up to a
//! tick and pays it back in its next instance, as on the real kernels.
//!
//! GRUB (4.13+: the runqueues' active and total bandwidth, the inactive
//! timer, SCHED_FLAG_RECLAIM) is sched/dl_grub.rs.
//!
//! Deviation: priority inheritance (dl boosting) and the SUGOV special
//! entity are not modelled. The replenishment timer's interrupt costs
//! nothing.

use crate::engine::event::Ev;
use crate::engine::Instant;
use crate::prio::{SCHED_FLAG_DL_OVERRUN, SCHED_FLAG_RECLAIM};
use crate::sched::class::{
    DlSchedClass, Pick, SchedClassOps, WakeSource, DEQUEUE_SLEEP, ENQUEUE_HEAD, ENQUEUE_INITIAL, ENQUEUE_REPLENISH,
    ENQUEUE_WAKEUP, WF_TTWU,
};
use crate::sched::dl_rq::FAIR_SERVER;
use crate::sched::env::SchedEnv;
use crate::sched::pelt;
use crate::sched::task::{DlAttr, DlEntity, TaskId, TaskState};

/// BW_SHIFT: bandwidths are fixed point with 20 fractional bits.
pub const BW_SHIFT: u32 = 20;
/// BW_UNIT: a whole CPU.
pub const BW_UNIT: u64 = 1 << BW_SHIFT;
/// DL_SCALE: dl_entity_overflow() drops 10 bits (about a microsecond).
pub const DL_SCALE: u32 = 10;
/// to_ratio(period, runtime): runtime / period << BW_SHIFT (0 for a zero
/// period).
pub fn to_ratio(period: u64, runtime: u64) -> u64 {
    if period == 0 {
        return 0;
    }
    ((runtime as u128) << BW_SHIFT).checked_div(period as u128).unwrap_or(0) as u64
}

/// __setparam_dl(): the entity of a task becoming SCHED_DEADLINE (its
/// deadline and budget are set when it is first queued).
pub fn setparam_dl(a: &DlAttr) -> DlEntity {
    let period = if a.period == 0 { a.deadline } else { a.period };
    DlEntity {
        dl_runtime: a.runtime,
        dl_deadline: a.deadline,
        dl_period: period,
        dl_bw: to_ratio(period, a.runtime),
        dl_density: to_ratio(a.deadline, a.runtime),
        flags: a.flags,
        ..DlEntity::default()
    }
}

/// The CBS arithmetic of deadline.c on one entity (a task's or the fair
/// server's).
impl DlEntity {
    /// replenish_dl_new_period(): deadline = now + the relative deadline,
    /// a full budget.
    pub(crate) fn new_period(&mut self, now: u64) {
        self.deadline = now + self.dl_deadline;
        self.runtime = self.dl_runtime as i64;
    }

    /// replenish_dl_entity()'s core: move the deadline on by periods until
    /// the budget is positive; a deadline still in the past ("lagged too
    /// much") starts a new instance now.
    pub(crate) fn replenish(&mut self, now: u64) {
        while self.runtime <= 0 {
            self.deadline += self.dl_period;
            self.runtime += self.dl_runtime as i64;
        }
        if self.deadline < now {
            self.new_period(now);
        }
    }

    /// dl_entity_overflow(dl_se, t): the remaining budget over the time to
    /// the deadline exceeds the reservation's density, in the kernel's
    /// arithmetic (both sides >> DL_SCALE, compared as dl_time_before).
    pub(crate) fn overflow(&self, t: u64) -> bool {
        let left = (self.dl_deadline >> DL_SCALE).wrapping_mul((self.runtime >> DL_SCALE) as u64);
        let right = (self.deadline.wrapping_sub(t) >> DL_SCALE).wrapping_mul(self.dl_runtime >> DL_SCALE);
        (right.wrapping_sub(left) as i64) < 0
    }

    /// update_dl_revised_wakeup(): the budget the density allows until the
    /// deadline.
    pub(crate) fn revised_wakeup(&mut self, now: u64) {
        let laxity = self.deadline - now;
        self.runtime = ((self.dl_density as u128 * laxity as u128) >> BW_SHIFT) as i64;
    }

    /// dl_next_period(): the start of the next instance.
    #[inline]
    pub(crate) fn next_period(&self) -> u64 {
        self.deadline - self.dl_deadline + self.dl_period
    }
}

/// start_dl_timer()'s test: the timer may be armed for `act` unless that
/// instant passed by a microsecond or more (ktime_us_delta() < 0); when to
/// arm it.
pub(crate) fn dl_timer_at(act: u64, now: u64) -> Option<u64> {
    (now < act + 1000).then(|| act.max(now))
}

impl SchedClassOps for DlSchedClass {
    #[inline(never)] // deadline-only: keep it out of the fair hot path
    fn enqueue_task(sim: &mut SchedEnv, cpu: usize, p: TaskId, flags: u32) {
        sim.enqueue_task_dl(cpu, p, flags);
    }

    #[inline(never)] // deadline-only: keep it out of the fair hot path
    fn dequeue_task(sim: &mut SchedEnv, cpu: usize, p: TaskId, flags: u32) -> bool {
        sim.dequeue_task_dl(cpu, p, flags);
        true
    }

    #[inline(never)] // deadline-only: keep it out of the fair hot path
    fn yield_task(sim: &mut SchedEnv, p: TaskId) {
        sim.yield_task_dl(p);
    }

    #[inline(never)] // deadline-only: keep it out of the fair hot path
    fn wakeup_preempt(sim: &mut SchedEnv, cpu: usize, curr: TaskId, p: TaskId, _wake_flags: u32) {
        sim.wakeup_preempt_dl(cpu, curr, p);
    }

    /// balance_dl(), then the classes below it (put_prev_task_balance()
    /// walks them from prev's class until one has work): a CPU whose
    /// deadline task left pulls deadline tasks, and if it has none, RT
    /// ones (balance_rt: any RT prio is below a deadline prev's).
    #[inline(never)] // deadline-only: keep it out of the fair hot path
    fn balance(sim: &mut SchedEnv, cpu: usize, prev: TaskId) {
        if !sim.dle(prev).on_dl_rq {
            sim.pull_dl_task(cpu);
        }
        if sim.sched.rqs[cpu].dl.dl_nr_running == 0 && sim.cfg.mech.rt_push_pull() && sim.sched.rt_nr_tasks > 0 {
            sim.pull_rt_task(cpu);
        }
    }

    #[inline]
    fn pick_next_task(sim: &mut SchedEnv, cpu: usize, _newidle: bool) -> Pick {
        if sim.sched.dl_nr_tasks == 0 && !sim.cfg.mech.fair_server {
            return Pick::Empty;
        }
        sim.pick_task_dl(cpu)
    }

    #[inline(never)] // deadline-only: keep it out of the fair hot path
    fn put_prev_task(sim: &mut SchedEnv, cpu: usize, p: TaskId, runnable: bool) {
        sim.update_dl_rq_load_avg(cpu, true);
        if sim.dle(p).on_dl_rq && sim.sched.tasks[p].nr_cpus_allowed > 1 {
            sim.enqueue_pushable_dl_task(cpu, p);
        }
        if runnable {
            sim.sched.tasks[p].stats.wait_start = Some(sim.now);
        }
    }

    #[inline(never)] // deadline-only: keep it out of the fair hot path
    fn set_next_task(sim: &mut SchedEnv, cpu: usize, p: TaskId) {
        // scale_rt_capacity() takes avg_dl off the fair class's capacity.
        sim.sched.rt_pressure = true;
        sim.dequeue_pushable_dl_task(cpu, p);
        sim.update_dl_rq_load_avg(cpu, false);
        sim.set_next_task_clock(cpu, p);
    }

    /// deadline_queue_push_tasks(): after the switch, push the waiting
    /// deadline tasks away.
    #[inline(never)] // deadline-only: keep it out of the fair hot path
    fn balance_callback(sim: &mut SchedEnv, cpu: usize, _p: TaskId) {
        if !sim.sched.rqs[cpu].dl.pushable.is_empty() {
            sim.push_dl_tasks(cpu);
        }
    }

    #[inline(never)] // deadline-only: keep it out of the fair hot path
    fn select_task_rq(sim: &mut SchedEnv, p: TaskId, cpu: usize, wake_flags: u32, src: WakeSource) -> usize {
        if wake_flags & WF_TTWU == 0 {
            return cpu;
        }
        sim.select_task_rq_dl(p, cpu, src.cpu)
    }

    #[inline(never)] // deadline-only: keep it out of the fair hot path
    fn task_fork(sim: &mut SchedEnv, p: TaskId, _parent_cpu: usize) {
        sim.sched.dl_nr_tasks += 1;
        if sim.cfg.mech.dl_grub {
            // sched_setattr()'s admission: the root domain's total_bw.
            let bw = sim.dle(p).dl_bw;
            sim.dl_bw_add(bw);
        }
    }

    #[inline(never)] // deadline-only: keep it out of the fair hot path
    fn task_woken(sim: &mut SchedEnv, cpu: usize, p: TaskId) {
        sim.task_woken_dl(cpu, p);
    }

    /// task_dead_dl(): the replenishment timer goes with the task.
    #[inline(never)] // deadline-only: keep it out of the fair hot path
    fn task_dead(sim: &mut SchedEnv, cpu: usize, p: TaskId) {
        sim.sched.dl_nr_tasks -= 1;
        if let Some(key) = sim.dle_mut(p).timer.take() {
            sim.q.cancel(key);
        }
        if sim.cfg.mech.dl_grub {
            sim.dl_grub_task_dead(cpu, p);
        }
    }

    #[inline(never)] // deadline-only: keep it out of the fair hot path
    fn migrate_task_rq(sim: &mut SchedEnv, p: TaskId, old: usize, _new: usize) {
        sim.migrate_task_rq_dl(p, old);
    }

    #[inline(never)] // deadline-only: keep it out of the fair hot path
    fn task_tick(sim: &mut SchedEnv, cpu: usize, _curr: TaskId) {
        sim.update_dl_rq_load_avg(cpu, true);
    }

    #[inline(never)] // deadline-only: keep it out of the fair hot path
    fn update_curr(sim: &mut SchedEnv, cpu: usize, curr: TaskId, delta: u64) {
        sim.update_curr_dl(cpu, curr, delta);
    }
}

impl SchedEnv {
    #[inline]
    pub(crate) fn dle(&self, tid: TaskId) -> &DlEntity {
        self.sched.tasks[tid].dl.as_deref().expect("a SCHED_DEADLINE task has its entity")
    }

    #[inline]
    pub(crate) fn dle_mut(&mut self, tid: TaskId) -> &mut DlEntity {
        self.sched.tasks[tid].dl.as_deref_mut().expect("a SCHED_DEADLINE task has its entity")
    }

    /// The deadline `p`'s dl_se carries as another class's task reads it
    /// (0 for a task that never was SCHED_DEADLINE, as __dl_clear_params
    /// leaves it).
    #[inline]
    pub(crate) fn dl_deadline_of(&self, p: TaskId) -> u64 {
        self.sched.tasks[p].dl.as_deref().map_or(0, |d| d.deadline)
    }

    /// pick_task_dl(): the earliest deadline; the fair server picks a fair
    /// task, or stops if there is none.
    #[inline(never)] // deadline-only: keep it out of the fair hot path
    fn pick_task_dl(&mut self, cpu: usize) -> Pick {
        loop {
            match self.sched.rqs[cpu].dl.root.first() {
                None => return Pick::Empty,
                Some(&(_, _, FAIR_SERVER)) => {
                    if let Some(p) = self.dl_server_pick(cpu) {
                        return Pick::Task(p);
                    }
                }
                Some(&(_, _, p)) => return Pick::Task(p),
            }
        }
    }

    // ---------------------------------------------------------------- CBS

    /// replenish_dl_new_period(): a new instance from now.
    fn replenish_dl_new_period(&mut self, tid: TaskId) {
        let now = self.now;
        self.dle_mut(tid).new_period(now);
    }

    /// setup_new_dl_entity(): the first instance of a new deadline task.
    fn setup_new_dl_entity(&mut self, tid: TaskId) {
        if !self.dle(tid).dl_throttled {
            self.replenish_dl_new_period(tid);
        }
    }

    /// replenish_dl_entity() of a task (a yield gives up what was left).
    fn replenish_dl_entity(&mut self, tid: TaskId) {
        let now = self.now;
        let d = self.dle_mut(tid);
        if d.dl_yielded && d.runtime > 0 {
            d.runtime = 0;
        }
        d.replenish(now);
        d.dl_yielded = false;
        d.dl_throttled = false;
    }

    /// update_dl_entity(): the CBS wakeup rule. A deadline in the past, or
    /// a budget the task could not use by its deadline within its
    /// bandwidth, starts a new instance; a constrained task (deadline <
    /// period) woken before its deadline keeps it with the budget its
    /// density allows (the revised rule, 4.13).
    fn update_dl_entity(&mut self, tid: TaskId) {
        let now = self.now;
        let revised = self.cfg.mech.dl_revised_wakeup;
        let d = self.dle_mut(tid);
        if d.deadline < now || d.overflow(now) {
            if d.dl_deadline != d.dl_period && d.deadline >= now && revised {
                d.revised_wakeup(now);
                return;
            }
            d.new_period(now);
        }
    }

    /// dl_next_period(): the start of the next instance.
    #[inline]
    fn dl_next_period(&self, tid: TaskId) -> u64 {
        self.dle(tid).next_period()
    }

    /// start_dl_timer(): arm the replenishment timer at the next period;
    /// false if that instant passed (by a microsecond or more: the kernel
    /// compares with ktime_us_delta()).
    fn start_dl_timer(&mut self, tid: TaskId) -> bool {
        let Some(at) = dl_timer_at(self.dl_next_period(tid), self.now) else { return false };
        if self.dle(tid).timer.is_none() {
            let key = self.q.schedule(Instant(at), Ev::DlTimer(tid));
            self.dle_mut(tid).timer = Some(key);
        }
        true
    }

    /// dl_check_constrained_dl() (4.11): a constrained task activated after
    /// its deadline but before its next period is throttled until then.
    fn dl_check_constrained_dl(&mut self, tid: TaskId) {
        let now = self.now;
        if self.dle(tid).deadline < now && now < self.dl_next_period(tid) {
            if !self.start_dl_timer(tid) {
                return;
            }
            let d = self.dle_mut(tid);
            d.dl_throttled = true;
            if d.runtime > 0 {
                d.runtime = 0;
            }
        }
    }

    /// dl_task_timer(): the replenishment. A task still runnable comes back
    /// onto its runqueue with its new budget and may preempt there; one
    /// that blocked meanwhile only gets its new budget.
    pub fn dl_task_timer(&mut self, tid: TaskId) {
        let t = &mut self.sched.tasks[tid];
        let Some(d) = t.dl.as_deref_mut() else { return };
        d.timer = None;
        if !t.policy.is_dl() || t.state == TaskState::Dead || !d.dl_throttled {
            return;
        }
        if t.state != TaskState::Runnable {
            self.replenish_dl_entity(tid);
            return;
        }
        let cpu = t.cpu;
        self.enqueue_task_dl(cpu, tid, ENQUEUE_REPLENISH);
        match self.sched.rqs[cpu].curr {
            Some(c) if c != tid && self.sched.tasks[c].policy.is_dl() => self.wakeup_preempt_dl(cpu, c, tid),
            Some(_) => self.resched_curr(cpu),
            None => {
                // The timer interrupt takes the CPU out of idle.
                self.wakeup_idle_cost(tid, cpu, cpu);
                self.resched_curr(cpu);
            }
        }
        if !self.sched.rqs[cpu].dl.pushable.is_empty() {
            self.push_dl_task(cpu);
        }
    }

    // ---------------------------------------------------------- the dl_rq

    /// __enqueue_dl_entity() with inc_dl_tasks(): into the tree, counted in
    /// nr_running; the CPU leaves cpudl's free set (its earliest deadline
    /// is read from the tree) and goes to CPUPRI_HIGHER.
    fn enqueue_dl_entity_tree(&mut self, cpu: usize, tid: TaskId) {
        let seq = self.sched.next_list_seq();
        let d = self.dle_mut(tid);
        debug_assert!(!d.on_dl_rq);
        d.on_dl_rq = true;
        d.seq = seq;
        let key = (d.deadline, seq, tid);
        let dl = &mut self.sched.rqs[cpu].dl;
        dl.root.insert(key);
        dl.dl_nr_running += 1;
        if dl.dl_nr_running == 1 && self.cfg.mech.dl_cpupri_higher && self.cfg.mech.rt_push_pull() {
            self.sched.rd.cpupri.set_higher(cpu);
        }
        self.sched.wasted.track(self.sched.tasks[tid].nr_cpus_allowed, self.sched.rqs.len(), true);
        self.add_nr_running(cpu);
        if self.sched.tasks[tid].nr_cpus_allowed > 1 {
            self.sched.rqs[cpu].dl.dl_nr_migratory += 1;
        }
        self.update_dl_migration(cpu);
    }

    /// update_dl_migration() (before 6.7): a runqueue is overloaded, in
    /// rd->dlo_mask, while it has two or more deadline entities, one of
    /// which may migrate (the running one counts). From 6.7 ("sched/deadline:
    /// Make dl_rq->pushable_dl_tasks update drive dl_rq->overloaded",
    /// 5fe7765997b1) the pushable tree decides.
    fn update_dl_migration(&mut self, cpu: usize) {
        if self.cfg.mech.dl_overload_pushable {
            return;
        }
        let dl = &self.sched.rqs[cpu].dl;
        self.set_dl_overload(cpu, dl.dl_nr_migratory > 0 && dl.dl_nr_running > 1);
    }

    /// dl_set_overload() / dl_clear_overload().
    fn set_dl_overload(&mut self, cpu: usize, over: bool) {
        let dl = &mut self.sched.rqs[cpu].dl;
        if over == dl.overloaded {
            return;
        }
        dl.overloaded = over;
        if over {
            self.sched.rd.dlo_mask.set(cpu);
            self.sched.rd.dlo_count += 1;
        } else {
            self.sched.rd.dlo_mask.clear(cpu);
            self.sched.rd.dlo_count -= 1;
        }
    }

    /// __dequeue_dl_entity() with dec_dl_tasks().
    fn dequeue_dl_entity_tree(&mut self, cpu: usize, tid: TaskId) {
        let d = self.dle_mut(tid);
        if !d.on_dl_rq {
            return;
        }
        d.on_dl_rq = false;
        let key = (d.deadline, d.seq, tid);
        let dl = &mut self.sched.rqs[cpu].dl;
        let removed = dl.root.remove(&key);
        debug_assert!(removed, "dequeued deadline task was not queued");
        dl.dl_nr_running -= 1;
        if dl.dl_nr_running == 0 && self.cfg.mech.dl_cpupri_higher && self.cfg.mech.rt_push_pull() {
            let prio = self.sched.rqs[cpu].rt.highest_prio as i32;
            self.sched.rd.cpupri.set(cpu, prio);
        }
        self.sched.wasted.track(self.sched.tasks[tid].nr_cpus_allowed, self.sched.rqs.len(), false);
        self.sub_nr_running(cpu);
        if self.sched.tasks[tid].nr_cpus_allowed > 1 {
            self.sched.rqs[cpu].dl.dl_nr_migratory -= 1;
        }
        self.update_dl_migration(cpu);
    }

    pub(crate) fn enqueue_pushable_dl_task(&mut self, cpu: usize, tid: TaskId) {
        if self.dle(tid).pushable_seq.is_some() {
            return;
        }
        let seq = self.sched.next_list_seq();
        let d = self.dle_mut(tid);
        d.pushable_seq = Some(seq);
        let key = (d.deadline, seq, tid);
        self.sched.rqs[cpu].dl.pushable.insert(key);
        if self.cfg.mech.dl_overload_pushable {
            self.set_dl_overload(cpu, true);
        }
    }

    pub(crate) fn dequeue_pushable_dl_task(&mut self, cpu: usize, tid: TaskId) {
        let d = self.dle_mut(tid);
        let Some(seq) = d.pushable_seq.take() else { return };
        let key = (d.deadline, seq, tid);
        let dl = &mut self.sched.rqs[cpu].dl;
        dl.pushable.remove(&key);
        if self.cfg.mech.dl_overload_pushable && dl.pushable.is_empty() {
            self.set_dl_overload(cpu, false);
        }
    }

    /// enqueue_dl_entity() and enqueue_task_dl(). The model's flags:
    /// ENQUEUE_WAKEUP (a wakeup: the CBS rule), ENQUEUE_REPLENISH (the
    /// timer), ENQUEUE_INITIAL or ENQUEUE_HEAD (the task became
    /// SCHED_DEADLINE: ENQUEUE_RESTORE after sched_setattr(), which sets up
    /// its first instance), 0 (a migration: it keeps its deadline and
    /// budget).
    ///
    /// Deviation: the kernel cannot fork a deadline task; a scenario's
    /// SCHED_DEADLINE task starts as if sched_setattr() made it one as it
    /// started (its first instance from then, `ENQUEUE_INITIAL`).
    pub fn enqueue_task_dl(&mut self, cpu: usize, tid: TaskId, flags: u32) {
        self.update_curr(cpu);
        let now = self.now;
        let implicit = {
            let d = self.dle(tid);
            d.dl_deadline == d.dl_period
        };
        if !self.dle(tid).dl_throttled && !implicit && self.cfg.mech.dl_constrained_throttle {
            self.dl_check_constrained_dl(tid);
        }
        let grub = self.cfg.mech.dl_grub;
        if grub && (flags & (ENQUEUE_INITIAL | ENQUEUE_HEAD) != 0 || flags == 0) {
            // ENQUEUE_RESTORE or a queued task's migration.
            self.dl_grub_attach(cpu, tid);
        }
        if self.dle(tid).dl_throttled && flags & ENQUEUE_REPLENISH == 0 {
            if grub && flags & ENQUEUE_WAKEUP != 0 {
                // A throttled task is active all the same.
                self.task_contending(cpu, tid);
            }
            return;
        }
        if flags & ENQUEUE_WAKEUP != 0 {
            if grub {
                self.task_contending(cpu, tid);
            }
            self.update_dl_entity(tid);
        } else if flags & ENQUEUE_REPLENISH != 0 {
            self.replenish_dl_entity(tid);
        } else if flags & ENQUEUE_INITIAL != 0 || (flags & ENQUEUE_HEAD != 0 && self.dle(tid).deadline < now) {
            self.setup_new_dl_entity(tid);
        }
        self.enqueue_dl_entity_tree(cpu, tid);
        if self.sched.rqs[cpu].curr != Some(tid) {
            if self.sched.tasks[tid].nr_cpus_allowed > 1 {
                self.enqueue_pushable_dl_task(cpu, tid);
            }
            // A migrating task keeps the wait it began before the move.
            self.sched.tasks[tid].stats.wait_start.get_or_insert(now);
        }
    }

    /// dequeue_task_dl(): off the tree (and the pushable tree). A task
    /// that moves takes its bandwidth along; one that blocks stays active
    /// until its 0-lag time (task_non_contending, GRUB).
    pub fn dequeue_task_dl(&mut self, cpu: usize, tid: TaskId, flags: u32) {
        self.update_curr(cpu);
        self.dequeue_dl_entity_tree(cpu, tid);
        if !self.dle(tid).dl_throttled {
            self.dequeue_pushable_dl_task(cpu, tid);
        }
        if self.cfg.mech.dl_grub {
            if flags & DEQUEUE_SLEEP != 0 {
                self.task_non_contending(cpu, tid);
            } else {
                self.dl_grub_detach(cpu, tid);
            }
        }
    }

    /// update_curr_dl() -> update_curr_dl_se(): the budget pays for what
    /// ran, scaled by the CPU's frequency (4.16's dl_scaled_delta_exec,
    /// where frequency invariance exists) and capacity; at zero the task
    /// is throttled and, while the deadline-server-less kernels still
    /// account it, what it ran counts in the RT class's budget.
    pub fn update_curr_dl(&mut self, cpu: usize, curr: TaskId, delta: u64) {
        if !self.dle(curr).on_dl_rq {
            return;
        }
        // sched_rt_avg_update() (until 4.18): deadline time ages into
        // rt_avg for scale_rt_power, as RT time does.
        let rq = &mut self.sched.rqs[cpu].rt;
        let (avg, age) = crate::sched::sched::sched_avg_update(rq.rt_avg, rq.rt_age_stamp, self.now);
        rq.rt_avg = avg + delta;
        rq.rt_age_stamp = age;
        let (flags, dl_bw) = (self.dle(curr).flags, self.dle(curr).dl_bw);
        let scaled = if flags & SCHED_FLAG_RECLAIM != 0 {
            // GRUB-PA: a reclaiming task is charged by the active
            // bandwidth, not scaled by frequency and capacity.
            self.grub_reclaim(cpu, delta, dl_bw)
        } else {
            let mut scaled = delta;
            if self.cpufreq.invariant {
                scaled = (scaled * self.cpufreq.freq_scale(cpu)) >> 10;
            }
            (scaled * self.sched.cpu_scale[cpu]) >> 10
        };
        let d = self.dle_mut(curr);
        d.runtime -= scaled as i64;
        if d.runtime <= 0 || d.dl_yielded {
            if d.runtime <= 0 && flags & SCHED_FLAG_DL_OVERRUN != 0 {
                // dl_overrun: SIGXCPU from the task's next tick.
                self.sched.dl_stats.overruns += 1;
                self.q.schedule(Instant(self.now), Ev::DlOverrun(curr));
            }
            self.dl_throttle_curr(cpu, curr);
        }
        self.dl_rt_time_account(cpu, delta);
    }

    /// The throttle of update_curr_dl_se(): off the tree until the
    /// replenishment timer (at once if the next period has begun).
    ///
    /// Deviation: the kernel's throttled task stays TASK_ON_RQ_QUEUED, so
    /// PSI counts it as runnable; here it leaves the runqueue's counts,
    /// which PSI reads.
    fn dl_throttle_curr(&mut self, cpu: usize, curr: TaskId) {
        self.dle_mut(curr).dl_throttled = true;
        self.sched.dl_stats.throttles += 1;
        self.dequeue_dl_entity_tree(cpu, curr);
        self.dequeue_pushable_dl_task(cpu, curr);
        if !self.start_dl_timer(curr) {
            self.enqueue_task_dl(cpu, curr, ENQUEUE_REPLENISH);
        }
        if self.sched.rqs[cpu].dl.root.first().is_none_or(|&(_, _, t)| t != curr) {
            self.resched_curr(cpu);
        }
    }

    /// Deadline time counts in the RT bandwidth (rt_rq->rt_time) while the
    /// RT period timer runs or the budget is not spent
    /// (sched_rt_bandwidth_account), on the kernels that throttle RT.
    fn dl_rt_time_account(&mut self, cpu: usize, delta: u64) {
        let Some(global) = self.rt_runtime_ns() else { return };
        let active = self.sched.rt_period_active;
        let rt = &mut self.sched.rqs[cpu].rt;
        let runtime = rt.rt_runtime.unwrap_or(global);
        if !active || rt.rt_time < runtime {
            rt.rt_time += delta;
        }
    }

    /// yield_task_dl(): give up the rest of this instance; the
    /// replenishment brings the next one with a new budget.
    pub fn yield_task_dl(&mut self, tid: TaskId) {
        let cpu = self.sched.tasks[tid].cpu;
        self.dle_mut(tid).dl_yielded = true;
        self.update_curr(cpu);
        if self.dle(tid).on_dl_rq {
            // update_curr() charged nothing (no time passed): the yield
            // throttles by itself (update_curr_dl_se's delta_exec <= 0 case).
            self.dl_throttle_curr(cpu, tid);
        }
    }

    /// update_dl_rq_load_avg(): PELT of deadline utilisation on the CPU.
    pub fn update_dl_rq_load_avg(&mut self, cpu: usize, running: bool) {
        let now = self.rq_clock_pelt(cpu);
        let sa = &mut self.sched.rqs[cpu].dl.avg_dl;
        let r = u64::from(running);
        if pelt::update_load_sum(sa, now, r, r, r) {
            pelt::update_load_avg(sa, 1);
        }
    }

    // ----------------------------------------------------------- preemption

    /// wakeup_preempt_dl(): the earlier deadline runs; on equal deadlines
    /// check_preempt_equal_dl() prefers a reschedule only if curr could
    /// go elsewhere and `p` could not.
    pub fn wakeup_preempt_dl(&mut self, cpu: usize, curr: TaskId, p: TaskId) {
        let (pd, cd) = (self.dle(p).deadline, self.dl_deadline_of(curr));
        if pd < cd {
            self.resched_curr(cpu);
            return;
        }
        if pd == cd && !self.sched.rqs[cpu].need_resched {
            if self.sched.tasks[curr].nr_cpus_allowed == 1 || self.cpudl_find(curr).is_none() {
                return;
            }
            if self.sched.tasks[p].nr_cpus_allowed != 1 && self.cpudl_find(p).is_some() {
                return;
            }
            self.resched_curr(cpu);
        }
    }
}

#[cfg(test)]
#[path = "deadline_tests.rs"]
mod tests;
