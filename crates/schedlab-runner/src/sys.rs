//! Thin wrappers over the syscalls the runner needs (libc only).

use std::io;

use schedlab_core::prio::Policy;

pub fn gettid() -> i32 {
    // SAFETY: gettid has no arguments and cannot fail.
    unsafe { libc::gettid() }
}

fn clock(id: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid timespec; the clocks used here always exist.
    unsafe { libc::clock_gettime(id, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CLOCK_MONOTONIC in ns.
pub fn now() -> u64 {
    clock(libc::CLOCK_MONOTONIC)
}

/// CPU time this thread has consumed (CLOCK_THREAD_CPUTIME_ID), ns.
pub fn thread_cpu() -> u64 {
    clock(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// Context switches of this thread so far (voluntary + involuntary), from
/// getrusage(RUSAGE_THREAD), which unlike the thread's CPU clock does not
/// update the scheduler's accounting (no update_curr) unless nohz_full
/// vtime accounting is active on the CPU.
pub fn thread_switches() -> u64 {
    // SAFETY: an all-zero rusage is valid; getrusage only writes it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: ru is a valid rusage.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    (ru.ru_nvcsw + ru.ru_nivcsw) as u64
}

/// Sleep until the absolute CLOCK_MONOTONIC instant `at`. Returns false when a
/// signal interrupted the sleep (the caller checks whether it must stop).
pub fn sleep_until(at: u64) -> bool {
    let ts = libc::timespec { tv_sec: (at / 1_000_000_000) as libc::time_t, tv_nsec: (at % 1_000_000_000) as _ };
    // SAFETY: ts is valid; the remaining-time pointer may be null with TIMER_ABSTIME.
    let r = unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut()) };
    r == 0
}

/// FUTEX_WAIT_PRIVATE / FUTEX_WAKE_PRIVATE on `word` (no timeout).
pub fn futex(word: &std::sync::atomic::AtomicU32, op: libc::c_int, val: u32) {
    // SAFETY: word is a live, aligned u32; a null timeout waits without one.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            op | libc::FUTEX_PRIVATE_FLAG,
            val,
            std::ptr::null::<libc::timespec>(),
        );
    }
}

pub fn sched_yield() {
    // SAFETY: no arguments.
    unsafe { libc::sched_yield() };
}

/// The CPUs this process may run on (sched_getaffinity), in order.
pub fn allowed_cpus() -> io::Result<Vec<usize>> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; the size matches.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok((0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &set)).collect())
    }
}

pub fn set_affinity(tid: i32, cpus: &[usize]) -> io::Result<()> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET stays in bounds
    // (host CPU numbers come from sched_getaffinity).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            libc::CPU_SET(c, &mut set);
        }
        if libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

pub fn policy_number(p: Policy) -> libc::c_int {
    match p {
        Policy::Normal => libc::SCHED_OTHER,
        Policy::Batch => libc::SCHED_BATCH,
        Policy::Idle => libc::SCHED_IDLE,
        Policy::Fifo => libc::SCHED_FIFO,
        Policy::Rr => libc::SCHED_RR,
        Policy::Deadline => SCHED_DEADLINE,
    }
}

/// SCHED_DEADLINE (include/uapi/linux/sched.h); libc has no constant.
pub const SCHED_DEADLINE: libc::c_int = 6;

/// struct sched_attr, SCHED_ATTR_SIZE_VER0 (48 bytes).
#[repr(C)]
struct SchedAttr {
    size: u32,
    sched_policy: u32,
    sched_flags: u64,
    sched_nice: i32,
    sched_priority: u32,
    sched_runtime: u64,
    sched_deadline: u64,
    sched_period: u64,
}

/// sched_setattr(tid, SCHED_DEADLINE with `dl`) (glibc has no wrapper).
pub fn set_deadline(tid: i32, dl: &schedlab_core::sched::task::DlAttr) -> io::Result<()> {
    let attr = SchedAttr {
        size: std::mem::size_of::<SchedAttr>() as u32,
        sched_policy: SCHED_DEADLINE as u32,
        sched_flags: dl.flags,
        sched_nice: 0,
        sched_priority: 0,
        sched_runtime: dl.runtime,
        sched_deadline: dl.deadline,
        sched_period: dl.period,
    };
    // SAFETY: attr is a valid sched_attr of the size it declares.
    if unsafe { libc::syscall(libc::SYS_sched_setattr, tid, &attr as *const SchedAttr, 0u32) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// sched_setscheduler on one thread (the syscall takes a tid).
pub fn set_policy(tid: i32, policy: Policy, rt_priority: u32) -> io::Result<()> {
    let param = libc::sched_param { sched_priority: rt_priority as libc::c_int };
    // SAFETY: param is a valid sched_param.
    if unsafe { libc::sched_setscheduler(tid, policy_number(policy), &param) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// setpriority(PRIO_PROCESS, tid, nice): per thread on Linux.
pub fn set_nice(tid: i32, nice: i32) -> io::Result<()> {
    // SAFETY: plain integer arguments.
    if unsafe { libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, nice) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

extern "C" fn on_wake_signal(_: libc::c_int) {}

/// The signal that interrupts a thread's clock_nanosleep at the end of the run.
pub const WAKE_SIGNAL: libc::c_int = libc::SIGUSR1;

/// Install a no-op handler without SA_RESTART, so sleeps return EINTR.
pub fn install_wake_handler() -> io::Result<()> {
    // SAFETY: a zeroed sigaction with a valid handler and an empty mask.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_wake_signal as *const () as libc::sighandler_t;
        libc::sigemptyset(&mut sa.sa_mask);
        sa.sa_flags = 0;
        if libc::sigaction(WAKE_SIGNAL, &sa, std::ptr::null_mut()) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Send the wake signal to one thread of this process.
pub fn kick(tid: i32) {
    // SAFETY: tgkill with our own pid; a thread that has exited gives ESRCH, ignored.
    unsafe {
        libc::syscall(libc::SYS_tgkill, libc::getpid(), tid, WAKE_SIGNAL);
    }
}

pub struct Uname {
    pub release: String,
    pub machine: String,
    pub version: String,
}

pub fn uname() -> Uname {
    // SAFETY: utsname is plain data; uname fills it with NUL-terminated strings.
    unsafe {
        let mut u: libc::utsname = std::mem::zeroed();
        libc::uname(&mut u);
        let s = |f: &[libc::c_char]| std::ffi::CStr::from_ptr(f.as_ptr()).to_string_lossy().into_owned();
        Uname { release: s(&u.release), machine: s(&u.machine), version: s(&u.version) }
    }
}

pub fn online_cpus() -> usize {
    // SAFETY: sysconf with a valid name.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    n.max(1) as usize
}

/// USER_HZ: the unit of /proc/stat.
pub fn clock_ticks() -> u64 {
    // SAFETY: sysconf with a valid name.
    let n = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if n > 0 {
        n as u64
    } else {
        100
    }
}

/// The directory is on a tmpfs or ramfs (statfs f_type TMPFS_MAGIC,
/// RAMFS_MAGIC): its pages live in memory only.
pub fn is_memory_fs(dir: &std::path::Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else { return false };
    // SAFETY: statfs writes into the zeroed struct it is given; the path is a
    // NUL-terminated string that outlives the call.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return false;
    }
    const TMPFS_MAGIC: i64 = 0x0102_1994;
    const RAMFS_MAGIC: i64 = 0x8584_58f6;
    matches!(st.f_type as i64, TMPFS_MAGIC | RAMFS_MAGIC)
}
