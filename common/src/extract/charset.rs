//! Which character encoding a page is written in, decided the way a browser
//! decides it before parsing: byte order mark, then the `charset` of the HTTP
//! `Content-Type`, then a prescan of the first 1024 bytes for a `<meta>`
//! declaration (the WHATWG "prescan a byte stream" algorithm), then UTF-8.
//!
//! The byte order mark wins over the HTTP header, as in the HTML standard and
//! in every browser: a page that starts with a BOM is in that encoding
//! whatever its server claims.

use encoding_rs::{Encoding, UTF_8, UTF_16BE, UTF_16LE, WINDOWS_1252, X_USER_DEFINED};

/// How many bytes the `<meta>` prescan looks at.
pub(crate) const PRESCAN_LEN: usize = 1024;

/// Where the encoding of a page came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CharsetSource {
    /// A byte order mark at the start of the body.
    Bom,
    /// The `charset` parameter of the HTTP `Content-Type`.
    Header,
    /// A `<meta charset>` or `<meta http-equiv=content-type>` in the first 1024 bytes.
    Meta,
    /// Nothing declared: UTF-8 (invalid bytes decode to U+FFFD).
    Default,
}

/// The encoding decided for a page, and how many bytes of BOM to skip.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Detected {
    pub(crate) encoding: &'static Encoding,
    pub(crate) source: CharsetSource,
    pub(crate) bom_len: usize,
}

/// Decides the encoding of `body` given the `charset` parameter of its
/// `Content-Type`, if any. Labels that name no encoding are ignored.
pub(crate) fn detect(header_charset: Option<&str>, body: &[u8]) -> Detected {
    if let Some((encoding, bom_len)) = Encoding::for_bom(body) {
        return Detected {
            encoding,
            source: CharsetSource::Bom,
            bom_len,
        };
    }
    if let Some(encoding) = header_charset.and_then(|l| Encoding::for_label(l.as_bytes())) {
        return Detected {
            encoding,
            source: CharsetSource::Header,
            bom_len: 0,
        };
    }
    if let Some(encoding) = prescan(&body[..body.len().min(PRESCAN_LEN)]) {
        return Detected {
            encoding,
            source: CharsetSource::Meta,
            bom_len: 0,
        };
    }
    Detected {
        encoding: UTF_8,
        source: CharsetSource::Default,
        bom_len: 0,
    }
}

fn is_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\x0C' | b'\r' | b' ')
}

/// The WHATWG "prescan a byte stream to determine its encoding" over `bytes`
/// (the caller passes at most the first 1024 bytes). `None` when nothing
/// usable is declared, or when the input ends inside a construct.
pub(crate) fn prescan(bytes: &[u8]) -> Option<&'static Encoding> {
    let mut pos = 0;
    while pos < bytes.len() {
        let rest = &bytes[pos..];
        if rest.starts_with(b"<!--") {
            // The first `>` preceded by `--`, counting the dashes of `<!--`.
            let end = (pos + 4..bytes.len()).find(|&i| {
                bytes[i] == b'>' && i >= pos + 3 && bytes[i - 1] == b'-' && bytes[i - 2] == b'-'
            })?;
            pos = end + 1;
            continue;
        }
        if rest.len() >= 6 && rest[..5].eq_ignore_ascii_case(b"<meta") && {
            let b = rest[5];
            is_space(b) || b == b'/'
        } {
            pos += 6;
            let mut seen = AttrNames::default();
            let mut got_pragma = false;
            let mut need_pragma: Option<bool> = None;
            let mut charset: Option<&'static Encoding> = None;
            loop {
                match attribute(bytes, &mut pos) {
                    AttrStep::Attr(name, value) => {
                        if !seen.insert(name) {
                            continue;
                        }
                        if name.eq_ignore_ascii_case(b"http-equiv") {
                            if value.eq_ignore_ascii_case(b"content-type") {
                                got_pragma = true;
                            }
                        } else if name.eq_ignore_ascii_case(b"content") {
                            if charset.is_none()
                                && let Some(label) = charset_from_content(value)
                                && let Some(enc) = Encoding::for_label(label)
                            {
                                charset = Some(enc);
                                need_pragma = Some(true);
                            }
                        } else if name.eq_ignore_ascii_case(b"charset") {
                            charset = Encoding::for_label(value);
                            need_pragma = Some(false);
                        }
                    }
                    AttrStep::End => break,
                    AttrStep::OutOfInput => return None,
                }
            }
            let usable = match need_pragma {
                None => false,
                Some(true) => got_pragma,
                Some(false) => true,
            };
            if usable && let Some(enc) = charset {
                return Some(if enc == UTF_16BE || enc == UTF_16LE {
                    UTF_8
                } else if enc == X_USER_DEFINED {
                    WINDOWS_1252
                } else {
                    enc
                });
            }
            pos += 1;
            continue;
        }
        let tag_start = rest.len() >= 2
            && (rest[1].is_ascii_alphabetic()
                || (rest[1] == b'/' && rest.len() >= 3 && rest[2].is_ascii_alphabetic()));
        if rest[0] == b'<' && tag_start {
            pos += 2;
            while pos < bytes.len() && !is_space(bytes[pos]) && bytes[pos] != b'>' {
                pos += 1;
            }
            if pos >= bytes.len() {
                return None;
            }
            loop {
                match attribute(bytes, &mut pos) {
                    AttrStep::Attr(..) => {}
                    AttrStep::End => break,
                    AttrStep::OutOfInput => return None,
                }
            }
            pos += 1;
            continue;
        }
        if rest.starts_with(b"<!") || rest.starts_with(b"</") || rest.starts_with(b"<?") {
            pos += 2 + rest[2..].iter().position(|&b| b == b'>')?;
            pos += 1;
            continue;
        }
        pos += 1;
    }
    None
}

/// Attribute names already seen in one `<meta>` (only the first of each counts).
#[derive(Default)]
struct AttrNames {
    http_equiv: bool,
    content: bool,
    charset: bool,
}

impl AttrNames {
    /// Records `name`; false if it was seen before. Names that play no part
    /// are always "new".
    fn insert(&mut self, name: &[u8]) -> bool {
        let flag = if name.eq_ignore_ascii_case(b"http-equiv") {
            &mut self.http_equiv
        } else if name.eq_ignore_ascii_case(b"content") {
            &mut self.content
        } else if name.eq_ignore_ascii_case(b"charset") {
            &mut self.charset
        } else {
            return true;
        };
        !std::mem::replace(flag, true)
    }
}

enum AttrStep<'a> {
    /// A name and a value (both as written; compare without case).
    Attr(&'a [u8], &'a [u8]),
    /// No more attributes: `pos` is on the `>`.
    End,
    /// The input ended inside the tag.
    OutOfInput,
}

/// The prescan's "get an attribute": reads one attribute at `*pos`.
fn attribute<'a>(bytes: &'a [u8], pos: &mut usize) -> AttrStep<'a> {
    let at = |p: usize| bytes.get(p).copied();
    while matches!(at(*pos), Some(b) if is_space(b) || b == b'/') {
        *pos += 1;
    }
    match at(*pos) {
        None => return AttrStep::OutOfInput,
        Some(b'>') => return AttrStep::End,
        Some(_) => {}
    }
    // The name: up to `=` (not as its first byte), space, `/` or `>`.
    let name_start = *pos;
    loop {
        match at(*pos) {
            None => return AttrStep::OutOfInput,
            Some(b'=') if *pos > name_start => break,
            Some(b) if is_space(b) => {
                while matches!(at(*pos), Some(b) if is_space(b)) {
                    *pos += 1;
                }
                match at(*pos) {
                    None => return AttrStep::OutOfInput,
                    Some(b'=') => break,
                    Some(_) => return AttrStep::Attr(&bytes[name_start..*pos], b""),
                }
            }
            Some(b'/' | b'>') => return AttrStep::Attr(&bytes[name_start..*pos], b""),
            Some(_) => *pos += 1,
        }
    }
    let name_end = {
        let mut end = *pos;
        while end > name_start && is_space(bytes[end - 1]) {
            end -= 1;
        }
        end
    };
    let name = &bytes[name_start..name_end];
    *pos += 1; // the `=`
    while matches!(at(*pos), Some(b) if is_space(b)) {
        *pos += 1;
    }
    match at(*pos) {
        None => AttrStep::OutOfInput,
        Some(q @ (b'"' | b'\'')) => {
            let start = *pos + 1;
            match bytes[start..].iter().position(|&b| b == q) {
                Some(len) => {
                    *pos = start + len + 1;
                    AttrStep::Attr(name, &bytes[start..start + len])
                }
                None => AttrStep::OutOfInput,
            }
        }
        Some(b'>') => AttrStep::Attr(name, b""),
        Some(_) => {
            let start = *pos;
            while matches!(at(*pos), Some(b) if !is_space(b) && b != b'>') {
                *pos += 1;
            }
            if *pos >= bytes.len() {
                return AttrStep::OutOfInput;
            }
            AttrStep::Attr(name, &bytes[start..*pos])
        }
    }
}

/// The WHATWG "extract a character encoding from a meta element" on the
/// value of a `content` attribute: the label after `charset=`.
pub(crate) fn charset_from_content(value: &[u8]) -> Option<&[u8]> {
    let mut pos = 0;
    loop {
        let found = value[pos..]
            .windows(7)
            .position(|w| w.eq_ignore_ascii_case(b"charset"))?;
        pos += found + 7;
        while value.get(pos).is_some_and(|&b| is_space(b)) {
            pos += 1;
        }
        if value.get(pos) == Some(&b'=') {
            pos += 1;
            break;
        }
    }
    while value.get(pos).is_some_and(|&b| is_space(b)) {
        pos += 1;
    }
    match value.get(pos) {
        None => None,
        Some(&q @ (b'"' | b'\'')) => {
            let rest = &value[pos + 1..];
            let len = rest.iter().position(|&b| b == q)?;
            Some(&rest[..len])
        }
        Some(_) => {
            let rest = &value[pos..];
            let len = rest
                .iter()
                .position(|&b| is_space(b) || b == b';')
                .unwrap_or(rest.len());
            (len > 0).then(|| &rest[..len])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use encoding_rs::{EUC_JP, ISO_8859_2, SHIFT_JIS, WINDOWS_1251};

    #[test]
    fn prescan_finds_declarations() {
        let rows: &[(&[u8], Option<&'static Encoding>)] = &[
            (b"<meta charset=shift_jis>", Some(SHIFT_JIS)),
            (b"<META CHARSET='Shift_JIS'>", Some(SHIFT_JIS)),
            (
                b"<html><head><meta charset=\"windows-1251\">",
                Some(WINDOWS_1251),
            ),
            (
                b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=iso-8859-2\">",
                Some(ISO_8859_2),
            ),
            (
                b"<meta content='text/html;charset=euc-jp' http-equiv=content-type>",
                Some(EUC_JP),
            ),
            // content without the pragma does not count
            (b"<meta content=\"text/html; charset=euc-jp\">", None),
            // a declaration inside a comment does not count
            (b"<!-- <meta charset=euc-jp> --><p>", None),
            (b"<!-- x --><meta charset=euc-jp>", Some(EUC_JP)),
            // inside another tag's attribute value
            (b"<div title='<meta charset=euc-jp>'>", None),
            // utf-16 declared in a meta means utf-8
            (b"<meta charset=utf-16le>", Some(UTF_8)),
            (b"<meta charset=x-user-defined>", Some(WINDOWS_1252)),
            // unknown label, then a good one: the first meta with a charset decides
            (b"<meta charset=bogus><meta charset=euc-jp>", Some(EUC_JP)),
            // cut off in the middle
            (b"<meta charset=\"euc-jp", None),
            (b"<!-- unterminated", None),
            (b"", None),
            (b"plain text", None),
        ];
        for (input, want) in rows {
            assert_eq!(
                prescan(input).map(|e| e.name()),
                want.map(|e| e.name()),
                "{}",
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn prescan_stops_at_1024_bytes() {
        let mut page = vec![b' '; PRESCAN_LEN];
        page.extend_from_slice(b"<meta charset=euc-jp>");
        assert_eq!(detect(None, &page).source, CharsetSource::Default);
        let mut page = vec![b' '; PRESCAN_LEN - 30];
        page.extend_from_slice(b"<meta charset=euc-jp>");
        assert_eq!(detect(None, &page).encoding, EUC_JP);
    }

    #[test]
    fn content_attribute_charset() {
        let rows: &[(&[u8], Option<&[u8]>)] = &[
            (b"text/html; charset=utf-8", Some(b"utf-8")),
            (b"text/html;CHARSET = 'latin1' ", Some(b"latin1")),
            (b"text/html; charset=\"unterminated", None),
            (b"text/html; charset=", None),
            (b"text/html", None),
            (b"charsetx charset=koi8-r;x", Some(b"koi8-r")),
        ];
        for (input, want) in rows {
            assert_eq!(charset_from_content(input), *want);
        }
    }
}
