use std::collections::HashSet;
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use super::*;
use crate::testutil::{Rng, TempDir, read_all, read_resyncing};

const REQUEST: &[u8] = b"GET /a HTTP/1.1\r\nHost: example.com\r\nUser-Agent: test-bot/1.0\r\n\r\n";
const RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5\r\n\r\n";

fn config(dir: &Path, max: u64) -> WarcWriterConfig {
    WarcWriterConfig {
        dir: dir.to_path_buf(),
        prefix: "TEST".into(),
        max_file_size: max,
        first_serial: 0,
        hostname: "box1".into(),
        info: vec![
            ("software".into(), "crawler-test/0.1".into()),
            ("operator".into(), "tests".into()),
        ],
    }
}

fn date() -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(1_795_408_022_123)
}

fn exchange<'a>(uri: &'a str, payload: &'a [u8], extra: &'a [(&'a str, String)]) -> Exchange<'a> {
    Exchange {
        target_uri: uri,
        date: date(),
        ip: Some(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2))),
        request_head: REQUEST,
        response_head: RESPONSE,
        payload,
        truncated: None,
        extra_fields: extra,
        protocols: &["http/1.1"],
        cipher_suite: None,
        metadata: None,
    }
}

/// A page-like payload: text with some variety, deterministic.
fn page(n: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let words = [
        "<p>",
        "the",
        "crawler",
        "</a>",
        "<a href=\"/x\">",
        "fetch",
        "segment",
        "\n",
    ];
    let mut out = Vec::with_capacity(n + 16);
    while out.len() < n {
        out.extend_from_slice(words[rng.below(words.len())].as_bytes());
        out.push(b' ');
    }
    out.truncate(n);
    out
}

#[test]
fn round_trip_keeps_every_field_and_byte() {
    let dir = TempDir::new("roundtrip");
    let mut w = WarcWriter::new(config(dir.path(), DEFAULT_MAX_FILE_SIZE)).unwrap();
    let extra = [
        ("X-Crawl-Hops", "3".to_string()),
        ("X-Crawl-Via", "link".to_string()),
    ];
    let binary: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
    let mut stored = Vec::new();
    let mut ex = exchange("http://example.com/a", b"hello", &extra);
    stored.push(w.write_exchange(&ex).unwrap());
    ex.target_uri = "http://example.com/bin";
    ex.payload = &binary;
    ex.ip = Some(IpAddr::V6(Ipv6Addr::LOCALHOST));
    stored.push(w.write_exchange(&ex).unwrap());
    ex.target_uri = "http://example.com/cut";
    ex.payload = b"partial";
    ex.ip = None;
    ex.truncated = Some(Truncated::Length);
    stored.push(w.write_exchange(&ex).unwrap());
    let files = w.finish().unwrap();
    assert_eq!(files.len(), 1);
    assert!(stored.iter().all(|s| s.file == files[0]));

    let (recs, err) = read_all(&files[0], usize::MAX);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(recs.len(), 7);
    let info = &recs[0];
    assert_eq!(info.record_type(), Some("warcinfo"));
    assert_eq!(info.offset, 0);
    assert_eq!(info.header("Content-Type"), Some("application/warc-fields"));
    let name = files[0].file_name().unwrap().to_str().unwrap();
    assert_eq!(info.header("WARC-Filename"), Some(name));
    let fields = String::from_utf8(info.block.clone()).unwrap();
    assert_eq!(
        fields,
        "software: crawler-test/0.1\r\noperator: tests\r\nformat: WARC File Format 1.1\r\n\
         conformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n"
    );

    // The warcinfo record is dated when the file was opened, the others
    // when their fetch happened.
    let opened = crate::timefmt::parse_iso(info.header("WARC-Date").unwrap()).unwrap();
    let age = SystemTime::now().duration_since(opened).unwrap();
    assert!(age < Duration::from_secs(600), "{age:?}");
    let mut ids = HashSet::new();
    for r in &recs {
        if r.record_type() != Some("warcinfo") {
            assert_eq!(r.header("WARC-Date"), Some("2026-11-23T04:27:02.123Z"));
            // Every record names its file's warcinfo record.
            assert_eq!(r.header("WARC-Warcinfo-ID"), info.header("WARC-Record-ID"));
            assert_eq!(r.header("WARC-Protocol"), Some("http/1.1"));
        }
        assert!(ids.insert(r.header("WARC-Record-ID").unwrap().to_string()));
        assert_eq!(
            r.header("Content-Length")
                .unwrap()
                .parse::<usize>()
                .unwrap(),
            r.block.len()
        );
        assert!(!r.block_cut);
    }
    for (i, pair) in recs[1..].chunks(2).enumerate() {
        let (req, resp) = (&pair[0], &pair[1]);
        assert_eq!(req.record_type(), Some("request"));
        assert_eq!(resp.record_type(), Some("response"));
        assert_eq!(req.offset, stored[i].offset);
        assert_eq!(req.length + resp.length, stored[i].length);
        assert_eq!(resp.offset, req.offset + req.length);
        assert_eq!(req.target_uri(), resp.target_uri());
        assert_eq!(
            req.header("WARC-Concurrent-To"),
            resp.header("WARC-Record-ID")
        );
        assert_eq!(
            resp.header("WARC-Concurrent-To"),
            req.header("WARC-Record-ID")
        );
        assert_eq!(
            req.header("Content-Type"),
            Some("application/http;msgtype=request")
        );
        assert_eq!(
            resp.header("Content-Type"),
            Some("application/http;msgtype=response")
        );
        assert_eq!(req.block, REQUEST);
        assert_eq!(&resp.block[..RESPONSE.len()], RESPONSE);
        assert_eq!(resp.header("X-Crawl-Hops"), Some("3"));
        assert_eq!(resp.header("X-Crawl-Via"), Some("link"));
        assert_eq!(req.header("X-Crawl-Hops"), None);
    }
    assert_eq!(recs[2].target_uri(), Some("http://example.com/a"));
    assert_eq!(&recs[2].block[RESPONSE.len()..], b"hello");
    assert_eq!(recs[2].header("WARC-IP-Address"), Some("127.0.0.2"));
    assert_eq!(&recs[4].block[RESPONSE.len()..], &binary[..]);
    assert_eq!(recs[4].header("WARC-IP-Address"), Some("::1"));
    assert_eq!(recs[4].header("WARC-Truncated"), None);
    assert_eq!(recs[6].header("WARC-IP-Address"), None);
    assert_eq!(recs[6].header("WARC-Truncated"), Some("length"));
    let last = &recs[6];
    assert_eq!(
        last.offset + last.length,
        std::fs::metadata(&files[0]).unwrap().len()
    );
}

#[test]
fn digests_match_an_independent_sha1() {
    // Values from Python's hashlib.sha1 + base64.b32encode.
    let dir = TempDir::new("digests");
    let mut w = WarcWriter::new(config(dir.path(), DEFAULT_MAX_FILE_SIZE)).unwrap();
    w.write_exchange(&exchange("http://example.com/a", b"hello", &[]))
        .unwrap();
    let files = w.finish().unwrap();
    let (recs, err) = read_all(&files[0], usize::MAX);
    assert!(err.is_none());
    let (req, resp) = (&recs[1], &recs[2]);
    assert_eq!(
        req.header("WARC-Block-Digest"),
        Some("sha1:A4MEJS5MR45UIDH2GP7LKHU4MIJRP3TE")
    );
    // A GET has an empty payload: the digest of no bytes.
    assert_eq!(
        req.header("WARC-Payload-Digest"),
        Some("sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ")
    );
    assert_eq!(
        resp.header("WARC-Block-Digest"),
        Some("sha1:V5N4DU7OHW5EE7ZB4C2DOGZXS2FPKE2Y")
    );
    assert_eq!(
        resp.header("WARC-Payload-Digest"),
        Some("sha1:VL2MMHO4YXUKFWV63YHTWSBM3GXKSQ2N")
    );
    assert_eq!(
        writer::sha1_base32(&[b"a", b"bc"]),
        *b"VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5"
    );
}

#[test]
fn files_roll_over_at_the_size_limit() {
    let dir = TempDir::new("roll");
    let mut cfg = config(dir.path(), 20_000);
    cfg.first_serial = 7;
    let mut w = WarcWriter::new(cfg).unwrap();
    let mut stored = Vec::new();
    let urls: Vec<String> = (0..60)
        .map(|i| format!("http://example.com/p{i}"))
        .collect();
    let pages: Vec<Vec<u8>> = (0..60).map(|i| page(3000 + i * 50, i as u64)).collect();
    for (url, body) in urls.iter().zip(&pages) {
        stored.push(w.write_exchange(&exchange(url, body, &[])).unwrap());
    }
    let files = w.finish().unwrap();
    assert!(files.len() >= 3, "{files:?}");
    let mut next = 0;
    for (i, f) in files.iter().enumerate() {
        let name = f.file_name().unwrap().to_str().unwrap();
        let parts: Vec<&str> = name.strip_suffix(".warc.gz").unwrap().split('-').collect();
        assert_eq!(parts.len(), 4, "{name}");
        assert_eq!(parts[0], "TEST");
        assert_eq!(parts[1].len(), 17);
        assert!(parts[1].bytes().all(|b| b.is_ascii_digit()));
        assert_eq!(parts[2], format!("{:05}", 7 + i));
        assert_eq!(parts[3], "box1");
        let size = std::fs::metadata(f).unwrap().len();
        let (recs, err) = read_all(f, usize::MAX);
        assert!(err.is_none());
        assert_eq!(recs[0].record_type(), Some("warcinfo"));
        assert_eq!(recs[0].header("WARC-Filename"), Some(name));
        let exchanges = (recs.len() - 1) / 2;
        assert!(exchanges >= 1);
        // A file goes past the limit only with its first exchange.
        if exchanges > 1 {
            assert!(size <= 20_000, "{name}: {size} bytes");
        }
        for pair in recs[1..].chunks(2) {
            assert_eq!(pair[1].target_uri(), Some(urls[next].as_str()));
            assert_eq!(&pair[1].block[RESPONSE.len()..], &pages[next][..]);
            assert_eq!(stored[next].file, *f);
            assert_eq!(stored[next].offset, pair[0].offset);
            next += 1;
        }
    }
    assert_eq!(next, 60);
    assert_eq!(list_files(dir.path(), "TEST").unwrap(), files);
    assert_eq!(
        list_files(dir.path(), "OTHER").unwrap(),
        Vec::<PathBuf>::new()
    );
}

/// A small valid file and the end offset of each of its members.
fn small_file(dir: &Path) -> (PathBuf, Vec<u64>) {
    let mut w = WarcWriter::new(config(dir, DEFAULT_MAX_FILE_SIZE)).unwrap();
    w.write_exchange(&exchange("http://example.com/1", b"hello", &[]))
        .unwrap();
    let body = page(700, 1);
    w.write_exchange(&exchange("http://example.com/2", &body, &[]))
        .unwrap();
    let path = w.finish().unwrap().remove(0);
    let (recs, err) = read_all(&path, usize::MAX);
    assert!(err.is_none());
    let ends = recs.iter().map(|r| r.offset + r.length).collect();
    (path, ends)
}

#[test]
fn torn_tail_at_every_cut_point() {
    let dir = TempDir::new("torn");
    let (path, ends) = small_file(dir.path());
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(*ends.last().unwrap(), bytes.len() as u64);
    for cut in 0..=bytes.len() {
        // A new file each time: truncating one is slow on some file systems.
        let cut_path = dir.join(&format!("cut{cut}.warc.gz"));
        std::fs::write(&cut_path, &bytes[..cut]).unwrap();
        let complete = ends.iter().filter(|&&e| e <= cut as u64).count();
        let boundary = ends
            .iter()
            .rev()
            .find(|&&e| e <= cut as u64)
            .copied()
            .unwrap_or(0);
        let (recs, err) = read_all(&cut_path, usize::MAX);
        assert_eq!(recs.len(), complete, "cut at {cut}");
        if boundary == cut as u64 {
            assert!(err.is_none(), "cut at {cut}: {err:?}");
        } else {
            match err {
                Some(WarcError::Truncated { offset, .. }) => assert_eq!(offset, boundary),
                other => panic!("cut at {cut}: expected Truncated, got {other:?}"),
            }
        }
        // recover() keeps whole exchanges: a request without its response
        // goes too. ends[0] is the warcinfo, then request/response pairs.
        let kept = if complete >= 2 && complete % 2 == 0 {
            complete - 1
        } else {
            complete
        };
        let valid = if kept == 0 { 0 } else { ends[kept - 1] };
        let scan = reader::scan_valid(&cut_path).unwrap();
        assert_eq!(
            (scan.records, scan.valid_len),
            (kept as u64, valid),
            "cut at {cut}"
        );
        // recover() fsyncs, which is slow: run it near member boundaries
        // (torn gzip headers and trailers) and on a sample of the rest.
        let near_boundary = ends.iter().any(|&e| (e as usize).abs_diff(cut) <= 12);
        if !near_boundary && cut % 37 != 0 {
            continue;
        }
        let rec = recover(&cut_path).unwrap();
        assert_eq!(
            rec,
            Recovery {
                records: kept as u64,
                valid_len: valid,
                cut: cut as u64 - valid
            },
            "cut at {cut}"
        );
        assert_eq!(std::fs::metadata(&cut_path).unwrap().len(), valid);
        let (again, err) = read_all(&cut_path, usize::MAX);
        assert!(err.is_none(), "after recover at {cut}: {err:?}");
        assert_eq!(again.len(), kept);
        assert_ne!(again.last().and_then(|r| r.record_type()), Some("request"));
    }
}

#[test]
fn garbage_after_the_records_is_reported_not_read() {
    let dir = TempDir::new("garbage");
    let (path, ends) = small_file(dir.path());
    let good = std::fs::read(&path).unwrap();
    let tails: [&[u8]; 5] = [
        b"hello, this is not gzip\n",
        &[0u8; 300],
        &[
            0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8,
        ],
        &[0x1f, 0x8b, 9, 0, 0, 0, 0, 0, 0, 0xff],
        &[0x1f],
    ];
    for (i, tail) in tails.iter().enumerate() {
        let p = dir.join(&format!("g{i}.warc.gz"));
        let mut bytes = good.clone();
        bytes.extend_from_slice(tail);
        std::fs::write(&p, &bytes).unwrap();
        let (recs, err) = read_all(&p, usize::MAX);
        assert_eq!(recs.len(), ends.len(), "tail {i}");
        match err {
            Some(WarcError::Malformed { offset, .. } | WarcError::Truncated { offset, .. }) => {
                assert_eq!(offset, good.len() as u64, "tail {i}")
            }
            other => panic!("tail {i}: {other:?}"),
        }
        let r = recover(&p).unwrap();
        assert_eq!(r.valid_len, good.len() as u64);
        assert_eq!(r.cut, tail.len() as u64);
        assert_eq!(std::fs::read(&p).unwrap(), good);
    }
    // Plain text is Malformed, with a message naming file and offset.
    let p = dir.join("text.warc.gz");
    std::fs::write(&p, [&good[..], b"hello, this is not gzip\n"].concat()).unwrap();
    let (_, err) = read_all(&p, usize::MAX);
    let msg = err.unwrap().to_string();
    assert!(msg.contains("text.warc.gz"), "{msg}");
    assert!(msg.contains(&format!("offset {}", good.len())), "{msg}");
}

#[test]
fn recover_then_a_new_file_takes_more_records() {
    let dir = TempDir::new("append");
    let (path, ends) = small_file(dir.path());
    let bytes = std::fs::read(&path).unwrap();
    // Tear the last exchange in the middle of its response record: its
    // request record goes too.
    let cut = (ends[3] + ends[4]) / 2;
    std::fs::write(&path, &bytes[..cut as usize]).unwrap();
    let r = recover(&path).unwrap();
    assert_eq!(r.records, 3);
    assert_eq!(r.valid_len, ends[2]);

    let mut cfg = config(dir.path(), DEFAULT_MAX_FILE_SIZE);
    cfg.first_serial = file_serial(&path).unwrap() + 1;
    let mut w = WarcWriter::new(cfg).unwrap();
    w.write_exchange(&exchange("http://example.com/3", b"again", &[]))
        .unwrap();
    let files = w.finish().unwrap();
    assert_eq!(files.len(), 1);
    assert_ne!(files[0], path);
    assert_eq!(
        list_files(dir.path(), "TEST").unwrap(),
        [path.clone(), files[0].clone()]
    );
    let (recs, err) = read_all(&path, usize::MAX);
    assert!(err.is_none(), "{err:?}");
    let uris: Vec<_> = recs.iter().map(|r| r.target_uri()).collect();
    assert_eq!(
        uris,
        [
            None,
            Some("http://example.com/1"),
            Some("http://example.com/1"),
        ]
    );
    let (recs, _) = read_all(&files[0], usize::MAX);
    assert_eq!(&recs[2].block[RESPONSE.len()..], b"again");
}

#[test]
fn long_blocks_are_cut_in_memory_only() {
    let dir = TempDir::new("cut");
    let mut w = WarcWriter::new(config(dir.path(), DEFAULT_MAX_FILE_SIZE)).unwrap();
    let big = page(500_000, 9);
    w.write_exchange(&exchange("http://example.com/big", &big, &[]))
        .unwrap();
    w.write_exchange(&exchange("http://example.com/small", b"hello", &[]))
        .unwrap();
    let files = w.finish().unwrap();
    let (recs, err) = read_all(&files[0], 1000);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(recs.len(), 5);
    assert_eq!(recs[2].block.len(), 1000);
    assert!(recs[2].block_cut);
    assert_eq!(&recs[2].block[..RESPONSE.len()], RESPONSE);
    assert_eq!(
        &recs[2].block[RESPONSE.len()..],
        &big[..1000 - RESPONSE.len()]
    );
    assert!(!recs[4].block_cut);
    assert_eq!(&recs[4].block[RESPONSE.len()..], b"hello");
    assert_eq!(recs[4].target_uri(), Some("http://example.com/small"));
}

#[test]
fn fields_cannot_break_the_record_framing() {
    let dir = TempDir::new("inject");
    let mut w = WarcWriter::new(config(dir.path(), DEFAULT_MAX_FILE_SIZE)).unwrap();
    let extra = [("X-Note", "one\r\nWARC-Type: metadata\r\n\r\nx".to_string())];
    w.write_exchange(&exchange("http://example.com/a\r\nX: y", b"hello", &extra))
        .unwrap();
    let files = w.finish().unwrap();
    let (recs, err) = read_all(&files[0], usize::MAX);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(recs.len(), 3);
    assert_eq!(recs[2].record_type(), Some("response"));
    assert_eq!(recs[2].target_uri(), Some("http://example.com/a  X: y"));
    assert_eq!(
        recs[2].header("X-Note"),
        Some("one  WARC-Type: metadata    x")
    );
    assert_eq!(recs[2].header("X"), None);
}

#[test]
fn metadata_fields_cannot_break_the_record_framing() {
    let mut meta = WarcFields::new();
    meta.push("bad name:\r\n", "one\r\nWARC-Type: x");
    meta.push_parts("outlink", &["http://example.com/a\r\n", " L ", "x\ny"]);
    assert_eq!(
        String::from_utf8_lossy(meta.as_bytes()),
        "bad_name___: one  WARC-Type: x\r\noutlink: http://example.com/a   L x y\r\n"
    );
    let dir = TempDir::new("inject-meta");
    let mut w = WarcWriter::new(config(dir.path(), DEFAULT_MAX_FILE_SIZE)).unwrap();
    let mut ex = exchange("http://example.com/a", b"hello", &[]);
    ex.metadata = Some(&meta);
    w.write_exchange(&ex).unwrap();
    let files = w.finish().unwrap();
    let (recs, err) = read_all(&files[0], usize::MAX);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(recs.len(), 4);
    assert_eq!(recs[3].record_type(), Some("metadata"));
    assert_eq!(recs[3].block, meta.as_bytes());
}

#[test]
fn reads_members_with_optional_gzip_header_fields() {
    // Other tools set FNAME, FCOMMENT, FEXTRA and FHCRC; the reader skips them.
    let dir = TempDir::new("gzflags");
    let path = dir.join("other.warc.gz");
    let record = b"WARC/1.0\r\nWARC-Type: resource\r\nWARC-Target-URI: urn:x\r\n\
                   Content-Length: 3\r\n\r\nabc\r\n\r\n";
    let mut bytes = Vec::new();
    for i in 0..3 {
        let mut gz = flate2::GzBuilder::new()
            .filename(format!("name{i}"))
            .comment("a comment")
            .extra(vec![1, 2, 3, 4])
            .write(Vec::new(), flate2::Compression::fast());
        gz.write_all(record).unwrap();
        bytes.extend(gz.finish().unwrap());
    }
    std::fs::write(&path, &bytes).unwrap();
    let (recs, err) = read_all(&path, usize::MAX);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(recs.len(), 3);
    assert_eq!(recs[2].block, b"abc");
    assert_eq!(recs[1].record_type(), Some("resource"));
    assert_eq!(recs[2].offset + recs[2].length, bytes.len() as u64);
}

fn gz(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

#[test]
fn members_that_are_not_warc_records_are_malformed() {
    let dir = TempDir::new("malformed");
    let cases: [(&[u8], &str); 7] = [
        (b"HTTP/1.1 200 OK\r\n\r\n", "not WARC"),
        (
            b"WARC/1.1\r\nWARC-Type: resource\r\n\r\nabc\r\n\r\n",
            "Content-Length",
        ),
        (
            b"WARC/1.1\r\nContent-Length: 10\r\n\r\nabc\r\n\r\n",
            "block has",
        ),
        (
            b"WARC/1.1\r\nContent-Length: x\r\n\r\nabc\r\n\r\n",
            "Content-Length",
        ),
        (
            b"WARC/1.1\r\nContent-Length: +3\r\n\r\nabc\r\n\r\n",
            "bad Content-Length \"+3\"",
        ),
        (
            b"WARC/1.1\r\nContent-Length: 99999999999999999999\r\n\r\nabc\r\n\r\n",
            "bad Content-Length",
        ),
        (
            b"WARC/1.1\r\nContent-Length: 3\r\n",
            "end of the WARC header",
        ),
    ];
    for (i, (body, want)) in cases.iter().enumerate() {
        let p = dir.join(&format!("m{i}.warc.gz"));
        std::fs::write(&p, gz(body)).unwrap();
        let (recs, err) = read_all(&p, usize::MAX);
        assert!(recs.is_empty());
        match err {
            Some(WarcError::Malformed {
                offset: 0, reason, ..
            }) => {
                assert!(reason.contains(want), "case {i}: {reason}")
            }
            other => panic!("case {i}: {other:?}"),
        }
    }
    // A flipped byte inside a member fails its checksum or its inflate.
    let (path, _) = small_file(dir.path());
    let mut bytes = std::fs::read(&path).unwrap();
    let mid = bytes.len() - 100;
    bytes[mid] ^= 0x55;
    std::fs::write(&path, &bytes).unwrap();
    let (_, err) = read_all(&path, usize::MAX);
    assert!(matches!(err, Some(WarcError::Malformed { .. })), "{err:?}");
}

#[test]
fn random_damage_never_panics() {
    let dir = TempDir::new("fuzz");
    let (path, _) = small_file(dir.path());
    let good = std::fs::read(&path).unwrap();
    let p = dir.join("fuzz.warc.gz");
    let mut rng = Rng::new(0x1234_5678_9abc_def1);
    for _ in 0..300 {
        let mut bytes = good.clone();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(bytes.len());
            bytes[at] = rng.next_u64() as u8;
        }
        std::fs::write(&p, &bytes).unwrap();
        let (recs, _) = read_all(&p, 100);
        assert!(recs.len() <= 5);
        match recover(&p) {
            // Either the file now reads cleanly to its end...
            Ok(r) => {
                let (again, err) = read_all(&p, 100);
                assert!(err.is_none(), "{err:?}");
                assert_eq!(again.len() as u64, r.records);
            }
            // ...or the damage is in the middle and nothing was cut.
            Err(WarcError::Malformed { .. }) => assert_eq!(std::fs::read(&p).unwrap(), bytes),
            Err(e) => panic!("{e}"),
        }
    }
}

#[test]
fn empty_and_missing_files() {
    let dir = TempDir::new("empty");
    let p = dir.join("empty.warc.gz");
    std::fs::write(&p, b"").unwrap();
    let (recs, err) = read_all(&p, 10);
    assert!(recs.is_empty() && err.is_none());
    match WarcReader::open(dir.join("missing.warc.gz"), 10) {
        Err(WarcError::Io { path, .. }) => assert!(path.ends_with("missing.warc.gz")),
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("opened a missing file"),
    }
    assert!(WarcWriter::new(config(&dir.join("nope"), 100)).is_err());
}

#[test]
fn exchanges_encoded_on_other_threads() {
    let dir = TempDir::new("threads");
    let mut w = WarcWriter::new(config(dir.path(), 30_000)).unwrap();
    let (tx, rx) = std::sync::mpsc::sync_channel::<(usize, EncodedExchange)>(8);
    let handles: Vec<_> = (0..2)
        .map(|t| {
            let tx = tx.clone();
            std::thread::spawn(move || {
                let mut enc = ExchangeEncoder::with_level(1);
                for i in (t..40).step_by(2) {
                    let url = format!("http://example.com/{i}");
                    let body = page(2000 + i, i as u64);
                    let mut out = EncodedExchange::default();
                    enc.encode(&exchange(&url, &body, &[]), &mut out).unwrap();
                    tx.send((i, out)).unwrap();
                }
            })
        })
        .collect();
    drop(tx);
    let mut order = Vec::new();
    for (i, enc) in rx {
        let s = w.write_encoded(&enc).unwrap();
        // The writer adds the version and warcinfo line, stored, and the
        // gzip framing to each record.
        assert!(s.length > enc.len() as u64 && s.length < enc.len() as u64 + 400);
        order.push(i);
    }
    for h in handles {
        h.join().unwrap();
    }
    assert!(w.write_encoded(&EncodedExchange::default()).is_err());
    let files = w.finish().unwrap();
    assert!(files.len() > 1);
    let mut got = Vec::new();
    for f in &files {
        let (recs, err) = read_all(f, usize::MAX);
        assert!(err.is_none(), "{err:?}");
        assert_eq!(recs[0].record_type(), Some("warcinfo"));
        for pair in recs[1..].chunks(2) {
            let i: usize = pair[1].target_uri().unwrap()[19..].parse().unwrap();
            assert_eq!(
                &pair[1].block[RESPONSE.len()..],
                &page(2000 + i, i as u64)[..]
            );
            assert_eq!(
                pair[0].header("WARC-Concurrent-To"),
                pair[1].header("WARC-Record-ID")
            );
            got.push(i);
        }
    }
    assert_eq!(got, order);
    assert_eq!(got.len(), 40);
}

#[test]
fn recover_refuses_to_cut_damage_in_the_middle() {
    let dir = TempDir::new("middle");
    let (path, ends) = small_file(dir.path());
    let mut bytes = std::fs::read(&path).unwrap();
    // Damage the first response record; the second exchange is intact.
    let at = ((ends[1] + ends[2]) / 2) as usize;
    bytes[at] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();
    match recover(&path) {
        Err(WarcError::Malformed { offset, reason, .. }) => {
            assert_eq!(offset, ends[1]);
            assert!(reason.contains(&format!("offset {}", ends[2])), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "the file was changed");
    // Reading from the next good record on works.
    let mut r = WarcReader::open_at(&path, ends[2], usize::MAX).unwrap();
    let mut rec = WarcRecord::default();
    assert!(r.read_next(&mut rec).unwrap());
    assert_eq!((rec.offset, rec.record_type()), (ends[2], Some("request")));
    assert_eq!(rec.target_uri(), Some("http://example.com/2"));
    assert!(r.read_next(&mut rec).unwrap());
    assert!(!r.read_next(&mut rec).unwrap());
}

#[test]
fn every_flipped_bit_is_caught_in_the_record_it_hits() {
    let dir = TempDir::new("flips");
    let (path, ends) = small_file(dir.path());
    let good = std::fs::read(&path).unwrap();
    let (orig, _) = read_all(&path, usize::MAX);
    let p = dir.join("flipped.warc.gz");
    std::fs::write(&p, &good).unwrap();
    // Flip in place: rewriting the whole file each time is much slower.
    let file = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    let put = |at: usize, b: u8| {
        std::os::unix::fs::FileExt::write_all_at(&file, &[b], at as u64).unwrap()
    };
    let same = |a: &WarcRecord, b: &WarcRecord| {
        (a.offset, a.length, &a.headers, &a.block) == (b.offset, b.length, &b.headers, &b.block)
    };
    for (at, &byte) in good.iter().enumerate() {
        // The member holding byte `at` and where it starts.
        let hit = ends.iter().position(|&e| at < e as usize).unwrap();
        let start = if hit == 0 { 0 } else { ends[hit - 1] };
        for bit in [0x01u8, 0x80] {
            put(at, byte ^ bit);
            let (recs, err) = read_all(&p, usize::MAX);
            put(at, byte);
            match err {
                // Bytes no check covers (gzip MTIME, XFL, OS, padding bits
                // of the last deflate byte) change nothing that is read.
                None => {
                    assert_eq!(recs.len(), orig.len(), "byte {at} ^ {bit:#x}");
                    assert!(recs.iter().zip(&orig).all(|(a, b)| same(a, b)));
                }
                Some(WarcError::Malformed { offset, .. } | WarcError::Truncated { offset, .. }) => {
                    assert_eq!(offset, start, "byte {at} ^ {bit:#x}: reported elsewhere");
                    assert_eq!(recs.len(), hit, "byte {at} ^ {bit:#x}");
                    assert!(recs.iter().zip(&orig).all(|(a, b)| same(a, b)));
                }
                Some(e) => panic!("byte {at} ^ {bit:#x}: {e}"),
            }
        }
    }
}

/// An uncompressed WARC record (the tail after the block is `tail`).
fn plain_record(uri: &str, body: &[u8], declared: usize, tail: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "WARC/1.0\r\nWARC-Type: resource\r\nWARC-Target-URI: {uri}\r\n\
         Content-Type: text/html\r\nContent-Length: {declared}\r\n\r\n"
    )
    .into_bytes();
    r.extend_from_slice(body);
    r.extend_from_slice(tail);
    r
}

/// `n` records, each in its own gzip member; the members' offsets, and
/// the file's length last.
fn members(dir: &Path, n: usize) -> (PathBuf, Vec<u64>) {
    let mut bytes = Vec::new();
    let mut starts = Vec::new();
    for i in 0..n {
        starts.push(bytes.len() as u64);
        let body = page(300 + i * 50, i as u64);
        let rec = plain_record(
            &format!("http://a.test/{i}"),
            &body,
            body.len(),
            b"\r\n\r\n",
        );
        bytes.extend(gz(&rec));
    }
    starts.push(bytes.len() as u64);
    let path = dir.join("members.warc.gz");
    std::fs::write(&path, &bytes).unwrap();
    (path, starts)
}

fn uris(recs: &[WarcRecord]) -> Vec<String> {
    recs.iter()
        .map(|r| r.target_uri().unwrap_or_default().to_string())
        .collect()
}

fn damaged(e: &WarcError) -> (u64, Option<u64>, u64) {
    match e {
        WarcError::Damaged {
            offset,
            resumed_at,
            skipped,
            ..
        } => (*offset, *resumed_at, *skipped),
        other => panic!("not Damaged: {other}"),
    }
}

#[test]
fn a_flipped_byte_costs_one_record() {
    let dir = TempDir::new("resync-flip");
    let n = 6;
    let (path, starts) = members(dir.path(), n);
    let good = std::fs::read(&path).unwrap();
    let p = dir.join("flipped.warc.gz");
    for k in 0..n {
        // A byte in the middle of member k's deflate data.
        let at = ((starts[k] + starts[k + 1]) / 2) as usize;
        for bit in [0x01u8, 0x10, 0x80] {
            let mut bytes = good.clone();
            bytes[at] ^= bit;
            std::fs::write(&p, &bytes).unwrap();
            let (recs, damage) = read_resyncing(&p, usize::MAX);
            let want: Vec<String> = (0..n)
                .filter(|&i| i != k)
                .map(|i| format!("http://a.test/{i}"))
                .collect();
            assert_eq!(uris(&recs), want, "member {k} ^ {bit:#x}");
            assert_eq!(damage.len(), 1, "member {k} ^ {bit:#x}: {damage:?}");
            let (offset, resumed, skipped) = damaged(&damage[0]);
            assert_eq!(offset, starts[k]);
            let next = (k + 1 < n).then(|| starts[k + 1]);
            assert_eq!(resumed, next, "member {k} ^ {bit:#x}");
            assert_eq!(skipped, starts[k + 1] - starts[k]);
            let msg = damage[0].to_string();
            assert!(msg.contains("flipped.warc.gz") && msg.contains(&format!("offset {offset}")));
            // The records after the damage keep their offsets.
            for r in &recs {
                let i: usize = r.target_uri().unwrap()[14..].parse().unwrap();
                assert_eq!((r.offset, r.length), (starts[i], starts[i + 1] - starts[i]));
            }
        }
    }
}

#[test]
fn garbage_between_members_is_skipped() {
    let dir = TempDir::new("resync-garbage");
    let (path, starts) = members(dir.path(), 3);
    let good = std::fs::read(&path).unwrap();
    let junk: [&[u8]; 3] = [
        b"not gzip at all\n",
        &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 0xde, 0xad],
        &[0u8; 5000],
    ];
    for (j, junk) in junk.iter().enumerate() {
        let cut = starts[1] as usize;
        let bytes = [&good[..cut], junk, &good[cut..]].concat();
        let p = dir.join("g.warc.gz");
        std::fs::write(&p, &bytes).unwrap();
        let (recs, damage) = read_resyncing(&p, usize::MAX);
        assert_eq!(recs.len(), 3, "junk {j}: {damage:?}");
        assert_eq!(damage.len(), 1, "junk {j}");
        assert_eq!(
            damaged(&damage[0]),
            (
                starts[1],
                Some(starts[1] + junk.len() as u64),
                junk.len() as u64
            ),
            "junk {j}"
        );
        assert_eq!(recs[1].offset, starts[1] + junk.len() as u64);
    }
}

#[test]
fn uncompressed_files_and_their_damage() {
    let dir = TempDir::new("resync-plain");
    let recs: Vec<Vec<u8>> = (0..4)
        .map(|i| {
            let body = page(200 + i * 10, i as u64);
            plain_record(
                &format!("http://a.test/{i}"),
                &body,
                body.len(),
                b"\r\n\r\n",
            )
        })
        .collect();
    let p = dir.join("plain.warc");
    std::fs::write(&p, recs.concat()).unwrap();
    let (got, damage) = read_resyncing(&p, usize::MAX);
    assert!(damage.is_empty(), "{damage:?}");
    assert_eq!(got.len(), 4);
    let mut off = 0;
    for (r, raw) in got.iter().zip(&recs) {
        assert_eq!((r.offset, r.length), (off, raw.len() as u64));
        off += raw.len() as u64;
    }
    // The strict reader reads it too.
    assert_eq!(read_all(&p, usize::MAX).0.len(), 4);

    // Garbage between records, and a block shorter than its Content-Length
    // (which swallows the start of the next record).
    let body = b"<a href=x>short</a>";
    let short = plain_record("http://a.test/short", body, body.len() + 40, b"\r\n\r\n");
    let bytes = [
        &recs[0][..],
        b"garbage line\r\n",
        &recs[1],
        &short,
        &recs[2],
        &recs[3],
    ]
    .concat();
    std::fs::write(&p, &bytes).unwrap();
    let (got, damage) = read_resyncing(&p, usize::MAX);
    let want: Vec<String> = (0..4).map(|i| format!("http://a.test/{i}")).collect();
    assert_eq!(uris(&got), want, "{damage:?}");
    assert_eq!(damage.len(), 2, "{damage:?}");
    let start2 = (recs[0].len() + 14 + recs[1].len()) as u64;
    let (offset, resumed, _) = damaged(&damage[1]);
    assert_eq!(
        (offset, resumed),
        (start2, Some(start2 + short.len() as u64))
    );
    // A torn last record is a truncated file, as in gzip.
    std::fs::write(&p, &bytes[..bytes.len() - 30]).unwrap();
    let (got, damage) = read_resyncing(&p, usize::MAX);
    assert_eq!(got.len(), 3);
    assert!(
        matches!(damage[..], [_, _, WarcError::Truncated { .. }]),
        "{damage:?}"
    );
}

#[test]
fn records_sharing_one_gzip_member() {
    let dir = TempDir::new("resync-whole");
    let rec = |i: usize, declared: Option<usize>| {
        let body = page(500 + i, i as u64);
        plain_record(
            &format!("http://a.test/{i}"),
            &body,
            declared.unwrap_or(body.len()),
            b"\r\n\r\n",
        )
    };
    // The whole file in one member, large enough to need many reads.
    let all: Vec<u8> = (0..400).flat_map(|i| rec(i, None)).collect();
    let p = dir.join("whole.warc.gz");
    std::fs::write(&p, gz(&all)).unwrap();
    let (got, damage) = read_resyncing(&p, usize::MAX);
    assert!(damage.is_empty(), "{damage:?}");
    assert_eq!(got.len(), 400);
    assert_eq!(got[0].offset, 0);
    assert_eq!(got[399].target_uri(), Some("http://a.test/399"));
    assert_eq!(&got[7].block[..], &page(507, 7)[..]);
    let (strict, err) = read_all(&p, usize::MAX);
    assert!(err.is_none() && strict.len() == 400);

    // A wrong Content-Length inside it: that record only is lost.
    for declared in [10, 2000] {
        let bytes: Vec<u8> = (0..50)
            .flat_map(|i| rec(i, (i == 20).then_some(declared)))
            .collect();
        std::fs::write(&p, gz(&bytes)).unwrap();
        let (got, damage) = read_resyncing(&p, usize::MAX);
        let want: Vec<String> = (0..50)
            .filter(|&i| i != 20)
            .map(|i| format!("http://a.test/{i}"))
            .collect();
        assert_eq!(uris(&got), want, "Content-Length {declared}");
        assert_eq!(damage.len(), 1, "{damage:?}");
    }
    // Several members of several records each (`cat a.warc.gz b.warc.gz`).
    let half: usize = (0..200).map(|i| rec(i, None).len()).sum();
    let two = [gz(&all[..half]), gz(&all[half..])].concat();
    std::fs::write(&p, two).unwrap();
    let (got, damage) = read_resyncing(&p, usize::MAX);
    assert!(damage.is_empty(), "{damage:?}");
    assert_eq!(got.len(), 400);
}

#[test]
fn a_block_shorter_than_declared_in_its_own_member() {
    let dir = TempDir::new("resync-short");
    let (path, starts) = members(dir.path(), 3);
    let good = std::fs::read(&path).unwrap();
    let body = b"hello";
    let short = gz(&plain_record("http://a.test/short", body, 99, b"\r\n\r\n"));
    let cut = starts[1] as usize;
    let p = dir.join("short.warc.gz");
    std::fs::write(&p, [&good[..cut], &short, &good[cut..]].concat()).unwrap();
    let (got, damage) = read_resyncing(&p, usize::MAX);
    assert_eq!(got.len(), 3, "{damage:?}");
    assert_eq!(damage.len(), 1);
    let (offset, resumed, _) = damaged(&damage[0]);
    assert_eq!(
        (offset, resumed),
        (starts[1], Some(starts[1] + short.len() as u64))
    );
    assert!(damage[0].to_string().contains("Content-Length says 99"));
}

#[test]
fn target_uri_in_angle_brackets() {
    let mut rec = WarcRecord::default();
    for (raw, want) in [
        ("<http://a.test/x>", "http://a.test/x"),
        ("http://a.test/y", "http://a.test/y"),
        ("<http://a.test/z", "<http://a.test/z"),
    ] {
        rec.headers = vec![("WARC-Target-URI".into(), raw.into())];
        assert_eq!(rec.target_uri(), Some(want));
    }
}

#[test]
fn metadata_records_and_the_index_written_when_a_file_closes() {
    let dir = TempDir::new("meta-index");
    let mut w = WarcWriter::new(config(dir.path(), 9_000)).unwrap();
    let mut meta = WarcFields::new();
    meta.push("hopsFromSeed", "L");
    meta.push("fetchTimeMs", "12");
    meta.push_parts("outlink", &["http://example.com/b", " L ", "a/@href"]);
    for i in 0..6 {
        let url = format!("http://example.com/p{i}");
        let body = page(3000, i);
        let mut ex = exchange(&url, &body, &[]);
        ex.metadata = Some(&meta);
        ex.protocols = &["tls/1.3", "http/1.1"];
        ex.cipher_suite = Some("TLS_AES_128_GCM_SHA256");
        if i == 3 {
            let revisit = Revisit {
                profile: RevisitProfile::ServerNotModified,
                refers_to: Some("<urn:uuid:12345678-1234-4234-8234-123456789abc>".into()),
                refers_to_date: Some(date()),
            };
            w.write_revisit(&ex, &revisit).unwrap();
        } else {
            w.write_exchange(&ex).unwrap();
        }
    }
    let closed_early = w.take_closed();
    let files = w.finish().unwrap();
    assert!(files.len() > 1, "the size limit rolls files over");
    assert!(
        !closed_early.is_empty(),
        "a file rolled over is closed at once"
    );
    for f in &files {
        let (recs, err) = read_all(f, usize::MAX);
        assert!(err.is_none(), "{err:?}");
        for triple in recs[1..].chunks(3) {
            let (req, resp, meta) = (&triple[0], &triple[1], &triple[2]);
            assert_eq!(req.record_type(), Some("request"));
            assert_eq!(meta.record_type(), Some("metadata"));
            assert_eq!(
                meta.header("WARC-Concurrent-To"),
                resp.header("WARC-Record-ID")
            );
            assert_eq!(meta.header("Content-Type"), Some("application/warc-fields"));
            assert_eq!(
                String::from_utf8_lossy(&meta.block),
                "hopsFromSeed: L\r\nfetchTimeMs: 12\r\noutlink: http://example.com/b L a/@href\r\n"
            );
            let protocols: Vec<_> = resp
                .headers
                .iter()
                .filter(|(n, _)| n == "WARC-Protocol")
                .map(|(_, v)| v.as_str())
                .collect();
            assert_eq!(protocols, ["tls/1.3", "http/1.1"]);
            assert_eq!(
                resp.header("WARC-Cipher-Suite"),
                Some("TLS_AES_128_GCM_SHA256")
            );
            if resp.record_type() == Some("revisit") {
                assert_eq!(
                    resp.header("WARC-Refers-To"),
                    Some("<urn:uuid:12345678-1234-4234-8234-123456789abc>")
                );
                assert_eq!(
                    resp.header("WARC-Refers-To-Date"),
                    Some("2026-11-23T04:27:02.123Z")
                );
            }
        }
        // The index written at close is the one read back from the file.
        let index = crate::warc::cdxj::index_path(f);
        let written = std::fs::read_to_string(&index).unwrap();
        let read_back = crate::warc::cdxj::index_warc(f).unwrap();
        assert_eq!(written.lines().collect::<Vec<_>>(), read_back);
        assert_eq!(read_back.len(), (recs.len() - 1) / 3);
    }
}
