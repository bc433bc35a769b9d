//! The direct way against the general way: for every link of the table,
//! either the direct way declines or it gives the URL
//! `urlnorm::canonicalize_relative` gives.

use super::*;

const BASES: &[&str] = &[
    "http://example.com/dir/page.html",
    "https://doc.example.org/stable/std/index.html?x=1",
    "http://example.com/",
    "http://example.com:8080/a/b/",
    "http://example.com/a%7Eb/c",
    "http://example.com/a;jsessionid=1/c",
    "http://user@example.com/a/b",
    "http://example.com./a/b",
    "http://127.0.0.1:81/a/b",
    "http://[::1]/a/b",
];

const HREFS: &[&str] = &[
    "next.html",
    "/top",
    "../up",
    "../../../../x",
    "./",
    ".",
    "..",
    "a/./b/../c",
    "./../a/../../b/.../c./.d/..e/x.",
    "../",
    "../..",
    "./.",
    ".a/b..",
    "a/..",
    "a/.",
    "a//b",
    "/",
    "//other.example/x",
    "?q=1",
    "?",
    "?q=1&sid=2",
    "?q='a'",
    "?q=%7e",
    "x?a=1&b=2#frag",
    "x#frag?notquery",
    "#top",
    "",
    "a%2e/b",
    "%2e%2e/x",
    "%2E%2E/x",
    "a%2F%3Fb?c%26d=%3D&e=%0A%7B",
    "a%7E?b=%7e",
    "a%3f",
    "a%3",
    "a%",
    "%zz",
    "?q=%",
    "?%73id=1",
    "a;jsessionid=9/b",
    "caf\u{e9}",
    "a b",
    "a\tb",
    "a\\b",
    "a|b",
    "HTTP://Example.COM/x",
    "http://example.com",
    "http://example.com?q",
    "http://example.com:80/x",
    "https://example.com:443/x",
    "http://example.com:8080/x",
    "http://example.com:080/x",
    "http://example.com:99999/x",
    "http://example.com:/x",
    "http://example.com./x",
    "http://ex--ample.com/x",
    "http://xn--bcher-kva.de/",
    "http://xn--invalid/",
    "http://127.1/x",
    "http://1.2.3.4/x",
    "http://0x7f.1/x",
    "http://a.b.c9/x",
    "http://a..b/x",
    "http://.a/x",
    "http://user@example.com/x",
    "https://github.com/rust-lang/rust/blob/master/library/core/src/option.rs#L100",
    "https://example.com/a/../../b/./c/.",
    "http:///x",
    "http:/x",
    "http:x",
];

#[test]
fn the_direct_way_gives_the_general_way_s_url() {
    let mut failures = Vec::new();
    let mut direct = 0;
    let mut scratch = Scratch::default();
    for base in BASES {
        let base = Url::parse(base).unwrap();
        for &href in HREFS {
            let mut resolver = Resolver::new(encoding_rs::UTF_8, &base, &mut scratch, true);
            let kind = scheme_kind(href);
            if kind == SchemeKind::Other {
                continue;
            }
            let general = urlnorm::canonicalize_relative(&base, href);
            let Some(got) = resolver.direct(href, kind) else {
                continue;
            };
            direct += 1;
            match general {
                // Every part, not only the text: a URL the direct way
                // builds from its parts must read as a parsed one.
                Ok(want) if format!("{want:?}") == format!("{got:?}") => {}
                other => failures.push(format!(
                    "{base} + {href:?}: direct {got}, general {other:?}"
                )),
            }
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
    // The plain links of the plain bases go the direct way.
    assert!(direct > 100, "only {direct} links went the direct way");
}

#[test]
fn plain_links_go_the_direct_way() {
    let base = Url::parse("https://doc.example.org/stable/std/index.html").unwrap();
    let mut scratch = Scratch::default();
    let mut resolver = Resolver::new(encoding_rs::UTF_8, &base, &mut scratch, true);
    for (href, want) in [
        (
            "../core/x.html#m",
            "https://doc.example.org/stable/core/x.html",
        ),
        ("/a?b=c&d", "https://doc.example.org/a?b=c&d"),
        ("https://github.com/x/y?", "https://github.com/x/y"),
        ("?q", "https://doc.example.org/stable/std/index.html?q"),
        (
            "a%20b?c=%5B%0A%5D",
            "https://doc.example.org/stable/std/a%20b?c=%5B%0A%5D",
        ),
    ] {
        let got = resolver.direct(href, scheme_kind(href));
        assert_eq!(got.as_ref().map(Url::as_str), Some(want), "{href}");
    }
    // Not plain: the general way.
    for href in ["a%7eb", "a%41", "?sid=1", "http://127.1/", "//x/y", "#top"] {
        assert_eq!(resolver.direct(href, scheme_kind(href)), None, "{href}");
    }
}

/// A canonical URL read back ([`read_canonical`]) is the URL the parser
/// reads, in every part, or `None`: every link the general way makes from
/// the table (what a metadata record lists), and the hrefs themselves.
#[test]
fn canonical_urls_read_back_as_the_parser_reads_them() {
    let mut failures = Vec::new();
    let (mut read, mut declined) = (0, 0);
    let mut buf = String::new();
    for base in BASES {
        let base = Url::parse(base).unwrap();
        for &href in HREFS {
            let made = urlnorm::canonicalize_relative(&base, href).map(|u| u.to_string());
            for text in made.iter().map(String::as_str).chain([href]) {
                let Some(got) = read_canonical(text, &mut buf) else {
                    declined += 1;
                    continue;
                };
                read += 1;
                match Url::parse(text) {
                    Ok(want)
                        if format!("{want:?}") == format!("{got:?}") && want.as_str() == text => {}
                    other => failures.push(format!("{text:?}: read {got:?}, parsed {other:?}")),
                }
            }
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
    // Canonical links with a domain name as their host are read back.
    assert!(
        read > 100 && declined > 10,
        "read {read}, declined {declined}"
    );
}
