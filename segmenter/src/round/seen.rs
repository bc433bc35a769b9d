//! The seen-set: `seen.bloom`, the Bloom filter of every URL ever
//! scheduled, a fast cache of the exact sets the crawl keeps anyway (the
//! fetch history, the backlog, the segments waiting; [`ExactSets`]).
//!
//! A round loads the live filter copy-on-write ([`Seen::stage`]): the scan
//! workers drop every found URL it holds, before it costs anything in the
//! sort, and keep it aside as a *suspect* instead; re-entering URLs
//! (leftover, retry, backlog) skip that check. Nothing is inserted during
//! the scan, so the check does not depend on thread timing. The suspects
//! are looked up in the exact sets ([`rescue`]): one in none of them was a
//! false positive, and is scheduled after all. Every URL that comes out of
//! the merge is then scheduled, into a segment *or* the backlog, and
//! inserted: nothing waiting is lost and nothing is scheduled twice.
//!
//! At the end of the round ([`Seen::finish`]) the filter is written in
//! proportion to what changed, into the staging directory, and the commit
//! puts it in place with the segments:
//! - *appended*: the hashes this round added, as a journal block that the
//!   commit appends to `seen.bloom` ([`common::bloom::journal`]);
//! - *folded*: once the journal would pass a quarter of the bit array, the
//!   whole filter is written anew (its journal folded into the bits);
//! - *grown*: once the filter holds more than its design load (or its
//!   estimated false-positive rate passes the target), a filter twice as
//!   large (or more, to hold the items) is rebuilt from the exact sets
//!   ([`rebuild`]), so that every round starts below its design load;
//! - *created*: the first round writes the whole filter.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use common::bloom::{BloomFilter, BloomHash, BloomParams, Journal, JournalWriter};
use common::runlog::RunLog;

use crate::error::{BLOOM_REPAIR, Error};
use crate::round::report::{BloomState, Growth};

pub mod rebuild;
pub(crate) mod rescue;

pub use rebuild::{ExactSets, rebuild};

/// The journal is folded into the bit array once it would be larger than
/// 1/FOLD_RATIO of the array: a fold writes the array, so the bytes written
/// per URL added stay bounded (16 for its hash in a block, plus at most
/// 16 × FOLD_RATIO for its share of the next fold).
pub const FOLD_RATIO: u64 = 4;

/// The seen-set of the round being built.
pub(crate) struct Seen {
    bloom: BloomFilter,
    origin: Origin,
    /// The hashes this round adds.
    journal: Mutex<Journaling>,
    /// The first error writing the journal.
    journal_error: Mutex<Option<Error>>,
    /// URLs rescued this round.
    rescued: AtomicU64,
    /// The append file.
    append: PathBuf,
}

/// What becomes of the hashes a round adds.
enum Journaling {
    /// Written to the append file.
    Writing(Box<JournalWriter>),
    /// The filter is written whole at the end of the round (a new filter,
    /// or a journal that grew past the fold threshold: its append file is
    /// deleted, so that no more is written in vain).
    Whole,
}

/// Where the round's filter came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Loaded from the crawl's filter (of this format version, with this
    /// journal).
    Loaded {
        /// Its format version.
        version: u32,
        /// Its journal.
        journal: Journal,
    },
    /// Created empty with the configured parameters.
    Created,
}

/// How the end of a round writes the filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// Nothing changed.
    Unchanged,
    /// A journal block, appended by the commit.
    Appended,
    /// The whole filter, its journal folded in.
    Folded,
    /// A larger filter, rebuilt from the exact sets.
    Grown,
    /// The whole filter, new.
    Created,
}

impl Written {
    /// The word in the report.
    pub fn as_str(self) -> &'static str {
        match self {
            Written::Unchanged => "unchanged",
            Written::Appended => "appended",
            Written::Folded => "folded",
            Written::Grown => "grown",
            Written::Created => "created",
        }
    }
}

/// What the end of a round needs: where the staged files go, the exact
/// sets as they are after the round, and a design load asked for.
pub(crate) struct Finish<'a> {
    /// The staged `seen.bloom` (written whole).
    pub staged: PathBuf,
    /// The staged append file (the journal block).
    pub append: PathBuf,
    /// The exact sets after the round (for a growth).
    pub sets: &'a ExactSets,
    /// A design load asked for (`--bloom-items` given on a crawl whose
    /// filter is smaller): the filter grows to it.
    pub at_least: Option<u64>,
    /// Where the growth is logged.
    pub log: &'a RunLog,
}

impl Seen {
    /// Loads the crawl's filter `live` (or makes a new one of `items` at
    /// `fp`, when there is none); this round's additions are journaled to
    /// `append`.
    pub fn stage(live: &Path, append: &Path, items: u64, fp: f64) -> Result<Seen, Error> {
        let (bloom, origin, journal) = if live.exists() {
            let bloom = BloomFilter::load(live).map_err(Error::damaged(BLOOM_REPAIR))?;
            bloom.verify().map_err(Error::damaged(BLOOM_REPAIR))?;
            let origin = Origin::Loaded {
                version: bloom.version(),
                journal: bloom.journal(),
            };
            let journal = Journaling::Writing(Box::new(JournalWriter::create(append, &bloom)?));
            (bloom, origin, journal)
        } else {
            let params = BloomParams::optimal(items, fp)?;
            let bloom = BloomFilter::empty(live, params)?;
            (bloom, Origin::Created, Journaling::Whole)
        };
        Ok(Seen {
            bloom,
            origin,
            append: append.to_path_buf(),
            journal: Mutex::new(journal),
            journal_error: Mutex::new(None),
            rescued: AtomicU64::new(0),
        })
    }

    /// Where the filter came from.
    pub fn origin(&self) -> Origin {
        self.origin
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
    /// that the journal and the file are the same on every run).
    pub fn insert(&self, hash: BloomHash) {
        if !self.bloom.insert_hash(hash) {
            return;
        }
        let mut journal = self.journal.lock().expect("no panics");
        let Journaling::Writing(w) = &mut *journal else {
            return;
        };
        let pushed = w.push(hash).map_err(Error::from);
        let fold = pushed.is_ok() && self.fold_needed(w.len());
        // Past the fold threshold, the filter is written whole.
        let pushed = pushed.and_then(|()| match fold {
            true => {
                *journal = Journaling::Whole;
                remove_if_there(&self.append)
            }
            false => Ok(()),
        });
        if let Err(e) = pushed {
            *journal = Journaling::Whole;
            self.journal_error
                .lock()
                .expect("no panics")
                .get_or_insert(e);
        }
    }

    /// True if a journal block of `hashes` would take the journal past a
    /// [`FOLD_RATIO`]th of the bit array.
    fn fold_needed(&self, hashes: u64) -> bool {
        let before = match self.origin {
            Origin::Loaded { journal, .. } => journal.bytes,
            Origin::Created => 0,
        };
        let block = common::bloom::journal::BLOCK_HEADER_BYTES
            + hashes * common::bloom::journal::HASH_BYTES;
        (before + block) * FOLD_RATIO > self.bloom.params().bits / 8
    }

    /// Counts `n` URLs rescued this round.
    pub fn add_rescued(&self, n: u64) {
        self.rescued.fetch_add(n, Ordering::Relaxed);
    }

    /// The design load the filter must grow to, if it must: twice the
    /// current one, doubled again until it is more than the items (and at
    /// least `at_least`). The items are the larger of the count kept and the
    /// count estimated from the fill, −(m/k)·ln(1 − fill): an overfull
    /// filter counts too few, since most URLs set no new bit. `bits_set`:
    /// the bits set now.
    fn grown_design(&self, bits_set: u64, at_least: Option<u64>) -> Option<u64> {
        let p = self.bloom.params();
        let fill = bits_set as f64 / p.bits as f64;
        let estimated = -(p.bits as f64 / f64::from(p.hashes)) * (1.0 - fill).ln();
        // (A filter whose every bit is set gives no estimate: the rebuild
        // then reads the exact sets twice, see `grow`.)
        let estimated = if estimated.is_finite() {
            estimated as u64
        } else {
            0
        };
        let items = self.bloom.items().max(estimated);
        let asked = at_least.filter(|&n| n > p.expected_items);
        let full = items > p.expected_items || fill.powi(p.hashes as i32) > p.target_fp_rate;
        if !full && asked.is_none() {
            return None;
        }
        Some(doubled(p.expected_items, items.max(asked.unwrap_or(0))))
    }

    /// Writes what the round changed into the staging directory (a journal
    /// block, or the whole filter, folded, new or grown) and returns the
    /// filter's state for the report.
    pub fn finish(self, f: &Finish) -> Result<BloomState, Error> {
        if let Some(e) = self.journal_error.lock().expect("no panics").take() {
            return Err(e);
        }
        let rescued = self.bloom.rescued() + self.rescued.load(Ordering::Relaxed);
        self.bloom.set_rescued(rescued);
        let journal = std::mem::replace(
            &mut *self.journal.lock().expect("no panics"),
            Journaling::Whole,
        );
        let before = match self.origin {
            Origin::Loaded { journal, .. } => journal,
            Origin::Created => Journal::default(),
        };
        let array = self.bloom.params().file_bytes();
        let counters = self.bloom.counters();
        if let Some(design) = self.grown_design(counters.bits_set, f.at_least) {
            drop(journal);
            remove_if_there(&f.append)?;
            return self.grow(design, f);
        }
        let (written, bytes, file_bytes) = match journal {
            Journaling::Whole => {
                remove_if_there(&f.append)?;
                let n = self.bloom.write_file(&f.staged)?;
                match self.origin {
                    Origin::Created => (Written::Created, n, n),
                    Origin::Loaded { .. } => (Written::Folded, n, n),
                }
            }
            Journaling::Writing(w) if w.is_empty() && self.rescued.load(Ordering::Relaxed) == 0 => {
                drop(w);
                remove_if_there(&f.append)?;
                (Written::Unchanged, 0, array + before.bytes)
            }
            Journaling::Writing(w) => {
                let block = w.finish(&counters)?;
                (Written::Appended, block, array + before.bytes + block)
            }
        };
        Ok(state_of(
            &self.bloom,
            counters.bits_set,
            written,
            bytes,
            file_bytes,
        ))
    }

    /// Rebuilds a filter for `design` URLs from the exact sets into the
    /// staged `seen.bloom`: once, or twice if the exact sets hold more than
    /// the design load (the second time for more than the URLs read).
    fn grow(self, design: u64, f: &Finish) -> Result<BloomState, Error> {
        let old = self.bloom.params();
        let started = Instant::now();
        let mut design = design;
        let (new, counts) = loop {
            let params = BloomParams::optimal(design, old.target_fp_rate)?;
            remove_if_there(&f.staged)?;
            let mut new = BloomFilter::create(&f.staged, params)?;
            let counts = rebuild(f.sets, &mut new, Some(f.log))?;
            if new.items() < design || design > counts.urls() {
                break (new, counts);
            }
            design = doubled(design, counts.urls());
        };
        crate::round::commit::pause_point("grown");
        new.set_rescued(self.bloom.rescued());
        new.seal()?;
        let params = new.params();
        let seconds = started.elapsed().as_secs_f64();
        let growth = Growth {
            from_items: old.expected_items,
            to_items: design,
            from_bytes: old.file_bytes(),
            to_bytes: params.file_bytes(),
            items_before: self.bloom.items(),
            urls_read: counts.urls(),
            seconds,
        };
        f.log.info(format_args!(
            "{}: grown from {} to {} URLs ({} to {} bytes) in {seconds:.3} s: {} items were \
             in it; rebuilt from {} URLs of the exact sets ({}), {} items now",
            self.bloom.path().display(),
            growth.from_items,
            growth.to_items,
            growth.from_bytes,
            growth.to_bytes,
            growth.items_before,
            counts.urls(),
            counts.describe(),
            new.items()
        ));
        let bits_set = new.recorded_bits_set();
        let mut state = state_of(
            &new,
            bits_set,
            Written::Grown,
            params.file_bytes(),
            params.file_bytes(),
        );
        state.growth = Some(growth);
        Ok(state)
    }
}

/// `design` doubled, and doubled again until it is more than `items`.
fn doubled(design: u64, items: u64) -> u64 {
    let mut d = design.saturating_mul(2);
    while d <= items {
        d = d.saturating_mul(2);
    }
    d
}

/// The report's view of `bloom` with `bits_set` bits set, written as `written`.
fn state_of(
    bloom: &BloomFilter,
    bits_set: u64,
    written: Written,
    written_bytes: u64,
    file_bytes: u64,
) -> BloomState {
    let p = bloom.params();
    let fill = bits_set as f64 / p.bits as f64;
    BloomState {
        items: bloom.items(),
        expected_items: p.expected_items,
        fill,
        fp_rate: fill.powi(p.hashes as i32),
        target_fp_rate: p.target_fp_rate,
        bits_per_item: bloom.bits_per_item(),
        bytes: file_bytes,
        rescued_total: bloom.rescued(),
        commit: written.as_str(),
        written: written_bytes,
        growth: None,
    }
}

fn remove_if_there(path: &Path) -> Result<(), Error> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(path)(e)),
        _ => Ok(()),
    }
}
