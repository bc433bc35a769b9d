//! The per-round summaries the report keeps, so that the report `crawl.sh`
//! rebuilds after every round reads that round's files and small summaries
//! of the others, not every crawl log and round report again.
//!
//! Two files in each fetched run's directory, written by the report the
//! first time it reads the run's files (see `docs/formats.md`):
//!
//! - [`LOG_SUMMARY_FILE`]: what the report takes from the run's
//!   `crawl.log` ([`RunLog`]: lines, media types, Retry-After notes, and
//!   per host the first start, last end and smallest gap between
//!   requests), written only once the run is complete (`DONE`);
//! - [`REPORT_SUMMARY_FILE`]: the parts the report reads of each round
//!   report (`logs/segmenter-*.json`, of a `run` or a shard's `reduce`)
//!   that consumed the run.
//!
//! Each names the file it was made from by size and modification time: a
//! summary that does not match its file (the log was rewritten by a
//! resumed fetch, the report replaced) is not used, and one that cannot be
//! read is said on stderr; either way the file is read again and the
//! summary rewritten. A summary is only a shortcut: deleting them all
//! gives the same page.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::BufRead;
use std::path::{Path, PathBuf};

use common::crawldir::CrawlDir;
use common::crawllog::Status;
use common::segment::Via;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A fetched run's crawl-log summary, beside its `crawl.log`.
pub const LOG_SUMMARY_FILE: &str = "crawl-log-summary.v1.json";
/// A fetched run's round-report summary (the reports that consumed it).
pub const REPORT_SUMMARY_FILE: &str = "round-report-summary.v1.json";
/// The version both files carry.
const VERSION: u64 = 1;

/// What the report needs of one fetched run's `crawl.log`.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunLog {
    /// Complete lines read, and of them lines not in the format.
    pub lines: u64,
    /// See `lines`.
    pub bad_lines: u64,
    /// Attempts answered by a Retry-After that was honoured.
    pub retry_after: u64,
    /// Pages (HTTP responses, robots.txt aside) by media type.
    pub mime: BTreeMap<String, u64>,
    /// Every host with a line, with the times of the attempts that reached
    /// it (or tried to).
    pub hosts: BTreeMap<String, HostSpan>,
}

/// One host's attempts in one run: the earliest start, the latest end
/// (Unix ms) and the smallest time between the end of an attempt and the
/// start of the next (ms); all `None` for a host whose lines are all URLs
/// passed over without a request. Kept as a JSON array of three.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostSpan(pub Option<i64>, pub Option<i64>, pub Option<u64>);

impl HostSpan {
    /// The earliest start.
    pub fn first_start_ms(&self) -> Option<i64> {
        self.0
    }
    /// The latest end.
    pub fn last_end_ms(&self) -> Option<i64> {
        self.1
    }
    /// The smallest gap inside the run.
    pub fn min_gap_ms(&self) -> Option<u64> {
        self.2
    }
}

impl RunLog {
    /// Pages: the attempts answered with an HTTP response, robots.txt
    /// aside (what `common::crawllog::Tally` counts as pages).
    pub fn pages(&self) -> u64 {
        self.mime.values().sum()
    }

    /// Counts one crawl log line (a line without its final line break,
    /// still being written or cut by a crash, is passed over).
    pub fn add_line(&mut self, text: &str) {
        if !text.ends_with('\n') {
            return;
        }
        self.lines += 1;
        let Ok(line) = common::crawllog::parse_line(text) else {
            self.bad_lines += 1;
            return;
        };
        let host = url::Url::parse(&line.url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .unwrap_or_default();
        let robots = line.via == Via::Robots;
        if line.note.starts_with("retry-after") {
            self.retry_after += 1;
        }
        let end = common::timefmt::unix_millis(line.time);
        let h = self.hosts.entry(host).or_default();
        match line.status {
            Status::Http(_) if !robots => {
                let mime = if line.content_type.is_empty() {
                    "(none)".to_string()
                } else {
                    line.content_type.to_ascii_lowercase()
                };
                *self.mime.entry(mime).or_default() += 1;
            }
            Status::Http(_) => {}
            // Only attempts that reached (or tried to reach) the host are
            // spaced by politeness: a URL held or passed over without a
            // request has a line too.
            Status::Error(code) if !code.contacted_host() => return,
            Status::Error(_) => {}
        }
        let start = end - line.duration_ms as i64;
        if let Some(prev) = h.1 {
            let gap = (start - prev).max(0) as u64;
            h.2 = Some(h.2.map_or(gap, |g| g.min(gap)));
        }
        h.0 = Some(h.0.map_or(start, |s| s.min(start)));
        h.1 = Some(h.1.map_or(end, |e| e.max(end)));
    }

    /// Reads the crawl log at `path` whole; `Err` says why it stopped
    /// (what was read before is kept).
    fn read(path: &Path) -> Result<RunLog, (RunLog, String)> {
        let mut run = RunLog::default();
        let file = std::fs::File::open(path).map_err(|e| (RunLog::default(), e.to_string()))?;
        let mut reader = std::io::BufReader::with_capacity(1 << 16, file);
        let mut line = String::new();
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) => return Ok(run),
                Ok(_) => run.add_line(&line),
                Err(e) => return Err((run, e.to_string())),
            }
        }
    }
}

/// A file a summary was made from, by size and modification time (ns
/// since the Unix epoch).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    /// Its size.
    pub bytes: u64,
    /// Its modification time.
    pub mtime_ns: u64,
}

impl Source {
    /// The size and time of the file `meta` describes.
    fn of(meta: &std::fs::Metadata) -> Source {
        let mtime_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as u64);
        Source {
            bytes: meta.len(),
            mtime_ns,
        }
    }
}

/// [`LOG_SUMMARY_FILE`] as kept.
#[derive(Debug, Serialize, Deserialize)]
struct LogSummaryFile {
    version: u64,
    crawl_log: Source,
    #[serde(flatten)]
    run: RunLog,
}

/// One round report as [`REPORT_SUMMARY_FILE`] keeps it: its name in
/// `logs/`, what it was made from, and its keys the report reads.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReportDigest {
    /// The file's name.
    pub file: String,
    /// See [`Source`].
    pub source: Source,
    /// The report with only the keys the page reads ([`trim_report`]).
    pub report: Value,
}

/// [`REPORT_SUMMARY_FILE`] as kept.
#[derive(Debug, Serialize, Deserialize)]
struct ReportSummaryFile {
    version: u64,
    reports: Vec<ReportDigest>,
}

/// The top-level keys of a round report the page reads (through
/// `gather::run_report` and `state::reports::figures_of`).
const REPORT_KEYS: [&str; 11] = [
    "version",
    "command",
    "consumed",
    "selection",
    "backlog",
    "bloom",
    "counts",
    "totals",
    "history",
    "segments",
    "elapsed",
];

/// The round report `v` with only what the page reads: [`REPORT_KEYS`],
/// each segment with its URL count only.
pub fn trim_report(v: &Value) -> Value {
    let mut out = serde_json::Map::new();
    for key in REPORT_KEYS {
        let Some(value) = v.get(key) else { continue };
        let value = match (key, value) {
            ("segments", Value::Array(segments)) => Value::Array(
                segments
                    .iter()
                    .map(|s| serde_json::json!({ "urls": s.get("urls") }))
                    .collect(),
            ),
            _ => value.clone(),
        };
        out.insert(key.to_string(), value);
    }
    Value::Object(out)
}

/// Summaries that could not be saved (a crawl directory the report may
/// not write), said once at the end.
#[derive(Debug, Default)]
pub struct Unsaved {
    count: usize,
    first: Option<String>,
}

impl Unsaved {
    fn add(&mut self, path: &Path, e: std::io::Error) {
        self.count += 1;
        self.first
            .get_or_insert_with(|| format!("{}: {e}", path.display()));
    }

    /// Says on stderr what could not be saved, if anything.
    pub fn say(self) {
        if let Some(first) = self.first {
            common::runlog::say(format_args!(
                "report: {} summary file(s) could not be saved ({first}); the next report \
                 reads their logs again",
                self.count
            ));
        }
    }
}

/// Writes `value` to `path` atomically.
fn save(path: &Path, value: &impl Serialize, unsaved: &mut Unsaved) {
    let mut text = serde_json::to_vec(value).expect("a summary serializes");
    text.push(b'\n');
    if let Err(e) = common::atomic::write_atomic(path, &text) {
        unsaved.add(path, e);
    }
}

/// Reads the summary at `path` of version [`VERSION`]: `Ok(None)` when
/// there is none, `Err` saying why it cannot be used.
fn load<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>, String> {
    let text = match std::fs::read(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read: {e}")),
    };
    let v: Value = serde_json::from_slice(&text).map_err(|e| format!("damaged (bad JSON: {e})"))?;
    match v.get("version").and_then(Value::as_u64) {
        Some(VERSION) => {}
        Some(n) => return Err(format!("version {n}, not {VERSION}")),
        None => return Err("damaged (no \"version\")".into()),
    }
    serde_json::from_value(v)
        .map(Some)
        .map_err(|e| format!("damaged ({e})"))
}

/// True if fetched run `id` is complete (its log no longer grows).
fn complete(crawl: &CrawlDir, id: &str) -> bool {
    crawl
        .fetched_dir(id)
        .join(common::crawldir::DONE_FILE)
        .is_file()
}

/// What one run's crawl log gives the report: from its summary if that
/// matches the log, else from the log (the summary then saved, once the
/// run is complete). `Ok(None)`: the run has no crawl log; `Err`: a
/// problem to show, with what could be read.
pub fn run_log(
    crawl: &CrawlDir,
    id: &str,
    unsaved: &mut Unsaved,
) -> Result<Option<RunLog>, (Option<RunLog>, String)> {
    let path = crawl.crawl_log_path(id);
    let meta = match std::fs::metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err((None, format!("fetched/{id}/crawl.log: cannot read: {e}"))),
    };
    let source = Source::of(&meta);
    let summary = crawl.fetched_dir(id).join(LOG_SUMMARY_FILE);
    match load::<LogSummaryFile>(&summary) {
        Ok(Some(s)) if s.crawl_log == source => return Ok(Some(s.run)),
        Ok(_) => {}
        Err(why) => common::runlog::say(format_args!(
            "report: {}: {why}; rebuilt from fetched/{id}/crawl.log",
            summary.display()
        )),
    }
    let run = RunLog::read(&path).map_err(|(run, why)| {
        (
            Some(run),
            format!("{}: read cut short: {why}", path.display()),
        )
    })?;
    if complete(crawl, id) {
        let file = LogSummaryFile {
            version: VERSION,
            crawl_log: source,
            run,
        };
        save(&summary, &file, unsaved);
        return Ok(Some(file.run));
    }
    Ok(Some(run))
}

/// The round reports' digests the summaries of `runs` hold, by file name
/// (a summary that cannot be read is said on stderr and passed over: the
/// reports it summed are read again).
pub fn report_digests(crawl: &CrawlDir, runs: &[String]) -> HashMap<String, ReportDigest> {
    let mut digests = HashMap::new();
    for id in runs {
        let path = crawl.fetched_dir(id).join(REPORT_SUMMARY_FILE);
        match load::<ReportSummaryFile>(&path) {
            Ok(Some(s)) => {
                for d in s.reports {
                    digests.insert(d.file.clone(), d);
                }
            }
            Ok(None) => {}
            Err(why) => {
                // Removed, so that it is said once: it is made again from
                // the reports that consumed the run, if any is left.
                let _ = std::fs::remove_file(&path);
                common::runlog::say(format_args!(
                    "report: {}: {why}; rebuilt from the round reports in logs/",
                    path.display()
                ))
            }
        }
    }
    digests
}

/// The round report at `path` (named `name`) for the page: its digest's
/// copy if `digests` holds one made from this very file, else the file
/// read (and its digest returned, to save). `Err` says why the file
/// cannot be used.
pub fn round_report(
    path: &Path,
    name: &str,
    digests: &HashMap<String, ReportDigest>,
) -> Result<(Value, Option<ReportDigest>), String> {
    let source = std::fs::metadata(path).ok().map(|m| Source::of(&m));
    if let Some(d) = digests.get(name)
        && Some(d.source) == source
    {
        return Ok((d.report.clone(), None));
    }
    let v = crate::state::reports::read_report(path)?;
    let report = trim_report(&v);
    let digest = source.map(|source| ReportDigest {
        file: name.to_string(),
        source,
        report: report.clone(),
    });
    Ok((report, digest))
}

/// Saves the round-report summary of each of `runs` that a report read
/// whole this time consumed: the digests of every report in `all` (in
/// order) that consumed it. `fresh` names the reports read whole.
pub fn save_report_digests(
    crawl: &CrawlDir,
    runs: &[String],
    all: &[ReportDigest],
    fresh: &HashSet<String>,
    unsaved: &mut Unsaved,
) {
    let consumed = |d: &ReportDigest, id: &str| {
        d.report
            .get("consumed")
            .and_then(Value::as_array)
            .is_some_and(|ids| ids.iter().any(|c| c.as_str() == Some(id)))
    };
    for id in runs {
        let reports: Vec<ReportDigest> = all.iter().filter(|d| consumed(d, id)).cloned().collect();
        if !reports.iter().any(|d| fresh.contains(&d.file)) || !complete(crawl, id) {
            continue;
        }
        let path: PathBuf = crawl.fetched_dir(id).join(REPORT_SUMMARY_FILE);
        let file = ReportSummaryFile {
            version: VERSION,
            reports,
        };
        save(&path, &file, unsaved);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(time: &str, status: &str, ms: u64, url: &str, note: &str) -> String {
        format!("{time}\t{status}\t100\t{ms}\ttext/html\t{url}\tlink\t1\t{note}\n")
    }

    #[test]
    fn a_line_counts_its_page_and_spacing() {
        let mut run = RunLog::default();
        run.add_line(&line(
            "2026-11-23T04:27:02.000Z",
            "200",
            100,
            "http://a.example/x",
            "-",
        ));
        run.add_line(&line(
            "2026-11-23T04:27:02.500Z",
            "503",
            100,
            "http://a.example/y",
            "retry-after 5",
        ));
        run.add_line(&line(
            "2026-11-23T04:27:03.000Z",
            "robots",
            0,
            "http://a.example/z",
            "-",
        ));
        run.add_line("not a line\n");
        run.add_line("2026-11-23T04:27:04.000Z\t200");
        assert_eq!(run.lines, 4);
        assert_eq!(run.bad_lines, 1);
        assert_eq!(run.retry_after, 1);
        assert_eq!(run.mime.get("text/html"), Some(&2));
        let a = run.hosts["a.example"];
        let t0 = common::timefmt::parse_iso("2026-11-23T04:27:02.000Z")
            .map(common::timefmt::unix_millis)
            .unwrap()
            - 100;
        assert_eq!(a.first_start_ms(), Some(t0));
        assert_eq!(a.last_end_ms(), Some(t0 + 100 + 500));
        // 500 ms between the two, less the second's 100 ms.
        assert_eq!(a.min_gap_ms(), Some(400));
    }

    #[test]
    fn trimming_a_report_keeps_what_the_page_reads() {
        let v = serde_json::json!({
            "version": 2, "command": "run", "consumed": ["00001"],
            "segments": [{"id": "00002", "urls": 7, "hosts": ["a", "b"]}],
            "mapped": ["x"], "scan_time": 1.5, "rescue": {"lookups": 3},
        });
        let t = trim_report(&v);
        assert_eq!(
            t,
            serde_json::json!({
                "version": 2, "command": "run", "consumed": ["00001"],
                "segments": [{"urls": 7}],
            })
        );
    }
}
