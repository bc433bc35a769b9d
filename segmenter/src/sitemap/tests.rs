use std::io::Write;
use std::time::{Duration, Instant};

use flate2::Compression;
use flate2::write::GzEncoder;

use super::*;

/// What one read handed over, owned.
#[derive(Debug, Clone, PartialEq)]
struct Got {
    kind: Kind,
    loc: String,
    lastmod_ms: Option<i64>,
    priority: Option<f32>,
}

fn read_with(body: &[u8], content_type: Option<&str>, limits: &Limits) -> (Summary, Vec<Got>) {
    let mut got = Vec::new();
    let summary = read(body, content_type, limits, |kind, e| {
        got.push(Got {
            kind,
            loc: e.loc.to_string(),
            lastmod_ms: e.lastmod_ms,
            priority: e.priority,
        })
    });
    assert_eq!(
        summary.entries,
        got.len() as u64,
        "entries counts the calls"
    );
    (summary, got)
}

fn read_all(body: &[u8]) -> (Summary, Vec<Got>) {
    read_with(body, None, &Limits::default())
}

fn locs(got: &[Got]) -> Vec<&str> {
    got.iter().map(|g| g.loc.as_str()).collect()
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = GzEncoder::new(Vec::new(), Compression::fast());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

/// Unix milliseconds of a UTC date and time.
fn ms(y: i64, mo: i64, d: i64, h: i64, mi: i64, s: i64) -> i64 {
    date_tests_days(y, mo, d) * 86_400_000 + (h * 3600 + mi * 60 + s) * 1000
}

fn date_tests_days(y: i64, mo: i64, d: i64) -> i64 {
    // Counted the slow way, independently of the parser's formula.
    let mut days = 0;
    for year in 1970..y {
        days += if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) {
            366
        } else {
            365
        };
    }
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let lengths = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    days + lengths[..(mo - 1) as usize].iter().sum::<i64>() + d - 1
}

const URLSET: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url>
    <loc>https://example.com/</loc>
    <lastmod>2024-05-01T10:20:30+02:00</lastmod>
    <changefreq>daily</changefreq>
    <priority>0.8</priority>
  </url>
  <url><loc> https://example.com/b </loc></url>
</urlset>
"#;

#[test]
fn urlset_with_namespace() {
    let (s, got) = read_all(URLSET.as_bytes());
    assert_eq!(s.kind, Some(Kind::UrlSet));
    assert_eq!((s.entries, s.invalid, s.over_limit), (2, 0, 0));
    assert_eq!(s.error, None);
    assert!(!s.cut_at_bytes);
    assert_eq!(
        got[0],
        Got {
            kind: Kind::UrlSet,
            loc: "https://example.com/".into(),
            lastmod_ms: Some(ms(2024, 5, 1, 8, 20, 30)),
            priority: Some(0.8),
        }
    );
    assert_eq!(got[1].loc, "https://example.com/b", "loc is trimmed");
    assert_eq!((got[1].lastmod_ms, got[1].priority), (None, None));
}

#[test]
fn urlset_without_namespace_and_with_prefixes() {
    let plain = b"<urlset><url><loc>http://a.example/1</loc></url></urlset>";
    let (s, got) = read_all(plain);
    assert_eq!(
        (s.kind, locs(&got)),
        (Some(Kind::UrlSet), vec!["http://a.example/1"])
    );

    let prefixed = br#"<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9">
        <sm:url><sm:loc>http://a.example/2</sm:loc><sm:lastmod>2020</sm:lastmod></sm:url>
        <sm:url><sm:loc>http://a.example/3</sm:loc></sm:url>
    </sm:urlset>"#;
    let (s, got) = read_all(prefixed);
    assert_eq!(s.kind, Some(Kind::UrlSet));
    assert_eq!(locs(&got), ["http://a.example/2", "http://a.example/3"]);
    assert_eq!(got[0].lastmod_ms, Some(ms(2020, 1, 1, 0, 0, 0)));
}

#[test]
fn extensions_are_not_page_locs() {
    let body = br#"<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"
        xmlns:xhtml="http://www.w3.org/1999/xhtml"
        xmlns:video="http://www.google.com/schemas/sitemap-video/1.1">
      <url>
        <image:image><image:loc>https://cdn.example/pic.jpg</image:loc></image:image>
        <loc>https://example.com/page</loc>
        <xhtml:link rel="alternate" hreflang="de" href="https://example.com/de/page"/>
        <image:loc>https://cdn.example/stray.jpg</image:loc>
        <video:video><video:content_loc>https://cdn.example/v.mp4</video:content_loc></video:video>
      </url>
    </urlset>"#;
    let (s, got) = read_all(body);
    assert_eq!(locs(&got), ["https://example.com/page"]);
    assert_eq!((s.invalid, s.error), (0, None));
}

#[test]
fn sitemap_index() {
    let body = br#"<?xml version="1.0" encoding="UTF-8"?>
    <sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
      <sitemap><loc>https://example.com/sitemap1.xml.gz</loc><lastmod>2004-10-01T18:23:17+00:00</lastmod></sitemap>
      <sitemap><loc>https://example.com/sitemap2.xml.gz</loc></sitemap>
    </sitemapindex>"#;
    let (s, got) = read_all(body);
    assert_eq!(s.kind, Some(Kind::Index));
    assert!(got.iter().all(|g| g.kind == Kind::Index));
    assert_eq!(
        locs(&got),
        [
            "https://example.com/sitemap1.xml.gz",
            "https://example.com/sitemap2.xml.gz"
        ]
    );
    assert_eq!(got[0].lastmod_ms, Some(ms(2004, 10, 1, 18, 23, 17)));
}

#[test]
fn gzip_is_found_by_its_magic_bytes() {
    let (plain, plain_got) = read_all(URLSET.as_bytes());
    let (s, got) = read_with(
        &gzip(URLSET.as_bytes()),
        Some("application/octet-stream"),
        &Limits::default(),
    );
    assert_eq!(s, plain);
    assert_eq!(got, plain_got);

    let text = gzip(b"https://example.com/1\nhttps://example.com/2\n");
    let (s, got) = read_all(&text);
    assert_eq!(s.kind, Some(Kind::Text));
    assert_eq!(
        locs(&got),
        ["https://example.com/1", "https://example.com/2"]
    );
}

#[test]
fn bad_gzip_keeps_what_came_before() {
    let mut doc = String::from("<urlset>");
    for i in 0..2000 {
        doc.push_str(&format!("<url><loc>https://example.com/{i}</loc></url>\n"));
    }
    doc.push_str("</urlset>");
    let gz = gzip(doc.as_bytes());

    // Cut short: the stream ends early.
    let (s, got) = read_all(&gz[..gz.len() / 2]);
    let err = s.error.expect("a truncated gzip stream is an error");
    assert!(err.message.contains("gzip"), "{err}");
    assert!(err.offset > 0 && err.offset < doc.len() as u64, "{err}");
    assert!(!got.is_empty() && got.len() < 2000, "{} entries", got.len());
    assert_eq!(got[0].loc, "https://example.com/0");
    assert_eq!(
        (s.over_limit, s.cut_at_bytes),
        (0, false),
        "damage is not a limit"
    );
    assert_eq!(
        err.to_string(),
        format!("byte {}: {}", err.offset, err.message)
    );

    // Damaged in the middle.
    let mut bad = gz.clone();
    let mid = bad.len() / 2;
    for b in &mut bad[mid..mid + 16] {
        *b ^= 0x5a;
    }
    let (s, got) = read_all(&bad);
    assert!(s.error.is_some(), "corrupt data is an error: {s:?}");
    assert!(got.len() < 2000);

    // Only the magic bytes.
    let (s, got) = read_all(&[0x1f, 0x8b, 0x08]);
    assert!(s.error.unwrap().message.contains("gzip"));
    assert!(got.is_empty());
}

#[test]
fn gzip_bomb_costs_only_the_cap() {
    // 64 MiB of zeros compressed once, the member repeated 16 times: 1 GiB
    // uncompressed (concatenated members are one valid gzip file).
    let zeros = vec![0u8; 64 << 20];
    let mut enc = GzEncoder::new(Vec::new(), Compression::best());
    enc.write_all(&zeros).unwrap();
    let member = enc.finish().unwrap();
    let bomb = member.repeat(16);
    assert!(bomb.len() < 2 << 20, "{} bytes", bomb.len());

    let limits = Limits {
        max_bytes: 1 << 20,
        ..Limits::default()
    };
    let start = Instant::now();
    let (s, got) = read_with(&bomb, None, &limits);
    let took = start.elapsed();
    assert!(s.cut_at_bytes, "{s:?}");
    assert!(got.is_empty());
    assert_eq!(s.error, None);
    // Reading 1 GiB would take seconds; 1 MiB takes milliseconds. The bound
    // is loose for slow, shared machines.
    assert!(took < Duration::from_secs(2), "{took:?}");
}

#[test]
fn text_sitemap() {
    let body = b"https://example.com/a\r\n\n   \nhttp://example.com/b\nnot a url\nftp://example.com/c\n/relative\n\xff\xfe\nhttps://example.com/last";
    let (s, got) = read_with(body, Some("text/plain; charset=utf-8"), &Limits::default());
    assert_eq!(s.kind, Some(Kind::Text));
    assert_eq!(
        locs(&got),
        [
            "https://example.com/a",
            "http://example.com/b",
            "https://example.com/last"
        ]
    );
    assert_eq!(s.invalid, 4);
    assert_eq!(s.error, None);
    assert!(
        got.iter()
            .all(|g| g.kind == Kind::Text && g.lastmod_ms.is_none())
    );
}

#[test]
fn text_lines_too_long_are_invalid_and_not_stored() {
    let long = format!("https://example.com/{}", "x".repeat(10 * MAX_LOC));
    let exact = format!("https://example.com/{}", "y".repeat(MAX_LOC - 20));
    let body = format!("{long}\n  {exact}  \nhttps://example.com/after\n{long}");
    for input in [body.clone().into_bytes(), gzip(body.as_bytes())] {
        let (s, got) = read_all(&input);
        assert_eq!(locs(&got), [exact.as_str(), "https://example.com/after"]);
        assert_eq!((s.invalid, s.over_limit, s.error), (2, 0, None));
    }
}

#[test]
fn text_or_xml() {
    // Served as text/plain but XML: read as XML.
    let (s, _) = read_with(URLSET.as_bytes(), Some("text/plain"), &Limits::default());
    assert_eq!((s.kind, s.entries), (Some(Kind::UrlSet), 2));
    // No type, not starting with `<`: text.
    let (s, got) = read_with(b"\n\nhttps://example.com/x\n", None, &Limits::default());
    assert_eq!(
        (s.kind, locs(&got)),
        (Some(Kind::Text), vec!["https://example.com/x"])
    );
    // Served as XML but not XML: not a sitemap, rather than lines of text.
    let (s, got) = read_with(
        b"https://example.com/x\n",
        Some("application/xml"),
        &Limits::default(),
    );
    assert_eq!(s.kind, None);
    assert!(got.is_empty());
    // Nothing at all.
    for body in [&b""[..], b"  \n\t ", b"\xEF\xBB\xBF"] {
        let (s, got) = read_all(body);
        assert_eq!(s, Summary::default(), "{body:?}");
        assert!(got.is_empty());
    }
}

#[test]
fn byte_order_mark() {
    let mut body = b"\xEF\xBB\xBF".to_vec();
    body.extend_from_slice(URLSET.as_bytes());
    let (s, got) = read_all(&body);
    assert_eq!((s.kind, s.entries, s.error), (Some(Kind::UrlSet), 2, None));
    assert_eq!(got[0].loc, "https://example.com/");

    let (s, got) = read_all(b"\xEF\xBB\xBFhttps://example.com/t\n");
    assert_eq!(
        (s.kind, locs(&got)),
        (Some(Kind::Text), vec!["https://example.com/t"])
    );
    let (s, _) = read_all(&gzip(&body));
    assert_eq!((s.kind, s.entries), (Some(Kind::UrlSet), 2));
}

#[test]
fn rss_feed() {
    let body = br#"<?xml version="1.0"?>
    <rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">
      <channel>
        <title>News</title>
        <link>https://example.com/</link>
        <atom:link href="https://example.com/feed.xml" rel="self"/>
        <item>
          <title>One</title>
          <link>https://example.com/news/1</link>
          <pubDate>Sun, 19 May 2002 15:21:36 GMT</pubDate>
          <atom:link href="https://example.com/ignored"/>
        </item>
        <item><link>/news/2</link><pubDate>Tue, 10 Jun 2003 04:00:00 -0500</pubDate></item>
        <item><link>mailto:someone@example.com</link></item>
        <item><title>no link</title></item>
      </channel>
    </rss>"#;
    let (s, got) = read_all(body);
    assert_eq!(s.kind, Some(Kind::Rss));
    assert_eq!(
        locs(&got),
        ["https://example.com/news/1", "/news/2"],
        "the channel's own link is not an entry"
    );
    assert_eq!(got[0].lastmod_ms, Some(ms(2002, 5, 19, 15, 21, 36)));
    assert_eq!(got[1].lastmod_ms, Some(ms(2003, 6, 10, 9, 0, 0)));
    assert_eq!(s.invalid, 2, "mailto: and a missing link");
}

#[test]
fn rss_1_rdf() {
    let body = br#"<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/">
      <channel rdf:about="https://example.com/"><link>https://example.com/</link></channel>
      <item rdf:about="https://example.com/r1"><link>https://example.com/r1</link></item>
    </rdf:RDF>"#;
    let (s, got) = read_all(body);
    assert_eq!(
        (s.kind, locs(&got)),
        (Some(Kind::Rss), vec!["https://example.com/r1"])
    );
}

#[test]
fn atom_feed() {
    let body = br#"<?xml version="1.0" encoding="utf-8"?>
    <feed xmlns="http://www.w3.org/2005/Atom">
      <link href="https://example.com/" rel="alternate"/>
      <entry>
        <link rel="edit" href="https://example.com/edit/1"/>
        <link href="https://example.com/a?x=1&amp;y=2"/>
        <updated>2003-12-13T18:30:02.25Z</updated>
      </entry>
      <entry>
        <link rel="alternate" type="text/html" href="/b"></link>
        <updated>not a date</updated>
      </entry>
      <entry><link rel="enclosure" href="https://example.com/c.mp3"/></entry>
    </feed>"#;
    let (s, got) = read_all(body);
    assert_eq!(s.kind, Some(Kind::Atom));
    assert_eq!(locs(&got), ["https://example.com/a?x=1&y=2", "/b"]);
    assert_eq!(got[0].lastmod_ms, Some(ms(2003, 12, 13, 18, 30, 2) + 250));
    assert_eq!(got[1].lastmod_ms, None);
    assert_eq!(s.invalid, 1, "an entry without an alternate link");
}

#[test]
fn cdata_and_entities_in_loc() {
    let body = br#"<urlset>
      <url><loc><![CDATA[https://example.com/?a=1&b=2]]></loc></url>
      <url><loc>https://example.com/?a=1&amp;b=2&amp;c=&lt;&gt;&quot;&apos;</loc></url>
      <url><loc>https://example.com/caf&#233;/&#x41;</loc></url>
      <url><loc>https://example.com/&nbsp;</loc></url>
    </urlset>"#;
    let (s, got) = read_all(body);
    assert_eq!(
        locs(&got),
        [
            "https://example.com/?a=1&b=2",
            "https://example.com/?a=1&b=2&c=<>\"'",
            "https://example.com/café/A"
        ]
    );
    assert_eq!(s.invalid, 1, "an unknown entity makes the loc invalid");
    assert_eq!(s.error, None);
}

#[test]
fn bare_ampersand_is_read_as_itself() {
    let body = b"<urlset><url><loc>https://example.com/?a=1&b=2</loc></url>\
        <url><loc>https://example.com/?c=3 & d</loc></url></urlset>";
    let (s, got) = read_all(body);
    assert_eq!(s.error, None);
    assert_eq!(
        locs(&got),
        [
            "https://example.com/?a=1&b=2",
            "https://example.com/?c=3 & d"
        ]
    );
}

#[test]
fn invalid_locs_are_counted() {
    let long = format!("https://example.com/{}", "x".repeat(MAX_LOC));
    let body = format!(
        "<urlset><url><loc></loc></url><url></url><url/><url><loc>{long}</loc></url>\
         <url><loc>/relative</loc></url><url><loc>javascript:alert(1)</loc></url>\
         <url><loc>https://</loc></url><url><loc>https:///path</loc></url>\
         <url><loc>HTTPS://Example.com/ok</loc></url></urlset>"
    );
    let (s, got) = read_all(body.as_bytes());
    assert_eq!(locs(&got), ["HTTPS://Example.com/ok"]);
    assert_eq!(s.invalid, 8);
    let exact = format!("https://example.com/{}", "y".repeat(MAX_LOC - 20));
    assert_eq!(exact.len(), MAX_LOC);
    let (s, _) =
        read_all(format!("<urlset><url><loc>\n   {exact}\n  </loc></url></urlset>").as_bytes());
    assert_eq!(
        (s.entries, s.invalid),
        (1, 0),
        "2,048 characters is the longest taken"
    );
}

#[test]
fn entry_limit() {
    let mut doc = String::from("<urlset>\n");
    for i in 0..50_001 {
        doc.push_str(&format!("<url><loc>https://example.com/{i}</loc></url>\n"));
    }
    doc.push_str("</urlset>\n");
    let (s, got) = read_all(doc.as_bytes());
    assert_eq!((s.entries, s.over_limit, s.invalid), (50_000, 1, 0));
    assert_eq!(got.last().unwrap().loc, "https://example.com/49999");
    assert!(!s.cut_at_bytes);

    let small = Limits {
        max_entries: 3,
        ..Limits::default()
    };
    let (s, got) = read_with(b"https://a.example/1\nhttps://a.example/2\nbad\nhttps://a.example/3\nhttps://a.example/4\n", None, &small);
    assert_eq!(
        (s.entries, s.over_limit, s.invalid, got.len()),
        (3, 1, 1, 3)
    );
}

#[test]
fn byte_limit_cuts_plain_and_gzip() {
    let mut doc = String::from("<urlset>\n");
    for i in 0..100 {
        doc.push_str(&format!(
            "<url><loc>https://example.com/{i:03}</loc></url>\n"
        ));
    }
    doc.push_str("</urlset>\n");
    // Each line is 47 bytes; cut in the middle of the 11th entry.
    let line = "<url><loc>https://example.com/000</loc></url>\n".len() as u64;
    let limits = Limits {
        max_bytes: 9 + 10 * line + 20,
        ..Limits::default()
    };
    for body in [doc.clone().into_bytes(), gzip(doc.as_bytes())] {
        let (s, got) = read_with(&body, None, &limits);
        assert!(s.cut_at_bytes, "{s:?}");
        assert_eq!(s.error, None, "a cut is not malformed XML");
        assert_eq!(got.len(), 10);
        assert_eq!(s.over_limit, 1, "the entry cut in the middle");
        assert_eq!(got[9].loc, "https://example.com/009");
    }
    // Exactly the size: no cut.
    let exact = Limits {
        max_bytes: doc.len() as u64,
        ..Limits::default()
    };
    for body in [doc.clone().into_bytes(), gzip(doc.as_bytes())] {
        let (s, _) = read_with(&body, None, &exact);
        assert_eq!((s.cut_at_bytes, s.entries, s.error), (false, 100, None));
    }
    // Text: a line cut in the middle is not taken.
    let text = "https://example.com/aaaa\nhttps://example.com/bbbb\n";
    let cut = Limits {
        max_bytes: 30,
        ..Limits::default()
    };
    let (s, got) = read_with(text.as_bytes(), None, &cut);
    assert_eq!(
        (locs(&got), s.over_limit, s.cut_at_bytes),
        (vec!["https://example.com/aaaa"], 1, true)
    );
}

#[test]
fn a_truncated_document_is_cut_not_bad() {
    let mut doc = String::from("<urlset>\n");
    for i in 0..20 {
        doc.push_str(&format!(
            "<url><loc>https://example.com/{i:03}</loc></url>\n"
        ));
    }
    doc.push_str("</urlset>\n");
    let line = "<url><loc>https://example.com/000</loc></url>\n".len();
    let truncated = Limits {
        truncated: true,
        ..Limits::default()
    };
    // The download stopped in the middle of the 6th entry (its loc too).
    let cut = &doc.as_bytes()[..9 + 5 * line + 25];
    let gz = gzip(doc.as_bytes());
    for (what, body) in [
        ("plain", cut.to_vec()),
        ("gzip", gz[..gz.len() / 2].to_vec()),
    ] {
        let (s, got) = read_with(&body, None, &truncated);
        assert_eq!(s.error, None, "{what}: a cut document is not malformed XML");
        assert!(s.cut_at_bytes, "{what}: {s:?}");
        assert_eq!(s.over_limit, 1, "{what}: the entry cut in the middle");
        assert!(
            got.iter()
                .all(|g| g.loc.len() == "https://example.com/000".len()),
            "{what}: {got:?}"
        );
        // Not given as truncated: the plain cut is malformed, the gzip cut
        // is bad gzip data.
        let (s, _) = read_with(&body, None, &Limits::default());
        assert!(s.error.is_some(), "{what}: {s:?}");
    }
    let (s, got) = read_with(cut, None, &truncated);
    assert_eq!(got.len(), 5);
    assert_eq!(got[4].loc, "https://example.com/004");
    assert_eq!(s.entries, 5);

    // Text: the partial last line is not a URL, even when it parses as one.
    let text = b"https://example.com/aaaa\nhttps://example.com/bbbb\nhttps://example.com/cc";
    for body in [text.to_vec(), gzip(text)[..].to_vec()] {
        let (s, got) = read_with(&body, None, &truncated);
        assert_eq!(
            (locs(&got), s.over_limit, s.cut_at_bytes, s.error),
            (
                vec!["https://example.com/aaaa", "https://example.com/bbbb"],
                1,
                true,
                None
            )
        );
    }
    // Cut right after a line end: every line is whole.
    let (s, got) = read_with(&text[..50], None, &truncated);
    assert_eq!((got.len(), s.over_limit, s.cut_at_bytes), (2, 0, true));
}

#[test]
fn html_that_is_not_xml_is_no_sitemap() {
    for ct in [
        "text/html",
        "text/html; charset=utf-8",
        "application/xhtml+xml",
    ] {
        let (s, got) = read_with(
            b"not found\nhttps://example.com/a\n",
            Some(ct),
            &Limits::default(),
        );
        assert_eq!((s.kind, got.len(), s.invalid), (None, 0, 0), "{ct}");
    }
    // Served as plain text, or with no type, it is a text sitemap.
    for ct in [Some("text/plain"), None] {
        let (s, got) = read_with(b"https://example.com/a\n", ct, &Limits::default());
        assert_eq!((s.kind, got.len()), (Some(Kind::Text), 1), "{ct:?}");
    }
}

#[test]
fn sitemaps_only_stops_at_other_roots_and_reads_no_text() {
    let only = Limits {
        sitemaps_only: true,
        ..Limits::default()
    };
    let rss = "<rss version=\"2.0\"><channel><item><link>https://example.com/a</link></item></channel></rss>";
    let atom = "<feed xmlns=\"http://www.w3.org/2005/Atom\"><entry><link href=\"https://example.com/a\"/></entry></feed>";
    let text = "https://example.com/a\nhttps://example.com/b\n";
    for doc in [rss, atom, text] {
        for body in [doc.as_bytes().to_vec(), gzip(doc.as_bytes())] {
            let (s, got) = read_with(&body, Some("application/octet-stream"), &only);
            assert_eq!(s, Summary::default(), "{doc}");
            assert!(got.is_empty());
            // Read in full otherwise.
            let (s, _) = read_with(&body, Some("application/octet-stream"), &Limits::default());
            assert!(s.kind.is_some() && s.entries > 0, "{doc}: {s:?}");
        }
    }
    // A gzip file of something else (a tarball) is not decompressed to
    // its end: the bytes after the first buffer are never looked at, so
    // damage there goes unseen.
    let mut tarball = gzip(&vec![b'x'; 1 << 20]);
    let n = tarball.len();
    tarball[n - 8..].copy_from_slice(&[0; 8]);
    let (s, _) = read_with(&tarball, None, &only);
    assert_eq!(s, Summary::default());
    let (s, _) = read_with(&tarball, None, &Limits::default());
    assert!(s.error.is_some(), "{s:?}");
    // Sitemaps are read as ever.
    let (s, got) = read_with(URLSET.as_bytes(), None, &only);
    assert_eq!((s.kind, got.len()), (Some(Kind::UrlSet), 2));
}

#[test]
fn malformed_xml_keeps_earlier_entries() {
    let truncated = b"<urlset><url><loc>https://example.com/1</loc></url><url><loc>https://exa";
    let (s, got) = read_all(truncated);
    assert_eq!(
        (s.kind, locs(&got)),
        (Some(Kind::UrlSet), vec!["https://example.com/1"])
    );
    let err = s.error.expect("truncated XML is an error");
    assert_eq!(err.offset, truncated.len() as u64, "{err}");
    assert!(err.message.contains("ends inside 3 open elements"), "{err}");

    let mismatched = b"<urlset><url><loc>https://example.com/1</loc></url><url><loc>https://example.com/2</lox></url></urlset>";
    let (s, got) = read_all(mismatched);
    assert_eq!(locs(&got), ["https://example.com/1"]);
    let err = s.error.expect("mismatched tags are an error");
    let at = mismatched.windows(6).position(|w| w == b"</lox>").unwrap() as u64;
    assert_eq!(err.offset, at, "{err}");

    let garbage = b"<urlset><url><loc>https://example.com/1</loc></url><<<>>>&&&</urlset>";
    let (s, got) = read_all(garbage);
    assert_eq!(got.len(), 1);
    assert!(s.error.is_some(), "{s:?}");

    let cut_tag = b"<urlset><url><loc>https://example.com/1</loc></url><ur";
    let (s, got) = read_all(cut_tag);
    assert_eq!(got.len(), 1);
    assert!(s.error.is_some(), "{s:?}");
}

#[test]
fn html_page_is_not_a_sitemap() {
    let html = b"<!DOCTYPE html>\n<html><head><title>Not found</title></head><body><a href=\"https://example.com/x\">x</a><loc>https://example.com/y</loc></body></html>";
    let (s, got) = read_with(html, Some("text/html"), &Limits::default());
    assert_eq!(s.kind, None);
    assert!(got.is_empty());
    assert_eq!((s.entries, s.invalid, s.error), (0, 0, None));
    let (s, _) = read_all(b"<unknown><url><loc>https://example.com/</loc></url></unknown>");
    assert_eq!((s.kind, s.entries), (None, 0));
}

#[test]
fn lastmod_formats() {
    let cases: &[(&str, Option<i64>)] = &[
        ("2005", Some(ms(2005, 1, 1, 0, 0, 0))),
        ("2005-07", Some(ms(2005, 7, 1, 0, 0, 0))),
        ("2005-07-16", Some(ms(2005, 7, 16, 0, 0, 0))),
        ("2005-07-16T19:20+01:00", Some(ms(2005, 7, 16, 18, 20, 0))),
        ("2005-07-16T19:20:30Z", Some(ms(2005, 7, 16, 19, 20, 30))),
        (
            "2005-07-16T19:20:30.45-05:30",
            Some(ms(2005, 7, 17, 0, 50, 30) + 450),
        ),
        (
            "2005-07-16T19:20:30.123456789+00:00",
            Some(ms(2005, 7, 16, 19, 20, 30) + 123),
        ),
        ("2005-07-16 19:20:30", Some(ms(2005, 7, 16, 19, 20, 30))),
        (
            "2005-07-16T19:20:30+0100",
            Some(ms(2005, 7, 16, 18, 20, 30)),
        ),
        ("2016-12-31T23:59:60Z", Some(ms(2016, 12, 31, 23, 59, 59))),
        ("1969-12-31T23:59:59Z", Some(-1000)),
        ("2024-02-29", Some(ms(2024, 2, 29, 0, 0, 0))),
        (" 2005-07-16 ", Some(ms(2005, 7, 16, 0, 0, 0))),
        ("2023-02-29", None),
        ("2005-13-01", None),
        ("2005-07-16T25:00Z", None),
        ("2005-07-16T19Z", None),
        ("2005-7-16", None),
        ("05-07-16", None),
        ("2005-07T10:00Z", None),
        ("2005-07-16T19:20:30+25:00", None),
        ("2005-07-16T19:20:30.Z", None),
        ("yesterday", None),
        ("", None),
    ];
    for (text, want) in cases {
        assert_eq!(parse_w3c_datetime(text), *want, "{text:?}");
    }
    let body = b"<urlset><url><loc>https://a.example/</loc><lastmod>junk</lastmod><priority>2.0</priority></url></urlset>";
    let (s, got) = read_all(body);
    assert_eq!(
        (s.entries, s.error),
        (1, None),
        "a bad lastmod is not an error"
    );
    assert_eq!((got[0].lastmod_ms, got[0].priority), (None, None));
}

#[test]
fn rfc822_dates() {
    let cases: &[(&str, Option<i64>)] = &[
        (
            "Sun, 19 May 2002 15:21:36 GMT",
            Some(ms(2002, 5, 19, 15, 21, 36)),
        ),
        ("19 May 2002 15:21 +0200", Some(ms(2002, 5, 19, 13, 21, 0))),
        ("Mon, 01 Jan 01 00:00:00 EST", Some(ms(2001, 1, 1, 5, 0, 0))),
        (
            "Mon, 1 January 1990 00:00:00 PDT",
            Some(ms(1990, 1, 1, 7, 0, 0)),
        ),
        ("Thu, 31 Feb 2002 00:00:00 GMT", None),
        ("Sun, 19 Foo 2002 15:21:36 GMT", None),
        ("Sun, 19 May 2002", None),
        ("Sun, 19 May 2002 15:21:36 +99", None),
        ("", None),
    ];
    for (text, want) in cases {
        assert_eq!(parse_rfc822(text), *want, "{text:?}");
    }
}

#[test]
fn priority_range() {
    let mut doc = String::from("<urlset>");
    for p in ["0.0", "1.0", " 0.5 ", "1.5", "-0.1", "NaN", "high", "1"] {
        doc.push_str(&format!(
            "<url><loc>https://a.example/</loc><priority>{p}</priority></url>"
        ));
    }
    doc.push_str("</urlset>");
    let (_, got) = read_all(doc.as_bytes());
    let got: Vec<_> = got.iter().map(|g| g.priority).collect();
    assert_eq!(
        got,
        [
            Some(0.0),
            Some(1.0),
            Some(0.5),
            None,
            None,
            None,
            None,
            Some(1.0)
        ]
    );
}

#[test]
fn arbitrary_bytes_never_panic() {
    let mut rng = common::testutil::Rng::new(13);
    let pieces: &[&[u8]] = &[
        b"<urlset>",
        b"</urlset>",
        b"<url>",
        b"</url>",
        b"<loc>",
        b"</loc>",
        b"https://example.com/",
        b"<sitemapindex>",
        b"<sitemap>",
        b"<rss>",
        b"<item>",
        b"<link>",
        b"<feed>",
        b"<entry>",
        b"<link href=\"/x\"/>",
        b"&amp;",
        b"&#x;",
        b"&#0;",
        b"<![CDATA[",
        b"]]>",
        b"<!--",
        b"-->",
        b"<?xml version=\"1.0\"?>",
        b"<lastmod>",
        b"2024-02-30T",
        b"<priority>",
        b"\xEF\xBB\xBF",
        b"\x1f\x8b",
        b"\n",
        b" ",
        b"\xff",
        b"<",
        b">",
        b"\"",
        b"'",
        b"=",
        b"sm:",
        b"/",
    ];
    let limits = Limits {
        max_entries: 5,
        max_bytes: 300,
        ..Limits::default()
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    for round in 0..3000 {
        if Instant::now() > deadline {
            break;
        }
        let mut body = Vec::new();
        for _ in 0..rng.below(60) {
            if rng.chance(0.3) {
                body.push(rng.next_u64() as u8);
            } else {
                let piece = pieces[rng.below(pieces.len())];
                body.extend_from_slice(piece);
            }
        }
        let gz = round % 4 == 0;
        let input = if gz { gzip(&body) } else { body.clone() };
        let (s, got) = read_with(&input, None, &limits);
        assert!(s.entries <= 5, "{body:?}");
        assert!(
            got.iter()
                .all(|g| !g.loc.is_empty() && g.loc.len() <= MAX_LOC)
        );
        if let Some(e) = &s.error {
            assert!(
                e.offset <= body.len() as u64,
                "{e} in {} bytes: {body:?}",
                body.len()
            );
        }
    }
}

#[test]
fn damaged_sitemaps_never_panic() {
    // Valid documents with bits flipped, bytes removed or cut off: never a
    // panic, never more entries than were there, and every error explained.
    let mut index = String::from("<sitemapindex>");
    for i in 0..50 {
        index.push_str(&format!(
            "<sitemap><loc>https://example.com/s{i}.xml</loc></sitemap>"
        ));
    }
    index.push_str("</sitemapindex>");
    let docs: Vec<Vec<u8>> = vec![
        URLSET.into(),
        index.into(),
        b"https://a.example/1\nhttps://a.example/2\n".to_vec(),
    ];
    let mut rng = common::testutil::Rng::new(1313);
    let deadline = Instant::now() + Duration::from_secs(20);
    for round in 0..2000 {
        if Instant::now() > deadline {
            break;
        }
        let doc = &docs[round % docs.len()];
        let (_, want) = read_all(doc);
        let mut bad = if round % 3 == 0 {
            gzip(doc)
        } else {
            doc.clone()
        };
        for _ in 0..1 + rng.below(3) {
            if bad.is_empty() {
                break;
            }
            let at = rng.below(bad.len());
            match rng.below(3) {
                0 => bad[at] ^= 1 << rng.below(8),
                1 => {
                    bad.remove(at);
                }
                _ => bad.truncate(at.max(1)),
            }
        }
        let (s, got) = read_all(&bad);
        assert!(got.len() <= want.len() + 1, "{s:?}");
        if let Some(e) = &s.error {
            assert!(!e.message.is_empty());
        }
    }
}

#[test]
fn not_utf8_is_an_error_not_a_panic() {
    let body = b"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><urlset><url><loc>https://example.com/ok</loc></url><url><loc>https://example.com/caf\xe9</loc></url></urlset>";
    let (s, got) = read_all(body);
    assert_eq!(s.kind, Some(Kind::UrlSet));
    assert_eq!(locs(&got), ["https://example.com/ok"]);
    assert!(s.error.is_some(), "{s:?}");
}

#[test]
fn every_kind_is_at_its_discriminant() {
    for (i, kind) in Kind::ALL.iter().enumerate() {
        assert_eq!(*kind as usize, i, "{kind}");
    }
    let names: Vec<&str> = Kind::ALL.iter().map(|k| k.as_str()).collect();
    assert_eq!(names, ["urlset", "sitemapindex", "rss", "atom", "text"]);
}
