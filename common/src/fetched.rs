//! What a fetched run says about itself, read from `fetched/ID/`: whether it
//! is complete and why it ended (`DONE`), and the outcomes in its crawl log,
//! which covers every run of the segment (a resumed fetch appends to it),
//! unlike `stats.json`. `fetcher status` prints it; the driver's decisions
//! (`segmenter next`) and the round journal count pages with it.

use std::io;

use serde::Serialize;

use crate::crawldir::{CRAWL_LOG_FILE, CrawlDir, DONE_FILE};
use crate::crawllog::Tally;

/// The state of one fetched segment.
#[derive(Debug, Default, Clone, Serialize)]
pub struct RunStatus {
    /// The segment ID.
    pub segment: String,
    /// True when `DONE` exists: the run is complete.
    pub done: bool,
    /// Why the complete run ended (`complete`, `tail`, `held`, `time-limit`,
    /// `min-hosts`, `signal`, `disk`, `run-bytes`, `crawl-bytes`); empty
    /// while it is not complete.
    pub stop_reason: String,
    /// What a disk or budget stop says: where the bytes or the free space
    /// stood, what to do (empty otherwise).
    pub stop_detail: String,
    /// URLs a byte budget or the disk floor sent to the leftover untried,
    /// as `reason=N` words (`host-round-bytes=12 run-bytes=40`; empty if
    /// none).
    pub cuts: String,
    /// Crawl-log lines: URLs attempted, robots.txt included.
    pub attempts: u64,
    /// HTTP responses other than robots.txt.
    pub pages: u64,
    /// robots.txt HTTP responses.
    pub robots: u64,
    /// Attempts that got no HTTP response (timeouts, refused, skipped ...).
    pub errors: u64,
    /// Crawl-log lines that could not be read (a line cut by a crash, which
    /// the next fetch of the segment repairs).
    pub bad_lines: u64,
    /// Files (WARC files and their indexes) uploaded to the WARC store, as
    /// `uploads.v1.tsv` records them.
    pub uploaded: u64,
}

/// The text of `fetched/ID/DONE`, `None` if there is none (the run is not
/// complete, or was never started). The error names the file.
pub fn read_done(crawl: &CrawlDir, id: &str) -> io::Result<Option<String>> {
    read_file(&crawl.fetched_dir(id).join(DONE_FILE))
}

/// A file's text, `None` if it does not exist; the error names it.
fn read_file(path: &std::path::Path) -> io::Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io::Error::new(e.kind(), format!("{}: {e}", path.display()))),
    }
}

/// The value of the line of a `DONE` file's text that starts with `name`
/// (with its trailing space: `"finished "`), if there is one.
pub fn done_field<'a>(done: &'a str, name: &str) -> Option<&'a str> {
    done.lines().find_map(|l| l.strip_prefix(name))
}

impl RunStatus {
    /// Reads `fetched/ID/DONE` and `fetched/ID/crawl.log`; `None` if the
    /// segment was never fetched (no `fetched/ID/`). The error names the
    /// file.
    pub fn read(crawl: &CrawlDir, id: &str) -> io::Result<Option<RunStatus>> {
        // No `fetched/ID/`: no DONE either, and `read_with_done` says None.
        let done = read_done(crawl, id)?;
        RunStatus::read_with_done(crawl, id, done.as_deref())
    }

    /// [`RunStatus::read`] for a caller that has read `fetched/ID/DONE`
    /// already ([`read_done`]; `None`: there is none): only the crawl log
    /// and the upload manifest are read.
    pub fn read_with_done(
        crawl: &CrawlDir,
        id: &str,
        done: Option<&str>,
    ) -> io::Result<Option<RunStatus>> {
        let dir = crawl.fetched_dir(id);
        if !dir.is_dir() {
            return Ok(None);
        }
        let field = |name: &str| {
            done.and_then(|d| done_field(d, name))
                .unwrap_or_default()
                .to_string()
        };
        let mut status = RunStatus {
            segment: id.to_string(),
            done: done.is_some(),
            stop_reason: field("stop_reason "),
            stop_detail: field("stop_detail "),
            cuts: field("cuts "),
            ..RunStatus::default()
        };
        status.uploaded = crate::store::Manifest::read(&dir)?.uploads().len() as u64;
        let mut tally = Tally::default();
        for line in read_file(&dir.join(CRAWL_LOG_FILE))?
            .as_deref()
            .unwrap_or("")
            .lines()
        {
            tally.add(line);
        }
        status.attempts = tally.attempts;
        status.pages = tally.pages;
        status.robots = tally.robots;
        status.errors = tally.error_count();
        status.bad_lines = tally.bad_lines;
        Ok(Some(status))
    }
}
