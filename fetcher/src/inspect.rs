//! `fetcher inspect FILE [--json]`: the shared summary of a segment or
//! leftover file (the same as `segmenter inspect`).

use common::segment::SegmentSummary;

use crate::cli::InspectArgs;
use crate::error::Error;

/// Hosts listed in the summary.
const TOP_HOSTS: usize = 10;

/// Prints the summary of `args.file`.
pub fn run(args: &InspectArgs) -> Result<(), Error> {
    let summary = SegmentSummary::compute(&args.file, TOP_HOSTS)?;
    let text = if args.json {
        let mut text =
            serde_json::to_string_pretty(&summary).map_err(|e| Error::io(&args.file)(e.into()))?;
        text.push('\n');
        text
    } else {
        summary.to_string()
    };
    common::exit::print(&text).map_err(Error::io("stdout"))
}
