//! The small text formats inside attributes and headers: `rel` token lists,
//! robots directives (`<meta name=robots>`, `X-Robots-Tag`) and the
//! `content` of `<meta http-equiv=refresh>`.

fn is_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\x0C' | b'\r' | b' ')
}

/// Whether the space-separated token list `list` (a `rel` value) contains
/// `token` (lower case), compared without case.
pub(crate) fn has_token(list: &[u8], token: &[u8]) -> bool {
    list.split(|&b| is_space(b))
        .any(|t| t.eq_ignore_ascii_case(token))
}

/// Whether a robots directive list (`noindex, nofollow`; commas and/or
/// spaces) forbids following links: `nofollow` or `none`.
pub(crate) fn forbids_follow(directives: &[u8]) -> bool {
    directives
        .split(|&b| b == b',' || is_space(b))
        .any(|t| t.eq_ignore_ascii_case(b"nofollow") || t.eq_ignore_ascii_case(b"none"))
}

/// Robots directives that take a value after a colon; anything else before
/// a colon names a user agent.
const VALUED_DIRECTIVES: [&str; 4] = [
    "unavailable_after",
    "max-snippet",
    "max-image-preview",
    "max-video-preview",
];

/// Whether an `X-Robots-Tag` value forbids following links for us.
///
/// Directives are comma-separated; `NAME: directive` starts a group that
/// applies only to the crawler called NAME (later directives belong to that
/// group until the next NAME). Directives outside any group apply to all
/// crawlers; a group applies to us when NAME equals `robots_name`
/// (compared without case). Several header lines may be joined with commas.
pub(crate) fn header_forbids_follow(value: &str, robots_name: Option<&str>) -> bool {
    let mut applies = true;
    for item in value.split(',') {
        let mut directive = item.trim();
        if let Some((name, rest)) = directive.split_once(':') {
            let name = name.trim();
            let is_agent = !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
                && !VALUED_DIRECTIVES
                    .iter()
                    .any(|d| d.eq_ignore_ascii_case(name));
            if is_agent {
                applies = robots_name.is_some_and(|ours| ours.eq_ignore_ascii_case(name));
                directive = rest.trim();
            }
        }
        if applies && forbids_follow(directive.as_bytes()) {
            return true;
        }
    }
    false
}

/// The URL of a `<meta http-equiv=refresh content=...>`, following the HTML
/// standard's declarative refresh steps: `5; url=/next`, `0;URL='/next'`,
/// `3, /next` and `1 /next` all name `/next`. `None` when `content` is not
/// a valid refresh or names no URL (a refresh of the page itself).
pub(crate) fn refresh_url(content: &str) -> Option<&str> {
    let s = content.as_bytes();
    let mut pos = 0;
    let skip_space = |pos: &mut usize| {
        while s.get(*pos).is_some_and(|&b| is_space(b)) {
            *pos += 1;
        }
    };
    skip_space(&mut pos);
    let time_start = pos;
    while s.get(pos).is_some_and(u8::is_ascii_digit) {
        pos += 1;
    }
    if pos == time_start && s.get(pos) != Some(&b'.') {
        return None;
    }
    while s.get(pos).is_some_and(|&b| b.is_ascii_digit() || b == b'.') {
        pos += 1;
    }
    let &next = s.get(pos)?;
    if !(next == b';' || next == b',' || is_space(next)) {
        return None;
    }
    skip_space(&mut pos);
    if matches!(s.get(pos), Some(b';' | b',')) {
        pos += 1;
    }
    skip_space(&mut pos);
    if pos >= s.len() {
        return None;
    }
    // `url =` is optional; a partial match leaves `pos` where it stopped,
    // as the standard says.
    'prefix: {
        for letter in [b'u', b'r', b'l'] {
            if s.get(pos).is_some_and(|b| b.eq_ignore_ascii_case(&letter)) {
                pos += 1;
            } else {
                break 'prefix;
            }
        }
        skip_space(&mut pos);
        if s.get(pos) == Some(&b'=') {
            pos += 1;
        } else {
            break 'prefix;
        }
        skip_space(&mut pos);
    }
    let quote = match s.get(pos) {
        Some(&q @ (b'\'' | b'"')) => {
            pos += 1;
            Some(q)
        }
        _ => None,
    };
    // `pos` only ever advanced over ASCII bytes, so it is a char boundary.
    let mut url = content.get(pos..)?;
    if let Some(q) = quote
        && let Some(end) = url.bytes().position(|b| b == q)
    {
        url = &url[..end];
    }
    Some(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refresh_content() {
        let rows = [
            ("5; url=/next", Some("/next")),
            ("5;URL=/next", Some("/next")),
            ("0; Url = '/a b'", Some("/a b")),
            ("0; url=\"/q\" trailing", Some("/q")),
            ("0; url='/unterminated", Some("/unterminated")),
            ("3, /next", Some("/next")),
            ("1 /next", Some("/next")),
            ("  2.5 ; url=/x", Some("/x")),
            (".5;url=/x", Some("/x")),
            ("0; uri=/x", Some("i=/x")),
            ("0;url", Some("")),
            ("5", None),
            ("5;", None),
            ("url=/x", None),
            ("5x; url=/x", None),
            ("", None),
            ("0; url=/d\u{E9}j\u{E0}", Some("/d\u{E9}j\u{E0}")),
        ];
        for (content, want) in rows {
            assert_eq!(refresh_url(content), want, "{content:?}");
        }
    }

    #[test]
    fn robots_meta_content() {
        assert!(forbids_follow(b"nofollow"));
        assert!(forbids_follow(b"NoIndex, NoFollow"));
        assert!(forbids_follow(b"noindex,nofollow"));
        assert!(forbids_follow(b"none"));
        assert!(forbids_follow(b"index follow none"));
        assert!(!forbids_follow(b"noindex"));
        assert!(!forbids_follow(b"follow, nofollowx"));
        assert!(!forbids_follow(b""));
    }

    #[test]
    fn x_robots_tag() {
        assert!(header_forbids_follow("nofollow", None));
        assert!(header_forbids_follow("noindex, NOFOLLOW", None));
        assert!(header_forbids_follow("none", Some("ourbot")));
        assert!(!header_forbids_follow("noindex", None));
        assert!(!header_forbids_follow("otherbot: nofollow", Some("ourbot")));
        assert!(header_forbids_follow("OurBot: nofollow", Some("ourbot")));
        assert!(header_forbids_follow(
            "ourbot: noindex, nofollow",
            Some("ourbot")
        ));
        assert!(!header_forbids_follow(
            "otherbot: noindex, nofollow",
            Some("ourbot")
        ));
        assert!(header_forbids_follow(
            "otherbot: noindex, ourbot: nofollow",
            Some("ourbot")
        ));
        assert!(!header_forbids_follow("otherbot: nofollow", None));
        assert!(header_forbids_follow(
            "unavailable_after: 25 Jun 2010 15:00:00 PST, nofollow",
            None
        ));
        assert!(!header_forbids_follow("max-snippet: 20", None));
    }

    #[test]
    fn rel_tokens() {
        assert!(has_token(b"nofollow", b"nofollow"));
        assert!(has_token(b"noopener  NoFollow\tugc", b"nofollow"));
        assert!(!has_token(b"nofollowed", b"nofollow"));
        assert!(has_token(b"Canonical", b"canonical"));
        assert!(!has_token(b"", b"canonical"));
    }
}
