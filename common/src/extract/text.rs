//! The visible text of an HTML page, and the outline of its markup that a
//! WAT record describes (title, `<meta>` tags, `<base>`, the links of the
//! head and of the body with the element and attribute each came from):
//! what research outputs take from a page, read in one pass.
//!
//! Text rules: the text of `<script>`, `<style>`, `<noscript>`,
//! `<template>`, `<textarea>`, `<select>`, `<iframe>`, `<object>`, `<svg>`,
//! `<math>` and of every element marked `hidden` (or styled `display:none`,
//! `visibility:hidden`) is left out; the title goes in
//! [`PageText::title`], not in the text; block elements (`p`, `div`, `li`,
//! headings, table rows, `br`, ...) end a line; other white space collapses
//! to one space; lines are trimmed and empty ones dropped. Character
//! references are decoded.
//!
//! The reader consumes the events of a tokenizer (start tag with its
//! attributes, end tag, a run of text with its kind): [`TextReader::read`]
//! is the one place that drives it, so that the reader can move to another
//! tokenizer without change.

use std::cell::RefCell;
use std::rc::Rc;

use encoding_rs::Encoding;
use lol_html::html_content::{Element, TextType};
use lol_html::{AsciiCompatibleEncoding, HtmlRewriter, MemorySettings, Settings};

/// Most links and `<meta>` tags kept from one page (the rest are counted in
/// [`PageText::links_dropped`]).
const MAX_OUTLINE_ITEMS: usize = 10_000;
/// Most characters kept of an anchor's text or an attribute value.
const MAX_VALUE_CHARS: usize = 2_000;

/// A link of a page as written (not resolved, character references
/// decoded): where it was found and the attributes that say what it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TagLink {
    /// The element and attribute, as Common Crawl's WAT files name them:
    /// `A@/href`, `IMG@/src`, `LINK@/href`, `SCRIPT@/src`, `FORM@/action`.
    pub path: &'static str,
    /// The attribute's value.
    pub url: String,
    /// Other attributes kept (`rel`, `type`, `title`, `alt`, `target`,
    /// `hreflang`, `method`) and, for `A`, its `text`.
    pub attrs: Vec<(&'static str, String)>,
}

/// What [`TextReader::read`] found in a page.
#[derive(Debug, Clone, Default)]
pub struct PageText {
    /// The visible text, lines joined with `\n`, no empty line.
    pub text: String,
    /// The first `<title>`, white space collapsed.
    pub title: Option<String>,
    /// The first `<base href>`.
    pub base: Option<String>,
    /// Each `<meta>` tag's attributes (names in lower case), in order.
    pub metas: Vec<Vec<(String, String)>>,
    /// `<link>` elements of the head.
    pub head_links: Vec<TagLink>,
    /// `<script src>` of the head.
    pub head_scripts: Vec<TagLink>,
    /// Every other link, in document order.
    pub links: Vec<TagLink>,
    /// Links and metas over the cap, not kept.
    pub links_dropped: u64,
    /// The tokenizer stopped before the end (pathological markup); the
    /// text before that point is kept.
    pub incomplete: bool,
}

impl PageText {
    fn clear(&mut self) {
        self.text.clear();
        self.title = None;
        self.base = None;
        self.metas.clear();
        self.head_links.clear();
        self.head_scripts.clear();
        self.links.clear();
        self.links_dropped = 0;
        self.incomplete = false;
    }
}

/// What kind of text a run is, as the tokenizer read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Run {
    /// Ordinary text: references decoded, shown unless inside a hidden element.
    Data,
    /// `<title>` and `<textarea>` text.
    RcData,
    /// Script, style and other raw text: never shown.
    Raw,
    /// After `<plaintext>`, or CDATA: shown as written.
    Verbatim,
}

/// The elements whose content is never visible text.
fn is_hidden_element(name: &str) -> bool {
    matches!(
        name,
        "script"
            | "style"
            | "noscript"
            | "template"
            | "textarea"
            | "select"
            | "iframe"
            | "object"
            | "svg"
            | "math"
            | "noembed"
            | "noframes"
            | "datalist"
            | "canvas"
            | "audio"
            | "video"
    )
}

/// The elements that start and end a line of text.
fn is_block(name: &str) -> bool {
    matches!(
        name,
        "address"
            | "article"
            | "aside"
            | "blockquote"
            | "body"
            | "br"
            | "caption"
            | "center"
            | "dd"
            | "details"
            | "dialog"
            | "dir"
            | "div"
            | "dl"
            | "dt"
            | "fieldset"
            | "figcaption"
            | "figure"
            | "footer"
            | "form"
            | "frameset"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "header"
            | "hgroup"
            | "hr"
            | "html"
            | "legend"
            | "li"
            | "listing"
            | "main"
            | "menu"
            | "nav"
            | "ol"
            | "p"
            | "pre"
            | "section"
            | "summary"
            | "table"
            | "tbody"
            | "td"
            | "tfoot"
            | "th"
            | "thead"
            | "title"
            | "tr"
            | "ul"
            | "xmp"
    )
}

/// Elements that have no end tag.
fn is_void(name: &str) -> bool {
    matches!(
        name,
        "area"
            | "base"
            | "br"
            | "col"
            | "embed"
            | "hr"
            | "img"
            | "input"
            | "link"
            | "meta"
            | "source"
            | "track"
            | "wbr"
            | "param"
            | "keygen"
    )
}

/// Whether a `style` attribute hides its element.
fn style_hides(style: &str) -> bool {
    let squeezed: String = style
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .flat_map(char::to_lowercase)
        .collect();
    squeezed.contains("display:none") || squeezed.contains("visibility:hidden")
}

/// The link attributes read, by element: (element, attribute, path).
const LINK_ATTRS: &[(&str, &str, &str)] = &[
    ("a", "href", "A@/href"),
    ("area", "href", "AREA@/href"),
    ("img", "src", "IMG@/src"),
    ("iframe", "src", "IFRAME@/src"),
    ("frame", "src", "FRAME@/src"),
    ("form", "action", "FORM@/action"),
    ("embed", "src", "EMBED@/src"),
    ("object", "data", "OBJECT@/data"),
    ("source", "src", "SOURCE@/src"),
    ("video", "src", "VIDEO@/src"),
    ("audio", "src", "AUDIO@/src"),
    ("script", "src", "SCRIPT@/src"),
    ("link", "href", "LINK@/href"),
];

/// The other attributes kept with a link.
const EXTRA_ATTRS: &[&str] = &[
    "rel", "type", "title", "alt", "target", "hreflang", "method", "media",
];

/// The reader's state while it goes through one page.
#[derive(Default)]
struct Collect {
    page: PageText,
    /// Hidden elements entered and not yet left: their names, innermost
    /// last, with how many elements of the same name opened inside.
    hidden: Vec<(String, u32)>,
    /// Inside `<head>` (until `</head>` or `<body>`).
    in_head: bool,
    /// Inside `<pre>`: line ends in text are kept.
    in_pre: u32,
    /// Text of the current line written; a space or a line end is due
    /// before the next word.
    space_due: bool,
    break_due: bool,
    /// The `A` link whose text is being read (index in `page.links`).
    anchor: Option<usize>,
    anchor_text: String,
    /// Text of the current text node (a node may come in several chunks).
    pending: String,
    pending_kind: Option<Run>,
    /// The title being read.
    title: Option<String>,
}

/// An attribute lookup on the tag at hand (value as written).
type Attrs<'a> = &'a dyn Fn(&str) -> Option<String>;

impl Collect {
    fn reset(&mut self) {
        self.page.clear();
        self.hidden.clear();
        self.in_head = false;
        self.in_pre = 0;
        self.space_due = false;
        self.break_due = false;
        self.anchor = None;
        self.anchor_text.clear();
        self.pending.clear();
        self.pending_kind = None;
        self.title = None;
    }

    /// An attribute value with its character references decoded.
    fn decoded(&self, value: &str) -> String {
        cut(
            htmlize::unescape_attribute(value).into_owned(),
            MAX_VALUE_CHARS,
        )
    }

    fn start_tag(&mut self, name: &str, attrs: Attrs<'_>) {
        if let Some((hidden, nested)) = self.hidden.last_mut() {
            if hidden == name && !is_void(name) {
                *nested += 1;
            }
            // Links inside hidden elements still count (a script's src);
            // their text does not.
            self.outline(name, attrs);
            return;
        }
        match name {
            "head" => self.in_head = true,
            "body" => self.in_head = false,
            "title" if self.title.is_none() && self.page.title.is_none() => {
                self.title = Some(String::new());
            }
            "pre" | "listing" => self.in_pre += 1,
            _ => {}
        }
        if is_block(name) {
            self.break_due = true;
        }
        self.outline(name, attrs);
        let hides = is_hidden_element(name)
            || attrs("hidden").is_some()
            || attrs("style").is_some_and(|s| style_hides(&s));
        if hides && !is_void(name) {
            self.hidden.push((name.to_string(), 0));
        }
    }

    fn end_tag(&mut self, name: &str) {
        if let Some((hidden, nested)) = self.hidden.last_mut() {
            if hidden == name {
                if *nested == 0 {
                    self.hidden.pop();
                } else {
                    *nested -= 1;
                }
            }
            return;
        }
        match name {
            "head" => self.in_head = false,
            "a" => self.end_anchor(),
            "pre" | "listing" => self.in_pre = self.in_pre.saturating_sub(1),
            "title" => {
                if let Some(t) = self.title.take() {
                    let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
                    self.page.title = (!t.is_empty()).then(|| cut(t, MAX_VALUE_CHARS));
                }
            }
            _ => {}
        }
        if is_block(name) {
            self.break_due = true;
        }
    }

    /// Links, `<meta>` and `<base>` of the tag, for the outline.
    fn outline(&mut self, name: &str, attrs: Attrs<'_>) {
        match name {
            "meta" => return self.meta(attrs),
            "base" if self.page.base.is_none() => {
                self.page.base = attrs("href").map(|h| self.decoded(h.trim()));
                return;
            }
            _ => {}
        }
        let Some(&(_, attr, path)) = LINK_ATTRS.iter().find(|(el, _, _)| *el == name) else {
            return;
        };
        let Some(url) = attrs(attr) else {
            return;
        };
        let mut link = TagLink {
            path,
            url: self.decoded(url.trim()),
            attrs: Vec::new(),
        };
        for &extra in EXTRA_ATTRS {
            if let Some(v) = attrs(extra) {
                let v = self.decoded(&v);
                link.attrs.push((extra, v));
            }
        }
        let list = match name {
            "link" if self.in_head => &mut self.page.head_links,
            "script" if self.in_head => &mut self.page.head_scripts,
            _ => &mut self.page.links,
        };
        if list.len() + self.page.metas.len() >= MAX_OUTLINE_ITEMS {
            self.page.links_dropped += 1;
            return;
        }
        list.push(link);
        if name == "a" {
            self.end_anchor();
            self.anchor = Some(self.page.links.len() - 1);
        }
    }

    fn meta(&mut self, attrs: Attrs<'_>) {
        if self.page.metas.len() >= MAX_OUTLINE_ITEMS {
            self.page.links_dropped += 1;
            return;
        }
        let mut fields = Vec::new();
        for name in [
            "name",
            "property",
            "http-equiv",
            "itemprop",
            "charset",
            "content",
        ] {
            if let Some(v) = attrs(name) {
                let v = self.decoded(&v);
                fields.push((name.to_string(), v));
            }
        }
        if !fields.is_empty() {
            self.page.metas.push(fields);
        }
    }

    /// The anchor being read ends: its text goes with its link.
    fn end_anchor(&mut self) {
        if let Some(i) = self.anchor.take() {
            let text = self.anchor_text.split_whitespace().collect::<Vec<_>>();
            if !text.is_empty() {
                let text = cut(text.join(" "), MAX_VALUE_CHARS);
                self.page.links[i].attrs.push(("text", text));
            }
        }
        self.anchor_text.clear();
    }

    /// A chunk of a text node; `last`: the node ends with it.
    fn text(&mut self, chunk: &str, kind: Run, last: bool) {
        if self.pending_kind.is_some_and(|k| k != kind) {
            self.flush_text();
        }
        self.pending_kind = Some(kind);
        self.pending.push_str(chunk);
        if last {
            self.flush_text();
        }
    }

    /// The text node read so far goes to the title, or to the text.
    fn flush_text(&mut self) {
        let Some(kind) = self.pending_kind.take() else {
            return;
        };
        let mut node = std::mem::take(&mut self.pending);
        if matches!(kind, Run::Data | Run::RcData) && node.contains('&') {
            let decoded = htmlize::unescape(node.as_str()).into_owned();
            node.clear();
            node.push_str(&decoded);
        }
        if let Some(title) = &mut self.title {
            if kind == Run::RcData {
                title.push_str(&node);
            }
        } else if self.hidden.is_empty()
            && !self.in_head
            && matches!(kind, Run::Data | Run::Verbatim)
        {
            self.push_visible(&node);
        }
        node.clear();
        self.pending = node;
    }

    /// Adds visible text: white space collapsed, line ends where due.
    fn push_visible(&mut self, text: &str) {
        let out = &mut self.page.text;
        for c in text.chars() {
            if c.is_whitespace() {
                if c == '\n' && self.in_pre > 0 {
                    self.break_due = true;
                } else {
                    self.space_due = true;
                }
                continue;
            }
            if !out.is_empty() {
                if self.break_due {
                    out.push('\n');
                } else if self.space_due {
                    out.push(' ');
                }
            }
            self.break_due = false;
            self.space_due = false;
            out.push(c);
            if self.anchor.is_some() && self.anchor_text.len() < MAX_VALUE_CHARS * 4 {
                self.anchor_text.push(c);
            }
        }
        if self.anchor.is_some() && self.space_due {
            self.anchor_text.push(' ');
        }
    }

    fn finish(&mut self) {
        self.flush_text();
        self.end_anchor();
        if let Some(t) = self.title.take() {
            let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
            self.page.title = (!t.is_empty()).then(|| cut(t, MAX_VALUE_CHARS));
        }
    }
}

/// At most `max` characters of `s`.
fn cut(mut s: String, max: usize) -> String {
    if s.len() > max
        && let Some((i, _)) = s.char_indices().nth(max)
    {
        s.truncate(i);
    }
    s
}

/// Reads pages' text and outline; one per thread, reused across pages.
#[derive(Default)]
pub struct TextReader {
    state: Rc<RefCell<Collect>>,
    transcoded: String,
}

impl TextReader {
    /// A reader.
    pub fn new() -> TextReader {
        TextReader::default()
    }

    /// Reads `body` (an HTML page, its byte order mark removed) in
    /// `encoding`; the result is valid until the next call.
    pub fn read(&mut self, body: &[u8], encoding: &'static Encoding) -> PageText {
        let (input, enc) = match AsciiCompatibleEncoding::new(encoding) {
            Some(enc) => (body, enc),
            None => {
                super::transcode(encoding, body, &mut self.transcoded);
                (self.transcoded.as_bytes(), AsciiCompatibleEncoding::utf_8())
            }
        };
        self.state.borrow_mut().reset();
        let complete = tokenize(input, enc, &self.state);
        let mut state = self.state.borrow_mut();
        state.finish();
        state.page.incomplete = !complete;
        std::mem::take(&mut state.page)
    }
}

/// Drives the reader with a tokenizer over `input`; false if it stopped
/// before the end.
fn tokenize(input: &[u8], encoding: AsciiCompatibleEncoding, state: &Rc<RefCell<Collect>>) -> bool {
    let on_element = {
        let state = Rc::clone(state);
        move |el: &mut Element<'_, '_>| {
            let name = el.tag_name();
            let lookup = |attr: &str| el.get_attribute(attr);
            state.borrow_mut().start_tag(&name, &lookup);
            if let Some(handlers) = el.end_tag_handlers() {
                let state = Rc::clone(&state);
                handlers.push(Box::new(move |end| {
                    state.borrow_mut().end_tag(&end.name());
                    Ok(())
                }));
            }
            Ok(())
        }
    };
    let on_text = {
        let state = Rc::clone(state);
        move |t: &mut lol_html::html_content::TextChunk<'_>| {
            let kind = match t.text_type() {
                TextType::Data => Run::Data,
                TextType::RCData => Run::RcData,
                TextType::PlainText | TextType::CDataSection => Run::Verbatim,
                _ => Run::Raw,
            };
            state
                .borrow_mut()
                .text(t.as_str(), kind, t.last_in_text_node());
            Ok(())
        }
    };
    let settings = Settings {
        element_content_handlers: vec![lol_html::element!("*", on_element)],
        document_content_handlers: vec![lol_html::doc_text!(on_text)],
        encoding,
        memory_settings: MemorySettings {
            max_allowed_memory_usage: 16 << 20,
            ..MemorySettings::default()
        },
        strict: false,
        ..Settings::new()
    };
    let finished = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
        rewriter.write(input).is_ok() && rewriter.end().is_ok()
    }));
    matches!(finished, Ok(true))
}

#[cfg(test)]
mod tests {
    use super::*;
    use encoding_rs::{SHIFT_JIS, UTF_8, WINDOWS_1252};

    fn read(html: &str) -> PageText {
        TextReader::new().read(html.as_bytes(), UTF_8)
    }

    #[test]
    fn visible_text_by_lines_without_hidden_parts() {
        let page = read(
            "<html><head><title> The  Title </title><style>p{x}</style>\
             <script>var a = '<p>no</p>';</script></head><body>\
             <h1>Head&shy;line</h1><p>One <b>bold</b>\n  word.</p><p>Caf&eacute; &mdash; ok&amp;fine</p>\
             <ul><li>first<li>second</ul><div hidden>secret</div>\
             <div style=\"display: none\">also <div>gone</div> here</div><p>after<br>break</p>\
             <noscript>enable js</noscript><template><p>tpl</p></template>\
             <textarea>typed</textarea><select><option>opt</select>\
             <pre>a\n  b</pre><td>c1</td><td>c2</td></body></html>",
        );
        assert_eq!(page.title.as_deref(), Some("The Title"));
        assert_eq!(
            page.text,
            "Head\u{ad}line\nOne bold word.\nCafé — ok&fine\nfirst\nsecond\nafter\nbreak\na\nb\nc1\nc2"
        );
    }

    #[test]
    fn outline_of_head_and_links() {
        let page = read(
            "<head><meta charset=utf-8><meta name=description content=\"A &amp; B\">\
             <meta property=og:title content=T><link rel=stylesheet href=/s.css>\
             <script src=/a.js></script><base href=\"http://h.test/\"></head>\
             <body><a href=\"/x?a=1&amp;b=2\" title=t>Go <i>there</i></a>\
             <img src=i.png alt=pic><form action=/f method=post></form><script src=/b.js></script></body>",
        );
        assert_eq!(page.base.as_deref(), Some("http://h.test/"));
        assert_eq!(page.metas.len(), 3);
        assert_eq!(
            page.metas[1],
            vec![
                ("name".to_string(), "description".to_string()),
                ("content".to_string(), "A & B".to_string())
            ]
        );
        assert_eq!(page.head_links[0].path, "LINK@/href");
        assert_eq!(page.head_scripts[0].url, "/a.js");
        let paths: Vec<&str> = page.links.iter().map(|l| l.path).collect();
        assert_eq!(
            paths,
            ["A@/href", "IMG@/src", "FORM@/action", "SCRIPT@/src"]
        );
        assert_eq!(page.links[0].url, "/x?a=1&b=2");
        assert!(
            page.links[0]
                .attrs
                .contains(&("text", "Go there".to_string()))
        );
        assert!(page.links[1].attrs.contains(&("alt", "pic".to_string())));
        assert_eq!(page.text, "Go there");
    }

    #[test]
    fn pages_are_read_in_their_encoding() {
        let (latin, _, _) = WINDOWS_1252.encode("<p>naïve café</p>");
        let page = TextReader::new().read(&latin, WINDOWS_1252);
        assert_eq!(page.text, "naïve café");
        let (sjis, _, _) = SHIFT_JIS.encode("<title>日本</title><p>日本語のページ</p>");
        let page = TextReader::new().read(&sjis, SHIFT_JIS);
        assert_eq!(page.title.as_deref(), Some("日本"));
        assert_eq!(page.text, "日本語のページ");
        let utf16: Vec<u8> = "<p>hé</p>"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        let page = TextReader::new().read(&utf16, encoding_rs::UTF_16LE);
        assert_eq!(page.text, "hé");
    }
}
