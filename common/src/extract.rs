//! Links from HTML pages: which URLs a fetched page points to.
//!
//! An [`Extractor`] reads one response body at a time (one extractor per
//! thread, reused from page to page) and reports the canonical URLs of its
//! links in document order, with counts of what it skipped and why:
//!
//! - links: `a`/`area` `href`, `frame`/`iframe` `src`, `link rel=canonical`
//!   `href`, and the URL of `meta http-equiv=refresh`;
//! - resolved against the first `<base href>` (itself resolved against the
//!   page URL), wherever it appears in the document, as a browser does;
//! - `rel=nofollow` skips one link; `<meta name=robots content=nofollow>`
//!   (or `none`, or `<meta name=OURNAME ...>`) and `X-Robots-Tag: nofollow`
//!   skip every link of the page;
//! - `javascript:`, `mailto:`, `data:`, `tel:` and every other scheme than
//!   http and https are skipped, as are links to the page itself (empty or
//!   fragment-only `href`s);
//! - the page is decoded in its own encoding (see [`CharsetSource`]) so that
//!   non-ASCII links come out right: the path in UTF-8 percent-encoding, the
//!   query in the page's encoding, as the URL standard says; character
//!   references in attribute values (`&amp;`) are decoded;
//! - at most [`ExtractOptions::max_links`] links are kept per page.
//!
//! The page is read by this module's own tokenizer (`tokenizer.rs`), which
//! follows the HTML standard's tokenizer for what is markup (comments,
//! raw-text elements such as `<script>`, quoted and unquoted attributes,
//! SVG and MathML) but builds no tree and copies nothing: it reports only
//! the start tags that may carry links, their attributes as ranges of the
//! page, so the cost per page is close to one pass over its bytes.
//! [`redirect_target`] gives the target of a 3xx response.

#[cfg(any(test, feature = "testutil"))]
pub mod cases;
mod charset;
mod collect;
mod directives;
mod entities;
mod resolve;
mod sniff;
mod stored;
#[cfg(test)]
mod tests;
mod text;
mod tokenizer;

use std::borrow::Cow;
use std::ops::{AddAssign, Range};
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::urlnorm::{self, UrlError};
use collect::{Candidate, Collect, Kind, candidate_limit};
use encoding_rs::{Encoding, UTF_8};
use resolve::{Resolver, Scratch, classify_and_resolve, is_c0_or_space};
use tokenizer::{Handler, Tokenizer};
use url::Url;

pub use charset::CharsetSource;
pub use resolve::{read_canonical, with_path_and_query};
pub use stored::{Body, LinkExtractor, PageSummary, header_canonical};
pub use text::{PageText, TagLink, TextReader};

/// One fetched response, as stored.
#[derive(Debug, Clone, Copy)]
pub struct Page<'a> {
    /// The URL the response came from: links resolve against it.
    pub url: &'a Url,
    /// The `Content-Type` header, if any.
    pub content_type: Option<&'a str>,
    /// The `X-Robots-Tag` header(s), if any (several joined with `, `).
    pub x_robots_tag: Option<&'a str>,
    /// The payload (decoded from any `Content-Encoding`).
    pub body: &'a [u8],
}

/// Settings of an [`Extractor`].
#[derive(Debug, Clone)]
pub struct ExtractOptions {
    /// At most this many links are kept from one page; the rest are counted
    /// in [`Skipped::over_cap`].
    pub max_links: usize,
    /// Our robots product token: `<meta name=TOKEN content=nofollow>` and
    /// `X-Robots-Tag: TOKEN: nofollow` apply to us as `robots` does.
    pub robots_name: Option<String>,
    /// A bound on the reader's own memory per page (bytes): the attributes
    /// of one link-bearing tag (32 bytes each) and the stack of SVG and
    /// MathML elements not yet closed (one byte each). Past the bound, the
    /// links found so far are kept and [`PageLinks::incomplete`] is set.
    pub max_parser_memory: usize,
}

impl Default for ExtractOptions {
    fn default() -> Self {
        ExtractOptions {
            max_links: 1000,
            robots_name: None,
            max_parser_memory: 16 << 20,
        }
    }
}

/// What kind of document a response turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageKind {
    /// Declared HTML (`text/html`, `application/xhtml+xml`).
    Html,
    /// Declared as something generic (or nothing) and recognised as HTML.
    SniffedHtml,
    /// Not HTML: another type, or a generic one that does not look like HTML.
    /// No links are extracted.
    NotHtml,
    /// Declared HTML, but the body is binary (NUL or control bytes at the
    /// start: an image, an archive, compressed bytes). No links are extracted.
    Binary,
}

impl PageKind {
    /// Whether links were looked for.
    pub fn is_html(self) -> bool {
        matches!(self, PageKind::Html | PageKind::SniffedHtml)
    }
}

/// Where in the page a link was found: the element and attribute, named
/// as Heritrix names them in its `outlink:` lines (`a/@href`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkContext {
    /// `<a href>`.
    AHref,
    /// `<area href>`.
    AreaHref,
    /// `<frame src>`.
    FrameSrc,
    /// `<iframe src>`.
    IframeSrc,
    /// `<link rel=canonical href>`.
    LinkHref,
    /// The URL of `<meta http-equiv=refresh content>`.
    MetaContent,
}

impl LinkContext {
    /// The element and attribute, `a/@href`.
    pub fn as_str(self) -> &'static str {
        match self {
            LinkContext::AHref => "a/@href",
            LinkContext::AreaHref => "area/@href",
            LinkContext::FrameSrc => "frame/@src",
            LinkContext::IframeSrc => "iframe/@src",
            LinkContext::LinkHref => "link/@href",
            LinkContext::MetaContent => "meta/@content",
        }
    }
}

/// Links not kept, by reason. Counts add up across pages with `+=`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Skipped {
    /// `rel=nofollow` on the link, or the whole page is nofollow.
    pub nofollow: u64,
    /// A scheme other than http/https (`javascript:`, `mailto:`, `ftp:`, ...).
    pub scheme: u64,
    /// Not a valid URL (or no host).
    pub invalid: u64,
    /// Beyond [`ExtractOptions::max_links`].
    pub over_cap: u64,
    /// A link to the page itself (`href=""`, `href="#top"`).
    pub same_page: u64,
}

impl Skipped {
    /// All skipped links.
    pub fn total(&self) -> u64 {
        self.nofollow + self.scheme + self.invalid + self.over_cap + self.same_page
    }
}

impl AddAssign for Skipped {
    fn add_assign(&mut self, other: Skipped) {
        self.nofollow += other.nofollow;
        self.scheme += other.scheme;
        self.invalid += other.invalid;
        self.over_cap += other.over_cap;
        self.same_page += other.same_page;
    }
}

/// The links of one page. Reuse one value across pages with
/// [`Extractor::extract_into`] to keep its buffer.
#[derive(Debug, Clone)]
pub struct PageLinks {
    /// Canonical URLs of the kept links, in document order (not deduplicated).
    pub links: Vec<Url>,
    /// Where each of [`PageLinks::links`] was found (same length, same order).
    pub contexts: Vec<LinkContext>,
    /// What was skipped, by reason.
    pub skipped: Skipped,
    /// HTML or not (when not, there are no links).
    pub kind: PageKind,
    /// The encoding the page was read in.
    pub encoding: &'static Encoding,
    /// Where that encoding came from.
    pub charset_source: CharsetSource,
    /// The page forbids following its links (robots meta or header).
    pub nofollow: bool,
    /// The reader stopped before the end of the page (over
    /// [`ExtractOptions::max_parser_memory`]: a link element with a flood
    /// of attributes, or SVG nested beyond reason); the links before that
    /// point are reported.
    pub incomplete: bool,
}

impl Default for PageLinks {
    fn default() -> Self {
        PageLinks {
            links: Vec::new(),
            contexts: Vec::new(),
            skipped: Skipped::default(),
            kind: PageKind::NotHtml,
            encoding: UTF_8,
            charset_source: CharsetSource::Default,
            nofollow: false,
            incomplete: false,
        }
    }
}

impl PageLinks {
    fn reset(&mut self) {
        self.links.clear();
        self.contexts.clear();
        self.skipped = Skipped::default();
        self.kind = PageKind::NotHtml;
        self.encoding = UTF_8;
        self.charset_source = CharsetSource::Default;
        self.nofollow = false;
        self.incomplete = false;
    }
}

/// Whether a response with this `Content-Type` header may be HTML (declared
/// HTML, or a generic type or none, whose body is then sniffed): the
/// others are never read for links, so a caller need not decode them.
pub fn may_be_html(content_type: Option<&str>) -> bool {
    let media = content_type.map_or("", |ct| crate::http::split_content_type(ct).0);
    sniff::declared(media) != sniff::Declared::Other
}

/// The encoding a page declares in a `<meta>` tag of its first 1024 bytes
/// (the HTML standard's prescan), if any.
pub fn meta_charset(body: &[u8]) -> Option<&'static Encoding> {
    charset::prescan(&body[..body.len().min(charset::PRESCAN_LEN)])
}

/// Whether a response is HTML, as the link extractor decides it: declared
/// HTML, or a generic type (or none) and a body that looks like HTML; in
/// both cases not binary. `body` is in an ASCII-compatible encoding (or
/// has a byte order mark).
pub fn is_html(content_type: Option<&str>, body: &[u8]) -> bool {
    let media = content_type.map_or("", |ct| crate::http::split_content_type(ct).0);
    let (ascii, body) = match Encoding::for_bom(body) {
        Some((enc, bom)) => (enc.is_ascii_compatible(), &body[bom..]),
        None => (true, body),
    };
    // UTF-16 text is full of NUL bytes: only the declared type counts.
    let text = !ascii || !sniff::looks_binary(body);
    match sniff::declared(media) {
        sniff::Declared::Other => false,
        sniff::Declared::Html => text,
        sniff::Declared::Unknown => ascii && text && sniff::looks_like_html(body),
    }
}

/// The target of a 3xx response: its `Location` resolved against the URL
/// of the response and canonicalized. An empty `Location` is invalid.
pub fn redirect_target(response_url: &Url, location: &str) -> Result<Url, UrlError> {
    let location = location.trim();
    if location.is_empty() {
        return Err(UrlError::Invalid {
            url: String::new(),
            reason: "empty Location".to_owned(),
        });
    }
    urlnorm::canonicalize_relative(response_url, location)
}

/// Reads links out of pages; one per thread, reused across pages.
pub struct Extractor {
    options: ExtractOptions,
    tokenizer: Tokenizer,
    /// Link-bearing attributes found by the reader, resolved after it ends
    /// (when `<base>` and the robots meta of the whole page are known).
    candidates: Vec<Candidate>,
    /// Character references decoded.
    refs: String,
    /// The buffers of link resolution.
    scratch: Scratch,
    /// A page in an encoding the reader cannot read (UTF-16, ISO-2022-JP), as UTF-8.
    transcoded: String,
}

/// What reads the start tags of a page: this crate's tokenizer, or (for
/// comparing readers) another one.
enum Reader<'a, 'r> {
    Tokenizer,
    Other(&'a mut TagReader<'r>),
}

/// Another reader of start tags than this crate's tokenizer, for tests that
/// compare readers: given a page's bytes and their encoding (UTF-8 or
/// another ASCII-compatible one), it calls the [`TagSink`] for each start
/// tag in document order (at least those of `a`, `area`, `frame`, `iframe`,
/// `link`, `meta` and `base`), and returns false if it stopped before the
/// end of the page.
pub type TagReader<'r> = dyn FnMut(&[u8], &'static Encoding, &mut TagSink<'_>) -> bool + 'r;

/// Where a [`TagReader`] reports a start tag: its name, then each
/// attribute's name and value (as written, quotes left out) as byte ranges
/// of the page.
pub type TagSink<'s> = dyn FnMut(&[u8], &[(Range<usize>, Range<usize>)]) + 's;

impl Extractor {
    /// An extractor with `options`.
    pub fn new(options: ExtractOptions) -> Extractor {
        Extractor {
            tokenizer: Tokenizer::new(options.max_parser_memory),
            options,
            candidates: Vec::new(),
            refs: String::new(),
            scratch: Scratch::default(),
            transcoded: String::new(),
        }
    }

    /// The links of `page`, in a new [`PageLinks`] (the tests' shorthand
    /// for [`Extractor::extract_into`]).
    #[cfg(test)]
    pub fn extract(&mut self, page: &Page<'_>) -> PageLinks {
        let mut out = PageLinks::default();
        self.extract_into(page, &mut out);
        out
    }

    /// The links of `page`, into `out` (cleared first; its buffer is reused).
    /// Never fails: anything wrong with the page shows in the counts and in
    /// [`PageLinks::kind`].
    pub fn extract_into(&mut self, page: &Page<'_>, out: &mut PageLinks) {
        self.extract_with(page, out, Reader::Tokenizer);
    }

    /// [`Extractor::extract_into`] with `reader` in place of this crate's
    /// tokenizer, and every link resolved the general way
    /// (`urlnorm::canonicalize_relative`), as this extractor did before it
    /// had its own tokenizer: everything else (encodings, sniffing, which
    /// tags and attributes are links, nofollow) is the same, so that the
    /// two can be compared on the links they give.
    pub fn extract_with_reader(
        &mut self,
        page: &Page<'_>,
        out: &mut PageLinks,
        reader: &mut TagReader<'_>,
    ) {
        self.extract_with(page, out, Reader::Other(reader));
    }

    fn extract_with(&mut self, page: &Page<'_>, out: &mut PageLinks, reader: Reader<'_, '_>) {
        out.reset();
        let (media, header_charset) = page
            .content_type
            .map(crate::http::split_content_type)
            .unwrap_or(("", None));
        let declared = sniff::declared(media);
        if declared == sniff::Declared::Other {
            return;
        }
        let detected = charset::detect(header_charset, page.body);
        out.encoding = detected.encoding;
        out.charset_source = detected.source;
        let body = &page.body[detected.bom_len..];
        let ascii_compatible = detected.encoding.is_ascii_compatible();
        let binary = ascii_compatible && sniff::looks_binary(body);
        out.kind = match declared {
            sniff::Declared::Html if binary => PageKind::Binary,
            sniff::Declared::Html => PageKind::Html,
            _ if !binary && sniff::looks_like_html(body) => PageKind::SniffedHtml,
            _ => PageKind::NotHtml,
        };
        if !out.kind.is_html() {
            return;
        }
        out.nofollow = page.x_robots_tag.is_some_and(|v| {
            directives::header_forbids_follow(v, self.options.robots_name.as_deref())
        });

        // The tokenizer reads ASCII-compatible encodings as they are (every
        // byte that matters to markup is ASCII in them); the others are
        // turned into UTF-8 first.
        let mut transcoded = std::mem::take(&mut self.transcoded);
        let (input, parse_encoding) = if ascii_compatible {
            (body, detected.encoding)
        } else {
            transcode(detected.encoding, body, &mut transcoded);
            (transcoded.as_bytes(), UTF_8)
        };

        let direct = matches!(reader, Reader::Tokenizer);
        let (base, meta_nofollow) = self.read(input, parse_encoding, out, reader);
        out.nofollow |= meta_nofollow;
        let encodings = (parse_encoding, detected.encoding);
        self.resolve(page.url, input, encodings, base, direct, out);

        self.candidates.clear();
        // Keep the buffers for the next page, unless one huge page grew
        // them far beyond what ordinary pages need.
        if transcoded.capacity() > KEEP_BUFFER {
            transcoded = String::new();
        }
        if self.candidates.capacity() * size_of::<Candidate>() > KEEP_BUFFER {
            self.candidates = Vec::new();
        }
        self.scratch.trim(KEEP_BUFFER);
        self.transcoded = transcoded;
    }

    /// Runs the reader over `input`, filling `self.candidates`; returns the
    /// `<base href>` and whether a robots meta said nofollow.
    fn read(
        &mut self,
        input: &[u8],
        encoding: &'static Encoding,
        out: &mut PageLinks,
        reader: Reader<'_, '_>,
    ) -> (Option<Range<usize>>, bool) {
        self.candidates.clear();
        let mut collect = Collect {
            candidates: &mut self.candidates,
            robots_name: self.options.robots_name.as_deref(),
            limit: candidate_limit(self.options.max_links),
            over_limit: 0,
            base: None,
            meta_nofollow: false,
        };
        let tokenizer = &mut self.tokenizer;
        // Should the reader ever panic on some page (a bug), that page is
        // reported incomplete with the links found before, and the run
        // goes on.
        let finished = catch_unwind(AssertUnwindSafe(|| match reader {
            Reader::Tokenizer => tokenizer.run(input, &mut collect).is_ok(),
            Reader::Other(other) => {
                let mut attrs = Vec::new();
                other(input, encoding, &mut |name, list| {
                    attrs.clear();
                    attrs.extend(list.iter().map(|(name, value)| tokenizer::Attr {
                        name: name.clone(),
                        value: value.clone(),
                    }));
                    let tag = tokenizer::StartTag {
                        tag: tokenizer::classify(name),
                        attrs: &attrs,
                    };
                    collect.start_tag(input, &tag);
                })
            }
        }));
        out.incomplete = !matches!(finished, Ok(true));
        out.skipped.over_cap += collect.over_limit;
        (collect.base, collect.meta_nofollow)
    }

    /// Turns the candidates into canonical URLs (`encodings`: the one
    /// `input` is in and the page's own; `direct`: see [`Resolver::new`]).
    fn resolve(
        &mut self,
        page_url: &Url,
        input: &[u8],
        (parse_encoding, document_encoding): (&'static Encoding, &'static Encoding),
        base: Option<Range<usize>>,
        direct: bool,
        out: &mut PageLinks,
    ) {
        let text = |range: Range<usize>| -> Cow<'_, str> {
            let raw = input.get(range).unwrap_or_default();
            // ASCII (most values) reads the same in every encoding the
            // tokenizer reads, and is told faster than UTF-8 is checked.
            if raw.is_ascii() {
                // SAFETY: ASCII bytes are valid UTF-8.
                return Cow::Borrowed(unsafe { std::str::from_utf8_unchecked(raw) });
            }
            match std::str::from_utf8(raw) {
                Ok(text) if parse_encoding == UTF_8 => Cow::Borrowed(text),
                _ => parse_encoding.decode_without_bom_handling(raw).0,
            }
        };

        // The document's base URL: the first <base href>, when it parses.
        let base_url = base.and_then(|range| {
            let href = text(range);
            let href = decode_refs(&href, &mut self.refs);
            Resolver::parse(
                document_encoding,
                page_url,
                href.trim_matches(is_c0_or_space),
            )
        });
        let base = base_url.as_ref().unwrap_or(page_url);
        let base_is_page =
            base[..url::Position::AfterQuery] == page_url[..url::Position::AfterQuery];
        let mut resolver = Resolver::new(document_encoding, base, &mut self.scratch, direct);

        let max = self.options.max_links;
        for cand in &self.candidates {
            if out.nofollow || cand.nofollow {
                out.skipped.nofollow += 1;
                continue;
            }
            let raw = text(cand.value.clone());
            let value = decode_refs(&raw, &mut self.refs);
            let href = match cand.kind {
                Kind::Link => Some(value),
                Kind::Refresh => directives::refresh_url(value),
            };
            if let Some(href) = href {
                let link = (href, cand.context);
                classify_and_resolve(link, &mut resolver, base_is_page, max, out);
            }
        }
    }
}

/// Buffers larger than this are not kept from one page to the next.
const KEEP_BUFFER: usize = 4 << 20;

/// Decodes `body` from `encoding` (one the reader cannot read) into `out` as UTF-8.
fn transcode(encoding: &'static Encoding, body: &[u8], out: &mut String) {
    out.clear();
    let mut decoder = encoding.new_decoder_without_bom_handling();
    let mut rest = body;
    loop {
        let room = decoder
            .max_utf8_buffer_length(rest.len())
            .unwrap_or(rest.len().saturating_mul(3))
            .max(16);
        out.reserve(room);
        let (result, read, _) = decoder.decode_to_string(rest, out, true);
        rest = &rest[read..];
        if result == encoding_rs::CoderResult::InputEmpty {
            break;
        }
    }
}

/// Decodes character references into `buf` when there are any.
fn decode_refs<'a>(value: &'a str, buf: &'a mut String) -> &'a str {
    if entities::decode_into(value, buf) {
        buf.as_str()
    } else {
        value
    }
}

/// The title of an HTML page: the text of its first `<title>` element,
/// read in the page's encoding (BOM, then the `Content-Type` charset, then
/// `<meta charset>`, as for links), character references decoded, white
/// space collapsed; `None` without one (or an empty one). Only the first
/// 64 KiB of `body` are searched; in an ASCII-compatible encoding the
/// element is found in the bytes and only its text is decoded.
pub fn page_title(content_type: Option<&str>, body: &[u8]) -> Option<String> {
    let header_charset = content_type
        .map(crate::http::split_content_type)
        .and_then(|(_, c)| c);
    let detected = charset::detect(header_charset, body);
    let body = &body[detected.bom_len.min(body.len())..body.len().min(64 * 1024)];
    let raw = if detected.encoding.is_ascii_compatible() {
        let text = title_text(body)?;
        detected.encoding.decode_without_bom_handling(text).0
    } else {
        let decoded = detected.encoding.decode_without_bom_handling(body).0;
        let range = title_range(decoded.as_bytes())?;
        std::borrow::Cow::Owned(decoded[range].to_string())
    };
    let mut decoded = String::new();
    let raw = if entities::decode_into(&raw, &mut decoded) {
        decoded.as_str()
    } else {
        &raw
    };
    let title = raw.split_whitespace().collect::<Vec<_>>().join(" ");
    (!title.is_empty()).then_some(title)
}

/// The bytes between `<title ...>` and `</title` (ASCII case ignored).
fn title_text(html: &[u8]) -> Option<&[u8]> {
    title_range(html).map(|r| &html[r])
}

fn title_range(html: &[u8]) -> Option<Range<usize>> {
    let open = find_ascii_ci(html, b"<title", 0)?;
    let start = open + memchr::memchr(b'>', &html[open..])? + 1;
    let end = find_ascii_ci(html, b"</title", start)?;
    Some(start..end)
}

/// The first `needle` (lower-case ASCII) in `hay` at or after `from`,
/// ASCII case ignored.
fn find_ascii_ci(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    while let Some(i) = memchr::memchr(b'<', &hay[at..]) {
        let p = at + i;
        if hay.len() - p >= needle.len() && hay[p..p + needle.len()].eq_ignore_ascii_case(needle) {
            return Some(p);
        }
        at = p + 1;
    }
    None
}
