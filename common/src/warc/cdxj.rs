//! CDXJ indexes of WARC files, in the form pywb and `cdxj-indexer` write
//! and read: one line per capture, sorted,
//!
//! ```text
//! SURT TIMESTAMP {"url": "...", "mime": "...", "status": "...", "digest": "...", "length": "...", "offset": "...", "filename": "..."}
//! ```
//!
//! - SURT: the URL's sort key ([`surt`]); TIMESTAMP: the record's
//!   `WARC-Date` as 14 digits (`YYYYMMDDhhmmss`, fractions of a second
//!   dropped, as `cdxj-indexer` does);
//! - `url`: `WARC-Target-URI`; `mime`: the media type of the HTTP
//!   `Content-Type` (of the WARC `Content-Type` for `resource` and
//!   `metadata` records), `warc/revisit` for a revisit; `status`: the HTTP
//!   status (responses and revisits); `digest`: `WARC-Payload-Digest`; a
//!   key without a value is left out;
//! - `length`, `offset`: the record's gzip member in the file; `filename`:
//!   the file's name.
//!
//! Indexed: `response`, `revisit`, `resource` and `metadata` records, but
//! `resource` and `metadata` records of `application/warc-fields` (so not
//! the fetcher's metadata records); `request` and `warcinfo` records are
//! not. The JSON is written as Python's `json.dumps` writes it (`", "` and
//! `": "` separators, everything outside printable ASCII escaped), so that
//! a file equals what `cdxj-indexer --sort` makes of the same WARC file,
//! line for line (the test `cdxj_indexer` checks it).
//!
//! The fetcher writes each WARC file's index beside it when it closes the
//! file (`NAME.warc.gz` → `NAME.cdxj`, [`index_path`]), sorted in bounded
//! memory ([`IndexSorter`]); [`index_warc`]
//! builds one by reading a file (a resumed run, an older crawl).

use std::borrow::Cow;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::atomic::AtomicFile;
use crate::warc::{WarcError, WarcReader, WarcRecord, payload_digest};

mod sorter;
mod surt;

pub use sorter::{IndexSorter, RUN_BYTES};
pub use surt::surt;

/// File-name suffix of an index beside its WARC file.
pub const SUFFIX: &str = ".cdxj";

/// The index of the WARC file at `warc`: the same name with `.cdxj` in
/// place of `.warc.gz` (or `.warc`).
///
/// ```
/// use std::path::Path;
/// let p = common::warc::cdxj::index_path(Path::new("fetched/00003/crawl-00003-20261123072702123-00000-box.warc.gz"));
/// assert_eq!(p, Path::new("fetched/00003/crawl-00003-20261123072702123-00000-box.cdxj"));
/// ```
pub fn index_path(warc: &Path) -> PathBuf {
    let name = warc
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name
        .strip_suffix(".warc.gz")
        .or_else(|| name.strip_suffix(".warc"))
        .unwrap_or(&name);
    warc.with_file_name(format!("{stem}{SUFFIX}"))
}

/// The first 14 digits of a `WARC-Date` (`2026-11-24T10:00:05.250Z` →
/// `20261124100005`); `None` if it does not hold six numbers.
pub fn timestamp14(warc_date: &str) -> Option<String> {
    let mut ts = String::with_capacity(14);
    push_timestamp14(&mut ts, warc_date).then_some(ts)
}

/// Appends [`timestamp14`] of `warc_date` to `out` (nothing when it has
/// none); false when it has none.
fn push_timestamp14(out: &mut String, warc_date: &str) -> bool {
    use std::fmt::Write as _;
    let start = out.len();
    let mut nums = warc_date
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty());
    for width in [4, 2, 2, 2, 2, 2] {
        let Some(n) = nums.next().and_then(|n| n.parse::<u32>().ok()) else {
            out.truncate(start);
            return false;
        };
        let _ = write!(out, "{n:0width$}");
    }
    true
}

/// What one indexed record says, as its line needs it.
#[derive(Debug, Clone, Copy)]
pub struct Capture<'a> {
    /// `WARC-Type`.
    pub record_type: &'a str,
    /// `WARC-Target-URI`.
    pub url: &'a str,
    /// `WARC-Date`, as written.
    pub date: &'a str,
    /// For `response` and `revisit` records: the HTTP head at the start
    /// of the block (status line, headers), if the block has one.
    pub http_head: Option<&'a [u8]>,
    /// For `resource` and `metadata` records: the WARC `Content-Type`.
    pub content_type: Option<&'a str>,
    /// `WARC-Payload-Digest`, if known.
    pub digest: Option<&'a str>,
}

impl Capture<'_> {
    /// The start of the capture's line, up to the `digest` value: what is
    /// known before the record's place in a file. [`finish_line`] adds
    /// the rest.
    pub fn line_head(&self) -> String {
        let mut out = String::with_capacity(256);
        out.push_str(&surt(self.url));
        out.push(' ');
        push_timestamp14(&mut out, self.date);
        out.push_str(" {\"url\": ");
        push_json_str(&mut out, self.url);
        let head = match self.record_type {
            "response" | "revisit" => self.http_head.and_then(HttpHead::parse),
            _ => None,
        };
        let mime = match self.record_type {
            "revisit" => Some("warc/revisit"),
            "response" => head
                .as_ref()
                .and_then(|h| h.content_type.as_deref())
                .map(media_type),
            _ => self.content_type.map(media_type),
        };
        if let Some(mime) = mime {
            out.push_str(", \"mime\": ");
            push_json_str(&mut out, mime);
        }
        if let Some(h) = &head {
            out.push_str(", \"status\": ");
            push_json_str(&mut out, h.status());
        }
        if let Some(digest) = self.digest {
            out.push_str(", \"digest\": ");
            push_json_str(&mut out, digest);
        }
        out
    }
}

/// Completes a line begun by [`Capture::line_head`] with the record's
/// place: its gzip member's `length` and `offset`, and the file's name.
pub fn finish_line(head: &str, length: u64, offset: u64, filename: &str) -> String {
    let mut out = String::with_capacity(head.len() + filename.len() + 64);
    push_line(&mut out, head, length, offset, filename);
    out
}

/// Appends the line [`finish_line`] makes to `out` (a buffer of lines).
pub fn push_line(out: &mut String, head: &str, length: u64, offset: u64, filename: &str) {
    use std::fmt::Write as _;
    out.push_str(head);
    let _ = write!(
        out,
        ", \"length\": \"{length}\", \"offset\": \"{offset}\", \"filename\": "
    );
    push_json_str(out, filename);
    out.push('}');
}

/// The line of a record read back from `filename`, or `None` if the record
/// is not indexed (see the module doc).
pub fn line_of(rec: &WarcRecord, filename: &str) -> Option<String> {
    let record_type = rec.record_type()?;
    let content_type = rec.header("Content-Type");
    match record_type {
        "response" | "revisit" => {}
        "resource" | "metadata" if content_type != Some("application/warc-fields") => {}
        _ => return None,
    }
    let url = rec.header("WARC-Target-URI").unwrap_or_default();
    let http = url.starts_with("http:") || url.starts_with("https:");
    let http_head =
        (http && matches!(record_type, "response" | "revisit")).then_some(&rec.block[..]);
    let computed;
    let digest = match rec.header("WARC-Payload-Digest") {
        Some(d) => Some(d),
        // A tool computes the digest it lacks, but for a revisit.
        None if record_type != "revisit" && !rec.block_cut => {
            let payload = match http_head {
                Some(block) => &block[head_end(block)..],
                None => &rec.block[..],
            };
            computed = payload_digest(payload);
            Some(computed.as_str())
        }
        None => None,
    };
    let capture = Capture {
        record_type,
        url,
        date: rec.header("WARC-Date").unwrap_or_default(),
        http_head,
        content_type,
        digest,
    };
    Some(finish_line(
        &capture.line_head(),
        rec.length,
        rec.offset,
        filename,
    ))
}

/// The lines of every indexed record of the WARC file at `path`, sorted;
/// reading stops at the first damaged record (an index names only what
/// can be read from its offset).
pub fn index_warc(path: &Path) -> Result<Vec<String>, WarcError> {
    let filename = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut reader = WarcReader::open(path, MAX_BLOCK)?;
    let mut rec = WarcRecord::default();
    let mut lines = Vec::new();
    while reader.read_next(&mut rec)? {
        lines.extend(line_of(&rec, &filename));
    }
    lines.sort_unstable();
    Ok(lines)
}

/// Block bytes read per record to index it: the HTTP head, and the payload
/// of a record that lacks its digest.
const MAX_BLOCK: usize = 4 << 20;

/// Writes `lines`, sorted, to `path` atomically (a temporary file, fsync,
/// rename).
pub fn write_index(path: &Path, lines: &mut [String]) -> io::Result<()> {
    lines.sort_unstable();
    let mut file = AtomicFile::create(path)?;
    let mut out = io::BufWriter::with_capacity(1 << 16, &mut file);
    for line in lines.iter() {
        out.write_all(line.as_bytes())?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    drop(out);
    file.commit()
}

/// The status and `Content-Type` of an HTTP head, read as `warcio` reads
/// them: each line decoded as UTF-8, else Latin-1, trailing white space
/// stripped; the status is the second word of the first line; the first
/// `Content-Type` header (folded lines joined) is the one.
struct HttpHead<'a> {
    /// The status line, stripped.
    first: Cow<'a, str>,
    /// Where the status is in `first`.
    status: std::ops::Range<usize>,
    content_type: Option<String>,
}

impl<'a> HttpHead<'a> {
    /// Reads the head; only the `Content-Type` value (and a status line
    /// that is not UTF-8) is copied, since this runs for every page stored.
    fn parse(block: &'a [u8]) -> Option<HttpHead<'a>> {
        let mut lines = block.split_inclusive(|&b| b == b'\n');
        let first = match decode_line(lines.next()?) {
            Cow::Borrowed(s) => Cow::Borrowed(python_rstrip(s)),
            Cow::Owned(s) => Cow::Owned(python_rstrip(&s).to_string()),
        };
        if first.is_empty() {
            return None;
        }
        let status = match first.split_once(' ') {
            Some((_, rest)) => {
                let statusline = python_strip(rest);
                let at = statusline.as_ptr() as usize - first.as_ptr() as usize;
                at..at + statusline.split(' ').next().unwrap_or_default().len()
            }
            None => 0..0,
        };
        Some(HttpHead {
            content_type: content_type(lines),
            first,
            status,
        })
    }

    /// The status: the second word of the first line.
    fn status(&self) -> &str {
        &self.first[self.status.clone()]
    }
}

/// The value of the first `Content-Type` header among the header `lines`
/// (folded lines joined), as warcio reads it.
fn content_type<'a>(lines: impl Iterator<Item = &'a [u8]>) -> Option<String> {
    // The value of the first Content-Type header, while its folded lines
    // may follow (the next header ends it).
    let mut value: Option<String> = None;
    for raw in lines {
        let line = decode_line(raw);
        let line = python_rstrip(&line);
        if line.is_empty() {
            break;
        }
        if line.starts_with([' ', '\t']) {
            if let Some(v) = &mut value {
                v.push_str(line);
            }
            continue;
        }
        if value.is_some() {
            // The first one is complete.
            break;
        }
        if let Some((name, v)) = line.split_once(':')
            && name
                .trim_end_matches([' ', '\t'])
                .eq_ignore_ascii_case("content-type")
        {
            value = Some(python_lstrip(v).to_string());
        }
    }
    value
}

/// Where the HTTP head ends in `block` (after its blank line), as warcio
/// finds it: the first line that is empty once trailing white space is
/// stripped; the whole block if there is none.
fn head_end(block: &[u8]) -> usize {
    let mut pos = 0;
    for (i, line) in block.split_inclusive(|&b| b == b'\n').enumerate() {
        pos += line.len();
        if i > 0 && python_rstrip(&decode_line(line)).is_empty() {
            return pos;
        }
    }
    block.len()
}

fn decode_line(line: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(line) {
        Ok(s) => s.into(),
        Err(_) => line.iter().map(|&b| b as char).collect::<String>().into(),
    }
}

/// Python's `str.isspace()` for one character.
fn python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

fn python_rstrip(s: &str) -> &str {
    s.trim_end_matches(python_space)
}

fn python_lstrip(s: &str) -> &str {
    s.trim_start_matches(python_space)
}

fn python_strip(s: &str) -> &str {
    s.trim_matches(python_space)
}

/// The media type of a `Content-Type` value: what comes before the first
/// `;` or white space, stripped (an empty value stays empty).
fn media_type(value: &str) -> &str {
    let end = value
        .find(|c: char| c == ';' || python_space(c))
        .unwrap_or(value.len());
    python_strip(&value[..end])
}

/// Appends `s` as a JSON string the way Python's `json.dumps` writes it:
/// `"` and `\` escaped, `\n \r \t \b \f` in short form, every other
/// character outside printable ASCII as `\uXXXX` (lower-case hex, UTF-16).
pub fn push_json_str(out: &mut String, s: &str) {
    out.push('"');
    if s.bytes()
        .all(|b| (b' '..=b'~').contains(&b) && b != b'"' && b != b'\\')
    {
        // Nearly every URL, type and file name: nothing to escape.
        out.push_str(s);
        out.push('"');
        return;
    }
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_are_written_as_python_writes_them() {
        let mut out = String::new();
        push_json_str(&mut out, "a\"b\\c\nd\u{1}\u{7f}é😀");
        assert_eq!(out, r#""a\"b\\c\nd\u0001\u007f\u00e9\ud83d\ude00""#);
    }

    #[test]
    fn timestamps_drop_fractions() {
        assert_eq!(
            timestamp14("2026-11-24T10:00:05.250Z").as_deref(),
            Some("20261124100005")
        );
        assert_eq!(
            timestamp14("2026-11-24T10:00:05Z").as_deref(),
            Some("20261124100005")
        );
        assert_eq!(timestamp14("yesterday"), None);
    }

    #[test]
    fn a_line_has_the_fields_of_cdxj_indexer_in_its_order() {
        let head =
            b"HTTP/1.1 200 OK\r\nServer: x\r\ncontent-type:  text/html ; charset=utf-8\r\n\r\n";
        let c = Capture {
            record_type: "response",
            url: "http://www.example.com/A/",
            date: "2026-11-24T10:00:05.250Z",
            http_head: Some(head),
            content_type: None,
            digest: Some("sha1:ABC"),
        };
        assert_eq!(
            finish_line(&c.line_head(), 123, 456, "f.warc.gz"),
            "com,example)/a 20261124100005 {\"url\": \"http://www.example.com/A/\", \
             \"mime\": \"text/html\", \"status\": \"200\", \"digest\": \"sha1:ABC\", \
             \"length\": \"123\", \"offset\": \"456\", \"filename\": \"f.warc.gz\"}"
        );
        let revisit = Capture {
            record_type: "revisit",
            http_head: Some(b"HTTP/1.1 304 Not Modified\r\n\r\n"),
            digest: None,
            ..c
        };
        assert_eq!(
            revisit.line_head(),
            "com,example)/a 20261124100005 {\"url\": \"http://www.example.com/A/\", \
             \"mime\": \"warc/revisit\", \"status\": \"304\""
        );
        let no_type = Capture {
            http_head: Some(b"HTTP/1.0 404\r\n\r\n"),
            ..c
        };
        assert!(
            no_type
                .line_head()
                .ends_with("\"status\": \"404\", \"digest\": \"sha1:ABC\"")
        );
    }
}
