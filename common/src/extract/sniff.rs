//! Is this response HTML? The declared media type decides, except when it
//! is missing or says nothing useful (`application/octet-stream`,
//! `text/plain`, ...): then the start of the body is sniffed, as browsers do.

/// What a `Content-Type` media type says about HTML.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Declared {
    /// `text/html` or `application/xhtml+xml`.
    Html,
    /// Missing or generic: look at the body.
    Unknown,
    /// Some other type (images, PDF, JSON, CSS, ...).
    Other,
}

/// Classifies a media type (without parameters; any case).
pub(crate) fn declared(media: &str) -> Declared {
    const HTML: [&str; 2] = ["text/html", "application/xhtml+xml"];
    const GENERIC: [&str; 7] = [
        "",
        "application/octet-stream",
        "binary/octet-stream",
        "text/plain",
        "application/unknown",
        "unknown/unknown",
        "*/*",
    ];
    if HTML.iter().any(|t| t.eq_ignore_ascii_case(media)) {
        Declared::Html
    } else if GENERIC.iter().any(|t| t.eq_ignore_ascii_case(media)) {
        Declared::Unknown
    } else {
        Declared::Other
    }
}

/// How many bytes of the body the sniffers look at.
const SNIFF_LEN: usize = 1024;

/// The WHATWG "binary data bytes": control characters that text never
/// contains (a table: the test runs over the first KB of every page).
const BINARY_BYTE: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        t[b] = !matches!(b, 0x09 | 0x0A | 0x0C | 0x0D | 0x1B);
        b += 1;
    }
    t
};

/// Whether the start of a body (in an ASCII-compatible encoding) is binary
/// rather than text: a NUL byte, or more than one byte in 32 a control
/// character that text does not contain. A stray control byte in a real
/// page does not make it binary.
pub(crate) fn looks_binary(body: &[u8]) -> bool {
    let head = &body[..body.len().min(SNIFF_LEN)];
    let binary: usize = head
        .iter()
        .map(|&b| usize::from(BINARY_BYTE[b as usize]))
        .sum();
    head.contains(&0) || binary * 32 > head.len()
}

/// Whether the start of `body` looks like an HTML document: after leading
/// white space (and a UTF-8 BOM), one of the WHATWG HTML signatures
/// (`<!DOCTYPE HTML`, `<html`, `<head`, `<body`, `<script`, `<!--`, `<p`,
/// ...) ends with a space or `>`; or, anywhere in the first 1024 bytes, an
/// `<html` tag or an HTML doctype (pages that start with an XML declaration
/// or a comment).
pub(crate) fn looks_like_html(body: &[u8]) -> bool {
    const SIGNATURES: [&[u8]; 16] = [
        b"<!doctype html",
        b"<html",
        b"<head",
        b"<script",
        b"<iframe",
        b"<h1",
        b"<div",
        b"<font",
        b"<table",
        b"<a",
        b"<style",
        b"<title",
        b"<b",
        b"<body",
        b"<br",
        b"<p",
    ];
    let head = &body[..body.len().min(SNIFF_LEN)];
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let start = head
        .iter()
        .position(|&b| !matches!(b, b'\t' | b'\n' | b'\x0C' | b'\r' | b' '))
        .unwrap_or(head.len());
    let text = &head[start..];
    let ends_tag = |rest: &[u8]| matches!(rest.first(), Some(b' ' | b'>'));
    let signature = SIGNATURES.iter().any(|sig| {
        text.len() > sig.len()
            && text[..sig.len()].eq_ignore_ascii_case(sig)
            && ends_tag(&text[sig.len()..])
    });
    if signature || text.starts_with(b"<!--") {
        return true;
    }
    let find = |needle: &[u8]| {
        head.windows(needle.len())
            .position(|w| w.eq_ignore_ascii_case(needle))
            .map(|i| &head[i + needle.len()..])
    };
    find(b"<!doctype html")
        .is_some_and(|rest| matches!(rest.first(), Some(b' ' | b'>' | b'\t' | b'\n' | b'\r')))
        || find(b"<html")
            .is_some_and(|rest| matches!(rest.first(), Some(b' ' | b'>' | b'\t' | b'\n' | b'\r')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types() {
        assert_eq!(declared("text/html"), Declared::Html);
        assert_eq!(declared("TEXT/HTML"), Declared::Html);
        assert_eq!(declared("application/xhtml+xml"), Declared::Html);
        assert_eq!(declared(""), Declared::Unknown);
        assert_eq!(declared("application/octet-stream"), Declared::Unknown);
        assert_eq!(declared("text/plain"), Declared::Unknown);
        assert_eq!(declared("image/png"), Declared::Other);
        assert_eq!(declared("application/json"), Declared::Other);
        assert_eq!(declared("text/css"), Declared::Other);
    }

    #[test]
    fn html_signatures() {
        let html: &[&[u8]] = &[
            b"<!DOCTYPE html><p>",
            b"  \n<HTML lang=en>",
            b"\xEF\xBB\xBF<html>",
            b"<head><title>x</title>",
            b"<p>hello",
            b"<a href=x>",
            b"<!-- generated -->",
            b"<?xml version=\"1.0\"?>\n<!DOCTYPE html>",
            b"<?xml version=\"1.0\"?><html xmlns=\"http://www.w3.org/1999/xhtml\">",
        ];
        for body in html {
            assert!(looks_like_html(body), "{}", String::from_utf8_lossy(body));
        }
        let not_html: &[&[u8]] = &[
            b"",
            b"a note about <html5> and <htmlx>",
            b"<htmlx>",
            b"<abbr>",
            b"{\"json\": true}",
            b"\x89PNG\r\n\x1a\n",
            b"<?xml version=\"1.0\"?><rss>",
        ];
        for body in not_html {
            assert!(!looks_like_html(body), "{}", String::from_utf8_lossy(body));
        }
    }

    #[test]
    fn binary_bodies() {
        assert!(looks_binary(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"));
        assert!(looks_binary(b"\x1f\x8b\x08\x00\x00\x00\x00\x00"));
        assert!(looks_binary(b"<html>\0</html>"));
        assert!(!looks_binary(b"<html><body>text</body></html>"));
        assert!(!looks_binary(b""));
        let mut page = b"<html><body>".to_vec();
        page.extend_from_slice(&[b'x'; 200]);
        page.push(0x1A); // one stray control byte in a real page
        assert!(!looks_binary(&page));
    }
}
