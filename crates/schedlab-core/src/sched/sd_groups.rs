//! The sched groups a level of sched domains shares (build_sched_groups,
//! build_overlap_sched_groups make a group once and point every domain of
//! the level that has it at the same one), found by what they are made of.

/// What a group is made of, for sharing groups between domains of a level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum GroupSrc {
    /// The span of a (raw) child domain.
    Child(usize),
    /// A single CPU (lowest level).
    Cpu(usize),
    /// A node (2.6 ALLNODES groups).
    Node(usize),
    /// The sibling's own span (overlap level without a child).
    Span(usize),
}

/// The groups made so far, by level and source: a dense table per level
/// and kind of source, grown as ids appear (a BTreeMap of (level, source)
/// cost ~900 instructions a lookup, 15 % of building 4,096 CPUs' domains).
#[derive(Default)]
pub(super) struct GroupIndex {
    by_level: Vec<[Vec<usize>; 4]>,
}

impl GroupIndex {
    const NONE: usize = usize::MAX;

    fn slot(src: GroupSrc) -> (usize, usize) {
        match src {
            GroupSrc::Child(r) => (0, r),
            GroupSrc::Cpu(c) => (1, c),
            GroupSrc::Node(n) => (2, n),
            GroupSrc::Span(s) => (3, s),
        }
    }

    pub(super) fn get(&self, li: usize, src: GroupSrc) -> Option<usize> {
        let (kind, id) = Self::slot(src);
        let g = *self.by_level.get(li)?[kind].get(id)?;
        (g != Self::NONE).then_some(g)
    }

    pub(super) fn insert(&mut self, li: usize, src: GroupSrc, g: usize) {
        let (kind, id) = Self::slot(src);
        if self.by_level.len() <= li {
            self.by_level.resize_with(li + 1, Default::default);
        }
        let ids = &mut self.by_level[li][kind];
        if ids.len() <= id {
            ids.resize(id + 1, Self::NONE);
        }
        ids[id] = g;
    }
}
