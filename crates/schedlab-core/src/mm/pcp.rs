//! The per-CPU page lists (struct per_cpu_pages, mm/page_alloc.c): an
//! order-0 page is allocated from its CPU's list of the zone and freed
//! onto it; an empty list takes `pcp->batch` pages from the buddy lists
//! under zone->lock (rmqueue_bulk), a list at `pcp->high` gives a batch
//! back (free_pcppages_bulk). NR_FREE_PAGES, which the watermarks test,
//! counts the buddy lists only: pages on the lists are free but not
//! counted, and an allocation whose watermark test fails cannot use them
//! until drain_all_pages() gives them back.
//!
//! Deviation: one list per CPU and zone (the kernel's has one per
//! migratetype); the batches moved are `pcp->batch` on every version
//! (5.14's nr_pcp_free() doubles the batch freed while a CPU only frees,
//! 6.x's nr_pcp_alloc() grows the batch allocated); per-CPU lists of
//! remote zones are not drained by vmstat's refresh (drain_zone_pages
//! after three seconds idle).

use crate::mm::floor::MmFloor;
use crate::mm::KswapdState;

impl MmFloor {
    /// nr_pcp_high(): pcp->high, or from 5.14 while kswapd reclaims the
    /// node (ZONE_RECLAIM_ACTIVE) at most 4 × batch, "to limit the number
    /// of pages that can be stored on pcp lists".
    pub(crate) fn nr_pcp_high(&self, node: usize) -> u64 {
        let pg = &self.mm.nodes[node];
        if !self.kt.k.cfg.mech.pcp_high_from_low_wmark {
            return pg.pcp_high;
        }
        let active = pg.kswapd.iter().any(|&k| self.mm.kswapds[k].state == KswapdState::Balancing);
        if active {
            pg.pcp_high.min(pg.pcp_batch << 2)
        } else {
            pg.pcp_high
        }
    }

    /// The pages `n` pages allocated on `cpu` from `node` take from the
    /// buddy lists: what the CPU's list lacks, in whole batches.
    pub(crate) fn pcp_refill(&self, node: usize, cpu: usize, n: u64) -> u64 {
        let pg = &self.mm.nodes[node];
        let batch = pg.pcp_batch.max(1);
        n.saturating_sub(pg.pcp[cpu]).div_ceil(batch) * batch
    }

    /// rmqueue_pcplist() of `n` pages on `cpu`: `refill` pages (from
    /// `pcp_refill`) move from the buddy lists to the list, then `n` leave
    /// it.
    pub(crate) fn pcp_alloc(&mut self, node: usize, cpu: usize, n: u64, refill: u64) {
        let pg = &mut self.mm.nodes[node];
        pg.free -= refill;
        pg.pcp[cpu] = pg.pcp[cpu] + refill - n;
    }

    /// The pages that freeing `n` pages on `cpu` would give back to the
    /// buddy lists (a batch each time the list reaches high).
    pub(crate) fn pcp_spill(&self, node: usize, cpu: usize, n: u64) -> u64 {
        let pg = &self.mm.nodes[node];
        let (high, batch) = (self.nr_pcp_high(node), pg.pcp_batch.max(1));
        let count = pg.pcp[cpu] + n;
        if count < high {
            0
        } else {
            ((count - high) / batch + 1) * batch
        }
    }

    /// free_unref_page_commit() of `n` pages on `cpu`: onto the list, the
    /// spill back to the buddy lists. Returns the pages given back.
    pub(crate) fn pcp_free(&mut self, node: usize, cpu: usize, n: u64) -> u64 {
        let spill = self.pcp_spill(node, cpu, n).min(self.mm.nodes[node].pcp[cpu] + n);
        let pg = &mut self.mm.nodes[node];
        pg.pcp[cpu] = pg.pcp[cpu] + n - spill;
        pg.free += spill;
        spill
    }

    /// Every CPU's lists back into the buddy lists (drain_pages() of each):
    /// the pages moved.
    pub(crate) fn pcp_drain_all(&mut self) -> u64 {
        let mut moved = 0;
        for pg in &mut self.mm.nodes {
            let n: u64 = pg.pcp.iter().sum();
            pg.pcp.iter_mut().for_each(|c| *c = 0);
            pg.free += n;
            moved += n;
        }
        moved
    }
}
