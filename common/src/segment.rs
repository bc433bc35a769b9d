//! Segment files: the list of URLs a fetcher run takes.
//!
//! Format version 5, file suffix `.v5.tsv.zst`: zstd-compressed UTF-8 text,
//! one URL per line, twelve tab-separated fields, no header:
//!
//! ```text
//! host  url  hops  inlinks  via  tries  not_before  etag  last_modified  digest  fetched  record_id
//! example.com  https://example.com/a  2  5  link  0  -  -  -  -  -  -      (fields separated by one tab)
//! example.com  https://example.com/b  1  1  leftover  0  2026-11-24T10:00:05.250Z  -  -  -  -  -
//! example.com  https://example.com/c  1  0  recrawl  0  -  "v2"  Tue, 24 Nov 2026 09:00:00 GMT  sha1:2OFW...  2026-10-24T09:00:00.000Z  <urn:uuid:0f6c...>
//! ```
//! - `host`: the queue key (lower-case host, no port); lines of one registrable
//!   domain are adjacent, so `zstdcat F | cut -f1 | uniq -c` counts URLs per host.
//! - `url`: the canonical URL (no tab, no newline).
//! - `hops`: links followed from a seed (seeds are 0).
//! - `inlinks`: links to this URL found in the round that produced it.
//! - `via`: how it was found (see [`Via`]).
//! - `tries`: earlier attempts that failed and are being retried.
//! - `not_before`: `-`, or the UTC time (ISO 8601, milliseconds) before
//!   which the URL must not be requested: its host's next allowed contact
//!   (politeness delay, `Retry-After`, robots.txt retry) when it was written.
//! - `etag`, `last_modified`: `-`, or the validators of the URL's last full
//!   response, for a conditional request (`If-None-Match`,
//!   `If-Modified-Since`); set on URLs fetched again (`via` `recrawl`).
//! - `digest`: `-`, or the `WARC-Payload-Digest` of that response: a new
//!   response with the same payload is stored as a `revisit` record.
//! - `fetched`: `-`, or the time of that response (`WARC-Refers-To-Date`
//!   of a `revisit` record).
//! - `record_id`: `-`, or the `WARC-Record-ID` of that response
//!   (`WARC-Refers-To` of a `revisit` record).
//!
//! Leftover files (`fetched/ID/leftover.v5.tsv.zst`) and the backlog use the same format.
//! Version 4 files (`.v4.tsv.zst`: the first eleven fields, no
//! `record_id`), version 3 files (`.v3.tsv.zst`: the same eleven, but
//! without the via words `sitemap` and `sitemap-file`), version 2 files
//! (`.v2.tsv.zst`, the first seven fields) and version 1 files
//! (`.v1.tsv.zst`, the first six fields, no `not_before`) are still read
//! (a missing field is `-`); files are always written in version 5.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use crate::atomic::AtomicFile;

mod summary;

pub use summary::{HostCount, SegmentSummary};

/// File-name suffix of every file written in the segment format, version included.
pub const FILE_SUFFIX: &str = ".v5.tsv.zst";
/// The format version written by this library.
pub const FORMAT_VERSION: u32 = 5;
/// Every format version this library reads, newest first.
pub const READ_VERSIONS: [u32; 5] = [5, 4, 3, 2, 1];

/// The file-name suffix of format `version` (`.v1.tsv.zst`).
pub fn file_suffix(version: u32) -> String {
    format!(".v{version}.tsv.zst")
}

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
    /// Fetched before and due again (format version 3).
    Recrawl,
    /// A page listed in a sitemap (format version 4).
    Sitemap,
    /// A sitemap to read: named by a robots.txt `Sitemap:` line, listed in
    /// a sitemap index, or `/sitemap.xml` guessed (format version 4).
    SitemapFile,
}

impl Via {
    /// Every way, in declaration order (index = discriminant).
    pub const ALL: [Via; 10] = [
        Via::Seed,
        Via::Link,
        Via::Redirect,
        Via::Leftover,
        Via::Retry,
        Via::Backlog,
        Via::Robots,
        Via::Recrawl,
        Via::Sitemap,
        Via::SitemapFile,
    ];

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
            Via::Recrawl => "recrawl",
            Via::Sitemap => "sitemap",
            Via::SitemapFile => "sitemap-file",
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
            "recrawl" => Via::Recrawl,
            "sitemap" => Via::Sitemap,
            "sitemap-file" => Via::SitemapFile,
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
    /// In-links found to it since it was first found (its score; see the
    /// guide's "What is fetched first").
    pub inlinks: u32,
    /// How it was found.
    pub via: Via,
    /// Earlier failed attempts.
    pub tries: u32,
    /// Not to be requested before this time (Unix ms), if set.
    pub not_before: Option<i64>,
    /// `ETag` of the last full response (empty: none).
    pub etag: String,
    /// `Last-Modified` of the last full response (empty: none).
    pub last_modified: String,
    /// `WARC-Payload-Digest` of the last full response (empty: none).
    pub digest: String,
    /// When that response was fetched (Unix ms), if known.
    pub fetched: Option<i64>,
    /// Its `WARC-Record-ID` (`<urn:uuid:...>`; empty: unknown).
    pub record_id: String,
}

impl SegmentRecord {
    /// Appends the record as one segment line (tab-separated, with its
    /// newline) to `out`, unchecked: [`SegmentWriter::write`] checks the
    /// fields first.
    pub fn encode_line(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.host.as_bytes());
        out.push(b'\t');
        out.extend_from_slice(self.url.as_bytes());
        out.push(b'\t');
        push_decimal(out, u64::from(self.hops));
        out.push(b'\t');
        push_decimal(out, u64::from(self.inlinks));
        out.push(b'\t');
        out.extend_from_slice(self.via.as_str().as_bytes());
        out.push(b'\t');
        push_decimal(out, u64::from(self.tries));
        out.push(b'\t');
        match self.not_before {
            None => out.push(b'-'),
            // (Past the year 9999 the time would not read back: cut there.)
            Some(ms) => out.extend_from_slice(
                crate::timefmt::iso_millis(unix_ms_to_time(ms.min(LAST_TIME_MS))).as_bytes(),
            ),
        }
        for v in [&self.etag, &self.last_modified, &self.digest] {
            out.push(b'\t');
            if v.is_empty() || v == "-" {
                out.push(b'-');
            } else {
                out.extend_from_slice(v.as_bytes());
            }
        }
        out.push(b'\t');
        match self.fetched {
            None => out.push(b'-'),
            Some(ms) => out.extend_from_slice(
                crate::timefmt::iso_millis(unix_ms_to_time(ms.min(LAST_TIME_MS))).as_bytes(),
            ),
        }
        out.push(b'\t');
        if self.record_id.is_empty() || self.record_id == "-" {
            out.push(b'-');
        } else {
            out.extend_from_slice(self.record_id.as_bytes());
        }
        out.push(b'\n');
    }

    /// Parses one segment line of the current format version (without its
    /// newline; a trailing `\r` is allowed) into `self`, reusing its
    /// buffers. On error `self` is unchanged and the message says what is
    /// wrong with the line.
    pub fn parse_line(&mut self, line: &[u8]) -> Result<(), String> {
        parse_line(line, self, FORMAT_VERSION)
    }
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
    /// The file name says it is in a format version this program does not read.
    #[error(
        "{path}: segment format version {found}, but this program reads versions 1 to \
         {FORMAT_VERSION} (written by a newer build? use that build to read it)"
    )]
    UnsupportedVersion {
        /// The file.
        path: PathBuf,
        /// The version in the file name.
        found: u32,
    },
    /// A record could not be written (empty field, tab or newline in a
    /// field). Not fatal: nothing was written and the writer can go on.
    #[error("{path}: record {record} not written: {reason}")]
    InvalidRecord {
        /// The file being written.
        path: PathBuf,
        /// 1-based number the record would have had.
        record: u64,
        /// What is wrong.
        reason: String,
    },
}

impl SegmentError {
    /// True if reading or writing cannot continue (as opposed to one bad
    /// line or record).
    pub fn is_fatal(&self) -> bool {
        matches!(
            self,
            SegmentError::Io { .. } | SegmentError::UnsupportedVersion { .. }
        )
    }
}

/// Longest line the reader accepts (1 MiB); longer lines are reported as
/// malformed and skipped, so a file without newlines cannot exhaust memory.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// zstd level of every segment file. Level 1 compresses the segmenter's
/// output with 40 % less CPU than level 3 (measured with the segmenter's
/// benchmark: 10 M synthetic URLs, its writer thread 1.5 s of CPU instead
/// of 2.5 s). The size depends on the URLs: 3 % smaller than level 3 on the
/// synthetic ones, 20 % larger on the links of the Rust documentation (30
/// instead of 25 bytes per line): a few MB per million URLs, small beside
/// what fetching them stores.
const ZSTD_LEVEL: i32 = 1;
/// Lines are gathered into a buffer of this size before compression.
const WRITE_CHUNK: usize = 128 * 1024;
/// Size of the reader's buffer of decompressed text.
const READ_BUFFER: usize = 256 * 1024;
/// Fields of a line of the current format (versions 3 and 4 have the
/// first eleven, version 2 the first seven, version 1 the first six).
const FIELDS: usize = 12;

/// 9999-12-31T23:59:59.999Z, the last time the text form can hold.
const LAST_TIME_MS: i64 = 253_402_300_799_999;

/// A time in Unix milliseconds as a [`std::time::SystemTime`].
fn unix_ms_to_time(ms: i64) -> std::time::SystemTime {
    let epoch = std::time::UNIX_EPOCH;
    match u64::try_from(ms) {
        Ok(ms) => epoch + std::time::Duration::from_millis(ms),
        Err(_) => epoch,
    }
}

/// The format version in a file name ending in `.vN.tsv.zst`, if it has one.
///
/// ```
/// use common::segment::format_version_of;
/// assert_eq!(format_version_of("segments/00001.v1.tsv.zst".as_ref()), Some(1));
/// assert_eq!(format_version_of("leftover.v7.tsv.zst".as_ref()), Some(7));
/// assert_eq!(format_version_of("urls.tsv.zst".as_ref()), None);
/// ```
pub fn format_version_of(path: &Path) -> Option<u32> {
    let name = path.file_name()?.to_str()?;
    let stem = name.strip_suffix(".tsv.zst")?;
    let (_, version) = stem.rsplit_once('.')?;
    let digits = version.strip_prefix('v')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn io_error(path: &Path, source: io::Error) -> SegmentError {
    SegmentError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Checks that a field can be written on one line of a segment.
fn check_field(name: &str, value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Err(format!("{name} is empty"));
    }
    if let Some(i) = memchr::memchr3(b'\t', b'\n', b'\r', value.as_bytes()) {
        let what = match value.as_bytes()[i] {
            b'\t' => "a tab",
            b'\n' => "a newline",
            _ => "a carriage return",
        };
        return Err(format!("{name} contains {what}: {value:?}"));
    }
    Ok(())
}

/// Checks that a validator can be written (empty is written `-`).
fn check_validator(name: &str, value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Ok(());
    }
    check_field(name, value)
}

/// Appends the decimal digits of `n` to `out`, without allocating: how a
/// segment line writes its numbers (and the fetch history its own).
///
/// ```
/// let mut out = b"hops=".to_vec();
/// common::segment::push_decimal(&mut out, 1207);
/// assert_eq!(out, b"hops=1207");
/// ```
pub fn push_decimal(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// Writes a segment atomically: nothing appears at the path until
/// [`SegmentWriter::finish`]. Dropped without `finish`, the partial file is
/// removed.
///
/// ```
/// use common::segment::{SegmentReader, SegmentRecord, SegmentWriter, Via};
/// # let dir = std::env::temp_dir().join(format!("segment-doc-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("00001.v5.tsv.zst");
/// let mut w = SegmentWriter::create(&path).unwrap();
/// let rec = SegmentRecord {
///     host: "example.com".into(),
///     url: "https://example.com/".into(),
///     hops: 0,
///     inlinks: 0,
///     via: Via::Seed,
///     ..SegmentRecord::default() // tries 0, no not-before time, no validators
/// };
/// w.write(&rec).unwrap();
/// assert_eq!(w.finish().unwrap(), 1);
///
/// let mut r = SegmentReader::open(&path).unwrap();
/// let mut back = SegmentRecord::default();
/// assert!(r.read_next(&mut back).unwrap());
/// assert_eq!(back, rec);
/// assert!(!r.read_next(&mut back).unwrap());
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub struct SegmentWriter {
    path: PathBuf,
    encoder: zstd::stream::write::Encoder<'static, AtomicFile>,
    chunk: Vec<u8>,
    count: u64,
}

impl SegmentWriter {
    /// Starts a segment at `path` (zstd level 1, with a checksum). A name
    /// with another format version than [`FORMAT_VERSION`] is refused.
    pub fn create(path: impl AsRef<Path>) -> Result<SegmentWriter, SegmentError> {
        let path = path.as_ref().to_path_buf();
        if let Some(found) = format_version_of(&path)
            && found != FORMAT_VERSION
        {
            return Err(SegmentError::UnsupportedVersion { path, found });
        }
        let file = AtomicFile::create(&path).map_err(|e| io_error(&path, e))?;
        let mut encoder =
            zstd::stream::write::Encoder::new(file, ZSTD_LEVEL).map_err(|e| io_error(&path, e))?;
        // A checksum lets `zstd -t` and our reader notice a damaged file.
        encoder
            .include_checksum(true)
            .map_err(|e| io_error(&path, e))?;
        Ok(SegmentWriter {
            path,
            encoder,
            chunk: Vec::with_capacity(WRITE_CHUNK + 4096),
            count: 0,
        })
    }

    /// Appends one record. An empty host or URL, or a tab, newline or
    /// carriage return in either, is a [`SegmentError::InvalidRecord`] and
    /// writes nothing; the writer stays usable.
    pub fn write(&mut self, rec: &SegmentRecord) -> Result<(), SegmentError> {
        let checked = check_field("host", &rec.host)
            .and_then(|()| check_field("URL", &rec.url))
            .and_then(|()| check_validator("etag", &rec.etag))
            .and_then(|()| check_validator("last_modified", &rec.last_modified))
            .and_then(|()| check_validator("digest", &rec.digest))
            .and_then(|()| check_validator("record_id", &rec.record_id))
            .and_then(|()| match rec.via {
                Via::Robots => {
                    Err("via `robots` belongs in the crawl log, not in a segment".into())
                }
                _ => Ok(()),
            });
        if let Err(reason) = checked {
            return Err(SegmentError::InvalidRecord {
                path: self.path.clone(),
                record: self.count + 1,
                reason,
            });
        }
        rec.encode_line(&mut self.chunk);
        self.count += 1;
        if self.chunk.len() >= WRITE_CHUNK {
            self.flush_chunk()?;
        }
        Ok(())
    }

    fn flush_chunk(&mut self) -> Result<(), SegmentError> {
        self.encoder
            .write_all(&self.chunk)
            .map_err(|e| io_error(&self.path, e))?;
        self.chunk.clear();
        Ok(())
    }

    /// Records written so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The final path of the segment.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Finishes the zstd stream, fsyncs and renames into place; returns the count.
    pub fn finish(mut self) -> Result<u64, SegmentError> {
        self.flush_chunk()?;
        let SegmentWriter {
            path,
            encoder,
            count,
            ..
        } = self;
        let file = encoder.finish().map_err(|e| io_error(&path, e))?;
        file.commit().map_err(|e| io_error(&path, e))?;
        Ok(count)
    }
}

type Decompressed = zstd::stream::read::Decoder<'static, BufReader<File>>;

/// Reads a segment line by line, reusing its buffers and the caller's record.
///
/// A line that is not in the format is skipped and reported as
/// [`SegmentError::Malformed`] (file and line number); reading goes on with
/// the next call. A damaged compressed stream (truncated, not zstd, bad
/// checksum) is a fatal [`SegmentError::Io`]; after it, `read_next` returns
/// `Ok(false)`.
pub struct SegmentReader {
    path: PathBuf,
    version: u32,
    input: BufReader<Decompressed>,
    line_buf: Vec<u8>,
    line: u64,
    malformed: u64,
    done: bool,
}

impl SegmentReader {
    /// Opens a segment file. A name with a format version not in
    /// [`READ_VERSIONS`] (`NAME.v9.tsv.zst`) is refused; names without a
    /// version are read as version 1.
    pub fn open(path: impl AsRef<Path>) -> Result<SegmentReader, SegmentError> {
        let path = path.as_ref().to_path_buf();
        let version = format_version_of(&path).unwrap_or(1);
        if !READ_VERSIONS.contains(&version) {
            return Err(SegmentError::UnsupportedVersion {
                path,
                found: version,
            });
        }
        let file = File::open(&path).map_err(|e| io_error(&path, e))?;
        let len = file.metadata().map_err(|e| io_error(&path, e))?.len();
        if len == 0 {
            return Err(io_error(
                &path,
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    "the file is empty; a segment, even one without URLs, is a zstd stream",
                ),
            ));
        }
        let decoder = zstd::stream::read::Decoder::new(file).map_err(|e| io_error(&path, e))?;
        Ok(SegmentReader {
            path,
            version,
            input: BufReader::with_capacity(READ_BUFFER, decoder),
            line_buf: Vec::with_capacity(1024),
            line: 0,
            malformed: 0,
            done: false,
        })
    }

    /// The file being read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Fills `rec` with the next record; `Ok(false)` at the end. A malformed
    /// line is skipped, counted and returned as [`SegmentError::Malformed`]
    /// (with `rec` unchanged); call again to go on.
    pub fn read_next(&mut self, rec: &mut SegmentRecord) -> Result<bool, SegmentError> {
        if self.done {
            return Ok(false);
        }
        // Fast path: the whole line is in the buffer; parse it in place.
        let fast = loop {
            match self.input.fill_buf() {
                Ok(avail) => {
                    break memchr::memchr(b'\n', avail)
                        .map(|end| (parse_line(&avail[..end], rec, self.version), end + 1));
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.done = true;
                    return Err(io_error(&self.path, describe_read_error(e)));
                }
            }
        };
        if let Some((parsed, used)) = fast {
            self.input.consume(used);
            self.line += 1;
            return self.outcome(parsed);
        }
        // The line continues past the buffer, or is the last one without a
        // newline: gather it in `line_buf`.
        let overlong = match self.fill_line() {
            Ok(Some(overlong)) => overlong,
            Ok(None) => {
                self.done = true;
                return Ok(false);
            }
            Err(e) => {
                self.done = true;
                return Err(io_error(&self.path, describe_read_error(e)));
            }
        };
        self.line += 1;
        let parsed = if overlong {
            Err(format!("line is longer than {MAX_LINE_BYTES} bytes"))
        } else {
            parse_line(&self.line_buf, rec, self.version)
        };
        self.outcome(parsed)
    }

    /// Turns the result of parsing the current line into `read_next`'s answer.
    fn outcome(&mut self, parsed: Result<(), String>) -> Result<bool, SegmentError> {
        match parsed {
            Ok(()) => Ok(true),
            Err(reason) => {
                self.malformed += 1;
                Err(SegmentError::Malformed {
                    path: self.path.clone(),
                    line: self.line,
                    reason,
                })
            }
        }
    }

    /// Reads the next line (without its newline) into `line_buf`. Returns
    /// `None` at the end of the input and `Some(true)` if the line was cut at
    /// [`MAX_LINE_BYTES`] (the rest of it is skipped).
    fn fill_line(&mut self) -> io::Result<Option<bool>> {
        self.line_buf.clear();
        let mut seen_any = false;
        let mut overlong = false;
        loop {
            let avail = match self.input.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if avail.is_empty() {
                return Ok(seen_any.then_some(overlong));
            }
            seen_any = true;
            let (take, found_newline) = match memchr::memchr(b'\n', avail) {
                Some(i) => (i, true),
                None => (avail.len(), false),
            };
            if !overlong {
                if self.line_buf.len() + take > MAX_LINE_BYTES {
                    overlong = true;
                    self.line_buf.clear();
                } else {
                    self.line_buf.extend_from_slice(&avail[..take]);
                }
            }
            let used = if found_newline { take + 1 } else { take };
            self.input.consume(used);
            if found_newline {
                return Ok(Some(overlong));
            }
        }
    }

    /// Malformed lines skipped so far.
    pub fn malformed(&self) -> u64 {
        self.malformed
    }

    /// 1-based number of the line last read.
    pub fn line(&self) -> u64 {
        self.line
    }
}

/// Adds to a decompression error what it probably means for the user.
fn describe_read_error(e: io::Error) -> io::Error {
    let hint = match e.kind() {
        io::ErrorKind::UnexpectedEof => "the file is truncated (an interrupted copy or write?)",
        _ => "the file is damaged or not a zstd-compressed segment",
    };
    io::Error::new(e.kind(), format!("reading zstd stream: {e}: {hint}"))
}

/// Parses one line (without its newline) of format `version` into `rec`;
/// on error `rec` is unchanged.
fn parse_line(line: &[u8], rec: &mut SegmentRecord, version: u32) -> Result<(), String> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.is_empty() {
        return Err("empty line".into());
    }
    let fields = split_fields(line, version)?;
    let [
        host,
        url,
        hops,
        inlinks,
        via,
        tries,
        not_before,
        etag,
        last_modified,
        digest,
        fetched,
        record_id,
    ] = fields;
    let host = std::str::from_utf8(host).map_err(|_| "host is not valid UTF-8".to_string())?;
    let url = std::str::from_utf8(url).map_err(|_| "URL is not valid UTF-8".to_string())?;
    if host.is_empty() {
        return Err("host is empty".into());
    }
    if url.is_empty() {
        return Err("URL is empty".into());
    }
    let hops = parse_u32("hops", hops)?;
    let inlinks = parse_u32("inlinks", inlinks)?;
    let via = parse_via(via, version)?;
    let tries = parse_u32("tries", tries)?;
    fn validator<'a>(name: &str, v: &'a [u8]) -> Result<&'a str, String> {
        match v {
            b"-" => Ok(""),
            v => std::str::from_utf8(v).map_err(|_| format!("{name} is not valid UTF-8")),
        }
    }
    let etag = validator("etag", etag)?;
    let last_modified = validator("last_modified", last_modified)?;
    let digest = validator("digest", digest)?;
    let record_id = validator("record_id", record_id)?;
    let not_before = parse_time("not_before", not_before)?;
    let fetched = parse_time("fetched", fetched)?;
    rec.host.clear();
    rec.host.push_str(host);
    rec.url.clear();
    rec.url.push_str(url);
    rec.hops = hops;
    rec.inlinks = inlinks;
    rec.via = via;
    rec.tries = tries;
    rec.not_before = not_before;
    rec.etag.clear();
    rec.etag.push_str(etag);
    rec.last_modified.clear();
    rec.last_modified.push_str(last_modified);
    rec.digest.clear();
    rec.digest.push_str(digest);
    rec.fetched = fetched;
    rec.record_id.clear();
    rec.record_id.push_str(record_id);
    Ok(())
}

/// The fields of a line of format `version`, the missing ones of older
/// versions `-`; an error if there are not as many as the format has.
fn split_fields(line: &[u8], version: u32) -> Result<[&[u8]; FIELDS], String> {
    let expected = match version {
        1 => FIELDS - 6,
        2 => FIELDS - 5,
        3 | 4 => FIELDS - 1,
        _ => FIELDS,
    };
    let mut fields: [&[u8]; FIELDS] = [b"-"; FIELDS];
    let mut count = 0;
    for field in line.split(|&b| b == b'\t') {
        if count < FIELDS {
            fields[count] = field;
        }
        count += 1;
    }
    if count != expected {
        let names = match version {
            1 => "host, url, hops, inlinks, via, tries",
            2 => "host, url, hops, inlinks, via, tries, not_before",
            3 | 4 => {
                "host, url, hops, inlinks, via, tries, not_before, etag, last_modified, digest, \
                 fetched"
            }
            _ => {
                "host, url, hops, inlinks, via, tries, not_before, etag, last_modified, digest, \
                 fetched, record_id"
            }
        };
        return Err(format!(
            "expected {expected} tab-separated fields ({names}), found {count}"
        ));
    }
    Ok(fields)
}

/// The `via` field of a line of format `version`.
fn parse_via(via: &[u8], version: u32) -> Result<Via, String> {
    std::str::from_utf8(via)
        .ok()
        .and_then(Via::parse)
        .filter(|v| *v != Via::Robots)
        // The sitemap words came with version 4: an older file holding
        // one was not written by this program.
        .filter(|v| version >= 4 || !matches!(v, Via::Sitemap | Via::SitemapFile))
        .ok_or_else(|| {
            format!(
                "unknown via {:?} (expected seed, link, redirect, leftover, retry, backlog, \
                 recrawl, sitemap or sitemap-file)",
                String::from_utf8_lossy(via)
            )
        })
}

/// A time field: `-` (none) or ISO 8601 UTC with milliseconds, as Unix ms.
fn parse_time(name: &str, text: &[u8]) -> Result<Option<i64>, String> {
    if text == b"-" {
        return Ok(None);
    }
    let time = std::str::from_utf8(text)
        .ok()
        .and_then(crate::timefmt::parse_iso)
        .ok_or_else(|| {
            format!(
                "{name} is neither `-` nor a time like 2026-11-24T10:00:05.250Z: {:?}",
                String::from_utf8_lossy(text)
            )
        })?;
    Ok(Some(
        time.duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX)),
    ))
}

/// A decimal number of ASCII digits only (no sign, no spaces) that fits in u32.
fn parse_u32(name: &str, digits: &[u8]) -> Result<u32, String> {
    crate::parse_digits(digits)
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| {
            format!(
                "{name} is not a number from 0 to {}: {:?}",
                u32::MAX,
                String::from_utf8_lossy(digits)
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{Rng, TempDir};

    fn rec(host: &str, url: &str, hops: u32, inlinks: u32, via: Via, tries: u32) -> SegmentRecord {
        SegmentRecord {
            host: host.into(),
            url: url.into(),
            hops,
            inlinks,
            via,
            tries,
            not_before: None,
            ..SegmentRecord::default()
        }
    }

    /// Writes raw (uncompressed) text as a zstd file.
    fn write_raw(path: &Path, text: &[u8]) {
        std::fs::write(path, zstd::encode_all(text, 3).unwrap()).unwrap();
    }

    /// Reads everything: the good records and the malformed errors, in order.
    fn read_all(path: &Path) -> (Vec<SegmentRecord>, Vec<(u64, String)>, SegmentReader) {
        let mut r = SegmentReader::open(path).unwrap();
        let mut good = Vec::new();
        let mut bad = Vec::new();
        let mut rec = SegmentRecord::default();
        for _ in 0..1_000_000 {
            match r.read_next(&mut rec) {
                Ok(true) => good.push(rec.clone()),
                Ok(false) => return (good, bad, r),
                Err(SegmentError::Malformed { line, reason, .. }) => bad.push((line, reason)),
                Err(e) => panic!("unexpected fatal error: {e}"),
            }
        }
        panic!("reader did not end");
    }

    #[test]
    fn round_trip_keeps_every_field_and_the_text_format() {
        let dir = TempDir::new("roundtrip");
        let path = dir.join("00001.v5.tsv.zst");
        let records = vec![
            rec("example.com", "https://example.com/", 0, 0, Via::Seed, 0),
            rec(
                "example.com",
                "https://example.com/a?b=c",
                2,
                5,
                Via::Link,
                0,
            ),
            rec(
                "xn--bcher-kva.example",
                "http://xn--bcher-kva.example/ü",
                1,
                1,
                Via::Redirect,
                0,
            ),
            rec(
                "a.test",
                "http://a.test/x",
                u32::MAX,
                u32::MAX,
                Via::Retry,
                u32::MAX,
            ),
            rec("a.test", "http://a.test/y", 7, 0, Via::Leftover, 3),
            rec("b.test", "http://b.test/", 9, 10, Via::Backlog, 1),
            SegmentRecord {
                not_before: Some(1_795_514_405_250),
                ..rec("c.test", "http://c.test/", 1, 0, Via::Leftover, 0)
            },
            SegmentRecord {
                etag: "W/\"v 2\"".into(),
                last_modified: "Tue, 24 Nov 2026 09:00:00 GMT".into(),
                digest: "sha1:ABC".into(),
                fetched: Some(1_795_514_405_250),
                record_id: "<urn:uuid:7d1c5a2e-0b4f-4c3e-9a61-2f0e8b7c6d5a>".into(),
                ..rec("c.test", "http://c.test/r", 1, 0, Via::Recrawl, 0)
            },
        ];
        let mut w = SegmentWriter::create(&path).unwrap();
        for r in &records {
            w.write(r).unwrap();
        }
        assert_eq!(w.count(), records.len() as u64);
        assert_eq!(w.finish().unwrap(), records.len() as u64);

        let (good, bad, r) = read_all(&path);
        assert_eq!(good, records);
        assert!(bad.is_empty());
        assert_eq!(r.malformed(), 0);
        assert_eq!(r.line(), records.len() as u64);

        // The documented text format, as `zstdcat` shows it.
        let text = String::from_utf8(zstd::decode_all(&std::fs::read(&path).unwrap()[..]).unwrap())
            .unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[1],
            "example.com\thttps://example.com/a?b=c\t2\t5\tlink\t0\t-\t-\t-\t-\t-\t-"
        );
        assert_eq!(
            lines[3],
            "a.test\thttp://a.test/x\t4294967295\t4294967295\tretry\t4294967295\t-\t-\t-\t-\t-\t-"
        );
        assert_eq!(
            lines[6],
            "c.test\thttp://c.test/\t1\t0\tleftover\t0\t2026-11-24T10:00:05.250Z\t-\t-\t-\t-\t-"
        );
        assert_eq!(
            lines[7],
            "c.test\thttp://c.test/r\t1\t0\trecrawl\t0\t-\tW/\"v 2\"\tTue, 24 Nov 2026 09:00:00 GMT\tsha1:ABC\t2026-11-24T10:00:05.250Z\t<urn:uuid:7d1c5a2e-0b4f-4c3e-9a61-2f0e8b7c6d5a>"
        );
        assert!(text.ends_with('\n'));
        assert_eq!(lines.len(), records.len());
    }

    #[test]
    fn one_line_encodes_and_parses_back_without_the_file() {
        let original = rec("a.test", "http://a.test/x?y=1", 2, 7, Via::Link, 1);
        let mut line = Vec::new();
        original.encode_line(&mut line);
        assert_eq!(
            line,
            b"a.test\thttp://a.test/x?y=1\t2\t7\tlink\t1\t-\t-\t-\t-\t-\t-\n"
        );
        let mut back = rec("old", "http://old/", 9, 9, Via::Seed, 9);
        back.not_before = Some(5);
        back.parse_line(line.strip_suffix(b"\n").unwrap()).unwrap();
        assert_eq!(back, original);
        let err = back.parse_line(b"a.test\thttp://a.test/\t-1\t0\tlink\t0\t-\t-\t-\t-\t-\t-");
        assert!(err.unwrap_err().contains("hops"));
        assert_eq!(back, original, "a bad line leaves the record unchanged");
        let err = back.parse_line(b"a.test\thttp://a.test/\t1\t0\tlink\t0\tsoon\t-\t-\t-\t-\t-");
        assert!(err.unwrap_err().contains("not_before"));
        let err = back.parse_line(b"a.test\thttp://a.test/\t1\t0\tlink\t0");
        assert!(err.unwrap_err().contains("expected 12"));
        assert_eq!(back, original);
        // A time past the year 9999 is written as the last one that reads back.
        let far = SegmentRecord {
            not_before: Some(i64::MAX),
            ..original.clone()
        };
        let mut line = Vec::new();
        far.encode_line(&mut line);
        back.parse_line(line.strip_suffix(b"\n").unwrap()).unwrap();
        assert_eq!(back.not_before, Some(LAST_TIME_MS));
    }

    #[test]
    fn an_empty_segment_is_a_valid_file_with_no_records() {
        let dir = TempDir::new("empty-seg");
        let path = dir.join("e.v5.tsv.zst");
        assert_eq!(SegmentWriter::create(&path).unwrap().finish().unwrap(), 0);
        assert!(std::fs::metadata(&path).unwrap().len() > 0);
        let (good, bad, _) = read_all(&path);
        assert!(good.is_empty() && bad.is_empty());
    }

    #[test]
    fn writer_rejects_fields_that_would_break_a_line_and_goes_on() {
        let dir = TempDir::new("invalid");
        let path = dir.join("s.v5.tsv.zst");
        let mut w = SegmentWriter::create(&path).unwrap();
        w.write(&rec("ok.test", "http://ok.test/1", 0, 0, Via::Seed, 0))
            .unwrap();
        let bad = [
            rec("", "http://x.test/", 0, 0, Via::Seed, 0),
            rec("x.test", "", 0, 0, Via::Seed, 0),
            rec("x\ttest", "http://x.test/", 0, 0, Via::Seed, 0),
            rec("x.test", "http://x.test/a\tb", 0, 0, Via::Seed, 0),
            rec("x.test", "http://x.test/a\nb", 0, 0, Via::Seed, 0),
            rec("x.test", "http://x.test/a\rb", 0, 0, Via::Seed, 0),
            rec("x.test", "http://x.test/", 0, 0, Via::Robots, 0),
        ];
        for b in &bad {
            let err = w.write(b).unwrap_err();
            assert!(!err.is_fatal(), "{err}");
            assert!(
                matches!(&err, SegmentError::InvalidRecord { record: 2, .. }),
                "{err:?}"
            );
            assert!(err.to_string().contains("s.v5.tsv.zst"), "{err}");
        }
        w.write(&rec("ok.test", "http://ok.test/2", 0, 0, Via::Seed, 0))
            .unwrap();
        assert_eq!(w.finish().unwrap(), 2);
        let (good, bad, _) = read_all(&path);
        assert_eq!(good.len(), 2);
        assert_eq!(good[1].url, "http://ok.test/2");
        assert!(bad.is_empty());
    }

    #[test]
    fn nothing_is_visible_before_finish_and_a_dropped_writer_leaves_nothing() {
        let dir = TempDir::new("atomic");
        let path = dir.join("s.v5.tsv.zst");
        let mut w = SegmentWriter::create(&path).unwrap();
        for i in 0..50_000 {
            w.write(&rec(
                "h.test",
                &format!("http://h.test/{i}"),
                1,
                0,
                Via::Link,
                0,
            ))
            .unwrap();
        }
        assert!(!path.exists(), "segment visible before finish");
        drop(w);
        assert!(!path.exists());
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "temporary file left behind"
        );
    }

    #[test]
    fn malformed_lines_are_reported_with_line_numbers_and_skipped() {
        let dir = TempDir::new("malformed");
        let path = dir.join("m.v1.tsv.zst");
        let mut text: Vec<u8> = Vec::new();
        let lines: Vec<&[u8]> = vec![
            b"a.test\thttp://a.test/1\t0\t0\tseed\t0",          // 1 ok
            b"a.test\thttp://a.test/2\t0\t0\tseed",             // 2 five fields
            b"a.test\thttp://a.test/3\t0\t0\tseed\t0\textra",   // 3 seven fields
            b"a.test\thttp://a.test/4\tx\t0\tseed\t0",          // 4 hops not a number
            b"a.test\thttp://a.test/5\t-1\t0\tseed\t0",         // 5 negative
            b"a.test\thttp://a.test/6\t4294967296\t0\tseed\t0", // 6 overflow
            b"a.test\thttp://a.test/7\t+1\t0\tseed\t0",         // 7 sign
            b"a.test\thttp://a.test/8\t0\t0\tcrawled\t0",       // 8 unknown via
            b"a.test\thttp://a.test/9\t0\t0\trobots\t0",        // 9 robots is not for segments
            b"a.test\thttp://a.test/\xff\xfe\t0\t0\tseed\t0",   // 10 invalid UTF-8
            b"",                                                // 11 empty line
            b"\thttp://a.test/12\t0\t0\tseed\t0",               // 12 empty host
            b"a.test\t\t0\t0\tseed\t0",                         // 13 empty URL
            b"\x00\x01\x02garbage\xc3",                         // 14 garbage
            b"a.test\thttp://a.test/15\t0\t0\tseed\t",          // 15 empty tries
            b"a.test\thttp://a.test/16\t3\t4\tlink\t5\r",       // 16 ok (CRLF)
            b"b.test\thttp://b.test/17\t1\t2\tredirect\t0",     // 17 ok, no final newline
        ];
        for (i, l) in lines.iter().enumerate() {
            text.extend_from_slice(l);
            if i + 1 < lines.len() {
                text.push(b'\n');
            }
        }
        write_raw(&path, &text);

        let mut r = SegmentReader::open(&path).unwrap();
        let mut rec = SegmentRecord::default();
        let mut good = Vec::new();
        let mut bad_lines = Vec::new();
        for _ in 0..100 {
            let before = rec.clone();
            match r.read_next(&mut rec) {
                Ok(true) => good.push((r.line(), rec.clone())),
                Ok(false) => break,
                Err(e @ SegmentError::Malformed { .. }) => {
                    assert!(!e.is_fatal());
                    assert_eq!(rec, before, "a malformed line must not change the record");
                    let msg = e.to_string();
                    assert!(
                        msg.contains(&format!("m.v1.tsv.zst:{}:", r.line())),
                        "message lacks file:line: {msg}"
                    );
                    bad_lines.push(r.line());
                }
                Err(e) => panic!("fatal: {e}"),
            }
        }
        assert_eq!(bad_lines, (2..=15).collect::<Vec<u64>>());
        assert_eq!(r.malformed(), 14);
        let good_lines: Vec<u64> = good.iter().map(|(l, _)| *l).collect();
        assert_eq!(good_lines, vec![1, 16, 17]);
        assert_eq!(
            good[1].1,
            rec_of("a.test", "http://a.test/16", 3, 4, Via::Link, 5)
        );
        assert_eq!(
            good[2].1,
            rec_of("b.test", "http://b.test/17", 1, 2, Via::Redirect, 0)
        );
        assert!(!r.read_next(&mut rec).unwrap(), "end stays the end");
    }

    fn rec_of(
        host: &str,
        url: &str,
        hops: u32,
        inlinks: u32,
        via: Via,
        tries: u32,
    ) -> SegmentRecord {
        rec(host, url, hops, inlinks, via, tries)
    }

    #[test]
    fn reasons_say_what_is_wrong() {
        let dir = TempDir::new("reasons");
        let path = dir.join("r.v1.tsv.zst");
        write_raw(
            &path,
            b"a\tb\t0\n\
              a\thttp://a/\tzz\t0\tseed\t0\n\
              a\thttp://a/\t0\t0\tcrawled\t0\n\
              a\thttp://a/\xff\t0\t0\tseed\t0\n",
        );
        let (_, bad, _) = read_all(&path);
        let reasons: Vec<&str> = bad.iter().map(|(_, r)| r.as_str()).collect();
        assert!(
            reasons[0].contains("expected 6 tab-separated fields"),
            "{}",
            reasons[0]
        );
        assert!(reasons[0].contains("found 3"), "{}", reasons[0]);
        assert!(
            reasons[1].contains("hops") && reasons[1].contains("\"zz\""),
            "{}",
            reasons[1]
        );
        assert!(
            reasons[2].contains("unknown via \"crawled\""),
            "{}",
            reasons[2]
        );
        assert!(
            reasons[3].contains("URL is not valid UTF-8"),
            "{}",
            reasons[3]
        );
    }

    #[test]
    fn an_overlong_line_is_skipped_without_holding_it_in_memory() {
        let dir = TempDir::new("overlong");
        let path = dir.join("o.v1.tsv.zst");
        let mut text = b"a.test\thttp://a.test/".to_vec();
        text.extend(std::iter::repeat_n(b'x', 3 * MAX_LINE_BYTES));
        text.extend_from_slice(b"\t0\t0\tseed\t0\nb.test\thttp://b.test/\t0\t0\tseed\t0\n");
        write_raw(&path, &text);
        let (good, bad, r) = read_all(&path);
        assert_eq!(bad.len(), 1);
        assert_eq!(bad[0].0, 1);
        assert!(bad[0].1.contains("longer than"), "{}", bad[0].1);
        assert_eq!(good.len(), 1);
        assert_eq!(good[0].host, "b.test");
        assert!(r.line_buf.capacity() <= 2 * MAX_LINE_BYTES);
    }

    #[test]
    fn the_callers_strings_are_reused() {
        let dir = TempDir::new("reuse");
        let path = dir.join("s.v5.tsv.zst");
        let mut w = SegmentWriter::create(&path).unwrap();
        for i in 0..1000 {
            w.write(&rec(
                "h.test",
                &format!("http://h.test/{i}"),
                0,
                0,
                Via::Link,
                0,
            ))
            .unwrap();
        }
        w.finish().unwrap();
        let mut r = SegmentReader::open(&path).unwrap();
        let mut rec = SegmentRecord {
            host: String::with_capacity(64),
            url: String::with_capacity(256),
            ..SegmentRecord::default()
        };
        let (host_ptr, url_ptr) = (rec.host.as_ptr(), rec.url.as_ptr());
        let mut n = 0;
        while r.read_next(&mut rec).unwrap() {
            assert_eq!(rec.url.as_ptr(), url_ptr, "URL string reallocated");
            assert_eq!(rec.host.as_ptr(), host_ptr, "host string reallocated");
            n += 1;
        }
        assert_eq!(n, 1000);
    }

    fn fatal_error(path: &Path) -> SegmentError {
        let mut r = match SegmentReader::open(path) {
            Ok(r) => r,
            Err(e) => return e,
        };
        let mut rec = SegmentRecord::default();
        for _ in 0..1_000_000 {
            match r.read_next(&mut rec) {
                Ok(true) => {}
                Ok(false) => panic!("{} read to the end without an error", path.display()),
                Err(e) if e.is_fatal() => {
                    assert!(
                        !r.read_next(&mut rec).unwrap(),
                        "reading must stop after a fatal error"
                    );
                    return e;
                }
                Err(_) => {}
            }
        }
        panic!("reader did not end");
    }

    #[test]
    fn an_empty_file_is_a_fatal_error_naming_the_file() {
        let dir = TempDir::new("emptyfile");
        let path = dir.join("empty.v1.tsv.zst");
        std::fs::write(&path, b"").unwrap();
        let e = fatal_error(&path);
        assert!(matches!(e, SegmentError::Io { .. }));
        let msg = e.to_string();
        assert!(
            msg.contains("empty.v1.tsv.zst") && msg.contains("empty"),
            "{msg}"
        );
    }

    #[test]
    fn a_file_that_is_not_zstd_is_a_fatal_error_naming_the_file() {
        let dir = TempDir::new("notzstd");
        let path = dir.join("plain.v1.tsv.zst");
        std::fs::write(&path, b"a.test\thttp://a.test/\t0\t0\tseed\t0\n").unwrap();
        let e = fatal_error(&path);
        assert!(matches!(e, SegmentError::Io { .. }));
        let msg = e.to_string();
        assert!(msg.contains("plain.v1.tsv.zst"), "{msg}");
        assert!(msg.contains("not a zstd-compressed segment"), "{msg}");
    }

    #[test]
    fn a_truncated_zstd_stream_is_a_fatal_error_naming_the_file() {
        let dir = TempDir::new("truncated");
        let path = dir.join("t.v5.tsv.zst");
        let mut w = SegmentWriter::create(&path).unwrap();
        let mut rng = Rng::new(1);
        for i in 0..20_000 {
            // Pseudo-random paths so that the stream does not compress to nothing.
            let x = rng.next_u64();
            w.write(&rec(
                "t.test",
                &format!("http://t.test/{i}/{x:x}"),
                1,
                0,
                Via::Link,
                0,
            ))
            .unwrap();
        }
        w.finish().unwrap();
        let full = std::fs::read(&path).unwrap();
        for cut in [full.len() - 1, full.len() - 4, full.len() / 2, 20, 5] {
            std::fs::write(&path, &full[..cut]).unwrap();
            let e = fatal_error(&path);
            assert!(matches!(e, SegmentError::Io { .. }), "cut {cut}: {e:?}");
            let msg = e.to_string();
            assert!(msg.contains("t.v5.tsv.zst"), "cut {cut}: {msg}");
        }
        // Cutting inside the frame says "truncated".
        std::fs::write(&path, &full[..full.len() / 2]).unwrap();
        let msg = fatal_error(&path).to_string();
        assert!(msg.contains("truncated"), "{msg}");
    }

    #[test]
    fn a_newer_format_version_is_refused() {
        let dir = TempDir::new("version");
        let path = dir.join("00001.v6.tsv.zst");
        write_raw(
            &path,
            b"a.test\thttp://a.test/\t0\t0\tseed\t0\t-\t-\t-\t-\t-\t-\n",
        );
        let e = SegmentReader::open(&path)
            .err()
            .expect("v6 must be refused");
        assert!(e.is_fatal());
        assert!(matches!(
            e,
            SegmentError::UnsupportedVersion { found: 6, .. }
        ));
        assert!(e.to_string().contains("00001.v6.tsv.zst"), "{e}");
        assert!(
            SegmentWriter::create(dir.join("00002.v1.tsv.zst")).is_err(),
            "only the current version is written"
        );
    }

    #[test]
    fn version_1_files_are_read_with_six_fields_and_no_not_before() {
        let dir = TempDir::new("v1");
        let path = dir.join("00001.v1.tsv.zst");
        write_raw(
            &path,
            b"a.test\thttp://a.test/\t0\t0\tseed\t0\na.test\thttp://a.test/b\t1\t0\tlink\t0\t-\n",
        );
        let (good, bad, _) = read_all(&path);
        assert_eq!(good, [rec("a.test", "http://a.test/", 0, 0, Via::Seed, 0)]);
        assert_eq!(bad.len(), 1, "seven fields are not version 1");
        assert!(bad[0].1.contains("expected 6"), "{}", bad[0].1);
    }

    #[test]
    fn random_bytes_never_panic_raw_or_compressed() {
        let dir = TempDir::new("fuzz");
        let path = dir.join("f.v1.tsv.zst");
        let mut rng = Rng::new(42);
        let alphabet = b"\t\n\r0123456789ab.seedlink\xff\xc3\x00 ";
        for round in 0..300 {
            let len = rng.below(4000);
            let bytes: Vec<u8> = if round % 2 == 0 {
                (0..len).map(|_| rng.next_u64() as u8).collect()
            } else {
                // Text-like bytes with many separators: exercises the parser.
                (0..len)
                    .map(|_| alphabet[rng.below(alphabet.len())])
                    .collect()
            };
            let compressed = round % 4 < 2;
            if compressed {
                write_raw(&path, &bytes);
            } else {
                std::fs::write(&path, &bytes).unwrap();
            }
            let mut r = match SegmentReader::open(&path) {
                Ok(r) => r,
                Err(e) => {
                    assert!(e.is_fatal());
                    continue;
                }
            };
            let mut rec = SegmentRecord::default();
            let (mut ok, mut bad) = (0u64, 0u64);
            let mut ended = false;
            for _ in 0..10_000 {
                match r.read_next(&mut rec) {
                    Ok(true) => ok += 1,
                    Ok(false) => {
                        ended = true;
                        break;
                    }
                    Err(e) if e.is_fatal() => {
                        assert!(!compressed, "valid zstd must not fail: {e}");
                        ended = true;
                        break;
                    }
                    Err(_) => bad += 1,
                }
            }
            assert!(ended);
            assert_eq!(bad, r.malformed());
            if compressed {
                let lines = bytes.split(|&b| b == b'\n').count() as u64
                    - u64::from(bytes.is_empty() || bytes.ends_with(b"\n"));
                assert_eq!(
                    ok + bad,
                    lines,
                    "round {round}: every line is read or reported"
                );
            }
        }
    }

    #[test]
    fn the_via_table_follows_the_enum() {
        for (i, v) in Via::ALL.iter().enumerate() {
            assert_eq!(*v as usize, i);
            assert_eq!(Via::parse(v.as_str()), Some(*v));
        }
    }

    #[test]
    fn concatenated_segments_read_as_one() {
        // `cat a.v5.tsv.zst b.v5.tsv.zst > c.v5.tsv.zst` is a valid segment.
        let dir = TempDir::new("concat");
        let mut all = Vec::new();
        for (name, host) in [("a.v5.tsv.zst", "a.test"), ("b.v5.tsv.zst", "b.test")] {
            let path = dir.join(name);
            let mut w = SegmentWriter::create(&path).unwrap();
            w.write(&rec(host, &format!("http://{host}/"), 0, 0, Via::Seed, 0))
                .unwrap();
            w.finish().unwrap();
            all.extend(std::fs::read(&path).unwrap());
        }
        let path = dir.join("c.v5.tsv.zst");
        std::fs::write(&path, all).unwrap();
        let (good, bad, _) = read_all(&path);
        assert!(bad.is_empty());
        let hosts: Vec<&str> = good.iter().map(|r| r.host.as_str()).collect();
        assert_eq!(hosts, ["a.test", "b.test"]);
    }

    #[test]
    fn version_3_files_are_read_but_not_with_the_sitemap_words_of_version_4() {
        let dir = TempDir::new("v3");
        let v3 = dir.join("00001.v3.tsv.zst");
        write_raw(
            &v3,
            b"a.test\thttp://a.test/\t0\t0\trecrawl\t0\t-\t-\t-\t-\t-\n\
              a.test\thttp://a.test/s\t1\t0\tsitemap\t0\t-\t-\t-\t-\t-\n",
        );
        let (good, bad, _) = read_all(&v3);
        assert_eq!(
            good,
            [rec("a.test", "http://a.test/", 0, 0, Via::Recrawl, 0)]
        );
        assert_eq!(bad.len(), 1);
        assert!(bad[0].1.contains("unknown via \"sitemap\""), "{}", bad[0].1);

        let v5 = dir.join("00002.v5.tsv.zst");
        let records = [
            rec("a.test", "http://a.test/s", 1, 0, Via::Sitemap, 0),
            rec(
                "a.test",
                "http://a.test/sitemap.xml",
                0,
                0,
                Via::SitemapFile,
                0,
            ),
        ];
        let mut w = SegmentWriter::create(&v5).unwrap();
        for r in &records {
            w.write(r).unwrap();
        }
        w.finish().unwrap();
        let text =
            String::from_utf8(zstd::decode_all(&std::fs::read(&v5).unwrap()[..]).unwrap()).unwrap();
        assert!(text.contains("\tsitemap-file\t"), "{text}");
        let (good, bad, _) = read_all(&v5);
        assert_eq!(good, records);
        assert!(bad.is_empty());
    }

    #[test]
    fn version_4_files_are_read_with_eleven_fields_and_no_record_id() {
        let dir = TempDir::new("v4");
        let v4 = dir.join("00001.v4.tsv.zst");
        write_raw(
            &v4,
            b"a.test\thttp://a.test/r\t1\t0\trecrawl\t0\t-\t\"v1\"\t-\tsha1:ABC\t2026-11-24T10:00:05.250Z\n\
              a.test\thttp://a.test/s\t1\t0\tsitemap\t0\t-\t-\t-\t-\t-\n\
              a.test\thttp://a.test/x\t1\t0\tlink\t0\t-\t-\t-\t-\t-\t<urn:uuid:x>\n",
        );
        let (good, bad, _) = read_all(&v4);
        assert_eq!(
            good,
            [
                SegmentRecord {
                    etag: "\"v1\"".into(),
                    digest: "sha1:ABC".into(),
                    fetched: Some(1_795_514_405_250),
                    record_id: String::new(),
                    ..rec("a.test", "http://a.test/r", 1, 0, Via::Recrawl, 0)
                },
                rec("a.test", "http://a.test/s", 1, 0, Via::Sitemap, 0),
            ]
        );
        assert_eq!(bad.len(), 1, "twelve fields are not version 4");
        assert!(bad[0].1.contains("expected 11"), "{}", bad[0].1);
        // Written again, the same URLs are a version 5 file with `-` for
        // the record ID.
        let v5 = dir.join("00002.v5.tsv.zst");
        let mut w = SegmentWriter::create(&v5).unwrap();
        for r in &good {
            w.write(r).unwrap();
        }
        w.finish().unwrap();
        let text =
            String::from_utf8(zstd::decode_all(&std::fs::read(&v5).unwrap()[..]).unwrap()).unwrap();
        assert!(
            text.starts_with(
                "a.test\thttp://a.test/r\t1\t0\trecrawl\t0\t-\t\"v1\"\t-\tsha1:ABC\t\
                 2026-11-24T10:00:05.250Z\t-\n"
            ),
            "{text}"
        );
        assert_eq!(read_all(&v5).0, good);
    }
}
