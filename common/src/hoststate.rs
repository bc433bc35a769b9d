//! Per-host state kept across runs in SQLite (`CRAWL/hosts.db`), one row per
//! host, read by key so that a run loads only the hosts of its segment:
//!
//! ```text
//! sqlite3 CRAWL/hosts.db 'select host, robots_status, crawl_delay_ms, errors_total from hosts'
//! ```
//! Schema version 4 (`PRAGMA user_version = 4`):
//! ```sql
//! CREATE TABLE hosts (
//!   host               TEXT PRIMARY KEY,
//!   robots_status      INTEGER,  -- HTTP status of robots.txt, 0 = unreachable, NULL = never fetched
//!   robots_body        BLOB,     -- the robots.txt as fetched (at most 500 KiB)
//!   robots_fetched_ms  INTEGER,  -- Unix time in ms
//!   crawl_delay_ms     INTEGER,  -- Crawl-delay for our agent, NULL if none
//!   response_times_ms  TEXT,     -- last five response times, comma-separated, oldest first
//!   errors_total       INTEGER NOT NULL DEFAULT 0,
//!   consecutive_errors INTEGER NOT NULL DEFAULT 0,  -- failures since the last success
//!                                --   (timeouts, refused, 5xx, 429, robots.txt
//!                                --   unavailable): each doubles the host's delay
//!   pages_total        INTEGER NOT NULL DEFAULT 0,
//!   last_contact_ms    INTEGER,  -- Unix time in ms of the last request
//!   next_contact_ms    INTEGER   -- Unix time in ms before which no request may go
//!                                --   to the host: the end of its last request plus
//!                                --   its delay, a Retry-After deadline, or when its
//!                                --   robots.txt may be asked again (NULL: any time)
//!   sitemaps           TEXT      -- the `Sitemap:` URLs of robots.txt, one a line
//!                                --   (NULL: robots.txt never fetched, or stored by
//!                                --   a build before version 3)
//!   failing_since_ms   INTEGER   -- Unix time in ms of the first of the failures in
//!                                --   a row (NULL: the last request succeeded); a
//!                                --   host failing for `park_after` is parked
//!   bytes_total        INTEGER NOT NULL DEFAULT 0  -- WARC bytes stored for the
//!                                --   host over the crawl (`max_host_bytes`)
//! );
//! ```
//! A version 3 file (the same without `failing_since_ms` and `bytes_total`),
//! version 2 file (also without `sitemaps`) or version 1 file (also
//! without `next_contact_ms`) is upgraded in place when a program opens it
//! to write; read-only, it is read as it is. Where `sitemaps` is NULL but a
//! robots.txt body is stored, the sitemaps are read from that body.
//! While a fetcher runs, the database is in WAL mode with
//! `synchronous=NORMAL`: a crash loses at most the last transaction, never
//! the file. At the end of each run the fetcher folds the write-ahead log
//! into the file and leaves WAL mode ([`HostDb::checkpoint`]), so that
//! between runs `hosts.db` is one plain file, whole by itself; a connection
//! opened to write does the same when it is dropped, on whatever path the
//! program ends (only `kill -9`, a power cut or a second signal leave the
//! log beside the file, for the next run to fold in).

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};

mod overview;
pub use overview::{HostOverview, HostRow};

/// The schema version this library reads and writes (`PRAGMA user_version`).
pub const SCHEMA_VERSION: i64 = 4;

/// The schema of version 4, as documented above.
const SCHEMA: &str = "
CREATE TABLE hosts (
  host               TEXT PRIMARY KEY,
  robots_status      INTEGER,
  robots_body        BLOB,
  robots_fetched_ms  INTEGER,
  crawl_delay_ms     INTEGER,
  response_times_ms  TEXT,
  errors_total       INTEGER NOT NULL DEFAULT 0,
  consecutive_errors INTEGER NOT NULL DEFAULT 0,
  pages_total        INTEGER NOT NULL DEFAULT 0,
  last_contact_ms    INTEGER,
  next_contact_ms    INTEGER,
  sitemaps           TEXT,
  failing_since_ms   INTEGER,
  bytes_total        INTEGER NOT NULL DEFAULT 0
);
PRAGMA user_version = 4;
";

/// Turns a version 1 database into version 4.
const UPGRADE_FROM_1: &str = "
ALTER TABLE hosts ADD COLUMN next_contact_ms INTEGER;
ALTER TABLE hosts ADD COLUMN sitemaps TEXT;
ALTER TABLE hosts ADD COLUMN failing_since_ms INTEGER;
ALTER TABLE hosts ADD COLUMN bytes_total INTEGER NOT NULL DEFAULT 0;
PRAGMA user_version = 4;
";

/// Turns a version 2 database into version 4.
const UPGRADE_FROM_2: &str = "
ALTER TABLE hosts ADD COLUMN sitemaps TEXT;
ALTER TABLE hosts ADD COLUMN failing_since_ms INTEGER;
ALTER TABLE hosts ADD COLUMN bytes_total INTEGER NOT NULL DEFAULT 0;
PRAGMA user_version = 4;
";

/// Turns a version 3 database into version 4.
const UPGRADE_FROM_3: &str = "
ALTER TABLE hosts ADD COLUMN failing_since_ms INTEGER;
ALTER TABLE hosts ADD COLUMN bytes_total INTEGER NOT NULL DEFAULT 0;
PRAGMA user_version = 4;
";

/// The query that reads one host: the columns every schema version has,
/// then `$later` (the columns added since, or `NULL` for those a file
/// read without upgrading lacks), in [`row_to_state`]'s order.
macro_rules! select_host {
    ($later:literal) => {
        concat!(
            "SELECT host, robots_status, robots_body, robots_fetched_ms, crawl_delay_ms, \
             response_times_ms, errors_total, consecutive_errors, pages_total, \
             last_contact_ms, ",
            $later,
            " FROM hosts WHERE host = ?1"
        )
    };
}

const SELECT_HOST: &str = select_host!("next_contact_ms, sitemaps, failing_since_ms, bytes_total");

/// [`SELECT_HOST`] for a version 3 file read without upgrading it.
const SELECT_HOST_V3: &str = select_host!("next_contact_ms, sitemaps, NULL, 0");

/// [`SELECT_HOST`] for a version 2 file read without upgrading it.
const SELECT_HOST_V2: &str = select_host!("next_contact_ms, NULL, NULL, 0");

/// [`SELECT_HOST`] for a version 1 file read without upgrading it.
const SELECT_HOST_V1: &str = select_host!("NULL, NULL, NULL, 0");

const UPSERT_HOST: &str = "INSERT INTO hosts (host, robots_status, robots_body, \
     robots_fetched_ms, crawl_delay_ms, response_times_ms, errors_total, consecutive_errors, \
     pages_total, last_contact_ms, next_contact_ms, sitemaps, failing_since_ms, bytes_total) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) \
     ON CONFLICT (host) DO UPDATE SET robots_status = excluded.robots_status, \
     robots_body = excluded.robots_body, robots_fetched_ms = excluded.robots_fetched_ms, \
     crawl_delay_ms = excluded.crawl_delay_ms, response_times_ms = excluded.response_times_ms, \
     errors_total = excluded.errors_total, consecutive_errors = excluded.consecutive_errors, \
     pages_total = excluded.pages_total, last_contact_ms = excluded.last_contact_ms, \
     next_contact_ms = excluded.next_contact_ms, sitemaps = excluded.sitemaps, \
     failing_since_ms = excluded.failing_since_ms, bytes_total = excluded.bytes_total";

/// How long to wait for another connection's write lock before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

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
    #[error(
        "{path}: host database schema version {found}, but this program uses version \
         {expected}; use the build that wrote it, or move the file away to start a new one \
         (robots.txt files are then fetched again and host statistics start from zero)"
    )]
    Version {
        /// The database file.
        path: PathBuf,
        /// Version in the file.
        found: i64,
        /// Version this program writes.
        expected: i64,
    },
    /// Creating the file failed.
    #[error("{path}: {source}")]
    Io {
        /// The database file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is damaged (cut, emptied, flipped, not SQLite): refused
    /// before anything in it is changed.
    #[error(
        "{path}: the host database is damaged ({problem}); nothing was changed. Repair: \
         `sqlite3 hosts.db .recover | sqlite3 hosts-recovered.db`, then move \
         hosts-recovered.db over hosts.db; or move hosts.db away to start a new one \
         (robots.txt files are then fetched again, host statistics and next-contact times \
         start from zero)"
    )]
    Damaged {
        /// The database file.
        path: PathBuf,
        /// What SQLite found.
        problem: String,
    },
    /// An SQLite database that is not a host database (tables, no schema version).
    #[error(
        "{path}: an SQLite database, but not a host database of this crawler \
         (it has other tables and no schema version); choose another path or move it away"
    )]
    Foreign {
        /// The database file.
        path: PathBuf,
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
    /// The sitemap URLs its `Sitemap:` lines name
    /// ([`crate::sitemaps::in_robots_txt`]; empty unless 2xx).
    pub sitemaps: Vec<String>,
}

/// How long a stored robots.txt is reused (RFC 9309 asks crawlers not to
/// use a cached copy for more than 24 hours).
pub const ROBOTS_TTL: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

impl RobotsEntry {
    /// True if this answer can stand for the host's rules at `now_ms` (Unix
    /// ms): less than [`ROBOTS_TTL`] old, and an answer (not unreachable,
    /// not a 5xx or 429, which mean "ask again later").
    pub fn reusable(&self, now_ms: i64) -> bool {
        self.status != 0
            && !(500..600).contains(&self.status)
            && self.status != 429
            && within_robots_ttl(self.fetched_ms, now_ms)
    }
}

/// True if a robots.txt fetched at `fetched_ms` is less than [`ROBOTS_TTL`]
/// old at `now_ms` (both Unix ms).
pub fn within_robots_ttl(fetched_ms: i64, now_ms: i64) -> bool {
    now_ms.saturating_sub(fetched_ms) < ROBOTS_TTL.as_millis() as i64
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
    /// No request to the host before this time (Unix ms): the penalty box
    /// carried from one run to the next.
    pub next_contact_ms: Option<i64>,
    /// The first of the failures in a row (Unix ms); `None` after a success.
    pub failing_since_ms: Option<i64>,
    /// WARC bytes stored for the host over the crawl.
    pub bytes_total: u64,
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
///
/// ```
/// use common::hoststate::{HostDb, HostState};
/// # let dir = std::env::temp_dir().join(format!("hostdb-doc-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// let mut db = HostDb::open(dir.join("hosts.db")).unwrap();
/// let mut state = HostState { host: "example.com".into(), ..HostState::default() };
/// state.push_response_time(120);
/// db.put_many(&[state.clone()]).unwrap();
/// assert_eq!(db.get("example.com").unwrap(), Some(state));
/// assert_eq!(db.get("other.example").unwrap(), None);
/// # drop(db);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub struct HostDb {
    path: PathBuf,
    conn: Connection,
    /// The query reading one host, for the file's schema version.
    select: &'static str,
    /// Opened to write (in WAL mode): closed, it leaves WAL mode.
    writable: bool,
}

impl Drop for HostDb {
    /// A connection opened to write leaves WAL mode when it closes, however
    /// the program ends (an error, an early return): `hosts.db` is then one
    /// plain file, and a reader (`segmenter`, `sqlite3`) opens it without
    /// creating `hosts.db-wal` and `-shm` beside it, which a read-only
    /// connection could not remove. A connection of another program that
    /// still has the file open keeps it in WAL mode; the last one to write
    /// leaves it.
    fn drop(&mut self) {
        if self.writable {
            let _ = self.checkpoint();
        }
    }
}

impl std::fmt::Debug for HostDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostDb")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl HostDb {
    /// Opens (creating if needed) the database at `path`, to read and write.
    ///
    /// A new file gets the schema; a version 1 file is upgraded to
    /// [`SCHEMA_VERSION`]; a file from a newer build, or a different SQLite
    /// database, is refused before anything in it is changed.
    pub fn open(path: impl AsRef<Path>) -> Result<HostDb, HostDbError> {
        let path = path.as_ref().to_path_buf();
        let sql = |source: rusqlite::Error| sqlite_error(&path, source);
        if path.exists() {
            check_not_empty(&path)?;
        } else {
            create_new(&path)?;
        }
        let conn = Connection::open(&path).map_err(sql)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(sql)?;

        // Check what the file is before changing anything (journal mode included).
        let version = user_version(&conn).map_err(sql)?;
        check_version(&conn, &path, version)?;
        quick_check(&conn, &path)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(sql)?;
        // From here on, an error closes it through `Drop`: out of WAL mode.
        let mut db = HostDb {
            path: path.clone(),
            conn,
            select: SELECT_HOST,
            writable: true,
        };
        db.conn
            .pragma_update(None, "synchronous", "NORMAL")
            .map_err(sql)?;

        if version != SCHEMA_VERSION {
            // Create or upgrade the schema under the write lock, checking
            // again, so that two programs opening the file together do not
            // both do it.
            let tx = db
                .conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(sql)?;
            let version = user_version(&tx).map_err(sql)?;
            check_version(&tx, &path, version)?;
            match version {
                0 => tx.execute_batch(SCHEMA).map_err(sql)?,
                1 => tx.execute_batch(UPGRADE_FROM_1).map_err(sql)?,
                2 => tx.execute_batch(UPGRADE_FROM_2).map_err(sql)?,
                3 => tx.execute_batch(UPGRADE_FROM_3).map_err(sql)?,
                _ => {}
            }
            tx.commit().map_err(sql)?;
        }
        Ok(db)
    }

    /// Opens the database at `path` to read only, changing nothing in it (a
    /// version 1, 2 or 3 file is read as it is); `None` if there is no such file.
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Option<HostDb>, HostDbError> {
        let path = path.as_ref().to_path_buf();
        if !path.exists() {
            return Ok(None);
        }
        let sql = |source: rusqlite::Error| sqlite_error(&path, source);
        check_not_empty(&path)?;
        let conn = Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(sql)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(sql)?;
        let version = user_version(&conn).map_err(sql)?;
        check_version(&conn, &path, version)?;
        quick_check(&conn, &path)?;
        let select = match version {
            // A file with no schema yet holds no host.
            0 => return Ok(None),
            1 => SELECT_HOST_V1,
            2 => SELECT_HOST_V2,
            3 => SELECT_HOST_V3,
            _ => SELECT_HOST,
        };
        Ok(Some(HostDb {
            path,
            conn,
            select,
            writable: false,
        }))
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn sql_error(&self, source: rusqlite::Error) -> HostDbError {
        HostDbError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    /// The state of one host, if known.
    pub fn get(&self, host: &str) -> Result<Option<HostState>, HostDbError> {
        let mut stmt = self
            .conn
            .prepare_cached(self.select)
            .map_err(|e| self.sql_error(e))?;
        stmt.query_row([host], row_to_state)
            .optional()
            .map_err(|e| self.sql_error(e))
    }

    /// Saves states in one transaction (insert or replace).
    pub fn put_many(&mut self, states: &[HostState]) -> Result<(), HostDbError> {
        let path = self.path.clone();
        let sql = |source: rusqlite::Error| HostDbError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(sql)?;
        {
            let mut stmt = tx.prepare_cached(UPSERT_HOST).map_err(sql)?;
            let mut times = String::new();
            for s in states {
                times.clear();
                for (i, t) in s.response_times_ms.iter().enumerate() {
                    if i > 0 {
                        times.push(',');
                    }
                    times.push_str(&t.to_string());
                }
                let robots = s.robots.as_ref();
                let sitemaps = robots.map(|r| r.sitemaps.join("\n"));
                stmt.execute(params![
                    s.host,
                    robots.map(|r| r.status),
                    robots.map(|r| r.body.as_slice()),
                    robots.map(|r| r.fetched_ms),
                    s.crawl_delay_ms,
                    (!s.response_times_ms.is_empty()).then_some(times.as_str()),
                    s.errors_total,
                    s.consecutive_errors,
                    s.pages_total,
                    s.last_contact_ms,
                    s.next_contact_ms,
                    sitemaps,
                    s.failing_since_ms,
                    s.bytes_total,
                ])
                .map_err(sql)?;
            }
        }
        tx.commit().map_err(sql)
    }

    /// The hosts whose next allowed contact is after `now_ms`, with it (a
    /// version 1 file has none). One pass over the table: the rows held are
    /// those of the last runs' final requests, few beside the hosts known.
    pub fn held_after(&self, now_ms: i64) -> Result<Vec<(String, i64)>, HostDbError> {
        if self.select == SELECT_HOST_V1 {
            return Ok(Vec::new());
        }
        let mut stmt = self
            .conn
            .prepare_cached("SELECT host, next_contact_ms FROM hosts WHERE next_contact_ms > ?1")
            .map_err(|e| self.sql_error(e))?;
        let rows = stmt
            .query_map([now_ms], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(|e| self.sql_error(e))?;
        rows.collect::<Result<_, _>>()
            .map_err(|e| self.sql_error(e))
    }

    /// Folds the write-ahead log into the database file and leaves WAL
    /// mode (`PRAGMA wal_checkpoint(TRUNCATE)`, then `journal_mode=DELETE`,
    /// which removes `hosts.db-wal` and `-shm`): between runs `hosts.db` is
    /// one plain SQLite file, whole by itself (a copy of it alone is a
    /// backup), which readers open without creating a file beside it. The
    /// next [`HostDb::open`] goes back to WAL. False if another connection
    /// kept it from finishing (the log then still holds the rest, and the
    /// next run folds it in).
    pub fn checkpoint(&self) -> Result<bool, HostDbError> {
        // A connection that has not read the file since it went into WAL
        // mode (a run that wrote nothing) has not opened the log yet, and
        // SQLite refuses to leave WAL mode then ("database table is
        // locked"): a read opens it.
        self.conn
            .query_row("SELECT count(*) FROM sqlite_master", [], |r| {
                r.get::<_, i64>(0)
            })
            .map_err(|e| self.sql_error(e))?;
        let busy: i64 = self
            .conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))
            .map_err(|e| self.sql_error(e))?;
        if busy != 0 {
            return Ok(false);
        }
        match self
            .conn
            .query_row("PRAGMA journal_mode=DELETE", [], |r| r.get::<_, String>(0))
        {
            Ok(mode) => Ok(mode.eq_ignore_ascii_case("delete")),
            // Another connection still has the file open.
            Err(e) if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy) => Ok(false),
            Err(e) => Err(self.sql_error(e)),
        }
    }

    /// Number of hosts stored.
    pub fn count(&self) -> Result<u64, HostDbError> {
        self.conn
            .query_row("SELECT count(*) FROM hosts", [], |r| r.get(0))
            .map_err(|e| self.sql_error(e))
    }
}

/// Refuses a file this program cannot use: a newer schema version, or an
/// SQLite database of something else (tables but no schema version).
fn check_version(conn: &Connection, path: &Path, version: i64) -> Result<(), HostDbError> {
    let path = || path.to_path_buf();
    match version {
        0 => {
            let objects = schema_objects(conn).map_err(|e| sqlite_error(&path(), e))?;
            if objects > 0 {
                return Err(HostDbError::Foreign { path: path() });
            }
            Ok(())
        }
        1..=SCHEMA_VERSION => Ok(()),
        found => Err(HostDbError::Version {
            path: path(),
            found,
            expected: SCHEMA_VERSION,
        }),
    }
}

/// An SQLite error; a damaged or foreign file is [`HostDbError::Damaged`].
fn sqlite_error(path: &Path, source: rusqlite::Error) -> HostDbError {
    use rusqlite::ErrorCode::{DatabaseCorrupt, NotADatabase};
    match source.sqlite_error_code() {
        Some(DatabaseCorrupt | NotADatabase) => HostDbError::Damaged {
            path: path.to_path_buf(),
            problem: source.to_string(),
        },
        _ => HostDbError::Sqlite {
            path: path.to_path_buf(),
            source,
        },
    }
}

/// A host database is never empty: [`create_new`] puts it in place with its
/// schema. An empty main file is refused even when a write-ahead log lies
/// beside it: SQLite takes a file of no bytes for a new database and deletes
/// the log, read-only or not, so the pages it may hold would be lost.
fn check_not_empty(path: &Path) -> Result<(), HostDbError> {
    let len = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
    let mut wal = path.as_os_str().to_os_string();
    wal.push("-wal");
    let damaged = |problem: String| {
        Err(HostDbError::Damaged {
            path: path.to_path_buf(),
            problem,
        })
    };
    let size = len(path);
    if size == 0 {
        let wal = Path::new(&wal);
        if len(wal) == 0 {
            return damaged("the file is empty".into());
        }
        return damaged(format!(
            "the file is empty, and {} beside it may hold its pages: copy that file \
             somewhere safe before anything else opens hosts.db (SQLite deletes it beside \
             an empty database, `sqlite3 .recover` included)",
            wal.display()
        ));
    }
    // Checked before SQLite opens it: with a write-ahead log beside it,
    // SQLite would write the log's pages over a file that is not a
    // database.
    if size > 0 && !starts_as_sqlite(path) {
        return damaged(format!(
            "not an SQLite database ({size} bytes that do not start with `SQLite format 3`)"
        ));
    }
    if let Some((page_size, pages)) = header_size(path)
        && (size % page_size != 0 || size < page_size * pages)
    {
        return damaged(format!(
            "cut: {size} bytes, but its header says {pages} pages of {page_size} bytes"
        ));
    }
    Ok(())
}

/// True if `path` starts with the 16 bytes of an SQLite database header.
fn starts_as_sqlite(path: &Path) -> bool {
    use std::io::Read;
    let mut h = [0u8; 16];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut h))
        .is_ok_and(|()| &h == b"SQLite format 3\0")
}

/// The page size and page count an SQLite file's header gives, when the
/// count is valid (SQLite 3.7.0 and newer keep it up to date).
fn header_size(path: &Path) -> Option<(u64, u64)> {
    use std::io::Read;
    let mut h = [0u8; 100];
    std::fs::File::open(path).ok()?.read_exact(&mut h).ok()?;
    if &h[..16] != b"SQLite format 3\0" || h[24..28] != h[92..96] {
        return None;
    }
    let page_size = match u16::from_be_bytes([h[16], h[17]]) {
        1 => 65536,
        n => u64::from(n),
    };
    let pages = u64::from(u32::from_be_bytes([h[28], h[29], h[30], h[31]]));
    (page_size >= 512 && pages > 0).then_some((page_size, pages))
}

/// Creates a new database with its schema under a temporary name and links
/// it into place, so that no run killed meanwhile leaves an empty file. If
/// another program created it meanwhile, that one is kept.
fn create_new(path: &Path) -> Result<(), HostDbError> {
    let mut name = path.as_os_str().to_os_string();
    name.push(format!(".new-{}", std::process::id()));
    let tmp = PathBuf::from(name);
    let io = |source: std::io::Error| HostDbError::Io {
        path: path.to_path_buf(),
        source,
    };
    let _ = std::fs::remove_file(&tmp);
    let conn = Connection::open(&tmp).map_err(|e| sqlite_error(&tmp, e))?;
    conn.execute_batch(SCHEMA)
        .map_err(|e| sqlite_error(&tmp, e))?;
    drop(conn);
    std::fs::File::open(&tmp)
        .and_then(|f| f.sync_all())
        .map_err(io)?;
    let linked = std::fs::hard_link(&tmp, path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io(e)),
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        crate::atomic::sync_dir(dir).map_err(io)?;
    }
    Ok(())
}

/// `PRAGMA quick_check`: every page and index of the file is consistent (a
/// cut or flipped file is caught here, before the fetcher writes to it).
fn quick_check(conn: &Connection, path: &Path) -> Result<(), HostDbError> {
    let mut stmt = conn
        .prepare("PRAGMA quick_check(5)")
        .map_err(|e| sqlite_error(path, e))?;
    let problems: Vec<String> = stmt
        .query_map([], |r| r.get(0))
        .and_then(|rows| rows.collect())
        .map_err(|e| sqlite_error(path, e))?;
    if problems.len() == 1 && problems[0] == "ok" {
        return Ok(());
    }
    Err(HostDbError::Damaged {
        path: path.to_path_buf(),
        problem: format!("quick_check: {}", problems.join("; ")),
    })
}

fn user_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.pragma_query_value(None, "user_version", |r| r.get(0))
}

/// Tables, indexes, views and triggers in the database.
fn schema_objects(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))
}

/// Builds a [`HostState`] from a row of [`SELECT_HOST`]. Values out of range
/// (say, from a hand edit) are conversion errors, not panics.
fn row_to_state(row: &rusqlite::Row<'_>) -> rusqlite::Result<HostState> {
    let robots_status: Option<u16> = row.get(1)?;
    let robots = match robots_status {
        None => None,
        Some(status) => {
            let body = row.get::<_, Option<Vec<u8>>>(2)?.unwrap_or_default();
            let sitemaps = match row.get::<_, Option<String>>(11)? {
                Some(text) => text
                    .lines()
                    .filter(|l| !l.is_empty())
                    .map(str::to_string)
                    .collect(),
                // Stored before the column existed: the body says.
                None if (200..300).contains(&status) => crate::sitemaps::in_robots_txt(&body),
                None => Vec::new(),
            };
            Some(RobotsEntry {
                status,
                body,
                fetched_ms: row.get::<_, Option<i64>>(3)?.unwrap_or(0),
                sitemaps,
            })
        }
    };
    let host: String = row.get(0)?;
    let times: Option<String> = row.get(5)?;
    let response_times_ms = match times.as_deref() {
        None | Some("") => Vec::new(),
        Some(text) => parse_times(text).map_err(|message| {
            rusqlite::Error::FromSqlConversionFailure(
                5,
                rusqlite::types::Type::Text,
                format!("host {host}: response_times_ms {text:?}: {message}").into(),
            )
        })?,
    };
    Ok(HostState {
        host,
        robots,
        crawl_delay_ms: row.get(4)?,
        response_times_ms,
        errors_total: row.get(6)?,
        consecutive_errors: row.get(7)?,
        pages_total: row.get(8)?,
        last_contact_ms: row.get(9)?,
        next_contact_ms: row.get(10)?,
        failing_since_ms: row.get(12)?,
        bytes_total: row.get(13)?,
    })
}

/// Parses `12,340,5`: the last five values are kept, oldest first.
fn parse_times(text: &str) -> Result<Vec<u32>, String> {
    let mut times = text
        .split(',')
        .map(|t| {
            t.trim()
                .parse::<u32>()
                .map_err(|_| format!("{t:?} is not a number of milliseconds"))
        })
        .collect::<Result<Vec<u32>, String>>()?;
    if times.len() > 5 {
        times.drain(..times.len() - 5);
    }
    Ok(times)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{Rng, TempDir};
    use rusqlite::OpenFlags;

    fn full_state(host: &str) -> HostState {
        HostState {
            host: host.into(),
            robots: Some(RobotsEntry {
                status: 200,
                body: b"User-agent: *\nDisallow: /private\n\x00\xff binary too".to_vec(),
                fetched_ms: 1_700_000_000_123,
                sitemaps: vec![
                    "https://full.example/sitemap.xml".into(),
                    "https://cdn.example/full.xml.gz".into(),
                ],
            }),
            crawl_delay_ms: Some(2_500),
            response_times_ms: vec![10, 20, 30, 40, u32::MAX],
            errors_total: i64::MAX as u64,
            consecutive_errors: u32::MAX,
            pages_total: 123_456_789,
            last_contact_ms: Some(1_700_000_100_000),
            next_contact_ms: Some(1_700_000_102_500),
            failing_since_ms: Some(1_699_000_000_000),
            bytes_total: i64::MAX as u64,
        }
    }

    /// A second, independent connection, as `sqlite3 hosts.db` would make.
    fn inspector(path: &Path) -> Connection {
        Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap()
    }

    #[test]
    fn every_field_round_trips() {
        let dir = TempDir::new("roundtrip");
        let mut db = HostDb::open(dir.join("hosts.db")).unwrap();
        let states = vec![
            full_state("full.example"),
            HostState {
                host: "unreachable.example".into(),
                robots: Some(RobotsEntry {
                    status: 0,
                    body: Vec::new(),
                    fetched_ms: -5,
                    sitemaps: Vec::new(),
                }),
                response_times_ms: vec![7],
                errors_total: 3,
                consecutive_errors: 3,
                last_contact_ms: Some(0),
                ..HostState::default()
            },
            HostState {
                host: "never-contacted.example".into(),
                ..HostState::default()
            },
        ];
        db.put_many(&states).unwrap();
        for s in &states {
            assert_eq!(db.get(&s.host).unwrap().as_ref(), Some(s));
        }
        assert_eq!(db.count().unwrap(), 3);
    }

    #[test]
    fn an_empty_file_beside_its_write_ahead_log_is_refused_and_the_log_kept() {
        let dir = TempDir::new("empty-wal");
        let path = dir.join("hosts.db");
        let wal = dir.join("hosts.db-wal");
        std::fs::write(&path, b"").unwrap();
        std::fs::write(&wal, b"pages that only the log holds").unwrap();
        for read_only in [false, true] {
            let err = if read_only {
                HostDb::open_read_only(&path).err()
            } else {
                HostDb::open(&path).err()
            };
            let err = err.expect("an empty hosts.db is refused").to_string();
            assert!(
                err.contains("empty") && err.contains("hosts.db-wal"),
                "read_only {read_only}: {err}"
            );
            assert_eq!(
                std::fs::read(&wal).unwrap(),
                b"pages that only the log holds",
                "read_only {read_only}: the log is left as it was"
            );
            assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
        }
    }

    #[test]
    fn a_missing_host_is_none() {
        let dir = TempDir::new("missing");
        let mut db = HostDb::open(dir.join("hosts.db")).unwrap();
        assert_eq!(db.get("nowhere.example").unwrap(), None);
        db.put_many(&[full_state("a.example")]).unwrap();
        assert_eq!(db.get("nowhere.example").unwrap(), None);
        assert_eq!(db.get("A.EXAMPLE").unwrap(), None, "hosts are exact keys");
        assert_eq!(db.count().unwrap(), 1);
    }

    #[test]
    fn held_after_lists_the_hosts_held_later_only() {
        let dir = TempDir::new("held");
        let mut db = HostDb::open(dir.join("hosts.db")).unwrap();
        let state = |host: &str, next: Option<i64>| HostState {
            host: host.into(),
            next_contact_ms: next,
            ..HostState::default()
        };
        db.put_many(&[
            state("past.test", Some(1_000)),
            state("never.test", None),
            state("later.test", Some(5_000)),
        ])
        .unwrap();
        assert_eq!(
            db.held_after(2_000).unwrap(),
            vec![("later.test".to_string(), 5_000)]
        );
        assert_eq!(db.held_after(5_000).unwrap(), vec![]);
    }

    #[test]
    fn put_replaces_an_existing_host() {
        let dir = TempDir::new("upsert");
        let mut db = HostDb::open(dir.join("hosts.db")).unwrap();
        let mut s = full_state("a.example");
        db.put_many(std::slice::from_ref(&s)).unwrap();
        s.robots = None;
        s.crawl_delay_ms = None;
        s.response_times_ms.clear();
        s.last_contact_ms = None;
        s.pages_total += 1;
        db.put_many(std::slice::from_ref(&s)).unwrap();
        assert_eq!(db.get("a.example").unwrap(), Some(s));
        assert_eq!(db.count().unwrap(), 1);
    }

    #[test]
    fn reopening_keeps_the_data() {
        let dir = TempDir::new("reopen");
        let path = dir.join("hosts.db");
        {
            let mut db = HostDb::open(&path).unwrap();
            db.put_many(&[full_state("a.example"), full_state("b.example")])
                .unwrap();
        }
        let db = HostDb::open(&path).unwrap();
        assert_eq!(db.count().unwrap(), 2);
        assert_eq!(db.get("b.example").unwrap(), Some(full_state("b.example")));
    }

    #[test]
    fn a_hundred_thousand_hosts_in_one_transaction() {
        let dir = TempDir::new("many");
        let path = dir.join("hosts.db");
        let mut db = HostDb::open(&path).unwrap();
        let states: Vec<HostState> = (0..100_000u32)
            .map(|i| {
                let mut s = HostState {
                    host: format!("host{i}.example"),
                    pages_total: u64::from(i),
                    ..HostState::default()
                };
                s.push_response_time(i % 1000);
                s
            })
            .collect();
        let start = std::time::Instant::now();
        db.put_many(&states).unwrap();
        println!("put_many of 100,000 hosts: {:?}", start.elapsed());
        assert_eq!(db.count().unwrap(), 100_000);
        for i in [0usize, 1, 4_999, 77_777, 99_999] {
            assert_eq!(db.get(&states[i].host).unwrap().as_ref(), Some(&states[i]));
        }
        // The lookup is by key: SQLite searches the primary-key index
        // instead of scanning the table.
        let plan: Vec<String> = inspector(&path)
            .prepare(&format!("EXPLAIN QUERY PLAN {SELECT_HOST}"))
            .unwrap()
            .query_map(["host1.example"], |r| r.get::<_, String>(3))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let plan = plan.join("; ");
        assert!(plan.contains("SEARCH") && !plan.contains("SCAN"), "{plan}");
    }

    #[test]
    fn a_failing_batch_stores_nothing() {
        let dir = TempDir::new("rollback");
        let mut db = HostDb::open(dir.join("hosts.db")).unwrap();
        let mut bad = full_state("bad.example");
        bad.errors_total = u64::MAX; // SQLite integers are signed 64-bit
        let e = db.put_many(&[full_state("good.example"), bad]).unwrap_err();
        assert!(e.to_string().contains("hosts.db"), "{e}");
        assert_eq!(db.count().unwrap(), 0, "the whole batch is one transaction");
        assert_eq!(db.get("good.example").unwrap(), None);
    }

    #[test]
    fn it_is_inspectable_by_another_connection_while_open() {
        let dir = TempDir::new("inspect");
        let path = dir.join("hosts.db");
        let mut db = HostDb::open(&path).unwrap();
        db.put_many(&[full_state("a.example")]).unwrap();

        let other = inspector(&path);
        // The documented query.
        let row: (String, i64, i64, i64) = other
            .query_row(
                "select host, robots_status, crawl_delay_ms, errors_total from hosts",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .unwrap();
        assert_eq!(row, ("a.example".into(), 200, 2_500, i64::MAX));
        let times: String = other
            .query_row("select response_times_ms from hosts", [], |r| r.get(0))
            .unwrap();
        assert_eq!(times, format!("10,20,30,40,{}", u32::MAX));
        let mode: String = other
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        let version: i64 = other
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        let sync: i64 = db
            .conn
            .query_row("PRAGMA synchronous", [], |r| r.get(0))
            .unwrap();
        assert_eq!(sync, 1, "synchronous=NORMAL");

        // The columns are exactly the documented schema.
        let columns: Vec<(String, String, bool, bool)> = other
            .prepare("PRAGMA table_info(hosts)")
            .unwrap()
            .query_map([], |r| {
                Ok((
                    r.get(1)?,
                    r.get(2)?,
                    r.get::<_, i64>(3)? != 0,
                    r.get::<_, i64>(5)? != 0,
                ))
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let expected = [
            ("host", "TEXT", false, true),
            ("robots_status", "INTEGER", false, false),
            ("robots_body", "BLOB", false, false),
            ("robots_fetched_ms", "INTEGER", false, false),
            ("crawl_delay_ms", "INTEGER", false, false),
            ("response_times_ms", "TEXT", false, false),
            ("errors_total", "INTEGER", true, false),
            ("consecutive_errors", "INTEGER", true, false),
            ("pages_total", "INTEGER", true, false),
            ("last_contact_ms", "INTEGER", false, false),
            ("next_contact_ms", "INTEGER", false, false),
            ("sitemaps", "TEXT", false, false),
            ("failing_since_ms", "INTEGER", false, false),
            ("bytes_total", "INTEGER", true, false),
        ];
        let expected: Vec<(String, String, bool, bool)> = expected
            .iter()
            .map(|&(n, t, nn, pk)| (n.to_string(), t.to_string(), nn, pk))
            .collect();
        assert_eq!(columns, expected);
    }

    #[test]
    fn a_database_from_a_newer_build_is_refused_untouched() {
        let dir = TempDir::new("future");
        let path = dir.join("hosts.db");
        {
            let c = Connection::open(&path).unwrap();
            c.execute_batch(
                "CREATE TABLE hosts (host TEXT PRIMARY KEY, more TEXT); PRAGMA user_version = 5;",
            )
            .unwrap();
        }
        let e = HostDb::open(&path).unwrap_err();
        assert!(
            matches!(
                e,
                HostDbError::Version {
                    found: 5,
                    expected: 4,
                    ..
                }
            ),
            "{e:?}"
        );
        let msg = e.to_string();
        assert!(
            msg.contains("hosts.db") && msg.contains("version 5"),
            "{msg}"
        );
        assert!(msg.contains("move the file away"), "says what to do: {msg}");
        let mode: String = inspector(&path)
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "delete", "the refused file was not changed");
    }

    /// A version 1 file as the first release wrote it.
    fn version_1_file(path: &Path) {
        let c = Connection::open(path).unwrap();
        c.execute_batch(
            "CREATE TABLE hosts (host TEXT PRIMARY KEY, robots_status INTEGER, robots_body BLOB, \
             robots_fetched_ms INTEGER, crawl_delay_ms INTEGER, response_times_ms TEXT, \
             errors_total INTEGER NOT NULL DEFAULT 0, consecutive_errors INTEGER NOT NULL \
             DEFAULT 0, pages_total INTEGER NOT NULL DEFAULT 0, last_contact_ms INTEGER); \
             INSERT INTO hosts VALUES ('old.example', 200, X'557365722d6167656e743a202a0a', \
             1700000000000, 2000, '10,20', 1, 0, 7, 1700000000500); \
             PRAGMA user_version = 1;",
        )
        .unwrap();
    }

    fn old_state() -> HostState {
        HostState {
            host: "old.example".into(),
            robots: Some(RobotsEntry {
                status: 200,
                body: b"User-agent: *\n".to_vec(),
                fetched_ms: 1_700_000_000_000,
                sitemaps: Vec::new(),
            }),
            crawl_delay_ms: Some(2000),
            response_times_ms: vec![10, 20],
            errors_total: 1,
            consecutive_errors: 0,
            pages_total: 7,
            last_contact_ms: Some(1_700_000_000_500),
            next_contact_ms: None,
            failing_since_ms: None,
            bytes_total: 0,
        }
    }

    #[test]
    fn a_version_1_file_is_read_as_it_is_and_upgraded_to_write() {
        let dir = TempDir::new("v1");
        let path = dir.join("hosts.db");
        version_1_file(&path);
        let before = std::fs::read(&path).unwrap();
        let ro = HostDb::open_read_only(&path)
            .unwrap()
            .expect("the file exists");
        assert_eq!(ro.get("old.example").unwrap(), Some(old_state()));
        drop(ro);
        assert_eq!(
            std::fs::read(&path).unwrap(),
            before,
            "read-only changes nothing"
        );

        let mut db = HostDb::open(&path).unwrap();
        assert_eq!(db.get("old.example").unwrap(), Some(old_state()));
        let mut s = old_state();
        s.next_contact_ms = Some(1_700_000_009_000);
        db.put_many(std::slice::from_ref(&s)).unwrap();
        assert_eq!(db.get("old.example").unwrap(), Some(s.clone()));
        drop(db);
        let version: i64 = inspector(&path)
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        let ro = HostDb::open_read_only(&path).unwrap().unwrap();
        assert_eq!(ro.get("old.example").unwrap(), Some(s));
    }

    /// A version 2 file (before the `sitemaps` column): one host whose
    /// robots.txt names a sitemap, one whose robots.txt was a 404.
    fn version_2_file(path: &Path) {
        let c = Connection::open(path).unwrap();
        c.execute_batch(
            "CREATE TABLE hosts (host TEXT PRIMARY KEY, robots_status INTEGER, robots_body BLOB, \
             robots_fetched_ms INTEGER, crawl_delay_ms INTEGER, response_times_ms TEXT, \
             errors_total INTEGER NOT NULL DEFAULT 0, consecutive_errors INTEGER NOT NULL \
             DEFAULT 0, pages_total INTEGER NOT NULL DEFAULT 0, last_contact_ms INTEGER, \
             next_contact_ms INTEGER); \
             INSERT INTO hosts VALUES ('two.example', 200, \
             CAST('User-agent: *' || char(10) || 'Sitemap: http://two.example/s.xml' AS BLOB), \
             1700000000000, NULL, '10', 0, 0, 1, 1700000000500, 1700000001000); \
             INSERT INTO hosts VALUES ('gone.example', 404, X'', 1700000000000, NULL, NULL, \
             0, 0, 0, NULL, NULL); \
             PRAGMA user_version = 2;",
        )
        .unwrap();
    }

    #[test]
    fn a_version_2_file_reads_its_sitemaps_from_the_body_and_is_upgraded_to_write() {
        let dir = TempDir::new("v2");
        let path = dir.join("hosts.db");
        version_2_file(&path);
        let before = std::fs::read(&path).unwrap();
        let ro = HostDb::open_read_only(&path).unwrap().unwrap();
        let two = ro.get("two.example").unwrap().unwrap();
        let robots = two.robots.as_ref().unwrap();
        assert_eq!(robots.sitemaps, ["http://two.example/s.xml"]);
        assert_eq!(two.next_contact_ms, Some(1_700_000_001_000));
        let gone = ro.get("gone.example").unwrap().unwrap();
        assert!(gone.robots.unwrap().sitemaps.is_empty());
        drop(ro);
        assert_eq!(
            std::fs::read(&path).unwrap(),
            before,
            "read-only changes nothing"
        );

        let mut db = HostDb::open(&path).unwrap();
        assert_eq!(db.get("two.example").unwrap().as_ref(), Some(&two));
        let mut changed = two.clone();
        changed.robots.as_mut().unwrap().sitemaps = vec!["http://x.example/a.xml".into()];
        db.put_many(std::slice::from_ref(&changed)).unwrap();
        drop(db);
        let c = inspector(&path);
        let version: i64 = c
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        // The column as the sqlite3 command of docs/formats.md shows it.
        let rows: Vec<(String, Option<String>)> = c
            .prepare("SELECT host, sitemaps FROM hosts ORDER BY host")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            rows,
            [
                ("gone.example".to_string(), None),
                (
                    "two.example".to_string(),
                    Some("http://x.example/a.xml".to_string())
                ),
            ]
        );
        let ro = HostDb::open_read_only(&path).unwrap().unwrap();
        assert_eq!(ro.get("two.example").unwrap(), Some(changed));
    }

    #[test]
    fn a_version_3_file_is_read_as_it_is_and_upgraded_to_write() {
        let dir = TempDir::new("v3");
        let path = dir.join("hosts.db");
        {
            let c = Connection::open(&path).unwrap();
            c.execute_batch(
                "CREATE TABLE hosts (host TEXT PRIMARY KEY, robots_status INTEGER, \
                 robots_body BLOB, robots_fetched_ms INTEGER, crawl_delay_ms INTEGER, \
                 response_times_ms TEXT, errors_total INTEGER NOT NULL DEFAULT 0, \
                 consecutive_errors INTEGER NOT NULL DEFAULT 0, pages_total INTEGER NOT NULL \
                 DEFAULT 0, last_contact_ms INTEGER, next_contact_ms INTEGER, sitemaps TEXT); \
                 INSERT INTO hosts VALUES ('three.example', NULL, NULL, NULL, NULL, '10', 4, 3, \
                 2, 1700000000500, 1700000001000, NULL); \
                 PRAGMA user_version = 3;",
            )
            .unwrap();
        }
        let before = std::fs::read(&path).unwrap();
        let ro = HostDb::open_read_only(&path).unwrap().unwrap();
        let three = ro.get("three.example").unwrap().unwrap();
        assert_eq!(
            (
                three.consecutive_errors,
                three.failing_since_ms,
                three.bytes_total
            ),
            (3, None, 0)
        );
        drop(ro);
        assert_eq!(
            std::fs::read(&path).unwrap(),
            before,
            "read-only changes nothing"
        );
        let mut db = HostDb::open(&path).unwrap();
        let mut s = db.get("three.example").unwrap().unwrap();
        assert_eq!(s, three);
        s.failing_since_ms = Some(1_700_000_000_000);
        s.bytes_total = 12_345;
        db.put_many(std::slice::from_ref(&s)).unwrap();
        drop(db);
        let version: i64 = inspector(&path)
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        let ro = HostDb::open_read_only(&path).unwrap().unwrap();
        assert_eq!(ro.get("three.example").unwrap(), Some(s));
    }

    #[test]
    fn read_only_without_a_file_is_none_and_creates_nothing() {
        let dir = TempDir::new("ro-missing");
        let path = dir.join("hosts.db");
        assert!(HostDb::open_read_only(&path).unwrap().is_none());
        assert!(!path.exists());
    }

    #[test]
    fn another_programs_database_is_refused() {
        let dir = TempDir::new("foreign");
        let path = dir.join("hosts.db");
        Connection::open(&path)
            .unwrap()
            .execute_batch("CREATE TABLE notes (t TEXT);")
            .unwrap();
        let e = HostDb::open(&path).unwrap_err();
        assert!(matches!(e, HostDbError::Foreign { .. }), "{e:?}");
        assert!(e.to_string().contains("not a host database"), "{e}");
    }

    #[test]
    fn a_file_that_is_not_sqlite_is_an_error_naming_it() {
        let dir = TempDir::new("garbage");
        let path = dir.join("hosts.db");
        std::fs::write(&path, vec![0xA5u8; 8192]).unwrap();
        let e = HostDb::open(&path).unwrap_err();
        assert!(matches!(e, HostDbError::Damaged { .. }), "{e:?}");
        assert!(e.to_string().contains("hosts.db"), "{e}");
    }

    #[test]
    fn a_cut_or_emptied_database_is_refused_unchanged() {
        let dir = TempDir::new("cutdb");
        let path = dir.join("hosts.db");
        {
            let mut db = HostDb::open(&path).unwrap();
            let hosts: Vec<HostState> = (0..300)
                .map(|i| full_state(&format!("h{i}.example")))
                .collect();
            db.put_many(&hosts).unwrap();
        }
        let good = std::fs::read(&path).unwrap();
        for damaged in [&good[..0], &good[..good.len() - 5], &good[..good.len() / 2]] {
            std::fs::write(&path, damaged).unwrap();
            for e in [
                HostDb::open(&path).map(|_| ()).unwrap_err(),
                HostDb::open_read_only(&path).map(|_| ()).unwrap_err(),
            ] {
                assert!(matches!(e, HostDbError::Damaged { .. }), "{e:?}");
                assert!(e.to_string().contains(".recover"), "{e}");
            }
            assert_eq!(std::fs::read(&path).unwrap(), damaged, "unchanged");
        }
    }

    #[test]
    fn hand_edited_bad_values_are_errors_not_panics() {
        let dir = TempDir::new("handedit");
        let path = dir.join("hosts.db");
        let mut db = HostDb::open(&path).unwrap();
        db.put_many(&[full_state("a.example"), full_state("b.example")])
            .unwrap();
        let editor = Connection::open(&path).unwrap();
        editor
            .execute(
                "UPDATE hosts SET response_times_ms = '5,abc' WHERE host = 'a.example'",
                [],
            )
            .unwrap();
        editor
            .execute(
                "UPDATE hosts SET errors_total = -1 WHERE host = 'b.example'",
                [],
            )
            .unwrap();
        let e = db.get("a.example").unwrap_err();
        assert!(e.to_string().contains("\"abc\""), "{e}");
        assert!(e.to_string().contains("host a.example"), "{e}");
        assert!(db.get("b.example").is_err());

        editor
            .execute(
                "UPDATE hosts SET response_times_ms = '1,2,3,4,5,6,7' WHERE host = 'a.example'",
                [],
            )
            .unwrap();
        let s = db.get("a.example").unwrap().unwrap();
        assert_eq!(
            s.response_times_ms,
            vec![3, 4, 5, 6, 7],
            "the last five are kept"
        );
    }

    #[test]
    fn a_connection_opened_to_write_leaves_the_file_alone_when_dropped() {
        let dir = TempDir::new("drop-wal");
        let path = dir.join("hosts.db");
        let beside = || {
            ["-wal", "-shm"]
                .iter()
                .filter(|s| dir.join(&format!("hosts.db{s}")).exists())
                .count()
        };
        let mut db = HostDb::open(&path).unwrap();
        db.put_many(&[full_state("a.example")]).unwrap();
        assert_eq!(beside(), 2, "in WAL mode while open");
        // Dropped without `checkpoint` (an error on the way out).
        drop(db);
        assert_eq!(beside(), 0);
        // Byte 18 of the header: 1 out of WAL mode, 2 in it.
        assert_eq!(std::fs::read(&path).unwrap()[18], 1);
        // A reader then leaves nothing beside it either.
        let r = HostDb::open_read_only(&path).unwrap().unwrap();
        assert!(r.get("a.example").unwrap().is_some());
        drop(r);
        assert_eq!(beside(), 0);
        // Nor does a connection that wrote and read nothing (a fetch whose
        // hosts were all held): SQLite would not leave WAL mode before its
        // first read.
        let db = HostDb::open(&path).unwrap();
        assert!(matches!(db.checkpoint(), Ok(true)));
        drop(db);
        assert_eq!(beside(), 0);
        assert_eq!(std::fs::read(&path).unwrap()[18], 1);
    }

    #[test]
    fn a_damaged_database_gives_errors_naming_it_never_a_panic() {
        let dir = TempDir::new("damaged");
        let good_path = dir.join("good.db");
        let states: Vec<HostState> = (0..3000)
            .map(|i| {
                let mut s = full_state(&format!("host{i}.example"));
                if let Some(r) = s.robots.as_mut() {
                    r.body = format!("User-agent: *\nDisallow: /{i}/\n")
                        .repeat(20)
                        .into_bytes();
                }
                s
            })
            .collect();
        HostDb::open(&good_path).unwrap().put_many(&states).unwrap();
        let good = std::fs::read(&good_path).unwrap();
        assert!(good.len() > 200_000, "{} bytes", good.len());

        let mut rng = Rng::new(31);
        let path = dir.join("hosts.db");
        let page = 4096;
        let errors = std::cell::Cell::new(0);
        for round in 0..40 {
            let mut bytes = good.clone();
            match round % 4 {
                0 => bytes.truncate(rng.below(good.len())),
                1 => {
                    let at = page * (1 + rng.below(good.len() / page - 1));
                    for b in &mut bytes[at..at + page] {
                        *b = rng.next_u64() as u8;
                    }
                }
                2 => {
                    for _ in 0..100 {
                        let at = rng.below(bytes.len());
                        bytes[at] ^= 1 << rng.below(8);
                    }
                }
                _ => {
                    for b in &mut bytes[16..16 + rng.below(84)] {
                        *b = rng.next_u64() as u8;
                    }
                }
            }
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(dir.join(&format!("hosts.db{suffix}")));
            }
            std::fs::write(&path, &bytes).unwrap();
            let named = |e: HostDbError| {
                assert!(e.to_string().contains("hosts.db"), "round {round}: {e}");
                errors.set(errors.get() + 1);
            };
            let mut db = match HostDb::open(&path) {
                Ok(db) => db,
                Err(e) => {
                    named(e);
                    continue;
                }
            };
            for i in [0, 1, 1500, 2999] {
                // What a damaged page returns is SQLite's business; an
                // error must name the file.
                if let Err(e) = db.get(&format!("host{i}.example")) {
                    named(e);
                }
            }
            if let Err(e) = db.count() {
                named(e);
            }
            if let Err(e) = db.put_many(&states[..10]) {
                named(e);
            }
        }
        assert!(errors.get() >= 20, "only {} errors", errors.get());
    }
}
