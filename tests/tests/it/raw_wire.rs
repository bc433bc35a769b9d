//! The WARC records hold what went over the wire: a raw TCP server on
//! loopback sends hand-made responses (chunked with extensions and
//! trailers, gzip, raw deflate, a plain body labelled gzip, brotli, a
//! Latin-1 header and `Location`, a repeated `Content-Length`, HTTP/1.0
//! until close, status 999 without a reason) and logs every byte; the real
//! fetcher fetches them, and the stored request and response blocks must
//! be those bytes exactly, pass `warcio check` and `warcio index`, and give
//! the segmenter every link.

use crate::support;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::warc::{WarcReader, WarcRecord};
use testkit::TempDir;
use testkit::bins::{self, run_within, segmenter_cmd};
use testkit::gzip;
use testkit::segment::read_urls;
use testkit::warcio::{self, warc_files};

const BOUND: Duration = Duration::from_secs(60);

/// A page linking to `/found/NAME`.
fn page(name: &str) -> Vec<u8> {
    format!("<html><body><a href=\"/found/{name}\">{name}</a></body></html>").into_bytes()
}

fn raw_deflate(b: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(b).unwrap();
    e.finish().unwrap()
}

fn brotli(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    brotli::BrotliCompress(&mut &b[..], &mut out, &Default::default()).unwrap();
    out
}

fn with_head(head: &str, body: &[u8]) -> Vec<u8> {
    let mut r = head.replace('\n', "\r\n").into_bytes();
    r.extend_from_slice(body);
    r
}

/// Every path the server answers, and the bytes it sends.
fn responses() -> BTreeMap<&'static str, Vec<u8>> {
    let mut r = BTreeMap::new();
    r.insert(
        "/robots.txt",
        with_head(
            "HTTP/1.1 404 Not Found\nContent-Length: 0\nConnection: close\n\n",
            b"",
        ),
    );
    let body = page("chunked");
    let mut chunked = Vec::new();
    for (i, part) in body.chunks(17).enumerate() {
        chunked.extend_from_slice(format!("{:X};piece={i}\r\n", part.len()).as_bytes());
        chunked.extend_from_slice(part);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\nX-Checksum: none\r\n\r\n");
    r.insert(
        "/chunked",
        with_head(
            "HTTP/1.1 200 OK\ncontent-type: text/html\nTransfer-Encoding: chunked\nConnection: close\n\n",
            &chunked,
        ),
    );
    let gz = gzip(page("gzip"));
    r.insert(
        "/gzip",
        with_head(
            &format!(
                "HTTP/1.1 200 Fine Thanks\nContent-Type: text/html\nContent-Encoding: gzip\nContent-Length: {}\nConnection: close\n\n",
                gz.len()
            ),
            &gz,
        ),
    );
    let deflated = raw_deflate(&page("deflate"));
    r.insert(
        "/deflate",
        with_head(
            &format!(
                "HTTP/1.1 200 OK\nContent-Type: text/html\nContent-Encoding: deflate\nContent-Length: {}\nConnection: close\n\n",
                deflated.len()
            ),
            &deflated,
        ),
    );
    let plain = page("mislabelled");
    r.insert(
        "/mislabelled",
        with_head(
            &format!(
                "HTTP/1.1 200 OK\nContent-Type: text/html\nContent-Encoding: gzip\nContent-Length: {}\nConnection: close\n\n",
                plain.len()
            ),
            &plain,
        ),
    );
    let br = brotli(&page("brotli"));
    r.insert(
        "/brotli",
        with_head(
            &format!(
                "HTTP/1.1 200 OK\nContent-Type: text/html\nContent-Encoding: br\nContent-Length: {}\nConnection: close\n\n",
                br.len()
            ),
            &br,
        ),
    );
    let latin = page("latin1");
    let mut head = format!(
        "HTTP/1.1 200 OK\nContent-Type: text/html\nX-Latin: caf\u{e9}\nSet-Cookie: a=1\nset-cookie: b=2\nContent-Length: {}\nConnection: close\n\n",
        latin.len()
    )
    .replace('\n', "\r\n")
    .into_bytes();
    // `é` as the one Latin-1 byte, not as UTF-8.
    let at = head.windows(2).position(|w| w == "é".as_bytes()).unwrap();
    head.splice(at..at + 2, [0xe9]);
    head.extend_from_slice(&latin);
    r.insert("/latin1", head);
    let mut moved = b"HTTP/1.1 301 Moved\r\nLocation: /caf\xe9\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        .to_vec();
    moved.extend_from_slice(b"");
    r.insert("/moved", moved);
    let dup = page("dup-length");
    r.insert(
        "/dup-length",
        with_head(
            &format!(
                "HTTP/1.1 200 OK\nContent-Type: text/html\nContent-Length: {0}\nContent-Length: {0}\nConnection: close\n\n",
                dup.len()
            ),
            &dup,
        ),
    );
    r.insert(
        "/http10",
        with_head(
            "HTTP/1.0 200 OK\nContent-Type: text/html\n\n",
            &page("http10"),
        ),
    );
    let odd = page("status-999");
    r.insert(
        "/status-999",
        with_head(
            &format!(
                "HTTP/1.1 999\nContent-Type: text/html\nContent-Length: {}\nConnection: close\n\n",
                odd.len()
            ),
            &odd,
        ),
    );
    r
}

/// What the server received and sent on one connection.
#[derive(Debug, Clone, Default)]
struct Exchange {
    received: Vec<u8>,
    sent: Vec<u8>,
}

/// One response per connection, then close; every byte logged by path.
struct RawServer {
    port: u16,
    log: Arc<Mutex<BTreeMap<String, Vec<Exchange>>>>,
    stop: Arc<AtomicBool>,
}

impl RawServer {
    fn start(answers: BTreeMap<&'static str, Vec<u8>>) -> RawServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let log: Arc<Mutex<BTreeMap<String, Vec<Exchange>>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (log2, stop2) = (log.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop2.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((conn, _)) => {
                        let (log, answers) = (log2.clone(), answers.clone());
                        std::thread::spawn(move || serve(conn, &answers, &log));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        RawServer { port, log, stop }
    }
}

impl Drop for RawServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn serve(
    mut conn: TcpStream,
    answers: &BTreeMap<&'static str, Vec<u8>>,
    log: &Mutex<BTreeMap<String, Vec<Exchange>>>,
) {
    conn.set_nonblocking(false).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut received = Vec::new();
    let mut buf = [0u8; 4096];
    while !received.windows(4).any(|w| w == b"\r\n\r\n") {
        match conn.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => received.extend_from_slice(&buf[..n]),
        }
    }
    let line = String::from_utf8_lossy(&received);
    let path = line.split(' ').nth(1).unwrap_or("").to_string();
    let sent = answers.get(path.as_str()).cloned().unwrap_or_else(|| {
        b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_vec()
    });
    // In two writes, so the client sees the head before the body.
    let split = sent.len() / 2;
    let _ = conn.write_all(&sent[..split]);
    let _ = conn.flush();
    std::thread::sleep(Duration::from_millis(5));
    let _ = conn.write_all(&sent[split..]);
    let _ = conn.shutdown(std::net::Shutdown::Both);
    log.lock()
        .unwrap()
        .entry(path)
        .or_default()
        .push(Exchange { received, sent });
}

fn records(dir: &Path) -> Vec<WarcRecord> {
    let mut out = Vec::new();
    for file in warc_files(dir) {
        let mut r = WarcReader::open(&file, 1 << 24).unwrap();
        let mut rec = WarcRecord::default();
        while r.read_next(&mut rec).unwrap() {
            out.push(rec.clone());
        }
    }
    out
}

fn segment_urls(crawl: &Path) -> Vec<String> {
    let mut urls = Vec::new();
    for e in std::fs::read_dir(crawl.join("segments")).unwrap() {
        let p = e.unwrap().path();
        if !p.to_string_lossy().ends_with(".zst") {
            continue;
        }
        urls.extend(read_urls(&p));
    }
    urls
}

#[test]
fn records_hold_the_bytes_exchanged_and_every_link_is_found() {
    let answers = responses();
    let server = RawServer::start(answers.clone());
    let tmp_dir = TempDir::new("raw-wire");
    let tmp = tmp_dir.path();
    let crawl = tmp.join("crawl");
    let base = format!("http://raw.test:{}", server.port);
    let pages: Vec<&str> = answers
        .keys()
        .copied()
        .filter(|p| *p != "/robots.txt")
        .collect();
    let seeds: String = pages.iter().map(|p| format!("{base}{p}\n")).collect();
    std::fs::write(tmp.join("seeds.txt"), seeds).unwrap();
    std::fs::write(tmp.join("hosts"), "127.0.0.1 raw.test\n").unwrap();

    support::inject(&crawl, &tmp.join("seeds.txt"), tmp, BOUND);
    let fetched = run_within(
        &mut bins::fetch_cmd(&crawl, &tmp.join("hosts")),
        tmp,
        0,
        BOUND,
    );

    // Byte for byte: each request as the server read it, each response as it sent it.
    let run = crawl.join("fetched/00001");
    let recs = records(&run);
    let log = server.log.lock().unwrap().clone();
    let mut problems = Vec::new();
    for (path, exchanges) in &log {
        let url = format!("{base}{path}");
        let of = |kind: &str| {
            recs.iter()
                .find(|r| r.record_type() == Some(kind) && r.target_uri() == Some(url.as_str()))
        };
        let (Some(req), Some(resp)) = (of("request"), of("response")) else {
            problems.push(format!("{url}: not stored"));
            continue;
        };
        let ex = &exchanges[0];
        if req.block != ex.received {
            problems.push(format!(
                "{url}: request stored as {:?}, sent as {:?}",
                String::from_utf8_lossy(&req.block),
                String::from_utf8_lossy(&ex.received)
            ));
        }
        if resp.block != ex.sent {
            problems.push(format!(
                "{url}: response stored as {:?}, received as {:?}",
                String::from_utf8_lossy(&resp.block),
                String::from_utf8_lossy(&ex.sent)
            ));
        }
    }
    assert_eq!(log.len(), answers.len(), "every path asked once: {log:?}");
    assert!(
        problems.is_empty(),
        "{}\n{}",
        problems.join("\n"),
        fetched.stderr
    );
    let accept = String::from_utf8_lossy(&log["/gzip"][0].received).to_string();
    assert!(
        accept.contains("accept-encoding: gzip, deflate, br\r\n"),
        "{accept}"
    );

    // An independent reader agrees, and indexes one request and one response per fetch.
    warcio::check(&warc_files(&run)).unwrap();
    let mut indexed = Vec::new();
    for f in warc_files(&run) {
        indexed.extend(warcio::index(&f));
    }
    let count = |t: &str| indexed.iter().filter(|v| v["warc-type"] == t).count();
    assert_eq!(
        (count("request"), count("response")),
        (log.len(), log.len())
    );
    for kind in ["warcinfo", "request", "response"] {
        let line = indexed
            .iter()
            .filter(|v| v["warc-type"] == kind)
            .find(|v| kind == "warcinfo" || v["warc-target-uri"] == format!("{base}/gzip").as_str())
            .unwrap();
        println!("warcio index, {kind}: {line}");
    }

    // warcio's content reader decodes what it knows (brotli needs the
    // Python `brotli` package, which scripts/test.sh installs).
    for path in ["/chunked", "/gzip", "/deflate", "/brotli", "/http10"] {
        let url = format!("{base}{path}");
        let line = indexed
            .iter()
            .find(|v| v["warc-type"] == "response" && v["warc-target-uri"] == url.as_str())
            .unwrap();
        let offset: u64 = line["offset"].as_str().unwrap().parse().unwrap();
        let file = warc_files(&run)
            .into_iter()
            .find(|f| {
                warcio::index(f)
                    .iter()
                    .any(|v| v["offset"] == line["offset"] && v["warc-target-uri"] == url.as_str())
            })
            .unwrap();
        let got = warcio::payload(&file, offset);
        // warcio's de-chunking leaves the trailer section after the body.
        assert!(
            got.starts_with(&page(&path[1..])),
            "{path}: {}",
            String::from_utf8_lossy(&got)
        );
    }

    // The crawl log says which body was kept undecoded; the rest decoded.
    let crawl_log = std::fs::read_to_string(run.join("crawl.log")).unwrap();
    for line in crawl_log.lines() {
        let decode = line.contains("\tdecode gzip:");
        assert_eq!(decode, line.contains("/mislabelled\t"), "{line}");
    }

    // The segmenter reads every body, decoded or as received.
    let out = run_within(segmenter_cmd().arg("run").arg(&crawl), tmp, 0, BOUND);
    let found = segment_urls(&crawl);
    let mut missing: Vec<String> = pages
        .iter()
        // A redirect has no page; a 999 is no success: no links from either.
        .filter(|p| !["/moved", "/status-999"].contains(p))
        .map(|p| format!("{base}/found/{}", &p[1..]))
        .filter(|u| !found.contains(u))
        .collect();
    if !found.contains(&format!("{base}/caf%E9")) {
        missing.push("the Latin-1 redirect target /caf%E9".into());
    }
    assert!(
        missing.is_empty(),
        "links not found: {missing:?}\nsegment: {found:?}\n{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("bodies not decoded:") || out.stderr.contains("body not decoded"),
        "{}{}",
        out.stdout,
        out.stderr
    );
}
