//! The event loop: pop the next event, hand it to the room that handles it,
//! run the reschedules it asked for, keep the books, stop at the end.

use crate::engine::event::Ev;
use crate::engine::sim::Sim;
use crate::engine::time::Instant;
use crate::error::SimError;
use crate::scenario::MAX_SIM_NS;
use crate::sched::task::TaskState;
use crate::stats::CpuTime;

impl Sim {
    /// Run to the end. Returns an error if the model hit a fatal condition.
    pub fn run(&mut self) -> Result<(), SimError> {
        while let Some((t, ev)) = self.q.pop() {
            if t.0 > self.end_ns {
                break;
            }
            self.now = t.0;
            self.stats.events_processed += 1;
            match ev {
                Ev::End => {
                    self.stop_reason = "duration reached";
                    let (w, iv) = (self.stats.rec.warmup, self.stats.rec.interval);
                    if self.now > w && (self.now - w).is_multiple_of(iv) {
                        self.take_sample();
                    }
                    break;
                }
                _ => self.handle(ev),
            }
            self.flush_resched();
            self.account_wasted();
            if let Some(e) = self.fatal.take() {
                return Err(e);
            }
            if self.check {
                self.check_invariants()?;
            }
            if self.live_tasks == 0 && self.all_started() && self.end_ns == MAX_SIM_NS {
                self.stop_reason = "all tasks exited";
                break;
            }
        }
        if self.end_ns == MAX_SIM_NS && self.live_tasks > 0 {
            if self.q.is_empty() {
                return Err(SimError::Invariant {
                    message: format!(
                        "deadlock: {} tasks are blocked forever and no event is pending (a wait without a signal, or a barrier that cannot fill)",
                        self.live_tasks
                    ),
                });
            }
            self.stop_reason = "safety limit reached";
        }
        self.end_ns = self.now.min(self.end_ns);
        for cpu in 0..self.rqs.len() {
            self.account_cpu(cpu);
        }
        Ok(())
    }

    fn all_started(&self) -> bool {
        !self.tasks.iter().any(|t| t.state == TaskState::New)
    }

    fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::Start(tid) => self.wake_up_new_task(tid, None),
            Ev::Tick(cpu) => self.scheduler_tick(cpu),
            Ev::OpDone(cpu) => self.op_done(cpu),
            Ev::Timeout(tid) => {
                let cpu = self.tasks[tid].cpu;
                self.try_to_wake_up(tid, cpu, false);
            }
            Ev::ActiveBalance(cpu) => self.active_load_balance_cpu_stop(cpu),
            Ev::NohzKick(cpu) => self.nohz_idle_balance(cpu),
            Ev::RtPeriod => self.sched_rt_period_timer(),
            Ev::RtoPushIpi(cpu) => self.rto_push_irq_work_func(cpu),
            Ev::Sample => {
                self.take_sample();
                let next = self.now + self.stats.rec.interval;
                if next < self.end_ns {
                    self.q.schedule(Instant(next), Ev::Sample);
                }
            }
            Ev::End => {}
        }
    }

    fn take_sample(&mut self) {
        for cpu in 0..self.rqs.len() {
            self.account_cpu(cpu);
        }
        if self.stats.rec.warmup > 0 && self.now == self.stats.rec.warmup && self.stats.task_base.is_empty() {
            self.stats.task_base = (0..self.tasks.len()).map(|t| self.task_counters(t)).collect();
        }
        let accts: Vec<CpuTime> = self.rqs.iter().map(|r| r.acct).collect();
        self.stats.rec.sample(self.now, &accts);
    }
}
