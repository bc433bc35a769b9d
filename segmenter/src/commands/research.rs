//! `segmenter research CRAWL`: writes the research outputs (Parquet index,
//! WET, WAT; see [`crate::derivatives`]) of the complete fetched runs that
//! lack them, all or the rounds asked for, every shard's in a sharded
//! crawl; with `--force`, again where they exist.

use std::path::Path;

use common::crawldir::CrawlDir;
use common::runlog::RunLog;

use crate::derivatives::{self, Settings, Totals};
use crate::error::Error;
use crate::state::warcs::Rounds;

/// One line of what was done.
pub fn summary(t: &Totals) -> String {
    format!(
        "research outputs: {} WARC files read ({} records, {} captures, {} HTML pages, \
         {} MB of text), {} already had theirs, {} failed",
        t.files,
        t.read.records,
        t.read.captures,
        t.read.pages,
        t.read.text_bytes / 1_000_000,
        t.up_to_date,
        t.failed,
    )
}

/// The command: the outputs `settings` asks for, of the runs `rounds`
/// takes. An error when a file's outputs could not be written (the others
/// are).
pub fn research(crawl: &Path, rounds: &Rounds, settings: &Settings) -> Result<(), Error> {
    if settings.wanted.none() {
        return Err(Error::Usage(
            "nothing to write: --index, --wet and --wat are all false".to_string(),
        ));
    }
    let dir = CrawlDir::open(crawl).map_err(Error::io(crawl))?;
    let log = RunLog::open("segmenter", &dir.new_log_path("segmenter"));
    let runs = derivatives::runs(&dir, |id| rounds.contains(id))?;
    if runs.is_empty() {
        return Err(Error::Usage(format!(
            "{}: no complete fetched run (fetched/ID/DONE) in the rounds asked for; \
             `segmenter status` lists the crawl's runs",
            crawl.display()
        )));
    }
    let totals = derivatives::derive_runs(&derivatives::crawl_name(crawl), &runs, settings, &log);
    log.info(summary(&totals));
    if totals.failed > 0 {
        return Err(Error::Io {
            path: crawl.to_path_buf(),
            source: std::io::Error::other(format!(
                "the outputs of {} WARC files could not be written (see the warnings above); \
                 run the command again once the cause is fixed: it writes only what is missing",
                totals.failed
            )),
        });
    }
    Ok(())
}
