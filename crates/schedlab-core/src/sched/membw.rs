//! The scheduler's side of memory bandwidth (membw/): what each CPU runs
//! is its demand on its node's memory, and a node whose stall changes
//! moves the end of every streaming op on it. Called wherever the running
//! task's progress changes (arm_op_timer) and when a CPU goes idle.
//! Without `machine.memory_bandwidth` every call returns at once.

use crate::membw::Demand;
use crate::sched::env::SchedEnv;

impl SchedEnv {
    /// Per node: (bytes moved, saturated ns, stall-weighted ns) to now.
    pub fn membw_counters(&self) -> Vec<(f64, u64, u128)> {
        (0..self.membw.nodes.len()).map(|n| self.membw.counters_at(n, self.now)).collect()
    }

    /// `cpu`'s demand is what its task runs now; if that changes its
    /// node's stall, every streaming task of the node is charged its work
    /// at the old stall and its op's end moves.
    #[inline]
    pub(crate) fn membw_update(&mut self, cpu: usize) {
        if self.membw.enabled() {
            self.membw_set(cpu);
        }
    }

    #[inline(never)]
    fn membw_set(&mut self, cpu: usize) {
        let rq = &self.sched.rqs[cpu];
        let d = rq.curr.map(|p| &self.sched.tasks[p]).filter(|t| t.mem_rate > 0 && t.work_left > 0).map(|t| Demand {
            rate: t.mem_rate,
            share: t.memory_bound,
            speed: rq.cpu_speed,
        });
        let Some(node) = self.membw.set_cpu(cpu, d) else { return };
        let stall = self.membw.solve(node);
        if stall == self.membw.nodes[node].stall {
            self.membw.commit(node, stall, self.now);
            return;
        }
        let cpus = self.membw.nodes[node].cpus.clone();
        for &c in &cpus {
            if self.membw.cpus[c].is_some() {
                self.update_curr(c);
            }
        }
        self.membw.commit(node, stall, self.now);
        for &c in &cpus {
            self.sched.rqs[c].mem_stall = stall;
        }
        for &c in &cpus {
            // A task whose work ran out just now keeps its op timer: it
            // fires at this very time (several ops can end together).
            let ran_out = self.sched.rqs[c].curr.is_some_and(|t| self.sched.tasks[t].work_left == 0);
            if c != cpu && !ran_out && self.membw.cpus[c].is_some() && self.sched.rqs[c].op_key.is_some() {
                self.arm_op_timer(c);
            }
        }
    }
}
