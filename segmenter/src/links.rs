//! The narrow seam between the scan and the HTML link extractor
//! (`extract.rs`): the scan hands over one stored response at a time and
//! gets canonical URLs back. Nothing else in the segmenter knows how links
//! are found.

use common::http::ResponseHead;
use common::urlnorm::UrlError;
use url::Url;

/// What one page gave.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PageLinks {
    /// Links found, before the per-page cap and before filters.
    pub found: u64,
}

/// One link extractor per worker thread; reuses its buffers across pages.
pub struct LinkExtractor {
    max_links: usize,
}

impl LinkExtractor {
    /// An extractor that takes at most `max_links` links from a page.
    pub fn new(max_links: usize) -> LinkExtractor {
        LinkExtractor { max_links }
    }

    /// Fills `out` (cleared first) with the canonical links of an HTML page
    /// stored for `page`, following its `<base>`, `nofollow` rules and
    /// charset.
    pub fn page_links(
        &mut self,
        page: &Url,
        head: &ResponseHead,
        body: &[u8],
        out: &mut Vec<Url>,
    ) -> PageLinks {
        let _ = (page, head, body, out, self.max_links);
        todo!("waiting for segmenter/src/extract.rs")
    }
}

/// The canonical target of a redirect from `page` with this `Location`.
pub fn redirect_target(page: &Url, location: &str) -> Result<Url, UrlError> {
    common::urlnorm::canonicalize_relative(page, location.trim())
}
