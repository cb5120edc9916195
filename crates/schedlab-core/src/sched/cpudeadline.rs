//! Models kernel/sched/cpudeadline.c and the SMP half of deadline.c:
//! global EDF across CPUs. cpudl finds the CPUs without deadline tasks, or
//! else the one whose earliest deadline is the latest; a woken task that
//! cannot run where it woke goes there (select_task_rq_dl,
//! find_later_rq); waiting tasks are pushed after a switch or a wakeup
//! (push_dl_tasks), and a CPU whose deadline task left pulls the earliest
//! waiting one of the overloaded CPUs (pull_dl_task).

use crate::cpumask::CpuMask;
use crate::sched::env::SchedEnv;
use crate::sched::sd_flags::SD_WAKE_AFFINE;
use crate::sched::task::TaskId;

impl SchedEnv {
    /// dl_task_is_earliest_deadline(p, rq).
    #[inline]
    pub(crate) fn dl_task_is_earliest_deadline(&self, p: TaskId, cpu: usize) -> bool {
        self.sched.rqs[cpu].dl.earliest().is_none_or(|e| self.dle(p).deadline < e)
    }

    /// cpudl_find(): the CPUs without deadline tasks `p` may use; else the
    /// CPU whose earliest deadline is the latest, if `p`'s is earlier.
    ///
    /// Deviation: cpudl keeps a max-heap; among CPUs with equal latest
    /// deadlines its root is the one the heap's history put there, the
    /// model's the lowest-numbered.
    pub(crate) fn cpudl_find(&self, p: TaskId) -> Option<CpuMask> {
        let t = &self.sched.tasks[p];
        let nr = self.sched.rqs.len();
        let mut free = CpuMask::new(nr);
        let mut best: Option<(u64, usize)> = None;
        for cpu in 0..nr {
            match self.sched.rqs[cpu].dl.earliest() {
                None => free.set(cpu),
                Some(e) => {
                    if best.is_none_or(|(b, _)| e > b) {
                        best = Some((e, cpu));
                    }
                }
            }
        }
        if free.intersects(&t.cpus) {
            return Some(free.and(&t.cpus));
        }
        let (dl, cpu) = best?;
        if t.cpus.test(cpu) && self.dle(p).deadline < dl {
            let mut m = CpuMask::new(nr);
            m.set(cpu);
            return Some(m);
        }
        None
    }

    /// find_later_rq(): among cpudl's candidates, the task's own CPU, else
    /// (walking its domains with SD_WAKE_AFFINE) `this_cpu` or the next
    /// candidate of the domain in cpumask_any_and_distribute()'s rotation,
    /// else this_cpu, else any candidate.
    pub(crate) fn find_later_rq(&mut self, p: TaskId, this_cpu: usize) -> Option<usize> {
        if self.sched.tasks[p].nr_cpus_allowed == 1 {
            return None;
        }
        let later = self.cpudl_find(p)?;
        let cpu = self.sched.tasks[p].cpu;
        if later.test(cpu) {
            return Some(cpu);
        }
        let this_ok = later.test(this_cpu);
        let nr = self.sched.rqs.len();
        for i in 0..self.topo.cpu_domains[cpu].len() {
            let d = self.topo.cpu_domains[cpu][i];
            let dom = &self.topo.domains[d];
            if dom.flags & SD_WAKE_AFFINE == 0 {
                continue;
            }
            if this_ok && dom.span.binary_search(&this_cpu).is_ok() {
                return Some(this_cpu);
            }
            let mut both = CpuMask::new(nr);
            for &c in dom.span.iter().filter(|&&c| later.test(c)) {
                both.set(c);
            }
            if both.weight() > 0 {
                return Some(self.cpumask_any_and_distribute(this_cpu, &both));
            }
        }
        if this_ok {
            return Some(this_cpu);
        }
        Some(self.cpumask_any_and_distribute(this_cpu, &later))
    }

    /// select_task_rq_dl() for a wakeup: a task woken where a deadline task
    /// runs that it cannot preempt (or that cannot move) goes to
    /// find_later_rq()'s CPU if it would be the earliest there.
    pub(crate) fn select_task_rq_dl(&mut self, p: TaskId, cpu: usize, this_cpu: usize) -> usize {
        let Some(curr) = self.sched.rqs[cpu].curr else { return cpu };
        let c = &self.sched.tasks[curr];
        let select = c.policy.is_dl()
            && (c.nr_cpus_allowed < 2 || self.dle(p).deadline >= self.dle(curr).deadline)
            && self.sched.tasks[p].nr_cpus_allowed > 1;
        if select {
            if let Some(target) = self.find_later_rq(p, this_cpu) {
                if self.dl_task_is_earliest_deadline(p, target) {
                    return target;
                }
            }
        }
        cpu
    }

    /// task_woken_dl(): a woken task that will wait behind the running
    /// deadline task is pushed.
    pub(crate) fn task_woken_dl(&mut self, cpu: usize, p: TaskId) {
        if self.sched.rqs[cpu].curr == Some(p)
            || self.sched.rqs[cpu].need_resched
            || self.sched.tasks[p].nr_cpus_allowed <= 1
        {
            return;
        }
        let Some(curr) = self.sched.rqs[cpu].curr else { return };
        let c = &self.sched.tasks[curr];
        if c.policy.is_dl() && (c.nr_cpus_allowed < 2 || self.dle(p).deadline >= self.dle(curr).deadline) {
            self.push_dl_tasks(cpu);
        }
    }

    // -------------------------------------------------------------- push/pull

    /// Move a queued, not running deadline task (deactivate, set_task_cpu,
    /// activate). `exec_cpu` runs the move.
    pub(crate) fn move_queued_task_dl(&mut self, p: TaskId, src: usize, dst: usize, exec_cpu: usize) {
        self.dequeue_task_dl(src, p, 0);
        self.set_task_cpu(p, dst, exec_cpu);
        self.enqueue_task_dl(dst, p, 0);
        self.sched.dl_stats.migrations += 1;
    }

    /// push_dl_task(rq): send the earliest waiting task where it would run
    /// at once. Returns true if a task moved.
    pub(crate) fn push_dl_task(&mut self, cpu: usize) -> bool {
        if !self.cfg.mech.dl_overload_pushable && !self.sched.rqs[cpu].dl.overloaded {
            return false; // before 6.7 an rq pushes only while overloaded
        }
        let Some(&(deadline, _, p)) = self.sched.rqs[cpu].dl.pushable.first() else { return false };
        if let Some(curr) = self.sched.rqs[cpu].curr {
            let c = &self.sched.tasks[curr];
            if c.policy.is_dl() && deadline < self.dle(curr).deadline && c.nr_cpus_allowed > 1 {
                // It preempts here, and curr can move: just reschedule.
                self.resched_curr(cpu);
                return false;
            }
        }
        // find_lock_later_rq(): one try is enough (no lock races here).
        let Some(dst) = self.find_later_rq(p, cpu) else { return false };
        if dst == cpu || !self.dl_task_is_earliest_deadline(p, dst) {
            return false;
        }
        self.move_queued_task_dl(p, cpu, dst, cpu);
        self.resched_curr(dst);
        true
    }

    /// push_dl_tasks(): push while it succeeds.
    pub fn push_dl_tasks(&mut self, cpu: usize) {
        while self.push_dl_task(cpu) {}
    }

    /// pull_dl_task(this_rq): from every overloaded CPU, take the earliest
    /// waiting task that would run here, unless it is about to run there.
    pub fn pull_dl_task(&mut self, this_cpu: usize) {
        if self.sched.rd.dlo_count == 0 {
            return;
        }
        let mut dmin = i64::MAX as u64;
        let mut resched = false;
        let cpus: Vec<usize> = self.sched.rd.dlo_mask.iter().collect();
        for src in cpus {
            if src == this_cpu {
                continue;
            }
            let this = &self.sched.rqs[this_cpu].dl;
            let next = self.sched.rqs[src].dl.earliest_next().unwrap_or(0);
            if this.dl_nr_running > 0 && this.earliest().is_some_and(|e| e < next) {
                continue;
            }
            if self.sched.rqs[src].dl.dl_nr_running <= 1 {
                continue;
            }
            // pick_earliest_pushable_dl_task(src_rq, this_cpu).
            let Some(&(deadline, _, p)) =
                self.sched.rqs[src].dl.pushable.iter().find(|&&(_, _, t)| self.sched.tasks[t].cpus.test(this_cpu))
            else {
                continue;
            };
            if deadline < dmin && self.dl_task_is_earliest_deadline(p, this_cpu) {
                let src_curr = self.sched.rqs[src].curr.map_or(0, |c| self.dl_deadline_of(c));
                if deadline < src_curr {
                    continue; // it is about to preempt there
                }
                self.move_queued_task_dl(p, src, this_cpu, this_cpu);
                dmin = deadline;
                resched = true;
            }
        }
        if resched {
            self.resched_curr(this_cpu);
        }
    }
}
