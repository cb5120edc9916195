//! rt-migrate-test (rt-tests; Steven Rostedt, 2007) as a workload: what the
//! tool does, what it records and its pass/fail rule (docs/FORMATS.md §5.1).
//!
//! The tool starts `nr_tasks` SCHED_FIFO threads at priorities
//! prio .. prio+nr_tasks−1 and raises its main thread to prio+nr_tasks.
//! Each iteration the main thread takes a time stamp (`now`), releases all
//! threads from a barrier, sleeps `sleep`, then waits for them on a second
//! barrier and checks the iteration. A thread takes its own time stamp when
//! it runs after the release, busy-loops until `run` has passed since that
//! stamp (so a preempted thread loops fewer times), records its start and
//! end offsets from `now` and its loop count, and waits at the end barrier.
//! With `check` (`-c`) the run stops at the first failed iteration.
//!
//! The scenario table `[rt_migrate_test]` is compiled into a main-thread
//! group and one template group per thread (scenario/mod.rs); the internal
//! ops of `Op::Rtmt` call into this state.

use crate::program::RtmtOp;
use crate::report::{RtmtAt, RtmtReport, RtmtRun, RtmtTask};

/// The `[rt_migrate_test]` parameters, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct RtmtConfig {
    /// NR_TASKS: the RT threads (the seed's `-c 5` on 4 CPUs: 5).
    pub nr_tasks: usize,
    /// `-p`: the lowest thread's SCHED_FIFO priority (2).
    pub prio: u32,
    /// `-r`: busy time from the thread's own start stamp (20 ms).
    pub run_ns: u64,
    /// `-s`: the main thread's sleep per iteration (100 ms).
    pub sleep_ns: u64,
    /// `-l`: iterations per run (50).
    pub loops: usize,
    /// `-m`: the allowed error (1000 us).
    pub maxerr_ns: u64,
    /// `-c`: stop a run at its first failed iteration and print the verdict.
    pub check: bool,
    /// How many times the tool is run back to back (the seed's overnight
    /// `while` loop).
    pub runs: usize,
    /// rt-tests 2.x: the highest thread pins itself to the next CPU of its
    /// allowed set each iteration (0, 1, 2, ...) to force migrations. The
    /// 2007 test of the seed did not.
    pub rotate_high: bool,
    /// Cost of one busy-loop pass (a gettimeofday() call and a compare),
    /// used only to print `loops:` and for the check rule's loop test.
    /// Default 119 ns: the seed's own output (20,000 us for 167,789 loops).
    pub loop_ns: u64,
}

/// What one run recorded, per iteration and thread (ns from `now`).
#[derive(Debug, Clone, Default)]
pub struct RunRecord {
    pub run: usize,
    pub failed: bool,
    pub starts: Vec<Vec<u64>>,
    pub lens: Vec<Vec<u64>>,
    pub loops: Vec<Vec<u64>>,
    pub pids: Vec<u32>,
    pub parent_pid: u32,
}

/// The tool's state and the experiment's tallies.
#[derive(Debug, Clone)]
pub struct RtMigrateTest {
    pub cfg: RtmtConfig,
    /// Group ids of the threads' templates, lowest priority first.
    pub task_groups: Vec<usize>,
    // --- the current run ---
    run: usize,
    /// The main thread's `loop`: the iteration the threads record into;
    /// `loops` (or the stop point) once the run is over.
    iter: usize,
    nr_runs: usize,
    now: u64,
    done: bool,
    rotate_cpu: usize,
    cur: RunRecord,
    start_at: Vec<u64>,
    exec_at_start: Vec<u64>,
    // --- tallies over all runs ---
    pub runs_done: usize,
    pub failed_runs: usize,
    pub iterations: u64,
    pub failed_iterations: u64,
    pub max_latency_ns: u64,
    /// The iteration and run of max_latency_ns.
    pub max_latency_at: (usize, usize),
    /// Each iteration's worst delay of a higher thread behind a lower one,
    /// in log2 buckets of microseconds (as TaskStats::wakeup_latency_hist).
    pub latency_hist: [u64; crate::sched::task::LATENCY_HIST_BUCKETS],
    /// Failed iterations other than a run's first.
    pub failed_later_iterations: u64,
    task_max: Vec<u64>,
    task_min: Vec<u64>,
    task_tot: Vec<u64>,
    /// The first run and the first failed run, kept whole for the text
    /// output.
    pub kept: Vec<RunRecord>,
}

/// What the interpreter must do after an op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RtmtAction {
    Continue,
    /// End the main thread's iteration loop now (a failed check with `-c`).
    BreakLoop,
    /// The thread leaves its loop (`while (!done)`): it then tells the
    /// main thread's pthread_join and exits.
    LeaveLoop,
}

impl RtMigrateTest {
    pub fn new(cfg: RtmtConfig, task_groups: Vec<usize>) -> Self {
        let n = cfg.nr_tasks;
        RtMigrateTest {
            cfg,
            task_groups,
            run: 0,
            iter: 0,
            nr_runs: 0,
            now: 0,
            done: false,
            rotate_cpu: 0,
            cur: RunRecord::default(),
            start_at: vec![0; n],
            exec_at_start: vec![0; n],
            runs_done: 0,
            failed_runs: 0,
            iterations: 0,
            failed_iterations: 0,
            max_latency_ns: 0,
            max_latency_at: (0, 0),
            latency_hist: [0; crate::sched::task::LATENCY_HIST_BUCKETS],
            failed_later_iterations: 0,
            task_max: vec![0; n],
            task_min: vec![u64::MAX; n],
            task_tot: vec![0; n],
            kept: Vec::new(),
        }
    }

    /// The thread's index in the run, from its template group.
    pub fn index_of_group(&self, g: usize) -> Option<usize> {
        self.task_groups.iter().position(|&x| x == g)
    }

    /// The next CPU the highest thread pins itself to: `cpu` walks its saved
    /// mask and restarts at 0 past its end (`if (!CPU_ISSET(cpu, &save)) cpu = 0`).
    pub fn next_rotate_cpu(&mut self, allowed: impl Fn(usize) -> bool) -> usize {
        if !allowed(self.rotate_cpu) {
            self.rotate_cpu = 0;
        }
        let c = self.rotate_cpu;
        self.rotate_cpu += 1;
        c
    }

    /// Whether the threads have been told to leave (`done`).
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Apply one op of task `pid` at time `now`; `exec` is the calling
    /// thread's total CPU time (for the loop count).
    pub fn op(&mut self, op: RtmtOp, pid: u32, now: u64, exec: u64) -> RtmtAction {
        let n = self.cfg.nr_tasks;
        match op {
            RtmtOp::RunStart => {
                self.iter = 0;
                self.nr_runs = self.cfg.loops;
                self.done = false;
                self.rotate_cpu = 0;
                self.cur = RunRecord {
                    run: self.run,
                    failed: false,
                    starts: vec![vec![0; n]; self.cfg.loops],
                    lens: vec![vec![0; n]; self.cfg.loops],
                    loops: vec![vec![0; n]; self.cfg.loops],
                    pids: vec![0; n],
                    parent_pid: pid,
                };
            }
            RtmtOp::Mark => self.now = now,
            RtmtOp::ExitIfDone => {
                if self.done {
                    return RtmtAction::LeaveLoop;
                }
            }
            RtmtOp::Start(i) => {
                self.cur.pids[i] = pid;
                self.start_at[i] = now;
                self.exec_at_start[i] = exec;
            }
            RtmtOp::End(i) => {
                // record_time(): ignored once the run's iterations are over.
                if self.iter < self.nr_runs {
                    let l = self.iter;
                    self.cur.starts[l][i] = self.start_at[i].saturating_sub(self.now);
                    self.cur.lens[l][i] = now.saturating_sub(self.now);
                    self.cur.loops[l][i] = (exec - self.exec_at_start[i]) / self.cfg.loop_ns.max(1) + 1;
                }
            }
            RtmtOp::Check => {
                let l = self.iter;
                self.iterations += 1;
                let failed = self.check_times(l);
                self.tally(l);
                self.iter += 1;
                if failed {
                    self.failed_iterations += 1;
                    if l > 0 {
                        self.failed_later_iterations += 1;
                    }
                    self.cur.failed = true;
                    if self.cfg.check {
                        // `loop++; nr_runs = loop; break;`
                        self.nr_runs = self.iter;
                        return RtmtAction::BreakLoop;
                    }
                }
            }
            RtmtOp::Final => self.iter = self.nr_runs.max(self.iter),
            RtmtOp::Done => {
                self.done = true;
                self.finish_run();
            }
        }
        RtmtAction::Continue
    }

    /// check_times() [rt-migrate-test.c]: in increasing priority, task i
    /// fails the iteration if it started more than maxerr after task i−1 and
    /// also did fewer loops, or started after i−1 ended, or ended more than
    /// maxerr after it.
    fn check_times(&self, l: usize) -> bool {
        let (s, len, lp) = (&self.cur.starts[l], &self.cur.lens[l], &self.cur.loops[l]);
        let me = self.cfg.maxerr_ns;
        for i in 1..self.cfg.nr_tasks {
            let (last, last_loops, last_len) = (s[i - 1], lp[i - 1], len[i - 1]);
            if last < s[i]
                && s[i] - last > me
                && (lp[i] < last_loops || s[i] > last_len || (len[i] > last_len && len[i] - last_len > me))
            {
                return true;
            }
        }
        false
    }

    /// Per-thread Max/Min/Tot and the largest delay of a higher-priority
    /// thread behind a lower one.
    fn tally(&mut self, l: usize) {
        let s = &self.cur.starts[l];
        for (t, &v) in s.iter().enumerate() {
            self.task_max[t] = self.task_max[t].max(v);
            self.task_min[t] = self.task_min[t].min(v);
            self.task_tot[t] += v;
        }
        let mut worst = 0;
        for i in 1..s.len() {
            for j in 0..i {
                if s[i] > s[j] {
                    worst = worst.max(s[i] - s[j]);
                }
            }
        }
        if worst > self.max_latency_ns {
            self.max_latency_ns = worst;
            self.max_latency_at = (self.run, l);
        }
        let us = worst / 1000;
        self.latency_hist[(64 - us.leading_zeros() as usize).min(self.latency_hist.len() - 1)] += 1;
    }

    fn finish_run(&mut self) {
        self.runs_done += 1;
        if self.cur.failed {
            self.failed_runs += 1;
        }
        let first_failed = self.cur.failed && !self.kept.iter().any(|r| r.failed);
        if self.run == 0 || first_failed {
            let mut rec = self.cur.clone();
            let n = self.nr_runs.min(rec.starts.len());
            rec.starts.truncate(n);
            rec.lens.truncate(n);
            rec.loops.truncate(n);
            self.kept.push(rec);
        }
        self.run += 1;
    }

    /// The report's `rt_migrate_test` object.
    /// The tool's results for the report.
    pub fn report(&self) -> RtmtReport {
        let us = |ns: u64| ns / 1000;
        let iters = self.iterations.max(1);
        let tasks = (0..self.cfg.nr_tasks)
            .map(|t| RtmtTask {
                task: t,
                prio: self.cfg.prio as usize + t,
                max_us: us(self.task_max[t]),
                min_us: if self.task_min[t] == u64::MAX { 0 } else { us(self.task_min[t]) },
                tot_us: us(self.task_tot[t]),
                avg_us: us(self.task_tot[t] / iters),
            })
            .collect();
        let conv =
            |m: &Vec<Vec<u64>>| -> Vec<Vec<u64>> { m.iter().map(|row| row.iter().map(|&v| us(v)).collect()).collect() };
        let kept_runs = self
            .kept
            .iter()
            .map(|r| RtmtRun {
                run: r.run,
                failed: r.failed,
                parent_pid: r.parent_pid,
                pids: r.pids.clone(),
                starts_us: conv(&r.starts),
                lens_us: conv(&r.lens),
                loops: r.loops.clone(),
            })
            .collect();
        RtmtReport {
            nr_tasks: self.cfg.nr_tasks,
            prio: self.cfg.prio,
            run_ms: self.cfg.run_ns / 1_000_000,
            sleep_ms: self.cfg.sleep_ns / 1_000_000,
            loops: self.cfg.loops,
            maxerr_us: us(self.cfg.maxerr_ns),
            check: self.cfg.check,
            rotate_high: self.cfg.rotate_high,
            runs: self.runs_done,
            failed_runs: self.failed_runs,
            iterations: self.iterations,
            failed_iterations: self.failed_iterations,
            failed_later_iterations: self.failed_later_iterations,
            latency_hist_us: self.latency_hist.to_vec(),
            max_wake_latency_us: self.max_latency_ns as f64 / 1000.0,
            max_wake_latency_at: RtmtAt { run: self.max_latency_at.0, iteration: self.max_latency_at.1 },
            tasks,
            kept_runs,
            // Set by the report, which knows the tasks (sim/report.rs).
            earlier_threads: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> RtmtConfig {
        RtmtConfig {
            nr_tasks: 3,
            prio: 2,
            run_ns: 20_000_000,
            sleep_ns: 100_000_000,
            loops: 2,
            maxerr_ns: 1_000_000,
            check: true,
            runs: 1,
            rotate_high: false,
            loop_ns: 100,
        }
    }

    /// One iteration: thread i starts at starts[i] us, runs `cpu[i]` us.
    fn iteration(t: &mut RtMigrateTest, base: u64, starts: &[u64], cpu: &[u64]) -> RtmtAction {
        t.op(RtmtOp::Mark, 1, base, 0);
        for (i, (&s, &c)) in starts.iter().zip(cpu).enumerate() {
            t.op(RtmtOp::Start(i), 2 + i as u32, base + s * 1000, 0);
            t.op(RtmtOp::End(i), 2 + i as u32, base + s * 1000 + 20_000_000, c * 1000);
        }
        t.op(RtmtOp::Check, 1, base + 120_000_000, 0)
    }

    #[test]
    fn check_times_flags_a_higher_thread_behind_a_lower_one() {
        let mut t = RtMigrateTest::new(cfg(), vec![1, 2, 3]);
        t.op(RtmtOp::RunStart, 1, 0, 0);
        // All start within 50 us: pass.
        assert_eq!(iteration(&mut t, 0, &[30, 40, 20], &[20_000, 20_000, 20_000]), RtmtAction::Continue);
        assert_eq!(t.failed_iterations, 0);
        // Thread 1 (prio 3) starts 20 ms after thread 0 ended: fail, -c stops the run.
        assert_eq!(iteration(&mut t, 200_000_000, &[30, 20_040, 20], &[20_000, 20_000, 20_000]), RtmtAction::BreakLoop);
        assert_eq!(t.failed_iterations, 1);
        assert_eq!(t.max_latency_ns, 20_010_000);
        t.op(RtmtOp::Final, 1, 0, 0);
        t.op(RtmtOp::Done, 1, 0, 0);
        assert_eq!((t.runs_done, t.failed_runs), (1, 1));
    }

    #[test]
    fn a_lower_thread_that_sneaked_in_first_is_not_a_failure() {
        // The seed's second example: the lowest thread started first and was
        // preempted (few loops); the higher ones started within maxerr.
        let mut t = RtMigrateTest::new(cfg(), vec![1, 2, 3]);
        t.op(RtmtOp::RunStart, 1, 0, 0);
        iteration(&mut t, 0, &[0, 46, 31], &[3, 20_000, 20_000]);
        assert_eq!(t.failed_iterations, 0);
        // The lowest thread waiting a whole run interval is expected.
        iteration(&mut t, 200_000_000, &[20_060, 61, 55], &[20_000, 20_000, 20_000]);
        assert_eq!(t.failed_iterations, 0);
    }
}
