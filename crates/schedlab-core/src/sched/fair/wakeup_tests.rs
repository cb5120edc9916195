//! select_idle_sibling() on small hand-built machines: which CPU it returns
//! and why, for each form, with the kthread stacking rule of seed 001.

use crate::sched::task::TaskId;
use crate::sim::Sim;
use crate::trace::Trace;

/// An 8-CPU box (one LLC) on kernel `version` at t = 1 ms: a hog running on
/// each CPU of `busy`, a per-CPU kthread `kt` running on CPU `kt_cpu` (no
/// hog there), and a sleeping task `p` whose last CPU is `kt_cpu`.
fn machine(version: &str, preset: &str, busy: &[usize], kt_cpu: usize) -> (Sim, TaskId, TaskId) {
    let text = format!(
        "name = \"t\"\n[machine]\npreset = \"{preset}\"\n[kernel]\nversion = \"{version}\"\n\
         vmstat_kworkers = false\n[measure]\nduration = \"1ms\"\n\
         [[task]]\nname = \"kt\"\nkthread = true\ncpus = [{kt_cpu}]\nstart = \"100us\"\nprogram = [{{ run = \"1s\" }}]\n\
         [[task]]\nname = \"p\"\ncpus = [{kt_cpu}]\nprogram = [{{ run = \"10us\" }}, {{ sleep = \"1s\" }}]\n"
    );
    let mut text = text;
    for (i, c) in busy.iter().enumerate() {
        text +=
            &format!("[[task]]\nname = \"hog{i}\"\ncpus = [{c}]\nstart = \"100us\"\nprogram = [{{ run = \"1s\" }}]\n");
    }
    let sc = crate::scenario::load(&text, "t.toml", &[]).expect("scenario");
    let mut sim = Sim::new(&sc, 1, false, Trace::new(None)).expect("sim");
    sim.run().expect("run");
    let id = |name: &str| sim.w.m.kt.k.sched.tasks.iter().position(|t| t.comm == name).expect("task");
    let (kt, p) = (id("kt"), id("p"));
    // p may go anywhere now (it was pinned only to be started next to kt).
    let n = sim.w.m.kt.k.sched.rqs.len();
    sim.w.m.kt.k.sched.tasks[p].cpus = crate::cpumask::CpuMask::full(n).into();
    sim.w.m.kt.k.sched.tasks[p].nr_cpus_allowed = n;
    (sim, kt, p)
}

#[test]
fn an_idle_target_or_prev_is_taken_first() {
    let (mut sim, kt, p) = machine("5.5", "uma8", &[0], 3);
    assert!(sim.w.m.kt.k.idle_cpu(5) && !sim.w.m.kt.k.idle_cpu(3));
    // 1. The target is idle: the target.
    assert_eq!(sim.w.m.kt.k.select_idle_sibling(p, 3, 5, Some(kt), 3, true), 5);
    // 2. The target is busy, prev is idle and shares its cache: prev.
    assert_eq!(sim.w.m.kt.k.select_idle_sibling(p, 6, 0, Some(kt), 3, true), 6);
}

#[test]
fn a_busy_prev_sends_the_wakee_to_the_next_idle_cpu_of_the_llc_on_5_5() {
    // kt runs on CPU 3 (p's prev) and wakes p there: 5.5 has no stacking
    // rule, recent_used_cpu is prev, so select_idle_cpu scans from 3 and
    // takes the first idle CPU after it: 4 (CPU 4 busy: 5).
    let (mut sim, kt, p) = machine("5.5", "uma8", &[], 3);
    sim.w.m.kt.k.sched.tasks[p].recent_used_cpu = 3;
    assert_eq!(sim.w.m.kt.k.select_idle_sibling(p, 3, 3, Some(kt), 3, true), 4);
    let (mut sim, kt, p) = machine("5.5", "uma8", &[4], 3);
    sim.w.m.kt.k.sched.tasks[p].recent_used_cpu = 3;
    assert_eq!(sim.w.m.kt.k.select_idle_sibling(p, 3, 3, Some(kt), 3, true), 5);
}

#[test]
fn recent_used_cpu_is_tried_before_the_scan_and_becomes_prev() {
    let (mut sim, kt, p) = machine("5.5", "uma8", &[], 3);
    sim.w.m.kt.k.sched.tasks[p].recent_used_cpu = 6;
    assert_eq!(sim.w.m.kt.k.select_idle_sibling(p, 3, 3, Some(kt), 3, true), 6);
    assert_eq!(sim.w.m.kt.k.sched.tasks[p].recent_used_cpu, 3, "prev is remembered for the next wakeup");
}

#[test]
fn from_5_15_every_pass_remembers_prev_so_an_unmoved_task_is_not_sent_back() {
    // 5.14: recent_used_cpu changes only when the test picks it; a pass
    // that returns from the scan leaves it, and the next wakeup may still
    // be sent to that older CPU. 5.15 (89aafd67f28c): every pass that
    // reaches the test remembers prev.
    for (version, kept) in [("5.14", 6), ("5.15", 3)] {
        let (mut sim, _kt, p) = machine(version, "uma8", &[6], 3);
        sim.w.m.kt.k.sched.tasks[p].recent_used_cpu = 6;
        // CPU 6 is busy: the test fails and the scan takes CPU 4 (a waker
        // that is not a per-CPU kthread: no stacking).
        assert_eq!(sim.w.m.kt.k.select_idle_sibling(p, 3, 3, None, 3, true), 4, "{version}");
        assert_eq!(sim.w.m.kt.k.sched.tasks[p].recent_used_cpu, kept, "{version}");
    }
}

#[test]
fn a_per_cpu_kthread_waking_a_task_on_its_own_cpu_stacks_it_from_5_6() {
    let (mut sim, kt, p) = machine("5.6", "uma8", &[], 3);
    sim.w.m.kt.k.sched.tasks[p].recent_used_cpu = 6;
    // Waker is a per-CPU kthread, prev == this CPU, this rq runs only the
    // kthread: prev, although busy (and before recent_used_cpu).
    assert_eq!(sim.w.m.kt.k.sched.rqs[3].nr_running, 1);
    assert_eq!(sim.w.m.kt.k.select_idle_sibling(p, 3, 3, Some(kt), 3, true), 3);
    // prev is another CPU than the waker's: no stacking.
    assert_ne!(sim.w.m.kt.k.select_idle_sibling(p, 5, 3, Some(kt), 3, true), 3);
    // 5.6 has no in_task() test: an interrupt that lands while the
    // kthread runs stacks too (fixed in 5.17).
    assert_eq!(sim.w.m.kt.k.select_idle_sibling(p, 3, 3, Some(kt), 3, false), 3);
}

#[test]
fn the_stacking_rule_needs_a_lone_per_cpu_kthread_waker() {
    // A second task queued behind the kthread: nr_running 2, no stacking.
    let (mut sim, kt, p) = machine("5.6", "uma8", &[3], 3);
    assert_eq!(sim.w.m.kt.k.sched.rqs[3].nr_running, 2);
    sim.w.m.kt.k.sched.tasks[p].recent_used_cpu = 3;
    assert_eq!(sim.w.m.kt.k.select_idle_sibling(p, 3, 3, Some(kt), 3, true), 4);
    // A kthread allowed on several CPUs (an unbound kworker) is no
    // per-CPU kthread.
    let (mut sim, kt, p) = machine("5.6", "uma8", &[], 3);
    sim.w.m.kt.k.sched.tasks[kt].nr_cpus_allowed = 2;
    sim.w.m.kt.k.sched.tasks[p].recent_used_cpu = 3;
    assert_eq!(sim.w.m.kt.k.select_idle_sibling(p, 3, 3, Some(kt), 3, true), 4);
    // Without the feature (the baseline of seed 001): no stacking.
    let (mut sim, kt, p) = machine("5.6", "uma8", &[], 3);
    sim.w.m.kt.k.cfg.features.apply("NO_KTHREAD_STACKING", sim.w.m.kt.k.cfg.version).expect("a feature");
    sim.w.m.kt.k.sched.tasks[p].recent_used_cpu = 3;
    assert_eq!(sim.w.m.kt.k.select_idle_sibling(p, 3, 3, Some(kt), 3, true), 4);
}

#[test]
fn from_5_17_only_a_waker_in_task_context_stacks() {
    let (mut sim, kt, p) = machine("6.1", "uma8", &[], 3);
    assert_eq!(sim.w.m.kt.k.select_idle_sibling(p, 3, 3, Some(kt), 3, true), 3);
    sim.w.m.kt.k.sched.tasks[p].recent_used_cpu = 3;
    assert_ne!(sim.w.m.kt.k.select_idle_sibling(p, 3, 3, Some(kt), 3, false), 3, "an interrupt is not the kthread");
}

#[test]
fn with_smt_an_idle_core_is_preferred_to_an_idle_sibling() {
    // 2x8smt: CPUs 2n and 2n+1 are siblings. kt on CPU 2, CPU 3 idle, the
    // core of CPUs 4/5 idle: select_idle_core takes the whole idle core 4
    // over the idle sibling 3.
    let (mut sim, kt, p) = machine("5.5", "2x8smt", &[], 2);
    sim.w.m.kt.k.sched.tasks[p].recent_used_cpu = 2;
    sim.w.m.kt.k.update_idle_core(3);
    let c = sim.w.m.kt.k.select_idle_sibling(p, 2, 2, Some(kt), 2, true);
    assert_eq!(c, 4);
}

#[test]
fn threads_forked_in_a_tight_loop_that_sleep_at_once_spread_from_5_9() {
    // Peter Puhov's case (3edecfef0285): a parent forks four children 20 us
    // apart, each sleeps 5 us after its start. Every other CPU is idle when
    // the next fork comes; from 5.9 the one with the least utilisation (not
    // a CPU a child just left, whose util it still carries) is taken.
    let text = "name = \"t\"\n[machine]\nsockets = 1\ncores_per_socket = 8\n[kernel]\nversion = \"6.12\"\n\
        vmstat_kworkers = false\n[measure]\nduration = \"10ms\"\n\
        [[task]]\nname = \"main\"\ncpus = [0]\n\
        program = [{ loop = { count = 4, body = [{ fork = \"child\" }, { run = \"20us\" }] } }, { sleep = \"1s\" }]\n\
        [[task]]\nname = \"child\"\ncount = 0\nprogram = [{ run = \"5us\" }, { wait = \"never\" }]\n";
    for util_tiebreak in [true, false] {
        let sc = crate::scenario::load(text, "t.toml", &[]).expect("scenario");
        let mut sim = Sim::new(&sc, 1, false, Trace::new(None)).expect("sim");
        sim.w.m.kt.k.cfg.mech.pick_idlest_group_util = util_tiebreak;
        sim.run().expect("run");
        let mut cpus: Vec<usize> =
            sim.w.m.kt.k.sched.tasks.iter().filter(|t| t.comm.starts_with("child")).map(|t| t.cpu).collect();
        assert_eq!(cpus.len(), 4);
        cpus.sort_unstable();
        cpus.dedup();
        assert_eq!(cpus.len(), if util_tiebreak { 4 } else { 1 }, "util tie-break {util_tiebreak}: {cpus:?}");
    }
}
