//! `fetched/ID/stats.json`: the totals of a run, and the process figures
//! (CPU time, peak memory) the benchmark reads.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Serialize;

/// The totals of one run (of one `fetch` process; a resumed run counts its own part).
#[derive(Debug, Default, Serialize)]
pub struct Stats {
    /// Format version of this file.
    pub version: u32,
    /// The segment.
    pub segment: String,
    /// Start time (ISO 8601).
    pub started: String,
    /// End time (ISO 8601).
    pub finished: String,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Why the run ended: `complete`, `tail` (the hosts left would mostly
    /// make the round wait), `held` (every host left is held beyond its
    /// delay), `time-limit`, `min-hosts`, `signal`, `disk` (the free-disk
    /// floor), `run-bytes`, `crawl-bytes` (byte budgets).
    pub stop_reason: String,
    /// What a disk or budget stop says (empty otherwise).
    pub stop_detail: String,
    /// WARC bytes stored by this run (the compressed records, as the byte
    /// budgets count them).
    pub warc_bytes: u64,
    /// URLs sent to the leftover untried by a byte budget or the disk floor,
    /// by reason (`run-bytes`, `crawl-bytes`, `host-round-bytes`,
    /// `host-bytes`, `disk`).
    pub cuts: BTreeMap<String, u64>,
    /// True if this run resumed an interrupted one.
    pub resumed: bool,
    /// URLs in the segment (well-formed lines).
    pub segment_urls: u64,
    /// Malformed segment lines skipped (each one is named in the log).
    pub malformed_lines: u64,
    /// URLs skipped because an earlier run had done them.
    pub already_done: u64,
    /// Queues (hosts by default) in the segment.
    pub queues: u64,
    /// Crawl-log lines written by this run.
    pub attempts: u64,
    /// Responses stored (robots.txt included).
    pub responses: u64,
    /// robots.txt responses stored.
    pub robots_responses: u64,
    /// Payload bytes stored (as received).
    pub payload_bytes: u64,
    /// Responses stored truncated.
    pub truncated: u64,
    /// Crawl-log outcomes: status classes (`2xx`) and error codes.
    pub outcomes: BTreeMap<String, u64>,
    /// Leftover URLs by `via` (`leftover`, `retry`).
    pub leftover: BTreeMap<String, u64>,
    /// WARC files written by this run.
    pub warc_files: Vec<String>,
    /// Pages (non-robots responses) per second.
    pub pages_per_second: f64,
    /// Seconds from the start of the run to its first request (resuming,
    /// loading the segment and the host state).
    pub startup_seconds: f64,
    /// CPU seconds used by the process.
    pub cpu_seconds: f64,
    /// Peak resident memory of the process, bytes.
    pub peak_rss_bytes: u64,
}

impl Stats {
    /// Writes the file atomically.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let mut text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        text.push('\n');
        common::atomic::write_atomic(path, text.as_bytes())
    }
}

/// Peak resident set size of this process (`VmHWM`), in bytes.
pub fn peak_rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

/// User + system CPU time of this process.
pub fn cpu_time() -> Duration {
    // Fields 14 and 15 of /proc/self/stat, in clock ticks (100 per second on Linux).
    let Ok(s) = std::fs::read_to_string("/proc/self/stat") else {
        return Duration::ZERO;
    };
    let Some(after) = s.rfind(')').map(|i| &s[i + 1..]) else {
        return Duration::ZERO;
    };
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|&i| f.get(i).and_then(|v| v.parse::<u64>().ok()))
        .sum();
    Duration::from_millis(ticks * 10)
}
