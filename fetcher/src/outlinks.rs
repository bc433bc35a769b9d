//! The links of a fetched page for its `metadata` record: Heritrix's
//! `outlink: URL L CONTEXT` lines and the crawler's `crawlLinks` summary.
//!
//! The links are read with the segmenter's own rules ([`common::extract`]):
//! the same HTML sniffing, encodings, nofollow rules and canonical form, so
//! each listed URL is the one the segmenter would follow. Only 2xx
//! responses whose body is HTML have links; a body cut at `max_body` gives
//! the links of what was kept. One [`Outlinks`] per worker thread, reused.

use common::body::{BodyDecoder, Outcome};
use common::extract::{Body, LinkExtractor, PageSummary};
use common::warc::{METADATA_CANONICAL, METADATA_LINKS_SUMMARY, METADATA_OUTLINKS, WarcFields};

use crate::http::Response;

/// At most this many links are listed per page (Heritrix keeps 6,000 too);
/// the rest are counted as over the cap in the summary.
pub const MAX_OUTLINKS: usize = 6000;

/// A decoding buffer grown past this by a large body is freed after it:
/// one worker per host can be many workers, each with its own buffers.
const KEEP_BUFFER: usize = 1 << 20;

/// Reads the links of fetched pages; buffers reused from page to page.
pub struct Outlinks {
    extractor: LinkExtractor,
    decoder: BodyDecoder,
    robots_name: String,
}

impl Outlinks {
    /// An extractor that obeys robots directives addressed to `robots_name`
    /// (our product token) as well as to `robots`.
    pub fn new(robots_name: &str) -> Outlinks {
        Outlinks {
            extractor: LinkExtractor::new(MAX_OUTLINKS, Some(robots_name.to_string())),
            decoder: BodyDecoder::default(),
            robots_name: robots_name.to_string(),
        }
    }

    /// Appends the `outlink` lines and the `crawlLinks` summary of `r`,
    /// fetched from `url`, to `fields`, if it is a 2xx HTML response, and
    /// the canonical URL a 2xx response names (`crawlCanonical`).
    pub fn append(&mut self, url: &str, r: &Response, max_body: u64, fields: &mut WarcFields) {
        if !(200..300).contains(&r.status) {
            return;
        }
        let (Some(head), Ok(page)) = (
            common::http::parse_response_head(&r.block),
            url::Url::parse(url),
        ) else {
            return;
        };
        // Images, PDFs, JSON...: not decoded only to be passed over; their
        // `Link` header may name a canonical URL all the same.
        if !common::extract::may_be_html(head.header("Content-Type")) {
            push_canonical(common::extract::header_canonical(&page, &head), fields);
            return;
        }
        let max = usize::try_from(max_body).unwrap_or(usize::MAX);
        let raw = &r.block[head.body_offset.min(r.block.len())..];
        let decoded = self.decoder.decode_response(&head, raw, max);
        let summary = self.extractor.page(&page, &head, decoded.body);
        if summary.body != Body::Html {
            push_canonical(common::extract::header_canonical(&page, &head), fields);
            self.decoder.trim(KEEP_BUFFER);
            return;
        }
        let body = Read {
            bytes: decoded.body.len(),
            decoded: match decoded.outcome {
                Outcome::Complete => "complete",
                Outcome::Cut => "cut",
                Outcome::Incomplete(_) => "incomplete",
                Outcome::Failed(_) => "failed",
            },
        };
        // The hint first: the summary closes the record.
        push_canonical(self.extractor.canonical_hint(&page, &head), fields);
        for (link, context) in self.extractor.links_with_context() {
            let parts = [link.as_str(), " L ", context.as_str()];
            fields.push_parts(METADATA_OUTLINKS, &parts);
        }
        let value = links_summary(&summary, &body, &self.robots_name);
        fields.push(METADATA_LINKS_SUMMARY, &value);
        self.decoder.trim(KEEP_BUFFER);
    }
}

/// Adds the page's canonical URL, a hint ([`METADATA_CANONICAL`]), if it
/// names one.
fn push_canonical(hint: Option<url::Url>, fields: &mut WarcFields) {
    if let Some(url) = hint {
        fields.push(METADATA_CANONICAL, url.as_str());
    }
}

/// How the body was read for its links.
struct Read {
    /// Decoded bytes read.
    bytes: usize,
    /// How decoding went: `complete`, `cut` (at `max_body`), `incomplete`
    /// (a damaged or cut stream), `failed` (read as received).
    decoded: &'static str,
}

/// The `crawlLinks` value: the links listed, those not listed by reason,
/// then how the page was read (`listed 12 nofollow 1 scheme 2 invalid 0
/// same-page 0 over-cap 0 incomplete 0 body 10422 decoded complete
/// robots-name benchbot`), so that a reader knows whether parsing the
/// page itself would give the same links.
fn links_summary(s: &PageSummary, body: &Read, robots_name: &str) -> String {
    let k = &s.skipped;
    format!(
        "listed {} nofollow {} scheme {} invalid {} same-page {} over-cap {} incomplete {} \
         body {} decoded {} robots-name {robots_name}",
        s.found - k.total(),
        k.nofollow,
        k.scheme,
        k.invalid,
        k.same_page,
        k.over_cap,
        u8::from(s.incomplete),
        body.bytes,
        body.decoded,
    )
}
