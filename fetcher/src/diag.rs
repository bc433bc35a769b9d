//! Diagnostics of a run: on stderr (behind the program's name) and in
//! `CRAWL/logs/fetcher-TIMESTAMP.log`, the file cron users read.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

/// Diagnostics: to stderr and to `CRAWL/logs/fetcher-TIMESTAMP.log`.
#[derive(Debug, Clone)]
pub struct Diag {
    file: Option<Arc<Mutex<std::fs::File>>>,
}

impl Diag {
    /// Appends to the log file at `path` (nothing goes to a file that
    /// cannot be opened; stderr still gets everything).
    pub fn open(path: &Path) -> Diag {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .ok()
            .map(|f| Arc::new(Mutex::new(f)));
        Diag { file }
    }

    /// Prints `fetcher: MSG` on stderr and in the log file.
    pub fn say(&self, msg: &str) {
        eprintln!("fetcher: {msg}");
        self.to_file(msg);
    }

    /// Writes to the log file only.
    pub fn to_file(&self, msg: &str) {
        if let Some(f) = &self.file {
            let stamp = common::timefmt::iso_millis(SystemTime::now());
            let mut f = f.lock().unwrap_or_else(|e| e.into_inner());
            let _ = writeln!(f, "{stamp} {msg}");
        }
    }
}
