//! `kernel.isolcpus`: the isolcpus= boot parameter
//! (kernel/sched/isolation.c housekeeping_isolcpus_setup()), with the
//! `domain` flag, its default: the CPUs listed are left out of the sched
//! domains (sched_init_domains() builds over the housekeeping CPUs,
//! HK_TYPE_DOMAIN, and attaches the others to the NULL domain: no load
//! balancing, no NOHZ idle balancing, a wakeup stays on the CPU it is
//! given), and init's affinity is the housekeeping CPUs (sched_init_smp(),
//! "Move init over to a non-isolated CPU"), so a task that does not set its
//! own CPUs never runs there. Kernel threads keep every CPU (kthreadd's
//! affinity follows HK_TYPE_KTHREAD, which only `nohz` sets).
//!
//! ```toml
//! [kernel]
//! isolcpus = "2-3"          # or "domain,2-3"
//! ```
//!
//! Not modelled, refused (SL120): the `nohz` flag (nohz_full: no tick on
//! a CPU with one task) and `managed_irq` (managed interrupts kept off the
//! CPUs); RT and deadline tasks whose CPUs span isolated and housekeeping
//! CPUs, and deadline tasks at all, since the model has one root domain
//! where the kernel has the housekeeping CPUs' and def_root_domain.
//! Deviation: unbound workqueues keep every CPU (newer kernels restrict
//! wq_unbound_cpumask to the housekeeping CPUs).

use crate::cpumask::CpuMask;
use crate::error::{Result, SimError};
use crate::workload::TaskGroup;

/// The isolated CPUs of `kernel.isolcpus` (None: not given).
pub(crate) fn parse_isolcpus(text: Option<&str>, file: &str, nr_cpus: usize) -> Result<Option<CpuMask>> {
    let Some(text) = text else { return Ok(None) };
    let key = "kernel.isolcpus";
    let accepted = || format!("\"[domain,]LIST\" with LIST CPUs of 0-{} as \"2-3\"", nr_cpus - 1);
    let mut rest = text.trim();
    // housekeeping_isolcpus_setup(): flags are the alphabetic words before the list.
    while rest.starts_with(|c: char| c.is_ascii_alphabetic()) {
        let (flag, tail) = rest.split_once(',').unwrap_or((rest, ""));
        match flag {
            "domain" => {}
            "nohz" | "managed_irq" => {
                return Err(SimError::not_modelled(
                    file,
                    key,
                    format!(
                        "isolcpus={text}: the {flag} flag ({}); accepted: \"domain\" (the default)",
                        if flag == "nohz" {
                            "nohz_full: no tick on a CPU with one task"
                        } else {
                            "managed interrupts kept off the isolated CPUs"
                        }
                    ),
                ))
            }
            _ => return Err(SimError::bad_value(file, key, format!("{text:?}: flag {flag:?}"), accepted())),
        }
        rest = tail;
    }
    let mask = CpuMask::parse_list(rest, nr_cpus)
        .map_err(|m| SimError::topology(file, key, format!("{text:?}: {m}"), accepted()))?;
    if mask.weight() == nr_cpus {
        return Err(SimError::topology(
            file,
            key,
            format!("{text:?} isolates every CPU (the kernel keeps the boot CPU for housekeeping)"),
            "at least one CPU left out of the list",
        ));
    }
    Ok(Some(mask))
}

/// Tasks under isolcpus: a group that sets no CPUs of its own gets init's,
/// the housekeeping CPUs (kernel threads keep every CPU); RT tasks must not
/// span both sides and deadline tasks are refused (one root domain).
/// `given[i]`: whether group i set its CPUs.
pub(crate) fn apply_isolcpus(groups: &mut [TaskGroup], given: &[bool], iso: &CpuMask, file: &str) -> Result<()> {
    let nr = iso.nr_cpu_ids();
    let mut housekeeping = CpuMask::full(nr);
    for c in iso.iter() {
        housekeeping.clear(c);
    }
    for (i, g) in groups.iter_mut().enumerate() {
        let key = format!("task[{i}].cpus");
        if !given.get(i).copied().unwrap_or(g.cpus.weight() < nr) && !g.kthread {
            g.cpus = housekeeping.clone();
        }
        if g.policy.is_dl() {
            return Err(SimError::not_modelled(
                file,
                &format!("task[{i}].policy"),
                "SCHED_DEADLINE with isolcpus: the kernel admits deadline tasks per root domain (the housekeeping \
                 CPUs', def_root_domain for the isolated ones); the model has one"
                    .to_string(),
            ));
        }
        if g.policy.is_rt() && g.cpus.intersects(iso) && g.cpus.intersects(&housekeeping) {
            return Err(SimError::not_modelled(
                file,
                &key,
                format!(
                    "an RT task on CPUs {} of both the isolated ({}) and the housekeeping CPUs: the kernel pushes \
                     and pulls RT tasks within a root domain, and the model has one (accepted: CPUs within one side)",
                    g.cpus.to_list_string(),
                    iso.to_list_string()
                ),
            ));
        }
    }
    Ok(())
}

/// A cpuset partition may not take CPUs of isolcpus= (the kernel lets an
/// `isolated` partition take them; not modelled).
pub(crate) fn check_partitions(
    cgroups: &[crate::sched::task_group::CgroupDef],
    iso: &CpuMask,
    file: &str,
) -> Result<()> {
    use crate::sched::task_group::Partition;
    for c in cgroups.iter().filter(|c| c.partition != Partition::Member) {
        let cpus = c.cpus_effective.as_ref().expect("a partition has its CPUs");
        if cpus.intersects(iso) {
            return Err(SimError::not_modelled(
                file,
                "kernel.isolcpus",
                format!(
                    "CPUs {} of isolcpus= in partition {}: not modelled (accepted: partitions of housekeeping CPUs)",
                    cpus.and(iso).to_list_string(),
                    c.path
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    fn load(kernel: &str, tasks: &str) -> crate::error::Result<crate::scenario::Scenario> {
        let text =
            format!("name = \"i\"\n[machine]\npreset = \"4cpu\"\n[kernel]\nversion = \"6.12\"\n{kernel}\n{tasks}");
        crate::scenario::load(&text, "i.toml", &[])
    }

    #[test]
    fn tasks_that_set_no_cpus_keep_to_the_housekeeping_ones() {
        let sc = load(
            "isolcpus = \"domain,2-3\"",
            "[[task]]\nname = \"a\"\nprogram = [{ run = \"1ms\" }]\n\
             [[task]]\nname = \"b\"\ncpus = \"1-3\"\nprogram = [{ run = \"1ms\" }]\n\
             [[task]]\nname = \"k\"\nkthread = true\nprogram = [{ run = \"1ms\" }]\n\
             [[task]]\nname = \"r\"\npolicy = \"fifo\"\nrt_priority = 5\ncpus = \"2-3\"\nprogram = [{ run = \"1ms\" }]\n",
        )
        .expect("scenario");
        let cpus: Vec<String> = sc.groups.iter().map(|g| g.cpus.to_list_string()).collect();
        assert_eq!(cpus, ["0-1", "1-3", "0-3", "2-3"]);
        assert_eq!(sc.isolcpus.as_ref().map(|m| m.to_list_string()).as_deref(), Some("2-3"));
    }

    #[test]
    fn what_is_not_modelled_is_refused() {
        let hog = "[[task]]\nname = \"a\"\nprogram = [{ run = \"1ms\" }]\n";
        let cases = [
            ("isolcpus = \"nohz,2-3\"", hog, "SL120", "kernel.isolcpus: not modelled by schedlab: isolcpus=nohz,2-3: the nohz flag"),
            ("isolcpus = \"managed_irq,3\"", hog, "SL120", "the managed_irq flag"),
            ("isolcpus = \"bogus,3\"", hog, "SL102", "flag \"bogus\""),
            ("isolcpus = \"4\"", hog, "SL110", "CPU 4 is outside the machine"),
            ("isolcpus = \"0-3\"", hog, "SL110", "isolates every CPU"),
            (
                "isolcpus = \"3\"",
                "[[task]]\nname = \"r\"\npolicy = \"fifo\"\nrt_priority = 5\ncpus = \"2-3\"\nprogram = [{ run = \"1ms\" }]\n",
                "SL120",
                "task[0].cpus: not modelled by schedlab: an RT task on CPUs 2-3 of both",
            ),
        ];
        for (kernel, tasks, code, want) in cases {
            let e = load(kernel, tasks).expect_err(kernel);
            assert!(e.to_string().contains(want), "{kernel}: {e}");
            assert_eq!(e.code(), code, "{kernel}: {e}");
        }
    }

    #[test]
    fn nothing_balances_the_isolated_cpus() {
        // Four hogs allowed on the isolated pair all start on one CPU (the
        // fork's fallback: no domain spans them) and stay there; the free
        // hogs keep to CPUs 0-1 and move between them.
        let text = "name = \"i\"\n[machine]\npreset = \"4cpu\"\n[kernel]\nversion = \"6.12\"\nisolcpus = \"2-3\"\n\
                    [measure]\nduration = \"1s\"\n\
                    [[task]]\nname = \"iso\"\ncount = 4\ncpus = \"2-3\"\nprogram = [{ run = \"1h\" }]\n\
                    [[task]]\nname = \"free\"\ncount = 3\nprogram = [{ run = \"1h\" }]\n";
        let opts = crate::RunOptions { seed: 1, check: true, ..Default::default() };
        let r = crate::run_text(text, "i.toml", &[], &opts).expect("runs");
        let idle: Vec<f64> = r.mpstat.average.iter().skip(1).map(|row| row.idle).collect();
        assert!(idle[0] < 1.0 && idle[1] < 1.0, "{idle:?}");
        // The pair's CPUs: one busy, one idle, whatever the start.
        assert!((idle[2] + idle[3] - 100.0).abs() < 1.0, "{idle:?}");
        for t in r.tasks.iter().filter(|t| t.group == "iso") {
            assert_eq!(t.nr_migrations, Some(0), "{}", t.comm);
        }
        assert_eq!(r.kernel.isolcpus.as_deref(), Some("2-3"));
    }
}
