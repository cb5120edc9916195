//! Models kernel/sched/rt.c (sched_rt.c before 2.6.32): the RT class.
//!
//! * The runqueue is an array of 100 FIFO lists, one per kernel priority
//!   (0 = rt_priority 99, the highest; 98 = rt_priority 1), plus a bitmap of
//!   the non-empty lists. Pick = find-first-set, then the list's head: O(1).
//!   Unlike CFS, the running task stays queued (at the head of its list).
//! * SCHED_FIFO runs until it blocks, yields or a higher priority preempts it;
//!   SCHED_RR also loses the CPU to an equal priority when its timeslice
//!   (`kernel.sched_rr_timeslice_ms`, counted in ticks) runs out.
//! * Throttling (2.6.25+; from 6.12 only with CONFIG_RT_GROUP_SCHED): each
//!   rq accumulates `rt_time`; beyond `sched_rt_runtime_us` in a
//!   `sched_rt_period_us` period the rt_rq is throttled and the lower
//!   classes run until the period timer replenishes.
//! * Push/pull (2.6.25+, Rostedt/Haskins): an rq with two or more RT tasks,
//!   one of which may migrate (from 6.7: with a pushable task), is
//!   "overloaded" (rto_mask); its waiting tasks
//!   are pushed to the lowest-priority CPU cpupri finds (after a wakeup that
//!   does not preempt, and after a switch to an RT task); an rq that lowers
//!   its priority pulls the best waiting task from the overloaded rqs.

use crate::engine::event::Ev;
use crate::engine::Instant;
use crate::kernel::features::Feature;
use crate::kernel::RtBalance;
use crate::prio::{Policy, MAX_RT_PRIO};
use crate::sched::class::{Pick, RtSchedClass, SchedClassOps, WakeSource, ENQUEUE_HEAD, WF_FORK};
use crate::sched::env::SchedEnv;
use crate::sched::pelt;
use crate::sched::sched::sched_avg_update;
use crate::sched::sd_flags::{SD_BALANCE_FORK, SD_WAKE_AFFINE};
use crate::sched::task::{TaskId, TaskState};

impl SchedClassOps for RtSchedClass {
    fn enqueue_task(sim: &mut SchedEnv, cpu: usize, p: TaskId, flags: u32) {
        sim.enqueue_task_rt(cpu, p, flags & ENQUEUE_HEAD != 0);
    }

    fn dequeue_task(sim: &mut SchedEnv, cpu: usize, p: TaskId, _flags: u32) -> bool {
        sim.dequeue_task_rt(cpu, p);
        true
    }

    fn yield_task(sim: &mut SchedEnv, p: TaskId) {
        sim.yield_task_rt(p);
    }

    fn wakeup_preempt(sim: &mut SchedEnv, cpu: usize, curr: TaskId, p: TaskId, _wake_flags: u32) {
        sim.check_preempt_curr_rt(cpu, curr, p);
    }

    /// balance_rt(): the runqueue is about to lower its priority (prev left
    /// the RT queue): pull_rt_task before picking.
    fn balance(sim: &mut SchedEnv, cpu: usize, prev: TaskId) {
        if sim.cfg.mech.rt_push_pull()
            && !sim.sched.tasks[prev].rt.on_rq
            && sim.sched.rqs[cpu].rt.highest_prio > sim.sched.tasks[prev].prio() as usize
        {
            sim.pull_rt_task(cpu);
        }
    }

    /// pick_next_task_rt(). nr_running above the fair count means RT tasks
    /// are queued: checked without touching the boxed rt_rq.
    #[inline]
    fn pick_next_task(sim: &mut SchedEnv, cpu: usize, _newidle: bool) -> Pick {
        let rq = &sim.sched.rqs[cpu];
        if rq.nr_running == sim.sched.cfs_rqs[cpu].h_nr_running {
            return Pick::Empty;
        }
        sim.pick_next_task_rt(cpu).map_or(Pick::Empty, Pick::Task)
    }

    fn put_prev_task(sim: &mut SchedEnv, cpu: usize, p: TaskId, runnable: bool) {
        sim.update_rt_rq_load_avg(cpu, true);
        if runnable {
            sim.put_prev_task_rt(cpu, p);
        }
    }

    fn set_next_task(sim: &mut SchedEnv, cpu: usize, p: TaskId) {
        sim.set_next_task_rt(cpu, p);
    }

    /// rt_queue_push_tasks() (post_schedule_rt in 2.6.25): push the
    /// preempted or waiting RT tasks away.
    fn balance_callback(sim: &mut SchedEnv, cpu: usize, _p: TaskId) {
        if sim.cfg.mech.rt_push_pull() && !sim.sched.rqs[cpu].rt.pushable.is_empty() {
            sim.push_rt_tasks(cpu);
        }
    }

    fn select_task_rq(sim: &mut SchedEnv, p: TaskId, cpu: usize, wake_flags: u32, _src: WakeSource) -> usize {
        if wake_flags & WF_FORK != 0 && sim.cfg.mech.rt_balance == RtBalance::Legacy {
            // 2.6.24: sched_fork -> sched_balance_self(SD_BALANCE_FORK), for
            // every class. Deviation: the 2.6.35 form of find_idlest_group /
            // find_idlest_cpu stands in for 2.6.24's (same loads and test).
            return sim.select_task_rq_fork_avg(p, cpu, SD_BALANCE_FORK);
        }
        sim.select_task_rq_rt(p, cpu)
    }

    /// sched_fork(): a full RR slice; the child starts on the parent's CPU.
    fn task_fork(sim: &mut SchedEnv, p: TaskId, parent_cpu: usize) {
        sim.sched.rt_nr_tasks += 1;
        sim.sched.tasks[p].rt.time_slice = sim.tun.sched_rr_timeslice;
        if sim.sched.tasks[p].cpus.test(parent_cpu) {
            sim.sched.tasks[p].cpu = parent_cpu;
        }
    }

    fn task_woken(sim: &mut SchedEnv, cpu: usize, p: TaskId) {
        sim.task_woken_rt(cpu, p);
    }

    fn task_dead(sim: &mut SchedEnv, _cpu: usize, _p: TaskId) {
        sim.sched.rt_nr_tasks -= 1;
    }

    fn task_tick(sim: &mut SchedEnv, cpu: usize, curr: TaskId) {
        sim.task_tick_rt(cpu, curr);
    }

    fn update_curr(sim: &mut SchedEnv, cpu: usize, _curr: TaskId, delta: u64) {
        sim.update_curr_rt(cpu, delta);
    }
}

impl SchedEnv {
    #[inline]
    fn rt_prio(&self, tid: TaskId) -> usize {
        self.sched.tasks[tid].prio() as usize
    }

    /// rt_runtime in ns, or None for RUNTIME_INF (sched_rt_runtime_us = -1).
    /// From 6.12 only CONFIG_RT_GROUP_SCHED throttles (the fair server
    /// replaced the default bandwidth control).
    pub fn rt_runtime_ns(&self) -> Option<u64> {
        let us = self.cfg.sysctl.sched_rt_runtime_us;
        let bandwidth = !self.cfg.mech.fair_server || self.cfg.rt_group_sched;
        (us >= 0 && bandwidth).then(|| us as u64 * 1000)
    }

    pub fn rt_period_ns(&self) -> u64 {
        self.cfg.sysctl.sched_rt_period_us * 1000
    }

    // ------------------------------------------------------------ bookkeeping

    /// inc/dec_rt_prio + cpupri_set + rt_set/clear_overload after a change.
    fn update_rt_state(&mut self, cpu: usize) {
        let rt = &mut self.sched.rqs[cpu].rt;
        let highest = rt.active.first().unwrap_or(MAX_RT_PRIO);
        let changed = highest != rt.highest_prio;
        rt.highest_prio = highest;
        let over = rt.rt_nr_running > 1 && rt.rt_nr_migratory > 0;
        if changed && self.cfg.mech.rt_push_pull() {
            self.sched.rd.cpupri.set(cpu, highest as i32);
        }
        if !self.cfg.mech.rt_overload_pushable {
            self.set_rt_overload(cpu, over);
        }
    }

    /// rt_set_overload() / rt_clear_overload(): the runqueue enters or
    /// leaves rd->rto_mask. Before 6.7 it is overloaded while it has two or
    /// more RT tasks, one of which may migrate (update_rt_migration); from
    /// 6.7 (612f769edd06 "sched/rt: Make rt_rq->pushable_tasks updates drive
    /// rto_mask") while it has a pushable task.
    fn set_rt_overload(&mut self, cpu: usize, over: bool) {
        let rt = &mut self.sched.rqs[cpu].rt;
        if over == rt.overloaded {
            return;
        }
        rt.overloaded = over;
        if self.cfg.mech.rt_push_pull() {
            if over {
                self.sched.rd.rto_mask.set(cpu);
                self.sched.rd.rto_count += 1;
            } else {
                self.sched.rd.rto_mask.clear(cpu);
                self.sched.rd.rto_count -= 1;
            }
        }
    }

    fn enqueue_pushable_task(&mut self, cpu: usize, tid: TaskId) {
        if self.sched.tasks[tid].nr_cpus_allowed <= 1 || self.sched.tasks[tid].rt.pushable_seq.is_some() {
            return;
        }
        let seq = self.sched.next_list_seq();
        let prio = self.rt_prio(tid);
        self.sched.tasks[tid].rt.pushable_seq = Some(seq);
        self.sched.rqs[cpu].rt.pushable.insert((prio, seq, tid));
        if self.cfg.mech.rt_overload_pushable {
            self.set_rt_overload(cpu, true);
        }
    }

    fn dequeue_pushable_task(&mut self, cpu: usize, tid: TaskId) {
        if let Some(seq) = self.sched.tasks[tid].rt.pushable_seq.take() {
            let prio = self.rt_prio(tid);
            self.sched.rqs[cpu].rt.pushable.remove(&(prio, seq, tid));
            if self.cfg.mech.rt_overload_pushable && self.sched.rqs[cpu].rt.pushable.is_empty() {
                self.set_rt_overload(cpu, false);
            }
        }
    }

    // ------------------------------------------------------ class operations

    /// update_rt_rq_load_avg(): PELT of RT utilisation on the CPU, with
    /// load = runnable = running as the kernel feeds it.
    #[inline(never)] // RT-only: keep it out of the fair hot path
    pub fn update_rt_rq_load_avg(&mut self, cpu: usize, running: bool) {
        let now = self.rq_clock_pelt(cpu); // sched/cpufreq.rs
        let sa = &mut self.sched.rqs[cpu].rt.avg_rt;
        let r = u64::from(running);
        if pelt::update_load_sum(sa, now, r, r, r) {
            pelt::update_load_avg(sa, 1);
        }
    }

    /// enqueue_task_rt(): at the tail of its priority list (head: ENQUEUE_HEAD).
    #[inline(never)] // RT-only: keep it out of the fair hot path
    pub fn enqueue_task_rt(&mut self, cpu: usize, tid: TaskId, head: bool) {
        // Deviation: the kernel's enqueue does not charge the running task;
        // the model does, except a fair task the fair server runs, whose
        // charge waits for the server's pick as in the kernel (dl_server.rs:
        // that charge can throttle the server inside its own pick).
        if !self.sched.rqs[cpu].curr.is_some_and(|c| self.fair_server_picks_prev(cpu, c)) {
            self.update_curr(cpu);
        }
        let prio = self.rt_prio(tid);
        let migratory = self.sched.tasks[tid].nr_cpus_allowed > 1;
        let weight = self.sched.tasks[tid].se.load.weight as u64;
        let rt = &mut self.sched.rqs[cpu].rt;
        rt.active.enqueue(prio, tid, head);
        rt.load_weight += weight;
        rt.rt_nr_running += 1;
        rt.rt_nr_migratory += u32::from(migratory);
        self.sched.tasks[tid].rt.on_rq = true;
        if self.sched.rqs[cpu].curr != Some(tid) {
            self.enqueue_pushable_task(cpu, tid);
            // A migrating task keeps the wait it began before the move.
            self.sched.tasks[tid].stats.wait_start.get_or_insert(self.now);
        }
        self.sched.wasted.track(self.sched.tasks[tid].nr_cpus_allowed, self.sched.rqs.len(), true);
        self.add_nr_running(cpu);
        self.update_rt_state(cpu);
        self.start_rt_bandwidth();
    }

    /// dequeue_task_rt().
    #[inline(never)] // RT-only: keep it out of the fair hot path
    pub fn dequeue_task_rt(&mut self, cpu: usize, tid: TaskId) {
        self.update_curr(cpu);
        let prio = self.rt_prio(tid);
        let migratory = self.sched.tasks[tid].nr_cpus_allowed > 1;
        self.dequeue_pushable_task(cpu, tid);
        let weight = self.sched.tasks[tid].se.load.weight as u64;
        let rt = &mut self.sched.rqs[cpu].rt;
        rt.load_weight -= weight;
        let removed = rt.active.dequeue(prio, tid);
        debug_assert!(removed, "dequeued RT task was not queued");
        rt.rt_nr_running -= 1;
        rt.rt_nr_migratory -= u32::from(migratory);
        self.sched.tasks[tid].rt.on_rq = false;
        self.sched.wasted.track(self.sched.tasks[tid].nr_cpus_allowed, self.sched.rqs.len(), false);
        self.sub_nr_running(cpu);
        self.update_rt_state(cpu);
    }

    /// pick_next_task_rt(): the head of the highest non-empty list, unless
    /// the rt_rq is throttled.
    ///
    /// Deviation: the kernel dequeues a throttled rt_rq from the rq
    /// (rq->nr_running drops by rt_nr_running); here its tasks stay counted
    /// in nr_running and are only skipped by the pick, so a throttled CPU
    /// with no fair work is not idle_cpu() for the fair wakeup path and
    /// balancer.
    #[inline]
    pub fn pick_next_task_rt(&self, cpu: usize) -> Option<TaskId> {
        let rt = &self.sched.rqs[cpu].rt;
        if rt.rt_throttled {
            return None;
        }
        rt.active.pick()
    }

    /// put_prev_task_rt(): a preempted, still queued task becomes pushable.
    #[inline(never)] // RT-only: keep it out of the fair hot path
    pub fn put_prev_task_rt(&mut self, cpu: usize, tid: TaskId) {
        // (update_rt_rq_load_avg(.., 1) is done by schedule() for every RT prev.)
        if self.sched.tasks[tid].rt.on_rq {
            self.enqueue_pushable_task(cpu, tid);
        }
        self.sched.tasks[tid].stats.wait_start = Some(self.now);
    }

    /// set_next_task_rt(): the picked task starts running; it is no longer
    /// pushable.
    #[inline(never)] // RT-only: keep it out of the fair hot path
    pub fn set_next_task_rt(&mut self, cpu: usize, tid: TaskId) {
        self.sched.rt_pressure = true;
        self.update_rt_rq_load_avg(cpu, false);
        self.dequeue_pushable_task(cpu, tid);
        self.set_next_task_clock(cpu, tid);
    }

    /// What set_next_task_rt() and _dl() share: the task's clock starts
    /// (p->se.exec_start) and its wait ends. See set_next_entity: the CPU
    /// may not be ready yet.
    pub(crate) fn set_next_task_clock(&mut self, cpu: usize, tid: TaskId) {
        let now = self.now.max(self.sched.rqs[cpu].busy_until);
        let t = &mut self.sched.tasks[tid];
        t.se.exec_start = now;
        t.se.prev_sum_exec_runtime = t.se.sum_exec_runtime;
        let w = t.stats.picked(now);
        self.sched.rqs[cpu].stats.wait_ns += w;
    }

    /// The RT part of update_curr(): rt_time and the throttle test
    /// (update_curr_rt -> sched_rt_runtime_exceeded).
    #[inline(never)] // RT-only: keep it out of the fair hot path
    pub fn update_curr_rt(&mut self, cpu: usize, delta: u64) {
        // sched_rt_avg_update(): rt_avg for scale_rt_power (2.6.x era).
        let rq = &mut self.sched.rqs[cpu].rt;
        let (avg, age) = sched_avg_update(rq.rt_avg, rq.rt_age_stamp, self.now);
        rq.rt_avg = avg + delta;
        rq.rt_age_stamp = age;
        let Some(global) = self.rt_runtime_ns() else { return };
        let period = self.rt_period_ns();
        let rt = &mut self.sched.rqs[cpu].rt;
        rt.rt_time += delta;
        // rt_rq->rt_runtime starts at the global runtime (sched_rt_do_global).
        let runtime = *rt.rt_runtime.get_or_insert(global);
        if rt.rt_throttled || runtime >= period {
            return;
        }
        // sched_rt_runtime_exceeded -> balance_runtime (RT_RUNTIME_SHARE).
        if rt.rt_time > runtime && self.cfg.features.on(Feature::RT_RUNTIME_SHARE) {
            self.do_balance_runtime(cpu, global, period);
        }
        let rt = &mut self.sched.rqs[cpu].rt;
        let runtime = rt.rt_runtime.unwrap_or(global);
        if rt.rt_time > runtime {
            rt.rt_throttled = true;
            self.sched.rt_throttle_events += 1;
            // "sched: RT throttling activated" (printk_deferred_once).
            self.resched_curr(cpu);
        }
    }

    /// do_balance_runtime() [rt.c @5.5, @6.12]: borrow from every other CPU
    /// of the root domain 1/n of its spare runtime (rt_runtime − rt_time),
    /// never beyond the period. Borrowed runtime is not given back (only CPU
    /// hotplug's __disable_runtime resets it), so a CPU that once borrowed up
    /// to the period can run RT at 100 % from then on.
    fn do_balance_runtime(&mut self, cpu: usize, global: u64, period: u64) {
        let weight = self.sched.rqs.len() as u64;
        for i in 0..self.sched.rqs.len() {
            if i == cpu {
                continue;
            }
            let it = &mut self.sched.rqs[i].rt;
            let it_runtime = *it.rt_runtime.get_or_insert(global);
            let spare = it_runtime as i64 - it.rt_time as i64;
            if spare <= 0 {
                continue;
            }
            let mine = self.sched.rqs[cpu].rt.rt_runtime.unwrap_or(global);
            let diff = (spare as u64 / weight).min(period - mine);
            self.sched.rqs[i].rt.rt_runtime = Some(it_runtime - diff);
            self.sched.rqs[cpu].rt.rt_runtime = Some(mine + diff);
            if mine + diff == period {
                break;
            }
        }
    }

    /// start_rt_bandwidth(): arm the period timer if it is not running. The
    /// timer's expiries stay on a grid of whole periods from boot (the
    /// hrtimer is forwarded, never restarted from now).
    ///
    /// Deviation: 2.6.25 had no hrtimer; update_sched_rt_period() checked
    /// the period boundary lazily from the tick. The model uses the 2.6.26+
    /// timer for every version (same boundaries up to one tick).
    fn start_rt_bandwidth(&mut self) {
        if self.sched.rt_period_active || self.rt_runtime_ns().is_none() {
            return;
        }
        self.sched.rt_period_active = true;
        let next = self.hrtimer_period_next(self.rt_period_ns());
        self.q.schedule(Instant(next), Ev::RtPeriod);
    }

    /// sched_rt_period_timer -> do_sched_rt_period_timer(): replenish every
    /// rq; unthrottle the ones below their runtime again; keep the timer only
    /// while some rq has RT time or RT tasks.
    #[inline(never)] // RT-only: keep it out of the fair hot path
    pub fn sched_rt_period_timer(&mut self) {
        let Some(runtime) = self.rt_runtime_ns() else {
            self.sched.rt_period_active = false;
            return;
        };
        let mut idle = true;
        for cpu in 0..self.sched.rqs.len() {
            // The running task's time so far belongs to the period that ends.
            if self.sched.rqs[cpu].curr.is_some_and(|c| self.sched.tasks[c].policy.is_rt()) {
                self.update_curr(cpu);
            }
            let rt = &mut self.sched.rqs[cpu].rt;
            let runtime = rt.rt_runtime.unwrap_or(runtime);
            if rt.rt_time > 0 {
                rt.rt_time -= rt.rt_time.min(runtime);
                let mut enqueue = false;
                if rt.rt_throttled && rt.rt_time < runtime {
                    rt.rt_throttled = false;
                    enqueue = true;
                }
                if rt.rt_time > 0 || rt.rt_nr_running > 0 {
                    idle = false;
                }
                if enqueue && rt.rt_nr_running > 0 {
                    self.resched_curr(cpu);
                }
            } else if rt.rt_nr_running > 0 {
                idle = false;
                if rt.rt_throttled {
                    rt.rt_throttled = false;
                    self.resched_curr(cpu);
                }
            }
        }
        if idle {
            self.sched.rt_period_active = false;
        } else {
            let next = self.now + self.rt_period_ns();
            self.q.schedule(Instant(next), Ev::RtPeriod);
        }
    }

    /// task_tick_rt(): SCHED_RR timeslice countdown; on expiry the task
    /// goes to the tail of its list if others wait at its level.
    #[inline(never)] // RT-only: keep it out of the fair hot path
    pub fn task_tick_rt(&mut self, cpu: usize, curr: TaskId) {
        self.update_rt_rq_load_avg(cpu, true);
        if self.sched.tasks[curr].state != TaskState::Runnable || self.sched.tasks[curr].policy != Policy::Rr {
            return;
        }
        let t = &mut self.sched.tasks[curr];
        t.rt.time_slice = t.rt.time_slice.saturating_sub(1);
        if t.rt.time_slice > 0 {
            return;
        }
        t.rt.time_slice = self.tun.sched_rr_timeslice;
        let prio = self.rt_prio(curr);
        if self.sched.rqs[cpu].rt.active.len_at(prio) > 1 {
            self.sched.rqs[cpu].rt.active.requeue(prio, curr, false);
            self.resched_curr(cpu);
        }
    }

    /// yield_task_rt(): to the tail of its list.
    #[inline(never)] // RT-only: keep it out of the fair hot path
    pub fn yield_task_rt(&mut self, tid: TaskId) {
        let cpu = self.sched.tasks[tid].cpu;
        let prio = self.rt_prio(tid);
        self.sched.rqs[cpu].rt.active.requeue(prio, tid, false);
    }

    /// check_preempt_curr_rt() / wakeup_preempt_rt(): a strictly higher
    /// priority preempts; at equal priority (2.6.26+) current is rescheduled
    /// when it could be pushed and the wakee could not.
    #[inline(never)] // RT-only: keep it out of the fair hot path
    pub fn check_preempt_curr_rt(&mut self, cpu: usize, curr: TaskId, p: TaskId) {
        let (pp, cp) = (self.sched.tasks[p].prio(), self.sched.tasks[curr].prio());
        if pp < cp {
            self.resched_curr(cpu);
            return;
        }
        if pp == cp && self.cfg.mech.rt_balance == RtBalance::PushPull && !self.sched.rqs[cpu].need_resched {
            self.check_preempt_equal_prio(cpu, curr, p);
        }
    }

    /// check_preempt_equal_prio().
    fn check_preempt_equal_prio(&mut self, cpu: usize, curr: TaskId, p: TaskId) {
        let c = &self.sched.tasks[curr];
        if c.nr_cpus_allowed == 1 || self.sched.rd.cpupri.find(c.prio(), &c.cpus).is_none() {
            return;
        }
        let t = &self.sched.tasks[p];
        if t.nr_cpus_allowed != 1 && self.sched.rd.cpupri.find(t.prio(), &t.cpus).is_some() {
            return;
        }
        let prio = self.rt_prio(p);
        self.sched.rqs[cpu].rt.active.requeue(prio, p, true);
        self.resched_curr(cpu);
    }

    // -------------------------------------------------------------- placement

    /// select_task_rq_rt() for wakeups and forks: `cpu` is the task's CPU
    /// (wakeup) or the parent's (fork).
    #[inline(never)] // RT-only: keep it out of the fair hot path
    pub fn select_task_rq_rt(&mut self, p: TaskId, cpu: usize) -> usize {
        let cpu =
            if self.sched.tasks[p].cpus.test(cpu) { cpu } else { self.sched.tasks[p].cpus.first().unwrap_or(cpu) };
        if self.sched.tasks[p].nr_cpus_allowed == 1 || !self.cfg.mech.rt_push_pull() {
            return cpu;
        }
        let Some(curr) = self.sched.rqs[cpu].curr else { return cpu };
        if !self.sched.tasks[curr].policy.is_rt() {
            return cpu;
        }
        let pprio = self.sched.tasks[p].prio();
        if self.cfg.mech.rt_balance == RtBalance::PushPull2625 {
            // 2.6.25: move whenever an RT task runs there.
            return self.find_lowest_rq(p, cpu).unwrap_or(cpu);
        }
        let c = &self.sched.tasks[curr];
        if c.nr_cpus_allowed < 2 || c.prio() <= pprio {
            if let Some(target) = self.find_lowest_rq(p, cpu) {
                if (pprio as usize) < self.sched.rqs[target].rt.highest_prio {
                    return target;
                }
            }
        }
        cpu
    }

    /// find_lowest_rq(task): among the CPUs of the lowest cpupri level the
    /// task may use, prefer its last CPU, then (walking that CPU's domains
    /// bottom-up, SD_WAKE_AFFINE ones) `this_cpu` or any CPU of the domain,
    /// then this_cpu, then any.
    ///
    /// Deviation: 2.6.25 and 2.6.26 scanned the CPUs linearly
    /// (find_lowest_cpus) instead of cpupri; the sets they return differ
    /// only in corner cases (2.6.25 took the first non-RT CPU alone).
    pub fn find_lowest_rq(&self, p: TaskId, this_cpu: usize) -> Option<usize> {
        let t = &self.sched.tasks[p];
        if t.nr_cpus_allowed == 1 {
            return None;
        }
        let mask = self.sched.rd.cpupri.find(t.prio(), &t.cpus)?;
        let cpu = t.cpu;
        if mask.test(cpu) {
            return Some(cpu);
        }
        for &d in &self.topo.cpu_domains[cpu] {
            let dom = &self.topo.domains[d];
            if dom.flags & SD_WAKE_AFFINE == 0 {
                continue;
            }
            if mask.test(this_cpu) && dom.span.binary_search(&this_cpu).is_ok() {
                return Some(this_cpu);
            }
            if let Some(&c) = dom.span.iter().find(|&&c| mask.test(c)) {
                return Some(c);
            }
        }
        if mask.test(this_cpu) {
            return Some(this_cpu);
        }
        // Deviation: 6.x spreads with cpumask_any_and_distribute; the model
        // takes the first CPU of the mask (deterministic either way).
        mask.first()
    }

    /// task_woken_rt(): a woken task that will not run now is pushed if the
    /// running RT task will not make room for it.
    #[inline(never)] // RT-only: keep it out of the fair hot path
    pub fn task_woken_rt(&mut self, cpu: usize, p: TaskId) {
        if !self.cfg.mech.rt_push_pull()
            || self.sched.rqs[cpu].curr == Some(p)
            || self.sched.rqs[cpu].need_resched
            || self.sched.tasks[p].nr_cpus_allowed <= 1
        {
            return;
        }
        let Some(curr) = self.sched.rqs[cpu].curr else { return };
        let c = &self.sched.tasks[curr];
        if c.policy.is_rt() && (c.nr_cpus_allowed < 2 || c.prio() <= self.sched.tasks[p].prio()) {
            self.push_rt_tasks(cpu);
        }
    }

    // -------------------------------------------------------------- push/pull

    /// Move a queued, not running RT task (deactivate, set_task_cpu, activate).
    /// `exec_cpu` runs it: the pushing or the pulling CPU.
    fn move_queued_task_rt(&mut self, p: TaskId, src: usize, dst: usize, exec_cpu: usize) {
        self.dequeue_task_rt(src, p);
        self.set_task_cpu(p, dst, exec_cpu);
        self.enqueue_task_rt(dst, p, false);
        self.sched.rt_migrations += 1;
    }

    /// push_rt_task(rq): push the best waiting task to a lower-priority CPU.
    /// Returns true if a task moved.
    fn push_rt_task(&mut self, cpu: usize) -> bool {
        if !self.sched.rqs[cpu].rt.overloaded {
            return false;
        }
        let Some(&(prio, _, p)) = self.sched.rqs[cpu].rt.pushable.first() else { return false };
        if let Some(curr) = self.sched.rqs[cpu].curr {
            if (prio as i32) < self.sched.tasks[curr].prio() {
                // It will preempt here: just reschedule.
                self.resched_curr(cpu);
                return false;
            }
        } else {
            self.resched_curr(cpu);
            return false;
        }
        // find_lock_lowest_rq(): one try is enough (no lock races here).
        let Some(dst) = self.find_lowest_rq(p, cpu) else { return false };
        if dst == cpu || self.sched.rqs[dst].rt.highest_prio <= prio {
            return false;
        }
        self.move_queued_task_rt(p, cpu, dst, cpu);
        self.resched_curr(dst);
        true
    }

    /// push_rt_tasks(): push while it succeeds.
    #[inline(never)] // RT-only: keep it out of the fair hot path
    pub fn push_rt_tasks(&mut self, cpu: usize) {
        while self.push_rt_task(cpu) {}
    }

    /// pull_rt_task(this_rq): take from the overloaded rqs every waiting task
    /// that beats what this rq will run, unless it is about to run there.
    /// With RT_PUSH_IPI (docs/LINUX-FACTS.md §5.6) the CPU does not pull: it starts
    /// (or re-arms) the push irq_work chain over the overloaded CPUs.
    #[inline(never)] // RT-only: keep it out of the fair hot path
    pub fn pull_rt_task(&mut self, this_cpu: usize) {
        if self.sched.rd.rto_count == 0 || (self.sched.rd.rto_count == 1 && self.sched.rd.rto_mask.test(this_cpu)) {
            return;
        }
        if self.cfg.features.on(Feature::RT_PUSH_IPI) {
            self.tell_cpu_to_push(this_cpu);
            return;
        }
        let cpus: Vec<usize> = self.sched.rd.rto_mask.iter().collect();
        for src in cpus {
            if src == this_cpu {
                continue;
            }
            let this_prio = self.sched.rqs[this_cpu].rt.highest_prio;
            if self.sched.rqs[src].rt.next_pushable_prio() >= this_prio {
                continue;
            }
            // pick_highest_pushable_task(src_rq, this_cpu).
            let Some(&(prio, _, p)) =
                self.sched.rqs[src].rt.pushable.iter().find(|&&(_, _, t)| self.sched.tasks[t].cpus.test(this_cpu))
            else {
                continue;
            };
            if prio >= this_prio {
                continue;
            }
            if (prio as i32) < self.sched.curr_prio(src) {
                continue; // it is about to preempt there
            }
            self.move_queued_task_rt(p, src, this_cpu, this_cpu);
            self.resched_curr(this_cpu);
        }
    }
}

#[cfg(test)]
#[path = "rt_tests.rs"]
mod tests;
