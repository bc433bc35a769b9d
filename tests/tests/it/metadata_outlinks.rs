//! The links of each page in its WARC `metadata` record, as Heritrix
//! writes them (`outlink: URL L a/@href`): a small web whose pages hold the
//! kinds of links a crawler must follow or skip is fetched by the real
//! fetcher; each HTML page's record lists exactly the links of the served
//! HTML that the segmenter follows (nofollow respected), closed by the
//! `crawlLinks` summary; `warcio check` passes; `--metadata-outlinks false`
//! keeps the records without the links. A demo crawl's round made from
//! the links listed in metadata records (`segmenter run
//! --metadata-outlinks true`) is the round made by parsing the same pages
//! (the segmenter's default), and the round made from files without
//! listed links.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::warc::{WarcReader, WarcRecord};
use testkit::demo::{Demo, DemoParams};
use testkit::server::{Response, Routes, Server};
use testkit::{TempDir, bins, warcio};

use crate::support::{self, CrawlSettings, DemoCrawl};

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
    let root = support::crawl_of_server(server, scratch, name, "linkbot");
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
    // Its `<link rel=canonical>`, kept as a hint too.
    assert_eq!(values(home, "crawlCanonical"), [url("/")]);
    assert_eq!(
        values(home, "crawlLinks"),
        [
            "listed 5 nofollow 1 scheme 2 invalid 0 same-page 1 over-cap 0 incomplete 0 \
          body 397 decoded complete robots-name linkbot"
        ]
    );
    // The summary closes the list.
    assert_eq!(home.last().unwrap().0, "crawlLinks");

    // A page that says nofollow: its links are counted, none listed.
    let nofollow = &meta[&url("/nofollow")];
    assert!(values(nofollow, "outlink").is_empty(), "{nofollow:?}");
    assert_eq!(
        values(nofollow, "crawlLinks"),
        [format!(
            "listed 0 nofollow 2 scheme 0 invalid 0 same-page 0 over-cap 0 incomplete 0 \
             body {} decoded complete robots-name linkbot",
            NOFOLLOW.len()
        )]
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

/// The segment files a round wrote (decompressed, by name) and the
/// round's counts from its JSON report.
fn round_result(crawl: &Path) -> (BTreeMap<String, String>, serde_json::Value) {
    let mut segments = BTreeMap::new();
    for e in std::fs::read_dir(crawl.join("segments")).unwrap() {
        let path = e.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if name.ends_with(".zst") {
            segments.insert(name, support::zstdcat(&path));
        }
    }
    let reports = support::segmenter_reports(&crawl.join("logs"));
    let last = std::fs::read_to_string(reports.last().expect("a segmenter report")).unwrap();
    let report: serde_json::Value = serde_json::from_str(&last).unwrap();
    (segments, report["counts"].clone())
}

fn copy_dir(from: &Path, to: &Path) {
    let out = std::process::Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn links_from_metadata_records_make_the_segment_parsing_makes() {
    let demo = Demo::with_params(DemoParams {
        crawl_delay: 0.0,
        ..DemoParams::small(31)
    });
    let c = DemoCrawl::start("metadata-scan", &demo, CrawlSettings::default());
    let segmenter =
        |args: &[&std::ffi::OsStr]| bins::run(bins::segmenter_cmd().args(args), &c.crawl);
    let fetch = |crawl: &Path, flags: &[&str]| {
        bins::run(
            bins::fetcher_cmd()
                .arg("fetch")
                .arg(crawl)
                .args(["--progress", "none"])
                .args(flags),
            crawl,
        )
    };
    segmenter(&["inject".as_ref(), c.crawl.as_os_str(), c.seeds.as_os_str()]);
    fetch(&c.crawl, &[]);
    segmenter(&["run".as_ref(), c.crawl.as_os_str()]);
    // The second round's pages fetched twice: with their links listed in
    // the metadata records, and without (as an older fetcher wrote them).
    let without = c.scratch.path().join("without");
    copy_dir(&c.crawl, &without);
    fetch(&c.crawl, &[]);
    fetch(&without, &["--metadata-outlinks", "false"]);
    let parsed = c.scratch.path().join("parsed");
    copy_dir(&c.crawl, &parsed);

    segmenter(&[
        "run".as_ref(),
        c.crawl.as_os_str(),
        "--metadata-outlinks".as_ref(),
        "true".as_ref(),
    ]);
    // By default the segmenter parses every page.
    segmenter(&["run".as_ref(), parsed.as_os_str()]);
    segmenter(&["run".as_ref(), without.as_os_str()]);

    // Every HTML page's links were read from its metadata record.
    let (segments, mut counts) = round_result(&c.crawl);
    let pages = counts["html_pages"].as_u64().unwrap();
    assert!(pages > 20, "{counts}");
    assert_eq!(
        counts["links_listed_pages"].as_u64(),
        Some(pages),
        "{counts}"
    );
    let new_urls: usize = segments.values().map(|s| s.lines().count()).sum();
    assert!(new_urls > 20, "{segments:?}");
    counts["links_listed_pages"] = 0.into();
    // Same WARC files, links parsed (the default): the same segments, the
    // same counts.
    assert_eq!(round_result(&parsed), (segments.clone(), counts.clone()));
    // Files without listed links, fetched separately: parsed, with the
    // same result (but for the not-before times of hosts that failed,
    // which depend on when the fetch ran).
    let (w_segments, w_counts) = round_result(&without);
    assert_eq!(w_counts, counts);
    let timeless = |segments: &BTreeMap<String, String>| -> BTreeMap<String, Vec<String>> {
        let line = |l: &str| {
            let mut f: Vec<&str> = l.split('\t').collect();
            f[6] = "-";
            f.join("\t")
        };
        segments
            .iter()
            .map(|(name, text)| (name.clone(), text.lines().map(line).collect()))
            .collect()
    };
    assert_eq!(timeless(&w_segments), timeless(&segments));
}
