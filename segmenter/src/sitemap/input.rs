//! From the fetched body to a stream of uncompressed bytes: gzip detection,
//! the `max_bytes` cap ([`super::cap`]), byte order mark and the text-or-XML
//! decision.

use std::io::{self, BufRead, BufReader};

use flate2::bufread::MultiGzDecoder;

use super::cap::{Cap, Capped, gzip_error};
use super::{Limits, Sink, text, xml};

/// The first bytes of every gzip file.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
/// UTF-8 byte order mark.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Reads `body` as whatever it is, into `sink`.
pub(super) fn dispatch(body: &[u8], content_type: Option<&str>, sink: &mut Sink<'_>) {
    let max = sink.limits.max_bytes;
    if body.starts_with(&GZIP_MAGIC) {
        let cap = Cap::new(MultiGzDecoder::new(body), max, sink.limits.truncated);
        let mut r = BufReader::with_capacity(64 * 1024, cap);
        let skipped = match skip_blanks(&mut r) {
            Ok(n) => n,
            Err(e) => {
                sink.summary.error = Some(gzip_error(r.delivered(), &e));
                return;
            }
        };
        let first = r.fill_buf().ok().and_then(|b| b.first().copied());
        if first.is_none() {
            return after_empty(r.cut(), sink);
        }
        match syntax(first, content_type, sink.limits) {
            Syntax::Xml => xml::read_buffered(r, skipped, sink),
            Syntax::Text => text::read(r, sink),
            Syntax::Neither => {}
        }
    } else {
        let doc = match usize::try_from(max) {
            Ok(max) if body.len() > max => {
                sink.summary.cut_at_bytes = true;
                &body[..max]
            }
            _ => body,
        };
        sink.summary.cut_at_bytes |= sink.limits.truncated;
        let mut rest = doc;
        // Cannot fail on a slice.
        let skipped = skip_blanks(&mut rest).unwrap_or(0);
        if rest.is_empty() {
            return after_empty(sink.limits.truncated, sink);
        }
        match syntax(rest.first().copied(), content_type, sink.limits) {
            Syntax::Xml => xml::read_slice(rest, skipped, sink),
            Syntax::Text => text::read(rest, sink),
            Syntax::Neither => {}
        }
    }
}

/// A document of blanks only (or nothing): not a sitemap.
fn after_empty(cut: bool, sink: &mut Sink<'_>) {
    sink.summary.cut_at_bytes |= cut;
}

/// Consumes a byte order mark and blank space; returns how many bytes.
fn skip_blanks(r: &mut impl BufRead) -> io::Result<u64> {
    let mut skipped = 0u64;
    let buf = r.fill_buf()?;
    if buf.starts_with(BOM) {
        r.consume(BOM.len());
        skipped += BOM.len() as u64;
    }
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok(skipped);
        }
        let len = buf.len();
        let n = buf.iter().take_while(|b| b.is_ascii_whitespace()).count();
        r.consume(n);
        skipped += n as u64;
        if n < len {
            return Ok(skipped);
        }
    }
}

/// How a document is read.
#[derive(Debug, PartialEq, Eq)]
enum Syntax {
    Xml,
    Text,
    /// Not a sitemap: nothing is read.
    Neither,
}

/// XML when it starts with `<`, or when it is served as XML (and is then
/// reported as what it is, not read as lines of text); else text, unless
/// served as HTML (a "not found" page) or only `urlset` and `sitemapindex`
/// are wanted. Empty documents never get here.
fn syntax(first: Option<u8>, content_type: Option<&str>, limits: &Limits) -> Syntax {
    if first == Some(b'<') {
        return Syntax::Xml;
    }
    let mime = content_type
        .and_then(|t| t.split(';').next())
        .map(str::trim)
        .unwrap_or("");
    let mime = mime.as_bytes();
    if mime.len() >= 3 && mime[mime.len() - 3..].eq_ignore_ascii_case(b"xml") {
        return Syntax::Xml;
    }
    let html = mime.windows(4).any(|w| w.eq_ignore_ascii_case(b"html"));
    if limits.sitemaps_only || html {
        return Syntax::Neither;
    }
    Syntax::Text
}
