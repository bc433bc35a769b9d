//! What the round of `segmenter run` (or a shard's `reduce`) reads: the
//! complete fetched runs not yet consumed (or the map outputs addressed
//! to the shard, [`crate::state::mapped`]), the backlog and the URLs due
//! for a refetch; whether there is anything to do; then the round itself
//! ([`crate::round::execute`]).

use std::path::{Path, PathBuf};

use common::config::ScopeMode;
use common::crawldir::CrawlDir;
use common::filter::{Scope, UrlFilter};
use common::runlog::RunLog;
use common::segment::{SegmentReader, SegmentRecord};

use crate::error::{BACKLOG_REPAIR, Error};
use crate::round::scan::{Job, fetched_warcs};
use crate::round::{BacklogUse, Plan, execute};
use crate::session::Session;
use crate::settings::Settings;
use crate::state::mapped::{Mapped, mapped_inputs, warn_unmapped};
use crate::state::runs::read_consumed;

/// Everything `run` (or, with `shards`, a reduce) does with the crawl
/// directory held: find the runs not yet consumed, stop if there is
/// nothing to do, then run the round on them and the backlog.
pub fn round(session: &Session, shards: Option<&common::shards::Shards>) -> Result<(), Error> {
    let settings = &session.settings;
    let crawl = &settings.crawl;

    let consumed = read_consumed(&crawl.consumed_path())?;
    let mut runs = crawl
        .completed_runs()
        .map_err(Error::io(crawl.fetched_root()))?;
    runs.retain(|id| !consumed.contains(id));
    let mut mapped = Mapped::default();
    let mut jobs = Vec::new();
    let mut history_only = std::collections::HashSet::new();
    // Left by a repair that salvaged the history: the consumed runs are
    // read under it once.
    let rebuild = crawl
        .root()
        .join(crate::history::generations::REBUILD_FILE_NAME);
    if let Some(shards) = shards {
        mapped = mapped_inputs(crawl, shards, &consumed)?;
        warn_unmapped(&mapped, crawl.top(), &session.log);
        // The shard's fetched runs are read through their map outputs.
        runs = mapped.entries.clone();
    } else {
        jobs = run_jobs(crawl, &runs, &session.log)?;
        if (rebuild.exists() || !crate::history::current_path(crawl.root()).exists())
            && !consumed.is_empty()
        {
            history_only = history_jobs(session, &consumed, &mut jobs)?;
        }
    }
    let backlog = crawl.backlog_path();
    let has_backlog = has_urls(&backlog)?;
    if runs.is_empty()
        && let Some(reason) = nothing_to_do(settings, has_backlog)?
    {
        session.log.tell(format_args!(
            "{}: nothing to do: {reason}",
            crawl.root().display()
        ));
        return Ok(());
    }

    if settings.scope.mode == ScopeMode::Seeds && !crawl.scope_seeds_path().exists() {
        return Err(Error::Usage(format!(
            "{}: missing: the default scope is the domains of the seeds; inject seeds first \
             (`segmenter inject {} SEEDS_FILE`) or choose --scope any or --scope list",
            crawl.scope_seeds_path().display(),
            crawl.root().display()
        )));
    }
    let filter = UrlFilter {
        limits: settings.filter.clone(),
        scope: Scope::with_host_rules(&settings.scope, crawl.top(), settings.host_rules.clone())?,
    };
    if has_backlog && settings.host_rules.changes_canonical_form() {
        // Its URLs a rule respells join the sort (see `Job::Backlog`).
        jobs.push(Job::Backlog(backlog.clone()));
    }
    let plan = Plan {
        command: if shards.is_some() { "reduce" } else { "run" },
        jobs,
        backlog: has_backlog.then(|| (backlog.clone(), BacklogUse::Schedule)),
        consumes: runs,
        record_seed_domains: false,
        seed_domains: Default::default(),
        history: true,
        history_only,
        mapped,
    };
    log_inputs(&session.log, &plan);
    let staging = session.staging(plan.input_bytes())?;
    let read = if shards.is_none() {
        plan.consumes.clone()
    } else {
        Vec::new()
    };
    let rebuilt = shards.is_none() && rebuild.exists();
    let report = execute(settings, &session.log, &filter, staging, plan)?;
    if rebuilt {
        std::fs::remove_file(&rebuild).map_err(Error::io(&rebuild))?;
    }
    session.finish(&report);
    crate::derivatives::after_round(&settings.research_after_round(None), &read, &session.log);
    Ok(())
}

/// The jobs of the fetched runs `runs`: their WARC files, leftover lists
/// and crawl logs.
fn run_jobs(crawl: &CrawlDir, runs: &[String], log: &RunLog) -> Result<Vec<Job>, Error> {
    let mut jobs = Vec::new();
    for id in runs {
        let dir = crawl.fetched_dir(id);
        for path in fetched_warcs(&dir, log)? {
            jobs.push(Job::Warc(path));
        }
        let leftover = crawl.leftover_path(id);
        if leftover.exists() {
            jobs.push(Job::Leftover(leftover));
        }
        let log = dir.join(common::crawldir::CRAWL_LOG_FILE);
        if log.exists() {
            jobs.push(Job::CrawlLog(log));
        }
    }
    Ok(jobs)
}

/// A crawl made before the fetch history existed gains one from the runs
/// it `consumed` then: their WARC files join the jobs, read for the
/// history alone (the set returned).
fn history_jobs(
    session: &Session,
    consumed: &[String],
    jobs: &mut Vec<Job>,
) -> Result<std::collections::HashSet<PathBuf>, Error> {
    let crawl = &session.settings.crawl;
    let mut history_only = std::collections::HashSet::new();
    for id in consumed {
        let dir = crawl.fetched_dir(id);
        if dir.is_dir() {
            for path in fetched_warcs(&dir, &session.log)? {
                history_only.insert(path.clone());
                jobs.push(Job::Warc(path));
            }
        }
    }
    session.log.info(format_args!(
        "{}: no fetch history yet, or one salvaged by a repair: it is built from the {} \
         run(s) consumed before ({} WARC file(s)) under the entries it holds; the first \
         refetches of the URLs new to it are spread over the interval",
        crawl.root().display(),
        consumed.len(),
        history_only.len()
    ));
    Ok(history_only)
}

/// Why a round without a new fetched run has nothing to do, if it has
/// not. The backlog is only turned into a segment when no segment is
/// waiting to be fetched: running the segmenter twice in a row does not
/// pile up segments (and the rerun of a run killed after its commit
/// changes nothing).
fn nothing_to_do(settings: &Settings, has_backlog: bool) -> Result<Option<String>, Error> {
    let crawl = &settings.crawl;
    let pending = crawl
        .pending_segments()
        .map_err(Error::io(crawl.segments_dir()))?;
    Ok(if !pending.is_empty() {
        Some(format!(
            "no new fetched run; {} segment(s) wait to be fetched ({})",
            pending.len(),
            pending.join(" ")
        ))
    } else if !has_backlog && due_urls(settings)? == 0 {
        Some("no new fetched run, the backlog is empty and no URL is due for a refetch".to_string())
    } else {
        None
    })
}

/// Says what the round reads: the runs, their files and their size.
fn log_inputs(log: &RunLog, plan: &Plan) {
    let count = |f: fn(&Job) -> bool| plan.jobs.iter().filter(|j| f(j)).count();
    let warcs = count(|j| matches!(j, Job::Warc(_)));
    let leftovers = count(|j| matches!(j, Job::Leftover(_)));
    let bytes: u64 = plan
        .jobs
        .iter()
        .filter_map(|j| match j {
            Job::Warc(p) | Job::Leftover(p) => Some(p),
            Job::Seeds { .. } | Job::CrawlLog(_) | Job::Backlog(_) => None,
        })
        .chain(plan.backlog.as_ref().map(|(p, _)| p))
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    log.info(format_args!(
        "reading {} fetched run(s) ({}): {warcs} WARC file(s), {leftovers} leftover list(s){}, {:.1} MB",
        plan.consumes.len(),
        if plan.consumes.is_empty() {
            "-".to_string()
        } else {
            plan.consumes.join(" ")
        },
        if plan.backlog.is_some() { " and the backlog" } else { "" },
        bytes as f64 / 1e6
    ));
}

/// True if the backlog exists and holds at least one line. A backlog that
/// cannot be read is an error, never taken for an empty one: its URLs are
/// in `seen.bloom` and would not come back.
fn has_urls(path: &Path) -> Result<bool, Error> {
    if !path.exists() {
        return Ok(false);
    }
    let mut reader = SegmentReader::open(path).map_err(Error::damaged(BACKLOG_REPAIR))?;
    let mut rec = SegmentRecord::default();
    loop {
        match reader.read_next(&mut rec) {
            Ok(more) => return Ok(more),
            // A malformed first line: look further.
            Err(e) if !e.is_fatal() => continue,
            Err(e) => return Err(Error::damaged(BACKLOG_REPAIR)(e)),
        }
    }
}

/// URLs of the fetch history due for a refetch now (0 without a history),
/// under the schedule in force: bounds changed since the last round (the
/// crawl's `recrawl_*`, a host rule's) move due times as the round's merge
/// will ([`crate::history::Schedule::rescale`]). Taken from the summary the
/// last merge saved when its bounds are the ones in force (the history is
/// not read: a round that finds nothing due costs nothing of the history's
/// size); else the history is read whole, and a damaged one refused here
/// as the round would refuse it.
fn due_urls(settings: &Settings) -> Result<u64, Error> {
    let path = crate::history::current_path(settings.crawl.root());
    let now = common::timefmt::unix_millis(std::time::SystemTime::now());
    if let Some(bounds) = (settings.schedule).bounds_key(&settings.host_rules)
        && let Some(due) = crate::history::SavedSummary::due_now(&path, now, &bounds)
    {
        return Ok(due);
    }
    let damaged = Error::damaged(crate::history::HISTORY_REPAIR);
    let Some(mut history) = crate::history::HistoryReader::open(&path).map_err(damaged)? else {
        return Ok(0);
    };
    let mut due = 0;
    let mut e = crate::history::Entry::default();
    while history
        .read_into(&mut e)
        .map_err(Error::damaged(crate::history::HISTORY_REPAIR))?
    {
        let schedule = (settings.schedule).for_url(&settings.host_rules, &e.host, &e.url);
        schedule.rescale(&mut e);
        due += u64::from(e.state.refetched() && e.due_ms <= now);
    }
    Ok(due)
}
