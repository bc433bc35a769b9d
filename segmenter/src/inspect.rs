//! `segmenter inspect FILE [--json]`: the summary of a segment, leftover or
//! backlog file, printed by the same code as `fetcher inspect`.

use std::path::Path;

use crate::error::Error;

/// Prints the summary of `file` to stdout.
pub fn inspect(file: &Path, json: bool) -> Result<(), Error> {
    let _ = (file, json);
    todo!("waiting for common::segment::SegmentSummary")
}
