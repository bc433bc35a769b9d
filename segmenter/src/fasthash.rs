//! A fast hasher for the in-memory tables of the hot loops (host names,
//! seed domains): one XXH3 call per `write`, no per-map random state. The
//! tables only live for one run, so there is no denial-of-service concern.

use std::hash::{BuildHasher, Hasher};

/// Builds [`FastHasher`]s.
#[derive(Debug, Default, Clone, Copy)]
pub struct FastHash;

impl BuildHasher for FastHash {
    type Hasher = FastHasher;
    fn build_hasher(&self) -> FastHasher {
        FastHasher(0)
    }
}

/// Chains XXH3 over the written bytes.
#[derive(Debug, Default, Clone, Copy)]
pub struct FastHasher(u64);

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0 = xxhash_rust::xxh3::xxh3_64_with_seed(bytes, self.0);
    }
    fn write_u8(&mut self, b: u8) {
        self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(29);
    }
    fn write_u128(&mut self, n: u128) {
        self.write_u64(n as u64);
        self.write_u64((n >> 64) as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}
