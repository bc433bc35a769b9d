//! `segmenter import CRAWL FILE...`: a segment from WARC files of any tool
//! (creates CRAWL if needed, or adds to a running crawl).
//!
//! The files are read like a fetched run's (damage is skipped and
//! reported): the links and redirects of their pages become candidates
//! through the canonical form, filters and seen check of every round, and
//! the pages' own URLs are recorded in `seen.bloom` as fetched, never
//! scheduled. In the default scope mode the registrable domains of the
//! pages are the scope, added to `scope.seeds` like those of seeds; the
//! existing backlog is carried over unchanged, as `inject` does.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::config::ScopeMode;
use common::crawldir::{CrawlDir, SCOPE_SEEDS_LIST};
use common::filter::{Scope, UrlFilter};
use common::listfile;
use common::urlnorm::{canonicalize, host_of, registrable_domain};
use common::warc::{WarcError, WarcReader, WarcRecord};

use crate::commands::input_file;
use crate::error::Error;
use crate::flags::RoundFlags;
use crate::round::scan::{Job, is_page};
use crate::round::{BacklogUse, Plan, execute};
use crate::session::Session;

/// Runs `import`.
pub fn import(root: &Path, files: &[PathBuf], flags: &RoundFlags) -> Result<(), Error> {
    // Objects of a store are read from temporary copies (kept till the end).
    let mut copies = Vec::new();
    let mut paths = Vec::with_capacity(files.len());
    for file in files {
        let name = file.to_string_lossy();
        if name.starts_with("s3://") {
            let copy = common::store::readable_url(&name).map_err(Error::io(file))?;
            paths.push(copy.path().to_path_buf());
            copies.push(copy);
        } else {
            paths.push(file.clone());
        }
    }
    let files = &paths[..];
    // Check the files before creating anything.
    for file in files {
        input_file(file)?;
    }
    let crawl = CrawlDir::create(root).map_err(Error::io(root))?;
    let session = Session::start(crawl, flags)?;
    session.record(round(&session, files))
}

/// Everything `import` does with the crawl directory held.
fn round(session: &Session, files: &[PathBuf]) -> Result<(), Error> {
    let settings = &session.settings;
    let crawl = &settings.crawl;
    // In the default mode the pages' domains are the scope, with those of
    // earlier seeds: a list, known before the links are read.
    let mut scope_cfg = settings.scope.clone();
    let mut seed_domains = BTreeSet::new();
    if scope_cfg.mode == ScopeMode::Seeds {
        seed_domains = page_domains(files)?;
        scope_cfg.mode = ScopeMode::List;
        let known = listfile::read(&crawl.scope_seeds_path(), &SCOPE_SEEDS_LIST)?;
        scope_cfg
            .domains
            .extend(known.unwrap_or_default().into_iter().map(|(_, d)| d));
        scope_cfg.domains.extend(seed_domains.iter().cloned());
    }
    let filter = UrlFilter {
        limits: settings.filter.clone(),
        scope: Scope::with_host_rules(&scope_cfg, crawl.top(), settings.host_rules.clone())?,
    };
    let plan = Plan {
        command: "import",
        jobs: files.iter().cloned().map(Job::Warc).collect(),
        consumes: Vec::new(),
        backlog: Some(crawl.backlog_path())
            .filter(|p| p.exists())
            .map(|p| (p, BacklogUse::Carry)),
        record_seed_domains: settings.scope.mode == ScopeMode::Seeds,
        seed_domains,
        history: false,
        history_only: Default::default(),
        mapped: Default::default(),
    };
    session.log.info(format_args!(
        "importing {} WARC file(s), {:.1} MB",
        files.len(),
        files
            .iter()
            .filter_map(|f| std::fs::metadata(f).ok())
            .map(|m| m.len())
            .sum::<u64>() as f64
            / 1e6
    ));
    let staging = session.staging(plan.input_bytes())?;
    let report = execute(settings, &session.log, &filter, staging, plan)?;
    session.finish(&report);
    Ok(())
}

/// The registrable domains of the pages in `files` (a first pass that
/// reads the WARC headers only; damage is reported by the second).
fn page_domains(files: &[PathBuf]) -> Result<BTreeSet<String>, Error> {
    let mut domains = BTreeSet::new();
    let mut rec = WarcRecord::default();
    for file in files {
        let mut reader = WarcReader::open(file, 0).map_err(io_error)?.resyncing();
        loop {
            match reader.read_next(&mut rec) {
                Ok(true) => {}
                Ok(false) => break,
                Err(WarcError::Damaged {
                    resumed_at: Some(_),
                    ..
                }) => continue,
                Err(e @ WarcError::Io { .. }) => return Err(io_error(e)),
                Err(_) => break,
            }
            let Some(url) = rec
                .target_uri()
                .filter(|_| is_page(&rec))
                .and_then(|u| canonicalize(u).ok())
            else {
                continue;
            };
            let domain = registrable_domain(host_of(&url));
            if !domains.contains(domain) {
                domains.insert(domain.to_string());
            }
        }
    }
    Ok(domains)
}

fn io_error(e: WarcError) -> Error {
    match e {
        WarcError::Io { path, source } => Error::Io { path, source },
        other => Error::Usage(other.to_string()),
    }
}
