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
//! h2 (high 64 bits, forced odd); bit i = ((h1 + i·h2) mod 2⁶⁴) mod m for i in
//! 0..k, computed in wrapping 64-bit arithmetic (Kirsch–Mitzenmacher double
//! hashing). Bit b of the array is bit b mod 8 (least significant first) of
//! byte 64 + b/8 of the file. XXH3 is a fixed, published algorithm, so the
//! file stays valid across Rust versions and platforms.
//! Sizing: m = −n·ln p / (ln 2)², rounded up to a multiple of 64;
//! k = round(m/n · ln 2), at least 1.
//!
//! ```
//! use common::bloom::{BloomFilter, BloomParams};
//! # let dir = std::env::temp_dir().join(format!("bloom-doc-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir).unwrap();
//! let path = dir.join("seen.bloom");
//! let params = BloomParams::optimal(1_000, 0.01).unwrap();
//! let filter = BloomFilter::create(&path, params).unwrap();
//! assert!(filter.insert(b"https://example.com/"));
//! assert!(!filter.insert(b"https://example.com/"), "second insert finds it");
//! drop(filter);
//! let filter = BloomFilter::open_read_only(&path).unwrap();
//! assert!(filter.contains(b"https://example.com/"));
//! assert_eq!(filter.items(), 1);
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::atomic::{sync_parent, temp_path};

/// First 8 bytes of every filter file.
pub const MAGIC: [u8; 8] = *b"CRWLBLM1";
/// The format version written and read by this library.
pub const FORMAT_VERSION: u32 = 1;
/// Bytes before the bit array.
pub const HEADER_BYTES: u64 = 64;
/// Largest bit array accepted (2⁴³ bits = 1 TiB).
pub const MAX_BITS: u64 = 1 << 43;
/// Most hash functions accepted.
pub const MAX_HASHES: u32 = 64;

/// Header word (8-byte unit) holding the item counter (byte offset 40).
const ITEMS_WORD: usize = 5;
/// Header words before the bit array.
const HEADER_WORDS: usize = (HEADER_BYTES / 8) as usize;

/// What to tell the user when a filter file is damaged.
const DAMAGED_HINT: &str = "restore it from a backup, or delete it to start an empty filter \
                            (every URL will then count as new)";

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
    /// Optimal parameters for `expected_items` at `fp_rate`:
    /// m = −n·ln p / (ln 2)² bits rounded up to a multiple of 64,
    /// k = round(m/n · ln 2) hash functions.
    ///
    /// ```
    /// let p = common::bloom::BloomParams::optimal(1_000_000, 0.01).unwrap();
    /// assert_eq!((p.bits, p.hashes), (9_585_088, 7));
    /// ```
    pub fn optimal(expected_items: u64, fp_rate: f64) -> Result<BloomParams, BloomError> {
        if expected_items == 0 {
            return Err(BloomError::Params(
                "expected items must be at least 1".into(),
            ));
        }
        if !(fp_rate > 0.0 && fp_rate < 1.0) {
            return Err(BloomError::Params(format!(
                "false-positive rate must be between 0 and 1 (exclusive), not {fp_rate}"
            )));
        }
        let ln2 = std::f64::consts::LN_2;
        let n = expected_items as f64;
        let exact = -n * fp_rate.ln() / (ln2 * ln2);
        if exact > MAX_BITS as f64 {
            return Err(BloomError::Params(format!(
                "{expected_items} items at a false-positive rate of {fp_rate} need {:.0} GiB, \
                 more than the {} GiB limit",
                exact / 8.0 / f64::from(1u32 << 30),
                (MAX_BITS / 8) >> 30
            )));
        }
        let bits = (exact.ceil() as u64).max(1).div_ceil(64) * 64;
        let hashes = (bits as f64 / n * ln2).round().max(1.0);
        if hashes > f64::from(MAX_HASHES) {
            return Err(BloomError::Params(format!(
                "a false-positive rate of {fp_rate} needs {hashes} hash functions, \
                 more than the {MAX_HASHES} supported"
            )));
        }
        let params = BloomParams {
            bits,
            hashes: hashes as u32,
            expected_items,
            target_fp_rate: fp_rate,
        };
        params.check().map_err(BloomError::Params)?;
        Ok(params)
    }

    /// Checks the invariants every filter file must satisfy.
    fn check(&self) -> Result<(), String> {
        if self.bits == 0 || !self.bits.is_multiple_of(64) {
            return Err(format!(
                "the number of bits must be a positive multiple of 64, not {}",
                self.bits
            ));
        }
        if self.bits > MAX_BITS {
            return Err(format!(
                "{} bits is more than the limit of {MAX_BITS}",
                self.bits
            ));
        }
        if self.hashes == 0 || self.hashes > MAX_HASHES {
            return Err(format!(
                "the number of hash functions must be from 1 to {MAX_HASHES}, not {}",
                self.hashes
            ));
        }
        if self.expected_items == 0 {
            return Err("expected items must be at least 1".into());
        }
        if !(self.target_fp_rate > 0.0 && self.target_fp_rate < 1.0) {
            return Err(format!(
                "the target false-positive rate must be between 0 and 1, not {}",
                self.target_fp_rate
            ));
        }
        Ok(())
    }

    /// Size of a filter file with these parameters.
    pub fn file_bytes(&self) -> u64 {
        HEADER_BYTES + self.bits / 8
    }

    /// Bits per item at the design load.
    pub fn bits_per_expected_item(&self) -> f64 {
        self.bits as f64 / self.expected_items as f64
    }
}

/// The two 64-bit halves of a key's hash; computing them apart from the bit
/// updates lets callers hash in parallel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BloomHash(pub u64, pub u64);

impl BloomHash {
    /// Hashes a key (XXH3-128, seed 0): `.0` is the low half h1, `.1` the
    /// high half h2 with its lowest bit set.
    pub fn of(key: &[u8]) -> BloomHash {
        let h = xxhash_rust::xxh3::xxh3_128(key);
        BloomHash(h as u64, (h >> 64) as u64 | 1)
    }

    /// The `hashes` bit positions of this hash in a filter of `bits` bits,
    /// in order (i = 0, 1, ...). `bits` must not be 0.
    pub fn positions(self, bits: u64, hashes: u32) -> impl Iterator<Item = u64> {
        let (h1, h2) = (self.0, self.1 | 1);
        (0..u64::from(hashes)).map(move |i| h1.wrapping_add(i.wrapping_mul(h2)) % bits)
    }
}

/// The header as stored in a file.
fn encode_header(params: &BloomParams) -> [u8; HEADER_BYTES as usize] {
    let mut h = [0u8; HEADER_BYTES as usize];
    h[0..8].copy_from_slice(&MAGIC);
    h[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    h[12..16].copy_from_slice(&params.hashes.to_le_bytes());
    h[16..24].copy_from_slice(&params.bits.to_le_bytes());
    h[24..32].copy_from_slice(&params.expected_items.to_le_bytes());
    h[32..40].copy_from_slice(&params.target_fp_rate.to_le_bytes());
    // 40..48: items inserted, 0; 48..64: reserved.
    h
}

/// Reads and checks the header of an open filter file of `file_len` bytes.
fn decode_header(path: &Path, file: &mut File, file_len: u64) -> Result<BloomParams, BloomError> {
    let format = |message: String| BloomError::Format {
        path: path.to_path_buf(),
        message,
    };
    if file_len < HEADER_BYTES {
        return Err(format(format!(
            "the file is {file_len} bytes, shorter than the {HEADER_BYTES}-byte header of a \
             Bloom filter: it is truncated or not a filter; {DAMAGED_HINT}"
        )));
    }
    let mut h = [0u8; HEADER_BYTES as usize];
    file.read_exact(&mut h).map_err(|source| BloomError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let u32_at = |o: usize| u32::from_le_bytes(h[o..o + 4].try_into().expect("4 bytes"));
    let u64_at = |o: usize| u64::from_le_bytes(h[o..o + 8].try_into().expect("8 bytes"));
    if h[0..8] != MAGIC {
        return Err(format(format!(
            "not a Bloom filter file of this crawler (it does not start with {:?}); {DAMAGED_HINT}",
            String::from_utf8_lossy(&MAGIC)
        )));
    }
    let version = u32_at(8);
    if version != FORMAT_VERSION {
        return Err(format(format!(
            "Bloom filter format version {version}, but this program reads version \
             {FORMAT_VERSION}; use the build that wrote it"
        )));
    }
    let params = BloomParams {
        hashes: u32_at(12),
        bits: u64_at(16),
        expected_items: u64_at(24),
        target_fp_rate: f64::from_le_bytes(h[32..40].try_into().expect("8 bytes")),
    };
    params
        .check()
        .map_err(|why| format(format!("corrupt header: {why}; {DAMAGED_HINT}")))?;
    if file_len != params.file_bytes() {
        return Err(format(format!(
            "the header says {} bits, so the file should be {} bytes, but it is {file_len}: \
             it is truncated or damaged; {DAMAGED_HINT}",
            params.bits,
            params.file_bytes()
        )));
    }
    Ok(params)
}

/// A file's bytes, mapped into memory and viewed as little-endian 64-bit
/// atomic words (the header is words 0..8, the bit array follows).
struct MappedWords {
    /// Keeps the mapping alive; `words` points into it.
    map: Mapping,
    words: &'static [AtomicU64],
}

enum Mapping {
    ReadWrite(memmap2::MmapMut),
    ReadOnly(#[expect(dead_code, reason = "only held, to keep the mapping alive")] memmap2::Mmap),
}

impl MappedWords {
    /// Maps `len` bytes of `file` (read-write if `writable`).
    ///
    /// # Safety
    /// The caller must ensure that `len` is the file's length, a multiple of 8
    /// and at least [`HEADER_BYTES`], and that no other program truncates the
    /// file or writes to it other than through such a mapping while the map
    /// lives (the crawl directory is used by one segmenter at a time; a
    /// truncated file would turn accesses into SIGBUS).
    ///
    /// Why the rest is sound: a memory map starts on a page boundary, so every
    /// 8-byte word is aligned for `AtomicU64`; every access to the words goes
    /// through atomic operations, so concurrent threads (and other processes
    /// with a shared mapping) never race on plain memory; a read-only map is
    /// only ever read with `Relaxed` 8-byte atomic loads, which Rust permits on
    /// read-only memory on 64-bit targets; the slice never outlives the map,
    /// because only `words()` hands it out, borrowed from `self`.
    unsafe fn map(file: &File, len: u64, writable: bool) -> io::Result<MappedWords> {
        let len = usize::try_from(len)
            .map_err(|_| io::Error::other("the file is too large to map on this machine"))?;
        let mut options = memmap2::MmapOptions::new();
        options.len(len);
        let (map, ptr) = if writable {
            // SAFETY: see the function's contract.
            let map = unsafe { options.map_mut(file)? };
            let ptr = map.as_ptr();
            (Mapping::ReadWrite(map), ptr)
        } else {
            // SAFETY: see the function's contract.
            let map = unsafe { options.map(file)? };
            let ptr = map.as_ptr();
            (Mapping::ReadOnly(map), ptr)
        };
        assert_eq!(ptr.align_offset(8), 0, "memory maps are page-aligned");
        // SAFETY: `ptr` points to `len` mapped bytes, 8-aligned, that stay
        // mapped as long as `map` lives; AtomicU64 has the size and
        // alignment of u64 and any bit pattern is valid.
        let words = unsafe { std::slice::from_raw_parts(ptr.cast::<AtomicU64>(), len / 8) };
        Ok(MappedWords { map, words })
    }

    fn words(&self) -> &[AtomicU64] {
        self.words
    }

    fn flush(&self) -> io::Result<()> {
        match &self.map {
            Mapping::ReadWrite(m) => m.flush(),
            Mapping::ReadOnly(_) => Ok(()),
        }
    }
}

/// A Bloom filter over a memory-mapped file. Bits are set with atomic
/// operations, so `insert` takes `&self` and may be called from many threads.
pub struct BloomFilter {
    path: PathBuf,
    params: BloomParams,
    map: MappedWords,
    writable: bool,
}

impl std::fmt::Debug for BloomFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BloomFilter")
            .field("path", &self.path)
            .field("params", &self.params)
            .field("writable", &self.writable)
            .finish_non_exhaustive()
    }
}

impl BloomFilter {
    /// Creates a new, empty filter file at `path` (atomically; an existing file is an error).
    ///
    /// The bit array is allocated as a sparse file, so a large filter costs
    /// disk blocks only as bits get set.
    pub fn create(path: impl AsRef<Path>, params: BloomParams) -> Result<BloomFilter, BloomError> {
        let path = path.as_ref();
        params.check().map_err(BloomError::Params)?;
        let io_err = |source: io::Error| BloomError::Io {
            path: path.to_path_buf(),
            source,
        };
        let exists = || {
            io_err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                "refusing to overwrite an existing file; open it instead, \
                 or delete it first to start an empty filter",
            ))
        };
        if path.exists() {
            return Err(exists());
        }
        let tmp = temp_path(path);
        let written = (|| {
            let mut f = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .open(&tmp)?;
            f.write_all(&encode_header(&params))?;
            f.set_len(params.file_bytes())?;
            f.sync_all()
        })();
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(io_err(e));
        }
        // A hard link puts the file in place only if nothing is there yet,
        // atomically, unlike a rename; fall back to rename on file systems
        // without hard links.
        let placed = match std::fs::hard_link(&tmp, path) {
            Ok(()) => std::fs::remove_file(&tmp),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                let _ = std::fs::remove_file(&tmp);
                return Err(exists());
            }
            Err(_) if !path.exists() => std::fs::rename(&tmp, path),
            Err(_) => {
                let _ = std::fs::remove_file(&tmp);
                return Err(exists());
            }
        };
        placed.and_then(|()| sync_parent(path)).map_err(io_err)?;
        BloomFilter::open(path)
    }

    /// Opens an existing filter read-write.
    pub fn open(path: impl AsRef<Path>) -> Result<BloomFilter, BloomError> {
        BloomFilter::open_with(path.as_ref(), true)
    }

    /// Opens an existing filter read-only (inserting panics).
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<BloomFilter, BloomError> {
        BloomFilter::open_with(path.as_ref(), false)
    }

    fn open_with(path: &Path, writable: bool) -> Result<BloomFilter, BloomError> {
        let io_err = |source: io::Error| BloomError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(writable)
            .open(path)
            .map_err(io_err)?;
        let len = file.metadata().map_err(io_err)?.len();
        let params = decode_header(path, &mut file, len)?;
        // SAFETY: `decode_header` checked that `len` is the file's length and
        // equals 64 + bits/8 with bits a multiple of 64, so it is a multiple of
        // 8 and at least the header. Exclusive use of the crawl directory is
        // the caller's part of the contract (documented on the crawl directory).
        let map = unsafe { MappedWords::map(&file, len, writable) }.map_err(io_err)?;
        Ok(BloomFilter {
            path: path.to_path_buf(),
            params,
            map,
            writable,
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// True if the filter was opened read-only.
    pub fn is_read_only(&self) -> bool {
        !self.writable
    }

    /// The header's parameters.
    pub fn params(&self) -> BloomParams {
        self.params
    }

    fn bit_words(&self) -> &[AtomicU64] {
        &self.map.words()[HEADER_WORDS..]
    }

    /// True if the key may have been inserted (false positives possible).
    pub fn contains(&self, key: &[u8]) -> bool {
        self.contains_hash(BloomHash::of(key))
    }

    /// [`BloomFilter::contains`] for a precomputed hash.
    pub fn contains_hash(&self, h: BloomHash) -> bool {
        let words = self.bit_words();
        h.positions(self.params.bits, self.params.hashes)
            .all(|bit| {
                let (word, mask) = locate(bit);
                words[word].load(Ordering::Relaxed) & mask != 0
            })
    }

    /// Inserts a key; returns true if it was not (probably) there before.
    pub fn insert(&self, key: &[u8]) -> bool {
        self.insert_hash(BloomHash::of(key))
    }

    /// [`BloomFilter::insert`] for a precomputed hash.
    ///
    /// # Panics
    /// On a filter opened with [`BloomFilter::open_read_only`].
    pub fn insert_hash(&self, h: BloomHash) -> bool {
        assert!(
            self.writable,
            "{}: insert into a Bloom filter opened read-only",
            self.path.display()
        );
        let words = self.bit_words();
        let mut new = false;
        for bit in h.positions(self.params.bits, self.params.hashes) {
            let (word, mask) = locate(bit);
            let w = &words[word];
            // Reading first keeps pages of an already-set bit clean and
            // avoids a locked instruction in the common case.
            if w.load(Ordering::Relaxed) & mask == 0
                && w.fetch_or(mask, Ordering::Relaxed) & mask == 0
            {
                new = true;
            }
        }
        if new {
            add_le(&self.map.words()[ITEMS_WORD], 1);
        }
        new
    }

    /// Items inserted (insertions that set a new bit).
    pub fn items(&self) -> u64 {
        u64::from_le(self.map.words()[ITEMS_WORD].load(Ordering::Relaxed))
    }

    /// Bits set in the array (counts the whole array: O(m)).
    pub fn bits_set(&self) -> u64 {
        self.bit_words()
            .iter()
            .map(|w| u64::from(w.load(Ordering::Relaxed).count_ones()))
            .sum()
    }

    /// Fraction of bits set (counts the whole array: O(m)).
    pub fn fill_ratio(&self) -> f64 {
        self.bits_set() as f64 / self.params.bits as f64
    }

    /// Current false-positive rate estimated from the fill: fill^k.
    pub fn estimated_fp_rate(&self) -> f64 {
        self.fill_ratio().powi(self.params.hashes as i32)
    }

    /// Bits of memory per inserted item so far (infinite while empty).
    pub fn bits_per_item(&self) -> f64 {
        match self.items() {
            0 => f64::INFINITY,
            n => self.params.bits as f64 / n as f64,
        }
    }

    /// Writes the mapped pages and the header to disk (msync). A no-op for
    /// a read-only filter.
    pub fn flush(&self) -> Result<(), BloomError> {
        self.map.flush().map_err(|source| BloomError::Io {
            path: self.path.clone(),
            source,
        })
    }
}

/// The word index of a bit and the mask selecting it in the word as stored
/// (little-endian), so that bit b is bit b mod 8 of byte b/8 on every platform.
fn locate(bit: u64) -> (usize, u64) {
    ((bit / 64) as usize, (1u64 << (bit % 64)).to_le())
}

/// Adds to a counter stored little-endian.
fn add_le(word: &AtomicU64, n: u64) {
    if cfg!(target_endian = "little") {
        word.fetch_add(n, Ordering::Relaxed);
    } else {
        let _ = word.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
            Some(u64::from_le(v).wrapping_add(n).to_le())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{Rng, TempDir};

    /// A random URL-like key; `tag` keeps two key sets disjoint.
    fn url_key(rng: &mut Rng, tag: &str, i: u64, out: &mut String) {
        use std::fmt::Write as _;
        let r = rng.next_u64();
        out.clear();
        write!(
            out,
            "https://www.site{}.example/{tag}/{}/page-{:x}.html?id={i}",
            r % 50_000,
            (r >> 20) % 100,
            r >> 32
        )
        .unwrap();
    }

    #[test]
    fn optimal_parameters_match_the_formula() {
        let p = BloomParams::optimal(1_000_000, 0.01).unwrap();
        let ideal = -(0.01f64.ln()) / (std::f64::consts::LN_2.powi(2));
        let per_item = p.bits_per_expected_item();
        println!(
            "(1M, 1%): {} bits, k = {}, {per_item:.3} bits/item (ideal {ideal:.3})",
            p.bits, p.hashes
        );
        assert!(
            (per_item - ideal).abs() / ideal < 0.10,
            "{per_item} vs {ideal}"
        );
        assert_eq!(p.bits % 64, 0);
        assert_eq!(p.hashes, 7);
        assert_eq!(p.file_bytes(), 64 + p.bits / 8);

        let p = BloomParams::optimal(1, 0.5).unwrap();
        assert_eq!(p.bits, 64);
        assert!(p.hashes >= 1);

        for (n, rate) in [(0, 0.01), (10, 0.0), (10, 1.0), (10, -0.5), (10, f64::NAN)] {
            let e = BloomParams::optimal(n, rate).unwrap_err();
            assert!(matches!(e, BloomError::Params(_)), "{n} {rate}: {e}");
        }
        let e = BloomParams::optimal(u64::MAX / 2, 0.01).unwrap_err();
        assert!(e.to_string().contains("limit"), "{e}");
        let e = BloomParams::optimal(10, 1e-40).unwrap_err();
        assert!(e.to_string().contains("hash functions"), "{e}");
    }

    #[test]
    fn the_hash_never_changes() {
        // XXH3-128 of the empty input, seed 0: the published reference value.
        let empty = xxhash_rust::xxh3::xxh3_128(b"");
        assert_eq!(empty, 0x99aa_06d3_0147_98d8_6001_c324_468d_497f);
        assert_eq!(
            BloomHash::of(b""),
            BloomHash(0x6001_c324_468d_497f, 0x99aa_06d3_0147_98d9)
        );

        // A fixed key in the (1M, 1%) filter always sets these bits. If this
        // fails, the on-disk hash changed and every existing seen.bloom is wrong.
        let h = BloomHash::of(b"https://example.com/");
        assert_eq!(h, BloomHash(0x9ff1_930d_aa8e_5b98, 0x503c_1bee_c51d_b021));
        let bits: Vec<u64> = h.positions(9_585_088, 7).collect();
        assert_eq!(bits, GOLDEN_BITS, "hash {h:x?}");
    }

    /// Bits of `https://example.com/` in a filter of 9,585,088 bits and 7 hashes.
    const GOLDEN_BITS: &[u64] = &[
        6_635_032, 5_008_185, 7_638_042, 6_011_195, 4_384_348, 7_014_205, 5_387_358,
    ];

    #[test]
    fn the_bits_land_where_the_format_says() {
        let dir = TempDir::new("layout");
        let path = dir.join("seen.bloom");
        let params = BloomParams::optimal(1_000_000, 0.01).unwrap();
        let f = BloomFilter::create(&path, params).unwrap();
        assert!(f.insert(b"https://example.com/"));
        f.flush().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len() as u64, params.file_bytes());
        assert_eq!(&bytes[0..8], b"CRWLBLM1");
        assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), 1);
        assert_eq!(u32::from_le_bytes(bytes[12..16].try_into().unwrap()), 7);
        assert_eq!(
            u64::from_le_bytes(bytes[16..24].try_into().unwrap()),
            params.bits
        );
        assert_eq!(
            u64::from_le_bytes(bytes[24..32].try_into().unwrap()),
            1_000_000
        );
        assert_eq!(f64::from_le_bytes(bytes[32..40].try_into().unwrap()), 0.01);
        assert_eq!(u64::from_le_bytes(bytes[40..48].try_into().unwrap()), 1);
        assert!(bytes[48..64].iter().all(|&b| b == 0));
        let mut set = Vec::new();
        for (i, &b) in bytes[64..].iter().enumerate() {
            for j in 0..8 {
                if b & (1 << j) != 0 {
                    set.push(i as u64 * 8 + j);
                }
            }
        }
        let mut expected = GOLDEN_BITS.to_vec();
        expected.sort_unstable();
        expected.dedup();
        assert_eq!(set, expected);
    }

    #[test]
    fn measured_false_positive_rate_at_one_million_urls() {
        let dir = TempDir::new("fp");
        let path = dir.join("seen.bloom");
        let n = 1_000_000u64;
        let params = BloomParams::optimal(n, 0.01).unwrap();
        let f = BloomFilter::create(&path, params).unwrap();
        let mut rng = Rng::new(7);
        let mut key = String::new();
        for i in 0..n {
            url_key(&mut rng, "in", i, &mut key);
            f.insert(key.as_bytes());
        }
        let mut rng = Rng::new(7);
        for i in 0..n {
            url_key(&mut rng, "in", i, &mut key);
            assert!(f.contains(key.as_bytes()), "inserted key missing: {key}");
        }
        let mut rng = Rng::new(99);
        let mut false_positives = 0u64;
        for i in 0..n {
            url_key(&mut rng, "out", i, &mut key);
            false_positives += u64::from(f.contains(key.as_bytes()));
        }
        let measured = false_positives as f64 / n as f64;
        let estimated = f.estimated_fp_rate();
        let bits_per_url = f.bits_per_item();
        println!(
            "1M URLs at 1% target: measured false-positive rate {:.3}% ({false_positives} of {n}), \
             estimated from fill {:.3}%, {bits_per_url:.2} bits/URL ({} items counted, file {} bytes)",
            measured * 100.0,
            estimated * 100.0,
            f.items(),
            params.file_bytes()
        );
        assert!(
            (0.005..=0.015).contains(&measured),
            "measured FP rate {measured}"
        );
        assert!(
            (0.005..=0.015).contains(&estimated),
            "estimated FP rate {estimated}"
        );
        // Items that set no new bit are not counted: about half the FP rate.
        assert!(
            f.items() <= n && f.items() > n - n / 50,
            "items {}",
            f.items()
        );
        let ideal = -(0.01f64.ln()) / std::f64::consts::LN_2.powi(2);
        assert!(
            (bits_per_url - ideal).abs() / ideal < 0.10,
            "{bits_per_url} bits/URL"
        );
    }

    #[test]
    fn reopening_keeps_every_key_and_the_count() {
        let dir = TempDir::new("reopen");
        let path = dir.join("seen.bloom");
        let params = BloomParams::optimal(20_000, 0.001).unwrap();
        let keys: Vec<String> = (0..10_000)
            .map(|i| format!("http://h{}.test/{i}", i % 97))
            .collect();
        let items = {
            let f = BloomFilter::create(&path, params).unwrap();
            for k in &keys {
                f.insert(k.as_bytes());
            }
            f.items()
        };
        let f = BloomFilter::open(&path).unwrap();
        assert_eq!(f.params(), params);
        assert_eq!(f.items(), items);
        assert!(keys.iter().all(|k| f.contains(k.as_bytes())));
        assert!(!f.insert(keys[0].as_bytes()), "a known key is not new");
        assert!(f.insert(b"http://new.test/"));
        drop(f);
        let f = BloomFilter::open_read_only(&path).unwrap();
        assert!(f.is_read_only());
        assert_eq!(f.items(), items + 1);
        assert!(keys.iter().all(|k| f.contains(k.as_bytes())));
        assert!(f.contains(b"http://new.test/"));
        assert!(f.fill_ratio() > 0.0 && f.fill_ratio() < 1.0);
    }

    #[test]
    #[should_panic(expected = "opened read-only")]
    fn inserting_into_a_read_only_filter_panics() {
        let dir = TempDir::new("ro");
        let path = dir.join("seen.bloom");
        drop(BloomFilter::create(&path, BloomParams::optimal(100, 0.01).unwrap()).unwrap());
        let f = BloomFilter::open_read_only(&path).unwrap();
        f.insert(b"x");
    }

    #[test]
    fn create_refuses_to_overwrite() {
        let dir = TempDir::new("overwrite");
        let path = dir.join("seen.bloom");
        let params = BloomParams::optimal(1000, 0.01).unwrap();
        let f = BloomFilter::create(&path, params).unwrap();
        f.insert(b"kept");
        drop(f);
        let e = BloomFilter::create(&path, BloomParams::optimal(5000, 0.01).unwrap()).unwrap_err();
        assert!(e.to_string().contains("refusing to overwrite"), "{e}");
        assert!(e.to_string().contains("seen.bloom"), "{e}");
        let f = BloomFilter::open(&path).unwrap();
        assert_eq!(f.params(), params);
        assert!(f.contains(b"kept"));
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "no temporary file left behind");
    }

    #[test]
    fn concurrent_inserts_lose_nothing() {
        let dir = TempDir::new("threads");
        let params = BloomParams::optimal(200_000, 0.01).unwrap();
        let shared = BloomFilter::create(dir.join("shared.bloom"), params).unwrap();
        let single = BloomFilter::create(dir.join("single.bloom"), params).unwrap();
        let threads = 4u64;
        let per_thread = 50_000u64;
        let key = |t: u64, i: u64| format!("https://t{t}.example/{i}");
        std::thread::scope(|s| {
            for t in 0..threads {
                let shared = &shared;
                s.spawn(move || {
                    for i in 0..per_thread {
                        shared.insert(key(t, i).as_bytes());
                    }
                });
            }
        });
        for t in 0..threads {
            for i in 0..per_thread {
                single.insert(key(t, i).as_bytes());
                assert!(shared.contains(key(t, i).as_bytes()), "lost {}", key(t, i));
            }
        }
        // Same keys, same bits: concurrent fetch_or lost no update.
        shared.flush().unwrap();
        single.flush().unwrap();
        let a = std::fs::read(dir.join("shared.bloom")).unwrap();
        let b = std::fs::read(dir.join("single.bloom")).unwrap();
        assert!(a[64..] == b[64..], "bit arrays differ");
        assert_eq!(shared.bits_set(), single.bits_set());
        // The counter was updated atomically: off only by keys two threads
        // found new at the same time, which does not happen for distinct keys
        // unless they share all bits (a false positive) — a tiny number.
        let diff = shared.items().abs_diff(single.items());
        assert!(diff <= 50, "items {} vs {}", shared.items(), single.items());
        assert!(shared.items() > threads * per_thread * 99 / 100);
    }

    fn write_file(path: &Path, bytes: &[u8]) {
        std::fs::write(path, bytes).unwrap();
    }

    fn open_error(path: &Path) -> String {
        let e = BloomFilter::open(path).unwrap_err();
        assert!(matches!(e, BloomError::Format { .. }), "{e:?}");
        let msg = e.to_string();
        assert!(msg.contains(&path.display().to_string()), "{msg}");
        assert!(
            BloomFilter::open_read_only(path).is_err(),
            "read-only open must refuse too"
        );
        msg
    }

    #[test]
    fn damaged_files_are_refused_with_a_clear_error() {
        let dir = TempDir::new("corrupt");
        let path = dir.join("seen.bloom");
        let params = BloomParams::optimal(1000, 0.01).unwrap();
        let good = encode_header(&params)
            .into_iter()
            .chain(std::iter::repeat_n(0u8, (params.bits / 8) as usize))
            .collect::<Vec<u8>>();
        write_file(&path, &good);
        BloomFilter::open(&path).unwrap();

        write_file(&path, b"");
        let msg = open_error(&path);
        assert!(
            msg.contains("0 bytes, shorter than the 64-byte header"),
            "{msg}"
        );
        assert!(msg.contains("delete it"), "says what to do: {msg}");

        write_file(&path, &good[..10]);
        assert!(open_error(&path).contains("10 bytes"));

        let mut bad = good.clone();
        bad[0..8].copy_from_slice(b"GIF89a\0\0");
        assert!(open_error(&path_with(&path, &bad)).contains("not a Bloom filter"));

        let mut bad = good.clone();
        bad[8..12].copy_from_slice(&2u32.to_le_bytes());
        let msg = open_error(&path_with(&path, &bad));
        assert!(
            msg.contains("version 2") && msg.contains("reads version 1"),
            "{msg}"
        );

        write_file(&path, &good[..good.len() - 8]);
        let msg = open_error(&path);
        assert!(msg.contains("truncated"), "{msg}");

        let mut bad = good.clone();
        bad.extend_from_slice(&[0; 8]);
        assert!(open_error(&path_with(&path, &bad)).contains("should be"));

        let mut bad = good.clone();
        bad[12..16].copy_from_slice(&0u32.to_le_bytes());
        assert!(open_error(&path_with(&path, &bad)).contains("hash functions"));

        let mut bad = good.clone();
        bad[16..24].copy_from_slice(&(params.bits + 1).to_le_bytes());
        assert!(open_error(&path_with(&path, &bad)).contains("multiple of 64"));

        let mut bad = good.clone();
        bad[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(open_error(&path_with(&path, &bad)).contains("corrupt header"));

        let mut bad = good.clone();
        bad[32..40].copy_from_slice(&f64::NAN.to_le_bytes());
        assert!(open_error(&path_with(&path, &bad)).contains("false-positive"));

        let missing = dir.join("missing.bloom");
        let e = BloomFilter::open(&missing).unwrap_err();
        assert!(matches!(e, BloomError::Io { .. }));
        assert!(e.to_string().contains("missing.bloom"), "{e}");
    }

    #[test]
    fn headers_lying_about_sizes_are_refused_before_anything_is_mapped() {
        let dir = TempDir::new("lies");
        let path = dir.join("seen.bloom");
        let params = BloomParams::optimal(1000, 0.01).unwrap();
        let real_len = params.file_bytes();
        let mut rng = Rng::new(23);
        let specials = [
            0,
            1,
            63,
            64,
            params.bits - 64,
            params.bits + 64,
            params.bits * 2,
            MAX_BITS,
            MAX_BITS + 64,
            u64::MAX - 63,
            u64::MAX,
        ];
        let (mut opened, mut refused) = (0, 0);
        for round in 0..400 {
            let mut header = encode_header(&params);
            // Lie in one or two fields: k, m, n, p or the item counter.
            for _ in 0..1 + rng.below(2) {
                let value = if rng.below(2) == 0 {
                    specials[rng.below(specials.len())]
                } else {
                    rng.next_u64()
                };
                match rng.below(5) {
                    0 => header[12..16].copy_from_slice(&(value as u32).to_le_bytes()),
                    1 => header[16..24].copy_from_slice(&value.to_le_bytes()),
                    2 => header[24..32].copy_from_slice(&value.to_le_bytes()),
                    3 => header[32..40].copy_from_slice(&value.to_le_bytes()),
                    _ => header[40..48].copy_from_slice(&value.to_le_bytes()),
                }
            }
            // The file is as long as the real filter, as the header claims
            // (when that is small), or some other length.
            let claimed = u64::from_le_bytes(header[16..24].try_into().unwrap()) / 8 + 64;
            let len = match round % 3 {
                0 => real_len,
                1 if claimed < 1 << 20 => claimed,
                _ => 64 + 8 * rng.below(400) as u64,
            };
            let file = std::fs::File::create(&path).unwrap();
            std::io::Write::write_all(&mut &file, &header).unwrap();
            file.set_len(len).unwrap();
            drop(file);
            match BloomFilter::open(&path) {
                Ok(f) => {
                    opened += 1;
                    assert_eq!(f.params().file_bytes(), len);
                    // Every bit the header's parameters name is in the file.
                    for i in 0..200u32 {
                        f.insert(&i.to_le_bytes());
                        assert!(f.contains(&i.to_le_bytes()));
                    }
                    assert!(f.bits_set() > 0);
                }
                Err(e) => {
                    refused += 1;
                    assert!(matches!(e, BloomError::Format { .. }), "{e:?}");
                    assert!(e.to_string().contains("seen.bloom"), "{e}");
                }
            }
        }
        assert!(
            opened > 10 && refused > 100,
            "{opened} opened, {refused} refused"
        );
    }

    fn path_with(path: &Path, bytes: &[u8]) -> PathBuf {
        write_file(path, bytes);
        path.to_path_buf()
    }
}
