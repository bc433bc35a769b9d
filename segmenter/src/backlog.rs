//! Reading the backlog: the URLs earlier rounds held back, host by host.
//!
//! The backlog is written in the selection's order, by registrable domain
//! and host, so a round does not sort it again: [`BacklogStream`] reads it
//! beside the merge of the round's new URLs and hands each host's waiting
//! URLs to the per-host cap with that host's new ones. Its URLs were
//! canonical and deduplicated when they went in (they are in `seen.bloom`,
//! so no new link can repeat one); the filters are applied again only to
//! those a segment takes (a scope narrowed since drops them then), so a
//! round reads the backlog once, without parsing its URLs.
//!
//! A line that is not in the format is reported and skipped; a host met
//! out of order (a file not written by the selection, a public suffix list
//! changed since) cannot be merged with the new URLs: its URLs stay in the
//! backlog, the report counts them, and the new backlog is sorted again at
//! the end of the round ([`sort_again`]), so they wait one round.

use std::path::Path;
use std::sync::Arc;

use common::bloom::BloomHash;
use common::segment::{SegmentReader, SegmentRecord, SegmentWriter, Via};
use common::urlnorm::registrable_domain;

use crate::candidates::{LastFetch, Meta, split_key};
use crate::error::{BACKLOG_REPAIR, Error};
use crate::sort::{Sorter, SpillDir, merge};
use common::runlog::RunLog;

/// The backlog, read one host at a time in `domain TAB host TAB` order.
pub struct BacklogStream<'a> {
    reader: SegmentReader,
    log: &'a RunLog,
    /// The next record, and its `domain TAB host TAB` prefix.
    next: Option<(Vec<u8>, SegmentRecord)>,
    /// The prefix of the last host handed out.
    last: Vec<u8>,
    /// URLs read.
    pub read: u64,
    /// Malformed lines skipped.
    pub bad_lines: u64,
}

/// The `domain TAB host TAB` prefix of a host, as the sort keys have it.
pub fn host_key(host: &str, out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(registrable_domain(host).as_bytes());
    out.push(b'\t');
    out.extend_from_slice(host.as_bytes());
    out.push(b'\t');
}

impl<'a> BacklogStream<'a> {
    /// Opens the backlog at `path`.
    pub fn open(path: &Path, log: &'a RunLog) -> Result<BacklogStream<'a>, Error> {
        let mut s = BacklogStream {
            reader: SegmentReader::open(path).map_err(Error::damaged(BACKLOG_REPAIR))?,
            log,
            next: None,
            last: Vec::new(),
            read: 0,
            bad_lines: 0,
        };
        s.advance()?;
        Ok(s)
    }

    /// Reads the next well-formed record into `next`.
    fn advance(&mut self) -> Result<(), Error> {
        let (mut prefix, mut rec) = self.next.take().unwrap_or_default();
        loop {
            match self.reader.read_next(&mut rec) {
                Ok(true) => {
                    self.read += 1;
                    host_key(&rec.host, &mut prefix);
                    self.next = Some((prefix, rec));
                    return Ok(());
                }
                Ok(false) => return Ok(()),
                Err(e) if !e.is_fatal() => {
                    self.bad_lines += 1;
                    self.log.warn(format_args!("{e}; line skipped"));
                }
                Err(e) => return Err(Error::damaged(BACKLOG_REPAIR)(e)),
            }
        }
    }

    /// The prefix of the next host waiting, if any.
    pub fn peek(&self) -> Option<&[u8]> {
        self.next.as_ref().map(|(p, _)| p.as_slice())
    }

    /// Hands every record of the next host to `each`, with a flag saying
    /// whether the host came out of order (then its records cannot be
    /// merged and go back to the backlog untouched).
    pub fn take_host(
        &mut self,
        mut each: impl FnMut(&SegmentRecord, bool) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let Some((prefix, _)) = &self.next else {
            return Ok(());
        };
        let prefix = prefix.clone();
        // (A host met again after others is out of order too: its first
        // group had its share of the round.)
        let out_of_order = !self.last.is_empty() && prefix.as_slice() <= self.last.as_slice();
        if !out_of_order {
            self.last.clone_from(&prefix);
        }
        while let Some((p, rec)) = &self.next {
            if *p != prefix {
                break;
            }
            each(rec, out_of_order)?;
            self.advance()?;
        }
        Ok(())
    }
}

/// The URLs waiting for a segment, read side by side host by host: the
/// backlog and the fetch history's URLs due again (both in
/// `domain TAB host TAB` order).
pub struct Waiting<'a> {
    /// The backlog.
    pub backlog: Option<BacklogStream<'a>>,
    /// The URLs due again ([`crate::history`]), written by this round.
    pub due: Option<BacklogStream<'a>>,
    /// Due URLs skipped because they already wait in the backlog as
    /// refetches (held there longer than their interval).
    pub due_waiting: u64,
}

impl Waiting<'_> {
    /// The prefix of the next host waiting in either, if any.
    pub fn peek(&self) -> Option<&[u8]> {
        let a = self.backlog.as_ref().and_then(BacklogStream::peek);
        let b = self.due.as_ref().and_then(BacklogStream::peek);
        match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Hands every waiting record of the next host to `each` (see
    /// [`BacklogStream::take_host`]): the backlog's, then the due ones but
    /// those the backlog already holds as refetches (a URL is handed out
    /// once).
    pub fn take_host(
        &mut self,
        mut each: impl FnMut(&SegmentRecord, bool) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let Some(next) = self.peek().map(<[u8]>::to_vec) else {
            return Ok(());
        };
        let mut refetches = std::collections::HashSet::new();
        let due_too = self
            .due
            .as_ref()
            .is_some_and(|d| d.peek() == Some(next.as_slice()));
        if let Some(b) = &mut self.backlog
            && b.peek() == Some(next.as_slice())
        {
            b.take_host(|rec, out_of_order| {
                if due_too && rec.via == Via::Recrawl {
                    refetches.insert(rec.url.clone());
                }
                each(rec, out_of_order)
            })?;
        }
        if let Some(d) = &mut self.due
            && due_too
        {
            let skipped = &mut self.due_waiting;
            d.take_host(|rec, out_of_order| {
                if refetches.contains(&rec.url) {
                    *skipped += 1;
                    return Ok(());
                }
                each(rec, out_of_order)
            })?;
        }
        Ok(())
    }
}

/// Sorts the backlog file at `path` again, in place (atomically), with
/// `memory` bytes of sort memory and spill files in `spills`; returns the URLs
/// written. For a backlog a round found out of order.
pub fn sort_again(
    path: &Path,
    spills: &Arc<SpillDir>,
    memory: u64,
    log: &RunLog,
) -> Result<u64, Error> {
    let budget = usize::try_from(memory).unwrap_or(usize::MAX);
    let mut sorter = Sorter::new(spills.clone(), budget)?;
    let mut reader = SegmentReader::open(path)?;
    let mut rec = SegmentRecord::default();
    let mut carried = Vec::new();
    loop {
        match reader.read_next(&mut rec) {
            Ok(true) => {
                let meta = Meta::of_backlog(&rec);
                // A refetch keeps its last fetch (validators, digest, time).
                LastFetch::encode(&rec, &mut carried);
                let hash = BloomHash::of(rec.url.as_bytes());
                sorter.push_carrying(&rec.host, &rec.url, hash, meta, &carried)?;
            }
            Ok(false) => break,
            Err(e) if !e.is_fatal() => log.warn(format_args!("{e}; line skipped")),
            Err(e) => return Err(e.into()),
        }
    }
    drop(reader);
    let mut merger = merge(vec![sorter.finish()], spills, 64)?;
    let mut out = SegmentWriter::create(path)?;
    let mut key = Vec::new();
    let mut meta = Meta::decode(&[0; Meta::ENCODED_LEN]);
    while merger.next_into(&mut key, &mut meta, &mut carried)? {
        let Some(parts) = split_key(&key) else {
            continue;
        };
        let mut rec = SegmentRecord {
            host: parts.host.to_string(),
            url: parts.url.to_string(),
            hops: meta.hops,
            inlinks: meta.inlinks,
            // A refetch and a sitemap to read keep their via (see
            // `Meta::of_backlog`).
            via: match meta.via {
                Via::Recrawl | Via::SitemapFile => meta.via,
                _ => Via::Backlog,
            },
            tries: meta.tries,
            not_before: meta.not_before_ms(),
            ..SegmentRecord::default()
        };
        LastFetch::apply(&carried, &mut rec);
        out.write(&rec)?;
    }
    Ok(out.finish()?)
}
