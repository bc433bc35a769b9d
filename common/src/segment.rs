//! Segment files: the list of URLs a fetcher run takes.
//!
//! Format version 1, file suffix `.v1.tsv.zst`: zstd-compressed UTF-8 text,
//! one URL per line, six tab-separated fields, no header:
//!
//! ```text
//! host  url  hops  inlinks  via  tries
//! example.com  https://example.com/a  2  5  link  0      (fields separated by one tab)
//! ```
//! - `host`: the queue key (lower-case host, no port); lines of one registrable
//!   domain are adjacent, so `zstdcat F | cut -f1 | uniq -c` counts URLs per host.
//! - `url`: the canonical URL (no tab, no newline).
//! - `hops`: links followed from a seed (seeds are 0).
//! - `inlinks`: links to this URL found in the round that produced it.
//! - `via`: how it was found (see [`Via`]).
//! - `tries`: earlier attempts that failed and are being retried.
//!
//! Leftover files (`fetched/ID/leftover.v1.tsv.zst`) and the backlog use the same format.

use std::path::{Path, PathBuf};

/// File-name suffix of every file in the segment format, version included.
pub const FILE_SUFFIX: &str = ".v1.tsv.zst";
/// The format version written by this library.
pub const FORMAT_VERSION: u32 = 1;

/// How a URL came to be scheduled.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Via {
    /// From the seeds file.
    #[default]
    Seed,
    /// A link in a fetched page.
    Link,
    /// The `Location` of a redirect.
    Redirect,
    /// Not attempted by an earlier fetcher run (stopped early, host dropped).
    Leftover,
    /// Attempted and failed in a way worth retrying (timeout, 5xx, robots unavailable).
    Retry,
    /// Held back by a cap in an earlier round.
    Backlog,
    /// robots.txt (crawl log only; never in a segment).
    Robots,
}

impl Via {
    /// The word used in files.
    pub fn as_str(self) -> &'static str {
        match self {
            Via::Seed => "seed",
            Via::Link => "link",
            Via::Redirect => "redirect",
            Via::Leftover => "leftover",
            Via::Retry => "retry",
            Via::Backlog => "backlog",
            Via::Robots => "robots",
        }
    }

    /// Inverse of [`Via::as_str`].
    pub fn parse(s: &str) -> Option<Via> {
        Some(match s {
            "seed" => Via::Seed,
            "link" => Via::Link,
            "redirect" => Via::Redirect,
            "leftover" => Via::Leftover,
            "retry" => Via::Retry,
            "backlog" => Via::Backlog,
            "robots" => Via::Robots,
            _ => return None,
        })
    }
}

impl std::fmt::Display for Via {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One line of a segment. Readers refill the same record to avoid allocations.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SegmentRecord {
    /// Queue key: the URL's host.
    pub host: String,
    /// Canonical URL.
    pub url: String,
    /// Hops from a seed.
    pub hops: u32,
    /// In-links found this round.
    pub inlinks: u32,
    /// How it was found.
    pub via: Via,
    /// Earlier failed attempts.
    pub tries: u32,
}

/// A problem reading or writing a segment.
#[derive(Debug, thiserror::Error)]
pub enum SegmentError {
    /// I/O or decompression failed; the file cannot be read further.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// One line is not in the format. Not fatal: the next call continues
    /// with the following line.
    #[error("{path}:{line}: malformed segment line: {reason}")]
    Malformed {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// What is wrong.
        reason: String,
    },
}

impl SegmentError {
    /// True if reading cannot continue (as opposed to one bad line).
    pub fn is_fatal(&self) -> bool {
        matches!(self, SegmentError::Io { .. })
    }
}

/// Writes a segment atomically: nothing appears at the path until
/// [`SegmentWriter::finish`].
pub struct SegmentWriter {
    _private: (),
}

impl SegmentWriter {
    /// Starts a segment at `path` (zstd level 3).
    pub fn create(path: impl AsRef<Path>) -> Result<SegmentWriter, SegmentError> {
        let _ = path;
        todo!("SegmentWriter::create")
    }

    /// Appends one record. Tabs or newlines in a field are an error.
    pub fn write(&mut self, rec: &SegmentRecord) -> Result<(), SegmentError> {
        let _ = rec;
        todo!("SegmentWriter::write")
    }

    /// Records written so far.
    pub fn count(&self) -> u64 {
        todo!("SegmentWriter::count")
    }

    /// Finishes the zstd stream, fsyncs and renames into place; returns the count.
    pub fn finish(self) -> Result<u64, SegmentError> {
        todo!("SegmentWriter::finish")
    }
}

/// Reads a segment line by line, reusing its buffers.
pub struct SegmentReader {
    _private: (),
}

impl SegmentReader {
    /// Opens a segment file.
    pub fn open(path: impl AsRef<Path>) -> Result<SegmentReader, SegmentError> {
        let _ = path;
        todo!("SegmentReader::open")
    }

    /// Fills `rec` with the next record; `Ok(false)` at the end. A malformed
    /// line is skipped, counted and returned as [`SegmentError::Malformed`];
    /// call again to go on.
    pub fn read_next(&mut self, rec: &mut SegmentRecord) -> Result<bool, SegmentError> {
        let _ = rec;
        todo!("SegmentReader::read_next")
    }

    /// Malformed lines skipped so far.
    pub fn malformed(&self) -> u64 {
        todo!("SegmentReader::malformed")
    }

    /// 1-based number of the line last read.
    pub fn line(&self) -> u64 {
        todo!("SegmentReader::line")
    }
}
