//! Concurrency management and the pools, on small hand-built runs.

use crate::sched::task::TaskState;
use crate::sim::Sim;
use crate::trace::Trace;

/// One task on CPU 1 of a 4-CPU box queues `works` (TOML op list) at 1 ms,
/// then the run goes on for `us` microseconds.
fn run(works: &str, us: u64) -> Sim {
    let text = format!(
        "name = \"t\"\n[machine]\npreset = \"4cpu\"\n[kernel]\nversion = \"5.5\"\nvmstat_kworkers = false\n\
         [measure]\nduration = \"{us}us\"\n\
         [[task]]\nname = \"q\"\ncpus = [1]\nstart = \"1ms\"\nprogram = [{works}, {{ sleep = \"1s\" }}]\n"
    );
    let sc = crate::scenario::load(&text, "t.toml", &[]).expect("scenario");
    let mut sim = Sim::new(&sc, 1, false, Trace::new(None)).expect("sim");
    sim.run().expect("run");
    sim
}

/// The kworkers of the run that ran: (comm, runtime ns, CPU).
fn ran(sim: &Sim) -> Vec<(String, u64, usize)> {
    sim.w
        .m
        .kt
        .k
        .sched
        .tasks
        .iter()
        .filter(|t| t.worker.is_some() && t.se.sum_exec_runtime > 0)
        .map(|t| (t.comm.clone(), t.se.sum_exec_runtime, t.cpu))
        .collect()
}

#[test]
fn one_running_worker_takes_the_works_queued_behind_it() {
    // Two CPU-bound works on the CPU's normal pool: the first worker keeps
    // working (keep_working) and nobody else is woken while it runs.
    let w =
        "{ queue_work = { wq = \"events\", run = \"100us\" } }, { queue_work = { wq = \"events\", run = \"100us\" } }";
    let sim = run(w, 3_000);
    let r = ran(&sim);
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(r[0].0, "kworker/1:0");
    assert!(r[0].1 >= 200_000, "{r:?}");
    // It made a spare when it started working (manage_workers): two
    // workers in the pool, one idle.
    let pool = sim.w.m.kt.kthreads.cpu_pools[1][0].expect("the pool");
    assert_eq!(sim.w.m.kt.kthreads.pools[pool].nr_workers, 2);
    assert_eq!(sim.w.m.kt.kthreads.pools[pool].idle_list.len(), 2, "both idle at the end");
    assert_eq!(sim.w.m.kt.kthreads.pools[pool].nr_running, 0);
}

#[test]
fn a_second_worker_wakes_only_when_the_first_blocks() {
    // The first work sleeps: wq_worker_sleeping() drops nr_running to 0 with
    // a work pending, so the spare is woken and runs the second one at once.
    let w = "{ queue_work = { wq = \"events\", work = [{ sleep = \"1ms\" }, { run = \"10us\" }] } }, \
             { queue_work = { wq = \"events\", run = \"100us\" } }";
    let sim = run(w, 3_000);
    let r = ran(&sim);
    assert_eq!(r.len(), 2, "two workers ran: {r:?}");
    assert!(r.iter().all(|(c, _, cpu)| c.starts_with("kworker/1:") && *cpu == 1), "{r:?}");
    let pool = sim.w.m.kt.kthreads.cpu_pools[1][0].expect("the pool");
    assert_eq!(sim.w.m.kt.kthreads.pools[pool].nr_running, 0);
    assert!(sim.w.m.kt.kthreads.pools[pool].worklist.is_empty());
}

#[test]
fn highpri_works_run_at_nice_minus_20_and_unbound_ones_in_parallel() {
    let w = "{ queue_work = { wq = \"kblockd\", run = \"10us\" } }, \
             { queue_work = { wq = \"events_unbound\", run = \"500us\" } }, \
             { queue_work = { wq = \"events_unbound\", run = \"500us\" } }";
    let sim = run(w, 3_000);
    let r = ran(&sim);
    let hi: Vec<_> = sim.w.m.kt.k.sched.tasks.iter().filter(|t| t.comm == "kworker/1:0H").collect();
    assert_eq!(hi.len(), 1);
    assert_eq!(hi[0].nice, -20);
    assert!(hi[0].is_per_cpu_kthread());
    // Unbound workers never count in nr_running: each work gets a worker,
    // and they run at the same time on different CPUs.
    let unbound: Vec<_> = r.iter().filter(|(c, _, _)| c.starts_with("kworker/u")).collect();
    assert_eq!(unbound.len(), 2, "{r:?}");
    assert_ne!(unbound[0].2, unbound[1].2);
    let u = sim.w.m.kt.k.sched.tasks.iter().find(|t| t.comm.starts_with("kworker/u")).expect("an unbound worker");
    assert!(!u.is_per_cpu_kthread(), "an unbound worker may run on any CPU of its node");
}

#[test]
fn flush_work_sleeps_until_the_work_is_done() {
    let w = "{ queue_work = { wq = \"events\", run = \"300us\", wait = true } }";
    let sim = run(w, 3_000);
    let q = sim.w.m.kt.k.sched.tasks.iter().find(|t| t.comm == "q").expect("q");
    // It waited for the work, then went on to its sleep.
    assert_eq!(q.state, TaskState::Blocked);
    assert!(q.stats.nr_wakeups >= 1);
    assert_eq!(sim.w.m.kt.kthreads.works_done.iter().sum::<u64>(), 1);
}

#[test]
fn too_many_idle_workers_are_reaped_after_five_minutes() {
    // Four works that each block make four workers; after the idle timeout
    // the pool keeps two idle ones (too_many_workers: idle > 2 and idle - 2
    // >= busy / 4).
    let blocking = "{ queue_work = { wq = \"events\", work = [{ sleep = \"1ms\" }] } }";
    let w = [blocking; 4].join(", ");
    let sim = run(&w, 301_000_000);
    let pool = sim.w.m.kt.kthreads.cpu_pools[1][0].expect("the pool");
    let p = &sim.w.m.kt.kthreads.pools[pool];
    assert!(p.nr_workers >= 2 && p.nr_workers <= 3, "{} workers left", p.nr_workers);
    let dead = sim
        .w
        .m
        .kt
        .k
        .sched
        .tasks
        .iter()
        .filter(|t| t.comm.starts_with("kworker/1:") && t.state == TaskState::Dead)
        .count();
    assert!(dead >= 2, "{dead} reaped");
}
