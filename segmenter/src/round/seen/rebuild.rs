//! The exact sets the seen-set caches, and a filter rebuilt from them (a
//! growth, or the repair of a damaged filter).
//!
//! Every URL the crawl scheduled is, until it is forgotten, in one of:
//! the fetch history (every URL fetched, retired ones included), the
//! backlog, a segment not yet consumed (waiting to be fetched, or fetched
//! and not yet read), or the round being built (its leftover and retry
//! URLs, its new segments). The caller names the files ([`ExactSets`]): a
//! crawl directory's, a staging directory's, or a shard's.
//!
//! What none of them holds, and a rebuilt filter forgets (so that a link
//! to it found later schedules it once more): URLs whose fetch failed
//! without a response and is not retried (TLS, a private address, a URL
//! the fetcher refuses), retries given up after `--max-tries`, pages whose
//! WARC record could not be read, and backlog URLs a narrowed scope
//! dropped.

use std::path::PathBuf;
use std::sync::mpsc;

use common::bloom::{BloomFilter, BloomHash};
use common::crawldir::CrawlDir;
use common::runlog::RunLog;
use common::segment::{SegmentReader, SegmentRecord};

use crate::error::Error;
use crate::history::{HISTORY_REPAIR, HistoryReader};

/// The files holding a crawl's exact sets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExactSets {
    /// The fetch history (`history.v5.list`, or an older version's file), if
    /// there is one.
    pub history: Option<PathBuf>,
    /// Files in the segment format: the backlog, segments, leftover lists.
    pub lists: Vec<PathBuf>,
}

impl ExactSets {
    /// The segments of `crawl` whose run `consumed` does not list (waiting
    /// to be fetched, or fetched and not yet read), oldest first.
    pub fn unconsumed_segments(
        crawl: &CrawlDir,
        consumed: &[String],
    ) -> Result<Vec<PathBuf>, Error> {
        let ids = crawl
            .segment_ids()
            .map_err(Error::io(crawl.segments_dir()))?;
        Ok(ids
            .into_iter()
            .filter(|id| !consumed.contains(id))
            .map(|id| crawl.segment_path(&id))
            .collect())
    }

    /// The exact sets of `crawl` as they are on disk between rounds: its
    /// history, backlog and unconsumed segments (`consumed`: its
    /// `consumed.txt`).
    pub fn of_crawl(crawl: &CrawlDir, consumed: &[String]) -> Result<ExactSets, Error> {
        let history = crate::history::current_path(crawl.root());
        let backlog = crawl.backlog_path();
        let mut lists: Vec<PathBuf> = backlog.exists().then_some(backlog).into_iter().collect();
        lists.extend(ExactSets::unconsumed_segments(crawl, consumed)?);
        Ok(ExactSets {
            history: history.exists().then_some(history),
            lists,
        })
    }
}

/// What a rebuild read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RebuildCounts {
    /// URLs of the history.
    pub history: u64,
    /// URLs of the other files.
    pub lists: u64,
    /// Files read besides the history.
    pub files: usize,
    /// Malformed lines skipped.
    pub bad_lines: u64,
}

impl RebuildCounts {
    /// URLs read.
    pub fn urls(&self) -> u64 {
        self.history + self.lists
    }

    /// `N of the history, M of K other files`.
    pub fn describe(&self) -> String {
        format!(
            "{} of the history, {} of {} other file(s){}",
            self.history,
            self.lists,
            self.files,
            if self.bad_lines > 0 {
                format!(", {} malformed lines skipped", self.bad_lines)
            } else {
                String::new()
            }
        )
    }
}

/// Hashes handed from the reading thread to the inserting one at a time.
const BATCH: usize = 8192;

/// Inserts every URL of `sets` into `filter` (new, empty). A thread reads
/// and hashes ahead of this one, which inserts in file order, so that the
/// filter and its item count are the same on every run. Memory: the
/// readers' buffers and a few batches of hashes, besides the filter.
/// Malformed lines are counted, and logged to `log` if given.
pub fn rebuild(
    sets: &ExactSets,
    filter: &mut BloomFilter,
    log: Option<&RunLog>,
) -> Result<RebuildCounts, Error> {
    let (to_insert, batches) = mpsc::sync_channel::<Vec<BloomHash>>(4);
    let (recycle, recycled) = mpsc::channel::<Vec<BloomHash>>();
    std::thread::scope(|s| {
        let reader = std::thread::Builder::new()
            .name("rebuild-read".into())
            .spawn_scoped(s, move || {
                let mut batch = Vec::with_capacity(BATCH);
                let counts = read_all(sets, log, |h| {
                    batch.push(h);
                    if batch.len() == BATCH {
                        let next = recycled
                            .try_recv()
                            .unwrap_or_else(|_| Vec::with_capacity(BATCH));
                        // The receiving end only stops on a panic.
                        let _ = to_insert.send(std::mem::replace(&mut batch, next));
                    }
                })?;
                if !batch.is_empty() {
                    let _ = to_insert.send(batch);
                }
                Ok(counts)
            })
            .expect("the reading thread starts");
        for mut batch in batches {
            filter.insert_batch(&batch);
            batch.clear();
            let _ = recycle.send(batch);
        }
        reader.join().expect("the reading thread does not panic")
    })
}

/// Counts the URLs of `sets` (reading them all).
pub fn count(sets: &ExactSets, log: Option<&RunLog>) -> Result<RebuildCounts, Error> {
    read_all(sets, log, |_| {})
}

/// Hands the hash of every URL of `sets` to `each`: the history's, then
/// the lists' in order.
fn read_all(
    sets: &ExactSets,
    log: Option<&RunLog>,
    mut each: impl FnMut(BloomHash),
) -> Result<RebuildCounts, Error> {
    let mut counts = RebuildCounts::default();
    if let Some(path) = &sets.history
        && let Some(mut reader) =
            HistoryReader::open(path).map_err(Error::damaged(HISTORY_REPAIR))?
    {
        while let Some((_, url)) = reader
            .read_host_url()
            .map_err(Error::damaged(HISTORY_REPAIR))?
        {
            counts.history += 1;
            each(BloomHash::of(url.as_bytes()));
        }
    }
    crate::round::commit::pause_point("growing");
    let mut rec = SegmentRecord::default();
    for path in &sets.lists {
        counts.files += 1;
        let mut reader = SegmentReader::open(path)?;
        loop {
            match reader.read_next(&mut rec) {
                Ok(true) => {
                    counts.lists += 1;
                    each(BloomHash::of(rec.url.as_bytes()));
                }
                Ok(false) => break,
                Err(e) if !e.is_fatal() => {
                    counts.bad_lines += 1;
                    if let Some(log) = log {
                        log.warn(format_args!("{e}; line skipped"));
                    }
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::bloom::BloomParams;
    use common::segment::{SegmentWriter, Via};
    use common::testutil::TempDir;
    use std::path::Path;

    fn write_list(path: &Path, urls: &[String]) {
        let mut w = SegmentWriter::create(path).unwrap();
        for u in urls {
            w.write(&SegmentRecord {
                host: url::Url::parse(u).unwrap().host_str().unwrap().to_string(),
                url: u.clone(),
                via: Via::Backlog,
                ..SegmentRecord::default()
            })
            .unwrap();
        }
        w.finish().unwrap();
    }

    #[test]
    fn a_rebuilt_filter_holds_every_url_of_the_files_and_is_the_same_every_time() {
        let dir = TempDir::new("rebuild");
        let log = RunLog::open("segmenter", &dir.join("test.log"));
        let backlog: Vec<String> = (0..30_000)
            .map(|i| format!("http://h{}.test/b{i}", i % 7))
            .collect();
        let segment: Vec<String> = (0..5_000).map(|i| format!("http://s.test/{i}")).collect();
        write_list(&dir.join("backlog.v5.tsv.zst"), &backlog);
        write_list(&dir.join("00003.v5.tsv.zst"), &segment);
        let sets = ExactSets {
            history: Some(dir.join("no-history.v1.tsv.zst")),
            lists: vec![dir.join("backlog.v5.tsv.zst"), dir.join("00003.v5.tsv.zst")],
        };
        let params = BloomParams::optimal(100_000, 0.01).unwrap();
        let mut files = Vec::new();
        for name in ["a.bloom", "b.bloom"] {
            let mut f = BloomFilter::create(dir.join(name), params).unwrap();
            let counts = rebuild(&sets, &mut f, Some(&log)).unwrap();
            assert_eq!(
                counts,
                RebuildCounts {
                    history: 0,
                    lists: 35_000,
                    files: 2,
                    bad_lines: 0
                }
            );
            assert!(
                backlog
                    .iter()
                    .chain(&segment)
                    .all(|u| f.contains(u.as_bytes()))
            );
            assert!(f.items() > 34_900, "{}", f.items());
            f.seal().unwrap();
            files.push(std::fs::read(dir.join(name)).unwrap());
        }
        assert!(files[0] == files[1], "the same file on every run");

        // A damaged file stops the rebuild with an error naming it.
        std::fs::write(dir.join("00003.v5.tsv.zst"), b"not zstd").unwrap();
        let mut f = BloomFilter::create(dir.join("c.bloom"), params).unwrap();
        let e = rebuild(&sets, &mut f, Some(&log)).unwrap_err().to_string();
        assert!(e.contains("00003.v5.tsv.zst"), "{e}");
    }
}
