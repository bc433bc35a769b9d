//! The per-host cap and the order of a host's URLs in a segment.
//!
//! A host's cap is the smaller of `--max-per-host` and what its delay allows
//! in a round ([`Budget`]): with `--round-time` 30m, a host the fetcher asks
//! every 5 s gets 359 URLs (one cycle goes to its robots.txt), one with a
//! `Crawl-delay` of 60 s gets 30, so that the hosts of a segment finish
//! together. A host that may not be asked before the round is over (its
//! next allowed contact, kept in `hosts.db`, is later) gets none.
//!
//! Some hosts are **held** back further, each for a reason the round's
//! report counts ([`Hold`]): a failing host is planned with its backed-off
//! delay (`backoff`), a parked one gets one URL a round at most, when it may
//! be asked (`parked`); a host over its byte budget (`max_host_bytes`, from
//! `hosts.db`) gets none (`host-bytes`), nor does any host once the crawl's
//! byte budget is spent (`crawl-bytes`); the page budgets
//! (`max_host_pages`, `max_domain_pages`, counted from the fetch history)
//! limit the URLs not fetched before that a host takes (`host-pages`,
//! `domain-pages`; refetches are not limited). The URLs held wait in the
//! backlog, never dropped.
//!
//! URLs arrive grouped by host (the sort key starts with domain and host).
//! [`HostCap`] keeps the best `cap` URLs of the current host, by the
//! crawl's `order` ([`priority`]): with `discovery`, fewest hops first, then
//! most in-links; with `score`, most in-links first, then fewest hops; then
//! the URL itself (so the order is total and the same on every run). The
//! others go to the backlog for a later round, carrying their in-links.
//! It holds at most `2 × cap` URLs at a time: when full, the worse half is
//! handed to the backlog at once.

use std::cmp::Ordering;
use std::time::Duration;

use common::bloom::BloomHash;
use common::config::segmenter::UrlOrder;
use common::hoststate::HostDb;
use common::politeness::{OwnDelay, Policy, Timing, cap_hold};
use common::rules::HostRules;

use common::segment::{SegmentRecord, Via};

use crate::error::Error;
use crate::history::PageCounts;
use crate::round::candidates::Meta;

/// Why a host's URLs wait in the backlog beyond what its delay allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Hold {
    /// Failing: planned with its backed-off delay (`backoff_max`).
    Backoff,
    /// Failing for `park_after`: one URL a round at most, when it may be asked.
    Parked,
    /// Over `max_host_bytes` (WARC bytes over the crawl, from `hosts.db`).
    HostBytes,
    /// Over `max_host_pages` (URLs of the host in the fetch history).
    HostPages,
    /// Over `max_domain_pages` (URLs of its registrable domain).
    DomainPages,
    /// The crawl's `max_crawl_bytes` is spent: nothing is scheduled.
    CrawlBytes,
}

impl Hold {
    /// Every reason, in the report's order.
    pub const ALL: [Hold; 6] = [
        Hold::Backoff,
        Hold::Parked,
        Hold::HostBytes,
        Hold::HostPages,
        Hold::DomainPages,
        Hold::CrawlBytes,
    ];

    /// The reason's name in the report.
    pub fn name(self) -> &'static str {
        match self {
            Hold::Backoff => "backoff",
            Hold::Parked => "parked",
            Hold::HostBytes => "host-bytes",
            Hold::HostPages => "host-pages",
            Hold::DomainPages => "domain-pages",
            Hold::CrawlBytes => "crawl-bytes",
        }
    }
}

/// What a round plans for one host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostPlan {
    /// URLs of the host the segment takes.
    pub cap: u64,
    /// The cap comes from the round time (not `--max-per-host`).
    pub by_time: bool,
    /// The host's next allowed contact (Unix ms), if it is still to come.
    pub not_before: Option<i64>,
    /// Why the host is held back, if it is (counted when URLs wait for it).
    pub held: Option<Hold>,
    /// URLs not fetched before (all but refetches) the segment may take of
    /// the host: what is left of its page budgets.
    pub new_limit: u64,
}

impl HostPlan {
    /// A host that takes nothing.
    pub fn none() -> HostPlan {
        HostPlan {
            cap: 0,
            by_time: false,
            not_before: None,
            held: None,
            new_limit: 0,
        }
    }
}

/// The limits a round plans with besides the delays.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Limits {
    /// URLs of one host per segment (`max_per_host`).
    pub max_per_host: u64,
    /// URLs of one host over the crawl (`max_host_pages`).
    pub max_host_pages: Option<u64>,
    /// URLs of one registrable domain over the crawl (`max_domain_pages`).
    pub max_domain_pages: Option<u64>,
    /// WARC bytes of one host over the crawl (`max_host_bytes`).
    pub max_host_bytes: Option<u64>,
    /// The crawl's byte budget is spent: no URL is scheduled.
    pub crawl_bytes_spent: bool,
}

/// How many URLs of each host fit in a round, from the host state.
pub struct Budget {
    db: Option<HostDb>,
    policy: Policy,
    round: Duration,
    limits: Limits,
    pages: PageCounts,
    now_ms: i64,
    /// The registrable domain being planned, and the new URLs its hosts
    /// took so far this round.
    domain: (String, u64),
    /// The crawl's rules per host: a host's own delays, `max_per_host`,
    /// `max_host_pages` and `max_host_bytes`.
    rules: HostRules,
}

impl Budget {
    /// Plans rounds of `round` with `policy` and the host state in `db`
    /// (`None`: no host known yet), within `limits`, the page budgets
    /// counted from `pages`, as of `now_ms` (Unix ms).
    pub fn new(
        db: Option<HostDb>,
        policy: Policy,
        round: Duration,
        limits: Limits,
        pages: PageCounts,
        now_ms: i64,
    ) -> Budget {
        Budget {
            db,
            policy,
            round,
            limits,
            pages,
            now_ms,
            domain: (String::new(), 0),
            rules: HostRules::default(),
        }
    }

    /// Plans each host with what the host rules give it (its delays,
    /// `max_per_host`, `max_host_pages` and `max_host_bytes`) over the
    /// crawl's settings.
    pub fn with_rules(mut self, rules: HostRules) -> Budget {
        self.rules = rules;
        self
    }

    /// The plan for `host` of registrable domain `domain`: as many URLs as
    /// its cycle (delay plus response time, [`Policy::cycle`], backed off
    /// after failures) allows in the part of the round after its next
    /// allowed contact, less one cycle if its robots.txt must be asked
    /// first; at least one if any time is left, and at most `max_per_host`;
    /// then the holds ([`Hold`]).
    pub fn plan(&mut self, domain: &str, host: &str) -> Result<HostPlan, Error> {
        if self.domain.0 != domain {
            self.domain = (domain.to_string(), 0);
        }
        let state = match &self.db {
            Some(db) => db.get(host)?,
            None => None,
        };
        let (mut timing, wait_ms, robots_known) = match &state {
            Some(s) => (
                self.policy.timing_of(s, self.now_ms),
                s.next_contact_ms
                    .map_or(0, |t| cap_hold(t, self.now_ms).saturating_sub(self.now_ms))
                    .max(0),
                s.robots.as_ref().is_some_and(|r| r.reusable(self.now_ms)),
            ),
            None => (Timing::default(), 0, false),
        };
        let rules = self.rules.for_host(host, None);
        timing.own = OwnDelay::of_hosts(&self.rules, &self.policy, [host]);
        let max_per_host = rules.max_per_host().unwrap_or(self.limits.max_per_host);
        let max_host_pages = rules.max_host_pages().unwrap_or(self.limits.max_host_pages);
        let max_host_bytes = rules.max_host_bytes().unwrap_or(self.limits.max_host_bytes);
        let wait = Duration::from_millis(wait_ms as u64);
        let window = self.round.saturating_sub(wait);
        let mut fit = self.policy.requests_within(&timing, window);
        if !robots_known && fit > 1 {
            fit -= 1;
        }
        let mut plan = HostPlan {
            cap: fit.min(max_per_host),
            by_time: fit < max_per_host,
            not_before: (wait_ms > 0).then_some(self.now_ms + wait_ms),
            held: None,
            new_limit: u64::MAX,
        };
        if timing.consecutive_failures > 0 {
            plan.held = Some(if timing.parked {
                plan.cap = plan.cap.min(1);
                Hold::Parked
            } else {
                Hold::Backoff
            });
        }
        let over_bytes = max_host_bytes
            .zip(state.as_ref())
            .is_some_and(|(max, s)| s.bytes_total >= max);
        if self.limits.crawl_bytes_spent || over_bytes {
            plan.cap = 0;
            plan.held = Some(match over_bytes && !self.limits.crawl_bytes_spent {
                true => Hold::HostBytes,
                false => Hold::CrawlBytes,
            });
            return Ok(plan);
        }
        let left = |max: Option<u64>, used: u64| max.map_or(u64::MAX, |m| m.saturating_sub(used));
        let host_used = self.pages.hosts.get(host).copied().unwrap_or(0);
        let domain_used = self.pages.domains.get(domain).copied().unwrap_or(0) + self.domain.1;
        let host_left = left(max_host_pages, host_used);
        let domain_left = left(self.limits.max_domain_pages, domain_used);
        plan.new_limit = host_left.min(domain_left);
        if plan.new_limit < plan.cap {
            plan.held = Some(if host_left <= domain_left {
                Hold::HostPages
            } else {
                Hold::DomainPages
            });
        }
        Ok(plan)
    }

    /// Counts `n` URLs not fetched before that the current host took, for
    /// its domain's page budget.
    pub fn took_new(&mut self, n: u64) {
        self.domain.1 += n;
    }
}

/// One URL of the current host.
#[derive(Debug, Clone)]
pub struct Pick {
    /// Canonical URL.
    pub url: String,
    /// Merged metadata.
    pub meta: Meta,
    /// The URL's Bloom hash.
    pub hash: BloomHash,
    /// A refetch's `ETag` (empty: none).
    pub etag: String,
    /// A refetch's `Last-Modified` (empty: none).
    pub last_modified: String,
    /// A refetch's last payload digest (empty: none).
    pub digest: String,
    /// When a refetch was last fetched (Unix ms).
    pub fetched: Option<i64>,
    /// The `WARC-Record-ID` of that fetch (empty: unknown).
    pub record_id: String,
}

impl Pick {
    /// A URL met for the first time: no validators, digest or last fetch.
    pub fn new(url: String, meta: Meta, hash: BloomHash) -> Pick {
        Pick {
            url,
            meta,
            hash,
            etag: String::new(),
            last_modified: String::new(),
            digest: String::new(),
            fetched: None,
            record_id: String::new(),
        }
    }

    /// True for a URL fetched before and due again.
    fn is_refetch(&self) -> bool {
        self.meta.via == Via::Recrawl
    }
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

/// Priority order within a host under `order`: better first.
///
/// [`UrlOrder::Discovery`]: fewest hops first, so that each host is crawled
/// breadth-first even when its URLs are spread over several rounds (a
/// round that ends early, a host over its share: a page fetched before one
/// closer to the seeds would give its links too many hops); then most
/// in-links. [`UrlOrder::Score`]: most in-links first (the pages many
/// others link to, which hold most of a web's PageRank), then fewest hops.
/// Then the URL, so that the order is total.
pub fn priority(order: UrlOrder, a: &Pick, b: &Pick) -> Ordering {
    let hops = || a.meta.hops.cmp(&b.meta.hops);
    let inlinks = || b.meta.inlinks.cmp(&a.meta.inlinks);
    match order {
        UrlOrder::Discovery => hops().then_with(inlinks),
        UrlOrder::Score => inlinks().then_with(hops),
    }
    .then_with(|| a.url.cmp(&b.url))
}

/// Moves the URLs to keep to the front of `live` (in no order) and returns
/// how many: at most `cap`, of which at most `new_limit` not refetches; the
/// best by [`priority`], refetches and new URLs each taking `share` and
/// `1 - share` of the slots, or what the other side leaves.
fn keep_first(
    live: &mut [Pick],
    order: UrlOrder,
    cap: usize,
    share: f64,
    new_limit: usize,
) -> usize {
    let priority = |a: &Pick, b: &Pick| priority(order, a, b);
    let refetches = live.iter().filter(|p| p.is_refetch()).count();
    let others = live.len() - refetches;
    if refetches == 0 || others == 0 {
        let keep = match refetches {
            0 => cap.min(new_limit),
            _ => cap,
        }
        .min(live.len());
        if keep > 0 && keep < live.len() {
            live.select_nth_unstable_by(keep, priority);
        }
        return keep;
    }
    // Refetches first, then new URLs, each part best first.
    live.sort_unstable_by(|a, b| {
        b.is_refetch()
            .cmp(&a.is_refetch())
            .then_with(|| priority(a, b))
    });
    let new_room = others.min(new_limit);
    let wanted = (cap as f64 * share).round() as usize;
    let take = wanted.max(cap.saturating_sub(new_room)).min(refetches);
    let rest = cap.saturating_sub(take).min(new_room);
    // [refetches kept | refetches over | others kept | others over]
    //   → [refetches kept | others kept | ...]
    live[take..refetches + rest].rotate_left(refetches - take);
    take + rest
}

/// Selects the best `cap` URLs of one host at a time, giving refetches
/// (`via` recrawl) a share of them.
pub struct HostCap {
    cap: usize,
    /// URLs not refetches kept at most (the page budgets).
    new_limit: usize,
    /// New URLs among the picks held.
    new: usize,
    /// New URLs were sent to the backlog for `new_limit`.
    limited: bool,
    /// The share of `cap` for refetches when there are more URLs than
    /// slots (either side takes what the other leaves).
    share: f64,
    /// Which URLs are better ([`priority`]).
    order: UrlOrder,
    /// Slots; those past `len` keep their string capacity for reuse.
    picks: Vec<Pick>,
    len: usize,
    overflowed: bool,
}

impl HostCap {
    /// A selector keeping `cap` URLs per host (until [`HostCap::set_cap`]).
    pub fn new(cap: u64) -> HostCap {
        let mut c = HostCap {
            cap: 0,
            new_limit: usize::MAX,
            new: 0,
            limited: false,
            share: 0.5,
            order: UrlOrder::default(),
            picks: Vec::new(),
            len: 0,
            overflowed: false,
        };
        c.set_cap(cap);
        c
    }

    /// Sets the cap of the next host (call between hosts). A cap of 0 sends
    /// every URL of the host to the backlog.
    pub fn set_cap(&mut self, cap: u64) {
        self.cap = usize::try_from(cap).unwrap_or(usize::MAX);
    }

    /// Sets how many URLs that are not refetches the next host keeps at
    /// most (call between hosts).
    pub fn set_new_limit(&mut self, limit: u64) {
        self.new_limit = usize::try_from(limit).unwrap_or(usize::MAX);
    }

    /// Sets which URLs of a host are better ([`priority`]).
    pub fn set_order(&mut self, order: UrlOrder) {
        self.order = order;
    }

    /// Sets the share of the cap that refetches get when new URLs and
    /// refetches are more than the cap (0 to 1).
    pub fn set_share(&mut self, share: f64) {
        self.share = share.clamp(0.0, 1.0);
    }

    /// Adds a URL of the current host; `prior` is what it carries of its
    /// last fetch (a backlog line, a leftover, a URL due again): the
    /// validators, digest and last fetch time it keeps. When the selector is full,
    /// the worse URLs are passed to `emit` with [`Fate::Backlog`], best first.
    pub fn add<E>(
        &mut self,
        url: &str,
        meta: Meta,
        hash: BloomHash,
        prior: Option<&SegmentRecord>,
        emit: &mut impl FnMut(&Pick, Fate) -> Result<(), E>,
    ) -> Result<(), E> {
        if self.len == self.picks.len() {
            self.picks.push(Pick::new(String::new(), meta, hash));
        }
        let slot = &mut self.picks[self.len];
        slot.url.clear();
        slot.url.push_str(url);
        slot.meta = meta;
        slot.hash = hash;
        slot.etag.clear();
        slot.last_modified.clear();
        slot.digest.clear();
        slot.fetched = None;
        slot.record_id.clear();
        if let Some(r) = prior {
            slot.etag.push_str(&r.etag);
            slot.last_modified.push_str(&r.last_modified);
            slot.digest.push_str(&r.digest);
            slot.fetched = r.fetched;
            slot.record_id.push_str(&r.record_id);
        }
        self.new += usize::from(!self.picks[self.len].is_refetch());
        self.len += 1;
        let room = self
            .cap
            .min(self.new_limit.saturating_add(self.len - self.new));
        if self.len >= room.saturating_mul(2).max(1) {
            self.trim(emit)?;
        }
        Ok(())
    }

    fn trim<E>(&mut self, emit: &mut impl FnMut(&Pick, Fate) -> Result<(), E>) -> Result<(), E> {
        if self.len <= self.cap && self.new <= self.new_limit {
            return Ok(());
        }
        let order = self.order;
        let live = &mut self.picks[..self.len];
        let keep = keep_first(live, order, self.cap, self.share, self.new_limit);
        live[keep..].sort_unstable_by(|a, b| priority(order, a, b));
        for p in &live[keep..] {
            emit(p, Fate::Backlog)?;
        }
        let new_kept = live[..keep].iter().filter(|p| !p.is_refetch()).count();
        self.limited |= self.new > self.new_limit && new_kept == self.new_limit;
        self.new = new_kept;
        self.len = keep;
        self.overflowed = true;
        Ok(())
    }

    /// Ends the current host: passes the URLs over the cap to `emit` with
    /// [`Fate::Backlog`], then its best URLs, in priority order, with
    /// [`Fate::Segment`]. Returns whether the cap was hit, and whether new
    /// URLs were held back by the new-URL limit.
    pub fn finish_host<E>(
        &mut self,
        emit: &mut impl FnMut(&Pick, Fate) -> Result<(), E>,
    ) -> Result<(bool, bool), E> {
        self.trim(emit)?;
        let order = self.order;
        let live = &mut self.picks[..self.len];
        live.sort_unstable_by(|a, b| priority(order, a, b));
        for p in live.iter() {
            emit(p, Fate::Segment)?;
        }
        let capped = (self.overflowed, self.limited);
        self.len = 0;
        self.new = 0;
        self.overflowed = false;
        self.limited = false;
        Ok(capped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(inlinks: u32, hops: u32) -> Meta {
        Meta {
            hops,
            inlinks,
            tries: 0,
            via: Via::Link,
            exempt: false,
            fetched: false,
            rescued: false,
            not_before_s: 0,
        }
    }

    #[test]
    fn host_rules_set_a_host_delay_cap_and_page_budget() {
        let text = "[[rule]]\nhost = \"slow.test\"\nmin_delay = \"10s\"\n\n\
                    [[rule]]\ndomain = \"capped.test\"\nmax_per_host = 3\n\n\
                    [[rule]]\nhost = \"budget.test\"\nmax_host_pages = 2\n";
        let rules = HostRules::parse(text, "r.toml".as_ref()).unwrap();
        let policy = Policy {
            min_delay: Duration::from_secs(1),
            delay_factor: 0.0,
            ..Policy::default()
        };
        let limits = Limits {
            max_per_host: 1000,
            ..Limits::default()
        };
        let round = Duration::from_secs(60);
        let mut budget =
            Budget::new(None, policy, round, limits, PageCounts::default(), 0).with_rules(rules);
        let mut plan = |host: &str| budget.plan(host, host).unwrap();
        // 60 cycles of 1 s in the round, one for robots.txt.
        let other = plan("other.test");
        assert_eq!((other.cap, other.new_limit), (59, u64::MAX));
        // The host's own 10 s.
        assert_eq!(plan("slow.test").cap, 5);
        // The domain's cap on each of its hosts.
        let capped = plan("www.capped.test");
        assert_eq!((capped.cap, capped.by_time), (3, false));
        // The host's page budget.
        let budgeted = plan("budget.test");
        assert_eq!(budgeted.new_limit, 2);
        assert_eq!(budgeted.held, Some(Hold::HostPages));
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
            cap.add(u, meta(inl, hops), BloomHash(0, 1), None, &mut emit)
                .unwrap();
        }
        let (capped, _) = cap.finish_host(&mut emit).unwrap();
        assert!(capped);
        // Fewest hops first, then most in-links, then the URL.
        assert_eq!(kept, ["/d", "/f", "/c"]);
        over.sort();
        assert_eq!(over, ["/a", "/b", "/e", "/g", "/h"]);
    }

    #[test]
    fn the_score_order_keeps_the_most_linked_and_breaks_ties_by_hops() {
        let run = |order: UrlOrder| {
            let mut cap = HostCap::new(3);
            cap.set_order(order);
            let mut kept = Vec::new();
            let mut emit = |p: &Pick, fate: Fate| {
                if fate == Fate::Segment {
                    kept.push(p.url.clone());
                }
                Ok::<_, ()>(())
            };
            // (URL, in-links, hops), more than trim at once (2 × cap).
            let input = [
                ("/a", 1, 1),
                ("/hub", 40, 3),
                ("/b", 1, 1),
                ("/c", 7, 2),
                ("/d", 0, 1),
                ("/e", 7, 1),
                ("/f", 2, 1),
                ("/g", 1, 2),
            ];
            for (u, inl, hops) in input {
                cap.add(u, meta(inl, hops), BloomHash(0, 1), None, &mut emit)
                    .unwrap();
            }
            cap.finish_host(&mut emit).unwrap();
            kept
        };
        assert_eq!(run(UrlOrder::Score), ["/hub", "/e", "/c"]);
        // The default: breadth-first, in-links only within one hop count.
        assert_eq!(run(UrlOrder::Discovery), ["/e", "/f", "/a"]);
        let mut default = HostCap::new(1);
        assert_eq!(default.order, UrlOrder::Discovery);
        default.set_order(UrlOrder::Score);
        assert_eq!(default.order, UrlOrder::Score);
    }

    #[test]
    fn refetches_get_their_share_and_leave_the_rest() {
        let run = |refetches: usize, new: usize, cap: u64, share: f64| {
            let mut c = HostCap::new(cap);
            c.set_share(share);
            let mut kept = (0, 0);
            let mut emit = |p: &Pick, fate: Fate| {
                if fate == Fate::Segment {
                    if p.is_refetch() {
                        kept.0 += 1;
                    } else {
                        kept.1 += 1;
                    }
                }
                Ok::<_, ()>(())
            };
            for i in 0..refetches.max(new) {
                if i < refetches {
                    let m = Meta {
                        via: Via::Recrawl,
                        ..meta(0, 0)
                    };
                    c.add(&format!("/r{i}"), m, BloomHash(0, 1), None, &mut emit)
                        .unwrap();
                }
                if i < new {
                    c.add(
                        &format!("/n{i}"),
                        meta(0, 1),
                        BloomHash(0, 1),
                        None,
                        &mut emit,
                    )
                    .unwrap();
                }
            }
            c.finish_host(&mut emit).unwrap();
            kept
        };
        assert_eq!(run(6, 6, 4, 0.5), (2, 2));
        assert_eq!(run(6, 6, 4, 0.25), (1, 3));
        assert_eq!(run(6, 6, 4, 1.0), (4, 0));
        assert_eq!(
            run(1, 6, 4, 0.5),
            (1, 3),
            "new URLs take what refetches leave"
        );
        assert_eq!(run(6, 1, 4, 0.5), (3, 1), "and the other way round");
        assert_eq!(run(100, 100, 10, 0.3), (3, 7), "also across trims");
        assert_eq!(run(2, 1, 10, 0.5), (2, 1));
    }

    #[test]
    fn the_new_url_limit_keeps_refetches_and_counts_its_cut() {
        let run = |refetches: usize, new: usize, cap: u64, limit: u64| {
            let mut c = HostCap::new(cap);
            c.set_new_limit(limit);
            let mut kept = (0, 0);
            let mut emit = |p: &Pick, fate: Fate| {
                if fate == Fate::Segment {
                    if p.is_refetch() {
                        kept.0 += 1;
                    } else {
                        kept.1 += 1;
                    }
                }
                Ok::<_, ()>(())
            };
            for i in 0..refetches {
                let m = Meta {
                    via: Via::Recrawl,
                    ..meta(0, 0)
                };
                c.add(&format!("/r{i}"), m, BloomHash(0, 1), None, &mut emit)
                    .unwrap();
            }
            for i in 0..new {
                c.add(
                    &format!("/n{i}"),
                    meta(0, 1),
                    BloomHash(0, 1),
                    None,
                    &mut emit,
                )
                .unwrap();
            }
            let (_, limited) = c.finish_host(&mut emit).unwrap();
            (kept, limited)
        };
        assert_eq!(run(0, 10, 100, 4), ((0, 4), true), "4 of 10 new URLs");
        assert_eq!(run(0, 3, 100, 4), ((0, 3), false), "under the limit");
        assert_eq!(run(5, 10, 100, 2), ((5, 2), true), "refetches not limited");
        assert_eq!(run(0, 1000, 100, 0), ((0, 0), true), "nothing left");
        assert_eq!(run(3, 1000, 10, 4), ((3, 4), true), "across trims");
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
            cap.add(u, meta(1, hops), BloomHash(0, 1), None, &mut emit)
                .unwrap();
        }
        let (capped, _) = cap.finish_host(&mut emit).unwrap();
        assert!(!capped);
        assert_eq!(kept, ["/y", "/z"]);
    }
}
