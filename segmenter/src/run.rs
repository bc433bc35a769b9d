//! `segmenter run CRAWL`: consume every complete fetched run not yet
//! consumed (its WARC files and leftover list) and the backlog, and write
//! the next segment(s).

use std::path::{Path, PathBuf};

use common::config::ScopeMode;
use common::crawldir::CrawlDir;
use common::filter::{Scope, UrlFilter};

use crate::cli::RoundFlags;
use crate::commit::read_consumed;
use crate::error::Error;
use crate::round::{Plan, execute};
use crate::scan::Job;
use crate::session::Session;

/// Runs `run`.
pub fn run(root: &Path, flags: &RoundFlags) -> Result<(), Error> {
    let crawl = CrawlDir::open(root).map_err(Error::io(root))?;
    let session = Session::start(crawl, flags)?;
    let settings = &session.settings;
    let crawl = &settings.crawl;

    let consumed = read_consumed(&crawl.consumed_path())?;
    let mut runs = crawl
        .completed_runs()
        .map_err(Error::io(crawl.fetched_root()))?;
    runs.retain(|id| !consumed.contains(id));
    let mut jobs = Vec::new();
    for id in &runs {
        let dir = crawl.fetched_dir(id);
        for path in warc_files(&dir)? {
            jobs.push(Job::Warc(path));
        }
        let leftover = crawl.leftover_path(id);
        if leftover.exists() {
            jobs.push(Job::Leftover(leftover));
        }
    }
    let backlog = crawl.backlog_path();
    let has_backlog = backlog.exists();
    if has_backlog {
        jobs.push(Job::Backlog(backlog));
    }
    if runs.is_empty() && !has_backlog {
        session.log.info(format_args!(
            "{}: nothing to do: no complete fetched run is waiting and the backlog is empty",
            crawl.root().display()
        ));
        return Ok(());
    }

    if settings.scope.mode == ScopeMode::Seeds && !crawl.scope_seeds_path().exists() {
        session.log.warn(format_args!(
            "{}: missing, so no link is in scope; inject seeds first or use --scope any",
            crawl.scope_seeds_path().display()
        ));
    }
    let filter = UrlFilter {
        limits: settings.filter.clone(),
        scope: Scope::load(&settings.scope, crawl.root())?,
    };
    let plan = Plan {
        command: "run",
        jobs,
        consumes: runs,
        carry_backlog: false,
        record_seed_domains: false,
    };
    let staging = session.staging()?;
    let report = execute(settings, &session.log, &filter, staging, plan)?;
    session.finish(&report);
    Ok(())
}

/// The `*.warc.gz` files of a fetched run, by name.
fn warc_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(Error::io(dir))? {
        let entry = entry.map_err(Error::io(dir))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.ends_with(".warc.gz") && !name.starts_with('.') {
            files.push(entry.path());
        }
    }
    files.sort();
    Ok(files)
}
