//! Models sched_balance_newidle() (newidle_balance() before 6.12, idle_balance()
//! before 5.x) of kernel/sched/fair.c in its 5.5+ form: a CPU about to go
//! idle balances its domains bottom-up, guarded by its average idle time,
//! and with NI_RANDOM (the stable backport in 6.1.160 and 6.12.65) only in
//! proportion to each domain's recent success rate (docs/LINUX-FACTS.md §3.5).
//! The avg_load era's idle_balance is `fair/balance_avg.rs`.
//!
//! Deviation: the balancer's own CPU time is not modelled, so
//! max_newidle_lb_cost stays 0: from 5.16, whose guard it is, a CPU going
//! idle always balances while some runqueue is overloaded (the kernel skips
//! only when its average idle period is shorter than a pass, a few us);
//! before 5.16 the guard is sysctl_sched_migration_cost. Every pass counts
//! in the NI_RANDOM statistics, as every real pass (which always costs
//! time) does.

use crate::kernel::features::Feature;
use crate::sched::env::SchedEnv;
use crate::sched::sched::CpuIdleType;
use crate::sched::sd_flags::SD_BALANCE_NEWIDLE;

impl SchedEnv {
    /// newidle_balance() (5.5 form of the guard). Returns tasks pulled.
    pub fn newidle_balance(&mut self, cpu: usize) -> u32 {
        if self.avg_load_era() {
            return self.idle_balance_avg(cpu); // balance_avg.rs
        }
        self.sched.rqs[cpu].idle_stamp = Some(self.now);
        // next_balance: the idle intervals of the domains looked at, so the
        // NOHZ idle balance comes for this CPU at an idle CPU's pace.
        let mut next_balance = self.now + self.cfg.hz as u64 * self.cfg.tick_ns;
        let mut pulled = 0;
        // 5.5-5.15 skip while avg_idle < sysctl_sched_migration_cost; 5.16+
        // while it is below the lowest domain's max_newidle_lb_cost (0 here,
        // see the Deviation above: such a CPU always balances).
        let guard = if self.cfg.mech.newidle_guard_lb_cost {
            self.sched.rqs[cpu].sd.first().map_or(0, |sd| sd.max_newidle_lb_cost)
        } else {
            self.cfg.sysctl.sched_migration_cost_ns
        };
        if self.sched.rqs[cpu].avg_idle < guard || self.sched.rd.nr_overloaded == 0 {
            self.update_next_balance(cpu, 0, &mut next_balance);
        } else {
            self.update_blocked_averages(cpu); // fair/blocked.rs (with groups)
            pulled = self.newidle_balance_domains(cpu, &mut next_balance);
        }
        let rq = &mut self.sched.rqs[cpu];
        rq.next_balance = rq.next_balance.min(next_balance);
        if pulled > 0 {
            rq.idle_stamp = None;
        }
        pulled
    }

    /// The domain walk of sched_balance_newidle(), bottom-up.
    fn newidle_balance_domains(&mut self, cpu: usize, next_balance: &mut u64) -> u32 {
        let mut pulled = 0;
        for lvl in 0..self.topo.cpu_domains[cpu].len() {
            let d = self.topo.cpu_domains[cpu][lvl];
            self.update_next_balance(cpu, lvl, next_balance);
            let curr_cost = 0;
            if self.sched.rqs[cpu].avg_idle < curr_cost + self.sched.rqs[cpu].sd[lvl].max_newidle_lb_cost {
                break;
            }
            if self.topo.domains[d].flags & SD_BALANCE_NEWIDLE != 0 {
                let mut weight = 1;
                if self.cfg.features.on(Feature::NI_RANDOM) {
                    // Throw a 1k-sided die: balance in proportion to the
                    // domain's recent success rate.
                    let d1k = (self.rng.next_u64() % 1024) as u32;
                    weight = 1 + self.sched.rqs[cpu].sd[lvl].newidle_ratio;
                    if d1k > weight {
                        self.update_newidle_stats(cpu, lvl, 0);
                        continue;
                    }
                    weight = (1024 + weight / 2) / weight;
                }
                let mut cont = true;
                pulled += self.load_balance(cpu, lvl, CpuIdleType::NewlyIdle, &mut cont);
                // update_newidle_cost() counts the pass when it cost time,
                // which a real pass always does (the model's costs nothing).
                self.update_newidle_stats(cpu, lvl, weight * u32::from(pulled > 0));
            }
            if pulled > 0 || self.sched.rqs[cpu].nr_running > 0 {
                break;
            }
        }
        pulled
    }

    /// update_next_balance(): the domain's next balance at the idle interval.
    fn update_next_balance(&self, cpu: usize, lvl: usize, next_balance: &mut u64) {
        let Some(sd) = self.sched.rqs[cpu].sd.get(lvl) else { return };
        let next = (sd.last_balance + self.sd_balance_interval(cpu, lvl, false) as i64).max(0) as u64;
        *next_balance = (*next_balance).min(next);
    }

    /// update_newidle_stats() (NI_RANDOM): every 1024 calls the success
    /// count becomes the ratio and both counts halve.
    fn update_newidle_stats(&mut self, cpu: usize, lvl: usize, success: u32) {
        let sd = &mut self.sched.rqs[cpu].sd[lvl];
        sd.newidle_call += 1;
        sd.newidle_success += success;
        if sd.newidle_call >= 1024 {
            sd.newidle_ratio = sd.newidle_success;
            sd.newidle_call /= 2;
            sd.newidle_success /= 2;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::sched::sched::CpuIdleType;
    use crate::sim::Sim;
    use crate::trace::Trace;

    /// CPU 0 overloaded with two pinned hogs; CPU 1 runs a pinned task that
    /// works 0.1 ms and sleeps 1 ms, so it goes newly idle ~900 times a
    /// second and every newidle balance fails. Returns CPU 1's newidle
    /// load_balance() calls and its lowest domain's newidle_ratio.
    fn failing_newidle(features: &str) -> (u64, u32) {
        let text = format!(
            "name = \"t\"\n[machine]\nsockets = 1\ncores_per_socket = 2\n\
             [kernel]\nversion = \"6.12\"\nfeatures = [{features}]\nvmstat_kworkers = false\n\
             [measure]\nduration = \"3s\"\n\
             [[task]]\nname = \"hog\"\ncount = 2\ncpus = [0]\nprogram = [{{ run = \"10s\" }}]\n\
             [[task]]\nname = \"sl\"\ncpus = [1]\n\
             program = [{{ loop = {{ count = 0, body = [{{ run = \"100us\" }}, {{ sleep = \"1ms\" }}] }} }}]\n"
        );
        let sc = crate::scenario::load(&text, "t.toml", &[]).expect("scenario");
        let mut sim = Sim::new(&sc, 1, false, Trace::new(None)).expect("sim");
        sim.run().expect("run");
        let sd = &sim.w.m.kt.k.sched.rqs[1].sd[0];
        (sd.stats.lb_count[CpuIdleType::NewlyIdle as usize], sd.newidle_ratio)
    }

    #[test]
    fn ni_random_balances_a_failing_domain_less_and_less() {
        let (all, ratio_off) = failing_newidle("\"NO_NI_RANDOM\"");
        let (some, ratio) = failing_newidle("");
        assert!(all > 2000, "every newidle pass balances without NI_RANDOM: {all}");
        // The statistics are kept either way (update_newidle_cost()).
        assert!(ratio_off <= 32, "ratio without NI_RANDOM {ratio_off}");
        // Each pass counts a call and no success: the ratio (from 512)
        // halves every 512 calls, and the die lets fewer passes run.
        assert!(ratio <= 32, "ratio {ratio}");
        assert!(some * 4 < all, "NI_RANDOM ran {some} of {all} passes");
    }
}
