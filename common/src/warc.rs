//! WARC 1.1 files: one gzip member per record, a `warcinfo` record first in
//! each file, then `request`, `response` (or `revisit`) and `metadata`
//! records per fetch, and a CDXJ index beside each file ([`cdxj`]).
//!
//! Files are named `PREFIX-TIMESTAMP-SERIAL-HOST.warc.gz` (17-digit UTC
//! timestamp, 5-digit serial) and rolled over at a size limit (default 1 GB).
//! Every record carries `WARC-Record-ID`, `WARC-Date` (milliseconds, as
//! WARC 1.1 allows), `WARC-Warcinfo-ID` (its file's `warcinfo` record), and,
//! for fetches, `WARC-Target-URI`, `WARC-IP-Address`, `WARC-Protocol` (one
//! field per protocol: `http/1.1`, `tls/1.3`) and `WARC-Cipher-Suite` (https),
//! `WARC-Concurrent-To` (request ↔ response ← metadata), `WARC-Block-Digest`
//! and `WARC-Payload-Digest` (`sha1:` + base32), `WARC-Truncated` when the
//! body is incomplete, and the caller's extension fields (`X-Crawl-Hops`,
//! ...). The files pass `warcio check` and `warcio index`; `zcat FILE |
//! less` shows them as text.
//!
//! - [`WarcWriter`] stores an exchange with one `write`; [`ExchangeEncoder`]
//!   lets other threads do the compressing ([`WarcWriter::write_encoded`]);
//!   a file closed comes back as a [`ClosedFile`] with its index.
//! - [`WarcReader`] reads records in order with their offsets and compressed
//!   lengths, keeping at most a given number of block bytes in memory; it
//!   also reads the files of other tools (one gzip member for many records,
//!   uncompressed `.warc`) and, resyncing, skips a damaged record and goes on.
//! - After a crash, [`recover`] cuts the torn tail of the last file;
//!   [`list_files`] and [`file_serial`] find the files and the next serial
//!   (a resumed run starts a new file).
//!
//! Records are gzip members of their own, so any record can be read from its
//! offset alone: `tail -c +$((OFFSET+1)) FILE | zcat 2>/dev/null | head`.

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::SystemTime;

pub mod cdxj;
mod gzip;
mod ids;
mod inflate;
mod reader;
mod writer;

pub use reader::{WarcReader, recover};
pub use writer::{
    ClosedFile, DEFAULT_COMPRESSION_LEVEL, EncodedExchange, ExchangeEncoder, Record, WarcFields,
    WarcWriter, file_serial, list_files, payload_digest,
};

#[cfg(test)]
mod tests;

/// Extension field of the fetcher's response records: how it came to the
/// URL (a [`crate::segment::Via`] word; `robots` for robots.txt fetches,
/// which the segmenter skips).
pub const VIA_FIELD: &str = "X-Crawl-Via";
/// Extension field of the fetcher's response records: hops from a seed.
pub const HOPS_FIELD: &str = "X-Crawl-Hops";

/// The `warcinfo` field that says how HTTP messages are stored, with the
/// format version of the fetcher's files. Since format 2, `request` and
/// `response` blocks hold the bytes as written to and read from the
/// connection (codings included); files without the field come from
/// format 1, whose response bodies are stored decoded with their coding
/// headers renamed `X-Crawler-*`; readers handle both the same way (decode
/// what the headers say is coded). Format 3 adds a `metadata` record per
/// fetch ([`METADATA_OUTLINKS`]), millisecond `WARC-Date`s,
/// `WARC-Warcinfo-ID`, `WARC-Protocol`, `WARC-Cipher-Suite`, `WARC-Refers-To`
/// and the CDXJ index beside each file. Format 4 lists the links of each
/// 2xx HTML page in its metadata record ([`METADATA_OUTLINKS`] lines `L`,
/// then [`METADATA_LINKS_SUMMARY`]). The records of formats 2 to 4 read
/// alike.
pub const HTTP_RECORDS_FIELD: (&str, &str) = ("http-records", "as-exchanged; format 4");

/// The format version [`HTTP_RECORDS_FIELD`] gives, read from its value
/// (`as-exchanged; format 3` → 3); 1 for a file without the field.
pub fn format_version(http_records: Option<&str>) -> u32 {
    http_records
        .and_then(|v| v.rsplit_once("format "))
        .and_then(|(_, n)| n.trim().parse().ok())
        .unwrap_or(1)
}

/// The field of the fetcher's `metadata` records that lists a link of the
/// page (Heritrix's form: `outlink: URL HOP CONTEXT`, `L` for a link, `R`
/// for a redirect's `Location`; `CONTEXT` is where the link was found:
/// `a/@href`, `location`).
pub const METADATA_OUTLINKS: &str = "outlink";

/// The field of the fetcher's `metadata` records that closes the complete
/// link list of an HTML page: `listed N nofollow N scheme N invalid N
/// same-page N over-cap N incomplete 0|1 body BYTES decoded
/// complete|cut|incomplete|failed robots-name TOKEN` (the `outlink: ... L`
/// lines before it, the links not listed by reason, then how the body was
/// read and whose robots directives were obeyed). A record without it
/// lists no page links: not HTML, not 2xx, outlinks turned off, or written
/// before format 4.
pub const METADATA_LINKS_SUMMARY: &str = "crawlLinks";

/// The field of the fetcher's `metadata` records that keeps the URL a page
/// names as its canonical one (its `<link rel=canonical href>`, else a
/// `Link: <URL>; rel="canonical"` header), canonical, as a hint: the
/// crawl never merges URLs or hosts by it. Added to format 4 records (an
/// added field: readers pass over fields they do not know).
pub const METADATA_CANONICAL: &str = "crawlCanonical";

/// Why a fetch is stored as a `revisit` record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RevisitProfile {
    /// The server answered 304 Not Modified to a conditional request.
    ServerNotModified,
    /// The payload is the same as at the last fetch (same digest).
    IdenticalPayloadDigest,
}

impl RevisitProfile {
    /// The `WARC-Profile` URI (WARC 1.1).
    pub fn uri(self) -> &'static str {
        match self {
            RevisitProfile::ServerNotModified => {
                "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
            }
            RevisitProfile::IdenticalPayloadDigest => {
                "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
            }
        }
    }

    /// The profile a `WARC-Profile` value names (1.0 and 1.1 URIs).
    pub fn of_uri(uri: &str) -> Option<RevisitProfile> {
        if uri.ends_with("/revisit/server-not-modified") {
            Some(RevisitProfile::ServerNotModified)
        } else if uri.ends_with("/revisit/identical-payload-digest") {
            Some(RevisitProfile::IdenticalPayloadDigest)
        } else {
            None
        }
    }
}

/// What a `revisit` record says besides the exchange: why, and the record
/// it refers to (the same URI's last full response).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revisit {
    /// Why the response is not stored whole.
    pub profile: RevisitProfile,
    /// The `WARC-Record-ID` of the response referred to, if known.
    pub refers_to: Option<String>,
    /// When the response referred to was fetched, if known.
    pub refers_to_date: Option<SystemTime>,
}

/// Default size at which a new file is started.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 1_000_000_000;

/// Why a response was stored incomplete (`WARC-Truncated`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Truncated {
    /// The body exceeded the size limit.
    Length,
    /// The download exceeded its time limit.
    Time,
    /// The server closed the connection early.
    Disconnect,
}

impl Truncated {
    /// The `WARC-Truncated` value.
    pub fn as_str(self) -> &'static str {
        match self {
            Truncated::Length => "length",
            Truncated::Time => "time",
            Truncated::Disconnect => "disconnect",
        }
    }
}

/// Settings of a [`WarcWriter`].
#[derive(Debug, Clone)]
pub struct WarcWriterConfig {
    /// Directory the files go to (must exist).
    pub dir: PathBuf,
    /// First part of file names.
    pub prefix: String,
    /// A file that reaches this size is closed and the next record starts a new one.
    pub max_file_size: u64,
    /// Serial number of the first file written (continue after existing files on resume).
    pub first_serial: u32,
    /// Host name put in file names.
    pub hostname: String,
    /// Fields of each file's `warcinfo` record (`software`, `operator`,
    /// `http-header-user-agent`, `robots`, ...), in order; `format` and
    /// `conformsTo` are added.
    pub info: Vec<(String, String)>,
}

/// One fetch to store as a request record and a response record.
#[derive(Debug, Clone)]
pub struct Exchange<'a> {
    /// The URL fetched.
    pub target_uri: &'a str,
    /// When the request was sent.
    pub date: SystemTime,
    /// The address connected to.
    pub ip: Option<IpAddr>,
    /// The HTTP request as sent: request line, headers, blank line, and the
    /// body if there was one (the record's payload digest covers what
    /// follows the blank line).
    pub request_head: &'a [u8],
    /// The HTTP response head as stored (status line, headers, blank line).
    pub response_head: &'a [u8],
    /// The response body as stored.
    pub payload: &'a [u8],
    /// Set when the body is incomplete.
    pub truncated: Option<Truncated>,
    /// Extension fields added to the response record (e.g. `X-Crawl-Hops`).
    pub extra_fields: &'a [(&'a str, String)],
    /// `WARC-Protocol` values of every record of the fetch, one field each
    /// (`http/1.1`, and `tls/1.3` over TLS).
    pub protocols: &'a [&'a str],
    /// `WARC-Cipher-Suite` (the IANA name) of an https fetch.
    pub cipher_suite: Option<&'a str>,
    /// Fields of a `metadata` record about the fetch, written after its
    /// response (`application/warc-fields`); none when `None`.
    pub metadata: Option<&'a WarcFields>,
}

/// Where a fetch was stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredExchange {
    /// The WARC file.
    pub file: PathBuf,
    /// Offset of the request record's gzip member.
    pub offset: u64,
    /// Compressed length of both records.
    pub length: u64,
}

/// A record read back, with where it starts.
#[derive(Debug, Clone, Default)]
pub struct WarcRecord {
    /// Offset of the record in the file: of its gzip member, or of its
    /// first byte in an uncompressed file. A record that shares a gzip
    /// member with records before it gets the compressed bytes read so far
    /// (near, not exact).
    pub offset: u64,
    /// Bytes from `offset` to the end of the record (of its gzip member).
    pub length: u64,
    /// Named fields in order.
    pub headers: Vec<(String, String)>,
    /// The block (for a response: HTTP head + payload). May be cut at the
    /// reader's block limit; see [`WarcRecord::block_cut`].
    pub block: Vec<u8>,
    /// True if the reader kept only the first bytes of a larger block.
    pub block_cut: bool,
}

impl WarcRecord {
    /// The first field called `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        crate::http::header_value(&self.headers, name)
    }
    /// `WARC-Type`.
    pub fn record_type(&self) -> Option<&str> {
        self.header("WARC-Type")
    }
    /// `WARC-Target-URI`, without the angle brackets of the WARC 1.0
    /// grammar (`<http://...>`, as wget writes it).
    pub fn target_uri(&self) -> Option<&str> {
        let uri = self.header("WARC-Target-URI")?;
        Some(
            uri.strip_prefix('<')
                .and_then(|u| u.strip_suffix('>'))
                .unwrap_or(uri),
        )
    }
}

/// A problem reading a WARC file.
#[derive(Debug, thiserror::Error)]
pub enum WarcError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The last record is incomplete (e.g. the writer was killed); reading stops here.
    #[error("{path}: truncated record at offset {offset}; the records before it are intact")]
    Truncated {
        /// The file.
        path: PathBuf,
        /// Offset of the incomplete member.
        offset: u64,
    },
    /// A damaged record or gzip member that a
    /// [resyncing](WarcReader::resyncing) reader skipped; unless
    /// `resumed_at` is `None`, the next read goes on after it.
    #[error(
        "{path}: offset {offset}: damaged record ({reason}); {}",
        match resumed_at {
            Some(at) => format!("{skipped} bytes skipped, reading goes on at offset {at}"),
            None => format!("the rest of the file ({skipped} bytes) is skipped"),
        }
    )]
    Damaged {
        /// The file.
        path: PathBuf,
        /// Where the damaged record starts.
        offset: u64,
        /// What is wrong.
        reason: String,
        /// Bytes from `offset` to where reading goes on.
        skipped: u64,
        /// Where the next record starts (`None`: none was found).
        resumed_at: Option<u64>,
    },
    /// A member is not a WARC record; reading stops here.
    #[error("{path}: offset {offset}: not a WARC record: {reason}")]
    Malformed {
        /// The file.
        path: PathBuf,
        /// Offset of the bad member.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
}

/// Result of [`recover`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovery {
    /// Complete records kept.
    pub records: u64,
    /// New length of the file.
    pub valid_len: u64,
    /// Bytes cut off the end (0 if the file was intact).
    pub cut: u64,
}
