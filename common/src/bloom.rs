//! A Bloom filter stored in a memory-mapped file (`seen.bloom`).
//!
//! File layout (little-endian), format version 1:
//! ```text
//! 0   8  magic "CRWLBLM1"
//! 8   4  format version (1)
//! 12  4  number of hash functions k
//! 16  8  number of bits m (a multiple of 64)
//! 24  8  expected items (design load)
//! 32  8  target false-positive rate (f64)
//! 40  8  items inserted (insertions that set at least one new bit)
//! 48 16  reserved (zero)
//! 64 ..  the bit array, m/8 bytes
//! ```
//! Hash: XXH3-128 (seed 0) of the key bytes, split into h1 (low 64 bits) and
//! h2 (high 64 bits, forced odd); bit i = (h1 + i·h2) mod m for i in 0..k
//! (Kirsch–Mitzenmacher double hashing). XXH3 is a fixed, published
//! algorithm, so the file stays valid across Rust versions and platforms.
//! Sizing: m = −n·ln p / (ln 2)², k = round(m/n · ln 2).

use std::path::{Path, PathBuf};

/// A problem with a Bloom filter file.
#[derive(Debug, thiserror::Error)]
pub enum BloomError {
    /// The file could not be created, opened or mapped.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not a Bloom filter of a version this program reads.
    #[error("{path}: {message}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong, and what to do.
        message: String,
    },
    /// Parameters out of range.
    #[error("invalid Bloom filter parameters: {0}")]
    Params(String),
}

/// The parameters in a filter's header.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BloomParams {
    /// Bits.
    pub bits: u64,
    /// Hash functions.
    pub hashes: u32,
    /// Design load.
    pub expected_items: u64,
    /// Target false-positive rate at the design load.
    pub target_fp_rate: f64,
}

impl BloomParams {
    /// Optimal parameters for `expected_items` at `fp_rate`.
    pub fn optimal(expected_items: u64, fp_rate: f64) -> Result<BloomParams, BloomError> {
        let _ = (expected_items, fp_rate);
        todo!("BloomParams::optimal")
    }
}

/// The two 64-bit halves of a key's hash; computing them apart from the bit
/// updates lets callers hash in parallel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BloomHash(pub u64, pub u64);

impl BloomHash {
    /// Hashes a key (XXH3-128, seed 0).
    pub fn of(key: &[u8]) -> BloomHash {
        let _ = key;
        todo!("BloomHash::of")
    }
}

/// A Bloom filter over a memory-mapped file. Bits are set with atomic
/// operations, so `insert` takes `&self` and may be called from many threads.
pub struct BloomFilter {
    _private: (),
}

impl BloomFilter {
    /// Creates a new, empty filter file at `path` (atomically; an existing file is an error).
    pub fn create(path: impl AsRef<Path>, params: BloomParams) -> Result<BloomFilter, BloomError> {
        let _ = (path, params);
        todo!("BloomFilter::create")
    }

    /// Opens an existing filter read-write.
    pub fn open(path: impl AsRef<Path>) -> Result<BloomFilter, BloomError> {
        let _ = path;
        todo!("BloomFilter::open")
    }

    /// Opens an existing filter read-only (inserting panics).
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<BloomFilter, BloomError> {
        let _ = path;
        todo!("BloomFilter::open_read_only")
    }

    /// The header's parameters.
    pub fn params(&self) -> BloomParams {
        todo!("BloomFilter::params")
    }

    /// True if the key may have been inserted (false positives possible).
    pub fn contains(&self, key: &[u8]) -> bool {
        self.contains_hash(BloomHash::of(key))
    }

    /// [`BloomFilter::contains`] for a precomputed hash.
    pub fn contains_hash(&self, h: BloomHash) -> bool {
        let _ = h;
        todo!("BloomFilter::contains_hash")
    }

    /// Inserts a key; returns true if it was not (probably) there before.
    pub fn insert(&self, key: &[u8]) -> bool {
        self.insert_hash(BloomHash::of(key))
    }

    /// [`BloomFilter::insert`] for a precomputed hash.
    pub fn insert_hash(&self, h: BloomHash) -> bool {
        let _ = h;
        todo!("BloomFilter::insert_hash")
    }

    /// Items inserted (insertions that set a new bit).
    pub fn items(&self) -> u64 {
        todo!("BloomFilter::items")
    }

    /// Fraction of bits set (counts the whole array: O(m)).
    pub fn fill_ratio(&self) -> f64 {
        todo!("BloomFilter::fill_ratio")
    }

    /// Current false-positive rate estimated from the fill: fill^k.
    pub fn estimated_fp_rate(&self) -> f64 {
        todo!("BloomFilter::estimated_fp_rate")
    }

    /// Bits of memory per inserted item so far.
    pub fn bits_per_item(&self) -> f64 {
        todo!("BloomFilter::bits_per_item")
    }

    /// Writes the mapped pages and the header to disk (msync).
    pub fn flush(&self) -> Result<(), BloomError> {
        todo!("BloomFilter::flush")
    }
}
