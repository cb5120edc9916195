//! An output file that appears whole or not at all.
//!
//! The bytes go to a temporary file beside the target (`.NAME.PID.N.tmp`,
//! same directory, so the rename stays on one filesystem); `commit`
//! flushes it to disk and renames it over the target. Dropped without a
//! commit (the run failed, `--strict` refused its warning), the temporary
//! file is removed and the target is left as it was. Two runs writing one
//! path never interleave: each rename replaces the file whole. The Python
//! front end writes its files the same way (python/schedlab/outputs.py).
//!
//! A target that exists and is not a regular file (`/dev/null`, a FIFO,
//! `/dev/stdout`) cannot be renamed over: it is written in place, as a
//! shell redirection would.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Tells apart the temporary files one process makes in one directory.
static NEXT: AtomicU64 = AtomicU64::new(0);

#[derive(Debug)]
pub struct AtomicFile {
    file: Option<File>,
    /// (temporary, target); None when the target is written in place.
    rename: Option<(PathBuf, PathBuf)>,
}

impl AtomicFile {
    /// Open a temporary file for `target`; an unwritable directory, a
    /// directory as target or a missing parent fails now, before any work.
    pub fn create(target: &Path) -> io::Result<Self> {
        if let Ok(m) = std::fs::metadata(target) {
            if m.is_dir() {
                return Err(io::Error::new(io::ErrorKind::IsADirectory, "is a directory"));
            }
            if !m.is_file() {
                return Ok(AtomicFile { file: Some(File::create(target)?), rename: None });
            }
        }
        let (file, tmp) = temporary_beside(target, "tmp")?;
        Ok(AtomicFile { file: Some(file), rename: Some((tmp, target.to_path_buf())) })
    }

    /// The file the bytes go to.
    pub fn file(&mut self) -> &mut File {
        self.file.as_mut().expect("an AtomicFile is used only before its commit")
    }

    /// Flush to disk and rename over the target.
    pub fn commit(self) -> io::Result<()> {
        self.commit_as(None)
    }

    /// Flush to disk and rename over `elsewhere` (a file beside the target
    /// that a failed run leaves, see lib.rs) or, when None, the target.
    pub fn commit_as(mut self, elsewhere: Option<&Path>) -> io::Result<()> {
        let mut file = self.file.take().expect("committed once");
        if self.rename.is_some() {
            file.sync_all()?;
        } else {
            // A device or a FIFO: nothing to sync (fsync of /dev/null is EINVAL).
            std::io::Write::flush(&mut file)?;
        }
        drop(file);
        if let Some((tmp, target)) = self.rename.take() {
            if let Err(e) = std::fs::rename(&tmp, elsewhere.unwrap_or(&target)) {
                let _ = std::fs::remove_file(&tmp);
                return Err(e);
            }
        }
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if let Some((tmp, _)) = self.rename.take() {
            self.file.take();
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// A new file `.NAME.PID.N.SUFFIX` in `target`'s directory (created, never
/// an existing one), and its path.
pub fn temporary_beside(target: &Path, suffix: &str) -> io::Result<(File, PathBuf)> {
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    // Keep the name well under NAME_MAX (255 bytes) with the suffixes added.
    let stem: String = name
        .chars()
        .scan(0usize, |n, c| {
            *n += c.len_utf8();
            (*n <= 128).then_some(c)
        })
        .collect();
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{stem}.{}.{n}.{suffix}", std::process::id()));
        match OpenOptions::new().read(true).write(true).create_new(true).open(&tmp) {
            Ok(f) => return Ok((f, tmp)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("schedlab-atomic-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_commit_replaces_the_file_whole() {
        let d = dir("commit");
        let p = d.join("out.txt");
        std::fs::write(&p, "old").unwrap();
        let mut f = AtomicFile::create(&p).unwrap();
        f.file().write_all(b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "old", "the target is untouched before the commit");
        f.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1, "no temporary file is left");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_drop_leaves_the_old_file_and_nothing_else() {
        let d = dir("drop");
        let p = d.join("out.txt");
        std::fs::write(&p, "old").unwrap();
        let mut f = AtomicFile::create(&p).unwrap();
        f.file().write_all(b"partial").unwrap();
        drop(f);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "old");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_device_is_written_in_place_and_a_directory_refused() {
        let mut f = AtomicFile::create(Path::new("/dev/null")).unwrap();
        f.file().write_all(b"x").unwrap();
        f.commit().unwrap();
        assert!(AtomicFile::create(&std::env::temp_dir()).is_err());
        assert!(AtomicFile::create(Path::new("/nonexistent-dir/x/trace.txt")).is_err());
    }
}
