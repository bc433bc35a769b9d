//! What the fetcher and the segmenter share: the crawl directory layout and
//! every file format one program writes and the other reads.
//!
//! One link on its way from a fetched page into the next segment: made
//! canonical, checked against the scope and the trap rules, deduplicated by
//! the Bloom filter, written to a segment and read back as the fetcher will.
//!
//! ```
//! use common::{bloom, config, crawldir::CrawlDir, filter, segment, urlnorm};
//! # let root = std::env::temp_dir().join(format!("common-doc-{}", std::process::id()));
//! let crawl = CrawlDir::create(&root)?;
//!
//! let page = url::Url::parse("https://www.example.com/news/")?;
//! let link = urlnorm::canonicalize_relative(&page, "../About%7eUs/./?sid=42#top")?;
//! assert_eq!(link.as_str(), "https://www.example.com/About~Us/");
//!
//! let mut scope = filter::Scope::default();
//! scope.domains.insert("example.com".into());
//! let rules = filter::UrlFilter { limits: config::FilterConfig::default(), scope };
//! rules.check(&link, 1).expect("in scope, no trap");
//!
//! let seen = bloom::BloomFilter::create(crawl.bloom_path(), bloom::BloomParams::optimal(1000, 0.01)?)?;
//! assert!(seen.insert(link.as_str().as_bytes()), "new, so it goes into the segment");
//!
//! let mut out = segment::SegmentWriter::create(crawl.segment_path("00002"))?;
//! out.write(&segment::SegmentRecord {
//!     host: urlnorm::host_of(&link).to_string(),
//!     url: link.to_string(),
//!     hops: 1,
//!     inlinks: 1,
//!     via: segment::Via::Link,
//!     ..Default::default() // tries 0, no not-before time, no validators
//! })?;
//! out.finish()?;
//! assert_eq!(crawl.pending_segments()?, ["00002"]);
//!
//! let mut input = segment::SegmentReader::open(crawl.segment_path("00002"))?;
//! let mut rec = segment::SegmentRecord::default();
//! assert!(input.read_next(&mut rec)?);
//! assert_eq!((rec.host.as_str(), rec.url.as_str()), ("www.example.com", link.as_str()));
//! # drop(seen);
//! # std::fs::remove_dir_all(&root)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! - [`urlnorm`]: the one canonical form of a URL (dedup key and fetched URL),
//!   hosts and registrable domains.
//! - [`filter`]: scope, length and crawler-trap rules applied to candidate URLs.
//! - [`segment`]: zstd-compressed, tab-separated lists of URLs to fetch.
//! - [`warc`]: WARC 1.1 writer and reader, one gzip member per record.
//! - [`http`]: parsing the HTTP message stored in a WARC record.
//! - [`extract`]: the links of an HTML page (read by the fetcher for its
//!   metadata records and by the segmenter for the next segment).
//! - [`crawllog`]: one line per URL the fetcher attempted.
//! - [`bloom`]: a Bloom filter living in a memory-mapped file (`seen.bloom`).
//! - [`hoststate`]: per-host state kept across runs in SQLite (`hosts.db`).
//! - [`sitemaps`]: the `Sitemap:` lines of a robots.txt.
//! - [`politeness`]: the delay between two requests to a host, used by the
//!   fetcher to schedule and by the segmenter to plan.
//! - [`atomic`]: write-to-temporary, fsync, rename: how every shared file is written.
//! - [`lock`]: advisory lock files that keep two processes off the same files.
//! - [`crawldir`]: paths inside a crawl directory.
//! - [`fetched`]: what a fetched run says about itself (`DONE`, `crawl.log`).
//! - [`rounds`]: the round journal (`rounds.v1.tsv`).
//! - [`rules`]: rules per host, domain, SURT prefix or network
//!   (`host-rules.toml`), read by both programs.
//! - [`config`]: `crawl.toml` and the value parsers both command lines use.
//! - [`disk`]: free disk space and the floor kept above it (`min_free_disk`).
//! - [`metrics`]: the crawl's figures for a monitoring system (Prometheus'
//!   text format, for node_exporter's textfile collector).
//! - [`store`]: the WARC store (`warc_store`): uploads to S3-compatible
//!   object storage, their manifest, reading uploaded files back.
//! - [`timefmt`]: ISO 8601 / WARC timestamps without a calendar dependency.
//! - [`exit`]: exit codes, error lines and stdout of both programs.
//! - [`runlog`]: every message for people: the log of one run, on stderr and in
//!   `CRAWL/logs/`.
//! - [`progress`]: the progress line of both programs (`--progress`).
//! - [`human`]: numbers and sizes as people read them.
#![deny(missing_docs)]

pub mod atomic;
pub mod bloom;
pub mod body;
pub mod config;
pub mod crawldir;
pub mod crawllog;
pub mod disk;
pub mod exit;
pub mod extract;
pub mod fetched;
pub mod filter;
pub mod hoststate;
pub mod http;
pub mod human;
pub mod listfile;
pub mod lock;
pub mod metrics;
pub mod politeness;
pub mod progress;
pub mod robots_txt;
pub mod rounds;
pub mod rules;
pub mod runlog;
pub mod segment;
pub mod shards;
pub mod sitemaps;
pub mod store;
pub mod timefmt;
pub mod urlnorm;
pub mod warc;

#[cfg(any(test, feature = "testutil"))]
pub mod testutil;

/// A decimal number written as ASCII digits only: no sign, no spaces, not
/// empty, no overflow. The number parser of every text format here, so
/// that each field reads back exactly what its writer wrote.
pub fn parse_digits(digits: &[u8]) -> Option<u64> {
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
