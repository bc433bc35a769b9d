//! Segments written for tests and benchmarks (one line per URL, found by a
//! link: one hop, one inlink, never tried, in the order given), and read
//! back.

use std::path::Path;

use common::segment::{SegmentReader, SegmentRecord, SegmentWriter, Via};

/// Writes the segment at `path` with one line per `(host, url)` (the host
/// is the line's queue key), in the order given; returns the line count.
/// Panics naming `path` if it cannot be written.
pub fn write_links(path: &Path, lines: impl IntoIterator<Item = (String, String)>) -> u64 {
    let mut w =
        SegmentWriter::create(path).unwrap_or_else(|e| panic!("segment {}: {e}", path.display()));
    for (host, url) in lines {
        w.write(&SegmentRecord {
            host,
            url,
            hops: 1,
            inlinks: 1,
            via: Via::Link,
            tries: 0,
            not_before: None,
            ..Default::default()
        })
        .unwrap_or_else(|e| panic!("segment {}: {e}", path.display()));
    }
    w.finish()
        .unwrap_or_else(|e| panic!("segment {}: {e}", path.display()))
}

/// The host of `url` (the queue key a segment gives it); panics on a URL
/// without one.
pub fn host_of(url: &str) -> String {
    url::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_else(|| panic!("{url}: not a URL with a host"))
}

/// Every record of the file in the segment format at `path` (a segment, a
/// leftover, the backlog), in its order. Panics naming `path` if it cannot
/// be read to its end.
pub fn read(path: &Path) -> Vec<SegmentRecord> {
    let fail =
        |e: common::segment::SegmentError| -> String { format!("segment {}: {e}", path.display()) };
    let mut r = SegmentReader::open(path).unwrap_or_else(|e| panic!("{}", fail(e)));
    let mut rec = SegmentRecord::default();
    let mut out = Vec::new();
    while r
        .read_next(&mut rec)
        .unwrap_or_else(|e| panic!("{}", fail(e)))
    {
        out.push(rec.clone());
    }
    out
}

/// The URLs of the segment file at `path`, in its order. Panics naming
/// `path` if it cannot be read to its end.
pub fn read_urls(path: &Path) -> Vec<String> {
    read(path).into_iter().map(|r| r.url).collect()
}
