//! The extractor's hand-written cases, one small page per rule: the links
//! a user expects from it and what must be counted as skipped. The
//! extractor's unit tests check each; the tests crate's differential test
//! reads them with the reader the extractor had before its own tokenizer
//! too, so that both are held to them.

use super::{ExtractOptions, Skipped};

/// The URL every case's page has.
pub const PAGE: &str = "http://example.com/dir/page.html";

/// One hand-written page and what must come out of it.
#[derive(Debug)]
pub struct Case {
    /// The rule the case shows.
    pub rule: &'static str,
    /// The response's `Content-Type`.
    pub content_type: Option<&'static str>,
    /// The response's `X-Robots-Tag`.
    pub x_robots_tag: Option<&'static str>,
    /// The page.
    pub body: &'static [u8],
    /// The links expected, canonical, in document order.
    pub links: &'static [&'static str],
    /// What is expected to be skipped.
    pub skipped: Skipped,
}

/// Nothing skipped.
pub const NONE: Skipped = Skipped {
    nofollow: 0,
    scheme: 0,
    invalid: 0,
    over_cap: 0,
    same_page: 0,
};

/// `text/html`.
pub const HTML: Option<&str> = Some("text/html");

/// The options the cases are read with: at most 100 links, the robots
/// product token `ExampleBot`.
pub fn options() -> ExtractOptions {
    ExtractOptions {
        max_links: 100,
        robots_name: Some("ExampleBot".to_owned()),
        ..ExtractOptions::default()
    }
}

/// Every table of cases.
pub const ALL: &[&[Case]] = &[
    LINK_ELEMENTS,
    META_REFRESH,
    BASE_HREF,
    NOFOLLOW,
    SCHEMES_AND_BAD_URLS,
    CHARSETS,
    FOREIGN_CONTENT,
];

/// `a`, `area`, `frame`, `iframe`, `link rel=canonical`: which elements and attributes are links.
pub const LINK_ELEMENTS: &[Case] = &[
    Case {
        rule: "a href, relative to the page",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<p><a href='next.html'>n</a> <A HREF=/top>t</A> <a href=\"../up\">u</a>",
        links: &[
            "http://example.com/dir/next.html",
            "http://example.com/top",
            "http://example.com/up",
        ],
        skipped: NONE,
    },
    Case {
        rule: "a without href is no link",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<a name=x>anchor</a><a id=y>",
        links: &[],
        skipped: NONE,
    },
    Case {
        rule: "area href",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<map><area shape=rect coords='0,0,1,1' href='/area'></map>",
        links: &["http://example.com/area"],
        skipped: NONE,
    },
    Case {
        rule: "frame and iframe src",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<frameset><frame src=f1.html></frameset><iframe src='//cdn.example.org/i'></iframe>",
        links: &[
            "http://example.com/dir/f1.html",
            "http://cdn.example.org/i",
        ],
        skipped: NONE,
    },
    Case {
        rule: "link rel=canonical, not other link rels",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<head><link rel=stylesheet href=/s.css><link rel='Canonical' href='https://example.com/canon'><link rel=icon href=/i.png></head>",
        links: &["https://example.com/canon"],
        skipped: NONE,
    },
    Case {
        rule: "absolute links, other hosts, document order",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<a href='https://b.example/2'></a><iframe src='http://a.example/1'></iframe><a href='http://c.example/3'>",
        links: &[
            "https://b.example/2",
            "http://a.example/1",
            "http://c.example/3",
        ],
        skipped: NONE,
    },
    Case {
        rule: "duplicates are kept (the caller dedups)",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<a href=/x></a><a href=/x></a>",
        links: &["http://example.com/x", "http://example.com/x"],
        skipped: NONE,
    },
    Case {
        rule: "character references in attribute values",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<a href='/q?a=1&amp;b=2&#38;c=&#x33;'></a><a href='/r?x=1&copy=2'></a>",
        links: &[
            "http://example.com/q?a=1&b=2&c=3",
            "http://example.com/r?x=1&copy=2",
        ],
        skipped: NONE,
    },
    Case {
        rule: "links inside script, style, comments and textarea are not links",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<script>var s = '<a href=/js>';</script><style>/* <a href=/css> */</style><!-- <a href=/comment> --><textarea><a href=/ta></textarea><a href=/real>",
        links: &["http://example.com/real"],
        skipped: NONE,
    },
];

/// `<meta http-equiv=refresh>`.
pub const META_REFRESH: &[Case] = &[
    Case {
        rule: "meta refresh with url=",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<meta http-equiv=\"refresh\" content=\"5; url=/next\">",
        links: &["http://example.com/next"],
        skipped: NONE,
    },
    Case {
        rule: "meta refresh, case and quotes vary",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<META HTTP-EQUIV=Refresh CONTENT=\"0;URL='other.html'\"><meta http-equiv=REFRESH content='1, /comma'>",
        links: &["http://example.com/dir/other.html", "http://example.com/comma"],
        skipped: NONE,
    },
    Case {
        rule: "meta refresh without a URL reloads the page: no link",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<meta http-equiv=refresh content=30><meta http-equiv=content-language content='/not-a-link'>",
        links: &[],
        skipped: NONE,
    },
];

/// `<base href>`.
pub const BASE_HREF: &[Case] = &[
    Case {
        rule: "base href on another host",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<head><base href='http://other.example/sub/'></head><a href=x>",
        links: &["http://other.example/sub/x"],
        skipped: NONE,
    },
    Case {
        rule: "relative base href resolves against the page URL",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<base href='../base/'><a href=x></a><a href=/abs>",
        links: &["http://example.com/base/x", "http://example.com/abs"],
        skipped: NONE,
    },
    Case {
        rule: "only the first base counts",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<base target=_blank><base href='/first/'><base href='/second/'><a href=x>",
        links: &["http://example.com/first/x"],
        skipped: NONE,
    },
    Case {
        rule: "base applies to links before it",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<a href=early></a><base href='/b/'><a href=late>",
        links: &["http://example.com/b/early", "http://example.com/b/late"],
        skipped: NONE,
    },
    Case {
        rule: "fragment-only link with a base on another page is a link",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<base href='/other.html'><a href='#top'>",
        links: &["http://example.com/other.html"],
        skipped: NONE,
    },
    Case {
        rule: "an unparsable base is ignored",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<base href='http://[bad'><a href=x>",
        links: &["http://example.com/dir/x"],
        skipped: NONE,
    },
];

/// `rel=nofollow`, robots metas and `X-Robots-Tag`.
pub const NOFOLLOW: &[Case] = &[
    Case {
        rule: "rel=nofollow skips that link only",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<a rel=nofollow href=/no></a><a rel='noopener NoFollow ugc' href=/no2></a><a rel=noopener href=/yes></a><area rel=nofollow href=/no3>",
        links: &["http://example.com/yes"],
        skipped: Skipped {
            nofollow: 3,
            ..NONE
        },
    },
    Case {
        rule: "meta robots nofollow skips every link, even those before it",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<a href=/a></a><meta name=robots content='noindex, nofollow'><a href=/b><iframe src=/c></iframe>",
        links: &[],
        skipped: Skipped {
            nofollow: 3,
            ..NONE
        },
    },
    Case {
        rule: "meta robots none",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<META NAME=ROBOTS CONTENT=NONE><a href=/a>",
        links: &[],
        skipped: Skipped {
            nofollow: 1,
            ..NONE
        },
    },
    Case {
        rule: "meta robots noindex alone keeps links",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<meta name=robots content=noindex><a href=/a>",
        links: &["http://example.com/a"],
        skipped: NONE,
    },
    Case {
        rule: "meta with our product token",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<meta name=examplebot content=nofollow><a href=/a>",
        links: &[],
        skipped: Skipped {
            nofollow: 1,
            ..NONE
        },
    },
    Case {
        rule: "meta for another crawler does not apply",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<meta name=otherbot content=nofollow><a href=/a>",
        links: &["http://example.com/a"],
        skipped: NONE,
    },
    Case {
        rule: "X-Robots-Tag nofollow",
        content_type: HTML,
        x_robots_tag: Some("noindex, nofollow"),
        body: b"<a href=/a></a><a href=/b>",
        links: &[],
        skipped: Skipped {
            nofollow: 2,
            ..NONE
        },
    },
    Case {
        rule: "X-Robots-Tag for us by name",
        content_type: HTML,
        x_robots_tag: Some("examplebot: nofollow"),
        body: b"<a href=/a>",
        links: &[],
        skipped: Skipped {
            nofollow: 1,
            ..NONE
        },
    },
    Case {
        rule: "X-Robots-Tag for another crawler",
        content_type: HTML,
        x_robots_tag: Some("otherbot: nofollow"),
        body: b"<a href=/a>",
        links: &["http://example.com/a"],
        skipped: NONE,
    },
];

/// Schemes that are not crawled, links to the page itself, invalid URLs.
pub const SCHEMES_AND_BAD_URLS: &[Case] = &[
    Case {
        rule: "javascript, mailto, data, tel, any case, leading white space",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<a href='javascript:void(0)'></a><a href='  JavaScript:go()'></a><a href='\tmailto:a@example.com'></a><a href='DATA:text/html,x'></a><a href='tel:+1555'></a><a href='java\nscript:x'></a><a href='&#106;avascript:x'></a><a href=/ok>",
        links: &["http://example.com/ok"],
        skipped: Skipped {
            scheme: 7,
            ..NONE
        },
    },
    Case {
        rule: "other schemes are not crawled",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<a href='ftp://example.com/f'></a><a href='about:blank'></a><iframe src='file:///etc/passwd'></iframe>",
        links: &[],
        skipped: Skipped {
            scheme: 3,
            ..NONE
        },
    },
    Case {
        rule: "links to the page itself",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<a href='#top'></a><a href=''></a><a href='  #x '></a><a href='?q'>",
        links: &["http://example.com/dir/page.html?q"],
        skipped: Skipped {
            same_page: 3,
            ..NONE
        },
    },
    Case {
        rule: "invalid URLs",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<a href='http://exa mple.com/'></a><a href='http://[::1'></a><a href='https://'></a><a href=/fine>",
        links: &["http://example.com/fine"],
        skipped: Skipped {
            invalid: 3,
            ..NONE
        },
    },
];

/// Pages in other encodings than UTF-8.
pub const CHARSETS: &[Case] = &[
    Case {
        rule: "Latin-1 page by header: path in UTF-8, query in the page's encoding",
        content_type: Some("text/html; charset=ISO-8859-1"),
        x_robots_tag: None,
        body: b"<a href='/caf\xE9?q=\xE9t\xE9'>",
        links: &["http://example.com/caf%C3%A9?q=%E9t%E9"],
        skipped: NONE,
    },
    Case {
        rule: "Latin-1 page: ASCII links, and an empty authority refused",
        content_type: Some("text/html; charset=windows-1252"),
        x_robots_tag: None,
        body: b"<a href='/plain?q=1'></a><a href='http:///caf\xE9'></a><a href='HTTPS:\\\\\\x'>",
        links: &["http://example.com/plain?q=1"],
        skipped: Skipped {
            invalid: 2,
            ..NONE
        },
    },
    Case {
        rule: "Latin-1 page: a character it cannot encode in the query",
        content_type: Some("text/html; charset=windows-1252"),
        x_robots_tag: None,
        body: b"<a href='/?q=&#26481;'>",
        links: &["http://example.com/?q=%26%2326481%3B"],
        skipped: NONE,
    },
    Case {
        rule: "Shift_JIS page by meta charset",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<meta charset=\"Shift_JIS\"><a href='/\x93\x8C\x8B\x9E/\x95\x5C?q=\x93\x8C\x8B\x9E'>",
        links: &["http://example.com/%E6%9D%B1%E4%BA%AC/%E8%A1%A8?q=%93%8C%8B%9E"],
        skipped: NONE,
    },
    Case {
        rule: "Shift_JIS page by meta http-equiv content-type",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<meta http-equiv=Content-Type content='text/html; charset=shift_jis'><a href='/\x95\x5C'>",
        links: &["http://example.com/%E8%A1%A8"],
        skipped: NONE,
    },
    Case {
        rule: "header charset beats meta",
        content_type: Some("text/html; charset=iso-8859-1"),
        x_robots_tag: None,
        body: b"<meta charset=shift_jis><a href='/\x93\x8C'>",
        links: &["http://example.com/%E2%80%9C%C5%92"],
        skipped: NONE,
    },
    Case {
        rule: "an unknown header label is ignored: meta decides",
        content_type: Some("text/html; charset=no-such-charset"),
        x_robots_tag: None,
        body: b"<meta charset=windows-1252><a href='/caf\xE9'>",
        links: &["http://example.com/caf%C3%A9"],
        skipped: NONE,
    },
    Case {
        rule: "BOM beats header",
        content_type: Some("text/html; charset=windows-1252"),
        x_robots_tag: None,
        body: b"\xEF\xBB\xBF<a href='/caf\xC3\xA9'>",
        links: &["http://example.com/caf%C3%A9"],
        skipped: NONE,
    },
    Case {
        rule: "meta beats the UTF-8 default",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<meta charset=windows-1252><a href='/caf\xE9'>",
        links: &["http://example.com/caf%C3%A9"],
        skipped: NONE,
    },
    Case {
        rule: "no charset: UTF-8, invalid bytes become U+FFFD",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<a href='/caf\xC3\xA9'></a><a href='/bad\xE9'>",
        links: &["http://example.com/caf%C3%A9", "http://example.com/bad%EF%BF%BD"],
        skipped: NONE,
    },
    Case {
        rule: "ISO-2022-JP page (not ASCII-compatible: transcoded first)",
        content_type: Some("text/html; charset=ISO-2022-JP"),
        x_robots_tag: None,
        body: b"<a href=\"/\x1b$BEl5~\x1b(B\">",
        links: &["http://example.com/%E6%9D%B1%E4%BA%AC"],
        skipped: NONE,
    },
    Case {
        rule: "UTF-16LE page with a BOM",
        content_type: HTML,
        x_robots_tag: None,
        body: b"\xFF\xFE<\0a\0 \0h\0r\0e\0f\0=\0/\0\xE9\0>\0",
        links: &["http://example.com/%C3%A9"],
        skipped: NONE,
    },
];

/// SVG and MathML: what is markup inside them and where they end.
pub const FOREIGN_CONTENT: &[Case] = &[
    Case {
        rule: "links inside SVG are links; style inside SVG is no raw text",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<svg><a href=/in-svg></a><style><a href=/svg-style></a></style></svg><style><a href=/css></style>",
        links: &["http://example.com/in-svg", "http://example.com/svg-style"],
        skipped: NONE,
    },
    Case {
        rule: "a self-closing svg holds nothing: style after it is raw text",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<svg/><style><a href=/css></style><a href=/after>",
        links: &["http://example.com/after"],
        skipped: NONE,
    },
    Case {
        rule: "a breakout tag leaves nested SVG altogether",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<svg><svg><p><style><a href=/css></style><a href=/after>",
        links: &["http://example.com/after"],
        skipped: NONE,
    },
    Case {
        rule: "foreignObject holds HTML: style there is raw text",
        content_type: HTML,
        x_robots_tag: None,
        body: b"<svg><foreignObject><style><a href=/css></style></foreignObject><a href=/after></svg>",
        links: &["http://example.com/after"],
        skipped: NONE,
    },
];
