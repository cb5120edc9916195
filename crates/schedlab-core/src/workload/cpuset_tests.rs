//! cpuset partitions (workload/cpuset.rs): what is refused, the CPUs they
//! leave the root's tasks, the sched domains they rebuild, and a run.

use crate::sim::Sim;
use crate::trace::Trace;

const HOG: &str = "program = [{ run = \"10s\" }]\n";

fn load(version: &str, preset: &str, kernel: &str, body: &str) -> crate::error::Result<crate::scenario::Scenario> {
    let text = format!(
        "name = \"p\"\n[machine]\npreset = \"{preset}\"\n[kernel]\nversion = \"{version}\"\n\
         vmstat_kworkers = false\n{kernel}\n[measure]\nduration = \"2s\"\n{body}"
    );
    crate::scenario::load(&text, "p.toml", &[])
}

fn partition(path: &str, cpus: &str, kind: &str) -> String {
    format!("[[cgroup]]\npath = \"{path}\"\n\"cpuset.cpus\" = \"{cpus}\"\n\"cpuset.cpus.partition\" = \"{kind}\"\n")
}

fn task(name: &str, extra: &str) -> String {
    format!("[[task]]\nname = \"{name}\"\n{extra}{HOG}")
}

#[test]
fn what_a_partition_may_not_be_is_refused() {
    let p = |cpus: &str, kind: &str| partition("/p", cpus, kind);
    let cases = [
        ("6.12", "", p("2-3", "leaf"), "SL102", "\"member\", \"root\" or \"isolated\""),
        ("4.19", "", p("2-3", "root"), "SL120", "the kernel has it from 5.0"),
        ("5.5", "", p("2-3", "isolated"), "SL120", "the kernel has it from 5.15"),
        ("6.12", "", "[[cgroup]]\npath = \"/p\"\n\"cpuset.cpus.partition\" = \"root\"\n".into(), "SL102", "without cpuset.cpus"),
        ("6.12", "", p("0-3", "root"), "SL102", "the partitions take every CPU"),
        (
            "6.12",
            "",
            format!("{}[[cgroup]]\npath = \"/q\"\n\"cpuset.cpus\" = \"1-2\"\n", p("2-3", "root")),
            "SL102",
            "shares CPUs 2 with /q's cpuset.cpus",
        ),
        (
            "6.12",
            "",
            format!("[[cgroup]]\npath = \"/a\"\n{}", partition("/a/p", "2-3", "root")),
            "SL120",
            "the model's partitions are the root's children",
        ),
        ("6.12", "isolcpus = \"3\"", p("2-3", "isolated"), "SL120", "CPUs 3 of isolcpus= in partition /p"),
        (
            "6.12",
            "",
            format!(
                "{}{}",
                p("2-3", "root"),
                task(
                    "d",
                    "policy = \"SCHED_DEADLINE\"\nsched_runtime = \"1ms\"\nsched_deadline = \"10ms\"\nsched_period = \"10ms\"\n"
                )
            ),
            "SL120",
            "SCHED_DEADLINE beside cpuset partitions",
        ),
        ("6.12", "", format!("{}{}", p("2-3", "root"), task("a", "cpus = \"3\"\n")), "SL102", "shares no CPU with cgroup /"),
    ];
    for (version, kernel, body, code, want) in cases {
        let e = load(version, "4cpu", kernel, &body).expect_err(&body);
        assert!(e.to_string().contains(want), "{body}: {e}");
        assert_eq!(e.code(), code, "{body}: {e}");
    }
}

#[test]
fn the_root_cpusets_tasks_lose_a_partitions_cpus() {
    let body = format!(
        "{}[[cgroup]]\npath = \"/m\"\n{}{}{}{}",
        partition("/p", "2-3", "root"),
        task("root", ""),
        task("rootpinned", "cpus = \"1-3\"\n"),
        task("member", "cgroup = \"/m\"\n"),
        task("inside", "cgroup = \"/p\"\n")
    );
    let sc = load("6.12", "4cpu", "", &body).expect("scenario");
    let cpus: Vec<String> = sc.groups.iter().map(|g| g.cpus.to_list_string()).collect();
    assert_eq!(cpus, ["0-1", "1", "0-1", "2-3"]);
    let eff: Vec<Option<String>> =
        sc.cgroups.iter().map(|c| c.cpus_effective.as_ref().map(|m| m.to_list_string())).collect();
    assert_eq!(eff, [Some("2-3".to_string()), Some("0-1".to_string())]);
}

#[test]
fn a_root_partition_gets_domains_of_its_own_and_an_isolated_one_none() {
    // 4x4: four nodes of four CPUs; a partition of the second node.
    let body = partition("/p", "4-7", "root");
    let sc = load("6.12", "4x4", "", &body).expect("scenario");
    let sim = Sim::new(&sc, 1, true, Trace::new(None)).expect("sim");
    let t = &sim.w.m.kt.k.topo;
    for c in 0..sc.machine.nr_cpus() {
        let inside = (4..8).contains(&c);
        for &d in &t.cpu_domains[c] {
            let span = &t.domains[d].span;
            assert!(span.iter().all(|&x| (4..8).contains(&x) == inside), "CPU {c}: domain {span:?}");
        }
        assert!(!t.cpu_domains[c].is_empty(), "CPU {c} has domains");
    }
    assert_eq!(t.partitioned.to_list_string(), "4-7");
    let top = |c: usize| t.domains[*t.cpu_domains[c].last().expect("a domain")].span.len();
    assert_eq!((top(0), top(4)), (12, 4));

    let sc = load("6.12", "4x4", "", &partition("/p", "4-7", "isolated")).expect("scenario");
    let sim = Sim::new(&sc, 1, true, Trace::new(None)).expect("sim");
    let t = &sim.w.m.kt.k.topo;
    assert!((4..8).all(|c| t.cpu_domains[c].is_empty()));
    assert_eq!(t.isolated.to_list_string(), "4-7");
    assert!(t.partitioned.is_empty());
}

#[test]
fn balancing_stays_within_each_partition() {
    // Six hogs in the root cpuset and one in a partition of CPUs 2-3: the
    // six share CPUs 0-1, three each; the partition's hog has CPU 2 or 3
    // alone, and nothing crosses.
    let mut body = partition("/p", "2-3", "root");
    body.push_str("[[task]]\nname = \"r\"\ncount = 6\nprogram = [{ run = \"10s\" }]\n");
    body.push_str(&task("p", "cgroup = \"/p\"\n"));
    let sc = load("6.12", "4cpu", "", &body).expect("scenario");
    let mut sim = Sim::new(&sc, 1, true, Trace::new(None)).expect("sim");
    sim.run().expect("run");
    sim.check_invariants().expect("invariants");
    let k = &sim.w.m.kt.k;
    let ran = |name: &str| -> u64 {
        k.sched.tasks.iter().filter(|t| t.comm.starts_with(name)).map(|t| t.se.sum_exec_runtime).sum()
    };
    let (root, part) = (ran("r"), ran("p"));
    assert!((root as f64 / 4e9 - 1.0).abs() < 0.01, "the root's hogs ran {root} ns on CPUs 0-1");
    assert!((part as f64 / 2e9 - 1.0).abs() < 0.01, "the partition's hog ran {part} ns");
    for t in k.sched.tasks.iter().filter(|t| t.comm.starts_with('r')) {
        assert!(t.cpu < 2, "{} on CPU {}", t.comm, t.cpu);
    }
}
