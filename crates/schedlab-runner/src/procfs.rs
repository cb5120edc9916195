//! Parsers for the /proc files a kernel engineer reads: per thread
//! `schedstat`, `sched`, `status` and `stat`; per CPU `/proc/stat`.
//! The parsers take text so they can be tested without a kernel.

use std::collections::BTreeMap;
use std::io;

/// One thread's cumulative counters at one instant.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskCounters {
    /// schedstat field 1: time spent on the CPU (ns).
    pub cpu_ns: u64,
    /// schedstat field 2: time spent waiting on a run queue (ns).
    pub wait_ns: u64,
    /// schedstat field 3: number of timeslices run on this CPU.
    pub timeslices: u64,
    /// status: voluntary_ctxt_switches.
    pub nvcsw: u64,
    /// status: nonvoluntary_ctxt_switches.
    pub nivcsw: u64,
    /// sched: se.nr_migrations (absent on some kernels).
    pub nr_migrations: Option<u64>,
    /// sched: nr_wakeups (only with CONFIG_SCHEDSTATS and schedstats on).
    pub nr_wakeups: Option<u64>,
    /// sched: wait_max (only with schedstats), ns.
    pub wait_max_ns: Option<u64>,
    /// stat field 39: the CPU the thread last ran on.
    pub last_cpu: Option<usize>,
}

impl TaskCounters {
    /// `self - base`, counter by counter (saturating; maxima and the last CPU are kept).
    pub fn delta(&self, base: &TaskCounters) -> TaskCounters {
        let opt = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.saturating_sub(b)),
            (Some(a), None) => Some(a),
            _ => None,
        };
        TaskCounters {
            cpu_ns: self.cpu_ns.saturating_sub(base.cpu_ns),
            wait_ns: self.wait_ns.saturating_sub(base.wait_ns),
            timeslices: self.timeslices.saturating_sub(base.timeslices),
            nvcsw: self.nvcsw.saturating_sub(base.nvcsw),
            nivcsw: self.nivcsw.saturating_sub(base.nivcsw),
            nr_migrations: opt(self.nr_migrations, base.nr_migrations),
            nr_wakeups: opt(self.nr_wakeups, base.nr_wakeups),
            wait_max_ns: self.wait_max_ns,
            last_cpu: self.last_cpu,
        }
    }
}

/// `/proc/<pid>/task/<tid>/schedstat`: "cpu_ns wait_ns timeslices".
pub fn parse_schedstat(text: &str) -> Option<(u64, u64, u64)> {
    let mut it = text.split_whitespace().map(|f| f.parse::<u64>().ok());
    Some((it.next()??, it.next()??, it.next()??))
}

/// `/proc/<pid>/task/<tid>/status`: (voluntary, nonvoluntary) context switches.
pub fn parse_status(text: &str) -> Option<(u64, u64)> {
    let mut v = None;
    let mut nv = None;
    for line in text.lines() {
        if let Some((k, val)) = line.split_once(':') {
            match k.trim() {
                "voluntary_ctxt_switches" => v = val.trim().parse().ok(),
                "nonvoluntary_ctxt_switches" => nv = val.trim().parse().ok(),
                _ => {}
            }
        }
    }
    Some((v?, nv?))
}

/// A time in `/proc/<pid>/sched` is printed as milliseconds with six decimals.
fn sched_ms_to_ns(s: &str) -> Option<u64> {
    let (ms, frac) = s.split_once('.').unwrap_or((s, "0"));
    let ms: u64 = ms.parse().ok()?;
    let mut frac = frac.to_string();
    frac.truncate(6);
    while frac.len() < 6 {
        frac.push('0');
    }
    Some(ms * 1_000_000 + frac.parse::<u64>().ok()?)
}

/// `/proc/<pid>/task/<tid>/sched`: (se.nr_migrations, nr_wakeups, wait_max ns),
/// each None when the line is absent (key names vary between kernels:
/// `se.statistics.wait_max` before 5.16, `stats.wait_max` or `wait_max` after).
pub fn parse_sched(text: &str) -> (Option<u64>, Option<u64>, Option<u64>) {
    let mut migr = None;
    let mut wakeups = None;
    let mut wait_max = None;
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else { continue };
        let k = k.trim();
        let v = v.trim();
        let last = k.rsplit('.').next().unwrap_or(k);
        match last {
            "nr_migrations" if k.starts_with("se.") || k == "nr_migrations" => migr = v.parse().ok(),
            "nr_wakeups" => wakeups = v.parse().ok(),
            "wait_max" => wait_max = sched_ms_to_ns(v),
            _ => {}
        }
    }
    (migr, wakeups, wait_max)
}

/// `/proc/<pid>/task/<tid>/stat`: field 39, the processor last run on.
pub fn parse_stat_processor(text: &str) -> Option<usize> {
    // comm (field 2) may contain spaces and parentheses: fields restart after the last ')'.
    let rest = &text[text.rfind(')')? + 1..];
    rest.split_whitespace().nth(39 - 3)?.parse().ok()
}

fn read(path: &str) -> io::Result<String> {
    std::fs::read_to_string(path)
}

fn bad(path: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("{path}: unexpected format"))
}

/// Read one thread's counters from its /proc directory (`/proc/self/task/<tid>`
/// or `/proc/thread-self`). The `sched` file is optional.
pub fn read_task(dir: &str) -> io::Result<TaskCounters> {
    let p = format!("{dir}/schedstat");
    let (cpu_ns, wait_ns, timeslices) = parse_schedstat(&read(&p)?).ok_or_else(|| bad(&p))?;
    let p = format!("{dir}/status");
    let (nvcsw, nivcsw) = parse_status(&read(&p)?).ok_or_else(|| bad(&p))?;
    let (nr_migrations, nr_wakeups, wait_max_ns) = match read(&format!("{dir}/sched")) {
        Ok(t) => parse_sched(&t),
        Err(_) => (None, None, None),
    };
    let last_cpu = read(&format!("{dir}/stat")).ok().and_then(|t| parse_stat_processor(&t));
    Ok(TaskCounters { cpu_ns, wait_ns, timeslices, nvcsw, nivcsw, nr_migrations, nr_wakeups, wait_max_ns, last_cpu })
}

/// The jiffies columns of one `cpuN` line of /proc/stat, in the kernel's order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuJiffies {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
    pub guest: u64,
    pub guest_nice: u64,
    /// Not a /proc/stat column: the CPU's runqueue run_delay in ns, from
    /// /proc/schedstat read at the same moment (None: not readable).
    pub run_delay_ns: Option<u64>,
}

impl CpuJiffies {
    pub fn delta(&self, b: &CpuJiffies) -> CpuJiffies {
        CpuJiffies {
            user: self.user.saturating_sub(b.user),
            nice: self.nice.saturating_sub(b.nice),
            system: self.system.saturating_sub(b.system),
            idle: self.idle.saturating_sub(b.idle),
            iowait: self.iowait.saturating_sub(b.iowait),
            irq: self.irq.saturating_sub(b.irq),
            softirq: self.softirq.saturating_sub(b.softirq),
            steal: self.steal.saturating_sub(b.steal),
            guest: self.guest.saturating_sub(b.guest),
            guest_nice: self.guest_nice.saturating_sub(b.guest_nice),
            run_delay_ns: self.run_delay_ns.zip(b.run_delay_ns).map(|(a, b)| a.saturating_sub(b)),
        }
    }

    pub fn add(&mut self, o: &CpuJiffies) {
        self.user += o.user;
        self.nice += o.nice;
        self.system += o.system;
        self.idle += o.idle;
        self.iowait += o.iowait;
        self.irq += o.irq;
        self.softirq += o.softirq;
        self.steal += o.steal;
        self.guest += o.guest;
        self.guest_nice += o.guest_nice;
        self.run_delay_ns = match (self.run_delay_ns, o.run_delay_ns) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
    }

    /// mpstat's columns (sysstat's arithmetic: guest time is already in user,
    /// guest_nice in nice, so they are subtracted there and not added to the total).
    pub fn columns(&self) -> [(&'static str, u64); 10] {
        [
            ("usr", self.user.saturating_sub(self.guest)),
            ("nice", self.nice.saturating_sub(self.guest_nice)),
            ("sys", self.system),
            ("iowait", self.iowait),
            ("irq", self.irq),
            ("soft", self.softirq),
            ("steal", self.steal),
            ("guest", self.guest),
            ("gnice", self.guest_nice),
            ("idle", self.idle),
        ]
    }

    /// mpstat's interval total.
    pub fn total(&self) -> u64 {
        self.user + self.nice + self.system + self.idle + self.iowait + self.irq + self.softirq + self.steal
    }
}

/// `/proc/stat`: the `cpuN` lines by CPU number (the aggregate `cpu` line is skipped).
pub fn parse_proc_stat(text: &str) -> BTreeMap<usize, CpuJiffies> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let mut f = line.split_whitespace();
        let Some(name) = f.next() else { continue };
        let Some(n) = name.strip_prefix("cpu").and_then(|n| n.parse::<usize>().ok()) else { continue };
        let v: Vec<u64> = f.map(|x| x.parse().unwrap_or(0)).collect();
        let g = |i: usize| v.get(i).copied().unwrap_or(0);
        out.insert(
            n,
            CpuJiffies {
                user: g(0),
                nice: g(1),
                system: g(2),
                idle: g(3),
                iowait: g(4),
                irq: g(5),
                softirq: g(6),
                steal: g(7),
                guest: g(8),
                guest_nice: g(9),
                run_delay_ns: None,
            },
        );
    }
    out
}

/// `/proc/schedstat`'s `cpuN` lines: each CPU's runqueue run_delay (ns),
/// the eighth number after the name (yld_count, 0, sched_count,
/// sched_goidle, ttwu_count, ttwu_local, rq_cpu_time, run_delay, pcount;
/// kernel/sched/stats.c show_schedstat, version 15 and later).
pub fn parse_schedstat_run_delay(text: &str) -> BTreeMap<usize, u64> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let mut f = line.split_whitespace();
        let Some(n) = f.next().and_then(|name| name.strip_prefix("cpu")).and_then(|n| n.parse::<usize>().ok()) else {
            continue;
        };
        if let Some(v) = f.nth(7).and_then(|x| x.parse::<u64>().ok()) {
            out.insert(n, v);
        }
    }
    out
}

/// One line of a /proc/pressure file: avg10, avg60, avg300 (%) and the
/// total stall (µs).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PressureRead {
    pub avg: [f64; 3],
    pub total_us: u64,
}

/// A /proc/pressure file's "some" and "full" lines (None: absent).
pub type PressureFileRead = (Option<PressureRead>, Option<PressureRead>);

/// Parse /proc/pressure/{cpu,memory,io}: `some avg10=0.00 avg60=0.00
/// avg300=0.00 total=0`, then the same for `full`.
pub fn parse_pressure(text: &str) -> PressureFileRead {
    let mut out: PressureFileRead = (None, None);
    for line in text.lines() {
        let mut f = line.split_whitespace();
        let kind = f.next();
        let mut r = PressureRead::default();
        for kv in f {
            let Some((k, v)) = kv.split_once('=') else { continue };
            match k {
                "avg10" => r.avg[0] = v.parse().unwrap_or(0.0),
                "avg60" => r.avg[1] = v.parse().unwrap_or(0.0),
                "avg300" => r.avg[2] = v.parse().unwrap_or(0.0),
                "total" => r.total_us = v.parse().unwrap_or(0),
                _ => {}
            }
        }
        match kind {
            Some("some") => out.0 = Some(r),
            Some("full") => out.1 = Some(r),
            _ => {}
        }
    }
    out
}

/// /proc/pressure/cpu, memory and io (None: a kernel without PSI, or
/// one booted with it off, where reading fails with EOPNOTSUPP).
pub fn read_pressure() -> Option<[PressureFileRead; 3]> {
    let one = |res: &str| read(&format!("/proc/pressure/{res}")).ok().map(|t| parse_pressure(&t));
    Some([one("cpu")?, one("memory")?, one("io")?])
}

/// /proc/stat with each CPU's run_delay from /proc/schedstat, read right
/// after it (a kernel without CONFIG_SCHEDSTATS leaves `run_delay_ns` None).
pub fn read_proc_stat() -> io::Result<BTreeMap<usize, CpuJiffies>> {
    let mut stat = parse_proc_stat(&read("/proc/stat")?);
    if let Ok(text) = read("/proc/schedstat") {
        for (cpu, rd) in parse_schedstat_run_delay(&text) {
            if let Some(j) = stat.get_mut(&cpu) {
                j.run_delay_ns = Some(rd);
            }
        }
    }
    Ok(stat)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pressure_lines_parse() {
        let t = "some avg10=1.50 avg60=0.25 avg300=0.00 total=12345\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=7\n";
        let (some, full) = parse_pressure(t);
        assert_eq!(some, Some(PressureRead { avg: [1.5, 0.25, 0.0], total_us: 12345 }));
        assert_eq!(full.map(|f| f.total_us), Some(7));
        assert_eq!(parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=3\n").1, None);
    }

    #[test]
    fn schedstat_run_delay_is_the_eighth_field() {
        let text = "version 15\ntimestamp 4295\ncpu0 0 0 1200 400 700 300 912345678 55000 1500\n\
                    domain0 3 1 2 3\ncpu1 0 0 10 5 7 3 1000 0 9\n";
        let m = parse_schedstat_run_delay(text);
        assert_eq!(m.get(&0), Some(&55000));
        assert_eq!(m.get(&1), Some(&0));
        assert_eq!(m.len(), 2);
    }

    #[test]
    fn schedstat_and_status() {
        assert_eq!(parse_schedstat("119951 730166 2\n"), Some((119951, 730166, 2)));
        assert_eq!(parse_schedstat("1 2\n"), None);
        let status =
            "Name:\thog-0\nState:\tR (running)\nvoluntary_ctxt_switches:\t12\nnonvoluntary_ctxt_switches:\t345\n";
        assert_eq!(parse_status(status), Some((12, 345)));
        assert_eq!(parse_status("Name:\tx\n"), None);
    }

    #[test]
    fn sched_file_lines() {
        let text = "hog-0 (1234, #threads: 3)\n\
            -------------------------------------------------------------------\n\
            se.exec_start                                :      10404889.498098\n\
            se.sum_exec_runtime                          :             1.500000\n\
            se.nr_migrations                             :                    7\n\
            nr_switches                                  :                   12\n\
            stats.wait_max                               :             2.500100\n\
            stats.nr_wakeups                             :                    5\n";
        assert_eq!(parse_sched(text), (Some(7), Some(5), Some(2_500_100)));
        // Tolerate a kernel without the line.
        assert_eq!(parse_sched("nr_switches : 3\n"), (None, None, None));
        let old = "se.statistics.wait_max : 0.000001\nse.statistics.nr_wakeups : 9\n";
        assert_eq!(parse_sched(old), (None, Some(9), Some(1)));
    }

    #[test]
    fn stat_processor_after_odd_comm() {
        let mut fields: Vec<String> = (3..=52).map(|i| i.to_string()).collect();
        fields[39 - 3] = "1".to_string();
        let text = format!("4321 (a) b (c)) {}\n", fields.join(" "));
        assert_eq!(parse_stat_processor(&text), Some(1));
    }

    #[test]
    fn proc_stat_and_mpstat_columns() {
        let a = parse_proc_stat(
            "cpu  10 0 5 100 0 0 0 0 0 0\ncpu0 10 0 5 100 0 0 0 0 0 0\ncpu1 0 0 0 0 0 0 0 0 0 0\nintr 1 2\n",
        );
        let b = parse_proc_stat(
            "cpu  0 0 0 0 0 0 0 0 0 0\ncpu0 70 20 15 110 0 1 2 3 10 5\ncpu1 50 0 0 50 0 0 0 0 0 0\nintr 1 2\n",
        );
        assert_eq!(a.len(), 2);
        let d = b[&0].delta(&a[&0]);
        // user 60 (10 of it guest), nice 20 (5 guest_nice), sys 10, idle 10, irq 1, soft 2, steal 3
        assert_eq!(d.total(), 60 + 20 + 10 + 10 + 1 + 2 + 3);
        let cols: BTreeMap<_, _> = d.columns().into_iter().collect();
        assert_eq!(cols["usr"], 50);
        assert_eq!(cols["nice"], 15);
        assert_eq!(cols["guest"], 10);
        assert_eq!(cols["idle"], 10);
    }

    #[test]
    fn counter_deltas() {
        let a = TaskCounters { cpu_ns: 10, nvcsw: 1, nr_migrations: Some(2), ..Default::default() };
        let b = TaskCounters { cpu_ns: 25, nvcsw: 4, nr_migrations: Some(5), last_cpu: Some(1), ..Default::default() };
        let d = b.delta(&a);
        assert_eq!((d.cpu_ns, d.nvcsw, d.nr_migrations, d.last_cpu), (15, 3, Some(3), Some(1)));
    }

    #[test]
    fn this_thread_is_readable() {
        // A fresh thread may not have been charged any CPU time yet: only the format is checked.
        let c = read_task("/proc/thread-self").expect("own counters");
        assert!(c.last_cpu.is_some());
    }
}
