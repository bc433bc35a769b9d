//! `segmenter inspect history.v3.tsv.zst`: how many URLs the history holds,
//! how many are due when, and the hosts with the most due now. One pass over
//! the file; memory holds one host and the top list.

use std::path::Path;

use serde::Serialize;

use super::{HistoryError, HistoryReader, State};

/// The summary of a history file.
#[derive(Debug, Default, Serialize)]
pub struct HistorySummary {
    /// The file.
    pub file: String,
    /// URLs in it.
    pub urls: u64,
    /// Hosts in it.
    pub hosts: u64,
    /// URLs still refetched.
    pub active: u64,
    /// URLs whose retries ran out, due again at `recrawl_failed` (also
    /// counted in `due`).
    pub failed: u64,
    /// Retired: gone (404/410), moved (301/308), robots.txt.
    pub gone: u64,
    /// See `gone`.
    pub moved: u64,
    /// See `gone`.
    pub robots: u64,
    /// Active and failed URLs due now, within an hour, a day, a week, 30 days, later
    /// (each bucket excludes the ones before).
    pub due: DueBuckets,
    /// When the first active or failed URL not due now comes due (Unix
    /// ms; `None`: there is none).
    pub next_due_ms: Option<i64>,
    /// Pages seen to change at least once.
    pub changed_urls: u64,
    /// Hosts with the most URLs due now: (host, URLs, due now).
    pub top_hosts: Vec<(String, u64, u64)>,
}

/// Active URLs by when they are due.
#[derive(Debug, Default, Serialize)]
pub struct DueBuckets {
    /// Due now.
    pub now: u64,
    /// Within the next hour.
    pub hour: u64,
    /// Within a day.
    pub day: u64,
    /// Within a week.
    pub week: u64,
    /// Within 30 days.
    pub month: u64,
    /// Later.
    pub later: u64,
}

impl HistorySummary {
    /// Reads `path` as of `now_ms`, keeping the `top` hosts with the most
    /// URLs due now.
    pub fn compute(path: &Path, now_ms: i64, top: usize) -> Result<HistorySummary, HistoryError> {
        let mut s = HistorySummary {
            file: path.display().to_string(),
            ..HistorySummary::default()
        };
        let Some(mut r) = HistoryReader::open(path)? else {
            return Err(HistoryError::Io {
                path: path.to_path_buf(),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
            });
        };
        let mut host = (String::new(), 0u64, 0u64);
        let end_host = |s: &mut HistorySummary, host: &mut (String, u64, u64)| {
            if host.1 == 0 {
                return;
            }
            s.hosts += 1;
            if top > 0 {
                let item = (std::mem::take(&mut host.0), host.1, host.2);
                let at = s
                    .top_hosts
                    .partition_point(|t| (t.2, t.1) >= (item.2, item.1));
                if at < top {
                    s.top_hosts.insert(at, item);
                    s.top_hosts.truncate(top);
                }
            }
            *host = (String::new(), 0, 0);
        };
        while let Some(e) = r.next_entry()? {
            if e.host != host.0 {
                end_host(&mut s, &mut host);
                host.0 = e.host.clone();
            }
            host.1 += 1;
            s.urls += 1;
            s.changed_urls += u64::from(e.changes > 0);
            match e.state {
                State::Gone => s.gone += 1,
                State::Moved => s.moved += 1,
                State::Robots => s.robots += 1,
                State::Active | State::Failed => {
                    if e.state == State::Active {
                        s.active += 1;
                    } else {
                        s.failed += 1;
                    }
                    let wait = e.due_ms - now_ms;
                    if wait > 0 {
                        s.next_due_ms = Some(s.next_due_ms.map_or(e.due_ms, |t| t.min(e.due_ms)));
                    }
                    let b = &mut s.due;
                    const H: i64 = 3_600_000;
                    match wait {
                        ..=0 => {
                            b.now += 1;
                            host.2 += 1;
                        }
                        w if w <= H => b.hour += 1,
                        w if w <= 24 * H => b.day += 1,
                        w if w <= 7 * 24 * H => b.week += 1,
                        w if w <= 30 * 24 * H => b.month += 1,
                        _ => b.later += 1,
                    }
                }
            }
        }
        end_host(&mut s, &mut host);
        Ok(s)
    }
}

impl std::fmt::Display for HistorySummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let d = &self.due;
        writeln!(f, "file:      {}", self.file)?;
        writeln!(f, "urls:      {} on {} hosts", self.urls, self.hosts)?;
        writeln!(
            f,
            "active:    {} ({} changed at least once)",
            self.active, self.changed_urls
        )?;
        writeln!(
            f,
            "failed:    {} (retries ran out; due again at recrawl_failed)",
            self.failed
        )?;
        writeln!(
            f,
            "retired:   {} (gone {}, moved {}, robots {})",
            self.gone + self.moved + self.robots,
            self.gone,
            self.moved,
            self.robots
        )?;
        writeln!(
            f,
            "due:       now {}, within 1h {}, 1d {}, 7d {}, 30d {}, later {}",
            d.now, d.hour, d.day, d.week, d.month, d.later
        )?;
        if !self.top_hosts.is_empty() {
            writeln!(f, "hosts with the most URLs due now (due / urls):")?;
            for (host, urls, due) in &self.top_hosts {
                writeln!(f, "  {due:>10} / {urls:<10} {host}")?;
            }
        }
        Ok(())
    }
}
