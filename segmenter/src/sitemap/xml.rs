//! Sitemap XML, RSS and Atom through quick-xml's streaming reader: one
//! state machine ([`Handler`]) fed by a slice reader or a buffered one.

use quick_xml::Reader;
use quick_xml::events::{BytesRef, BytesStart, Event};

use super::cap::{Capped, gzip_error};
use super::{Entry, Kind, MAX_LOC, ParseError, Sink, date};

/// Bytes of loc text kept: [`MAX_LOC`] and room for the blanks around it.
const LOC_BUF: usize = MAX_LOC + 256;
/// Longest `<lastmod>` / `<priority>` text kept; longer is not a date.
const MAX_FIELD: usize = 64;

/// Reads an uncompressed document held in memory; `base` is the offset of
/// `doc` in the whole document (bytes skipped before it).
pub(super) fn read_slice(doc: &[u8], base: u64, sink: &mut Sink<'_>) {
    let mut reader = Reader::from_reader(doc);
    configure(&mut reader);
    let mut h = Handler::new(sink);
    loop {
        match reader.read_event() {
            Ok(Event::Eof) => {
                let cut = h.sink.summary.cut_at_bytes;
                h.eof(base + reader.buffer_position(), cut);
                break;
            }
            Ok(ev) => {
                if h.event(ev) {
                    break;
                }
            }
            Err(e) => {
                let cut = h.sink.summary.cut_at_bytes;
                h.fault(base + reader.error_position(), e.to_string(), cut);
                break;
            }
        }
    }
}

/// Reads a decompressed stream; `base` as for [`read_slice`].
pub(super) fn read_buffered<R: Capped>(r: R, base: u64, sink: &mut Sink<'_>) {
    let mut reader = Reader::from_reader(r);
    configure(&mut reader);
    let mut buf = Vec::with_capacity(4096);
    let mut h = Handler::new(sink);
    loop {
        buf.clear();
        match reader.read_event_into(&mut buf) {
            Ok(Event::Eof) => {
                let cut = reader.get_ref().cut();
                h.eof(base + reader.buffer_position(), cut);
                break;
            }
            Ok(ev) => {
                if h.event(ev) {
                    h.sink.summary.cut_at_bytes |= reader.get_ref().cut();
                    break;
                }
            }
            Err(quick_xml::Error::Io(e)) => {
                let src = reader.get_ref();
                h.sink.summary.cut_at_bytes |= src.cut();
                h.sink.summary.error = Some(gzip_error(src.delivered(), &e));
                break;
            }
            Err(e) => {
                let cut = reader.get_ref().cut();
                h.fault(base + reader.error_position(), e.to_string(), cut);
                break;
            }
        }
    }
}

/// A bare `&` that starts no entity (`?a=1&b=2`, a common slip in
/// generated sitemaps) is read as itself, as browsers do, rather than
/// losing the rest of the document.
fn configure<R>(reader: &mut Reader<R>) {
    reader.config_mut().allow_dangling_amp = true;
}

/// The element whose text is being collected.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Field {
    Loc,
    Lastmod,
    Priority,
}

/// The state of one document: root kind, depth, and the entry being read.
struct Handler<'h, 's> {
    sink: &'h mut Sink<'s>,
    /// Open elements.
    depth: u32,
    /// Set by the root element.
    kind: Option<Kind>,
    root_prefix: Vec<u8>,
    /// `depth` inside the current entry element (its children are at it).
    entry_depth: Option<u32>,
    entry_prefix: Vec<u8>,
    /// The field element whose text is collected, and its inner depth.
    field: Option<(Field, u32)>,
    loc: String,
    /// A loc element (or Atom link) was seen in this entry.
    has_loc: bool,
    /// The loc held an unknown entity or a bad character reference.
    loc_bad: bool,
    lastmod: String,
    priority: String,
}

impl<'h, 's> Handler<'h, 's> {
    fn new(sink: &'h mut Sink<'s>) -> Self {
        Handler {
            sink,
            depth: 0,
            kind: None,
            root_prefix: Vec::new(),
            entry_depth: None,
            entry_prefix: Vec::new(),
            field: None,
            loc: String::with_capacity(LOC_BUF),
            has_loc: false,
            loc_bad: false,
            lastmod: String::with_capacity(MAX_FIELD),
            priority: String::with_capacity(MAX_FIELD),
        }
    }

    /// Handles one event; true when reading is over.
    fn event(&mut self, ev: Event<'_>) -> bool {
        match ev {
            Event::Start(e) => self.start(&e, false),
            Event::Empty(e) => self.start(&e, true),
            Event::End(_) => self.end(),
            Event::Text(t) => {
                self.text(&t);
                false
            }
            Event::CData(t) => {
                self.text(&t);
                false
            }
            Event::GeneralRef(r) => {
                self.general_ref(&r);
                false
            }
            Event::Eof => true,
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) | Event::DocType(_) => false,
        }
    }

    /// The end of the data at `offset`: an error if elements are still open
    /// (quick-xml does not complain about those), unless the data was cut.
    fn eof(&mut self, offset: u64, cut: bool) {
        if self.depth > 0 {
            let message = format!(
                "the document ends inside {} open element{}",
                self.depth,
                if self.depth == 1 { "" } else { "s" }
            );
            self.fault(offset, message, cut);
        } else if cut {
            self.sink.summary.cut_at_bytes = true;
        }
    }

    fn start(&mut self, e: &BytesStart<'_>, empty: bool) -> bool {
        let name = e.name();
        let local = name.local_name().into_inner().as_bytes();
        let prefix = name
            .prefix()
            .map_or(&b""[..], |p| p.into_inner().as_bytes());
        let Some(kind) = self.kind else {
            // The root element decides.
            let kind = match local {
                b"urlset" => Kind::UrlSet,
                b"sitemapindex" => Kind::Index,
                // Only tried as a sitemap: a feed is none, not read on.
                b"rss" | b"RDF" | b"feed" if self.sink.limits.sitemaps_only => return true,
                b"rss" | b"RDF" => Kind::Rss,
                b"feed" => Kind::Atom,
                _ => return true,
            };
            self.kind = Some(kind);
            self.sink.summary.kind = Some(kind);
            self.root_prefix.extend_from_slice(prefix);
            if empty {
                return true;
            }
            self.depth += 1;
            return false;
        };
        match self.entry_depth {
            None => {
                let is_entry = same(local, entry_name(kind))
                    && (same(prefix, &self.root_prefix)
                        || (kind == Kind::Rss && prefix.is_empty()));
                if is_entry {
                    self.entry_prefix.clear();
                    self.entry_prefix.extend_from_slice(prefix);
                    self.loc.clear();
                    self.lastmod.clear();
                    self.priority.clear();
                    self.has_loc = false;
                    self.loc_bad = false;
                    self.field = None;
                    if empty {
                        self.finish_entry();
                    } else {
                        self.entry_depth = Some(self.depth + 1);
                    }
                }
            }
            Some(inner) if inner == self.depth && same(prefix, &self.entry_prefix) => {
                let field = match (kind, local) {
                    (Kind::UrlSet | Kind::Index, b"loc") | (Kind::Rss, b"link") => Some(Field::Loc),
                    (Kind::UrlSet | Kind::Index, b"lastmod")
                    | (Kind::Rss, b"pubDate")
                    | (Kind::Atom, b"updated") => Some(Field::Lastmod),
                    (Kind::UrlSet, b"priority") => Some(Field::Priority),
                    (Kind::Atom, b"link") => {
                        self.atom_link(e);
                        None
                    }
                    _ => None,
                };
                if let Some(field) = field {
                    match field {
                        Field::Loc => {
                            self.loc.clear();
                            self.has_loc = true;
                            self.loc_bad = false;
                        }
                        Field::Lastmod => self.lastmod.clear(),
                        Field::Priority => self.priority.clear(),
                    }
                    if !empty {
                        self.field = Some((field, self.depth + 1));
                    }
                }
            }
            Some(_) => {}
        }
        if !empty {
            self.depth += 1;
        }
        false
    }

    fn end(&mut self) -> bool {
        // quick-xml checks that end tags match start tags.
        self.depth = self.depth.saturating_sub(1);
        if matches!(self.field, Some((_, d)) if d == self.depth + 1) {
            self.field = None;
        }
        if self.entry_depth == Some(self.depth + 1) {
            self.entry_depth = None;
            self.finish_entry();
        }
        // The root closed: what follows is not read.
        self.depth == 0
    }

    /// Atom `<link href="..." rel="alternate">` (or without `rel`): the
    /// first such link of an entry is its loc.
    fn atom_link(&mut self, e: &BytesStart<'_>) {
        if self.has_loc {
            return;
        }
        let mut href = None;
        let mut alternate = true;
        for attr in e.attributes().with_checks(false) {
            let Ok(attr) = attr else {
                return;
            };
            match attr.key.local_name().into_inner().as_bytes() {
                b"href" => href = Some(attr),
                b"rel" => alternate = attr.value.trim() == "alternate",
                _ => {}
            }
        }
        let (Some(href), true) = (href, alternate) else {
            return;
        };
        self.has_loc = true;
        match href.normalized_value(quick_xml::XmlVersion::Implicit1_0) {
            Ok(v) => self.push(Field::Loc, &v),
            Err(_) => self.loc_bad = true,
        }
    }

    fn text(&mut self, t: &str) {
        let Some((field, d)) = self.field else {
            return;
        };
        if d != self.depth {
            return;
        }
        self.push(field, t);
    }

    /// Appends to a field; an overlong loc is invalid, an overlong date or
    /// number unreadable.
    fn push(&mut self, field: Field, s: &str) {
        let (buf, cap) = match field {
            Field::Loc => (&mut self.loc, LOC_BUF),
            Field::Lastmod => (&mut self.lastmod, MAX_FIELD),
            Field::Priority => (&mut self.priority, MAX_FIELD),
        };
        if !push_capped(buf, s, cap) {
            match field {
                Field::Loc => self.loc_bad = true,
                _ => {
                    buf.clear();
                    buf.push('?');
                }
            }
        }
    }

    fn general_ref(&mut self, r: &BytesRef<'_>) {
        let Some((field, d)) = self.field else {
            return;
        };
        if d != self.depth {
            return;
        }
        let ch = match r.resolve_char_ref() {
            Ok(Some(c)) => Some(c),
            Ok(None) => match &**r {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                _ => None,
            },
            Err(_) => None,
        };
        match ch {
            Some(c) => self.push(field, c.encode_utf8(&mut [0; 4])),
            None if field == Field::Loc => self.loc_bad = true,
            // An unknown entity makes a date or number unreadable.
            None => self.push(field, "?"),
        }
    }

    /// The entry element closed: hand it over (or count it as invalid).
    fn finish_entry(&mut self) {
        let Some(kind) = self.kind else {
            return;
        };
        if self.loc_bad {
            self.sink.summary.invalid += 1;
            return;
        }
        let lastmod = self.lastmod.trim();
        let lastmod_ms = if lastmod.is_empty() {
            None
        } else if kind == Kind::Rss {
            date::parse_rfc822(lastmod).or_else(|| date::parse_w3c_datetime(lastmod))
        } else {
            date::parse_w3c_datetime(lastmod)
        };
        let priority = self
            .priority
            .trim()
            .parse::<f32>()
            .ok()
            .filter(|p| (0.0..=1.0).contains(p));
        let entry = Entry {
            loc: self.loc.trim(),
            lastmod_ms,
            priority,
        };
        let relative_ok = matches!(kind, Kind::Rss | Kind::Atom);
        self.sink.entry(kind, &entry, relative_ok);
    }

    /// An entry cut off by the end of the data we read counts as over the limit.
    fn close_open_entry_as_lost(&mut self) {
        if self.entry_depth.take().is_some() {
            self.sink.summary.over_limit += 1;
        }
    }

    /// The document cannot be read past `offset`.
    /// When the data was cut at `max_bytes` (`cut`), that is the reason, not
    /// an error.
    fn fault(&mut self, offset: u64, message: String, cut: bool) {
        if cut {
            self.sink.summary.cut_at_bytes = true;
            self.close_open_entry_as_lost();
            return;
        }
        self.entry_depth = None;
        self.sink.summary.error = Some(ParseError { offset, message });
    }
}

/// `a == b`, inlined for the short names compared on every element (a
/// `memcmp` call per comparison was a third of the parse time).
#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// The element of one entry of a document of `kind`.
fn entry_name(kind: Kind) -> &'static [u8] {
    match kind {
        Kind::UrlSet => b"url",
        Kind::Index => b"sitemap",
        Kind::Rss => b"item",
        Kind::Atom => b"entry",
        Kind::Text => b"",
    }
}

/// Appends `s` to `buf` unless that would make it longer than `cap` bytes
/// (the buffer never grows past its cap); false when it did not fit.
fn push_capped(buf: &mut String, s: &str, cap: usize) -> bool {
    if buf.len() + s.len() <= cap {
        buf.push_str(s);
        true
    } else {
        false
    }
}
