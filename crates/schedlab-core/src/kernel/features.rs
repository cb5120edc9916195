//! Models kernel/sched/features.h: one line per feature, with the versions
//! that have it and its default there. The list generates the flag enum, the
//! per-version defaults and the name table, so scenarios write features
//! exactly as /sys/kernel/debug/sched/features prints them (`NO_NEXT_BUDDY`).
//!
//! The seeds' patches are features too (default off).

use crate::kernel::version::KernelVersion as V;

type Avail = fn(V) -> Option<bool>;

macro_rules! sched_features {
    ($( $(#[doc = $doc:literal])* $name:ident => $avail:expr ;)*) => {
        /// A scheduler feature flag.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        #[repr(u8)]
        pub enum Feature { $( $(#[doc = $doc])* $name ),* }

        /// Every feature in list order.
        pub const ALL: &[Feature] = &[$(Feature::$name),*];

        impl Feature {
            pub fn name(self) -> &'static str {
                match self { $(Feature::$name => stringify!($name)),* }
            }
            /// The one-line description (the doc comment above).
            pub fn doc(self) -> &'static str {
                match self { $(Feature::$name => concat!($($doc),*).trim_ascii()),* }
            }
            /// `None` if the version does not have the feature, else its default.
            pub fn default_for(self, v: V) -> Option<bool> {
                let f: Avail = match self { $(Feature::$name => $avail),* };
                f(v)
            }
            pub fn from_name(s: &str) -> Option<Feature> {
                ALL.iter().copied().find(|f| f.name() == s)
            }
        }
    };
}

fn between(v: V, lo: V, hi_excl: Option<V>) -> bool {
    v >= lo && hi_excl.is_none_or(|h| v < h)
}

const fn kv(a: u16, b: u16) -> V {
    V::new(a, b, 0)
}
const fn k26(x: u16) -> V {
    V::new(2, 6, x)
}

sched_features! {
    /// Sleeper credit of the full sched_latency (2.6.24-2.6.30) [sched_features.h @2.6.25].
    NEW_FAIR_SLEEPERS => |v| between(v, k26(23), Some(k26(31))).then_some(true);
    /// Sleeper credit of half sched_latency (2.6.31 .. 6.5) [features.h @2.6.35, @6.1].
    GENTLE_FAIR_SLEEPERS => |v| between(v, k26(31), Some(kv(6, 6))).then_some(true);
    /// New tasks start one vslice in the future (CFS) [features.h @6.1].
    START_DEBIT => |v| (v < kv(6, 6)).then_some(true);
    /// EEVDF: place with the saved lag [features.h @6.6].
    PLACE_LAG => |v| (v >= kv(6, 6)).then_some(true);
    /// EEVDF: a forked task gets half a vslice as its first deadline [@6.6].
    PLACE_DEADLINE_INITIAL => |v| (v >= kv(6, 6)).then_some(true);
    /// EEVDF: keep current until it has consumed its request [@6.6].
    RUN_TO_PARITY => |v| (v >= kv(6, 6)).then_some(true);
    /// Wakeup preemption at all [features.h all versions].
    WAKEUP_PREEMPTION => |_| Some(true);
    /// Prefer the wakee that caused a preemption [@2.6.35 .. @6.12: off].
    NEXT_BUDDY => |v| (v >= k26(35)).then_some(false);
    /// Prefer the preempted task (2.6.35 .. 6.5: on).
    LAST_BUDDY => |v| between(v, k26(35), Some(kv(6, 6))).then_some(true);
    /// The next buddy is cache hot for the balancer [@2.6.35 .. @6.12].
    CACHE_HOT_BUDDY => |v| (v >= k26(35)).then_some(true);
    /// End slices on a high-resolution timer instead of the tick (on only in 2.6.25).
    HRTICK => |v| Some(v >= k26(25) && v < k26(26));
    /// Use cpu_load[] bias in source_load/target_load (2.6.3x .. 4.x).
    LB_BIAS => |v| between(v, k26(35), Some(kv(5, 4))).then_some(true);
    /// Skip tasks with load < 16 until the first failure [off].
    LB_MIN => |v| (v >= kv(4, 16)).then_some(false);
    /// Queue remote wakeups on the target's wake list [4.16+].
    TTWU_QUEUE => |v| (v >= kv(4, 16)).then_some(true);
    /// Limit the LLC idle scan by avg_idle (4.16 .. 6.5; off from 6.0 with SIS_UTIL).
    SIS_PROP => |v| between(v, kv(4, 16), Some(kv(6, 12))).then_some(v < kv(6, 0));
    /// Limit the LLC idle scan by LLC utilisation (6.0+).
    SIS_UTIL => |v| (v >= kv(6, 0)).then_some(true);
    /// wake_affine: idle test [4.16+].
    WA_IDLE => |v| (v >= kv(4, 16)).then_some(true);
    /// wake_affine: weight test [4.16+].
    WA_WEIGHT => |v| (v >= kv(4, 16)).then_some(true);
    /// wake_affine: half imbalance_pct bias towards prev [4.16+].
    WA_BIAS => |v| (v >= kv(4, 16)).then_some(true);
    /// Utilisation estimation (5.x+); not modelled beyond its name.
    UTIL_EST => |v| (v >= kv(5, 5)).then_some(true);
    /// 5.13-6.5: sched_slice()'s period from the runqueue's h_nr_running, not the entity's cfs_rq's.
    ALT_PERIOD => |v| between(v, kv(5, 13), Some(kv(6, 6))).then_some(true);
    /// 5.13-6.5: a slice of at least min_granularity (a SCHED_IDLE entity among others: 0.75 ms, 5.15+).
    BASE_SLICE => |v| between(v, kv(5, 13), Some(kv(6, 6))).then_some(true);
    /// 6.12: cancel RUN_TO_PARITY for a wakee with a shorter slice.
    PREEMPT_SHORT => |v| (v >= kv(6, 12)).then_some(true);
    /// 6.12: ineligible sleepers stay queued until picked.
    DELAY_DEQUEUE => |v| (v >= kv(6, 12)).then_some(true);
    /// 6.12: zero positive lag at the end of a delayed dequeue.
    DELAY_ZERO => |v| (v >= kv(6, 12)).then_some(true);
    /// 6.12: store the deadline relative on a migration dequeue.
    PLACE_REL_DEADLINE => |v| (v >= kv(6, 12)).then_some(true);
    /// RT push through an IPI chain [4.16: on; 6.1: off; 6.6: on; 6.12: off; 6.18: on].
    RT_PUSH_IPI => |v| (v >= kv(4, 16)).then_some(!(between(v, kv(6, 1), Some(kv(6, 6))) || between(v, kv(6, 12), Some(kv(6, 13)))));
    /// RT runtime borrowing between CPUs [4.16, 5.5: on; 6.1+: off].
    RT_RUNTIME_SHARE => |v| (v >= kv(4, 16)).then_some(v < kv(6, 1));
    /// Stable backport: newidle balance proportional to its success rate ("sched/fair: Proportional newidle balance", 33cf66d88306, mainline 6.19; in 6.1.160 and 6.12.65 by the Debian changelogs, in 6.18.5; not in 6.6.9).
    NI_RANDOM => |v| (v >= kv(6, 19) || [(V::new(6, 1, 160), kv(6, 2)), (V::new(6, 12, 65), kv(6, 13)), (V::new(6, 18, 5), kv(6, 19))]
        .iter().any(|&(lo, hi)| between(v, lo, Some(hi)))).then_some(true);
    /// Seed 002 (Nikhil Rao, 2010): a second balancing pass for SCHED_IDLE tasks. Patch, default off.
    SD_IDLE_LOAD_BALANCE => |v| (v < kv(5, 5)).then_some(false);
    /// Seed 001 (Mel Gorman, 2020, merged 5.6): a per-CPU kthread waking a task may stack it on its CPU.
    KTHREAD_STACKING => |v| Some(v >= kv(5, 6));
}

/// The feature set of one run: which features exist and which are on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Features {
    available: u64,
    enabled: u64,
}

impl Features {
    pub fn defaults(v: V) -> Self {
        let mut f = Features { available: 0, enabled: 0 };
        for &feat in ALL {
            if let Some(on) = feat.default_for(v) {
                f.available |= 1 << feat as u8;
                if on {
                    f.enabled |= 1 << feat as u8;
                }
            }
        }
        f
    }

    #[inline]
    pub fn on(&self, f: Feature) -> bool {
        self.enabled & (1 << f as u8) != 0
    }

    pub fn available(&self, f: Feature) -> bool {
        self.available & (1 << f as u8) != 0
    }

    /// Apply `NAME` or `NO_NAME` as written to debugfs. Returns an error
    /// text if the name is unknown or the version does not have it.
    pub fn apply(&mut self, s: &str, v: V) -> Result<(), String> {
        let (name, on) = match s.strip_prefix("NO_") {
            Some(rest) => (rest, false),
            None => (s, true),
        };
        let Some(f) = Feature::from_name(name) else {
            return Err(format!("unknown sched feature \"{s}\""));
        };
        if !self.available(f) {
            return Err(format!("feature {name} does not exist in kernel {v}"));
        }
        if on {
            self.enabled |= 1 << f as u8;
        } else {
            self.enabled &= !(1 << f as u8);
        }
        Ok(())
    }

    /// Names of the features this version has, as debugfs lists them.
    pub fn names(&self) -> Vec<(&'static str, bool)> {
        ALL.iter().filter(|f| self.available(**f)).map(|f| (f.name(), self.on(*f))).collect()
    }

    pub fn accepted_names(&self) -> String {
        let v: Vec<&str> = ALL.iter().filter(|f| self.available(**f)).map(|f| f.name()).collect();
        format!("NAME or NO_NAME with NAME one of {}", v.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_the_fact_sheet() {
        let v61 = V::parse("6.1").unwrap();
        let f = Features::defaults(v61);
        assert!(f.on(Feature::GENTLE_FAIR_SLEEPERS) && f.on(Feature::START_DEBIT));
        assert!(!f.on(Feature::NEXT_BUDDY) && f.on(Feature::LAST_BUDDY));
        assert!(f.on(Feature::SIS_UTIL) && !f.on(Feature::SIS_PROP));
        assert!(!f.on(Feature::RT_PUSH_IPI));
        assert!(!f.available(Feature::PLACE_LAG));
        let f66 = Features::defaults(V::parse("6.6").unwrap());
        assert!(f66.on(Feature::PLACE_LAG) && f66.on(Feature::RT_PUSH_IPI) && !f66.available(Feature::START_DEBIT));
        let f2635 = Features::defaults(V::parse("2.6.35").unwrap());
        assert!(f2635.available(Feature::SD_IDLE_LOAD_BALANCE) && !f2635.on(Feature::SD_IDLE_LOAD_BALANCE));
        assert!(!f2635.on(Feature::HRTICK));
        assert!(Features::defaults(V::parse("2.6.25").unwrap()).on(Feature::HRTICK));
    }

    #[test]
    fn the_6_18_line_has_its_own_defaults() {
        let f = |s: &str| Features::defaults(V::parse(s).unwrap());
        // RT_PUSH_IPI: off in the 6.12 line (6.12.117), on in 6.18.0 .. 6.18.35.
        assert!(f("6.18").on(Feature::RT_PUSH_IPI) && f("6.18.0").on(Feature::RT_PUSH_IPI));
        assert!(!f("6.12").on(Feature::RT_PUSH_IPI));
        // NI_RANDOM: 6.1.160, 6.12.65 and 6.18.5 (not 6.18.0 .. 6.18.4), 6.19.
        assert!(f("6.18").on(Feature::NI_RANDOM) && f("6.18.5").on(Feature::NI_RANDOM));
        assert!(!f("6.18.4").available(Feature::NI_RANDOM) && !f("6.18.0").available(Feature::NI_RANDOM));
        assert!(f("6.12").on(Feature::NI_RANDOM) && f("6.12.65").on(Feature::NI_RANDOM));
        assert!(!f("6.12.64").available(Feature::NI_RANDOM) && !f("6.15").available(Feature::NI_RANDOM));
        assert!(f("6.1").on(Feature::NI_RANDOM) && !f("6.6").available(Feature::NI_RANDOM));
        assert!(f("6.19").on(Feature::NI_RANDOM));
        // The rest as on 6.12 (NEXT_BUDDY stays off).
        assert!(!f("6.18").on(Feature::NEXT_BUDDY) && f("6.18").on(Feature::DELAY_DEQUEUE));
    }

    #[test]
    fn apply_names() {
        let v = V::parse("6.1").unwrap();
        let mut f = Features::defaults(v);
        f.apply("NO_START_DEBIT", v).unwrap();
        assert!(!f.on(Feature::START_DEBIT));
        f.apply("NEXT_BUDDY", v).unwrap();
        assert!(f.on(Feature::NEXT_BUDDY));
        assert!(f.apply("PLACE_LAG", v).is_err());
        assert!(f.apply("BOGUS", v).is_err());
    }
}
