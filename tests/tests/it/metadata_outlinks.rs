//! The links of each page in its WARC `metadata` record, as Heritrix
//! writes them (`outlink: URL L a/@href`): a small web whose pages hold the
//! kinds of links a crawler must follow or skip is fetched by the real
//! fetcher; each HTML page's record lists exactly the links of the served
//! HTML that the segmenter follows (nofollow respected), closed by the
//! `crawlLinks` summary; `warcio check` passes; `--metadata-outlinks false`
//! keeps the records without the links.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::warc::{WarcReader, WarcRecord};
use testkit::server::{Response, Routes, Server};
use testkit::{TempDir, bins, warcio};

const HOME: &str = r##"<!doctype html><html><head>
<link rel=canonical href="/">
<link rel=stylesheet href="/style.css">
</head><body>
<a href="/a?x=1#frag">a</a>
<a href="b.html" rel="nofollow">b</a>
<a href="javascript:void(0)">js</a> <a href="mailto:me@site.test">mail</a>
<a href="#top">top</a>
<a href="http://other.test/x">other host</a>
<map><area href="/area"></map>
<iframe src="/frame"></iframe>
</body></html>"##;

const NOFOLLOW: &str = r#"<html><head><meta name="robots" content="nofollow"></head>
<body><a href="/c">c</a><a href="/d">d</a></body></html>"#;

fn web() -> Server {
    Server::builder()
        .host(
            "site.test",
            Routes::new()
                .route("/robots.txt", Response::not_found())
                .route("/", Response::html(HOME))
                .route("/nofollow", Response::html(NOFOLLOW))
                .route(
                    "/gz",
                    Response::html(NOFOLLOW.replace("nofollow", "x")).chunked(7),
                )
                .route("/data.txt", Response::text("<a href=\"/z\">z</a>"))
                .route(
                    "/data.json",
                    Response::status(200)
                        .header("Content-Type", "application/json")
                        .body("{\"a\": \"<a href=/z>z</a>\"}"),
                )
                .route("/old", Response::redirect(301, "/a")),
        )
        .start()
        .unwrap()
}

/// A crawl of `server`'s pages, injected and fetched once with `flags`;
/// its WARC files.
fn fetch(server: &Server, scratch: &Path, name: &str, flags: &[&str]) -> Vec<PathBuf> {
    let root = scratch.join(name);
    std::fs::create_dir_all(&root).unwrap();
    let hosts = scratch.join("hosts");
    std::fs::write(&hosts, server.hosts_file()).unwrap();
    std::fs::write(
        root.join("crawl.toml"),
        format!(
            "[agent]\nname = \"linkbot\"\nurl = \"https://example.org/bot.html\"\n\n\
             [fetcher]\nallow_private = true\nhosts_file = \"{}\"\nmin_delay = \"0ms\"\n\
             delay_factor = 0\n",
            hosts.display()
        ),
    )
    .unwrap();
    let seeds = scratch.join(format!("{name}-seeds.txt"));
    let list: String = ["/", "/nofollow", "/gz", "/data.txt", "/data.json", "/old"]
        .iter()
        .map(|p| format!("{}\n", server.url("site.test", p)))
        .collect();
    std::fs::write(&seeds, list).unwrap();
    bins::run(
        bins::segmenter_cmd().arg("inject").arg(&root).arg(&seeds),
        &root,
    );
    bins::run(
        bins::fetcher_cmd()
            .arg("fetch")
            .arg(&root)
            .args(["--progress", "none"])
            .args(flags),
        &root,
    );
    let mut runs: Vec<PathBuf> = std::fs::read_dir(root.join("fetched"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    runs.sort();
    runs.iter().flat_map(|r| warcio::warc_files(r)).collect()
}

/// The `metadata` record of each URL: its fields (name, value) in order.
fn metadata_by_url(warcs: &[PathBuf]) -> BTreeMap<String, Vec<(String, String)>> {
    let mut out = BTreeMap::new();
    let mut rec = WarcRecord::default();
    let mut response_ids = Vec::new();
    for w in warcs {
        let mut r = WarcReader::open(w, usize::MAX).unwrap();
        while r.read_next(&mut rec).unwrap() {
            match rec.record_type() {
                Some("response") => {
                    response_ids.push(rec.header("WARC-Record-ID").unwrap().to_string())
                }
                Some("metadata") => {
                    // Right after its response, and pointing at it.
                    assert_eq!(
                        rec.header("WARC-Concurrent-To"),
                        response_ids.last().map(String::as_str)
                    );
                    let block = String::from_utf8(rec.block.clone()).unwrap();
                    let fields = block
                        .lines()
                        .filter(|l| !l.is_empty())
                        .map(|l| {
                            let (k, v) =
                                l.split_once(": ").unwrap_or((l.trim_end_matches(':'), ""));
                            (k.to_string(), v.to_string())
                        })
                        .collect();
                    out.insert(rec.target_uri().unwrap().to_string(), fields);
                }
                _ => {}
            }
        }
    }
    out
}

fn values<'a>(fields: &'a [(String, String)], name: &str) -> Vec<&'a str> {
    fields
        .iter()
        .filter(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
        .collect()
}

#[test]
fn metadata_records_list_each_pages_outlinks() {
    let server = web();
    let scratch = TempDir::new("metadata-outlinks");
    let warcs = fetch(&server, scratch.path(), "on", &[]);
    warcio::check(&warcs).unwrap_or_else(|e| panic!("{e}"));
    let meta = metadata_by_url(&warcs);
    let url = |p: &str| server.url("site.test", p);

    let home = &meta[&url("/")];
    assert_eq!(values(home, "crawlVia"), ["seed"]);
    // The served links the segmenter follows, canonical, in page order:
    // not the stylesheet, the nofollow link, javascript:, mailto: or #top.
    let expected = [
        format!("{} L link/@href", url("/")),
        format!("{} L a/@href", url("/a?x=1")),
        "http://other.test/x L a/@href".to_string(),
        format!("{} L area/@href", url("/area")),
        format!("{} L iframe/@src", url("/frame")),
    ];
    assert_eq!(values(home, "outlink"), expected);
    assert_eq!(
        values(home, "crawlLinks"),
        ["listed 5 nofollow 1 scheme 2 invalid 0 same-page 1 over-cap 0 incomplete 0"]
    );
    // The summary closes the list.
    assert_eq!(home.last().unwrap().0, "crawlLinks");

    // A page that says nofollow: its links are counted, none listed.
    let nofollow = &meta[&url("/nofollow")];
    assert!(values(nofollow, "outlink").is_empty(), "{nofollow:?}");
    assert_eq!(
        values(nofollow, "crawlLinks"),
        ["listed 0 nofollow 2 scheme 0 invalid 0 same-page 0 over-cap 0 incomplete 0"]
    );
    // Chunked on the wire: read decoded.
    assert_eq!(
        values(&meta[&url("/gz")], "outlink"),
        [
            format!("{} L a/@href", url("/c")),
            format!("{} L a/@href", url("/d"))
        ]
    );
    // Plain text that looks like HTML is read as HTML, as the segmenter does.
    assert_eq!(
        values(&meta[&url("/data.txt")], "outlink"),
        [format!("{} L a/@href", url("/z"))]
    );
    // Not HTML: no page links, no summary (the segmenter would parse it).
    let text = &meta[&url("/data.json")];
    assert!(values(text, "outlink").is_empty() && values(text, "crawlLinks").is_empty());
    // A redirect: its target only, as before.
    let old = &meta[&url("/old")];
    assert_eq!(
        values(old, "outlink"),
        [format!("{} R location", url("/a"))]
    );
    assert!(values(old, "crawlLinks").is_empty());

    // Turned off: the records stay, without the page's links.
    let off = metadata_by_url(&fetch(
        &server,
        scratch.path(),
        "off",
        &["--metadata-outlinks", "false"],
    ));
    let home = &off[&url("/")];
    assert_eq!(values(home, "crawlVia"), ["seed"]);
    assert!(values(home, "outlink").is_empty() && values(home, "crawlLinks").is_empty());
    assert_eq!(
        values(&off[&url("/old")], "outlink"),
        [format!("{} R location", url("/a"))]
    );
}
