//! Where a crawl stands between steps ([`CrawlStatus`]): its segments,
//! those still to fetch, the complete fetched runs not yet consumed, the
//! URLs waiting in the backlog and the history, the seen-set's size, fill
//! and rescues, and what the last round found ([`LastRound`]). Printed by
//! `segmenter status`, read by the HTML report; it only reads.

use std::path::Path;

use common::crawldir::CrawlDir;
use common::segment::SegmentSummary;
use serde::Serialize;

use crate::error::Error;
use crate::state::reports::LastRound;
use crate::state::runs::segments_and_runs;

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
    /// The seen-set (`seen.bloom`, from its header and journal): every key
    /// `null` (`?` in text) without a filter, or if it cannot be read.
    #[serde(flatten)]
    pub bloom: BloomStatus,
    /// The last `segmenter run`'s figures.
    #[serde(flatten)]
    pub last: LastRound,
}

/// The seen-set's figures in the status.
#[derive(Debug, Default, Serialize)]
pub struct BloomStatus {
    /// URLs in the filter (insertions that set a new bit).
    pub bloom_items: Option<u64>,
    /// Its design load: it grows before it passes it.
    pub bloom_design_items: Option<u64>,
    /// Its size: the bit array and the journal.
    pub bloom_bytes: Option<u64>,
    /// Hashes in the journal, not yet folded into the bit array.
    pub bloom_journal_hashes: Option<u64>,
    /// Fraction of the bits set.
    pub bloom_fill: Option<f64>,
    /// False-positive rate estimated from the fill.
    pub bloom_fp_rate: Option<f64>,
    /// The target rate at the design load.
    pub bloom_target_fp_rate: Option<f64>,
    /// URLs rescued over the crawl (called seen by the filter, in none of
    /// the exact sets).
    pub bloom_rescued: Option<u64>,
}

impl BloomStatus {
    /// Reads the filter at `path` (cheaply: its header and the headers of
    /// its journal blocks).
    pub fn read(path: &Path) -> BloomStatus {
        if !path.exists() {
            return BloomStatus::default();
        }
        match common::bloom::Summary::read(path) {
            Ok(s) => BloomStatus {
                bloom_items: Some(s.items),
                bloom_design_items: Some(s.params.expected_items),
                bloom_bytes: Some(s.file_bytes),
                bloom_journal_hashes: Some(s.journal.hashes),
                bloom_fill: s.fill(),
                bloom_fp_rate: s.estimated_fp_rate(),
                bloom_target_fp_rate: Some(s.params.target_fp_rate),
                bloom_rescued: Some(s.rescued),
            },
            Err(e) => {
                common::runlog::say(&e);
                BloomStatus::default()
            }
        }
    }
}

/// The backlog's and the history's summaries that [`CrawlStatus`] counts
/// from, kept for a closer look (the HTML report).
#[derive(Debug, Default)]
pub struct Summaries {
    /// The backlog's (`None`: not counted, absent or unreadable).
    pub backlog: Option<SegmentSummary>,
    /// The history's, as of when it was read (`None` likewise); from the
    /// summary the merge saved beside it when there is one, which lists no
    /// hosts.
    pub history: Option<crate::history::HistorySummary>,
}

impl CrawlStatus {
    /// Reads the crawl directory's listings, `consumed.txt` and, if
    /// `backlog`, the backlog.
    pub fn read(crawl: &CrawlDir, backlog: bool) -> Result<CrawlStatus, Error> {
        Ok(CrawlStatus::read_with_summaries(crawl, backlog, 0)?.0)
    }

    /// As [`CrawlStatus::read`], also returning the summaries of the backlog
    /// and the history it counted, with their `top` hosts.
    pub fn read_with_summaries(
        crawl: &CrawlDir,
        backlog: bool,
        top: usize,
    ) -> Result<(CrawlStatus, Summaries), Error> {
        let (segments, pending, unconsumed) = segments_and_runs(crawl)?;
        let mut summaries = Summaries::default();
        let path = crawl.backlog_path();
        let backlog_urls = if !backlog {
            None
        } else if path.exists() {
            match SegmentSummary::compute(&path, top) {
                Ok(summary) => {
                    let urls = summary.urls;
                    summaries.backlog = Some(summary);
                    Some(urls)
                }
                Err(e) => {
                    common::runlog::say(&e);
                    None
                }
            }
        } else {
            Some(0)
        };
        let path = crate::history::current_path(crawl.root());
        let (history_urls, due_urls) = if !backlog {
            (None, None)
        } else if path.exists() {
            let now = common::timefmt::unix_millis(std::time::SystemTime::now());
            // The summary the round's merge saved, if it is this file's:
            // the whole history is read only without one.
            let saved = crate::history::SavedSummary::read(&path, now).map(Ok);
            match saved.unwrap_or_else(|| crate::history::HistorySummary::compute(&path, now, top))
            {
                Ok(s) => {
                    let counts = (Some(s.urls), Some(s.due.now));
                    summaries.history = Some(s);
                    counts
                }
                Err(e) => {
                    common::runlog::say(&e);
                    (None, None)
                }
            }
        } else {
            (Some(0), Some(0))
        };
        let status = CrawlStatus {
            last: LastRound::read(&crawl.logs_dir()),
            bloom: BloomStatus::read(&crawl.bloom_path()),
            history_urls,
            due_urls,
            next: pending.first().cloned().unwrap_or_default(),
            segments,
            pending,
            unconsumed,
            backlog_urls,
        };
        Ok((status, summaries))
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
        writeln!(f, "due_urls: {}", count(self.due_urls))?;
        let b = &self.bloom;
        let rate = |r: Option<f64>| r.map_or("?".to_string(), |r| format!("{r:.6}"));
        for (key, n) in [
            ("bloom_items", b.bloom_items),
            ("bloom_design_items", b.bloom_design_items),
            ("bloom_bytes", b.bloom_bytes),
            ("bloom_journal_hashes", b.bloom_journal_hashes),
        ] {
            writeln!(f, "{key}: {}", count(n))?;
        }
        writeln!(f, "bloom_fill: {}", rate(b.bloom_fill))?;
        writeln!(f, "bloom_fp_rate: {}", rate(b.bloom_fp_rate))?;
        writeln!(
            f,
            "bloom_target_fp_rate: {}",
            b.bloom_target_fp_rate
                .map_or("?".to_string(), |r| r.to_string())
        )?;
        writeln!(f, "bloom_rescued: {}", count(b.bloom_rescued))?;
        let l = &self.last;
        writeln!(f, "last_round: {}", l.last_round.as_deref().unwrap_or("?"))?;
        for (key, n) in [
            ("round_new_urls", l.round_new_urls),
            ("round_scheduled", l.round_scheduled),
            ("round_rescued", l.round_rescued),
            ("round_history_new", l.round_history_new),
            ("round_refreshed_unchanged", l.round_refreshed_unchanged),
            ("round_refreshed_changed", l.round_refreshed_changed),
            ("round_retired", l.round_retired),
            ("round_sitemaps_read", l.round_sitemaps_read),
            ("round_sitemap_urls", l.round_sitemap_urls),
            ("round_sitemap_urls_new", l.round_sitemap_urls_new),
            ("round_sitemap_urls_rejected", l.round_sitemap_urls_rejected),
            ("round_bad_sitemaps", l.round_bad_sitemaps),
            ("round_retries_exhausted", l.round_retries_exhausted),
            ("round_held_urls", l.round_held_urls),
            ("round_over_page_cap", l.round_over_page_cap),
            ("round_rejected_extension", l.round_rejected_extension),
            ("round_capped_urls", l.round_capped_urls),
            ("round_cut_segment_size_urls", l.round_cut_segment_size_urls),
            ("round_cut_crawl_pages_urls", l.round_cut_crawl_pages_urls),
            ("round_waiting_links", l.round_waiting_links),
            ("round_waiting_score_p50", l.round_waiting_score_p50),
            ("round_waiting_score_p90", l.round_waiting_score_p90),
            ("round_waiting_score_p99", l.round_waiting_score_p99),
            ("round_waiting_score_max", l.round_waiting_score_max),
        ] {
            writeln!(f, "{key}: {}", count(n))?;
        }
        writeln!(
            f,
            "round_bloom_commit: {}",
            l.round_bloom_commit.as_deref().unwrap_or("?")
        )?;
        Ok(())
    }
}
