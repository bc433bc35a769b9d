//! Paths inside a crawl directory (docs/formats.md says what each file holds).
//!
//! ```text
//! CRAWL/crawl.toml                 optional settings
//! CRAWL/seen.bloom                 every URL ever scheduled (memory-mapped Bloom filter and
//!                                  its journal, `crate::bloom`)
//! CRAWL/hosts.db                   per-host state (SQLite)
//! CRAWL/scope.seeds                registrable domains of the seeds, one per line
//! CRAWL/consumed.txt               fetched runs already turned into segments
//! CRAWL/backlog.v5.tsv.zst         URLs over a cap, waiting for a later segment
//! CRAWL/segments/ID.v5.tsv.zst     segments; ID is 00001, 00002, ... or 00002-p01 with partitions
//! CRAWL/fetched/ID/                what fetching segment ID produced (DONE when complete):
//!   crawl-ID-*.warc.gz, crawl.log, leftover.v5.tsv.zst, stats.json, DONE; while a
//!   fetcher works on it, .lock and .work.tsv
//! CRAWL/logs/                      one log per program run (round-NNNNN.log per crawl.sh round)
//! CRAWL/contacts/ID.tsv            requests of fetcher run ID as they start (until it ends cleanly)
//! CRAWL/rounds.v1.tsv              the round journal: one line per round ended
//! CRAWL/round.json                 the round in progress and the driver's last step
//! CRAWL/STOP                       made by the user: a driver stops at the next step
//! CRAWL/shards.toml                S and the shard key of a sharded crawl (`common::shards`)
//! CRAWL/shards/JJJ/                shard J's state, laid out like the root above
//! ```
//! A shard view ([`CrawlDir::shard`]) is a `CrawlDir` whose state paths
//! point into `shards/JJJ/` and whose shared paths (`crawl.toml`,
//! `scope.seeds`, `STOP`, `shards.toml`) point to the crawl root, so that a
//! program works on one shard as on a whole unsharded crawl.
//! Files in the segment format carry their format version in their name; the
//! paths below name the file that exists in a version this build reads
//! (newest first), or else the one to write in the current version.

use std::io;
use std::path::{Path, PathBuf};

use crate::segment;

/// Marker written last, atomically, by the fetcher into `fetched/ID/`.
pub const DONE_FILE: &str = "DONE";
/// The fetcher's per-URL log inside `fetched/ID/`.
pub const CRAWL_LOG_FILE: &str = "crawl.log";
/// Totals of a fetcher run inside `fetched/ID/`.
pub const STATS_FILE: &str = "stats.json";
/// The lock a fetcher holds on `fetched/ID/` while it works on the run.
pub const FETCH_LOCK_FILE: &str = ".lock";
/// Base name of the leftover segment inside `fetched/ID/` (segment format).
pub const LEFTOVER_NAME: &str = "leftover";
/// The fetcher's work file inside `fetched/ID/`: the segment decompressed,
/// removed when the run ends.
pub const WORK_FILE: &str = ".work.tsv";
/// First part of the names of the fetcher's WARC files inside `fetched/ID/`
/// (`crawl-ID-TIMESTAMP-SERIAL-HOST.warc.gz`, see [`warc_prefix`]).
pub const WARC_PREFIX: &str = "crawl";

/// The directory inside the crawl directory where `segmenter` stages a
/// round's files until its commit moves them in.
pub const SEGMENTER_STAGING_DIR: &str = ".segmenter-staging";

/// Where the previous generation of a state file is kept: `NAME.prev`.
pub fn prev_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(".prev");
    PathBuf::from(name)
}

/// The shard file's name at the crawl root (format: `common::shards`).
pub const SHARDS_FILE: &str = "shards.toml";

/// The round journal's file name (format version 1; see [`crate::rounds`]).
pub const ROUNDS_FILE: &str = "rounds.v1.tsv";

/// `crawl-ID`: the prefix of the names of run ID's WARC files.
pub fn warc_prefix(id: &str) -> String {
    format!("{WARC_PREFIX}-{id}")
}

/// A crawl directory, or one shard's view of it. Cheap to clone; only
/// holds paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrawlDir {
    /// Where the state lives: the crawl root, or `shards/JJJ/` of a view.
    root: PathBuf,
    /// The crawl root (shared files).
    top: PathBuf,
}

impl CrawlDir {
    /// Names a crawl directory without touching the disk.
    pub fn new(root: impl Into<PathBuf>) -> CrawlDir {
        let root = root.into();
        CrawlDir {
            top: root.clone(),
            root,
        }
    }

    /// Shard `j`'s view of the crawl (`shards/JJJ/`), without touching the disk.
    pub fn shard(&self, j: u32) -> CrawlDir {
        CrawlDir {
            root: shard_dir(&self.top, j),
            top: self.top.clone(),
        }
    }

    /// The crawl root, where the shared files are (the same as
    /// [`CrawlDir::root`] for a crawl that is not a shard view).
    pub fn top(&self) -> &Path {
        &self.top
    }

    /// The whole crawl this is a view of (itself when it is not a view).
    pub fn whole(&self) -> CrawlDir {
        CrawlDir::new(&self.top)
    }

    /// True for a shard's view.
    pub fn is_shard(&self) -> bool {
        self.root != self.top
    }

    /// Creates the subdirectories (`segments/`, `fetched/`, `logs/`) of the
    /// state directory (of a view, too).
    pub fn create_subdirs(&self) -> io::Result<()> {
        for d in [self.segments_dir(), self.fetched_root(), self.logs_dir()] {
            std::fs::create_dir_all(d)?;
        }
        Ok(())
    }

    /// Creates the directory and its `segments/`, `fetched/` and `logs/` subdirectories.
    pub fn create(root: impl Into<PathBuf>) -> io::Result<CrawlDir> {
        let dir = CrawlDir::new(root);
        for d in [dir.segments_dir(), dir.fetched_root(), dir.logs_dir()] {
            std::fs::create_dir_all(d)?;
        }
        Ok(dir)
    }

    /// Opens an existing crawl directory; the error says how to create one
    /// (callers put the path in front of it).
    pub fn open(root: impl Into<PathBuf>) -> io::Result<CrawlDir> {
        let dir = CrawlDir::new(root);
        if !dir.root.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                no_such_crawl(&dir.root),
            ));
        }
        for d in [dir.segments_dir(), dir.fetched_root(), dir.logs_dir()] {
            std::fs::create_dir_all(d)?;
        }
        Ok(dir)
    }

    /// The state directory: the crawl directory itself, or `shards/JJJ/`
    /// of a shard's view.
    pub fn root(&self) -> &Path {
        &self.root
    }
    /// `crawl.toml` (at the crawl root).
    pub fn config_path(&self) -> PathBuf {
        self.top.join("crawl.toml")
    }
    /// `shards.toml` (at the crawl root): S and the key of a sharded crawl.
    pub fn shards_path(&self) -> PathBuf {
        self.top.join(SHARDS_FILE)
    }
    /// `seen.bloom`.
    pub fn bloom_path(&self) -> PathBuf {
        self.root.join("seen.bloom")
    }
    /// `seen.bloom.append`: the journal block a round adds to `seen.bloom`
    /// (only in a round's staging directory, see [`crate::bloom::journal`]).
    pub fn bloom_append_path(&self) -> PathBuf {
        self.root.join("seen.bloom.append")
    }
    /// `hosts.db`.
    pub fn hosts_db_path(&self) -> PathBuf {
        self.root.join("hosts.db")
    }
    /// `scope.seeds` (at the crawl root).
    pub fn scope_seeds_path(&self) -> PathBuf {
        self.top.join("scope.seeds")
    }
    /// `consumed.txt`.
    pub fn consumed_path(&self) -> PathBuf {
        self.root.join("consumed.txt")
    }
    /// `backlog.v5.tsv.zst` (or an older version's file, if that is there).
    pub fn backlog_path(&self) -> PathBuf {
        versioned(&self.root, "backlog")
    }
    /// `segments/`.
    pub fn segments_dir(&self) -> PathBuf {
        self.root.join("segments")
    }
    /// `fetched/`.
    pub fn fetched_root(&self) -> PathBuf {
        self.root.join("fetched")
    }
    /// `logs/`.
    pub fn logs_dir(&self) -> PathBuf {
        self.root.join("logs")
    }
    /// `rounds.v1.tsv`: the round journal ([`crate::rounds`]).
    pub fn rounds_path(&self) -> PathBuf {
        self.root.join(ROUNDS_FILE)
    }
    /// `round.json`: the round in progress, kept by the driver.
    pub fn round_state_path(&self) -> PathBuf {
        self.root.join("round.json")
    }
    /// `STOP`: a file the user makes to stop the crawl at the next step.
    pub fn stop_path(&self) -> PathBuf {
        self.top.join("STOP")
    }
    /// `logs/round-NNNNN.log`: the log of round `n` (its steps' output).
    pub fn round_log_path(&self, n: u64) -> PathBuf {
        self.logs_dir().join(format!("round-{n:05}.log"))
    }
    /// `logs/inject.log`: the log of a driver's first step, the injection.
    pub fn inject_log_path(&self) -> PathBuf {
        self.logs_dir().join("inject.log")
    }
    /// `contacts/`: one journal of requests per fetcher run that has not
    /// ended cleanly.
    pub fn contacts_dir(&self) -> PathBuf {
        self.root.join("contacts")
    }
    /// `contacts/ID.tsv`: the journal of fetcher run ID.
    pub fn contacts_path(&self, id: &str) -> PathBuf {
        self.contacts_dir().join(format!("{id}.tsv"))
    }
    /// `segments/ID.v5.tsv.zst` (or an older version's file, if that is there).
    pub fn segment_path(&self, id: &str) -> PathBuf {
        versioned(&self.segments_dir(), id)
    }
    /// `fetched/ID/`.
    pub fn fetched_dir(&self, id: &str) -> PathBuf {
        self.fetched_root().join(id)
    }
    /// `fetched/ID/leftover.v5.tsv.zst` (or an older version's file, if that is there).
    pub fn leftover_path(&self, id: &str) -> PathBuf {
        versioned(&self.fetched_dir(id), LEFTOVER_NAME)
    }
    /// `fetched/ID/.lock`: held by the fetcher working on run ID.
    pub fn fetch_lock_path(&self, id: &str) -> PathBuf {
        self.fetched_dir(id).join(FETCH_LOCK_FILE)
    }
    /// `fetched/ID/.work.tsv`: the work file of the fetcher working on run ID.
    pub fn work_path(&self, id: &str) -> PathBuf {
        self.fetched_dir(id).join(WORK_FILE)
    }
    /// `fetched/ID/crawl.log`.
    pub fn crawl_log_path(&self, id: &str) -> PathBuf {
        self.fetched_dir(id).join(CRAWL_LOG_FILE)
    }
    /// True when `fetched/ID/DONE` exists: the run is complete.
    pub fn is_fetched(&self, id: &str) -> bool {
        self.fetched_dir(id).join(DONE_FILE).is_file()
    }

    /// IDs of all segments in `segments/`, oldest first.
    pub fn segment_ids(&self) -> io::Result<Vec<String>> {
        let mut ids = Vec::new();
        for entry in read_dir_if_exists(&self.segments_dir())? {
            let name = entry.file_name();
            if let Some(id) = name.to_str().and_then(segment_id_of_file_name) {
                ids.push(id.to_string());
            }
        }
        ids.sort();
        ids.dedup();
        Ok(ids)
    }

    /// IDs of segments not yet fetched to completion, oldest first.
    pub fn pending_segments(&self) -> io::Result<Vec<String>> {
        let mut ids = self.segment_ids()?;
        ids.retain(|id| !self.is_fetched(id));
        Ok(ids)
    }

    /// IDs of complete fetcher runs (`fetched/ID/DONE` exists), oldest first.
    pub fn completed_runs(&self) -> io::Result<Vec<String>> {
        let mut ids = Vec::new();
        for entry in read_dir_if_exists(&self.fetched_root())? {
            if let Some(id) = entry.file_name().to_str()
                && self.is_fetched(id)
            {
                ids.push(id.to_string());
            }
        }
        ids.sort();
        Ok(ids)
    }

    /// The bytes of every WARC file of the crawl (`fetched/*/*.warc.gz` and
    /// `*.warc`, complete runs or not): what `max_crawl_bytes` counts. A
    /// file moved away (archived) no longer counts. Of a sharded crawl,
    /// every shard's (from any shard's view): the budget is the crawl's.
    pub fn warc_bytes(&self) -> io::Result<u64> {
        let mut roots = vec![self.whole().fetched_root()];
        for shard in read_dir_if_exists(&self.top.join("shards"))? {
            roots.push(shard.path().join("fetched"));
        }
        let mut total = 0u64;
        for root in roots {
            total += warc_bytes_in(&root)?;
        }
        Ok(total)
    }

    /// A new log file name for one run of `program`: `logs/PROGRAM-TIMESTAMP.log`.
    pub fn new_log_path(&self, program: &str) -> PathBuf {
        let stamp = crate::timefmt::compact_millis(std::time::SystemTime::now());
        self.logs_dir().join(format!("{program}-{stamp}.log"))
    }
}

/// The bytes of the WARC files in the runs under `fetched`, uploaded ones
/// included.
fn warc_bytes_in(fetched: &Path) -> io::Result<u64> {
    let mut total = 0u64;
    for run in read_dir_if_exists(fetched)? {
        let Ok(files) = std::fs::read_dir(run.path()) else {
            continue;
        };
        for f in files.flatten() {
            let name = f.file_name();
            let name = name.to_string_lossy();
            if (name.ends_with(".warc.gz") || name.ends_with(".warc"))
                && let Ok(m) = f.metadata()
            {
                total += m.len();
            }
        }
        // Files uploaded to the WARC store, whose local copy is gone.
        if let Ok(manifest) = crate::store::Manifest::read(&run.path()) {
            for up in manifest.uploads() {
                if crate::store::is_warc_name(&up.name) && !run.path().join(&up.name).exists() {
                    total += up.size;
                }
            }
        }
    }
    Ok(total)
}

/// `TOP/shards/JJJ`: shard `j`'s state directory.
pub fn shard_dir(top: &Path, j: u32) -> PathBuf {
    top.join("shards").join(format!("{j:03}"))
}

/// `DIR/BASE.vN.tsv.zst` for the newest version N this build reads whose
/// file exists, or else for the version it writes.
fn versioned(dir: &Path, base: &str) -> PathBuf {
    segment::READ_VERSIONS
        .iter()
        .map(|&v| dir.join(format!("{base}{}", segment::file_suffix(v))))
        .find(|p| p.exists())
        .unwrap_or_else(|| dir.join(format!("{base}{}", segment::FILE_SUFFIX)))
}

/// `00003.v5.tsv.zst` (or another version this build reads) → `00003`;
/// `None` for other names (temporary files included).
pub fn segment_id_of_file_name(name: &str) -> Option<&str> {
    let stem = name.strip_suffix(".tsv.zst")?;
    let (id, version) = stem.rsplit_once(".v")?;
    if !version
        .parse::<u32>()
        .is_ok_and(|v| segment::READ_VERSIONS.contains(&v))
    {
        return None;
    }
    is_id(id).then_some(id)
}

/// `consumed.txt`, as a list file ([`crate::listfile`]).
pub const CONSUMED_LIST: crate::listfile::ListKind = crate::listfile::ListKind {
    name: "consumed.txt",
    repair: "Repair: copy consumed.txt.prev (the round before) over it, or write the IDs of \
             the fetched runs already consumed, one a line; a run listed is never read again, \
             a run not listed is read again",
};

/// `scope.seeds`, as a list file ([`crate::listfile`]).
pub const SCOPE_SEEDS_LIST: crate::listfile::ListKind = crate::listfile::ListKind {
    name: "scope.seeds",
    repair: "Repair: copy scope.seeds.prev (the state before the last inject) over it, or \
             write the registrable domains of the seeds, one a line (`segmenter inject` adds \
             those of its seeds file)",
};

/// What is said of a crawl directory `root` that does not exist, after its
/// path: the commands that start a crawl there.
pub fn no_such_crawl(root: &Path) -> String {
    format!(
        "no such crawl directory; start a crawl there with `scripts/crawl.sh {0} --seeds \
         SEEDS_FILE` (or `segmenter inject {0} SEEDS_FILE`)",
        root.display()
    )
}

/// True if `id` can name a segment or a fetched run: ASCII letters, digits,
/// `-` and `_`, not starting with a dot.
pub fn is_id(id: &str) -> bool {
    !id.is_empty()
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn read_dir_if_exists(dir: &Path) -> io::Result<Vec<std::fs::DirEntry>> {
    match std::fs::read_dir(dir) {
        Ok(rd) => rd.collect(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segment_names() {
        assert_eq!(segment_id_of_file_name("00003.v1.tsv.zst"), Some("00003"));
        assert_eq!(
            segment_id_of_file_name("00003-p01.v1.tsv.zst"),
            Some("00003-p01")
        );
        assert_eq!(segment_id_of_file_name(".00003.v1.tsv.zst.tmp12"), None);
        assert_eq!(segment_id_of_file_name("00003.v2.tsv.zst"), Some("00003"));
        assert_eq!(segment_id_of_file_name("00003.v3.tsv.zst"), Some("00003"));
        assert_eq!(segment_id_of_file_name("00003.v5.tsv.zst"), Some("00003"));
        assert_eq!(segment_id_of_file_name("00003.v9.tsv.zst"), None);
        assert_eq!(segment_id_of_file_name("00003.tsv.zst"), None);
    }

    #[test]
    fn a_shard_view_keeps_state_in_its_directory_and_shares_the_rest() {
        let top = CrawlDir::new("/c");
        let v = top.shard(7);
        assert!(v.is_shard() && !top.is_shard());
        assert_eq!(v.root(), Path::new("/c/shards/007"));
        assert_eq!(v.top(), Path::new("/c"));
        assert_eq!(v.whole(), top);
        for (state, name) in [
            (v.bloom_path(), "seen.bloom"),
            (v.hosts_db_path(), "hosts.db"),
            (v.consumed_path(), "consumed.txt"),
            (v.segments_dir(), "segments"),
            (v.fetched_root(), "fetched"),
            (v.logs_dir(), "logs"),
            (v.contacts_dir(), "contacts"),
            (v.rounds_path(), ROUNDS_FILE),
        ] {
            assert_eq!(state, Path::new("/c/shards/007").join(name));
        }
        for (shared, name) in [
            (v.config_path(), "crawl.toml"),
            (v.scope_seeds_path(), "scope.seeds"),
            (v.stop_path(), "STOP"),
            (v.shards_path(), SHARDS_FILE),
        ] {
            assert_eq!(shared, Path::new("/c").join(name));
        }
    }

    #[test]
    fn pending_and_completed() {
        let tmp = crate::testutil::TempDir::new("crawldir");
        let root = tmp.join("crawl");
        let dir = CrawlDir::create(&root).unwrap();
        for id in ["00002", "00001"] {
            std::fs::write(dir.segment_path(id), b"").unwrap();
        }
        std::fs::create_dir_all(dir.fetched_dir("00001")).unwrap();
        assert_eq!(dir.pending_segments().unwrap(), ["00001", "00002"]);
        assert!(dir.completed_runs().unwrap().is_empty());
        std::fs::write(dir.fetched_dir("00001").join(DONE_FILE), b"").unwrap();
        assert_eq!(dir.pending_segments().unwrap(), ["00002"]);
        assert_eq!(dir.completed_runs().unwrap(), ["00001"]);
        // A segment of the older format version is found where it is.
        std::fs::rename(
            dir.segment_path("00002"),
            dir.segments_dir().join("00002.v1.tsv.zst"),
        )
        .unwrap();
        assert_eq!(dir.pending_segments().unwrap(), ["00002"]);
        assert!(dir.segment_path("00002").ends_with("00002.v1.tsv.zst"));
        assert!(dir.segment_path("00003").ends_with("00003.v5.tsv.zst"));
        std::fs::remove_dir_all(&root).unwrap();
    }
}
