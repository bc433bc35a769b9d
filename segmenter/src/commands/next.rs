//! `segmenter next CRAWL [--record --since T --exit-code N] [--json]`: what
//! the crawl does next and why ([`crate::cycle`]), as one line a shell
//! reads with `read -r action arg log reason`:
//!
//! ```text
//! fetch 00003 logs/round-00007.log segment 00003 waits to be fetched
//! round 7 - round 7: segment 00003, 1437 URLs, 1398 pages fetched, ...
//! stop 0 - nothing left to fetch in /data/mycrawl
//! ```
//!
//! `ACTION ARG LOG REASON`: ARG and LOG are one word each, `-` for none;
//! LOG is the step's log, relative to CRAWL; REASON is the rest of the
//! line. `--json` prints the same as one JSON object. Without `--record`
//! it only reads: what a driver starting now would be told. With it (the
//! driver's call), the step is recorded as handed out (`round.json`), a
//! round that ended is appended to the round journal (`rounds.v1.tsv`) and
//! the driver's metrics file is rewritten ([`crate::metrics`]).
//!
//! A sharded crawl gets the same answers for all its shards at once
//! ([`crate::cycle::sharded`]), for `scripts/slurm/crawl.sh`: `fetch ID`
//! (or `resume ID`) is the fetch array (every shard fetches its oldest
//! waiting segment and maps it), `reduce - LOG ...` (one machine's
//! `segment`) the reduce array; `wait`, `round` and `stop` are as above.
//! `--shard J` answers by the same rules for shard J alone (what its task
//! of the fetch array fetches, `scripts/task.sh`; whether its reduce is
//! behind; its own round line), from the crawl's round journal and
//! `round.json`; it only reads.

use std::path::Path;

use common::crawldir::CrawlDir;
use serde::Serialize;

use crate::cycle::sharded::{self, Part};
use crate::cycle::{self, Decision};
use crate::error::Error;

/// The driver's side of a call.
#[derive(Debug, Clone, Copy)]
pub struct Driver {
    /// Record the step handed out and the rounds that end.
    pub record: bool,
    /// When the driver started, Unix milliseconds (`i64::MAX`: not given).
    pub since_ms: i64,
    /// The exit code of the driver's last step.
    pub exit_code: i32,
}

/// Runs `next`; with `shard`, for that shard of a sharded crawl alone.
pub fn next(root: &Path, driver: Driver, shard: Option<u32>, json: bool) -> Result<(), Error> {
    let crawl = CrawlDir::open(root).map_err(Error::io(root))?;
    let shards = common::shards::Shards::load(root)?;
    let (facts, decision) = if shards.is_sharded() {
        let part = match shard {
            Some(j) if j >= shards.shards => {
                return Err(Error::Usage(format!(
                    "--shard {j}: {} has {} shards, numbered 0 to {}",
                    root.display(),
                    shards.shards,
                    shards.shards - 1
                )));
            }
            Some(j) => Part::Shard(j),
            None => Part::All,
        };
        let facts = sharded::facts(&crawl, &shards, part, driver.since_ms, driver.exit_code)?;
        let decision = cycle::decide(&facts, &sharded::on_shards(&crawl, &shards, part, &facts));
        (facts, decision)
    } else {
        if let Some(j) = shard {
            return Err(Error::Usage(format!(
                "--shard {j}: {} is not a sharded crawl ({} absent, or of one shard); ask \
                 without --shard",
                root.display(),
                crawl.shards_path().display()
            )));
        }
        let facts = cycle::read::facts(&crawl, driver.since_ms, driver.exit_code)?;
        let decision = cycle::decide(&facts, &cycle::read::on_disk(&crawl));
        (facts, decision)
    };
    if driver.record {
        cycle::read::record(&crawl, &decision)?;
        crate::metrics::after_decision(&crawl, &decision, facts.now_ms, driver.since_ms);
    }
    common::exit::print(&render(&crawl, &decision, shards.is_sharded(), json))
        .map_err(Error::io("stdout"))
}

/// The answer as one JSON object.
#[derive(Serialize)]
struct Answer<'a> {
    action: &'a str,
    arg: Option<&'a str>,
    log: Option<String>,
    round: Option<u64>,
    reason: &'a str,
}

/// The answer's first word: the step's, except that a sharded crawl's
/// `segment` step is its reduce array.
fn action(d: &Decision, sharded: bool) -> &'static str {
    match d.kind {
        cycle::Kind::Segment if sharded => "reduce",
        kind => kind.as_str(),
    }
}

/// The answer line (or JSON object), with its newline.
fn render(crawl: &CrawlDir, d: &Decision, sharded: bool, json: bool) -> String {
    let log = d.log(crawl).map(|p| {
        p.strip_prefix(crawl.root())
            .unwrap_or(&p)
            .display()
            .to_string()
    });
    if json {
        let answer = Answer {
            action: action(d, sharded),
            arg: d.arg.as_deref(),
            log,
            round: d.round,
            reason: &d.reason,
        };
        let line = serde_json::to_string(&answer).expect("an answer serializes");
        return format!("{line}\n");
    }
    format!(
        "{} {} {} {}\n",
        action(d, sharded),
        d.arg.as_deref().unwrap_or("-"),
        log.as_deref().unwrap_or("-"),
        d.reason
    )
}

#[cfg(test)]
mod tests {
    use common::testutil::TempDir;

    use super::*;

    #[test]
    fn a_shard_is_asked_only_of_a_sharded_crawl_and_within_its_shards() {
        let tmp = TempDir::new("next-shard");
        CrawlDir::create(tmp.path()).unwrap();
        // The usage error `next --shard J` gets.
        let refused = |j| {
            let driver = Driver {
                record: false,
                since_ms: i64::MAX,
                exit_code: 0,
            };
            match next(tmp.path(), driver, Some(j), false) {
                Err(Error::Usage(why)) => why,
                other => panic!("--shard {j}: {other:?}"),
            }
        };
        let why = refused(0);
        assert!(
            why.contains("is not a sharded crawl (") && why.contains("shards.toml"),
            "{why}"
        );
        std::fs::write(
            tmp.join("shards.toml"),
            "version = 1\nshards = 4\nkey = \"host\"\n",
        )
        .unwrap();
        let why = refused(4);
        assert!(
            why.starts_with("--shard 4: ") && why.ends_with("has 4 shards, numbered 0 to 3"),
            "{why}"
        );
    }
}
