//! Pipes and unix stream sockets between tasks (`[[channel]]`, the `send`
//! and `recv` ops): what perf bench sched pipe and hackbench do between
//! their processes.
//!
//! A channel holds whole messages. A `send` pays its syscall's cost
//! (`kernel.costs.pipe_write` / `unix_send`) as CPU work, then blocks while
//! the channel is full, then queues its message and wakes a waiting reader
//! with WF_SYNC (pipe_write and sock_def_readable use
//! wake_up_interruptible_sync_poll). A `recv` blocks while the channel is
//! empty, takes a message, wakes writers with WF_SYNC, then pays its cost.
//! A woken task tries its op again, as the kernel's loops do.
//!
//! * pipe (fs/pipe.c, 5.5+): readers and writers wait exclusively (one is
//!   woken); a reader is woken by a write into an empty pipe, a writer by a
//!   read from a full one. Small writes merge into the last page buffer, so
//!   the capacity is 16 pages (PIPE_DEF_BUFFERS) of 4 KiB: 65,536 / size
//!   messages.
//! * unix stream socket (net/unix/af_unix.c): a sender blocks while its
//!   socket's sk_wmem_alloc is at sk_sndbuf (net.core.wmem_default,
//!   212,992); each message is an skb whose truesize is 768 bytes for up
//!   to 192 bytes of data (a kmalloc-512 head with skb_shared_info plus the
//!   256-byte sk_buff), so 277 messages of hackbench's 100 bytes fit.
//!   Blocked senders wait non-exclusively and unix_write_space() wakes them
//!   all once the socket is writable again: at most a quarter full
//!   (unix_writable: wmem_alloc << 2 <= sndbuf).
//!
//! Deviation: the syscall's cost is paid before the send blocks and after
//! the recv's message is taken, not around the copy under the pipe's mutex
//! or the socket's lock; no lock contention is modelled.

use crate::error::{Location, Result, SimError};
use crate::kernel::Costs;
use crate::sched::task::TaskId;
use crate::workload::Op;

/// What a channel is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChanKind {
    Pipe,
    Unix,
}

impl ChanKind {
    pub fn name(self) -> &'static str {
        match self {
            ChanKind::Pipe => "pipe",
            ChanKind::Unix => "unix",
        }
    }
}

/// A `[[channel]]` as declared: `count` instances named `name`.
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelDef {
    pub name: String,
    pub kind: ChanKind,
    /// Messages that fit before a sender blocks.
    pub capacity: u64,
    /// Instances (a group of N tasks each with its own: `count = N`).
    pub count: usize,
    /// Bytes per message (for the capacity and the report).
    pub size: u64,
}

/// The keys of a `[[channel]]` table.
pub const CHANNEL_KEYS: &[&str] = &["name", "kind", "capacity", "count", "size"];

/// PIPE_DEF_BUFFERS pages of 4 KiB.
pub const PIPE_BYTES: u64 = 16 * 4096;
/// net.core.wmem_default: the socket's sk_sndbuf.
pub const UNIX_SNDBUF: u64 = 212_992;

/// The skb truesize of a unix stream message of `size` bytes: the
/// kmalloc'd head (data + 320 bytes of skb_shared_info, rounded up to a
/// power of two) plus the 256-byte sk_buff from its slab cache.
pub fn unix_truesize(size: u64) -> u64 {
    (size + 320).next_power_of_two() + 256
}

impl ChannelDef {
    /// The default capacity of a `kind` channel of `size`-byte messages.
    pub fn default_capacity(kind: ChanKind, size: u64) -> u64 {
        match kind {
            ChanKind::Pipe => (PIPE_BYTES / size.max(1)).max(1),
            ChanKind::Unix => (UNIX_SNDBUF / unix_truesize(size)).max(1),
        }
    }
}

/// A channel instance's state.
#[derive(Debug, Clone)]
pub struct Channel {
    pub kind: ChanKind,
    pub capacity: u64,
    pub queued: u64,
    pub readers: Vec<TaskId>,
    pub writers: Vec<TaskId>,
    /// Messages sent and received (the report).
    pub sent: u64,
    pub received: u64,
}

impl Channel {
    pub fn new(def: &ChannelDef) -> Channel {
        Channel {
            kind: def.kind,
            capacity: def.capacity,
            queued: 0,
            readers: Vec::new(),
            writers: Vec::new(),
            sent: 0,
            received: 0,
        }
    }

    /// unix_writable(): the blocked senders may go on.
    pub fn writable(&self) -> bool {
        match self.kind {
            ChanKind::Pipe => self.queued < self.capacity,
            ChanKind::Unix => self.queued * 4 <= self.capacity,
        }
    }
}

/// Parse `[[channel]]` tables.
pub(crate) fn compile_channels(raw: &[toml::Value], file: &str) -> Result<Vec<ChannelDef>> {
    let mut out: Vec<ChannelDef> = Vec::new();
    for (i, v) in raw.iter().enumerate() {
        let at = |k: &str| format!("channel[{i}].{k}");
        let Some(t) = v.as_table() else {
            return Err(SimError::bad_value(file, &format!("channel[{i}]"), "not a table", "a table"));
        };
        for k in t.keys() {
            if !CHANNEL_KEYS.contains(&k.as_str()) {
                return Err(SimError::UnknownKey {
                    at: Location { file: file.to_string(), key: at(k) },
                    accepted: CHANNEL_KEYS.join(", "),
                });
            }
        }
        let name = match t.get("name").and_then(|v| v.as_str()) {
            Some(n) if !n.is_empty() && !n.contains(char::is_whitespace) => n.to_string(),
            _ => return Err(SimError::bad_value(file, &at("name"), "missing or empty", "a name without spaces")),
        };
        if out.iter().any(|c| c.name == name) {
            return Err(SimError::bad_value(file, &at("name"), format!("\"{name}\""), "a name not used before"));
        }
        let kind = match t.get("kind").map(|v| v.as_str()) {
            None | Some(Some("pipe")) => ChanKind::Pipe,
            Some(Some("unix")) => ChanKind::Unix,
            Some(other) => {
                let got = other.map_or_else(|| "not a string".to_string(), |s| format!("\"{s}\""));
                return Err(SimError::bad_value(file, &at("kind"), got, "\"pipe\" or \"unix\""));
            }
        };
        let int = |k: &str, dflt: i64, max: i64| -> Result<i64> {
            match t.get(k) {
                None => Ok(dflt),
                Some(v) => match v.as_integer() {
                    Some(n) if (1..=max).contains(&n) => Ok(n),
                    _ => Err(SimError::bad_value(file, &at(k), v.to_string(), format!("an integer 1 .. {max}"))),
                },
            }
        };
        let size = int("size", 100, 65_536)? as u64;
        let count = int("count", 1, 1 << 16)? as usize;
        let capacity = int("capacity", ChannelDef::default_capacity(kind, size) as i64, 1 << 30)? as u64;
        out.push(ChannelDef { name, kind, capacity, count, size });
    }
    Ok(out)
}

/// The index of each channel's first instance in the flat list.
pub(crate) fn instance_bases(chans: &[ChannelDef]) -> Vec<usize> {
    chans
        .iter()
        .scan(0usize, |n, c| {
            let base = *n;
            *n += c.count;
            Some(base)
        })
        .collect()
}

/// `{ send = "c" }`, `{ send = { to = "c", all = true } }`, `{ recv = "c" }`:
/// the syscall's cost (workload/channel.rs) as a `run` around the op.
pub(crate) fn compile_chan_op(
    key: &str,
    val: &toml::Value,
    sub: &str,
    file: &str,
    (chans, chan_base): (&[ChannelDef], &[usize]),
    costs: &Costs,
    out: &mut Vec<Op>,
) -> Result<()> {
    let (name, all) = match val {
        toml::Value::String(s) => (s.clone(), false),
        toml::Value::Table(t) if key == "send" => {
            if let Some(k) = t.keys().find(|k| *k != "to" && *k != "all") {
                let at = Location { file: file.to_string(), key: format!("{sub}.{k}") };
                return Err(SimError::UnknownKey { at, accepted: "to, all".into() });
            }
            let to = t.get("to").and_then(|v| v.as_str()).ok_or_else(|| {
                SimError::bad_value(file, &format!("{sub}.to"), "missing or not a string", "a [[channel]] name")
            })?;
            let all = match t.get("all") {
                None => false,
                Some(toml::Value::Boolean(b)) => *b,
                Some(v) => {
                    return Err(SimError::bad_value(file, &format!("{sub}.all"), v.to_string(), "true or false"))
                }
            };
            (to.to_string(), all)
        }
        _ => {
            let accepted = if key == "send" { "a channel name or { to = NAME, all = BOOL }" } else { "a channel name" };
            return Err(SimError::bad_value(file, sub, val.to_string(), accepted));
        }
    };
    let Some(i) = chans.iter().position(|c| c.name == name) else {
        let names: Vec<&str> = chans.iter().map(|c| c.name.as_str()).collect();
        let accepted =
            if names.is_empty() { "a name declared in [[channel]] (none is)".to_string() } else { names.join(", ") };
        return Err(SimError::bad_value(file, sub, format!("\"{name}\""), accepted));
    };
    let def = &chans[i];
    let base = chan_base[i] as u32;
    let c = costs;
    let (send_cost, recv_cost) = match def.kind {
        ChanKind::Pipe => (c.pipe_write_ns, c.pipe_read_ns),
        ChanKind::Unix => (c.unix_send_ns, c.unix_recv_ns),
    };
    if key == "recv" {
        out.push(Op::Recv { ch: base, n: def.count as u32 });
        out.push(Op::Sys(recv_cost));
    } else if all {
        for k in 0..def.count as u32 {
            out.push(Op::Sys(send_cost));
            out.push(Op::Send { ch: base + k, n: 1 });
        }
    } else {
        out.push(Op::Sys(send_cost));
        out.push(Op::Send { ch: base, n: def.count as u32 });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_capacities() {
        assert_eq!(unix_truesize(100), 768);
        assert_eq!(ChannelDef::default_capacity(ChanKind::Unix, 100), 277);
        assert_eq!(ChannelDef::default_capacity(ChanKind::Pipe, 100), 655);
        assert_eq!(ChannelDef::default_capacity(ChanKind::Pipe, 4), 16_384);
    }
}

#[cfg(test)]
mod sim_tests {
    use crate::sim::Sim;
    use crate::trace::Trace;

    fn run(text: &str) -> Sim {
        let sc = crate::scenario::load(text, "c.toml", &[]).expect("scenario");
        let mut sim = Sim::new(&sc, 1, true, Trace::new(None)).expect("sim");
        sim.run().expect("run");
        sim
    }

    const PINGPONG: &str = "name = \"pp\"\n[machine]\nsockets = 1\ncores_per_socket = 2\n\
        [kernel]\nversion = \"6.1\"\nvmstat_kworkers = false\n\
        [[channel]]\nname = \"ab\"\nsize = 4\n[[channel]]\nname = \"ba\"\nsize = 4\n\
        [[task]]\nname = \"a\"\nCPUS\nprogram = [{ loop = { count = 1000, body = [{ send = \"ab\" }, { recv = \"ba\" }] } }]\n\
        [[task]]\nname = \"b\"\nCPUS\nprogram = [{ loop = { count = 1000, body = [{ recv = \"ab\" }, { send = \"ba\" }] } }]\n";

    #[test]
    fn a_pinned_pipe_ping_pong_costs_two_writes_two_reads_two_switches() {
        let sim = run(&PINGPONG.replace("CPUS", "cpus = [0]"));
        let end = sim.w.m.kt.k.sched.tasks.iter().filter_map(|t| t.stats.exit_ns).max().expect("both exit");
        // 1,000 round trips of 2 x (350 + 300) ns plus two 2 us switches.
        let per = end / 1000;
        assert!((5_200..=5_500).contains(&per), "{per} ns per round trip");
        assert!(sim.w.m.kt.k.sched.tasks.iter().all(|t| t.stats.nvcsw >= 999));
    }

    #[test]
    fn a_sync_wakeup_keeps_an_idle_prev_cpu_and_a_full_socket_blocks_its_sender() {
        let sim = run(&PINGPONG.replace("CPUS", ""));
        let ab: Vec<usize> =
            sim.w.m.kt.k.sched.tasks.iter().filter(|t| t.comm == "a" || t.comm == "b").map(|t| t.cpu).collect();
        assert_ne!(ab[0], ab[1], "select_idle_sibling prefers the idle prev CPU over the waker's");
        // A sender 300 messages ahead of a slow reader blocks at 277 (unix).
        let text = "name = \"u\"\n[machine]\nsockets = 1\ncores_per_socket = 1\n\
            [kernel]\nversion = \"6.1\"\nvmstat_kworkers = false\n[measure]\nduration = \"1ms\"\n\
            [[channel]]\nname = \"s\"\nkind = \"unix\"\n\
            [[task]]\nname = \"w\"\nprogram = [{ loop = { count = 300, body = [{ send = \"s\" }] } }]\n\
            [[task]]\nname = \"r\"\nstart = \"900us\"\nprogram = [{ recv = \"s\" }, { loop = { count = 0, body = [{ run = \"1s\" }] } }]\n";
        let sim = run(text);
        let ch = &sim.w.wl.channels[0];
        assert_eq!(ch.sent, 277, "the writer stops at sk_sndbuf");
        assert_eq!(ch.received, 1);
        assert_eq!(ch.writers.len(), 1, "and stays blocked: 276 queued is not a quarter full");
    }
}
