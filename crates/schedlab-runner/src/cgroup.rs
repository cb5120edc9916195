//! The scenario's `[[cgroup]]` tree made real, with the files the kernel
//! reads: on cgroup v2 (the QEMU guests) a threaded subtree, so that the
//! threads of the runner's one process can sit in different cgroups; on
//! cgroup v1's cpu hierarchy (this project's host binds the cpu controller
//! there) the v1 files with the same meaning.
//!
//! The scenario's top-level cgroups are made directly below the cgroup the
//! runner runs in (the guest's root), named `schedlab-PID-NAME`, and the
//! scenario's root tasks stay where the runner is: the hierarchy has the
//! simulation's depth, with no extra level of the runner's own between the
//! root tasks and the groups (an extra level would give the root tasks half
//! of a CPU against two groups where the kernel, and the model, give them a
//! third).
//!
//! | scenario key    | cgroup v2        | cgroup v1                         |
//! |-----------------|------------------|-----------------------------------|
//! | cpu.weight      | cpu.weight       | cpu.shares (the shares it maps to)|
//! | cpu.weight.nice | cpu.weight.nice  | cpu.shares (the nice's weight)    |
//! | cpu.idle        | cpu.idle         | cpu.idle (5.15+)                  |
//! | cpu.max         | cpu.max          | cpu.cfs_period_us, cfs_quota_us   |
//! | cpu.max.burst   | cpu.max.burst    | cpu.cfs_burst_us                  |
//! | cpuset.cpus     | cpuset.cpus      | cpuset.cpus (the effective CPUs)  |
//!
//! cpuset.cpus is written as the scenario has it on v2, whose kernel then
//! computes cpuset.cpus.effective itself (the report reads it back); v1's
//! cpuset is a hierarchy of its own, where the same tree is made with each
//! cgroup's effective CPUs (v1 wants a non-empty subset of the parent's)
//! and the parent's cpuset.mems. Scenario CPUs are the host CPUs the run
//! was given (`host_cpus`), both ways.
//!
//! The group's CPU time is its threads' own (their utime + stime over the
//! window, as the report's tasks); cpu.stat gives the bandwidth counters.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use schedlab_core::cpumask::CpuMask;
use schedlab_core::scenario::Scenario;
use schedlab_core::sched::task_group::CgroupDef;

/// Which cgroup interface carries the cpu controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    V2,
    V1,
}

/// The cgroups of one run, removed again when dropped.
pub struct Cgroups {
    pub flavor: Flavor,
    /// By task group (0: the runner's own cgroup, where root tasks stay;
    /// an autogroup's is empty).
    dirs: Vec<PathBuf>,
    /// With a cpuset.cpus in the scenario, each task group's cpuset
    /// directory (v2: its dir; v1: the same tree in the cpuset hierarchy).
    cpuset_dirs: Vec<PathBuf>,
    /// Scenario CPU -> host CPU.
    host_cpus: Vec<usize>,
}

/// A mounted cgroup filesystem with the cpu controller: its flavor and
/// where the runner's process sits in it.
struct CpuHierarchy {
    flavor: Flavor,
    base: PathBuf,
}

fn write(path: &Path, value: &str) -> Result<(), String> {
    fs::write(path, value).map_err(|e| format!("write {value:?} to {}: {e}", path.display()))
}

/// The mount points of cgroup filesystems (/proc/self/mountinfo): (mount
/// point, fs type, super options).
fn cgroup_mounts() -> io::Result<Vec<(PathBuf, String, String)>> {
    let text = fs::read_to_string("/proc/self/mountinfo")?;
    Ok(text
        .lines()
        .filter_map(|l| {
            let (pre, post) = l.split_once(" - ")?;
            let mnt = pre.split_whitespace().nth(4)?;
            let mut post = post.split_whitespace();
            let fstype = post.next()?;
            let opts = post.nth(1).unwrap_or("");
            (fstype == "cgroup" || fstype == "cgroup2").then(|| (PathBuf::from(mnt), fstype.to_string(), opts.into()))
        })
        .collect())
}

/// The runner's own cgroup in a hierarchy (/proc/self/cgroup): v2's "0::"
/// line (`controller` None), or the v1 line whose controllers include
/// `controller`.
fn own_path(controller: Option<&str>) -> Result<String, String> {
    let text = fs::read_to_string("/proc/self/cgroup").map_err(|e| format!("/proc/self/cgroup: {e}"))?;
    text.lines()
        .find_map(|l| {
            let mut f = l.splitn(3, ':');
            let (id, ctrls, path) = (f.next()?, f.next()?, f.next()?);
            let hit = match controller {
                None => id == "0" && ctrls.is_empty(),
                Some(c) => ctrls.split(',').any(|x| x == c),
            };
            hit.then(|| path.to_string())
        })
        .ok_or_else(|| match controller {
            None => "/proc/self/cgroup: no line for cgroup v2".to_string(),
            Some(c) => format!("/proc/self/cgroup: no line for the v1 {c} hierarchy"),
        })
}

impl CpuHierarchy {
    /// Find the cpu controller: a v1 hierarchy with it, or cgroup2 with it
    /// available; with no cgroup filesystem mounted at all (the QEMU guest's
    /// initramfs), mount cgroup2 on /sys/fs/cgroup.
    fn find() -> Result<CpuHierarchy, String> {
        let mut mounts = cgroup_mounts().map_err(|e| format!("/proc/self/mountinfo: {e}"))?;
        if mounts.is_empty() {
            mount_cgroup2(Path::new("/sys/fs/cgroup"))?;
            mounts = cgroup_mounts().map_err(|e| format!("/proc/self/mountinfo: {e}"))?;
        }
        let v1 = mounts.iter().find(|(_, t, o)| t == "cgroup" && o.split(',').any(|c| c == "cpu"));
        let v2 = mounts.iter().find(|(m, t, _)| {
            t == "cgroup2"
                && fs::read_to_string(m.join("cgroup.controllers"))
                    .is_ok_and(|c| c.split_whitespace().any(|c| c == "cpu"))
        });
        let (mnt, flavor) = match (v1, v2) {
            (Some((m, ..)), _) => (m, Flavor::V1),
            (None, Some((m, ..))) => (m, Flavor::V2),
            (None, None) => {
                return Err("no cgroup hierarchy with the cpu controller is mounted (cgroup v1 with \"cpu\", or \
                            cgroup2 listing cpu in cgroup.controllers)"
                    .into())
            }
        };
        let own = own_path(if flavor == Flavor::V1 { Some("cpu") } else { None })?;
        Ok(CpuHierarchy { flavor, base: mnt.join(own.trim_start_matches('/')) })
    }
}

fn mount_cgroup2(at: &Path) -> Result<(), String> {
    use std::ffi::CString;
    let c = |s: &str| CString::new(s).expect("no NUL");
    let target = c(&at.to_string_lossy());
    let (src, fstype) = (c("cgroup2"), c("cgroup2"));
    // SAFETY: every pointer is a NUL-terminated string alive for the call.
    let rc = unsafe { libc::mount(src.as_ptr(), target.as_ptr(), fstype.as_ptr(), 0, std::ptr::null()) };
    if rc != 0 {
        return Err(format!("mount -t cgroup2 on {}: {}", at.display(), io::Error::last_os_error()));
    }
    Ok(())
}

impl Cgroups {
    /// Make the scenario's cgroups (None: it has none).
    pub fn create(sc: &Scenario, host_cpus: &[usize]) -> Result<Option<Cgroups>, String> {
        // The sessions' autogroups are the kernel's own (autogroup.rs), not cgroupfs directories.
        if sc.cgroups.iter().all(|c| c.autogroup.is_some()) {
            return Ok(None);
        }
        if let Some(c) = sc.cgroups.iter().find(|c| c.partition != schedlab_core::workload::cgroup::Partition::Member) {
            // The runner's cgroups sit below its own (a threaded subtree in
            // the guests), where a partition would be a remote one.
            return Err(format!(
                "cgroup {}: a cpuset partition; the runner does not make partitions yet (the model's are local \
                 partitions of the root cgroup, the runner's cgroups are below its own)",
                c.path
            ));
        }
        let h = CpuHierarchy::find()?;
        if h.base.join("cpu.rt_runtime_us").exists() {
            // CONFIG_RT_GROUP_SCHED: a new cgroup has no RT runtime, so an RT
            // task cannot run in it, and the model has no group RT bandwidth.
            if let Some(g) = sc.groups.iter().find(|g| g.cgroup != 0 && g.policy.is_rt()) {
                return Err(format!(
                    "task {:?}: an RT task in a cgroup, on a kernel with RT group scheduling \
                     (CONFIG_RT_GROUP_SCHED: {} exists), whose cpu.rt_runtime_us the model does not have; \
                     accepted: RT tasks in the root cgroup",
                    g.name,
                    h.base.join("cpu.rt_runtime_us").display()
                ));
            }
        }
        if h.flavor == Flavor::V2 {
            // The cpu controller for the children of the runner's cgroup.
            // The root cgroup may hold processes and threaded children at
            // once (it is exempt from the no-internal-process rule).
            write(&h.base.join("cgroup.subtree_control"), "+cpu")?;
        }
        let cpuset = sc.cgroups.iter().any(|c| c.cpuset_cpus.is_some());
        let cpuset_base = match (cpuset, h.flavor) {
            (false, _) => None,
            (true, Flavor::V2) => {
                write(&h.base.join("cgroup.subtree_control"), "+cpuset")?;
                Some(h.base.clone())
            }
            (true, Flavor::V1) => Some(v1_cpuset_base()?),
        };
        remove_stale(&h.base);
        if let Some(b) = cpuset_base.as_ref().filter(|b| **b != h.base) {
            remove_stale(b);
        }
        let mut me = Cgroups {
            flavor: h.flavor,
            dirs: vec![h.base.clone()],
            cpuset_dirs: cpuset_base.iter().cloned().collect(),
            host_cpus: host_cpus.to_vec(),
        };
        let prefix = format!("schedlab-{}-", std::process::id());
        for c in &sc.cgroups {
            if c.autogroup.is_some() {
                // Kept by task group in both lists: an autogroup has no directory.
                me.dirs.push(PathBuf::new());
                if cpuset_base.is_some() {
                    me.cpuset_dirs.push(PathBuf::new());
                }
                continue;
            }
            let mut parts = c.path.trim_start_matches('/').rsplit('/');
            let name = parts.next().unwrap_or_default();
            let dir = match c.parent {
                0 => h.base.join(format!("{prefix}{name}")),
                p => me.dirs[p].join(name),
            };
            fs::create_dir(&dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
            me.dirs.push(dir);
            me.configure(c)?;
            if let Some(base) = &cpuset_base {
                let dir = match (h.flavor, c.parent) {
                    (Flavor::V2, _) => me.dirs[c.tg].clone(),
                    (Flavor::V1, 0) => base.join(format!("{prefix}{name}")),
                    (Flavor::V1, p) => me.cpuset_dirs[p].join(name),
                };
                if h.flavor == Flavor::V1 {
                    fs::create_dir(&dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
                }
                me.cpuset_dirs.push(dir);
                me.configure_cpuset(c)?;
            }
        }
        Ok(Some(me))
    }

    /// Scenario CPUs as a host CPU list.
    fn host_list(&self, cpus: &CpuMask) -> String {
        let host: Vec<usize> = cpus.iter().map(|c| self.host_cpus[c]).collect();
        schedlab_core::sched::topology::cpulist(&host)
    }

    fn configure_cpuset(&self, c: &CgroupDef) -> Result<(), String> {
        let dir = &self.cpuset_dirs[c.tg];
        let ctx = |e: String| format!("cgroup {}: {e}", c.path);
        match self.flavor {
            Flavor::V2 => {
                if c.parent != 0 {
                    write(&self.cpuset_dirs[c.parent].join("cgroup.subtree_control"), "+cpuset").map_err(ctx)?;
                }
                if let Some(cpus) = &c.cpuset_cpus {
                    write(&dir.join("cpuset.cpus"), &self.host_list(cpus)).map_err(ctx)?;
                }
            }
            Flavor::V1 => {
                let parent = &self.cpuset_dirs[c.parent];
                let mems = fs::read_to_string(parent.join("cpuset.mems"))
                    .map_err(|e| ctx(format!("{}: {e}", parent.join("cpuset.mems").display())))?;
                write(&dir.join("cpuset.mems"), mems.trim()).map_err(ctx)?;
                let all = CpuMask::full(self.host_cpus.len());
                write(&dir.join("cpuset.cpus"), &self.host_list(c.cpus_effective.as_ref().unwrap_or(&all)))
                    .map_err(ctx)?;
            }
        }
        Ok(())
    }

    /// Each task group's cpuset.cpus.effective as scenario CPUs (None: the
    /// root's, or no cpuset in the scenario); a host CPU outside the run's
    /// shows as itself plus the machine's CPU count, so that it cannot pass
    /// for one of them.
    pub fn read_cpus_effective(&self) -> Vec<Option<String>> {
        let file = match self.flavor {
            Flavor::V2 => "cpuset.cpus.effective",
            Flavor::V1 => "cpuset.effective_cpus",
        };
        let n = self.host_cpus.len();
        (0..self.dirs.len())
            .map(|tg| {
                let d = self.cpuset_dirs.get(tg).filter(|d| tg > 0 && !d.as_os_str().is_empty())?;
                let text = fs::read_to_string(d.join(file)).ok()?;
                let host = CpuMask::parse_list(text.trim(), schedlab_core::machine::MAX_CPUS).ok()?;
                let mut cpus: Vec<usize> =
                    host.iter().map(|h| self.host_cpus.iter().position(|&x| x == h).unwrap_or(n + h)).collect();
                cpus.sort_unstable();
                Some(schedlab_core::sched::topology::cpulist(&cpus))
            })
            .collect()
    }

    fn configure(&self, c: &CgroupDef) -> Result<(), String> {
        let dir = &self.dirs[c.tg];
        let f = |n: &str| dir.join(n);
        let ctx = |e: String| format!("cgroup {}: {e}", c.path);
        match self.flavor {
            Flavor::V2 => {
                write(&f("cgroup.type"), "threaded").map_err(ctx)?;
                if c.parent != 0 {
                    // A nested group: its parent hands the controller down.
                    write(&self.dirs[c.parent].join("cgroup.subtree_control"), "+cpu").map_err(ctx)?;
                }
                match c.weight_nice {
                    Some(n) => write(&f("cpu.weight.nice"), &n.to_string()),
                    None => write(
                        &f("cpu.weight"),
                        &schedlab_core::workload::cgroup::cpu_weight_of_shares(c.shares).to_string(),
                    ),
                }
                .map_err(ctx)?;
                if c.idle {
                    write(&f("cpu.idle"), "1").map_err(ctx)?;
                }
                let max = match c.bandwidth {
                    Some(b) => format!("{} {}", b.quota / 1000, c.max_period_us),
                    None => format!("max {}", c.max_period_us),
                };
                write(&f("cpu.max"), &max).map_err(ctx)?;
                if c.max_burst_us > 0 {
                    write(&f("cpu.max.burst"), &c.max_burst_us.to_string()).map_err(ctx)?;
                }
            }
            Flavor::V1 => {
                write(&f("cpu.shares"), &c.shares.to_string()).map_err(ctx)?;
                if c.idle {
                    write(&f("cpu.idle"), "1").map_err(ctx)?;
                }
                write(&f("cpu.cfs_period_us"), &c.max_period_us.to_string()).map_err(ctx)?;
                if let Some(b) = c.bandwidth {
                    write(&f("cpu.cfs_quota_us"), &(b.quota / 1000).to_string()).map_err(ctx)?;
                }
                if c.max_burst_us > 0 {
                    write(&f("cpu.cfs_burst_us"), &c.max_burst_us.to_string()).map_err(ctx)?;
                }
            }
        }
        Ok(())
    }

    /// Put thread `tid` in task group `tg`'s cgroup (0: it stays where the
    /// runner is).
    pub fn attach(&self, tg: usize, tid: i32) -> Result<(), String> {
        if tg == 0 || self.dirs[tg].as_os_str().is_empty() {
            return Ok(());
        }
        let file = match self.flavor {
            Flavor::V2 => "cgroup.threads",
            Flavor::V1 => "tasks",
        };
        write(&self.dirs[tg].join(file), &tid.to_string())?;
        match self.cpuset_dirs.get(tg) {
            Some(d) if self.flavor == Flavor::V1 && !d.as_os_str().is_empty() => {
                write(&d.join("tasks"), &tid.to_string())
            }
            _ => Ok(()),
        }
    }

    /// cpu.stat's bandwidth counters of every task group (0: zeros), in
    /// schedlab_core::sim::report_cgroup::cgroup_rows' order: nr_periods, nr_throttled,
    /// throttled ns, burst ns, nr_bursts.
    pub fn read_stats(&self) -> Vec<[u64; 5]> {
        self.dirs
            .iter()
            .enumerate()
            .map(|(tg, d)| {
                if tg == 0 || d.as_os_str().is_empty() {
                    [0; 5]
                } else {
                    parse_cpu_stat(&fs::read_to_string(d.join("cpu.stat")).unwrap_or_default())
                }
            })
            .collect()
    }
}

/// cpu.stat of either flavor: v2 counts time in us (throttled_usec,
/// burst_usec), v1 in ns (throttled_time, burst_time).
pub fn parse_cpu_stat(text: &str) -> [u64; 5] {
    let mut out = [0u64; 5];
    for l in text.lines() {
        let Some((k, v)) = l.split_once(' ') else { continue };
        let Ok(v) = v.trim().parse::<u64>() else { continue };
        match k {
            "nr_periods" => out[0] = v,
            "nr_throttled" => out[1] = v,
            "throttled_usec" => out[2] = v * 1000,
            "throttled_time" => out[2] = v,
            "burst_usec" => out[3] = v * 1000,
            "burst_time" => out[3] = v,
            "nr_bursts" => out[4] = v,
            _ => {}
        }
    }
    out
}

/// The runner's cgroup in v1's cpuset hierarchy.
fn v1_cpuset_base() -> Result<PathBuf, String> {
    let mounts = cgroup_mounts().map_err(|e| format!("/proc/self/mountinfo: {e}"))?;
    let Some((mnt, ..)) = mounts.iter().find(|(_, t, o)| t == "cgroup" && o.split(',').any(|c| c == "cpuset")) else {
        return Err(
            "cpuset.cpus: no cgroup v1 hierarchy with the cpuset controller is mounted beside the cpu one".into()
        );
    };
    let own = own_path(Some("cpuset"))?;
    Ok(mnt.join(own.trim_start_matches('/')))
}

/// Remove the cgroups a killed runner left behind: `schedlab-PID-*` whose
/// PID is gone. A run killed before its Drop leaves them (empty once its
/// threads are gone), and they would pile up in the runner's cgroup.
fn remove_stale(base: &Path) {
    let Ok(entries) = fs::read_dir(base) else { return };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("schedlab-")).and_then(|n| n.split('-').next())
        else {
            continue;
        };
        if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
            remove_tree(&e.path());
        }
    }
}

/// rmdir a cgroup directory and the cgroups below it, deepest first.
fn remove_tree(dir: &Path) {
    if let Ok(entries) = fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                remove_tree(&e.path());
            }
        }
    }
    if let Err(e) = fs::remove_dir(dir) {
        eprintln!("schedlab-runner: stale cgroup {}: {e}", dir.display());
    }
}

impl Drop for Cgroups {
    /// Remove the cgroups, children first. The scenario's threads have
    /// exited by now; one still leaving its cgroup makes rmdir EBUSY for a
    /// moment, so each is tried a few times.
    fn drop(&mut self) {
        let v1_cpuset = if self.flavor == Flavor::V1 { &self.cpuset_dirs[..] } else { &[] };
        let dirs = self.dirs.iter().skip(1).rev().chain(v1_cpuset.iter().skip(1).rev());
        for d in dirs.filter(|d| !d.as_os_str().is_empty()) {
            for attempt in 0..50 {
                match fs::remove_dir(d) {
                    Err(e) if e.raw_os_error() == Some(libc::EBUSY) && attempt < 49 => {
                        std::thread::sleep(std::time::Duration::from_millis(10))
                    }
                    Err(e) => {
                        eprintln!("schedlab-runner: rmdir {}: {e}", d.display());
                        break;
                    }
                    Ok(()) => break,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_cpu_stat;

    #[test]
    fn cpu_stat_reads_both_flavors_in_ns() {
        let v2 = "usage_usec 5\nuser_usec 4\nsystem_usec 1\nnr_periods 10\nnr_throttled 3\nthrottled_usec 7\n\
                  nr_bursts 2\nburst_usec 9\n";
        assert_eq!(parse_cpu_stat(v2), [10, 3, 7000, 9000, 2]);
        let v1 = "nr_periods 10\nnr_throttled 3\nthrottled_time 7000\nnr_bursts 2\nburst_time 9000\n";
        assert_eq!(parse_cpu_stat(v1), [10, 3, 7000, 9000, 2]);
    }
}
