//! How much of a robots.txt both programs read: the fetcher's rules (and
//! the body it keeps in `hosts.db`) and the `Sitemap:` lines the segmenter
//! and the fetcher take from it ([`crate::sitemaps`]) come from the same
//! bytes.

/// How much of a robots.txt body is read: 500 KiB (512,000 bytes).
///
/// RFC 9309 asks crawlers to parse at least 500 KiB; we parse exactly that,
/// which bounds the memory and time a hostile file can cost. To tell a body
/// that ends at the limit from one cut by it, a caller that stops reading
/// early should read up to `MAX_BYTES + 1` bytes.
pub const MAX_BYTES: usize = 500 * 1024;

/// The part of `body` that is read: at most [`MAX_BYTES`], without the
/// line the limit cuts (a cut line could change a rule's meaning or name
/// half a URL).
///
/// ```
/// use common::robots_txt::{MAX_BYTES, parsed_part};
/// let mut body = b"Sitemap: http://a.example/s.xml\n".to_vec();
/// assert_eq!(parsed_part(&body), &body[..]);
/// body.resize(MAX_BYTES + 10, b'x');
/// assert_eq!(parsed_part(&body), b"Sitemap: http://a.example/s.xml");
/// ```
pub fn parsed_part(body: &[u8]) -> &[u8] {
    if body.len() <= MAX_BYTES {
        return body;
    }
    let head = &body[..MAX_BYTES];
    if is_line_end(body[MAX_BYTES]) {
        return head;
    }
    match head.iter().rposition(|&b| is_line_end(b)) {
        Some(end) => &head[..end],
        None => &[],
    }
}

fn is_line_end(b: u8) -> bool {
    b == b'\n' || b == b'\r'
}
