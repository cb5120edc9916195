//! Models kernel/sched/idle.c: the idle class, lowest of all, whose only
//! task is each CPU's idle task. In the model a CPU with `rq.curr == None`
//! runs its idle task (see `sched/class.rs`). The idle loop's calls into
//! cpuidle (cpuidle_idle_call: enter a state, leave it when woken, and what
//! leaving costs the runqueue) are here; the states, the governor and their
//! bookkeeping are `idle/`, which knows nothing of the runqueues.

use crate::idle::cpuidle::{IdleExit, NO_TIMER_NS};
use crate::sched::class::{IdleSchedClass, Pick, SchedClassOps, WakeSource};
use crate::sched::env::SchedEnv;
use crate::sched::sched::{CpuWindow, WindowKind};
use crate::sched::task::TaskId;

impl SchedClassOps for IdleSchedClass {
    fn enqueue_task(_sim: &mut SchedEnv, _cpu: usize, _p: TaskId, _flags: u32) {
        unreachable!("the idle task is never queued")
    }

    fn dequeue_task(_sim: &mut SchedEnv, _cpu: usize, _p: TaskId, _flags: u32) -> bool {
        unreachable!("the idle task is never queued")
    }

    /// pick_next_task_idle(): the idle task, always.
    fn pick_next_task(_sim: &mut SchedEnv, _cpu: usize, _newidle: bool) -> Pick {
        Pick::Idle
    }

    fn select_task_rq(_sim: &mut SchedEnv, _p: TaskId, cpu: usize, _wake_flags: u32, _src: WakeSource) -> usize {
        cpu
    }
}

impl SchedEnv {
    /// set_next_task_idle(): `cpu` switches to its idle task: count the
    /// schedstat sched_goidle, stamp the idle period for avg_idle, and note
    /// a fully idle core for select_idle_core (update_idle_core).
    pub fn set_next_task_idle(&mut self, cpu: usize) {
        self.sched.rqs[cpu].stats.sched_goidle += 1;
        self.sched.rqs[cpu].idle_stamp = Some(self.now);
        if self.cfg.mech.fair_server {
            // The idle task's exec_start, for dl_server_update_idle_time().
            self.sched.rqs[cpu].dl.fs.idle_start = self.now;
        }
        self.update_idle_core(cpu);
        self.cpuidle_enter(cpu, true);
    }

    /// cpuidle_idle_call(): `cpu` starts an idle period, after switching to
    /// its idle task (`after_task`) or after an interrupt that woke nothing
    /// on it; the cpuidle core (idle/) records what its governor will know.
    #[inline(never)]
    pub fn cpuidle_enter(&mut self, cpu: usize, after_task: bool) {
        if !self.cpuidle.enabled() {
            return;
        }
        let next_timer_at = self.next_timer_at(cpu);
        self.cpuidle.enter(cpu, self.now, next_timer_at, self.sched.rqs[cpu].nr_iowait, after_task);
    }

    /// tick_nohz_get_sleep_length(): when the CPU's next timer fires, from
    /// the sleep hrtimers armed on it.
    fn next_timer_at(&self, cpu: usize) -> u64 {
        let far = self.now.saturating_add(NO_TIMER_NS);
        self.sched.rqs[cpu].hrtimers.iter().map(|&(at, _)| at).min().map_or(far, |t| t.min(far))
    }

    /// The CPU leaves its idle period now (idle/cpuidle.rs).
    pub fn cpuidle_exit(&mut self, cpu: usize) -> Option<IdleExit> {
        let x = self.cpuidle.exit(cpu, self.now, self.cfg.tick_ns);
        if self.cpuidle.tracing {
            self.cpu_idle_trace();
        }
        x
    }

    /// With the power:cpu_idle tracepoint on, before the events at `until`
    /// run: every idle period's choices and tick wakeups up to then, traced.
    #[inline]
    pub fn cpuidle_advance(&mut self, until: u64) {
        if self.cpuidle.tracing && until > self.cpuidle.next_action_at {
            self.cpuidle.advance_all(until, self.cfg.tick_ns);
            self.cpu_idle_trace();
        }
    }

    /// idle_get_state(rq)->exit_latency: the exit latency of the state the
    /// idle `cpu` is in now (its governor's choice, made now if not yet,
    /// and any tick wakeup replayed); None without a driver or before the
    /// CPU got as far as cpuidle.
    pub(crate) fn idle_get_state_exit_latency(&mut self, cpu: usize) -> Option<u64> {
        if !self.cpuidle.enabled() {
            return None;
        }
        self.cpuidle.advance(cpu, self.now, self.cfg.tick_ns);
        if self.cpuidle.tracing {
            self.cpu_idle_trace();
        }
        let seg = self.cpuidle.devs[cpu].entry?.seg?;
        Some(self.cpuidle.table?.states()[seg.idx as usize].exit_latency_ns)
    }

    /// Write out the cpu_idle transitions cpuidle has made.
    #[inline(never)]
    fn cpu_idle_trace(&mut self) {
        for (at, cpu, state) in self.cpuidle.traced.drain(..) {
            self.trace.cpu_idle(at, cpu, state);
        }
    }

    /// A task is being woken onto `cpu` (from `from`): with a cpuidle
    /// driver, an idle CPU pays its state's exit latency and, unless it was
    /// polling, the IPI: the CPU runs its next task only after both
    /// (`Rq::busy_until`); a busy remote CPU pays the IPI in the wakee's
    /// debt, as without a driver.
    #[inline(never)]
    pub(crate) fn wakeup_idle_cost_cpuidle(&mut self, tid: TaskId, from: usize, cpu: usize) {
        let ipi = self.cfg.costs.wakeup_ipi_ns;
        match self.cpuidle_exit(cpu) {
            Some(x) => {
                let wake = x.exit_latency_ns + if cpu != from && !x.polling { ipi } else { 0 };
                self.idle_exit_window(cpu, wake);
            }
            None if cpu != from && self.sched.rqs[cpu].curr.is_some() => {
                let t = &mut self.sched.tasks[tid];
                t.cs_debt += ipi;
                t.stats.wake_cost += ipi;
            }
            None => {}
        }
    }

    /// The idle CPU switches to a task for another reason than a wakeup
    /// (a task pulled onto it, a new task): it leaves its idle state.
    #[inline(never)]
    pub(crate) fn cpuidle_exit_to(&mut self, cpu: usize) {
        if let Some(x) = self.cpuidle_exit(cpu) {
            self.idle_exit_window(cpu, x.exit_latency_ns);
        }
    }

    /// The CPU spends `wake` ns coming out of its idle state: idle time,
    /// after which it may run a task.
    fn idle_exit_window(&mut self, cpu: usize, wake: u64) {
        if wake == 0 {
            return;
        }
        let end = self.now + wake;
        self.sched.rqs[cpu].windows.push(CpuWindow { start: self.now, end, kind: WindowKind::Idle });
        self.sched.rqs[cpu].busy_until = self.sched.rqs[cpu].busy_until.max(end);
    }
}
