//! RT_PUSH_IPI's chain (rto_next_cpu) on a small box.

use crate::sim::Sim;
use crate::trace::Trace;

/// An idle three-CPU box on `version` whose root domain says CPUs 0 and 1
/// are RT-overloaded; CPU 0 then pulls: with RT_PUSH_IPI that starts the
/// push chain. The CPU its first IPI goes to.
fn first_hop(version: &str) -> Option<usize> {
    let text = format!(
        "name = \"t\"\n[machine]\nsockets = 1\ncores_per_socket = 3\n\
         [kernel]\nversion = \"{version}\"\nfeatures = [\"RT_PUSH_IPI\"]\nvmstat_kworkers = false\n\
         [measure]\nduration = \"1ms\"\n"
    );
    let sc = crate::scenario::load(&text, "t.toml", &[]).expect("scenario");
    let mut sim = Sim::new(&sc, 1, false, Trace::new(None)).expect("sim");
    sim.run().expect("run");
    let rd = &mut sim.w.m.kt.k.sched.rd;
    rd.rto_mask.set(0);
    rd.rto_mask.set(1);
    rd.rto_count = 2;
    sim.w.m.kt.k.pull_rt_task(0);
    assert_eq!(sim.w.m.kt.k.sched.rd.rto_push.ipis, 1, "{version}");
    sim.w.m.kt.k.sched.rd.rto_push.rto_cpu
}

#[test]
fn the_push_chain_skips_the_cpu_it_runs_on_from_6_18_14() {
    // 94894c9c477e: 6.18.14+ and 6.12.75+ go on to CPU 1.
    assert_eq!(first_hop("6.18"), Some(1));
    assert_eq!(first_hop("6.18.14"), Some(1));
    assert_eq!(first_hop("6.12.75"), Some(1));
    // Before it the chain's first hop is CPU 0 itself (an IPI to self).
    assert_eq!(first_hop("6.18.13"), Some(0));
    assert_eq!(first_hop("6.12.74"), Some(0));
    assert_eq!(first_hop("6.6"), Some(0));
}
