//! The start tags of a page as `lol_html` reads them: the reader the link
//! extractor (`common::extract`) used before it had its own tokenizer, kept
//! as the oracle its replacement is compared with (the differential test,
//! `tests/tests/it/link_reader.rs`) and as the baseline of the extractor
//! benchmark (`segmenter/examples/bench_extract.rs`).
//!
//! It is the old reading stage as it was: `lol_html` with one element
//! handler per link-bearing element name, not strict (ambiguous markup is
//! read as well as a tokenizer can), its memory bounded, attributes
//! reported where they lie in the page. Plugged into
//! `common::extract::Extractor::extract_with_reader`, it gives the links the
//! old extractor gave: everything after the reading (encodings, which
//! attributes are links, nofollow, resolution) is shared.

use std::borrow::Cow;
use std::ops::Range;

use common::extract::TagSink;
use encoding_rs::Encoding;
use lol_html::html_content::Element;
use lol_html::{
    AsciiCompatibleEncoding, ElementContentHandlers, HtmlRewriter, MemorySettings, Selector,
    Settings,
};

/// The elements whose start tags the extractor reads: element names only,
/// as the old extractor chose them (attribute conditions such as `a[href]`
/// made lol_html about 20 % slower).
const NAMES: [&str; 7] = ["a", "area", "frame", "iframe", "link", "meta", "base"];

/// lol_html set up to report the start tags of link-bearing elements.
pub struct LolHtmlReader {
    selectors: Vec<Selector>,
    max_memory: usize,
}

impl LolHtmlReader {
    /// A reader whose parser memory is bounded by `max_memory` bytes (the
    /// extractor's `max_parser_memory`).
    pub fn new(max_memory: usize) -> LolHtmlReader {
        let selectors = NAMES
            .iter()
            .map(|n| n.parse().expect("an element name is a selector"))
            .collect();
        LolHtmlReader {
            selectors,
            max_memory,
        }
    }

    /// Reads `input` (in `encoding`, ASCII-compatible), calling `tag(name,
    /// attributes)` for each start tag of a link-bearing element in
    /// document order, each attribute's name and value as ranges of
    /// `input`; false if lol_html stopped before the end (its memory bound).
    pub fn read(&self, input: &[u8], encoding: &'static Encoding, tag: &mut TagSink<'_>) -> bool {
        let tag = std::cell::RefCell::new(tag);
        let mut attrs: Vec<(Range<usize>, Range<usize>)> = Vec::new();
        let attrs = std::cell::RefCell::new(&mut attrs);
        let handlers = self
            .selectors
            .iter()
            .zip(NAMES)
            .map(|(selector, name)| {
                let (tag, attrs) = (&tag, &attrs);
                let handler =
                    ElementContentHandlers::default().element(move |el: &mut Element<'_, '_>| {
                        let mut attrs = attrs.borrow_mut();
                        attrs.clear();
                        // Attributes that lol_html cannot place in the page
                        // (never seen) are left out.
                        attrs.extend(el.attributes().iter().filter_map(|a| {
                            let name = a.name_source_location()?.bytes();
                            let value = a.value_source_location()?.bytes();
                            (name.end <= input.len() && value.end <= input.len())
                                .then_some((name, value))
                        }));
                        (tag.borrow_mut())(name.as_bytes(), &attrs);
                        Ok(())
                    });
                (Cow::Borrowed(selector), handler)
            })
            .collect();
        let settings = Settings {
            element_content_handlers: handlers,
            encoding: AsciiCompatibleEncoding::new(encoding)
                .unwrap_or_else(AsciiCompatibleEncoding::utf_8),
            memory_settings: MemorySettings {
                max_allowed_memory_usage: self.max_memory,
                ..MemorySettings::default()
            },
            strict: false,
            ..Settings::new()
        };
        let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
        rewriter.write(input).is_ok() && rewriter.end().is_ok()
    }
}
