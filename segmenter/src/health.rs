//! Whether a state file of the crawl directory is sound, checked the way
//! the program that reads it reads it: the list files (`consumed.txt`,
//! `scope.seeds`), the segment-format files (backlog, segments),
//! `seen.bloom`, `hosts.db` and the fetch history. `segmenter repair`
//! reports and repairs with it; a round's commit checks its staged files
//! with it before they replace the sound ones.

use std::path::Path;

use common::bloom::BloomFilter;
use common::crawldir::{CONSUMED_LIST, SCOPE_SEEDS_LIST, is_id};
use common::hoststate::HostDb;
use common::listfile::{self, ListError, ListKind};
use common::segment::{SegmentReader, SegmentRecord};

use crate::history::{Entry, HistoryReader};

/// The kinds of state file, each checked and repaired its own way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Consumed,
    ScopeSeeds,
    Backlog,
    Bloom,
    /// A round's journal block for `seen.bloom` (staged only).
    BloomAppend,
    Hosts,
    /// The fetch history (`history.v5.list` with its generations, a
    /// generation, or an older version's file).
    History,
    /// A segment not fetched to completion.
    Segment,
}

/// What a check found.
#[derive(Debug)]
pub enum Health {
    /// No such file (each kind says what that means).
    Missing,
    /// Sound; what it holds.
    Sound(String),
    /// Damaged; what is wrong.
    Damaged(String),
}

/// Checks `path` as a file of `kind`, as the program that reads it would.
pub fn check(kind: Kind, path: &Path) -> Health {
    if !path.exists() {
        return Health::Missing;
    }
    let result = match kind {
        Kind::Consumed => {
            check_list(path, &CONSUMED_LIST, is_id).map(|n| format!("{n} fetched run(s) consumed"))
        }
        Kind::ScopeSeeds => check_list(path, &SCOPE_SEEDS_LIST, |e| {
            url::Host::parse(e).is_ok_and(|h| matches!(h, url::Host::Domain(_)))
        })
        .map(|n| format!("{n} domain(s)")),
        Kind::Backlog | Kind::Segment => check_segment(path),
        Kind::Bloom => check_bloom(path),
        Kind::BloomAppend => common::bloom::check_journal_file(path)
            .map(|(_, n)| format!("{n} hashes to append"))
            .map_err(|e| e.to_string()),
        Kind::Hosts => match HostDb::open_read_only(path) {
            Ok(_) => Ok("SQLite, quick_check ok".to_string()),
            Err(e) => Err(e.to_string()),
        },
        Kind::History => check_history(path),
    };
    match result {
        Ok(detail) => Health::Sound(detail),
        // The report line names the file already.
        Err(problem) => Health::Damaged(
            problem
                .strip_prefix(&format!("{}: ", path.display()))
                .map_or(problem.clone(), str::to_string),
        ),
    }
}

/// The number of entries of a list file, if it is sound and every entry
/// passes `entry_ok`.
fn check_list(
    path: &Path,
    kind: &ListKind,
    entry_ok: impl Fn(&str) -> bool,
) -> Result<usize, String> {
    let problem = |e: ListError| match e {
        ListError::Damaged { problem, .. } => problem,
        other => other.to_string(),
    };
    let entries = listfile::read(path, kind)
        .map_err(problem)?
        .unwrap_or_default();
    if let Some((n, e)) = entries.iter().find(|(_, e)| !entry_ok(e)) {
        return Err(format!("line {n}: `{e}` is not a valid entry"));
    }
    Ok(entries.len())
}

/// The URLs of a segment-format file, if it decodes to its end.
fn check_segment(path: &Path) -> Result<String, String> {
    let mut reader = SegmentReader::open(path).map_err(|e| e.to_string())?;
    let mut rec = SegmentRecord::default();
    let mut urls = 0u64;
    loop {
        match reader.read_next(&mut rec) {
            Ok(true) => urls += 1,
            Ok(false) => break,
            Err(e) if e.is_fatal() => {
                return Err(format!("{e} (after {urls} readable URLs)"));
            }
            // A malformed line is skipped by every reader, with a warning.
            Err(_) => {}
        }
    }
    let malformed = reader.malformed();
    Ok(if malformed > 0 {
        format!("{urls} URLs ({malformed} malformed lines, skipped by every reader)")
    } else {
        format!("{urls} URLs")
    })
}

/// What a Bloom filter holds, if its header, journal and bit array agree.
fn check_bloom(path: &Path) -> Result<String, String> {
    let b = BloomFilter::open_read_only(path).map_err(|e| e.to_string())?;
    b.verify().map_err(|e| e.to_string())?;
    let p = b.params();
    Ok(format!(
        "{} URLs for a design load of {}, est. false-positive rate {:.6}, journal of {} \
         hashes",
        b.items(),
        p.expected_items,
        b.estimated_fp_rate(),
        b.journal().hashes
    ))
}

/// The URLs of a fetch history, if it reads to its checked end line.
fn check_history(path: &Path) -> Result<String, String> {
    let Some(mut reader) = HistoryReader::open(path).map_err(|e| e.to_string())? else {
        return Err("no such file".into());
    };
    let mut entry = Entry::default();
    let mut urls = 0u64;
    while reader.read_into(&mut entry).map_err(|e| e.to_string())? {
        urls += 1;
    }
    Ok(format!("{urls} URLs"))
}
