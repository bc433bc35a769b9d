//! The round reports a crawl keeps (`logs/segmenter-*.json`, written by
//! [`crate::round::report`]): which files they are, read with their
//! version checked, and the figures of the last `run` (or a shard's
//! `reduce`) and of the round that consumed a fetched run.

use std::path::{Path, PathBuf};

use common::rounds::Figures;
use serde::Serialize;

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
    /// URLs the hosts' caps (`max_per_host`, their delays) left waiting in
    /// the backlog.
    pub round_capped_urls: Option<u64>,
    /// URLs the round's size left waiting (`order = "score"`).
    pub round_cut_segment_size_urls: Option<u64>,
    /// URLs the crawl's page budget (`max_crawl_pages`) left waiting.
    pub round_cut_crawl_pages_urls: Option<u64>,
    /// In-links the round found to URLs that wait, added to their scores.
    pub round_waiting_links: Option<u64>,
    /// The scores (in-links) of the URLs in the backlog after the round:
    /// median, 90th and 99th percentiles, most.
    pub round_waiting_score_p50: Option<u64>,
    /// See `round_waiting_score_p50`.
    pub round_waiting_score_p90: Option<u64>,
    /// See `round_waiting_score_p50`.
    pub round_waiting_score_p99: Option<u64>,
    /// See `round_waiting_score_p50`.
    pub round_waiting_score_max: Option<u64>,
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
        // (A round that cut nothing has no entry for the cut; a report of
        // an older build has no cuts at all.)
        let cuts = v.pointer("/selection/cut").is_some();
        let cut = |name: &str| cuts.then(|| n(&format!("/selection/cut/{name}/urls")).unwrap_or(0));
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
            round_capped_urls: n("/selection/capped_urls"),
            round_cut_segment_size_urls: cut("segment-size"),
            round_cut_crawl_pages_urls: cut("crawl-pages"),
            round_waiting_links: n("/selection/waiting_links"),
            round_waiting_score_p50: n("/selection/scores/waiting/p50"),
            round_waiting_score_p90: n("/selection/scores/waiting/p90"),
            round_waiting_score_p99: n("/selection/scores/waiting/p99"),
            round_waiting_score_max: n("/selection/scores/waiting/max"),
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
