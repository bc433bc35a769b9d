//! The driver's metrics file, `crawl-NAME.cycle.prom` ([`common::metrics`]):
//! where the crawl stands between steps, for a monitoring system. Written
//! by `segmenter next --record` at every step it hands to
//! `scripts/crawl.sh` ([`after_decision`]), and by `segmenter metrics
//! CRAWL --phase P` ([`crate::commands::metrics`]), which the Slurm driver runs at each of
//! its steps. The fetcher keeps its own file (the live figures of a
//! fetch); no file is written by two programs.
//!
//! The phase is the step the driver was last given: `inject`, `fetch`,
//! `segment`, `wait`, `idle` (a round ended, or the injection: no step
//! runs until the driver asks again), `stopped` (the driver was told to
//! stop, exit 0) or `failed` (told to stop with another exit code). The
//! round is the round journal's: the round in progress, else the last one
//! that ended. A sharded crawl has no journal yet: its round is the
//! newest segment number a fetch has started on, in any shard (during
//! `fetch`, the oldest one waiting).

use std::path::Path;

use common::config::{ConfigError, CrawlConfig};
use common::crawldir::CrawlDir;
use common::metrics::{Exposition, Kind, Place};
use common::rounds::Round;

use crate::cycle::read::on_disk;
use crate::cycle::{Decision, Lookup as _};
use crate::error::Error;
use crate::phase::Phase;

/// The phase of a step of the cycle (a `stop`'s arg is its exit code).
pub(crate) fn phase_of_step(kind: crate::cycle::Kind, arg: Option<&str>) -> Phase {
    use crate::cycle::Kind as K;
    match kind {
        K::Inject => Phase::Inject,
        K::Fetch | K::Resume => Phase::Fetch,
        K::Segment => Phase::Segment,
        K::Wait => Phase::Wait,
        K::Injected | K::Round => Phase::Idle,
        K::Stop if arg == Some("0") => Phase::Stopped,
        K::Stop => Phase::Failed,
    }
}

/// The step the file describes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct At {
    pub(crate) phase: Phase,
    /// When the step was handed out, Unix milliseconds.
    pub(crate) since_ms: i64,
    /// The round in progress (`None`: the journal's last one).
    pub(crate) open_round: Option<u64>,
    /// When the driver run started, Unix milliseconds.
    pub(crate) driver_ms: Option<i64>,
}

/// After `next --record`: the file for the step `decision` hands out. A
/// failure is said on stderr and changes nothing else: the driver goes on.
pub fn after_decision(crawl: &CrawlDir, decision: &Decision, now_ms: i64, since_ms: i64) {
    let at = At {
        phase: phase_of_step(decision.kind, decision.arg.as_deref()),
        since_ms: now_ms,
        open_round: decision.state.open.as_ref().map(|o| o.number),
        driver_ms: (since_ms != i64::MAX).then_some(since_ms),
    };
    if let Err(e) = write(crawl.root(), at, false) {
        common::runlog::say(format_args!("the metrics file is not up to date: {e}"));
    }
}

/// Builds the file's text and writes it (unless `print_only`); the error
/// names the file or the setting.
pub(crate) fn write(root: &Path, at: At, print_only: bool) -> Result<String, Error> {
    let cfg = CrawlConfig::load(&CrawlDir::new(root).config_path())?;
    let place = Place::of(&cfg, root).map_err(|message| ConfigError::Invalid {
        path: cfg.path.clone(),
        message,
    })?;
    let floor = cfg.shared()?.disk_floor();
    let shards = common::shards::Shards::load(root)?;
    let labels = place.labels(None);
    let labels: Vec<(&str, &str)> = labels.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut e = Exposition::new(&labels);
    let top = CrawlDir::new(root);
    let parts: Vec<(Option<u32>, CrawlDir)> = if shards.is_sharded() {
        (0..shards.shards)
            .map(|j| (Some(j), top.shard(j)))
            .collect()
    } else {
        vec![(None, top.clone())]
    };
    let phases: Vec<(&str, f64)> = Phase::ALL
        .iter()
        .map(|p| (p.as_str(), f64::from(u8::from(*p == at.phase))))
        .collect();
    e.by(
        "crawl_phase",
        Kind::Gauge,
        "The step the driver was last given (1 for it, 0 for the others).",
        "phase",
        &phases,
    )
    .one(
        "crawl_phase_start_timestamp_seconds",
        Kind::Gauge,
        "When the driver was given that step.",
        at.since_ms as f64 / 1000.0,
    )
    .one(
        "crawl_driver_start_timestamp_seconds",
        Kind::Gauge,
        "When the driver run started (0: not said).",
        at.driver_ms.map_or(0.0, |ms| ms as f64 / 1000.0),
    );
    if shards.is_sharded() {
        e.one(
            "crawl_round",
            Kind::Gauge,
            "The round in progress, else the last one that ended (0: none yet).",
            sharded_round(&parts, at.phase) as f64,
        );
    } else {
        let rounds = common::rounds::read(&top).map_err(Error::io(top.rounds_path()))?;
        journal(&mut e, &rounds, at.open_round);
    }
    waiting(&mut e, &parts);
    let space = common::disk::space(root).ok();
    e.one(
        "crawl_stop_requested",
        Kind::Gauge,
        "1 while a STOP file asks the crawl to stop.",
        f64::from(u8::from(top.stop_path().exists())),
    )
    .one(
        "crawl_disk_free_bytes",
        Kind::Gauge,
        "Free space on the crawl directory's filesystem.",
        space.map_or(f64::NAN, |s| s.free as f64),
    )
    .one(
        "crawl_disk_floor_bytes",
        Kind::Gauge,
        "The free space the crawl keeps (min_free_disk).",
        space.map_or(f64::NAN, |s| floor.bytes(s.total) as f64),
    );
    let text = e.text().to_string();
    if !print_only {
        let file = place.cycle_file();
        place.write(&file, &text).map_err(Error::io(&file))?;
    }
    Ok(text)
}

/// The round journal's figures.
fn journal(e: &mut Exposition, rounds: &[Round], open: Option<u64>) {
    let last = rounds.last();
    let last_number = last.map_or(0, |r| r.number);
    e.one(
        "crawl_round",
        Kind::Gauge,
        "The round in progress, else the last one that ended (0: none yet).",
        open.unwrap_or(last_number).max(last_number) as f64,
    )
    .one(
        "crawl_rounds_total",
        Kind::Counter,
        "Rounds ended (lines of the round journal).",
        rounds.len() as f64,
    )
    .one(
        "crawl_pages_total",
        Kind::Counter,
        "Pages fetched by the rounds that ended (the journal's pages column, added up).",
        rounds.iter().map(|r| r.pages).sum::<u64>() as f64,
    )
    .one(
        "crawl_start_timestamp_seconds",
        Kind::Gauge,
        "When the crawl's first round started (0: none yet).",
        rounds.first().map_or(0.0, |r| r.started_ms as f64 / 1000.0),
    )
    .one(
        "crawl_last_round_pages",
        Kind::Gauge,
        "Pages fetched by the last round that ended.",
        last.map_or(0.0, |r| r.pages as f64),
    )
    .one(
        "crawl_last_round_duration_seconds",
        Kind::Gauge,
        "How long the last round that ended took.",
        last.map_or(0.0, |r| (r.ended_ms - r.started_ms) as f64 / 1000.0),
    )
    .one(
        "crawl_last_round_end_timestamp_seconds",
        Kind::Gauge,
        "When the last round that ended ended (0: none yet).",
        last.map_or(0.0, |r| r.ended_ms as f64 / 1000.0),
    );
}

/// Segments and URLs waiting, per shard (NaN where a file cannot be read).
fn waiting(e: &mut Exposition, parts: &[(Option<u32>, CrawlDir)]) {
    let mut segments = Vec::new();
    let mut segment_urls = Vec::new();
    let mut backlog = Vec::new();
    for (j, crawl) in parts {
        let look = on_disk(crawl);
        let pending = crawl.pending_segments().ok();
        let urls = pending.as_ref().and_then(|ids| {
            ids.iter()
                .map(|id| look.segment(id).map(|s| s.urls).ok())
                .sum::<Option<u64>>()
        });
        let n = |v: Option<u64>| v.map_or(f64::NAN, |v| v as f64);
        segments.push((*j, n(pending.map(|p| p.len() as u64))));
        segment_urls.push((*j, n(urls)));
        backlog.push((*j, n(look.backlog_urls().ok())));
    }
    per_shard(
        e,
        "crawl_segments_waiting",
        "Segments not fetched to completion.",
        &segments,
    );
    per_shard(
        e,
        "crawl_segment_urls_waiting",
        "URLs in the segments not fetched to completion.",
        &segment_urls,
    );
    per_shard(
        e,
        "crawl_backlog_urls",
        "URLs waiting in the backlog for a later round.",
        &backlog,
    );
}

/// A gauge with one sample, or one per shard (label `shard`).
fn per_shard(e: &mut Exposition, name: &str, help: &str, values: &[(Option<u32>, f64)]) {
    match values {
        [(None, v)] => {
            e.one(name, Kind::Gauge, help, *v);
        }
        _ => {
            let values: Vec<(String, f64)> = values
                .iter()
                .map(|(j, v)| (j.map_or_else(String::new, |j| j.to_string()), *v))
                .collect();
            e.by(name, Kind::Gauge, help, "shard", &values);
        }
    }
}

/// A sharded crawl's round: the newest segment number a fetch has started
/// on in any shard, or during `fetch` the oldest one waiting if newer.
fn sharded_round(parts: &[(Option<u32>, CrawlDir)], phase: Phase) -> u64 {
    let number = |id: &str| -> u64 {
        let digits: String = id.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().unwrap_or(0)
    };
    let mut round = 0;
    for (_, crawl) in parts {
        let started = std::fs::read_dir(crawl.fetched_root())
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str().map(number))
            .max()
            .unwrap_or(0);
        round = round.max(started);
        if phase == Phase::Fetch
            && let Some(next) = crawl
                .pending_segments()
                .ok()
                .and_then(|p| p.first().cloned())
        {
            round = round.max(number(&next));
        }
    }
    round
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cycle::Kind as K;

    #[test]
    fn each_step_has_its_phase() {
        let cases = [
            (K::Inject, None, Phase::Inject),
            (K::Injected, Some("3"), Phase::Idle),
            (K::Fetch, Some("00002"), Phase::Fetch),
            (K::Resume, Some("00002"), Phase::Fetch),
            (K::Segment, None, Phase::Segment),
            (K::Wait, Some("4"), Phase::Wait),
            (K::Round, Some("2"), Phase::Idle),
            (K::Stop, Some("0"), Phase::Stopped),
            (K::Stop, Some("3"), Phase::Failed),
            (K::Stop, Some("1"), Phase::Failed),
        ];
        for (kind, arg, phase) in cases {
            assert_eq!(phase_of_step(kind, arg), phase, "{kind:?} {arg:?}");
        }
    }

    #[test]
    fn a_sharded_round_is_the_newest_segment_fetched_or_waiting() {
        let dir = common::testutil::TempDir::new("metrics-sharded-round");
        let parts: Vec<(Option<u32>, CrawlDir)> = (0..2)
            .map(|j| (Some(j), CrawlDir::new(dir.join(&format!("s{j}")))))
            .collect();
        for (_, c) in &parts {
            c.create_subdirs().unwrap();
        }
        assert_eq!(sharded_round(&parts, Phase::Fetch), 0);
        // Shard 0 fetched 00001 and 00002 waits; shard 1 fetches 00002.
        for (j, id) in [(0, "00001"), (1, "00001"), (1, "00002")] {
            std::fs::create_dir_all(parts[j].1.fetched_dir(id)).unwrap();
            std::fs::write(parts[j].1.segment_path(id), b"").unwrap();
        }
        std::fs::write(parts[0].1.fetched_dir("00001").join("DONE"), b"").unwrap();
        std::fs::write(parts[1].1.fetched_dir("00001").join("DONE"), b"").unwrap();
        std::fs::write(parts[0].1.segment_path("00002"), b"").unwrap();
        assert_eq!(sharded_round(&parts, Phase::Idle), 2);
        assert_eq!(sharded_round(&parts, Phase::Fetch), 2);
        std::fs::write(parts[0].1.segment_path("00003"), b"").unwrap();
        std::fs::write(parts[1].1.fetched_dir("00002").join("DONE"), b"").unwrap();
        assert_eq!(sharded_round(&parts, Phase::Idle), 2);
        assert_eq!(
            sharded_round(&parts, Phase::Fetch),
            2,
            "00002 waits in shard 0"
        );
    }
}
