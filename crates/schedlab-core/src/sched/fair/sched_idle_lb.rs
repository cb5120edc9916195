//! Seed 002 (Nikhil Rao, 2010, feature `SD_IDLE_LOAD_BALANCE`, default
//! off): a second balancing pass for SCHED_IDLE tasks, on the avg_load
//! balancer. Each piece is marked with the patch (1/6 .. 6/6) it models. The
//! seed holds the cover letter and the patch list only, not the code; where
//! the letter is silent the choice is named in a comment.

use crate::kernel::features::Feature;
use crate::prio::Policy;
use crate::sched::env::SchedEnv;
use crate::sched::fair::balance_avg::Pass;
use crate::sched::fair::cpu_load::{scale_normal_power, SCHED_LOAD_SCALE};
use crate::sched::sched::{sched_avg_update, CpuIdleType};
use crate::sched::sd_flags::SD_SHARE_CPUPOWER;
use crate::sched::task::TaskId;

impl SchedEnv {
    pub(crate) fn sched_idle_lb_on(&self) -> bool {
        self.cfg.features.on(Feature::SD_IDLE_LOAD_BALANCE)
    }

    /// Seed 002 (1/6, "account SCHED_IDLE tasks on rq->idle_nr_running"):
    /// schedlab's cfs_rq already counts its SCHED_IDLE tasks at every
    /// enqueue/dequeue (idle_h_nr_running), which is the patch's counter.
    pub(crate) fn idle_nr_running(&self, cpu: usize) -> u64 {
        self.sched.cfs_rqs[cpu].idle_h_nr_running as u64
    }

    /// Seed 002 (2/6 adds the SD_IDLE_LOAD_BALANCE domain flag; 6/6 sets it
    /// in the MC, CPU and (x86) NODE templates): every level but the SMT
    /// siblings and ALLNODES. Kept here, not in topology.rs, because it
    /// exists only with the feature.
    pub(crate) fn sd_idle_load_balance(&self, d: usize) -> bool {
        let sd = &self.topo.domains[d];
        self.sched_idle_lb_on() && sd.flags & SD_SHARE_CPUPOWER == 0 && sd.name != "ALLNODES"
    }

    /// Seed 002 (3/6, "moving average of time spent servicing SCHED_NORMAL
    /// tasks"): called from update_curr() with the time the current task ran.
    pub fn sched_normal_avg_update(&mut self, cpu: usize, tid: TaskId, delta: u64) {
        if !self.sched_idle_lb_on() || !matches!(self.sched.tasks[tid].policy, Policy::Normal | Policy::Batch) {
            return;
        }
        let rq = &mut self.sched.rqs[cpu];
        let (avg, age) = sched_avg_update(rq.normal_avg, rq.age_stamp, self.now);
        rq.normal_avg = avg + delta;
        rq.age_stamp = age;
    }

    /// Seed 002 (3/6, 5/6): the power left for SCHED_IDLE tasks, cpu_power
    /// scaled down by the recent share of SCHED_NORMAL/BATCH work ("similar
    /// to the RT power scaling calculations"); at least 1, as update_cpu_power.
    pub(crate) fn idle_power(&self, cpu: usize) -> u64 {
        let rq = &self.sched.rqs[cpu];
        let (avg, age) = sched_avg_update(rq.normal_avg, rq.age_stamp, self.now);
        ((self.power_of(cpu) * scale_normal_power(avg, age, self.now)) >> 10).max(1)
    }

    /// Seed 002 (5/6): idle load = idle_nr_running × WEIGHT_IDLEPRIO / idle
    /// power, in SCHED_LOAD_SCALE units like avg_load.
    pub(crate) fn idle_load(&self, cpu: usize) -> u64 {
        let w = self.cfg.mech.weight_idleprio.0 as u64;
        self.idle_nr_running(cpu) * w * SCHED_LOAD_SCALE / self.idle_power(cpu)
    }

    /// Seed 002 (5/6, "add SCHED_IDLE load balancer"): the second pass at one
    /// domain. It walks every CPU of the span (the letter: "we iterate through
    /// each cpu in the sched domain span and calculate the idle load"), takes
    /// the CPU with the highest idle load as busiest, and applies the
    /// find_busiest_group tests to idle loads: balanced if this CPU's idle
    /// load is at or above busiest's or the domain average
    /// (Σ idle weight / Σ idle power), or within imbalance_pct of busiest.
    /// The amount is calculate_imbalance's min((busiest − avg)·power(busiest),
    /// (avg − this)·power(this)), so a CPU busy with SCHED_NORMAL work (idle
    /// power near 0) pulls nothing. The SCHED_IDLE tasks then move with
    /// move_tasks in its sched-idle mode (4/6). Modelling choices (the seed
    /// has no code): the pass never kicks the stopper and leaves
    /// nr_balance_failed and balance_interval to the regular pass.
    pub(crate) fn load_balance_idle(&mut self, this_cpu: usize, lvl: usize, idle: CpuIdleType) -> u32 {
        let d = self.topo.cpu_domains[this_cpu][lvl];
        if !self.sd_idle_load_balance(d) {
            return 0;
        }
        let w = self.cfg.mech.weight_idleprio.0 as u64;
        let this_pwr = self.idle_power(this_cpu);
        let this_load = self.idle_load(this_cpu);
        let (mut total_w, mut total_pwr, mut max_load) = (0u64, 0u64, 0u64);
        let mut busiest: Option<(usize, u64)> = None;
        for &i in &self.topo.domains[d].span {
            let pwr = self.idle_power(i);
            let nr = self.idle_nr_running(i);
            total_w += nr * w;
            total_pwr += pwr;
            let load = nr * w * SCHED_LOAD_SCALE / pwr;
            if i != this_cpu && nr > 0 && load > max_load {
                max_load = load;
                busiest = Some((i, pwr));
            }
        }
        let Some((busiest, busiest_pwr)) = busiest else { return 0 };
        let avg = total_w * SCHED_LOAD_SCALE / total_pwr.max(1);
        let pct = self.topo.domains[d].imbalance_pct as u64;
        if this_load >= max_load || this_load >= avg || 100 * max_load <= pct * this_load {
            return 0;
        }
        // A lone task there is running and cannot be pulled (load_balance's
        // busiest->nr_running > 1).
        if self.sched.rqs[busiest].nr_running <= 1 {
            return 0;
        }
        let imbalance =
            (max_load.saturating_sub(avg) * busiest_pwr).min((avg - this_load) * this_pwr) / SCHED_LOAD_SCALE;
        let mut all_pinned = false;
        let (_, moved) = self.move_tasks_avg(this_cpu, busiest, imbalance, lvl, idle, &mut all_pinned, Pass::SchedIdle);
        moved
    }

    pub(crate) fn pass_accepts(&self, pass: Pass, p: TaskId) -> bool {
        let idle = self.sched.tasks[p].is_idle_policy();
        match pass {
            Pass::Normal => !(idle && self.sched_idle_lb_on()),
            Pass::SchedIdle => idle,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::sched::fair::cpu_load::tests::sim_2635;
    use crate::sched::sched::SCHED_AVG_PERIOD_NS;

    #[test]
    fn idle_load_uses_idle_power() {
        let mut sim = sim_2635(true);
        sim.w.m.kt.k.sched.cfs_rqs[2].idle_h_nr_running = 2;
        assert_eq!(sim.w.m.kt.k.idle_load(2), 6, "2 × WEIGHT_IDLEPRIO at full idle power");
        // The CPU spent its whole recent period on SCHED_NORMAL work.
        sim.w.m.kt.k.now = SCHED_AVG_PERIOD_NS / 2;
        sim.w.m.kt.k.sched.rqs[2].normal_avg = SCHED_AVG_PERIOD_NS + SCHED_AVG_PERIOD_NS / 2;
        assert_eq!(sim.w.m.kt.k.idle_power(2), 1);
        assert_eq!(sim.w.m.kt.k.idle_load(2), 6 * 1024);
    }
}
