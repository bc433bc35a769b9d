//! `fetcher status CRAWL SEGMENT [--json]`: what fetching a segment has
//! done so far, read from `fetched/ID/`: whether the run is complete and why
//! it ended (`DONE`), and the outcomes in its crawl log, which covers every
//! run of the segment (a resumed fetch appends to it), unlike `stats.json`.
//!
//! `--json` prints one line holding one flat object (`{"key":value,...}`,
//! no nesting), so that a shell script such as `scripts/crawl.sh` can pick a
//! key without a JSON parser; the text form has the same keys, as
//! `key: value` lines.

use common::crawldir::CrawlDir;
use common::fetched::RunStatus;

use crate::cli::StatusArgs;
use crate::error::Error;

/// Prints the status of `args.segment`; an error (exit code 1) if it was
/// never fetched or its files cannot be read.
pub fn run(args: &StatusArgs) -> Result<(), Error> {
    let status = read(&CrawlDir::new(&args.crawl), &args.segment)?;
    common::exit::print(&render(&status, args.json)).map_err(Error::io("stdout"))
}

/// Reads the status of segment `id` (an error if it was never fetched).
fn read(crawl: &CrawlDir, id: &str) -> Result<RunStatus, Error> {
    let dir = crawl.fetched_dir(id);
    RunStatus::read(crawl, id)
        .map_err(Error::io(&dir))?
        .ok_or_else(|| Error::NotFetched(dir, id.to_string()))
}

/// One line of flat JSON, or `key: value` lines.
fn render(status: &RunStatus, json: bool) -> String {
    if json {
        let line = serde_json::to_string(status).expect("a flat struct serializes");
        return format!("{line}\n");
    }
    format!(
        "segment: {}\ndone: {}\nstop_reason: {}\nstop_detail: {}\ncuts: {}\nattempts: {}\n\
         pages: {}\nrobots: {}\nerrors: {}\nbad_lines: {}\nuploaded: {}\n",
        status.segment,
        status.done,
        status.stop_reason,
        status.stop_detail,
        status.cuts,
        status.attempts,
        status.pages,
        status.robots,
        status.errors,
        status.bad_lines,
        status.uploaded
    )
}
