//! The extractor's rules: the hand-written cases of [`cases`], and the
//! behaviour a table does not show.

use super::*;

use cases::{Case, HTML, NONE, PAGE, options};

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

/// A page with a link to `/first`, `times` copies of `tag` and a link to
/// `/last`.
fn between_two_links(tag: &[u8], times: usize) -> Vec<u8> {
    let mut page = b"<a href=/first></a>".to_vec();
    for _ in 0..times {
        page.extend_from_slice(tag);
    }
    page.extend_from_slice(b"<a href=/last>");
    page
}

fn check(rows: &[Case]) {
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
    check(cases::LINK_ELEMENTS);
}

#[test]
fn meta_refresh() {
    check(cases::META_REFRESH);
}

#[test]
fn base_href() {
    check(cases::BASE_HREF);
}

#[test]
fn nofollow() {
    check(cases::NOFOLLOW);
}

#[test]
fn skipped_schemes_and_bad_urls() {
    check(cases::SCHEMES_AND_BAD_URLS);
}

#[test]
fn charsets() {
    check(cases::CHARSETS);
}

#[test]
fn foreign_content() {
    check(cases::FOREIGN_CONTENT);
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
    let unclosed = between_two_links(b"<div>", 100_000);
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
    let nested = between_two_links(b"<svg>", 100_000);
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
