//! The HTTP messages stored in WARC `request`/`response` records.

/// The status line and headers of a stored HTTP response.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResponseHead {
    /// Status code.
    pub status: u16,
    /// Headers in order, names as sent.
    pub headers: Vec<(String, String)>,
    /// Offset of the body (the payload) in the block.
    pub body_offset: usize,
}

impl ResponseHead {
    /// The first header called `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        header_value(&self.headers, name)
    }
}

/// The value of the first `(name, value)` pair whose name is `name`, compared
/// without ASCII case as HTTP and WARC field names are: the one lookup behind
/// [`ResponseHead::header`] and [`WarcRecord::header`](crate::warc::WarcRecord::header).
///
/// ```
/// let fields = vec![("Content-Type".to_string(), "text/html".to_string())];
/// assert_eq!(common::http::header_value(&fields, "content-type"), Some("text/html"));
/// assert_eq!(common::http::header_value(&fields, "Location"), None);
/// ```
pub fn header_value<'a>(fields: &'a [(String, String)], name: &str) -> Option<&'a str> {
    fields
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// Parses the head of an HTTP/1.x response at the start of `block`;
/// `None` if it is not one (or the head does not end within `block`).
/// Header values that are not UTF-8 are decoded lossily. Lenient where
/// servers are sloppy: lower-case or odd names, spaces before the colon,
/// folded lines, several spaces in the status line, bare LF line ends; a
/// header line that makes no sense is skipped.
pub fn parse_response_head(block: &[u8]) -> Option<ResponseHead> {
    let config = lenient_response_parser();
    let mut few = [httparse::EMPTY_HEADER; 64];
    match parse_with(&config, block, &mut few) {
        Err(httparse::Error::TooManyHeaders) => {
            let mut many = vec![httparse::EMPTY_HEADER; MAX_HEADERS];
            parse_with(&config, block, &mut many).ok().flatten()
        }
        other => other.ok().flatten(),
    }
}

/// The settings of httparse for response heads as servers send them:
/// spaces before the colon, folded lines, several spaces in the status
/// line, and header lines that make no sense skipped. The fetcher reads
/// heads off the wire with the same settings as stored heads are read.
pub fn lenient_response_parser() -> httparse::ParserConfig {
    let mut config = httparse::ParserConfig::default();
    config
        .allow_spaces_after_header_name_in_responses(true)
        .allow_obsolete_multiline_headers_in_responses(true)
        .allow_multiple_spaces_in_response_status_delimiters(true)
        .ignore_invalid_headers_in_responses(true);
    config
}

/// The most header lines a stored response may have.
const MAX_HEADERS: usize = 4096;

fn parse_with<'b>(
    config: &httparse::ParserConfig,
    block: &'b [u8],
    headers: &mut [httparse::Header<'b>],
) -> Result<Option<ResponseHead>, httparse::Error> {
    let mut resp = httparse::Response::new(headers);
    let httparse::Status::Complete(body_offset) = config.parse_response(&mut resp, block)? else {
        return Ok(None);
    };
    let Some(status) = resp.code else {
        return Ok(None);
    };
    let headers = resp
        .headers
        .iter()
        .map(|h| {
            let value = String::from_utf8_lossy(h.value);
            // Folded lines keep their line breaks in httparse; one line each.
            let value = if value.contains(['\r', '\n']) {
                value
                    .split(['\r', '\n'])
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>()
                    .join(" ")
            } else {
                value.trim().to_string()
            };
            (h.name.to_string(), value)
        })
        .collect();
    Ok(Some(ResponseHead {
        status,
        headers,
        body_offset,
    }))
}

/// The `Location` of the response head `head` (the bytes up to the body),
/// read from its bytes rather than from [`parse_response_head`]'s lossy
/// text: bytes outside ASCII are percent-encoded as they are (see
/// [`percent_encode_8bit`]), so a Latin-1 `Location` resolves to the URL
/// the server meant rather than to one with replacement characters.
///
/// ```
/// let head = b"HTTP/1.1 301 Moved\r\nlocation: /caf\xe9\r\n\r\n";
/// assert_eq!(common::http::location(head).as_deref(), Some("/caf%E9"));
/// ```
pub fn location(head: &[u8]) -> Option<String> {
    head.split(|&b| b == b'\n').skip(1).find_map(|line| {
        let colon = memchr::memchr(b':', line)?;
        let name = line[..colon].trim_ascii();
        name.eq_ignore_ascii_case(b"location")
            .then(|| percent_encode_8bit(&line[colon + 1..]))
    })
}

/// A header value as text for a URL: trimmed, ASCII kept, every other byte
/// percent-encoded as it is (Latin-1 `é` → `%E9`, UTF-8 `é` → `%C3%A9`).
///
/// ```
/// assert_eq!(common::http::percent_encode_8bit(b" /caf\xe9 "), "/caf%E9");
/// ```
pub fn percent_encode_8bit(value: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(value.len());
    for &b in value.trim_ascii() {
        if b.is_ascii() {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// Splits a `Content-Type` value into the lower-case media type and the
/// `charset` parameter (unquoted, lower-case): `text/HTML; Charset="UTF-8"`
/// → (`text/html`, `Some("utf-8")`). A missing or empty value gives an empty
/// media type. See [`split_content_type`] for a version that does not allocate.
pub fn parse_content_type(value: &str) -> (String, Option<String>) {
    let (media, charset) = split_content_type(value);
    (
        media.to_ascii_lowercase(),
        charset.map(str::to_ascii_lowercase),
    )
}

/// [`parse_content_type`] without allocating: the media type and the
/// `charset` value as they are written (trimmed and unquoted, case kept;
/// compare them with `eq_ignore_ascii_case`).
///
/// ```
/// use common::http::split_content_type;
/// assert_eq!(split_content_type("text/HTML; Charset=\"UTF-8\""), ("text/HTML", Some("UTF-8")));
/// assert_eq!(split_content_type("text/plain"), ("text/plain", None));
/// ```
pub fn split_content_type(value: &str) -> (&str, Option<&str>) {
    let mut parts = value.split(';');
    let media = parts.next().unwrap_or_default().trim();
    let charset = parts.find_map(|param| {
        let (name, value) = param.split_once('=')?;
        if !name.trim().eq_ignore_ascii_case("charset") {
            return None;
        }
        let value = value.trim();
        // A quoted value ends at the next quote (or at the end, if unclosed).
        let value = match value.strip_prefix('"') {
            Some(quoted) => quoted.split('"').next().unwrap_or_default().trim(),
            None => value,
        };
        (!value.is_empty()).then_some(value)
    });
    (media, charset)
}

/// The target of the `rel="canonical"` link of a `Link` header value
/// (RFC 8288: `<https://example.com/a>; rel="canonical", <...>; rel=next`),
/// as written (relative to the response's URL), if it has one. A `rel`
/// holds space-separated relation types; a link's target may hold commas
/// and semicolons, which end nothing inside `<...>`.
///
/// ```
/// use common::http::link_canonical;
/// assert_eq!(link_canonical("</a,b>; rel=\"next\", </c>; Rel=\"alternate canonical\""), Some("/c"));
/// assert_eq!(link_canonical("<https://x.test/>; rel=canonical"), Some("https://x.test/"));
/// assert_eq!(link_canonical("</p>; title=\"rel=canonical\""), None);
/// ```
pub fn link_canonical(value: &str) -> Option<&str> {
    let mut rest = value;
    loop {
        let open = rest.find('<')?;
        let close = open + rest[open..].find('>')?;
        let target = &rest[open + 1..close];
        rest = &rest[close + 1..];
        // The parameters, up to the next link (a comma outside quotes).
        let mut end = rest.len();
        let mut quoted = false;
        for (i, c) in rest.char_indices() {
            match c {
                '"' => quoted = !quoted,
                ',' if !quoted => {
                    end = i;
                    break;
                }
                _ => {}
            }
        }
        let params = &rest[..end];
        rest = &rest[end..];
        let canonical = params.split(';').any(|p| {
            let Some((name, v)) = p.split_once('=') else {
                return false;
            };
            name.trim().eq_ignore_ascii_case("rel")
                && (v.trim().trim_matches('"').split_ascii_whitespace())
                    .any(|t| t.eq_ignore_ascii_case("canonical"))
        });
        if canonical {
            return Some(target.trim());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::Rng;

    fn names(h: &ResponseHead) -> Vec<(&str, &str)> {
        h.headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect()
    }

    #[test]
    fn parses_a_stored_response() {
        let block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\ncontent-length: 5\r\n\r\nhello";
        let h = parse_response_head(block).unwrap();
        assert_eq!(h.status, 200);
        assert_eq!(
            names(&h),
            [("Content-Type", "text/html"), ("content-length", "5")]
        );
        assert_eq!(&block[h.body_offset..], b"hello");
        assert_eq!(h.header("CONTENT-LENGTH"), Some("5"));
        assert_eq!(h.header("Location"), None);
    }

    #[test]
    fn tolerates_sloppy_servers() {
        // Bare LF, HTTP/1.0, no reason phrase, odd names, space before colon.
        let block = b"HTTP/1.0 301\nlocation: /b\nX-Weird_Name!: 1\nServer : x\n\n";
        let h = parse_response_head(block).unwrap();
        assert_eq!(h.status, 301);
        assert_eq!(h.header("Location"), Some("/b"));
        assert_eq!(h.header("x-weird_name!"), Some("1"));
        assert_eq!(h.header("server"), Some("x"));
        assert_eq!(h.body_offset, block.len());

        // Several spaces in the status line, a folded header.
        let block = b"HTTP/1.1  404  Not Found\r\nX-Long: a\r\n  b\r\nA: 1\r\n\r\n";
        let h = parse_response_head(block).unwrap();
        assert_eq!(h.status, 404);
        assert_eq!(h.header("x-long"), Some("a b"));
        assert_eq!(h.header("a"), Some("1"));

        // Not UTF-8: decoded lossily, not rejected.
        let block = b"HTTP/1.1 200 OK\r\nX-Bytes: caf\xe9\r\n\r\n";
        let h = parse_response_head(block).unwrap();
        assert_eq!(h.header("x-bytes"), Some("caf\u{fffd}"));

        // A line that is no header at all is skipped.
        let block = b"HTTP/1.1 200 OK\r\nthis is junk\r\nA: 1\r\n\r\n";
        let h = parse_response_head(block).unwrap();
        assert_eq!(names(&h), [("A", "1")]);
    }

    #[test]
    fn many_headers() {
        let mut block = b"HTTP/1.1 200 OK\r\n".to_vec();
        for i in 0..500 {
            block.extend_from_slice(format!("X-{i}: {i}\r\n").as_bytes());
        }
        block.extend_from_slice(b"\r\nbody");
        let h = parse_response_head(&block).unwrap();
        assert_eq!(h.headers.len(), 500);
        assert_eq!(h.header("x-499"), Some("499"));
        assert_eq!(&block[h.body_offset..], b"body");
    }

    #[test]
    fn garbage_is_none() {
        let cases: [&[u8]; 8] = [
            b"",
            b"hello world",
            b"HTTP/1.1 200 OK\r\nA: 1\r\n",
            b"GET / HTTP/1.1\r\n\r\n",
            b"HTTP/2 200\r\n\r\n",
            b"HTTP/1.1 abc OK\r\n\r\n",
            b"\x00\x01\x02\xff\xfe",
            b"<html><body>not a head</body></html>\r\n\r\n",
        ];
        for c in cases {
            assert_eq!(
                parse_response_head(c),
                None,
                "{:?}",
                String::from_utf8_lossy(c)
            );
        }
        // Every prefix and every byte flip of a real head: never a panic.
        let good = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nA:  b \r\n\r\nx";
        for i in 0..good.len() {
            let _ = parse_response_head(&good[..i]);
            for v in [0u8, b'\n', b':', b' ', 0xff] {
                let mut m = good.to_vec();
                m[i] = v;
                let _ = parse_response_head(&m);
            }
        }
        let mut huge = b"HTTP/1.1 200 OK\r\n".to_vec();
        for _ in 0..MAX_HEADERS + 1 {
            huge.extend_from_slice(b"A: 1\r\n");
        }
        huge.extend_from_slice(b"\r\n");
        assert_eq!(parse_response_head(&huge), None);
    }

    #[test]
    fn random_heads_never_panic_and_what_parses_is_one_line_per_header() {
        let pieces: [&[u8]; 22] = [
            b"HTTP/1.1 ",
            b"HTTP/1.0 ",
            b"200",
            b"301 Moved",
            b" OK",
            b"\r\n",
            b"\n",
            b"\r",
            b": ",
            b":",
            b"Location",
            b"Content-Type",
            b"x",
            b" ",
            b"\t",
            b"\r\n ",
            b"\r\n\t",
            b"\0",
            b"\xff",
            "é".as_bytes(),
            b"\r\n\r\n",
            b"body",
        ];
        let mut rng = Rng::new(17);
        let mut parsed = 0;
        for round in 0..30_000 {
            let block: Vec<u8> = if round % 5 == 0 {
                (0..rng.below(200)).map(|_| rng.next_u64() as u8).collect()
            } else {
                let mut b = b"HTTP/1.1 200 OK\r\n".to_vec();
                for _ in 0..rng.below(16) {
                    b.extend_from_slice(pieces[rng.below(pieces.len())]);
                }
                b.extend_from_slice(b"\r\n\r\n");
                b
            };
            let Some(h) = parse_response_head(&block) else {
                continue;
            };
            parsed += 1;
            assert!(h.body_offset <= block.len());
            assert!((100..=999).contains(&h.status), "{}", h.status);
            for (name, value) in &h.headers {
                assert!(!name.is_empty(), "{block:?}");
                assert!(!value.contains(['\r', '\n']), "{value:?} from {block:?}");
                assert_eq!(value, value.trim(), "{block:?}");
            }
        }
        assert!(parsed > 1000, "{parsed}");
    }

    #[test]
    fn content_types() {
        let cases: [(&str, &str, Option<&str>); 11] = [
            ("text/html", "text/html", None),
            ("text/HTML; Charset=\"UTF-8\"", "text/html", Some("utf-8")),
            (
                "text/html;charset=iso-8859-1",
                "text/html",
                Some("iso-8859-1"),
            ),
            (
                " Application/XHTML+XML ; q=1; charset = utf-8 ",
                "application/xhtml+xml",
                Some("utf-8"),
            ),
            ("text/plain; format=flowed", "text/plain", None),
            ("text/html; charset=", "text/html", None),
            ("text/html; charset=\"\"", "text/html", None),
            ("text/html; charset=\"utf-8", "text/html", Some("utf-8")),
            (
                "text/html; charset=\" UTF-8 \"x",
                "text/html",
                Some("utf-8"),
            ),
            ("", "", None),
            (";charset=utf-8", "", Some("utf-8")),
        ];
        for (input, media, charset) in cases {
            let (m, c) = parse_content_type(input);
            assert_eq!((m.as_str(), c.as_deref()), (media, charset), "{input:?}");
        }
    }
}
