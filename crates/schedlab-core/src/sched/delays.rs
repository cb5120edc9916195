//! Timer delays (the report's `timer_delay_*`) in bounded memory: the
//! exact values while a task has few (every short run and every validation
//! scenario), a log-linear histogram once it has more, so a day-long run
//! does not keep one word per wakeup.
//!
//! The histogram is HdrHistogram's layout: values below 2^(SUB_BITS+1) ns
//! are exact, every octave above is cut into 2^SUB_BITS buckets. Each
//! bucket keeps its smallest value, and a percentile is the smallest value
//! of the bucket the rank falls in: a delay that occurred, the exact
//! percentile when the bucket holds one value (the simulator's delays are
//! often a handful of exact figures), else within 1/2^SUB_BITS (0.2 %)
//! below it. Count, sum and max stay exact.

use crate::report::DelayStats;

/// Exact values kept per task before it switches to the histogram
/// (8 KiB a task).
pub const EXACT_CAP: usize = 1024;

/// log2 of the buckets per octave.
const SUB_BITS: u32 = 9;
const SUB: u64 = 1 << SUB_BITS;

/// The histogram bucket of a value.
fn bucket(v: u64) -> usize {
    if v < 2 * SUB {
        return v as usize;
    }
    let shift = 63 - v.leading_zeros() - SUB_BITS;
    (shift as u64 * SUB + (v >> shift)) as usize
}

/// The smallest value of a bucket's range.
fn bucket_low(b: usize) -> u64 {
    let b = b as u64;
    if b < 2 * SUB {
        return b;
    }
    let shift = b / SUB - 1;
    (b - shift * SUB) << shift
}

/// One histogram bucket: how many values, and the smallest as an offset
/// from the bucket's low end (saturated above 2^32 ns, for buckets of
/// delays over an hour).
#[derive(Debug, Clone, Copy, Default)]
struct Bucket {
    count: u32,
    min_off: u32,
}

/// One task's delays (ns), or a run's.
#[derive(Debug, Clone, Default)]
pub struct Delays {
    /// The values, until there are EXACT_CAP of them.
    exact: Vec<u64>,
    /// The buckets, grown to the largest seen (8 bytes each, at most
    /// ~28,000); empty while the values are exact.
    hist: Vec<Bucket>,
    count: u64,
    sum: u64,
    max: u64,
}

impl Delays {
    #[inline]
    pub fn push(&mut self, v: u64) {
        self.count += 1;
        self.sum = self.sum.saturating_add(v);
        self.max = self.max.max(v);
        if self.hist.is_empty() {
            if self.exact.len() < EXACT_CAP {
                self.exact.push(v);
                return;
            }
            for x in std::mem::take(&mut self.exact) {
                self.add_to_hist(x);
            }
        }
        self.add_to_hist(v);
    }

    fn add_to_hist(&mut self, v: u64) {
        let b = bucket(v);
        if b >= self.hist.len() {
            self.hist.resize(b + 1, Bucket::default());
        }
        let off = u32::try_from(v - bucket_low(b)).unwrap_or(u32::MAX);
        let e = &mut self.hist[b];
        e.min_off = if e.count == 0 { off } else { e.min_off.min(off) };
        e.count = e.count.saturating_add(1);
    }

    fn add_bucket(&mut self, b: usize, o: Bucket) {
        if o.count == 0 {
            return;
        }
        if b >= self.hist.len() {
            self.hist.resize(b + 1, Bucket::default());
        }
        let e = &mut self.hist[b];
        e.min_off = if e.count == 0 { o.min_off } else { e.min_off.min(o.min_off) };
        e.count = e.count.saturating_add(o.count);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// Every value of `other` added to this set.
    pub fn merge(&mut self, other: &Delays) {
        if other.hist.is_empty() && self.hist.is_empty() {
            // Both exact: stay exact (a report-time merge, not kept).
            self.exact.extend_from_slice(&other.exact);
        } else {
            for x in std::mem::take(&mut self.exact) {
                self.add_to_hist(x);
            }
            for &x in &other.exact {
                self.add_to_hist(x);
            }
            for (b, &o) in other.hist.iter().enumerate() {
                self.add_bucket(b, o);
            }
        }
        self.count += other.count;
        self.sum = self.sum.saturating_add(other.sum);
        self.max = self.max.max(other.max);
    }

    /// Count, mean, nearest-rank percentiles and max.
    pub fn stats(&self) -> DelayStats {
        if self.hist.is_empty() {
            return DelayStats::of(&self.exact);
        }
        DelayStats {
            count: self.count,
            avg_ns: self.sum / self.count.max(1),
            p50_ns: self.percentile(50.0),
            p90_ns: self.percentile(90.0),
            p99_ns: self.percentile(99.0),
            max_ns: Some(self.max),
        }
    }

    /// Nearest rank over the histogram, as `report::percentile` over the
    /// sorted values: the smallest value of the bucket the rank falls in.
    fn percentile(&self, p: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let rank = (((p / 100.0) * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0u64;
        for (b, e) in self.hist.iter().enumerate() {
            seen += e.count as u64;
            if seen >= rank {
                return Some(bucket_low(b).saturating_add(e.min_off as u64).min(self.max));
            }
        }
        Some(self.max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_contiguous_and_tight() {
        let mut last = 0;
        for v in [0u64, 1, 1023, 1024, 1025, 2047, 4096, 1_000_000, 123_456_789, u64::MAX / 2, u64::MAX] {
            let b = bucket(v);
            assert!(b >= last);
            last = b;
            let low = bucket_low(b);
            assert!(low <= v && (v - low) as f64 <= v as f64 / SUB as f64, "{v}: {low}");
        }
        for v in 0..(1u64 << 16) {
            assert!(bucket(v + 1) == bucket(v) || bucket(v + 1) == bucket(v) + 1, "{v}");
        }
    }

    #[test]
    fn few_values_are_exact_and_many_are_close() {
        let mut d = Delays::default();
        for v in [30, 10, 20] {
            d.push(v);
        }
        assert_eq!(d.stats(), DelayStats::of(&[30, 10, 20]));
        // Many values: the histogram's percentiles within 0.1 % of the
        // exact ones; count, mean and max exact.
        let values: Vec<u64> = (0..50_000u64).map(|i| (i * 7919 % 10_007) * 113 + 5).collect();
        let mut d = Delays::default();
        for &v in &values {
            d.push(v);
        }
        let exact = DelayStats::of(&values);
        let got = d.stats();
        assert_eq!((got.count, got.avg_ns, got.max_ns), (exact.count, exact.avg_ns, exact.max_ns));
        for (g, e) in [(got.p50_ns, exact.p50_ns), (got.p90_ns, exact.p90_ns), (got.p99_ns, exact.p99_ns)] {
            let (g, e) = (g.unwrap() as f64, e.unwrap() as f64);
            assert!(g <= e && e - g <= e / SUB as f64, "{g} vs {e}");
        }
        assert!(d.hist.len() < 20_000 && d.exact.is_empty());
        // A value that repeats is its own percentile, exactly.
        let mut d = Delays::default();
        for i in 0..5_000u64 {
            d.push(if i % 10 == 0 { 2_000_123 } else { 50_000 });
        }
        let s = d.stats();
        assert_eq!((s.p50_ns, s.p90_ns, s.p99_ns), (Some(50_000), Some(50_000), Some(2_000_123)));
    }

    #[test]
    fn merging_mixes_exact_and_histogram() {
        let (mut a, mut b) = (Delays::default(), Delays::default());
        for v in 0..10u64 {
            a.push(v * 100);
        }
        for v in 0..5_000u64 {
            b.push(v);
        }
        let mut all = a.clone();
        all.merge(&b);
        assert_eq!(all.count(), 5_010);
        assert_eq!(all.stats().max_ns, Some(4_999));
        let mut exact_pair = a.clone();
        exact_pair.merge(&a);
        assert_eq!(
            exact_pair.stats(),
            DelayStats::of(
                &[(0..10u64).map(|v| v * 100).collect::<Vec<_>>(), (0..10u64).map(|v| v * 100).collect()].concat()
            )
        );
    }
}
