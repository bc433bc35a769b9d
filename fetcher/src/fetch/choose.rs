//! Before a run: the segment to fetch (the one named, or the oldest
//! pending one), or, when there is none, what the crawl needs instead.

use common::crawldir::{CrawlDir, DONE_FILE};

use crate::error::Error;

/// The segment to fetch: the one named, or the oldest pending one; `None`
/// (after saying why) when there is nothing to do.
pub(super) fn choose_segment(
    crawl: &CrawlDir,
    named: Option<&str>,
) -> Result<Option<String>, Error> {
    let Some(id) = named else {
        let pending = crawl
            .pending_segments()
            .map_err(Error::io(crawl.segments_dir()))?;
        if pending.is_empty() {
            common::runlog::say(format_args!(
                "{}: no segment waiting to be fetched ({})",
                crawl.root().display(),
                nothing_pending(crawl)?
            ));
        }
        return Ok(pending.into_iter().next());
    };
    if !crawl.segment_path(id).is_file() {
        return Err(Error::Usage(format!(
            "{}: no such segment (list them with `ls {}`)",
            crawl.segment_path(id).display(),
            crawl.segments_dir().display()
        )));
    }
    if crawl.is_fetched(id) {
        common::runlog::say(format_args!(
            "segment {id} is already fetched ({} exists); nothing to do",
            crawl.fetched_dir(id).join(DONE_FILE).display()
        ));
        return Ok(None);
    }
    Ok(Some(id.to_string()))
}

/// What to do when no segment waits, said for the state of `crawl`: a
/// directory where no crawl was started (refused: exit 2), fetched runs
/// the segmenter has not read yet, or a crawl whose every run was read.
fn nothing_pending(crawl: &CrawlDir) -> Result<String, Error> {
    let shown = crawl.top().display();
    let segments = crawl
        .segment_ids()
        .map_err(Error::io(crawl.segments_dir()))?;
    if segments.is_empty() && !crawl.bloom_path().exists() {
        return Err(Error::Usage(format!(
            "{}: no crawl was started here (no segment, no seen.bloom); start one with \
             `scripts/crawl.sh {shown} --seeds SEEDS_FILE` (or `segmenter inject {shown} \
             SEEDS_FILE`)",
            crawl.root().display()
        )));
    }
    let runs = crawl
        .completed_runs()
        .map_err(Error::io(crawl.fetched_root()))?;
    let consumed = common::listfile::read(&crawl.consumed_path(), &common::crawldir::CONSUMED_LIST)
        .map(|list| list.unwrap_or_default())
        .unwrap_or_default();
    let unread = runs
        .iter()
        .filter(|id| !consumed.iter().any(|(_, c)| c == *id))
        .count();
    Ok(if unread > 0 {
        format!(
            "{unread} fetched run(s) not read yet: `segmenter run {shown}` makes the next \
             segment from them"
        )
    } else {
        format!(
            "every fetched run was read and no URL waits in a segment; `segmenter next {shown}` \
             says what the crawl does next"
        )
    })
}
