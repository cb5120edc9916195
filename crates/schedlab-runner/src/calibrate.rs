//! `schedlab-runner --calibrate`: measure this machine's values of the
//! simulator's cost constants (`kernel.costs.*`) with microbenchmarks that
//! are not the validation scenarios themselves, so that a scenario judged
//! with them is still a prediction.
//!
//! Everything runs on one CPU (the first this process may use) and is timed
//! with the threads' own CPU clocks (CLOCK_THREAD_CPUTIME_ID,
//! CLOCK_PROCESS_CPUTIME_ID), never wall time, so an interrupt or another
//! vCPU of an emulator in between is not counted. Each figure is the median
//! of `ROUNDS` rounds.
//!
//! * `pipe_write` / `pipe_read`: a 4-byte write(2) into a pipe that neither
//!   blocks nor wakes anyone, and its read(2) (perf bench sched pipe's
//!   message), in one thread.
//! * `unix_send` / `unix_recv`: the same on a unix stream socketpair with
//!   hackbench's 100-byte message.
//! * `context_switch`: two threads on the CPU hand a futex to each other
//!   (FUTEX_WAKE, then FUTEX_WAIT): the CPU time of both divided by the
//!   switches getrusage counts. The simulator charges a blocking hand-off
//!   this one constant (the wakeup and the block have none of their own),
//!   so it is measured as one: wake, block and switch.
//! * `wakeup_ipi` (with a second CPU): a busy thread wakes one blocked on
//!   an idle CPU; the median latency to the wakee's user space, less
//!   `idle_exit` (measured, else the default) and the measured
//!   `context_switch`.
//! * `timer_irq_delay` and `idle_exit`: a thread sleeps to an absolute
//!   expiry 1 ms ahead (clock_nanosleep TIMER_ABSTIME, timer slack 1 ns)
//!   on a CPU that is otherwise idle, first with /dev/cpu_dma_latency held
//!   at 0 (the CPU polls in idle, as under cyclictest), then without. The
//!   polled median lateness less the measured `context_switch` is
//!   `timer_irq_delay` (the way from the expiry to the interrupt: a KVM
//!   guest's host timer and VM entry; about 0 on bare metal); the halted
//!   median less the polled one is `idle_exit` (leaving the idle state the
//!   idle loop chose). Without the permission to open /dev/cpu_dma_latency
//!   only `timer_irq_delay` is given, from the halted median less the
//!   default `idle_exit` as well. The lateness runs on CLOCK_MONOTONIC:
//!   wall time, the one figure here that must be.
//! * `timer_irq_spread` (with a second CPU): the same sleeps while a thread
//!   spins on the second CPU; the 10th-90th percentile range of their
//!   lateness over 0.8, the width of a uniform draw with those deciles.
//! * `halt_poll` (with `idle_exit`): sleeps of 50 us to 1 ms without the
//!   request; the longest whose lateness (and every shorter one's) stays
//!   nearer the polled lateness than the halted one: the window in which a
//!   KVM host's halt polling still catches the wakeup (0 on bare metal,
//!   where no sleep is that cheap to leave, or where idle_exit is ~0).
//! * `fork`: what the parent's CPU spends in the runner's own fork op (a
//!   thread: clone, its stack, the runner's bookkeeping).
//! * `exit`: what a child that exits at once costs, in all: the return
//!   from clone, the runner's per-thread setup (affinity, policy, nice),
//!   its counters read at exit, and do_exit. From the process's CPU clock,
//!   which keeps the time of exited threads, less the parent's.
//! * `thread_start`: the part of that a runner thread spends before its
//!   program starts (the return from clone, glibc's thread start, the
//!   runner's setup: affinity, policy, nice), from its own CPU clock.
//! * `proc_read_task` and `proc_read_stat`: what the runner's main thread
//!   spends on its own samples. The first is one thread's four /proc files
//!   (schedstat, status, sched, stat: what it reads of every task at the
//!   window's start and end), read while that thread spins on another CPU
//!   (on the same CPU without a second one), as a scenario's running task
//!   is read; the second is /proc/stat with /proc/schedstat (read at every
//!   interval), divided by the CPUs /proc/stat lists, since both print a
//!   line per CPU. In a QEMU TCG guest, whose vCPUs take turns, reading a
//!   thread that runs on another vCPU costs milliseconds.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use schedlab_core::scenario;

use crate::exec::{self, Shared};
use crate::sys;

/// Rounds per figure; the median is kept.
const ROUNDS: usize = 15;
/// Operations per round of the pipe and socket loops (the socket's default
/// buffer holds 64 hackbench messages with room to spare).
const PIPE_OPS: usize = 256;
const UNIX_OPS: usize = 64;
/// Hand-offs per thread and round of the switch ping-pong.
const HANDOFFS: u64 = 1_000;
const FORKS: usize = 40;

/// One measured constant: its `kernel.costs` key, the median and the range
/// of its rounds (ns).
pub struct Figure {
    pub key: &'static str,
    pub median_ns: u64,
    pub min_ns: u64,
    pub max_ns: u64,
}

fn figure(key: &'static str, mut v: Vec<u64>) -> Figure {
    v.sort_unstable();
    Figure { key, median_ns: v[v.len() / 2], min_ns: v[0], max_ns: v[v.len() - 1] }
}

fn process_cpu() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid timespec; the clock always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn os_err(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

/// Per-op CPU time of `ops` writes of `msg` into `tx` then `ops` reads from `rx`.
fn write_read_round(tx: i32, rx: i32, msg: &[u8], ops: usize) -> Result<(u64, u64), String> {
    let mut buf = vec![0u8; msg.len()];
    let t = sys::thread_cpu();
    for _ in 0..ops {
        // SAFETY: msg is a valid buffer of msg.len() bytes.
        if unsafe { libc::write(tx, msg.as_ptr().cast(), msg.len()) } != msg.len() as isize {
            return Err(os_err("write"));
        }
    }
    let w = sys::thread_cpu() - t;
    let t = sys::thread_cpu();
    for _ in 0..ops {
        // SAFETY: buf is a valid buffer of buf.len() bytes.
        if unsafe { libc::read(rx, buf.as_mut_ptr().cast(), buf.len()) } != buf.len() as isize {
            return Err(os_err("read"));
        }
    }
    let r = sys::thread_cpu() - t;
    Ok((w / ops as u64, r / ops as u64))
}

fn pair(keys: (&'static str, &'static str), fds: [i32; 2], msg: &[u8], ops: usize) -> Result<[Figure; 2], String> {
    let (mut ws, mut rs) = (Vec::new(), Vec::new());
    write_read_round(fds[1], fds[0], msg, ops)?; // warm the buffers
    for _ in 0..ROUNDS {
        let (w, r) = write_read_round(fds[1], fds[0], msg, ops)?;
        ws.push(w);
        rs.push(r);
    }
    // SAFETY: both fds were opened here and are closed once.
    unsafe {
        libc::close(fds[0]);
        libc::close(fds[1]);
    }
    Ok([figure(keys.0, ws), figure(keys.1, rs)])
}

fn pipe_costs() -> Result<[Figure; 2], String> {
    let mut fds = [0i32; 2];
    // SAFETY: fds has room for the two descriptors.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(os_err("pipe"));
    }
    pair(("pipe_write", "pipe_read"), fds, &[7u8; 4], PIPE_OPS)
}

fn unix_costs() -> Result<[Figure; 2], String> {
    let mut fds = [0i32; 2];
    // SAFETY: fds has room for the two descriptors.
    if unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, fds.as_mut_ptr()) } != 0 {
        return Err(os_err("socketpair"));
    }
    // fds[1] sends, fds[0] receives: a stream socketpair is symmetric.
    pair(("unix_send", "unix_recv"), fds, &[7u8; 100], UNIX_OPS)
}

/// One side of the ping-pong: `rounds` times, wait for `me`'s turn on
/// `turn`, then hand it to the other and wake it. (CPU time, switches).
fn ping_pong(turn: &AtomicU32, me: u32, rounds: u64) -> (u64, u64) {
    let (t, s) = (sys::thread_cpu(), sys::thread_switches());
    for _ in 0..rounds {
        loop {
            let v = turn.load(Ordering::Acquire);
            if v == me {
                break;
            }
            sys::futex(turn, libc::FUTEX_WAIT, v);
        }
        turn.store(1 - me, Ordering::Release);
        sys::futex(turn, libc::FUTEX_WAKE, 1);
    }
    (sys::thread_cpu() - t, sys::thread_switches() - s)
}

/// A blocking hand-off between two threads on one CPU, as the simulator
/// charges it: the waker's wakeup, the sleeper's block and the switch.
fn switch_cost(cpu: usize) -> Result<Figure, String> {
    let mut v = Vec::new();
    for _ in 0..ROUNDS {
        let turn = Arc::new(AtomicU32::new(2)); // 2: not started
        let mut hs = Vec::new();
        for me in 0..2u32 {
            let turn = Arc::clone(&turn);
            hs.push(std::thread::spawn(move || {
                let _ = sys::set_affinity(sys::gettid(), &[cpu]);
                ping_pong(&turn, me, HANDOFFS)
            }));
        }
        turn.store(0, Ordering::Release);
        sys::futex(&turn, libc::FUTEX_WAKE, 2);
        let (mut cpu_ns, mut switches) = (0, 0);
        for h in hs {
            let (c, s) = h.join().map_err(|_| "a ping-pong thread panicked".to_string())?;
            cpu_ns += c;
            switches += s;
        }
        if switches < HANDOFFS {
            return Err(format!(
                "two threads handing a futex to each other on CPU {cpu} switched {switches} times in {} \
                 hand-offs: another thread shares the CPU",
                2 * HANDOFFS
            ));
        }
        v.push(cpu_ns / switches);
    }
    Ok(figure("context_switch", v))
}

/// Wakeups per round of the remote-wakeup latency, and the waker's busy
/// time between two.
const REMOTE_WAKEUPS: u64 = 200;
const REMOTE_GAP_NS: u64 = 500_000;

/// Remote wakeup latency: a thread on `cpu` stays busy and every
/// REMOTE_GAP_NS wakes a thread blocked on `other`, an idle CPU; the
/// latency runs from the waker's clock read just before FUTEX_WAKE to the
/// wakee's first clock read in user space (CLOCK_MONOTONIC, one clock for
/// both CPUs). The simulator charges such a wakeup wakeup_ipi + idle_exit
/// (the woken idle CPU) + context_switch: `wakeup_ipi` is what is left of
/// the median once the other two are taken off.
fn remote_wakeup(cpu: usize, other: usize, idle_exit_ns: u64, switch_ns: u64) -> Result<Figure, String> {
    let mut v = Vec::new();
    for _ in 0..ROUNDS {
        let seq = Arc::new(AtomicU32::new(0));
        let stamp = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let (s2, t2) = (Arc::clone(&seq), Arc::clone(&stamp));
        let h = std::thread::spawn(move || {
            let _ = sys::set_affinity(sys::gettid(), &[other]);
            let mut lat = Vec::with_capacity(REMOTE_WAKEUPS as usize);
            let mut last = 0;
            s2.store(u32::MAX, Ordering::Release); // ready
                                                   // Until the last wakeup; a wakeup that found the wakee awake
                                                   // (it was late for the one before) is not a latency.
            while last != REMOTE_WAKEUPS as u32 {
                let v = s2.load(Ordering::Acquire);
                if v == last || v == u32::MAX {
                    sys::futex(&s2, libc::FUTEX_WAIT, v);
                    continue;
                }
                if v == last + 1 {
                    lat.push(sys::now().saturating_sub(t2.load(Ordering::Acquire)));
                }
                last = v;
            }
            lat
        });
        while seq.load(Ordering::Acquire) != u32::MAX {
            sys::sched_yield();
        }
        for i in 1..=REMOTE_WAKEUPS {
            let until = sys::now() + REMOTE_GAP_NS;
            while sys::now() < until {
                std::hint::spin_loop();
            }
            stamp.store(sys::now(), Ordering::Release);
            seq.store(i as u32, Ordering::Release);
            sys::futex(&seq, libc::FUTEX_WAKE, 1);
        }
        let mut lat = h.join().map_err(|_| "the remote wakee panicked".to_string())?;
        if lat.is_empty() {
            return Err(format!("no remote wakeup of CPU {other} from CPU {cpu} was measured"));
        }
        lat.sort_unstable();
        v.push(lat[lat.len() / 2].saturating_sub(idle_exit_ns + switch_ns));
    }
    Ok(figure("wakeup_ipi", v))
}

/// Sleeps per round of the timer lateness, and how far ahead each expires.
const TIMER_SLEEPS: usize = 40;
const TIMER_AHEAD_NS: u64 = 1_000_000;

/// A CPU latency PM-QoS request of 0, held while the file is open
/// (cpu_latency_qos_open: the request lives as long as the open file).
fn hold_cpu_polling() -> Option<std::fs::File> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().write(true).open("/dev/cpu_dma_latency").ok()?;
    f.write_all(&0i32.to_ne_bytes()).ok()?;
    Some(f)
}

/// The median lateness of each round of absolute 1 ms sleeps on this CPU
/// (see `timer_irq_delay` in the opening comment).
fn timer_lateness() -> Result<Vec<u64>, String> {
    set_timer_slack(1)?;
    let v = (0..ROUNDS).map(|_| lateness_of(TIMER_AHEAD_NS, TIMER_SLEEPS)).collect();
    // Back to the default slack for the measurements that follow.
    set_timer_slack(0)?;
    Ok(v)
}

/// This thread's timer slack (PR_SET_TIMERSLACK; 0: back to the default).
fn set_timer_slack(ns: u64) -> Result<(), String> {
    // SAFETY: PR_SET_TIMERSLACK takes a value and changes only this thread.
    if unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0) } != 0 {
        return Err(os_err(&format!("prctl(PR_SET_TIMERSLACK, {ns})")));
    }
    Ok(())
}

/// Sleep lengths probed for the host's halt-polling window (us), the passes
/// over them, and the sleeps of each probe.
const HALT_PROBES_US: [u64; 9] = [50, 100, 150, 200, 300, 400, 500, 700, 1000];
const HALT_PASSES: usize = 5;
const HALT_SLEEPS: usize = 100;

/// The median lateness of sleeps of `len_ns` (slack 1 ns, set by the caller).
fn lateness_of(len_ns: u64, n: usize) -> u64 {
    let lat = latenesses(len_ns, n);
    lat[lat.len() / 2]
}

/// The lateness of `n` absolute sleeps of `len_ns` each, sorted.
fn latenesses(len_ns: u64, n: usize) -> Vec<u64> {
    let mut lat = Vec::with_capacity(n);
    for _ in 0..n {
        let expiry = sys::now() + len_ns;
        while !sys::sleep_until(expiry) {}
        lat.push(sys::now().saturating_sub(expiry));
    }
    lat.sort_unstable();
    lat
}

/// Sleeps per round of the timer spread.
const SPREAD_SLEEPS: usize = 100;

/// `timer_irq_spread`: absolute 1 ms sleeps on this CPU (held polling where
/// that is permitted, as for `timer_irq_delay`) while a thread spins on
/// `other`; per round the 10th to 90th percentile of their lateness, over
/// 0.8: the width of the uniform draw, centred on `timer_irq_delay`, that
/// the simulator spreads each sleep timer's interrupt over, with the same
/// deciles. Under KVM the host's timer and VM entry make it (tens of us);
/// a QEMU TCG guest's instruction-counted clock leaves about 1 us.
fn timer_spread(other: usize) -> Result<Figure, String> {
    with_spinner(other, |_| {
        let qos = hold_cpu_polling();
        set_timer_slack(1)?;
        let v = (0..ROUNDS)
            .map(|_| {
                let lat = latenesses(TIMER_AHEAD_NS, SPREAD_SLEEPS);
                let (p10, p90) = (lat[lat.len() / 10], lat[lat.len() * 9 / 10]);
                (p90 - p10) * 10 / 8
            })
            .collect();
        set_timer_slack(0)?;
        drop(qos);
        Ok(figure("timer_irq_spread", v))
    })
}

/// `halt_poll`: the longest probed sleep whose lateness, and that of every
/// shorter one, stays nearer `polled_ns` (a CPU held polling) than
/// `halted_ns` (a 1 ms halt): a halt the host's polling still catches. One
/// figure per pass over the probes.
fn halt_poll_window(polled_ns: u64, halted_ns: u64) -> Figure {
    let threshold = polled_ns + halted_ns.saturating_sub(polled_ns) / 2;
    let _ = set_timer_slack(1);
    let mut v = Vec::with_capacity(HALT_PASSES);
    for _ in 0..HALT_PASSES {
        let mut window = 0;
        for us in HALT_PROBES_US {
            if lateness_of(us * 1000, HALT_SLEEPS) >= threshold {
                break;
            }
            window = us * 1000;
        }
        v.push(window);
    }
    let _ = set_timer_slack(0);
    figure("halt_poll", v)
}

/// `timer_irq_delay`, and `idle_exit` when the CPU could be held polling;
/// `default_idle_exit_ns` stands for the latter when it could not.
type ExitFigures = (Figure, Figure);

fn timer_costs(switch_ns: u64, default_idle_exit_ns: u64) -> Result<(Figure, Option<ExitFigures>), String> {
    let polled = match hold_cpu_polling() {
        Some(qos) => {
            let v = timer_lateness()?;
            drop(qos);
            Some(v)
        }
        None => None,
    };
    let halted = timer_lateness()?;
    Ok(match polled {
        Some(polled) => {
            let delay = polled.iter().map(|&p| p.saturating_sub(switch_ns)).collect();
            // Round by round: each halted round less the polled one of its rank.
            let exit = halted.iter().zip(&polled).map(|(&h, &p)| h.saturating_sub(p)).collect();
            let exit = figure("idle_exit", exit);
            let med = |v: &[u64]| {
                let mut s = v.to_vec();
                s.sort_unstable();
                s[s.len() / 2]
            };
            let window = halt_poll_window(med(&polled), med(&halted));
            (figure("timer_irq_delay", delay), Some((exit, window)))
        }
        None => {
            let delay = halted.iter().map(|&h| h.saturating_sub(switch_ns + default_idle_exit_ns)).collect();
            (figure("timer_irq_delay", delay), None)
        }
    })
}

const FORK_SCENARIO: &str = r#"
name = "schedlab-runner-calibrate-fork"
[machine]
sockets = 1
cores_per_socket = 1
[[task]]
name = "child"
count = 0
program = [{ exit = true }]
"#;

fn fork_exit_costs(cpu: usize) -> Result<[Figure; 3], String> {
    let sc = scenario::load(FORK_SCENARIO, "<calibrate>", &[]).map_err(|e| format!("[{}] {e}", e.code()))?;
    let (mut forks, mut exits, mut starts) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let shared = Shared::new(&sc, vec![cpu], 1, 1, None, None);
        let (p0, t0) = (process_cpu(), sys::thread_cpu());
        let mut in_fork = 0;
        for _ in 0..FORKS {
            let t = sys::thread_cpu();
            shared.spawn(0, true).map_err(|e| format!("cannot create a thread: {e}"))?;
            in_fork += sys::thread_cpu() - t;
        }
        if !shared.wait_all_exit(sys::now() + 30_000_000_000) {
            return Err("the calibration's children did not exit within 30 s".into());
        }
        shared.stop_and_join();
        let late = shared.late_errors.lock().map(|l| l.clone()).unwrap_or_default();
        if let Some(e) = late.first() {
            return Err(e.clone());
        }
        let (p, t) = (process_cpu() - p0, sys::thread_cpu() - t0);
        forks.push(in_fork / FORKS as u64);
        exits.push(p.saturating_sub(t) / FORKS as u64);
        let mut ready: Vec<u64> =
            shared.slots.lock().map(|s| s.iter().filter_map(|s| s.ready_cpu_ns).collect()).unwrap_or_default();
        ready.sort_unstable();
        starts.push(ready.get(ready.len() / 2).copied().unwrap_or(0));
    }
    Ok([figure("fork", forks), figure("exit", exits), figure("thread_start", starts)])
}

/// Reads of one thread's files per round (the runner's `read_task`).
const PROC_READS: usize = 8;

/// `proc_read_task` (a spinning thread's files, read from `cpu` while it
/// runs on `other`) and `proc_read_stat` (per CPU listed), each from the
/// reading thread's CPU clock.
fn proc_read_costs(cpu: usize, other: Option<usize>) -> Result<[Figure; 2], String> {
    with_spinner(other.unwrap_or(cpu), |tid| {
        let dir = format!("/proc/self/task/{tid}");
        let (mut task, mut stat) = (Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            let t = sys::thread_cpu();
            for _ in 0..PROC_READS {
                crate::procfs::read_task(&dir).map_err(|e| format!("{dir}: {e}"))?;
            }
            task.push((sys::thread_cpu() - t) / PROC_READS as u64);
            let t = sys::thread_cpu();
            let cpus = crate::procfs::read_proc_stat().map_err(|e| format!("/proc/stat: {e}"))?.len().max(1);
            stat.push((sys::thread_cpu() - t) / cpus as u64);
        }
        Ok([figure("proc_read_task", task), figure("proc_read_stat", stat)])
    })
}

/// `f(tid)` while a thread `tid` spins on CPU `on`; the thread is stopped
/// and joined before this returns.
fn with_spinner<T>(on: usize, f: impl FnOnce(u32) -> Result<T, String>) -> Result<T, String> {
    use std::sync::atomic::AtomicBool;
    let stop = Arc::new(AtomicBool::new(false));
    let tid = Arc::new(AtomicU32::new(0));
    let (s, t) = (Arc::clone(&stop), Arc::clone(&tid));
    let spinner = std::thread::spawn(move || {
        let _ = sys::set_affinity(sys::gettid(), &[on]);
        t.store(sys::gettid() as u32, Ordering::Release);
        while !s.load(Ordering::Relaxed) {
            exec::burn(10_000);
        }
    });
    while tid.load(Ordering::Acquire) == 0 {
        std::thread::yield_now();
    }
    let result = f(tid.load(Ordering::Acquire));
    stop.store(true, Ordering::Relaxed);
    let _ = spinner.join();
    result
}

/// Measure every figure on the first CPU this process may use.
pub fn run() -> Result<(usize, Vec<Figure>), String> {
    let allowed = sys::allowed_cpus().map_err(|e| format!("sched_getaffinity: {e}"))?;
    let cpu = *allowed.first().ok_or("no CPU to run on")?;
    sys::set_affinity(sys::gettid(), &[cpu]).map_err(|e| format!("sched_setaffinity([{cpu}]): {e}"))?;
    exec::burn(1_000); // fault in the code
    let mut out = Vec::new();
    out.extend(pipe_costs()?);
    out.extend(unix_costs()?);
    let switch = switch_cost(cpu)?;
    let switch_ns = switch.median_ns;
    out.push(switch);
    out.extend(fork_exit_costs(cpu)?);
    let default_idle_exit = schedlab_core::kernel::Costs::default().idle_exit_ns;
    let (delay, exit) = timer_costs(switch_ns, default_idle_exit)?;
    out.push(delay);
    let idle_exit = exit.as_ref().map_or(default_idle_exit, |(f, _)| f.median_ns);
    if let Some((exit, window)) = exit {
        out.push(exit);
        out.push(window);
    }
    if let Some(&other) = allowed.get(1) {
        out.push(remote_wakeup(cpu, other, idle_exit, switch_ns)?);
        out.push(timer_spread(other)?);
    }
    out.extend(proc_read_costs(cpu, allowed.get(1).copied())?);
    if let Some(dir) = crate::write::scratch_for_calibration() {
        out.push(write_page_cost(&dir)?);
    }
    Ok((cpu, out))
}

/// `write_page`: the CPU time of a buffered write(2) per 4 KiB page into
/// new page-cache pages of a file in the scratch directory (1 MiB writes,
/// 256 MiB a round, far below any default dirty limit: no throttle pause,
/// and the thread's CPU clock leaves sleeps out). The file is deleted after
/// each round, outside the clock.
fn write_page_cost(dir: &std::path::Path) -> Result<Figure, String> {
    const ROUND: u64 = 256 << 20;
    const BS: u64 = 1 << 20;
    let mut v = Vec::new();
    for round in 0..ROUNDS.min(3) {
        let mut w = crate::write::Writer::new(dir, format!("calibrate-{}-{round}", std::process::id()));
        let t = sys::thread_cpu();
        for _ in 0..ROUND / BS {
            w.write(BS).map_err(|e| format!("{}: write: {e}", dir.display()))?;
        }
        v.push((sys::thread_cpu() - t) / (ROUND / schedlab_core::mm::PAGE_SIZE));
        drop(w);
    }
    Ok(figure("write_page", v))
}
