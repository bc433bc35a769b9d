//! Both WARC formats the fetcher has written are read: format 1 stored
//! bodies decoded, their coding headers renamed `X-Crawler-*`; format 2
//! stores them as received, coded, which the scan decodes before reading
//! links. A body that cannot be decoded is reported, and read as it is.

use crate::support;

use std::collections::BTreeSet;

use support::*;
use testkit::gzip;

fn header(name: &str, value: &str) -> (String, String) {
    (name.to_string(), value.to_string())
}

#[test]
fn decoded_and_raw_records_give_the_same_links() {
    let crawl = TempCrawl::new("formats");
    inject(
        &crawl,
        "http://old.test/\nhttp://new.test/\nhttp://chunk.test/\nhttp://bad.test/\n",
        &[],
    );
    // Format 1: decoded, as the fetcher stored a gzip page before.
    let mut old = Page::html("http://old.test/", 0, &["/from-old"]);
    old.headers = vec![
        header("X-Crawler-Content-Encoding", "gzip"),
        header("X-Crawler-Transfer-Encoding", "chunked"),
    ];
    // Format 2: as received.
    let mut new = Page::html("http://new.test/", 0, &["/from-new"]);
    new.body = gzip(&new.body);
    new.headers = vec![header("Content-Encoding", "gzip")];
    let mut chunk = Page::html("http://chunk.test/", 0, &["/from-chunked"]);
    let body = gzip(&chunk.body);
    chunk.body = format!("{:x};x=1\r\n", body.len()).into_bytes();
    chunk.body.extend_from_slice(&body);
    chunk.body.extend_from_slice(b"\r\n0\r\nT: 1\r\n\r\n");
    chunk.headers = vec![
        header("Transfer-Encoding", "chunked"),
        header("Content-Encoding", "gzip"),
    ];
    // Labelled gzip, sent plain: read as it is, and reported.
    let mut bad = Page::html("http://bad.test/", 0, &["/from-bad"]);
    bad.headers = vec![header("Content-Encoding", "gzip")];
    write_done(&crawl, "00001", &[old, new, chunk, bad]);

    let report = run_round(&crawl, &[]);
    let got: BTreeSet<String> = urls(&segments(&crawl)["00002"]).into_iter().collect();
    let want: BTreeSet<String> = [
        "http://old.test/from-old",
        "http://new.test/from-new",
        "http://chunk.test/from-chunked",
        "http://bad.test/from-bad",
    ]
    .map(String::from)
    .into();
    assert_eq!(got, want, "{report}");
    assert_eq!(figure(&report, "bodies not decoded:"), 1, "{report}");
}
