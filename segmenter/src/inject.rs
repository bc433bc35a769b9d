//! `segmenter inject CRAWL SEEDS_FILE`: the first segment of a crawl (or
//! more seeds for a running one).
//!
//! Seeds go through the canonical form, the filters (hops 0) and the seen
//! check like links do; their registrable domains are added to
//! `scope.seeds`, which is the default scope of later rounds. In the default
//! scope mode every seed is in scope by definition (rules still apply). The
//! existing backlog is carried over unchanged (merged in host order with the
//! seeds over their hosts' share); fetched runs are left for `run`.

use std::path::Path;

use common::config::ScopeMode;
use common::crawldir::CrawlDir;
use common::filter::{Scope, UrlFilter};

use crate::cli::RoundFlags;
use crate::error::Error;
use crate::round::{BacklogUse, Plan, execute};
use crate::scan::seeds_jobs;
use crate::session::Session;

/// Runs `inject`.
pub fn inject(root: &Path, seeds: &Path, flags: &RoundFlags) -> Result<(), Error> {
    // Check the seeds file before creating anything.
    input_file(seeds)?;
    let crawl = CrawlDir::create(root).map_err(Error::io(root))?;
    let session = Session::start(crawl, flags)?;
    session.record(round(&session, seeds))
}

/// Checks that an input named on the command line is a readable file.
pub(crate) fn input_file(path: &Path) -> Result<(), Error> {
    let meta = std::fs::metadata(path).map_err(Error::io(path))?;
    if !meta.is_file() {
        return Err(Error::Io {
            path: path.to_path_buf(),
            source: std::io::Error::other("not a file"),
        });
    }
    Ok(())
}

/// Everything `inject` does with the crawl directory held.
fn round(session: &Session, seeds: &Path) -> Result<(), Error> {
    let settings = &session.settings;
    // In the default mode the seeds define the scope, so every seed is in
    // it (the rules still apply): load the rest of the scope as an open one.
    let mut scope_cfg = settings.scope.clone();
    if scope_cfg.mode == ScopeMode::Seeds {
        scope_cfg.mode = ScopeMode::Any;
    }
    let scope = Scope::load(&scope_cfg, settings.crawl.root())?;
    let filter = UrlFilter {
        limits: settings.filter.clone(),
        scope,
    };
    let plan = Plan {
        command: "inject",
        jobs: seeds_jobs(seeds, settings.threads)?,
        consumes: Vec::new(),
        // The URLs waiting go into the new backlog, merged in order with
        // the seeds' own waiting URLs.
        backlog: Some(settings.crawl.backlog_path())
            .filter(|p| p.exists())
            .map(|p| (p, BacklogUse::Carry)),
        record_seed_domains: true,
        seed_domains: Default::default(),
        history: false,
        history_only: Default::default(),
    };
    let staging = session.staging(plan.input_bytes())?;
    let report = execute(settings, &session.log, &filter, staging, plan)?;
    session.finish(&report);
    Ok(())
}
