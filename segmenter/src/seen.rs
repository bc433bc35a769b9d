//! Dedup against `seen.bloom`, the Bloom filter of every URL ever scheduled.
//!
//! A round never writes the live filter: it copies `CRAWL/seen.bloom` into
//! the staging directory (or creates a new one there, sized by
//! `--bloom-items`/`--bloom-fp`), inserts into the copy, and the commit
//! renames the copy into place with the segments.
//!
//! The scan workers drop every found URL the filter already holds, before
//! it costs anything in the sort; re-entering URLs (leftover, retry,
//! backlog) skip that check. Nothing is inserted during the scan, so the
//! check does not depend on thread timing. Every URL that comes out of the
//! merge is then scheduled, into a segment *or* the backlog, and inserted:
//! nothing waiting is lost and nothing is scheduled twice.

use std::path::{Path, PathBuf};

use common::bloom::{BloomFilter, BloomHash, BloomParams};

use crate::error::{BLOOM_REPAIR, Error};
use crate::report::BloomState;

/// The staged copy of `seen.bloom`.
pub struct Seen {
    bloom: BloomFilter,
    path: PathBuf,
}

/// How the staged filter came to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Copied from the crawl's existing filter.
    Copied,
    /// Created empty with the configured parameters.
    Created,
}

impl Seen {
    /// Copies `live` to `staged` (or creates `staged` when `live` does not
    /// exist) and opens it for writing.
    pub fn stage(live: &Path, staged: &Path, items: u64, fp: f64) -> Result<(Seen, Origin), Error> {
        let origin = if live.exists() {
            // Checked where it is, so that an error names the crawl's file.
            drop(BloomFilter::open_read_only(live).map_err(Error::damaged(BLOOM_REPAIR))?);
            std::fs::copy(live, staged).map_err(Error::io(staged))?;
            Origin::Copied
        } else {
            let params = BloomParams::optimal(items, fp)?;
            BloomFilter::create(staged, params)?;
            Origin::Created
        };
        let bloom = BloomFilter::open(staged)?;
        Ok((
            Seen {
                bloom,
                path: staged.to_path_buf(),
            },
            origin,
        ))
    }

    /// The filter's parameters.
    pub fn params(&self) -> BloomParams {
        self.bloom.params()
    }

    /// True if nothing was ever inserted.
    pub fn is_empty(&self) -> bool {
        self.bloom.items() == 0
    }

    /// True if the URL with this hash was (probably) scheduled before.
    /// Only reads, so the scan workers call it in parallel.
    pub fn contains(&self, hash: BloomHash) -> bool {
        self.bloom.contains_hash(hash)
    }

    /// Records a URL as scheduled (from one thread, in output order, so
    /// that the file is the same on every run).
    pub fn insert(&self, hash: BloomHash) {
        self.bloom.insert_hash(hash);
    }

    /// Writes the filter to disk (its pages and header).
    pub fn flush(&self) -> Result<(), Error> {
        self.bloom.flush()?;
        Ok(())
    }

    /// Fill, estimated false-positive rate and size, for the report.
    pub fn state(&self) -> BloomState {
        let p = self.bloom.params();
        BloomState {
            items: self.bloom.items(),
            expected_items: p.expected_items,
            fill: self.bloom.fill_ratio(),
            fp_rate: self.bloom.estimated_fp_rate(),
            target_fp_rate: p.target_fp_rate,
            bits_per_item: self.bloom.bits_per_item(),
            bytes: std::fs::metadata(&self.path).map_or(0, |m| m.len()),
        }
    }
}
