//! The first half of a sharded crawl's round ([`common::shards`]), run
//! as its own task on each shard; the second is the reduce
//! ([`crate::round::reduce`]), and what passes between them is the map
//! output ([`crate::state::mapped`]).
//!
//! `segmenter map CRAWL --shard I` reads every complete fetched run of
//! shard I not yet mapped, once (WARC files, leftover list, crawl log):
//! the links, redirects, sitemaps and re-entering URLs go through the
//! canonical form and the scope and trap filters as in `run`, are sorted
//! and merged, and are written routed by their destination shard; what
//! each fetch says for the fetch history goes to shard I alone (its own
//! URLs). Everything is written into `fetched/RUN/.mapped-tmp/`, the
//! marker `DONE` last, and the directory is renamed to `fetched/RUN/mapped/`:
//! a map killed anywhere leaves no `mapped/` that a reduce could read, and
//! the same command does it again.
//!
//! Map and reduce are separate tasks (not fused with fetch into one
//! program) so that the scheduler can run them as arrays; the driver runs
//! fetch and map in one task, one after the other, while the WARC files
//! are still in the page cache.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::Path;

use common::atomic::{sync_dir, write_atomic};
use common::filter::{Scope, UrlFilter};
use common::shards::Shards;

use crate::error::Error;
use crate::progress::Progress;
use crate::round::candidates::{Meta, split_key};
use crate::round::counts::Counts;
use crate::round::scan::{Job, ScanConfig, fetched_warcs, scan};
use crate::round::seen::Seen;
use crate::round::sort::{Sorted, SpillDir, SpillWriter, merge};
use crate::session::Session;
use crate::state::mapped::{
    COUNTS_NAME, COUNTS_VERSION, MAPPED_DIR, MAPPED_DONE, candidates_name, observed_name,
    shard_number, unmapped_runs,
};

/// Where a map writes before renaming to [`MAPPED_DIR`].
const MAPPED_TMP: &str = ".mapped-tmp";
const MARKER_HEADER: &str = "segmenter-mapped v3";

/// Maps every unmapped run of the session's shard, oldest first.
pub fn map_all(session: &Session, shards: &Shards) -> Result<(), Error> {
    let crawl = &session.settings.crawl;
    let runs = unmapped_runs(crawl)?;
    if runs.is_empty() {
        session.log.tell(format_args!(
            "{}: nothing to map: every complete fetched run is mapped",
            crawl.root().display()
        ));
    }
    for id in runs {
        map_run(session, shards, &id)?;
    }
    Ok(())
}

/// Maps fetched run `id` into `fetched/ID/mapped/`.
fn map_run(session: &Session, shards: &Shards, id: &str) -> Result<(), Error> {
    let settings = &session.settings;
    let crawl = &settings.crawl;
    let started = std::time::Instant::now();
    let dir = crawl.fetched_dir(id);
    let tmp = dir.join(MAPPED_TMP);
    if tmp.exists() {
        // What a killed map left: done again from the start.
        std::fs::remove_dir_all(&tmp).map_err(Error::io(&tmp))?;
    }
    std::fs::create_dir_all(&tmp).map_err(Error::io(&tmp))?;
    let mut jobs = Vec::new();
    for path in fetched_warcs(&dir, &session.log)? {
        jobs.push(Job::Warc(path));
    }
    let leftover = crawl.leftover_path(id);
    if leftover.exists() {
        jobs.push(Job::Leftover(leftover));
    }
    let log = crawl.crawl_log_path(id);
    if log.exists() {
        jobs.push(Job::CrawlLog(log));
    }
    let filter = UrlFilter {
        limits: settings.filter.clone(),
        scope: Scope::with_host_rules(&settings.scope, crawl.top(), settings.host_rules.clone())?,
    };
    // The seen check belongs to the destination shard's reduce: the scan
    // gets an empty filter (and so looks nothing up).
    let seen = Seen::stage(&tmp.join("no-filter"), &tmp.join("no-journal"), 1000, 0.01)?;
    let spills = SpillDir::new(tmp.join("sort")).map_err(Error::io(&tmp))?;
    let hosts_db = std::sync::Mutex::new(common::hoststate::HostDb::open_read_only(
        crawl.hosts_db_path(),
    )?);
    let mut dbs = Vec::new();
    for view in shards.views(&crawl.whole()) {
        dbs.push(std::sync::Mutex::new(
            common::hoststate::HostDb::open_read_only(view.hosts_db_path())?,
        ));
    }
    let progress = Progress::default();
    let no_history_only = HashSet::new();
    let cfg = ScanConfig {
        filter: &filter,
        log: &session.log,
        options: &settings.options,
        robots_name: settings.agent_name.as_deref(),
        seen: &seen,
        seen_is_empty: true,
        rescue: false,
        spills: spills.clone(),
        threads: settings.threads,
        progress: &progress,
        observe: true,
        history_only: &no_history_only,
        sitemaps: &settings.sitemaps,
        hosts_db: &hosts_db,
        shard_hosts_dbs: Some(crate::round::scan::ShardHostDbs { shards, dbs: &dbs }),
    };
    let scanned = scan(&cfg, jobs)?;
    let fan_in = (settings.options.memory / 4 / (1 << 19)).clamp(4, 64) as usize;
    let routed = route(scanned.sorted, &spills, fan_in, shards, &tmp)?;
    let observed = copy_sorted(
        scanned.observed,
        &spills,
        fan_in,
        &tmp.join(observed_name()),
    )?;
    drop(seen);
    std::fs::remove_dir_all(spills.path()).map_err(Error::io(spills.path()))?;
    write_counts(&tmp.join(COUNTS_NAME), id, &scanned.counts)?;
    let mut marker = format!("{MARKER_HEADER}\nRUN {id}\nSHARD {}\n", shard_number(crawl));
    for (j, n) in routed.iter().enumerate() {
        let _ = writeln!(marker, "to-{j:03} {n}");
    }
    let _ = writeln!(marker, "observed {observed}\nend");
    sync_all(&tmp)?;
    write_atomic(tmp.join(MAPPED_DONE), marker.as_bytes()).map_err(Error::io(&tmp))?;
    crate::round::commit::pause_point("mapped");
    let mapped = dir.join(MAPPED_DIR);
    if mapped.exists() {
        // A mapped/ without DONE is no output of ours that counts.
        std::fs::remove_dir_all(&mapped).map_err(Error::io(&mapped))?;
    }
    std::fs::rename(&tmp, &mapped).map_err(Error::io(&mapped))?;
    sync_dir(&dir).map_err(Error::io(&dir))?;
    log_map(session, id, &scanned.counts, &routed, observed, started);
    let shard = crawl.is_shard().then(|| shard_number(crawl));
    let research = settings.research_after_round(shard);
    crate::derivatives::after_round(&research, &[id.to_string()], &session.log);
    Ok(())
}

/// Writes `counts.json`: `{"version": 1, "run": ID, "counts": {...}}`,
/// the counts as a round report's `counts`.
fn write_counts(path: &Path, id: &str, counts: &Counts) -> Result<(), Error> {
    let v = serde_json::json!({"version": COUNTS_VERSION, "run": id, "counts": counts});
    let mut text = serde_json::to_string_pretty(&v).expect("plain JSON");
    text.push('\n');
    write_atomic(path, text.as_bytes()).map_err(Error::io(path))
}

/// The map's line, on stderr and in the shard's log (the counts are also
/// in `counts.json`, for the round report).
fn log_map(
    session: &Session,
    id: &str,
    c: &Counts,
    routed: &[u64],
    observed: u64,
    started: std::time::Instant,
) {
    session.log.info(format_args!(
        "mapped {}: {} WARC record(s), {} link(s), {} candidate(s) routed ({}), {} \
         observation(s) for the history, {:.1} s",
        session.settings.crawl.fetched_dir(id).display(),
        c.records,
        c.links,
        routed.iter().sum::<u64>(),
        routed
            .iter()
            .enumerate()
            .map(|(j, n)| format!("shard {j}: {n}"))
            .collect::<Vec<_>>()
            .join(", "),
        observed,
        started.elapsed().as_secs_f64()
    ));
}

/// fsyncs every file of `dir`.
fn sync_all(dir: &Path) -> Result<(), Error> {
    for entry in std::fs::read_dir(dir).map_err(Error::io(dir))? {
        let path = entry.map_err(Error::io(dir))?.path();
        if path.is_file() {
            std::fs::File::open(&path)
                .and_then(|f| f.sync_all())
                .map_err(Error::io(&path))?;
        }
    }
    sync_dir(dir).map_err(Error::io(dir))
}

/// Merges the scan's candidates and writes each to its destination shard's
/// file in `dir`; the URL count of each.
fn route(
    sorted: Vec<Sorted>,
    spills: &SpillDir,
    fan_in: usize,
    shards: &Shards,
    dir: &Path,
) -> Result<Vec<u64>, Error> {
    let mut merger = merge(sorted, spills, fan_in)?;
    let mut writers = Vec::new();
    for j in 0..shards.shards {
        writers.push(SpillWriter::create(&dir.join(candidates_name(j)))?);
    }
    let mut counts = vec![0u64; writers.len()];
    let mut key = Vec::new();
    let mut meta = Meta::decode(&[0; Meta::ENCODED_LEN]);
    let mut carried = Vec::new();
    while merger.next_into(&mut key, &mut meta, &mut carried)? {
        let j = split_key(&key).map_or(0, |k| shards.shard_of(k.host)) as usize;
        writers[j].write(&key, &meta, &carried)?;
        counts[j] += 1;
    }
    for w in writers {
        w.finish()?;
    }
    Ok(counts)
}

/// Merges `sorted` into one file at `path`; its record count.
fn copy_sorted(
    sorted: Vec<Sorted>,
    spills: &SpillDir,
    fan_in: usize,
    path: &Path,
) -> Result<u64, Error> {
    let mut merger = merge(sorted, spills, fan_in)?;
    let mut w = SpillWriter::create(path)?;
    let mut n = 0;
    let mut key = Vec::new();
    let mut meta = Meta::decode(&[0; Meta::ENCODED_LEN]);
    let mut carried = Vec::new();
    while merger.next_into(&mut key, &mut meta, &mut carried)? {
        w.write(&key, &meta, &carried)?;
        n += 1;
    }
    w.finish()?;
    Ok(n)
}
