//! The CDXJ index a WARC writer keeps for its open file costs the same
//! memory whatever the file's size: a file whose index is several times
//! [`cdxj::RUN_BYTES`] is written with no allocation larger than about
//! twice that bound (checked by the binary's allocator,
//! [`crate::watch_alloc`]), and its index is still every capture, sorted,
//! as reading the file back gives it.

use std::time::{Duration, UNIX_EPOCH};

use common::testutil::{Rng, TempDir};
use common::warc::{Exchange, WarcWriter, WarcWriterConfig, cdxj};

use crate::watch_alloc::largest_allocation;

/// Writes `pages` captures of long URLs, in an order unlike their sorted
/// one, to one WARC file in `dir`; returns the file and its index.
fn write_file(dir: &std::path::Path, pages: usize) -> (std::path::PathBuf, std::path::PathBuf) {
    let mut w = WarcWriter::new(WarcWriterConfig {
        dir: dir.to_path_buf(),
        prefix: "BIG".into(),
        max_file_size: u64::MAX,
        first_serial: 0,
        hostname: "box1".into(),
        info: vec![("software".into(), "crawler-test/0.1".into())],
    })
    .unwrap();
    let mut rng = Rng::new(7);
    let tail = "x".repeat(2_000);
    for i in 0..pages {
        let url = format!("http://h{}.example/{i}/{tail}", rng.below(1_000));
        let date = UNIX_EPOCH + Duration::from_secs(1_795_000_000 + i as u64);
        w.write_exchange(&Exchange {
            target_uri: &url,
            date,
            ip: None,
            request_head: b"GET / HTTP/1.1\r\nHost: example\r\n\r\n",
            response_head: b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n",
            payload: b"<p>hi</p>",
            truncated: None,
            extra_fields: &[],
            protocols: &["http/1.1"],
            cipher_suite: None,
            metadata: None,
        })
        .unwrap();
    }
    let closed = w.finish().unwrap();
    assert_eq!(closed.len(), 1, "one file");
    let warc = closed[0].clone();
    let index = cdxj::index_path(&warc);
    (warc, index)
}

#[test]
fn a_big_files_index_is_sorted_in_bounded_memory() {
    let dir = TempDir::new("warc-index");
    let pages = 5_000;
    let ((warc, index), largest) = largest_allocation(|| write_file(dir.path(), pages));
    let written = std::fs::read_to_string(&index).unwrap();
    assert!(
        written.len() > 4 * cdxj::RUN_BYTES,
        "the index ({} bytes) must outgrow the memory bound several times",
        written.len()
    );
    assert!(
        largest <= 2 * cdxj::RUN_BYTES + (1 << 20),
        "an allocation of {largest} bytes while writing an index of {} bytes",
        written.len()
    );
    let read_back = cdxj::index_warc(&warc).unwrap();
    assert_eq!(read_back.len(), pages);
    let lines: Vec<&str> = written.lines().collect();
    assert!(
        lines == read_back,
        "the index differs from the file read back"
    );
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 2, "only the WARC file and its index are left");
}
