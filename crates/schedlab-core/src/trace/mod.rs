//! The tracepoint-named event stream (sched_switch, sched_wakeup,
//! sched_wakeup_new, sched_migrate_task, sched_process_exit, and the
//! hrtimer_start of sleep timers). Every event is
//! folded into a running FNV-1a hash (the determinism fingerprint) and,
//! when asked, written as ftrace text (docs/FORMATS.md §2.3).

pub mod atomic;
pub mod perfetto;
pub mod sink;
pub mod textread;
pub mod tracedat;

use std::io::Write;

use perfetto::{put_int, put_str, Perfetto};
use sink::Sink;
use tracedat::{Payload, TraceDat};

#[derive(Debug, Default)]
pub struct Trace {
    pub hash: u64,
    pub count: u64,
    /// The ftrace text, when asked (`--trace`).
    pub text: Option<Sink>,
    /// The Perfetto protobuf stream, when asked (`--perfetto`).
    pub pf: Option<Perfetto>,
    /// The trace-cmd trace.dat, when asked (`--trace FILE.dat`).
    pub dat: Option<TraceDat>,
    /// The idle task's prio as sched_switch prints it: init_task's,
    /// DEFAULT_PRIO (the simulation sets it from prio.rs).
    pub swapper_prio: i32,
}

impl Trace {
    /// A trace is being written (text, trace.dat or Perfetto).
    pub fn on(&self) -> bool {
        self.text.is_some() || self.pf.is_some() || self.dat.is_some()
    }
}

/// One ftrace text line, when the text is asked for: `text_line!(self,
/// now, cpu, who, "fmt", args..)`. A macro, so that a run without `--trace`
/// pays one test and evaluates none of the line's arguments (the comm, pid
/// and prio are calls through `dyn Traced`).
macro_rules! text_line {
    ($tr:ident, $now:expr, $cpu:expr, $who:expr, $($fmt:tt)+) => {
        if $tr.text.is_some() {
            $tr.write_line($now, $cpu, $who, "d..2.", format_args!($($fmt)+));
        }
    };
}

/// Fold one word into the fingerprint: a multiply-xorshift mix per word
/// (stable across platforms; not cryptographic, only a change detector).
#[inline]
fn fnv(h: &mut u64, v: u64) {
    *h = (*h ^ v).wrapping_mul(0x0100_0000_01b3);
    *h ^= *h >> 29;
}

/// What a tracepoint records of a task (TP_fast_assign's comm, pid and
/// prio, and the state sched_switch prints for it as prev): the task's room
/// (`sched/task.rs`) says, so the tracepoints need nothing of it.
pub trait Traced: std::fmt::Debug {
    fn comm(&self) -> &str;
    fn pid(&self) -> u32;
    /// The kernel prio (0..139: RT below 100).
    fn prio(&self) -> i32;
    /// sched_switch's prev_state: "R" still runnable, "X" dead, "S" asleep.
    fn switch_state(&self) -> &'static str;
}

/// Who runs a traced event's code on its CPU, as the comm-pid column and
/// sched_switch's prev/next show it.
#[derive(Debug, Clone, Copy)]
pub enum Ctx<'a> {
    /// The idle task (`<idle>-0`, `swapper/N`).
    Idle,
    Task(&'a dyn Traced),
    /// The per-CPU stopper, `migration/N`, while it runs an active balance.
    Stopper,
}

/// The pid shown for migration/N. Deviation: a stand-in (the kernel's is
/// whatever kthreadd handed out at boot); schedlab's task pids start above
/// every CPU's (Sim::new).
pub fn stopper_pid(cpu: usize) -> u32 {
    2 + cpu as u32
}

impl Ctx<'_> {
    /// (comm, pid, prio) as sched_switch shows this side on `cpu`; the
    /// idle task shows init_task's prio, `swapper_prio`.
    fn switch_side(self, cpu: usize, swapper_prio: i32) -> (String, u32, i32) {
        match self {
            Ctx::Idle => (format!("swapper/{cpu}"), 0, swapper_prio),
            Ctx::Task(t) => (t.comm().to_string(), t.pid(), t.prio()),
            Ctx::Stopper => (format!("migration/{cpu}"), stopper_pid(cpu), 0),
        }
    }

    fn pid(self, cpu: usize) -> u32 {
        match self {
            Ctx::Idle => 0,
            Ctx::Task(t) => t.pid(),
            Ctx::Stopper => stopper_pid(cpu),
        }
    }
}

/// A wakeup-style event message: comm, pid, prio, success = 1, target_cpu.
fn wakeup_fields(p: &dyn Traced, target_cpu: usize) -> Vec<u8> {
    let mut f = Vec::with_capacity(32);
    put_str(&mut f, 1, p.comm());
    put_int(&mut f, 2, p.pid() as i64);
    put_int(&mut f, 3, p.prio() as i64);
    put_int(&mut f, 4, 1);
    put_int(&mut f, 5, target_cpu as i64);
    f
}

/// The timestamp column: microseconds rounded to the nearest, as the
/// kernel's trace_print_time() (ns2usecs adds 500 ns before dividing) and
/// trace-cmd print them. Until 2026-11-24 this truncated, and one line in
/// two disagreed with `trace-cmd report` of the same events by 1 us.
fn ts(now: u64) -> String {
    let us = (now + 500) / 1000;
    format!("{}.{:06}", us / 1_000_000, us % 1_000_000)
}

impl Trace {
    /// A trace that only hashes; `text`: also the ftrace text, into that sink.
    pub fn new(text: Option<Sink>) -> Self {
        let text = text.map(|mut t| {
            t.buf.extend_from_slice(b"# tracer: nop\n#\n#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n#              | |         |   |||||     |         |\n");
            t
        });
        Trace { hash: 0xcbf2_9ce4_8422_2325, count: 0, text, pf: None, dat: None, swapper_prio: 0 }
    }

    /// Also write a trace-cmd trace.dat (trace/tracedat.rs).
    pub fn with_dat(mut self, dat: TraceDat) -> Self {
        self.dat = Some(dat);
        self
    }

    /// A trace.dat record on `cpu` in context `who` (its pid is common_pid;
    /// the saved cmdlines learn its comm).
    fn dat(&mut self, now: u64, cpu: usize, who: Ctx, id: u16, fill: impl FnOnce(Payload) -> Payload) {
        let Some(d) = self.dat.as_mut() else { return };
        match who {
            Ctx::Task(t) => d.comm(t.pid(), t.comm()),
            Ctx::Stopper => d.comm(stopper_pid(cpu), &format!("migration/{cpu}")),
            Ctx::Idle => {}
        }
        d.record(cpu, now, fill(Payload::new(id, who.pid(cpu))));
    }

    /// Also write a Perfetto protobuf trace for kernel `release`;
    /// `state_4_14`: sched_switch.prev_state in the 4.14+ bit layout.
    pub fn with_perfetto(mut self, release: &str, state_4_14: bool, out: Sink) -> Self {
        self.pf = Some(Perfetto::new(release, state_4_14, out));
        self
    }

    #[inline(always)]
    fn rec(&mut self, kind: u64, now: u64, cpu: usize, a: u64, b: u64) {
        self.count += 1;
        let h = &mut self.hash;
        fnv(h, kind);
        fnv(h, now);
        fnv(h, cpu as u64);
        fnv(h, a);
        fnv(h, b);
    }

    /// `flags`: the five-character column (irqs-off, need-resched,
    /// hardirq/softirq, preempt depth, migrate-disable).
    #[inline(never)]
    fn write_line(&mut self, now: u64, cpu: usize, who: Ctx, flags: &str, body: std::fmt::Arguments) {
        if let Some(t) = self.text.as_mut() {
            let stopper;
            let (comm, pid) = match who {
                Ctx::Idle => ("<idle>", 0),
                Ctx::Task(w) => (w.comm(), w.pid()),
                Ctx::Stopper => {
                    stopper = format!("migration/{cpu}");
                    (stopper.as_str(), stopper_pid(cpu))
                }
            };
            let _ = writeln!(t.buf, "{:>16}-{:<7} [{:03}] {flags} {:>12}: {}", comm, pid, cpu, ts(now), body);
            t.spill();
        }
    }

    /// sched_switch. The idle task shows as swapper/N (prio 120), the
    /// stopper as migration/N (prio 0, SCHED_FIFO 99 as the kernel reports
    /// it); the stopper and the idle task are always "R" as prev except
    /// that the stopper sleeps when done.
    ///
    /// Inline up to the digest: the writers are out of line
    /// (`sched_switch_write`), and a run that writes no trace pays no call.
    #[inline(always)]
    pub fn sched_switch(&mut self, now: u64, cpu: usize, prev: Ctx, next: Ctx) {
        self.rec(1, now, cpu, prev.pid(cpu) as u64, next.pid(cpu) as u64);
        if self.writes_events() {
            self.sched_switch_write(now, cpu, prev, next);
        }
    }

    #[inline(never)]
    fn sched_switch_write(&mut self, now: u64, cpu: usize, prev: Ctx, next: Ctx) {
        let ((pc, pp, pprio), (nc, np, nprio)) =
            (prev.switch_side(cpu, self.swapper_prio), next.switch_side(cpu, self.swapper_prio));
        let pstate = match prev {
            Ctx::Task(t) => t.switch_state(),
            Ctx::Stopper => "S",
            Ctx::Idle => "R",
        };
        if let Some(pf) = self.pf.as_mut() {
            let mut f = Vec::with_capacity(64);
            put_str(&mut f, 1, &pc);
            put_int(&mut f, 2, pp as i64);
            put_int(&mut f, 3, pprio as i64);
            put_int(&mut f, 4, pf.prev_state(pstate));
            put_str(&mut f, 5, &nc);
            put_int(&mut f, 6, np as i64);
            put_int(&mut f, 7, nprio as i64);
            pf.event(cpu, now, pp, perfetto::SCHED_SWITCH, &f);
        }
        if let (Some(d), Ctx::Task(t)) = (self.dat.as_mut(), next) {
            d.comm(t.pid(), t.comm());
        }
        let state = match pstate {
            "S" => tracedat::STATE_S,
            "X" => tracedat::STATE_X,
            _ => 0,
        };
        self.dat(now, cpu, prev, tracedat::SCHED_SWITCH, |p| {
            p.comm(&pc).i32(pp as i64).i32(pprio as i64).u64(state).comm(&nc).i32(np as i64).i32(nprio as i64)
        });
        text_line!(
            self,
            now,
            cpu,
            prev,
            "sched_switch: prev_comm={pc} prev_pid={pp} prev_prio={pprio} prev_state={pstate} ==> next_comm={nc} next_pid={np} next_prio={nprio}",
        );
    }

    /// hrtimer_start of a task's sleep timer (the kernel's hrtimer event;
    /// the timer address is a stand-in derived from the pid). `expires` is
    /// the hard expiry, `softexpires` the one asked for.
    #[inline(always)]
    pub fn hrtimer_start(&mut self, now: u64, cpu: usize, p: &dyn Traced, softexpires: u64, expires: u64) {
        self.rec(6, now, cpu, p.pid() as u64, softexpires);
        if self.writes_events() {
            self.hrtimer_start_write(now, cpu, p, softexpires, expires);
        }
    }

    #[inline(never)]
    fn hrtimer_start_write(&mut self, now: u64, cpu: usize, p: &dyn Traced, softexpires: u64, expires: u64) {
        self.dat(now, cpu, Ctx::Task(p), tracedat::HRTIMER_START, |f| {
            f.u64(0xffff_8880_0000_0000u64 | (p.pid() as u64) << 12)
                .u64(tracedat::HRTIMER_WAKEUP_ADDR)
                .u64(expires)
                .u64(softexpires)
                .i32(0)
        });
        text_line!(
            self,
            now,
            cpu,
            Ctx::Task(p),
            "hrtimer_start: hrtimer={:016x} function=hrtimer_wakeup expires={} softexpires={} mode=ABS",
            0xffff_8880_0000_0000u64 | (p.pid() as u64) << 12,
            expires,
            softexpires,
        );
    }

    /// sched_wakeup, on the target CPU.
    #[inline(always)]
    pub fn sched_wakeup(&mut self, now: u64, cpu: usize, p: &dyn Traced) {
        self.rec(2, now, cpu, p.pid() as u64, 0);
        if self.writes_events() {
            self.sched_wakeup_write(now, cpu, p);
        }
    }

    #[inline(never)]
    fn sched_wakeup_write(&mut self, now: u64, cpu: usize, p: &dyn Traced) {
        if let Some(pf) = self.pf.as_mut() {
            pf.event(cpu, now, 0, perfetto::SCHED_WAKEUP, &wakeup_fields(p, cpu));
        }
        self.dat(now, cpu, Ctx::Idle, tracedat::SCHED_WAKEUP, |f| {
            f.comm(p.comm()).i32(p.pid() as i64).i32(p.prio() as i64).i32(cpu as i64)
        });
        text_line!(
            self,
            now,
            cpu,
            Ctx::Idle,
            "sched_wakeup: comm={} pid={} prio={} target_cpu={:03}",
            p.comm(),
            p.pid(),
            p.prio(),
            cpu,
        );
    }

    /// Whether a text, trace.dat or Perfetto trace is being written (the
    /// events that only those carry check it before building their arguments).
    #[inline]
    pub fn writes_events(&self) -> bool {
        self.text.is_some() || self.dat.is_some() || self.pf.is_some()
    }

    /// sched_waking: try_to_wake_up()'s first tracepoint, in the waker's
    /// context on its CPU (`irq`: from an interrupt or a timer, the flags
    /// column's `h`), naming the CPU the task last ran on (task_cpu()).
    /// Written to the text and trace.dat only, and not in the run's trace
    /// digest (sched_wakeup stands for the wakeup there, so the reports of
    /// runs before it stay the same).
    ///
    /// The Perfetto stream has it too, with the context's pid and the
    /// common_flags an interrupt's wakeup sets (TRACE_FLAG_HARDIRQ): the
    /// task that woke another is the one Perfetto's thread states name.
    /// (Until 2026-11-28 Perfetto's sched_waking sat beside sched_wakeup on
    /// the target CPU, in no task's context.)
    ///
    /// Deviation: trace.dat's records carry no flags, so an interrupt's
    /// wakeup shows the interrupted task's context only.
    pub fn sched_waking(&mut self, now: u64, cpu: usize, who: Ctx, irq: bool, p: &dyn Traced, task_cpu: usize) {
        if let Some(pf) = self.pf.as_mut() {
            let pid = match who {
                Ctx::Idle => 0,
                Ctx::Task(t) => t.pid(),
                Ctx::Stopper => stopper_pid(cpu),
            };
            // TRACE_FLAG_IRQS_OFF (the text's `d`), with TRACE_FLAG_HARDIRQ from an interrupt.
            let flags = if irq { 0x09 } else { 0x01 };
            pf.event_flags(cpu, now, pid, flags, perfetto::SCHED_WAKING, &wakeup_fields(p, task_cpu));
        }
        self.dat(now, cpu, who, tracedat::SCHED_WAKING, |f| {
            f.comm(p.comm()).i32(p.pid() as i64).i32(p.prio() as i64).i32(task_cpu as i64)
        });
        if self.text.is_some() {
            let flags = if irq { "d.h2." } else { "d..2." };
            self.write_line(
                now,
                cpu,
                who,
                flags,
                format_args!(
                    "sched_waking: comm={} pid={} prio={} target_cpu={:03}",
                    p.comm(),
                    p.pid(),
                    p.prio(),
                    task_cpu
                ),
            );
        }
    }

    pub fn sched_wakeup_new(&mut self, now: u64, cpu: usize, p: &dyn Traced) {
        self.rec(3, now, cpu, p.pid() as u64, 0);
        if let Some(pf) = self.pf.as_mut() {
            pf.event(cpu, now, 0, perfetto::SCHED_WAKEUP_NEW, &wakeup_fields(p, cpu));
        }
        self.dat(now, cpu, Ctx::Idle, tracedat::SCHED_WAKEUP_NEW, |f| {
            f.comm(p.comm()).i32(p.pid() as i64).i32(p.prio() as i64).i32(cpu as i64)
        });
        text_line!(
            self,
            now,
            cpu,
            Ctx::Idle,
            "sched_wakeup_new: comm={} pid={} prio={} target_cpu={:03}",
            p.comm(),
            p.pid(),
            p.prio(),
            cpu,
        );
    }

    /// sched_migrate_task, written as the CPU that runs set_task_cpu() sees
    /// it: `exec_cpu` in context `who` (the waker, the pulling CPU's current
    /// or idle task, the stopper of an active balance, the pushing CPU).
    pub fn sched_migrate_task(
        &mut self,
        now: u64,
        exec_cpu: usize,
        who: Ctx,
        p: &dyn Traced,
        orig: usize,
        dest: usize,
    ) {
        self.rec(4, now, orig, p.pid() as u64, dest as u64);
        if let Some(pf) = self.pf.as_mut() {
            let mut f = Vec::with_capacity(32);
            put_str(&mut f, 1, p.comm());
            put_int(&mut f, 2, p.pid() as i64);
            put_int(&mut f, 3, p.prio() as i64);
            put_int(&mut f, 4, orig as i64);
            put_int(&mut f, 5, dest as i64);
            pf.event(exec_cpu, now, who.pid(exec_cpu), perfetto::SCHED_MIGRATE_TASK, &f);
        }
        self.dat(now, exec_cpu, who, tracedat::SCHED_MIGRATE_TASK, |f| {
            f.comm(p.comm()).i32(p.pid() as i64).i32(p.prio() as i64).i32(orig as i64).i32(dest as i64)
        });
        text_line!(
            self,
            now,
            exec_cpu,
            who,
            "sched_migrate_task: comm={} pid={} prio={} orig_cpu={} dest_cpu={}",
            p.comm(),
            p.pid(),
            p.prio(),
            orig,
            dest,
        );
    }

    pub fn sched_process_exit(&mut self, now: u64, cpu: usize, p: &dyn Traced) {
        self.rec(5, now, cpu, p.pid() as u64, 0);
        if let Some(pf) = self.pf.as_mut() {
            let mut f = Vec::with_capacity(32);
            put_str(&mut f, 1, p.comm());
            put_int(&mut f, 2, p.pid() as i64);
            put_int(&mut f, 3, p.pid() as i64);
            put_int(&mut f, 4, p.prio() as i64);
            pf.event(cpu, now, p.pid(), perfetto::SCHED_PROCESS_EXIT, &f);
        }
        self.dat(now, cpu, Ctx::Task(p), tracedat::SCHED_PROCESS_EXIT, |f| {
            f.comm(p.comm()).i32(p.pid() as i64).i32(p.prio() as i64)
        });
        text_line!(
            self,
            now,
            cpu,
            Ctx::Task(p),
            "sched_process_exit: comm={} pid={} prio={}",
            p.comm(),
            p.pid(),
            p.prio(),
        );
    }

    /// cpu_frequency (include/trace/events/power.h): `cpu` now runs at
    /// `khz`, in the context of what runs on it (`who`).
    pub fn cpu_frequency(&mut self, now: u64, cpu: usize, who: Ctx, khz: u32) {
        self.rec(20, now, cpu, cpu as u64, khz as u64);
        let pid = who.pid(cpu);
        if let Some(pf) = self.pf.as_mut() {
            let mut f = Vec::with_capacity(12);
            put_int(&mut f, 1, khz as i64);
            put_int(&mut f, 2, cpu as i64);
            pf.event(cpu, now, pid, perfetto::CPU_FREQUENCY, &f);
        }
        self.dat(now, cpu, who, tracedat::CPU_FREQUENCY, |f| f.i32(khz as i64).i32(cpu as i64));
        text_line!(self, now, cpu, who, "cpu_frequency: state={khz} cpu_id={cpu}");
    }

    /// power:cpu_idle (include/trace/events/power.h): the idle CPU `cpu`
    /// enters cpuidle state `state` (its index in the driver's table), or
    /// leaves it (PWR_EVENT_EXIT, u32 -1). Not in the run's trace digest:
    /// the model makes its idle choices when an idle period is traced or
    /// ends, so the digest stays the same with and without a trace.
    pub fn cpu_idle(&mut self, now: u64, cpu: usize, state: u32) {
        if let Some(pf) = self.pf.as_mut() {
            let mut f = Vec::with_capacity(12);
            put_int(&mut f, 1, state as i64);
            put_int(&mut f, 2, cpu as i64);
            pf.event(cpu, now, 0, perfetto::CPU_IDLE, &f);
        }
        self.dat(now, cpu, Ctx::Idle, tracedat::CPU_IDLE, |f| f.i32(state as i64).i32(cpu as i64));
        text_line!(self, now, cpu, Ctx::Idle, "cpu_idle: state={state} cpu_id={cpu}");
    }

    /// An mm_vmscan tracepoint (include/trace/events/vmscan.h) in the
    /// context of task `p` on `cpu`: `name` and its printed fields.
    ///
    /// Deviation: the text has 4.16's fields for every version (later
    /// kernels print gfp_flags where 4.16 prints may_writepage and
    /// classzone_idx). The Perfetto stream has the four events its
    /// FtraceEvent knows (not mm_vmscan_wakeup_kswapd), without gfp_flags.
    pub fn mm_vmscan(&mut self, now: u64, cpu: usize, p: &dyn Traced, kind: MmVmscan, a: u64) {
        self.rec(10 + kind as u64, now, cpu, p.pid() as u64, a);
        // ZONE_NORMAL's index with DMA and DMA32 below it.
        let zid = 2;
        if let Some(pf) = self.pf.as_mut() {
            let mut f = Vec::with_capacity(16);
            let id = match kind {
                MmVmscan::KswapdSleep => {
                    put_int(&mut f, 1, a as i64);
                    Some(perfetto::MM_VMSCAN_KSWAPD_SLEEP)
                }
                MmVmscan::KswapdWake => {
                    put_int(&mut f, 1, a as i64);
                    put_int(&mut f, 2, 0);
                    put_int(&mut f, 3, zid);
                    Some(perfetto::MM_VMSCAN_KSWAPD_WAKE)
                }
                MmVmscan::DirectReclaimBegin => {
                    put_int(&mut f, 1, 0);
                    put_int(&mut f, 2, 1);
                    Some(perfetto::MM_VMSCAN_DIRECT_RECLAIM_BEGIN)
                }
                MmVmscan::DirectReclaimEnd => {
                    put_int(&mut f, 1, a as i64);
                    Some(perfetto::MM_VMSCAN_DIRECT_RECLAIM_END)
                }
                MmVmscan::WakeupKswapd => None,
            };
            if let Some(id) = id {
                pf.event(cpu, now, p.pid(), id, &f);
            }
        }
        match kind {
            MmVmscan::KswapdSleep => {
                self.dat(now, cpu, Ctx::Task(p), tracedat::MM_VMSCAN_KSWAPD_SLEEP, |f| f.i32(a as i64));
            }
            MmVmscan::KswapdWake | MmVmscan::WakeupKswapd => {
                let id = if kind == MmVmscan::KswapdWake {
                    tracedat::MM_VMSCAN_KSWAPD_WAKE
                } else {
                    tracedat::MM_VMSCAN_WAKEUP_KSWAPD
                };
                self.dat(now, cpu, Ctx::Task(p), id, |f| f.i32(a as i64).i32(zid).i32(0));
            }
            MmVmscan::DirectReclaimBegin => {
                self.dat(now, cpu, Ctx::Task(p), tracedat::MM_VMSCAN_DIRECT_RECLAIM_BEGIN, |f| {
                    f.i32(0).i32(1).i32(0x6200ca).i32(zid)
                });
            }
            MmVmscan::DirectReclaimEnd => {
                self.dat(now, cpu, Ctx::Task(p), tracedat::MM_VMSCAN_DIRECT_RECLAIM_END, |f| f.u64(a));
            }
        }
        if self.text.is_none() {
            return;
        }
        match kind {
            MmVmscan::KswapdSleep => text_line!(self, now, cpu, Ctx::Task(p), "mm_vmscan_kswapd_sleep: nid={a}"),
            MmVmscan::KswapdWake => {
                text_line!(self, now, cpu, Ctx::Task(p), "mm_vmscan_kswapd_wake: nid={a} zid={zid} order=0")
            }
            MmVmscan::WakeupKswapd => {
                text_line!(self, now, cpu, Ctx::Task(p), "mm_vmscan_wakeup_kswapd: nid={a} zid={zid} order=0")
            }
            MmVmscan::DirectReclaimBegin => text_line!(
                self,
                now,
                cpu,
                Ctx::Task(p),
                "mm_vmscan_direct_reclaim_begin: order=0 may_writepage=1 gfp_flags=GFP_HIGHUSER_MOVABLE classzone_idx={zid}",
            ),
            MmVmscan::DirectReclaimEnd => {
                text_line!(self, now, cpu, Ctx::Task(p), "mm_vmscan_direct_reclaim_end: nr_reclaimed={a}")
            }
        }
    }
}

/// The mm_vmscan tracepoints schedlab emits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MmVmscan {
    KswapdSleep,
    KswapdWake,
    WakeupKswapd,
    DirectReclaimBegin,
    DirectReclaimEnd,
}
