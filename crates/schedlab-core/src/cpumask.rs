//! Models include/linux/cpumask.h: a fixed-size CPU bitmap.
//! Iteration is in CPU order, so every walk over a mask is deterministic.

#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct CpuMask {
    words: Vec<u64>,
    nr: usize,
}

impl CpuMask {
    pub fn new(nr_cpus: usize) -> Self {
        CpuMask { words: vec![0; nr_cpus.div_ceil(64).max(1)], nr: nr_cpus }
    }

    /// Every CPU set: whole words at once (O(nr_cpus / 64)).
    pub fn full(nr_cpus: usize) -> Self {
        let mut m = CpuMask::new(nr_cpus);
        let whole = nr_cpus / 64;
        for w in &mut m.words[..whole] {
            *w = u64::MAX;
        }
        if !nr_cpus.is_multiple_of(64) {
            m.words[whole] = (1u64 << (nr_cpus % 64)) - 1;
        }
        m
    }

    pub fn from_cpus(nr_cpus: usize, cpus: &[usize]) -> Self {
        let mut m = CpuMask::new(nr_cpus);
        for &c in cpus {
            m.set(c);
        }
        m
    }

    #[inline]
    pub fn set(&mut self, cpu: usize) {
        self.words[cpu / 64] |= 1 << (cpu % 64);
    }

    #[inline]
    pub fn clear(&mut self, cpu: usize) {
        self.words[cpu / 64] &= !(1 << (cpu % 64));
    }

    /// Set `cpu` if `on`, else clear it.
    #[inline]
    pub fn assign(&mut self, cpu: usize, on: bool) {
        let w = &mut self.words[cpu / 64];
        *w = (*w & !(1 << (cpu % 64))) | (u64::from(on) << (cpu % 64));
    }

    #[inline]
    pub fn test(&self, cpu: usize) -> bool {
        cpu < self.nr && self.words[cpu / 64] & (1 << (cpu % 64)) != 0
    }

    pub fn weight(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    pub fn first(&self) -> Option<usize> {
        self.iter().next()
    }

    /// cpumask_and(): the CPUs in both masks.
    pub fn and(&self, other: &CpuMask) -> CpuMask {
        let words = self.words.iter().zip(&other.words).map(|(a, b)| a & b).collect();
        CpuMask { words, nr: self.nr }
    }

    /// cpumask_or() into self: the CPUs in either mask.
    #[inline]
    pub fn or_assign(&mut self, other: &CpuMask) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
    }

    /// cpumask_andnot(): the CPUs in self and not in `other`.
    pub fn andnot(&self, other: &CpuMask) -> CpuMask {
        let words = self.words.iter().zip(&other.words).map(|(a, b)| a & !b).collect();
        CpuMask { words, nr: self.nr }
    }

    /// cpumask_intersects().
    pub fn intersects(&self, other: &CpuMask) -> bool {
        self.words.iter().zip(&other.words).any(|(a, b)| a & b != 0)
    }

    pub fn nr_cpu_ids(&self) -> usize {
        self.nr
    }

    /// for_each_cpu_wrap(cpu, self & allowed, start) with a budget, a word
    /// at a time: the first CPU also in `avail`, if it is among the first
    /// `budget` CPUs of `self & allowed` from `start` up (wrapping past the
    /// last CPU to the first); else None.
    pub fn first_wrap_in(&self, allowed: &CpuMask, avail: &CpuMask, start: usize, budget: u64) -> Option<usize> {
        let mut left = budget;
        let start = start.min(self.nr);
        for (lo, hi) in [(start, self.nr), (0, start)] {
            if lo >= hi {
                continue;
            }
            for w in lo / 64..=(hi - 1) / 64 {
                let from = if w == lo / 64 { lo % 64 } else { 0 };
                let to = if w == (hi - 1) / 64 { (hi - 1) % 64 + 1 } else { 64 };
                let range = (u64::MAX >> (64 - (to - from))) << from;
                let cand = self.words[w] & allowed.words[w] & range;
                let hits = cand & avail.words[w];
                if hits != 0 {
                    let b = hits.trailing_zeros();
                    let before = (cand & ((1u64 << b) - 1)).count_ones() as u64;
                    return (before < left).then_some(w * 64 + b as usize);
                }
                let c = cand.count_ones() as u64;
                if c >= left {
                    return None;
                }
                left -= c;
            }
        }
        None
    }

    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let b = w.trailing_zeros() as usize;
                w &= w - 1;
                Some(i * 64 + b)
            })
        })
    }

    /// "0-3,6" as /proc/<pid>/status Cpus_allowed_list prints it: a word
    /// at a time from one run's edge to the next (a report prints one for
    /// every task; CPU by CPU, 1,024 of them cost ~28k instructions).
    pub fn to_list_string(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let mut from = 0;
        while let Some(a) = self.next_edge(from, true) {
            let end = self.next_edge(a, false).unwrap_or(self.words.len() * 64);
            if !out.is_empty() {
                out.push(',');
            }
            // Writing to a String cannot fail.
            let _ = if end - 1 == a { write!(out, "{a}") } else { write!(out, "{a}-{}", end - 1) };
            from = end;
        }
        out
    }

    /// The first CPU from `from` on whose bit is `set` (None past the words).
    fn next_edge(&self, from: usize, set: bool) -> Option<usize> {
        let mut i = from / 64;
        if i >= self.words.len() {
            return None;
        }
        let flip = if set { 0 } else { u64::MAX };
        let mut w = (self.words[i] ^ flip) & (u64::MAX << (from % 64));
        loop {
            if w != 0 {
                return Some(i * 64 + w.trailing_zeros() as usize);
            }
            i += 1;
            if i == self.words.len() {
                return None;
            }
            w = self.words[i] ^ flip;
        }
    }

    /// Parse "0-3,6"; Err(text) names the offending part.
    pub fn parse_list(s: &str, nr_cpus: usize) -> Result<CpuMask, String> {
        let mut m = CpuMask::new(nr_cpus);
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (a, b) = match part.split_once('-') {
                Some((a, b)) => (a.trim(), b.trim()),
                None => (part, part),
            };
            let a: usize = a.parse().map_err(|_| format!("\"{part}\" is not a CPU number or range"))?;
            let b: usize = b.parse().map_err(|_| format!("\"{part}\" is not a CPU number or range"))?;
            if a > b {
                return Err(format!("range \"{part}\" is reversed"));
            }
            if b >= nr_cpus {
                return Err(format!("CPU {b} is outside the machine (CPUs 0-{})", nr_cpus - 1));
            }
            for c in a..=b {
                m.set(c);
            }
        }
        if m.is_empty() {
            return Err("the CPU list is empty".into());
        }
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// first_wrap_in() against the CPU-by-CPU walk it replaces in
    /// select_idle_cpu(): every allowed CPU from `start` on, wrapping,
    /// costs one of the budget; the first in `avail` wins.
    #[test]
    fn first_wrap_in_is_the_walk_it_replaces() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for nr in [1, 5, 64, 65, 130, 1024] {
            for _ in 0..300 {
                let mask = |next: &mut dyn FnMut() -> u64, p: u64| {
                    let mut m = CpuMask::new(nr);
                    for c in 0..nr {
                        if next() % 100 < p {
                            m.set(c);
                        }
                    }
                    m
                };
                let span = mask(&mut next, 70);
                let allowed = mask(&mut next, 80);
                let avail = mask(&mut next, 10);
                let start = (next() % (nr as u64 + 1)) as usize;
                let budget = next() % (nr as u64 + 2);
                let mut left = budget;
                let mut want = None;
                for c in (start..nr).chain(0..start) {
                    if !span.test(c) || !allowed.test(c) {
                        continue;
                    }
                    if left == 0 {
                        break;
                    }
                    left -= 1;
                    if avail.test(c) {
                        want = Some(c);
                        break;
                    }
                }
                assert_eq!(
                    span.first_wrap_in(&allowed, &avail, start, budget),
                    want,
                    "nr {nr} start {start} budget {budget}"
                );
            }
        }
    }

    #[test]
    fn or_assign_is_the_union() {
        let mut m = CpuMask::parse_list("0-3,64", 70).unwrap();
        m.or_assign(&CpuMask::parse_list("2-5,69", 70).unwrap());
        assert_eq!(m.to_list_string(), "0-5,64,69");
    }

    #[test]
    fn list_round_trip() {
        let m = CpuMask::parse_list("0-3,6,8-9", 70).unwrap();
        assert_eq!(m.weight(), 7);
        assert_eq!(m.to_list_string(), "0-3,6,8-9");
        assert!(CpuMask::parse_list("0-80", 70).is_err());
        let f = CpuMask::full(130);
        assert_eq!(f.weight(), 130);
        assert!(f.test(129) && !f.test(130));
        assert_eq!(CpuMask::full(64).weight(), 64);
        assert_eq!(CpuMask::full(8).to_list_string(), "0-7");
        let mut big = CpuMask::new(130);
        big.set(129);
        big.set(64);
        assert_eq!(big.iter().collect::<Vec<_>>(), vec![64, 129]);
    }

    #[test]
    fn list_strings_across_words() {
        for (list, nr) in [
            ("0-1023", 1024),
            ("63-64", 130),
            ("0,63-64,127-128", 130),
            ("1-62,65-126,129", 130),
            ("64-127", 128),
            ("0-63", 64),
            ("5", 6),
        ] {
            assert_eq!(CpuMask::parse_list(list, nr).unwrap().to_list_string(), list);
        }
        assert_eq!(CpuMask::new(130).to_list_string(), "");
    }
}
