//! Block devices, as `[[machine.disk]]` describes them: how many hardware
//! queues (and so where the completion interrupt lands), how many requests
//! the device serves at once, its service times, and the queue's
//! `rq_affinity`.

use serde::Deserialize;

use crate::engine::rng::Dist;
use crate::error::{Result, SimError};
use crate::units::dist_at;

/// A `[[machine.disk]]` table as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDisk {
    pub name: String,
    /// 1 (a single hardware queue, as AHCI/SATA: the interrupt lands on
    /// `irq_cpu` and the completion runs in BLOCK_SOFTIRQ) or "per_cpu"
    /// (NVMe: one queue per CPU, the interrupt on the submitting CPU, the
    /// completion in the hard interrupt).
    pub queues: Option<toml::Value>,
    /// Requests the device serves at once (NCQ: 32; NVMe: 1023).
    pub queue_depth: Option<i64>,
    /// Where a single queue's interrupt lands: a CPU, or "submitter" (a
    /// SAS HBA's per-CPU MSI-X reply queues behind one blk-mq hardware
    /// queue, as 5.5's mpt3sas: the reply queue is the submitting CPU's,
    /// the completion still in BLOCK_SOFTIRQ).
    pub irq_cpu: Option<toml::Value>,
    /// /sys/block/*/queue/rq_affinity: 0, 1 (default) or 2.
    pub rq_affinity: Option<i64>,
    /// Service time of a read, a write and a cache flush (durations or
    /// distributions), before the transfer.
    pub read: Option<toml::Value>,
    pub write: Option<toml::Value>,
    pub flush: Option<toml::Value>,
    /// The device's transfer rate, bytes per second ("500MiB/s"): a
    /// request of n bytes holds the device's data path for n / bandwidth
    /// after its service time, one request's transfer after another, so
    /// that concurrent requests share the rate. Absent: no transfer time.
    pub bandwidth: Option<String>,
    /// Whether a flush is queued like any request (NVMe) or drains the
    /// device and holds it (SATA's FLUSH CACHE is a non-NCQ command:
    /// libata waits for the queued commands and issues nothing else while
    /// it runs). Default: queued with per_cpu queues, not with one.
    pub flush_queued: Option<bool>,
    /// /sys/block/*/queue/read_ahead_kb (default 128).
    pub read_ahead_kb: Option<i64>,
    /// /sys/block/*/queue/max_sectors_kb: the largest request, and so the
    /// largest readahead window of a large read (bdi->io_pages; default
    /// 512).
    pub max_sectors_kb: Option<i64>,
    /// The real-kernel runner holds the real device to `bandwidth` for a
    /// run that writes to it (blk-throttle's write_bps_device), so the real
    /// run has the disk the scenario describes. Default false.
    pub enforce: Option<bool>,
    /// The filesystem a `write` op writes through: "ext4" (default) or
    /// "xfs". It decides the page-cache folios a buffered write dirties:
    /// large folios from XFS's 5.18 and ext4's 6.16 on.
    pub filesystem: Option<String>,
}

/// A disk's filesystem (for buffered writes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filesystem {
    Ext4,
    Xfs,
}

/// A device, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct DiskConfig {
    pub name: String,
    /// One hardware queue per CPU (the interrupt on the submitter).
    pub per_cpu_queues: bool,
    pub queue_depth: u32,
    pub irq_cpu: usize,
    /// A single queue's interrupt lands on the submitting CPU
    /// (`irq_cpu = "submitter"`).
    pub irq_on_submitter: bool,
    pub rq_affinity: u8,
    pub read: Dist,
    pub write: Dist,
    pub flush: Dist,
    /// Bytes per second; 0: no transfer time.
    pub bandwidth: u64,
    pub flush_queued: bool,
    pub read_ahead_kb: u64,
    pub max_sectors_kb: u64,
    pub enforce: bool,
    pub filesystem: Filesystem,
}

/// `[[machine.disk]]` tables -> devices.
pub(crate) fn compile_disks(raw: &[RawDisk], file: &str, nr_cpus: usize) -> Result<Vec<DiskConfig>> {
    let mut out: Vec<DiskConfig> = Vec::new();
    for (i, d) in raw.iter().enumerate() {
        let k = |s: &str| format!("machine.disk[{i}].{s}");
        if d.name.is_empty() || out.iter().any(|o| o.name == d.name) {
            return Err(SimError::bad_value(file, &k("name"), format!("\"{}\"", d.name), "a unique, non-empty name"));
        }
        let per_cpu_queues = match &d.queues {
            None => false,
            Some(toml::Value::Integer(1)) => false,
            Some(toml::Value::String(s)) if s == "per_cpu" => true,
            Some(v) => {
                return Err(SimError::bad_value(
                    file,
                    &k("queues"),
                    format!("{v}"),
                    "1 (one hardware queue, completion in BLOCK_SOFTIRQ) or \"per_cpu\" (NVMe-like)",
                ))
            }
        };
        let int = |v: Option<i64>, key: &str, def: i64, lo: i64, hi: i64, what: &str| -> Result<i64> {
            let v = v.unwrap_or(def);
            if (lo..=hi).contains(&v) {
                Ok(v)
            } else {
                Err(SimError::bad_value(file, &k(key), format!("{v}"), what.to_string()))
            }
        };
        let queue_depth = int(d.queue_depth, "queue_depth", 32, 1, 65536, "1..65536")? as u32;
        let irq_accepted = format!("a CPU 0..{}, or \"submitter\" (per-CPU MSI-X reply queues)", nr_cpus - 1);
        let (irq_cpu, irq_on_submitter) = match &d.irq_cpu {
            None => (0, false),
            Some(toml::Value::String(s)) if s == "submitter" => (0, true),
            Some(toml::Value::Integer(c)) => {
                (int(Some(*c), "irq_cpu", 0, 0, nr_cpus as i64 - 1, &irq_accepted)?, false)
            }
            Some(v) => return Err(SimError::bad_value(file, &k("irq_cpu"), format!("{v}"), irq_accepted)),
        };
        let rq_affinity = int(d.rq_affinity, "rq_affinity", 1, 0, 2, "0, 1 or 2")? as u8;
        let read_ahead_kb = int(d.read_ahead_kb, "read_ahead_kb", 128, 4, 1 << 20, "4..1048576 (KiB)")? as u64;
        let max_sectors_kb = int(d.max_sectors_kb, "max_sectors_kb", 512, 4, 1 << 20, "4..1048576 (KiB)")? as u64;
        let dist = |v: &Option<toml::Value>, key: &str, def: u64| -> Result<Dist> {
            match v {
                None => Ok(Dist::Const(def)),
                Some(v) => dist_at(v, file, &k(key)),
            }
        };
        let bandwidth = match &d.bandwidth {
            None => 0,
            Some(s) => parse_rate(s).ok_or_else(|| {
                SimError::bad_value(
                    file,
                    &k("bandwidth"),
                    format!("cannot read \"{s}\" as a rate"),
                    "a size per second, e.g. \"500MiB/s\", \"3GiB/s\"",
                )
            })?,
        };
        let filesystem = match d.filesystem.as_deref() {
            None | Some("ext4") => Filesystem::Ext4,
            Some("xfs") => Filesystem::Xfs,
            Some(s) => return Err(SimError::bad_value(file, &k("filesystem"), format!("\"{s}\""), "ext4, xfs")),
        };
        if d.enforce == Some(true) && bandwidth == 0 {
            return Err(SimError::bad_value(
                file,
                &k("enforce"),
                "true, but the disk has no bandwidth to hold the real device to",
                "a bandwidth with enforce = true",
            ));
        }
        out.push(DiskConfig {
            name: d.name.clone(),
            per_cpu_queues,
            queue_depth,
            irq_cpu: irq_cpu as usize,
            irq_on_submitter,
            rq_affinity,
            // Defaults: a SATA SSD's order of magnitude (docs/notes/
            // dbench-loadfile-research.md §3): ~100 us reads, ~30 us
            // writes into its cache, ~150 us flushes.
            read: dist(&d.read, "read", 100_000)?,
            write: dist(&d.write, "write", 30_000)?,
            flush: dist(&d.flush, "flush", 150_000)?,
            bandwidth,
            flush_queued: d.flush_queued.unwrap_or(per_cpu_queues),
            read_ahead_kb,
            max_sectors_kb,
            enforce: d.enforce.unwrap_or(false),
            filesystem,
        });
    }
    Ok(out)
}

/// "500MiB/s" -> bytes per second.
fn parse_rate(s: &str) -> Option<u64> {
    let size = s.trim().strip_suffix("/s")?;
    crate::units::parse_size(size).filter(|&b| b > 0)
}
