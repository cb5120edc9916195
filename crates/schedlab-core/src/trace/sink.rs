//! Where a trace's bytes go: a buffer that is written out to its file
//! whenever it holds more than FLUSH_AT bytes, so a trace of a day-long run
//! costs disk, not memory. The file is a temporary one beside the target
//! (trace/atomic.rs), renamed over it by `finish`: a run that fails leaves
//! the old trace as it was. Without a file (unit tests) the bytes stay in
//! the buffer.

use super::atomic::AtomicFile;
use std::io::{self, Write};
use std::path::Path;

/// Bytes held before a write to the file.
const FLUSH_AT: usize = 1 << 16;

#[derive(Debug, Default)]
pub struct Sink {
    /// What has not been written out yet.
    pub buf: Vec<u8>,
    file: Option<AtomicFile>,
    /// The first write error; the run goes on and `finish` returns it.
    error: Option<io::Error>,
}

impl Sink {
    /// Bytes kept in memory.
    pub fn memory() -> Self {
        Sink::default()
    }

    /// Bytes streamed to a temporary file for `path`, opened now, so a path
    /// that cannot be written is refused before the simulation.
    pub fn create(path: &str) -> io::Result<Self> {
        let file = AtomicFile::create(Path::new(path))?;
        Ok(Sink { buf: Vec::with_capacity(FLUSH_AT + 4096), file: Some(file), error: None })
    }

    /// Write the buffer out if it is full enough.
    #[inline]
    pub fn spill(&mut self) {
        if self.buf.len() >= FLUSH_AT {
            self.flush_buf();
        }
    }

    fn flush_buf(&mut self) {
        if let Some(f) = self.file.as_mut() {
            if self.error.is_none() {
                if let Err(e) = f.file().write_all(&self.buf) {
                    self.error = Some(e);
                }
            }
            self.buf.clear();
        }
    }

    /// Write out what is left and put the file in place; the first error,
    /// if any (the target is then left as it was).
    pub fn finish(self) -> io::Result<()> {
        self.finish_as(None)
    }

    /// `finish`, but the file goes to `elsewhere` when given (AtomicFile::commit_as).
    pub fn finish_as(mut self, elsewhere: Option<&Path>) -> io::Result<()> {
        self.flush_buf();
        match (self.error.take(), self.file.take()) {
            (Some(e), _) => Err(e),
            (None, Some(f)) => f.commit_as(elsewhere),
            (None, None) => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_to_the_file_and_keeps_little() {
        let dir = std::env::temp_dir().join(format!("schedlab-sink-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.txt");
        let mut s = Sink::create(path.to_str().unwrap()).unwrap();
        for i in 0..100_000u32 {
            writeln!(s.buf, "line {i}").unwrap();
            s.spill();
            assert!(s.buf.len() < FLUSH_AT + 64);
        }
        assert!(!path.exists(), "the trace appears only when it is whole");
        s.finish().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 100_000);
        assert!(text.ends_with("line 99999\n"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_bad_path_fails_at_creation() {
        assert!(Sink::create("/nonexistent-dir/x/trace.txt").is_err());
    }
}
