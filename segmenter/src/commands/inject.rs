//! `segmenter inject CRAWL SEEDS_FILE`: the first segment of a crawl (or
//! more seeds for a running one).
//!
//! Seeds go through the canonical form, the filters (hops 0) and the seen
//! check like links do; their registrable domains are added to
//! `scope.seeds`, which is the default scope of later rounds. In the default
//! scope mode every seed is in scope by definition (rules still apply). The
//! existing backlog is carried over unchanged (merged in host order with the
//! seeds over their hosts' share); fetched runs are left for `run`.
//!
//! With `--shards S` (S > 1, only when the crawl is created) the crawl is
//! sharded ([`common::shards`]): `shards.toml` is written first, the seeds
//! are split by shard (into `CRAWL/.inject-shards/JJJ/`, one file per
//! shard with the seeds file's line numbering, other shards' lines blank),
//! each shard's view gets today's `inject` of its part, and `scope.seeds`
//! at the root becomes the union of the shards' seed domains. Killed at any
//! point, the same command finishes the job: a shard done already finds
//! its seeds seen and writes no segment twice.

use std::collections::BTreeSet;
use std::io::{BufRead, BufWriter, Write};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use common::config::ScopeMode;
use common::crawldir::{CrawlDir, SCOPE_SEEDS_LIST};
use common::filter::{Scope, UrlFilter};
use common::listfile;
use common::shards::Shards;

use crate::commands::input_file;
use crate::error::Error;
use crate::flags::RoundFlags;
use crate::round::scan::seeds_jobs;
use crate::round::{BacklogUse, Plan, execute};
use crate::session::Session;

/// Runs `inject`; `shards` is `--shards S --key K` when given.
pub fn inject(
    root: &Path,
    seeds: &Path,
    flags: &RoundFlags,
    shards: Option<Shards>,
) -> Result<(), Error> {
    // Check the seeds file, crawl.toml and the seeds themselves before
    // creating anything: a mistake leaves no half-made crawl behind.
    input_file(seeds)?;
    let shards = layout(root, shards)?;
    let settings = crate::settings::Settings::load(CrawlDir::new(root), flags)?;
    first_seed(seeds, &seed_filter(&settings)?)?;
    let crawl = CrawlDir::create(root).map_err(Error::io(root))?;
    if !shards.is_sharded() {
        let session = Session::start(crawl, flags)?;
        return session.record(round(&session, seeds));
    }
    if !crawl.shards_path().exists() {
        shards.save(root).map_err(Error::io(crawl.shards_path()))?;
    }
    // Held for the whole injection: one segmenter at a time on the crawl.
    let _lock = crate::round::commit::lock(&crawl)?;
    let parts = split_seeds(&crawl, seeds, &shards)?;
    for (view, part) in shards.views(&crawl).into_iter().zip(&parts) {
        view.create_subdirs().map_err(Error::io(view.root()))?;
        let session = Session::start(view, flags)?;
        session.record(round(&session, part))?;
    }
    let split = crawl.root().join(SPLIT_DIR);
    std::fs::remove_dir_all(&split).map_err(Error::io(&split))?;
    union_scope_seeds(&crawl, &shards)
}

/// Where the seeds are split by shard, inside the crawl directory.
const SPLIT_DIR: &str = ".inject-shards";

/// The crawl's shards: those of `shards.toml`, checked against `--shards`
/// (fixed when the crawl is created: a crawl with state cannot be sharded
/// later, nor its shards changed).
fn layout(root: &Path, asked: Option<Shards>) -> Result<Shards, Error> {
    let crawl = CrawlDir::new(root);
    let have = Shards::load(root)?;
    let Some(asked) = asked else {
        return Ok(have);
    };
    if asked == have {
        return Ok(have);
    }
    let started = crawl.bloom_path().exists() || crawl.shards_path().exists();
    if started {
        return Err(Error::Usage(format!(
            "{}: --shards {} --key {}: this crawl has {} shard(s) keyed by {}, fixed when it \
             was created; leave --shards out, or start a new crawl directory",
            root.display(),
            asked.shards,
            asked.key,
            have.shards,
            have.key
        )));
    }
    Ok(asked)
}

/// Writes `SPLIT_DIR/JJJ/SEEDS` for every shard: each line of the seeds
/// file in its shard's file, a blank line in the others (so that the
/// warnings' line numbers are the seeds file's). A line that is not a URL
/// goes to shard 0, whose round reports it.
fn split_seeds(crawl: &CrawlDir, seeds: &Path, shards: &Shards) -> Result<Vec<PathBuf>, Error> {
    let name = seeds.file_name().unwrap_or(std::ffi::OsStr::new("seeds"));
    let mut paths = Vec::new();
    let mut outs = Vec::new();
    for j in 0..shards.shards {
        let dir = crawl.root().join(SPLIT_DIR).join(format!("{j:03}"));
        std::fs::create_dir_all(&dir).map_err(Error::io(&dir))?;
        let path = dir.join(name);
        let file = std::fs::File::create(&path).map_err(Error::io(&path))?;
        outs.push(BufWriter::new(file));
        paths.push(path);
    }
    // (Every line is read: the closure never breaks.)
    let _ = each_line(seeds, |_, line| {
        let shard = std::str::from_utf8(line)
            .ok()
            .map(crate::round::scan::strip_comment)
            .and_then(|t| common::urlnorm::canonicalize(t).ok())
            .map_or(0, |u| shards.shard_of(common::urlnorm::host_of(&u)));
        for (j, out) in outs.iter_mut().enumerate() {
            let text: &[u8] = if j as u32 == shard { line } else { b"\n" };
            out.write_all(text).map_err(Error::io(&paths[j]))?;
        }
        if !line.ends_with(b"\n") {
            outs[shard as usize]
                .write_all(b"\n")
                .map_err(Error::io(&paths[shard as usize]))?;
        }
        Ok(ControlFlow::Continue(()))
    })?;
    for (out, path) in outs.into_iter().zip(&paths) {
        out.into_inner()
            .map_err(|e| e.into_error())
            .map_err(Error::io(path))?;
    }
    Ok(paths)
}

/// `scope.seeds` at the root: what it held and the seed domains each
/// shard's injection recorded in its own `scope.seeds` (the generation
/// replaced is kept as `scope.seeds.prev`).
fn union_scope_seeds(crawl: &CrawlDir, shards: &Shards) -> Result<(), Error> {
    let read = |path: &Path| -> Result<BTreeSet<String>, Error> {
        Ok(listfile::read(path, &SCOPE_SEEDS_LIST)?
            .unwrap_or_default()
            .into_iter()
            .map(|(_, d)| d)
            .collect())
    };
    let path = crawl.scope_seeds_path();
    let old = read(&path)?;
    let mut all = old.clone();
    for view in shards.views(crawl) {
        all.extend(read(&view.root().join("scope.seeds"))?);
    }
    if all == old && path.exists() {
        return Ok(());
    }
    if path.exists() {
        let prev = crawl.top().join("scope.seeds.prev");
        std::fs::copy(&path, &prev).map_err(Error::io(&prev))?;
    }
    let text = listfile::render(&SCOPE_SEEDS_LIST, &all);
    common::atomic::write_atomic(&path, text.as_bytes()).map_err(Error::io(&path))
}

/// Calls `each` with every line of `path` (numbered from 1, with its
/// newline if it has one) until it breaks; says whether it did.
fn each_line(
    path: &Path,
    mut each: impl FnMut(u64, &[u8]) -> Result<ControlFlow<()>, Error>,
) -> Result<ControlFlow<()>, Error> {
    let input = std::fs::File::open(path).map_err(Error::io(path))?;
    let mut input = std::io::BufReader::new(input);
    let mut line = Vec::new();
    for number in 1u64.. {
        line.clear();
        if input
            .read_until(b'\n', &mut line)
            .map_err(Error::io(path))?
            == 0
        {
            break;
        }
        if each(number, &line)?.is_break() {
            return Ok(ControlFlow::Break(()));
        }
    }
    Ok(ControlFlow::Continue(()))
}

/// The filter seeds go through. In the default mode the seeds define the
/// scope, so every seed is in it (the rules still apply): the rest of the
/// scope is loaded as an open one.
fn seed_filter(settings: &crate::settings::Settings) -> Result<UrlFilter, Error> {
    let mut scope_cfg = settings.scope.clone();
    if scope_cfg.mode == ScopeMode::Seeds {
        scope_cfg.mode = ScopeMode::Any;
    }
    let scope = Scope::with_host_rules(
        &scope_cfg,
        settings.crawl.top(),
        settings.host_rules.clone(),
    )?;
    Ok(UrlFilter {
        limits: settings.filter.clone(),
        scope,
    })
}

/// Seed lines refused, at most, that the error of a seeds file without a
/// seed names.
const REFUSALS_SHOWN: usize = 5;

/// Reads `seeds` up to its first line that `filter` admits; a file with
/// none is refused (exit 2), naming the lines refused and why.
fn first_seed(seeds: &Path, filter: &UrlFilter) -> Result<(), Error> {
    let mut refused: Vec<String> = Vec::new();
    let mut count = 0u64;
    let found = each_line(seeds, |number, line| {
        let why = match std::str::from_utf8(line).map(crate::round::scan::strip_comment) {
            Err(_) => "not UTF-8 text".to_string(),
            Ok("") => return Ok(ControlFlow::Continue(())),
            Ok(text) => match common::urlnorm::canonicalize(text) {
                Err(e) => e.to_string(),
                Ok(url) => match filter.check(&url, 0) {
                    Ok(()) => return Ok(ControlFlow::Break(())),
                    Err(reason) => format!(
                        "{}: refused by the {} filter",
                        common::human::clipped(url.as_str()),
                        reason.name()
                    ),
                },
            },
        };
        count += 1;
        if refused.len() < REFUSALS_SHOWN {
            refused.push(format!("line {number}: {why}"));
        }
        Ok(ControlFlow::Continue(()))
    })?;
    if found.is_break() {
        return Ok(());
    }
    let what = if count == 0 {
        "it holds no URL, only blank lines and comments".to_string()
    } else {
        let more = count.saturating_sub(refused.len() as u64);
        format!(
            "every line was refused ({count}): {}{}",
            refused.join("; "),
            if more > 0 {
                format!("; and {more} more")
            } else {
                String::new()
            }
        )
    };
    Err(Error::Usage(format!(
        "{}: no seed to crawl: {what}. Nothing was created or changed; give one http or \
         https URL a line (`#` starts a comment)",
        seeds.display()
    )))
}

/// Everything `inject` does with the crawl directory held.
fn round(session: &Session, seeds: &Path) -> Result<(), Error> {
    let settings = &session.settings;
    let filter = seed_filter(settings)?;
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
        mapped: Default::default(),
    };
    let staging = session.staging(plan.input_bytes())?;
    let report = execute(settings, &session.log, &filter, staging, plan)?;
    session.finish(&report);
    Ok(())
}
