//! The periodic balance at the tick: every CPU ticks at the same instant
//! (sched_skew_tick=0) and runs its SCHED_SOFTIRQ at once, each reading the
//! others' runqueues as they were at the tick (`LbSnap`).

use crate::sim::Sim;
use crate::trace::Trace;

/// One nice-0 hog and four SCHED_IDLE hogs on four CPUs for 2.5 s on
/// `version` (val-idle-rotation without the runner's start): each idle
/// hog's (runtime ms, migrations).
fn idle_rotation(version: &str) -> Vec<(u64, u64)> {
    let text = format!(
        "name = \"t\"\n[machine]\nsockets = 1\ncores_per_socket = 4\n\
         [kernel]\nversion = \"{version}\"\n[measure]\nduration = \"2500ms\"\n\
         [[task]]\nname = \"n0\"\nprogram = [{{ run = \"10s\" }}]\n\
         [[task]]\nname = \"idle\"\ncount = 4\npolicy = \"SCHED_IDLE\"\nprogram = [{{ run = \"10s\" }}]\n"
    );
    let sc = crate::scenario::load(&text, "t.toml", &[]).expect("scenario");
    let mut sim = Sim::new(&sc, 1, true, Trace::new(None)).expect("sim");
    sim.run().expect("run");
    let k = &sim.w.m.kt.k;
    k.sched
        .tasks
        .iter()
        .filter(|t| t.comm.starts_with("idle-"))
        .map(|t| (t.se.sum_exec_runtime / 1_000_000, t.stats.nr_migrations))
        .collect()
}

/// The nice-0 hog's load lifts the domain's average above a CPU of two idle
/// hogs, so a CPU with one pulls the other's queued one (calculate_imbalance's
/// wrap). Each CPU's balance at a tick sees the runqueues as they were: the
/// queued hog moves once and runs. When the balances ran as a chain, each
/// seeing the pulls before it, one queued hog went round three CPUs at
/// every tick and got 23-56 % of a CPU with 470-1,260 migrations; the
/// guests (6.1, 6.12, 6.18) move the idle hogs 18-51 times a second in all
/// and give each 66-86 %.
#[test]
fn idle_hogs_rotate_once_per_tick_and_run() {
    for v in ["6.1", "6.12", "6.18"] {
        let hogs = idle_rotation(v);
        assert_eq!(hogs.len(), 4);
        let migrations: u64 = hogs.iter().map(|h| h.1).sum();
        assert!(migrations < 250, "{v}: {migrations} migrations in 2.5 s: {hogs:?}");
        assert!(migrations > 10, "{v}: the idle hogs stopped rotating: {hogs:?}");
        for (ms, _) in &hogs {
            assert!(*ms > 1500, "{v}: an idle hog got {ms} ms of 2,500: {hogs:?}");
        }
    }
}
