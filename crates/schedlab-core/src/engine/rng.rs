//! Seeded random streams, forked per purpose.
//!
//! One scenario seed forks an independent stream for each purpose (a task's
//! durations, the wakeup jitter, ...) by hashing the purpose name with the
//! seed, so adding a consumer of randomness in one place does not shift the
//! numbers drawn anywhere else. The generator is xoshiro256** (Blackman and
//! Vigna), seeded through SplitMix64 as its authors recommend.

#[derive(Debug, Clone)]
pub struct Rng {
    s: [u64; 4],
}

fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a over the purpose name: stable across platforms and releases.
fn fnv1a(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        let mut x = seed;
        let s = [splitmix64(&mut x), splitmix64(&mut x), splitmix64(&mut x), splitmix64(&mut x)];
        Rng { s }
    }

    /// A stream for `purpose`, independent of every other purpose.
    pub fn fork(seed: u64, purpose: &str) -> Self {
        Rng::new(seed ^ fnv1a(purpose).rotate_left(17))
    }

    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1) with 53 bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in [lo, hi] (inclusive).
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        let span = hi - lo + 1;
        lo + ((self.next_u64() as u128 * span as u128) >> 64) as u64
    }

    /// Exponential with the given mean (inverse transform).
    pub fn exp(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.next_f64()).ln()
    }

    /// Normal(mean, sd) by Box-Muller (one value per call, the other discarded
    /// so that the number of draws per call is fixed).
    pub fn normal(&mut self, mean: f64, sd: f64) -> f64 {
        let u1 = 1.0 - self.next_f64();
        let u2 = self.next_f64();
        mean + sd * (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

/// A duration, constant or drawn from the task's RNG stream (ns).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Dist {
    Const(u64),
    Uniform(u64, u64),
    Exp(u64),
    Normal(u64, u64),
    /// Log-normal with this mean and standard deviation (of the duration
    /// itself, not of its logarithm): the long-tailed CPU bursts and sleeps
    /// of a real task, as `schedlab import --mode model` fits them.
    LogNormal(u64, u64),
}

impl Dist {
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        match *self {
            Dist::Const(v) => v,
            Dist::Uniform(a, b) => rng.range(a, b),
            Dist::Exp(mean) => rng.exp(mean as f64).round() as u64,
            Dist::Normal(mean, sd) => rng.normal(mean as f64, sd as f64).max(0.0).round() as u64,
            Dist::LogNormal(mean, sd) => {
                // ln X ~ N(mu, sigma²) with E[X] = mean, sd(X) = sd:
                // sigma² = ln(1 + sd²/mean²), mu = ln(mean) - sigma²/2.
                let (m, s) = (mean.max(1) as f64, sd as f64);
                let sigma2 = (1.0 + (s / m) * (s / m)).ln();
                rng.normal(m.ln() - sigma2 / 2.0, sigma2.sqrt()).exp().round() as u64
            }
        }
    }

    pub fn mean(&self) -> u64 {
        match *self {
            Dist::Const(v) | Dist::Exp(v) | Dist::Normal(v, _) | Dist::LogNormal(v, _) => v,
            Dist::Uniform(a, b) => (a + b) / 2,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_forks_differ() {
        let mut a = Rng::fork(7, "task:hog:0");
        let mut b = Rng::fork(7, "task:hog:0");
        let mut c = Rng::fork(7, "task:hog:1");
        let va: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
        let vb: Vec<u64> = (0..8).map(|_| b.next_u64()).collect();
        let vc: Vec<u64> = (0..8).map(|_| c.next_u64()).collect();
        assert_eq!(va, vb);
        assert_ne!(va, vc);
    }

    #[test]
    fn distributions_have_the_right_mean() {
        let mut r = Rng::new(1);
        let n = 200_000;
        let m: f64 = (0..n).map(|_| r.exp(2.0)).sum::<f64>() / n as f64;
        assert!((m - 2.0).abs() < 0.03, "{m}");
        let m: f64 = (0..n).map(|_| r.normal(5.0, 1.0)).sum::<f64>() / n as f64;
        assert!((m - 5.0).abs() < 0.02, "{m}");
        let d = Dist::LogNormal(2_000, 6_000);
        let xs: Vec<f64> = (0..n).map(|_| d.sample(&mut r) as f64).collect();
        let m = xs.iter().sum::<f64>() / n as f64;
        let median = {
            let mut v = xs.clone();
            v.sort_by(f64::total_cmp);
            v[n / 2]
        };
        assert!((m - 2_000.0).abs() < 100.0, "{m}");
        // sigma² = ln 10: the median is mean / sqrt(10), far below the mean.
        assert!((median - 2_000.0 / 10f64.sqrt()).abs() < 30.0, "{median}");
        for _ in 0..1000 {
            let x = r.range(3, 9);
            assert!((3..=9).contains(&x));
        }
    }
}
