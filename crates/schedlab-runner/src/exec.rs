//! The scenario's tasks as real threads of this process, and their program
//! interpreter. Every blocking op can be ended by the stop flag: condition
//! variables are notified, sleeping threads get a signal (their
//! clock_nanosleep returns EINTR), spinning threads check the flag.

use crate::write::Writer;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use schedlab_core::engine::Rng;
use schedlab_core::scenario::Scenario;
use schedlab_core::workload::Op;
use schedlab_core::workload::TaskGroup;

use crate::procfs::{self, TaskCounters};
use crate::sys;

/// The calibration unit: `burn` iterations per CHUNK_NS of CPU time.
pub const CHUNK_NS: u64 = 20_000;
/// One burst of `run` between two reads of CLOCK_MONOTONIC (ns at the
/// calibrated speed).
pub const BURST_NS: u64 = 10_000;
/// A gap between two reads longer than this makes `run` ask the kernel
/// whether the thread was switched out during it (getrusage).
pub const GAP_NS: u64 = 4 * BURST_NS;

/// Pure user-space work the optimiser cannot remove.
pub fn burn(iters: u64) {
    let mut x = 0u64;
    for i in 0..iters {
        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
    }
    std::hint::black_box(x);
}

/// Iterations of `burn` per CHUNK_NS of this CPU's time, measured on the
/// thread's CPU clock (so a loaded CPU does not skew it).
pub fn calibrate() -> u64 {
    let n = 200_000;
    let mut best = u64::MAX;
    for _ in 0..5 {
        let t = sys::thread_cpu();
        burn(n);
        best = best.min(sys::thread_cpu() - t);
    }
    (n * CHUNK_NS / best.max(1)).max(1)
}

/// The CPU time a `run` op has used, measured without reading the thread's
/// CPU clock while the thread keeps the CPU. Reading CLOCK_THREAD_CPUTIME_ID
/// enters the scheduler (task_sched_runtime -> update_curr, which on EEVDF
/// reschedules at the end of a slice between ticks) and costs a syscall,
/// and a `while (1)` loop, which the simulator models, does neither. `run`
/// burns in bursts of about BURST_NS and reads CLOCK_MONOTONIC (the vDSO: no
/// kernel entry) after each. A short interval between two reads was spent
/// on the CPU. A long one (an interrupt, another task running, or, under
/// QEMU TCG, the other vCPUs running in turn while the guest charges this
/// thread) makes the thread ask getrusage(RUSAGE_THREAD) (no update_curr)
/// whether it was switched out: if not, the interval counts whole; if so,
/// the thread has just been switched back in (a fresh start on the CPU,
/// where an update_curr perturbs nothing) and reads its CPU clock once to
/// count exactly what the kernel charged it.
#[derive(Debug, Clone)]
pub struct CpuMeter {
    /// CPU time counted so far (ns).
    pub used: u64,
    last: u64,
    switches: u64,
    cpu0: u64,
}

/// What the meter reads from the kernel (a trait so tests can script it).
pub trait Clocks {
    /// CLOCK_MONOTONIC (ns).
    fn now(&mut self) -> u64;
    /// The thread's context switches so far.
    fn switches(&mut self) -> u64;
    /// The thread's CPU clock (ns).
    fn cpu(&mut self) -> u64;
}

/// The real clocks (sys.rs).
pub struct SysClocks;

impl Clocks for SysClocks {
    fn now(&mut self) -> u64 {
        sys::now()
    }
    fn switches(&mut self) -> u64 {
        sys::thread_switches()
    }
    fn cpu(&mut self) -> u64 {
        sys::thread_cpu()
    }
}

impl CpuMeter {
    pub fn new(c: &mut impl Clocks) -> CpuMeter {
        let cpu0 = c.cpu();
        let switches = c.switches();
        CpuMeter { used: 0, last: c.now(), switches, cpu0 }
    }

    /// After a burst: read the clock and count.
    pub fn step(&mut self, c: &mut impl Clocks) {
        let t = c.now();
        let d = t.saturating_sub(self.last);
        self.last = t;
        if d <= GAP_NS {
            self.used += d;
            return;
        }
        let s = c.switches();
        if s == self.switches {
            self.used += d;
            // The syscall's own time was on the CPU too.
            let after = c.now();
            self.used += after.saturating_sub(t);
            self.last = after.max(t);
        } else {
            self.switches = s;
            self.used = c.cpu().saturating_sub(self.cpu0);
            self.last = c.now();
        }
    }
}

/// A thread's `run` ops against what they asked, so that on average each
/// runs what it asks. An op cannot stop inside a gap between two reads of
/// the clock, which the kernel charges to the thread as CPU time: under
/// QEMU TCG, where the vCPUs run in turn, such a gap (another vCPU's turn)
/// is often hundreds of microseconds, and a 500 us op ran 720 us on
/// average in a two-vCPU 6.1 guest beside a hog (`real.run_overshoot_ns`).
/// What an op overran is taken off the thread's next ops; on real CPUs the
/// overrun is the last burst's fraction and the carry stays near zero.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunCarry {
    /// CPU time the thread's ops have run beyond their asks and not yet
    /// given back (ns).
    pub credit: u64,
    /// Ops run, and their overruns before the carry (ns), for the report.
    pub ops: u64,
    pub over_ns: u64,
}

impl RunCarry {
    /// What a `run` of `w` ns aims at: `w` less the credit, which pays for
    /// it.
    pub fn target(&mut self, w: u64) -> u64 {
        let paid = self.credit.min(w);
        self.credit -= paid;
        w - paid
    }

    /// The op that aimed at `target` used `used`.
    pub fn done(&mut self, target: u64, used: u64) {
        let over = used.saturating_sub(target);
        self.credit += over;
        self.ops += 1;
        self.over_ns += over;
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One thread of the run, as the report sees it.
#[derive(Debug, Clone, Default)]
pub struct Slot {
    pub comm: String,
    pub group: usize,
    pub tid: i32,
    pub forked: bool,
    /// Relative to t0 (ns).
    pub start_ns: Option<u64>,
    pub exit_ns: Option<u64>,
    /// The thread has finished (its own final counters are in `own_final`).
    pub finished: bool,
    /// Counters the thread read itself when its program ended.
    pub own_final: Option<TaskCounters>,
    /// Timer delays (ns) of sleep/timer ops whose intended wake lay in the
    /// window: from the absolute time asked (the timer's expiry) to the
    /// thread's return to user space (the report's `timer_delay_*`).
    pub timer_delays: Vec<u64>,
    /// The thread's own CPU time when its start-up was done (the return
    /// from clone, glibc's thread start, the setup's three syscalls): the
    /// simulator's `kernel.costs.thread_start`.
    pub ready_cpu_ns: Option<u64>,
    /// The thread's `run` ops and what they ran beyond their asks (RunCarry).
    pub run_ops: u64,
    pub run_over_ns: u64,
}

/// A pthread-style barrier that the stop flag can break.
struct Barrier {
    participants: usize,
    state: Mutex<(usize, u64)>, // (arrived, generation)
    cv: Condvar,
}

/// A counting semaphore (wait/signal).
struct Event {
    pending: Mutex<u64>,
    cv: Condvar,
}

/// Start gate and setup reports of the initial threads.
#[derive(Default)]
struct Gate {
    ready: usize,
    errors: Vec<String>,
}

pub struct Shared {
    pub stop: AtomicBool,
    groups: Vec<TaskGroup>,
    host_cpus: Vec<usize>,
    seed: u64,
    /// `burn` iterations per CHUNK_NS.
    chunk_iters: u64,
    /// CLOCK_MONOTONIC of time 0; set when the gate opens.
    t0: Mutex<u64>,
    /// The measurement window (absolute CLOCK_MONOTONIC ns).
    window: Mutex<(u64, u64)>,
    barriers: Vec<Barrier>,
    events: Vec<Event>,
    park: (Mutex<()>, Condvar),
    /// The threads' readiness, which only the main thread waits for.
    gate: (Mutex<Gate>, Condvar),
    /// 1 once the start gate is open (a futex word).
    gate_open: AtomicU32,
    pub slots: Mutex<Vec<Slot>>,
    handles: Mutex<Vec<JoinHandle<()>>>,
    /// Errors of threads started after the gate (forks), fatal for the run.
    pub late_errors: Mutex<Vec<String>>,
    done: (Mutex<usize>, Condvar), // live threads
    /// The `write` ops' sizes (by their index) and where they write.
    write_bytes: Vec<Option<u64>>,
    scratch: Option<std::path::PathBuf>,
    /// The scenario's cgroups (removed when the last reference goes).
    pub cgroups: Option<crate::cgroup::Cgroups>,
}

impl Shared {
    pub fn new(
        sc: &Scenario,
        host_cpus: Vec<usize>,
        seed: u64,
        chunk_iters: u64,
        scratch: Option<std::path::PathBuf>,
        cgroups: Option<crate::cgroup::Cgroups>,
    ) -> Arc<Shared> {
        Arc::new(Shared {
            stop: AtomicBool::new(false),
            groups: sc.groups.clone(),
            host_cpus,
            seed,
            chunk_iters,
            t0: Mutex::new(0),
            window: Mutex::new((0, u64::MAX)),
            barriers: sc
                .barriers
                .iter()
                .map(|(_, n)| Barrier { participants: *n, state: Mutex::new((0, 0)), cv: Condvar::new() })
                .collect(),
            events: sc
                .events
                .iter()
                .map(|n| Event { pending: Mutex::new(schedlab_core::workload::initial_pending(n)), cv: Condvar::new() })
                .collect(),
            park: (Mutex::new(()), Condvar::new()),
            gate: (Mutex::new(Gate::default()), Condvar::new()),
            gate_open: AtomicU32::new(0),
            slots: Mutex::new(Vec::new()),
            handles: Mutex::new(Vec::new()),
            late_errors: Mutex::new(Vec::new()),
            done: (Mutex::new(0), Condvar::new()),
            write_bytes: sc.read_ops.iter().map(|o| o.write.then_some(o.bytes)).collect(),
            scratch,
            cgroups,
        })
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    pub fn set_window(&self, start: u64, end: u64) {
        *lock(&self.window) = (start, end);
    }

    /// Start one thread of group `g`. Initial threads wait at the gate.
    pub fn spawn(self: &Arc<Self>, g: usize, forked: bool) -> std::io::Result<()> {
        let (comm, slot, idx) = {
            let mut slots = lock(&self.slots);
            let idx = slots.iter().filter(|s| s.group == g).count();
            // As the simulator names them (sched/core.rs alloc_task), at most 15 bytes like the kernel's comm.
            let grp = &self.groups[g];
            let comm = if grp.count > 1 { format!("{}-{}", grp.name, idx) } else { grp.name.clone() };
            let comm: String = comm.chars().take(15).collect();
            slots.push(Slot { comm: comm.clone(), group: g, forked, ..Default::default() });
            (comm, slots.len() - 1, idx)
        };
        *lock(&self.done.0) += 1;
        let me = Arc::clone(self);
        let h = std::thread::Builder::new().name(comm.clone()).stack_size(256 * 1024).spawn(move || {
            me.thread_main(slot, g, idx, &comm, forked);
            let mut live = lock(&me.done.0);
            *live -= 1;
            me.done.1.notify_all();
        });
        match h {
            Ok(h) => {
                lock(&self.handles).push(h);
                Ok(())
            }
            Err(e) => {
                lock(&self.slots)[slot].finished = true;
                *lock(&self.done.0) -= 1;
                Err(e)
            }
        }
    }

    fn setup(&self, g: &TaskGroup, tid: i32) -> Result<(), String> {
        if let Some(cg) = &self.cgroups {
            cg.attach(g.cgroup, tid)?;
        }
        let cpus: Vec<usize> = g.cpus.iter().map(|c| self.host_cpus[c]).collect();
        sys::set_affinity(tid, &cpus).map_err(|e| format!("sched_setaffinity({cpus:?}): {e}"))?;
        if g.policy.is_dl() {
            return sys::set_deadline(tid, &g.dl).map_err(|e| {
                let hint = match e.raw_os_error() {
                    Some(libc::EPERM) => {
                        " (EPERM: needs CAP_SYS_NICE, and the thread's CPUs must be every CPU of the machine: \
                         run the scenario on a machine of its CPU count)"
                    }
                    Some(libc::EBUSY) => " (EBUSY: the deadline bandwidth is taken; see /proc/sys/kernel/sched_rt_*)",
                    _ => "",
                };
                format!(
                    "sched_setattr(SCHED_DEADLINE, runtime {} ns, deadline {} ns, period {} ns): {e}{hint}",
                    g.dl.runtime, g.dl.deadline, g.dl.period
                )
            });
        }
        sys::set_policy(tid, g.policy, g.rt_priority).map_err(|e| {
            let hint = if e.raw_os_error() == Some(libc::EPERM) {
                " (EPERM: needs CAP_SYS_NICE or RLIMIT_RTPRIO)"
            } else {
                ""
            };
            format!("sched_setscheduler({}, priority {}): {e}{hint}", g.policy.name(), g.rt_priority)
        })?;
        if !g.policy.is_rt() {
            sys::set_nice(tid, g.nice).map_err(|e| {
                let hint = if e.raw_os_error() == Some(libc::EACCES) || e.raw_os_error() == Some(libc::EPERM) {
                    " (EPERM: a negative nice needs CAP_SYS_NICE or RLIMIT_NICE)"
                } else {
                    ""
                };
                format!("setpriority(nice {}): {e}{hint}", g.nice)
            })?;
        }
        Ok(())
    }

    fn thread_main(self: &Arc<Self>, slot: usize, gi: usize, idx: usize, comm: &str, forked: bool) {
        let tid = sys::gettid();
        lock(&self.slots)[slot].tid = tid;
        let g = &self.groups[gi];
        let setup = self.setup(g, tid).map_err(|e| format!("{comm}: {e}"));
        lock(&self.slots)[slot].ready_cpu_ns = Some(sys::thread_cpu());
        if forked {
            if let Err(e) = setup {
                lock(&self.late_errors).push(e);
                lock(&self.slots)[slot].finished = true;
                return;
            }
        } else {
            {
                let (m, cv) = &self.gate;
                let mut gate = lock(m);
                gate.ready += 1;
                if let Err(e) = setup {
                    gate.errors.push(e);
                }
                // Only the main thread waits on this condition: one wakeup
                // per thread that is ready, as the simulator's "start ready"
                // event. (A notify_all here woke every thread already at the
                // gate each time another became ready, n^2/2 wakeups that
                // scattered the threads over the CPUs before time 0.)
                cv.notify_one();
            }
            self.wait_gate();
            if self.stopped() {
                lock(&self.slots)[slot].finished = true;
                return;
            }
        }
        let t0 = *lock(&self.t0);
        let mut rng = Rng::fork(self.seed, &format!("task:{}:{}", g.name, idx));
        // The start delay comes first from the task's stream, as in the
        // simulation.
        let delay = g.start.sample(&mut rng);
        if !forked && delay > 0 {
            let at = t0 + delay;
            while sys::now() < at && !self.stopped() {
                sys::sleep_until(at);
            }
        }
        let start = sys::now();
        lock(&self.slots)[slot].start_ns = Some(start.saturating_sub(t0));
        let mut delays = Vec::new();
        let mut carry = RunCarry::default();
        let mut writer = self.scratch.as_deref().map(|d| Writer::new(d, format!("{}-{}", std::process::id(), slot)));
        self.interpret(gi, &mut rng, &mut delays, &mut carry, &mut writer);
        drop(writer);
        let end = sys::now();
        let natural = !self.stopped();
        let own = if natural { procfs::read_task("/proc/thread-self").ok() } else { None };
        let mut slots = lock(&self.slots);
        let s = &mut slots[slot];
        s.timer_delays = delays;
        s.run_ops = carry.ops;
        s.run_over_ns = carry.over_ns;
        s.own_final = own;
        if natural {
            s.exit_ns = Some(end.saturating_sub(t0));
        }
        s.finished = true;
    }

    /// Sleep until `at`; record the timer delay. False when stopped.
    fn sleep_abs(&self, at: u64, delays: &mut Vec<u64>) -> bool {
        loop {
            if self.stopped() {
                return false;
            }
            if sys::sleep_until(at) || sys::now() >= at {
                break;
            }
        }
        let woke = sys::now();
        if self.stopped() {
            return false;
        }
        let (ws, we) = *lock(&self.window);
        if at >= ws && at <= we {
            delays.push(woke.saturating_sub(at));
        }
        true
    }

    /// `run`: `w` ns of this thread's CPU time as a user-space loop
    /// (CpuMeter); what earlier ops ran beyond their ask is taken off this
    /// one (RunCarry).
    fn run_cpu(&self, w: u64, carry: &mut RunCarry) {
        let target = carry.target(w);
        let mut used = 0;
        if target > 0 {
            let burst = (self.chunk_iters * BURST_NS / CHUNK_NS).max(1);
            let mut meter = CpuMeter::new(&mut SysClocks);
            while meter.used < target && !self.stopped() {
                // The last burst is cut to what is left, at the calibrated speed.
                let left = ((target - meter.used) as u128 * self.chunk_iters as u128 / CHUNK_NS as u128) as u64;
                burn(burst.min(left.max(1)));
                meter.step(&mut SysClocks);
            }
            used = meter.used;
        }
        carry.done(target, used);
    }

    fn interpret(
        self: &Arc<Self>,
        gi: usize,
        rng: &mut Rng,
        delays: &mut Vec<u64>,
        carry: &mut RunCarry,
        writer: &mut Option<Writer>,
    ) {
        let ops = &self.groups[gi].program.ops;
        let mut pc = 0usize;
        let mut loops: Vec<(usize, u64)> = Vec::new();
        let mut timer_next: Option<u64> = None;
        // The program's start: an anchored timer's grid begins here.
        let started = sys::now();
        while let Some(op) = ops.get(pc) {
            if self.stopped() {
                return;
            }
            pc += 1;
            match op {
                Op::Run(d) => {
                    let w = d.sample(rng);
                    self.run_cpu(w, carry);
                }
                // The kernel's own work on a syscall of the program (fork,
                // exit): the real kernel does it; nothing to burn.
                Op::Sys(_) => {}
                Op::Runtime(d) => {
                    let until = sys::now() + d.sample(rng);
                    while !self.stopped() && sys::now() < until {
                        std::hint::spin_loop();
                    }
                }
                Op::Sleep(d) => {
                    let at = sys::now() + d.sample(rng);
                    if !self.sleep_abs(at, delays) {
                        return;
                    }
                }
                Op::Timer { period, relative, from_start } => {
                    let now = sys::now();
                    let first = if *from_start { started + period } else { now + period };
                    let next = timer_next.map_or(first, |n| n + period);
                    if next > now {
                        timer_next = Some(next);
                        if !self.sleep_abs(next, delays) {
                            return;
                        }
                    } else {
                        timer_next = Some(if *relative { now } else { next });
                    }
                }
                Op::Yield => sys::sched_yield(),
                Op::LoopStart { count, .. } => loops.push((pc - 1, if *count == 0 { u64::MAX } else { *count })),
                Op::LoopEnd { start } => {
                    let Some(top) = loops.last_mut() else { return };
                    if top.1 != u64::MAX {
                        top.1 -= 1;
                    }
                    if top.1 > 0 {
                        pc = start + 1;
                    } else {
                        loops.pop();
                    }
                }
                Op::Barrier(b) => {
                    let bar = &self.barriers[*b];
                    let mut st = lock(&bar.state);
                    st.0 += 1;
                    if st.0 >= bar.participants {
                        st.0 = 0;
                        st.1 += 1;
                        bar.cv.notify_all();
                    } else {
                        let gen = st.1;
                        while st.1 == gen && !self.stopped() {
                            st = bar.cv.wait(st).unwrap_or_else(|e| e.into_inner());
                        }
                    }
                }
                Op::Wait(e) => {
                    let ev = &self.events[*e];
                    let mut p = lock(&ev.pending);
                    while *p == 0 && !self.stopped() {
                        p = ev.cv.wait(p).unwrap_or_else(|e| e.into_inner());
                    }
                    if *p > 0 {
                        *p -= 1;
                    }
                }
                Op::Signal(e) => {
                    let ev = &self.events[*e];
                    *lock(&ev.pending) += 1;
                    ev.cv.notify_one();
                }
                Op::Fork(g) => {
                    if self.stopped() {
                        return;
                    }
                    if let Err(e) = self.spawn(*g, true) {
                        lock(&self.late_errors).push(format!("fork of {}: {e}", self.groups[*g].name));
                    }
                }
                Op::Exit => return,
                Op::Park => {
                    let (m, cv) = &self.park;
                    let mut gd = lock(m);
                    while !self.stopped() {
                        gd = cv.wait(gd).unwrap_or_else(|e| e.into_inner());
                    }
                }
                Op::Read { idx } => {
                    // Only write ops get here (plan.rs refuses the others).
                    let (Some(bytes), Some(w)) = (self.write_bytes[*idx as usize], writer.as_mut()) else { return };
                    if let Err(e) = w.write(bytes) {
                        lock(&self.late_errors).push(format!("write({bytes} bytes) in the scratch directory: {e}"));
                        self.stop.store(true, Ordering::Relaxed);
                        return;
                    }
                }
                Op::Parallel { .. }
                | Op::KtaskHelper(_)
                | Op::QueueWork { .. }
                | Op::Io { .. }
                | Op::Kswapd(_)
                | Op::Flusher(_)
                | Op::Dbench(_)
                | Op::Rtmt(_)
                | Op::Send { .. }
                | Op::Recv { .. }
                | Op::Exec
                | Op::RtmtRotate => return, // refused before the run (plan.rs)
                // The simulator's model of this runner's own start (never in a scenario's program).
                Op::Clone { .. } | Op::SetAttr(_) | Op::StartGate(_) => return,
            }
        }
    }

    /// Wait until every initial thread has applied its attributes; the setup errors.
    pub fn wait_ready(&self, n: usize) -> Vec<String> {
        let (m, cv) = &self.gate;
        let mut gate = lock(m);
        while gate.ready < n {
            gate = cv.wait(gate).unwrap_or_else(|e| e.into_inner());
        }
        gate.errors.clone()
    }

    /// Sleep until the start gate opens: a futex on `gate_open`, so that
    /// the opening wakes every thread from the main thread's CPU and none
    /// has a lock to take again on its way out (the simulator's start
    /// barrier, released by the main thread).
    fn wait_gate(&self) {
        while self.gate_open.load(Ordering::Acquire) == 0 {
            sys::futex(&self.gate_open, libc::FUTEX_WAIT, 0);
        }
    }

    fn release_gate(&self) {
        self.gate_open.store(1, Ordering::Release);
        sys::futex(&self.gate_open, libc::FUTEX_WAKE, i32::MAX as u32);
    }

    /// Open the start gate: time 0 is `t0`.
    pub fn open_gate(&self, t0: u64) {
        *lock(&self.t0) = t0;
        self.release_gate();
    }

    /// Wait until no thread is live or `deadline` (CLOCK_MONOTONIC) passes.
    pub fn wait_all_exit(&self, deadline: u64) -> bool {
        let (m, cv) = &self.done;
        let mut live = lock(m);
        while *live > 0 {
            let now = sys::now();
            if now >= deadline {
                return false;
            }
            let (l, _) = cv
                .wait_timeout(live, std::time::Duration::from_nanos(deadline - now))
                .unwrap_or_else(|e| e.into_inner());
            live = l;
        }
        true
    }

    /// Stop every thread and join them all.
    pub fn stop_and_join(&self) {
        self.stop.store(true, Ordering::SeqCst);
        self.release_gate();
        loop {
            for b in &self.barriers {
                let _g = lock(&b.state);
                b.cv.notify_all();
            }
            for e in &self.events {
                let _g = lock(&e.pending);
                e.cv.notify_all();
            }
            {
                let _g = lock(&self.park.0);
                self.park.1.notify_all();
            }
            let tids: Vec<i32> =
                lock(&self.slots).iter().filter(|s| !s.finished && s.tid != 0).map(|s| s.tid).collect();
            for t in tids {
                sys::kick(t);
            }
            if self.wait_all_exit(sys::now() + 2_000_000) {
                break;
            }
        }
        loop {
            let h = lock(&self.handles).pop();
            match h {
                Some(h) => {
                    let _ = h.join();
                }
                None => break,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Scripted clocks: `now` returns the listed instants in turn.
    struct Script {
        now: Vec<u64>,
        switches: u64,
        cpu: u64,
    }

    impl Clocks for Script {
        fn now(&mut self) -> u64 {
            self.now.remove(0)
        }
        fn switches(&mut self) -> u64 {
            self.switches
        }
        fn cpu(&mut self) -> u64 {
            self.cpu
        }
    }

    #[test]
    fn meter_counts_short_intervals_and_asks_about_long_ones() {
        let mut c = Script { now: vec![1_000, 11_000], switches: 7, cpu: 50_000 };
        let mut m = CpuMeter::new(&mut c);
        m.step(&mut c);
        assert_eq!(m.used, 10_000, "a short interval: on the CPU, no syscall");
        // 500 us with no context switch: QEMU ran the other vCPUs (or an
        // interrupt ran): the guest charged it to this thread, so it counts,
        // with the getrusage call's 1 us.
        c.now = vec![511_000, 512_000];
        m.step(&mut c);
        assert_eq!(m.used, 511_000);
        // A long interval with a switch: the kernel's figure replaces the count.
        c.now = vec![2_512_000, 2_513_000];
        c.switches = 8;
        c.cpu = 50_000 + 530_000;
        m.step(&mut c);
        assert_eq!(m.used, 530_000);
        c.now = vec![2_523_000];
        m.step(&mut c);
        assert_eq!(m.used, 540_000, "counting goes on from the read after the CPU clock");
    }

    #[test]
    fn an_overrun_is_taken_off_the_next_runs() {
        let mut c = RunCarry::default();
        // Asked 500 us, ran 720 (a gap at the end): 220 us of credit.
        let t = c.target(500_000);
        assert_eq!(t, 500_000);
        c.done(t, 720_000);
        // The next op aims at 280 us; it lands exactly.
        let t = c.target(500_000);
        assert_eq!(t, 280_000);
        c.done(t, 280_000);
        assert_eq!(c.credit, 0);
        // A credit larger than the ask: the op runs nothing, the rest stays.
        let t = c.target(100_000);
        c.done(t, 700_000);
        assert_eq!(c.credit, 600_000);
        assert_eq!(c.target(500_000), 0);
        assert_eq!(c.credit, 100_000);
        // Over every op the thread ran what it asked plus what is owed.
        assert_eq!((c.ops, c.over_ns), (3, 220_000 + 600_000));
    }

    #[test]
    fn run_uses_about_its_cpu_time() {
        let text = "name = \"m\"\n[machine]\nsockets = 1\ncores_per_socket = 1\n[[task]]\nname = \"a\"\nprogram = [{ run = \"1ms\" }]\n";
        let sc = schedlab_core::scenario::load(text, "m.toml", &[]).expect("valid");
        let sh = Shared::new(&sc, vec![0], 1, calibrate(), None, None);
        let c0 = sys::thread_cpu();
        sh.run_cpu(3_000_000, &mut RunCarry::default());
        let used = sys::thread_cpu() - c0;
        // Loose: the test machine may preempt this thread; it must neither stop
        // early nor run on (the meter counts an undetected switch's gap at most).
        assert!((2_500_000..=4_000_000).contains(&used), "ran {used} ns of CPU for 3 ms");
    }
}
