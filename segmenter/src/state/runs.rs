//! A crawl's segments and fetched runs: which are fetched, which are
//! consumed (`consumed.txt`).

use std::path::Path;

use common::crawldir::{CONSUMED_LIST, CrawlDir, is_id};
use common::listfile::{self, ListError};

use crate::error::Error;

/// Reads `consumed.txt` ([`common::listfile`]): one fetched-run ID per
/// line. A damaged file is refused, never read as a shorter list (the runs
/// missing from it would be read again).
pub fn read_consumed(path: &Path) -> Result<Vec<String>, Error> {
    let Some(entries) = listfile::read(path, &CONSUMED_LIST)? else {
        return Ok(Vec::new());
    };
    entries
        .into_iter()
        .map(|(n, id)| {
            if is_id(&id) {
                Ok(id)
            } else {
                Err(ListError::damaged(
                    path,
                    &CONSUMED_LIST,
                    format!("line {n}: `{id}` is not a fetched-run ID"),
                )
                .into())
            }
        })
        .collect()
}

/// Segment and fetched-run IDs, oldest first.
type Ids = Vec<String>;

/// A crawl's segments (oldest first), those not fetched to their end, and
/// its complete fetched runs not consumed yet: where `status` and the
/// driver's decisions ([`crate::cycle`]) both start.
pub fn segments_and_runs(crawl: &CrawlDir) -> Result<(Ids, Ids, Ids), Error> {
    let segments = crawl
        .segment_ids()
        .map_err(Error::io(crawl.segments_dir()))?;
    let pending: Vec<String> = segments
        .iter()
        .filter(|id| !crawl.is_fetched(id))
        .cloned()
        .collect();
    let consumed = read_consumed(&crawl.consumed_path())?;
    let unconsumed = crawl
        .completed_runs()
        .map_err(Error::io(crawl.fetched_root()))?
        .into_iter()
        .filter(|id| !consumed.contains(id))
        .collect();
    Ok((segments, pending, unconsumed))
}
