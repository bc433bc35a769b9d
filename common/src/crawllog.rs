//! `fetched/ID/crawl.log`: one line per URL attempted, appended as the fetcher
//! goes, tab-separated:
//!
//! ```text
//! time                      status  bytes  ms   content-type  url                     via   hops  note
//! 2026-11-23T04:27:02.123Z  200     5120   84   text/html     https://example.com/a   link  1     -
//! 2026-11-23T04:27:02.300Z  301     0      12   text/html     https://example.com/b   link  1     redirect https://example.com/c
//! 2026-11-23T04:27:03.001Z  robots  0      0    -             https://example.com/x   link  1     -
//! ```
//! `status` is the HTTP status, or a word for what happened instead (see
//! [`ErrorCode`]); `note` starts with a code word when there is more to say
//! (`redirect TARGET`, `too-big ...`, `retry-after 30s`, error messages).
//! `awk -F'\t' '$2 !~ /^[0-9]/'` lists every URL that got no HTTP response.

use std::time::SystemTime;

use crate::segment::Via;

/// Outcomes without an HTTP status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorCode {
    /// The host name did not resolve.
    Dns,
    /// Connection refused.
    Refused,
    /// Connect, first-byte or whole-download timeout.
    Timeout,
    /// Other connection failures (reset, unreachable).
    Connect,
    /// TLS handshake or certificate failure.
    Tls,
    /// The server broke HTTP.
    Protocol,
    /// The body exceeded the size limit (stored truncated; note only).
    TooBig,
    /// The address resolved to loopback, private, link-local or unspecified.
    PrivateAddress,
    /// Disallowed by robots.txt.
    Robots,
    /// robots.txt could not be fetched (5xx, 429, unreachable); retried later.
    RobotsUnavailable,
    /// The host asks for a Crawl-delay above the configured cap.
    CrawlDelay,
    /// The host failed too often and was dropped for this run.
    HostDropped,
    /// The URL is longer than the limit.
    UrlTooLong,
    /// Not a valid http(s) URL.
    BadUrl,
}

impl ErrorCode {
    /// Every code, for reports.
    pub const ALL: [ErrorCode; 14] = [
        ErrorCode::Dns,
        ErrorCode::Refused,
        ErrorCode::Timeout,
        ErrorCode::Connect,
        ErrorCode::Tls,
        ErrorCode::Protocol,
        ErrorCode::TooBig,
        ErrorCode::PrivateAddress,
        ErrorCode::Robots,
        ErrorCode::RobotsUnavailable,
        ErrorCode::CrawlDelay,
        ErrorCode::HostDropped,
        ErrorCode::UrlTooLong,
        ErrorCode::BadUrl,
    ];

    /// The word written in the log.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::Dns => "dns",
            ErrorCode::Refused => "refused",
            ErrorCode::Timeout => "timeout",
            ErrorCode::Connect => "connect",
            ErrorCode::Tls => "tls",
            ErrorCode::Protocol => "protocol",
            ErrorCode::TooBig => "too-big",
            ErrorCode::PrivateAddress => "private-address",
            ErrorCode::Robots => "robots",
            ErrorCode::RobotsUnavailable => "robots-unavailable",
            ErrorCode::CrawlDelay => "crawl-delay",
            ErrorCode::HostDropped => "host-dropped",
            ErrorCode::UrlTooLong => "url-too-long",
            ErrorCode::BadUrl => "bad-url",
        }
    }

    /// Inverse of [`ErrorCode::as_str`].
    pub fn parse(s: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

/// The status column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// An HTTP response was received.
    Http(u16),
    /// No HTTP response; why.
    Error(ErrorCode),
}

/// One crawl log line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    /// When the attempt ended.
    pub time: SystemTime,
    /// What happened.
    pub status: Status,
    /// Body bytes stored (after decoding).
    pub bytes: u64,
    /// Duration of the attempt in milliseconds.
    pub duration_ms: u64,
    /// Media type from `Content-Type`, or empty.
    pub content_type: String,
    /// The URL attempted.
    pub url: String,
    /// How it was found.
    pub via: Via,
    /// Hops from a seed.
    pub hops: u32,
    /// Extra information, starting with a code word; empty for none.
    pub note: String,
}

/// Appends `line` (with its newline) to `out`. Tabs and newlines inside fields
/// are replaced by spaces so that one attempt is always one line.
pub fn format_line(line: &LogLine, out: &mut String) {
    let _ = (line, out);
    todo!("format_line")
}

/// Parses one line written by [`format_line`] (with or without its newline).
pub fn parse_line(s: &str) -> Result<LogLine, String> {
    let _ = s;
    todo!("parse_line")
}
