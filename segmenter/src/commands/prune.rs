//! `segmenter prune CRAWL [--keep-logs DURATION] [--dry-run]`: removes
//! what is older than the retention (`--keep-logs`, else `[crawl]
//! keep_logs`, else 30 days; 0 keeps everything) and that nothing reads
//! any more, so that a crawl run from cron for months keeps a directory
//! that grows with what it fetched, not with its age. `scripts/crawl.sh`
//! runs it once per run.
//!
//! **Logs.** Only files the programs write in `CRAWL/logs/` are
//! candidates: `round-NNNNN.log`, `inject.log`, `fetcher-*.log`,
//! `segmenter-*.log` and the round reports `segmenter-*.json`. Kept whatever
//! their age: the log of the round in progress (`round.json`), and the
//! newest report of a `segmenter run` (`segmenter status` shows its
//! figures). Any other file (a `cron.log` of your own) is never touched.
//!
//! **Spent files** of the fetched runs consumed (listed in `consumed.txt`,
//! of every shard in a sharded crawl) whose `DONE` is older than the
//! retention: the run's segment (its URLs are in the fetch history, the
//! leftover list or the next segments), its leftover list (read into the
//! next segments and the backlog when it was consumed), its lock file, its
//! map outputs (sharded crawls), and the whole run of a fetch that stored
//! nothing (no WARC file: its `DONE`, `stats.json`, `crawl.log` and the
//! report's summaries of it; the round journal keeps its figures). Never a
//! WARC file, its CDXJ index, a run's `crawl.log` or `stats.json` beside
//! WARC files (nor the report's summaries of them), nor the uploads
//! manifest: the archive and its record. Kept whatever their age: the
//! segment of the round in progress and the crawl's newest segment (the
//! crawl has begun), and the runs a fetcher still holds.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use common::config::{CrawlConfig, DEFAULT_KEEP_LOGS};
use common::crawldir::CrawlDir;

use crate::error::Error;

/// What [`prune`] removed (or, with `dry_run`, would remove).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Pruned {
    /// The files.
    pub files: Vec<PathBuf>,
    /// Their bytes.
    pub bytes: u64,
}

/// Runs `prune`: removes what is older than `keep` (or the setting), and
/// prints one line for the logs and one for the spent files saying what
/// went.
pub fn run(root: &Path, keep: Option<Duration>, dry_run: bool) -> Result<(), Error> {
    let crawl = CrawlDir::open(root).map_err(Error::io(root))?;
    let keep = match keep {
        Some(keep) => keep,
        None => CrawlConfig::load(&crawl.config_path())?
            .crawl
            .keep_logs
            .map_or(DEFAULT_KEEP_LOGS, Duration::from),
    };
    if keep.is_zero() {
        return Ok(());
    }
    let now = SystemTime::now();
    let verb = if dry_run { "would remove" } else { "removed" };
    let logs = prune(&crawl, keep, now, dry_run)?;
    let mut out = String::new();
    if !logs.files.is_empty() {
        out.push_str(&format!(
            "{verb} {} file(s) of {} ({}) not written for {}\n",
            logs.files.len(),
            crawl.logs_dir().display(),
            common::human::bytes(logs.bytes),
            common::human::duration(keep)
        ));
    }
    let spent = prune_spent(&crawl, keep, now, dry_run)?;
    if !spent.files.is_empty() {
        out.push_str(&format!(
            "{verb} {} spent file(s) of {} fetched run(s) consumed more than {} ago ({}): \
             segments, leftover lists, runs that stored nothing\n",
            spent.files.len(),
            spent.runs,
            common::human::duration(keep),
            common::human::bytes(spent.bytes)
        ));
    }
    for note in &spent.notes {
        out.push_str(&format!("{note}\n"));
    }
    common::exit::print(&out).map_err(Error::io("stdout"))
}

/// Removes (unless `dry_run`) the programs' files in `logs/` last written
/// before `now - keep`, but for those kept whatever their age.
pub fn prune(
    crawl: &CrawlDir,
    keep: Duration,
    now: SystemTime,
    dry_run: bool,
) -> Result<Pruned, Error> {
    let dir = crawl.logs_dir();
    let cutoff = now.checked_sub(keep).unwrap_or(SystemTime::UNIX_EPOCH);
    let protected = protected(crawl);
    let mut pruned = Pruned::default();
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .map_err(Error::io(&dir))?
        .collect::<Result<_, _>>()
        .map_err(Error::io(&dir))?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !is_programs_file(&name) || protected.contains(&name) {
            continue;
        }
        let meta = entry.metadata().map_err(Error::io(entry.path()))?;
        let written = meta.modified().map_err(Error::io(entry.path()))?;
        if !meta.is_file() || written >= cutoff {
            continue;
        }
        if !dry_run {
            match std::fs::remove_file(entry.path()) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(Error::io(entry.path())(e));
                }
                _ => {}
            }
        }
        pruned.bytes += meta.len();
        pruned.files.push(entry.path());
    }
    Ok(pruned)
}

/// True for the names of files the programs and `crawl.sh` write in
/// `logs/`.
fn is_programs_file(name: &str) -> bool {
    let round_log = name
        .strip_prefix("round-")
        .and_then(|n| n.strip_suffix(".log"))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    let program_file = ["fetcher-", "segmenter-"]
        .iter()
        .any(|p| name.starts_with(p))
        && (name.ends_with(".log") || name.ends_with(".json"))
        && !name.ends_with(".tmp");
    round_log || program_file || name == "inject.log"
}

/// The round in progress (`round.json`), if there is one and it reads.
fn open_round(crawl: &CrawlDir) -> Option<crate::cycle::OpenRound> {
    let text = std::fs::read_to_string(crawl.round_state_path()).ok()?;
    serde_json::from_str::<crate::cycle::DriverState>(&text)
        .ok()?
        .open
}

/// The files kept whatever their age: the log of the round in progress and
/// the newest report of a `segmenter run`.
fn protected(crawl: &CrawlDir) -> Vec<String> {
    let mut keep = Vec::new();
    if let Some(open) = open_round(crawl) {
        keep.push(format!("round-{:05}.log", open.number));
    }
    if let Some(name) = crate::state::reports::LastRound::read(&crawl.logs_dir()).last_round {
        keep.push(format!("{name}.json"));
    }
    keep
}

/// What [`prune_spent`] removed (or, with `dry_run`, would remove).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Spent {
    /// The files and directories.
    pub files: Vec<PathBuf>,
    /// Their bytes.
    pub bytes: u64,
    /// The fetched runs they were of.
    pub runs: u64,
    /// What was left alone, and why.
    pub notes: Vec<String>,
}

/// The files of a fetched run that stored nothing (no WARC file, no
/// uploads manifest): every one is spent once the run is consumed (the
/// report's summaries of its log and round report with them).
fn stored_nothing(name: &str) -> bool {
    use crate::state::report_summaries::{LOG_SUMMARY_FILE, REPORT_SUMMARY_FILE};
    use common::crawldir::{CRAWL_LOG_FILE, DONE_FILE, FETCH_LOCK_FILE, STATS_FILE, WORK_FILE};
    [
        DONE_FILE,
        STATS_FILE,
        CRAWL_LOG_FILE,
        FETCH_LOCK_FILE,
        WORK_FILE,
        LOG_SUMMARY_FILE,
        REPORT_SUMMARY_FILE,
    ]
    .contains(&name)
        || is_spent_in_run(name)
}

/// The files of any consumed fetched run that nothing reads any more: its
/// leftover list and its map outputs (a lock file is handled apart).
fn is_spent_in_run(name: &str) -> bool {
    (name.starts_with(common::crawldir::LEFTOVER_NAME) && name.ends_with(".tsv.zst"))
        || name == crate::state::mapped::MAPPED_DIR
}

/// Removes (unless `dry_run`) the spent files of the fetched runs consumed
/// (by every shard) whose `DONE` was written before `now - keep`; see the
/// module's documentation.
pub fn prune_spent(
    crawl: &CrawlDir,
    keep: Duration,
    now: SystemTime,
    dry_run: bool,
) -> Result<Spent, Error> {
    let cutoff = now.checked_sub(keep).unwrap_or(SystemTime::UNIX_EPOCH);
    let views = common::shards::Shards::load(crawl.root())?.views(crawl);
    let consumed = views
        .iter()
        .map(|v| crate::state::runs::read_consumed(&v.consumed_path()))
        .collect::<Result<Vec<_>, _>>()?;
    let open = open_round(crawl).and_then(|o| o.segment);
    let mut spent = Spent::default();
    for (j, view) in views.iter().enumerate() {
        // No segmenter commits a round meanwhile.
        let _lock = match crate::round::commit::lock(view) {
            Ok(lock) => lock,
            Err(Error::Locked(dir)) => {
                spent.notes.push(format!(
                    "{}: a segmenter is running there: its spent files are left for a later \
                     prune",
                    dir.display()
                ));
                continue;
            }
            Err(e) => return Err(e),
        };
        let newest = view
            .segment_ids()
            .map_err(Error::io(view.segments_dir()))?
            .pop();
        let runs = view
            .completed_runs()
            .map_err(Error::io(view.fetched_root()))?;
        for id in runs {
            let entry = crate::state::mapped::consumed_entry(&id, j as u32);
            let everywhere = consumed
                .iter()
                .enumerate()
                .all(|(k, c)| c.contains(&entry) || (k == j && c.contains(&id)));
            let done = view.fetched_dir(&id).join(common::crawldir::DONE_FILE);
            let written = std::fs::metadata(&done)
                .and_then(|m| m.modified())
                .map_err(Error::io(&done))?;
            if !everywhere || open.as_deref() == Some(id.as_str()) || written >= cutoff {
                continue;
            }
            let before = spent.files.len();
            if newest.as_deref() != Some(id.as_str()) {
                prune_segment(view, &id, dry_run, &mut spent)?;
            }
            prune_run(view, &id, dry_run, &mut spent)?;
            spent.runs += u64::from(spent.files.len() > before);
        }
    }
    Ok(spent)
}

/// Removes the files of segment `id` (in any format version).
fn prune_segment(view: &CrawlDir, id: &str, dry_run: bool, spent: &mut Spent) -> Result<(), Error> {
    let dir = view.segments_dir();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(Error::io(&dir))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(common::crawldir::segment_id_of_file_name)
                == Some(id)
        })
        .collect();
    files.sort();
    for path in files {
        remove(&path, dry_run, spent)?;
    }
    Ok(())
}

/// Removes the spent files of fetched run `id`: all of a run that stored
/// nothing (its `DONE` last, then the directory), else its leftover list,
/// map outputs and lock file. A lock a fetcher holds keeps the run whole.
fn prune_run(view: &CrawlDir, id: &str, dry_run: bool, spent: &mut Spent) -> Result<(), Error> {
    use common::crawldir::{DONE_FILE, FETCH_LOCK_FILE};
    let dir = view.fetched_dir(id);
    let lock_path = dir.join(FETCH_LOCK_FILE);
    let Some(_held) = common::lock::try_lock(&lock_path).map_err(Error::io(&lock_path))? else {
        spent
            .notes
            .push(format!("{}: held by a fetcher: left alone", dir.display()));
        return Ok(());
    };
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map_err(Error::io(&dir))?
        .filter_map(|e| e.ok().and_then(|e| e.file_name().into_string().ok()))
        .collect();
    names.sort();
    let whole = names.iter().all(|n| stored_nothing(n));
    for name in &names {
        if (whole && name != DONE_FILE) || is_spent_in_run(name) || name == FETCH_LOCK_FILE {
            remove(&dir.join(name), dry_run, spent)?;
        }
    }
    if whole {
        remove(&dir.join(DONE_FILE), dry_run, spent)?;
        if !dry_run {
            std::fs::remove_dir(&dir).map_err(Error::io(&dir))?;
        }
    }
    Ok(())
}

/// Removes a file or a directory (unless `dry_run`), counted in `spent`.
fn remove(path: &Path, dry_run: bool, spent: &mut Spent) -> Result<(), Error> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(path)(e)),
    };
    let bytes = match meta.is_dir() {
        true => std::fs::read_dir(path)
            .map_err(Error::io(path))?
            .filter_map(|e| e.ok()?.metadata().ok())
            .map(|m| m.len())
            .sum(),
        false => meta.len(),
    };
    if !dry_run {
        let removed = match meta.is_dir() {
            true => std::fs::remove_dir_all(path),
            false => std::fs::remove_file(path),
        };
        match removed {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(Error::io(path)(e)),
            _ => {}
        }
    }
    spent.bytes += bytes;
    spent.files.push(path.to_path_buf());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_programs_files_are_candidates() {
        for name in [
            "round-00012.log",
            "inject.log",
            "fetcher-20260301120000123.log",
            "segmenter-20260301120000123-1.log",
            "segmenter-20260301120000123.json",
        ] {
            assert!(is_programs_file(name), "{name}");
        }
        for name in [
            "cron.log",
            "round-.log",
            "round-12a.log",
            "notes.txt",
            "segmenter-1.json.tmp",
        ] {
            assert!(!is_programs_file(name), "{name}");
        }
    }

    #[test]
    fn spent_files_are_never_the_archive() {
        for name in ["leftover.v5.tsv.zst", "leftover.v4.tsv.zst", "mapped"] {
            assert!(is_spent_in_run(name) && stored_nothing(name), "{name}");
        }
        for name in [
            "DONE",
            "stats.json",
            "crawl.log",
            ".lock",
            ".work.tsv",
            "crawl-log-summary.v1.json",
            "round-report-summary.v1.json",
        ] {
            assert!(stored_nothing(name) && !is_spent_in_run(name), "{name}");
        }
        for name in [
            "crawl-00001-20260301120000000-00000-host.warc.gz",
            "crawl-00001-20260301120000000-00000-host.cdxj",
            "uploads.v1.tsv",
            "notes.txt",
        ] {
            assert!(!stored_nothing(name) && !is_spent_in_run(name), "{name}");
        }
    }
}
