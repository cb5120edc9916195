//! Models the deadline server of kernel/sched/deadline.c and its one user,
//! the fair server of fair.c (6.12+): rq->fair_server, a deadline entity
//! of 50 ms every second per CPU that runs the fair class when the classes
//! above it starve it. It replaced RT throttling as what keeps a fair task
//! alive beside an RT hog (without CONFIG_RT_GROUP_SCHED there is no RT
//! throttling at all from 6.12).
//!
//! The server is deferred (dl_defer): it starts when a fair task is queued
//! on a runqueue without one (dl_server_start), and waits for its
//! zero-laxity time, deadline - runtime, 950 ms on. Fair time run
//! meanwhile, and idle time, comes off its budget (dl_server_update,
//! dl_server_update_idle_time); a budget spent that way starts a new
//! period and pushes the zero-laxity time on (the fair class got its share
//! without help). If the timer fires with budget left, the fair class was
//! starved: the server becomes an ordinary deadline entity
//! (dl_defer_running), picks fair tasks at deadline priority until its
//! budget is spent, and is replenished period after period while the
//! starvation lasts. Picked with no fair task to run, it stops.
//!
//! Read in 6.12.117 (Debian's linux-source-6.12), which carries the
//! stable fixes (the timer forwarded while the budget is being used in the
//! background, dl_server_min_res).
//!
//! Deviation: enqueue_task_fair() starts the server when the runqueue had
//! no queued fair task (cfs.h_nr_queued 0 -> 1); the model tests the
//! runqueue's fair count after the enqueue, the same condition.

use crate::engine::event::Ev;
use crate::engine::Instant;
use crate::sched::class::SchedClass;
use crate::sched::deadline::{dl_timer_at, to_ratio, BW_UNIT};
use crate::sched::dl_rq::FAIR_SERVER;
use crate::sched::env::SchedEnv;
use crate::sched::task::{TaskId, TaskState};

/// dl_server_min_res: a deferred timer is not pushed on by less than 1 ms.
const DL_SERVER_MIN_RES: u64 = 1_000_000;

impl SchedEnv {
    /// The fair servers' bandwidth (to_ratio of their period and runtime),
    /// which admission control counts per CPU (dl_server_apply_params adds
    /// it to the root domain's total_bw).
    pub fn fair_server_bw(&self) -> u64 {
        if !self.cfg.mech.fair_server {
            return 0;
        }
        let t = &self.cfg.sysctl;
        to_ratio(t.sched_fair_server_period_ns, t.sched_fair_server_runtime_ns).min(BW_UNIT)
    }

    /// enqueue_task_fair()'s hook: the first fair task queued on `cpu`
    /// (`was_idle`: nothing ran or was queued there) starts the server,
    /// after idle time is counted as the fair class's.
    #[inline(never)]
    pub(crate) fn fair_server_enqueue(&mut self, cpu: usize, was_idle: bool) {
        if was_idle {
            self.dl_server_update_idle_time(cpu);
        }
        self.dl_server_start(cpu);
    }

    /// dl_server_start(): the first start sets up the reservation
    /// (dl_server_apply_params, setup_new_dl_entity); a server not active
    /// is queued as a wakeup, which arms its zero-laxity timer.
    fn dl_server_start(&mut self, cpu: usize) {
        let (runtime, period) =
            (self.cfg.sysctl.sched_fair_server_runtime_ns, self.cfg.sysctl.sched_fair_server_period_ns);
        let now = self.now;
        let fs = &mut self.sched.rqs[cpu].dl.fs;
        if fs.dl.dl_period == 0 {
            fs.dl.dl_runtime = runtime;
            fs.dl.dl_deadline = period;
            fs.dl.dl_period = period;
            fs.dl.dl_bw = to_ratio(period, runtime);
            fs.dl.dl_density = fs.dl.dl_bw;
            // setup_new_dl_entity -> replenish_dl_new_period: deferred.
            fs.dl.new_period(now);
            fs.dl.dl_throttled = true;
            fs.defer_armed = true;
        }
        if fs.dl.dl_runtime == 0 || fs.active {
            return;
        }
        fs.active = true;
        // enqueue_dl_entity(ENQUEUE_WAKEUP): task_contending(), then
        // update_dl_entity().
        self.fs_contending(cpu);
        let fs = &mut self.sched.rqs[cpu].dl.fs;
        if fs.dl.deadline < now || fs.dl.overflow(now) {
            fs.defer_running = false;
            fs.dl.new_period(now);
            fs.dl.dl_throttled = true;
            fs.defer_armed = true;
        } else if !fs.defer_running {
            fs.defer_armed = true;
            fs.dl.dl_throttled = true;
        }
        self.fs_enqueue_or_wait(cpu);
        // dl_server_start()'s resched when curr is not a deadline task.
        if self.sched.rqs[cpu].curr.is_none_or(|c| !self.sched.tasks[c].policy.is_dl()) {
            self.resched_curr(cpu);
        }
    }

    /// The tail of enqueue_dl_entity() for the server: still throttled,
    /// it waits for its timer; else into the dl_rq.
    fn fs_enqueue_or_wait(&mut self, cpu: usize) {
        if self.sched.rqs[cpu].dl.fs.dl.dl_throttled {
            if self.fs_start_timer(cpu) {
                return;
            }
            let fs = &mut self.sched.rqs[cpu].dl.fs;
            fs.defer_armed = false;
            fs.dl.dl_throttled = false;
        }
        self.fs_enqueue_tree(cpu);
    }

    /// start_dl_timer() of the server: at the zero-laxity time while armed,
    /// else at the next period.
    fn fs_start_timer(&mut self, cpu: usize) -> bool {
        let fs = &self.sched.rqs[cpu].dl.fs;
        let act = if fs.defer_armed {
            fs.dl.deadline.saturating_sub(fs.dl.runtime.max(0) as u64)
        } else {
            fs.dl.next_period()
        };
        let Some(at) = dl_timer_at(act, self.now) else { return false };
        if fs.dl.timer.is_none() {
            let key = self.q.schedule(Instant(at), Ev::DlServerTimer(cpu));
            self.sched.rqs[cpu].dl.fs.dl.timer = Some(key);
        }
        true
    }

    fn fs_cancel_timer(&mut self, cpu: usize) {
        if let Some(key) = self.sched.rqs[cpu].dl.fs.dl.timer.take() {
            self.q.cancel(key);
        }
    }

    /// __enqueue_dl_entity() of the server: it counts in dl_nr_running and
    /// nr_running as a task does (inc_dl_tasks).
    fn fs_enqueue_tree(&mut self, cpu: usize) {
        let seq = self.sched.next_list_seq();
        let dl = &mut self.sched.rqs[cpu].dl;
        debug_assert!(!dl.fs.dl.on_dl_rq);
        dl.fs.dl.on_dl_rq = true;
        dl.fs.dl.seq = seq;
        dl.root.insert((dl.fs.dl.deadline, seq, FAIR_SERVER));
        dl.dl_nr_running += 1;
        if dl.dl_nr_running == 1 && self.cfg.mech.dl_cpupri_higher {
            self.sched.rd.cpupri.set_higher(cpu);
        }
        self.add_nr_running(cpu);
    }

    fn fs_dequeue_tree(&mut self, cpu: usize) {
        let dl = &mut self.sched.rqs[cpu].dl;
        if !dl.fs.dl.on_dl_rq {
            return;
        }
        dl.fs.dl.on_dl_rq = false;
        let removed = dl.root.remove(&(dl.fs.dl.deadline, dl.fs.dl.seq, FAIR_SERVER));
        debug_assert!(removed, "the fair server was not queued");
        dl.dl_nr_running -= 1;
        if dl.dl_nr_running == 0 && self.cfg.mech.dl_cpupri_higher {
            let prio = self.sched.rqs[cpu].rt.highest_prio as i32;
            self.sched.rd.cpupri.set(cpu, prio);
        }
        self.sub_nr_running(cpu);
    }

    /// dl_server_stop(): picked with no fair task to run.
    fn dl_server_stop(&mut self, cpu: usize) {
        self.fs_dequeue_tree(cpu);
        // dequeue_dl_entity(DEQUEUE_SLEEP) -> task_non_contending().
        self.fs_non_contending(cpu);
        self.fs_cancel_timer(cpu);
        let fs = &mut self.sched.rqs[cpu].dl.fs;
        fs.defer_armed = false;
        fs.dl.dl_throttled = false;
        fs.active = false;
        fs.stops += 1;
    }

    /// Whether __schedule() on `cpu`, `prev` running, reaches the fair
    /// server's pick first: prev is a queued fair task and the server is
    /// the earliest deadline entity. Its charge then waits for that pick.
    #[inline]
    pub(crate) fn fair_server_picks_prev(&self, cpu: usize, prev: TaskId) -> bool {
        if !self.cfg.mech.fair_server {
            return false;
        }
        let dl = &self.sched.rqs[cpu].dl;
        if !dl.fs.dl.on_dl_rq || dl.root.first().is_none_or(|&(_, _, t)| t != FAIR_SERVER) {
            return false;
        }
        let t = &self.sched.tasks[prev];
        t.sched_class() == SchedClass::Fair && t.state == TaskState::Runnable && t.cpu == cpu && !t.throttled
    }

    /// __pick_task_dl()'s server branch: the fair class's pick, or the
    /// server stops.
    ///
    /// pick_task_fair() first charges the running fair task
    /// (update_curr(), 6.11+), and that charge can spend the server's
    /// budget: the server throttles and leaves the deadline queue, yet the
    /// task it was picking is returned and runs on, as the server's, while
    /// the resched the throttle raised is cleared with the pick's. Until
    /// something else reschedules the CPU, the task runs as a fair task in
    /// the background, each budget it spends starting a new period
    /// (dl_server_update), and the RT tasks queued there wait: on 6.12 and
    /// 6.18 (Debian, QEMU) and this host's 6.18.44 a SCHED_FIFO 99 task
    /// beside an RT hog and a fair hog waited up to 1.26 s, traced in the
    /// 6.18 guest (docs/models/sched-deadline.md, "The fair server's
    /// throttle inside its own pick").
    pub(crate) fn dl_server_pick(&mut self, cpu: usize) -> Option<TaskId> {
        self.update_curr(cpu);
        match crate::sched::fair::group::by_groups!(self.pick_next_task_fair(cpu)) {
            Some(p) => {
                let fs = &mut self.sched.rqs[cpu].dl.fs;
                fs.picks += 1;
                fs.served = Some(p);
                Some(p)
            }
            None => {
                self.dl_server_stop(cpu);
                None
            }
        }
    }

    /// dl_server_update() from update_curr_fair(): `delta` of fair time
    /// comes off the budget, whether the server ran it or not.
    #[inline(never)]
    pub(crate) fn dl_server_update(&mut self, cpu: usize, delta: u64) {
        let fs = &mut self.sched.rqs[cpu].dl.fs;
        if fs.dl.dl_runtime == 0 {
            return;
        }
        fs.dl.runtime -= delta as i64;
        if fs.dl.dl_throttled && fs.dl.runtime <= 0 {
            // Served in the background: a new period, the zero-laxity time
            // pushed on.
            fs.defer_running = false;
            let now = self.now;
            fs.dl.new_period(now);
            fs.dl.dl_throttled = true;
            fs.defer_armed = true;
            self.fs_cancel_timer(cpu);
            let started = self.fs_start_timer(cpu);
            debug_assert!(started, "a new period's zero-laxity time is ahead");
            return;
        }
        if !fs.dl.dl_throttled && fs.dl.runtime <= 0 {
            // Running as a deadline entity, its budget spent: throttled
            // until the next period (update_curr_dl_se's throttle).
            fs.dl.dl_throttled = true;
            self.fs_dequeue_tree(cpu);
            if !self.fs_start_timer(cpu) {
                self.fs_replenish(cpu);
                self.fs_enqueue_tree(cpu);
            }
            if self.sched.rqs[cpu].dl.root.first().is_none_or(|&(_, _, t)| t != FAIR_SERVER) {
                self.resched_curr(cpu);
            }
        }
    }

    /// dl_server_update_idle_time(): while deferred, the time `cpu` was
    /// idle counts as the fair class's (the classes above did not use it);
    /// the budget stops at zero.
    pub(crate) fn dl_server_update_idle_time(&mut self, cpu: usize) {
        let now = self.now;
        let fs = &mut self.sched.rqs[cpu].dl.fs;
        // !dl_defer (never started) or no budget: nothing to count.
        if fs.dl.dl_period == 0 || fs.dl.runtime < 0 {
            return;
        }
        fs.dl.runtime -= now.saturating_sub(fs.idle_start) as i64;
        if fs.dl.runtime < 0 {
            fs.defer_running = false;
            fs.dl.runtime = 0;
        }
        fs.idle_start = now;
    }

    /// replenish_dl_entity() of the server: a deferred activation whose
    /// budget would overflow starts a new period; the flags go.
    fn fs_replenish(&mut self, cpu: usize) {
        let now = self.now;
        let fs = &mut self.sched.rqs[cpu].dl.fs;
        if fs.defer_armed && fs.dl.overflow(now) {
            fs.dl.new_period(now);
        }
        fs.dl.replenish(now);
        fs.dl.dl_throttled = false;
        fs.defer_armed = false;
    }

    /// dl_server_timer(): at the zero-laxity time, a budget used in the
    /// background meanwhile pushes the timer on; else the fair class was
    /// starved and the server runs (dl_defer_running). At the next period
    /// of a throttled running server, its replenishment.
    pub fn dl_server_timer(&mut self, cpu: usize) {
        let now = self.now;
        let fs = &mut self.sched.rqs[cpu].dl.fs;
        fs.dl.timer = None;
        if !fs.dl.dl_throttled || fs.dl.dl_runtime == 0 {
            return;
        }
        if fs.defer_armed {
            let zero_laxity = fs.dl.deadline.saturating_sub(fs.dl.runtime.max(0) as u64);
            if now + DL_SERVER_MIN_RES < zero_laxity {
                let key = self.q.schedule(Instant(zero_laxity), Ev::DlServerTimer(cpu));
                self.sched.rqs[cpu].dl.fs.dl.timer = Some(key);
                return;
            }
            fs.defer_running = true;
        }
        self.fs_replenish(cpu);
        self.fs_enqueue_tree(cpu);
        match self.sched.rqs[cpu].curr {
            Some(c) if self.sched.tasks[c].policy.is_dl() => {
                if self.sched.rqs[cpu].dl.fs.dl.deadline < self.dle(c).deadline {
                    self.resched_curr(cpu);
                }
            }
            _ => self.resched_curr(cpu),
        }
        if !self.sched.rqs[cpu].dl.pushable.is_empty() {
            self.push_dl_task(cpu);
        }
    }
}
