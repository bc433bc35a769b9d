//! The MIME type of a payload as its bytes show it (Common Crawl's
//! `content_mime_detected`, which it gets from Apache Tika), next to the
//! type the server declared.
//!
//! The signatures are those of the WHATWG MIME Sniffing Standard's tables
//! (images, audio and video, fonts, archives, PDF, PostScript), then HTML
//! as the link extractor sniffs it, then XML by its root element (RSS,
//! Atom, SVG, XHTML, sitemaps), JSON, and text. A payload the signatures do
//! not place keeps its declared type when that is plausible (a text type
//! for text, any type for binary bytes), else `text/plain` or
//! `application/octet-stream`. An empty payload has no type.

/// Byte signatures: (prefix, type). `?` in a prefix matches any byte.
const SIGNATURES: &[(&[u8], &str)] = &[
    (b"%PDF-", "application/pdf"),
    (b"%!PS-Adobe-", "application/postscript"),
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"RIFF????WEBPVP", "image/webp"),
    (b"RIFF????WAVE", "audio/wav"),
    (b"RIFF????AVI ", "video/x-msvideo"),
    (b"BM", "image/bmp"),
    (b"\x00\x00\x01\x00", "image/x-icon"),
    (b"\x00\x00\x02\x00", "image/x-icon"),
    (b"ID3", "audio/mpeg"),
    (b"OggS\x00", "application/ogg"),
    (b"\x1aE\xdf\xa3", "video/webm"),
    (b"????ftyp", "video/mp4"),
    (b"wOFF", "font/woff"),
    (b"wOF2", "font/woff2"),
    (b"PK\x03\x04", "application/zip"),
    (b"\x1f\x8b\x08", "application/gzip"),
    (b"Rar!\x1a\x07", "application/x-rar-compressed"),
    (b"7z\xbc\xaf\x27\x1c", "application/x-7z-compressed"),
    (b"\x28\xb5\x2f\xfd", "application/zstd"),
    (b"\x7fELF", "application/x-executable"),
];

fn matches(body: &[u8], prefix: &[u8]) -> bool {
    body.len() >= prefix.len() && prefix.iter().zip(body).all(|(&p, &b)| p == b'?' || p == b)
}

/// The detected type of `body` (decoded from its content coding), given
/// the declared media type (`declared`, lower case, no parameters; empty
/// when none) and whether the page was read as HTML.
pub fn detect(declared: &str, body: &[u8], html: bool) -> Option<&'static str> {
    if body.is_empty() {
        return None;
    }
    if let Some((_, t)) = SIGNATURES.iter().find(|(p, _)| matches(body, p)) {
        return Some(t);
    }
    if html {
        return Some(if declared == "application/xhtml+xml" {
            "application/xhtml+xml"
        } else {
            "text/html"
        });
    }
    let text = text_start(body);
    if text.is_none() {
        return Some(known(declared).unwrap_or("application/octet-stream"));
    }
    let start = text.unwrap_or_default();
    if start.starts_with(b"<") {
        if let Some(t) = xml_type(start) {
            return Some(t);
        }
    } else if (start.starts_with(b"{") || start.starts_with(b"["))
        && (declared.contains("json")
            || serde_json::from_slice::<serde::de::IgnoredAny>(body).is_ok())
    {
        return Some(if declared.ends_with("+json") {
            known(declared).unwrap_or("application/json")
        } else {
            "application/json"
        });
    }
    Some(match known(declared) {
        Some(t) if t.starts_with("text/") || t.contains("javascript") || t.ends_with("+xml") => t,
        _ => "text/plain",
    })
}

/// The start of `body` after a UTF-8 byte order mark and white space, if
/// it looks like text (no byte that text does not contain in its first
/// kilobyte).
fn text_start(body: &[u8]) -> Option<&[u8]> {
    let head = &body[..body.len().min(1024)];
    let binary = head
        .iter()
        .any(|&b| matches!(b, 0x00..=0x08 | 0x0B | 0x0E..=0x1A | 0x1C..=0x1F));
    if binary {
        return None;
    }
    let body = body.strip_prefix(b"\xef\xbb\xbf").unwrap_or(body);
    let skip = body.iter().take_while(|b| b.is_ascii_whitespace()).count();
    Some(&body[skip..])
}

/// The type of an XML document by its root element; `None` if `start`
/// does not read as XML.
fn xml_type(start: &[u8]) -> Option<&'static str> {
    let head = &start[..start.len().min(2048)];
    let mut at = 0;
    // Past the declaration, comments, processing instructions, doctype.
    while let Some(i) = memchr::memchr(b'<', &head[at..]) {
        let p = at + i;
        let next = *head.get(p + 1)?;
        if next == b'?' || next == b'!' {
            at = p + 1;
            continue;
        }
        let name: Vec<u8> = head[p + 1..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b':' | b'-' | b'_'))
            .map(u8::to_ascii_lowercase)
            .collect();
        let local = name.rsplit(|&b| b == b':').next().unwrap_or_default();
        return Some(match local {
            b"rss" | b"rdf" => "application/rss+xml",
            b"feed" => "application/atom+xml",
            b"svg" => "image/svg+xml",
            b"html" => "application/xhtml+xml",
            _ if start.starts_with(b"<?xml") => "application/xml",
            _ => return None,
        });
    }
    start.starts_with(b"<?xml").then_some("application/xml")
}

/// `declared` if it is a well-formed type (`type/subtype`), as a static
/// string when it is a common one; otherwise `None`.
fn known(declared: &str) -> Option<&'static str> {
    const COMMON: &[&str] = &[
        "text/plain",
        "text/css",
        "text/csv",
        "text/javascript",
        "text/markdown",
        "text/calendar",
        "text/xml",
        "application/javascript",
        "application/json",
        "application/ld+json",
        "application/manifest+json",
        "application/xml",
        "application/rss+xml",
        "application/atom+xml",
        "application/pdf",
        "application/msword",
        "application/octet-stream",
        "application/wasm",
        "image/svg+xml",
        "image/avif",
        "image/tiff",
        "font/ttf",
        "font/otf",
        "audio/aac",
        "audio/flac",
        "video/quicktime",
    ];
    COMMON.iter().find(|t| **t == declared).copied()
}

#[cfg(test)]
mod tests {
    use super::detect;

    #[test]
    fn signatures_then_markup_then_text() {
        assert_eq!(
            detect("text/html", b"%PDF-1.7 ...", false),
            Some("application/pdf")
        );
        assert_eq!(
            detect("", b"\x89PNG\r\n\x1a\n....", false),
            Some("image/png")
        );
        assert_eq!(detect("text/plain", b"<html><p>x", true), Some("text/html"));
        let rss = b"<?xml version=\"1.0\"?>\n<rss version=\"2.0\"><channel>";
        assert_eq!(detect("text/xml", rss, false), Some("application/rss+xml"));
        let sitemap = b"<?xml version=\"1.0\"?><urlset xmlns=\"x\"></urlset>";
        assert_eq!(
            detect("application/xml", sitemap, false),
            Some("application/xml")
        );
        assert_eq!(
            detect("", b" {\"a\": [1, 2]}", false),
            Some("application/json")
        );
        assert_eq!(
            detect("text/css", b"body { color: red }", false),
            Some("text/css")
        );
        assert_eq!(
            detect("image/png", b"just words", false),
            Some("text/plain")
        );
        assert_eq!(
            detect("", b"\x00\x01\x02", false),
            Some("application/octet-stream")
        );
        assert_eq!(detect("text/html", b"", false), None);
    }
}
