//! Damaged WARC files cost only the damaged records, and WARC files of
//! other tools (wget, warcio, warcprox, gzip of a whole file, uncompressed)
//! are read by `run` and seed a crawl through `import`.

use crate::support;

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

/// The `warcprox` to run: `$WARCPROX`, else `.venv/bin/warcprox` at the
/// repository root (where `scripts/test.sh` installs it), else `warcprox`
/// on `PATH`. Panics saying how to install it when there is none.
fn warcprox() -> PathBuf {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join(".venv/bin/warcprox");
    let on_path = || {
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(|d| d.join("warcprox"))
            .find(|p| p.is_file())
    };
    match std::env::var_os("WARCPROX").filter(|p| !p.is_empty()) {
        Some(p) if Path::new(&p).is_file() => PathBuf::from(p),
        Some(p) => panic!(
            "WARCPROX={} does not exist; unset it, or run the tests with scripts/test.sh, \
             which installs warcprox into .venv/",
            Path::new(&p).display()
        ),
        None if venv.is_file() => venv,
        None => on_path().unwrap_or_else(|| {
            panic!(
                "warcprox not found (looked at $WARCPROX, {}, and PATH): run the tests with \
                 scripts/test.sh, which installs it into .venv/ \
                 (or: python3 -m venv .venv && .venv/bin/pip install warcprox==2.13.1)",
                venv.display()
            )
        }),
    }
}

/// The Python interpreter of the `warcprox` script at `script` (from its
/// `#!` line): the one whose packages hold warcprox.
fn python_of(script: &Path) -> PathBuf {
    let text = fs::read(script).unwrap_or_else(|e| panic!("{}: {e}", script.display()));
    let first = text.split(|&b| b == b'\n').next().unwrap_or_default();
    let interp = std::str::from_utf8(first)
        .ok()
        .and_then(|l| l.strip_prefix("#!"))
        .map(str::trim)
        .unwrap_or_else(|| panic!("{}: no `#!` line naming its Python", script.display()));
    PathBuf::from(interp)
}

/// Runs warcprox as its own `warcprox` command does, with one change: the
/// address it writes in its `warcinfo` record is the loopback one. warcprox
/// finds that address by connecting a UDP socket towards 10.255.255.255
/// (no packet is sent), which fails on a machine that has only loopback;
/// warcprox then loses the records of the first URL it fetched.
const WARCPROX_LAUNCHER: &str = r#"
import sys
import warcprox.main
import warcprox.warc
warcprox.warc.WarcRecordBuilder._local_address = lambda self: "127.0.0.1"
sys.argv[0] = "warcprox"
sys.exit(warcprox.main.main())
"#;

/// Fetches `sys.argv[2:]` through the HTTP proxy `sys.argv[1]`, without
/// following redirects, and prints each status and URL.
const PROXY_CLIENT: &str = r#"
import sys, urllib.error, urllib.request
class Keep(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None
opener = urllib.request.build_opener(
    urllib.request.ProxyHandler({"http": sys.argv[1]}), Keep)
for url in sys.argv[2:]:
    try:
        with opener.open(url, timeout=20) as r:
            r.read()
            print(r.status, url)
    except urllib.error.HTTPError as e:
        print(e.code, url)
"#;

/// The `127.0.0.1:PORT` that warcprox says it listens on in its log, once
/// it does (at most a minute; at once if it failed with a traceback).
fn warcprox_address(log: &Path) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let text = fs::read_to_string(log).unwrap_or_default();
        if let Some(addr) = text
            .lines()
            .find_map(|l| l.split("listening on ").nth(1))
            .map(|a| a.trim().to_string())
        {
            return addr;
        }
        assert!(
            std::time::Instant::now() < deadline && !text.contains("Traceback"),
            "warcprox did not say where it listens; its log ({}):\n{text}",
            log.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn import_reads_the_warcs_of_warcprox() {
    let server = Server::builder()
        .host(
            "w.test",
            Routes::new()
                .route(
                    "/",
                    Response::html(
                        r#"<a href="/a">a</a> <a href="/page2">2</a> <a href="/">home</a>"#,
                    ),
                )
                .route(
                    "/page2",
                    Response::html(r#"<a href="/c">c</a> <a href="/">home</a>"#),
                )
                .route("/moved", Response::redirect(301, "/new")),
        )
        .start()
        .unwrap();
    let crawl = TempCrawl::new("warcprox");
    let work = crawl.side("warcprox");
    fs::create_dir_all(&work).unwrap();
    let tool = warcprox();
    fs::write(work.join("launch.py"), WARCPROX_LAUNCHER).unwrap();
    fs::write(work.join("client.py"), PROXY_CLIENT).unwrap();

    // warcprox on a port of its own on 127.0.0.1, its log in a file (read
    // while it runs), gzip per record, no statistics or dedup databases.
    // The test server is on 127.0.0.2 and up (warcprox refuses 127.0.0.1
    // as a target) and is reached by address: nothing is resolved.
    let log = work.join("warcprox.log");
    let out = work.join("warcs");
    let mut cmd = Command::new("sh");
    cmd.current_dir(&work)
        .arg("-c")
        .arg(r#"exec "$0" "$@" >"$WARCPROX_LOG" 2>&1"#)
        .arg(python_of(&tool))
        .arg(work.join("launch.py"))
        .args(["--address", "127.0.0.1", "--port", "0", "--gzip"])
        .args([
            "--prefix",
            "proxied",
            "--stats-db-file",
            "",
            "--dedup-db-file",
            "",
        ])
        .arg("--dir")
        .arg(&out)
        .arg("--cacert")
        .arg(work.join("ca.pem"))
        .arg("--certs-dir")
        .arg(work.join("certs"))
        .env("WARCPROX_LOG", &log);
    testkit::proxy::clear_proxy_env(&mut cmd);
    let proxy = bins::spawn(&mut cmd)
        .unwrap_or_else(|e| panic!("cannot start `{}`: {e}", bins::command_line(&cmd)));
    let addr = warcprox_address(&log);

    let home = server.ip_url("w.test", "/");
    let page2 = server.ip_url("w.test", "/page2");
    let moved = server.ip_url("w.test", "/moved");
    let mut client = Command::new(python_of(&tool));
    client
        .arg(work.join("client.py"))
        .arg(format!("http://{addr}"))
        .args([&home, &page2, &moved]);
    testkit::proxy::clear_proxy_env(&mut client);
    let fetched = bins::run_within(&mut client, &work, 0, Duration::from_secs(120));
    assert_eq!(
        fetched.stdout,
        format!("200 {home}\n200 {page2}\n301 {moved}\n"),
        "{}",
        fs::read_to_string(&log).unwrap_or_default()
    );
    // Stopped by SIGTERM, warcprox writes what it holds and closes the file.
    proxy.signal(bins::Signal::Term).unwrap();
    let stopped = proxy.finish(Duration::from_secs(60));
    let log_text = fs::read_to_string(&log).unwrap_or_default();
    bins::assert_code(&stopped, 0, Some(&work));
    assert_eq!(
        server.log("w.test").len(),
        3,
        "each page fetched once; warcprox's log:\n{log_text}"
    );
    let files: Vec<PathBuf> = fs::read_dir(&out)
        .unwrap_or_else(|e| panic!("{}: {e}; warcprox's log:\n{log_text}", out.display()))
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}; warcprox's log:\n{log_text}");
    let file = &files[0];
    assert!(
        file.to_string_lossy().ends_with(".warc.gz"),
        "{files:?}; warcprox's log:\n{log_text}"
    );

    // The file is warcprox's: a warcinfo record naming it, then a response
    // and a request record per URL.
    let mut reader = WarcReader::open(file, 1 << 16).unwrap();
    let mut rec = WarcRecord::default();
    let mut kinds = Vec::new();
    while reader.read_next(&mut rec).unwrap() {
        let kind = rec.record_type().unwrap_or("?").to_string();
        if kind == "warcinfo" {
            let info = String::from_utf8_lossy(&rec.block).to_string();
            assert!(info.contains("software: warcprox "), "{info}");
        }
        kinds.push((kind, rec.target_uri().unwrap_or_default().to_string()));
    }
    let mut want_kinds = vec![("warcinfo".to_string(), String::new())];
    for url in [&home, &page2, &moved] {
        want_kinds.push(("response".to_string(), url.clone()));
        want_kinds.push(("request".to_string(), url.clone()));
    }
    assert_eq!(kinds, want_kinds);

    let root = crawl.root().display().to_string();
    let file_arg = file.display().to_string();
    let args = ["import", root.as_str(), file_arg.as_str()];
    let report = run_ok(&args, &crawl);
    let mut got = urls(&read_records(&crawl.dir.segment_path("00001")));
    got.sort();
    // The links of the pages and the redirect's target; the pages
    // themselves (/ and /page2, linked from each other) are fetched, not
    // scheduled again.
    let ip = home.trim_end_matches('/');
    assert_eq!(
        got,
        [format!("{ip}/a"), format!("{ip}/c"), format!("{ip}/new")],
        "{report}"
    );
    for (key, n) in [
        ("warc files:", 1),
        ("damaged records:", 0),
        ("responses:", 3),
        ("pages scanned:", 2),
        ("links found:", 5),
        ("redirects found:", 1),
        ("already fetched:", 3),
        ("new urls:", 3),
        ("scheduled:", 3),
    ] {
        assert_eq!(figure(&report, key), n, "{key}\n{report}");
    }

    // Imported again: every link is a dupe, nothing new.
    let again = run_ok(&args, &crawl);
    assert_eq!(figure(&again, "candidates:"), 0, "{again}");
}
