//! The pages of files that are read again: page-cache hits,
//! mark_page_accessed()'s activation (mm/swap.c), workingset detection
//! (mm/workingset.c, 3.15+: a shadow entry left by each evicted page,
//! whose refault distance decides whether the page comes back active) and
//! shrink_active_list()'s deactivation when the inactive list is low
//! (mm/vmscan.c).
//!
//! Only a `read` op with `file_size` is tracked page by page: each task
//! running it reads its own file of that size from the start again after
//! the end. Every other page-cache page (the start's page cache, streaming
//! reads, writes) is counted as before; with tracking on, the inactive
//! file list keeps all of them in order as runs, so reclaim takes the
//! oldest first whatever they are.
//!
//! Deviation: a run's pages leave the page cache when reclaim isolates
//! them, not when shrink_page_list frees them; a page's position on the
//! active list is not refreshed when it is referenced again there (the
//! kernel rotates referenced executable pages only); the shadow shrinker
//! (count_shadow_nodes, which frees shadow entries beyond an eighth of the
//! page cache's radix-tree nodes) is not modelled.

use std::collections::VecDeque;

use crate::mm::floor::MmFloor;
use crate::mm::{Lru, PAGE_SIZE};
use crate::sched::task::TaskId;

/// No tracked file: a run of counted pages.
pub const UNTRACKED: u32 = u32::MAX;
/// The most tracked pages a run may hold: 16 Mi pages (64 GiB of files,
/// 256 MiB of page states).
pub const MAX_TRACKED_PAGES: u64 = 1 << 24;

/// A page of a tracked file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PageState {
    /// Never read, or evicted without a shadow entry.
    #[default]
    Absent,
    /// In the page cache on `node`'s inactive (`active` false) or active
    /// list, in the run stamped `stamp`; PG_referenced.
    Cached { node: u8, active: bool, referenced: bool, stamp: u32 },
    /// Evicted from `node` when its nonresident age was `age`.
    Shadow { node: u8, age: u64 },
}

/// Pages of one list in the order they were added: `len` pages of `file`
/// from page `start`, valid while each still carries `stamp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    pub file: u32,
    pub start: u64,
    pub len: u64,
    pub stamp: u32,
}

/// A tracked file: its pages and where its reader is.
#[derive(Debug, Clone, Default)]
pub struct TrackedFile {
    pub pages: Vec<PageState>,
    /// The next page to read.
    pub next: u64,
}

/// The tracked page cache.
#[derive(Debug, Clone, Default)]
pub struct Workingset {
    pub on: bool,
    pub files: Vec<TrackedFile>,
    /// (task, read op) -> its file.
    pub file_of: std::collections::BTreeMap<(TaskId, usize), u32>,
    /// Per node: the inactive and active file lists, oldest first.
    pub lists: Vec<[VecDeque<Run>; 2]>,
    /// Per node: lruvec->nonresident_age (4.16's inactive_age): evictions
    /// and activations.
    pub age: Vec<u64>,
    /// Per node: WORKINGSET_ACTIVATE, and its value at the last
    /// snapshot_refaults() (lruvec->refaults).
    pub activations: Vec<u64>,
    pub snapshot: Vec<u64>,
    pub next_stamp: u32,
    pub tracked_pages: u64,
    /// The next lru_cache_add is a tracked insertion (no untracked run).
    pub inserting: bool,
}

fn list_index(active: bool) -> usize {
    usize::from(active)
}

impl MmFloor {
    /// Boot: tracking is on when a read op has `file_size`; the inactive
    /// file list starts as one untracked run per node.
    pub(crate) fn ws_init(&mut self) {
        if !self.mm.read_ops.iter().any(|op| op.file_size.is_some()) {
            return;
        }
        let nodes = self.mm.nodes.len();
        let ws = &mut self.mm.ws;
        ws.on = true;
        ws.lists = (0..nodes).map(|_| [VecDeque::new(), VecDeque::new()]).collect();
        ws.age = vec![0; nodes];
        ws.activations = vec![0; nodes];
        ws.snapshot = vec![0; nodes];
        for node in 0..nodes {
            let n = self.mm.nodes[node].lru[Lru::InactiveFile as usize];
            self.ws_push_untracked(node, n);
        }
    }

    /// Counted pages added to `node`'s inactive file list (lru_cache_add).
    pub(crate) fn ws_push_untracked(&mut self, node: usize, n: u64) {
        if n == 0 {
            return;
        }
        let q = &mut self.mm.ws.lists[node][0];
        match q.back_mut() {
            Some(r) if r.file == UNTRACKED => r.len += n,
            _ => q.push_back(Run { file: UNTRACKED, start: 0, len: n, stamp: 0 }),
        }
    }

    /// The file `tid` reads with op `idx` (created at its first read).
    /// None when the tracked pages would pass MAX_TRACKED_PAGES (the run
    /// stops with an error).
    pub(crate) fn ws_file(&mut self, tid: TaskId, idx: usize) -> Option<u32> {
        if let Some(&f) = self.mm.ws.file_of.get(&(tid, idx)) {
            return Some(f);
        }
        let pages = self.mm.read_ops[idx].file_size.unwrap_or(0).div_ceil(PAGE_SIZE).max(1);
        if self.mm.ws.tracked_pages + pages > MAX_TRACKED_PAGES {
            self.fatal = Some(crate::error::SimError::NotModelled {
                at: crate::error::Location { file: self.source.to_string(), key: "read.file_size".into() },
                what: format!(
                    "files read again of more than {} GiB in all (each task reading a `file_size` op has its own file)",
                    (MAX_TRACKED_PAGES * PAGE_SIZE) >> 30
                ),
            });
            return None;
        }
        self.mm.ws.tracked_pages += pages;
        let f = self.mm.ws.files.len() as u32;
        self.mm.ws.files.push(TrackedFile { pages: vec![PageState::Absent; pages as usize], next: 0 });
        self.mm.ws.file_of.insert((tid, idx), f);
        Some(f)
    }

    /// The pages of [start, start + n) of `file` that are not in the page
    /// cache.
    pub(crate) fn ws_missing(&self, file: u32, start: u64, n: u64) -> u64 {
        let pages = &self.mm.ws.files[file as usize].pages[start as usize..(start + n) as usize];
        pages.iter().filter(|p| !matches!(p, PageState::Cached { .. })).count() as u64
    }

    /// The workingset's size that a refault distance is compared with:
    /// the active file list, and from 5.9 with swap the anonymous lists.
    fn workingset_size(&self, node: usize) -> u64 {
        let pg = &self.mm.nodes[node];
        let mut size = pg.lru[Lru::ActiveFile as usize];
        if self.kt.k.cfg.mech.workingset_anon && self.mm.zswap {
            size += pg.lru[Lru::ActiveAnon as usize] + pg.lru[Lru::InactiveAnon as usize];
        }
        size
    }

    /// add_to_page_cache_lru() of up to `m` of the missing pages of
    /// [start, start + n) of `file` on `node`: a page with a shadow entry
    /// refaults (workingset_refault) and comes back on the active list when
    /// its refault distance is within the workingset, else on the inactive
    /// list. Returns the pages added to the active list.
    pub(crate) fn ws_insert(&mut self, file: u32, start: u64, n: u64, m: u64, node: usize) -> u64 {
        let mut left = m;
        let mut activated = 0;
        let mut run = None;
        for p in start..start + n {
            if left == 0 {
                break;
            }
            let st = self.mm.ws.files[file as usize].pages[p as usize];
            let active = match st {
                PageState::Cached { .. } => continue,
                PageState::Absent => false,
                PageState::Shadow { node: ev_node, age } => {
                    self.mm.ev.workingset_refault += 1;
                    // Against the lists of the node it was evicted from.
                    let ev_node = ev_node as usize;
                    let distance = self.mm.ws.age[ev_node].wrapping_sub(age);
                    distance <= self.workingset_size(ev_node)
                }
            };
            left -= 1;
            if active {
                activated += 1;
                self.mm.ev.workingset_activate += 1;
                self.mm.ws.activations[node] += 1;
                // workingset_activation(): the age moves with activations.
                self.mm.ws.age[node] += 1;
            }
            self.ws_place(&mut run, file, p, node, active);
        }
        self.ws_queue(run);
        // The counts: lru_cache_add put all of them on the inactive list.
        let pg = &mut self.mm.nodes[node];
        pg.lru[Lru::InactiveFile as usize] -= activated;
        pg.lru[Lru::ActiveFile as usize] += activated;
        activated
    }

    fn ws_stamp(&mut self) -> u32 {
        self.mm.ws.next_stamp = self.mm.ws.next_stamp.wrapping_add(1);
        self.mm.ws.next_stamp
    }

    /// Put page `p` of `file` at the head of `node`'s list `active`,
    /// unreferenced: in the open run `run` when it continues it, else in
    /// a new one (the open one is queued).
    fn ws_place(&mut self, run: &mut Option<(usize, bool, Run)>, file: u32, p: u64, node: usize, active: bool) {
        let extend =
            matches!(run, Some((nd, a, r)) if *nd == node && *a == active && r.file == file && r.start + r.len == p);
        if !extend {
            self.ws_queue(run.take());
            let stamp = self.ws_stamp();
            *run = Some((node, active, Run { file, start: p, len: 0, stamp }));
        }
        let (_, _, r) = run.as_mut().expect("a run");
        r.len += 1;
        self.mm.ws.files[file as usize].pages[p as usize] =
            PageState::Cached { node: node as u8, active, referenced: false, stamp: r.stamp };
    }

    /// Queue a finished run on its list.
    fn ws_queue(&mut self, run: Option<(usize, bool, Run)>) {
        if let Some((node, active, r)) = run {
            self.mm.ws.lists[node][list_index(active)].push_back(r);
        }
    }

    /// mark_page_accessed() of the pages of [start, start + n) of `file`
    /// copied to the reader: an inactive page is referenced, an inactive
    /// referenced page is activated (to the active list's head;
    /// workingset_activation), an active page referenced. Returns the
    /// pages activated.
    pub(crate) fn ws_mark_accessed(&mut self, file: u32, start: u64, n: u64) -> u64 {
        let mut activated = 0;
        let mut run = None;
        for p in start..start + n {
            let st = self.mm.ws.files[file as usize].pages[p as usize];
            let PageState::Cached { node: nd, active, referenced, stamp } = st else { continue };
            if active || !referenced {
                self.mm.ws.files[file as usize].pages[p as usize] =
                    PageState::Cached { node: nd, active, referenced: true, stamp };
                continue;
            }
            let node = nd as usize;
            // activate_page(): off the inactive list, onto the active one.
            activated += 1;
            self.mm.ev.pgactivate += 1;
            self.mm.ws.age[node] += 1;
            let pg = &mut self.mm.nodes[node];
            pg.lru[Lru::InactiveFile as usize] -= 1;
            pg.lru[Lru::ActiveFile as usize] += 1;
            self.ws_place(&mut run, file, p, node, true);
        }
        self.ws_queue(run);
        activated
    }

    /// Take `n` pages off the tail (oldest end) of `node`'s list `active`:
    /// the runs' pages that are still there, the counted pages of untracked
    /// runs. `f` is told of each tracked page taken.
    fn ws_take(&mut self, node: usize, active: bool, n: u64, mut f: impl FnMut(&mut Self, u32, u64)) {
        let mut left = n;
        let li = list_index(active);
        while left > 0 {
            let Some(mut r) = self.mm.ws.lists[node][li].pop_front() else { break };
            if r.file == UNTRACKED {
                let take = r.len.min(left);
                left -= take;
                if take < r.len {
                    r.len -= take;
                    self.mm.ws.lists[node][li].push_front(r);
                }
                continue;
            }
            let mut p = r.start;
            while p < r.start + r.len && left > 0 {
                let here = matches!(self.mm.ws.files[r.file as usize].pages[p as usize],
                    PageState::Cached { stamp, active: a, .. } if stamp == r.stamp && a == active);
                if here {
                    f(self, r.file, p);
                    left -= 1;
                }
                p += 1;
            }
            if p < r.start + r.len {
                r.len -= p - r.start;
                r.start = p;
                self.mm.ws.lists[node][li].push_front(r);
            }
        }
    }

    /// Reclaim isolates `n` pages of `node`'s inactive file list: they
    /// leave the page cache, each tracked page leaving a shadow entry when
    /// workingset detection is on; every eviction ages the node.
    pub(crate) fn ws_evict(&mut self, node: usize, n: u64) {
        let shadow = self.mm.cfg.workingset;
        let base = self.mm.ws.age[node];
        let mut k = 0;
        self.ws_take(node, false, n, |s, file, p| {
            k += 1;
            s.mm.ws.files[file as usize].pages[p as usize] =
                if shadow { PageState::Shadow { node: node as u8, age: base + k } } else { PageState::Absent };
        });
        self.mm.ws.age[node] += n;
    }

    /// shrink_active_list() of `n` pages of `node`'s active file list: the
    /// oldest go to the inactive list's head, unreferenced (an unmapped
    /// page-cache page has no referenced PTE to keep it active).
    pub(crate) fn ws_deactivate(&mut self, node: usize, n: u64) -> u64 {
        let mut moved: Vec<(u32, u64)> = Vec::new();
        self.ws_take(node, true, n, |_, file, p| moved.push((file, p)));
        let mut run = None;
        for &(file, p) in &moved {
            self.ws_place(&mut run, file, p, node, false);
        }
        self.ws_queue(run);
        let k = moved.len() as u64;
        let pg = &mut self.mm.nodes[node];
        pg.lru[Lru::ActiveFile as usize] -= k;
        pg.lru[Lru::InactiveFile as usize] += k;
        self.mm.ev.pgdeactivate += k;
        k
    }

    /// inactive_list_is_low() for the file lists: 1:1 before 4.10; then
    /// inactive × int_sqrt(10 × GiB of both) < active; from 4.12 a ratio
    /// of 0 (any active page is too many) while refaults have activated
    /// pages since the last snapshot ("a new workingset is being
    /// established").
    pub(crate) fn inactive_file_is_low(&self, node: usize) -> bool {
        let pg = &self.mm.nodes[node];
        let (inactive, active) = (pg.lru[Lru::InactiveFile as usize], pg.lru[Lru::ActiveFile as usize]);
        let mech = &self.kt.k.cfg.mech;
        if !mech.inactive_file_ratio {
            return inactive < active;
        }
        let refaulting = mech.inactive_refault_reset && self.mm.ws.activations[node] != self.mm.ws.snapshot[node];
        let ratio = if refaulting {
            0
        } else {
            let gb = ((inactive + active) * PAGE_SIZE) >> 30;
            if gb > 0 {
                crate::mm::watermark::int_sqrt(10 * gb)
            } else {
                1
            }
        };
        inactive * ratio < active
    }

    /// snapshot_refaults(): at the end of a direct reclaim or of kswapd's
    /// balance_pgdat.
    pub(crate) fn ws_snapshot_refaults(&mut self) {
        if self.mm.ws.on {
            self.mm.ws.snapshot.clone_from(&self.mm.ws.activations);
        }
    }
}
