//! WARC files made to hurt the reader: members that inflate to a gigabyte,
//! records that claim a block of a hundred gigabytes, gzip that is not a
//! WARC record. The reader must keep at most `max_block` bytes of a block
//! and give a clear error, never allocate what a file claims.
//!
//! The binary's allocator ([`crate::watch_alloc`]), which records the
//! largest single allocation made by the test's own thread, checks the
//! memory side.

use std::io::Write;

use common::testutil::{TempDir, read_all};
use common::warc::WarcError;
use flate2::{Compress, Compression, Crc, FlushCompress};

use crate::watch_alloc::largest_allocation;

/// Checks that reading stopped at the first member with a reason
/// containing `want`.
fn assert_malformed_at_start(err: Option<WarcError>, want: &str) {
    match err {
        Some(WarcError::Malformed {
            offset: 0, reason, ..
        }) => assert!(reason.contains(want), "{reason}"),
        other => panic!("expected Malformed at offset 0 ({want}), got {other:?}"),
    }
}

/// One gzip member holding `head`, then `zeros` zero bytes, then `tail`,
/// built without ever holding the zeros: a full flush makes each megabyte
/// of zeros compress to the same bytes, which are repeated, and the CRCs
/// of the pieces are combined.
fn member(head: &[u8], zeros: u64, tail: &[u8]) -> Vec<u8> {
    const MIB: usize = 1 << 20;
    assert_eq!(zeros % MIB as u64, 0);
    let mut z = Compress::new(Compression::best(), false);
    let mut deflate = |input: &[u8], flush| {
        let mut out = Vec::with_capacity(input.len() + 1024);
        let before = z.total_in();
        z.compress_vec(input, &mut out, flush).unwrap();
        assert_eq!(z.total_in() - before, input.len() as u64);
        out
    };
    let mut bytes = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    bytes.extend(deflate(head, FlushCompress::Full));
    let zero_chunk = vec![0u8; MIB];
    let first = deflate(&zero_chunk, FlushCompress::Full);
    let again = deflate(&zero_chunk, FlushCompress::Full);
    assert_eq!(first, again, "a full flush makes the chunks alike");
    let chunks = zeros / MIB as u64;
    if chunks > 0 {
        bytes.extend(&first);
        for _ in 1..chunks {
            bytes.extend(&again);
        }
    }
    bytes.extend(deflate(tail, FlushCompress::Finish));

    let mut crc = Crc::new();
    crc.update(head);
    let mut zero_crc = Crc::new();
    zero_crc.update(&zero_chunk);
    for _ in 0..chunks {
        crc.combine(&zero_crc);
    }
    let mut tail_crc = Crc::new();
    tail_crc.update(tail);
    crc.combine(&tail_crc);
    bytes.extend(crc.sum().to_le_bytes());
    bytes.extend(crc.amount().to_le_bytes());
    bytes
}

fn warc_head(content_length: u64) -> Vec<u8> {
    format!(
        "WARC/1.1\r\nWARC-Type: resource\r\nWARC-Target-URI: http://bomb.test/\r\n\
         Content-Length: {content_length}\r\n\r\n"
    )
    .into_bytes()
}

/// A small, ordinary record to follow the nasty one.
fn small_record() -> Vec<u8> {
    member(
        b"WARC/1.1\r\nWARC-Type: resource\r\nWARC-Target-URI: http://after.test/\r\n\
          Content-Length: 5\r\n\r\nhello",
        0,
        b"\r\n\r\n",
    )
}

const GIB: u64 = 1 << 30;
const MAX_BLOCK: usize = 1 << 20;

#[test]
fn a_member_inflating_to_a_gigabyte_keeps_only_max_block_in_memory() {
    let dir = TempDir::new("bomb-gib");
    let mut file = member(&warc_head(GIB), GIB, b"\r\n\r\n");
    let bomb_len = file.len() as u64;
    file.extend(small_record());
    assert!(file.len() < 4 << 20, "{} compressed bytes", file.len());
    let path = dir.write("bomb.warc.gz", &file);

    let ((recs, err), largest) = largest_allocation(|| read_all(&path, MAX_BLOCK));
    assert!(err.is_none(), "{err:?}");
    assert_eq!(recs.len(), 2);
    assert_eq!(recs[0].block.len(), MAX_BLOCK);
    assert!(recs[0].block_cut);
    assert_eq!(recs[0].length, bomb_len);
    assert_eq!(recs[1].offset, bomb_len);
    assert_eq!(recs[1].block, b"hello");
    assert!(
        largest <= 2 * MAX_BLOCK,
        "largest allocation {largest} bytes for a {MAX_BLOCK}-byte block limit"
    );
}

#[test]
fn a_record_claiming_a_hundred_gigabytes_allocates_nothing_of_it() {
    let dir = TempDir::new("bomb-claim");
    let mut file = member(&warc_head(99_999_999_999), 0, b"short block\r\n\r\n");
    file.extend(small_record());
    let path = dir.write("claim.warc.gz", &file);
    let ((recs, err), largest) = largest_allocation(|| read_all(&path, usize::MAX));
    assert!(recs.is_empty());
    assert_malformed_at_start(err, "99999999999");
    assert!(
        largest < 2 * MAX_BLOCK,
        "largest allocation {largest} bytes"
    );
}

#[test]
fn gzip_that_is_not_warc_is_refused_at_its_first_bytes() {
    let dir = TempDir::new("bomb-notwarc");
    // A gigabyte of zeros, gzipped, as a stray .gz file would be.
    let path = dir.write("zeros.warc.gz", member(b"", GIB, b""));
    let ((recs, err), largest) = largest_allocation(|| read_all(&path, MAX_BLOCK));
    assert!(recs.is_empty());
    assert_malformed_at_start(err, "not WARC/1.x");
    assert!(
        largest < 2 * MAX_BLOCK,
        "largest allocation {largest} bytes"
    );

    // An ordinary gzipped text file: the message shows its start.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), Compression::fast());
    gz.write_all(b"2026-11-23 12:00:00 INFO started\n").unwrap();
    let path = dir.write("log.warc.gz", gz.finish().unwrap());
    let (_, err) = read_all(&path, MAX_BLOCK);
    let msg = err.unwrap().to_string();
    assert!(
        msg.contains("log.warc.gz") && msg.contains("2026-11-23 12:00:00"),
        "{msg}"
    );
}

#[test]
fn data_after_the_block_stops_the_reader_at_once() {
    // A record followed, inside its member, by a gigabyte of zeros. The
    // file is cut before the member's end: a reader that inflated the rest
    // first would only notice the cut ("truncated"); one that stops at the
    // stray bytes names them.
    let dir = TempDir::new("bomb-tail");
    let mut head = warc_head(5);
    head.extend_from_slice(b"hello\r\n\r\nstray");
    let file = member(&head, GIB, b"");
    let path = dir.write("tail.warc.gz", &file[..file.len() - 100]);
    let ((recs, err), largest) = largest_allocation(|| read_all(&path, MAX_BLOCK));
    assert!(recs.is_empty());
    assert_malformed_at_start(err, "no record after the 5-byte block");
    assert!(
        largest < 2 * MAX_BLOCK,
        "largest allocation {largest} bytes"
    );
}
