//! An HTML tokenizer for readers that want a few things out of a page (its
//! links; the text of a page can be read the same way), not its tree.
//!
//! It follows the tokenizer of the HTML standard (section 13.2.5) where that
//! decides what is markup and what is not:
//!
//! - a tag starts at `<` and an ASCII letter (`</` and a letter for an end
//!   tag) and ends at the first `>` outside a quoted attribute value;
//!   attribute values are double-quoted, single-quoted or unquoted, a name
//!   may come without a value, `/` may stand between attributes, and a tag
//!   cut off by the end of the page is no tag;
//! - comments end at the first `-->` or `--!>` (`<!-->` and `<!--->` are
//!   whole comments); `<!DOCTYPE ...>`, `<?...>`, `</...>` not followed by
//!   a letter and any other `<!...>` end at the first `>`;
//! - the text of `<script>` (with the standard's escaped and double-escaped
//!   states: `<!--` inside a script hides a `<script>` inside it),
//!   `<style>`, `<xmp>`, `<iframe>`, `<noembed>`, `<noframes>`, `<noscript>`
//!   (as in a browser that runs scripts), `<textarea>` and `<title>` is
//!   text up to the matching end tag; `<plaintext>` makes the rest of the
//!   page text;
//! - inside `<svg>` and `<math>` (foreign content) those elements hold
//!   markup like any other, `<![CDATA[...]]>` is text, and the elements
//!   that close foreign content (`<p>`, `<div>`, `<font color>`, ... and the
//!   end tags `</p>`, `</br>`), the integration points (`<foreignObject>`,
//!   `<desc>`, `<title>` in SVG; `<mi>`, `<mo>`, `<mn>`, `<ms>`, `<mtext>`
//!   and `<annotation-xml encoding=text/html>` in MathML) and the end of the
//!   `svg` or `math` element return to HTML.
//!
//! What a tokenizer cannot know without building the tree is guessed the
//! way the tree builder does it in conforming pages: raw-text elements are
//! raw text wherever they appear in HTML content (a page that puts
//! `<style>` inside `<select>` or after `<frameset>`, where a browser
//! ignores the tag, is read as if it did not), and the namespace is kept as
//! a stack of the `svg`, `math` and integration-point elements still open.
//!
//! The tokenizer never copies the page: tags are reported with their name
//! and attributes as byte ranges of the input, and only for the elements
//! the [`Handler`] asks for (and the few it needs itself), so that a page
//! costs one pass over its bytes: `memchr` to the next `<` in text, one
//! look at each byte inside tags. Character references are left in place
//! (a reader decodes the values it keeps). Carriage returns count as white
//! space, as the standard's newline normalization makes them.

use std::ops::Range;

use memchr::memchr;

/// What kind of text a run of characters is (the standard's tokenizer state
/// it was read in).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TextKind {
    /// Ordinary text (character references to decode).
    Data,
    /// The text of `<textarea>` or `<title>` (character references to
    /// decode, no markup).
    RcData,
    /// The text of `<style>`, `<xmp>`, `<iframe>`, `<noembed>`,
    /// `<noframes>`, `<noscript>`: no markup, no references.
    RawText,
    /// The text of `<script>`.
    Script,
    /// Everything after `<plaintext>`.
    PlainText,
    /// A `<![CDATA[...]]>` section in SVG or MathML.
    CData,
}

/// The elements the tokenizer itself or a reader of links needs to tell
/// apart; every other name is [`Tag::Other`] (the name is in
/// [`StartTag::name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tag {
    A,
    Area,
    Base,
    Frame,
    Iframe,
    Link,
    Meta,
    Script,
    Style,
    Textarea,
    Title,
    Xmp,
    Noembed,
    Noframes,
    Noscript,
    Plaintext,
    Svg,
    Math,
    Font,
    Desc,
    ForeignObject,
    Mi,
    Mo,
    Mn,
    Ms,
    Mtext,
    AnnotationXml,
    Other,
}

/// An attribute: its name and value as byte ranges of the input (the value
/// as written: quotes left out, character references not decoded; empty
/// when the attribute has no value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Attr {
    pub(crate) name: Range<usize>,
    pub(crate) value: Range<usize>,
}

/// A start tag.
#[derive(Debug)]
pub(crate) struct StartTag<'a> {
    pub(crate) tag: Tag,
    /// The attributes in the order written, duplicates included (the first
    /// of a name is the one that counts: see [`StartTag::attr`]); empty
    /// unless the handler asked for them.
    pub(crate) attrs: &'a [Attr],
}

impl StartTag<'_> {
    /// The value of the attribute `name` (lower case): the first one of
    /// that name, as the standard drops the later ones.
    pub(crate) fn attr(&self, input: &[u8], name: &[u8]) -> Option<Range<usize>> {
        self.attrs
            .iter()
            .find(|a| input[a.name.clone()].eq_ignore_ascii_case(name))
            .map(|a| a.value.clone())
    }
}

/// What a reader does with the tokens of a page. Only
/// [`Handler::wants_attributes`] and [`Handler::start_tag`] are required;
/// text and end tags are ignored unless a reader wants them.
pub(crate) trait Handler {
    /// Whether the attributes of a start tag of this kind are wanted (an
    /// unwanted tag is still read to its end, its attributes not kept).
    fn wants_attributes(&mut self, tag: Tag) -> bool;

    /// A start tag, with its attributes if they were wanted.
    fn start_tag(&mut self, input: &[u8], tag: &StartTag<'_>);

    /// An end tag (`name`: the range of its name).
    fn end_tag(&mut self, _input: &[u8], _name: Range<usize>) {}

    /// A run of text (never empty). Text outside raw-text elements comes in
    /// one run between two pieces of markup.
    fn text(&mut self, _input: &[u8], _text: Range<usize>, _kind: TextKind) {}
}

/// The namespace of the elements being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Namespace {
    Html,
    Svg,
    MathMl,
}

/// Reads pages one after the other, reusing its buffers.
#[derive(Debug)]
pub(crate) struct Tokenizer {
    /// The attributes of the tag being read.
    attrs: Vec<Attr>,
    /// The namespaces entered: `Html` at the bottom, then one entry per
    /// `svg` or `math` element and per integration point still open.
    namespaces: Vec<Namespace>,
    /// A bound on `attrs` and `namespaces`, in bytes.
    max_memory: usize,
}

/// Bytes of white space in a tag (the standard's, with carriage return,
/// which the input stream turns into a line feed).
const WS: u8 = 1;
/// `>`.
const GT: u8 = 2;
/// `/`.
const SLASH: u8 = 4;
/// `=`.
const EQ: u8 = 8;

/// The classes above, by byte.
const CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    t[b' ' as usize] = WS;
    t[b'\t' as usize] = WS;
    t[b'\n' as usize] = WS;
    t[b'\r' as usize] = WS;
    t[0x0C] = WS;
    t[b'>' as usize] = GT;
    t[b'/' as usize] = SLASH;
    t[b'=' as usize] = EQ;
    t
};

fn is(b: u8, class: u8) -> bool {
    CLASS[b as usize] & class != 0
}

/// The first `needle` in `hay`. Between tags and in attribute values the
/// byte wanted is most often a few bytes away, where `memchr`'s choice of
/// the widest vectors the CPU has, and even the set-up of its SSE2 search,
/// cost more than the search: on x86-64, the first 64 bytes are searched
/// 16 at a time with SSE2 (which every such CPU has), then the rest with
/// `memchr`'s SSE2 search, called directly, inlined.
#[inline]
pub(crate) fn find(needle: u8, hay: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        let mut at = 0;
        while at < 64
            && let Some(chunk) = hay.get(at..at + 16)
        {
            let mask = sse2_equal(chunk, needle);
            if mask != 0 {
                return Some(at + mask.trailing_zeros() as usize);
            }
            at += 16;
        }
        let rest = &hay[at..];
        if let Some(finder) = memchr::arch::x86_64::sse2::memchr::One::new(needle) {
            return finder.find(rest).map(|i| at + i);
        }
    }
    memchr(needle, hay)
}

/// A bit for each of the first 16 bytes of `chunk` equal to `needle`.
#[cfg(target_arch = "x86_64")]
#[inline]
fn sse2_equal(chunk: &[u8], needle: u8) -> u32 {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8};
    let chunk = &chunk[..16];
    // SAFETY: the 16 bytes read are in `chunk`, and an unaligned load needs
    // no alignment; the other intrinsics only compute, with SSE2, which
    // every x86-64 CPU has.
    unsafe {
        let v = _mm_loadu_si128(chunk.as_ptr().cast());
        _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(needle as i8))) as u32
    }
}

/// The first index at or after `from` whose byte is in `class` (white
/// space, `>`, `/`, `=`: the ends of names), or the length of `input`.
fn scan_to(input: &[u8], mut from: usize, class: u8) -> usize {
    loop {
        let at = name_end_candidate(input, from);
        match input.get(at) {
            // A control character, or a byte of the superset not in `class`.
            Some(&b) if !is(b, class) => from = at + 1,
            _ => return at,
        }
    }
}

/// Whether `b` may end a name: a control character or space (a superset
/// of white space), `/`, `=` or `>`.
fn may_end_name(b: u8) -> bool {
    b <= b' ' || matches!(b, b'/' | b'=' | b'>')
}

/// The first index at or after `from` whose byte [`may_end_name`], or the
/// length of `input`. Names of tags and attributes are a few bytes long,
/// where a loop testing one byte at a time costs several instructions a
/// byte: on x86-64, SSE2 tests 16 at a time.
fn name_end_candidate(input: &[u8], from: usize) -> usize {
    let mut at = from;
    // The names of one or two letters (`a`, `p`, `li`, `id`) end at once.
    match input.get(at) {
        Some(&b) if !may_end_name(b) => at += 1,
        _ => return at,
    }
    #[cfg(target_arch = "x86_64")]
    while let Some(chunk) = input.get(at..at + 16) {
        let mask = sse2_name_ends(chunk);
        if mask != 0 {
            return at + mask.trailing_zeros() as usize;
        }
        at += 16;
    }
    let rest = input.get(at..).unwrap_or_default();
    at + rest
        .iter()
        .position(|&b| may_end_name(b))
        .unwrap_or(rest.len())
}

/// A bit for each of the first 16 bytes of `chunk` that [`may_end_name`].
#[cfg(target_arch = "x86_64")]
#[inline]
fn sse2_name_ends(chunk: &[u8]) -> u32 {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    let chunk = &chunk[..16];
    // SAFETY: the 16 bytes read are in `chunk`, and an unaligned load needs
    // no alignment; the other intrinsics only compute, with SSE2, which
    // every x86-64 CPU has.
    unsafe {
        let v = _mm_loadu_si128(chunk.as_ptr().cast());
        let byte = |b: u8| _mm_set1_epi8(b as i8);
        // `min(v, 0x20) == v` where `v <= 0x20` (unsigned).
        let low = _mm_cmpeq_epi8(_mm_min_epu8(v, byte(b' ')), v);
        let slash = _mm_cmpeq_epi8(v, byte(b'/'));
        let eq = _mm_cmpeq_epi8(v, byte(b'='));
        let gt = _mm_cmpeq_epi8(v, byte(b'>'));
        let any = _mm_or_si128(_mm_or_si128(low, slash), _mm_or_si128(eq, gt));
        _mm_movemask_epi8(any) as u32
    }
}

/// Why a page was not read to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OverMemory;

/// How the text after a start tag is read.
enum After {
    Markup,
    Text(TextKind, &'static [u8]),
    Script,
    PlainText,
}

impl Tokenizer {
    /// A tokenizer whose buffers (the attributes of one tag, the stack of
    /// namespaces) stay within `max_memory` bytes.
    pub(crate) fn new(max_memory: usize) -> Tokenizer {
        Tokenizer {
            attrs: Vec::new(),
            namespaces: Vec::new(),
            max_memory,
        }
    }

    /// Reads `input` to its end, reporting its tokens to `handler`; stops
    /// early with [`OverMemory`] if a tag has more wanted attributes, or
    /// SVG and MathML are nested deeper, than the memory bound allows.
    pub(crate) fn run<H: Handler>(
        &mut self,
        input: &[u8],
        handler: &mut H,
    ) -> Result<(), OverMemory> {
        self.namespaces.clear();
        self.namespaces.push(Namespace::Html);
        let result = self.read(input, handler);
        self.attrs.clear();
        if self.attrs.capacity() * size_of::<Attr>() > self.max_memory.min(1 << 20) {
            self.attrs = Vec::new();
        }
        if self.namespaces.capacity() > self.max_memory.min(1 << 20) {
            self.namespaces = Vec::new();
        }
        result
    }

    fn namespace(&self) -> Namespace {
        self.namespaces.last().copied().unwrap_or(Namespace::Html)
    }

    fn read<H: Handler>(&mut self, input: &[u8], handler: &mut H) -> Result<(), OverMemory> {
        let mut pos = 0;
        let mut text_start = 0;
        while let Some(i) = find(b'<', &input[pos..]) {
            let lt = pos + i;
            let next = input.get(lt + 1).copied();
            let after_slash = input.get(lt + 2).copied();
            let starts_markup = match next {
                Some(b'!' | b'?') => true,
                Some(b'/') => after_slash.is_some(),
                Some(b) => b.is_ascii_alphabetic(),
                None => false,
            };
            if !starts_markup {
                // A `<` that starts nothing (or `</` at the very end) is text.
                pos = lt + 1;
                continue;
            }
            if lt > text_start {
                handler.text(input, text_start..lt, TextKind::Data);
            }
            let end = match next {
                Some(b'!' | b'?') => self.declaration(input, lt, handler),
                Some(b'/') if after_slash.is_some_and(|b| b.is_ascii_alphabetic()) => {
                    self.end_tag(input, lt, handler)
                }
                // `</>` is dropped; `</` and anything else up to `>` is a
                // bogus comment.
                Some(b'/') => memchr(b'>', &input[lt + 2..]).map(|j| lt + 2 + j + 1),
                _ => match self.start_tag(input, lt, handler)? {
                    Some((end, after)) => self.raw_text(input, end, after, handler),
                    None => None,
                },
            };
            // `None`: the page ends inside markup, which is dropped.
            let Some(end) = end else {
                return Ok(());
            };
            text_start = end;
            pos = end;
        }
        if input.len() > text_start {
            handler.text(input, text_start..input.len(), TextKind::Data);
        }
        Ok(())
    }

    /// A comment, a CDATA section, a doctype or a bogus comment at `lt`
    /// (`<!` or `<?`); the index after it, `None` if it runs to the end.
    fn declaration<H: Handler>(&self, input: &[u8], lt: usize, handler: &mut H) -> Option<usize> {
        let rest = &input[lt..];
        if rest.starts_with(b"<!--") {
            return comment_end(input, lt);
        }
        if self.namespace() != Namespace::Html && rest.starts_with(b"<![CDATA[") {
            let start = lt + 9;
            let (end, after) = match memchr::memmem::find(&input[start..], b"]]>") {
                Some(j) => (start + j, Some(start + j + 3)),
                None => (input.len(), None),
            };
            if end > start {
                handler.text(input, start..end, TextKind::CData);
            }
            return after;
        }
        memchr(b'>', &input[lt + 2..]).map(|j| lt + 2 + j + 1)
    }

    /// The start tag at `lt`: reported to `handler`, then its effect on the
    /// namespace and on how the following text is read. `None` if the
    /// input ends inside it.
    fn start_tag<H: Handler>(
        &mut self,
        input: &[u8],
        lt: usize,
        handler: &mut H,
    ) -> Result<Option<(usize, After)>, OverMemory> {
        let name = lt + 1..scan_to(input, lt + 2, WS | GT | SLASH);
        let tag = classify(&input[name.clone()]);
        let ns = self.namespace();
        let foreign = ns != Namespace::Html;
        let wanted = handler.wants_attributes(tag)
            || foreign && matches!(tag, Tag::Font | Tag::AnnotationXml);
        self.attrs.clear();
        let parsed = if wanted {
            attributes::<true>(input, name.end, &mut self.attrs, self.max_memory)?
        } else {
            attributes::<false>(input, name.end, &mut self.attrs, self.max_memory)?
        };
        let Some((end, self_closing)) = parsed else {
            return Ok(None);
        };
        let start = StartTag {
            tag,
            attrs: &self.attrs,
        };
        handler.start_tag(input, &start);
        let after = match tag {
            Tag::Svg | Tag::Math if !self_closing => {
                let ns = if tag == Tag::Svg {
                    Namespace::Svg
                } else {
                    Namespace::MathMl
                };
                self.enter(ns)?;
                After::Markup
            }
            Tag::Svg | Tag::Math => After::Markup,
            _ if foreign => {
                self.foreign_start_tag(input, tag, name, self_closing)?;
                After::Markup
            }
            _ => text_after(tag),
        };
        Ok(Some((end, after)))
    }

    /// The effect of a start tag inside SVG or MathML on the namespace.
    fn foreign_start_tag(
        &mut self,
        input: &[u8],
        tag: Tag,
        name: Range<usize>,
        self_closing: bool,
    ) -> Result<(), OverMemory> {
        let ns = self.namespace();
        let attr = |n: &[u8]| {
            self.attrs
                .iter()
                .find(|a| input[a.name.clone()].eq_ignore_ascii_case(n))
                .map(|a| &input[a.value.clone()])
        };
        let font_breaks_out = tag == Tag::Font
            && (attr(b"color").is_some() || attr(b"face").is_some() || attr(b"size").is_some());
        if font_breaks_out || closes_foreign_content(&input[name]) {
            self.leave_foreign();
            return Ok(());
        }
        if self_closing {
            return Ok(());
        }
        let integration_point = match ns {
            Namespace::Svg => matches!(tag, Tag::ForeignObject | Tag::Desc | Tag::Title),
            Namespace::MathMl => {
                matches!(tag, Tag::Mi | Tag::Mo | Tag::Mn | Tag::Ms | Tag::Mtext)
                    || tag == Tag::AnnotationXml
                        && attr(b"encoding").is_some_and(|e| {
                            e.eq_ignore_ascii_case(b"text/html")
                                || e.eq_ignore_ascii_case(b"application/xhtml+xml")
                        })
            }
            Namespace::Html => false,
        };
        if integration_point {
            self.enter(Namespace::Html)?;
        }
        Ok(())
    }

    /// The end tag at `lt` (`</` and a letter): reported, then its effect on
    /// the namespace. The index after it, `None` if the input ends inside it.
    fn end_tag<H: Handler>(&mut self, input: &[u8], lt: usize, handler: &mut H) -> Option<usize> {
        let name = lt + 2..scan_to(input, lt + 3, WS | GT | SLASH);
        // Nearly every end tag is `</name>`: no attributes to read past.
        let end = if input.get(name.end) == Some(&b'>') {
            name.end + 1
        } else {
            attributes::<false>(input, name.end, &mut self.attrs, usize::MAX)
                .ok()
                .flatten()?
                .0
        };
        handler.end_tag(input, name.clone());
        if self.namespaces.len() > 1 {
            self.foreign_end_tag(classify(&input[name.clone()]), &input[name]);
        }
        Some(end)
    }

    /// The effect of an end tag on the namespace, when one is entered.
    fn foreign_end_tag(&mut self, tag: Tag, name: &[u8]) {
        let depth = self.namespaces.len();
        match self.namespace() {
            Namespace::Html => {
                // The end of an integration point returns to its namespace.
                let outer = self.namespaces[depth - 2];
                let closes = match outer {
                    Namespace::Svg => matches!(tag, Tag::ForeignObject | Tag::Desc | Tag::Title),
                    Namespace::MathMl => matches!(
                        tag,
                        Tag::Mi | Tag::Mo | Tag::Mn | Tag::Ms | Tag::Mtext | Tag::AnnotationXml
                    ),
                    Namespace::Html => false,
                };
                if closes {
                    self.namespaces.pop();
                }
            }
            ns => {
                if ns == Namespace::Svg && tag == Tag::Svg
                    || ns == Namespace::MathMl && tag == Tag::Math
                {
                    self.namespaces.pop();
                } else if name.eq_ignore_ascii_case(b"p") || name.eq_ignore_ascii_case(b"br") {
                    self.leave_foreign();
                }
            }
        }
    }

    fn enter(&mut self, ns: Namespace) -> Result<(), OverMemory> {
        if self.namespaces.len() >= self.max_memory {
            return Err(OverMemory);
        }
        self.namespaces.push(ns);
        Ok(())
    }

    /// Back to the nearest HTML element or integration point.
    fn leave_foreign(&mut self) {
        while self.namespaces.len() > 1 && self.namespace() != Namespace::Html {
            self.namespaces.pop();
        }
    }

    /// The text after a start tag at `from`, read as `after` says; the index
    /// of the markup that ends it, `None` at the end of the input.
    fn raw_text<H: Handler>(
        &self,
        input: &[u8],
        from: usize,
        after: After,
        handler: &mut H,
    ) -> Option<usize> {
        let (kind, end) = match after {
            After::Markup => return Some(from),
            After::PlainText => (TextKind::PlainText, None),
            After::Script => (TextKind::Script, script_end(input, from)),
            After::Text(kind, name) => (kind, end_tag_at(input, from, name)),
        };
        let text_end = end.unwrap_or(input.len());
        if text_end > from {
            handler.text(input, from..text_end, kind);
        }
        end
    }
}

/// How the text after a start tag in HTML content is read.
fn text_after(tag: Tag) -> After {
    match tag {
        Tag::Textarea => After::Text(TextKind::RcData, b"textarea"),
        Tag::Title => After::Text(TextKind::RcData, b"title"),
        Tag::Style => After::Text(TextKind::RawText, b"style"),
        Tag::Iframe => After::Text(TextKind::RawText, b"iframe"),
        Tag::Xmp => After::Text(TextKind::RawText, b"xmp"),
        Tag::Noembed => After::Text(TextKind::RawText, b"noembed"),
        Tag::Noframes => After::Text(TextKind::RawText, b"noframes"),
        Tag::Noscript => After::Text(TextKind::RawText, b"noscript"),
        Tag::Script => After::Script,
        Tag::Plaintext => After::PlainText,
        _ => After::Markup,
    }
}

/// The attributes of a tag whose name ends at `pos`, kept in `attrs` when
/// `KEEP`; returns the index after the tag's `>` and whether it was
/// written `/>`, `None` when the input ends first.
fn attributes<const KEEP: bool>(
    input: &[u8],
    mut pos: usize,
    attrs: &mut Vec<Attr>,
    max_memory: usize,
) -> Result<Option<(usize, bool)>, OverMemory> {
    let mut push = |name: Range<usize>, value: Range<usize>| {
        if KEEP {
            if (attrs.len() + 1) * size_of::<Attr>() > max_memory {
                return Err(OverMemory);
            }
            attrs.push(Attr { name, value });
        }
        Ok(())
    };
    loop {
        // Before an attribute name.
        let b = loop {
            match input.get(pos) {
                None => return Ok(None),
                Some(&b) if is(b, WS) => pos += 1,
                Some(&b) => break b,
            }
        };
        if b == b'>' {
            return Ok(Some((pos + 1, false)));
        }
        if b == b'/' {
            pos += 1;
            match input.get(pos) {
                Some(b'>') => return Ok(Some((pos + 1, true))),
                Some(_) => continue,
                None => return Ok(None),
            }
        }
        // The name: its first byte whatever it is (even `=`), then up to
        // white space, `/`, `>` or `=`.
        let name_start = pos;
        pos = scan_to(input, pos + 1, WS | GT | SLASH | EQ);
        let name = name_start..pos;
        while input.get(pos).is_some_and(|&b| is(b, WS)) {
            pos += 1;
        }
        match input.get(pos) {
            None => return Ok(None),
            Some(b'=') => pos += 1,
            Some(_) => {
                push(name.clone(), name.end..name.end)?;
                continue;
            }
        }
        while input.get(pos).is_some_and(|&b| is(b, WS)) {
            pos += 1;
        }
        let value = match input.get(pos) {
            None => return Ok(None),
            Some(&q) if q == b'"' || q == b'\'' => {
                let Some(j) = find(q, &input[pos + 1..]) else {
                    return Ok(None);
                };
                let value = pos + 1..pos + 1 + j;
                pos = value.end + 1;
                value
            }
            Some(b'>') => {
                push(name, pos..pos)?;
                return Ok(Some((pos + 1, false)));
            }
            Some(_) => {
                let start = pos;
                while input.get(pos).is_some_and(|&b| !is(b, WS | GT)) {
                    pos += 1;
                }
                if pos >= input.len() {
                    return Ok(None);
                }
                start..pos
            }
        };
        push(name, value)?;
    }
}

/// The index after the comment at `lt` (`<!--`), `None` if it runs to the
/// end: the first `-->` whose dashes come after `<!` (so `<!-->` and
/// `<!--->` are whole), or `--!>` after `<!--`.
fn comment_end(input: &[u8], lt: usize) -> Option<usize> {
    let mut from = lt + 4;
    loop {
        let gt = from + memchr(b'>', input.get(from..)?)?;
        let dashes = |at: usize| input[at] == b'-' && input[at + 1] == b'-';
        if gt >= lt + 4 && dashes(gt - 2) {
            return Some(gt + 1);
        }
        if gt >= lt + 7 && input[gt - 1] == b'!' && dashes(gt - 3) {
            return Some(gt + 1);
        }
        from = gt + 1;
    }
}

/// Whether `</name` followed by white space, `/` or `>` starts at `lt`
/// (the end tag that closes a raw-text element; `name` in lower case).
fn is_end_tag(input: &[u8], lt: usize, name: &[u8]) -> bool {
    let start = lt + 2;
    input.get(lt + 1) == Some(&b'/')
        && input
            .get(start..start + name.len())
            .is_some_and(|n| n.eq_ignore_ascii_case(name))
        && input
            .get(start + name.len())
            .is_some_and(|&b| is(b, WS | SLASH | GT))
}

/// The index of the end tag `</name` that ends raw text starting at `from`.
fn end_tag_at(input: &[u8], from: usize, name: &[u8]) -> Option<usize> {
    let mut pos = from;
    while let Some(i) = memchr(b'<', &input[pos..]) {
        let lt = pos + i;
        if is_end_tag(input, lt, name) {
            return Some(lt);
        }
        pos = lt + 1;
    }
    None
}

/// The states of script text that matter for where it ends.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Script {
    Plain,
    /// Inside `<!--`: `-->` goes back to `Plain`.
    Escaped,
    /// Inside `<!--` and `<script`: `</script` is text and goes back to
    /// `Escaped`.
    DoubleEscaped,
}

/// The index of the `</script` that ends script text starting at `from`,
/// following the standard's script data states (escaped, double escaped).
fn script_end(input: &[u8], from: usize) -> Option<usize> {
    let mut state = Script::Plain;
    let mut pos = from;
    // Dashes just read in an escaped state (`-->` needs two).
    let mut dashes = 0usize;
    loop {
        if state == Script::Plain {
            let lt = pos + memchr(b'<', &input[pos..])?;
            if is_end_tag(input, lt, b"script") {
                return Some(lt);
            }
            if input[lt + 1..].starts_with(b"!--") {
                // Straight into the "escaped dash dash" state.
                state = Script::Escaped;
                dashes = 2;
                pos = lt + 4;
            } else {
                pos = lt + 1;
            }
            continue;
        }
        let b = *input.get(pos)?;
        match b {
            b'-' => {
                dashes += 1;
                pos += 1;
            }
            b'>' if dashes >= 2 => {
                state = Script::Plain;
                dashes = 0;
                pos += 1;
            }
            b'<' => {
                dashes = 0;
                let after = pos + 1;
                if state == Script::Escaped {
                    if is_end_tag(input, pos, b"script") {
                        return Some(pos);
                    }
                    if starts_script_name(input, after) {
                        state = Script::DoubleEscaped;
                        pos = after + 7;
                        continue;
                    }
                } else if input.get(after) == Some(&b'/') && starts_script_name(input, after + 1) {
                    state = Script::Escaped;
                    pos = after + 8;
                    continue;
                }
                pos = after;
            }
            _ => {
                dashes = 0;
                // Nothing but `-` and `<` matters until one comes.
                pos = match memchr::memchr2(b'-', b'<', &input[pos..]) {
                    Some(i) => pos + i,
                    None => return None,
                };
            }
        }
    }
}

/// Whether `script` and then white space, `/` or `>` starts at `at`.
fn starts_script_name(input: &[u8], at: usize) -> bool {
    input
        .get(at..at + 6)
        .is_some_and(|n| n.eq_ignore_ascii_case(b"script"))
        && input.get(at + 6).is_some_and(|&b| is(b, WS | SLASH | GT))
}

/// The kind of a tag by its name (any case).
pub(crate) fn classify(name: &[u8]) -> Tag {
    let Some(&first) = name.first() else {
        return Tag::Other;
    };
    // One candidate by length and first letter, then a comparison.
    let (candidate, tag): (&[u8], Tag) = match (name.len(), first | 0x20) {
        (1, b'a') => return Tag::A,
        (2, b'm') => match name[1] | 0x20 {
            b'i' => return Tag::Mi,
            b'o' => return Tag::Mo,
            b'n' => return Tag::Mn,
            b's' => return Tag::Ms,
            _ => return Tag::Other,
        },
        (3, b's') => (b"svg", Tag::Svg),
        (3, b'x') => (b"xmp", Tag::Xmp),
        (4, b'a') => (b"area", Tag::Area),
        (4, b'b') => (b"base", Tag::Base),
        (4, b'd') => (b"desc", Tag::Desc),
        (4, b'f') => (b"font", Tag::Font),
        (4, b'l') => (b"link", Tag::Link),
        (4, b'm') if name[1] | 0x20 == b'e' => (b"meta", Tag::Meta),
        (4, b'm') => (b"math", Tag::Math),
        (5, b'f') => (b"frame", Tag::Frame),
        (5, b'm') => (b"mtext", Tag::Mtext),
        (5, b's') => (b"style", Tag::Style),
        (5, b't') => (b"title", Tag::Title),
        (6, b'i') => (b"iframe", Tag::Iframe),
        (6, b's') => (b"script", Tag::Script),
        (7, b'n') => (b"noembed", Tag::Noembed),
        (8, b'n') if name[2] | 0x20 == b'f' => (b"noframes", Tag::Noframes),
        (8, b'n') => (b"noscript", Tag::Noscript),
        (8, b't') => (b"textarea", Tag::Textarea),
        (9, b'p') => (b"plaintext", Tag::Plaintext),
        (13, b'f') => (b"foreignobject", Tag::ForeignObject),
        (14, b'a') => (b"annotation-xml", Tag::AnnotationXml),
        _ => return Tag::Other,
    };
    if name.eq_ignore_ascii_case(candidate) {
        tag
    } else {
        Tag::Other
    }
}

/// The HTML elements whose start tag ends foreign content (the standard's
/// list in "the rules for parsing tokens in foreign content").
fn closes_foreign_content(name: &[u8]) -> bool {
    const NAMES: [&[u8]; 44] = [
        b"b",
        b"big",
        b"blockquote",
        b"body",
        b"br",
        b"center",
        b"code",
        b"dd",
        b"div",
        b"dl",
        b"dt",
        b"em",
        b"embed",
        b"h1",
        b"h2",
        b"h3",
        b"h4",
        b"h5",
        b"h6",
        b"head",
        b"hr",
        b"i",
        b"img",
        b"li",
        b"listing",
        b"menu",
        b"meta",
        b"nobr",
        b"ol",
        b"p",
        b"pre",
        b"ruby",
        b"s",
        b"small",
        b"span",
        b"strong",
        b"strike",
        b"sub",
        b"sup",
        b"table",
        b"tt",
        b"u",
        b"ul",
        b"var",
    ];
    NAMES.iter().any(|n| n.eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests;
