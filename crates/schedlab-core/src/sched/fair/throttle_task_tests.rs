//! 6.18's task based throttle (fair/throttle_task.rs) against the throttle
//! of the whole hierarchy that 6.17 and earlier do (fair/bandwidth.rs).

use crate::sched::fair::bandwidth_tests::{hogs, run};
use crate::sim::Sim;

/// One CPU: /c (20 ms per 100 ms period) with `capped` hogs beside a free
/// hog in the root, run for `ms`.
fn capped_beside_free(version: &str, capped: usize, ms: u64) -> Sim {
    let body = format!(
        "[[cgroup]]\npath = \"/c\"\n\"cpu.max\" = \"20000 100000\"\n{}{}",
        hogs("c", capped, "/c"),
        hogs("f", 1, "/")
    );
    run(version, 1, ms, &body)
}

#[test]
fn from_618_a_throttled_group_parks_its_tasks_one_by_one() {
    // 90 ms in, /c has used its 20 ms and is throttled until 100 ms.
    let sim = capped_beside_free("6.18", 1, 90);
    let k = &sim.w.m.kt.k;
    let c = k.sched.tasks.iter().position(|t| t.comm == "c").expect("c");
    let q = k.sched.groups.tgs[1].cfs_rq[0];
    assert!(k.rq_bw(q).throttled, "/c is throttled");
    assert!(k.sched.tasks[c].throttled, "its task parked when it was picked");
    assert_eq!(k.sched.groups.limbo[q.index()], vec![c], "on the cfs_rq's limbo list");
    assert!(!k.sched.tasks[c].se.on_rq, "off its cfs_rq");
    assert_eq!(k.sched.rqs[0].nr_running, 1, "only the free hog is counted");
    // Its PELT clock stopped when the cfs_rq emptied; the throttled time
    // runs from the park.
    assert!(k.rq_bw(q).pelt_clock_throttled);
    assert!(k.rq_bw(q).throttled_clock > 0);

    // 6.12 takes the group entity off instead; the task stays on its
    // throttled cfs_rq.
    let sim = capped_beside_free("6.12", 1, 90);
    let k = &sim.w.m.kt.k;
    let c = k.sched.tasks.iter().position(|t| t.comm == "c").expect("c");
    let q = k.sched.groups.tgs[1].cfs_rq[0];
    assert!(k.rq_bw(q).throttled);
    assert!(!k.sched.tasks[c].throttled && k.sched.tasks[c].se.on_rq);
    let gse = k.sched.groups.tgs[1].se[0].expect("group entity");
    assert!(!k.se(gse).on_rq, "the group entity left the root");
    assert!(k.sched.groups.limbo.iter().all(Vec::is_empty));
}

#[test]
fn from_618_the_pelt_clock_stops_only_when_the_last_task_parks() {
    // Two hogs in /c beside a nice -5 hog that wins most picks: at the
    // throttle both are queued, and each parks when it is next picked.
    // While one is still queued the clock runs.
    let body = format!(
        "[[cgroup]]\npath = \"/c\"\n\"cpu.max\" = \"10000 100000\"\n{}\
         [[task]]\nname = \"f\"\nnice = -5\nprogram = [{{ run = \"100s\" }}]\n",
        hogs("c", 2, "/c")
    );
    let (mut seen_running, mut seen_stopped) = (false, false);
    for ms in 20..200 {
        let sim = run("6.18", 1, ms, &body);
        let k = &sim.w.m.kt.k;
        let q = k.sched.groups.tgs[1].cfs_rq[0];
        if !k.rq_bw(q).throttled {
            continue;
        }
        let parked = k.sched.groups.limbo[q.index()].len();
        let queued = k.cfs_rq(q).nr_running as usize;
        assert_eq!(parked + queued, 2, "{ms} ms: each hog is queued or parked");
        assert_eq!(k.rq_bw(q).pelt_clock_throttled, queued == 0, "{ms} ms: {queued} queued");
        seen_running |= queued > 0;
        seen_stopped |= queued == 0;
    }
    assert!(seen_running && seen_stopped, "both states seen: {seen_running} {seen_stopped}");
}

#[test]
fn the_quota_holds_and_the_throttled_time_is_the_parked_time() {
    // 1 s: ten periods, /c at 20 % either way.
    for version in ["6.12", "6.18"] {
        let sim = capped_beside_free(version, 2, 1000);
        let k = &sim.w.m.kt.k;
        let used: u64 = k.sched.tasks.iter().filter(|t| t.comm.starts_with('c')).map(|t| t.se.sum_exec_runtime).sum();
        assert!((used as f64 / 1e9 - 0.2).abs() < 0.01, "{version}: /c used {used} ns");
        let b = k.sched.groups.tgs[1].cfs_b.as_deref().expect("cfs_b");
        let thr = b.throttled_time as f64 / 1e9;
        // 6.12 counts from the throttle; 6.18 from the first park, when
        // the free hog's slice ends and a /c task is picked: later.
        assert!((0.4..0.6).contains(&thr), "{version}: throttled {thr:.3} s");
    }
    let t = |v| capped_beside_free(v, 2, 1000).w.m.kt.k.sched.groups.tgs[1].cfs_b.as_deref().unwrap().throttled_time;
    assert!(t("6.18") < t("6.12"), "6.18 starts the clock later");
}

#[test]
fn from_618_a_parked_task_is_off_every_tree_and_never_a_kthread() {
    let sim = capped_beside_free("6.18", 2, 90);
    let k = &sim.w.m.kt.k;
    let mut parked = 0;
    for (tid, t) in k.sched.tasks.iter().enumerate().filter(|(_, t)| t.throttled) {
        parked += 1;
        assert!(!t.kthread, "{}", t.comm);
        assert_ne!(k.sched.rqs[t.cpu].curr, Some(tid), "{} runs", t.comm);
        assert!(!k.rq_cfs_tasks(t.cpu).contains(&tid), "{} is in a tree", t.comm);
        assert!(k.sched.groups.limbo[k.task_cfs_rq_on(tid, t.cpu).index()].contains(&tid));
    }
    assert_eq!(parked, 2, "both /c hogs parked");
}
