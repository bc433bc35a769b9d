//! What a correct crawler fetches: a breadth-first walk of the link graph
//! from the seeds, applying the same limits a crawl applies.
//!
//! For each URL reached, in order of hops (a link counts one hop; a redirect
//! one hop too, unless [`Limits::redirect_is_hop`] is false), the checks run
//! in this order, the first failing one deciding:
//!
//! 1. the URL filters of the crawl, `common::filter::UrlFilter` itself (so
//!    that the rules are those the segmenter applies), with the scope a crawl
//!    seeded with the demo's seeds has (their registrable domain,
//!    `demo.test`) and [`Limits::filter`]: scope, URL length, repeated path
//!    segment, number of path segments, hops, number of query parameters,
//!    calendar years, in [`Reject`] order;
//! 2. the host refuses connections → [`Expected::refused`];
//! 3. robots.txt answers 5xx, or never answers (the black hole; RFC 9309
//!    treats both as unreachable: disallow all) →
//!    [`Exclusion::RobotsUnavailable`], its robots.txt URL in
//!    [`Expected::robots`] (the server sees that request, and no other);
//! 4. its `Crawl-delay` is above [`Limits::max_crawl_delay`] →
//!    [`Exclusion::CrawlDelayTooHigh`];
//! 5. robots.txt disallows it → [`Exclusion::RobotsDisallowed`];
//!
//! and otherwise it is fetched ([`Expected::fetch`]), and its links (those to
//! follow: not `nofollow`) and redirect target are walked in turn. Each URL
//! is judged once, at its smallest number of hops.
//!
//! Sitemaps as the segmenter reads them: the sitemaps a host's robots.txt
//! names are walked at hops 0 once the host is reached (its robots.txt
//! read); a sitemap's URLs one hop further, the first
//! [`Limits::sitemap_max_entries`] (and, in a malformed one, those before
//! the fault), each only if the protocol lets the sitemap list it (same
//! host under the sitemap's directory, or a host whose robots.txt names the
//! sitemap); an index's sitemaps only while their hops stay below
//! [`Limits::sitemap_max_depth`]. A page reached only so is in
//! [`Expected::by_sitemap`].

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::time::{Duration, SystemTime};

use common::config::FilterConfig;
use common::filter::{Reject, Scope, UrlFilter};

use super::{DEMO_AGENT, Inner, Loc, Resource, RobotsInfo, RobotsState, RobotsVerdict};

/// The limits a crawl runs with.
#[derive(Debug, Clone)]
pub struct Limits {
    /// The URL filters (defaults: those of `[filter]` in `crawl.toml`).
    pub filter: FilterConfig,
    /// The crawler's product token, matched against robots.txt groups.
    pub agent: String,
    /// The year the calendar rule counts from.
    pub current_year: i64,
    /// Hosts asking for a longer `Crawl-delay` are skipped (default 60 s,
    /// the fetcher's default).
    pub max_crawl_delay: Duration,
    /// Whether following a redirect counts as a hop (default true).
    pub redirect_is_hop: bool,
    /// URLs read from one sitemap (`sitemap_max_entries`, default 50,000).
    pub sitemap_max_entries: usize,
    /// Sitemap levels followed from robots.txt (`sitemap_max_depth`,
    /// default 2).
    pub sitemap_max_depth: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            filter: FilterConfig::default(),
            agent: DEMO_AGENT.to_string(),
            current_year: common::timefmt::civil(SystemTime::now()).0,
            max_crawl_delay: Duration::from_secs(60),
            redirect_is_hop: true,
            sitemap_max_entries: 50_000,
            sitemap_max_depth: 2,
        }
    }
}

/// One URL a crawler must fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fetched {
    /// The status it answers with.
    pub status: u16,
    /// Hops from the nearest seed.
    pub hops: u32,
}

/// Why a URL that was found is not fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Exclusion {
    /// A URL filter refuses it (scope, length, traps, hops).
    Filter(Reject),
    /// robots.txt disallows it.
    RobotsDisallowed,
    /// robots.txt answers 5xx, or the host never answers at all.
    RobotsUnavailable,
    /// The host's `Crawl-delay` is above the maximum.
    CrawlDelayTooHigh,
}

/// What a correct crawl does with every URL it meets.
#[derive(Debug, Clone, Default)]
pub struct Expected {
    /// URLs to fetch: every one must be requested, with its status and hops.
    pub fetch: BTreeMap<String, Fetched>,
    /// robots.txt URLs requested (with the redirects followed to read them)
    /// on each host where some URL got as far as the robots check.
    pub robots: BTreeSet<String>,
    /// URLs on the host that refuses connections (with their hops): a
    /// crawler tries (robots.txt first) and fails; the server never sees them.
    pub refused: BTreeMap<String, u32>,
    /// URLs found but never to be requested, and why.
    pub excluded: BTreeMap<String, Exclusion>,
    /// URLs to fetch (and excluded ones) that only sitemaps lead to.
    pub by_sitemap: BTreeSet<String>,
    /// Sitemaps fetched and read.
    pub sitemaps: BTreeSet<String>,
}

impl Expected {
    /// Whether a server may see a request for `url`: a URL to fetch or a
    /// robots.txt URL. Anything else a crawler requests is a bug.
    pub fn may_request(&self, url: &str) -> bool {
        self.fetch.contains_key(url) || self.robots.contains(url)
    }

    /// The URLs to fetch that answer `status`.
    pub fn with_status(&self, status: u16) -> impl Iterator<Item = &str> {
        self.fetch
            .iter()
            .filter(move |(_, f)| f.status == status)
            .map(|(u, _)| u.as_str())
    }

    /// The greatest number of hops of a URL to fetch (how many rounds a
    /// crawl needs, less one).
    pub fn max_hops(&self) -> u32 {
        self.fetch.values().map(|f| f.hops).max().unwrap_or(0)
    }
}

pub(super) fn compute(inner: &Inner, limits: &Limits, port: u16) -> Expected {
    let mut scope = Scope::default();
    for seed in &inner.seeds {
        let host = &inner.hosts[seed.host].name;
        let domain = common::urlnorm::registrable_domain(host);
        scope.domains.insert(domain.to_string());
    }
    let filter = UrlFilter {
        limits: limits.filter.clone(),
        scope,
    };
    let mut out = Expected::default();
    let mut robots: HashMap<usize, RobotsInfo> = HashMap::new();
    let mut best: HashMap<Loc, u32> = HashMap::new();
    let mut done: HashSet<Loc> = HashSet::new();
    // A 0-1 breadth-first walk: zero-hop edges (redirects, when they do not
    // count) go to the front, so every URL is judged at its fewest hops.
    let mut queue: VecDeque<(Loc, u32)> = VecDeque::new();
    // Locs reached through a sitemap, and through anything else.
    let mut via_sitemap: HashSet<Loc> = HashSet::new();
    let mut via_other: HashSet<Loc> = inner.seeds.iter().cloned().collect();
    let mut named_read: HashSet<usize> = HashSet::new();
    for seed in &inner.seeds {
        best.insert(seed.clone(), 0);
        queue.push_back((seed.clone(), 0));
    }
    while let Some((loc, hops)) = queue.pop_front() {
        if best.get(&loc).is_some_and(|&b| b < hops) || !done.insert(loc.clone()) {
            continue;
        }
        let url = inner.url(&loc, port);
        let parsed = url::Url::parse(&url).expect("the demo's URLs parse");
        if let Err(reject) = filter.check_in_year(&parsed, hops, limits.current_year) {
            out.excluded.insert(url, Exclusion::Filter(reject));
            continue;
        }
        let info = robots
            .entry(loc.host)
            .or_insert_with(|| inner.robots(loc.host, &limits.agent));
        if let RobotsState::Unreachable = info.state {
            out.refused.insert(url, hops);
            continue;
        }
        for step in &info.chain {
            out.robots.insert(inner.url(step, port));
        }
        // Its robots.txt is read: the sitemaps it names are scheduled.
        let named = if named_read.insert(loc.host) {
            info.sitemaps.clone()
        } else {
            Vec::new()
        };
        let verdict = info.state.verdict(&loc.target);
        let too_slow = info
            .state
            .crawl_delay()
            .is_some_and(|d| d > limits.max_crawl_delay);
        let exclusion = match verdict {
            RobotsVerdict::Unavailable | RobotsVerdict::NoAnswer => {
                Some(Exclusion::RobotsUnavailable)
            }
            _ if too_slow => Some(Exclusion::CrawlDelayTooHigh),
            RobotsVerdict::Disallowed => Some(Exclusion::RobotsDisallowed),
            RobotsVerdict::Allowed | RobotsVerdict::Unreachable => None,
        };
        for sm in named {
            via_sitemap.insert(sm.clone());
            if !done.contains(&sm) && best.get(&sm).is_none_or(|&b| b > 0) {
                best.insert(sm.clone(), 0);
                queue.push_back((sm, 0));
            }
        }
        if let Some(e) = exclusion {
            out.excluded.insert(url, e);
            continue;
        }
        let resource = inner.resolve(&loc);
        let status = resource.as_ref().map_or(404, Resource::status);
        out.fetch.insert(url, Fetched { status, hops });
        let mut relax = |target: &Loc, next: u32, front: bool| {
            if done.contains(target) || best.get(target).is_some_and(|&b| b <= next) {
                return;
            }
            best.insert(target.clone(), next);
            if front {
                queue.push_front((target.clone(), next));
            } else {
                queue.push_back((target.clone(), next));
            }
        };
        match resource {
            Some(Resource::Html(page)) if !page.nofollow_meta && !page.x_robots_nofollow => {
                for link in page.links.iter().filter(|l| !l.nofollow) {
                    if let Some(target) = &link.target {
                        via_other.insert(target.clone());
                        relax(target, hops + 1, false);
                    }
                }
            }
            Some(Resource::Sitemap(doc)) => {
                out.sitemaps.insert(inner.url(&loc, port));
                let read = doc
                    .fault_after
                    .unwrap_or(usize::MAX)
                    .min(limits.sitemap_max_entries);
                let dir = &loc.target[..loc.target.rfind('/').map_or(0, |i| i + 1)];
                for entry in doc.entries.iter().take(read) {
                    let allowed = (entry.host == loc.host && entry.target.starts_with(dir))
                        || inner
                            .robots(entry.host, &limits.agent)
                            .sitemaps
                            .contains(&loc);
                    if !allowed || (doc.index && hops + 1 >= limits.sitemap_max_depth) {
                        continue;
                    }
                    via_sitemap.insert(entry.clone());
                    relax(entry, hops + 1, false);
                }
            }
            Some(Resource::Redirect { target, .. }) => {
                via_other.insert(target.clone());
                if limits.redirect_is_hop {
                    relax(&target, hops + 1, false);
                } else {
                    relax(&target, hops, true);
                }
            }
            _ => {}
        }
    }
    for l in via_sitemap.difference(&via_other) {
        out.by_sitemap.insert(inner.url(l, port));
    }
    out
}
