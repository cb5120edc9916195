//! The task-program interpreter: runs each task's ops (workload/program.rs)
//! on its CPU, turning them into CPU work, sleeps and the syscalls of the
//! scheduler core. Sleep timers are hrtimers with the kernel's slack.

use crate::cpumask::CpuMask;
use crate::engine::event::Ev;
use crate::engine::time::Instant;
use crate::error::SimError;
use crate::kthread::floor::LendsKthreads;
use crate::kthread::WorkDone;
use crate::program::RtmtOp;
use crate::sched::class::WF_SYNC;
use crate::sched::task::{TaskId, TaskState};
use crate::workload::channel::ChanKind;
use crate::workload::floor::WorkloadFloor;
use crate::workload::rt_migrate_test::RtmtAction;
use crate::workload::{Op, QueueWorkOp};

impl WorkloadFloor {
    /// Interpret the task's program from its pc until it reaches an op that
    /// takes time or blocks. The task is running on its CPU.
    pub fn advance(&mut self, tid: TaskId) {
        self.m.kt.k.sched.tasks[tid].need_advance = false;
        // Every task runs a program template (kworkers: their work items').
        let Some(template) = self.m.kt.k.sched.tasks[tid].template else { return };
        let worker = self.m.kt.k.sched.tasks[tid].worker.is_some();
        let mut steps = 0u32;
        loop {
            steps += 1;
            if steps > 1_000_000 {
                self.m.fatal = Some(SimError::Invariant {
                    message: format!(
                        "{}: no progress: task {} runs a million ops without letting simulated time pass (a loop of zero-time ops)",
                        self.m.source, self.m.kt.k.sched.tasks[tid].comm
                    ),
                });
                return;
            }
            let pc = self.m.kt.k.sched.tasks[tid].pc;
            let op = if worker {
                // A kworker runs the ops of its work item (kthread/workqueue.rs).
                self.m.kt.worker_op(tid, pc)
            } else {
                self.m.kt.progs.templates[template].program.ops.get(pc).copied()
            };
            let Some(op) = op else {
                if worker {
                    if self.m.kt.worker_next(tid) {
                        continue;
                    }
                    return;
                }
                self.m.kt.k.do_exit(tid);
                return;
            };
            if op.may_sleep()
                && self.m.kt.k.sched.tasks[tid].cs_debt > 0
                && self.m.kt.k.sched.rqs[self.m.kt.k.sched.tasks[tid].cpu].curr == Some(tid)
            {
                // The kernel time it owes (the switch to it, a wakeup's IPI
                // or idle exit) passes before it can sleep again: the op
                // goes on when its op timer has charged it (op_done).
                self.m.kt.k.sched.tasks[tid].need_advance = true;
                return;
            }
            self.m.kt.k.sched.tasks[tid].pc += 1;
            if !self.exec_op(tid, template, pc, op) {
                return;
            }
        }
    }

    /// Give the task `w` ns of CPU work (%sys if `sys`); true when there is none.
    fn start_work(&mut self, tid: TaskId, w: u64, sys: bool) -> bool {
        self.m.kt.k.sched.tasks[tid].in_sys = sys;
        if w == 0 {
            return true;
        }
        self.m.kt.k.sched.tasks[tid].work_left = w;
        false
    }

    /// Run one op of `tid`'s program (at `pc` of `template`). Returns true
    /// to go on with the next op, false when the task now spends time, blocks
    /// or exits.
    fn exec_op(&mut self, tid: TaskId, template: usize, pc: usize, op: Op) -> bool {
        match op {
            Op::Run(d) => {
                let t = &mut self.m.kt.k.sched.tasks[tid];
                let w = d.sample(&mut t.rng);
                t.work_is_run();
                return self.start_work(tid, w, false);
            }
            Op::Sys(w) => {
                self.m.kt.k.sched.tasks[tid].work_is_cpu();
                return self.start_work(tid, w, true);
            }
            Op::Runtime(d) => {
                let w = d.sample(&mut self.m.kt.k.sched.tasks[tid].rng);
                self.m.kt.k.sched.tasks[tid].runtime_end = Some(self.m.kt.k.now + w);
                return false;
            }
            Op::Sleep(d) => {
                let w = d.sample(&mut self.m.kt.k.sched.tasks[tid].rng);
                self.block(tid);
                self.arm_sleep_timer(tid, self.m.kt.k.now + w);
                return false;
            }
            Op::Timer { period, relative, from_start } => {
                let next = match self.m.kt.k.sched.tasks[tid].timer_next {
                    None if from_start => self.m.kt.k.sched.tasks[tid].stats.start_ns + period,
                    None => self.m.kt.k.now + period,
                    Some(n) => n + period,
                };
                if next > self.m.kt.k.now {
                    self.m.kt.k.sched.tasks[tid].timer_next = Some(next);
                    self.block(tid);
                    self.arm_sleep_timer(tid, next);
                    return false;
                }
                // Late: no sleep; rt-app's relative mode moves the grid to now.
                self.m.kt.k.sched.tasks[tid].timer_next = Some(if relative { self.m.kt.k.now } else { next });
            }
            Op::Yield => {
                self.m.kt.k.sched.tasks[tid].sched_class().yield_task(&mut self.m.kt.k, tid);
                self.m.kt.k.sched.tasks[tid].need_advance = true;
                let cpu = self.m.kt.k.sched.tasks[tid].cpu;
                self.m.kt.k.resched_curr(cpu);
                return false;
            }
            Op::LoopStart { count, .. } => {
                // count 0: forever.
                let n = if count == 0 { u64::MAX } else { count };
                self.m.kt.k.sched.tasks[tid].loop_stack.push((pc, n));
            }
            Op::LoopEnd { start } => {
                let top = self.m.kt.k.sched.tasks[tid].loop_stack.last_mut().expect("loop stack");
                if top.1 != u64::MAX {
                    top.1 -= 1;
                }
                if top.1 > 0 {
                    self.m.kt.k.sched.tasks[tid].pc = start + 1;
                } else {
                    self.m.kt.k.sched.tasks[tid].loop_stack.pop();
                }
            }
            Op::Barrier(b) => return self.barrier(tid, b, false),
            Op::Wait(e) => {
                if self.wl.events[e].pending > 0 {
                    self.wl.events[e].pending -= 1;
                } else {
                    self.wl.events[e].waiters.push(tid);
                    self.block(tid);
                    return false;
                }
            }
            Op::Signal(e) => {
                if self.wl.events[e].waiters.is_empty() {
                    self.wl.events[e].pending += 1;
                } else {
                    let w = self.wl.events[e].waiters.remove(0);
                    let cpu = self.m.kt.k.sched.tasks[tid].cpu;
                    self.m.kt.k.record_wakee(tid, w);
                    self.m.kt.k.try_to_wake_up(w, cpu, true);
                }
            }
            Op::Send { ch, n } => {
                return self.chan_send(tid, ch as usize + self.m.kt.k.sched.tasks[tid].idx as usize % n as usize)
            }
            Op::Recv { ch, n } => {
                return self.chan_recv(tid, ch as usize + self.m.kt.k.sched.tasks[tid].idx as usize % n as usize)
            }
            Op::Fork(g) => {
                let tmpl = self.m.kt.progs.templates[g].clone();
                let idx = self.m.kt.k.sched.group_tasks.get(g).copied().unwrap_or(0);
                let child = self.m.kt.k.alloc_task(g, Some(g), &tmpl, idx);
                let cpu = self.m.kt.k.sched.tasks[tid].cpu;
                self.m.kt.k.wake_up_new_task(child, Some(cpu));
            }
            Op::Exec => {
                if !self.m.kt.k.sched_exec(tid) {
                    return false;
                }
            }
            Op::Clone { template, group } => self.start_clone(tid, template as usize, group as usize), // start.rs
            Op::SetAttr(t) => return self.start_setattr(tid, t),
            Op::StartGate(b) => return self.barrier(tid, b, true), // the runner's start gate
            Op::Park => {
                self.block(tid);
                return false;
            }
            Op::Exit => {
                self.m.kt.k.do_exit(tid);
                return false;
            }
            Op::Parallel { work, threads, min_chunk } => {
                if let Some(t) = self.m.kt.ktask_run(tid, work, threads, min_chunk) {
                    self.advance(t);
                }
                return false;
            }
            Op::Rtmt(op) => self.exec_rtmt_op(tid, template, op),
            Op::RtmtRotate => return self.rtmt_rotate(tid, template),
            Op::QueueWork { .. } | Op::Io { .. } | Op::Dbench(_) => return self.exec_kernel_op(tid, op),
            Op::Read { idx } => return self.m.mm_read(tid, idx as usize),
            Op::Kswapd(k) => {
                self.m.kswapd(tid, k as usize);
                return false;
            }
            Op::Flusher(w) => {
                self.m.flusher(tid, w as usize);
                return false;
            }
            Op::KtaskHelper(job) => {
                if let Some(t) = self.m.kt.ktask_helper(tid, job) {
                    self.advance(t);
                }
                return false;
            }
        }
        true
    }

    /// An rt-migrate-test op (workload/rt_migrate_test.rs) of task `tid`.
    fn exec_rtmt_op(&mut self, tid: TaskId, template: usize, op: RtmtOp) {
        let cpu = self.m.kt.k.sched.tasks[tid].cpu;
        self.m.kt.k.update_curr(cpu);
        let (pid, now, exec) =
            (self.m.kt.k.sched.tasks[tid].pid, self.m.kt.k.now, self.m.kt.k.sched.tasks[tid].se.sum_exec_runtime);
        let Some(rtmt) = self.wl.rtmt.as_mut() else { return };
        match rtmt.op(op, pid, now, exec) {
            RtmtAction::Continue => {}
            RtmtAction::BreakLoop => {
                // `break` out of the iteration loop: its LoopEnd ends it.
                if let Some(top) = self.m.kt.k.sched.tasks[tid].loop_stack.last_mut() {
                    top.1 = 1;
                }
            }
            RtmtAction::LeaveLoop => {
                // Continue after the innermost loop's LoopEnd.
                if let Some((start, _)) = self.m.kt.k.sched.tasks[tid].loop_stack.pop() {
                    if let Op::LoopStart { end, .. } = self.m.kt.progs.templates[template].program.ops[start] {
                        self.m.kt.k.sched.tasks[tid].pc = end + 1;
                    }
                }
            }
        }
    }

    /// The ops that hand work to the rest of the kernel: a work item, a
    /// block request, dbench's bookkeeping. Same contract as exec_op.
    #[inline(never)]
    fn exec_kernel_op(&mut self, tid: TaskId, op: Op) -> bool {
        match op {
            Op::QueueWork { idx, .. } => {
                let QueueWorkOp { wq, program, cpu, wait } = self.wl.queue_works[idx as usize];
                let here = self.m.kt.k.sched.tasks[tid].cpu;
                let done = WorkDone { wake: wait.then_some(tid), ..Default::default() };
                self.m.kt.queue_work(wq, program, cpu.unwrap_or(here), done, true);
                if wait {
                    // flush_work(): wait_for_completion(), not iowait.
                    self.block(tid);
                    return false;
                }
            }
            Op::Io { idx, .. } => {
                let io = self.wl.io_ops[idx as usize];
                let here = self.m.kt.k.sched.tasks[tid].cpu;
                let req = self.m.kt.block.alloc_request(
                    self.m.kt.k.now,
                    io.disk,
                    io.op,
                    io.bytes,
                    io.wait.then_some(tid),
                    io.end_io,
                );
                match io.submit {
                    Some((wq, program)) => self.m.kt.queue_work(
                        wq,
                        program,
                        here,
                        WorkDone { submit: Some(req), ..Default::default() },
                        true,
                    ),
                    None => self.m.kt.block.submit_bio(req, here, self.m.kt.k.now, &mut self.m.kt.k.q),
                }
                if io.wait {
                    self.io_block(tid, io.iowait);
                    return false;
                }
            }
            Op::Dbench(op) => {
                let (now, start) = (self.m.kt.k.now, self.m.kt.k.warmup);
                self.wl.dbench.op(tid, op, now, start);
            }
            _ => unreachable!("not a kernel op"),
        }
        true
    }

    /// `tid` arrives at barrier `b`: it sleeps until the last arrival, which
    /// wakes the others from its CPU (with `start`, that instant is their
    /// start: the runner's gate, workload/start.rs). False when it slept.
    pub(crate) fn barrier(&mut self, tid: TaskId, b: usize, start: bool) -> bool {
        let bar = &mut self.wl.barriers[b];
        bar.arrived.push(tid);
        if bar.arrived.len() < bar.participants {
            self.block(tid);
            return false;
        }
        let waiters: Vec<TaskId> = std::mem::take(&mut bar.arrived);
        let (cpu, now) = (self.m.kt.k.sched.tasks[tid].cpu, self.m.kt.k.now);
        for w in waiters.into_iter().filter(|&w| w != tid) {
            if start {
                self.m.kt.k.sched.tasks[w].stats.start_ns = now;
            }
            self.m.kt.k.try_to_wake_up(w, cpu, true);
        }
        true
    }

    /// rt-migrate-test's rotating thread pins itself to the next CPU of its
    /// mask (sched_setaffinity). Returns false when the pin moved it.
    fn rtmt_rotate(&mut self, tid: usize, template: usize) -> bool {
        let save = self.m.kt.progs.templates[template].cpus.clone();
        let Some(rtmt) = self.wl.rtmt.as_mut() else { return true };
        let target = rtmt.next_rotate_cpu(|c| save.test(c));
        let mut mask = CpuMask::new(self.m.kt.k.sched.rqs.len());
        mask.set(target);
        let cpu = self.m.kt.k.sched.tasks[tid].cpu;
        self.m.kt.k.set_cpus_allowed_curr(tid, mask);
        if target == cpu {
            return true;
        }
        // Its CPU left the mask: the stopper moves it now (sched/syscalls.rs).
        self.m.kt.k.affine_move_task(tid, target);
        false
    }

    pub(crate) fn op_done(&mut self, cpu: usize) {
        self.m.kt.k.sched.rqs[cpu].op_key = None;
        let Some(tid) = self.m.kt.k.sched.rqs[cpu].curr else { return };
        self.m.kt.k.sched.tasks[tid].op_done_owed = false;
        self.m.kt.k.update_curr(cpu);
        let t = &self.m.kt.k.sched.tasks[tid];
        if t.se.exec_start > self.m.kt.k.now {
            // Not started yet (idle exit or interrupt): wait for it.
            self.m.kt.k.arm_op_timer(cpu);
            return;
        }
        if let Some(end) = t.runtime_end {
            if self.m.kt.k.now < end || t.cs_debt > 0 {
                self.m.kt.k.arm_op_timer(cpu);
                return;
            }
            self.m.kt.k.sched.tasks[tid].runtime_end = None;
        } else if t.work_left > 0 || t.cs_debt > 0 {
            self.m.kt.k.arm_op_timer(cpu);
            return;
        }
        if self.m.kt.k.sched.tasks[tid].ktask.is_some() && !self.m.kt.k.sched.tasks[tid].need_advance {
            if let Some(t) = self.m.kt.ktask_chunk_done(tid) {
                self.advance(t);
            }
        } else {
            self.m.kt.k.sched.tasks[tid].need_advance = true;
            self.advance(tid);
        }
        if self.m.kt.k.sched.rqs[cpu].curr == Some(tid) && self.m.kt.k.sched.tasks[tid].state == TaskState::Runnable {
            self.m.kt.k.arm_op_timer(cpu);
        }
    }

    /// hrtimer_start of the sleep timer of `tid` (just blocked) for `expiry`.
    pub(crate) fn arm_sleep_timer(&mut self, tid: TaskId, expiry: u64) {
        let (at, hard) = self.hrtimer_fires_at(tid, expiry);
        let cpu = self.m.kt.k.sched.tasks[tid].cpu;
        self.m.kt.k.trace.hrtimer_start(self.m.kt.k.now, cpu, &self.m.kt.k.sched.tasks[tid], expiry, hard);
        self.m.kt.k.sched.tasks[tid].stats.timer_softexpires = Some(expiry);
        if self.m.kt.k.cpuidle.enabled() {
            self.m.kt.k.sched.rqs[cpu].hrtimers.push((at, tid));
        }
        self.m.kt.k.q.schedule(Instant(at), Ev::Timeout(tid));
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
    ///
    /// The interrupt reaches the CPU `kernel.costs.timer_irq_delay` after
    /// that (0 on bare metal; a KVM guest's host timer and VM entry), give
    /// or take a draw from [-spread/2, spread/2] when `timer_irq_spread` is
    /// set, never before the expiry.
    /// Deviation: the delay is the sleep timers' only; the tick and the
    /// other timers fire on time, and cpuidle's governor sees the delivered
    /// time as the next timer event. The spread is a uniform draw with the
    /// calibrated deciles, measured beside one busy CPU and drawn for every
    /// sleep timer, whatever the load of the machine.
    /// Returns (when it fires, its hard expiry).
    pub(crate) fn hrtimer_fires_at(&mut self, tid: TaskId, expiry: u64) -> (u64, u64) {
        let spread = self.m.kt.k.cfg.costs.timer_irq_spread_ns;
        let drawn = if spread > 0 { self.m.kt.k.sched.tasks[tid].rng.range(0, spread) } else { 0 };
        let k = &self.m.kt.k;
        let delay = (k.cfg.costs.timer_irq_delay_ns + drawn).saturating_sub(spread / 2);
        // Timer slack dates from 2.6.28.
        let slack =
            if k.sched.tasks[tid].policy.is_rt() || !k.cfg.mech.hrtimer_slack { 0 } else { k.cfg.costs.timer_slack_ns };
        if slack == 0 {
            return (expiry + delay, expiry);
        }
        let cpu = k.sched.tasks[tid].cpu;
        let tick = k.cfg.tick_ns;
        let next_tick = expiry.div_ceil(tick) * tick;
        if k.sched.rqs[cpu].nr_running > 0 && next_tick <= expiry + slack {
            (next_tick + 1 + delay, expiry + slack)
        } else {
            (expiry + slack + delay, expiry + slack)
        }
    }

    /// A `send` (workload/channel.rs): true when the message is queued.
    fn chan_send(&mut self, tid: TaskId, c: usize) -> bool {
        let ch = &mut self.wl.channels[c];
        // pipe_write: no free buffer; sock_alloc_send_pskb(): sk_wmem_alloc
        // at sk_sndbuf.
        if ch.queued >= ch.capacity {
            ch.writers.push(tid);
            // Woken, the task tries again.
            self.m.kt.k.sched.tasks[tid].pc -= 1;
            self.block(tid);
            return false;
        }
        ch.queued += 1;
        ch.sent += 1;
        // pipe_write: an exclusive waiter; sock_def_readable: every waiter
        // (hackbench and perf have one reader per channel).
        if !ch.readers.is_empty() {
            let r = ch.readers.remove(0);
            let cpu = self.m.kt.k.sched.tasks[tid].cpu;
            self.m.kt.k.record_wakee(tid, r);
            self.m.kt.k.try_to_wake_up_flags(r, cpu, true, WF_SYNC);
        }
        true
    }

    /// A `recv`: true when a message was taken.
    fn chan_recv(&mut self, tid: TaskId, c: usize) -> bool {
        let ch = &mut self.wl.channels[c];
        if ch.queued == 0 {
            ch.readers.push(tid);
            self.m.kt.k.sched.tasks[tid].pc -= 1;
            self.block(tid);
            return false;
        }
        ch.queued -= 1;
        ch.received += 1;
        let wake: Vec<TaskId> = match ch.kind {
            // pipe_read: a read from a full pipe wakes one writer.
            ChanKind::Pipe if !ch.writers.is_empty() => vec![ch.writers.remove(0)],
            // unix_write_space(): every blocked sender once writable.
            ChanKind::Unix if ch.writable() => std::mem::take(&mut ch.writers),
            _ => Vec::new(),
        };
        let cpu = self.m.kt.k.sched.tasks[tid].cpu;
        for w in wake {
            self.m.kt.k.record_wakee(tid, w);
            self.m.kt.k.try_to_wake_up_flags(w, cpu, true, WF_SYNC);
        }
        true
    }
}
