//! One row per extraction rule: a small hand-written page, the links a user
//! expects from it and what must be counted as skipped.

use super::*;

const PAGE: &str = "http://example.com/dir/page.html";

/// One hand-written page and what must come out of it.
struct Row {
    rule: &'static str,
    content_type: Option<&'static str>,
    x_robots_tag: Option<&'static str>,
    body: &'static [u8],
    links: &'static [&'static str],
    skipped: Skipped,
}

const NONE: Skipped = Skipped {
    nofollow: 0,
    scheme: 0,
    invalid: 0,
    over_cap: 0,
    same_page: 0,
};

const HTML: Option<&str> = Some("text/html");

fn options() -> ExtractOptions {
    ExtractOptions {
        max_links: 100,
        robots_name: Some("ExampleBot".to_owned()),
        ..ExtractOptions::default()
    }
}

fn extract_with(
    extractor: &mut Extractor,
    content_type: Option<&str>,
    x_robots_tag: Option<&str>,
    body: &[u8],
) -> PageLinks {
    let url = Url::parse(PAGE).unwrap();
    extractor.extract(&Page {
        url: &url,
        content_type,
        x_robots_tag,
        body,
    })
}

fn strings(links: &PageLinks) -> Vec<&str> {
    links.links.iter().map(Url::as_str).collect()
}

fn check(rows: &[Row]) {
    // One extractor for the whole table: state must not leak between pages.
    let mut extractor = Extractor::new(options());
    let mut failures = Vec::new();
    for row in rows {
        let got = extract_with(&mut extractor, row.content_type, row.x_robots_tag, row.body);
        if strings(&got) != row.links || got.skipped != row.skipped {
            failures.push(format!(
                "{}:\n  links   {:?}\n  want    {:?}\n  skipped {:?}\n  want    {:?}",
                row.rule,
                strings(&got),
                row.links,
                got.skipped,
                row.skipped
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn link_elements() {
    check(&[
        Row {
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
        Row {
            rule: "a without href is no link",
            content_type: HTML,
            x_robots_tag: None,
            body: b"<a name=x>anchor</a><a id=y>",
            links: &[],
            skipped: NONE,
        },
        Row {
            rule: "area href",
            content_type: HTML,
            x_robots_tag: None,
            body: b"<map><area shape=rect coords='0,0,1,1' href='/area'></map>",
            links: &["http://example.com/area"],
            skipped: NONE,
        },
        Row {
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
        Row {
            rule: "link rel=canonical, not other link rels",
            content_type: HTML,
            x_robots_tag: None,
            body: b"<head><link rel=stylesheet href=/s.css><link rel='Canonical' href='https://example.com/canon'><link rel=icon href=/i.png></head>",
            links: &["https://example.com/canon"],
            skipped: NONE,
        },
        Row {
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
        Row {
            rule: "duplicates are kept (the caller dedups)",
            content_type: HTML,
            x_robots_tag: None,
            body: b"<a href=/x></a><a href=/x></a>",
            links: &["http://example.com/x", "http://example.com/x"],
            skipped: NONE,
        },
        Row {
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
        Row {
            rule: "links inside script, style, comments and textarea are not links",
            content_type: HTML,
            x_robots_tag: None,
            body: b"<script>var s = '<a href=/js>';</script><style>/* <a href=/css> */</style><!-- <a href=/comment> --><textarea><a href=/ta></textarea><a href=/real>",
            links: &["http://example.com/real"],
            skipped: NONE,
        },
    ]);
}

#[test]
fn meta_refresh() {
    check(&[
        Row {
            rule: "meta refresh with url=",
            content_type: HTML,
            x_robots_tag: None,
            body: b"<meta http-equiv=\"refresh\" content=\"5; url=/next\">",
            links: &["http://example.com/next"],
            skipped: NONE,
        },
        Row {
            rule: "meta refresh, case and quotes vary",
            content_type: HTML,
            x_robots_tag: None,
            body: b"<META HTTP-EQUIV=Refresh CONTENT=\"0;URL='other.html'\"><meta http-equiv=REFRESH content='1, /comma'>",
            links: &["http://example.com/dir/other.html", "http://example.com/comma"],
            skipped: NONE,
        },
        Row {
            rule: "meta refresh without a URL reloads the page: no link",
            content_type: HTML,
            x_robots_tag: None,
            body: b"<meta http-equiv=refresh content=30><meta http-equiv=content-language content='/not-a-link'>",
            links: &[],
            skipped: NONE,
        },
    ]);
}

#[test]
fn base_href() {
    check(&[
        Row {
            rule: "base href on another host",
            content_type: HTML,
            x_robots_tag: None,
            body: b"<head><base href='http://other.example/sub/'></head><a href=x>",
            links: &["http://other.example/sub/x"],
            skipped: NONE,
        },
        Row {
            rule: "relative base href resolves against the page URL",
            content_type: HTML,
            x_robots_tag: None,
            body: b"<base href='../base/'><a href=x></a><a href=/abs>",
            links: &["http://example.com/base/x", "http://example.com/abs"],
            skipped: NONE,
        },
        Row {
            rule: "only the first base counts",
            content_type: HTML,
            x_robots_tag: None,
            body: b"<base target=_blank><base href='/first/'><base href='/second/'><a href=x>",
            links: &["http://example.com/first/x"],
            skipped: NONE,
        },
        Row {
            rule: "base applies to links before it",
            content_type: HTML,
            x_robots_tag: None,
            body: b"<a href=early></a><base href='/b/'><a href=late>",
            links: &["http://example.com/b/early", "http://example.com/b/late"],
            skipped: NONE,
        },
        Row {
            rule: "fragment-only link with a base on another page is a link",
            content_type: HTML,
            x_robots_tag: None,
            body: b"<base href='/other.html'><a href='#top'>",
            links: &["http://example.com/other.html"],
            skipped: NONE,
        },
        Row {
            rule: "an unparsable base is ignored",
            content_type: HTML,
            x_robots_tag: None,
            body: b"<base href='http://[bad'><a href=x>",
            links: &["http://example.com/dir/x"],
            skipped: NONE,
        },
    ]);
}

#[test]
fn nofollow() {
    check(&[
        Row {
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
        Row {
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
        Row {
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
        Row {
            rule: "meta robots noindex alone keeps links",
            content_type: HTML,
            x_robots_tag: None,
            body: b"<meta name=robots content=noindex><a href=/a>",
            links: &["http://example.com/a"],
            skipped: NONE,
        },
        Row {
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
        Row {
            rule: "meta for another crawler does not apply",
            content_type: HTML,
            x_robots_tag: None,
            body: b"<meta name=otherbot content=nofollow><a href=/a>",
            links: &["http://example.com/a"],
            skipped: NONE,
        },
        Row {
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
        Row {
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
        Row {
            rule: "X-Robots-Tag for another crawler",
            content_type: HTML,
            x_robots_tag: Some("otherbot: nofollow"),
            body: b"<a href=/a>",
            links: &["http://example.com/a"],
            skipped: NONE,
        },
    ]);
}

#[test]
fn skipped_schemes_and_bad_urls() {
    check(&[
        Row {
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
        Row {
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
        Row {
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
        Row {
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
    ]);
}

#[test]
fn charsets() {
    check(&[
        Row {
            rule: "Latin-1 page by header: path in UTF-8, query in the page's encoding",
            content_type: Some("text/html; charset=ISO-8859-1"),
            x_robots_tag: None,
            body: b"<a href='/caf\xE9?q=\xE9t\xE9'>",
            links: &["http://example.com/caf%C3%A9?q=%E9t%E9"],
            skipped: NONE,
        },
        Row {
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
        Row {
            rule: "Latin-1 page: a character it cannot encode in the query",
            content_type: Some("text/html; charset=windows-1252"),
            x_robots_tag: None,
            body: b"<a href='/?q=&#26481;'>",
            links: &["http://example.com/?q=%26%2326481%3B"],
            skipped: NONE,
        },
        Row {
            rule: "Shift_JIS page by meta charset",
            content_type: HTML,
            x_robots_tag: None,
            body: b"<meta charset=\"Shift_JIS\"><a href='/\x93\x8C\x8B\x9E/\x95\x5C?q=\x93\x8C\x8B\x9E'>",
            links: &["http://example.com/%E6%9D%B1%E4%BA%AC/%E8%A1%A8?q=%93%8C%8B%9E"],
            skipped: NONE,
        },
        Row {
            rule: "Shift_JIS page by meta http-equiv content-type",
            content_type: HTML,
            x_robots_tag: None,
            body: b"<meta http-equiv=Content-Type content='text/html; charset=shift_jis'><a href='/\x95\x5C'>",
            links: &["http://example.com/%E8%A1%A8"],
            skipped: NONE,
        },
        Row {
            rule: "header charset beats meta",
            content_type: Some("text/html; charset=iso-8859-1"),
            x_robots_tag: None,
            body: b"<meta charset=shift_jis><a href='/\x93\x8C'>",
            links: &["http://example.com/%E2%80%9C%C5%92"],
            skipped: NONE,
        },
        Row {
            rule: "an unknown header label is ignored: meta decides",
            content_type: Some("text/html; charset=no-such-charset"),
            x_robots_tag: None,
            body: b"<meta charset=windows-1252><a href='/caf\xE9'>",
            links: &["http://example.com/caf%C3%A9"],
            skipped: NONE,
        },
        Row {
            rule: "BOM beats header",
            content_type: Some("text/html; charset=windows-1252"),
            x_robots_tag: None,
            body: b"\xEF\xBB\xBF<a href='/caf\xC3\xA9'>",
            links: &["http://example.com/caf%C3%A9"],
            skipped: NONE,
        },
        Row {
            rule: "meta beats the UTF-8 default",
            content_type: HTML,
            x_robots_tag: None,
            body: b"<meta charset=windows-1252><a href='/caf\xE9'>",
            links: &["http://example.com/caf%C3%A9"],
            skipped: NONE,
        },
        Row {
            rule: "no charset: UTF-8, invalid bytes become U+FFFD",
            content_type: HTML,
            x_robots_tag: None,
            body: b"<a href='/caf\xC3\xA9'></a><a href='/bad\xE9'>",
            links: &["http://example.com/caf%C3%A9", "http://example.com/bad%EF%BF%BD"],
            skipped: NONE,
        },
        Row {
            rule: "ISO-2022-JP page (not ASCII-compatible: transcoded first)",
            content_type: Some("text/html; charset=ISO-2022-JP"),
            x_robots_tag: None,
            body: b"<a href=\"/\x1b$BEl5~\x1b(B\">",
            links: &["http://example.com/%E6%9D%B1%E4%BA%AC"],
            skipped: NONE,
        },
        Row {
            rule: "UTF-16LE page with a BOM",
            content_type: HTML,
            x_robots_tag: None,
            body: b"\xFF\xFE<\0a\0 \0h\0r\0e\0f\0=\0/\0\xE9\0>\0",
            links: &["http://example.com/%C3%A9"],
            skipped: NONE,
        },
    ]);
}

#[test]
fn charset_is_reported() {
    let mut ex = Extractor::new(options());
    let rows: &[(Option<&str>, &[u8], &str, CharsetSource)] = &[
        (HTML, b"<p>", "UTF-8", CharsetSource::Default),
        (
            Some("text/html;charset=latin1"),
            b"<p>",
            "windows-1252",
            CharsetSource::Header,
        ),
        (
            HTML,
            b"<meta charset=euc-jp>",
            "EUC-JP",
            CharsetSource::Meta,
        ),
        (
            Some("text/html;charset=euc-jp"),
            b"\xFE\xFF\0<",
            "UTF-16BE",
            CharsetSource::Bom,
        ),
    ];
    for &(content_type, body, name, source) in rows {
        let got = extract_with(&mut ex, content_type, None, body);
        assert_eq!((got.encoding.name(), got.charset_source), (name, source));
    }
}

#[test]
fn cap_on_links_per_page() {
    let mut ex = Extractor::new(ExtractOptions {
        max_links: 2,
        ..options()
    });
    let got = extract_with(
        &mut ex,
        HTML,
        None,
        b"<a href=mailto:x></a><a href=/1></a><a href=#same></a><a href=/2></a><a href=/3></a><a href=/4>",
    );
    assert_eq!(
        strings(&got),
        ["http://example.com/1", "http://example.com/2"]
    );
    assert_eq!(
        got.skipped,
        Skipped {
            scheme: 1,
            same_page: 1,
            over_cap: 2,
            ..NONE
        }
    );
}

#[test]
fn html_by_type_and_sniffing() {
    let page = b"<html><body><a href=/x>x</a></body></html>";
    let rows: &[(Option<&str>, &[u8], PageKind, usize)] = &[
        (HTML, page, PageKind::Html, 1),
        (Some("application/xhtml+xml"), page, PageKind::Html, 1),
        (None, page, PageKind::SniffedHtml, 1),
        (
            Some("application/octet-stream"),
            page,
            PageKind::SniffedHtml,
            1,
        ),
        (
            Some("text/plain; charset=utf-8"),
            page,
            PageKind::SniffedHtml,
            1,
        ),
        (
            Some("text/plain"),
            b"just text with /x in it",
            PageKind::NotHtml,
            0,
        ),
        (Some("image/png"), page, PageKind::NotHtml, 0),
        (Some("application/json"), page, PageKind::NotHtml, 0),
        (
            None,
            b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR<html>",
            PageKind::NotHtml,
            0,
        ),
        (
            HTML,
            b"\x1f\x8b\x08\0\0\0\0\0\0\x03<a href=/x>",
            PageKind::Binary,
            0,
        ),
    ];
    let mut ex = Extractor::new(options());
    for &(content_type, body, kind, links) in rows {
        let got = extract_with(&mut ex, content_type, None, body);
        assert_eq!(
            (got.kind, got.links.len()),
            (kind, links),
            "{content_type:?} {}",
            String::from_utf8_lossy(body)
        );
    }
}

#[test]
fn redirect_targets() {
    let from = Url::parse("http://example.com/a/b?c").unwrap();
    let ok = |loc: &str| redirect_target(&from, loc).map(|u| u.to_string());
    assert_eq!(ok("/new").unwrap(), "http://example.com/new");
    assert_eq!(ok("  other ").unwrap(), "http://example.com/a/other");
    assert_eq!(
        ok("https://b.example/x#frag").unwrap(),
        "https://b.example/x"
    );
    assert!(matches!(ok(""), Err(UrlError::Invalid { .. })));
    assert!(matches!(
        ok("mailto:x@example.com"),
        Err(UrlError::Scheme { .. })
    ));
}

/// Pages that are not what they claim, or are pathological, give an answer
/// (possibly with no links), never a panic.
#[test]
fn garbage_and_pathological_pages() {
    let mut ex = Extractor::new(options());

    // Pseudo-random bytes (a fixed seed), declared as HTML and as nothing.
    let mut rng = crate::testutil::Rng::new(1);
    let noise: Vec<u8> = (0..1 << 20).map(|_| rng.next_u64() as u8).collect();
    assert_eq!(
        extract_with(&mut ex, HTML, None, &noise).kind,
        PageKind::Binary
    );
    assert_eq!(
        extract_with(&mut ex, None, None, &noise).kind,
        PageKind::NotHtml
    );

    // Printable garbage full of markup characters is parsed as HTML.
    let markup: Vec<u8> = noise
        .iter()
        .map(|b| b"<>=\"' /a!-&#;hrefbasemeta"[(*b % 24) as usize])
        .collect();
    let got = extract_with(&mut ex, HTML, None, &markup);
    assert_eq!(got.kind, PageKind::Html);

    // Unclosed tags and attributes at the end of the page.
    for body in [
        &b"<a href=/ok></a><a href='/unterminated"[..],
        b"<a href=/ok></a><a href",
        b"<a href=/ok></a><",
        b"<a href=/ok></a><!--",
        b"<a href=/ok></a><meta http-equiv=refresh content='0; url=",
    ] {
        let got = extract_with(&mut ex, HTML, None, body);
        assert_eq!(
            strings(&got),
            ["http://example.com/ok"],
            "{}",
            String::from_utf8_lossy(body)
        );
    }

    // An absurdly long attribute (10 MB), closed, then a link.
    let mut long = b"<a href='/".to_vec();
    long.resize(long.len() + (10 << 20), b'x');
    long.extend_from_slice(b"'></a><a href=/after>");
    let got = extract_with(&mut ex, HTML, None, &long);
    assert_eq!(got.links.len(), 2);
    assert_eq!(got.links[1].as_str(), "http://example.com/after");

    // ... and unclosed at the end of a page: a tag cut off by the end is no
    // tag (the standard's "EOF in tag"); the links before it are kept and
    // the page was read to its end, however long the open tag (the reader
    // holds no copy of it).
    let mut ex_small = Extractor::new(ExtractOptions {
        max_parser_memory: 64 << 10,
        ..options()
    });
    let mut open = b"<a href=/before></a><a href='/".to_vec();
    open.resize(open.len() + (4 << 20), b'x');
    let got = extract_with(&mut ex_small, HTML, None, &open);
    assert_eq!(strings(&got), ["http://example.com/before"]);
    assert!(!got.incomplete);

    // Elements left open cost the reader nothing (it keeps no stack of
    // HTML elements): the last link of 100,000 open `<div>`s is found.
    let mut unclosed = b"<a href=/first></a>".to_vec();
    for _ in 0..100_000 {
        unclosed.extend_from_slice(b"<div>");
    }
    unclosed.extend_from_slice(b"<a href=/last>");
    let got = extract_with(&mut ex_small, HTML, None, &unclosed);
    assert_eq!(
        strings(&got),
        ["http://example.com/first", "http://example.com/last"]
    );
    assert!(!got.incomplete);

    // What does cost memory: SVG nested in SVG (one byte of the namespace
    // stack each) and the attributes of one link element (32 bytes each).
    // Past the bound, the page is incomplete and keeps the links found so
    // far.
    let mut nested = b"<a href=/first></a>".to_vec();
    for _ in 0..100_000 {
        nested.extend_from_slice(b"<svg>");
    }
    nested.extend_from_slice(b"<a href=/last>");
    let got = extract_with(&mut ex_small, HTML, None, &nested);
    assert_eq!(strings(&got), ["http://example.com/first"]);
    assert!(got.incomplete);
    let mut crowded = b"<a href=/first></a><a".to_vec();
    for i in 0..10_000 {
        crowded.extend_from_slice(format!(" rel=r{i}").as_bytes());
    }
    crowded.extend_from_slice(b" href=/last>");
    let got = extract_with(&mut ex_small, HTML, None, &crowded);
    assert_eq!(strings(&got), ["http://example.com/first"]);
    assert!(got.incomplete);
    // Within the bound, the same element is read whole.
    let got = extract_with(&mut ex, HTML, None, &crowded);
    assert_eq!(
        strings(&got),
        ["http://example.com/first", "http://example.com/last"]
    );

    // A 50 MB page of links: the cap holds, the rest are counted.
    let mut huge = Vec::with_capacity(50 << 20);
    let mut n = 0u64;
    while huge.len() < 50 << 20 {
        huge.extend_from_slice(format!("<p><a href='/p{n}'>page {n}</a></p>\n").as_bytes());
        n += 1;
    }
    let got = extract_with(&mut ex, HTML, None, &huge);
    assert_eq!(got.links.len(), 100);
    assert_eq!(got.links[99].as_str(), "http://example.com/p99");
    assert!(!got.incomplete, "{got:?}");
    assert_eq!(got.links.len() as u64 + got.skipped.over_cap, n);

    // The extractor still works normally afterwards.
    let got = extract_with(&mut ex, HTML, None, b"<a href=/fine>");
    assert_eq!(strings(&got), ["http://example.com/fine"]);
    assert_eq!(got.skipped, NONE);
    assert!(!got.incomplete);
}

#[test]
fn extract_into_reuses_the_output() {
    let mut ex = Extractor::new(options());
    let url = Url::parse(PAGE).unwrap();
    let mut out = PageLinks::default();
    let page = |body| Page {
        url: &url,
        content_type: HTML,
        x_robots_tag: None,
        body,
    };
    ex.extract_into(
        &page(b"<meta name=robots content=nofollow><a href=/a>"),
        &mut out,
    );
    assert!(out.nofollow);
    ex.extract_into(&page(b"<a href=/b>"), &mut out);
    assert!(!out.nofollow);
    assert_eq!(strings(&out), ["http://example.com/b"]);
    assert_eq!(out.skipped, NONE);
}

#[test]
fn extractor_can_move_to_a_worker_thread() {
    fn is_send<T: Send>(_: &T) {}
    let ex = Extractor::new(options());
    is_send(&ex);
    let url = Url::parse(PAGE).unwrap();
    let links = std::thread::spawn(move || {
        let mut ex = ex;
        ex.extract(&Page {
            url: &url,
            content_type: HTML,
            x_robots_tag: None,
            body: b"<a href=/t>",
        })
        .links
    })
    .join()
    .unwrap();
    assert_eq!(links.len(), 1);
}

#[test]
fn page_titles_are_read_in_the_page_encoding() {
    use super::page_title;
    assert_eq!(
        page_title(
            Some("text/html"),
            b"<html><head><TITLE>\n A  &amp; B </title>"
        )
        .as_deref(),
        Some("A & B")
    );
    assert_eq!(
        page_title(
            Some("text/html; charset=iso-8859-1"),
            b"<title>caf\xe9</title>"
        )
        .as_deref(),
        Some("café")
    );
    assert_eq!(page_title(Some("text/html"), b"<title>  </title>"), None);
    assert_eq!(page_title(None, b"<p>no title</p>"), None);
}

#[test]
fn each_link_says_where_it_was_found() {
    let mut extractor = Extractor::new(options());
    let body = br#"<html><head><link rel=canonical href=/c>
        <meta http-equiv=refresh content="5; url=/m"></head>
        <body><a href=/a>a</a><a href=/n rel=nofollow>n</a><map><area href=/ar></map>
        <frameset><frame src=/f></frameset><iframe src=/i></iframe>"#;
    let got = extract_with(&mut extractor, HTML, None, body);
    let pairs: Vec<(&str, &str)> = got
        .links
        .iter()
        .zip(&got.contexts)
        .map(|(u, c)| (u.path(), c.as_str()))
        .collect();
    assert_eq!(
        pairs,
        [
            ("/c", "link/@href"),
            ("/m", "meta/@content"),
            ("/a", "a/@href"),
            ("/ar", "area/@href"),
            ("/f", "frame/@src"),
            ("/i", "iframe/@src"),
        ]
    );
    assert_eq!(got.skipped.nofollow, 1);
}

#[test]
fn only_html_or_generic_types_may_be_html() {
    for ct in [
        Some("text/html; charset=utf-8"),
        Some("application/xhtml+xml"),
        Some("text/plain"),
        Some("application/octet-stream"),
        None,
    ] {
        assert!(may_be_html(ct), "{ct:?}");
    }
    for ct in [
        "image/png",
        "application/pdf",
        "application/json",
        "text/css",
    ] {
        assert!(!may_be_html(Some(ct)), "{ct}");
    }
}
