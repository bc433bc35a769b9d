//! Reads one fetched sitemap: XML `urlset` and `sitemapindex` (also
//! gzip-compressed), RSS and Atom feeds, and plain-text sitemaps, as
//! described by the sitemaps protocol (<https://www.sitemaps.org/protocol.html>).
//!
//! [`read`] streams the document and hands each entry to a callback; it
//! returns a [`Summary`] of what it found, skipped and could not read. Bad
//! input is never fatal: everything read before a fault is kept, and the
//! fault is reported with its byte offset.
//!
//! ```
//! use segmenter::sitemap::{self, Kind, Limits};
//!
//! let body = br#"<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
//!   <url><loc>https://example.com/a?x=1&amp;y=2</loc><lastmod>2024-05-01</lastmod></url>
//! </urlset>"#;
//! let mut locs = Vec::new();
//! let summary = sitemap::read(body, None, &Limits::default(), |kind, entry| {
//!     assert_eq!(kind, Kind::UrlSet);
//!     locs.push((entry.loc.to_string(), entry.lastmod_ms));
//! });
//! assert_eq!(summary.entries, 1);
//! assert_eq!(locs, [("https://example.com/a?x=1&y=2".to_string(), Some(1_714_521_600_000))]);
//! ```

mod cap;
mod date;
mod input;
mod text;
mod xml;

#[cfg(test)]
mod tests;

use std::fmt;

pub use date::{parse_rfc822, parse_w3c_datetime};

/// Limits from the sitemaps protocol (sitemaps.org): defaults 50,000
/// entries, 50 MB (52,428,800 bytes) uncompressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Entries handed over per document; later ones are only counted.
    pub max_entries: usize,
    /// Bytes of the uncompressed document read; the rest is not read.
    pub max_bytes: u64,
    /// The document given is the start of a longer one (the download or
    /// the decoding was cut): it is read as if cut at `max_bytes`, its last
    /// partial entry or line counted over the limit, not reported as bad.
    pub truncated: bool,
    /// Only `urlset` and `sitemapindex` are read: for a document merely
    /// tried as a sitemap, a feed stops at its root element and text is
    /// not read at all (kind None either way), so that a feed or a
    /// `.tar.gz` costs next to nothing.
    pub sitemaps_only: bool,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_entries: 50_000,
            max_bytes: 52_428_800,
            truncated: false,
            sitemaps_only: false,
        }
    }
}

/// What kind of document it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `<urlset>`: its entries are pages.
    UrlSet,
    /// `<sitemapindex>`: its entries are other sitemaps.
    Index,
    /// RSS 2.0 `<rss>` or RSS 1.0 `<rdf:RDF>`: entries are the items' links.
    Rss,
    /// Atom `<feed>`: entries are the entries' alternate links.
    Atom,
    /// Plain text, one URL per line.
    Text,
}

impl Kind {
    /// Every kind, each at the index of its discriminant (`kind as usize`).
    pub const ALL: [Kind; 5] = [Kind::UrlSet, Kind::Index, Kind::Rss, Kind::Atom, Kind::Text];

    /// The names of [`Kind::ALL`], in that order (a report's counter of a
    /// kind is at `kind as usize`).
    pub const NAMES: [&'static str; Kind::ALL.len()] = {
        let mut names = [""; Kind::ALL.len()];
        let mut i = 0;
        while i < names.len() {
            names[i] = Kind::ALL[i].as_str();
            i += 1;
        }
        names
    };

    /// The name used in reports: `urlset`, `sitemapindex`, `rss`, `atom`, `text`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Kind::UrlSet => "urlset",
            Kind::Index => "sitemapindex",
            Kind::Rss => "rss",
            Kind::Atom => "atom",
            Kind::Text => "text",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One entry: a page (urlset `<url>`, feed item/entry link, text line) or,
/// in an index, a child sitemap.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Entry<'a> {
    /// The URL, trimmed and entity-decoded, not resolved or canonicalized.
    /// Absolute http(s) for sitemaps and text; feeds may give relative
    /// links as found, for the caller to resolve against the feed's URL.
    pub loc: &'a str,
    /// `<lastmod>` (feeds: `<pubDate>`, `<updated>`) as Unix milliseconds;
    /// None when absent or not a date.
    pub lastmod_ms: Option<i64>,
    /// `<priority>` when it is a number from 0.0 to 1.0.
    pub priority: Option<f32>,
}

/// What reading one sitemap found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    /// None: not a sitemap at all (e.g. an HTML page at /sitemap.xml).
    pub kind: Option<Kind>,
    /// Entries handed to the callback.
    pub entries: u64,
    /// Entries past `max_entries` (not handed over), or cut by `max_bytes`.
    pub over_limit: u64,
    /// Reading stopped at `max_bytes` of uncompressed data, or at the end
    /// of a document given as [`Limits::truncated`].
    pub cut_at_bytes: bool,
    /// Entries skipped: empty or overlong loc, loc not absolute http(s).
    pub invalid: u64,
    /// Malformed XML or bad gzip data: entries before it were handed over.
    pub error: Option<ParseError>,
}

/// Where and why a document could not be read to its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// Offset in the uncompressed document.
    pub offset: u64,
    /// What was wrong there.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "byte {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for ParseError {}

/// The longest loc taken: the protocol's limit of 2,048 characters.
pub const MAX_LOC: usize = 2048;

/// Reads `body` and calls `on_entry` for each entry in document order.
///
/// `body` is the HTTP payload after the Content-Encoding was removed; it may
/// itself be a gzip file (`sitemap.xml.gz`), recognised by the gzip magic
/// bytes, not by the name. `content_type` (the response's Content-Type, if
/// any) helps tell text from XML: a document whose first character (after a
/// byte order mark and blanks) is `<` is read as XML, whatever it was
/// served as; any other is read as text unless the type names XML, and is
/// no sitemap (kind None) if the type names HTML. For XML
/// the root element decides the [`Kind`]: `urlset`, `sitemapindex`, `rss`,
/// `RDF` (RSS 1.0) or `feed` (Atom), by local name; any other root is not
/// a sitemap (kind None, nothing handed over).
///
/// Only `loc` elements directly inside `url` / `sitemap` (with the same
/// namespace prefix) are taken, so extensions such as `image:loc` are not.
/// Feeds give the `link` of each RSS item and the `href` of each Atom
/// entry's alternate link (`rel="alternate"` or no `rel`); such links may
/// be relative and are returned as found.
///
/// Never panics, never allocates per entry beyond a reused buffer, and never
/// reads more than `limits.max_bytes` of uncompressed data (and one byte
/// more, to know whether there was more), so a gzip bomb costs at most that
/// much work.
pub fn read(
    body: &[u8],
    content_type: Option<&str>,
    limits: &Limits,
    mut on_entry: impl FnMut(Kind, &Entry<'_>),
) -> Summary {
    let mut summary = Summary::default();
    let mut sink = Sink {
        limits,
        summary: &mut summary,
        on_entry: &mut on_entry,
    };
    input::dispatch(body, content_type, &mut sink);
    summary
}

/// Counts entries against the limits and hands the valid ones over.
struct Sink<'s> {
    limits: &'s Limits,
    summary: &'s mut Summary,
    on_entry: &'s mut dyn FnMut(Kind, &Entry<'_>),
}

impl Sink<'_> {
    /// One entry found; `relative_ok` for feeds, whose links may be relative.
    fn entry(&mut self, kind: Kind, entry: &Entry<'_>, relative_ok: bool) {
        if !valid_loc(entry.loc, relative_ok) {
            self.summary.invalid += 1;
        } else if self.summary.entries >= self.limits.max_entries as u64 {
            self.summary.over_limit += 1;
        } else {
            self.summary.entries += 1;
            (self.on_entry)(kind, entry);
        }
    }
}

/// Not empty, at most [`MAX_LOC`] bytes, and an absolute http(s) URL
/// (or, with `relative_ok`, a URL without a scheme).
fn valid_loc(loc: &str, relative_ok: bool) -> bool {
    if loc.is_empty() || loc.len() > MAX_LOC {
        return false;
    }
    let b = loc.as_bytes();
    let scheme_end = b
        .iter()
        .position(|&c| !(c.is_ascii_alphanumeric() || c == b'+' || c == b'-' || c == b'.'));
    match scheme_end {
        Some(i) if i > 0 && b[i] == b':' && b[0].is_ascii_alphabetic() => {
            let scheme = &b[..i];
            let rest = &b[i + 1..];
            (scheme.eq_ignore_ascii_case(b"http") || scheme.eq_ignore_ascii_case(b"https"))
                && rest.len() > 2
                && rest.starts_with(b"//")
                && !matches!(rest[2], b'/' | b'?' | b'#')
        }
        _ => relative_ok,
    }
}
