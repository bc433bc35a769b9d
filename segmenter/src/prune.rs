//! `segmenter prune CRAWL [--keep-logs DURATION] [--dry-run]`: removes the
//! programs' files in `CRAWL/logs/` that were last written longer ago than
//! the retention (`--keep-logs`, else `[crawl] keep_logs`, else 30 days; 0
//! keeps them all). `scripts/crawl.sh` runs it once per run, so a crawl run
//! from cron for months keeps a bounded `logs/`.
//!
//! Only files the programs write are candidates: `round-NNNNN.log`,
//! `inject.log`, `fetcher-*.log`, `segmenter-*.log` and the round reports
//! `segmenter-*.json`. Kept whatever their age: the log of the round in
//! progress (`round.json`), and the newest report of a `segmenter run`
//! (`segmenter status` shows its figures). Any other file (a `cron.log` of
//! your own) is never touched.

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
/// prints one line saying what went.
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
    let pruned = prune(&crawl, keep, SystemTime::now(), dry_run)?;
    if !pruned.files.is_empty() {
        let verb = if dry_run { "would remove" } else { "removed" };
        common::exit::print(&format!(
            "{verb} {} file(s) of {} ({}) not written for {}\n",
            pruned.files.len(),
            crawl.logs_dir().display(),
            common::human::bytes(pruned.bytes),
            common::human::duration(keep)
        ))
        .map_err(Error::io("stdout"))?;
    }
    Ok(())
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

/// The files kept whatever their age: the log of the round in progress and
/// the newest report of a `segmenter run`.
fn protected(crawl: &CrawlDir) -> Vec<String> {
    let mut keep = Vec::new();
    if let Ok(text) = std::fs::read_to_string(crawl.round_state_path())
        && let Ok(state) = serde_json::from_str::<crate::cycle::DriverState>(&text)
        && let Some(open) = state.open
    {
        keep.push(format!("round-{:05}.log", open.number));
    }
    if let Some(name) = crate::status::LastRound::read(&crawl.logs_dir()).last_round {
        keep.push(format!("{name}.json"));
    }
    keep
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
}
