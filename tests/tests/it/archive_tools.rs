//! The crawl as a web archivist uses it, judged by the archivists' own
//! tools (installed by `scripts/test.sh`): `cdxj-indexer` makes the same
//! index of each WARC file as the one the fetcher wrote beside it; `warcio
//! check` passes with the metadata records and the new headers; pywb
//! replays the crawl from the crawl's own index (no reindexing), every
//! capture in raw mode with its stored payload; `wacz validate` accepts
//! the package of `segmenter wacz`, whose pages list holds every 2xx HTML
//! page; and a page refetched without conditional requests replays.

use crate::support;

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::crawllog::Status;
use common::warc::{WarcReader, WarcRecord};
use testkit::TempDir;
use testkit::bins;
use testkit::demo::{Demo, DemoParams};
use testkit::server::{Request, Response, Routes, Server};
use testkit::warcio::{self, python_tool, run_tool};

use support::{CrawlSettings, DemoCrawl};

/// A small demo web, crawled for three rounds by `crawl.sh`.
fn crawled(name: &str) -> DemoCrawl {
    let demo = Demo::with_params(DemoParams {
        crawl_delay: 0.25,
        ..DemoParams::small(27)
    });
    let c = DemoCrawl::start(name, &demo, CrawlSettings::default());
    let out = c.run_crawl_sh(&["--rounds", "3"]);
    bins::assert_code(&out, 0, Some(&c.crawl));
    c
}

fn all_warcs(crawl: &Path) -> Vec<PathBuf> {
    let mut runs: Vec<PathBuf> = std::fs::read_dir(crawl.join("fetched"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    runs.sort();
    runs.iter().flat_map(|r| warcio::warc_files(r)).collect()
}

#[test]
fn cdxj_indexer_pywb_and_wacz_accept_the_crawl() {
    let c = crawled("archive-tools");
    let warcs = all_warcs(&c.crawl);
    assert!(warcs.len() >= 3, "{warcs:?}");

    // The fetcher's index of each file is cdxj-indexer's, line for line.
    let indexer = python_tool("cdxj-indexer", "CDXJ_INDEXER");
    let mut lines = 0;
    for w in &warcs {
        let out = run_tool(&indexer, &["--sort".as_ref(), w.as_os_str()]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let ours = std::fs::read_to_string(common::warc::cdxj::index_path(w)).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            ours,
            "{}",
            w.display()
        );
        lines += ours.lines().count();
    }
    assert!(lines > 100, "{lines} captures");
    warcio::check(&warcs).unwrap_or_else(|e| panic!("{e}"));

    // `segmenter index` merges them in order.
    bins::run(bins::segmenter_cmd().arg("index").arg(&c.crawl), &c.crawl);
    let merged = std::fs::read_to_string(c.crawl.join("index.cdxj")).unwrap();
    let merged: Vec<&str> = merged.lines().collect();
    assert_eq!(merged.len(), lines);
    assert!(merged.windows(2).all(|w| w[0] <= w[1]));

    replay_every_capture(&c.crawl, &warcs, &merged);
    package_and_validate(&c);
}

/// pywb on loopback, its collection made of the WARC files and the
/// crawl's own `.cdxj` files: every capture replays in raw mode (`id_`)
/// with its status and its stored payload.
fn replay_every_capture(crawl: &Path, warcs: &[PathBuf], index: &[&str]) {
    let root = crawl.parent().unwrap().join("pywb");
    let coll = root.join("collections").join("crawl");
    std::fs::create_dir_all(coll.join("archive")).unwrap();
    std::fs::create_dir_all(coll.join("indexes")).unwrap();
    for w in warcs {
        std::os::unix::fs::symlink(w, coll.join("archive").join(w.file_name().unwrap())).unwrap();
        let i = common::warc::cdxj::index_path(w);
        std::fs::copy(&i, coll.join("indexes").join(i.file_name().unwrap())).unwrap();
    }
    let pywb = Pywb::start(&root);
    let mut replayed = 0;
    for line in index {
        let c = Capture::of(line);
        let stored = stored_record(warcs, &c);
        let head = common::http::parse_response_head(&stored.block).unwrap();
        let (status, body) = pywb.get(&format!("/crawl/{}id_/{}", c.ts, c.url));
        assert_eq!(status, head.status, "{line}");
        if !(300..400).contains(&status) {
            let payload = common::body::decoded_payload(&stored.block, usize::MAX);
            assert!(
                body == payload,
                "{line}: pywb's body is not the stored payload"
            );
        }
        replayed += 1;
    }
    assert_eq!(replayed, index.len());
}

/// `scripts/pywb-collection.sh CRAWL crawl` run in `dir` (pywb's
/// `wb-manager` found beside `wayback`), expecting exit code `code`.
fn pywb_collection(dir: &Path, crawl: &Path, code: i32) -> bins::Finished {
    let wayback = python_tool("wayback", "WAYBACK");
    let path = std::env::join_paths(
        std::iter::once(wayback.parent().unwrap().to_path_buf()).chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )),
    )
    .unwrap();
    bins::run_expecting(
        Command::new(testkit::repo_root().join("scripts/pywb-collection.sh"))
            .arg(crawl)
            .arg("crawl")
            .current_dir(dir)
            .env("PATH", path),
        dir,
        code,
    )
}

#[test]
fn the_pywb_collection_script_fails_loudly_when_there_is_nothing_to_link() {
    let scratch = TempDir::new("archive-pywb-empty");
    let crawl = scratch.path().join("crawl");
    std::fs::create_dir_all(crawl.join("fetched/00001")).unwrap();
    let out = pywb_collection(scratch.path(), &crawl, 1);
    assert!(
        out.stderr.contains(&format!(
            "pywb-collection.sh: {}: no WARC file under fetched/ to link",
            crawl.display()
        )),
        "{}",
        out.stderr
    );
    assert!(!scratch.path().join("collections").exists());
    // WARC files but no merged index yet: said, with the command.
    std::fs::write(crawl.join("fetched/00001/a.warc.gz"), b"").unwrap();
    let out = pywb_collection(scratch.path(), Path::new("crawl"), 1);
    assert!(
        out.stderr
            .contains("index.cdxj: missing; make it first with: segmenter index"),
        "{}",
        out.stderr
    );
}

/// A capture of an index line.
struct Capture {
    ts: String,
    url: String,
    filename: String,
    offset: u64,
}

impl Capture {
    fn of(line: &str) -> Capture {
        let mut parts = line.splitn(3, ' ');
        let (_, ts, json) = (parts.next(), parts.next().unwrap(), parts.next().unwrap());
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        let s = |k: &str| v[k].as_str().unwrap().to_string();
        Capture {
            ts: ts.to_string(),
            url: s("url"),
            filename: s("filename"),
            offset: s("offset").parse().unwrap(),
        }
    }
}

fn stored_record(warcs: &[PathBuf], c: &Capture) -> WarcRecord {
    let file = warcs
        .iter()
        .find(|w| w.file_name().unwrap().to_string_lossy() == c.filename)
        .unwrap();
    let mut r = WarcReader::open_at(file, c.offset, usize::MAX).unwrap();
    let mut rec = WarcRecord::default();
    assert!(r.read_next(&mut rec).unwrap());
    assert_eq!(rec.target_uri(), Some(c.url.as_str()));
    rec
}

/// pywb's `wayback` serving `root` on 127.0.0.1, stopped (by its pid) when
/// dropped.
struct Pywb {
    child: Child,
    port: u16,
}

impl Pywb {
    fn start(root: &Path) -> Pywb {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(python_tool("wayback", "WAYBACK"))
            .args(["-b", "127.0.0.1", "-p", &port.to_string(), "-t", "2"])
            .arg("-d")
            .arg(root)
            .current_dir(root)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start pywb's wayback");
        let pywb = Pywb { child, port };
        let deadline = Instant::now() + Duration::from_secs(60);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "pywb did not listen within 60 s");
            std::thread::sleep(Duration::from_millis(100));
        }
        pywb
    }

    /// Status and body of `GET target` (HTTP/1.0, so the body ends with
    /// the connection).
    fn get(&self, target: &str) -> (u16, Vec<u8>) {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        write!(s, "GET {target} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
        let mut all = Vec::new();
        s.read_to_end(&mut all).unwrap();
        let head = common::http::parse_response_head(&all)
            .unwrap_or_else(|| panic!("{target}: {}", String::from_utf8_lossy(&all)));
        (head.status, all[head.body_offset..].to_vec())
    }
}

impl Drop for Pywb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `segmenter wacz` packages the crawl; `wacz validate` accepts it; its
/// pages list holds every 2xx HTML page the crawl log names.
fn package_and_validate(c: &DemoCrawl) {
    let out = c.scratch.path().join("crawl.wacz");
    bins::run(
        bins::segmenter_cmd()
            .arg("wacz")
            .arg(&c.crawl)
            .arg("--out")
            .arg(&out),
        &c.crawl,
    );
    let listed = wacz_pages(&out);
    let html_pages: BTreeSet<String> = c
        .outcome()
        .log
        .iter()
        .filter(|(_, l)| {
            matches!(l.status, Status::Http(200..=299)) && l.content_type == "text/html"
        })
        .map(|(_, l)| l.url.clone())
        .collect();
    assert!(html_pages.len() > 50, "{}", html_pages.len());
    assert_eq!(listed, html_pages);
    let pages = unzip(&out, "pages/pages.jsonl");
    assert!(pages.contains("\"title\": \"") || pages.contains("\"title\":\""));
}

/// Checks the WACZ package `wacz` with `wacz validate`; the URLs its
/// pages list (`pages/pages.jsonl`) holds.
pub(crate) fn wacz_pages(wacz: &Path) -> BTreeSet<String> {
    let validate = run_tool(
        &python_tool("wacz", "WACZ"),
        &["validate".as_ref(), "-f".as_ref(), wacz.as_os_str()],
    );
    let said = String::from_utf8_lossy(&validate.stdout);
    assert!(
        validate.status.success() && said.contains("Validation succeeded"),
        "{}: {said}\n{}",
        wacz.display(),
        String::from_utf8_lossy(&validate.stderr)
    );
    let pages = unzip(wacz, "pages/pages.jsonl");
    let mut lines = pages.lines();
    assert!(lines.next().unwrap().contains("\"json-pages-1.0\""));
    lines
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert!(v["ts"].as_str().unwrap().ends_with('Z'), "{l}");
            v["url"].as_str().unwrap().to_string()
        })
        .collect()
}

/// The entry `name` of the ZIP file `zip`, as text (with Python's zipfile,
/// an independent reader).
pub(crate) fn unzip(zip: &Path, name: &str) -> String {
    let python = python_tool("python3", "PYTHON3_VENV");
    let out = run_tool(
        &python,
        &[
            "-c".as_ref(),
            "import sys, zipfile; sys.stdout.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]).decode())"
                .as_ref(),
            zip.as_os_str(),
            name.as_ref(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_page_refetched_without_conditional_requests_replays_its_body() {
    let conditional = Arc::new(AtomicUsize::new(0));
    let seen = conditional.clone();
    let server = Server::builder()
        .host(
            "site.test",
            Routes::new().fallback(move |r: &Request| {
                if r.header("if-none-match").is_some() || r.header("if-modified-since").is_some() {
                    seen.fetch_add(1, Ordering::SeqCst);
                }
                match r.path() {
                    "/robots.txt" => Response::not_found(),
                    _ => Response::html("<title>Same</title><p>the same page</p>")
                        .header("ETag", "\"same\""),
                }
            }),
        )
        .start()
        .unwrap();
    let scratch = TempDir::new("archive-refetch");
    let root = scratch.path().join("crawl");
    std::fs::create_dir_all(&root).unwrap();
    let hosts = scratch.path().join("hosts");
    std::fs::write(&hosts, server.hosts_file()).unwrap();
    std::fs::write(
        root.join("crawl.toml"),
        format!(
            "[agent]\nname = \"archivebot\"\nurl = \"https://example.org/bot.html\"\n\n\
             [fetcher]\nallow_private = true\nhosts_file = \"{}\"\nmin_delay = \"0ms\"\n\
             delay_factor = 0\nconditional_requests = false\n\n\
             [segmenter]\nrecrawl_interval = \"1s\"\nrecrawl_min = \"1s\"\n",
            hosts.display()
        ),
    )
    .unwrap();
    let seeds = scratch.path().join("seeds.txt");
    let page = server.url("site.test", "/");
    std::fs::write(&seeds, format!("{page}\n")).unwrap();
    let segmenter = |args: &[&std::ffi::OsStr]| {
        bins::run(bins::segmenter_cmd().args(args), &root);
    };
    let fetch = || {
        bins::run(
            bins::fetcher_cmd()
                .arg("fetch")
                .arg(&root)
                .args(["--progress", "none"]),
            &root,
        );
    };
    segmenter(&["inject".as_ref(), root.as_os_str(), seeds.as_os_str()]);
    fetch();
    std::thread::sleep(Duration::from_millis(1200));
    segmenter(&["run".as_ref(), root.as_os_str()]);
    fetch();
    assert_eq!(
        conditional.load(Ordering::SeqCst),
        0,
        "no validators were sent"
    );
    segmenter(&["index".as_ref(), root.as_os_str()]);

    // Two captures of the page: the response, then an identical-payload
    // revisit; pywb replays the revisit with the body of the response.
    let index = std::fs::read_to_string(root.join("index.cdxj")).unwrap();
    let captures: Vec<&str> = index
        .lines()
        .filter(|l| l.contains("\"url\": \"http"))
        .collect();
    let revisit = captures
        .iter()
        .find(|l| l.contains("\"mime\": \"warc/revisit\"") && !l.contains("robots.txt"))
        .unwrap_or_else(|| panic!("no revisit of the page in:\n{index}"));
    assert!(revisit.contains("\"status\": \"200\""), "{revisit}");
    // The collection as the guide makes it: scripts/pywb-collection.sh,
    // given the crawl by its absolute path.
    let pywb_root = scratch.path().join("pywb");
    std::fs::create_dir_all(&pywb_root).unwrap();
    let made = pywb_collection(&pywb_root, &root, 0);
    assert!(
        made.stdout.contains("2 WARC file(s) linked"),
        "{}",
        made.stdout
    );
    let archive = pywb_root.join("collections/crawl/archive");
    for w in all_warcs(&root) {
        let link = archive.join(w.file_name().unwrap());
        assert_eq!(std::fs::read_link(&link).unwrap(), w);
    }
    let pywb = Pywb::start(&pywb_root);
    let c = Capture::of(revisit);
    let (status, body) = pywb.get(&format!("/crawl/{}id_/{}", c.ts, c.url));
    assert_eq!(status, 200);
    assert_eq!(
        String::from_utf8_lossy(&body),
        "<title>Same</title><p>the same page</p>"
    );
}
