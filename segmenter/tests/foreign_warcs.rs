//! Damaged WARC files cost only the damaged records, and WARC files of
//! other tools (wget, warcio, gzip of a whole file, uncompressed) are read
//! by `run` and seed a crawl through `import`.

mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::warc::{WarcReader, WarcRecord};
use support::*;
use testkit::bins;
use testkit::server::{Response, Routes, Server};

/// The offset and length of every response record of `file`, by URL.
fn responses(file: &Path) -> Vec<(String, u64, u64)> {
    let mut r = WarcReader::open(file, 0).unwrap();
    let mut rec = WarcRecord::default();
    let mut out = Vec::new();
    while r.read_next(&mut rec).unwrap() {
        if rec.record_type() == Some("response") {
            out.push((
                rec.target_uri().unwrap().to_string(),
                rec.offset,
                rec.length,
            ));
        }
    }
    out
}

#[test]
fn a_flipped_byte_in_a_fetched_warc_costs_one_record() {
    let crawl = TempCrawl::new("flip");
    inject(&crawl, "http://a.test/\n", &[]);
    let links: Vec<String> = (0..20).map(|i| format!("/link{i}")).collect();
    let pages: Vec<Page> = (0..20)
        .map(|i| Page::html(&format!("http://a.test/p{i}"), 1, &[links[i].as_str()]))
        .collect();
    let files = write_fetched(&crawl, "00001", &pages, 1 << 30, true);
    assert_eq!(files.len(), 1);
    let hit = &responses(&files[0])[7];
    assert_eq!(hit.0, "http://a.test/p7");
    let mut bytes = fs::read(&files[0]).unwrap();
    bytes[(hit.1 + hit.2 / 2) as usize] ^= 0x20;
    fs::write(&files[0], &bytes).unwrap();

    let report = run_round(&crawl, &[]);
    let seg = read_records(&crawl.dir.segment_path("00002"));
    let want: Vec<String> = (0..20)
        .filter(|&i| i != 7)
        .map(|i| format!("http://a.test/link{i}"))
        .collect();
    let mut got = urls(&seg);
    got.sort();
    let mut want_sorted = want.clone();
    want_sorted.sort();
    assert_eq!(got, want_sorted, "{report}");
    assert_eq!(figure(&report, "damaged records:"), 1, "{report}");
    let file = files[0].display().to_string();
    assert!(
        report.lines().any(|l| l.contains(&file)
            && l.contains(&format!("offset {}", hit.1))
            && l.contains("bytes skipped")),
        "{report}"
    );
}

/// An uncompressed WARC file of `resource` records of HTML pages, as
/// (url, links) pairs.
fn plain_warc(pages: &[(&str, &[&str])]) -> Vec<u8> {
    let mut out = Vec::new();
    for (url, links) in pages {
        let body: String = links
            .iter()
            .map(|l| format!("<a href=\"{l}\">x</a>\n"))
            .collect();
        out.extend_from_slice(
            format!(
                "WARC/1.0\r\nWARC-Type: resource\r\nWARC-Target-URI: <{url}>\r\n\
                 Content-Type: text/html\r\nContent-Length: {}\r\n\r\n{body}\r\n\r\n",
                body.len()
            )
            .as_bytes(),
        );
    }
    out
}

#[test]
fn other_files_in_a_fetched_run_are_read_or_named() {
    let crawl = TempCrawl::new("foreign-run");
    inject(&crawl, "http://a.test/\n", &[]);
    let dir = crawl.dir.fetched_dir("00001");
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("plain.warc"),
        plain_warc(&[("http://a.test/x", &["/from-plain"])]),
    )
    .unwrap();
    fs::write(dir.join("empty.warc.gz"), b"").unwrap();
    fs::write(dir.join("notes.txt"), b"hello").unwrap();
    fs::write(dir.join("DONE"), b"").unwrap();
    let report = run_round(&crawl, &[]);
    assert_eq!(
        urls(&read_records(&crawl.dir.segment_path("00002"))),
        ["http://a.test/from-plain"],
        "{report}"
    );
    let named =
        |name: &str, what: &str| report.lines().any(|l| l.contains(name) && l.contains(what));
    assert!(named("empty.warc.gz", "empty WARC file"), "{report}");
    assert!(named("notes.txt", "not a WARC file"), "{report}");
    assert!(!named("DONE", "not a WARC file"), "{report}");
}

/// Runs `cmd` in `dir`, which must succeed within two minutes.
fn run_tool(cmd: &mut Command, dir: &Path) {
    bins::run_within(cmd, dir, 0, Duration::from_secs(120));
}

/// `.venv/bin/python` beside the `warcio` the tests use.
fn warcio_python() -> PathBuf {
    testkit::warcio::command().with_file_name("python3")
}

const WARCIO_WRITER: &str = r#"
import io, sys
from warcio.warcwriter import WARCWriter
from warcio.statusandheaders import StatusAndHeaders
with open(sys.argv[1], "wb") as f:
    w = WARCWriter(f, gzip=True)
    http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
    body = b'<a href="/from-warcio">x</a> <a href="/w2">self</a>'
    w.write_record(w.create_warc_record("http://b.test/w1", "response",
        payload=io.BytesIO(body), http_headers=http))
    w.write_record(w.create_warc_record("http://b.test/w2", "resource",
        payload=io.BytesIO(b'<a href="/from-resource">y</a>'), warc_content_type="text/html"))
"#;

#[test]
fn import_seeds_a_crawl_from_wget_warcio_and_gzip() {
    let server = Server::builder()
        .host(
            "a.test",
            Routes::new()
                .route("/robots.txt", Response::not_found())
                .route(
                    "/",
                    Response::html(r#"<a href="/a">a</a> <a href="/page2">2</a>"#),
                )
                .route(
                    "/page2",
                    Response::html(r#"<a href="/c">c</a> <a href="/">home</a>"#),
                ),
        )
        .start()
        .unwrap();
    let crawl = TempCrawl::new("import");
    let work = crawl.side("warcs");
    fs::create_dir_all(&work).unwrap();

    // wget 1.x: one gzip member per record, `<...>` target URIs. Loopback
    // addresses only, no proxy, no DNS.
    let home = server.ip_url("a.test", "/");
    let page2 = server.ip_url("a.test", "/page2");
    run_tool(
        Command::new("wget")
            .args(["--no-config", "--no-proxy", "--no-hsts", "-e", "robots=off"])
            .args(["--tries=1", "--timeout=20", "-q", "-O", "/dev/null"])
            .arg(format!("--warc-file={}", work.join("wget").display()))
            .args([&home, &page2])
            .env_remove("http_proxy")
            .env_remove("HTTP_PROXY"),
        &work,
    );
    // warcio's WARCWriter: a response and a resource record.
    fs::write(work.join("writer.py"), WARCIO_WRITER).unwrap();
    run_tool(
        Command::new(warcio_python())
            .arg(work.join("writer.py"))
            .arg(work.join("warcio.warc.gz")),
        &work,
    );
    // An uncompressed file, and the same compressed whole by gzip.
    let plain = plain_warc(&[
        (
            "http://c.test/p1",
            &["/from-plain", "http://elsewhere.test/out"],
        ),
        ("http://c.test/p2", &["/p1"]),
    ]);
    fs::write(work.join("plain.warc"), &plain).unwrap();
    fs::write(
        work.join("whole.warc"),
        plain_warc(&[("http://d.test/", &["/from-gzip"])]),
    )
    .unwrap();
    run_tool(
        Command::new("gzip").arg("-9").arg(work.join("whole.warc")),
        &work,
    );

    let files: Vec<String> = [
        "wget.warc.gz",
        "warcio.warc.gz",
        "plain.warc",
        "whole.warc.gz",
    ]
    .iter()
    .map(|f| work.join(f).display().to_string())
    .collect();
    let root = crawl.root().display().to_string();
    let mut args = vec!["import", root.as_str()];
    args.extend(files.iter().map(String::as_str));
    let report = run_ok(&args, &crawl);
    let mut got = urls(&read_records(&crawl.dir.segment_path("00001")));
    got.sort();
    let ip = home.trim_end_matches('/');
    let mut want = vec![
        format!("{ip}/a"),
        format!("{ip}/c"),
        "http://b.test/from-resource".to_string(),
        "http://b.test/from-warcio".to_string(),
        "http://c.test/from-plain".to_string(),
        "http://d.test/from-gzip".to_string(),
    ];
    want.sort();
    // The pages themselves (/, /page2, w2, p1) are fetched: not scheduled;
    // elsewhere.test is out of the pages' scope.
    assert_eq!(got, want, "{report}");
    assert_eq!(figure(&report, "damaged records:"), 0, "{report}");
    let scope = fs::read_to_string(crawl.dir.scope_seeds_path()).unwrap();
    for d in ["b.test", "c.test", "d.test"] {
        assert!(scope.lines().any(|l| l == d), "{scope}");
    }

    // Imported again: every link is a dupe, nothing new.
    let again = run_ok(&args, &crawl);
    assert_eq!(figure(&again, "candidates:"), 0, "{again}");
}
