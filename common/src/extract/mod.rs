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
//! The parser is `lol_html`, a streaming tokenizer: it only builds tokens
//! for the elements asked for, and the extractor reads attribute values in
//! place, so the cost per page is close to one pass over the bytes.
//! [`redirect_target`] gives the target of a 3xx response.

mod charset;
mod directives;
mod entities;
mod sniff;
mod stored;
#[cfg(test)]
mod tests;
mod text;

use std::borrow::Cow;
use std::cell::RefCell;
use std::ops::{AddAssign, Range};
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::urlnorm::{self, UrlError};
use encoding_rs::{Encoding, UTF_8};
use lol_html::html_content::{Attribute, Element};
use lol_html::{
    AsciiCompatibleEncoding, ElementContentHandlers, HtmlRewriter, MemorySettings, Selector,
    Settings,
};
use url::Url;

pub use charset::CharsetSource;
pub use stored::{Body, LinkExtractor, PageSummary};
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
    /// A bound on the parser's own memory per page (bytes): its stack of
    /// open elements (about 128 bytes for each element not yet closed) and
    /// the buffer for markup cut off at the end of the page. Past the bound,
    /// the links found so far are kept and [`PageLinks::incomplete`] is set.
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
    /// The parser stopped before the end of the page (over
    /// [`ExtractOptions::max_parser_memory`]: a huge tag left open at the
    /// end, or a flood of elements never closed); the links before that
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
    selectors: Selectors,
    /// Link-bearing attributes found by the parser, resolved after it ends
    /// (when `<base>` and the robots meta of the whole page are known).
    candidates: Vec<Candidate>,
    /// Attribute values the parser could not locate in the input (never
    /// expected; kept so that such a value is not lost).
    arena: String,
    /// Character references decoded.
    refs: String,
    /// A page in an encoding the parser cannot read (UTF-16, ISO-2022-JP), as UTF-8.
    transcoded: String,
}

/// The selectors, parsed once.
struct Selectors {
    a: Selector,
    area: Selector,
    frame: Selector,
    iframe: Selector,
    link: Selector,
    meta: Selector,
    base: Selector,
}

impl Selectors {
    fn new() -> Selectors {
        let parse = |s: &str| -> Selector {
            match s.parse() {
                Ok(sel) => sel,
                // The selectors are constants of this file; a test parses them.
                Err(e) => unreachable!("selector {s}: {e}"),
            }
        };
        // Element names only: with attribute conditions (`a[href]`),
        // lol_html takes a slower matching path for every such tag, which
        // cost about 20 % of the parsing speed on the Rust documentation;
        // the handlers look for the attributes they need themselves.
        Selectors {
            a: parse("a"),
            area: parse("area"),
            frame: parse("frame"),
            iframe: parse("iframe"),
            link: parse("link"),
            meta: parse("meta"),
            base: parse("base"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `href`/`src` of a link element.
    Link,
    /// The `content` of a `meta http-equiv=refresh`.
    Refresh,
}

/// Where a value lies: in the parsed input or in the arena.
#[derive(Debug, Clone)]
enum Span {
    Input(Range<usize>),
    Arena(Range<usize>),
}

#[derive(Debug, Clone)]
struct Candidate {
    kind: Kind,
    context: LinkContext,
    nofollow: bool,
    value: Span,
}

/// Only this many link candidates are held per page; further ones are
/// counted over the cap unseen (a 50 MB page of links must not hold
/// millions of them).
fn candidate_limit(max_links: usize) -> usize {
    max_links.saturating_mul(16).max(100_000)
}

/// What the element handlers gather while the parser runs.
struct Collect<'a> {
    input: &'a [u8],
    candidates: &'a mut Vec<Candidate>,
    arena: &'a mut String,
    robots_name: Option<&'a str>,
    limit: usize,
    over_limit: u64,
    base: Option<Span>,
    meta_nofollow: bool,
}

impl Collect<'_> {
    fn bytes(&self, span: &Span) -> &[u8] {
        match span {
            Span::Input(r) => self.input.get(r.clone()).unwrap_or_default(),
            Span::Arena(r) => self.arena.as_bytes().get(r.clone()).unwrap_or_default(),
        }
    }

    /// The value of attribute `name` (lower case), located in the input.
    fn attr(&mut self, attrs: &[Attribute<'_>], name: &str) -> Option<Span> {
        for a in attrs {
            let located = a.name_source_location().zip(a.value_source_location());
            let in_input = located.and_then(|(n, v)| {
                let (n, v) = (n.bytes(), v.bytes());
                let name_bytes = self.input.get(n)?;
                self.input.get(v.clone())?;
                Some((name_bytes, v))
            });
            match in_input {
                Some((name_bytes, value)) => {
                    if name_bytes.eq_ignore_ascii_case(name.as_bytes()) {
                        return Some(Span::Input(value));
                    }
                }
                None => {
                    if a.name() == name {
                        let start = self.arena.len();
                        self.arena.push_str(&a.value());
                        return Some(Span::Arena(start..self.arena.len()));
                    }
                }
            }
        }
        None
    }

    fn push(&mut self, kind: Kind, context: LinkContext, nofollow: bool, value: Span) {
        if self.candidates.len() < self.limit {
            self.candidates.push(Candidate {
                kind,
                context,
                nofollow,
                value,
            });
        } else {
            self.over_limit += 1;
        }
    }

    /// `a`, `area`, `frame`, `iframe`: the link in `attr`.
    fn on_link(&mut self, el: &Element<'_, '_>, attr: &str, rel: bool, context: LinkContext) {
        let attrs = el.attributes();
        let Some(value) = self.attr(attrs, attr) else {
            return;
        };
        let nofollow = rel
            && self
                .attr(attrs, "rel")
                .is_some_and(|r| directives::has_token(self.bytes(&r), b"nofollow"));
        self.push(Kind::Link, context, nofollow, value);
    }

    /// `link rel=canonical href=...`.
    fn on_link_element(&mut self, el: &Element<'_, '_>) {
        let attrs = el.attributes();
        let Some(rel) = self.attr(attrs, "rel") else {
            return;
        };
        let rel = self.bytes(&rel);
        if !directives::has_token(rel, b"canonical") {
            return;
        }
        let nofollow = directives::has_token(rel, b"nofollow");
        if let Some(href) = self.attr(attrs, "href") {
            self.push(Kind::Link, LinkContext::LinkHref, nofollow, href);
        }
    }

    /// `meta http-equiv=refresh` and the robots metas.
    fn on_meta(&mut self, el: &Element<'_, '_>) {
        let attrs = el.attributes();
        let Some(content) = self.attr(attrs, "content") else {
            return;
        };
        if let Some(equiv) = self.attr(attrs, "http-equiv") {
            if self
                .bytes(&equiv)
                .trim_ascii()
                .eq_ignore_ascii_case(b"refresh")
            {
                self.push(Kind::Refresh, LinkContext::MetaContent, false, content);
            }
            return;
        }
        if let Some(name) = self.attr(attrs, "name") {
            let name = self.bytes(&name).trim_ascii();
            let ours = name.eq_ignore_ascii_case(b"robots")
                || self
                    .robots_name
                    .is_some_and(|r| name.eq_ignore_ascii_case(r.as_bytes()));
            if ours && directives::forbids_follow(self.bytes(&content)) {
                self.meta_nofollow = true;
            }
        }
    }

    fn on_base(&mut self, el: &Element<'_, '_>) {
        if self.base.is_none() {
            self.base = self.attr(el.attributes(), "href");
        }
    }
}

impl Extractor {
    /// An extractor with `options`.
    pub fn new(options: ExtractOptions) -> Extractor {
        Extractor {
            options,
            selectors: Selectors::new(),
            candidates: Vec::new(),
            arena: String::new(),
            refs: String::new(),
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
        let ascii_compatible = AsciiCompatibleEncoding::new(detected.encoding);
        let binary = ascii_compatible.is_some() && sniff::looks_binary(body);
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

        // The parser reads ASCII-compatible encodings itself; the others are
        // turned into UTF-8 first.
        let mut transcoded = std::mem::take(&mut self.transcoded);
        let (input, parse_encoding) = match ascii_compatible {
            Some(enc) => (body, enc),
            None => {
                transcode(detected.encoding, body, &mut transcoded);
                (transcoded.as_bytes(), AsciiCompatibleEncoding::utf_8())
            }
        };

        let (base, meta_nofollow) = self.parse(input, parse_encoding, out);
        out.nofollow |= meta_nofollow;
        self.resolve(
            page.url,
            input,
            parse_encoding.into(),
            detected.encoding,
            base,
            out,
        );

        self.candidates.clear();
        self.arena.clear();
        // Keep the buffers for the next page, unless one huge page grew
        // them far beyond what ordinary pages need.
        if transcoded.capacity() > KEEP_BUFFER {
            transcoded = String::new();
        }
        if self.arena.capacity() > KEEP_BUFFER {
            self.arena = String::new();
        }
        self.transcoded = transcoded;
    }

    /// Runs the parser over `input`, filling `self.candidates`; returns the
    /// `<base href>` and whether a robots meta said nofollow.
    fn parse(
        &mut self,
        input: &[u8],
        encoding: AsciiCompatibleEncoding,
        out: &mut PageLinks,
    ) -> (Option<Span>, bool) {
        self.candidates.clear();
        self.arena.clear();
        let state = RefCell::new(Collect {
            input,
            candidates: &mut self.candidates,
            arena: &mut self.arena,
            robots_name: self.options.robots_name.as_deref(),
            limit: candidate_limit(self.options.max_links),
            over_limit: 0,
            base: None,
            meta_nofollow: false,
        });
        let sel = &self.selectors;
        let state_ref = &state;
        let handler = |f: fn(&mut Collect<'_>, &Element<'_, '_>)| {
            ElementContentHandlers::default().element(move |el: &mut Element<'_, '_>| {
                f(&mut state_ref.borrow_mut(), el);
                Ok(())
            })
        };
        let settings = Settings {
            element_content_handlers: vec![
                (
                    Cow::Borrowed(&sel.a),
                    handler(|c, el| c.on_link(el, "href", true, LinkContext::AHref)),
                ),
                (
                    Cow::Borrowed(&sel.area),
                    handler(|c, el| c.on_link(el, "href", true, LinkContext::AreaHref)),
                ),
                (
                    Cow::Borrowed(&sel.frame),
                    handler(|c, el| c.on_link(el, "src", false, LinkContext::FrameSrc)),
                ),
                (
                    Cow::Borrowed(&sel.iframe),
                    handler(|c, el| c.on_link(el, "src", false, LinkContext::IframeSrc)),
                ),
                (
                    Cow::Borrowed(&sel.link),
                    handler(|c, el| c.on_link_element(el)),
                ),
                (Cow::Borrowed(&sel.meta), handler(|c, el| c.on_meta(el))),
                (Cow::Borrowed(&sel.base), handler(|c, el| c.on_base(el))),
            ],
            encoding,
            memory_settings: MemorySettings {
                max_allowed_memory_usage: self.options.max_parser_memory,
                ..MemorySettings::default()
            },
            // Ambiguous markup is parsed as well as a tokenizer can; a
            // crawler wants the links, not a refusal.
            strict: false,
            ..Settings::new()
        };
        // The parser is third-party code fed with anything the web serves:
        // should it ever panic, this page is reported incomplete and the
        // run goes on.
        let finished = catch_unwind(AssertUnwindSafe(|| {
            let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
            rewriter.write(input).is_ok() && rewriter.end().is_ok()
        }));
        out.incomplete = !matches!(finished, Ok(true));
        let state = state.into_inner();
        out.skipped.over_cap += state.over_limit;
        (state.base, state.meta_nofollow)
    }

    /// Turns the candidates into canonical URLs.
    fn resolve(
        &mut self,
        page_url: &Url,
        input: &[u8],
        parse_encoding: &'static Encoding,
        document_encoding: &'static Encoding,
        base: Option<Span>,
        out: &mut PageLinks,
    ) {
        let query_encoding = document_encoding.output_encoding();
        let resolver = Resolver {
            query_encoding: (query_encoding != UTF_8).then_some(query_encoding),
        };
        let arena = self.arena.as_str();
        let bytes = |span: &Span| -> &[u8] {
            match span {
                Span::Input(r) => input.get(r.clone()).unwrap_or_default(),
                Span::Arena(r) => arena.as_bytes().get(r.clone()).unwrap_or_default(),
            }
        };
        let text = |span: &Span| -> Cow<'_, str> {
            let raw = bytes(span);
            match span {
                Span::Arena(_) => String::from_utf8_lossy(raw),
                Span::Input(_) => parse_encoding.decode_without_bom_handling(raw).0,
            }
        };

        // The document's base URL: the first <base href>, when it parses.
        let base_url = base.and_then(|span| {
            let href = text(&span);
            let href = decode_refs(&href, &mut self.refs);
            resolver
                .parse(page_url, href.trim_matches(is_c0_or_space))
                .ok()
        });
        let base = base_url.as_ref().unwrap_or(page_url);
        let base_is_page =
            base[..url::Position::AfterQuery] == page_url[..url::Position::AfterQuery];

        let max = self.options.max_links;
        for cand in &self.candidates {
            if out.nofollow || cand.nofollow {
                out.skipped.nofollow += 1;
                continue;
            }
            let raw = text(&cand.value);
            let mut refs = std::mem::take(&mut self.refs);
            let value = decode_refs(&raw, &mut refs);
            let href = match cand.kind {
                Kind::Link => Some(value),
                Kind::Refresh => directives::refresh_url(value),
            };
            if let Some(href) = href {
                let link = (href, cand.context);
                classify_and_resolve(link, &resolver, base, base_is_page, max, out);
            }
            self.refs = refs;
        }
    }
}

/// The last steps for one link: scheme, same page, cap, then canonical form.
fn classify_and_resolve(
    (href, context): (&str, LinkContext),
    resolver: &Resolver,
    base: &Url,
    base_is_page: bool,
    max: usize,
    out: &mut PageLinks,
) {
    let href = href.trim_matches(is_c0_or_space);
    match scheme_kind(href) {
        SchemeKind::Other => {
            out.skipped.scheme += 1;
            return;
        }
        SchemeKind::Relative if base_is_page && (href.is_empty() || href.starts_with('#')) => {
            out.skipped.same_page += 1;
            return;
        }
        _ => {}
    }
    if out.links.len() >= max {
        out.skipped.over_cap += 1;
        return;
    }
    match resolver.canonical(base, href) {
        Ok(url) => {
            out.links.push(url);
            out.contexts.push(context);
        }
        Err(UrlError::Scheme { .. }) => out.skipped.scheme += 1,
        Err(_) => out.skipped.invalid += 1,
    }
}

/// Buffers larger than this are not kept from one page to the next.
const KEEP_BUFFER: usize = 4 << 20;

/// Decodes `body` from `encoding` (one the parser cannot read) into `out` as UTF-8.
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

/// The characters the URL parser trims from both ends of its input.
fn is_c0_or_space(c: char) -> bool {
    c <= ' '
}

#[derive(Debug, PartialEq, Eq)]
enum SchemeKind {
    /// `http:` or `https:`.
    Http,
    /// Any other scheme.
    Other,
    /// No scheme: relative to the base.
    Relative,
}

/// The scheme of a (trimmed) href as the URL parser sees it: ASCII letters,
/// then letters, digits, `+`, `-`, `.`, up to a `:`; tabs and newlines are
/// ignored anywhere, as the parser removes them.
fn scheme_kind(href: &str) -> SchemeKind {
    let mut scheme = [0u8; 5];
    let chars = href.bytes().filter(|b| !matches!(b, b'\t' | b'\n' | b'\r'));
    for (len, b) in chars.enumerate() {
        match b {
            b':' if len > 0 => {
                let s = &scheme[..len.min(scheme.len())];
                return if len <= scheme.len() && (s == b"http" || s == b"https") {
                    SchemeKind::Http
                } else {
                    SchemeKind::Other
                };
            }
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if len > 0 => {}
            _ => return SchemeKind::Relative,
        }
        if let Some(slot) = scheme.get_mut(len) {
            *slot = b.to_ascii_lowercase();
        }
    }
    SchemeKind::Relative
}

/// Parses links the way the page's own browser would: the query in the
/// page's encoding when that is not UTF-8.
struct Resolver {
    query_encoding: Option<&'static Encoding>,
}

impl Resolver {
    /// Resolves without canonicalizing (for `<base href>`).
    fn parse(&self, base: &Url, href: &str) -> Result<Url, url::ParseError> {
        match self.query_encoding {
            None => base.join(href),
            Some(enc) => {
                let encode = query_encoder(move |s| encode_query(enc, s));
                Url::options()
                    .base_url(Some(base))
                    .encoding_override(Some(&encode))
                    .parse(href)
            }
        }
    }

    /// Resolves and canonicalizes.
    fn canonical(&self, base: &Url, href: &str) -> Result<Url, UrlError> {
        // An ASCII href is encoded the same in every encoding the parser
        // reads, so only non-ASCII ones need the page's encoding.
        match self.query_encoding {
            Some(enc) if !href.is_ascii() => {
                let encode = query_encoder(move |s| encode_query(enc, s));
                urlnorm::canonicalize_relative_encoded(base, href, Some(&encode))
            }
            _ => urlnorm::canonicalize_relative(base, href),
        }
    }
}

/// Gives a closure the higher-ranked signature the URL parser expects.
fn query_encoder<F: Fn(&str) -> Cow<'_, [u8]>>(f: F) -> F {
    f
}

/// Encodes a query in `enc` for the URL parser. A character `enc` cannot
/// represent becomes `%26%23NNN%3B` (`&#NNN;` percent-encoded), as the URL
/// standard says.
fn encode_query<'a>(enc: &'static Encoding, s: &'a str) -> Cow<'a, [u8]> {
    if s.is_ascii() {
        return Cow::Borrowed(s.as_bytes());
    }
    let mut encoder = enc.new_encoder();
    let mut out = Vec::with_capacity(s.len() * 2);
    let mut rest = s;
    loop {
        let room = encoder
            .max_buffer_length_from_utf8_without_replacement(rest.len())
            .unwrap_or(rest.len() * 4)
            + 8;
        out.reserve(room);
        let (result, read) =
            encoder.encode_from_utf8_to_vec_without_replacement(rest, &mut out, true);
        rest = &rest[read..];
        match result {
            encoding_rs::EncoderResult::InputEmpty => break,
            encoding_rs::EncoderResult::OutputFull => {}
            encoding_rs::EncoderResult::Unmappable(c) => {
                out.extend_from_slice(format!("%26%23{}%3B", u32::from(c)).as_bytes());
            }
        }
    }
    Cow::Owned(out)
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
