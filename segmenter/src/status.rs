//! `segmenter status CRAWL [--json] [--no-backlog]`: where the crawl stands between steps,
//! for scripts (`scripts/crawl.sh`) and for a look by hand: the segments,
//! those still to fetch, the complete fetched runs not yet consumed, and the
//! URLs waiting in the backlog. It only reads; it takes no lock.
//!
//! `--json` prints one line holding one flat object (`{"key":value,...}`:
//! numbers, strings, and lists of segment IDs, which hold no `,` or `"`), so
//! that a shell script can pick a key without a JSON parser; the text form
//! has the same keys, as `key: value` lines (lists separated by spaces).

use std::path::Path;

use common::crawldir::CrawlDir;
use common::segment::SegmentSummary;
use serde::Serialize;

use crate::commit::read_consumed;
use crate::error::Error;

/// The state of a crawl directory.
#[derive(Debug, Default, Serialize)]
pub struct CrawlStatus {
    /// Every segment, oldest first.
    pub segments: Vec<String>,
    /// Segments not fetched to completion (no `fetched/ID/DONE`), oldest first.
    pub pending: Vec<String>,
    /// The segment `fetcher fetch` takes next (the oldest pending); empty if none.
    pub next: String,
    /// Complete fetched runs that `consumed.txt` does not list: the next
    /// `segmenter run` reads them.
    pub unconsumed: Vec<String>,
    /// URLs waiting in the backlog; `null` (`?` in text) if not counted
    /// (`--no-backlog`) or if it cannot be read (the reason goes to stderr;
    /// `segmenter run` refuses it).
    pub backlog_urls: Option<u64>,
    /// URLs in the fetch history, and those due for a refetch now; `null`
    /// as `backlog_urls` (not counted, or unreadable).
    pub history_urls: Option<u64>,
    /// See `history_urls`.
    pub due_urls: Option<u64>,
}

/// Prints the status of the crawl directory `root`.
pub fn status(root: &Path, json: bool, backlog: bool) -> Result<(), Error> {
    let crawl = CrawlDir::new(root);
    let status = CrawlStatus::read(&crawl, backlog)?;
    let text = if json {
        let line = serde_json::to_string(&status).map_err(|e| Error::Io {
            path: root.to_path_buf(),
            source: e.into(),
        })?;
        format!("{line}\n")
    } else {
        status.to_string()
    };
    common::exit::print(&text).map_err(Error::io("stdout"))
}

impl CrawlStatus {
    /// Reads the crawl directory's listings, `consumed.txt` and, if
    /// `backlog`, the backlog.
    pub fn read(crawl: &CrawlDir, backlog: bool) -> Result<CrawlStatus, Error> {
        let segments = crawl
            .segment_ids()
            .map_err(Error::io(crawl.segments_dir()))?;
        let pending: Vec<String> = segments
            .iter()
            .filter(|id| !crawl.is_fetched(id))
            .cloned()
            .collect();
        let consumed = read_consumed(&crawl.consumed_path())?;
        let unconsumed = crawl
            .completed_runs()
            .map_err(Error::io(crawl.fetched_root()))?
            .into_iter()
            .filter(|id| !consumed.contains(id))
            .collect();
        let path = crawl.backlog_path();
        let backlog_urls = if !backlog {
            None
        } else if path.exists() {
            match SegmentSummary::compute(&path, 0) {
                Ok(summary) => Some(summary.urls),
                Err(e) => {
                    eprintln!("segmenter: {e}");
                    None
                }
            }
        } else {
            Some(0)
        };
        let path = crawl.root().join(crate::history::FILE_NAME);
        let (history_urls, due_urls) = if !backlog {
            (None, None)
        } else if path.exists() {
            let now = common::timefmt::unix_millis(std::time::SystemTime::now());
            match crate::history::HistorySummary::compute(&path, now, 0) {
                Ok(s) => (Some(s.urls), Some(s.due.now)),
                Err(e) => {
                    eprintln!("segmenter: {e}");
                    (None, None)
                }
            }
        } else {
            (Some(0), Some(0))
        };
        Ok(CrawlStatus {
            history_urls,
            due_urls,
            next: pending.first().cloned().unwrap_or_default(),
            segments,
            pending,
            unconsumed,
            backlog_urls,
        })
    }
}

impl std::fmt::Display for CrawlStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "segments: {}", self.segments.join(" "))?;
        writeln!(f, "pending: {}", self.pending.join(" "))?;
        writeln!(f, "next: {}", self.next)?;
        writeln!(f, "unconsumed: {}", self.unconsumed.join(" "))?;
        let count = |n: Option<u64>| n.map_or("?".to_string(), |n| n.to_string());
        writeln!(f, "backlog_urls: {}", count(self.backlog_urls))?;
        writeln!(f, "history_urls: {}", count(self.history_urls))?;
        writeln!(f, "due_urls: {}", count(self.due_urls))
    }
}
