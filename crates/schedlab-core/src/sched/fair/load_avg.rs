//! Models fair.c's PELT bookkeeping for the fair class: update_load_avg()
//! of an entity and its cfs_rq, the detach of a task's load, and the
//! propagation of a task's load through the group entities above it
//! (add_tg_cfs_propagate, propagate_entity_load_avg, 4.15+). The
//! arithmetic of the signals is sched/pelt.rs.

use crate::sched::env::SchedEnv;
use crate::sched::pelt;
use crate::sched::sched::CfsRqId;
use crate::sched::task::{SeId, TaskId};

impl SchedEnv {
    /// PELT: update the entity (if any) and the cfs_rq to now
    /// (update_load_avg without the propagation of a group's load).
    /// `G` false promises that no task group exists but the root
    /// (`TaskGroups::any()`): the group parts compile away. `true` is
    /// always correct.
    pub fn update_load_avg<const G: bool>(&mut self, cfs_rq: CfsRqId, se: Option<SeId>) {
        let cpu = if G { self.rq_of(cfs_rq) } else { cfs_rq.index() };
        let mut now = self.rq_clock_pelt(cpu); // sched/cpufreq.rs
        if G && self.sched.groups.bandwidth_used {
            now = self.cfs_rq_clock_pelt(cfs_rq, now); // fair/bandwidth.rs
        }
        let running = self.cfs_rq(cfs_rq).curr;
        // 6.12.7+: a sched_delayed task loads its cfs_rq but is not runnable.
        let delayed_out = self.cfg.mech.delayed_not_runnable;
        // A group entity's runnable count is its se->runnable_weight (5.7+).
        let group_q = se.and_then(|id| if G { self.group_cfs_rq(id) } else { None });
        if let Some(id) = se {
            let group_runnable = group_q.map(|q| self.cfs_rq(q).se_runnable_weight as u64);
            let se = self.se_mut_g::<G>(id);
            if se.attached {
                let runnable = group_runnable.unwrap_or((se.on_rq && !(delayed_out && se.sched_delayed)) as u64);
                pelt::update_se_runnable(
                    &mut se.avg,
                    now,
                    se.load.weight as u64,
                    se.on_rq,
                    runnable,
                    running == Some(id),
                );
            }
        }
        let cfs = self.cfs_rq_mut(cfs_rq);
        let h_nr_runnable = cfs.h_nr_running - if delayed_out { cfs.h_nr_delayed } else { 0 };
        let mut decayed =
            pelt::update_cfs_rq(&mut cfs.avg, now, cfs.load_weight, h_nr_runnable as u64, running.is_some());
        if let (Some(id), Some(q)) = (se, group_q) {
            decayed |= self.propagate_entity_load_avg(cfs_rq, id, q);
            // se_update_runnable(), which the kernel calls after the
            // update_load_avg() of enqueue and dequeue.
            // Deviation: refreshed after every update of a group entity, so
            // also at the tick and at a pick; the count differs from the
            // kernel's only after a throttle or a delayed dequeue changed it
            // between two enqueues.
            let g = self.cfs_rq_mut(q);
            g.se_runnable_weight = g.h_nr_running - if delayed_out { g.h_nr_delayed } else { 0 };
        }
        if G && decayed && self.cfs_rq(cfs_rq).tg != crate::sched::task_group::ROOT_TG {
            self.update_tg_load_avg(cfs_rq);
        }
    }

    /// add_tg_cfs_propagate(): unweighted runnable time joined (> 0) or
    /// left (< 0) the group cfs_rq `q`, for its entity to take up at its next
    /// update (the root's cfs_rq has no entity: nothing to do).
    pub(crate) fn add_tg_cfs_propagate(&mut self, q: CfsRqId, runnable_sum: i64) {
        let g = self.cfs_rq_mut(q);
        if g.tg != crate::sched::task_group::ROOT_TG {
            g.propagate = true;
            g.prop_runnable_sum += runnable_sum;
        }
    }

    /// propagate_entity_load_avg() of group entity `se` on `cfs_rq`, whose
    /// own cfs_rq is `q`: what tasks brought to or took from `q` since the
    /// last update reaches the entity and, through `cfs_rq`, the level above
    /// at once, instead of through the entity's own decay (a hog pulled into
    /// an empty group makes its entity fully loaded, not a thirty-second
    /// part of it a millisecond). Returns whether anything changed.
    fn propagate_entity_load_avg(&mut self, cfs_rq: CfsRqId, se: SeId, q: CfsRqId) -> bool {
        if !self.cfs_rq(q).propagate {
            return false;
        }
        let (gavg, gweight, prop) = {
            let g = self.cfs_rq_mut(q);
            g.propagate = false;
            (g.avg, g.load_weight, std::mem::take(&mut g.prop_runnable_sum))
        };
        self.add_tg_cfs_propagate(cfs_rq, prop);
        let mut se_avg = self.se(se).avg;
        let se_weight = self.se(se).load.weight as u64;
        let cfs = &mut self.cfs_rq_mut(cfs_rq).avg;
        pelt::update_tg_cfs_util(cfs, &mut se_avg, &gavg);
        pelt::update_tg_cfs_runnable(cfs, &mut se_avg, &gavg);
        if prop != 0 {
            pelt::update_tg_cfs_load(cfs, &mut se_avg, &gavg, gweight, prop, se_weight);
        }
        self.se_mut(se).avg = se_avg;
        true
    }

    /// detach_entity_load_avg() of task `tid` from `q`, brought up to date
    /// by the caller, then update_tg_load_avg().
    pub(crate) fn detach_task_load_avg(&mut self, q: CfsRqId, tid: TaskId) {
        let w = self.sched.tasks[tid].se.load.weight as u64;
        let se_avg = self.sched.tasks[tid].se.avg;
        pelt::detach_entity(&mut self.cfs_rq_mut(q).avg, &se_avg, w);
        self.sched.tasks[tid].se.attached = false;
        self.add_tg_cfs_propagate(q, -(se_avg.load_sum as i64));
        self.update_tg_load_avg(q);
    }
}
