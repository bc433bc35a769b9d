//! Reading a round's inputs in parallel: WARC files of fetched runs,
//! leftover lists and seeds files (the backlog is read beside the merge,
//! by [`crate::round::backlog`]).
//!
//! Inputs are cut into jobs (a file, or a byte range of a seeds file); one
//! worker per thread of a rayon pool takes jobs until none is left. Each
//! worker owns its link extractor, its buffers, its share of the sort memory
//! and its counters, so the hot loop shares nothing; counters are summed at
//! the end. The WARC files are read here, the lists in [`lists`].
//!
//! What becomes a candidate, and with which hops (see docs/guide.md, "What a
//! round reads"):
//! - a link in an HTML response (status 2xx): the page's `X-Crawl-Hops` + 1
//!   (taken from the page's metadata record when the fetcher listed its
//!   links there and parsing would find the same, see [`listed`]; the
//!   reader threads keep a response and its metadata record in one batch);
//! - the `Location` of a 3xx response: also + 1 (a redirect counts as a hop,
//!   so a chain of redirects that mints new URLs ends at `max_hops` like a
//!   chain of links); of a `sitemap-file`, the same hops and `via` (a sitemap
//!   that moved);
//! - a leftover URL (never attempted) or a retry (failed, worth retrying):
//!   as it was, exempt from the seen check; a retry that already failed
//!   `max_tries` times is dropped and counted;
//! - a seed: hops 0;
//! - a stored page that was never scheduled (the fetcher followed a
//!   redirect to it within its run): recorded as seen, scheduled nowhere.
//!
//! - a sitemap a robots.txt response names (`Sitemap:` lines): hops 0,
//!   `via` `sitemap-file` (and, with `sitemap_guess`, `/sitemap.xml` of a
//!   host whose robots.txt names none);
//! - a URL a sitemap lists (a 2xx response that came as `sitemap-file` or
//!   that its host's robots.txt names, or an XML or gzip response whose
//!   root is `urlset` or `sitemapindex`): the
//!   sitemap's hops + 1, `via` `sitemap` for a page, `sitemap-file` for a
//!   sitemap of an index (see [`sitemaps`]).
//!
//! Records of robots.txt fetches (`X-Crawl-Via: robots`) give nothing else.
//!
//! Bad input (unreadable or truncated WARC files, records that are not HTTP
//! responses, pages over `max_page_size`, binary content labelled HTML,
//! malformed lines) is reported with its file and offset or line, counted
//! and skipped; the round goes on.

use std::collections::{BTreeSet, HashSet};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};

use common::bloom::BloomHash;
use common::body::{BodyDecoder, Outcome};
use common::config::segmenter::SegmenterValues;
use common::filter::Reject;
use common::filter::UrlFilter;
use common::http::ResponseHead;
use common::segment::{SegmentRecord, Via};
use common::urlnorm::{self, host_of};
use common::warc::{WarcError, WarcReader, WarcRecord};
use url::Url;

use crate::error::Error;
use crate::fasthash::FastHash;
use crate::history::{Kind, Observation};
use crate::progress::{Progress, Published};
use crate::round::candidates::{Admission, Meta};
use crate::round::counts::Counts;
use crate::round::seen::Seen;
use crate::round::seen::rescue::Suspects;
use crate::round::sort::{Sorted, Sorter, SpillDir};
use common::extract::{Body, LinkExtractor, PageSummary, redirect_target};
use common::runlog::RunLog;

mod listed;
mod lists;
mod records;
mod sitemaps;

use lists::{SeedNote, report_seed_notes};
pub use lists::{seeds_jobs, strip_comment};
pub use records::{fetched_warcs, is_page};
use sitemaps::SitemapDoc;

/// Room for the HTTP head on top of `max_page_size` when reading records.
const HEAD_ALLOWANCE: u64 = 64 * 1024;
/// Response records are handed from the readers to the workers in batches
/// of up to this many records or bytes: one hand-over per record cost a
/// tenth of the scan's CPU time in thread wake-ups.
const BATCH_RECORDS: usize = 64;
const BATCH_BYTES: usize = 1 << 20;
/// Batches kept for reuse, and the block capacity kept in each.
const SPARE_BATCHES: usize = 16;
const SPARE_BATCH_BYTES: usize = 2 * BATCH_BYTES;
/// Workers add their counts to the progress line every this many lines
/// of a list (and after every batch of records).
const PUBLISH_LINES: u64 = 1 << 16;
/// Seeds files are cut into pieces of at least this size.
const MIN_SEEDS_PIECE: u64 = 4 << 20;

/// One unit of work.
#[derive(Debug, Clone)]
pub enum Job {
    /// A WARC file (`.warc.gz` or `.warc`, of a fetched run or imported).
    Warc(PathBuf),
    /// A fetched run's `leftover.v5.tsv.zst` (or an older version's).
    Leftover(PathBuf),
    /// The backlog, read for the URLs a host rule respells (added only
    /// when a rule changes the canonical form): each goes into the sort
    /// under its host's spelling, and the backlog's stream skips its line
    /// ([`crate::round::backlog::BacklogStream`]).
    Backlog(PathBuf),
    /// A fetched run's `crawl.log`: its URLs denied by robots.txt go to
    /// the history (they have no WARC record).
    CrawlLog(PathBuf),
    /// Lines of a seeds file whose first byte lies in `start..end`.
    Seeds {
        /// The seeds file.
        path: PathBuf,
        /// Index of this piece (pieces are in file order).
        piece: usize,
        /// First byte.
        start: u64,
        /// End (exclusive).
        end: u64,
    },
}

impl Job {
    fn size(&self) -> u64 {
        match self {
            Job::Warc(p) | Job::Leftover(p) | Job::Backlog(p) | Job::CrawlLog(p) => {
                std::fs::metadata(p).map_or(0, |m| m.len())
            }
            Job::Seeds { start, end, .. } => end - start,
        }
    }
}

/// What the scan needs to know.
pub struct ScanConfig<'a> {
    /// The filters.
    pub filter: &'a UrlFilter,
    /// Diagnostics.
    pub log: &'a RunLog,
    /// The segmenter's declared settings, read by the workers as they are
    /// (`max_tries`, `max_links_per_page`, `max_page_size`, `memory`: the
    /// total sort memory they share, `metadata_outlinks`: links read from
    /// a page's `metadata` record, [`listed`]).
    pub options: &'a SegmenterValues,
    /// Our robots product token (`[agent] name`), for robots directives.
    pub robots_name: Option<&'a str>,
    /// The staged `seen.bloom` (only read during the scan).
    pub seen: &'a Seen,
    /// True for a new, empty filter: nothing to look up.
    pub seen_is_empty: bool,
    /// Keep the URLs the filter drops as suspects, to look them up in the
    /// exact sets ([`ScanOutput::suspects`]).
    pub rescue: bool,
    /// Where sort spill files go.
    pub spills: Arc<SpillDir>,
    /// Worker threads.
    pub threads: usize,
    /// Where the workers add their counts for the progress line.
    pub progress: &'a Progress,
    /// Collect what each fetch says for the history ([`ScanOutput::observed`]).
    pub observe: bool,
    /// WARC files read for the history only (runs consumed before the
    /// history existed): no links are taken from them.
    pub history_only: &'a HashSet<PathBuf>,
    /// How sitemaps are found and read.
    pub sitemaps: &'a crate::settings::SitemapSettings,
    /// `hosts.db` (read only; `None`: no file): which sitemaps each host's
    /// robots.txt names.
    pub hosts_db: &'a Mutex<Option<common::hoststate::HostDb>>,
    /// For a map of a sharded crawl: every shard's `hosts.db` (read only),
    /// so that a sitemap's URL on a host of another shard is checked
    /// against that host's robots.txt.
    pub shard_hosts_dbs: Option<ShardHostDbs<'a>>,
}

/// Every shard's `hosts.db`, by shard number.
#[derive(Clone, Copy)]
pub struct ShardHostDbs<'a> {
    /// The crawl's shards.
    pub shards: &'a common::shards::Shards,
    /// `hosts.db` of shard J at J.
    pub dbs: &'a [Mutex<Option<common::hoststate::HostDb>>],
}

/// What the scan produced.
pub struct ScanOutput {
    /// The sorters' output, for the merge.
    pub sorted: Vec<Sorted>,
    /// Summed counters.
    pub counts: Counts,
    /// Registrable domains of the valid seeds.
    pub seed_domains: BTreeSet<String>,
    /// The fetches seen, sorted for the history merge
    /// ([`crate::history::Observation`]); empty unless asked for.
    pub observed: Vec<Sorted>,
    /// The URLs the filter dropped, sorted by URL within their host, for
    /// [`crate::round::seen::rescue`]; empty unless asked for.
    pub suspects: Vec<Sorted>,
}

/// Response records of one WARC file on their way from a reader thread to
/// a worker. The record buffers travel back and forth and are reused.
#[derive(Default)]
struct Batch {
    /// Index of the file in the list of WARC files.
    file: usize,
    /// `records[..len]` are the records; the rest are spare buffers.
    records: Vec<WarcRecord>,
    len: usize,
    /// The block of each record's `metadata` record, which may list its
    /// links ([`listed`]); empty when there is none.
    metadata: Vec<Vec<u8>>,
}

impl Batch {
    /// Makes the record just read (`records[len]`) the batch's next one.
    fn accept(&mut self) {
        if self.metadata.len() <= self.len {
            self.metadata.resize_with(self.len + 1, Vec::new);
        }
        self.metadata[self.len].clear();
        self.len += 1;
    }
}

/// Spare batches, passed back from the workers to the readers.
type BatchPool = Mutex<Vec<Batch>>;

/// Runs every job. WARC files are decompressed by reader threads (at most
/// half as many as workers, and no more than files) that pass response
/// records to `cfg.threads` workers through a bounded channel, so that all
/// workers extract links even when a fetched run is one large file; the
/// workers take the other jobs (leftover, backlog, seeds) first.
pub fn scan(cfg: &ScanConfig<'_>, jobs: Vec<Job>) -> Result<ScanOutput, Error> {
    let threads = cfg.threads.max(1);
    let (jobs, warcs) = largest_first(jobs);
    let readers = warcs.len().min(threads.div_ceil(2));

    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("scan-{i}"))
        .build()
        .map_err(|e| Error::Usage(format!("cannot start {threads} threads: {e}")))?;
    let next_warc = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let batches: BatchPool = Mutex::new(Vec::new());
    let (tx, rx) = mpsc::sync_channel::<Batch>(2 * threads);
    let workers = Workers {
        cfg,
        jobs: &jobs,
        warcs: &warcs,
        next_job: AtomicUsize::new(0),
        stop: &stop,
        batches: &batches,
        rx: Mutex::new(Some(rx)),
        active: AtomicUsize::new(threads),
        sorters: Mutex::new(worker_sorters(cfg, threads)?),
        failure: Mutex::new(None),
        results: Mutex::new(Vec::new()),
    };
    let mut reader_counts = Counts::default();

    std::thread::scope(|ts| {
        let handles: Vec<_> = (0..readers)
            .map(|i| {
                let tx = tx.clone();
                let (warcs, next_warc, stop, batches) = (&warcs, &next_warc, &stop, &batches);
                std::thread::Builder::new()
                    .name(format!("warc-{i}"))
                    .spawn_scoped(ts, move || {
                        read_warcs(cfg, warcs, next_warc, stop, batches, tx)
                    })
                    .expect("a reader thread starts")
            })
            .collect();
        drop(tx);
        pool.scope(|s| {
            for _ in 0..threads {
                s.spawn(|_| workers.work());
            }
        });
        for h in handles {
            reader_counts += &h.join().expect("reader threads do not panic");
        }
    });
    if let Some(e) = workers.failure.into_inner().expect("no panics") {
        return Err(e);
    }
    let results = workers.results.into_inner().expect("no panics");
    Ok(gather(cfg, &jobs, reader_counts, results))
}

/// The WARC files apart from the other jobs, each list largest first, so
/// that the last job to finish is a small one.
fn largest_first(jobs: Vec<Job>) -> (Vec<Job>, Vec<PathBuf>) {
    let (warcs, mut jobs): (Vec<Job>, Vec<Job>) =
        jobs.into_iter().partition(|j| matches!(j, Job::Warc(_)));
    let mut warcs: Vec<PathBuf> = warcs
        .into_iter()
        .filter_map(|j| match j {
            Job::Warc(p) => Some(p),
            _ => None,
        })
        .collect();
    jobs.sort_by_cached_key(|j| std::cmp::Reverse(j.size()));
    warcs.sort_by_cached_key(|p| std::cmp::Reverse(std::fs::metadata(p).map_or(0, |m| m.len())));
    (jobs, warcs)
}

/// Each worker's sorts, with its share of the sort memory, reserved here
/// so that a --memory the machine cannot give is an error before any work.
fn worker_sorters(cfg: &ScanConfig<'_>, threads: usize) -> Result<Vec<WorkerSorters>, Error> {
    let budget = (cfg.options.memory / threads as u64) as usize;
    // Observations are one per fetched page, links tens: an eighth of the
    // memory sorts them; suspects, their copies merged first, another.
    let observe_budget = if cfg.observe { budget / 8 } else { 0 };
    let suspect_budget = if cfg.rescue { budget / 8 } else { 0 };
    (0..threads)
        .map(|_| {
            let links = Sorter::new(cfg.spills.clone(), budget - observe_budget - suspect_budget)?;
            let observed = match cfg.observe {
                true => Some(Sorter::new(cfg.spills.clone(), observe_budget)?),
                false => None,
            };
            let suspects = match cfg.rescue {
                true => Some(Suspects::new(Sorter::new(
                    cfg.spills.clone(),
                    suspect_budget,
                )?)),
                false => None,
            };
            Ok(WorkerSorters {
                links,
                observed,
                suspects,
            })
        })
        .collect()
}

/// What the scan's workers share: the jobs, the readers' batches, and
/// where their results and the first failure go.
struct Workers<'a> {
    cfg: &'a ScanConfig<'a>,
    jobs: &'a [Job],
    warcs: &'a [PathBuf],
    /// The next job to take.
    next_job: AtomicUsize,
    /// Set on the first failure: every thread stops.
    stop: &'a AtomicBool,
    batches: &'a BatchPool,
    /// The readers' batches. The last worker to stop drops the receiver,
    /// which stops the readers.
    rx: Mutex<Option<mpsc::Receiver<Batch>>>,
    /// Workers still running.
    active: AtomicUsize,
    /// One for each worker.
    sorters: Mutex<Vec<WorkerSorters>>,
    failure: Mutex<Option<Error>>,
    results: Mutex<Vec<WorkerResult>>,
}

impl Workers<'_> {
    /// One worker: takes jobs, then the readers' batches, until none is
    /// left or a worker fails; leaves its result or its failure.
    fn work(&self) {
        let sorter = self.sorters.lock().expect("no panics").pop();
        let mut w = Worker::new(self.cfg, sorter.expect("one sorter per worker"));
        if let Err(e) = self.take_work(&mut w) {
            self.stop.store(true, Ordering::Relaxed);
            self.failure.lock().expect("no panics").get_or_insert(e);
        }
        if self.active.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.rx.lock().expect("no panics").take();
        }
        match w.finish() {
            Ok(r) => self.results.lock().expect("no panics").push(r),
            Err(e) => {
                self.failure.lock().expect("no panics").get_or_insert(e);
            }
        }
    }

    /// The jobs first, then the batches of response records.
    fn take_work(&self, w: &mut Worker<'_>) -> Result<(), Error> {
        while !self.stop.load(Ordering::Relaxed) {
            let Some(job) = self.jobs.get(self.next_job.fetch_add(1, Ordering::Relaxed)) else {
                break;
            };
            w.run(job)?;
        }
        while !self.stop.load(Ordering::Relaxed) {
            let msg = {
                let guard = self.rx.lock().expect("no panics");
                match guard.as_ref().map(|r| r.recv()) {
                    Some(Ok(msg)) => msg,
                    _ => break,
                }
            };
            w.fetched(&self.warcs[msg.file], msg, self.batches)?;
        }
        Ok(())
    }
}

/// The workers' results summed (the readers' counts with them); the seeds'
/// notes are reported.
fn gather(
    cfg: &ScanConfig<'_>,
    jobs: &[Job],
    reader_counts: Counts,
    results: Vec<WorkerResult>,
) -> ScanOutput {
    let mut out = ScanOutput {
        sorted: Vec::new(),
        counts: reader_counts,
        seed_domains: BTreeSet::new(),
        observed: Vec::new(),
        suspects: Vec::new(),
    };
    let mut notes = Vec::new();
    let mut piece_lines: Vec<(usize, u64)> = Vec::new();
    for r in results {
        out.sorted.push(r.sorted);
        out.observed.extend(r.observed);
        out.suspects.extend(r.suspects);
        out.counts += &r.counts;
        out.seed_domains.extend(r.seed_domains);
        notes.extend(r.seed_notes);
        piece_lines.extend(r.piece_lines);
    }
    report_seed_notes(cfg.log, jobs, notes, piece_lines);
    out
}

/// A reader thread: takes WARC files until none is left and sends their
/// response records to the workers in batches. Problems with a file are
/// reported and counted here; the counts are returned.
fn read_warcs(
    cfg: &ScanConfig<'_>,
    warcs: &[PathBuf],
    next: &AtomicUsize,
    stop: &AtomicBool,
    pool: &BatchPool,
    tx: mpsc::SyncSender<Batch>,
) -> Counts {
    let mut counts = Counts::default();
    let reader = WarcFeed {
        cfg,
        stop,
        pool,
        tx,
        max_block: (cfg.options.max_page_size + HEAD_ALLOWANCE) as usize,
    };
    loop {
        let file = next.fetch_add(1, Ordering::Relaxed);
        let Some(path) = warcs.get(file) else {
            break;
        };
        if reader.read_file(file, path, &mut counts).is_break() {
            break;
        }
    }
    counts
}

/// A reader thread's way to the workers: the batches it fills and sends.
struct WarcFeed<'a> {
    cfg: &'a ScanConfig<'a>,
    /// Set when a worker failed.
    stop: &'a AtomicBool,
    /// Spare batches.
    pool: &'a BatchPool,
    tx: mpsc::SyncSender<Batch>,
    /// Largest record block read.
    max_block: usize,
}

impl WarcFeed<'_> {
    /// Sends the response records of WARC file number `file` in batches;
    /// breaks when the workers have stopped.
    fn read_file(&self, file: usize, path: &Path, counts: &mut Counts) -> ControlFlow<()> {
        counts.warc_files += 1;
        // An uploaded file is read from a temporary copy.
        let local = match common::store::readable(path) {
            Ok(l) => l,
            Err(e) => {
                self.cfg.log.warn(format_args!("{e}; file skipped"));
                counts.unreadable_files += 1;
                return ControlFlow::Continue(());
            }
        };
        let mut reader = match WarcReader::open(local.path(), self.max_block) {
            Ok(r) => r.resyncing(),
            Err(e) => {
                self.cfg.log.warn(format_args!("{e}; file skipped"));
                counts.unreadable_files += 1;
                return ControlFlow::Continue(());
            }
        };
        let mut batch = self.spare(file);
        let mut bytes = 0;
        let mut in_file = 0u64;
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return ControlFlow::Break(());
            }
            if batch.len == batch.records.len() {
                batch.records.push(WarcRecord::default());
            }
            match reader.read_next(&mut batch.records[batch.len]) {
                Ok(true) => {
                    counts.records += 1;
                    in_file += 1;
                    let at = batch.len;
                    if !records::is_page(&batch.records[at]) {
                        // The metadata record that follows a response goes
                        // with it (so a full batch waits for it).
                        if self.cfg.options.metadata_outlinks
                            && at > 0
                            && listed::is_metadata_of(&batch.records[at], &batch.records[at - 1])
                        {
                            std::mem::swap(
                                &mut batch.metadata[at - 1],
                                &mut batch.records[at].block,
                            );
                        }
                        continue;
                    }
                    if batch.len == BATCH_RECORDS || bytes >= BATCH_BYTES {
                        // Full: this page starts the next batch.
                        let mut next = self.spare(file);
                        if next.records.is_empty() {
                            next.records.push(WarcRecord::default());
                        }
                        std::mem::swap(&mut batch.records[at], &mut next.records[0]);
                        let full = std::mem::replace(&mut batch, next);
                        bytes = 0;
                        if self.tx.send(full).is_err() {
                            // Every worker has stopped (after an error).
                            return ControlFlow::Break(());
                        }
                    }
                    bytes += batch.records[batch.len].block.len();
                    batch.accept();
                }
                Ok(false) => {
                    if in_file == 0 {
                        counts.empty_files += 1;
                        self.cfg.log.warn(format_args!(
                            "{}: empty WARC file (no record); nothing read",
                            path.display()
                        ));
                    }
                    break;
                }
                Err(e) => {
                    let go_on = self.damage(&e, in_file == 0, counts);
                    // Damage is read past; only the record it hit is lost.
                    in_file += 1;
                    if !go_on {
                        break;
                    }
                }
            }
        }
        if batch.len > 0 {
            if self.tx.send(batch).is_err() {
                return ControlFlow::Break(());
            }
        } else {
            self.pool.lock().expect("no panics").push(batch);
        }
        ControlFlow::Continue(())
    }

    /// A spare batch for records of file number `file`.
    fn spare(&self, file: usize) -> Batch {
        let mut batch = self
            .pool
            .lock()
            .expect("no panics")
            .pop()
            .unwrap_or_default();
        batch.file = file;
        batch
    }

    /// Counts and reports an error read in a WARC file (`first`: before
    /// any record); true when the reader resumed past it.
    fn damage(&self, e: &WarcError, first: bool, counts: &mut Counts) -> bool {
        let go_on = match e {
            // Nothing readable from the start on: not a WARC file.
            WarcError::Damaged {
                offset: 0,
                resumed_at: None,
                ..
            } if first => {
                counts.unreadable_files += 1;
                false
            }
            WarcError::Damaged {
                skipped,
                resumed_at,
                ..
            } => {
                counts.damaged_records += 1;
                counts.damaged_bytes += skipped;
                resumed_at.is_some()
            }
            WarcError::Truncated { .. } => {
                counts.truncated_files += 1;
                false
            }
            _ => {
                counts.unreadable_files += 1;
                false
            }
        };
        if go_on {
            self.cfg.log.warn(format_args!("{e}"));
        } else {
            let rest = if matches!(e, WarcError::Damaged { .. }) {
                ""
            } else {
                "; the rest of the file is skipped"
            };
            self.cfg.log.warn(format_args!("{e}{rest}"));
        }
        go_on
    }
}

/// A worker's sorts: candidates, observations, suspects.
struct WorkerSorters {
    links: Sorter,
    observed: Option<Sorter>,
    suspects: Option<Suspects>,
}

struct WorkerResult {
    sorted: Sorted,
    observed: Option<Sorted>,
    suspects: Option<Sorted>,
    counts: Counts,
    seed_domains: HashSet<String, FastHash>,
    seed_notes: Vec<SeedNote>,
    piece_lines: Vec<(usize, u64)>,
}

/// One scan worker; owns everything its loop touches.
struct Worker<'a> {
    cfg: &'a ScanConfig<'a>,
    admission: Admission<'a>,
    sorter: Sorter,
    /// Sorts the fetches seen, for the history (when asked for).
    observed: Option<Sorter>,
    /// The URLs the filter dropped (when asked for).
    suspects: Option<Suspects>,
    /// The sort key's URL part of an observation (reused).
    observation: String,
    /// The records at hand come from a file read for the history only.
    history_only: bool,
    counts: Counts,
    /// What `counts` has already added to the progress line.
    published: Published,
    extractor: Option<LinkExtractor>,
    /// Decodes stored bodies (as received) before extraction.
    decoder: BodyDecoder,
    record: WarcRecord,
    /// The block of `record`'s metadata record (empty: none).
    metadata: Vec<u8>,
    segment_record: SegmentRecord,
    links: Vec<Url>,
    line: Vec<u8>,
    /// A refetch's last fetch, as a candidate carries it (reused).
    carried: Vec<u8>,
    /// Registrable domains of seeds that do not reach the sort.
    seed_domains: HashSet<String, FastHash>,
    seed_notes: Vec<SeedNote>,
    piece_lines: Vec<(usize, u64)>,
    /// The hosts' sitemaps and the entries of the sitemap at hand.
    sitemaps: sitemaps::SitemapState,
    /// The observation of the record at hand, pushed once the page is
    /// read (its canonical hint may come from its markup).
    pending: Option<(Url, Observation)>,
}

impl<'a> Worker<'a> {
    fn new(cfg: &'a ScanConfig<'a>, sorters: WorkerSorters) -> Worker<'a> {
        Worker {
            cfg,
            admission: Admission::new(cfg.filter),
            sorter: sorters.links,
            observed: sorters.observed,
            suspects: sorters.suspects,
            observation: String::new(),
            history_only: false,
            counts: Counts::default(),
            published: Published::default(),
            extractor: None,
            decoder: BodyDecoder::default(),
            record: WarcRecord::default(),
            metadata: Vec::new(),
            segment_record: SegmentRecord::default(),
            links: Vec::new(),
            line: Vec::new(),
            carried: Vec::new(),
            seed_domains: HashSet::default(),
            seed_notes: Vec::new(),
            piece_lines: Vec::new(),
            sitemaps: sitemaps::SitemapState::default(),
            pending: None,
        }
    }

    fn finish(self) -> Result<WorkerResult, Error> {
        Ok(WorkerResult {
            sorted: self.sorter.finish(),
            observed: self.observed.map(Sorter::finish),
            suspects: self.suspects.map(Suspects::finish).transpose()?,
            counts: self.counts,
            seed_domains: self.seed_domains,
            seed_notes: self.seed_notes,
            piece_lines: self.piece_lines,
        })
    }

    /// Runs one job. Problems with the input are reported and counted; only
    /// a failure to write sort spill files is returned.
    fn run(&mut self, job: &Job) -> Result<(), Error> {
        let result = match job {
            // WARC files go through the reader threads.
            Job::Warc(_) => Ok(()),
            Job::Leftover(path) => self.segment_file(path, false),
            Job::Backlog(path) => self.segment_file(path, true),
            Job::CrawlLog(path) => self.robots_denied(path),
            Job::Seeds {
                path,
                piece,
                start,
                end,
            } => self.seeds(path, *piece, *start, *end),
        };
        self.publish();
        result
    }

    /// Adds the counts since the last call to the progress line.
    fn publish(&mut self) {
        self.cfg.progress.publish(&self.counts, &mut self.published);
    }

    /// Records a page the fetcher stored: if it was never scheduled (the
    /// fetcher followed a redirect to it), it goes through the sort marked
    /// `fetched`, so that it is recorded as seen and not scheduled again.
    fn mark_fetched(&mut self, page: &Url, hops: u32) -> Result<(), Error> {
        let formed = self.host_form(page);
        let page = formed.as_ref().unwrap_or(page);
        let hash = BloomHash::of(page.as_str().as_bytes());
        if self.cfg.seen.contains(hash) {
            return Ok(());
        }
        let meta = Meta {
            hops,
            inlinks: 0,
            tries: 0,
            via: Via::Redirect,
            exempt: false,
            fetched: true,
            rescued: false,
            not_before_s: 0,
        };
        self.sorter.push(host_of(page), page.as_str(), hash, meta)
    }

    /// Keeps what a page record says about its fetch for the history's
    /// sort ([`Worker::flush_observation`] pushes it), with the canonical
    /// URL the page names: from its metadata record (the fetcher's
    /// `crawlCanonical`) or its `Link` header here, else from its markup
    /// when it is parsed.
    fn observe(&mut self, page: &Url, head: Option<&ResponseHead>, hops: u32) {
        if self.observed.is_none() {
            return;
        }
        let Some(h) = head else {
            self.counts.unobserved += 1;
            return;
        };
        let Some(mut obs) = records::observation(&self.record, h, hops) else {
            self.counts.unobserved += 1;
            return;
        };
        if obs.kind == Kind::Full {
            obs.canonical = match listed::canonical(&self.metadata) {
                Some(listed) => listed.to_string(),
                None => (common::extract::header_canonical(page, h))
                    .map(String::from)
                    .unwrap_or_default(),
            };
        }
        self.pending = Some((page.clone(), obs));
    }

    /// Pushes the observation kept by [`Worker::observe`], if any.
    fn flush_observation(&mut self) -> Result<(), Error> {
        match self.pending.take() {
            Some((page, obs)) => self.push_observation(&page, &obs),
            None => Ok(()),
        }
    }

    /// Adds an observation of the (canonical) URL `page` to the history's sort.
    fn push_observation(&mut self, page: &Url, obs: &Observation) -> Result<(), Error> {
        let formed = self.host_form(page);
        let page = formed.as_ref().unwrap_or(page);
        let Some(sorter) = &mut self.observed else {
            return Ok(());
        };
        obs.encode(page.as_str(), &mut self.observation);
        let meta = link_meta(0, Via::Link);
        // A zero hash: a host's observations sort by URL, then time.
        sorter.push(host_of(page), &self.observation, BloomHash(0, 0), meta)
    }

    /// Adds an admitted candidate to the sort, unless it was scheduled in
    /// an earlier round (re-entering URLs are not checked). False if it was.
    fn push(&mut self, url: &Url, meta: Meta) -> Result<bool, Error> {
        self.push_carrying(url, meta, &[])
    }

    /// [`Worker::push`] for a candidate that carries a refetch's last
    /// fetch ([`crate::round::candidates::LastFetch`]).
    fn push_carrying(&mut self, url: &Url, mut meta: Meta, carried: &[u8]) -> Result<bool, Error> {
        let formed = self.host_form(url);
        let url = formed.as_ref().unwrap_or(url);
        // A URL that waited under another spelling (a leftover written
        // before its host's rule) is new under this one: checked like a link.
        meta.exempt &= formed.is_none();
        let hash = BloomHash::of(url.as_str().as_bytes());
        if !meta.exempt && !self.cfg.seen_is_empty && self.cfg.seen.contains(hash) {
            self.counts.dupes += 1;
            if let Some(suspects) = &mut self.suspects {
                suspects.add(host_of(url), url.as_str(), hash, meta)?;
            }
            return Ok(false);
        }
        self.counts.candidates += 1;
        self.sorter
            .push_carrying(host_of(url), url.as_str(), hash, meta, carried)?;
        Ok(true)
    }

    /// The crawl's host rules.
    fn host_rules(&self) -> &common::rules::HostRules {
        &self.cfg.filter.scope.host_rules
    }

    /// `url` in the canonical form its host's rules give it
    /// ([`common::rules::HostRules::host_form`]), when that is another
    /// spelling: every URL the scan adds to a sort (candidates, fetches,
    /// observations) goes through here, so that a host's spellings merge.
    fn host_form(&self, url: &Url) -> Option<Url> {
        let rules = self.host_rules();
        if !rules.changes_canonical_form() {
            return None;
        }
        let formed = rules.host_form(url.clone());
        (formed != *url).then_some(formed)
    }

    /// A batch of response records from a reader thread; its buffers go
    /// back to the pool afterwards.
    fn fetched(&mut self, path: &Path, mut batch: Batch, pool: &BatchPool) -> Result<(), Error> {
        let mut result = Ok(());
        self.history_only = self.cfg.history_only.contains(path);
        let pages = batch.records[..batch.len]
            .iter_mut()
            .zip(&mut batch.metadata);
        for (record, metadata) in pages {
            std::mem::swap(&mut self.record, record);
            std::mem::swap(&mut self.metadata, metadata);
            result = self.warc_record(path);
            std::mem::swap(&mut self.record, record);
            std::mem::swap(&mut self.metadata, metadata);
            if result.is_err() {
                break;
            }
        }
        // Keep a few batches for the readers, but not the memory of huge
        // pages: at most SPARE_BATCH_BYTES of buffers in each.
        let mut kept = 0;
        for record in &mut batch.records {
            if kept + record.block.capacity() > SPARE_BATCH_BYTES {
                *record = WarcRecord::default();
            }
            kept += record.block.capacity();
        }
        for metadata in &mut batch.metadata {
            if kept + metadata.capacity() > SPARE_BATCH_BYTES {
                *metadata = Vec::new();
            }
            kept += metadata.capacity();
        }
        batch.len = 0;
        self.publish();
        let mut spare = pool.lock().expect("no panics");
        if spare.len() < SPARE_BATCHES {
            spare.push(batch);
        }
        result
    }

    /// Counts and reports a response over `--max-page-size`, not read.
    fn skip_too_large(&mut self, path: &Path, offset: u64, page: &Url) {
        self.counts.too_large += 1;
        self.cfg.log.warn(format_args!(
            "{}: offset {offset}: {page}: response larger than --max-page-size ({} bytes); skipped",
            path.display(),
            self.cfg.options.max_page_size
        ));
    }

    /// One record of a fetched run: a robots.txt response gives its
    /// sitemaps; any other page is marked fetched and observed, then gives
    /// its redirect's target (3xx), or the URLs of a sitemap or the links of
    /// an HTML page (2xx).
    fn warc_record(&mut self, path: &Path) -> Result<(), Error> {
        let read = self.read_record(path);
        let pushed = self.flush_observation();
        read.and(pushed)
    }

    /// [`Worker::warc_record`], but for the push of its observation.
    fn read_record(&mut self, path: &Path) -> Result<(), Error> {
        // robots.txt is the fetcher's business: its redirects are not links
        // and its URL is never scheduled. Only its sitemaps are read.
        let via = self
            .record
            .header(common::warc::VIA_FIELD)
            .and_then(|v| Via::parse(v.trim()));
        if via == Some(Via::Robots) {
            return self.robots_record();
        }
        self.counts.responses += 1;
        let offset = self.record.offset;
        let Some(page) = self.target_uri(path, offset) else {
            return Ok(());
        };
        let hops = self
            .record
            .header(common::warc::HOPS_FIELD)
            .and_then(|h| h.trim().parse::<u32>().ok())
            .unwrap_or(0);
        let head = records::http_head(&self.record);
        let canonical = urlnorm::canonicalize_url(page.clone()).ok();
        if let Some(canonical) = &canonical {
            // Fetched, whatever its content: not scheduled again as a new URL.
            self.mark_fetched(canonical, hops)?;
            self.observe(canonical, head.as_ref(), hops);
        }
        // Level of a known sitemap (see `Worker::known_sitemap`); only a
        // 2xx response is read as one.
        let sitemap_level = match (&canonical, &head) {
            (Some(c), Some(h))
                if self.cfg.sitemaps.enabled
                    && !self.history_only
                    && (200..300).contains(&h.status) =>
            {
                self.known_sitemap(c, via, hops, h)?
            }
            _ => None,
        };
        if self.history_only {
            return Ok(());
        }
        // A known sitemap over the record limit is read as far as it was
        // kept, like one the fetcher cut.
        if self.record.block_cut && sitemap_level.is_none() {
            self.skip_too_large(path, offset, &page);
            return Ok(());
        }
        if self.record.record_type() == Some("revisit") {
            // The page as it was: its links were read from the record it
            // refers to.
            self.counts.revisits += 1;
            return Ok(());
        }
        let Some(head) = head else {
            self.counts.bad_records += 1;
            self.cfg.log.warn(format_args!(
                "{}: offset {offset}: {page}: block is not an HTTP response; skipped",
                path.display()
            ));
            return Ok(());
        };
        match head.status {
            300..=399 => self.redirect(&page, &head, via, hops),
            200..=299 => {
                let doc = SitemapDoc {
                    path,
                    offset,
                    url: canonical.as_ref().unwrap_or(&page),
                    head: &head,
                    body_offset: head.body_offset.min(self.record.block.len()),
                    hops,
                    known_level: sitemap_level,
                };
                self.content(&doc, &page)
            }
            _ => Ok(()),
        }
    }

    /// A robots.txt record: counted; its response's sitemaps are read.
    fn robots_record(&mut self) -> Result<(), Error> {
        self.counts.robots_responses += 1;
        if self.cfg.sitemaps.enabled
            && !self.history_only
            && self.record.record_type() == Some("response")
            && let Some(url) = self.record.target_uri().and_then(|u| Url::parse(u).ok())
        {
            let head = records::http_head(&self.record);
            self.robots_sitemaps(&url, head.as_ref())?;
        }
        Ok(())
    }

    /// The record's `WARC-Target-URI`; a missing or bad one is reported and
    /// counted.
    fn target_uri(&mut self, path: &Path, offset: u64) -> Option<Url> {
        let Some(uri) = self.record.target_uri() else {
            self.counts.bad_records += 1;
            self.cfg.log.warn(format_args!(
                "{}: offset {offset}: response record without WARC-Target-URI; skipped",
                path.display()
            ));
            return None;
        };
        match Url::parse(uri) {
            Ok(u) => Some(u),
            Err(e) => {
                self.counts.bad_records += 1;
                self.cfg.log.warn(format_args!(
                    "{}: offset {offset}: bad WARC-Target-URI `{uri}` ({e}); skipped",
                    path.display()
                ));
                None
            }
        }
    }

    /// The target of a 3xx response of `page`, a candidate one hop further
    /// (a sitemap that moved keeps its hops and `via`).
    fn redirect(
        &mut self,
        page: &Url,
        head: &ResponseHead,
        via: Option<Via>,
        hops: u32,
    ) -> Result<(), Error> {
        let head_bytes = &self.record.block[..head.body_offset.min(self.record.block.len())];
        let Some(location) = common::http::location(head_bytes) else {
            return Ok(());
        };
        self.counts.redirects += 1;
        // A sitemap that moved is the same sitemap: same hops, still
        // `sitemap-file` (a redirect is no sitemap level).
        let (hops, via) = if via == Some(Via::SitemapFile) {
            (hops, Via::SitemapFile)
        } else {
            (hops.saturating_add(1), Via::Redirect)
        };
        match redirect_target(page, &location) {
            Ok(target) => {
                if self.admission.admit(&target, hops, &mut self.counts) {
                    self.push(&target, link_meta(hops, via))?;
                }
            }
            Err(e) => self.admission.count_url_error(&e, &mut self.counts),
        }
        Ok(())
    }

    /// A 2xx response of `page`: read as a sitemap if it is one, else as
    /// an HTML page (unless it was cut).
    fn content(&mut self, doc: &SitemapDoc<'_>, page: &Url) -> Result<(), Error> {
        if self.cfg.sitemaps.enabled && self.sitemap(doc)? {
            return Ok(());
        }
        if self.record.block_cut {
            // Not a sitemap after all: too large, as any page.
            self.skip_too_large(doc.path, doc.offset, page);
            return Ok(());
        }
        let next_hops = doc.hops.saturating_add(1);
        self.html_page(
            doc.path,
            doc.offset,
            page,
            doc.head,
            doc.body_offset,
            next_hops,
        )
    }

    /// Links of a 2xx response (if it is HTML): listed by its metadata
    /// record when that can be trusted ([`listed`]), else parsed.
    fn html_page(
        &mut self,
        path: &Path,
        offset: u64,
        page: &Url,
        head: &ResponseHead,
        body_offset: usize,
        hops: u32,
    ) -> Result<(), Error> {
        let mut links = std::mem::take(&mut self.links);
        links.clear();
        let read = match self.listed_links(&mut links) {
            Some(read) => Some(read),
            None => self.parse_page(path, offset, page, head, body_offset, &mut links),
        };
        let result = match read {
            Some(read) => {
                self.count_page(path, offset, page, &read);
                self.admit_links(&mut links, hops)
            }
            None => Ok(()),
        };
        self.links = links;
        result
    }

    /// The links the record's metadata record lists, into `links`, if it
    /// lists them as parsing would find them.
    fn listed_links(&mut self, links: &mut Vec<Url>) -> Option<PageRead> {
        if self.metadata.is_empty() {
            return None;
        }
        let limits = listed::Limits {
            max_page_size: self.cfg.options.max_page_size,
            max_links: self.cfg.options.max_links_per_page,
            robots_name: self.cfg.robots_name,
        };
        let listed = listed::links(&self.metadata, &limits, links)?;
        self.counts.links_listed_pages += 1;
        let kept = links.len() as u64;
        Some(PageRead {
            summary: PageSummary {
                body: Body::Html,
                found: kept + listed.skipped.total(),
                skipped: listed.skipped,
                incomplete: false,
            },
            body_bytes: listed.body_bytes,
        })
    }

    /// The links of the page parsed, into `links`; `None` if it is not
    /// HTML (reported if labelled HTML).
    fn parse_page(
        &mut self,
        path: &Path,
        offset: u64,
        page: &Url,
        head: &ResponseHead,
        body_offset: usize,
        links: &mut Vec<Url>,
    ) -> Option<PageRead> {
        // Records before format 2 hold decoded bodies with their coding
        // headers renamed, so this leaves them as they are.
        let decoded = self.decoder.decode_response(
            head,
            &self.record.block[body_offset..],
            self.cfg.options.max_page_size as usize,
        );
        let body = decoded.body;
        match &decoded.outcome {
            // A cut record ends early: expected, and said by its WARC-Truncated.
            Outcome::Incomplete(_) if self.record.header("WARC-Truncated").is_some() => {}
            Outcome::Failed(e) | Outcome::Incomplete(e) => {
                self.counts.undecodable_bodies += 1;
                self.cfg.log.warn(format_args!(
                    "{}: offset {offset}: {page}: body not decoded ({e}); links read from what could be",
                    path.display()
                ));
            }
            Outcome::Complete | Outcome::Cut => {}
        }
        let max_links = self.cfg.options.max_links_per_page;
        let robots_name = self.cfg.robots_name;
        let extractor = self
            .extractor
            .get_or_insert_with(|| LinkExtractor::new(max_links, robots_name.map(str::to_string)));
        let summary = extractor.page(page, head, body);
        match summary.body {
            Body::Other => return None,
            Body::Mislabelled => {
                self.counts.not_html += 1;
                self.cfg.log.warn(format_args!(
                    "{}: offset {offset}: {page}: labelled HTML but the body is binary; skipped",
                    path.display()
                ));
                return None;
            }
            Body::Html => {}
        }
        links.extend_from_slice(extractor.links());
        if let Some((_, obs)) = &mut self.pending
            && obs.canonical.is_empty()
            && let Some(hint) = extractor.canonical_hint(page, head)
        {
            obs.canonical = hint.into();
        }
        Some(PageRead {
            summary,
            body_bytes: body.len() as u64,
        })
    }

    /// Counts an HTML page and what its links were.
    fn count_page(&mut self, path: &Path, offset: u64, page: &Url, read: &PageRead) {
        let summary = &read.summary;
        self.counts.html_pages += 1;
        self.counts.html_bytes += read.body_bytes;
        self.counts.links += summary.found;
        self.counts.nofollow += summary.skipped.nofollow;
        self.counts.over_page_cap += summary.skipped.over_cap;
        self.counts.pages_over_page_cap += u64::from(summary.skipped.over_cap > 0);
        self.counts.same_page += summary.skipped.same_page;
        self.counts.invalid_urls += summary.skipped.invalid;
        for _ in 0..summary.skipped.scheme {
            self.counts.reject(Reject::Scheme);
        }
        if summary.incomplete {
            self.counts.incomplete_pages += 1;
            self.cfg.log.warn(format_args!(
                "{}: offset {offset}: {page}: markup too deeply nested or cut off; links after that point are not read",
                path.display()
            ));
        }
    }

    /// The links of a page, candidates `hops` from a seed: one page is one
    /// in-link, however often it repeats a link.
    fn admit_links(&mut self, links: &mut Vec<Url>, hops: u32) -> Result<(), Error> {
        // Two spellings of one URL on a page are one in-link.
        for url in links.iter_mut() {
            if let Some(formed) = self.host_form(url) {
                *url = formed;
            }
        }
        links.sort_unstable_by(|a, b| a.as_str().cmp(b.as_str()));
        links.dedup_by(|a, b| a.as_str() == b.as_str());
        let meta = link_meta(hops, Via::Link);
        for url in links.iter() {
            if self.admission.admit(url, hops, &mut self.counts) {
                self.push(url, meta)?;
            }
        }
        Ok(())
    }
}

/// An HTML page read for its links.
struct PageRead {
    summary: PageSummary,
    /// Decoded bytes of the page.
    body_bytes: u64,
}

fn link_meta(hops: u32, via: Via) -> Meta {
    Meta {
        hops,
        inlinks: 1,
        tries: 0,
        via,
        exempt: false,
        fetched: false,
        rescued: false,
        not_before_s: 0,
    }
}
