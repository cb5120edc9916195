//! What an interrupt leads to: the leaf type the event queue carries.

/// What an interrupt's handlers do when they are done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IrqAction {
    /// blk_mq_complete_request() of a block request (block/blk_mq.rs).
    BlkComplete(u32),
    /// The completion IPI of a request that completes on another CPU
    /// (rq_affinity): the hard interrupt of the device, whose handler
    /// sends it there.
    BlkIpi(u32),
}
