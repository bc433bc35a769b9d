//! The parts of a URL that a request needs (scheme, host, port, path and
//! query), split without a full parse when the URL is already in the form
//! the `url` crate gives it: segments and redirect targets hold URLs in
//! canonical form, and parsing one again cost more than the rest of
//! starting its request. Anything else (user info, IPv6, a host or path
//! the parser would change) is split by the `url` crate, so both ways give
//! the same parts.

use std::borrow::Cow;

/// The parts of an `http` or `https` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parts<'a> {
    /// `https`.
    pub https: bool,
    /// The host (an IPv6 address without its brackets).
    pub host: Cow<'a, str>,
    /// The port, the scheme's default when none is written.
    pub port: u16,
    /// The host, and the port when it is not the scheme's default, as a
    /// `Host` header gives them.
    pub authority: Cow<'a, str>,
    /// The path and the query (`/` at least), without the fragment.
    pub path_and_query: Cow<'a, str>,
    /// User and password written in the URL, if any.
    pub credentials: Option<(String, String)>,
}

/// Splits `url`; an error for a URL that cannot be fetched (not a URL, not
/// `http` or `https`, no host).
pub fn split(url: &str) -> Result<Parts<'_>, String> {
    quick(url).map_or_else(|| by_parser(url), Ok)
}

/// The path and query of `url` (what robots.txt rules see), or `None` if
/// it is not a URL.
pub fn path_and_query(url: &str) -> Option<Cow<'_, str>> {
    if let Some(p) = quick(url) {
        return Some(p.path_and_query);
    }
    let u = url::Url::parse(url).ok()?;
    Some(Cow::Owned(match u.query() {
        Some(q) => format!("{}?{q}", u.path()),
        None => u.path().to_string(),
    }))
}

/// The parts of a URL already in canonical form, or `None` to let the
/// parser decide.
fn quick(url: &str) -> Option<Parts<'_>> {
    let (https, rest) = match url.strip_prefix("http://") {
        Some(rest) => (false, rest),
        None => (true, url.strip_prefix("https://")?),
    };
    let end = rest
        .bytes()
        .position(|b| matches!(b, b'/' | b'?' | b'#'))
        .unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let default_port = if https { 443 } else { 80 };
    let (host, port) = match authority.split_once(':') {
        Some((host, port)) => (host, plain_port(port)?),
        None => (authority, default_port),
    };
    if !canonical_host(host) {
        return None;
    }
    let tail = &tail[..memchr::memchr(b'#', tail.as_bytes()).unwrap_or(tail.len())];
    if !canonical_path(tail) {
        return None;
    }
    let path_and_query = if tail.starts_with('/') {
        Cow::Borrowed(tail)
    } else {
        Cow::Owned(format!("/{tail}"))
    };
    Some(Parts {
        https,
        host: Cow::Borrowed(host),
        port,
        authority: if port == default_port {
            Cow::Borrowed(host)
        } else {
            Cow::Borrowed(authority)
        },
        path_and_query,
        credentials: None,
    })
}

/// A port written as the parser writes it: digits, no leading zero, at
/// most 65535.
fn plain_port(port: &str) -> Option<u16> {
    if port.is_empty() || port.starts_with('0') || !port.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    port.parse().ok()
}

/// A host the parser keeps as it is: lower-case letters, digits, `-` and
/// `.`, with a last label that is not a number (those are IPv4 addresses,
/// kept only in dotted form).
fn canonical_host(host: &str) -> bool {
    if host.is_empty()
        || !host
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
    {
        return false;
    }
    let last = host.trim_end_matches('.').rsplit('.').next().unwrap_or("");
    if !last.starts_with(|c: char| c.is_ascii_digit()) {
        return !host.starts_with('.') && !host.contains("..");
    }
    dotted_ipv4(host)
}

/// `a.b.c.d` with each part 0 to 255, written without leading zeros.
fn dotted_ipv4(host: &str) -> bool {
    let mut parts = 0;
    for p in host.split('.') {
        parts += 1;
        let ok = !p.is_empty()
            && p.len() <= 3
            && p.bytes().all(|b| b.is_ascii_digit())
            && !(p.len() > 1 && p.starts_with('0'))
            && p.parse::<u16>().is_ok_and(|n| n <= 255);
        if !ok || parts > 4 {
            return false;
        }
    }
    parts == 4
}

/// A path and query the parser keeps as they are: visible ASCII that needs
/// no escaping in either, no `\`, no dot segment (plain or escaped).
fn canonical_path(tail: &str) -> bool {
    let b = tail.as_bytes();
    let allowed = |c: u8| {
        c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'-' | b'.'
                    | b'_'
                    | b'~'
                    | b'!'
                    | b'$'
                    | b'&'
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
                    | b':'
                    | b'@'
                    | b'/'
                    | b'?'
                    | b'%'
            )
    };
    if !b.iter().all(|&c| allowed(c)) {
        return false;
    }
    let path = &tail[..memchr::memchr(b'?', b).unwrap_or(b.len())];
    !path.split('/').any(is_dot_segment)
}

/// `.` or `..`, the dots plain or escaped (`%2e`).
fn is_dot_segment(seg: &str) -> bool {
    if seg.len() > 6 || seg.is_empty() {
        return false;
    }
    let mut rest = seg.as_bytes();
    let mut dots = 0;
    while !rest.is_empty() {
        if rest[0] == b'.' {
            rest = &rest[1..];
        } else if rest.len() >= 3 && rest[..3].eq_ignore_ascii_case(b"%2e") {
            rest = &rest[3..];
        } else {
            return false;
        }
        dots += 1;
    }
    dots <= 2
}

/// The parts as the `url` crate gives them.
fn by_parser(url: &str) -> Result<Parts<'static>, String> {
    let u = url::Url::parse(url).map_err(|e| format!("{e}"))?;
    let https = match u.scheme() {
        "http" => false,
        "https" => true,
        other => return Err(format!("unsupported URL scheme `{other}`")),
    };
    let host = u
        .host_str()
        .filter(|h| !h.is_empty())
        .ok_or("the URL has no host")?;
    let port = u
        .port_or_known_default()
        .unwrap_or(if https { 443 } else { 80 });
    let authority = match u.port() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_string(),
    };
    let mut path_and_query = u.path().to_string();
    if path_and_query.is_empty() {
        path_and_query.push('/');
    }
    if let Some(q) = u.query() {
        path_and_query.push('?');
        path_and_query.push_str(q);
    }
    let credentials = (!u.username().is_empty() || u.password().is_some()).then(|| {
        (
            u.username().to_string(),
            u.password().unwrap_or("").to_string(),
        )
    });
    Ok(Parts {
        https,
        host: Cow::Owned(
            host.trim_start_matches('[')
                .trim_end_matches(']')
                .to_string(),
        ),
        port,
        authority: Cow::Owned(authority),
        path_and_query: Cow::Owned(path_and_query),
        credentials,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_quickly_give_the_parts_the_parser_gives() {
        let urls = [
            "http://a.test/",
            "http://a.test",
            "http://a.test?q=1",
            "https://a.test:443/x",
            "http://a.test:80/x",
            "http://a.test:8080/p/q.html?x=1&y=%20#frag",
            "http://127.0.0.2:42107/page/7",
            "http://127.000.0.2/x",
            "http://2130706433/",
            "http://0x7f.0.0.1/",
            "http://1.2.3/",
            "http://A.test/",
            "http://a.test:080/",
            "http://a.test:/x",
            "http://a..test/",
            "http://a.test./x",
            "http://a.test/a/./b",
            "http://a.test/a/%2E%2e/b",
            "http://a.test/a b",
            "http://a.test/x'y?z'w",
            "http://a.test/\\x",
            "http://a.test/x?a=\"b\"",
            "http://user:pw@a.test/",
            "http://[::1]:8080/v6",
            "http://bücher.test/é",
            "http://xn--bcher-kva.test/",
            "https://a.test/?",
            "ftp://a.test/",
            "not a url",
        ];
        for url in urls {
            let parsed = by_parser(url);
            assert_eq!(split(url), parsed, "{url}");
            if let Some(q) = quick(url) {
                assert_eq!(Ok(q), parsed, "{url}: quick and parsed differ");
            }
            let robots_path = url::Url::parse(url).ok().map(|u| match u.query() {
                Some(q) => format!("{}?{q}", u.path()),
                None => u.path().to_string(),
            });
            assert_eq!(
                path_and_query(url).map(Cow::into_owned),
                robots_path,
                "{url}"
            );
        }
        assert!(
            quick("http://127.0.0.2:42107/page/7").is_some(),
            "the usual case is quick"
        );
        assert!(quick("https://www.example.com/a/b?c=d").is_some());
        assert!(quick("http://2130706433/").is_none(), "left to the parser");
    }
}
