//! From the fetched body to a stream of uncompressed bytes: gzip detection,
//! the `max_bytes` cap, byte order mark and the text-or-XML decision.

use std::io::{self, BufRead, BufReader, Read};

use flate2::bufread::MultiGzDecoder;

use super::{Limits, ParseError, Sink, text, xml};

/// The first bytes of every gzip file.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
/// UTF-8 byte order mark.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A source of uncompressed bytes that knows whether it was cut at the cap.
pub(super) trait Capped: BufRead {
    /// True once more data than the cap was found (and not read).
    fn cut(&self) -> bool;
    /// Uncompressed bytes delivered so far: where a read error happened.
    fn delivered(&self) -> u64;
}

impl Capped for &[u8] {
    fn cut(&self) -> bool {
        false
    }
    fn delivered(&self) -> u64 {
        0
    }
}

/// Reads at most `left` bytes from `inner`, then checks for one more.
pub(super) struct Cap<R> {
    inner: R,
    left: u64,
    delivered: u64,
    probed: bool,
    cut: bool,
    /// The compressed data is the start of a longer file: its end (or the
    /// decoder's "unexpected end") is a cut, not an error.
    truncated: bool,
}

impl<R: Read> Read for Cap<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            if !self.probed {
                self.probed = true;
                let mut one = [0u8; 1];
                // An error past the cap is not ours to report: nothing
                // after the cap is read.
                self.cut = matches!(self.inner.read(&mut one), Ok(n) if n > 0);
            }
            return Ok(0);
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let got = match self.inner.read(&mut buf[..want]) {
            Ok(0) if self.truncated => {
                self.cut = true;
                0
            }
            Err(e) if self.truncated && e.kind() == io::ErrorKind::UnexpectedEof => {
                self.cut = true;
                0
            }
            r => r?,
        };
        self.left -= got as u64;
        self.delivered += got as u64;
        Ok(got)
    }
}

impl<R: Read> Capped for BufReader<Cap<R>> {
    fn cut(&self) -> bool {
        self.get_ref().cut
    }
    fn delivered(&self) -> u64 {
        self.get_ref().delivered
    }
}

/// Reads `body` as whatever it is, into `sink`.
pub(super) fn dispatch(body: &[u8], content_type: Option<&str>, sink: &mut Sink<'_>) {
    let max = sink.limits.max_bytes;
    if body.starts_with(&GZIP_MAGIC) {
        let cap = Cap {
            inner: MultiGzDecoder::new(body),
            left: max,
            delivered: 0,
            probed: false,
            cut: false,
            truncated: sink.limits.truncated,
        };
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

/// A read error from the gzip decoder at `offset` of the uncompressed data.
pub(super) fn gzip_error(offset: u64, e: &io::Error) -> ParseError {
    ParseError {
        offset,
        message: format!("bad gzip data: {e}"),
    }
}
