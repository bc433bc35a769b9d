//! Which start tags carry links, and what else in a page changes them: the
//! handler the tokenizer reports a page's tags to. It keeps the link-bearing
//! attribute values as ranges of the page (resolved once the whole page is
//! read, when `<base href>` and the robots metas are known), the first
//! `<base href>` and whether a robots meta forbids following links.

use std::ops::Range;

use super::LinkContext;
use super::directives;
use super::tokenizer::{Handler, StartTag, Tag};

/// What a candidate's value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// `href`/`src` of a link element.
    Link,
    /// The `content` of a `meta http-equiv=refresh`.
    Refresh,
}

/// A link-bearing attribute value, as a range of the page.
#[derive(Debug, Clone)]
pub(super) struct Candidate {
    pub(super) kind: Kind,
    pub(super) context: LinkContext,
    pub(super) nofollow: bool,
    pub(super) value: Range<usize>,
}

/// Only this many link candidates are held per page; further ones are
/// counted over the cap unseen (a 50 MB page of links must not hold
/// millions of them).
pub(super) fn candidate_limit(max_links: usize) -> usize {
    max_links.saturating_mul(16).max(100_000)
}

/// What the tokenizer's start tags give while a page is read.
pub(super) struct Collect<'a> {
    pub(super) candidates: &'a mut Vec<Candidate>,
    pub(super) robots_name: Option<&'a str>,
    pub(super) limit: usize,
    /// Candidates beyond `limit`.
    pub(super) over_limit: u64,
    /// The first `<base href>`.
    pub(super) base: Option<Range<usize>>,
    /// A robots meta (ours or `robots`) said nofollow.
    pub(super) meta_nofollow: bool,
}

impl Handler for Collect<'_> {
    fn wants_attributes(&mut self, tag: Tag) -> bool {
        matches!(
            tag,
            Tag::A | Tag::Area | Tag::Frame | Tag::Iframe | Tag::Link | Tag::Meta | Tag::Base
        )
    }

    fn start_tag(&mut self, input: &[u8], tag: &StartTag<'_>) {
        match tag.tag {
            Tag::A => self.on_link(input, tag, b"href", true, LinkContext::AHref),
            Tag::Area => self.on_link(input, tag, b"href", true, LinkContext::AreaHref),
            Tag::Frame => self.on_link(input, tag, b"src", false, LinkContext::FrameSrc),
            Tag::Iframe => self.on_link(input, tag, b"src", false, LinkContext::IframeSrc),
            Tag::Link => self.on_link_element(input, tag),
            Tag::Meta => self.on_meta(input, tag),
            Tag::Base if self.base.is_none() => self.base = tag.attr(input, b"href"),
            _ => {}
        }
    }
}

impl Collect<'_> {
    fn push(&mut self, kind: Kind, context: LinkContext, nofollow: bool, value: Range<usize>) {
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
    fn on_link(
        &mut self,
        input: &[u8],
        tag: &StartTag<'_>,
        attr: &[u8],
        rel: bool,
        context: LinkContext,
    ) {
        let Some(value) = tag.attr(input, attr) else {
            return;
        };
        let nofollow = rel
            && tag
                .attr(input, b"rel")
                .is_some_and(|r| directives::has_token(&input[r], b"nofollow"));
        self.push(Kind::Link, context, nofollow, value);
    }

    /// `link rel=canonical href=...`.
    fn on_link_element(&mut self, input: &[u8], tag: &StartTag<'_>) {
        let Some(rel) = tag.attr(input, b"rel") else {
            return;
        };
        let rel = &input[rel];
        if !directives::has_token(rel, b"canonical") {
            return;
        }
        let nofollow = directives::has_token(rel, b"nofollow");
        if let Some(href) = tag.attr(input, b"href") {
            self.push(Kind::Link, LinkContext::LinkHref, nofollow, href);
        }
    }

    /// `meta http-equiv=refresh` and the robots metas.
    fn on_meta(&mut self, input: &[u8], tag: &StartTag<'_>) {
        let Some(content) = tag.attr(input, b"content") else {
            return;
        };
        if let Some(equiv) = tag.attr(input, b"http-equiv") {
            if input[equiv].trim_ascii().eq_ignore_ascii_case(b"refresh") {
                self.push(Kind::Refresh, LinkContext::MetaContent, false, content);
            }
            return;
        }
        if let Some(name) = tag.attr(input, b"name") {
            let name = input[name].trim_ascii();
            let ours = name.eq_ignore_ascii_case(b"robots")
                || self
                    .robots_name
                    .is_some_and(|r| name.eq_ignore_ascii_case(r.as_bytes()));
            if ours && directives::forbids_follow(&input[content]) {
                self.meta_nofollow = true;
            }
        }
    }
}
