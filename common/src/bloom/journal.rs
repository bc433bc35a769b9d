//! The journal of a filter file: blocks of hashes appended after the bit
//! array, so that a round writes what it added, not the whole filter.
//!
//! A block (all little-endian):
//! ```text
//! 0   8   magic "CRWLBLJ1"
//! 8   8   n, the number of hashes
//! 16  8   items after the block
//! 24  8   bits set after the block
//! 32  8   URLs rescued after the block
//! 40  8   XXH3-64 of the n hashes' bytes followed by bytes 8..40
//! 48  16n the hashes, h1 then h2 of each ([`BloomHash`]), in insertion order
//! ```
//! The counters are absolute, so applying a block twice changes nothing.
//!
//! A round writes its block into its staging directory as an *append file*
//! ([`JournalWriter`]): a 32-byte prefix (magic "CRWLBLA1", the offset in
//! `seen.bloom` where the block goes, which is the file's length when the
//! round began, then the filter's m and k), then the block. After the
//! round's commit marker, [`apply_journal`] cuts `seen.bloom` back to that
//! offset and writes the block there: done again after a crash, it gives
//! the same file.

use std::fs::{File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::Xxh3;

use super::{BloomError, BloomFilter, BloomHash, Counters, decode_header};

/// First bytes of a journal block.
pub const BLOCK_MAGIC: [u8; 8] = *b"CRWLBLJ1";
/// First bytes of an append file.
pub const APPEND_MAGIC: [u8; 8] = *b"CRWLBLA1";
/// Bytes before a block's hashes.
pub const BLOCK_HEADER_BYTES: u64 = 48;
/// Bytes before the block in an append file.
pub const APPEND_PREFIX_BYTES: u64 = 32;
/// Bytes of one hash in a block.
pub const HASH_BYTES: u64 = 16;

/// What a filter's journal holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Journal {
    /// Blocks.
    pub blocks: u64,
    /// Hashes in them.
    pub hashes: u64,
    /// Their size in bytes.
    pub bytes: u64,
}

fn encode_block_header(n: u64, after: &Counters, checksum: u64) -> [u8; 48] {
    let mut h = [0u8; 48];
    h[0..8].copy_from_slice(&BLOCK_MAGIC);
    h[8..16].copy_from_slice(&n.to_le_bytes());
    h[16..24].copy_from_slice(&after.items.to_le_bytes());
    h[24..32].copy_from_slice(&after.bits_set.to_le_bytes());
    h[32..40].copy_from_slice(&after.rescued.to_le_bytes());
    h[40..48].copy_from_slice(&checksum.to_le_bytes());
    h
}

fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"))
}

/// Reads the block at the reader's position (`offset` in `path`, for
/// messages), handing each hash to `each`; its counters, or `None` at the
/// end of the input.
fn read_block(
    input: &mut impl Read,
    path: &Path,
    offset: u64,
    mut each: impl FnMut(BloomHash),
) -> Result<Option<(u64, Counters)>, BloomError> {
    let damaged = |what: String| {
        BloomError::format(
            path,
            format!(
                "journal block at byte {offset}: {what}: the file is damaged; {}",
                super::DAMAGED_HINT
            ),
        )
    };
    let mut h = [0u8; 48];
    let got = read_full(input, &mut h).map_err(BloomError::io(path))?;
    if got == 0 {
        return Ok(None);
    }
    if got < h.len() {
        return Err(damaged(format!("cut after {got} bytes of its header")));
    }
    if h[0..8] != BLOCK_MAGIC {
        return Err(damaged("not a journal block (bad magic)".into()));
    }
    let n = u64_at(&h, 8);
    let mut sum = Xxh3::new();
    let mut buf = vec![0u8; 16 * 4096];
    let mut left = n;
    while left > 0 {
        let take = left.min(4096) as usize;
        let chunk = &mut buf[..take * 16];
        let got = read_full(input, chunk).map_err(BloomError::io(path))?;
        if got < chunk.len() {
            return Err(damaged(format!(
                "cut: {n} hashes announced, {} found",
                n - left + got as u64 / 16
            )));
        }
        sum.update(chunk);
        for h in chunk.chunks_exact(16) {
            each(BloomHash(u64_at(h, 0), u64_at(h, 8)));
        }
        left -= take as u64;
    }
    sum.update(&h[8..40]);
    if sum.digest() != u64_at(&h, 40) {
        return Err(damaged("checksum mismatch".into()));
    }
    let after = Counters {
        items: u64_at(&h, 16),
        bits_set: u64_at(&h, 24),
        rescued: u64_at(&h, 32),
    };
    Ok(Some((n, after)))
}

/// Reads into `buf` until it is full or the input ends; the bytes read.
fn read_full(input: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Applies the journal blocks of `file` (after its bit array) to `filter`
/// (mapped private): sets their bits and takes the last block's counters.
pub(super) fn replay(file: &mut File, filter: &BloomFilter) -> Result<Journal, BloomError> {
    let path = filter.path();
    let start = filter.params().file_bytes();
    file.seek(SeekFrom::Start(start))
        .map_err(BloomError::io(path))?;
    let mut input = BufReader::with_capacity(1 << 20, file);
    let mut journal = Journal::default();
    let mut offset = start;
    while let Some((n, after)) = read_block(&mut input, path, offset, |h| {
        filter.set_bits(h);
    })? {
        journal.blocks += 1;
        journal.hashes += n;
        let bytes = BLOCK_HEADER_BYTES + n * HASH_BYTES;
        journal.bytes += bytes;
        offset += bytes;
        filter.store_word(super::ITEMS_WORD, after.items);
        filter.store_word(super::BITS_SET_WORD, after.bits_set);
        filter.store_word(super::RESCUED_WORD, after.rescued);
    }
    Ok(journal)
}

/// Walks the journal blocks of `file` (after its bit array, at `start`)
/// by their headers, without reading their hashes: what they hold and the
/// counters of the last one.
pub(super) fn walk(
    file: &mut File,
    path: &Path,
    start: u64,
) -> Result<(Journal, Option<Counters>), BloomError> {
    let len = file.metadata().map_err(BloomError::io(path))?.len();
    let mut journal = Journal::default();
    let mut last = None;
    let mut offset = start;
    while offset < len {
        let mut h = [0u8; 48];
        file.seek(SeekFrom::Start(offset))
            .map_err(BloomError::io(path))?;
        let got = read_full(file, &mut h).map_err(BloomError::io(path))?;
        let n = u64_at(&h, 8);
        let bytes = BLOCK_HEADER_BYTES.saturating_add(n.saturating_mul(HASH_BYTES));
        if got < h.len() || h[0..8] != BLOCK_MAGIC || offset.saturating_add(bytes) > len {
            return Err(BloomError::format(
                path,
                format!(
                    "journal block at byte {offset}: damaged or cut; {}",
                    super::DAMAGED_HINT
                ),
            ));
        }
        journal.blocks += 1;
        journal.hashes += n;
        journal.bytes += bytes;
        offset += bytes;
        last = Some(Counters {
            items: u64_at(&h, 16),
            bits_set: u64_at(&h, 24),
            rescued: u64_at(&h, 32),
        });
    }
    Ok((journal, last))
}

/// Writes a round's append file: the hashes it added to a filter, for
/// [`apply_journal`] to append to the filter's file after the commit.
pub struct JournalWriter {
    path: PathBuf,
    out: BufWriter<File>,
    sum: Xxh3,
    n: u64,
}

impl JournalWriter {
    /// Starts the append file at `path` for `filter` (loaded from its file,
    /// whose length now is where the block goes).
    pub fn create(path: &Path, filter: &BloomFilter) -> Result<JournalWriter, BloomError> {
        let at = std::fs::metadata(filter.path())
            .map_err(BloomError::io(filter.path()))?
            .len();
        let file = File::create(path).map_err(BloomError::io(path))?;
        let mut out = BufWriter::with_capacity(1 << 16, file);
        let p = filter.params();
        let mut prefix = [0u8; APPEND_PREFIX_BYTES as usize];
        prefix[0..8].copy_from_slice(&APPEND_MAGIC);
        prefix[8..16].copy_from_slice(&at.to_le_bytes());
        prefix[16..24].copy_from_slice(&p.bits.to_le_bytes());
        prefix[24..28].copy_from_slice(&p.hashes.to_le_bytes());
        out.write_all(&prefix)
            .and_then(|()| out.write_all(&[0u8; BLOCK_HEADER_BYTES as usize]))
            .map_err(BloomError::io(path))?;
        Ok(JournalWriter {
            path: path.to_path_buf(),
            out,
            sum: Xxh3::new(),
            n: 0,
        })
    }

    /// Adds a hash.
    pub fn push(&mut self, h: BloomHash) -> Result<(), BloomError> {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&h.0.to_le_bytes());
        b[8..].copy_from_slice(&h.1.to_le_bytes());
        self.sum.update(&b);
        self.n += 1;
        self.out.write_all(&b).map_err(BloomError::io(&self.path))
    }

    /// Hashes pushed so far.
    pub fn len(&self) -> u64 {
        self.n
    }

    /// True if no hash was pushed.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Writes the block's header with the counters after it and fsyncs the
    /// file; returns the block's size (what will be appended).
    pub fn finish(mut self, after: &Counters) -> Result<u64, BloomError> {
        let io = BloomError::io(&self.path);
        let header = {
            let mut h = encode_block_header(self.n, after, 0);
            self.sum.update(&h[8..40]);
            h[40..48].copy_from_slice(&self.sum.digest().to_le_bytes());
            h
        };
        let mut file = self.out.into_inner().map_err(|e| io(e.into_error()))?;
        file.seek(SeekFrom::Start(APPEND_PREFIX_BYTES))
            .and_then(|_| file.write_all(&header))
            .and_then(|()| file.sync_all())
            .map_err(BloomError::io(&self.path))?;
        Ok(BLOCK_HEADER_BYTES + self.n * HASH_BYTES)
    }
}

/// What an append file says: where its block goes and for which filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppendTarget {
    /// The offset in the filter's file.
    pub at: u64,
    /// The filter's bits.
    pub bits: u64,
    /// Its hash functions.
    pub hashes: u32,
}

/// Checks an append file (prefix, block, checksum, nothing after it);
/// where it goes and the block's hashes.
pub fn check_journal_file(path: &Path) -> Result<(AppendTarget, u64), BloomError> {
    let file = File::open(path).map_err(BloomError::io(path))?;
    let len = file.metadata().map_err(BloomError::io(path))?.len();
    let mut input = BufReader::new(file);
    let target = read_prefix(&mut input, path)?;
    let (n, _) = read_block(&mut input, path, APPEND_PREFIX_BYTES, |_| {})?.ok_or_else(|| {
        BloomError::format(path, "an append file without its block: it is cut".into())
    })?;
    let expected = APPEND_PREFIX_BYTES + BLOCK_HEADER_BYTES + n * HASH_BYTES;
    if len != expected {
        return Err(BloomError::format(
            path,
            format!("{len} bytes, but its block makes {expected}: damaged"),
        ));
    }
    Ok((target, n))
}

fn read_prefix(input: &mut impl Read, path: &Path) -> Result<AppendTarget, BloomError> {
    let mut p = [0u8; APPEND_PREFIX_BYTES as usize];
    let got = read_full(input, &mut p).map_err(BloomError::io(path))?;
    if got < p.len() || p[0..8] != APPEND_MAGIC {
        return Err(BloomError::format(
            path,
            "not a Bloom filter append file (bad or cut prefix)".into(),
        ));
    }
    Ok(AppendTarget {
        at: u64_at(&p, 8),
        bits: u64_at(&p, 16),
        hashes: u32::from_le_bytes(p[24..28].try_into().expect("4 bytes")),
    })
}

/// Appends the block of the append file `staged` to the filter file
/// `filter` at the offset the append file names (cutting what is after
/// it: a block half written by a run that was killed), makes the file
/// version 2 if it was version 1, and fsyncs it. Returns the bytes
/// written. Doing it again gives the same file.
pub fn apply_journal(staged: &Path, filter: &Path) -> Result<u64, BloomError> {
    let (target, n) = check_journal_file(staged)?;
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(filter)
        .map_err(BloomError::io(filter))?;
    let len = file.metadata().map_err(BloomError::io(filter))?.len();
    // The header only: what follows the bit array may be this block, half
    // written (the version is set to 2 before the block is written, so a
    // version 1 file here is as it was).
    let header = decode_header(filter, &mut file, len)?;
    if header.params.bits != target.bits || header.params.hashes != target.hashes {
        return Err(BloomError::format(
            filter,
            format!(
                "{} was made for a filter of {} bits and {} hashes, not this one ({} and {}); \
                 it is not applied",
                staged.display(),
                target.bits,
                target.hashes,
                header.params.bits,
                header.params.hashes
            ),
        ));
    }
    if len < target.at {
        return Err(BloomError::format(
            filter,
            format!(
                "{len} bytes, shorter than the {} it had when the round began: damaged; {}",
                target.at,
                super::DAMAGED_HINT
            ),
        ));
    }
    let mut block = Vec::with_capacity((BLOCK_HEADER_BYTES + n * HASH_BYTES) as usize);
    let mut input = File::open(staged).map_err(BloomError::io(staged))?;
    input
        .seek(SeekFrom::Start(APPEND_PREFIX_BYTES))
        .and_then(|_| input.read_to_end(&mut block))
        .map_err(BloomError::io(staged))?;
    let io = BloomError::io(filter);
    (|| {
        if header.version != super::FORMAT_VERSION {
            file.seek(SeekFrom::Start(8))?;
            file.write_all(&super::FORMAT_VERSION.to_le_bytes())?;
        }
        file.set_len(target.at)?;
        file.seek(SeekFrom::Start(target.at))?;
        file.write_all(&block)?;
        file.sync_all()
    })()
    .map_err(io)?;
    Ok(block.len() as u64 + 4)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bloom::BloomParams;
    use crate::testutil::TempDir;

    fn keys(tag: &str, n: usize) -> Vec<String> {
        (0..n).map(|i| format!("https://{tag}.test/{i}")).collect()
    }

    /// A round on `live`: loads it, inserts `new`, writes the append file;
    /// the block's size.
    fn round(live: &Path, staged: &Path, new: &[String], rescued: u64) -> u64 {
        let f = BloomFilter::load(live).unwrap();
        let mut w = JournalWriter::create(staged, &f).unwrap();
        for k in new {
            let h = BloomHash::of(k.as_bytes());
            if f.insert_hash(h) {
                w.push(h).unwrap();
            }
        }
        f.set_rescued(rescued);
        w.finish(&f.counters()).unwrap()
    }

    #[test]
    fn appended_blocks_are_read_back_and_applying_twice_changes_nothing() {
        let dir = TempDir::new("journal");
        let live = dir.join("seen.bloom");
        let staged = dir.join("seen.bloom.append");
        let params = BloomParams::optimal(10_000, 0.01).unwrap();
        let f = BloomFilter::create(&live, params).unwrap();
        let first = keys("a", 1000);
        for k in &first {
            f.insert(k.as_bytes());
        }
        f.seal().unwrap();
        drop(f);
        let base = std::fs::read(&live).unwrap();

        let second = keys("b", 500);
        let block = round(&live, &staged, &second, 4);
        assert_eq!(block, BLOCK_HEADER_BYTES + 500 * HASH_BYTES);
        let (target, n) = check_journal_file(&staged).unwrap();
        assert_eq!((target.at, n), (base.len() as u64, 500));
        // The live file is untouched until the block is applied.
        assert_eq!(std::fs::read(&live).unwrap(), base);
        apply_journal(&staged, &live).unwrap();
        let once = std::fs::read(&live).unwrap();
        assert_eq!(once.len() as u64, base.len() as u64 + block);
        assert_eq!(once[..base.len()], base[..], "the array is not written");
        // As after a crash in the middle of the append: done again, the
        // same file; and with half a block behind it, too.
        apply_journal(&staged, &live).unwrap();
        assert_eq!(std::fs::read(&live).unwrap(), once);
        let mut torn = once.clone();
        torn.truncate(base.len() + 100);
        std::fs::write(&live, &torn).unwrap();
        apply_journal(&staged, &live).unwrap();
        assert_eq!(std::fs::read(&live).unwrap(), once);

        let f = BloomFilter::open_read_only(&live).unwrap();
        assert!(
            first
                .iter()
                .chain(&second)
                .all(|k| f.contains(k.as_bytes()))
        );
        assert!((1490..=1500).contains(&f.items()), "{}", f.items());
        assert_eq!(f.rescued(), 4);
        assert_eq!(f.recorded_bits_set(), f.count_bits_set());
        assert_eq!(
            f.journal(),
            Journal {
                blocks: 1,
                hashes: 500,
                bytes: block
            }
        );
        // A second round appends after the first block.
        let third = keys("c", 10);
        round(&live, &staged, &third, 5);
        apply_journal(&staged, &live).unwrap();
        let f = BloomFilter::load(&live).unwrap();
        assert_eq!(f.journal().blocks, 2);
        assert!(third.iter().all(|k| f.contains(k.as_bytes())));
        // Written whole again, the filter has no journal and the same answers.
        let folded = dir.join("folded.bloom");
        f.write_file(&folded).unwrap();
        let g = BloomFilter::open_read_only(&folded).unwrap();
        assert_eq!(g.journal(), Journal::default());
        assert_eq!((g.items(), g.rescued()), (f.items(), 5));
        assert!(
            first
                .iter()
                .chain(&second)
                .chain(&third)
                .all(|k| g.contains(k.as_bytes()))
        );
        assert_eq!(g.count_bits_set(), f.count_bits_set());
        // A loaded filter's inserts never reach its file.
        let before = std::fs::read(&live).unwrap();
        f.insert(b"https://memory.only/");
        drop(f);
        assert_eq!(std::fs::read(&live).unwrap(), before);
    }

    #[test]
    fn a_version_1_file_is_read_and_becomes_version_2_with_its_first_block() {
        let dir = TempDir::new("journal-v1");
        let live = dir.join("seen.bloom");
        let staged = dir.join("seen.bloom.append");
        let params = BloomParams::optimal(1000, 0.01).unwrap();
        let f = BloomFilter::create(&live, params).unwrap();
        let old = keys("old", 300);
        for k in &old {
            f.insert(k.as_bytes());
        }
        f.flush().unwrap();
        drop(f);
        // As an earlier build wrote it: version 1, bytes 48..64 zero.
        let mut bytes = std::fs::read(&live).unwrap();
        bytes[8..12].copy_from_slice(&1u32.to_le_bytes());
        bytes[48..64].fill(0);
        std::fs::write(&live, &bytes).unwrap();
        let f = BloomFilter::open_read_only(&live).unwrap();
        assert_eq!(f.version(), 1);
        assert_eq!(f.recorded_bits_set(), f.count_bits_set(), "counted for v1");
        assert!(old.iter().all(|k| f.contains(k.as_bytes())));
        drop(f);

        let new = keys("new", 50);
        round(&live, &staged, &new, 0);
        apply_journal(&staged, &live).unwrap();
        let f = BloomFilter::open_read_only(&live).unwrap();
        assert_eq!(f.version(), 2);
        assert!(old.iter().chain(&new).all(|k| f.contains(k.as_bytes())));
        assert!((345..=350).contains(&f.items()), "{}", f.items());
    }

    #[test]
    fn damaged_journals_and_foreign_append_files_are_refused() {
        let dir = TempDir::new("journal-bad");
        let live = dir.join("seen.bloom");
        let staged = dir.join("seen.bloom.append");
        let params = BloomParams::optimal(1000, 0.01).unwrap();
        BloomFilter::create(&live, params).unwrap().seal().unwrap();
        round(&live, &staged, &keys("x", 20), 0);
        apply_journal(&staged, &live).unwrap();
        let good = std::fs::read(&live).unwrap();
        let array = params.file_bytes() as usize;

        let mut bad = good.clone();
        bad[array + 48 + 5] ^= 0x10;
        std::fs::write(&live, &bad).unwrap();
        let e = BloomFilter::open_read_only(&live).unwrap_err().to_string();
        assert!(e.contains("checksum") && e.contains("seen.bloom"), "{e}");
        let e = BloomFilter::open(&live).unwrap_err().to_string();
        assert!(e.contains("after the bit array"), "{e}");

        std::fs::write(&live, &good[..good.len() - 7]).unwrap();
        let e = BloomFilter::load(&live).unwrap_err().to_string();
        assert!(e.contains("cut"), "{e}");

        let mut bad = good.clone();
        bad.extend_from_slice(b"garbage appended after the journal, long enough for a header");
        std::fs::write(&live, &bad).unwrap();
        let e = BloomFilter::load(&live).unwrap_err().to_string();
        assert!(e.contains("bad magic"), "{e}");

        // An append file made for another filter is not applied.
        std::fs::write(&live, &good).unwrap();
        round(&live, &staged, &keys("y", 5), 0);
        let other = dir.join("other.bloom");
        BloomFilter::create(&other, BloomParams::optimal(5000, 0.01).unwrap())
            .unwrap()
            .seal()
            .unwrap();
        let before = std::fs::read(&other).unwrap();
        let e = apply_journal(&staged, &other).unwrap_err().to_string();
        assert!(e.contains("not applied"), "{e}");
        assert_eq!(std::fs::read(&other).unwrap(), before);
        // A damaged append file is refused before anything is written.
        let mut s = std::fs::read(&staged).unwrap();
        let last = s.len() - 1;
        s[last] ^= 1;
        std::fs::write(&staged, &s).unwrap();
        assert!(check_journal_file(&staged).is_err());
        assert!(apply_journal(&staged, &live).is_err());
        assert_eq!(std::fs::read(&live).unwrap(), good);
    }
}
