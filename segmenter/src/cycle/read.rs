//! The crawl's state for [`super::decide`], read from the crawl directory;
//! and the one place that writes what a decision records (`round.json`,
//! the round journal).

use std::path::Path;
use std::time::Duration;

use common::config::CrawlConfig;
use common::config::fetcher::FetcherOptions;
use common::crawldir::CrawlDir;
use common::fetched::RunStatus;
use common::politeness::Policy;
use common::rounds::{self, Figures};
use common::segment::SegmentSummary;

use super::{Decision, DriverState, Facts, HistoryFacts, Lookup, SegmentFacts};
use crate::error::Error;

/// Reads the [`Facts`] of `crawl`: its segments and fetched runs,
/// `consumed.txt`, `round.json` and the round journal. `since_ms` and
/// `exit_code` are the driver's.
pub fn facts(crawl: &CrawlDir, since_ms: i64, exit_code: i32) -> Result<Facts, Error> {
    let (segments, pending, unconsumed) = crate::state::runs::segments_and_runs(crawl)?;
    let rounds = rounds::read(crawl).map_err(Error::io(crawl.rounds_path()))?;
    Ok(Facts {
        crawl: crawl.clone(),
        now_ms: common::timefmt::unix_millis(std::time::SystemTime::now()),
        since_ms,
        exit_code,
        stop_file: crawl.stop_path().exists(),
        next_number: rounds::next_number(crawl, &rounds),
        rounds,
        segments,
        pending,
        unconsumed,
        state: read_state(&crawl.round_state_path())?,
        sharded: false,
    })
}

/// `round.json` (empty if missing); a file that is not one is an error
/// saying what to do.
fn read_state(path: &Path) -> Result<DriverState, Error> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(DriverState::default()),
        Err(e) => return Err(Error::io(path)(e)),
    };
    let state: DriverState = serde_json::from_str(&text).map_err(|e| Error::Io {
        path: path.to_path_buf(),
        source: std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "not the driver's state ({e}). Repair: delete it; the round in progress is \
                 then started afresh under the next number"
            ),
        ),
    })?;
    if state.version > super::STATE_VERSION {
        return Err(Error::Usage(format!(
            "{}: version {} is from a newer segmenter (this one reads up to {})",
            path.display(),
            state.version,
            super::STATE_VERSION
        )));
    }
    Ok(state)
}

/// Records what `decision` says to record: the ended round in the journal
/// (first: a crash between the two leaves a round that the journal has,
/// which is then not open any more), `round.json`, and the log of a round
/// given up.
pub fn record(crawl: &CrawlDir, decision: &Decision) -> Result<(), Error> {
    if let Some(round) = &decision.ended {
        rounds::append(crawl, round).map_err(Error::io(crawl.rounds_path()))?;
    }
    let path = crawl.round_state_path();
    let mut text = serde_json::to_string_pretty(&decision.state).map_err(|e| Error::Io {
        path: path.clone(),
        source: e.into(),
    })?;
    text.push('\n');
    common::atomic::write_atomic(&path, text.as_bytes()).map_err(Error::io(&path))?;
    if let Some(n) = decision.discarded {
        let log = crawl.round_log_path(n);
        match std::fs::remove_file(&log) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(Error::io(&log)(e)),
            _ => {}
        }
    }
    Ok(())
}

/// The answers of [`Lookup`] from the files of a crawl directory.
pub struct OnDisk<'a> {
    crawl: &'a CrawlDir,
}

/// The [`Lookup`] of `crawl`.
pub fn on_disk(crawl: &CrawlDir) -> OnDisk<'_> {
    OnDisk { crawl }
}

impl Lookup for OnDisk<'_> {
    fn fetched(&self, id: &str) -> Result<Option<RunStatus>, String> {
        RunStatus::read(self.crawl, id).map_err(|e| e.to_string())
    }

    fn segment(&self, id: &str) -> Result<SegmentFacts, String> {
        let s =
            SegmentSummary::compute(self.crawl.segment_path(id), 0).map_err(|e| e.to_string())?;
        Ok(SegmentFacts {
            urls: s.urls,
            held_urls: s.not_before_urls,
            earliest_not_before_ms: s
                .earliest_not_before
                .as_deref()
                .and_then(common::timefmt::parse_iso)
                .map(common::timefmt::unix_millis),
        })
    }

    fn figures(&self, id: &str) -> Result<Figures, String> {
        crate::state::reports::round_figures(&self.crawl.logs_dir(), id)
    }

    fn backlog_urls(&self) -> Result<u64, String> {
        let path = self.crawl.backlog_path();
        if !path.exists() {
            return Ok(0);
        }
        SegmentSummary::compute(&path, 0)
            .map(|s| s.urls)
            .map_err(|e| e.to_string())
    }

    /// From the summary the last merge saved beside the history when the
    /// refetch bounds in force (`crawl.toml`'s, the host rules') are those
    /// it applied: each step of the driver then costs nothing of the
    /// history's size. Else (another history file, other bounds, a
    /// summary too old for its due times) the history is read whole.
    fn history(&self) -> Result<HistoryFacts, String> {
        let path = crate::history::current_path(self.crawl.root());
        if !path.exists() {
            return Ok(HistoryFacts::default());
        }
        let now = common::timefmt::unix_millis(std::time::SystemTime::now());
        let facts = |s: crate::history::HistorySummary| HistoryFacts {
            urls: s.urls,
            due_now: s.due.now,
            next_due_ms: s.next_due_ms,
        };
        let flags = crate::flags::RoundFlags::default();
        let bounds = crate::settings::Settings::load(self.crawl.clone(), &flags)
            .ok()
            .and_then(|s| s.schedule.bounds_key(&s.host_rules));
        if let Some(saved) =
            bounds.and_then(|b| crate::history::SavedSummary::read_under(&path, now, &b))
        {
            return Ok(facts(saved));
        }
        crate::history::HistorySummary::compute(&path, now, 0)
            .map(facts)
            .map_err(|e| e.to_string())
    }

    /// `max_retry_after` of `crawl.toml`'s `[fetcher]`, as the fetcher
    /// reads it (its default if unset); the error names the file.
    fn held_wait_limit(&self) -> Result<Duration, String> {
        let config = || -> Result<Duration, common::config::ConfigError> {
            let cfg = CrawlConfig::load(&self.crawl.config_path())?;
            let fetcher: FetcherOptions = cfg.section("fetcher", &cfg.fetcher_own())?;
            Ok(fetcher
                .max_retry_after
                .map_or(Policy::default().max_retry_after, Duration::from))
        };
        config().map_err(|e| e.to_string())
    }
}
