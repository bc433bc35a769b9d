//! Character references in attribute values (`&amp;`, `&#233;`, `&#x2F;`).
//!
//! The HTML parser gives attribute values as written; a browser decodes the
//! character references before it resolves a link, so `href="?a=1&amp;b=2"`
//! means `?a=1&b=2`. Numeric references follow the HTML standard exactly
//! (including the windows-1252 remapping of 0x80–0x9F). Named references are
//! decoded for the names that occur in links: the Latin-1 set (`&eacute;`,
//! `&nbsp;`), which is also the set a browser accepts without a `;`, and the
//! ASCII punctuation names (`&sol;`, `&quest;`, `&equals;`, ...). Other names
//! are left as written. In attributes, a reference without `;` that is
//! followed by `=` or a letter or digit is text (`?a=1&copy=2` stays as is).

/// Decodes the character references of `value` into `out` (cleared first).
/// Returns false, leaving `out` empty, when `value` has none (the caller
/// then uses `value` itself).
pub(crate) fn decode_into(value: &str, out: &mut String) -> bool {
    out.clear();
    let Some(first) = super::tokenizer::find(b'&', value.as_bytes()) else {
        return false;
    };
    out.push_str(&value[..first]);
    let mut rest = &value[first..];
    while let Some(amp) = super::tokenizer::find(b'&', rest.as_bytes()) {
        out.push_str(&rest[..amp]);
        rest = &rest[amp + 1..];
        match reference(rest) {
            Some((ch, used)) => {
                out.push(ch);
                rest = &rest[used..];
            }
            None => out.push('&'),
        }
    }
    out.push_str(rest);
    true
}

/// Decodes the reference that starts right after a `&`: the character and
/// how many bytes of `after` it used. `None`: the `&` is plain text.
fn reference(after: &str) -> Option<(char, usize)> {
    let bytes = after.as_bytes();
    if bytes.first() == Some(&b'#') {
        return numeric(bytes);
    }
    let len = bytes
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric())
        .count();
    if len == 0 {
        return None;
    }
    let name = &after[..len];
    if bytes.get(len) == Some(&b';')
        && let Some(ch) = named(name, true)
    {
        return Some((ch, len + 1));
    }
    // `&amp;` handled above; `&ampx;` falls through to the legacy rule,
    // which refuses it because a letter follows `amp`.
    // Without `;`, only the legacy names, and in attributes only when the
    // next character is neither `=` nor alphanumeric (the run of
    // alphanumerics ended at `len`, so only `=` is left to check).
    if bytes.get(len) == Some(&b'=') {
        return None;
    }
    named(name, false).map(|ch| (ch, len))
}

/// `&#...`: decimal or hexadecimal, `;` optional.
fn numeric(bytes: &[u8]) -> Option<(char, usize)> {
    let (radix, start) = match bytes.get(1) {
        Some(b'x' | b'X') => (16, 2),
        _ => (10, 1),
    };
    let digits = bytes[start..]
        .iter()
        .take_while(|&&b| (b as char).is_digit(radix))
        .count();
    if digits == 0 {
        return None;
    }
    let mut value: u32 = 0;
    for &b in &bytes[start..start + digits] {
        let d = (b as char).to_digit(radix).unwrap_or(0);
        // Saturate: anything past 0x10FFFF becomes U+FFFD anyway.
        value = value.saturating_mul(radix).saturating_add(d).min(0x11_0000);
    }
    let mut used = start + digits;
    if bytes.get(used) == Some(&b';') {
        used += 1;
    }
    let ch = match value {
        0 => '\u{FFFD}',
        0x80..=0x9F => windows_1252_c1(value),
        _ => char::from_u32(value).unwrap_or('\u{FFFD}'),
    };
    Some((ch, used))
}

/// The HTML standard's table for numeric references to C1 controls, which
/// pages write meaning windows-1252.
fn windows_1252_c1(value: u32) -> char {
    const TABLE: [char; 32] = [
        '\u{20AC}', '\u{81}', '\u{201A}', '\u{0192}', '\u{201E}', '\u{2026}', '\u{2020}',
        '\u{2021}', '\u{02C6}', '\u{2030}', '\u{0160}', '\u{2039}', '\u{0152}', '\u{8D}',
        '\u{017D}', '\u{8F}', '\u{90}', '\u{2018}', '\u{2019}', '\u{201C}', '\u{201D}', '\u{2022}',
        '\u{2013}', '\u{2014}', '\u{02DC}', '\u{2122}', '\u{0161}', '\u{203A}', '\u{0153}',
        '\u{9D}', '\u{017E}', '\u{0178}',
    ];
    TABLE[(value - 0x80) as usize]
}

/// Names of U+00A0..=U+00FF, in code point order: the legacy references that
/// work with or without `;`.
const LATIN1: [&str; 96] = [
    "nbsp", "iexcl", "cent", "pound", "curren", "yen", "brvbar", "sect", "uml", "copy", "ordf",
    "laquo", "not", "shy", "reg", "macr", "deg", "plusmn", "sup2", "sup3", "acute", "micro",
    "para", "middot", "cedil", "sup1", "ordm", "raquo", "frac14", "frac12", "frac34", "iquest",
    "Agrave", "Aacute", "Acirc", "Atilde", "Auml", "Aring", "AElig", "Ccedil", "Egrave", "Eacute",
    "Ecirc", "Euml", "Igrave", "Iacute", "Icirc", "Iuml", "ETH", "Ntilde", "Ograve", "Oacute",
    "Ocirc", "Otilde", "Ouml", "times", "Oslash", "Ugrave", "Uacute", "Ucirc", "Uuml", "Yacute",
    "THORN", "szlig", "agrave", "aacute", "acirc", "atilde", "auml", "aring", "aelig", "ccedil",
    "egrave", "eacute", "ecirc", "euml", "igrave", "iacute", "icirc", "iuml", "eth", "ntilde",
    "ograve", "oacute", "ocirc", "otilde", "ouml", "divide", "oslash", "ugrave", "uacute", "ucirc",
    "uuml", "yacute", "thorn", "yuml",
];

/// Legacy names outside Latin-1's upper half (also valid without `;`).
const LEGACY_ASCII: [(&str, char); 10] = [
    ("amp", '&'),
    ("AMP", '&'),
    ("lt", '<'),
    ("LT", '<'),
    ("gt", '>'),
    ("GT", '>'),
    ("quot", '"'),
    ("QUOT", '"'),
    ("COPY", '\u{A9}'),
    ("REG", '\u{AE}'),
];

/// Names that need their `;`: ASCII punctuation and a few typographic marks.
const WITH_SEMICOLON: [(&str, char); 40] = [
    ("Tab", '\t'),
    ("NewLine", '\n'),
    ("excl", '!'),
    ("num", '#'),
    ("dollar", '$'),
    ("percnt", '%'),
    ("apos", '\''),
    ("lpar", '('),
    ("rpar", ')'),
    ("ast", '*'),
    ("midast", '*'),
    ("plus", '+'),
    ("comma", ','),
    ("period", '.'),
    ("sol", '/'),
    ("colon", ':'),
    ("semi", ';'),
    ("equals", '='),
    ("quest", '?'),
    ("commat", '@'),
    ("lsqb", '['),
    ("lbrack", '['),
    ("bsol", '\\'),
    ("rsqb", ']'),
    ("rbrack", ']'),
    ("Hat", '^'),
    ("lowbar", '_'),
    ("grave", '`'),
    ("lcub", '{'),
    ("lbrace", '{'),
    ("verbar", '|'),
    ("vert", '|'),
    ("rcub", '}'),
    ("rbrace", '}'),
    ("ndash", '\u{2013}'),
    ("mdash", '\u{2014}'),
    ("lsquo", '\u{2018}'),
    ("rsquo", '\u{2019}'),
    ("hellip", '\u{2026}'),
    ("euro", '\u{20AC}'),
];

/// The character a name stands for; `with_semicolon` admits the names that
/// are only valid with their `;`.
fn named(name: &str, with_semicolon: bool) -> Option<char> {
    if let Some(i) = LATIN1.iter().position(|&n| n == name) {
        return char::from_u32(0xA0 + i as u32);
    }
    if let Some(&(_, ch)) = LEGACY_ASCII.iter().find(|(n, _)| *n == name) {
        return Some(ch);
    }
    if with_semicolon {
        return WITH_SEMICOLON
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, ch)| ch);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(s: &str) -> String {
        let mut out = String::new();
        if decode_into(s, &mut out) {
            out
        } else {
            s.to_owned()
        }
    }

    #[test]
    fn references_in_attribute_values() {
        let rows = [
            ("/plain", "/plain"),
            ("?a=1&amp;b=2", "?a=1&b=2"),
            ("?a=1&ampb=2", "?a=1&ampb=2"),
            ("?a=1&amp=2", "?a=1&amp=2"),
            ("?a&amp", "?a&"),
            ("?x=&copy=3", "?x=&copy=3"),
            ("&copy;&COPY&reg", "\u{A9}\u{A9}\u{AE}"),
            ("/caf&eacute;", "/caf\u{E9}"),
            ("/caf&eacute", "/caf\u{E9}"),
            ("&#47;a&#x2F;b&#X2f;c", "/a/b/c"),
            ("&#233", "\u{E9}"),
            ("&#x80;", "\u{20AC}"),
            ("&#0;", "\u{FFFD}"),
            ("&#xD800;", "\u{FFFD}"),
            ("&#99999999999999999999;", "\u{FFFD}"),
            ("&#;&#x;&", "&#;&#x;&"),
            ("&sol;&quest;&equals;", "/?="),
            ("&sol", "&sol"),
            ("&unknown;", "&unknown;"),
            ("&apos;", "'"),
            ("a&&amp;&", "a&&&"),
            ("&notit;", "&notit;"),
        ];
        for (input, want) in rows {
            assert_eq!(decode(input), want, "{input}");
        }
    }

    #[test]
    fn latin1_table_is_in_code_point_order() {
        assert_eq!(named("nbsp", false), Some('\u{A0}'));
        assert_eq!(named("sect", false), Some('\u{A7}'));
        assert_eq!(named("iquest", false), Some('\u{BF}'));
        assert_eq!(named("Agrave", false), Some('\u{C0}'));
        assert_eq!(named("times", false), Some('\u{D7}'));
        assert_eq!(named("szlig", false), Some('\u{DF}'));
        assert_eq!(named("divide", false), Some('\u{F7}'));
        assert_eq!(named("yuml", false), Some('\u{FF}'));
    }
}
