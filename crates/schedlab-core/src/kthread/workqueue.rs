//! Models the bound (per-CPU) workqueue's periodic vmstat_update work
//! (mm/vmstat.c, kernel/workqueue.c): every CPU queues a deferrable delayed
//! work each `sysctl_stat_interval` (HZ, one second), rounded with
//! round_jiffies_relative(), which skews CPU n by 3·n jiffies so the CPUs do
//! not all fire on the same tick. The work runs in that CPU's bound kworker
//! (2.6.x: the "events/N" thread at nice -5; 2.6.36+ concurrency-managed
//! "kworker/N:0" at nice 0), a per-CPU kthread.
//!
//! Deferrable: the timer does not wake an idle (tickless) CPU; it fires at
//! the first tick after the CPU is busy again. Its wakeup happens in the
//! timer softirq, before SCHED_SOFTIRQ runs the load balancer on that tick,
//! so for the instant of the balance the kworker is runnable on that CPU —
//! the background activity that keeps real machines from settling.
//!
//! `kernel.vmstat_kworkers = false` removes them (a noise-free machine).

use crate::cpumask::CpuMask;
use crate::engine::sim::Sim;
use crate::sched::prio::Policy;
use crate::sched::task::TaskState;
use crate::workload::TaskGroup;
use crate::workload::{Dist, Op, Program};

impl Sim {
    /// Create one bound kworker per CPU, parked, and arm the timers.
    pub fn create_housekeeping(&mut self) {
        if !self.cfg.vmstat_kworkers {
            return;
        }
        let nr = self.rqs.len();
        let nice = if self.cfg.mech.cmwq { 0 } else { -5 };
        let program = Program {
            ops: vec![
                Op::LoopStart { count: 0, end: 3 },
                Op::Run(Dist::Const(self.cfg.costs.vmstat_update_ns.max(1))),
                Op::Park,
                Op::LoopEnd { start: 0 },
            ],
        };
        let g = TaskGroup {
            name: "kworker".into(),
            count: 0,
            policy: Policy::Normal,
            nice,
            rt_priority: 0,
            cpus: CpuMask::full(nr),
            start: 0,
            kthread: true,
            program,
        };
        let template = self.wl.templates.len();
        self.wl.templates.push(g.clone());
        let group = self.wl.group_names.len();
        self.wl.group_names.push("kworker".into());
        let hz = self.cfg.hz as u64;
        for cpu in 0..nr {
            let tid = self.alloc_task(group, Some(template), &g, cpu);
            let t = &mut self.tasks[tid];
            t.comm = if self.cfg.mech.cmwq { format!("kworker/{cpu}:0") } else { format!("events/{cpu}") };
            t.cpus = CpuMask::from_cpus(nr, &[cpu]);
            t.nr_cpus_allowed = 1;
            t.cpu = cpu;
            t.state = TaskState::Blocked;
            t.need_advance = true;
            self.kthreads.vmstat_kworker[cpu] = Some(tid);
            // First expiry: round_jiffies_relative(HZ) from boot, skewed.
            self.kthreads.vmstat_next[cpu] = self.round_jiffies_skewed(hz, cpu);
        }
    }

    /// round_jiffies() of `j` jiffies from now for `cpu`, in ns: the next
    /// whole second plus 3·cpu jiffies of skew.
    fn round_jiffies_skewed(&self, j: u64, cpu: usize) -> u64 {
        let hz = self.cfg.hz as u64;
        let now_j = self.now / self.cfg.tick_ns;
        let target = now_j + j;
        let skew = 3 * cpu as u64;
        // __round_jiffies: round (target + skew) to a whole second, then
        // remove the skew again; never earlier than now.
        let rounded = (target + skew).div_ceil(hz) * hz;
        let due = rounded.saturating_sub(skew).max(now_j + 1);
        due * self.cfg.tick_ns
    }

    /// From the tick of a busy CPU: fire the deferrable vmstat timer if due.
    pub fn run_housekeeping_timer(&mut self, cpu: usize) {
        if self.now < self.kthreads.vmstat_next[cpu] {
            return;
        }
        let Some(kw) = self.kthreads.vmstat_kworker[cpu] else { return };
        let hz = self.cfg.hz as u64;
        self.kthreads.vmstat_next[cpu] = self.round_jiffies_skewed(hz, cpu);
        if self.tasks[kw].state == TaskState::Blocked {
            self.try_to_wake_up(kw, cpu, false);
        }
    }
}
