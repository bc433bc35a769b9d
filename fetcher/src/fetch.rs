//! `fetcher fetch CRAWL [SEGMENT_ID]`: one run over one segment, from
//! choosing the segment to writing `DONE`.
//!
//! This file holds the run itself: the segment chosen ([`choose`]), the
//! output directory locked, signals caught, then the four steps one after
//! the other, each in a module of its own:
//!
//! 1. [`load`]: what an interrupted earlier run did, and the segment less
//!    that into the work file; the resolver and the TLS trust;
//! 2. [`queue`]: the state of the segment's hosts and the [`holds`] earlier
//!    runs left on them, and every key into the frontier;
//! 3. [`workers`]: the writer thread ([`writer`]), what the workers share
//!    ([`shared`]) and the workers themselves, until the frontier is idle;
//! 4. [`finish`]: the [`leftover`], hosts.db saved, `stats.json` and `DONE`.

mod choose;
mod finish;
mod holds;
mod leftover;
mod load;
mod queue;
mod shared;
mod workers;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicU32;
use std::time::{Instant, SystemTime};

use common::crawldir::{CrawlDir, WORK_FILE};
use common::runlog::RunLog;

use crate::error::Error;
use crate::metrics::FetchMetrics;
use crate::settings::Settings;
use crate::supervise::install_signals;

/// How a run ended, for the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// Complete, or stopped by a time limit / min-hosts: exit 0.
    Complete,
    /// Stopped by SIGINT/SIGTERM after a clean shutdown: exit 130.
    Signal,
    /// Nothing to fetch: exit 0.
    Nothing,
}

/// Removes the work file however the run ends.
struct RemoveOnDrop(std::path::PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Runs `fetch`.
pub fn run(s: Settings) -> Result<Ended, Error> {
    let crawl = s.crawl.clone();
    // Nothing is created in a directory with nothing to fetch.
    let Some(id) = choose::choose_segment(&crawl, s.segment.as_deref())? else {
        return Ok(Ended::Nothing);
    };
    CrawlDir::open(s.crawl.top()).map_err(Error::io(s.crawl.top()))?;
    crawl.create_subdirs().map_err(Error::io(crawl.root()))?;
    // Below the floor already: refused before anything is written.
    if let Some(short) =
        common::disk::check(crawl.root(), s.disk_floor, 0).map_err(Error::io(crawl.root()))?
    {
        return Err(Error::Disk(short));
    }
    let _ = std::fs::create_dir_all(crawl.logs_dir());
    let log = RunLog::open_or_append("fetcher", s.log.as_deref(), &crawl.new_log_path("fetcher"));
    let result = fetch_segment(&s, &crawl, &id, &log);
    if let Err(e) = &result {
        // main prints it on stderr; the log file of the run gets it too.
        log.error_to_file(&common::exit::chain(e));
    }
    result
}

/// One run over segment `id`, once its output directory is locked.
struct Run<'a> {
    s: &'a Settings,
    crawl: &'a CrawlDir,
    id: &'a str,
    /// `fetched/ID/`.
    out: PathBuf,
    log: &'a RunLog,
    started_at: SystemTime,
    started: Instant,
    /// What an error message adds: how to resume.
    resume_hint: String,
    /// Where closed WARC files go to be uploaded (with a WARC store).
    closed_to: Option<common::store::UploadQueue>,
}

/// Fetches segment `id`, telling `log` what happens: loads it, fills the
/// frontier, runs the workers, and writes the leftover, `stats.json` and
/// `DONE`.
fn fetch_segment(s: &Settings, crawl: &CrawlDir, id: &str, log: &RunLog) -> Result<Ended, Error> {
    let out = crawl.fetched_dir(id);
    std::fs::create_dir_all(&out).map_err(Error::io(&out))?;
    let _lock = lock_output(crawl, id)?;
    // Signals, from the start (a signal while the segment loads is a stop
    // request like any other): the first asks for a clean stop, the second
    // exits at once.
    let signals = Arc::new(AtomicU32::new(0));
    install_signals(signals.clone()).map_err(Error::Start)?;
    remove_temp_files(&out);
    let _work_file = RemoveOnDrop(crawl.work_path(id));
    let uploads = crate::upload::start(s, crawl, &out, log)?;
    let run = Run {
        s,
        crawl,
        id,
        out,
        log,
        started_at: SystemTime::now(),
        started: Instant::now(),
        resume_hint: format!(
            "what was stored is kept: fix the cause and run `fetcher fetch {} {id}` again to resume",
            crawl.root().display()
        ),
        closed_to: uploads.as_ref().map(common::store::Background::queue),
    };
    log.info(format!(
        "fetching segment {id} into {} as {}",
        run.out.display(),
        s.user_agent()
    ));
    for warning in s.host_rules.unapplied() {
        log.warn(warning);
    }
    let mut segment = load::load(&run)?;
    let queued = queue::queue(&run, &mut segment)?;
    // Written now, every progress interval, and last when dropped (the
    // run over, however it ended).
    let _metrics = FetchMetrics::start(s, id, run.started_at, queued.frontier.clone());
    let ran = workers::run_workers(&run, segment, queued, &signals)?;
    finish::finish(&run, ran, uploads)
}

/// Takes the lock of `fetched/ID/` for this process: a second fetcher on
/// the same segment would repair (cut) the files the first is writing.
/// The lock goes with the process, however it ends.
fn lock_output(crawl: &CrawlDir, id: &str) -> Result<common::lock::FileLock, Error> {
    let path = crawl.fetch_lock_path(id);
    match common::lock::try_lock(&path) {
        Ok(Some(lock)) => Ok(lock),
        Ok(None) => Err(Error::Locked(crawl.fetched_dir(id), id.to_string())),
        Err(e) => Err(Error::io(&path)(e)),
    }
}

/// Removes temporary files of an interrupted writer (an unfinished leftover file).
fn remove_temp_files(dir: &Path) {
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let name = e.file_name();
            if name
                .to_str()
                .is_some_and(|n| common::atomic::is_temp_name(n) || n == WORK_FILE)
            {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}
