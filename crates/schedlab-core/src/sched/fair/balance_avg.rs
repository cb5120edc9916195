//! Models kernel/sched_fair.c load balancing of 2.6.35 (avg_load era,
//! `cfg.mech.balancer == AvgLoad`): find_busiest_group with its
//! sg_lb_stats helper, find_busiest_queue, move_tasks/balance_tasks/
//! can_migrate_task, load_balance with its failure counting, active balance
//! through the stopper (the SCHED_FIFO-99 "migration/N" cpu_stop thread of
//! 2.6.35), rebalance_domains and idle_balance. docs/LINUX-FACTS.md §3.3-3.10.
//!
//! Beside it: the load signals (`cpu_load.rs`), the imbalance arithmetic
//! (`sd_lb_stats.rs`), the 2.6.24/2.6.25 forms (`balance_2625.rs`), the
//! NOHZ owner model (`nohz_owner.rs`), seed 002's SCHED_IDLE pass
//! (`sched_idle_lb.rs`), and the era's fork and wakeup placement
//! (`wakeup_avg.rs`).
//!
//! Version differences kept (cheap ones, docs/LINUX-FACTS.md §2.3, 3.3, 3.5, 3.6):
//! cpu_load[] from instantaneous rq load before 3.8 and from PELT after;
//! no LB_BIAS feature before 2.6.35 (the bias is always on); no avg_idle guard
//! on newidle before 2.6.35; newidle failures count in nr_balance_failed
//! from 2.6.32 (load_balance_newidle folded in) to 2.6.36; the NOHZ owner
//! model before 2.6.36 and the kick model of fair/balance.rs after; the
//! cpu_load[] catch-up after a tickless stretch (decay_load_missed) from
//! 2.6.36. 2.6.24 and 2.6.25 run their own forms from sched.c (`lb_2625`):
//! group_imb above SCHED_LOAD_SCALE, the older imbalance arithmetic
//! (calculate_imbalance_2625), SCHED_LOAD_SCALE_FUZZ and the
//! highest-priority exception in balance_tasks, one walk of move_tasks, and
//! load_balance_newidle(), whose failures count only in schedstat.
//!
//! Deviations: 4.16 .. 5.4 run this 2.6.35 balancer with the differences above
//! only (no LBF_DST_PINNED/SOME_PINNED retries, no group_imbalance flag, no
//! misfit/asym cases); 2.6.24/2.6.25 use the 2.6.35 wakeup placement (their
//! wake_idle/SD_WAKE_IDLE, avg_overlap and passive balancing are not
//! modelled) and give each SMT sibling the full SCHED_LOAD_SCALE (2.6.35's
//! smt_gain exists only from 2.6.30). Power-savings balancing
//! (sched_mc/smt_power_savings) is off, as by default, and not modelled.
//! Deviation: the periodic balances of CPUs that tick at one instant run in
//! CPU order here, each seeing the pulls of those before it, where the kernel's run
//! at once; the balancer of 5.5+ reads the others' runqueues as they were
//! at the tick (`LbSnap`, fair/lb_snap.rs). This era has no real-kernel
//! oracle to check that change against, and its seed experiments were
//! judged with the chain.

use crate::cpumask::CpuMask;
use crate::kernel::BalancerEra;
use crate::sched::env::SchedEnv;
use crate::sched::fair::cpu_load::SCHED_LOAD_SCALE;
use crate::sched::fair::sd_lb_stats::{calculate_imbalance, calculate_imbalance_2625, capacity_of_power, SdLbStats};
use crate::sched::sched::CpuIdleType;
use crate::sched::sd_flags::{SD_BALANCE_NEWIDLE, SD_LOAD_BALANCE, SD_PREFER_SIBLING, SD_SHARE_CPUPOWER};

/// MAX_PINNED_INTERVAL (ms).
const MAX_PINNED_INTERVAL: u64 = 512;

// ---------------------------------------------------------------------------
// Pure arithmetic (unit-tested below)
// ---------------------------------------------------------------------------

/// struct sg_lb_stats [sched_fair.c @2.6.35].
#[derive(Debug, Clone, Copy, Default)]
struct SgLbStats {
    avg_load: u64,
    group_load: u64,
    sum_nr_running: u64,
    sum_weighted_load: u64,
    group_capacity: u64,
    group_imb: bool,
    power: u64,
}

// ---------------------------------------------------------------------------
// The balancer
// ---------------------------------------------------------------------------

/// Which tasks a balancing pass may move (seed 002, 4/6: the
/// `sched_idle_balance` argument of the lb functions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pass {
    /// The regular pass. With SD_IDLE_LOAD_BALANCE on it leaves SCHED_IDLE
    /// tasks alone ("we do not balance them with SCHED_NORMAL/SCHED_BATCH
    /// tasks", seed 002 cover letter).
    Normal,
    /// The second pass: SCHED_IDLE tasks only.
    SchedIdle,
}

/// The parts of struct lb_env that 2.6.35 passed as arguments.
pub(crate) struct AvgEnv {
    pub(crate) sd: usize,
    pub(crate) lvl: usize,
    pub(crate) this_cpu: usize,
    pub(crate) idle: CpuIdleType,
    /// load_balance_tmpmask: the active CPUs not yet excluded as all-pinned.
    pub(crate) cpus: CpuMask,
}

impl SchedEnv {
    // ------------------------------------------------------------ loads

    /// The avg_load balancer is this run's (the dispatch test of balance.rs
    /// and wakeup.rs).
    #[inline]
    pub fn avg_load_era(&self) -> bool {
        self.cfg.mech.balancer == BalancerEra::AvgLoad
    }

    /// Whether the domain balances at all (SD_LOAD_BALANCE; every domain
    /// balances from 5.8, where the flag was removed).
    pub(crate) fn sd_balances(&self, d: usize) -> bool {
        self.topo.domains[d].flags & SD_LOAD_BALANCE != 0 || !self.cfg.mech.sd_load_balance_flag
    }

    // ---------------------------------------- seed 002 (SD_IDLE_LOAD_BALANCE)

    // -------------------------------------------------- find_busiest_group

    /// update_sg_lb_stats() [sched_fair.c @2.6.35]. Sums target_load (local
    /// group) or source_load (others) and computes avg_load, group_imb and
    /// group_capacity. For the local group it also applies the balance-CPU
    /// rule: only the first idle CPU of the group, else its first CPU,
    /// balances this level (not for newidle).
    fn update_sg_lb_stats_avg(
        &self,
        env: &AvgEnv,
        g: usize,
        local: bool,
        load_idx: usize,
        sd_idle: &mut bool,
        balance: &mut bool,
    ) -> SgLbStats {
        let grp = &self.topo.groups[g];
        let mut s = SgLbStats::default();
        let mut balance_cpu = grp.first_cpu;
        let mut first_idle_cpu = false;
        let (mut max_cpu_load, mut min_cpu_load) = (0u64, u64::MAX);
        for &i in &grp.cpus {
            if !env.cpus.test(i) {
                continue;
            }
            let nr = self.sched.rqs[i].nr_running as u64;
            if *sd_idle && nr > 0 {
                *sd_idle = false;
            }
            let load = if local {
                if self.idle_cpu(i) && !first_idle_cpu {
                    first_idle_cpu = true;
                    balance_cpu = i;
                }
                self.target_load(i, load_idx)
            } else {
                let l = self.source_load(i, load_idx);
                max_cpu_load = max_cpu_load.max(l);
                min_cpu_load = min_cpu_load.min(l);
                l
            };
            s.group_load += load;
            s.sum_nr_running += nr;
            s.sum_weighted_load += self.weighted_cpuload(i);
        }
        if env.idle != CpuIdleType::NewlyIdle && local && balance_cpu != env.this_cpu {
            *balance = false;
            return s;
        }
        s.power = self.group_power(g);
        s.avg_load = s.group_load * SCHED_LOAD_SCALE / s.power;
        // The group is imbalanced inside when its CPUs differ by more than
        // two average tasks; in 2.6.24/2.6.25 by more than one nice-0 task
        // (SCHED_LOAD_SCALE). (Unsigned as in the kernel: a group with no
        // counted CPU wraps to 1.)
        let spread = max_cpu_load.wrapping_sub(min_cpu_load);
        s.group_imb = if self.lb_2625() {
            spread > SCHED_LOAD_SCALE
        } else {
            spread > 2 * s.sum_weighted_load.checked_div(s.sum_nr_running).unwrap_or(0)
        };
        s.group_capacity = capacity_of_power(s.power);
        s
    }

    /// find_busiest_group() with update_sd_lb_stats() [sched_fair.c @2.6.35]:
    /// the busiest non-local group is the one with the highest avg_load among
    /// those running more tasks than their capacity (1 under a PREFER_SIBLING
    /// child) or internally imbalanced. Returns it with the imbalance, or
    /// None when balanced; `balance` is cleared when this CPU is not the
    /// group's balancer.
    pub(crate) fn find_busiest_group_avg(
        &self,
        env: &AvgEnv,
        sd_idle: &mut bool,
        balance: &mut bool,
    ) -> Option<(usize, u64)> {
        let dom = &self.topo.domains[env.sd];
        let prefer_sibling = env.lvl > 0 && {
            let child = self.topo.cpu_domains[env.this_cpu][env.lvl - 1];
            self.topo.domains[child].flags & SD_PREFER_SIBLING != 0
        };
        let load_idx = match env.idle {
            CpuIdleType::NotIdle => dom.busy_idx,
            CpuIdleType::NewlyIdle => dom.newidle_idx,
            CpuIdleType::Idle => dom.idle_idx,
        };
        let local_g = self.topo.cpu_local_group[env.this_cpu][env.lvl];
        let mut sds = SdLbStats::default();
        // sd->groups starts at the local group and wraps; ties go to the
        // first group found.
        for g in self.topo.groups_from(env.this_cpu, env.lvl) {
            let local = g == local_g;
            let mut sgs = self.update_sg_lb_stats_avg(env, g, local, load_idx, sd_idle, balance);
            if local && !*balance {
                return None;
            }
            sds.total_load += sgs.group_load;
            sds.total_pwr += sgs.power;
            if prefer_sibling {
                sgs.group_capacity = sgs.group_capacity.min(1);
            }
            if local {
                sds.this_load = sgs.avg_load;
                sds.this_pwr = sgs.power;
                sds.this_nr_running = sgs.sum_nr_running;
                sds.this_load_per_task = sgs.sum_weighted_load;
            } else if sgs.avg_load > sds.max_load && (sgs.sum_nr_running > sgs.group_capacity || sgs.group_imb) {
                sds.max_load = sgs.avg_load;
                sds.busiest = Some(g);
                sds.busiest_nr_running = sgs.sum_nr_running;
                sds.busiest_group_capacity = sgs.group_capacity;
                sds.busiest_load_per_task = sgs.sum_weighted_load;
                sds.busiest_pwr = sgs.power;
                sds.group_imb = sgs.group_imb;
            }
        }
        let busiest = sds.busiest?;
        if sds.busiest_nr_running == 0 || sds.this_load >= sds.max_load {
            return None;
        }
        sds.avg_load = SCHED_LOAD_SCALE * sds.total_load / sds.total_pwr.max(1);
        if sds.this_load >= sds.avg_load {
            return None;
        }
        if 100 * sds.max_load <= dom.imbalance_pct as u64 * sds.this_load {
            return None;
        }
        let imbalance = if self.lb_2625() {
            calculate_imbalance_2625(&mut sds)?
        } else {
            calculate_imbalance(&mut sds, self.cpu_avg_load_per_task(env.this_cpu))
        };
        Some((busiest, imbalance))
    }

    /// find_busiest_queue() [sched_fair.c @2.6.35]: the CPU with the highest
    /// weighted_cpuload/power, skipping a CPU whose single task is heavier
    /// than the imbalance (it could not move anyway).
    pub(crate) fn find_busiest_queue_avg(&self, g: usize, imbalance: u64, cpus: &CpuMask) -> Option<usize> {
        let mut busiest = None;
        let mut max_load = 0;
        for &i in &self.topo.groups[g].cpus {
            if !cpus.test(i) {
                continue;
            }
            let power = self.power_of(i);
            let capacity = capacity_of_power(power);
            let wl = self.weighted_cpuload(i);
            if capacity > 0 && self.sched.rqs[i].nr_running == 1 && wl > imbalance {
                continue;
            }
            let wl = wl * SCHED_LOAD_SCALE / power;
            if wl > max_load {
                max_load = wl;
                busiest = Some(i);
            }
        }
        busiest
    }

    // -------------------------------------------------------- moving tasks

    // -------------------------------------------------------- load_balance

    /// need_active_balance() [sched_fair.c @2.6.35]: after more than
    /// cache_nice_tries + 2 failures. A newidle pass kicks it only with
    /// sched_mc_power_savings >= 2 (default 0), i.e. never, before 4.x.
    fn need_active_balance_avg(&self, this_cpu: usize, lvl: usize, idle: CpuIdleType) -> bool {
        if idle == CpuIdleType::NewlyIdle && !self.cfg.mech.newidle_active_balance {
            return false;
        }
        let sd = self.topo.cpu_domains[this_cpu][lvl];
        self.sched.rqs[this_cpu].sd[lvl].nr_balance_failed > self.topo.domains[sd].cache_nice_tries + 2
    }

    /// load_balance() of the avg_load era. Returns the number of tasks
    /// pulled (the kernel's -1 "SMT sibling busy" result reads as 0 here).
    pub fn load_balance_avg(
        &mut self,
        this_cpu: usize,
        lvl: usize,
        idle: CpuIdleType,
        continue_balancing: &mut bool,
    ) -> u32 {
        self.load_balance_ld(this_cpu, lvl, idle, continue_balancing).max(0) as u32
    }

    /// load_balance() [sched_fair.c @2.6.35]. Returns ld_moved: tasks pulled,
    /// 0, or -1 when an SMT domain failed while a sibling is busy (which
    /// callers treat as "done": the sibling keeps the core busy).
    fn load_balance_ld(&mut self, this_cpu: usize, lvl: usize, idle: CpuIdleType, balance: &mut bool) -> i32 {
        let sd = self.topo.cpu_domains[this_cpu][lvl];
        let dom = &self.topo.domains[sd];
        let (min_interval, max_interval, cache_nice_tries) =
            (dom.min_interval_ms, dom.max_interval_ms, dom.cache_nice_tries);
        let share_power = dom.flags & SD_SHARE_CPUPOWER != 0;
        let ix = idle as usize;
        let mut env = AvgEnv { sd, lvl, this_cpu, idle, cpus: CpuMask::full(self.sched.rqs.len()) };
        // sd_idle: an idle SMT sibling keeps CPU_IDLE semantics while every
        // sibling is idle (power-savings off).
        let mut sd_idle = idle != CpuIdleType::NotIdle && share_power;
        let mut all_pinned = false;
        self.sched.rqs[this_cpu].sd[lvl].stats.lb_count[ix] += 1;
        // redo: drop all-pinned busiest CPUs and look again.
        let found = loop {
            let fbg = self.find_busiest_group_avg(&env, &mut sd_idle, balance);
            if !*balance {
                break None;
            }
            let Some((g, imbalance)) = fbg else {
                self.sched.rqs[this_cpu].sd[lvl].stats.lb_nobusyg[ix] += 1;
                break None;
            };
            let Some(busiest) = self.find_busiest_queue_avg(g, imbalance, &env.cpus) else {
                self.sched.rqs[this_cpu].sd[lvl].stats.lb_nobusyq[ix] += 1;
                break None;
            };
            self.sched.rqs[this_cpu].sd[lvl].stats.lb_imbalance[ix] += imbalance;
            let mut moved = 0;
            if self.sched.rqs[busiest].nr_running > 1 {
                let (_, n) =
                    self.move_tasks_avg(this_cpu, busiest, imbalance, lvl, idle, &mut all_pinned, Pass::Normal);
                moved = n;
                if all_pinned {
                    env.cpus.clear(busiest);
                    if !env.cpus.is_empty() {
                        continue;
                    }
                    break None;
                }
            }
            break Some((busiest, moved));
        };
        let Some((busiest, moved)) = found else {
            // out_balanced
            let st = &mut self.sched.rqs[this_cpu].sd[lvl];
            st.stats.lb_balanced[ix] += 1;
            st.nr_balance_failed = 0;
            return self.lb_out_one_pinned(this_cpu, lvl, all_pinned, max_interval, sd_idle, share_power);
        };
        let mut active_balance = false;
        if moved == 0 {
            self.sched.rqs[this_cpu].sd[lvl].stats.lb_failed[ix] += 1;
            // Newidle failures count too until 2.6.37 ("Increment
            // cache_nice_tries only on periodic lb").
            if idle != CpuIdleType::NewlyIdle || self.cfg.mech.newidle_counts_failures {
                self.sched.rqs[this_cpu].sd[lvl].nr_balance_failed += 1;
            }
            if self.need_active_balance_avg(this_cpu, lvl, idle) {
                // Don't kick the stopper if busiest's current task can't
                // move here.
                let curr_ok = self.sched.rqs[busiest].curr.is_some_and(|c| self.sched.tasks[c].cpus.test(this_cpu));
                if !curr_ok {
                    return self.lb_out_one_pinned(this_cpu, lvl, true, max_interval, sd_idle, share_power);
                }
                // 2.6.35: the stopper is the SCHED_FIFO-99 migration thread.
                active_balance |= self.kick_active_balance(busiest, this_cpu);
                // We've kicked active balancing: reset the failure counter.
                self.sched.rqs[this_cpu].sd[lvl].nr_balance_failed = cache_nice_tries + 1;
            }
        } else {
            let st = &mut self.sched.rqs[this_cpu].sd[lvl];
            st.nr_balance_failed = 0;
            st.stats.lb_gained[ix] += moved as u64;
        }
        let st = &mut self.sched.rqs[this_cpu].sd[lvl];
        if !active_balance {
            // We were unbalanced: reset the interval.
            st.balance_interval = min_interval;
        } else if st.balance_interval < max_interval {
            // Active balancing begun: back off.
            st.balance_interval *= 2;
        }
        if moved == 0 && !sd_idle && share_power {
            return -1;
        }
        moved as i32
    }

    /// load_balance()'s out_one_pinned tail: back the interval off.
    fn lb_out_one_pinned(
        &mut self,
        this_cpu: usize,
        lvl: usize,
        all_pinned: bool,
        max_interval: u64,
        sd_idle: bool,
        share_power: bool,
    ) -> i32 {
        let st = &mut self.sched.rqs[this_cpu].sd[lvl];
        if (all_pinned && st.balance_interval < MAX_PINNED_INTERVAL) || st.balance_interval < max_interval {
            st.balance_interval *= 2;
        }
        if !sd_idle && share_power {
            -1
        } else {
            0
        }
    }

    /// active_load_balance_cpu_stop() [sched_fair.c @2.6.35], run by the
    /// stopper on `busiest`: move_one_task() to push_cpu within the lowest
    /// domain of push_cpu spanning busiest, as CPU_IDLE. The stopper itself
    /// is the running task, so the preempted CFS task may go too; there is
    /// something to move when any CFS task is queued ("nr_running <= 1"
    /// counts the stopper).
    pub fn active_load_balance_cpu_stop_avg(&mut self, busiest: usize) {
        let Some(target) = self.stopper_enter(busiest) else { return };
        // 2.6.24's migration thread moves any class (move_one_task walks
        // the classes, RT first).
        let legacy = self.rt_legacy();
        let movable =
            if legacy { self.sched.rqs[busiest].nr_running } else { self.sched.cfs_rqs[busiest].h_nr_running };
        if movable == 0 || busiest == target {
            return;
        }
        let Some(lvl) = self.topo.cpu_domains[target]
            .iter()
            .position(|&d| self.sd_balances(d) && self.topo.domains[d].span.binary_search(&busiest).is_ok())
        else {
            return;
        };
        self.sched.rqs[target].sd[lvl].stats.alb_count += 1;
        let curr = self.sched.rqs[busiest].curr;
        let mut candidates = if legacy { self.rt_tasks_lb_order(busiest) } else { Vec::new() };
        candidates.extend(self.cfs_tasks_head_first(busiest));
        for p in candidates {
            // Seed 002 (4/6): the regular pass's stopper leaves SCHED_IDLE
            // tasks alone when the feature is on.
            if !self.pass_accepts(Pass::Normal, p) || !self.sched.tasks[p].cpus.test(target) {
                continue;
            }
            let is_curr = curr == Some(p);
            let sd = self.topo.cpu_domains[target][lvl];
            let hot_ok = !self.task_hot_avg(p, busiest, target)
                || self.sched.rqs[target].sd[lvl].nr_balance_failed > self.topo.domains[sd].cache_nice_tries;
            if !hot_ok {
                continue;
            }
            if is_curr {
                self.stopper_preempt_curr(busiest, p);
            }
            self.move_queued_task(p, busiest, target, busiest);
            self.sched.rqs[target].sd[lvl].stats.alb_pushed += 1;
            self.resched_curr(busiest);
            return;
        }
        self.sched.rqs[target].sd[lvl].stats.alb_failed += 1;
    }

    // ------------------------------------------------- rebalance / newidle

    /// rebalance_domains() [sched_fair.c @2.6.35]: balance each due domain
    /// bottom-up; interval = balance_interval (× busy_factor unless idle), in
    /// jiffies, clamped to [1, HZ·NR_CPUS/10]; stop at a level where this CPU
    /// is not its group's balancer. Seed 002 (5/6): the SCHED_IDLE pass runs
    /// after the regular one at each SD_IDLE_LOAD_BALANCE domain.
    pub fn rebalance_domains_avg(&mut self, cpu: usize, idle: CpuIdleType) {
        let mut idle = idle;
        let mut balance = true;
        let tick = self.cfg.tick_ns;
        let mut next_balance = self.now + 60 * self.cfg.hz as u64 * tick;
        let mut update_next_balance = false;
        let max_j = self.sched.max_load_balance_interval;
        for lvl in 0..self.topo.cpu_domains[cpu].len() {
            let d = self.topo.cpu_domains[cpu][lvl];
            if !self.sd_balances(d) {
                continue;
            }
            let mut ms = self.sched.rqs[cpu].sd[lvl].balance_interval;
            if idle != CpuIdleType::Idle {
                ms *= self.topo.domains[d].busy_factor as u64;
            }
            let interval = self.cfg.msecs_to_jiffies(ms).clamp(1, max_j) * tick;
            // Deviation: SD_SERIALIZE's global trylock never contends in a
            // serial simulation.
            if self.now as i64 >= self.sched.rqs[cpu].sd[lvl].last_balance + interval as i64 {
                if self.load_balance_ld(cpu, lvl, idle, &mut balance) != 0 {
                    // Pulled tasks (or an SMT sibling is busy): not idle.
                    idle = CpuIdleType::NotIdle;
                }
                if balance && self.load_balance_idle(cpu, lvl, idle) > 0 {
                    idle = CpuIdleType::NotIdle;
                }
                self.sched.rqs[cpu].sd[lvl].last_balance = self.now as i64;
            }
            let due = (self.sched.rqs[cpu].sd[lvl].last_balance + interval as i64).max(0) as u64;
            if due < next_balance {
                next_balance = due;
                update_next_balance = true;
            }
            if !balance {
                break;
            }
        }
        if update_next_balance {
            self.sched.rqs[cpu].next_balance = next_balance;
        }
    }

    /// idle_balance() [sched_fair.c @2.6.35], from schedule() when the CPU
    /// is about to go idle: skipped while avg_idle < sysctl_sched_migration_cost
    /// (from 2.6.35; 2.6.2x had no guard; 4.16+ also skips when no runqueue
    /// is overloaded); load_balance(CPU_NEWLY_IDLE) on each SD_BALANCE_NEWIDLE
    /// domain bottom-up, stopping at the first success. Seed 002 (5/6): the
    /// SCHED_IDLE pass follows a failed regular pass at SD_IDLE_LOAD_BALANCE
    /// domains. Returns the tasks gained: schedule() picks again whatever
    /// load_balance() said, and it can pull tasks yet report 0 (a later
    /// balance_tasks() pass that skips a heavy task leaves all_pinned set,
    /// which sends load_balance() through redo to out_balanced).
    pub fn idle_balance_avg(&mut self, cpu: usize) -> u32 {
        let nr_before = self.sched.rqs[cpu].nr_running;
        self.sched.rqs[cpu].idle_stamp = Some(self.now);
        if self.cfg.mech.newidle_avg_idle_guard
            && self.sched.rqs[cpu].avg_idle < self.cfg.sysctl.sched_migration_cost_ns
        {
            return 0;
        }
        if self.cfg.mech.newidle_overload_guard && self.sched.rd.nr_overloaded == 0 {
            return 0;
        }
        let tick = self.cfg.tick_ns;
        let mut next_balance = self.now + self.cfg.hz as u64 * tick;
        let mut pulled: i32 = 0;
        for lvl in 0..self.topo.cpu_domains[cpu].len() {
            let d = self.topo.cpu_domains[cpu][lvl];
            if !self.sd_balances(d) {
                continue;
            }
            if self.topo.domains[d].flags & SD_BALANCE_NEWIDLE != 0 {
                let mut balance = true;
                pulled = if self.lb_2625() {
                    self.load_balance_newidle_2625(cpu, lvl)
                } else {
                    self.load_balance_ld(cpu, lvl, CpuIdleType::NewlyIdle, &mut balance)
                };
                if pulled == 0 {
                    pulled = self.load_balance_idle(cpu, lvl, CpuIdleType::NewlyIdle) as i32;
                }
            }
            let interval = self.cfg.msecs_to_jiffies(self.sched.rqs[cpu].sd[lvl].balance_interval) * tick;
            let due = (self.sched.rqs[cpu].sd[lvl].last_balance + interval as i64).max(0) as u64;
            next_balance = next_balance.min(due);
            if pulled != 0 {
                self.sched.rqs[cpu].idle_stamp = None;
                break;
            }
        }
        if pulled != 0 || self.now > self.sched.rqs[cpu].next_balance {
            // Going idle: next_balance may have been set while busy.
            self.sched.rqs[cpu].next_balance = next_balance;
        }
        self.sched.rqs[cpu].nr_running.saturating_sub(nr_before)
    }

    // ----------------------------------------------------- NOHZ owner model
}
