//! The links of a response: the narrow seam between its readers (the
//! segmenter's scan, the fetcher's metadata records) and the HTML link
//! extractor. A reader hands over one response (its parsed head
//! and body) at a time and gets canonical URLs and counts back; nothing
//! else knows how links are found.

use crate::http::ResponseHead;
use url::Url;

use super::{ExtractOptions, Extractor, LinkContext, Page, PageKind, PageLinks, Skipped};

/// What kind of body a 2xx response had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body {
    /// HTML (declared or sniffed): links were looked for.
    Html,
    /// Not HTML: nothing to do.
    Other,
    /// Declared HTML but binary: skipped, to be reported.
    Mislabelled,
}

/// What one page gave, besides its links.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageSummary {
    /// HTML or not.
    pub body: Body,
    /// Links seen in the page, kept or skipped.
    pub found: u64,
    /// Links not kept, by reason.
    pub skipped: Skipped,
    /// The parser gave up before the end of the page (links before that
    /// point are kept).
    pub incomplete: bool,
}

/// One link extractor per worker thread; reuses its buffers across pages.
pub struct LinkExtractor {
    extractor: Extractor,
    out: PageLinks,
    robots_header: String,
}

impl LinkExtractor {
    /// An extractor that takes at most `max_links` links from a page and
    /// obeys robots directives addressed to `robots_name` (our product
    /// token) as well as to `robots`.
    pub fn new(max_links: usize, robots_name: Option<String>) -> LinkExtractor {
        LinkExtractor {
            extractor: Extractor::new(ExtractOptions {
                max_links,
                robots_name,
                ..ExtractOptions::default()
            }),
            out: PageLinks::default(),
            robots_header: String::new(),
        }
    }

    /// Reads the links of a 2xx response stored for `page`. The links, in
    /// document order, canonical, are in [`LinkExtractor::links`] until the
    /// next call.
    pub fn page(&mut self, page: &Url, head: &ResponseHead, body: &[u8]) -> PageSummary {
        self.robots_header.clear();
        for (name, value) in &head.headers {
            if name.eq_ignore_ascii_case("X-Robots-Tag") {
                if !self.robots_header.is_empty() {
                    self.robots_header.push_str(", ");
                }
                self.robots_header.push_str(value);
            }
        }
        let input = Page {
            url: page,
            content_type: head.header("Content-Type"),
            x_robots_tag: (!self.robots_header.is_empty()).then_some(self.robots_header.as_str()),
            body,
        };
        self.extractor.extract_into(&input, &mut self.out);
        PageSummary {
            body: match self.out.kind {
                PageKind::Html | PageKind::SniffedHtml => Body::Html,
                PageKind::NotHtml => Body::Other,
                PageKind::Binary => Body::Mislabelled,
            },
            found: self.out.links.len() as u64 + self.out.skipped.total(),
            skipped: self.out.skipped,
            incomplete: self.out.incomplete,
        }
    }

    /// The links of the last page.
    pub fn links(&self) -> &[Url] {
        &self.out.links
    }

    /// The canonical URL the last page names for itself, a hint kept
    /// beside the page (never used to merge URLs): its first `<link
    /// rel=canonical href>`, else the `rel="canonical"` target of its
    /// `Link` headers, resolved against `page` and canonicalized. `head`
    /// is the page's, as given to [`LinkExtractor::page`]; the header is
    /// read whatever the body (a PDF may name its HTML page).
    pub fn canonical_hint(&self, page: &Url, head: &ResponseHead) -> Option<Url> {
        let in_markup = self
            .links_with_context()
            .find(|(_, c)| *c == LinkContext::LinkHref);
        if let Some((url, _)) = in_markup {
            return Some(url.clone());
        }
        header_canonical(page, head)
    }

    /// The links of the last page with where each was found.
    pub fn links_with_context(&self) -> impl Iterator<Item = (&Url, LinkContext)> {
        self.out.links.iter().zip(self.out.contexts.iter().copied())
    }
}

/// The canonical URL a response's `Link` headers name, resolved against
/// `page` and canonicalized, if any does.
pub fn header_canonical(page: &Url, head: &ResponseHead) -> Option<Url> {
    (head.headers.iter())
        .filter(|(name, _)| name.eq_ignore_ascii_case("Link"))
        .find_map(|(_, value)| crate::http::link_canonical(value))
        .and_then(|target| crate::urlnorm::canonicalize_relative(page, target).ok())
}
