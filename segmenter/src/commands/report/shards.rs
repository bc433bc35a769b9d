//! A sharded crawl's report (`shards.toml`, S > 1): each shard's state
//! directory (`shards/JJJ/`) is read as a one-machine crawl is, the way
//! `segmenter status` reads it, and the figures are added up.
//!
//! A sharded crawl keeps no round journal (its rounds are task arrays, not
//! `crawl.sh`'s cycle): shard J's k-th round is its k-th complete fetched
//! run, with the `reduce` report that consumed it; the crawl's round k
//! adds up round k of every shard that had one (pages, URLs, figures; the
//! longest fetch and reduce, since the shards' tasks run side by side).
//! The crawl's rounds are the most rounds any shard has. Hosts, the
//! backlog, the history, the seen-set and the crawl logs of the last
//! rounds are every shard's together (a host lives in one shard). One row
//! per shard ([`ShardRow`]) shows where each stands.

use std::collections::BTreeMap;

use common::crawldir::CrawlDir;
use common::hoststate::{HostOverview, HostRow};
use common::rounds::{End, Figures, Round};
use common::shards::Shards;

use super::gather::{
    FetchStats, Gathered, LOG_ROUNDS, LogFacts, RoundRow, RunReport, ShardRow, TOP, min_delay_ms,
    read_hosts, read_logs, read_reports, read_stats,
};
use crate::state::mapped::ShardTasks;
use crate::state::report_summaries;
use crate::state::status::{BloomStatus, CrawlStatus, Summaries};

/// Reads every shard of `crawl` and adds them up.
pub fn gather(crawl: &CrawlDir, shards: &Shards) -> Gathered {
    let mut g = Gathered::default();
    let mut per_shard: Vec<Vec<RoundRow>> = Vec::new();
    let mut statuses = Vec::new();
    let mut hosts = Vec::new();
    for (j, view) in shards.views(crawl).iter().enumerate() {
        let j = j as u32;
        let mut part = Gathered::default();
        let rows = shard_rounds(view, &mut part);
        let mut row = ShardRow {
            shard: j,
            runs: rows.len() as u64,
            pages: rows.iter().map(|r| r.round.pages).sum(),
            ..ShardRow::default()
        };
        match CrawlStatus::read_with_summaries(view, true, TOP) {
            Ok((status, summaries)) => {
                row.pending = status.pending.len();
                row.unconsumed = status.unconsumed.len();
                row.backlog = status.backlog_urls;
                row.history = status.history_urls;
                row.due = status.due_urls;
                row.seen_items = status.bloom.bloom_items;
                row.seen_fill = status.bloom.bloom_fill;
                statuses.push((status, summaries));
            }
            Err(e) => part.problems.push(format!("segmenter status: {e}")),
        }
        match ShardTasks::read(view, shards) {
            Ok(tasks) => {
                row.unmapped = tasks.unmapped.len();
                row.unreduced = tasks.unreduced;
                row.rerun = tasks.rerun(crawl.root(), j);
            }
            Err(e) => part.problems.push(format!("{e}")),
        }
        read_hosts(view, &mut part);
        row.hosts = part.hosts.as_ref().map(|h| h.hosts);
        if let Some(h) = part.hosts.take() {
            hosts.push(h);
        }
        g.crawl_delays.extend(part.crawl_delays.drain());
        let runs: Vec<String> = rows
            .iter()
            .rev()
            .filter_map(|r| r.round.segment.clone())
            .take(LOG_ROUNDS)
            .collect();
        let logs = read_logs(view, runs.into_iter().rev().collect(), &mut part.problems);
        add_logs(&mut g.logs, logs, j);
        if let Some(last) = part.last_report {
            // The newest of every shard's: names hold their time.
            let newest = g.last_report.as_ref().is_none_or(|l| {
                let name = |p: &str| p.rsplit('/').next().unwrap_or("").to_string();
                name(&last) > name(l)
            });
            if newest {
                g.last_report = Some(format!("shards/{j:03}/{last}"));
            }
        }
        let shard_dir = format!("shards/{j:03}");
        g.problems.extend(
            part.problems
                .into_iter()
                .map(|p| format!("{shard_dir}: {p}")),
        );
        per_shard.push(rows);
        g.shards.push(row);
    }
    g.rounds = add_rounds(&per_shard);
    let (status, summaries) = add_statuses(statuses, shards.shards as usize);
    g.status = status;
    g.summaries = summaries;
    g.hosts = add_hosts(hosts);
    g.min_delay_ms = min_delay_ms(crawl, &mut g.problems);
    g
}

/// Shard `view`'s rounds: its complete fetched runs, oldest first, each
/// with its fetch's `stats.json` and the report of the reduce (or run)
/// that consumed it.
fn shard_rounds(view: &CrawlDir, part: &mut Gathered) -> Vec<RoundRow> {
    let runs = match view.completed_runs() {
        Ok(runs) => runs,
        Err(e) => {
            part.problems
                .push(format!("fetched/: cannot list the fetched runs: {e}"));
            Vec::new()
        }
    };
    let reports = read_reports(view, &runs, part);
    let mut rows = Vec::new();
    let mut unsaved = report_summaries::Unsaved::default();
    for (k, id) in runs.into_iter().enumerate() {
        let fetch = read_stats(view, &id, &mut part.problems);
        // From the run's crawl-log summary: the log itself is read only
        // when the summary does not match it (every shard's every log,
        // read each round, grew with the crawl's age).
        let pages = match report_summaries::run_log(view, &id, &mut unsaved) {
            Ok(run) => run.map_or(0, |r| r.pages()),
            Err((Some(run), why)) => {
                part.problems
                    .push(format!("{why}; its pages counted from what was read"));
                run.pages()
            }
            Err((None, why)) => {
                part.problems
                    .push(format!("{why}; its pages are not counted"));
                0
            }
        };
        let report = reports.get(&id).cloned();
        let f = fetch.clone().unwrap_or_default();
        let ended_ms = f.ended_ms.unwrap_or(0);
        rows.push(RoundRow {
            round: Round {
                number: k as u64 + 1,
                segment: Some(id),
                started_ms: f.started_ms.unwrap_or(ended_ms),
                ended_ms,
                end: End::Done,
                urls: f.segment_urls,
                pages,
                figures: report.as_ref().map(|r| r.figures).unwrap_or_default(),
                stop_reason: f.stop_reason,
                fetch_ms: f.fetch_ms,
                segmenter_ms: report.as_ref().map_or(0, |r| r.elapsed_ms),
            },
            report,
            fetch,
        });
    }
    unsaved.say();
    rows
}

/// The crawl's rounds: round k of every shard that has one, added up.
fn add_rounds(per_shard: &[Vec<RoundRow>]) -> Vec<RoundRow> {
    let most = per_shard.iter().map(Vec::len).max().unwrap_or(0);
    (0..most)
        .map(|k| {
            let rows: Vec<&RoundRow> = per_shard.iter().filter_map(|r| r.get(k)).collect();
            add_round(k as u64 + 1, &rows)
        })
        .collect()
}

/// Round `number` of the shards' `rows` as one.
fn add_round(number: u64, rows: &[&RoundRow]) -> RoundRow {
    let mut ids: Vec<&str> = rows
        .iter()
        .filter_map(|r| r.round.segment.as_deref())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let mut reasons: Vec<&str> = rows
        .iter()
        .filter_map(|r| r.round.stop_reason.as_deref())
        .collect();
    reasons.sort_unstable();
    reasons.dedup();
    let mut figures = Figures::default();
    for r in rows {
        add_figures(&mut figures, &r.round.figures);
    }
    let round = Round {
        number,
        segment: Some(ids.join(" ")),
        started_ms: rows.iter().map(|r| r.round.started_ms).min().unwrap_or(0),
        ended_ms: rows.iter().map(|r| r.round.ended_ms).max().unwrap_or(0),
        end: End::Done,
        urls: rows.iter().map(|r| r.round.urls).sum(),
        pages: rows.iter().map(|r| r.round.pages).sum(),
        figures,
        stop_reason: (!reasons.is_empty()).then(|| reasons.join(", ")),
        fetch_ms: rows.iter().map(|r| r.round.fetch_ms).max().unwrap_or(0),
        segmenter_ms: rows.iter().map(|r| r.round.segmenter_ms).max().unwrap_or(0),
    };
    let reports: Vec<&RunReport> = rows.iter().filter_map(|r| r.report.as_ref()).collect();
    let stats: Vec<&FetchStats> = rows.iter().filter_map(|r| r.fetch.as_ref()).collect();
    RoundRow {
        round,
        report: (!reports.is_empty()).then(|| add_reports(&reports)),
        fetch: (!stats.is_empty()).then(|| add_stats(&stats)),
    }
}

fn add_figures(a: &mut Figures, b: &Figures) {
    a.new_urls += b.new_urls;
    a.new_segments += b.new_segments;
    a.history_new += b.history_new;
    a.refreshed_unchanged += b.refreshed_unchanged;
    a.refreshed_changed += b.refreshed_changed;
    a.retired += b.retired;
    a.sitemaps_read += b.sitemaps_read;
    a.sitemap_urls += b.sitemap_urls;
    a.sitemap_urls_new += b.sitemap_urls_new;
    a.sitemap_urls_rejected += b.sitemap_urls_rejected;
    a.bad_sitemaps += b.bad_sitemaps;
}

/// The reduce reports of one round's shards as one: counts added, the
/// seen-set's fill and false-positive rate averaged (each shard checks its
/// own URLs), grown if any grew.
fn add_reports(reports: &[&RunReport]) -> RunReport {
    let n = reports.len() as f64;
    let mut out = RunReport {
        file: format!("{} reduce report(s)", reports.len()),
        ..RunReport::default()
    };
    for r in reports {
        out.new += r.new;
        out.scheduled += r.scheduled;
        out.refetches += r.refetches;
        out.backlog += r.backlog;
        out.bloom_fill += r.bloom_fill / n;
        out.bloom_fp += r.bloom_fp / n;
        out.bloom_grew |= r.bloom_grew;
        out.damaged_records += r.damaged_records;
        for (reason, hosts) in &r.held_hosts {
            *out.held_hosts.entry(reason.clone()).or_default() += hosts;
        }
        // (The scores' quantiles of several shards do not add up: not shown.)
        if let Some(cuts) = r.left_waiting {
            let sum = out
                .left_waiting
                .get_or_insert(cuts.map(|(name, _)| (name, 0)));
            for (s, c) in sum.iter_mut().zip(cuts) {
                s.1 += c.1;
            }
        }
        add_figures(&mut out.figures, &r.figures);
        out.elapsed_ms = out.elapsed_ms.max(r.elapsed_ms);
    }
    out
}

fn add_stats(stats: &[&FetchStats]) -> FetchStats {
    let mut out = FetchStats::default();
    for s in stats {
        for (k, n) in &s.outcomes {
            *out.outcomes.entry(k.clone()).or_default() += n;
        }
        out.warc_bytes += s.warc_bytes;
        out.truncated += s.truncated;
        out.resumed |= s.resumed;
        out.fetch_ms = out.fetch_ms.max(s.fetch_ms);
    }
    out
}

/// Adds shard `j`'s crawl-log facts to `all`.
fn add_logs(all: &mut LogFacts, part: LogFacts, j: u32) {
    all.runs
        .extend(part.runs.into_iter().map(|id| format!("{j:03}/{id}")));
    all.lines += part.lines;
    all.bad_lines += part.bad_lines;
    all.retry_after += part.retry_after;
    for (mime, n) in part.mime {
        *all.mime.entry(mime).or_default() += n;
    }
    // A host lives in one shard: no host is in two parts.
    all.hosts.extend(part.hosts);
}

/// Every shard's status as one: lists of IDs as `JJJ/ID`, counts added
/// (unknown if any shard's is), the seen-set's figures added (fill and
/// false-positive rate averaged over the shards' filters, weighted by
/// their URLs).
fn add_statuses(
    statuses: Vec<(CrawlStatus, Summaries)>,
    shards: usize,
) -> (Option<CrawlStatus>, Summaries) {
    if statuses.len() < shards {
        // A shard that cannot be read: no total would be true.
        return (None, Summaries::default());
    }
    let mut all = CrawlStatus::default();
    let mut summaries = Summaries::default();
    let sum = |a: Option<u64>, b: Option<u64>| Some(a? + b?);
    let (mut backlog, mut history, mut due) = (Some(0), Some(0), Some(0));
    let mut blooms = Vec::new();
    for (j, (s, sums)) in statuses.into_iter().enumerate() {
        let tag = |ids: Vec<String>| ids.into_iter().map(move |id| format!("{j:03}/{id}"));
        all.segments.extend(tag(s.segments));
        all.pending.extend(tag(s.pending));
        all.unconsumed.extend(tag(s.unconsumed));
        backlog = sum(backlog, s.backlog_urls);
        history = sum(history, s.history_urls);
        due = sum(due, s.due_urls);
        blooms.push(s.bloom);
        add_backlog(&mut summaries, sums.backlog);
        add_history(&mut summaries, sums.history);
    }
    all.next = all.pending.first().cloned().unwrap_or_default();
    all.backlog_urls = backlog;
    all.history_urls = history;
    all.due_urls = due;
    all.bloom = add_blooms(&blooms);
    (Some(all), summaries)
}

fn add_blooms(blooms: &[BloomStatus]) -> BloomStatus {
    let sum = |f: fn(&BloomStatus) -> Option<u64>| -> Option<u64> {
        blooms.iter().map(f).sum::<Option<u64>>()
    };
    let items = sum(|b| b.bloom_items);
    let weighted = |f: fn(&BloomStatus) -> Option<f64>| -> Option<f64> {
        let total = items?.max(1) as f64;
        blooms
            .iter()
            .map(|b| Some(f(b)? * b.bloom_items? as f64 / total))
            .sum()
    };
    BloomStatus {
        bloom_items: items,
        bloom_design_items: sum(|b| b.bloom_design_items),
        bloom_bytes: sum(|b| b.bloom_bytes),
        bloom_journal_hashes: sum(|b| b.bloom_journal_hashes),
        bloom_fill: weighted(|b| b.bloom_fill),
        bloom_fp_rate: weighted(|b| b.bloom_fp_rate),
        bloom_target_fp_rate: blooms.iter().find_map(|b| b.bloom_target_fp_rate),
        bloom_rescued: sum(|b| b.bloom_rescued),
    }
}

fn add_backlog(all: &mut Summaries, part: Option<common::segment::SegmentSummary>) {
    let Some(part) = part else { return };
    let Some(b) = &mut all.backlog else {
        all.backlog = Some(part);
        return;
    };
    b.urls += part.urls;
    b.hosts += part.hosts;
    b.domains += part.domains;
    b.file_bytes += part.file_bytes;
    b.top_hosts.extend(part.top_hosts);
    b.top_hosts
        .sort_by(|x, y| y.urls.cmp(&x.urls).then_with(|| x.host.cmp(&y.host)));
    b.top_hosts.truncate(TOP);
}

fn add_history(all: &mut Summaries, part: Option<crate::history::HistorySummary>) {
    let Some(part) = part else { return };
    let Some(h) = &mut all.history else {
        all.history = Some(part);
        return;
    };
    h.urls += part.urls;
    h.hosts += part.hosts;
    h.active += part.active;
    h.failed += part.failed;
    h.gone += part.gone;
    h.moved += part.moved;
    h.robots += part.robots;
    h.changed_urls += part.changed_urls;
    let (d, p) = (&mut h.due, &part.due);
    d.now += p.now;
    d.hour += p.hour;
    d.day += p.day;
    d.week += p.week;
    d.month += p.month;
    d.later += p.later;
    h.top_hosts.extend(part.top_hosts);
    h.top_hosts
        .sort_by(|x, y| y.2.cmp(&x.2).then_with(|| x.0.cmp(&y.0)));
    h.top_hosts.truncate(TOP);
}

/// Every shard's `hosts.db` overview as one: counts added by label, the
/// top lists merged in the order each is kept in.
fn add_hosts(parts: Vec<HostOverview>) -> Option<HostOverview> {
    let mut parts = parts.into_iter();
    let mut all = parts.next()?;
    for p in parts {
        all.hosts += p.hosts;
        all.with_crawl_delay += p.with_crawl_delay;
        all.failing += p.failing;
        all.held += p.held;
        add_labelled(&mut all.robots, &p.robots);
        add_labelled(&mut all.pages_per_host, &p.pages_per_host);
        all.top_pages.extend(p.top_pages);
        all.top_errors.extend(p.top_errors);
        all.top_delay.extend(p.top_delay);
        all.top_failing.extend(p.top_failing);
        all.top_held.extend(p.top_held);
    }
    top(&mut all.top_pages, |h| h.pages as i64);
    top(&mut all.top_errors, |h| h.errors as i64);
    top(&mut all.top_delay, |h| {
        h.crawl_delay_ms.map_or(-1, |d| d as i64)
    });
    top(&mut all.top_failing, |h| h.consecutive_errors as i64);
    top(&mut all.top_held, |h| h.next_contact_ms.unwrap_or(-1));
    Some(all)
}

fn add_labelled(all: &mut Vec<(&'static str, u64)>, part: &[(&'static str, u64)]) {
    let mut by: BTreeMap<&str, u64> = part.iter().copied().collect();
    for (label, n) in all.iter_mut() {
        *n += by.remove(label).unwrap_or(0);
    }
    all.extend(by);
}

/// The first [`TOP`] rows by `key`, most first, ties by host name (as
/// `hosts.db`'s own lists).
fn top(rows: &mut Vec<HostRow>, key: impl Fn(&HostRow) -> i64) {
    rows.sort_by(|a, b| key(b).cmp(&key(a)).then_with(|| a.host.cmp(&b.host)));
    rows.truncate(TOP);
}
