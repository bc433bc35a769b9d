//! Bad input is reported with its file and offset, counted and skipped;
//! the round goes on and keeps everything that was readable.

use crate::support;

use std::fs;

use support::*;
use testkit::Rng;

const MB: u64 = 1 << 20;

#[test]
fn bad_input_is_reported_skipped_and_counted() {
    let crawl = TempCrawl::new("bad-input");
    inject(&crawl, "http://a.test/\n", &[]);

    // Run 00001: a good page, binary content labelled HTML, a 50 MB page.
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    png.extend((0..4000u32).map(|i| (i * 7919 % 251) as u8));
    let png_page = Page {
        body: png,
        ..Page::html("http://a.test/image", 0, &[])
    };
    let mut huge = b"<!DOCTYPE html><html><body>".to_vec();
    while huge.len() < 50 * MB as usize {
        huge.extend_from_slice(b"<p><a href=\"/from-huge\">a link in a huge page</a></p>\n");
    }
    let huge_page = Page {
        body: huge,
        ..Page::html("http://a.test/huge", 0, &[])
    };
    let files = write_fetched(
        &crawl,
        "00001",
        &[
            Page::html("http://a.test/", 0, &["/good"]),
            png_page,
            huge_page,
        ],
        1 << 30,
        true,
    );
    let good_file = files[0].display().to_string();

    // Run 00002: a file whose last record is cut short.
    let files = write_done(
        &crawl,
        "00002",
        &[
            Page::html("http://a.test/t", 0, &["/t1"]),
            Page::html("http://a.test/u", 0, &["/t2"]),
            Page::html("http://a.test/v", 0, &["/t3"]),
        ],
    );
    let truncated = &files[0];
    let len = fs::metadata(truncated).unwrap().len();
    let f = fs::OpenOptions::new().write(true).open(truncated).unwrap();
    f.set_len(len - 60).unwrap();
    drop(f);

    // Run 00003: binary garbage named like a WARC file.
    let dir = crawl.dir.fetched_dir("00003");
    fs::create_dir_all(&dir).unwrap();
    let mut rng = Rng::new(3);
    let garbage: Vec<u8> = (0..100_000).map(|_| rng.next_u64() as u8).collect();
    let garbage_path = dir.join("garbage.warc.gz");
    fs::write(&garbage_path, garbage).unwrap();
    fs::write(dir.join("DONE"), b"").unwrap();

    let report = run_round(&crawl, &[]);
    let seg = read_records(&crawl.dir.segment_path("00004"));
    assert_eq!(
        urls(&seg),
        ["http://a.test/good", "http://a.test/t1", "http://a.test/t2"],
        "{report}"
    );

    let bad = report
        .lines()
        .find(|l| l.starts_with("bad input:"))
        .unwrap();
    assert!(bad.contains("truncated files 1"), "{bad}");
    assert!(bad.contains("unreadable files 1"), "{bad}");
    assert!(bad.contains("too large 1"), "{bad}");
    assert!(bad.contains("not html 1"), "{bad}");

    // Each problem names its file and where in it.
    let lines: Vec<&str> = report.lines().collect();
    let mentions = |path: &str, what: &str| {
        lines
            .iter()
            .any(|l| l.contains(path) && l.contains("offset") && l.contains(what))
    };
    assert!(mentions(&good_file, "http://a.test/huge"), "{report}");
    assert!(mentions(&good_file, "http://a.test/image"), "{report}");
    assert!(
        mentions(&truncated.display().to_string(), "truncated"),
        "{report}"
    );
    assert!(
        mentions(&garbage_path.display().to_string(), "offset 0"),
        "{report}"
    );
    assert_eq!(
        list_entries(&crawl.dir.consumed_path()),
        "00001\n00002\n00003\n"
    );
}
