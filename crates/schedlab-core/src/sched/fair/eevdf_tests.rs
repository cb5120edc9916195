//! DELAY_DEQUEUE (6.12): a task that sleeps while ineligible stays queued
//! until a pick reaches it, and a wakeup requeues it where it is.

use crate::sched::sched::CfsRqId;
use crate::sched::task::{SeId, TaskId, TaskState};
use crate::sim::Sim;
use crate::trace::Trace;

/// Three nice-0 hogs pinned to CPU 0 of a two-CPU machine, run `us`
/// microseconds with the invariant checker on.
fn hogs(version: &str, features: &str, us: u64) -> Sim {
    let text = format!(
        "name = \"t\"\n[machine]\nsockets = 1\ncores_per_socket = 2\n\
         [kernel]\nversion = \"{version}\"\nfeatures = [{features}]\nvmstat_kworkers = false\n\
         [measure]\nduration = \"{us}us\"\n\
         [[task]]\nname = \"hog\"\ncount = 3\ncpus = [0]\nprogram = [{{ run = \"10s\" }}]\n"
    );
    let sc = crate::scenario::load(&text, "t.toml", &[]).expect("scenario");
    let mut sim = Sim::new(&sc, 1, true, Trace::new(None)).expect("sim");
    sim.run().expect("run");
    sim
}

/// Run on until CPU 0's current task is ineligible (it has run past its
/// share of V); return it.
fn ineligible_curr(sim: &mut Sim) -> TaskId {
    for _ in 0..100 {
        sim.w.m.kt.k.update_curr(0);
        let c = sim.w.m.kt.k.sched.rqs[0].curr.expect("a hog runs");
        if !sim.w.m.kt.k.entity_eligible::<true>(CfsRqId::root(0), SeId::task(c)) {
            return c;
        }
        sim.end_ns += 50_000;
        sim.run().expect("run");
    }
    panic!("CPU 0's task never became ineligible");
}

#[test]
fn an_ineligible_sleeper_stays_queued_and_wakes_where_it_is() {
    let mut sim = hogs("6.12", "", 20_000);
    let c = ineligible_curr(&mut sim);
    sim.block(c);
    sim.flush_resched();
    let (t, rq) = (&sim.w.m.kt.k.sched.tasks[c], &sim.w.m.kt.k.sched.rqs[0]);
    assert!(t.se.sched_delayed && t.se.on_rq && t.state == TaskState::Blocked);
    assert_eq!(
        (rq.nr_running, sim.w.m.kt.k.sched.cfs_rqs[0].h_nr_running, sim.w.m.kt.k.sched.cfs_rqs[0].h_nr_delayed),
        (3, 3, 1)
    );
    assert_ne!(rq.curr, Some(c), "a delayed task is not picked to run");
    assert!(
        sim.w.m.kt.k.sched.cfs_rqs[0].tasks_timeline.iter().any(|&(_, t)| t == SeId::task(c)),
        "it waits in the tree"
    );
    // Allowed everywhere now, with CPU 1 idle: a wakeup of a delayed task
    // does not choose a CPU (ttwu_runnable), and it keeps its negative lag.
    sim.w.m.kt.k.sched.tasks[c].cpus = crate::cpumask::CpuMask::full(2).into();
    sim.w.m.kt.k.sched.tasks[c].nr_cpus_allowed = 2;
    let v = sim.w.m.kt.k.sched.tasks[c].se.vruntime;
    sim.w.m.kt.k.try_to_wake_up(c, 1, false);
    let t = &sim.w.m.kt.k.sched.tasks[c];
    assert!(!t.se.sched_delayed && t.state == TaskState::Runnable);
    assert_eq!((t.cpu, t.se.vruntime, sim.w.m.kt.k.sched.cfs_rqs[0].h_nr_delayed), (0, v, 0));
    sim.check_invariants().expect("invariants");
}

#[test]
fn the_pick_that_reaches_a_delayed_task_completes_its_dequeue() {
    let mut sim = hogs("6.12", "", 20_000);
    let c = ineligible_curr(&mut sim);
    sim.block(c);
    sim.flush_resched();
    assert!(sim.w.m.kt.k.sched.tasks[c].se.sched_delayed);
    // Nobody wakes it: within a few slices V passes it, a pick reaches it
    // and its sleep completes (the checker runs after every event).
    sim.end_ns += 20_000_000;
    sim.run().expect("run");
    let (t, rq) = (&sim.w.m.kt.k.sched.tasks[c], &sim.w.m.kt.k.sched.rqs[0]);
    assert!(!t.se.sched_delayed && !t.se.on_rq && t.state == TaskState::Blocked);
    assert_eq!((rq.nr_running, sim.w.m.kt.k.sched.cfs_rqs[0].h_nr_delayed), (2, 0));
    // DELAY_ZERO: the lag it leaves with is never positive.
    assert!(t.se.vlag <= 0, "vlag {}", t.se.vlag);
}

#[test]
fn without_delay_dequeue_or_before_6_12_a_sleeper_leaves_at_once() {
    for (version, features) in [("6.12", "\"NO_DELAY_DEQUEUE\""), ("6.6", "")] {
        let mut sim = hogs(version, features, 20_000);
        let c = ineligible_curr(&mut sim);
        sim.block(c);
        sim.flush_resched();
        let t = &sim.w.m.kt.k.sched.tasks[c];
        assert!(!t.se.sched_delayed && !t.se.on_rq, "{version} {features}");
        assert_eq!(sim.w.m.kt.k.sched.rqs[0].nr_running, 2, "{version} {features}");
        sim.w.m.kt.k.sched.tasks[c].cpus = crate::cpumask::CpuMask::full(2).into();
        sim.w.m.kt.k.sched.tasks[c].nr_cpus_allowed = 2;
        sim.w.m.kt.k.try_to_wake_up(c, 1, false);
        assert_eq!(sim.w.m.kt.k.sched.tasks[c].cpu, 1, "{version} {features}: woken onto the idle CPU");
    }
}
