//! A sharded crawl's round as map and reduce ([`common::shards`]): each
//! step is one command that one task runs on one machine, and writes only
//! in its own shard's directory.
//!
//! - `segmenter map CRAWL --shard I` reads every complete fetched run of
//!   shard I not yet mapped, once (WARC files, leftover list, crawl log):
//!   the links, redirects, sitemaps and re-entering URLs go through the
//!   canonical form and the scope and trap filters as in `run`, are sorted
//!   and merged, and are written routed by their destination shard; what
//!   each fetch says for the fetch history goes to shard I alone (its own
//!   URLs). Everything is written into `fetched/RUN/.mapped-tmp/`, the
//!   marker `DONE` last, and the directory is renamed to `fetched/RUN/mapped/`:
//!   a map killed anywhere leaves no `mapped/` that a reduce could read, and
//!   the same command does it again.
//! - `segmenter reduce CRAWL --shard J` reads, from every shard I, the
//!   `mapped/to-JJJ` file of every mapped run it has not consumed
//!   (`consumed.txt` of shard J lists `RUN-sIII`, and J's own runs by their
//!   ID), drops the URLs shard J's `seen.bloom` holds, and does the rest of
//!   a `run` round on shard J's view: backlog, due refetches, history, caps,
//!   plan, sort, segments; committed all or nothing as `run` commits.
//!
//! `mapped/` holds, in format version 3:
//! `to-JJJ.cand3.zst` (the candidates for shard J; the sort's spill format,
//! see [`crate::sort`]: keys in `domain TAB host TAB hash url` order, each
//! URL once), `observed.cand3.zst` (the history's observations, in the same
//! format), `counts.json` (what the scan counted, for the round report of
//! the run's own shard; maps written before it have none) and `DONE` (`segmenter-mapped v3`, then `RUN ID`, `SHARD I`,
//! one `to-JJJ N` line per destination with its URL count, `observed N`,
//! and `end`). Version 2 (`*.cand2.zst`, `segmenter-mapped v2`) is still
//! read: its observations carry no canonical hint. So is version 1
//! (`*.cand1.zst`, `segmenter-mapped v1`): its refetches carry no record ID
//! ([`crate::candidates::LastFetch`]), nor do its observations
//! ([`crate::history::Observation`]).
//!
//! Map and reduce are separate tasks (not fused with fetch into one
//! program) so that the scheduler can run them as arrays; the driver runs
//! fetch and map in one task, one after the other, while the WARC files
//! are still in the page cache.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::atomic::{sync_dir, write_atomic};
use common::crawldir::CrawlDir;
use common::filter::{Scope, UrlFilter};
use common::shards::Shards;

use crate::candidates::{Meta, split_key};
use crate::commit::read_consumed;
use crate::counts::Counts;
use crate::error::Error;
use crate::flags::RoundFlags;
use crate::progress::Progress;
use crate::scan::{Job, ScanConfig, ScanOutput, fetched_warcs, scan};
use crate::seen::Seen;
use crate::seen::rescue::Suspects;
use crate::session::Session;
use crate::sort::{Sorted, Sorter, SpillDir, SpillReader, SpillWriter, merge};

/// The directory of a run's map output, inside `fetched/RUN/`.
pub const MAPPED_DIR: &str = "mapped";
/// Where a map writes before renaming to [`MAPPED_DIR`].
const MAPPED_TMP: &str = ".mapped-tmp";
/// The marker written last inside `mapped/`.
pub const MAPPED_DONE: &str = "DONE";
/// The map output's format version.
pub const MAPPED_VERSION: u32 = 3;
const MARKER_HEADER: &str = "segmenter-mapped v3";

/// `to-JJJ.cand3.zst`: the candidates for shard `j`.
pub fn candidates_name(j: u32) -> String {
    candidates_name_of(j, MAPPED_VERSION)
}

/// `observed.cand3.zst`: the fetch history's observations.
pub fn observed_name() -> String {
    observed_name_of(MAPPED_VERSION)
}

/// The candidates for shard `j` in a map output of format `version`.
fn candidates_name_of(j: u32, version: u32) -> String {
    format!("to-{j:03}.cand{version}.zst")
}

/// The observations in a map output of format `version`.
fn observed_name_of(version: u32) -> String {
    format!("observed.cand{version}.zst")
}

/// The format version of the complete map output `mapped` (a `mapped/`
/// directory): that of the observations it holds (an older version: a map
/// by an older build), the current one when it holds none.
fn mapped_version(mapped: &Path) -> u32 {
    (1..=MAPPED_VERSION)
        .rev()
        .find(|&v| mapped.join(observed_name_of(v)).exists())
        .unwrap_or(MAPPED_VERSION)
}

/// `counts.json`: what the map's scan counted (links found, rejects by
/// reason, pages, sitemaps ...), which the reduce of the run's own shard
/// adds to its round report.
pub const COUNTS_NAME: &str = "counts.json";
/// The format version of `counts.json`.
pub const COUNTS_VERSION: u64 = 1;

/// `RUN-sIII`: the entry of `consumed.txt` of a reduce that read shard
/// `i`'s run `run`.
pub fn consumed_entry(run: &str, i: u32) -> String {
    format!("{run}-s{i:03}")
}

/// True if `fetched/RUN/mapped/DONE` exists.
pub fn is_mapped(crawl: &CrawlDir, run: &str) -> bool {
    crawl
        .fetched_dir(run)
        .join(MAPPED_DIR)
        .join(MAPPED_DONE)
        .is_file()
}

/// Complete fetched runs of a shard not yet mapped, and not consumed by
/// a `run` of an unsharded crawl either.
pub fn unmapped_runs(crawl: &CrawlDir) -> Result<Vec<String>, Error> {
    let consumed = read_consumed(&crawl.consumed_path())?;
    let mut runs = crawl
        .completed_runs()
        .map_err(Error::io(crawl.fetched_root()))?;
    runs.retain(|id| !consumed.contains(id) && !is_mapped(crawl, id));
    Ok(runs)
}

/// Runs `segmenter map`.
pub fn map(root: &Path, shard: Option<u32>, flags: &RoundFlags) -> Result<(), Error> {
    let (crawl, shards) = open(root, shard)?;
    let session = Session::start(crawl, flags)?;
    session.record(map_all(&session, &shards))
}

/// The shard's view (its directories made) and the crawl's shards.
pub fn open(root: &Path, shard: Option<u32>) -> Result<(CrawlDir, Shards), Error> {
    CrawlDir::open(root).map_err(Error::io(root))?;
    let crawl = common::shards::select(root, shard).map_err(|e| Error::Usage(e.to_string()))?;
    crawl.create_subdirs().map_err(Error::io(crawl.root()))?;
    Ok((crawl, Shards::load(root)?))
}

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

/// The shard number of a view (0 for an unsharded crawl).
pub fn shard_number(crawl: &CrawlDir) -> u32 {
    if !crawl.is_shard() {
        return 0;
    }
    crawl
        .root()
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
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
        max_tries: settings.max_tries,
        max_links_per_page: settings.max_links_per_page,
        max_page_size: settings.max_page_size,
        metadata_outlinks: settings.metadata_outlinks,
        robots_name: settings.agent_name.as_deref(),
        seen: &seen,
        seen_is_empty: true,
        rescue: false,
        spills: spills.clone(),
        memory: settings.memory,
        threads: settings.threads,
        progress: &progress,
        observe: true,
        history_only: &no_history_only,
        sitemaps: &settings.sitemaps,
        hosts_db: &hosts_db,
        shard_hosts_dbs: Some(crate::scan::ShardHostDbs { shards, dbs: &dbs }),
    };
    let scanned = scan(&cfg, jobs)?;
    let fan_in = (settings.memory / 4 / (1 << 19)).clamp(4, 64) as usize;
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
    crate::commit::pause_point("mapped");
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

/// Reads a map's `counts.json`; `None` if the map predates it (no file).
/// A file that cannot be read is an error that says what to do.
pub fn read_counts(path: &Path) -> Result<Option<Counts>, Error> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(path)(e)),
    };
    let bad = |why: String| Error::Io {
        path: path.to_path_buf(),
        source: std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "{why}. Repair: delete the run's mapped/ directory and map the run again \
                 (`segmenter map CRAWL --shard I`)"
            ),
        ),
    };
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| bad(format!("not a map's counts ({e})")))?;
    match v.get("version").and_then(serde_json::Value::as_u64) {
        Some(n) if n <= COUNTS_VERSION => {}
        n => {
            return Err(bad(format!(
                "version {n:?}: this segmenter reads up to version {COUNTS_VERSION}"
            )));
        }
    }
    let counts = serde_json::from_value(v.get("counts").cloned().unwrap_or_default())
        .map_err(|e| bad(format!("not a map's counts ({e})")))?;
    Ok(Some(counts))
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

/// What a reduce reads of the map outputs.
#[derive(Debug, Default)]
pub struct Mapped {
    /// Candidate files addressed to this shard.
    pub candidates: Vec<PathBuf>,
    /// Observation files of this shard's own runs.
    pub observed: Vec<PathBuf>,
    /// Entries for `consumed.txt`.
    pub entries: Vec<String>,
    /// Complete runs (shard, ID) not mapped yet: left for a later reduce.
    pub unmapped: Vec<(u32, String)>,
}

/// The map outputs addressed to `view`'s shard that it has not consumed,
/// from every shard; `unmapped` lists the complete runs (shard, ID) not
/// mapped yet, which a later reduce reads.
pub fn mapped_inputs(
    view: &CrawlDir,
    shards: &Shards,
    consumed: &[String],
) -> Result<Mapped, Error> {
    let j = shard_number(view);
    let mut out = Mapped::default();
    let whole = view.whole();
    for (i, from) in shards.views(&whole).iter().enumerate() {
        let i = i as u32;
        for id in from
            .completed_runs()
            .map_err(Error::io(from.fetched_root()))?
        {
            let entry = consumed_entry(&id, i);
            if consumed.contains(&entry) || (i == j && consumed.contains(&id)) {
                continue;
            }
            if !is_mapped(from, &id) {
                out.unmapped.push((i, id));
                continue;
            }
            let mapped = from.fetched_dir(&id).join(MAPPED_DIR);
            let version = mapped_version(&mapped);
            out.candidates
                .push(mapped.join(candidates_name_of(j, version)));
            if i == j {
                out.observed.push(mapped.join(observed_name_of(version)));
                out.entries.push(id.clone());
            }
            out.entries.push(entry);
        }
    }
    Ok(out)
}

/// Warns about the complete runs a reduce leaves for later (not mapped yet).
pub fn warn_unmapped(mapped: &Mapped, whole: &Path, log: &common::runlog::RunLog) {
    for (i, id) in &mapped.unmapped {
        log.warn(format_args!(
            "{}: complete but not mapped yet: read by a later reduce (run `segmenter map {} \
             --shard {i}` first)",
            common::crawldir::shard_dir(whole, *i)
                .join("fetched")
                .join(id)
                .display(),
            whole.display()
        ));
    }
}

/// Stages the map outputs into the round's sort: the candidates not in
/// `seen` (filtered in this pass, before anything is inserted, so the
/// result does not depend on timing), those it holds as suspects for the
/// rescue (when `rescue`), the observations as they are; copies in the
/// round's spill directory, since the merge removes what it merged. The
/// counts of the maps of the shard's own runs (`counts.json`) are added to
/// the round's (but `dupes` and `candidates`, which the reduce counts);
/// returns those runs (a map older than `counts.json` has none).
pub fn stage_mapped(
    mapped: &Mapped,
    seen: &Seen,
    rescue: bool,
    spills: &Arc<SpillDir>,
    memory: u64,
    scanned: &mut ScanOutput,
) -> Result<Vec<String>, Error> {
    let mut counted = Vec::new();
    for path in &mapped.observed {
        let dir = path.parent().unwrap_or(Path::new("."));
        if let Some(mut c) = read_counts(&dir.join(COUNTS_NAME))? {
            // The reduce counts its own seen check and candidates.
            (c.dupes, c.candidates) = (0, 0);
            scanned.counts += &c;
            counted.push(run_of(dir));
        }
    }
    let counts = &mut scanned.counts;
    let mut suspects = match rescue {
        true => Some(Suspects::new(Sorter::new(
            spills.clone(),
            (memory / 8) as usize,
        )?)),
        false => None,
    };
    let mut files = Vec::new();
    for path in &mapped.candidates {
        let out = spills.new_path();
        let mut r = SpillReader::open(path)?;
        let mut w = SpillWriter::create(&out)?;
        while r.advance()? {
            let (key, meta, carried) = r.record();
            let parts = split_key(key);
            if !meta.exempt
                && let Some(k) = parts
                && seen.contains(k.hash)
            {
                counts.dupes += 1;
                if let Some(s) = &mut suspects {
                    s.add(k.host, k.url, k.hash, *meta)?;
                }
                continue;
            }
            counts.candidates += 1;
            w.write(key, meta, carried)?;
        }
        w.finish()?;
        files.push(out);
    }
    scanned.sorted.push(Sorted::of_spills(files));
    if let Some(s) = suspects {
        scanned.suspects.push(s.finish()?);
    }
    let mut copies = Vec::new();
    for path in &mapped.observed {
        let out = spills.new_path();
        std::fs::copy(path, &out).map_err(Error::io(&out))?;
        copies.push(out);
    }
    scanned.observed.push(Sorted::of_spills(copies));
    Ok(counted)
}

/// The run ID of `fetched/ID/mapped/`.
fn run_of(mapped_dir: &Path) -> String {
    mapped_dir
        .parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_1_map_output_is_read_by_its_names() {
        let dir = common::testutil::TempDir::new("mapped-version");
        let mapped = dir.path();
        assert_eq!(mapped_version(mapped), MAPPED_VERSION, "nothing there");
        std::fs::write(mapped.join("observed.cand1.zst"), b"").unwrap();
        assert_eq!(mapped_version(mapped), 1);
        assert_eq!(candidates_name_of(3, 1), "to-003.cand1.zst");
        std::fs::write(mapped.join(observed_name_of(2)), b"").unwrap();
        assert_eq!(mapped_version(mapped), 2);
        std::fs::write(mapped.join(observed_name()), b"").unwrap();
        assert_eq!(mapped_version(mapped), 3);
        assert_eq!(candidates_name(3), "to-003.cand3.zst");
    }
}
