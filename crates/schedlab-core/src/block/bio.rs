//! The request operations and end_io kinds, the leaf types a task program
//! names (block/mod.rs has the rest).

/// REQ_OP_*: what a request asks of the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BioOp {
    Read,
    Write,
    /// A cache flush (REQ_PREFLUSH): fsync's barrier.
    Flush,
}

impl BioOp {
    pub fn name(self) -> &'static str {
        match self {
            BioOp::Read => "read",
            BioOp::Write => "write",
            BioOp::Flush => "flush",
        }
    }
}

/// What the bio's end_io does when the request completes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndIo {
    /// Wake the task waiting for it (submit_bio_wait, or a filesystem's
    /// end_io that wakes the waiter itself).
    Wake,
    /// Punt to a workqueue on the completing CPU (xlog_bio_end_io queues
    /// xlog_ioend_work on xfs-log): a work item of `program` that wakes the
    /// waiter when it is done.
    Work { wq: usize, program: usize },
    /// end_page_writeback() of the pages (mm/fs_writeback.rs): the
    /// completion is left in `Block::wb_done` for the memory model.
    Writeback,
}
