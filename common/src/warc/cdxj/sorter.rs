//! The index of a WARC file being written, sorted in bounded memory: the
//! lines are gathered in one buffer of at most [`RUN_BYTES`]; a full
//! buffer is sorted and written out as a run to a temporary file in the
//! WARC file's directory, unnamed (it disappears with the writer, even
//! after a crash); when the WARC file closes, the runs are merged into its
//! index. A file of 300,000 captures (90 MB of index) costs about
//! [`RUN_BYTES`] of memory instead of twice its index; a file whose index
//! fits in one buffer never touches the disk before its index is written.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::atomic::AtomicFile;

/// Bytes of lines held in memory before they are sorted and written out
/// as a run (about 16,000 lines of 250 bytes).
pub const RUN_BYTES: usize = 4 << 20;

/// Buffer of each run read back while merging.
const MERGE_BUFFER: usize = 64 << 10;

/// The CDXJ lines of one WARC file, gathered while it is written
/// ([`IndexSorter::push_line`]) and written sorted beside it at the end
/// ([`IndexSorter::write`]).
pub struct IndexSorter {
    /// Where the temporary file of runs goes (the WARC file's directory).
    dir: PathBuf,
    /// Lines end to end, and where each ends.
    buf: String,
    ends: Vec<usize>,
    /// Sorted runs written so far: the file and each run's byte range.
    spill: Option<File>,
    runs: Vec<(u64, u64)>,
    spilled: u64,
    lines: u64,
    /// The first error writing a run, reported by [`IndexSorter::write`].
    failed: Option<io::Error>,
}

impl IndexSorter {
    /// An empty index whose runs, if any, go to a temporary file in `dir`.
    pub fn new(dir: &Path) -> IndexSorter {
        IndexSorter {
            dir: dir.to_path_buf(),
            buf: String::new(),
            ends: Vec::new(),
            spill: None,
            runs: Vec::new(),
            spilled: 0,
            lines: 0,
            failed: None,
        }
    }

    /// Adds the line [`super::push_line`] makes. A run that cannot be
    /// written is dropped and its error kept for [`IndexSorter::write`]
    /// (the WARC file stays whole; only its index is missing, and it is
    /// built again when the file is read back).
    pub fn push_line(&mut self, head: &str, length: u64, offset: u64, filename: &str) {
        super::push_line(&mut self.buf, head, length, offset, filename);
        self.ends.push(self.buf.len());
        self.lines += 1;
        if self.buf.len() >= RUN_BYTES {
            if let Err(e) = self.spill_run() {
                self.failed.get_or_insert(e);
            }
            self.buf.clear();
            self.ends.clear();
        }
    }

    /// Lines added so far.
    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// Writes the index to `path`, sorted, atomically; returns its lines.
    pub fn write(mut self, path: &Path) -> io::Result<u64> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let mut file = AtomicFile::create(path)?;
        let mut out = io::BufWriter::with_capacity(MERGE_BUFFER, &mut file);
        if self.runs.is_empty() {
            for line in self.sorted() {
                out.write_all(line.as_bytes())?;
                out.write_all(b"\n")?;
            }
        } else {
            self.spill_run()?;
            let spill = self.spill.as_ref().expect("runs were written");
            merge_runs(spill, &self.runs, &mut out)?;
        }
        out.flush()?;
        drop(out);
        file.commit()?;
        Ok(self.lines)
    }

    /// The buffer's lines, sorted as `sort` sorts strings (by bytes).
    fn sorted(&self) -> Vec<&str> {
        let mut from = 0;
        let mut lines: Vec<&str> = Vec::with_capacity(self.ends.len());
        for &end in &self.ends {
            lines.push(&self.buf[from..end]);
            from = end;
        }
        lines.sort_unstable();
        lines
    }

    /// Writes the buffer's lines, sorted, as one more run.
    fn spill_run(&mut self) -> io::Result<()> {
        if self.ends.is_empty() {
            return Ok(());
        }
        if self.spill.is_none() {
            self.spill = Some(unnamed_file(&self.dir)?);
        }
        let mut run = Vec::with_capacity(self.buf.len() + self.ends.len());
        for line in self.sorted() {
            run.extend_from_slice(line.as_bytes());
            run.push(b'\n');
        }
        let spill = self.spill.as_ref().expect("opened above");
        spill.write_all_at(&run, self.spilled)?;
        self.runs.push((self.spilled, run.len() as u64));
        self.spilled += run.len() as u64;
        Ok(())
    }
}

/// A file in `dir` with no name: `O_TMPFILE` where the filesystem has it,
/// else a file created and removed at once.
fn unnamed_file(dir: &Path) -> io::Result<File> {
    let named = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", dir.display()));
    match OpenOptions::new()
        .read(true)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_TMPFILE)
        .open(dir)
    {
        Ok(f) => Ok(f),
        Err(_) => {
            static NEXT: AtomicU64 = AtomicU64::new(0);
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path = dir.join(format!(".cdxj-runs-{}-{n}", std::process::id()));
            let f = OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)
                .map_err(named)?;
            std::fs::remove_file(&path).map_err(named)?;
            Ok(f)
        }
    }
}

/// One run of the temporary file, read from its own offset (the runs share
/// one file handle, so each reads with `pread`).
struct RunReader<'a> {
    file: &'a File,
    at: u64,
    end: u64,
}

impl Read for RunReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = (self.end - self.at).min(buf.len() as u64) as usize;
        if left == 0 {
            return Ok(0);
        }
        let n = self.file.read_at(&mut buf[..left], self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

/// Reads the next line of a run into `line` (its newline dropped); false
/// at the run's end.
fn next_line(run: &mut impl BufRead, line: &mut Vec<u8>) -> io::Result<bool> {
    line.clear();
    if run.read_until(b'\n', line)? == 0 {
        return Ok(false);
    }
    if line.last() == Some(&b'\n') {
        line.pop();
    }
    Ok(true)
}

/// Merges sorted runs of `spill` into `out`, one line of each in memory.
fn merge_runs(spill: &File, runs: &[(u64, u64)], out: &mut impl Write) -> io::Result<()> {
    let mut readers: Vec<_> = runs
        .iter()
        .map(|&(at, len)| {
            let run = RunReader {
                file: spill,
                at,
                end: at + len,
            };
            BufReader::with_capacity(MERGE_BUFFER, run)
        })
        .collect();
    let mut heap = BinaryHeap::with_capacity(readers.len());
    for (i, reader) in readers.iter_mut().enumerate() {
        let mut line = Vec::new();
        if next_line(reader, &mut line)? {
            heap.push(Reverse((line, i)));
        }
    }
    while let Some(Reverse((mut line, i))) = heap.pop() {
        out.write_all(&line)?;
        out.write_all(b"\n")?;
        if next_line(&mut readers[i], &mut line)? {
            heap.push(Reverse((line, i)));
        }
    }
    Ok(())
}
