//! The SURT key of a URL, as web-archive indexes sort by it.
//!
//! A CDXJ line starts with the URL's SURT ("Sort-friendly URI Reordering
//! Transform"): the host's labels reversed and joined by commas, then `)`,
//! then the path and query, after the Internet Archive's canonicalization
//! (the one of the `surt` Python package that `cdxj-indexer` and pywb use,
//! with its defaults: no scheme in the key). Our index must hold the same
//! key for the same URL, byte for byte, or a replay tool looking a URL up
//! in it misses; the test `cdxj_indexer` compares whole files. The steps:
//!
//! - parse as RFC 2396 parts; user info, fragment and a trailing `?` go;
//! - host: percent-decoded until stable, `..` → `.`, dots trimmed, lower
//!   case, a leading `www`, `www2`, ... label dropped, a numeric IPv4
//!   address in dotted form; the default port of the scheme dropped;
//! - path: percent-decoded until stable, `.` and `..` segments resolved,
//!   empty segments dropped (but a trailing slash), escaped again (bytes
//!   outside printable ASCII, space, `#` and `%`), lower case, a trailing
//!   slash dropped (but for `/`), ASP.NET session ids in the path dropped;
//! - query: percent-decoded until stable and escaped again, session-id
//!   parameters (`jsessionid`, `phpsessid`, `sid`, `aspsessionid`, ColdFusion
//!   `cfid`/`cftoken`) dropped, lower case, parameters sorted.
//!
//! Written here because no Rust crate produces this key; the rules are the
//! `surt` package's (0.3.1) observable behaviour, checked against it.

use std::sync::LazyLock;

use regex::bytes::Regex;

/// The SURT key of `url` (see the module doc). A URL the rules cannot
/// parse (a port that is not a number) is its own key, as `cdxj-indexer`
/// does then.
pub fn surt(url: &str) -> String {
    match try_surt(url.as_bytes()) {
        Some(key) => String::from_utf8(key)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
        None => url.to_string(),
    }
}

fn try_surt(raw: &[u8]) -> Option<Vec<u8>> {
    if raw.is_empty() {
        return Some(b"-".to_vec());
    }
    if raw.starts_with(b"filedesc") {
        return Some(raw.to_vec());
    }
    let url = prepare(raw);
    let parts = split(&url)?;
    let (host, port) = host_and_port(parts.netloc)?;
    let mut key = Vec::with_capacity(url.len());
    let host = host.map(canonical_host);
    let port = port.filter(|&p| Some(p) != default_port(parts.scheme));
    match &host {
        Some(h) => {
            for (i, label) in h.rsplit(|&b| b == b'.').enumerate() {
                if i > 0 {
                    key.push(b',');
                }
                key.extend_from_slice(label);
            }
            if let Some(p) = port {
                key.extend_from_slice(format!(":{p}").as_bytes());
            }
            key.push(b')');
        }
        None => {
            key.extend_from_slice(parts.scheme);
            key.push(b':');
        }
    }
    key.extend_from_slice(&canonical_path(parts.path, host.is_some()));
    if let Some(q) = parts.query.filter(|q| !q.is_empty())
        && let Some(q) = canonical_query(q)
    {
        key.push(b'?');
        key.extend_from_slice(&q);
    }
    Some(key)
}

/// Trims the URL, removes tabs and line breaks, gives it `http://` when it
/// has no scheme, and keeps the last of repeated `http(s)://` prefixes.
fn prepare(raw: &[u8]) -> Vec<u8> {
    let trimmed = trim_ascii_space(raw);
    let mut url: Vec<u8> = trimmed
        .iter()
        .copied()
        .filter(|&b| !matches!(b, b'\n' | b'\r' | b'\t'))
        .collect();
    if scheme_len(&url).is_none() {
        url.splice(0..0, b"http://".iter().copied());
    }
    // `^(?:https?://)+`: all but the last of those prefixes go.
    let (mut end, mut last) = (0, 0);
    loop {
        if url[end..].starts_with(b"http://") {
            (end, last) = (end + 7, 7);
        } else if url[end..].starts_with(b"https://") {
            (end, last) = (end + 8, 8);
        } else {
            break;
        }
    }
    url.drain(..end - last);
    url
}

/// The length of the scheme that starts `url` (`^[a-zA-Z][a-zA-Z0-9+.-]*:`,
/// without the colon); `None` if it has none. (Written out rather than a
/// regex: this runs for every page stored.)
fn scheme_len(url: &[u8]) -> Option<usize> {
    if !url.first()?.is_ascii_alphabetic() {
        return None;
    }
    let n = url
        .iter()
        .position(|&b| !(b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')))?;
    (url[n] == b':').then_some(n)
}

/// Python's `bytes.strip()`: ASCII whitespace at both ends.
fn trim_ascii_space(b: &[u8]) -> &[u8] {
    let is_space = |c: &u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c);
    let start = b.iter().position(|c| !is_space(c)).unwrap_or(b.len());
    let end = b
        .iter()
        .rposition(|c| !is_space(c))
        .map_or(start, |i| i + 1);
    &b[start..end]
}

struct Parts<'a> {
    scheme: &'a [u8],
    netloc: &'a [u8],
    path: &'a [u8],
    query: Option<&'a [u8]>,
}

/// The RFC 2396 split (scheme, authority, path, query; the fragment is
/// dropped): what the regex of its appendix B,
/// `^(([^:/?#]+):)?(//([^/?#]*))?([^?#]*)(\?([^#]*))?(#(.*))?`, with the
/// scheme's own characters, finds; written out (see [`scheme_len`]).
fn split(url: &[u8]) -> Option<Parts<'_>> {
    let (scheme, rest) = match scheme_len(url) {
        Some(n) => (&url[..n], &url[n + 1..]),
        None => (&[][..], url),
    };
    let rest = rest.split(|&b| b == b'#').next().unwrap_or_default();
    let (mut netloc, rest) = match rest.strip_prefix(b"//") {
        Some(after) => {
            let end = after
                .iter()
                .position(|&b| b == b'/' || b == b'?')
                .unwrap_or(after.len());
            after.split_at(end)
        }
        None => (&[][..], rest),
    };
    let (path, query) = match rest.iter().position(|&b| b == b'?') {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    while let Some(rest) = netloc.strip_suffix(b":") {
        netloc = rest;
    }
    Some(Parts {
        scheme,
        netloc,
        path,
        query,
    })
}

/// Host (lower case, brackets of an IPv6 literal removed) and port of an
/// authority, as Python's `urlsplit` gives them; `None` for a port that is
/// not a number from 0 to 65535 (port 0 counts as none).
fn host_and_port(netloc: &[u8]) -> Option<(Option<Vec<u8>>, Option<u32>)> {
    let hostinfo = match netloc.iter().rposition(|&b| b == b'@') {
        Some(i) => &netloc[i + 1..],
        None => netloc,
    };
    let (host, port) = match hostinfo.iter().position(|&b| b == b'[') {
        Some(i) => {
            let bracketed = &hostinfo[i + 1..];
            match bracketed.iter().position(|&b| b == b']') {
                Some(j) => {
                    let after = &bracketed[j + 1..];
                    let port = after
                        .iter()
                        .position(|&b| b == b':')
                        .map_or(&[][..], |k| &after[k + 1..]);
                    (&bracketed[..j], port)
                }
                None => (bracketed, &[][..]),
            }
        }
        None => match hostinfo.iter().position(|&b| b == b':') {
            Some(i) => (&hostinfo[..i], &hostinfo[i + 1..]),
            None => (hostinfo, &[][..]),
        },
    };
    let port = if port.is_empty() {
        None
    } else {
        if !port.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let n: u32 = std::str::from_utf8(port).ok()?.parse().ok()?;
        if n > 65_535 {
            return None;
        }
        (n != 0).then_some(n)
    };
    let host = (!host.is_empty()).then(|| {
        // A zone of a scoped IPv6 address keeps its case.
        match host.iter().position(|&b| b == b'%') {
            Some(i) => {
                let mut h = host[..i].to_ascii_lowercase();
                h.extend_from_slice(&host[i..]);
                h
            }
            None => host.to_ascii_lowercase(),
        }
    });
    Some((host, port))
}

fn default_port(scheme: &[u8]) -> Option<u32> {
    match scheme.to_ascii_lowercase().as_slice() {
        b"http" => Some(80),
        b"https" => Some(443),
        _ => Some(0),
    }
}

fn canonical_host(host: Vec<u8>) -> Vec<u8> {
    // (A host that decodes to non-ASCII bytes would be put in IDNA form
    // by the `surt` package; canonical URLs have their hosts in IDNA form
    // already, so here such bytes are only escaped.)
    let mut host = unescape_repeatedly(&host);
    while let Some(i) = host.windows(2).position(|w| w == b"..") {
        host.remove(i);
    }
    let start = host.iter().position(|&b| b != b'.').unwrap_or(host.len());
    let end = host
        .iter()
        .rposition(|&b| b != b'.')
        .map_or(start, |i| i + 1);
    let host = host[start..end].to_vec();
    let host = match ipv4(&host) {
        Some(ip) => ip.into_bytes(),
        None => escape_once(&host.to_ascii_lowercase()),
    };
    let mut host = host.to_ascii_lowercase();
    // A first label `www`, `www2`, ... goes.
    if let Some(rest) = host.strip_prefix(b"www") {
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        if rest.get(digits) == Some(&b'.') {
            host.drain(..3 + digits + 1);
        }
    }
    host
}

/// A host in one of the numeric IPv4 forms (`3232235777`, `192.168.1`)
/// as a dotted quad; `None` for a name.
fn ipv4(host: &[u8]) -> Option<String> {
    let dotted = |n: u32| std::net::Ipv4Addr::from(n).to_string();
    if !host.is_empty() && host.iter().all(u8::is_ascii_digit) {
        // All digits: the low 32 bits of the number.
        let mut n: u32 = 0;
        for &d in host {
            n = n.wrapping_mul(10).wrapping_add(u32::from(d - b'0'));
        }
        return Some(dotted(n));
    }
    if !host.iter().all(|&b| b.is_ascii_digit() || b == b'.') {
        return None; // a name (what the two forms below hold, no more)
    }
    static DECIMAL: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^([1-9][0-9]*)(\.[0-9]+)?(\.[0-9]+)?(\.[0-9]+)?$").expect("valid")
    });
    static OCTAL: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(0[0-7]*)(\.[0-7]+)?(\.[0-7]+)?(\.[0-7]+)?$").expect("valid")
    });
    if !DECIMAL.is_match(host) && !OCTAL.is_match(host) {
        return None;
    }
    // What inet_aton makes of it (numbers with a leading 0 are octal); a
    // form it refuses is a name that does not resolve: kept as it is.
    let text = std::str::from_utf8(host).ok()?;
    let parts: Vec<u64> = text
        .split('.')
        .map(|p| {
            if p.len() > 1 && p.starts_with('0') {
                u64::from_str_radix(&p[1..], 8).ok()
            } else {
                p.parse().ok()
            }
        })
        .collect::<Option<_>>()?;
    let (last, head) = parts.split_last()?;
    if head.iter().any(|&p| p > 255) || *last >= 1u64 << (8 * (4 - head.len())) {
        return None;
    }
    let mut n: u64 = 0;
    for (i, &p) in head.iter().enumerate() {
        n |= p << (24 - 8 * i);
    }
    Some(dotted((n | last) as u32))
}

fn canonical_path(path: &[u8], has_host: bool) -> Vec<u8> {
    let path = unescape_repeatedly(path);
    let path = if has_host {
        normalize_path(&path)
    } else {
        path
    };
    let path = escape_once(&path).to_ascii_lowercase();
    let path = strip_path_session_id(path);
    match path.strip_suffix(b"/") {
        Some(rest) if !rest.is_empty() => rest.to_vec(),
        _ => path,
    }
}

/// Resolves `.` and `..` segments (a `..` above the root stays) and drops
/// empty segments, but a trailing slash.
fn normalize_path(path: &[u8]) -> Vec<u8> {
    if path.is_empty() {
        return b"/".to_vec();
    }
    let mut kept: Vec<&[u8]> = Vec::new();
    for segment in path.split(|&b| b == b'/').skip(1) {
        match segment {
            b"." => {}
            b".." if !kept.is_empty() => {
                kept.pop();
            }
            _ => kept.push(segment),
        }
    }
    let mut out = b"/".to_vec();
    if let Some((last, rest)) = kept.split_last() {
        for s in rest.iter().filter(|s| !s.is_empty()) {
            out.extend_from_slice(s);
            out.push(b'/');
        }
        out.extend_from_slice(last);
    }
    out
}

fn strip_path_session_id(path: Vec<u8>) -> Vec<u8> {
    static PATTERNS: LazyLock<[Regex; 2]> = LazyLock::new(|| {
        [
            Regex::new(r"(?i-u)^(.*/)(\((?:[a-z]\([0-9a-z]{24}\))+\)/)([^\?]+\.aspx.*)$"),
            Regex::new(r"(?i-u)^(.*/)(\([0-9a-z]{24}\)/)([^\?]+\.aspx.*)$"),
        ]
        .map(|r| r.expect("valid"))
    });
    if !contains_ignoring_case(&path, b".aspx") {
        return path; // both patterns need it
    }
    let mut path = path;
    for p in PATTERNS.iter() {
        if let Some(c) = p.captures(&path) {
            let mut out = c[1].to_vec();
            out.extend_from_slice(&c[3]);
            path = out;
        }
    }
    path
}

fn canonical_query(query: &[u8]) -> Option<Vec<u8>> {
    let query = escape_once(&unescape_repeatedly(query));
    let query = strip_query_session_id(query).to_ascii_lowercase();
    let query = sort_query(&query);
    (!query.is_empty()).then_some(query)
}

fn strip_query_session_id(query: Vec<u8>) -> Vec<u8> {
    static PATTERNS: LazyLock<[Regex; 5]> = LazyLock::new(|| {
        [
            r"(?i-u)^(.*)(?:jsessionid=[0-9a-zA-Z]{32})(?:&(.*))?$",
            r"(?i-u)^(.*)(?:phpsessid=[0-9a-zA-Z]{32})(?:&(.*))?$",
            r"(?i-u)^(.*)(?:sid=[0-9a-zA-Z]{32})(?:&(.*))?$",
            r"(?i-u)^(.*)(?:ASPSESSIONID[a-zA-Z]{8}=[a-zA-Z]{24})(?:&(.*))?$",
            r"(?i-u)^(.*)(?:cfid=[^&]+&cftoken=[^&]+)(?:&(.*))?$",
        ]
        .map(|r| Regex::new(r).expect("valid"))
    });
    // Each pattern needs one of these (`jsessionid=` holds `sessionid=`).
    let needles: [&[u8]; 4] = [b"sessionid=", b"sid=", b"aspsessionid", b"cfid="];
    if !needles.iter().any(|n| contains_ignoring_case(&query, n)) {
        return query;
    }
    let mut query = query;
    for p in PATTERNS.iter() {
        if let Some(c) = p.captures(&query) {
            let mut out = c[1].to_vec();
            if let Some(rest) = c.get(2).filter(|m| !m.is_empty()) {
                out.extend_from_slice(rest.as_bytes());
            }
            query = out;
        }
    }
    query
}

/// Sorts `name=value` pairs by name, then value (a name without `=`
/// before the same name with one).
fn sort_query(query: &[u8]) -> Vec<u8> {
    if query.len() <= 1 {
        return query.to_vec();
    }
    let mut args: Vec<(&[u8], Option<&[u8]>)> = query
        .split(|&b| b == b'&')
        .map(|a| match a.iter().position(|&b| b == b'=') {
            Some(i) => (&a[..i], Some(&a[i + 1..])),
            None => (a, None),
        })
        .collect();
    args.sort();
    let mut out = Vec::with_capacity(query.len());
    for (i, (name, value)) in args.iter().enumerate() {
        if i > 0 {
            out.push(b'&');
        }
        out.extend_from_slice(name);
        if let Some(v) = value {
            out.push(b'=');
            out.extend_from_slice(v);
        }
    }
    out
}

/// True if `needle` (lower case ASCII) is in `hay`, in any case.
fn contains_ignoring_case(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle))
}

/// Percent-decodes until nothing changes (`%2541` → `A`); a `%` not
/// followed by two hex digits stays.
fn unescape_repeatedly(input: &[u8]) -> Vec<u8> {
    if !input.contains(&b'%') {
        return input.to_vec(); // nothing to decode
    }
    let mut cur = input.to_vec();
    loop {
        let next = unescape(&cur);
        if next == cur {
            return cur;
        }
        cur = next;
    }
}

fn unescape(input: &[u8]) -> Vec<u8> {
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(input.len());
    let mut i = 0;
    while i < input.len() {
        if input[i] == b'%'
            && i + 2 < input.len()
            && let (Some(h), Some(l)) = (hex(input[i + 1]), hex(input[i + 2]))
        {
            out.push(h << 4 | l);
            i += 3;
        } else {
            out.push(input[i]);
            i += 1;
        }
    }
    out
}

/// Escapes what is not printable ASCII, space, `#` and `%` (upper-case hex).
fn escape_once(input: &[u8]) -> Vec<u8> {
    const SAFE: &[u8] = b"!\"$&'()*+,-./:;<=>?@[\\]^_`{|}~";
    let mut out = Vec::with_capacity(input.len());
    for &b in input {
        if b.is_ascii_alphanumeric() || SAFE.contains(&b) {
            out.push(b);
        } else {
            out.extend_from_slice(format!("%{b:02X}").as_bytes());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::surt;

    /// The split and the scheme test, written out, find what the regexes
    /// they replace found.
    #[test]
    fn the_split_is_the_rfc_2396_regex() {
        use regex::bytes::Regex;
        let rfc = Regex::new(
            r"(?s-u)^(([a-zA-Z][a-zA-Z0-9+.\-]*):)?((//([^/?#]*))?([^?#]*)(\?([^#]*))?)?(#(.*))?$",
        )
        .unwrap();
        let scheme = Regex::new(r"^[a-zA-Z][a-zA-Z0-9+\-.]*:").unwrap();
        let urls: &[&[u8]] = &[
            b"http://example.com/a/b?x=1#f",
            b"https://user:pw@Example.COM:8080/?",
            b"http://h/p?q?r#s?t",
            b"http://h#frag/x?y",
            b"http://h:/p",
            b"http://h::/p",
            b"mailto:someone@example.com",
            b"urn:a:b",
            b"//no-scheme/x",
            b"/just/a/path?q",
            b"",
            b"?",
            b"#",
            b"1http://x/",
            b"a+b-c.d:rest",
            b"a b:rest",
            b"http:",
            b"http://",
            b"http:///three/slashes",
            b"http://h/\n?\n#\n",
            b"http://h/\xff\xfe?\x80",
        ];
        for &url in urls {
            let c = rfc.captures(url).unwrap();
            let get = |i| c.get(i).map_or(&[][..], |m| m.as_bytes());
            let mut netloc = get(5);
            while let Some(rest) = netloc.strip_suffix(b":") {
                netloc = rest;
            }
            let parts = super::split(url).unwrap();
            let show = String::from_utf8_lossy(url);
            assert_eq!(parts.scheme, get(2), "{show}");
            assert_eq!(parts.netloc, netloc, "{show}");
            assert_eq!(parts.path, get(6), "{show}");
            assert_eq!(parts.query, c.get(8).map(|m| m.as_bytes()), "{show}");
            assert_eq!(
                super::scheme_len(url).is_some(),
                scheme.is_match(url),
                "{show}"
            );
        }
    }

    /// Keys computed by the `surt` Python package 0.3.1 (`surt.surt(url)`),
    /// what `cdxj-indexer` and pywb put in their indexes.
    #[test]
    fn keys_match_the_surt_package() {
        let cases = [
            ("http://example.com/", "com,example)/"),
            ("https://www.example.com/a/b/", "com,example)/a/b"),
            (
                "http://www2.Example.COM:80/A?b=2&a=1",
                "com,example)/a?a=1&b=2",
            ),
            ("http://example.com:8080/x#frag", "com,example:8080)/x"),
            ("https://example.com:443/", "com,example)/"),
            ("http://127.0.0.2:38517/page/1", "2,0,0,127:38517)/page/1"),
            ("http://a.demo.test:4000/p?", "test,demo,a:4000)/p"),
            ("http://x.test/a//b/./c/../d", "test,x)/a/b/d"),
            ("http://x.test/%7Euser/%2541%20b", "test,x)/~user/a%20b"),
            ("http://x.test/caf%C3%A9", "test,x)/caf%c3%a9"),
            ("http://x.test/?b&a=&a", "test,x)/?a&a=&b"),
            (
                "http://x.test/p?jsessionid=0123456789abcdef0123456789abcdef&x=1",
                "test,x)/p?x=1",
            ),
            ("http://x.test/p?q=A%2fB", "test,x)/p?q=a/b"),
            ("http://user:pw@x.test/", "test,x)/"),
            ("http://[::1]:8080/a", "::1:8080)/a"),
            ("http://x.test", "test,x)/"),
            ("http://x.test/a/../../b", "test,x)/../b"),
            ("http://x.test/a%2fb/", "test,x)/a/b"),
            ("http://10.1/x", "1,0,0,10)/x"),
            ("http://3232235777/", "1,1,168,192)/"),
            ("http://x.test:0/", "test,x)/"),
            (
                "http://x.test/p?sid=0123456789abcdef0123456789abcdef",
                "test,x)/p",
            ),
            (
                "http://x.test/p?a=1&cfid=12&cftoken=ab&z=2",
                "test,x)/p?a=1&z=2",
            ),
            ("http://x.test/%zz%", "test,x)/%25zz%25"),
            ("http://x.test/a b", "test,x)/a%20b"),
            ("https://http://x.test/", "test,x)/"),
            ("http://x.test/p?A=B&a=b", "test,x)/p?a=b&a=b"),
        ];
        for (url, want) in cases {
            assert_eq!(surt(url), want, "{url}");
        }
    }
}
