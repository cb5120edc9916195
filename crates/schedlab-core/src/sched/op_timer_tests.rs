//! The op timer when an op's end and a preemption fall on the same instant.

use crate::sim::Sim;
use crate::trace::Trace;

/// One CPU without a context-switch cost: `b` sleeps 1 ms, `a` runs two
/// 1 ms ops. b's wakeup at 1 ms preempts a at the instant its first op ends,
/// before that instant's OpDone runs.
fn run(version: &str) -> Sim {
    let text = format!(
        "name = \"t\"\n[machine]\nsockets = 1\ncores_per_socket = 1\n\
         [kernel]\nversion = \"{version}\"\nvmstat_kworkers = false\n\
         [kernel.costs]\ncontext_switch = \"0ns\"\ntimer_slack = \"0ns\"\n\
         [measure]\nwarmup = \"0ms\"\nduration = \"20ms\"\n\
         [[task]]\nname = \"b\"\nprogram = [{{ sleep = \"1ms\" }}, {{ run = \"1ms\" }}, {{ exit = true }}]\n\
         [[task]]\nname = \"a\"\nprogram = [{{ run = \"1ms\" }}, {{ run = \"1ms\" }}, {{ exit = true }}]\n"
    );
    let sc = crate::scenario::load(&text, "t.toml", &[]).expect("scenario");
    let mut sim = Sim::new(&sc, 1, true, Trace::new(None)).expect("sim");
    sim.run().expect("run");
    sim.check_invariants().expect("invariants");
    sim
}

#[test]
fn an_op_that_ends_as_its_task_is_preempted_is_done_when_it_runs_again() {
    for version in ["6.1", "6.18"] {
        let sim = run(version);
        let a = sim.w.m.kt.k.sched.tasks.iter().find(|t| t.comm == "a").expect("a");
        // Its 2 ms and the exit cost; without the owed OpDone, the first op
        // never ended and a ran to the end of the window.
        assert!(a.stats.exit_ns.is_some(), "{version}: a never exited");
        let ran = a.se.sum_exec_runtime;
        assert!((2_000_000..2_200_000).contains(&ran), "{version}: a ran {ran} ns");
    }
}
