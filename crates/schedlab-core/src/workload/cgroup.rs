//! `[[cgroup]]`: the scenario's cgroups with the cpu controller (issue 39),
//! as cgroup v2 names their files, and `task.cgroup`, the cgroup a task
//! group's tasks run in. Each becomes a task group (sched/task_group.rs)
//! with a cfs_rq and a group entity on every CPU.
//!
//! ```toml
//! [[cgroup]]
//! path = "/batch"
//! "cpu.weight" = 50        # 1..10000, default 100 (shares 1024)
//!
//! [[cgroup]]
//! path = "/batch/low"
//! "cpu.idle" = 1           # 5.15+: SCHED_IDLE for the whole group
//!
//! [[cgroup]]
//! path = "/capped"
//! "cpu.max" = "50000 100000"   # quota and period in us ("max": none)
//! "cpu.max.burst" = 20000      # 5.14+: us the pool may carry over
//! "cpuset.cpus" = "0-1"        # the CPUs its tasks may run on
//!
//! [[task]]
//! name = "hog"
//! cgroup = "/batch/low"
//! ```

use serde::Deserialize;

use crate::error::{Result, SimError};
use crate::kernel::version::KernelVersion;
pub use crate::sched::task_group::{BandwidthDef, CgroupDef, Partition};
use crate::workload::cpuset;

/// `[[cgroup]]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCgroup {
    path: Option<String>,
    #[serde(rename = "cpu.weight")]
    cpu_weight: Option<i64>,
    #[serde(rename = "cpu.weight.nice")]
    cpu_weight_nice: Option<i64>,
    #[serde(rename = "cpu.idle")]
    cpu_idle: Option<i64>,
    #[serde(rename = "cpu.max")]
    cpu_max: Option<String>,
    #[serde(rename = "cpu.max.burst")]
    cpu_max_burst: Option<i64>,
    #[serde(rename = "cpuset.cpus")]
    cpuset_cpus: Option<String>,
    #[serde(rename = "cpuset.cpus.partition")]
    cpuset_cpus_partition: Option<String>,
    /// Named so that it is refused as not modelled, not as unknown.
    #[serde(rename = "cpuset.mems")]
    cpuset_mems: Option<String>,
}

/// The oldest version whose group entity weight the model computes as the
/// kernel does: calc_group_shares() of 4.15 (cef27403cbe9), the form every
/// later version keeps. cgroup v2's cpu.weight is 4.15 too (0d5936344f30).
pub const CGROUPS_SINCE: (u16, u16) = (4, 15);
/// cpu.idle: "sched: Cgroup SCHED_IDLE support" (304000390f88, 5.15).
pub const CPU_IDLE_SINCE: (u16, u16) = (5, 15);

/// cpu.max.burst: "sched/fair: Introduce the burstable CFS controller"
/// (f4183717b370, 5.14).
pub const CPU_MAX_BURST_SINCE: (u16, u16) = (5, 14);
/// default_cfs_period(): 100 ms.
pub const DEFAULT_CFS_PERIOD_US: u64 = 100_000;
/// min_cfs_quota_period (1 ms) and max_cfs_quota_period (1 s), in us.
const MIN_CFS_QUOTA_PERIOD_US: u64 = 1_000;
const MAX_CFS_QUOTA_PERIOD_US: u64 = 1_000_000;
/// max_cfs_runtime: MAX_BW (2^44 - 1) us.
const MAX_CFS_RUNTIME_US: u64 = (1 << 44) - 1;

/// cpu_max_write() and tg_set_cfs_bandwidth()'s checks: "max" or a quota,
/// then an optional period, in us; a quota of at least 1 ms; a period of
/// 1 ms .. 1 s; a burst no larger than the quota. None: no quota. Also
/// the period and burst as cpu.max and cpu.max.burst read back (without a
/// quota the kernel keeps them, to no effect).
fn bandwidth_of(
    c: &RawCgroup,
    file: &str,
    key: &dyn Fn(&str) -> String,
    version: KernelVersion,
) -> Result<(Option<BandwidthDef>, u64, u64)> {
    let burst = match c.cpu_max_burst {
        None => 0,
        Some(_) if !version.at_least(CPU_MAX_BURST_SINCE.0, CPU_MAX_BURST_SINCE.1) => {
            return Err(SimError::not_modelled(
                file,
                &key("cpu.max.burst"),
                format!("cpu.max.burst on {version}: the kernel has it from 5.14 (f4183717b370)"),
            ))
        }
        Some(b) if (0..=MAX_CFS_RUNTIME_US as i64).contains(&b) => b as u64,
        Some(b) => {
            return Err(SimError::bad_value(file, &key("cpu.max.burst"), b.to_string(), "0..2^44-1 us (default 0)"))
        }
    };
    let Some(text) = c.cpu_max.as_deref() else {
        return Ok((None, DEFAULT_CFS_PERIOD_US, burst));
    };
    let accepted = "\"$MAX $PERIOD\" in us: $MAX \"max\" or 1000.., $PERIOD 1000..1000000 (default 100000)";
    let bad = |why: String| SimError::bad_value(file, &key("cpu.max"), why, accepted);
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.is_empty() || words.len() > 2 {
        return Err(bad(format!("{text:?}")));
    }
    let period = match words.get(1) {
        None => DEFAULT_CFS_PERIOD_US,
        Some(w) => match w.parse::<u64>() {
            Ok(p) if (MIN_CFS_QUOTA_PERIOD_US..=MAX_CFS_QUOTA_PERIOD_US).contains(&p) => p,
            _ => return Err(bad(format!("{text:?}: period {w}"))),
        },
    };
    if words[0] == "max" {
        return Ok((None, period, burst));
    }
    let quota = match words[0].parse::<u64>() {
        Ok(q) if (MIN_CFS_QUOTA_PERIOD_US..=MAX_CFS_RUNTIME_US).contains(&q) => q,
        _ => return Err(bad(format!("{text:?}: quota {}", words[0]))),
    };
    if burst > quota || burst + quota > MAX_CFS_RUNTIME_US {
        return Err(SimError::bad_value(
            file,
            &key("cpu.max.burst"),
            burst.to_string(),
            format!("at most the quota ({quota} us)"),
        ));
    }
    Ok((Some(BandwidthDef { quota: quota * 1000, period: period * 1000, burst: burst * 1000 }), period, burst))
}

/// sched_weight_from_cgroup(): cpu.weight 1..10000 (default 100) as
/// shares, DIV_ROUND_CLOSEST_ULL(weight * 1024, 100).
pub fn shares_of_weight(weight: u64) -> u64 {
    (weight * 1024 + 50) / 100
}

/// Check the cgroups: absolute paths, each listed once, its parent (if not
/// the root) listed before it; a weight in the kernel's range; cpu.idle
/// from 5.15.
/// sched_weight_to_cgroup(): shares as cpu.weight reads them back,
/// DIV_ROUND_CLOSEST_ULL(shares * 100, 1024), within 1..10000.
pub fn cpu_weight_of_shares(shares: u64) -> u64 {
    ((shares * 100 + 512) / 1024).clamp(1, 10_000)
}

pub(crate) fn compile_cgroups(
    raw: &[RawCgroup],
    file: &str,
    version: KernelVersion,
    nr_cpus: usize,
) -> Result<Vec<CgroupDef>> {
    if !raw.is_empty() && !version.at_least(CGROUPS_SINCE.0, CGROUPS_SINCE.1) {
        return Err(SimError::not_modelled(
            file,
            "cgroup",
            format!(
                "cgroups on {version}: the model's group entity weight is calc_group_shares() of 4.15 and later \
                 (choose kernel.version 4.15 or newer)"
            ),
        ));
    }
    let files: Vec<cpuset::CpusetFiles> = raw
        .iter()
        .map(|c| cpuset::CpusetFiles {
            path: c.path.as_deref().unwrap_or_default(),
            cpus: c.cpuset_cpus.as_deref(),
            partition: c.cpuset_cpus_partition.as_deref(),
            mems: c.cpuset_mems.is_some(),
        })
        .collect();
    let (partitions, root_eff) = cpuset::partitions(&files, file, version, nr_cpus)?;
    let mut out: Vec<CgroupDef> = Vec::with_capacity(raw.len());
    for (i, c) in raw.iter().enumerate() {
        let key = |k: &str| format!("cgroup[{i}].{k}");
        let Some(path) = c.path.as_deref() else {
            return Err(SimError::MissingKey { at: crate::error::Location { file: file.into(), key: key("path") } });
        };
        let parts: Vec<&str> = path.split('/').collect();
        if !path.starts_with('/') || path == "/" || parts[1..].iter().any(|p| p.is_empty() || *p == "." || *p == "..") {
            return Err(SimError::bad_value(
                file,
                &key("path"),
                format!("{path:?}"),
                "an absolute path below the root, such as \"/a\" or \"/a/b\" (the root, \"/\", is implicit)",
            ));
        }
        if out.iter().any(|d| d.path == path) {
            return Err(SimError::bad_value(file, &key("path"), format!("{path:?} is listed twice"), "each path once"));
        }
        let parent_path = &path[..path.rfind('/').unwrap_or(0)];
        let parent = if parent_path.is_empty() {
            0
        } else {
            match out.iter().find(|d| d.path == parent_path) {
                Some(d) => d.tg,
                None => {
                    return Err(SimError::bad_value(
                        file,
                        &key("path"),
                        format!("{path:?}: its parent {parent_path:?} is not a [[cgroup]] listed before it"),
                        "a cgroup's parent listed before it (cgroupfs makes a directory's parent first)",
                    ))
                }
            }
        };
        let shares = match (c.cpu_weight, c.cpu_weight_nice) {
            (Some(_), Some(_)) => {
                return Err(SimError::bad_value(
                    file,
                    &key("cpu.weight.nice"),
                    "given with cpu.weight (both write the one weight)",
                    "cpu.weight or cpu.weight.nice",
                ))
            }
            (Some(w), None) if (1..=10_000).contains(&w) => shares_of_weight(w as u64),
            (Some(w), None) => {
                return Err(SimError::bad_value(file, &key("cpu.weight"), w.to_string(), "1..10000 (default 100)"))
            }
            (None, Some(n)) if crate::prio::is_nice(n) => {
                // cpu_weight_nice_write_s64(): the weight of a task of that nice.
                crate::prio::SCHED_PRIO_TO_WEIGHT[(n - crate::prio::MIN_NICE as i64) as usize] as u64
            }
            (None, Some(n)) => {
                return Err(SimError::bad_value(
                    file,
                    &key("cpu.weight.nice"),
                    n.to_string(),
                    crate::prio::nice_range(),
                ))
            }
            (None, None) => 1024,
        };
        let idle = match c.cpu_idle {
            None | Some(0) => false,
            Some(1) if version.at_least(CPU_IDLE_SINCE.0, CPU_IDLE_SINCE.1) => true,
            Some(1) => {
                return Err(SimError::not_modelled(
                    file,
                    &key("cpu.idle"),
                    format!("cpu.idle on {version}: the kernel has it from 5.15 (304000390f88)"),
                ))
            }
            Some(v) => return Err(SimError::bad_value(file, &key("cpu.idle"), v.to_string(), "0 or 1")),
        };
        let (bandwidth, max_period_us, max_burst_us) = bandwidth_of(c, file, &key, version)?;
        let parent_eff = match parent {
            0 => root_eff.as_ref(),
            p => out[p - 1].cpus_effective.as_ref(),
        };
        let (cpuset_cpus, cpus_effective) =
            cpuset::cpuset_of(&files[i], partitions[i], parent_eff, file, &key, nr_cpus)?;
        out.push(CgroupDef {
            path: path.to_string(),
            tg: i + 1,
            parent,
            shares,
            weight_nice: c.cpu_weight_nice,
            idle,
            bandwidth,
            max_period_us,
            max_burst_us,
            autogroup: None,
            cpuset_cpus,
            cpus_effective,
            partition: partitions[i],
        });
    }
    Ok(out)
}

/// `[[session]]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSession {
    name: Option<String>,
    /// The autogroup's nice, as `echo N > /proc/PID/autogroup` sets it.
    nice: Option<i64>,
}

/// Autogroups on the model's group scheduling, which starts at 4.15.
pub const AUTOGROUP_SINCE: (u16, u16) = CGROUPS_SINCE;

/// The sessions (`[[session]]`, `task.session`) and their autogroups.
///
/// A session is what setsid() starts; with `kernel.sched_autogroup_enabled`
/// (2.6.38+) setsid() gives it an autogroup (sched_autogroup_create_attach):
/// a task group below the root whose shares are the weight of the
/// autogroup's nice (proc_sched_autogroup_set_nice), and a task whose cgroup
/// is the root runs in its session's autogroup instead
/// (autogroup_task_group, task_wants_autogroup). Tasks in another cgroup
/// stay there. Tasks without a session are init's: autogroup_default, the
/// root. Each autogroup becomes a CgroupDef after the cgroups, with the
/// path "/autogroup-NAME". Deviation: the kernel names it by a global
/// sequence number (/autogroup-186); the model by its session, as the
/// real-kernel runner reports it too.
pub(crate) fn compile_sessions(
    raw: &[RawSession],
    tasks: &[crate::workload::compile::RawTask],
    groups: &mut [crate::workload::TaskGroup],
    cgroups: &mut Vec<CgroupDef>,
    file: &str,
    kernel: &crate::kernel::KernelConfig,
) -> Result<Vec<(String, i64)>> {
    let mut sessions: Vec<(String, i64)> = Vec::with_capacity(raw.len());
    for (i, r) in raw.iter().enumerate() {
        let key = |k: &str| format!("session[{i}].{k}");
        let Some(name) = r.name.as_deref() else {
            return Err(SimError::MissingKey { at: crate::error::Location { file: file.into(), key: key("name") } });
        };
        if name.is_empty() || name.contains(['/', ' ']) {
            return Err(SimError::bad_value(file, &key("name"), format!("{name:?}"), "a name without '/' or spaces"));
        }
        if sessions.iter().any(|(n, _)| n == name) {
            return Err(SimError::bad_value(file, &key("name"), format!("{name:?} is listed twice"), "each name once"));
        }
        let nice = r.nice.unwrap_or(0);
        if !crate::prio::is_nice(nice) {
            return Err(SimError::bad_value(file, &key("nice"), nice.to_string(), crate::prio::nice_range()));
        }
        sessions.push((name.to_string(), nice));
    }
    let enabled = kernel.sysctl.sched_autogroup_enabled == 1;
    let mut tg_of: Vec<Option<usize>> = vec![None; sessions.len()];
    for (i, t) in tasks.iter().enumerate() {
        let Some(name) = t.session.as_deref() else { continue };
        let key = format!("task[{i}].session");
        let Some(s) = sessions.iter().position(|(n, _)| n == name) else {
            let listed: Vec<&str> = sessions.iter().map(|(n, _)| n.as_str()).collect();
            return Err(SimError::bad_value(
                file,
                &key,
                format!("{name:?} is not a [[session]]"),
                if listed.is_empty() {
                    "the name of a [[session]] (none is listed)".to_string()
                } else {
                    format!("one of {}", listed.join(", "))
                },
            ));
        };
        // task_wants_autogroup(): only a task whose cgroup is the root.
        if !enabled || groups[i].cgroup != 0 {
            continue;
        }
        if !kernel.version.at_least(AUTOGROUP_SINCE.0, AUTOGROUP_SINCE.1) {
            return Err(SimError::not_modelled(
                file,
                &key,
                format!(
                    "autogroup on {}: the model's group scheduling starts at 4.15 (choose kernel.version 4.15 or \
                     newer, or kernel.sysctl.\"kernel.sched_autogroup_enabled\" = 0)",
                    kernel.version
                ),
            ));
        }
        let tg = match tg_of[s] {
            Some(tg) => tg,
            None => {
                let (name, nice) = &sessions[s];
                let path = format!("/autogroup-{name}");
                if cgroups.iter().any(|c| c.path == path) {
                    return Err(SimError::bad_value(
                        file,
                        &key,
                        format!("session {name:?}'s autogroup would be {path:?}, a [[cgroup]]'s path"),
                        "a session name whose \"/autogroup-NAME\" no [[cgroup]] has",
                    ));
                }
                let tg = cgroups.len() + 1;
                cgroups.push(CgroupDef {
                    path,
                    tg,
                    parent: 0,
                    shares: crate::prio::SCHED_PRIO_TO_WEIGHT[(*nice - crate::prio::MIN_NICE as i64) as usize] as u64,
                    weight_nice: None,
                    idle: false,
                    bandwidth: None,
                    max_period_us: DEFAULT_CFS_PERIOD_US,
                    max_burst_us: 0,
                    autogroup: Some(name.clone()),
                    cpuset_cpus: None,
                    cpus_effective: None,
                    partition: Partition::Member,
                });
                tg_of[s] = Some(tg);
                tg
            }
        };
        groups[i].cgroup = tg;
    }
    Ok(sessions)
}

/// The task group of `task[i].cgroup` (None or "/": the root's, 0).
pub(crate) fn cgroup_of(path: Option<&str>, cgroups: &[CgroupDef], file: &str, key: &str) -> Result<usize> {
    match path {
        None | Some("/") => Ok(0),
        Some(p) => cgroups.iter().find(|d| d.path == p).map(|d| d.tg).ok_or_else(|| {
            let listed: Vec<&str> = cgroups.iter().map(|d| d.path.as_str()).collect();
            SimError::bad_value(
                file,
                key,
                format!("{p:?} is not a [[cgroup]]"),
                if listed.is_empty() {
                    "\"/\", or the path of a [[cgroup]] (none is listed)".to_string()
                } else {
                    format!("\"/\" or one of {}", listed.join(", "))
                },
            )
        }),
    }
}

#[cfg(test)]
mod tests {
    fn load(text: &str) -> crate::error::Result<crate::scenario::Scenario> {
        let base = "name = \"c\"\n[machine]\npreset = \"4cpu\"\n[kernel]\nversion = \"6.12\"\n";
        crate::scenario::load(&format!("{base}{text}"), "c.toml", &[])
    }

    #[test]
    fn weights_and_paths_are_the_kernels() {
        assert_eq!(super::shares_of_weight(100), 1024);
        assert_eq!(super::shares_of_weight(1), 10);
        assert_eq!(super::shares_of_weight(10_000), 102_400);
        let sc = load(
            "[[cgroup]]\npath = \"/a\"\n\"cpu.weight\" = 200\n[[cgroup]]\npath = \"/a/b\"\n\"cpu.weight.nice\" = 19\n\
             [[cgroup]]\npath = \"/c\"\n\"cpu.idle\" = 1\n\
             [[task]]\nname = \"t\"\ncgroup = \"/a/b\"\nprogram = [{ run = \"1ms\" }]\n",
        )
        .expect("scenario");
        let shares: Vec<(usize, usize, u64, bool)> =
            sc.cgroups.iter().map(|c| (c.tg, c.parent, c.shares, c.idle)).collect();
        assert_eq!(shares, vec![(1, 0, 2048, false), (2, 1, 15, false), (3, 0, 1024, true)]);
        assert_eq!(sc.groups[0].cgroup, 2);
    }

    #[test]
    fn cpu_max_reads_back_as_written() {
        let sc = load(
            "[[cgroup]]\npath = \"/q\"\n\"cpu.max\" = \"25000\"\n\"cpu.max.burst\" = 5000\n\
             [[cgroup]]\npath = \"/m\"\n\"cpu.max\" = \"max 50000\"\n\"cpu.max.burst\" = 7000\n",
        )
        .expect("scenario");
        let q = &sc.cgroups[0];
        let b = q.bandwidth.expect("a quota");
        assert_eq!((b.quota, b.period, b.burst), (25_000_000, 100_000_000, 5_000_000));
        let m = &sc.cgroups[1];
        assert_eq!((m.bandwidth, m.max_period_us, m.max_burst_us), (None, 50_000, 7_000));
    }

    #[test]
    fn bad_cgroups_name_the_key() {
        let cases = [
            ("[[cgroup]]\n\"cpu.weight\" = 10\n", "cgroup[0].path: required key is missing"),
            ("[[cgroup]]\npath = \"a\"\n", "cgroup[0].path: \"a\""),
            ("[[cgroup]]\npath = \"/a/\"\n", "cgroup[0].path: \"/a/\""),
            ("[[cgroup]]\npath = \"/a/b\"\n", "its parent \"/a\" is not a [[cgroup]] listed before it"),
            ("[[cgroup]]\npath = \"/a\"\n[[cgroup]]\npath = \"/a\"\n", "cgroup[1].path: \"/a\" is listed twice"),
            ("[[cgroup]]\npath = \"/a\"\n\"cpu.weight\" = 0\n", "cgroup[0].cpu.weight: 0; accepted: 1..10000"),
            (
                "[[cgroup]]\npath = \"/a\"\n\"cpu.weight.nice\" = 20\n",
                "cgroup[0].cpu.weight.nice: 20; accepted: -20..19",
            ),
            ("[[cgroup]]\npath = \"/a\"\n\"cpu.idle\" = 2\n", "cgroup[0].cpu.idle: 2; accepted: 0 or 1"),
            ("[[cgroup]]\npath = \"/a\"\n\"cpu.max\" = \"500\"\n", "cgroup[0].cpu.max: \"500\": quota 500"),
            ("[[cgroup]]\npath = \"/a\"\n\"cpu.max\" = \"max 10\"\n", "cgroup[0].cpu.max: \"max 10\": period 10"),
            ("[[cgroup]]\npath = \"/a\"\n\"cpu.max\" = \"1 2 3\"\n", "cgroup[0].cpu.max: \"1 2 3\""),
            (
                "[[cgroup]]\npath = \"/a\"\n\"cpu.max\" = \"5000\"\n\"cpu.max.burst\" = 6000\n",
                "cgroup[0].cpu.max.burst: 6000; accepted: at most the quota (5000 us)",
            ),
            ("[[cgroup]]\npath = \"/a\"\n\"cpu.stat\" = 1\n", "cgroup[0].cpu.stat: unknown key"),
            (
                "[[task]]\nname = \"t\"\ncgroup = \"/x\"\nprogram = [{ run = \"1ms\" }]\n",
                "task[0].cgroup: \"/x\" is not a [[cgroup]]",
            ),
        ];
        for (text, want) in cases {
            let e = load(text).expect_err(text).to_string();
            assert!(e.contains(want), "{text}: {e}");
        }
    }

    #[test]
    fn a_sessions_root_tasks_run_in_its_autogroup() {
        let sc = load(
            "[[cgroup]]\npath = \"/c\"\n[[session]]\nname = \"s\"\nnice = 5\n[[session]]\nname = \"idle\"\n\
             [[task]]\nname = \"a\"\nsession = \"s\"\nprogram = [{ run = \"1ms\" }]\n\
             [[task]]\nname = \"b\"\nsession = \"s\"\ncgroup = \"/c\"\nprogram = [{ run = \"1ms\" }]\n\
             [[task]]\nname = \"r\"\nprogram = [{ run = \"1ms\" }]\n",
        )
        .expect("scenario");
        // One autogroup (the unused session has none), nice 5's weight, after the cgroups.
        let ag: Vec<(String, usize, u64, Option<&str>)> =
            sc.cgroups.iter().map(|c| (c.path.clone(), c.tg, c.shares, c.autogroup.as_deref())).collect();
        assert_eq!(ag, vec![("/c".into(), 1, 1024, None), ("/autogroup-s".into(), 2, 335, Some("s"))]);
        // task_wants_autogroup(): a task in a cgroup stays there; one without a session is init's.
        let tgs: Vec<usize> = sc.groups.iter().map(|g| g.cgroup).collect();
        assert_eq!(tgs, vec![2, 1, 0]);
        let off = load(
            "[kernel.sysctl]\n\"kernel.sched_autogroup_enabled\" = 0\n[[session]]\nname = \"s\"\n\
             [[task]]\nname = \"a\"\nsession = \"s\"\nprogram = [{ run = \"1ms\" }]\n",
        )
        .expect("scenario");
        assert!(off.cgroups.is_empty() && off.groups[0].cgroup == 0);
    }

    #[test]
    fn bad_sessions_name_the_key() {
        let task = "[[task]]\nname = \"t\"\nsession = \"s\"\nprogram = [{ run = \"1ms\" }]\n";
        let cases = [
            ("[[session]]\nnice = 1\n".to_string(), "session[0].name: required key is missing"),
            ("[[session]]\nname = \"a/b\"\n".to_string(), "session[0].name: \"a/b\""),
            (
                "[[session]]\nname = \"s\"\n[[session]]\nname = \"s\"\n".to_string(),
                "session[1].name: \"s\" is listed twice",
            ),
            ("[[session]]\nname = \"s\"\nnice = 20\n".to_string(), "session[0].nice: 20; accepted: -20..19"),
            (
                task.to_string(),
                "task[0].session: \"s\" is not a [[session]]; accepted: the name of a [[session]] (none is listed)",
            ),
            (
                format!("[[cgroup]]\npath = \"/autogroup-s\"\n[[session]]\nname = \"s\"\n{task}"),
                "would be \"/autogroup-s\", a [[cgroup]]'s path",
            ),
        ];
        for (text, want) in cases {
            let e = load(&text).expect_err(&text).to_string();
            assert!(e.contains(want), "{text}: {e}");
        }
        let old = format!(
            "name = \"c\"\n[machine]\npreset = \"4cpu\"\n[kernel]\nversion = \"4.14\"\n[[session]]\nname = \"s\"\n{task}"
        );
        let e = crate::scenario::load(&old, "c.toml", &[]).expect_err("4.14");
        assert_eq!(e.code(), "SL120", "{e}");
        assert!(e.to_string().contains("task[0].session: not modelled by schedlab: autogroup on 4.14"), "{e}");
        // Before 2.6.38 there is no autogroup: a session changes nothing.
        let none = old.replace("4.14", "2.6.36");
        let sc = crate::scenario::load(&none, "c.toml", &[]).expect("2.6.36");
        assert!(sc.cgroups.is_empty());
    }

    #[test]
    fn cpuset_cpus_is_intersected_down_the_tree_and_with_the_tasks_cpus() {
        let sc = load(
            "[[cgroup]]\npath = \"/a\"\n\"cpuset.cpus\" = \"0-1\"\n\
             [[cgroup]]\npath = \"/a/b\"\n\"cpuset.cpus\" = \"1-3\"\n\
             [[cgroup]]\npath = \"/a/c\"\n\"cpuset.cpus\" = \"2-3\"\n\
             [[cgroup]]\npath = \"/a/e\"\n\
             [[cgroup]]\npath = \"/f\"\n\"cpuset.cpus\" = \"0-3\"\n\
             [[task]]\nname = \"t\"\ncgroup = \"/a/b\"\nprogram = [{ run = \"1ms\" }]\n\
             [[task]]\nname = \"u\"\ncgroup = \"/a\"\ncpus = \"1-2\"\nprogram = [{ run = \"1ms\" }]\n\
             [[task]]\nname = \"v\"\ncgroup = \"/f\"\ncpus = \"3\"\nprogram = [{ run = \"1ms\" }]\n",
        )
        .expect("scenario");
        let eff: Vec<Option<String>> =
            sc.cgroups.iter().map(|c| c.cpus_effective.as_ref().map(|m| m.to_list_string())).collect();
        // compute_effective_cpumask(): 1-3 within 0-1 is 1; 2-3 shares none, so
        // /a/c inherits 0-1, as /a/e (no cpuset.cpus of its own) does; every
        // CPU is the root's (None).
        let want = [Some("0-1"), Some("1"), Some("0-1"), Some("0-1"), None];
        assert_eq!(eff, want.map(|w| w.map(String::from)));
        let cpus: Vec<String> = sc.groups.iter().map(|g| g.cpus.to_list_string()).collect();
        assert_eq!(cpus, ["1", "1", "3"]);
        // sched_setaffinity() with no CPU of the cpuset: EINVAL.
        let e = load(
            "[[cgroup]]\npath = \"/a\"\n\"cpuset.cpus\" = \"0\"\n\
             [[task]]\nname = \"t\"\ncgroup = \"/a\"\ncpus = \"2-3\"\nprogram = [{ run = \"1ms\" }]\n",
        )
        .expect_err("disjoint");
        assert!(
            e.to_string().contains("task[0].cpus: 2-3 shares no CPU with cgroup /a's cpuset.cpus.effective 0"),
            "{e}"
        );
    }

    #[test]
    fn cpusets_not_modelled_are_refused() {
        let cases = [
            ("\"cpuset.cpus\" = \"4\"", "SL110", "cgroup[0].cpuset.cpus: \"4\": CPU 4 is outside the machine"),
            ("\"cpuset.cpus.partition\" = \"isolated\"", "SL102", "a partition of /a without cpuset.cpus"),
            ("\"cpuset.cpus.partition\" = \"x\"", "SL102", "accepted: \"member\", \"root\" or \"isolated\""),
            ("\"cpuset.mems\" = \"0\"", "SL120", "cgroup[0].cpuset.mems"),
        ];
        for (line, code, want) in cases {
            let e = load(&format!("[[cgroup]]\npath = \"/a\"\n{line}\n")).expect_err(line);
            assert!(e.to_string().contains(want), "{line}: {e}");
            assert_eq!(e.code(), code, "{line}: {e}");
        }
        let member = load("[[cgroup]]\npath = \"/a\"\n\"cpuset.cpus.partition\" = \"member\"\n").expect("member");
        assert!(member.cgroups[0].cpus_effective.is_none());
    }

    #[test]
    fn versions_without_the_mechanism_refuse_it() {
        let old =
            "name = \"c\"\n[machine]\npreset = \"4cpu\"\n[kernel]\nversion = \"4.14\"\n[[cgroup]]\npath = \"/a\"\n";
        let e = crate::scenario::load(old, "c.toml", &[]).expect_err("4.14");
        assert_eq!(e.code(), "SL120", "{e}");
        let idle = "name = \"c\"\n[machine]\npreset = \"4cpu\"\n[kernel]\nversion = \"5.10\"\n\
                    [[cgroup]]\npath = \"/a\"\n\"cpu.idle\" = 1\n";
        let e = crate::scenario::load(idle, "c.toml", &[]).expect_err("5.10 cpu.idle");
        assert!(e.to_string().contains("cgroup[0].cpu.idle"), "{e}");
    }
}
