//! The WARC files our writer produces, judged by the real `warcio`:
//! `warcio check` verifies every record and digest, and `warcio index` must
//! list exactly the records our own reader finds, at the same offsets.

use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::warc::{
    Exchange, StoredExchange, Truncated, WarcError, WarcReader, WarcRecord, WarcWriter,
    WarcWriterConfig, recover,
};
use testkit::{TempDir, warcio};

fn config(dir: &Path, max: u64) -> WarcWriterConfig {
    WarcWriterConfig {
        dir: dir.to_path_buf(),
        prefix: "CRAWL".into(),
        max_file_size: max,
        first_serial: 1,
        hostname: "testhost".into(),
        info: vec![
            ("software".into(), "crawler-tests".into()),
            (
                "http-header-user-agent".into(),
                "test-bot/1.0 (+http://bot.test/)".into(),
            ),
            ("robots".into(), "obey".into()),
        ],
    }
}

/// One page to store, with everything the writer is given.
struct Page {
    url: String,
    request: Vec<u8>,
    response: Vec<u8>,
    payload: Vec<u8>,
    ip: Option<IpAddr>,
    truncated: Option<Truncated>,
    date: SystemTime,
}

fn html(i: usize) -> Vec<u8> {
    let mut body = format!("<!doctype html><title>page {i}</title>\n").into_bytes();
    for j in 0..(i * 37 % 400) {
        body.extend_from_slice(format!("<a href=\"/p{}\">link {j}</a>\n", i * 7 + j).as_bytes());
    }
    body
}

fn page(i: usize) -> Page {
    let url = format!("http://site{}.test/p{i}?q={}", i % 3, i * 13);
    let request = format!(
        "GET /p{i}?q={} HTTP/1.1\r\nHost: site{}.test\r\nUser-Agent: test-bot/1.0\r\n\
         Accept-Encoding: gzip\r\n\r\n",
        i * 13,
        i % 3
    )
    .into_bytes();
    let (status, ctype, payload, truncated) = match i % 7 {
        // A binary payload: every byte value, including CR, LF and NUL.
        3 => (
            "200 OK",
            "image/png",
            (0..=255u8).cycle().take(3000 + i).collect(),
            None,
        ),
        // A body cut at the size limit.
        5 => (
            "200 OK",
            "text/html",
            html(i + 300),
            Some(Truncated::Length),
        ),
        // A redirect with an empty body.
        6 => ("301 Moved Permanently", "text/html", Vec::new(), None),
        _ => ("200 OK", "text/html; charset=utf-8", html(i), None),
    };
    let mut response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n",
        payload.len()
    );
    if i % 7 == 6 {
        response.push_str(&format!("Location: http://site0.test/moved{i}\r\n"));
    }
    if i.is_multiple_of(4) {
        // What the fetcher keeps of a decoded gzip response.
        response.push_str("X-Crawler-Content-Encoding: gzip\r\nX-Crawler-Content-Length: 77\r\n");
    }
    response.push_str("\r\n");
    Page {
        url,
        request,
        response: response.into_bytes(),
        payload,
        ip: match i % 3 {
            0 => Some(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2 + (i % 5) as u8))),
            1 => Some(IpAddr::V6(Ipv6Addr::LOCALHOST)),
            _ => None,
        },
        truncated,
        date: UNIX_EPOCH + Duration::from_secs(1_795_408_022 + i as u64),
    }
}

fn store(w: &mut WarcWriter, p: &Page, hops: u32) -> StoredExchange {
    let extra = [
        ("X-Crawl-Hops", hops.to_string()),
        ("X-Crawl-Via", "link".to_string()),
    ];
    w.write_exchange(&Exchange {
        target_uri: &p.url,
        date: p.date,
        ip: p.ip,
        request_head: &p.request,
        response_head: &p.response,
        payload: &p.payload,
        truncated: p.truncated,
        extra_fields: &extra,
        protocols: &["http/1.1"],
        cipher_suite: None,
        metadata: None,
    })
    .unwrap()
}

fn read_ours(path: &Path) -> Vec<WarcRecord> {
    let mut r = WarcReader::open(path, usize::MAX).unwrap();
    let mut rec = WarcRecord::default();
    let mut out = Vec::new();
    while r.read_next(&mut rec).unwrap() {
        out.push(rec.clone());
    }
    out
}

/// `warcio index` must list the records our reader finds, in order, with the
/// same offsets, compressed lengths, types, target URIs and ids.
fn assert_index_matches(path: &Path, ours: &[WarcRecord]) {
    let index = warcio::index(path);
    assert_eq!(index.len(), ours.len(), "{}: {index:#?}", path.display());
    for (theirs, mine) in index.iter().zip(ours) {
        let field = |name: &str| {
            theirs
                .get(name)
                .and_then(|v| v.as_str())
                .map(str::to_string)
        };
        let number = |name: &str| field(name).and_then(|v| v.parse::<u64>().ok());
        assert_eq!(number("offset"), Some(mine.offset), "{theirs}");
        assert_eq!(number("length"), Some(mine.length), "{theirs}");
        assert_eq!(
            field("warc-type").as_deref(),
            mine.record_type(),
            "{theirs}"
        );
        assert_eq!(
            field("warc-target-uri").as_deref(),
            mine.target_uri(),
            "{theirs}"
        );
        assert_eq!(
            field("warc-record-id").as_deref(),
            mine.header("WARC-Record-ID"),
            "{theirs}"
        );
        if mine.record_type() == Some("response") {
            let status = common::http::parse_response_head(&mine.block)
                .unwrap()
                .status;
            assert_eq!(field("http:status"), Some(status.to_string()), "{theirs}");
            assert_eq!(
                field("warc-payload-digest").as_deref(),
                mine.header("WARC-Payload-Digest")
            );
        }
    }
}

#[test]
fn warcio_accepts_and_indexes_our_files() {
    let dir = TempDir::new("accepts");
    let mut w = WarcWriter::new(config(dir.path(), 25_000)).unwrap();
    let pages: Vec<Page> = (0..70).map(page).collect();
    let stored: Vec<StoredExchange> = pages
        .iter()
        .enumerate()
        .map(|(i, p)| store(&mut w, p, i as u32 % 4))
        .collect();
    let files = w.finish().unwrap();
    assert!(files.len() >= 3, "expected a roll-over: {files:?}");

    warcio::check(&files).unwrap_or_else(|e| panic!("{e}"));

    let mut next = 0;
    for f in &files {
        let ours = read_ours(f);
        assert_eq!(ours[0].record_type(), Some("warcinfo"));
        assert_eq!(
            ours.last().map(|r| r.offset + r.length),
            Some(std::fs::metadata(f).unwrap().len())
        );
        assert_index_matches(f, &ours);
        // Each exchange is where the writer said it stored it.
        for pair in ours[1..].chunks(2) {
            let s = &stored[next];
            assert_eq!(s.file, *f);
            assert_eq!(
                (s.offset, s.length),
                (pair[0].offset, pair[0].length + pair[1].length)
            );
            assert_eq!(pair[1].target_uri(), Some(pages[next].url.as_str()));
            next += 1;
        }
    }
    assert_eq!(next, pages.len());
}

#[test]
fn warcio_check_catches_a_wrong_digest() {
    // The harness itself must be able to fail: a record whose payload does
    // not match its digest.
    let dir = TempDir::new("baddigest");
    let path = dir.path().join("bad.warc.gz");
    let block = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
    let record = format!(
        "WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:12345678-1234-4234-8234-123456789abc>\r\n\
         WARC-Date: 2026-11-23T04:27:02Z\r\nWARC-Target-URI: http://a.test/\r\n\
         WARC-Payload-Digest: sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ\r\n\
         Content-Type: application/http;msgtype=response\r\nContent-Length: {}\r\n\r\n",
        block.len()
    );
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(record.as_bytes()).unwrap();
    gz.write_all(block).unwrap();
    gz.write_all(b"\r\n\r\n").unwrap();
    std::fs::write(&path, gz.finish().unwrap()).unwrap();
    let err = warcio::check(&[&path]).expect_err("warcio check passed a wrong digest");
    assert!(err.contains("digest"), "{err}");
}

#[test]
fn a_torn_file_fails_warcio_until_recovered() {
    let dir = TempDir::new("torn");
    let mut w = WarcWriter::new(config(dir.path(), 1 << 30)).unwrap();
    let pages: Vec<Page> = (0..5).map(page).collect();
    let stored: Vec<StoredExchange> = pages.iter().map(|p| store(&mut w, p, 1)).collect();
    let path = w.finish().unwrap().remove(0);
    let len = std::fs::metadata(&path).unwrap().len();
    // kill -9 in the middle of writing the last exchange.
    let last = stored.last().unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(last.offset + last.length / 2).unwrap();
    drop(f);
    // Our reader reads the last request record, then stops at the torn
    // response. (warcio check says nothing about a torn last member.)
    let mut reader = WarcReader::open(&path, usize::MAX).unwrap();
    let mut rec = WarcRecord::default();
    let mut n = 0;
    let err = loop {
        match reader.read_next(&mut rec) {
            Ok(true) => n += 1,
            Ok(false) => panic!("no error at the torn record"),
            Err(e) => break e,
        }
    };
    assert_eq!(n, 1 + 2 * 4 + 1);
    assert!(
        matches!(err, WarcError::Truncated { offset, .. } if offset > last.offset),
        "{err}"
    );

    let r = recover(&path).unwrap();
    assert_eq!(r.valid_len, last.offset);
    assert_eq!(r.records, 1 + 2 * 4);
    assert!(r.cut > 0 && r.valid_len + r.cut < len);
    warcio::check(&[&path]).unwrap_or_else(|e| panic!("{e}"));
    let ours = read_ours(&path);
    assert_eq!(ours.len(), 9);
    assert_index_matches(&path, &ours);

    // A writer then starts the next file (as a resumed run does), and
    // warcio agrees with both.
    let mut cfg = config(dir.path(), 1 << 30);
    cfg.first_serial = common::warc::file_serial(&path).unwrap() + 1;
    let mut w = WarcWriter::new(cfg).unwrap();
    store(&mut w, &page(5), 2);
    store(&mut w, &page(6), 2);
    let files = w.finish().unwrap();
    warcio::check(&[&path, &files[0]]).unwrap_or_else(|e| panic!("{e}"));
    let ours = read_ours(&files[0]);
    assert_eq!(ours.len(), 5);
    assert_index_matches(&files[0], &ours);
}
