//! Segment IDs and partitions.
//!
//! A round takes the next free number `R` (one more than any number used by
//! a segment, a fetched run or `consumed.txt`). Its URLs go to segment `R`;
//! when they exceed `--max-segment-size`, the rest go to `R+1`, `R+2`, ...
//! With `--partitions N` every URL goes to partition `xxh3_64(host) mod N`
//! (XXH3 is a fixed, published hash, so a host stays in the same partition
//! across rounds, machines and Rust versions), and the IDs carry the
//! partition: `00002-p01` ... `00002-p04` (1-based, two digits or more).

use std::io;

use common::crawldir::CrawlDir;

/// The partition (0-based) of `host` among `n`.
pub fn partition_of(host: &str, n: u32) -> u32 {
    if n <= 1 {
        return 0;
    }
    (xxhash_rust::xxh3::xxh3_64(host.as_bytes()) % u64::from(n)) as u32
}

/// The segment ID of round number `number`, partition `part` (0-based) of `n`.
pub fn segment_id(number: u32, part: u32, n: u32) -> String {
    if n <= 1 {
        format!("{number:05}")
    } else {
        format!("{number:05}-p{:02}", part + 1)
    }
}

/// The number at the start of an ID (`00002-p01` → 2).
pub fn number_of(id: &str) -> Option<u32> {
    let digits: &str = id.split('-').next()?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The first number not used by a segment, a fetched run or an entry of
/// `consumed`.
pub fn next_number(crawl: &CrawlDir, consumed: &[String]) -> io::Result<u32> {
    let mut max = 0;
    for id in crawl.segment_ids()? {
        max = max.max(number_of(&id).unwrap_or(0));
    }
    match std::fs::read_dir(crawl.fetched_root()) {
        Ok(rd) => {
            for entry in rd {
                let entry = entry?;
                if let Some(n) = entry.file_name().to_str().and_then(number_of) {
                    max = max.max(n);
                }
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    for id in consumed {
        max = max.max(number_of(id).unwrap_or(0));
    }
    Ok(max + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids() {
        assert_eq!(segment_id(2, 0, 1), "00002");
        assert_eq!(segment_id(2, 0, 4), "00002-p01");
        assert_eq!(segment_id(123_456, 11, 12), "123456-p12");
        assert_eq!(number_of("00002-p01"), Some(2));
        assert_eq!(number_of("00017"), Some(17));
        assert_eq!(number_of("tmp"), None);
    }

    #[test]
    fn partitions_are_stable_and_spread() {
        // The hash is part of the contract: these values must not change.
        assert_eq!(partition_of("example.com", 1), 0);
        assert_eq!(partition_of("example.com", 8), 3);
        assert_eq!(partition_of("a.test", 8), 2);
        let mut counts = [0u32; 4];
        for i in 0..4000 {
            counts[partition_of(&format!("host{i}.test"), 4) as usize] += 1;
        }
        assert!(counts.iter().all(|&c| c > 800), "{counts:?}");
    }
}
