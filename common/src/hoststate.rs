//! Per-host state kept across runs in SQLite (`CRAWL/hosts.db`), one row per
//! host, read by key so that a run loads only the hosts of its segment:
//!
//! ```text
//! sqlite3 CRAWL/hosts.db 'select host, robots_status, crawl_delay_ms, errors_total from hosts'
//! ```
//! Schema version 1 (`PRAGMA user_version = 1`):
//! ```sql
//! CREATE TABLE hosts (
//!   host               TEXT PRIMARY KEY,
//!   robots_status      INTEGER,  -- HTTP status of robots.txt, 0 = unreachable, NULL = never fetched
//!   robots_body        BLOB,     -- the robots.txt as fetched (at most 500 KiB)
//!   robots_fetched_ms  INTEGER,  -- Unix time in ms
//!   crawl_delay_ms     INTEGER,  -- Crawl-delay for our agent, NULL if none
//!   response_times_ms  TEXT,     -- last five response times, comma-separated, oldest first
//!   errors_total       INTEGER NOT NULL DEFAULT 0,
//!   consecutive_errors INTEGER NOT NULL DEFAULT 0,
//!   pages_total        INTEGER NOT NULL DEFAULT 0,
//!   last_contact_ms    INTEGER   -- Unix time in ms of the last request
//! );
//! ```
//! The database runs in WAL mode with `synchronous=NORMAL`: a crash loses at
//! most the last transaction, never the file.

use std::path::{Path, PathBuf};

/// A problem with the host database.
#[derive(Debug, thiserror::Error)]
pub enum HostDbError {
    /// SQLite failed.
    #[error("{path}: {source}")]
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// The cause.
        source: rusqlite::Error,
    },
    /// The file has a schema version this program does not know.
    #[error("{path}: schema version {found}, expected {expected}")]
    Version {
        /// The database file.
        path: PathBuf,
        /// Version in the file.
        found: i64,
        /// Version this program writes.
        expected: i64,
    },
}

/// A robots.txt as last fetched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RobotsEntry {
    /// HTTP status; 0 when the server could not be reached.
    pub status: u16,
    /// The body (empty unless 2xx).
    pub body: Vec<u8>,
    /// When it was fetched (Unix ms).
    pub fetched_ms: i64,
}

/// The state of one host.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostState {
    /// The host name (queue key).
    pub host: String,
    /// robots.txt, if ever fetched.
    pub robots: Option<RobotsEntry>,
    /// Crawl-delay for our agent, in ms.
    pub crawl_delay_ms: Option<u64>,
    /// Last five response times in ms, oldest first.
    pub response_times_ms: Vec<u32>,
    /// Failures ever.
    pub errors_total: u64,
    /// Failures since the last success.
    pub consecutive_errors: u32,
    /// Pages fetched ever.
    pub pages_total: u64,
    /// Last request (Unix ms).
    pub last_contact_ms: Option<i64>,
}

impl HostState {
    /// Records a response time, keeping the last five.
    pub fn push_response_time(&mut self, ms: u32) {
        if self.response_times_ms.len() >= 5 {
            self.response_times_ms.remove(0);
        }
        self.response_times_ms.push(ms);
    }

    /// Mean of the recorded response times, if any.
    pub fn mean_response_ms(&self) -> Option<f64> {
        let n = self.response_times_ms.len();
        (n > 0).then(|| {
            self.response_times_ms
                .iter()
                .map(|&t| f64::from(t))
                .sum::<f64>()
                / n as f64
        })
    }
}

/// The host database. One connection; not shared between threads.
pub struct HostDb {
    _private: (),
}

impl HostDb {
    /// Opens (creating if needed) the database at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<HostDb, HostDbError> {
        let _ = path;
        todo!("HostDb::open")
    }

    /// The state of one host, if known.
    pub fn get(&self, host: &str) -> Result<Option<HostState>, HostDbError> {
        let _ = host;
        todo!("HostDb::get")
    }

    /// Saves states in one transaction (insert or replace).
    pub fn put_many(&mut self, states: &[HostState]) -> Result<(), HostDbError> {
        let _ = states;
        todo!("HostDb::put_many")
    }

    /// Number of hosts stored.
    pub fn count(&self) -> Result<u64, HostDbError> {
        todo!("HostDb::count")
    }
}
