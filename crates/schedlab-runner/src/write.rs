//! The `write` op for real: buffered write(2)s of a file in the scratch
//! directory (`--scratch DIR`, on the disk the scenario names), as dd
//! writes one; the kernel's own dirty throttle and flusher do the rest.
//! A writer's file is rotated every FILE_CAP bytes, and its files are
//! deleted when it ends, not during the run: deleting a file inside the
//! window puts its truncate (and the filesystem's discards, with
//! `-o discard`) into the writer's time. Every write dirties new pages, as
//! the model's do; the runner refuses a scratch directory with less than
//! MIN_FREE free. The dirty
//! sysctls of the scenario's `[kernel.vm]` are set for the run and put
//! back after it.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use schedlab_core::mm::page_writeback::DirtyConfig;

/// Bytes written to one file before the next.
const FILE_CAP: u64 = 1 << 30;
/// The free space a run's writes need in the scratch directory (a 1 GB/s
/// disk over a 30 s run).
pub const MIN_FREE: u64 = 32 << 30;

/// Free bytes in `dir` (statvfs f_bavail x f_frsize).
pub fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs writes into the zeroed struct; the path is a
    // NUL-terminated string that outlives the call.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    (unsafe { libc::statvfs(c.as_ptr(), &mut st) } == 0).then(|| st.f_bavail as u64 * st.f_frsize as u64)
}

/// One thread's writes.
pub struct Writer {
    dir: PathBuf,
    tag: String,
    n: u64,
    file: Option<File>,
    off: u64,
    buf: Vec<u8>,
}

impl Writer {
    pub fn new(dir: &Path, tag: String) -> Writer {
        Writer { dir: dir.to_path_buf(), tag, n: 0, file: None, off: 0, buf: Vec::new() }
    }

    fn path(&self, n: u64) -> PathBuf {
        self.dir.join(format!("schedlab-write-{}-{n}", self.tag))
    }

    /// write(2) `bytes` (in one call, as dd's bs), rotating the file.
    pub fn write(&mut self, bytes: u64) -> std::io::Result<()> {
        if self.file.is_none() || self.off >= FILE_CAP {
            if self.file.is_some() {
                self.n += 1;
            }
            self.file = Some(File::create(self.path(self.n))?);
            self.off = 0;
        }
        if self.buf.len() as u64 != bytes {
            self.buf = vec![0u8; bytes as usize];
        }
        let f = self.file.as_mut().expect("opened above");
        f.write_all(&self.buf)?;
        self.off += bytes;
        Ok(())
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.file = None;
        for n in 0..=self.n {
            let _ = std::fs::remove_file(self.path(n));
        }
    }
}

/// The vm sysctls a run sets, and what they were.
pub struct VmSysctls {
    saved: Vec<(String, String)>,
}

impl VmSysctls {
    /// Set the scenario's dirty limits (the ratio or the bytes form, as it
    /// gives them) and periods in /proc/sys/vm.
    pub fn apply(d: &DirtyConfig) -> Result<VmSysctls, String> {
        let mut want: Vec<(&str, u64)> = Vec::new();
        match d.dirty_bytes {
            Some(b) => want.push(("dirty_bytes", b)),
            None => want.push(("dirty_ratio", d.dirty_ratio)),
        }
        match d.dirty_background_bytes {
            Some(b) => want.push(("dirty_background_bytes", b)),
            None => want.push(("dirty_background_ratio", d.dirty_background_ratio)),
        }
        want.push(("dirty_expire_centisecs", d.dirty_expire_cs));
        want.push(("dirty_writeback_centisecs", d.dirty_writeback_cs));
        let mut s = VmSysctls { saved: Vec::new() };
        // The bytes and ratio forms clear each other: keep all four.
        for name in ["dirty_ratio", "dirty_bytes", "dirty_background_ratio", "dirty_background_bytes"]
            .into_iter()
            .chain(["dirty_expire_centisecs", "dirty_writeback_centisecs"])
        {
            let p = format!("/proc/sys/vm/{name}");
            let v = std::fs::read_to_string(&p).map_err(|e| format!("{p}: {e}"))?;
            s.saved.push((name.to_string(), v.trim().to_string()));
        }
        for (name, v) in want {
            let p = format!("/proc/sys/vm/{name}");
            std::fs::write(&p, v.to_string()).map_err(|e| format!("{p} = {v}: {e} (setting it needs root)"))?;
        }
        Ok(s)
    }
}

impl Drop for VmSysctls {
    fn drop(&mut self) {
        // Of a ratio and its bytes form one is 0, cleared by writing the
        // other: write back the other.
        for (name, val) in &self.saved {
            if val == "0" && !name.ends_with("centisecs") {
                continue;
            }
            let _ = std::fs::write(format!("/proc/sys/vm/{name}"), val);
        }
    }
}

/// /proc/meminfo's Dirty and Writeback (KiB) and /proc/vmstat's dirty
/// thresholds (pages) and nr_dirtied, nr_written.
#[derive(Debug, Clone, Copy, Default)]
pub struct DirtyRead {
    pub dirty_kb: u64,
    pub writeback_kb: u64,
    pub thresh: u64,
    pub bg_thresh: u64,
    pub nr_dirtied: u64,
    pub nr_written: u64,
}

pub fn read_dirty() -> std::io::Result<DirtyRead> {
    let mut r = DirtyRead::default();
    for line in std::fs::read_to_string("/proc/meminfo")?.lines() {
        let mut it = line.split_whitespace();
        let (Some(k), Some(v)) = (it.next(), it.next()) else { continue };
        let v: u64 = v.parse().unwrap_or(0);
        match k {
            "Dirty:" => r.dirty_kb = v,
            "Writeback:" => r.writeback_kb = v,
            _ => {}
        }
    }
    for line in std::fs::read_to_string("/proc/vmstat")?.lines() {
        let mut it = line.split_whitespace();
        let (Some(k), Some(v)) = (it.next(), it.next()) else { continue };
        let v: u64 = v.parse().unwrap_or(0);
        match k {
            "nr_dirty_threshold" => r.thresh = v,
            "nr_dirty_background_threshold" => r.bg_thresh = v,
            "nr_dirtied" => r.nr_dirtied = v,
            "nr_written" => r.nr_written = v,
            _ => {}
        }
    }
    Ok(r)
}

/// Where `--calibrate` measures `write_page`: $SCHEDLAB_SCRATCH, else
/// /var/tmp, if it is a directory on a disk (None on a tmpfs, as in the
/// QEMU guests).
pub fn scratch_for_calibration() -> Option<PathBuf> {
    let d = PathBuf::from(std::env::var("SCHEDLAB_SCRATCH").unwrap_or_else(|_| "/var/tmp".into()));
    (d.is_dir() && !crate::sys::is_memory_fs(&d)).then_some(d)
}

/// blk-throttle's write limit on the device of a directory (cgroup v1's
/// root blkio.throttle.write_bps_device, where the flusher's writeback is
/// accounted), set for a run and lifted after it.
pub struct BlkThrottle {
    file: &'static str,
    dev: String,
}

impl BlkThrottle {
    pub fn apply(dir: &Path, bytes_per_s: u64) -> Result<BlkThrottle, String> {
        use std::os::unix::fs::MetadataExt;
        const FILE: &str = "/sys/fs/cgroup/blkio/blkio.throttle.write_bps_device";
        let st = std::fs::metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let (maj, min) = (libc::major(st.dev()), libc::minor(st.dev()));
        // A partition's limit is set on its disk.
        let sys = format!("/sys/dev/block/{maj}:{min}");
        let dev = if Path::new(&format!("{sys}/partition")).exists() {
            std::fs::read_to_string(format!("{sys}/../dev")).map_err(|e| format!("{sys}/../dev: {e}"))?
        } else {
            format!("{maj}:{min}")
        };
        let dev = dev.trim().to_string();
        if !Path::new(FILE).exists() {
            return Err(format!(
                "a disk with enforce = true needs cgroup v1's blkio controller ({FILE}) to hold the device to its \
                 bandwidth; accepted: such a host, or enforce = false"
            ));
        }
        std::fs::write(FILE, format!("{dev} {bytes_per_s}"))
            .map_err(|e| format!("{FILE} = {dev} {bytes_per_s}: {e} (needs root)"))?;
        Ok(BlkThrottle { file: FILE, dev })
    }
}

impl Drop for BlkThrottle {
    fn drop(&mut self) {
        let _ = std::fs::write(self.file, format!("{} 0", self.dev));
    }
}
