//! The events of the simulation: every state change happens in one of these.
//! Each names the room that handles it.

/// A task: its index in the simulation's task table (`sched/task.rs`).
pub type TaskId = usize;

/// What an interrupt's handlers do when they are done (`irq/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IrqAction {
    /// blk_mq_complete_request() of a block request (block/blk_mq.rs).
    BlkComplete(u32),
    /// The completion IPI of a request that completes on another CPU
    /// (rq_affinity): the hard interrupt of the device, whose handler
    /// sends it there.
    BlkIpi(u32),
}

/// Events of the simulation. Every state change happens in one of these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ev {
    /// A task group instance is created (its start delay elapsed).
    Start(TaskId),
    /// The scheduler tick on a CPU.
    Tick(usize),
    /// The current op of the task running on this CPU completes.
    OpDone(usize),
    /// A sleeping task's timer expires.
    Timeout(TaskId),
    /// The per-CPU stopper runs active_load_balance_cpu_stop.
    ActiveBalance(usize),
    /// An idle CPU kicked by nohz_balancer_kick runs nohz_idle_balance.
    NohzKick(usize),
    /// The RT bandwidth period timer (sched_rt_period_timer).
    RtPeriod,
    /// A task group's CFS bandwidth period timer (sched_cfs_period_timer).
    CfsPeriod(u32),
    /// A task group's CFS bandwidth slack timer (sched_cfs_slack_timer).
    CfsSlack(u32),
    /// A CPU takes the IPI of an asynchronous unthrottle
    /// (__cfsb_csd_unthrottle, 6.3+).
    CfsbCsd(u32),
    /// A deadline task's replenishment timer (dl_task_timer).
    DlTimer(TaskId),
    /// A CPU's fair server timer: its zero-laxity time or its next period
    /// (dl_server_timer).
    DlServerTimer(usize),
    /// A deadline task's 0-lag time (its inactive timer, GRUB).
    DlInactiveTimer(TaskId),
    /// The fair server's 0-lag time on this CPU.
    DlServerInactiveTimer(usize),
    /// A SCHED_FLAG_DL_OVERRUN task overran its runtime: SIGXCPU.
    DlOverrun(TaskId),
    /// RT_PUSH_IPI: the push irq_work runs on this CPU (rto_push_irq_work_func).
    RtoPushIpi(usize),
    /// A block device finished a request (block/blk_mq.rs).
    BlkDone(usize),
    /// The interrupt handlers on a CPU are done (irq/mod.rs).
    IrqDone(u32, IrqAction),
    /// A worker pool's idle timer (kthread/workqueue.rs): reap idle workers.
    PoolIdleTimer(usize),
    /// An mm sleep's timer (task, sleep number; mm/vmscan.rs mm_sleep).
    MmTimer(u32, u32),
    /// vm.kswapd_threads = "auto": the once-a-second re-evaluation of each
    /// node's running kswapd threads (mm/kswapd.rs kswapd_auto).
    MmAuto,
    /// mpstat sample boundary.
    Sample,
    /// End of the measurement.
    End,
}
