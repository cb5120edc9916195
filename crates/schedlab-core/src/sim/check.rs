//! The invariant checker (`--check`), as kernel/sched/debug.c and the
//! SCHED_WARN_ON()s sprinkled through the scheduler would catch them: one
//! running task per CPU, affinity respected, every runnable task on exactly
//! one runqueue, CPU time conserved, the counters consistent, (with
//! push/pull) no RT task waiting behind a lower priority on a CPU it may use,
//! and every page of a node accounted for (mm).

use crate::error::SimError;
use crate::kernel::features::Feature;
use crate::sched::task::TaskState;
use crate::sim::Sim;

impl Sim {
    pub fn check_invariants(&self) -> Result<(), SimError> {
        let mut seen = vec![0u32; self.w.m.kt.k.sched.tasks.len()];
        for rq in &self.w.m.kt.k.sched.rqs {
            if let Some(c) = rq.curr {
                let t = &self.w.m.kt.k.sched.tasks[c];
                if t.cpu != rq.cpu {
                    return Err(SimError::Invariant {
                        message: format!("task {} runs on CPU {} but task_cpu is {}", t.comm, rq.cpu, t.cpu),
                    });
                }
                if !t.cpus.test(rq.cpu) {
                    return Err(SimError::Invariant {
                        message: format!(
                            "task {} runs on CPU {} outside its affinity {}",
                            t.comm,
                            rq.cpu,
                            t.cpus.to_list_string()
                        ),
                    });
                }
            }
            for tid in self.w.m.kt.k.rq_cfs_tasks(rq.cpu) {
                seen[tid] += 1;
                if self.w.m.kt.k.sched.tasks[tid].cpu != rq.cpu {
                    return Err(SimError::Invariant {
                        message: format!(
                            "task {} queued on CPU {} but task_cpu is {}",
                            self.w.m.kt.k.sched.tasks[tid].comm, rq.cpu, self.w.m.kt.k.sched.tasks[tid].cpu
                        ),
                    });
                }
            }
            for tid in rq.rt.active.iter() {
                seen[tid] += 1;
                if self.w.m.kt.k.sched.tasks[tid].cpu != rq.cpu {
                    return Err(SimError::Invariant {
                        message: format!(
                            "RT task {} queued on CPU {} but task_cpu is {}",
                            self.w.m.kt.k.sched.tasks[tid].comm, rq.cpu, self.w.m.kt.k.sched.tasks[tid].cpu
                        ),
                    });
                }
            }
            for &(deadline, _, tid) in rq.dl.root.iter() {
                if tid == crate::sched::dl_rq::FAIR_SERVER {
                    continue;
                }
                seen[tid] += 1;
                let t = &self.w.m.kt.k.sched.tasks[tid];
                let d = t.dl.as_deref();
                if t.cpu != rq.cpu || d.is_none_or(|d| d.deadline != deadline || !d.on_dl_rq || d.dl_throttled) {
                    return Err(SimError::Invariant {
                        message: format!("deadline task {} queued on CPU {} out of its state: {:?}", t.comm, rq.cpu, d),
                    });
                }
            }
            if rq.dl.dl_nr_running as usize != rq.dl.root.len() {
                return Err(SimError::Invariant {
                    message: format!(
                        "CPU {}: dl_nr_running {} != {} queued",
                        rq.cpu,
                        rq.dl.dl_nr_running,
                        rq.dl.root.len()
                    ),
                });
            }
            let a = &rq.acct;
            if a.total() != rq.acct_since {
                return Err(SimError::Invariant {
                    message: format!(
                        "CPU {} time not conserved: {} accounted vs {} elapsed",
                        rq.cpu,
                        a.usr + a.nice + a.sys + a.idle,
                        rq.acct_since
                    ),
                });
            }
            let delayed = self
                .w
                .m
                .kt
                .k
                .rq_cfs_tasks(rq.cpu)
                .into_iter()
                .filter(|&t| self.w.m.kt.k.sched.tasks[t].se.sched_delayed)
                .filter(|&t| self.w.m.kt.k.counted_at_root(t, rq.cpu))
                .count();
            if delayed != self.w.m.kt.k.sched.cfs_rqs[rq.cpu].h_nr_delayed as usize {
                return Err(SimError::Invariant {
                    message: format!(
                        "CPU {}: {} sched_delayed tasks queued, h_nr_delayed {}",
                        rq.cpu, delayed, self.w.m.kt.k.sched.cfs_rqs[rq.cpu].h_nr_delayed
                    ),
                });
            }
            let (k, brief) = (&self.w.m.kt.k, self.w.m.kt.k.sched.rq_idle[rq.cpu]);
            if (brief.nr_running, brief.idle_h_nr_running, brief.has_curr, k.idle_mask_agrees(rq.cpu))
                != (rq.nr_running, k.sched.cfs_rqs[rq.cpu].idle_h_nr_running, rq.curr.is_some(), true)
            {
                return Err(SimError::Invariant {
                    message: format!("CPU {}: rq_idle {:?} differs from its runqueue", rq.cpu, brief),
                });
            }
            if rq.nr_running
                != self.w.m.kt.k.sched.cfs_rqs[rq.cpu].h_nr_running + rq.rt.rt_nr_running + rq.dl.dl_nr_running
            {
                return Err(SimError::Invariant {
                    message: format!(
                        "CPU {}: nr_running {} != cfs {} + rt {} + dl {}",
                        rq.cpu,
                        rq.nr_running,
                        self.w.m.kt.k.sched.cfs_rqs[rq.cpu].h_nr_running,
                        rq.rt.rt_nr_running,
                        rq.dl.dl_nr_running
                    ),
                });
            }
        }
        if let Some(message) = self.w.m.kt.k.check_dl_bw() {
            return Err(SimError::Invariant { message });
        }
        let idle = self.w.m.kt.k.sched.rqs.iter().filter(|rq| rq.curr.is_none()).count() as u64;
        let total: u64 = self.w.m.kt.k.sched.rqs.iter().map(|rq| rq.nr_running as u64).sum();
        if idle != self.w.m.kt.k.sched.wasted.nr_idle_cpus || total != self.w.m.kt.k.sched.wasted.total_nr_running {
            return Err(SimError::Invariant {
                message: format!(
                    "counters drifted: {} idle CPUs counted {}, {} runnable counted {}",
                    idle, self.w.m.kt.k.sched.wasted.nr_idle_cpus, total, self.w.m.kt.k.sched.wasted.total_nr_running
                ),
            });
        }
        for (tid, t) in self.w.m.kt.k.sched.tasks.iter().enumerate() {
            // A sched_delayed task sleeps but is still queued; a throttled
            // deadline task is runnable but off its dl_rq, and so is a
            // parked fair task (6.18's task based throttle).
            let throttled = (t.policy.is_dl() && t.dl.as_deref().is_some_and(|d| d.dl_throttled)) || t.throttled;
            let want = u32::from((t.state == TaskState::Runnable && !throttled) || t.se.sched_delayed);
            if seen[tid] != want {
                return Err(SimError::Invariant {
                    message: format!("task {} ({:?}) is on {} runqueues", t.comm, t.state, seen[tid]),
                });
            }
        }
        self.check_rt_invariant().map_err(|message| SimError::Invariant { message })?;
        if let Some(message) = self.w.m.mm.page_accounting_error() {
            return Err(SimError::Invariant { message });
        }
        Ok(())
    }

    /// RT invariant (the checker): with push/pull on, no runnable RT task
    /// with an unrestricted affinity waits while a CPU runs something of
    /// lower priority, unless a task with a restricted affinity waits ahead
    /// of it on its runqueue (the case the seed leaves uncovered). Throttled runqueues are exempt on both sides (their
    /// RT tasks may not run, and the kernel does not push them away), and so
    /// are runqueues with deadline entities (the fair server included).
    ///
    /// With RT_PUSH_IPI the pull is an IPI chain, so a violation may last
    /// one push round: (CPUs + 1) IPI deliveries without an RT task moving;
    /// it is an error beyond.
    pub fn check_rt_invariant(&self) -> Result<(), String> {
        match self.rt_invariant_violation() {
            Ok(()) => {
                self.rt_inv_since.set(None);
                Ok(())
            }
            Err(e) => {
                if !self.w.m.kt.k.cfg.features.on(Feature::RT_PUSH_IPI) {
                    return Err(e);
                }
                // Each push or pull moves the chain on: the window restarts
                // when an RT task has moved since it opened (one lower CPU
                // serving several waiting tasks in turn is progress).
                let moved = self.w.m.kt.k.sched.rt_migrations;
                let since = match self.rt_inv_since.get() {
                    Some((since, at)) if at == moved => since,
                    _ => self.w.m.kt.k.now,
                };
                self.rt_inv_since.set(Some((since, moved)));
                let round = (self.w.m.kt.k.sched.rqs.len() as u64 + 1) * self.w.m.kt.k.cfg.costs.wakeup_ipi_ns;
                if self.w.m.kt.k.now - since > round {
                    return Err(format!(
                        "{e} for {} ns, longer than a push round ({round} ns)",
                        self.w.m.kt.k.now - since
                    ));
                }
                Ok(())
            }
        }
    }

    fn rt_invariant_violation(&self) -> Result<(), String> {
        if !self.w.m.kt.k.cfg.mech.rt_push_pull() || self.w.m.kt.k.sched.rt_nr_tasks == 0 {
            return Ok(());
        }
        let nr = self.w.m.kt.k.sched.rqs.len();
        // The lowest priority any unthrottled CPU runs (larger = lower).
        let mut lowest: Option<(i32, usize)> = None;
        for rq in &self.w.m.kt.k.sched.rqs {
            // A throttled rt_rq, or a CPU whose fair server runs (6.12+:
            // the fair task it picked runs at deadline priority), or runs
            // the task it picked after throttling itself in that pick.
            if rq.rt.rt_throttled || rq.dl.fs.dl.on_dl_rq || (rq.curr.is_some() && rq.dl.fs.served == rq.curr) {
                continue;
            }
            let pr = self.w.m.kt.k.sched.curr_prio(rq.cpu);
            if lowest.is_none_or(|(l, _)| pr > l) {
                lowest = Some((pr, rq.cpu));
            }
        }
        let Some((low, low_cpu)) = lowest else { return Ok(()) };
        for rq in &self.w.m.kt.k.sched.rqs {
            // RT tasks behind a deadline entity wait for a higher class,
            // which RT push/pull leaves alone (it pushes on RT's own
            // switches and wakeups).
            if rq.rt.rt_throttled || rq.dl.dl_nr_running > 0 || (rq.curr.is_some() && rq.dl.fs.served == rq.curr) {
                continue;
            }
            for t in rq.rt.active.iter() {
                if rq.curr == Some(t) {
                    continue;
                }
                if self.w.m.kt.k.sched.tasks[t].nr_cpus_allowed < nr {
                    // The seed's uncovered case: push_rt_tasks stops at a
                    // head it cannot place, so the tasks behind it stay even
                    // where they could run. The rq is exempt.
                    break;
                }
                let p = self.w.m.kt.k.sched.tasks[t].prio();
                if p < low {
                    return Err(format!(
                        "RT task {} (prio {}) waits on CPU {} while CPU {} runs prio {}",
                        self.w.m.kt.k.sched.tasks[t].comm, p, rq.cpu, low_cpu, low
                    ));
                }
                break; // lower ones on this rq wait behind this one anyway
            }
        }
        Ok(())
    }
}
