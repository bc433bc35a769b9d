//! Helpers for the segmenter's tests: a temporary crawl directory
//! (`testkit::tempdir::TempCrawl`), fetched runs written with
//! `common::warc::WarcWriter`, and the real binary run through
//! `testkit::bins` (a time bound, and a report when it fails).
#![allow(dead_code)] // each test file uses a different part

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use common::segment::{SegmentRecord, SegmentWriter, Via};
use common::warc::{Exchange, WarcWriter, WarcWriterConfig};
use testkit::bins;
pub use testkit::segment::read as read_records;
pub use testkit::tempdir::TempCrawl;

/// `segmenter ARGS...`, without the variable that pauses it at a named
/// point (so that a setting in the environment of the tests cannot stall
/// them); run it with `testkit::bins`.
pub fn segmenter_cmd<S: AsRef<OsStr>>(args: &[S]) -> Command {
    let mut cmd = bins::segmenter_cmd();
    cmd.args(args);
    cmd
}

/// Runs the segmenter and asserts it succeeded (else panics with its
/// output and the files of `crawl`); returns stderr.
pub fn run_ok(args: &[&str], crawl: &TempCrawl) -> String {
    bins::run(&mut segmenter_cmd(args), crawl.root()).stderr
}

/// `segmenter run CRAWL extra...`
pub fn run_round(crawl: &TempCrawl, extra: &[&str]) -> String {
    let root = crawl.root().to_str().unwrap().to_string();
    // The machine's free space is not what these tests are about.
    let mut args = vec!["run", root.as_str(), "--min-free-disk", "0"];
    args.extend_from_slice(extra);
    run_ok(&args, crawl)
}

/// `segmenter inject CRAWL SEEDS extra...` with the seeds given as text.
pub fn inject(crawl: &TempCrawl, seeds: &str, extra: &[&str]) -> String {
    let path = crawl.side("seeds.txt");
    fs::write(&path, seeds).unwrap();
    let root = crawl.root().to_str().unwrap().to_string();
    let seeds_arg = path.to_str().unwrap().to_string();
    let mut args = vec![
        "inject",
        root.as_str(),
        seeds_arg.as_str(),
        "--min-free-disk",
        "0",
    ];
    args.extend_from_slice(extra);
    run_ok(&args, crawl)
}

#[allow(unused_imports)] // not every test file reads figures
pub use testkit::report::figure;

/// One stored response.
#[derive(Debug, Clone)]
pub struct Page {
    pub url: String,
    pub status: u16,
    pub content_type: Option<String>,
    pub location: Option<String>,
    pub body: Vec<u8>,
    pub hops: u32,
    /// `X-Crawl-Via` of the record.
    pub via: &'static str,
    /// More response headers.
    pub headers: Vec<(String, String)>,
}

impl Page {
    /// A 200 `text/html` page linking to `links` (hrefs as written).
    pub fn html(url: &str, hops: u32, links: &[&str]) -> Page {
        let mut body = String::from("<!DOCTYPE html><html><head><title>t</title></head><body>\n");
        for l in links {
            body.push_str(&format!("<p><a href=\"{l}\">link</a></p>\n"));
        }
        body.push_str("</body></html>\n");
        Page {
            url: url.to_string(),
            status: 200,
            content_type: Some("text/html; charset=utf-8".into()),
            location: None,
            body: body.into_bytes(),
            hops,
            via: "link",
            headers: Vec::new(),
        }
    }

    /// A 301 to `location`.
    pub fn redirect(url: &str, hops: u32, location: &str) -> Page {
        Page {
            url: url.to_string(),
            status: 301,
            content_type: Some("text/html".into()),
            location: Some(location.to_string()),
            body: b"moved".to_vec(),
            hops,
            via: "link",
            headers: Vec::new(),
        }
    }
}

fn response_head(p: &Page) -> Vec<u8> {
    let reason = match p.status {
        200 => "OK",
        301 => "Moved Permanently",
        302 => "Found",
        304 => "Not Modified",
        404 => "Not Found",
        410 => "Gone",
        _ => "Status",
    };
    let mut h = format!("HTTP/1.1 {} {reason}\r\n", p.status);
    if let Some(ct) = &p.content_type {
        h.push_str(&format!("Content-Type: {ct}\r\n"));
    }
    if let Some(loc) = &p.location {
        h.push_str(&format!("Location: {loc}\r\n"));
    }
    for (name, value) in &p.headers {
        h.push_str(&format!("{name}: {value}\r\n"));
    }
    h.push_str(&format!("Content-Length: {}\r\n\r\n", p.body.len()));
    h.into_bytes()
}

/// Writes `pages` as WARC files into `fetched/ID/` (rolled at
/// `max_file_size`) and returns the files; `done` writes `DONE`.
pub fn write_fetched(
    crawl: &TempCrawl,
    id: &str,
    pages: &[Page],
    max_file_size: u64,
    done: bool,
) -> Vec<PathBuf> {
    let date = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    write_fetched_at(crawl, id, pages, max_file_size, done, date)
}

/// [`write_fetched`] with the records' `WARC-Date`.
pub fn write_fetched_at(
    crawl: &TempCrawl,
    id: &str,
    pages: &[Page],
    max_file_size: u64,
    done: bool,
    date: SystemTime,
) -> Vec<PathBuf> {
    let dir = crawl.dir.fetched_dir(id);
    fs::create_dir_all(&dir).unwrap();
    let mut w = WarcWriter::new(WarcWriterConfig {
        dir: dir.clone(),
        prefix: "test".into(),
        max_file_size,
        first_serial: 0,
        hostname: "testhost".into(),
        info: vec![("software".into(), "segmenter tests".into())],
    })
    .unwrap();
    for p in pages {
        let host = url::Url::parse(&p.url).unwrap();
        let request = format!(
            "GET {} HTTP/1.1\r\nHost: {}\r\n\r\n",
            host.path(),
            host.host_str().unwrap()
        );
        let head = response_head(p);
        let extra = [
            ("X-Crawl-Hops", p.hops.to_string()),
            ("X-Crawl-Via", p.via.to_string()),
        ];
        w.write_exchange(&Exchange {
            target_uri: &p.url,
            date,
            ip: None,
            request_head: request.as_bytes(),
            response_head: &head,
            payload: &p.body,
            truncated: None,
            extra_fields: &extra,
            protocols: &["http/1.1"],
            cipher_suite: None,
            metadata: None,
        })
        .unwrap();
    }
    let files = w.finish().unwrap();
    if done {
        fs::write(dir.join("DONE"), b"").unwrap();
    }
    files
}

/// Writes `pages` as a finished fetched run `fetched/ID/` (WARC files
/// rolled at 1 MiB, then `DONE`), as the fetcher leaves one.
pub fn write_done(crawl: &TempCrawl, id: &str, pages: &[Page]) -> Vec<PathBuf> {
    write_fetched(crawl, id, pages, 1 << 20, true)
}

/// Writes `fetched/ID/leftover.v5.tsv.zst`.
pub fn write_leftover(crawl: &TempCrawl, id: &str, recs: &[SegmentRecord]) {
    fs::create_dir_all(crawl.dir.fetched_dir(id)).unwrap();
    let mut w = SegmentWriter::create(crawl.dir.leftover_path(id)).unwrap();
    for r in recs {
        w.write(r).unwrap();
    }
    w.finish().unwrap();
}

/// A segment record.
pub fn rec(url: &str, hops: u32, via: Via, tries: u32) -> SegmentRecord {
    SegmentRecord {
        host: url::Url::parse(url)
            .unwrap()
            .host_str()
            .unwrap()
            .to_string(),
        url: url.to_string(),
        hops,
        inlinks: 0,
        via,
        tries,
        not_before: None,
        etag: String::new(),
        last_modified: String::new(),
        digest: String::new(),
        fetched: None,
        record_id: String::new(),
    }
}

/// Every segment of the crawl by ID.
pub fn segments(crawl: &TempCrawl) -> BTreeMap<String, Vec<SegmentRecord>> {
    crawl
        .dir
        .segment_ids()
        .unwrap()
        .into_iter()
        .map(|id| {
            let recs = read_records(&crawl.dir.segment_path(&id));
            (id, recs)
        })
        .collect()
}

/// The backlog's records (empty if there is none).
pub fn backlog(crawl: &TempCrawl) -> Vec<SegmentRecord> {
    let p = crawl.dir.backlog_path();
    if p.exists() {
        read_records(&p)
    } else {
        Vec::new()
    }
}

/// Marks segment `id` as fetched with nothing stored (an empty run).
pub fn mark_fetched_empty(crawl: &TempCrawl, id: &str) {
    let dir = crawl.dir.fetched_dir(id);
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("DONE"), b"").unwrap();
}

/// URLs of a list of records.
pub fn urls(recs: &[SegmentRecord]) -> Vec<String> {
    recs.iter().map(|r| r.url.clone()).collect()
}

/// The entries of a list file (`consumed.txt`, `scope.seeds`), one a line:
/// what a person reads in it, without its `#` header and end lines.
pub fn list_entries(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The list of the fetch history's generations in the crawl directory.
pub const HISTORY_LIST: &str = "history.v5.list";

/// The fetch history of the crawl directory `root`, its generations
/// merged, one line per URL, as `segmenter inspect LIST --entries` prints
/// it (empty without a history).
pub fn history_text(root: &Path) -> String {
    let list = root.join(HISTORY_LIST);
    if !list.exists() {
        return String::new();
    }
    bins::run(
        &mut segmenter_cmd(&[
            OsStr::new("inspect"),
            list.as_os_str(),
            OsStr::new("--entries"),
        ]),
        root,
    )
    .stdout
}

/// The generation files the history list at `list` names, oldest first.
pub fn history_generations(list: &Path) -> Vec<String> {
    let text = fs::read_to_string(list).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("# history v5 generations"), "{text}");
    lines
        .take_while(|l| !l.starts_with("# end "))
        .map(|l| l.split('\t').next().unwrap().to_string())
        .collect()
}

/// The newest JSON round report of the crawl.
pub fn newest_json_report(crawl: &TempCrawl) -> serde_json::Value {
    let mut reports: Vec<_> = std::fs::read_dir(crawl.dir.logs_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    reports.sort();
    let text = std::fs::read_to_string(reports.last().unwrap()).unwrap();
    serde_json::from_str(&text).unwrap()
}
