//! `segmenter inspect FILE [--json]`: the summary of a segment, leftover or
//! backlog file, computed and printed by the same code as `fetcher inspect`
//! (`common::segment::SegmentSummary`); or of the fetch history
//! (`history.v2.tsv.zst`, a version 1 file, or their `.prev`): URLs due when, per host too.

use std::path::Path;

use common::segment::SegmentSummary;

use crate::error::Error;

/// Hosts listed in the summary (as `fetcher inspect`).
const TOP_HOSTS: usize = 10;

/// Prints the summary of `file` to stdout.
pub fn inspect(file: &Path, json: bool) -> Result<(), Error> {
    let is_history = file
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("history.v"));
    if is_history {
        let now = common::timefmt::unix_millis(std::time::SystemTime::now());
        let summary = crate::history::HistorySummary::compute(file, now, TOP_HOSTS)
            .map_err(Error::damaged(crate::history::HISTORY_REPAIR))?;
        return print(file, &summary, json);
    }
    let summary = SegmentSummary::compute(file, TOP_HOSTS)?;
    print(file, &summary, json)
}

fn print<S: serde::Serialize + std::fmt::Display>(
    file: &Path,
    summary: &S,
    json: bool,
) -> Result<(), Error> {
    let text = if json {
        let mut t = serde_json::to_string_pretty(summary).map_err(|e| Error::Io {
            path: file.to_path_buf(),
            source: e.into(),
        })?;
        t.push('\n');
        t
    } else {
        summary.to_string()
    };
    common::exit::print(&text).map_err(Error::io("stdout"))
}
