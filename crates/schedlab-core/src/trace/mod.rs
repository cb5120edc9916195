//! The tracepoint-named event stream (sched_switch, sched_wakeup,
//! sched_wakeup_new, sched_migrate_task, sched_process_exit, and the
//! hrtimer_start of sleep timers). Every event is
//! folded into a running FNV-1a hash (the determinism fingerprint) and,
//! when asked, written as ftrace text (FORMATS.md 2.3).

use std::fmt::Write;

use crate::sched::task::Task;

#[derive(Debug, Default)]
pub struct Trace {
    pub hash: u64,
    pub count: u64,
    pub text: Option<String>,
}

/// Fold one word into the fingerprint: a multiply-xorshift mix per word
/// (stable across platforms; not cryptographic, only a change detector).
#[inline]
fn fnv(h: &mut u64, v: u64) {
    *h = (*h ^ v).wrapping_mul(0x0100_0000_01b3);
    *h ^= *h >> 29;
}

fn ts(now: u64) -> String {
    format!("{}.{:06}", now / 1_000_000_000, (now % 1_000_000_000) / 1000)
}

impl Trace {
    pub fn new(text: bool) -> Self {
        Trace {
            hash: 0xcbf2_9ce4_8422_2325,
            count: 0,
            text: text.then(|| String::from("# tracer: nop\n#\n#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n#              | |         |   |||||     |         |\n")),
        }
    }

    fn rec(&mut self, kind: u64, now: u64, cpu: usize, a: u64, b: u64) {
        self.count += 1;
        let h = &mut self.hash;
        fnv(h, kind);
        fnv(h, now);
        fnv(h, cpu as u64);
        fnv(h, a);
        fnv(h, b);
    }

    fn line(&mut self, now: u64, cpu: usize, who: Option<&Task>, body: std::fmt::Arguments) {
        if let Some(t) = self.text.as_mut() {
            let (comm, pid) = who.map(|w| (w.comm.as_str(), w.pid)).unwrap_or(("<idle>", 0));
            let _ = writeln!(t, "{:>16}-{:<7} [{:03}] d..2. {:>12}: {}", comm, pid, cpu, ts(now), body);
        }
    }

    pub fn sched_switch(&mut self, now: u64, cpu: usize, prev: Option<&Task>, next: Option<&Task>) {
        self.rec(1, now, cpu, prev.map_or(0, |t| t.pid as u64), next.map_or(0, |t| t.pid as u64));
        if self.text.is_some() {
            let (pc, pp, pprio, pstate) = match prev {
                Some(t) => (
                    t.comm.clone(),
                    t.pid,
                    t.prio(),
                    if t.state == crate::sched::task::TaskState::Runnable {
                        "R"
                    } else if t.state == crate::sched::task::TaskState::Dead {
                        "X"
                    } else {
                        "S"
                    },
                ),
                None => (format!("swapper/{cpu}"), 0, 120, "R"),
            };
            let (nc, np, nprio) = match next {
                Some(t) => (t.comm.clone(), t.pid, t.prio()),
                None => (format!("swapper/{cpu}"), 0, 120),
            };
            self.line(now, cpu, prev, format_args!("sched_switch: prev_comm={pc} prev_pid={pp} prev_prio={pprio} prev_state={pstate} ==> next_comm={nc} next_pid={np} next_prio={nprio}"));
        }
    }

    /// hrtimer_start of a task's sleep timer (the kernel's hrtimer event;
    /// the timer address is a stand-in derived from the pid). `expires` is
    /// the hard expiry, `softexpires` the one asked for.
    pub fn hrtimer_start(&mut self, now: u64, cpu: usize, p: &Task, softexpires: u64, expires: u64) {
        self.rec(6, now, cpu, p.pid as u64, softexpires);
        self.line(
            now,
            cpu,
            Some(p),
            format_args!(
                "hrtimer_start: hrtimer={:016x} function=hrtimer_wakeup expires={} softexpires={} mode=ABS",
                0xffff_8880_0000_0000u64 | (p.pid as u64) << 12,
                expires,
                softexpires
            ),
        );
    }

    pub fn sched_wakeup(&mut self, now: u64, cpu: usize, p: &Task) {
        self.rec(2, now, cpu, p.pid as u64, 0);
        self.line(
            now,
            cpu,
            None,
            format_args!("sched_wakeup: comm={} pid={} prio={} target_cpu={:03}", p.comm, p.pid, p.prio(), cpu),
        );
    }

    pub fn sched_wakeup_new(&mut self, now: u64, cpu: usize, p: &Task) {
        self.rec(3, now, cpu, p.pid as u64, 0);
        self.line(
            now,
            cpu,
            None,
            format_args!("sched_wakeup_new: comm={} pid={} prio={} target_cpu={:03}", p.comm, p.pid, p.prio(), cpu),
        );
    }

    pub fn sched_migrate_task(&mut self, now: u64, p: &Task, orig: usize, dest: usize) {
        self.rec(4, now, orig, p.pid as u64, dest as u64);
        self.line(
            now,
            orig,
            None,
            format_args!(
                "sched_migrate_task: comm={} pid={} prio={} orig_cpu={} dest_cpu={}",
                p.comm,
                p.pid,
                p.prio(),
                orig,
                dest
            ),
        );
    }

    pub fn sched_process_exit(&mut self, now: u64, cpu: usize, p: &Task) {
        self.rec(5, now, cpu, p.pid as u64, 0);
        self.line(
            now,
            cpu,
            Some(p),
            format_args!("sched_process_exit: comm={} pid={} prio={}", p.comm, p.pid, p.prio()),
        );
    }
}
