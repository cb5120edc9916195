//! Zone watermarks (mm/page_alloc.c: calculate_min_free_kbytes /
//! init_per_zone_wmark_min, __setup_per_zone_wmarks) by version
//! [docs/LINUX-FACTS.md §7.1].

use crate::kernel::mechanisms::Mechanisms;

/// WMARK_MIN, WMARK_LOW, WMARK_HIGH of one zone, in pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Watermarks {
    pub min: u64,
    pub low: u64,
    pub high: u64,
}

/// int_sqrt(): the integer square root, rounded down.
pub fn int_sqrt(x: u64) -> u64 {
    let mut r = (x as f64).sqrt() as u64;
    while r * r > x {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= x {
        r += 1;
    }
    r
}

/// The default vm.min_free_kbytes for `lowmem_kbytes` of low memory:
/// int_sqrt(lowmem_kbytes * 16), clamped to [128, cap] KiB
/// (`Mechanisms::min_free_kbytes_cap`).
pub fn default_min_free_kbytes(lowmem_kbytes: u64, mech: &Mechanisms) -> u64 {
    int_sqrt(lowmem_kbytes * 16).clamp(128, mech.min_free_kbytes_cap)
}

/// __setup_per_zone_wmarks() for one lowmem zone of `managed` pages out of
/// `lowmem_pages` in all, with vm.min_free_kbytes `min_free_kbytes` and
/// vm.watermark_scale_factor `scale_factor` (4.6+).
///
/// 2.6.x: low = min + min/4, high = min + min/2. 4.6+: gap =
/// max(min/4, managed * scale_factor / 10000), low = min + gap, high =
/// min + 2 gap (6.x writes high = low + gap: the same).
pub fn setup_zone_wmarks(
    managed: u64,
    lowmem_pages: u64,
    min_free_kbytes: u64,
    scale_factor: u64,
    mech: &Mechanisms,
) -> Watermarks {
    let pages_min = min_free_kbytes / 4; // KiB -> 4 KiB pages
    let min = (pages_min as u128 * managed as u128 / lowmem_pages.max(1) as u128) as u64;
    let gap = if mech.watermark_scale_factor {
        (min / 4).max((managed as u128 * scale_factor as u128 / 10_000) as u64)
    } else {
        min / 4
    };
    let low = min + gap;
    let high = if mech.watermark_scale_factor { min + 2 * gap } else { min + min / 2 };
    Watermarks { min, low, high }
}

/// zone_batchsize(): the pages a per-CPU list takes from or gives back to
/// the buddy lists at once: a 1024th of the zone, at most
/// `Mechanisms::zone_batch_cap_kb` (512 KiB before 4.19, 1 MiB from it:
/// "mm, page_alloc: double zone's batchsize", Aaron Lu, for zone->lock
/// contention), a quarter of that, rounded down to 2^n - 1.
pub fn zone_batchsize(managed_pages: u64, mech: &Mechanisms) -> u64 {
    let batch = (managed_pages / 1024).min(mech.zone_batch_cap_kb * 1024 / super::PAGE_SIZE) / 4;
    let batch = batch.max(1);
    let x = batch + batch / 2;
    (1u64 << (63 - x.leading_zeros())) - 1
}

/// pcp->high: a per-CPU list holding this many pages gives a batch back.
/// 6 × batch before 5.14 (pageset_set_batch); from 5.14 zone_highsize():
/// the zone's low watermark split over the node's CPUs, at least 4 ×
/// batch ("so that if they are full then background reclaim will not be
/// started prematurely").
///
/// Deviation: 6.7's automatic tuning between high_min and high_max is not
/// modelled; high stays at high_min (zone_highsize's default).
pub fn pcp_high(batch: u64, low: u64, node_cpus: u64, mech: &Mechanisms) -> u64 {
    if mech.pcp_high_from_low_wmark {
        (low / node_cpus.max(1)).max(batch << 2)
    } else {
        6 * batch
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Mechanisms {
        Mechanisms::of(crate::kernel::version::KernelVersion::parse(s).unwrap())
    }

    #[test]
    fn min_free_kbytes_default_and_caps() {
        // 16 GiB of lowmem: sqrt(16 * 2^24) = 16384 KiB.
        assert_eq!(default_min_free_kbytes(16 << 20, &v("4.16")), 16_384);
        assert_eq!(default_min_free_kbytes(64 << 20, &v("4.16")), 32_768);
        // 756 GiB: sqrt(756 * 2^20 * 16) = 112,621 KiB, capped at 65536 in
        // 4.16 and kept in 6.1.
        assert_eq!(default_min_free_kbytes(756 << 20, &v("4.16")), 65_536);
        assert_eq!(default_min_free_kbytes(756 << 20, &v("6.1")), 112_621);
        assert_eq!(default_min_free_kbytes(4 << 40 >> 10, &v("6.12")), 262_144);
        assert_eq!(default_min_free_kbytes(256, &v("2.6.25")), 128);
    }

    #[test]
    fn watermarks_by_version() {
        // 2.6.35: low = 5/4 min, high = 3/2 min.
        let w = setup_zone_wmarks(1 << 20, 1 << 20, 16_384, 10, &v("2.6.35"));
        assert_eq!(w, Watermarks { min: 4096, low: 5120, high: 6144 });
        // 4.16, one zone of 94.5M pages out of two: half of min_free each,
        // gap = 0.1% of the zone.
        let managed = 756u64 << 18; // 756 GiB in pages
        let w = setup_zone_wmarks(managed / 2, managed, 65_536, 10, &v("4.16"));
        assert_eq!(w.min, 8192);
        assert_eq!(w.low - w.min, managed / 2 * 10 / 10_000);
        assert_eq!(w.high - w.low, w.low - w.min);
        // A small zone: the min/4 floor of the gap.
        let w = setup_zone_wmarks(1 << 16, 1 << 16, 16_384, 1, &v("6.12"));
        assert_eq!(w, Watermarks { min: 4096, low: 5120, high: 6144 });
        // watermark_scale_factor 1000 (10%).
        let w = setup_zone_wmarks(1 << 20, 1 << 20, 16_384, 1000, &v("6.1"));
        assert_eq!(w.low, 4096 + (1 << 20) / 10);
    }

    #[test]
    fn int_sqrt_exact() {
        for x in [0u64, 1, 2, 3, 4, 15, 16, 17, 1 << 40, (1 << 40) - 1, u32::MAX as u64] {
            let r = int_sqrt(x);
            assert!(r * r <= x && (r + 1) * (r + 1) > x, "{x}");
        }
    }

    #[test]
    fn pcp_batch_by_version() {
        // 378 GiB per node: capped; 512 KiB -> 128 / 4 = 32 -> 48 -> 31.
        let node = 378u64 << 18;
        assert_eq!(zone_batchsize(node, &v("4.16")), 31);
        assert_eq!(zone_batchsize(node, &v("4.19")), 63);
        // A 64 MiB zone: 16384 / 1024 = 16 / 4 = 4 -> 6 -> 3.
        assert_eq!(zone_batchsize(16_384, &v("6.1")), 3);
    }

    #[test]
    fn pcp_high_by_version() {
        // 4.16: 6 x 31.
        assert_eq!(pcp_high(31, 395_000, 52, &v("4.16")), 186);
        // 6.1: the low watermark over the node's CPUs, at least 4 x batch.
        assert_eq!(pcp_high(63, 5_000, 4, &v("6.1")), 1_250);
        assert_eq!(pcp_high(63, 500, 4, &v("6.1")), 252);
    }
}
