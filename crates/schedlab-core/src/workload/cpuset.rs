//! cgroup v2's cpuset controller on the scenario's cgroups
//! (kernel/cgroup/cpuset.c): `cpuset.cpus`, the effective CPUs it gives
//! each cgroup and its tasks, and `cpuset.cpus.partition`.
//!
//! A partition root takes its CPUs for itself: they leave the root
//! cpuset's effective CPUs, and so the CPUs of every task and cgroup
//! outside it (update_tasks_cpumask(); bound per-CPU kernel threads keep
//! theirs), and the sched domains are rebuilt (rebuild_sched_domains():
//! generate_sched_domains() gives a `root` partition a cpu_map of its own,
//! an `isolated` one none, the NULL domain: sched/sd_build.rs).
//!
//! ```toml
//! [[cgroup]]
//! path = "/rt"
//! "cpuset.cpus" = "2-3"
//! "cpuset.cpus.partition" = "root"   # or "isolated"; "member", the default
//! ```
//!
//! The model takes local partitions of the root (a top-level cgroup), as
//! valid partition roots need (cgroup-v2.rst): cpuset.cpus of their own,
//! apart from every sibling's cpuset.cpus (6.1's validate_change() refuses
//! an exclusive cgroup overlapping a sibling), at least one CPU left to the
//! root, whose tasks need one. What the kernel would read back as
//! "root invalid (...)" is refused here with the reason. Not modelled,
//! refused: partitions below another cgroup (6.7's remote partitions and
//! cpuset.cpus.exclusive), CPUs of isolcpus= in a partition, deadline
//! tasks beside partitions (the kernel admits them per root domain; the
//! model has one, sched/sd_build.rs), and cpuset.mems.
//! Deviation: the model's own kernel threads (unbound workqueues' workers,
//! kswapd) keep their CPUs; the kernel's unbound ones leave a partition's.

use crate::cpumask::CpuMask;
use crate::error::{Result, SimError};
use crate::kernel::version::KernelVersion;
use crate::sched::task_group::{CgroupDef, Partition};
use crate::workload::TaskGroup;

/// A cgroup's cpuset files as the scenario writes them.
pub(crate) struct CpusetFiles<'a> {
    pub path: &'a str,
    pub cpus: Option<&'a str>,
    pub partition: Option<&'a str>,
    /// Whether cpuset.mems is written (refused).
    pub mems: bool,
}

/// cpuset.cpus.partition "root": cgroup v2's cpuset partitions (5.0).
pub const PARTITION_ROOT_SINCE: (u16, u16) = (5, 0);
/// The "isolated" partition type (5.15).
pub const PARTITION_ISOLATED_SINCE: (u16, u16) = (5, 15);

/// Each cgroup's partition type, checked, and the root cpuset's effective
/// CPUs when partitions take some (None: every CPU).
pub(crate) fn partitions(
    raw: &[CpusetFiles],
    file: &str,
    version: KernelVersion,
    nr_cpus: usize,
) -> Result<(Vec<Partition>, Option<CpuMask>)> {
    let mut types = Vec::with_capacity(raw.len());
    for (i, c) in raw.iter().enumerate() {
        let key = format!("cgroup[{i}].cpuset.cpus.partition");
        let (p, since) = match c.partition {
            None | Some("member") => (Partition::Member, (0, 0)),
            Some("root") => (Partition::Root, PARTITION_ROOT_SINCE),
            Some("isolated") => (Partition::Isolated, PARTITION_ISOLATED_SINCE),
            Some(p) => {
                return Err(SimError::bad_value(file, &key, format!("{p:?}"), "\"member\", \"root\" or \"isolated\""))
            }
        };
        if !version.at_least(since.0, since.1) {
            return Err(SimError::not_modelled(
                file,
                &key,
                format!(
                    "a {:?} partition on {version}: the kernel has it from {}.{}",
                    c.partition.unwrap_or_default(),
                    since.0,
                    since.1
                ),
            ));
        }
        types.push(p);
    }
    let mut taken = CpuMask::new(nr_cpus);
    for (i, c) in raw.iter().enumerate().filter(|&(i, _)| types[i] != Partition::Member) {
        let key = format!("cgroup[{i}].cpuset.cpus.partition");
        let path = c.path;
        if path.is_empty() {
            continue; // compile_cgroups() names the missing path
        }
        if path.matches('/').count() != 1 {
            return Err(SimError::not_modelled(
                file,
                &key,
                format!(
                    "a partition at {path:?}: the model's partitions are the root's children (local partitions of \
                     the root; a partition below another cgroup, local or remote, is not modelled)"
                ),
            ));
        }
        let cpus = own_cpus(c, nr_cpus).ok_or_else(|| {
            SimError::bad_value(
                file,
                &key,
                format!("a partition of {path} without cpuset.cpus (the kernel reads back \"root invalid\")"),
                "a partition root with cpuset.cpus of its own",
            )
        })?;
        for (j, other) in raw.iter().enumerate() {
            let sibling = other.path.matches('/').count() == 1;
            if j == i || !sibling {
                continue;
            }
            if let Some(theirs) = own_cpus(other, nr_cpus).filter(|t| t.intersects(&cpus)) {
                return Err(SimError::bad_value(
                    file,
                    &format!("cgroup[{i}].cpuset.cpus"),
                    format!(
                        "partition {path} shares CPUs {} with {}'s cpuset.cpus (a partition's CPUs are exclusive \
                         among its siblings: the kernel reads back \"root invalid\")",
                        cpus.and(&theirs).to_list_string(),
                        other.path
                    ),
                    "a partition's cpuset.cpus apart from every sibling's",
                ));
            }
        }
        taken.or_assign(&cpus);
    }
    if taken.is_empty() {
        return Ok((types, None));
    }
    let root_eff = CpuMask::full(nr_cpus).andnot(&taken);
    if root_eff.is_empty() {
        return Err(SimError::bad_value(
            file,
            "cgroup",
            format!("the partitions take every CPU ({})", taken.to_list_string()),
            "at least one CPU left to the root cpuset, whose tasks need one",
        ));
    }
    Ok((types, Some(root_eff)))
}

/// The CPUs a cgroup's cpuset.cpus lists, if it lists any (an unparsable
/// list is reported by cpuset_of()).
fn own_cpus(c: &CpusetFiles, nr_cpus: usize) -> Option<CpuMask> {
    let text = c.cpus.filter(|t| !t.trim().is_empty())?;
    CpuMask::parse_list(text, nr_cpus).ok().filter(|m| !m.is_empty())
}

/// cpuset.cpus and the effective CPUs it gives: update_cpumask() takes a
/// list of online CPUs (empty: none of its own);
/// compute_effective_cpumask() intersects it with the parent's effective
/// CPUs (`parent_eff`, None: every CPU), and where that leaves none (or
/// the file is empty) the cgroup inherits the parent's
/// (update_cpumasks_hier(), cpuset_css_online()). A partition root's
/// effective CPUs are its own. v1's cpuset gives the same effective CPUs
/// when each cgroup's cpus are a subset of its parent's, as v1 requires.
pub(crate) fn cpuset_of(
    c: &CpusetFiles,
    partition: Partition,
    parent_eff: Option<&CpuMask>,
    file: &str,
    key: &dyn Fn(&str) -> String,
    nr_cpus: usize,
) -> Result<(Option<CpuMask>, Option<CpuMask>)> {
    if c.mems {
        return Err(SimError::not_modelled(
            file,
            &key("cpuset.mems"),
            "cpuset.mems: the model allocates a task's memory on its CPU's node, with no per-cgroup node mask"
                .to_string(),
        ));
    }
    let parent_eff = parent_eff.cloned();
    let Some(text) = c.cpus else { return Ok((None, parent_eff)) };
    let accepted = || format!("CPUs 0-{} as \"0-3,6\" (\"\": none of its own)", nr_cpus - 1);
    if text.trim().is_empty() {
        return Ok((None, parent_eff));
    }
    let mask = CpuMask::parse_list(text, nr_cpus)
        .map_err(|m| SimError::topology(file, &key("cpuset.cpus"), format!("{text:?}: {m}"), accepted()))?;
    let eff = match &parent_eff {
        _ if partition != Partition::Member => Some(mask.clone()),
        Some(p) if !mask.intersects(p) => parent_eff.clone(),
        Some(p) => Some(mask.and(p)),
        None => Some(mask.clone()),
    };
    // Every CPU is the root's effective set: say None, as for the root.
    let eff = eff.filter(|e| e.weight() < nr_cpus);
    Ok((Some(mask), eff))
}

/// A task's CPUs in its cgroup: sched_setaffinity() after the cgroup is
/// joined takes the CPUs asked for that the cpuset allows
/// (__sched_setaffinity(): cpuset_cpus_allowed() and the mask), and
/// fails with EINVAL where they share none.
pub(crate) fn cpus_in_cgroup(cpus: &CpuMask, cg: &CgroupDef, file: &str, key: &str) -> Result<Option<CpuMask>> {
    let Some(eff) = &cg.cpus_effective else { return Ok(None) };
    cpus_within(cpus, eff, &cg.path, file, key).map(Some)
}

fn cpus_within(cpus: &CpuMask, eff: &CpuMask, path: &str, file: &str, key: &str) -> Result<CpuMask> {
    if !cpus.intersects(eff) {
        return Err(SimError::bad_value(
            file,
            key,
            format!(
                "{} shares no CPU with cgroup {path}'s cpuset.cpus.effective {} (sched_setaffinity fails with EINVAL)",
                cpus.to_list_string(),
                eff.to_list_string()
            ),
            format!("CPUs with at least one of {}, or no cpus (all of them)", eff.to_list_string()),
        ));
    }
    Ok(cpus.and(eff))
}

/// Tasks of the root cpuset (the root cgroup and its autogroups) beside
/// partitions: their CPUs within the root's effective CPUs
/// (update_tasks_cpumask()), but a bound per-CPU kernel thread's; and no
/// deadline task anywhere (one root domain in the model).
pub(crate) fn apply_partitions(groups: &mut [TaskGroup], cgroups: &[CgroupDef], file: &str) -> Result<()> {
    let nr = groups.first().map_or(0, |g| g.cpus.nr_cpu_ids());
    let mut taken = CpuMask::new(nr);
    cgroups.iter().filter(|c| c.partition != Partition::Member).for_each(|c| {
        taken.or_assign(c.cpus_effective.as_ref().expect("a partition has its CPUs"));
    });
    if taken.is_empty() {
        return Ok(());
    }
    let root_eff = CpuMask::full(nr).andnot(&taken);
    for (i, g) in groups.iter_mut().enumerate() {
        if g.policy.is_dl() {
            return Err(SimError::not_modelled(
                file,
                &format!("task[{i}].policy"),
                "SCHED_DEADLINE beside cpuset partitions: the kernel admits deadline tasks per root domain, one \
                 per partition; the model has one"
                    .to_string(),
            ));
        }
        let in_root = g.cgroup == 0 || cgroups[g.cgroup - 1].autogroup.is_some();
        if !in_root || (g.kthread && g.cpus.weight() == 1) {
            continue;
        }
        g.cpus = cpus_within(&g.cpus, &root_eff, "/", file, &format!("task[{i}].cpus"))?;
    }
    Ok(())
}

/// The CPUs of the partitions of `kind`, each partition's as a mask.
pub(crate) fn partition_cpus(cgroups: &[CgroupDef], kind: Partition) -> Vec<CpuMask> {
    cgroups.iter().filter(|c| c.partition == kind).filter_map(|c| c.cpus_effective.clone()).collect()
}

#[cfg(test)]
#[path = "cpuset_tests.rs"]
mod tests;
