//! URLs that mean one page: a site whose links reach each of its pages
//! under ten spellings (tracking parameters, a session id, the host's
//! case, a dot segment, a fragment) is crawled to its end by
//! `scripts/crawl.sh`, and the server is asked for each page once.

use crate::support;

use std::collections::BTreeMap;
use std::time::Duration;

use testkit::server::{Request, Response, Server};

/// Pages of the site, and the spellings of each.
const PAGES: usize = 100;
const SPELLINGS: usize = 10;

/// The ten spellings of page `i`'s URL, as links of the home page
/// (`base` is `http://site.test:PORT`, `upper` the same with the host in
/// capitals).
fn spellings(base: &str, upper: &str, i: usize) -> [String; SPELLINGS] {
    [
        format!("{base}/page/{i}?lang=en"),
        format!("{upper}/page/{i}?lang=en"),
        format!("/page/{i}?lang=en&utm_source=news&utm_medium=mail"),
        format!("/page/{i}?UTM_Campaign=spring&lang=en"),
        format!("/page/{i}?fbclid=IwAR0x{i}&lang=en"),
        format!("/page/{i}?lang=en&gclid=Cj0K{i}&msclkid=9"),
        format!("/page/{i}?lang=en&sid=S{i}"),
        format!("/page/{i};jsessionid=J{i}?lang=en&mc_cid=c1"),
        format!("/page/x/../{i}?_ga=2.1&lang=en&_hsenc=h#top"),
        format!("{upper}/page/{i}?lang=en&PHPSESSID=p{i}&yclid=3#part"),
    ]
}

/// The site: its home page links to every spelling of every page; each
/// page links back home and to two spellings of the next page.
fn site(req: &Request, base: &str, upper: &str) -> Response {
    let links = |urls: &[String]| -> String {
        urls.iter()
            .map(|u| format!("<a href=\"{}\">x</a>\n", u.replace('&', "&amp;")))
            .collect()
    };
    match req.path() {
        "/robots.txt" => Response::not_found(),
        "/" => {
            let all: Vec<String> = (0..PAGES).flat_map(|i| spellings(base, upper, i)).collect();
            Response::html(links(&all))
        }
        p => match p
            .strip_prefix("/page/")
            .and_then(|n| n.parse::<usize>().ok())
        {
            Some(i) if i < PAGES => {
                let next = spellings(base, upper, (i + 1) % PAGES);
                Response::html(format!(
                    "<p>{i}</p><a href=/>home</a>{}",
                    links(&next[2..4])
                ))
            }
            _ => Response::not_found(),
        },
    }
}

#[test]
fn a_page_under_ten_spellings_is_fetched_once() {
    // The port is known once the server listens: the handler takes it from
    // the listener the request came in on.
    let server = Server::builder()
        .host("site.test", |req: &Request| {
            let port = req.local_addr().port();
            let base = format!("http://site.test:{port}");
            let upper = format!("http://SITE.Test:{port}");
            site(req, &base, &upper)
        })
        .start()
        .unwrap();
    let (scratch, crawl) = support::loopback_crawl(
        "one-page-urls",
        &server,
        "",
        "min_delay = \"1ms\"\ndelay_factor = 0\n",
        "[crawl]\nmin_free_disk = 0\n[segmenter]\nmax_links_per_page = 2000\n",
    );
    let seeds = scratch.path().join("seeds.txt");
    std::fs::write(&seeds, format!("{}\n", server.url("site.test", "/"))).unwrap();
    support::crawl_seeds_to_the_end(scratch.path(), &crawl, &seeds, Duration::from_secs(120));

    let mut asked: BTreeMap<String, usize> = BTreeMap::new();
    for e in server.logs() {
        if e.target.starts_with("/page/") {
            *asked.entry(e.target.clone()).or_default() += 1;
        }
    }
    let twice: Vec<_> = asked.iter().filter(|&(_, &n)| n > 1).collect();
    assert!(twice.is_empty(), "asked more than once: {twice:?}");
    let want: Vec<String> = (0..PAGES).map(|i| format!("/page/{i}?lang=en")).collect();
    let got: Vec<&String> = asked.keys().collect();
    let unexpected: Vec<_> = got.iter().filter(|t| !want.contains(t)).collect();
    assert!(
        unexpected.is_empty(),
        "asked for spellings the canonical form should have merged: {}",
        support::some(unexpected, 10)
    );
    assert_eq!(
        asked.len(),
        PAGES,
        "{} of {PAGES} pages asked for ({} links of {SPELLINGS} spellings each)",
        asked.len(),
        PAGES * SPELLINGS
    );
    let fetched = support::Outcome::read(&crawl)
        .stored
        .iter()
        .filter(|s| s.url.contains("/page/"))
        .count();
    assert_eq!(
        fetched, PAGES,
        "response records of pages in the WARC files"
    );
}

/// `www.hint.test` names a page of `www2.hint.test` as its home page's
/// canonical URL (`<link rel=canonical>`) and, in a `Link` header, for its
/// text file `/doc`; `www2.hint.test` serves its own home page.
fn hinting_site(req: &Request) -> Response {
    let port = req.local_addr().port();
    let www2 = format!("http://www2.hint.test:{port}");
    match (req.header("host").unwrap_or(""), req.path()) {
        (_, "/robots.txt") => Response::not_found(),
        (h, "/") if h.starts_with("www.") => Response::html(format!(
            "<head><link rel=canonical href=\"{www2}/\"></head><a href=/doc>d</a>"
        )),
        (_, "/doc") => Response::text("plain words")
            .header("Link", format!("<{www2}/doc.html>; rel=\"canonical\"")),
        (_, p) => Response::html(format!("<p>{p}</p>")),
    }
}

#[test]
fn a_canonical_link_is_kept_as_a_hint_and_merges_nothing() {
    let (server, scratch, crawl, seeds) = crate::host_rules_keys::two_host_crawl(
        "canonical-hint",
        ["www.hint.test", "www2.hint.test"],
        hinting_site,
        "",
    );
    let seeds = std::path::Path::new(&seeds);
    support::crawl_seeds_to_the_end(scratch.path(), &crawl, seeds, Duration::from_secs(120));
    // Both hosts' home pages, each once: the hint merged nothing.
    for host in ["www.hint.test", "www2.hint.test"] {
        let homes = server.log(host).iter().filter(|e| e.target == "/").count();
        assert_eq!(homes, 1, "{host}");
    }
    let home = server.url("www.hint.test", "/");
    let (hint, doc_hint) = (
        server.url("www2.hint.test", "/"),
        server.url("www2.hint.test", "/doc.html"),
    );
    // The metadata record of the page keeps the hint.
    let mut found = false;
    for run in std::fs::read_dir(crawl.join("fetched")).unwrap() {
        for file in testkit::warcio::warc_files(&run.unwrap().path()) {
            let mut reader = common::warc::WarcReader::open(&file, 1 << 20).unwrap();
            let mut rec = common::warc::WarcRecord::default();
            while reader.read_next(&mut rec).unwrap() {
                if rec.record_type() == Some("metadata") && rec.target_uri() == Some(home.as_str())
                {
                    let block = String::from_utf8_lossy(&rec.block).into_owned();
                    assert!(
                        block.contains(&format!("\r\ncrawlCanonical: {hint}\r\n")),
                        "{block}"
                    );
                    found = true;
                }
            }
        }
    }
    assert!(found, "no metadata record of {home}");
    // So does the fetch history, from the markup and from the header.
    let history = support::history_text(&crawl);
    let canonical_of = |url: &str| -> String {
        let line = history.lines().find(|l| l.split('\t').nth(1) == Some(url));
        let line = line.unwrap_or_else(|| panic!("{url} not in the history:\n{history}"));
        line.split('\t').nth(15).unwrap().to_string()
    };
    assert_eq!(canonical_of(&home), hint);
    assert_eq!(canonical_of(&server.url("www.hint.test", "/doc")), doc_hint);
    assert_eq!(canonical_of(&hint), "-");
}
