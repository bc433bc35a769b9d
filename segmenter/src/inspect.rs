//! `segmenter inspect FILE [--json]`: the summary of a segment, leftover or
//! backlog file, computed and printed by the same code as `fetcher inspect`
//! (`common::segment::SegmentSummary`).

use std::path::Path;

use common::segment::SegmentSummary;

use crate::error::Error;

/// Hosts listed in the summary (as `fetcher inspect`).
const TOP_HOSTS: usize = 10;

/// Prints the summary of `file` to stdout.
pub fn inspect(file: &Path, json: bool) -> Result<(), Error> {
    let summary = SegmentSummary::compute(file, TOP_HOSTS)?;
    let text = if json {
        let mut t = serde_json::to_string_pretty(&summary).map_err(|e| Error::Io {
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
