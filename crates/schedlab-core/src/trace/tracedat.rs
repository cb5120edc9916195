//! trace.dat: the trace-cmd binary format, version 6 (trace-cmd.dat.v6(5);
//! docs/FORMATS.md §2.4), for `trace-cmd report` and KernelShark.
//!
//! A file is: the magic and version, the ring buffer's page and event
//! headers (as events/header_page and header_event print them), the format
//! of every event it holds (as events/<system>/<event>/format), kallsyms,
//! the saved cmdlines, the CPU count, and per CPU its ring-buffer pages
//! (`flyrecord`). A page is a u64 timestamp, a u64 commit (bytes used) and
//! records: a u32 header (type_len in the low 5 bits, the time delta from
//! the previous record in the high 27) and type_len × 4 bytes of payload;
//! a delta that does not fit in 27 bits goes first in a time-extend record
//! (type_len 30).
//!
//! Memory stays bounded: each CPU keeps one page being filled; full pages
//! go to a spill file beside the output at once, and `finish` copies them
//! in CPU order after the headers, so a long trace costs disk, not RAM.
//!
//! Deviation: one set of event layouts for every modelled version
//! (sched_migrate_task with a fixed comm[16], as before 6.2; the mm_vmscan
//! events with 4.16's fields, as the text has them); the IDs are
//! schedlab's own. The print formats print exactly what the ftrace text
//! (trace/mod.rs) prints.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::atomic::{temporary_beside, AtomicFile};

/// The ring buffer's page size.
pub const PAGE_SIZE: usize = 4096;
/// A page's header: the timestamp and the commit.
const PAGE_HEADER: usize = 16;
const TYPE_TIME_EXTEND: u32 = 30;
/// Deltas of up to 27 bits fit in a record's header.
const DELTA_BITS: u32 = 27;
/// The largest payload a record's type_len can give (28 × 4 bytes).
const MAX_PAYLOAD: usize = 112;
/// common_flags: TRACE_FLAG_IRQS_OFF, and the preempt count of 2: the
/// text's `d..2.` column.
const COMMON_FLAGS: u8 = 0x01;
const COMMON_PREEMPT: u8 = 2;
/// Where kallsyms puts hrtimer_wakeup (the one function an event names).
pub const HRTIMER_WAKEUP_ADDR: u64 = 0xffff_ffff_8110_0000;

/// The events a trace.dat holds: (system, name, id, fields, print fmt).
/// Fields after the common ones: (C declaration, offset, size, signed).
type Field = (&'static str, usize, usize, bool);
pub struct EventFormat {
    pub system: &'static str,
    pub name: &'static str,
    pub id: u16,
    pub fields: &'static [Field],
    pub print: &'static str,
}

pub const SCHED_SWITCH: u16 = 301;
pub const SCHED_WAKEUP: u16 = 302;
pub const SCHED_WAKEUP_NEW: u16 = 303;
pub const SCHED_MIGRATE_TASK: u16 = 304;
pub const SCHED_PROCESS_EXIT: u16 = 305;
pub const HRTIMER_START: u16 = 306;
pub const MM_VMSCAN_KSWAPD_SLEEP: u16 = 307;
pub const MM_VMSCAN_KSWAPD_WAKE: u16 = 308;
pub const MM_VMSCAN_WAKEUP_KSWAPD: u16 = 309;
pub const MM_VMSCAN_DIRECT_RECLAIM_BEGIN: u16 = 310;
pub const MM_VMSCAN_DIRECT_RECLAIM_END: u16 = 311;
pub const CPU_FREQUENCY: u16 = 312;
pub const CPU_IDLE: u16 = 313;
pub const SCHED_WAKING: u16 = 314;

/// The task states sched_switch's prev_state holds (4.14+ TASK_REPORT
/// bits) and the preempted bit (TASK_REPORT_MAX).
pub const STATE_S: u64 = 0x01;
pub const STATE_X: u64 = 0x10;

const WAKEUP_FIELDS: &[Field] = &[
    ("char comm[16]", 8, 16, false),
    ("pid_t pid", 24, 4, true),
    ("int prio", 28, 4, true),
    ("int target_cpu", 32, 4, true),
];
const WAKEUP_PRINT: &str =
    "\"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, REC->pid, REC->prio, REC->target_cpu";
const KSWAPD_WAKE_FIELDS: &[Field] = &[("int nid", 8, 4, true), ("int zid", 12, 4, true), ("int order", 16, 4, true)];
const KSWAPD_WAKE_PRINT: &str = "\"nid=%d zid=%d order=%d\", REC->nid, REC->zid, REC->order";

pub const FORMATS: &[EventFormat] = &[
    EventFormat {
        system: "sched",
        name: "sched_switch",
        id: SCHED_SWITCH,
        fields: &[
            ("char prev_comm[16]", 8, 16, false),
            ("pid_t prev_pid", 24, 4, true),
            ("int prev_prio", 28, 4, true),
            ("long prev_state", 32, 8, true),
            ("char next_comm[16]", 40, 16, false),
            ("pid_t next_pid", 56, 4, true),
            ("int next_prio", 60, 4, true),
        ],
        print: "\"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d\", \
                REC->prev_comm, REC->prev_pid, REC->prev_prio, (REC->prev_state & 0xff) ? __print_flags(REC->prev_state & 0xff, \"|\", \
                { 0x01, \"S\" }, { 0x02, \"D\" }, { 0x04, \"T\" }, { 0x08, \"t\" }, { 0x10, \"X\" }, { 0x20, \"Z\" }, { 0x40, \"P\" }, \
                { 0x80, \"I\" }) : \"R\", REC->prev_state & 0x100 ? \"+\" : \"\", REC->next_comm, REC->next_pid, REC->next_prio",
    },
    EventFormat { system: "sched", name: "sched_waking", id: SCHED_WAKING, fields: WAKEUP_FIELDS, print: WAKEUP_PRINT },
    EventFormat { system: "sched", name: "sched_wakeup", id: SCHED_WAKEUP, fields: WAKEUP_FIELDS, print: WAKEUP_PRINT },
    EventFormat {
        system: "sched",
        name: "sched_wakeup_new",
        id: SCHED_WAKEUP_NEW,
        fields: WAKEUP_FIELDS,
        print: WAKEUP_PRINT,
    },
    EventFormat {
        system: "sched",
        name: "sched_migrate_task",
        id: SCHED_MIGRATE_TASK,
        fields: &[
            ("char comm[16]", 8, 16, false),
            ("pid_t pid", 24, 4, true),
            ("int prio", 28, 4, true),
            ("int orig_cpu", 32, 4, true),
            ("int dest_cpu", 36, 4, true),
        ],
        print: "\"comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d\", REC->comm, REC->pid, REC->prio, REC->orig_cpu, REC->dest_cpu",
    },
    EventFormat {
        system: "sched",
        name: "sched_process_exit",
        id: SCHED_PROCESS_EXIT,
        fields: &[("char comm[16]", 8, 16, false), ("pid_t pid", 24, 4, true), ("int prio", 28, 4, true)],
        print: "\"comm=%s pid=%d prio=%d\", REC->comm, REC->pid, REC->prio",
    },
    EventFormat {
        system: "timer",
        name: "hrtimer_start",
        id: HRTIMER_START,
        fields: &[
            ("unsigned long hrtimer", 8, 8, false),
            ("void * function", 16, 8, false),
            ("s64 expires", 24, 8, true),
            ("s64 softexpires", 32, 8, true),
            ("enum hrtimer_mode mode", 40, 4, false),
        ],
        print: "\"hrtimer=%016lx function=%ps expires=%llu softexpires=%llu mode=%s\", REC->hrtimer, REC->function, \
                (unsigned long long) REC->expires, (unsigned long long) REC->softexpires, \
                __print_symbolic(REC->mode, { 0, \"ABS\" }, { 1, \"REL\" })",
    },
    EventFormat {
        system: "vmscan",
        name: "mm_vmscan_kswapd_sleep",
        id: MM_VMSCAN_KSWAPD_SLEEP,
        fields: &[("int nid", 8, 4, true)],
        print: "\"nid=%d\", REC->nid",
    },
    EventFormat {
        system: "vmscan",
        name: "mm_vmscan_kswapd_wake",
        id: MM_VMSCAN_KSWAPD_WAKE,
        fields: KSWAPD_WAKE_FIELDS,
        print: KSWAPD_WAKE_PRINT,
    },
    EventFormat {
        system: "vmscan",
        name: "mm_vmscan_wakeup_kswapd",
        id: MM_VMSCAN_WAKEUP_KSWAPD,
        fields: KSWAPD_WAKE_FIELDS,
        print: KSWAPD_WAKE_PRINT,
    },
    EventFormat {
        system: "vmscan",
        name: "mm_vmscan_direct_reclaim_begin",
        id: MM_VMSCAN_DIRECT_RECLAIM_BEGIN,
        fields: &[
            ("int order", 8, 4, true),
            ("int may_writepage", 12, 4, true),
            ("gfp_t gfp_flags", 16, 4, false),
            ("int classzone_idx", 20, 4, true),
        ],
        print: "\"order=%d may_writepage=%d gfp_flags=%s classzone_idx=%d\", REC->order, REC->may_writepage, \
                __print_symbolic(REC->gfp_flags, { 0x6200ca, \"GFP_HIGHUSER_MOVABLE\" }), REC->classzone_idx",
    },
    EventFormat {
        system: "vmscan",
        name: "mm_vmscan_direct_reclaim_end",
        id: MM_VMSCAN_DIRECT_RECLAIM_END,
        fields: &[("unsigned long nr_reclaimed", 8, 8, false)],
        print: "\"nr_reclaimed=%lu\", REC->nr_reclaimed",
    },
    EventFormat {
        system: "power",
        name: "cpu_frequency",
        id: CPU_FREQUENCY,
        fields: &[("u32 state", 8, 4, false), ("u32 cpu_id", 12, 4, false)],
        print: "\"state=%lu cpu_id=%lu\", (unsigned long)REC->state, (unsigned long)REC->cpu_id",
    },
    EventFormat {
        system: "power",
        name: "cpu_idle",
        id: CPU_IDLE,
        fields: &[("u32 state", 8, 4, false), ("u32 cpu_id", 12, 4, false)],
        print: "\"state=%lu cpu_id=%lu\", (unsigned long)REC->state, (unsigned long)REC->cpu_id",
    },
];

/// The events/<system>/<event>/format text of one event.
pub fn format_text(e: &EventFormat) -> String {
    let mut s = format!("name: {}\nID: {}\nformat:\n", e.name, e.id);
    for (decl, off, size, signed) in [
        ("unsigned short common_type", 0, 2, false),
        ("unsigned char common_flags", 2, 1, false),
        ("unsigned char common_preempt_count", 3, 1, false),
        ("int common_pid", 4, 4, true),
    ] {
        s += &format!("\tfield:{decl};\toffset:{off};\tsize:{size};\tsigned:{};\n", signed as u8);
    }
    s.push('\n');
    for (decl, off, size, signed) in e.fields {
        s += &format!("\tfield:{decl};\toffset:{off};\tsize:{size};\tsigned:{};\n", *signed as u8);
    }
    s += &format!("\nprint fmt: {}\n", e.print);
    s
}

const HEADER_PAGE: &str = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\
\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\
\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\
\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

const HEADER_EVENT: &str = "# compressed entry header\n\
\ttype_len    :    5 bits\n\
\ttime_delta  :   27 bits\n\
\tarray       :   32 bits\n\
\n\
\tpadding     : type == 29\n\
\ttime_extend : type == 30\n\
\ttime_stamp : type == 31\n\
\tdata max type_len  == 28\n";

/// One CPU's page being filled, and where its full pages are in the spill file.
#[derive(Debug)]
struct CpuPages {
    page: Vec<u8>,
    /// Bytes of records in `page` after its header.
    used: usize,
    last_ts: u64,
    spilled: Vec<u64>,
}

impl CpuPages {
    fn new() -> Self {
        CpuPages { page: vec![0; PAGE_SIZE], used: 0, last_ts: 0, spilled: Vec::new() }
    }
}

/// A trace.dat being written.
#[derive(Debug)]
pub struct TraceDat {
    /// The trace.dat, put in place by `finish` (trace/atomic.rs).
    out: Option<AtomicFile>,
    spill_path: PathBuf,
    spill: BufWriter<File>,
    spill_len: u64,
    cpus: Vec<CpuPages>,
    comms: BTreeMap<u32, String>,
    error: Option<io::Error>,
}

impl Drop for TraceDat {
    /// The spill file goes, finished or not; an unfinished trace.dat's
    /// temporary file goes with its AtomicFile.
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.spill_path);
    }
}

/// A payload being built: the common fields, then the event's.
pub struct Payload {
    buf: [u8; MAX_PAYLOAD],
    len: usize,
}

impl Payload {
    pub fn new(id: u16, pid: u32) -> Self {
        let mut buf = [0u8; MAX_PAYLOAD];
        buf[0..2].copy_from_slice(&id.to_le_bytes());
        buf[2] = COMMON_FLAGS;
        buf[3] = COMMON_PREEMPT;
        buf[4..8].copy_from_slice(&(pid as i32).to_le_bytes());
        Payload { buf, len: 8 }
    }

    /// A char[16] comm: NUL-padded, cut at 15 bytes as the kernel's TASK_COMM_LEN.
    pub fn comm(mut self, s: &str) -> Self {
        let b = s.as_bytes();
        let n = b.len().min(15);
        self.buf[self.len..self.len + n].copy_from_slice(&b[..n]);
        self.len += 16;
        self
    }

    pub fn i32(mut self, v: i64) -> Self {
        self.buf[self.len..self.len + 4].copy_from_slice(&(v as i32).to_le_bytes());
        self.len += 4;
        self
    }

    pub fn u64(mut self, v: u64) -> Self {
        self.buf[self.len..self.len + 8].copy_from_slice(&v.to_le_bytes());
        self.len += 8;
        self
    }
}

impl TraceDat {
    /// Open the temporary file for `path` now (a path that cannot be
    /// written is refused before the run) and a spill file beside it.
    pub fn create(path: &str) -> io::Result<Self> {
        let out = AtomicFile::create(Path::new(path))?;
        let (spill, spill_path) = temporary_beside(Path::new(path), "pages")?;
        let spill = BufWriter::with_capacity(1 << 16, spill);
        Ok(TraceDat {
            out: Some(out),
            spill_path,
            spill,
            spill_len: 0,
            cpus: Vec::new(),
            comms: BTreeMap::new(),
            error: None,
        })
    }

    /// Remember `pid`'s comm for the saved cmdlines.
    pub fn comm(&mut self, pid: u32, comm: &str) {
        self.comms.entry(pid).or_insert_with(|| comm.to_string());
    }

    /// One record on `cpu` at `ts` (ns; never earlier than the CPU's last).
    pub fn record(&mut self, cpu: usize, ts: u64, p: Payload) {
        while self.cpus.len() <= cpu {
            self.cpus.push(CpuPages::new());
        }
        let len = p.len.div_ceil(4) * 4;
        let c = &mut self.cpus[cpu];
        let mut delta = ts.saturating_sub(c.last_ts);
        let extend = delta >= 1 << DELTA_BITS;
        let need = 4 + len + if extend { 8 } else { 0 };
        if c.used == 0 || PAGE_HEADER + c.used + need > PAGE_SIZE {
            if c.used > 0 {
                Self::spill_page(c, &mut self.spill, &mut self.spill_len, &mut self.error);
            }
            // A fresh page: its timestamp is this record's time.
            c.page[0..8].copy_from_slice(&ts.to_le_bytes());
            delta = 0;
        }
        let mut at = PAGE_HEADER + c.used;
        if delta >= 1 << DELTA_BITS {
            let head = TYPE_TIME_EXTEND | ((delta as u32 & ((1 << DELTA_BITS) - 1)) << 5);
            c.page[at..at + 4].copy_from_slice(&head.to_le_bytes());
            c.page[at + 4..at + 8].copy_from_slice(&((delta >> DELTA_BITS) as u32).to_le_bytes());
            at += 8;
            delta = 0;
        }
        let head = (len / 4) as u32 | ((delta as u32) << 5);
        c.page[at..at + 4].copy_from_slice(&head.to_le_bytes());
        c.page[at + 4..at + 4 + p.len].copy_from_slice(&p.buf[..p.len]);
        c.page[at + 4 + p.len..at + 4 + len].fill(0);
        c.used = at + 4 + len - PAGE_HEADER;
        c.last_ts = ts;
    }

    fn spill_page(c: &mut CpuPages, spill: &mut BufWriter<File>, spill_len: &mut u64, error: &mut Option<io::Error>) {
        c.page[8..16].copy_from_slice(&(c.used as u64).to_le_bytes());
        c.page[PAGE_HEADER + c.used..].fill(0);
        if error.is_none() {
            if let Err(e) = spill.write_all(&c.page) {
                *error = Some(e);
            }
        }
        c.spilled.push(*spill_len);
        *spill_len += PAGE_SIZE as u64;
        c.used = 0;
    }

    /// Write the file: headers, formats, cmdlines, then every CPU's pages.
    /// `nr_cpus`: the machine's CPUs (a CPU without events has no pages).
    pub fn finish(self, nr_cpus: usize) -> io::Result<()> {
        self.finish_as(nr_cpus, None)
    }

    /// `finish`, but the file goes to `elsewhere` when given (AtomicFile::commit_as).
    pub fn finish_as(mut self, nr_cpus: usize, elsewhere: Option<&Path>) -> io::Result<()> {
        self.write_out(nr_cpus)?;
        self.out.take().expect("finished once").commit_as(elsewhere)
    }

    fn write_out(&mut self, nr_cpus: usize) -> io::Result<()> {
        while self.cpus.len() < nr_cpus {
            self.cpus.push(CpuPages::new());
        }
        for c in &mut self.cpus {
            if c.used > 0 {
                Self::spill_page(c, &mut self.spill, &mut self.spill_len, &mut self.error);
            }
        }
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.spill.flush()?;
        let mut h: Vec<u8> = Vec::with_capacity(16 << 10);
        h.extend_from_slice(b"\x17\x08\x44tracing");
        h.extend_from_slice(b"6\0");
        h.push(0); // little-endian
        h.push(8); // sizeof(long)
        h.extend_from_slice(&(PAGE_SIZE as u32).to_le_bytes());
        h.extend_from_slice(b"header_page\0");
        h.extend_from_slice(&(HEADER_PAGE.len() as u64).to_le_bytes());
        h.extend_from_slice(HEADER_PAGE.as_bytes());
        h.extend_from_slice(b"header_event\0");
        h.extend_from_slice(&(HEADER_EVENT.len() as u64).to_le_bytes());
        h.extend_from_slice(HEADER_EVENT.as_bytes());
        h.extend_from_slice(&0u32.to_le_bytes()); // no ftrace-internal formats
        let mut systems: Vec<&str> = FORMATS.iter().map(|e| e.system).collect();
        systems.dedup();
        h.extend_from_slice(&(systems.len() as u32).to_le_bytes());
        for sys in systems {
            h.extend_from_slice(sys.as_bytes());
            h.push(0);
            let evs: Vec<&EventFormat> = FORMATS.iter().filter(|e| e.system == sys).collect();
            h.extend_from_slice(&(evs.len() as u32).to_le_bytes());
            for e in evs {
                let t = format_text(e);
                h.extend_from_slice(&(t.len() as u64).to_le_bytes());
                h.extend_from_slice(t.as_bytes());
            }
        }
        let kallsyms = format!("{HRTIMER_WAKEUP_ADDR:016x} T hrtimer_wakeup\n");
        h.extend_from_slice(&(kallsyms.len() as u32).to_le_bytes());
        h.extend_from_slice(kallsyms.as_bytes());
        h.extend_from_slice(&0u32.to_le_bytes()); // no printk formats
        let cmdlines: String = self.comms.iter().map(|(pid, c)| format!("{pid} {c}\n")).collect();
        h.extend_from_slice(&(cmdlines.len() as u64).to_le_bytes());
        h.extend_from_slice(cmdlines.as_bytes());
        h.extend_from_slice(&(self.cpus.len() as u32).to_le_bytes());
        h.extend_from_slice(b"flyrecord\0");
        let table_at = h.len();
        let data_at = (table_at + 16 * self.cpus.len()).div_ceil(PAGE_SIZE) * PAGE_SIZE;
        let mut off = data_at as u64;
        for c in &self.cpus {
            let size = (c.spilled.len() * PAGE_SIZE) as u64;
            h.extend_from_slice(&off.to_le_bytes());
            h.extend_from_slice(&size.to_le_bytes());
            off += size;
        }
        h.resize(data_at, 0);
        let mut out = BufWriter::with_capacity(1 << 16, self.out.as_mut().expect("not finished").file());
        out.write_all(&h)?;
        let mut spill = File::open(&self.spill_path)?;
        let mut page = vec![0u8; PAGE_SIZE];
        for c in &self.cpus {
            for &at in &c.spilled {
                spill.seek(SeekFrom::Start(at))?;
                spill.read_exact(&mut page)?;
                out.write_all(&page)?;
            }
        }
        out.flush()
    }
}
