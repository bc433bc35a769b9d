//! `segmenter status CRAWL [--json] [--no-backlog]`: where the crawl stands between steps,
//! for scripts (`scripts/crawl.sh`) and for a look by hand: the segments,
//! those still to fetch, the complete fetched runs not yet consumed, and the
//! URLs waiting in the backlog, the seen-set's size, fill and rescues;
//! and what the last `segmenter run` found
//! (`last_round`, `round_*`: from its JSON report, the newest
//! `logs/segmenter-*.json` of a `run`). It only reads; it takes no lock.
//!
//! `--json` prints one line holding one flat object (`{"key":value,...}`:
//! numbers, strings, and lists of segment IDs, which hold no `,` or `"`), so
//! that a shell script can pick a key without a JSON parser; the text form
//! has the same keys, as `key: value` lines (lists separated by spaces).

use std::path::{Path, PathBuf};

use common::crawldir::CrawlDir;
use common::rounds::Figures;
use common::segment::SegmentSummary;
use serde::Serialize;

use crate::round::commit::read_consumed;
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

/// What the last `segmenter run` (a shard's `reduce`) did, from its JSON
/// report. Every key is `null` (`?` in text) before the first `run`, or if
/// its report cannot be read (the reason goes to stderr); a
/// `round_history_*` figure also when the run merged no history.
#[derive(Debug, Default, Serialize)]
pub struct LastRound {
    /// The report's name without `.json` (`segmenter-TIMESTAMP`, the stem
    /// of the run's log too).
    pub last_round: Option<String>,
    /// Distinct URLs found that were never seen before.
    pub round_new_urls: Option<u64>,
    /// URLs written to segments.
    pub round_scheduled: Option<u64>,
    /// Of the new URLs, those the Bloom filter called seen but that were in
    /// none of the exact sets (rescued).
    pub round_rescued: Option<u64>,
    /// How the round wrote the Bloom filter (`appended`, `folded`,
    /// `grown`, ...).
    pub round_bloom_commit: Option<String>,
    /// URLs fetched for the first time (history merge).
    pub round_history_new: Option<u64>,
    /// URLs fetched again and found unchanged.
    pub round_refreshed_unchanged: Option<u64>,
    /// URLs fetched again and found changed.
    pub round_refreshed_changed: Option<u64>,
    /// URLs retired (gone, moved, disallowed by robots.txt).
    pub round_retired: Option<u64>,
    /// Sitemaps read, all kinds.
    pub round_sitemaps_read: Option<u64>,
    /// URLs the sitemaps listed.
    pub round_sitemap_urls: Option<u64>,
    /// Of them, new URLs taken.
    pub round_sitemap_urls_new: Option<u64>,
    /// Of them, URLs not taken (protocol, filters, limits, depth, invalid).
    pub round_sitemap_urls_rejected: Option<u64>,
    /// Sitemaps not read to the end (bad XML or gzip).
    pub round_bad_sitemaps: Option<u64>,
    /// Retries that ran out (kept in the history as `failed`).
    pub round_retries_exhausted: Option<u64>,
    /// URLs held in the backlog by a budget or their host's failures
    /// (backoff, parked, host-bytes, host-pages, domain-pages, crawl-bytes).
    pub round_held_urls: Option<u64>,
    /// Links not taken from pages over `max_links_per_page`.
    pub round_over_page_cap: Option<u64>,
    /// URLs refused for their extension (`skip_extensions`).
    pub round_rejected_extension: Option<u64>,
}

impl LastRound {
    /// Reads the newest JSON report of a `run` in `logs_dir`. Reports of
    /// `inject` and `import` are passed over; the newest report of a `run`
    /// that cannot be read gives all `null` (said on stderr), never an
    /// older round's figures.
    pub fn read(logs_dir: &Path) -> LastRound {
        let found = newest_run_report(logs_dir, |_| true);
        match found {
            Ok(Some((path, v))) => LastRound::of(&path, &v),
            Ok(None) => LastRound::default(),
            Err(why) => {
                common::runlog::say(format_args!(
                    "{why}; the last round's figures are not shown"
                ));
                LastRound::default()
            }
        }
    }

    /// The figures of the report `v` kept at `path`.
    fn of(path: &Path, v: &serde_json::Value) -> LastRound {
        let n = |pointer: &str| v.pointer(pointer).and_then(serde_json::Value::as_u64);
        LastRound {
            last_round: path.file_stem().map(|s| s.to_string_lossy().into_owned()),
            round_new_urls: n("/selection/new"),
            round_scheduled: n("/selection/scheduled"),
            round_rescued: n("/selection/rescued"),
            round_bloom_commit: v
                .pointer("/bloom/commit")
                .and_then(serde_json::Value::as_str)
                .map(str::to_string),
            round_history_new: n("/history/new"),
            round_refreshed_unchanged: n("/history/unchanged"),
            round_refreshed_changed: n("/history/changed"),
            round_retired: n("/totals/retired"),
            round_sitemaps_read: n("/totals/sitemaps_read"),
            round_sitemap_urls: n("/counts/sitemap_urls"),
            round_sitemap_urls_new: n("/counts/sitemap_new"),
            round_sitemap_urls_rejected: n("/totals/sitemap_urls_rejected"),
            round_bad_sitemaps: n("/counts/bad_sitemaps"),
            round_retries_exhausted: n("/counts/retries_exhausted"),
            round_held_urls: n("/totals/held_urls"),
            round_over_page_cap: n("/counts/over_page_cap"),
            round_rejected_extension: n("/counts/rejects/extension"),
        }
    }
}

/// What the `segmenter run` that consumed fetched run `id` wrote and learnt
/// (the round journal's figures of the round that fetched it), from its
/// JSON report in `logs_dir`; all 0 if no report of a run that consumed it
/// is left (logs pruned). An error names a report that cannot be read.
pub fn round_figures(logs_dir: &Path, id: &str) -> Result<Figures, String> {
    let consumed_it = |v: &serde_json::Value| {
        v.get("consumed")
            .and_then(serde_json::Value::as_array)
            .is_some_and(|ids| ids.iter().any(|c| c.as_str() == Some(id)))
    };
    let Some((_, v)) = newest_run_report(logs_dir, consumed_it)? else {
        return Ok(Figures::default());
    };
    Ok(figures_of(&v))
}

/// The round journal's figures of the report `v` of a `run` (or a
/// shard's `reduce`).
pub(crate) fn figures_of(v: &serde_json::Value) -> Figures {
    let last = LastRound::of(Path::new(""), v);
    let segments: Vec<u64> = v
        .get("segments")
        .and_then(serde_json::Value::as_array)
        .map(|s| s.iter().filter_map(|s| s.get("urls")?.as_u64()).collect())
        .unwrap_or_default();
    let n = |x: Option<u64>| x.unwrap_or(0);
    Figures {
        new_urls: segments.iter().sum(),
        new_segments: segments.len() as u64,
        history_new: n(last.round_history_new),
        refreshed_unchanged: n(last.round_refreshed_unchanged),
        refreshed_changed: n(last.round_refreshed_changed),
        retired: n(last.round_retired),
        sitemaps_read: n(last.round_sitemaps_read),
        sitemap_urls: n(last.round_sitemap_urls),
        sitemap_urls_new: n(last.round_sitemap_urls_new),
        sitemap_urls_rejected: n(last.round_sitemap_urls_rejected),
        bad_sitemaps: n(last.round_bad_sitemaps),
    }
}

/// The newest report of a `run` (or a shard's `reduce`, the same step of
/// a sharded round) in `dir` that `wanted` accepts, with its
/// path; `None` if there is none (or no `dir`). A report that cannot be
/// read on the way is an error naming it.
fn newest_run_report(
    dir: &Path,
    wanted: impl Fn(&serde_json::Value) -> bool,
) -> Result<Option<(PathBuf, serde_json::Value)>, String> {
    let mut reports = match report_files(dir) {
        Ok(files) => files,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(format!(
                "{}: cannot list the round reports: {e}",
                dir.display()
            ));
        }
    };
    reports.sort();
    for (_, path) in reports.into_iter().rev() {
        let v = read_report(&path).map_err(|why| format!("{}: {why}", path.display()))?;
        let command = v.get("command").and_then(serde_json::Value::as_str);
        if matches!(command, Some("run" | "reduce")) && wanted(&v) {
            return Ok(Some((path, v)));
        }
    }
    Ok(None)
}
/// The `segmenter-*.json` files of `dir`, with the key that orders them
/// by age: the timestamp, then the `-N` of runs started in the same
/// millisecond.
pub(crate) fn report_files(dir: &Path) -> std::io::Result<Vec<((String, u64), PathBuf)>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(stamp) = name
            .to_str()
            .and_then(|n| n.strip_prefix("segmenter-"))
            .and_then(|n| n.strip_suffix(".json"))
        else {
            continue;
        };
        let key = match stamp.split_once('-') {
            Some((stamp, n)) => (stamp.to_string(), n.parse().unwrap_or(0)),
            None => (stamp.to_string(), 0),
        };
        files.push((key, entry.path()));
    }
    Ok(files)
}

/// The report at `path`, checked for its version; an error says why the
/// file cannot be used.
pub(crate) fn read_report(path: &Path) -> Result<serde_json::Value, String> {
    use serde_json::Value;
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| format!("not a round report (bad JSON: {e}); delete it if it is damaged"))?;
    match v.get("version").and_then(Value::as_u64) {
        Some(n) if n <= crate::round::report::JSON_VERSION => Ok(v),
        Some(n) => Err(format!(
            "round report version {n}, written by a newer segmenter (this one reads up to {})",
            crate::round::report::JSON_VERSION
        )),
        None => Err("not a round report (no \"version\")".to_string()),
    }
}

/// Prints the status of the crawl directory `root` (of shard `shard`; of
/// every shard in turn for a sharded crawl without one).
pub fn status(root: &Path, shard: Option<u32>, json: bool, backlog: bool) -> Result<(), Error> {
    if !root.is_dir() {
        return Err(Error::Usage(format!(
            "{}: {}",
            root.display(),
            common::crawldir::no_such_crawl(root)
        )));
    }
    let shards = common::shards::Shards::load(root)?;
    if shards.is_sharded() && shard.is_none() {
        let mut text = String::new();
        let mut each: Vec<serde_json::Value> = Vec::new();
        for (j, view) in shards.views(&CrawlDir::new(root)).iter().enumerate() {
            let status = CrawlStatus::read(view, backlog)?;
            let tasks = ShardTasks::read(view, &shards)?;
            let rerun = tasks.rerun(root, j as u32);
            if json {
                let mut v = serde_json::to_value(&status).map_err(|e| Error::Io {
                    path: root.to_path_buf(),
                    source: e.into(),
                })?;
                v["shard"] = j.into();
                v["unmapped"] = tasks.unmapped.clone().into();
                v["unreduced"] = tasks.unreduced.into();
                v["rerun"] = rerun.into();
                each.push(v);
            } else {
                text.push_str(&format!("shard: {j} ({})\n", view.root().display()));
                text.push_str(&status.to_string());
                text.push_str(&format!(
                    "unmapped: {}\nunreduced: {}\nrerun: {rerun}\n\n",
                    tasks.unmapped.join(" "),
                    tasks.unreduced,
                ));
            }
        }
        if json {
            let totals = shard_totals(&each);
            let v = serde_json::json!({"shards": shards.shards, "key": shards.key.to_string(), "totals": totals, "per_shard": each});
            text = format!("{v}\n");
        }
        return common::exit::print(&text).map_err(Error::io("stdout"));
    }
    let crawl = common::shards::select(root, shard).map_err(|e| Error::Usage(e.to_string()))?;
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

/// The sums of the shards' figures (`totals` of a sharded crawl's
/// `--json`): list lengths and counts; a count is `null` if any shard's is.
fn shard_totals(each: &[serde_json::Value]) -> serde_json::Value {
    let mut totals = serde_json::Map::new();
    for key in ["segments", "pending", "unconsumed", "unmapped"] {
        let n: usize = each
            .iter()
            .map(|v| v[key].as_array().map_or(0, Vec::len))
            .sum();
        totals.insert(key.to_string(), n.into());
    }
    for key in [
        "unreduced",
        "backlog_urls",
        "history_urls",
        "due_urls",
        "bloom_items",
        "bloom_bytes",
        "bloom_rescued",
    ] {
        let n: Option<u64> = each.iter().map(|v| v[key].as_u64()).sum();
        totals.insert(key.to_string(), n.into());
    }
    totals.into()
}

/// What a shard's tasks have left to do.
pub(crate) struct ShardTasks {
    /// Complete runs of the shard not mapped yet.
    pub(crate) unmapped: Vec<String>,
    /// Map outputs, of every shard, addressed to it and not reduced yet.
    pub(crate) unreduced: usize,
    /// A pending segment's fetch started and did not end (`fetched/ID/`
    /// without `DONE`).
    fetch_started: bool,
}

impl ShardTasks {
    /// Reads what shard `view`'s tasks have left to do.
    pub(crate) fn read(
        view: &CrawlDir,
        shards: &common::shards::Shards,
    ) -> Result<ShardTasks, Error> {
        let consumed = read_consumed(&view.consumed_path())?;
        let inputs = crate::round::map::mapped_inputs(view, shards, &consumed)?;
        Ok(ShardTasks {
            unmapped: crate::round::map::unmapped_runs(view)?,
            unreduced: inputs.candidates.len(),
            fetch_started: view
                .pending_segments()
                .map_err(Error::io(view.segments_dir()))?
                .iter()
                .any(|id| view.fetched_dir(id).exists()),
        })
    }

    /// The task to run again for this shard, if one failed (or did not
    /// run yet): its fetch when a run is unfinished or unmapped, else its reduce when
    /// map outputs wait for it; empty if none.
    pub(crate) fn rerun(&self, root: &Path, j: u32) -> String {
        let step = if self.fetch_started || !self.unmapped.is_empty() {
            "fetch"
        } else if self.unreduced > 0 {
            "reduce"
        } else {
            return String::new();
        };
        format!("scripts/task.sh {} {step} --index {j}", root.display())
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
/// Segment and fetched-run IDs, oldest first.
type Ids = Vec<String>;

/// A crawl's segments (oldest first), those not fetched to their end, and
/// its complete fetched runs not consumed yet: where `status` and the
/// driver's decisions ([`crate::cycle`]) both start.
pub fn segments_and_runs(crawl: &CrawlDir) -> Result<(Ids, Ids, Ids), Error> {
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
    Ok((segments, pending, unconsumed))
}
