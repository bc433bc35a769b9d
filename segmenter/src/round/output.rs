//! Writing a round's segments and backlog into the staging directory.
//!
//! URLs arrive in segment order (domain, host, priority). Each goes to its
//! partition; a partition's current segment is closed when it holds
//! `max_segment_size` URLs and the next one gets the next number, so a large
//! round becomes several segments with consecutive IDs rather than waiting.
//! URLs over the per-host cap go to the backlog (segment format, `via` =
//! `backlog`), which the next round reads back.

use std::path::{Path, PathBuf};

use common::segment::{FILE_SUFFIX, SegmentRecord, SegmentWriter, Via};

use crate::error::Error;
use crate::round::caps::{Fate, Pick};
use crate::round::partition::{partition_of, segment_id};
use crate::round::score::{Ranks, ScoreCounter};

struct Part {
    /// Segments already closed in this partition.
    chunk: u32,
    count: u64,
    writer: Option<SegmentWriter>,
    id: String,
}

/// The segment and backlog writers of one round.
pub struct Output {
    dir: PathBuf,
    number: u32,
    partitions: u32,
    max_size: u64,
    parts: Vec<Part>,
    backlog: SegmentWriter,
    finished: Vec<(String, u64)>,
    /// The scores of the URLs scheduled and of those sent to the backlog.
    scores: (ScoreCounter, ScoreCounter),
    /// The new URLs scheduled, counted by rank, when the round may be cut
    /// across hosts ([`crate::cut`]).
    ranks: Option<Ranks>,
}

/// What a round's [`Output`] wrote.
pub struct Written {
    /// Segments: ID and URL count, sorted by ID.
    pub segments: Vec<(String, u64)>,
    /// URLs in the backlog.
    pub backlog: u64,
    /// The scores of the URLs scheduled.
    pub scheduled_scores: ScoreCounter,
    /// The scores of the URLs sent to the backlog.
    pub waiting_scores: ScoreCounter,
    /// The new URLs scheduled by rank, if they were counted.
    pub ranks: Option<Ranks>,
}

/// Fills `rec` with a URL of `host` going where `fate` says (`via` is
/// `backlog` for the backlog); a URL going into a segment carries the later
/// of its host's next allowed contact, `not_before`, and its own (from the
/// fetcher's leftover).
pub fn fill_record(
    rec: &mut SegmentRecord,
    host: &str,
    pick: &Pick,
    fate: Fate,
    not_before: Option<i64>,
) {
    rec.host.clear();
    rec.host.push_str(host);
    rec.url.clear();
    rec.url.push_str(&pick.url);
    rec.hops = pick.meta.hops;
    rec.inlinks = pick.meta.inlinks;
    rec.tries = pick.meta.tries;
    rec.via = match fate {
        Fate::Segment | Fate::Fetched => pick.meta.via,
        // A refetch waits as one, with its validators.
        Fate::Backlog if pick.meta.via == Via::Recrawl => Via::Recrawl,
        // A sitemap waits as one: its via says to read it as a sitemap.
        Fate::Backlog if pick.meta.via == Via::SitemapFile => Via::SitemapFile,
        Fate::Backlog => Via::Backlog,
    };
    rec.etag.clone_from(&pick.etag);
    rec.last_modified.clone_from(&pick.last_modified);
    rec.digest.clone_from(&pick.digest);
    rec.fetched = pick.fetched;
    rec.record_id.clone_from(&pick.record_id);
    rec.not_before = match fate {
        Fate::Segment => not_before.max(pick.meta.not_before_ms()),
        Fate::Backlog | Fate::Fetched => None,
    };
}

impl Output {
    /// Segments go to `segments_dir` starting at round `number`; the backlog
    /// to `backlog_path`.
    pub fn new(
        segments_dir: &Path,
        backlog_path: &Path,
        number: u32,
        partitions: u32,
        max_size: u64,
    ) -> Result<Output, Error> {
        let partitions = partitions.max(1);
        Ok(Output {
            dir: segments_dir.to_path_buf(),
            number,
            partitions,
            max_size: max_size.max(1),
            parts: (0..partitions)
                .map(|_| Part {
                    chunk: 0,
                    count: 0,
                    writer: None,
                    id: String::new(),
                })
                .collect(),
            backlog: SegmentWriter::create(backlog_path)?,
            finished: Vec::new(),
            scores: Default::default(),
            ranks: None,
        })
    }

    /// Counts the new URLs scheduled by rank ([`crate::cut`]).
    pub fn with_ranks(mut self, ranks: Option<Ranks>) -> Output {
        self.ranks = ranks;
        self
    }

    /// Writes a record where `fate` says: a segment (of the record's
    /// partition) or the backlog.
    pub fn write(&mut self, fate: Fate, rec: &SegmentRecord) -> Result<(), Error> {
        match fate {
            Fate::Segment => {
                self.scores.0.add(rec.inlinks);
                if let Some(r) = &mut self.ranks {
                    r.observe(rec);
                }
                self.schedule(rec)
            }
            Fate::Backlog => {
                self.scores.1.add(rec.inlinks);
                self.backlog.write(rec)?;
                Ok(())
            }
            Fate::Fetched => Ok(()),
        }
    }

    /// Writes a URL to its partition's current segment.
    fn schedule(&mut self, rec: &SegmentRecord) -> Result<(), Error> {
        let p = partition_of(&rec.host, self.partitions);
        let part = &mut self.parts[p as usize];
        if part.count == self.max_size
            && let Some(w) = part.writer.take()
        {
            let n = w.finish()?;
            self.finished.push((std::mem::take(&mut part.id), n));
            part.chunk += 1;
            part.count = 0;
        }
        if part.writer.is_none() {
            part.id = segment_id(self.number + part.chunk, p, self.partitions);
            let path = self.dir.join(format!("{}{FILE_SUFFIX}", part.id));
            part.writer = Some(SegmentWriter::create(path)?);
        }
        part.writer
            .as_mut()
            .expect("writer just opened")
            .write(rec)?;
        part.count += 1;
        Ok(())
    }

    /// Closes every file; returns what was written.
    pub fn finish(mut self) -> Result<Written, Error> {
        for part in &mut self.parts {
            if let Some(w) = part.writer.take() {
                let n = w.finish()?;
                self.finished.push((std::mem::take(&mut part.id), n));
            }
        }
        let backlog = self.backlog.finish()?;
        self.finished.sort();
        Ok(Written {
            segments: self.finished,
            backlog,
            scheduled_scores: self.scores.0,
            waiting_scores: self.scores.1,
            ranks: self.ranks,
        })
    }
}
