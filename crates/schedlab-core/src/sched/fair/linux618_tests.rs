//! The fair-class changes of Linux 6.14 .. 6.18.y that "6.18" models
//! (docs/notes/linux-6.13-6.18-sched-changes.md): each test runs a small
//! two-CPU box on 6.18 and again with that one mechanism off, and fails if
//! the mechanism does not change what it should.

use crate::sched::class::{WF_FORK, WF_TTWU};
use crate::sched::fair::balance::{LbEnv, MigrationType, SCHED_NR_MIGRATE_BREAK};
use crate::sched::sched::CfsRqId;
use crate::sched::sched::CpuIdleType;
use crate::sched::task::{SeId, TaskId};
use crate::sim::Sim;
use crate::trace::Trace;

/// A two-CPU box on `version`: `n0` nice-0 hogs pinned to CPU 0 and `n1` to
/// CPU 1, run `us` microseconds (migration_cost 0: no task is cache hot).
fn hogs(version: &str, n0: usize, n1: usize, us: u64) -> Sim {
    let mut text = format!(
        "name = \"t\"\n[machine]\nsockets = 1\ncores_per_socket = 2\n\
         [kernel]\nversion = \"{version}\"\nvmstat_kworkers = false\n\
         sysctl = {{ \"kernel.sched_migration_cost_ns\" = 0 }}\n\
         [measure]\nduration = \"{us}us\"\n\
         [[task]]\nname = \"hog\"\ncount = {n0}\ncpus = [0]\nprogram = [{{ run = \"10s\" }}]\n"
    );
    if n1 > 0 {
        text += &format!("[[task]]\nname = \"other\"\ncount = {n1}\ncpus = [1]\nprogram = [{{ run = \"10s\" }}]\n");
    }
    let sc = crate::scenario::load(&text, "t.toml", &[]).expect("scenario");
    let mut sim = Sim::new(&sc, 1, true, Trace::new(None)).expect("sim");
    sim.run().expect("run");
    sim
}

/// Run on until CPU 0's current task is ineligible, then block it: with
/// DELAY_DEQUEUE it stays queued, sched_delayed. It may then go anywhere.
fn delayed_on_cpu0(sim: &mut Sim) -> TaskId {
    for _ in 0..200 {
        sim.w.m.kt.k.update_curr(0);
        let c = sim.w.m.kt.k.sched.rqs[0].curr.expect("a hog runs");
        if !sim.w.m.kt.k.entity_eligible::<true>(CfsRqId::root(0), SeId::task(c)) {
            sim.block(c);
            sim.flush_resched();
            assert!(sim.w.m.kt.k.sched.tasks[c].se.sched_delayed);
            sim.w.m.kt.k.sched.tasks[c].cpus = crate::cpumask::CpuMask::full(2).into();
            sim.w.m.kt.k.sched.tasks[c].nr_cpus_allowed = 2;
            return c;
        }
        sim.end_ns += 50_000;
        sim.run().expect("run");
    }
    panic!("CPU 0's task never became ineligible");
}

/// An lb_env of CPU 1 pulling from CPU 0 at the lowest level.
fn pull_env(sim: &Sim, migration_type: MigrationType) -> LbEnv {
    LbEnv {
        sd: sim.w.m.kt.k.topo.cpu_domains[1][0],
        lvl: 0,
        dst_cpu: 1,
        src_cpu: 0,
        idle: CpuIdleType::Idle,
        imbalance: 1,
        migration_type,
        cpus: vec![0, 1],
        all_pinned: true,
        some_pinned: false,
        dst_pinned: false,
        new_dst_cpu: 1,
        view_by: None,
        loop_: 0,
        loop_max: 32,
        loop_break: SCHED_NR_MIGRATE_BREAK,
    }
}

/// CPU 1's periodic balance at the lowest level: the tasks it moved.
fn balance_cpu1(sim: &mut Sim) -> u32 {
    let sd = sim.w.m.kt.k.topo.cpu_domains[1][0];
    assert_eq!(sim.w.m.kt.k.topo.domains[sd].span, vec![0, 1]);
    let mut go_on = true;
    sim.w.m.kt.k.load_balance(1, 0, CpuIdleType::Idle, &mut go_on)
}

#[test]
fn a_delayed_task_does_not_make_its_cpu_look_busy_from_6_14() {
    // CPU 0: one hog running and one sched_delayed, CPU 1 idle. 6.12
    // counts two fair tasks on CPU 0 and pulls the delayed one; 6.14's
    // h_nr_runnable counts one, which is not worth moving (the
    // utilisation pull of a domain across LLCs, which skips a CPU with one
    // task; within an LLC the task-count pull takes it since 5.10).
    for counts_runnable in [true, false] {
        let mut sim = hogs("6.18", 2, 0, 20_000);
        let m = &mut sim.w.m.kt.k.cfg.mech;
        assert!(m.lb_counts_runnable_only);
        // Only the count differs: the delayed task may move in both runs.
        (m.lb_counts_runnable_only, m.lb_skip_delayed, m.lb_eligible_first) = (counts_runnable, false, false);
        m.lb_llc_spread_tasks = false;
        let d = delayed_on_cpu0(&mut sim);
        assert_eq!(
            (sim.w.m.kt.k.sched.cfs_rqs[0].h_nr_running, sim.w.m.kt.k.lb_h_nr_running(0)),
            (2, 2 - counts_runnable as u32)
        );
        let moved = balance_cpu1(&mut sim);
        assert_eq!(moved, u32::from(!counts_runnable), "h_nr_runnable {counts_runnable}");
        assert_eq!(sim.w.m.kt.k.sched.tasks[d].cpu, if counts_runnable { 0 } else { 1 });
        sim.check_invariants().expect("invariants");
    }
}

#[test]
fn a_delayed_task_moves_only_to_even_out_load_from_6_14() {
    let mut sim = hogs("6.18", 2, 0, 20_000);
    let d = delayed_on_cpu0(&mut sim);
    // CPU 1 is empty, so the eligibility rule does not apply.
    for (mt, ok) in [(MigrationType::Task, false), (MigrationType::Util, false), (MigrationType::Load, true)] {
        let mut env = pull_env(&sim, mt);
        assert_eq!(sim.w.m.kt.k.can_migrate_task(d, &mut env, false), ok, "{mt:?}");
        // The refusal comes before the affinity test: LBF_ALL_PINNED stays.
        assert_eq!(env.all_pinned, !ok, "{mt:?}");
    }
    // Active balance's lb_env is migrate_load.
    assert!(sim.w.m.kt.k.can_migrate_task(d, &mut pull_env(&sim, MigrationType::Task), true));
    sim.w.m.kt.k.cfg.mech.lb_skip_delayed = false;
    assert!(sim.w.m.kt.k.can_migrate_task(d, &mut pull_env(&sim, MigrationType::Task), false), "6.12 moves it");
    assert!(!crate::kernel::Mechanisms::of(crate::kernel::KernelVersion::parse("6.12").unwrap()).lb_skip_delayed);
}

#[test]
fn an_ineligible_task_stays_while_balancing_has_not_failed_from_6_14() {
    // Three hogs on CPU 0, one on CPU 1 (so its cfs_rq is not empty).
    let mut sim = hogs("6.18", 3, 1, 20_000);
    // A waiting task of CPU 0 that is not eligible there.
    let mut found = None;
    for _ in 0..400 {
        sim.w.m.kt.k.update_curr(0);
        let curr = sim.w.m.kt.k.sched.rqs[0].curr;
        let queued: Vec<TaskId> = sim.w.m.kt.k.sched.cfs_rqs[0].tasks_timeline.iter().map(|&(_, t)| t.tid()).collect();
        if let Some(&t) = queued
            .iter()
            .find(|&&t| Some(t) != curr && !sim.w.m.kt.k.entity_eligible::<true>(CfsRqId::root(0), SeId::task(t)))
        {
            found = Some(t);
            break;
        }
        sim.end_ns += 20_000;
        sim.run().expect("run");
    }
    let p = found.expect("an ineligible waiting task");
    sim.w.m.kt.k.sched.tasks[p].cpus = crate::cpumask::CpuMask::full(2).into();
    sim.w.m.kt.k.sched.tasks[p].nr_cpus_allowed = 2;
    let mut env = pull_env(&sim, MigrationType::Load);
    assert!(!sim.w.m.kt.k.can_migrate_task(p, &mut env, false), "refused while nr_balance_failed is 0");
    assert!(env.all_pinned, "before the affinity test");
    // After a failed balance it may go.
    sim.w.m.kt.k.sched.rqs[1].sd[0].nr_balance_failed = 1;
    assert!(sim.w.m.kt.k.can_migrate_task(p, &mut pull_env(&sim, MigrationType::Load), false));
    sim.w.m.kt.k.sched.rqs[1].sd[0].nr_balance_failed = 0;
    // Without PLACE_LAG its lag would not follow it.
    sim.w.m.kt.k.cfg.features.apply("NO_PLACE_LAG", sim.w.m.kt.k.cfg.version).expect("a feature");
    assert!(sim.w.m.kt.k.can_migrate_task(p, &mut pull_env(&sim, MigrationType::Load), false));
    sim.w.m.kt.k.cfg.features.apply("PLACE_LAG", sim.w.m.kt.k.cfg.version).expect("a feature");
    // 6.12 has no such rule.
    sim.w.m.kt.k.cfg.mech.lb_eligible_first = false;
    assert!(sim.w.m.kt.k.can_migrate_task(p, &mut pull_env(&sim, MigrationType::Load), false));
}

#[test]
fn the_lag_clamp_is_the_largest_slice_plus_a_tick_from_6_18_17() {
    // Two CPUs: the base slice is 0.7 ms x 2 = 1.4 ms, the tick 4 ms (HZ
    // 250). Old clamp: max(2 x 1.4, 4) = 4 ms; new: 1.4 + 4 = 5.4 ms.
    for (version, clamp) in [("6.18", 5_400_000), ("6.18.17", 5_400_000), ("6.18.16", 4_000_000), ("6.12", 4_000_000)] {
        let mut sim = hogs(version, 2, 0, 20_000);
        sim.w.m.kt.k.update_curr(0);
        let c = sim.w.m.kt.k.sched.rqs[0].curr.expect("a hog runs");
        let q = sim.w.m.kt.k.sched.cfs_rqs[0].leftmost().expect("a waiter").1.tid();
        assert_eq!(
            (sim.w.m.kt.k.sched.tasks[c].se.slice, sim.w.m.kt.k.sched.tasks[q].se.slice),
            (1_400_000, 1_400_000)
        );
        // curr 1 s ahead: V moves half as far, so curr lags far behind
        // and the waiter far ahead; both lags are clamped.
        sim.w.m.kt.k.sched.tasks[c].se.vruntime += 1_000_000_000;
        sim.w.m.kt.k.update_entity_lag::<true>(CfsRqId::root(0), SeId::task(c));
        sim.w.m.kt.k.update_entity_lag::<true>(CfsRqId::root(0), SeId::task(q));
        assert_eq!(
            (sim.w.m.kt.k.sched.tasks[c].se.vlag, sim.w.m.kt.k.sched.tasks[q].se.vlag),
            (-clamp, clamp),
            "{version}"
        );
    }
}

/// A parent on CPU 0 forks a child there at 3.5 ms; base slice 3 ms (6 ms
/// on two CPUs), so the parent's request runs to 9 ms and the child's
/// first deadline (half a slice) is earlier. The child's CPU time at 5 ms.
fn child_runtime_at_5ms(version: &str, no_preempt: Option<bool>) -> u64 {
    let text = format!(
        "name = \"t\"\n[machine]\nsockets = 1\ncores_per_socket = 2\n\
         [kernel]\nversion = \"{version}\"\nvmstat_kworkers = false\n\
         sysctl = {{ \"kernel.sched_base_slice_ns\" = 3000000 }}\n\
         [measure]\nduration = \"5ms\"\n\
         [[task]]\nname = \"parent\"\ncpus = [0]\n\
         program = [{{ run = \"3.5ms\" }}, {{ fork = \"child\" }}, {{ run = \"1s\" }}]\n\
         [[task]]\nname = \"child\"\ncount = 0\ncpus = [0]\nprogram = [{{ run = \"1s\" }}]\n"
    );
    let sc = crate::scenario::load(&text, "t.toml", &[]).expect("scenario");
    let mut sim = Sim::new(&sc, 1, true, Trace::new(None)).expect("sim");
    if let Some(v) = no_preempt {
        sim.w.m.kt.k.cfg.mech.fork_wakeup_no_preempt = v;
    }
    sim.run().expect("run");
    let child = sim.w.m.kt.k.sched.tasks.iter().position(|t| t.comm.starts_with("child")).expect("forked");
    sim.w.m.kt.k.update_curr(0);
    sim.w.m.kt.k.sched.tasks[child].se.sum_exec_runtime
}

#[test]
fn a_forked_child_does_not_preempt_its_parent_from_6_18_33() {
    // 6.12 and 6.18.32: the child is the EEVDF pick and preempts at once.
    assert!(child_runtime_at_5ms("6.12", None) > 1_000_000);
    assert!(child_runtime_at_5ms("6.18.32", None) > 1_000_000);
    assert!(child_runtime_at_5ms("6.18", Some(false)) > 1_000_000);
    // 6.18.33+: it waits for the parent's request to end (9 ms).
    assert_eq!(child_runtime_at_5ms("6.18.33", None), 0);
    assert_eq!(child_runtime_at_5ms("6.18", None), 0);
}

#[test]
fn the_wakeup_pick_completes_a_delayed_dequeue_from_6_18_33() {
    // Three hogs on CPU 0, one of them sched_delayed. V passes it in time;
    // here it is moved to V at once, with the earliest deadline, and
    // without RUN_TO_PARITY the EEVDF pick is then the delayed task.
    for form_6_18_33 in [true, false] {
        let mut sim = hogs("6.18", 3, 0, 20_000);
        sim.w.m.kt.k.cfg.mech.fork_wakeup_no_preempt = form_6_18_33;
        sim.w.m.kt.k.cfg.features.apply("NO_RUN_TO_PARITY", sim.w.m.kt.k.cfg.version).expect("a feature");
        let d = delayed_on_cpu0(&mut sim);
        let v = sim.w.m.kt.k.sched.tasks[d].se.vruntime;
        let ds = SeId::task(d);
        sim.w.m.kt.k.avg_sub::<true>(CfsRqId::root(0), ds);
        assert!(sim.w.m.kt.k.sched.cfs_rqs[0].tasks_timeline.remove(&(v, ds)));
        let v = sim.w.m.kt.k.avg_vruntime::<true>(CfsRqId::root(0));
        sim.w.m.kt.k.sched.tasks[d].se.vruntime = v;
        sim.w.m.kt.k.sched.tasks[d].se.deadline = 0;
        sim.w.m.kt.k.sched.cfs_rqs[0].tasks_timeline.insert((v, ds));
        sim.w.m.kt.k.avg_add::<true>(CfsRqId::root(0), ds);
        assert_eq!(sim.w.m.kt.k.pick_eevdf::<true>(CfsRqId::root(0)), Some(ds));
        let curr = sim.w.m.kt.k.sched.rqs[0].curr.expect("a hog runs");
        let p = sim.w.m.kt.k.sched.cfs_rqs[0]
            .tasks_timeline
            .iter()
            .map(|&(_, t)| t.tid())
            .find(|&t| t != d)
            .expect("a waiter");
        // A wakeup check for the other waiting hog (as if it had just woken).
        sim.w.m.kt.k.check_preempt_wakeup_fair(0, curr, p, WF_TTWU);
        let t = &sim.w.m.kt.k.sched.tasks[d];
        assert_eq!(t.se.sched_delayed, !form_6_18_33, "6.18.33 form {form_6_18_33}");
        assert_eq!(t.se.on_rq, !form_6_18_33);
        // A forked wakee returns before the pick: nothing changes.
        if !form_6_18_33 {
            sim.w.m.kt.k.cfg.mech.fork_wakeup_no_preempt = true;
            sim.w.m.kt.k.check_preempt_wakeup_fair(0, curr, p, WF_FORK);
            assert!(sim.w.m.kt.k.sched.tasks[d].se.sched_delayed);
        }
        sim.check_invariants().expect("invariants");
    }
}
