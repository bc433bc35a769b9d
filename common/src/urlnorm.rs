//! The canonical form of a URL: one spelling per resource, used both as the
//! dedup key and as the URL that is fetched.
//!
//! Rules (each covered by the table test):
//! lower-case scheme and host; IDNA hosts in punycode; no trailing dot in the
//! host; default port dropped; fragment dropped; dot segments resolved
//! (`%2E` spellings of dots included); percent-encoding normalized in the path
//! and the query (unreserved characters decoded, hex digits upper case, unsafe
//! characters escaped, a `%` that starts no escape written `%25`; escapes of
//! reserved characters such as `%2F`, `%3F`, `%26`, `%3D` stay escaped because
//! decoding them would change the meaning); empty path becomes `/`;
//! session-id parameters removed (query parameters named `jsessionid`,
//! `phpsessid`, `sid`, `aspsessionid…`, `cfid`, `cftoken` in any case, and the
//! `;jsessionid=` path parameter); tracking parameters removed (`utm_…` and
//! the [`TRACKING_PARAMS`], in any case); a `?` with nothing after it dropped.
//! A host's rules may add to this ([`HostCanon`]: more parameters dropped,
//! the query sorted, the path in lower case).
//! Only `http` and `https`; a URL with an empty authority (`http:///path`)
//! is refused rather than guessed at.
//!
//! The function is applied to every extracted link, so it is written for the
//! common case: the URL is parsed once, scanned once, and returned as parsed
//! when it is already canonical (no further allocation). Only URLs that need
//! a percent-encoding, host or session-id fix are rebuilt and parsed again.
//! Canonicalizing is idempotent: `canonicalize(c.as_str()) == c`.
//!
//! ```
//! use common::urlnorm::{canonicalize, registrable_domain};
//! let url = canonicalize("HTTP://WWW.Example.CO.UK.:80/a/%7Ebob/../b;jsessionid=12?sid=9#top").unwrap();
//! assert_eq!(url.as_str(), "http://www.example.co.uk/a/b");
//! assert_eq!(registrable_domain(url.host_str().unwrap()), "example.co.uk");
//! ```

use std::net::Ipv4Addr;

use url::{Position, Url};

/// Why a string is not a crawlable URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    /// Not parseable as a URL.
    #[error("{}: not a valid URL ({reason})", crate::human::clipped(.url))]
    Invalid {
        /// The input, as given.
        url: String,
        /// The parser's reason.
        reason: String,
    },
    /// A scheme other than http or https.
    #[error("{}: scheme `{scheme}` is not crawled (only http and https)", crate::human::clipped(.url))]
    Scheme {
        /// The input, as given.
        url: String,
        /// The scheme found.
        scheme: String,
    },
    /// No host (e.g. `http:///path`).
    #[error("{}: no host", crate::human::clipped(.url))]
    NoHost {
        /// The input, as given.
        url: String,
    },
}

/// Canonicalizes an absolute URL.
pub fn canonicalize(input: &str) -> Result<Url, UrlError> {
    check_authority(input)?;
    let url = Url::parse(input).map_err(|e| parse_error(input, e))?;
    finish(url, || input.to_string())
}

/// Resolves `href` against `base` (a page or `<base href>`) and canonicalizes it.
pub fn canonicalize_relative(base: &Url, href: &str) -> Result<Url, UrlError> {
    canonicalize_relative_encoded(base, href, None)
}

/// [`canonicalize_relative`] for a link on a page that is not in UTF-8: as
/// the URL standard says, the query of `href` is percent-encoded from the
/// bytes `encoding_override` turns it into (the page's encoding), while the
/// path is UTF-8 as always. `None` is plain [`canonicalize_relative`].
///
/// ```
/// use std::borrow::Cow;
/// use common::urlnorm::canonicalize_relative_encoded;
/// // ISO-8859-1 for the characters it has (enough for this example). A `fn`
/// // has the signature the parser wants; a closure needs it spelled out.
/// fn latin1(s: &str) -> Cow<'_, [u8]> {
///     s.chars().map(|c| c as u8).collect()
/// }
/// let page = url::Url::parse("http://example.com/dir/page.html").unwrap();
/// let url = canonicalize_relative_encoded(&page, "café?q=café", Some(&latin1)).unwrap();
/// assert_eq!(url.as_str(), "http://example.com/dir/caf%C3%A9?q=caf%E9");
/// ```
pub fn canonicalize_relative_encoded(
    base: &Url,
    href: &str,
    encoding_override: url::EncodingOverride<'_>,
) -> Result<Url, UrlError> {
    check_authority(href)?;
    let url = Url::options()
        .base_url(Some(base))
        .encoding_override(encoding_override)
        .parse(href)
        .map_err(|e| parse_error(href, e))?;
    finish(url, || href.to_string())
}

/// Canonicalizes an already parsed URL.
pub fn canonicalize_url(url: Url) -> Result<Url, UrlError> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(UrlError::Scheme {
            url: url.as_str().to_string(),
            scheme: url.scheme().to_string(),
        });
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(UrlError::NoHost {
            url: url.as_str().to_string(),
        });
    }
    // The original spelling is only needed for errors, which only a rewrite
    // can produce; keep the common case free of the copy.
    let original = if needs_rewrite(&url) {
        url.as_str().to_string()
    } else {
        String::new()
    };
    finish(url, move || original.clone())
}

/// Refuses `http:///path` (an empty authority), which the WHATWG parser would
/// silently read as `http://path/`. Reads the input as that parser does:
/// leading spaces and control characters skipped, tabs and newlines ignored
/// wherever they are (`http:/⏎//path` is `http:///path` too). Only looks at
/// the first bytes.
fn check_authority(input: &str) -> Result<(), UrlError> {
    let s = input.as_bytes();
    let start = s.iter().position(|&b| b > b' ').unwrap_or(s.len());
    let mut bytes = s[start..]
        .iter()
        .copied()
        .filter(|&b| !matches!(b, b'\t' | b'\n' | b'\r'));
    let mut scheme = [0u8; 6];
    let mut len = 0;
    loop {
        match bytes.next() {
            Some(b':') if len >= 4 => break,
            Some(b) if len < 5 => {
                scheme[len] = b.to_ascii_lowercase();
                len += 1;
            }
            _ => return Ok(()),
        }
    }
    if !matches!(&scheme[..len], b"http" | b"https") {
        return Ok(());
    }
    let slashes = bytes.take_while(|&b| b == b'/' || b == b'\\').count();
    if slashes >= 3 {
        return Err(UrlError::NoHost {
            url: input.to_string(),
        });
    }
    Ok(())
}

fn parse_error(input: &str, e: url::ParseError) -> UrlError {
    match e {
        url::ParseError::EmptyHost => UrlError::NoHost {
            url: input.to_string(),
        },
        url::ParseError::RelativeUrlWithoutBase => UrlError::Invalid {
            url: input.to_string(),
            reason: "relative URL without a base".to_string(),
        },
        other => UrlError::Invalid {
            url: input.to_string(),
            reason: other.to_string(),
        },
    }
}

/// Applies the rules the parser does not: scheme check, then the rewrite (if
/// any is needed), then fragment and empty query.
fn finish(mut url: Url, original: impl Fn() -> String) -> Result<Url, UrlError> {
    match url.scheme() {
        "http" | "https" => {}
        other => {
            let scheme = other.to_string();
            return Err(UrlError::Scheme {
                url: original(),
                scheme,
            });
        }
    }
    // A rewrite and a new parse can, in rare cases, expose something the
    // next round fixes (removing `;jsessionid=x` from `..;jsessionid=x`
    // leaves a dot segment). Two rounds always settle; the bound is a guard.
    for _ in 0..4 {
        if url
            .host_str()
            .is_none_or(|h| h.trim_end_matches('.').is_empty())
        {
            return Err(UrlError::NoHost { url: original() });
        }
        if !needs_rewrite(&url) {
            if url.fragment().is_some() {
                url.set_fragment(None);
            }
            if url.query() == Some("") {
                url.set_query(None);
            }
            return Ok(url);
        }
        let rebuilt = rewrite(&url);
        url = Url::parse(&rebuilt).map_err(|e| UrlError::Invalid {
            url: original(),
            reason: format!("canonical form `{rebuilt}` does not parse: {e}"),
        })?;
    }
    Err(UrlError::Invalid {
        url: original(),
        reason: "no stable canonical form".to_string(),
    })
}

/// Byte classes used by the scan and the rewrite.
const OK: u8 = 0; // kept as is
const ESCAPE: u8 = 1; // must be percent-encoded
const PERCENT: u8 = 2; // `%`
const SPECIAL: u8 = 3; // `;` in the path, `&` in the query: look closer

/// Bytes allowed raw in a path (RFC 3986 pchar plus `/`): unreserved,
/// sub-delims, `:` and `@`. Everything else is escaped.
const PATH_CLASS: [u8; 256] = byte_classes(b";", b"");
/// Bytes allowed raw in a query: pchar plus `/` and `?`.
const QUERY_CLASS: [u8; 256] = byte_classes(b"&", b"?");

const fn byte_classes(special: &[u8], extra_ok: &[u8]) -> [u8; 256] {
    let mut t = [ESCAPE; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        if c.is_ascii_alphanumeric() {
            t[b] = OK;
        }
        b += 1;
    }
    let ok: &[u8] = b"-._~!$&'()*+,;=:@/";
    let mut i = 0;
    while i < ok.len() {
        t[ok[i] as usize] = OK;
        i += 1;
    }
    let mut i = 0;
    while i < extra_ok.len() {
        t[extra_ok[i] as usize] = OK;
        i += 1;
    }
    let mut i = 0;
    while i < special.len() {
        t[special[i] as usize] = SPECIAL;
        i += 1;
    }
    t[b'%' as usize] = PERCENT;
    t
}

/// RFC 3986 unreserved characters (letters, digits, `-`, `.`, `_`, `~`):
/// written literally in a canonical URL, never percent-encoded.
pub fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'A'..=b'F' => Some(b - b'A' + 10),
        b'a'..=b'f' => Some(b - b'a' + 10),
        _ => None,
    }
}

/// The byte a percent escape at `bytes[i]` (a `%`) stands for, if two hex
/// digits follow.
pub fn escape_at(bytes: &[u8], i: usize) -> Option<u8> {
    let hi = hex_value(*bytes.get(i + 1)?)?;
    let lo = hex_value(*bytes.get(i + 2)?)?;
    Some(hi << 4 | lo)
}

/// True if the escape at `bytes[i]` (a `%`) would be written differently
/// by the canonical form (which writes two hex digits in upper case, of a
/// byte that is not an unreserved character).
pub(crate) fn escape_needs_fix(bytes: &[u8], i: usize) -> bool {
    match escape_at(bytes, i) {
        None => true,
        Some(v) => {
            is_unreserved(v)
                || bytes[i + 1].is_ascii_lowercase()
                || bytes[i + 2].is_ascii_lowercase()
        }
    }
}

/// Query parameter names that carry a session id (compared without case).
const SESSION_PARAMS: [&str; 5] = ["jsessionid", "phpsessid", "sid", "cfid", "cftoken"];

/// Query parameters that only say where a visitor came from (compared
/// without case), besides every name that starts with `utm_`: the
/// click identifiers of advertising networks and the campaign tags of
/// mail and analytics tools. None of them changes what a server answers.
pub const TRACKING_PARAMS: [&str; 20] = [
    "fbclid",
    "gclid",
    "gclsrc",
    "dclid",
    "gbraid",
    "wbraid",
    "msclkid",
    "yclid",
    "twclid",
    "ttclid",
    "li_fat_id",
    "igshid",
    "mc_cid",
    "mc_eid",
    "_hsenc",
    "_hsmi",
    "mkt_tok",
    "_ga",
    "_gl",
    "srsltid",
];

/// True if a query parameter of this name is dropped from every canonical
/// URL: a session id or a tracking parameter (compared without case).
fn is_dropped_name(name: &[u8]) -> bool {
    let is = |list: &[&str]| list.iter().any(|n| name.eq_ignore_ascii_case(n.as_bytes()));
    is(&SESSION_PARAMS)
        || is(&TRACKING_PARAMS)
        || (name.len() >= 12 && name[..12].eq_ignore_ascii_case(b"aspsessionid"))
        || (name.len() > 4 && name[..4].eq_ignore_ascii_case(b"utm_"))
}

/// True if `path[i..]` (just after a `;`) starts the `jsessionid=` parameter.
fn is_jsessionid_param(rest: &[u8]) -> bool {
    rest.len() >= 11 && rest[..11].eq_ignore_ascii_case(b"jsessionid=")
}

/// True if the URL differs from its canonical form in more than its fragment
/// or an empty query (those two are fixed in place).
fn needs_rewrite(url: &Url) -> bool {
    if url.host_str().is_some_and(|h| h.ends_with('.')) {
        return true;
    }
    let path = url.path().as_bytes();
    for (i, &b) in path.iter().enumerate() {
        match PATH_CLASS[b as usize] {
            OK => {}
            PERCENT => {
                if escape_needs_fix(path, i) {
                    return true;
                }
            }
            SPECIAL => {
                if is_jsessionid_param(&path[i + 1..]) {
                    return true;
                }
            }
            _ => return true,
        }
    }
    let Some(query) = url.query() else {
        return false;
    };
    let query = query.as_bytes();
    let mut param_start = 0;
    for (i, &b) in query.iter().enumerate() {
        match QUERY_CLASS[b as usize] {
            OK => {}
            PERCENT => {
                if escape_needs_fix(query, i) {
                    return true;
                }
            }
            SPECIAL => {
                if param_is_session(&query[param_start..i]) {
                    return true;
                }
                param_start = i + 1;
            }
            _ => return true,
        }
    }
    param_is_session(&query[param_start..])
}

/// True if the canonical form drops this query parameter (`name=value` or
/// `name`): a session id or a tracking parameter ([`TRACKING_PARAMS`]).
pub(crate) fn param_is_session(param: &[u8]) -> bool {
    is_dropped_name(param_name(param))
}

/// The name of a query parameter (`name=value` or `name`).
fn param_name(param: &[u8]) -> &[u8] {
    match param.iter().position(|&b| b == b'=') {
        Some(n) => &param[..n],
        None => param,
    }
}

/// Appends `part` with its percent-encoding normalized: unreserved escapes
/// decoded, other escapes upper case, a lone `%` and every byte outside the
/// allowed set escaped.
fn push_normalized(out: &mut String, part: &str, class: &[u8; 256]) {
    let bytes = part.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match class[b as usize] {
            OK | SPECIAL => {
                out.push(b as char);
                i += 1;
            }
            PERCENT => match escape_at(bytes, i) {
                Some(v) if is_unreserved(v) => {
                    out.push(v as char);
                    i += 3;
                }
                Some(v) => {
                    push_escape(out, v);
                    i += 3;
                }
                None => {
                    out.push_str("%25");
                    i += 1;
                }
            },
            _ => {
                push_escape(out, b);
                i += 1;
            }
        }
    }
}

/// Appends `v` percent-encoded, hex in upper case (`%2F`).
pub fn push_escape(out: &mut String, v: u8) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    out.push('%');
    out.push(HEX[(v >> 4) as usize] as char);
    out.push(HEX[(v & 15) as usize] as char);
}

/// Builds the canonical spelling of `url` (without fragment); the caller
/// parses it again, which resolves any dot segment the rewrite exposed.
fn rewrite(url: &Url) -> String {
    let full = url.as_str();
    let mut out = String::with_capacity(full.len() + 8);
    let host = url.host_str().unwrap_or("");
    out.push_str(&url[..Position::BeforeHost]);
    out.push_str(host.trim_end_matches('.'));
    out.push_str(&url[Position::AfterHost..Position::BeforePath]);

    // Path: normalize first, then drop `;jsessionid=...` (so an escaped
    // spelling of the name is caught too; `%3B` stays escaped and is data).
    let mut path = String::with_capacity(url.path().len());
    push_normalized(&mut path, url.path(), &PATH_CLASS);
    let path_start = out.len();
    let pb = path.as_bytes();
    let mut i = 0;
    while i < pb.len() {
        if pb[i] == b';' && is_jsessionid_param(&pb[i + 1..]) {
            i += 1;
            while i < pb.len() && pb[i] != b'/' && pb[i] != b';' {
                i += 1;
            }
            continue;
        }
        out.push(pb[i] as char);
        i += 1;
    }
    if out.len() == path_start {
        out.push('/');
    }

    // Query: normalize each parameter, then drop it if its (normalized)
    // name is a session id.
    if let Some(query) = url.query() {
        let query_start = out.len();
        out.push('?');
        let mut first = true;
        for param in query.split('&') {
            let before = out.len();
            if !first {
                out.push('&');
            }
            let start = out.len();
            push_normalized(&mut out, param, &QUERY_CLASS);
            if param_is_session(&out.as_bytes()[start..]) {
                out.truncate(before);
            } else {
                first = false;
            }
        }
        if out.len() == query_start + 1 {
            out.truncate(query_start);
        }
    }
    out
}

/// The host of a canonical URL (lower case, punycode, no port): the first
/// field of a segment line.
pub fn host_of(url: &Url) -> &str {
    url.host_str().unwrap_or("")
}

/// The registrable domain of a host through the public suffix list
/// (`a.b.example.co.uk` → `example.co.uk`). IP addresses, and hosts that are
/// themselves a public suffix, are returned unchanged.
///
/// `host` is expected in canonical form (lower case, punycode). A trailing
/// dot is ignored and never part of the result (`example.com.` →
/// `example.com`). Single-label hosts (`localhost`) are returned as they are.
pub fn registrable_domain(host: &str) -> &str {
    let name = host.trim_end_matches('.');
    if name.is_empty() || name.starts_with('[') {
        return name;
    }
    // A canonical host whose last label is numeric can only be an IPv4
    // address (the URL parser turns such names into addresses or refuses them).
    if name.as_bytes()[name.len() - 1].is_ascii_digit() && name.parse::<Ipv4Addr>().is_ok() {
        return name;
    }
    match psl::domain(name.as_bytes()) {
        Some(d) => &name[name.len() - d.as_bytes().len()..],
        None => name,
    }
}

/// What a host's rules add to the canonical form of its URLs (keys
/// `drop_params`, `sort_query` and `lowercase_path` of
/// [`crate::rules`]), applied to a URL already canonical: the result is
/// canonical too, and applying it again changes nothing.
///
/// ```
/// use common::urlnorm::{HostCanon, canonicalize};
/// let canon = HostCanon {
///     drop_params: vec!["ref".into(), "lang_*".into()],
///     sort_query: true,
///     lowercase_path: true,
/// };
/// let url = canonicalize("http://shop.example/Item/A%2Fb?z=1&ref=nav&lang_x=de&a=2").unwrap();
/// assert_eq!(canon.apply(url).as_str(), "http://shop.example/item/a%2Fb?a=2&z=1");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostCanon {
    /// Query parameters dropped, by name without case; a name ending in
    /// `*` drops every parameter whose name starts with what precedes it.
    pub drop_params: Vec<String>,
    /// The query's parameters sorted (byte order of `name=value`), so that
    /// their order does not make two URLs.
    pub sort_query: bool,
    /// The path's letters in lower case (escapes keep their upper-case
    /// hex digits): for servers that ignore the case of paths.
    pub lowercase_path: bool,
}

impl HostCanon {
    /// True if it changes nothing.
    pub fn is_identity(&self) -> bool {
        self.drop_params.is_empty() && !self.sort_query && !self.lowercase_path
    }

    /// The URL (canonical) with these rules applied.
    pub fn apply(&self, mut url: Url) -> Url {
        if self.is_identity() {
            return url;
        }
        if self.lowercase_path && url.path().bytes().any(|b| b.is_ascii_uppercase()) {
            let path = lowercase_outside_escapes(url.path());
            url.set_path(&path);
        }
        if let Some(query) = url.query() {
            let mut params: Vec<&str> = query
                .split('&')
                .filter(|p| !self.drops(param_name(p.as_bytes())))
                .collect();
            if self.sort_query {
                params.sort_unstable();
            }
            let joined = params.join("&");
            if joined != query {
                url.set_query((!joined.is_empty()).then_some(joined.as_str()));
            }
        }
        url
    }

    /// True if a parameter of this name is dropped.
    fn drops(&self, name: &[u8]) -> bool {
        self.drop_params.iter().any(|d| match d.strip_suffix('*') {
            Some(prefix) => {
                name.len() >= prefix.len()
                    && name[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
            }
            None => name.eq_ignore_ascii_case(d.as_bytes()),
        })
    }
}

/// `path` with its ASCII letters in lower case, but the hex digits of its
/// percent escapes (`%2F` stays `%2F`).
fn lowercase_outside_escapes(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut out = String::with_capacity(path.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && escape_at(bytes, i).is_some() {
            out.push_str(&path[i..i + 3]);
            i += 3;
        } else {
            out.push(bytes[i].to_ascii_lowercase() as char);
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::Rng;

    /// `(input, canonical form)`: every rule of the module doc, each with
    /// the spellings that must reach it.
    const TABLE: &[(&str, &str)] = &[
        // scheme and host case, default ports, empty path
        (
            "HTTP://Example.COM:80/a/./b/../c?#x",
            "http://example.com/a/c",
        ),
        ("http://example.com", "http://example.com/"),
        ("HtTpS://EXAMPLE.com:443/", "https://example.com/"),
        ("http://example.com:443/", "http://example.com:443/"),
        ("https://example.com:80/", "https://example.com:80/"),
        ("http://example.com:8080/x", "http://example.com:8080/x"),
        ("http://example.com:/", "http://example.com/"),
        ("http://example.com:0080/", "http://example.com/"),
        (
            "http://user:pass@Example.com/",
            "http://user:pass@example.com/",
        ),
        // trailing dot
        ("http://example.com./", "http://example.com/"),
        (
            "http://WWW.Example.com.:8080/a",
            "http://www.example.com:8080/a",
        ),
        ("http://example.com.?q=1", "http://example.com/?q=1"),
        // IDNA
        ("http://bücher.de/", "http://xn--bcher-kva.de/"),
        ("http://BÜCHER.DE/", "http://xn--bcher-kva.de/"),
        ("http://xn--bcher-kva.de/", "http://xn--bcher-kva.de/"),
        ("http://例え.テスト/", "http://xn--r8jz45g.xn--zckzah/"),
        ("http://%65xample.com/", "http://example.com/"),
        // IP addresses
        ("http://[0:0:0:0:0:0:0:1]:80/", "http://[::1]/"),
        ("http://127.0.0.1./x", "http://127.0.0.1/x"),
        ("http://0x7f.0.0.1/", "http://127.0.0.1/"),
        // fragment
        ("http://example.com/a#frag", "http://example.com/a"),
        ("http://example.com/#", "http://example.com/"),
        ("http://example.com/a?b=1#frag", "http://example.com/a?b=1"),
        ("http://example.com/a#b?c=1", "http://example.com/a"),
        // dot segments, percent-encoded dots included
        ("http://example.com/a/../../b", "http://example.com/b"),
        ("http://example.com/a/%2E%2E/b", "http://example.com/b"),
        ("http://example.com/a/%2e/b", "http://example.com/a/b"),
        ("http://example.com/a/b/.%2E/c", "http://example.com/a/c"),
        ("http://example.com/./a/", "http://example.com/a/"),
        ("http://example.com/a/b/..", "http://example.com/a/"),
        ("http://example.com/a\\b\\..\\c", "http://example.com/a/c"),
        // unreserved escapes decoded, hex upper case
        ("http://example.com/%7Euser/", "http://example.com/~user/"),
        ("http://example.com/%41%42%43", "http://example.com/ABC"),
        (
            "http://example.com/a%2db%5Fc%2E",
            "http://example.com/a-b_c.",
        ),
        ("http://example.com/a%7e%2D", "http://example.com/a~-"),
        ("http://example.com/?q=%7e%61", "http://example.com/?q=~a"),
        ("http://example.com/%c3%a4", "http://example.com/%C3%A4"),
        // reserved escapes stay escaped (their meaning would change)
        ("http://example.com/a%2fb", "http://example.com/a%2Fb"),
        (
            "http://example.com/a%3fb%23c",
            "http://example.com/a%3Fb%23c",
        ),
        (
            "http://example.com/?q=a%26b%3dc",
            "http://example.com/?q=a%26b%3Dc",
        ),
        ("http://example.com/%252F", "http://example.com/%252F"),
        (
            "http://example.com/a%3Bjsessionid=1",
            "http://example.com/a%3Bjsessionid=1",
        ),
        // unsafe characters escaped
        ("http://example.com/a b", "http://example.com/a%20b"),
        ("http://example.com/ä", "http://example.com/%C3%A4"),
        ("http://example.com/a|b^c", "http://example.com/a%7Cb%5Ec"),
        ("http://example.com/a[1]", "http://example.com/a%5B1%5D"),
        (
            "http://example.com/<a>\"`",
            "http://example.com/%3Ca%3E%22%60",
        ),
        ("http://example.com/?q={x}", "http://example.com/?q=%7Bx%7D"),
        (
            "http://example.com/?q=a|b^c",
            "http://example.com/?q=a%7Cb%5Ec",
        ),
        (
            "http://example.com/?q=\"x y\"",
            "http://example.com/?q=%22x%20y%22",
        ),
        ("http://example.com/?q=a\\b", "http://example.com/?q=a%5Cb"),
        (
            "https://example.com/?q=it's",
            "https://example.com/?q=it%27s",
        ),
        ("http://example.com/100%", "http://example.com/100%25"),
        ("http://example.com/%zz%4", "http://example.com/%25zz%254"),
        ("http://example.com/?q=%", "http://example.com/?q=%25"),
        // sub-delims, `:` `@` `/` `?` stay as they are
        (
            "http://example.com/a:b@c!$&'()*+,;=",
            "http://example.com/a:b@c!$&'()*+,;=",
        ),
        (
            "http://example.com/a?b=c?d/e:f@g",
            "http://example.com/a?b=c?d/e:f@g",
        ),
        // empty query dropped, empty parameters kept
        ("http://example.com/?", "http://example.com/"),
        ("http://example.com/a?#", "http://example.com/a"),
        (
            "http://example.com/?a=1&&b=2",
            "http://example.com/?a=1&&b=2",
        ),
        // session-id query parameters
        ("http://example.com/?jsessionid=ABC", "http://example.com/"),
        (
            "http://example.com/?a=1&JSESSIONID=ABC&b=2",
            "http://example.com/?a=1&b=2",
        ),
        (
            "http://example.com/?PHPSESSID=x&a=1",
            "http://example.com/?a=1",
        ),
        ("http://example.com/?a=1&sid=77", "http://example.com/?a=1"),
        ("http://example.com/?SID=77", "http://example.com/"),
        (
            "http://example.com/?ASPSESSIONIDQQGGGNCG=LKJ&x=1",
            "http://example.com/?x=1",
        ),
        ("http://example.com/?aspsessionid=1", "http://example.com/"),
        (
            "http://example.com/?CFID=1&CFTOKEN=2&page=3",
            "http://example.com/?page=3",
        ),
        ("http://example.com/?sid", "http://example.com/"),
        (
            "http://example.com/?%73id=1&a=%7E",
            "http://example.com/?a=~",
        ),
        (
            "http://example.com/a?q=1&sid=2#f",
            "http://example.com/a?q=1",
        ),
        (
            "http://example.com/?sidebar=1&xsid=2&session=3",
            "http://example.com/?sidebar=1&xsid=2&session=3",
        ),
        // tracking parameters, in any case; names that only look alike stay
        (
            "http://example.com/a?utm_source=news&x=1&UTM_Medium=mail",
            "http://example.com/a?x=1",
        ),
        (
            "http://example.com/?fbclid=IwAR0&gclid=Cj0&msclkid=9",
            "http://example.com/",
        ),
        (
            "http://example.com/?p=2&mc_cid=a1&mc_eid=b2&_hsenc=x&_ga=2.1",
            "http://example.com/?p=2",
        ),
        (
            "http://example.com/?utm=1&utm_=2&xutm_source=3&gclid2=4&utm_id=5",
            "http://example.com/?utm=1&utm_=2&xutm_source=3&gclid2=4",
        ),
        (
            "http://example.com/?%75tm_source=x&q=%7E",
            "http://example.com/?q=~",
        ),
        // the `;jsessionid=` path parameter
        (
            "http://example.com/a;jsessionid=0A1B2C",
            "http://example.com/a",
        ),
        (
            "http://example.com/a;JSESSIONID=0A1B2C?x=1",
            "http://example.com/a?x=1",
        ),
        (
            "http://example.com/a;jsessionid=1;v=2/b",
            "http://example.com/a;v=2/b",
        ),
        ("http://example.com/;jsessionid=X", "http://example.com/"),
        (
            "http://example.com/x/..;jsessionid=1/y",
            "http://example.com/y",
        ),
        (
            "http://example.com/a;%4Asessionid=1",
            "http://example.com/a",
        ),
        ("http://example.com/a;v=1", "http://example.com/a;v=1"),
        // whitespace around the input, tabs and newlines inside
        ("  http://example.com/a \n", "http://example.com/a"),
        ("http://exam\tple.com/a\nb", "http://example.com/ab"),
    ];

    /// Inputs that are refused, with the kind of error.
    const REJECTED: &[(&str, &str)] = &[
        ("ftp://example.com/", "scheme"),
        ("mailto:a@example.com", "scheme"),
        ("javascript:void(0)", "scheme"),
        ("data:text/plain,x", "scheme"),
        ("file:///etc/passwd", "scheme"),
        ("ws://example.com/", "scheme"),
        ("/relative/path", "invalid"),
        ("", "invalid"),
        ("http://exa mple.com/", "invalid"),
        ("http://example.com:99999/", "invalid"),
        ("http://[::1/", "invalid"),
        ("http://", "nohost"),
        ("http:///path", "nohost"),
        ("https:///", "nohost"),
        ("HTTP:\\\\\\x", "nohost"),
        // The parser drops tabs and newlines anywhere: still no authority.
        ("http:/\n//path", "nohost"),
        ("ht\ttp:///path", "nohost"),
        ("https:\r\n///x", "nohost"),
        ("http://?q=1", "nohost"),
        ("http://./", "nohost"),
    ];

    fn kind(e: &UrlError) -> &'static str {
        match e {
            UrlError::Invalid { .. } => "invalid",
            UrlError::Scheme { .. } => "scheme",
            UrlError::NoHost { .. } => "nohost",
        }
    }

    #[test]
    fn table_has_enough_rows() {
        assert!(TABLE.len() + REJECTED.len() >= 60);
    }

    #[test]
    fn canonical_forms() {
        let mut failures = Vec::new();
        for &(input, want) in TABLE {
            match canonicalize(input) {
                Ok(got) if got.as_str() == want => {}
                Ok(got) => failures.push(format!("{input:?}: got {got}, want {want}")),
                Err(e) => failures.push(format!("{input:?}: error {e}, want {want}")),
            }
        }
        assert!(failures.is_empty(), "\n{}", failures.join("\n"));
    }

    #[test]
    fn idempotent_over_the_table() {
        for &(input, _) in TABLE {
            let once = canonicalize(input).unwrap();
            let twice = canonicalize(once.as_str()).unwrap();
            assert_eq!(once, twice, "{input:?}");
            let parsed = canonicalize_url(Url::parse(once.as_str()).unwrap()).unwrap();
            assert_eq!(once, parsed, "{input:?} through canonicalize_url");
        }
    }

    #[test]
    fn canonicalize_url_agrees_with_canonicalize() {
        for &(input, want) in TABLE {
            if let Ok(parsed) = Url::parse(input) {
                assert_eq!(
                    canonicalize_url(parsed).unwrap().as_str(),
                    want,
                    "{input:?}"
                );
            }
        }
    }

    #[test]
    fn spellings_that_must_meet() {
        let groups: &[&[&str]] = &[
            &[
                "HTTP://Example.COM:80/a/./b/../c?#x",
                "http://example.com/a/c",
                "http://EXAMPLE.com./a/%2e/b/%2E%2E/c#top",
                "http://example.com:80/a/c?",
            ],
            &[
                "http://example.com/~bob/a%20b?q=x",
                "http://example.com/%7ebob/a b?q=%78",
                "http://Example.Com/%7Ebob/a%20b?q=x&sid=1#f",
                "http://example.com/%7Ebob;jsessionid=99/../%7Ebob/a%20b?PHPSESSID=4&q=x",
            ],
            &[
                "http://example.com/list?page=2&sort=new",
                "http://EXAMPLE.com/list?page=2&utm_source=feed&sort=new&fbclid=1",
                "http://example.com/list?utm_campaign=x&page=2&sid=7&sort=new#top",
            ],
            &[
                "https://xn--bcher-kva.de/",
                "https://BÜCHER.de:443",
                "https://bücher.de./#x",
            ],
        ];
        for group in groups {
            let first = canonicalize(group[0]).unwrap();
            for spelling in &group[1..] {
                assert_eq!(
                    canonicalize(spelling).unwrap(),
                    first,
                    "{spelling:?} vs {:?}",
                    group[0]
                );
            }
        }
    }

    #[test]
    fn rejected_inputs() {
        for &(input, want) in REJECTED {
            match canonicalize(input) {
                Ok(u) => panic!("{input:?} accepted as {u}"),
                Err(e) => {
                    assert_eq!(kind(&e), want, "{input:?}: {e}");
                    assert!(e.to_string().contains(input.trim()), "{e} names the input");
                }
            }
        }
    }

    #[test]
    fn canonicalize_url_refuses_other_schemes() {
        let e = canonicalize_url(Url::parse("ftp://example.com/x").unwrap()).unwrap_err();
        assert_eq!(
            e,
            UrlError::Scheme {
                url: "ftp://example.com/x".into(),
                scheme: "ftp".into()
            }
        );
    }

    #[test]
    fn relative_links() {
        let base = Url::parse("http://example.com/dir/page.html?x=1#f").unwrap();
        let cases: &[(&str, Result<&str, &str>)] = &[
            ("../a", Ok("http://example.com/a")),
            ("b/./c/../d", Ok("http://example.com/dir/b/d")),
            ("?q=%7e", Ok("http://example.com/dir/page.html?q=~")),
            ("#frag", Ok("http://example.com/dir/page.html?x=1")),
            ("", Ok("http://example.com/dir/page.html?x=1")),
            (
                "  other.html;jsessionid=1  ",
                Ok("http://example.com/dir/other.html"),
            ),
            ("//Other.COM:80/x", Ok("http://other.com/x")),
            ("/", Ok("http://example.com/")),
            ("HTTPS://x.com:443", Ok("https://x.com/")),
            ("mailto:a@example.com", Err("scheme")),
            ("javascript:void(0)", Err("scheme")),
            ("http:///x", Err("nohost")),
            ("http:/\n/\t/x", Err("nohost")),
            ("http://[x", Err("invalid")),
        ];
        for &(href, want) in cases {
            let got = canonicalize_relative(&base, href);
            match (got, want) {
                (Ok(u), Ok(w)) => assert_eq!(u.as_str(), w, "{href:?}"),
                (Err(e), Err(k)) => assert_eq!(kind(&e), k, "{href:?}: {e}"),
                (got, want) => panic!("{href:?}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn relative_links_in_a_page_encoding() {
        use std::borrow::Cow;
        // ISO-8859-1 for the characters it has, `?` for the others.
        fn latin1(s: &str) -> Cow<'_, [u8]> {
            s.chars()
                .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
                .collect()
        }
        let base = Url::parse("http://example.com/dir/page.html").unwrap();
        let cases: &[(&str, Result<&str, &str>)] = &[
            // Only the query takes the page's encoding.
            (
                "café?q=café",
                Ok("http://example.com/dir/caf%C3%A9?q=caf%E9"),
            ),
            ("?q=%7e&sid=1", Ok("http://example.com/dir/page.html?q=~")),
            ("//Other.COM:80/?q=ü#f", Ok("http://other.com/?q=%FC")),
            ("http:///café", Err("nohost")),
            ("http:/\n//café", Err("nohost")),
            ("mailto:café@example.com", Err("scheme")),
        ];
        for &(href, want) in cases {
            let got = canonicalize_relative_encoded(&base, href, Some(&latin1));
            match (got, want) {
                (Ok(u), Ok(w)) => assert_eq!(u.as_str(), w, "{href:?}"),
                (Err(e), Err(k)) => assert_eq!(kind(&e), k, "{href:?}: {e}"),
                (got, want) => panic!("{href:?}: got {got:?}, want {want:?}"),
            }
        }
        // Without an override, the same as canonicalize_relative: UTF-8.
        assert_eq!(
            canonicalize_relative_encoded(&base, "?q=é", None).unwrap(),
            canonicalize_relative(&base, "?q=é").unwrap()
        );
        assert_eq!(
            canonicalize_relative(&base, "?q=é").unwrap().as_str(),
            "http://example.com/dir/page.html?q=%C3%A9"
        );
    }

    /// Idempotence beyond the table: deterministic random URLs built from
    /// the pieces that trip the rules (escapes, dots, session ids, unsafe
    /// bytes, empty queries and parameters).
    #[test]
    fn idempotent_over_generated_urls() {
        const PIECES: &[&str] = &[
            "/",
            "a",
            "B",
            ".",
            "..",
            "%2e",
            "%2E%2e",
            "%7e",
            "%7E",
            "%41",
            "%2f",
            "%3F",
            "%3b",
            "%",
            "%4",
            "%zz",
            "%25",
            ";",
            ";jsessionid=9",
            ";JSESSIONID=x;y=1",
            "?",
            "&",
            "=",
            "sid=1",
            "SID",
            "PHPSESSID=2",
            "aspsessionidAB=3",
            "cfid",
            "#",
            "#f",
            " ",
            "|",
            "^",
            "[",
            "]",
            "{",
            "}",
            "\\",
            "\"",
            "'",
            "`",
            "<",
            "ä",
            "€",
            "+",
            "!",
            "@",
            ":",
            "~",
        ];
        const PREFIXES: &[&str] = &[
            "http://Example.com",
            "HTTPS://www.EXAMPLE.co.uk.:443",
            "http://bücher.de:80",
            "http://127.0.0.1.",
            "http://u:p@h.test:8080",
        ];
        let mut rng = Rng::new(0x2545_F491_4F6C_DD1D);
        for _ in 0..20_000 {
            let mut input = PREFIXES[rng.below(PREFIXES.len())].to_string();
            for _ in 0..rng.below(12) {
                input.push_str(PIECES[rng.below(PIECES.len())]);
            }
            let Ok(once) = canonicalize(&input) else {
                continue;
            };
            let twice = canonicalize(once.as_str())
                .unwrap_or_else(|e| panic!("{input:?} -> {once} -> error {e}"));
            assert_eq!(once, twice, "{input:?}");
            assert!(
                once.fragment().is_none() && once.query() != Some(""),
                "{input:?}"
            );
        }
    }

    #[test]
    fn host_canon_drops_sorts_and_lowers() {
        let canon = |drop: &[&str], sort: bool, lower: bool| HostCanon {
            drop_params: drop.iter().map(|s| s.to_string()).collect(),
            sort_query: sort,
            lowercase_path: lower,
        };
        let cases: &[(HostCanon, &str, &str)] = &[
            (
                canon(&[], false, false),
                "http://h.test/A?b=1&a=2",
                "http://h.test/A?b=1&a=2",
            ),
            (
                canon(&["ref"], false, false),
                "http://h.test/?ref=x&a=1&REF",
                "http://h.test/?a=1",
            ),
            (
                canon(&["ref"], false, false),
                "http://h.test/?ref=x",
                "http://h.test/",
            ),
            (
                canon(&["ref"], false, false),
                "http://h.test/?refx=1",
                "http://h.test/?refx=1",
            ),
            (
                canon(&["v_*"], false, false),
                "http://h.test/?v_a=1&v_=2&vb=3",
                "http://h.test/?vb=3",
            ),
            (
                canon(&[], true, false),
                "http://h.test/?b=2&a=1&a=0&c",
                "http://h.test/?a=0&a=1&b=2&c",
            ),
            (
                canon(&[], false, true),
                "http://h.test/Docs/%C3%A4/X.HTML?Q=A",
                "http://h.test/docs/%C3%A4/x.html?Q=A",
            ),
            (
                canon(&[], false, true),
                "http://h.test/a%2Fb%2fC",
                "http://h.test/a%2Fb%2Fc",
            ),
            (
                canon(&["x"], true, true),
                "http://h.test/P?x=1&z=1&y=2",
                "http://h.test/p?y=2&z=1",
            ),
        ];
        for (rule, input, want) in cases {
            let url = canonicalize(input).unwrap();
            let once = rule.apply(url);
            assert_eq!(once.as_str(), *want, "{input} with {rule:?}");
            assert_eq!(
                canonicalize(once.as_str()).unwrap(),
                once,
                "{input}: still canonical"
            );
            assert_eq!(rule.apply(once.clone()), once, "{input}: idempotent");
        }
        assert!(canon(&[], false, false).is_identity());
        assert!(!canon(&[], true, false).is_identity());
    }

    #[test]
    fn registrable_domains() {
        let cases = [
            ("www.example.co.uk", "example.co.uk"),
            ("a.b.example.co.uk", "example.co.uk"),
            ("example.co.uk", "example.co.uk"),
            ("co.uk", "co.uk"),
            ("uk", "uk"),
            ("a.b.example.com", "example.com"),
            ("www.example.com.", "example.com"),
            ("example.com.", "example.com"),
            ("news.demo.test", "demo.test"),
            ("localhost", "localhost"),
            ("127.0.0.1", "127.0.0.1"),
            ("10.1.2.3", "10.1.2.3"),
            ("[::1]", "[::1]"),
            ("[2001:db8::1]", "[2001:db8::1]"),
            ("www.xn--e1afmkfd.xn--p1ai", "xn--e1afmkfd.xn--p1ai"),
            ("xn--p1ai", "xn--p1ai"),
            ("shop.xn--bcher-kva.de", "xn--bcher-kva.de"),
            ("alice.github.io", "alice.github.io"),
            ("github.io", "github.io"),
        ];
        for (host, want) in cases {
            assert_eq!(registrable_domain(host), want, "{host}");
        }
    }
}
