//! One round, shared by `inject`, `import`, `run` and a shard's `reduce`:
//! scan the inputs, sort, dedup, cap, write the segments and the backlog
//! into the staging directory, and commit. Its steps are the modules
//! below, in the order they run: what `run` and `reduce` read
//! ([`inputs`]), the scan ([`scan`]) or, on a sharded crawl, the map
//! ([`map`], a task of its own) whose outputs a reduce stages in place of
//! the scan's ([`reduce`]); the sort ([`sort`], its keys: [`candidates`]),
//! the seen-set ([`seen`]), the backlog ([`backlog`]), the caps
//! ([`caps`]) and the selection that applies them host by host
//! ([`select`]), the segments ([`output`], [`partition`]), the commit
//! ([`commit`]), and the round's report ([`report`], [`counts`]).
//!
//! ```text
//! jobs ─scan (N workers)─▶ sorters ──────────────────────────────┐
//!   └─fetches seen─▶ sorters ─merge with history─▶ new history,   │
//!                                                 due URLs, sorted┤
//!        ─merge─▶ each URL once, by (domain, host, url) ─seen.bloom─▶ new or re-entered
//!        ─not already waiting (backlog, segments not fetched)─▶ per-host cap, with the backlog
//!        ─▶ segments │ backlog ─commit─▶ CRAWL
//! ```
//!
//! `run` also merges the fetches of the runs it reads into the fetch history
//! ([`crate::history`]); the URLs due for a refetch join the round's merge,
//! where a leftover copy of one (its fetch cut by the end of a round) meets
//! it. The backlog is read beside the merge, host by host; a URL that waits
//! there or in a segment not yet fetched is handed out once, whatever other
//! copies of it come in the round ([`crate::round::backlog::HostWaiting`]).

pub(crate) mod backlog;
pub(crate) mod candidates;
pub(crate) mod caps;
pub(crate) mod commit;
pub(crate) mod counts;
pub(crate) mod cut;
pub(crate) mod inputs;
pub(crate) mod map;
pub(crate) mod output;
pub(crate) mod partition;
pub(crate) mod reduce;
pub(crate) mod report;
pub(crate) mod scan;
pub(crate) mod score;
pub mod seen;
mod select;
pub(crate) mod sort;

use std::collections::BTreeSet;
use std::time::Instant;

use common::atomic::write_atomic;
use common::bloom::BloomHash;
use common::config::segmenter::UrlOrder;
use common::crawldir::{CONSUMED_LIST, SCOPE_SEEDS_LIST};
use common::filter::UrlFilter;
use common::listfile;
use common::segment::{SegmentRecord, Via};

use crate::error::Error;
use crate::history::{HistoryOut, HistoryReader, Lookup};
use crate::progress::{Progress, while_running};
use crate::round::backlog::{BacklogStream, ListCursor, Waiting};
use crate::round::candidates::{LastFetch, Meta};
use crate::round::caps::{Budget, Limits};
use crate::round::commit::{Staging, pause_point};
use crate::round::cut::{Quota, Staged};
use crate::round::output::Output;
use crate::round::partition::next_number;
use crate::round::report::Report;
use crate::round::scan::{Job, ScanConfig, ScanOutput, scan};
use crate::round::score::{Ranks, WaitingLinks};
use crate::round::seen::rescue::{NotInHistory, Rescue, Rescued};
use crate::round::seen::{ExactSets, Finish, Origin, Seen};
use crate::round::select::{Inputs, Selected, select};
use crate::round::sort::{Merger, Sorter, SpillDir, merge};
use crate::settings::Settings;
use crate::state::runs::read_consumed;
use common::progress::Pacer;
use common::runlog::RunLog;

/// What a round does with the backlog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BacklogUse {
    /// Its hosts get their share of the segment (`run`).
    Schedule,
    /// It goes into the new backlog as it is, merged with the round's own
    /// waiting URLs (`inject`, which schedules only the seeds).
    Carry,
}

/// What a round reads and what it records besides segments.
pub struct Plan {
    /// `inject` or `run`.
    pub command: &'static str,
    /// The inputs.
    pub jobs: Vec<Job>,
    /// The backlog, read beside the merge, and what to do with it.
    pub backlog: Option<(std::path::PathBuf, BacklogUse)>,
    /// Fetched runs this round consumes (added to `consumed.txt`).
    pub consumes: Vec<String>,
    /// Add the seeds' registrable domains to `scope.seeds` (`inject`,
    /// `import`).
    pub record_seed_domains: bool,
    /// More domains for `scope.seeds` (`import`: those of the pages).
    pub seed_domains: BTreeSet<String>,
    /// Update the fetch history with the fetches read (`run`).
    pub history: bool,
    /// WARC files of runs consumed before the history existed, read for it
    /// alone (no links); their URLs' first refetches are spread over the
    /// interval.
    pub history_only: std::collections::HashSet<std::path::PathBuf>,
    /// Map outputs read by a reduce ([`crate::round::reduce`]).
    pub mapped: crate::state::mapped::Mapped,
}

impl Plan {
    /// What the round's writes are estimated from
    /// ([`crate::session::space_needed`]): the leftover lists and seeds read,
    /// and a tenth of the WARC bytes read.
    pub fn input_bytes(&self) -> u64 {
        let size = |p: &std::path::Path| std::fs::metadata(p).map_or(0, |m| m.len());
        self.jobs
            .iter()
            .map(|j| match j {
                Job::Warc(p) => size(p) / 10,
                Job::Leftover(p) | Job::Backlog(p) => size(p),
                Job::Seeds { start, end, .. } => end - start,
                Job::CrawlLog(_) => 0,
            })
            .sum::<u64>()
            + self.mapped.candidates.iter().map(|p| size(p)).sum::<u64>()
    }
}

/// Bytes a sort-run reader needs during the merge (buffers and zstd window).
const READER_COST: u64 = 1 << 19;

/// Runs a round in `staging` and commits it; a progress line goes to the
/// log every `--progress-interval` meanwhile.
pub fn execute(
    settings: &Settings,
    log: &RunLog,
    filter: &UrlFilter,
    staging: Staging,
    plan: Plan,
) -> Result<Report, Error> {
    let progress = Progress::default();
    let (mut report, staging) = while_running(
        Pacer::new(settings.progress, settings.options.progress_interval),
        log,
        &progress,
        || build(settings, log, filter, staging, plan, &progress),
    )?;
    let started = Instant::now();
    staging.commit()?;
    report.elapsed += started.elapsed();
    Ok(report)
}

/// A round up to its commit: the staged segments, backlog, `seen.bloom`,
/// `consumed.txt` and `scope.seeds`, in the steps of the module's diagram:
/// scan, merge the history (`run`), rescue the suspects, select, then
/// finish the filter and stage the lists.
fn build(
    settings: &Settings,
    log: &RunLog,
    filter: &UrlFilter,
    staging: Staging,
    mut plan: Plan,
    progress: &Progress,
) -> Result<(Report, Staging), Error> {
    let started = Instant::now();
    let crawl = &settings.crawl;
    let (seen, spills, hosts_db) = open_round(settings, log, &staging)?;
    let cx = Steps {
        settings,
        log,
        filter,
        progress,
        staging: &staging,
        seen: &seen,
        spills: &spills,
        fan_in: (settings.options.memory / 4 / READER_COST).clamp(4, 64) as usize,
    };

    let (mut scanned, map_counts) = cx.scan(&hosts_db, &mut plan)?;
    let scan_time = started.elapsed();
    pause_point("scanned");
    let mut report = Report {
        command: plan.command,
        counts: std::mem::take(&mut scanned.counts),
        mapped: map_counts,
        ..Report::default()
    };

    let mut suspects = cx.merge_suspects(std::mem::take(&mut scanned.suspects))?;
    // A `run` looks the suspects up in the history as its merge writes it.
    let mut not_in_history = NotInHistory::new(spills.clone(), settings.options.memory / 4)?;
    let (pages, due) = match plan.history {
        true => cx.merge_history(
            &plan,
            std::mem::take(&mut scanned.observed),
            &mut suspects,
            &mut not_in_history,
            &mut report,
        )?,
        false => (crate::history::PageCounts::default(), None),
    };

    let old_consumed = read_consumed(&crawl.consumed_path())?;
    let exact = RoundSets::new(crawl, &staging, &plan, &old_consumed)?;
    let mut sorted = std::mem::take(&mut scanned.sorted);
    let rescued = cx.rescue(&exact, suspects, not_in_history, &mut report)?;
    let links = match rescued {
        Some(r) => {
            sorted.push(r.found);
            Some(merge(vec![r.links], &spills, cx.fan_in)?)
        }
        None => None,
    };
    sorted.extend(due);
    let merger = merge(sorted, &spills, cx.fan_in)?;

    let hosts_db = hosts_db.into_inner().expect("no panics");
    let budget = cx.budget(hosts_db, pages)?;
    let selected = cx.select(
        (merger, links),
        &plan,
        (&old_consumed, &exact.unconsumed),
        budget,
        &mut report,
    )?;
    seen.add_rescued(report.selection.rescued);
    let after = exact.after(&staging)?;
    report.bloom = seen.finish(&Finish {
        staged: staging.bloom_path(),
        append: staging.bloom_append_path(),
        sets: &after,
        at_least: settings
            .bloom_explicit
            .then_some(settings.options.bloom_items),
        log,
    })?;
    report.sort_spills = spills.spills_written();
    report.sort_bytes = spills.bytes_spilled();
    report.segments = selected.written.segments;
    report.backlog = selected.written.backlog;
    report.scan_time = scan_time;
    report.select_time = started.elapsed() - scan_time;

    if !plan.consumes.is_empty() {
        stage_consumed(&staging, &old_consumed, &plan.consumes)?;
    }
    if plan.record_seed_domains {
        let met = [scanned.seed_domains, plan.seed_domains];
        stage_scope_seeds(
            settings,
            &staging,
            met.into_iter().flatten().chain(selected.domains),
        )?;
    }
    report.consumed = plan.consumes;
    report.elapsed = started.elapsed();
    Ok((report, staging))
}

/// The staged `seen.bloom` (its origin logged), the sort's spill
/// directory, and `hosts.db`, opened once, read only: the sitemaps its
/// hosts name (scan) and their delays (caps).
type Opened = (
    Seen,
    std::sync::Arc<SpillDir>,
    std::sync::Mutex<Option<common::hoststate::HostDb>>,
);

/// Opens what every step of a round reads ([`Opened`]).
fn open_round(settings: &Settings, log: &RunLog, staging: &Staging) -> Result<Opened, Error> {
    let crawl = &settings.crawl;
    let seen = Seen::stage(
        &crawl.bloom_path(),
        &staging.bloom_append_path(),
        settings.options.bloom_items,
        settings.options.bloom_fp,
    )?;
    log_origin(settings, log, &seen);
    let spills = SpillDir::new(staging.sort_dir()).map_err(Error::io(staging.sort_dir()))?;
    let hosts_db = std::sync::Mutex::new(common::hoststate::HostDb::open_read_only(
        crawl.hosts_db_path(),
    )?);
    Ok((seen, spills, hosts_db))
}

/// What the steps of [`build`] share: the settings, the staging directory,
/// the staged filter and the sort's spill directory.
struct Steps<'a> {
    settings: &'a Settings,
    log: &'a RunLog,
    filter: &'a UrlFilter,
    progress: &'a Progress,
    staging: &'a Staging,
    seen: &'a Seen,
    spills: &'a std::sync::Arc<SpillDir>,
    /// Sorted runs merged at once.
    fan_in: usize,
}

impl Steps<'_> {
    /// Scans the plan's inputs (taken from it) and stages the map outputs
    /// a reduce reads; with the runs whose map counts it added.
    fn scan(
        &self,
        hosts_db: &std::sync::Mutex<Option<common::hoststate::HostDb>>,
        plan: &mut Plan,
    ) -> Result<(ScanOutput, Vec<String>), Error> {
        let settings = self.settings;
        let seen = self.seen;
        let cfg = ScanConfig {
            filter: self.filter,
            log: self.log,
            options: &settings.options,
            robots_name: settings.agent_name.as_deref(),
            seen,
            seen_is_empty: seen.is_empty(),
            rescue: !seen.is_empty(),
            spills: self.spills.clone(),
            threads: settings.threads,
            progress: self.progress,
            observe: plan.history,
            history_only: &plan.history_only,
            sitemaps: &settings.sitemaps,
            hosts_db,
            shard_hosts_dbs: None,
        };
        let mut scanned = scan(&cfg, std::mem::take(&mut plan.jobs))?;
        let mut map_counts = Vec::new();
        if !plan.mapped.entries.is_empty() {
            map_counts = crate::round::reduce::stage_mapped(
                &plan.mapped,
                seen,
                !seen.is_empty(),
                self.spills,
                settings.options.memory,
                &mut scanned,
            )?;
        }
        Ok((scanned, map_counts))
    }

    /// The suspects the scan sorted, merged (`None`: there are none).
    fn merge_suspects(
        &self,
        suspects: Vec<crate::round::sort::Sorted>,
    ) -> Result<Option<Merger>, Error> {
        match suspects.is_empty() {
            true => Ok(None),
            false => Ok(Some(merge(suspects, self.spills, self.fan_in)?)),
        }
    }

    /// Merges the fetches seen (`observed`) into the staged history,
    /// looking the suspects up in it meanwhile (those not found go to
    /// `not_in_history`); records the merge in the report and returns the
    /// pages counted per host and domain, and the URLs due again, sorted.
    fn merge_history(
        &self,
        plan: &Plan,
        observed: Vec<crate::round::sort::Sorted>,
        suspects: &mut Option<Merger>,
        not_in_history: &mut NotInHistory,
        report: &mut Report,
    ) -> Result<
        (
            crate::history::PageCounts,
            Option<crate::round::sort::Sorted>,
        ),
        Error,
    > {
        let started = Instant::now();
        let observations = merge(observed, self.spills, self.fan_in)?;
        let mut each = |key: &[u8], meta: &Meta, held: bool| not_in_history.take(key, meta, held);
        let lookup = match suspects.take() {
            Some(s) => Some(Lookup::new(s, &mut each)?),
            None => None,
        };
        let (merged, written, pages, due) = merge_history(
            self.settings,
            self.staging,
            self.spills,
            !plan.history_only.is_empty(),
            observations,
            lookup,
        )?;
        report.history = Some(merged);
        report.history_written = Some(written);
        report.counts.due_in = due.urls;
        report.history_time = started.elapsed();
        pause_point("history");
        Ok((pages, Some(due.sorted)))
    }

    /// Looks the suspects up in the exact sets (for a `run`, those the
    /// history merge did not find); returns the URLs found in none, for
    /// the merge, with the in-links to the URLs that wait, and records the
    /// counts in the report.
    fn rescue(
        &self,
        exact: &RoundSets,
        suspects: Option<Merger>,
        not_in_history: NotInHistory,
        report: &mut Report,
    ) -> Result<Option<Rescued>, Error> {
        let rescue = Rescue {
            sets: &exact.before,
            memory: self.settings.options.memory / 4,
            spills: self.spills.clone(),
            log: self.log,
        };
        // (For a `run`, the lookup in the history is part of its merge.)
        let started = Instant::now();
        let (found, counts) = match suspects {
            Some(s) => {
                let rescued = crate::round::seen::rescue::rescue(s, &rescue)?;
                let counts = rescued.counts.clone();
                (Some(rescued), counts)
            }
            None => not_in_history.rescue(&rescue, self.fan_in)?,
        };
        report.rescue = counts;
        report.rescue_time = started.elapsed();
        pause_point("rescued");
        Ok(found)
    }

    /// The selection ([`select`]) of the merged URLs and the waiting ones
    /// into the staged segments and backlog, numbered after the segments
    /// of the runs `consumed`, within `budget`; the segments not yet
    /// fetched (`unconsumed`) are read for the URLs that wait there.
    /// Records the selection in the report.
    fn select(
        &self,
        (merger, links): (Merger, Option<Merger>),
        plan: &Plan,
        (consumed, unconsumed): (&[String], &[std::path::PathBuf]),
        budget: Budget,
        report: &mut Report,
    ) -> Result<Selected, Error> {
        let (settings, crawl, staging) = (self.settings, &self.settings.crawl, self.staging);
        let number = next_number(crawl, consumed).map_err(Error::io(crawl.root()))?;
        let budget_left = self.pages_left(plan, unconsumed, report)?;
        let may_cut = budget_left.is_some() || settings.options.order == UrlOrder::Score;
        let output = Output::new(
            &staging.segments_dir(),
            &staging.backlog_path(),
            number,
            settings.options.partitions,
            settings.options.max_segment_size,
        )?
        .with_ranks(
            may_cut.then(|| Ranks::new(settings.options.order, settings.host_rules.clone())),
        );
        let (waiting, carry) = self.waiting(plan, unconsumed)?;
        let mut selected = select(
            Inputs {
                merger,
                links: WaitingLinks::new(links),
                waiting,
                carry,
                filter: self.filter,
                share: settings.options.recrawl_share,
                order: settings.options.order,
                memory: settings.options.memory / 4,
            },
            self.seen,
            self.progress,
            output,
            budget,
            plan.record_seed_domains,
            &mut report.counts,
        )?;
        if selected.unchecked.0 > 0 {
            self.log.warn(format_args!(
                "{} URLs waiting in the backlog were not kept to catch copies (a host had more \
                 than fit in a quarter of --memory: {} of {}): a copy of one of them that \
                 came again this round may be in a segment twice; give a larger --memory",
                selected.unchecked.0, selected.unchecked.1.1, selected.unchecked.1.0
            ));
        }
        self.cut_round(&mut selected, number, budget_left)?;
        if selected.selection.out_of_order > 0 {
            self.sort_backlog_again(selected.selection.out_of_order)?;
        }
        let w = &selected.written;
        selected.selection.scores = crate::round::report::Scores {
            scheduled: w.scheduled_scores.quantiles(),
            waiting: w.waiting_scores.quantiles(),
        };
        report.selection = std::mem::take(&mut selected.selection);
        Ok(selected)
    }

    /// What is left of the crawl's page budget (`max_crawl_pages`) for the
    /// new URLs of a round that merged the history: the budget less the
    /// URLs of the history and of the segments not yet fetched
    /// (`unconsumed`), under `order = "score"` paced (`budget_pace`: see
    /// [`crate::round::cut::paced`]); `None` without a budget, or for a
    /// round that merged no history (`inject`).
    fn pages_left(
        &self,
        plan: &Plan,
        unconsumed: &[std::path::PathBuf],
        report: &Report,
    ) -> Result<Option<u64>, Error> {
        let (Some(max), Some(h), true) = (
            self.settings.options.max_crawl_pages,
            report.history.as_ref(),
            plan.history,
        ) else {
            return Ok(None);
        };
        let used = h.entries + crate::round::cut::lines_in(unconsumed)?;
        if used >= max {
            self.log.warn(format_args!(
                "{}: the crawl holds {used} URLs (its fetch history and the segments not yet \
                 fetched), max_crawl_pages is {max}: no new URL is scheduled, every new URL \
                 waits in the backlog (raise max_crawl_pages to go on)",
                self.settings.crawl.root().display()
            ));
        }
        let left = max.saturating_sub(used);
        let options = &self.settings.options;
        Ok(Some(match options.order {
            UrlOrder::Score => crate::round::cut::paced(left, max, options.budget_pace),
            UrlOrder::Discovery => left,
        }))
    }

    /// Cuts the round across hosts ([`crate::round::cut`]) to what is left of the
    /// page budget (`budget_left`) and, under `order = "score"`, to
    /// `max_segment_size` URLs per partition; counts what the cut left
    /// waiting.
    fn cut_round(
        &self,
        selected: &mut Selected,
        number: u32,
        budget_left: Option<u64>,
    ) -> Result<(), Error> {
        let settings = self.settings;
        let Some(ranks) = selected.written.ranks.take() else {
            return Ok(());
        };
        let size_left = (settings.options.order == UrlOrder::Score).then(|| {
            (settings.options.max_segment_size * u64::from(settings.options.partitions))
                .saturating_sub(ranks.refetches)
        });
        let Some(quota) = Quota::of(budget_left, size_left) else {
            return Ok(());
        };
        let (segments_dir, backlog, scratch) = (
            self.staging.segments_dir(),
            self.staging.backlog_path(),
            self.staging.sort_dir().join("cut"),
        );
        let staged = Staged {
            segments_dir: &segments_dir,
            backlog: &backlog,
            scratch: &scratch,
            number,
            partitions: settings.options.partitions,
            max_size: settings.options.max_segment_size,
        };
        let Some(held) = crate::round::cut::cut(&staged, &mut selected.written, &ranks, quota)?
        else {
            return Ok(());
        };
        let sel = &mut selected.selection;
        sel.scheduled = sel.scheduled.saturating_sub(held.urls);
        sel.backlogged += held.urls;
        sel.cut.insert(quota.cut.name(), held);
        Ok(())
    }

    /// The backlog and the segments not yet fetched (`unconsumed`), read
    /// beside the merge, and whether the backlog is carried as it is.
    fn waiting(
        &self,
        plan: &Plan,
        unconsumed: &[std::path::PathBuf],
    ) -> Result<(Waiting<'_>, bool), Error> {
        let (backlog, carry) = match &plan.backlog {
            Some((path, how)) => {
                // A scheduled backlog's respelled URLs went into the sort
                // (`Job::Backlog`); a carried one is kept as it is.
                let respell = (*how == BacklogUse::Schedule).then_some(&self.settings.host_rules);
                (
                    Some(BacklogStream::open(path, self.log, respell)?),
                    *how == BacklogUse::Carry,
                )
            }
            None => (None, false),
        };
        let pending = unconsumed
            .iter()
            .map(|p| ListCursor::open(p))
            .collect::<Result<_, _>>()?;
        Ok((Waiting { backlog, pending }, carry))
    }

    /// Each host's budget for the round, from its state in `hosts.db`, the
    /// limits and the pages counted.
    fn budget(
        &self,
        hosts_db: Option<common::hoststate::HostDb>,
        pages: crate::history::PageCounts,
    ) -> Result<Budget, Error> {
        let settings = self.settings;
        for warning in settings.host_rules.unapplied() {
            self.log.warn(format_args!("{warning}"));
        }
        Ok(Budget::new(
            hosts_db,
            settings.policy.clone(),
            settings.round_time,
            Limits {
                max_per_host: settings.options.max_per_host,
                max_host_pages: settings.options.max_host_pages,
                max_domain_pages: settings.options.max_domain_pages,
                max_host_bytes: settings.max_host_bytes,
                crawl_bytes_spent: self.crawl_bytes_spent()?,
            },
            pages,
            common::timefmt::unix_millis(std::time::SystemTime::now()),
        )
        .with_rules(settings.host_rules.clone()))
    }

    /// True when the crawl's WARC files hold `max_crawl_bytes` or more
    /// (said in a warning): nothing is scheduled.
    fn crawl_bytes_spent(&self) -> Result<bool, Error> {
        let Some(max) = self.settings.max_crawl_bytes else {
            return Ok(false);
        };
        let crawl = &self.settings.crawl;
        let bytes = crawl
            .warc_bytes()
            .map_err(Error::io(crawl.fetched_root()))?;
        if bytes >= max {
            self.log.warn(format_args!(
                "{}: the crawl's WARC files hold {bytes} bytes, max_crawl_bytes is {max}: \
                 no URL is scheduled, every URL waits in the backlog (raise \
                 max_crawl_bytes, or move archived WARC files out of fetched/, to go on)",
                crawl.root().display()
            ));
        }
        Ok(bytes >= max)
    }

    /// Says that `out_of_order` URLs of the backlog came out of order and
    /// sorts the staged backlog again.
    fn sort_backlog_again(&self, out_of_order: u64) -> Result<(), Error> {
        self.log.warn(format_args!(
            "{}: {} URLs of hosts out of order (a file not written in this order, or a public \
             suffix list changed since): kept in the backlog, which is sorted again; they wait \
             one round",
            self.settings.crawl.backlog_path().display(),
            out_of_order
        ));
        crate::round::backlog::sort_again(
            &self.staging.backlog_path(),
            self.spills,
            self.settings.options.memory,
            self.log,
        )?;
        Ok(())
    }
}

/// Stages `consumed.txt`: the runs consumed before and those of this round.
fn stage_consumed(staging: &Staging, before: &[String], now: &[String]) -> Result<(), Error> {
    let all: BTreeSet<&String> = before.iter().chain(now).collect();
    let text = listfile::render(&CONSUMED_LIST, all);
    let path = staging.consumed_path();
    write_atomic(&path, text.as_bytes()).map_err(Error::io(&path))
}

/// Stages `scope.seeds` with the registrable domains `met` added, when
/// they add any (or the file is missing).
fn stage_scope_seeds(
    settings: &Settings,
    staging: &Staging,
    met: impl IntoIterator<Item = String>,
) -> Result<(), Error> {
    let path = settings.crawl.scope_seeds_path();
    let mut domains: BTreeSet<String> = listfile::read(&path, &SCOPE_SEEDS_LIST)?
        .unwrap_or_default()
        .into_iter()
        .map(|(_, d)| d)
        .collect();
    let before = domains.len();
    domains.extend(met);
    if domains.len() != before || !path.exists() {
        let text = listfile::render(&SCOPE_SEEDS_LIST, &domains);
        let staged = staging.scope_seeds_path();
        write_atomic(&staged, text.as_bytes()).map_err(Error::io(&staged))?;
    }
    Ok(())
}

/// Logs where the round's Bloom filter comes from, and a `--bloom-fp`
/// that cannot apply to an existing filter.
fn log_origin(settings: &Settings, log: &RunLog, seen: &Seen) {
    let path = settings.crawl.bloom_path();
    let params = seen.params();
    match seen.origin() {
        Origin::Created => log.info(format_args!(
            "{}: new Bloom filter for {} URLs at a false-positive rate of {} ({} bytes); it \
             grows as the crawl does",
            path.display(),
            params.expected_items,
            params.target_fp_rate,
            params.file_bytes()
        )),
        Origin::Loaded { .. }
            if settings.bloom_explicit
                && (params.target_fp_rate - settings.options.bloom_fp).abs() > f64::EPSILON =>
        {
            log.warn(format_args!(
                "{}: the filter was created for a false-positive rate of {}; --bloom-fp only \
                 applies to a new filter",
                path.display(),
                params.target_fp_rate
            ));
        }
        Origin::Loaded { .. } => {}
    }
}

/// The exact sets of a round ([`ExactSets`]): before the selection (to
/// look the suspects up in) and after it (to rebuild the filter from, if
/// it grows).
struct RoundSets {
    /// The history (staged by `run`, the crawl's otherwise), the backlog
    /// read, the segments not yet consumed, and the segments and leftover
    /// lists of the runs this round consumes.
    before: ExactSets,
    /// The segments not yet consumed (also after the round).
    unconsumed: Vec<std::path::PathBuf>,
}

impl RoundSets {
    /// The sets before the selection of a round that runs `plan`, after
    /// the runs `consumed` before.
    fn new(
        crawl: &common::crawldir::CrawlDir,
        staging: &Staging,
        plan: &Plan,
        consumed: &[String],
    ) -> Result<RoundSets, Error> {
        let consuming = &plan.consumes;
        let consumed_after: Vec<String> = consumed.iter().chain(consuming).cloned().collect();
        let backlog = plan.backlog.as_ref().map(|(p, _)| p.as_path());
        let history = if plan.history {
            staging.history_path()
        } else {
            crate::history::current_path(crawl.root())
        };
        let unconsumed = ExactSets::unconsumed_segments(crawl, &consumed_after)?;
        let mut lists: Vec<std::path::PathBuf> =
            backlog.map(|p| p.to_path_buf()).into_iter().collect();
        lists.extend(unconsumed.iter().cloned());
        // The runs read now: their leftover and retry URLs are in the
        // round, their failures without a response in their segment.
        for id in consuming {
            lists.extend(
                [crawl.segment_path(id), crawl.leftover_path(id)]
                    .into_iter()
                    .filter(|p| p.exists()),
            );
        }
        Ok(RoundSets {
            before: ExactSets {
                history: history.exists().then_some(history),
                lists,
            },
            unconsumed,
        })
    }

    /// The exact sets once the round's files are staged: the history, the
    /// new backlog and segments, and the segments not yet consumed.
    fn after(&self, staging: &Staging) -> Result<ExactSets, Error> {
        let backlog = staging.backlog_path();
        let mut lists: Vec<std::path::PathBuf> =
            backlog.exists().then_some(backlog).into_iter().collect();
        lists.extend(staging.segment_files()?);
        lists.extend(self.unconsumed.iter().cloned());
        Ok(ExactSets {
            history: self.before.history.clone(),
            lists,
        })
    }
}

/// Merges the fetches a `run` read (`observations`) into the fetch history,
/// staged, looking `lookup`'s URLs up in it as it is written; the URLs due
/// again go into a sort of their own ([`Due`]), which joins the round's
/// merge. With `spread_new`, the first refetches of URLs new to the history
/// are spread over their interval.
fn merge_history<'a>(
    settings: &'a Settings,
    staging: &Staging,
    spills: &std::sync::Arc<SpillDir>,
    spread_new: bool,
    observations: Merger,
    lookup: Option<Lookup<'a>>,
) -> Result<
    (
        crate::history::HistoryCounts,
        crate::history::generations::Written,
        crate::history::PageCounts,
        Due,
    ),
    Error,
> {
    let crawl = &settings.crawl;
    // (A damaged history is refused with its repair; an I/O error, such as
    // a full disk while the new generation is written, is said as one.)
    let old = HistoryReader::open_in(crawl.root())?;
    // Over a history kept in generations, the round writes one of its own.
    let base = old.as_ref().and_then(|r| r.generations().cloned());
    let out = HistoryOut::create(&staging.history_path(), crawl.root(), base)?;
    let budget = usize::try_from(settings.options.memory / 8).unwrap_or(usize::MAX);
    let mut sorter = Sorter::new(spills.clone(), budget)?;
    let mut urls = 0;
    let mut rec = SegmentRecord::default();
    let mut carried = Vec::new();
    let (merged, pages, written) = crate::history::Merge {
        old,
        observations,
        out,
        schedule: &settings.schedule,
        rules: &settings.host_rules,
        now_ms: common::timefmt::unix_millis(std::time::SystemTime::now()),
        spread_new,
        lookup,
        count_pages: settings.options.max_host_pages.is_some()
            || settings.options.max_domain_pages.is_some()
            || (settings.host_rules).sets(common::rules::Key::MaxHostPages),
    }
    .run(|e| {
        // What a refetch carries: the validators, and the response that
        // holds the payload (what a revisit refers to).
        rec.etag.clone_from(&e.etag);
        rec.last_modified.clone_from(&e.last_modified);
        rec.digest.clone_from(&e.digest);
        rec.fetched = Some(e.payload_ms());
        rec.record_id.clone_from(&e.record_id);
        LastFetch::encode(&rec, &mut carried);
        let meta = Meta {
            hops: e.hops,
            inlinks: 0,
            tries: 0,
            via: Via::Recrawl,
            exempt: true,
            fetched: false,
            rescued: false,
            not_before_s: 0,
        };
        urls += 1;
        sorter.push_carrying(
            &e.host,
            &e.url,
            BloomHash::of(e.url.as_bytes()),
            meta,
            &carried,
        )
    })?;
    Ok((
        merged,
        written,
        pages,
        Due {
            sorted: sorter.finish(),
            urls,
        },
    ))
}

/// The URLs the history merge found due again, sorted as the round's
/// candidates: they join the round's merge, so that a refetch that is also
/// in a leftover list (its fetch cut by the end of a round) is one URL,
/// its copies merged (the newest last fetch, the most tries).
pub struct Due {
    sorted: crate::round::sort::Sorted,
    /// URLs handed out.
    urls: u64,
}
