//! What the fetcher and the segmenter share: the crawl directory layout and
//! every file format one program writes and the other reads.
//!
//! - [`urlnorm`]: the one canonical form of a URL (dedup key and fetched URL),
//!   queue keys and registrable domains.
//! - [`filter`]: scope, length and crawler-trap rules applied to candidate URLs.
//! - [`segment`]: zstd-compressed, tab-separated lists of URLs to fetch.
//! - [`warc`]: WARC 1.1 writer and reader, one gzip member per record.
//! - [`http`]: parsing the HTTP message stored in a WARC record.
//! - [`crawllog`]: one line per URL the fetcher attempted.
//! - [`bloom`]: a Bloom filter living in a memory-mapped file (`seen.bloom`).
//! - [`hoststate`]: per-host state kept across runs in SQLite (`hosts.db`).
//! - [`atomic`]: write-to-temporary, fsync, rename: how every shared file is written.
//! - [`crawldir`]: paths inside a crawl directory.
//! - [`config`]: `crawl.toml` and the value parsers both command lines use.
//! - [`timefmt`]: ISO 8601 / WARC timestamps without a calendar dependency.
//!
//! ```
//! let url = common::urlnorm::canonicalize("HTTP://Example.COM:80/a/./b/../c?#x").unwrap();
//! assert_eq!(url.as_str(), "http://example.com/a/c");
//! ```
#![deny(missing_docs)]

pub mod atomic;
pub mod bloom;
pub mod config;
pub mod crawldir;
pub mod crawllog;
pub mod filter;
pub mod hoststate;
pub mod http;
pub mod segment;
pub mod timefmt;
pub mod urlnorm;
pub mod warc;

#[cfg(test)]
mod testutil;

/// A decimal number written as ASCII digits only: no sign, no spaces, not
/// empty, no overflow. The number parser of every text format here, so
/// that each field reads back exactly what its writer wrote.
pub(crate) fn parse_digits(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |n, &d| {
        if !d.is_ascii_digit() {
            return None;
        }
        n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
    })
}
