//! `[kernel.vm]` (the vm sysctls and P3's kswapd_threads) and `[memory]`
//! (the page cache when the run starts), checked.

use serde::Deserialize;

use crate::error::{Result, SimError};
use crate::kernel::mechanisms::Mechanisms;
use crate::kernel::version::KernelVersion;
use crate::prio::{is_nice, nice_range};

/// vm.kswapd_threads: P3's sysctl (1..16 threads per node), or `auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KswapdThreads {
    Fixed(u32),
    /// schedlab's policy for the reviewers' question (not a kernel's): 16
    /// threads exist per node, and once a second the number allowed to run
    /// is re-evaluated as one per `idle_per_thread` idle CPUs of the node
    /// over the last second (at least 1, at most `max`).
    Auto {
        idle_per_thread: u32,
        max: u32,
    },
}

/// The page cache when the run starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MemoryStart {
    /// Free memory (after `echo 3 > drop_caches`).
    #[default]
    Empty,
    /// Every node holds clean, once-read file pages down to its high
    /// watermark: a machine that has been streaming files for a while.
    PageCacheFull,
}

#[derive(Debug, Clone, PartialEq)]
pub struct VmConfig {
    /// vm.min_free_kbytes; None: the version's default formula.
    pub min_free_kbytes: Option<u64>,
    pub watermark_scale_factor: u64,
    pub kswapd_threads: KswapdThreads,
    pub kswapd_nice: i32,
    /// Shadow entries on eviction (mm/workingset.c, 3.15+); P3's test patch
    /// turns them off.
    pub workingset: bool,
    pub start: MemoryStart,
    /// vm.dirty_ratio and the other dirty-page sysctls (mm/page_writeback.rs).
    pub dirty: DirtyConfig,
}

impl Default for VmConfig {
    fn default() -> Self {
        VmConfig {
            min_free_kbytes: None,
            watermark_scale_factor: 10,
            kswapd_threads: KswapdThreads::Fixed(1),
            kswapd_nice: 0,
            workingset: true,
            start: MemoryStart::Empty,
            dirty: Default::default(),
        }
    }
}

/// vm.dirty_* (the `[kernel.vm]` keys of the same names; mm/page_writeback.rs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirtyConfig {
    pub dirty_ratio: u64,
    pub dirty_background_ratio: u64,
    pub dirty_bytes: Option<u64>,
    pub dirty_background_bytes: Option<u64>,
    /// vm.dirty_expire_centisecs: a page dirty this long is written by the
    /// periodic (kupdate) writeback.
    pub dirty_expire_cs: u64,
    /// vm.dirty_writeback_centisecs: the flusher's period (0: none).
    pub dirty_writeback_cs: u64,
}

impl Default for DirtyConfig {
    /// The defaults of 2.6.22 on (dirty_ratio 20, background 10, 30 s, 5 s).
    fn default() -> Self {
        DirtyConfig {
            dirty_ratio: 20,
            dirty_background_ratio: 10,
            dirty_bytes: None,
            dirty_background_bytes: None,
            dirty_expire_cs: 3000,
            dirty_writeback_cs: 500,
        }
    }
}

/// `[kernel.vm]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawVm {
    pub(crate) min_free_kbytes: Option<i64>,
    pub(crate) watermark_scale_factor: Option<i64>,
    pub(crate) kswapd_threads: Option<toml::Value>,
    pub(crate) kswapd_nice: Option<i64>,
    pub(crate) workingset: Option<bool>,
    pub(crate) dirty_ratio: Option<i64>,
    pub(crate) dirty_background_ratio: Option<i64>,
    pub(crate) dirty_bytes: Option<i64>,
    pub(crate) dirty_background_bytes: Option<i64>,
    pub(crate) dirty_expire_centisecs: Option<i64>,
    pub(crate) dirty_writeback_centisecs: Option<i64>,
}

/// `[memory]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawMemory {
    pub(crate) page_cache: Option<String>,
    pub(crate) swap: Option<String>,
}

pub(crate) fn compile_vm(raw: &RawVm, v: KernelVersion, mech: &Mechanisms, file: &str) -> Result<VmConfig> {
    let mut c = VmConfig { workingset: mech.workingset, ..Default::default() };
    let k = |s: &str| format!("kernel.vm.{s}");
    if let Some(n) = raw.min_free_kbytes {
        if !(128..=(1 << 30)).contains(&n) {
            return Err(SimError::bad_value(file, &k("min_free_kbytes"), format!("{n}"), "128 .. 1073741824 (KiB)"));
        }
        c.min_free_kbytes = Some(n as u64);
    }
    if let Some(n) = raw.watermark_scale_factor {
        if !mech.watermark_scale_factor {
            return Err(SimError::bad_value(
                file,
                &k("watermark_scale_factor"),
                format!("kernel {v} has no watermark_scale_factor"),
                "kernel 4.6 or later",
            ));
        }
        let max = mech.watermark_scale_factor_max as i64;
        if !(1..=max).contains(&n) {
            return Err(SimError::bad_value(file, &k("watermark_scale_factor"), format!("{n}"), format!("1..{max}")));
        }
        c.watermark_scale_factor = n as u64;
    }
    if let Some(t) = &raw.kswapd_threads {
        let accepted = "1..16 (P3's sysctl) or \"auto\" or { auto = IDLE_CPUS_PER_THREAD, max = N }";
        c.kswapd_threads = match t {
            toml::Value::Integer(n) if (1..=16).contains(n) => KswapdThreads::Fixed(*n as u32),
            toml::Value::String(s) if s == "auto" => KswapdThreads::Auto { idle_per_thread: 4, max: 16 },
            toml::Value::Table(t) => {
                let get = |key: &str, lo: i64, hi: i64, def: i64| -> Result<u32> {
                    match t.get(key) {
                        None => Ok(def as u32),
                        Some(toml::Value::Integer(n)) if (lo..=hi).contains(n) => Ok(*n as u32),
                        Some(x) => Err(SimError::bad_value(
                            file,
                            &format!("{}.{key}", k("kswapd_threads")),
                            format!("{x}"),
                            format!("{lo}..{hi}"),
                        )),
                    }
                };
                if let Some(bad) = t.keys().find(|x| *x != "auto" && *x != "max") {
                    return Err(SimError::UnknownKey {
                        at: crate::error::Location { file: file.into(), key: format!("{}.{bad}", k("kswapd_threads")) },
                        accepted: "auto, max".into(),
                    });
                }
                KswapdThreads::Auto { idle_per_thread: get("auto", 1, 1024, 4)?, max: get("max", 1, 16, 16)? }
            }
            x => return Err(SimError::bad_value(file, &k("kswapd_threads"), format!("{x}"), accepted)),
        };
    }
    if let Some(n) = raw.kswapd_nice {
        if !is_nice(n) {
            return Err(SimError::bad_value(file, &k("kswapd_nice"), format!("{n}"), nice_range()));
        }
        c.kswapd_nice = n as i32;
    } else if mech.kthreadd_nice_minus_5 {
        // kthreadd made every kthread nice -5 in 2.6.22 .. 2.6.31
        // (LINUX-FACTS §7.3).
        c.kswapd_nice = -5;
    }
    if let Some(w) = raw.workingset {
        if w && !mech.workingset {
            return Err(SimError::bad_value(
                file,
                &k("workingset"),
                format!("kernel {v} has no shadow entries"),
                "false, or kernel 3.15 or later",
            ));
        }
        c.workingset = w;
    }
    compile_dirty(raw, &mut c.dirty, file)?;
    Ok(c)
}

/// vm.dirty_*: the kernel's limits (kernel/sysctl.c: ratios 0..100,
/// dirty_bytes at least two pages); a ratio and its bytes form are one
/// setting (writing either clears the other), so a scenario gives one.
fn compile_dirty(raw: &RawVm, d: &mut DirtyConfig, file: &str) -> Result<()> {
    let k = |s: &str| format!("kernel.vm.{s}");
    let ratio = |v: Option<i64>, key: &str| -> Result<Option<u64>> {
        match v {
            None => Ok(None),
            Some(n) if (0..=100).contains(&n) => Ok(Some(n as u64)),
            Some(n) => Err(SimError::bad_value(file, &k(key), format!("{n}"), "0..100 (percent)")),
        }
    };
    let bytes = |v: Option<i64>, key: &str, min: i64| -> Result<Option<u64>> {
        match v {
            None => Ok(None),
            Some(n) if n >= min => Ok(Some(n as u64)),
            Some(n) => Err(SimError::bad_value(file, &k(key), format!("{n}"), format!("{min} or more (bytes)"))),
        }
    };
    let both = |a: &str, b: &str| {
        SimError::bad_value(
            file,
            &k(b),
            format!("{a} and {b} are both set: the kernel keeps one (writing either clears the other)"),
            format!("one of {a}, {b}"),
        )
    };
    let page = 4096;
    if raw.dirty_ratio.is_some() && raw.dirty_bytes.is_some() {
        return Err(both("dirty_ratio", "dirty_bytes"));
    }
    if raw.dirty_background_ratio.is_some() && raw.dirty_background_bytes.is_some() {
        return Err(both("dirty_background_ratio", "dirty_background_bytes"));
    }
    if let Some(r) = ratio(raw.dirty_ratio, "dirty_ratio")? {
        d.dirty_ratio = r;
    }
    if let Some(r) = ratio(raw.dirty_background_ratio, "dirty_background_ratio")? {
        d.dirty_background_ratio = r;
    }
    if let Some(b) = bytes(raw.dirty_bytes, "dirty_bytes", 2 * page)? {
        d.dirty_bytes = Some(b);
        d.dirty_ratio = 0;
    }
    if let Some(b) = bytes(raw.dirty_background_bytes, "dirty_background_bytes", 1)? {
        d.dirty_background_bytes = Some(b);
        d.dirty_background_ratio = 0;
    }
    let cs = |v: Option<i64>, key: &str, def: u64| -> Result<u64> {
        match v {
            None => Ok(def),
            Some(n) if (0..=i32::MAX as i64).contains(&n) => Ok(n as u64),
            Some(n) => Err(SimError::bad_value(file, &k(key), format!("{n}"), "0..2147483647 (centiseconds)")),
        }
    };
    d.dirty_expire_cs = cs(raw.dirty_expire_centisecs, "dirty_expire_centisecs", d.dirty_expire_cs)?;
    d.dirty_writeback_cs = cs(raw.dirty_writeback_centisecs, "dirty_writeback_centisecs", d.dirty_writeback_cs)?;
    Ok(())
}

/// `[memory]`: the page cache when the run starts.
pub(crate) fn compile_memory(m: &RawMemory, file: &str) -> Result<MemoryStart> {
    Ok(match m.page_cache.as_deref() {
        None | Some("empty") => MemoryStart::Empty,
        Some("full") => MemoryStart::PageCacheFull,
        Some(s) => return Err(SimError::bad_value(file, "memory.page_cache", format!("\"{s}\""), "empty, full")),
    })
}

/// `[memory] swap`: "none" (the default: anonymous memory cannot be
/// reclaimed) or "zswap" (swapped pages are compressed into zswap's pool;
/// 3.11+). A swap device without zswap is not modelled.
pub(crate) fn compile_swap(m: &RawMemory, v: KernelVersion, mech: &Mechanisms, file: &str) -> Result<bool> {
    match m.swap.as_deref() {
        None | Some("none") => Ok(false),
        Some("zswap") if mech.zswap => Ok(true),
        Some("zswap") => {
            Err(SimError::bad_value(file, "memory.swap", format!("kernel {v} has no zswap"), "kernel 3.11 or later"))
        }
        Some("disk") => Err(SimError::not_modelled(
            file,
            "memory.swap",
            "swap to a block device (writeback of anonymous pages) is not modelled; \"zswap\" is",
        )),
        Some(s) => Err(SimError::bad_value(file, "memory.swap", format!("\"{s}\""), "none, zswap")),
    }
}
