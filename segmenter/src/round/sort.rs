//! External merge sort of candidates with bounded memory.
//!
//! The order is that of the key `domain TAB host TAB hash url` (see
//! [`crate::round::candidates::push_key`]): hosts in (registrable domain, host)
//! order, and within a host by the URL's 16-byte Bloom hash, then the URL.
//!
//! Each worker thread owns a [`Sorter`] with its share of `--memory`. A
//! sorter interns hosts in a small table and appends URLs to one byte arena;
//! its index holds, per URL, the host's number, the first half of the hash
//! and the arena offset. To sort, it ranks its hosts by name and sorts the
//! index by (rank, hash): integer comparisons that rarely touch the arena.
//! When memory is full it writes the sorted index as a *spill*: a
//! zstd-compressed file of full keys with the copies of each URL merged.
//! At the end, [`merge`] reads every spill and every sorter's in-memory
//! remainder at once (a k-way merge, in several passes when there are more
//! than `fan_in` sources) and yields each URL once, its copies merged with
//! [`Meta::absorb`]. Since that merge does not depend on the order of the
//! copies, the output is the same whatever the memory limit or the number of
//! threads.
//!
//! Besides its [`Meta`], a candidate may carry a few bytes that are not
//! merged but kept from one copy (a refetch's last fetch, see
//! [`crate::round::candidates::LastFetch`]): they ride after the URL in the arena
//! and after the meta in spill files, and copies keep the newest.
//!
//! Spill file records: LEB128 key length, key bytes, LEB128 hops, inlinks,
//! tries and not-before second, one byte `via`, one byte of flags
//! (`exempt`, `fetched`, `rescued`), LEB128 length of the carried bytes and
//! the bytes.

use std::collections::HashMap;
use std::collections::hash_map::Entry as Slot;
use std::fs::{self, File};
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use common::bloom::BloomHash;
use common::urlnorm::registrable_domain;

use crate::fasthash::FastHash;

use crate::error::Error;
use crate::round::candidates::{LastFetch, Meta, domain_host, push_key};

/// Arena bytes per URL before the URL: its length, meta and hash tail.
const HEADER: usize = 4 + Meta::ENCODED_LEN + 8;
/// Arena bytes per URL after the URL: the length of its carried bytes.
const TRAILER: usize = 2;
/// The most bytes a candidate carries (a refetch whose validators are
/// longer loses them: its refetch is an unconditional one).
pub const MAX_CARRIED: usize = u16::MAX as usize;
/// Size of one index entry.
const ENTRY: usize = std::mem::size_of::<Entry>();
/// Bytes counted per interned host besides its name (hash table entry,
/// name vector and allocation).
const HOST_OVERHEAD: usize = 112;
/// The arena is addressed with `u32` offsets.
const MAX_ARENA: usize = u32::MAX as usize;

/// Where spill files go; shared by all sorters of one round.
#[derive(Debug)]
pub struct SpillDir {
    dir: PathBuf,
    next: AtomicU64,
    spilled: AtomicU64,
}

impl SpillDir {
    /// Uses (and creates) `dir` for spill files.
    pub fn new(dir: impl Into<PathBuf>) -> io::Result<Arc<SpillDir>> {
        let dir = dir.into();
        fs::create_dir_all(&dir)?;
        Ok(Arc::new(SpillDir {
            dir,
            next: AtomicU64::new(0),
            spilled: AtomicU64::new(0),
        }))
    }

    /// A fresh spill file name in the directory.
    pub(crate) fn new_path(&self) -> PathBuf {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        self.dir.join(format!("spill-{n:06}.zst"))
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Runs written so far (merge passes included).
    pub fn spills_written(&self) -> u64 {
        self.next.load(Ordering::Relaxed)
    }

    /// Compressed bytes written to spills so far.
    pub fn bytes_spilled(&self) -> u64 {
        self.spilled.load(Ordering::Relaxed)
    }
}

/// One URL in a sorter's index.
#[derive(Debug, Clone, Copy)]
struct Entry {
    /// The first half of the URL's hash.
    hash: u64,
    /// The host's number in the table; its rank once sorted.
    host: u32,
    /// Where the rest of the record is in the arena.
    offset: u32,
}

/// Hosts seen by one sorter since its last spill, numbered in order of
/// arrival. The table is keyed by a 64-bit hash of the name, and each entry
/// holds the name's first bytes, so a lookup checks the name in the same
/// cache line instead of one more memory access per URL (which cost a
/// quarter of the scan's time). Names whose hash is already taken by another
/// host go to a second table keyed by the name itself: two hosts are never
/// taken for one.
struct HostTable {
    ids: HashMap<u64, Known, FastHash>,
    /// Hosts whose hash collided with an earlier host's.
    collided: HashMap<String, u32, FastHash>,
    /// `domain TAB host` by number.
    names: Vec<Vec<u8>>,
    bytes: usize,
    last: Option<(String, u32)>,
    /// The hash of a name (a parameter so that tests can force collisions).
    hash: fn(&[u8]) -> u64,
}

/// Bytes of a host name kept in the hash table (longer names are compared
/// in full against `HostTable::names`).
const INLINE_NAME: usize = 40;

/// A host in the hash table: its number and the start of its name.
#[derive(Clone, Copy)]
struct Known {
    id: u32,
    len: u32,
    head: [u8; INLINE_NAME],
}

impl Known {
    fn new(id: u32, host: &[u8]) -> Known {
        let mut head = [0; INLINE_NAME];
        let n = host.len().min(INLINE_NAME);
        head[..n].copy_from_slice(&host[..n]);
        Known {
            id,
            len: host.len() as u32,
            head,
        }
    }

    /// True if this is `host` (`names` holds the full names).
    fn is(&self, host: &[u8], names: &[Vec<u8>]) -> bool {
        let n = host.len().min(INLINE_NAME);
        self.len as usize == host.len()
            && self.head[..n] == host[..n]
            && (host.len() <= INLINE_NAME || names[self.id as usize].ends_with(host))
    }
}

impl Default for HostTable {
    fn default() -> HostTable {
        HostTable {
            ids: HashMap::default(),
            collided: HashMap::default(),
            names: Vec::new(),
            bytes: 0,
            last: None,
            hash: xxhash_rust::xxh3::xxh3_64,
        }
    }
}

impl HostTable {
    fn id(&mut self, host: &str) -> u32 {
        if let Some((h, id)) = &self.last
            && h == host
        {
            return *id;
        }
        let next = self.names.len() as u32;
        let id = match self.ids.entry((self.hash)(host.as_bytes())) {
            Slot::Vacant(slot) => slot.insert(Known::new(next, host.as_bytes())).id,
            Slot::Occupied(slot) if slot.get().is(host.as_bytes(), &self.names) => slot.get().id,
            Slot::Occupied(_) => match self.collided.get(host) {
                Some(&id) => id,
                None => *self.collided.entry(host.to_string()).or_insert(next),
            },
        };
        if id == next {
            let mut name = Vec::new();
            domain_host(&mut name, registrable_domain(host), host);
            self.bytes += name.len() + HOST_OVERHEAD;
            self.names.push(name);
        }
        match &mut self.last {
            Some((h, last)) => {
                h.clear();
                h.push_str(host);
                *last = id;
            }
            None => self.last = Some((host.to_string(), id)),
        }
        id
    }

    fn clear(&mut self) {
        self.ids.clear();
        self.collided.clear();
        self.names.clear();
        self.bytes = 0;
        self.last = None;
    }
}

/// Collects candidates and writes them, sorted, to a spill file when its memory
/// is full.
pub struct Sorter {
    spills: Arc<SpillDir>,
    hosts: HostTable,
    arena: Vec<u8>,
    index: Vec<Entry>,
    budget: usize,
    index_cap: usize,
    spilled: Vec<PathBuf>,
}

impl Sorter {
    /// A sorter that keeps at most about `budget` bytes in memory; an
    /// error if that much cannot be reserved.
    pub fn new(spills: Arc<SpillDir>, budget: usize) -> Result<Sorter, Error> {
        // Index entries take 16 bytes, records about 80: give the index a
        // sixth. Capacity is reserved up front (pages are only touched as
        // they fill), so the buffers never reallocate.
        let budget = budget.max(4096);
        let index_cap = (budget / 6 / ENTRY).max(16);
        let arena_cap = (budget - index_cap * ENTRY).min(MAX_ARENA);
        let mut arena = Vec::new();
        let mut index = Vec::new();
        arena
            .try_reserve_exact(arena_cap)
            .and_then(|()| index.try_reserve_exact(index_cap))
            .map_err(|e| {
                Error::Usage(format!(
                    "--memory: cannot reserve {} bytes of sort memory for a thread ({e}); \
                     give a smaller --memory",
                    arena_cap + index_cap * ENTRY
                ))
            })?;
        advise_huge_pages(arena.as_ptr(), arena_cap);
        Ok(Sorter {
            spills,
            hosts: HostTable::default(),
            arena,
            index,
            budget,
            index_cap,
            spilled: Vec::new(),
        })
    }

    /// Adds a candidate.
    pub fn push(
        &mut self,
        host: &str,
        url: &str,
        hash: BloomHash,
        meta: Meta,
    ) -> Result<(), Error> {
        self.push_carrying(host, url, hash, meta, &[])
    }

    /// Adds a candidate that carries `carried` (see the module doc; at most
    /// [`MAX_CARRIED`] bytes are kept, more are dropped).
    pub fn push_carrying(
        &mut self,
        host: &str,
        url: &str,
        hash: BloomHash,
        meta: Meta,
        carried: &[u8],
    ) -> Result<(), Error> {
        let carried = if carried.len() > MAX_CARRIED {
            &[][..]
        } else {
            carried
        };
        let need = HEADER + url.len() + TRAILER + carried.len();
        let used = self.arena.len() + self.index.len() * ENTRY + self.hosts.bytes;
        if !self.index.is_empty()
            && (used + need + host.len() + HOST_OVERHEAD > self.budget
                || self.index.len() == self.index_cap
                || self.arena.len() + need > MAX_ARENA)
        {
            self.spill()?;
        }
        let offset = self.arena.len();
        if offset + need > MAX_ARENA {
            return Err(Error::Io {
                path: self.spills.path().to_path_buf(),
                source: io::Error::other(format!("sort record of {need} bytes: too large")),
            });
        }
        let host = self.hosts.id(host);
        self.arena
            .extend_from_slice(&(url.len() as u32).to_le_bytes());
        self.arena.extend_from_slice(&meta.encode());
        self.arena.extend_from_slice(&hash.1.to_le_bytes());
        self.arena.extend_from_slice(url.as_bytes());
        self.arena
            .extend_from_slice(&(carried.len() as u16).to_le_bytes());
        self.arena.extend_from_slice(carried);
        self.index.push(Entry {
            hash: hash.0,
            host,
            offset: offset as u32,
        });
        Ok(())
    }

    /// Sorts the index; returns the host names in rank order.
    fn sort(&mut self) -> Vec<Vec<u8>> {
        let mut order: Vec<u32> = (0..self.hosts.names.len() as u32).collect();
        let names = &self.hosts.names;
        order.sort_unstable_by(|&a, &b| names[a as usize].cmp(&names[b as usize]));
        let mut rank = vec![0u32; order.len()];
        for (r, &id) in order.iter().enumerate() {
            rank[id as usize] = r as u32;
        }
        for e in &mut self.index {
            e.host = rank[e.host as usize];
        }
        let arena = &self.arena;
        self.index.sort_unstable_by(|a, b| {
            (a.host, a.hash)
                .cmp(&(b.host, b.hash))
                .then_with(|| tail(arena, a.offset).cmp(&tail(arena, b.offset)))
        });
        let mut names = std::mem::take(&mut self.hosts.names);
        self.hosts.clear();
        let mut by_rank = Vec::with_capacity(order.len());
        for &id in &order {
            by_rank.push(std::mem::take(&mut names[id as usize]));
        }
        by_rank
    }

    /// Sorts what is in memory and writes it as a spill.
    fn spill(&mut self) -> Result<(), Error> {
        let names = self.sort();
        let path = self.spills.new_path();
        let mut w = SpillWriter::create(&path)?;
        let mut mem = MemSource::new(
            std::mem::take(&mut self.arena),
            std::mem::take(&mut self.index),
            names,
        );
        let result = (|| {
            let mut key = Vec::new();
            let mut meta = Meta::decode(&[0; Meta::ENCODED_LEN]);
            let mut carried = Vec::new();
            while mem.next_merged(&mut key, &mut meta, &mut carried) {
                w.write(&key, &meta, &carried)?;
            }
            w.finish()
        })();
        // Keep the buffers' capacity for the next batch.
        let (arena, index) = mem.into_buffers();
        self.arena = arena;
        self.index = index;
        let bytes = result?;
        self.spills.spilled.fetch_add(bytes, Ordering::Relaxed);
        self.spilled.push(path);
        Ok(())
    }

    /// Sorts the in-memory remainder; the result goes to [`merge`].
    pub fn finish(mut self) -> Sorted {
        let memory = if self.index.is_empty() {
            None
        } else {
            let names = self.sort();
            Some(MemSource::new(
                std::mem::take(&mut self.arena),
                std::mem::take(&mut self.index),
                names,
            ))
        };
        Sorted {
            memory,
            spills: self.spilled,
        }
    }
}

/// A sorter's output: spill files and a sorted in-memory remainder.
pub struct Sorted {
    memory: Option<MemSource>,
    spills: Vec<PathBuf>,
}

impl Sorted {
    /// Sorted spill files (of this round's spill directory: the merge may
    /// remove them).
    pub fn of_spills(spills: Vec<PathBuf>) -> Sorted {
        Sorted {
            memory: None,
            spills,
        }
    }
}

/// The part of a record compared after (host rank, first hash half): the
/// second hash half and the URL.
fn tail(arena: &[u8], offset: u32) -> (u64, &[u8]) {
    let o = offset as usize;
    let len = u32::from_le_bytes(arena[o..o + 4].try_into().expect("4 bytes")) as usize;
    let h = o + 4 + Meta::ENCODED_LEN;
    let hash = u64::from_le_bytes(arena[h..h + 8].try_into().expect("8 bytes"));
    (hash, &arena[o + HEADER..o + HEADER + len])
}

/// The carried bytes of the record at `offset`.
fn carried(arena: &[u8], offset: u32) -> &[u8] {
    let o = offset as usize;
    let len = u32::from_le_bytes(arena[o..o + 4].try_into().expect("4 bytes")) as usize;
    let c = o + HEADER + len;
    let n = u16::from_le_bytes([arena[c], arena[c + 1]]) as usize;
    &arena[c + TRAILER..c + TRAILER + n]
}

/// A sorted in-memory batch, read in order as full keys.
struct MemSource {
    arena: Vec<u8>,
    index: Vec<Entry>,
    names: Vec<Vec<u8>>,
    pos: usize,
    key: Vec<u8>,
    meta: Meta,
    carried: Vec<u8>,
}

impl MemSource {
    fn new(arena: Vec<u8>, index: Vec<Entry>, names: Vec<Vec<u8>>) -> MemSource {
        MemSource {
            arena,
            index,
            names,
            pos: 0,
            key: Vec::new(),
            meta: Meta::decode(&[0; Meta::ENCODED_LEN]),
            carried: Vec::new(),
        }
    }

    /// Loads the record at `pos` into `key`/`meta`; false past the end.
    fn load(&mut self) -> bool {
        let Some(e) = self.index.get(self.pos).copied() else {
            return false;
        };
        // Start fetching a record a few places ahead: the arena is read in
        // index order, which is random order in memory.
        if let Some(ahead) = self.index.get(self.pos + 16) {
            prefetch(&self.arena, ahead.offset as usize);
            prefetch(&self.arena, ahead.offset as usize + 64);
        }
        let o = e.offset as usize;
        let (h2, url) = tail(&self.arena, e.offset);
        self.meta = Meta::decode(&self.arena[o + 4..o + 4 + Meta::ENCODED_LEN]);
        self.carried.clear();
        self.carried
            .extend_from_slice(carried(&self.arena, e.offset));
        self.key.clear();
        push_key(
            &mut self.key,
            &self.names[e.host as usize],
            BloomHash(e.hash, h2),
            url,
        );
        true
    }

    /// The next URL with its copies in this batch merged.
    fn next_merged(&mut self, key: &mut Vec<u8>, meta: &mut Meta, carried: &mut Vec<u8>) -> bool {
        if !self.load() {
            return false;
        }
        std::mem::swap(key, &mut self.key);
        *meta = self.meta;
        std::mem::swap(carried, &mut self.carried);
        self.pos += 1;
        while self.load() && self.key == *key {
            meta.absorb(&self.meta);
            LastFetch::keep_newest(carried, &self.carried);
            self.pos += 1;
        }
        true
    }

    fn into_buffers(self) -> (Vec<u8>, Vec<Entry>) {
        let (mut arena, mut index) = (self.arena, self.index);
        arena.clear();
        index.clear();
        (arena, index)
    }
}

/// Asks the kernel to back a large buffer with huge pages: the merge reads
/// the arena in sorted order, which is random order in memory, and with
/// 4 KiB pages nearly every record would cost a TLB miss. Only a hint.
fn advise_huge_pages(ptr: *const u8, len: usize) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = (ptr as usize).next_multiple_of(HUGE);
        let end = (ptr as usize + len) & !(HUGE - 1);
        if end > start {
            // SAFETY: the range lies inside an allocation this process owns;
            // MADV_HUGEPAGE changes how it is backed, never its contents.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, len);
}

/// Hints the CPU to load `buf[at..]` into cache.
#[inline]
fn prefetch(buf: &[u8], at: usize) {
    #[cfg(target_arch = "x86_64")]
    if at < buf.len() {
        // SAFETY: the address is inside `buf`; a prefetch has no other effect.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                buf.as_ptr().add(at).cast(),
            );
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (buf, at);
}

/// Writes one spill file.
pub(crate) struct SpillWriter {
    enc: zstd::stream::write::Encoder<'static, BufWriter<File>>,
    path: PathBuf,
    buf: Vec<u8>,
}

impl SpillWriter {
    /// Creates the spill file at `path`.
    pub(crate) fn create(path: &Path) -> Result<SpillWriter, Error> {
        let open = || {
            let file = File::create(path)?;
            let mut enc =
                zstd::stream::write::Encoder::new(BufWriter::with_capacity(1 << 16, file), 1)?;
            enc.include_checksum(true)?;
            enc.window_log(18)?;
            Ok(enc)
        };
        Ok(SpillWriter {
            enc: open().map_err(Error::io(path))?,
            path: path.to_path_buf(),
            buf: Vec::with_capacity(1 << 16),
        })
    }

    /// Appends a record (records must come in key order).
    pub(crate) fn write(&mut self, key: &[u8], meta: &Meta, carried: &[u8]) -> Result<(), Error> {
        put_varint(&mut self.buf, key.len() as u64);
        self.buf.extend_from_slice(key);
        put_varint(&mut self.buf, u64::from(meta.hops));
        put_varint(&mut self.buf, u64::from(meta.inlinks));
        put_varint(&mut self.buf, u64::from(meta.tries));
        put_varint(&mut self.buf, u64::from(meta.not_before_s));
        let enc = meta.encode();
        self.buf.push(enc[12]);
        self.buf.push(enc[13]);
        put_varint(&mut self.buf, carried.len() as u64);
        self.buf.extend_from_slice(carried);
        if self.buf.len() >= 1 << 16 {
            self.enc
                .write_all(&self.buf)
                .map_err(Error::io(&self.path))?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Finishes the file; returns its size.
    pub(crate) fn finish(self) -> Result<u64, Error> {
        let SpillWriter { mut enc, path, buf } = self;
        let finish = || {
            enc.write_all(&buf)?;
            let mut out = enc.finish()?;
            out.flush()?;
            drop(out);
            Ok(fs::metadata(&path)?.len())
        };
        finish().map_err(Error::io(&path))
    }
}

fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// Reads one spill file.
pub(crate) struct SpillReader {
    input: BufReader<zstd::stream::read::Decoder<'static, BufReader<File>>>,
    path: PathBuf,
    key: Vec<u8>,
    meta: Meta,
    carried: Vec<u8>,
}

impl SpillReader {
    /// Opens the spill file at `path`.
    pub(crate) fn open(path: &Path) -> Result<SpillReader, Error> {
        let dec = File::open(path)
            .and_then(zstd::stream::read::Decoder::new)
            .map_err(Error::io(path))?;
        Ok(SpillReader {
            input: BufReader::with_capacity(1 << 16, dec),
            path: path.to_path_buf(),
            key: Vec::new(),
            meta: Meta::decode(&[0; Meta::ENCODED_LEN]),
            carried: Vec::new(),
        })
    }

    /// Reads the next record; `false` at the end.
    pub(crate) fn advance(&mut self) -> Result<bool, Error> {
        self.read_record().map_err(Error::io(&self.path))
    }

    /// The current record: key, meta and carried bytes.
    pub(crate) fn record(&self) -> (&[u8], &Meta, &[u8]) {
        (&self.key, &self.meta, &self.carried)
    }

    fn read_record(&mut self) -> io::Result<bool> {
        if self.input.fill_buf()?.is_empty() {
            return Ok(false);
        }
        let len = self.varint()?;
        if len > MAX_ARENA as u64 {
            return Err(corrupt("key length"));
        }
        self.key.resize(len as usize, 0);
        self.input.read_exact(&mut self.key)?;
        let mut enc = [0u8; Meta::ENCODED_LEN];
        for (i, what) in ["hops", "inlinks", "tries"].into_iter().enumerate() {
            let v = u32::try_from(self.varint()?).map_err(|_| corrupt(what))?;
            enc[i * 4..i * 4 + 4].copy_from_slice(&v.to_le_bytes());
        }
        let not_before = u32::try_from(self.varint()?).map_err(|_| corrupt("not-before"))?;
        enc[14..18].copy_from_slice(&not_before.to_le_bytes());
        self.input.read_exact(&mut enc[12..14])?;
        self.meta = Meta::decode(&enc);
        let len = self.varint()?;
        if len > MAX_CARRIED as u64 {
            return Err(corrupt("carried length"));
        }
        self.carried.resize(len as usize, 0);
        self.input.read_exact(&mut self.carried)?;
        Ok(true)
    }

    fn varint(&mut self) -> io::Result<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let mut b = [0u8; 1];
            self.input.read_exact(&mut b)?;
            v |= u64::from(b[0] & 0x7f) << shift;
            if b[0] & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(corrupt("varint"))
    }
}

fn corrupt(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("corrupt sort spill ({what})"),
    )
}

enum Source {
    Memory(MemSource),
    Spill(SpillReader),
}

impl Source {
    fn key(&self) -> &[u8] {
        match self {
            Source::Memory(m) => &m.key,
            Source::Spill(r) => &r.key,
        }
    }
    fn meta(&self) -> Meta {
        match self {
            Source::Memory(m) => m.meta,
            Source::Spill(r) => r.meta,
        }
    }
    fn carried(&self) -> &[u8] {
        match self {
            Source::Memory(m) => &m.carried,
            Source::Spill(r) => &r.carried,
        }
    }
    /// Moves to the next record; `false` when exhausted.
    fn advance(&mut self) -> Result<bool, Error> {
        match self {
            Source::Memory(m) => {
                m.pos += 1;
                Ok(m.load())
            }
            Source::Spill(r) => r.advance(),
        }
    }
}

/// Yields every URL once, in key order, its copies merged.
pub struct Merger {
    sources: Vec<Source>,
    /// A binary min-heap of indices into `sources`, ordered by current key.
    heap: Vec<usize>,
}

impl Merger {
    fn new(sources: Vec<Source>, ready: &[bool]) -> Merger {
        let heap: Vec<usize> = (0..sources.len()).filter(|&i| ready[i]).collect();
        let mut m = Merger { sources, heap };
        for i in (0..m.heap.len() / 2).rev() {
            m.sift_down(i);
        }
        m
    }

    fn less(&self, a: usize, b: usize) -> bool {
        self.sources[self.heap[a]].key() < self.sources[self.heap[b]].key()
    }

    fn sift_down(&mut self, mut i: usize) {
        loop {
            let l = 2 * i + 1;
            if l >= self.heap.len() {
                return;
            }
            let r = l + 1;
            let c = if r < self.heap.len() && self.less(r, l) {
                r
            } else {
                l
            };
            if !self.less(c, i) {
                return;
            }
            self.heap.swap(i, c);
            i = c;
        }
    }

    /// Advances the source at the top of the heap and restores the heap.
    fn advance_top(&mut self) -> Result<(), Error> {
        let top = self.heap[0];
        if self.sources[top].advance()? {
            self.sift_down(0);
        } else {
            let last = self.heap.pop().expect("heap not empty");
            if !self.heap.is_empty() {
                self.heap[0] = last;
                self.sift_down(0);
            }
            // Free the exhausted source's memory early.
            self.sources[top] = Source::Memory(MemSource::new(Vec::new(), Vec::new(), Vec::new()));
        }
        Ok(())
    }

    /// Fills `key`, `meta` and `carried` with the next URL; `false` at
    /// the end.
    pub fn next_into(
        &mut self,
        key: &mut Vec<u8>,
        meta: &mut Meta,
        carried: &mut Vec<u8>,
    ) -> Result<bool, Error> {
        if self.heap.is_empty() {
            return Ok(false);
        }
        let top = self.heap[0];
        key.clear();
        key.extend_from_slice(self.sources[top].key());
        *meta = self.sources[top].meta();
        carried.clear();
        carried.extend_from_slice(self.sources[top].carried());
        self.advance_top()?;
        while let Some(&top) = self.heap.first() {
            if self.sources[top].key() != key.as_slice() {
                break;
            }
            meta.absorb(&self.sources[top].meta());
            LastFetch::keep_newest(carried, self.sources[top].carried());
            self.advance_top()?;
        }
        Ok(true)
    }
}

/// Merges the output of all sorters. When there are more than `fan_in`
/// sources, groups of spills are first merged into longer spills, so that no
/// more than `fan_in` files are open at once.
pub fn merge(parts: Vec<Sorted>, spills: &SpillDir, fan_in: usize) -> Result<Merger, Error> {
    let fan_in = fan_in.max(2);
    let mut memory = Vec::new();
    let mut files: std::collections::VecDeque<PathBuf> = Default::default();
    for part in parts {
        memory.extend(part.memory);
        files.extend(part.spills);
    }
    while memory.len() + files.len() > fan_in && files.len() >= 2 {
        let take = (memory.len() + files.len() - fan_in + 1)
            .min(fan_in)
            .min(files.len())
            .max(2);
        let group: Vec<PathBuf> = files.drain(..take).collect();
        let mut merger = open_sources(Vec::new(), &group)?;
        let path = spills.new_path();
        let mut w = SpillWriter::create(&path)?;
        let mut key = Vec::new();
        let mut meta = Meta::decode(&[0; Meta::ENCODED_LEN]);
        let mut carried = Vec::new();
        while merger.next_into(&mut key, &mut meta, &mut carried)? {
            w.write(&key, &meta, &carried)?;
        }
        let bytes = w.finish()?;
        spills.spilled.fetch_add(bytes, Ordering::Relaxed);
        drop(merger);
        for p in &group {
            fs::remove_file(p).map_err(Error::io(p))?;
        }
        files.push_back(path);
    }
    let files: Vec<PathBuf> = files.into();
    open_sources(memory, &files)
}

fn open_sources(memory: Vec<MemSource>, files: &[PathBuf]) -> Result<Merger, Error> {
    let mut sources = Vec::with_capacity(memory.len() + files.len());
    let mut ready = Vec::with_capacity(sources.capacity());
    for mut m in memory {
        ready.push(m.load());
        sources.push(Source::Memory(m));
    }
    for path in files {
        let mut r = SpillReader::open(path)?;
        ready.push(r.advance()?);
        sources.push(Source::Spill(r));
    }
    Ok(Merger::new(sources, &ready))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::round::candidates::split_key;
    use common::segment::Via;

    fn temp_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("segmenter-sort-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    /// The shared seeded generator, as a closure.
    fn rng(seed: u64) -> impl FnMut() -> u64 {
        let mut rng = common::testutil::Rng::new(seed);
        move || rng.next_u64()
    }

    fn link(hops: u32) -> Meta {
        Meta {
            hops,
            inlinks: 1,
            tries: 0,
            via: Via::Link,
            exempt: false,
            fetched: false,
            rescued: false,
            not_before_s: 0,
        }
    }

    /// Key, merged meta and carried bytes of every URL.
    type Sorted3 = Vec<(Vec<u8>, Meta, Vec<u8>)>;

    fn sort_all(budget: usize, threads: usize, fan_in: usize, name: &str) -> Sorted3 {
        sort_all_hashing(budget, threads, fan_in, name, xxhash_rust::xxh3::xxh3_64)
    }

    fn sort_all_hashing(
        budget: usize,
        threads: usize,
        fan_in: usize,
        name: &str,
        host_hash: fn(&[u8]) -> u64,
    ) -> Sorted3 {
        let dir = temp_dir(name);
        let spills = SpillDir::new(&dir).unwrap();
        let mut next = rng(42);
        let mut sorters: Vec<Sorter> = (0..threads)
            .map(|_| {
                let mut s = Sorter::new(spills.clone(), budget).unwrap();
                s.hosts.hash = host_hash;
                s
            })
            .collect();
        for i in 0..20_000u64 {
            let h = next() % 50;
            let p = next() % 300;
            let host = format!("h{h}.example{}.com", h % 7);
            let url = format!("http://{host}/p{p}");
            let hops = (next() % 5) as u32;
            // Some copies carry a last fetch (newest kept whatever the order).
            let carried = if i % 13 == 0 {
                format!("{:016x}\tsha1:{i}\t-\t-", next() % 1000).into_bytes()
            } else {
                Vec::new()
            };
            sorters[(i % threads as u64) as usize]
                .push_carrying(
                    &host,
                    &url,
                    BloomHash::of(url.as_bytes()),
                    link(hops),
                    &carried,
                )
                .unwrap();
        }
        let parts = sorters.into_iter().map(Sorter::finish).collect();
        let mut merger = merge(parts, &spills, fan_in).unwrap();
        let mut out = Vec::new();
        let mut key = Vec::new();
        let mut meta = link(0);
        let mut carried = Vec::new();
        while merger.next_into(&mut key, &mut meta, &mut carried).unwrap() {
            out.push((key.clone(), meta, carried.clone()));
        }
        drop(merger);
        if budget < 100_000 {
            assert!(spills.spills_written() > 10, "the small budget must spill");
        }
        fs::remove_dir_all(&dir).unwrap();
        out
    }

    #[test]
    fn spilled_sort_equals_in_memory_sort() {
        let in_memory = sort_all(64 << 20, 1, 64, "mem");
        let spilled = sort_all(16 * 1024, 2, 4, "spill");
        assert_eq!(in_memory.len(), spilled.len());
        assert_eq!(in_memory, spilled);
        // Strictly increasing keys: sorted, each URL once.
        assert!(in_memory.windows(2).all(|w| w[0].0 < w[1].0));
        // Copies were merged: in-links add up to the number pushed.
        let total: u64 = in_memory.iter().map(|(_, m, _)| u64::from(m.inlinks)).sum();
        assert_eq!(total, 20_000);
        // Hosts come in (domain, host) order, each in one block.
        let hosts: Vec<(String, String)> = in_memory
            .iter()
            .map(|(k, _, _)| {
                let p = split_key(k).unwrap();
                assert_eq!(p.hash, BloomHash::of(p.url.as_bytes()));
                (p.domain.to_string(), p.host.to_string())
            })
            .collect();
        assert!(hosts.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(hosts[0].0, "example0.com");
        // Carried bytes survived the spills: some URLs kept one.
        assert!(in_memory.iter().filter(|(_, _, c)| !c.is_empty()).count() > 100);
    }

    #[test]
    fn hosts_that_share_a_hash_are_kept_apart() {
        // Every host hashes alike: the table must tell them apart by name.
        let honest = sort_all(64 << 20, 1, 64, "hash-honest");
        let colliding = sort_all_hashing(64 << 20, 1, 64, "hash-collide", |_| 7);
        assert_eq!(honest, colliding);
        let spilled = sort_all_hashing(16 * 1024, 2, 4, "hash-collide-spill", |n| {
            u64::from(n.len() as u8)
        });
        assert_eq!(honest, spilled);
        // And each URL sits under its own host.
        for (key, _, _) in &colliding {
            let p = split_key(key).unwrap();
            assert!(p.url.starts_with(&format!("http://{}/", p.host)), "{p:?}");
        }
    }

    #[test]
    fn long_host_names_are_compared_in_full() {
        let mut t = HostTable {
            hash: |_| 1,
            ..HostTable::default()
        };
        let long = |tail: &str| format!("{}{tail}.example.com", "x".repeat(INLINE_NAME));
        let a = t.id(&long("a"));
        let b = t.id(&long("b"));
        let short = t.id("a.example.com");
        assert_eq!([a, b, short], [0, 1, 2]);
        assert_eq!(t.id(&long("a")), a);
        assert_eq!(t.id(&long("b")), b);
        assert_eq!(t.id("a.example.com"), short);
        assert_eq!(
            t.names[1],
            format!("example.com\t{}", long("b")).into_bytes()
        );
    }
}
