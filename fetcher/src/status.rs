//! `fetcher status CRAWL SEGMENT [--json]`: what fetching a segment has
//! done so far, read from `fetched/ID/`: whether the run is complete and why
//! it ended (`DONE`), and the outcomes in its crawl log, which covers every
//! run of the segment (a resumed fetch appends to it), unlike `stats.json`.
//!
//! `--json` prints one line holding one flat object (`{"key":value,...}`,
//! no nesting), so that a shell script such as `scripts/crawl.sh` can pick a
//! key without a JSON parser; the text form has the same keys, as
//! `key: value` lines.

use common::crawldir::{CRAWL_LOG_FILE, CrawlDir, DONE_FILE};
use common::crawllog::{Status, parse_line};
use common::segment::Via;
use serde::Serialize;

use crate::cli::StatusArgs;
use crate::error::Error;

/// The state of one fetched segment.
#[derive(Debug, Default, Serialize)]
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
}

/// Prints the status of `args.segment`; an error (exit code 1) if it was
/// never fetched or its files cannot be read.
pub fn run(args: &StatusArgs) -> Result<(), Error> {
    let status = RunStatus::read(&CrawlDir::new(&args.crawl), &args.segment)?;
    common::exit::print(&status.render(args.json)).map_err(Error::io("stdout"))
}

impl RunStatus {
    /// Reads `fetched/ID/DONE` and `fetched/ID/crawl.log`.
    pub fn read(crawl: &CrawlDir, id: &str) -> Result<RunStatus, Error> {
        let dir = crawl.fetched_dir(id);
        if !dir.is_dir() {
            return Err(Error::NotFetched(dir, id.to_string()));
        }
        let read = |name: &str| match std::fs::read_to_string(dir.join(name)) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io(dir.join(name))(e)),
        };
        let done = read(DONE_FILE)?;
        let field = |name: &str| {
            done.as_deref()
                .and_then(|d| d.lines().find_map(|l| l.strip_prefix(name)))
                .unwrap_or_default()
                .to_string()
        };
        let mut status = RunStatus {
            segment: id.to_string(),
            done: done.is_some(),
            stop_reason: field("stop_reason "),
            // (A script reads the flat JSON without a parser: no `"` or `,`.)
            stop_detail: field("stop_detail ").replace(['"', ','], ""),
            cuts: field("cuts "),
            ..RunStatus::default()
        };
        for line in read(CRAWL_LOG_FILE)?.as_deref().unwrap_or("").lines() {
            status.attempts += 1;
            match parse_line(line) {
                Ok(l) => match (l.status, l.via) {
                    (Status::Http(_), Via::Robots) => status.robots += 1,
                    (Status::Http(_), _) => status.pages += 1,
                    (Status::Error(_), _) => status.errors += 1,
                },
                Err(_) => status.bad_lines += 1,
            }
        }
        Ok(status)
    }

    /// One line of flat JSON, or `key: value` lines.
    pub fn render(&self, json: bool) -> String {
        if json {
            let line = serde_json::to_string(self).expect("a flat struct serializes");
            return format!("{line}\n");
        }
        format!(
            "segment: {}\ndone: {}\nstop_reason: {}\nstop_detail: {}\ncuts: {}\nattempts: {}\n\
             pages: {}\nrobots: {}\nerrors: {}\nbad_lines: {}\n",
            self.segment,
            self.done,
            self.stop_reason,
            self.stop_detail,
            self.cuts,
            self.attempts,
            self.pages,
            self.robots,
            self.errors,
            self.bad_lines
        )
    }
}
