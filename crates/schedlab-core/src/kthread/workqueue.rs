//! Models kernel/workqueue.c's concurrency-managed workqueues (2.6.36+):
//! work items queued on a workqueue are served by worker pools — per CPU a
//! normal pool (kworker/N:M, nice 0) and a highpri pool (kworker/N:MH,
//! nice -20) shared by every bound workqueue, and per node unbound pools
//! (kworker/uP:M) — whose workers are kernel threads competing for the CPU
//! like any task. Bound workers are per-CPU kthreads (nr_cpus_allowed == 1),
//! which is what the wakeup path's kthread stacking rule (seed 001) sees.
//!
//! Concurrency management: a bound pool counts its workers that run works
//! and are not blocked (nr_running); queueing a work wakes an idle worker
//! only when that count is 0, and a worker that blocks inside a work
//! (wq_worker_sleeping) wakes the next idle one only if it was the last
//! running. A worker keeps taking works while it is the only one running
//! (keep_working). Unbound workers never count, so every queued work finds
//! a worker. A worker that starts working with no idle worker left makes a
//! spare (manage_workers), and surplus idle workers are reaped after
//! IDLE_WORKER_TIMEOUT (too_many_workers).
//!
//! Deviation: a worker is created at once, by nobody (the kernel's manager
//! worker forks it through kthreadd, and the mayday timer rescues a pool
//! with none); max_active, non-reentrancy and WQ_MEM_RECLAIM's rescuers are
//! not modelled; the barrier work of flush_work() is the item's own
//! completion (its wake comes from the worker, as wq_barrier_func's).
//! Deviation: before cmwq (2.6.36) each workqueue had its own thread per
//! CPU; here the bound workqueues of a pre-cmwq kernel share one thread per
//! CPU (events/N, nice -5), which is all that vmstat_update needs.

use crate::cpumask::CpuMask;
use crate::engine::event::Ev;
use crate::engine::time::Instant;
use crate::kernel::workqueue::{WQ_CPU_INTENSIVE, WQ_HIGHPRI, WQ_UNBOUND};
use crate::kthread::floor::KthreadFloor;
use crate::kthread::{
    WorkDone, WorkItem, Worker, WorkerPool, WORKER_CPU_INTENSIVE, WORKER_IDLE, WORKER_NOT_RUNNING, WORKER_PREP,
    WORKER_UNBOUND,
};
use crate::prio::Policy;
use crate::program::{Program, TaskGroup};
use crate::sched::task::{TaskId, TaskState};

/// HIGHPRI_NICE_LEVEL: MIN_NICE.
pub const HIGHPRI_NICE_LEVEL: i32 = crate::prio::MIN_NICE;
/// IDLE_WORKER_TIMEOUT: 300 * HZ, five minutes.
pub const IDLE_WORKER_TIMEOUT_NS: u64 = 300_000_000_000;
/// MAX_IDLE_WORKERS_RATIO: 1 idle for every 4 busy workers.
const MAX_IDLE_WORKERS_RATIO: u32 = 4;

impl KthreadFloor {
    // ------------------------------------------------------------ pools

    /// The pool a work queued on `wq` from `cpu` goes to (__queue_work):
    /// a bound workqueue's pool of that CPU, an unbound one's pool of the
    /// CPU's node (wq_select_unbound_cpu keeps the local CPU).
    pub(crate) fn pool_for(&mut self, wq: usize, cpu: usize) -> usize {
        let def = &self.kthreads.workqueues[wq];
        let (flags, nice) = (def.flags, def.nice);
        if flags & WQ_UNBOUND != 0 {
            let node = self.k.machine.node_of(cpu);
            if let Some(&(_, _, p)) = self.kthreads.unbound_pools.iter().find(|&&(n, ni, _)| n == node && ni == nice) {
                return p;
            }
            let cpus = CpuMask::from_cpus(self.k.sched.rqs.len(), &self.k.machine.node_cpus[node]);
            let p = self.new_pool(None, Some(node), nice, cpus);
            self.kthreads.unbound_pools.push((node, nice, p));
            return p;
        }
        let hi = usize::from(flags & WQ_HIGHPRI != 0);
        if self.kthreads.cpu_pools.len() < self.k.sched.rqs.len() {
            self.kthreads.cpu_pools.resize(self.k.sched.rqs.len(), [None, None]);
        }
        if let Some(p) = self.kthreads.cpu_pools[cpu][hi] {
            return p;
        }
        // Before cmwq (2.6.36) the CPU's keventd thread ran at nice -5.
        let nice = if hi == 1 {
            HIGHPRI_NICE_LEVEL
        } else if self.k.cfg.mech.cmwq {
            0
        } else {
            -5
        };
        let cpus = CpuMask::from_cpus(self.k.sched.rqs.len(), &[cpu]);
        let p = self.new_pool(Some(cpu), None, nice, cpus);
        self.kthreads.cpu_pools[cpu][hi] = Some(p);
        p
    }

    fn new_pool(&mut self, cpu: Option<usize>, node: Option<usize>, nice: i32, cpus: CpuMask) -> usize {
        let id = self.kthreads.pools.len();
        self.kthreads.pools.push(WorkerPool {
            cpu,
            node,
            nice,
            cpus,
            worklist: Default::default(),
            nr_running: 0,
            idle_list: Vec::new(),
            busy: Vec::new(),
            nr_workers: 0,
            next_id: 0,
            idle_timer: None,
            id,
        });
        id
    }

    /// create_worker(): a new kthread of the pool, idle.
    pub(crate) fn create_worker(&mut self, pool: usize) -> TaskId {
        let (group, template) = self.kworker_group();
        let p = &self.kthreads.pools[pool];
        let g = TaskGroup {
            name: "kworker".into(),
            count: 0,
            policy: Policy::Normal,
            nice: p.nice,
            rt_priority: 0,
            dl: Default::default(),
            cpus: p.cpus.clone(),
            start: crate::engine::rng::Dist::Const(0),
            kthread: true,
            memory_bound: 0,
            memory_traffic: 0,
            cgroup: 0,
            program: Program::default(),
        };
        let comm = match p.cpu {
            Some(cpu) if !self.k.cfg.mech.cmwq => format!("events/{cpu}"),
            Some(cpu) => format!("kworker/{cpu}:{}{}", p.next_id, if p.nice < 0 { "H" } else { "" }),
            None => format!("kworker/u{}:{}", p.id, p.next_id),
        };
        let unbound = p.cpu.is_none();
        let tid = self.k.alloc_task(group, Some(template), &g, 0);
        let t = &mut self.k.sched.tasks[tid];
        t.comm = comm.chars().take(15).collect();
        t.state = TaskState::Blocked;
        t.need_advance = true;
        t.cpu = g.cpus.first().unwrap_or(0);
        let w = self.kthreads.workers.len();
        self.kthreads.workers.push(Worker {
            task: tid,
            pool,
            current: None,
            flags: WORKER_PREP | if unbound { WORKER_UNBOUND } else { 0 },
            sleeping: false,
            last_active: self.k.now,
        });
        self.k.sched.tasks[tid].worker = Some(w);
        let p = &mut self.kthreads.pools[pool];
        p.next_id += 1;
        p.nr_workers += 1;
        self.worker_enter_idle(w);
        tid
    }

    /// The report group and template every kworker belongs to.
    fn kworker_group(&mut self) -> (usize, usize) {
        if let Some(g) = self.kthreads.kworker_group {
            return g;
        }
        let template = self.progs.templates.len();
        self.progs.templates.push(TaskGroup {
            name: "kworker".into(),
            count: 0,
            policy: Policy::Normal,
            nice: 0,
            rt_priority: 0,
            dl: Default::default(),
            cpus: CpuMask::full(self.k.sched.rqs.len()),
            start: crate::engine::rng::Dist::Const(0),
            kthread: true,
            memory_bound: 0,
            memory_traffic: 0,
            cgroup: 0,
            program: Program::default(),
        });
        let group = self.progs.group_names.len();
        self.progs.group_names.push("kworker".into());
        self.kthreads.kworker_group = Some((group, template));
        (group, template)
    }

    // ------------------------------------------------------ queue_work

    /// queue_work_on(): queue a work item of `program` on `wq` from `cpu`
    /// (the CPU of the queueing context, or `queue_work_on`'s), issued by a
    /// task (`from_task`) or an interrupt handler.
    pub fn queue_work(&mut self, wq: usize, program: usize, cpu: usize, done: WorkDone, from_task: bool) {
        let pool = self.pool_for(wq, cpu);
        let work = WorkItem { program, wq, done, queued_at: self.k.now };
        let id = match self.kthreads.free_works.pop() {
            Some(i) => {
                self.kthreads.works[i] = Some(work);
                i
            }
            None => {
                self.kthreads.works.push(Some(work));
                self.kthreads.works.len() - 1
            }
        };
        let p = &mut self.kthreads.pools[pool];
        p.worklist.push_back(id);
        // insert_work(): __need_more_worker().
        if p.nr_running == 0 {
            self.wake_up_worker(pool, cpu, from_task);
        }
    }

    /// wake_up_worker(): wake the first idle worker; with none, make one
    /// (Deviation: at once).
    fn wake_up_worker(&mut self, pool: usize, waker_cpu: usize, from_task: bool) {
        let p = &self.kthreads.pools[pool];
        let tid = match p.idle_list.last() {
            Some(&t) => t,
            // Before cmwq a CPU had one thread per workqueue, which takes
            // the work when it is done with the one it runs.
            None if !self.k.cfg.mech.cmwq && p.nr_workers > 0 => return,
            None => self.create_worker(pool),
        };
        self.k.try_to_wake_up(tid, waker_cpu, from_task);
    }

    // ------------------------------------------------ the worker thread

    /// worker_thread(): the worker `tid` has finished its work item (or
    /// was woken from idle): take the next one if it should. Returns true
    /// when it goes on with a work, false when it went idle (blocked).
    #[inline(never)]
    pub(crate) fn worker_next(&mut self, tid: TaskId) -> bool {
        let w = self.k.sched.tasks[tid].worker.expect("a worker");
        let pool = self.kthreads.workers[w].pool;
        if let Some(work) = self.kthreads.workers[w].current.take() {
            let busy = &mut self.kthreads.pools[pool].busy;
            busy.swap_remove(busy.iter().position(|&b| b == w).expect("a busy worker is listed"));
            self.process_one_work_done(tid, w, work);
            // keep_working(): more works and nobody else running.
            let p = &self.kthreads.pools[pool];
            if !p.worklist.is_empty() && p.nr_running <= 1 {
                self.process_one_work(tid, w, pool);
                return true;
            }
            self.worker_set_flags(w, WORKER_PREP);
            self.worker_sleep(tid, w);
            return false;
        }
        // Woken from idle: worker_leave_idle(), then recheck.
        self.worker_leave_idle(w);
        let p = &self.kthreads.pools[pool];
        let need_more_worker = !p.worklist.is_empty() && p.nr_running == 0;
        if !need_more_worker {
            self.worker_sleep(tid, w);
            return false;
        }
        // may_start_working(): keep an idle worker in reserve
        // (manage_workers -> maybe_create_worker).
        if self.kthreads.pools[pool].idle_list.is_empty() && self.k.cfg.mech.cmwq {
            self.create_worker(pool);
        }
        self.worker_clr_flags(w, WORKER_PREP);
        self.process_one_work(tid, w, pool);
        true
    }

    /// process_one_work(): take the first work of the pool and run it.
    fn process_one_work(&mut self, tid: TaskId, w: usize, pool: usize) {
        let work = self.kthreads.pools[pool].worklist.pop_front().expect("a pending work");
        let wq = self.kthreads.works[work].as_ref().expect("a live work").wq;
        if self.kthreads.workqueues[wq].flags & WQ_CPU_INTENSIVE != 0 {
            self.worker_set_flags(w, WORKER_CPU_INTENSIVE);
        }
        self.kthreads.workers[w].current = Some(work);
        self.kthreads.pools[pool].busy.push(w);
        // A worker outside concurrency management lets the next idle
        // worker take the rest (need_more_worker -> wake_up_worker).
        let p = &self.kthreads.pools[pool];
        if self.kthreads.workers[w].flags & WORKER_NOT_RUNNING != 0 && !p.worklist.is_empty() && p.nr_running == 0 {
            let cpu = self.k.sched.tasks[tid].cpu;
            self.wake_up_worker(pool, cpu, true);
        }
        let t = &mut self.k.sched.tasks[tid];
        t.pc = 0;
        t.loop_stack.clear();
    }

    /// The end of process_one_work(): the work's completion, then its
    /// slot is free.
    fn process_one_work_done(&mut self, tid: TaskId, w: usize, work: usize) {
        let item = self.kthreads.works[work].take().expect("a live work");
        self.kthreads.free_works.push(work);
        self.kthreads.works_done[item.wq] += 1;
        self.worker_clr_flags(w, WORKER_CPU_INTENSIVE);
        let cpu = self.k.sched.tasks[tid].cpu;
        if let Some(req) = item.done.submit {
            self.block.submit_bio(req, cpu, self.k.now, &mut self.k.q); // block/blk_mq.rs
        }
        if let Some(waiter) = item.done.wake {
            self.k.try_to_wake_up(waiter, cpu, true);
        }
        if let Some(b) = item.done.barrier {
            let slot = &mut self.kthreads.barriers[b as usize];
            let bar = slot.as_mut().expect("a live barrier");
            bar.left -= 1;
            if bar.left == 0 {
                let waiter = bar.waiter;
                *slot = None;
                self.k.try_to_wake_up(waiter, cpu, true);
            }
        }
    }

    /// A barrier for `works` works that wakes `waiter` when all are done.
    pub(crate) fn new_barrier(&mut self, works: u32, waiter: TaskId) -> u32 {
        let bar = Some(crate::kthread::Barrier { left: works, waiter });
        match self.kthreads.barriers.iter().position(Option::is_none) {
            Some(i) => {
                self.kthreads.barriers[i] = bar;
                i as u32
            }
            None => {
                self.kthreads.barriers.push(bar);
                (self.kthreads.barriers.len() - 1) as u32
            }
        }
    }

    /// worker_enter_idle() and sleep: on the idle list, blocked.
    fn worker_sleep(&mut self, tid: TaskId, w: usize) {
        self.worker_enter_idle(w);
        self.block(tid);
    }

    fn worker_enter_idle(&mut self, w: usize) {
        let worker = &mut self.kthreads.workers[w];
        worker.flags |= WORKER_IDLE;
        worker.last_active = self.k.now;
        let (pool, tid) = (worker.pool, worker.task);
        self.kthreads.pools[pool].idle_list.push(tid);
        if self.too_many_workers(pool) && self.kthreads.pools[pool].idle_timer.is_none() {
            let at = self.k.now + IDLE_WORKER_TIMEOUT_NS;
            self.kthreads.pools[pool].idle_timer = Some(self.k.q.schedule(Instant(at), Ev::PoolIdleTimer(pool)));
        }
    }

    fn worker_leave_idle(&mut self, w: usize) {
        let worker = &mut self.kthreads.workers[w];
        if worker.flags & WORKER_IDLE == 0 {
            return;
        }
        worker.flags &= !WORKER_IDLE;
        let (pool, tid) = (worker.pool, worker.task);
        let list = &mut self.kthreads.pools[pool].idle_list;
        if let Some(i) = list.iter().rposition(|&t| t == tid) {
            list.remove(i);
        }
    }

    /// too_many_workers(): more than two idle, and idle ones beyond a
    /// quarter of the busy ones.
    fn too_many_workers(&self, pool: usize) -> bool {
        let p = &self.kthreads.pools[pool];
        let idle = p.idle_list.len() as u32;
        let busy = p.nr_workers - idle;
        idle > 2 && (idle - 2) * MAX_IDLE_WORKERS_RATIO >= busy
    }

    /// idle_worker_timeout(): destroy the idle workers that have been idle
    /// for IDLE_WORKER_TIMEOUT, oldest first, while there are too many.
    #[inline(never)]
    pub(crate) fn pool_idle_timer(&mut self, pool: usize) {
        self.kthreads.pools[pool].idle_timer = None;
        while self.too_many_workers(pool) {
            // The oldest idle worker is the first of the list.
            let tid = self.kthreads.pools[pool].idle_list[0];
            let w = self.k.sched.tasks[tid].worker.expect("a worker");
            let expires = self.kthreads.workers[w].last_active + IDLE_WORKER_TIMEOUT_NS;
            if expires > self.k.now {
                self.kthreads.pools[pool].idle_timer =
                    Some(self.k.q.schedule(Instant(expires), Ev::PoolIdleTimer(pool)));
                return;
            }
            // destroy_worker(): it wakes and exits.
            self.kthreads.pools[pool].idle_list.remove(0);
            self.kthreads.pools[pool].nr_workers -= 1;
            self.k.sched.tasks[tid].worker = None;
            self.k.sched.tasks[tid].state = TaskState::Dead;
            self.k.sched.tasks[tid].stats.exit_ns = Some(self.k.now);
        }
    }

    // ------------------------------------------- concurrency management

    /// worker_set_flags(): a running worker leaving concurrency management.
    fn worker_set_flags(&mut self, w: usize, flags: u32) {
        let worker = &mut self.kthreads.workers[w];
        if flags & WORKER_NOT_RUNNING != 0 && worker.flags & WORKER_NOT_RUNNING == 0 {
            self.kthreads.pools[worker.pool].nr_running -= 1;
        }
        worker.flags |= flags;
    }

    /// worker_clr_flags(): back under concurrency management.
    fn worker_clr_flags(&mut self, w: usize, flags: u32) {
        let worker = &mut self.kthreads.workers[w];
        let oflags = worker.flags;
        worker.flags &= !flags;
        if flags & WORKER_NOT_RUNNING != 0 && oflags & WORKER_NOT_RUNNING != 0 && worker.flags & WORKER_NOT_RUNNING == 0
        {
            self.kthreads.pools[worker.pool].nr_running += 1;
        }
    }

    /// wq_worker_sleeping(): the worker blocks inside a work. If it was the
    /// last running worker of its pool and works are pending, wake another.
    #[inline(never)]
    pub(crate) fn wq_worker_sleeping(&mut self, tid: TaskId) {
        let Some(w) = self.k.sched.tasks[tid].worker else { return };
        let worker = &mut self.kthreads.workers[w];
        if worker.flags & WORKER_NOT_RUNNING != 0 {
            return;
        }
        worker.sleeping = true;
        let pool = worker.pool;
        let p = &mut self.kthreads.pools[pool];
        p.nr_running -= 1;
        if p.nr_running == 0 && !p.worklist.is_empty() {
            let cpu = self.k.sched.tasks[tid].cpu;
            self.wake_up_worker(pool, cpu, true);
        }
    }

    /// wq_worker_running(): a worker that blocked in a work runs again.
    #[inline(never)]
    pub(crate) fn wq_worker_running(&mut self, tid: TaskId) {
        let Some(w) = self.k.sched.tasks[tid].worker else { return };
        let worker = &mut self.kthreads.workers[w];
        if !worker.sleeping {
            return;
        }
        worker.sleeping = false;
        if worker.flags & WORKER_NOT_RUNNING == 0 {
            self.kthreads.pools[worker.pool].nr_running += 1;
        }
    }

    /// A work item of `program` is queued or running in `wq`'s pool of
    /// `cpu` (a delayed work is queued once until it has run).
    pub(crate) fn work_pending_on(&mut self, wq: usize, cpu: usize, program: usize) -> bool {
        let pool = self.pool_for(wq, cpu);
        let is = |w: &usize| self.kthreads.works[*w].as_ref().is_some_and(|i| i.program == program);
        self.kthreads.pools[pool].worklist.iter().any(is)
            || self.kthreads.pools[pool].busy.iter().any(|&w| self.kthreads.workers[w].current.as_ref().is_some_and(is))
    }

    /// The op of the work item the worker runs at `pc`, if any.
    pub(crate) fn worker_op(&self, tid: TaskId, pc: usize) -> Option<crate::program::Op> {
        let w = self.k.sched.tasks[tid].worker?;
        let work = self.kthreads.workers[w].current?;
        let program = self.kthreads.works[work].as_ref()?.program;
        self.progs.work_programs[program].ops.get(pc).copied()
    }
}

#[cfg(test)]
#[path = "workqueue_tests.rs"]
mod tests;
