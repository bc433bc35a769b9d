//! The charset of a page for its text, reconciled from what it declares
//! (byte order mark, the HTTP `Content-Type`'s `charset`, a `<meta>` in its
//! first 1024 bytes) and what its bytes are.
//!
//! A browser takes the first declaration in that order and reads the page
//! with it, right or wrong. For the text of a research corpus the bytes get
//! a say: a declaration that the bytes contradict (`UTF-8` declared, the
//! bytes are not UTF-8) loses to one they agree with, and with nothing
//! usable declared the bytes are guessed by `chardetng` (Firefox's
//! detector). The rules, in order:
//!
//! 1. a byte order mark decides (`bom`);
//! 2. the header and the `<meta>` agree, or only one of them is given, and
//!    the bytes decode in it without error: that one (`header`, `meta`);
//! 3. they disagree: the one the bytes decode in without error; if both do,
//!    UTF-8 when the page has non-ASCII bytes and is valid UTF-8 (no other
//!    encoding gives valid UTF-8 by chance), else the detector's guess when
//!    it is one of the two, else the header (the browser's choice);
//! 4. otherwise the detector's guess over the whole page (`detected`);
//!    a page of ASCII alone is UTF-8 (`default`).
//!
//! Names are the WHATWG Encoding Standard's (`UTF-8`, `windows-1252`,
//! `Shift_JIS`): a page labelled `iso-8859-1` is `windows-1252`, as every
//! browser reads it.

use encoding_rs::{Encoding, UTF_8};

/// Where the charset came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A byte order mark.
    Bom,
    /// The HTTP `Content-Type` header.
    Header,
    /// A `<meta charset>` or `<meta http-equiv=content-type>`.
    Meta,
    /// Guessed from the bytes (nothing usable declared).
    Detected,
    /// Nothing declared, ASCII only: UTF-8.
    Default,
}

impl Source {
    /// The name in the index (`content_charset_source`).
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Bom => "bom",
            Source::Header => "header",
            Source::Meta => "meta",
            Source::Detected => "detected",
            Source::Default => "default",
        }
    }
}

/// The charset decided for a page.
#[derive(Debug, Clone, Copy)]
pub struct Charset {
    /// The encoding.
    pub encoding: &'static Encoding,
    /// Where it came from.
    pub source: Source,
    /// Bytes of byte order mark at the start of the body.
    pub bom_len: usize,
}

/// Reconciles the declarations of `body` (the `charset` of its
/// `Content-Type`, if any) with its bytes. `tld`: the last label of the
/// page's host, lower case, which tunes the detector's guess.
pub fn reconcile(header: Option<&str>, body: &[u8], tld: Option<&str>) -> Charset {
    if let Some((encoding, bom_len)) = Encoding::for_bom(body) {
        return Charset {
            encoding,
            source: Source::Bom,
            bom_len,
        };
    }
    let header = header.and_then(|l| Encoding::for_label(l.trim().as_bytes()));
    let meta = common::extract::meta_charset(body);
    let decided = |encoding, source| Charset {
        encoding,
        source,
        bom_len: 0,
    };
    match (header, meta) {
        (Some(h), Some(m)) if h != m => {
            let (h_fits, m_fits) = (fits(h, body), fits(m, body));
            let pick = match (h_fits, m_fits) {
                (true, false) => Source::Header,
                (false, true) => Source::Meta,
                (false, false) => return decided(guess(body, tld), Source::Detected),
                (true, true) if m == UTF_8 && !body.is_ascii() => Source::Meta,
                (true, true) if h == UTF_8 && !body.is_ascii() => Source::Header,
                (true, true) if guess(body, tld) == m => Source::Meta,
                (true, true) => Source::Header,
            };
            let encoding = if pick == Source::Meta { m } else { h };
            decided(encoding, pick)
        }
        (Some(declared), _) | (None, Some(declared)) => {
            let source = if header.is_some() {
                Source::Header
            } else {
                Source::Meta
            };
            if fits(declared, body) {
                decided(declared, source)
            } else {
                decided(guess(body, tld), Source::Detected)
            }
        }
        (None, None) if body.is_ascii() => decided(UTF_8, Source::Default),
        (None, None) => decided(guess(body, tld), Source::Detected),
    }
}

/// Whether `body` decodes in `encoding` without a malformed sequence (for
/// single-byte encodings, always).
fn fits(encoding: &'static Encoding, body: &[u8]) -> bool {
    if encoding == UTF_8 {
        return utf8_but_cut_end(body);
    }
    if body.is_ascii() && encoding.is_ascii_compatible() {
        return true;
    }
    let mut decoder = encoding.new_decoder_without_bom_handling();
    let mut out = vec![0u8; 8192];
    let mut rest = body;
    loop {
        let (result, read, _) = decoder.decode_to_utf8_without_replacement(rest, &mut out, true);
        rest = &rest[read..];
        match result {
            encoding_rs::DecoderResult::InputEmpty => return true,
            encoding_rs::DecoderResult::OutputFull => {}
            encoding_rs::DecoderResult::Malformed(..) => return false,
        }
    }
}

/// True when `body` is valid UTF-8, or would be but for a character cut at
/// its end (a body cut at a size limit).
fn utf8_but_cut_end(body: &[u8]) -> bool {
    match std::str::from_utf8(body) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none() && body.len() - e.valid_up_to() < 4,
    }
}

/// The detector's guess for `body`, UTF-8 allowed.
fn guess(body: &[u8], tld: Option<&str>) -> &'static Encoding {
    if std::str::from_utf8(body).is_ok() {
        return UTF_8;
    }
    let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    detector.feed(body, true);
    let tld = tld.filter(|t| {
        !t.is_empty()
            && t.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    });
    detector.guess(tld.map(str::as_bytes), chardetng::Utf8Detection::Allow)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(header: Option<&str>, body: &[u8]) -> (&'static str, &'static str) {
        let c = reconcile(header, body, None);
        (c.encoding.name(), c.source.as_str())
    }

    #[test]
    fn declarations_and_bytes_are_reconciled() {
        let latin1 = b"<meta charset=iso-8859-1><p>caf\xe9 cr\xe8me br\xfbl\xe9e";
        assert_eq!(of(None, latin1), ("windows-1252", "meta"));
        // The header says UTF-8, the bytes are not: the meta wins.
        assert_eq!(of(Some("utf-8"), latin1), ("windows-1252", "meta"));
        let utf8 = "<meta charset=iso-8859-1><p>café crème brûlée".as_bytes();
        // Valid UTF-8 with non-ASCII against a single-byte meta: UTF-8.
        assert_eq!(of(Some("utf-8"), utf8), ("UTF-8", "header"));
        let sjis = b"<meta charset=shift_jis><p>\x93\xfa\x96\x7b\x8c\xea";
        assert_eq!(of(Some("utf-8"), sjis), ("Shift_JIS", "meta"));
        assert_eq!(of(Some("EUC-JP"), b"plain ascii"), ("EUC-JP", "header"));
        assert_eq!(of(None, b"plain ascii"), ("UTF-8", "default"));
        assert_eq!(of(None, "déjà vu".as_bytes()), ("UTF-8", "detected"));
        assert_eq!(of(Some("latin1"), b"\xef\xbb\xbfx"), ("UTF-8", "bom"));
        // Declared UTF-8 but it is not: guessed.
        assert_eq!(
            of(Some("utf-8"), b"caf\xe9 cr\xe8me"),
            ("windows-1252", "detected")
        );
    }
}
