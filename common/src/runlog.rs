//! The log of one run of a program: every line goes to
//! `CRAWL/logs/PROGRAM-TIMESTAMP.log` (the file cron users read) and, but
//! for [`RunLog::note`], to stderr as `PROGRAM: <file or URL>: <what
//! happened>`. Warnings about bad input are cut off on stderr after
//! [`STDERR_WARNINGS`] lines (the log keeps them all), so that a broken
//! input cannot flood a cron mail.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

/// Warnings shown on stderr before the rest go only to the log file.
pub const STDERR_WARNINGS: u64 = 50;

/// The run's log. Shared by the threads of a run (`&RunLog` or an `Arc`).
pub struct RunLog {
    /// The program's name, in front of every line on stderr.
    program: &'static str,
    file: Mutex<Option<BufWriter<File>>>,
    path: Option<PathBuf>,
    warnings: AtomicU64,
}

impl std::fmt::Debug for RunLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunLog")
            .field("program", &self.program)
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl RunLog {
    /// Creates `path` for the log of a run of `program` (`NAME-1.log`,
    /// `NAME-2.log`, ... if a run started in the same millisecond has it:
    /// never another run's log). If it cannot be created, says so once and
    /// logs to stderr only.
    pub fn open(program: &'static str, path: &Path) -> RunLog {
        let (file, path) = match create_new(path) {
            Ok((f, p)) => (Some(BufWriter::new(f)), Some(p)),
            Err(e) => {
                eprintln!(
                    "{program}: {}: cannot create the log file: {e}",
                    path.display()
                );
                (None, None)
            }
        };
        RunLog {
            program,
            file: Mutex::new(file),
            path,
            warnings: AtomicU64::new(0),
        }
    }

    /// The log file's path (`None` if it could not be created).
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// A problem with one input that was skipped.
    pub fn warn(&self, msg: impl std::fmt::Display) {
        let n = self.warnings.fetch_add(1, Ordering::Relaxed);
        let text = msg.to_string();
        if n < STDERR_WARNINGS {
            eprintln!("{}: {text}", self.program);
        } else if n == STDERR_WARNINGS {
            let program = self.program;
            match &self.path {
                Some(p) => eprintln!("{program}: more warnings follow only in {}", p.display()),
                None => eprintln!("{program}: more warnings are not shown"),
            }
        }
        self.to_file("warning", &text);
    }

    /// Progress or an informative line (stderr and file).
    pub fn info(&self, msg: impl std::fmt::Display) {
        let text = msg.to_string();
        eprintln!("{}: {text}", self.program);
        self.to_file("info", &text);
    }

    /// A detail for the file only (stderr would drown in it).
    pub fn note(&self, msg: impl std::fmt::Display) {
        self.to_file("info", &msg.to_string());
    }

    /// The error that ends the run, to the file only (`main` prints it).
    pub fn error_to_file(&self, text: &str) {
        self.to_file("error", text);
    }

    /// A block of text (the report), to stderr and the file as is.
    pub fn block(&self, text: &str) {
        eprint!("{text}");
        if let Ok(mut guard) = self.file.lock()
            && let Some(f) = guard.as_mut()
        {
            let _ = f.write_all(text.as_bytes());
            let _ = f.flush();
        }
    }

    fn to_file(&self, level: &str, text: &str) {
        if let Ok(mut guard) = self.file.lock()
            && let Some(f) = guard.as_mut()
        {
            let stamp = crate::timefmt::iso_millis(SystemTime::now());
            // Flushed line by line: `tail -f` follows it, `kill -9` loses
            // no line.
            let _ = writeln!(f, "{stamp} {level} {text}").and_then(|()| f.flush());
        }
    }
}

/// Creates `path`, or the first free `STEM-N.EXT` beside it.
fn create_new(path: &Path) -> std::io::Result<(File, PathBuf)> {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    let ext = path.extension().map(|e| e.to_string_lossy());
    let mut candidate = path.to_path_buf();
    for n in 1..=1000 {
        match File::options()
            .write(true)
            .create_new(true)
            .open(&candidate)
        {
            Ok(f) => return Ok((f, candidate)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let name = match &ext {
                    Some(ext) => format!("{stem}-{n}.{ext}"),
                    None => format!("{stem}-{n}"),
                };
                candidate = path.with_file_name(name);
            }
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::AlreadyExists,
        "1000 log files of the same millisecond",
    ))
}

impl Drop for RunLog {
    fn drop(&mut self) {
        if let Ok(mut guard) = self.file.lock()
            && let Some(f) = guard.as_mut()
        {
            let _ = f.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_of_the_same_millisecond_get_their_own_log() {
        let dir = std::env::temp_dir().join(format!("segmenter-log-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("segmenter-20260101000000000.log");
        let first = RunLog::open("segmenter", &path);
        first.info("first run");
        let second = RunLog::open("segmenter", &path);
        second.info("second run");
        drop((first, second));
        let one = std::fs::read_to_string(&path).unwrap();
        let two = std::fs::read_to_string(dir.join("segmenter-20260101000000000-1.log")).unwrap();
        assert!(one.ends_with(" info first run\n"), "{one}");
        assert!(two.ends_with(" info second run\n"), "{two}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
