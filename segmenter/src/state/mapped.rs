//! What a sharded round's map leaves for the reduces, in
//! `fetched/RUN/mapped/` of the shard that fetched the run, and what a
//! reduce reads of it: the map outputs addressed to its shard that it has
//! not consumed (`consumed.txt` of shard J lists `RUN-sIII`, and J's own
//! runs by their ID); and what each shard's tasks have left to do
//! ([`ShardTasks`]).
//!
//! `mapped/` holds, in format version 3:
//! `to-JJJ.cand3.zst` (the candidates for shard J; the sort's spill format,
//! see [`crate::round::sort`]: keys in `domain TAB host TAB hash url` order, each
//! URL once), `observed.cand3.zst` (the history's observations, in the same
//! format), `counts.json` (what the scan counted, for the round report of
//! the run's own shard; maps written before it have none) and `DONE` (`segmenter-mapped v3`, then `RUN ID`, `SHARD I`,
//! one `to-JJJ N` line per destination with its URL count, `observed N`,
//! and `end`). Version 2 (`*.cand2.zst`, `segmenter-mapped v2`) is still
//! read: its observations carry no canonical hint. So is version 1
//! (`*.cand1.zst`, `segmenter-mapped v1`): its refetches carry no record ID
//! ([`crate::round::candidates::LastFetch`]), nor do its observations
//! ([`crate::history::Observation`]).

use std::path::{Path, PathBuf};

use common::crawldir::CrawlDir;
use common::shards::Shards;

use crate::error::Error;
use crate::state::runs::read_consumed;

/// The directory of a run's map output, inside `fetched/RUN/`.
pub const MAPPED_DIR: &str = "mapped";
/// The marker written last inside `mapped/`.
pub const MAPPED_DONE: &str = "DONE";
/// The map output's format version.
pub const MAPPED_VERSION: u32 = 3;

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

/// What a shard's tasks have left to do.
pub(crate) struct ShardTasks {
    /// Complete runs of the shard not mapped yet.
    pub(crate) unmapped: Vec<String>,
    /// Map outputs, of every shard, addressed to it and not reduced yet.
    pub(crate) unreduced: usize,
    /// A pending segment's fetch started and did not end (`fetched/ID/`
    /// without `DONE`).
    fetch_started: bool,
}

impl ShardTasks {
    /// Reads what shard `view`'s tasks have left to do.
    pub(crate) fn read(
        view: &CrawlDir,
        shards: &common::shards::Shards,
    ) -> Result<ShardTasks, Error> {
        let consumed = read_consumed(&view.consumed_path())?;
        let inputs = mapped_inputs(view, shards, &consumed)?;
        Ok(ShardTasks {
            unmapped: unmapped_runs(view)?,
            unreduced: inputs.candidates.len(),
            fetch_started: view
                .pending_segments()
                .map_err(Error::io(view.segments_dir()))?
                .iter()
                .any(|id| view.fetched_dir(id).exists()),
        })
    }

    /// The task to run again for this shard, if one failed (or did not
    /// run yet): its fetch when a run is unfinished or unmapped, else its reduce when
    /// map outputs wait for it; empty if none.
    pub(crate) fn rerun(&self, root: &Path, j: u32) -> String {
        let step = if self.fetch_started || !self.unmapped.is_empty() {
            "fetch"
        } else if self.unreduced > 0 {
            "reduce"
        } else {
            return String::new();
        };
        format!("scripts/task.sh {} {step} --index {j}", root.display())
    }
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
