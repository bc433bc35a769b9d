//! Research outputs, the files web archives derive from their WARC files
//! for those who study the pages rather than replay them, in Common
//! Crawl's formats:
//!
//! - a columnar index of every capture in Apache Parquet ([`table`]: Common
//!   Crawl's `cc-index-table` columns, plus the round, segment, hops and
//!   score this crawl knows), with the payload's detected MIME type
//!   ([`mime`]), its charset reconciled from its declarations and bytes
//!   ([`charset`]), its languages ([`language`]) and a simhash of its text
//!   ([`simhash`]);
//! - WET files: the visible text of each 2xx HTML page as a `conversion`
//!   record (read by [`common::extract::TextReader`]);
//! - WAT files: the JSON envelope of each record as a `metadata` record
//!   ([`wat`]).
//!
//! Each WARC file of a complete fetched run gets its outputs beside it, in
//! one read ([`warc_file`]); [`derive_runs`] does it for runs, in parallel
//! over their files, writing only the outputs a file lacks; [`gather`]
//! turns a crawl's index files into one queryable set.

mod capture;
pub mod charset;
pub mod gather;
mod language;
mod mime;
pub mod simhash;
pub mod table;
pub mod warc_file;
mod wat;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use common::crawldir::CrawlDir;
use common::runlog::RunLog;
use common::store::Upload;
use rayon::prelude::*;

pub use capture::Origin;
pub use warc_file::{FileTotals, Wanted, outputs_of};

use crate::error::Error;
use capture::CaptureReader;

/// True for the names of research outputs (a reader of a run's files
/// passes them over in silence).
pub fn is_output_name(name: &str) -> bool {
    [
        warc_file::INDEX_SUFFIX,
        warc_file::WET_SUFFIX,
        warc_file::WAT_SUFFIX,
    ]
    .iter()
    .any(|s| name.ends_with(s))
}

/// A fetched run whose outputs are wanted.
#[derive(Debug, Clone)]
pub struct Run {
    /// `fetched/ID/` (of a shard: `shards/JJJ/fetched/ID/`).
    pub dir: PathBuf,
    /// The run's ID (`00003`).
    pub id: String,
    /// The shard of a sharded crawl.
    pub shard: Option<u32>,
}

/// The complete runs of `crawl` that `taken` accepts (by ID), every
/// shard's, oldest first.
pub fn runs(crawl: &CrawlDir, taken: impl Fn(&str) -> bool) -> Result<Vec<Run>, Error> {
    let shards = common::shards::Shards::load(crawl.root())?;
    let mut out = Vec::new();
    for (j, view) in shards.views(crawl).iter().enumerate() {
        let ids = view
            .completed_runs()
            .map_err(Error::io(view.fetched_root()))?;
        for id in ids.into_iter().filter(|id| taken(id)) {
            out.push(Run {
                dir: view.fetched_dir(&id),
                id,
                shard: shards.is_sharded().then_some(j as u32),
            });
        }
    }
    Ok(out)
}

/// The crawl's name, as its rows and files give it: its directory's name.
pub fn crawl_name(crawl: &Path) -> String {
    let abs = std::fs::canonicalize(crawl).unwrap_or_else(|_| crawl.to_path_buf());
    abs.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "crawl".to_string())
}

/// What a round asks of [`after_round`].
#[derive(Debug, Clone)]
pub struct AfterRound<'a> {
    /// The crawl, or the shard's view of it.
    pub crawl: &'a CrawlDir,
    /// The shard's number, in a sharded crawl.
    pub shard: Option<u32>,
    /// The outputs the round's settings ask for (`research_*`) and how.
    pub settings: Settings,
}

/// The outputs a round asks for, of the runs `ids` it read (a map: the
/// run it mapped). Failures are warnings: the round is done, and
/// `segmenter research` writes what is missing later.
pub fn after_round(round: &AfterRound<'_>, ids: &[String], log: &RunLog) {
    if round.settings.wanted.none() || ids.is_empty() {
        return;
    }
    let crawl = round.crawl;
    let runs: Vec<Run> = ids
        .iter()
        .map(|id| Run {
            dir: crawl.fetched_dir(id),
            id: id.clone(),
            shard: round.shard,
        })
        .collect();
    let started = std::time::Instant::now();
    let totals = derive_runs(&crawl_name(crawl.top()), &runs, &round.settings, log);
    log.info(format_args!(
        "research outputs: {} WARC files, {} captures, {} HTML pages, in {:.1} s{}",
        totals.files,
        totals.read.captures,
        totals.read.pages,
        started.elapsed().as_secs_f64(),
        if totals.failed > 0 {
            format!(
                "; {} failed (warnings above): `segmenter research` writes them later",
                totals.failed
            )
        } else {
            String::new()
        }
    ));
}

/// How outputs are written.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Which outputs.
    pub wanted: Wanted,
    /// Worker threads.
    pub threads: usize,
    /// Payloads are read up to this many bytes (the rest of a larger one
    /// is left out of its text).
    pub max_page_size: u64,
    /// Write the outputs again even where they exist.
    pub force: bool,
}

/// What writing the outputs of some runs did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Totals {
    /// WARC files read.
    pub files: u64,
    /// WARC files whose outputs were all there already.
    pub up_to_date: u64,
    /// WARC files whose outputs could not be written (each reported).
    pub failed: u64,
    /// What the files read gave, summed.
    pub read: FileTotals,
}

/// One WARC file and the outputs it lacks.
struct Job {
    warc: PathBuf,
    missing: Wanted,
    origin: Origin,
    /// Its upload, when only the WARC store has it.
    uploaded: Option<Upload>,
}

/// Room for the HTTP head and WARC fields beyond `max_page_size`.
const HEAD_ALLOWANCE: u64 = 64 * 1024;

/// Writes the wanted outputs of every WARC file of `runs` that lacks them
/// (all of them with `force`), `threads` files at a time. A file whose
/// outputs fail is reported and counted, the others go on. Outputs of a
/// file uploaded to the WARC store are uploaded beside it (and recorded in
/// its run's manifest) and their local copies removed.
pub fn derive_runs(crawl: &str, runs: &[Run], settings: &Settings, log: &RunLog) -> Totals {
    let mut totals = Totals::default();
    let mut jobs = Vec::new();
    for run in runs {
        match run_jobs(crawl, run, settings) {
            Ok((found, done)) => {
                jobs.extend(found);
                totals.up_to_date += done;
            }
            Err(e) => {
                log.warn(format_args!(
                    "{}: {e}; its outputs are not written",
                    run.dir.display()
                ));
                totals.failed += 1;
            }
        }
    }
    let failed = AtomicU64::new(0);
    let max_block = (settings.max_page_size + HEAD_ALLOWANCE) as usize;
    let work = |reader: &mut CaptureReader, job: &Job| -> Option<FileTotals> {
        match derive_job(job, reader, max_block) {
            Ok(t) => {
                if t.damaged > 0 || t.truncated {
                    log.warn(format_args!(
                        "{}: {} damaged records skipped{}; the outputs hold the rest",
                        job.warc.display(),
                        t.damaged,
                        if t.truncated {
                            ", the file ends in a cut record"
                        } else {
                            ""
                        }
                    ));
                }
                Some(t)
            }
            Err(e) => {
                log.warn(format_args!(
                    "{e}; the outputs of {} are not written",
                    job.warc.display()
                ));
                failed.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    };
    let max_body = settings.max_page_size as usize;
    let read: Vec<FileTotals> = match rayon::ThreadPoolBuilder::new()
        .num_threads(settings.threads.max(1))
        .thread_name(|i| format!("outputs-{i}"))
        .build()
    {
        Ok(pool) => pool.install(|| {
            jobs.par_iter()
                .map_init(|| CaptureReader::new(max_body), |r, job| work(r, job))
                .flatten()
                .collect()
        }),
        Err(_) => {
            let mut reader = CaptureReader::new(max_body);
            jobs.iter()
                .filter_map(|job| work(&mut reader, job))
                .collect()
        }
    };
    totals.files += jobs.len() as u64;
    totals.failed += failed.into_inner();
    for t in read {
        add(&mut totals.read, &t);
    }
    totals
}

fn add(sum: &mut FileTotals, t: &FileTotals) {
    sum.records += t.records;
    sum.captures += t.captures;
    sum.pages += t.pages;
    sum.text_bytes += t.text_bytes;
    sum.damaged += t.damaged;
    sum.unusable += t.unusable;
    sum.truncated |= t.truncated;
}

/// The files of `run` that lack an output, and how many have them all.
fn run_jobs(crawl: &str, run: &Run, settings: &Settings) -> std::io::Result<(Vec<Job>, u64)> {
    let manifest = common::store::Manifest::read(&run.dir)?;
    let warcs = run_warcs(&run.dir)?;
    let round = run
        .id
        .split('-')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let (mut jobs, mut done) = (Vec::new(), 0);
    for warc in warcs {
        let name = warc
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let uploaded = (!warc.exists())
            .then(|| manifest.get(&name).cloned())
            .flatten();
        let missing = missing(&warc, settings, &manifest);
        if missing.none() {
            done += 1;
            continue;
        }
        jobs.push(Job {
            origin: Origin {
                crawl: crawl.to_string(),
                segment: run.id.clone(),
                round,
                shard: run.shard.map(|s| s as i32),
                filename: name,
            },
            warc,
            missing,
            uploaded,
        });
    }
    Ok((jobs, done))
}

/// The WARC files of the run in `dir`: those on disk and those only the
/// WARC store has (see [`common::store::run_warcs`]), by name.
pub fn run_warcs(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut local = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if common::store::is_warc_name(&name) && !name.starts_with('.') {
            local.push(entry.path());
        }
    }
    common::store::run_warcs(dir, local)
}

/// The wanted outputs `warc` lacks: those neither on disk (at least as new
/// as the file) nor recorded as uploaded.
fn missing(warc: &Path, settings: &Settings, manifest: &common::store::Manifest) -> Wanted {
    let out = outputs_of(warc);
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let warc_time = modified(warc);
    let have = |p: &Path| {
        if settings.force {
            return false;
        }
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
        if name.is_some_and(|n| manifest.get(&n).is_some()) {
            return true;
        }
        match (modified(p), warc_time) {
            (Some(o), Some(w)) => o >= w,
            (Some(_), None) => true,
            _ => false,
        }
    };
    let w = settings.wanted;
    Wanted {
        index: w.index && !have(&out.index),
        wet: w.wet && !have(&out.wet),
        wat: w.wat && !have(&out.wat),
    }
}

/// Writes one file's missing outputs, from a temporary copy when only the
/// WARC store has the file, and uploads them beside it then.
fn derive_job(
    job: &Job,
    reader: &mut CaptureReader,
    max_block: usize,
) -> Result<FileTotals, warc_file::DeriveError> {
    let copy;
    let source = if job.warc.exists() {
        job.warc.as_path()
    } else {
        copy = common::store::readable(&job.warc).map_err(|e| warc_file::DeriveError::Write {
            path: job.warc.clone(),
            message: format!("cannot fetch it from the WARC store: {e}"),
        })?;
        copy.path()
    };
    let totals = warc_file::derive(
        source,
        &job.warc,
        job.missing,
        &job.origin,
        reader,
        max_block,
    )?;
    if let Some(up) = &job.uploaded {
        // One upload at a time: each is recorded in the run's manifest.
        static UPLOADS: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _one = UPLOADS.lock().unwrap_or_else(|e| e.into_inner());
        let out = outputs_of(&job.warc);
        let m = job.missing;
        for (wanted, path) in [(m.index, &out.index), (m.wet, &out.wet), (m.wat, &out.wat)] {
            if wanted {
                common::store::upload_beside(up, path).map_err(|e| {
                    warc_file::DeriveError::Write {
                        path: path.clone(),
                        message: format!("upload to the WARC store failed: {e}"),
                    }
                })?;
            }
        }
    }
    Ok(totals)
}
