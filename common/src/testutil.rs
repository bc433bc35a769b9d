//! Helpers for tests, not for programs: a seeded random generator, the
//! temporary directory of every test, and a WARC file read to its end.
//!
//! This crate's unit tests use it as `crate::testutil`; its integration
//! tests, and the test support of the other crates (`testkit`), as
//! `common::testutil`, which the `testutil` feature builds.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::warc::{WarcError, WarcReader, WarcRecord};

/// A small deterministic generator (SplitMix64): the same seed gives the
/// same test inputs on every run and platform.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator whose sequence is fixed by `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < p
    }

    /// One of `items` (not empty).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// The one temporary directory of the tests: a fresh directory under the
/// system's temporary directory, unique per process and per call (so tests
/// running in parallel never share one), removed with everything in it
/// when dropped, unless the test is failing: then it is kept, and its path
/// printed, to look at.
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl TempDir {
    /// Creates `crawl-test-TAG-PID-N` (emptied first, should a dead run
    /// have left one behind).
    pub fn new(tag: &str) -> TempDir {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("crawl-test-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        TempDir(dir)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// A path inside the directory.
    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// Writes `bytes` to `name` inside the directory; returns its path.
    pub fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.join(name);
        std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("test files kept in {}", self.0.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// Every record of the WARC file `path` (blocks cut at `max_block`), then
/// the error that stopped the reading, if any. Panics if the reader gives
/// anything after an error: an error ends a file.
pub fn read_all(path: &Path, max_block: usize) -> (Vec<WarcRecord>, Option<WarcError>) {
    let mut r = WarcReader::open(path, max_block).unwrap();
    let mut out = Vec::new();
    let mut rec = WarcRecord::default();
    loop {
        match r.read_next(&mut rec) {
            Ok(true) => out.push(rec.clone()),
            Ok(false) => return (out, None),
            Err(e) => {
                assert!(
                    !r.read_next(&mut rec).unwrap(),
                    "a record after the error {e}"
                );
                return (out, Some(e));
            }
        }
    }
}

/// Every record of the WARC file `path` read by a
/// [resyncing](WarcReader::resyncing) reader, and the damage it reported.
pub fn read_resyncing(path: &Path, max_block: usize) -> (Vec<WarcRecord>, Vec<WarcError>) {
    let mut r = WarcReader::open(path, max_block).unwrap().resyncing();
    let (mut out, mut damage) = (Vec::new(), Vec::new());
    let mut rec = WarcRecord::default();
    // Each call reads a record or moves past damage: bounded by the size.
    for _ in 0..=std::fs::metadata(path).unwrap().len() {
        match r.read_next(&mut rec) {
            Ok(true) => out.push(rec.clone()),
            Ok(false) => return (out, damage),
            Err(e) => damage.push(e),
        }
    }
    panic!("{}: the reader does not stop", path.display());
}
