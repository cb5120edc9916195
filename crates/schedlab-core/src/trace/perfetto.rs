//! The Perfetto protobuf trace (docs/FORMATS.md §2.2): a `Trace { repeated
//! TracePacket packet = 1 }` written as a stream of length-delimited packets,
//! hand-encoded (varints and length-delimited fields are all it needs). One
//! SystemInfo packet names the modelled kernel (Perfetto reads
//! sched_switch.prev_state by that release), each tracepoint is one
//! FtraceEventBundle packet for its CPU, and a ProcessTree at the end names
//! every task. Field numbers are those of perfetto's protos
//! (protos/perfetto/trace/..., as the `perfetto` wheel's perfetto_trace_pb2
//! has them).

use super::sink::Sink;

/// TracePacket fields.
const PACKET: u32 = 1; // Trace.packet
const PKT_FTRACE_EVENTS: u32 = 1;
const PKT_PROCESS_TREE: u32 = 2;
const PKT_SEQUENCE_ID: u32 = 10; // trusted_packet_sequence_id
const PKT_SYSTEM_INFO: u32 = 45;
/// FtraceEventBundle / FtraceEvent fields.
const BUNDLE_CPU: u32 = 1;
const BUNDLE_EVENT: u32 = 2;
const EV_TIMESTAMP: u32 = 1;
const EV_PID: u32 = 2;
const EV_COMMON_FLAGS: u32 = 5;
pub const SCHED_SWITCH: u32 = 4;
pub const SCHED_WAKEUP: u32 = 17;
pub const SCHED_WAKING: u32 = 20;
pub const SCHED_WAKEUP_NEW: u32 = 114;
pub const SCHED_PROCESS_EXIT: u32 = 238;
pub const SCHED_MIGRATE_TASK: u32 = 491;
pub const MM_VMSCAN_DIRECT_RECLAIM_BEGIN: u32 = 46;
pub const MM_VMSCAN_DIRECT_RECLAIM_END: u32 = 47;
pub const MM_VMSCAN_KSWAPD_WAKE: u32 = 48;
pub const MM_VMSCAN_KSWAPD_SLEEP: u32 = 49;
pub const CPU_FREQUENCY: u32 = 11;
pub const CPU_IDLE: u32 = 13;

/// The wire types used.
const VARINT: u32 = 0;
const LEN: u32 = 2;

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn key(out: &mut Vec<u8>, field: u32, wire: u32) {
    varint(out, ((field as u64) << 3) | wire as u64);
}

/// An unsigned or a signed (int32/int64: two's complement) varint field.
pub fn put_int(out: &mut Vec<u8>, field: u32, v: i64) {
    key(out, field, VARINT);
    varint(out, v as u64);
}

pub fn put_str(out: &mut Vec<u8>, field: u32, s: &str) {
    put_bytes(out, field, s.as_bytes());
}

fn put_bytes(out: &mut Vec<u8>, field: u32, b: &[u8]) {
    key(out, field, LEN);
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// The Perfetto writer: the encoded stream so far.
#[derive(Debug, Default)]
pub struct Perfetto {
    pub out: Sink,
    /// sched_switch.prev_state in the 4.14+ layout (X = 0x10) or the older
    /// one (TASK_DEAD = 0x40); R and S are 0 and 1 in both.
    pub state_4_14: bool,
}

impl Perfetto {
    /// A stream that starts with SystemInfo { utsname { sysname "Linux",
    /// release } }.
    pub fn new(release: &str, state_4_14: bool, out: Sink) -> Self {
        let mut uts = Vec::new();
        put_str(&mut uts, 1, "Linux");
        put_str(&mut uts, 3, release);
        let mut info = Vec::new();
        put_bytes(&mut info, 1, &uts);
        let mut pkt = Vec::new();
        put_bytes(&mut pkt, PKT_SYSTEM_INFO, &info);
        let mut p = Perfetto { out, state_4_14 };
        p.packet(&pkt);
        p
    }

    fn packet(&mut self, body: &[u8]) {
        put_bytes(&mut self.out.buf, PACKET, body);
        self.out.spill();
    }

    /// One FtraceEvent on `cpu`: `pid` is the task running there when it
    /// fired; `kind` its oneof field, `fields` the encoded event message.
    pub fn event(&mut self, cpu: usize, now: u64, pid: u32, kind: u32, fields: &[u8]) {
        self.event_flags(cpu, now, pid, None, kind, fields);
    }

    /// An FtraceEvent with its common_flags (the trace_entry flags: 0x01
    /// irqs off, 0x08 hardirq, 0x10 softirq) when `flags` is given.
    pub fn event_flags(
        &mut self,
        cpu: usize,
        now: u64,
        pid: u32,
        flags: impl Into<Option<u32>>,
        kind: u32,
        fields: &[u8],
    ) {
        let mut ev = Vec::with_capacity(fields.len() + 16);
        put_int(&mut ev, EV_TIMESTAMP, now as i64);
        put_int(&mut ev, EV_PID, pid as i64);
        if let Some(f) = flags.into() {
            put_int(&mut ev, EV_COMMON_FLAGS, f as i64);
        }
        put_bytes(&mut ev, kind, fields);
        let mut bundle = Vec::with_capacity(ev.len() + 8);
        put_int(&mut bundle, BUNDLE_CPU, cpu as i64);
        put_bytes(&mut bundle, BUNDLE_EVENT, &ev);
        let mut pkt = Vec::with_capacity(bundle.len() + 8);
        put_bytes(&mut pkt, PKT_FTRACE_EVENTS, &bundle);
        put_int(&mut pkt, PKT_SEQUENCE_ID, 1);
        self.packet(&pkt);
    }

    /// prev_state for a task state letter of the text trace.
    pub fn prev_state(&self, letter: &str) -> i64 {
        match letter {
            "S" => 1,
            "X" if self.state_4_14 => 0x10,
            "X" => 0x40,
            _ => 0,
        }
    }

    /// The closing ProcessTree: each (pid, name) is a process of one thread.
    pub fn process_tree<'a>(&mut self, tasks: impl Iterator<Item = (u32, &'a str)>) {
        let mut tree = Vec::new();
        for (pid, name) in tasks {
            let mut proc_ = Vec::new();
            put_int(&mut proc_, 1, pid as i64);
            put_int(&mut proc_, 2, 0);
            put_str(&mut proc_, 3, name);
            put_bytes(&mut tree, 1, &proc_);
            let mut thread = Vec::new();
            put_int(&mut thread, 1, pid as i64);
            put_str(&mut thread, 2, name);
            put_int(&mut thread, 3, pid as i64);
            put_bytes(&mut tree, 2, &thread);
        }
        let mut pkt = Vec::new();
        put_bytes(&mut pkt, PKT_PROCESS_TREE, &tree);
        put_int(&mut pkt, PKT_SEQUENCE_ID, 1);
        self.packet(&pkt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_negative_ints_encode_as_protobuf_does() {
        let mut b = Vec::new();
        varint(&mut b, 300);
        assert_eq!(b, [0xac, 0x02]);
        let mut b = Vec::new();
        put_int(&mut b, 2, -1);
        assert_eq!(b.len(), 11, "a negative int32/int64 is a 10-byte varint");
        let p = Perfetto::new("6.1", true, Sink::memory());
        assert_eq!(p.out.buf[0], 0x0a, "a Trace starts with packet (field 1, LEN)");
    }
}
