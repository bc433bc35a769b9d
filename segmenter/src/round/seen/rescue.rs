//! Rescue: a URL the filter calls seen but that is in none of the exact
//! sets was a false positive; it is scheduled after all.
//!
//! The scan keeps every URL the filter drops as a *suspect* ([`Suspects`]),
//! sorted by (domain, host, URL) like the history, with the copies of a URL
//! merged as the main sort merges them. The suspects are looked up in the
//! history in one pass, nothing held: by `run` while its history merge
//! writes the new history ([`crate::history::Lookup`], gathered by
//! [`NotInHistory`]), by [`rescue`] itself otherwise (reading the history
//! beside them). For each host, the suspects the history does not have are
//! held while that host's URLs in the other exact sets are read (the
//! backlog, the segments not yet consumed, the lists of the runs read:
//! grouped by host, in priority order). What is left was never scheduled:
//! it goes into the round's merge as a new URL, where a leftover or retry
//! copy of it (the round's own URLs) absorbs it.
//!
//! A suspect found waiting (in the backlog, or a list of the runs read) is
//! a link the round found to a URL it does not schedule again: its count
//! of in-links goes into a sort of its own ([`Rescued::links`]), which the
//! selection adds to the waiting URL's score, so that a URL waiting in the
//! backlog gains the links later rounds find to it.
//!
//! Memory: the suspects of one host not in the history, at most `memory`
//! bytes; beyond that a host's further suspects are not checked and count
//! as `unchecked` (taken as seen, as without the rescue).

use std::collections::HashMap;
use std::sync::Arc;

use common::bloom::BloomHash;
use common::runlog::RunLog;

use crate::error::Error;
use crate::history::{HISTORY_REPAIR, HistoryReader};
use crate::round::backlog::{ListCursor, host_key};
use crate::round::candidates::{Meta, host_prefix, split_key};
use crate::round::sort::{Merger, Sorted, Sorter, SpillDir};

use super::ExactSets;

/// Slots of a worker's table of recent suspects (a power of two).
const SLOTS: usize = 4096;

/// A suspect in the table.
struct Slot {
    used: bool,
    hash: BloomHash,
    host: String,
    url: String,
    meta: Option<Meta>,
}

impl Default for Slot {
    fn default() -> Slot {
        Slot {
            used: false,
            hash: BloomHash(0, 0),
            host: String::new(),
            url: String::new(),
            meta: None,
        }
    }
}

/// A scan worker's suspects: URLs the filter called seen, on their way to
/// a sort keyed by URL. A small direct-mapped table merges repeated copies
/// first (a site's navigation links are on every page), with
/// [`Meta::absorb`], as the sort would.
pub struct Suspects {
    sorter: Sorter,
    slots: Vec<Slot>,
}

impl Suspects {
    /// Suspects sorted by `sorter`.
    pub fn new(sorter: Sorter) -> Suspects {
        Suspects {
            sorter,
            slots: (0..SLOTS).map(|_| Slot::default()).collect(),
        }
    }

    /// Adds a copy of a suspect URL of `host`.
    pub fn add(&mut self, host: &str, url: &str, hash: BloomHash, meta: Meta) -> Result<(), Error> {
        let slot = &mut self.slots[hash.0 as usize & (SLOTS - 1)];
        if slot.used && slot.hash == hash && slot.url == url {
            if let Some(m) = &mut slot.meta {
                m.absorb(&meta);
            }
            return Ok(());
        }
        if slot.used {
            push_suspect(&mut self.sorter, slot)?;
        }
        slot.used = true;
        slot.hash = hash;
        slot.host.clear();
        slot.host.push_str(host);
        slot.url.clear();
        slot.url.push_str(url);
        slot.meta = Some(meta);
        Ok(())
    }

    /// Sorts what is left; the result goes to [`rescue`] (merged).
    pub fn finish(mut self) -> Result<Sorted, Error> {
        for slot in &self.slots {
            if slot.used {
                push_suspect(&mut self.sorter, slot)?;
            }
        }
        Ok(self.sorter.finish())
    }
}

/// Suspects sort by URL within their host: their key has a zero hash.
fn push_suspect(sorter: &mut Sorter, slot: &Slot) -> Result<(), Error> {
    let meta = slot.meta.expect("a used slot has its meta");
    sorter.push(&slot.host, &slot.url, BloomHash(0, 0), meta)
}

/// What [`rescue`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct RescueCounts {
    /// Distinct URLs the filter called seen.
    pub suspects: u64,
    /// Of them, URLs in the fetch history.
    pub in_history: u64,
    /// Of them, URLs waiting in the backlog or a segment not yet consumed.
    pub waiting: u64,
    /// Of them, URLs not checked (a host's suspects over the memory
    /// bound): taken as seen.
    pub unchecked: u64,
    /// Of them, URLs in none of the exact sets: handed to the round as new
    /// (the round's report counts those it schedules as `rescued`).
    pub found: u64,
    /// In-links the round found to the URLs waiting (the `waiting` ones),
    /// added to their scores.
    pub waiting_links: u64,
}

/// What [`rescue`] hands on: the suspects found in none of the exact sets,
/// and the in-links found to URLs that wait.
pub struct Rescued {
    /// The URLs in none of the exact sets, sorted as the round's
    /// candidates, marked `rescued`.
    pub found: Sorted,
    /// The waiting URLs the round's pages link, each with the count of
    /// those links as its `inlinks`, sorted by host.
    pub links: Sorted,
    /// The counts.
    pub counts: RescueCounts,
}

/// What [`rescue`] reads and where it works.
pub struct Rescue<'a> {
    /// The exact sets to look the suspects up in.
    pub sets: &'a ExactSets,
    /// Bytes for one host's suspects that are not in the history.
    pub memory: u64,
    /// Where the sort of the URLs found spills.
    pub spills: Arc<SpillDir>,
    /// Where warnings go.
    pub log: &'a RunLog,
}

/// Looks every suspect up in the exact sets; returns those in none of them
/// (sorted as the round's candidates, marked `rescued`), the in-links to
/// those that wait, and the counts.
pub fn rescue(mut suspects: Merger, r: &Rescue) -> Result<Rescued, Error> {
    let mut counts = RescueCounts::default();
    let sorter = || Sorter::new(r.spills.clone(), (r.memory as usize / 2).max(1 << 20));
    let mut found = sorter()?;
    let mut links = sorter()?;
    let mut history = HistoryCursor::open(r.sets.history.as_deref())?;
    let mut lists = r
        .sets
        .lists
        .iter()
        .map(|p| ListCursor::open(p))
        .collect::<Result<Vec<_>, _>>()?;
    let mut host = HostSuspects::default();
    let mut key = Vec::new();
    let mut meta = Meta::decode(&[0; Meta::ENCODED_LEN]);
    // (Suspects carry nothing: they are links, not refetches.)
    let mut carried = Vec::new();
    while suspects.next_into(&mut key, &mut meta, &mut carried)? {
        let Some(parts) = split_key(&key) else {
            continue;
        };
        counts.suspects += 1;
        let prefix = host_prefix(&key);
        if prefix != host.prefix.as_slice() {
            host.settle(&mut lists, (&mut found, &mut links), &mut counts)?;
            host.prefix.clear();
            host.prefix.extend_from_slice(prefix);
            host.name.clear();
            host.name.push_str(parts.host);
        }
        if history.holds(prefix, parts.url)? {
            counts.in_history += 1;
        } else if host.bytes + parts.url.len() as u64 + 64 > r.memory {
            counts.unchecked += 1;
        } else {
            host.bytes += parts.url.len() as u64 + 64;
            host.urls.insert(parts.url.to_string(), meta);
        }
    }
    host.settle(&mut lists, (&mut found, &mut links), &mut counts)?;
    if counts.unchecked > 0 {
        r.log.warn(format_args!(
            "{} URLs the Bloom filter called seen were not looked up in the exact sets (a \
             host had more than fit in a quarter of --memory): taken as seen",
            counts.unchecked
        ));
    }
    Ok(Rescued {
        found: found.finish(),
        links: links.finish(),
        counts,
    })
}

/// The suspects a history merge looked up ([`crate::history::Lookup`]):
/// those it did not find are kept, in their order, for the rest of the
/// rescue; the history is not read again.
pub struct NotInHistory {
    sorter: Option<Sorter>,
    spills: Arc<SpillDir>,
    memory: u64,
    suspects: u64,
    in_history: u64,
}

impl NotInHistory {
    /// Keeps them in a sorter of at most `memory` bytes (made at the first).
    pub fn new(spills: Arc<SpillDir>, memory: u64) -> Result<NotInHistory, Error> {
        Ok(NotInHistory {
            sorter: None,
            spills,
            memory,
            suspects: 0,
            in_history: 0,
        })
    }

    /// A suspect (its sort key) and whether the history holds it.
    pub fn take(&mut self, key: &[u8], meta: &Meta, held: bool) -> Result<(), Error> {
        self.suspects += 1;
        if held {
            self.in_history += 1;
            return Ok(());
        }
        let Some(parts) = split_key(key) else {
            return Ok(());
        };
        let sorter = match &mut self.sorter {
            Some(s) => s,
            None => self.sorter.insert(Sorter::new(
                self.spills.clone(),
                (self.memory as usize).max(1 << 20),
            )?),
        };
        sorter.push(parts.host, parts.url, BloomHash(0, 0), *meta)
    }

    /// Looks those the history does not hold up in the other exact sets of
    /// `r` ([`rescue`]); the URLs in none of them, the in-links to those
    /// that wait, and the counts of all.
    pub fn rescue(
        self,
        r: &Rescue,
        fan_in: usize,
    ) -> Result<(Option<Rescued>, RescueCounts), Error> {
        let mut counts = RescueCounts {
            suspects: self.suspects,
            in_history: self.in_history,
            ..RescueCounts::default()
        };
        let Some(sorter) = self.sorter else {
            return Ok((None, counts));
        };
        let rest = crate::round::sort::merge(vec![sorter.finish()], &self.spills, fan_in)?;
        let sets = ExactSets {
            history: None,
            lists: r.sets.lists.clone(),
        };
        let without_history = Rescue {
            sets: &sets,
            memory: r.memory,
            spills: r.spills.clone(),
            log: r.log,
        };
        let rescued = rescue(rest, &without_history)?;
        let c = &rescued.counts;
        counts.waiting = c.waiting;
        counts.unchecked = c.unchecked;
        counts.found = c.found;
        counts.waiting_links = c.waiting_links;
        Ok((Some(rescued), counts))
    }
}

/// The suspects of the host at hand that the history does not hold.
#[derive(Default)]
struct HostSuspects {
    /// `domain TAB host TAB`.
    prefix: Vec<u8>,
    name: String,
    urls: HashMap<String, Meta>,
    bytes: u64,
}

impl HostSuspects {
    /// Drops the suspects the other exact sets hold for this host (their
    /// in-links to `links`), and hands the rest to `found`.
    fn settle(
        &mut self,
        lists: &mut [ListCursor],
        (found, links): (&mut Sorter, &mut Sorter),
        counts: &mut RescueCounts,
    ) -> Result<(), Error> {
        if self.urls.is_empty() {
            return Ok(());
        }
        let mut waiting = Vec::new();
        for list in lists.iter_mut() {
            list.take_host(&self.prefix, |url| {
                if let Some(entry) = self.urls.remove_entry(url) {
                    counts.waiting += 1;
                    waiting.push(entry);
                }
            })?;
        }
        // (Their in-links alone: the copy that waits keeps its own meta.)
        for (url, meta) in waiting {
            counts.waiting_links += u64::from(meta.inlinks);
            links.push(&self.name, &url, BloomHash::of(url.as_bytes()), meta)?;
        }
        // In URL order, so that the spills are the same on every run.
        let mut left: Vec<(String, Meta)> = self.urls.drain().collect();
        left.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        for (url, meta) in left {
            counts.found += 1;
            let meta = Meta {
                rescued: true,
                ..meta
            };
            found.push(&self.name, &url, BloomHash::of(url.as_bytes()), meta)?;
        }
        self.bytes = 0;
        Ok(())
    }
}

/// The history, read alongside the suspects.
struct HistoryCursor {
    reader: Option<HistoryReader>,
    /// The URL at hand, and `domain TAB host TAB` of its host.
    url: String,
    prefix: Vec<u8>,
    host: String,
    have: bool,
}

impl HistoryCursor {
    fn open(path: Option<&std::path::Path>) -> Result<HistoryCursor, Error> {
        let reader = match path {
            Some(p) => HistoryReader::open(p).map_err(Error::damaged(HISTORY_REPAIR))?,
            None => None,
        };
        let mut c = HistoryCursor {
            reader,
            url: String::new(),
            prefix: Vec::new(),
            host: String::new(),
            have: false,
        };
        c.advance()?;
        Ok(c)
    }

    fn advance(&mut self) -> Result<(), Error> {
        let Some(r) = &mut self.reader else {
            self.have = false;
            return Ok(());
        };
        match r.read_host_url().map_err(Error::damaged(HISTORY_REPAIR))? {
            Some((host, url)) => {
                if host != self.host {
                    host_key(host, &mut self.prefix);
                    self.host.clear();
                    self.host.push_str(host);
                }
                self.url.clear();
                self.url.push_str(url);
                self.have = true;
            }
            None => self.have = false,
        }
        Ok(())
    }

    /// True if the history holds `url` of the host `prefix`; suspects come
    /// in the history's order, so the history is read once.
    fn holds(&mut self, prefix: &[u8], url: &str) -> Result<bool, Error> {
        while self.have && (self.prefix.as_slice(), self.url.as_str()) < (prefix, url) {
            self.advance()?;
        }
        Ok(self.have && self.prefix == prefix && self.url == url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::round::sort::merge;
    use common::segment::Via;
    use common::testutil::TempDir;

    fn meta(hops: u32) -> Meta {
        Meta {
            hops,
            inlinks: 1,
            tries: 0,
            via: Via::Link,
            exempt: false,
            fetched: false,
            rescued: false,
            not_before_s: 0,
        }
    }

    /// Every record out of a merge of `sorted`: (URL, hops, in-links).
    fn drain(sorted: Vec<Sorted>, spills: &SpillDir) -> Vec<(String, u32, u32)> {
        let mut m = merge(sorted, spills, 8).unwrap();
        let (mut key, mut meta) = (Vec::new(), meta(0));
        let mut out = Vec::new();
        while m.next_into(&mut key, &mut meta, &mut Vec::new()).unwrap() {
            let p = split_key(&key).unwrap();
            out.push((p.url.to_string(), meta.hops, meta.inlinks));
        }
        out
    }

    #[test]
    fn the_table_merges_copies_as_the_sort_does() {
        let dir = TempDir::new("suspects");
        let spills = SpillDir::new(dir.join("spills")).unwrap();
        // Many copies of a few URLs, and enough others to evict them from
        // the table now and then.
        let mut copies = Vec::new();
        for i in 0..20_000u32 {
            let url = match i % 4 {
                0 => format!("http://a.test/nav{}", i % 7),
                _ => format!("http://a.test/p{i}"),
            };
            copies.push((url, i % 5));
        }
        let mut table = Suspects::new(Sorter::new(spills.clone(), 1 << 16).unwrap());
        let mut plain = Sorter::new(spills.clone(), 1 << 16).unwrap();
        for (url, hops) in &copies {
            let h = BloomHash::of(url.as_bytes());
            table.add("a.test", url, h, meta(*hops)).unwrap();
            plain
                .push("a.test", url, BloomHash(0, 0), meta(*hops))
                .unwrap();
        }
        let got = drain(vec![table.finish().unwrap()], &spills);
        let want = drain(vec![plain.finish()], &spills);
        assert_eq!(got, want);
        assert_eq!(got.len(), 7 + 15_000);
        let nav0 = got.iter().find(|r| r.0 == "http://a.test/nav0").unwrap();
        assert_eq!((nav0.1, nav0.2), (0, 5000 / 7 + 1));
    }
}
