//! The load signals of the avg_load era [sched.c, sched_fair.c @2.6.35]:
//! rq->cpu_load[] decayed per tick (update_cpu_load; docs/LINUX-FACTS.md §2.3),
//! weighted_cpuload (rq->load.weight, or PELT from 3.8), source_load and
//! target_load with LB_BIAS, and cpu_power with smt_gain and
//! scale_rt_power.

use crate::kernel::features::Feature;
use crate::sched::env::SchedEnv;
use crate::sched::sched::{sched_avg_update, SCHED_AVG_PERIOD_NS};
use crate::sched::sd_flags::SD_SHARE_CPUPOWER;
use crate::sched::task::TaskId;

/// SCHED_LOAD_SCALE (= NICE_0_LOAD, and the unit of cpu_power).
pub const SCHED_LOAD_SCALE: u64 = 1024;
/// CPU_LOAD_IDX_MAX [sched.c @2.6.35].
pub const CPU_LOAD_IDX_MAX: usize = 5;

/// One update_cpu_load() step [sched.c @2.6.35]:
/// `cpu_load[i] = (old·(2^i − 1) + new) / 2^i`, rounding up while the load
/// rises ("prevents us from getting stuck on 9 if the load is 10").
pub fn cpu_load_tick(cpu_load: &mut [u64; CPU_LOAD_IDX_MAX], this_load: u64) {
    for (i, slot) in cpu_load.iter_mut().enumerate() {
        let scale = 1u64 << i;
        let old = *slot;
        let new = if this_load > old { this_load + scale - 1 } else { this_load };
        *slot = (old * (scale - 1) + new) >> i;
    }
}

/// Seed 002 (3/6): the fraction (in SCHED_LOAD_SCALE units) of the recent
/// period not spent on SCHED_NORMAL/BATCH work, computed as scale_rt_power()
/// computes the part not spent on RT [sched_fair.c @2.6.35].
pub fn scale_normal_power(normal_avg: u64, age_stamp: u64, now: u64) -> u64 {
    let total = SCHED_AVG_PERIOD_NS + now.saturating_sub(age_stamp);
    let available = total.saturating_sub(normal_avg);
    let total = total.max(SCHED_LOAD_SCALE) >> 10;
    available / total
}

impl SchedEnv {
    /// weighted_cpuload(): rq->load.weight, the instantaneous sum of the
    /// runnable weights (2.6.x). From 3.8 it is the PELT runnable load.
    /// Deviation (3.8+): schedlab's PELT load_avg includes blocked load.
    #[inline]
    pub fn weighted_cpuload(&self, cpu: usize) -> u64 {
        if self.cfg.mech.cpu_load_from_pelt {
            self.sched.cfs_rqs[cpu].avg.load_avg
        } else if self.rt_legacy() {
            // 2.6.24: rq->load captures the RT tasks too (rt_legacy.rs).
            // Deviation: 2.6.25 .. 2.6.3x counted them as well; schedlab
            // counts them only in the legacy era, where RT tasks are balanced
            // by this load.
            self.sched.cfs_rqs[cpu].load_weight + self.sched.rqs[cpu].rt.load_weight
        } else {
            self.sched.cfs_rqs[cpu].load_weight
        }
    }

    /// A task's contribution to weighted_cpuload (se.load.weight in 2.6.x).
    pub(crate) fn lb_task_load(&self, p: TaskId) -> u64 {
        if self.cfg.mech.cpu_load_from_pelt {
            self.sched.tasks[p].se.avg.load_avg.max(1)
        } else {
            self.sched.tasks[p].se.load.weight as u64
        }
    }

    /// update_cpu_load() [sched.c @2.6.35], from scheduler_tick(). Tickless
    /// idle CPUs are not updated, so their cpu_load[] goes stale (2.6.35);
    /// from 2.6.36 the missed ticks are decayed as zero-load ticks when the
    /// tick resumes (decay_load_missed; exact steps here instead of the
    /// kernel's degrade tables).
    pub fn update_cpu_load(&mut self, cpu: usize) {
        let jiffies = self.now / self.cfg.tick_ns;
        let this_load = self.weighted_cpuload(cpu);
        let catch_up = self.cfg.mech.cpu_load_decay_missed;
        let rq = &mut self.sched.rqs[cpu];
        if catch_up {
            let missed = jiffies.saturating_sub(rq.last_load_update_tick).saturating_sub(1);
            for _ in 0..missed.min(128) {
                cpu_load_tick(&mut rq.cpu_load, 0);
            }
        }
        rq.last_load_update_tick = jiffies;
        cpu_load_tick(&mut rq.cpu_load, this_load);
    }

    /// LB_BIAS on (2.6.35 .. 4.x), or a version without the feature, where
    /// source_load/target_load always biased (2.6.2x) [docs/LINUX-FACTS.md §2.3].
    pub(crate) fn lb_bias(&self) -> bool {
        let f = &self.cfg.features;
        !f.available(Feature::LB_BIAS) || f.on(Feature::LB_BIAS)
    }

    /// source_load(): a low guess at a migration source's load,
    /// min(cpu_load[idx−1], current).
    pub fn source_load(&self, cpu: usize, idx: usize) -> u64 {
        let total = self.weighted_cpuload(cpu);
        if idx == 0 || !self.lb_bias() {
            return total;
        }
        self.sched.rqs[cpu].cpu_load[idx - 1].min(total)
    }

    /// target_load(): a high guess at a migration target's load,
    /// max(cpu_load[idx−1], current).
    pub fn target_load(&self, cpu: usize, idx: usize) -> u64 {
        let total = self.weighted_cpuload(cpu);
        if idx == 0 || !self.lb_bias() {
            return total;
        }
        self.sched.rqs[cpu].cpu_load[idx - 1].max(total)
    }

    /// power_of() = rq->cpu_power as update_cpu_power() sets it: SCHED_LOAD_SCALE,
    /// times smt_gain/span_weight on an SMT level (default_scale_smt_power:
    /// 1178/2 = 589 per sibling), times scale_rt_power (the share of recent
    /// time not spent on RT tasks). arch_scale_freq_power is SCHED_LOAD_SCALE.
    pub fn power_of(&self, cpu: usize) -> u64 {
        let mut power = SCHED_LOAD_SCALE;
        if let Some(&d) = self.topo.cpu_domains[cpu].first() {
            let sd = &self.topo.domains[d];
            if sd.flags & SD_SHARE_CPUPOWER != 0 && sd.span_weight > 1 && sd.smt_gain > 0 {
                power = (power * (sd.smt_gain as u64 / sd.span_weight as u64)) >> 10;
            }
        }
        if self.sched.rt_pressure && self.cfg.mech.scale_rt_power {
            // scale_rt_power(): the share of the recent sched_avg_period
            // not spent on RT [sched_fair.c @2.6.35]. Deviation: it dates
            // from 2.6.31 (unverified); 2.6.25 had no RT scaling.
            let rq = &self.sched.rqs[cpu].rt;
            let (avg, age) = sched_avg_update(rq.rt_avg, rq.rt_age_stamp, self.now);
            power = (power * scale_normal_power(avg, age, self.now)) >> 10;
        }
        power.max(1)
    }

    /// sched_group->cpu_power: the sum of its CPUs' power.
    pub(crate) fn group_power(&self, g: usize) -> u64 {
        self.topo.groups[g].cpus.iter().map(|&c| self.power_of(c)).sum::<u64>().max(1)
    }

    /// cpu_avg_load_per_task().
    pub(crate) fn cpu_avg_load_per_task(&self, cpu: usize) -> u64 {
        self.weighted_cpuload(cpu).checked_div(self.sched.rqs[cpu].nr_running as u64).unwrap_or(0)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::kernel::BalancerEra;
    use crate::sched::sched::SCHED_AVG_PERIOD_NS;
    use crate::sim::Sim;
    use crate::trace::Trace;

    #[test]
    fn cpu_load_decays_by_index() {
        let mut cl = [0u64; CPU_LOAD_IDX_MAX];
        cpu_load_tick(&mut cl, 1024);
        // Rising: (old·(2^i−1) + new + 2^i − 1) >> i.
        assert_eq!(cl, [1024, 512, 256, 128, 64]);
        cpu_load_tick(&mut cl, 1024);
        assert_eq!(cl, [1024, 768, 448, 240, 124]);
        for _ in 0..200 {
            cpu_load_tick(&mut cl, 1024);
        }
        assert_eq!(cl, [1024; 5], "converges to the load, rounding up");
        cpu_load_tick(&mut cl, 0);
        // Falling: no rounding, old·(2^i−1) >> i.
        assert_eq!(cl, [0, 512, 768, 896, 960]);
        for _ in 0..400 {
            cpu_load_tick(&mut cl, 0);
        }
        assert_eq!(cl, [0; 5], "decays to zero");
        // A SCHED_IDLE task (weight 3) on a busy-then-idle CPU.
        let mut cl = [0u64; CPU_LOAD_IDX_MAX];
        cpu_load_tick(&mut cl, 3);
        assert_eq!(cl, [3, 2, 1, 1, 1]);
    }

    #[test]
    fn normal_avg_halves_each_period() {
        let p = SCHED_AVG_PERIOD_NS;
        assert_eq!(sched_avg_update(800, 0, p), (800, 0), "not past the period yet");
        assert_eq!(sched_avg_update(800, 0, p + 1), (400, p));
        assert_eq!(sched_avg_update(800, 0, 3 * p + 1), (100, 3 * p));
        assert_eq!(sched_avg_update(800, 0, 200 * p), (0, 199 * p));
        // Always busy with normal work: the power left for SCHED_IDLE is ~0.
        assert_eq!(scale_normal_power(p + p / 2, 0, p / 2), 0);
        // Never: all of it.
        assert_eq!(scale_normal_power(0, 0, p / 2), 1024);
        // Half the time.
        assert_eq!(scale_normal_power(p / 2, 0, 0), 512);
    }

    /// A 4x4 machine on 2.6.35 with one short hog, seed 002's feature on or off.
    pub(crate) fn sim_2635(feature_on: bool) -> Sim {
        let features = if feature_on { "features = [\"SD_IDLE_LOAD_BALANCE\"]" } else { "" };
        let text = format!(
            "name = \"t\"\n[machine]\npreset = \"4x4\"\n[kernel]\nversion = \"2.6.35\"\n{features}\n\
             [[task]]\nname = \"hog\"\nprogram = [{{ run = \"1ms\" }}]\n"
        );
        let sc = crate::scenario::load(&text, "t.toml", &[]).expect("scenario");
        Sim::new(&sc, 1, false, Trace::new(None)).expect("sim")
    }

    #[test]
    fn source_and_target_load_bias() {
        let mut sim = sim_2635(false);
        assert_eq!(sim.w.m.kt.k.cfg.mech.balancer, BalancerEra::AvgLoad);
        sim.w.m.kt.k.sched.cfs_rqs[5].load_weight = 1024;
        sim.w.m.kt.k.sched.rqs[5].cpu_load = [1024, 512, 256, 128, 64];
        // idx 0: the instantaneous load.
        assert_eq!((sim.w.m.kt.k.source_load(5, 0), sim.w.m.kt.k.target_load(5, 0)), (1024, 1024));
        // idx 2 reads cpu_load[1]: a source is underestimated, a target not.
        assert_eq!((sim.w.m.kt.k.source_load(5, 2), sim.w.m.kt.k.target_load(5, 2)), (512, 1024));
        // The load left: the history keeps the target looking busy.
        sim.w.m.kt.k.sched.cfs_rqs[5].load_weight = 0;
        assert_eq!((sim.w.m.kt.k.source_load(5, 1), sim.w.m.kt.k.target_load(5, 1)), (0, 1024));
        // NO_LB_BIAS: instantaneous everywhere.
        let v = sim.w.m.kt.k.cfg.version;
        sim.w.m.kt.k.cfg.features.apply("NO_LB_BIAS", v).unwrap();
        assert_eq!((sim.w.m.kt.k.source_load(5, 1), sim.w.m.kt.k.target_load(5, 1)), (0, 0));
        // No SMT on 4x4: every CPU has the full power.
        assert_eq!(sim.w.m.kt.k.power_of(0), 1024);
    }
}
