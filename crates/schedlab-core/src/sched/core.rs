//! Models kernel/sched/core.c: runqueues, schedule(), try_to_wake_up(),
//! the context switch, the scheduler tick and set_task_cpu(); plus the
//! event loop that drives them and the task-program interpreter.
//!
//! The whole machine is one `Sim`; the classes add `impl Sim` blocks in
//! their own files (fair/entity.rs, fair/wakeup.rs, fair/balance.rs), so the
//! kernel's function names map onto methods one to one.

use crate::cpumask::CpuMask;
use crate::engine::event::Ev;
use crate::engine::{EventQueue, Instant, Rng};
use crate::error::SimError;
use crate::kernel::ktask::KtaskJob;
use crate::kernel::RtBalance;
use crate::kernel::{BalancerEra, FairEra, KernelConfig, ScaledTunables};
use crate::machine::Machine;
use crate::scenario::{Scenario, TaskGroup, MAX_SIM_NS};
use crate::sched::class::{
    Pick, SchedClass, WakeSource, DEQUEUE_SLEEP, ENQUEUE_HEAD, ENQUEUE_INITIAL, ENQUEUE_WAKEUP, WF_FORK, WF_TTWU,
};
use crate::sched::cpupri::CpuPri;
use crate::sched::features::Feature;
use crate::sched::prio::{load_weight, Policy};
use crate::sched::sched::{CfsRq, LbStats, Rq, RqStats, SdState};
use crate::sched::task::{RtEntity, SchedEntity, Task, TaskCounters, TaskId, TaskState, TaskStats};
use crate::sched::topology::{build_sched_domains, SchedTopology};
use crate::stats::{CpuTime, Recorder, Wasted};
use crate::trace::{Ctx, Trace};
use crate::workload::rt_migrate_test::{RtMigrateTest, RtmtAction};
use crate::workload::Op;
use crate::workload::SyncObj;

/// The simulation: one machine, one kernel, one workload.
pub struct Sim {
    pub cfg: KernelConfig,
    pub machine: Machine,
    pub topo: SchedTopology,
    pub now: u64,
    pub q: EventQueue<Ev>,
    pub tasks: Vec<Task>,
    pub rqs: Vec<Rq>,
    pub templates: Vec<TaskGroup>,
    /// Scenario groups come first in `templates` and `group_names`.
    pub nr_scenario_groups: usize,
    /// Per CPU: the bound kworker running vmstat_update, and when its
    /// deferrable timer is next due (kernel/workqueue.rs).
    pub hk_kworker: Vec<Option<TaskId>>,
    pub hk_next: Vec<u64>,
    /// Report groups: the scenario's groups, then "<group>.helpers" groups.
    pub group_names: Vec<String>,
    pub barriers: Vec<SyncObj>,
    pub events: Vec<SyncObj>,
    pub jobs: Vec<KtaskJob>,
    pub seed: u64,
    pub rng: Rng,
    /// Scaled tunables (after the CPU-count factor).
    pub tun: ScaledTunables,
    pub resched_pending: Vec<usize>,
    pub resched_spare: Vec<usize>,
    pub nohz_idle_cpus: CpuMask,
    pub nohz_next_balance: u64,
    /// Runqueues with nr_running >= 2 (root_domain->overload).
    pub nr_overloaded: usize,
    /// Per LLC (indexed by sd_llc_id): CPUs not in nohz idle (nr_busy_cpus).
    pub llc_nr_busy: Vec<usize>,
    pub llc_has_idle_cores: Vec<bool>,
    pub llc_nr_idle_scan: Vec<usize>,
    /// sched_group_capacity->imbalance, per group (set by pinned-task failures).
    pub sg_imbalance: Vec<bool>,
    /// nohz.load_balancer: the idle CPU that balances for the tickless ones
    /// (avg_load era before 2.6.36, fair/balance_avg.rs).
    pub nohz_load_balancer: Option<usize>,
    pub live_tasks: usize,
    // RT class (rt.rs, cpupri.rs).
    /// RT_PUSH_IPI's root-domain iterator (rd->rto_cpu, rto_loop,
    /// rto_loop_next, rto_loop_start): rt.rs.
    pub rto_push: crate::sched::sched::RtoPush,
    /// Since when the RT invariant has been violated (the checker; RT_PUSH_IPI
    /// allows one push round).
    pub rt_inv_since: std::cell::Cell<Option<u64>>,
    /// Every task's counters when the warm-up ended (report "window" =
    /// final − base); empty without a warm-up. Indexed by task id.
    pub task_base: Vec<TaskCounters>,
    /// `[rt_migrate_test]`: the tool's state (workload/rt_migrate_test.rs).
    pub rtmt: Option<Box<RtMigrateTest>>,
    /// rd->cpupri.
    pub cpupri: CpuPri,
    /// rd->rto_mask and rd->rto_count: RT-overloaded runqueues.
    pub rto_mask: CpuMask,
    pub rto_count: usize,
    /// rt_bandwidth.rt_period_active.
    pub rt_period_active: bool,
    /// sched_rr_timeslice in ticks.
    pub rr_timeslice_ticks: u64,
    /// RT tasks that exist (started, not dead): the RT checks are skipped at 0.
    pub rt_nr_tasks: usize,
    /// Some RT task has run: capacities carry RT pressure from now on.
    pub rt_pressure: bool,
    pub rt_throttle_events: u64,
    /// Tasks moved by push/pull.
    pub rt_migrations: u64,
    pub wasted: Wasted,
    /// The CPU running the balancer for idle CPUs (the NOHZ owner or ILB)
    /// while it does; trace lines of its pulls are written there.
    pub lb_exec: Option<usize>,
    pub next_pid: u32,
    pub list_seq: u64,
    pub events_processed: u64,
    pub end_ns: u64,
    pub stop_reason: &'static str,
    pub fatal: Option<SimError>,
    pub check: bool,
    pub rec: Recorder,
    pub trace: Trace,
}

pub fn msecs_to_jiffies(ms: u64, hz: u32) -> u64 {
    (ms * hz as u64).div_ceil(1000)
}

/// What runs on a CPU for a trace line: the stopper while it has the CPU,
/// else the current task or the idle task.
fn trace_ctx<'a>(rq: &Rq, tasks: &'a [Task]) -> Ctx<'a> {
    if rq.stopper_running {
        return Ctx::Stopper;
    }
    rq.curr.map(|c| &tasks[c]).into()
}

impl Sim {
    pub fn new(sc: &Scenario, seed: u64, check: bool, trace: Trace) -> Result<Sim, SimError> {
        let cfg = sc.kernel.clone();
        let machine = sc.machine.clone();
        let nr = machine.nr_cpus();
        if cfg.features.on(Feature::DELAY_DEQUEUE) {
            return Err(SimError::not_modelled(
                &sc.source,
                "kernel.features",
                "DELAY_DEQUEUE (default on in 6.12) is not modelled yet; add \"NO_DELAY_DEQUEUE\" to kernel.features",
            ));
        }
        let topo = build_sched_domains(&machine, &cfg.mech);
        let tun = ScaledTunables::new(&cfg, nr);
        let tick = cfg.tick_ns;
        let mut rqs = Vec::with_capacity(nr);
        // The machine has been up for a while when the workload starts, so
        // each CPU's domains last balanced at an arbitrary point within
        // their interval: the phase is drawn from the seed (this, not a
        // fudge factor, is where repeated runs differ).
        let mut phase_rng = Rng::fork(seed, "sd_last_balance");
        for cpu in 0..nr {
            let sd = topo.cpu_domains[cpu]
                .iter()
                .map(|&d| {
                    let dom = &topo.domains[d];
                    let max_ns = msecs_to_jiffies(dom.max_interval_ms * dom.busy_factor as u64, cfg.hz) * tick;
                    SdState {
                        last_balance: -(phase_rng.range(0, max_ns) as i64),
                        balance_interval: if cfg.mech.balance_interval_starts_at_span {
                            dom.span_weight as u64
                        } else {
                            1
                        },
                        nr_balance_failed: 0,
                        max_newidle_lb_cost: 0,
                        stats: LbStats::default(),
                    }
                })
                .collect();
            rqs.push(Rq {
                cpu,
                curr: None,
                nr_running: 0,
                cfs: CfsRq::new(),
                rt: Box::default(),
                need_resched: false,
                tick_key: None,
                op_key: None,
                op_at: 0,
                idle_stamp: Some(0),
                avg_idle: 2 * cfg.sysctl.sched_migration_cost_ns,
                max_idle_balance_cost: cfg.sysctl.sched_migration_cost_ns,
                next_balance: tick,
                sd,
                active_balance: false,
                stopper_running: false,
                push_cpu: 0,
                nohz_idle: true,
                acct: CpuTime::default(),
                acct_since: 0,
                stats: RqStats::default(),
                wake_avg_idle: 0,
                cpu_load: [0; 5],
                last_load_update_tick: 0,
                in_nohz_recently: true,
                normal_avg: 0,
                age_stamp: 0,
            });
        }
        let nr_llc_ids = nr;
        let ngroups = topo.groups.len();
        // Every CPU starts idle and tickless: no LLC has a busy CPU.
        let llc_nr_busy = vec![0; nr_llc_ids];
        let mut group_names: Vec<String> = sc.groups.iter().map(|g| g.name.clone()).collect();
        for g in &sc.groups {
            group_names.push(format!("{}.helpers", g.name));
        }
        let barriers = sc.barriers.iter().map(|(_, n)| SyncObj { participants: *n, ..Default::default() }).collect();
        let events = sc.events.iter().map(|_| SyncObj::default()).collect();
        let end_ns = sc.measure.duration.map(|d| sc.measure.warmup + d).unwrap_or(MAX_SIM_NS);
        let rec = Recorder::new(nr, sc.measure.warmup, sc.measure.interval, end_ns);
        let mut sim = Sim {
            cfg,
            machine,
            topo,
            now: 0,
            q: EventQueue::new(),
            tasks: Vec::new(),
            rqs,
            templates: sc.groups.clone(),
            nr_scenario_groups: sc.groups.len(),
            hk_kworker: vec![None; nr],
            hk_next: vec![u64::MAX; nr],
            group_names,
            barriers,
            events,
            jobs: Vec::new(),
            seed,
            rng: Rng::fork(seed, "sim"),
            tun,
            resched_pending: Vec::new(),
            resched_spare: Vec::new(),
            nohz_idle_cpus: CpuMask::full(nr),
            nohz_next_balance: 0,
            nr_overloaded: 0,
            llc_nr_busy,
            llc_has_idle_cores: vec![true; nr_llc_ids],
            llc_nr_idle_scan: vec![usize::MAX; nr_llc_ids],
            sg_imbalance: vec![false; ngroups],
            nohz_load_balancer: None,
            live_tasks: 0,
            rto_push: Default::default(),
            task_base: Vec::new(),
            rt_inv_since: std::cell::Cell::new(None),
            rtmt: sc.rt_migrate_test.clone().map(|(c, g)| Box::new(RtMigrateTest::new(c, g))),
            cpupri: CpuPri::new(nr),
            rto_mask: CpuMask::new(nr),
            rto_count: 0,
            rt_period_active: false,
            rr_timeslice_ticks: 0,
            rt_nr_tasks: 0,
            rt_pressure: false,
            rt_throttle_events: 0,
            rt_migrations: 0,
            lb_exec: None,
            wasted: Wasted { nr_idle_cpus: nr as u64, ..Default::default() },
            // Above every migration/N's stand-in pid (trace::stopper_pid).
            next_pid: (nr as u32 + 2).div_ceil(100).max(1) * 100,
            list_seq: 0,
            events_processed: 0,
            end_ns,
            stop_reason: "duration reached",
            fatal: None,
            check: check || sc.measure.check,
            rec,
            trace,
        };
        sim.create_housekeeping();
        sim.rr_timeslice_ticks = msecs_to_jiffies(sim.cfg.sysctl.sched_rr_timeslice_ms, sim.cfg.hz).max(1);
        // Create the initial tasks.
        for (gi, g) in sc.groups.iter().enumerate() {
            for i in 0..g.count {
                let tid = sim.alloc_task(gi, Some(gi), g, i);
                sim.q.schedule(Instant(g.start), Ev::Start(tid));
            }
        }
        // mpstat: a baseline snapshot when the warm-up ends (at 0 the
        // recorder starts from zeros), then one per interval; a sample that
        // falls on the end of the run is taken by the End handler.
        let first = if sc.measure.warmup > 0 { sc.measure.warmup } else { sc.measure.interval };
        if first < end_ns {
            sim.q.schedule(Instant(first), Ev::Sample);
        }
        if end_ns < MAX_SIM_NS {
            sim.q.schedule(Instant(end_ns), Ev::End);
        }
        Ok(sim)
    }

    /// Allocate a task (not yet runnable).
    pub fn alloc_task(&mut self, group: usize, template: Option<usize>, g: &TaskGroup, idx: usize) -> TaskId {
        let tid = self.tasks.len();
        let (weight, inv_weight) =
            load_weight(g.policy, g.nice, self.cfg.mech.weight_idleprio, !self.cfg.mech.rt_push_pull());
        let pid = self.next_pid;
        self.next_pid += 1;
        let comm = if g.count > 1 || template.is_none() { format!("{}-{}", g.name, idx) } else { g.name.clone() };
        let comm: String = comm.chars().take(15).collect();
        self.tasks.push(Task {
            pid,
            comm,
            group,
            template,
            policy: g.policy,
            nice: g.nice,
            rt_priority: g.rt_priority,
            weight,
            inv_weight,
            kthread: g.kthread,
            nr_cpus_allowed: g.cpus.weight(),
            cpus: g.cpus.clone(),
            state: TaskState::New,
            cpu: g.cpus.first().unwrap_or(0),
            se: SchedEntity::default(),
            rt: RtEntity::default(),
            pc: 0,
            loop_stack: Vec::new(),
            work_left: 0,
            runtime_end: None,
            cs_debt: 0,
            need_advance: true,
            timer_next: None,
            ktask: None,
            rng: Rng::fork(self.seed, &format!("task:{}:{}", g.name, idx)),
            stats: TaskStats::default(),
            wakee_flips: 0,
            wakee_flip_decay_ts: 0,
            last_wakee: None,
            recent_used_cpu: 0,
            list_seq: 0,
        });
        tid
    }

    // ---------------------------------------------------------------- loop

    /// Run to the end. Returns an error if the model hit a fatal condition.
    pub fn run(&mut self) -> Result<(), SimError> {
        while let Some((t, ev)) = self.q.pop() {
            if t.0 > self.end_ns {
                break;
            }
            self.now = t.0;
            self.events_processed += 1;
            match ev {
                Ev::End => {
                    self.stop_reason = "duration reached";
                    let (w, iv) = (self.rec.warmup, self.rec.interval);
                    if self.now > w && (self.now - w).is_multiple_of(iv) {
                        self.take_sample();
                    }
                    break;
                }
                _ => self.handle(ev),
            }
            self.flush_resched();
            self.account_wasted();
            if let Some(e) = self.fatal.take() {
                return Err(e);
            }
            if self.check {
                self.check_invariants()?;
            }
            if self.live_tasks == 0 && self.all_started() && self.end_ns == MAX_SIM_NS {
                self.stop_reason = "all tasks exited";
                break;
            }
        }
        if self.end_ns == MAX_SIM_NS && self.live_tasks > 0 {
            if self.q.is_empty() {
                return Err(SimError::Invariant {
                    message: format!(
                        "deadlock: {} tasks are blocked forever and no event is pending (a wait without a signal, or a barrier that cannot fill)",
                        self.live_tasks
                    ),
                });
            }
            self.stop_reason = "safety limit reached";
        }
        self.end_ns = self.now.min(self.end_ns);
        for cpu in 0..self.rqs.len() {
            self.account_cpu(cpu);
        }
        Ok(())
    }

    fn all_started(&self) -> bool {
        !self.tasks.iter().any(|t| t.state == TaskState::New)
    }

    fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::Start(tid) => self.wake_up_new_task(tid, None),
            Ev::Tick(cpu) => self.scheduler_tick(cpu),
            Ev::OpDone(cpu) => self.op_done(cpu),
            Ev::Timeout(tid) => {
                let cpu = self.tasks[tid].cpu;
                self.try_to_wake_up(tid, cpu, false);
            }
            Ev::ActiveBalance(cpu) => self.active_load_balance_cpu_stop(cpu),
            Ev::NohzKick(cpu) => self.nohz_idle_balance(cpu),
            Ev::RtPeriod => self.sched_rt_period_timer(),
            Ev::RtoPushIpi(cpu) => self.rto_push_irq_work_func(cpu),
            Ev::Sample => {
                self.take_sample();
                let next = self.now + self.rec.interval;
                if next < self.end_ns {
                    self.q.schedule(Instant(next), Ev::Sample);
                }
            }
            Ev::End => {}
        }
    }

    fn take_sample(&mut self) {
        for cpu in 0..self.rqs.len() {
            self.account_cpu(cpu);
        }
        if self.rec.warmup > 0 && self.now == self.rec.warmup && self.task_base.is_empty() {
            self.task_base = (0..self.tasks.len()).map(|t| self.task_counters(t)).collect();
        }
        let accts: Vec<CpuTime> = self.rqs.iter().map(|r| r.acct).collect();
        self.rec.sample(self.now, &accts);
    }

    /// A task's cumulative counters now, without touching its accounting
    /// (the running task's current stretch and a waiting task's current
    /// wait are added on the side).
    pub fn task_counters(&self, tid: TaskId) -> TaskCounters {
        let t = &self.tasks[tid];
        let running = t.state == TaskState::Runnable && self.rqs[t.cpu].curr == Some(tid);
        let runtime = t.se.sum_exec_runtime + if running { self.now.saturating_sub(t.se.exec_start) } else { 0 };
        let wait = t.stats.wait_ns + t.stats.wait_start.map_or(0, |ws| self.now.saturating_sub(ws));
        TaskCounters {
            runtime_ns: runtime,
            wait_ns: wait,
            nr_switches: t.stats.nr_switches,
            nr_voluntary_switches: t.stats.nvcsw,
            nr_involuntary_switches: t.stats.nivcsw,
            nr_migrations: t.stats.nr_migrations,
            nr_wakeups: t.stats.nr_wakeups,
        }
    }

    // ------------------------------------------------------ CPU accounting

    /// Fold the time since the last accounting point into the CPU's buckets
    /// (precise accounting; Deviation: /proc/stat is tick-sampled unless
    /// VIRT_CPU_ACCOUNTING_GEN, so the kernel's split is noisier).
    pub fn account_cpu(&mut self, cpu: usize) {
        let now = self.now;
        let since = self.rqs[cpu].acct_since;
        if now <= since {
            return;
        }
        let delta = now - since;
        self.rqs[cpu].acct_since = now;
        match self.rqs[cpu].curr {
            None => self.rqs[cpu].acct.idle += delta,
            Some(tid) => {
                // The task's debt (switch, refill) was settled in update_curr;
                // here we only split by kind.
                let t = &self.tasks[tid];
                if t.kthread {
                    self.rqs[cpu].acct.sys += delta;
                } else if t.nice > 0 {
                    self.rqs[cpu].acct.nice += delta;
                } else {
                    self.rqs[cpu].acct.usr += delta;
                }
            }
        }
    }

    // ------------------------------------------------------ resched / tick

    /// resched_curr(): mark the CPU; schedule() runs when the current event
    /// is done (Deviation: the reschedule IPI's latency is charged to the
    /// wakee instead of delaying the switch).
    pub fn resched_curr(&mut self, cpu: usize) {
        if !self.rqs[cpu].need_resched {
            self.rqs[cpu].need_resched = true;
            self.resched_pending.push(cpu);
        }
    }

    fn flush_resched(&mut self) {
        // Two buffers swapped back and forth: no allocation per event.
        let mut cpus = std::mem::take(&mut self.resched_spare);
        while !self.resched_pending.is_empty() {
            std::mem::swap(&mut cpus, &mut self.resched_pending);
            cpus.sort_unstable();
            cpus.dedup();
            for &cpu in &cpus {
                if self.rqs[cpu].need_resched {
                    self.schedule(cpu);
                }
            }
            cpus.clear();
        }
        self.resched_spare = cpus;
    }

    /// Start the periodic tick on a CPU that became busy, aligned to the
    /// jiffy grid (sched_skew_tick=0: all CPUs tick together).
    pub fn tick_restart(&mut self, cpu: usize) {
        if self.rqs[cpu].tick_key.is_some() {
            return;
        }
        let tick = self.cfg.tick_ns;
        let next = (self.now / tick + 1) * tick;
        self.rqs[cpu].tick_key = Some(self.q.schedule(Instant(next), Ev::Tick(cpu)));
    }

    /// sched_tick(): runs every 1/HZ on busy CPUs (NO_HZ_IDLE stops it on
    /// idle ones).
    fn scheduler_tick(&mut self, cpu: usize) {
        self.rqs[cpu].tick_key = None;
        let Some(curr) = self.rqs[cpu].curr else {
            // Idle: the tick is stopped (nohz); the idle CPU is balanced by
            // the ILB on its behalf.
            if self.cfg.mech.balancer == BalancerEra::AvgLoad {
                // avg_load era: the NOHZ owner keeps ticking (balance_avg.rs).
                self.scheduler_tick_idle_avg(cpu);
                return;
            }
            self.nohz_balance_enter_idle(cpu);
            return;
        };
        self.update_curr(cpu);
        if self.cfg.mech.balancer == BalancerEra::AvgLoad {
            self.update_cpu_load(cpu); // avg_load era (balance_avg.rs)
        }
        self.tasks[curr].sched_class().task_tick(self, cpu, curr);
        // Softirq order: TIMER_SOFTIRQ (expired timers, so vmstat_update's
        // kworker wakes) runs before SCHED_SOFTIRQ (the balancer).
        self.run_housekeeping_timer(cpu);
        self.trigger_load_balance(cpu);
        let tick = self.cfg.tick_ns;
        self.rqs[cpu].tick_key = Some(self.q.schedule(Instant(self.now + tick), Ev::Tick(cpu)));
    }

    // ------------------------------------------------------------- schedule

    /// __schedule(): pick the next task on `cpu` and switch to it.
    pub fn schedule(&mut self, cpu: usize) {
        self.rqs[cpu].need_resched = false;
        self.rqs[cpu].stats.sched_count += 1;
        let prev = self.rqs[cpu].curr;
        if prev.is_some() {
            self.update_curr(cpu);
        }
        let prev_runnable = prev.filter(|&p| self.tasks[p].state == TaskState::Runnable && self.tasks[p].cpu == cpu);
        if let Some(p) = prev {
            // put_prev_task_balance(): prev's class may pull work first.
            self.tasks[p].sched_class().balance(self, cpu, p);
        }
        let next = self.pick_next_task(cpu);
        if next == prev && next.is_some() {
            // Keep running; re-arm the op timer (its end may have moved).
            self.arm_op_timer(cpu);
            return;
        }
        self.account_cpu(cpu);
        if let Some(p) = prev {
            if let Some(op) = self.rqs[cpu].op_key.take() {
                self.q.cancel(op);
            }
            self.tasks[p].sched_class().put_prev_task(self, cpu, p, prev_runnable.is_some());
            if prev_runnable.is_some() {
                self.tasks[p].stats.nivcsw += 1;
            } else {
                self.tasks[p].stats.nvcsw += 1;
            }
            self.tasks[p].stats.nr_switches += 1;
        }
        match (prev.is_some(), next.is_some()) {
            (true, false) => self.wasted.nr_idle_cpus += 1,
            (false, true) => self.wasted.nr_idle_cpus -= 1,
            _ => {}
        }
        if prev.is_some_and(|p| self.tasks[p].nr_cpus_allowed == 1) {
            self.wasted.nr_pinned_running -= 1;
        }
        if next.is_some_and(|n| self.tasks[n].nr_cpus_allowed == 1) {
            self.wasted.nr_pinned_running += 1;
        }
        self.rqs[cpu].curr = next;
        let stopper = std::mem::take(&mut self.rqs[cpu].stopper_running);
        let Some(n) = next else {
            self.set_next_task_idle(cpu);
            let from = if stopper { Ctx::Stopper } else { prev.map(|p| &self.tasks[p]).into() };
            self.trace.sched_switch(self.now, cpu, from, Ctx::Idle);
            return;
        };
        let class = self.tasks[n].sched_class();
        class.set_next_task(self, cpu, n);
        self.rqs[cpu].stats.timeslices += 1;
        let cs = self.cfg.costs.context_switch_ns;
        self.tasks[n].cs_debt += cs;
        let from = if stopper { Ctx::Stopper } else { prev.map(|p| &self.tasks[p]).into() };
        self.trace.sched_switch(self.now, cpu, from, Ctx::Task(&self.tasks[n]));
        if self.tasks[n].need_advance {
            self.advance(n);
        }
        if self.rqs[cpu].curr == Some(n) {
            self.arm_op_timer(cpu);
        }
        self.tick_restart(cpu);
        if self.rqs[cpu].nohz_idle {
            self.nohz_balance_exit_idle(cpu);
        }
        class.balance_callback(self, cpu, n);
    }

    /// __pick_next_task(): ask the classes from the highest; the idle class
    /// always has its idle task. A newidle balance that pulled tasks makes
    /// the walk start again, without balancing again.
    fn pick_next_task(&mut self, cpu: usize) -> Option<TaskId> {
        let mut newidle = true;
        loop {
            for class in SchedClass::ORDER {
                match class.pick_next_task(self, cpu, newidle) {
                    Pick::Empty => {}
                    Pick::Task(p) => return Some(p),
                    Pick::Idle => return None,
                    Pick::Retry => break,
                }
            }
            newidle = false;
        }
    }

    /// Arm the completion event of the current op of the task on `cpu`.
    pub fn arm_op_timer(&mut self, cpu: usize) {
        let Some(tid) = self.rqs[cpu].curr else {
            if let Some(k) = self.rqs[cpu].op_key.take() {
                self.q.cancel(k);
            }
            return;
        };
        let t = &self.tasks[tid];
        let at = if let Some(end) = t.runtime_end {
            (self.now + t.cs_debt).max(end)
        } else if t.work_left > 0 || t.cs_debt > 0 {
            self.now + t.cs_debt + t.work_left
        } else if t.need_advance {
            self.now
        } else {
            if let Some(k) = self.rqs[cpu].op_key.take() {
                self.q.cancel(k);
            }
            return;
        };
        // The completion time of a running op does not move while the task
        // keeps running, so most re-arms are no-ops: skip the cancel/insert.
        if self.rqs[cpu].op_key.is_some() && self.rqs[cpu].op_at == at {
            return;
        }
        if let Some(k) = self.rqs[cpu].op_key.take() {
            self.q.cancel(k);
        }
        self.rqs[cpu].op_at = at;
        self.rqs[cpu].op_key = Some(self.q.schedule(Instant(at), Ev::OpDone(cpu)));
    }

    /// update_curr(): charge the running task for the time since exec_start.
    pub fn update_curr(&mut self, cpu: usize) {
        let Some(tid) = self.rqs[cpu].curr else { return };
        let now = self.now;
        let t = &mut self.tasks[tid];
        let delta = now.saturating_sub(t.se.exec_start);
        if delta == 0 {
            return;
        }
        t.se.exec_start = now;
        t.se.sum_exec_runtime += delta;
        let mut d = delta;
        let debt = t.cs_debt.min(d);
        t.cs_debt -= debt;
        d -= debt;
        t.work_left = t.work_left.saturating_sub(d);
        self.rqs[cpu].stats.run_ns += delta;
        if debt > 0 {
            // The switch itself is kernel time; fold the task's share first.
            self.account_cpu(cpu);
            let r = &mut self.rqs[cpu].acct;
            let t = &self.tasks[tid];
            let took = if t.kthread {
                &mut r.sys
            } else if t.nice > 0 {
                &mut r.nice
            } else {
                &mut r.usr
            };
            let moved = debt.min(*took);
            *took -= moved;
            r.sys += moved;
        }
        if self.cfg.mech.balancer == BalancerEra::AvgLoad {
            self.sched_normal_avg_update(cpu, tid, delta); // seed 002 (3/6), balance_avg.rs
        }
        self.tasks[tid].sched_class().update_curr(self, cpu, tid, delta);
    }

    // -------------------------------------------------------------- wakeup

    /// wake_up_new_task(): place a new task and make it runnable.
    /// `parent_cpu` is the forking task's CPU (None: a scenario task the
    /// harness starts, "forked" on its first allowed CPU).
    pub fn wake_up_new_task(&mut self, p: TaskId, parent_cpu: Option<usize>) {
        let from = parent_cpu.unwrap_or_else(|| self.tasks[p].cpus.first().unwrap_or(0));
        self.tasks[p].stats.start_ns = self.now;
        self.live_tasks += 1;
        let class = self.tasks[p].sched_class();
        class.task_fork(self, p, from);
        let cpu = class.select_task_rq(self, p, from, WF_FORK, WakeSource { cpu: from, in_task: true });
        self.tasks[p].cpu = cpu;
        self.tasks[p].recent_used_cpu = cpu;
        self.tasks[p].state = TaskState::Runnable;
        class.post_init(self, cpu, p);
        self.trace.sched_wakeup_new(self.now, cpu, &self.tasks[p]);
        class.enqueue_task(self, cpu, p, ENQUEUE_INITIAL);
        self.tasks[p].stats.last_wakeup = Some(self.now);
        self.wakeup_idle_cost(p, from, cpu);
        self.wakeup_preempt(cpu, p);
        class.task_woken(self, cpu, p);
    }

    /// The wakee of an idle or remote CPU pays the IPI and the idle exit
    /// before its work progresses.
    fn wakeup_idle_cost(&mut self, tid: TaskId, from: usize, cpu: usize) {
        let mut cost = 0;
        if cpu != from {
            cost += self.cfg.costs.wakeup_ipi_ns;
        }
        if self.rqs[cpu].curr.is_none() {
            cost += self.cfg.costs.idle_exit_ns;
        }
        self.tasks[tid].cs_debt += cost;
    }

    /// try_to_wake_up(). `waker_cpu` is where the wakeup is issued;
    /// `from_task` says whether a task (vs an interrupt/timer) wakes it.
    pub fn try_to_wake_up(&mut self, tid: TaskId, waker_cpu: usize, from_task: bool) {
        if self.tasks[tid].state != TaskState::Blocked {
            return;
        }
        let prev_cpu = self.tasks[tid].cpu;
        let class = self.tasks[tid].sched_class();
        let cpu = if self.cfg.mech.rt_balance == RtBalance::Legacy {
            // 2.6.24's try_to_wake_up placed every class itself (the
            // select_task_rq hook came with 2.6.25's RT balancing).
            self.select_task_rq_legacy(tid, prev_cpu, waker_cpu)
        } else {
            let src = WakeSource { cpu: waker_cpu, in_task: from_task };
            class.select_task_rq(self, tid, prev_cpu, WF_TTWU, src)
        };
        self.rqs[waker_cpu].stats.ttwu_count += 1;
        if cpu == waker_cpu {
            self.rqs[waker_cpu].stats.ttwu_local += 1;
        }
        if cpu != prev_cpu {
            self.set_task_cpu(tid, cpu, waker_cpu);
        }
        self.tasks[tid].state = TaskState::Runnable;
        self.tasks[tid].stats.nr_wakeups += 1;
        self.tasks[tid].stats.last_wakeup = Some(self.now);
        self.trace.sched_wakeup(self.now, cpu, &self.tasks[tid]);
        // ttwu_do_activate: feed avg_idle from the idle period that ends.
        if let Some(stamp) = self.rqs[cpu].idle_stamp.take() {
            let delta = self.now.saturating_sub(stamp);
            let max = 2 * self.rqs[cpu].max_idle_balance_cost;
            let rq = &mut self.rqs[cpu];
            if delta > max {
                rq.avg_idle = max;
            } else {
                // update_avg: avg += (sample - avg) / 8
                rq.avg_idle = (rq.avg_idle as i64 + (delta as i64 - rq.avg_idle as i64) / 8) as u64;
            }
        }
        class.enqueue_task(self, cpu, tid, ENQUEUE_WAKEUP);
        self.wakeup_idle_cost(tid, waker_cpu, cpu);
        self.wakeup_preempt(cpu, tid);
        class.task_woken(self, cpu, tid);
    }

    /// wakeup_preempt() (check_preempt_curr before 6.6): `p` became
    /// runnable on `cpu`. Same class: the class decides; a higher class
    /// always preempts.
    fn wakeup_preempt(&mut self, cpu: usize, p: TaskId) {
        match self.rqs[cpu].curr {
            None => self.resched_curr(cpu),
            Some(curr) if curr != p => {
                let (pc, cc) = (self.tasks[p].sched_class(), self.tasks[curr].sched_class());
                if pc == cc {
                    pc.wakeup_preempt(self, cpu, curr, p);
                } else if pc < cc {
                    self.resched_curr(cpu);
                }
            }
            _ => {}
        }
    }

    /// set_task_cpu(): move a not-running task's accounting to `new_cpu`.
    /// `exec_cpu` runs it (for the trace line).
    pub fn set_task_cpu(&mut self, tid: TaskId, new_cpu: usize, exec_cpu: usize) {
        let old = self.tasks[tid].cpu;
        if old == new_cpu {
            return;
        }
        self.tasks[tid].sched_class().migrate_task_rq(self, tid, old, new_cpu);
        let t = &mut self.tasks[tid];
        t.cpu = new_cpu;
        t.stats.nr_migrations += 1;
        let c = &self.cfg.costs;
        let m = &self.machine;
        let refill = if m.cpus[old].core == m.cpus[new_cpu].core {
            c.migration_smt_ns
        } else if m.cpus[old].llc == m.cpus[new_cpu].llc {
            c.migration_llc_ns
        } else if m.cpus[old].node == m.cpus[new_cpu].node {
            c.migration_remote_llc_ns
        } else {
            c.migration_remote_node_ns
        };
        t.cs_debt += refill;
        let who = trace_ctx(&self.rqs[exec_cpu], &self.tasks);
        self.trace.sched_migrate_task(self.now, exec_cpu, who, &self.tasks[tid], old, new_cpu);
    }

    /// Move a queued, not running task between runqueues (detach_task +
    /// attach_task of the balancer; move_queued_task).
    /// `exec_cpu` runs the move: the pulling CPU, or the source's stopper.
    pub fn move_queued_task(&mut self, tid: TaskId, src: usize, dst: usize, exec_cpu: usize) {
        let class = self.tasks[tid].sched_class();
        class.dequeue_task(self, src, tid, 0);
        self.set_task_cpu(tid, dst, exec_cpu);
        class.enqueue_task(self, dst, tid, 0);
        self.wakeup_preempt(dst, tid);
    }

    // ------------------------------------------------- nr_running / overload

    pub fn add_nr_running(&mut self, cpu: usize) {
        self.wasted.total_nr_running += 1;
        self.rqs[cpu].nr_running += 1;
        if self.rqs[cpu].nr_running == 2 {
            self.nr_overloaded += 1;
        }
    }

    pub fn sub_nr_running(&mut self, cpu: usize) {
        self.wasted.total_nr_running -= 1;
        self.rqs[cpu].nr_running -= 1;
        if self.rqs[cpu].nr_running == 1 {
            self.nr_overloaded -= 1;
        }
    }

    /// idle_cpu(): nothing running and nothing queued.
    #[inline]
    pub fn idle_cpu(&self, cpu: usize) -> bool {
        self.rqs[cpu].curr.is_none() && self.rqs[cpu].nr_running == 0
    }

    /// sched_idle_cpu() (5.4+): only SCHED_IDLE tasks are runnable.
    #[inline]
    pub fn sched_idle_cpu(&self, cpu: usize) -> bool {
        let rq = &self.rqs[cpu];
        self.cfg.mech.sched_idle_cpu && rq.nr_running > 0 && rq.nr_running == rq.cfs.idle_h_nr_running
    }

    // ------------------------------------------------------------ programs

    fn op_done(&mut self, cpu: usize) {
        self.rqs[cpu].op_key = None;
        let Some(tid) = self.rqs[cpu].curr else { return };
        self.update_curr(cpu);
        let t = &self.tasks[tid];
        if let Some(end) = t.runtime_end {
            if self.now < end || t.cs_debt > 0 {
                self.arm_op_timer(cpu);
                return;
            }
            self.tasks[tid].runtime_end = None;
        } else if t.work_left > 0 || t.cs_debt > 0 {
            self.arm_op_timer(cpu);
            return;
        }
        if self.tasks[tid].ktask.is_some() && !self.tasks[tid].need_advance {
            self.ktask_chunk_done(tid);
        } else {
            self.tasks[tid].need_advance = true;
            self.advance(tid);
        }
        if self.rqs[cpu].curr == Some(tid) && self.tasks[tid].state == TaskState::Runnable {
            self.arm_op_timer(cpu);
        }
    }

    /// Interpret the task's program from its pc until it reaches an op that
    /// takes time or blocks. The task is running on its CPU.
    pub fn advance(&mut self, tid: TaskId) {
        self.tasks[tid].need_advance = false;
        let Some(template) = self.tasks[tid].template else {
            // A ktask helper runs the helper loop only.
            self.ktask_chunk_done(tid);
            return;
        };
        let mut steps = 0u32;
        loop {
            steps += 1;
            if steps > 1_000_000 {
                self.fatal = Some(SimError::Invariant {
                    message: format!(
                        "task {} runs a program that makes no progress (a loop of zero-time ops)",
                        self.tasks[tid].comm
                    ),
                });
                return;
            }
            let pc = self.tasks[tid].pc;
            let Some(op) = self.templates[template].program.ops.get(pc).cloned() else {
                self.do_exit(tid);
                return;
            };
            self.tasks[tid].pc += 1;
            match op {
                Op::Run(d) => {
                    let w = d.sample(&mut self.tasks[tid].rng);
                    if w == 0 {
                        continue;
                    }
                    self.tasks[tid].work_left = w;
                    return;
                }
                Op::Runtime(d) => {
                    let w = d.sample(&mut self.tasks[tid].rng);
                    self.tasks[tid].runtime_end = Some(self.now + w);
                    return;
                }
                Op::Sleep(d) => {
                    let w = d.sample(&mut self.tasks[tid].rng);
                    self.block(tid);
                    self.arm_sleep_timer(tid, self.now + w);
                    return;
                }
                Op::Timer { period } => {
                    let next = match self.tasks[tid].timer_next {
                        None => self.now + period,
                        Some(n) => n + period,
                    };
                    self.tasks[tid].timer_next = Some(next);
                    if next > self.now {
                        self.block(tid);
                        self.arm_sleep_timer(tid, next);
                        return;
                    }
                }
                Op::Yield => {
                    self.tasks[tid].sched_class().yield_task(self, tid);
                    self.tasks[tid].need_advance = true;
                    let cpu = self.tasks[tid].cpu;
                    self.resched_curr(cpu);
                    return;
                }
                Op::LoopStart { count, end } => {
                    if count == 0 {
                        self.tasks[tid].loop_stack.push((pc, u64::MAX));
                    } else {
                        self.tasks[tid].loop_stack.push((pc, count));
                    }
                    let _ = end;
                }
                Op::LoopEnd { start } => {
                    let top = self.tasks[tid].loop_stack.last_mut().expect("loop stack");
                    if top.1 != u64::MAX {
                        top.1 -= 1;
                    }
                    if top.1 > 0 {
                        self.tasks[tid].pc = start + 1;
                    } else {
                        self.tasks[tid].loop_stack.pop();
                    }
                }
                Op::Barrier(b) => {
                    let bar = &mut self.barriers[b];
                    bar.arrived.push(tid);
                    if bar.arrived.len() >= bar.participants {
                        let waiters: Vec<TaskId> = std::mem::take(&mut bar.arrived);
                        let cpu = self.tasks[tid].cpu;
                        for w in waiters {
                            if w != tid {
                                self.try_to_wake_up(w, cpu, true);
                            }
                        }
                    } else {
                        self.block(tid);
                        return;
                    }
                }
                Op::Wait(e) => {
                    if self.events[e].pending > 0 {
                        self.events[e].pending -= 1;
                    } else {
                        self.events[e].waiters.push(tid);
                        self.block(tid);
                        return;
                    }
                }
                Op::Signal(e) => {
                    if self.events[e].waiters.is_empty() {
                        self.events[e].pending += 1;
                    } else {
                        let w = self.events[e].waiters.remove(0);
                        let cpu = self.tasks[tid].cpu;
                        self.record_wakee(tid, w);
                        self.try_to_wake_up(w, cpu, true);
                    }
                }
                Op::Fork(g) => {
                    let tmpl = self.templates[g].clone();
                    let idx = self.tasks.iter().filter(|t| t.group == g).count();
                    let child = self.alloc_task(g, Some(g), &tmpl, idx);
                    let cpu = self.tasks[tid].cpu;
                    self.wake_up_new_task(child, Some(cpu));
                }
                Op::Park => {
                    self.block(tid);
                    return;
                }
                Op::Exit => {
                    self.do_exit(tid);
                    return;
                }
                Op::Parallel { work, threads, min_chunk } => {
                    self.ktask_run(tid, work, threads, min_chunk);
                    return;
                }
                Op::Rtmt(op) => {
                    let cpu = self.tasks[tid].cpu;
                    self.update_curr(cpu);
                    let (pid, now, exec) = (self.tasks[tid].pid, self.now, self.tasks[tid].se.sum_exec_runtime);
                    let Some(rtmt) = self.rtmt.as_mut() else { continue };
                    match rtmt.op(op, pid, now, exec) {
                        RtmtAction::Continue => {}
                        RtmtAction::BreakLoop => {
                            // `break` out of the iteration loop: its LoopEnd ends it.
                            if let Some(top) = self.tasks[tid].loop_stack.last_mut() {
                                top.1 = 1;
                            }
                        }
                        RtmtAction::LeaveLoop => {
                            // Continue after the innermost loop's LoopEnd.
                            if let Some((start, _)) = self.tasks[tid].loop_stack.pop() {
                                if let Op::LoopStart { end, .. } = self.templates[template].program.ops[start] {
                                    self.tasks[tid].pc = end + 1;
                                }
                            }
                        }
                    }
                }
                Op::RtmtRotate => {
                    let save = self.templates[template].cpus.clone();
                    let Some(rtmt) = self.rtmt.as_mut() else { continue };
                    let target = rtmt.next_rotate_cpu(|c| save.test(c));
                    let mut mask = CpuMask::new(self.rqs.len());
                    mask.set(target);
                    self.set_cpus_allowed_curr(tid, mask);
                }
            }
        }
    }

    /// sched_setaffinity() of the running RT task `tid` (rt-migrate-test's
    /// rotation): its queued accounting is redone under the new mask.
    ///
    /// Deviation: when its CPU leaves the mask the kernel has the migration
    /// thread move it at once; the model moves it when it next blocks, which
    /// rt-migrate-test's thread does right after (at its barrier).
    pub fn set_cpus_allowed_curr(&mut self, tid: TaskId, mask: CpuMask) {
        let cpu = self.tasks[tid].cpu;
        debug_assert!(self.tasks[tid].policy.is_rt() && self.rqs[cpu].curr == Some(tid));
        let was_pinned = self.tasks[tid].nr_cpus_allowed == 1;
        let class = self.tasks[tid].sched_class();
        class.dequeue_task(self, cpu, tid, 0);
        self.tasks[tid].nr_cpus_allowed = mask.weight();
        self.tasks[tid].cpus = mask;
        class.enqueue_task(self, cpu, tid, ENQUEUE_HEAD);
        let pinned = self.tasks[tid].nr_cpus_allowed == 1;
        if was_pinned && !pinned {
            self.wasted.nr_pinned_running -= 1;
        } else if pinned && !was_pinned {
            self.wasted.nr_pinned_running += 1;
        }
    }

    /// hrtimer_start of the sleep timer of `tid` (just blocked) for `expiry`.
    fn arm_sleep_timer(&mut self, tid: TaskId, expiry: u64) {
        let (at, hard) = self.hrtimer_fires_at(tid, expiry);
        let cpu = self.tasks[tid].cpu;
        self.trace.hrtimer_start(self.now, cpu, &self.tasks[tid], expiry, hard);
        self.q.schedule(Instant(at), Ev::Timeout(tid));
    }

    /// When the sleep timer of `tid` (just blocked) armed for `expiry`
    /// fires: hrtimers are ordered by their hard expiry (expiry + slack) and
    /// a timer whose soft expiry has passed runs in whatever interrupt comes
    /// first. RT tasks sleep without slack. With slack, a tick of the task's
    /// CPU inside [expiry, expiry + slack] runs the timer in the same
    /// interrupt, after scheduler_tick (1 ns later here, to order the
    /// events); else it fires at expiry + slack.
    ///
    /// Deviation: whether the CPU will tick then is judged when the timer is
    /// armed (it ticks if it still has work: NO_HZ_IDLE stops an idle CPU's
    /// tick).
    /// Returns (when it fires, its hard expiry).
    fn hrtimer_fires_at(&self, tid: TaskId, expiry: u64) -> (u64, u64) {
        // Timer slack dates from 2.6.28.
        let slack = if self.tasks[tid].policy.is_rt() || !self.cfg.mech.hrtimer_slack {
            0
        } else {
            self.cfg.costs.timer_slack_ns
        };
        if slack == 0 {
            return (expiry, expiry);
        }
        let cpu = self.tasks[tid].cpu;
        let tick = self.cfg.tick_ns;
        let next_tick = expiry.div_ceil(tick) * tick;
        if self.rqs[cpu].nr_running > 0 && next_tick <= expiry + slack {
            (next_tick + 1, expiry + slack)
        } else {
            (expiry + slack, expiry + slack)
        }
    }

    /// The running task goes to sleep: deactivate it; schedule() follows.
    pub fn block(&mut self, tid: TaskId) {
        let cpu = self.tasks[tid].cpu;
        self.update_curr(cpu);
        self.dequeue_task(cpu, tid);
        if !self.tasks[tid].cpus.test(cpu) {
            // Its affinity changed while it ran (set_cpus_allowed_curr).
            let dst = self.tasks[tid].cpus.first().unwrap_or(cpu);
            self.set_task_cpu(tid, dst, cpu);
        }
        self.tasks[tid].state = TaskState::Blocked;
        self.tasks[tid].need_advance = true;
        self.resched_curr(cpu);
    }

    /// dequeue_task(rq, p, DEQUEUE_SLEEP).
    fn dequeue_task(&mut self, cpu: usize, tid: TaskId) {
        self.tasks[tid].sched_class().dequeue_task(self, cpu, tid, DEQUEUE_SLEEP);
    }

    pub fn do_exit(&mut self, tid: TaskId) {
        let cpu = self.tasks[tid].cpu;
        if self.tasks[tid].state == TaskState::Runnable {
            self.update_curr(cpu);
            self.dequeue_task(cpu, tid);
        }
        self.tasks[tid].state = TaskState::Dead;
        self.tasks[tid].stats.exit_ns = Some(self.now);
        self.tasks[tid].sched_class().task_dead(self, cpu, tid);
        self.trace.sched_process_exit(self.now, cpu, &self.tasks[tid]);
        self.live_tasks -= 1;
        self.resched_curr(cpu);
    }

    // ----------------------------------------------------------- invariants

    /// The invariant checker (--check): one running task per CPU, affinity
    /// respected, every runnable task on exactly one runqueue, CPU time
    /// conserved.
    /// Fold the wasted-CPU rate of the interval that just ended and
    /// recompute it for the next one. "Wasted" = a CPU sits idle while a
    /// runnable task allowed on it waits on another runqueue.
    /// O(1) unless a waiting task has a restricted affinity mask.
    fn account_wasted(&mut self) {
        let w = &mut self.wasted;
        let from = w.last.max(self.rec.warmup);
        if self.now > from {
            w.ns += w.rate * (self.now - from);
        }
        w.last = self.now;
        let nr = self.rqs.len() as u64;
        let pinned_waiting = w.nr_pinned_runnable.saturating_sub(w.nr_pinned_running);
        let waiting = w.total_nr_running.saturating_sub(nr - w.nr_idle_cpus).saturating_sub(pinned_waiting);
        w.rate = if waiting == 0 || w.nr_idle_cpus == 0 {
            0
        } else if w.nr_restricted == 0 {
            // Every waiting task may run anywhere: every idle CPU is wasted.
            w.nr_idle_cpus.min(waiting)
        } else {
            // Slow path: match idle CPUs with the waiting tasks' masks.
            let mut n = 0;
            for c in 0..self.rqs.len() {
                if self.rqs[c].curr.is_some() {
                    continue;
                }
                let any = self.rqs.iter().any(|rq| {
                    rq.cfs.tasks_timeline.iter().any(|&(_, t)| self.tasks[t].cpus.test(c))
                        || (rq.rt.rt_nr_running > 0
                            && rq.rt.active.iter().any(|t| rq.curr != Some(t) && self.tasks[t].cpus.test(c)))
                });
                n += u64::from(any);
            }
            n.min(waiting)
        };
    }

    /// Book-keeping of the wasted-CPU counters when `tid` becomes runnable
    /// (`on`) or stops being runnable.
    #[inline]
    pub fn wasted_track(&mut self, tid: TaskId, on: bool) {
        let n = self.tasks[tid].nr_cpus_allowed;
        let slot = if n == 1 {
            &mut self.wasted.nr_pinned_runnable
        } else if n < self.rqs.len() {
            &mut self.wasted.nr_restricted
        } else {
            return;
        };
        if on {
            *slot += 1;
        } else {
            *slot -= 1;
        }
    }

    pub fn check_invariants(&self) -> Result<(), SimError> {
        let mut seen = vec![0u32; self.tasks.len()];
        for rq in &self.rqs {
            if let Some(c) = rq.curr {
                let t = &self.tasks[c];
                if t.cpu != rq.cpu {
                    return Err(SimError::Invariant {
                        message: format!("task {} runs on CPU {} but task_cpu is {}", t.comm, rq.cpu, t.cpu),
                    });
                }
                if !t.cpus.test(rq.cpu) {
                    return Err(SimError::Invariant {
                        message: format!(
                            "task {} runs on CPU {} outside its affinity {}",
                            t.comm,
                            rq.cpu,
                            t.cpus.to_list_string()
                        ),
                    });
                }
            }
            for &(_, tid) in rq.cfs.tasks_timeline.iter() {
                seen[tid] += 1;
                if self.tasks[tid].cpu != rq.cpu {
                    return Err(SimError::Invariant {
                        message: format!(
                            "task {} queued on CPU {} but task_cpu is {}",
                            self.tasks[tid].comm, rq.cpu, self.tasks[tid].cpu
                        ),
                    });
                }
            }
            if let Some(c) = rq.cfs.curr {
                seen[c] += 1;
            }
            for tid in rq.rt.active.iter() {
                seen[tid] += 1;
                if self.tasks[tid].cpu != rq.cpu {
                    return Err(SimError::Invariant {
                        message: format!(
                            "RT task {} queued on CPU {} but task_cpu is {}",
                            self.tasks[tid].comm, rq.cpu, self.tasks[tid].cpu
                        ),
                    });
                }
            }
            let a = &rq.acct;
            if a.usr + a.nice + a.sys + a.idle != rq.acct_since {
                return Err(SimError::Invariant {
                    message: format!(
                        "CPU {} time not conserved: {} accounted vs {} elapsed",
                        rq.cpu,
                        a.usr + a.nice + a.sys + a.idle,
                        rq.acct_since
                    ),
                });
            }
            if rq.nr_running != rq.cfs.nr_running + rq.rt.rt_nr_running {
                return Err(SimError::Invariant {
                    message: format!(
                        "CPU {}: nr_running {} != cfs {} + rt {}",
                        rq.cpu, rq.nr_running, rq.cfs.nr_running, rq.rt.rt_nr_running
                    ),
                });
            }
        }
        let idle = self.rqs.iter().filter(|rq| rq.curr.is_none()).count() as u64;
        let total: u64 = self.rqs.iter().map(|rq| rq.nr_running as u64).sum();
        if idle != self.wasted.nr_idle_cpus || total != self.wasted.total_nr_running {
            return Err(SimError::Invariant {
                message: format!(
                    "counters drifted: {} idle CPUs counted {}, {} runnable counted {}",
                    idle, self.wasted.nr_idle_cpus, total, self.wasted.total_nr_running
                ),
            });
        }
        for (tid, t) in self.tasks.iter().enumerate() {
            let want = u32::from(t.state == TaskState::Runnable);
            if seen[tid] != want {
                return Err(SimError::Invariant {
                    message: format!("task {} ({:?}) is on {} runqueues", t.comm, t.state, seen[tid]),
                });
            }
        }
        self.check_rt_invariant().map_err(|message| SimError::Invariant { message })?;
        Ok(())
    }

    pub fn fair_era(&self) -> FairEra {
        self.cfg.mech.fair
    }

    pub fn policy_of(&self, tid: TaskId) -> Policy {
        self.tasks[tid].policy
    }

    pub fn next_list_seq(&mut self) -> u64 {
        self.list_seq += 1;
        self.list_seq
    }

    pub fn jiffies_ns(&self, j: u64) -> u64 {
        j * self.cfg.tick_ns
    }

    pub fn msecs_to_ns_jiffy(&self, ms: u64) -> u64 {
        msecs_to_jiffies(ms, self.cfg.hz) * self.cfg.tick_ns
    }
}
