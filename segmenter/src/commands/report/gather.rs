//! What the report shows, read from the files the crawl keeps: the round
//! journal, the JSON round reports in `logs/`, each fetched run's
//! `stats.json`, the crawl logs of the last rounds (streamed), `hosts.db`
//! (read only) and what `segmenter status` counts. Never a WARC file. A file
//! that cannot be read becomes a line of [`Gathered::problems`]; the rest
//! is shown.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use common::crawldir::CrawlDir;
use common::hoststate::{HostDb, HostOverview};
use common::rounds::{Figures, Round};
use serde_json::Value;

use crate::state::report_summaries as summaries;
use crate::state::status::{CrawlStatus, Summaries};

/// Rounds whose crawl logs are read (the last ones), for the MIME types,
/// the hosts' errors and the spacing of requests.
pub const LOG_ROUNDS: usize = 20;
/// Rows of each "top hosts" table.
pub const TOP: usize = 15;

/// What the `segmenter run` that consumed a round's fetched run reported.
#[derive(Debug, Default, Clone)]
pub struct RunReport {
    /// The report file's name (`segmenter-TIMESTAMP.json`).
    pub file: String,
    /// New URLs found, URLs scheduled, of them refetches due.
    pub new: u64,
    /// See `new`.
    pub scheduled: u64,
    /// See `new`.
    pub refetches: u64,
    /// URLs in the backlog after the round.
    pub backlog: u64,
    /// The seen-set after the round: fill, false-positive estimate.
    pub bloom_fill: f64,
    /// See `bloom_fill`.
    pub bloom_fp: f64,
    /// True if the seen-set grew (was rebuilt larger) in the round.
    pub bloom_grew: bool,
    /// Damaged WARC records the scan skipped.
    pub damaged_records: u64,
    /// Hosts held back, by reason.
    pub held_hosts: BTreeMap<String, u64>,
    /// URLs each cut sent to the backlog: the hosts' caps, the round's
    /// size, the crawl's page budget, the holds (`None`: a report of a
    /// build that did not count them).
    pub left_waiting: Option<[(&'static str, u64); 4]>,
    /// The scores (in-links) of the URLs waiting after the round: URLs,
    /// median, 90th and 99th percentiles, most (`None`: not counted).
    pub waiting_scores: Option<[u64; 5]>,
    /// What it wrote and learnt, as the round journal keeps it.
    pub figures: Figures,
    /// Its wall time, ms.
    pub elapsed_ms: u64,
}

/// What a fetched run's `stats.json` says (its last process, if resumed).
#[derive(Debug, Default, Clone)]
pub struct FetchStats {
    /// Outcomes: status classes (`2xx`) and error words.
    pub outcomes: BTreeMap<String, u64>,
    /// WARC bytes stored.
    pub warc_bytes: u64,
    /// Responses stored truncated.
    pub truncated: u64,
    /// True if the run was resumed (the figures are the last process's).
    pub resumed: bool,
    /// When the (last) process started and ended, Unix ms, if said.
    pub started_ms: Option<i64>,
    /// See `started_ms`.
    pub ended_ms: Option<i64>,
    /// Its wall time, ms.
    pub fetch_ms: u64,
    /// URLs in the segment.
    pub segment_urls: Option<u64>,
    /// Why the run ended.
    pub stop_reason: Option<String>,
}

/// One round, as the journal, its round report and its fetch stats tell it.
#[derive(Debug, Clone)]
pub struct RoundRow {
    /// The journal's line.
    pub round: Round,
    /// Its `segmenter run` report, if found.
    pub report: Option<RunReport>,
    /// Its fetch's `stats.json`, if readable.
    pub fetch: Option<FetchStats>,
}

/// One host as seen in the crawl logs read.
#[derive(Debug, Default, Clone)]
pub struct HostLog {
    /// The smallest time between the end of a request and the start of the
    /// next one, ms.
    pub min_gap_ms: Option<u64>,
    last_end_ms: Option<i64>,
}

/// What the crawl logs of the last rounds hold.
#[derive(Debug, Default)]
pub struct LogFacts {
    /// The runs read (fetched run IDs).
    pub runs: Vec<String>,
    /// Lines read, and lines not in the format.
    pub lines: u64,
    /// See `lines`.
    pub bad_lines: u64,
    /// Pages by media type.
    pub mime: HashMap<String, u64>,
    /// Attempts answered by a Retry-After that was honoured (`retry-after` notes).
    pub retry_after: u64,
    /// Per host.
    pub hosts: HashMap<String, HostLog>,
}

/// Everything the page shows.
#[derive(Debug, Default)]
pub struct Gathered {
    /// The rounds, oldest first.
    pub rounds: Vec<RoundRow>,
    /// What `segmenter status` says, and the summaries it counted from.
    pub status: Option<CrawlStatus>,
    /// See `status`.
    pub summaries: Summaries,
    /// The hosts (`None`: no `hosts.db`, or it cannot be read).
    pub hosts: Option<HostOverview>,
    /// Hosts with a Crawl-delay, ms.
    pub crawl_delays: HashMap<String, u64>,
    /// The crawl's smallest delay between requests to a host, ms.
    pub min_delay_ms: u64,
    /// The crawl logs of the last rounds.
    pub logs: LogFacts,
    /// Files missing or damaged, each said in a sentence.
    pub problems: Vec<String>,
    /// The newest round report file, if any (relative to the crawl).
    pub last_report: Option<String>,
    /// A sharded crawl's shards, one row each (empty for one shard).
    pub shards: Vec<ShardRow>,
    /// Rounds whose round report `segmenter prune` removed (older than
    /// the oldest report left): expected, said in a note.
    pub pruned_reports: Vec<u64>,
}

/// One shard of a sharded crawl, as the report's shard table shows it.
#[derive(Debug, Default, Clone)]
pub struct ShardRow {
    /// Its number.
    pub shard: u32,
    /// Complete fetched runs (its rounds), and the pages they hold.
    pub runs: u64,
    /// See `runs`.
    pub pages: u64,
    /// Segments waiting to be fetched.
    pub pending: usize,
    /// Complete runs not consumed by its reduce, not mapped yet, and map
    /// outputs of any shard addressed to it not reduced yet.
    pub unconsumed: usize,
    /// See `unconsumed`.
    pub unmapped: usize,
    /// See `unconsumed`.
    pub unreduced: usize,
    /// URLs in its backlog, its history, due now (`None`: unreadable).
    pub backlog: Option<u64>,
    /// See `backlog`.
    pub history: Option<u64>,
    /// See `backlog`.
    pub due: Option<u64>,
    /// Its seen-set: URLs and fill.
    pub seen_items: Option<u64>,
    /// See `seen_items`.
    pub seen_fill: Option<f64>,
    /// Hosts in its `hosts.db`.
    pub hosts: Option<u64>,
    /// The task to run again, if one failed (as `segmenter status` says).
    pub rerun: String,
}

/// Reads everything from the crawl (or shard view) `crawl`, laid out as
/// a one-machine crawl (a sharded crawl's: [`super::shards`]).
pub fn gather(crawl: &CrawlDir) -> Gathered {
    let mut g = Gathered::default();
    let journal = match common::rounds::read(crawl) {
        Ok(rounds) => rounds,
        Err(e) => {
            g.problems.push(format!("{e}; no round is shown"));
            Vec::new()
        }
    };
    let runs: Vec<String> = journal.iter().filter_map(|r| r.segment.clone()).collect();
    let reports = read_reports(crawl, &runs, &mut g);
    let report_of = |round: &Round| round.segment.as_ref().and_then(|s| reports.get(s)).cloned();
    // `segmenter prune` removes the oldest round reports first and keeps
    // the newest: a round older than the oldest report left lost its own
    // to the pruning, as expected; a newer one without a report is a
    // problem.
    let oldest_kept = journal
        .iter()
        .filter(|r| report_of(r).is_some())
        .map(|r| r.number)
        .min();
    let mut lost = Vec::new();
    for round in journal {
        let report = report_of(&round);
        if report.is_none() && round.end == common::rounds::End::Done {
            match oldest_kept {
                Some(oldest) if round.number < oldest => g.pruned_reports.push(round.number),
                _ => lost.push(round.number),
            }
        }
        let fetch = round
            .segment
            .as_ref()
            .and_then(|s| read_stats(crawl, s, &mut g.problems));
        g.rounds.push(RoundRow {
            round,
            report,
            fetch,
        });
    }
    if !lost.is_empty() {
        g.problems.push(format!(
            "{}: no round report (logs/segmenter-*.json consuming the round's segment) was \
             found: the new URLs, backlog, seen-set and held hosts of {} are not shown",
            rounds_named(&lost),
            if lost.len() == 1 {
                "that round"
            } else {
                "those rounds"
            }
        ));
    }
    match CrawlStatus::read_with_summaries(crawl, true, TOP) {
        Ok((status, summaries)) => {
            g.status = Some(status);
            g.summaries = summaries;
        }
        Err(e) => g.problems.push(format!("segmenter status: {e}")),
    }
    read_hosts(crawl, &mut g);
    g.min_delay_ms = min_delay_ms(crawl, &mut g.problems);
    let last = runs.len().saturating_sub(LOG_ROUNDS);
    g.logs = read_logs(crawl, runs[last..].to_vec(), &mut g.problems);
    g
}

/// `round 4`, `rounds 1–44, 47`: round numbers (ascending) in a few words.
pub fn rounds_named(numbers: &[u64]) -> String {
    let mut spans: Vec<(u64, u64)> = Vec::new();
    for &n in numbers {
        match spans.last_mut() {
            Some((_, last)) if *last + 1 == n => *last = n,
            _ => spans.push((n, n)),
        }
    }
    let text: Vec<String> = spans
        .iter()
        .map(|&(a, b)| match b - a {
            0 => a.to_string(),
            1 => format!("{a}, {b}"),
            _ => format!("{a}–{b}"),
        })
        .collect();
    let word = if numbers.len() == 1 {
        "round"
    } else {
        "rounds"
    };
    format!("{word} {}", text.join(", "))
}

/// The crawl's smallest delay between requests to a host, ms (`crawl.toml`).
pub(super) fn min_delay_ms(crawl: &CrawlDir, problems: &mut Vec<String>) -> u64 {
    match common::config::CrawlConfig::load(&crawl.config_path())
        .map_err(|e| e.to_string())
        .and_then(|c| c.shared().map_err(|e| e.to_string()))
        .and_then(|s| s.policy())
    {
        Ok(policy) => policy.min_delay.as_millis() as u64,
        Err(why) => {
            problems.push(format!(
                "{}: {why}; the default min_delay is assumed",
                crawl.config_path().display()
            ));
            common::politeness::Policy::default().min_delay.as_millis() as u64
        }
    }
}

/// The `run` (and a shard's `reduce`) reports of `logs/`, by the fetched
/// run each consumed (a reduce's own runs by their ID). A report that
/// consumed one of `runs` (the crawl's rounds) is taken from that run's
/// summary when it was made from this very file; a report read whole is
/// summed into the summaries of the runs it consumed.
pub(super) fn read_reports(
    crawl: &CrawlDir,
    runs: &[String],
    g: &mut Gathered,
) -> HashMap<String, RunReport> {
    let dir = crawl.logs_dir();
    let mut files = match crate::state::reports::report_files(&dir) {
        Ok(files) => files,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => {
            g.problems.push(format!(
                "{}: cannot list the round reports: {e}",
                dir.display()
            ));
            Vec::new()
        }
    };
    files.sort();
    let digests = summaries::report_digests(crawl, runs);
    let mut kept = Vec::new();
    let mut fresh = HashSet::new();
    let mut by_run = HashMap::new();
    for (_, path) in files {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (v, digest) = match summaries::round_report(&path, &name, &digests) {
            Ok(read) => read,
            Err(why) => {
                g.problems.push(format!("logs/{name}: {why}"));
                continue;
            }
        };
        if !matches!(
            v.get("command").and_then(Value::as_str),
            Some("run" | "reduce")
        ) {
            continue;
        }
        g.last_report = Some(format!("logs/{name}"));
        let report = run_report(name.clone(), &v);
        for id in v
            .get("consumed")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(id) = id.as_str() {
                by_run.insert(id.to_string(), report.clone());
            }
        }
        match digest {
            Some(d) => {
                fresh.insert(name);
                kept.push(d);
            }
            None => kept.extend(digests.get(&name).cloned()),
        }
    }
    let mut unsaved = summaries::Unsaved::default();
    summaries::save_report_digests(crawl, runs, &kept, &fresh, &mut unsaved);
    unsaved.say();
    by_run
}

/// The figures of the report `v` (named `file`).
fn run_report(file: String, v: &Value) -> RunReport {
    let n = |p: &str| v.pointer(p).and_then(Value::as_u64).unwrap_or(0);
    let f = |p: &str| v.pointer(p).and_then(Value::as_f64).unwrap_or(0.0);
    let held_hosts = v
        .pointer("/selection/held")
        .and_then(Value::as_object)
        .map(|held| {
            held.iter()
                .map(|(reason, h)| {
                    (
                        reason.clone(),
                        h.get("hosts").and_then(Value::as_u64).unwrap_or(0),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    RunReport {
        file,
        new: n("/selection/new"),
        scheduled: n("/selection/scheduled"),
        refetches: n("/selection/refetches"),
        backlog: n("/backlog"),
        bloom_fill: f("/bloom/fill"),
        bloom_fp: f("/bloom/fp_rate"),
        bloom_grew: v.pointer("/bloom/growth").is_some_and(|g| !g.is_null()),
        damaged_records: n("/counts/damaged_records"),
        held_hosts,
        left_waiting: v.pointer("/selection/cut").map(|_| {
            let cut = |name: &str| n(&format!("/selection/cut/{name}/urls"));
            [
                ("per-host cap", n("/selection/capped_urls")),
                ("segment size", cut("segment-size")),
                ("crawl pages", cut("crawl-pages")),
                ("held (budgets, failures)", n("/totals/held_urls")),
            ]
        }),
        waiting_scores: v.pointer("/selection/scores/waiting").map(|_| {
            ["urls", "p50", "p90", "p99", "max"]
                .map(|k| n(&format!("/selection/scores/waiting/{k}")))
        }),
        figures: crate::state::reports::figures_of(v),
        elapsed_ms: (f("/elapsed") * 1000.0) as u64,
    }
}

/// `fetched/ID/stats.json`; a file that is there but cannot be read is a problem.
pub(super) fn read_stats(
    crawl: &CrawlDir,
    id: &str,
    problems: &mut Vec<String>,
) -> Option<FetchStats> {
    let path = crawl.fetched_dir(id).join("stats.json");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            problems.push(format!("fetched/{id}/stats.json: cannot read: {e}"));
            return None;
        }
    };
    let v: Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            problems.push(format!(
                "fetched/{id}/stats.json: not the fetcher's stats (bad JSON: {e}); \
                 the round's outcomes are not shown"
            ));
            return None;
        }
    };
    let n = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
    let outcomes = v
        .get("outcomes")
        .and_then(Value::as_object)
        .map(|o| {
            o.iter()
                .map(|(k, n)| (k.clone(), n.as_u64().unwrap_or(0)))
                .collect()
        })
        .unwrap_or_default();
    let time = |k: &str| {
        v.get(k)
            .and_then(Value::as_str)
            .and_then(common::timefmt::parse_iso)
            .map(common::timefmt::unix_millis)
    };
    Some(FetchStats {
        outcomes,
        warc_bytes: n("warc_bytes"),
        truncated: n("truncated"),
        resumed: v.get("resumed").and_then(Value::as_bool).unwrap_or(false),
        started_ms: time("started"),
        ended_ms: time("finished"),
        fetch_ms: (v.get("seconds").and_then(Value::as_f64).unwrap_or(0.0) * 1000.0) as u64,
        segment_urls: v.get("segment_urls").and_then(Value::as_u64),
        stop_reason: v
            .get("stop_reason")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string),
    })
}

/// The host overview and the Crawl-delays from `hosts.db`, read only.
pub(super) fn read_hosts(crawl: &CrawlDir, g: &mut Gathered) {
    let now = common::timefmt::unix_millis(std::time::SystemTime::now());
    let read = HostDb::open_read_only(crawl.hosts_db_path()).and_then(|db| match db {
        Some(db) => Ok(Some((db.overview(TOP, now)?, db.crawl_delays()?))),
        None => Ok(None),
    });
    match read {
        Ok(Some((overview, delays))) => {
            g.hosts = Some(overview);
            g.crawl_delays = delays.into_iter().collect();
        }
        Ok(None) => {}
        Err(e) => g.problems.push(format!("{e}; the hosts are not shown")),
    }
}

/// The crawl logs of `runs`, in order: each run's summary where it
/// matches its log, else the log read whole (see [`summaries`]).
pub(super) fn read_logs(
    crawl: &CrawlDir,
    runs: Vec<String>,
    problems: &mut Vec<String>,
) -> LogFacts {
    let mut facts = LogFacts::default();
    let mut unsaved = summaries::Unsaved::default();
    for id in runs {
        let run = match summaries::run_log(crawl, &id, &mut unsaved) {
            Ok(Some(run)) => run,
            Ok(None) => continue,
            Err((run, why)) => {
                problems.push(why);
                match run {
                    Some(run) => run,
                    None => continue,
                }
            }
        };
        facts.runs.push(id);
        facts.add_run(run);
    }
    unsaved.say();
    if facts.bad_lines > 0 {
        problems.push(format!(
            "{} crawl log line(s) not in the format were passed over",
            facts.bad_lines
        ));
    }
    facts
}

impl LogFacts {
    /// Adds the next run's log: a host's smallest gap is the smallest of
    /// its gaps inside the run and between its last request before the
    /// run and its first in it, as if the logs were read one after the
    /// other.
    pub(super) fn add_run(&mut self, run: summaries::RunLog) {
        self.lines += run.lines;
        self.bad_lines += run.bad_lines;
        self.retry_after += run.retry_after;
        for (mime, n) in run.mime {
            *self.mime.entry(mime).or_default() += n;
        }
        for (host, span) in run.hosts {
            let h = self.hosts.entry(host).or_default();
            let mut gap = span.min_gap_ms();
            if let (Some(prev), Some(start)) = (h.last_end_ms, span.first_start_ms()) {
                let across = (start - prev).max(0) as u64;
                gap = Some(gap.map_or(across, |g| g.min(across)));
            }
            if let Some(gap) = gap {
                h.min_gap_ms = Some(h.min_gap_ms.map_or(gap, |g| g.min(gap)));
            }
            if let Some(end) = span.last_end_ms() {
                h.last_end_ms = Some(h.last_end_ms.map_or(end, |e| e.max(end)));
            }
        }
    }
}

/// `path` relative to the directory `from` (both absolute or both
/// relative to the same place): `../crawl/logs` and the like.
pub fn relative(path: &Path, from: &Path) -> String {
    let p: Vec<_> = path.components().collect();
    let f: Vec<_> = from.components().collect();
    let common = p.iter().zip(&f).take_while(|(a, b)| a == b).count();
    let mut out = std::path::PathBuf::new();
    for _ in common..f.len() {
        out.push("..");
    }
    for c in &p[common..] {
        out.push(c);
    }
    let s = out.to_string_lossy().into_owned();
    if s.is_empty() { ".".into() } else { s }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::round::report::{HeldBack, Report};

    /// Crawl log lines of three hosts, in the order their requests end:
    /// each host's requests one after the other with gaps of 50 to 550 ms
    /// between them, some passed over without a request; from a small
    /// linear congruential generator.
    fn host_lines(n: usize) -> Vec<String> {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |m: u64| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (x >> 33) % m
        };
        let base = common::timefmt::parse_iso("2026-11-23T04:27:02.000Z").unwrap();
        let mut free = [0u64; 3];
        let mut lines: Vec<(u64, String)> = (0..n)
            .map(|i| {
                let h = next(3) as usize;
                let ms = next(300);
                let start = free[h] + 50 + next(500);
                free[h] = start + ms;
                let time =
                    common::timefmt::iso_millis(base + std::time::Duration::from_millis(start + ms));
                let status = ["200", "404", "503", "timeout", "robots", "dns"][next(6) as usize];
                let note = if next(5) == 0 { "retry-after 2" } else { "-" };
                let host = ["a", "b", "c"][h];
                let line = format!(
                    "{time}\t{status}\t10\t{ms}\ttext/html\thttp://{host}.example/{i}\tlink\t1\t{note}\n"
                );
                (start + ms, line)
            })
            .collect();
        lines.sort_by_key(|(end, _)| *end);
        lines.into_iter().map(|(_, l)| l).collect()
    }

    fn run_of(lines: &[String]) -> summaries::RunLog {
        let mut run = summaries::RunLog::default();
        for l in lines {
            run.add_line(l);
        }
        run
    }

    fn gaps(facts: &LogFacts) -> BTreeMap<String, Option<u64>> {
        facts
            .hosts
            .iter()
            .map(|(h, l)| (h.clone(), l.min_gap_ms))
            .collect()
    }

    #[test]
    fn runs_summed_apart_give_the_figures_of_their_logs_read_in_a_row() {
        let lines = host_lines(300);
        let mut whole = LogFacts::default();
        whole.add_run(run_of(&lines));
        // The run's smallest gap of each host: where it falls decides
        // which cuts put it across two runs.
        let smallest = gaps(&whole);
        assert!(
            smallest.values().all(|g| g.is_some_and(|g| g > 0)),
            "{smallest:?}"
        );
        let mut runs = vec![vec![1, 2, 3], vec![40, 41, 299], vec![100, 200, 250]];
        // Cuts just before each host's request that follows its smallest
        // gap: that gap is then between two runs.
        let mut last_end: HashMap<String, i64> = HashMap::new();
        for (i, text) in lines.iter().enumerate() {
            let line = common::crawllog::parse_line(text).unwrap();
            if matches!(line.status, common::crawllog::Status::Error(c) if !c.contacted_host()) {
                continue;
            }
            let host = url::Url::parse(&line.url)
                .unwrap()
                .host_str()
                .unwrap()
                .to_string();
            let end = common::timefmt::unix_millis(line.time);
            let start = end - line.duration_ms as i64;
            if let Some(prev) = last_end.insert(host.clone(), end)
                && Some((start - prev) as u64) == smallest[&host]
            {
                runs.push(vec![i]);
            }
        }
        assert!(runs.len() >= 6, "{runs:?}");
        for cuts in runs {
            let mut parts = LogFacts::default();
            let mut from = 0;
            for to in cuts.iter().copied().chain([lines.len()]) {
                parts.add_run(run_of(&lines[from..to]));
                from = to;
            }
            assert_eq!(gaps(&parts), smallest, "cut at {cuts:?}");
            assert_eq!(
                (parts.lines, parts.bad_lines, parts.retry_after),
                (whole.lines, whole.bad_lines, whole.retry_after)
            );
            assert_eq!(parts.mime, whole.mime);
        }
    }

    #[test]
    fn a_trimmed_round_report_gives_the_figures_of_the_whole_one() {
        let mut report = Report {
            command: "run",
            consumed: vec!["00003".into()],
            segments: vec![("00004".into(), 17), ("00005".into(), 4)],
            backlog: 99,
            elapsed: std::time::Duration::from_millis(1500),
            history: Some(crate::history::HistoryCounts {
                gone: 2,
                ..Default::default()
            }),
            ..Report::default()
        };
        report.selection.new = 21;
        report.selection.scheduled = 20;
        report.selection.capped_urls = 5;
        report.selection.held.insert("backoff", HeldBack::default());
        report
            .selection
            .cut
            .insert("segment-size", HeldBack::default());
        report.bloom.fill = 0.25;
        let v: Value = serde_json::from_str(&report.to_json()).unwrap();
        let trimmed = summaries::trim_report(&v);
        assert!(trimmed.to_string().len() < v.to_string().len());
        assert_eq!(
            format!("{:?}", run_report("r.json".into(), &trimmed)),
            format!("{:?}", run_report("r.json".into(), &v))
        );
    }
}
