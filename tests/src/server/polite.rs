//! Checking politeness from the server side.
//!
//! The rule checked, per host: requests never overlap, and each request
//! starts at least `min_gap` after the *end* of the previous one. That is how
//! a polite crawler's delay works (it waits after a response before sending
//! the next request), measured with the server's clock:
//!
//! - the start of a request is when its first bytes arrived;
//! - the end is when the server finished writing the response (or found the
//!   connection closed, for a request that was abandoned).
//!
//! The server writes a response a little before the client has read it and
//! reads a request a little after it was sent, so a correct client is seen
//! with gaps slightly *longer* than its delay; only scheduling noise of a
//! millisecond or so can shorten them. Pass a `min_gap` a few milliseconds
//! below the delay the crawler was told to keep.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::LogEntry;

/// Two requests to one host that were too close together.
#[derive(Debug, Clone)]
pub struct Violation {
    /// The host.
    pub host: Arc<str>,
    /// The earlier request (the one that ended last among those before).
    pub first: LogEntry,
    /// The request that came too soon.
    pub second: LogEntry,
    /// Time from the end of `first` to the start of `second`; `None` when
    /// they overlapped.
    pub gap: Option<Duration>,
    /// The gap required on this host.
    pub min_gap: Duration,
}

impl Violation {
    fn describe(&self, origin: Instant) -> String {
        let at = |t: Instant| format!("+{:.3}s", t.saturating_duration_since(origin).as_secs_f64());
        let (a, b) = (&self.first, &self.second);
        let what = match self.gap {
            None => "overlaps".to_string(),
            Some(gap) => format!(
                "then, {:.1} ms later (less than {:.1} ms),",
                gap.as_secs_f64() * 1e3,
                self.min_gap.as_secs_f64() * 1e3
            ),
        };
        format!(
            "{}: {} {} [{} .. {}, status {}] {what} {} {} [{} .. {}, status {}]",
            self.host,
            a.method,
            a.target,
            at(a.start),
            at(a.end),
            a.status,
            b.method,
            b.target,
            at(b.start),
            at(b.end),
            b.status
        )
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let origin = self.first.start.min(self.second.start);
        f.write_str(&self.describe(origin))
    }
}

/// Every pair of requests that breaks the rule (see the module docs), with
/// the gap required per host given by `min_gap(host)`.
pub fn politeness_violations(
    log: &[LogEntry],
    min_gap: impl Fn(&str) -> Duration,
) -> Vec<Violation> {
    let mut by_host: BTreeMap<&str, Vec<&LogEntry>> = BTreeMap::new();
    for e in log {
        by_host.entry(&e.host).or_default().push(e);
    }
    let mut out = Vec::new();
    for (host, mut entries) in by_host {
        let required = min_gap(host);
        entries.sort_by_key(|e| e.start);
        // Compare each request with the one, among those that started
        // before it, that ended last: that also catches a request
        // overlapping a long earlier one that is not its direct predecessor.
        let mut latest: Option<&LogEntry> = None;
        for e in entries {
            if let Some(prev) = latest {
                // `None`: the request started before the other one ended.
                let gap = e.start.checked_duration_since(prev.end);
                if gap.is_none_or(|g| g < required) {
                    out.push(Violation {
                        host: e.host.clone(),
                        first: prev.clone(),
                        second: e.clone(),
                        gap,
                        min_gap: required,
                    });
                }
            }
            if latest.is_none_or(|l| e.end > l.end) {
                latest = Some(e);
            }
        }
    }
    out
}

/// Panics with a readable report if any host saw overlapping requests or a
/// request starting less than `min_gap` after the end of the previous one.
pub fn assert_polite(log: &[LogEntry], min_gap: Duration) {
    assert_polite_by_host(log, |_| min_gap);
}

/// Like [`assert_polite`] with a gap per host (for `Crawl-delay` hosts).
pub fn assert_polite_by_host(log: &[LogEntry], min_gap: impl Fn(&str) -> Duration) {
    let violations = politeness_violations(log, &min_gap);
    if violations.is_empty() {
        return;
    }
    let origin = log
        .iter()
        .map(|e| e.start)
        .min()
        .unwrap_or_else(Instant::now);
    let hosts: std::collections::BTreeSet<&str> = violations.iter().map(|v| &*v.host).collect();
    let mut report = format!(
        "politeness violated {} time(s) on {} host(s) ({} requests in the log; \
         times from the first request; gap = end of one response to the start of the next request):\n",
        violations.len(),
        hosts.len(),
        log.len()
    );
    const SHOWN: usize = 20;
    for v in violations.iter().take(SHOWN) {
        report.push_str("  ");
        report.push_str(&v.describe(origin));
        report.push('\n');
    }
    if violations.len() > SHOWN {
        report.push_str(&format!("  ... and {} more\n", violations.len() - SHOWN));
    }
    panic!("{report}");
}
