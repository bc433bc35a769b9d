//! Dedup against `seen.bloom`, the Bloom filter of every URL ever scheduled.
//!
//! A round never writes the live filter: it copies `CRAWL/seen.bloom` into
//! the staging directory (or creates a new one there, sized by
//! `--bloom-items`/`--bloom-fp`), inserts into the copy, and the commit
//! renames the copy into place with the segments. A URL is inserted when it
//! is scheduled, into a segment *or* the backlog; re-entering URLs
//! (leftover, retry, backlog) skip the check, so nothing waiting is lost and
//! nothing is scheduled twice.

use std::path::{Path, PathBuf};

use common::bloom::{BloomFilter, BloomParams};

use crate::error::Error;
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

    /// Decides whether a URL is scheduled: a re-entering (`exempt`) URL
    /// always is; another one only if it was not seen before. Either way the
    /// URL is in the filter afterwards.
    pub fn admit(&self, url: &[u8], exempt: bool) -> bool {
        let fresh = self.bloom.insert(url);
        exempt || fresh
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
