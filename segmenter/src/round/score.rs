//! A URL's score: the in-links the crawl found to it, learned across
//! rounds, and the host weights that scale it where the crawl chooses
//! across hosts.
//!
//! A URL's score is its `inlinks` field (segments, leftovers, backlog). The
//! round that finds a URL counts the links to it (the copies of the URL
//! merged in the sort add up). A later round that finds more links to a URL
//! already scheduled drops them at the seen-set as duplicates, but keeps
//! them as suspects ([`crate::round::seen::rescue`]); the rescue finds those that
//! wait (in the backlog, or a leftover of the runs read) and hands their
//! in-links on, sorted by host ([`crate::round::seen::rescue::Rescued::links`]).
//! The selection reads them beside the merge, host by host
//! ([`WaitingLinks`]), and adds them to the waiting URL's count before the
//! host's URLs are ranked. So a URL that waits gains every link the crawl
//! finds to it, for a cost proportional to the round's links: no file is
//! read or written beyond those the round already reads and writes.
//!
//! Where the crawl chooses between hosts (the round's size under
//! `order = "score"`, the crawl's page budget), a host rule's `weight`
//! multiplies the score of the host's URLs ([`Weights`]); within a host it
//! changes nothing, since all its URLs share it.

use std::collections::{BTreeMap, HashMap};

use common::bloom::BloomHash;
use common::config::segmenter::UrlOrder;
use common::rules::HostRules;
use common::segment::{SegmentRecord, Via};

use crate::error::Error;
use crate::fasthash::FastHash;
use crate::round::candidates::{Meta, host_prefix, split_key};
use crate::round::sort::Merger;

/// The in-links a round found to URLs that wait, read host by host in the
/// selection's order: the current host's, by URL hash.
pub struct WaitingLinks {
    merger: Option<Merger>,
    /// The key of the record out of the merger not yet used, and its
    /// in-links.
    key: Vec<u8>,
    inlinks: u32,
    have: bool,
    /// The current host's, by URL hash.
    host: HashMap<BloomHash, u32, FastHash>,
    /// In-links added to waiting URLs.
    pub added: u64,
}

impl WaitingLinks {
    /// Reads `merger` (`None`: the round found no link to a URL that waits).
    pub fn new(merger: Option<Merger>) -> WaitingLinks {
        WaitingLinks {
            merger,
            key: Vec::new(),
            inlinks: 0,
            have: false,
            host: HashMap::with_hasher(FastHash),
            added: 0,
        }
    }

    /// Starts the host of `prefix` (`domain TAB host TAB`): its in-links
    /// are read, those of the hosts before it passed over. Hosts come in
    /// increasing order.
    pub fn start(&mut self, prefix: &[u8]) -> Result<(), Error> {
        self.host.clear();
        let Some(merger) = &mut self.merger else {
            return Ok(());
        };
        let mut meta = Meta::decode(&[0; Meta::ENCODED_LEN]);
        let mut carried = Vec::new();
        loop {
            if !self.have {
                if !merger.next_into(&mut self.key, &mut meta, &mut carried)? {
                    self.merger = None;
                    return Ok(());
                }
                self.inlinks = meta.inlinks;
                self.have = true;
            }
            let at = host_prefix(&self.key);
            if at > prefix {
                return Ok(());
            }
            if at == prefix
                && let Some(parts) = split_key(&self.key)
            {
                let n = self.host.entry(parts.hash).or_default();
                *n = n.saturating_add(self.inlinks);
            }
            self.have = false;
        }
    }

    /// Adds to `meta` the in-links found to the URL of `hash` of the
    /// current host (once: a second copy of the URL gets none).
    pub fn add_to(&mut self, hash: BloomHash, meta: &mut Meta) {
        if self.host.is_empty() {
            return;
        }
        if let Some(n) = self.host.remove(&hash) {
            meta.inlinks = meta.inlinks.saturating_add(n);
            self.added += u64::from(n);
        }
    }
}

/// The weight of each host's URLs (`weight` of the host rules, 1 where no
/// rule sets it), looked up once per host in a row.
pub struct Weights {
    rules: HostRules,
    host: String,
    weight: f64,
}

impl Weights {
    /// The weights `rules` give.
    pub fn new(rules: HostRules) -> Weights {
        Weights {
            rules,
            host: String::new(),
            weight: 1.0,
        }
    }

    /// The rules the weights come from.
    pub fn rules(&self) -> &HostRules {
        &self.rules
    }

    /// The weight of `host`'s URLs.
    pub fn of(&mut self, host: &str) -> f64 {
        if self.host != host {
            self.host.clear();
            self.host.push_str(host);
            self.weight = self.rules.for_host(host, None).weight();
        }
        self.weight
    }
}

/// A URL's weighted score: its in-links times its host's weight, in
/// thousandths (an integer, so that two passes over the same line rank it
/// the same).
pub fn weighted(inlinks: u32, weight: f64) -> u64 {
    let w = if weight.is_finite() && weight > 0.0 {
        weight
    } else {
        1.0
    };
    (f64::from(inlinks) * w * 1000.0)
        .round()
        .min(u64::MAX as f64) as u64
}

/// How good a URL is where the crawl chooses across hosts, under `order`
/// (higher is better): with `score`, its weighted score, then fewest hops;
/// with `discovery`, fewest hops, then its weighted score.
pub fn rank(order: UrlOrder, rec: &SegmentRecord, weight: f64) -> u128 {
    let score = u128::from(weighted(rec.inlinks, weight));
    let near = u128::from(u32::MAX - rec.hops);
    match order {
        UrlOrder::Score => (score << 32) | near,
        UrlOrder::Discovery => (near << 64) | score,
    }
}

/// The new URLs written to the round's segments, counted by [`rank`]
/// (one counter per distinct rank), for the cuts across hosts
/// ([`crate::round::cut`]).
pub struct Ranks {
    order: UrlOrder,
    weights: Weights,
    counts: BTreeMap<u128, u64>,
    /// New URLs counted (refetches are not).
    pub new: u64,
    /// Refetches written.
    pub refetches: u64,
}

impl Ranks {
    /// Counts ranks under `order`, with the weights of `rules`.
    pub fn new(order: UrlOrder, rules: HostRules) -> Ranks {
        Ranks {
            order,
            weights: Weights::new(rules),
            counts: BTreeMap::new(),
            new: 0,
            refetches: 0,
        }
    }

    /// The order ranked by.
    pub fn order(&self) -> UrlOrder {
        self.order
    }

    /// The rules the weights come from.
    pub fn rules(&self) -> &HostRules {
        self.weights.rules()
    }

    /// Counts a line written to a segment.
    pub fn observe(&mut self, rec: &SegmentRecord) {
        if rec.via == Via::Recrawl {
            self.refetches += 1;
            return;
        }
        let r = rank(self.order, rec, self.weights.of(&rec.host));
        *self.counts.entry(r).or_default() += 1;
        self.new += 1;
    }

    /// The lowest rank let in when `quota` new URLs are, and how many URLs
    /// of that rank are; `None` if every URL counted is.
    pub fn threshold(&self, quota: u64) -> Option<(u128, u64)> {
        if self.new <= quota {
            return None;
        }
        let mut above = 0;
        for (&r, &n) in self.counts.iter().rev() {
            if above + n >= quota {
                return Some((r, quota - above));
            }
            above += n;
        }
        None
    }
}

/// The distribution of scores (in-links) of a set of URLs: their count
/// and quantiles, for `segmenter status` and the report.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ScoreQuantiles {
    /// URLs counted.
    pub urls: u64,
    /// Of them, URLs with no in-link (seeds, sitemap URLs, refetches).
    pub zero: u64,
    /// The median in-link count.
    pub p50: u32,
    /// The 90th percentile.
    pub p90: u32,
    /// The 99th percentile.
    pub p99: u32,
    /// The most.
    pub max: u32,
}

/// Counts scores into [`ScoreQuantiles`] in bounded memory: one counter
/// per distinct in-link count.
#[derive(Debug, Default)]
pub struct ScoreCounter {
    counts: std::collections::BTreeMap<u32, u64>,
}

impl ScoreCounter {
    /// Counts a URL with `inlinks`.
    pub fn add(&mut self, inlinks: u32) {
        *self.counts.entry(inlinks).or_default() += 1;
    }

    /// Adds what `other` counted.
    pub fn merge(&mut self, other: &ScoreCounter) {
        for (&score, &n) in &other.counts {
            *self.counts.entry(score).or_default() += n;
        }
    }

    /// The quantiles of what was counted.
    pub fn quantiles(&self) -> ScoreQuantiles {
        let urls: u64 = self.counts.values().sum();
        let at = |q: f64| {
            let want = ((urls as f64 * q).ceil() as u64).max(1);
            let mut seen = 0;
            for (&score, &n) in &self.counts {
                seen += n;
                if seen >= want {
                    return score;
                }
            }
            0
        };
        ScoreQuantiles {
            urls,
            zero: self.counts.get(&0).copied().unwrap_or(0),
            p50: at(0.5),
            p90: at(0.9),
            p99: at(0.99),
            max: self.counts.keys().next_back().copied().unwrap_or(0),
        }
    }
}

impl ScoreQuantiles {
    /// One line for people: `N URLs, in-links median A, p90 B, p99 C, max
    /// D (Z with none)`.
    pub fn line(&self) -> String {
        format!(
            "{} URLs, in-links median {}, p90 {}, p99 {}, max {} ({} with none)",
            self.urls, self.p50, self.p90, self.p99, self.max, self.zero
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(host: &str, inlinks: u32) -> SegmentRecord {
        SegmentRecord {
            host: host.to_string(),
            url: format!("http://{host}/{inlinks}"),
            inlinks,
            hops: 1,
            via: Via::Link,
            ..SegmentRecord::default()
        }
    }

    #[test]
    fn the_threshold_lets_in_the_quota_best_first_with_ties_counted() {
        let mut ranks = Ranks::new(UrlOrder::Score, HostRules::default());
        for n in [5, 3, 3, 3, 1, 0] {
            ranks.observe(&rec("a.test", n));
        }
        ranks.observe(&SegmentRecord {
            via: Via::Recrawl,
            ..rec("a.test", 0)
        });
        assert_eq!((ranks.new, ranks.refetches), (6, 1));
        let three = rank(UrlOrder::Score, &rec("a.test", 3), 1.0);
        assert_eq!(ranks.threshold(3), Some((three, 2)));
        assert_eq!(ranks.threshold(4), Some((three, 3)));
        assert_eq!(ranks.threshold(6), None);
        assert_eq!(ranks.threshold(0).map(|t| t.1), Some(0));
    }

    #[test]
    fn quantiles_of_a_skewed_set() {
        let mut c = ScoreCounter::default();
        for i in 0..100u32 {
            c.add(if i < 50 { 0 } else { i });
        }
        let q = c.quantiles();
        assert_eq!((q.urls, q.zero, q.max), (100, 50, 99));
        assert_eq!((q.p50, q.p90, q.p99), (0, 89, 98));
        assert_eq!(ScoreCounter::default().quantiles().urls, 0);
    }

    #[test]
    fn the_rank_puts_the_order_first_and_weights_the_score() {
        let rec = |inlinks, hops| SegmentRecord {
            inlinks,
            hops,
            ..SegmentRecord::default()
        };
        let (hub, near) = (rec(40, 3), rec(1, 1));
        assert!(rank(UrlOrder::Score, &hub, 1.0) > rank(UrlOrder::Score, &near, 1.0));
        assert!(rank(UrlOrder::Discovery, &hub, 1.0) < rank(UrlOrder::Discovery, &near, 1.0));
        // A weight of 50 on the near one's host puts it first.
        assert!(rank(UrlOrder::Score, &hub, 1.0) < rank(UrlOrder::Score, &near, 50.0));
        assert_eq!(weighted(3, 0.5), 1500);
        assert_eq!(weighted(3, f64::NAN), 3000);
    }
}
