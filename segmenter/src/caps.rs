//! The per-host cap and the order of a host's URLs in a segment.
//!
//! URLs arrive grouped by host (the sort key starts with domain and host).
//! [`HostCap`] keeps the best `cap` URLs of the current host: most in-links
//! first, then fewest hops, then the URL itself (so the order is total and
//! the same on every run). The others go to the backlog for a later round.
//! It holds at most `2 × cap` URLs at a time: when full, the worse half is
//! handed to the backlog at once.

use std::cmp::Ordering;

use common::bloom::BloomHash;

use crate::candidates::Meta;

/// One URL of the current host.
#[derive(Debug, Clone)]
pub struct Pick {
    /// Canonical URL.
    pub url: String,
    /// Merged metadata.
    pub meta: Meta,
    /// The URL's Bloom hash.
    pub hash: BloomHash,
}

/// Where a URL goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Into this round's segment.
    Segment,
    /// Into the backlog, for a later round.
    Backlog,
    /// Nowhere: already fetched this round; only recorded as seen.
    Fetched,
}

/// Priority order within a host: better first.
pub fn priority(a: &Pick, b: &Pick) -> Ordering {
    b.meta
        .inlinks
        .cmp(&a.meta.inlinks)
        .then(a.meta.hops.cmp(&b.meta.hops))
        .then_with(|| a.url.cmp(&b.url))
}

/// Selects the best `cap` URLs of one host at a time.
pub struct HostCap {
    cap: usize,
    /// Slots; those past `len` keep their string capacity for reuse.
    picks: Vec<Pick>,
    len: usize,
    overflowed: bool,
}

impl HostCap {
    /// A selector keeping `cap` URLs per host.
    pub fn new(cap: u64) -> HostCap {
        HostCap {
            cap: usize::try_from(cap).unwrap_or(usize::MAX).max(1),
            picks: Vec::new(),
            len: 0,
            overflowed: false,
        }
    }

    /// Adds a URL of the current host. When the selector is full, the worse
    /// URLs are passed to `emit` with [`Fate::Backlog`], best first.
    pub fn add<E>(
        &mut self,
        url: &str,
        meta: Meta,
        hash: BloomHash,
        emit: &mut impl FnMut(&Pick, Fate) -> Result<(), E>,
    ) -> Result<(), E> {
        if self.len == self.picks.len() {
            self.picks.push(Pick {
                url: String::new(),
                meta,
                hash,
            });
        }
        let slot = &mut self.picks[self.len];
        slot.url.clear();
        slot.url.push_str(url);
        slot.meta = meta;
        slot.hash = hash;
        self.len += 1;
        if self.len >= self.cap.saturating_mul(2) {
            self.trim(emit)?;
        }
        Ok(())
    }

    fn trim<E>(&mut self, emit: &mut impl FnMut(&Pick, Fate) -> Result<(), E>) -> Result<(), E> {
        if self.len <= self.cap {
            return Ok(());
        }
        let live = &mut self.picks[..self.len];
        live.select_nth_unstable_by(self.cap, priority);
        live[self.cap..].sort_unstable_by(priority);
        for p in &live[self.cap..] {
            emit(p, Fate::Backlog)?;
        }
        self.len = self.cap;
        self.overflowed = true;
        Ok(())
    }

    /// Ends the current host: passes the URLs over the cap to `emit` with
    /// [`Fate::Backlog`], then its best URLs, in priority order, with
    /// [`Fate::Segment`]. Returns true if the cap was hit.
    pub fn finish_host<E>(
        &mut self,
        emit: &mut impl FnMut(&Pick, Fate) -> Result<(), E>,
    ) -> Result<bool, E> {
        self.trim(emit)?;
        let live = &mut self.picks[..self.len];
        live.sort_unstable_by(priority);
        for p in live.iter() {
            emit(p, Fate::Segment)?;
        }
        let capped = self.overflowed;
        self.len = 0;
        self.overflowed = false;
        Ok(capped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::segment::Via;

    fn meta(inlinks: u32, hops: u32) -> Meta {
        Meta {
            hops,
            inlinks,
            tries: 0,
            via: Via::Link,
            exempt: false,
            fetched: false,
        }
    }

    #[test]
    fn keeps_the_best_in_order_and_backlogs_the_rest() {
        let mut cap = HostCap::new(3);
        let mut kept = Vec::new();
        let mut over = Vec::new();
        let mut emit = |p: &Pick, fate: Fate| {
            match fate {
                Fate::Segment => kept.push(p.url.clone()),
                Fate::Backlog => over.push(p.url.clone()),
                Fate::Fetched => panic!("the cap never drops a URL"),
            }
            Ok::<_, ()>(())
        };
        let input = [
            ("/a", 1, 2),
            ("/b", 5, 3),
            ("/c", 1, 1),
            ("/d", 9, 0),
            ("/e", 1, 1),
            ("/f", 0, 0),
            ("/g", 2, 9),
            ("/h", 0, 1),
        ];
        for (u, inl, hops) in input {
            cap.add(u, meta(inl, hops), BloomHash(0, 1), &mut emit)
                .unwrap();
        }
        let capped = cap.finish_host(&mut emit).unwrap();
        assert!(capped);
        // Most in-links first, then fewest hops, then the URL.
        assert_eq!(kept, ["/d", "/b", "/g"]);
        over.sort();
        assert_eq!(over, ["/a", "/c", "/e", "/f", "/h"]);
    }

    #[test]
    fn a_host_under_the_cap_is_kept_whole() {
        let mut cap = HostCap::new(10);
        let mut kept = Vec::new();
        let mut emit = |p: &Pick, fate: Fate| match fate {
            Fate::Segment => {
                kept.push(p.url.clone());
                Ok(())
            }
            Fate::Backlog | Fate::Fetched => Err(()),
        };
        for (u, hops) in [("/z", 1), ("/y", 0)] {
            cap.add(u, meta(1, hops), BloomHash(0, 1), &mut emit)
                .unwrap();
        }
        let capped = cap.finish_host(&mut emit).unwrap();
        assert!(!capped);
        assert_eq!(kept, ["/y", "/z"]);
    }
}
