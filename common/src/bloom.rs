//! The seen-set's file, `seen.bloom`: a Bloom filter in a memory map, and
//! a journal of the hashes added since its bit array was last written.
//!
//! File layout (little-endian), format version 2:
//! ```text
//! 0   8  magic "CRWLBLM1"
//! 8   4  format version (2)
//! 12  4  number of hash functions k
//! 16  8  number of bits m (a multiple of 64)
//! 24  8  expected items (design load)
//! 32  8  target false-positive rate (f64)
//! 40  8  items inserted (insertions that set at least one new bit)
//! 48  8  bits set in the array
//! 56  8  URLs rescued over the crawl (called seen by the filter, found in
//!        none of the crawl's exact sets, and scheduled after all)
//! 64  ..  the bit array, m/8 bytes
//! ..  ..  journal blocks ([`journal`]): hashes added since the array was
//!         written, each block with the counters after it
//! ```
//! Format version 1 (earlier builds) is the same header with bytes 48..64
//! zero and nothing after the bit array; it is read as it is (the bits set
//! are then counted), and the first journal block appended to it makes it
//! version 2.
//!
//! Hash: XXH3-128 (seed 0) of the key bytes, split into h1 (low 64 bits) and
//! h2 (high 64 bits, forced odd); bit i = ((h1 + i·h2) mod 2⁶⁴) mod m for i in
//! 0..k, computed in wrapping 64-bit arithmetic (Kirsch–Mitzenmacher double
//! hashing). Bit b of the array is bit b mod 8 (least significant first) of
//! byte 64 + b/8 of the file. XXH3 is a fixed, published algorithm, so the
//! file stays valid across Rust versions and platforms. A journal holds the
//! hashes, not bit positions: it applies to a filter of any size.
//! Sizing: m = −n·ln p / (ln 2)², rounded up to a multiple of 64;
//! k = round(m/n · ln 2), at least 1.
//!
//! A filter is opened in one of three ways: [`BloomFilter::create`] and
//! [`BloomFilter::open`] map the file shared and writable (a new file being
//! filled); [`BloomFilter::load`] and [`BloomFilter::open_read_only`] map it
//! private (copy-on-write) and apply its journal in memory, so that nothing
//! they do reaches the file; [`BloomFilter::empty`] lives in memory only.
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
//! filter.seal().unwrap();
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

pub mod journal;

pub use journal::{Journal, JournalWriter, apply_journal, check_journal_file};

/// First 8 bytes of every filter file.
pub const MAGIC: [u8; 8] = *b"CRWLBLM1";
/// The format version written by this library.
pub const FORMAT_VERSION: u32 = 2;
/// The format versions this library reads.
pub const READ_VERSIONS: [u32; 2] = [1, 2];
/// Bytes before the bit array.
pub const HEADER_BYTES: u64 = 64;
/// Largest bit array accepted (2⁴³ bits = 1 TiB).
pub const MAX_BITS: u64 = 1 << 43;
/// Most hash functions accepted.
pub const MAX_HASHES: u32 = 64;

/// Header words (8-byte units) holding the counters.
const ITEMS_WORD: usize = 5;
const BITS_SET_WORD: usize = 6;
const RESCUED_WORD: usize = 7;
/// Header words before the bit array.
const HEADER_WORDS: usize = (HEADER_BYTES / 8) as usize;

/// What to tell the user when a filter file is damaged.
const DAMAGED_HINT: &str = "rebuild it from the crawl's other state files (`segmenter repair \
                            CRAWL --accept-loss`), or restore it from a backup";

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

impl BloomError {
    fn io(path: &Path) -> impl FnOnce(io::Error) -> BloomError + '_ {
        move |source| BloomError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    fn format(path: &Path, message: String) -> BloomError {
        BloomError::Format {
            path: path.to_path_buf(),
            message,
        }
    }
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

    /// Size of the header and bit array of a filter with these parameters
    /// (a version 2 file may hold journal blocks after them).
    pub fn file_bytes(&self) -> u64 {
        HEADER_BYTES + self.bits / 8
    }

    /// Bits per item at the design load.
    pub fn bits_per_expected_item(&self) -> f64 {
        self.bits as f64 / self.expected_items as f64
    }

    /// The false-positive rate expected with `items` inserted:
    /// (1 − e^(−k·n/m))^k.
    pub fn fp_rate_at(&self, items: u64) -> f64 {
        let k = f64::from(self.hashes);
        (1.0 - (-k * items as f64 / self.bits as f64).exp()).powf(k)
    }
}

/// The two 64-bit halves of a key's hash; computing them apart from the bit
/// updates lets callers hash in parallel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
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

/// The counters a filter carries: in its header for the bit array, and in
/// each journal block for the state after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counters {
    /// Items inserted (insertions that set at least one new bit).
    pub items: u64,
    /// Bits set.
    pub bits_set: u64,
    /// URLs rescued over the crawl.
    pub rescued: u64,
}

/// The header as stored in a file.
fn encode_header(params: &BloomParams, counters: &Counters) -> [u8; HEADER_BYTES as usize] {
    let mut h = [0u8; HEADER_BYTES as usize];
    h[0..8].copy_from_slice(&MAGIC);
    h[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    h[12..16].copy_from_slice(&params.hashes.to_le_bytes());
    h[16..24].copy_from_slice(&params.bits.to_le_bytes());
    h[24..32].copy_from_slice(&params.expected_items.to_le_bytes());
    h[32..40].copy_from_slice(&params.target_fp_rate.to_le_bytes());
    h[40..48].copy_from_slice(&counters.items.to_le_bytes());
    h[48..56].copy_from_slice(&counters.bits_set.to_le_bytes());
    h[56..64].copy_from_slice(&counters.rescued.to_le_bytes());
    h
}

/// What a file's header says.
#[derive(Debug, Clone, Copy)]
struct Header {
    version: u32,
    params: BloomParams,
    /// The counters of the bit array (bits set 0 in version 1: unknown).
    counters: Counters,
}

/// Reads and checks the header of an open filter file of `file_len` bytes.
fn decode_header(path: &Path, file: &mut File, file_len: u64) -> Result<Header, BloomError> {
    let format = |message: String| BloomError::format(path, message);
    if file_len < HEADER_BYTES {
        return Err(format(format!(
            "the file is {file_len} bytes, shorter than the {HEADER_BYTES}-byte header of a \
             Bloom filter: it is truncated or not a filter; {DAMAGED_HINT}"
        )));
    }
    let mut h = [0u8; HEADER_BYTES as usize];
    file.read_exact(&mut h).map_err(BloomError::io(path))?;
    let u32_at = |o: usize| u32::from_le_bytes(h[o..o + 4].try_into().expect("4 bytes"));
    let u64_at = |o: usize| u64::from_le_bytes(h[o..o + 8].try_into().expect("8 bytes"));
    if h[0..8] != MAGIC {
        return Err(format(format!(
            "not a Bloom filter file of this crawler (it does not start with {:?}); {DAMAGED_HINT}",
            String::from_utf8_lossy(&MAGIC)
        )));
    }
    let version = u32_at(8);
    if !READ_VERSIONS.contains(&version) {
        return Err(format(format!(
            "Bloom filter format version {version}, but this program reads versions 1 and \
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
    let fits = match version {
        1 => file_len == params.file_bytes(),
        _ => file_len >= params.file_bytes(),
    };
    if !fits {
        return Err(format(format!(
            "the header says {} bits, so the file should be {}{} bytes, but it is {file_len}: \
             it is truncated or damaged; {DAMAGED_HINT}",
            params.bits,
            if version == 1 { "" } else { "at least " },
            params.file_bytes()
        )));
    }
    let counters = Counters {
        items: u64_at(40),
        bits_set: u64_at(48),
        rescued: u64_at(56),
    };
    Ok(Header {
        version,
        params,
        counters,
    })
}

/// What a filter file says of itself: its header and the counters of its
/// last journal block, read without mapping the bit array or checking the
/// journal's hashes (`BloomFilter::open_read_only` and
/// [`BloomFilter::verify`] check them).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// Format version.
    pub version: u32,
    /// The header's parameters.
    pub params: BloomParams,
    /// The counters now; `bits_set` is `None` for a version 1 file without
    /// a journal, which records none.
    pub items: u64,
    /// Bits set, if recorded.
    pub bits_set: Option<u64>,
    /// URLs rescued over the crawl.
    pub rescued: u64,
    /// The journal.
    pub journal: Journal,
    /// The file's size.
    pub file_bytes: u64,
}

impl Summary {
    /// Reads the summary of the filter file at `path`.
    pub fn read(path: &Path) -> Result<Summary, BloomError> {
        let mut file = File::open(path).map_err(BloomError::io(path))?;
        let len = file.metadata().map_err(BloomError::io(path))?.len();
        let h = decode_header(path, &mut file, len)?;
        let (journal, last) = journal::walk(&mut file, path, h.params.file_bytes())?;
        let c = last.unwrap_or(h.counters);
        Ok(Summary {
            version: h.version,
            params: h.params,
            items: c.items,
            bits_set: (h.version > 1 || last.is_some()).then_some(c.bits_set),
            rescued: c.rescued,
            journal,
            file_bytes: len,
        })
    }

    /// Fraction of bits set, if recorded.
    pub fn fill(&self) -> Option<f64> {
        self.bits_set.map(|b| b as f64 / self.params.bits as f64)
    }

    /// The false-positive rate estimated from the fill (fill^k), if recorded.
    pub fn estimated_fp_rate(&self) -> Option<f64> {
        self.fill().map(|f| f.powi(self.params.hashes as i32))
    }
}

/// A file's bytes (or anonymous memory), mapped and viewed as
/// little-endian 64-bit atomic words (the header is words 0..8, the bit
/// array follows).
struct MappedWords {
    /// Keeps the mapping alive; `words` points into it.
    map: Mapping,
    words: &'static [AtomicU64],
}

enum Mapping {
    /// Shared with the file: writes reach it.
    Shared(memmap2::MmapMut),
    /// Copy-on-write, or anonymous: writes stay in this process.
    Private(memmap2::MmapMut),
}

/// How to map a filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MapMode {
    /// Shared and writable.
    Shared,
    /// Private: copy-on-write.
    Private,
}

impl MappedWords {
    /// Maps the first `len` bytes of `file` as `mode` says.
    ///
    /// # Safety
    /// The caller must ensure that `len` is a multiple of 8, at least
    /// [`HEADER_BYTES`] and no more than the file's length, and that no
    /// other program truncates the file or writes to it other than through
    /// a shared mapping of this kind while the map lives (the crawl
    /// directory is used by one segmenter at a time; a truncated file would
    /// turn accesses into SIGBUS).
    ///
    /// Why the rest is sound: a memory map starts on a page boundary, so every
    /// 8-byte word is aligned for `AtomicU64`; every access to the words goes
    /// through atomic operations, so concurrent threads (and other processes
    /// with a shared mapping) never race on plain memory; both kinds of
    /// mapping are writable, so atomic read-modify-write is allowed; the
    /// slice never outlives the map, because only `words()` hands it out,
    /// borrowed from `self`.
    unsafe fn map(file: &File, len: u64, mode: MapMode) -> io::Result<MappedWords> {
        let len = usize::try_from(len)
            .map_err(|_| io::Error::other("the file is too large to map on this machine"))?;
        let mut options = memmap2::MmapOptions::new();
        options.len(len);
        let map = match mode {
            // SAFETY: see the function's contract.
            MapMode::Shared => Mapping::Shared(unsafe { options.map_mut(file)? }),
            // SAFETY: see the function's contract.
            MapMode::Private => Mapping::Private(unsafe { options.map_copy(file)? }),
        };
        Ok(MappedWords::of(map, len))
    }

    /// `len` bytes of zeroed anonymous memory (`len` a multiple of 8).
    fn anonymous(len: u64) -> io::Result<MappedWords> {
        let len = usize::try_from(len)
            .map_err(|_| io::Error::other("the filter is too large for this machine"))?;
        let map = memmap2::MmapMut::map_anon(len)?;
        Ok(MappedWords::of(Mapping::Private(map), len))
    }

    fn of(map: Mapping, len: usize) -> MappedWords {
        let ptr = match &map {
            Mapping::Shared(m) | Mapping::Private(m) => m.as_ptr(),
        };
        assert_eq!(ptr.align_offset(8), 0, "memory maps are page-aligned");
        // SAFETY: `ptr` points to `len` mapped bytes, 8-aligned, that stay
        // mapped as long as `map` lives; AtomicU64 has the size and
        // alignment of u64 and any bit pattern is valid.
        let words = unsafe { std::slice::from_raw_parts(ptr.cast::<AtomicU64>(), len / 8) };
        MappedWords { map, words }
    }

    fn words(&self) -> &[AtomicU64] {
        self.words
    }

    fn flush(&self) -> io::Result<()> {
        match &self.map {
            Mapping::Shared(m) => m.flush(),
            Mapping::Private(_) => Ok(()),
        }
    }
}

/// A Bloom filter over a memory map. Bits are set with atomic operations,
/// so `insert` takes `&self` and may be called from many threads.
pub struct BloomFilter {
    path: PathBuf,
    params: BloomParams,
    map: MappedWords,
    /// Shared with the file (writes reach it).
    shared: bool,
    /// Inserts allowed.
    writable: bool,
    /// The file's format version (the version written, for a new filter).
    version: u32,
    /// The journal blocks read with the file.
    journal: Journal,
}

impl std::fmt::Debug for BloomFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BloomFilter")
            .field("path", &self.path)
            .field("params", &self.params)
            .field("shared", &self.shared)
            .field("writable", &self.writable)
            .field("version", &self.version)
            .field("journal", &self.journal)
            .finish_non_exhaustive()
    }
}

impl BloomFilter {
    /// Creates a new, empty filter file at `path` (atomically; an existing
    /// file is an error) and opens it shared: inserts reach the file (call
    /// [`BloomFilter::seal`] when done).
    ///
    /// The bit array is allocated as a sparse file, so a large filter costs
    /// disk blocks only as bits get set.
    pub fn create(path: impl AsRef<Path>, params: BloomParams) -> Result<BloomFilter, BloomError> {
        let path = path.as_ref();
        params.check().map_err(BloomError::Params)?;
        let io_err = BloomError::io(path);
        let exists = || {
            BloomError::io(path)(io::Error::new(
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
            f.write_all(&encode_header(&params, &Counters::default()))?;
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
        placed
            .and_then(|()| sync_parent(path))
            .map_err(BloomError::io(path))?;
        BloomFilter::open(path)
    }

    /// An empty filter in memory only (a crawl's first round); `path` names
    /// it in messages and is where [`BloomFilter::write_file`] would put it.
    pub fn empty(path: impl AsRef<Path>, params: BloomParams) -> Result<BloomFilter, BloomError> {
        let path = path.as_ref();
        params.check().map_err(BloomError::Params)?;
        let map = MappedWords::anonymous(params.file_bytes()).map_err(BloomError::io(path))?;
        let header = encode_header(&params, &Counters::default());
        for (word, bytes) in map.words()[..HEADER_WORDS].iter().zip(header.chunks(8)) {
            word.store(
                u64::from_ne_bytes(bytes.try_into().expect("8 bytes")),
                Ordering::Relaxed,
            );
        }
        Ok(BloomFilter {
            path: path.to_path_buf(),
            params,
            map,
            shared: false,
            writable: true,
            version: FORMAT_VERSION,
            journal: Journal::default(),
        })
    }

    /// Opens an existing filter shared and writable: inserts reach the file.
    /// A file with journal blocks is refused (they would be left behind the
    /// bits): [`BloomFilter::load`] it instead.
    pub fn open(path: impl AsRef<Path>) -> Result<BloomFilter, BloomError> {
        BloomFilter::open_with(path.as_ref(), MapMode::Shared, true)
    }

    /// Opens an existing filter read-only (inserting panics): the file is
    /// mapped copy-on-write and its journal applied in memory.
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<BloomFilter, BloomError> {
        BloomFilter::open_with(path.as_ref(), MapMode::Private, false)
    }

    /// Loads a filter to work on in memory: the file is mapped copy-on-write
    /// and its journal applied; inserts never reach the file (write what
    /// changed with a [`JournalWriter`] or [`BloomFilter::write_file`]).
    pub fn load(path: impl AsRef<Path>) -> Result<BloomFilter, BloomError> {
        BloomFilter::open_with(path.as_ref(), MapMode::Private, true)
    }

    fn open_with(path: &Path, mode: MapMode, writable: bool) -> Result<BloomFilter, BloomError> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(mode == MapMode::Shared)
            .open(path)
            .map_err(BloomError::io(path))?;
        let len = file.metadata().map_err(BloomError::io(path))?.len();
        let Header {
            version, params, ..
        } = decode_header(path, &mut file, len)?;
        // SAFETY: `decode_header` checked that the file holds at least
        // 64 + bits/8 bytes with bits a multiple of 64, so the length mapped
        // is a multiple of 8, at least the header and within the file.
        // Exclusive use of the crawl directory is the caller's part of the
        // contract (documented on the crawl directory).
        let map = unsafe { MappedWords::map(&file, params.file_bytes(), mode) }
            .map_err(BloomError::io(path))?;
        let mut filter = BloomFilter {
            path: path.to_path_buf(),
            params,
            map,
            shared: mode == MapMode::Shared,
            writable,
            version,
            journal: Journal::default(),
        };
        if len > params.file_bytes() {
            if mode == MapMode::Shared {
                return Err(BloomError::format(
                    path,
                    format!(
                        "{} bytes of journal after the bit array: load the filter (copy-on-write) \
                         instead of opening it for writing",
                        len - params.file_bytes()
                    ),
                ));
            }
            filter.journal = journal::replay(&mut file, &filter)?;
        }
        if version == 1 && filter.journal.blocks == 0 {
            // Version 1 keeps no count of the bits set.
            let set = filter.count_bits_set();
            filter.store_word(BITS_SET_WORD, set);
        }
        Ok(filter)
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// True if the filter was opened read-only.
    pub fn is_read_only(&self) -> bool {
        !self.writable
    }

    /// The file's format version (1 or 2).
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The journal blocks read with the file.
    pub fn journal(&self) -> Journal {
        self.journal
    }

    /// The header's parameters.
    pub fn params(&self) -> BloomParams {
        self.params
    }

    fn bit_words(&self) -> &[AtomicU64] {
        &self.map.words()[HEADER_WORDS..]
    }

    fn load_word(&self, word: usize) -> u64 {
        u64::from_le(self.map.words()[word].load(Ordering::Relaxed))
    }

    fn store_word(&self, word: usize, value: u64) {
        self.map.words()[word].store(value.to_le(), Ordering::Relaxed);
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
        let new = self.set_bits(h);
        if new {
            add_le(&self.map.words()[ITEMS_WORD], 1);
        }
        new
    }

    /// Inserts a batch of hashes, in order, from the one thread that uses
    /// the filter (`&mut self`): plain loads and stores instead of atomic
    /// read-modify-writes, and the words of the hashes a few places ahead
    /// fetched early, so that their cache misses overlap (a rebuild spends
    /// most of its inserting time waiting for memory). Returns how many set
    /// a new bit; the same filter and count as [`BloomFilter::insert_hash`]
    /// one by one.
    ///
    /// # Panics
    /// On a filter opened with [`BloomFilter::open_read_only`].
    pub fn insert_batch(&mut self, hashes: &[BloomHash]) -> u64 {
        const AHEAD: usize = 8;
        assert!(
            self.writable,
            "{}: insert into a Bloom filter opened read-only",
            self.path.display()
        );
        let (bits, k) = (self.params.bits, self.params.hashes as usize);
        let words = self.bit_words();
        // The word and mask of each bit of the hashes ahead, by slot.
        let mut ahead = [[(0usize, 0u64); MAX_HASHES as usize]; AHEAD];
        let locate_into = |slot: &mut [(usize, u64); MAX_HASHES as usize], h: BloomHash| {
            for (i, bit) in h.positions(bits, k as u32).enumerate() {
                slot[i] = locate(bit);
                prefetch(&words[slot[i].0]);
            }
        };
        for (i, h) in hashes.iter().take(AHEAD).enumerate() {
            locate_into(&mut ahead[i], *h);
        }
        let mut new_items = 0u64;
        for i in 0..hashes.len() {
            let slot = i % AHEAD;
            let mut new = false;
            for &(word, mask) in &ahead[slot][..k] {
                let w = &words[word];
                let v = w.load(Ordering::Relaxed);
                if v & mask == 0 {
                    w.store(v | mask, Ordering::Relaxed);
                    new = true;
                }
            }
            new_items += u64::from(new);
            if let Some(next) = hashes.get(i + AHEAD) {
                locate_into(&mut ahead[slot], *next);
            }
        }
        add_le(&self.map.words()[ITEMS_WORD], new_items);
        new_items
    }

    /// Sets the bits of `h`; true if one of them was not set.
    fn set_bits(&self, h: BloomHash) -> bool {
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
        new
    }

    /// Items inserted (insertions that set a new bit).
    pub fn items(&self) -> u64 {
        self.load_word(ITEMS_WORD)
    }

    /// URLs rescued over the crawl (a counter the filter carries for the
    /// seen-set; see the module doc).
    pub fn rescued(&self) -> u64 {
        self.load_word(RESCUED_WORD)
    }

    /// Sets the rescue counter.
    pub fn set_rescued(&self, n: u64) {
        assert!(self.writable, "{}: read-only", self.path.display());
        self.store_word(RESCUED_WORD, n);
    }

    /// Bits set as the file (its header or last journal block) records them;
    /// [`BloomFilter::count_bits_set`] counts them.
    pub fn recorded_bits_set(&self) -> u64 {
        self.load_word(BITS_SET_WORD)
    }

    /// Bits set in the array, counted (O(m)).
    pub fn count_bits_set(&self) -> u64 {
        self.bit_words()
            .iter()
            .map(|w| u64::from(w.load(Ordering::Relaxed).count_ones()))
            .sum()
    }

    /// Checks the bit array against the count of bits set the file records
    /// (O(m)): a flipped bit, or an array changed by hand, is found. (A
    /// version 1 file records none: its bits were counted when opened.)
    pub fn verify(&self) -> Result<(), BloomError> {
        let (recorded, counted) = (self.recorded_bits_set(), self.count_bits_set());
        if recorded == counted {
            return Ok(());
        }
        Err(BloomError::format(
            &self.path,
            format!(
                "the bit array has {counted} bits set, but the file records {recorded}: bits \
                 were changed (a damaged disk, or an edit); {DAMAGED_HINT}"
            ),
        ))
    }

    /// The counters now, the bits set counted (O(m)).
    pub fn counters(&self) -> Counters {
        Counters {
            items: self.items(),
            bits_set: self.count_bits_set(),
            rescued: self.rescued(),
        }
    }

    /// Bits set in the array (counts the whole array: O(m)).
    pub fn bits_set(&self) -> u64 {
        self.count_bits_set()
    }

    /// Fraction of bits set (counts the whole array: O(m)).
    pub fn fill_ratio(&self) -> f64 {
        self.count_bits_set() as f64 / self.params.bits as f64
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

    /// Makes a shared filter's file complete: records the bits set in the
    /// header and writes the mapped pages to disk (msync). A no-op for a
    /// private or read-only filter.
    pub fn seal(&self) -> Result<(), BloomError> {
        if !self.shared {
            return Ok(());
        }
        self.store_word(BITS_SET_WORD, self.count_bits_set());
        self.flush()
    }

    /// Writes the mapped pages and the header to disk (msync). A no-op for
    /// a private or read-only filter.
    pub fn flush(&self) -> Result<(), BloomError> {
        self.map.flush().map_err(BloomError::io(&self.path))
    }

    /// Writes the filter as it is now (bits, counters; no journal) to a new
    /// file at `dest` in the current format, and fsyncs it; returns its size.
    /// An existing file at `dest` is replaced.
    pub fn write_file(&self, dest: &Path) -> Result<u64, BloomError> {
        let io = BloomError::io(dest);
        let mut out = std::io::BufWriter::with_capacity(
            1 << 20,
            File::create(dest).map_err(BloomError::io(dest))?,
        );
        out.write_all(&encode_header(&self.params, &self.counters()))
            .map_err(BloomError::io(dest))?;
        let mut chunk = Vec::with_capacity(1 << 16);
        for words in self.bit_words().chunks(1 << 13) {
            chunk.clear();
            for w in words {
                chunk.extend_from_slice(&w.load(Ordering::Relaxed).to_ne_bytes());
            }
            out.write_all(&chunk).map_err(BloomError::io(dest))?;
        }
        let file = out.into_inner().map_err(|e| io(e.into_error()))?;
        file.sync_all().map_err(BloomError::io(dest))?;
        Ok(self.params.file_bytes())
    }
}

/// The word index of a bit and the mask selecting it in the word as stored
/// (little-endian), so that bit b is bit b mod 8 of byte b/8 on every platform.
fn locate(bit: u64) -> (usize, u64) {
    ((bit / 64) as usize, (1u64 << (bit % 64)).to_le())
}

/// Asks the CPU to bring `word` into its cache (a hint: nothing is read).
#[inline]
fn prefetch(word: &AtomicU64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch instruction only hints at an address; it reads
    // nothing into the program and cannot fault, whatever the address.
    unsafe {
        core::arch::x86_64::_mm_prefetch(
            word.as_ptr().cast::<i8>().cast_const(),
            core::arch::x86_64::_MM_HINT_T0,
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = word;
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
        f.set_rescued(3);
        f.seal().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len() as u64, params.file_bytes());
        assert_eq!(&bytes[0..8], b"CRWLBLM1");
        assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), 2);
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
        // Bits set, and the rescue counter.
        assert_eq!(u64::from_le_bytes(bytes[48..56].try_into().unwrap()), 7);
        assert_eq!(u64::from_le_bytes(bytes[56..64].try_into().unwrap()), 3);
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
    fn a_batch_inserts_what_one_by_one_inserts() {
        let dir = TempDir::new("batch");
        let params = BloomParams::optimal(50_000, 0.01).unwrap();
        let one = BloomFilter::create(dir.join("one.bloom"), params).unwrap();
        let mut batch = BloomFilter::create(dir.join("batch.bloom"), params).unwrap();
        let hashes: Vec<BloomHash> = (0..60_000)
            .map(|i| BloomHash::of(format!("https://h{}.test/{i}", i % 77).as_bytes()))
            .collect();
        let mut new = 0;
        for chunk in hashes.chunks(1000).chain([&hashes[..5]]) {
            new += batch.insert_batch(chunk);
        }
        for h in &hashes {
            one.insert_hash(*h);
        }
        one.seal().unwrap();
        batch.seal().unwrap();
        assert_eq!(new, one.items());
        assert_eq!(
            std::fs::read(dir.join("one.bloom")).unwrap(),
            std::fs::read(dir.join("batch.bloom")).unwrap()
        );
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
        // The counter was updated atomically: it differs only in which keys
        // came out as false positives (every bit already set) in each order
        // of insertion. About 1,000 of the 200,000 keys are such in either
        // filter, so the two counts differ by some tens (52 seen); a counter
        // that lost updates between threads would be off by thousands.
        let diff = shared.items().abs_diff(single.items());
        let bound = threads * per_thread / 1000;
        assert!(
            diff <= bound,
            "items {} vs {}",
            shared.items(),
            single.items()
        );
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
        // A version 1 file: exactly the header and the bits.
        let mut header = encode_header(&params, &Counters::default());
        header[8..12].copy_from_slice(&1u32.to_le_bytes());
        let good = header
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
        assert!(msg.contains("segmenter repair"), "says what to do: {msg}");

        write_file(&path, &good[..10]);
        assert!(open_error(&path).contains("10 bytes"));

        let mut bad = good.clone();
        bad[0..8].copy_from_slice(b"GIF89a\0\0");
        assert!(open_error(&path_with(&path, &bad)).contains("not a Bloom filter"));

        let mut bad = good.clone();
        bad[8..12].copy_from_slice(&3u32.to_le_bytes());
        let msg = open_error(&path_with(&path, &bad));
        assert!(
            msg.contains("version 3") && msg.contains("reads versions 1 and 2"),
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
            let mut header = encode_header(&params, &Counters::default());
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
