//! Reading a trace's text lines (for `schedlab import`): the kernel's
//! ftrace text (its `trace` file, `trace-cmd report` with or without `-l`,
//! schedlab's own) and `perf script` text, one line at a time, into the
//! scheduler events the import replays (python/schedlab/traceimport/read.py
//! drives it and builds the events; docs/import.md).
//!
//! Each event's fields are read from the kernel's print format of the event
//! (its tracefs `format` file): `prev_comm=%s prev_pid=%d ...`. A comm may
//! hold spaces, so a text field runs to the first ` NEXT_KEY=` after it.

/// A field's value: an integer, or text borrowed from the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    Int(i64),
    Str(&'a str),
}

/// One line of a trace, as the import sees it.
#[derive(Debug, PartialEq, Eq)]
pub enum Line<'a> {
    /// `#` comment (a `# schedlab-capture:` header among them).
    Comment,
    /// Not an event line of the format (a preamble, a banner, a blank).
    NoMatch,
    /// An event the import does not read.
    Unkept,
    /// An event read and dropped on purpose: an interrupt bracket where the
    /// flags column already says which context each event ran in; an
    /// hrtimer_start of any timer but a task's sleep (hrtimer_wakeup).
    Dropped,
    /// A kept event whose body is not the kernel's print format.
    Malformed {
        event: &'a str,
        body: &'a str,
    },
    Event(Event<'a>),
}

/// A kept event.
#[derive(Debug, PartialEq, Eq)]
pub struct Event<'a> {
    pub ts_ns: i64,
    pub cpu: i64,
    pub pid: i64,
    pub comm: &'a str,
    pub flags: Option<&'a str>,
    pub name: &'static str,
    pub fields: Vec<(&'static str, Value<'a>)>,
}

/// The two line formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `comm-pid [cpu] flags ts: event: body` (the `(tgid)` column and the
    /// flags column optional).
    Ftrace,
    /// `comm pid[/tid] [cpu] ts: [period] [sys:]event: body`.
    Perf,
}

/// The interrupt handlers' brackets.
const BRACKETS: [&str; 6] = [
    "irq_handler_entry",
    "irq_handler_exit",
    "softirq_entry",
    "softirq_exit",
    "hrtimer_expire_entry",
    "hrtimer_expire_exit",
];
/// The other events the import reads.
const SCHED: [&str; 10] = [
    "sched_switch",
    "sched_waking",
    "sched_wakeup",
    "sched_wakeup_new",
    "sched_migrate_task",
    "sched_process_fork",
    "sched_process_exec",
    "sched_process_exit",
    "hrtimer_start",
    "hrtimer_cancel",
];

/// Every event the import reads.
pub fn kept_events() -> Vec<&'static str> {
    BRACKETS.iter().chain(SCHED.iter()).copied().collect()
}

fn kept(name: &str) -> Option<&'static str> {
    BRACKETS.iter().chain(SCHED.iter()).copied().find(|k| *k == name)
}

fn digits(s: &str) -> usize {
    s.bytes().take_while(u8::is_ascii_digit).count()
}

fn ws(s: &str) -> usize {
    s.bytes().take_while(u8::is_ascii_whitespace).count()
}

/// `\d+\.\d+` at the start of `s`: its length and the time in ns (6 decimals
/// for ftrace, 9 for perf --ns; more are cut).
fn timestamp(s: &str) -> Option<(usize, i64)> {
    let a = digits(s);
    if a == 0 || s.as_bytes().get(a) != Some(&b'.') {
        return None;
    }
    let b = digits(&s[a + 1..]);
    if b == 0 {
        return None;
    }
    let secs: i64 = s[..a].parse().ok()?;
    let frac = &s[a + 1..a + 1 + b.min(9)];
    let mut ns: i64 = frac.parse().ok()?;
    for _ in frac.len()..9 {
        ns *= 10;
    }
    Some((a + 1 + b, secs.checked_mul(1_000_000_000)?.checked_add(ns)?))
}

/// After `[cpu]` and its whitespace: `[flags ]ts: event: body` (ftrace) or
/// `ts: [period ][sys:]event: body` (perf). Returns (flags, ts, event, body).
fn tail(s: &str, format: Format) -> Option<(Option<&str>, i64, &str, &str)> {
    let (flags, s) = match format {
        Format::Perf => (None, s),
        Format::Ftrace => {
            // A flags column (4 to 6 characters, no ':') and whitespace, if the
            // text that follows is then the timestamp.
            let end = s.find(|c: char| c.is_ascii_whitespace()).unwrap_or(s.len());
            let tok = &s[..end];
            let rest = &s[end..];
            if (4..=6).contains(&tok.len()) && !tok.contains(':') && ws(rest) > 0 {
                let after = &rest[ws(rest)..];
                if timestamp(after).is_some_and(|(n, _)| after[n..].starts_with(':')) {
                    (Some(tok), after)
                } else {
                    (None, s)
                }
            } else {
                (None, s)
            }
        }
    };
    let (n, ts) = timestamp(s)?;
    let s = s[n..].strip_prefix(':')?;
    let w = ws(s);
    if w == 0 {
        return None;
    }
    let mut s = &s[w..];
    if format == Format::Perf {
        // perf's optional period column, and the event's subsystem.
        let d = digits(s);
        if d > 0 && ws(&s[d..]) > 0 {
            s = &s[d + ws(&s[d..])..];
        }
    }
    let word = |s: &str| s.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_').count();
    let mut w = word(s);
    if format == Format::Perf && s.as_bytes().get(w) == Some(&b':') && w > 0 {
        let next = &s[w + 1..];
        let w2 = word(next);
        if w2 > 0 && next.as_bytes().get(w2) == Some(&b':') {
            s = next;
            w = w2;
        }
    }
    if w == 0 || s.as_bytes().get(w) != Some(&b':') {
        return None;
    }
    let event = &s[..w];
    let mut body = &s[w + 1..];
    if let Some(b) = body.strip_prefix(|c: char| c.is_ascii_whitespace()) {
        body = b;
    }
    Some((flags, ts, event, body.trim_end_matches(['\n', '\r'])))
}

/// The line's header: (comm, pid, cpu, flags, ts, event, body).
type Header<'a> = (&'a str, i64, i64, Option<&'a str>, i64, &'a str, &'a str);

fn header(line: &str, format: Format) -> Option<Header<'_>> {
    let lead = ws(line);
    let s = &line[lead..];
    match format {
        Format::Ftrace => {
            // The comm runs to the first '-' after which `pid [(tgid)] [cpu]` follows.
            for (i, _) in s.match_indices('-').filter(|(i, _)| *i > 0) {
                let r = &s[i + 1..];
                let d = digits(r);
                if d == 0 || ws(&r[d..]) == 0 {
                    continue;
                }
                let pid: i64 = r[..d].parse().ok()?;
                let mut r = &r[d + ws(&r[d..])..];
                if let Some(t) = r.strip_prefix('(') {
                    let inner = t.bytes().take_while(|b| b.is_ascii_whitespace() || b.is_ascii_digit() || *b == b'-');
                    let n = inner.count();
                    if t.as_bytes().get(n) == Some(&b')') && ws(&t[n + 1..]) > 0 {
                        r = &t[n + 1 + ws(&t[n + 1..])..];
                    } else {
                        continue;
                    }
                }
                let Some(c) = r.strip_prefix('[') else { continue };
                let cd = digits(c);
                if cd == 0 || c.as_bytes().get(cd) != Some(&b']') || ws(&c[cd + 1..]) == 0 {
                    continue;
                }
                let cpu: i64 = c[..cd].parse().ok()?;
                let after = &c[cd + 1 + ws(&c[cd + 1..])..];
                if let Some((flags, ts, event, body)) = tail(after, format) {
                    return Some((s[..i].trim(), pid, cpu, flags, ts, event, body));
                }
            }
            None
        }
        Format::Perf => {
            // The comm (right-aligned, may hold spaces) runs to the last
            // whitespace before `[pid/]tid [cpu]`.
            let open = s.match_indices(" [").map(|(i, _)| i);
            for i in open {
                let c = &s[i + 2..];
                let cd = digits(c);
                if cd == 0 || c.as_bytes().get(cd) != Some(&b']') || ws(&c[cd + 1..]) == 0 {
                    continue;
                }
                let before = s[..i].trim_end();
                let start = before.rfind(|c: char| c.is_ascii_whitespace()).map_or(0, |p| p + 1);
                let tok = &before[start..];
                let tid = tok.rsplit('/').next().unwrap_or(tok);
                let prefix_ok =
                    tok.len() == tid.len() || digits(&tok[..tok.len() - tid.len() - 1]) + 1 + tid.len() == tok.len();
                if start == 0 || tid.is_empty() || digits(tid) != tid.len() || !prefix_ok {
                    continue;
                }
                let comm = before[..start].trim();
                if comm.is_empty() {
                    continue;
                }
                let pid: i64 = tid.parse().ok()?;
                let cpu: i64 = c[..cd].parse().ok()?;
                let after = &c[cd + 1 + ws(&c[cd + 1..])..];
                if let Some((flags, ts, event, body)) = tail(after, format) {
                    return Some((comm, pid, cpu, flags, ts, event, body));
                }
            }
            None
        }
    }
}

/// Which format a line is in, if either.
pub fn detect(line: &str) -> Option<Format> {
    [Format::Ftrace, Format::Perf].into_iter().find(|f| header(line, *f).is_some())
}

/// A body of `key=value` fields in the print format's order: `spec` lists
/// each key with its kind (`'s'` text to the next key, `'S'` text to the next
/// whitespace, `'i'` an integer, `'u'` an unsigned one), optional keys with
/// `?` (absent: `default`).
struct Reader<'a> {
    s: &'a str,
}

impl<'a> Reader<'a> {
    /// `key=` at the current position (after one space unless first).
    fn key(&mut self, key: &str, first: bool) -> bool {
        let s = if first {
            self.s
        } else if let Some(r) = self.s.strip_prefix(' ') {
            r
        } else {
            return false;
        };
        match s.strip_prefix(key).and_then(|r| r.strip_prefix('=')) {
            Some(r) => {
                self.s = r;
                true
            }
            None => false,
        }
    }

    fn int(&mut self, signed: bool) -> Option<i64> {
        let neg = signed && self.s.starts_with('-');
        let body = if neg { &self.s[1..] } else { self.s };
        let d = digits(body);
        if d == 0 {
            return None;
        }
        let v: i64 = body[..d].parse().ok()?;
        self.s = &body[d..];
        Some(if neg { -v } else { v })
    }

    /// Text up to the first ` NEXT=` (a comm may hold spaces), or to the end.
    fn text_to(&mut self, next: Option<&str>) -> &'a str {
        let end = match next {
            Some(n) => {
                let pat = format!(" {n}=");
                self.s.find(&pat).unwrap_or(self.s.len())
            }
            None => self.s.len(),
        };
        let (v, rest) = self.s.split_at(end);
        self.s = rest;
        v
    }

    fn word(&mut self) -> &'a str {
        let end = self.s.find(|c: char| c.is_ascii_whitespace()).unwrap_or(self.s.len());
        let (v, rest) = self.s.split_at(end);
        self.s = rest;
        v
    }
}

/// The fields of `name` from its body; None when the body is not the
/// kernel's layout.
pub fn fields<'a>(name: &str, body: &'a str) -> Option<Vec<(&'static str, Value<'a>)>> {
    let mut r = Reader { s: body };
    let mut out: Vec<(&'static str, Value<'a>)> = Vec::with_capacity(7);
    match name {
        "sched_switch" => {
            r.key("prev_comm", true).then_some(())?;
            out.push(("prev_comm", Value::Str(r.text_to(Some("prev_pid")))));
            r.key("prev_pid", false).then_some(())?;
            out.push(("prev_pid", Value::Int(r.int(true)?)));
            r.key("prev_prio", false).then_some(())?;
            out.push(("prev_prio", Value::Int(r.int(true)?)));
            r.key("prev_state", false).then_some(())?;
            let state = r.word();
            if state.is_empty() {
                return None;
            }
            out.push(("prev_state", Value::Str(state)));
            r.s = r.s.strip_prefix(" ==> ")?;
            r.key("next_comm", true).then_some(())?;
            out.push(("next_comm", Value::Str(r.text_to(Some("next_pid")))));
            r.key("next_pid", false).then_some(())?;
            out.push(("next_pid", Value::Int(r.int(true)?)));
            r.key("next_prio", false).then_some(())?;
            out.push(("next_prio", Value::Int(r.int(true)?)));
        }
        "sched_waking" | "sched_wakeup" | "sched_wakeup_new" | "sched_migrate_task" | "sched_process_exit" => {
            r.key("comm", true).then_some(())?;
            out.push(("comm", Value::Str(r.text_to(Some("pid")))));
            r.key("pid", false).then_some(())?;
            out.push(("pid", Value::Int(r.int(false)?)));
            r.key("prio", false).then_some(())?;
            out.push(("prio", Value::Int(r.int(true)?)));
            if name == "sched_migrate_task" {
                r.key("orig_cpu", false).then_some(())?;
                out.push(("orig_cpu", Value::Int(r.int(false)?)));
                r.key("dest_cpu", false).then_some(())?;
                out.push(("dest_cpu", Value::Int(r.int(false)?)));
            } else if name != "sched_process_exit" {
                let save = r.s;
                if r.key("success", false) && r.int(false).is_none() {
                    r.s = save;
                }
                // The last field: what follows it (nothing, or text) is not read.
                let target = if r.key("target_cpu", false) { r.int(false) } else { None };
                out.push(("target_cpu", Value::Int(target.unwrap_or(-1))));
            }
        }
        "sched_process_fork" => {
            r.key("comm", true).then_some(())?;
            out.push(("comm", Value::Str(r.text_to(Some("pid")))));
            r.key("pid", false).then_some(())?;
            out.push(("pid", Value::Int(r.int(false)?)));
            r.key("child_comm", false).then_some(())?;
            out.push(("child_comm", Value::Str(r.text_to(Some("child_pid")))));
            r.key("child_pid", false).then_some(())?;
            out.push(("child_pid", Value::Int(r.int(false)?)));
        }
        "sched_process_exec" => {
            r.key("filename", true).then_some(())?;
            out.push(("filename", Value::Str(r.word())));
            r.key("pid", false).then_some(())?;
            out.push(("pid", Value::Int(r.int(false)?)));
        }
        "hrtimer_start" | "hrtimer_cancel" | "hrtimer_expire_entry" | "hrtimer_expire_exit" => {
            r.key("hrtimer", true).then_some(())?;
            let h = r.word();
            if h.is_empty() {
                return None;
            }
            out.push(("hrtimer", Value::Str(h)));
            let save = r.s;
            let function = if r.key("function", false) { r.word() } else { "" };
            if function.is_empty() {
                r.s = save;
            }
            out.push(("function", Value::Str(function)));
            for key in ["expires", "softexpires"] {
                let save = r.s;
                let v = if r.key(key, false) { r.int(false) } else { None };
                if v.is_none() {
                    r.s = save;
                }
                out.push((key, Value::Int(v.unwrap_or(0))));
            }
        }
        _ => {}
    }
    Some(out)
}

/// One line in `format`.
pub fn read_line(line: &str, format: Format) -> Line<'_> {
    if line.starts_with('#') {
        return Line::Comment;
    }
    let Some((comm, pid, cpu, flags, ts_ns, event, body)) = header(line, format) else {
        return Line::NoMatch;
    };
    let Some(name) = kept(event) else {
        return Line::Unkept;
    };
    let fields = if BRACKETS.contains(&name) {
        if flags.is_some() {
            return Line::Dropped; // the flags column says which context each event ran in
        }
        Vec::new()
    } else if name == "hrtimer_start" && !body.contains("hrtimer_wakeup") {
        return Line::Dropped; // only a task's sleep timer tells the replay anything
    } else {
        match fields(name, body) {
            Some(f) => f,
            None => return Line::Malformed { event: name, body },
        }
    };
    Line::Event(Event { ts_ns, cpu, pid, comm, flags, name, fields })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(line: &str, f: Format) -> Event<'_> {
        match read_line(line, f) {
            Line::Event(e) => e,
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn ftrace_lines_with_and_without_the_flags_and_tgid_columns() {
        let l = "  kworker/u8:1-32      [001] d..2.  3216.093434: sched_switch: prev_comm=kworker/u8:1 prev_pid=32 \
                 prev_prio=120 prev_state=I ==> next_comm=Web Content next_pid=17198 next_prio=120\n";
        let e = ev(l, Format::Ftrace);
        assert_eq!((e.comm, e.pid, e.cpu, e.flags, e.ts_ns), ("kworker/u8:1", 32, 1, Some("d..2."), 3_216_093_434_000));
        assert_eq!(e.fields[4], ("next_comm", Value::Str("Web Content")));
        assert_eq!(e.fields[6], ("next_prio", Value::Int(120)));
        let l =
            "  my-task-2-77 (   77) [000]   12.000001: sched_wakeup: comm=a b pid=5 prio=-51 success=1 target_cpu=003";
        let e = ev(l, Format::Ftrace);
        assert_eq!((e.comm, e.pid, e.flags, e.name), ("my-task-2", 77, None, "sched_wakeup"));
        assert_eq!(
            e.fields,
            vec![
                ("comm", Value::Str("a b")),
                ("pid", Value::Int(5)),
                ("prio", Value::Int(-51)),
                ("target_cpu", Value::Int(3))
            ]
        );
        assert_eq!(detect(l), Some(Format::Ftrace));
    }

    #[test]
    fn perf_script_lines() {
        let l = "     perf 12345/12346 [002] 100.123456789:          1 sched:sched_waking: comm=x pid=9 prio=120 \
                 target_cpu=002";
        assert_eq!(detect(l), Some(Format::Perf));
        let e = ev(l, Format::Perf);
        assert_eq!((e.comm, e.pid, e.cpu, e.ts_ns, e.name), ("perf", 12346, 2, 100_123_456_789, "sched_waking"));
        let l = " Web Content  4242 [000]  5.000000100: sched:sched_process_exit: comm=Web Content pid=4242 prio=120";
        let e = ev(l, Format::Perf);
        assert_eq!((e.comm, e.pid, e.fields[0]), ("Web Content", 4242, ("comm", Value::Str("Web Content"))));
    }

    #[test]
    fn what_is_dropped_skipped_or_refused() {
        let f = Format::Ftrace;
        assert_eq!(read_line("# tracer: nop", f), Line::Comment);
        assert_eq!(read_line("cpus=2", f), Line::NoMatch);
        assert_eq!(read_line("  a-1 [000] d.h1. 1.000000: irq_handler_entry: irq=3 name=x", f), Line::Dropped);
        assert!(matches!(read_line("  a-1 [000] 1.000000: irq_handler_entry: irq=3 name=x", f), Line::Event(_)));
        let t = "  a-1 [000] d..1. 1.000000: hrtimer_start: hrtimer=0000 function=tick_nohz expires=5 softexpires=5";
        assert_eq!(read_line(t, f), Line::Dropped);
        assert_eq!(read_line("  a-1 [000] d..1. 1.000000: sched_stat_runtime: comm=a pid=1", f), Line::Unkept);
        assert_eq!(
            read_line("  a-1 [000] d..1. 1.000000: sched_switch: prev_comm=a garbage", f),
            Line::Malformed { event: "sched_switch", body: "prev_comm=a garbage" }
        );
        let t =
            "  a-1 [000] d..1. 1.000000: hrtimer_start: hrtimer=00ff function=hrtimer_wakeup expires=7 softexpires=6 \
                 mode=ABS";
        let e = ev(t, f);
        assert_eq!(e.fields[1], ("function", Value::Str("hrtimer_wakeup")));
        assert_eq!((e.fields[2].1, e.fields[3].1), (Value::Int(7), Value::Int(6)));
    }
}
