//! Diagnostics of one run: every line goes to `CRAWL/logs/segmenter-TIMESTAMP.log`
//! and to stderr as `segmenter: <file or URL>: <what happened>`. Warnings about
//! bad input are cut off on stderr after [`STDERR_WARNINGS`] lines (the log
//! keeps them all), so that a broken input cannot flood a cron mail.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

/// Warnings shown on stderr before the rest go only to the log file.
pub const STDERR_WARNINGS: u64 = 50;

/// The run's log.
pub struct RunLog {
    file: Mutex<Option<BufWriter<File>>>,
    path: Option<PathBuf>,
    warnings: AtomicU64,
}

impl RunLog {
    /// Opens `path` for this run's log. If it cannot be created, says so
    /// once and logs to stderr only.
    pub fn open(path: &Path) -> RunLog {
        let file = match File::create(path) {
            Ok(f) => Some(BufWriter::new(f)),
            Err(e) => {
                eprintln!(
                    "segmenter: {}: cannot create the log file: {e}",
                    path.display()
                );
                None
            }
        };
        let path = file.is_some().then(|| path.to_path_buf());
        RunLog {
            file: Mutex::new(file),
            path,
            warnings: AtomicU64::new(0),
        }
    }

    /// A problem with one input that was skipped.
    pub fn warn(&self, msg: impl std::fmt::Display) {
        let n = self.warnings.fetch_add(1, Ordering::Relaxed);
        let text = msg.to_string();
        if n < STDERR_WARNINGS {
            eprintln!("segmenter: {text}");
        } else if n == STDERR_WARNINGS {
            match &self.path {
                Some(p) => eprintln!("segmenter: more warnings follow only in {}", p.display()),
                None => eprintln!("segmenter: more warnings are not shown"),
            }
        }
        self.to_file("warning", &text);
    }

    /// Progress or an informative line (stderr and file).
    pub fn info(&self, msg: impl std::fmt::Display) {
        let text = msg.to_string();
        eprintln!("segmenter: {text}");
        self.to_file("info", &text);
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
            let stamp = common::timefmt::iso_millis(SystemTime::now());
            let _ = writeln!(f, "{stamp} {level} {text}");
        }
    }
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
