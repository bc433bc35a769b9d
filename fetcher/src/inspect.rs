//! `fetcher inspect FILE [--json]`: the shared summary of a segment or
//! leftover file (the same as `segmenter inspect`).

use common::segment::SegmentSummary;

use crate::cli::InspectArgs;

/// Hosts listed in the summary.
const TOP_HOSTS: usize = 10;

/// Prints the summary of `args.file`.
pub fn run(args: &InspectArgs) -> Result<(), String> {
    let summary = SegmentSummary::compute(&args.file, TOP_HOSTS).map_err(|e| e.to_string())?;
    if args.json {
        let text = serde_json::to_string_pretty(&summary).map_err(|e| e.to_string())?;
        println!("{text}");
    } else {
        print!("{summary}");
    }
    Ok(())
}
