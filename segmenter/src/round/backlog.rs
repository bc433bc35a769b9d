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
//! A URL that waits is handed out once: [`Waiting`] also reads the
//! segments not fetched yet, and [`HostWaiting`] keeps the URLs of the host
//! at hand that wait there or in the backlog, so that a copy that comes
//! again in the round (a refetch come due while it waits, the leftover copy
//! of one, a second backlog line) is dropped and the waiting one kept.
//!
//! A host rule added or changed since a URL went to wait may spell it
//! otherwise ([`common::rules::HostRules::respelled`]): such a URL now
//! has another place in the order, so the stream skips its line and the
//! round's scan puts it into the sort under its new spelling instead
//! ([`crate::round::scan::Job::Backlog`]), where it merges with the other
//! spellings of the page. Without a rule that changes the canonical form
//! nothing is parsed and nothing is skipped.
//!
//! A line that is not in the format is reported and skipped; a host met
//! out of order (a file not written by the selection, a public suffix list
//! changed since) cannot be merged with the new URLs: its URLs stay in the
//! backlog, the report counts them, and the new backlog is sorted again at
//! the end of the round ([`sort_again`]), so they wait one round.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use common::bloom::BloomHash;
use common::segment::{SegmentReader, SegmentRecord, SegmentWriter, Via};
use common::urlnorm::registrable_domain;

use crate::error::{BACKLOG_REPAIR, Error};
use crate::fasthash::FastHash;
use crate::round::candidates::{LastFetch, Meta, split_key};
use crate::round::sort::{Sorter, SpillDir, merge};
use common::runlog::RunLog;

/// The backlog, read one host at a time in `domain TAB host TAB` order.
pub struct BacklogStream<'a> {
    reader: SegmentReader,
    log: &'a RunLog,
    /// The next record, and its `domain TAB host TAB` prefix.
    next: Option<(Vec<u8>, SegmentRecord)>,
    /// The prefix of the last host handed out.
    last: Vec<u8>,
    /// The rules whose canonical form the URLs take: a line they respell
    /// is skipped (the scan sorted it under its new spelling).
    respell: Option<&'a common::rules::HostRules>,
    /// URLs read.
    pub read: u64,
    /// Malformed lines skipped.
    pub bad_lines: u64,
}

/// The registrable domain and the host of a `domain TAB host TAB` prefix
/// ([`host_key`]).
pub fn split_host_key(prefix: &[u8]) -> (&str, &str) {
    let text = std::str::from_utf8(prefix).unwrap_or_default();
    let mut parts = text.split('\t');
    (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    )
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
    /// Opens the backlog at `path`; with `respell`, the lines whose URL
    /// those rules spell otherwise are skipped (see the module's doc).
    pub fn open(
        path: &Path,
        log: &'a RunLog,
        respell: Option<&'a common::rules::HostRules>,
    ) -> Result<BacklogStream<'a>, Error> {
        let mut s = BacklogStream {
            reader: SegmentReader::open(path).map_err(Error::damaged(BACKLOG_REPAIR))?,
            log,
            next: None,
            last: Vec::new(),
            respell: respell.filter(|r| r.changes_canonical_form()),
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
                    if self
                        .respell
                        .is_some_and(|r| r.respelled(&rec.url).is_some())
                    {
                        continue;
                    }
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

    /// True if the next host comes out of order (see [`BacklogStream::take_host`]).
    pub fn next_is_out_of_order(&self) -> bool {
        self.peek()
            .is_some_and(|p| !self.last.is_empty() && p <= self.last.as_slice())
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
        let out_of_order = self.next_is_out_of_order();
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

/// The URLs that already wait, read beside the merge host by host (all in
/// `domain TAB host TAB` order): the backlog, which the round schedules,
/// and the segments not fetched yet, read only to know what waits there.
pub struct Waiting<'a> {
    /// The backlog.
    pub backlog: Option<BacklogStream<'a>>,
    /// The segments not yet fetched (not consumed).
    pub pending: Vec<ListCursor>,
}

impl Waiting<'_> {
    /// The prefix of the next host of the backlog, if any.
    pub fn peek(&self) -> Option<&[u8]> {
        self.backlog.as_ref().and_then(BacklogStream::peek)
    }

    /// True if the backlog's next host comes out of order.
    pub fn next_is_out_of_order(&self) -> bool {
        self.backlog
            .as_ref()
            .is_some_and(BacklogStream::next_is_out_of_order)
    }

    /// Hands every record of the backlog's next host to `each` (see
    /// [`BacklogStream::take_host`]).
    pub fn take_host(
        &mut self,
        each: impl FnMut(&SegmentRecord, bool) -> Result<(), Error>,
    ) -> Result<(), Error> {
        match &mut self.backlog {
            Some(b) => b.take_host(each),
            None => Ok(()),
        }
    }

    /// Hands the URLs of the host `prefix` that wait in a segment not yet
    /// fetched to `each`.
    pub fn pending_urls(&mut self, prefix: &[u8], mut each: impl FnMut(&str)) -> Result<(), Error> {
        for list in &mut self.pending {
            list.take_host(prefix, &mut each)?;
        }
        Ok(())
    }
}

/// The URLs of the host being scheduled that already wait (in the backlog,
/// or in a segment not yet fetched), by their 127-bit hash: a copy of one
/// that comes again (a refetch come due, a leftover, a second backlog line)
/// is not handed out a second time.
pub struct HostWaiting {
    hashes: HashSet<BloomHash, FastHash>,
    /// The most hashes kept for one host (its memory bound).
    limit: usize,
    /// Waiting URLs of a host over `limit`, not kept: a copy of one of
    /// them is not caught (warned about at the end of the round).
    pub unchecked: u64,
    /// The first host with such URLs, and how many it had.
    pub unchecked_host: (String, u64),
}

/// Memory counted for one hash in [`HostWaiting`] (the hash and the
/// table's overhead).
const WAITING_ENTRY: u64 = 32;

impl HostWaiting {
    /// Keeps at most `memory` bytes of hashes for one host.
    pub fn new(memory: u64) -> HostWaiting {
        HostWaiting {
            hashes: HashSet::with_hasher(FastHash),
            limit: usize::try_from(memory / WAITING_ENTRY).unwrap_or(usize::MAX),
            unchecked: 0,
            unchecked_host: (String::new(), 0),
        }
    }

    /// Forgets the last host's URLs (call when a host starts).
    pub fn clear(&mut self) {
        self.hashes.clear();
    }

    /// Notes a waiting URL of `host`; false if it waits already (a copy).
    pub fn insert(&mut self, host: &str, hash: BloomHash) -> bool {
        if self.hashes.len() >= self.limit {
            if self.hashes.contains(&hash) {
                return false;
            }
            self.unchecked += 1;
            if self.unchecked_host.0 == host {
                self.unchecked_host.1 += 1;
            } else if self.unchecked_host.1 == 0 {
                self.unchecked_host = (host.to_string(), 1);
            }
            return true;
        }
        self.hashes.insert(hash)
    }

    /// True if the URL of `hash` waits already.
    pub fn holds(&self, hash: BloomHash) -> bool {
        !self.hashes.is_empty() && self.hashes.contains(&hash)
    }
}

/// A file of the segment format (grouped by host), read host by host: a
/// segment not yet fetched, a leftover list, the backlog.
pub struct ListCursor {
    reader: SegmentReader,
    rec: SegmentRecord,
    prefix: Vec<u8>,
    have: bool,
}

impl ListCursor {
    /// Opens the file at `path`.
    pub fn open(path: &Path) -> Result<ListCursor, Error> {
        let mut c = ListCursor {
            reader: SegmentReader::open(path)?,
            rec: SegmentRecord::default(),
            prefix: Vec::new(),
            have: false,
        };
        c.advance()?;
        Ok(c)
    }

    fn advance(&mut self) -> Result<(), Error> {
        loop {
            match self.reader.read_next(&mut self.rec) {
                Ok(true) => {
                    host_key(&self.rec.host, &mut self.prefix);
                    self.have = true;
                    return Ok(());
                }
                Ok(false) => {
                    self.have = false;
                    return Ok(());
                }
                // Reported by the readers that use the file.
                Err(e) if !e.is_fatal() => {}
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Hands the URLs of the host `prefix` to `each`, skipping the hosts
    /// before it. (A host out of order in the file is not found.)
    pub fn take_host(&mut self, prefix: &[u8], mut each: impl FnMut(&str)) -> Result<(), Error> {
        while self.have && self.prefix.as_slice() < prefix {
            self.advance()?;
        }
        while self.have && self.prefix.as_slice() == prefix {
            each(&self.rec.url);
            self.advance()?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_waiting_url_is_kept_once_and_the_bound_is_said() {
        let h = |i: u32| BloomHash::of(format!("http://a.test/{i}").as_bytes());
        // Room for two hashes.
        let mut w = HostWaiting::new(2 * WAITING_ENTRY);
        assert!(!w.holds(h(1)));
        assert!(w.insert("a.test", h(1)) && w.insert("a.test", h(2)));
        assert!(
            !w.insert("a.test", h(1)),
            "a second line of a URL that waits"
        );
        assert!(w.holds(h(2)));
        // Over the bound: taken, not kept, counted with its host.
        assert!(w.insert("a.test", h(3)) && w.insert("a.test", h(4)));
        assert!(!w.holds(h(3)));
        assert!(!w.insert("a.test", h(2)), "those kept are still caught");
        assert_eq!(
            (w.unchecked, w.unchecked_host.clone()),
            (2, ("a.test".into(), 2))
        );
        // The next host starts afresh.
        w.clear();
        assert!(!w.holds(h(1)) && w.insert("b.test", h(1)));
    }

    #[test]
    fn a_host_key_splits_into_its_domain_and_host() {
        let mut key = Vec::new();
        host_key("www.example.co.uk", &mut key);
        assert_eq!(key, b"example.co.uk\twww.example.co.uk\t");
        assert_eq!(split_host_key(&key), ("example.co.uk", "www.example.co.uk"));
    }
}
