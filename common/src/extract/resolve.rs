//! From an attribute value to a canonical URL: the scheme and same-page
//! checks, the cap, then resolution against the page's base URL and the
//! canonical form of `crate::urlnorm`.
//!
//! Most links are plain: a path of letters, digits and the few punctuation
//! marks a canonical URL keeps as they are, perhaps a query of the same and
//! a fragment, relative to the page or absolute with an ordinary host name.
//! For those, the canonical URL is written directly (the base's origin and
//! directory, the dot segments removed as the URL standard removes them,
//! the fragment and an empty query dropped) and the `Url` is built from
//! that text and the offsets of its parts, not parsed (`assemble.rs`; on an
//! origin whose host is an IP address, its path and query are set on a URL
//! of the origin, and a link the parser would spell otherwise goes the
//! general way); every other link goes the general way
//! (`urlnorm::canonicalize_relative`), and both ways give the same URL. The
//! direct way saves the relative parse's copying of the base, the
//! canonical form's checks and the parse of the path: most of the cost of
//! a link.

use std::borrow::Cow;

use encoding_rs::Encoding;
use memchr::memrchr;

use super::tokenizer::find;
use url::{Position, Url};

use super::{LinkContext, PageLinks};
use crate::urlnorm::{self, UrlError};
use assemble::{Layout, assemble};

mod assemble;

/// The last steps for one link: scheme, same page, cap, then canonical form.
pub(super) fn classify_and_resolve(
    (href, context): (&str, LinkContext),
    resolver: &mut Resolver<'_>,
    base_is_page: bool,
    max: usize,
    out: &mut PageLinks,
) {
    let href = href.trim_matches(is_c0_or_space);
    let kind = scheme_kind(href);
    match kind {
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
    match resolver.canonical(href, kind) {
        Ok(url) => {
            out.links.push(url);
            out.contexts.push(context);
        }
        Err(UrlError::Scheme { .. }) => out.skipped.scheme += 1,
        Err(_) => out.skipped.invalid += 1,
    }
}

/// The characters the URL parser trims from both ends of its input.
pub(super) fn is_c0_or_space(c: char) -> bool {
    c <= ' '
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SchemeKind {
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
pub(super) fn scheme_kind(href: &str) -> SchemeKind {
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

/// Bytes a canonical path keeps as they are (RFC 3986 `pchar` and `/`),
/// but for `%` (an escape may need rewriting: see [`split_plain`]) and `;`
/// (a `;jsessionid=` parameter is removed): what the direct way takes in a
/// path.
const PLAIN_PATH: [bool; 256] = plain(b"-._~!$&'()*+,=:@/");
/// Bytes a canonical query keeps as they are, but for `%` and `'` (which
/// the URL parser escapes in a query).
const PLAIN_QUERY: [bool; 256] = plain(b"-._~!$&()*+,;=:@/?");

const fn plain(punctuation: &[u8]) -> [bool; 256] {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 128 {
        t[b] = (b as u8).is_ascii_alphanumeric();
        b += 1;
    }
    let mut i = 0;
    while i < punctuation.len() {
        t[punctuation[i] as usize] = true;
        i += 1;
    }
    t
}

fn all_plain(s: &str, table: &[bool; 256]) -> bool {
    s.bytes().all(|b| table[b as usize])
}

/// The base URL split for the direct way: present only when its links
/// can be written directly (an http(s) URL without user name or password,
/// whose host does not end with a dot and whose path is plain).
struct Plain<'a> {
    /// `scheme://host[:port]`.
    origin: &'a str,
    /// The path (`/` and on).
    path: &'a str,
    /// Where the parts of the origin end, when the host is a domain name
    /// (links are then built from their text: see [`assemble`]).
    layout: Option<Layout>,
}

impl<'a> Plain<'a> {
    fn of(base: &'a Url) -> Option<Plain<'a>> {
        let plain = matches!(base.scheme(), "http" | "https")
            && base.username().is_empty()
            && base.password().is_none()
            && base.host_str().is_some_and(|h| !h.ends_with('.'))
            && all_plain(base.path(), &PLAIN_PATH);
        plain.then(|| Plain {
            origin: &base[..Position::BeforePath],
            path: base.path(),
            layout: Layout::of(base),
        })
    }
}

/// Buffers of a [`Resolver`] kept from page to page.
#[derive(Debug, Default)]
pub(super) struct Scratch {
    /// The canonical URL being written (the direct way).
    url: String,
    /// Templates of links on the base's origin and on another origin
    /// (see [`Resolver::template`]).
    base_template: Option<Url>,
    other_template: Option<Url>,
}

impl Scratch {
    /// Frees what one huge page grew.
    pub(super) fn trim(&mut self, keep: usize) {
        if self.url.capacity() > keep {
            self.url = String::new();
        }
    }
}

/// Parses links the way the page's own browser would: the query in the
/// page's encoding when that is not UTF-8.
pub(super) struct Resolver<'a> {
    query_encoding: Option<&'static Encoding>,
    base: &'a Url,
    plain: Option<Plain<'a>>,
    scratch: &'a mut Scratch,
    direct: bool,
}

impl<'a> Resolver<'a> {
    /// Links of a page in `document_encoding` resolve against `base`.
    /// `direct`: whether plain links may go the direct way (see the
    /// module's documentation); without it, every link goes the general way.
    pub(super) fn new(
        document_encoding: &'static Encoding,
        base: &'a Url,
        scratch: &'a mut Scratch,
        direct: bool,
    ) -> Resolver<'a> {
        let query_encoding = document_encoding.output_encoding();
        Resolver {
            query_encoding: (query_encoding != encoding_rs::UTF_8).then_some(query_encoding),
            base,
            plain: Plain::of(base),
            scratch,
            direct,
        }
    }

    /// Resolves without canonicalizing (for `<base href>`).
    pub(super) fn parse(
        document_encoding: &'static Encoding,
        base: &Url,
        href: &str,
    ) -> Option<Url> {
        let query_encoding = document_encoding.output_encoding();
        if query_encoding == encoding_rs::UTF_8 {
            return base.join(href).ok();
        }
        let encode = query_encoder(move |s| encode_query(query_encoding, s));
        Url::options()
            .base_url(Some(base))
            .encoding_override(Some(&encode))
            .parse(href)
            .ok()
    }

    /// Resolves and canonicalizes a trimmed href of this `kind`.
    fn canonical(&mut self, href: &str, kind: SchemeKind) -> Result<Url, UrlError> {
        if self.direct
            && let Some(url) = self.direct(href, kind)
        {
            return Ok(url);
        }
        // An ASCII href is encoded the same in every encoding the parser
        // reads, so only non-ASCII ones need the page's encoding.
        match self.query_encoding {
            Some(enc) if !href.is_ascii() => {
                let encode = query_encoder(move |s| encode_query(enc, s));
                urlnorm::canonicalize_relative_encoded(self.base, href, Some(&encode))
            }
            _ => urlnorm::canonicalize_relative(self.base, href),
        }
    }

    /// The direct way: the canonical URL of a plain link, or `None` for the
    /// general way. The URL is written down, then built from that text (a
    /// repeated link is built again: that costs less than looking it up
    /// among the page's links).
    fn direct(&mut self, href: &str, kind: SchemeKind) -> Option<Url> {
        let (path, query) = split_plain(href)?;
        let (path_start, layout) = write_plain(
            &mut self.scratch.url,
            self.plain.as_ref(),
            path,
            query,
            kind,
        )?;
        let text = self.scratch.url.as_str();
        let query_start = query.map(|q| text.len() - q.len() - 1);
        match layout {
            Some(layout) => assemble(text.to_owned(), layout, query_start),
            None => self.set_on_template(path_start, query_start),
        }
    }

    /// The URL written in the scratch buffer, made from a URL of its origin
    /// ([`with_path_and_query`]), for origins whose host is not a domain
    /// name.
    fn set_on_template(&mut self, path_start: usize, query_start: Option<usize>) -> Option<Url> {
        let url = self.template(path_start)?.clone();
        with_path_and_query(url, &self.scratch.url, path_start, query_start)
    }

    /// A URL of the origin `scratch.url[..path_start]` with a long path
    /// (see [`roomy`]): one for the base's origin and one for the last
    /// other origin asked for, both kept from page to page (the pages of a
    /// site come one after another).
    fn template(&mut self, path_start: usize) -> Option<&Url> {
        let origin = &self.scratch.url[..path_start];
        let base = self.plain.as_ref().is_some_and(|p| p.origin == origin);
        let slot = if base {
            &mut self.scratch.base_template
        } else {
            &mut self.scratch.other_template
        };
        if slot
            .as_ref()
            .is_none_or(|u| &u[..Position::BeforePath] != origin)
        {
            let url = if base {
                self.base.clone()
            } else {
                Url::parse(origin).ok()?
            };
            *slot = Some(roomy(url));
        }
        slot.as_ref()
    }
}

/// Writes the canonical URL of a plain link (its `path` and `query`, of
/// this `kind`, relative to `base` unless absolute) into `buf`; returns
/// where its path starts and the layout of its origin when its host is a
/// domain name. `None` when the direct way does not take it.
fn write_plain(
    buf: &mut String,
    base: Option<&Plain<'_>>,
    path: &str,
    query: Option<&str>,
    kind: SchemeKind,
) -> Option<(usize, Option<Layout>)> {
    buf.clear();
    let (start, layout) = match kind {
        SchemeKind::Http => {
            let (rest, layout) = origin(path, buf)?;
            let start = buf.len();
            push_segments(buf, start, rest.strip_prefix('/').unwrap_or(rest));
            (start, layout)
        }
        _ if path.starts_with("//") || path.is_empty() && query.is_none() => return None,
        _ => {
            let base = base?;
            buf.push_str(base.origin);
            let start = buf.len();
            if let Some(absolute) = path.strip_prefix('/') {
                push_segments(buf, start, absolute);
            } else if path.is_empty() {
                // `?query`: the base's path.
                buf.push_str(base.path);
            } else {
                // The base's directory, then the relative path.
                let dir = memrchr(b'/', base.path.as_bytes()).map_or("", |i| &base.path[..i]);
                buf.push_str(dir);
                push_segments(buf, start, path);
            }
            (start, base.layout)
        }
    };
    if let Some(query) = query {
        buf.push('?');
        buf.push_str(query);
    }
    Some((start, layout))
}

/// `text`, a canonical URL of `url`'s origin whose path starts at
/// `path_start` and whose query follows the `?` at `query_start`, made
/// from `url` by setting its path and query (which parses them again, not
/// the scheme and host); `None` if the parser writes it otherwise.
pub fn with_path_and_query(
    mut url: Url,
    text: &str,
    path_start: usize,
    query_start: Option<usize>,
) -> Option<Url> {
    let path_end = query_start.unwrap_or(text.len());
    url.set_path(text.get(path_start..path_end)?);
    url.set_query(query_start.and_then(|q| text.get(q + 1..)));
    (url.as_str() == text).then_some(url)
}

/// A canonical absolute URL read back from its text (a link a metadata
/// record lists, written by this module), built from its parts the way the
/// direct way builds a link, without parsing it again: `None` when `text`
/// is not one the direct way would write exactly so (not http(s), not
/// plain, a host that is not a domain name, a fragment, an empty query, a
/// dot segment...), for the caller to parse. `buf` is scratch space.
pub fn read_canonical(text: &str, buf: &mut String) -> Option<Url> {
    if scheme_kind(text) != SchemeKind::Http {
        return None;
    }
    let (path, query) = split_plain(text)?;
    let (_, layout) = write_plain(buf, None, path, query, SchemeKind::Http)?;
    if buf.as_str() != text {
        return None;
    }
    let query_start = query.map(|q| text.len() - q.len() - 1);
    assemble(text.to_owned(), layout?, query_start)
}

/// How long a template's text is: room for most links.
const ROOM: usize = 128;

/// `url` with a path that makes it [`ROOM`] bytes long, and no query or
/// fragment.
fn roomy(mut url: Url) -> Url {
    url.set_query(None);
    url.set_fragment(None);
    let origin = url[..Position::BeforePath].len();
    let mut path = String::with_capacity(ROOM);
    path.push('/');
    while origin + path.len() < ROOM {
        path.push('x');
    }
    url.set_path(&path);
    url
}

/// A plain href's path and non-empty query (its fragment left out), or
/// `None` if it is not plain: a byte outside the plain sets before the
/// fragment, a percent escape the canonical form writes otherwise (one of
/// an unreserved character, which it decodes, or in lower case), or a
/// session-id parameter in the query. The other escapes stay as they are
/// (the URL parser leaves every `%` alone), so that links such as the Rust
/// documentation's playground links, hundreds of escapes long, need no
/// parse.
fn split_plain(href: &str) -> Option<(&str, Option<&str>)> {
    let bytes = href.as_bytes();
    let mut query_at = None;
    let mut end = bytes.len();
    let mut table = &PLAIN_PATH;
    for (i, &b) in bytes.iter().enumerate() {
        if table[b as usize] {
            continue;
        }
        match b {
            b'#' => {
                end = i;
                break;
            }
            b'?' if query_at.is_none() => {
                query_at = Some(i);
                table = &PLAIN_QUERY;
            }
            // Its two hex digits are plain and pass in turn.
            b'%' if !urlnorm::escape_needs_fix(bytes, i) => {}
            _ => return None,
        }
    }
    let Some(q) = query_at else {
        return Some((&href[..end], None));
    };
    let query = &href[q + 1..end];
    if query
        .split('&')
        .any(|param| urlnorm::param_is_session(param.as_bytes()))
    {
        return None;
    }
    Some((&href[..q], Some(query).filter(|q| !q.is_empty())))
}

/// Writes the origin of an absolute plain href (`http://host[:port]`, the
/// scheme in lower case, an ordinary host name, the default port left out)
/// into `buf`; returns the rest of `href` (its path) and the origin's layout.
fn origin<'h>(href: &'h str, buf: &mut String) -> Option<(&'h str, Option<Layout>)> {
    let (scheme, rest, default_port) = if let Some(rest) = href.strip_prefix("http://") {
        ("http://", rest, "80")
    } else {
        ("https://", href.strip_prefix("https://")?, "443")
    };
    let end = find(b'/', rest.as_bytes()).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    let (host, port) = match find(b':', authority.as_bytes()) {
        Some(i) => (&authority[..i], Some(&authority[i + 1..])),
        None => (authority, None),
    };
    if !ordinary_host(host) {
        return None;
    }
    buf.push_str(scheme);
    buf.push_str(host);
    let host_end = buf.len();
    let mut number = None;
    if let Some(port) = port {
        let digits = !port.is_empty()
            && port.len() <= 5
            && !port.starts_with('0')
            && port.bytes().all(|b| b.is_ascii_digit());
        if !digits {
            return None;
        }
        let n = u16::try_from(port.parse::<u32>().ok()?).ok()?;
        if port != default_port {
            buf.push(':');
            buf.push_str(port);
            number = Some(n);
        }
    }
    let layout = Layout::new(scheme.len() - 3, host_end, number, buf.len());
    Some((path, layout))
}

/// Letters, digits and `-` in dot-separated labels, the last one starting
/// with a letter (so that the host is no IPv4 address), and no punycode
/// label (which the parser would check and perhaps rewrite).
fn ordinary_host(host: &str) -> bool {
    let mut label_start = true;
    let mut last_label_letter = false;
    for (i, b) in host.bytes().enumerate() {
        match b {
            b'.' if !label_start => label_start = true,
            b'a'..=b'z' | b'0'..=b'9' | b'-' => {
                if label_start {
                    if host[i..].starts_with("xn--") {
                        return false;
                    }
                    last_label_letter = b.is_ascii_lowercase();
                }
                label_start = false;
            }
            _ => return false,
        }
    }
    !label_start && last_label_letter
}

/// Appends the segments of `path` (after its leading `/`, if any) to the
/// path being written in `buf` from `start`, as the URL standard's path
/// state does: `.` is dropped, `..` drops the segment before (never the
/// origin), and either one last leaves a trailing `/`.
fn push_segments(buf: &mut String, start: usize, path: &str) {
    let mut rest = path;
    loop {
        let (segment, last) = match find(b'/', rest.as_bytes()) {
            Some(i) => (&rest[..i], false),
            None => (rest, true),
        };
        match segment {
            ".." => {
                if let Some(i) = memrchr(b'/', &buf.as_bytes()[start..]) {
                    buf.truncate(start + i);
                }
                if last {
                    buf.push('/');
                }
            }
            "." => {
                if last {
                    buf.push('/');
                }
            }
            _ => {
                buf.push('/');
                buf.push_str(segment);
            }
        }
        if last {
            return;
        }
        rest = &rest[segment.len() + 1..];
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

#[cfg(test)]
mod tests;
